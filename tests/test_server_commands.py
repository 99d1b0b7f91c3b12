"""Server commands: INFO, CONFIG, COMMAND, DBSIZE, FLUSH*, TIME, LASTSAVE, FUNCTION FLUSH."""

from __future__ import annotations

import sys
import time

import pytest
import redis

from tests.conftest import dirty, dirty_changes, encode_request, wait_for


def test_info_sections(r, call, target):
    info = r.info("server")
    assert "redis_version" in info and info["redis_mode"] == "standalone"
    if target.is_streamd:
        assert info["redis_version"] == "8.8.0" and "streamd_version" in info
    text = call("INFO")
    for section in (b"# Server", b"# Clients", b"# Memory", b"# Persistence", b"# Stats",
                    b"# Keyspace"):
        assert section in text
    assert b"# Commandstats" not in text
    assert b"# Commandstats" in call("INFO", "commandstats")
    clients = r.info("clients")
    assert clients["blocked_clients"] == 0
    if target.version >= (7, 2):
        assert "total_blocking_keys" in clients
    stats = r.info("stats")
    assert "total_commands_processed" in stats and "total_error_replies" in stats
    assert "rdb_changes_since_last_save" in r.info("persistence")


def test_info_server_names_the_event_loop_and_clocks(r):
    info = r.info("server")
    if sys.platform.startswith("linux"):
        assert info["multiplexing_api"] == "epoll"
    assert info["monotonic_clock"] == "POSIX clock_gettime"
    # seconds on a 24-bit wrap (OBJECT IDLETIME's clock)
    assert abs(info["lru_clock"] - (int(time.time()) & 0xFFFFFF)) <= 2


def test_info_is_verbatim_in_resp3(call):
    assert b"redis_version:" in call.resp3("INFO", "server")


def test_error_counters(r):
    r.config_resetstat()
    for _ in range(3):
        with pytest.raises(redis.ResponseError):
            r.execute_command("NOSUCHCOMMAND")
    with pytest.raises(redis.ResponseError):
        r.execute_command("SELECT", "x")
    stats = r.info("stats")
    assert stats["total_error_replies"] == 4
    errorstats = r.info("errorstats")
    assert errorstats["errorstat_ERR"]["count"] == 4
    r.set("s", "v")
    with pytest.raises(redis.ResponseError):
        r.execute_command("HGET", "s", "f")
    assert r.info("errorstats")["errorstat_WRONGTYPE"]["count"] == 1


def test_commandstats(r):
    r.config_resetstat()
    r.echo("a")
    r.echo("b")
    with pytest.raises(redis.ResponseError):
        r.execute_command("ECHO")
    stats = r.info("commandstats")["cmdstat_echo"]
    assert stats["calls"] == 2 and stats["rejected_calls"] == 1 and stats["failed_calls"] == 0
    with pytest.raises(redis.ResponseError):
        r.execute_command("CLIENT", "SETNAME", "a b")
    assert r.info("commandstats")["cmdstat_client|setname"]["failed_calls"] == 1


def test_config_get_set(r, target):
    assert r.config_get("stream-node-max-entries") == {"stream-node-max-entries": "100"}
    got = r.config_get("stream-node-*")
    assert set(got) == {"stream-node-max-entries", "stream-node-max-bytes"}
    r.config_set("stream-node-max-entries", "7")
    assert r.config_get("stream-node-max-entries")["stream-node-max-entries"] == "7"
    r.config_set("stream-node-max-bytes", "8kb")
    assert r.config_get("stream-node-max-bytes")["stream-node-max-bytes"] == "8192"
    with pytest.raises(redis.ResponseError, match="Unknown option or number of arguments "
                                                  "for CONFIG SET - 'no-such-thing'"):
        r.config_set("no-such-thing", "1")
    with pytest.raises(redis.ResponseError, match="CONFIG SET failed \\(possibly related to "
                                                  "argument 'stream-node-max-entries'\\)"):
        r.config_set("stream-node-max-entries", "abc")
    assert r.config_get("no-such-*") == {}


@pytest.mark.min_redis("8.6")
def test_config_idmp_ranges(r):
    with pytest.raises(redis.ResponseError, match="argument must be between 1 and 86400 inclusive"):
        r.config_set("stream-idmp-duration", "0")
    r.config_set("stream-idmp-maxsize", "10000")
    assert r.config_get("stream-idmp-maxsize")["stream-idmp-maxsize"] == "10000"


def test_config_get_resp3_is_map(r3):
    assert r3.execute_command("CONFIG", "GET", "databases") == {b"databases": b"16"}


def test_command_table(call):
    count = call("COMMAND", "COUNT")
    assert count > 40
    info = call("COMMAND", "INFO", "get", "xadd", "nosuch")
    assert info[0][0] == b"get" and info[0][1] == 2 and info[0][3:6] == [1, 1, 1]
    assert info[1][0] == b"xadd" and info[1][1] == -5
    assert info[2] is None
    names = call("COMMAND", "LIST")
    assert b"get" in names and b"xadd" in names
    assert call("COMMAND", "LIST", "FILTERBY", "PATTERN", "xad*") == [b"xadd"]
    everything = call("COMMAND")
    assert len(everything) == count


@pytest.mark.parametrize("name, arity, flags, categories", [
    ("monitor", 1, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("client|reply", 3, [b"noscript", b"loading", b"stale"], [b"@slow", b"@connection"]),
])
def test_command_info_of_monitor_and_client_reply(call, name, arity, flags, categories):
    [info] = call("COMMAND", "INFO", name)
    assert (info[0], info[1], info[2], info[3:6], info[6]) == (
        name.encode(), arity, flags, [0, 0, 0], categories)


def test_command_docs_of_client_reply(call):
    docs = call.resp3("COMMAND", "DOCS", "client|reply")[b"client|reply"]
    assert (docs[b"since"], docs[b"group"], docs[b"complexity"]) == (
        b"3.2.0", b"connection", b"O(1)")
    [arg] = docs[b"arguments"]
    assert arg[b"type"] == b"oneof"
    assert [a[b"token"] for a in arg[b"arguments"]] == [b"ON", b"OFF", b"SKIP"]


def test_command_docs_for_redis_cli(call):
    docs = call.resp3("COMMAND", "DOCS", "xadd")
    xadd = docs[b"xadd"]
    assert xadd[b"group"] == b"stream" and xadd[b"since"] == b"5.0.0"
    arg_names = [a[b"name"] for a in xadd[b"arguments"]]
    assert arg_names[:2] == [b"key", b"nomkstream"]


def test_command_getkeys(call):
    assert call("COMMAND", "GETKEYS", "SET", "a", "b") == [b"a"]
    assert call("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == [b"a", b"b"]


def test_dbsize_flush(call):
    call("SET", "a", 1)
    call("SET", "b", 2)
    assert call("DBSIZE") == 2
    call("SELECT", "1")
    call("SET", "c", 3)
    assert call("FLUSHDB", "ASYNC") == b"OK"
    assert call("DBSIZE") == 0
    call("SELECT", "0")
    assert call("DBSIZE") == 2
    with pytest.raises(redis.ResponseError, match="syntax error"):
        call("FLUSHALL", "NOW")
    assert call("FLUSHALL", "SYNC") == b"OK"
    assert call("DBSIZE") == 0


def test_time_and_lastsave(r):
    secs, usecs = r.execute_command("TIME")
    assert abs(int(secs) - time.time()) < 5 and 0 <= int(usecs) < 1_000_000
    assert isinstance(r.lastsave().timestamp(), float)


def test_function_flush(r):
    assert r.execute_command("FUNCTION", "FLUSH") == b"OK"


def test_dirty_counter(r):
    before = dirty(r)
    r.set("x", 1)
    r.set("y", 2)
    assert dirty(r) >= before + 2


# Each command with the changes Redis adds to rdb_changes_since_last_save for it, in order
# (checked against Redis 7.0.15). Commands made of several steps count as Redis counts
# them: SET with a TTL is one change, RENAME one, HSET one per pair given.
_DIRTY_CASES = [
    (("SET", "a", "1", "EX", "100"), 1),
    (("SET", "a", "2", "PX", "100000", "GET"), 1),
    (("SETEX", "b", "100", "v"), 1),
    (("PSETEX", "b", "100000", "v"), 1),
    (("SET", "a", "3", "NX"), 0),
    (("HSET", "h", "f", "1", "g", "2", "k", "3"), 3),
    (("HSET", "h", "f", "1"), 1),  # an unchanged value still counts
    (("HMSET", "h", "x", "1", "y", "2"), 2),
    (("HDEL", "h", "f", "g", "nofield"), 2),
    (("HDEL", "h", "k", "x", "y"), 3),  # the hash goes with its last fields: no extra
    (("RENAME", "b", "c"), 1),
    (("SET", "d", "v"), 1),
    (("RENAME", "c", "d"), 1),  # over an existing key
    (("RENAMENX", "d", "e"), 1),
    (("COPY", "e", "f"), 1),
    (("COPY", "e", "f", "REPLACE"), 1),
    (("MOVE", "f", "1"), 1),
    (("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"), 1),
    (("XADD", "s", "1-0", "f", "v"), 1),
]


def test_dirty_counter_per_command(r):
    assert dirty_changes(r, [argv for argv, _ in _DIRTY_CASES]) == _DIRTY_CASES


def test_dbsize_counts_expired_keys_nothing_touched(r, call):
    """DBSIZE is the size of the key table, O(1): a key past its TTL counts until a lookup
    or the active cycle removes it. The cycle is slowed to once a second, and the check is
    repeated so that a cycle landing inside one short window cannot fail the test."""
    old_hz = r.config_get("hz")["hz"]
    r.config_set("hz", 1)
    try:
        seen = []
        for _ in range(5):
            call("SET", "kept", "v")
            call("SET", "gone", "v", "PX", "1")
            time.sleep(0.01)
            size = call("DBSIZE")
            gone = call("EXISTS", "gone")  # the lookup expires it
            seen.append((size, gone, call("DBSIZE")))
            if seen[-1] == (2, 0, 1):
                break
        assert seen[-1] == (2, 0, 1), seen
    finally:
        r.config_set("hz", old_hz)


@pytest.mark.streamd_only
def test_handler_bug_replies_an_error_and_the_connection_keeps_serving(r, monkeypatch):
    """A bug inside a handler becomes an error reply (and a log line), never a dropped
    connection; it is counted like any other error reply."""
    from streamd.commands.table import TABLE

    def broken(ctx, argv):
        raise ZeroDivisionError("simulated handler bug")

    before = r.info("errorstats").get("errorstat_ERR", {}).get("count", 0)
    monkeypatch.setattr(TABLE[b"echo"], "handler", broken)
    with pytest.raises(redis.ResponseError, match="internal error while executing the command"):
        r.echo("x")
    pipe = r.pipeline(transaction=False)  # the same path inside one batch of requests
    pipe.echo("y").ping()
    replies = pipe.execute(raise_on_error=False)
    assert isinstance(replies[0], redis.ResponseError) and replies[1] is True
    monkeypatch.undo()
    assert r.echo("x") == b"x"
    assert r.info("errorstats")["errorstat_ERR"]["count"] == before + 2


_DEFAULT_HEADERS = [b"# Server", b"# Clients", b"# Memory", b"# Persistence", b"# Stats",
                    b"# Replication", b"# CPU", b"# Modules", b"# Errorstats", b"# Cluster",
                    b"# Keyspace"]


def _headers(text: bytes) -> list:
    return [line for line in text.split(b"\r\n") if line.startswith(b"#")]


@pytest.mark.parametrize("sections, headers", [
    ((), _DEFAULT_HEADERS),
    (("default",), _DEFAULT_HEADERS),
    (("SERVER",), [b"# Server"]),
    (("server", "Server"), [b"# Server"]),
    (("server", "clients"), [b"# Server", b"# Clients"]),
    # Sections come in Redis's order, whatever order they are asked in.
    (("keyspace", "server"), [b"# Server", b"# Keyspace"]),
    (("commandstats", "cpu", "clients"), [b"# Clients", b"# CPU", b"# Commandstats"]),
    (("cpu",), [b"# CPU"]),
    (("nosuchsection",), []),
])
def test_info_section_selection(call, sections, headers):
    assert _headers(call("INFO", *sections)) == headers


@pytest.mark.parametrize("sections", [("all",), ("everything",), ("ALL",),
                                      ("commandstats", "everything")])
def test_info_all_adds_commandstats_and_latencystats(call, sections):
    assert _headers(call("INFO", *sections)) == [
        b"# Server", b"# Clients", b"# Memory", b"# Persistence", b"# Stats",
        b"# Replication", b"# CPU", b"# Modules", b"# Commandstats", b"# Errorstats",
        b"# Latencystats", b"# Cluster", b"# Keyspace"]


def test_info_fields_clients_parse(r, restore_config):
    restore_config("maxmemory")
    r.config_set("maxmemory", "3gb")
    memory = r.info("memory")
    assert memory["maxmemory_human"] == "3.00G"
    for field in ("used_memory_human", "used_memory_rss_human", "used_memory_peak_human"):
        assert str(memory[field])[-1] in "BKMG"
    r.config_set("maxmemory", "0")
    assert r.info("memory")["maxmemory_human"] == "0B"
    replication = r.info("replication")
    assert len(replication["master_replid"]) == 40
    assert replication["master_replid2"] == 0 and replication["second_repl_offset"] == -1
    stats = list(r.info("stats"))
    assert stats.index("unexpected_error_replies") + 1 == stats.index("total_error_replies")


def test_info_keyspace_avg_ttl_estimates_the_remaining_ttl(r):
    r.set("k", "v", ex=100)
    r.set("other", "v")
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # Redis's estimate moves with its expiry cycle
        avg_ttl = r.info("keyspace")["db0"]["avg_ttl"]
        if avg_ttl:
            break
        time.sleep(0.05)
    assert 90_000 < avg_ttl <= 100_000


def test_info_clients_and_stats_counters(r, make_client, raw):
    before = r.info()
    other = make_client()
    other.ping()
    after = r.info()
    assert after["connected_clients"] == before["connected_clients"] + 1
    assert after["total_connections_received"] >= before["total_connections_received"] + 1
    assert after["blocked_clients"] == 0
    c = raw()
    c.send(b"XREAD BLOCK 0 STREAMS s $\r\n")
    deadline = time.monotonic() + 5
    while r.info("clients")["blocked_clients"] != 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert r.info("clients")["blocked_clients"] == 1


def _info_stats(conn) -> dict:
    req = encode_request("INFO", "stats")
    conn.send(req)
    reply = conn.read_reply()
    body = reply.split(b"\r\n", 1)[1]
    fields = dict(line.split(b":", 1) for line in body.split(b"\r\n") if b":" in line)
    return {k.decode(): v.decode() for k, v in fields.items()}, len(req), len(reply)


def test_info_stats_network_and_io_counters(raw):
    """Totals over every connection since CONFIG RESETSTAT, closed ones included; a peer's
    close counts as one more read, as Redis counts the read that returns nothing."""
    c = raw()
    c.send(encode_request("CONFIG", "RESETSTAT"))
    assert c.read_reply() == b"+OK\r\n"
    stats, info_len, reply_len = _info_stats(c)
    # The INFO request is read before the reply is built; the +OK was written after reset.
    assert (stats["total_net_input_bytes"], stats["total_net_output_bytes"]) == (
        str(info_len), "5")
    assert (stats["total_reads_processed"], stats["total_writes_processed"]) == ("1", "1")
    assert stats["instantaneous_ops_per_sec"] == "0"
    d = raw()
    d.send(b"PING\r\n")
    assert d.read_reply() == b"+PONG\r\n"
    d.close()
    time.sleep(0.3)  # lets the server see the close
    stats, _, _ = _info_stats(c)
    assert int(stats["total_net_input_bytes"]) == 2 * info_len + 6
    assert int(stats["total_net_output_bytes"]) == 5 + reply_len + 7
    assert (stats["total_reads_processed"], stats["total_writes_processed"]) == ("4", "3")


def test_info_stats_instantaneous_rates(raw):
    c = raw()
    c.send(encode_request("CONFIG", "RESETSTAT"))
    assert c.read_reply() == b"+OK\r\n"
    c.send(encode_request("PING") * 3000)
    assert c.read_exact(7 * 3000) == b"+PONG\r\n" * 3000
    # Samples are taken every 100 ms, by the cron: the first one after the burst may come
    # up to one cron period later (a second, when an earlier test set hz 1 briefly).
    deadline = time.monotonic() + 3
    while True:
        time.sleep(0.1)
        stats, _, _ = _info_stats(c)
        if int(stats["instantaneous_ops_per_sec"]) > 0 or time.monotonic() > deadline:
            break
    assert int(stats["instantaneous_ops_per_sec"]) > 0
    assert float(stats["instantaneous_input_kbps"]) > 0
    assert float(stats["instantaneous_output_kbps"]) > 0


def test_info_expired_keys(r):
    r.config_resetstat()
    r.set("gone", "v", px=1)
    time.sleep(0.01)
    assert r.get("gone") is None
    assert r.info("stats")["expired_keys"] >= 1


# INFO stats' fields in Redis 7.0.15, in its order, but for reply_buffer_shrinks and
# reply_buffer_expands (Redis's resizing of its own reply buffers; streamd has none).
_REDIS_7_0_STATS = (
    "total_connections_received total_commands_processed instantaneous_ops_per_sec "
    "total_net_input_bytes total_net_output_bytes total_net_repl_input_bytes "
    "total_net_repl_output_bytes instantaneous_input_kbps instantaneous_output_kbps "
    "instantaneous_input_repl_kbps instantaneous_output_repl_kbps rejected_connections "
    "sync_full sync_partial_ok sync_partial_err expired_keys expired_stale_perc "
    "expired_time_cap_reached_count expire_cycle_cpu_milliseconds evicted_keys "
    "evicted_clients total_eviction_exceeded_time current_eviction_exceeded_time "
    "keyspace_hits keyspace_misses pubsub_channels pubsub_patterns pubsubshard_channels "
    "latest_fork_usec total_forks migrate_cached_sockets slave_expires_tracked_keys "
    "active_defrag_hits active_defrag_misses active_defrag_key_hits "
    "active_defrag_key_misses total_active_defrag_time current_active_defrag_time "
    "tracking_total_keys tracking_total_items tracking_total_prefixes "
    "unexpected_error_replies total_error_replies dump_payload_sanitizations "
    "total_reads_processed total_writes_processed io_threaded_reads_processed "
    "io_threaded_writes_processed").split()


def test_info_stats_has_redis_7_0_fields_in_its_order(r):
    """Monitoring tools read these by name; a field they miss is a gap in their graphs."""
    fields = list(r.info("stats"))
    assert [f for f in fields if f in _REDIS_7_0_STATS] == _REDIS_7_0_STATS


def test_info_expire_cycle_stats(r):
    """The active expiry cycle's running estimate of the expired share of the TTL keys it
    samples (expired_stale_perc) rises when it finds keys nobody read after they expired;
    CONFIG RESETSTAT zeroes it and the other cycle counters."""
    r.config_resetstat()
    assert r.info("stats")["expired_stale_perc"] == 0
    for i in range(50):
        r.set(f"k{i}", "v", px=1)
    assert wait_for(lambda: r.info("stats")["expired_keys"] == 50)
    assert r.info("stats")["expired_stale_perc"] > 0
    r.config_resetstat()
    stats = r.info("stats")
    assert (stats["expired_stale_perc"], stats["expired_time_cap_reached_count"]) == (0, 0)


def test_info_keyspace_lists_non_empty_databases(r, call):
    call("SET", "a", "1")
    call("SET", "b", "1", "EX", "100")
    call("SELECT", "2")
    call("SET", "c", "1")
    keyspace = r.info("keyspace")
    assert set(keyspace) == {"db0", "db2"}
    assert (keyspace["db0"]["keys"], keyspace["db0"]["expires"]) == (2, 1)
    assert (keyspace["db2"]["keys"], keyspace["db2"]["expires"]) == (1, 0)


def test_config_get_several_patterns(call):
    got = call("CONFIG", "GET", "hz", "databases", "stream-node-max-*")
    assert dict(zip(got[::2], got[1::2])) == {
        b"hz": b"10", b"databases": b"16", b"stream-node-max-entries": b"100",
        b"stream-node-max-bytes": b"4096"}


def _pairs(reply) -> dict:
    return dict(zip(reply[::2], reply[1::2]))


@pytest.mark.parametrize("args, expected", [
    # A plain name is echoed as sent, case kept, alias or not.
    (("hash-max-ziplist-entries",), {b"hash-max-ziplist-entries": b"512"}),
    (("HASH-MAX-listpack-ENTRIES",), {b"HASH-MAX-listpack-ENTRIES": b"512"}),
    (("lua-time-limit",), {b"lua-time-limit": b"5000"}),
    (("Stream-Node-Max-Entries",), {b"Stream-Node-Max-Entries": b"100"}),
    # An alias and its parameter are two names: both reported.
    (("lua-time-limit", "busy-reply-threshold"),
     {b"lua-time-limit": b"5000", b"busy-reply-threshold": b"5000"}),
    (("hash-max-listpack-entries", "hash-max-ziplist-entries"),
     {b"hash-max-listpack-entries": b"512", b"hash-max-ziplist-entries": b"512"}),
    # Patterns reach aliases too, and report names in their own (lower) case.
    (("hash-max-ziplist*",),
     {b"hash-max-ziplist-entries": b"512", b"hash-max-ziplist-value": b"64"}),
    (("HASH-MAX-*-ENTRIES",),
     {b"hash-max-listpack-entries": b"512", b"hash-max-ziplist-entries": b"512"}),
    (("list-max-*",), {b"list-max-listpack-size": b"-2", b"list-max-ziplist-size": b"-2"}),
    # A name asked twice (in any case, or also matched by a pattern) is reported once,
    # under the spelling that came first.
    (("hz", "HZ", "Hz"), {b"hz": b"10"}),
    (("HZ", "h[z]"), {b"HZ": b"10"}),
    (("h?", "HZ"), {b"hz": b"10"}),
    (("nosuch", "hz", "no-such-*"), {b"hz": b"10"}),
])
def test_config_get_names_as_redis_echoes_them(call, args, expected):
    assert _pairs(call("CONFIG", "GET", *args)) == expected


def test_config_get_alias_in_resp3_is_a_map(call):
    assert call.resp3("CONFIG", "GET", "lua-time-limit", "busy*") == {
        b"lua-time-limit": b"5000", b"busy-reply-threshold": b"5000"}


@pytest.mark.parametrize("args, error", [
    (("hz", "10", "hz", "11"),
     r"^CONFIG SET failed \(possibly related to argument 'hz'\) - duplicate parameter$"),
    (("hz", "10", "stream-node-max-entries"), "^syntax error$"),
    (("databases", "4"),
     r"^CONFIG SET failed \(possibly related to argument 'databases'\) - can't set immutable"),
])
def test_config_set_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("CONFIG", "SET", *args)
    assert r.config_get("hz")["hz"] == "10" and r.config_get("databases")["databases"] == "16"


def test_config_set_is_all_or_nothing(r):
    with pytest.raises(redis.ResponseError, match="'stream-node-max-entries'"):
        r.execute_command("CONFIG", "SET", "hz", "20", "stream-node-max-entries", "abc")
    assert r.config_get("hz")["hz"] == "10"


def test_command_info_and_docs_without_names_cover_every_command(call):
    count = call("COMMAND", "COUNT")
    assert len(call("COMMAND", "INFO")) == count
    assert len(call.resp3("COMMAND", "DOCS")) == count
    docs = call.resp3("COMMAND", "DOCS", "get", "nosuch", "xadd")
    assert list(docs) == [b"get", b"xadd"]


def _resp3(raw):
    c = raw()
    c.send(encode_request("HELLO", "3"))
    c.read_reply()
    return c


def _key_spec(flags: bytes, index: int, lastkey: int, keystep: int = 1) -> bytes:
    return (b"%3\r\n$5\r\nflags\r\n" + flags +
            b"$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n"
            b"$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:" + b"%d" % index + b"\r\n"
            b"$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n"
            b"%3\r\n$7\r\nlastkey\r\n:" + b"%d" % lastkey + b"\r\n$7\r\nkeystep\r\n:" +
            b"%d" % keystep + b"\r\n$5\r\nlimit\r\n:0\r\n")


def test_command_info_resp3_shape(raw):
    """Flags and categories are sets of simple strings in Redis's bit order, tips a set,
    key specs a set of maps, and no subcommands an empty set."""
    c = _resp3(raw)
    c.send(encode_request("COMMAND", "INFO", "xlen", "nosuch", "rename"))
    assert c.read_reply() == (
        b"*3\r\n"
        b"*10\r\n$4\r\nxlen\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
        b"~3\r\n+@read\r\n+@stream\r\n+@fast\r\n~0\r\n~1\r\n" +
        _key_spec(b"~1\r\n+RO\r\n", 1, 0) + b"~0\r\n"
        b"_\r\n"
        b"*10\r\n$6\r\nrename\r\n:3\r\n~1\r\n+write\r\n:1\r\n:2\r\n:1\r\n"
        b"~3\r\n+@keyspace\r\n+@write\r\n+@slow\r\n~0\r\n~2\r\n" +
        _key_spec(b"~3\r\n+RW\r\n+access\r\n+delete\r\n", 1, 0) +
        _key_spec(b"~2\r\n+OW\r\n+update\r\n", 2, 0) + b"~0\r\n")


def test_command_info_resp2_flags_are_simple_strings(raw):
    c = raw()
    c.send(encode_request("COMMAND", "INFO", "get"))
    reply = c.read_reply()
    assert reply.startswith(b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n"
                            b":1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n"
                            b"*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n")


def test_command_info_of_a_container_lists_subcommands(call):
    # (The client library turns RESP3 sets into lists; the bytes are checked above.)
    info = call.resp3("COMMAND", "INFO", "xinfo")[0]
    assert info[:2] == [b"xinfo", -2] and list(info[2]) == [] and list(info[6]) == [b"@slow"]
    subs = {sub[0]: sub for sub in info[9]}
    assert set(subs) >= {b"xinfo|stream", b"xinfo|groups", b"xinfo|consumers", b"xinfo|help"}
    stream = subs[b"xinfo|stream"]
    assert list(stream[2]) == [b"readonly"] and list(stream[6]) == [b"@read", b"@stream", b"@slow"]
    [spec] = stream[8]
    assert list(spec[b"flags"]) == [b"RO", b"access"]
    assert spec[b"begin_search"] == {b"type": b"index", b"spec": {b"index": 2}}
    assert spec[b"find_keys"] == {b"type": b"range",
                                  b"spec": {b"lastkey": 0, b"keystep": 1, b"limit": 0}}


def test_command_docs_argument_flags_are_a_set_in_resp3(raw):
    c = _resp3(raw)
    c.send(encode_request("COMMAND", "DOCS", "xinfo|stream"))
    reply = c.read_reply()
    assert b"$5\r\nflags\r\n~1\r\n+optional\r\n" in reply
    assert b"$5\r\nflags\r\n*" not in reply


def test_command_list_names_subcommands_after_their_container(call):
    names = call("COMMAND", "LIST")
    assert b"xgroup|create" in names and b"config|get" in names and b"command|info" in names
    assert names.index(b"xgroup") < names.index(b"xgroup|create")
    assert len(names) > call("COMMAND", "COUNT")


@pytest.mark.parametrize("args, present, absent", [
    # Containers are only @slow, so a data category lists their subcommands alone.
    (("ACLCAT", "stream"), {b"xadd", b"xgroup|create", b"xinfo|stream"}, {b"xgroup", b"xinfo"}),
    (("ACLCAT", "STREAM"), {b"xgroup|setid"}, {b"xgroup"}),
    (("ACLCAT", "slow"), {b"xgroup", b"xinfo", b"config", b"xgroup|create"}, {b"xadd"}),
    (("PATTERN", "xgroup*"), {b"xgroup", b"xgroup|create", b"xgroup|destroy"}, {b"xadd"}),
    (("PATTERN", "XGROUP|*"), {b"xgroup|create", b"xgroup|help"}, {b"xgroup"}),
    (("PATTERN", "config|get"), {b"config|get"}, {b"config"}),
])
def test_command_list_filters_see_subcommands(call, args, present, absent):
    got = set(call("COMMAND", "LIST", "FILTERBY", *args))
    assert present <= got and not absent & got


@pytest.mark.parametrize("name, flags, categories, tips", [
    ("xadd", [b"write", b"denyoom", b"fast"], [b"@write", b"@stream", b"@fast"],
     [b"nondeterministic_output"]),
    ("xpending", [b"readonly"], [b"@read", b"@stream", b"@slow"], [b"nondeterministic_output"]),
    ("hello", [b"noscript", b"loading", b"stale", b"fast", b"no_auth", b"allow_busy"],
     [b"@fast", b"@connection"], []),
    ("client|list", [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous", b"@connection"], [b"nondeterministic_output"]),
    ("client|id", [b"noscript", b"loading", b"stale"], [b"@slow", b"@connection"], []),
    ("config|get", [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"], []),
    ("info", [b"loading", b"stale"], [b"@slow", b"@dangerous"],
     [b"nondeterministic_output", b"request_policy:all_shards", b"response_policy:special"]),
    ("flushall", [b"write"], [b"@keyspace", b"@write", b"@slow", b"@dangerous"],
     [b"request_policy:all_shards", b"response_policy:all_succeeded"]),
    ("time", [b"loading", b"stale", b"fast"], [b"@fast"], [b"nondeterministic_output"]),
    ("command|docs", [b"loading", b"stale"], [b"@slow", b"@connection"],
     [b"nondeterministic_output_order"]),
    ("keys", [b"readonly"], [b"@keyspace", b"@read", b"@slow", b"@dangerous"],
     [b"request_policy:all_shards", b"nondeterministic_output_order"]),
])
def test_command_info_flags_categories_and_tips(call, name, flags, categories, tips):
    info = call("COMMAND", "INFO", name)[0]
    assert (info[2], info[6], info[7]) == (flags, categories, tips)


def test_command_info_key_spec_notes(call):
    spec = call("COMMAND", "INFO", "xadd")[0][8][0]
    assert spec[:4] == [b"notes", b"UPDATE instead of INSERT because of the optional trimming "
                        b"feature", b"flags", [b"RW", b"update"]]


@pytest.mark.parametrize("category, present, absent", [
    ("dangerous", {b"keys", b"flushall", b"config|set", b"client|kill", b"info", b"lastsave"},
     {b"time", b"config", b"dbsize"}),
    ("admin", {b"client|list", b"config|get", b"shutdown", b"lastsave"},
     {b"info", b"dbsize", b"time", b"command", b"client|id"}),
    ("keyspace", {b"dbsize", b"flushdb", b"del"}, {b"info"}),
    ("connection", {b"command", b"command|info", b"client|id", b"hello"}, {b"client"}),
])
def test_command_list_by_category(call, category, present, absent):
    got = set(call("COMMAND", "LIST", "FILTERBY", "ACLCAT", category))
    assert present <= got and not absent & got


@pytest.mark.parametrize("args, want, unwanted", [
    (("FILTERBY", "PATTERN", "XAD*"), [b"xadd"], None),
    (("FILTERBY", "ACLCAT", "stream"), None, b"get"),
    (("FILTERBY", "MODULE", "nosuchmodule"), [], None),
])
def test_command_list_filters(call, args, want, unwanted):
    got = call("COMMAND", "LIST", *args)
    if want is not None:
        assert got == want
    else:
        assert b"xadd" in got and b"xlen" in got and unwanted not in got


@pytest.mark.parametrize("args, error", [
    (("COMMAND", "LIST", "FILTERBY", "BOGUS", "x"), "^syntax error$"),
    (("COMMAND", "LIST", "FOO", "PATTERN", "x"), "^syntax error$"),
    (("COMMAND", "COUNT", "x"), r"^wrong number of arguments for 'command\|count' command$"),
    (("COMMAND", "NOSUCH"), r"^unknown subcommand 'NOSUCH'. Try COMMAND HELP.$"),
    (("COMMAND", "GETKEYS", "nosuch", "a"), "^Invalid command specified$"),
    (("COMMAND", "GETKEYS", "set", "a"), "^Invalid number of arguments specified for command$"),
    (("COMMAND", "GETKEYS", "ping", "x"), "^The command has no key arguments$"),
    # COMMAND GETKEYS[ANDFLAGS] needs a command and at least one argument (arity -4).
    (("COMMAND", "GETKEYS"), r"^wrong number of arguments for 'command\|getkeys' command$"),
    (("COMMAND", "GETKEYS", "xadd"),
     r"^wrong number of arguments for 'command\|getkeys' command$"),
    (("COMMAND", "GETKEYS", "ping"),
     r"^wrong number of arguments for 'command\|getkeys' command$"),
    (("COMMAND", "GETKEYSANDFLAGS", "get"),
     r"^wrong number of arguments for 'command\|getkeysandflags' command$"),
    (("COMMAND", "GETKEYS", "xadd", "k"), "^Invalid number of arguments specified for command$"),
    # Keyless before arity: EXEC takes no arguments, yet the complaint is about keys.
    (("COMMAND", "GETKEYS", "exec", "x"), "^The command has no key arguments$"),
    (("COMMAND", "GETKEYS", "keys", "*"), "^The command has no key arguments$"),
    (("COMMAND", "GETKEYS", "config", "get", "x"), "^The command has no key arguments$"),
    # A container's unknown subcommand, and a container|sub name, are no command at all.
    (("COMMAND", "GETKEYS", "xgroup", "nosuch", "k"), "^Invalid command specified$"),
    (("COMMAND", "GETKEYS", "xinfo|stream", "k"), "^Invalid command specified$"),
    (("COMMAND", "GETKEYSANDFLAGS", "nosuch", "a", "b"), "^Invalid command specified$"),
    # Enough arguments, but no STREAMS keyword to find the keys after.
    (("COMMAND", "GETKEYS", "xread", "count", "1", "block"),
     "^Invalid arguments specified for command$"),
    (("COMMAND", "GETKEYSANDFLAGS", "xreadgroup", "group", "g", "c", "count", "1", "block", "1"),
     "^Invalid arguments specified for command$"),
    (("FLUSHALL", "SYNC", "ASYNC"), "^syntax error$"),
    (("FLUSHDB", "ASYNC", "SYNC"), "^syntax error$"),
    (("FUNCTION", "FLUSH", "BOGUS"), r"^FUNCTION FLUSH only supports SYNC\|ASYNC option$"),
    (("SHUTDOWN", "ABORT"), r"^No shutdown in progress.$"),
    (("FUNCTION", "FLUSH", "SYNC", "x"),
     r"^unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.$"),
])
def test_server_command_errors(call, args, error):
    with pytest.raises(redis.ResponseError, match=error):
        call(*args)


@pytest.mark.parametrize("args, expected", [
    (("xadd", "k", "*", "f", "v"), [[b"k", [b"RW", b"update"]]]),
    (("xread", "count", "1", "streams", "a", "b", "0", "0"),
     [[b"a", [b"RO", b"access"]], [b"b", [b"RO", b"access"]]]),
    (("xreadgroup", "group", "g", "c", "streams", "a", ">"), [[b"a", [b"RO", b"access"]]]),
    (("xgroup", "create", "k", "g", "$"), [[b"k", [b"RW", b"insert"]]]),
    (("xgroup", "destroy", "k", "g"), [[b"k", [b"RW", b"delete"]]]),
    (("xautoclaim", "k", "g", "c", "0", "0"), [[b"k", [b"RW", b"delete"]]]),
    (("xlen", "k"), [[b"k", [b"RO"]]]),
    (("xinfo", "stream", "k"), [[b"k", [b"RO", b"access"]]]),
    (("del", "a", "b"), [[b"a", [b"RM", b"delete"]], [b"b", [b"RM", b"delete"]]]),
    # Each key its own spec: the source is read and deleted, the destination overwritten.
    (("rename", "a", "b"), [[b"a", [b"RW", b"access", b"delete"]], [b"b", [b"OW", b"update"]]]),
    (("copy", "a", "b"), [[b"a", [b"RO", b"access"]], [b"b", [b"OW", b"update"]]]),
    (("mset", "a", "1", "b", "2"), [[b"a", [b"OW", b"update"]], [b"b", [b"OW", b"update"]]]),
    # SET's flags depend on its arguments: GET reads the old value.
    (("set", "k", "v"), [[b"k", [b"OW", b"update"]]]),
    (("set", "k", "v", "nx", "get"), [[b"k", [b"RW", b"access", b"update"]]]),
])
def test_command_getkeysandflags(call, args, expected):
    assert call("COMMAND", "GETKEYSANDFLAGS", *args) == expected


def test_command_getkeysandflags_flags_are_a_set_in_resp3(raw):
    c = raw()
    c.send(encode_request("HELLO", "3"))
    c.read_reply()
    c.send(encode_request("COMMAND", "GETKEYSANDFLAGS", "xack", "k", "g", "0-1"))
    assert c.read_reply() == b"*1\r\n*2\r\n$1\r\nk\r\n~2\r\n+RW\r\n+update\r\n"


def test_command_getkeys_of_a_subcommand(call):
    assert call("COMMAND", "GETKEYS", "XGROUP", "CREATE", "s", "g", "$") == [b"s"]


def test_time_is_two_bulk_strings_and_lastsave_a_past_timestamp(call):
    reply = call("TIME")
    assert [type(x) for x in reply] == [bytes, bytes]
    assert abs(int(reply[0]) + int(reply[1]) / 1e6 - time.time()) < 5
    assert 1_600_000_000 < call("LASTSAVE") <= time.time() + 1


def test_bgsave_and_bgrewriteaof_start_and_refuse_other_arguments(r, call):
    for argv in (("BGSAVE",), ("BGSAVE", "schedule")):
        assert call(*argv) in (b"Background saving started", b"Background saving scheduled")
        # A save still running (Redis forks a child) answers this; streamd's ends at once.
        wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0)
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        call("BGSAVE", "NOW")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        call("BGSAVE", "SCHEDULE", "SCHEDULE")
    assert r.info("persistence")["rdb_changes_since_last_save"] == 0
    assert call("BGREWRITEAOF") in (b"Background append only file rewriting started",
                                    b"Background append only file rewriting scheduled")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'bgrewriteaof'"):
        call("BGREWRITEAOF", "x")


@pytest.mark.parametrize("name", ["REPLICAOF", "SLAVEOF"])
def test_replicaof_no_one_on_a_master_and_its_port_check(r, call, target, name):
    assert call(name, "NO", "ONE") == b"OK"
    assert call(name, "no", "one") == b"OK"
    assert r.execute_command("ROLE")[0] == b"master"
    # The port is checked before anything else happens; none of these makes a replica.
    for port in ("abc", "-1", "65536", "99999999", "1.5"):
        with pytest.raises(redis.ResponseError, match="^Invalid master port$"):
            call(name, "no", port)
    with pytest.raises(redis.ResponseError, match=f"wrong number of arguments for '{name.lower()}'"):
        call(name, "NO")
    if target.is_streamd:  # a real server would start replicating
        with pytest.raises(redis.ResponseError, match="^REPLICAOF host port is not supported"):
            call(name, "127.0.0.1", "6379")
        assert r.execute_command("ROLE")[0] == b"master"


@pytest.mark.parametrize("argv, error", [
    ((), "FAILOVER requires connected replicas."),
    (("ABORT",), "No failover in progress."),
    (("TO", "h", "1", "FORCE", "TIMEOUT", "10"), "FAILOVER requires connected replicas."),
    (("FORCE",), "FAILOVER requires connected replicas."),  # checked before FORCE's needs
    (("TIMEOUT", "0"), "FAILOVER timeout must be greater than 0"),
    (("TIMEOUT", "x"), "value is not an integer or out of range"),
    (("TO", "h", "x"), "value is not an integer or out of range"),
    (("TIMEOUT", "5", "TIMEOUT", "6"), "syntax error"),
    (("TO", "h", "1", "TO", "h", "2"), "syntax error"),
    (("TO", "h"), "syntax error"),
    (("ABORT", "TIMEOUT", "5"), "syntax error"),
])
def test_failover_on_a_master_without_replicas(call, argv, error):
    with pytest.raises(redis.ResponseError, match=f"^{error}$"):
        call("FAILOVER", *argv)


def test_commandstats_usec_per_call(r, call):
    r.config_resetstat()
    for _ in range(3):
        call("COMMAND")  # slow enough to take microseconds
    stats = r.info("commandstats")["cmdstat_command"]
    assert stats["calls"] == 3 and stats["usec"] >= 3
    assert stats["usec_per_call"] == pytest.approx(stats["usec"] / 3, abs=0.01)


def test_flushall_empties_every_database(call):
    call("SET", "a", "1")
    call("SELECT", "1")
    call("SET", "b", "1")
    call("SELECT", "0")
    assert call("FLUSHALL") == b"OK"
    call("SELECT", "1")
    assert call("DBSIZE") == 0


def test_flush_counts_one_change_per_key_removed(r):
    r.mset({"a": 1, "b": 2, "c": 3})
    r.execute_command("SELECT", 1)
    r.set("d", 4)
    r.execute_command("SELECT", 0)
    assert [n for _, n in dirty_changes(r, [("FLUSHDB",), ("FLUSHDB",)])] == [3, 0]
    r.mset({"a": 1, "b": 2})
    assert [n for _, n in dirty_changes(r, [("FLUSHALL",), ("FLUSHALL",)])] == [3, 0]


def test_command_subcommands_count_in_their_own_commandstats_lines(r, raw):
    # COMMAND runs alone and has subcommands: each counts under its own name, as the
    # subcommands of any container do.
    r.config_resetstat()
    c = raw()
    c.send(b"COMMAND DOCS GET\r\nCOMMAND COUNT\r\nCOMMAND FOO\r\nCOMMAND COUNT x\r\n")
    c.read_reply()
    assert c.read_reply().startswith(b":")
    assert c.read_reply().startswith(b"-ERR unknown subcommand 'FOO'")
    assert c.read_reply() == b"-ERR wrong number of arguments for 'command|count' command\r\n"
    r.execute_command("COMMAND")
    stats = r.info("commandstats")
    got = {name: (s["calls"], s["rejected_calls"]) for name, s in stats.items()
           if name.startswith("cmdstat_command")}
    assert got == {"cmdstat_command": (1, 0), "cmdstat_command|count": (1, 1),
                   "cmdstat_command|docs": (1, 0)}


@pytest.mark.parametrize("value, stored", [
    ("0", "0"), ("05", "5"), ("", "0"), ("k", "0"), ("2KB", "2048"), ("3b", "3"),
    ("1k", "1000"), ("1mb", "1048576"),
    (" 5", None), ("5 ", None), ("-0", None), ("-1", None), ("+5", None), ("1.5kb", None),
    ("5x", None), ("0" * 127 + "7", None), ("0" * 126 + "7", "7"),
])
def test_config_memory_values_parse_as_redis_does(r, value, stored):
    # Redis's memtoull: digits, then an optional unit; no sign, no spaces, and no digits at
    # all reads as 0 (stream-node-max-bytes as the example)
    if stored is None:
        with pytest.raises(redis.ResponseError, match="argument must be a memory value$"):
            r.config_set("stream-node-max-bytes", value)
        assert r.config_get("stream-node-max-bytes")["stream-node-max-bytes"] == "4096"
    else:
        r.config_set("stream-node-max-bytes", value)
        assert r.config_get("stream-node-max-bytes")["stream-node-max-bytes"] == stored


def test_total_commands_processed_counts_subcommands(r, call):
    call("PING")  # connects first: redis-py's CLIENT SETINFO exists only since 7.2
    before = r.info("stats")["total_commands_processed"]
    for _ in range(3):
        call("CLIENT", "ID")
    call("XINFO", "HELP")
    call("config", "get", "maxclients")
    after = r.info("stats")["total_commands_processed"]
    assert after - before == 6  # the five, and the first INFO


def test_commandstats_of_refused_container_calls(r, raw):
    # A container called alone is refused for its arity and counted on its own line; an
    # unknown subcommand is no command at all and counted nowhere.
    c = raw()
    c.send(b"CONFIG RESETSTAT\r\nOBJECT foo k\r\nXINFO nope\r\nCLIENT\r\nINFO commandstats\r\n")
    for _ in range(4):
        c.read_reply()
    stats = c.read_reply().decode()
    assert "cmdstat_client:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0" in stats
    assert "cmdstat_object" not in stats and "cmdstat_xinfo" not in stats


@pytest.fixture
def restore_config(r):
    """Puts back, after the test, every parameter the test names (CONFIG SET is global)."""
    saved = {}

    def remember(*names):
        for name in names:
            saved.update(r.config_get(name))

    yield remember
    for name, value in saved.items():
        if r.config_get(name)[name] != value:
            r.config_set(name, value)


def _config_set_error(name, reason):
    return f"^CONFIG SET failed \\(possibly related to argument '{name}'\\) - {reason}$"


_NOT_INT = "argument couldn't be parsed into an integer"


@pytest.mark.parametrize("name, value, stored, error", [
    # Plain integers are read as string2ll does: no '+', no blanks, no leading zeros,
    # nothing outside 64 bits.
    ("stream-node-max-entries", "7", "7", None),
    ("stream-node-max-entries", "+5", None, _NOT_INT),
    ("stream-node-max-entries", " 5", None, _NOT_INT),
    ("stream-node-max-entries", "-0", None, _NOT_INT),
    ("stream-node-max-entries", "05", None, _NOT_INT),
    ("stream-node-max-entries", "99999999999999999999", None, _NOT_INT),
    ("stream-node-max-entries", "-1",
     None, "argument must be between 0 and 9223372036854775807 inclusive"),
    # hz accepts any int and keeps it within 1..500
    ("hz", "0", "1", None),
    ("hz", "1000", "500", None),
    ("hz", "-1", None, "argument must be between 0 and 2147483647 inclusive"),
    ("maxclients", "0", None, "argument must be between 1 and 4294967295 inclusive"),
    ("maxmemory-samples", "0", None, "argument must be between 1 and 2147483647 inclusive"),
    ("list-max-listpack-size", "-10", "-10", None),
    ("list-max-listpack-size", "2147483648",
     None, "argument must be between -2147483648 and 2147483647 inclusive"),
    # memory values: saturating digits, a wrapping unit, unsigned for maxmemory only
    ("hash-max-listpack-value", "1kb", "1024", None),
    ("hash-max-listpack-value", "abc", None, "argument must be a memory value"),
    ("maxmemory", "99999999999999999999kb", "18446744073709550592", None),
    ("stream-node-max-bytes", "9223372036854775808",
     None, "argument must be between 0 and 9223372036854775807 inclusive"),
    ("repl-backlog-size", "1", "16384", None),
    # enums: any case in, the canonical name out; the error lists Redis's order
    ("maxmemory-policy", "ALLKEYS-LRU", "allkeys-lru", None),
    ("maxmemory-policy", "lru", None,
     "argument\\(s\\) must be one of the following: volatile-lru, volatile-lfu, "
     "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"),
    ("appendfsync", "sometimes", None,
     "argument\\(s\\) must be one of the following: everysec, always, no"),
    ("latency-tracking", "YES", "yes", None),
    ("rdbchecksum", "no", None, "can't set immutable config"),
    # save: pairs split on single spaces, seconds >= 1, changes >= 0 (a C int: it wraps)
    ("save", "3600 1 300 +100", "3600 1 300 100", None),
    ("save", "3600 ", "3600 0", None),
    ("save", "10 99999999999", "10 1215752191", None),
    ("save", "", "", None),
    ("save", "3600", None, "Invalid save parameters"),
    ("save", "3600  1", None, "Invalid save parameters"),
    ("save", "0 1", None, "Invalid save parameters"),
    ("save", "1 -1", None, "Invalid save parameters"),
    ("save", "3600 0x1", None, "Invalid save parameters"),
    # notify-keyspace-events: kept in Redis's canonical spelling
    ("notify-keyspace-events", "KEA", "AKE", None),
    ("notify-keyspace-events", "Egx", "gxE", None),
    ("notify-keyspace-events", "nt$", "$tn", None),
    ("notify-keyspace-events", "AdKK", "AK", None),
    ("notify-keyspace-events", "K E", None,
     "Invalid event class character. Use 'Ag\\$lshzxeKEtmdn'."),
    # dir and dbfilename are protected (enable-protected-configs is no)
    ("dir", "/", None, "can't set protected config"),
    ("dbfilename", "x.rdb", None, "can't set protected config"),
])
def test_config_set_values_parse_as_redis_does(r, restore_config, name, value, stored, error):
    restore_config(name)
    before = r.config_get(name)[name]
    if error is None:
        assert r.config_set(name, value)
        assert r.config_get(name)[name] == stored
    else:
        with pytest.raises(redis.ResponseError, match=_config_set_error(name, error)):
            r.config_set(name, value)
        assert r.config_get(name)[name] == before


@pytest.mark.parametrize("args, error", [
    # Every name is checked, in order, before any value is parsed.
    (("hz", "x", "nosuch", "1"),
     "^Unknown option or number of arguments for CONFIG SET - 'nosuch'$"),
    (("hz", "x", "databases", "6"), _config_set_error("databases", "can't set immutable config")),
    (("hz", "x", "dir", "/"), _config_set_error("dir", "can't set protected config")),
    (("hz", "5", "HZ", "x"), _config_set_error("HZ", "duplicate parameter")),
])
def test_config_set_checks_every_name_before_any_value(r, args, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("CONFIG", "SET", *args)
    assert r.config_get("hz")["hz"] == "10"


def test_config_set_an_alias_and_its_parameter_are_not_duplicates(r, restore_config):
    restore_config("hash-max-listpack-entries")
    r.execute_command("CONFIG", "SET", "hash-max-ziplist-entries", "5",
                      "hash-max-listpack-entries", "6")
    assert r.config_get("hash-max-ziplist-entries") == {"hash-max-ziplist-entries": "6"}


def test_config_get_dir_is_the_absolute_working_directory(r):
    assert r.config_get("dir")["dir"].startswith("/")


def test_config_rewrite_without_a_config_file(r):
    if r.info("server")["config_file"]:
        pytest.skip("the target was started with a config file")
    with pytest.raises(redis.ResponseError, match="^The server is running without a config file$"):
        r.execute_command("CONFIG", "REWRITE")
