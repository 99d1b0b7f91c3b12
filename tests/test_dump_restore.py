"""DUMP and RESTORE, against streamd or a real Redis (``--redis-url``).

Payloads captured from Redis 7.0 (``tests/data/rdb_fixtures.json``, made by
``tests/rdb_fixtures.py``) restore on every target, and streamd's own stream nodes must match
the listpacks in them byte for byte. Newer state (IDMP, the NACK zone, field TTLs) must
survive a DUMP/RESTORE round trip on targets that have it.
"""

from __future__ import annotations

import json
import pathlib
import threading
import time

import pytest
import redis

from streamd.rdb import listpack, objects
from streamd.rdb.objects import seal
from streamd.rdb.crc64 import crc64
from tests import rdb_fixtures as FX
from tests.conftest import error_text, pattern_listener, target_allowing

FIXTURES = json.loads((pathlib.Path(__file__).parent / "data" / "rdb_fixtures.json")
                      .read_text())


def _payload(hexed: str) -> bytes:
    return bytes.fromhex(hexed)


def _raw(client, *args):
    """A reply without redis-py's reshaping (RESP2 lists as sent)."""
    conn = client.connection_pool.get_connection()
    try:
        conn.send_command(*args)
        return conn.read_response()
    finally:
        client.connection_pool.release(conn)


def _plain(reply):
    return FX.plain(reply)


def _node_listpacks(payload: bytes) -> list[bytes]:
    """The (decompressed) listpack of each node of a stream payload, head first."""
    r = objects._In(payload, len(payload) - 10)
    kind = r.byte()
    assert kind in objects._STREAM_VERSION
    out = []
    for _ in range(r.length()):
        assert len(r.string()) == 16
        out.append(r.string())
    return out


# --- strings ------------------------------------------------------------------------------

def test_dump_of_a_missing_key_is_null(r):
    assert r.dump("nope") is None


@pytest.mark.parametrize("value", [
    b"0", b"12345", b"-1", b"-2147483648", b"2147483648", b"9223372036854775807", b"007",
    b"", b"hello", b"x" * 44, b"x" * 45, b"abc" * 1000, bytes(range(256)),
])
@pytest.mark.parametrize("compression", ["yes", "no"])
def test_string_round_trip_keeps_value_and_encoding(r, value, compression):
    r.config_set("rdbcompression", compression)
    r.set("k", value)
    encoding = r.object("encoding", "k")
    payload = r.dump("k")
    assert payload[-8:] == crc64(payload[:-8]).to_bytes(8, "little")
    r.delete("k")
    r.restore("k", 0, payload)
    assert r.get("k") == value
    assert r.object("encoding", "k") == encoding
    assert r.ttl("k") == -1


def test_long_strings_are_compressed_only_when_asked(r):
    r.set("k", b"ab" * 500)
    r.config_set("rdbcompression", "yes")
    packed = r.dump("k")
    r.config_set("rdbcompression", "no")
    plain = r.dump("k")
    assert packed[1] == 0xC3  # LZF marker
    assert len(packed) < 100 < len(plain)
    assert plain[1:4] == b"\x43\xe8" + b"a"  # 14-bit length 1000, then the bytes


@pytest.mark.parametrize("name", sorted(FX.STRINGS))
def test_restore_strings_dumped_by_redis_7_0(r, name):
    r.restore("k", 0, _payload(FIXTURES["strings"][name]))
    assert r.get("k") == FX.STRINGS[name].encode("latin-1")


def test_dump_of_strings_matches_redis_7_0_but_for_the_footer(r):
    r.config_set("rdbcompression", "yes")
    for name, value in FX.STRINGS.items():
        r.set("k", value.encode("latin-1"))
        assert r.dump("k")[:-10] == _payload(FIXTURES["strings"][name])[:-10], name


# --- hashes -------------------------------------------------------------------------------

@pytest.mark.parametrize("which,mapping", [("small", FX.HASH_SMALL), ("big", FX.HASH_BIG)])
def test_restore_hashes_dumped_by_redis_7_0(r, which, mapping):
    r.config_set("hash-max-listpack-entries", 128)
    r.restore("h", 0, _payload(FIXTURES[f"hash_{which}"]))
    assert r.hgetall("h") == {k.encode(): v.encode() for k, v in mapping.items()}
    assert r.object("encoding", "h").decode() == FIXTURES[f"hash_{which}_encoding"]


def test_small_hash_dump_matches_redis_7_0_byte_for_byte(r):
    r.hset("h", mapping=FX.HASH_SMALL)
    assert r.dump("h")[:-10] == _payload(FIXTURES["hash_small"])[:-10]


def test_hash_round_trip_keeps_order_and_encoding(r):
    r.config_set("hash-max-listpack-entries", 4)
    r.hset("small", mapping={"z": "1", "a": "2", "m": "3"})
    r.hset("big", mapping={f"f{i}": str(i) for i in range(10)})
    for k in ("small", "big"):
        payload = r.dump(k)
        before = (_raw(r, "HGETALL", k), r.object("encoding", k))
        r.delete(k)
        r.restore(k, 0, payload)
        after = (_raw(r, "HGETALL", k), r.object("encoding", k))
        if before[1] == b"hashtable":
            assert sorted(after[0]) == sorted(before[0]) and after[1] == before[1]
        else:
            assert after == before


def test_restored_hash_encoding_follows_the_restoring_servers_limits(r):
    r.hset("h", mapping={f"f{i}": "v" for i in range(10)})
    payload = r.dump("h")
    r.config_set("hash-max-listpack-entries", 5)
    r.delete("h")
    r.restore("h", 0, payload)
    assert r.object("encoding", "h") == b"hashtable"
    assert len(r.hgetall("h")) == 10


@pytest.mark.min_redis("7.4")
def test_hash_field_ttls_survive(r):
    r.config_set("hash-max-listpack-entries", 4)
    far = int(time.time() * 1000) + 100_000
    for k, n in (("lp", 3), ("ht", 8)):
        r.hset(k, mapping={f"f{i}": f"v{i}" for i in range(n)})
        r.execute_command("HPEXPIREAT", k, far, "FIELDS", 1, "f1")
        r.execute_command("HPEXPIREAT", k, far + 5, "FIELDS", 1, "f2")
        payload = r.dump(k)
        before = (_raw(r, "HGETALL", k), r.object("encoding", k),
                  _raw(r, "HPEXPIRETIME", k, "FIELDS", 3, "f0", "f1", "f2"))
        r.delete(k)
        r.restore(k, 0, payload)
        after = (_raw(r, "HGETALL", k), r.object("encoding", k),
                 _raw(r, "HPEXPIRETIME", k, "FIELDS", 3, "f0", "f1", "f2"))
        if before[1] == b"hashtable":
            assert sorted(after[0]) == sorted(before[0]) and after[1:] == before[1:]
        else:
            assert after == before
        assert after[2] == [-1, far, far + 5]


# --- streams ------------------------------------------------------------------------------

_XINFO_SAME = ("length", "radix-tree-keys", "last-generated-id", "max-deleted-entry-id",
               "entries-added", "recorded-first-entry-id", "entries")
_GROUP_SAME = ("name", "last-delivered-id", "pel-count", "pending")
_CONSUMER_SAME = ("name", "seen-time", "pel-count", "pending")


def _pairs(flat: list) -> dict:
    return dict(zip(flat[0::2], flat[1::2]))


def _comparable(info: list) -> dict:
    """What of XINFO STREAM FULL must survive a restore, whichever version replies."""
    d = _pairs(info)
    out = {k: d[k] for k in _XINFO_SAME}
    out["groups"] = []
    for g in d["groups"]:
        gd = _pairs(g)
        row = {k: gd[k] for k in _GROUP_SAME}
        row["consumers"] = [{k: _pairs(c)[k] for k in _CONSUMER_SAME} for c in gd["consumers"]]
        out["groups"].append(row)
    return out


def _build_fixture_stream(r, key="s"):
    r.config_set("stream-node-max-entries", FX.NODE_MAX_ENTRIES)
    for cmd in FX.STREAM_BUILD:
        r.execute_command(*[a.replace("{key}", key) for a in cmd])


def test_restore_a_stream_dumped_by_redis_7_0(r):
    r.restore("s", 0, _payload(FIXTURES["stream"]))
    assert _plain(_raw(r, "XRANGE", "s", "-", "+")) == FIXTURES["stream_xrange"]
    assert _comparable(_plain(_raw(r, "XINFO", "STREAM", "s", "FULL"))) == \
        _comparable(FIXTURES["stream_xinfo"])
    # The restored groups work: bob's entries can be acknowledged, new reads go on.
    assert r.xack("s", "g1", "5-0", "6-0") == 2
    got = r.xreadgroup("g1", "alice", {"s": ">"}, count=1)
    assert got[0][1][0][0] == b"7-0"


def test_stream_nodes_match_redis_7_0_byte_for_byte(r):
    _build_fixture_stream(r)
    ours = _node_listpacks(r.dump("s"))
    theirs = _node_listpacks(_payload(FIXTURES["stream"]))
    assert ours == theirs


def test_stream_round_trip_keeps_everything(r):
    r.config_set("stream-node-max-entries", 3)
    for i in range(1, 12):
        r.xadd("s", {"f": i, "g": "x" * i} if i % 3 else {"other": i}, id=f"{i}-1")
    r.xdel("s", "2-1", "7-1")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c1", {"s": ">"}, count=4)
    r.xreadgroup("g", "c2", {"s": ">"}, count=2)
    r.xack("s", "g", "3-1")
    r.xgroup_create("s", "late", id="$")
    r.xtrim("s", maxlen=9, approximate=False)
    before = _plain(_raw(r, "XINFO", "STREAM", "s", "FULL"))
    payload = r.dump("s")
    r.delete("s")
    r.restore("s", 0, payload)
    assert _plain(_raw(r, "XINFO", "STREAM", "s", "FULL")) == before
    assert r.dump("s") == payload
    # Node limits keep counting from the restored nodes: the next entry opens a new node.
    nodes = _pairs(before)["radix-tree-keys"]
    r.xadd("s", {"f": 1}, id="100-1")
    assert _pairs(_plain(_raw(r, "XINFO", "STREAM", "s")))["radix-tree-keys"] in (nodes,
                                                                               nodes + 1)


def test_restored_stream_wakes_blocked_readers(r, make_client):
    r.xadd("src", {"f": "v"}, id="5-1")
    payload = r.dump("src")
    waiter = make_client()
    got = []
    t = threading.Thread(target=lambda: got.append(waiter.xread({"s": "$"}, block=5000)))
    t.start()
    time.sleep(0.3)  # the read blocks on the missing key, waiting for anything past 0-0
    r.restore("s", 0, payload)
    t.join(6)
    assert got and got[0][0][0] == b"s"
    assert [e[0] for e in got[0][0][1]] == [b"5-1"]


@pytest.mark.min_redis("8.6")
def test_idmp_state_survives(r):
    first = r.execute_command("XADD", "s", "IDMP", "p1", "i1", "*", "f", "v")
    r.execute_command("XADD", "s", "IDMP", "p1", "i1", "*", "f", "v")
    r.execute_command("XCFGSET", "s", "IDMP-DURATION", 500, "IDMP-MAXSIZE", 7)
    r.execute_command("XADD", "s", "IDMP", "p1", "i2", "*", "f", "v")
    again = r.execute_command("XADD", "s", "IDMP", "p2", "i9", "*", "f", "v")
    r.execute_command("XADD", "s", "IDMP", "p2", "i9", "*", "f", "v")
    before = _pairs(_plain(_raw(r, "XINFO", "STREAM", "s")))
    payload = r.dump("s")
    r.delete("s")
    r.restore("s", 0, payload)
    after = _pairs(_plain(_raw(r, "XINFO", "STREAM", "s")))
    for k in ("idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
              "iids-duplicates"):
        assert after[k] == before[k], k
    assert after["idmp-duration"] == 500 and after["idmp-maxsize"] == 7
    assert r.execute_command("XADD", "s", "IDMP", "p2", "i9", "*", "f", "v") == again
    assert first != again


@pytest.mark.min_redis("8.8")
def test_nack_zone_survives(r):
    for i in range(1, 6):
        r.xadd("s", {"f": i}, id=f"{i}-1")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"})
    r.execute_command("XNACK", "s", "g", "SILENT", "IDS", 2, "4-1", "2-1")
    before = _plain(_raw(r, "XINFO", "STREAM", "s", "FULL"))
    payload = r.dump("s")
    r.delete("s")
    r.restore("s", 0, payload)
    assert _plain(_raw(r, "XINFO", "STREAM", "s", "FULL")) == before
    # NACKed entries come back first, in the order they were released.
    claimed = _raw(r, "XREADGROUP", "GROUP", "g", "d", "COUNT", 2, "CLAIM", 0,
                   "STREAMS", "s", ">")
    assert [e[0] for e in claimed[0][1]] == [b"4-1", b"2-1"]


# --- RESTORE's options and errors --------------------------------------------------------

@pytest.fixture
def payload(r):
    r.set("src", "value")
    p = r.dump("src")
    r.delete("src")
    return p


def test_busy_key_unless_replace(r, payload):
    r.set("k", "old")
    assert error_text(r.restore, "k", 0, payload) == "BUSYKEY Target key name already exists."
    r.restore("k", 0, payload, replace=True)
    assert r.get("k") == b"value"


def test_replace_changes_the_type(r, payload):
    r.xadd("k", {"f": "v"})
    r.restore("k", 0, payload, replace=True)
    assert r.type("k") == b"string"


@pytest.mark.parametrize("args,expected", [
    (["k", "-1", "PAYLOAD"], "Invalid TTL value, must be >= 0"),
    (["k", "abc", "PAYLOAD"], "value is not an integer or out of range"),
    (["k", "0", "PAYLOAD", "BOGUS"], "syntax error"),
    (["k", "0", "PAYLOAD", "IDLETIME"], "syntax error"),
    (["k", "0", "PAYLOAD", "IDLETIME", "-1"], "Invalid IDLETIME value, must be >= 0"),
    (["k", "0", "PAYLOAD", "IDLETIME", "x"], "value is not an integer or out of range"),
    (["k", "0", "PAYLOAD", "FREQ", "256"], "Invalid FREQ value, must be >= 0 and <= 255"),
    (["k", "0", "PAYLOAD", "FREQ", "-1"], "Invalid FREQ value, must be >= 0 and <= 255"),
    (["k", "0", "PAYLOAD", "IDLETIME", "1", "FREQ", "1"], "syntax error"),
    (["k", "0", "PAYLOAD", "FREQ", "1", "IDLETIME", "1"], "syntax error"),
    (["k", "0"], "wrong number of arguments for 'restore' command"),
])
def test_restore_argument_errors(r, payload, args, expected):
    argv = [payload if a == "PAYLOAD" else a for a in args]
    assert error_text(r.execute_command, "RESTORE", *argv) == expected
    assert not r.exists("k")


def test_option_errors_come_before_busykey_and_busykey_before_ttl(r, payload):
    r.set("k", "old")
    assert error_text(r.execute_command, "RESTORE", "k", 0, payload, "BOGUS") == \
        "syntax error"
    assert error_text(r.execute_command, "RESTORE", "k", -1, payload).startswith("BUSYKEY")


def test_options_are_accepted_once_valid(r, payload):
    r.restore("a", 0, payload, idletime=10)
    r.execute_command("RESTORE", "b", 0, payload, "FREQ", 5, "REPLACE", "ABSTTL")
    assert r.get("a") == r.get("b") == b"value"


@pytest.mark.parametrize("mangle", ["garbage", "short", "crc", "version"])
def test_payloads_failing_the_footer_checks(r, payload, mangle):
    if mangle == "garbage":
        bad = b"not a payload at all"
    elif mangle == "short":
        bad = payload[-9:]
    elif mangle == "crc":
        bad = payload[:-1] + bytes([payload[-1] ^ 1])
    else:
        bad = seal(payload[:-10], 0xFFFF)
    assert error_text(r.restore, "k", 0, bad) == \
        "DUMP payload version or checksum are wrong"
    assert not r.exists("k")


@pytest.mark.parametrize("body", [
    b"\x00\x40",  # a string whose 14-bit length runs past the end
    b"\x63",  # an unknown type
    b"\x10\x07" + b"\x07\x00\x00\x00\x00\x00\xff",  # an empty hash listpack
])
def test_payloads_without_a_valid_value(r, body):
    assert error_text(r.restore, "k", 0, seal(body, 10)) == "Bad data format"
    assert not r.exists("k")


def test_bytes_after_the_value_are_ignored(r):
    r.restore("k", 0, seal(b"\x00\x05hello extra", 10))
    assert r.get("k") == b"hello"


def test_corrupt_stream_payloads_are_refused(r):
    good = _payload(FIXTURES["stream"])[:-10]
    # bob's consumer PEL names 5-0 last: make it an ID the group's PEL does not hold
    at = good.rfind((5 << 64).to_bytes(16, "big"))
    bad = bytearray(good)
    bad[at + 15] = 9
    assert error_text(r.restore, "k", 0, seal(bytes(bad), 10)) == "Bad data format"
    # a node listpack whose header count disagrees with its entries (Redis finds this in
    # its deep check, which streamd always runs)
    r.config_set("sanitize-dump-payload", "yes")
    body = bytearray(good)
    lp_at = body.index(b"\x4a\x4a\x00\x00\x00") + 1  # the first node: 74 bytes, stored raw
    assert body[lp_at + 6] == 3  # live entries: 1-1, 2-0, 3-0
    body[lp_at + 6] = 2
    assert error_text(r.restore, "k", 0, seal(bytes(body), 10)) == "Bad data format"


def test_relative_and_absolute_ttls(r, payload):
    r.restore("rel", 5000, payload)
    assert 4000 < r.pttl("rel") <= 5000
    at = int(time.time() * 1000) + 5000
    r.restore("abs", at, payload, absttl=True)
    assert 4000 < r.pttl("abs") <= 5000


def test_an_already_expired_ttl_creates_nothing_and_replace_deletes(r, payload):
    assert r.restore("k", 1, payload, absttl=True)
    assert not r.exists("k")
    r.set("k", "old")
    r.restore("k", 1, payload, absttl=True, replace=True)
    assert not r.exists("k")


def test_restore_announces_itself(r, target, payload):
    r.config_set("notify-keyspace-events", "KEg")
    try:
        with pattern_listener(target, "__keyspace@0__:*") as drain:
            r.restore("k", 0, payload)
            r.restore("k", 1, payload, absttl=True, replace=True)
            events = [data for _, data in drain(0.2)]
    finally:
        r.config_set("notify-keyspace-events", "")
    assert events == [b"restore", b"del"]


@pytest.fixture(scope="module")
def debug_target(target):
    yield from target_allowing(target, "enable-debug-command")


def test_skip_checksum_validation(debug_target):
    d = debug_target.client()
    d.set("src", "value")
    payload = d.dump("src")
    bad = payload[:-1] + bytes([payload[-1] ^ 1])
    d.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 1)
    try:
        d.restore("k", 0, bad, replace=True)
    finally:
        d.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 0)
    assert d.get("k") == b"value"
    assert error_text(d.restore, "k2", 0, bad).startswith("DUMP payload")
    d.delete("src", "k")


@pytest.mark.min_redis("8.0")
def test_an_all_zero_checksum_is_not_checked(r, payload):
    r.restore("k", 0, payload[:-8] + bytes(8))
    assert r.get("k") == b"value"


def test_listpack_codec_round_trips_every_encoding():
    items = [0, 127, 128, -1, -4096, 4095, 4096, -32768, 32767, 32768, -(1 << 23),
             (1 << 23) - 1, 1 << 23, -(1 << 31), (1 << 31) - 1, 1 << 31, -(1 << 63),
             (1 << 63) - 1, b"", b"x", b"y" * 63, b"y" * 64, b"z" * 4095, b"z" * 4096,
             b"w" * 20000, b"-0", b"007", b"+1", b"99999999999999999999"]
    data = listpack.encode(items)
    assert listpack.decode(data) == [x if type(x) is int else listpack.as_int(x)
                                     if listpack.as_int(x) is not None else x for x in items]
    for cut in (1, 7, len(data) // 2):
        with pytest.raises(listpack.ListpackError):
            listpack.decode(data[:-cut])


def test_restore_asking_restores_as_restore_does(r, payload):
    assert r.execute_command("RESTORE-ASKING", "k", 0, payload) == b"OK"
    assert r.get("k") == b"value"
    assert error_text(r.execute_command, "RESTORE-ASKING", "k", 0, payload).startswith(
        "BUSYKEY")
    info = _raw(r, "COMMAND", "INFO", "RESTORE-ASKING")[0]
    assert info[:6] == [b"restore-asking", -4, [b"write", b"denyoom", b"asking"], 1, 1, 1]


# --- DEBUG RELOAD: every key through a save and a load ---------------------------------------

def test_debug_reload_keeps_what_a_save_keeps(debug_target):
    d = debug_target.client()
    d.flushall()
    d.config_set("stream-node-max-entries", 3)
    try:
        for i in range(1, 9):
            d.xadd("s", {"f": i}, id=f"{i}-1")
        d.xdel("s", "2-1")
        d.xgroup_create("s", "g", id="0")
        d.xreadgroup("g", "c", {"s": ">"}, count=3)
        d.set("str", "hello")
        d.append("str", " world")  # raw while edited; a load makes it embstr again
        d.hset("h", mapping={"a": "1", "b": "2"})
        d.set("ttl", "v", px=60_000)
        d.set("gone", "v", px=1)
        d.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        time.sleep(0.01)
        before = _plain(_raw(d, "XINFO", "STREAM", "s", "FULL"))
        assert d.object("encoding", "str") == b"raw"
        assert d.execute_command("DEBUG", "RELOAD") == b"OK"
        assert _plain(_raw(d, "XINFO", "STREAM", "s", "FULL")) == before
        assert d.get("str") == b"hello world" and d.object("encoding", "str") == b"embstr"
        assert d.hgetall("h") == {b"a": b"1", b"b": b"2"}
        assert 50_000 < d.pttl("ttl") <= 60_000
        assert d.dbsize() == 4  # "gone" had expired: a load drops it
        assert d.info("persistence")["rdb_changes_since_last_save"] == 0
        assert d.execute_command("DEBUG", "RELOAD", "NOFLUSH", "MERGE") == b"OK"
        assert d.dbsize() == 4
        with pytest.raises(redis.ResponseError, match="Error trying to load the RDB dump"):
            d.execute_command("DEBUG", "RELOAD", "NOFLUSH")
        with pytest.raises(redis.ResponseError, match="only supports the MERGE, NOFLUSH"):
            d.execute_command("DEBUG", "RELOAD", "BOGUS")
        assert d.dbsize() == 4
    finally:
        d.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        d.config_set("stream-node-max-entries", 100)
        d.flushall()
        d.close()


@pytest.mark.streamd_only
def test_debug_reload_nosave_finds_no_file(debug_target):
    # streamd writes no file, so a load without a save finds none, as Redis would; Redis
    # has emptied the dataset by then (NOFLUSH keeps it).
    d = debug_target.client()
    d.set("k", "v")
    with pytest.raises(redis.ResponseError, match="Error trying to load the RDB dump"):
        d.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH")
    assert d.get("k") == b"v"
    with pytest.raises(redis.ResponseError, match="Error trying to load the RDB dump"):
        d.execute_command("DEBUG", "RELOAD", "NOSAVE")
    assert d.dbsize() == 0
    d.close()


@pytest.mark.min_redis("8.8")
def test_debug_reload_keeps_idmp_records_and_the_nack_zone(debug_target):
    d = debug_target.client()
    d.flushall()
    try:
        first = d.execute_command("XADD", "s", "IDMP", "p", "i1", "*", "f", "v")
        d.execute_command("XADD", "s", "IDMP", "p", "i2", "*", "f", "v")
        d.xgroup_create("s", "g", id="0")
        d.xreadgroup("g", "c", {"s": ">"})
        d.execute_command("XNACK", "s", "g", "FATAL", "IDS", 1, first)
        before = _plain(_raw(d, "XINFO", "STREAM", "s", "FULL"))
        d.execute_command("DEBUG", "RELOAD")
        assert _plain(_raw(d, "XINFO", "STREAM", "s", "FULL")) == before
        assert d.execute_command("XADD", "s", "IDMP", "p", "i1", "*", "f", "v") == first
    finally:
        d.flushall()
        d.close()
