"""Operator commands: ROLE, WAIT, SLOWLOG, LATENCY and MEMORY, as a standalone master with
no replicas and no persistence answers them (Redis 7.0's replies and error texts).

The slow log's entries are made by the dispatcher (server/server.py); the rules for what an
entry records of a command line (``slowlog_argv``) live here with the command names they
depend on.
"""

from __future__ import annotations

from itertools import islice

from ..protocol.replies import OK, Map, Verbatim
from . import errors as E
from .args import parse_int, parse_timeout_ms
from .blocking import Block
from .errors import CommandError
from .server import _rss_bytes as rss_bytes
from .table import command, help_command, integer, key, string

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
# streamd keeps no latency samples (latency-monitor-threshold is accepted but records
# nothing), so LATENCY answers as Redis does with monitoring disabled, its default.

_LATENCY_TIPS = "nondeterministic_output request_policy:all_nodes response_policy:special"

command("latency", -2, "slow", group="server", since="2.8.13",
        summary="A container for latency diagnostics commands.",
        complexity="Depends on subcommand.", container=True)


@command("latency|doctor", 2, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="2.8.13",
         summary="Returns a human-readable latency analysis report.", complexity="O(1)")
def latency_doctor(ctx, argv):
    """LATENCY DOCTOR"""
    return Verbatim(
        "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
        "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
        "order to enable it. If we weren't in a deep space mission I'd suggest to take a "
        "look at https://redis.io/topics/latency-monitor.\n")


@command("latency|graph", 3, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="2.8.13", summary="Returns a latency graph for an event.",
         complexity="O(1)", args=(string("event"),))
def latency_graph(ctx, argv):
    """LATENCY GRAPH event"""
    raise CommandError("ERR No samples available for event '%s'"
                       % argv[2].decode("utf-8", "replace"))


@command("latency|history", 3, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="2.8.13",
         summary="Returns timestamp-latency samples for an event.", complexity="O(1)",
         args=(string("event"),))
def latency_history(ctx, argv):
    """LATENCY HISTORY event"""
    return []


@command("latency|latest", 2, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="2.8.13",
         summary="Returns the latest latency samples for all events.", complexity="O(1)")
def latency_latest(ctx, argv):
    """LATENCY LATEST"""
    return []


@command("latency|reset", -2, "admin noscript loading stale",
         tips="request_policy:all_nodes response_policy:all_succeeded", group="server",
         since="2.8.13", summary="Resets the latency data for one or more events.",
         complexity="O(1)", args=(string("event", optional=True, multiple=True),))
def latency_reset(ctx, argv):
    """LATENCY RESET [event [event ...]]

    The number of event series reset: none are ever kept."""
    return 0


@command("latency|histogram", -2, "admin noscript loading stale", tips=_LATENCY_TIPS,
         group="server", since="7.0.0",
         summary="Returns the cumulative distribution of latencies of a subset or all "
                 "commands.",
         complexity="O(N) where N is the number of commands with latency information "
                    "being retrieved.",
         args=(string("command", optional=True, multiple=True),))
def latency_histogram(ctx, argv):
    """LATENCY HISTOGRAM [command [command ...]]

    A map from command name to its calls and latency buckets, for the named commands (or
    all) that have a histogram. streamd keeps none (INFO latencystats is empty too), so
    the map is empty, as Redis's is for commands it has no samples of; names are not
    checked (Redis skips unknown ones)."""
    return Map([])


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


@command("memory|stats", 2, "", tips="nondeterministic_output request_policy:all_shards "
         "response_policy:special", group="server", since="4.0.0",
         summary="Returns details about memory usage.", complexity="O(1)")
def memory_stats(ctx, argv):
    """MEMORY STATS

    Redis's fields in its order. What streamd can know: the process's resident size for
    the allocation figures, the key estimates of MEMORY USAGE for the dataset; the
    rest (replication, AOF, scripts, cluster) is 0 as on a server without them."""
    rss = rss_bytes()
    peak = ctx.server.peak_rss = max(rss, ctx.server.peak_rss)
    dataset, nkeys = _dataset_bytes(ctx)
    overhead = max(rss - dataset, 0)
    startup = ctx.server.startup_rss
    out = [(b"peak.allocated", peak), (b"total.allocated", rss),
           (b"startup.allocated", startup), (b"replication.backlog", 0),
           (b"clients.slaves", 0), (b"clients.normal", 0), (b"cluster.links", 0),
           (b"aof.buffer", 0), (b"lua.caches", 0), (b"functions.caches", 0)]
    for db in ctx.keyspace.dbs:
        if db.data or db.expires:
            out.append((b"db.%d" % db.index, Map([
                (b"overhead.hashtable.main", _KEY_OVERHEAD * len(db.data)),
                (b"overhead.hashtable.expires", _KEY_OVERHEAD * len(db.expires)),
                (b"overhead.hashtable.slot-to-keys", 0)])))
    out += [(b"overhead.total", overhead), (b"keys.count", nkeys),
            (b"keys.bytes-per-key", (rss - startup) // nkeys if nkeys else 0),
            (b"dataset.bytes", dataset),
            (b"dataset.percentage", dataset * 100 / rss if rss else 0.0),
            (b"peak.percentage", rss * 100 / peak if peak else 0.0),
            (b"allocator.allocated", rss), (b"allocator.active", rss),
            (b"allocator.resident", rss),
            (b"allocator-fragmentation.ratio", 1.0), (b"allocator-fragmentation.bytes", 0),
            (b"allocator-rss.ratio", 1.0), (b"allocator-rss.bytes", 0),
            (b"rss-overhead.ratio", 1.0), (b"rss-overhead.bytes", 0),
            (b"fragmentation", 1.0), (b"fragmentation.bytes", 0)]
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
    """MEMORY PURGE"""
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


