"""Operator commands: ROLE, WAIT, SLOWLOG, LATENCY, MEMORY, as Redis 7.0 answers them on a
standalone master without replicas or persistence. Replies recorded from redis-server
7.0.15; the tests also run against a real Redis (``--redis-url``). MEMORY USAGE and MEMORY
STATS numbers are streamd's own estimates: only their shape and growth are checked."""

from __future__ import annotations

import pytest
import redis

from tests.conftest import encode_request as enc
from tests.test_stream_blocking import client_id, send, wait_blocked


def help_reply(*lines: str) -> bytes:
    return b"*%d\r\n" % len(lines) + b"".join(b"+%s\r\n" % s.encode() for s in lines)


# --- ROLE ---------------------------------------------------------------------------------

def test_role_of_a_standalone_master(wire):
    assert wire("ROLE") == b"*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"
    assert wire.resp3("ROLE") == b"*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"
    assert wire("ROLE", "x") == b"-ERR wrong number of arguments for 'role' command\r\n"


# --- WAIT ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("0", "0"), ("0", "100"), ("-1", "0"), ("-1", "100"),
                                  ("1", "10")])
def test_wait_answers_no_replica_reached(wire, args):
    # Asking for no replica answers at once; asking for one waits out the timeout.
    assert wire("WAIT", *args) == b":0\r\n"
    assert wire.resp3("WAIT", *args) == b":0\r\n"


@pytest.mark.parametrize("args, error", [
    (("0", "-1"), "timeout is negative"),
    (("a", "0"), "value is not an integer or out of range"),
    (("99999999999999999999", "-1"), "value is not an integer or out of range"),
    (("0", "a"), "timeout is not an integer or out of range"),
    (("5", "0.5"), "timeout is not an integer or out of range"),
    (("1",), "wrong number of arguments for 'wait' command"),
])
def test_wait_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=f"^{error}$"):
        r.execute_command("WAIT", *args)


# WAIT reads its timeout as the blocking commands do: since Redis 7.2 (#11338) a deadline
# past the clock's range is refused; 7.0.15 accepts it (and, asking for no replica,
# answers 0 at once).
@pytest.mark.min_redis("7.2")
def test_wait_timeout_past_the_clock_range_is_refused(r):
    with pytest.raises(redis.ResponseError, match="^timeout is out of range$"):
        r.execute_command("WAIT", "0", str(2**63 - 1))


def test_wait_inside_multi_does_not_block(raw):
    c = raw()
    for args, reply in ((("MULTI",), b"+OK\r\n"), (("WAIT", "1", "0"), b"+QUEUED\r\n"),
                        (("WAIT", "1", "-1"), b"+QUEUED\r\n"),
                        (("EXEC",), b"*2\r\n:0\r\n-ERR timeout is negative\r\n")):
        send(c, *args)
        assert c.read_reply(timeout=2) == reply


def test_wait_without_timeout_blocks_until_client_unblock(r, raw):
    c = raw()
    cid = client_id(c)
    send(c, "WAIT", "1", "0")
    wait_blocked(r)
    assert r.ping()  # the server serves others meanwhile
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert c.read_reply() == b":0\r\n"
    send(c, "WAIT", "1", "0")
    wait_blocked(r)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
    assert c.read_reply() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    send(c, "WAIT", "1", "60000")
    wait_blocked(r)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "TIMEOUT") == 1
    assert c.read_reply() == b":0\r\n"
    assert int(r.info("clients")["blocked_clients"]) == 0


def test_wait_with_a_timeout_parks_the_client(r, raw):
    c = raw()
    send(c, "WAIT", "1", "300")
    wait_blocked(r)
    assert c.read_reply() == b":0\r\n"


# --- WAITAOF (7.2) ------------------------------------------------------------------------

@pytest.mark.min_redis("7.2")
@pytest.mark.parametrize("args", [("0", "0", "0"), ("0", "0", "100"), ("0", "1", "10")])
def test_waitaof_without_aof_or_replicas_acknowledges_nothing(wire, args):
    assert wire("WAITAOF", *args) == b"*2\r\n:0\r\n:0\r\n"
    assert wire.resp3("WAITAOF", *args) == b"*2\r\n:0\r\n:0\r\n"


@pytest.mark.min_redis("7.2")
@pytest.mark.parametrize("args, error", [
    (("1", "0", "0"),
     "WAITAOF cannot be used when numlocal is set but appendonly is disabled."),
    (("2", "0", "0"), "value is out of range, value must between 0 and 1"),
    (("-1", "0", "0"), "value is out of range, value must between 0 and 1"),
    (("x", "0", "0"), "value is not an integer or out of range"),
    (("0", "-1", "0"), "value is out of range, must be positive"),
    (("0", "x", "0"), "value is not an integer or out of range"),
    (("0", "0", "-1"), "timeout is negative"),
    (("0", "0", "x"), "timeout is not an integer or out of range"),
    (("1", "0", "-1"), "timeout is negative"),  # every argument is read before the check
    (("0", "0"), "wrong number of arguments for 'waitaof' command"),
])
def test_waitaof_errors(r, args, error):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("WAITAOF", *args)
    assert str(e.value) == error


@pytest.mark.min_redis("7.2")
def test_waitaof_blocks_until_its_timeout_or_client_unblock(r, raw):
    c = raw()
    cid = client_id(c)
    send(c, "WAITAOF", "0", "1", "0")
    wait_blocked(r)
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert c.read_reply() == b"*2\r\n:0\r\n:0\r\n"
    send(c, "WAITAOF", "0", "1", "200")
    wait_blocked(r)
    assert c.read_reply() == b"*2\r\n:0\r\n:0\r\n"


@pytest.mark.streamd_only
def test_waitaof_local_fsync_never_comes_with_appendonly_yes(r, raw):
    # streamd accepts appendonly yes but writes no file: no fsync is ever acknowledged.
    r.config_set("appendonly", "yes")
    try:
        c = raw()
        send(c, "WAITAOF", "1", "0", "100")
        wait_blocked(r)
        assert c.read_reply() == b"*2\r\n:0\r\n:0\r\n"
    finally:
        r.config_set("appendonly", "no")


@pytest.mark.min_redis("7.4")
def test_waitaof_in_a_transaction_or_script_answers_at_once(r, raw):
    c = raw()
    for args, reply in ((("MULTI",), b"+OK\r\n"), (("WAITAOF", "0", "1", "0"), b"+QUEUED\r\n"),
                        (("EXEC",), b"*1\r\n*2\r\n:0\r\n:0\r\n")):
        send(c, *args)
        assert c.read_reply(timeout=2) == reply
    assert r.eval("return redis.call('WAITAOF', 0, 1, 0)", 0) == [0, 0]


# --- SLOWLOG ------------------------------------------------------------------------------

@pytest.fixture
def slowlog(r, call):
    """Log every command; restore Redis's defaults afterwards. ``call``'s connection is
    made first: redis-py's handshake (CLIENT SETINFO, which Redis 7.0 refuses and streamd
    runs) is then not in the log."""
    call("PING")
    r.config_set("slowlog-log-slower-than", 0)
    r.execute_command("SLOWLOG", "RESET")
    yield r
    r.config_set("slowlog-log-slower-than", 10000)
    r.config_set("slowlog-max-len", 128)
    r.execute_command("SLOWLOG", "RESET")


def entries(call, count="-1"):
    return call("SLOWLOG", "GET", count)


def logged(call) -> list:
    """The command lines in the slow log, oldest first."""
    return [e[3] for e in reversed(entries(call))]


def test_slowlog_help(wire):
    assert wire("SLOWLOG", "HELP") == help_reply(
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN", "    Return the length of the slowlog.",
        "RESET", "    Reset the slowlog.",
        "HELP", "    Prints this help.")


@pytest.mark.parametrize("args, error", [
    ((), "wrong number of arguments for 'slowlog' command"),
    (("LEN", "x"), r"wrong number of arguments for 'slowlog\|len' command"),
    (("RESET", "x"), r"wrong number of arguments for 'slowlog\|reset' command"),
    (("GET", "-2"), "count should be greater than or equal to -1"),
    (("GET", "a"), "count should be greater than or equal to -1"),
    (("GET", "1", "2"),
     r"unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP."),
    (("NOSUCH",), r"unknown subcommand 'NOSUCH'. Try SLOWLOG HELP."),
])
def test_slowlog_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=f"^{error}$"):
        r.execute_command("SLOWLOG", *args)


def test_slowlog_entry_shape(slowlog, call, wire):
    call("CLIENT", "SETNAME", "worker")
    call("SET", "a", "b")
    addr = call("CLIENT", "INFO").split()[1].split(b"=")[1]
    newest = entries(call, "3")
    assert [e[3] for e in newest][1:] == [[b"SET", b"a", b"b"],
                                        [b"CLIENT", b"SETNAME", b"worker"]]
    for entry in newest:
        entry_id, when, usec, _, client_addr, name = entry
        assert isinstance(when, int) and isinstance(usec, int) and usec >= 0
        assert (client_addr, name) == (addr, b"worker")
    assert [e[0] for e in newest] == sorted((e[0] for e in newest), reverse=True)
    # A client without a name is logged with an empty one; RESP3 has the same arrays.
    wire.resp3("PING")
    raw3 = wire.resp3("SLOWLOG", "GET", "1")
    assert raw3.startswith(b"*1\r\n*6\r\n:")
    assert b"\r\n*1\r\n$4\r\nPING\r\n$" in raw3 and raw3.endswith(b"\r\n$0\r\n\r\n")


def test_slowlog_logs_the_threshold_change_and_counts_ids_across_reset(slowlog, call):
    # The CONFIG SET that lowered the threshold was logged after running (the fixture's).
    call("SLOWLOG", "RESET")
    call("PING")
    first = entries(call)
    assert [e[3] for e in first] == [[b"PING"], [b"SLOWLOG", b"RESET"]]
    assert first[0][0] == first[1][0] + 1 > 1
    assert call("SLOWLOG", "LEN") == 3  # SLOWLOG GET itself was logged
    assert call("SLOWLOG", "GET", "0") == []
    assert [e[3] for e in call("SLOWLOG", "GET", "1")] == [[b"SLOWLOG", b"GET", b"0"]]
    call("SLOWLOG", "RESET")
    assert entries(call)[-1][0] > first[0][0]


def test_slowlog_get_default_count_is_ten(slowlog, call):
    for i in range(12):
        call("PING")
    assert len(call("SLOWLOG", "GET")) == 10
    assert len(entries(call)) == 14


def test_slowlog_disabled_and_max_len(slowlog, call, target):
    call("CONFIG", "SET", "slowlog-max-len", "2")
    call("PING")
    assert logged(call) == [[b"CONFIG", b"SET", b"slowlog-max-len", b"2"], [b"PING"]]
    assert call("SLOWLOG", "LEN") == 2
    call("CONFIG", "SET", "slowlog-max-len", "0")
    # 7.4 made a max length of 0 turn the log off (nothing added, nothing trimmed); 7.0
    # still logged the CONFIG SET and trimmed to nothing.
    assert call("SLOWLOG", "LEN") == (0 if target.version < (7, 4) else 2)
    call("CONFIG", "SET", "slowlog-max-len", "128", "slowlog-log-slower-than", "-1")
    call("SLOWLOG", "RESET")
    call("PING")
    assert call("SLOWLOG", "LEN") == 0
    call("CONFIG", "SET", "slowlog-log-slower-than", "10000000")
    call("PING")
    assert call("SLOWLOG", "LEN") == 0


def test_slowlog_lowering_max_len_trims_at_once(slowlog, call):
    # Redis trims the log after every command while it is on, logged or not: the CONFIG
    # SET that lowers the length (or turns the log back on) trims it.
    for _ in range(5):
        call("PING")
    call("CONFIG", "SET", "slowlog-log-slower-than", "100000000")
    assert call("SLOWLOG", "LEN") == 6  # the fixture's SLOWLOG RESET and the PINGs
    call("CONFIG", "SET", "slowlog-max-len", "5")
    assert call("SLOWLOG", "LEN") == 5
    call("CONFIG", "SET", "slowlog-log-slower-than", "-1", "slowlog-max-len", "3")
    call("PING")
    assert call("SLOWLOG", "LEN") == 5  # off: nothing trims
    call("MULTI")
    call("CONFIG", "SET", "slowlog-log-slower-than", "100000000")
    call("SLOWLOG", "LEN")
    assert call("EXEC") == [b"OK", 3]
    assert logged(call) == [[b"PING"]] * 3


@pytest.mark.min_redis("7.4")
def test_slowlog_max_len_zero_turns_the_log_off(slowlog, call):
    call("PING")
    call("CONFIG", "SET", "slowlog-max-len", "0")
    call("PING")
    assert call("SLOWLOG", "LEN") == 2  # the SLOWLOG RESET and the PING, kept as they were
    call("CONFIG", "SET", "slowlog-max-len", "1")
    assert logged(call) == [[b"CONFIG", b"SET", b"slowlog-max-len", b"1"]]


def test_slowlog_config_range(r):
    with pytest.raises(redis.ResponseError, match="between -1 and 9223372036854775807"):
        r.config_set("slowlog-log-slower-than", -2)
    with pytest.raises(redis.ResponseError, match="between 0 and 9223372036854775807"):
        r.config_set("slowlog-max-len", -1)


def test_slowlog_what_is_logged(slowlog, call):
    call("SLOWLOG", "RESET")
    with pytest.raises(redis.ResponseError):
        call("SET", "k")  # refused for its arity: never run, never logged
    with pytest.raises(redis.ResponseError):
        call("NOSUCH")
    with pytest.raises(redis.ResponseError):
        call("SET", "k", "v", "XX", "NX")  # failed, but it ran
    call("MULTI")
    call("SET", "k", "v")
    call("GET", "k")
    call("EXEC")  # EXEC is skip_slowlog; the commands it ran are logged
    assert logged(call) == [[b"SLOWLOG", b"RESET"], [b"SET", b"k", b"v", b"XX", b"NX"],
                            [b"MULTI"], [b"SET", b"k", b"v"], [b"GET", b"k"]]


def test_slowlog_truncates_long_command_lines(slowlog, call):
    call("SLOWLOG", "RESET")
    with pytest.raises(redis.ResponseError):
        call("SET", "a" * 300, "b" * 129, *[str(i) for i in range(31)])
    call("SET", "a" * 128, "x")
    with pytest.raises(redis.ResponseError):
        call("SET", "a", "b", *[str(i) for i in range(29)])  # 32 arguments: all kept
    long_line, exact, full = logged(call)[1:]
    assert len(long_line) == 32
    assert long_line[1] == b"a" * 128 + b"... (172 more bytes)"
    assert long_line[2] == b"b" * 128 + b"... (1 more bytes)"
    assert long_line[3:31] == [str(i).encode() for i in range(28)]
    assert long_line[31] == b"... (3 more arguments)"
    assert exact == [b"SET", b"a" * 128, b"x"]
    assert full == [b"SET", b"a", b"b", *[str(i).encode() for i in range(29)]]


def test_slowlog_redacts_passwords(slowlog, call, wire):
    call("SLOWLOG", "RESET")
    for args in (("AUTH", "secret"), ("AUTH", "user", "secret")):
        assert wire(*args).startswith(b"-")
    # Without requirepass the default user takes any password.
    assert wire("HELLO", "2", "AUTH", "default", "secret", "SETNAME", "nm").startswith(b"*")
    wire("HELLO", "2", "SETNAME", "nm2")
    assert logged(call)[1:] == [
        [b"AUTH", b"(redacted)"], [b"AUTH", b"(redacted)", b"(redacted)"],
        [b"HELLO", b"2", b"AUTH", b"(redacted)", b"(redacted)", b"SETNAME", b"nm"],
        [b"HELLO", b"2", b"SETNAME", b"nm2"]]


def test_slowlog_hello_redacts_what_its_parsing_reached(slowlog, call, wire):
    call("SLOWLOG", "RESET")
    lines = (("HELLO", "4", "AUTH", "a", "b"), ("HELLO", "x", "AUTH", "a", "b"),
             ("HELLO", "3", "FOO", "AUTH", "a", "b"), ("HELLO", "3", "AUTH", "a"),
             ("HELLO", "2", "SETNAME", "AUTH", "x", "y"))
    for args in lines:
        assert wire(*args).startswith(b"-")
    # Redis 7.0 redacts the password as its parsing reaches it: a bad protocol version or a
    # bad option before it leaves it in the log.
    assert logged(call)[1:] == [[a.encode() for a in args] for args in lines]


def test_slowlog_blocked_commands(slowlog, call, r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    assert [b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$"] not in logged(call)
    r.xadd("s", {"f": "v"}, id="1-1")
    c.read_reply()
    # Served: logged as sent (`$`, not the ID it was rewritten to), after the XADD.
    assert logged(call)[-2:] == [[b"XADD", b"s", b"1-1", b"f", b"v"],
                                   [b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$"]]
    send(c, "WAIT", "1", "10")
    assert c.read_reply() == b":0\r\n"  # a timeout is not logged
    assert [b"WAIT", b"1", b"10"] not in logged(call)


def test_slowlog_pipelined_run_logs_each_command(slowlog, call, raw):
    call("SET", "k", "v")
    c = raw()
    c.send(enc("GET", "k") * 5 + enc("DBSIZE") * 3)
    for _ in range(8):
        c.read_reply()
    assert logged(call)[-8:] == [[b"GET", b"k"]] * 5 + [[b"DBSIZE"]] * 3


# --- LATENCY ------------------------------------------------------------------------------

_DOCTOR = (b"I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           b"instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" "
           b"in order to enable it. If we weren't in a deep space mission I'd suggest to take "
           b"a look at https://redis.io/topics/latency-monitor.\n")


def test_latency_with_monitoring_disabled(wire):
    for do in (wire, wire.resp3):
        assert do("LATENCY", "LATEST") == b"*0\r\n"
        assert do("LATENCY", "HISTORY", "command") == b"*0\r\n"
        assert do("LATENCY", "RESET") == b":0\r\n"
        assert do("LATENCY", "RESET", "command", "nosuch") == b":0\r\n"
        assert do("LATENCY", "GRAPH", "command") == (
            b"-ERR No samples available for event 'command'\r\n")
    assert wire("LATENCY", "DOCTOR") == b"$%d\r\n%s\r\n" % (len(_DOCTOR), _DOCTOR)
    assert wire.resp3("LATENCY", "DOCTOR") == b"=%d\r\ntxt:%s\r\n" % (len(_DOCTOR) + 4,
                                                                     _DOCTOR)


def test_latency_help(wire):
    assert wire("LATENCY", "HELP") == help_reply(
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR", "    Return a human readable latency analysis report.",
        "GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>", "    Return time-latency samples for the <event> class.",
        "LATEST", "    Return the latest latency samples for all events.",
        "RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for "
        "the specified command names.",
        "    If no commands are specified then all histograms are replied.",
        "HELP", "    Prints this help.")


@pytest.mark.parametrize("args, error", [
    ((), "wrong number of arguments for 'latency' command"),
    (("LATEST", "x"), r"wrong number of arguments for 'latency\|latest' command"),
    (("HISTORY",), r"wrong number of arguments for 'latency\|history' command"),
    (("HISTORY", "a", "b"), r"wrong number of arguments for 'latency\|history' command"),
    (("DOCTOR", "x"), r"wrong number of arguments for 'latency\|doctor' command"),
    (("GRAPH",), r"wrong number of arguments for 'latency\|graph' command"),
    (("NOSUCH",), r"unknown subcommand 'NOSUCH'. Try LATENCY HELP."),
])
def test_latency_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=f"^{error}$"):
        r.execute_command("LATENCY", *args)


# --- MEMORY -------------------------------------------------------------------------------

def test_memory_help(wire):
    assert wire("MEMORY", "HELP") == help_reply(
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR", "    Return memory problems reports.",
        "MALLOC-STATS", "    Return internal statistics report from the memory allocator.",
        "PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS", "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP", "    Prints this help.")


def test_memory_usage_of_a_missing_key(wire):
    assert wire("MEMORY", "USAGE", "nosuch") == b"$-1\r\n"
    assert wire.resp3("MEMORY", "USAGE", "nosuch") == b"_\r\n"
    assert wire("MEMORY", "USAGE", "nosuch", "SAMPLES", "0") == b"$-1\r\n"


@pytest.mark.parametrize("args, error", [
    (("s", "SAMPLES", "-1"), "syntax error"),
    (("s", "SAMPLES"), "syntax error"),
    (("s", "FOO", "1"), "syntax error"),
    (("s", "x", "y", "z"), "syntax error"),
    (("s", "SAMPLES", "a"), "value is not an integer or out of range"),
    (("s", "SAMPLES", "99999999999999999999"), "value is not an integer or out of range"),
    (("nosuch", "SAMPLES", "a"), "value is not an integer or out of range"),
    (("nosuch", "FOO"), "syntax error"),
    ((), r"wrong number of arguments for 'memory\|usage' command"),
])
def test_memory_usage_errors(r, args, error):
    r.set("s", "v")
    with pytest.raises(redis.ResponseError, match=f"^{error}$"):
        r.execute_command("MEMORY", "USAGE", *args)


def test_memory_usage_grows_with_the_value(r):
    r.set("s", "v")
    r.hset("h", "f", "v")
    r.xadd("x", {"f": "v"}, id="1-1")
    before = {k: r.memory_usage(k) for k in ("s", "h", "x")}
    assert all(isinstance(v, int) and v > 0 for v in before.values())
    assert r.execute_command("MEMORY", "USAGE", "s", "SAMPLES", "1", "SAMPLES", "0") == \
        before["s"]
    r.set("s", "v" * 1000)
    r.hset("h", mapping={f"f{i}": "v" * 100 for i in range(100)})
    for i in range(2, 500):
        r.xadd("x", {"f": "v" * 50}, id=f"{i}-1")
    after = {k: r.memory_usage(k) for k in ("s", "h", "x")}
    assert all(after[k] > before[k] for k in after)
    r.xgroup_create("x", "g", id="0")
    r.xreadgroup("g", "c", {"x": ">"}, count=100)
    assert r.memory_usage("x") > after["x"]


_STATS_HEAD = [b"peak.allocated", b"total.allocated", b"startup.allocated",
               b"replication.backlog", b"clients.slaves", b"clients.normal", b"cluster.links",
               b"aof.buffer", b"lua.caches", b"functions.caches"]
_STATS_TAIL = [b"overhead.total", b"keys.count", b"keys.bytes-per-key", b"dataset.bytes",
               b"dataset.percentage", b"peak.percentage", b"allocator.allocated",
               b"allocator.active", b"allocator.resident", b"allocator-fragmentation.ratio",
               b"allocator-fragmentation.bytes", b"allocator-rss.ratio",
               b"allocator-rss.bytes", b"rss-overhead.ratio", b"rss-overhead.bytes",
               b"fragmentation", b"fragmentation.bytes"]


def test_memory_stats_shape(r, call, raw):
    r.set("a", "1")
    r.set("b", "2")
    stats = call.resp3("MEMORY", "STATS")
    assert list(stats) == _STATS_HEAD + [b"db.0"] + _STATS_TAIL
    assert list(stats[b"db.0"]) == [b"overhead.hashtable.main", b"overhead.hashtable.expires",
                                    b"overhead.hashtable.slot-to-keys"]
    assert stats[b"keys.count"] == 2
    assert stats[b"peak.allocated"] >= stats[b"total.allocated"] > 0
    assert isinstance(stats[b"fragmentation"], float)
    flat = call("MEMORY", "STATS")  # RESP2: a flat array, the same names
    assert flat[::2] == list(stats)
    c = raw()
    c.send(enc("HELLO", "3") + enc("MEMORY", "STATS"))
    c.read_reply()
    assert c.read_reply().startswith(b"%28\r\n$14\r\npeak.allocated\r\n:")


def test_memory_doctor_purge_and_errors(r, wire):
    empty = (b"Hi Sam, this instance is empty or is using very little memory, my issues "
             b"detector can't be used in these conditions. Please, leave for your mission on "
             b"Earth and fill it with some data. The new Sam and I will be back to our "
             b"programming as soon as I finished rebooting.\n")
    assert wire("MEMORY", "DOCTOR") == b"$%d\r\n%s\r\n" % (len(empty), empty)
    assert wire.resp3("MEMORY", "DOCTOR") == b"=%d\r\ntxt:%s\r\n" % (len(empty) + 4, empty)
    assert wire("MEMORY", "PURGE") == b"+OK\r\n"
    for sub in ("DOCTOR", "PURGE", "STATS", "MALLOC-STATS", "HELP"):
        assert wire("MEMORY", sub, "x") == (
            b"-ERR wrong number of arguments for 'memory|%s' command\r\n" % sub.lower().encode())
    assert wire("MEMORY") == b"-ERR wrong number of arguments for 'memory' command\r\n"
    assert wire("MEMORY", "NOSUCH") == b"-ERR unknown subcommand 'NOSUCH'. Try MEMORY HELP.\r\n"


@pytest.mark.streamd_only
def test_memory_malloc_stats_without_jemalloc(wire):
    text = b"Stats not supported for the current allocator"
    assert wire("MEMORY", "MALLOC-STATS") == b"$%d\r\n%s\r\n" % (len(text), text)
    assert wire.resp3("MEMORY", "MALLOC-STATS") == b"$%d\r\n%s\r\n" % (len(text), text)


@pytest.mark.streamd_only
def test_memory_purge_drops_the_encoded_stream_nodes(r):
    # The server runs in this process: its encoder's cache is the one imported here.
    from streamd.protocol.encoder import node_cache_usage

    r.delete("purge:s")
    for i in range(1, 301):
        r.xadd("purge:s", {"f": "v%d" % i}, id="%d-0" % i)
    whole = r.xrange("purge:s")
    for _ in range(2):  # every sealed node read in full, then again: encoded once
        assert r.xrange("purge:s") == whole
    assert node_cache_usage()[0] >= 2
    assert r.execute_command("MEMORY", "PURGE") in (True, b"OK")
    assert node_cache_usage() == (0, 0)
    assert r.xrange("purge:s") == whole
    r.delete("purge:s")


@pytest.mark.streamd_only
def test_memory_doctor_with_a_dataset(r):
    r.set("big", "x" * (6 * 1024 * 1024))
    assert r.execute_command("MEMORY", "DOCTOR").startswith(
        b"Hi Sam, I can't find any memory issue in your instance.")


# --- COMMAND INFO -------------------------------------------------------------------------

_ADMIN = [b"@admin", b"@slow", b"@dangerous"]
_SPECIAL = [b"nondeterministic_output", b"request_policy:all_nodes", b"response_policy:special"]
_SHARDS = [b"nondeterministic_output", b"request_policy:all_shards", b"response_policy:special"]


@pytest.mark.parametrize("name, arity, flags, keys, categories, tips", [
    ("role", 1, [b"noscript", b"loading", b"stale", b"fast"], [0, 0, 0],
     [b"@admin", b"@fast", b"@dangerous"], []),
    ("wait", 3, [b"noscript"], [0, 0, 0], [b"@slow", b"@connection"],
     [b"request_policy:all_shards", b"response_policy:agg_min"]),
    ("slowlog", -2, [], [0, 0, 0], [b"@slow"], []),
    ("slowlog|get", -2, [b"admin", b"loading", b"stale"], [0, 0, 0], _ADMIN,
     [b"request_policy:all_nodes", b"nondeterministic_output"]),
    ("slowlog|reset", 2, [b"admin", b"loading", b"stale"], [0, 0, 0], _ADMIN,
     [b"request_policy:all_nodes", b"response_policy:all_succeeded"]),
    ("slowlog|len", 2, [b"admin", b"loading", b"stale"], [0, 0, 0], _ADMIN,
     [b"request_policy:all_nodes", b"response_policy:agg_sum", b"nondeterministic_output"]),
    ("slowlog|help", 2, [b"loading", b"stale"], [0, 0, 0], [b"@slow"], []),
    ("latency", -2, [], [0, 0, 0], [b"@slow"], []),
    ("latency|doctor", 2, [b"admin", b"noscript", b"loading", b"stale"], [0, 0, 0], _ADMIN,
     _SPECIAL),
    ("latency|help", 2, [b"loading", b"stale"], [0, 0, 0], [b"@slow"], []),
    ("latency|history", 3, [b"admin", b"noscript", b"loading", b"stale"], [0, 0, 0], _ADMIN,
     _SPECIAL),
    ("latency|reset", -2, [b"admin", b"noscript", b"loading", b"stale"], [0, 0, 0], _ADMIN,
     [b"request_policy:all_nodes", b"response_policy:all_succeeded"]),
    ("latency|graph", 3, [b"admin", b"noscript", b"loading", b"stale"], [0, 0, 0], _ADMIN,
     _SPECIAL),
    ("latency|latest", 2, [b"admin", b"noscript", b"loading", b"stale"], [0, 0, 0], _ADMIN,
     _SPECIAL),
    ("latency|histogram", -2, [b"admin", b"noscript", b"loading", b"stale"], [0, 0, 0],
     _ADMIN, _SPECIAL),
    ("memory", -2, [], [0, 0, 0], [b"@slow"], []),
    ("memory|doctor", 2, [], [0, 0, 0], [b"@slow"], _SHARDS),
    ("memory|help", 2, [b"loading", b"stale"], [0, 0, 0], [b"@slow"], []),
    ("memory|usage", -3, [b"readonly"], [2, 2, 1], [b"@read", b"@slow"], []),
    ("memory|malloc-stats", 2, [], [0, 0, 0], [b"@slow"], _SHARDS),
    ("memory|purge", 2, [], [0, 0, 0], [b"@slow"],
     [b"request_policy:all_shards", b"response_policy:all_succeeded"]),
    ("memory|stats", 2, [], [0, 0, 0], [b"@slow"], _SHARDS),
])
def test_command_info(call, name, arity, flags, keys, categories, tips):
    info = call("COMMAND", "INFO", name)[0]
    assert info[:8] == [name.encode(), arity, flags, *keys, categories, tips]
    if name == "memory|usage":
        assert info[8] == [[b"flags", [b"RO"], b"begin_search",
                            [b"type", b"index", b"spec", [b"index", 2]], b"find_keys",
                            [b"type", b"range", b"spec",
                             [b"lastkey", 0, b"keystep", 1, b"limit", 0]]]]
    else:
        assert info[8] == []


def test_command_info_containers_list_their_subcommands(call):
    for name, subs in (("slowlog", {"get", "len", "reset", "help"}),
                       ("latency", {"doctor", "graph", "histogram", "history", "latest", "reset",
                                    "help"}),
                       ("memory", {"doctor", "help", "malloc-stats", "purge", "stats",
                                   "usage"})):
        info = call("COMMAND", "INFO", name)[0]
        got = {s[0].decode().split("|")[1] for s in info[9]}
        assert subs <= got


@pytest.mark.streamd_only
def test_memory_usage_samples_a_big_value(monkeypatch):
    # As in Redis, SAMPLES fields or nodes stand for the whole value (0: all of them), so
    # a big hash or stream is sized without walking it; the estimate stays close.
    from streamd.commands.ops import estimate_size
    from streamd.store.hashes import Hash
    from streamd.store.stream import Stream, _Node

    h = Hash({b"f%05d" % i: b"v" * 10 for i in range(10_000)})
    assert estimate_size(b"h", h, 5) == estimate_size(b"h", h, 0)  # fields of one size

    s = Stream()
    for i in range(1, 5_001):
        s.append(i << 64, [b"f", b"x" * 20], 100, 4096)
    seen = []
    lp_bytes = _Node.lp_bytes
    monkeypatch.setattr(_Node, "lp_bytes", lambda node: seen.append(node) or lp_bytes(node))
    whole = estimate_size(b"s", s, 0)
    assert len(seen) == len(s._nodes) == 50
    seen.clear()
    sampled = estimate_size(b"s", s, 5)
    assert len(seen) == 6  # five nodes, then the last one
    assert abs(sampled - whole) <= 64


def test_latency_histogram_without_samples(wire):
    # Commands with no latency samples (unknown names, a container, one never run since
    # CONFIG RESETSTAT) are left out: an empty map, a flat empty array in RESP2.
    for do in (wire, wire.resp3):
        do("CONFIG", "RESETSTAT")
    assert wire("LATENCY", "HISTOGRAM", "nosuch", "client", "client|kill") == b"*0\r\n"
    assert wire.resp3("LATENCY", "HISTOGRAM", "nosuch", "xdel") == b"%0\r\n"
    assert wire("MULTI") == b"+OK\r\n"
    assert wire("LATENCY", "HISTOGRAM", "nosuch") == b"+QUEUED\r\n"
    assert wire("EXEC") == b"*1\r\n*0\r\n"
