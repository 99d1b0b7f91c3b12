"""Generic key commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME,
RENAMENX, COPY, MOVE, SWAPDB, the EXPIRE and TTL families, PERSIST, OBJECT and TOUCH.

They work on any value type; RENAME/MOVE/SWAPDB/COPY carry the whole value object (a
stream with its groups) together with its TTL.
"""

from __future__ import annotations

import random
from itertools import islice

from ..protocol.replies import OK, Simple
from ..store.keyspace import EV_GENERIC
from . import errors as E
from . import keyutil as K
from .args import LLONG_MAX, Args, parse_int, parse_int_in
from .errors import CommandError
from .table import Arg, command, help_command, integer, key, oneof, pattern, string, token

_ONE_KEY = (1, 1, 1)
_ALL_KEYS = (1, -1, 1)
_TYPE_REPLIES = {name: Simple(name.encode()) for name in ("none", "string", "hash", "stream")}


INT_MIN, INT_MAX = -(2**31), 2**31 - 1
INT_RANGE = f"ERR value is out of range, value must between {INT_MIN} and {INT_MAX}"


def _db_index(arg: bytes, error: str | None = None) -> int:
    """Redis getIntFromObjectOrReply: an int64 that also fits a C int."""
    return parse_int_in(arg, INT_MIN, INT_MAX, error or E.NOT_INTEGER, error or INT_RANGE)


def _select(ctx, arg: bytes):
    index = _db_index(arg)
    if not 0 <= index < len(ctx.keyspace.dbs):
        raise CommandError(E.DB_INDEX)
    return ctx.keyspace.dbs[index]


# --- existence ---------------------------------------------------------------------------

def _delete_keys(db, keys: list) -> int:
    deleted = 0
    for k in keys:
        if db.delete(k):
            deleted += 1
            db.notify(EV_GENERIC, b"del", k)
    return deleted


@command("del", -2, "write", _ALL_KEYS,
         tips="request_policy:multi_shard response_policy:agg_sum",
         key_flags="RM delete", group="generic", since="1.0.0",
         summary="Deletes one or more keys.",
         complexity="O(N) where N is the number of keys that will be removed. When a key to "
                    "remove holds a value other than a string, the individual complexity for "
                    "this key is O(M) where M is the number of elements in the list, set, "
                    "sorted set or hash. Removing a single key that holds a string value is "
                    "O(1).",
         args=(key(multiple=True),))
def del_(ctx, argv):
    """DEL key [key ...]"""
    return _delete_keys(ctx.db, argv[1:])


@command("unlink", -2, "write fast", _ALL_KEYS,
         tips="request_policy:multi_shard response_policy:agg_sum",
         key_flags="RM delete", group="generic", since="4.0.0",
         summary="Asynchronously deletes one or more keys.",
         complexity="O(1) for each key removed regardless of its size. Then the command does "
                    "O(N) work in a different thread in order to reclaim memory, where N is "
                    "the number of allocations the deleted objects where composed of.",
         args=(key(multiple=True),))
def unlink(ctx, argv):
    """UNLINK key [key ...]"""
    return _delete_keys(ctx.db, argv[1:])


@command("exists", -2, "readonly fast", _ALL_KEYS,
         tips="request_policy:multi_shard response_policy:agg_sum",
         key_flags="RO", group="generic", since="1.0.0",
         summary="Determines whether one or more keys exist.",
         complexity="O(N) where N is the number of keys to check.",
         args=(key(multiple=True),),
         pure=True,
         history=(
             ("3.0.3", "Accepts multiple `key` arguments."),
         ))
def exists(ctx, argv):
    """EXISTS key [key ...]"""
    db = ctx.db
    return sum(1 for k in argv[1:] if db.read(k) is not None)


@command("touch", -2, "readonly fast", _ALL_KEYS,
         tips="request_policy:multi_shard response_policy:agg_sum",
         key_flags="RO", group="generic", since="3.2.1",
         summary="Returns the number of existing keys out of those specified after updating "
                 "the time they were last accessed.",
         complexity="O(N) where N is the number of keys that will be touched.",
         args=(key(multiple=True),),
         pure=True)
def touch(ctx, argv):
    """TOUCH key [key ...]"""
    db = ctx.db
    return sum(1 for k in argv[1:] if db.read(k) is not None)


@command("type", 2, "readonly fast", _ONE_KEY,
         key_flags="RO", group="generic", since="1.0.0",
         summary="Determines the type of value stored at a key.", complexity="O(1)",
         args=(key(),),
         pure=True)
def type_(ctx, argv):
    """TYPE key"""
    value = ctx.db.read(argv[1])
    if value is None:
        return _TYPE_REPLIES["none"]
    name = K.type_name(value)
    return _TYPE_REPLIES.get(name) or Simple(name.encode())


# --- enumeration -------------------------------------------------------------------------

@command("keys", 2, "readonly",
         acl="dangerous", tips="request_policy:all_shards nondeterministic_output_order",
         group="generic", since="1.0.0",
         summary="Returns all key names that match a pattern.",
         complexity="O(N) with N being the number of keys in the database, under the "
                    "assumption that the key names in the database and the given pattern "
                    "have limited length.",
         args=(pattern(),),
         pure=True)
def keys(ctx, argv):
    """KEYS pattern"""
    pat = argv[1]
    # Redis's KEYS leaves expired keys out without deleting them (DBSIZE still counts
    # them, expired_keys does not move): it walks the table it would be changing.
    names = ctx.db.keys(reclaim=False)
    if pat == b"*":
        return names
    return [k for k in names if K.glob_match(pat, k)]


def parse_scan_options(args: Args, allow_type: bool):
    """COUNT/MATCH/TYPE as Redis's scanGenericCommand reads them (the last one wins)."""
    count, pat, typ, novalues = 10, None, None, False
    while not args.done:
        word = args.peek_upper()
        left = args.remaining
        if word == b"COUNT" and left >= 2:
            args.next()
            count = parse_int(args.next())
            if count < 1:
                raise CommandError(E.SYNTAX)
        elif word == b"MATCH" and left >= 2:
            args.next()
            pat = args.next()
            if pat == b"*":
                pat = None
        elif word == b"TYPE" and allow_type and left >= 2:
            args.next()
            typ = args.next().decode("utf-8", "replace").lower()
        elif word == b"NOVALUES" and not allow_type:
            args.next()
            novalues = True
        else:
            raise CommandError(E.SYNTAX)
    return count, pat, typ, novalues


@command("scan", -2, "readonly",
         tips="nondeterministic_output request_policy:special", group="generic", since="2.8.0",
         summary="Iterates over the key names in the database.",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough "
                    "command calls for the cursor to return back to 0. N is the number of "
                    "elements inside the collection.",
         args=(integer("cursor"), pattern(token="MATCH", optional=True),
               integer("count", token="COUNT", optional=True),
               string("type", token="TYPE", optional=True, since="6.0.0")),
         pure=True,
         history=(
             ("6.0.0", "Added the `TYPE` subcommand."),
         ))
def scan(ctx, argv):
    """SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]"""
    cursor = K.parse_cursor(argv[1])
    count, pat, typ, _ = parse_scan_options(Args(argv, 2), allow_type=True)
    db = ctx.db
    nxt, names = K.SNAPSHOTS.step(db, lambda: list(db.data), cursor, count)
    out = []
    for k in names:
        # The pattern first, as in Redis: a name it rejects is never looked up, so an
        # expired key is reclaimed here only if it matches.
        if pat is not None and not K.glob_match(pat, k):
            continue
        value = db.get(k)  # also expires the stale keys it meets, as Redis's SCAN does
        if value is None:
            continue
        if typ is not None and K.type_name(value) != typ:
            continue
        out.append(k)
    return [str(nxt).encode(), out]


@command("randomkey", 1, "readonly",
         tips="request_policy:all_shards nondeterministic_output", group="generic", since="1.0.0",
         summary="Returns a random key name from the database.", complexity="O(1)",
         pure=True)
def randomkey(ctx, argv):
    """RANDOMKEY"""
    db = ctx.db
    for _ in range(16):
        if not db.data:
            return None
        k = next(islice(iter(db.data), random.randrange(len(db.data)), None))
        if db.get(k) is not None:
            return k
    # Mostly expired keys: reclaim them all in one pass rather than one per try.
    live = db.keys()
    return random.choice(live) if live else None


# --- moving values -----------------------------------------------------------------------

def _rename(ctx, argv, nx: bool):
    db = ctx.db
    src, dst = argv[1], argv[2]
    if db.get(src) is None:
        raise CommandError(E.NO_SUCH_KEY)
    if src == dst:
        return 0 if nx else OK
    old = db.get(dst)
    if old is not None:
        if nx:
            return 0
        db.delete(dst, changes=0)
    value, when = db.pop(src, changes=0)
    K.place_value(db, dst, value, when)
    db.notify(EV_GENERIC, b"rename_from", src)
    db.notify(EV_GENERIC, b"rename_to", dst)
    if old is not None:
        K.announce_overwrite(db, dst, old, value)
    return 1 if nx else OK


@command("rename", 3, "write", (1, 2, 1),
         key_flags=("RW access delete", "OW update"), group="generic", since="1.0.0",
         summary="Renames a key and overwrites the destination.", complexity="O(1)",
         args=(key(), key("newkey", spec=1)))
def rename(ctx, argv):
    """RENAME key newkey"""
    return _rename(ctx, argv, nx=False)


@command("renamenx", 3, "write fast", (1, 2, 1),
         key_flags=("RW access delete", "OW insert"), group="generic", since="1.0.0",
         summary="Renames a key only when the target key name doesn't exist.",
         complexity="O(1)", args=(key(), key("newkey", spec=1)),
         history=(
             ("3.2.0", "The command no longer returns an error when source and destination names are the same."),
         ))
def renamenx(ctx, argv):
    """RENAMENX key newkey"""
    return _rename(ctx, argv, nx=True)


@command("move", 3, "write fast", _ONE_KEY,
         key_flags="RW access update", group="generic", since="1.0.0",
         summary="Moves a key to another database.", complexity="O(1)",
         args=(key(), integer("db")))
def move(ctx, argv):
    """MOVE key db"""
    src_db = ctx.db
    dst_db = _select(ctx, argv[2])
    if dst_db is src_db:
        raise CommandError("ERR source and destination objects are the same")
    k = argv[1]
    if src_db.get(k) is None or dst_db.get(k) is not None:
        return 0
    value, when = src_db.pop(k, changes=0)
    K.place_value(dst_db, k, value, when)
    src_db.notify(EV_GENERIC, b"move_from", k)
    dst_db.notify(EV_GENERIC, b"move_to", k)
    return 1


@command("copy", -3, "write denyoom", (1, 2, 1),
         key_flags=("RO access", "OW update"), group="generic", since="6.2.0",
         summary="Copies the value of a key to a new key.",
         complexity="O(N) worst case for collections, where N is the number of nested "
                    "items. O(1) for string values.",
         args=(key("source"), key("destination", spec=1),
               integer("destination-db", token="DB", optional=True),
               token("REPLACE", optional=True)))
def copy(ctx, argv):
    """COPY source destination [DB destination-db] [REPLACE]"""
    src_db = dst_db = ctx.db
    replace = False
    args = Args(argv, 3)
    while not args.done:
        word = args.next().upper()
        if word == b"REPLACE":
            replace = True
        elif word == b"DB" and not args.done:
            dst_db = _select(ctx, args.next())
        else:
            raise CommandError(E.SYNTAX)
    src, dst = argv[1], argv[2]
    if src_db is dst_db and src == dst:
        raise CommandError("ERR source and destination objects are the same")
    value = src_db.read(src)  # Redis reads the source, and writes the destination
    if value is None:
        return 0
    old = dst_db.get(dst)
    if old is not None:
        if not replace:
            return 0
        dst_db.delete(dst, changes=0)
    K.place_value(dst_db, dst, K.copy_value(value), src_db.ttl_ms(src))
    dst_db.notify(EV_GENERIC, b"copy_to", dst)
    if old is not None:
        K.announce_overwrite(dst_db, dst, old, value)
    return 1


@command("swapdb", 3, "write fast",
         acl="keyspace dangerous", group="server", since="4.0.0",
         summary="Swaps two Redis databases.",
         complexity="O(N) where N is the count of clients watching or blocking on keys "
                    "from both databases.",
         args=(integer("index1"), integer("index2")))
def swapdb(ctx, argv):
    """SWAPDB index1 index2"""
    a = _db_index(argv[1], "ERR invalid first DB index")
    b = _db_index(argv[2], "ERR invalid second DB index")
    n = len(ctx.keyspace.dbs)
    if not (0 <= a < n and 0 <= b < n):
        raise CommandError(E.DB_INDEX)
    if a != b:
        ctx.keyspace.swap(a, b)
    ctx.keyspace.dirty += 1  # Redis counts a swap of a database with itself too
    return OK


# --- expiry ------------------------------------------------------------------------------

_EXPIRE_FLAGS = (b"NX", b"XX", b"GT", b"LT")


def _expire(ctx, argv, name: str, unit_ms: int, absolute: bool):
    flags = set()
    for opt in argv[3:]:
        word = opt.upper()
        if word not in _EXPIRE_FLAGS:
            raise CommandError(f"ERR Unsupported option {E._show(opt, 1 << 20)}")
        flags.add(word)
    if b"NX" in flags and len(flags) > 1:
        raise CommandError("ERR NX and XX, GT or LT options at the same time are not compatible")
    if b"GT" in flags and b"LT" in flags:
        raise CommandError("ERR GT and LT options at the same time are not compatible")
    when = parse_int(argv[2])
    invalid = E.INVALID_EXPIRE.format(name)
    if unit_ms == 1000:
        if when > LLONG_MAX // 1000 or when < -(LLONG_MAX // 1000):
            raise CommandError(invalid)
        when *= 1000
    base = 0 if absolute else ctx.now_ms
    if when > LLONG_MAX - base:
        raise CommandError(invalid)
    when += base
    db = ctx.db
    k = argv[1]
    if db.get(k) is None:
        return 0
    if flags:
        current = db.ttl_ms(k)
        if b"NX" in flags and current is not None:
            return 0
        if b"XX" in flags and current is None:
            return 0
        if b"GT" in flags and (current is None or when <= current):
            return 0
        if b"LT" in flags and current is not None and when >= current:
            return 0
    if when <= ctx.now_ms:
        db.delete(k)
        db.notify(EV_GENERIC, b"del", k)
    else:
        db.set_expire(k, when)
        db.notify(EV_GENERIC, b"expire", k)
    return 1


def _expire_row(name, unit_ms, absolute, since, summary, arg):
    @command(name, -3, "write fast", _ONE_KEY, key_flags="RW update", group="generic",
             since=since,
             summary=summary, complexity="O(1)",
             args=(key(), arg,
                   oneof("condition", token("NX"), token("XX"), token("GT"), token("LT"),
                         optional=True, since="7.0.0")),
             history=(("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."),))
    def handler(ctx, argv):
        return _expire(ctx, argv, name, unit_ms, absolute)

    handler.__doc__ = f"{name.upper()} key {arg.name} [NX | XX | GT | LT]"
    handler.__name__ = name
    return handler


def _unix_time(name):
    return Arg(name, "unix-time")


expire = _expire_row("expire", 1000, False, "1.0.0",
                     "Sets the expiration time of a key in seconds.", integer("seconds"))
pexpire = _expire_row("pexpire", 1, False, "2.6.0",
                      "Sets the expiration time of a key in milliseconds.",
                      integer("milliseconds"))
expireat = _expire_row("expireat", 1000, True, "1.2.0",
                       "Sets the expiration time of a key to a Unix timestamp.",
                       _unix_time("unix-time-seconds"))
pexpireat = _expire_row("pexpireat", 1, True, "2.6.0",
                        "Sets the expiration time of a key to a Unix milliseconds timestamp.",
                        _unix_time("unix-time-milliseconds"))


def _ttl(ctx, k: bytes, ms: bool, absolute: bool):
    db = ctx.db
    if db.read(k) is None:
        return -2
    when = db.ttl_ms(k)
    if when is None:
        return -1
    left = when if absolute else max(0, when - ctx.now_ms)
    return left if ms else (left + 500) // 1000


@command("ttl", 2, "readonly fast", _ONE_KEY,
         tips="nondeterministic_output",
         key_flags="RO access", group="generic", since="1.0.0",
         summary="Returns the expiration time in seconds of a key.", complexity="O(1)",
         args=(key(),),
         pure=True,
         history=(
             ("2.8.0", "Added the -2 reply."),
         ))
def ttl(ctx, argv):
    """TTL key"""
    return _ttl(ctx, argv[1], ms=False, absolute=False)


@command("pttl", 2, "readonly fast", _ONE_KEY,
         tips="nondeterministic_output",
         key_flags="RO access", group="generic", since="2.6.0",
         summary="Returns the expiration time in milliseconds of a key.", complexity="O(1)",
         args=(key(),),
         pure=True,
         history=(
             ("2.8.0", "Added the -2 reply."),
         ))
def pttl(ctx, argv):
    """PTTL key"""
    return _ttl(ctx, argv[1], ms=True, absolute=False)


@command("expiretime", 2, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="generic", since="7.0.0",
         summary="Returns the expiration time of a key as a Unix timestamp.",
         complexity="O(1)", args=(key(),),
         pure=True)
def expiretime(ctx, argv):
    """EXPIRETIME key"""
    return _ttl(ctx, argv[1], ms=False, absolute=True)


@command("pexpiretime", 2, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="generic", since="7.0.0",
         summary="Returns the expiration time of a key as a Unix milliseconds timestamp.",
         complexity="O(1)", args=(key(),),
         pure=True)
def pexpiretime(ctx, argv):
    """PEXPIRETIME key"""
    return _ttl(ctx, argv[1], ms=True, absolute=True)


@command("persist", 2, "write fast", _ONE_KEY,
         key_flags="RW update", group="generic", since="2.2.0",
         summary="Removes the expiration time of a key.", complexity="O(1)", args=(key(),))
def persist(ctx, argv):
    """PERSIST key"""
    db = ctx.db
    if db.get(argv[1]) is None or not db.persist(argv[1]):
        return 0
    db.notify(EV_GENERIC, b"persist", argv[1])
    return 1


# --- OBJECT ------------------------------------------------------------------------------

command("object", -2, "", group="generic", since="2.2.3",
        summary="A container for object introspection commands.",
        complexity="Depends on subcommand.", container=True)

_LRU_POLICY_NOTE = ("Please note that when switching between policies at runtime LRU and LFU "
                    "data will take some time to adjust.")
_LFU_INIT_VAL = 5  # Redis's starting LFU counter for a new key


def _lfu(ctx) -> bool:
    return "lfu" in str(ctx.config["maxmemory-policy"]).lower()


def _object_value(ctx, argv):
    return ctx.db.read_quiet(argv[2])


@command("object|encoding", 3, "readonly", (2, 2, 1),
         tips="nondeterministic_output",
         key_flags="RO", group="generic", since="2.2.3",
         summary="Returns the internal encoding of a Redis object.", complexity="O(1)",
         args=(key(),))
def object_encoding(ctx, argv):
    """OBJECT ENCODING key"""
    value = _object_value(ctx, argv)
    if value is None:
        return None
    return K.encoding(value, ctx.config).encode()


@command("object|freq", 3, "readonly", (2, 2, 1),
         tips="nondeterministic_output",
         key_flags="RO", group="generic", since="4.0.0",
         summary="Returns the logarithmic access frequency counter of a Redis object.",
         complexity="O(1)", args=(key(),))
def object_freq(ctx, argv):
    """OBJECT FREQ key"""
    value = _object_value(ctx, argv)
    if value is None:
        return None
    if not _lfu(ctx):
        raise CommandError("ERR An LFU maxmemory policy is not selected, access frequency "
                           "not tracked. " + _LRU_POLICY_NOTE)
    return _LFU_INIT_VAL


@command("object|idletime", 3, "readonly", (2, 2, 1),
         tips="nondeterministic_output",
         key_flags="RO", group="generic", since="2.2.3",
         summary="Returns the time since the last access to a Redis object.",
         complexity="O(1)", args=(key(),))
def object_idletime(ctx, argv):
    """OBJECT IDLETIME key"""
    value = _object_value(ctx, argv)
    if value is None:
        return None
    if _lfu(ctx):
        raise CommandError("ERR An LFU maxmemory policy is selected, idle time not tracked. "
                           + _LRU_POLICY_NOTE)
    # Access times are not tracked per key: every key reads as just used.
    return 0


@command("object|refcount", 3, "readonly", (2, 2, 1),
         tips="nondeterministic_output",
         key_flags="RO", group="generic", since="2.2.3",
         summary="Returns the reference count of a value of a key.", complexity="O(1)",
         args=(key(),))
def object_refcount(ctx, argv):
    """OBJECT REFCOUNT key"""
    value = _object_value(ctx, argv)
    if value is None:
        return None
    return K.string_refcount(value) if isinstance(value, K.STRING) else 1


_OBJECT_HELP = [
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Print this help.",
]


help_command("object", "generic", "6.2.0", _OBJECT_HELP)
