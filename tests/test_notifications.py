"""Keyspace notifications (notify-keyspace-events): which events each command publishes,
in which order, on __keyspace@<db>__:<key> and __keyevent@<db>__:<event>.

The tables were recorded from Redis 7.0.15 with "KEAn" (every class, new-key events too).
"""

from __future__ import annotations

import time

import pytest
import redis


@pytest.fixture
def events(r, target):
    """``record(*command) -> [(channel, message), ...]``: what one command published, with
    notify-keyspace-events set to ``events.flags`` (restored afterwards)."""
    listener = target.client()
    sub = listener.pubsub()
    sub.psubscribe("__key*__:*")
    assert sub.get_message(timeout=2)["type"] == "psubscribe"

    def set_flags(flags: str) -> None:
        r.config_set("notify-keyspace-events", flags)

    def drain(timeout: float = 0.05) -> list:
        got = []
        while True:
            m = sub.get_message(timeout=timeout)
            if m is None:
                return got
            got.append((m["channel"].decode(), m["data"].decode()))

    def record(*command) -> list:
        r.execute_command("PING")  # no event: anything before this one has arrived
        drain(0.01)
        try:
            r.execute_command(*command)
        except redis.ResponseError:  # an error publishes nothing; the tables say so
            pass
        return drain()

    record.set_flags = set_flags
    record.drain = drain
    set_flags("KEAn")
    yield record
    r.config_set("notify-keyspace-events", "")
    sub.close()
    listener.close()


def both(key: str, *events: str, db: int = 0) -> list:
    """Each event on both channels: keyspace (message: event), then keyevent (message: key)."""
    out = []
    for ev in events:
        out += [(f"__keyspace@{db}__:{key}", ev), (f"__keyevent@{db}__:{ev}", key)]
    return out


STRING_AND_GENERIC = [
    (("SET", "s", "1"), both("s", "new", "set")),
    (("SET", "s", "2", "EX", "100"), both("s", "set", "expire")),
    (("SET", "s", "3", "KEEPTTL"), both("s", "set")),
    (("SET", "s", "4", "GET"), both("s", "set")),
    (("SET", "s", "5", "NX"), []),
    (("SETNX", "s", "x"), []),
    (("SETEX", "s3", "10", "v"), both("s3", "new", "set", "expire")),
    (("PSETEX", "s4", "10000", "v"), both("s4", "new", "set", "expire")),
    (("GETSET", "s", "5"), both("s", "set")),
    (("MSET", "m1", "1", "m2", "2"), both("m1", "new", "set") + both("m2", "new", "set")),
    (("MSETNX", "m3", "1", "m4", "2"), both("m3", "new", "set") + both("m4", "new", "set")),
    (("MSETNX", "m3", "1", "m5", "2"), []),
    (("APPEND", "s", "x"), both("s", "append")),
    (("APPEND", "ap", "x"), both("ap", "new", "append")),
    (("SETRANGE", "s", "1", "yy"), both("s", "setrange")),
    (("SETRANGE", "sr", "0", ""), []),
    (("SETRANGE", "sr2", "2", "a"), both("sr2", "new", "setrange")),
    (("INCR", "i"), both("i", "new", "incrby")),
    (("DECRBY", "i", "2"), both("i", "incrby")),
    (("INCRBYFLOAT", "i", "1.5"), both("i", "incrbyfloat")),
    (("INCR", "s"), []),
    (("GETDEL", "m1"), both("m1", "del")),
    (("GETDEL", "nope"), []),
    (("GETEX", "s3", "EX", "100"), both("s3", "expire")),
    (("GETEX", "s3", "PERSIST"), both("s3", "persist")),
    (("GETEX", "s3", "PERSIST"), []),
    (("GETEX", "s3", "EXAT", "1"), both("s3", "del")),
    (("DEL", "m2", "m3", "nope"), both("m2", "del") + both("m3", "del")),
    (("UNLINK", "m4"), both("m4", "del")),
    (("EXPIRE", "s4", "100"), both("s4", "expire")),
    (("PERSIST", "s4"), both("s4", "persist")),
    (("PERSIST", "s4"), []),
    (("EXPIRE", "s4", "0"), both("s4", "del")),
    (("EXPIRE", "nope", "5"), []),
    (("RENAME", "ap", "b"), both("b", "new") + both("ap", "rename_from") + both("b", "rename_to")),
    (("RENAME", "i", "b"), both("b", "new") + both("i", "rename_from") + both("b", "rename_to")),
    (("RENAMENX", "b", "s"), []),
    (("RENAME", "b", "b"), []),
    (("COPY", "b", "e"), both("e", "new", "copy_to")),
    (("COPY", "b", "e", "REPLACE"), both("e", "new", "copy_to")),
    (("COPY", "b", "e"), []),
    (("MOVE", "e", "1"), both("e", "new", db=1) + both("e", "move_from")
     + both("e", "move_to", db=1)),
]


def test_string_and_generic_events(events):
    got = [(cmd, events(*cmd)) for cmd, _ in STRING_AND_GENERIC]
    assert got == STRING_AND_GENERIC


BITMAP = [
    (("SETBIT", "b", "3", "1"), both("b", "new", "setbit")),
    (("SETBIT", "b", "3", "1"), []),  # the bit was already set
    (("SETBIT", "b", "3", "0"), both("b", "setbit")),
    (("SETBIT", "b", "20", "0"), both("b", "setbit")),  # grows the string
    (("GETBIT", "b", "3"), []),
    (("BITFIELD", "f", "OVERFLOW", "FAIL", "SET", "u8", "0", "999"), both("f", "new")),
    (("BITFIELD", "f", "SET", "u8", "0", "1", "INCRBY", "u8", "0", "1"), both("f", "setbit")),
    (("BITFIELD", "f", "SET", "u8", "0", "2"), []),  # no field changes
    (("BITFIELD", "f", "OVERFLOW", "FAIL", "SET", "u8", "99", "999"), []),
    (("BITFIELD", "f2", "SET", "u8", "0", "0"), both("f2", "new", "setbit")),
    (("BITFIELD", "f", "GET", "u8", "0"), []),
    (("BITOP", "OR", "d", "b"), both("d", "new", "set")),
    (("BITOP", "OR", "d", "b"), both("d", "set")),
    (("BITOP", "AND", "d", "nokey"), both("d", "del")),
    (("BITOP", "AND", "d", "nokey"), []),
    (("LCS", "b", "f"), []),
]


def test_bitmap_events(events):
    assert [(cmd, events(*cmd)) for cmd, _ in BITMAP] == BITMAP


HASH = [
    (("HSET", "h", "a", "1", "b", "2"), both("h", "new", "hset")),
    (("HSET", "h", "a", "1"), both("h", "hset")),
    (("HSETNX", "h", "a", "2"), []),
    (("HSETNX", "h", "c", "2"), both("h", "hset")),
    (("HMSET", "h", "d", "1"), both("h", "hset")),
    (("HDEL", "h", "a", "zz"), both("h", "hdel")),
    (("HDEL", "h", "zz"), []),
    (("HINCRBY", "h", "n", "1"), both("h", "hincrby")),
    (("HINCRBYFLOAT", "h", "f", "1.5"), both("h", "hincrbyfloat")),
    (("HDEL", "h", "b", "c", "d", "n", "f"), both("h", "hdel", "del")),
]


def test_hash_events(events):
    assert [(cmd, events(*cmd)) for cmd, _ in HASH] == HASH


STREAM = [
    (("XADD", "x", "1-1", "a", "1"), both("x", "new", "xadd")),
    (("XADD", "x", "MAXLEN", "1", "*", "a", "2"), both("x", "xadd", "xtrim")),
    (("XADD", "x", "MAXLEN", "5", "*", "a", "3"), both("x", "xadd")),
    (("XADD", "nx", "NOMKSTREAM", "*", "a", "2"), []),
    (("XADD", "x", "1-1", "a", "1"), []),  # an error
    (("XTRIM", "x", "MAXLEN", "1"), both("x", "xtrim")),
    (("XTRIM", "x", "MAXLEN", "1"), []),
    (("XADD", "x", "9999999999999-1", "a", "1"), both("x", "xadd")),
    (("XDEL", "x", "9999999999999-1", "9-9"), both("x", "xdel")),
    (("XDEL", "x", "9-9"), []),
    (("XSETID", "x", "99999999999999-0"), both("x", "xsetid")),
    (("XGROUP", "CREATE", "x", "g", "$"), both("x", "xgroup-create")),
    (("XGROUP", "CREATE", "y", "g", "$", "MKSTREAM"), both("y", "new", "xgroup-create")),
    (("XGROUP", "SETID", "x", "g", "0"), both("x", "xgroup-setid")),
    (("XGROUP", "CREATECONSUMER", "x", "g", "c1"), both("x", "xgroup-createconsumer")),
    (("XGROUP", "CREATECONSUMER", "x", "g", "c1"), []),
    (("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "x", ">"), both("x", "xgroup-createconsumer")),
    (("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "x", "0"), []),
    (("XACK", "x", "g", "99999999999999-0"), []),
    (("XCLAIM", "x", "g", "c1", "0", "1-1"), []),  # c1 exists: a claim is no event
    (("XGROUP", "DELCONSUMER", "x", "g", "c1"), both("x", "xgroup-delconsumer")),
    (("XGROUP", "DESTROY", "x", "g"), both("x", "xgroup-destroy")),
    (("XGROUP", "DESTROY", "x", "g"), []),
    (("DEL", "x", "y"), both("x", "del") + both("y", "del")),
]


def test_stream_events(events):
    assert [(cmd, events(*cmd)) for cmd, _ in STREAM] == STREAM


# Conditional forms: an event only when the condition let the command write (Redis 7.0.15).
CONDITIONAL = [
    (("SETNX", "n", "v"), both("n", "new", "set")),
    (("SET", "n", "v2", "GET"), both("n", "set")),
    (("SET", "n", "v3", "XX"), both("n", "set")),
    (("SET", "x", "v", "XX"), []),
    (("SET", "n", "v4", "PX", "100000", "NX"), []),
    (("SET", "n", "v6", "KEEPTTL"), both("n", "set")),
    (("EXPIRE", "n", "100", "XX"), []),
    (("EXPIRE", "n", "100", "NX"), both("n", "expire")),
    (("EXPIRE", "n", "200", "NX"), []),
    (("EXPIRE", "n", "100", "GT"), both("n", "expire")),
    (("EXPIRE", "n", "300", "GT"), both("n", "expire")),
    (("PEXPIRE", "n", "1000", "LT"), both("n", "expire")),
    (("PEXPIREAT", "n", "1"), both("n", "del")),
    (("HSETNX", "h", "f", "v"), both("h", "new", "hset")),
    (("HSET", "h", "f", "v2"), both("h", "hset")),
    (("XADD", "x", "NOMKSTREAM", "*", "f", "v"), []),
    (("XADD", "x", "1-1", "f", "v"), both("x", "new", "xadd")),
    (("XADD", "x", "MINID", "2", "*", "f", "v"), both("x", "xadd", "xtrim")),
    (("XTRIM", "x", "MINID", "0"), []),
    (("XTRIM", "x", "MINID", "99999999999999"), both("x", "xtrim")),
    (("XGROUP", "CREATE", "x", "g", "$"), both("x", "xgroup-create")),
    (("SWAPDB", "0", "1"), []),
    (("SWAPDB", "0", "1"), []),
    (("FLUSHDB",), []),
]


def test_conditional_forms_announce_only_what_they_did(events):
    assert [(cmd, events(*cmd)) for cmd, _ in CONDITIONAL] == CONDITIONAL


def expire_one(r, events) -> list:
    """The events of a key that runs out (by the expiry cycle or on the GET after it)."""
    events.drain()
    r.set("t", "v", px=1)
    time.sleep(0.02)
    r.get("t")
    return [e for e in events.drain() if "expired" in e[0] + e[1]]


def test_expired_event_and_classes(events, r):
    assert expire_one(r, events) == both("t", "expired")
    # Only the enabled classes and channel kinds are published.
    events.set_flags("Kt")  # stream events on keyspace channels only
    assert events("SET", "a", "1") == []
    assert events("XADD", "x", "*", "f", "v") == [("__keyspace@0__:x", "xadd")]
    events.set_flags("E$")
    assert events("SET", "a", "2") == [("__keyevent@0__:set", "a")]
    events.set_flags("$")  # no channel kind: nothing at all
    assert events("SET", "a", "3") == []
    events.set_flags("Egx")
    assert expire_one(r, events) == [("__keyevent@0__:expired", "t")]
    assert events("DEL", "a") == [("__keyevent@0__:del", "a")]
    events.set_flags("")
    assert events("SET", "a", "1") == []


def test_events_of_other_databases(events, target):
    other = target.client()
    other.execute_command("SELECT", 3)
    try:
        other.set("k", "v")
        assert events.drain() == both("k", "new", "set", db=3)
    finally:
        other.flushdb()
        other.close()


# Hash field expiration (Redis 7.4 / 8.0), as Redis's t_hash.c announces it: HEXPIRE and
# friends send one event, hdel when a time already past deleted fields, else hexpire;
# HPERSIST hpersist; HGETDEL hdel; HGETEX hexpire / hpersist, or hdel for a past time;
# HSETEX hset, then hexpire or hdel when it sets a time; each followed by del when the
# hash is left empty.
FAR = "9999999999"  # unix seconds far ahead (within the 48-bit field-expiry range)
HASH_FIELD_TTL = [
    (("HSET", "h", "a", "1", "b", "2", "c", "3"), both("h", "new", "hset")),
    (("HEXPIRE", "h", "100", "FIELDS", "2", "a", "zz"), both("h", "hexpire")),
    (("HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"), []),  # condition not met
    (("HEXPIRE", "h", "100", "FIELDS", "1", "zz"), []),
    (("HPEXPIREAT", "h", FAR + "000", "XX", "FIELDS", "1", "a"), both("h", "hexpire")),
    (("HEXPIREAT", "h", FAR, "FIELDS", "1", "b"), both("h", "hexpire")),
    (("HPERSIST", "h", "FIELDS", "2", "a", "c"), both("h", "hpersist")),
    (("HPERSIST", "h", "FIELDS", "1", "a"), []),
    # A time already past deletes the field: hdel, even beside fields that got a TTL.
    (("HPEXPIRE", "h", "0", "FIELDS", "1", "a"), both("h", "hdel")),
    (("HEXPIREAT", "h", "1", "FIELDS", "1", "zz"), []),
    (("HGETEX", "h", "EX", "100", "FIELDS", "2", "b", "zz"), both("h", "hexpire")),
    (("HGETEX", "h", "PERSIST", "FIELDS", "1", "b"), both("h", "hpersist")),
    (("HGETEX", "h", "PERSIST", "FIELDS", "1", "b"), []),
    (("HGETEX", "h", "FIELDS", "1", "b"), []),
    (("HGETEX", "h", "PX", "0", "FIELDS", "1", "b"), both("h", "hdel")),
    (("HGETDEL", "h", "FIELDS", "2", "zz", "c"), both("h", "hdel", "del")),
    (("HGETDEL", "h", "FIELDS", "1", "c"), []),
    (("HSETEX", "h", "FIELDS", "2", "a", "1", "b", "2"), both("h", "new", "hset")),
    (("HSETEX", "h", "KEEPTTL", "FIELDS", "1", "a", "2"), both("h", "hset")),
    (("HSETEX", "h", "EXAT", FAR, "FIELDS", "1", "a", "3"), both("h", "hset", "hexpire")),
    (("HSETEX", "h", "FXX", "EX", "10", "FIELDS", "1", "zz", "1"), []),
    (("HSETEX", "h", "FNX", "EXAT", "1", "FIELDS", "1", "c", "1"), both("h", "hset", "hdel")),
    (("HSETEX", "h", "PX", "0", "FIELDS", "2", "a", "1", "b", "2"),
     both("h", "hset", "hdel", "del")),
    (("HSETEX", "h2", "EXAT", "1", "FIELDS", "1", "a", "1"),
     both("h2", "new", "hset", "hdel", "del")),
    (("HSET", "h3", "a", "1"), both("h3", "new", "hset")),
    (("HEXPIRE", "h3", "0", "FIELDS", "1", "a"), both("h3", "hdel", "del")),
    (("HSET", "h3", "a", "1"), both("h3", "new", "hset")),
    (("HGETEX", "h3", "EXAT", "1", "FIELDS", "1", "a"), both("h3", "hdel", "del")),
]


@pytest.mark.min_redis("8.0")
def test_hash_field_ttl_events(events):
    assert [(cmd, events(*cmd)) for cmd, _ in HASH_FIELD_TTL] == HASH_FIELD_TTL


@pytest.mark.min_redis("8.0")
def test_hash_fields_expiring_announce_hexpired(events, r):
    """A field whose TTL runs out is announced once as hexpired, whether a command or the
    expiry cycle removes it, then del if the hash is left empty; the events of the command
    that found it follow."""
    events.set_flags("Kghxn")

    def run(*commands, pause: float = 0.03) -> list:
        events.drain()
        for cmd in commands:
            if cmd == "sleep":
                time.sleep(pause)
            else:
                r.execute_command(*cmd)
        r.execute_command("PING")
        return [ev for _, ev in events.drain(0.1)]

    assert run(("HSET", "h", "a", "1", "b", "2"), ("HPEXPIRE", "h", "1", "FIELDS", "1", "a"),
               "sleep", ("HGET", "h", "a")) == ["new", "hset", "hexpire", "hexpired"]
    assert run(("HPEXPIRE", "h", "1", "FIELDS", "1", "b"), "sleep",
               ("HMGET", "h", "b")) == ["hexpire", "hexpired", "del"]
    # HGETDEL: the expired field first, then the deletion, then the emptied key.
    assert run(("HSET", "h", "a", "1"), ("HSETEX", "h", "PX", "1", "FIELDS", "1", "b", "2"),
               "sleep", ("HGETDEL", "h", "FIELDS", "2", "a", "b")) == [
        "new", "hset", "hset", "hexpire", "hexpired", "hdel", "del"]
    # HGETEX: the expired field first, then the new TTL of the other one.
    assert run(("HSETEX", "h", "PX", "1", "FIELDS", "1", "a", "1"), ("HSET", "h", "b", "2"),
               "sleep", ("HGETEX", "h", "EX", "100", "FIELDS", "2", "a", "b")) == [
        "new", "hset", "hexpire", "hset", "hexpired", "hexpire"]
    # The expiry cycle alone: every field of the hash runs out.
    assert run(("HPEXPIRE", "h", "1", "FIELDS", "1", "b"), "sleep", pause=0.5) == [
        "hexpire", "hexpired", "del"]
