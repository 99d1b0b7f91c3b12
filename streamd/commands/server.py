"""Server commands: INFO, CONFIG, COMMAND, DBSIZE, FLUSHDB/FLUSHALL, TIME, LASTSAVE,
SHUTDOWN, MONITOR."""

from __future__ import annotations

import os
import platform
import resource
import selectors
import sys
import time

from .. import REDIS_VERSION, __version__
from ..config import PARAMS, ConfigError, canonical
from ..protocol.replies import NO_REPLY, OK, Map, SetReply, Simple, Verbatim
from . import errors as E
from .connection import client_memory
from .keyutil import glob_match
from .latencystats import command_usec, percentiles_line, total_calls, tracked
from .errors import CommandError
from .args import parse_int
from .table import (TABLE, block, command, every_command, help_command, integer, oneof, pattern,
                    string, token)

# --- INFO --------------------------------------------------------------------------------

# Redis 7.0's order, which INFO keeps whatever order the sections are asked in.
_ALL_SECTIONS = ("server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                 "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace")
_DEFAULT_SECTIONS = tuple(s for s in _ALL_SECTIONS if s not in ("commandstats", "latencystats"))
_AVG_TTL_SAMPLE = 20  # keys with a TTL looked at per database for avg_ttl


def _human(n: int) -> str:
    """Redis's bytesToHuman: B below 1K, then K, M, G, T, P with two decimals."""
    if n < 1024:
        return f"{n}B"
    for unit, size in (("K", 1024), ("M", 1024**2), ("G", 1024**3), ("T", 1024**4),
                       ("P", 1024**5)):
        if n < size * 1024:
            return f"{n / size:.2f}{unit}"
    return f"{n}B"


def _avg_ttl(db) -> int:
    """Mean remaining TTL in ms of a few keys with one, as Redis estimates it by sampling
    (its figure is a running estimate; 0 when no key has a TTL)."""
    if not db.expires:
        return 0
    now = time.time_ns() // 1_000_000
    sample = [when - now for _, when in zip(range(_AVG_TTL_SAMPLE), db.expires.values())]
    live = [ttl for ttl in sample if ttl > 0]
    return sum(live) // len(live) if live else 0


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _total_system_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def _memory_section(ctx) -> list[str]:
    """Redis 7.0's fields in its order. The allocator's figures are streamd's estimate
    (see ops.used_memory) and the resident size; with no allocator of its own to tell them
    apart, allocated, active and resident are that one estimate. The Lua figures: the
    interpreter's own count (one interpreter for scripts and functions, reported as the
    scripts'), the script cache's size as Redis counts it; functions' memory, replication,
    AOF and lazy freeing are not measured: those figures are 0."""
    from .ops import used_memory  # ops imports this module

    used, startup, dataset, clients = used_memory(ctx)
    srv = ctx.server
    rss = _rss_bytes()
    peak = srv.peak_used = max(used, srv.peak_used)
    overhead = used - dataset
    net = used - startup
    system = _total_system_memory()
    maxmemory = ctx.config["maxmemory"]
    libs = srv.functions
    n_libraries = len(libs.libraries) if libs is not None else 0
    n_functions = sum(len(lib.functions) for lib in libs.libraries.values()) if n_libraries else 0
    # The Lua interpreter exists from the first script on; before, there is none to count.
    engine = srv.scripts
    lua = engine.lua_memory() if engine is not None else 0
    n_scripts = len(engine.scripts) if engine is not None else 0
    scripts_mem = engine.cache_memory() if engine is not None else 0
    return [f"used_memory:{used}", f"used_memory_human:{_human(used)}",
            f"used_memory_rss:{rss}", f"used_memory_rss_human:{_human(rss)}",
            f"used_memory_peak:{peak}", f"used_memory_peak_human:{_human(peak)}",
            f"used_memory_peak_perc:{used * 100 / peak:.2f}%",
            f"used_memory_overhead:{overhead}", f"used_memory_startup:{startup}",
            f"used_memory_dataset:{dataset}",
            f"used_memory_dataset_perc:{dataset * 100 / net if net else 0:.2f}%",
            f"allocator_allocated:{used}", f"allocator_active:{used}",
            f"allocator_resident:{used}",
            f"total_system_memory:{system}", f"total_system_memory_human:{_human(system)}",
            f"used_memory_lua:{lua}", f"used_memory_vm_eval:{lua}",
            f"used_memory_lua_human:{_human(lua)}",
            f"used_memory_scripts_eval:{scripts_mem}", f"number_of_cached_scripts:{n_scripts}",
            f"number_of_functions:{n_functions}", f"number_of_libraries:{n_libraries}",
            "used_memory_vm_functions:0",
            f"used_memory_vm_total:{lua}", f"used_memory_vm_total_human:{_human(lua)}",
            "used_memory_functions:0", f"used_memory_scripts:{scripts_mem}",
            f"used_memory_scripts_human:{_human(scripts_mem)}",
            f"maxmemory:{maxmemory}", f"maxmemory_human:{_human(maxmemory)}",
            f"maxmemory_policy:{ctx.config['maxmemory-policy']}",
            "allocator_frag_ratio:1.00", "allocator_frag_bytes:0",
            "allocator_rss_ratio:1.00", "allocator_rss_bytes:0",
            f"rss_overhead_ratio:{rss / used:.2f}", f"rss_overhead_bytes:{rss - used}",
            f"mem_fragmentation_ratio:{rss / used:.2f}",
            f"mem_fragmentation_bytes:{rss - used}",
            "mem_not_counted_for_evict:0", "mem_replication_backlog:0",
            "mem_total_replication_buffers:0", "mem_clients_slaves:0",
            f"mem_clients_normal:{clients}", "mem_cluster_links:0", "mem_aof_buffer:0",
            "mem_allocator:pymalloc", "active_defrag_running:0",
            "lazyfree_pending_objects:0", "lazyfreed_objects:0"]


# The kernel interface the event loop waits on. libuv (uvloop) and asyncio's default
# selector choose the same one Redis's ae library would on this platform.
_MULTIPLEXING_API = {"EpollSelector": "epoll", "KqueueSelector": "kqueue",
                     "DevpollSelector": "evport"}.get(selectors.DefaultSelector.__name__,
                                                      "select")
# Redis's LRU clock: seconds, wrapping at 24 bits.
LRU_CLOCK_MAX = (1 << 24) - 1


def _section(ctx, name: str) -> list[str]:
    srv = ctx.server
    ks = ctx.keyspace
    if name == "server":
        up = int(time.time() - srv.started)
        return [
            f"redis_version:{REDIS_VERSION}", f"streamd_version:{__version__}",
            "redis_git_sha1:00000000", "redis_git_dirty:0", "redis_build_id:0",
            "redis_mode:standalone", f"os:{platform.system()} {platform.release()} {platform.machine()}",
            "arch_bits:64", "monotonic_clock:POSIX clock_gettime",
            f"multiplexing_api:{_MULTIPLEXING_API}",
            f"python_version:{platform.python_version()}",
            f"process_id:{os.getpid()}", "process_supervised:no", f"run_id:{srv.run_id}",
            f"tcp_port:{srv.port}",
            f"server_time_usec:{time.time_ns() // 1000}", f"uptime_in_seconds:{up}",
            f"uptime_in_days:{up // 86400}", f"hz:{ctx.config['hz']}",
            f"configured_hz:{ctx.config['hz']}",
            f"lru_clock:{int(time.time()) & LRU_CLOCK_MAX}", f"executable:{sys.executable}",
            f"config_file:{ctx.config.file or ''}", "io_threads_active:0",
        ]
    if name == "clients":
        blocked, timed, keys, nokey = srv.blocked_stats()
        # Redis samples its clients' buffers in its cron and keeps the largest of the last
        # few seconds; streamd takes the largest now: the query buffer's room and bytes
        # (CLIENT LIST's qbuf + qbuf-free) and the replies not written yet (omem).
        biggest_in = biggest_out = 0
        for c in srv.clients.values():
            qbuf, qbuf_free, _, _, _, _, _, omem, _ = client_memory(c)
            biggest_in = max(biggest_in, qbuf + qbuf_free)
            biggest_out = max(biggest_out, omem)
        return [f"connected_clients:{len(srv.clients)}", "cluster_connections:0",
                f"maxclients:{ctx.config['maxclients']}",
                f"client_recent_max_input_buffer:{biggest_in}",
                f"client_recent_max_output_buffer:{biggest_out}", f"blocked_clients:{blocked}",
                f"tracking_clients:{srv.tracking.clients}", "pubsub_clients:"
                f"{sum(1 for c in srv.clients.values() if c.subscribed)}", "watching_clients:"
                f"{sum(1 for c in srv.clients.values() if c.watched)}",
                f"clients_in_timeout_table:{timed}", f"total_watched_keys:"
                f"{sum(len(db.watched) for db in ks.dbs)}",
                f"total_blocking_keys:{keys}", f"total_blocking_keys_on_nokey:{nokey}"]
    if name == "memory":
        return _memory_section(ctx)
    if name == "persistence":
        return ["loading:0", "async_loading:0", f"rdb_changes_since_last_save:{ks.dirty}",
                "rdb_bgsave_in_progress:0", f"rdb_last_save_time:{srv.lastsave}",
                "rdb_last_bgsave_status:ok", "aof_enabled:0", "aof_rewrite_in_progress:0",
                "aof_rewrite_scheduled:0", "aof_last_bgrewrite_status:ok"]
    if name == "stats":
        net_in, net_out, reads, writes = srv.io_totals()
        ops, kbps_in, kbps_out = srv.instantaneous()
        hits, misses = ks.lookups()
        # Redis 7.0's fields in its order (expired_subkeys and the buffer-limit
        # disconnections are newer). Those of replication, forks, eviction, defragmentation
        # and I/O threads are 0: streamd has none of them.
        return [f"total_connections_received:{srv.stat_connections}",
                f"total_commands_processed:{srv.commands_processed()}",
                f"instantaneous_ops_per_sec:{ops}",
                f"total_net_input_bytes:{net_in}",
                f"total_net_output_bytes:{net_out}",
                "total_net_repl_input_bytes:0", "total_net_repl_output_bytes:0",
                f"instantaneous_input_kbps:{kbps_in:.2f}",
                f"instantaneous_output_kbps:{kbps_out:.2f}",
                "instantaneous_input_repl_kbps:0.00", "instantaneous_output_repl_kbps:0.00",
                f"rejected_connections:{srv.stat_rejected_conn}",
                "sync_full:0", "sync_partial_ok:0", "sync_partial_err:0",
                f"expired_keys:{ks.expired_keys}",
                f"expired_subkeys:{ks.expired_subkeys}",
                f"expired_stale_perc:{ks.expired_stale * 100:.2f}",
                f"expired_time_cap_reached_count:{ks.expire_time_cap_reached}",
                f"expire_cycle_cpu_milliseconds:{ks.expire_cycle_us // 1000}",
                "evicted_keys:0", "evicted_clients:0", "total_eviction_exceeded_time:0",
                "current_eviction_exceeded_time:0",
                f"keyspace_hits:{hits}", f"keyspace_misses:{misses}",
                f"pubsub_channels:{len(srv.pubsub.channels)}",
                f"pubsub_patterns:{len(srv.pubsub.patterns)}",
                f"pubsubshard_channels:{len(srv.pubsub.shard)}",
                "latest_fork_usec:0", "total_forks:0", "migrate_cached_sockets:0",
                "slave_expires_tracked_keys:0", "active_defrag_hits:0",
                "active_defrag_misses:0", "active_defrag_key_hits:0",
                "active_defrag_key_misses:0", "total_active_defrag_time:0",
                "current_active_defrag_time:0",
                f"tracking_total_keys:{len(srv.tracking.table)}",
                f"tracking_total_items:{srv.tracking.items}",
                f"tracking_total_prefixes:{len(srv.tracking.prefixes)}",
                "unexpected_error_replies:0",
                f"total_error_replies:{srv.stat_error_replies}",
                "dump_payload_sanitizations:0",
                f"total_reads_processed:{reads}", f"total_writes_processed:{writes}",
                "io_threaded_reads_processed:0", "io_threaded_writes_processed:0",
                f"client_query_buffer_limit_disconnections:{srv.stat_qbuf_disconnections}",
                "client_output_buffer_limit_disconnections:"
                f"{srv.pubsub.obuf_disconnections}"]
    if name == "replication":
        return ["role:master", "connected_slaves:0", "master_failover_state:no-failover",
                f"master_replid:{srv.replid}", "master_replid2:" + "0" * 40,
                "master_repl_offset:0", "second_repl_offset:-1", "repl_backlog_active:0",
                f"repl_backlog_size:{ctx.config['repl-backlog-size']}",
                "repl_backlog_first_byte_offset:0", "repl_backlog_histlen:0"]
    if name == "cpu":
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return [f"used_cpu_sys:{ru.ru_stime:.6f}", f"used_cpu_user:{ru.ru_utime:.6f}"]
    if name == "modules" or name == "cluster":
        return ["cluster_enabled:0"] if name == "cluster" else []
    if name == "latencystats":
        # Redis shows nothing here while latency-tracking is off, even the figures it
        # kept from before (LATENCY HISTOGRAM still shows them).
        if not ctx.config["latency-tracking"]:
            return []
        percentiles = ctx.config["latency-tracking-info-percentiles"]
        return [percentiles_line(tracked(cmd), cmd.name, percentiles)
                for cmd in every_command() if total_calls(tracked(cmd))]
    if name == "commandstats":
        lines = []
        for cmd in every_command():
            if cmd.calls or cmd.rejected_calls or cmd.failed_calls:
                usec = command_usec(cmd)
                per = usec / cmd.calls if cmd.calls else 0.0
                lines.append(f"cmdstat_{cmd.name}:calls={cmd.calls},usec={usec},"
                             f"usec_per_call={per:.2f},rejected_calls={cmd.rejected_calls},"
                             f"failed_calls={cmd.failed_calls}")
        return lines
    if name == "errorstats":
        return [f"errorstat_{code}:count={n}" for code, n in sorted(srv.stat_errors.items())]
    if name == "keyspace":
        lines = []
        for db in ks.dbs:
            if db.data:
                lines.append(f"db{db.index}:keys={len(db.data)},expires={len(db.expires)},"
                             f"avg_ttl={_avg_ttl(db)},subexpiry={db.subexpiry()}")
        return lines
    return []


def info_text(ctx, sections: list[str]) -> str:
    want: set[str] = set()
    for s in sections or ["default"]:
        s = s.lower()
        if s in ("all", "everything"):
            want.update(_ALL_SECTIONS)
        elif s == "default":
            want.update(_DEFAULT_SECTIONS)
        else:
            want.add(s)
    out = []
    for name in _ALL_SECTIONS:
        if name not in want:
            continue
        out.append(f"# {'CPU' if name == 'cpu' else name.capitalize()}")
        out.extend(_section(ctx, name))
        out.append("")
    return "\r\n".join(out[:-1]) + "\r\n" if out else ""


@command("info", -1, "loading stale",
         acl="dangerous",
         tips="nondeterministic_output request_policy:all_shards response_policy:special",
         group="server", since="1.0.0",
         summary="Returns information and statistics about the server.", complexity="O(1)",
         args=(string("section", optional=True, multiple=True),),
         history=(
             ("7.0.0", "Added support for taking multiple section arguments."),
         ))
def info(ctx, argv):
    """INFO [section [section ...]]"""
    return Verbatim(info_text(ctx, [a.decode("utf-8", "replace") for a in argv[1:]]))


# --- CONFIG ------------------------------------------------------------------------------

command("config", -2, "slow", group="server", since="2.0.0",
        summary="A container for server configuration commands.",
        complexity="Depends on subcommand.", container=True)


@command("config|get", -3, "admin noscript loading stale", group="server", since="2.0.0",
         summary="Returns the effective values of configuration parameters.",
         complexity="O(N) when N is the number of configuration parameters provided",
         args=(string("parameter", multiple=True),),
         history=(
             ("7.0.0", "Added the ability to pass multiple pattern parameters in one call"),
         ))
def config_get(ctx, argv):
    """CONFIG GET parameter [parameter ...]

    As Redis 7.0 does: a name without glob characters is echoed as sent (case kept) and an
    alias is reported under the alias, not the parameter it stands for; a pattern is matched
    (ignoring case) against parameter and alias names alike. One entry per name, compared
    without case, the first kept.
    """
    found: dict[bytes, tuple[bytes, bytes]] = {}
    for pat in argv[2:]:
        if not any(c in pat for c in b"[*?"):
            value = ctx.config.lookup(pat.decode("utf-8", "replace"))
            if value is not None and pat.lower() not in found:
                found[pat.lower()] = (pat, value.encode())
            continue
        for name in ctx.config.names():
            bname = name.encode()
            if bname not in found and glob_match(pat, bname, nocase=True):
                found[bname] = (bname, ctx.config.lookup(name).encode())
    return Map(list(found.values()))


@command("config|set", -4, "admin noscript loading stale",
         tips="request_policy:all_nodes response_policy:all_succeeded", group="server",
         since="2.0.0",
         summary="Sets configuration parameters in-flight.",
         complexity="O(N) when N is the number of configuration parameters provided",
         args=(block("data", string("parameter"), string("value"), multiple=True),),
         history=(
             ("7.0.0", "Added the ability to set multiple parameters in one call."),
         ))
def config_set(ctx, argv):
    """CONFIG SET parameter value [parameter value ...]

    As Redis 7.0: every name is checked first, in order, and the first fault is the reply
    (unknown name, immutable or protected parameter, a parameter given twice; an old alias
    and its parameter count as two). Then the values are applied all or nothing.
    """
    if len(argv) % 2:  # Redis 7.0: an odd count is a syntax error, not an arity one
        raise CommandError(E.SYNTAX)
    pairs = [(argv[i].decode("utf-8", "replace"), argv[i + 1].decode("utf-8", "replace"))
             for i in range(2, len(argv), 2)]
    seen = set()
    for name, _ in pairs:
        param = PARAMS.get(canonical(name) or "")
        if param is None:
            raise CommandError(E.CONFIG_SET_UNKNOWN.format(name))
        if not param.mutable:
            reason = E.CONFIG_IMMUTABLE
        elif param.protected and not _protected_allowed(ctx):
            reason = E.CONFIG_PROTECTED
        elif name.lower() in seen:
            reason = E.CONFIG_DUPLICATE
        else:
            seen.add(name.lower())
            continue
        raise CommandError(E.CONFIG_SET_FAILED.format(name, reason))
    old = dict(ctx.config.values)
    for name, value in pairs:
        try:
            ctx.config.set(name, value)
        except ConfigError as exc:
            ctx.config.values = old  # all-or-nothing, as Redis does
            raise CommandError(E.CONFIG_SET_FAILED.format(name, exc)) from None
    ctx.keyspace.configure_events(ctx.config["notify-keyspace-events"])
    ctx.server.config_changed()
    return OK


def _protected_allowed(ctx) -> bool:
    return protected_allowed(ctx.config["enable-protected-configs"], ctx.addr)


def protected_allowed(mode: str, addr: str) -> bool:
    """What an ``enable-protected-configs`` / ``enable-debug-command`` setting allows the
    client at ``addr``: ``yes`` everyone, ``local`` the clients whose address is exactly
    127.0.0.1 or ::1 (Redis compares the peer's text; 127.0.0.2 is not local), ``no``
    nobody."""
    if mode == "local":
        return addr.rsplit(":", 1)[0] in ("127.0.0.1", "::1")
    return mode == "yes"


@command("config|resetstat", 2, "admin noscript loading stale", group="server", since="2.0.0",
         summary="Resets the server's statistics.", complexity="O(1)")
def config_resetstat(ctx, argv):
    """CONFIG RESETSTAT"""
    ctx.server.reset_stats()
    return OK


@command("config|rewrite", 2, "admin noscript loading stale", group="server", since="2.8.0",
         summary="Persists the effective configuration to file.", complexity="O(1)")
def config_rewrite(ctx, argv):
    """CONFIG REWRITE"""
    try:
        ctx.config.rewrite()
    except ConfigError as exc:
        raise CommandError(f"ERR {exc}") from None
    except OSError as exc:
        raise CommandError(E.CONFIG_REWRITE_FAILED.format(exc.strerror)) from None
    return OK


help_command("config", "server", "5.0.0", (
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
    "RESETSTAT", "    Reset statistics reported by the INFO command.",
    "REWRITE", "    Rewrite the configuration file.",
    "HELP", "    Print this help."))


# --- COMMAND -----------------------------------------------------------------------------

@command("command", -1, "loading stale", acl="connection",
         tips="nondeterministic_output_order", group="server", since="2.8.13",
         summary="Returns detailed information about all commands.",
         complexity="O(N) where N is the total number of Redis commands", alone=True)
def command_(ctx, argv):
    """COMMAND

    Alone; ``COMMAND <subcommand>`` is dispatched to the subcommands below."""
    return [c.info() for c in TABLE.values()]


def _sub(name: str, arity: int, summary: str, since: str, args=(), tips=(),
         complexity: str = "", history: tuple = ()):
    def register(fn):
        # Not through ``command``, which registers a container's subcommands: COMMAND
        # also runs alone. Redis gives them all the flags and categories set here.
        from .table import Command
        parent = TABLE[b"command"]
        parent.subcommands[name.encode()] = Command(
            name=f"command|{name}", handler=fn, arity=arity,
            flags=frozenset({"loading", "stale"}), group="server", since=since,
            summary=summary, complexity=complexity, arguments=tuple(args),
            categories=("slow", "connection"), tips=tuple(tips), history=tuple(history),
            parent=parent)
        return fn
    return register


def _resolve(name: bytes):
    cmd = TABLE.get(name.lower())
    if cmd is None and b"|" in name:
        parent, sub = name.lower().split(b"|", 1)
        p = TABLE.get(parent)
        cmd = p.subcommands.get(sub) if p else None
    return cmd


@_sub("count", 2, "Returns a count of commands.", "2.8.13", complexity="O(1)")
def command_count(ctx, argv):
    """COMMAND COUNT"""
    return len(TABLE)


@_sub("info", -2, "Returns information about one, multiple or all commands.", "2.8.13",
      args=(string("command-name", optional=True, multiple=True),),
      tips=("nondeterministic_output_order",),
      complexity="O(N) where N is the number of commands to look up",
      history=(("7.0.0", "Allowed to be called with no argument to get info on all commands."),))
def command_info(ctx, argv):
    """COMMAND INFO [command-name [command-name ...]]"""
    if len(argv) == 2:
        return [c.info() for c in TABLE.values()]
    out = []
    for name in argv[2:]:
        cmd = _resolve(name)
        out.append(cmd.info() if cmd is not None else None)
    return out


@_sub("list", -2, "Returns a list of command names.", "7.0.0",
      args=(oneof("filterby", string("module-name", token="MODULE"),
                  string("category", token="ACLCAT"), pattern("pattern", token="PATTERN"),
                  token="FILTERBY", optional=True),),
      tips=("nondeterministic_output_order",),
      complexity="O(N) where N is the total number of Redis commands")
def command_list(ctx, argv):
    """COMMAND LIST [FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]

    As in Redis 7.0, subcommands are listed (by their ``container|sub`` names) after their
    container, and a filter tests each of them on its own: ``ACLCAT stream`` lists
    ``xgroup|create`` but not the ``xgroup`` container, which is only @slow."""
    if len(argv) == 2:
        keep = None
    elif len(argv) != 5 or argv[2].upper() != b"FILTERBY":
        raise CommandError(E.SYNTAX)
    else:
        kind, value = argv[3].upper(), argv[4]
        if kind == b"PATTERN":
            def keep(c):
                return glob_match(value, c.name.encode(), nocase=True)
        elif kind == b"ACLCAT":
            cat = value.decode("utf-8", "replace").lower()

            def keep(c):
                return cat in c.categories
        elif kind == b"MODULE":
            return []  # no modules are ever loaded
        else:
            raise CommandError(E.SYNTAX)
    return [c.name.encode() for c in every_command() if keep is None or keep(c)]


@_sub("docs", -2, "Returns documentary information about one, multiple or all commands.",
      "7.0.0", args=(string("command-name", optional=True, multiple=True),),
      tips=("nondeterministic_output_order",),
      complexity="O(N) where N is the number of commands to look up")
def command_docs(ctx, argv):
    """COMMAND DOCS [command-name [command-name ...]]"""
    if len(argv) == 2:
        cmds = list(TABLE.values())
    else:
        cmds = [c for c in (_resolve(n) for n in argv[2:]) if c is not None]
    return Map([(c.name.encode(), Map(_docs_map(c.docs()))) for c in cmds])


def _docs_map(pairs):
    out = []
    for k, v in pairs:
        if k == "arguments":
            v = [Map(_docs_map(a)) for a in v]
        elif k == "subcommands":
            v = Map([(name.encode(), Map(_docs_map(d))) for name, d in v])
        elif k in ("flags", "doc_flags"):
            # Sets in RESP3, as Redis 7.0 replies them (arrays in RESP2).
            v = SetReply([Simple(f) for f in v])
        elif isinstance(v, str):
            v = v.encode()
        out.append((k.encode(), v))
    return out


def _command_of(argv: list[bytes]):
    """The command a full command line runs, looked up as Redis's COMMAND GETKEYS does:
    by its first argument, then by its second when the first names a container (a
    ``container|sub`` name is not a command line, so it is not found)."""
    cmd = TABLE.get(argv[0].lower())
    if cmd is not None and cmd.subcommands and len(argv) > 1:
        cmd = cmd.subcommands.get(argv[1].lower())
    return cmd


def _keys_of_command_line(argv: list[bytes]):
    """The command of ``COMMAND GETKEYS[ANDFLAGS] <command line>`` and its key positions,
    checked in Redis's order: known command, has keys at all, valid argument count, some
    keys found."""
    inner = argv[2:]
    cmd = _command_of(inner)
    if cmd is None:
        raise CommandError("ERR Invalid command specified")
    if not (cmd.first_key or cmd.key_keyword or cmd.key_numkeys):
        raise CommandError("ERR The command has no key arguments")
    if not cmd.arity_ok(len(inner)):
        raise CommandError("ERR Invalid number of arguments specified for command")
    found = cmd.keys_and_flags(inner)
    if not found:
        raise CommandError("ERR Invalid arguments specified for command")
    return found


@_sub("getkeys", -4, "Extracts the key names from an arbitrary command.", "2.8.13",
      args=(string("command"), string("arg", optional=True, multiple=True)),
      complexity="O(N) where N is the number of arguments to the command")
def command_getkeys(ctx, argv):
    """COMMAND GETKEYS command [arg [arg ...]]

    Redis 7.0 wants the command and at least one argument (arity -4), so ``COMMAND
    GETKEYS ping`` is an arity error of COMMAND GETKEYS itself."""
    return [k for k, _ in _keys_of_command_line(argv)]


@_sub("getkeysandflags", -4, "Extracts the key names and access flags for an arbitrary "
      "command.", "7.0.0", args=(string("command"), string("arg", optional=True, multiple=True)),
      complexity="O(N) where N is the number of arguments to the command")
def command_getkeysandflags(ctx, argv):
    """COMMAND GETKEYSANDFLAGS command [arg [arg ...]]"""
    return [[k, SetReply([Simple(f) for f in flags.split()])]
            for k, flags in _keys_of_command_line(argv)]


@_sub("help", 2, "Returns helpful text about the different subcommands.", "5.0.0",
      complexity="O(1)")
def command_help(ctx, argv):
    """COMMAND HELP"""
    return [Simple(s) for s in (
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)", "    Return details about all Redis commands.",
        "COUNT", "    Return the total number of commands in this Redis server.",
        "LIST", "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>", "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        "HELP", "    Print this help.")]


# --- keyspace-wide -----------------------------------------------------------------------

@command("dbsize", 1, "readonly fast",
         acl="keyspace", tips="request_policy:all_shards response_policy:agg_sum", group="server",
         since="1.0.0",
         summary="Returns the number of keys in the database.", complexity="O(1)",
         pure=True)
def dbsize(ctx, argv):
    """DBSIZE

    O(1), as in Redis: keys past their TTL that nothing touched yet still count."""
    return len(ctx.db.data)


def _flush_mode(argv, name):
    if len(argv) > 2:
        raise CommandError(E.SYNTAX)
    if len(argv) == 2 and argv[1].upper() not in (b"ASYNC", b"SYNC"):
        raise CommandError(E.SYNTAX)


@command("flushdb", -1, "write",
         acl="keyspace dangerous", tips="request_policy:all_shards response_policy:all_succeeded",
         group="server", since="1.0.0",
         summary="Removes all keys from the current database.",
         complexity="O(N) where N is the number of keys in the selected database",
         args=(oneof("flush-type", token("ASYNC", since="4.0.0"), token("SYNC", since="6.2.0"),
                     optional=True),),
         history=(
             ("4.0.0", "Added the `ASYNC` flushing mode modifier."),
             ("6.2.0", "Added the `SYNC` flushing mode modifier."),
         ))
def flushdb(ctx, argv):
    """FLUSHDB [ASYNC | SYNC]"""
    _flush_mode(argv, "flushdb")
    ctx.keyspace.flushed()  # the tracking clients learn of any flush, of any database
    ctx.keyspace.dirty += ctx.db.flush()
    return OK


@command("flushall", -1, "write",
         acl="keyspace dangerous", tips="request_policy:all_shards response_policy:all_succeeded",
         group="server", since="1.0.0",
         summary="Removes all keys from all databases.",
         complexity="O(N) where N is the total number of keys in all databases",
         args=(oneof("flush-type", token("ASYNC", since="4.0.0"), token("SYNC", since="6.2.0"),
                     optional=True),),
         history=(
             ("4.0.0", "Added the `ASYNC` flushing mode modifier."),
             ("6.2.0", "Added the `SYNC` flushing mode modifier."),
         ))
def flushall(ctx, argv):
    """FLUSHALL [ASYNC | SYNC]"""
    _flush_mode(argv, "flushall")
    ctx.keyspace.dirty += ctx.keyspace.flush_all()
    return OK


@command("time", 1, "loading stale fast",
         tips="nondeterministic_output", group="server", since="2.6.0",
         summary="Returns the server time.", complexity="O(1)")
def time_(ctx, argv):
    """TIME"""
    us = time.time_ns() // 1000
    return [b"%d" % (us // 1_000_000), b"%d" % (us % 1_000_000)]


@command("lastsave", 1, "loading stale fast",
         acl="admin dangerous", tips="nondeterministic_output", group="server", since="1.0.0",
         summary="Returns the Unix timestamp of the last successful save to disk.",
         complexity="O(1)")
def lastsave(ctx, argv):
    """LASTSAVE"""
    return ctx.server.lastsave


def _saved(ctx) -> None:
    # streamd is in-memory only: a save succeeds at once without writing anything.
    ctx.server.lastsave = int(time.time())
    ctx.keyspace.dirty = 0


@command("save", 1, "admin noscript no_async_loading no_multi", group="server", since="1.0.0",
         summary="Synchronously saves the database(s) to disk.",
         complexity="O(N) where N is the total number of keys in all databases")
def save(ctx, argv):
    """SAVE"""
    _saved(ctx)
    return OK


_BGSAVE_STARTED = Simple(b"Background saving started")
_AOF_REWRITE_STARTED = Simple(b"Background append only file rewriting started")
_REPLICAOF_ARGS = (oneof("args", block("host-port", string("host"), integer("port")),
                         block("no-one", token("NO"), token("ONE"))),)


@command("bgsave", -1, "admin noscript no_async_loading", group="server", since="1.0.0",
         summary="Asynchronously saves the database(s) to disk.", complexity="O(1)",
         args=(token("SCHEDULE", optional=True, since="3.2.2"),),
         history=(
             ("3.2.2", "Added the `SCHEDULE` option."),
         ))
def bgsave(ctx, argv):
    """BGSAVE [SCHEDULE]"""
    if len(argv) > 2 or (len(argv) == 2 and argv[1].upper() != b"SCHEDULE"):
        raise CommandError(E.SYNTAX)
    _saved(ctx)  # no child to wait for: LASTSAVE moves at once
    return _BGSAVE_STARTED


@command("bgrewriteaof", 1, "admin noscript no_async_loading", group="server", since="1.0.0",
         summary="Asynchronously rewrites the append-only file to disk.", complexity="O(1)")
def bgrewriteaof(ctx, argv):
    """BGREWRITEAOF"""
    return _AOF_REWRITE_STARTED


def _replicaof(ctx, argv):
    host, port = argv[1], argv[2]
    if host.upper() == b"NO" and port.upper() == b"ONE":
        return OK  # already a master
    if not 0 <= parse_int(port, E.INVALID_MASTER_PORT) <= 65535:
        raise CommandError(E.INVALID_MASTER_PORT)
    raise CommandError(E.NO_REPLICATION)


@command("replicaof", 3, "admin noscript stale no_async_loading", group="server",
         since="5.0.0",
         summary="Configures a server as replica of another, or promotes it to a master.",
         complexity="O(1)", args=_REPLICAOF_ARGS)
def replicaof(ctx, argv):
    """REPLICAOF <host port | NO ONE>"""
    return _replicaof(ctx, argv)


@command("failover", -1, "admin noscript stale", group="server", since="6.2.0",
         summary="Starts a coordinated failover from a server to one of its replicas.",
         complexity="O(1)",
         args=(block("target", string("host"), integer("port"),
                     token("FORCE", optional=True), token="TO", optional=True),
               token("ABORT", optional=True),
               integer("milliseconds", token="TIMEOUT", optional=True)))
def failover(ctx, argv):
    """FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]"""
    if len(argv) == 2 and argv[1].upper() == b"ABORT":
        raise CommandError(E.NO_FAILOVER)
    # Parsed as Redis parses it, then refused: a master without replicas cannot hand over.
    timeout = 0
    host = force = False
    i = 1
    while i < len(argv):
        word = argv[i].upper()
        if word == b"TIMEOUT" and i + 1 < len(argv) and timeout == 0:
            timeout = parse_int(argv[i + 1])
            if timeout <= 0:
                raise CommandError(E.FAILOVER_TIMEOUT)
            i += 2
        elif word == b"TO" and i + 2 < len(argv) and not host:
            parse_int(argv[i + 2])
            host = True
            i += 3
        elif word == b"FORCE" and not force:
            force = True
            i += 1
        else:
            raise CommandError(E.SYNTAX)
    raise CommandError(E.FAILOVER_NO_REPLICAS)


@command("slaveof", 3, "admin noscript stale no_async_loading", group="server",
         since="1.0.0",
         summary="Sets a Redis server as a replica of another, or promotes it to being a "
                 "master.",
         complexity="O(1)", args=_REPLICAOF_ARGS, deprecated=("5.0.0", "`REPLICAOF`"))
def slaveof(ctx, argv):
    """SLAVEOF <host port | NO ONE>"""
    return _replicaof(ctx, argv)


@command("shutdown", -1, "admin noscript loading stale no_multi allow_busy", group="server",
         since="1.0.0",
         summary="Synchronously saves the database(s) to disk and shuts down the Redis server.",
         complexity="O(N) when saving, where N is the total number of keys in all databases "
                    "when saving data, otherwise O(1)",
         args=(oneof("save-selector", token("NOSAVE"), token("SAVE"), optional=True),
               token("NOW", optional=True, since="7.0.0"),
               token("FORCE", optional=True, since="7.0.0"),
               token("ABORT", optional=True, since="7.0.0")),
         history=(
             ("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers."),
         ))
def shutdown(ctx, argv):
    """SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]"""
    opts = {a.upper() for a in argv[1:]}
    if not opts <= {b"NOSAVE", b"SAVE", b"NOW", b"FORCE", b"ABORT"}:
        raise CommandError(E.SYNTAX)
    if b"ABORT" in opts:
        raise CommandError("ERR No shutdown in progress.")
    busy = ctx.server.busy_script
    if busy is not None:
        # A script past busy-reply-threshold: only NOSAVE may stop the server, and it
        # does so at once, ending the script (whose caller gets no reply).
        if b"NOSAVE" not in opts:
            raise CommandError(busy.busy_error)
        busy.killed = True
        ctx.server.shutdown("SHUTDOWN")
        return NO_REPLY
    # Redis closes the connection without a reply on success.
    ctx.server.loop.call_soon(ctx.server.shutdown, "SHUTDOWN")
    ctx.close_after_reply()
    return NO_REPLY


@command("monitor", 1, "admin noscript loading stale", group="server", since="1.0.0",
         summary="Listens for all requests received by the server in real-time.")
def monitor(ctx, argv):
    """MONITOR"""
    if not ctx.blocking_allowed:  # inside EXEC: Redis's CLIENT_DENY_BLOCKING
        raise CommandError("ERR MONITOR isn't allowed for DENY BLOCKING client")
    if ctx.monitor:  # Redis ignores it, without a reply
        return NO_REPLY
    ctx.server.add_monitor(ctx)
    return OK


# --- MODULE ------------------------------------------------------------------------------
# streamd has no modules and cannot load Redis's (they are C shared objects built against
# its module API). MODULE LIST answers as a server without modules, which is what clients
# and tools that probe for RediSearch, RedisJSON ... ask before they use them; LOAD, LOADEX
# and UNLOAD answer as Redis does when the load or unload fails.

command("module", -2, "", group="server", since="4.0.0",
        summary="A container for module commands.", complexity="Depends on subcommand.",
        container=True)


@command("module|list", 2, "admin noscript", tips="nondeterministic_output_order",
         group="server", since="4.0.0", summary="Returns all loaded modules.",
         complexity="O(N) where N is the number of loaded modules.")
def module_list(ctx, argv):
    """MODULE LIST"""
    return []


@command("module|load", -3, "admin noscript no_async_loading", group="server",
         since="4.0.0", summary="Loads a module.", complexity="O(1)",
         args=(string("path"), string("arg", optional=True, multiple=True)),
         protected="enable-module-command")
def module_load(ctx, argv):
    """MODULE LOAD path [arg [arg ...]]"""
    raise CommandError(E.MODULE_LOAD_FAILED)


@command("module|loadex", -3, "admin noscript no_async_loading", group="server",
         since="7.0.0", summary="Loads a module using extended parameters.",
         complexity="O(1)",
         args=(string("path"),
               block("configs", string("name"), string("value"), token="CONFIG",
                     optional=True, multiple=True, multiple_token=True),
               block("args", string("arg"), token="ARGS", optional=True, multiple=True)),
         protected="enable-module-command")
def module_loadex(ctx, argv):
    """MODULE LOADEX path [CONFIG name value [CONFIG name value ...]] [ARGS arg [arg ...]]

    Redis 7.0 reports the failed load whatever follows the path."""
    raise CommandError(E.MODULE_LOAD_FAILED)


@command("module|unload", 3, "admin noscript no_async_loading", group="server",
         since="4.0.0", summary="Unloads a module.", complexity="O(1)",
         args=(string("name"),), protected="enable-module-command")
def module_unload(ctx, argv):
    """MODULE UNLOAD name"""
    raise CommandError("ERR Error unloading module: no such module with that name")


help_command("module", "server", "5.0.0", (
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST", "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and "
    "optional arguments.",
    "UNLOAD <name>", "    Unload a module.",
    "HELP", "    Prints this help."))
