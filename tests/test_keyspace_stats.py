"""INFO stats' keyspace_hits / keyspace_misses: which lookups count, as Redis counts them.

Redis counts a hit or a miss in its read lookups only (lookupKeyRead): commands that reply
with what a key holds, or whether it exists (EXISTS, TYPE, TTL, OBJECT, TOUCH), and also
GETSET, GETDEL, GETEX, SET ... GET, COPY's source, XACK, XCLAIM and XAUTOCLAIM. Write
lookups (SET, XADD, XDEL, XGROUP, EXPIRE, RENAME ...) and keyspace walks (SCAN, KEYS,
RANDOMKEY, DEL) count nothing. A key of the wrong type is a hit; the error comes after.
XREAD and XREADGROUP look every key up twice: once while parsing the IDs, again while
serving. The table below was recorded from Redis 7.0.15, one command at a time from the
state ``_SETUP`` leaves.
"""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import encode_request, wait_for

_SETUP = (
    ("SET", "str", "hello"), ("SET", "str2", "help"), ("HSET", "h", "f", "v"),
    ("XADD", "s", "1-0", "a", "1"), ("XADD", "s", "2-0", "b", "2"),
    ("XGROUP", "CREATE", "s", "g", "0"), ("SET", "ttlk", "v", "EX", "100"),
    ("XADD", "s2", "1-0", "a", "1"), ("XGROUP", "CREATE", "s2", "g", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s2", ">"),
)

# (command, hits, misses) from Redis 7.0.15; "missing" names no key, "h" a hash, "str" a
# string, "s" a stream with group g, "s2" one whose entry 1-0 is pending for consumer c.
_CASES = (
    ("GET str", 1, 0),
    ("GET missing", 0, 1),
    ("GET h", 1, 0),
    ("MGET str missing h str", 3, 1),
    ("EXISTS str missing str", 2, 1),
    ("TYPE str", 1, 0),
    ("TYPE missing", 0, 1),
    ("TTL str", 1, 0),
    ("TTL missing", 0, 1),
    ("PTTL ttlk", 1, 0),
    ("EXPIRETIME str", 1, 0),
    ("PEXPIRETIME missing", 0, 1),
    ("OBJECT ENCODING str", 1, 0),
    ("OBJECT ENCODING missing", 0, 1),
    ("OBJECT IDLETIME str", 1, 0),
    ("OBJECT REFCOUNT str", 1, 0),
    ("OBJECT FREQ str", 1, 0),
    ("SCAN 0", 0, 0),
    ("KEYS *", 0, 0),
    ("RANDOMKEY", 0, 0),
    ("DBSIZE", 0, 0),
    ("DEL str missing", 0, 0),
    ("UNLINK str missing", 0, 0),
    ("TOUCH str missing", 1, 1),
    ("SET str v2", 0, 0),
    ("SET missing v", 0, 0),
    ("SET str v GET", 1, 0),
    ("SET missing v GET", 0, 1),
    ("SET str v NX", 0, 0),
    ("SET missing v XX", 0, 0),
    ("SETNX str v", 0, 0),
    ("SETEX str 10 v", 0, 0),
    ("PSETEX str 100 v", 0, 0),
    ("MSET str 1 missing 2", 0, 0),
    ("MSETNX str 1 missing 2", 0, 0),
    ("GETSET str x", 1, 0),
    ("GETSET missing x", 0, 1),
    ("GETDEL str", 1, 0),
    ("GETDEL missing", 0, 1),
    ("GETEX str", 1, 0),
    ("GETEX missing", 0, 1),
    ("GETEX str EX 10", 1, 0),
    ("APPEND str x", 0, 0),
    ("APPEND missing x", 0, 0),
    ("STRLEN str", 1, 0),
    ("STRLEN missing", 0, 1),
    ("GETRANGE str 0 1", 1, 0),
    ("SUBSTR missing 0 1", 0, 1),
    ("SETRANGE str 0 x", 0, 0),
    ("SETRANGE missing 0 x", 0, 0),
    ("INCR missing", 0, 0),
    ("INCRBY missing 2", 0, 0),
    ("DECR missing", 0, 0),
    ("INCRBYFLOAT missing 1.5", 0, 0),
    ("INCR str", 0, 0),
    ("LCS str str2", 2, 0),
    ("LCS str missing", 1, 1),
    ("GETBIT str 0", 1, 0),
    ("GETBIT missing 0", 0, 1),
    ("SETBIT str 0 1", 0, 0),
    ("BITCOUNT str", 1, 0),
    ("BITCOUNT missing", 0, 1),
    ("BITPOS str 1", 1, 0),
    ("BITOP AND dest str missing", 1, 1),
    ("BITOP NOT dest str", 1, 0),
    ("BITFIELD str GET u8 0", 1, 0),
    ("BITFIELD missing GET u8 0", 0, 1),
    ("BITFIELD str SET u8 0 1", 0, 0),
    ("BITFIELD_RO str GET u8 0", 1, 0),
    ("BITFIELD_RO missing GET u8 0", 0, 1),
    ("HGET h f", 1, 0),
    ("HGET h nof", 1, 0),
    ("HGET missing f", 0, 1),
    ("HGET str f", 1, 0),
    ("HMGET h f x", 1, 0),
    ("HMGET missing f x", 0, 1),
    ("HGETALL h", 1, 0),
    ("HGETALL missing", 0, 1),
    ("HKEYS h", 1, 0),
    ("HVALS h", 1, 0),
    ("HLEN h", 1, 0),
    ("HLEN missing", 0, 1),
    ("HEXISTS h f", 1, 0),
    ("HSTRLEN h f", 1, 0),
    ("HRANDFIELD h", 1, 0),
    ("HRANDFIELD missing", 0, 1),
    ("HSCAN h 0", 1, 0),
    ("HSCAN missing 0", 0, 1),
    ("HSET h f v2", 0, 0),
    ("HSET missing f v", 0, 0),
    ("HSETNX h f v", 0, 0),
    ("HDEL h f", 0, 0),
    ("HDEL missing f", 0, 0),
    ("HINCRBY h n 1", 0, 0),
    ("HINCRBYFLOAT h n 1.5", 0, 0),
    ("HMSET h a b", 0, 0),
    ("EXPIRE str 100", 0, 0),
    ("EXPIRE missing 100", 0, 0),
    ("PEXPIRE str 100", 0, 0),
    ("EXPIREAT str 99999999999", 0, 0),
    ("PERSIST ttlk", 0, 0),
    ("PERSIST missing", 0, 0),
    ("RENAME str str3", 0, 0),
    ("RENAME missing x", 0, 0),
    ("RENAMENX str str2", 0, 0),
    ("COPY str str3", 1, 0),
    ("COPY missing x", 0, 1),
    ("MOVE str 1", 0, 0),
    ("MOVE missing 1", 0, 0),
    ("SWAPDB 0 1", 0, 0),
    ("XADD s * c 3", 0, 0),
    ("XADD new * a 1", 0, 0),
    ("XADD s NOMKSTREAM * a 1", 0, 0),
    ("XADD missing NOMKSTREAM * a 1", 0, 0),
    ("XLEN s", 1, 0),
    ("XLEN missing", 0, 1),
    ("XLEN str", 1, 0),
    ("XRANGE s - +", 1, 0),
    ("XRANGE missing - +", 0, 1),
    ("XRANGE str - +", 1, 0),
    ("XREVRANGE s + -", 1, 0),
    ("XRANGE s - + COUNT 1", 1, 0),
    ("XREAD STREAMS s 0", 2, 0),
    ("XREAD STREAMS missing 0", 0, 2),
    ("XREAD STREAMS s missing 0 0", 2, 2),
    ("XREAD STREAMS s $", 2, 0),
    ("XREAD STREAMS s 5-0", 2, 0),
    ("XREAD COUNT 1 STREAMS s s 0 1-0", 4, 0),
    ("XREAD STREAMS str 0", 1, 0),
    ("XREADGROUP GROUP g c STREAMS s >", 2, 0),
    ("XREADGROUP GROUP g c STREAMS s 0", 2, 0),
    ("XREADGROUP GROUP g c STREAMS missing >", 0, 1),
    ("XREADGROUP GROUP nog c STREAMS s >", 1, 0),
    ("XREADGROUP GROUP g c STREAMS s2 0", 2, 0),
    ("XREADGROUP GROUP g c STREAMS s2 >", 2, 0),
    ("XREADGROUP GROUP g c STREAMS s s2 > >", 4, 0),
    ("XINFO STREAM s", 1, 0),
    ("XINFO STREAM s FULL", 1, 0),
    ("XINFO GROUPS s", 1, 0),
    ("XINFO CONSUMERS s g", 1, 0),
    ("XINFO STREAM missing", 0, 1),
    ("XINFO GROUPS missing", 0, 1),
    ("XINFO CONSUMERS s nog", 1, 0),
    ("XPENDING s g", 1, 0),
    ("XPENDING s2 g - + 10", 1, 0),
    ("XPENDING missing g", 0, 1),
    ("XPENDING s nog", 1, 0),
    ("XACK s2 g 1-0", 1, 0),
    ("XACK missing g 1-0", 0, 1),
    ("XCLAIM s2 g c2 0 1-0", 1, 0),
    ("XCLAIM missing g c 0 1-0", 0, 1),
    ("XAUTOCLAIM s2 g c2 0 0", 1, 0),
    ("XAUTOCLAIM missing g c 0 0", 0, 1),
    ("XDEL s 1-0", 0, 0),
    ("XDEL missing 1-0", 0, 0),
    ("XTRIM s MAXLEN 1", 0, 0),
    ("XTRIM missing MAXLEN 1", 0, 0),
    ("XSETID s 5-0", 0, 0),
    ("XSETID missing 5-0", 0, 0),
    ("XGROUP CREATE s g2 0", 0, 0),
    ("XGROUP CREATE new g 0 MKSTREAM", 0, 0),
    ("XGROUP CREATE missing g 0", 0, 0),
    ("XGROUP SETID s g 0", 0, 0),
    ("XGROUP DESTROY s g", 0, 0),
    ("XGROUP CREATECONSUMER s g c9", 0, 0),
    ("XGROUP DELCONSUMER s2 g c", 0, 0),
    ("WATCH str missing", 0, 0),
    ("MEMORY USAGE str", 0, 0),
    ("MEMORY USAGE missing", 0, 0),
    # Errors: Redis counts the lookups made before it finds one.
    ("XREAD STREAMS s missing str 0 0 0", 2, 1),
    ("XREAD STREAMS s missing 0 bad", 1, 1),
    ("XREAD STREAMS s >", 1, 0),
    ("XREAD STREAMS missing s bad 0", 0, 1),
    ("XREAD COUNT 1 STREAMS s missing $ $", 2, 2),
    ("XREADGROUP GROUP g c STREAMS s missing > >", 1, 1),
    ("XREADGROUP GROUP g c STREAMS s s2 > $", 2, 0),
    ("XREADGROUP GROUP g c STREAMS s str > >", 2, 0),
    ("XREADGROUP GROUP g c STREAMS s bad", 1, 0),
    ("XREAD STREAMS s", 0, 0),
    ("XREAD COUNT x STREAMS s 0", 0, 0),
    ("GETRANGE str x 1", 0, 0),
    ("BITCOUNT str x 1", 1, 0),
    ("BITCOUNT str 0 1 x", 1, 0),
    ("HRANDFIELD h x", 0, 0),
    ("OBJECT FREQ missing", 0, 1),
    ("COPY str str", 0, 0),
    ("LCS str h", 2, 0),
    ("GETEX str EX x", 1, 0),
    ("GETEX missing EX x", 0, 1),
    ("XPENDING s g x + 10", 0, 0),
    ("XCLAIM s2 g c2 x 1-0", 1, 0),
    ("XAUTOCLAIM s2 g c2 0 bad", 1, 0),
    ("XINFO STREAM s FULL COUNT x", 1, 0),
    ("XINFO STREAM str", 1, 0),
    ("TOUCH str str", 2, 0),
    ("EXISTS missing missing", 0, 2),
    ("BITPOS str 2", 0, 0),
    ("BITFIELD_RO str SET u8 0 1", 0, 0),
    ("SET str v GET NX", 1, 0),
    ("SET h v GET", 1, 0),
)


def lookups(client) -> tuple[int, int]:
    stats = client.info("stats")
    return stats["keyspace_hits"], stats["keyspace_misses"]


def lookups_of(r, call, command: str) -> tuple[int, int]:
    """What ``command`` adds to (keyspace_hits, keyspace_misses), error or not."""
    for argv in _SETUP:
        call(*argv)
    hits, misses = lookups(r)
    try:
        call(*command.split())
    except redis.ResponseError:
        pass
    after = lookups(r)
    return after[0] - hits, after[1] - misses


@pytest.mark.parametrize("command, hits, misses", _CASES, ids=[c[0] for c in _CASES])
def test_lookups_counted_like_redis(r, call, command, hits, misses):
    assert lookups_of(r, call, command) == (hits, misses)


@pytest.mark.min_redis("7.4")
@pytest.mark.parametrize("command, hits, misses", [
    # Redis's httlGenericCommand reads with lookupKeyRead; HPERSIST and HEXPIRE write.
    ("HTTL h FIELDS 1 f", 1, 0), ("HPEXPIRETIME missing FIELDS 1 f", 0, 1),
    ("HPERSIST h FIELDS 1 f", 0, 0), ("HEXPIRE h 100 FIELDS 1 f", 0, 0),
    # `+` (the last entry) is an ID like any other to both of XREAD's lookups.
    ("XREAD STREAMS s +", 2, 0),
])
def test_lookups_of_newer_commands(r, call, command, hits, misses):
    assert lookups_of(r, call, command) == (hits, misses)


def test_config_resetstat_zeroes_hits_and_misses(r):
    r.set("k", "v")
    r.get("k")
    r.get("nokey")
    assert lookups(r) != (0, 0)
    r.config_resetstat()
    assert lookups(r) == (0, 0)


def test_an_expired_key_is_a_miss(r):
    """Whether the lookup or the expiry cycle removes it first, the read misses."""
    r.set("k", "v", px=1)
    time.sleep(0.01)
    r.config_resetstat()
    assert r.get("k") is None
    assert lookups(r) == (0, 1)


def test_commands_in_a_transaction_count_when_exec_runs_them(r):
    r.set("k", "v")
    r.config_resetstat()
    p = r.pipeline(transaction=True)
    p.get("k")
    p.get("nokey")
    p.exists("k")
    assert p.execute() == [b"v", None, 1]
    assert lookups(r) == (2, 1)


def test_pipelined_xacks_count_one_read_each(r, raw):
    """Acknowledgements pipelined together (one read for streamd's batched XACK path)."""
    r.xadd("s", {"f": "v"}, id="1-0")
    r.xadd("s", {"f": "v"}, id="2-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "c", {"s": ">"})
    r.config_resetstat()
    c = raw()
    c.send(b"".join(encode_request("XACK", "s", "g", i) for i in ("1-0", "2-0", "3-0")))
    assert c.read_exact(12) == b":1\r\n:1\r\n:0\r\n"
    assert lookups(r) == (3, 0)


def _park(r, raw, *argv):
    c = raw()
    c.send(encode_request(*argv))
    assert wait_for(lambda: r.info("clients")["blocked_clients"] == 1)
    return c


@pytest.mark.parametrize("argv, wake, parked, woken", [
    (("XREAD", "BLOCK", "0", "STREAMS", "s", "$"), "s", (2, 0), (2, 0)),
    (("XREAD", "BLOCK", "0", "STREAMS", "s", "other", "$", "$"), "other", (2, 2), (4, 0)),
    (("XREAD", "BLOCK", "0", "STREAMS", "s", "other", "$", "$"), "s", (2, 2), (2, 2)),
    (("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"), "s", (2, 0),
     (2, 0)),
])
def test_blocked_reads_count_when_parked_and_when_woken(r, raw, target, argv, wake, parked,
                                                        woken):
    """Parking counts the command's two lookups per key. A wakeup counts nothing in Redis
    7.0, which serves the parked client from the key itself; from 7.2 Redis runs the
    command again (as streamd does), and that run counts like the first one."""
    r.xadd("s", {"f": "v"}, id="1-0")
    r.xgroup_create("s", "g", id="$")
    r.config_resetstat()
    c = _park(r, raw, *argv)
    assert lookups(r) == parked
    r.xadd(wake, {"f": "v"})
    assert c.read_reply().startswith(b"*1\r\n")
    expected = (0, 0) if target.version < (7, 2) else woken
    assert tuple(a - b for a, b in zip(lookups(r), parked)) == expected


def test_a_blocked_read_that_times_out_counts_only_when_parked(r, raw):
    r.xadd("s", {"f": "v"}, id="1-0")
    r.config_resetstat()
    c = _park(r, raw, "XREAD", "BLOCK", "50", "STREAMS", "s", "$")
    assert c.read_reply() == b"*-1\r\n"
    assert lookups(r) == (2, 0)
