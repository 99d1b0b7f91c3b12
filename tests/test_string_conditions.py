"""The string commands Redis 8.4 added: SET's IFEQ / IFNE / IFDEQ / IFDNE conditions,
DIGEST, DELEX and MSETEX.

There is no 8.4 server here to record from: the expected replies follow redis.io's pages
for these commands, Redis's own tests (tests/unit/type/string.tcl) and its source
(t_string.c, db.c). Every test is marked min_redis("8.4"), so it is skipped against the
Redis 7.0 the suite can also run against.
"""

from __future__ import annotations

import pytest
import redis
import xxhash

pytestmark = pytest.mark.min_redis("8.4")

RE = redis.ResponseError
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
BAD_DIGEST = "must be exactly 16 hexadecimal characters"


def err(r, *args) -> str:
    with pytest.raises(RE) as info:
        r.execute_command(*args)
    return str(info.value)


def cmd(r, *args):
    return r.execute_command(*args)


def digest(value: bytes) -> bytes:
    return xxhash.xxh3_64_hexdigest(value).encode()


def stats(r) -> tuple[int, int]:
    info = r.info("stats")
    return info["keyspace_hits"], info["keyspace_misses"]


def counted(r, *args) -> tuple[int, int]:
    """(hits, misses) that one command added to INFO's keyspace counters."""
    h0, m0 = stats(r)
    try:
        r.execute_command(*args)
    except RE:
        pass
    h1, m1 = stats(r)
    return h1 - h0, m1 - m0


# --- DIGEST ------------------------------------------------------------------------------

def test_digest_is_xxh3_64_in_16_hex_digits(r, wire):
    for value in (b"", b"hello world", b"12345", b"-999", b"\x00\x01\xff\xfe", b"x" * 5000):
        r.set("k", value)
        assert r.execute_command("DIGEST", "k") == digest(value)
    # Leading zeros are kept: Redis's own test value, whose hash is 0x6c38adf31777.
    r.set("z", "v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzk"
               "jytls2kwlj7626sd")
    assert wire("DIGEST", "z") == b"$16\r\n00006c38adf31777\r\n"


def test_digest_of_a_string_edited_in_place(r):
    r.set("k", "abc")
    r.append("k", "def")  # now held as a mutable buffer
    r.setrange("k", 0, "X")
    assert cmd(r, "DIGEST", "k") == digest(b"Xbcdef")


def test_digest_missing_wrong_type_and_arity(r, wire):
    assert wire("DIGEST", "nokey") == b"$-1\r\n"
    assert wire.resp3("DIGEST", "nokey") == b"_\r\n"
    r.hset("h", "f", "v")
    assert err(r, "DIGEST", "h") == WRONGTYPE
    assert err(r, "DIGEST") == "wrong number of arguments for 'digest' command"
    assert err(r, "DIGEST", "a", "b") == "wrong number of arguments for 'digest' command"


def test_digest_counts_as_a_read(r):
    r.set("k", "v")
    assert counted(r, "DIGEST", "k") == (1, 0)
    assert counted(r, "DIGEST", "nokey") == (0, 1)
