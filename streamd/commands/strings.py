"""String commands: GET, SET, SETNX, SETEX, PSETEX, MGET, MSET, MSETNX, MSETEX, GETDEL,
GETEX, DELEX, DIGEST, APPEND, STRLEN, the INCR/DECR family, INCRBYFLOAT, INCREX, GETRANGE
(and SUBSTR), SETRANGE, LCS.

Applications keep checkpoints and dedup keys in strings next to their streams.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from xxhash import xxh3_64_intdigest

from ..protocol.replies import OK, Map, Raw
from ..store.keyspace import EV_GENERIC, EV_STRING
from . import errors as E
from . import keyutil as K
from .args import LLONG_MAX, LLONG_MIN, parse_int
from .errors import CommandError
from .table import TABLE, block, command, double, integer, key, oneof, string, token, Arg

_ONE_KEY = (1, 1, 1)
TOO_BIG = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
MSETEX_NUMKEYS = "ERR invalid numkeys value"
MSETEX_PAIRS = "ERR wrong number of key-value pairs"
_INT_MAX = 2**31 - 1
# DELEX's replies for a key that is not a string and for an unknown condition word. Redis
# writes both as plain errors of its own wording, which was not found: its tests expect
# "ERR" in the first (the usual WRONGTYPE reply has none; its reply schema names WRONGTYPE)
# and "Invalid condition" in the second. These texts keep to just that.
DELEX_TYPE = "ERR WRONGTYPE Operation against a key holding the wrong kind of value"
DELEX_CONDITION = "ERR Invalid condition"


def _get_string(db, k: bytes):
    """The string at ``k`` as plain ``bytes``: the reply encoder takes no subclasses, and a
    reply must not change with a later in-place edit of a ``StrBuf``."""
    value = K.lookup(db, k, K.STRING)
    return value if value is None or type(value) is bytes else bytes(value)


def _read_string(db, k: bytes):
    """``_get_string`` for the commands Redis counts as reads (keyspace hits / misses):
    those that reply with the value, GETSET, GETDEL and GETEX included."""
    value = K.lookup_read(db, k, K.STRING)
    return value if value is None or type(value) is bytes else bytes(value)


# --- SET and its options -----------------------------------------------------------------

_NX, _XX, _GET, _KEEPTTL, _PERSIST, _EX, _PX, _EXAT, _PXAT = (1 << i for i in range(9))
_IFEQ, _IFNE, _IFDEQ, _IFDNE = (1 << i for i in range(9, 13))
_EXPIRES = _EX | _PX | _EXAT | _PXAT
_UNITS = {_EX: (1000, False), _PX: (1, False), _EXAT: (1000, True), _PXAT: (1, True)}
# For each expiry option, the options it may not follow (Redis accepts a repeat of itself).
_EXPIRE_CONFLICTS = {_EX: _KEEPTTL | _PERSIST | _EXAT | _PX | _PXAT,
                     _PX: _KEEPTTL | _PERSIST | _EX | _EXAT | _PXAT,
                     _EXAT: _KEEPTTL | _PERSIST | _EX | _PX | _PXAT,
                     _PXAT: _KEEPTTL | _PERSIST | _EX | _EXAT | _PX}
_EXPIRE_WORDS = {b"EX": _EX, b"PX": _PX, b"EXAT": _EXAT, b"PXAT": _PXAT}
# SET's compare conditions (8.4): one of them at most, and none with NX or XX; each may be
# repeated, the last value counting, as NX and XX may.
_IF_WORDS = {b"IFEQ": _IFEQ, b"IFNE": _IFNE, b"IFDEQ": _IFDEQ, b"IFDNE": _IFDNE}
_IFS = _IFEQ | _IFNE | _IFDEQ | _IFDNE
_CONDITIONS = _NX | _XX | _IFS
_NX_CONFLICTS, _XX_CONFLICTS = _CONDITIONS & ~_NX, _CONDITIONS & ~_XX
# word -> (its flag, the flags it may not join)
_IF_OPTIONS = {w: (f, _CONDITIONS & ~f) for w, f in _IF_WORDS.items()}
_DIGEST_LEN = 16
BAD_DIGEST = "ERR must be exactly 16 hexadecimal characters"


def _parse_extended(argv, start: int, for_set: bool):
    """Redis parseExtendedStringArgumentsOrReply: (flags, expiry flag, expiry argument,
    the IFEQ/IFNE/IFDEQ/IFDNE argument)."""
    flags = 0
    expire_flag, expire_arg, match = 0, None, None
    j = start
    n = len(argv)
    while j < n:
        word = argv[j].upper()
        has_next = j + 1 < n
        if word == b"NX" and for_set and not flags & _NX_CONFLICTS:
            flags |= _NX
        elif word == b"XX" and for_set and not flags & _XX_CONFLICTS:
            flags |= _XX
        elif word == b"GET" and for_set:
            flags |= _GET
        elif word == b"KEEPTTL" and for_set and not flags & (_PERSIST | _EXPIRES):
            flags |= _KEEPTTL
        elif word == b"PERSIST" and not for_set and not flags & (_EXPIRES | _KEEPTTL):
            flags |= _PERSIST
        elif word in _EXPIRE_WORDS and has_next and \
                not flags & _EXPIRE_CONFLICTS[_EXPIRE_WORDS[word]]:
            expire_flag = _EXPIRE_WORDS[word]
            flags |= expire_flag
            expire_arg = argv[j + 1]
            j += 1
        elif word in _IF_OPTIONS and has_next and for_set and \
                not flags & _IF_OPTIONS[word][1]:
            flags |= _IF_OPTIONS[word][0]
            match = argv[j + 1]
            j += 1
        else:
            raise CommandError(E.SYNTAX)
        j += 1
    return flags, expire_flag, expire_arg, match


def _expire_at(ctx, name: str, expire_flag: int, arg: bytes) -> int:
    """Absolute unix ms for an EX/PX/EXAT/PXAT argument, with Redis's checks."""
    value = parse_int(arg)
    unit, absolute = _UNITS[expire_flag]
    invalid = E.INVALID_EXPIRE.format(name)
    if value <= 0 or (unit == 1000 and value > LLONG_MAX // 1000):
        raise CommandError(invalid)
    value *= unit
    if not absolute:
        value += ctx.now_ms
        if value > LLONG_MAX:  # Redis sees the signed overflow as a non-positive time
            raise CommandError(invalid)
    return value


def _store(ctx, k: bytes, value: bytes, keep_ttl: bool = False, when_ms=None) -> None:
    db = ctx.db
    K.set_key(db, k, K.own_if_unshared(value, ctx.config), keep_ttl=keep_ttl)
    if when_ms is not None:
        db.set_expire(k, when_ms, changes=0)  # SET ... EX is one change
    if db.keyspace.events:
        db.notify(EV_STRING, b"set", k)
        if when_ms is not None:
            db.notify(EV_GENERIC, b"expire", k)


def digest_of(value) -> bytes:
    """DIGEST's reply: the XXH3 64-bit hash of a string as 16 lower-case hex digits."""
    return b"%016x" % xxh3_64_intdigest(value)


def _matches(flags: int, value, match: bytes) -> bool:
    """Whether a string ``value`` passes an IFEQ/IFNE/IFDEQ/IFDNE ``match``. A digest must
    be 16 characters (Redis checks only the length: other characters simply never match)
    and compares without regard to case."""
    if flags & (_IFEQ | _IFNE):
        equal = value == match  # bytes or StrBuf alike
        return equal if flags & _IFEQ else not equal
    if len(match) != _DIGEST_LEN:
        raise CommandError(BAD_DIGEST)
    equal = digest_of(value) == match.lower()
    return equal if flags & _IFDEQ else not equal


@command("set", -3, "write denyoom", _ONE_KEY,
         key_flags="RW access update variable_flags",
         key_notes="RW and ACCESS due to the optional `GET` argument", group="string",
         since="1.0.0",
         summary="Sets the string value of a key, ignoring its type. The key is created if "
                 "it doesn't exist.", complexity="O(1)",
         args=(key(), string("value"),
               oneof("condition", token("NX"), token("XX"),
                     string("ifeq-value", token="IFEQ", since="8.4.0"),
                     string("ifne-value", token="IFNE", since="8.4.0"),
                     string("ifdeq-digest", token="IFDEQ", since="8.4.0"),
                     string("ifdne-digest", token="IFDNE", since="8.4.0"),
                     optional=True, since="2.6.12"),
               token("GET", optional=True, since="6.2.0"),
               oneof("expiration", integer("seconds", token="EX", since="2.6.12"),
                     integer("milliseconds", token="PX", since="2.6.12"),
                     Arg("unix-time-seconds", "unix-time", token="EXAT", since="6.2.0"),
                     Arg("unix-time-milliseconds", "unix-time", token="PXAT", since="6.2.0"),
                     token("KEEPTTL", since="6.0.0"), optional=True)),
         history=(
             ("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."),
             ("6.0.0", "Added the `KEEPTTL` option."),
             ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."),
             ("7.0.0", "Allowed the `NX` and `GET` options to be used together."),
             ("8.4.0", "Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."),
         ))
def set_(ctx, argv):
    """SET key value [NX | XX | IFEQ ifeq-value | IFNE ifne-value |
  IFDEQ ifdeq-digest | IFDNE ifdne-digest] [GET] [EX seconds | PX milliseconds |
  EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]"""
    if len(argv) == 3:  # the common plain SET: nothing to parse or to test
        ctx.db.get(argv[1])  # Redis looks the key up first: an expired one counts as expired
        _store(ctx, argv[1], argv[2])
        return OK
    flags, expire_flag, expire_arg, match = _parse_extended(argv, 3, for_set=True)
    when = _expire_at(ctx, "set", expire_flag, expire_arg) if expire_flag else None
    db = ctx.db
    k = argv[1]
    if flags & _GET:
        old = _read_string(db, k)
        found = old is not None
    else:
        found = db.get(k) is not None
    if (flags & _NX and found) or (flags & _XX and not found):
        return old if flags & _GET else None
    if flags & _IFS:
        if not found:
            if flags & (_IFEQ | _IFDEQ):
                return old if flags & _GET else None
        # Redis looks the key up again to compare, as a read: one more keyspace hit.
        elif not _matches(flags, K.lookup_read(db, k, K.STRING), match):
            return old if flags & _GET else None
    _store(ctx, k, argv[2], keep_ttl=bool(flags & _KEEPTTL), when_ms=when)
    return old if flags & _GET else OK


def _set_key_flags(argv) -> str:
    # Redis's variable flags for SET: with GET the old value is read; with a compare
    # condition it is read but not returned; otherwise the key is only overwritten. Any
    # such word after the value counts, whatever else it is mixed with.
    words = {a.upper() for a in argv[3:]}
    if b"GET" in words:
        return "RW access update"
    if words & _IF_WORDS.keys():
        return "RW update"
    return "OW update"


TABLE[b"set"].key_flags_for = _set_key_flags


@command("setnx", 3, "write denyoom fast", _ONE_KEY,
         key_flags="OW insert", group="string", since="1.0.0",
         summary="Set the string value of a key only when the key doesn't exist.",
         complexity="O(1)", args=(key(), string("value")),
         deprecated=("2.6.12", "`SET` with the `NX` argument"))
def setnx(ctx, argv):
    """SETNX key value"""
    if ctx.db.get(argv[1]) is not None:
        return 0
    _store(ctx, argv[1], argv[2])
    return 1


def _setex(ctx, argv, name: str, flag: int):
    when = _expire_at(ctx, name, flag, argv[2])
    ctx.db.get(argv[1])  # Redis looks the key up first: an expired one counts as expired
    _store(ctx, argv[1], argv[3], when_ms=when)
    return OK


@command("setex", 4, "write denyoom", _ONE_KEY,
         key_flags="OW update", group="string", since="2.0.0",
         summary="Sets the string value and expiration time of a key. Creates the key if it "
                 "doesn't exist.", complexity="O(1)",
         deprecated=("2.6.12", "`SET` with the `EX` argument"),
         args=(key(), integer("seconds"), string("value")))
def setex(ctx, argv):
    """SETEX key seconds value"""
    return _setex(ctx, argv, "setex", _EX)


@command("psetex", 4, "write denyoom", _ONE_KEY,
         key_flags="OW update", group="string", since="2.6.0",
         summary="Sets both string value and expiration time in milliseconds of a key. The "
                 "key is created if it doesn't exist.", complexity="O(1)",
         deprecated=("2.6.12", "`SET` with the `PX` argument"),
         args=(key(), integer("milliseconds"), string("value")))
def psetex(ctx, argv):
    """PSETEX key milliseconds value"""
    return _setex(ctx, argv, "psetex", _PX)


@command("getset", 3, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="string", since="1.0.0",
         summary="Returns the previous string value of a key after setting it to a new "
                 "value.", complexity="O(1)", args=(key(), string("value")),
         deprecated=("6.2.0", "`SET` with the `!GET` argument"))
def getset(ctx, argv):
    """GETSET key value

    SET key value GET: the old string or null; the key loses its TTL. A key of another type
    is left as it is (WRONGTYPE)."""
    old = _read_string(ctx.db, argv[1])
    _store(ctx, argv[1], argv[2])
    return old


# --- reads -------------------------------------------------------------------------------

@command("get", 2, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="string", since="1.0.0",
         summary="Returns the string value of a key.", complexity="O(1)", args=(key(),),
         pure=True)
def get(ctx, argv):
    """GET key"""
    return _read_string(ctx.db, argv[1])


@command("mget", -2, "readonly fast", (1, -1, 1),
         tips="request_policy:multi_shard",
         key_flags="RO access", group="string", since="1.0.0",
         summary="Atomically returns the string values of one or more keys.",
         complexity="O(N) where N is the number of keys to retrieve.",
         args=(key(multiple=True),),
         pure=True)
def mget(ctx, argv):
    """MGET key [key ...]"""
    db = ctx.db
    out = []
    for k in argv[1:]:
        value = db.read(k)  # a key of another type counts as a hit, as in Redis
        if isinstance(value, K.STRING):
            out.append(value if type(value) is bytes else bytes(value))
        else:
            out.append(None)
    return out


@command("getdel", 2, "write fast", _ONE_KEY,
         key_flags="RW access delete", group="string", since="6.2.0",
         summary="Returns the string value of a key after deleting the key.",
         complexity="O(1)", args=(key(),))
def getdel(ctx, argv):
    """GETDEL key"""
    value = _read_string(ctx.db, argv[1])
    if value is not None:
        ctx.db.delete(argv[1])
        ctx.db.notify(EV_GENERIC, b"del", argv[1])
    return value


@command("delex", -2, "write fast", _ONE_KEY,
         key_flags="RW delete variable_flags", group="string", since="8.4.0",
         summary="Conditionally removes the specified key based on value or digest "
                 "comparison.",
         complexity="O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the "
                    "string value.",
         args=(key(), oneof("condition", string("ifeq-value", token="IFEQ"),
                            string("ifne-value", token="IFNE"),
                            string("ifdeq-digest", token="IFDEQ"),
                            string("ifdne-digest", token="IFDNE"), optional=True)))
def delex(ctx, argv):
    """DELEX key [IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest |
  IFDNE ifdne-digest]

    Without a condition, DEL of one key (of any type). With one, the key must hold a
    string, looked up as a read (a keyspace hit or miss); a missing key is 0 whatever the
    condition says, and the condition word is checked after the key's type."""
    db = ctx.db
    k = argv[1]
    if len(argv) == 2:
        if db.delete(k):
            db.notify(EV_GENERIC, b"del", k)
            return 1
        return 0
    if len(argv) != 4:
        raise CommandError(E.wrong_arity("delex"))
    value = db.read(k)
    if value is None:
        return 0
    if not isinstance(value, K.STRING):
        raise CommandError(DELEX_TYPE)
    flag = _IF_WORDS.get(argv[2].upper())
    if flag is None:
        raise CommandError(DELEX_CONDITION)
    if not _matches(flag, value, argv[3]):
        return 0
    db.delete(k)
    db.notify(EV_GENERIC, b"del", k)
    return 1


def _delex_key_flags(argv) -> str:
    # Redis's variable flags for DELEX: a plain delete without a condition, a delete that
    # needs the value with one.
    return "RW delete" if len(argv) > 2 else "RM delete"


TABLE[b"delex"].key_flags_for = _delex_key_flags


@command("getex", -2, "write fast", _ONE_KEY,
         key_flags="RW access update",
         key_notes="RW and UPDATE because it changes the TTL", group="string", since="6.2.0",
         summary="Returns the string value of a key after setting its expiration time.",
         complexity="O(1)",
         args=(key(), oneof("expiration", integer("seconds", token="EX"),
                            integer("milliseconds", token="PX"),
                            Arg("unix-time-seconds", "unix-time", token="EXAT"),
                            Arg("unix-time-milliseconds", "unix-time", token="PXAT"),
                            token("PERSIST"), optional=True)))
def getex(ctx, argv):
    """GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
  PXAT unix-time-milliseconds | PERSIST]"""
    flags, expire_flag, expire_arg, _ = _parse_extended(argv, 2, for_set=False)
    db = ctx.db
    k = argv[1]
    value = _read_string(db, k)
    if value is None:
        return None  # Redis checks the expiry argument only for an existing key
    if expire_flag:
        when = _expire_at(ctx, "getex", expire_flag, expire_arg)
        if expire_flag in (_EXAT, _PXAT) and when <= ctx.now_ms:
            db.delete(k)
            db.notify(EV_GENERIC, b"del", k)
        else:
            db.set_expire(k, when)
            db.notify(EV_GENERIC, b"expire", k)
    elif flags & _PERSIST:
        if db.persist(k):
            db.notify(EV_GENERIC, b"persist", k)
    return value


@command("strlen", 2, "readonly fast", _ONE_KEY,
         key_flags="RO", group="string", since="2.2.0",
         summary="Returns the length of a string value.", complexity="O(1)", args=(key(),),
         pure=True)
def strlen(ctx, argv):
    """STRLEN key"""
    value = K.lookup_read(ctx.db, argv[1], K.STRING)
    return 0 if value is None else len(value)


@command("digest", 2, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="string", since="8.4.0",
         summary="Returns the XXH3 hash of a string value.",
         complexity="O(N) where N is the length of the string value.", args=(key(),),
         pure=True)
def digest(ctx, argv):
    """DIGEST key

    The value's XXH3 64-bit hash as 16 hex digits (leading zeros kept), or null."""
    value = K.lookup_read(ctx.db, argv[1], K.STRING)
    return None if value is None else digest_of(value)


@command("getrange", 4, "readonly", _ONE_KEY,
         key_flags="RO access", group="string", since="2.4.0",
         summary="Returns a substring of the string stored at a key.",
         complexity="O(N) where N is the length of the returned string. The complexity is "
                    "ultimately determined by the returned length, but because creating a "
                    "substring from an existing string is very cheap, it can be considered "
                    "O(1) for small strings.",
         args=(key(), integer("start"), integer("end")),
         pure=True)
def getrange(ctx, argv):
    """GETRANGE key start end"""
    start = parse_int(argv[2])
    end = parse_int(argv[3])
    value = K.lookup_read(ctx.db, argv[1], K.STRING)  # no full copy: the slice is copied below
    if value is None:
        return b""
    n = len(value)
    if start < 0 and end < 0 and start > end:
        return b""
    if start < 0:
        start += n
    if end < 0:
        end += n
    start = max(start, 0)
    end = min(max(end, 0), n - 1)
    if start > end or n == 0:
        return b""
    return bytes(value[start:end + 1])


# --- writes ------------------------------------------------------------------------------

@command("mset", -3, "write denyoom", (1, -1, 2),
         tips="request_policy:multi_shard response_policy:all_succeeded",
         key_flags="OW update", group="string", since="1.0.1",
         summary="Atomically creates or modifies the string values of one or more keys.",
         complexity="O(N) where N is the number of keys to set.",
         args=(block("data", key(), string("value"), multiple=True),))
def mset(ctx, argv):
    """MSET key value [key value ...]"""
    if len(argv) % 2 == 0:
        raise CommandError(E.wrong_arity("mset"))
    db = ctx.db
    for i in range(1, len(argv), 2):
        db.get(argv[i])  # Redis looks each key up first: an expired one counts as expired
        _store(ctx, argv[i], argv[i + 1])
    return OK


@command("msetnx", -3, "write denyoom", (1, -1, 2),
         tips="request_policy:multi_shard response_policy:agg_min",
         key_flags="OW insert", group="string", since="1.0.1",
         summary="Atomically modifies the string values of one or more keys only when all "
                 "keys don't exist.", complexity="O(N) where N is the number of keys to set.",
         args=(block("data", key(), string("value"), multiple=True),))
def msetnx(ctx, argv):
    """MSETNX key value [key value ...]"""
    if len(argv) % 2 == 0:
        raise CommandError(E.wrong_arity("msetnx"))
    db = ctx.db
    if any(db.get(argv[i]) is not None for i in range(1, len(argv), 2)):
        return 0
    for i in range(1, len(argv), 2):
        _store(ctx, argv[i], argv[i + 1])
    return 1


@command("msetex", -4, "write denyoom", numkeys_keys=(1, 0, 1, 2),
         tips="request_policy:multi_shard response_policy:all_succeeded",
         key_flags="OW update", group="string", since="8.4.0",
         summary="Atomically sets multiple string keys with a shared expiration in a single "
                 "operation. Supports flexible argument parsing where condition and "
                 "expiration flags can appear in any order.",
         complexity="O(N) where N is the number of keys to set.",
         args=(integer("numkeys"), block("data", key(), string("value"), multiple=True),
               oneof("condition", token("NX"), token("XX"), optional=True),
               oneof("expiration", integer("seconds", token="EX"),
                     integer("milliseconds", token="PX"),
                     Arg("unix-time-seconds", "unix-time", token="EXAT"),
                     Arg("unix-time-milliseconds", "unix-time", token="PXAT"),
                     token("KEEPTTL"), optional=True)))
def msetex(ctx, argv):
    """MSETEX numkeys key value [key value ...] [NX | XX] [EX seconds |
  PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]

    1 when every pair was set, 0 when NX or XX held for not all of the keys (nothing is
    set then). The pairs are checked against ``numkeys`` before the options are read."""
    n = parse_int(argv[1], MSETEX_NUMKEYS)
    if not 1 <= n <= _INT_MAX:
        raise CommandError(MSETEX_NUMKEYS)
    end = 2 + 2 * n
    if end > len(argv):
        raise CommandError(MSETEX_PAIRS)
    flags, expire_flag, expire_arg, _ = _parse_extended(argv, end, for_set=True)
    if flags & (_GET | _IFS):
        raise CommandError(E.SYNTAX)
    when = _expire_at(ctx, "msetex", expire_flag, expire_arg) if expire_flag else None
    db = ctx.db
    keys = range(2, end, 2)
    if flags & _NX:
        if any(db.get(argv[i]) is not None for i in keys):
            return 0
    elif flags & _XX:
        # Redis checks XX with read lookups (keyspace hits and misses), NX with writes.
        for i in keys:
            if db.read(argv[i]) is None:
                return 0
    keep_ttl = bool(flags & _KEEPTTL)
    events = db.keyspace.events
    for i in keys:
        k = argv[i]
        K.set_key(db, k, K.own_if_unshared(argv[i + 1], ctx.config), keep_ttl=keep_ttl)
        if when is not None:
            db.set_expire(k, when, changes=0)  # each pair is one change
            if events:
                db.notify(EV_GENERIC, b"expire", k)
        if events:
            db.notify(EV_STRING, b"set", k)
    return 1


def _check_length(ctx, total: int) -> None:
    if total > ctx.config["proto-max-bulk-len"]:
        raise CommandError(TOO_BIG)


@command("append", 3, "write denyoom fast", _ONE_KEY,
         key_flags="RW insert", group="string", since="2.0.0",
         summary="Appends a string to the value of a key. Creates the key if it doesn't "
                 "exist.", complexity="O(1). The amortized time complexity is O(1) assuming "
                 "the appended value is small and the already present value is of any size, "
                 "since the dynamic string library used by Redis will double the free space "
                 "available on every reallocation.",
         args=(key(), string("value")))
def append(ctx, argv):
    """APPEND key value"""
    db = ctx.db
    k, extra = argv[1], argv[2]
    value = K.lookup(db, k, K.STRING)
    if value is None:
        db.add(k, K.own_if_unshared(extra, ctx.config))
        db.notify(EV_STRING, b"append", k)
        return len(extra)
    _check_length(ctx, len(value) + len(extra))
    buf = K.own_buffer(db, k, value)
    buf += extra  # in place: amortized O(len(extra)), as sds's spare room makes it
    db.modified(k)
    db.notify(EV_STRING, b"append", k)
    return len(buf)


@command("setrange", 4, "write denyoom", _ONE_KEY,
         key_flags="RW update", group="string", since="2.2.0",
         summary="Overwrites a part of a string value with another by an offset. Creates "
                 "the key if it doesn't exist.",
         complexity="O(1), not counting the time taken to copy the new string in place. "
                    "Usually, this string is very small so the amortized complexity is O(1). "
                    "Otherwise, complexity is O(M) with M being the length of the value "
                    "argument.",
         args=(key(), integer("offset"), string("value")))
def setrange(ctx, argv):
    """SETRANGE key offset value"""
    offset = parse_int(argv[2])
    if offset < 0:
        raise CommandError("ERR offset is out of range")
    db = ctx.db
    k, piece = argv[1], argv[3]
    value = K.lookup(db, k, K.STRING)
    if not piece:
        return 0 if value is None else len(value)
    _check_length(ctx, offset + len(piece))
    if value is None:
        buf = K.StrBuf(offset)  # zero-padded up to the offset
        buf += piece
        db.add(k, buf)
    else:
        buf = K.own_buffer(db, k, value)
        if len(buf) < offset:
            buf.extend(bytes(offset - len(buf)))
        buf[offset:offset + len(piece)] = piece  # in place; grows the end if it reaches past
        db.modified(k)
    db.notify(EV_STRING, b"setrange", k)
    return len(buf)


# --- counters ----------------------------------------------------------------------------

def _incr(ctx, k: bytes, delta: int) -> int:
    db = ctx.db
    value = _get_string(db, k)
    current = 0 if value is None else parse_int(value)
    result = current + delta
    if not LLONG_MIN <= result <= LLONG_MAX:
        raise CommandError(E.OVERFLOW)
    text = K.own_if_unshared(str(result).encode(), ctx.config)
    if value is None:
        db.add(k, text)
    else:
        db.set(k, text, keep_ttl=True)
    db.notify(EV_STRING, b"incrby", k)
    return result


@command("incr", 2, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="string", since="1.0.0",
         summary="Increments the integer value of a key by one. Uses 0 as initial value if "
                 "the key doesn't exist.", complexity="O(1)", args=(key(),))
def incr(ctx, argv):
    """INCR key"""
    return _incr(ctx, argv[1], 1)


@command("decr", 2, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="string", since="1.0.0",
         summary="Decrements the integer value of a key by one. Uses 0 as initial value if "
                 "the key doesn't exist.", complexity="O(1)", args=(key(),))
def decr(ctx, argv):
    """DECR key"""
    return _incr(ctx, argv[1], -1)


@command("incrby", 3, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="string", since="1.0.0",
         summary="Increments the integer value of a key by a number. Uses 0 as initial value "
                 "if the key doesn't exist.", complexity="O(1)",
         args=(key(), integer("increment")))
def incrby(ctx, argv):
    """INCRBY key increment"""
    return _incr(ctx, argv[1], parse_int(argv[2]))


@command("decrby", 3, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="string", since="1.0.0",
         summary="Decrements a number from the integer value of a key. Uses 0 as initial "
                 "value if the key doesn't exist.", complexity="O(1)",
         args=(key(), integer("decrement")))
def decrby(ctx, argv):
    """DECRBY key decrement"""
    delta = parse_int(argv[2])
    if delta == LLONG_MIN:  # its negation does not fit
        raise CommandError("ERR decrement would overflow")
    return _incr(ctx, argv[1], -delta)


# --- INCRBYFLOAT: Redis computes in x87 long double --------------------------------------
#
# Redis parses with strtold, adds in 80-bit long double (64-bit mantissa) and prints with
# "%.17Lf" minus trailing zeros. Doing the same in exact rationals reproduces its digits:
# 0.1 + 0.2 prints 0.3 there, not the 0.30000000000000004 of a double.

_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INF = {b"inf", b"+inf", b"-inf", b"infinity", b"+infinity", b"-infinity"}
_LD_MANT = 64
_LD_MIN_EXP = -16382 - 63  # exponent of the smallest subnormal
_LD_MAX = (Fraction(2**64 - 1) * Fraction(2) ** (16383 - 63))


class LongDoubleInf(Exception):
    """An infinite value: strtold accepts it, the counters refuse it."""


def _ld_round(x: Fraction) -> Fraction:
    """Round to the nearest long double (ties to even); raises LongDoubleInf past the range."""
    if x == 0:
        return x
    neg = x < 0
    a = -x if neg else x
    e = a.numerator.bit_length() - a.denominator.bit_length() - _LD_MANT
    scaled = a / Fraction(2) ** e
    while scaled >= 2**_LD_MANT:
        e += 1
        scaled /= 2
    while scaled < 2**(_LD_MANT - 1):
        e -= 1
        scaled *= 2
    if e < _LD_MIN_EXP:
        scaled *= Fraction(2) ** (e - _LD_MIN_EXP)
        e = _LD_MIN_EXP
    q, r = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * r
    if twice > scaled.denominator or (twice == scaled.denominator and q & 1):
        q += 1
    result = Fraction(q) * Fraction(2) ** e
    if result > _LD_MAX:
        raise LongDoubleInf
    return -result if neg else result


_MAX_CHARS = 5 * 1024  # Redis MAX_LONG_DOUBLE_CHARS: longer input is refused unread
# Decimal exponents (of the leading digit) beyond which strtold overflows or underflows to
# zero, with margin; the exact boundary is left to _ld_round.
_MAX_ADJUSTED = 4933
_MIN_ADJUSTED = -4952


def parse_long_double(arg: bytes, error: str) -> Fraction:
    """Redis string2ld: the whole argument as a finite long double (strtold syntax)."""
    if not arg or len(arg) >= _MAX_CHARS:
        raise CommandError(error)
    if arg.lower() in _INF:
        raise LongDoubleInf
    if _DECIMAL.match(arg):
        # Decimal, not Fraction(str): "1e999999999" must be refused, not computed.
        try:
            dec = Decimal(arg.decode("ascii"))
        except InvalidOperation:  # an exponent even Decimal cannot hold
            mantissa = re.split(rb"[eE]", arg)[0]
            if re.search(rb"[1-9]", mantissa):
                raise CommandError(error) from None
            return Fraction(0)
        if dec.is_zero():
            return Fraction(0)
        if not _MIN_ADJUSTED <= dec.adjusted() <= _MAX_ADJUSTED:
            raise CommandError(error)  # strtold's ERANGE: overflow or underflow to zero
        try:
            value = _ld_round(Fraction(*dec.as_integer_ratio()))
        except LongDoubleInf:
            raise CommandError(error) from None
        if value == 0:
            raise CommandError(error)  # underflow to zero is ERANGE as well
        return value
    hexa = _HEX.match(arg)
    if hexa and (hexa[2] or hexa[3]):
        return _hex_long_double(hexa, error)
    raise CommandError(error)


# strtold's hexadecimal form: digits with an optional point, an optional binary exponent.
_HEX = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?\Z")


def _hex_long_double(m: re.Match, error: str) -> Fraction:
    """An exact hex float rounded to long double: a double would lose bits past 53 and
    the range past 1e308, which strtold keeps."""
    digits = m[2] + (m[3] or b"")
    mantissa = int(digits, 16)
    if mantissa == 0:
        return Fraction(0)
    exp_text = m[4] or b"0"
    if len(exp_text.lstrip(b"+-").lstrip(b"0")) > 9:  # far past either end of the range
        raise CommandError(error)
    scale = int(exp_text) - 4 * len(m[3] or b"")
    top = mantissa.bit_length() - 1 + scale  # binary exponent of the leading bit
    if top > 16384 or top < _LD_MIN_EXP - 2:
        raise CommandError(error)  # ERANGE: overflow, or underflow to zero
    value = Fraction(mantissa) * Fraction(2) ** scale
    try:
        value = _ld_round(value)
    except LongDoubleInf:
        raise CommandError(error) from None
    if value == 0:
        raise CommandError(error)
    return -value if m[1] == b"-" else value


def _digits(n: int) -> str:
    """str(n) without Python's limit on converting very long integers."""
    if n < 10**4000:
        return str(n)
    hi, lo = divmod(n, 10**4000)
    return _digits(hi) + str(lo).rjust(4000, "0")


def format_long_double(x: Fraction) -> bytes:
    """printf("%.17Lf") with trailing zeros (and a bare '.') removed."""
    neg = x < 0
    scaled = abs(x) * 10**17
    q, r = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * r
    if twice > scaled.denominator or (twice == scaled.denominator and q & 1):
        q += 1
    digits = _digits(q).rjust(18, "0")
    text = (digits[:-17] + "." + digits[-17:]).rstrip("0").rstrip(".")
    if neg and text != "0":
        text = "-" + text
    return text.encode()


def incr_by_float(current: bytes | None, incr: bytes, not_float: str) -> bytes:
    """The new text of a counter: shared by INCRBYFLOAT and HINCRBYFLOAT."""
    try:
        base = Fraction(0) if current is None else parse_long_double(current, not_float)
    except LongDoubleInf:
        base = None
    try:
        delta = parse_long_double(incr, E.NOT_FLOAT)
    except LongDoubleInf:
        delta = None
    if base is None or delta is None:
        raise CommandError(E.INCR_FLOAT_NAN)
    try:
        total = _ld_round(base + delta)
    except LongDoubleInf:
        raise CommandError(E.INCR_FLOAT_NAN) from None
    return format_long_double(total)


@command("incrbyfloat", 3, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="string", since="2.6.0",
         summary="Increment the floating point value of a key by a number. Uses 0 as initial "
                 "value if the key doesn't exist.", complexity="O(1)",
         args=(key(), Arg("increment", "double")))
def incrbyfloat(ctx, argv):
    """INCRBYFLOAT key increment"""
    db = ctx.db
    k = argv[1]
    value = _get_string(db, k)
    text = K.PlainStr(incr_by_float(value, argv[2], E.NOT_FLOAT))
    if value is None:
        db.add(k, text)
    else:
        db.set(k, text, keep_ttl=True)
    db.notify(EV_STRING, b"incrbyfloat", k)
    return bytes(text)


# --- INCREX (8.8) ------------------------------------------------------------------------
#
# Sources: the redis.io page and src/commands/increx.json after "Replace INCREX out-of-bounds
# policy to a single SATURATE option" (redis #15237, May 2026), and Redis's own
# tests/unit/type/increx.tcl of that version. Redis 7.0 has no INCREX to record from.

# Error texts. Redis's tests match only the part between the stars of "*...*"; the rest of
# each text is inferred where marked.
INCREX_ENX = "ERR ENX flag requires an expiration"
INCREX_BOUNDS = "ERR LBOUND can't be greater than UBOUND"
# Inferred: "Increment is not an integer" is what the test matches; the tail follows the
# "LBOUND is not an integer or out of range" that clients' tests against 8.8 quote.
INCREX_INCR_INT = "ERR Increment is not an integer or out of range"
INCREX_INCR_FLOAT = "ERR Increment is not a valid float"
INCREX_BOUND_INT = "ERR {} is not an integer or out of range"
INCREX_BOUND_FLOAT = "ERR {} is not a valid float"
INCREX_INCR_INF = "ERR BYFLOAT increment cannot be Infinity"
INCREX_VALUE_INF = "ERR value cannot be Infinity"  # inferred: the test matches the tail
INCREX_APPLIED_OVERFLOW = "ERR applied increment would overflow"
# Inferred from the docs ("would produce Infinity in BYFLOAT mode") and Valkey's wording.
INCREX_APPLIED_INF = "ERR applied increment would be Infinity"

_BYINT, _BYFLOAT, _LBOUND, _UBOUND, _SATURATE, _ENX = (1 << i for i in range(13, 19))
# Word -> (flag, takes a value). Unlike SET, INCREX refuses any option given twice, and
# PERSIST with ENX; Redis's tests check each of these is a syntax error.
_INCREX_WORDS = {b"BYINT": (_BYINT, True), b"BYFLOAT": (_BYFLOAT, True),
                 b"LBOUND": (_LBOUND, True), b"UBOUND": (_UBOUND, True),
                 b"SATURATE": (_SATURATE, False), b"ENX": (_ENX, False),
                 b"PERSIST": (_PERSIST, False),
                 **{w: (f, True) for w, f in _EXPIRE_WORDS.items()}}
_INCREX_EXCLUSIVE = {_BYINT: _BYFLOAT, _BYFLOAT: _BYINT,
                     _PERSIST: _EXPIRES | _ENX, _ENX: _PERSIST,
                     **{f: _EXPIRES | _PERSIST for f in _UNITS}}
_INFINITY = float("inf")


def _parse_increx(argv):
    """(flags, {flag: its argument}) for INCREX's options, in any order."""
    flags, values = 0, {}
    j, n = 2, len(argv)
    while j < n:
        flag, takes = _INCREX_WORDS.get(argv[j].upper(), (0, False))
        if not flag or flags & (flag | _INCREX_EXCLUSIVE.get(flag, 0)) or \
                (takes and j + 1 >= n):
            raise CommandError(E.SYNTAX)
        flags |= flag
        if takes:
            j += 1
            values[flag] = argv[j]
        j += 1
    if flags & _ENX and not flags & _EXPIRES:
        raise CommandError(INCREX_ENX)
    return flags, values


def _increx_ld(arg: bytes, error: str):
    """A BYFLOAT bound: a long double, or +-inf (Redis's string2ld accepts infinities)."""
    try:
        return parse_long_double(arg, error)
    except LongDoubleInf:
        return _INFINITY if arg[:1] != b"-" else -_INFINITY


def _human(ctx, x: Fraction):
    """A BYFLOAT reply element: INCRBYFLOAT's digits, as a bulk string in RESP2 and a double
    in RESP3 (inferred: Redis's addReplyHumanLongDouble, which gives exactly that)."""
    text = format_long_double(x)
    return Raw(b",%s\r\n" % text) if ctx.resp == 3 else text


@command("increx", -2, "write denyoom fast", _ONE_KEY,
         key_flags="RW access update", group="string", since="8.8.0",
         summary="Increments the numeric value of a key by a number and sets its expiration "
                 "time. Uses 0 as initial value if the key doesn't exist.",
         complexity="O(1)",
         args=(key(), oneof("increment", double("float", token="BYFLOAT"),
                            integer("integer", token="BYINT"), optional=True),
               token("SATURATE", "saturate", optional=True),
               string("lowerbound", token="LBOUND", optional=True),
               string("upperbound", token="UBOUND", optional=True),
               oneof("expiration", integer("seconds", token="EX"),
                     integer("milliseconds", token="PX"),
                     Arg("unix-time-seconds", "unix-time", token="EXAT"),
                     Arg("unix-time-milliseconds", "unix-time", token="PXAT"),
                     token("PERSIST", "persist"), optional=True),
               token("ENX", "enx", optional=True)))
def increx(ctx, argv):
    """INCREX key [BYFLOAT increment | BYINT increment] [LBOUND lowerbound]
  [UBOUND upperbound] [SATURATE] [EX seconds | PX milliseconds |
  EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST] [ENX]"""
    flags, values = _parse_increx(argv)
    by_float = bool(flags & _BYFLOAT)
    # Inferred order of the checks that follow: increment, bounds, their order, expiry
    # time, then the key; all come before anything is written.
    if by_float:
        try:
            delta = parse_long_double(values[_BYFLOAT], INCREX_INCR_FLOAT)
        except LongDoubleInf:
            raise CommandError(INCREX_INCR_INF) from None
        low = _increx_ld(values[_LBOUND], INCREX_BOUND_FLOAT.format("LBOUND")) \
            if flags & _LBOUND else -_LD_MAX
        high = _increx_ld(values[_UBOUND], INCREX_BOUND_FLOAT.format("UBOUND")) \
            if flags & _UBOUND else _LD_MAX
    else:
        delta = parse_int(values[_BYINT], INCREX_INCR_INT) if flags & _BYINT else 1
        low = parse_int(values[_LBOUND], INCREX_BOUND_INT.format("LBOUND")) \
            if flags & _LBOUND else LLONG_MIN
        high = parse_int(values[_UBOUND], INCREX_BOUND_INT.format("UBOUND")) \
            if flags & _UBOUND else LLONG_MAX
    if low > high:
        raise CommandError(INCREX_BOUNDS)
    expire_flag = flags & _EXPIRES
    # Inferred: checked before the key is read, as SET does (INCREX may create the key).
    when = _expire_at(ctx, "increx", expire_flag, values[expire_flag]) if expire_flag else None

    db = ctx.db
    k = argv[1]
    value = _get_string(db, k)
    if by_float:
        try:
            current = Fraction(0) if value is None else parse_long_double(value, E.NOT_FLOAT)
        except LongDoubleInf:
            raise CommandError(INCREX_VALUE_INF) from None
        try:
            total = _ld_round(current + delta)
        except LongDoubleInf:  # past LDBL_MAX: out of the type's limits, as a bound is
            total = _INFINITY if current + delta > 0 else -_INFINITY
    else:
        current = 0 if value is None else parse_int(value)
        total = current + delta  # exact: an int64 overflow is just out of the limits
    if not low <= total <= high:
        if not flags & _SATURATE:
            # Out of bounds: nothing is written (no value, TTL, event or dirty change).
            return [_human(ctx, current), _human(ctx, Fraction(0))] if by_float \
                else [current, 0]
        # A value already outside the bounds is clamped too (Redis's tests: 50 with
        # UBOUND 30 and BYINT 5 SATURATE gives [30, -20]).
        total = low if total < low else high
    if by_float:
        if total in (_INFINITY, -_INFINITY):
            raise CommandError(INCREX_APPLIED_INF)
        try:
            applied = _ld_round(total - current)
        except LongDoubleInf:
            raise CommandError(INCREX_APPLIED_INF) from None
        text = K.PlainStr(format_long_double(total))
        reply = [_human(ctx, total), _human(ctx, applied)]
    else:
        applied = total - current
        if not LLONG_MIN <= applied <= LLONG_MAX:
            raise CommandError(INCREX_APPLIED_OVERFLOW)
        text = K.own_if_unshared(str(total).encode(), ctx.config)
        reply = [total, applied]

    had_ttl = value is not None and db.ttl_ms(k) is not None
    set_ttl = expire_flag and not (flags & _ENX and had_ttl)
    if set_ttl and expire_flag in (_EXAT, _PXAT) and when <= ctx.now_ms:
        # Redis's tests: a past EXAT/PXAT deletes the key and announces only "del". The
        # reply (the computed pair) and leaving an absent key absent are inferred.
        if value is not None:
            db.delete(k)
            db.notify(EV_GENERIC, b"del", k)
        return reply
    # One change to the dirty counter in all (inferred, as for SET ... EX).
    if value is None:
        db.add(k, text)
    else:
        # PERSIST is the write without KEEPTTL.
        db.set(k, text, keep_ttl=not flags & _PERSIST)
    db.notify(EV_STRING, b"incrbyfloat" if by_float else b"incrby", k)
    if set_ttl:
        db.set_expire(k, when, changes=0)
        db.notify(EV_GENERIC, b"expire", k)
    elif flags & _PERSIST and had_ttl:
        db.notify(EV_GENERIC, b"persist", k)
    return reply


@command("substr", 4, "readonly", _ONE_KEY,
         key_flags="RO access", group="string", since="1.0.0",
         summary="Returns a substring from a string value.",
         complexity="O(N) where N is the length of the returned string. The complexity is "
                    "ultimately determined by the returned length, but because creating a "
                    "substring from an existing string is very cheap, it can be considered "
                    "O(1) for small strings.",
         deprecated=("2.0.0", "`GETRANGE`"),
         args=(key(), integer("start"), integer("end")),
         pure=True)
def substr(ctx, argv):
    """SUBSTR key start end

    GETRANGE under its old name."""
    return getrange(ctx, argv)


# --- LCS ---------------------------------------------------------------------------------

LCS_TYPE = "ERR The specified keys must contain string values"
LCS_LEN_AND_IDX = "ERR If you want both the length and indexes, please just use IDX."
LCS_TOO_LONG = "ERR String too long for LCS"
LCS_MEMORY = ("ERR Insufficient memory, transient memory for LCS exceeds "
              "proto-max-bulk-len")
_UINT32_MAX = (1 << 32) - 1


def _lcs_table(a: bytes, b: bytes, keep: bool = True) -> list:
    """Row i, column j: the length of the LCS of a[:i] and b[:j]. Without ``keep`` only
    the last row is kept (enough for the length)."""
    width = len(b) + 1
    rows = [[0] * width]
    for ai in a:
        prev = rows[-1]
        if not keep:
            rows.pop()
        row = [0] * width
        left = 0
        for j, bj in enumerate(b, 1):
            if ai == bj:
                left = prev[j - 1] + 1
            else:
                up = prev[j]
                if up > left:
                    left = up
            row[j] = left
        rows.append(row)
    return rows


@command("lcs", -3, "readonly", (1, 2, 1),
         key_flags="RO access", group="string", since="7.0.0",
         summary="Finds the longest common substring.",
         complexity="O(N*M) where N and M are the lengths of s1 and s2, respectively",
         args=(key("key1"), key("key2"), token("LEN", optional=True),
               token("IDX", optional=True),
               integer("min-match-len", token="MINMATCHLEN", optional=True),
               token("WITHMATCHLEN", optional=True)))
def lcs(ctx, argv):
    """LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]"""
    db = ctx.db
    a, b = db.read(argv[1]), db.read(argv[2])
    if (a is not None and not isinstance(a, K.STRING)) or \
            (b is not None and not isinstance(b, K.STRING)):
        raise CommandError(LCS_TYPE)  # checked before the options are read
    a, b = a or b"", b or b""
    want_len = want_idx = with_len = False
    min_len = 0
    j, n = 3, len(argv)
    while j < n:
        word = argv[j].upper()
        if word == b"IDX":
            want_idx = True
        elif word == b"LEN":
            want_len = True
        elif word == b"WITHMATCHLEN":
            with_len = True
        elif word == b"MINMATCHLEN" and j + 1 < n:
            min_len = max(parse_int(argv[j + 1]), 0)
            j += 1
        else:
            raise CommandError(E.SYNTAX)
        j += 1
    if want_idx and want_len:
        raise CommandError(LCS_LEN_AND_IDX)
    if len(a) >= _UINT32_MAX - 1 or len(b) >= _UINT32_MAX - 1:
        raise CommandError(LCS_TOO_LONG)
    # Redis refuses a table (4 bytes a cell) larger than proto-max-bulk-len.
    if (len(a) + 1) * (len(b) + 1) * 4 > ctx.config["proto-max-bulk-len"]:
        raise CommandError(LCS_MEMORY)
    if want_len:
        return _lcs_table(a, b, keep=False)[-1][-1]
    table = _lcs_table(a, b)
    total = table[len(a)][len(b)]
    # Walk back from the end as Redis does (on a tie it steps along b), collecting the
    # common string and the runs of consecutive matches.
    out = bytearray(total)
    k = total
    matches = []
    run = None  # [a_start, a_end, b_start, b_end] of the run being extended backwards
    i, j = len(a), len(b)
    while i > 0 and j > 0:
        emit = False
        if a[i - 1] == b[j - 1]:
            out[k - 1] = a[i - 1]
            k -= 1
            if run is None:
                run = [i - 1, i - 1, j - 1, j - 1]
            else:
                run[0] -= 1
                run[2] -= 1
            if run[0] == 0 or run[2] == 0:
                emit = True
            i -= 1
            j -= 1
        else:
            if table[i - 1][j] > table[i][j - 1]:
                i -= 1
            else:
                j -= 1
            emit = run is not None
        if emit:
            length = run[1] - run[0] + 1
            if not min_len or length >= min_len:
                match = [[run[0], run[1]], [run[2], run[3]]]
                if with_len:
                    match.append(length)
                matches.append(match)
            run = None
    if want_idx:
        return Map([(b"matches", matches), (b"len", total)])
    return bytes(out)
