"""Consumer-group commands: XGROUP, XREADGROUP, XACK, XACKDEL, XNACK, XPENDING, XCLAIM,
XAUTOCLAIM, XINFO GROUPS / CONSUMERS, and the groups section of XINFO STREAM FULL.

Parsing and replies live here; the PEL, consumers and the entries_read/lag rules live in
``streamd.store.groups``. Each handler validates in the order Redis does (it decides which
error a client sees when several things are wrong), then changes the store, then calls
``db.modified`` so WATCH and the dirty counter see the write.
"""

from __future__ import annotations

from itertools import islice

from ..protocol.replies import NULL_ARRAY, OK, Map
from ..store.groups import UNKNOWN, ConsumerGroup, is_referenced, drop_references
from ..store.keyspace import EV_STREAM
from ..store.stream import Stream, run_ids
from ..store.streamid import MAX_ID, format_id, parse_id
from . import errors as E
from .args import LLONG_MAX, parse_int
from .blocking import Block
from .errors import CommandError
from .streams import (entries_reply, entry_reply, get_stream, interval_id, new_stream,
                      parse_ids_block, parse_read_args, read_stream, runs_reply, strict_id)
from .table import (TABLE, Arg, batch_handler, block, command, help_command, integer, key, oneof,
                    string, token)

FATAL_COUNT = LLONG_MAX  # delivery count XNACK FATAL sets: "never retry"


# --- shared helpers ------------------------------------------------------------------------

def _interval(arg: bytes, *, end: bool) -> int:
    """An inclusive range bound from ``interval_id`` (XPENDING, XAUTOCLAIM)."""
    sid, exclusive = interval_id(arg, end=end)
    if exclusive:
        if not end:
            if sid == MAX_ID:
                raise CommandError(E.STREAM_INTERVAL_START)
            return sid + 1
        if sid == 0:
            raise CommandError(E.STREAM_INTERVAL_END)
        return sid - 1
    return sid


def _wire_count(count: int) -> int:
    """A delivery count as Redis prints it: an unsigned 64-bit counter shown as a signed
    one, so a FATAL count (LLONG_MAX) delivered once more reads -9223372036854775808."""
    count &= (1 << 64) - 1
    return count - (1 << 64) if count >= 1 << 63 else count


def _nacked_idle(pe, now: int) -> int:
    """Idle time as XPENDING shows it: -1 for NACKed entries, else clamped at 0."""
    if pe.nacked:
        return -1
    idle = now - pe.delivery_time
    return idle if idle > 0 else 0


def _consumer_name(pe) -> bytes:
    return pe.consumer.name if pe.consumer is not None else b""


def _xread_reply(ctx, served: list) -> object:
    """XREAD-style reply: RESP2 array of [key, entries], RESP3 map; null when empty."""
    if not served:
        return NULL_ARRAY
    if ctx.resp >= 3:
        return Map(served)
    return [[k, entries] for k, entries in served]


# --- XGROUP -------------------------------------------------------------------------------

command("XGROUP", -2, group="stream", since="5.0.0",
        summary="A container for consumer groups commands.",
        complexity="Depends on subcommand.", container=True)

XGROUP_HELP = [
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Print this help.",
]


def _xgroup_prelude(ctx, argv, *, create: bool = False, setid: bool = False):
    """Redis's common XGROUP prelude: options from position 5, key lookup, existence
    checks. Returns (stream or None, group or None, mkstream, entries_read)."""
    mkstream = False
    entries_read = UNKNOWN
    i = 5
    while i < len(argv):
        opt = argv[i].upper()
        if create and opt == b"MKSTREAM":
            mkstream = True
            i += 1
        elif (create or setid) and opt == b"ENTRIESREAD" and i + 1 < len(argv):
            entries_read = parse_int(argv[i + 1])
            if entries_read < 0 and entries_read != UNKNOWN:
                raise CommandError(E.GRP_ENTRIESREAD)
            i += 2
        else:
            raise CommandError(E.unknown_subcommand_or_arity(argv[1], "xgroup"))
    s = get_stream(ctx.db, argv[2])
    if s is None and not mkstream:
        raise CommandError(E.GRP_KEY_REQUIRED)
    g = s.groups.get(argv[3]) if s is not None else None
    return s, g, mkstream, entries_read


def _need_group(s, g, argv):
    if g is None:
        raise CommandError(E.grp_nogroup_for_key(argv[2], argv[3]))
    return g


@command("XGROUP|CREATE", -5, "write denyoom", (2, 2, 1),
         key_flags="RW insert", group="stream", since="5.0.0",
         summary="Creates a consumer group.", complexity="O(1)",
         args=(key(), string("group"), oneof("id-selector", string("id"),
                                             token("$", "new-id")),
               token("MKSTREAM", optional=True),
               integer("entries-read", token="ENTRIESREAD", optional=True)),
         history=(
             ("7.0.0", "Added the `entries_read` named argument."),
         ))
def xgroup_create(ctx, argv):
    """XGROUP CREATE key group <id | $> [MKSTREAM] [ENTRIESREAD entries-read]

    Creates a consumer group starting after ``id`` (``$``: the stream's last ID)."""
    s, g, mkstream, entries_read = _xgroup_prelude(ctx, argv, create=True)
    if len(argv) > 8:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "xgroup"))
    if argv[4] == b"$":
        sid = s.last_id if s is not None else 0
    else:
        sid = strict_id(argv[4])
    db, k = ctx.db, argv[2]
    if s is None:  # MKSTREAM: only now that nothing can fail any more
        s = new_stream(ctx)  # IDMP settings are copied from the config at creation
        db.add(k, s, changes=0)  # the group's creation below is the command's one change
    if g is not None:
        raise CommandError(E.GRP_BUSYGROUP)
    g = ConsumerGroup(argv[3], sid)
    g.set_position(s, sid, entries_read)
    s.groups[argv[3]] = g
    db.modified(k)
    db.notify(EV_STREAM, b"xgroup-create", k)
    return OK


@command("XGROUP|SETID", -5, "write", (2, 2, 1),
         key_flags="RW update", group="stream", since="5.0.0",
         summary="Sets the last-delivered ID of a consumer group.", complexity="O(1)",
         args=(key(), string("group"), oneof("id-selector", string("id"),
                                             token("$", "new-id")),
               integer("entriesread", token="ENTRIESREAD", optional=True,
                       display="entries-read")),
         history=(
             ("7.0.0", "Added the optional `entries_read` argument."),
         ))
def xgroup_setid(ctx, argv):
    """XGROUP SETID key group <id | $> [ENTRIESREAD entries-read]

    Moves the group's last-delivered ID; entries-read becomes the given value or unknown."""
    s, g, _, entries_read = _xgroup_prelude(ctx, argv, setid=True)
    g = _need_group(s, g, argv)
    if len(argv) not in (5, 7):
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "xgroup"))
    if argv[4] == b"$":
        sid = s.last_id
    else:
        sid = parse_id(argv[4])  # SETID is the one place `-` and `+` are accepted
        if sid is None:
            raise CommandError(E.STREAM_INVALID_ID)
    g.set_position(s, sid, entries_read)
    ctx.db.modified(argv[2])
    ctx.db.notify(EV_STREAM, b"xgroup-setid", argv[2])
    return OK


@command("XGROUP|DESTROY", 4, "write", (2, 2, 1),
         key_flags="RW delete", group="stream", since="5.0.0",
         summary="Destroys a consumer group.",
         complexity="O(N) where N is the number of entries in the group's pending "
                    "entries list (PEL).",
         args=(key(), string("group")))
def xgroup_destroy(ctx, argv):
    """XGROUP DESTROY key group

    Removes the group; clients blocked in XREADGROUP on it are woken and get NOGROUP."""
    s, g, _, _ = _xgroup_prelude(ctx, argv)
    if g is None:
        return 0
    del s.groups[argv[3]]
    ctx.db.modified(argv[2])
    ctx.db.notify(EV_STREAM, b"xgroup-destroy", argv[2])
    # Blocked XREADGROUP clients re-run and fail with NOGROUP; XREAD waiters re-run and
    # simply block again (nothing new to serve).
    ctx.db.signal_ready(argv[2])
    return 1


@command("XGROUP|CREATECONSUMER", 5, "write denyoom", (2, 2, 1),
         key_flags="RW insert", group="stream",
         since="6.2.0", summary="Creates a consumer in a consumer group.",
         complexity="O(1)", args=(key(), string("group"), string("consumer")))
def xgroup_createconsumer(ctx, argv):
    """XGROUP CREATECONSUMER key group consumer

    Replies 1 if the consumer was created, 0 if it already existed."""
    s, g, _, _ = _xgroup_prelude(ctx, argv)
    g = _need_group(s, g, argv)
    _, created = g.create_consumer(argv[4], ctx.now_ms)
    if created:
        ctx.db.modified(argv[2])
        ctx.db.notify(EV_STREAM, b"xgroup-createconsumer", argv[2])
    return 1 if created else 0


@command("XGROUP|DELCONSUMER", 5, "write", (2, 2, 1),
         key_flags="RW delete", group="stream", since="5.0.0",
         summary="Deletes a consumer from a consumer group.", complexity="O(1)",
         args=(key(), string("group"), string("consumer")))
def xgroup_delconsumer(ctx, argv):
    """XGROUP DELCONSUMER key group consumer

    Replies the number of pending entries the consumer owned (they are dropped)."""
    s, g, _, _ = _xgroup_prelude(ctx, argv)
    g = _need_group(s, g, argv)
    n = g.delete_consumer(argv[4])
    if n is None:
        return 0
    ctx.db.modified(argv[2])
    ctx.db.notify(EV_STREAM, b"xgroup-delconsumer", argv[2])
    return n


help_command("xgroup", "stream", "5.0.0", XGROUP_HELP)


# --- XREADGROUP -----------------------------------------------------------------------------

GT_NEW = MAX_ID  # the `>` ID (Redis uses the maximum ID as its marker, and so do we)


def _claim_pending(s, g, consumer, min_idle: int, limit: int, now: int) -> list:
    """CLAIM read, first part: pending entries idle for at least ``min_idle``, in CLAIM
    order, whose stream entry still exists; moved to ``consumer``. 4-element entries."""
    picked = []
    for pe in g.by_time():
        if limit and len(picked) >= limit:
            break
        idle = now - pe.delivery_time
        if not pe.nacked and idle < min_idle:
            break  # time-ordered: nothing further is idle long enough
        fields = s.get(pe.id)
        if fields is None:
            continue  # a deleted entry is skipped and stays pending
        picked.append((pe, fields, idle))
    out = []
    for pe, fields, idle in picked:
        before = pe.delivery_count
        g.claim(pe, consumer, now, before + 1)
        out.append([format_id(pe.id), fields, idle, _wire_count(before)])
    return out


_claim_timers: dict = {}  # (id(db), key) -> unix ms of the earliest scheduled CLAIM wake-up


def _claim_wakeup(ctx, s, g, key: bytes, min_idle: int) -> None:
    """Schedule a re-run of the parked XREADGROUP ... CLAIM when its oldest pending
    entry becomes claimable (the server only re-runs on key signals)."""
    now = ctx.now_ms
    when = None
    for pe in g.by_time():
        if pe.id in s:
            when = pe.delivery_time + min_idle
            break
    if when is None:
        when = now + min_idle
    server = getattr(ctx, "server", None)
    loop = getattr(server, "loop", None)
    if loop is None:
        return
    db = ctx.db
    pending = _claim_timers.get((id(db), key))
    if pending is not None and pending <= when:
        return
    _claim_timers[(id(db), key)] = when

    def fire():
        if _claim_timers.get((id(db), key)) == when:
            del _claim_timers[(id(db), key)]
        db.signal_ready(key)
        if server.keyspace.ready:
            server.handle_ready()

    loop.call_later(max(when - now, 0) / 1000 + 0.001, fire)


@command("XREADGROUP", -7, "write blocking",
         key_flags="RO access", keyword_keys=("STREAMS", 4, 2),
         group="stream", since="5.0.0",
         summary="Returns new or historical messages from a stream for a consumer in a "
                 "group. Blocks until a message is available otherwise.",
         complexity="For each stream mentioned: O(M) with M the number of elements "
                    "returned. If M is constant (e.g. always asking for the first 10 "
                    "elements with COUNT), you can consider it O(1). On the other side "
                    "when XREADGROUP blocks, XADD will pay the O(N) time in order to serve "
                    "the N clients blocked on the stream getting new data.",
         args=(block("group-block", string("group"), string("consumer"), token="GROUP"),
               integer("count", token="COUNT", optional=True),
               integer("milliseconds", token="BLOCK", optional=True),
               integer("min-idle-time", token="CLAIM", optional=True, since="8.4.0"),
               token("NOACK", optional=True),
               block("streams", key(multiple=True), string("id", multiple=True),
                     token="STREAMS")))
def xreadgroup(ctx, argv):
    """XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds]
    [CLAIM min-idle-time] [NOACK] STREAMS key [key ...] id [id ...]

    Reads new entries (``>``) for a consumer, creating PEL entries, or the consumer's own
    pending history (any other ID). Blocks only for ``>``."""
    return _read_group(ctx, parse_read_args(argv, ctx.now_ms))


class _GroupReread:
    """A parked XREADGROUP's wake-up: the command run again with the options it parsed
    the first time (its argv would parse to the same, and cannot fail to); keys, groups
    and IDs are resolved again, as a full run resolves them."""

    __slots__ = ("args",)

    def __init__(self, args):
        self.args = args

    def __call__(self, ctx, argv):
        return _read_group(ctx, self.args)


def _read_group(ctx, a):
    """XREADGROUP once its options are parsed."""
    now = ctx.now_ms
    db = ctx.db
    # Resolve every key, group and ID before serving anything (errors win over data).
    plan = []
    for k, raw_id in zip(a.keys, a.ids):
        s = read_stream(db, k)
        g = s.groups.get(a.group) if s is not None else None
        if g is None:
            raise CommandError(E.grp_nogroup_read(k, a.group))
        if raw_id == b"$":
            raise CommandError(E.GRP_DOLLAR_MEANINGLESS)
        if raw_id == b"+":
            raise CommandError(E.GRP_PLUS_MEANINGLESS)
        gt = GT_NEW if raw_id == b">" else strict_id(raw_id)
        plan.append((k, s, g, gt))
    # Redis's xreadCommand looks every key up again as it serves them: a second hit each.
    db.hits += len(plan)

    served = []
    blocking_claim = []
    for k, s, g, gt in plan:
        consumer, created = g.create_consumer(a.consumer, now)
        if created:
            db.modified(k)
            if db.keyspace.events:
                db.notify(EV_STREAM, b"xgroup-createconsumer", k)
        consumer.seen_time = now
        if gt != GT_NEW:
            served.append((k, _history(s, g, consumer, gt, a.count, now)))
            continue
        entries = []
        if a.claim is not None:
            entries = _claim_pending(s, g, consumer, a.claim, a.count, now)
            if entries:
                consumer.active_time = now
        room = a.count - len(entries) if a.count else -1
        if room and s.length and s.last_live_id() > g.last_id:
            if a.claim is not None:
                new = s.range(g.last_id + 1, MAX_ID, room)
                sids = [sid for sid, _ in new]
                entries += [[format_id(sid), fields, 0, 0] for sid, fields in new]
            else:
                runs = s.runs(g.last_id + 1, MAX_ID, room)
                sids = (run_ids(runs[0]) if len(runs) == 1
                        else [sid for run in runs for sid in run_ids(run)])
                entries = runs_reply(runs)
            g.deliver_new(s, consumer, sids, now, a.noack)
            if sids and not a.noack:
                consumer.active_time = now
        if entries:
            db.modified(k)
            served.append((k, entries))
        elif a.claim is not None:
            blocking_claim.append((k, s, g))
    if served or a.block is None:
        return _xread_reply(ctx, served)
    if not ctx.blocking_allowed:
        return NULL_ARRAY
    for k, s, g in blocking_claim:
        _claim_wakeup(ctx, s, g, k, a.claim)
    return Block(list(a.keys), a.block, nokey=True, rerun=_GroupReread(a))


def _history(s, g, consumer, gt: int, count: int, now: int) -> list:
    """The consumer's own pending entries after ``gt``; each counts as a new delivery.
    Entries deleted from the stream come back as [id, null]."""
    if gt == MAX_ID:
        return []
    ids = consumer.pel.irange(gt + 1, MAX_ID)
    if count:
        ids = islice(ids, count)
    out = []
    for sid in list(ids):
        fields = s.get(sid)
        if fields is None:
            out.append((sid, NULL_ARRAY))
            continue
        pe = g.pel[sid]
        pe.delivery_count += 1
        g.redeliver(pe, now)
        out.append((sid, fields))
    return entries_reply(out)


# --- XACK / XACKDEL / XNACK -----------------------------------------------------------------

@command("XACK", -4, "write fast", (1, 1, 1),
         key_flags="RW update", group="stream", since="5.0.0",
         summary="Returns the number of messages that were successfully acknowledged by "
                 "the consumer group member of a stream.",
         complexity="O(1) for each message ID processed.",
         args=(key(), string("group"), string("id", multiple=True)))
def xack(ctx, argv):
    """XACK key group id [id ...]

    Removes the IDs from the group's PEL; replies how many were pending."""
    s = read_stream(ctx.db, argv[1])
    g = s.groups.get(argv[2]) if s is not None else None
    if g is None:
        return 0  # before the IDs are even validated, as Redis does
    n = _ack(g, argv)
    if n:
        ctx.db.modified(argv[1], n)
    return n


def _ack(g: ConsumerGroup, argv: list) -> int:
    """XACK's IDs (argv[3:]) removed from ``g``'s PEL: how many were pending. Raises on an
    invalid ID before acknowledging any."""
    if len(argv) == 4:  # the usual single ID: no list to build
        return 1 if g.ack(strict_id(argv[3])) else 0
    ids = [strict_id(x) for x in argv[3:]]  # all or nothing
    return sum(map(g.ack, ids))


@batch_handler("XACK")
def xack_batch(ctx, requests: list, start: int, replies: list) -> None:
    """XACK key group id [id ...], repeated

    A consumer's acknowledgements, one request per entry as clients send them, taken
    together: the stream and group are looked up once. A request joins the run while it
    names the same key and group; one with an invalid ID ends the run and goes through
    ``xack``, which reports the error."""
    first = requests[start]
    name, k, group = first[0], first[1], first[2]
    db = ctx.db
    s = db.get(k)
    g = s.groups.get(group) if type(s) is Stream else None
    if g is None:
        return
    put = replies.append
    acked = 0
    before = len(replies)
    try:
        for i in range(start, len(requests)):
            argv = requests[i]
            if len(argv) < 4 or argv[2] != group or argv[1] != k or argv[0] != name:
                break
            try:
                n = _ack(g, argv)
            except CommandError:
                break
            acked += n
            put(n)
    finally:
        db.hits += len(replies) - before  # each XACK reads its key once, as in Redis
        if acked:
            db.modified(k, acked)


@command("XACKDEL", -6, "write fast", (1, 1, 1),
         key_flags="RW update delete", group="stream", since="8.2.0",
         summary="Acknowledges and conditionally deletes one or multiple entries for a "
                 "stream consumer group.",
         complexity="O(1) for each entry ID processed.",
         args=(key(), string("group"),
               oneof("condition", token("KEEPREF"), token("DELREF"), token("ACKED"),
                     optional=True),
               block("ids", integer("numids"), string("id", multiple=True), token="IDS")))
def xackdel(ctx, argv):
    """XACKDEL key group [KEEPREF | DELREF | ACKED] IDS numids id [id ...]

    Per ID: -1 not pending in the group, 1 acknowledged and deleted, 2 acknowledged but
    kept because another group still references it (ACKED)."""
    db = ctx.db
    s = get_stream(db, argv[1])
    strategy, raw = parse_ids_block(argv, 3)
    g = s.groups.get(argv[2]) if s is not None else None
    if g is None:
        return [-1] * len(raw)
    ids = [strict_id(x) for x in raw]
    out = []
    acked = deleted = 0
    for sid in ids:
        if not g.ack(sid):
            out.append(-1)
            continue
        acked += 1
        if strategy == b"ACKED" and is_referenced(s, sid):
            out.append(2)
            continue
        if strategy == b"DELREF":
            drop_references(s, sid)
        if s.delete(sid):
            deleted += 1
        out.append(1)
    if acked or deleted:
        db.modified(argv[1], acked + deleted)
    if deleted:
        db.notify(EV_STREAM, b"xdel", argv[1])
    return out


_XNACK_MODES = (b"SILENT", b"FAIL", b"FATAL")


@command("XNACK", -7, "write fast", (1, 1, 1),
         key_flags="RW update", group="stream", since="8.8.0",
         summary="Releases pending messages of a consumer group so that other consumers "
                 "can claim them.",
         complexity="O(1) for each message ID processed.",
         args=(key(), string("group"),
               oneof("mode", token("SILENT"), token("FAIL"), token("FATAL")),
               block("ids", integer("numids"), string("id", multiple=True), token="IDS"),
               integer("count", token="RETRYCOUNT", optional=True),
               token("FORCE", optional=True)))
def xnack(ctx, argv):
    """XNACK key group <SILENT | FAIL | FATAL> IDS numids id [id ...] [RETRYCOUNT count]
    [FORCE]

    Un-owns pending entries and puts them at the head of the claim order with a delivery
    count set by the mode (SILENT -1, FAIL unchanged, FATAL max) or RETRYCOUNT."""
    mode = argv[3].upper()
    if mode not in _XNACK_MODES:
        raise CommandError(E.GRP_XNACK_MODE)
    retry = None
    force = False
    raw = None
    i, n = 4, len(argv)
    while i < n:
        opt = argv[i].upper()
        if opt == b"FORCE":
            force = True
            i += 1
        elif opt == b"RETRYCOUNT" and i + 1 < n:
            retry = parse_int(argv[i + 1])
            if retry < 0:
                raise CommandError(E.GRP_XNACK_RETRYCOUNT)
            i += 2
        elif opt == b"IDS" and raw is None and i + 1 < n:
            try:
                numids = parse_int(argv[i + 1])
            except CommandError:
                raise CommandError(E.GRP_XNACK_NUMIDS) from None
            if numids < 1:
                raise CommandError(E.GRP_XNACK_NUMIDS)
            if numids > n - i - 2:
                raise CommandError(E.GRP_XNACK_NUMIDS_MISMATCH)
            raw = argv[i + 2:i + 2 + numids]
            i += 2 + numids
        else:
            raise CommandError(E.grp_xnack_option(argv[i]))
    if raw is None:
        raise CommandError(E.GRP_XNACK_NO_IDS)
    ids = [strict_id(x) for x in raw]
    db = ctx.db
    s = get_stream(db, argv[1])
    g = s.groups.get(argv[2]) if s is not None else None
    if g is None:
        raise CommandError(E.grp_nogroup(argv[1], argv[2]))
    n_nacked = 0
    for sid in ids:
        pe = g.pel.get(sid)
        if pe is not None:
            if retry is not None:
                count = retry
            elif mode == b"SILENT":
                count = max(pe.delivery_count - 1, 0)
            elif mode == b"FAIL":
                count = pe.delivery_count
            else:
                count = FATAL_COUNT
            g.nack(sid, count)
            n_nacked += 1
        elif force and sid in s:
            if retry is not None:
                count = retry
            elif mode == b"FATAL":
                count = FATAL_COUNT
            else:
                count = 0
            g.add_nacked(sid, count)
            n_nacked += 1
    if n_nacked:
        db.modified(argv[1], n_nacked)
        db.signal_ready(argv[1])  # XREADGROUP ... CLAIM waiters may claim these now
    return n_nacked


# --- XPENDING -------------------------------------------------------------------------------

@command("XPENDING", -3, "readonly", (1, 1, 1),
         tips="nondeterministic_output",
         key_flags="RO access", group="stream", since="5.0.0",
         summary="Returns the information and entries from a stream consumer group's "
                 "pending entries list.",
         complexity="O(N) with N the number of elements returned, so asking for a small "
                    "fixed number of entries per call is O(1). O(M), where M is the total "
                    "number of entries scanned when used with the IDLE filter. When the "
                    "command returns just the summary and the list of consumers is small, "
                    "it runs in O(1) time; otherwise, an additional O(N) time for "
                    "iterating every consumer.",
         args=(key(), string("group"),
               block("filters", integer("min-idle-time", token="IDLE", optional=True,
                                        since="6.2.0"),
                     string("start"), string("end"), integer("count"),
                     string("consumer", optional=True), optional=True)),
         pure=True,
         history=(
             ("6.2.0", "Added the `IDLE` option and exclusive range intervals."),
         ))
def xpending(ctx, argv):
    """XPENDING key group [[IDLE min-idle-time] start end count [consumer]]

    Summary form: [count, smallest ID, greatest ID, [[consumer, count], ...]]. Extended
    form: [[id, consumer, idle-ms, deliveries], ...] in ID order."""
    argc = len(argv)
    if argc != 3 and not 6 <= argc <= 9:
        raise CommandError(E.SYNTAX)
    min_idle = 0
    start = end = count = 0
    consumer_name = None
    if argc >= 6:
        at = 3
        if argv[3].upper() == b"IDLE":
            min_idle = parse_int(argv[4])
            if argc < 8:
                raise CommandError(E.SYNTAX)
            at = 5
        count = max(parse_int(argv[at + 2]), 0)
        start = _interval(argv[at], end=False)
        end = _interval(argv[at + 1], end=True)
        if at + 3 < argc:
            consumer_name = argv[at + 3]  # any argument after it is ignored, as in Redis
    s = read_stream(ctx.db, argv[1])
    g = s.groups.get(argv[2]) if s is not None else None
    if g is None:
        raise CommandError(E.grp_nogroup(argv[1], argv[2]))
    if argc == 3:
        if not g.pel:
            return [0, None, None, NULL_ARRAY]
        return [len(g.pel), format_id(g.first_pending()), format_id(g.last_pending()),
                [[name, b"%d" % n] for name, n in g.owner_counts()]]
    consumer = None
    if consumer_name is not None:
        consumer = g.get_consumer(consumer_name)
        if consumer is None:
            return []
    now = ctx.now_ms
    out = []
    if not count or start > end:
        return out
    for sid in g.pending_ids(start, end, consumer):
        pe = g.pel[sid]
        if min_idle and not pe.nacked and now - pe.delivery_time < min_idle:
            continue
        out.append([format_id(sid), _consumer_name(pe), _nacked_idle(pe, now),
                    _wire_count(pe.delivery_count)])
        if len(out) >= count:
            break
    return out


# --- XCLAIM / XAUTOCLAIM ----------------------------------------------------------------------

@command("XCLAIM", -6, "write fast", (1, 1, 1),
         tips="nondeterministic_output",
         key_flags="RW update", group="stream", since="5.0.0",
         summary="Changes, or acquires, ownership of a message in a consumer group, as if "
                 "the message was delivered a consumer group member.",
         complexity="O(log N) with N being the number of messages in the PEL of the "
                    "consumer group.",
         args=(key(), string("group"), string("consumer"), string("min-idle-time"),
               string("id", multiple=True),
               integer("ms", token="IDLE", optional=True),
               Arg("unix-time-milliseconds", "unix-time", token="TIME", optional=True),
               integer("count", token="RETRYCOUNT", optional=True),
               token("FORCE", optional=True), token("JUSTID", optional=True),
               string("lastid", token="LASTID", optional=True)))
def xclaim(ctx, argv):
    """XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms]
    [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]

    Transfers pending entries idle for at least min-idle-time to ``consumer``."""
    db = ctx.db
    s = read_stream(db, argv[1])
    g = s.groups.get(argv[2]) if s is not None else None
    if g is None:
        raise CommandError(E.grp_nogroup(argv[1], argv[2]))
    min_idle = max(parse_int(argv[4], E.GRP_XCLAIM_MIN_IDLE), 0)
    ids = []
    j = 5
    while j < len(argv):
        sid = parse_id(argv[j], strict=True)
        if sid is None:
            break
        ids.append(sid)
        j += 1
    now = ctx.now_ms
    delivery = None
    retry = -1
    force = justid = False
    last_id = None
    n = len(argv)
    while j < n:
        more = n - 1 - j
        opt = argv[j].upper()
        if opt == b"FORCE":
            force = True
        elif opt == b"JUSTID":
            justid = True
        elif opt == b"IDLE" and more:
            j += 1
            delivery = now - parse_int(argv[j], E.GRP_XCLAIM_IDLE)
        elif opt == b"TIME" and more:
            j += 1
            delivery = parse_int(argv[j], E.GRP_XCLAIM_TIME)
        elif opt == b"RETRYCOUNT" and more:
            j += 1
            retry = parse_int(argv[j], E.GRP_XCLAIM_RETRYCOUNT)
        elif opt == b"LASTID" and more:
            j += 1
            last_id = strict_id(argv[j])
        else:
            raise CommandError(E.grp_xclaim_option(argv[j]))
        j += 1
    if delivery is None or delivery < 0 or delivery > now:
        delivery = now  # a bogus time is not an error (client clocks differ)
    moved = last_id is not None and last_id > g.last_id
    if moved:
        g.last_id = last_id
    consumer, created = g.create_consumer(argv[3], now)
    if created:
        db.notify(EV_STREAM, b"xgroup-createconsumer", argv[1])
    changes = 0
    consumer.seen_time = now
    out = []
    for sid in ids:
        pe = g.pel.get(sid)
        fields = s.get(sid)
        if fields is None:
            if pe is not None:  # the entry is gone: its PEL entry goes too
                g.remove(sid)
                changes += 1
            continue
        if pe is None:
            if not force:
                continue
            pe = g.add_pending(sid, None, now, 1)
        elif pe.consumer is not None and min_idle and now - pe.delivery_time < min_idle:
            continue  # owned and not idle enough (unowned/NACKed entries always pass)
        if retry >= 0:
            dc = retry
        elif not justid:
            dc = pe.delivery_count + 1
        else:
            dc = pe.delivery_count
        g.claim(pe, consumer, delivery, dc)
        consumer.active_time = now
        changes += 1
        out.append(format_id(sid) if justid else entry_reply(sid, fields))
    if moved and not changes:
        changes = 1  # Redis counts the new last ID only when no entry change carries it
    changes += created
    if changes:
        db.modified(argv[1], changes)
    return out


@command("XAUTOCLAIM", -6, "write fast", (1, 1, 1),
         tips="nondeterministic_output",
         key_flags="RW delete", group="stream", since="6.2.0",
         summary="Changes, or acquires, ownership of messages in a consumer group, as if "
                 "the messages were delivered to as consumer group member.",
         complexity="O(1) if COUNT is small.",
         args=(key(), string("group"), string("consumer"), string("min-idle-time"),
               string("start"), integer("count", token="COUNT", optional=True),
               token("JUSTID", optional=True)),
         history=(
             ("7.0.0", "Added an element to the reply array, containing deleted entries the command cleared from the PEL"),
         ))
def xautoclaim(ctx, argv):
    """XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]

    Scans the PEL in ID order from ``start`` (at most COUNT*10 entries), claiming idle
    entries; replies [next-cursor, claimed, deleted-ids]."""
    db = ctx.db
    # Redis looks the key up (a keyspace hit or miss) before it reads the arguments, and
    # checks what it found after them.
    s = db.read(argv[1])
    min_idle = max(parse_int(argv[4], E.GRP_XAUTOCLAIM_MIN_IDLE), 0)
    start = _interval(argv[5], end=False)
    count = 100
    justid = False
    j, n = 6, len(argv)
    while j < n:
        more = n - 1 - j
        opt = argv[j].upper()
        if opt == b"COUNT" and more:
            j += 1
            try:
                count = parse_int(argv[j])
            except CommandError:
                raise CommandError(E.GRP_XAUTOCLAIM_COUNT) from None
            if count < 1 or count > LLONG_MAX // 16:  # Redis's upper bound: 2**59 - 1
                raise CommandError(E.GRP_XAUTOCLAIM_COUNT)
        elif opt == b"JUSTID":
            justid = True
        else:
            raise CommandError(E.SYNTAX)
        j += 1
    if s is not None and type(s) is not Stream:
        raise CommandError(E.WRONGTYPE)
    g = s.groups.get(argv[2]) if s is not None else None
    if g is None:
        raise CommandError(E.grp_nogroup(argv[1], argv[2]))
    now = ctx.now_ms
    consumer, created = g.create_consumer(argv[3], now)
    if created:
        db.notify(EV_STREAM, b"xgroup-createconsumer", argv[1])
    changes = int(created)
    consumer.seen_time = now
    attempts = count * 10
    claimed = []
    deleted = []
    cursor = 0
    it = g.pending_ids(start, MAX_ID)
    # Redis walks the PEL while it has attempts and room left, then reports the next
    # unexamined ID as the cursor (0-0 at the end). The snapshot below lets us change
    # the PEL while walking it.
    scan = list(islice(it, attempts + 1))
    k = 0
    while k < len(scan) and attempts and count:
        attempts -= 1
        sid = scan[k]
        k += 1
        pe = g.pel[sid]
        fields = s.get(sid)
        if fields is None:
            g.remove(sid)
            deleted.append(format_id(sid))
            changes += 1
            count -= 1
            continue
        if min_idle and not pe.nacked and now - pe.delivery_time < min_idle:
            continue
        dc = pe.delivery_count if justid else pe.delivery_count + 1
        g.claim(pe, consumer, now, dc)
        consumer.active_time = now
        changes += 1
        claimed.append(format_id(sid) if justid else entry_reply(sid, fields))
        count -= 1
    if k < len(scan):
        cursor = scan[k]
    if changes:
        db.modified(argv[1], changes)
    return [format_id(cursor), claimed, deleted]


# --- XINFO GROUPS / CONSUMERS / STREAM FULL groups ------------------------------------------

if b"xinfo" not in TABLE:  # normally registered by the stream family (commands/streams.py)
    command("XINFO", -2, group="stream", since="5.0.0",
            summary="A container for stream introspection commands.",
            complexity="Depends on subcommand.", container=True)


def _entries_read_or_null(g):
    return None if g.entries_read == UNKNOWN else g.entries_read


@command("XINFO|GROUPS", 3, "readonly", (2, 2, 1),
         key_flags="RO access", group="stream", since="5.0.0",
         summary="Returns a list of the consumer groups of a stream.", complexity="O(1)",
         args=(key(),),
         history=(
             ("7.0.0", "Added the `entries-read` and `lag` fields"),
         ))
def xinfo_groups(ctx, argv):
    """XINFO GROUPS key

    One map per group, in name order: name, consumers, pending, last-delivered-id,
    entries-read, lag."""
    s = read_stream(ctx.db, argv[2])
    if s is None:
        raise CommandError(E.NO_SUCH_KEY)
    out = []
    for name in sorted(s.groups):
        g = s.groups[name]
        out.append(Map([
            ("name", name), ("consumers", len(g.consumers)), ("pending", len(g.pel)),
            ("last-delivered-id", format_id(g.last_id)),
            ("entries-read", _entries_read_or_null(g)), ("lag", g.lag(s)),
        ]))
    return out


@command("XINFO|CONSUMERS", 4, "readonly", (2, 2, 1),
         tips="nondeterministic_output",
         key_flags="RO access", group="stream", since="5.0.0",
         summary="Returns a list of the consumers in a consumer group.", complexity="O(1)",
         args=(key(), string("group")))
def xinfo_consumers(ctx, argv):
    """XINFO CONSUMERS key group

    One map per consumer, in name order: name, pending, idle, inactive."""
    s = read_stream(ctx.db, argv[2])
    if s is None:
        raise CommandError(E.NO_SUCH_KEY)
    g = s.groups.get(argv[3])
    if g is None:
        raise CommandError(E.grp_nogroup_for_key(argv[2], argv[3]))
    now = ctx.now_ms
    out = []
    for c in g.sorted_consumers():
        idle = max(now - c.seen_time, 0)
        inactive = max(now - c.active_time, 0) if c.active_time != -1 else -1
        out.append(Map([("name", c.name), ("pending", len(c.pel)), ("idle", idle),
                        ("inactive", inactive)]))
    return out


def full_groups_section(s: Stream, count: int) -> list:
    """The ``groups`` value of XINFO STREAM key FULL [COUNT count] (0 = everything): one map
    per group with its PEL and consumers, each PEL listing at most ``count`` rows."""
    out = []
    for name in sorted(s.groups):
        g = s.groups[name]
        rows = g.pending_ids(0, MAX_ID)
        if count:
            rows = islice(rows, count)
        pending = []
        for sid in rows:
            pe = g.pel[sid]
            pending.append([format_id(sid), _consumer_name(pe), pe.delivery_time,
                            _wire_count(pe.delivery_count)])
        consumers = []
        for c in g.sorted_consumers():
            ids = iter(c.pel)
            if count:
                ids = islice(ids, count)
            cp = []
            for sid in ids:
                pe = g.pel[sid]
                cp.append([format_id(sid), pe.delivery_time, _wire_count(pe.delivery_count)])
            consumers.append(Map([("name", c.name), ("seen-time", c.seen_time),
                                  ("active-time", c.active_time),
                                  ("pel-count", len(c.pel)), ("pending", cp)]))
        out.append(Map([
            ("name", name), ("last-delivered-id", format_id(g.last_id)),
            ("entries-read", _entries_read_or_null(g)), ("lag", g.lag(s)),
            ("pel-count", len(g.pel)), ("pending", pending), ("consumers", consumers),
            ("nacked-count", g.nacked_count),
        ]))
    return out
