"""Connection commands: PING, ECHO, QUIT, RESET, HELLO, AUTH, SELECT and CLIENT."""

from __future__ import annotations

import hmac
import time

from .. import REDIS_VERSION
from ..protocol.reader import request_size
from ..protocol.replies import NO_REPLY, OK, PONG, Map, SetReply, Simple, Verbatim
from . import errors as E
from .args import Args, parse_int
from .errors import CommandError
from .table import block, command, help_command, integer, oneof, string, token

_RESET = Simple(b"RESET")
# What MONITOR shows in place of a password (and of AUTH's user name): Redis rewrites the
# command's arguments as it reads them, so a monitor sees what remains in argv.
_REDACTED = b"(redacted)"


@command("ping", -1, "fast",
         tips="request_policy:all_shards response_policy:all_succeeded", group="connection",
         since="1.0.0",
         summary="Returns the server's liveliness response.", complexity="O(1)",
         args=(string("message", optional=True),),
         pure=True)
def ping(ctx, argv):
    """PING [message]"""
    if len(argv) > 2:
        raise CommandError(E.wrong_arity("ping"))
    return PONG if len(argv) == 1 else argv[1]


@command("echo", 2, "loading stale fast", group="connection", since="1.0.0",
         summary="Returns the given string.", complexity="O(1)", args=(string("message"),),
         pure=True)
def echo(ctx, argv):
    """ECHO message"""
    return argv[1]


@command("quit", -1, "noscript loading stale fast noauth allow_busy", group="connection",
         since="1.0.0",
         summary="Closes the connection.", complexity="O(1)",
         deprecated=("7.2.0", "just closing the connection"))
def quit_(ctx, argv):
    """QUIT"""
    ctx.close_after_reply()
    return OK


@command("reset", 1, "noscript loading stale fast noauth allow_busy", group="connection",
         since="6.2.0",
         summary="Resets the connection.", complexity="O(1)")
def reset(ctx, argv):
    """RESET"""
    ctx.multi = None
    ctx.multi_error = False
    ctx.unwatch_all()
    if ctx.subscribed:
        ctx.server.pubsub.drop_client(ctx)  # silently: no unsubscribe confirmations
    if ctx.monitor:
        ctx.server.remove_monitor(ctx)
    if ctx.tracking is not None:
        ctx.server.tracking.disable(ctx)
    ctx.db = ctx.keyspace.dbs[0]
    ctx.resp = 2
    ctx.name = b""
    ctx.no_evict = ctx.no_touch = False
    # CLIENT REPLY OFF and a pending SKIP end; a SKIP already in force still takes RESET's
    # own reply, as in Redis.
    ctx.reply_off = ctx.reply_skip_next = False
    ctx.authenticated = not ctx.config["requirepass"]
    return _RESET


def _check_password(ctx, user: bytes, password: bytes, name: bytes) -> None:
    """Authenticate ``ctx`` as ``user``; a failure is logged in the ACL log under the
    command's ``name`` as sent (AUTH or HELLO), as Redis does."""
    required = ctx.config["requirepass"]
    # Without requirepass the default user is "nopass": any password authenticates it.
    if user != b"default" or (required and not hmac.compare_digest(
            password, required.encode())):
        ctx.server.acl_log.auth_failed(ctx, name, user, ctx.config["acllog-max-len"])
        raise CommandError(E.WRONGPASS)
    ctx.authenticated = True


@command("auth", -2, "noscript loading stale fast noauth allow_busy", group="connection",
         since="1.0.0",
         summary="Authenticates the connection.", complexity="O(N) where N is the number of passwords defined for the user",
         args=(string("username", optional=True, since="6.0.0"), string("password")),
         history=(
             ("6.0.0", "Added ACL style (username and password)."),
         ))
def auth(ctx, argv):
    """AUTH [username] password"""
    if len(argv) > 3:
        raise CommandError(E.SYNTAX)
    user = argv[1] if len(argv) == 3 else b"default"
    password = argv[-1]
    argv[1:] = [_REDACTED] * (len(argv) - 1)
    if len(argv) == 2 and not ctx.config["requirepass"]:
        raise CommandError(E.AUTH_NOT_CONFIGURED)
    _check_password(ctx, user, password, argv[0])
    return OK


@command("hello", -1, "noscript loading stale fast noauth allow_busy", group="connection",
         since="6.0.0",
         summary="Handshakes with the Redis server.", complexity="O(1)",
         args=(block("arguments", integer("protover"),
                     block("auth", string("username"), string("password"), token="AUTH",
                           optional=True),
                     string("clientname", token="SETNAME", optional=True),
                     optional=True),),
         history=(
             ("6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context."),
         ))
def hello(ctx, argv):
    """HELLO [protover [AUTH username password] [SETNAME clientname]]"""
    proto = ctx.resp
    args = Args(argv)
    if not args.done:
        proto = parse_int(args.next(), E.PROTO_NOT_INT)
        if proto not in (2, 3):
            raise CommandError(E.NOPROTO)
    # As in Redis since 7.2, every option is checked before anything takes effect: then
    # the last AUTH is tried, and the last SETNAME applies once the client is authenticated.
    # (Redis 7.0 applied each AUTH and SETNAME as it read it.)
    credentials = name = None
    while not args.done:
        opt = args.next()
        word = opt.upper()
        if word == b"AUTH" and args.remaining >= 2:
            credentials = args.next(), args.next()
            argv[args.pos - 2:args.pos] = [_REDACTED, _REDACTED]
        elif word == b"SETNAME" and args.remaining >= 1:
            name = args.next()
            _check_name(name)
        else:
            raise CommandError(f"ERR Syntax error in HELLO option '{E._show(opt)}'")
    if credentials is not None:
        _check_password(ctx, *credentials, argv[0])
    if not ctx.authenticated:
        raise CommandError("NOAUTH HELLO must be called with the client already authenticated, "
                           "otherwise the HELLO <proto> AUTH <user> <pass> option can be used "
                           "to authenticate the client and select the RESP protocol version at "
                           "the same time")
    if name is not None:
        ctx.name = name
    ctx.resp = proto
    if ctx.subscribed:
        ctx.update_subscribed()  # a subscriber switching to RESP2 enters subscribed mode
    return Map([(b"server", b"redis"), (b"version", REDIS_VERSION.encode()),
                (b"proto", proto), (b"id", ctx.id), (b"mode", b"standalone"),
                (b"role", b"master"), (b"modules", [])])


@command("select", 2, "loading stale fast", group="connection", since="1.0.0",
         summary="Changes the selected database.", complexity="O(1)", args=(integer("index"),))
def select(ctx, argv):
    """SELECT index"""
    index = parse_int(argv[1])
    if not -(2**31) <= index < 2**31:  # Redis reads the index as a C int
        raise CommandError(E.INT_RANGE)
    if not 0 <= index < len(ctx.keyspace.dbs):
        raise CommandError(E.DB_INDEX)
    ctx.db = ctx.keyspace.dbs[index]
    return OK


# --- CLIENT ------------------------------------------------------------------------------

command("client", -2, "slow", group="connection", since="2.4.0",
        summary="A container for client connection commands.", complexity="Depends on subcommand.",
        container=True)

_NAME_OK = set(range(33, 127))


def _check_name(name: bytes, what: str = "Client names") -> None:
    if any(c not in _NAME_OK for c in name):
        raise CommandError(f"ERR {what} cannot contain spaces, newlines or special characters.")


# Redis's buffer sizes, which CLIENT LIST shows: a query buffer is made room for 16 KiB
# reads (and grows by doubling past that), a reply buffer holds 16 KiB, shrinking to 1 KiB
# once the cron finds it idle, and replies past it wait in a list of
# 16 KiB blocks. streamd reports its buffers by those rules; the bytes of a client's own
# structure are an estimate.
_IOBUF = 16 * 1024
_REPLY_CHUNK = 16 * 1024
_REPLY_MIN = 1024
_CLIENT_STRUCT = 1024
_POINTER = 8  # Redis counts a queued command's argument pointers in multi-mem


def client_memory(c, argv=None) -> tuple:
    """(qbuf, qbuf-free, argv-mem, multi-mem, rbs, obl, oll, omem, tot-mem) of client ``c``;
    ``argv``: the request it is running (CLIENT LIST or INFO of its own), which Redis
    still holds in the query buffer and as its arguments while it runs: EXEC's, when
    EXEC runs it."""
    if argv is not None and c.exec_argv is not None:
        argv = c.exec_argv
    waiting = c.pending
    # Redis parses nothing more of a blocked or paused client's input until it goes on.
    qbuf, argv_mem = c.reader.buffered(not waiting and c.waiter is None)
    own = 0
    if argv is None and c.waiter is not None:
        argv = c.waiter.sent_argv  # a blocked client keeps its command's arguments
    elif argv is None and c.postponed and waiting:
        argv, waiting = waiting[0], list(waiting)[1:]  # so does one CLIENT PAUSE holds
    elif argv is not None:
        own = request_size(argv)
    # Requests behind a blocked or paused one: Redis has not parsed them yet.
    own += sum(map(request_size, waiting))
    if argv is not None:
        argv_mem += sum(map(len, argv))
    qbuf += own
    if c.net_in == 0 and not qbuf:
        qbuf_free = 0  # nothing read yet: Redis has not made room for a read
    else:
        qbuf_free = _IOBUF - qbuf if qbuf < _IOBUF else qbuf
    multi_mem = 0
    if c.multi is not None:
        for queued in c.multi:
            args = queued[1]
            multi_mem += sum(map(len, args)) + _POINTER * len(args)
    # Replies not written yet: those of the running batch, then the transport's backlog.
    # Redis's 16 KiB buffer is written first, so a backlog sits in its reply list.
    obl = min(len(c._out), _REPLY_CHUNK)
    omem = len(c._out) - obl
    t = c.transport
    if t is not None and not t.is_closing():
        omem += t.get_write_buffer_size()
    oll = -(-omem // _REPLY_CHUNK)
    # The cron shrinks a new client's reply buffer the first time it finds it (one cron
    # period in, at most clients' counts like these) unless replies fill it.
    rbs = (_REPLY_CHUNK if time.time() - c.created < 1 / max(c.config["hz"], 1)
           or obl == _REPLY_CHUNK else _REPLY_MIN)
    return qbuf, qbuf_free, argv_mem, multi_mem, rbs, obl, oll, omem, (
        _CLIENT_STRUCT + qbuf + qbuf_free + argv_mem + multi_mem + rbs + omem)


def client_line(c, now: float, argv=None) -> str:
    """The client's CLIENT LIST line; ``argv``: the request running (see client_memory)."""
    flags = "O" if c.monitor else ""
    if c.subscribed:
        flags += "P"
    if c.multi is not None:
        flags += "x"
    if c.server.is_blocked(c):
        flags += "b"
    st = c.tracking
    if st is not None:
        flags += "t"
        if st.broken:
            flags += "R"
        if st.bcast:
            flags += "B"
    if c.watched and c.watch_dirty:
        flags += "d"
    if c.close_when_written:
        flags += "c"
    if c.no_evict:
        flags += "e"
    if c.no_touch:
        flags += "T"
    flags = flags or "N"
    qbuf, qbuf_free, argv_mem, multi_mem, rbs, obl, oll, omem, tot_mem = client_memory(c, argv)
    # rbp is Redis's reply buffer peak of the last few seconds; streamd keeps no peak (it
    # would cost every reply), so it shows what the buffer holds now. A new client's peak
    # starts at the full buffer, until the cron's first visit.
    rbp = rbs if rbs == _REPLY_CHUNK else obl
    # Redis waits for the socket to take more (a write handler: 'w') only once a write
    # fell short, not for the replies of the read it is serving.
    t = c.transport
    events = "rw" if t is not None and not t.is_closing() and t.get_write_buffer_size() else "r"
    return (f"id={c.id} addr={c.addr} laddr={c.laddr} fd={c.fd} "
            f"name={c.name.decode('utf-8', 'replace')} age={int(now - c.created)} "
            f"idle={int(now - c.last_interaction)} flags={flags} db={c.db.index} "
            f"sub={len(c.channels)} psub={len(c.patterns)} ssub={len(c.shard_channels)} multi={len(c.multi) if c.multi is not None else -1} "
            f"watch={len(c.watched)} qbuf={qbuf} qbuf-free={qbuf_free} argv-mem={argv_mem} "
            f"multi-mem={multi_mem} rbs={rbs} rbp={rbp} obl={obl} oll={oll} omem={omem} "
            f"tot-mem={tot_mem} events={events} cmd={c.last_cmd} user=default "
            f"redir={st.redirect if st is not None else -1} resp={c.resp} lib-name={c.lib_name.decode('utf-8', 'replace')} "
            f"lib-ver={c.lib_ver.decode('utf-8', 'replace')} io-thread=0 "
            f"tot-net-in={c.net_in} tot-net-out={c.net_out} tot-cmds={c.tot_cmds}")


@command("client|id", 2, "noscript loading stale", group="connection", since="5.0.0",
         summary="Returns the unique client ID of the connection.", complexity="O(1)")
def client_id(ctx, argv):
    """CLIENT ID"""
    return ctx.id


@command("client|setname", 3, "noscript loading stale", group="connection", since="2.6.9",
         summary="Sets the connection name.", complexity="O(1)",
         args=(string("connection-name"),))
def client_setname(ctx, argv):
    """CLIENT SETNAME connection-name"""
    _check_name(argv[2])
    ctx.name = argv[2]
    return OK


@command("client|getname", 2, "noscript loading stale", group="connection", since="2.6.9",
         summary="Returns the name of the connection.", complexity="O(1)")
def client_getname(ctx, argv):
    """CLIENT GETNAME"""
    return ctx.name or None


@command("client|setinfo", 4, "fast", group="connection", since="7.2.0",
         summary="Sets information specific to the client or connection.", complexity="O(1)",
         args=(oneof("attr", string("libname", token="LIB-NAME"),
                     string("libver", token="LIB-VER")),))
def client_setinfo(ctx, argv):
    """CLIENT SETINFO <LIB-NAME libname | LIB-VER libver>"""
    attr = argv[2].lower()
    if attr not in (b"lib-name", b"lib-ver"):
        raise CommandError(f"ERR Unrecognized option '{E._show(argv[2])}'")
    _check_name(argv[3], E._show(argv[2]))
    if attr == b"lib-name":
        ctx.lib_name = argv[3]
    else:
        ctx.lib_ver = argv[3]
    return OK


@command("client|info", 2, "noscript loading stale",
         tips="nondeterministic_output", group="connection", since="6.2.0",
         summary="Returns information about the connection.", complexity="O(1)")
def client_info(ctx, argv):
    """CLIENT INFO"""
    return Verbatim(client_line(ctx, time.time(), argv) + "\n")


@command("client|list", -2, "admin noscript loading stale",
         tips="nondeterministic_output", group="connection", since="2.4.0",
         summary="Lists open connections.", complexity="O(N) where N is the number of client connections",
         args=(oneof("client-type", token("NORMAL"), token("MASTER"), token("REPLICA"),
                     token("PUBSUB"), token="TYPE", optional=True, since="5.0.0"),
               integer("client-id", token="ID", optional=True, multiple=True, since="6.2.0")),
         history=(
             ("2.8.12", "Added unique client `id` field."),
             ("5.0.0", "Added optional `TYPE` filter."),
             ("6.0.0", "Added `user` field."),
             ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."),
             ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."),
             ("7.0.3", "Added `ssub` field."),
         ))
def client_list(ctx, argv):
    """CLIENT LIST [TYPE <NORMAL | MASTER | REPLICA | PUBSUB>] [ID client-id [client-id ...]]"""
    # Redis 7.0 takes one filter or none: TYPE with exactly one value, or ID with one or
    # more; anything else (TYPE and ID together included) is a syntax error.
    clients = list(ctx.server.clients.values())
    if len(argv) == 4 and argv[2].upper() == b"TYPE":
        kind = argv[3].lower()
        if kind not in (b"normal", b"master", b"replica", b"slave", b"pubsub"):
            raise CommandError(f"ERR Unknown client type '{E._show(argv[3])}'")
        # A client with subscriptions is of type pubsub (whatever its protocol), the
        # others normal; there are no masters or replicas.
        clients = [c for c in clients if (b"pubsub" if c.subscribed else b"normal") == kind]
    elif len(argv) > 3 and argv[2].upper() == b"ID":
        by_id = {c.id: c for c in clients}
        clients = []
        for a in argv[3:]:
            try:
                cid = parse_int(a)
            except CommandError:
                raise CommandError("ERR Invalid client ID") from None
            # One line per ID given, in the order given, as Redis writes them.
            if cid in by_id:
                clients.append(by_id[cid])
    elif len(argv) != 2:
        raise CommandError(E.SYNTAX)
    now = time.time()
    return Verbatim("".join(client_line(c, now, argv if c is ctx else None) + "\n"
                            for c in clients))


def _positive(arg: bytes, not_integer: str, not_positive: str) -> int:
    """A CLIENT KILL filter's value that must be a positive integer, with its two errors."""
    try:
        value = parse_int(arg)
    except CommandError:
        raise CommandError(not_integer) from None
    if value <= 0:
        raise CommandError(not_positive)
    return value


@command("client|kill", -3, "admin noscript loading stale", group="connection", since="2.4.0",
         summary="Terminates open connections.", complexity="O(N) where N is the number of client connections",
         args=(oneof("filter", string("ip:port", deprecated_since="2.8.12"),
                     oneof("new-format",
                           integer("client-id", token="ID", optional=True, since="2.8.12"),
                           oneof("client-type", token("NORMAL"), token("MASTER", since="3.2.0"),
                                 token("SLAVE"), token("REPLICA", since="5.0.0"),
                                 token("PUBSUB"), token="TYPE", optional=True,
                                 since="2.8.12"),
                           string("username", token="USER", optional=True),
                           string("ip:port", token="ADDR", optional=True),
                           string("ip:port", token="LADDR", optional=True, since="6.2.0"),
                           oneof("skipme", token("YES"), token("NO"), token="SKIPME",
                                 optional=True),
                           integer("maxage", token="MAXAGE", optional=True,
                                   since="7.4.0"), multiple=True)),),
         history=(
             ("2.8.12", "Added new filter format."),
             ("2.8.12", "`ID` option."),
             ("3.2.0", "Added `master` type in for `TYPE` option."),
             ("5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."),
             ("6.2.0", "`LADDR` option."),
         ))
def client_kill(ctx, argv):
    """CLIENT KILL <ip:port | <[ID client-id] | [TYPE type] | [USER username] | [ADDR ip:port]
    | [LADDR ip:port] | [SKIPME yes/no] | [MAXAGE maxage]> ...>

    The filters combine with AND. MAXAGE takes clients connected for at least that many
    whole seconds."""
    clients = ctx.server.clients
    if len(argv) == 3:  # legacy form: CLIENT KILL addr
        for c in list(clients.values()):
            if c.addr.encode() == argv[2]:
                c.kill()
                return OK
        raise CommandError("ERR No such client")
    if len(argv) % 2:
        raise CommandError(E.SYNTAX)
    want_id = addr = laddr = None
    maxage = 0
    skipme = True
    match_type = None  # b"normal" or b"pubsub": no masters or replicas here
    for i in range(2, len(argv), 2):
        opt, val = argv[i].upper(), argv[i + 1]
        if opt == b"ID":
            want_id = _positive(val, "ERR client-id should be greater than 0",
                                "ERR client-id should be greater than 0")
        elif opt == b"ADDR":
            addr = val
        elif opt == b"LADDR":
            laddr = val
        elif opt == b"SKIPME":
            if val.lower() not in (b"yes", b"no"):
                raise CommandError(E.SYNTAX)
            skipme = val.lower() == b"yes"
        elif opt == b"TYPE":
            kind = val.lower()
            if kind not in (b"normal", b"master", b"replica", b"slave", b"pubsub"):
                raise CommandError(f"ERR Unknown client type '{E._show(val)}'")
            match_type = kind if kind in (b"normal", b"pubsub") else b"none"
        elif opt == b"USER":
            if val != b"default":  # the only user
                raise CommandError(f"ERR No such user '{E._show(val)}'")
        elif opt == b"MAXAGE":
            maxage = _positive(val, "ERR maxage is not an integer or out of range",
                               "ERR maxage should be greater than 0")
        else:
            raise CommandError(E.SYNTAX)
    killed = 0
    now = int(time.time())
    for c in list(clients.values()):
        if match_type is not None and (b"pubsub" if c.subscribed else b"normal") != match_type:
            continue
        if want_id is not None and c.id != want_id:
            continue
        if maxage and now - int(c.created) < maxage:
            continue
        if addr is not None and c.addr.encode() != addr:
            continue
        if laddr is not None and c.laddr.encode() != laddr:
            continue
        if skipme and c is ctx:
            continue
        if c is ctx:
            ctx.close_after_reply()
        else:
            c.kill()
        killed += 1
    return killed


@command("client|unblock", -3, "admin noscript loading stale", group="connection", since="5.0.0",
         summary="Unblocks a client blocked by a blocking command from a different connection.",
         complexity="O(log N) where N is the number of client connections",
         args=(integer("client-id"),
               oneof("unblock-type", token("TIMEOUT"), token("ERROR"), optional=True)))
def client_unblock(ctx, argv):
    """CLIENT UNBLOCK client-id [TIMEOUT | ERROR]"""
    if len(argv) > 4:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "client"))
    error = False
    if len(argv) == 4:  # Redis checks the reason before the id
        mode = argv[3].upper()
        if mode not in (b"TIMEOUT", b"ERROR"):
            raise CommandError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
        error = mode == b"ERROR"
    target = parse_int(argv[2])
    return 1 if ctx.server.unblock(target, error) else 0


@command("client|pause", -3, "admin noscript loading stale", group="connection", since="3.0.0",
         summary="Suspends commands processing.", complexity="O(1)",
         args=(integer("timeout"), oneof("mode", token("WRITE"), token("ALL"), optional=True,
                                         since="6.2.0")),
         history=(
             ("6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option."),
         ))
def client_pause(ctx, argv):
    """CLIENT PAUSE timeout [WRITE | ALL]"""
    if len(argv) > 4:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "client"))
    if len(argv) == 4 and argv[3].upper() not in (b"WRITE", b"ALL"):  # before the timeout
        raise CommandError("ERR CLIENT PAUSE mode must be WRITE or ALL")
    timeout = parse_int(argv[2], "ERR timeout is not an integer or out of range")
    if timeout < 0:
        raise CommandError("ERR timeout is negative")
    mode = argv[3].lower().decode() if len(argv) == 4 else "all"
    ctx.server.pause(mode, timeout)
    return OK


@command("client|unpause", 2, "admin noscript loading stale", group="connection", since="6.2.0",
         summary="Resumes processing of clients that were paused.",
         complexity="O(N) Where N is the number of paused clients")
def client_unpause(ctx, argv):
    """CLIENT UNPAUSE"""
    ctx.server.unpause()
    return OK


def _on_off(argv) -> bool:
    mode = argv[2].upper()
    if mode not in (b"ON", b"OFF"):
        raise CommandError(E.SYNTAX)
    return mode == b"ON"


@command("client|no-evict", 3, "admin noscript loading stale", group="connection", since="7.0.0",
         summary="Sets the client eviction mode of the connection.", complexity="O(1)",
         args=(oneof("enabled", token("ON"), token("OFF")),))
def client_no_evict(ctx, argv):
    """CLIENT NO-EVICT <ON | OFF>"""
    ctx.no_evict = _on_off(argv)
    return OK


@command("client|no-touch", 3, "fast", group="connection", since="7.2.0",
         summary="Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
         complexity="O(1)", args=(oneof("enabled", token("ON"), token("OFF")),))
def client_no_touch(ctx, argv):
    """CLIENT NO-TOUCH <ON | OFF>"""
    ctx.no_touch = _on_off(argv)
    return OK


@command("client|reply", 3, "noscript loading stale", group="connection", since="3.2.0",
         summary="Instructs the server whether to reply to commands.", complexity="O(1)",
         args=(oneof("action", token("ON"), token("OFF"), token("SKIP")),))
def client_reply(ctx, argv):
    """CLIENT REPLY <ON | OFF | SKIP>

    OFF and SKIP answer nothing; ON answers OK. Which replies are then left out is the
    dispatcher's business (server/server.py)."""
    mode = argv[2].lower()
    if mode not in (b"on", b"off", b"skip"):
        raise CommandError(E.SYNTAX)
    ctx.set_reply_mode(mode)
    return OK if mode == b"on" else NO_REPLY


# --- client-side caching (the tracking itself is server/tracking.py's) ---------------------
@command("client|tracking", -3, "noscript loading stale", group="connection", since="6.0.0",
         summary="Controls server-assisted client-side caching for the connection.",
         complexity="O(1). Some options may introduce additional complexity.",
         args=(oneof("status", token("ON"), token("OFF")),
               integer("client-id", token="REDIRECT", optional=True),
               string("prefix", token="PREFIX", optional=True, multiple=True,
                      multiple_token=True),
               # Named in capitals, as since Redis 7.2's docs.
               token("BCAST", "BCAST", optional=True), token("OPTIN", "OPTIN", optional=True),
               token("OPTOUT", "OPTOUT", optional=True),
               token("NOLOOP", "NOLOOP", optional=True)))
def client_tracking(ctx, argv):
    """CLIENT TRACKING <ON | OFF> [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]

    Options are read in order (a bad one fails there); then, for ON, their combination
    and the client's current mode are checked in Redis's order."""
    server = ctx.server
    redirect = 0
    bcast = optin = optout = noloop = False
    prefixes: list[bytes] = []
    j = 3
    while j < len(argv):
        opt = argv[j].lower()
        more = j < len(argv) - 1
        if opt == b"redirect" and more:
            j += 1
            if redirect:
                raise CommandError("ERR A client can only redirect to a single other client")
            redirect = parse_int(argv[j], E.NOT_INTEGER)
            if redirect not in server.clients:
                raise CommandError("ERR The client ID you want redirect to does not exist")
        elif opt == b"bcast":
            bcast = True
        elif opt == b"optin":
            optin = True
        elif opt == b"optout":
            optout = True
        elif opt == b"noloop":
            noloop = True
        elif opt == b"prefix" and more:
            j += 1
            prefixes.append(argv[j])
        else:
            raise CommandError(E.SYNTAX)
        j += 1
    mode = argv[2].lower()
    if mode == b"off":
        server.tracking.disable(ctx)
        return OK
    if mode != b"on":
        raise CommandError(E.SYNTAX)
    st = ctx.tracking
    if prefixes and not bcast:
        raise CommandError("ERR PREFIX option requires BCAST mode to be enabled")
    if st is not None and st.bcast != bcast:
        raise CommandError("ERR You can't switch BCAST mode on/off before disabling tracking "
                           "for this client, and then re-enabling it with a different mode.")
    if bcast and (optin or optout):
        raise CommandError("ERR OPTIN and OPTOUT are not compatible with BCAST")
    if optin and optout:
        raise CommandError("ERR You can't specify both OPTIN mode and OPTOUT mode")
    if st is not None and ((optin and st.optout) or (optout and st.optin)):
        raise CommandError("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking "
                           "for this client, and then re-enabling it with a different mode.")
    if bcast:
        # Redis 7.0 reports an overlap among the given prefixes after the first one and
        # then turns tracking on anyway (two replies); here the error stands alone.
        error = server.tracking.check_prefixes(ctx, prefixes)
        if error:
            raise CommandError(error)
    server.tracking.enable(ctx, redirect, bcast, optin, optout, noloop, prefixes)
    return OK


@command("client|caching", 3, "noscript loading stale", group="connection", since="6.0.0",
         summary="Instructs the server whether to track the keys in the next request.",
         complexity="O(1)", args=(oneof("mode", token("YES"), token("NO")),))
def client_caching(ctx, argv):
    """CLIENT CACHING <YES | NO>"""
    st = ctx.tracking
    # Redis's first check is for tracking alone, whatever its message says.
    if st is None:
        raise CommandError("ERR CLIENT CACHING can be called only when the client is in "
                           "tracking mode with OPTIN or OPTOUT mode enabled")
    opt = argv[2].lower()
    if opt == b"yes":
        if not st.optin:
            raise CommandError("ERR CLIENT CACHING YES is only valid when tracking is enabled "
                               "in OPTIN mode.")
    elif opt == b"no":
        if not st.optout:
            raise CommandError("ERR CLIENT CACHING NO is only valid when tracking is enabled "
                               "in OPTOUT mode.")
    else:
        raise CommandError(E.SYNTAX)
    st.caching = True
    return OK


@command("client|getredir", 2, "noscript loading stale", group="connection", since="6.0.0",
         summary="Returns the client ID to which the connection's tracking notifications "
                 "are redirected.", complexity="O(1)")
def client_getredir(ctx, argv):
    """CLIENT GETREDIR"""
    return ctx.tracking.redirect if ctx.tracking is not None else -1


@command("client|trackinginfo", 2, "noscript loading stale", group="connection",
         since="6.2.0",
         summary="Returns information about server-assisted client-side caching for the "
                 "connection.", complexity="O(1)")
def client_trackinginfo(ctx, argv):
    """CLIENT TRACKINGINFO"""
    st = ctx.tracking
    if st is None:
        return Map([(b"flags", SetReply([b"off"])), (b"redirect", -1), (b"prefixes", [])])
    return Map([(b"flags", SetReply(st.flags())), (b"redirect", st.redirect),
                (b"prefixes", sorted(st.prefixes))])


_CLIENT_HELP = [
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME", "    Return the name of the current connection.",
    "ID", "    Return the ID of the current connection.",
    "INFO", "    Return information about the current client connection.",
    "KILL <ip:port>", "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are: ID <client-id>, ADDR <ip:port>, LADDR <ip:port>, SKIPME (YES|NO).",
    "LIST [options ...]", "    Return information about client connections.",
    "UNPAUSE", "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
    "SETNAME <name>", "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>", "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]", "    Control server assisted client side caching.",
    "TRACKINGINFO", "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)", "    Will not touch LRU/LFU stats when this mode is on.",
    "HELP", "    Print this help.",
]


help_command("client", "connection", "5.0.0", _CLIENT_HELP)
