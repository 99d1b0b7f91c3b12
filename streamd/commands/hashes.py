"""Hash commands: HSET, HSETNX, HGET, HMGET, HMSET, HGETALL, HDEL, HEXISTS, HLEN, HKEYS,
HVALS, HINCRBY, HINCRBYFLOAT, HSCAN, HSTRLEN, HRANDFIELD; and field expiration: HEXPIRE,
HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST,
HGETDEL, HGETEX, HSETEX.

A hash is a ``store.hashes.Hash`` (a dict of bytes to bytes that remembers its encoding
and its fields' TTLs). Every command here first drops the fields whose TTL has passed
(``_get``), so none sees or counts them; the cron drops the others. An emptied hash is
removed, as in Redis. HSET gives a field a fresh life without TTL; HINCRBY, HINCRBYFLOAT
and HSETEX KEEPTTL keep it.
"""

from __future__ import annotations

import random

from ..protocol.replies import OK, Map
from ..store import hashes as H
from ..store.keyspace import EV_GENERIC, EV_HASH, EV_NEW
from . import errors as E
from . import keyutil as K
from .args import LLONG_MAX, LLONG_MIN, Args, parse_int, parse_int_in
from .errors import CommandError
from .keys import parse_scan_options
from .strings import LongDoubleInf, incr_by_float, parse_long_double
from .table import Arg, block, command, integer, key, oneof, pattern, string, token

_ONE_KEY = (1, 1, 1)
NOT_INT = "ERR hash value is not an integer"
NOT_FLOAT = "ERR hash value is not a float"
# Redis HFE_MAX_ABS_TIME_MSEC: field expiry times are 48-bit, two bits kept back.
HFE_MAX_MS = (1 << 46) - 1


def _get(ctx, k: bytes):
    """The hash at ``k`` without its expired fields (``None`` if absent or emptied by
    them); WRONGTYPE for another type."""
    h = K.lookup(ctx.db, k, dict)
    if h is not None and h.ttls and h.next_due < ctx.now_ms:
        return ctx.db.expire_fields(k, h, ctx.now_ms)
    return h


def _read(ctx, k: bytes):
    """``_get`` for the commands Redis counts as reads (keyspace hits / misses)."""
    h = K.lookup_read(ctx.db, k, dict)
    if h is not None and h.ttls and h.next_due < ctx.now_ms:
        return ctx.db.expire_fields(k, h, ctx.now_ms)
    return h


def _get_or_create(ctx, k: bytes):
    """(hash, created): the hash at ``k``, or a new empty one not yet in the keyspace."""
    h = _get(ctx, k)
    if h is None:
        return K.Hash(), True
    return h, False


def _commit(ctx, k: bytes, h, created: bool, *items: bytes, changes: int = 1,
            event: bytes = b"hset") -> None:
    """Store a write of the field/value ``items`` and announce it, naming those fields."""
    if isinstance(h, K.Hash):
        K.hash_note_write(h, ctx.config, *items)
    db = ctx.db
    if created:
        db.add(k, h, changes)
    else:
        db.modified(k, changes)
    if db.keyspace.events:
        db.notify(EV_HASH, event, k, items[::2])


# --- writes ------------------------------------------------------------------------------

def _hset(ctx, argv, name: str) -> int:
    if len(argv) % 2:
        raise CommandError(E.wrong_arity(name))
    k = argv[1]
    h, created = _get_or_create(ctx, k)
    added = 0
    ttls = h.ttls
    for i in range(2, len(argv), 2):
        if argv[i] not in h:
            added += 1
        elif ttls and argv[i] in ttls:
            h.clear_ttl(argv[i])  # a value set anew has no TTL
        h[argv[i]] = argv[i + 1]
    # Redis counts every pair given, new or not, as a change.
    _commit(ctx, k, h, created, *argv[2:], changes=(len(argv) - 2) // 2)
    return added


@command("hset", -4, "write denyoom fast", _ONE_KEY,
         key_flags="RW update", group="hash", since="2.0.0",
         summary="Creates or modifies the value of a field in a hash.",
         complexity="O(1) for each field/value pair added, so O(N) to add N field/value "
                    "pairs when the command is called with multiple field/value pairs.",
         args=(key(), block("data", string("field"), string("value"), multiple=True)),
         history=(
             ("4.0.0", "Accepts multiple `field` and `value` arguments."),
         ))
def hset(ctx, argv):
    """HSET key field value [field value ...]"""
    return _hset(ctx, argv, "hset")


@command("hmset", -4, "write denyoom fast", _ONE_KEY,
         key_flags="RW update", group="hash", since="2.0.0",
         summary="Sets the values of multiple fields.",
         complexity="O(N) where N is the number of fields being set.",
         args=(key(), block("data", string("field"), string("value"), multiple=True)),
         deprecated=("4.0.0", "`HSET` with multiple field-value pairs"))
def hmset(ctx, argv):
    """HMSET key field value [field value ...]"""
    _hset(ctx, argv, "hmset")
    return OK


@command("hsetnx", 4, "write denyoom fast", _ONE_KEY,
         key_flags="RW insert", group="hash", since="2.0.0",
         summary="Sets the value of a field in a hash only when the field doesn't exist.",
         complexity="O(1)", args=(key(), string("field"), string("value")))
def hsetnx(ctx, argv):
    """HSETNX key field value"""
    k, field, value = argv[1], argv[2], argv[3]
    h, created = _get_or_create(ctx, k)
    if field in h:
        return 0
    h[field] = value
    _commit(ctx, k, h, created, field, value)
    return 1


@command("hdel", -3, "write fast", _ONE_KEY,
         key_flags="RW delete", group="hash", since="2.0.0",
         summary="Deletes one or more fields and their values from a hash. Deletes the hash "
                 "if no fields remain.",
         complexity="O(N) where N is the number of fields to be removed.",
         args=(key(), string("field", multiple=True)),
         history=(
             ("2.4.0", "Accepts multiple `field` arguments."),
         ))
def hdel(ctx, argv):
    """HDEL key field [field ...]"""
    db = ctx.db
    k = argv[1]
    h = _get(ctx, k)
    if h is None:
        return 0
    removed = []
    for field in argv[2:]:
        if h.remove(field):
            removed.append(field)
            if not h:
                break
    if removed:  # one change per field removed; removing the key adds none
        if h:
            db.modified(k, len(removed))
            db.notify(EV_HASH, b"hdel", k, removed)
        else:
            db.delete(k, changes=len(removed))
            db.notify(EV_HASH, b"hdel", k, removed)
            db.notify(EV_GENERIC, b"del", k)
    return len(removed)


@command("hincrby", 4, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="hash", since="2.0.0",
         summary="Increments the integer value of a field in a hash by a number. Uses 0 as "
                 "initial value if the field doesn't exist.", complexity="O(1)",
         args=(key(), string("field"), integer("increment")))
def hincrby(ctx, argv):
    """HINCRBY key field increment"""
    delta = parse_int(argv[3])
    k, field = argv[1], argv[2]
    h, created = _get_or_create(ctx, k)
    old = h.get(field)
    current = 0 if old is None else parse_int(old, NOT_INT)
    result = current + delta
    if not LLONG_MIN <= result <= LLONG_MAX:
        raise CommandError(E.OVERFLOW)
    text = str(result).encode()
    h[field] = text
    _commit(ctx, k, h, created, field, text, event=b"hincrby")
    return result


@command("hincrbyfloat", 4, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="hash", since="2.6.0",
         summary="Increments the floating point value of a field by a number. Uses 0 as "
                 "initial value if the field doesn't exist.", complexity="O(1)",
         args=(key(), string("field"), Arg("increment", "double")))
def hincrbyfloat(ctx, argv):
    """HINCRBYFLOAT key field increment"""
    k, field, incr = argv[1], argv[2], argv[3]
    try:
        parse_long_double(incr, E.NOT_FLOAT)
    except LongDoubleInf:
        # Redis refuses an infinite increment up front, before looking at the key.
        raise CommandError("ERR value is NaN or Infinity") from None
    h, created = _get_or_create(ctx, k)
    text = incr_by_float(h.get(field), incr, NOT_FLOAT)
    h[field] = text
    _commit(ctx, k, h, created, field, text, event=b"hincrbyfloat")
    return text


# --- reads -------------------------------------------------------------------------------

@command("hget", 3, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns the value of a field in a hash.", complexity="O(1)",
         args=(key(), string("field")),
         pure=True)
def hget(ctx, argv):
    """HGET key field"""
    h = K.lookup_read(ctx.db, argv[1], dict)  # _read inlined: HGET is the hot read
    if h is None:
        return None
    if h.ttls and h.next_due < ctx.now_ms:
        h = ctx.db.expire_fields(argv[1], h, ctx.now_ms)
        if h is None:
            return None
    return h.get(argv[2])


@command("hmget", -3, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns the values of all fields in a hash.",
         complexity="O(N) where N is the number of fields being requested.",
         args=(key(), string("field", multiple=True)),
         pure=True)
def hmget(ctx, argv):
    """HMGET key field [field ...]"""
    h = _read(ctx, argv[1]) or {}
    return [h.get(f) for f in argv[2:]]


@command("hgetall", 2, "readonly", _ONE_KEY,
         tips="nondeterministic_output_order",
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns all fields and values in a hash.",
         complexity="O(N) where N is the size of the hash.", args=(key(),),
         pure=True)
def hgetall(ctx, argv):
    """HGETALL key"""
    h = _read(ctx, argv[1])
    return Map(list(h.items()) if h else [])


@command("hkeys", 2, "readonly", _ONE_KEY,
         tips="nondeterministic_output_order",
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns all fields in a hash.",
         complexity="O(N) where N is the size of the hash.", args=(key(),),
         pure=True)
def hkeys(ctx, argv):
    """HKEYS key"""
    h = _read(ctx, argv[1])
    return list(h) if h else []


@command("hvals", 2, "readonly", _ONE_KEY,
         tips="nondeterministic_output_order",
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns all values in a hash.",
         complexity="O(N) where N is the size of the hash.", args=(key(),),
         pure=True)
def hvals(ctx, argv):
    """HVALS key"""
    h = _read(ctx, argv[1])
    return list(h.values()) if h else []


@command("hlen", 2, "readonly fast", _ONE_KEY,
         key_flags="RO", group="hash", since="2.0.0",
         summary="Returns the number of fields in a hash.", complexity="O(1)", args=(key(),),
         pure=True)
def hlen(ctx, argv):
    """HLEN key"""
    h = _read(ctx, argv[1])
    return len(h) if h else 0


@command("hexists", 3, "readonly fast", _ONE_KEY,
         key_flags="RO", group="hash", since="2.0.0",
         summary="Determines whether a field exists in a hash.", complexity="O(1)",
         args=(key(), string("field")),
         pure=True)
def hexists(ctx, argv):
    """HEXISTS key field"""
    h = _read(ctx, argv[1])
    return 1 if h and argv[2] in h else 0


@command("hstrlen", 3, "readonly fast", _ONE_KEY,
         key_flags="RO", group="hash", since="3.2.0",
         summary="Returns the length of the value of a field.", complexity="O(1)",
         args=(key(), string("field")),
         pure=True)
def hstrlen(ctx, argv):
    """HSTRLEN key field"""
    h = _read(ctx, argv[1])
    value = h.get(argv[2]) if h else None
    return 0 if value is None else len(value)


_LONG_MAX = LLONG_MAX


@command("hrandfield", -2, "readonly", _ONE_KEY,
         tips="nondeterministic_output",
         key_flags="RO access", group="hash", since="6.2.0",
         summary="Returns one or more random fields from a hash.",
         complexity="O(N) where N is the number of fields returned",
         args=(key(), block("options", integer("count"),
                            token("WITHVALUES", optional=True), optional=True)),
         pure=True)
def hrandfield(ctx, argv):
    """HRANDFIELD key [count [WITHVALUES]]"""
    if len(argv) == 2:
        h = _read(ctx, argv[1])
        return random.choice(list(h)) if h else None
    count = parse_int(argv[2])
    if not -_LONG_MAX <= count <= _LONG_MAX:
        raise CommandError(f"ERR value is out of range, value must between {-_LONG_MAX} "
                           f"and {_LONG_MAX}")
    withvalues = False
    if len(argv) > 4 or (len(argv) == 4 and argv[3].upper() != b"WITHVALUES"):
        raise CommandError(E.SYNTAX)
    if len(argv) == 4:
        withvalues = True
        if not -(_LONG_MAX // 2) <= count <= _LONG_MAX // 2:
            raise CommandError("ERR value is out of range")
    h = _read(ctx, argv[1])
    if not h or count == 0:
        return []
    fields = list(h)
    if count < 0:
        picked = [random.choice(fields) for _ in range(-count)]
    elif count >= len(fields):
        picked = fields
    else:
        picked = random.sample(fields, count)
    if not withvalues:
        return picked
    if ctx.resp == 3:
        return [[f, h[f]] for f in picked]
    out = []
    for f in picked:
        out.append(f)
        out.append(h[f])
    return out


@command("hscan", -3, "readonly", _ONE_KEY,
         tips="nondeterministic_output",
         key_flags="RO access", group="hash", since="2.8.0",
         summary="Iterates over fields and values of a hash.",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough "
                    "command calls for the cursor to return back to 0. N is the number of "
                    "elements inside the collection.",
         args=(key(), integer("cursor"), pattern(token="MATCH", optional=True),
               integer("count", token="COUNT", optional=True),
               token("NOVALUES", optional=True, since="7.4.0")),
         pure=True)
def hscan(ctx, argv):
    """HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]"""
    cursor = K.parse_cursor(argv[2])
    h = _read(ctx, argv[1])
    if h is None:
        return [b"0", []]
    count, pat, _, novalues = parse_scan_options(Args(argv, 3), allow_type=False)
    if K.encoding(h, ctx.config) == "listpack":
        # Redis walks a listpack-encoded hash in one call whatever COUNT says.
        nxt, fields = 0, list(h)
    else:
        nxt, fields = K.SNAPSHOTS.step(h, lambda: list(h), cursor, count)
    out = []
    for f in fields:
        value = h.get(f)
        if value is None or (pat is not None and not K.glob_match(pat, f)):
            continue
        out.append(f)
        if not novalues:
            out.append(value)
    return [str(nxt).encode(), out]


# --- field expiration ----------------------------------------------------------------------

_FIELDS_BLOCK = block("fields", integer("numfields"), string("field", multiple=True),
                      token="FIELDS")


def _fields(argv, at: int, count_error: str, name: str) -> list[bytes]:
    """The fields of ``FIELDS numfields field ...`` whose FIELDS token should be at
    ``at``, checked in Redis's order."""
    if argv[at].upper() != b"FIELDS":
        raise CommandError(E.HASH_FIELDS_MISSING)
    if at + 1 >= len(argv):
        raise CommandError(E.wrong_arity(name))
    count = parse_int(argv[at + 1], count_error)
    if count < 1:
        raise CommandError(count_error)
    if count != len(argv) - at - 2:
        raise CommandError(E.HASH_NUMFIELDS_MISMATCH)
    return argv[at + 2:]


def _expire_at(arg: bytes, unit_ms: int, base_ms: int, name: str) -> int:
    """An expiry argument as unix ms: ``arg`` units of ``unit_ms`` after ``base_ms``
    (0 for absolute times), within Redis's field-expiry range."""
    value = parse_int(arg)
    if value < 0:
        raise CommandError(E.HASH_EXPIRE_NEGATIVE)
    if unit_ms != 1:
        if value > HFE_MAX_MS // unit_ms:
            raise CommandError(E.INVALID_EXPIRE.format(name))
        value *= unit_ms
    if value > HFE_MAX_MS - base_ms:
        raise CommandError(E.INVALID_EXPIRE.format(name))
    return value + base_ms


def _after_ttl_change(ctx, k: bytes, h, changes: int, tracked: bool,
                      *events: tuple[bytes, list]) -> None:
    """Account for a command that changed ``changes`` fields' TTLs (or deleted them):
    an emptied hash goes, a hash with new TTLs joins the expiry index. ``events`` are the
    command's hash events, each with the fields it names (one that names none is not
    sent); an emptied hash adds ``del`` after them, as in Redis."""
    db = ctx.db
    if not h:
        db.delete(k, changes=changes)
    elif changes:
        db.modified(k, changes)
        if tracked:
            db.track_field_ttls(k, h)
    for event, fields in events:
        if fields:
            db.notify(EV_HASH, event, k, fields)
    if not h:
        db.notify(EV_GENERIC, b"del", k)


_CONDITIONS = {b"NX": "nx", b"XX": "xx", b"GT": "gt", b"LT": "lt"}


def _hexpire(ctx, argv, name: str, unit_ms: int, relative: bool):
    k = argv[1]
    now = ctx.now_ms
    h = _get(ctx, k)
    when = _expire_at(argv[2], unit_ms, now if relative else 0, name)
    cond = _CONDITIONS.get(argv[3].upper(), "")
    fields = _fields(argv, 4 if cond else 3, E.HASH_NUMFIELDS_HEXPIRE, name)
    if h is None:
        return [H.NO_FIELD] * len(fields)
    h.enable_field_ttls()
    codes = [h.expire_field(f, when, cond, now) for f in fields]
    deleted = [f for f, code in zip(fields, codes) if code == H.DELETED]
    updated = [f for f, code in zip(fields, codes) if code == H.SET]
    ctx.keyspace.expired_subkeys += len(deleted)
    # The fields a past time deleted, then those given a TTL (Redis 8.8 sends both).
    _after_ttl_change(ctx, k, h, len(deleted) + len(updated), True,
                      (b"hdel", deleted), (b"hexpire", updated))
    return codes


def _hexpire_row(name: str, unit_ms: int, relative: bool, summary: str, time_arg):
    @command(name, -6, "write fast", _ONE_KEY,
             key_flags="RW update", group="hash", since="7.4.0", summary=summary,
             complexity="O(N) where N is the number of specified fields",
             args=(key(), time_arg,
                   oneof("condition", token("NX"), token("XX"), token("GT"), token("LT"),
                         optional=True),
                   _FIELDS_BLOCK))
    def handler(ctx, argv):
        return _hexpire(ctx, argv, name, unit_ms, relative)

    handler.__doc__ = (f"{name.upper()} key {time_arg.name} [NX | XX | GT | LT] "
                       "FIELDS numfields field [field ...]")
    handler.__name__ = name
    return handler


hexpire = _hexpire_row(
    "hexpire", 1000, True, "Set expiry for hash field using relative time to expire (seconds)",
    integer("seconds"))
hpexpire = _hexpire_row(
    "hpexpire", 1, True,
    "Set expiry for hash field using relative time to expire (milliseconds)",
    integer("milliseconds"))
hexpireat = _hexpire_row(
    "hexpireat", 1000, False,
    "Set expiry for hash field using an absolute Unix timestamp (seconds)",
    Arg("unix-time-seconds", "unix-time"))
hpexpireat = _hexpire_row(
    "hpexpireat", 1, False,
    "Set expiry for hash field using an absolute Unix timestamp (milliseconds)",
    Arg("unix-time-milliseconds", "unix-time"))


def _httl(ctx, argv, name: str, unit_ms: int, relative: bool):
    h = _read(ctx, argv[1])
    fields = _fields(argv, 2, E.HASH_NUMFIELDS, name)
    if h is None:
        return [-2] * len(fields)
    base = ctx.now_ms if relative else 0
    out = []
    for f in fields:
        if f not in h:
            out.append(-2)
            continue
        when = h.ttl_of(f)
        if when is None:
            out.append(-1)
        elif unit_ms == 1:
            out.append(when - base)
        else:
            out.append((when + unit_ms - 1 - base) // unit_ms)  # Redis rounds seconds up
    return out


def _httl_row(name: str, unit_ms: int, relative: bool, summary: str):
    # A remaining time changes from call to call, as TTL's does; an absolute time does not.
    @command(name, -5, "readonly fast", _ONE_KEY,
             tips="nondeterministic_output" if relative else "",
             key_flags="RO access", group="hash", since="7.4.0", summary=summary,
             complexity="O(N) where N is the number of specified fields",
             args=(key(), _FIELDS_BLOCK))
    def handler(ctx, argv):
        return _httl(ctx, argv, name, unit_ms, relative)

    handler.__doc__ = f"{name.upper()} key FIELDS numfields field [field ...]"
    handler.__name__ = name
    return handler


httl = _httl_row("httl", 1000, True, "Returns the TTL in seconds of a hash field.")
hpttl = _httl_row("hpttl", 1, True, "Returns the TTL in milliseconds of a hash field.")
hexpiretime = _httl_row(
    "hexpiretime", 1000, False,
    "Returns the expiration time of a hash field as a Unix timestamp, in seconds.")
hpexpiretime = _httl_row(
    "hpexpiretime", 1, False,
    "Returns the expiration time of a hash field as a Unix timestamp, in msec.")


@command("hpersist", -5, "write fast", _ONE_KEY,
         key_flags="RW update", group="hash", since="7.4.0",
         summary="Removes the expiration time for each specified field",
         complexity="O(N) where N is the number of specified fields",
         args=(key(), _FIELDS_BLOCK))
def hpersist(ctx, argv):
    """HPERSIST key FIELDS numfields field [field ...]"""
    k = argv[1]
    h = _get(ctx, k)
    fields = _fields(argv, 2, E.HASH_NUMFIELDS, "hpersist")
    if h is None:
        return [-2] * len(fields)
    out = [(1 if h.clear_ttl(f) else -1) if f in h else -2 for f in fields]
    if 1 in out:
        ctx.db.modified(k)  # Redis counts one change however many fields it persisted
        ctx.db.notify(EV_HASH, b"hpersist", k,
                      [f for f, code in zip(fields, out) if code == 1])
    return out


@command("hgetdel", -5, "write fast", _ONE_KEY,
         key_flags="RW access delete", group="hash", since="8.0.0",
         summary="Returns the value of a field and deletes it from the hash.",
         complexity="O(N) where N is the number of specified fields",
         args=(key(), _FIELDS_BLOCK))
def hgetdel(ctx, argv):
    """HGETDEL key FIELDS numfields field [field ...]"""
    k = argv[1]
    h = _get(ctx, k)
    fields = _fields(argv, 2, E.HASH_NUMFIELDS, "hgetdel")
    if h is None:
        return [None] * len(fields)
    out = []
    deleted = []
    for f in fields:
        value = h.get(f)
        out.append(value)
        if value is not None:
            h.remove(f)
            deleted.append(f)
    if deleted:
        _after_ttl_change(ctx, k, h, len(deleted), False, (b"hdel", deleted))
    return out


_EXPIRY_UNITS = {b"EX": (1000, True), b"PX": (1, True), b"EXAT": (1000, False),
                 b"PXAT": (1, False)}
_EXPIRATION_ARG = (integer("seconds", token="EX"), integer("milliseconds", token="PX"),
                   Arg("unix-time-seconds", "unix-time", token="EXAT"),
                   Arg("unix-time-milliseconds", "unix-time", token="PXAT"))


@command("hgetex", -5, "write fast", _ONE_KEY,
         key_flags="RW access update", key_notes="RW and UPDATE because it changes the TTL",
         group="hash", since="8.0.0",
         summary="Get the value of one or more fields of a given hash key, and optionally "
                 "set their expiration.",
         complexity="O(N) where N is the number of specified fields",
         args=(key(), oneof("expiration", *_EXPIRATION_ARG, token("PERSIST"), optional=True),
               _FIELDS_BLOCK))
def hgetex(ctx, argv):
    """HGETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
    PXAT unix-time-milliseconds | PERSIST] FIELDS numfields field [field ...]"""
    k = argv[1]
    now = ctx.now_ms
    h = _get(ctx, k)
    option = argv[2].upper()
    when = None
    at = 2
    if option in _EXPIRY_UNITS:
        unit_ms, relative = _EXPIRY_UNITS[option]
        when = _expire_at(argv[3], unit_ms, now if relative else 0, "hgetex")
        at = 4
    elif option == b"PERSIST":
        at = 3
    if at >= len(argv):
        raise CommandError(E.wrong_arity("hgetex"))
    fields = _fields(argv, at, E.HASH_NUMFIELDS, "hgetex")
    if h is None:
        return [None] * len(fields)
    if at == 2:
        return [h.get(f) for f in fields]
    h.enable_field_ttls()
    out = []
    updated = []
    deleted = []
    for f in fields:
        value = h.get(f)
        out.append(value)
        if value is None:
            continue
        if when is None:
            if h.clear_ttl(f):
                updated.append(f)
        else:
            code = h.expire_field(f, when, "", now)
            if code == H.SET:
                updated.append(f)
            elif code == H.DELETED:
                deleted.append(f)
    ctx.keyspace.expired_subkeys += len(deleted)
    # One event: the TTLs set or removed, else the fields a past time deleted.
    if updated:
        event = (b"hexpire" if when is not None else b"hpersist"), updated
    else:
        event = b"hdel", deleted
    _after_ttl_change(ctx, k, h, len(updated) + len(deleted), when is not None, event)
    return out


def _hsetex_options(argv, now: int):
    """HSETEX's options as Redis reads them, up to FIELDS: (FNX/FXX or b"", expiry
    option or b"", expiry time in unix ms or None, index of the first field)."""
    cond = expiry = b""
    when = None
    i = 2
    while i < len(argv):
        word = argv[i].upper()
        if word == b"FIELDS":
            if i >= len(argv) - 3:
                raise CommandError(E.wrong_arity("hsetex"))
            count = parse_int_in(argv[i + 1], 1, 2**31 - 1, E.HSETEX_NUMFIELDS)
            rest = len(argv) - i - 2
            if rest % 2 or count != rest // 2:
                raise CommandError(E.wrong_arity("hsetex"))
            return cond, expiry, when, i + 2
        if word in _EXPIRY_UNITS or word == b"KEEPTTL":
            if expiry:
                raise CommandError(E.HSETEX_EXPIRATION)
            expiry = word
            if word != b"KEEPTTL":
                if i >= len(argv) - 1:
                    raise CommandError(E.HSETEX_MISSING_EXPIRE)
                i += 1
                unit_ms, relative = _EXPIRY_UNITS[word]
                when = _expire_at(argv[i], unit_ms, now if relative else 0, "hsetex")
        elif word in (b"FNX", b"FXX"):
            if cond:
                raise CommandError(E.HSETEX_FNX_FXX)
            cond = word
        else:
            raise CommandError(E.unknown_argument(argv[i]))
        i += 1
    raise CommandError(E.wrong_arity("hsetex"))  # no FIELDS: arity -6 leaves no way here


@command("hsetex", -6, "write denyoom fast", _ONE_KEY,
         key_flags="RW update", group="hash", since="8.0.0",
         summary="Set the value of one or more fields of a given hash key, and optionally "
                 "set their expiration.",
         complexity="O(N) where N is the number of fields being set.",
         args=(key(), oneof("condition", token("FNX"), token("FXX"), optional=True),
               oneof("expiration", *_EXPIRATION_ARG, token("KEEPTTL"), optional=True),
               block("fields", integer("numfields"),
                     block("data", string("field"), string("value"), multiple=True),
                     token="FIELDS")))
def hsetex(ctx, argv):
    """HSETEX key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds |
    PXAT unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]"""
    now = ctx.now_ms
    cond, expiry, when, first = _hsetex_options(argv, now)
    k = argv[1]
    h = _get(ctx, k)
    created = h is None
    if created:
        if cond == b"FXX":
            return 0
        h = K.Hash()
    fields = argv[first::2]
    if cond:
        present = sum(1 for f in fields if f in h)
        if (cond == b"FNX" and present) or (cond == b"FXX" and present < len(fields)):
            return 0
    if when is not None:
        h.enable_field_ttls()
    keep = bool(expiry)  # EX/PX/EXAT/PXAT set the TTL below; KEEPTTL keeps it
    deleted = []
    for i in range(first, len(argv), 2):
        f = argv[i]
        if not keep and h.ttls:
            h.clear_ttl(f)
        h[f] = argv[i + 1]
        if when is not None and h.expire_field(f, when, "", now) == H.DELETED:
            deleted.append(f)
    ctx.keyspace.expired_subkeys += len(deleted)
    changes = len(fields)
    db = ctx.db
    if not h:  # every field was given a time already past
        if created:
            db.modified(k, changes)  # made and deleted at once: watchers still see it
            db.notify(EV_NEW, b"new", k)  # Redis adds the key first, then deletes it
        else:
            db.delete(k, changes=changes)
    else:
        K.hash_note_write(h, ctx.config, *argv[first:])
        if created:
            db.add(k, h, changes)
        else:
            db.modified(k, changes)
        if when is not None:
            db.track_field_ttls(k, h)
    if db.keyspace.events:
        db.notify(EV_HASH, b"hset", k, fields)
        if when is not None:
            if deleted:
                db.notify(EV_HASH, b"hdel", k, deleted)
            else:
                db.notify(EV_HASH, b"hexpire", k, fields)
        if not h:
            db.notify(EV_GENERIC, b"del", k)
    return 1
