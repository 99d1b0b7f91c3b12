"""Stream commands without consumer groups: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XDELEX,
XTRIM, XSETID, XREAD and XINFO STREAM / HELP.

Each handler validates in Redis's order (it decides which error a client sees when several
things are wrong), then changes the store, then reports the write (``db.modified``) and
wakes readers (``db.signal_ready``). Data rules (nodes, trimming, tombstones) live in
``streamd.store.stream``; consumer-group rules in ``streamd.store.groups``.
"""

from __future__ import annotations

from ..idmp import IdmpState, auto_iid
from ..protocol.replies import NULL_ARRAY, OK, Entries, Map
from ..store.groups import drop_references, is_referenced
from ..store.keyspace import EV_STREAM
from ..store.stream import LISTPACK_MAX_SIZE, Stream, entry_too_large, run_len
from ..store.streamid import MAX_ID, SMALL_SEQ, U64, auto_seq_ms, format_id, parse_id
from . import errors as E
from .args import parse_int, parse_timeout_ms
from .blocking import Block
from .errors import CommandError
from .table import (batch_handler, block, command, help_command, integer, key, oneof, string,
                    token)

KEEPREF, DELREF, ACKED = b"KEEPREF", b"DELREF", b"ACKED"
_STRATEGIES = (KEEPREF, DELREF, ACKED)
TRIM_LIMIT_MAX = 1_000_000  # cap of the default LIMIT of `~` trimming (100 * node entries)


# --- shared helpers ------------------------------------------------------------------------

def get_stream(db, k: bytes) -> Stream | None:
    """The stream at ``k``, None if absent; WRONGTYPE for any other type."""
    value = db.get(k)
    if value is None or type(value) is Stream:
        return value
    raise CommandError(E.WRONGTYPE)


def read_stream(db, k: bytes) -> Stream | None:
    """``get_stream`` for the commands Redis counts as reads (keyspace hits / misses)."""
    value = db.read(k)
    if value is None or type(value) is Stream:
        return value
    raise CommandError(E.WRONGTYPE)


def strict_id(arg: bytes) -> int:
    """An ID where ``-`` and ``+`` are not allowed; incomplete IDs get seq 0."""
    ms, dash, seq = arg.partition(b"-")
    if dash and ms.isdigit() and seq.isdigit() and len(ms) < 20 and len(seq) < 20:
        return (int(ms) << 64) | int(seq)  # "ms-seq" as replies show it: one call less
    sid = parse_id(arg, strict=True)
    if sid is None:
        raise CommandError(E.STREAM_INVALID_ID)
    return sid


def interval_id(arg: bytes, *, end: bool) -> tuple[int, bool]:
    """A range bound: (id, exclusive). ``(`` marks an exclusive bound whose rest is strict."""
    if len(arg) == 1:  # "-" and "+", the most common bounds, without parse_id's detour
        if arg == b"+":
            return MAX_ID, False
        if arg == b"-":
            return 0, False
    missing_seq = U64 if end else 0
    if len(arg) > 1 and arg[:1] == b"(":
        sid = parse_id(arg[1:], strict=True, missing_seq=missing_seq)
        exclusive = True
    else:
        sid = parse_id(arg, missing_seq=missing_seq)
        exclusive = False
    if sid is None:
        raise CommandError(E.STREAM_INVALID_ID)
    return sid, exclusive


def entry_reply(sid: int, fields: list) -> list:
    """One entry as every stream reply shows it: [id, [field, value, ...]]."""
    return [format_id(sid), fields]


def entries_reply(pairs) -> Entries:
    """``(id, fields)`` pairs as the entries array of a stream read."""
    return Entries([(format_id(sid), f) for sid, f in pairs])


def runs_reply(runs: list) -> Entries:
    """The runs of ``Stream.runs`` as the entries array of a stream read."""
    if len(runs) == 1:  # one node's worth (most reads): its count without sum and map
        run = runs[0]
        return Entries(runs, run[6] - run[5] if len(run) == 9 else len(run[0]))
    return Entries(runs, sum(map(run_len, runs)))


def default_trim_limit(ctx) -> int:
    """LIMIT used by `~` trimming when none is given: 100 nodes' worth, within bounds."""
    limit = 100 * ctx.config["stream-node-max-entries"]
    if limit <= 0:
        return 10000
    return min(limit, TRIM_LIMIT_MAX)


def strategy_hooks(s: Stream, strategy: bytes) -> tuple:
    """``Stream.trim``'s ``(keep, on_delete)`` for a KEEPREF / DELREF / ACKED strategy."""
    if strategy == ACKED:
        return lambda sid: is_referenced(s, sid), None
    if strategy == DELREF:
        return None, lambda sid: drop_references(s, sid)
    return None, None


def new_idmp_state(ctx):
    """A fresh IDMP state with the server's current defaults (taken at stream creation)."""
    duration = ctx.config["stream-idmp-duration"]
    maxsize = ctx.config["stream-idmp-maxsize"]
    registry = getattr(ctx.keyspace, "idmp", None)
    if registry is not None:
        return registry.new_state(duration, maxsize)
    return IdmpState(duration, maxsize)


def new_stream(ctx) -> Stream:
    """An empty stream as XADD creates it: IDMP settings are copied from the config now."""
    s = Stream()
    s.idmp = new_idmp_state(ctx)
    return s


# --- XADD / XTRIM option parsing -----------------------------------------------------------

class AddTrimArgs:
    """Options shared by XADD and XTRIM, parsed in the order Redis's parser uses.

    Defaults live on the class and options that come from argv are stored as positions,
    so the common XADD shapes share one constant instance each (``_PLAIN_XADD``,
    ``_IDMP_XADD``, ``_IDMPAUTO_XADD``) and an instance only stores the options it was given.
    """

    maxlen: int | None = None  # MAXLEN threshold
    minid: int | None = None  # MINID threshold
    trims = False  # MAXLEN or MINID given
    approx = False  # `~` given
    limit = 0  # effective LIMIT (0 = none) once parsing is finished
    limit_given = False
    strategy = KEEPREF  # deletion strategy of the trimming
    nomkstream = False
    idmp = False  # IDMP or IDMPAUTO given
    idmp_pos = 0  # argv index of the IDMP / IDMPAUTO pid (the IDMP iid follows it)
    idmp_auto = False
    id_pos = 0  # argv index of the ID (XADD)
    id_arg = b""
    trim_arg_pos = 0  # argv index of the threshold


def _shape(**options) -> AddTrimArgs:
    a = AddTrimArgs()
    for name, value in options.items():
        setattr(a, name, value)
    return a


# The shapes XADD takes on almost every call, shared and never mutated: no per-call parse.
_PLAIN_XADD = _shape(id_pos=2, id_arg=b"*")  # XADD key * field value ...
_IDMP_XADD = _shape(idmp=True, idmp_pos=3, id_pos=5, id_arg=b"*")  # ... IDMP pid iid * ...
_IDMPAUTO_XADD = _shape(idmp=True, idmp_auto=True, idmp_pos=3, id_pos=4,
                        id_arg=b"*")  # ... IDMPAUTO pid * ...


def parse_add_trim(ctx, argv: list[bytes], xadd: bool) -> AddTrimArgs:
    a = AddTrimArgs()
    n = len(argv)
    strategy_given = False
    i = 2
    while i < n:
        more = n - 1 - i
        opt = argv[i]
        if xadd and (opt == b"*" or opt[:2] == b"*\0"):  # Redis compares C strings
            a.id_pos, a.id_arg = i, b"*"
            break
        up = opt.upper()
        if (up == b"MAXLEN" or up == b"MINID") and more:
            if a.trims:
                raise CommandError(E.STREAM_MAXLEN_AND_MINID)
            a.approx = False
            nxt = argv[i + 1]
            if more >= 2 and nxt == b"~":
                a.approx = True
                i += 1
            elif more >= 2 and nxt == b"=":
                i += 1
            i += 1
            if up == b"MAXLEN":
                maxlen = parse_int(argv[i])
                if maxlen < 0:
                    raise CommandError(E.STREAM_MAXLEN_NEGATIVE)
                a.maxlen = maxlen
            else:
                a.minid = strict_id(argv[i])
            a.trims = True
            a.trim_arg_pos = i
        elif up == b"LIMIT" and more:
            i += 1
            a.limit = parse_int(argv[i])
            if a.limit < 0:
                raise CommandError(E.STREAM_LIMIT_NEGATIVE)
            a.limit_given = True
        elif up in _STRATEGIES and not strategy_given:
            a.strategy = up
            strategy_given = True
        elif xadd and up == b"NOMKSTREAM":
            a.nomkstream = True
        elif xadd and up == b"IDMPAUTO" and more:
            if a.idmp:
                raise CommandError(E.STREAM_IDMP_TWICE)
            i += 1
            if not argv[i]:
                raise CommandError(E.STREAM_IDMPAUTO_EMPTY_PID)
            a.idmp_pos, a.idmp_auto, a.idmp = i, True, True
        elif xadd and up == b"IDMP" and more >= 2:
            if a.idmp:
                raise CommandError(E.STREAM_IDMP_TWICE)
            if not argv[i + 1]:
                raise CommandError(E.STREAM_IDMP_EMPTY_PID)
            if not argv[i + 2]:
                raise CommandError(E.STREAM_IDMP_EMPTY_IID)
            a.idmp_pos, a.idmp = i + 1, True
            i += 2
        elif xadd:
            # Anything else must be the ID; a bad one is reported as an invalid ID.
            if parse_id(opt, strict=True, allow_auto_seq=True) is None:
                raise CommandError(E.STREAM_INVALID_ID)
            if a.idmp and opt[:1] != b"*":
                raise CommandError(E.STREAM_IDMP_EXPLICIT_ID)
            a.id_pos, a.id_arg = i, opt
            break
        else:
            raise CommandError(E.SYNTAX)
        i += 1
    if xadd and not a.id_pos:
        a.id_pos = n  # options ran to the end: no ID, no fields (arity error below)
    if a.limit and not a.trims:
        raise CommandError(E.STREAM_LIMIT_WITHOUT_STRATEGY)
    if not xadd and not a.trims:
        raise CommandError(E.STREAM_XTRIM_NO_STRATEGY)
    if a.limit_given:
        if not a.approx:
            raise CommandError(E.STREAM_LIMIT_WITHOUT_APPROX)
    elif a.approx:
        a.limit = default_trim_limit(ctx)
    else:
        a.limit = 0  # exact trimming is never limited
    return a


def _idmp_only(argv: list[bytes], opt: bytes) -> AddTrimArgs | None:
    """The options of ``XADD key IDMP pid iid * ...`` or ``XADD key IDMPAUTO pid * ...``
    (non-empty pid/iid, nothing else), the shape idempotent producers send on every call;
    None for anything else, which the full parser handles (and reports)."""
    n = len(argv)
    if n >= 8 and argv[5] == b"*" and argv[3] and argv[4] and opt.upper() == b"IDMP":
        return _IDMP_XADD
    if n >= 7 and argv[4] == b"*" and argv[3] and opt.upper() == b"IDMPAUTO":
        return _IDMPAUTO_XADD
    return None


def _trim(ctx, s: Stream, a: AddTrimArgs) -> int:
    keep, on_delete = strategy_hooks(s, a.strategy)
    return s.trim(maxlen=a.maxlen, minid=a.minid, approx=a.approx, limit=a.limit, keep=keep,
                  on_delete=on_delete)


# --- XADD ----------------------------------------------------------------------------------

def _trim_doc(optional: bool):
    return block(
        "trim",
        oneof("strategy", token("MAXLEN"), token("MINID", since="6.2.0")),
        oneof("operator", token("=", "equal"), token("~", "approximately"), optional=True),
        string("threshold"),
        integer("count", token="LIMIT", optional=True, since="6.2.0"),
        optional=optional)


_STRATEGY_DOC = oneof("condition", token("KEEPREF"), token("DELREF"), token("ACKED"),
                      optional=True, since="8.2.0")


@command("XADD", -5, "write denyoom fast", (1, 1, 1),
         tips="nondeterministic_output",
         key_flags="RW update",
         key_notes="UPDATE instead of INSERT because of the optional trimming feature",
         group="stream", since="5.0.0",
         summary="Appends a new message to a stream. Creates the key if it doesn't exist.",
         complexity="O(1) when adding a new entry, O(N) when trimming where N being the "
                    "number of entries evicted.",
         args=(key(), token("NOMKSTREAM", optional=True, since="6.2.0"), _STRATEGY_DOC,
               oneof("idmp",
                     block("idmpauto-with-pid", string("pid"), token="IDMPAUTO"),
                     block("idmp-with-pid-iid", string("pid"), string("iid"), token="IDMP"),
                     optional=True, since="8.6.0"),
               _trim_doc(optional=True),
               oneof("id-selector", token("*", "auto-id"), string("id")),
               block("data", string("field"), string("value"), multiple=True)),
         history=(
             ("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."),
             ("7.0.0", "Added support for the `<ms>-*` explicit ID form."),
         ))
def xadd(ctx, argv):
    """XADD key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] [IDMPAUTO pid | IDMP pid iid]
    [<MAXLEN | MINID> [= | ~] threshold [LIMIT count]] <* | id> field value
    [field value ...]

    Stages in Redis's order: parse, validate, look up or create, IDMP check, append, reply,
    trim, wake readers. Reply: the new ID; null with NOMKSTREAM on a missing key; the
    original ID for an IDMP duplicate."""
    opt = argv[2]
    if opt == b"*":
        a = _PLAIN_XADD
    else:
        a = _idmp_only(argv, opt) or parse_add_trim(ctx, argv, xadd=True)
    nvals = len(argv) - a.id_pos - 1
    if nvals < 2 or nvals % 2:
        raise CommandError(E.wrong_arity("xadd"))
    requested = parse_id(a.id_arg, strict=True, allow_auto_seq=True) if a.id_arg != b"*" \
        else None
    if requested == 0:  # explicit 0-0: refused before the key can be created
        raise CommandError(E.STREAM_XADD_ZERO)
    db, k = ctx.db, argv[1]
    s = get_stream(db, k)
    created = False
    if s is None:
        if a.nomkstream:
            return None
        s = new_stream(ctx)
        db.add(k, s)
        created = True
    fields = argv[a.id_pos + 1:]
    sid = None
    if a.idmp:  # always with '*'
        state = s.idmp
        if state is None:
            state = s.idmp = new_idmp_state(ctx)
        pid = argv[a.idmp_pos]
        iid = auto_iid(fields) if a.idmp_auto else argv[a.idmp_pos + 1]
        sid = _auto_append_id(s, fields, ctx.now_ms)
        if sid is not None:
            # The append below cannot fail: the pair is looked up and recorded in one step.
            dup = state.claim(pid, iid, sid)
        else:
            dup = state.lookup(pid, iid)  # a duplicate still wins over the errors below
        if dup is not None:
            db.modified(k)  # Redis 8.6.2+: a duplicate counts as a write (WATCH, dirty)
            return format_id(dup)
    if sid is None:
        last = s.last_id
        if last == MAX_ID:
            raise CommandError(E.STREAM_EXHAUSTED)
        if requested is None:
            sid = s.next_auto_id(ctx.now_ms)
        elif requested < 0:  # ms-*: next sequence within ms, or ms-0
            ms = auto_seq_ms(requested)
            if ms == last >> 64:
                if last & U64 == U64:
                    raise CommandError(E.STREAM_XADD_TOO_SMALL)
                sid = last + 1
            else:
                sid = ms << 64
        else:
            sid = requested
        if sid <= last:
            raise CommandError(E.STREAM_XADD_TOO_SMALL)
        if entry_too_large(fields):
            raise CommandError(E.STREAM_TOO_LARGE)
    config = ctx.config.values
    s.append(sid, fields, config["stream-node-max-entries"], config["stream-node-max-bytes"])
    trimmed = _trim(ctx, s, a) if a.trims else 0
    if not created:
        db.modified(k)
    db.signal_ready(k)
    if db.keyspace.events:
        db.notify(EV_STREAM, b"xadd", k)
        if trimmed:
            db.notify(EV_STREAM, b"xtrim", k)
    return format_id(sid)


def _auto_append_id(s: Stream, fields: list, now_ms: int) -> int | None:
    """The ID ``XADD *`` appends ``fields`` with now; None when that append would fail
    (the ID space is exhausted, or the entry is too large)."""
    if entry_too_large(fields):
        return None
    return s.next_auto_id(now_ms)


@batch_handler("XADD")
def xadd_batch(ctx, requests: list, start: int, replies: list) -> None:
    """XADD key [options] * field value [field value ...], repeated

    A pipelined producer's run of appends to one stream, taken together: the stream is
    looked up and the node limits read once, and each reply is appended to ``replies``. A
    request joins the run only if ``xadd`` would append it (or answer it as an IDMP
    duplicate) with no other effect than its own trimming: same key, an existing stream
    nobody is blocked on, an automatic ID with room left in the ID space, a valid field
    list. Options other than the usual IDMP / IDMPAUTO shapes are parsed once and reused
    while the next request repeats them byte for byte (a capped stream's producer sends the
    same ``MAXLEN ~ n`` every time). Any other request ends the run and goes through
    ``xadd``, which also reports its errors. All appends of a run use the time snapshot of
    its first request; auto IDs stay strictly increasing anyway."""
    first = requests[start]
    k, name = first[1], first[0]
    db = ctx.db
    if k in db.blocking or db.keyspace.events & EV_STREAM:  # xadd announces each append
        return
    s = db.get(k)
    if type(s) is not Stream:
        return
    config = ctx.config.values
    max_entries = config["stream-node-max-entries"]
    max_bytes = config["stream-node-max-bytes"]
    now = ctx.now_ms
    state = s.idmp
    put = replies.append
    # An ID of this millisecond is ``base + seq``; its text, ``prefix + SMALL_SEQ[seq]``.
    base, prefix = now << 64, b"%d-" % now
    parsed = None  # the last options parsed in full, and their argv words
    parsed_words = None
    try:
        for i in range(start, len(requests)):
            argv = requests[i]
            if len(argv) < 5 or argv[1] != k or argv[0] != name:
                break
            if argv[2] == b"*":  # the plain append, kept free of option lookups
                a = None
                fields = argv[3:]
            else:
                a = _idmp_only(argv, argv[2])
                if a is None:
                    a = parsed
                    if (a is None or len(argv) <= a.id_pos + 2
                            or argv[a.id_pos] != b"*" or argv[2:a.id_pos] != parsed_words):
                        try:
                            a = parse_add_trim(ctx, argv, xadd=True)
                        except CommandError:
                            break
                        if a.id_arg != b"*":
                            break
                        parsed, parsed_words = a, argv[2:a.id_pos]
                if a.idmp and state is None:
                    break
                fields = argv[a.id_pos + 1:]
            # _auto_append_id, inline (two calls less per append): the entry's size, then
            # Stream.next_auto_id: now's first ID, or the one after the last.
            if len(fields) == 2:
                if len(fields[0]) + len(fields[1]) > LISTPACK_MAX_SIZE:
                    break
            elif not fields or len(fields) & 1 or entry_too_large(fields):
                break
            last = s.last_id
            if last >= base:
                if last == MAX_ID:
                    break
                sid = last + 1
            else:
                sid = base
            if a is not None and a.idmp:
                dup = state.claim(argv[a.idmp_pos], auto_iid(fields) if a.idmp_auto
                                  else argv[a.idmp_pos + 1], sid)
                if dup is not None:
                    put(format_id(dup))
                    continue
            s.append(sid, fields, max_entries, max_bytes)
            if a is not None and a.trims:
                _trim(ctx, s, a)
            q = sid - base
            put(prefix + SMALL_SEQ[q] if 0 <= q < 1024 else format_id(sid))
    finally:
        if replies:  # every reply, duplicates included, is a write (dirty, WATCH)
            db.modified(k, len(replies))


# --- XRANGE / XREVRANGE --------------------------------------------------------------------

def _range_command(ctx, argv, rev: bool):
    start_arg, end_arg = (argv[3], argv[2]) if rev else (argv[2], argv[3])
    start, ex = interval_id(start_arg, end=False)
    if ex:
        if start == MAX_ID:
            raise CommandError(E.STREAM_INTERVAL_START)
        start += 1
    end, ex = interval_id(end_arg, end=True)
    if ex:
        if end == 0:
            raise CommandError(E.STREAM_INTERVAL_END)
        end -= 1
    count = -1
    i = 4
    n = len(argv)
    while i < n:
        if argv[i].upper() == b"COUNT" and i + 1 < n:
            count = max(parse_int(argv[i + 1]), 0)
            i += 2
        else:
            raise CommandError(E.SYNTAX)
    s = read_stream(ctx.db, argv[1])
    if s is None:
        return []
    if count == 0:
        return NULL_ARRAY
    return runs_reply(s.runs(start, end, count, rev))


@command("XRANGE", -4, "readonly", (1, 1, 1),
         key_flags="RO access", group="stream", since="5.0.0",
         summary="Returns the messages from a stream within a range of IDs.",
         complexity="O(N) with N being the number of elements being returned. If N is "
                    "constant (e.g. always asking for the first 10 elements with COUNT), "
                    "you can consider it O(1).",
         args=(key(), string("start"), string("end"),
               integer("count", token="COUNT", optional=True)),
         pure=True,
         history=(
             ("6.2.0", "Added exclusive ranges."),
         ))
def xrange(ctx, argv):
    """XRANGE key start end [COUNT count]

    Entries with start <= ID <= end, ascending. ``-``/``+`` are the extremes, ``(`` makes a
    bound exclusive, an incomplete end gets the largest sequence. COUNT 0 → null array."""
    return _range_command(ctx, argv, rev=False)


@command("XREVRANGE", -4, "readonly", (1, 1, 1),
         key_flags="RO access", group="stream", since="5.0.0",
         summary="Returns the messages from a stream within a range of IDs in reverse order.",
         complexity="O(N) with N being the number of elements returned. If N is constant "
                    "(e.g. always asking for the first 10 elements with COUNT), you can "
                    "consider it O(1).",
         args=(key(), string("end"), string("start"),
               integer("count", token="COUNT", optional=True)),
         pure=True,
         history=(
             ("6.2.0", "Added exclusive ranges."),
         ))
def xrevrange(ctx, argv):
    """XREVRANGE key end start [COUNT count]

    XRANGE with the bounds swapped and the entries in descending order."""
    return _range_command(ctx, argv, rev=True)


# --- XLEN ----------------------------------------------------------------------------------

@command("XLEN", 2, "readonly fast", (1, 1, 1),
         key_flags="RO", group="stream", since="5.0.0",
         summary="Return the number of messages in a stream.", complexity="O(1)",
         args=(key(),),
         pure=True)
def xlen(ctx, argv):
    """XLEN key

    Number of live entries; 0 for a missing key."""
    s = read_stream(ctx.db, argv[1])
    return s.length if s is not None else 0


# --- XDEL / XDELEX -------------------------------------------------------------------------

def _after_delete(ctx, k: bytes, deleted: int, event: bytes = b"xdel") -> None:
    if deleted:
        ctx.db.modified(k, deleted)
        ctx.db.notify(EV_STREAM, event, k)


@command("XDEL", -3, "write fast", (1, 1, 1),
         key_flags="RW delete", group="stream", since="5.0.0",
         summary="Returns the number of messages after removing them from a stream.",
         complexity="O(1) for each single item to delete in the stream, regardless of the "
                    "stream size.",
         args=(key(), string("id", multiple=True)))
def xdel(ctx, argv):
    """XDEL key id [id ...]

    Deletes entries (consumer-group PELs keep their references). The key is looked up
    before the IDs are validated; all IDs are validated before anything is deleted."""
    k = argv[1]
    s = get_stream(ctx.db, k)
    if s is None:
        return 0
    ids = [strict_id(arg) for arg in argv[2:]]
    deleted = 0
    for sid in ids:
        if s.delete(sid):
            deleted += 1
    _after_delete(ctx, k, deleted)
    return deleted


def parse_ids_block(argv: list[bytes], start: int):
    """``[KEEPREF | DELREF | ACKED] IDS numids id ...`` from ``start``, as XDELEX and
    XACKDEL parse it: (strategy, raw ids)."""
    n = len(argv)
    strategy = None
    ids = None
    i = start
    while i < n:
        up = argv[i].upper()
        if up in _STRATEGIES:
            if strategy is not None:
                raise CommandError(E.SYNTAX)
            strategy = up
            i += 1
        elif up == b"IDS" and i + 1 < n:
            numids = parse_int(argv[i + 1], E.STREAM_NUMIDS)
            if numids < 1:
                raise CommandError(E.STREAM_NUMIDS)
            if numids > n - (i + 2):
                raise CommandError(E.STREAM_NUMIDS_MISMATCH)
            ids = argv[i + 2:i + 2 + numids]
            i += 2 + numids
        else:
            raise CommandError(E.SYNTAX)
    if ids is None:
        raise CommandError(E.STREAM_IDS_REQUIRED)
    return strategy or KEEPREF, ids


@command("XDELEX", -5, "write fast", (1, 1, 1),
         key_flags="RW delete", group="stream", since="8.2.0",
         summary="Deletes one or multiple entries from the stream.",
         complexity="O(1) for each single item to delete in the stream, regardless of the "
                    "stream size.",
         args=(key(), _STRATEGY_DOC,
               block("ids", integer("numids"), string("id", multiple=True), token="IDS")))
def xdelex(ctx, argv):
    """XDELEX key [KEEPREF | DELREF | ACKED] IDS numids id [id ...]

    Per ID: 1 deleted, -1 no such entry, 2 kept because a group still references it
    (ACKED). DELREF also drops the ID from every group's PEL."""
    k = argv[1]
    s = get_stream(ctx.db, k)
    strategy, raw_ids = parse_ids_block(argv, 2)
    if s is None:
        return [-1] * len(raw_ids)
    ids = [strict_id(arg) for arg in raw_ids]
    out = []
    deleted = 0
    for sid in ids:
        if strategy == ACKED and is_referenced(s, sid):
            out.append(2)
            continue
        ok = s.delete(sid)
        if strategy == DELREF:
            drop_references(s, sid)
        if ok:
            deleted += 1
            out.append(1)
        else:
            out.append(-1)
    _after_delete(ctx, k, deleted)
    return out


# --- XTRIM ---------------------------------------------------------------------------------

@command("XTRIM", -4, "write", (1, 1, 1),
         tips="nondeterministic_output",
         key_flags="RW delete", group="stream", since="5.0.0",
         summary="Deletes messages from the beginning of a stream.",
         complexity="O(N), with N being the number of evicted entries. Constant times are "
                    "very small however, since entries are organized in macro nodes "
                    "containing multiple entries that can be released with a single "
                    "deallocation.",
         args=(key(), _trim_doc(optional=False), _STRATEGY_DOC),
         history=(
             ("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option."),
         ))
def xtrim(ctx, argv):
    """XTRIM key <MAXLEN | MINID> [= | ~] threshold [LIMIT count] [KEEPREF | DELREF | ACKED]

    Number of entries removed; 0 for a missing key (checked after the options)."""
    a = parse_add_trim(ctx, argv, xadd=False)
    k = argv[1]
    s = get_stream(ctx.db, k)
    if s is None:
        return 0
    deleted = _trim(ctx, s, a)
    _after_delete(ctx, k, deleted, b"xtrim")
    return deleted


# --- XSETID --------------------------------------------------------------------------------

@command("XSETID", -3, "write denyoom fast", (1, 1, 1),
         key_flags="RW update", group="stream", since="5.0.0",
         summary="An internal command for replicating stream values.", complexity="O(1)",
         args=(key(), string("last-id"),
               integer("entries-added", token="ENTRIESADDED", optional=True, since="7.0.0"),
               string("max-deleted-id", token="MAXDELETEDID", optional=True,
                      since="7.0.0")),
         history=(
             ("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments."),
         ))
def xsetid(ctx, argv):
    """XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]

    Sets the stream's last ID (and counters). Refuses IDs below the last live entry or
    the max deleted ID."""
    last = strict_id(argv[2])
    entries_added = -1
    max_deleted = 0
    i, n = 3, len(argv)
    while i < n:
        up = argv[i].upper()
        if up == b"ENTRIESADDED" and i + 1 < n:
            entries_added = parse_int(argv[i + 1])
            if entries_added < 0:
                raise CommandError(E.STREAM_ENTRIES_ADDED_NEGATIVE)
        elif up == b"MAXDELETEDID" and i + 1 < n:
            max_deleted = strict_id(argv[i + 1])
            if last < max_deleted:
                raise CommandError(E.STREAM_XSETID_BELOW_GIVEN_MAXDEL)
        else:
            raise CommandError(E.SYNTAX)
        i += 2
    k = argv[1]
    s = get_stream(ctx.db, k)
    if s is None:
        raise CommandError(E.NO_SUCH_KEY)
    if last < s.max_deleted_id:
        raise CommandError(E.STREAM_XSETID_BELOW_MAXDEL)
    if s.length:
        if last < s.last_live_id():
            raise CommandError(E.STREAM_XSETID_BELOW_TOP)
        if entries_added != -1 and s.length > entries_added:
            raise CommandError(E.STREAM_XSETID_ENTRIES_ADDED)
    s.last_id = last
    if entries_added != -1:
        s.entries_added = entries_added
    if max_deleted:
        s.max_deleted_id = max_deleted
    ctx.db.modified(k)
    ctx.db.notify(EV_STREAM, b"xsetid", k)
    return OK


# --- XREAD ---------------------------------------------------------------------------------

@command("XREAD", -4, "readonly blocking",
         key_flags="RO access", keyword_keys=("STREAMS", 1, 2),
         group="stream", since="5.0.0",
         summary="Returns messages from multiple streams with IDs greater than the ones "
                 "requested. Blocks until a message is available otherwise.",
         complexity="For each stream mentioned: O(N) with N being the number of elements "
                    "being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note "
                    "that when the BLOCK option is used, XADD will pay O(M) time in order to "
                    "serve the M clients blocked on the stream getting new data.",
         args=(integer("count", token="COUNT", optional=True),
               integer("milliseconds", token="BLOCK", optional=True),
               block("streams", key(multiple=True), string("id", multiple=True),
                     token="STREAMS")))
def xread(ctx, argv, parsed=None):
    """XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]

    Entries after each given ID (``$`` = the stream's last ID now, ``+`` = its last entry).
    RESP2: [[key, entries], ...]; RESP3: a map. Nothing to serve: null array, or with
    BLOCK the client parks (``$`` rewritten to the concrete ID) until a key gets data.
    ``parsed``: a parked XREAD's ``_Reread``, whose keys, IDs and options stand for argv."""
    if parsed is None:
        count, block_ms, _, _, _, _, at = read_options(argv, ctx.now_ms, False)
        ids_at = (len(argv) + at) // 2
        keys, raw_ids = argv[at:ids_at], argv[ids_at:]
        after: list = []  # ID to read after, or None for `+` (the last entry)
    else:
        keys, after, count, block_ms = parsed.keys, parsed.after, parsed.count, parsed.block_ms
        raw_ids = None  # resolved when the command parked
    db = ctx.db
    # Resolve every ID first, in key order, as Redis does (key k's type before key k+1's).
    streams: list = []  # the stream at each key, or None
    rewritten = None
    # Redis's xreadCommand looks every key up twice, here and again while serving. A miss
    # is counted (and announced) in each round; the hits of both are counted at once
    # below, or those of the first alone on an error.
    try:
        for j, k in enumerate(keys):
            s = get_stream(db, k)
            if s is None:
                db.missed((k,))  # keymiss now, before a later key's expiry or error
            streams.append(s)
            if raw_ids is None:
                continue
            arg = raw_ids[j]
            if arg == b"$":
                sid = s.last_id if s is not None else 0
                if rewritten is None:
                    rewritten = list(argv)
                rewritten[ids_at + j] = format_id(sid)
                after.append(sid)
            elif arg == b"+":
                after.append(None)
            elif arg == b">":
                raise CommandError(E.STREAM_XREAD_GT)
            else:
                after.append(strict_id(arg))
    except CommandError:
        # a key of another type (not appended) was a hit too
        db.hits += len(streams) - streams.count(None) + (len(streams) == j)
        raise
    served = []  # [key, entries] lists: RESP2's reply as it is, RESP3's map items
    limit = count if count else -1
    db.hits += 2 * len(streams)
    missing = None
    for k, s, gt in zip(keys, streams, after):
        if s is None:
            db.hits -= 2
            if missing is None:
                missing = []
            missing.append(k)
            continue
        if not s.length:
            continue
        if gt is None:
            last = s.last_entry()
            served.append([k, [entry_reply(*last)]])
            continue
        if gt < MAX_ID:
            runs = s.runs(gt + 1, MAX_ID, limit)
            if runs:  # empty: no live entry after gt
                served.append([k, runs_reply(runs)])
    if missing is not None:
        db.missed(missing)  # the second round of lookups misses them again
    if served:
        return Map(served) if ctx.resp >= 3 else served
    if block_ms is not None and ctx.blocking_allowed:
        if parsed is None:
            parsed = _Reread(keys, after, count, block_ms)
        return Block(list(keys), block_ms, argv=rewritten, rerun=parsed)
    return NULL_ARRAY


class _Reread:
    """A parked XREAD's wake-up: the handler run again, with the arguments it parsed the
    first time. Its argv (``$`` rewritten) would parse to the same keys, IDs and options,
    and none of that parse can fail a second time; what can change, the keys' values,
    is looked up again, with the same hits, misses and errors as a full run. Parsing
    again was about 15 % of the server's time for a wake-up (measured in-process), paid
    between the XADD and its reader's reply."""

    __slots__ = ("keys", "after", "count", "block_ms")

    def __init__(self, keys, after, count, block_ms):
        self.keys, self.after, self.count, self.block_ms = keys, after, count, block_ms

    def __call__(self, ctx, argv):
        return xread(ctx, argv, self)


# --- XREAD / XREADGROUP option parsing (shared; added by the consumer-group family) -------

class ReadArgs:
    """Options of XREADGROUP as ``parse_read_args`` returns them."""

    __slots__ = ("count", "block", "noack", "claim", "group", "consumer", "keys", "ids")

    def __init__(self, count, block, noack, claim, group, consumer, keys, ids):
        self.count = count  # COUNT; 0 = unlimited (negative values become 0)
        self.block = block  # BLOCK timeout in ms (0 = forever), None without BLOCK
        self.noack = noack  # NOACK
        self.claim = claim  # CLAIM min-idle-time in ms, None without
        self.group = group  # GROUP name
        self.consumer = consumer  # consumer name
        self.keys: list[bytes] = keys  # the STREAMS keys
        self.ids: list[bytes] = ids  # their ID arguments, unparsed


def read_options(argv: list[bytes], now: int, xreadgroup: bool) -> tuple:
    """The option loop of Redis's xreadCommand, for XREAD and XREADGROUP alike: ``(count,
    block, noack, claim, group, consumer, streams_at)``, ``streams_at`` being the index of
    the first key (the IDs are the second half of what follows).

    Options in any order, repeated = last wins; a keyword without its value falls through
    to the syntax error; STREAMS ends the loop and must leave an even number of arguments.
    GROUP, NOACK and CLAIM are XREADGROUP's; XREAD rejects them with their own errors.
    A tuple rather than a ``ReadArgs``: XREAD, run in every consumer's loop, needs only
    four of the options, and the object was a tenth of its parse (measured)."""
    count = 0  # 0 = unlimited (negative values become 0)
    block = claim = group = consumer = None
    noack = False
    n = len(argv)
    i = 1
    while i < n:
        more = n - i - 1
        opt = argv[i].upper()
        if opt == b"BLOCK" and more:
            i += 1
            block = parse_timeout_ms(argv[i], now)
        elif opt == b"COUNT" and more:
            i += 1
            count = max(parse_int(argv[i]), 0)
        elif opt == b"STREAMS" and more:
            if more % 2:  # the keys and the IDs after STREAMS
                raise CommandError(E.GRP_UNBALANCED if xreadgroup
                                   else E.STREAM_XREAD_UNBALANCED)
            if xreadgroup and group is None:
                raise CommandError(E.GRP_MISSING_GROUP)
            return count, block, noack, claim, group, consumer, i + 1
        elif opt == b"GROUP" and more >= 2:
            if not xreadgroup:
                raise CommandError(E.STREAM_XREAD_GROUP)
            group, consumer = argv[i + 1], argv[i + 2]
            i += 2
        elif opt == b"NOACK":
            if not xreadgroup:
                raise CommandError(E.STREAM_XREAD_NOACK)
            noack = True
        elif opt == b"CLAIM" and more:
            if not xreadgroup:
                raise CommandError(E.STREAM_XREAD_CLAIM)
            i += 1
            claim = parse_int(argv[i], E.GRP_CLAIM_NOT_INT)
            if claim < 0:
                raise CommandError(E.GRP_CLAIM_NEGATIVE)
        else:
            raise CommandError(E.SYNTAX)
        i += 1
    raise CommandError(E.SYNTAX)


def parse_read_args(argv: list[bytes], now: int) -> ReadArgs:
    """XREADGROUP's options (``read_options``) as a ``ReadArgs``."""
    count, block, noack, claim, group, consumer, at = read_options(argv, now, True)
    half = (len(argv) - at) // 2
    return ReadArgs(count, block, noack, claim, group, consumer, argv[at:at + half],
                    argv[at + half:])


# --- XINFO ---------------------------------------------------------------------------------

command("XINFO", -2, group="stream", since="5.0.0",
        summary="A container for stream introspection commands.",
        complexity="Depends on subcommand.", container=True)

XINFO_HELP = [
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",  # the missing `]` is Redis's
    "    Show information about the stream.",
    "HELP",
    "    Print this help.",
]


help_command("xinfo", "stream", "5.0.0", XINFO_HELP)


def radix_tree_nodes(s: Stream) -> int:
    """Node count of a radix tree holding the 16-byte big-endian node keys.

    Redis's rax stores runs of single-child bytes in one compressed node, a node per
    branching point, and a (childless) node per key."""
    keys = [f.to_bytes(16, "big") for f in s.first_ids()]
    if not keys:
        return 1

    def count(lo: int, hi: int, depth: int) -> int:
        if hi - lo == 1:
            return (1 if depth < 16 else 0) + 1
        a, b = keys[lo], keys[hi - 1]
        p = depth
        while a[p] == b[p]:
            p += 1
        total = (1 if p > depth else 0) + 1
        start = lo
        for j in range(lo + 1, hi + 1):
            if j == hi or keys[j][p] != keys[start][p]:
                total += count(start, j, p + 1)
                start = j
        return total

    return count(0, len(keys), 0)


def idmp_fields(ctx, s: Stream) -> list:
    """The six IDMP fields of XINFO STREAM (8.6): settings and counters, in Redis's order."""
    st = s.idmp
    if st is None:
        return [("idmp-duration", ctx.config["stream-idmp-duration"]),
                ("idmp-maxsize", ctx.config["stream-idmp-maxsize"]),
                ("pids-tracked", 0), ("iids-tracked", 0), ("iids-added", 0),
                ("iids-duplicates", 0)]
    return [("idmp-duration", st.duration), ("idmp-maxsize", st.maxsize),
            ("pids-tracked", st.pids_tracked), ("iids-tracked", st.iids_tracked),
            ("iids-added", st.iids_added), ("iids-duplicates", st.iids_duplicates)]


def full_groups_section(stream: Stream, count: int, ctx) -> list:
    """The ``groups`` value of XINFO STREAM FULL; the consumer-group family provides it
    (imported here because that family imports this one)."""
    from .groups import full_groups_section as groups_impl
    return groups_impl(stream, count)


@command("XINFO|STREAM", -3, "readonly", (2, 2, 1),
         key_flags="RO access", group="stream", since="5.0.0",
         summary="Returns information about a stream.", complexity="O(1)",
         args=(key(), block("full-block", integer("count", token="COUNT", optional=True),
                            token="FULL", optional=True, since="6.0.0")),
         history=(
             ("6.0.0", "Added the `FULL` modifier."),
             ("7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields"),
         ))
def xinfo_stream(ctx, argv):
    """XINFO STREAM key [FULL [COUNT count]]

    Summary map (length, node counts, IDs, counters, IDMP settings, groups, first and last
    entry), or with FULL the entries (up to COUNT, 0 = all, default 10) and the groups."""
    s = read_stream(ctx.db, argv[2])
    if s is None:
        raise CommandError(E.NO_SUCH_KEY)
    opts = argv[3:]
    full = False
    count = 10
    if opts:
        if len(opts) not in (1, 3) or opts[0].upper() != b"FULL":
            raise CommandError(E.unknown_subcommand_or_arity(argv[1], "xinfo"))
        full = True
        if len(opts) == 3:
            if opts[1].upper() != b"COUNT":
                raise CommandError(E.unknown_subcommand_or_arity(argv[1], "xinfo"))
            count = parse_int(opts[2])
            if count < 0:
                count = 10
    items = [
        ("length", s.length),
        ("radix-tree-keys", s.node_count()),
        ("radix-tree-nodes", radix_tree_nodes(s)),
        ("last-generated-id", format_id(s.last_id)),
        ("max-deleted-entry-id", format_id(s.max_deleted_id)),
        ("entries-added", s.entries_added),
        ("recorded-first-entry-id", format_id(s.first_id)),
    ]
    items += idmp_fields(ctx, s)
    if full:
        entries = s.range(0, MAX_ID, count if count else -1)
        items.append(("entries", [entry_reply(sid, f) for sid, f in entries]))
        items.append(("groups", full_groups_section(s, count, ctx)))
        return Map(items)
    first, last = s.first_entry(), s.last_entry()
    items.append(("groups", len(s.groups)))
    items.append(("first-entry", entry_reply(*first) if first else None))
    items.append(("last-entry", entry_reply(*last) if last else None))
    return Map(items)
