"""Subkey notifications (Redis 8.8): hash events that name the fields they touched, on the
four channel kinds that notify-keyspace-events' letters S, T, I and V enable.

    __subkeyspace@<db>__:<key>                 <event>|<len>:<field>[,...]
    __subkeyevent@<db>__:<event>               <keylen>:<key>|<len>:<field>[,...]
    __subkeyspaceitem@<db>__:<key>\\n<field>    <event>         (one message per field)
    __subkeyspaceevent@<db>__:<event>|<key>    <len>:<field>[,...]

They follow the event's keyspace and keyevent messages, and like those they need the
event's class (h for every hash event) besides their own letter.
"""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import pattern_listener

pytestmark = pytest.mark.min_redis("8.8")


@pytest.fixture
def sub(r, target):
    """``run(*command) -> [(channel, message), ...]``: what one command published on every
    keyspace and subkey channel, with notify-keyspace-events ``sub.flags`` (KEAnSTIV unless
    a test sets another), restored afterwards."""
    def run(*command) -> list:
        r.config_set("notify-keyspace-events", run.flags)
        r.execute_command("PING")
        drain(0.01)
        try:
            r.execute_command(*command)
        except redis.ResponseError:
            pass
        r.execute_command("PING")
        return drain()

    with pattern_listener(target, "__key*", "__subkey*") as drain:
        run.flags = "KEAnSTIV"
        run.drain = drain
        yield run
        r.config_set("notify-keyspace-events", "")


def subkeys(event: str, key: str, *fields: str, db: int = 0) -> list:
    """The four subkey messages of ``event`` on ``key`` naming ``fields``, in Redis's order."""
    listed = ",".join(f"{len(f.encode())}:{f}" for f in fields).encode()
    k, ev = key.encode(), event.encode()
    return ([(b"__subkeyspace@%d__:%s" % (db, k), ev + b"|" + listed),
             (b"__subkeyevent@%d__:%s" % (db, ev), b"%d:%s|%s" % (len(k), k, listed))]
            + [(b"__subkeyspaceitem@%d__:%s\n%s" % (db, k, f.encode()), ev) for f in fields]
            + [(b"__subkeyspaceevent@%d__:%s|%s" % (db, ev, k), listed)])


def keyed(event: str, key: str, db: int = 0) -> list:
    """The keyspace and keyevent messages of ``event`` on ``key``."""
    return [(f"__keyspace@{db}__:{key}".encode(), event.encode()),
            (f"__keyevent@{db}__:{event}".encode(), key.encode())]


def both(event: str, key: str, *fields: str) -> list:
    return keyed(event, key) + subkeys(event, key, *fields)


def test_hset_names_every_field_it_sets(r, sub):
    assert sub("HSET", "h", "f1", "v", "field2", "v") == (
        keyed("new", "h") + both("hset", "h", "f1", "field2"))
    assert sub("HSET", "h", "f1", "w") == both("hset", "h", "f1")
    assert sub("HMSET", "h", "a", "1") == both("hset", "h", "a")
    assert sub("HSETNX", "h", "a", "2") == []
    assert sub("HSETNX", "h", "b", "2") == both("hset", "h", "b")


def test_hdel_names_the_fields_it_deleted(r, sub):
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert sub("HDEL", "h", "a", "missing", "b") == both("hdel", "h", "a", "b")
    assert sub("HDEL", "h", "missing") == []
    assert sub("HDEL", "h", "c") == both("hdel", "h", "c") + keyed("del", "h")


def test_increments_name_their_field(r, sub):
    assert sub("HINCRBY", "h", "n", "2") == keyed("new", "h") + both("hincrby", "h", "n")
    assert sub("HINCRBYFLOAT", "h", "x", "1.5") == both("hincrbyfloat", "h", "x")
    assert sub("HINCRBY", "h", "x", "1") == []  # an error: not an integer


def test_field_ttl_commands_name_the_fields_they_changed(r, sub):
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert sub("HEXPIRE", "h", "100", "FIELDS", "3", "a", "zz", "b") == (
        both("hexpire", "h", "a", "b"))
    assert sub("HEXPIRE", "h", "100", "NX", "FIELDS", "2", "a", "c") == both("hexpire", "h", "c")
    assert sub("HPERSIST", "h", "FIELDS", "3", "c", "zz", "b") == both("hpersist", "h", "c", "b")
    assert sub("HPERSIST", "h", "FIELDS", "1", "b") == []
    assert sub("HPEXPIRE", "h", "0", "FIELDS", "2", "b", "a") == both("hdel", "h", "b", "a")
    assert sub("HGETEX", "h", "EX", "100", "FIELDS", "2", "zz", "c") == both("hexpire", "h", "c")
    assert sub("HGETEX", "h", "PERSIST", "FIELDS", "1", "c") == both("hpersist", "h", "c")
    assert sub("HSETEX", "h", "EX", "100", "FIELDS", "2", "x", "1", "y", "2") == (
        both("hset", "h", "x", "y") + both("hexpire", "h", "x", "y"))
    assert sub("HSETEX", "h", "KEEPTTL", "FIELDS", "1", "x", "3") == both("hset", "h", "x")
    assert sub("HGETDEL", "h", "FIELDS", "3", "x", "zz", "x") == both("hdel", "h", "x")
    assert sub("HSETEX", "h", "PXAT", "1", "FIELDS", "2", "y", "1", "c", "2") == (
        both("hset", "h", "y", "c") + both("hdel", "h", "y", "c") + keyed("del", "h"))


def test_expired_fields_are_named_soonest_first_in_one_hexpired(r, sub):
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3, "d": 4})
    sub.flags = "KEhSTIV"
    r.config_set("notify-keyspace-events", sub.flags)
    r.execute_command("HPEXPIRE", "h", "100000", "FIELDS", "1", "c")
    # While writes are paused nothing expires: both fields run out, then go in one pass.
    r.execute_command("HPEXPIRE", "h", "30", "FIELDS", "1", "a")
    r.execute_command("HPEXPIRE", "h", "20", "FIELDS", "1", "b")
    r.execute_command("CLIENT", "PAUSE", "5000", "WRITE")
    time.sleep(0.1)
    sub.drain(0.01)
    r.execute_command("CLIENT", "UNPAUSE")
    deadline = time.monotonic() + 5
    got = []
    while time.monotonic() < deadline and len(got) < 6:  # the expiry cycle's, or HLEN's
        time.sleep(0.2)
        r.hlen("h")
        got += sub.drain(0.05)
    assert got == both("hexpired", "h", "b", "a")


def test_field_names_are_length_prefixed_and_binary_safe(r, sub):
    fields = ["a,b", "7:x", "", "é", "p|q"]
    args = [x for f in fields for x in (f, "v")]
    assert sub("HSET", "h", *args) == keyed("new", "h") + both("hset", "h", *fields)


def test_each_letter_enables_one_channel_kind(r, sub):
    r.hset("h", "a", "1")
    everything = subkeys("hset", "h", "a")
    for letters, kept in (("S", [0]), ("T", [1]), ("I", [2]), ("V", [3]), ("ST", [0, 1]),
                          ("IV", [2, 3])):
        sub.flags = "h" + letters
        assert sub("HSET", "h", "a", "2") == [everything[i] for i in kept], letters


def test_subkey_channels_need_the_event_class(r, sub):
    # The class gates the event before any channel is looked at: without h, nothing.
    r.hset("h", mapping={"a": 1, "b": 2})
    sub.flags = "STIV"
    assert sub("HSET", "h", "a", "2") == []
    sub.flags = "gSTIV"  # del is generic, but goes out on K or E only
    assert sub("HDEL", "h", "a", "b") == []
    sub.flags = "AK"  # the key channel alone: A has h, but no subkey letter is given
    assert sub("HSET", "h", "a", "2") == keyed("hset", "h")[:1]


def test_events_without_fields_use_only_the_key_channels(r, sub):
    r.hset("h", "a", "1")
    assert sub("DEL", "h") == keyed("del", "h")
    assert sub("SET", "s", "v") == keyed("new", "s") + keyed("set", "s")


def test_a_key_holding_a_newline_skips_the_item_channel(r, sub):
    key = "k\nx"
    published = sub("HSET", key, "a", "1")
    assert published == keyed("new", key) + [
        m for m in both("hset", key, "a") if not m[0].startswith(b"__subkeyspaceitem")]


def test_subkey_events_of_other_databases(r, sub, target):
    other = target.client()
    other.execute_command("SELECT", 3)
    try:
        sub.flags = "hST"
        r.config_set("notify-keyspace-events", "hST")
        sub.drain(0.01)
        other.hset("h", "a", "1")
        r.execute_command("PING")
        assert sub.drain() == subkeys("hset", "h", "a", db=3)[:2]
    finally:
        other.flushdb()
        other.close()


def test_config_spells_the_letters_after_k_e_and_m(r):
    try:
        for given, shown in (("STIVKEA", b"AKESTIV"), ("hV", b"hV"), ("VITSm", b"mSTIV"),
                             ("ES$", b"$ES")):
            r.config_set("notify-keyspace-events", given)
            assert r.execute_command("CONFIG", "GET", "notify-keyspace-events") in (
                [b"notify-keyspace-events", shown], {b"notify-keyspace-events": shown})
    finally:
        r.config_set("notify-keyspace-events", "")
