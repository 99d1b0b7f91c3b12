"""CLIENT LIST / CLIENT INFO fields and INFO's clients and memory sections, as Redis 7.0.15
fills them for clients in different states.

Buffer sizes that come from Redis's allocator (qbuf-free, rbs, tot-mem, omem) are checked by
their rule (zero or not, which way they move); byte counts Redis derives from the requests
themselves (qbuf of a partial request, argv-mem, multi-mem) are exact.
"""

from __future__ import annotations

import socket

from tests.conftest import wait_for

# Redis 7.0's CLIENT LIST fields in their order (later versions add more in between).
_FIELDS_7_0 = ("id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub",
               "ssub", "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp",
               "obl", "oll", "omem", "tot-mem", "events", "cmd", "user", "redir", "resp")


def _parse(line: str) -> dict:
    return dict(field.split("=", 1) for field in line.split(" "))


def _line(r, cid: int) -> dict:
    text = r.execute_command("CLIENT LIST ID", cid)
    text = text.decode() if isinstance(text, bytes) else text
    lines = text.splitlines()
    assert len(lines) == 1
    return _parse(lines[0])


def _client_id(conn) -> int:
    conn.send(b"CLIENT ID\r\n")
    reply = conn.read_reply()
    return int(reply[1:-2])


def _in_order(names, wanted) -> bool:
    """Whether ``wanted`` occur in ``names`` in this order (other names may come between)."""
    at = 0
    for name in names:
        if at < len(wanted) and name == wanted[at]:
            at += 1
    return at == len(wanted)


def _bulk_text(reply: bytes) -> str:
    head, _, rest = reply.partition(b"\r\n")
    assert head[:1] in (b"$", b"=") and rest.endswith(b"\r\n")
    text = rest[:-2].decode()
    return text[4:] if head[:1] == b"=" else text  # RESP3 verbatim: 'txt:' first


def test_client_info_is_one_line_of_the_callers_own_fields(r, raw):
    c = raw()
    c.send(b"*2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n")
    text = _bulk_text(c.read_reply())
    assert text.endswith("\n") and text.count("\n") == 1
    me = _parse(text.rstrip("\n"))
    assert _in_order(list(me), _FIELDS_7_0)
    assert (me["cmd"], me["user"], me["events"], me["flags"]) == ("client|info", "default",
                                                                 "r", "N")
    assert int(me["id"]) == _client_id(c)
    # Redis still holds the running request: its bytes in the query buffer (redis-py sends
    # *2 $6 CLIENT $4 INFO: 26 bytes) and its arguments (CLIENT, INFO: 10 bytes).
    assert (me["qbuf"], me["argv-mem"]) == ("26", "10")
    assert int(me["qbuf-free"]) > 0 and int(me["rbs"]) > 0
    assert (me["obl"], me["oll"], me["omem"], me["multi"], me["multi-mem"]) == (
        "0", "0", "0", "-1", "0")
    # CLIENT LIST shows the same of the client listing itself.
    c.send(b"CLIENT LIST ID %s\r\n" % me["id"].encode())
    listed = _parse(_bulk_text(c.read_reply()).rstrip("\n"))
    assert listed["cmd"] == "client|list" and listed["id"] == me["id"]
    assert listed["argv-mem"] == str(len("CLIENTLISTID") + len(me["id"]))
    assert listed["qbuf"] == str(len(b"CLIENT LIST ID %s\r\n" % me["id"].encode()))


def test_an_idle_client_holds_no_request_arguments_or_output(r, raw):
    c = raw()
    cid = _client_id(c)
    idle = _line(r, cid)
    assert (idle["qbuf"], idle["argv-mem"], idle["multi-mem"]) == ("0", "0", "0")
    assert (idle["obl"], idle["oll"], idle["omem"], idle["events"]) == ("0", "0", "0", "r")
    assert int(idle["qbuf-free"]) > 0  # room made for the read of CLIENT ID
    assert int(idle["tot-mem"]) > 0 and idle["cmd"] == "client|id"


def test_a_partial_request_is_split_into_query_buffer_and_arguments(r, raw):
    """Redis takes a multibulk request apart as its lines come: the header, each complete
    argument (counted in argv-mem) and the length line of the one still coming; qbuf is
    what is left. An inline request stays whole in qbuf until its newline."""
    c = raw()
    cid = _client_id(c)
    steps = [
        (b"*3\r\n$3\r\nSET\r\n$1", "2", "3"),  # in the middle of a length line
        (b"\r\nk\r\n$2\r\nv", "1", "4"),  # in the middle of an argument
    ]
    for data, qbuf, argv_mem in steps:
        c.send(data)
        assert wait_for(lambda: _line(r, cid)["qbuf"] == qbuf)
        line = _line(r, cid)
        assert line["argv-mem"] == argv_mem
        assert int(line["qbuf-free"]) > 0
    c.send(b"v\r\n")
    assert c.read_reply() == b"+OK\r\n"
    done = _line(r, cid)
    assert (done["qbuf"], done["argv-mem"], done["cmd"]) == ("0", "0", "set")
    # A header and a complete length line leave nothing in the query buffer.
    c.send(b"*2\r\n$4\r\nECHO\r\n$3\r\n")
    assert wait_for(lambda: _line(r, cid)["argv-mem"] == "4")
    assert _line(r, cid)["qbuf"] == "0"
    c.send(b"abc\r\nGET")
    assert c.read_reply() == b"$3\r\nabc\r\n"
    assert wait_for(lambda: _line(r, cid)["qbuf"] == "3")
    assert _line(r, cid)["argv-mem"] == "0"


def test_queued_commands_count_in_multi_and_multi_mem(r, raw):
    """multi-mem: each queued command's argument bytes plus 8 per argument (their
    pointers), however the command was sent."""
    c = raw()
    cid = _client_id(c)
    c.send(b"MULTI\r\n")
    assert c.read_reply() == b"+OK\r\n"
    line = _line(r, cid)
    assert (line["flags"], line["multi"], line["multi-mem"]) == ("x", "0", "0")
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\nXADD s * f v\r\n")
    assert c.read_reply() == b"+QUEUED\r\n" and c.read_reply() == b"+QUEUED\r\n"
    line = _line(r, cid)
    assert (line["multi"], line["multi-mem"]) == ("2", str((5 + 3 * 8) + (8 + 5 * 8)))
    c.send(b"EXEC\r\n")
    c.read_reply()
    line = _line(r, cid)
    assert (line["flags"], line["multi"], line["multi-mem"]) == ("N", "-1", "0")


def test_a_blocked_client_keeps_its_commands_arguments(r, raw):
    c = raw()
    cid = _client_id(c)
    c.send(b"XREAD BLOCK 0 STREAMS s $\r\n")
    assert wait_for(lambda: _line(r, cid)["flags"] == "b")
    line = _line(r, cid)
    assert (line["cmd"], line["qbuf"]) == ("xread", "0")
    assert line["argv-mem"] == str(len("XREADBLOCK0STREAMSs$"))
    r.xadd("s", {"f": "v"})
    c.read_reply()
    line = _line(r, cid)
    assert (line["flags"], line["argv-mem"]) == ("N", "0")


def test_unwritten_replies_show_in_the_output_fields_and_info(r, target):
    """A client that does not read its replies: Redis keeps them in its reply list (oll
    blocks, omem bytes), waits to write (events=rw), counts them in tot-mem and in INFO's
    client_recent_max_output_buffer; once read, all of it is 0 again."""
    r.set("big", "x" * 200_000)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((target.host, target.port))
    try:
        sock.sendall(b"CLIENT ID\r\n")
        cid = int(sock.recv(100)[1:-2])
        idle_mem = int(_line(r, cid)["tot-mem"])
        sock.sendall(b"GET big\r\n" * 20)
        assert wait_for(lambda: int(_line(r, cid)["omem"]) > 0)
        line = _line(r, cid)
        assert int(line["oll"]) > 0 and line["events"] == "rw"
        assert int(line["tot-mem"]) > idle_mem + int(line["omem"]) // 2
        # Redis samples the clients' buffers in its cron.
        assert wait_for(lambda: r.info("clients")["client_recent_max_output_buffer"] > 0)
        want = 20 * len(b"$200000\r\n" + b"x" * 200_000 + b"\r\n")
        got = 0
        sock.settimeout(5)
        while got < want:
            chunk = sock.recv(1 << 20)
            assert chunk
            got += len(chunk)
        line = _line(r, cid)
        assert (line["obl"], line["oll"], line["omem"], line["events"]) == ("0", "0", "0", "r")
    finally:
        sock.close()


def test_client_states_in_their_fields(r, raw):
    """SETNAME, HELLO 3, SELECT, subscriptions, tracking with a redirect, MONITOR and
    NO-EVICT, each as Redis 7.0.15 lists it."""
    clients = [raw() for _ in range(7)]
    ids = [_client_id(c) for c in clients]
    named, hello, selected, sub, tracker, monitor, noevict = clients
    for conn, data, replies in (
            (named, b"CLIENT SETNAME foo\r\n", 1), (hello, b"HELLO 3\r\n", 1),
            (selected, b"SELECT 5\r\n", 1),
            (sub, b"SUBSCRIBE a b\r\nPSUBSCRIBE p*\r\nSSUBSCRIBE x\r\n", 4),
            (tracker, b"CLIENT TRACKING on REDIRECT %d\r\n" % ids[3], 1),
            (monitor, b"MONITOR\r\n", 1), (noevict, b"CLIENT NO-EVICT on\r\n", 1)):
        conn.send(data)
        for _ in range(replies):
            conn.read_reply()
    lines = [_line(r, cid) for cid in ids]
    assert (lines[0]["name"], lines[0]["cmd"]) == ("foo", "client|setname")
    assert (lines[1]["resp"], lines[1]["cmd"]) == ("3", "hello")
    assert (lines[2]["db"], lines[2]["cmd"]) == ("5", "select")
    assert [lines[3][k] for k in ("flags", "sub", "psub", "ssub")] == ["P", "2", "1", "1"]
    assert (lines[4]["flags"], lines[4]["redir"], lines[4]["cmd"]) == (
        "t", str(ids[3]), "client|tracking")
    assert (lines[5]["flags"], lines[5]["cmd"]) == ("O", "monitor")
    assert (lines[6]["flags"], lines[6]["cmd"]) == ("e", "client|no-evict")
    for line in lines:
        assert (line["user"], line["qbuf"], line["argv-mem"], line["omem"]) == (
            "default", "0", "0", "0")
    pubsub = r.execute_command("CLIENT LIST TYPE pubsub")
    pubsub = pubsub.decode() if isinstance(pubsub, bytes) else pubsub
    assert [_parse(l)["id"] for l in pubsub.splitlines()] == [str(ids[3])]


def test_info_clients_fields_in_redis_order(r, raw):
    names = list(r.info("clients"))
    assert _in_order(names, ("connected_clients", "cluster_connections", "maxclients",
                             "client_recent_max_input_buffer",
                             "client_recent_max_output_buffer", "blocked_clients",
                             "tracking_clients", "clients_in_timeout_table"))
    assert names[:5] == ["connected_clients", "cluster_connections", "maxclients",
                         "client_recent_max_input_buffer", "client_recent_max_output_buffer"]
    # A big partial request in a query buffer is seen by the recent maximum.
    c = raw()
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n" + b"x" * 60_000)
    assert wait_for(lambda: r.info("clients")["client_recent_max_input_buffer"] >= 60_000)


# Redis 7.0.15's INFO memory fields in their order.
_MEMORY_7_0 = (
    "used_memory", "used_memory_human", "used_memory_rss", "used_memory_rss_human",
    "used_memory_peak", "used_memory_peak_human", "used_memory_peak_perc",
    "used_memory_overhead", "used_memory_startup", "used_memory_dataset",
    "used_memory_dataset_perc", "allocator_allocated", "allocator_active",
    "allocator_resident", "total_system_memory", "total_system_memory_human",
    "used_memory_lua", "used_memory_vm_eval", "used_memory_lua_human",
    "used_memory_scripts_eval", "number_of_cached_scripts", "number_of_functions",
    "number_of_libraries", "used_memory_vm_functions", "used_memory_vm_total",
    "used_memory_vm_total_human", "used_memory_functions", "used_memory_scripts",
    "used_memory_scripts_human", "maxmemory", "maxmemory_human", "maxmemory_policy",
    "allocator_frag_ratio", "allocator_frag_bytes", "allocator_rss_ratio",
    "allocator_rss_bytes", "rss_overhead_ratio", "rss_overhead_bytes",
    "mem_fragmentation_ratio", "mem_fragmentation_bytes", "mem_not_counted_for_evict",
    "mem_replication_backlog", "mem_total_replication_buffers", "mem_clients_slaves",
    "mem_clients_normal", "mem_cluster_links", "mem_aof_buffer", "mem_allocator",
    "active_defrag_running", "lazyfree_pending_objects", "lazyfreed_objects")


def test_info_memory_fields_and_used_memory_moving_with_the_data(r, target):
    memory = r.info("memory")
    names = list(memory)
    if target.version[:2] == (7, 0) or target.is_streamd:
        assert names == list(_MEMORY_7_0)
    assert str(memory["used_memory_peak_perc"]).endswith("%")
    assert memory["used_memory_peak"] >= memory["used_memory"]
    assert memory["used_memory"] >= memory["used_memory_startup"]
    before = r.info("memory")
    for i in range(4):
        r.set(f"k{i}", "x" * 500_000)
    grown = r.info("memory")
    assert grown["used_memory"] - before["used_memory"] >= 2_000_000
    assert grown["used_memory_dataset"] - before["used_memory_dataset"] >= 2_000_000
    assert grown["used_memory_peak"] >= grown["used_memory"]
    r.flushall()
    assert wait_for(lambda: r.info("memory")["used_memory"] < grown["used_memory"] - 1_500_000)
    assert r.info("memory")["used_memory_peak"] >= grown["used_memory"]


def test_input_behind_a_blocked_or_paused_command_stays_unparsed(r, raw):
    """Redis parses nothing more of a client's input while its command waits: the
    requests behind it, even a partial one, count whole in qbuf; argv-mem is the waiting
    command's."""
    b = raw()
    bid = _client_id(b)
    b.send(b"XREAD BLOCK 0 STREAMS s $\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nab\r\n")
    assert wait_for(lambda: _line(r, bid)["flags"] == "b")
    line = _line(r, bid)
    assert (line["qbuf"], line["argv-mem"]) == (str(6 + 22), "20")
    b.send(b"*2\r\n$4\r\nECHO\r\n$2\r\nc")
    assert wait_for(lambda: _line(r, bid)["qbuf"] == str(6 + 22 + 19))
    assert _line(r, bid)["argv-mem"] == "20"
    p = raw()
    pid = _client_id(p)
    r.execute_command("CLIENT PAUSE", 10000, "WRITE")
    try:
        p.send(b"SET k vv\r\nGET k\r\n")
        assert wait_for(lambda: _line(r, pid)["flags"] == "b")
        line = _line(r, pid)
        assert (line["cmd"], line["qbuf"], line["argv-mem"]) == ("set", "7", "6")
    finally:
        r.execute_command("CLIENT UNPAUSE")
    assert p.read_reply() == b"+OK\r\n" and p.read_reply() == b"$2\r\nvv\r\n"
    line = _line(r, pid)
    assert (line["flags"], line["qbuf"], line["argv-mem"]) == ("N", "0", "0")


def test_a_write_to_a_client_ends_its_idle_time(r, raw):
    """idle counts from the client's last read or the last write to it: a message to a
    subscriber, or the reply of a blocked command woken, makes it 0 again."""
    sub, blocked = raw(), raw()
    sid, bid = _client_id(sub), _client_id(blocked)
    sub.send(b"SUBSCRIBE ch\r\n")
    sub.read_reply()
    blocked.send(b"XREAD BLOCK 0 STREAMS s $\r\n")
    assert wait_for(lambda: int(_line(r, sid)["idle"]) >= 1 and int(_line(r, bid)["idle"]) >= 1)
    r.publish("ch", "hello")
    r.xadd("s", {"f": "v"})
    sub.read_reply()
    blocked.read_reply()
    assert (_line(r, sid)["idle"], _line(r, bid)["idle"]) == ("0", "0")


def test_memory_stats_and_info_memory_tell_the_same_figures(r, call):
    r.set("k", "x" * 1_000_000)
    info = r.info("memory")
    stats = call.resp3("MEMORY", "STATS")
    # Each call allocates a little by itself: close, not equal.
    assert abs(stats[b"total.allocated"] - info["used_memory"]) < 100_000
    assert abs(stats[b"dataset.bytes"] - info["used_memory_dataset"]) < 100_000
    assert stats[b"dataset.bytes"] >= 1_000_000
    assert stats[b"startup.allocated"] == info["used_memory_startup"]
    assert stats[b"peak.allocated"] >= stats[b"total.allocated"]


def test_replies_of_the_read_being_served_are_in_the_buffer_not_waiting(r, raw):
    """The replies of earlier requests of the same read sit in the 16 KiB reply buffer
    (obl) until the read is served; Redis has not tried to write them, so it waits for
    no write (events=r)."""
    c = raw()
    c.send(b"PING\r\nCLIENT INFO\r\n")
    assert c.read_reply() == b"+PONG\r\n"
    me = _parse(_bulk_text(c.read_reply()).rstrip("\n"))
    assert (me["obl"], me["oll"], me["omem"], me["events"]) == (str(len(b"+PONG\r\n")), "0",
                                                                "0", "r")


def test_client_info_run_by_exec_shows_exec_as_the_running_request(r, raw):
    """Inside EXEC, Redis's client still holds EXEC's request (qbuf, argv-mem, cmd=exec)
    and its queue (flags x, multi, multi-mem) while the queued commands run."""
    c = raw()
    c.send(b"MULTI\r\nCLIENT INFO\r\nSET a 1\r\n")
    assert [c.read_reply() for _ in range(3)] == [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n"]
    c.send(b"EXEC\r\n")
    reply = c.read_reply()
    head, _, rest = reply.partition(b"\r\n")
    assert head == b"*2" and rest.endswith(b"+OK\r\n")
    me = _parse(_bulk_text(rest[:-len(b"+OK\r\n")]).rstrip("\n"))
    assert [me[k] for k in ("flags", "multi", "qbuf", "argv-mem", "multi-mem", "cmd")] == [
        "x", "2", str(len(b"EXEC\r\n")), str(len("EXEC")),
        str((len("CLIENTINFO") + 2 * 8) + (len("SETa1") + 3 * 8)), "exec"]
