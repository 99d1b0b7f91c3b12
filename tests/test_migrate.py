"""MIGRATE from the target (streamd or a real Redis, ``--redis-url``) to a second streamd.

The destination is always an in-process streamd, so against a real Redis these tests also
show that streamd restores what Redis sends.
"""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import error_text, pattern_listener
from tests.inprocess import InProcessServer


@pytest.fixture(scope="module")
def dest_server():
    with InProcessServer() as srv:
        yield srv


@pytest.fixture
def dest(dest_server):
    client = redis.Redis(port=dest_server.port, protocol=2)
    client.flushall()
    yield client
    client.close()


def _migrate(r, dest, *args):
    return r.execute_command("MIGRATE", "127.0.0.1", dest.connection_pool.connection_kwargs[
        "port"], *args)


def test_moves_a_key_with_its_ttl(r, dest):
    r.xadd("s", {"f": "v"}, id="1-1")
    r.set("k", "v", px=50_000)
    assert _migrate(r, dest, "s", 0, 1000) == b"OK"
    assert _migrate(r, dest, "k", 0, 1000) == b"OK"
    assert r.exists("s", "k") == 0
    assert dest.xrange("s") == [(b"1-1", {b"f": b"v"})]
    assert 40_000 < dest.pttl("k") <= 50_000


def test_copy_replace_and_the_targets_errors(r, dest):
    r.set("k", "new")
    dest.set("k", "old")
    assert error_text(_migrate, r, dest, "k", 0, 1000) == (
        "Target instance replied with error: BUSYKEY Target key name already exists.")
    assert r.get("k") == b"new"  # a refused key stays
    assert _migrate(r, dest, "k", 0, 1000, "COPY", "REPLACE") == b"OK"
    assert r.get("k") == dest.get("k") == b"new"


def test_keys_option_and_missing_keys(r, dest):
    r.set("a", "1")
    r.hset("h", mapping={"f": "v"})
    assert _migrate(r, dest, "", 3, 1000, "KEYS", "a", "missing", "h") == b"OK"
    assert r.exists("a", "h") == 0
    d3 = redis.Redis(port=dest.connection_pool.connection_kwargs["port"], db=3)
    assert d3.get("a") == b"1" and d3.hgetall("h") == {b"f": b"v"}
    assert _migrate(r, dest, "", 3, 1000, "KEYS", "missing") == b"NOKEY"
    assert _migrate(r, dest, "missing", 3, 1000) == b"NOKEY"
    d3.close()


@pytest.mark.parametrize("args, text", [
    (("k", 0, 1000, "KEYS", "a"), "When using MIGRATE KEYS option, the key argument must be "
                                  "set to the empty string"),
    (("k", 0, 1000, "AUTH"), "syntax error"),
    (("k", 0, 1000, "AUTH2", "u"), "syntax error"),
    (("k", 0, 1000, "BOGUS"), "syntax error"),
    (("k", 0, "x"), "value is not an integer or out of range"),
    (("k", "x", 1000), "value is not an integer or out of range"),
])
def test_argument_errors(r, dest, args, text):
    r.set("k", "v")
    assert error_text(_migrate, r, dest, *args) == text
    assert r.get("k") == b"v"


@pytest.mark.parametrize("port, text", [
    # Redis's connect is non-blocking: a refusal shows up as a failed write (twice, with
    # its one retry). The port is read with atoi; the resolver refuses a negative one and
    # wraps one past 65535. Recorded from Redis 7.0.15.
    (1, "IOERR error or timeout writing to target instance"),
    ("abc", "IOERR error or timeout writing to target instance"),  # port 0
    (-5, "IOERR error or timeout connecting to the client"),
])
def test_targets_that_cannot_be_reached(r, port, text):
    r.set("k", "v")
    with pytest.raises(redis.ResponseError) as info:
        r.execute_command("MIGRATE", "127.0.0.1", port, "k", 0, 200)
    assert str(info.value) == text
    assert r.get("k") == b"v"


def test_auth_to_the_target(r):
    # A target of its own: connections are kept per target, with the AUTH they had.
    with InProcessServer(requirepass="sekret") as srv:
        def migrate(*args):
            return r.execute_command("MIGRATE", "127.0.0.1", srv.port, *args)
        r.set("k", "v")
        assert error_text(migrate, "k", 0, 1000).startswith(
            "Target instance replied with error: NOAUTH")
        assert error_text(migrate, "k", 0, 1000, "AUTH", "wrong").startswith(
            "Target instance replied with error: WRONGPASS")
        assert r.get("k") == b"v"
        assert migrate("k", 0, 1000, "AUTH", "sekret") == b"OK"
        r.set("k2", "v")
        assert migrate("k2", 0, 1000, "AUTH2", "default", "sekret") == b"OK"
        r.set("k3", "v")
        assert migrate("k3", 0, 1000) == b"OK"  # the kept connection is authenticated
        assert r.exists("k", "k2", "k3") == 0
        d = redis.Redis(port=srv.port, password="sekret")
        assert d.mget("k", "k2", "k3") == [b"v"] * 3
        d.close()


def test_moved_keys_are_announced_as_deleted(r, target, dest):
    r.config_set("notify-keyspace-events", "KEg")
    try:
        r.set("k", "v")
        with pattern_listener(target, "__keyspace@0__:k") as drain:
            _migrate(r, dest, "k", 0, 1000)
            events = [data for _, data in drain(0.2)]
    finally:
        r.config_set("notify-keyspace-events", "")
    assert events == [b"del"]


def test_key_positions(r):
    # Recorded from Redis 7.0.15; the AUTH value "KEYS" is a password, not the keyword.
    assert r.command_getkeys("MIGRATE", "h", "1", "k", "0", "5") == ["k"]
    assert r.command_getkeys("MIGRATE", "h", "1", "", "0", "5", "AUTH", "KEYS", "KEYS", "a",
                             "b") == ["a", "b"]


def test_a_slow_target_times_out(r):
    # A listener that never answers: the read times out, and the key stays.
    import socket
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    try:
        r.set("k", "v")
        t = time.monotonic()
        with pytest.raises(redis.ResponseError) as info:
            r.execute_command("MIGRATE", "127.0.0.1", lsock.getsockname()[1], "k", 0, 300)
        assert str(info.value) == "IOERR error or timeout reading to target instance"
        assert time.monotonic() - t < 3
        assert r.get("k") == b"v"
    finally:
        lsock.close()


def test_kept_connections_close_after_ten_idle_seconds():
    import socket

    from streamd.protocol.upstream import UpstreamCache
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(4)
    cache = UpstreamCache()
    try:
        port = lsock.getsockname()[1]
        first = cache.get("127.0.0.1", port, 1.0, now=100.0)
        assert cache.get("127.0.0.1", port, 1.0, now=105.0) is first  # reused
        cache.close_idle(now=114.0)
        assert len(cache) == 1  # used at 105: not idle for 10 s yet
        cache.close_idle(now=115.5)
        assert len(cache) == 0 and first.conn.sock.fileno() == -1
    finally:
        cache.close_all()
        lsock.close()
