"""Hash commands: HSET, HSETNX, HGET, HMGET, HMSET, HGETALL, HDEL, HEXISTS, HLEN, HKEYS,
HVALS, HINCRBY, HINCRBYFLOAT, HSCAN, HSTRLEN, HRANDFIELD.

A hash is a ``keyutil.Hash`` (a dict of bytes to bytes that remembers its encoding). An
emptied hash is removed, as in Redis.
"""

from __future__ import annotations

import random

from ..protocol.replies import OK, Map
from . import errors as E
from . import keyutil as K
from .args import LLONG_MAX, LLONG_MIN, Args, parse_int
from .errors import CommandError
from .keys import parse_scan_options
from .strings import LongDoubleInf, incr_by_float, parse_long_double
from .table import Arg, block, command, integer, key, pattern, string, token

_ONE_KEY = (1, 1, 1)
NOT_INT = "ERR hash value is not an integer"
NOT_FLOAT = "ERR hash value is not a float"


def _get(db, k: bytes):
    return K.lookup(db, k, dict)


def _get_or_create(ctx, k: bytes):
    """(hash, created): the hash at ``k``, or a new empty one not yet in the keyspace."""
    h = _get(ctx.db, k)
    if h is None:
        return K.Hash(), True
    return h, False


def _commit(ctx, k: bytes, h, created: bool, *items: bytes, changes: int = 1) -> None:
    if isinstance(h, K.Hash):
        K.hash_note_write(h, ctx.config, *items)
    if created:
        ctx.db.add(k, h, changes)
    else:
        ctx.db.modified(k, changes)


# --- writes ------------------------------------------------------------------------------

def _hset(ctx, argv, name: str) -> int:
    if len(argv) % 2:
        raise CommandError(E.wrong_arity(name))
    k = argv[1]
    h, created = _get_or_create(ctx, k)
    added = 0
    for i in range(2, len(argv), 2):
        if argv[i] not in h:
            added += 1
        h[argv[i]] = argv[i + 1]
    # Redis counts every pair given, new or not, as a change.
    _commit(ctx, k, h, created, *argv[2:], changes=(len(argv) - 2) // 2)
    return added


@command("hset", -4, "write denyoom fast", _ONE_KEY,
         key_flags="RW update", group="hash", since="2.0.0",
         summary="Creates or modifies the value of a field in a hash.",
         complexity="O(1) for each field/value pair added, so O(N) to add N field/value "
                    "pairs when the command is called with multiple field/value pairs.",
         args=(key(), block("data", string("field"), string("value"), multiple=True)))
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
         args=(key(), string("field", multiple=True)))
def hdel(ctx, argv):
    """HDEL key field [field ...]"""
    db = ctx.db
    k = argv[1]
    h = _get(db, k)
    if h is None:
        return 0
    removed = 0
    for field in argv[2:]:
        if h.pop(field, None) is not None:
            removed += 1
            if not h:
                break
    if removed:  # one change per field removed; removing the key adds none
        if h:
            db.modified(k, removed)
        else:
            db.delete(k, changes=removed)
    return removed


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
    _commit(ctx, k, h, created, field, text)
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
    _commit(ctx, k, h, created, field, text)
    return text


# --- reads -------------------------------------------------------------------------------

@command("hget", 3, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns the value of a field in a hash.", complexity="O(1)",
         args=(key(), string("field")),
         pure=True)
def hget(ctx, argv):
    """HGET key field"""
    h = _get(ctx.db, argv[1])
    return None if h is None else h.get(argv[2])


@command("hmget", -3, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns the values of all fields in a hash.",
         complexity="O(N) where N is the number of fields being requested.",
         args=(key(), string("field", multiple=True)),
         pure=True)
def hmget(ctx, argv):
    """HMGET key field [field ...]"""
    h = _get(ctx.db, argv[1]) or {}
    return [h.get(f) for f in argv[2:]]


@command("hgetall", 2, "readonly", _ONE_KEY,
         tips="nondeterministic_output_order",
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns all fields and values in a hash.",
         complexity="O(N) where N is the size of the hash.", args=(key(),),
         pure=True)
def hgetall(ctx, argv):
    """HGETALL key"""
    h = _get(ctx.db, argv[1])
    return Map(list(h.items()) if h else [])


@command("hkeys", 2, "readonly", _ONE_KEY,
         tips="nondeterministic_output_order",
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns all fields in a hash.",
         complexity="O(N) where N is the size of the hash.", args=(key(),),
         pure=True)
def hkeys(ctx, argv):
    """HKEYS key"""
    h = _get(ctx.db, argv[1])
    return list(h) if h else []


@command("hvals", 2, "readonly", _ONE_KEY,
         tips="nondeterministic_output_order",
         key_flags="RO access", group="hash", since="2.0.0",
         summary="Returns all values in a hash.",
         complexity="O(N) where N is the size of the hash.", args=(key(),),
         pure=True)
def hvals(ctx, argv):
    """HVALS key"""
    h = _get(ctx.db, argv[1])
    return list(h.values()) if h else []


@command("hlen", 2, "readonly fast", _ONE_KEY,
         key_flags="RO", group="hash", since="2.0.0",
         summary="Returns the number of fields in a hash.", complexity="O(1)", args=(key(),),
         pure=True)
def hlen(ctx, argv):
    """HLEN key"""
    h = _get(ctx.db, argv[1])
    return len(h) if h else 0


@command("hexists", 3, "readonly fast", _ONE_KEY,
         key_flags="RO", group="hash", since="2.0.0",
         summary="Determines whether a field exists in a hash.", complexity="O(1)",
         args=(key(), string("field")),
         pure=True)
def hexists(ctx, argv):
    """HEXISTS key field"""
    h = _get(ctx.db, argv[1])
    return 1 if h and argv[2] in h else 0


@command("hstrlen", 3, "readonly fast", _ONE_KEY,
         key_flags="RO", group="hash", since="3.2.0",
         summary="Returns the length of the value of a field.", complexity="O(1)",
         args=(key(), string("field")),
         pure=True)
def hstrlen(ctx, argv):
    """HSTRLEN key field"""
    h = _get(ctx.db, argv[1])
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
        h = _get(ctx.db, argv[1])
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
    h = _get(ctx.db, argv[1])
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
    h = _get(ctx.db, argv[1])
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
