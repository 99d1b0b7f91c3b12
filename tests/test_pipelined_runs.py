"""Pipelined runs: many XADDs to one stream, XACKs to one group, or read-only requests of
one command, arriving in one read.

streamd takes such a run together (``xadd_batch``, ``xack_batch``, ``pure_batch``); every request of it
must still end as if it had run alone: same replies, same errors, same node layout, same statistics, WATCH
and blocked readers served exactly as Redis serves them. Each test sends its pipeline in
one write, so the requests reach the server in one read.
"""

from __future__ import annotations

import hiredis
import pytest
import redis

from tests.conftest import encode_request as _req


def _pipeline(conn, *requests) -> list:
    """Send ``requests`` in one write; their replies, decoded (errors as ReplyError)."""
    conn.send(b"".join(_req(*argv) for argv in requests))
    reader = hiredis.Reader()
    replies = []
    while len(replies) < len(requests):
        reader.feed(conn.read_reply())
        replies.append(reader.gets())
    return replies


def _ids(replies) -> list:
    return [tuple(map(int, r.split(b"-"))) for r in replies]


def test_run_with_errors_and_other_commands_in_between(raw, r):
    c = raw()
    replies = _pipeline(
        c,
        ("XADD", "k", "*", "f", "1"),  # creates the stream
        ("XADD", "k", "*", "f", "2"),
        ("xadd", "k", "*", "f", "3"),  # another spelling of the name
        ("XADD", "k", "1-1", "f", "x"),  # explicit ID below the top: error, nothing added
        ("XADD", "k", "*", "f"),  # odd field list: arity error
        ("XADD", "other", "*", "a", "b"),  # another key
        ("XADD", "k", "*", "f", "4", "g", "5"),
        ("XADD", "k", "MAXLEN", "3", "*", "f", "6"),  # a trimming shape
        ("XADD", "k", "*", "f", "7"),
        ("XLEN", "k"),
    )
    assert isinstance(replies[3], hiredis.ReplyError)
    assert str(replies[3]) == ("ERR The ID specified in XADD is equal or smaller than the "
                               "target stream top item")
    assert str(replies[4]) == "ERR wrong number of arguments for 'xadd' command"
    ids = [replies[i] for i in (0, 1, 2, 6, 7, 8)]
    assert _ids(ids) == sorted(_ids(ids)) and len(set(ids)) == 6
    assert replies[9] == 4  # trimmed to 3 by MAXLEN, then one more
    assert [e[1] for e in r.xrange("k")] == [
        {b"f": b"3"}, {b"f": b"4", b"g": b"5"}, {b"f": b"6"}, {b"f": b"7"}]
    assert r.xlen("other") == 1
    assert r.xinfo_stream("k")["entries-added"] == 6


def test_run_respects_node_limits(raw, r):
    r.config_set("stream-node-max-entries", 2)
    c = raw()
    replies = _pipeline(c, *[("XADD", "k", "*", "f", i) for i in range(5)])
    assert len(set(replies)) == 5
    info = r.xinfo_stream("k")
    assert info["length"] == 5
    assert info["radix-tree-keys"] == 3  # 2 + 2 + 1 entries


def test_run_counts_every_call_in_commandstats(raw, r):
    r.xadd("k", {"f": "0"})
    r.config_resetstat()
    c = raw()
    replies = _pipeline(c, ("XADD", "k", "*", "f", "1"), ("XADD", "k", "*", "f", "2"),
                        ("XADD", "k", "0-1", "f", "3"), ("XADD", "k", "*", "f", "4"))
    assert isinstance(replies[2], hiredis.ReplyError)
    stats = r.info("commandstats")["cmdstat_xadd"]
    assert stats["calls"] == 4
    assert stats["failed_calls"] == 1


def test_run_invalidates_watch(raw, r, make_client):
    r.xadd("k", {"f": "0"})
    w = make_client()
    pipe = w.pipeline(transaction=True)
    pipe.watch("k")
    c = raw()
    _pipeline(c, ("XADD", "k", "*", "f", "1"), ("XADD", "k", "*", "f", "2"))
    pipe.multi()
    pipe.xlen("k")
    with pytest.raises(redis.WatchError):
        pipe.execute()


def test_blocked_reader_is_served_after_the_first_append(raw, r):
    r.xadd("k", {"f": "0"})
    reader, writer = raw(), raw()
    reader.send(_req("XREAD", "COUNT", "10", "BLOCK", "0", "STREAMS", "k", "$"))
    # The reader is parked once a command on another connection sees it blocked.
    for _ in range(200):
        if r.info("clients")["blocked_clients"] == 1:
            break
    assert r.info("clients")["blocked_clients"] == 1
    ids = _pipeline(writer, *[("XADD", "k", "*", "f", i) for i in range(3)])
    got = hiredis.Reader()
    got.feed(reader.read_reply())
    (key, entries), = got.gets()
    # Redis serves blocked clients after each command, not after each read.
    assert [e[0] for e in entries] == ids[:1]
    assert r.xlen("k") == 4


@pytest.mark.min_redis("8.6")
def test_idmp_run_with_duplicates(raw, r):
    r.xadd("k", {"f": "0"})
    c = raw()
    replies = _pipeline(
        c,
        ("XADD", "k", "IDMP", "p", "a", "*", "f", "1"),
        ("XADD", "k", "IDMP", "p", "a", "*", "f", "2"),  # duplicate of the one before
        ("XADD", "k", "IDMPAUTO", "p", "*", "f", "v"),
        ("XADD", "k", "IDMPAUTO", "p", "*", "f", "v"),  # duplicate
        ("XADD", "k", "IDMP", "q", "a", "*", "f", "3"),  # another producer
        ("XADD", "k", "*", "f", "4"),
        ("XADD", "k", "IDMP", "p", "a", "5-0", "f", "5"),  # IDMP needs '*': error
        ("XADD", "k", "IDMP", "p", "b", "*", "f", "6"),
    )
    assert replies[1] == replies[0]
    assert replies[3] == replies[2]
    assert isinstance(replies[6], hiredis.ReplyError)
    fresh = [replies[i] for i in (0, 2, 4, 5, 7)]
    assert len(set(fresh)) == 5
    assert r.xlen("k") == 6
    info = r.xinfo_stream("k")
    assert info["iids-added"] == 4
    assert info["iids-duplicates"] == 2
    assert info["pids-tracked"] == 2


def _capped_segments(key: str, idmp: bool) -> list:
    """Pipelines of XADDs with trimming options: repeated (a run reuses their parse) and
    changed (parsed again), with errors and a NOMKSTREAM in between; IDMP ones when
    ``idmp``."""
    segments = [
        [("XADD", key, "MAXLEN", "~", "6", "*", "f", i) for i in range(12)]
        + [("XADD", key, "MAXLEN", "=", "5", "*", "f", i, "g", i) for i in range(4)],
        [("XADD", key, "MAXLEN", "-1", "*", "f", "bad"),  # an error ends a run
         ("XADD", key, "MAXLEN", "5", "LIMIT", "2", "*", "f", "x")]  # LIMIT needs ~
        + [("XADD", key, "NOMKSTREAM", "MAXLEN", "~", "4", "LIMIT", "8", "*", "f", i)
           for i in range(6)]
        + [("XADD", key, "MAXLEN", "7", "*", "f", i) for i in range(3)],
        [("XADD", key, "MAXLEN", "~", "3", "5-0", "f", "explicit")]  # ID too small
        + [("xadd", key, "maxlen", "~", "2", "*", "f", i) for i in range(5)],
    ]
    if idmp:
        idmp_run = []
        for i in range(6):  # duplicates add nothing and trim nothing
            idmp_run.append(("XADD", key, "IDMP", "p", i % 3, "MAXLEN", "~", "9", "*", "f", i))
            idmp_run.append(("XADD", key, "MAXLEN", "1", "IDMPAUTO", "q", "*", "f", i % 2))
        segments.append(idmp_run)
    return segments


def _stream_state(r, key: str) -> dict:
    # What does not depend on the IDs' clock values (radix-tree-nodes does: the rax shares
    # key prefixes).
    info = r.xinfo_stream(key)
    keep = ("length", "radix-tree-keys", "entries-added",
            "iids-tracked", "iids-added", "iids-duplicates", "pids-tracked")
    return {"entries": [e[1] for e in r.xrange(key)],
            **{f: info[f] for f in keep if f in info}}


def _reply_shape(replies) -> list:
    # Errors by text, IDs by which earlier reply they repeat (IDMP duplicates).
    return [str(x) if isinstance(x, hiredis.ReplyError) else replies.index(x)
            for x in replies]


@pytest.mark.parametrize("node_max_entries", [3, 100])
def test_run_of_trimming_appends_ends_as_one_by_one(raw, r, target, node_max_entries):
    # The same requests, once in one write (a run) and once one per write: same replies
    # (IDs aside), same entries, same node layout and counters after each pipeline.
    r.config_set("stream-node-max-entries", node_max_entries)
    idmp = target.is_streamd or target.version >= (8, 6)
    r.xadd("run", {"f": "init"})
    r.xadd("solo", {"f": "init"})
    c = raw()
    for run_reqs, solo_reqs in zip(_capped_segments("run", idmp),
                                   _capped_segments("solo", idmp)):
        run = _pipeline(c, *run_reqs)
        solo = [_pipeline(c, argv)[0] for argv in solo_reqs]
        assert _reply_shape(run) == _reply_shape(solo)
        state = _stream_state(r, "run")
        assert state == _stream_state(r, "solo")
        assert 0 < state["length"] < state["entries-added"]  # the trims did trim


def test_xack_run_with_bad_ids_and_other_groups(raw, r):
    ids = [r.xadd("k", {"f": i}) for i in range(5)]
    r.xgroup_create("k", "g", "0")
    r.xgroup_create("k", "h", "0")
    r.xreadgroup("g", "c", {"k": ">"})
    r.xreadgroup("h", "c", {"k": ">"})
    r.config_resetstat()
    c = raw()
    replies = _pipeline(
        c,
        ("XACK", "k", "g", ids[0]),
        ("XACK", "k", "g", ids[0]),  # no longer pending
        ("xack", "k", "g", ids[1]),
        ("XACK", "k", "g", "bad-id"),  # error, and nothing acknowledged by it
        ("XACK", "k", "g", ids[2], "bad-id"),  # all or nothing
        ("XACK", "k", "h", ids[2]),  # another group
        ("XACK", "k", "g", ids[3], ids[4]),
        ("XACK", "k", "nogroup", ids[2]),
        ("XACK", "nokey", "g", ids[2]),
        ("XPENDING", "k", "g"),
    )
    assert replies[:3] == [1, 0, 1]
    for i in (3, 4):
        assert str(replies[i]) == "ERR Invalid stream ID specified as stream command argument"
    assert replies[5:9] == [1, 2, 0, 0]
    assert replies[9][0] == 1  # only ids[2] is still pending in g
    assert r.xpending("k", "h")["pending"] == 4
    stats = r.info("commandstats")["cmdstat_xack"]
    assert (stats["calls"], stats["failed_calls"]) == (9, 2)


def _cmdstat(r, name: str) -> dict:
    return r.info("commandstats").get(f"cmdstat_{name}", {"calls": 0, "failed_calls": 0,
                                                          "rejected_calls": 0})


@pytest.mark.min_redis("6.2")  # failed_calls / rejected_calls
def test_run_of_reads_with_errors(raw, r):
    """GET, XRANGE and HGET runs with errors inside: each request answers as it would
    alone, and commandstats counts each once (executed, failed or rejected)."""
    r.set("a", "1")
    r.hset("h", "f", "v")
    r.xadd("s", {"f": "1"}, id="1-1")
    r.xadd("s", {"f": "2"}, id="1-2")
    get0, xr0 = _cmdstat(r, "get"), _cmdstat(r, "xrange")
    c = raw()
    replies = _pipeline(
        c,
        ("GET", "a"), ("GET", "missing"), ("GET", "h"), ("GET", "a"), ("GET", "a", "x"),
        ("get", "a"),
        ("XRANGE", "s", "-", "+", "COUNT", "1"), ("XRANGE", "s", "(1-1", "+"),
        ("XRANGE", "s", "nope", "+"), ("XRANGE", "s", "-", "+", "COUNT"),
        ("XRANGE", "h", "-", "+"), ("XRANGE", "s", "+", "-"),
        ("HGET", "h", "f"), ("HGET", "a", "f"), ("PING",),
    )
    assert replies[:2] == [b"1", None]
    assert isinstance(replies[2], hiredis.ReplyError) and str(replies[2]).startswith("WRONGTYPE")
    assert replies[3] == b"1"
    assert str(replies[4]) == "ERR wrong number of arguments for 'get' command"
    assert replies[5] == b"1"
    assert replies[6:8] == [[[b"1-1", [b"f", b"1"]]], [[b"1-2", [b"f", b"2"]]]]
    assert str(replies[8]) == "ERR Invalid stream ID specified as stream command argument"
    assert str(replies[9]) == "ERR syntax error"
    assert str(replies[10]).startswith("WRONGTYPE") and replies[11] == []
    assert replies[12] == b"v" and str(replies[13]).startswith("WRONGTYPE")
    assert replies[14] == b"PONG"
    get1, xr1 = _cmdstat(r, "get"), _cmdstat(r, "xrange")
    assert (get1["calls"] - get0["calls"], get1["failed_calls"] - get0["failed_calls"],
            get1["rejected_calls"] - get0["rejected_calls"]) == (5, 1, 1)
    assert (xr1["calls"] - xr0["calls"], xr1["failed_calls"] - xr0["failed_calls"]) == (6, 3)


def test_run_with_an_odd_field_list_in_the_middle(raw, r):
    c = raw()
    replies = _pipeline(
        c,
        ("XADD", "k", "*", "f", "1"),
        ("XADD", "k", "*", "f", "2"),
        ("XADD", "k", "*", "f", "3", "g"),  # one field too many: arity error, nothing added
        ("XADD", "k", "MAXLEN", "5", "*", "f", "4", "g"),
        ("XADD", "k", "*", "f", "5"),
    )
    for i in (2, 3):
        assert str(replies[i]) == "ERR wrong number of arguments for 'xadd' command"
    assert [e[1] for e in r.xrange("k")] == [{b"f": b"1"}, {b"f": b"2"}, {b"f": b"5"}]


def test_run_reply_ids_match_the_stored_ids(raw, r):
    # A run formats each new ID from its millisecond's shared text; the replies must still
    # be the IDs stored: past sequence 1023 within one millisecond, and when the stream's
    # last ID lies ahead of the clock (the ID then takes that millisecond, not now's).
    c = raw()
    replies = _pipeline(c, *[("XADD", "k", "*", "f", i) for i in range(1500)])
    assert replies == [e[0] for e in r.xrange("k")]
    future = 2 * 10**13
    r.xadd("ahead", {"f": "x"}, id=f"{future}-1020")
    replies = _pipeline(c, *[("XADD", "ahead", "*", "f", i) for i in range(8)])
    assert replies == [b"%d-%d" % (future, 1021 + i) for i in range(8)]
    assert replies == [e[0] for e in r.xrange("ahead")][1:]


def test_run_reaching_the_last_possible_id(raw, r):
    # The run computes each automatic ID itself; at the top of the ID space the append
    # that would need one more ID is refused, as alone, and the ones after it too.
    top = 2**64 - 1
    r.xadd("k", {"f": "x"}, id=f"{top}-{top - 1}")
    c = raw()
    replies = _pipeline(c, *[("XADD", "k", "*", "f", i) for i in range(3)])
    assert replies[0] == b"%d-%d" % (top, top)
    for reply in replies[1:]:
        assert isinstance(reply, hiredis.ReplyError)
        assert str(reply) == ("ERR The stream has exhausted the last possible ID, unable to "
                              "add more items")
    assert r.xlen("k") == 2
