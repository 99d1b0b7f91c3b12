"""The string commands Redis 8.4 added: SET's IFEQ / IFNE / IFDEQ / IFDNE conditions,
DIGEST, DELEX and MSETEX.

There is no 8.4 server here to record from: the expected replies follow redis.io's pages
for these commands, Redis's own tests (tests/unit/type/string.tcl) and its source
(t_string.c, db.c). Every test is marked min_redis("8.4"), so it is skipped against the
Redis 7.0 the suite can also run against.
"""

from __future__ import annotations

import time

import pytest
import redis
import xxhash

from tests.conftest import dirty_changes, watch_broken

pytestmark = [pytest.mark.min_redis("8.4"),
              # redis-py 8.1 calls its methods for these commands experimental
              pytest.mark.filterwarnings("ignore:Call to:UserWarning")]

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


# --- SET IFEQ / IFNE / IFDEQ / IFDNE -----------------------------------------------------

def test_set_ifeq_ifne(r):
    r.set("k", "hello")
    assert cmd(r, "SET", "k", "world", "IFEQ", "hello") is True
    assert r.get("k") == b"world"
    assert cmd(r, "SET", "k", "x", "IFEQ", "hello") is None
    assert cmd(r, "SET", "k", "x", "IFNE", "world") is None
    assert r.get("k") == b"world"
    assert cmd(r, "SET", "k", "x", "ifne", "other") is True
    assert r.get("k") == b"x"
    # A missing key: not equal to anything, so IFEQ never creates it and IFNE always does.
    assert cmd(r, "SET", "new", "v", "IFEQ", "v") is None
    assert r.exists("new") == 0
    assert cmd(r, "SET", "new", "v", "IfNe", "v") is True
    assert r.get("new") == b"v"
    # The empty string is a value like any other.
    r.set("e", "")
    assert cmd(r, "SET", "e", "v", "IFNE", "") is None
    assert cmd(r, "SET", "e", "v", "IFEQ", "") is True


def test_set_ifeq_compares_a_string_edited_in_place(r):
    r.set("k", "12")
    r.append("k", "34")
    assert cmd(r, "SET", "k", "x", "IFEQ", "123") is None
    assert cmd(r, "SET", "k", "x", "IFEQ", "1234") is True
    r.set("n", "12345")  # an integer-looking string compares as its text
    assert cmd(r, "SET", "n", "x", "IFEQ", "12345") is True


def test_set_ifdeq_ifdne(r):
    r.set("k", "hello")
    d = digest(b"hello")
    other = digest(b"other")
    assert cmd(r, "SET", "k", "v1", "IFDEQ", other) is None
    assert cmd(r, "SET", "k", "v1", "IFDEQ", d) is True
    assert cmd(r, "SET", "k", "v2", "IFDNE", digest(b"v1")) is None
    assert cmd(r, "SET", "k", "v2", "IFDNE", other) is True
    # The hex digits compare without regard to case.
    assert cmd(r, "SET", "k", "v3", "IFDEQ", digest(b"v2").upper()) is True
    assert cmd(r, "SET", "k", "v4", "IFDNE", digest(b"v3").upper()) is None
    assert r.get("k") == b"v3"


def test_set_digest_must_have_16_characters(r):
    r.set("k", "v")
    d = digest(b"v").decode()
    for bad in (d[1:], "0" + d, ""):
        assert err(r, "SET", "k", "x", "IFDEQ", bad) == BAD_DIGEST
        assert err(r, "SET", "k", "x", "IFDNE", bad) == BAD_DIGEST
    assert r.get("k") == b"v"
    # Only the length is checked: 16 other characters are a digest that never matches.
    assert cmd(r, "SET", "k", "x", "IFDEQ", "zzzzzzzzzzzzzzzz") is None
    assert cmd(r, "SET", "k", "x", "IFDNE", "zzzzzzzzzzzzzzzz") is True
    # A missing key is decided before the digest is looked at.
    assert cmd(r, "SET", "m", "x", "IFDEQ", "123") is None
    assert cmd(r, "SET", "m", "x", "IFDNE", "123") is True
    assert r.get("m") == b"x"


def test_set_condition_with_get(r, wire):
    # GET replies with the old value whether or not the condition let the write through.
    r.set("k", "v1")
    assert wire("SET", "k", "v2", "IFEQ", "v1", "GET") == b"$2\r\nv1\r\n"
    assert wire("SET", "k", "v3", "GET", "IFEQ", "nope") == b"$2\r\nv2\r\n"
    assert r.get("k") == b"v2"
    assert wire("SET", "k", "v3", "IFDNE", digest(b"v2"), "GET") == b"$2\r\nv2\r\n"
    assert r.get("k") == b"v2"
    assert wire("SET", "new", "v", "IFNE", "x", "GET") == b"$-1\r\n"
    assert r.get("new") == b"v"
    assert wire("SET", "new2", "v", "IFEQ", "x", "GET") == b"$-1\r\n"
    assert r.exists("new2") == 0


def test_set_condition_with_expiry(r):
    r.set("k", "v", ex=1000)
    assert cmd(r, "SET", "k", "w", "IFEQ", "v", "EX", "100") is True
    assert 99 <= r.ttl("k") <= 100
    assert cmd(r, "SET", "k", "x", "IFEQ", "w", "KEEPTTL") is True
    assert 99 <= r.ttl("k") <= 100
    assert cmd(r, "SET", "k", "y", "PX", "5000", "IFEQ", "nope") is None  # nothing changes
    assert 99 <= r.ttl("k") <= 100
    assert cmd(r, "SET", "k", "y", "IFNE", "nope") is True  # a plain SET drops the TTL
    assert r.ttl("k") == -1
    # The expiry argument is checked before the key is looked at.
    assert err(r, "SET", "k", "z", "IFEQ", "nope", "EX", "0") == \
        "invalid expire time in 'set' command"


@pytest.mark.parametrize("args", [
    ["NX", "IFEQ", "v"], ["IFEQ", "v", "NX"], ["XX", "IFNE", "v"], ["IFDEQ", "0" * 16, "XX"],
    ["IFEQ", "a", "IFNE", "b"], ["IFDEQ", "0" * 16, "IFDNE", "0" * 16],
    ["IFEQ", "a", "IFDEQ", "0" * 16], ["IFEQ"], ["GET", "IFDNE"], ["IFEQX", "v"],
], ids=lambda a: "-".join(a)[:24])
def test_set_conditions_are_exclusive(r, args):
    r.set("k", "v")
    assert err(r, "SET", "k", "x", *args) == "syntax error"
    assert r.get("k") == b"v"
    assert cmd(r, "SET", "k", "x", "IFEQ", "v") is True  # one condition alone is taken


def test_set_condition_repeated_takes_the_last_value(r):
    r.set("k", "b")
    assert cmd(r, "SET", "k", "x", "IFEQ", "a", "IFEQ", "b") is True
    assert cmd(r, "SET", "k", "y", "IFEQ", "x", "IFEQ", "b") is None


def test_set_condition_on_another_type(r):
    r.hset("h", "f", "v")
    for args in (["IFEQ", "v"], ["IFNE", "v"], ["IFDEQ", "0" * 16], ["IFDNE", "short"],
                 ["IFEQ", "v", "GET"]):
        assert err(r, "SET", "h", "x", *args) == WRONGTYPE, args
    assert r.type("h") == b"hash"


def test_set_condition_lookups_count_as_reads(r):
    # Redis reads the current value for the comparison with a read lookup: a hit on an
    # existing key, on top of the one GET counts; a missing key is not read again.
    r.set("k", "v")
    assert counted(r, "SET", "k", "v", "IFEQ", "nope") == (1, 0)
    assert counted(r, "SET", "k", "v", "IFNE", "nope") == (1, 0)
    assert counted(r, "SET", "k", "v", "IFDEQ", "0" * 16, "GET") == (2, 0)
    assert counted(r, "SET", "m", "v", "IFNE", "x") == (0, 0)
    assert counted(r, "SET", "m2", "v", "IFEQ", "x", "GET") == (0, 1)


def test_set_condition_events_watch_and_dirty(r, make_client):
    r.set("k", "v")
    assert dirty_changes(r, [("SET", "k", "w", "IFEQ", "nope"), ("SET", "k", "w", "IFEQ", "v"),
                             ("SET", "m", "v", "IFEQ", "x")]) == [
        (("SET", "k", "w", "IFEQ", "nope"), 0), (("SET", "k", "w", "IFEQ", "v"), 1),
        (("SET", "m", "v", "IFEQ", "x"), 0)]
    assert not watch_broken(make_client, "k", lambda: r.set("k", "x", ifeq="nope"))
    assert watch_broken(make_client, "k", lambda: r.set("k", "x", ifeq="w"))


def test_set_condition_key_flags(call):
    # The value is read for the comparison, not returned: RW without ACCESS (GET adds it).
    assert call("COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v", "IFEQ", "v") == \
        [[b"k", [b"RW", b"update"]]]
    assert call("COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v", "IFDNE", "d", "GET") == \
        [[b"k", [b"RW", b"access", b"update"]]]


# --- DELEX -------------------------------------------------------------------------------

def test_delex_without_condition_is_del(r):
    r.set("s", "v")
    r.hset("h", "f", "v")
    assert cmd(r, "DELEX", "s") == 1
    assert cmd(r, "DELEX", "h") == 1  # any type
    assert cmd(r, "DELEX", "s") == 0
    assert r.exists("s", "h") == 0


def test_delex_conditions(r):
    r.set("k", "hello")
    assert cmd(r, "DELEX", "k", "IFEQ", "world") == 0
    assert cmd(r, "DELEX", "k", "IFNE", "hello") == 0
    assert cmd(r, "DELEX", "k", "IFDEQ", digest(b"world")) == 0
    assert cmd(r, "DELEX", "k", "IFDNE", digest(b"hello").upper()) == 0
    assert r.get("k") == b"hello"
    assert cmd(r, "DELEX", "k", "ifeq", "hello") == 1
    for args in (["IFNE", "x"], ["IFDEQ", digest(b"hello")], ["IfDnE", digest(b"x")]):
        r.set("k", "hello")
        assert cmd(r, "DELEX", "k", *args) == 1, args
        assert r.exists("k") == 0
    for args in (["IFEQ", "x"], ["IFNE", "x"], ["IFDEQ", "0" * 16], ["IFDNE", "0" * 16]):
        assert cmd(r, "DELEX", "nokey", *args) == 0  # a missing key is never deleted


def test_delex_compares_a_string_edited_in_place(r):
    r.set("k", "ab")
    r.append("k", "cd")
    assert cmd(r, "DELEX", "k", "IFEQ", "abc") == 0
    assert cmd(r, "DELEX", "k", "IFDEQ", digest(b"abcd")) == 1


def test_delex_errors(r):
    r.set("k", "v")
    arity = "wrong number of arguments for 'delex' command"
    assert err(r, "DELEX") == arity
    assert err(r, "DELEX", "k", "IFEQ") == arity
    assert err(r, "DELEX", "nokey", "IFEQ") == arity  # checked before the key is looked up
    assert err(r, "DELEX", "k", "IFEQ", "v", "extra") == arity
    assert err(r, "DELEX", "k", "IFDEQ", "123") == BAD_DIGEST
    assert err(r, "DELEX", "k", "IFDNE", "0" * 17) == BAD_DIGEST
    assert err(r, "DELEX", "k", "IF", "v") == "Invalid condition"
    # The key comes before the condition word: missing is 0, another type an error.
    assert cmd(r, "DELEX", "nokey", "IF", "v") == 0
    assert cmd(r, "DELEX", "nokey", "IFDEQ", "123") == 0
    r.xadd("l", {"f": "v"})
    for args in (["IFEQ", "v"], ["IFDNE", "x"], ["IF", "v"]):
        assert err(r, "DELEX", "l", *args) == \
            "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert r.get("k") == b"v" and r.exists("l") == 1


def test_delex_with_condition_counts_as_a_read(r):
    r.set("k", "v")
    assert counted(r, "DELEX", "k", "IFEQ", "x") == (1, 0)
    assert counted(r, "DELEX", "nokey", "IFEQ", "x") == (0, 1)
    assert counted(r, "DELEX", "k") == (0, 0)


def test_delex_events_watch_and_dirty(r, make_client):
    r.set("k", "v")
    assert dirty_changes(r, [("DELEX", "k", "IFEQ", "x"), ("DELEX", "k", "IFEQ", "v"),
                             ("DELEX", "k")]) == [
        (("DELEX", "k", "IFEQ", "x"), 0), (("DELEX", "k", "IFEQ", "v"), 1),
        (("DELEX", "k"), 0)]
    r.set("k", "v")
    assert not watch_broken(make_client, "k", lambda: cmd(r, "DELEX", "k", "IFNE", "v"))
    assert watch_broken(make_client, "k", lambda: cmd(r, "DELEX", "k", "IFEQ", "v"))


def test_delex_key_flags(call):
    assert call("COMMAND", "GETKEYSANDFLAGS", "DELEX", "k") == [[b"k", [b"RM", b"delete"]]]
    assert call("COMMAND", "GETKEYSANDFLAGS", "DELEX", "k", "IFEQ", "v") == \
        [[b"k", [b"RW", b"delete"]]]


# --- MSETEX ------------------------------------------------------------------------------

def test_msetex_sets_every_pair(r):
    r.set("a", "old", ex=100)
    r.hset("h", "f", "v")
    assert cmd(r, "MSETEX", "3", "a", "1", "b", "2", "h", "3") == 1
    assert r.mget("a", "b", "h") == [b"1", b"2", b"3"]  # any type is overwritten
    assert r.ttl("a") == -1  # as MSET: the old TTL goes
    assert cmd(r, "MSETEX", "2", "a", "x", "a", "y") == 1  # the last value wins
    assert r.get("a") == b"y"


@pytest.mark.parametrize("opt, arg, low, high", [
    ("EX", lambda: "100", 99_000, 100_000),
    ("PX", lambda: "100000", 99_000, 100_000),
    ("EXAT", lambda: str(int(time.time()) + 100), 98_000, 100_000),
    ("PXAT", lambda: str(int(time.time() * 1000) + 100_000), 99_000, 100_000),
])
def test_msetex_expiry(r, opt, arg, low, high):
    assert cmd(r, "MSETEX", "2", "a", "1", "b", "2", opt, arg()) == 1
    for k in ("a", "b"):
        assert low <= r.pttl(k) <= high


def test_msetex_keepttl(r):
    r.set("a", "old", ex=100)
    assert cmd(r, "MSETEX", "2", "a", "1", "b", "2", "KEEPTTL") == 1
    assert 99 <= r.ttl("a") <= 100
    assert r.ttl("b") == -1
    assert r.mget("a", "b") == [b"1", b"2"]


def test_msetex_nx_xx(r):
    r.set("a", "old")
    assert cmd(r, "MSETEX", "2", "a", "1", "b", "2", "NX") == 0
    assert cmd(r, "MSETEX", "2", "a", "1", "b", "2", "XX", "EX", "10") == 0
    assert r.mget("a", "b") == [b"old", None]
    assert r.ttl("a") == -1
    assert cmd(r, "MSETEX", "2", "b", "1", "c", "2", "EX", "10", "NX") == 1
    assert cmd(r, "MSETEX", "2", "a", "x", "b", "y", "xx") == 1
    assert r.mget("a", "b", "c") == [b"x", b"y", b"2"]


@pytest.mark.parametrize("args, error", [
    (["x", "a", "1"], "invalid numkeys value"),
    (["0", "a", "1"], "invalid numkeys value"),
    (["-1", "a", "1"], "invalid numkeys value"),
    (["2147483648", "a", "1"], "invalid numkeys value"),
    (["2147483647", "a", "1"], "wrong number of key-value pairs"),
    (["2", "a", "1", "b"], "wrong number of key-value pairs"),
    (["2", "a", "1", "b", "2", "3"], "syntax error"),
    (["1", "a", "1", "FOO"], "syntax error"),
    (["1", "a", "1", "NX", "XX"], "syntax error"),
    (["1", "a", "1", "EX", "10", "PX", "10"], "syntax error"),
    (["1", "a", "1", "KEEPTTL", "EX", "10"], "syntax error"),
    (["1", "a", "1", "GET"], "syntax error"),
    (["1", "a", "1", "IFEQ", "1"], "syntax error"),
    (["1", "a", "1", "EX"], "syntax error"),
    (["1", "a", "1", "EX", "0"], "invalid expire time in 'msetex' command"),
    (["1", "a", "1", "PX", "abc"], "value is not an integer or out of range"),
    (["1", "a"], "wrong number of arguments for 'msetex' command"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_msetex_errors(r, args, error):
    assert err(r, "MSETEX", *args) == error
    assert r.exists("a") == 0


def test_msetex_lookups_events_and_dirty(r, make_client):
    r.set("a", "old")
    # Redis checks XX with read lookups (it stops at the first missing key), NX with
    # write lookups that count nothing.
    assert counted(r, "MSETEX", "3", "a", "1", "m", "2", "n", "3", "XX") == (1, 1)
    assert counted(r, "MSETEX", "2", "a", "1", "m", "2", "NX") == (0, 0)
    assert dirty_changes(r, [("MSETEX", "2", "a", "1", "b", "2", "EX", "10"),
                             ("MSETEX", "2", "a", "1", "c", "2", "NX")]) == [
        (("MSETEX", "2", "a", "1", "b", "2", "EX", "10"), 2),
        (("MSETEX", "2", "a", "1", "c", "2", "NX"), 0)]
    assert watch_broken(make_client, "b", lambda: cmd(r, "MSETEX", "1", "b", "x"))


def test_msetex_command_info_and_getkeys(call):
    info = call.resp3("COMMAND", "INFO", "MSETEX")[0]
    assert info[:2] == [b"msetex", -4] and info[3:6] == [0, 0, 0]
    assert set(info[2]) == {b"write", b"denyoom", b"movablekeys"}
    spec = info[8][0]
    spec[b"flags"] = set(spec[b"flags"])
    assert info[8] == [{b"flags": {b"OW", b"update"},
                        b"begin_search": {b"type": b"index", b"spec": {b"index": 1}},
                        b"find_keys": {b"type": b"keynum", b"spec": {
                            b"keynumidx": 0, b"firstkey": 1, b"keystep": 2}}}]
    assert call("COMMAND", "GETKEYS", "MSETEX", "2", "a", "1", "b", "2", "EX", "1") == \
        [b"a", b"b"]
    for bad in ("3", "x", "0"):
        with pytest.raises(RE, match="Invalid arguments specified for command"):
            call("COMMAND", "GETKEYS", "MSETEX", bad, "a", "1", "b", "2")


# --- through redis-py's own methods ------------------------------------------------------

def test_redis_py_methods(r):
    r.set("k", "hello")
    d = r.digest("k")
    assert d == digest(b"hello")
    assert r.set("k", "world", ifeq="hello") is True
    assert r.set("k", "x", ifdeq=d) is None
    assert r.set("k", "x", ifdne=d, get=True) == b"world"
    assert r.delex("k", ifne="x") == 0
    assert r.delex("k", ifdeq=r.digest("k")) == 1
    assert r.msetex({"a": 1, "b": 2}, ex=50) == 1
    assert 49 <= r.ttl("b") <= 50
    assert r.msetex({"a": 3, "c": 4}, data_persist_option=redis.commands.core
                    .DataPersistOptions.NX) == 0
    assert r.mget("a", "c") == [b"1", None]
