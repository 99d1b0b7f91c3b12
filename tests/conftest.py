"""Shared fixtures: an in-process streamd on port 0, or any real Redis via --redis-url.

The same tests prove streamd's behaviour and, pointed at a real server, that the tests
encode what Redis itself does. Tests of newer features carry ``@pytest.mark.min_redis("8.6")``
and are skipped when the target is older; streamd-only extensions carry ``streamd_only``.
"""

from __future__ import annotations

import contextlib
import socket
import time

import pytest
import redis

# Server settings a test may change; restored after every test so tests stay independent
# (this matters against a shared real server).
_RESTORED_CONFIGS = (
    "stream-node-max-entries", "stream-node-max-bytes",
    "stream-idmp-duration", "stream-idmp-maxsize",
    "rdbcompression", "hash-max-listpack-entries", "hash-max-listpack-value",
    "sanitize-dump-payload",
)


def encode_request(*args) -> bytes:
    """A request as clients send it: a RESP array of bulk strings (str and int arguments
    encoded as text)."""
    args = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def dirty(client) -> int:
    """INFO's ``rdb_changes_since_last_save``: the writes counted since the last save."""
    return client.info("persistence")["rdb_changes_since_last_save"]


def dirty_changes(client, requests) -> list:
    """``(argv, n)`` for each request run in order, n being what it added to ``dirty``
    (compared with tables of what Redis adds)."""
    out = []
    for argv in requests:
        before = dirty(client)
        client.execute_command(*argv)
        out.append((argv, dirty(client) - before))
    return out


def watch_broken(make_client, key: str, write) -> bool:
    """Whether ``write()``, run between another client's WATCH of ``key`` and its EXEC,
    aborts that transaction (EXEC then answers nil: redis-py's WatchError)."""
    p = make_client().pipeline()
    p.watch(key)
    write()
    p.multi()
    p.exists(key)
    try:
        p.execute()
    except redis.WatchError:
        return True
    return False


def error_text(fn, *args) -> str:
    """The text of the error reply ``fn(*args)`` must raise (without redis-py's prefix)."""
    with pytest.raises(redis.ResponseError) as info:
        fn(*args)
    return str(info.value)


def wait_for(predicate, timeout: float = 3.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` seconds pass; its last answer (for
    what only the server's timers bring about: expiry, a client parking)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@contextlib.contextmanager
def pattern_listener(target, *patterns: str, decode: bool = False):
    """A connection of its own subscribed to ``patterns``; yields ``drain(timeout)``: the
    (channel, message) pairs that arrived until none came for ``timeout`` seconds."""
    listener = target.client()
    sub = listener.pubsub()
    sub.psubscribe(*patterns)
    for _ in patterns:
        assert sub.get_message(timeout=2)["type"] == "psubscribe"

    def drain(timeout: float = 0.05) -> list:
        got = []
        while True:
            m = sub.get_message(timeout=timeout)
            if m is None:
                return got
            pair = (m["channel"], m["data"])
            got.append(tuple(x.decode() for x in pair) if decode else pair)

    try:
        yield drain
    finally:
        sub.close()
        listener.close()


def pytest_addoption(parser):
    parser.addoption("--redis-url", default=None,
                     help="run the suite against this server instead of an in-process streamd")


class Target:
    def __init__(self, host: str, port: int, db: int, is_streamd: bool, password=None):
        self.host, self.port, self.db, self.is_streamd = host, port, db, is_streamd
        self.password = password
        info = self.client().info("server")
        self.version = tuple(int(p) for p in str(info["redis_version"]).split(".")[:3])

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/{self.db}"

    def client(self, **kw) -> redis.Redis:
        kw.setdefault("protocol", 2)
        return redis.Redis(host=self.host, port=self.port, db=self.db,
                           password=self.password, socket_timeout=10, **kw)


def protected_command_mode(client, option: str) -> str:
    """The value of one of the ``enable-*-command`` options: no, yes or local."""
    return client.config_get(option)[option]


def refusing_target(client, option: str, command: str):
    """``client`` when ``option`` keeps ``command`` from it (the default), else a skip."""
    if protected_command_mode(client, option) != "no":
        pytest.skip(f"the target allows {command}")
    return client


def target_allowing(target, option: str):
    """For a module-scoped fixture (``yield from``): a server where ``option`` lets every
    client run the command it guards. streamd: one started in process with ``option yes``;
    a real Redis only if it was started that way, else the test is skipped."""
    if target.is_streamd:
        from tests.inprocess import InProcessServer

        with InProcessServer(**{option.replace("-", "_"): "yes"}) as srv:
            yield Target("127.0.0.1", srv.port, 0, is_streamd=True)
        return
    if protected_command_mode(target.client(), option) != "yes":
        pytest.skip(f"the target was not started with {option} yes")
    yield target


@pytest.fixture(scope="session")
def target(request):
    url = request.config.getoption("--redis-url")
    if url:
        pool = redis.ConnectionPool.from_url(url)
        kw = pool.connection_kwargs
        yield Target(kw.get("host", "127.0.0.1"), kw.get("port", 6379), kw.get("db", 0),
                     is_streamd=False, password=kw.get("password"))
        return
    from tests.inprocess import InProcessServer

    with InProcessServer() as srv:
        yield Target("127.0.0.1", srv.port, 0, is_streamd=True)


def pytest_collection_modifyitems(config, items):
    # Marker checks need the target's version, which needs a connection: done per test.
    pass


@pytest.fixture(autouse=True)
def _version_gate(request, target):
    marker = request.node.get_closest_marker("min_redis")
    if marker is not None:
        need = tuple(int(p) for p in marker.args[0].split("."))
        if target.version < need:
            pytest.skip(f"needs Redis >= {marker.args[0]}, target is "
                        f"{'.'.join(map(str, target.version))}")
    if request.node.get_closest_marker("streamd_only") and not target.is_streamd:
        pytest.skip("streamd extension or internal")


@pytest.fixture
def r(target):
    client = target.client()
    client.flushall()
    saved = {}
    for name in _RESTORED_CONFIGS:
        saved.update(client.config_get(name))
    yield client
    for name, value in saved.items():
        try:
            client.config_set(name, value)
        except redis.ResponseError:
            pass
    client.close()


@pytest.fixture
def r3(target, r):
    client = target.client(protocol=3)
    yield client
    client.close()


@pytest.fixture
def make_client(target, r):
    made = []

    def factory(**kw):
        c = target.client(**kw)
        made.append(c)
        return c

    yield factory
    for c in made:
        c.close()


class FakeLoop:
    """Just enough of an event loop: call_soon callbacks wait until ``run_iteration_end``."""

    def __init__(self):
        self.callbacks: list = []

    def call_soon(self, callback, *args):
        self.callbacks.append((callback, args))

    def run_iteration_end(self) -> int:
        callbacks, self.callbacks = self.callbacks, []
        for callback, args in callbacks:
            callback(*args)
        return len(callbacks)


class RawConn:
    """A bare socket speaking bytes, for protocol-level tests."""

    def __init__(self, host: str, port: int):
        self.sock = socket.create_connection((host, port), timeout=5)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_until(self, predicate, timeout: float = 5.0) -> bytes:
        deadline = time.monotonic() + timeout
        while not predicate(self.buf):
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            self.buf += chunk
        out, self.buf = self.buf, b""
        return out

    def read_exact(self, n: int, timeout: float = 5.0) -> bytes:
        data = self.read_until(lambda b: len(b) >= n, timeout)
        data, self.buf = data[:n], data[n:]
        return data

    def read_reply(self, timeout: float = 5.0) -> bytes:
        """One complete RESP reply, as raw bytes."""
        import hiredis

        deadline = time.monotonic() + timeout
        while True:
            reader = hiredis.Reader()
            reader.feed(self.buf)
            if reader.gets() is not False:
                # Find where the first reply ends by re-feeding prefixes of growing length.
                for end in range(1, len(self.buf) + 1):
                    probe = hiredis.Reader()
                    probe.feed(self.buf[:end])
                    if probe.gets() is not False:
                        out, self.buf = self.buf[:end], self.buf[end:]
                        return out
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no complete reply; have {self.buf!r}")
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"closed; have {self.buf!r}")
            self.buf += chunk

    def is_closed(self, timeout: float = 2.0) -> bool:
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw(target, r):
    conns = []

    def factory():
        c = RawConn(target.host, target.port)
        if target.password:
            c.send(b"AUTH %s\r\n" % target.password.encode())
            c.read_reply()
        conns.append(c)
        return c

    yield factory
    for c in conns:
        c.close()


@pytest.fixture
def wire(raw):
    """wire(*args) -> the exact reply bytes over RESP2; wire.resp3(*args) over RESP3 (for the
    shapes parsed replies hide: null kinds, maps, the error prefix)."""
    conns = {}

    def make(proto):
        def do(*args):
            c = conns.get(proto)
            if c is None:
                c = conns[proto] = raw()
                if proto == 3:
                    c.send(encode_request("HELLO", 3))
                    c.read_reply()
            c.send(encode_request(*args))
            return c.read_reply()
        return do

    w = make(2)
    w.resp3 = make(3)
    return w


@pytest.fixture
def call(target, r):
    """Send a command and return the parsed reply without redis-py's response callbacks.

    ``call(*args)`` speaks RESP2; ``call.resp3(*args)`` speaks RESP3 on its own connection.
    Errors come back as raised ``redis.ResponseError``.
    """
    conns = {}

    def connection(protocol: int):
        if protocol not in conns:
            conns[protocol] = redis.Connection(host=target.host, port=target.port,
                                               db=target.db, password=target.password,
                                               protocol=protocol, socket_timeout=10)
            conns[protocol].connect()
        return conns[protocol]

    def do(protocol, *args):
        conn = connection(protocol)
        conn.send_command(*args)
        reply = conn.read_response()
        if isinstance(reply, redis.ResponseError):
            raise reply
        return reply

    def call2(*args):
        return do(2, *args)

    call2.resp3 = lambda *args: do(3, *args)
    yield call2
    for c in conns.values():
        c.disconnect()
