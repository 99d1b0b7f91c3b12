"""Idempotent production (XADD IDMP/IDMPAUTO, XCFGSET, XIDMPRECORD, XINFO idmp fields)
through redis-py, over RESP2 and RESP3.

Every test except the ``streamd_only`` ones encodes Redis 8.6+ behaviour and can be run
against a real server with ``--redis-url``; they are skipped on older servers.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis

from tests.conftest import dirty

from streamd.idmp import auto_iid

pytestmark = pytest.mark.min_redis("8.6")

INFO_FIELDS = [
    "length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
    "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
    "idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
    "iids-duplicates", "groups", "first-entry", "last-entry",
]
IDMP_FIELDS = ["idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked",
               "iids-added", "iids-duplicates"]


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, r, r3):
    """The same tests over both protocol versions."""
    return r if request.param == 2 else r3


def _s(x):
    return x.decode() if isinstance(x, bytes) else x


def xinfo(client, key, *extra):
    """XINFO STREAM as an ordered list of (field, value) pairs, whatever the protocol."""
    reply = client.execute_command("XINFO", "STREAM", key, *extra)
    if isinstance(reply, dict):
        return [(_s(k), v) for k, v in reply.items()]
    return [(_s(reply[i]), reply[i + 1]) for i in range(0, len(reply), 2)]


def idmp_info(client, key) -> dict:
    return {k: v for k, v in xinfo(client, key) if k in IDMP_FIELDS}


def xadd(client, key, *args):
    return client.execute_command("XADD", key, *args)


def err(client, *args) -> str:
    with pytest.raises(redis.ResponseError) as e:
        client.execute_command(*args)
    return str(e.value)


# --- basic dedup ---------------------------------------------------------------------------

def test_duplicate_returns_original_id_and_adds_nothing(c):
    first = xadd(c, "s", "IDMP", "p1", "req-1", "*", "f", "v")
    again = xadd(c, "s", "IDMP", "p1", "req-1", "*", "other", "payload")
    assert again == first
    assert c.xlen("s") == 1
    assert c.xrange("s")[0][1] == {b"f": b"v"}
    info = dict(xinfo(c, "s"))
    assert info["entries-added"] == 1
    assert (info["iids-added"], info["iids-duplicates"]) == (1, 1)
    assert (info["pids-tracked"], info["iids-tracked"]) == (1, 1)


def test_producers_are_isolated_and_keywords_case_insensitive(c):
    a = xadd(c, "s", "IDMP", "p1", "same", "*", "f", "v")
    b = xadd(c, "s", "idmp", "p2", "same", "*", "f", "v")
    assert a != b
    assert xadd(c, "s", "IdMp", "p1", "same", "*", "f", "v") == a
    assert xadd(c, "s", "IDMP", "p2", "same", "*", "f", "v") == b
    assert c.xlen("s") == 2
    info = idmp_info(c, "s")
    assert (info["pids-tracked"], info["iids-tracked"]) == (2, 2)
    assert (info["iids-added"], info["iids-duplicates"]) == (2, 2)


def test_redis_py_xadd_idmp_arguments(r):
    first = r.xadd("s", {"f": "v"}, idmp=("p", b"i-1"))
    assert r.xadd("s", {"g": "w"}, idmp=("p", b"i-1")) == first
    auto = r.xadd("s", {"a": "1", "b": "2"}, idmpauto="p")
    assert r.xadd("s", {"b": "2", "a": "1"}, idmpauto="p") == auto
    assert r.xlen("s") == 2


def test_duplicates_across_connections_pipeline_and_multi(r, make_client):
    other = make_client()
    first = xadd(r, "s", "IDMP", "p", "x", "*", "f", "v")
    assert xadd(other, "s", "IDMP", "p", "x", "*", "f", "v") == first
    pipe = r.pipeline(transaction=False)
    for _ in range(3):
        pipe.execute_command("XADD", "s", "IDMP", "p", "y", "*", "f", "v")
    ids = pipe.execute()
    assert ids[0] != first and ids == [ids[0]] * 3
    tx = other.pipeline(transaction=True)
    tx.execute_command("XADD", "s", "IDMP", "p", "z", "*", "f", "v")
    tx.execute_command("XADD", "s", "IDMP", "p", "z", "*", "f", "v")
    tx.execute_command("XADD", "s", "IDMP", "p", "x", "*", "f", "v")
    z1, z2, x = tx.execute()
    assert z1 == z2 and x == first
    assert r.xlen("s") == 3
    info = idmp_info(r, "s")
    assert (info["iids-added"], info["iids-duplicates"]) == (3, 5)


def test_duplicate_does_not_trim(r):
    for n in range(5):
        xadd(r, "s", "*", "n", n)
    first = xadd(r, "s", "IDMP", "p", "i", "MAXLEN", "10", "*", "n", "x")
    assert r.xlen("s") == 6
    again = xadd(r, "s", "IDMP", "p", "i", "MAXLEN", "1", "*", "n", "x")
    assert again == first
    assert r.xlen("s") == 6  # the duplicate's MAXLEN 1 was not applied
    info = dict(xinfo(r, "s"))
    assert info["entries-added"] == 6
    assert info["iids-duplicates"] == 1


def _blocked_read(client, key, out):
    out.append(client.execute_command("XREAD", "BLOCK", "800", "STREAMS", key, "$"))


def _wait_blocked(r, timeout=3.0):
    # A fixed sleep loses the race on a loaded machine: the XADD then lands before the
    # XREAD with '$' and the reader waits for a later entry.
    deadline = time.monotonic() + timeout
    while r.info("clients")["blocked_clients"] == 0:
        assert time.monotonic() < deadline, "the reader never blocked"
        time.sleep(0.01)


def test_duplicate_wakes_no_blocked_reader(r, make_client):
    first = xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    reader = make_client()
    got = []
    t = threading.Thread(target=_blocked_read, args=(reader, "s", got))
    t.start()
    _wait_blocked(r)
    assert xadd(r, "s", "IDMP", "p", "i", "*", "f", "v") == first
    t.join(5)
    assert len(got) == 1 and not got[0]  # timed out: the duplicate delivered nothing
    # Control: a genuinely new IDMP entry does wake the reader.
    got.clear()
    t = threading.Thread(target=_blocked_read, args=(reader, "s", got))
    t.start()
    _wait_blocked(r)
    new = xadd(r, "s", "IDMP", "p", "j", "*", "f", "v")
    t.join(5)
    assert got and got[0] is not None
    assert got[0][0][1][0][0] == new


def test_duplicate_of_deleted_and_trimmed_entries(r):
    a = xadd(r, "s", "IDMP", "p", "a", "*", "f", "v")
    b = xadd(r, "s", "IDMP", "p", "b", "*", "f", "v")
    assert r.xdel("s", a) == 1
    assert xadd(r, "s", "IDMP", "p", "a", "*", "f", "v") == a  # deleted: still a duplicate
    xadd(r, "s", "MAXLEN", "0", "*", "f", "v")
    assert r.xlen("s") == 0
    assert xadd(r, "s", "IDMP", "p", "b", "*", "f", "v") == b  # trimmed: still a duplicate
    assert r.xlen("s") == 0
    assert idmp_info(r, "s")["iids-duplicates"] == 2


def test_records_survive_xtrim_xdelex_and_xackdel(r):
    # Only DEL-like key operations, XCFGSET, eviction and expiry drop records; removing the
    # entries they point to does not.
    a = xadd(r, "s", "IDMP", "p", "a", "*", "f", "v")
    b = xadd(r, "s", "IDMP", "p", "b", "*", "f", "v")
    c = xadd(r, "s", "IDMP", "p", "c", "*", "f", "v")
    r.xgroup_create("s", "g", "0")
    r.xreadgroup("g", "consumer", {"s": ">"})
    assert r.execute_command("XTRIM", "s", "MAXLEN", "2") == 1
    assert r.execute_command("XDELEX", "s", "DELREF", "IDS", "1", b) == [1]
    assert r.execute_command("XACKDEL", "s", "g", "IDS", "1", c) == [1]
    assert r.xlen("s") == 0
    for iid, want in (("a", a), ("b", b), ("c", c)):
        assert xadd(r, "s", "IDMP", "p", iid, "*", "f", "v") == want
    assert r.xlen("s") == 0
    info = idmp_info(r, "s")
    assert (info["iids-tracked"], info["iids-added"], info["iids-duplicates"]) == (3, 3, 3)


def test_words_after_the_id_are_fields(r):
    # IDMP is an option only before the ID; after it, it is field data like any other.
    xadd(r, "s", "*", "IDMP", "p", "i", "v")
    xadd(r, "s", "*", "IDMP", "p", "i", "v")
    xadd(r, "s", "*", "IDMPAUTO", "p")
    xadd(r, "s", "*", "IDMPAUTO", "p")
    assert r.xlen("s") == 4
    assert r.xrange("s")[0][1] == {b"IDMP": b"p", b"i": b"v"}
    info = idmp_info(r, "s")
    assert (info["pids-tracked"], info["iids-added"], info["iids-duplicates"]) == (0, 0, 0)


def test_duplicate_wins_over_an_exhausted_stream(r):
    a = xadd(r, "s", "IDMP", "p", "a", "*", "f", "v")
    r.execute_command("XSETID", "s", "18446744073709551615-18446744073709551615")
    assert xadd(r, "s", "IDMP", "p", "a", "*", "f", "v") == a  # checked before the ID
    with pytest.raises(redis.ResponseError, match="exhausted the last possible ID"):
        xadd(r, "s", "IDMP", "p", "b", "*", "f", "v")
    info = idmp_info(r, "s")
    assert (info["iids-added"], info["iids-duplicates"], info["iids-tracked"]) == (1, 1, 1)


# --- parsing -------------------------------------------------------------------------------

@pytest.mark.parametrize("args,message", [
    (("IDMP", "p1", "i1", "IDMP", "p2", "i2", "*", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO specified multiple times"),
    (("IDMPAUTO", "p1", "IDMP", "p2", "i2", "*", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO specified multiple times"),
    (("IDMP", "p1", "i1", "IDMPAUTO", "p2", "*", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO specified multiple times"),
    # the repeat is reported before the empty pid of the second option
    (("IDMP", "p1", "i1", "IDMP", "", "i2", "*", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO specified multiple times"),
    (("IDMP", "p1", "i1", "1-1", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (("IDMP", "p1", "i1", "5-*", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (("IDMPAUTO", "p1", "1-1", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (("IDMP", "", "i1", "*", "f", "v"),
     "ERR syntax error, IDMP requires a non-empty producer ID"),
    (("IDMP", "p1", "", "*", "f", "v"),
     "ERR syntax error, IDMP requires a non-empty idempotent ID"),
    (("IDMPAUTO", "", "*", "f", "v"),
     "ERR syntax error, IDMPAUTO requires a non-empty producer ID"),
    # IDMP takes the next two words: `*` becomes the iid and `f` is parsed as the ID
    (("IDMP", "p1", "*", "f", "v"),
     "ERR Invalid stream ID specified as stream command argument"),
    (("IDMP", "p1", "i1", "*", "f"), "ERR wrong number of arguments for 'xadd' command"),
    (("IDMP", "p1", "i1", "*", "f", "v", "g"),
     "ERR wrong number of arguments for 'xadd' command"),
    # Each option is checked where it stands: the repeat before the second IDMPAUTO's
    # empty pid, the empty pid before the empty iid, the first IDMPAUTO's empty pid before
    # anything after it.
    (("IDMP", "p1", "i1", "IDMPAUTO", "", "*", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO specified multiple times"),
    (("IDMP", "", "", "*", "f", "v"),
     "ERR syntax error, IDMP requires a non-empty producer ID"),
    (("IDMPAUTO", "", "IDMPAUTO", "p2", "*", "f", "v"),
     "ERR syntax error, IDMPAUTO requires a non-empty producer ID"),
    # IDMP needs two words after it and IDMPAUTO one; short of them the keyword is read as
    # the ID.
    (("MAXLEN", "1", "IDMP", "p"),
     "ERR Invalid stream ID specified as stream command argument"),
    (("MAXLEN", "1", "IDMPAUTO"),
     "ERR Invalid stream ID specified as stream command argument"),
    (("IDMPAUTO", "p1", "IDMPAUTO"),
     "ERR Invalid stream ID specified as stream command argument"),
    # An explicit 0-0 with IDMP fails in the option parser, before the 0-0 check.
    (("IDMP", "p1", "i1", "0-0", "f", "v"),
     "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    # With the trimming and reference options, IDMP changes nothing in their checks.
    (("IDMP", "p1", "i1", "LIMIT", "10", "*", "f", "v"),
     "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"),
    (("MAXLEN", "5", "LIMIT", "10", "IDMP", "p1", "i1", "*", "f", "v"),
     "ERR syntax error, LIMIT cannot be used without the special ~ option"),
    (("MAXLEN", "1", "IDMP", "p1", "i1", "MINID", "1", "*", "f", "v"),
     "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"),
    (("IDMP", "p1", "i1", "MAXLEN", "-1", "*", "f", "v"),
     "ERR The MAXLEN argument must be >= 0."),
    (("IDMP", "p1", "i1", "MINID", "+", "*", "f", "v"),
     "ERR Invalid stream ID specified as stream command argument"),
    (("KEEPREF", "DELREF", "IDMP", "p1", "i1", "*", "f", "v"),
     "ERR Invalid stream ID specified as stream command argument"),
])
def test_xadd_idmp_parse_errors(r, args, message):
    assert err(r, "XADD", "s", *args) == message.removeprefix("ERR ")
    assert r.exists("s") == 0


def test_xadd_idmp_errors_leave_existing_stream_untouched(r):
    xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    before = idmp_info(r, "s")
    err(r, "XADD", "s", "IDMP", "p", "", "*", "f", "v")
    err(r, "XADD", "s", "IDMP", "q", "i", "1-1", "f", "v")
    assert idmp_info(r, "s") == before
    assert r.xlen("s") == 1


def test_xadd_idmp_wrongtype(r):
    r.set("k", "v")
    assert err(r, "XADD", "k", "IDMP", "p", "i", "*", "f", "v").startswith("WRONGTYPE")


# --- combinations --------------------------------------------------------------------------

def test_idmp_with_nomkstream(c):
    assert xadd(c, "s", "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v") is None
    assert c.exists("s") == 0
    c.xadd("s", {"f": "v"})
    first = xadd(c, "s", "IDMP", "p", "i", "NOMKSTREAM", "*", "f", "v")
    assert xadd(c, "s", "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v") == first
    assert c.xlen("s") == 2


def test_idmp_with_trimming_and_refs(r):
    for n in range(10):
        xadd(r, "s", "*", "n", n)
    a = xadd(r, "s", "MAXLEN", "5", "IDMP", "p", "a", "*", "f", "v")
    assert r.xlen("s") == 5
    b = xadd(r, "s", "IDMP", "p", "b", "MAXLEN", "~", "2", "LIMIT", "100", "*", "f", "v")
    last = r.xrange("s")[-1][0]
    c_ = xadd(r, "s", "KEEPREF", "IDMP", "p", "c", "MINID", last.decode(), "*", "f", "v")
    assert r.xlen("s") == 2
    d = xadd(r, "s", "IDMPAUTO", "p", "DELREF", "MAXLEN", "=", "1", "*", "f", "v")
    assert r.xlen("s") == 1
    for iid, want in ((b"a", a), (b"b", b), (b"c", c_)):
        assert xadd(r, "s", "IDMP", "p", iid, "*", "f", "v") == want
    assert xadd(r, "s", "IDMPAUTO", "p", "*", "f", "v") == d
    assert r.xlen("s") == 1
    info = idmp_info(r, "s")
    assert (info["iids-added"], info["iids-duplicates"]) == (4, 4)


def test_idmpauto_equals_explicit_16_byte_iid(c):
    auto = xadd(c, "s", "IDMPAUTO", "p", "*", "amount", "100", "currency", "USD")
    # Field order does not matter; the pair set does.
    assert xadd(c, "s", "IDMPAUTO", "p", "*", "currency", "USD", "amount", "100") == auto
    iid = auto_iid([b"amount", b"100", b"currency", b"USD"])
    assert iid.hex() == "e11c9a7017ea4839b25824062c8d8c50"
    assert xadd(c, "s", "IDMP", "p", iid, "*", "anything", "else") == auto
    # Another producer does not share the iid; a different value is a different iid.
    assert xadd(c, "s", "IDMP", "q", iid, "*", "f", "v") != auto
    assert xadd(c, "s", "IDMPAUTO", "p", "*", "amount", "101", "currency", "USD") != auto
    # Repeated pairs neither cancel nor equal the single pair.
    one = xadd(c, "s", "IDMPAUTO", "p", "*", "f", "v")
    two = xadd(c, "s", "IDMPAUTO", "p", "*", "f", "v", "f", "v")
    assert one != two
    assert xadd(c, "s", "IDMP", "p", bytes.fromhex("9a79073b2d2a35cba229f103f1b26a64"),
                "*", "x", "y") == two
    assert c.xlen("s") == 5


def test_binary_and_64k_iids(r):
    pid = b"\x00\xffproducer \r\n\xe2\x82\xac"
    big = bytes(range(256)) * 256  # 64 KiB
    a = xadd(r, "s", "IDMP", pid, big, "*", "f", "v")
    b = xadd(r, "s", "IDMP", pid, b"\x00", "*", "f", "v")
    assert xadd(r, "s", "IDMP", pid, big, "*", "f", "v") == a
    assert xadd(r, "s", "IDMP", pid, b"\x00", "*", "f", "v") == b
    assert xadd(r, "s", "IDMP", pid, big[:-1], "*", "f", "v") not in (a, b)
    assert xadd(r, "s", "IDMP", pid[:-1], b"\x00", "*", "f", "v") not in (a, b)
    assert xadd(r, "s", "IDMP", pid, b"\x00\x00", "*", "f", "v") not in (a, b)
    assert idmp_info(r, "s")["pids-tracked"] == 2


# --- MAXSIZE -------------------------------------------------------------------------------

def test_maxsize_evicts_oldest_first(c):
    c.xadd("s", {"f": "v"})
    assert c.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "3") in (b"OK", "OK", True)
    ids = {n: xadd(c, "s", "IDMP", "p", f"req-{n}", "*", "f", "v") for n in range(1, 5)}
    assert idmp_info(c, "s")["iids-tracked"] == 3
    new1 = xadd(c, "s", "IDMP", "p", "req-1", "*", "f", "v")
    assert new1 not in ids.values()  # req-1 was evicted by req-4
    assert xadd(c, "s", "IDMP", "p", "req-3", "*", "f", "v") == ids[3]
    assert xadd(c, "s", "IDMP", "p", "req-4", "*", "f", "v") == ids[4]
    # Re-adding req-1 evicted req-2 (the oldest by then).
    assert xadd(c, "s", "IDMP", "p", "req-2", "*", "f", "v") not in ids.values()


def test_maxsize_8_keeps_last_8_per_producer(r):
    r.xadd("s", {"f": "v"})
    r.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "8")
    ids = [xadd(r, "s", "IDMP", "p", f"i{n}", "*", "f", "v") for n in range(100)]
    xadd(r, "s", "IDMP", "other", "i0", "*", "f", "v")
    info = idmp_info(r, "s")
    assert (info["pids-tracked"], info["iids-tracked"]) == (2, 9)
    for n in range(92, 100):
        assert xadd(r, "s", "IDMP", "p", f"i{n}", "*", "f", "v") == ids[n]
    assert xadd(r, "s", "IDMP", "p", "i91", "*", "f", "v") != ids[91]


# --- expiry --------------------------------------------------------------------------------

def test_expiry_with_one_second_duration(r):
    r.xadd("s", {"f": "v"})
    r.execute_command("XCFGSET", "s", "IDMP-DURATION", "1")
    first = xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    xadd(r, "s", "IDMP", "q", "i", "*", "f", "v")
    assert xadd(r, "s", "IDMP", "p", "i", "*", "f", "v") == first
    time.sleep(2.5)
    # No writes in between: the periodic task alone removed records and producers.
    info = idmp_info(r, "s")
    assert (info["pids-tracked"], info["iids-tracked"]) == (0, 0)
    assert (info["iids-added"], info["iids-duplicates"]) == (2, 1)
    again = xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    assert again != first
    assert xadd(r, "s", "IDMP", "p", "i", "*", "f", "v") == again


def _tracked_and_server_ms(r, key):
    # TIME right after XINFO in one pipeline: the server read the count no later than the
    # time it reports, whatever the client's own clock and scheduling did meanwhile.
    with r.pipeline(transaction=False) as p:
        p.execute_command("XINFO", "STREAM", key)
        p.time()
        info, (sec, usec) = p.execute()
    info = {_s(k): v for k, v in (info.items() if isinstance(info, dict)
                                  else zip(info[0::2], info[1::2]))}
    return info["iids-tracked"], sec * 1000 + usec // 1000


@pytest.mark.streamd_only
def test_expiry_shows_within_a_tick(r):
    # streamd expires by a heap of due times checked every 100 ms: a record is kept until
    # its id's ms + duration and goes at the next tick. The bound after the due time
    # allows for a loaded machine delaying the tick.
    r.xadd("s", {"f": "v"})
    r.execute_command("XCFGSET", "s", "IDMP-DURATION", "1")
    sid = xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    due = int(sid.split(b"-")[0]) + 1000
    while True:
        tracked, now = _tracked_and_server_ms(r, "s")
        if now >= due:
            break
        assert tracked == 1  # not one millisecond early
        time.sleep(0.02)
    while tracked:
        assert now < due + 1000
        time.sleep(0.02)
        tracked, now = _tracked_and_server_ms(r, "s")


def test_rename_move_and_swapdb_keep_state_and_expiry(r, target):
    r.xadd("s", {"f": "v"})
    r.execute_command("XCFGSET", "s", "IDMP-DURATION", "1")
    first = xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    r.rename("s", "t")
    assert xadd(r, "t", "IDMP", "p", "i", "*", "f", "v") == first
    other_db = (target.db + 1) % 16
    assert r.move("t", other_db)
    o = redis.Redis(host=target.host, port=target.port, db=other_db,
                    password=target.password, socket_timeout=10)
    try:
        info = idmp_info(o, "t")
        assert (info["idmp-duration"], info["pids-tracked"], info["iids-duplicates"]) \
            == (1, 1, 1)
        assert xadd(o, "t", "IDMP", "p", "i", "*", "f", "v") == first
        # SWAPDB brings the stream back to this db; records and their expiry come along.
        assert r.swapdb(target.db, other_db)
        assert o.exists("t") == 0
        assert xadd(r, "t", "IDMP", "p", "i", "*", "f", "v") == first
        time.sleep(2.5)
        info = idmp_info(r, "t")
        assert (info["pids-tracked"], info["iids-tracked"]) == (0, 0)
        assert xadd(r, "t", "IDMP", "p", "i", "*", "f", "v") != first
    finally:
        o.delete("t")
        o.close()


def _replace_with_plain_stream(r, how):
    r.xadd("t", {"f": "v"})
    if how == "rename":
        r.rename("t", "s")
    else:
        r.copy("t", "s", replace=True)
        r.delete("t")


@pytest.mark.parametrize("drop", ["del", "unlink", "flushdb", "flushall", "rename", "copy"])
def test_deleting_or_replacing_the_key_drops_state(r, drop):
    # A new stream may hand out the very same ID within one millisecond, so "was it a
    # duplicate?" is read from the counters, not from the ID.
    xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    if drop in ("rename", "copy"):  # the key now holds another stream, with no records
        _replace_with_plain_stream(r, drop)
    else:
        {"del": lambda: r.delete("s"), "unlink": lambda: r.unlink("s"),
         "flushdb": r.flushdb, "flushall": r.flushall}[drop]()
    xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    info = idmp_info(r, "s")
    assert (info["pids-tracked"], info["iids-added"], info["iids-duplicates"]) == (1, 1, 0)


# --- XCFGSET -------------------------------------------------------------------------------

def test_xcfgset_clears_on_change_keeps_counters(c):
    a = xadd(c, "s", "IDMP", "p", "a", "*", "f", "v")
    xadd(c, "s", "IDMP", "q", "b", "*", "f", "v")
    xadd(c, "s", "IDMP", "p", "a", "*", "f", "v")
    # Same values as the current ones: a no-op, records kept.
    c.execute_command("XCFGSET", "s", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100")
    assert xadd(c, "s", "IDMP", "p", "a", "*", "f", "v") == a
    info = idmp_info(c, "s")
    assert (info["pids-tracked"], info["iids-tracked"]) == (2, 2)
    c.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "50")
    info = idmp_info(c, "s")
    assert info == {"idmp-duration": 100, "idmp-maxsize": 50, "pids-tracked": 0,
                    "iids-tracked": 0, "iids-added": 2, "iids-duplicates": 2}
    assert xadd(c, "s", "IDMP", "p", "a", "*", "f", "v") != a
    c.execute_command("XCFGSET", "s", "IDMP-DURATION", "200")
    info = idmp_info(c, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"], info["iids-tracked"]) == (200, 50, 0)
    assert info["iids-added"] == 3


def test_xcfgset_redis_py(r):
    r.xadd("s", {"f": "v"})
    assert r.xcfgset("s", idmp_duration=5, idmp_maxsize=7)
    info = idmp_info(r, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (5, 7)


@pytest.mark.min_redis("8.6.2")
def test_duplicate_is_a_write_for_watch_and_dirty(r, make_client):
    """Since 8.6.2 a duplicate marks the key modified and counts as a change: WATCH fails
    and rdb_changes_since_last_save grows, whether the duplicate comes alone or in a
    pipelined run of appends."""
    first = r.execute_command("XADD", "s", "IDMP", "p", "i1", "*", "f", "v")
    other = make_client()
    with r.pipeline() as p:
        p.watch("s")
        other.execute_command("XADD", "s", "IDMP", "p", "i1", "*", "f", "v")  # alone
        p.multi()
        p.xlen("s")
        with pytest.raises(redis.WatchError):
            p.execute()
    before = dirty(r)
    other.execute_command("XADD", "s", "IDMP", "p", "i1", "*", "f", "v")
    assert dirty(r) - before == 1
    before = dirty(r)
    with other.pipeline(transaction=False) as p:  # one read: new, duplicate, new, duplicate
        for iid in ("i2", "i1", "i3", "i2"):
            p.execute_command("XADD", "s", "IDMP", "p", iid, "*", "f", "v")
        replies = p.execute()
    assert (replies[1], replies[3]) == (first, replies[0])
    assert dirty(r) - before == 4
    assert r.xlen("s") == 3


@pytest.mark.min_redis("8.8")
def test_restored_record_of_an_old_entry_expires_at_the_next_tick(r):
    """A record XIDMPRECORD attaches to an entry older than the window is due at once;
    the tick removes it although the stream's other records are due much later."""
    r.execute_command("XADD", "s", "1000-0", "f", "old")  # ms 1000: decades past the window
    kept = r.execute_command("XADD", "s", "IDMP", "p1", "a", "*", "f", "new")
    assert r.execute_command("XIDMPRECORD", "s", "p2", "b", "1000-0") == b"OK"
    deadline = time.monotonic() + 2.0
    while idmp_info(r, "s")["pids-tracked"] != 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    info = idmp_info(r, "s")
    assert (info["pids-tracked"], info["iids-tracked"]) == (1, 1)
    # p2's record is gone, p1's is not: b is new again under p2, a still a duplicate.
    assert r.execute_command("XADD", "s", "IDMP", "p1", "a", "*", "f", "x") == kept
    assert r.xlen("s") == 2
    r.execute_command("XADD", "s", "IDMP", "p2", "b", "*", "f", "x")
    assert r.xlen("s") == 3


@pytest.mark.parametrize("value, invalidates", [("9", True), ("100", False)])
def test_xcfgset_invalidates_watch_only_on_a_change(r, make_client, value, invalidates):
    # The default IDMP-MAXSIZE is 100: setting it again is a no-op, no key change.
    r.xadd("s", {"f": "v"})
    other = make_client()
    with r.pipeline() as p:
        p.watch("s")
        other.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", value)
        p.multi()
        p.xlen("s")
        if invalidates:
            with pytest.raises(redis.WatchError):
                p.execute()
        else:
            assert p.execute() == [1]


@pytest.mark.parametrize("args,message", [
    ((), "ERR At least one parameter must be specified"),
    (("IDMP-DURATION",), "ERR syntax error"),
    (("IDMP-MAXSIZE",), "ERR syntax error"),
    (("DURATION", "10"), "ERR syntax error"),  # the pre-release token names are gone
    (("MAXSIZE", "10"), "ERR syntax error"),
    (("IDMP-DURATION", "10", "extra"), "ERR syntax error"),
    (("IDMP-DURATION", "0"), "ERR IDMP-DURATION must be between 1 and 86400 seconds"),
    (("IDMP-DURATION", "86401"), "ERR IDMP-DURATION must be between 1 and 86400 seconds"),
    (("IDMP-DURATION", "-1"), "ERR IDMP-DURATION must be between 1 and 86400 seconds"),
    (("IDMP-MAXSIZE", "0"), "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"),
    (("IDMP-MAXSIZE", "10001"), "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"),
    (("IDMP-DURATION", "000000000"), "ERR value is not an integer or out of range"),
    (("IDMP-DURATION", "3.14"), "ERR value is not an integer or out of range"),
    (("IDMP-MAXSIZE", "120-5"), "ERR value is not an integer or out of range"),
    (("IDMP-MAXSIZE", "99999999999999999999"),
     "ERR value is not an integer or out of range"),
    (("IDMP-DURATION", "5", "IDMP-DURATION", "6"),
     "ERR IDMP-DURATION specified multiple times"),
    (("IDMP-MAXSIZE", "5", "idmp-maxsize", "5"), "ERR IDMP-MAXSIZE specified multiple times"),
    # the repeat is detected before the repeated value is parsed
    (("IDMP-DURATION", "5", "IDMP-DURATION", "x"),
     "ERR IDMP-DURATION specified multiple times"),
    # Left to right, one keyword at a time: a value is checked before a later word is
    # looked at, and a keyword's next word is its value even when it is a keyword.
    (("IDMP-DURATION", "INVALID", "IDMP-MAXSIZE"),
     "ERR value is not an integer or out of range"),
    (("IDMP-MAXSIZE", "0", "IDMP-DURATION"),
     "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"),
    (("IDMP-DURATION", "IDMP-DURATION"), "ERR value is not an integer or out of range"),
    (("IDMP-MAXSIZE", "5", "IDMP-DURATION"), "ERR syntax error"),
])
def test_xcfgset_errors(r, args, message):
    r.xadd("s", {"f": "v"})
    xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    assert err(r, "XCFGSET", "s", *args) == message.removeprefix("ERR ")
    info = idmp_info(r, "s")  # nothing was applied, not even a valid first half
    assert (info["idmp-duration"], info["idmp-maxsize"], info["iids-tracked"]) == (100, 100, 1)


def test_xcfgset_key_checked_first(r):
    assert err(r, "XCFGSET", "nokey", "IDMP-DURATION", "10") == "no such key"
    assert err(r, "XCFGSET", "nokey", "bogus") == "no such key"
    assert err(r, "XCFGSET", "nokey") == "no such key"
    r.set("k", "v")
    assert err(r, "XCFGSET", "k", "bogus").startswith("WRONGTYPE")
    assert err(r, "XCFGSET").startswith("wrong number of arguments for 'xcfgset'")


def test_xcfgset_case_insensitive_tokens(r):
    r.xadd("s", {"f": "v"})
    r.execute_command("XCFGSET", "s", "idmp-duration", "7", "Idmp-MaxSize", "8")
    info = idmp_info(r, "s")
    assert (info["idmp-duration"], info["idmp-maxsize"]) == (7, 8)


# --- configuration defaults ------------------------------------------------------------------

def test_configs_copied_at_stream_creation(r):
    r.xadd("old", {"f": "v"})
    r.config_set("stream-idmp-duration", 50)
    r.config_set("stream-idmp-maxsize", 60)
    r.xadd("new", {"f": "v"})
    assert (idmp_info(r, "old")["idmp-duration"], idmp_info(r, "old")["idmp-maxsize"]) \
        == (100, 100)
    assert (idmp_info(r, "new")["idmp-duration"], idmp_info(r, "new")["idmp-maxsize"]) \
        == (50, 60)
    r.config_set("stream-idmp-maxsize", 2)
    r.xgroup_create("grp", "g", "$", mkstream=True)
    assert idmp_info(r, "grp")["idmp-maxsize"] == 2
    with pytest.raises(redis.ResponseError) as e:
        r.config_set("stream-idmp-duration", 0)
    assert "argument must be between 1 and 86400 inclusive" in str(e.value)
    with pytest.raises(redis.ResponseError) as e:
        r.config_set("stream-idmp-maxsize", 10001)
    assert "argument must be between 1 and 10000 inclusive" in str(e.value)


# --- XINFO STREAM --------------------------------------------------------------------------

def test_xinfo_stream_field_order_and_defaults(c):
    c.xadd("s", {"f": "v"})
    pairs = xinfo(c, "s")
    assert [k for k, _ in pairs] == INFO_FIELDS
    info = dict(pairs)
    assert {k: info[k] for k in IDMP_FIELDS} == {
        "idmp-duration": 100, "idmp-maxsize": 100, "pids-tracked": 0, "iids-tracked": 0,
        "iids-added": 0, "iids-duplicates": 0}


def test_xinfo_stream_full_field_order(c):
    xadd(c, "s", "IDMP", "p", "i", "*", "f", "v")
    pairs = xinfo(c, "s", "FULL")
    assert [k for k, _ in pairs] == INFO_FIELDS[:13] + ["entries", "groups"]
    info = dict(pairs)
    assert (info["pids-tracked"], info["iids-tracked"], info["iids-added"]) == (1, 1, 1)


def test_xinfo_values_track_everything(c):
    for p in ("a", "b", "c"):
        for i in range(4):
            xadd(c, "s", "IDMP", p, str(i), "*", "f", "v")
    xadd(c, "s", "IDMP", "a", "0", "*", "f", "v")
    xadd(c, "s", "IDMPAUTO", "d", "*", "f", "v")
    xadd(c, "s", "IDMPAUTO", "d", "*", "f", "v")
    assert idmp_info(c, "s") == {
        "idmp-duration": 100, "idmp-maxsize": 100, "pids-tracked": 4, "iids-tracked": 13,
        "iids-added": 13, "iids-duplicates": 2}


# --- XIDMPRECORD ---------------------------------------------------------------------------

@pytest.mark.min_redis("8.6.2")
def test_xidmprecord(r):
    a = r.xadd("s", {"f": "v"})
    b = r.xadd("s", {"f": "w"})
    assert r.execute_command("XIDMPRECORD", "s", "p", "i", a) in (b"OK", "OK", True)
    info = idmp_info(r, "s")
    assert (info["pids-tracked"], info["iids-tracked"]) == (1, 1)
    assert xadd(r, "s", "IDMP", "p", "i", "*", "f", "v") == a
    # Replaying the same record is fine; it changes nothing.
    r.execute_command("XIDMPRECORD", "s", "p", "i", a)
    assert idmp_info(r, "s")["iids-tracked"] == 1
    # The same pair mapped to another entry is refused.
    with pytest.raises(redis.ResponseError):
        r.execute_command("XIDMPRECORD", "s", "p", "i", b)
    assert xadd(r, "s", "IDMP", "p", "i", "*", "f", "v") == a
    # An id that is not a live entry is refused.
    with pytest.raises(redis.ResponseError):
        r.execute_command("XIDMPRECORD", "s", "p", "j", "999999999999999-0")
    r.xdel("s", b)
    with pytest.raises(redis.ResponseError):
        r.execute_command("XIDMPRECORD", "s", "p", "j", b)
    assert err(r, "XIDMPRECORD", "nokey", "p", "i", "1-1") == "no such key"
    assert err(r, "XIDMPRECORD", "s", "p", "i").startswith("wrong number of arguments")
    with pytest.raises(redis.ResponseError):
        r.execute_command("XIDMPRECORD", "s", "", "i", a)
    with pytest.raises(redis.ResponseError):
        r.execute_command("XIDMPRECORD", "s", "p", "", a)
    with pytest.raises(redis.ResponseError):
        r.execute_command("XIDMPRECORD", "s", "p", "k", "bogus")
    assert idmp_info(r, "s")["iids-tracked"] == 1


@pytest.mark.min_redis("8.6.2")
def test_xidmprecord_command_docs(call):
    # Summary and argument names as in Redis's command table (redis-cli's hints).
    docs = call("COMMAND", "DOCS", "XIDMPRECORD")
    d = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert d[b"summary"] == (b"An internal command for setting IDMP metadata on an existing "
                             b"stream message.")
    names = [dict(zip(a[0::2], a[1::2]))[b"name"] for a in d[b"arguments"]]
    assert names == [b"key", b"pid", b"iid", b"stream-id"]


@pytest.mark.streamd_only
def test_xidmprecord_streamd_texts_and_maxsize(r):
    a = r.xadd("s", {"f": "v"})
    b = r.xadd("s", {"f": "w"})
    r.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "1")
    r.execute_command("XIDMPRECORD", "s", "p", "x", a)
    assert err(r, "XIDMPRECORD", "s", "p", "x", b) == \
        "IDMP record already maps to a different stream ID"
    assert err(r, "XIDMPRECORD", "s", "p", "y", "9-9") == "No such message in stream"
    assert err(r, "XIDMPRECORD", "s", "p", "y", "+") == \
        "Invalid stream ID specified as stream command argument"
    assert err(r, "XIDMPRECORD", "s", "", "y", a) == "producer ID must not be empty"
    assert err(r, "XIDMPRECORD", "s", "p", "", a) == "idempotent ID must not be empty"
    r.set("k", "v")
    assert err(r, "XIDMPRECORD", "k", "p", "x", a).startswith("WRONGTYPE")
    r.execute_command("XIDMPRECORD", "s", "p", "y", b)  # maxsize 1: evicts x
    info = idmp_info(r, "s")
    assert (info["iids-tracked"], info["iids-added"]) == (1, 0)
    assert xadd(r, "s", "IDMP", "p", "x", "*", "f", "v") not in (a, b)


# --- COMMAND INFO --------------------------------------------------------------------------

def _key_spec_flags(info_row):
    return [dict(zip(spec[0::2], spec[1::2]))[b"flags"] for spec in info_row[8]]


@pytest.mark.min_redis("8.6.2")
def test_idmp_commands_command_info(call):
    # Flags, key positions, ACL categories and key specs of Redis's command table
    # (xcfgset.json, xidmprecord.json): what cluster clients and ACLs read.
    xcfgset, xidmprecord = call("COMMAND", "INFO", "XCFGSET", "XIDMPRECORD")
    assert xcfgset[:7] == [b"xcfgset", -2, [b"write", b"fast"], 1, 1, 1,
                           [b"@write", b"@stream", b"@fast"]]
    assert xidmprecord[:7] == [b"xidmprecord", 5, [b"write", b"denyoom", b"fast"], 1, 1, 1,
                               [b"@write", b"@stream", b"@fast"]]
    assert _key_spec_flags(xcfgset) == _key_spec_flags(xidmprecord) == [[b"RW", b"update"]]


@pytest.mark.streamd_only
def test_xidmp_command_info_matches_xcfgset(call):
    # XIDMP CFGSET does what XCFGSET does, so it declares the same key access.
    (xidmp,) = call("COMMAND", "INFO", "XIDMP")
    subs = {row[0]: row for row in xidmp[9]}
    cfgset, cfgget = subs[b"xidmp|cfgset"], subs[b"xidmp|cfgget"]
    assert cfgset[2:6] == [[b"write", b"fast"], 2, 2, 1]
    assert _key_spec_flags(cfgset) == [[b"RW", b"update"]]
    assert cfgget[2:6] == [[b"readonly", b"fast"], 2, 2, 1]
    assert _key_spec_flags(cfgget) == [[b"RO"]]


# --- XIDMP (streamd extension) -------------------------------------------------------------

@pytest.mark.streamd_only
def test_xidmp_cfgget_cfgset(c):
    c.xadd("s", {"f": "v"})
    got = c.execute_command("XIDMP", "CFGGET", "s")
    if isinstance(got, list):  # RESP2: flat name/value array
        got = dict(zip(got[::2], got[1::2]))
    assert {_s(k): v for k, v in got.items()} == {"duration": 100, "maxsize": 100}
    first = xadd(c, "s", "IDMP", "p", "i", "*", "f", "v")
    c.execute_command("XIDMP", "CFGSET", "s", "DURATION", "100")  # unchanged: keeps records
    assert xadd(c, "s", "IDMP", "p", "i", "*", "f", "v") == first
    c.execute_command("XIDMP", "CFGSET", "s", "maxsize", "3", "DURATION", "9")
    assert idmp_info(c, "s")["iids-tracked"] == 0
    got = c.execute_command("XIDMP", "CFGGET", "s", "MAXSIZE")
    pairs = list(got.items()) if isinstance(got, dict) else list(zip(got[::2], got[1::2]))
    assert [(_s(k), v) for k, v in pairs] == [("maxsize", 3)]
    got = c.execute_command("XIDMP", "CFGGET", "s", "maxsize", "DURATION", "MAXSIZE")
    pairs = list(got.items()) if isinstance(got, dict) else list(zip(got[::2], got[1::2]))
    assert [(_s(k), v) for k, v in pairs] == [("maxsize", 3), ("duration", 9)]


@pytest.mark.streamd_only
def test_xidmp_errors_and_help(r, raw):
    r.xadd("s", {"f": "v"})
    assert err(r, "XIDMP", "CFGGET", "nokey") == "no such key"
    assert err(r, "XIDMP", "CFGSET", "nokey", "DURATION", "5") == "no such key"
    assert err(r, "XIDMP", "CFGGET", "s", "bogus") == "syntax error"
    assert err(r, "XIDMP", "CFGSET", "s") == "At least one parameter must be specified"
    assert err(r, "XIDMP", "CFGSET", "s", "DURATION", "0") == \
        "DURATION must be between 1 and 86400 seconds"
    assert err(r, "XIDMP", "CFGSET", "s", "MAXSIZE", "10001") == \
        "MAXSIZE must be between 1 and 10000 entries"
    assert err(r, "XIDMP", "CFGSET", "s", "MAXSIZE", "1", "MAXSIZE", "2") == \
        "MAXSIZE specified multiple times"
    assert err(r, "XIDMP", "CFGSET", "s", "IDMP-DURATION", "5") == "syntax error"
    assert err(r, "XIDMP", "NOPE") == "unknown subcommand 'NOPE'. Try XIDMP HELP."
    assert err(r, "XIDMP", "CFGGET").startswith(
        "wrong number of arguments for 'xidmp|cfgget'")
    r.set("k", "v")
    assert err(r, "XIDMP", "CFGGET", "k").startswith("WRONGTYPE")
    help_lines = r.execute_command("XIDMP", "HELP")
    assert help_lines[0].startswith(b"XIDMP <subcommand>")
    # redis-py's COMMAND reply parser cannot take DOCS: read the raw reply.
    conn = raw()
    conn.send(b"COMMAND DOCS XIDMP\r\n")
    docs = conn.read_reply()
    assert b"streamd extension" in docs and b"cfgget" in docs


@pytest.mark.min_redis("8.8")
def test_copy_copies_state_independently(r):
    # Redis copies the IDMP settings, counters and records with the stream (redis#14897,
    # backported to 8.6.2) and registers the copy for expiry (redis#14933): the copy then
    # deduplicates and expires on its own.
    r.xadd("s", {"f": "v"})
    r.execute_command("XCFGSET", "s", "IDMP-DURATION", "1")
    first = xadd(r, "s", "IDMP", "p", "i", "*", "f", "v")
    assert r.copy("s", "t")
    assert idmp_info(r, "t") == idmp_info(r, "s")
    assert xadd(r, "t", "IDMP", "p", "i", "*", "f", "v") == first
    xadd(r, "t", "IDMP", "p", "only-in-copy", "*", "f", "v")
    assert idmp_info(r, "s")["iids-tracked"] == 1
    assert idmp_info(r, "t")["iids-tracked"] == 2
    time.sleep(2.5)
    assert idmp_info(r, "t")["iids-tracked"] == 0
    assert idmp_info(r, "s")["iids-tracked"] == 0
