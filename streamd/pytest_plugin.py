"""pytest fixtures for code that talks to Redis: a streamd server in the test process.

streamd registers this module as a pytest plugin (entry point ``pytest11``), so a suite
that has streamd installed can use the fixtures without any set-up:

    def test_orders(streamd_url):
        r = redis.Redis.from_url(streamd_url)
        r.xadd("orders", {"item": "book"})

* ``streamd_server``: one ``streamd.embed.EmbeddedServer`` for the whole session, on a
  free port of 127.0.0.1.
* ``streamd_url``: its ``redis://`` URL, after FLUSHALL, so that each test starts with
  every database empty. Configuration changes (CONFIG SET) last for the session.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .embed import EmbeddedServer


@pytest.fixture(scope="session")
def streamd_server():
    """A streamd server on a background thread, for the whole test session."""
    # Imported here: every pytest run in an environment with streamd loads this plugin,
    # and the server's modules take a tenth of a second to import.
    from .embed import EmbeddedServer

    with EmbeddedServer() as server:
        yield server


@pytest.fixture
def streamd_url(streamd_server) -> str:
    """The session server's URL, with every database flushed first."""
    _call(streamd_server, b"FLUSHALL")
    return streamd_server.url


def _call(server: EmbeddedServer, *args: bytes) -> bytes:
    """One command over a plain socket (the plugin needs no client library); its reply."""
    password = server.config["requirepass"]
    lines = [args] if not password else [(b"AUTH", password.encode()), args]
    data = b"".join(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
                    for a in lines)
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(data)
        reply = b""
        while reply.count(b"\r\n") < len(lines):
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    last = reply.split(b"\r\n")[len(lines) - 1]
    if not last.startswith(b"+"):
        raise RuntimeError(f"streamd answered {args[0].decode()} with {last!r}")
    return last
