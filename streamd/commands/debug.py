"""DEBUG: the subcommands test suites and client libraries use, refused unless
``enable-debug-command`` allows the client (the dispatcher checks it: ``protected``)."""

from __future__ import annotations

import hashlib
import math
import os
import re
import time

from ..protocol.replies import OK, Simple
from ..rdb import objects as rdb
from ..store.streamid import MAX_ID
from . import errors as E
from . import keyutil as K
from .args import atoi
from .dump import dump_value, load_value
from .errors import CommandError
from .table import command

# Redis 7.0's DEBUG HELP, line for line (it lists subcommands streamd does not have; the
# text is Redis's reply, which clients may show as it is).
_HELP = (
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "AOF-FLUSH-SLEEP <microsec>",
    "    Server will sleep before flushing the AOF, this is used for testing.",
    "ASSERT",
    "    Crash by assertion failed.",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "CRASH-AND-RECOVER [<milliseconds>]",
    "    Hard crash and restart after a <milliseconds> delay (default 0).",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LEAK <string>",
    "    Create a memory leak of the input string.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "HTSTATS <dbid>",
    "    Return hash table statistics of the specified Redis database.",
    "HTSTATS-KEY <key>",
    "    Like HTSTATS but for the hash table stored at <key>'s value.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "REPLICATE <string>",
    "    Replicates the provided string to replicas, allowing data divergence.",
    "MALLCTL <key> [<val>]",
    "    Get or set a malloc tuning integer.",
    "MALLCTL-STR <key> [<val>]",
    "    Get or set a malloc tuning string.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "DROP-CLUSTER-PACKET-FILTER <packet-type>",
    "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
    "OOM",
    "    Crash the server simulating an out-of-memory error.",
    "PANIC",
    "    Crash the server simulating a panic.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "RESTART [<milliseconds>]",
    "    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
    "SDSLEN <key>",
    "    Show low level SDS string info representing `key` and value.",
    "SEGFAULT",
    "    Crash the server with sigsegv.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
    "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "STRINGMATCH-TEST",
    "    Run a fuzz tester against the stringmatchlen() function.",
    "STRUCTSIZE",
    "    Return the size of different Redis core C structures.",
    "LISTPACK <key>",
    "    Show low level info about the listpack encoding of <key>.",
    "QUICKLIST <key> [<0|1>]",
    "    Show low level info about the quicklist encoding of <key>.",
    "    The optional argument (0 by default) sets the level of detail",
    "CLIENT-EVICTION",
    "    Show low level client eviction pools info (maxmemory-clients).",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>",
    "    Enable or disable the reply buffer resize cron job",
    "CLUSTERLINK KILL <to|from|all> <node-id>",
    "    Kills the link based on the direction to/from (both) with the provided node.",
    "HELP",
    "    Prints this help.",
)

# C's strtod on the leading part of a text: blanks, then a decimal or hex float, or inf /
# nan; what follows is ignored and no number at all reads as 0.
_STRTOD = re.compile(
    rb"[ \t\n\v\f\r]*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
    rb"(?:[pP][+-]?[0-9]+)?|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    rb"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN]))")


def _strtod(text: bytes) -> float:
    m = _STRTOD.match(text)
    if m is None:
        return 0.0
    word = m.group(1)
    if b"x" in word or b"X" in word:
        sign = -1.0 if word[:1] == b"-" else 1.0
        body = word.lstrip(b"+-")
        if body[2:].startswith((b"p", b"P")) or body[2:] in (b"", b"."):
            return 0.0  # "0x" alone: strtod reads the 0
        return sign * float.fromhex(body.decode())
    return float(word)


def _sleep_seconds(text: bytes) -> float:
    """How long DEBUG SLEEP stops the server: Redis turns the seconds into whole
    microseconds (a C cast, toward zero) and nanosleep refuses a negative time, so a
    negative, infinite, NaN or out-of-range value returns at once."""
    seconds = _strtod(text)
    if not math.isfinite(seconds) or not 0 <= seconds * 1e6 < 2**63:
        return 0.0
    return int(seconds * 1e6) / 1e6


# --- DEBUG OBJECT's serializedlength: the value's size in an RDB file ----------------------

def _serialized_length(value, config) -> int:
    """Redis's rdbSavedObjectLen: the bytes of the value's RDB form (DUMP's payload without
    its type byte and footer), compressed as ``rdbcompression`` says."""
    return len(rdb.dump(value, compress=config["rdbcompression"])) - 11  # type byte, footer


# --- DEBUG RELOAD: a save and a load, in memory ---------------------------------------------

_LOAD_FAILED = "ERR Error trying to load the RDB dump, check server logs."


def _reload(ctx, options):
    """Save every key and load it back, as DEBUG RELOAD does through its RDB file. There is
    no file here: each value goes through its DUMP form in memory, so what survives is what
    an RDB keeps (expired keys go, strings and hashes get their encodings afresh, streams
    keep their nodes, groups and IDMP state). NOSAVE finds no file to load, as Redis would
    with none on disk."""
    flush = save = True
    merge = False
    for opt in options:
        word = opt.upper()
        if word == b"MERGE":
            merge = True
        elif word == b"NOFLUSH":
            flush = False
        elif word == b"NOSAVE":
            save = False
        else:
            raise CommandError("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE "
                               "options.")
    ks = ctx.keyspace
    if not save:
        if flush:
            ks.flush_all()
        raise CommandError(_LOAD_FAILED)
    if not flush and not merge and any(len(db) for db in ks.dbs):
        # The file's keys are all still here: Redis stops at the first duplicate.
        raise CommandError(_LOAD_FAILED)
    saved = [[(k, dump_value(ctx, v), db.ttl_ms(k)) for k, v in db.data.items()]
             for db in ks.dbs]
    ctx.server.lastsave = int(time.time())
    ks.dirty = 0
    if flush:
        ks.flush_all()
    now = ctx.now_ms
    for db, rows in zip(ks.dbs, saved):
        for k, payload, when in rows:
            if when is not None and when < now:
                continue  # a master drops keys that expired while saved
            value = load_value(ctx, payload)
            if merge:
                db.delete(k, changes=0)
            K.place_value(db, k, value, when, changes=0)
    return OK


# --- DEBUG DIGEST / DIGEST-VALUE: Redis's SHA1-based dataset signature -------------------
# Unordered parts (keys, hash fields) are combined by xoring their SHA1s, ordered parts
# (a key's type and contents, a stream's entries) by feeding each step's result back in.

_ZERO = bytes(20)
# Redis's type codes, mixed into each value's digest.
_TYPE_CODES = {"string": 0, "list": 1, "set": 2, "zset": 3, "hash": 4, "stream": 6}


def _xor(digest: bytes, data: bytes) -> bytes:
    """``digest`` xored with the SHA1 of ``data``."""
    h = hashlib.sha1(data).digest()
    return (int.from_bytes(digest, "big") ^ int.from_bytes(h, "big")).to_bytes(20, "big")


def _mix(digest: bytes, data: bytes) -> bytes:
    """``data`` xored in, then the whole digest hashed again (order matters)."""
    return hashlib.sha1(_xor(digest, data)).digest()


def _value_digest(db, key: bytes, value, digest: bytes = _ZERO) -> bytes:
    digest = _mix(digest, _TYPE_CODES[K.type_name(value)].to_bytes(4, "big"))
    if isinstance(value, K.STRING):
        digest = _mix(digest, bytes(value))
    elif isinstance(value, dict):
        for field, item in value.items():
            digest = _xor(digest, _mix(_mix(_ZERO, field), item))
    else:
        for sid, fields in value.range(0, MAX_ID):
            digest = _mix(digest, b"%d.%d" % (sid >> 64, sid & (2**64 - 1)))
            for part in fields:
                digest = _mix(digest, part)
    if key in db.expires:
        digest = _xor(digest, b"!!expire!!")
    return digest


def _dataset_digest(keyspace) -> bytes:
    """Every key of every database, logically expired ones not yet deleted included (Redis
    reads its tables directly, without expiring anything)."""
    final = _ZERO
    for db in keyspace.dbs:
        if not db.data:
            continue
        final = _mix(final, db.index.to_bytes(4, "big"))
        for key, value in db.data.items():
            final = _xor(final, _value_digest(db, key, value, _mix(_ZERO, key)))
    return final


@command("debug", -2, "admin noscript loading stale", group="server", since="1.0.0",
         summary="A container for debugging commands", complexity="Depends on subcommand.",
         doc_flags=("syscmd",), protected="enable-debug-command")
def debug(ctx, argv):
    """DEBUG subcommand [argument ...]

    Redis 7.0's subcommands HELP, SLEEP, OBJECT, SET-ACTIVE-EXPIRE, CHANGE-REPL-ID,
    DIGEST and DIGEST-VALUE;
    any other (or a known one with the wrong argument count) gets Redis's unknown-
    subcommand error. SLEEP stops the whole server, as Redis's does.
    """
    sub = argv[1].lower()
    argc = len(argv)
    if sub == b"help" and argc == 2:
        return [Simple(line) for line in _HELP]
    if sub == b"sleep" and argc == 3:
        seconds = _sleep_seconds(argv[2])
        if seconds:
            time.sleep(seconds)  # Redis's nanosleep holds every client for the duration
        return OK
    if sub == b"object" and argc == 3:
        value = ctx.db.get(argv[2])
        if value is None:
            raise CommandError(E.NO_SUCH_KEY)
        refcount = K.string_refcount(value) if isinstance(value, K.STRING) else 1
        # Access times are not kept per key: the key reads as used now (as OBJECT
        # IDLETIME says); lru is Redis's 24-bit seconds clock.
        clock = int(time.time()) & 0xFFFFFF
        return Simple(f"Value at:{id(value):#x} refcount:{refcount} "
                      f"encoding:{K.encoding(value, ctx.config)} "
                      f"serializedlength:{_serialized_length(value, ctx.config)} "
                      f"lru:{clock} lru_seconds_idle:0")
    if sub == b"set-active-expire" and argc == 3:
        ctx.keyspace.active_expire_enabled = atoi(argv[2]) != 0
        return OK
    if sub == b"reload":
        return _reload(ctx, argv[2:])
    if sub == b"set-skip-checksum-validation" and argc == 3:
        ctx.keyspace.skip_checksum_validation = atoi(argv[2]) != 0
        return OK
    if sub == b"change-repl-id" and argc == 2:
        ctx.server.replid = os.urandom(20).hex()
        return OK
    if sub == b"digest" and argc == 2:
        return Simple(_dataset_digest(ctx.keyspace).hex())
    if sub == b"digest-value":
        db = ctx.db
        return [Simple((_value_digest(db, key, db.data[key]) if key in db.data
                        else _ZERO).hex()) for key in argv[2:]]
    raise CommandError(E.unknown_subcommand_or_arity(argv[1], "debug"))
