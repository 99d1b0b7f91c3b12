"""Minimal RESP client pieces: command encoding, a blocking connection, a pipelined loader.

Replies are parsed by hiredis. Error replies come back as ``hiredis.ReplyError`` instances
(never raised by the reader); ``Conn.call`` raises them as ``RespError``.
"""

from __future__ import annotations

import socket
import time

import hiredis

HOST = "127.0.0.1"


class RespError(Exception):
    pass


def _b(x) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, (bytearray, memoryview)):
        return bytes(x)
    return str(x).encode()


def encode(*args) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        a = _b(a)
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


def is_error(reply) -> bool:
    return isinstance(reply, hiredis.ReplyError)


class Conn:
    """A blocking TCP connection with TCP_NODELAY and a hiredis reader."""

    def __init__(self, port: int, timeout: float = 30.0):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = hiredis.Reader()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_reply(self):
        reader = self.reader
        while True:
            reply = reader.gets()
            if reply is not False:
                return reply
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("server closed the connection")
            reader.feed(data)

    def read_replies(self, n: int) -> int:
        """Consume ``n`` replies; returns how many of them were errors."""
        reader, recv, errors = self.reader, self.sock.recv, 0
        ReplyError = hiredis.ReplyError
        got = 0
        while got < n:
            reply = reader.gets()
            if reply is False:
                data = recv(1 << 18)
                if not data:
                    raise ConnectionError("server closed the connection")
                reader.feed(data)
                continue
            got += 1
            if type(reply) is ReplyError:
                errors += 1
                self.last_error = str(reply)
        return errors

    def call(self, *args):
        self.send(encode(*args))
        reply = self.read_reply()
        if is_error(reply):
            raise RespError(str(reply))
        return reply

    def try_call(self, *args):
        """The reply, or the error reply as a ``RespError`` instance (not raised)."""
        self.send(encode(*args))
        reply = self.read_reply()
        return RespError(str(reply)) if is_error(reply) else reply


def xadd_template(key: bytes, value: bytes, explicit_ids: bool) -> bytes:
    """``XADD key <id> f value`` with ``%s`` in place of the ID (use with ``%``)."""
    head = b"*5\r\n$4\r\nXADD\r\n$%d\r\n%s\r\n" % (len(key), key)
    tail = b"$1\r\nf\r\n$%d\r\n%s\r\n" % (len(value), value.replace(b"%", b"%%"))
    if explicit_ids:
        return head + b"$%d\r\n%s\r\n" + tail
    return head + b"$1\r\n*\r\n" + tail


def load_stream(conn: Conn, key: bytes, count: int, value: bytes, *, first_ms: int = 1,
                explicit_ids: bool = True, chunk: int | None = None, deadline: float | None = None,
                check=None) -> int:
    """Append ``count`` entries ``f value`` to ``key`` by pipelined raw XADD.

    With ``explicit_ids`` the entries get IDs ``first_ms-0``, ``first_ms+1-0``, ... (no
    clock, no ID generation). Two chunks are kept in flight. ``check()`` is called after
    every chunk and may raise to abort (memory guard). Returns entries added; stops early
    at ``deadline`` (monotonic). Raises RespError on the first error reply.
    """
    if explicit_ids:
        tmpl = xadd_template(key, value, True)
        def make(lo, hi):
            return b"".join([tmpl % (len(s), s) for s in
                             [b"%d-0" % i for i in range(first_ms + lo, first_ms + hi)]])
    else:
        one = xadd_template(key, value, False).replace(b"%%", b"%")
        def make(lo, hi):
            return one * (hi - lo)
    if chunk is None:  # ~256 KB of requests per write, so little sits in server buffers
        chunk = max(100, min(2000, (256 << 10) // (len(value) + len(key) + 60)))
    done = 0
    inflight: list[int] = []
    sent = 0
    while done < count:
        if sent < count and len(inflight) < 2 and (deadline is None or time.monotonic() < deadline):
            n = min(chunk, count - sent)
            conn.send(make(sent, sent + n))
            inflight.append(n)
            sent += n
            if len(inflight) < 2 and sent < count:
                continue
        if not inflight:
            break
        n = inflight.pop(0)
        if conn.read_replies(n):
            raise RespError(f"XADD failed while loading: {conn.last_error}")
        done += n
        if check is not None:
            check(done)
    return done
