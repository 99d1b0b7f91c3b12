"""A blocking RESP connection to another server, for the one command that talks out
(MIGRATE). Like Redis's own, it is synchronous: the caller holds the event loop for at
most its timeout per step (connect, each write, each reply line), as Redis does.
"""

from __future__ import annotations

import socket

_CHUNK = 64 * 1024  # Redis writes its MIGRATE buffer in 64 KiB pieces


def encode_command(args) -> bytes:
    """A request as a RESP array of bulk strings (ints written in decimal)."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = b"%d" % a
        elif isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Upstream:
    """One connection. Every method raises OSError (TimeoutError for a timeout) on failure."""

    def __init__(self, host: str, port: int, timeout_s: float):
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = b""

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        for at in range(0, len(data), _CHUNK):
            self.sock.sendall(view[at:at + _CHUNK])

    def read_line(self) -> bytes:
        """The next reply's first line, without its CRLF (MIGRATE's replies are all one
        line: +OK or -error)."""
        while b"\n" not in self._buf:
            chunk = self.sock.recv(16384)
            if not chunk:
                raise ConnectionResetError("connection closed by the target")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.rstrip(b"\r")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class UpstreamCache:
    """MIGRATE's connections, kept per target for reuse as Redis keeps them: at most 64,
    each closed after 10 s unused (``close_idle``, from the server's cron). ``dbid`` is the
    database the connection last selected (-1: unknown, select again)."""

    MAX_ITEMS = 64
    TTL_S = 10.0

    class Entry:
        __slots__ = ("conn", "dbid", "last_use")

        def __init__(self, conn: Upstream, now: float):
            self.conn, self.dbid, self.last_use = conn, -1, now

    def __init__(self):
        self._entries: dict[tuple, UpstreamCache.Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, host: str, port: int, timeout_s: float, now: float) -> "UpstreamCache.Entry":
        """The cached connection to (host, port), else a new one (OSError if it fails)."""
        entry = self._entries.get((host, port))
        if entry is None:
            if len(self._entries) >= self.MAX_ITEMS:
                self.drop(*next(iter(self._entries)))  # the oldest target goes
            entry = self._entries[(host, port)] = self.Entry(
                Upstream(host, port, timeout_s), now)
        entry.conn.sock.settimeout(timeout_s)  # this MIGRATE's timeout, on a kept one too
        entry.last_use = now
        return entry

    def drop(self, host: str, port: int) -> None:
        entry = self._entries.pop((host, port), None)
        if entry is not None:
            entry.conn.close()

    def close_idle(self, now: float) -> None:
        for target, entry in list(self._entries.items()):
            if now - entry.last_use > self.TTL_S:
                self.drop(*target)

    def close_all(self) -> None:
        for target in list(self._entries):
            self.drop(*target)
