"""A script that runs too long, and what the server does until it ends.

Scripts run on the loop's thread: while one runs, nothing else is served. Redis does the same
until the script has run for ``busy-reply-threshold`` ms; then it logs "Slow script
detected" and, from the script's instruction-count hook, serves the other clients again
(``processEventsWhileBlocked``): it accepts connections and reads requests, answers every
command with BUSY but the few flagged ``allow_busy`` (SCRIPT KILL, FUNCTION KILL, SHUTDOWN
NOSAVE, AUTH, HELLO, MULTI ...), and a SCRIPT KILL makes the hook end the script with an error.
The caller itself is not read until its script ends.

Here the engine calls ``ScriptRun.tick`` every 100,000 Lua instructions. The event loop
cannot serve anyone meanwhile (its callback is the one running the script), so past the
threshold a tick polls the listening sockets and the clients' sockets itself, with a zero
timeout, and hands what it reads to the clients as the loop would. While the script is busy
every client takes the dispatcher's slow path, which answers BUSY. Replies go out at once:
a transport writes straight to its socket when nothing is queued, and the write scheduler
does not defer while a script is busy.

A connection accepted here has no transport of the loop's: a ``HeldTransport`` writes to its
socket until the script ends, and then the loop adopts the socket and the client gets a
transport of its own.
"""

from __future__ import annotations

import logging
import os
import select
import socket
from time import perf_counter

from ..commands import errors as E

log = logging.getLogger("streamd")

_KILLED = E.SCRIPT_KILLED.encode()
_ACCEPTS_PER_TICK = 64  # new connections taken from a listening socket per tick


class ScriptRun:
    """The script or function running now (Redis's script run context). One per server,
    reset by ``start`` for each EVAL and FCALL (a short script's whole cost is that)."""

    __slots__ = ("server", "client", "argv", "name", "is_eval", "started", "timed_out", "wrote",
                 "killed", "_listeners", "_held", "_eof")

    def __init__(self, server):
        self.server = server
        self.client = None  # the caller: not read while its script runs
        self.argv: list = []
        self.name = ""  # the script's SHA1, or the function's name
        self.is_eval = True
        self.started = 0.0
        self.timed_out = False  # past the threshold: serving the others, BUSY
        self.wrote = False  # a write command ran: SCRIPT KILL can no longer end it
        self.killed = False  # SCRIPT KILL, FUNCTION KILL or SHUTDOWN NOSAVE asked for the end
        self._listeners: list[socket.socket] = []  # copies of the listening sockets, while busy
        self._held: list = []  # clients accepted while busy, on a HeldTransport
        self._eof: set[int] = set()  # fds that reached end of file while busy

    def start(self, client, argv: list, name: str, is_eval: bool) -> None:
        self.client, self.argv, self.name, self.is_eval = client, argv, name, is_eval
        self.wrote = self.killed = False
        self.started = perf_counter()

    @property
    def busy_error(self) -> str:
        return E.BUSY_EVAL if self.is_eval else E.BUSY_FUNCTION

    def duration_ms(self) -> int:
        return int((perf_counter() - self.started) * 1000)

    # --- from the engine's hook ------------------------------------------------------------
    def tick(self) -> bytes | None:
        """Every 100,000 instructions: the error to end the script with, or None."""
        if not self.timed_out:
            threshold = self.server.config.values["busy-reply-threshold"]
            if (perf_counter() - self.started) * 1000 < threshold:
                return None
            self.timed_out = True
            self.server.script_timed_out(self)
            log.warning("Slow script detected: still in execution after %d milliseconds. "
                        "You can try killing the script using the %s KILL command. Script "
                        "name is: %s.", self.duration_ms(),
                        "SCRIPT" if self.is_eval else "FUNCTION", self.name)
        if not self.killed:
            self._serve()
            if not self.killed:
                return None
            log.warning("Lua script killed by user with SCRIPT KILL.")
        return _KILLED

    def _serve(self) -> None:
        """Accept, read and dispatch what is waiting, without blocking."""
        server = self.server
        if not self._listeners:
            self._listen()
        poller = select.poll()
        waiting: dict[int, object] = {}
        for lsock in self._listeners:
            waiting[lsock.fileno()] = lsock
        for client in server.clients.values():
            fd = client.fd
            # Clients that would not be read now either: the caller, blocked clients and
            # those with requests waiting, or paused for their output.
            if (client is self.client or fd < 0 or fd in self._eof or client.closing
                    or client.waiter is not None or client.pending or client.postponed
                    or client.reading_paused):
                continue
            waiting[fd] = client
        for fd in waiting:
            poller.register(fd, select.POLLIN)
        for fd, _ in poller.poll(0):
            target = waiting[fd]
            if type(target) is socket.socket:
                self._accept(target)
                continue
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:  # the loop sees the same end of file once the script is over
                self._eof.add(fd)
                continue
            if not target.closing:
                target.data_received(data)
                if target.closing:
                    _hang_up(target)
            if self.killed:
                return

    def _listen(self) -> None:
        for srv in self.server.listening:
            for s in srv.sockets:
                lsock = socket.socket(fileno=os.dup(s.fileno()))
                lsock.setblocking(False)
                self._listeners.append(lsock)

    def _accept(self, lsock: socket.socket) -> None:
        for _ in range(_ACCEPTS_PER_TICK):
            try:
                conn, _ = lsock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # EMFILE and the like: the loop will meet them too
                log.warning("Accepting while a script is busy: %s", exc)
                return
            conn.setblocking(False)
            client = self.server.new_client()
            client.connection_made(HeldTransport(conn))
            self._held.append(client)

    # --- when the script is over --------------------------------------------------------
    def finish(self) -> None:
        """After a script that timed out: hand the connections accepted while busy to the
        loop; close the listener copies."""
        self._eof.clear()
        self.client = None
        self.timed_out = False
        for lsock in self._listeners:
            lsock.close()
        self._listeners = []
        loop = self.server.loop
        for client in self._held:
            held = client.transport
            if held.is_closing() or self.server.stopping or loop.is_closed():
                held.discard()
                client.connection_lost(None)
            else:
                loop.create_task(_adopt(loop, client, held))
        self._held = []


def _hang_up(client) -> None:
    """End a connection its client closed (QUIT) now, as Redis does: its transport would
    close it only once the loop runs again. Not while replies wait to be written."""
    transport = client.transport
    if transport is None or transport.get_write_buffer_size():
        return
    try:
        sock = socket.socket(fileno=os.dup(client.fd))
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()


async def _adopt(loop, client, held: "HeldTransport") -> None:
    try:
        # The client is the protocol: its connection_made takes the new transport.
        await loop.connect_accepted_socket(lambda: client, held.sock)
    except OSError:
        held.discard()
        client.connection_lost(None)


class HeldTransport:
    """The transport of a connection accepted while a script was busy, until the loop
    adopts its socket: writes go straight to the socket, what does not fit waits for the
    loop's transport."""

    held = True

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.pending = bytearray()
        self._closing = False

    def write(self, data) -> None:
        if self._closing:
            return
        if not self.pending:
            try:
                sent = self.sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                self._closing = True
                return
            data = memoryview(data)[sent:]
        self.pending += data

    def get_extra_info(self, name: str, default=None):
        try:
            if name == "socket":
                return self.sock
            if name == "peername":
                return self.sock.getpeername()
            if name == "sockname":
                return self.sock.getsockname()
        except OSError:
            pass
        return default

    def get_write_buffer_size(self) -> int:
        return len(self.pending)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    abort = close

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def discard(self) -> None:
        self._closing = True
        self.sock.close()
