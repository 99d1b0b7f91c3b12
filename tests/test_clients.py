"""Real clients against the server: redis-py asyncio, redis-cli, redis-benchmark."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import time

import pytest
import redis
import redis.asyncio as aioredis


def test_asyncio_client_pipeline_and_resp3(target, r):
    async def main():
        for protocol in (2, 3):
            client = aioredis.Redis(host=target.host, port=target.port, protocol=protocol)
            async with client.pipeline(transaction=False) as pipe:
                for i in range(200):
                    pipe.echo(f"m{i}")
                replies = await pipe.execute()
            assert replies == [f"m{i}".encode() for i in range(200)]
            async with client.pipeline(transaction=True) as pipe:
                pipe.set("k", "v").get("k")
                assert await pipe.execute() == [True, b"v"]
            await client.aclose()

    asyncio.run(main())


def test_many_concurrent_asyncio_clients(target, r):
    async def worker(n):
        client = aioredis.Redis(host=target.host, port=target.port)
        for i in range(20):
            assert await client.echo(f"{n}-{i}") == f"{n}-{i}".encode()
        await client.aclose()

    async def main():
        await asyncio.gather(*(worker(n) for n in range(50)))

    asyncio.run(main())


needs_cli = pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")


@needs_cli
def test_redis_cli_command_docs(target, r):
    out = subprocess.run(["redis-cli", "-h", target.host, "-p", str(target.port),
                          "COMMAND", "DOCS", "XADD"], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0
    assert "summary" in out.stdout and "arguments" in out.stdout and "stream" in out.stdout


@needs_cli
def test_redis_cli_interactive_session(target, r):
    # redis-cli reads commands from stdin when it is not a terminal, as in a piped session.
    script = "SET greeting hello\nGET greeting\nPING\nNOSUCH x\n"
    out = subprocess.run(["redis-cli", "-h", target.host, "-p", str(target.port)],
                         input=script, capture_output=True, text=True, timeout=20)
    assert out.stdout.split("\n")[:4] == [
        "OK", "hello", "PONG",
        "ERR unknown command 'NOSUCH', with args beginning with: 'x' "]


@pytest.mark.skipif(shutil.which("redis-benchmark") is None, reason="redis-benchmark not installed")
def test_redis_benchmark_runs_without_errors(target, r):
    out = subprocess.run(["redis-benchmark", "-h", target.host, "-p", str(target.port), "-q",
                          "-t", "ping_mbulk,set,get", "-c", "50", "-P", "16", "-n", "20000"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout.replace("\r", "\n")
    for name in ("PING_MBULK", "SET", "GET"):
        assert f"{name}: " in text and "requests per second" in text
    assert "ERR" not in text and "error" not in out.stderr.lower()


# --- redis-py pub/sub, keyspace notifications, INFO and CLIENT LIST parsing -------------------

def _drain(p, n, timeout=2.0):
    """The next ``n`` messages of a PubSub object (None where none came in time)."""
    return [p.get_message(timeout=timeout) for _ in range(n)]


def _msg(kind, channel, data, pattern=None):
    return {"type": kind, "pattern": pattern, "channel": channel, "data": data}


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_pubsub_object(target, r, protocol):
    client = target.client(protocol=protocol)
    p = client.pubsub()
    p.subscribe("c1", "c2")
    p.psubscribe("p*")
    p.ssubscribe("s1")
    assert _drain(p, 4) == [
        _msg("subscribe", b"c1", 1), _msg("subscribe", b"c2", 2),
        _msg("psubscribe", b"p*", 3),
        _msg("ssubscribe", b"s1", 1)]  # shard subscriptions are counted apart
    assert (r.publish("c1", "hello"), r.publish("pa", "x"), r.spublish("s1", "y")) == (1, 1, 1)
    assert _drain(p, 3) == [_msg("message", b"c1", b"hello"),
                            _msg("pmessage", b"pa", b"x", pattern=b"p*"),
                            _msg("smessage", b"s1", b"y")]
    assert p.get_message(timeout=0.1) is None
    # PING in subscribed mode answers with a pong message, in RESP2 and RESP3 alike.
    p.ping()
    assert p.get_message(timeout=2) == _msg("pong", None, b"")
    assert r.pubsub_numsub("c1", "zz") == [(b"c1", 1), (b"zz", 0)]
    assert r.pubsub_numpat() == 1
    assert sorted(r.pubsub_channels()) == [b"c1", b"c2"]
    assert r.pubsub_shardchannels() == [b"s1"] and r.pubsub_shardnumsub("s1") == [(b"s1", 1)]
    # Unsubscribing from all: one confirmation per name, the count going down to zero.
    p.unsubscribe()
    p.punsubscribe()
    p.sunsubscribe()
    got = _drain(p, 4)
    assert sorted(m["channel"] for m in got[:2]) == [b"c1", b"c2"]
    assert [m["type"] for m in got] == ["unsubscribe", "unsubscribe", "punsubscribe",
                                        "sunsubscribe"]
    assert [m["data"] for m in got] == [2, 1, 0, 0]
    assert not p.subscribed
    p.close()
    # The connection went back to the pool in a usable state.
    assert r.pubsub_numsub("c1") == [(b"c1", 0)] and r.pubsub_numpat() == 0
    client.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_pubsub_health_check_and_pool(target, r, protocol):
    pool = redis.ConnectionPool(host=target.host, port=target.port, db=target.db,
                                password=target.password, protocol=protocol,
                                health_check_interval=1)
    client = redis.Redis(connection_pool=pool)
    p = client.pubsub(ignore_subscribe_messages=True)
    p.subscribe("hc")
    assert p.get_message(timeout=0.2) is None
    time.sleep(1.2)
    # The next read first sends the health-check PING; its reply must not surface as a
    # message, and the subscription must still work afterwards.
    assert p.get_message(timeout=0.2) is None
    assert client.publish("hc", "after") == 1
    assert p.get_message(timeout=2) == _msg("message", b"hc", b"after")
    # The pool's other connections are normal clients meanwhile.
    assert client.set("k", "v") and client.get("k") == b"v"
    p.close()
    pool.disconnect()


def test_redis_py_pubsub_run_in_thread_and_listen(target, r):
    client = target.client()
    got = []
    p = client.pubsub()
    p.subscribe(**{"t1": got.append})
    p.psubscribe(**{"t*": got.append})
    worker = p.run_in_thread(sleep_time=0.05, daemon=True)
    try:
        deadline = time.monotonic() + 5
        while r.pubsub_numsub("t1") != [(b"t1", 1)] or r.pubsub_numpat() != 1:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert r.publish("t1", "m") == 2
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        worker.stop()
        worker.join(5)
    assert sorted(m["type"] for m in got) == ["message", "pmessage"]
    assert all(m["channel"] == b"t1" and m["data"] == b"m" for m in got)
    p.close()

    p = client.pubsub()
    p.subscribe("l1")
    r.publish("l1", "one")
    stream = p.listen()
    assert next(stream) == _msg("subscribe", b"l1", 1)
    assert next(stream) == _msg("message", b"l1", b"one")
    p.unsubscribe("l1")
    assert next(stream) == _msg("unsubscribe", b"l1", 0)
    p.close()
    client.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_asyncio_pubsub(target, r, protocol):
    async def main():
        client = aioredis.Redis(host=target.host, port=target.port, db=target.db,
                                password=target.password, protocol=protocol)
        async with client.pubsub() as p:
            await p.subscribe("a1")
            await p.psubscribe("a*")
            assert await p.get_message(timeout=2) == _msg("subscribe", b"a1", 1)
            assert await p.get_message(timeout=2) == _msg("psubscribe", b"a*", 2)
            assert await client.publish("a1", "x") == 2
            got = [await p.get_message(timeout=2) for _ in range(2)]
            assert got == [_msg("message", b"a1", b"x"), _msg("pmessage", b"a1", b"x", b"a*")]
            await p.ping()
            assert await p.get_message(timeout=2) == _msg("pong", None, b"")
            await p.unsubscribe()
            await p.punsubscribe()
            assert [(m["type"], m["data"]) for m in
                    [await p.get_message(timeout=2) for _ in range(2)]] == [
                ("unsubscribe", 1), ("punsubscribe", 0)]
        assert await client.pubsub_numpat() == 0
        await client.aclose()

    asyncio.run(main())


def test_redis_py_resp3_push_in_a_plain_client(target, r):
    # A RESP3 client that subscribes through execute_command gets pushes, not replies: redis-py
    # hands them to the connection's push handler and still reads PUBLISH's own reply.
    pushes = []
    client = target.client(protocol=3)
    conn = client.connection_pool.get_connection()
    conn._parser.set_pubsub_push_handler(pushes.append)
    try:
        conn.send_command("SUBSCRIBE", "rp")
        conn.read_response(push_request=True)
        assert r.publish("rp", "hi") == 1
        conn.send_command("PING")
        assert conn.read_response() in (b"PONG", "PONG")
    finally:
        client.connection_pool.release(conn)
        client.close()
    assert [b"message", b"rp", b"hi"] in pushes


@pytest.mark.parametrize("protocol", [2, 3])
def test_keyspace_notifications_through_redis_py(target, r, protocol):
    client = target.client(protocol=protocol)
    assert client.config_set("notify-keyspace-events", "KEA")
    try:
        assert client.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKE"}
        p = client.pubsub(ignore_subscribe_messages=True)
        p.psubscribe(f"__key*@{target.db}__:*")
        assert p.get_message(timeout=1) is None
        r.set("k", "v")
        r.expire("k", 100)
        r.delete("k")
        events = [(m["channel"], m["data"]) for m in _drain(p, 6)]
        ks, ke = f"__keyspace@{target.db}__:".encode(), f"__keyevent@{target.db}__:".encode()
        assert events == [(ks + b"k", b"set"), (ke + b"set", b"k"),
                          (ks + b"k", b"expire"), (ke + b"expire", b"k"),
                          (ks + b"k", b"del"), (ke + b"del", b"k")]
        assert all(m is None for m in _drain(p, 1, timeout=0.1))
        p.close()
    finally:
        client.config_set("notify-keyspace-events", "")
        client.close()


def test_config_get_set_through_redis_py(target, r):
    cobl = r.config_get("client-output-buffer-limit")["client-output-buffer-limit"]
    assert cobl.split()[::4] == ["normal", "slave", "pubsub"]
    try:
        assert r.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 30")
        assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"].endswith(
            "pubsub 1048576 524288 30")
        got = r.config_get("notify-keyspace-events", "client-output-buffer-limit")
        assert set(got) == {"notify-keyspace-events", "client-output-buffer-limit"}
        with pytest.raises(redis.ResponseError):
            r.config_set("client-output-buffer-limit", "pubsub 1mb")
    finally:
        r.config_set("client-output-buffer-limit", cobl)
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == cobl


@pytest.mark.parametrize("protocol", [2, 3])
def test_info_and_client_list_parse_in_redis_py(target, r, make_client, protocol):
    client = make_client(protocol=protocol)
    r.hset("h", "f", "v")
    client.info()  # fills commandstats and latencystats
    info = client.info("everything")
    for field in ("redis_version", "connected_clients", "used_memory", "pubsub_channels",
                  "pubsub_patterns", "db0", "cmdstat_info", "total_commands_processed"):
        assert field in info, field
    assert info["db0"]["keys"] == 1
    assert isinstance(info["cmdstat_info"], dict) and info["cmdstat_info"]["calls"] >= 1
    for section in ("server", "clients", "memory", "persistence", "stats", "replication",
                    "cpu", "modules", "errorstats", "cluster", "keyspace", "commandstats",
                    "latencystats", "default", "all"):
        assert isinstance(client.info(section), dict)
    sub = make_client(protocol=protocol)
    p = sub.pubsub()
    p.subscribe("cl", "cl2")
    p.psubscribe("cl*")
    assert all(_drain(p, 3))
    rows = client.client_list()
    assert all(isinstance(row, dict) and "id" in row and "flags" in row for row in rows)
    mine = client.client_info()
    assert str(mine["resp"]) == str(protocol) and str(mine["sub"]) == "0"
    subscriber = [row for row in rows if row["sub"] == "2"]
    assert len(subscriber) == 1 and subscriber[0]["psub"] == "1"
    assert "P" in subscriber[0]["flags"] and subscriber[0]["cmd"] == "psubscribe"
    assert [row["id"] for row in client.client_list(_type="pubsub")] == [subscriber[0]["id"]]
    p.close()


@pytest.mark.min_redis("7.4")
@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_hash_field_ttl_helpers(target, r, protocol):
    c = target.client(protocol=protocol)
    c.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert c.hexpire("h", 100, "a", "zz") == [1, -2]
    assert c.hpexpire("h", 100000, "b", nx=True) == [1]
    assert c.hpexpire("h", 100000, "b", nx=True) == [0]
    assert c.httl("h", "a", "b", "c", "zz") == [100, 100, -1, -2]
    assert 0 < c.hpttl("h", "a")[0] <= 100000
    assert c.hexpiretime("h", "a")[0] > time.time() and c.hpexpiretime("h", "c") == [-1]
    assert c.hpersist("h", "a", "c") == [1, -1]
    assert c.hexpire("nokey", 10, "a") == [-2] and c.httl("nokey", "a") == [-2]
    c.close()


@pytest.mark.min_redis("8.0")
@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_hgetdel_hgetex_hsetex(target, r, protocol):
    c = target.client(protocol=protocol)
    c.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert c.hgetdel("h", "c", "zz") == [b"3", None]
    assert c.hgetex("h", "a", "b", ex=50) == [b"1", b"2"] and c.httl("h", "a") == [50]
    assert c.hgetex("h", "a", persist=True) == [b"1"] and c.httl("h", "a") == [-1]
    assert c.hsetex("h", "x", "1", ex=10) == 1
    assert c.hsetex("h", mapping={"y": "2"}, px=5000) == 1
    assert c.httl("h", "x", "y") == [10, 5]
    assert c.hgetdel("nokey", "a") == [None] and c.hgetex("nokey", "a") == [None]
    c.close()


def test_command_count_list_and_pubsub_rows_agree(r):
    names = {n.decode() for n in r.command_list()}
    # COMMAND LIST names subcommands too (container|sub); COMMAND COUNT and COMMAND do not.
    top = {n for n in names if "|" not in n}
    assert r.command_count() == len(top) == len(r.command())
    assert set(r.command()) == top
    pubsub = {n.decode() for n in r.command_list(category="pubsub")}
    assert {"subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe",
            "sunsubscribe", "publish", "spublish"} <= pubsub <= names
    # COMMAND INFO read unparsed: redis-py's COMMAND callback only knows the bare COMMAND.
    conn = r.connection_pool.get_connection()
    try:
        conn.send_command("COMMAND", "INFO", "pubsub")
        row = conn.read_response()[0]
    finally:
        r.connection_pool.release(conn)
    assert {sub[0].decode() for sub in row[9]} == {
        "pubsub|channels", "pubsub|numsub", "pubsub|numpat", "pubsub|help",
        "pubsub|shardchannels", "pubsub|shardnumsub"}


@needs_cli
def test_redis_cli_subscribe_reading_mode(target, r):
    cli = subprocess.Popen(["redis-cli", "-h", target.host, "-p", str(target.port),
                            "--no-raw", "SUBSCRIBE", "ca", "cb"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 5
        while r.pubsub_numsub("cb") != [(b"cb", 1)]:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert r.publish("ca", "hi") == 1
        time.sleep(0.3)
    finally:
        cli.terminate()
        out, _ = cli.communicate(timeout=5)
    assert out.split("\n")[:10] == [
        "Reading messages... (press Ctrl-C to quit)",
        '1) "subscribe"', '2) "ca"', "3) (integer) 1",
        '1) "subscribe"', '2) "cb"', "3) (integer) 2",
        '1) "message"', '2) "ca"', '3) "hi"']


@needs_cli
@pytest.mark.skipif(shutil.which("script") is None, reason="script(1) not installed")
def test_redis_cli_stat_and_latency(target, r):
    # --stat only flushes to a terminal: run it under script(1) for a pseudo-terminal.
    cmd = f"redis-cli -h {target.host} -p {target.port} --stat -i 0.2"
    out = subprocess.run(["timeout", "1.5", "script", "-qc", cmd, "/dev/null"],
                         capture_output=True, text=True, timeout=20).stdout
    lines = [ln for ln in out.replace("\r", "").split("\n") if ln.strip()]
    assert lines[0].startswith("------- data ------") and lines[1].split()[:4] == [
        "keys", "mem", "clients", "blocked"]
    assert len(lines) >= 4 and all(row.split()[0].isdigit() for row in lines[2:4])
    out = subprocess.run(["redis-cli", "-h", target.host, "-p", str(target.port),
                          "--latency", "--raw", "-i", "0.3"],
                         capture_output=True, text=True, timeout=20, input="")
    # --raw --latency prints one summary line (min max avg samples) and stops after -i.
    fields = out.stdout.split()
    assert out.returncode == 0 and len(fields) == 4 and int(fields[3]) > 0, out


@needs_cli
@pytest.mark.parametrize("name", ["SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "PUBLISH",
                                  "SPUBLISH", "PUBSUB"])
def test_redis_cli_command_docs_of_pubsub(target, r, name):
    out = subprocess.run(["redis-cli", "-h", target.host, "-p", str(target.port),
                          "COMMAND", "DOCS", name], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0 and out.stdout.startswith(name.lower() + "\n")
    assert "pubsub" in out.stdout and ("arguments" in out.stdout or "subcommands" in out.stdout)


@needs_cli
def test_redis_cli_monitor_sees_another_clients_commands(target, r):
    auth = ["-a", target.password, "--no-auth-warning"] if target.password else []
    cli = subprocess.Popen(["redis-cli", "-h", target.host, "-p", str(target.port), *auth,
                            "monitor"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert cli.stdout.readline() == "OK\n"
        r.set("greeting", 'say "hi"\n')
        r.xadd("events", {"kind": "login"}, id="1-1")
        r.echo("done")
        lines = []
        while not lines or '"ECHO" "done"' not in lines[-1]:
            lines.append(cli.stdout.readline())
            assert lines[-1], "redis-cli stopped"
    finally:
        cli.terminate()
        cli.communicate(timeout=5)
    mine = [line.split("] ", 1)[1].rstrip("\n") for line in lines
            if line.split("] ", 1)[1].split(" ")[0] in ('"SET"', '"XADD"', '"ECHO"')]
    assert mine == ['"SET" "greeting" "say \\"hi\\"\\n"',
                    '"XADD" "events" "1-1" "kind" "login"', '"ECHO" "done"']
    assert all(re.match(r"^\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] ", line) for line in lines)


def test_redis_py_monitor(target, r, make_client):
    with make_client().monitor() as m:
        r.set("k", "v")
        r.get("k")
        seen = []
        while not seen or seen[-1]["command"] != "GET k":
            seen.append(m.next_command())
    seen = [s for s in seen if s["command"] in ("SET k v", "GET k")]
    assert [s["command"] for s in seen] == ["SET k v", "GET k"]
    assert all(s["db"] == 0 and s["client_type"] == "tcp" for s in seen)
    assert seen[0]["client_port"] == seen[1]["client_port"]
