"""An HTTP request sent to the server (a web page making a browser POST to a local port:
cross-protocol scripting). Redis 7.0.15 drops the connection at a ``POST`` or ``Host:``
command, writing nothing, and logs a warning at most once a minute; recorded from it."""

from __future__ import annotations

import logging
import socket

import pytest
import redis

from streamd.embed import EmbeddedServer


def _until_closed(conn, timeout: float = 5.0):
    """What the server writes until it closes the connection, and whether it did close it
    (EOF, or a reset when it drops the connection with our bytes still unread) in time."""
    out = b""
    conn.sock.settimeout(timeout)
    try:
        while True:
            chunk = conn.sock.recv(65536)
            if not chunk:
                return out, True
            out += chunk
    except ConnectionResetError:
        return out, True
    except socket.timeout:
        return out, False


def _closed_after(raw, data: bytes) -> bytes:
    c = raw()
    c.send(data)
    out, closed = _until_closed(c)
    assert closed, out
    return out


@pytest.mark.parametrize("request_bytes", [
    b"POST / HTTP/1.1\r\nHost: 127.0.0.1:6379\r\nContent-Length: 0\r\n\r\n",
    b"*1\r\n$5\r\nHOST:\r\n",
    b"post\r\n",
], ids=["http-post", "host-multibulk", "post-inline"])
def test_post_and_host_drop_the_connection_without_a_reply(raw, request_bytes):
    assert _closed_after(raw, request_bytes) == b""


def test_post_inside_multi_drops_the_connection(raw):
    c = raw()
    c.send(b"MULTI\r\n")
    assert c.read_reply() == b"+OK\r\n"
    c.send(b"POST / HTTP/1.1\r\n")
    assert _until_closed(c) == (b"", True)


def test_a_dropped_request_counts_no_error(r, raw):
    before = (r.info("stats")["total_error_replies"], r.info("errorstats"))
    assert _closed_after(raw, b"POST / HTTP/1.1\r\n") == b""
    assert (r.info("stats")["total_error_replies"], r.info("errorstats")) == before


@pytest.mark.streamd_only
def test_the_warning_is_logged_once_a_minute(caplog):
    with caplog.at_level(logging.WARNING, logger="streamd"):
        with EmbeddedServer() as srv:
            for _ in range(2):
                with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
                    s.sendall(b"POST / HTTP/1.1\r\n")
                    assert s.recv(100) == b""
            assert redis.Redis(port=srv.port).ping() is True
    warnings = [m for m in caplog.messages if "SECURITY ATTACK" in m]
    assert warnings == [
        "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: "
        "commands to Redis. This is likely due to an attacker attempting to use Cross "
        "Protocol Scripting to compromise your Redis instance. Connection aborted."]
