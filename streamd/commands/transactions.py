"""Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

Queueing happens in the dispatcher (a client in MULTI gets ``+QUEUED``); EXEC runs the
queue with the time frozen and blocking disabled, so blocking commands act non-blocking.
"""

from __future__ import annotations

from ..protocol.encoder import to_bytes
from ..protocol.replies import NULL_ARRAY, OK, Raw, is_push
from . import errors as E
from .errors import CommandError
from .pubsub import ping_subscribed
from .table import command, key


@command("multi", 1, "noscript loading stale fast allow_busy", group="transactions", since="1.2.0",
         summary="Starts a transaction.", complexity="O(1)")
def multi(ctx, argv):
    """MULTI"""
    if ctx.multi is not None:
        raise CommandError(E.MULTI_NESTED)
    ctx.multi = []
    ctx.multi_error = False
    return OK


def _run_queued(ctx, call, cmd, qargv):
    """One queued command. A PING after a SUBSCRIBE in the same transaction answers as a
    RESP2 subscriber's does (the dispatcher gives that answer outside EXEC)."""
    if cmd.name == "ping" and ctx.subscribed and ctx.resp == 2:
        return call(ctx, cmd, qargv, ping_subscribed, show=True)
    return call(ctx, cmd, qargv, show=True)


def _end_multi(ctx) -> None:
    ctx.multi = None
    ctx.multi_error = False
    ctx.unwatch_all()


def exec_refused(ctx, text: str) -> str:
    """The reply to an EXEC the dispatcher refused (wrong arity, NOAUTH): Redis ends the
    transaction there, and drops the watches even when no MULTI was open, and names the
    reason after EXECABORT instead of replying with the plain error."""
    _end_multi(ctx)
    return "EXECABORT Transaction discarded because of: " + text.removeprefix("ERR ")


@command("exec", 1, "noscript loading stale skip_slowlog", group="transactions",
         since="1.2.0", summary="Executes all commands in a transaction.",
         complexity="Depends on commands in the transaction")
def exec_(ctx, argv):
    """EXEC"""
    queued = ctx.multi
    if queued is None:
        raise CommandError(E.EXEC_WITHOUT_MULTI)
    if ctx.multi_error:
        _end_multi(ctx)
        raise CommandError(E.EXECABORT)
    for db, k in list(ctx.watched):
        db.get(k)  # a watched key that expired since WATCH counts as modified
    if ctx.watch_dirty:
        _end_multi(ctx)
        return NULL_ARRAY
    ctx.unwatch_all()
    call = ctx.server.call
    ctx.blocking_allowed = False
    ctx.exec_argv = argv
    if ctx.reply_off or ctx.reply_skip or any(c.name == "client|reply" for c, _ in queued):
        try:
            return _exec_filtered(ctx, queued, call)
        finally:
            ctx.multi = None
            ctx.blocking_allowed = True
            ctx.exec_argv = None
            ctx.multi_error = False
    replies = []
    try:
        # ctx.now_ms stays at EXEC's snapshot: `XADD *` calls share one millisecond.
        # The client is still in MULTI while its queue runs (CLIENT INFO shows flags=x
        # and the queue's length, as in Redis); nothing is queued meanwhile, as the
        # queued commands go to their handlers directly.
        resp = ctx.resp
        for cmd, qargv in queued:
            replies.append(_run_queued(ctx, call, cmd, qargv))
            if ctx.resp != resp:
                # HELLO switched the protocol: Redis wrote the replies before it in the
                # one they were made in, HELLO's own and the later ones in the new one.
                replies[:-1] = [Raw(to_bytes(r, resp)) for r in replies[:-1]]
                resp = ctx.resp
    finally:
        ctx.multi = None
        ctx.blocking_allowed = True
        ctx.exec_argv = None
        ctx.multi_error = False
    return replies


def _exec_filtered(ctx, queued: list, call) -> Raw:
    """EXEC for a client under CLIENT REPLY OFF|SKIP, or with CLIENT REPLY queued. Redis
    writes EXEC's array as it goes, each part only if the client takes replies at that
    moment: the header when EXEC starts, each command's reply after that command (and
    subscription confirmations, pushes, whatever the mode). A mode that changes midway
    leaves an array shorter than its header says, as in Redis."""
    out = bytearray()
    if not (ctx.reply_off or ctx.reply_skip):
        out += b"*%d\r\n" % len(queued)
    for cmd, qargv in queued:
        reply = _run_queued(ctx, call, cmd, qargv)
        if not (ctx.reply_off or ctx.reply_skip) or is_push(reply):
            out += to_bytes(reply, ctx.resp)  # HELLO's own reply in its new protocol
    return Raw(bytes(out))


@command("discard", 1, "noscript loading stale fast allow_busy", group="transactions",
         since="2.0.0",
         summary="Discards a transaction.", complexity="O(N), when N is the number of queued commands")
def discard(ctx, argv):
    """DISCARD"""
    if ctx.multi is None:
        raise CommandError(E.DISCARD_WITHOUT_MULTI)
    _end_multi(ctx)
    return OK


@command("watch", -2, "noscript loading stale fast allow_busy", (1, -1, 1),
         key_flags="RO", group="transactions",
         since="2.2.0", summary="Monitors changes to keys to determine the execution of a transaction.",
         complexity="O(1) for every key.", args=(key(multiple=True),))
def watch(ctx, argv):
    """WATCH key [key ...]"""
    if ctx.multi is not None:
        raise CommandError(E.WATCH_IN_MULTI)
    db = ctx.db
    for k in argv[1:]:
        if (db, k) in ctx.watched:
            continue
        # A key already expired when watched is absent, not modified, if it is reclaimed
        # later (Redis keeps an "expired at WATCH" flag): reclaim it before registering.
        db.get(k)
        ctx.watched.add((db, k))
        db.watched.setdefault(k, set()).add(ctx)
    return OK


@command("unwatch", 1, "noscript loading stale fast allow_busy", group="transactions",
         since="2.2.0",
         summary="Forgets about watched keys of a transaction.", complexity="O(1)")
def unwatch(ctx, argv):
    """UNWATCH"""
    ctx.unwatch_all()
    return OK
