"""Hash field expiration (Redis 7.4 and 8.0): HEXPIRE and its siblings, HTTL and its
siblings, HPERSIST, HGETDEL, HGETEX, HSETEX; lazy and active expiry of fields; field TTLs
carried by RENAME, MOVE, COPY and SWAPDB; INFO's subexpiry and expired_subkeys.

Redis 7.0 has none of it, so these tests carry ``min_redis`` and follow redis.io and
Redis's own behaviour as its source and test suite describe it.
"""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import dirty_changes, wait_for, watch_broken

RE = redis.ResponseError
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
FAR_S = 10**8  # ~3 years ahead: a TTL that never runs out during a test
HFE_MAX_MS = (1 << 46) - 1

pytestmark = pytest.mark.min_redis("7.4")


def err(r, *args):
    with pytest.raises(RE) as info:
        r.execute_command(*args)
    return str(info.value)


def cmd(r, *args):
    return r.execute_command(*args)


def now_ms():
    return time.time_ns() // 1_000_000


def subexpiry(r, db="db0"):
    return r.info("keyspace").get(db, {}).get("subexpiry", 0)


def expired_subkeys(r):
    return r.info("stats")["expired_subkeys"]


# --- HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT --------------------------------------------

def test_hexpire_reply_codes(r):
    assert cmd(r, "HEXPIRE", "nokey", 100, "FIELDS", 2, "a", "b") == [-2, -2]
    assert r.exists("nokey") == 0
    r.hset("h", mapping={"a": 1, "b": 2})
    assert cmd(r, "HEXPIRE", "h", 100, "FIELDS", 3, "a", "zz", "a") == [1, -2, 1]
    assert cmd(r, "HPEXPIRE", "h", 0, "FIELDS", 1, "b") == [2]  # now: deleted at once
    assert r.hgetall("h") == {b"a": b"1"}
    past = now_ms() // 1000 - 10
    assert cmd(r, "HEXPIREAT", "h", past, "FIELDS", 2, "a", "a") == [2, -2]
    assert r.exists("h") == 0  # the last field went, and the hash with it


@pytest.mark.parametrize("name, unit, absolute", [
    ("HEXPIRE", 1000, False), ("HPEXPIRE", 1, False),
    ("HEXPIREAT", 1000, True), ("HPEXPIREAT", 1, True),
])
def test_hexpire_family_sets_the_time(r, name, unit, absolute):
    r.hset("h", "f", "v")
    amount = 5000 * 1000 // unit
    before = now_ms()
    arg = (before + 5_000_000) // unit if absolute else amount
    assert cmd(r, name, "h", arg, "FIELDS", 1, "f") == [1]
    when = cmd(r, "HPEXPIRETIME", "h", "FIELDS", 1, "f")[0]
    if absolute:
        assert when == arg * unit
    else:
        assert before + 5_000_000 <= when <= now_ms() + 5_000_000


def test_hexpire_conditions(r):
    t = now_ms()
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert cmd(r, "HPEXPIREAT", "h", t + 100_000, "NX", "FIELDS", 2, "a", "b") == [1, 1]
    assert cmd(r, "HPEXPIREAT", "h", t + 200_000, "NX", "FIELDS", 2, "a", "c") == [0, 1]
    assert cmd(r, "HPEXPIREAT", "h", t + 150_000, "XX", "FIELDS", 1, "a") == [1]
    r.hset("h", "d", 4)
    assert cmd(r, "HPEXPIREAT", "h", t + 150_000, "xx", "FIELDS", 1, "d") == [0]
    # GT and LT: a field without a TTL counts as never expiring.
    assert cmd(r, "HPEXPIREAT", "h", t + 300_000, "GT", "FIELDS", 3, "a", "b", "d") == \
        [1, 1, 0]
    assert cmd(r, "HPEXPIREAT", "h", t + 300_000, "GT", "FIELDS", 1, "a") == [0]  # equal
    assert cmd(r, "HPEXPIREAT", "h", t + 120_000, "LT", "FIELDS", 3, "a", "c", "d") == \
        [1, 1, 1]
    assert cmd(r, "HPEXPIREAT", "h", t + 120_000, "lt", "FIELDS", 1, "a") == [0]  # equal
    assert cmd(r, "HPEXPIRETIME", "h", "FIELDS", 4, "a", "b", "c", "d") == \
        [t + 120_000, t + 300_000, t + 120_000, t + 120_000]
    # The relative forms compare the same way.
    assert cmd(r, "HPEXPIRE", "h", 60_000, "GT", "FIELDS", 1, "a") == [0]
    assert cmd(r, "HEXPIRE", "h", 60, "LT", "FIELDS", 1, "a") == [1]
    assert cmd(r, "HEXPIRE", "h", 600, "GT", "FIELDS", 1, "a") == [1]


def test_hexpire_condition_is_checked_before_a_past_time_deletes(r):
    r.hset("h", mapping={"f1": 1, "f2": 2, "f4": 4})
    cmd(r, "HEXPIRE", "h", 1000, "NX", "FIELDS", 1, "f4")
    past = (now_ms() // 1000 - 1) * 1000
    assert cmd(r, "HPEXPIREAT", "h", past, "NX", "FIELDS", 4, "f1", "f2", "f3", "f4") == \
        [2, 2, -2, 0]
    assert r.hkeys("h") == [b"f4"]


@pytest.mark.parametrize("args, text", [
    (["HEXPIRE", "h", -1, "FIELDS", 1, "f"], "invalid expire time, must be >= 0"),
    (["HPEXPIREAT", "h", -9223372036854775808, "FIELDS", 1, "f"],
     "invalid expire time, must be >= 0"),
    (["HEXPIRE", "h", "x", "FIELDS", 1, "f"], "value is not an integer or out of range"),
    (["HEXPIRE", "h", "9223372036854775808", "FIELDS", 1, "f"],
     "value is not an integer or out of range"),
    (["HEXPIRE", "h", HFE_MAX_MS // 1000 + 1, "FIELDS", 1, "f"],
     "invalid expire time in 'hexpire' command"),
    (["HPEXPIRE", "h", HFE_MAX_MS, "FIELDS", 1, "f"],
     "invalid expire time in 'hpexpire' command"),
    (["HEXPIREAT", "h", HFE_MAX_MS // 1000 + 1, "FIELDS", 1, "f"],
     "invalid expire time in 'hexpireat' command"),
    (["HPEXPIREAT", "h", HFE_MAX_MS + 1, "FIELDS", 1, "f"],
     "invalid expire time in 'hpexpireat' command"),
    (["HEXPIRE", "h", 10, "FIELDS", 0, "f"], "Parameter `numFields` should be greater than 0"),
    (["HEXPIRE", "h", 10, "FIELDS", -1, "f"],
     "Parameter `numFields` should be greater than 0"),
    (["HEXPIRE", "h", 10, "NX", "FIELDS", "x", "f"],
     "Parameter `numFields` should be greater than 0"),
    (["HEXPIRE", "h", 10, "FIELDS", 2, "f"],
     "The `numfields` parameter must match the number of arguments"),
    (["HEXPIRE", "h", 10, "FIELDS", 1, "f", "g"],
     "The `numfields` parameter must match the number of arguments"),
    (["HEXPIRE", "h", 10, "NX", "XX", "FIELDS", 1, "f"],
     "Mandatory argument FIELDS is missing or not at the right position"),
    (["HEXPIRE", "h", 10, "FIELD", 1, "f"],
     "Mandatory argument FIELDS is missing or not at the right position"),
    (["HEXPIRE", "h", 10, "FIELDS", 1], "wrong number of arguments for 'hexpire' command"),
])
def test_hexpire_errors(r, args, text):
    r.hset("h", "f", "v")
    assert err(r, *args) == text
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "f") == [-1]  # nothing changed


def test_hexpire_time_limit(r):
    r.hset("h", "f", "v")
    assert cmd(r, "HPEXPIREAT", "h", HFE_MAX_MS, "FIELDS", 1, "f") == [1]
    assert cmd(r, "HPEXPIRETIME", "h", "FIELDS", 1, "f") == [HFE_MAX_MS]
    # Relative times count from now, so "now + it" must stay within the limit.
    assert err(r, "HPEXPIRE", "h", HFE_MAX_MS - now_ms() + 100_000, "FIELDS", 1, "f") == \
        "invalid expire time in 'hpexpire' command"


@pytest.mark.min_redis("8.0")
def test_wrongtype_comes_first_then_the_arguments(r):
    r.set("s", "v")
    for args in (["HEXPIRE", "s", -1, "FIELDS", 1, "f"], ["HTTL", "s", "FIELDS", 0, "f"],
                 ["HPERSIST", "s", "NOFIELDS", 1, "f"], ["HGETDEL", "s", "FIELDS", 2, "f"],
                 ["HGETEX", "s", "EX", "x", "FIELDS", 1, "f"]):
        assert err(r, *args) == WRONGTYPE
    # HSETEX reads its options before it looks at the key.
    assert err(r, "HSETEX", "s", "EX", "x", "FIELDS", 1, "f", "v") == \
        "value is not an integer or out of range"
    assert err(r, "HSETEX", "s", "FIELDS", 1, "f", "v") == WRONGTYPE
    # A missing key is no excuse for bad arguments.
    assert err(r, "HEXPIRE", "nokey", -1, "FIELDS", 1, "f") == \
        "invalid expire time, must be >= 0"
    assert err(r, "HTTL", "nokey", "FIELDS", 2, "f") == \
        "The `numfields` parameter must match the number of arguments"


# --- HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME -----------------------------------------------

def test_httl_family(r):
    for name in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME"):
        assert cmd(r, name, "nokey", "FIELDS", 2, "a", "b") == [-2, -2]
    r.hset("h", mapping={"a": 1, "b": 2})
    when = now_ms() + 100_500
    cmd(r, "HPEXPIREAT", "h", when, "FIELDS", 1, "a")
    assert cmd(r, "HPEXPIRETIME", "h", "FIELDS", 3, "a", "b", "zz") == [when, -1, -2]
    # Seconds are rounded up, for the time left and for the timestamp alike.
    assert cmd(r, "HEXPIRETIME", "h", "FIELDS", 1, "a") == [(when + 999) // 1000]
    assert cmd(r, "HTTL", "h", "FIELDS", 2, "zz", "b") == [-2, -1]
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "a")[0] in (100, 101)
    ms = cmd(r, "HPTTL", "h", "FIELDS", 1, "a")[0]
    assert 99_000 < ms <= 100_500


@pytest.mark.parametrize("name", ["HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST",
                                  pytest.param("HGETDEL", marks=pytest.mark.min_redis("8.0"))])
def test_fields_argument_errors(r, name):
    r.hset("h", "f", "v")
    assert err(r, name, "h", "FIELDS", 0, "f") == \
        "Number of fields must be a positive integer"
    assert err(r, name, "h", "FIELDS", "1x", "f") == \
        "Number of fields must be a positive integer"
    assert err(r, name, "h", "FIELDS", "9223372036854775808", "f") == \
        "Number of fields must be a positive integer"
    assert err(r, name, "h", "FIELDS", 2, "f") == \
        "The `numfields` parameter must match the number of arguments"
    assert err(r, name, "h", "FIELDS", 1, "f", "g") == \
        "The `numfields` parameter must match the number of arguments"
    assert err(r, name, "h", "fieldz", 1, "f") == \
        "Mandatory argument FIELDS is missing or not at the right position"
    assert err(r, name, "h", "FIELDS", 1) == \
        f"wrong number of arguments for '{name.lower()}' command"
    assert r.hgetall("h") == {b"f": b"v"}


# --- HPERSIST -----------------------------------------------------------------------------

def test_hpersist(r):
    assert cmd(r, "HPERSIST", "nokey", "FIELDS", 1, "a") == [-2]
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "a")
    assert cmd(r, "HPERSIST", "h", "fields", 4, "a", "b", "zz", "a") == [1, -1, -2, -1]
    assert cmd(r, "HTTL", "h", "FIELDS", 2, "a", "b") == [-1, -1]


def test_hpersist_on_a_plain_hash_keeps_its_encoding(r):
    r.hset("h", "a", "1")
    cmd(r, "HPERSIST", "h", "FIELDS", 1, "a")
    cmd(r, "HTTL", "h", "FIELDS", 1, "a")
    assert r.object("encoding", "h") == b"listpack"


# --- what clears a TTL and what keeps it --------------------------------------------------

def test_hset_clears_the_ttl_increments_keep_it(r):
    r.hset("h", mapping={"s": "x", "m": "x", "i": 1, "f": 1, "n": "x"})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 5, "s", "m", "i", "f", "n")
    r.hset("h", "s", "y")
    cmd(r, "HMSET", "h", "m", "y")
    assert r.hsetnx("h", "n", "y") == 0
    assert r.hincrby("h", "i", 1) == 2
    assert r.hincrbyfloat("h", "f", 0.5) == 1.5
    assert cmd(r, "HTTL", "h", "FIELDS", 5, "s", "m", "n", "i", "f")[:2] == [-1, -1]
    assert all(t > 0 for t in cmd(r, "HTTL", "h", "FIELDS", 3, "n", "i", "f"))


def test_a_key_ttl_and_field_ttls_are_separate(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    r.expire("h", 1000)
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "a")
    assert 990 < r.ttl("h") <= 1000
    r.persist("h")
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "a")[0] > 1000


@pytest.mark.min_redis("8.0")
def test_deleted_and_recreated_field_has_no_ttl(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "a")
    r.hdel("h", "a")
    r.hsetnx("h", "a", "new")
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "a") == [-1]
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "a")
    cmd(r, "HGETDEL", "h", "FIELDS", 1, "a")
    r.hincrby("h", "a", 5)
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "a") == [-1]


# --- expiry: lazy and active -------------------------------------------------------------

def test_expired_fields_are_invisible_to_every_read(r, call):
    r.hset("h", mapping={"gone": "x", "g2": "y", "live": "1"})
    cmd(r, "HPEXPIRE", "h", 30, "FIELDS", 2, "gone", "g2")
    time.sleep(0.06)
    assert r.hget("h", "gone") is None
    assert r.hmget("h", "gone", "live") == [None, b"1"]
    assert r.hlen("h") == 1
    assert r.hgetall("h") == {b"live": b"1"}
    assert r.hkeys("h") == [b"live"] and r.hvals("h") == [b"1"]
    assert r.hexists("h", "g2") is False
    assert r.hstrlen("h", "gone") == 0
    assert call("HRANDFIELD", "h", "-5") == [b"live"] * 5
    assert call("HSCAN", "h", "0") == [b"0", [b"live", b"1"]]
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "gone") == [-2]
    assert cmd(r, "HPERSIST", "h", "FIELDS", 1, "g2") == [-2]
    assert cmd(r, "HEXPIRE", "h", 10, "FIELDS", 1, "gone") == [-2]


def test_expired_fields_are_gone_for_writers_too(r):
    r.hset("h", mapping={"n": "5", "f": "1.5", "x": "v", "keep": "1"})
    cmd(r, "HPEXPIRE", "h", 30, "FIELDS", 3, "n", "f", "x")
    time.sleep(0.06)
    assert r.hincrby("h", "n", 1) == 1  # counts from zero again, without a TTL
    assert r.hincrbyfloat("h", "f", 1) == 1.0
    assert r.hsetnx("h", "x", "new") == 1
    assert r.hdel("h", "zz") == 0
    assert cmd(r, "HTTL", "h", "FIELDS", 3, "n", "f", "x") == [-1, -1, -1]
    assert r.hset("h", "n", "again") == 0


def test_the_last_field_expiring_deletes_the_hash_on_access(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HPEXPIRE", "h", 30, "FIELDS", 2, "a", "b")
    time.sleep(0.06)
    assert r.hlen("h") == 0
    assert r.exists("h") == 0
    assert r.type("h") == b"none"
    # A write finds no hash either and starts a new one.
    r.hset("w", "a", 1)
    cmd(r, "HPEXPIRE", "w", 30, "FIELDS", 1, "a")
    time.sleep(0.06)
    assert r.hincrby("w", "b", 1) == 1
    assert r.hgetall("w") == {b"b": b"1"}


def test_active_expiry_reclaims_fields_and_hashes_nobody_reads(r):
    before = expired_subkeys(r)
    r.hset("all", mapping={f"f{i}": i for i in range(20)})
    r.hset("some", mapping={f"f{i}": i for i in range(20)})
    cmd(r, "HPEXPIRE", "all", 100, "FIELDS", 20, *[f"f{i}" for i in range(20)])
    cmd(r, "HPEXPIRE", "some", 100, "FIELDS", 10, *[f"f{i}" for i in range(10)])
    assert subexpiry(r) == 2
    # DBSIZE and INFO do not touch the hashes: only the server's cycle can do this.
    assert wait_for(lambda: r.dbsize() == 1)
    assert wait_for(lambda: subexpiry(r) == 0)
    assert expired_subkeys(r) - before == 30
    assert r.hlen("some") == 10


def test_active_expiry_follows_a_ttl_brought_forward(r):
    r.hset("h", mapping={"a": 1})
    cmd(r, "HPEXPIRE", "h", 100_000, "FIELDS", 1, "a")
    cmd(r, "HPEXPIRE", "h", 50, "FIELDS", 1, "a")
    assert wait_for(lambda: r.dbsize() == 0)


def test_active_expiry_keeps_later_fields(r):
    before = expired_subkeys(r)
    r.hset("h", mapping={"soon": 1, "later": 2})
    cmd(r, "HPEXPIRE", "h", 50, "FIELDS", 1, "soon")
    cmd(r, "HPEXPIRE", "h", 2500, "FIELDS", 1, "later")
    assert wait_for(lambda: expired_subkeys(r) - before == 1, timeout=2)
    assert r.dbsize() == 1 and subexpiry(r) == 1
    assert wait_for(lambda: r.dbsize() == 0, timeout=5)
    assert expired_subkeys(r) - before == 2


def test_expired_subkeys_counts_every_way_a_field_expires(r):
    r.config_resetstat()
    r.hset("h", mapping={f"f{i}": i for i in range(6)})
    cmd(r, "HPEXPIRE", "h", 30, "FIELDS", 2, "f0", "f1")
    time.sleep(0.06)
    r.hlen("h")  # lazily, or already by the cycle
    assert expired_subkeys(r) == 2
    cmd(r, "HPEXPIREAT", "h", 1, "FIELDS", 1, "f2")  # a time in the past
    assert expired_subkeys(r) == 3
    r.hdel("h", "f4")  # a deletion is not an expiry
    assert expired_subkeys(r) == 3
    r.config_resetstat()
    assert expired_subkeys(r) == 0


@pytest.mark.min_redis("8.0")
def test_expired_subkeys_counts_hgetex_and_hsetex_past_times(r):
    r.config_resetstat()
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    cmd(r, "HGETEX", "h", "PXAT", 1, "FIELDS", 1, "a")
    cmd(r, "HSETEX", "h", "PX", 0, "FIELDS", 2, "b", "x", "new", "y")
    assert expired_subkeys(r) == 3
    cmd(r, "HGETDEL", "h", "FIELDS", 1, "c")  # a deletion is not an expiry
    assert expired_subkeys(r) == 3 and r.exists("h") == 0


def test_field_expiry_is_not_a_change(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HPEXPIRE", "h", 30, "FIELDS", 1, "a")
    before = r.info("persistence")["rdb_changes_since_last_save"]
    time.sleep(0.06)
    assert r.hlen("h") == 1
    assert r.info("persistence")["rdb_changes_since_last_save"] == before


def test_subexpiry_counts_hashes_with_field_ttls(r):
    r.hset("a", mapping={"x": 1, "y": 2})
    r.hset("b", mapping={"x": 1, "y": 2})
    r.hset("plain", "x", 1)
    assert subexpiry(r) == 0
    cmd(r, "HEXPIRE", "a", FAR_S, "FIELDS", 2, "x", "y")
    cmd(r, "HEXPIRE", "b", FAR_S, "FIELDS", 1, "x")
    assert subexpiry(r) == 2
    r.hdel("b", "x")  # its last field with a TTL
    assert subexpiry(r) == 1
    cmd(r, "HPERSIST", "a", "FIELDS", 1, "x")
    assert subexpiry(r) == 1
    r.hset("a", "y", "new")
    assert subexpiry(r) == 0
    cmd(r, "HEXPIRE", "a", FAR_S, "FIELDS", 1, "x")
    r.delete("a")
    assert subexpiry(r) == 0


# --- field TTLs travel with the hash ------------------------------------------------------

def _ttl_ms(r, k, f):
    return cmd(r, "HPEXPIRETIME", k, "FIELDS", 1, f)[0]


def test_rename_and_move_carry_field_ttls(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "a")
    when = _ttl_ms(r, "h", "a")
    r.rename("h", "h2")
    assert _ttl_ms(r, "h2", "a") == when and _ttl_ms(r, "h2", "b") == -1
    assert subexpiry(r) == 1
    r.move("h2", 3)
    r.execute_command("SELECT", 3)
    try:
        assert _ttl_ms(r, "h2", "a") == when
        assert subexpiry(r, "db3") == 1
    finally:
        r.execute_command("SELECT", 0)
    assert subexpiry(r) == 0


def test_copy_gives_the_copy_its_own_field_ttls(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "a")
    when = _ttl_ms(r, "h", "a")
    assert r.copy("h", "c") == 1
    assert _ttl_ms(r, "c", "a") == when
    cmd(r, "HPERSIST", "c", "FIELDS", 1, "a")
    assert _ttl_ms(r, "h", "a") == when  # the source keeps its own
    assert subexpiry(r) == 1
    assert r.object("encoding", "c") == b"listpackex"


def test_renamed_and_copied_hashes_still_expire_by_themselves(r):
    r.hset("h", mapping={"a": 1, "keep": 2})
    cmd(r, "HPEXPIRE", "h", 150, "FIELDS", 1, "a")
    r.copy("h", "c")
    r.rename("h", "h2")
    r.execute_command("SWAPDB", 0, 5)
    r.execute_command("SELECT", 5)
    try:
        # Nobody reads the hashes: the server's cycle finds them where they went.
        assert wait_for(lambda: subexpiry(r, "db5") == 0)
        assert r.hgetall("h2") == {b"keep": b"2"} and r.hgetall("c") == {b"keep": b"2"}
    finally:
        r.execute_command("SELECT", 0)


def test_swapdb_carries_field_ttls(r):
    r.hset("h", mapping={"a": 1})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "a")
    when = _ttl_ms(r, "h", "a")
    r.execute_command("SWAPDB", 0, 1)
    assert subexpiry(r) == 0 and subexpiry(r, "db1") == 1
    r.execute_command("SWAPDB", 0, 1)
    assert _ttl_ms(r, "h", "a") == when


def test_flushdb_forgets_field_ttls(r):
    r.hset("h", mapping={"a": 1})
    cmd(r, "HPEXPIRE", "h", 100, "FIELDS", 1, "a")
    r.flushdb()
    r.hset("h", mapping={"a": 1})
    time.sleep(0.25)
    assert r.hgetall("h") == {b"a": b"1"}


# --- encoding and field order -------------------------------------------------------------

def test_listpackex_orders_fields_by_expiry(r, call):
    at = now_ms() // 1000 + FAR_S
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3, "d": 4})
    assert r.object("encoding", "h") == b"listpack"
    cmd(r, "HEXPIREAT", "h", at, "FIELDS", 1, "c")
    assert r.object("encoding", "h") == b"listpackex"
    assert r.hkeys("h") == [b"c", b"a", b"b", b"d"]
    cmd(r, "HEXPIREAT", "h", at - 10, "FIELDS", 1, "d")
    assert r.hkeys("h") == [b"d", b"c", b"a", b"b"]
    cmd(r, "HEXPIREAT", "h", at, "FIELDS", 1, "b")  # goes before the equal time
    assert r.hkeys("h") == [b"d", b"b", b"c", b"a"]
    cmd(r, "HPERSIST", "h", "FIELDS", 1, "d")  # no TTL: to the end
    assert r.hkeys("h") == [b"b", b"c", b"a", b"d"]
    r.hset("h", "b", "new")  # HSET drops the TTL: to the end as well
    assert call("HGETALL", "h") == [b"c", b"3", b"a", b"1", b"d", b"4", b"b", b"new"]
    r.hset("h", "e", 5)
    assert call("HSCAN", "h", 0, "NOVALUES") == [b"0", [b"c", b"a", b"d", b"b", b"e"]]
    r.hincrby("h", "c", 1)  # keeps its TTL and its place
    assert r.hkeys("h") == [b"c", b"a", b"d", b"b", b"e"]


def test_listpackex_is_one_way_and_still_becomes_a_hashtable(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    assert cmd(r, "HEXPIRE", "h", 100, "FIELDS", 1, "zz") == [-2]  # nothing set, yet...
    assert r.object("encoding", "h") == b"listpackex"
    r.hset("g", mapping={"a": 1})
    cmd(r, "HEXPIRE", "g", FAR_S, "FIELDS", 1, "a")
    cmd(r, "HPERSIST", "g", "FIELDS", 1, "a")
    assert r.object("encoding", "g") == b"listpackex"
    r.hset("g", "long", "x" * 65)
    assert r.object("encoding", "g") == b"hashtable"


@pytest.mark.min_redis("8.0")
def test_reads_do_not_change_the_encoding(r):
    r.hset("h", mapping={"a": 1})
    cmd(r, "HTTL", "h", "FIELDS", 1, "a")
    cmd(r, "HGETEX", "h", "FIELDS", 1, "a")
    cmd(r, "HGETDEL", "h", "FIELDS", 1, "zz")
    assert r.object("encoding", "h") == b"listpack"
    cmd(r, "HGETEX", "h", "PERSIST", "FIELDS", 1, "a")
    assert r.object("encoding", "h") == b"listpackex"


def test_hashtable_keeps_field_ttls(r):
    r.hset("h", mapping={f"f{i}": i for i in range(600)})
    assert r.object("encoding", "h") == b"hashtable"
    cmd(r, "HPEXPIRE", "h", 50, "FIELDS", 2, "f1", "f2")
    assert r.object("encoding", "h") == b"hashtable"
    assert wait_for(lambda: r.hlen("h") == 598)


# --- HGETDEL ------------------------------------------------------------------------------

@pytest.mark.min_redis("8.0")
def test_hgetdel(r):
    assert cmd(r, "HGETDEL", "nokey", "FIELDS", 2, "a", "b") == [None, None]
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert cmd(r, "HGETDEL", "h", "FIELDS", 3, "a", "zz", "a") == [b"1", None, None]
    assert r.hgetall("h") == {b"b": b"2", b"c": b"3"}
    assert cmd(r, "HGETDEL", "h", "fields", 2, "c", "b") == [b"3", b"2"]
    assert r.exists("h") == 0


@pytest.mark.min_redis("8.0")
def test_hgetdel_skips_expired_fields(r):
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    cmd(r, "HPEXPIRE", "h", 20, "FIELDS", 1, "b")
    time.sleep(0.05)
    assert cmd(r, "HGETDEL", "h", "FIELDS", 2, "b", "c") == [None, b"3"]
    assert r.hgetall("h") == {b"a": b"1"}


# --- HGETEX -------------------------------------------------------------------------------

@pytest.mark.min_redis("8.0")
def test_hgetex_without_option_is_hmget(r):
    assert cmd(r, "HGETEX", "nokey", "FIELDS", 2, "a", "b") == [None, None]
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "a")
    assert cmd(r, "HGETEX", "h", "FIELDS", 3, "a", "zz", "b") == [b"1", None, b"2"]
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "a")[0] > 1000


@pytest.mark.min_redis("8.0")
@pytest.mark.parametrize("option, unit, absolute", [
    ("EX", 1000, False), ("PX", 1, False), ("EXAT", 1000, True), ("PXAT", 1, True),
])
def test_hgetex_sets_the_ttl(r, option, unit, absolute):
    r.hset("h", mapping={"a": 1, "b": 2})
    before = now_ms()
    arg = (before + 5_000_000) // unit if absolute else 5_000_000 // unit
    assert cmd(r, "HGETEX", "h", option, arg, "FIELDS", 2, "a", "zz") == [b"1", None]
    when = _ttl_ms(r, "h", "a")
    if absolute:
        assert when == arg * unit
    else:
        assert before + 5_000_000 <= when <= now_ms() + 5_000_000
    assert _ttl_ms(r, "h", "b") == -1
    assert r.hlen("h") == 2


@pytest.mark.min_redis("8.0")
def test_hgetex_persist_and_past_times(r):
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 2, "a", "b")
    assert cmd(r, "HGETEX", "h", "PERSIST", "FIELDS", 2, "a", "c") == [b"1", b"3"]
    assert cmd(r, "HTTL", "h", "FIELDS", 3, "a", "b", "c")[::2] == [-1, -1]
    # A time not in the future: the values come back, then the fields are gone.
    assert cmd(r, "HGETEX", "h", "PX", 0, "FIELDS", 1, "a") == [b"1"]
    assert cmd(r, "HGETEX", "h", "PXAT", 1, "FIELDS", 3, "b", "c", "b") == [b"2", b"3", None]
    assert r.exists("h") == 0


@pytest.mark.min_redis("8.0")
@pytest.mark.parametrize("args, text", [
    (["HGETEX", "h", "XFIELDX", 1, "a"],
     "Mandatory argument FIELDS is missing or not at the right position"),
    (["HGETEX", "h", "PXAT", 1, 1],
     "Mandatory argument FIELDS is missing or not at the right position"),
    (["HGETEX", "h", "PERSIST", 1, "FIELDS", 1, "a"],
     "Mandatory argument FIELDS is missing or not at the right position"),
    (["HGETEX", "h", "FIELDS", 2, "a"],
     "The `numfields` parameter must match the number of arguments"),
    (["HGETEX", "h", "FIELDS", 0, "a"], "Number of fields must be a positive integer"),
    (["HGETEX", "h", "FIELDS", -1, "a"], "Number of fields must be a positive integer"),
    (["HGETEX", "h", "EX", "bla", "FIELDS", 1, "a"], "value is not an integer or out of range"),
    (["HGETEX", "h", "EXAT", "9223372036854775808", "FIELDS", 1, "a"],
     "value is not an integer or out of range"),
    (["HGETEX", "h", "PX", -1, "FIELDS", 1, "a"], "invalid expire time, must be >= 0"),
    (["HGETEX", "h", "EX", -1, "FIELDS", 1, "a"], "invalid expire time, must be >= 0"),
    (["HGETEX", "h", "EX", 1 << 48, "FIELDS", 1, "a"],
     "invalid expire time in 'hgetex' command"),
    (["HGETEX", "h", "PXAT", HFE_MAX_MS + 1, "FIELDS", 1, "a"],
     "invalid expire time in 'hgetex' command"),
    (["HGETEX", "h", "EX", 10, "FIELDS"], "wrong number of arguments for 'hgetex' command"),
    (["HGETEX", "h", "FIELDS", 1], "wrong number of arguments for 'hgetex' command"),
])
def test_hgetex_errors(r, args, text):
    r.hset("h", "a", "1")
    assert err(r, *args) == text
    assert r.object("encoding", "h") == b"listpack"


# --- HSETEX -------------------------------------------------------------------------------

@pytest.mark.min_redis("8.0")
def test_hsetex_sets_values_and_ttls(r):
    assert cmd(r, "HSETEX", "h", "FIELDS", 2, "a", "1", "b", "2") == 1
    assert r.hgetall("h") == {b"a": b"1", b"b": b"2"}
    assert cmd(r, "HSETEX", "h", "EX", FAR_S, "FIELDS", 2, "a", "x", "c", "3") == 1
    assert r.hgetall("h") == {b"a": b"x", b"b": b"2", b"c": b"3"}
    assert [t > 0 for t in cmd(r, "HTTL", "h", "FIELDS", 3, "a", "b", "c")] == \
        [True, False, True]
    assert cmd(r, "HSETEX", "h", "KEEPTTL", "FIELDS", 2, "a", "y", "b", "y") == 1
    assert cmd(r, "HTTL", "h", "FIELDS", 2, "a", "b")[1] == -1
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "a")[0] > 0
    assert cmd(r, "HSETEX", "h", "FIELDS", 1, "a", "z") == 1  # no option: TTL dropped
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "a") == [-1]
    when = now_ms() + 9_000_000
    assert cmd(r, "HSETEX", "h", "PXAT", when, "FIELDS", 1, "b", "w") == 1
    assert _ttl_ms(r, "h", "b") == when


@pytest.mark.min_redis("8.0")
def test_hsetex_fnx_fxx(r):
    assert cmd(r, "HSETEX", "h", "FXX", "FIELDS", 1, "a", "1") == 0
    assert r.exists("h") == 0
    assert cmd(r, "HSETEX", "h", "FNX", "FIELDS", 2, "a", "1", "b", "2") == 1
    assert cmd(r, "HSETEX", "h", "FNX", "EX", 100, "FIELDS", 2, "c", "3", "a", "x") == 0
    assert cmd(r, "HSETEX", "h", "FXX", "FIELDS", 2, "a", "x", "c", "3") == 0
    assert r.hgetall("h") == {b"a": b"1", b"b": b"2"}
    assert cmd(r, "HSETEX", "h", "FXX", "PX", 100_000, "FIELDS", 2, "a", "x", "b", "y") == 1
    assert r.hgetall("h") == {b"a": b"x", b"b": b"y"}
    assert cmd(r, "HTTL", "h", "FIELDS", 1, "b")[0] > 0


@pytest.mark.min_redis("8.0")
def test_hsetex_conditions_ignore_expired_fields(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HPEXPIRE", "h", 20, "FIELDS", 1, "a")
    time.sleep(0.05)
    assert cmd(r, "HSETEX", "h", "FXX", "FIELDS", 1, "a", "x") == 0
    assert cmd(r, "HSETEX", "h", "FNX", "FIELDS", 1, "a", "x") == 1


@pytest.mark.min_redis("8.0")
def test_hsetex_with_a_past_time(r):
    assert cmd(r, "HSETEX", "h", "PXAT", 1, "FIELDS", 1, "a", "1") == 1
    assert r.exists("h") == 0
    r.hset("h", mapping={"a": 1, "b": 2})
    assert cmd(r, "HSETEX", "h", "EXAT", 1, "FIELDS", 1, "a", "x") == 1
    assert r.hgetall("h") == {b"b": b"2"}
    assert cmd(r, "HSETEX", "h", "PX", 0, "FIELDS", 1, "b", "x") == 1
    assert r.exists("h") == 0


@pytest.mark.min_redis("8.0")
@pytest.mark.parametrize("args, text", [
    (["FIELDS", 2, "a", "b"], "wrong number of arguments for 'hsetex' command"),
    (["FIELDS", 2, "a", "b", "c", "d", "e"], "wrong number of arguments for 'hsetex' command"),
    (["FIELDS", 1, "a", "b", "unknown"], "wrong number of arguments for 'hsetex' command"),
    (["FIELDS", 3, "a", "b"], "wrong number of arguments for 'hsetex' command"),
    (["nx", "FIELDS", 1, "a", "b"], "unknown argument: nx"),
    (["1", "FIELDS", 1, "a", "b"], "unknown argument: 1"),
    (["FXX", "FXX", "EX", 100, "FIELDS", 1, "a", "b"],
     "Only one of FXX or FNX arguments can be specified"),
    (["FNX", "FXX", "FIELDS", 1, "a", "b"], "Only one of FXX or FNX arguments can be specified"),
    (["EX", 100, "PX", 1000, "FIELDS", 1, "a", "b"],
     "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"),
    (["KEEPTTL", "EX", 100, "FIELDS", 1, "a", "b"],
     "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"),
    (["KEEPTTL", "KEEPTTL", "FIELDS", 1, "a", "b"],
     "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"),
    (["EX", "FIELDS", 1, "a", "b"], "value is not an integer or out of range"),
    (["EXAT", -1, 1, "a", "b"], "invalid expire time, must be >= 0"),
    (["PXAT", 1 << 48, 1, "a", "b"], "invalid expire time in 'hsetex' command"),
    (["EX", (1 << 48) // 1000, "FIELDS", 1, "a", "b"],
     "invalid expire time in 'hsetex' command"),
    (["FIELDS", "x", "a", "b"], "invalid number of fields"),
    (["FIELDS", 0, "a", "b"], "invalid number of fields"),
    (["FIELDS", -1, "a", "b"], "invalid number of fields"),
    (["FIELDS", "9223372036854775808", "a", "b"], "invalid number of fields"),
    (["FIELDS", 2147483648, "a", "b"], "invalid number of fields"),
    (["FNX", "EX", 1, "PX"],
     "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"),
    (["FNX", "FXX", "EX", 1], "Only one of FXX or FNX arguments can be specified"),
])
def test_hsetex_errors(r, args, text):
    r.hset("h", "a", "1")
    assert err(r, "HSETEX", "h", *args) == text
    assert r.hgetall("h") == {b"a": b"1"}


@pytest.mark.min_redis("8.0")
def test_hsetex_converts_like_hset(r):
    cmd(r, "HSETEX", "h", "EX", FAR_S, "FIELDS", 1, "a", "1")
    assert r.object("encoding", "h") == b"listpackex"
    cmd(r, "HSETEX", "s", "FIELDS", 1, "a", "1")
    assert r.object("encoding", "s") == b"listpack"
    cmd(r, "HSETEX", "h", "KEEPTTL", "FIELDS", 1, "b", "x" * 65)
    assert r.object("encoding", "h") == b"hashtable"
    assert cmd(r, "HTTL", "h", "FIELDS", 2, "a", "b")[1] == -1


# --- bookkeeping: dirty counter, WATCH, command table ------------------------------------

def test_dirty_counter_per_field_expiry_command(r):
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3, "d": 4})
    cases = [
        (("HEXPIRE", "h", FAR_S, "FIELDS", 3, "a", "b", "zz"), 2),
        (("HEXPIRE", "h", FAR_S, "NX", "FIELDS", 2, "a", "b"), 0),
        (("HEXPIRE", "nokey", FAR_S, "FIELDS", 1, "a"), 0),
        (("HPEXPIREAT", "h", 1, "FIELDS", 2, "c", "zz"), 1),
        (("HTTL", "h", "FIELDS", 1, "a"), 0),
        (("HPERSIST", "h", "FIELDS", 3, "a", "b", "d"), 1),
        (("HPERSIST", "h", "FIELDS", 1, "a"), 0),
    ]
    assert dirty_changes(r, [argv for argv, _ in cases]) == cases


@pytest.mark.min_redis("8.0")
def test_dirty_counter_per_hgetex_hgetdel_hsetex(r):
    r.hset("h", mapping={"a": 1, "b": 2, "d": 4})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "d")
    cases = [
        (("HGETEX", "h", "EX", FAR_S, "FIELDS", 3, "a", "b", "zz"), 2),
        (("HGETEX", "h", "PERSIST", "FIELDS", 2, "a", "d"), 2),
        (("HGETEX", "h", "PERSIST", "FIELDS", 1, "a"), 0),
        (("HGETEX", "h", "FIELDS", 1, "a"), 0),
        (("HGETEX", "h", "PXAT", 1, "FIELDS", 1, "b"), 1),
        (("HGETDEL", "h", "FIELDS", 3, "a", "zz", "a"), 1),
        (("HGETDEL", "nokey", "FIELDS", 1, "a"), 0),
        (("HSETEX", "h", "FIELDS", 2, "x", "1", "y", "2"), 2),
        (("HSETEX", "h", "KEEPTTL", "FIELDS", 2, "x", "1", "x", "2"), 2),
        (("HSETEX", "h", "FXX", "FIELDS", 1, "nope", "1"), 0),
        (("HSETEX", "new", "PX", 0, "FIELDS", 1, "x", "1"), 1),
    ]
    assert dirty_changes(r, [argv for argv, _ in cases]) == cases


@pytest.mark.parametrize("write", [
    ["HEXPIRE", "h", FAR_S, "FIELDS", 1, "f"], ["HPERSIST", "h", "FIELDS", 1, "g"],
    ["HPEXPIREAT", "h", 1, "FIELDS", 1, "f"],
], ids=lambda a: a[0])
def test_field_ttl_writes_abort_a_watching_transaction(r, make_client, write):
    r.hset("h", mapping={"f": "v", "g": "w"})
    cmd(r, "HEXPIRE", "h", FAR_S, "FIELDS", 1, "g")
    assert watch_broken(make_client, "h", lambda: cmd(r, *write))


def test_untouched_field_ttl_commands_do_not_abort_a_transaction(r, make_client):
    r.hset("h", mapping={"f": "v"})

    def untouched():
        cmd(r, "HEXPIRE", "h", FAR_S, "XX", "FIELDS", 1, "f")  # condition fails: no change
        cmd(r, "HPERSIST", "h", "FIELDS", 1, "f")
    assert not watch_broken(make_client, "h", untouched)


@pytest.mark.parametrize("name, arity, flags, spec_flags", [
    ("hexpire", -6, ["write", "fast"], ["RW", "update"]),
    ("hpexpire", -6, ["write", "fast"], ["RW", "update"]),
    ("hexpireat", -6, ["write", "fast"], ["RW", "update"]),
    ("hpexpireat", -6, ["write", "fast"], ["RW", "update"]),
    ("httl", -5, ["readonly", "fast"], ["RO", "access"]),
    ("hpttl", -5, ["readonly", "fast"], ["RO", "access"]),
    ("hexpiretime", -5, ["readonly", "fast"], ["RO", "access"]),
    ("hpexpiretime", -5, ["readonly", "fast"], ["RO", "access"]),
    ("hpersist", -5, ["write", "fast"], ["RW", "update"]),
    pytest.param("hgetdel", -5, ["write", "fast"], ["RW", "access", "delete"],
                 marks=pytest.mark.min_redis("8.0")),
    pytest.param("hgetex", -5, ["write", "fast"], ["RW", "access", "update"],
                 marks=pytest.mark.min_redis("8.0")),
    pytest.param("hsetex", -6, ["write", "denyoom", "fast"], ["RW", "update"],
                 marks=pytest.mark.min_redis("8.0")),
])
def test_command_info(call, name, arity, flags, spec_flags):
    info = call.resp3("COMMAND", "INFO", name)[0]
    assert info[0] == name.encode() and info[1] == arity
    assert [f.decode() for f in info[2]] == flags
    # Relative TTLs carry TTL's tip (httl.json/hpttl.json); absolute times and writes none.
    tips = [b"nondeterministic_output"] if name in ("httl", "hpttl") else []
    assert info[7] == tips
    assert info[3:6] == [1, 1, 1]
    cats = {c.decode() for c in info[6]}
    assert {"@hash", "@fast"} <= cats and ("@write" in cats) == ("write" in flags)
    spec = info[8][0]
    assert [f.decode() for f in spec[b"flags"]] == spec_flags
    docs = call.resp3("COMMAND", "DOCS", name)[name.encode()]
    assert docs[b"group"] == b"hash"
    assert [a[b"name"] for a in docs[b"arguments"]][-1] == b"fields"


def test_client_pause_keeps_expired_fields_until_it_ends(r, raw):
    r.hset("h", mapping={"a": 1, "b": 2})
    cmd(r, "HPEXPIRE", "h", 20, "FIELDS", 1, "a")
    before = expired_subkeys(r)
    pauser = raw()
    pauser.send(b"CLIENT PAUSE 5000 WRITE\r\n")
    assert pauser.read_reply() == b"+OK\r\n"
    try:
        time.sleep(0.1)
        # Reads see the field gone, but nothing is reclaimed while expiry is paused.
        assert r.hget("h", "a") is None
        assert r.hlen("h") == 1 and r.hgetall("h") == {b"b": b"2"}
        assert cmd(r, "HTTL", "h", "FIELDS", 1, "a") == [-2]
        assert expired_subkeys(r) == before
        assert subexpiry(r) == 1
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert r.hlen("h") == 1
    assert wait_for(lambda: expired_subkeys(r) - before == 1)


# --- the store's bookkeeping (streamd internals) ------------------------------------------

@pytest.mark.streamd_only
def test_expiry_index_keeps_one_entry_per_hash_whose_ttls_only_grow():
    from streamd.store.hashes import Hash
    from streamd.store.keyspace import Keyspace

    ks = Keyspace(1)
    db = ks.dbs[0]
    h = Hash({b"a": b"1"})
    db.data[b"h"] = h
    t = 10**12
    for i in range(1000):
        assert h.expire_field(b"a", t + 1000 + i, "", t) == 1
        db.track_field_ttls(b"h", h)
    assert len(db.hexpires.heap) == 1
    assert db.subexpiry() == 1
    # Not due yet: nothing happens; once due, the entry comes back for the real time.
    assert db.active_expire_fields(t + 500) == 0
    assert db.active_expire_fields(t + 1001) == 0
    assert [e[0] for e in db.hexpires.heap] == [t + 1999]
    assert db.active_expire_fields(t + 2000) == 1
    assert b"h" not in db.data and not db.hexpires
    db.data[b"h"] = h = Hash({b"a": b"1"})
    h.expire_field(b"a", t + 5000, "", t)
    db.track_field_ttls(b"h", h)
    db.flush()
    assert not db.hexpires  # nothing left to look at once the data is gone


@pytest.mark.streamd_only
def test_cron_tick_looks_at_no_hash_when_no_field_is_due():
    from streamd.store.hashes import Hash
    from streamd.store.keyspace import Keyspace, now_ms

    looks = []

    def counted(name):
        # Reading a hash's TTL bookkeeping is what examining it for due fields takes.
        slot = getattr(Hash, name)
        return property(lambda h: looks.append(name) or slot.__get__(h), slot.__set__)

    class Watched(Hash):
        __slots__ = ()
        ttls = counted("ttls")
        next_due = counted("next_due")
        indexed_at = counted("indexed_at")

    ks = Keyspace(16)
    db = ks.dbs[0]
    far = now_ms() + 10**9
    for i in range(2_000):
        h = Watched({b"f": b"v"})
        k = b"h%d" % i
        db.data[k] = h
        h.expire_field(b"f", far + i, "", 0)
        db.track_field_ttls(k, h)
    entries = list(db.hexpires.heap)
    assert len(entries) == 2_000 and looks
    looks.clear()
    for _ in range(100):
        assert ks.active_expire() == 0
    assert looks == []  # no hash was examined
    heap = db.hexpires.heap
    assert len(heap) == len(entries) and all(a is b for a, b in zip(heap, entries))


@pytest.mark.streamd_only
def test_stale_index_entries_are_dropped():
    from streamd.store.hashes import Hash
    from streamd.store.keyspace import Keyspace

    ks = Keyspace(1)
    db = ks.dbs[0]
    t = 10**12
    old = Hash({b"a": b"1"})
    db.data[b"k"] = old
    old.expire_field(b"a", t + 10, "", t)
    db.track_field_ttls(b"k", old)
    db.data[b"k"] = Hash({b"a": b"fresh"})  # replaced without ever being read
    assert db.active_expire_fields(t + 100) == 0
    assert db.data[b"k"] == {b"a": b"fresh"} and not db.hexpires
    assert db.subexpiry() == 0


@pytest.mark.streamd_only
def test_lazy_expiry_alone_reclaims_fields():
    # No cron here: only the lookup a command makes can drop the fields.
    from streamd.store.hashes import Hash
    from streamd.store.keyspace import Keyspace

    ks = Keyspace(1)
    db = ks.dbs[0]
    t = 10**12
    h = Hash({b"a": b"1", b"b": b"2"})
    db.data[b"h"] = h
    h.expire_field(b"a", t + 10, "", t)
    assert db.expire_fields(b"h", h, t + 5) is h and len(h) == 2
    assert db.expire_fields(b"h", h, t + 11) is h and h == {b"b": b"2"}
    assert ks.expired_subkeys == 1
    h.expire_field(b"b", t + 20, "", t)
    assert db.expire_fields(b"h", h, t + 21) is None
    assert b"h" not in db.data and ks.expired_subkeys == 2


@pytest.mark.streamd_only
def test_deleted_hashes_are_not_kept_alive_by_the_index():
    import gc
    import weakref

    from streamd.store.hashes import Hash
    from streamd.store.keyspace import Keyspace, now_ms

    ks = Keyspace(1)
    db = ks.dbs[0]
    far = now_ms() + 10**10  # months ahead: its entry would not surface for a long time
    refs = []
    for i in range(5000):
        k = b"h%d" % i
        h = Hash({b"f": b"v"})
        db.add(k, h)
        h.expire_field(b"f", far, "", 0)
        db.track_field_ttls(k, h)
        db.delete(k)
        refs.append(weakref.ref(h))
    del h
    gc.collect()
    assert not any(ref() for ref in refs)
    assert len(db.hexpires.heap) < 200  # rebuilt as it grew, not one entry per deletion
    live = Hash({b"f": b"v"})
    db.add(b"live", live)
    live.expire_field(b"f", now_ms() + 50, "", 0)
    db.track_field_ttls(b"live", live)
    time.sleep(0.1)
    assert db.active_expire_fields(now_ms()) == 1  # the live one still comes up on time
