"""String commands: replies, options and error texts as Redis gives them."""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import dirty_changes, watch_broken

RE = redis.ResponseError
LLONG_MAX = 2**63 - 1


def err(fn, *args):
    with pytest.raises(RE) as info:
        fn(*args)
    return str(info.value)


def cmd(r, *args):
    return r.execute_command(*args)


# --- GET / SET ---------------------------------------------------------------------------

def test_get_set_basic(r, call):
    assert r.get("nokey") is None
    assert call("SET", "k", "v") == b"OK"
    assert r.get("k") == b"v"
    assert call.resp3("GET", "nokey") is None
    r.set("bin", b"\x00\xff\r\n")
    assert r.get("bin") == b"\x00\xff\r\n"


def test_set_nx_xx(r):
    assert r.set("k", "1", xx=True) is None
    assert r.set("k", "1", nx=True) is True
    assert r.set("k", "2", nx=True) is None
    assert r.set("k", "3", xx=True) is True
    assert r.get("k") == b"3"
    # The expiry applies whichever condition let the write through.
    assert r.set("n", "1", nx=True, ex=100) is True
    assert 99 <= r.ttl("n") <= 100
    assert r.set("k", "4", xx=True, px=100000) is True
    assert 99000 < r.pttl("k") <= 100000


def test_set_get_option(r, call):
    assert r.set("k", "1", get=True) is None
    assert r.set("k", "2", get=True) == b"1"
    # NX with GET: the old value comes back and nothing is written.
    assert call("SET", "k", "3", "NX", "GET") == b"2"
    assert r.get("k") == b"2"
    assert call("SET", "new", "x", "NX", "GET") is None
    assert r.get("new") == b"x"
    assert call("SET", "absent", "x", "XX", "GET") is None
    assert r.exists("absent") == 0
    # Setting the value it already has is still a write: the TTL goes.
    r.set("t", "same", ex=100)
    assert call("SET", "t", "same", "GET") == b"same"
    assert r.ttl("t") == -1


def test_set_get_on_wrong_type_does_not_write(r):
    r.hset("h", "f", "v")
    assert err(cmd, r, "SET", "h", "x", "GET") == \
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert r.type("h") == b"hash"
    # Without GET, SET replaces any type.
    assert r.set("h", "x") is True
    assert r.get("h") == b"x"


def test_set_expiry_options(r):
    r.set("k", "v", ex=100)
    assert 99 <= r.ttl("k") <= 100
    r.set("k", "v", px=100000)
    assert 99000 < r.pttl("k") <= 100000
    at = int(time.time()) + 200
    r.set("k", "v", exat=at)
    assert r.expiretime("k") == at
    r.set("k", "v", pxat=at * 1000)
    assert r.pexpiretime("k") == at * 1000
    r.set("k", "v2", keepttl=True)
    assert r.pexpiretime("k") == at * 1000
    r.set("k", "v3")  # a plain SET drops the TTL
    assert r.ttl("k") == -1
    # A repeated option is accepted and the last value wins.
    cmd(r, "SET", "k", "v", "EX", "10", "EX", "20")
    assert 19 <= r.ttl("k") <= 20


def test_set_syntax_errors(r):
    for args in (["NX", "XX"], ["XX", "NX"], ["EX", "10", "PX", "10"],
                 ["EX", "10", "KEEPTTL"], ["KEEPTTL", "EX", "10"], ["EX"],
                 ["PERSIST"], ["FOO"], ["EXAT", "1", "PXAT", "1"]):
        assert err(cmd, r, "SET", "k", "v", *args) == "syntax error", args
    assert r.exists("k") == 0


def test_set_nx_and_xx_may_repeat(r, call):
    # Recorded from Redis 7.0.15; the conditions Redis 8.4 added beside NX and XX leave
    # this as it was.
    assert call("SET", "k", "v", "NX", "NX") == b"OK"
    assert call("SET", "k", "v2", "XX", "XX", "GET") == b"v"
    assert call("SET", "k", "v3", "NX", "GET", "NX") == b"v2"
    assert r.get("k") == b"v2"
    assert err(cmd, r, "SET", "k", "v", "NX", "XX", "NX") == "syntax error"


def test_set_invalid_expire(r):
    invalid = "invalid expire time in 'set' command"
    for args in (["EX", "0"], ["EX", "-1"], ["PX", "0"], ["EXAT", "0"], ["PXAT", "-5"],
                 ["PX", str(LLONG_MAX)], ["EX", str(LLONG_MAX // 1000 + 1)],
                 ["EX", str(LLONG_MAX // 1000)]):
        assert err(cmd, r, "SET", "k", "v", *args) == invalid, args
    assert err(cmd, r, "SET", "k", "v", "EX", "abc") == \
        "value is not an integer or out of range"
    assert r.exists("k") == 0


def test_set_relative_expiry_overflowing_the_clock(r):
    # Redis adds the current time to PX/EX and refuses a sum past LLONG_MAX; a minute
    # either side of that boundary is clear of any clock difference.
    room = LLONG_MAX - int(time.time() * 1000)
    assert err(cmd, r, "SET", "k", "v", "PX", str(room + 60_000)) == \
        "invalid expire time in 'set' command"
    assert err(cmd, r, "PSETEX", "k", str(room + 60_000), "v") == \
        "invalid expire time in 'psetex' command"
    assert r.exists("k") == 0
    assert cmd(r, "SET", "k", "v", "PX", str(room - 60_000)) is True
    assert abs(r.pexpiretime("k") - (LLONG_MAX - 60_000)) < 30_000
    assert err(cmd, r, "GETEX", "k", "PX", str(room + 60_000)) == \
        "invalid expire time in 'getex' command"


_SET_EXPIRY = [["EX", "100"], ["PX", "100000"], ["EXAT", "4000000000"],
               ["PXAT", "4000000000000"], ["KEEPTTL"]]


@pytest.mark.parametrize("first, second", [
    (a, b) for a in _SET_EXPIRY for b in _SET_EXPIRY if a[0] != b[0]],
    ids=lambda o: o[0])
def test_set_takes_one_expiry_option(r, first, second):
    # Only the same option may repeat: any two different ones are a syntax error.
    assert err(cmd, r, "SET", "k", "v", *first, *second) == "syntax error"
    assert r.exists("k") == 0


@pytest.mark.parametrize("name, args", [
    ("set", ["SET", "k", "v"]), ("getex", ["GETEX", "k"])])
def test_absolute_expiry_limits(r, name, args):
    r.set("k", "v")
    # Seconds are taken up to the last whole second below LLONG_MAX milliseconds.
    cmd(r, *args, "EXAT", str(LLONG_MAX // 1000))
    assert r.pexpiretime("k") == LLONG_MAX // 1000 * 1000
    cmd(r, *args, "PXAT", str(LLONG_MAX))
    assert r.pexpiretime("k") == LLONG_MAX
    assert err(cmd, r, *args, "EXAT", str(LLONG_MAX // 1000 + 1)) == \
        f"invalid expire time in '{name}' command"
    assert r.pexpiretime("k") == LLONG_MAX


def test_set_with_past_absolute_time_leaves_no_key(r):
    assert r.set("k", "v", pxat=1) is True
    assert r.get("k") is None
    assert r.exists("k") == 0


def test_setnx_setex_psetex(r, call):
    assert call("SETNX", "raw", "1") == 1 and call("SETNX", "raw", "2") == 0
    r.hset("h", "f", "v")
    assert call("SETNX", "h", "x") == 0  # any type counts as present: no WRONGTYPE
    assert r.setnx("k", "1") is True
    assert r.setnx("k", "2") is False
    assert r.get("k") == b"1"
    assert cmd(r, "SETEX", "k", "100", "v1") is True
    assert 99 <= r.ttl("k") <= 100
    assert r.get("k") == b"v1"
    assert r.psetex("k", 100000, "v2") is True
    assert 99000 < r.pttl("k") <= 100000
    assert r.get("k") == b"v2"
    assert err(cmd, r, "SETEX", "k", "0", "v") == "invalid expire time in 'setex' command"
    assert err(cmd, r, "PSETEX", "k", "-5", "v") == "invalid expire time in 'psetex' command"
    assert err(cmd, r, "SETEX", "k", "x", "v") == "value is not an integer or out of range"


@pytest.mark.parametrize("args, reply", [
    (["SET", "k", "new", "NX"], b"OK"), (["SETNX", "k", "new"], 1),
    (["MSETNX", "k", "new", "other", "x"], 1),
])
def test_a_key_past_its_ttl_counts_as_absent_for_nx(r, call, args, reply):
    r.set("k", "old", pxat=1)  # already past: only a lookup or the active cycle removes it
    assert call(*args) == reply
    assert r.get("k") == b"new"


# --- MGET / MSET / MSETNX ----------------------------------------------------------------

def test_mget_returns_nil_for_missing_and_other_types(r):
    r.mset({"a": "1", "b": "2"})
    r.hset("h", "f", "v")
    r.set("gone", "v", pxat=1)  # already past: left for the lookup to find
    assert r.mget("a", "nokey", "h", "b", "gone") == [b"1", None, None, b"2", None]


def test_mset_msetnx(r):
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.msetnx({"a": "x", "c": "3"}) is False
    assert r.exists("c") == 0
    assert r.msetnx({"c": "3", "d": "4"}) is True
    assert r.mget("a", "c", "d") == [b"1", b"3", b"4"]
    assert r.msetnx({"e": "5", "f": "6", "d": "x"}) is False  # any key, the last one too
    assert r.exists("e", "f") == 0 and r.get("d") == b"4"
    assert err(cmd, r, "MSET", "a", "1", "b") == "wrong number of arguments for 'mset' command"
    assert err(cmd, r, "MSETNX", "a", "1", "b") == \
        "wrong number of arguments for 'msetnx' command"
    assert err(cmd, r, "MSET", "a") == "wrong number of arguments for 'mset' command"


@pytest.mark.parametrize("build", [
    ["APPEND", "k", "ab"], ["SETRANGE", "k", "1", "b"], ["INCRBYFLOAT", "k", "1.5"],
    ["INCR", "k"],
], ids=lambda b: b[0])
def test_values_made_in_place_read_back_everywhere(r, call, build):
    call(*build)
    call(*build)  # the second call works on the value the first one stored
    value = call("GET", "k")
    r.copy("k", "copy")
    assert call("MGET", "k", "nokey", "copy") == [value, None, value]
    assert call.resp3("MGET", "k", "copy") == [value, value]
    assert call("GETEX", "k") == value
    assert call("SET", "k", "x", "GET") == value


def test_mset_drops_ttl(r):
    r.set("a", "1", ex=100)
    r.mset({"a": "2"})
    assert r.ttl("a") == -1


# --- GETSET ------------------------------------------------------------------------------

def test_getset(r):
    assert r.getset("k", "1") is None
    assert r.get("k") == b"1"
    r.expire("k", 100)
    assert r.getset("k", b"\x00two") == b"1"
    assert r.get("k") == b"\x00two"
    assert r.ttl("k") == -1  # a new value, no TTL: as SET without KEEPTTL
    r.hset("h", "f", "v")
    assert err(r.getset, "h", "x") == \
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert r.type("h") == b"hash"  # nothing written
    assert err(cmd, r, "GETSET", "k") == "wrong number of arguments for 'getset' command"


def test_getset_is_one_write_for_watch(r, make_client):
    r.set("k", "v")
    # the same value is still a write
    assert watch_broken(make_client, "k", lambda: r.getset("k", "v"))


_SINCE_72 = pytest.mark.min_redis("7.2")  # deprecated in the docs of 7.2 and later


@pytest.mark.parametrize("name, since, replaced_by", [
    ("getset", b"6.2.0", b"`SET` with the `!GET` argument"),
    ("hmset", b"4.0.0", b"`HSET` with multiple field-value pairs"),
    pytest.param("setnx", b"2.6.12", b"`SET` with the `NX` argument", marks=_SINCE_72),
    pytest.param("setex", b"2.6.12", b"`SET` with the `EX` argument", marks=_SINCE_72),
    pytest.param("psetex", b"2.6.12", b"`SET` with the `PX` argument", marks=_SINCE_72),
    pytest.param("quit", b"7.2.0", b"just closing the connection", marks=_SINCE_72),
])
def test_command_docs_of_deprecated_commands(call, name, since, replaced_by):
    docs = call("COMMAND", "DOCS", name)
    assert docs[0] == name.encode()
    keys = docs[1][0::2]
    d = dict(zip(keys, docs[1][1::2]))
    assert d[b"doc_flags"] == [b"deprecated"]
    assert (d[b"deprecated_since"], d[b"replaced_by"]) == (since, replaced_by)
    # Redis's order: the flags, then when and by what, then any arguments.
    at = keys.index(b"doc_flags")
    assert keys[at + 1:at + 3] == [b"deprecated_since", b"replaced_by"]


# --- GETDEL / GETEX ----------------------------------------------------------------------

def test_getdel(r):
    r.set("k", "v")
    assert r.getdel("k") == b"v"
    assert r.exists("k") == 0
    assert r.getdel("k") is None
    r.hset("h", "f", "v")
    assert err(r.getdel, "h").startswith("WRONGTYPE")


def test_getex(r):
    r.set("k", "v")
    assert r.getex("k") == b"v"
    assert r.ttl("k") == -1
    assert r.getex("k", ex=100) == b"v"
    assert 99 <= r.ttl("k") <= 100
    assert r.getex("k", px=50000) == b"v"
    assert 49000 < r.pttl("k") <= 50000
    assert r.getex("k", persist=True) == b"v"
    assert r.ttl("k") == -1
    at = int(time.time()) + 300
    assert r.getex("k", exat=at) == b"v"
    assert r.expiretime("k") == at
    # An absolute time in the past deletes the key after replying with it.
    assert r.getex("k", pxat=1) == b"v"
    assert r.exists("k") == 0


def test_getex_errors(r):
    r.set("k", "v")
    assert err(cmd, r, "GETEX", "k", "PERSIST", "EX", "10") == "syntax error"
    assert err(cmd, r, "GETEX", "k", "EX", "10", "PERSIST") == "syntax error"
    assert err(cmd, r, "GETEX", "k", "NX") == "syntax error"
    assert err(cmd, r, "GETEX", "k", "KEEPTTL") == "syntax error"
    assert err(cmd, r, "GETEX", "k", "EX") == "syntax error"
    assert err(cmd, r, "GETEX", "k", "EX", "0") == "invalid expire time in 'getex' command"
    assert err(cmd, r, "GETEX", "k", "EX", "abc") == "value is not an integer or out of range"
    # The expiry argument is only looked at when the key exists.
    assert cmd(r, "GETEX", "nokey", "EX", "abc") is None
    r.hset("h", "f", "v")
    assert err(cmd, r, "GETEX", "h").startswith("WRONGTYPE")


_GETEX_EXPIRY = [["EX", "100"], ["PX", "100000"], ["EXAT", "4000000000"],
                 ["PXAT", "4000000000000"], ["PERSIST"]]


@pytest.mark.parametrize("args", [
    a + b for a in _GETEX_EXPIRY for b in _GETEX_EXPIRY if a[0] != b[0]] + [["GET"]],
    ids=" ".join)
def test_getex_takes_one_expiry_option(r, args):
    r.set("k", "v", ex=1000)
    assert err(cmd, r, "GETEX", "k", *args) == "syntax error"
    assert 999 <= r.ttl("k") <= 1000


def test_getex_with_a_past_time_deletes_the_key_without_expiring_it(r):
    r.set("k", "v")
    expired = r.info("stats")["expired_keys"]
    assert r.getex("k", exat=1) == b"v"
    assert r.exists("k") == 0
    # A deletion, as DEL would make it: not an expiry of a key that outlived its TTL.
    assert r.info("stats")["expired_keys"] == expired


# --- APPEND / STRLEN / GETRANGE / SETRANGE -----------------------------------------------

def test_append_strlen(r):
    assert r.append("k", "he") == 2
    assert r.append("k", "llo") == 5
    assert r.get("k") == b"hello"
    assert r.strlen("k") == 5
    assert r.strlen("nokey") == 0
    r.set("n", 12345)
    assert r.strlen("n") == 5
    r.set("bin", b" a\x00\r\n")
    assert r.strlen("bin") == 5
    r.set("t", "v", ex=100)
    r.append("t", "w")
    assert 99 <= r.ttl("t") <= 100  # APPEND keeps the TTL
    r.hset("h", "f", "v")
    assert err(r.append, "h", "x").startswith("WRONGTYPE")
    assert err(r.strlen, "h").startswith("WRONGTYPE")


def test_getrange(r):
    r.set("s", "This is a string")
    assert r.getrange("s", 0, 3) == b"This"
    assert r.getrange("s", -3, -1) == b"ing"
    assert r.getrange("s", 0, -1) == b"This is a string"
    assert r.getrange("s", 10, 100) == b"string"
    assert r.getrange("s", -1, -3) == b""
    assert r.getrange("s", 5, 3) == b""
    assert r.getrange("s", -100, 3) == b"This"
    assert r.getrange("s", 100, 200) == b""
    # Both ends before the start: empty when start > end, else both clamp to 0.
    assert r.getrange("s", -100, -200) == b""
    assert r.getrange("s", -100, -50) == b"T"
    assert r.getrange("s", 0, -100) == b"T"
    assert r.getrange("nokey", 0, 10) == b""
    r.set("n", 1234)
    assert r.getrange("n", 1, 2) == b"23"
    assert err(cmd, r, "GETRANGE", "s", "a", "1") == "value is not an integer or out of range"


def test_setrange(r):
    r.set("k", "Hello World")
    assert r.setrange("k", 6, "Redis") == 11
    assert r.get("k") == b"Hello Redis"
    r.set("m", "Hello")
    assert r.setrange("m", 1, "EL") == 5
    assert r.get("m") == b"HELlo"
    assert r.setrange("m", 3, "xyz") == 6  # overwrites the tail, then grows
    assert r.get("m") == b"HELxyz"
    assert r.setrange("pad", 3, "x") == 4
    assert r.get("pad") == b"\x00\x00\x00x"
    assert r.setrange("k", 0, "") == 11
    assert r.setrange("nokey", 5, "") == 0
    assert r.exists("nokey") == 0
    assert err(r.setrange, "k", -1, "x") == "offset is out of range"
    assert err(cmd, r, "SETRANGE", "k", "x", "v") == "value is not an integer or out of range"
    assert err(r.setrange, "k", 512 * 1024 * 1024, "x") == \
        "string exceeds maximum allowed size (proto-max-bulk-len)"
    r.hset("h", "f", "v")
    assert err(r.setrange, "h", 0, "x").startswith("WRONGTYPE")


def test_size_limit_follows_proto_max_bulk_len(r):
    saved = r.config_get("proto-max-bulk-len")["proto-max-bulk-len"]
    r.config_set("proto-max-bulk-len", 1024 * 1024)
    try:
        r.set("k", "x" * (1024 * 1024 - 1))
        assert r.append("k", "y") == 1024 * 1024
        assert err(r.append, "k", "z") == \
            "string exceeds maximum allowed size (proto-max-bulk-len)"
        assert err(r.setrange, "k2", 1024 * 1024, "z") == \
            "string exceeds maximum allowed size (proto-max-bulk-len)"
        assert r.strlen("k") == 1024 * 1024
    finally:
        r.config_set("proto-max-bulk-len", saved)


# --- counters ----------------------------------------------------------------------------

def test_incr_decr_family(r):
    assert r.incr("c") == 1
    assert r.incrby("c", 10) == 11
    assert r.decr("c") == 10
    assert r.decrby("c", -5) == 15
    assert r.get("c") == b"15"
    r.set("t", "5", ex=100)
    r.incr("t")
    assert 99 <= r.ttl("t") <= 100  # counters keep the TTL


def test_incr_decr_commands_and_signed_steps(call):
    # redis-py's incr() and decr() send INCRBY and DECRBY: the one-step commands need
    # their own calls.
    assert call("INCR", "c") == 1
    assert call("INCR", "c") == 2
    assert call("DECR", "c") == 1
    assert call("DECR", "d") == -1
    assert call("INCRBY", "c", "-3") == -2
    assert call("DECRBY", "c", "4") == -6
    assert call("GET", "c") == b"-6"


@pytest.mark.parametrize("start, args, expected", [
    (LLONG_MAX - 1, ["INCR"], LLONG_MAX),
    (-LLONG_MAX, ["DECR"], -LLONG_MAX - 1),
    (0, ["INCRBY", str(LLONG_MAX)], LLONG_MAX),
    (-1, ["INCRBY", str(-LLONG_MAX)], -LLONG_MAX - 1),
    (-1, ["DECRBY", str(LLONG_MAX)], -LLONG_MAX - 1),
])
def test_counters_reach_the_int64_limits(r, call, start, args, expected):
    r.set("c", start)
    assert call(args[0], "c", *args[1:]) == expected
    assert r.get("c") == str(expected).encode()


@pytest.mark.parametrize("value", ["abc", " 1", "1 ", "01", "-0", "1.0", "+1", "",
                                   "99999999999999999999"])
def test_incr_rejects_non_integers(r, value):
    r.set("c", value)
    assert err(r.incr, "c") == "value is not an integer or out of range"
    assert r.get("c") == value.encode()


def test_incr_overflow(r):
    r.set("c", LLONG_MAX)
    assert err(r.incr, "c") == "increment or decrement would overflow"
    r.set("c", -LLONG_MAX - 1)
    assert err(r.decr, "c") == "increment or decrement would overflow"
    assert err(cmd, r, "DECRBY", "c", str(-LLONG_MAX - 1)) == "decrement would overflow"
    assert err(cmd, r, "INCRBY", "c", "abc") == "value is not an integer or out of range"
    assert err(cmd, r, "INCRBY", "c", "9223372036854775808") == \
        "value is not an integer or out of range"
    r.hset("h", "f", "v")
    assert err(r.incr, "h").startswith("WRONGTYPE")


@pytest.mark.parametrize("start,incr,expected", [
    ("10.5", "0.1", b"10.6"),
    (None, "0.1", b"0.1"),
    ("0.1", "0.2", b"0.3"),
    ("5.0e3", "2.0e2", b"5200"),
    ("3", "-3", b"0"),
    ("1", "-1.5", b"-0.5"),
    ("17179869184", "1.5", b"17179869185.5"),
    ("1", "1e-20", b"1"),
    (None, ".5", b"0.5"),
    (None, "1.", b"1"),
    (None, "-0.000000000000000001", b"0"),
    # Past 2**64 a long double keeps 64 bits: halfway cases round to the even neighbour.
    (None, "18446744073709551617", b"18446744073709551616"),
    (None, "18446744073709551619", b"18446744073709551620"),
    # Exactly halfway at the 17th decimal (3 / 2**18): printf rounds to even.
    (None, "0.000011444091796875", b"0.00001144409179688"),
    (None, "-0x10", b"-16"),
    (None, "+0x1p3", b"8"),
])
def test_incrbyfloat_formatting(r, call, start, incr, expected):
    if start is not None:
        r.set("f", start)
    assert call("INCRBYFLOAT", "f", incr) == expected
    assert r.get("f") == expected


def test_incrbyfloat_errors(r):
    r.set("f", "abc")
    assert err(r.incrbyfloat, "f", 1) == "value is not a valid float"
    r.set("f", "1")
    for bad in ("abc", " 1", "1 ", "nan", "", "1e5000"):
        assert err(cmd, r, "INCRBYFLOAT", "f", bad) == "value is not a valid float", bad
    assert err(cmd, r, "INCRBYFLOAT", "f", "inf") == "increment would produce NaN or Infinity"
    assert err(cmd, r, "INCRBYFLOAT", "f", "-inf") == "increment would produce NaN or Infinity"
    for spelled in ("infinity", "-Infinity", "+INF"):
        assert err(cmd, r, "INCRBYFLOAT", "f", spelled) == \
            "increment would produce NaN or Infinity", spelled
    r.set("f", "inf")
    assert err(cmd, r, "INCRBYFLOAT", "f", "1") == "increment would produce NaN or Infinity"
    r.set("f", "1e4932")  # finite, but twice it is past the long double range
    assert err(cmd, r, "INCRBYFLOAT", "f", "1e4932") == \
        "increment would produce NaN or Infinity"
    assert err(cmd, r, "INCRBYFLOAT", "f", "1." + "0" * 5118) == "value is not a valid float"
    assert r.get("f") == b"1e4932"
    r.hset("h", "f", "v")
    assert err(r.incrbyfloat, "h", 1).startswith("WRONGTYPE")


@pytest.mark.parametrize("value,expected", [
    ("1e39223372036854775807", None), ("0e39223372036854775807", b"0"),
    ("1e999999999", None), ("1e-999999999", None), ("1e4933", None), ("1e-4960", None),
    ("1" * 5120, None), ("0x10", b"16"), ("0x10 ", None),
    # The smallest subnormal is about 3.6e-4951: 2e-4951 rounds up to it, 1e-4951 rounds to
    # zero, which strtold reports as an underflow.
    ("2e-4951", b"0"), ("1e-4951", None),
    # 5119 characters are read, 5120 refused unread.
    ("1." + "0" * 5117, b"1"), ("1." + "0" * 5118, None),
])
def test_incrbyfloat_extreme_stored_values(r, call, value, expected):
    # An APPEND can leave "1e3" + "9223372036854775807" behind: refused at once, not
    # evaluated digit by digit.
    r.set("f", value)
    if expected is None:
        assert err(cmd, r, "INCRBYFLOAT", "f", "0") == "value is not a valid float"
    else:
        assert call("INCRBYFLOAT", "f", "0") == expected


def test_incrbyfloat_prints_every_integer_digit(r, call):
    # %.17Lf of a value near the long double maximum: 4933 digits, no exponent.
    text = call("INCRBYFLOAT", "f", "1e4932")
    assert len(text) == 4933 and text.startswith(b"10000000000000000000060189")
    assert r.get("f") == text


def test_float_and_integer_reply_types_in_resp3(call):
    # INCRBYFLOAT answers with a bulk string even in RESP3, never a double.
    assert call.resp3("INCRBYFLOAT", "f", "1.5") == b"1.5"
    reply = call.resp3("SETNX", "n", "1")
    assert type(reply) is int and reply == 1


@pytest.mark.parametrize("value, expected", [
    ("0x1.0000000000000008p60", b"1152921504606846976.5"),  # 62 bits: past a double's 53
    ("0x1p1100", str(2**1100).encode()),  # past a double's range, inside a long double's
    ("0x1.8p-16446", b"0"),  # rounds up to the smallest subnormal
    ("0x1p-16446", None),  # halfway to it: rounds to zero, an underflow
    ("0x1p16384", None),
    ("0x1p-99999999999999999999", None), ("0x0p99999999999999999999", b"0"),
    ("0x.8", b"0.5"), ("0X1P+2", b"4"), ("0x1p-0000000000001", b"0.5"),
    ("0x", None), ("0xp1", None), ("0x1p", None),
])
@pytest.mark.parametrize("role", ["increment", "stored"])
def test_incrbyfloat_reads_hex_as_long_double(r, call, value, expected, role):
    if role == "stored":
        r.set("f", value)
        args = ("INCRBYFLOAT", "f", "0")
    else:
        args = ("INCRBYFLOAT", "f", value)
    if expected is None:
        assert err(cmd, r, *args) == "value is not a valid float"
    else:
        assert call(*args) == expected


def test_incrbyfloat_keeps_ttl(r):
    r.set("f", "1", ex=100)
    r.incrbyfloat("f", 1)
    assert 99 <= r.ttl("f") <= 100


# --- WRONGTYPE ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["GET", "h"], ["GETDEL", "h"], ["GETEX", "h"], ["APPEND", "h", "x"], ["STRLEN", "h"],
    ["INCR", "h"], ["DECR", "h"], ["INCRBY", "h", "1"], ["DECRBY", "h", "1"],
    ["INCRBYFLOAT", "h", "1"], ["GETRANGE", "h", "0", "1"], ["SETRANGE", "h", "0", "x"],
    ["SETRANGE", "h", "0", ""], ["SETRANGE", "h", "5", ""],
    ["SET", "h", "v", "GET"],
])
def test_string_commands_on_a_hash(r, args):
    r.hset("h", "f", "v")
    assert err(cmd, r, *args) == \
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert r.hgetall("h") == {b"f": b"v"}


def test_connection_survives_errors(r):
    for _ in range(3):
        err(cmd, r, "SET", "k", "v", "EX", "0")
    assert r.ping() is True


# Each command with what it adds to rdb_changes_since_last_save, in order (checked against
# Redis 7.0.15): a write counts once per key written, a refused or empty one not at all.
_DIRTY_CASES = [
    (("APPEND", "a", "x"), 1), (("APPEND", "a", "y"), 1),
    (("SETRANGE", "b", "2", "x"), 1), (("SETRANGE", "b", "0", ""), 0),
    (("INCR", "c"), 1), (("DECRBY", "c", "3"), 1),
    (("INCRBYFLOAT", "f", "1.5"), 1), (("INCRBYFLOAT", "f", "1"), 1),
    (("GETEX", "a"), 0), (("GETEX", "a", "PERSIST"), 0), (("GETEX", "a", "EX", "100"), 1),
    (("GETEX", "a", "PERSIST"), 1), (("GETEX", "nokey", "EX", "100"), 0),
    (("GETDEL", "a"), 1), (("GETDEL", "a"), 0), (("GETSET", "g", "1"), 1),
    (("MSET", "m1", "1", "m2", "2", "m3", "3"), 3),
    (("MSETNX", "n1", "1", "n2", "2"), 2), (("MSETNX", "n1", "1", "n3", "3"), 0),
    (("SETNX", "n1", "x"), 0), (("SETNX", "s", "x"), 1), (("SET", "s", "y", "XX"), 1),
    # An expiry given with the value is part of the same change.
    (("SETEX", "s", "100", "v"), 1),
    (("PSETEX", "s", "100000", "v"), 1),
    (("SET", "s", "v", "NX", "EX", "10"), 0),
    (("SET", "s", "v", "GET", "EX", "10"), 1),
    (("SET", "t", "v", "XX", "PX", "10"), 0),
]


def test_dirty_counter_per_string_command(r):
    assert dirty_changes(r, [argv for argv, _ in _DIRTY_CASES]) == _DIRTY_CASES


# --- INCRBYFLOAT against a model of Redis's long double arithmetic -------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from streamd.commands.strings import incr_by_float  # noqa: E402

_decimal = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{'.' + frac if frac else ''}"
                                   f"{'e' + str(exp) if exp is not None else ''}",
    st.sampled_from(["", "-"]), st.integers(0, 10**12).map(str),
    st.text("0123456789", max_size=12), st.one_of(st.none(), st.integers(-30, 30)))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=_decimal, incr=_decimal)
def test_incrbyfloat_matches_long_double_model(r, call, base, incr):
    # Against Redis this checks the model; against streamd, that the command uses it.
    r.set("f", base)
    expected = incr_by_float(base.encode(), incr.encode(), "ERR value is not a valid float")
    assert call("INCRBYFLOAT", "f", incr) == expected


# --- INCREX (8.8; Redis 7.0 lacks it, so these follow redis.io and Redis's increx.tcl) ----

_88 = pytest.mark.min_redis("8.8")


@_88
def test_increx_default_byint_and_byfloat(r, call):
    assert call("INCREX", "k") == [1, 1]
    assert call("INCREX", "k") == [2, 1]
    assert call("INCREX", "k", "BYINT", "-10") == [-8, -10]
    assert call("INCREX", "k", "byint", "0") == [-8, 0]
    assert call("INCREX", "k", "BYFLOAT", "0.25") == [b"-7.75", b"0.25"]
    assert r.get("k") == b"-7.75"
    # Long double arithmetic and INCRBYFLOAT's digits.
    assert call("INCREX", "f", "BYFLOAT", "0.1") == [b"0.1", b"0.1"]
    assert call("INCREX", "f", "BYFLOAT", "0.2") == [b"0.3", b"0.2"]
    r.set("s", "1.5")
    assert err(cmd, r, "INCREX", "s", "BYINT", "1") == "value is not an integer or out of range"
    assert r.object("encoding", "k") == b"embstr"
    assert call("INCREX", "i", "BYINT", "2000000000") == [2000000000, 2000000000]
    assert r.object("encoding", "i") == b"int"


@_88
def test_increx_bounds_without_saturate_change_nothing(r, call):
    r.set("k", "10", ex=100)
    assert call("INCREX", "k", "BYINT", "10", "UBOUND", "15", "EX", "500") == [10, 0]
    assert call("INCREX", "k", "BYINT", "-10", "LBOUND", "5") == [10, 0]
    assert r.get("k") == b"10" and 90 < r.ttl("k") <= 100
    assert call("INCREX", "k", "BYINT", "5", "UBOUND", "15") == [15, 5]  # exactly the bound
    # A value already outside the bounds: refused unless the result comes back inside.
    r.set("k", "50")
    assert call("INCREX", "k", "BYINT", "5", "UBOUND", "30") == [50, 0]
    assert call("INCREX", "k", "BYINT", "-25", "UBOUND", "30") == [25, -25]
    # A missing key is not created.
    assert call("INCREX", "n", "BYINT", "15", "UBOUND", "10") == [0, 0]
    assert call("INCREX", "n", "BYFLOAT", "15.5", "UBOUND", "10") == [b"0", b"0"]
    assert call("INCREX", "n", "BYINT", "5", "LBOUND", "10") == [0, 0]
    assert r.exists("n") == 0
    r.set("f", "10.0")
    assert call("INCREX", "f", "BYFLOAT", "10", "UBOUND", "15.5") == [b"10", b"0"]
    assert r.get("f") == b"10.0"


@_88
def test_increx_saturate(r, call):
    r.set("k", "50")
    assert call("INCREX", "k", "BYINT", "100", "UBOUND", "80", "SATURATE") == [80, 30]
    assert call("INCREX", "k", "SATURATE", "BYINT", "-100", "LBOUND", "0") == [0, -80]
    r.set("k", "50")  # above the bound already: clamped to it
    assert call("INCREX", "k", "BYINT", "5", "UBOUND", "30", "SATURATE") == [30, -20]
    r.set("k", "-50")
    assert call("INCREX", "k", "BYINT", "-5", "LBOUND", "-30", "SATURATE") == [-30, 20]
    r.set("f", "10")
    assert call("INCREX", "f", "BYFLOAT", "100", "UBOUND", "42.5", "SATURATE") == \
        [b"42.5", b"32.5"]
    assert r.get("f") == b"42.5"
    assert call("INCREX", "g", "BYFLOAT", "-100", "LBOUND", "-5.5", "SATURATE") == \
        [b"-5.5", b"-5.5"]


@_88
def test_increx_int64_limits(r, call):
    r.set("k", "9223372036854775800")
    assert call("INCREX", "k", "BYINT", "9223372036854775800") == [9223372036854775800, 0]
    assert r.get("k") == b"9223372036854775800"
    assert call("INCREX", "k", "BYINT", "9223372036854775800", "SATURATE") == [LLONG_MAX, 7]
    assert call("INCREX", "k", "SATURATE") == [LLONG_MAX, 0]
    r.set("k", "-9223372036854775800")
    assert call("INCREX", "k", "BYINT", "-9223372036854775800", "LBOUND",
                "-9223372036854775808", "SATURATE") == [-LLONG_MAX - 1, -8]
    r.set("k", "9223372036854775800")
    assert err(cmd, r, "INCREX", "k", "BYINT", "1", "SATURATE", "UBOUND",
               "-9223372036854775808") == "applied increment would overflow"
    assert r.get("k") == b"9223372036854775800"
    # Past the long double range is past BYFLOAT's type limits.
    r.set("f", "1e4932")
    assert call("INCREX", "f", "BYFLOAT", "1e4932")[1] == b"0"
    assert r.get("f") == b"1e4932"
    top = call("INCREX", "f", "BYFLOAT", "1e4932", "SATURATE")[0]
    assert top.startswith(b"1189731495357231765") and len(top) == 4933


@_88
def test_increx_expiry_options(r, call):
    assert call("INCREX", "k", "EX", "100") == [1, 1]
    assert 99 <= r.ttl("k") <= 100
    assert call("INCREX", "k") == [2, 1]  # no option keeps the TTL
    assert 99 <= r.ttl("k") <= 100
    call("INCREX", "k", "PX", "50000")
    assert 49000 < r.pttl("k") <= 50000
    at = int(time.time()) + 300
    call("INCREX", "k", "EXAT", str(at))
    assert r.expiretime("k") == at
    call("INCREX", "k", "PXAT", str(at * 1000 + 500))
    assert r.pexpiretime("k") == at * 1000 + 500
    assert call("INCREX", "k", "BYINT", "1", "PERSIST") == [6, 1]
    assert r.ttl("k") == -1
    assert call("INCREX", "k", "PERSIST") == [7, 1]
    assert r.ttl("k") == -1
    # A time already past deletes the key.
    assert call("INCREX", "k", "EXAT", "1") == [8, 1]
    assert r.exists("k") == 0


@_88
def test_increx_enx(r, call):
    r.set("k", "10")
    assert call("INCREX", "k", "BYINT", "1", "EX", "100", "ENX") == [11, 1]
    assert 99 <= r.ttl("k") <= 100
    assert call("INCREX", "k", "ENX", "EX", "10") == [12, 1]
    assert 99 <= r.ttl("k") <= 100
    assert call("INCREX", "k", "PXAT", "1", "ENX") == [13, 1]  # not set, so nothing expires
    assert r.get("k") == b"13"
    assert call("INCREX", "new", "BYINT", "5", "EX", "100", "ENX") == [5, 5]
    assert 99 <= r.ttl("new") <= 100


@_88
@pytest.mark.parametrize("args, message", [
    ((), "wrong number of arguments for 'increx' command"),
    (("k", "FOO"), "syntax error"),
    (("k", "BYINT"), "syntax error"),
    (("k", "SAT"), "syntax error"),
    (("k", "BYINT", "1", "BYFLOAT", "1.5"), "syntax error"),
    (("k", "BYFLOAT", "1.5", "BYINT", "1"), "syntax error"),
    (("k", "BYINT", "1", "BYINT", "2"), "syntax error"),
    (("k", "LBOUND", "0", "LBOUND", "1"), "syntax error"),
    (("k", "SATURATE", "SATURATE"), "syntax error"),
    (("k", "EX", "10", "EX", "20"), "syntax error"),
    (("k", "EX", "10", "PX", "5000"), "syntax error"),
    (("k", "PERSIST", "EX", "10"), "syntax error"),
    (("k", "EX", "10", "PERSIST"), "syntax error"),
    (("k", "PERSIST", "PERSIST"), "syntax error"),
    (("k", "PERSIST", "ENX"), "syntax error"),
    (("k", "ENX", "PERSIST"), "syntax error"),
    (("k", "ENX", "ENX", "EX", "10"), "syntax error"),
    (("k", "ENX"), "ENX flag requires an expiration"),
    (("k", "BYINT", "1", "ENX"), "ENX flag requires an expiration"),
    (("k", "BYINT", "abc"), "Increment is not an integer or out of range"),
    (("k", "BYINT", "1.5"), "Increment is not an integer or out of range"),
    (("k", "BYFLOAT", "abc"), "Increment is not a valid float"),
    (("k", "BYFLOAT", "+inf"), "BYFLOAT increment cannot be Infinity"),
    (("k", "BYFLOAT", "-inf"), "BYFLOAT increment cannot be Infinity"),
    (("k", "LBOUND", "1.5"), "LBOUND is not an integer or out of range"),
    (("k", "UBOUND", "x"), "UBOUND is not an integer or out of range"),
    (("k", "BYFLOAT", "1", "LBOUND", "abc"), "LBOUND is not a valid float"),
    (("k", "BYFLOAT", "1", "UBOUND", "abc"), "UBOUND is not a valid float"),
    (("k", "LBOUND", "10", "UBOUND", "5"), "LBOUND can't be greater than UBOUND"),
    (("k", "BYFLOAT", "0.5", "LBOUND", "10.5", "UBOUND", "1.5"),
     "LBOUND can't be greater than UBOUND"),
    (("k", "EX", "0"), "invalid expire time in 'increx' command"),
    (("k", "PX", "-1"), "invalid expire time in 'increx' command"),
    (("k", "EX", "x"), "value is not an integer or out of range"),
])
def test_increx_errors(r, args, message):
    r.set("k", "5")
    assert err(cmd, r, "INCREX", *args) == message
    assert r.get("k") == b"5" and r.ttl("k") == -1


@_88
def test_increx_wrong_values(r):
    r.hset("l", "f", "a")
    for args in ((), ("BYINT", "1"), ("BYFLOAT", "1.5")):
        assert err(cmd, r, "INCREX", "l", *args).startswith("WRONGTYPE")
    r.set("s", "hello")
    assert err(cmd, r, "INCREX", "s") == "value is not an integer or out of range"
    assert err(cmd, r, "INCREX", "s", "BYFLOAT", "1") == "value is not a valid float"
    r.set("s", "inf")
    assert err(cmd, r, "INCREX", "s", "BYFLOAT", "1") == "value cannot be Infinity"
    assert r.get("s") == b"inf"


@_88
def test_increx_reply_types_in_resp3(call):
    reply = call.resp3("INCREX", "i", "BYINT", "3")
    assert reply == [3, 3] and all(type(x) is int for x in reply)
    assert call.resp3("INCREX", "f", "BYFLOAT", "1.5") == [1.5, 1.5]  # doubles
    assert call.resp3("INCREX", "f", "BYFLOAT", "1", "UBOUND", "2") == [1.5, 0.0]
    assert call("INCREX", "f", "BYFLOAT", "0.25") == [b"1.75", b"0.25"]  # RESP2: bulk


@_88
def test_increx_in_multi(r):
    p = r.pipeline()
    p.execute_command("INCREX", "k", "BYINT", "5", "EX", "100")
    p.execute_command("INCREX", "k", "BYINT", "10", "UBOUND", "12")
    p.execute_command("INCREX", "k", "BYINT", "10", "UBOUND", "12", "SATURATE")
    p.execute_command("INCREX", "k", "ENX")
    r.response_callbacks.pop("INCREX", None)
    out = p.execute(raise_on_error=False)
    assert [list(x) if isinstance(x, list) else type(x) for x in out] == \
        [[5, 5], [5, 0], [12, 7], redis.ResponseError]
    assert r.get("k") == b"12" and 99 <= r.ttl("k") <= 100


@_88
def test_increx_dirty(r):
    r.set("k", "5", ex=100)
    assert dirty_changes(r, [
        ("INCREX", "k"), ("INCREX", "k", "EX", "100"), ("INCREX", "k", "PERSIST"),
        ("INCREX", "k", "UBOUND", "0"), ("INCREX", "k", "BYFLOAT", "1"),
        ("INCREX", "n", "BYINT", "1", "UBOUND", "0"),
    ]) == [(("INCREX", "k"), 1), (("INCREX", "k", "EX", "100"), 1),
           (("INCREX", "k", "PERSIST"), 1), (("INCREX", "k", "UBOUND", "0"), 0),
           (("INCREX", "k", "BYFLOAT", "1"), 1),
           (("INCREX", "n", "BYINT", "1", "UBOUND", "0"), 0)]


@_88
def test_increx_command_docs(call):
    docs = call.resp3("COMMAND", "DOCS", "increx")[b"increx"]
    assert docs[b"since"] == b"8.8.0" and docs[b"group"] == b"string"
    names = [a[b"name"] for a in docs[b"arguments"]]
    assert names == [b"key", b"increment", b"saturate", b"lowerbound", b"upperbound",
                     b"expiration", b"enx"]
    info = call("COMMAND", "INFO", "increx")[0]
    assert info[1] == -2 and info[3:6] == [1, 1, 1]
    assert set(info[2]) == {b"write", b"denyoom", b"fast"}
