"""The dispatcher's side of batch handlers (``Command.batch``), without a network.

A batch handler takes a run of requests; the dispatcher encodes one reply per request
taken, counts each as a call, and, should the handler raise, ends the run at the request
that raised with the generic error while the requests before it keep their replies.
"""

from __future__ import annotations

import pytest

from streamd.commands import TABLE
from streamd.protocol.replies import Simple
from streamd.server.client import Client
from streamd.server.server import Server

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
    return b"*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n" % (len(arg), arg)


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
