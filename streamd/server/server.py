"""The server: listening socket, dispatcher, blocked clients and the periodic cron.

Handlers are synchronous and run one at a time on the event loop, so every command is
atomic without locks. ``run`` is the hot path: for each request of a read, table lookup,
arity/auth/MULTI checks, the handler call, statistics and the reply's encoding.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import signal
import time
from collections import deque

from time import perf_counter_ns, time_ns

from .. import REDIS_VERSION, VERBOSE, __version__
from ..commands import load_commands
from ..commands import errors as E
from ..commands.blocking import Block
from ..commands.errors import CommandError
from ..commands.ops import rss_bytes
from ..commands.pubsub import SUBSCRIBED_ALLOWED, ping_subscribed
from ..commands.server import protected_allowed
from ..commands.table import DISPATCH, Command, every_command
from ..commands.transactions import exec_refused
from ..config import Config
from ..idmp import IdmpRegistry
from ..protocol.encoder import encode, encode_each, quoted
from ..protocol.reader import request_size, unauthenticated_refusal
from ..protocol.replies import NULL_ARRAY, QUEUED as _QUEUED, ErrorReply, Raw, is_push
from ..protocol.upstream import UpstreamCache
from ..store.keyspace import Keyspace, now_ms
from ..store.stream import Stream
from .acllog import AclLog
from .busypoll import BusyPoll
from .busyscript import ScriptRun
from .client import Client
from .hotkeys import HotKeys
from .pubsub import PubSub
from .latency import Latency
from .slowlog import NEVER, SlowLog, threshold_us
from .tracking import Tracking
from .writes import WriteScheduler

log = logging.getLogger("streamd")

# Commands a client may run before AUTH, and the ones MULTI executes instead of queueing.
_NO_AUTH = frozenset({"auth", "hello", "quit", "reset"})
_CLOSED = object()  # _resolve's answer when the request closed the connection
# A "-" address of bind that fails with one of these is skipped, as Redis skips it.
_OPTIONAL_BIND_ERRORS = frozenset((errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT,
                                   errno.EPROTONOSUPPORT, errno.ENOPROTOOPT,
                                   errno.ESOCKTNOSUPPORT, errno.EPFNOSUPPORT))


def listen_addresses(bind: str) -> list[tuple[str, bool]]:
    """``bind`` as redis.conf writes it, as (host, optional) pairs: ``*`` is every IPv4
    address, ``::*`` every IPv6 one, and a leading ``-`` marks an address that may be
    missing (Redis's default is ``* -::*``, its sample redis.conf's ``127.0.0.1 -::1``)."""
    out = []
    for word in bind.split():
        optional = word.startswith("-")
        host = word[1:] if optional else word
        out.append(({"*": "0.0.0.0", "::*": "::"}.get(host, host), optional))
    return out


# First words of an HTTP request that Redis takes for an attack (see Server._cross_protocol).
_CROSS_PROTOCOL = frozenset((b"post", b"host:"))
_POSTPONED = object()  # _resolve's answer when CLIENT PAUSE holds the request
_NOT_QUEUED = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})


# What CLIENT PAUSE WRITE holds: writes, and the commands Redis may replicate although
# they write no key (PUBLISH and SPUBLISH reach the replicas' subscribers too).
_REPLICATED = frozenset({"write", "may_replicate"})


def _held_by_write_pause(cmd) -> bool:
    return not _REPLICATED.isdisjoint(cmd.flags)


# A monitor is one of Redis's replicas underneath: it may not run what reads, writes or is
# replicated, and CLIENT PAUSE does not hold it. It is not shown administrative commands.
_KEYSPACE_FLAGS = frozenset({"readonly", "write", "may_replicate"})
_NOT_SHOWN = frozenset({"admin", "skip_monitor"})


class _Ran:
    """``_resolve``'s answer when it ran the command itself (a RESP2 subscriber's PING)."""

    __slots__ = ("cmd", "reply")

    def __init__(self, cmd, reply):
        self.cmd, self.reply = cmd, reply


class _LuaClient:
    """Who the slow log names for a script's commands: Redis's Lua client, which has no
    address and no name."""

    addr = "?:0"
    name = b""


_LUA_CLIENT = _LuaClient()

_METRIC_SAMPLES = 16
_METRIC_PERIOD_MS = 100


class Waiter:
    """A parked command: re-run when one of its keys is signalled."""

    __slots__ = ("client", "cmd", "argv", "db", "keys", "deadline", "timer", "nokey",
                 "timeout_reply", "sent_argv", "rerun")

    def __init__(self, client, cmd, argv, db, keys, deadline, nokey, timeout_reply=None,
                 sent_argv=None, rerun=None):
        self.client, self.cmd, self.argv, self.db = client, cmd, argv, db
        self.rerun = rerun  # what a wake-up runs (Block.rerun), None: cmd's handler
        self.sent_argv = sent_argv or argv  # as the client sent it: what the slow log shows
        self.keys, self.deadline, self.nokey = keys, deadline, nokey
        self.timer = None
        self.timeout_reply = NULL_ARRAY if timeout_reply is None else timeout_reply


class Server:
    def __init__(self, config: Config | None = None):
        load_commands()
        self.config = config or Config()
        self.keyspace = Keyspace(self.config["databases"])
        self.keyspace.idmp = IdmpRegistry()
        self.clients: dict[int, Client] = {}
        # Clients in MONITOR mode, in the order they entered it. While it is not empty,
        # every client takes the dispatcher's slow path, which shows their commands.
        self.monitors: list[Client] = []
        self.writes = WriteScheduler()  # when replies are written (at once or per iteration)
        self.busy = BusyPoll()  # whether the loop polls on after a read
        # The script or function running now (SCRIPT KILL, FUNCTION STATS), and the same
        # once it has run past busy-reply-threshold: then every command but the allow_busy
        # ones is answered BUSY (server/busyscript.py).
        self.script_run: ScriptRun | None = None
        self.busy_script: ScriptRun | None = None
        self.script = ScriptRun(self)  # the one run context, reused by every script
        self.pubsub = PubSub(self.writes, self.config)
        self.keyspace.event_hook = self.pubsub.keyspace_event
        self.keyspace.configure_events(self.config["notify-keyspace-events"])
        self.tracking = Tracking(self)
        self._next_id = 0
        self.started = time.time()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._servers: list = []  # one listening server per bind address
        self._cron_handle = None
        self._stopped: asyncio.Future | None = None
        self.port = 0
        self.lastsave = int(time.time())
        # CLIENT PAUSE: "write" or "all" while a pause lasts, None otherwise; until when
        # (unix seconds), its timer, and the clients holding a request until it ends.
        self.pause_type: str | None = None
        self.paused_until = 0.0
        self._pause_timer = None
        self._postponed: list[Client] = []
        self.run_id = os.urandom(20).hex()
        self.replid = os.urandom(20).hex()  # INFO master_replid; DEBUG CHANGE-REPL-ID
        self.gc_policy = None  # a GcPolicy in the server process (cli), ticked by the cron
        self.heap_policy = None  # a HeapPolicy there too (glibc only), ticked likewise
        self.hotkeys: HotKeys | None = None  # the HOTKEYS session, active or stopped
        # (bytes read, bytes written, reads, writes) of the connections already closed
        self._closed_io = [0, 0, 0, 0]
        # INFO memory's used_memory_startup (the resident size at startup) and
        # used_memory_peak (MEMORY STATS's startup.allocated and peak.allocated).
        self.startup_rss = rss_bytes()
        self.peak_used = 0
        self.slowlog = SlowLog()
        self.scripts = None  # the Lua engine and script cache, made by the first script
        # The function libraries (commands/functions.py), made by the first FUNCTION LOAD.
        self.functions = None
        self.migrate_sockets = UpstreamCache()  # MIGRATE's connections to its targets
        self.acl_log = AclLog()
        self._security_logged: float | None = None  # when the last cross-protocol drop was logged
        self.latency = Latency()
        # Kept by config_changed, in microseconds (NEVER: off): slowlog-log-slower-than,
        # latency-monitor-threshold, and the lower of the two, the one test a command pays
        # for both.
        self.slow_us = self.monitor_us = self.watch_us = NEVER
        self.config_changed()
        self.reset_stats()

    def config_changed(self) -> None:
        """Refresh what the dispatcher keeps of the configuration (after CONFIG SET)."""
        self.slow_us = threshold_us(self.config["slowlog-log-slower-than"])
        monitor_ms = self.config["latency-monitor-threshold"]
        self.monitor_us = monitor_ms * 1000 if monitor_ms > 0 else NEVER
        self.watch_us = min(self.slow_us, self.monitor_us)
        self.busy.configure(self.config["streamd-busy-poll-us"])
        if self.config["latency-tracking"] != self.latency.tracking:
            self.latency.set_tracking(self.config["latency-tracking"])
        # Redis trims the log at the end of every command while it is on, the CONFIG SET
        # that lowered slowlog-max-len (or turned the log back on) included.
        max_len = self.config["slowlog-max-len"]
        if self.slow_us != NEVER and max_len:
            self.slowlog.trim(max_len)

    def reset_stats(self) -> None:
        self.stat_connections = 0
        self.stat_rejected_conn = 0
        self.stat_error_replies = 0
        self.stat_qbuf_disconnections = 0  # clients closed for client-query-buffer-limit
        self.pubsub.obuf_disconnections = 0
        self.stat_errors: dict[str, int] = {}
        self._io_base = self._io_since_start()
        # INFO's instantaneous_* figures, as Redis takes them: every 100 ms a rate for ops,
        # input bytes and output bytes, each shown as the mean of its last 16 samples.
        self._sample_ms = time.monotonic_ns() // 1_000_000
        self._sample_last = (0, 0, 0)
        self._samples = [[0] * _METRIC_SAMPLES for _ in range(3)]
        self._sample_idx = 0
        for c in every_command():
            c.more_calls = c.usec = c.failed_calls = c.rejected_calls = 0
        self.latency.reset_histograms()
        self.keyspace.reset_stats()

    def _io_since_start(self) -> list[int]:
        totals = list(self._closed_io)
        for c in self.clients.values():
            for i, n in enumerate(c.io_counts()):
                totals[i] += n
        return totals

    def io_totals(self) -> tuple[int, int, int, int]:
        """INFO's (total_net_input_bytes, total_net_output_bytes, total_reads_processed,
        total_writes_processed): over every connection, closed ones included, since the
        start or the last CONFIG RESETSTAT."""
        now = self._io_since_start()
        return tuple(v - base for v, base in zip(now, self._io_base))

    def instantaneous(self) -> tuple[int, float, float]:
        """INFO's instantaneous_ops_per_sec and instantaneous_input/output_kbps."""
        ops, net_in, net_out = (sum(s) // _METRIC_SAMPLES for s in self._samples)
        return ops, net_in / 1024, net_out / 1024

    def _sample_metrics(self) -> None:
        now = time.monotonic_ns() // 1_000_000
        elapsed = now - self._sample_ms
        if elapsed < _METRIC_PERIOD_MS:
            return
        net_in, net_out, _, _ = self.io_totals()
        current = (self.commands_processed(), net_in, net_out)
        for samples, value, last in zip(self._samples, current, self._sample_last):
            samples[self._sample_idx] = (value - last) * 1000 // elapsed
        self._sample_idx = (self._sample_idx + 1) % _METRIC_SAMPLES
        self._sample_ms, self._sample_last = now, current

    def next_client_id(self) -> int:
        self._next_id += 1
        return self._next_id

    # --- dispatch ------------------------------------------------------------------------
    def run(self, client: Client, requests: list) -> tuple[int, bool]:
        """Run ``requests`` in order for ``client``, encoding every reply into its output
        buffer. Stops after a command that blocks or closes the client. Returns (requests
        consumed, whether the last one blocked).

        The common case (a known plain command, right arity, no AUTH/MULTI state) goes
        straight to the handler; everything else takes ``_resolve``'s full checks."""
        get = DISPATCH.get
        ks = self.keyspace
        done = 0
        left = len(requests)
        it = iter(requests)
        for argv in it:
            done += 1
            cmd = get(argv[0])
            if (cmd is None or cmd.handler is None or client.special
                    or ((len(argv) != cmd.arity) if cmd.arity > 0 else (len(argv) < -cmd.arity))):
                cmd = self._resolve(client, argv)
                if type(cmd) is not Command:  # refused, queued or run: cmd is the reply
                    if cmd is _CLOSED:
                        break
                    if cmd is _POSTPONED:  # this request and the rest wait for the pause
                        client.postponed = True
                        self._postponed.append(client)
                        return done - 1, True
                    if type(cmd) is _Ran:
                        encode(cmd.reply, client._out, client.resp)
                        self._after_special(client, cmd.cmd, argv, cmd.reply)
                    else:
                        encode(cmd, client._out, client.resp)
                        self._after_special(client, None, argv, cmd)
                    continue
            client.tot_cmds += 1
            client.last_cmd = cmd.name
            # One clock read serves as the command's time snapshot and as its start time.
            start = time_ns()
            client.now_ms = start // 1_000_000
            if cmd.batch is not None and done < left and not client.special:
                taken = self._run_batch(client, cmd, requests, done - 1, start)
                if taken:
                    for _ in range(taken - 1):
                        next(it)
                    done += taken - 1
                    if client.closing:
                        break
                    continue
            try:
                reply = cmd.handler(client, argv)
            except Exception as exc:
                reply = self._failed(cmd, argv, exc)
            usec = (time_ns() - start) // 1000
            if usec < 0:  # the wall clock stepped back
                usec = 0
            if type(reply) is Block:
                cmd.usec += usec
                if self.monitors:  # shown once, as it blocks; not when it is served
                    self._show(client, cmd, argv)
                if client.tracking is not None and "readonly" in cmd.flags:
                    self.tracking.remember(client, cmd, argv)  # as it blocks, as in Redis
                self._park(client, cmd, argv, reply)
                return done, True
            # The call and its time, for commandstats and latency-tracking at once (the
            # command's first call and slow ones take ``record``).
            try:
                cmd.lat[usec] += 1
            except IndexError:
                self.latency.record(cmd, usec)
            if usec >= self.watch_us:  # the one check a command pays for slow log and monitor
                self._watched(client, cmd, [argv], usec)
            # The reply goes first: what the woken clients' commands publish to this
            # client comes after it, as in Redis.
            encode(reply, client._out, client.resp)
            if client.special:
                if self.hotkeys_active():
                    self._hotkeys_record(client, cmd, argv, usec,
                                         len(client._out) - client.reply_mark)
                self._after_special(client, cmd, argv, reply)
            if ks.ready:
                self.handle_ready()
            if client.closing:
                break
        return done, False

    def _run_batch(self, client: Client, cmd, requests: list, at: int, start: int) -> int:
        """Let ``cmd.batch`` run ``requests[at]`` and the like requests after it; encode
        the replies and account them as that many calls. Returns how many requests it took
        (0: none, the plain handler runs ``requests[at]``)."""
        replies: list = []
        try:
            cmd.batch(client, requests, at, replies)
        except Exception as exc:
            # A bug: the requests with a reply are done, the one that raised gets the
            # generic error, as its plain handler's failure would.
            if len(replies) + at < len(requests):
                replies.append(self._failed(cmd, requests[at + len(replies)], exc))
        taken = len(replies)
        if taken:
            client.tot_cmds += taken - 1
            usec = (time_ns() - start) // 1000
            if usec < 0:  # the wall clock stepped back
                usec = 0
            # Each command of the run is taken to have run for an equal share of its time;
            # what the shares leave over counts in commandstats's time only.
            share, rest = divmod(usec, taken)
            if rest:
                cmd.usec += rest
            try:
                cmd.lat[share] += taken
            except IndexError:
                self.latency.record(cmd, share, taken)
            if share >= self.watch_us:
                self._watched(client, cmd, requests[at:at + taken], share)
            encode_each(replies, client._out, client.resp)
            if self.keyspace.ready:  # a pure command's lazy expiry deleted a key
                self.handle_ready()
        return taken

    def _watched(self, client: Client, cmd, run: list, usec: int) -> None:
        """Commands (one, or a pipelined run of them) that each ran for ``usec``, at least
        the slow log's or the latency monitor's threshold: a slow log entry for each, and
        one latency event, "fast-command" for a command flagged fast, "command" for the
        others, in whole milliseconds, as Redis names them. A run is timed as a whole, each
        of its commands taken to have run for an equal share of that time: at threshold 0
        every command is logged, as Redis logs each one, a run of many fast commands is
        not mistaken for slow ones, and its commands, all in the same second, make one
        latency sample."""
        if usec >= self.slow_us:
            max_len = self.config["slowlog-max-len"]
            for argv in run:
                self.slowlog.push(client, cmd, argv, usec, max_len)
        if usec >= self.monitor_us:
            self.latency.add_sample("fast-command" if "fast" in cmd.flags else "command",
                                    usec // 1000)

    def _resolve(self, client: Client, argv: list[bytes]):
        """The command to run for ``argv`` after every check, or the reply that replaces
        running it: an error (unknown, arity, NOAUTH) or +QUEUED inside MULTI; ``_CLOSED``
        after a protocol error."""
        if client.held_pushes:  # the last command's messages to itself, after its reply
            client.release_held_pushes()
        client.reply_mark = len(client._out)
        if client.special and not client.authenticated:
            # A request parsed before a RESET in the same read took the authentication away
            # meets the limits Redis, parsing one request at a time, would have applied.
            refusal = unauthenticated_refusal(argv)
            if refusal is not None:
                client.protocol_error(refusal)
                return _CLOSED
        # The client's last command (CLIENT LIST cmd=) is the one looked up, as in Redis:
        # also when it is then refused, queued or postponed; NULL when none is found.
        name = argv[0]
        cmd = DISPATCH.get(name)
        if cmd is None:
            cmd = DISPATCH.get(name.lower())
            if cmd is None:
                if name.lower() in _CROSS_PROTOCOL:
                    return self._cross_protocol(client)
                client.last_cmd = "NULL"
                return self._reject(client, E.unknown_command(name, argv[1:]), None)
        guard = ""
        if cmd.handler is None:  # container: resolve the subcommand
            if cmd.protected:  # a guarded plain command, routed here (command(protected=))
                cmd = cmd.bare
                guard = cmd.protected
            elif len(argv) < 2:
                if cmd.bare is None:
                    client.last_cmd = cmd.name
                    return self._reject(client, E.wrong_arity(cmd.name), cmd, argv)
                cmd = cmd.bare
            else:
                sub = cmd.subcommands.get(argv[1].lower())
                if sub is None:
                    # Redis finds no command here: no commandstats line counts it.
                    client.last_cmd = "NULL"
                    return self._reject(client, E.unknown_subcommand(argv[1], cmd.name), None)
                cmd = sub
                guard = sub.protected  # MODULE LOAD: one subcommand guarded, not its siblings
        client.last_cmd = cmd.name
        arity = cmd.arity
        if (len(argv) != arity) if arity > 0 else (len(argv) < -arity):
            return self._reject(client, E.wrong_arity(cmd.name), cmd, argv)
        if guard and not protected_allowed(self.config[guard], client.addr):
            return self._reject(client, E.command_not_allowed((cmd.parent or cmd).name, guard),
                                cmd, argv)
        if client.special:  # not authenticated, inside MULTI, paused or a RESP2 subscriber
            if not client.authenticated and cmd.name not in _NO_AUTH:
                return self._reject(client, E.NOAUTH, cmd, argv)
            if client.subscribed and client.resp == 2:
                if cmd.name not in SUBSCRIBED_ALLOWED:
                    return self._reject(client, E.subscribed_context(cmd.name), cmd, argv)
                # Answered here: PING's own handler stays lean (not while a script is busy:
                # PING is no allow_busy command, the check below answers BUSY).
                if cmd.name == "ping" and self.busy_script is None:
                    client.tot_cmds += 1
                    client.now_ms = time_ns() // 1_000_000
                    return _Ran(cmd, self.call(client, cmd, argv, ping_subscribed))
            if client.multi is not None and "no_multi" in cmd.flags:  # SAVE, SHUTDOWN
                return self._reject(client, E.NOT_IN_MULTI, cmd, argv)
            if client.monitor and not _KEYSPACE_FLAGS.isdisjoint(cmd.flags):
                return self._reject(client, "ERR Replica can't interact with the keyspace",
                                    cmd, argv)
            busy = self.busy_script
            if busy is not None and "allow_busy" not in cmd.flags:
                return self._reject(client, busy.busy_error, cmd, argv)
            pause = self.pause_type
            if pause is not None and not client.monitor and (
                    pause == "all" or _held_by_write_pause(cmd) or (
                    cmd.name == "exec" and client.multi
                    and any(_held_by_write_pause(c) for c, _ in client.multi))):
                return _POSTPONED
            if client.multi is not None:
                if cmd.name not in _NOT_QUEUED:
                    client.multi.append((cmd, argv))
                    return _QUEUED
        return cmd

    def commands_processed(self) -> int:
        """INFO ``total_commands_processed``: every command run (EXEC's inner commands
        included), counted once per command in its stats; a command that blocked counts
        once, when it is served, times out or is unblocked, however often it re-ran."""
        return sum(c.calls for c in every_command())

    def call(self, client: Client, cmd, argv, handler=None, show=False, sent_argv=None):
        """Run a handler with statistics; used by EXEC (with ``show``: monitors see each
        queued command as it runs, and a tracking client's reads are remembered) and
        wake-ups (``run`` inlines it), and with ``handler`` standing in for ``cmd``'s own,
        counted as ``cmd``. ``sent_argv``: the command line as sent, for the slow log,
        when ``argv`` is a parked command's rewritten one."""
        start = perf_counter_ns()
        try:
            reply = (handler or cmd.handler)(client, argv)
        except Exception as exc:
            reply = self._failed(cmd, argv, exc)
        usec = (perf_counter_ns() - start) // 1000
        # A parked command counts once, when it completes, and only then may it enter the
        # slow log, as in Redis (a timeout or CLIENT UNBLOCK logs nothing).
        if type(reply) is Block:
            cmd.usec += usec
        else:
            self.latency.record(cmd, usec)
            if usec >= self.watch_us:
                self._watched(client, cmd, [sent_argv or argv], usec)
            if self.hotkeys_active():
                self._hotkeys_record(client, cmd, sent_argv or argv, usec, None, reply)
        if show:  # EXEC's commands
            if self.monitors:
                self._show(client, cmd, argv)
            if client.tracking is not None and "readonly" in cmd.flags:
                self.tracking.remember(client, cmd, argv)
        return reply

    # --- HOTKEYS ----------------------------------------------------------------------------
    def start_hotkeys(self, cpu: bool, net: bool, count: int, duration_ms: int,
                      sample_ratio: int) -> None:
        """HOTKEYS START: a new session replaces the stopped one. Every client takes the
        dispatcher's slow path while it is active, where each command is recorded."""
        self.hotkeys = HotKeys(cpu, net, count, duration_ms, sample_ratio, now_ms())
        self._clients_changed_mode()

    def hotkeys_active(self) -> bool:
        """Whether a HOTKEYS session records commands now (started, not yet stopped)."""
        return self.hotkeys is not None and self.hotkeys.active

    def stop_hotkeys(self) -> None:
        self.hotkeys.stop(now_ms())
        self._clients_changed_mode()

    def _hotkeys_record(self, client: Client, cmd, argv, usec: int, out_bytes, reply=None):
        """A command a client ran (not one a script ran) for the HOTKEYS session: its keys,
        its time, and its bytes, the request as sent plus the reply (``out_bytes``, or
        ``reply`` encoded to count them)."""
        keys = cmd.keys_of(argv)
        if keys:
            if out_bytes is None:
                buf = bytearray()
                encode(reply, buf, client.resp)
                out_bytes = len(buf)
            self.hotkeys.record(keys, usec, request_size(argv) + out_bytes)

    def script_call(self, client: Client, cmd, argv):
        """A command a script runs (redis.call), on the script's caller: counted and timed
        as any call, in the slow log as Redis's Lua client's (no address, no name), shown
        to monitors as "lua", and a tracking caller's reads remembered. Clients it wakes
        are served once the script is done (the dispatcher does that after EVAL)."""
        start = perf_counter_ns()
        try:
            reply = cmd.handler(client, argv)
        except Exception as exc:
            reply = self._failed(cmd, argv, exc)
        usec = (perf_counter_ns() - start) // 1000
        self.latency.record(cmd, usec)
        if usec >= self.watch_us:
            self._watched(_LUA_CLIENT, cmd, [argv], usec)
        if self.monitors:
            self._show(client, cmd, argv, "lua")
        if client.tracking is not None and "readonly" in cmd.flags:
            self.tracking.remember(client, cmd, argv)
        return reply

    # --- CLIENT REPLY and MONITOR -----------------------------------------------------------
    def _after_special(self, client: Client, cmd, argv, reply) -> None:
        """A slow-path request's reply is in the output buffer (``cmd`` None: the request
        was refused or queued, not run). CLIENT REPLY OFF|SKIP takes the reply back out,
        but for subscription confirmations (pushes) and EXEC's own filtered array; then
        the monitors see the command; then a SKIP moves on, as Redis's resetClient does
        after every request."""
        if (client.reply_off or client.reply_skip) and not is_push(reply) and not (
                cmd is not None and cmd.name == "exec" and type(reply) is Raw):
            del client._out[client.reply_mark:]
        if cmd is not None and self.monitors:
            self._show(client, cmd, argv)
        st = client.tracking
        if st is not None:
            if cmd is not None and "readonly" in cmd.flags:
                self.tracking.remember(client, cmd, argv)
            # CLIENT CACHING's flag lasts one command, as Redis's resetClient clears it:
            # CLIENT's subcommands and the commands of a transaction keep it.
            if st.caching and client.multi is None and (
                    cmd is None or not cmd.name.startswith("client|")):
                st.caching = False
        client.reply_done()

    def _clients_changed_mode(self) -> None:
        """A server-wide state that sends every client through the dispatcher's slow path
        (MONITOR, CLIENT PAUSE, a busy script) began or ended: each client checks again."""
        for client in self.clients.values():
            client.update_special()

    def add_monitor(self, client: Client) -> None:
        client.monitor = True
        self.monitors.append(client)
        if len(self.monitors) == 1:
            self._clients_changed_mode()

    def remove_monitor(self, client: Client) -> None:
        client.monitor = False
        self.monitors.remove(client)
        if not self.monitors:
            self._clients_changed_mode()

    def _show(self, client: Client, cmd, argv, addr: str = "") -> None:
        """Write ``client``'s command, just run, to every monitor, as Redis does: the time,
        the database selected after the command and the client's address (``addr`` in
        its place: "lua" for a script's commands), then each argument as written (AUTH's
        and HELLO's credentials already redacted by them). Administrative commands are
        not shown."""
        if not _NOT_SHOWN.isdisjoint(cmd.flags):
            return
        self.show_line(client, argv, addr)

    def show_line(self, client: Client, argv, addr: str = "") -> None:
        """The monitors' line for ``argv``, whatever its command's flags (EVAL, flagged
        skip_monitor, shows itself before its script's commands, as in Redis)."""
        now = time_ns() // 1000
        line = b"+%d.%06d [%d %s] %s\r\n" % (
            now // 1_000_000, now % 1_000_000, client.db.index, (addr or client.addr).encode(),
            b" ".join([quoted(a) for a in argv]))
        send_out = self.pubsub.send_out
        # Redis counts a monitor as a normal client for client-output-buffer-limit (its
        # normal class is unlimited by default); the limit is checked as lines arrive.
        limits = self.config["client-output-buffer-limit"].limits["normal"]
        for monitor in list(self.monitors):
            # A monitor being closed gets nothing more, nor one under CLIENT REPLY OFF|SKIP
            # (the lines are replies, not pushes).
            if monitor.closing or monitor.reply_off or monitor.reply_skip:
                continue
            # A monitor's own command: the line follows the reply, written with it.
            send_out(monitor, line, limits, flush=monitor is not client)

    def script_refused(self, cmd, text: str) -> None:
        """A script's redis.call refused ``cmd`` (None: no such command) with ``text``:
        one error reply and, for a known command, one rejected call."""
        if cmd is not None:
            cmd.rejected_calls += 1
        self._error(text)

    def _failed(self, cmd, argv, exc: Exception) -> ErrorReply:
        """The reply to a handler that raised: its error text, or, for a bug in the
        handler, a generic error (the bug is logged; the connection stays up)."""
        cmd.failed_calls += 1
        if isinstance(exc, CommandError):
            return self._error(exc.text)
        log.error("Error executing %r", argv[:3], exc_info=exc)
        return self._error("ERR internal error while executing the command")

    def _error(self, text: str) -> ErrorReply:
        self.stat_error_replies += 1
        code = text.split(" ", 1)[0]
        self.stat_errors[code] = self.stat_errors.get(code, 0) + 1
        return ErrorReply(text)

    def _cross_protocol(self, client: Client):
        """An HTTP request's ``POST`` or ``Host:`` line: a web page making a browser send
        commands to a local server (cross-protocol scripting). As Redis does, the
        connection is dropped with nothing written (not even the replies to the requests
        before it in the same read), counted nowhere, and logged at most once a minute."""
        now = time.monotonic()
        if self._security_logged is None or now - self._security_logged > 60:
            self._security_logged = now
            log.warning("Possible SECURITY ATTACK detected. It looks like somebody is "
                        "sending POST or Host: commands to Redis. This is likely due to an "
                        "attacker attempting to use Cross Protocol Scripting to compromise "
                        "your Redis instance. Connection aborted.")
        client.abort()
        return _CLOSED

    def _reject(self, client: Client, text: str, cmd, argv=None):
        if cmd is not None:
            cmd.rejected_calls += 1
            if cmd.name == "exec":
                # Redis ends the transaction and, as it had shown MULTI, shows the monitors
                # this EXEC although it did not run.
                reply = self._error(exec_refused(client, text))
                if self.monitors:
                    self._show(client, cmd, argv)
                return reply
        if client.multi is not None:
            client.multi_error = True
        return self._error(text)

    # --- CLIENT PAUSE --------------------------------------------------------------------
    def pause(self, mode: str, timeout_ms: int) -> None:
        """Hold the clients' writes (``mode`` "write") or all their commands ("all") for
        ``timeout_ms``. A pause already running keeps its later end and its stricter mode,
        as in Redis. Every client takes the dispatcher's slow path, where ``_resolve``
        postpones what the pause holds."""
        until = time.time() + timeout_ms / 1000
        if self.pause_type != "all":
            self.pause_type = mode
        self.keyspace.expiry_paused = True
        if until > self.paused_until:
            self.paused_until = until
            if self._pause_timer is not None:
                self._pause_timer.cancel()
            if self.loop is not None:
                self._pause_timer = self.loop.call_later(timeout_ms / 1000, self.unpause)
        self._clients_changed_mode()

    def unpause(self) -> None:
        """End the pause; the postponed requests run, first postponed first, from the
        next loop iteration: as in Redis, the requests the unpausing client sent after
        CLIENT UNPAUSE in the same read run before them."""
        if self._pause_timer is not None:
            self._pause_timer.cancel()
            self._pause_timer = None
        self.pause_type = None
        self.paused_until = 0.0
        self.keyspace.expiry_paused = False
        self._clients_changed_mode()
        held, self._postponed = self._postponed, []
        if self.loop is not None:
            self.loop.call_soon(self._resume_postponed, held)
        else:
            self._resume_postponed(held)

    def _resume_postponed(self, held: list) -> None:
        for client in held:
            client.postponed = False
            client.resume_pending()

    # --- blocking ------------------------------------------------------------------------
    def _park(self, client: Client, cmd, argv, block: Block):
        deadline = now_ms() + block.timeout_ms if block.timeout_ms else 0
        waiter = Waiter(client, cmd, block.argv or argv, client.db, list(dict.fromkeys(block.keys)),
                        deadline, block.nokey, block.timeout_reply, argv, block.rerun)
        for key in waiter.keys:
            queue = client.db.blocking.get(key)
            if queue is None:
                queue = client.db.blocking[key] = deque()
            queue.append(waiter)
        client.waiter = waiter
        if deadline:
            waiter.timer = self.loop.call_later(block.timeout_ms / 1000, self._timeout, waiter)
        if self.keyspace.ready:
            self.handle_ready()

    def _unpark(self, waiter: Waiter) -> None:
        for key in waiter.keys:
            queue = waiter.db.blocking.get(key)
            if queue is not None:
                try:
                    queue.remove(waiter)
                except ValueError:
                    pass
                if not queue:
                    del waiter.db.blocking[key]
        if waiter.timer is not None:
            waiter.timer.cancel()
        waiter.client.waiter = None

    def _requeue(self, db, key: bytes, parked_again: list) -> None:
        """Put the waiters whose re-run for ``key`` blocked again at the back of their
        other keys' queues, in the order they re-ran: Redis re-blocks a re-run command at
        the tail of every key's list. In ``key``'s own queue the order already is that one:
        a re-run can only block again while a stream is there, and then every waiter of
        ``key`` re-ran (the served ones left)."""
        blocking = db.blocking
        for waiter in parked_again:
            for other in waiter.keys:
                if other != key:
                    queue = blocking[other]
                    queue.remove(waiter)
                    queue.append(waiter)

    def _finish(self, waiter: Waiter, reply) -> None:
        self._unpark(waiter)
        client = waiter.client
        client.send(reply)
        client.resume_later()

    def _timeout(self, waiter: Waiter) -> None:
        if waiter.client.waiter is waiter:
            # No run completes it: Redis counts the call here, but adds nothing to the
            # command's latency histogram.
            waiter.cmd.more_calls += 1
            self._finish(waiter, waiter.timeout_reply)
            if self.keyspace.ready:
                self.handle_ready()

    def unblock(self, client_id: int, error: bool) -> bool:
        client = self.clients.get(client_id)
        if client is None or client.waiter is None:
            return False
        waiter = client.waiter
        # Ended from outside, the parked command counts here, as a failure with ERROR.
        # Redis's histogram gets this call at the duration of its first run (already
        # in commandstats's time): streamd counts it at the least.
        self.latency.record(waiter.cmd, 0)
        if error:
            waiter.cmd.failed_calls += 1
        reply = self._error(E.UNBLOCKED) if error else waiter.timeout_reply
        self._finish(waiter, reply)
        return True

    def handle_ready(self) -> None:
        """Re-run, FIFO, the commands parked on keys signalled by the last command."""
        ks = self.keyspace
        pubsub = self.pubsub
        running = pubsub.running
        if running is not None and running.held_pushes:
            # The command that woke them has its reply out: its messages to its own client
            # go before anything the woken commands publish.
            running.release_held_pushes()
        while ks.ready:
            batch, ks.ready = ks.ready, []
            if len(batch) > 1:  # a key signalled twice is served once, where it came first
                batch = dict.fromkeys(batch)
            for db, key in batch:
                queue = db.blocking.get(key)
                if not queue:
                    continue
                parked_again = []
                for waiter in list(queue):
                    if waiter.client.waiter is not waiter:
                        continue
                    # What the key holds now decides, as in Redis, not what the signal
                    # left there: only a stream wakes XREAD (it would fail with WRONGTYPE
                    # on anything else); XREADGROUP also wakes on no key or another type.
                    if not waiter.nokey and type(db.peek(key)) is not Stream:
                        continue
                    client = waiter.client
                    client.now_ms = now_ms()
                    # The re-run is the woken client's command: its messages to itself
                    # follow its reply (server/pubsub.py).
                    pubsub.running = client
                    reply = self.call(client, waiter.cmd, waiter.argv, waiter.rerun,
                                      sent_argv=waiter.sent_argv)
                    pubsub.running = running
                    if type(reply) is Block:
                        if client.held_pushes:
                            client.release_held_pushes()
                            client.replies_ready()
                        parked_again.append(waiter)  # under the original deadline
                        continue
                    self._finish(waiter, reply)
                if parked_again:
                    self._requeue(db, key, parked_again)

    def is_blocked(self, client: Client) -> bool:
        """Whether ``client`` waits: parked on keys, or holding a request CLIENT PAUSE
        postponed (Redis blocks such a client too, with no timeout)."""
        return client.waiter is not None or (client.postponed and self.pause_type is not None)

    def blocked_stats(self) -> tuple[int, int, int, int]:
        """(blocked clients, those with a timeout, blocking keys, blocking keys that also
        wake on deletion). Clients postponed by CLIENT PAUSE count as blocked, as in Redis.
        Redis's timeout table holds only clients with a deadline: BLOCK 0 waits forever
        and has no entry there, nor has a postponed client."""
        keys = nokey = 0
        for db in self.keyspace.dbs:
            for queue in db.blocking.values():
                keys += 1
                if any(w.nokey for w in queue):
                    nokey += 1
        waiters = [c.waiter for c in self.clients.values() if c.waiter is not None]
        timed = sum(1 for w in waiters if w.deadline)
        return len(waiters) + len(self._postponed), timed, keys, nokey

    # --- scripts running long -------------------------------------------------------------
    def script_begin(self, client: Client, argv: list, name: str, is_eval: bool) -> ScriptRun:
        """A script or function starts running for ``client``; ``script_end`` when done.
        Its engine calls ``self.script.tick`` as it runs."""
        run = self.script_run = self.script
        run.start(client, argv, name, is_eval)
        return run

    def script_timed_out(self, run: ScriptRun) -> None:
        """``run`` has passed busy-reply-threshold: the other clients are served, BUSY."""
        self.busy_script = run
        self.writes.defer = False  # its loop callbacks would wait for the script's end
        self._clients_changed_mode()

    def script_end(self, run: ScriptRun) -> None:
        self.script_run = None
        if run.timed_out:
            self.busy_script = None
            run.finish()  # timed_out is False again
            self._clients_changed_mode()

    @property
    def listening(self) -> list:
        """The listening servers (one per bind address)."""
        return self._servers

    def new_client(self) -> Client:
        return Client(self)

    # --- clients -------------------------------------------------------------------------
    def client_connected(self, client: Client) -> None:
        if len(self.clients) >= self.config["maxclients"]:
            self.stat_rejected_conn += 1
            client.send(ErrorReply("ERR max number of clients reached"))
            client.kill()
            return
        self.stat_connections += 1
        self.clients[client.id] = client
        # The loop made the client before this call; a CLIENT PAUSE or MONITOR run in
        # between updated only the clients registered then.
        client.update_special()

    def client_disconnected(self, client: Client) -> None:
        if client.waiter is not None:
            self._unpark(client.waiter)
        client.unwatch_all()
        if client.subscribed:
            self.pubsub.drop_client(client)
        if client.tracking is not None:
            self.tracking.drop_client(client)
        if client.monitor:
            self.remove_monitor(client)
        if client.postponed and client in self._postponed:
            self._postponed.remove(client)
        if self.clients.pop(client.id, None) is not None:
            for i, n in enumerate(client.io_counts()):
                self._closed_io[i] += n

    # --- cron ----------------------------------------------------------------------------
    def cron(self) -> None:
        try:
            self.keyspace.active_expire()
            if self.keyspace.idmp is not None:
                self.keyspace.idmp.expire(now_ms())
            if self.keyspace.ready:
                self.handle_ready()
            self.writes.tick()
            self._sample_metrics()
            if self.gc_policy is not None:
                self.gc_policy.tick()
            if self.heap_policy is not None:
                self.heap_policy.tick(self.keyspace.dirty, time.monotonic())
            if self.hotkeys is not None and self.hotkeys.expired(now_ms()):
                self.stop_hotkeys()  # its DURATION is over
            if self.migrate_sockets:
                self.migrate_sockets.close_idle(time.monotonic())
        except Exception:
            log.exception("cron failed")
        self._cron_handle = self.loop.call_later(1 / self.config["hz"], self.cron)

    # --- lifecycle -----------------------------------------------------------------------
    def log_verbose(self, message: str) -> None:
        log.log(VERBOSE, message)

    async def start(self, handle_signals: bool = False) -> None:
        self.loop = self.writes.loop = self.busy.loop = asyncio.get_running_loop()
        self._stopped = self.loop.create_future()
        port = self.config["port"]
        servers = []
        try:
            for host, optional in listen_addresses(self.config["bind"]):
                try:
                    server = await self.loop.create_server(
                        lambda: Client(self), host=host, port=port,
                        backlog=self.config["tcp-backlog"], reuse_address=True)
                except OSError as exc:
                    if optional and exc.errno in _OPTIONAL_BIND_ERRORS:
                        continue  # e.g. "-::1" on a host without IPv6, as Redis skips it
                    raise
                servers.append(server)
                port = server.sockets[0].getsockname()[1]  # port 0: the others take it too
            if not servers:
                raise OSError(errno.EADDRNOTAVAIL,
                              f"none of the bind addresses {self.config['bind']!r} is available")
        except BaseException:
            for server in servers:
                server.close()
            raise
        self._servers = servers
        self.port = port
        self._cron_handle = self.loop.call_later(1 / self.config["hz"], self.cron)
        if handle_signals:
            self.install_signal_handlers()
        log.info("Server initialized")
        log.info("Ready to accept connections tcp on port %d", self.port)

    @property
    def stopping(self) -> bool:
        """Whether shutdown has begun (or the server never started)."""
        return self._stopped is None or self._stopped.done()

    async def serve_until_stopped(self) -> None:
        await self._stopped

    def shutdown(self, reason: str = "SHUTDOWN") -> None:
        """Stop accepting, close every client and let ``serve_until_stopped`` return."""
        if self._stopped is None or self._stopped.done():
            return
        log.warning("User requested shutdown (%s)...", reason)
        if self._cron_handle is not None:
            self._cron_handle.cancel()
        if self._pause_timer is not None:
            self._pause_timer.cancel()
        for server in self._servers:
            server.close()
        for client in list(self.clients.values()):
            client.kill()
        self.migrate_sockets.close_all()
        log.warning("Redis is now ready to exit, bye bye...")
        self._stopped.set_result(None)

    def install_signal_handlers(self) -> None:
        for sig, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
            try:
                self.loop.add_signal_handler(sig, self.shutdown, name)
            except (NotImplementedError, RuntimeError, ValueError):
                # Not the main thread (an in-process server in tests) or no signal support
                # on this platform: SHUTDOWN still stops the server.
                pass


def banner(config: Config) -> str:
    return (f"streamd {__version__} (Redis API {REDIS_VERSION}) starting, pid={os.getpid()}, "
            f"port={config['port']}")
