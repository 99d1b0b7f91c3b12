"""Hash commands: replies in RESP2 and RESP3, count semantics, error texts."""

from __future__ import annotations

import pytest

from tests.conftest import dirty_changes, watch_broken, error_text as err

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def cmd(r, *args):
    return r.execute_command(*args)


def test_hset_counts_new_fields(r):
    assert r.hset("h", mapping={"a": "1", "b": "2"}) == 2
    assert r.hset("h", mapping={"a": "x", "c": "3"}) == 1
    assert r.hgetall("h") == {b"a": b"x", b"b": b"2", b"c": b"3"}
    assert err(cmd, r, "HSET", "h", "a") == "wrong number of arguments for 'hset' command"
    assert err(cmd, r, "HSET", "h", "a", "1", "b") == \
        "wrong number of arguments for 'hset' command"


def test_hset_repeated_field_counts_once_and_the_last_value_wins(r, call):
    assert call("HSET", "h", "a", "1", "a", "2", "b", "3") == 2
    assert r.hgetall("h") == {b"a": b"2", b"b": b"3"}


def test_hmset(r, call):
    assert call("HMSET", "h", "a", "1", "b", "2") == b"OK"
    assert r.hmget("h", "a", "nofield", "b") == [b"1", None, b"2"]
    assert err(cmd, r, "HMSET", "h", "a", "1", "b") == \
        "wrong number of arguments for 'hmset' command"


def test_hsetnx(r):
    assert r.hsetnx("h", "a", "1") == 1
    assert r.hsetnx("h", "a", "2") == 0
    assert r.hget("h", "a") == b"1"


def test_hget_hmget_missing(r):
    assert r.hget("nokey", "f") is None
    assert r.hmget("nokey", "a", "b") == [None, None]
    r.hset("h", "a", "1")
    assert r.hget("h", "zz") is None
    assert r.hmget("h", "a", "zz", "a") == [b"1", None, b"1"]  # one reply per field named


def test_hgetall_shapes(r, call):
    r.hset("h", mapping={"a": "1", "b": "2"})
    flat = call("HGETALL", "h")
    assert dict(zip(flat[::2], flat[1::2])) == {b"a": b"1", b"b": b"2"}
    assert call.resp3("HGETALL", "h") == {b"a": b"1", b"b": b"2"}
    assert call("HGETALL", "nokey") == []
    assert call.resp3("HGETALL", "nokey") == {}


def test_hdel_removes_emptied_key(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    assert r.hdel("h", "a", "a", "zz") == 1
    assert r.exists("h") == 1
    assert r.hdel("h", "b") == 1
    assert r.exists("h") == 0
    assert r.hdel("h", "b") == 0


def test_small_hash_keeps_insertion_order_everywhere(r, call):
    # A listpack-encoded hash lists fields in the order they were added; a field deleted
    # and added again goes to the end. Every command that lists fields agrees.
    r.hset("h", mapping={"b": "5", "a": "2", "c": "3"})
    r.hdel("h", "a")
    r.hset("h", "a", "1")
    assert call("HKEYS", "h") == [b"b", b"c", b"a"]
    assert call("HVALS", "h") == [b"5", b"3", b"1"]
    assert call("HGETALL", "h") == [b"b", b"5", b"c", b"3", b"a", b"1"]
    assert call("HSCAN", "h", "0") == [b"0", [b"b", b"5", b"c", b"3", b"a", b"1"]]
    assert call("HRANDFIELD", "h", "3") == [b"b", b"c", b"a"]  # the whole hash, in order
    assert call("HRANDFIELD", "h", "5", "WITHVALUES") == \
        [b"b", b"5", b"c", b"3", b"a", b"1"]


def test_hlen_hkeys_hvals_hexists_hstrlen(r, call):
    r.hset("h", mapping={"a": "1", "bb": "22"})
    assert r.hlen("h") == 2
    assert sorted(r.hkeys("h")) == [b"a", b"bb"]
    assert sorted(r.hvals("h")) == [b"1", b"22"]
    assert r.hexists("h", "a") is True
    assert r.hexists("h", "zz") is False
    assert [type(call.resp3("HEXISTS", "h", f)) for f in ("a", "zz")] == [int, int]
    assert r.hstrlen("h", "bb") == 2
    r.hset("h", "c", "value")
    assert r.hstrlen("h", "c") == 5  # the value's length, not the field's
    assert r.hstrlen("h", "zz") == 0
    assert r.hlen("nokey") == 0
    assert r.hkeys("nokey") == []
    assert r.hvals("nokey") == []
    assert r.hexists("nokey", "a") is False
    assert r.hstrlen("nokey", "a") == 0


def test_hincrby(r):
    assert r.hincrby("h", "n", 5) == 5
    assert r.hincrby("h", "n", -10) == -5
    r.hset("h", "s", "abc")
    assert err(r.hincrby, "h", "s", 1) == "hash value is not an integer"
    assert err(cmd, r, "HINCRBY", "h", "n", "x") == "value is not an integer or out of range"
    r.hset("h", "big", str(2**63 - 1))
    assert err(r.hincrby, "h", "big", 1) == "increment or decrement would overflow"
    r.hset("h", "f", "1.5")
    assert err(r.hincrby, "h", "f", 1) == "hash value is not an integer"


@pytest.mark.parametrize("start, incr, expected", [
    (2**63 - 2, 1, 2**63 - 1), (-2**63 + 1, -1, -2**63), (0, -2**63, -2**63),
])
def test_hincrby_reaches_the_int64_limits(r, start, incr, expected):
    r.hset("h", "n", start)
    assert r.hincrby("h", "n", incr) == expected
    assert r.hget("h", "n") == str(expected).encode()
    assert err(r.hincrby, "h", "n", 1 if incr > 0 else -1) == \
        "increment or decrement would overflow"
    assert r.hget("h", "n") == str(expected).encode()


@pytest.mark.parametrize("args, text", [
    (["HINCRBY", "s", "f", "x"], "value is not an integer or out of range"),
    (["HINCRBYFLOAT", "s", "f", "x"], "value is not a valid float"),
])
def test_increment_is_checked_before_the_key_type(r, args, text):
    r.set("s", "v")
    assert err(cmd, r, *args) == text


def test_hincrbyfloat(r, call):
    assert call("HINCRBYFLOAT", "h", "f", "10.5") == b"10.5"
    assert call("HINCRBYFLOAT", "h", "f", "0.1") == b"10.6"
    assert call("HINCRBYFLOAT", "h", "g", "5.0e3") == b"5000"
    assert r.hget("h", "f") == b"10.6"
    r.hset("h", "s", "abc")
    assert err(cmd, r, "HINCRBYFLOAT", "h", "s", "1") == "hash value is not a float"
    assert err(cmd, r, "HINCRBYFLOAT", "h", "f", "abc") == "value is not a valid float"
    # RESP3 too: a bulk string, not a double.
    assert call.resp3("HINCRBYFLOAT", "h", "f", "0.4") == b"11"


def test_hincrbyfloat_infinite_increment(r):
    r.hset("h", "f", "1")
    assert err(cmd, r, "HINCRBYFLOAT", "h", "f", "inf") == "value is NaN or Infinity"
    assert err(cmd, r, "HINCRBYFLOAT", "nokey", "f", "-inf") == "value is NaN or Infinity"
    assert err(cmd, r, "HINCRBYFLOAT", "h", "f", "Infinity") == "value is NaN or Infinity"
    assert r.exists("nokey") == 0


def test_hrandfield_single(r, call):
    assert r.hrandfield("nokey") is None
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    for _ in range(10):
        assert r.hrandfield("h") in (b"a", b"b", b"c")
    # Random: 60 draws from three fields all landing on one has odds of 3 ** -59.
    assert len({r.hrandfield("h") for _ in range(60)}) > 1


def test_hrandfield_counts(r, call):
    fields = {b"a": b"1", b"b": b"2", b"c": b"3"}
    r.hset("h", mapping=fields)
    assert call("HRANDFIELD", "h", "0") == []
    for _ in range(30):  # a positive count never repeats a field
        two = call("HRANDFIELD", "h", "2")
        assert len(two) == 2 and len(set(two)) == 2 and set(two) <= set(fields)
    assert sorted(call("HRANDFIELD", "h", "10")) == sorted(fields)  # capped, distinct
    many = call("HRANDFIELD", "h", "-10")  # negative: exactly that many, repeats allowed
    assert len(many) == 10 and set(many) <= set(fields)
    assert call("HRANDFIELD", "nokey", "5") == []
    assert call("HRANDFIELD", "nokey", "5", "WITHVALUES") == []


def test_hrandfield_withvalues_shapes(r, call):
    fields = {b"a": b"1", b"b": b"2", b"c": b"3"}
    r.hset("h", mapping=fields)
    flat = call("HRANDFIELD", "h", "-5", "WITHVALUES")
    assert len(flat) == 10
    for f, v in zip(flat[::2], flat[1::2]):
        assert fields[f] == v
    pairs = call.resp3("HRANDFIELD", "h", "-5", "WITHVALUES")
    assert len(pairs) == 5
    for f, v in pairs:
        assert fields[f] == v
    pairs = call.resp3("HRANDFIELD", "h", "3", "withvalues")
    assert sorted(pairs) == sorted([[f, v] for f, v in fields.items()])


def test_hrandfield_errors(r):
    r.hset("h", "a", "1")
    assert err(cmd, r, "HRANDFIELD", "h", "x") == "value is not an integer or out of range"
    assert err(cmd, r, "HRANDFIELD", "h", "1", "FOO") == "syntax error"
    assert err(cmd, r, "HRANDFIELD", "h", "1", "WITHVALUES", "x") == "syntax error"
    assert err(cmd, r, "HRANDFIELD", "h", "-9223372036854775808") == \
        "value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    assert err(cmd, r, "HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES") == \
        "value is out of range"
    # With values the count may be at most LONG_MAX / 2 either way.
    for count in ("4611686018427387904", "9223372036854775807"):
        assert err(cmd, r, "HRANDFIELD", "h", count, "WITHVALUES") == "value is out of range"
    assert cmd(r, "HRANDFIELD", "h", "4611686018427387903", "WITHVALUES") == [b"a", b"1"]


def test_hscan_small_hash_in_one_call(r, call):
    r.hset("h", mapping={"a": "1", "b": "2", "ab": "3"})
    cursor, flat = call("HSCAN", "h", "0", "COUNT", "1")
    assert cursor == b"0"
    assert dict(zip(flat[::2], flat[1::2])) == {b"a": b"1", b"b": b"2", b"ab": b"3"}
    cursor, flat = call("HSCAN", "h", "0", "MATCH", "a*")
    assert dict(zip(flat[::2], flat[1::2])) == {b"a": b"1", b"ab": b"3"}
    assert call("HSCAN", "nokey", "0") == [b"0", []]
    assert call.resp3("HSCAN", "nokey", "0") == [b"0", []]


def test_hscan_large_hash_iterates(r):
    fields = {f"f{i}".encode(): str(i).encode() for i in range(1000)}
    r.hset("h", mapping=fields)
    seen = {}
    cursor = 0
    calls = 0
    while True:
        cursor, batch = r.hscan("h", cursor, count=50)
        seen.update(batch)
        calls += 1
        if cursor == 0:
            break
    assert seen == fields
    assert calls > 1
    # COUNT is a lower bound on what one call returns, until the end.
    cursor, batch = r.hscan("h", 0, count=200)
    assert cursor != 0 and len(batch) >= 200


def test_hscan_errors(r, call):
    r.hset("h", "a", "1")
    assert err(cmd, r, "HSCAN", "h", "abc") == "invalid cursor"
    assert err(cmd, r, "HSCAN", "h", "0", "COUNT", "0") == "syntax error"
    assert err(cmd, r, "HSCAN", "h", "0", "TYPE", "string") == "syntax error"
    assert err(cmd, r, "HSCAN", "h", "0", "FOO") == "syntax error"
    # Options are read only once the key is found.
    assert call("HSCAN", "nokey", "0", "FOO") == [b"0", []]
    # The cursor, though, is read first.
    assert err(cmd, r, "HSCAN", "nokey", "abc") == "invalid cursor"


@pytest.mark.min_redis("7.4")
def test_hscan_novalues(r, call):
    r.hset("h", mapping={"a": "1", "b": "2"})
    cursor, names = call("HSCAN", "h", "0", "NOVALUES")
    assert cursor == b"0"
    assert sorted(names) == [b"a", b"b"]


@pytest.mark.parametrize("args", [
    ["HSET", "s", "f", "v"], ["HSETNX", "s", "f", "v"], ["HGET", "s", "f"],
    ["HMGET", "s", "f"], ["HMSET", "s", "f", "v"], ["HGETALL", "s"], ["HDEL", "s", "f"],
    ["HEXISTS", "s", "f"], ["HLEN", "s"], ["HKEYS", "s"], ["HVALS", "s"],
    ["HINCRBY", "s", "f", "1"], ["HINCRBYFLOAT", "s", "f", "1"], ["HSCAN", "s", "0"],
    ["HSTRLEN", "s", "f"], ["HRANDFIELD", "s"], ["HRANDFIELD", "s", "2"],
])
def test_hash_commands_on_a_string(r, args):
    r.set("s", "v")
    assert err(cmd, r, *args) == WRONGTYPE
    assert r.get("s") == b"v"


def test_hscan_keeps_fields_present_throughout_despite_churn(r):
    stable = {f"s{i}".encode() for i in range(300)}
    r.hset("h", mapping={f: b"1" for f in stable})
    r.hset("h", mapping={f"gone{i}": 1 for i in range(300)})
    seen = set()
    cursor, step = 0, 0
    while True:
        cursor, batch = r.hscan("h", cursor, count=25)
        seen.update(batch)
        r.hdel("h", *[f"gone{i}" for i in range(step * 12, step * 12 + 12)])
        r.hset("h", mapping={f"new{step}:{i}": 1 for i in range(5)})
        step += 1
        if cursor == 0:
            break
    assert stable <= seen


_LONG = "x" * 65  # past hash-max-listpack-value


@pytest.mark.parametrize("write, undo", [
    (["HSET", "h", "b", _LONG], ["HSET", "h", "b", "1"]),
    (["HMSET", "h", "b", _LONG], ["HSET", "h", "b", "1"]),
    (["HSETNX", "h", "b", _LONG], ["HSET", "h", "b", "1"]),
    (["HSETNX", "h", _LONG, "1"], ["HDEL", "h", _LONG]),
    (["HINCRBY", "h", _LONG, "1"], ["HDEL", "h", _LONG]),
    (["HINCRBYFLOAT", "h", _LONG, "1"], ["HDEL", "h", _LONG]),
], ids=lambda a: " ".join(x if len(x) < 10 else "<long>" for x in a))
def test_every_hash_write_converts_on_a_long_field_or_value(r, write, undo):
    # A hash that outgrows listpack stays a hashtable once the long part is gone.
    r.hset("h", "a", "1")
    cmd(r, *write)
    cmd(r, *undo)
    assert r.object("encoding", "h") == b"hashtable"


# What each hash write adds to rdb_changes_since_last_save, in order (Redis 7.0.15).
_DIRTY_CASES = [
    (("HSETNX", "h", "a", "1"), 1), (("HSETNX", "h", "a", "2"), 0),
    (("HSETNX", "h", "b", "1"), 1),
    (("HINCRBY", "h", "n", "1"), 1), (("HINCRBY", "h", "n", "0"), 1),
    (("HINCRBYFLOAT", "h", "f", "1.5"), 1), (("HINCRBYFLOAT", "new", "f", "1"), 1),
    (("HDEL", "nokey", "f"), 0),
]


def test_dirty_counter_per_hash_command(r):
    assert dirty_changes(r, [argv for argv, _ in _DIRTY_CASES]) == _DIRTY_CASES


@pytest.mark.parametrize("write", [
    ["HSET", "h", "f", "v"], ["HSETNX", "h", "g", "v"], ["HDEL", "h", "f"],
    ["HINCRBY", "h", "n", "1"], ["HINCRBYFLOAT", "h", "n", "1"], ["HMSET", "h", "f", "v"],
], ids=lambda a: a[0])
def test_hash_writes_abort_a_watching_transaction(r, make_client, write):
    r.hset("h", mapping={"f": "v", "n": "1"})
    assert watch_broken(make_client, "h", lambda: cmd(r, *write))
