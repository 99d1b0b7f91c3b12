"""Generic key commands, checked against Redis's replies and error texts."""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import dirty, dirty_changes, encode_request, watch_broken, error_text as err


@pytest.fixture
def streams(r):
    """Skips until the stream commands are registered (they land separately)."""
    try:
        r.execute_command("XLEN", "__probe__")
    except redis.ResponseError as exc:
        if "unknown command" in str(exc):
            pytest.skip("stream commands not available on this target")
    return r



# --- existence and deletion --------------------------------------------------------------

def test_del_unlink_count_only_existing_keys(r):
    r.mset({"a": 1, "b": 2, "c": 3})
    r.hset("h", "f", "v")
    assert r.delete("a", "a", "nokey", "h") == 2
    assert r.unlink("b", "c", "nokey") == 2
    assert r.dbsize() == 0


def test_exists_counts_repeats_and_touch_counts_existing(r):
    r.set("a", 1)
    assert r.exists("a", "a", "nokey") == 2
    assert r.touch("a", "a", "nokey") == 2
    assert r.exists("nokey") == 0


def test_type_names_are_status_replies(r, call):
    r.set("s", "x")
    r.hset("h", "f", "v")
    assert call("TYPE", "s") == b"string"
    assert call("TYPE", "h") == b"hash"
    assert call("TYPE", "nokey") == b"none"
    assert call.resp3("TYPE", "h") == b"hash"


def test_type_and_object_help_send_status_lines(r, raw):
    # redis-py reads simple and bulk strings alike: only the bytes tell them apart.
    r.set("s", "x")
    c = raw()
    for argv, reply in ((("TYPE", "s"), b"+string\r\n"), (("TYPE", "nokey"), b"+none\r\n")):
        c.send(encode_request(*argv))
        assert c.read_reply() == reply
    c.send(encode_request("OBJECT", "HELP"))
    assert c.read_reply().startswith(b"*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]")


def test_type_of_stream(streams, r, call):
    r.xadd("st", {"f": "v"})
    assert call("TYPE", "st") == b"stream"


def test_arity_errors(r):
    assert err(r.execute_command, "DEL") == "wrong number of arguments for 'del' command"
    assert err(r.execute_command, "RENAME", "a") == \
        "wrong number of arguments for 'rename' command"
    assert err(r.execute_command, "EXPIRE", "a") == \
        "wrong number of arguments for 'expire' command"


# --- KEYS / SCAN / RANDOMKEY -------------------------------------------------------------

def test_keys_glob_patterns(r):
    r.mset({"hello": 1, "hallo": 1, "hxllo": 1, "hllo": 1, "heeeello": 1, "a*b": 1})
    assert sorted(r.keys("*")) == sorted([b"hello", b"hallo", b"hxllo", b"hllo",
                                          b"heeeello", b"a*b"])
    assert sorted(r.keys("h?llo")) == [b"hallo", b"hello", b"hxllo"]
    assert sorted(r.keys("h*llo")) == [b"hallo", b"heeeello", b"hello", b"hllo", b"hxllo"]
    assert sorted(r.keys("h[ae]llo")) == [b"hallo", b"hello"]
    assert sorted(r.keys("h[^e]llo")) == [b"hallo", b"hxllo"]
    assert sorted(r.keys("h[a-b]llo")) == [b"hallo"]
    assert r.keys("a\\*b") == [b"a*b"]
    assert r.keys("nomatch*") == []


_GLOB_KEYS = [b"a", b"b", b"c", b"A", b"-", b"]", b"[", b"\\", b"^", b"ab", b"a]", b"a\\",
              b"\x00", b"\x80", b"\xff"]
# Redis's stringmatchlen on the corners: classes that close at once or never, escapes in
# and out of classes, a trailing backslash, reversed ranges, and range ends compared as
# signed C chars (bytes from 0x80 sort below 0x00).
_GLOB_CASES = [
    (b'[a-c]', [b'a', b'b', b'c']),
    (b'[c-a]', [b'a', b'b', b'c']),
    (b'[^a-c]', [b'\x00', b'-', b'A', b'[', b'\\', b']', b'^', b'\x80', b'\xff']),
    (b'[\\]]', [b']']),
    (b'[\\]', [b']']),
    (b'[a-', [b'-', b'a']),
    (b'[!a]', [b'a']),  # '!' is no negation
    (b'[^\\', [b'\x00', b'-', b'A', b'[', b']', b'^', b'a', b'b', b'c', b'\x80', b'\xff']),
    (b'[]]', []),
    (b'[]a]', []),
    (b'[^]]', [b'a]']),
    (b'[[]', [b'[']),
    (b'[\\\\]', [b'\\']),
    (b'[a\\-c]', [b'-', b'a', b'c']),
    (b'[a-]', [b']', b'^', b'a']),
    (b'[-a]', [b'-', b'a']),
    (b'[^]', [b'\x00', b'-', b'A', b'[', b'\\', b']', b'^', b'a', b'b', b'c', b'\x80', b'\xff']),
    (b'[', []),
    (b'[a', [b'a']),
    (b'a[', []),
    (b'a[]', []),
    (b'\\', [b'\\']),
    (b'a\\', [b'a\\']),
    (b'a\\\\', [b'a\\']),
    (b'\\a', [b'a']),
    (b'\\[', [b'[']),
    (b'a[\\', [b'a\\']),
    (b'[a-\\]', [b'\\', b']', b'^', b'a']),
    (b'[]-a]', []),
    (b'[a-\xff]', [b'\x00', b'-', b'A', b'[', b'\\', b']', b'^', b'a', b'\xff']),
    (b'[\x00-\x80]', [b'\x00', b'\x80', b'\xff']),
    (b'[\x80-\xff]', [b'\x80', b'\xff']),
    (b'[^\x80-b]', [b'c']),
    (b'[A-a]', [b'A', b'[', b'\\', b']', b'^', b'a']),
    (b'?]', [b'a]']),
    (b'*]', [b']', b'a]']),
    (b'*\\', [b'\\', b'a\\']),
    (b'[a-b-c]', [b'-', b'a', b'b', b'c']),
    (b'[a-c]?', [b'a\\', b'a]', b'ab']),
    (b'a*]', [b'a]']),
]


@pytest.mark.parametrize("pattern,expected", _GLOB_CASES)
def test_keys_glob_corners(r, pattern, expected):
    r.mset({k: 1 for k in _GLOB_KEYS})
    assert sorted(r.keys(pattern)) == expected
    cursor, found = r.scan(0, match=pattern, count=1000)
    assert cursor == 0 and sorted(found) == expected


def test_nocase_glob_folds_case_as_redis_does(r):
    # CONFIG GET matches names without case, but an escaped character inside a class
    # compares exactly, and a range is ordered before its ends are folded.
    assert r.config_get("[M]axmemory") != {}
    assert r.config_get("MAX[L-M]EMORY") != {}
    assert r.config_get("\\MAXMEMOR[Y]") != {}
    assert r.config_get("[\\M]axmemory") == {}
    assert r.config_get("[Z-a]axmemory") == {}
    assert r.config_get("[\\m]axmemory") != {}


def test_scan_full_iteration_returns_every_key_once(r):
    names = {f"key:{i}".encode() for i in range(500)}
    r.mset({n: 1 for n in names})
    seen = []
    cursor = 0
    while True:
        cursor, batch = r.scan(cursor, count=37)
        seen.extend(batch)
        if cursor == 0:
            break
    assert sorted(seen) == sorted(names)


def test_scan_keeps_keys_present_throughout_despite_churn(r):
    stable = {f"stable:{i}".encode() for i in range(300)}
    r.mset({n: 1 for n in stable})
    r.mset({f"gone:{i}": 1 for i in range(300)})
    seen = set()
    cursor, step = 0, 0
    while True:
        cursor, batch = r.scan(cursor, count=20)
        seen.update(batch)
        # Writes during the scan: deletions and insertions must not hide stable keys.
        r.delete(*[f"gone:{i}" for i in range(step * 10, step * 10 + 10)])
        r.mset({f"new:{step}:{i}": 1 for i in range(10)})
        step += 1
        if cursor == 0:
            break
    assert stable <= seen


def test_scan_never_returns_a_key_deleted_before_it_was_reached(r):
    names = [f"k{i}".encode() for i in range(50)]
    r.mset({n: 1 for n in names})
    cursor, first = r.scan(0, count=1)
    assert cursor != 0
    r.delete(*[n for n in names if n not in first])
    later = []
    while cursor != 0:
        cursor, batch = r.scan(cursor, count=1)
        later += batch
    assert set(later) <= set(first)


def test_scan_match_count_type(streams, r):
    r.mset({"s1": 1, "s2": 2, "other": 3})
    r.hset("h1", "f", "v")
    r.xadd("x1", {"f": "v"})

    def full(**kw):
        out, cursor = [], 0
        while True:
            cursor, batch = r.scan(cursor, **kw)
            out.extend(batch)
            if cursor == 0:
                return sorted(out)

    assert full(match="s*") == [b"s1", b"s2"]
    assert full(_type="hash") == [b"h1"]
    assert full(_type="STRING") == [b"other", b"s1", b"s2"]
    assert full(_type="stream") == [b"x1"]
    assert full(match="h*", _type="string") == []


def test_scan_errors(r):
    assert err(r.execute_command, "SCAN", "abc") == "invalid cursor"
    assert err(r.execute_command, "SCAN", "0", "COUNT", "0") == "syntax error"
    assert err(r.execute_command, "SCAN", "0", "COUNT", "x") == \
        "value is not an integer or out of range"
    assert err(r.execute_command, "SCAN", "0", "MATCH") == "syntax error"
    assert err(r.execute_command, "SCAN", "0", "FOO", "bar") == "syntax error"
    assert err(r.execute_command, "SCAN", "0", "NOVALUES") == "syntax error"  # HSCAN's only


@pytest.mark.parametrize("text", [" 0", "\t0", "\n0", "\r0", "\v0", "\f0", "\n1", " -1", "0 ", "- 1", "1.0"])
def test_scan_cursor_refuses_whitespace_and_junk(r, text):
    # strtoul would skip leading whitespace, but Redis checks the first byte itself.
    r.set("a", 1)
    r.hset("h", "f", "v")
    assert err(r.execute_command, "SCAN", text) == "invalid cursor"
    assert err(r.execute_command, "HSCAN", "h", text) == "invalid cursor"
    assert err(r.execute_command, "HSCAN", "nokey", text) == "invalid cursor"


def test_scan_cursor_range(r):
    # strtoul's range: any 64-bit value (a minus sign wraps it) is a cursor, beyond is not.
    r.set("a", 1)
    for text in ("18446744073709551615", "-1", "-18446744073709551615"):
        cursor, _ = r.execute_command("SCAN", text)
        assert isinstance(cursor, int)
    for text in ("18446744073709551616", "-18446744073709551616", "99999999999999999999999"):
        assert err(r.execute_command, "SCAN", text) == "invalid cursor"


def test_scan_type_none_matches_nothing(r):
    r.set("a", 1)
    assert r.scan(0, _type="none", count=100) == (0, [])


@pytest.mark.parametrize("text", ["", "+0", "-0", "00"])
def test_scan_cursor_forms_strtoul_reads_as_zero(r, call, text):
    r.set("a", 1)
    r.hset("h", "f", "v")
    cursor, names = call("SCAN", text, "COUNT", "100")
    assert cursor == b"0" and sorted(names) == [b"a", b"h"]
    assert call("HSCAN", "h", text) == [b"0", [b"f", b"v"]]


def test_scan_reply_shape(r, call):
    r.set("a", 1)
    assert call("SCAN", "0", "COUNT", "100") == [b"0", [b"a"]]
    assert call.resp3("SCAN", "0", "COUNT", "100") == [b"0", [b"a"]]


def test_randomkey(r):
    assert r.randomkey() is None
    r.mset({"a": 1, "b": 2})
    for _ in range(10):
        assert r.randomkey() in (b"a", b"b")


def test_randomkey_skips_expired_keys(r):
    r.set("dead", 1, px=1)
    r.set("live", 1)
    time.sleep(0.02)
    for _ in range(10):
        assert r.randomkey() == b"live"


# --- RENAME / RENAMENX / MOVE / COPY / SWAPDB ----------------------------------------------

def test_rename_moves_value_and_ttl(r):
    r.set("a", "v", ex=100)
    r.set("b", "old")
    assert r.rename("a", "b") is True
    assert r.get("b") == b"v"
    assert r.exists("a") == 0
    assert 95 <= r.ttl("b") <= 100
    # The destination's own TTL goes with its old value.
    r.set("c", "x", ex=100)
    r.set("d", "y")
    r.rename("d", "c")
    assert r.ttl("c") == -1


def test_rename_errors_and_same_key(r):
    assert err(r.rename, "nokey", "x") == "no such key"
    assert err(r.renamenx, "nokey", "x") == "no such key"
    assert err(r.rename, "nokey", "nokey") == "no such key"
    assert err(r.renamenx, "nokey", "nokey") == "no such key"
    r.set("a", 1)
    assert r.rename("a", "a") is True
    assert r.renamenx("a", "a") is False
    assert r.get("a") == b"1"


def test_renamenx(r):
    r.set("a", 1)
    r.set("b", 2)
    assert r.renamenx("a", "b") is False
    assert r.renamenx("a", "c") is True
    assert r.mget("a", "b", "c") == [None, b"2", b"1"]


def test_rename_hash_keeps_type_and_fields(r):
    r.hset("h", mapping={"f1": "v1", "f2": "v2"})
    r.rename("h", "h2")
    assert r.hgetall("h2") == {b"f1": b"v1", b"f2": b"v2"}


def test_rename_stream_keeps_groups(streams, r):
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xgroup_create("s", "g", id="0")
    r.rename("s", "s2")
    groups = r.xinfo_groups("s2")
    assert [g["name"] for g in groups] == [b"g"]
    assert r.xlen("s2") == 1


def test_rename_onto_key_with_blocked_reader_wakes_it(streams, r, make_client):
    import threading

    r.xadd("src", {"f": "v"}, id="5-1")
    reader = make_client()
    out = {}

    def block():
        out["reply"] = reader.xread({"dst": "0-0"}, block=5000)

    t = threading.Thread(target=block)
    t.start()
    deadline = time.time() + 3
    while time.time() < deadline and r.info("clients")["blocked_clients"] == 0:
        time.sleep(0.01)
    r.rename("src", "dst")
    t.join(5)
    assert out["reply"] == [[b"dst", [(b"5-1", {b"f": b"v"})]]]


def test_move(r, make_client):
    r.set("a", "v", ex=100)
    assert r.move("a", 1) is True
    assert r.exists("a") == 0
    r.execute_command("SELECT", 1)
    try:
        assert r.get("a") == b"v"
        assert 95 <= r.ttl("a") <= 100
        r.set("b", "in1")
    finally:
        r.execute_command("SELECT", 0)
    r.set("b", "in0")
    assert r.move("b", 1) is False  # destination holds the key
    assert r.move("nokey", 1) is False
    assert r.get("b") == b"in0"


def test_move_errors(r):
    r.set("a", 1)
    assert err(r.move, "a", 0) == "source and destination objects are the same"
    assert err(r.execute_command, "MOVE", "a", "x") == "value is not an integer or out of range"
    assert err(r.execute_command, "MOVE", "a", "99") == "DB index is out of range"
    ndb = int(r.config_get("databases")["databases"])  # the first index past the last db
    assert err(r.execute_command, "MOVE", "a", ndb) == "DB index is out of range"
    assert err(r.execute_command, "COPY", "a", "b", "DB", ndb) == "DB index is out of range"
    assert err(r.execute_command, "MOVE", "a", "-1") == "DB index is out of range"
    assert err(r.execute_command, "MOVE", "a", "3000000000") == \
        "value is out of range, value must between -2147483648 and 2147483647"


def test_copy(r):
    r.set("a", "v", ex=100)
    assert r.copy("a", "b") is True
    assert r.get("b") == b"v"
    assert 95 <= r.ttl("b") <= 100
    r.set("c", "other")
    assert r.copy("a", "c") is False
    assert r.copy("a", "c", replace=True) is True
    assert r.get("c") == b"v"
    assert r.copy("nokey", "d") is False
    assert r.copy("a", "a", destination_db=1) is True
    r.execute_command("SELECT", 1)
    try:
        assert r.get("a") == b"v"
    finally:
        r.execute_command("SELECT", 0)


def test_copy_replace_and_rename_leave_the_destination_with_the_source_ttl(r):
    # The value that was at the destination goes with its TTL.
    r.set("src", "a")
    r.set("dst", "b", ex=100)
    assert r.copy("src", "dst", replace=True) is True
    assert r.ttl("dst") == -1
    r.set("dst", "b", ex=100)
    assert r.rename("src", "dst")
    assert r.ttl("dst") == -1


def test_copy_is_deep_for_hashes(r):
    r.hset("h", "f", "1")
    r.copy("h", "h2")
    r.hset("h2", "f", "2")
    r.hset("h2", "g", "3")
    assert r.hgetall("h") == {b"f": b"1"}
    assert r.hgetall("h2") == {b"f": b"2", b"g": b"3"}


def test_copy_is_deep_for_streams(streams, r):
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xgroup_create("s", "g", id="0")
    assert r.copy("s", "s2") is True
    r.xadd("s2", {"f": "w"}, id="2-1")
    r.xgroup_create("s2", "g2", id="0")
    assert r.xlen("s") == 1
    assert [g["name"] for g in r.xinfo_groups("s")] == [b"g"]
    assert sorted(g["name"] for g in r.xinfo_groups("s2")) == [b"g", b"g2"]


def test_copy_errors(r):
    r.set("a", 1)
    assert err(r.execute_command, "COPY", "a", "a") == \
        "source and destination objects are the same"
    assert err(r.execute_command, "COPY", "a", "b", "DB", "x") == \
        "value is not an integer or out of range"
    assert err(r.execute_command, "COPY", "a", "b", "DB", "99") == "DB index is out of range"
    assert err(r.execute_command, "COPY", "a", "b", "FOO") == "syntax error"
    assert err(r.execute_command, "COPY", "a", "b", "DB") == "syntax error"


def test_swapdb(r):
    r.set("a", "zero")
    r.execute_command("SELECT", 1)
    try:
        r.set("a", "one")
        r.set("only1", "x", ex=100)
        assert r.swapdb(0, 1) is True
        assert r.get("a") == b"zero"
        assert r.exists("only1") == 0
    finally:
        r.execute_command("SELECT", 0)
    assert r.get("a") == b"one"
    assert 95 <= r.ttl("only1") <= 100
    assert r.swapdb(0, 0) is True


def test_swapdb_counts_one_change_even_for_the_same_index(r):
    before = dirty(r)
    assert r.swapdb(0, 1) is True
    assert dirty(r) - before == 1
    before = dirty(r)
    assert r.swapdb(2, 2) is True  # nothing moves, yet Redis counts it
    assert dirty(r) - before == 1
    before = dirty(r)
    with pytest.raises(redis.ResponseError):
        r.swapdb(0, 99)
    assert dirty(r) == before


# Each command with what it adds to rdb_changes_since_last_save, in order (checked against
# Redis 7.0.15): moving a value with its TTL, over a key it replaces, is one change.
_DIRTY_CASES = [
    (("SET", "a", "1", "EX", "100"), 1),
    (("SET", "b", "2"), 1),
    (("SET", "c", "3", "PX", "100000"), 1),
    (("RENAME", "a", "b"), 1),
    (("RENAME", "b", "b"), 0),
    (("RENAMENX", "b", "c"), 0),
    (("RENAMENX", "b", "d"), 1),
    (("COPY", "d", "e"), 1),
    (("COPY", "d", "e"), 0),
    (("COPY", "c", "e", "REPLACE"), 1),
    (("COPY", "nokey", "f"), 0),
    (("MOVE", "e", "1"), 1),
    (("MOVE", "e", "1"), 0),
    (("COPY", "d", "e", "DB", "1"), 0),
    (("COPY", "d", "e", "DB", "1", "REPLACE"), 1),
    (("EXPIRE", "d", "100"), 1),
    (("EXPIRE", "d", "100", "NX"), 0),
    (("EXPIRE", "d", "200", "GT"), 1),
    (("PEXPIRE", "d", "50000", "LT"), 1),
    (("PERSIST", "d"), 1),
    (("PERSIST", "d"), 0),
    (("EXPIRE", "nokey", "10"), 0),
    (("EXPIRE", "d", "0"), 1),
    (("SET", "d", "1"), 1),
    (("PEXPIREAT", "d", "1"), 1),
    (("SET", "x", "1"), 1),
    (("SET", "y", "1"), 1),
    (("DEL", "x", "y", "z"), 2),
    (("SET", "x", "1"), 1),
    (("UNLINK", "x", "x"), 1),
]


def test_dirty_counter_per_key_command(r):
    assert dirty_changes(r, [argv for argv, _ in _DIRTY_CASES]) == _DIRTY_CASES


def test_swapdb_errors(r):
    assert err(r.execute_command, "SWAPDB", "a", "1") == "invalid first DB index"
    assert err(r.execute_command, "SWAPDB", "0", "b") == "invalid second DB index"
    assert err(r.execute_command, "SWAPDB", "3000000000", "1") == "invalid first DB index"
    assert err(r.execute_command, "SWAPDB", "0", "99") == "DB index is out of range"
    # Both indexes bad: the first one is reported.
    assert err(r.execute_command, "SWAPDB", "a", "b") == "invalid first DB index"
    assert err(r.execute_command, "SWAPDB", "99", "b") == "invalid second DB index"


def test_swapdb_invalidates_watch_on_either_side(r, make_client):
    r.set("k", "v")  # exists only in db 0; after the swap it is gone from db 0
    c = make_client()
    c.execute_command("WATCH", "k")
    r.swapdb(0, 1)
    c.execute_command("MULTI")
    c.execute_command("SET", "x", "1")
    assert c.execute_command("EXEC") is None
    r.swapdb(0, 1)
    # Watched key absent from both databases: the swap changes nothing for it.
    c.execute_command("WATCH", "absent")
    r.swapdb(0, 1)
    c.execute_command("MULTI")
    c.execute_command("SET", "x", "1")
    assert c.execute_command("EXEC") == [b"OK"]
    r.swapdb(0, 1)


def test_swapdb_of_a_database_with_itself_leaves_watch_alone(r, make_client):
    r.set("k", "v")
    c = make_client()
    c.execute_command("WATCH", "k")
    assert r.swapdb(0, 0) is True  # nothing moves, so nothing watched changed
    c.execute_command("MULTI")
    c.execute_command("SET", "x", "1")
    assert c.execute_command("EXEC") == [b"OK"]


def test_swapdb_wakes_reader_blocked_on_a_key_that_arrives(streams, r, make_client):
    import threading

    r.execute_command("SELECT", 1)
    try:
        r.xadd("s", {"f": "v"}, id="3-1")
    finally:
        r.execute_command("SELECT", 0)
    reader = make_client()
    out = {}
    t = threading.Thread(target=lambda: out.setdefault(
        "reply", reader.xread({"s": "0-0"}, block=5000)))
    t.start()
    deadline = time.time() + 3
    while time.time() < deadline and r.info("clients")["blocked_clients"] == 0:
        time.sleep(0.01)
    r.swapdb(0, 1)
    t.join(5)
    assert out["reply"] == [[b"s", [(b"3-1", {b"f": b"v"})]]]
    r.swapdb(0, 1)


# --- OBJECT ------------------------------------------------------------------------------

def test_object_encoding_of_strings(r):
    r.set("i", "12345")
    r.set("neg", "-5")
    r.set("lead0", "012")
    r.set("e", "x" * 44)
    r.set("raw", "x" * 45)
    assert r.object("encoding", "i") == b"int"
    assert r.object("encoding", "neg") == b"int"
    assert r.object("encoding", "lead0") == b"embstr"
    assert r.object("encoding", "e") == b"embstr"
    assert r.object("encoding", "raw") == b"raw"
    r.append("i", "6")  # an appended string is always raw
    assert r.object("encoding", "i") == b"raw"
    r.incr("n")
    assert r.object("encoding", "n") == b"int"
    r.incrbyfloat("n", 1)  # float results are never int-encoded
    assert r.object("encoding", "n") == b"embstr"
    r.setrange("sr", 0, "12")
    assert r.object("encoding", "sr") == b"raw"
    r.append("ap", "5")  # APPEND creating the key encodes like SET
    assert r.object("encoding", "ap") == b"int"
    r.copy("n", "n2")
    assert r.object("encoding", "n2") == b"embstr"
    assert r.object("encoding", "nokey") is None


def test_object_encoding_of_hashes(r):
    saved = r.config_get("hash-max-listpack-entries")["hash-max-listpack-entries"]
    r.config_set("hash-max-listpack-entries", 2)
    try:
        r.hset("h", mapping={"a": 1, "b": 2})
        assert r.object("encoding", "h") == b"listpack"
        r.hset("h", "c", 3)
        assert r.object("encoding", "h") == b"hashtable"
        r.hdel("h", "c")  # no way back
        assert r.object("encoding", "h") == b"hashtable"
    finally:
        r.config_set("hash-max-listpack-entries", saved)
    r.hset("long", "f", "x" * 65)
    assert r.object("encoding", "long") == b"hashtable"
    r.hset("short", "f", "x" * 64)
    assert r.object("encoding", "short") == b"listpack"
    r.copy("long", "long2")
    assert r.object("encoding", "long2") == b"hashtable"


def test_lowering_hash_limits_leaves_an_unwritten_listpack_as_it_is(r):
    # Redis converts a hash only when a write outgrows the limits in force: lowering them
    # changes nothing until then, and COPY/RENAME carry the listpack over unchanged.
    saved = r.config_get("hash-max-listpack-*")
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    r.hset("v", "f", "x")
    try:
        r.config_set("hash-max-listpack-entries", 2)
        r.config_set("hash-max-listpack-value", 0)
        assert r.object("encoding", "h") == b"listpack"
        r.copy("h", "h2")
        r.rename("v", "v2")
        assert r.object("encoding", "h2") == b"listpack"
        assert r.object("encoding", "v2") == b"listpack"
        r.hset("h", "a", "")  # an update that leaves 3 fields: over the entry limit now
        assert r.object("encoding", "h") == b"hashtable"
    finally:
        for name, value in saved.items():
            r.config_set(name, value)


def test_object_encoding_of_stream(streams, r):
    r.xadd("s", {"f": "v"})
    assert r.object("encoding", "s") == b"stream"


def test_object_refcount_freq_idletime_help(r, call, target):
    r.set("shared", "100")
    r.set("big", "100000")
    r.set("last", "9999")
    r.set("first_unshared", "10000")
    r.set("negative", "-1")
    r.set("text", "abc")
    assert r.object("refcount", "shared") == 2147483647
    assert r.object("refcount", "big") == 1
    assert r.object("refcount", "last") == 2147483647  # Redis shares 0..9999
    assert r.object("refcount", "first_unshared") == 1
    assert r.object("refcount", "negative") == 1
    assert r.object("refcount", "text") == 1
    r.copy("shared", "dup")  # a copy is its own object, not the shared integer
    assert r.object("refcount", "dup") == 1
    assert r.object("encoding", "dup") == b"int"
    assert r.object("idletime", "text") == 0  # just written: idle for under a second
    assert err(r.object, "freq", "text").startswith(
        "An LFU maxmemory policy is not selected, access frequency not tracked.")
    help_lines = call("OBJECT", "HELP")
    assert help_lines[0] == b"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"ENCODING <key>" in help_lines
    # Redis 7.0's help footer says "Prints this help."; 7.2+ (and streamd) say "Print".
    assert help_lines[-1] == (b"    Prints this help." if target.version < (7, 2)
                              else b"    Print this help.")
    assert r.object("refcount", "nokey") is None
    r.hset("h", "f", "v")
    r.execute_command("XADD", "st", "1-0", "f", "v")
    assert r.object("refcount", "h") == 1
    assert r.object("refcount", "st") == 1
    assert r.object("idletime", "nokey") is None


def test_object_refcount_integer_sharing_is_decided_when_the_value_is_stored(r):
    # An LRU/LFU policy with maxmemory stops Redis handing out its shared integers, but
    # only for values created meanwhile: the policy in force at OBJECT time does not matter.
    saved = r.config_get("maxmemory*")
    r.set("before", "5")
    try:
        r.config_set("maxmemory-policy", "allkeys-lru")
        r.config_set("maxmemory", "100000000")
        assert r.object("refcount", "before") == 2147483647
        r.set("set", "5")
        r.mset({"mset": "6"})
        r.execute_command("SETNX", "setnx", "7")
        r.execute_command("SETEX", "setex", 100, "8")
        r.incr("incr")
        r.append("append", "9")
        for name in ("set", "mset", "setnx", "setex", "incr", "append"):
            assert r.object("refcount", name) == 1, name
            assert r.object("encoding", name) == b"int", name
        r.config_set("maxmemory", "0")
        assert r.object("refcount", "set") == 1
        r.set("after", "5")
        assert r.object("refcount", "after") == 2147483647
    finally:
        r.config_set("maxmemory", saved["maxmemory"])
        r.config_set("maxmemory-policy", saved["maxmemory-policy"])


def test_object_errors(r):
    assert err(r.execute_command, "OBJECT", "FOO", "k") == \
        "unknown subcommand 'FOO'. Try OBJECT HELP."
    assert err(r.execute_command, "OBJECT", "ENCODING") == \
        "wrong number of arguments for 'object|encoding' command"


def test_object_idletime_under_lfu_policy(r):
    r.set("k", "v")
    saved = r.config_get("maxmemory-policy")["maxmemory-policy"]
    r.config_set("maxmemory-policy", "allkeys-lfu")
    try:
        assert err(r.object, "idletime", "k").startswith(
            "An LFU maxmemory policy is selected, idle time not tracked.")
        assert isinstance(r.object("freq", "k"), int)
    finally:
        r.config_set("maxmemory-policy", saved)


def _move_in(r):
    r.execute_command("SELECT", 1)
    r.set("w", "from db 1")
    r.move("w", 0)
    r.execute_command("SELECT", 0)


@pytest.mark.parametrize("create", [
    lambda r: r.execute_command("SETNX", "w", "1"),
    lambda r: r.msetnx({"w": "1", "w2": "2"}),
    lambda r: r.append("w", "x"),
    lambda r: r.incr("w"),
    lambda r: r.incrbyfloat("w", 1.5),
    lambda r: r.setrange("w", 2, "x"),
    lambda r: r.rename("src", "w"),
    lambda r: r.renamenx("src", "w"),
    lambda r: r.copy("src", "w"),
    _move_in,
    lambda r: r.hset("w", "f", "v"),
], ids=["setnx", "msetnx", "append", "incr", "incrbyfloat", "setrange", "rename",
        "renamenx", "copy", "move", "hset"])
def test_creating_a_watched_absent_key_aborts_exec(r, make_client, create):
    r.set("src", "v")
    assert watch_broken(make_client, "w", lambda: create(r))


# --- WRONGTYPE is not raised by generic commands ------------------------------------------

def test_generic_commands_accept_any_type(streams, r):
    r.hset("h", "f", "v")
    r.xadd("s", {"f": "v"})
    assert r.expire("h", 100) is True
    assert r.expire("s", 100) is True
    assert r.persist("s") is True
    assert r.rename("h", "h2") is True
    assert r.delete("h2", "s") == 2


def test_many_interleaved_scans_each_see_every_key(r):
    names = {f"k{i}".encode() for i in range(200)}
    r.mset({n: 1 for n in names})
    scans = [[0, set(), False] for _ in range(40)]
    first = True
    while first or not all(done for _, _, done in scans):
        first = False
        for state in scans:
            if state[2]:
                continue
            cursor, batch = r.scan(state[0], count=7)
            state[1].update(batch)
            state[0] = cursor
            state[2] = cursor == 0
    for _, seen, _ in scans:
        assert seen == names


def test_pathological_match_patterns_stay_fast(r):
    r.set("a" * 60, 1)
    r.hset("h", "a" * 60, 1)
    pattern = "*a" * 30 + "*b"
    start = time.monotonic()
    assert r.keys(pattern) == []
    assert r.scan(0, match=pattern, count=100)[1] == []
    assert r.hscan("h", 0, match=pattern)[1] == {}
    assert time.monotonic() - start < 2


def test_match_pattern_edge_cases(r, call):
    fields = ["", "a", "\\", "-", "]", "ab"]
    r.hset("h", mapping={f: 1 for f in fields})

    def matched(pattern):
        flat = call("HSCAN", "h", "0", "MATCH", pattern)[1]
        return sorted(flat[::2])

    assert matched("**") == [b"-", b"\\", b"]", b"a", b"ab"]  # never the empty field
    assert matched("[^") == [b"-", b"\\", b"]", b"a"]  # unterminated class
    assert matched("\\") == [b"\\"]
    assert matched("[]]") == []
    assert matched("[a-]") == [b"]", b"a"]  # a range up to the closing bracket
    assert matched("?b") == [b"ab"]


def test_match_star_alone_lists_the_empty_key_name(r):
    # A lone `*` means "no pattern" (the empty name included); any other pattern goes
    # through the matcher, which never matches an empty name against `**`.
    r.set("", "v")
    r.set("a", "v")
    assert sorted(r.keys("*")) == [b"", b"a"]
    assert sorted(r.scan(0, match="*", count=100)[1]) == [b"", b"a"]
    assert r.keys("**") == [b"a"]
    assert r.scan(0, match="**", count=100)[1] == [b"a"]
