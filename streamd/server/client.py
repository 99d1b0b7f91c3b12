"""One client connection: an asyncio.Protocol holding the per-client state.

Each read is parsed into every complete request, the requests run in order, and all their
replies are encoded into one buffer and sent with one ``transport.write``: at once, or at
the end of the loop iteration while several clients are active (``writes.py``). While the
client is blocked (XREAD BLOCK) further requests wait in ``pending``. When the transport's
buffer is full, reading from the socket pauses until it drains.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import socket
import struct
import termios
import time
import weakref
from collections import deque
from time import time as _now

from .. import VERBOSE
from ..commands.connection import client_line
from ..commands.errors import CommandError
from ..protocol.encoder import encode
from ..protocol.reader import ProtocolError, QueryBufferFull, RequestReader
from ..protocol.replies import ErrorReply

log = logging.getLogger("streamd")

_INT = struct.Struct("i")  # FIONREAD's count
_ZERO = bytes(_INT.size)


class _Discard:
    """Stands in for the reader once a protocol error waits to be reported (Redis parses
    nothing after the bad bytes), and for a client that is to close once its output is
    written but has none (Redis runs nothing more of what it sends)."""

    held = False

    def feed(self, data: bytes) -> list:
        return []

    def set_gated(self, gated: bool) -> None:
        pass

    def buffered(self, parsed: bool = True) -> tuple[int, int]:
        return 0, 0  # what is read is dropped


_DISCARD = _Discard()


class Client(asyncio.Protocol):
    # Only state that commands may read or change is public; see commands/* for users.
    def __init__(self, server):
        self.server = server
        self.keyspace = server.keyspace
        self.config = server.config
        self.id = server.next_client_id()
        self.db = self.keyspace.dbs[0]
        self.resp = 2
        self.name = b""
        self.lib_name = b""
        self.lib_ver = b""
        self._authenticated = not server.config["requirepass"]
        self.now_ms = 0  # time snapshot of the running command (frozen through EXEC)
        self.blocking_allowed = True  # False while EXEC runs queued commands
        self.exec_argv = None  # EXEC's request while it runs the queue (CLIENT LIST's)
        self._multi: list | None = None  # queued (command, argv) while in MULTI
        self.monitor = False  # in MONITOR mode (the server's monitors list holds it)
        # CLIENT REPLY: OFF leaves out every reply until ON; SKIP the next command's (it is
        # pending until the CLIENT REPLY SKIP command is done). ``reply_mark``: where the
        # running command's reply starts in the output buffer, for the dispatcher to take
        # it back out (server/server.py).
        self.reply_off = False
        self.reply_skip = False
        self.reply_skip_next = False
        self.reply_mark = 0
        self.postponed = False  # a request waits in ``pending`` for CLIENT PAUSE to end
        self.multi_error = False  # a queued command was rejected: EXEC must abort
        self.watched: set = set()  # (db, key) pairs under WATCH
        self.watch_dirty = False  # a watched key changed since WATCH
        self.waiter = None  # the Waiter while blocked
        # Pub/sub subscriptions, in subscription order (dicts as ordered sets; see
        # server/pubsub.py). ``subscribed``: any of them is held (Redis's CLIENT_PUBSUB).
        self.channels: dict = {}
        self.patterns: dict = {}
        self.shard_channels: dict = {}
        self.subscribed = False
        # CLIENT TRACKING's options while it is on (server/tracking.py), else None.
        self.tracking = None
        # Since when (unix seconds) the pending output has been over the soft output buffer
        # limit; 0 while it is not (see server/pubsub.py).
        self.obuf_soft_since = 0
        self.pending: deque = deque()  # requests received while blocked
        self._bad_input: str | None = None  # a protocol error to report once pending is done
        self.closing = False
        # Redis's CLOSE_AFTER_REPLY (QUIT, CLIENT KILL of itself, a protocol error): the
        # connection closes once its output is written, and stays open, reading nothing
        # more, while there is none (CLIENT REPLY OFF or SKIP swallowed the last reply).
        self.close_when_written = False
        self.no_evict = False
        self.no_touch = False
        self.created = time.time()
        self.last_interaction = self.created
        self.last_cmd = "NULL"
        self.tot_cmds = 0
        self.net_in = 0
        self.net_out = 0
        self.io_reads = 0  # socket reads, a peer's EOF or reset included (INFO's reads)
        self.io_writes = 0  # socket writes (INFO's writes processed)
        self.addr = "?:0"
        self.laddr = "?:0"
        self.fd = -1
        self.transport = None
        # The reader asks the client for its limits; a weak reference keeps the two out of
        # a cycle, so a closed client is freed at once (see server/gcpolicy.py).
        self.reader = RequestReader(weakref.proxy(self))
        self.reader.set_gated(not self._authenticated)
        self._out = bytearray()
        # Messages to this client made while its own command ran: they go out after that
        # command's reply (server/pubsub.py). A subscriber takes the dispatcher's slow path,
        # which releases them before the next command runs.
        self.held_pushes = bytearray()
        self._paused_reading = False
        self._writes = server.writes
        self._busy = server.busy
        self._pubsub = server.pubsub
        self._period = -1  # the last cron period in which this client counted as active
        # Whether the dispatcher's slow path is needed; ``update_special`` keeps it in step
        # with the states behind it (authentication, MULTI, CLIENT PAUSE, reply modes ...).
        self.update_special()

    # The dispatcher checks one flag; these keep it in step with the two states behind it.
    @property
    def authenticated(self) -> bool:
        return self._authenticated

    @authenticated.setter
    def authenticated(self, value: bool) -> None:
        self._authenticated = value
        self.update_special()
        self.reader.set_gated(not value)

    @property
    def multi(self):
        return self._multi

    @multi.setter
    def multi(self, value) -> None:
        self._multi = value
        self.update_special()

    def io_counts(self) -> tuple[int, int, int, int]:
        """(bytes read, bytes written, reads, writes), as INFO stats adds them up."""
        return self.net_in, self.net_out, self.io_reads, self.io_writes

    def update_special(self) -> None:
        # A RESP2 subscriber may only run the pub/sub commands, PING, QUIT and RESET; a
        # RESP3 one may receive messages while its own command runs, which must follow that
        # command's reply (see held_pushes). So may a tracking client, whose reads are
        # remembered after each command (server/tracking.py).
        self.special = (not self._authenticated or self._multi is not None
                        or self.server.pause_type is not None or self.subscribed
                        or self.tracking is not None
                        or self.reply_off or self.reply_skip or self.reply_skip_next
                        or bool(self.server.monitors) or self.server.busy_script is not None
                        or self.server.hotkeys_active())

    # --- CLIENT REPLY ---------------------------------------------------------------------
    def set_reply_mode(self, mode: bytes) -> None:
        """CLIENT REPLY ``mode`` (b"on", b"off" or b"skip"). As in Redis, SKIP does nothing
        while OFF is in force, and ON also cancels a SKIP in force (so ON's own OK goes out)."""
        if mode == b"on":
            self.reply_off = self.reply_skip = False
        elif mode == b"off":
            self.reply_off = True
        elif not self.reply_off:
            self.reply_skip_next = True
        # Nothing of this command is in the buffer yet: a reply taken back out after it
        # starts here, also when the client was not on the dispatcher's slow path before.
        self.reply_mark = len(self._out)
        self.update_special()

    def reply_done(self) -> None:
        """A command is over (Redis's resetClient): a SKIP it was subject to ends, and one it
        asked for takes effect for the next command."""
        if self.reply_skip or self.reply_skip_next:
            self.reply_skip, self.reply_skip_next = self.reply_skip_next, False
            self.update_special()

    def update_subscribed(self) -> None:
        """After a subscription came or went (and after a protocol switch)."""
        self.subscribed = bool(self.channels or self.patterns or self.shard_channels)
        self.update_special()

    # --- limits the reader asks about ---------------------------------------------------
    def proto_max_bulk_len(self) -> int:
        return self.config["proto-max-bulk-len"]

    def query_buffer_limit(self) -> int:
        return self.config["client-query-buffer-limit"]

    def auth_required(self) -> bool:
        return not self.authenticated

    def input_queued(self) -> bool:
        """Whether the socket holds bytes not read yet, so that another read follows."""
        if self.fd < 0:
            return False
        try:
            return _INT.unpack(fcntl.ioctl(self.fd, termios.FIONREAD, _ZERO))[0] > 0
        except OSError:
            return False  # the reader then checks at once, which is always correct

    # --- asyncio.Protocol ---------------------------------------------------------------
    def connection_made(self, transport):
        held = self.transport
        if held is not None and getattr(held, "held", False):
            # Accepted while a script was busy (server/busyscript.py), adopted by the loop
            # now: the new transport takes over what the socket could not take yet.
            self.transport = transport
            if held.pending:
                transport.write(bytes(held.pending))
            return
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            try:
                self.fd = sock.fileno()
            except OSError:
                pass
        peer = transport.get_extra_info("peername")
        local = transport.get_extra_info("sockname")
        if isinstance(peer, tuple):
            self.addr = f"{peer[0]}:{peer[1]}"
        if isinstance(local, tuple):
            self.laddr = f"{local[0]}:{local[1]}"
        self.server.client_connected(self)
        if log.isEnabledFor(VERBOSE):
            log.log(VERBOSE, "Accepted %s", self.addr)

    def eof_received(self):
        self.io_reads += 1  # Redis counts the read that returns 0 bytes
        if not self.closing and log.isEnabledFor(VERBOSE):  # the peer closed, not us
            log.log(VERBOSE, "Client closed connection %s", client_line(self, _now()))
        return False  # close the transport

    def connection_lost(self, exc):
        if exc is not None:
            self.io_reads += 1  # the read that failed (a reset)
        self.closing = True
        self.server.client_disconnected(self)

    @property
    def reading_paused(self) -> bool:
        """Whether its requests are not read until its replies drain."""
        return self._paused_reading

    def pause_writing(self):
        # The peer is not reading its replies: stop reading its requests.
        if not self._paused_reading and self.transport is not None:
            self._paused_reading = True
            self.transport.pause_reading()

    def resume_writing(self):
        if self._paused_reading and self.transport is not None and not self.closing:
            self._paused_reading = False
            self.transport.resume_reading()

    def data_received(self, data: bytes):
        self.net_in += len(data)
        self.io_reads += 1
        self.last_interaction = _now()
        writes = self._writes
        if self._period != writes.period:
            self._period = writes.period
            writes.active += 1
        busy = self._busy
        if busy.polling:
            busy.active = True
        else:
            busy.wake()
        reader = self.reader
        while True:
            try:
                requests = reader.feed(data)
            except ProtocolError as exc:
                if self.waiter is not None or self.pending:
                    self.pending.extend(exc.requests)
                else:
                    self.run_requests(exc.requests)
                if type(exc) is QueryBufferFull:
                    self.query_buffer_full()
                elif self.waiter is not None or self.pending:
                    # Redis parses no further while the client is blocked or paused: what
                    # came before the bad bytes is served first, then the error is sent.
                    self.reader = _DISCARD
                    self._bad_input = str(exc)
                else:
                    self.protocol_error(str(exc))
                return
            if requests:
                if self.waiter is not None or self.pending:
                    self.pending.extend(requests)
                else:
                    self.run_requests(requests)
            if not reader.held or self.closing:
                return
            data = b""  # an unauthenticated client's next request (RequestReader.set_gated)

    # --- execution ----------------------------------------------------------------------
    def run_requests(self, requests) -> None:
        """Run requests in order until done or blocked; flush replies with one write."""
        pubsub = self._pubsub
        pubsub.running = self
        done, blocked = self.server.run(self, requests)
        pubsub.running = None
        if self.held_pushes:
            self.release_held_pushes()
        if blocked and done < len(requests):
            self.pending.extend(requests[done:])
        self.replies_ready()

    def release_held_pushes(self) -> None:
        """Append the messages held while this client's last command ran (its reply is
        already in the output buffer)."""
        self._out += self.held_pushes
        self.held_pushes = bytearray()

    def resume_pending(self) -> None:
        """Continue with requests that arrived while blocked."""
        while self.pending and self.waiter is None and not self.closing and not self.postponed:
            requests = list(self.pending)
            self.pending.clear()
            self.run_requests(requests)
        if (self._bad_input is not None and not self.pending and self.waiter is None
                and not self.closing and not self.postponed):
            self.protocol_error(self._bad_input)

    def resume_later(self) -> None:
        """Continue with the requests that arrived while blocked once the events of this
        loop iteration are handled, as Redis runs a just-unblocked client's query buffer
        before the loop sleeps again: the command that woke or unblocked it, and the rest
        of its sender's pipeline, come first."""
        if self.pending or self._bad_input is not None:
            loop = self.server.loop
            if loop is None:
                self.resume_pending()
            else:
                loop.call_soon(self.resume_pending)

    def send(self, reply) -> None:
        """The reply of a command that completes later (a woken XREAD BLOCK), or a refusal
        at connection time."""
        self.last_interaction = _now()  # Redis counts a write to a client as one
        if not (self.reply_off or self.reply_skip):
            encode(reply, self._out, self.resp)
        self.reply_done()
        if self.held_pushes:  # a woken command's messages to itself
            self.release_held_pushes()
        self.replies_ready()

    def replies_ready(self) -> None:
        """The output buffer holds complete replies: write them now, or with the other
        clients' at the end of this loop iteration (see ``writes.py``)."""
        if self._writes.defer:
            self._writes.queue(self)
        else:
            self.flush()

    def flush(self) -> None:
        data = self._out
        if data and self.transport is not None:
            # Hand the filled buffer itself to the transport and start a new one: no copy,
            # and the transport may keep a reference to what it could not send yet.
            self._out = bytearray()
            self.net_out += len(data)
            if not self.transport.is_closing():
                self.io_writes += 1
                self.transport.write(data)
        if self.closing and self.transport is not None and not self.transport.is_closing():
            if data or not self.close_when_written:
                self.transport.close()
            else:
                # Still read, to notice the peer closing, but run nothing more.
                self.reader = _DISCARD

    def protocol_error(self, message: str) -> None:
        self.server.log_verbose(f"Protocol error ({message}) from client: id={self.id} "
                                f"addr={self.addr}")
        if not (self.reply_off or self.reply_skip):
            # Under CLIENT REPLY OFF|SKIP Redis sends no error either, and then, having
            # nothing to write, leaves the connection open without reading from it.
            encode(ErrorReply(f"ERR Protocol error: {message}"), self._out, self.resp)
        self.close_after_reply()
        self.flush()

    def query_buffer_full(self) -> None:
        # Redis logs this and drops the client without a reply. The requests before the
        # overflow still get theirs: Redis reads at most 16 KiB at a time, so it ran them
        # and wrote their replies before the buffer grew past the limit.
        log.warning("Closing client that reached max query buffer length: id=%d addr=%s",
                    self.id, self.addr)
        self.server.stat_qbuf_disconnections += 1
        self.closing = True
        self.flush()

    def close_after_reply(self) -> None:
        self.closing = self.close_when_written = True

    def push_dropped(self) -> None:
        """A message (pub/sub, invalidation) for a client that is closing. Redis adds none
        to a client to close after its reply, but the write it schedules closes one left
        open with nothing to write."""
        if (self.close_when_written and not self._out and self.transport is not None
                and not self.transport.is_closing()):
            self.transport.close()

    def abort(self) -> None:
        """Close at once, dropping the output not written yet (output buffer limits)."""
        self.closing = True
        self._out = bytearray()
        if self.transport is not None:
            self.transport.abort()

    def kill(self) -> None:
        self.closing = True
        if self.transport is not None:
            self.flush()
            self.transport.close()

    # --- transactions / watch ------------------------------------------------------------
    def unwatch_all(self) -> None:
        for db, key in self.watched:
            watchers = db.watched.get(key)
            if watchers is not None:
                watchers.discard(self)
                if not watchers:
                    del db.watched[key]
        self.watched.clear()
        self.watch_dirty = False

    def raise_error(self, text: str):
        raise CommandError(text)
