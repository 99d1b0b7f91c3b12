"""A script running past busy-reply-threshold: BUSY for the others, SCRIPT KILL, FUNCTION
KILL, FUNCTION STATS and SHUTDOWN while it runs (recorded from Redis 7.0.15)."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from streamd.embed import EmbeddedServer

from .conftest import RawConn, encode_request

THRESHOLD_MS = 150
BUSY_EVAL = (b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
             b"SHUTDOWN NOSAVE.\r\n")
BUSY_FUNCTION = (b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 b"SHUTDOWN NOSAVE.\r\n")
UNKILLABLE = (b"-UNKILLABLE Sorry the script already executed write commands against the "
              b"dataset. You can either wait the script termination or kill the server in a "
              b"hard way using the SHUTDOWN NOSAVE command.\r\n")
SPIN = "local i = 0 while true do i = i + 1 end"


@pytest.fixture
def busy(r, raw):
    """A connection that starts a script in the background, and one to talk to the server
    meanwhile; busy-reply-threshold is lowered for the test."""
    r.config_set("busy-reply-threshold", THRESHOLD_MS)
    started = []

    def start(*request, wait=True):
        caller = raw()
        result = {}

        def run():
            try:
                result["reply"] = caller.read_reply(timeout=20)
            except (ConnectionError, TimeoutError, OSError) as exc:
                result["error"] = exc

        caller.send(encode_request(*request))
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        started.append(thread)
        if wait:
            time.sleep(THRESHOLD_MS / 1000 * 3)  # well past the threshold

        def outcome():
            thread.join(20)
            assert not thread.is_alive(), "the script did not end"
            return result
        return outcome

    yield start
    for thread in started:
        thread.join(20)
    r.config_set("busy-reply-threshold", 5000)
    r.function_flush()


def ask(conn: RawConn, *args) -> bytes:
    conn.send(encode_request(*args))
    return conn.read_reply()


def test_others_get_busy_and_script_kill_ends_the_script(busy, raw):
    before = raw()  # connected before the script started
    outcome = busy("EVAL", SPIN, 0)
    after = raw()  # accepted while the script runs
    assert ask(before, "PING") == BUSY_EVAL
    assert ask(after, "PING") == BUSY_EVAL
    after.send(encode_request("PING") + encode_request("GET", "x"))  # pipelined: each one
    assert after.read_reply() == BUSY_EVAL and after.read_reply() == BUSY_EVAL
    assert ask(after, "CLIENT", "ID") == BUSY_EVAL
    assert ask(after, "FUNCTION", "KILL") == BUSY_EVAL  # an EVAL runs, not a function
    assert ask(after, "FUNCTION", "STATS") == BUSY_EVAL
    assert ask(after, "SHUTDOWN") == BUSY_EVAL  # only NOSAVE
    assert ask(after, "SCRIPT", "KILL") == b"+OK\r\n"
    reply = outcome()["reply"]
    assert reply.startswith(b"-ERR Script killed by user with SCRIPT KILL... script: ")
    assert reply.endswith(b", on @user_script:1.\r\n")
    # Both connections carry on, the one accepted while busy included.
    assert ask(before, "PING") == b"+PONG\r\n"
    assert ask(after, "PING") == b"+PONG\r\n"
    assert ask(after, "SCRIPT", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"


def test_allowed_commands_run_and_a_transaction_is_aborted(busy, raw):
    conn = raw()
    outcome = busy("EVAL", SPIN, 0)
    assert ask(conn, "MULTI") == b"+OK\r\n"
    assert ask(conn, "PING") == BUSY_EVAL
    assert ask(conn, "EXEC") == (b"-EXECABORT Transaction discarded because of: "
                                 + BUSY_EVAL[1:])
    assert ask(conn, "HELLO", "2").startswith(b"*14\r\n$6\r\nserver\r\n")
    assert ask(conn, "SCRIPT", "KILL") == b"+OK\r\n"
    assert outcome()["reply"].startswith(b"-ERR Script killed by user")


def test_a_request_sent_before_the_threshold_is_answered_busy(busy, raw):
    conn = raw()
    outcome = busy("EVAL", SPIN, 0, wait=False)
    time.sleep(THRESHOLD_MS / 1000 / 3)
    conn.send(encode_request("PING"))
    assert conn.read_reply() == BUSY_EVAL
    assert ask(conn, "SCRIPT", "KILL") == b"+OK\r\n"
    assert outcome()["reply"].startswith(b"-ERR Script killed by user")


def test_pcall_cannot_swallow_the_kill(busy, raw):
    conn = raw()
    outcome = busy("EVAL", "while true do pcall(function() while true do end end) end", 0)
    assert ask(conn, "SCRIPT", "KILL") == b"+OK\r\n"
    assert outcome()["reply"].startswith(b"-ERR Script killed by user with SCRIPT KILL...")


@pytest.mark.parametrize("body", [
    "local c = coroutine.create(function() while true do end end) "
    "local ok, err = coroutine.resume(c) return 'resumed'",
    "local f = coroutine.wrap(function() while true do end end) return f()",
])
def test_a_loop_in_a_coroutine_is_killed_too(busy, raw, body):
    conn = raw()
    outcome = busy("EVAL", body, 0)
    assert ask(conn, "PING") == BUSY_EVAL
    assert ask(conn, "SCRIPT", "KILL") == b"+OK\r\n"
    assert "reply" in outcome()  # what the script makes of the error is its own
    assert ask(conn, "PING") == b"+PONG\r\n"


def test_a_function_is_killed_by_function_kill_only(busy, raw, r):
    r.function_load("#!lua name=busylib\n"
                    "redis.register_function('spin', function() while true do end end)",
                    replace=True)
    conn = raw()
    outcome = busy("FCALL", "spin", 0)
    assert ask(conn, "PING") == BUSY_FUNCTION
    stats = ask(conn, "FUNCTION", "STATS")
    assert stats.startswith(b"*4\r\n$14\r\nrunning_script\r\n*6\r\n$4\r\nname\r\n$4\r\nspin\r\n"
                            b"$7\r\ncommand\r\n*3\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n"
                            b"$11\r\nduration_ms\r\n:")
    assert stats.endswith(b"$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count"
                          b"\r\n:1\r\n$15\r\nfunctions_count\r\n:1\r\n")
    assert ask(conn, "SCRIPT", "KILL") == BUSY_FUNCTION
    assert ask(conn, "FUNCTION", "KILL") == b"+OK\r\n"
    assert outcome()["reply"] == (b"-ERR Script killed by user with SCRIPT KILL... script: "
                                  b"spin, on @user_function:2.\r\n")


def test_a_script_that_wrote_cannot_be_killed(busy, raw, r):
    conn = raw()
    # Writes, then runs for about a second before it ends by itself.
    outcome = busy("EVAL", "redis.call('set', KEYS[1], 'v') "
                           "local t = redis.call('time') local stop = t[1] * 1e6 + t[2] + 1e6 "
                           "repeat t = redis.call('time') until t[1] * 1e6 + t[2] >= stop "
                           "return 'done'", 1, "k")
    assert ask(conn, "SCRIPT", "KILL") == UNKILLABLE
    assert ask(conn, "SHUTDOWN") == BUSY_EVAL
    assert outcome()["reply"] == b"$4\r\ndone\r\n"
    assert r.get("k") == b"v"


def test_a_script_under_the_threshold_makes_the_others_wait(r, raw):
    r.config_set("busy-reply-threshold", 5000)
    caller, other = raw(), raw()
    caller.send(encode_request("EVAL", "local t = redis.call('time') "
                               "local stop = t[1] * 1e6 + t[2] + 300000 "
                               "repeat t = redis.call('time') until t[1] * 1e6 + t[2] >= stop "
                               "return 1", 0))
    time.sleep(0.05)
    other.send(encode_request("PING"))
    assert other.read_reply() == b"+PONG\r\n"  # after the script, not BUSY
    assert caller.read_reply() == b":1\r\n"


@pytest.mark.streamd_only
def test_shutdown_nosave_stops_the_server_and_the_script():
    with EmbeddedServer(busy_reply_threshold=THRESHOLD_MS) as srv:
        caller = RawConn("127.0.0.1", srv.port)
        caller.send(encode_request("EVAL", "redis.call('set', 'k', 'v') " + SPIN, 0))
        time.sleep(THRESHOLD_MS / 1000 * 3)
        other = RawConn("127.0.0.1", srv.port)
        assert ask(other, "SCRIPT", "KILL") == UNKILLABLE
        other.send(encode_request("SHUTDOWN", "NOSAVE"))
        assert other.is_closed(5) and caller.is_closed(5)
        assert caller.buf == b"" and other.buf == b""  # no reply to either
        srv._thread.join(10)
        assert not srv._thread.is_alive()
        with pytest.raises(redis.ConnectionError):
            redis.Redis(port=srv.port, socket_connect_timeout=1).ping()


def test_function_load_ends_library_code_after_500_ms(r):
    started = time.monotonic()
    with pytest.raises(redis.ResponseError) as exc:
        r.function_load("#!lua name=spinlib\nwhile true do end")
    assert str(exc.value) == "Error registering functions: ERR FUNCTION LOAD timeout"
    assert 0.4 < time.monotonic() - started < 5
    assert r.function_list() == []
    assert r.ping()


def test_what_other_clients_meet_while_busy(busy, raw):
    subscriber, blocked, other = raw(), raw(), raw()
    assert ask(subscriber, "SUBSCRIBE", "ch").startswith(b"*3\r\n$9\r\nsubscribe\r\n")
    blocked.send(encode_request("XREAD", "BLOCK", "0", "STREAMS", "nostream", "$"))
    outcome = busy("EVAL", SPIN, 0)
    # The subscriber's context is checked first, then the script.
    assert ask(subscriber, "PING") == BUSY_EVAL
    assert ask(subscriber, "GET", "x") == (b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / "
                                           b"(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed "
                                           b"in this context\r\n")
    # Unknown commands and arity errors come first too; WATCH and RESET may run.
    assert ask(other, "NOSUCH") == (b"-ERR unknown command 'NOSUCH', with args beginning "
                                    b"with: \r\n")
    assert ask(other, "GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert ask(other, "WATCH", "k") == b"+OK\r\n"
    assert ask(other, "RESET") == b"+RESET\r\n"
    # A blocked client's requests wait, as before the script.
    blocked.send(encode_request("PING"))
    quitter = raw()
    quitter.send(encode_request("QUIT"))
    assert quitter.read_reply() == b"+OK\r\n"
    assert quitter.is_closed(1.0)  # at once, not when the script ends
    assert ask(other, "SCRIPT", "KILL") == b"+OK\r\n"
    assert outcome()["reply"].startswith(b"-ERR Script killed by user")
    with pytest.raises(TimeoutError):
        blocked.read_reply(timeout=0.3)  # still blocked: its PING is not read
