"""HOTKEYS (Redis 8.6): a tracking session of the keys commands spend their CPU time and
network bytes on. The session itself (``server/hotkeys.py``) is the server's; these are
its commands, their parsing and Redis's error texts. streamd has no cluster mode, so SLOTS
is refused and the session covers every slot.
"""

from __future__ import annotations

from ..protocol.replies import OK, Map
from .args import parse_int_in
from .errors import CommandError
from .table import block, command, help_command, integer, token

METRICS_MAX = 2  # CPU and NET
_INT_MAX = 2**31 - 1


command("hotkeys", -2, "slow", group="server", since="8.6.0",
        summary="A container for hotkeys tracking commands.",
        complexity="Depends on subcommand.", container=True)


@command("hotkeys|start", -2, "admin noscript", group="server", since="8.6.0",
         summary="Starts hotkeys tracking.", complexity="O(1)",
         args=(block("metrics", integer("count"), token("CPU", optional=True),
                     token("NET", optional=True), token="METRICS"),
               integer("k", token="COUNT", optional=True),
               integer("seconds", token="DURATION", optional=True),
               integer("ratio", token="SAMPLE", optional=True),
               block("slots", integer("count"), integer("slot", multiple=True),
                     token="SLOTS", optional=True)))
def hotkeys_start(ctx, argv):
    """HOTKEYS START METRICS count [CPU] [NET] [COUNT k] [DURATION seconds] [SAMPLE ratio]
    [SLOTS count slot [slot ...]]"""
    srv = ctx.server
    if srv.hotkeys_active():
        raise CommandError("ERR hotkey tracking session already in progress")
    if len(argv) < 4 or argv[2].upper() != b"METRICS":
        raise CommandError("ERR METRICS parameter is required")
    wanted = parse_int_in(argv[3], 1, METRICS_MAX,
                     f"ERR METRICS count must be > 0 and <= {METRICS_MAX}")
    # The count says how many words follow as metrics; a word that names none still counts.
    cpu = net = False
    j = 4
    while j < len(argv) and j - 4 < wanted:
        word = argv[j].upper()
        if word == b"CPU":
            if cpu:
                raise CommandError("ERR METRICS CPU defined more than once!")
            cpu = True
        elif word == b"NET":
            if net:
                raise CommandError("ERR METRICS NET defined more than once!")
            net = True
        j += 1
    if j - 4 != wanted:
        raise CommandError("ERR METRICS count does not match number of metric types provided")
    if not (cpu or net):
        raise CommandError("ERR METRICS no valid metrics passed. Supported: CPU|NET")
    count, duration, ratio = 10, 0, 1
    while j < len(argv):
        word = argv[j].upper()
        more = j + 1 < len(argv)
        if more and word == b"COUNT":
            count = parse_int_in(argv[j + 1], 1, 64, "ERR COUNT must be between 1 and 64")
        elif more and word == b"DURATION":
            duration = 1000 * parse_int_in(argv[j + 1], 1, 1_000_000,
                                      "ERR DURATION must be between 1 and 1000000")
        elif more and word == b"SAMPLE":
            ratio = parse_int_in(argv[j + 1], 1, _INT_MAX, "ERR SAMPLE ratio must be positive")
        elif more and word == b"SLOTS":
            raise CommandError("ERR SLOTS parameter cannot be used in non-cluster mode")
        else:
            raise CommandError("ERR syntax error")
        j += 2
    srv.start_hotkeys(cpu, net, count, duration, ratio)
    return OK


@command("hotkeys|stop", 2, "admin noscript", group="server", since="8.6.0",
         summary="Stops hotkeys tracking.", complexity="O(1)")
def hotkeys_stop(ctx, argv):
    """HOTKEYS STOP

    The results stay for HOTKEYS GET; a null reply when no session is active."""
    srv = ctx.server
    if not srv.hotkeys_active():
        return None
    srv.stop_hotkeys()
    return OK


@command("hotkeys|get", 2, "admin noscript", group="server", since="8.6.0",
         summary="Returns lists of top K hotkeys depending on metrics chosen in HOTKEYS "
                 "START command.",
         complexity="O(K) where K is the number of hotkeys returned.")
def hotkeys_get(ctx, argv):
    """HOTKEYS GET

    An array of one map (a cluster's nodes each answer one), or a null reply when there
    is no session."""
    session = ctx.server.hotkeys
    if session is None:
        return None
    return [Map([(name.encode(), value) for name, value in session.report(ctx.now_ms)])]


@command("hotkeys|reset", 2, "admin noscript", group="server", since="8.6.0",
         summary="Release the resources used for hotkey tracking.", complexity="O(1)")
def hotkeys_reset(ctx, argv):
    """HOTKEYS RESET"""
    srv = ctx.server
    if srv.hotkeys_active():
        raise CommandError("ERR hotkey tracking session in progress, stop tracking first")
    srv.hotkeys = None
    return OK


help_command("hotkeys", "server", "8.6.1", (
    "HOTKEYS <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "START <METRICS count [CPU] [NET]> [COUNT k] [DURATION duration] [SAMPLE ratio] "
    "[SLOTS count slot...]",
    "    Starts hotkeys tracking with specified metrics.",
    "    * METRICS count [CPU] [NET]",
    "        Specify count of metrics and choose amongst:",
    "        - CPU: Track hotkeys by CPU time percentage",
    "        - NET: Track hotkeys by network bytes percentage",
    "    * COUNT k",
    "        Specifies the value of K for the top-K hotkeys tracking. Default: 10",
    "    * DURATION duration",
    "        Specifies tracking duration in seconds. 0 means tracking will continue until "
    "manually stopped. Default: 0",
    "    * SAMPLE ratio",
    "        Keys are tracked with probability 1/ratio. Default: 1 (tracks every key)",
    "    * SLOTS count slot...",
    "        Specify which slots to track keys from. Only available in cluster mode. "
    "Default: empty (track all slots)",
    "STOP",
    "    Stop hotkeys tracking. Results are still available via GET",
    "GET",
    "    Get results from hotkeys tracking.",
    "RESET",
    "    Reset memory used for hotkeys tracking. Tracking must have been stopped.",
    "    Results will no longer be available after this command.",
    "HELP",
    "    Prints this help."), summary="Return helpful text about HOTKEYS command parameters.")
