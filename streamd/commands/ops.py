"""Operator commands: ROLE, WAIT, SLOWLOG, LATENCY and MEMORY, as a standalone master with
no replicas and no persistence answers them (Redis 7.0's replies and error texts).

The slow log's entries are made by the dispatcher (server/server.py); the rules for what an
entry records of a command line (``slowlog_argv``) live here with the command names they
depend on.
"""

from __future__ import annotations

import time
from itertools import islice

from ..protocol.encoder import drop_node_cache
from ..protocol.replies import OK, Map, Verbatim
from . import errors as E
from .args import parse_int, parse_int_in, parse_timeout_ms
from .blocking import Block
from .connection import client_memory
from .errors import CommandError
from .latencystats import cdf, total_calls, tracked
from .server import _rss_bytes as rss_bytes
from .table import TABLE, command, every_command, help_command, integer, key, string

# --- ROLE / WAIT -------------------------------------------------------------------------


@command("role", 1, "noscript loading stale fast", acl="admin dangerous", group="server",
         since="2.8.12", summary="Returns the replication role.", complexity="O(1)")
def role(ctx, argv):
    """ROLE

    A master at replication offset 0 with no replicas."""
    return [b"master", 0, []]


@command("wait", 3, "noscript", acl="connection",
         tips="request_policy:all_shards response_policy:agg_min", group="generic",
         group_acl=False,
         since="3.0.0",
         summary="Blocks until the asynchronous replication of all preceding write commands "
                 "sent by the connection is completed.", complexity="O(1)",
         args=(integer("numreplicas"), integer("timeout")))
def wait(ctx, argv):
    """WAIT numreplicas timeout

    No replica ever acknowledges: asked for none (or fewer), or inside MULTI, the answer is
    0 at once; otherwise the client waits out the timeout (0: until CLIENT UNBLOCK) and then
    gets 0, as Redis's WAIT does on a master without replicas."""
    wanted = parse_int(argv[1])
    timeout = parse_timeout_ms(argv[2], ctx.now_ms)
    acked = 0
    if acked >= wanted or not ctx.blocking_allowed:
        return acked
    return Block([], timeout, timeout_reply=acked)


@command("waitaof", 4, "blocking", acl="connection",
         tips="request_policy:all_shards response_policy:agg_min", group="generic",
         group_acl=False, since="7.2.0",
         summary="Blocks until all of the preceding write commands sent by the connection "
                 "are written to the append-only file of the master and/or replicas.",
         complexity="O(1)",
         args=(integer("numlocal"), integer("numreplicas"), integer("timeout")))
def waitaof(ctx, argv):
    """WAITAOF numlocal numreplicas timeout

    [local fsyncs, replica fsyncs] of the client's writes: [0, 0], as neither ever comes
    (streamd writes no append-only file, even with appendonly yes, which is accepted but
    changes nothing). Asked for none, or where it may not block (MULTI, scripts), the
    answer comes at once; otherwise after the timeout (0: until CLIENT UNBLOCK), as WAIT.
    Asking for a local fsync with appendonly no is Redis's error."""
    numlocal = parse_int_in(argv[1], 0, 1, range_error=E.RANGE_0_1)
    numreplicas = parse_int(argv[2])
    if numreplicas < 0:
        raise CommandError(E.NOT_POSITIVE)
    timeout = parse_timeout_ms(argv[3], ctx.now_ms)
    if numlocal and not ctx.config["appendonly"]:
        raise CommandError(E.WAITAOF_NO_AOF)
    acked = [0, 0]
    if (numlocal <= 0 and numreplicas <= 0) or not ctx.blocking_allowed:
        return acked
    return Block([], timeout, timeout_reply=acked)


# --- SLOWLOG -----------------------------------------------------------------------------

# Redis keeps at most this many arguments of a command line, the last kept one telling how
# many were dropped, and at most this many bytes of each argument.
SLOWLOG_MAX_ARGC = 32
SLOWLOG_MAX_STRING = 128
_REDACTED = b"(redacted)"


def _redact(name: str, argv: list[bytes]) -> list[bytes]:
    """Redis hides passwords from the slow log: every argument of AUTH, the user name and
    password after HELLO's AUTH token. HELLO redacts them as its parsing reaches them, so
    Redis 7.0 leaves them in place after a bad protocol version or a bad option before
    them; so does this. (Redis also stops at an AUTH pair that fails to authenticate,
    leaving a later pair visible; this redacts every pair.)"""
    if name == "auth":
        return argv[:1] + [_REDACTED] * (len(argv) - 1)
    if len(argv) < 2 or argv[1] not in (b"2", b"3"):
        return argv
    out = list(argv)
    i = 2
    while i < len(out):
        word = out[i].upper()
        if word == b"AUTH" and i + 2 < len(out):
            out[i + 1] = out[i + 2] = _REDACTED
            i += 3
        elif word == b"SETNAME" and i + 1 < len(out):
            i += 2
        else:
            break
    return out


def slowlog_argv(name: str, argv: list[bytes]) -> list[bytes]:
    """The command line as a slow log entry keeps it: passwords redacted, at most 32
    arguments (the 32nd replaced by "... (N more arguments)"), each argument cut to 128
    bytes followed by "... (N more bytes)"."""
    if name in ("auth", "hello"):
        argv = _redact(name, argv)
    argc = len(argv)
    kept = argv[:SLOWLOG_MAX_ARGC]
    out = []
    for j, arg in enumerate(kept):
        if argc > SLOWLOG_MAX_ARGC and j == SLOWLOG_MAX_ARGC - 1:
            out.append(b"... (%d more arguments)" % (argc - SLOWLOG_MAX_ARGC + 1))
        elif len(arg) > SLOWLOG_MAX_STRING:
            out.append(arg[:SLOWLOG_MAX_STRING] +
                       b"... (%d more bytes)" % (len(arg) - SLOWLOG_MAX_STRING))
        else:
            out.append(arg)
    return out


command("slowlog", -2, "slow", group="server", since="2.2.12",
        summary="A container for slow log commands.", complexity="Depends on subcommand.",
        container=True)


@command("slowlog|get", -2, "admin loading stale",
         tips="request_policy:all_nodes nondeterministic_output", group="server",
         since="2.2.12", summary="Returns the slow log's entries.",
         complexity="O(N) where N is the number of entries returned",
         args=(integer("count", optional=True),),
         history=(
             ("4.0.0", "Added client IP address, port and name to the reply."),
         ))
def slowlog_get(ctx, argv):
    """SLOWLOG GET [count]

    Newest first; 10 entries by default, -1 for all."""
    if len(argv) > 3:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "slowlog"))
    count = 10
    if len(argv) == 3:
        try:
            count = parse_int(argv[2])
        except CommandError:
            count = -2
        if count < -1:
            raise CommandError("ERR count should be greater than or equal to -1")
    entries = ctx.server.slowlog.entries
    if count == -1 or count > len(entries):
        count = len(entries)
    return [list(entries[i]) for i in range(count)]


@command("slowlog|len", 2, "admin loading stale",
         tips="request_policy:all_nodes response_policy:agg_sum nondeterministic_output",
         group="server", since="2.2.12",
         summary="Returns the number of entries in the slow log.", complexity="O(1)")
def slowlog_len(ctx, argv):
    """SLOWLOG LEN"""
    return len(ctx.server.slowlog.entries)


@command("slowlog|reset", 2, "admin loading stale",
         tips="request_policy:all_nodes response_policy:all_succeeded", group="server",
         since="2.2.12", summary="Clears all entries from the slow log.",
         complexity="O(N) where N is the number of entries in the slowlog")
def slowlog_reset(ctx, argv):
    """SLOWLOG RESET

    The entry IDs keep counting from where they were."""
    ctx.server.slowlog.entries.clear()
    return OK


help_command("slowlog", "server", "6.2.0", (
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN", "    Return the length of the slowlog.",
    "RESET", "    Reset the slowlog.",
    "HELP", "    Prints this help."))


# --- LATENCY -----------------------------------------------------------------------------
# The latency monitor's events ("command", "fast-command": what the dispatcher records
# when latency-monitor-threshold is on) are kept by the server (server/latency.py, as
# ``ctx.server.latency.events``: name -> series of [unix time, ms] samples, oldest first,
# and its all-time max); per-command histograms on the commands (latencystats.py).

_LATENCY_TIPS = "nondeterministic_output request_policy:all_nodes response_policy:special"

command("latency", -2, "slow", group="server", since="2.8.13",
        summary="A container for latency diagnostics commands.",
        complexity="Depends on subcommand.", container=True)

_DOCTOR_DISABLED = (
    "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
    "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
    "order to enable it. If we weren't in a deep space mission I'd suggest to take a "
    "look at https://redis.io/topics/latency-monitor.\n")
_DOCTOR_CALM = (
    "Dave, no latency spike was observed during the lifetime of this Redis instance, not "
    "in the slightest bit. I honestly think you ought to sit down calmly, take a stress "
    "pill, and think things over.\n")
_DOCTOR_SPIKES = ("Dave, I have observed latency spikes in this Redis instance. You don't "
                  "mind talking about it, do you Dave?\n\n")
_ADVICE_SLOWLOG_ENABLE = (
    "- There are latency issues with potentially slow commands you are using. Try to "
    "enable the Slow Log Redis feature using the command 'CONFIG SET "
    "slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log "
    "slow commands execution for you.\n")
_ADVICE_SLOWLOG_TUNE = (
    "- Your current Slow Log configuration only logs events that are slower than your "
    "configured latency monitor threshold. Please use 'CONFIG SET "
    "slowlog-log-slower-than %d'.\n")
_ADVICE_SLOWLOG_INSPECT = (
    "- Check your Slow Log to understand what are the commands you are running which are "
    "too slow to execute. Please check https://redis.io/commands/slowlog for more "
    "information.\n")
_ADVICE_SCHEDULER = (
    "- The system is slow to execute Redis code paths not containing system calls. This "
    "usually means the system does not provide Redis CPU time to run for long periods. "
    "You should try to:\n"
    "  1) Lower the system load.\n"
    "  2) Use a computer / VM just for Redis if you are running other software in the same "
    "system.\n"
    "  3) Check if you have a \"noisy neighbour\" problem.\n"
    "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in "
    "your system.\n"
    "  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, "
    "if you are using Jemalloc. However this may create fragmentation problems.\n")
_ADVICE_LARGE_OBJECTS = (
    "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a "
    "blocking operation. If you have very large objects that are often deleted, expired, "
    "or evicted, try to fragment those objects into multiple smaller objects.\n")


def _event_stats(series, now: int) -> tuple[int, int, int, float]:
    """(samples, average ms, mean absolute deviation ms, seconds per sample) as the
    doctor reports them, in whole milliseconds; the period runs from the oldest sample
    to now (at least one second)."""
    values = [ms for _, ms in series.samples]
    n = len(values)
    avg = sum(values) // n
    mad = sum(abs(avg - ms) for ms in values) // n
    period = (now - min(t for t, _ in series.samples)) or 1
    return n, avg, mad, period / n


def latency_report(events: dict, threshold_ms: int, slow_us: int, slow_max_len: int,
                   now: int) -> str:
    """LATENCY DOCTOR's text for the events streamd records (command, fast-command): the
    per-event lines and the advice Redis 7.0 gives for them. Redis's advice on forks,
    disks, AOF, eviction, expiry and transparent huge pages has no events here to
    trigger it."""
    if not events and not threshold_ms:
        return _DOCTOR_DISABLED
    if not events:
        return _DOCTOR_CALM
    out = [_DOCTOR_SPIKES]
    slowlog_enable = slowlog_tune = command_advice = scheduler = False
    for i, (name, series) in enumerate(events.items(), 1):
        n, avg, mad, period = _event_stats(series, now)
        out.append("%d. %s: %d latency spikes (average %dms, mean deviation %dms, "
                   "period %.2f sec). Worst all time event %dms.\n"
                   % (i, name, n, avg, mad, period, series.max))
        if name == "command":
            if slow_us < 0 or slow_max_len == 0:
                slowlog_enable = True
            elif slow_us // 1000 > threshold_ms:
                slowlog_tune = True
            command_advice = True
        elif name == "fast-command":
            scheduler = True
    out.append("\nI have a few advices for you:\n\n")
    if slowlog_enable:
        out.append(_ADVICE_SLOWLOG_ENABLE % (threshold_ms * 1000))
    if slowlog_tune:
        out.append(_ADVICE_SLOWLOG_TUNE % (threshold_ms * 1000))
    if command_advice:
        out.append(_ADVICE_SLOWLOG_INSPECT)
    if scheduler:
        out.append(_ADVICE_SCHEDULER)
    if command_advice:
        out.append(_ADVICE_LARGE_OBJECTS)
    return "".join(out)


@command("latency|doctor", 2, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="2.8.13",
         summary="Returns a human-readable latency analysis report.", complexity="O(1)")
def latency_doctor(ctx, argv):
    """LATENCY DOCTOR

    Redis's report, limited to the events streamd records (see ``latency_report``)."""
    config = ctx.config
    return Verbatim(latency_report(
        ctx.server.latency.events, config["latency-monitor-threshold"],
        config["slowlog-log-slower-than"], config["slowlog-max-len"], int(time.time())))


# LATENCY GRAPH draws the samples as a sparkline of this many columns and 4 rows, each
# row split in 3 heights, with each sample's age written downwards beneath it.
_GRAPH_COLUMNS = 80
_GRAPH_ROWS = 4
_GRAPH_MARKS = "_o#"


def _age_label(seconds: int) -> str:
    if seconds < 60:
        return "%ds" % seconds
    if seconds < 3600:
        return "%dm" % (seconds // 60)
    if seconds < 86400:
        return "%dh" % (seconds // 3600)
    return "%dd" % (seconds // 86400)


def _sparkline(values: list[int], labels: list[str], low: int, high: int) -> list[str]:
    """The lines of one band of the graph: the bars, a blank line, then the labels."""
    span = (high - low) or 1
    steps = len(_GRAPH_MARKS) * _GRAPH_ROWS
    heights = [min(max(int((v - low) * steps / span), 0), steps - 1) for v in values]
    lines = []
    for row in range(_GRAPH_ROWS):
        floor = (_GRAPH_ROWS - row - 1) * len(_GRAPH_MARKS)
        line = []
        for h in heights:
            level = h - floor
            if level < 0:
                line.append(" ")
            elif level < len(_GRAPH_MARKS):
                line.append(_GRAPH_MARKS[level])
            else:
                line.append("|")
        lines.append("".join(line))
    lines.append(" " * len(values))
    for depth in range(max(len(label) for label in labels)):
        lines.append("".join(label[depth] if depth < len(label) else " "
                             for label in labels))
    return lines


def latency_graph_text(name: str, series, now: int) -> str:
    values = [ms for _, ms in series.samples]
    labels = [_age_label(now - t) for t, _ in series.samples]
    low, high = min(values), max(values)
    out = ["%s - high %d ms, low %d ms (all time high %d ms)\n" % (name, high, low,
                                                                   series.max),
           "-" * _GRAPH_COLUMNS + "\n"]
    bands = []
    for at in range(0, len(values), _GRAPH_COLUMNS):
        bands.append("".join(line + "\n" for line in _sparkline(
            values[at:at + _GRAPH_COLUMNS], labels[at:at + _GRAPH_COLUMNS], low, high)))
    out.append("\n".join(bands))
    return "".join(out)


@command("latency|graph", 3, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="2.8.13", summary="Returns a latency graph for an event.",
         complexity="O(1)", args=(string("event"),))
def latency_graph(ctx, argv):
    """LATENCY GRAPH event

    The event's samples as an ASCII graph: its high, low and all-time high, then one
    column per sample, 80 to a band, each labelled with its age (s, m, h or d)."""
    name = argv[2].decode("utf-8", "surrogateescape")
    series = ctx.server.latency.events.get(name)
    if series is None:
        raise CommandError("ERR No samples available for event '%s'"
                           % argv[2].decode("utf-8", "replace"))
    return Verbatim(latency_graph_text(name, series, int(time.time())))


@command("latency|history", 3, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="2.8.13",
         summary="Returns timestamp-latency samples for an event.", complexity="O(1)",
         args=(string("event"),))
def latency_history(ctx, argv):
    """LATENCY HISTORY event

    The event's [unix time, milliseconds] samples, oldest first (at most 160, one per
    second); none for an unknown event."""
    series = ctx.server.latency.events.get(argv[2].decode("utf-8", "surrogateescape"))
    return [] if series is None else [list(sample) for sample in series.samples]


@command("latency|latest", 2, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="2.8.13",
         summary="Returns the latest latency samples for all events.", complexity="O(1)")
def latency_latest(ctx, argv):
    """LATENCY LATEST

    For each event: its name, its latest sample's time and milliseconds, and its
    all-time maximum."""
    return [[name.encode(), *series.samples[-1], series.max]
            for name, series in ctx.server.latency.events.items()]


@command("latency|reset", -2, "admin noscript loading stale",
         tips="request_policy:all_nodes response_policy:all_succeeded", group="server",
         since="2.8.13", summary="Resets the latency data for one or more events.",
         complexity="O(1)", args=(string("event", optional=True, multiple=True),))
def latency_reset(ctx, argv):
    """LATENCY RESET [event [event ...]]

    Drops the named events (names are case-sensitive; each counts once), or all of
    them; the reply is how many were dropped."""
    names = None if len(argv) == 2 else [a.decode("utf-8", "surrogateescape")
                                         for a in argv[2:]]
    return ctx.server.latency.reset(names)


def _histogram_entry(name: str, cmd) -> tuple:
    calls, steps = cdf(cmd)
    return (name.encode(), Map([(b"calls", calls), (b"histogram_usec", Map(steps))]))


def _histogram_lookup(name: bytes):
    """The command a LATENCY HISTOGRAM argument names (``container|sub`` for a
    subcommand, any case); None when there is none."""
    parts = name.lower().split(b"|")
    cmd = TABLE.get(parts[0])
    if cmd is None or len(parts) > 2:
        return None
    if len(parts) == 2:
        return cmd.subcommands.get(parts[1])
    return cmd


@command("latency|histogram", -2, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="7.0.0",
         summary="Returns the cumulative distribution of latencies of a subset or all "
                 "commands.",
         complexity="O(N) where N is the number of commands with latency information "
                    "being retrieved.",
         args=(string("command", optional=True, multiple=True),))
def latency_histogram(ctx, argv):
    """LATENCY HISTOGRAM [command [command ...]]

    A map from command name to its calls and its cumulative latency buckets, for every
    command with calls, or for the named ones: a container stands for itself and its
    subcommands, unknown names are skipped, a name given twice shows twice. What was
    kept shows while latency-tracking is off too (nothing is added then)."""
    if len(argv) == 2:
        return Map([_histogram_entry(cmd.name, tracked(cmd)) for cmd in every_command()
                    if total_calls(tracked(cmd))])
    out = []
    for arg in argv[2:]:
        cmd = _histogram_lookup(arg)
        if cmd is None:
            continue
        if total_calls(tracked(cmd)):
            out.append(_histogram_entry(cmd.name, tracked(cmd)))
        for sub in cmd.subcommands.values():
            if total_calls(sub):
                out.append(_histogram_entry(sub.name, sub))
    return Map(out)


help_command("latency", "server", "2.8.13", (
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR", "    Return a human readable latency analysis report.",
    "GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>", "    Return time-latency samples for the <event> class.",
    "LATEST", "    Return the latest latency samples for all events.",
    "RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram "
    "for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP", "    Prints this help."))


# --- MEMORY ------------------------------------------------------------------------------

command("memory", -2, "slow", group="server", since="4.0.0",
        summary="A container for memory diagnostics commands.",
        complexity="Depends on subcommand.", container=True)


@command("memory|usage", -3, "readonly", keys=(2, 2, 1), group="server", since="4.0.0",
         summary="Estimates the memory usage of a key.",
         complexity="O(N) where N is the number of samples.",
         args=(key(), integer("count", token="SAMPLES", optional=True)))
def memory_usage(ctx, argv):
    """MEMORY USAGE key [SAMPLES count]

    streamd's estimate of the bytes the key and its value take (see ``estimate_size``);
    nil for a missing key. As in Redis, a hash or stream is sized from SAMPLES of its fields
    or nodes (default 5; 0: all of them), so the call stays cheap on a big value. The
    options are checked first: SAMPLES needs a non-negative integer (the last one given
    counts); anything else is a syntax error."""
    samples = _DEFAULT_SAMPLES
    i = 3
    while i < len(argv):
        if argv[i].upper() == b"SAMPLES" and i + 1 < len(argv):
            samples = parse_int(argv[i + 1])
            if samples < 0:
                raise CommandError(E.SYNTAX)
            i += 2
        else:
            raise CommandError(E.SYNTAX)
    value = ctx.db.get(argv[2])
    if value is None:
        return None
    return estimate_size(argv[2], value, samples)


# What streamd counts for a key, modelled on Redis's own structures (not Python's object
# sizes, which say nothing a Redis operator can compare): a keyspace slot and the key
# string, then per type --
#   string: the value bytes plus an object header;
#   hash: each field and value with a per-field entry overhead;
#   stream: each node's listpack bytes (as streamd models them for `~` trimming) with a
#   per-node radix-tree overhead, plus per group and per pending entry and consumer.
_KEY_OVERHEAD = 40  # dict entry + key string header
_OBJ_OVERHEAD = 16  # value object header
_FIELD_OVERHEAD = 24  # per hash field: its entry in the table
_NODE_OVERHEAD = 32  # per stream node: its radix-tree slot and listpack header
_GROUP_OVERHEAD = 64
_PENDING_OVERHEAD = 48
_CONSUMER_OVERHEAD = 64


_DEFAULT_SAMPLES = 5  # Redis's OBJ_COMPUTE_SIZE_DEF_SAMPLES


def estimate_size(name: bytes, value, samples: int = _DEFAULT_SAMPLES) -> int:
    """The estimate of a key; a hash or stream from ``samples`` of its fields or nodes,
    scaled to all of them (0: every one)."""
    size = _KEY_OVERHEAD + len(name) + _OBJ_OVERHEAD
    if isinstance(value, (bytes, bytearray)):
        size += len(value)
    elif isinstance(value, dict):
        n = len(value)
        some = value.items() if not samples or n <= samples else islice(value.items(), samples)
        taken = sum(_FIELD_OVERHEAD + len(f) + len(v) for f, v in some)
        size += taken if not samples or n <= samples else taken * n // samples
    elif hasattr(value, "memory_estimate"):
        size += value.memory_estimate(samples, _NODE_OVERHEAD, _GROUP_OVERHEAD,
                                      _PENDING_OVERHEAD, _CONSUMER_OVERHEAD)
    return (size + 7) & ~7  # allocations come in 8-byte steps


_EMPTY_MEMORY = 5 * 1024 * 1024  # below this Redis's doctor declares the instance empty


def _dataset_bytes(ctx, enough: int | None = None) -> tuple[int, int]:
    """(estimated bytes of every key, number of keys), over all databases; the sum stops
    growing once it reaches ``enough`` (MEMORY DOCTOR only asks whether it is below 5 MB)."""
    total = keys = 0
    for db in ctx.keyspace.dbs:
        keys += len(db.data)
        if enough is None or total < enough:
            for name, value in db.data.items():
                total += estimate_size(name, value)
                if enough is not None and total >= enough:
                    break
    return total, keys


_INFO_SAMPLE = 1000  # keys per database INFO sizes; a bigger one is scaled from them


def used_memory(ctx) -> tuple[int, int, int, int]:
    """(used, startup, dataset, clients) bytes for INFO memory. Redis's used_memory is what
    its allocator handed out; streamd's is the process's resident size at startup (its
    used_memory_startup) plus the key estimates of MEMORY USAGE (the dataset) plus the
    clients' buffers (CLIENT LIST's tot-mem), so it moves with the data and the clients.
    INFO is polled: a big database is sized from a sample of its keys."""
    dataset = 0
    for db in ctx.keyspace.dbs:
        n = len(db.data)
        if n <= _INFO_SAMPLE:
            dataset += sum(estimate_size(k, v) for k, v in db.data.items())
        else:
            some = islice(db.data.items(), _INFO_SAMPLE)
            dataset += sum(estimate_size(k, v) for k, v in some) * n // _INFO_SAMPLE
    clients = sum(client_memory(c)[-1] for c in ctx.server.clients.values())
    startup = ctx.server.startup_rss
    return startup + dataset + clients, startup, dataset, clients


@command("memory|stats", 2, "", tips="nondeterministic_output request_policy:all_shards "
         "response_policy:special", group="server", since="4.0.0",
         summary="Returns details about memory usage.", complexity="O(1)")
def memory_stats(ctx, argv):
    """MEMORY STATS

    Redis's fields in its order, with INFO memory's figures (see ``used_memory``): its
    estimate for the allocation, the resident size against it for the fragmentation;
    the rest (replication, AOF, scripts, cluster) is 0 as on a server without them."""
    used, startup, dataset, clients = used_memory(ctx)
    rss = rss_bytes()
    peak = ctx.server.peak_used = max(used, ctx.server.peak_used)
    nkeys = sum(len(db.data) for db in ctx.keyspace.dbs)
    out = [(b"peak.allocated", peak), (b"total.allocated", used),
           (b"startup.allocated", startup), (b"replication.backlog", 0),
           (b"clients.slaves", 0), (b"clients.normal", clients), (b"cluster.links", 0),
           (b"aof.buffer", 0), (b"lua.caches", 0), (b"functions.caches", 0)]
    for db in ctx.keyspace.dbs:
        if db.data or db.expires:
            out.append((b"db.%d" % db.index, Map([
                (b"overhead.hashtable.main", _KEY_OVERHEAD * len(db.data)),
                (b"overhead.hashtable.expires", _KEY_OVERHEAD * len(db.expires)),
                (b"overhead.hashtable.slot-to-keys", 0)])))
    net = used - startup
    out += [(b"overhead.total", used - dataset), (b"keys.count", nkeys),
            (b"keys.bytes-per-key", net // nkeys if nkeys else 0),
            (b"dataset.bytes", dataset),
            (b"dataset.percentage", dataset * 100 / net if net else 0.0),
            (b"peak.percentage", used * 100 / peak),
            (b"allocator.allocated", used), (b"allocator.active", used),
            (b"allocator.resident", used),
            (b"allocator-fragmentation.ratio", 1.0), (b"allocator-fragmentation.bytes", 0),
            (b"allocator-rss.ratio", 1.0), (b"allocator-rss.bytes", 0),
            (b"rss-overhead.ratio", rss / used), (b"rss-overhead.bytes", rss - used),
            (b"fragmentation", rss / used), (b"fragmentation.bytes", rss - used)]
    return Map(out)


@command("memory|doctor", 2, "", tips="nondeterministic_output request_policy:all_shards "
         "response_policy:special", group="server", since="4.0.0",
         summary="Outputs a memory problems report.", complexity="O(1)")
def memory_doctor(ctx, argv):
    """MEMORY DOCTOR

    Redis calls an instance below 5 MB allocated empty; streamd measures its dataset by
    the key estimates (the interpreter's own memory is not the dataset's), and finds no
    issue above that: it has no fragmentation, replica or script figures to judge."""
    if _dataset_bytes(ctx, _EMPTY_MEMORY)[0] < _EMPTY_MEMORY:
        return Verbatim(
            "Hi Sam, this instance is empty or is using very little memory, my issues "
            "detector can't be used in these conditions. Please, leave for your mission on "
            "Earth and fill it with some data. The new Sam and I will be back to our "
            "programming as soon as I finished rebooting.\n")
    return Verbatim("Hi Sam, I can't find any memory issue in your instance. I can only "
                    "account for what occurs on this base.\n")


@command("memory|malloc-stats", 2, "", tips="nondeterministic_output "
         "request_policy:all_shards response_policy:special", group="server", since="4.0.0",
         summary="Returns the allocator statistics.",
         complexity="Depends on how much memory is allocated, could be slow")
def memory_malloc_stats(ctx, argv):
    """MEMORY MALLOC-STATS

    Redis's answer when not built with jemalloc."""
    return b"Stats not supported for the current allocator"


@command("memory|purge", 2, "", tips="request_policy:all_shards response_policy:all_succeeded",
         group="server", since="4.0.0", summary="Asks the allocator to release memory.",
         complexity="Depends on how much memory is allocated, could be slow")
def memory_purge(ctx, argv):
    """MEMORY PURGE

    Redis asks jemalloc to return dirty pages. streamd drops the encoded stream nodes it
    keeps for repeated reads, then has malloc give its free memory back (glibc only; see
    ``server/heap.py``)."""
    drop_node_cache()
    if ctx.server.heap_policy is not None:
        ctx.server.heap_policy.trim()
    return OK


help_command("memory", "server", "4.0.0", (
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR", "    Return memory problems reports.",
    "MALLOC-STATS", "    Return internal statistics report from the memory allocator.",
    "PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS", "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP", "    Prints this help."))


