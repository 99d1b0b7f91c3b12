"""Idempotent-production commands: XCFGSET, XIDMPRECORD, and the streamd extension XIDMP.

The IDMP data rules (records, eviction, expiry, IDMPAUTO) live in ``streamd.idmp``; XADD's
IDMP/IDMPAUTO options are parsed by the stream family and call ``IdmpState.lookup`` /
``record``. This module parses, validates in Redis's order, and applies.
"""

from __future__ import annotations

from ..idmp import IdmpConflict, IdmpState
from ..idmp.state import DURATION_RANGE, MAXSIZE_RANGE
from ..protocol.replies import OK, Map, Simple
from ..store.stream import Stream
from ..store.streamid import parse_id
from . import errors as E
from .args import parse_int_in
from .errors import CommandError
from .streams import new_idmp_state  # configs copied at stream creation, one definition
from .table import command, integer, key, oneof, string, token


# --- shared helpers ------------------------------------------------------------------------

def idmp_state(ctx, stream: Stream) -> IdmpState:
    """``stream.idmp``; a stream made without one (every creation site should call
    ``streams.new_stream``) gets one now, with the current configs."""
    state = stream.idmp
    if state is None:
        state = stream.idmp = new_idmp_state(ctx)
    return state


def _existing_stream(ctx, k: bytes) -> Stream:
    """The stream at ``k``: ``ERR no such key`` if absent, WRONGTYPE for another type."""
    value = ctx.db.get(k)
    if value is None:
        raise CommandError(E.NO_SUCH_KEY)
    if not isinstance(value, Stream):
        raise CommandError(E.WRONGTYPE)
    return value


def _parse_cfg(argv: list[bytes], pos: int, dur_tok: bytes, max_tok: bytes):
    """``[<dur_tok> d] [<max_tok> m]`` from ``argv[pos:]`` in XCFGSET's order of checks:
    per token the repeat check, then the integer parse, then the range; a token without a
    value or any other word is a syntax error; nothing at all is an error of its own."""
    duration = maxsize = None
    argc = len(argv)
    while pos < argc:
        word = argv[pos].upper()
        if word == dur_tok and pos + 1 < argc:
            if duration is not None:
                raise CommandError(E.IDMP_CFG_REPEATED.format(dur_tok.decode()))
            duration = parse_int_in(argv[pos + 1], *DURATION_RANGE, range_error=(
                E.IDMP_CFG_DURATION_RANGE.format(dur_tok.decode())))
        elif word == max_tok and pos + 1 < argc:
            if maxsize is not None:
                raise CommandError(E.IDMP_CFG_REPEATED.format(max_tok.decode()))
            maxsize = parse_int_in(argv[pos + 1], *MAXSIZE_RANGE, range_error=(
                E.IDMP_CFG_MAXSIZE_RANGE.format(max_tok.decode())))
        else:
            raise CommandError(E.SYNTAX)
        pos += 2
    if duration is None and maxsize is None:
        raise CommandError(E.IDMP_CFG_NONE)
    return duration, maxsize


def _configure(ctx, k: bytes, stream: Stream, duration, maxsize):
    # Only a real change drops the records and counts as a write (WATCH, dirty): setting
    # the current value again is a no-op in Redis, history included.
    if idmp_state(ctx, stream).configure(duration, maxsize):
        ctx.db.modified(k)
    return OK


# --- XCFGSET -------------------------------------------------------------------------------

@command("XCFGSET", -2, "write fast", (1, 1, 1),
         key_flags="RW update", group="stream", since="8.6.0",
         summary="Sets the IDMP configuration parameters for a stream.", complexity="O(1)",
         args=(key(),
               integer("idmp-duration", token="IDMP-DURATION", optional=True),
               integer("idmp-maxsize", token="IDMP-MAXSIZE", optional=True)))
def xcfgset(ctx, argv):
    """XCFGSET key [IDMP-DURATION duration] [IDMP-MAXSIZE maxsize]

    Sets how long (seconds) and how many per producer the stream keeps idempotency
    records. Any value that differs from the current one clears all producers' records;
    iids-added and iids-duplicates are kept. The key must exist (checked first)."""
    stream = _existing_stream(ctx, argv[1])
    duration, maxsize = _parse_cfg(argv, 2, b"IDMP-DURATION", b"IDMP-MAXSIZE")
    return _configure(ctx, argv[1], stream, duration, maxsize)


# --- XIDMPRECORD ---------------------------------------------------------------------------

@command("XIDMPRECORD", 5, "write denyoom fast", (1, 1, 1),
         key_flags="RW update", group="stream", since="8.8.0",
         summary="An internal command for setting IDMP metadata on an existing stream "
                 "message.",
         complexity="O(1)",
         args=(key(), string("pid"), string("iid"), string("stream-id")))
def xidmprecord(ctx, argv):
    """XIDMPRECORD key pid iid stream-id

    Records that producer ``pid`` produced entry ``stream-id`` under idempotent ID
    ``iid``, as the newest record of that producer (MAXSIZE and expiry apply as to any
    record; the lifetime iids-added counter is not changed). ``stream-id`` must be a live
    entry. Replaying the same record again is OK; the same pair with a different ID is an
    error.

    Order of checks (not pinned upstream beyond the missing-entry text): key, empty pid,
    empty iid, ID syntax, entry exists, conflicting record."""
    k, pid, iid = argv[1], argv[2], argv[3]
    stream = _existing_stream(ctx, k)
    if not pid:
        raise CommandError(E.IDMP_RECORD_EMPTY_PID)
    if not iid:
        raise CommandError(E.IDMP_RECORD_EMPTY_IID)
    sid = parse_id(argv[4], strict=True)
    if sid is None:
        raise CommandError(E.STREAM_INVALID_ID)
    if sid not in stream:
        raise CommandError(E.IDMP_RECORD_NO_ENTRY)
    try:
        added = idmp_state(ctx, stream).restore(pid, iid, sid)
    except IdmpConflict:
        raise CommandError(E.IDMP_RECORD_CONFLICT) from None
    if added:
        ctx.db.modified(k)
    return OK


# --- XIDMP (streamd extension) ---------------------------------------------------------------

command("XIDMP", -2, group="stream", since="8.6.0", container=True,
        summary="A container for IDMP configuration commands. streamd extension: not "
                "part of Redis (which has only XCFGSET and the idmp fields of XINFO STREAM).")

_CFG_FIELDS = {b"DURATION": "duration", b"MAXSIZE": "maxsize"}


@command("XIDMP|CFGGET", -3, "readonly fast", (2, 2, 1), group="stream", since="8.6.0",
         summary="Returns a stream's IDMP configuration (all values, or the named ones). "
                 "streamd extension, not in Redis.",
         complexity="O(1)",
         args=(key(), oneof("parameter", token("DURATION"), token("MAXSIZE"),
                            optional=True, multiple=True)))
def xidmp_cfgget(ctx, argv):
    """XIDMP CFGGET key [DURATION] [MAXSIZE]

    A map from ``duration`` (seconds) and/or ``maxsize`` (records per producer) to the
    stream's values: both when no name is given, else the named ones in the order first
    named (a repeated name appears once). RESP2: a flat name/value array."""
    stream = _existing_stream(ctx, argv[2])
    names = []
    for word in argv[3:]:
        name = _CFG_FIELDS.get(word.upper())
        if name is None:
            raise CommandError(E.SYNTAX)
        if name not in names:
            names.append(name)
    state = idmp_state(ctx, stream)
    return Map([(n, getattr(state, n)) for n in (names or _CFG_FIELDS.values())])


@command("XIDMP|CFGSET", -3, "write fast", (2, 2, 1), key_flags="RW update", group="stream",
         since="8.6.0",
         summary="Sets a stream's IDMP configuration; same rules as XCFGSET. streamd "
                 "extension, not in Redis.",
         complexity="O(1)",
         args=(key(), integer("duration", token="DURATION", optional=True),
               integer("maxsize", token="MAXSIZE", optional=True)))
def xidmp_cfgset(ctx, argv):
    """XIDMP CFGSET key [DURATION duration] [MAXSIZE maxsize]

    XCFGSET with the pre-release token names: same checks, errors (naming DURATION /
    MAXSIZE) and effect (a changed value clears all records, counters kept)."""
    stream = _existing_stream(ctx, argv[2])
    duration, maxsize = _parse_cfg(argv, 3, b"DURATION", b"MAXSIZE")
    return _configure(ctx, argv[2], stream, duration, maxsize)


XIDMP_HELP = (
    "XIDMP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CFGGET <key> [DURATION] [MAXSIZE]",
    "    Show the stream's IDMP duration (seconds) and/or maxsize (per producer).",
    "CFGSET <key> [DURATION <duration>] [MAXSIZE <maxsize>]",
    "    Set them, as XCFGSET does (a changed value clears the IDMP records).",
    "HELP",
    "    Print this help.",
)


@command("XIDMP|HELP", 2, "loading stale", group="stream", since="8.6.0",
         summary="Returns helpful text about the XIDMP subcommands. streamd extension.",
         complexity="O(1)")
def xidmp_help(ctx, argv):
    """XIDMP HELP"""
    return [Simple(line) for line in XIDMP_HELP]
