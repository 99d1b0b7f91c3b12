"""The dispatcher's side of batch handlers (``Command.batch``), without a network.

A batch handler takes a run of requests; the dispatcher encodes one reply per request
taken, counts each as a call, and, should the handler raise, ends the run at the request
that raised with the generic error while the requests before it keep their replies.
"""

from __future__ import annotations

import time

import pytest

from streamd.commands import TABLE
from streamd.protocol.replies import Simple
from streamd.server.client import Client
from streamd.server.server import Server
from tests.conftest import encode_request as _req

pytestmark = pytest.mark.streamd_only


class _Recorder:
    def __init__(self):
        self.data = bytearray()

    def write(self, data) -> None:
        self.data += data

    def is_closing(self) -> bool:
        return False


@pytest.fixture
def client():
    c = Client(Server())
    c.transport = _Recorder()
    return c


@pytest.fixture
def echo():
    cmd = TABLE[b"echo"]
    saved = cmd.batch
    yield cmd
    cmd.batch = saved


def _echo(arg: bytes) -> bytes:
    return _req(b"ECHO", arg)


def test_batch_replies_and_stats(client, echo):
    def batch(ctx, requests, start, replies):
        for argv in requests[start:]:
            if argv[1] == b"stop":
                break
            replies.append(Simple(b"batched " + argv[1]))

    echo.batch = batch
    client.data_received(_echo(b"a") + _echo(b"b") + _echo(b"stop") + _echo(b"c"))
    # "stop" ends the run and runs alone; "c" is the last request: no batch is offered.
    assert bytes(client.transport.data) == (b"+batched a\r\n+batched b\r\n"
                                            b"$4\r\nstop\r\n$1\r\nc\r\n")
    assert (echo.calls, echo.failed_calls, client.tot_cmds) == (4, 0, 4)


def test_batch_that_raises(client, echo):
    def batch(ctx, requests, start, replies):
        replies.append(Simple(b"first"))
        raise RuntimeError("bug")

    echo.batch = batch
    client.data_received(_echo(b"a") + _echo(b"b") + _echo(b"c"))
    assert bytes(client.transport.data) == (
        b"+first\r\n-ERR internal error while executing the command\r\n$1\r\nc\r\n")
    assert (echo.calls, echo.failed_calls, client.tot_cmds) == (3, 1, 3)


# --- pure commands: runs of read-only requests (``table.pure_batch``) -----------------------

def test_pure_run_replies_errors_and_stats(client):
    """A run of GETs with a WRONGTYPE in the middle, a wrong arity and another command: every
    request gets the reply it gets alone, and counts once."""
    client.data_received(_req(b"SET", b"a", b"1") + _req(b"HSET", b"h", b"f", b"v"))
    client.transport.data.clear()
    get, hget = TABLE[b"get"], TABLE[b"hget"]
    before = (get.calls, get.failed_calls, get.rejected_calls, hget.calls, client.tot_cmds)
    client.data_received(_req(b"GET", b"a") + _req(b"GET", b"nope") + _req(b"GET", b"h")
                         + _req(b"GET", b"a") + _req(b"GET", b"a", b"extra")
                         + _req(b"HGET", b"h", b"f") + _req(b"GET", b"a"))
    assert bytes(client.transport.data) == (
        b"$1\r\n1\r\n$-1\r\n"
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
        b"$1\r\n1\r\n-ERR wrong number of arguments for 'get' command\r\n"
        b"$1\r\nv\r\n$1\r\n1\r\n")
    after = (get.calls, get.failed_calls, get.rejected_calls, hget.calls, client.tot_cmds)
    assert [b - a for a, b in zip(before, after)] == [5, 1, 1, 1, 6]


def test_pure_run_serves_woken_clients_before_the_next_request(client):
    """Lazy expiry inside a run deletes a stream a client is blocked on: that client is
    served before the requests after the deleting one, as Redis serves blocked clients
    after every command. Served later, it would find the group re-created and wait on."""
    blocked = Client(client.server)
    blocked.transport = _Recorder()
    client.data_received(_req(b"XGROUP", b"CREATE", b"s", b"g", b"$", b"MKSTREAM"))
    blocked.data_received(_req(b"XREADGROUP", b"GROUP", b"g", b"c", b"BLOCK", b"0",
                               b"STREAMS", b"s", b">"))
    assert blocked.waiter is not None
    # The TTL is set only once the reader is parked: set before, it could lapse first on
    # a slow machine and the read would fail with NOGROUP instead of parking.
    client.data_received(_req(b"PEXPIRE", b"s", b"1"))
    assert blocked.waiter is not None and not blocked.transport.data
    time.sleep(0.01)
    client.data_received(_req(b"EXISTS", b"s") * 3
                         + _req(b"XGROUP", b"CREATE", b"s", b"g", b"$", b"MKSTREAM")
                         + _req(b"XADD", b"s", b"1-1", b"f", b"v"))
    assert bytes(blocked.transport.data).startswith(b"-NOGROUP No such key 's'")
