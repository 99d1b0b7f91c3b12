"""When replies are written (``server/writes.py``): at once for a lone active client, at the
end of the loop iteration while several are active; and that concurrent pipelined clients
get every reply, in order, either way."""

from __future__ import annotations

import threading

import pytest

from streamd.server.client import Client
from streamd.server.server import Server

from .conftest import FakeLoop


class _Transport:
    def __init__(self):
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def server():
    s = Server()
    s.writes.loop = FakeLoop()
    return s


def _client(server) -> Client:
    c = Client(server)
    c.transport = _Transport()
    return c


def _period(server, *clients) -> None:
    """One cron period in which ``clients`` each sent a request, then the cron tick."""
    for c in clients:
        c.data_received(b"PING\r\n")
    server.writes.tick()
    server.writes.loop.run_iteration_end()
    for c in clients:
        c.transport.writes.clear()


@pytest.mark.streamd_only
def test_lone_active_client_is_written_at_once(server):
    a, idle = _client(server), _client(server)
    _period(server, a)
    assert server.writes.defer is False
    a.data_received(b"*1\r\n$4\r\nPING\r\n")
    assert a.transport.writes == [b"+PONG\r\n"]
    assert server.writes.loop.callbacks == []
    assert idle.transport.writes == []


@pytest.mark.streamd_only
def test_several_active_clients_are_written_at_iteration_end(server):
    a, b = _client(server), _client(server)
    _period(server, a, b)
    assert server.writes.defer is True
    a.data_received(b"*1\r\n$4\r\nPING\r\n")
    b.data_received(b"*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n")
    a.data_received(b"*2\r\n$4\r\nECHO\r\n$1\r\ny\r\n")  # a second read, same iteration
    assert a.transport.writes == [] and b.transport.writes == []
    assert server.writes.loop.run_iteration_end() == 1  # one callback for the iteration
    # One write per client, its replies in order.
    assert a.transport.writes == [b"+PONG\r\n$1\r\ny\r\n"]
    assert b.transport.writes == [b"$1\r\nx\r\n"]


@pytest.mark.streamd_only
def test_deferring_stops_when_activity_drops(server):
    a, b = _client(server), _client(server)
    _period(server, a, b)
    assert server.writes.defer is True
    _period(server, a)
    assert server.writes.defer is False
    b.data_received(b"PING\r\n")
    assert b.transport.writes == [b"+PONG\r\n"]


@pytest.mark.streamd_only
def test_no_event_loop_never_defers():
    server = Server()  # not started: no loop, as in bench.ab
    a, b = _client(server), _client(server)
    for c in (a, b):
        c.data_received(b"PING\r\n")
    server.writes.tick()
    assert server.writes.defer is False
    a.data_received(b"PING\r\n")
    assert a.transport.writes[-1] == b"+PONG\r\n"


@pytest.mark.streamd_only
def test_protocol_error_while_deferring_keeps_order_and_closes(server):
    a, b = _client(server), _client(server)
    _period(server, a, b)
    a.data_received(b"*2\r\n$4\r\nECHO\r\n$1\r\n1\r\n")
    a.data_received(b"*2\r\n$4\r\nECHO\r\n$1\r\n2\r\n*1\r\n$x\r\n")
    # The error goes out at once, after the replies already waiting, and closes.
    assert a.transport.writes == [b"$1\r\n1\r\n$1\r\n2\r\n-ERR Protocol error: invalid bulk length\r\n"]
    assert a.transport.closed
    server.writes.loop.run_iteration_end()
    assert len(a.transport.writes) == 1


@pytest.mark.streamd_only
def test_quit_while_deferring_replies_then_closes(server):
    a, b = _client(server), _client(server)
    _period(server, a, b)
    a.data_received(b"*1\r\n$4\r\nQUIT\r\n")
    assert a.transport.writes == [] and not a.transport.closed
    server.writes.loop.run_iteration_end()
    assert a.transport.writes == [b"+OK\r\n"] and a.transport.closed


@pytest.mark.streamd_only
def test_woken_client_reply_precedes_its_later_requests(server):
    a, b = _client(server), _client(server)
    _period(server, a, b)
    b.data_received(b"XREAD BLOCK 0 STREAMS s $\r\nPING\r\n")
    assert b.waiter is not None
    a.data_received(b"XADD s 1-1 f v\r\n")
    assert b.transport.writes == []  # woken, served, and written with the others
    server.writes.loop.run_iteration_end()
    assert a.transport.writes == [b"$3\r\n1-1\r\n"]
    out = b"".join(b.transport.writes)
    assert out.startswith(b"*1\r\n*2\r\n$1\r\ns\r\n") and out.endswith(b"+PONG\r\n")


def _logged_clients(server, log: list):
    """Two clients whose transports also record, in ``log``, which of them wrote when."""
    clients = []
    for name in ("reader", "writer"):
        c = _client(server)
        c.transport.write = lambda data, name=name, t=c.transport: (
            t.writes.append(bytes(data)), log.append(name))
        clients.append(c)
    return clients


@pytest.mark.streamd_only
def test_woken_reader_is_written_first_in_the_writers_iteration(server):
    """While writes are deferred, the XADD that wakes a reader leaves one end-of-iteration
    write, in which the reader's reply goes before the writer's, as Redis's beforeSleep
    writes the client it served last first: no further loop iteration between the write
    and the wake-up's reply."""
    log: list = []
    reader, writer = _logged_clients(server, log)
    _period(server, reader, writer)
    log.clear()
    reader.data_received(b"XREAD BLOCK 0 STREAMS s $\r\n")
    server.writes.loop.run_iteration_end()
    assert log == []  # parked: nothing written
    writer.data_received(b"XADD s 1-1 f v\r\n")
    assert log == []
    assert server.writes.loop.run_iteration_end() == 1
    assert log == ["reader", "writer"]
    assert reader.transport.writes[0].startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n")
    assert server.writes.loop.callbacks == []


@pytest.mark.streamd_only
def test_woken_reader_is_written_during_the_writers_read_when_not_deferring(server):
    log: list = []
    reader, writer = _logged_clients(server, log)
    assert server.writes.defer is False
    reader.data_received(b"XREAD BLOCK 0 STREAMS s $\r\n")
    writer.data_received(b"XADD s 1-1 f v\r\n")
    assert log == ["reader", "writer"]
    assert server.writes.loop.callbacks == []


@pytest.mark.streamd_only
def test_wakeup_runs_xread_without_parsing_it_again(server, monkeypatch):
    """A woken XREAD runs with what it parsed when it parked (commands/streams.py
    ``_Reread``): its rewritten argv is not parsed a second time."""
    from streamd.commands import streams

    reader, writer = _client(server), _client(server)
    reader.data_received(b"XREAD COUNT 1 BLOCK 0 STREAMS s $\r\n")
    assert reader.waiter is not None

    def no_parse(*args, **kw):
        raise AssertionError("parsed again")

    monkeypatch.setattr(streams, "read_options", no_parse)
    writer.data_received(b"MULTI\r\nXADD s 1-1 f v\r\nXADD s 1-2 f v\r\nEXEC\r\n")
    assert reader.waiter is None
    # COUNT 1, kept from the first parse: the first of the two entries only
    assert reader.transport.writes == [
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"]


@pytest.mark.streamd_only
def test_wakeup_runs_xreadgroup_without_parsing_it_again(server, monkeypatch):
    from streamd.commands import groups

    reader, writer = _client(server), _client(server)
    writer.data_received(b"XGROUP CREATE s g $ MKSTREAM\r\n")
    reader.data_received(b"XREADGROUP GROUP g c COUNT 1 BLOCK 0 STREAMS s >\r\n")
    assert reader.waiter is not None

    def no_parse(*args, **kw):
        raise AssertionError("parsed again")

    monkeypatch.setattr(groups, "parse_read_args", no_parse)
    writer.data_received(b"MULTI\r\nXADD s 1-1 f v\r\nXADD s 1-2 f v\r\nEXEC\r\n")
    assert reader.waiter is None
    assert reader.transport.writes == [
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"]


# --- against the target server (runs on real Redis too) -----------------------------------

def test_concurrent_pipelined_clients_get_every_reply_in_order(target, r):
    """20 clients pipelining at once (what makes streamd defer its writes): each gets its
    replies complete and in order, and the stream holds every append."""
    r.delete("writes:s")
    errors: list = []

    def producer(n: int) -> None:
        try:
            c = target.client()
            for batch in range(25):
                p = c.pipeline(transaction=False)
                for i in range(16):
                    p.xadd("writes:s", {"c": n, "i": batch * 16 + i})
                    p.incr(f"writes:n{n}")
                    p.echo(f"{n}:{batch}:{i}")
                out = p.execute()
                for i in range(16):
                    assert out[3 * i + 1] == batch * 16 + i + 1
                    assert out[3 * i + 2] == f"{n}:{batch}:{i}".encode()
            c.close()
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=producer, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]
    assert r.xlen("writes:s") == 20 * 25 * 16
    r.delete("writes:s", *[f"writes:n{n}" for n in range(20)])
