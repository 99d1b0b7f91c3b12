"""MIGRATE: move keys to another server as DUMP payloads carried by RESTORE.

Synchronous as in Redis: the server waits for the target, at most ``timeout`` ms per step
(connect, write, each reply). Connections are kept per target for 10 s and reused, with
the database they last selected, as Redis keeps them (``protocol.upstream.UpstreamCache``):
a reused connection keeps whatever AUTH it had.
"""

from __future__ import annotations

import time

from ..protocol.replies import OK, Simple
from ..protocol.upstream import encode_command
from ..store.keyspace import EV_GENERIC
from . import errors as E
from .args import atoi, parse_int
from .dump import dump_value
from .errors import CommandError
from .table import TABLE, Arg, block, command, integer, key, oneof, string, token

NOKEY = Simple(b"NOKEY")
_KEYS_NEED_EMPTY = ("ERR When using MIGRATE KEYS option, the key argument must be set to "
                    "the empty string")


class _Io(Exception):
    """A socket failure; ``step`` is what Redis names in its IOERR reply."""

    def __init__(self, step: str, timed_out: bool):
        super().__init__(step)
        self.step = step
        self.timed_out = timed_out


@command("migrate", -6, "write", (3, 3, 1), keyword_keys=("KEYS", -2, 0),
         key_flags=("RW access delete", "RW access delete incomplete"),
         tips="nondeterministic_output", acl="keyspace dangerous", group="generic",
         since="2.6.0",
         summary="Atomically transfers a key from one Redis instance to another.",
         complexity="This command actually executes a DUMP+DEL in the source instance, and "
                    "a RESTORE in the target instance. See the pages of these commands for "
                    "time complexity. Also an O(N) data transfer between the two instances "
                    "is performed.",
         args=(string("host"), integer("port"),
               oneof("key_or_empty_string", key(), token("", "empty_string")),
               integer("destination-db"), integer("timeout"),
               token("COPY", optional=True, since="3.0.0"),
               token("REPLACE", optional=True, since="3.0.0"),
               oneof("authentication",
                     string("password", token="AUTH", optional=True, since="4.0.7"),
                     block("username_password", string("username"), string("password"),
                           token="AUTH2", optional=True, since="6.0.0"),
                     optional=True),
               Arg("key", "key", key_spec_index=1, token="KEYS", optional=True,
                   multiple=True, since="3.0.6")),
         history=(
             ("3.0.0", "Added the `COPY` and `REPLACE` options."),
             ("3.0.6", "Added the `KEYS` option."),
             ("4.0.7", "Added the `AUTH` option."),
             ("6.0.0", "Added the `AUTH2` option."),
         ))
def migrate(ctx, argv):
    """MIGRATE host port <key | ""> destination-db timeout [COPY] [REPLACE] [AUTH password | AUTH2 username password] [KEYS key [key ...]]"""
    copy = replace = False
    username = password = None
    keys = [argv[3]]
    j = 6
    while j < len(argv):
        word = argv[j].upper()
        more = len(argv) - 1 - j
        if word == b"COPY":
            copy = True
        elif word == b"REPLACE":
            replace = True
        elif word == b"AUTH":
            if not more:
                raise CommandError(E.SYNTAX)
            j += 1
            password = argv[j]
        elif word == b"AUTH2":
            if more < 2:
                raise CommandError(E.SYNTAX)
            username, password = argv[j + 1], argv[j + 2]
            j += 2
        elif word == b"KEYS":
            if argv[3]:
                raise CommandError(_KEYS_NEED_EMPTY)
            keys = argv[j + 1:]
            break
        else:
            raise CommandError(E.SYNTAX)
        j += 1
    timeout = parse_int(argv[5])
    dbid = parse_int(argv[4])
    if timeout <= 0:
        timeout = 1000
    db = ctx.db
    keys = [k for k in keys if db.read(k) is not None]
    if not keys:
        return NOKEY
    host = argv[1].decode("utf-8", "replace")
    port = atoi(argv[2])  # as Redis reads it: "6379x" is 6379, junk is 0
    retry = True
    while True:
        try:
            return _transfer(ctx, host, port, keys, dbid, timeout, copy, replace,
                             username, password)
        except _Io as exc:
            # Redis retries once, on a fresh connection, unless the step timed out.
            if retry and not exc.timed_out:
                retry = False
                continue
            raise CommandError(f"IOERR error or timeout {exc.step} to target instance") \
                from None


def _transfer(ctx, host, port, keys, dbid, timeout, copy, replace, username, password):
    db = ctx.db
    cache = ctx.server.migrate_sockets
    try:
        if port < 0:
            raise OSError("no such port")  # the resolver refuses it
        # A port past 65535 wraps, as the resolver's 16-bit conversion makes it.
        entry = cache.get(host, port & 0xFFFF, timeout / 1000, time.monotonic())
    except ConnectionRefusedError:
        # Redis connects without blocking and learns of a refusal from its first write.
        raise _Io("writing", False) from None
    except OSError:
        raise CommandError("IOERR error or timeout connecting to the client") from None
    conn = entry.conn
    try:
        out = []
        if password is not None:
            out.append(encode_command([b"AUTH", username, password] if username is not None
                                      else [b"AUTH", password]))
        select = entry.dbid != dbid
        if select:
            out.append(encode_command([b"SELECT", dbid]))
        sent = []
        for k in keys:
            value = db.get(k)
            if value is None:  # expired since the first look
                continue
            when = db.ttl_ms(k)
            ttl = 0 if when is None else max(1, when - ctx.now_ms)
            args = [b"RESTORE", k, ttl, dump_value(ctx, value)]
            if replace:
                args.append(b"REPLACE")
            out.append(encode_command(args))
            sent.append(k)
        try:
            conn.send(b"".join(out))
        except OSError as exc:
            raise _Io("writing", isinstance(exc, TimeoutError)) from None
        try:
            auth_reply = conn.read_line() if password is not None else b"+OK"
            select_reply = conn.read_line() if select else b"+OK"
        except OSError as exc:
            raise _Io("reading", isinstance(exc, TimeoutError)) from None
        error = None
        for done, k in enumerate(sent):
            try:
                line = conn.read_line()
            except OSError as exc:
                if done == 0 and error is None:
                    raise _Io("reading", isinstance(exc, TimeoutError)) from None
                cache.drop(host, port)
                if error is None:
                    error = "IOERR error or timeout reading to target instance"
                break
            bad = next((x for x in (auth_reply, select_reply, line) if x[:1] == b"-"), None)
            if bad is not None:
                if error is None:
                    entry.dbid = -1  # the target may not have selected it
                    error = ("ERR Target instance replied with error: "
                             + bad[1:].decode("utf-8", "replace"))
            elif not copy:
                db.delete(k)
                db.notify(EV_GENERIC, b"del", k)
        if error is not None:
            raise CommandError(error)
        entry.dbid = dbid
        return OK
    except _Io:
        cache.drop(host, port)  # a retry starts from a fresh connection
        raise


def _migrate_keys(argv: list) -> list:
    """Redis's migrateGetKeys: the key argument, or (when it is empty) what follows KEYS;
    AUTH and AUTH2 values are skipped, not mistaken for the keyword."""
    skip = {b"COPY": 0, b"REPLACE": 0, b"AUTH": 1, b"AUTH2": 2}
    i = 6
    while i < len(argv):
        word = argv[i].upper()
        if word == b"KEYS":
            return [] if argv[3] else argv[i + 1:]
        i += 1 + skip.get(word, 0)
    return argv[3:4]


def _migrate_key_flags(argv: list) -> str:
    keys_given = any(a.upper() == b"KEYS" for a in argv[6:])
    return TABLE[b"migrate"].spec_flags()[1 if keys_given else 0]


TABLE[b"migrate"].getkeys = _migrate_keys
TABLE[b"migrate"].key_flags_for = _migrate_key_flags
