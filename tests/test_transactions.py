"""MULTI/EXEC/DISCARD/WATCH/UNWATCH: queueing, aborts, per-command errors, WATCH rules."""

from __future__ import annotations

import time

import pytest
import redis

EXECABORT = "Transaction discarded because of previous errors."


class Session:
    """One raw connection; error replies come back as ``"ERR:<text>"`` strings so a test
    can assert on whole exchanges (redis-py's pipeline hides the QUEUED replies)."""

    def __init__(self, target, protocol=2):
        self.conn = redis.Connection(host=target.host, port=target.port, db=target.db,
                                     password=target.password, protocol=protocol,
                                     socket_timeout=10)
        self.conn.connect()

    def __call__(self, *args):
        self.conn.send_command(*args)
        try:
            reply = self.conn.read_response()
        except redis.ResponseError as exc:
            return f"ERR:{exc}"
        if isinstance(reply, redis.ResponseError):
            return f"ERR:{reply}"
        return reply

    def close(self):
        self.conn.disconnect()


@pytest.fixture
def s(target, r):
    sessions = []

    def make(protocol=2):
        sess = Session(target, protocol)
        sessions.append(sess)
        return sess

    yield make
    for sess in sessions:
        sess.close()


def test_multi_exec_basic(r, s):
    c = s()
    assert c("MULTI") == b"OK"
    assert c("SET", "a", "1") == b"QUEUED"
    assert c("INCR", "a") == b"QUEUED"
    assert c("GET", "a") == b"QUEUED"
    assert r.get("a") is None  # nothing runs before EXEC
    assert c("EXEC") == [b"OK", 2, b"2"]


def test_empty_transaction(s):
    c = s()
    c("MULTI")
    assert c("EXEC") == []


def test_exec_and_discard_without_multi(s):
    c = s()
    assert c("EXEC") == "ERR:EXEC without MULTI"
    assert c("DISCARD") == "ERR:DISCARD without MULTI"


def test_nested_multi_is_an_error_that_does_not_abort(s):
    c = s()
    c("MULTI")
    assert c("MULTI") == "ERR:MULTI calls can not be nested"
    assert c("SET", "a", "1") == b"QUEUED"
    assert c("EXEC") == [b"OK"]


def test_watch_inside_multi_is_an_error_that_does_not_abort(s):
    c = s()
    c("MULTI")
    assert c("WATCH", "a") == "ERR:WATCH inside MULTI is not allowed"
    assert c("SET", "a", "1") == b"QUEUED"
    assert c("EXEC") == [b"OK"]


@pytest.mark.parametrize("bad,text", [
    (("FOO", "x"), "ERR:unknown command 'FOO', with args beginning with: 'x' "),
    (("GET",), "ERR:wrong number of arguments for 'get' command"),
    (("SET",), "ERR:wrong number of arguments for 'set' command"),
    (("OBJECT", "FOO", "k"), "ERR:unknown subcommand 'FOO'. Try OBJECT HELP."),
    (("OBJECT", "ENCODING"), "ERR:wrong number of arguments for 'object|encoding' command"),
])
def test_queueing_error_makes_exec_abort(r, s, bad, text):
    c = s()
    c("MULTI")
    assert c("SET", "a", "1") == b"QUEUED"
    assert c(*bad) == text
    assert c("SET", "b", "1") == b"QUEUED"
    assert c("EXEC") == f"ERR:{EXECABORT}"
    assert r.exists("a", "b") == 0
    # The transaction is over: the connection is back to normal.
    assert c("EXEC") == "ERR:EXEC without MULTI"
    assert c("PING") == b"PONG"


def test_runtime_errors_are_per_command_replies(r, s):
    c = s()
    r.hset("h", "f", "v")
    c("MULTI")
    c("INCR", "h")
    c("SET", "b", "2")
    c("EXPIRE", "b", "10", "NX", "XX")
    c("SET", "q", "1", "EX", "0")
    c("INCR", "b")
    replies = c("EXEC")
    assert len(replies) == 5
    assert isinstance(replies[0], redis.ResponseError)
    assert str(replies[0]).startswith("WRONGTYPE")
    assert replies[1] == b"OK"
    assert str(replies[2]) == "NX and XX, GT or LT options at the same time are not compatible"
    assert str(replies[3]) == "invalid expire time in 'set' command"
    assert replies[4] == 3
    assert r.get("b") == b"3"


def test_discard(r, s):
    c = s()
    c("MULTI")
    c("SET", "a", "1")
    assert c("DISCARD") == b"OK"
    assert r.exists("a") == 0
    assert c("GET", "a") is None


def test_select_inside_transaction(r, s):
    c = s()
    c("MULTI")
    c("SELECT", "1")
    c("SET", "z", "1")
    assert c("EXEC") == [b"OK", b"OK"]
    assert c("GET", "z") == b"1"  # the SELECT sticks after EXEC
    assert r.get("z") is None


def test_watch_aborts_on_write_by_another_client(r, s):
    c = s()
    assert c("WATCH", "w") == b"OK"
    r.set("w", "1")
    c("MULTI")
    c("SET", "x", "1")
    assert c("EXEC") is None
    assert r.exists("x") == 0


def test_exec_abort_also_drops_the_watches(r, s):
    # EXECABORT ends the transaction like DISCARD: the keys are no longer watched.
    c = s()
    c("WATCH", "w")
    c("MULTI")
    c("SET")  # a queueing error
    assert c("EXEC") == f"ERR:{EXECABORT}"
    r.set("w", "1")
    c("MULTI")
    c("PING")
    assert c("EXEC") == [b"PONG"]


def test_watch_aborts_on_own_write_before_multi(s):
    c = s()
    c("WATCH", "w")
    c("SET", "w", "1")
    c("MULTI")
    c("PING")
    assert c("EXEC") is None


def test_watch_not_aborted_by_reads_or_noop_writes(r, s):
    c = s()
    r.set("w", "1")
    r.hset("h", "f", "v")
    c("WATCH", "w", "h", "missing")
    r.get("w")
    r.set("w", "2", nx=True)       # refused: no change
    r.hdel("h", "nofield")         # nothing removed
    r.delete("missing")            # nothing to delete
    r.setrange("w", 0, "")         # empty write changes nothing
    r.persist("w")                 # no TTL to remove
    c("MULTI")
    c("PING")
    assert c("EXEC") == [b"PONG"]


@pytest.mark.parametrize("write", [
    lambda r: r.set("w", "v"),
    lambda r: r.getdel("w"),
    lambda r: r.delete("w"),
    lambda r: r.expire("w", 100),
    lambda r: r.incrbyfloat("w", 1),
    lambda r: r.append("w", ""),
    lambda r: r.rename("other", "w"),
    lambda r: r.move("w", 1),
    lambda r: r.flushdb(),
])
def test_watch_aborts_on_each_kind_of_write(r, s, write):
    r.set("w", "1")
    r.set("other", "2")
    c = s()
    c("WATCH", "w")
    write(r)
    c("MULTI")
    c("PING")
    assert c("EXEC") is None
    r.execute_command("SELECT", 1)
    r.flushdb()
    r.execute_command("SELECT", 0)


def test_own_queued_write_to_watched_key_does_not_abort(s):
    c = s()
    c("WATCH", "w")
    c("MULTI")
    c("SET", "w", "2")
    assert c("EXEC") == [b"OK"]


def test_unwatch_and_exec_and_discard_clear_watches(r, s):
    c = s()
    c("WATCH", "w")
    r.set("w", "1")
    assert c("UNWATCH") == b"OK"
    c("MULTI")
    c("PING")
    assert c("EXEC") == [b"PONG"]
    # EXEC (even aborted) forgets the watched keys.
    c("WATCH", "w")
    r.set("w", "2")
    c("MULTI")
    assert c("EXEC") is None
    r.set("w", "3")
    c("MULTI")
    assert c("EXEC") == []
    # So does DISCARD.
    c("WATCH", "w")
    r.set("w", "4")
    c("MULTI")
    c("DISCARD")
    c("MULTI")
    assert c("EXEC") == []


def test_watch_is_per_database(r, s):
    c = s()
    c("WATCH", "w")
    r.execute_command("SELECT", 1)
    try:
        r.set("w", "other db")
    finally:
        r.execute_command("SELECT", 0)
    c("MULTI")
    c("PING")
    assert c("EXEC") == [b"PONG"]
    r.execute_command("SELECT", 1)
    r.flushdb()
    r.execute_command("SELECT", 0)


def test_resp3_shapes(r, s):
    c = s(protocol=3)
    r.hset("h", "f", "v")
    c("MULTI")
    c("HGETALL", "h")
    c("GET", "nokey")
    assert c("EXEC") == [{b"f": b"v"}, None]
    c("WATCH", "h")
    r.hset("h", "g", "w")
    c("MULTI")
    c("PING")
    assert c("EXEC") is None


def test_watched_key_that_expires_before_exec_aborts_it(r, s):
    c = s()
    r.set("w", "1", px=50)
    assert c("WATCH", "w") == b"OK"
    time.sleep(0.1)
    c("MULTI")
    c("PING")
    assert c("EXEC") is None


def test_key_already_expired_when_watched_does_not_abort_once_reclaimed(s):
    c = s()
    c("SET", "w", "1", "PX", "1")
    time.sleep(0.01)
    assert c("WATCH", "w") == b"OK"
    assert c("GET", "w") is None  # the lookup reclaims the expired key
    c("MULTI")
    c("PING")
    assert c("EXEC") == [b"PONG"]


def test_commands_flagged_no_multi_are_refused_and_abort_the_transaction(r, s):
    # Redis refuses SAVE and SHUTDOWN while queueing (rejected, not failed) instead of
    # running them at EXEC, and the refusal dooms the transaction like a queueing error.
    r.config_resetstat()
    c = s()
    c("MULTI")
    assert c("SAVE") == "ERR:Command not allowed inside a transaction"
    assert c("SET", "a", "1") == b"QUEUED"
    assert c("EXEC") == f"ERR:{EXECABORT}"
    assert r.exists("a") == 0
    c("MULTI")
    assert c("shutdown", "NOSAVE") == "ERR:Command not allowed inside a transaction"
    assert c("DISCARD") == b"OK"
    assert c("PING") == b"PONG"
    stats = r.info("commandstats")
    assert stats["cmdstat_save"]["rejected_calls"] == 1
    assert stats["cmdstat_save"]["calls"] == 0
    assert stats["cmdstat_shutdown"]["rejected_calls"] == 1


def test_exec_refused_for_its_arity_discards_the_transaction(r, s):
    # A refused EXEC answers EXECABORT with the reason and ends the transaction, watches
    # included; outside MULTI it still drops the watches.
    c = s()
    c("MULTI")
    assert c("SET", "a", "1") == b"QUEUED"
    assert c("EXEC", "now") == ("ERR:Transaction discarded because of: "
                                "wrong number of arguments for 'exec' command")
    assert c("GET", "a") is None  # run at once: no MULTI any more
    assert r.exists("a") == 0
    c("WATCH", "w")
    assert c("EXEC", "x") == ("ERR:Transaction discarded because of: "
                              "wrong number of arguments for 'exec' command")
    r.set("w", "1")
    c("MULTI")
    c("PING")
    assert c("EXEC") == [b"PONG"]
    # DISCARD and MULTI with arguments are plain queueing errors.
    c("MULTI")
    assert c("DISCARD", "x") == "ERR:wrong number of arguments for 'discard' command"
    assert c("MULTI", "x") == "ERR:wrong number of arguments for 'multi' command"
    assert c("EXEC") == f"ERR:{EXECABORT}"


def test_blocking_works_again_after_exec(r, s):
    # Inside EXEC a blocking read answers at once; after it, the connection blocks again.
    c = s()
    c("MULTI")
    c("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    assert c("EXEC") == [None]
    c.conn.send_command("XREAD", "BLOCK", "5000", "STREAMS", "s", "$")
    time.sleep(0.2)
    r.xadd("s", {"f": "v"}, id="1-1")
    assert c.conn.read_response() == [[b"s", [[b"1-1", [b"f", b"v"]]]]]


def test_watch_needs_a_key(s):
    c = s()
    assert c("WATCH") == "ERR:wrong number of arguments for 'watch' command"
    # Inside MULTI the arity check comes first: a queueing error, not "WATCH inside MULTI".
    c("MULTI")
    assert c("WATCH") == "ERR:wrong number of arguments for 'watch' command"
    assert c("EXEC") == f"ERR:{EXECABORT}"


def test_quit_inside_multi_closes_at_once(r, raw):
    # QUIT is not queued: it answers +OK and closes; the queued write never runs.
    c = raw()
    c.send(b"MULTI\r\nSET q 1\r\nQUIT\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+QUEUED\r\n"
    assert c.read_reply() == b"+OK\r\n"
    assert c.is_closed()
    assert r.exists("q") == 0


def test_reset_inside_multi_ends_it(r, raw):
    c = raw()
    c.send(b"WATCH w\r\nMULTI\r\nSET q 1\r\nRESET\r\nEXEC\r\n")
    for expected in (b"+OK", b"+OK", b"+QUEUED", b"+RESET", b"-ERR EXEC without MULTI"):
        assert c.read_reply() == expected + b"\r\n"
    r.set("w", "1")  # no longer watched
    c.send(b"MULTI\r\nPING\r\nEXEC\r\n")
    for expected in (b"+OK", b"+QUEUED", b"*1\r\n+PONG"):
        assert c.read_reply() == expected + b"\r\n"
    assert r.exists("q") == 0


def test_client_is_still_in_multi_while_exec_runs_its_queue(s):
    c = s()
    c("MULTI")
    c("SET", "a", "1")
    c("CLIENT", "INFO")
    _, info = c("EXEC")
    fields = dict(f.split("=", 1) for f in info.decode().split())
    assert (fields["flags"], fields["multi"], fields["cmd"]) == ("x", "2", "exec")
    fields = dict(f.split("=", 1) for f in c("CLIENT", "INFO").decode().split())
    assert (fields["flags"], fields["multi"]) == ("N", "-1")


@pytest.mark.parametrize("where", [0, 1])
def test_swapdb_aborts_a_watch_on_a_key_only_one_side_holds(r, s, where):
    # The watched key appears in (or vanishes from) the watched database.
    r.execute_command("SELECT", where)
    r.set("w", "1")
    r.execute_command("SELECT", 0)
    c = s()
    c("WATCH", "w")
    r.swapdb(0, 1)
    c("MULTI")
    c("PING")
    assert c("EXEC") is None


@pytest.mark.min_redis("7.4")
def test_a_closed_connection_stops_watching(r, s):
    c = s()
    c("WATCH", "a", "b")
    info = r.info("clients")
    assert (info["watching_clients"], info["total_watched_keys"]) == (1, 2)
    c.close()
    deadline = time.monotonic() + 5
    while r.info("clients")["connected_clients"] > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    info = r.info("clients")
    assert (info["watching_clients"], info["total_watched_keys"]) == (0, 0)


@pytest.mark.parametrize("before,after", [(2, 3), (3, 2)])
def test_hello_inside_exec_switches_the_protocol_from_its_own_reply_on(raw, r, before, after):
    r.hset("h", "f", "v")
    c = raw()
    c.send(b"HELLO %d\r\n" % before)
    c.read_reply()
    c.send(b"MULTI\r\nHGETALL h\r\nHELLO %d\r\nHGETALL h\r\nGET nokey\r\nEXEC\r\n" % after)
    for _ in range(5):
        assert c.read_reply() in (b"+OK\r\n", b"+QUEUED\r\n")
    hgetall = {2: b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n", 3: b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"}
    hello_head = {2: b"*14\r\n", 3: b"%7\r\n"}
    nil = {2: b"$-1\r\n", 3: b"_\r\n"}
    reply = c.read_reply()
    assert reply.startswith(b"*4\r\n" + hgetall[before] + hello_head[after])
    assert reply.endswith(hgetall[after] + nil[after])


@pytest.mark.parametrize("protocol", [2, 3])
def test_stream_reads_in_exec_show_the_entries_as_they_were_read(r, s, protocol):
    # Each read's reply is what the stream held when it ran, though EXEC's replies go out
    # together after the later commands changed the same node: appended to it, deleted and
    # trimmed entries in it, sealed it by filling it up.
    r.config_set("stream-node-max-entries", "4")
    try:
        for i in range(1, 4):
            r.xadd("s", {"f": "v%d" % i}, id="%d-0" % i)
        c = s(protocol)
        assert c("MULTI") == b"OK"
        queued = [("XRANGE", "s", "-", "+"), ("XREVRANGE", "s", "+", "-", "COUNT", "2"),
                  ("XREAD", "STREAMS", "s", "1-0"), ("XADD", "s", "4-0", "f", "v4"),
                  ("XDEL", "s", "2-0"), ("XADD", "s", "5-0", "f", "v5"),
                  ("XTRIM", "s", "MAXLEN", "1"), ("XRANGE", "s", "-", "+")]
        for cmd in queued:
            assert c(*cmd) == b"QUEUED"
        got = c("EXEC")
    finally:
        r.config_set("stream-node-max-entries", "100")
    entries = [[b"%d-0" % i, [b"f", b"v%d" % i]] for i in range(1, 6)]
    assert got[0] == entries[:3]
    assert got[1] == [entries[2], entries[1]]
    streams = got[2] if protocol == 2 else list(got[2].items())
    assert [tuple(x) for x in streams] == [(b"s", entries[1:3])]
    assert got[3:7] == [b"4-0", 1, b"5-0", 3]
    assert got[7] == [entries[4]]
