"""The codecs under DUMP and RESTORE: Redis's CRC-64 and LZF (streamd.rdb).

Most tests need no server: they check the codecs against independent references (a
bit-at-a-time CRC), against themselves (round trips), and against DUMP payloads captured
from a real Redis 7.0. The last group asks a live real Redis for fresh DUMP payloads.

That group compares with a real Redis's own compressor, so it runs when the suite targets
one (``--redis-url``) and is skipped on streamd, whose DUMP uses this very code. It touches
only ``rdbcodec:*`` keys and never flushes: the server may be shared.
"""

from __future__ import annotations

import random

import pytest
import redis

from streamd.rdb.crc64 import crc64
from streamd.rdb.lzf import compress, decompress

CHECK_VALUE = 0xE9C6D914C4B8D9CA  # crc64(b"123456789"), the catalogue's check value


def crc64_bitwise(data: bytes, crc: int = 0) -> int:
    """The CRC the slow, obvious way: one bit at a time, reflected polynomial."""
    poly = int(f"{0xAD93D23594C935A9:064b}"[::-1], 2)
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
    return crc


def rdb_length(payload: bytes, i: int) -> tuple[int, int]:
    """An RDB length-encoded integer at ``payload[i]``: (value, index after it)."""
    first = payload[i]
    kind = first >> 6
    if kind == 0:
        return first & 0x3F, i + 1
    if kind == 1:
        return ((first & 0x3F) << 8) | payload[i + 1], i + 2
    if first == 0x80:
        return int.from_bytes(payload[i + 1:i + 5], "big"), i + 5
    if first == 0x81:
        return int.from_bytes(payload[i + 1:i + 9], "big"), i + 9
    raise AssertionError(f"not a plain length: {first:#x}")


def lzf_string_body(payload: bytes) -> tuple[bytes, int]:
    """The LZF stream and the original length in a DUMP of an LZF-compressed string:
    type 0, the 0xC3 marker, compressed length, original length, the stream, then the
    2-byte RDB version and the 8-byte CRC."""
    assert payload[0] == 0, "not a string"
    assert payload[1] == 0xC3, "not LZF-compressed"
    compressed_len, i = rdb_length(payload, 2)
    original_len, i = rdb_length(payload, i)
    assert i + compressed_len == len(payload) - 10, "payload length does not add up"
    return payload[i:i + compressed_len], original_len


def assert_crc_closes(payload: bytes) -> None:
    assert int.from_bytes(payload[-8:], "little") == crc64(payload[:-8])


# --- CRC-64 ---------------------------------------------------------------------------

def test_crc_check_value():
    assert crc64(b"123456789") == CHECK_VALUE
    assert crc64_bitwise(b"123456789") == CHECK_VALUE


def test_crc_of_nothing():
    assert crc64(b"") == 0
    assert crc64(b"", 0x1234) == 0x1234


def test_crc_single_bytes():
    assert crc64(b"\x00") == 0
    for b in (1, 0x80, 0xFF):
        assert crc64(bytes([b])) == crc64_bitwise(bytes([b]))


# Sizes around the switch between the table loop and folding (1 KiB) and the folding's
# 64 KiB chunks, and odd tails for the 8-byte words.
SIZES = [1, 7, 8, 9, 63, 64, 65, 1023, 1024, 1025, 4097, 65528, 65529, 70001]


@pytest.mark.parametrize("size", SIZES)
def test_crc_matches_bitwise_reference(size):
    data = random.Random(size).randbytes(size)
    assert crc64(data) == crc64_bitwise(data)
    start = 0xDEADBEEFCAFEF00D
    assert crc64(data, start) == crc64_bitwise(data, start)


@pytest.mark.parametrize("split", [0, 1, 5, 8, 1000, 1024, 30000, 65528, 99999, 100000])
def test_crc_incremental(split):
    data = random.Random(7).randbytes(100000)
    a, b = data[:split], data[split:]
    assert crc64(b, crc64(a)) == crc64(a + b)


def test_crc_accepts_bytes_like():
    data = bytes(range(256)) * 20
    want = crc64(data)
    assert crc64(bytearray(data)) == want
    assert crc64(memoryview(data)) == want
    assert crc64(memoryview(b"xx" + data + b"yy")[2:-2]) == want
    assert crc64(memoryview(data).cast("I")) == want


def test_crc_rejects_out_of_range_start():
    with pytest.raises(ValueError):
        crc64(b"x", 1 << 64)
    with pytest.raises(ValueError):
        crc64(b"x", -1)


# --- LZF ------------------------------------------------------------------------------

def worst_case(n: int) -> int:
    """An output limit every input of n bytes fits in (all literals, plus slack)."""
    return n + n // 32 + 8


def _words(rnd: random.Random, n: int) -> bytes:
    vocabulary = [rnd.randbytes(rnd.randrange(1, 9)) for _ in range(50)]
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(vocabulary)
    return bytes(out[:n])


_rnd = random.Random(1234)
ROUND_TRIPS = {
    "one byte": b"x",
    "two bytes": b"xy",
    "five bytes": b"aaaaa",
    "random 5000": _rnd.randbytes(5000),
    "repetitive": b"abc" * 1000,
    "run of one byte": b"\x00" * 100000,
    "runs": b"".join(bytes([i]) * (i * 7 % 300 + 1) for i in range(256)),
    "words": _words(_rnd, 50000),
    "small alphabet": bytes(_rnd.choice(b"ab") for _ in range(20000)),
    "match at the very end": b"abaaaaaaaababaaababaabaabbbbbbbbababab",
    "far repeats": (_rnd.randbytes(8000) + b"marker!") * 4,
    "1 MB": _words(_rnd, 1 << 19) + _rnd.randbytes(1 << 19),
}


@pytest.mark.parametrize("name", ROUND_TRIPS)
def test_lzf_round_trip(name):
    data = ROUND_TRIPS[name]
    packed = compress(data, worst_case(len(data)))
    assert packed is not None
    assert decompress(packed, len(data)) == data


def test_lzf_compresses_what_repeats():
    assert len(compress(b"a" * 100000, 100000)) < 1500
    assert len(compress(b"abc" * 1000, 3000)) < 60


def test_lzf_empty():
    # liblzf reports failure (0) for empty input; Redis never compresses it.
    assert compress(b"", 100) is None
    assert decompress(b"", 0) == b""


def test_lzf_accepts_bytes_like():
    data = b"hello hello hello hello world"
    want = compress(data, 100)
    assert compress(bytearray(data), 100) == want
    assert compress(memoryview(data), 100) == want
    assert decompress(bytearray(want), len(data)) == data
    assert decompress(memoryview(want), len(data)) == data


def test_lzf_limit_on_incompressible_input():
    data = random.Random(5).randbytes(1000)
    # What Redis asks for: at least 4 bytes saved, or it stores the string raw.
    assert compress(data, len(data) - 4) is None
    assert compress(data, 0) is None
    assert decompress(compress(data, worst_case(len(data))), len(data)) == data


@pytest.mark.parametrize("name", ["words", "repetitive", "random 5000", "runs"])
def test_lzf_limit_edges(name):
    data = ROUND_TRIPS[name]
    full = compress(data, worst_case(len(data)))
    # liblzf gives up when it could overrun the limit, judged a few bytes early: no
    # output at all up to the full length, the full output from 4 bytes more.
    for limit in range(len(full) - 20, len(full) + 10):
        got = compress(data, limit)
        if limit <= len(full):
            assert got is None, limit
        elif limit >= len(full) + 4:
            assert got == full, limit
        else:
            assert got in (None, full), limit


def test_lzf_decompress_back_references():
    # A distance of 1 repeats the last byte (an overlapping copy).
    assert decompress(b"\x00a\xe0\x03\x00", 13) == b"a" * 13
    # Distance 3, length 8: overlaps a 3-byte pattern.
    assert decompress(b"\x02abc\xc0\x02", 11) == b"abcabcabcab"
    # Not overlapping.
    assert decompress(b"\x03abcd\x20\x03", 7) == b"abcdabc"


@pytest.mark.parametrize("stream, out_len", [
    (b"\x20\x00", 3),            # back-reference with nothing before it
    (b"\x00a\x20\x01", 4),       # back-reference 2 bytes back, 1 byte written
    (b"\x04abc", 5),             # literal run past the end of the input
    (b"\x00a\x20", 4),           # back-reference missing its offset byte
    (b"\x00a\xe0", 20),          # long back-reference missing its length byte
    (b"\x00a\xe0\x05", 20),      # long back-reference missing its offset byte
    (b"\x02abc", 2),             # output longer than expected (literal)
    (b"\x00a\x20\x00", 2),       # output longer than expected (back-reference)
    (b"\x02abc", 5),             # output shorter than expected
    (b"", 1),                    # nothing at all
])
def test_lzf_decompress_rejects(stream, out_len):
    with pytest.raises(ValueError):
        decompress(stream, out_len)


# DUMP payloads of strings, captured from Redis 7.0.15 (rdbcompression yes): a check of
# both codecs against Redis's own output that needs no server.
CAPTURED = {
    b"a" * 100: "00c3094064016161e057000161610a00e8a3b507b06df271",
    b"abc" * 1000:
        "00c32c4bb80361626361e0ff02e1ff07e1ff07e1ff07e1ff07e1ff07e1ff07e1ff07e1ff07e1ff"
        "07e1ff07e151070162630a00db0e043794c72732",
    b"abaaaaaaaababaaababaabaabbbbbbbbababab":
        "00c3162602616261a00000622001a00520080062a000200b20010a002e6c8b33ec7d7b0f",
    b"The quick brown fox jumps over the lazy dog; the lazy dog sleeps. " * 3:
        "00c3404340c61f54686520717569636b2062726f776e20666f78206a756d7073206f76657220742"
        "01e086c617a7920646f673be0040d0920736c656570732e20542022e07541012e200a00a54b3bb6"
        "9af47c08",
}


@pytest.mark.parametrize("value", CAPTURED, ids=lambda v: f"{len(v)} bytes")
def test_captured_redis_payloads(value):
    payload = bytes.fromhex(CAPTURED[value])
    assert_crc_closes(payload)
    body, original_len = lzf_string_body(payload)
    assert original_len == len(value)
    assert decompress(body, original_len) == value
    assert compress(value, len(value) - 4) == body


# --- against a live real Redis -----------------------------------------------------------

KEY_PREFIX = "rdbcodec:"


@pytest.fixture(scope="module")
def real_redis(target):
    """A client of a real Redis that has DUMP, with rdbcompression on; else a skip."""
    if target.is_streamd:
        pytest.skip("compares with a real Redis's DUMP: run with --redis-url")
    client = target.client()
    try:
        client.ping()
        client.dump(KEY_PREFIX + "probe")
        saved = client.config_get("rdbcompression").get("rdbcompression")
    except (redis.ConnectionError, redis.TimeoutError) as e:
        client.close()
        pytest.skip(f"no real Redis reachable: {e}")
    except redis.ResponseError as e:
        client.close()
        pytest.skip(f"server cannot DUMP or CONFIG GET: {e}")
    client.config_set("rdbcompression", "yes")
    yield client
    try:
        leftovers = list(client.scan_iter(match=KEY_PREFIX + "*"))
        if leftovers:
            client.delete(*leftovers)
    finally:
        client.config_set("rdbcompression", saved or "yes")
        client.close()


def dump_of(client, value: bytes) -> bytes:
    key = KEY_PREFIX + "value"
    client.set(key, value)
    try:
        return client.dump(key)
    finally:
        client.delete(key)


_live = random.Random(99)
LIVE_VALUES = {
    "a x 100": b"a" * 100,
    "abc x 1000": b"abc" * 1000,
    "5000-byte mix": _words(_live, 2000) + _live.randbytes(1000) + b"z" * 500
    + _words(_live, 1500),
    "match at the very end": b"abaaaaaaaababaaababaabaabbbbbbbbababab",
    "small alphabet 20000": bytes(_live.choice(b"ab") for _ in range(20000)),
    "300 KB words": _words(_live, 300000),
    "long run": b"\x07" * 70000,
}


@pytest.mark.parametrize("name", LIVE_VALUES)
def test_real_redis_dump_of_compressed_string(real_redis, name):
    value = LIVE_VALUES[name]
    payload = dump_of(real_redis, value)
    assert_crc_closes(payload)
    body, original_len = lzf_string_body(payload)
    assert original_len == len(value)
    assert decompress(body, original_len) == value
    assert compress(value, len(value) - 4) == body


def test_real_redis_stores_incompressible_string_raw(real_redis):
    value = random.Random(3).randbytes(3000)
    payload = dump_of(real_redis, value)
    assert_crc_closes(payload)
    # A plain length-prefixed string, not 0xC3: Redis's lzf_compress gave up too.
    assert payload[0] == 0
    length, i = rdb_length(payload, 1)
    assert (length, payload[i:i + length]) == (len(value), value)
    assert compress(value, len(value) - 4) is None


def test_real_redis_many_strings(real_redis):
    """Assorted lengths and mixes: every compressed body identical, every refusal shared."""
    rnd = random.Random(2024)
    for _ in range(60):
        size = rnd.choice([rnd.randrange(21, 200), rnd.randrange(200, 5000)])
        value = _words(rnd, size) if rnd.random() < 0.7 else rnd.randbytes(size)
        payload = dump_of(real_redis, value)
        assert_crc_closes(payload)
        mine = compress(value, len(value) - 4)
        if payload[1] == 0xC3:
            body, _ = lzf_string_body(payload)
            assert mine == body, value
        else:
            assert mine is None, value
