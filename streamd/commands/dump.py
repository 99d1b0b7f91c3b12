"""DUMP and RESTORE: a key's value as Redis's serialized form, and back.

The payload format lives in ``streamd.rdb``; this module parses the commands, applies
RESTORE's options and TTL, and turns a payload that does not load into Redis's errors.
"""

from __future__ import annotations

from ..protocol.replies import OK
from ..rdb import objects as rdb
from ..store.keyspace import EV_GENERIC
from . import errors as E
from . import keyutil as K
from .args import parse_int
from .errors import CommandError
from .streams import new_idmp_state
from .table import command, integer, key, string, token

_ONE_KEY = (1, 1, 1)
BUSYKEY = "BUSYKEY Target key name already exists."
BAD_PAYLOAD = "ERR DUMP payload version or checksum are wrong"
BAD_DATA = "ERR Bad data format"


@command("dump", 2, "readonly", _ONE_KEY,
         tips="nondeterministic_output",
         key_flags="RO access", group="generic", since="2.6.0",
         summary="Returns a serialized representation of the value stored at a key.",
         complexity="O(1) to access the key and additional O(N*M) to serialize it, where N "
                    "is the number of Redis objects composing the value and M their average "
                    "size. For small string values the time complexity is thus O(1)+O(1*M) "
                    "where M is small, so simply O(1).",
         args=(key(),))
def dump(ctx, argv):
    """DUMP key"""
    value = ctx.db.read(argv[1])
    if value is None:
        return None
    return dump_value(ctx, value)


def dump_value(ctx, value) -> bytes:
    """``value``'s payload as this server writes it (``rdbcompression`` decides LZF): what
    DUMP replies, MIGRATE sends and DEBUG RELOAD saves."""
    return rdb.dump(value, compress=ctx.config["rdbcompression"])


def load_value(ctx, payload: bytes):
    """The value a verified payload holds, as this server loads it: hashes get encodings
    by its listpack limits, streams IDMP state by the payload's settings or, for payloads
    from before IDMP, the server's defaults. Raises ``rdb.BadData``."""
    def make_idmp(duration, maxsize):
        state = new_idmp_state(ctx)
        if duration is not None:
            state.duration = duration
            state.maxsize = maxsize
        return state
    config = ctx.config
    return rdb.load(payload, hash_max_entries=config["hash-max-listpack-entries"],
                    hash_max_value=config["hash-max-listpack-value"], new_idmp=make_idmp)


_RESTORE_COMPLEXITY = (
    "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, "
    "where N is the number of Redis objects composing the value and M their average size. "
    "For small string values the time complexity is thus O(1)+O(1*M) where M is small, so "
    "simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because "
    "inserting values into sorted sets is O(log(N)).")
_RESTORE_ARGS = (key(), integer("ttl"), string("serialized-value"),
                 token("REPLACE", optional=True, since="3.0.0"),
                 token("ABSTTL", optional=True, since="5.0.0"),
                 integer("seconds", token="IDLETIME", optional=True, since="5.0.0"),
                 integer("frequency", token="FREQ", optional=True, since="5.0.0"))
_RESTORE_HISTORY = (
    ("3.0.0", "Added the `REPLACE` modifier."),
    ("5.0.0", "Added the `ABSTTL` modifier."),
    ("5.0.0", "Added the `IDLETIME` and `FREQ` options."),
)


@command("restore", -4, "write denyoom", _ONE_KEY,
         key_flags="OW update", group="generic", since="2.6.0",
         acl="keyspace dangerous",
         summary="Creates a key from the serialized representation of a value.",
         complexity=_RESTORE_COMPLEXITY, args=_RESTORE_ARGS, history=_RESTORE_HISTORY)
def restore(ctx, argv):
    """RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]"""
    replace = absttl = False
    idle = freq = None
    j = 4
    while j < len(argv):
        word = argv[j].upper()
        more = j + 1 < len(argv)
        if word == b"REPLACE":
            replace = True
        elif word == b"ABSTTL":
            absttl = True
        elif word == b"IDLETIME" and more and freq is None:
            idle = parse_int(argv[j + 1])
            if idle < 0:
                raise CommandError("ERR Invalid IDLETIME value, must be >= 0")
            j += 1
        elif word == b"FREQ" and more and idle is None:
            freq = parse_int(argv[j + 1])
            if not 0 <= freq <= 255:
                raise CommandError("ERR Invalid FREQ value, must be >= 0 and <= 255")
            j += 1
        else:
            raise CommandError(E.SYNTAX)
        j += 1
    db = ctx.db
    k = argv[1]
    if not replace and db.get(k) is not None:
        raise CommandError(BUSYKEY)
    ttl = parse_int(argv[2])
    if ttl < 0:
        raise CommandError("ERR Invalid TTL value, must be >= 0")
    payload = bytes(argv[3])
    try:
        rdb.verify(payload, check_crc=not ctx.keyspace.skip_checksum_validation)
    except rdb.PayloadError:
        raise CommandError(BAD_PAYLOAD) from None
    try:
        value = load_value(ctx, payload)
    except rdb.BadData:
        raise CommandError(BAD_DATA) from None
    old = db.get(k) if replace else None
    if old is not None:
        db.delete(k, changes=0)
    if ttl and not absttl:
        ttl += ctx.now_ms
    if ttl and ttl <= ctx.now_ms:
        # Already expired: nothing is created; a replaced key is simply gone.
        if old is not None:
            db.modified(k)
            db.notify(EV_GENERIC, b"del", k)
        return OK
    if isinstance(value, bytes):
        value = K.own_if_unshared(value, ctx.config)
    K.place_value(db, k, value, ttl or None)
    db.notify(EV_GENERIC, b"restore", k)
    if old is not None:
        K.announce_overwrite(db, k, old, value)  # after "restore", as Redis 8 sends them
    return OK


@command("restore-asking", -4, "write denyoom asking", _ONE_KEY,
         key_flags="OW update", group="server", since="3.0.0",
         acl="keyspace dangerous", doc_flags=("syscmd",),
         summary="An internal command for migrating keys in a cluster.",
         complexity=_RESTORE_COMPLEXITY, args=_RESTORE_ARGS, history=_RESTORE_HISTORY)
def restore_asking(ctx, argv):
    """RESTORE-ASKING key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]"""
    return restore(ctx, argv)  # ASKING only matters in cluster mode, which streamd is not
