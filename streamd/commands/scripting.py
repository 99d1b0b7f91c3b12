"""Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.

The interpreter, its sandbox and the Lua/RESP conversions live in streamd/scripting/.
Here: the commands' arguments and errors, and ``redis.call``'s path into the server.
A script's commands run on its caller through ``Server.script_call``, the dispatcher's
own call with statistics, so they count, notify and wake exactly as the same commands
sent by the client would; the wake-ups are served once the script is done. Blocking is
off while a script runs (as in EXEC): XREAD BLOCK answers at once.
"""

from __future__ import annotations

from .. import REDIS_VERSION
from ..protocol.replies import OK, ErrorReply
from ..scripting import Engine, ScriptError, lua_missing
from . import errors as E
from .errors import CommandError
from .table import DISPATCH, TABLE, command, help_command, integer, key, oneof, string, token

NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."
_UNKNOWN = "ERR Unknown Redis command called from script"
_ARITY = "ERR Wrong number of args calling Redis command from script"
_NOT_ALLOWED = "ERR This Redis command is not allowed from script"
_READ_ONLY = "ERR Write commands are not allowed from read-only scripts."
# A read-only script may not run what writes or is replicated (PUBLISH), as in Redis.
_WRITING = frozenset({"write", "may_replicate"})


def lua_engine(ctx) -> Engine:
    server = ctx.server
    engine = server.scripts
    if engine is None:
        missing = lua_missing()
        if missing is not None:
            raise CommandError("ERR Lua scripting is not available: the lupa package "
                               f"could not be loaded ({missing})")
        engine = server.scripts = Engine(REDIS_VERSION)
        engine.tick = server.script.tick  # the running script's, whichever it is
    return engine


def _resolve(argv: list) -> tuple:
    """``(command, None)`` for the command a script's ``redis.call`` names, or ``(command
    or None, error text)`` when it is refused (the command when one was found: it counts
    the refusal as a rejected call)."""
    cmd = DISPATCH.get(argv[0]) or DISPATCH.get(argv[0].lower())
    if cmd is None:
        return None, _UNKNOWN
    if cmd.handler is None:
        if cmd.protected:
            cmd = cmd.bare
        elif len(argv) >= 2:
            cmd = cmd.subcommands.get(argv[1].lower())
            if cmd is None:
                return None, _UNKNOWN
        elif cmd.bare is not None:
            cmd = cmd.bare
    if not cmd.arity_ok(len(argv)):
        return cmd, _ARITY
    if "noscript" in cmd.flags:
        return cmd, _NOT_ALLOWED
    return cmd, None


def _run(ctx, engine: Engine, sha: str, argv: list, read_only: bool):
    """Run a cached script for EVAL and friends (``argv`` checked by _check_numkeys)."""
    n = int(argv[2])
    if ctx.server.monitors:  # the script first, then its commands, as Redis shows them
        ctx.server.show_line(ctx, argv)
    return run_script(ctx, engine, argv, read_only, lambda call, known, resp: engine.run(
        sha, argv[3:3 + n], argv[3 + n:], call, known, resp), sha, True)


def run_script(ctx, engine: Engine, argv: list, read_only: bool, start, name: str,
               is_eval: bool):
    """Run a script or function on its caller: ``start(call, known, resp)`` runs it in
    the engine, with ``call`` taking its redis.call's through the server's dispatch.
    ``name`` (the SHA1 or the function's name) and ``is_eval`` are what SCRIPT KILL,
    FUNCTION KILL and the slow-script log see of it."""
    server = ctx.server
    db, resp, blocking = ctx.db, ctx.resp, ctx.blocking_allowed
    script_call = server.script_call
    run = server.script_begin(ctx, argv, name, is_eval)

    def call(cargv):
        cmd, refusal = _resolve(cargv)
        if refusal is not None:
            # A refusal counts as the error of a rejected call, as in Redis (EVAL's reply
            # with it does not count again).
            server.script_refused(cmd, refusal)
            return False, refusal
        if read_only and not _WRITING.isdisjoint(cmd.flags):
            server.script_refused(cmd, _READ_ONLY)
            return False, _READ_ONLY
        if "write" in cmd.flags:  # from now on SCRIPT KILL cannot undo the script
            run.wrote = True
        ctx.resp = engine.resp
        reply = script_call(ctx, cmd, cargv)
        if type(reply) is ErrorReply:
            return False, reply.text
        return True, reply

    def known(cargv):
        return _resolve(cargv)[1] != _UNKNOWN

    ctx.blocking_allowed = False
    try:
        return start(call, known, resp)
    except ScriptError as exc:
        if exc.counted:
            raise CommandError(exc.text) from None
        # The script's command counted this error already: EVAL fails, but its reply does
        # not count in the error statistics again (Redis's ERR_REPLY_FLAG_NO_STATS_UPDATE).
        TABLE[argv[0].lower()].failed_calls += 1
        return ErrorReply(exc.text)
    finally:
        server.script_end(run)
        # The script's SELECT and RESP choice were its own.
        ctx.db, ctx.resp, ctx.blocking_allowed = db, resp, blocking


def _compile(engine: Engine, body: bytes) -> str:
    try:
        return engine.load(body)
    except ScriptError as exc:
        raise CommandError(exc.text) from None


_EVAL_ARGS = (string("script"), integer("numkeys"), key(optional=True, multiple=True),
              string("arg", optional=True, multiple=True))
_EVALSHA_ARGS = (string("sha1"),) + _EVAL_ARGS[1:]
_RW_NOTES = ("We cannot tell how the keys will be used so we assume the worst, "
             "RW and UPDATE flags")
_RO_NOTES = ("We cannot tell how the keys will be used so we assume the worst, "
             "RO and ACCESS flags")


@command("eval", -3, "noscript stale skip_monitor no_mandatory_keys", numkeys_keys=(2, 0, 1, 1),
         key_flags="RW access update", key_notes=_RW_NOTES, group="scripting",
         since="2.6.0", summary="Executes a server-side Lua script.",
         complexity="Depends on the script that is executed.", args=_EVAL_ARGS)
def eval_(ctx, argv):
    """EVAL script numkeys [key [key ...]] [arg [arg ...]]"""
    engine = lua_engine(ctx)
    _check_numkeys(argv)
    return _run(ctx, engine, _compile(engine, argv[1]), argv, False)


@command("eval_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
         numkeys_keys=(2, 0, 1, 1), key_flags="RO access", key_notes=_RO_NOTES, flag_acl=False,
         group="scripting", since="7.0.0",
         summary="Executes a read-only server-side Lua script.",
         complexity="Depends on the script that is executed.", args=_EVAL_ARGS)
def eval_ro(ctx, argv):
    """EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]"""
    engine = lua_engine(ctx)
    _check_numkeys(argv)
    return _run(ctx, engine, _compile(engine, argv[1]), argv, True)


def _cached(ctx, argv) -> tuple:
    engine = lua_engine(ctx)
    _check_numkeys(argv)
    sha = argv[1].decode("latin-1").lower()
    if sha not in engine.scripts:
        raise CommandError(NOSCRIPT)
    return engine, sha


def _check_numkeys(argv) -> None:
    """numkeys is checked before the script is compiled or looked up, as in Redis."""
    try:
        n = int(argv[2])
    except ValueError:
        raise CommandError(E.NOT_INTEGER) from None
    if n > len(argv) - 3:
        raise CommandError("ERR Number of keys can't be greater than number of args")
    if n < 0:
        raise CommandError("ERR Number of keys can't be negative")


@command("evalsha", -3, "noscript stale skip_monitor no_mandatory_keys", numkeys_keys=(2, 0, 1, 1),
         key_flags="RW access update", group="scripting", since="2.6.0",
         summary="Executes a server-side Lua script by SHA1 digest.",
         complexity="Depends on the script that is executed.", args=_EVALSHA_ARGS)
def evalsha(ctx, argv):
    """EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]"""
    engine, sha = _cached(ctx, argv)
    return _run(ctx, engine, sha, argv, False)


@command("evalsha_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
         numkeys_keys=(2, 0, 1, 1), key_flags="RO access", flag_acl=False, group="scripting",
         since="7.0.0", summary="Executes a read-only server-side Lua script by SHA1 digest.",
         complexity="Depends on the script that is executed.", args=_EVALSHA_ARGS)
def evalsha_ro(ctx, argv):
    """EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]"""
    engine, sha = _cached(ctx, argv)
    return _run(ctx, engine, sha, argv, True)


command("script", -2, "slow", group="scripting", since="2.6.0",
        summary="A container for Lua scripts management commands.",
        complexity="Depends on subcommand.", container=True)


@command("script|load", 3, "noscript stale", group="scripting", since="2.6.0",
         tips="request_policy:all_nodes response_policy:all_succeeded",
         summary="Loads a server-side Lua script to the script cache.",
         complexity="O(N) with N being the length in bytes of the script body.",
         args=(string("script"),))
def script_load(ctx, argv):
    """SCRIPT LOAD script"""
    return _compile(lua_engine(ctx), argv[2]).encode()


@command("script|exists", -3, "noscript", group="scripting", since="2.6.0",
         tips="request_policy:all_shards response_policy:agg_logical_and",
         summary="Determines whether server-side Lua scripts exist in the script cache.",
         complexity="O(N) with N being the number of scripts to check (so checking a "
                    "single script is an O(1) operation).",
         args=(string("sha1", multiple=True),))
def script_exists(ctx, argv):
    """SCRIPT EXISTS sha1 [sha1 ...]"""
    engine = ctx.server.scripts
    cached = engine.scripts if engine is not None else {}
    return [int(s.decode("latin-1").lower() in cached) for s in argv[2:]]


@command("script|flush", -2, "noscript", group="scripting", since="2.6.0",
         tips="request_policy:all_nodes response_policy:all_succeeded",
         summary="Removes all server-side Lua scripts from the script cache.",
         complexity="O(N) with N being the number of scripts in cache",
         history=(("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers."),),
         args=(oneof("flush-type", token("ASYNC"), token("SYNC"), optional=True,
                     since="6.2.0"),))
def script_flush(ctx, argv):
    """SCRIPT FLUSH [ASYNC | SYNC]"""
    if len(argv) > 3 or (len(argv) == 3 and argv[2].upper() not in (b"ASYNC", b"SYNC")):
        raise CommandError("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
    if ctx.server.scripts is not None:
        ctx.server.scripts.flush()
    return OK


@command("script|kill", 2, "noscript allow_busy", group="scripting", since="2.6.0",
         tips="request_policy:all_shards response_policy:one_succeeded",
         summary="Terminates a server-side Lua script during execution.",
         complexity="O(1)")
def script_kill(ctx, argv):
    """SCRIPT KILL"""
    return kill_script(ctx, True)


def kill_script(ctx, is_eval: bool):
    """SCRIPT KILL (``is_eval``) or FUNCTION KILL: end the running script, if it has not
    written, and if it is the kind this command kills. Only a script past
    busy-reply-threshold lets another command run, so only such a one is ever killed."""
    run = ctx.server.script_run
    if run is None:
        raise CommandError(E.NOTBUSY)
    if run.wrote:
        raise CommandError(E.UNKILLABLE)
    if run.is_eval != is_eval:
        raise CommandError(run.busy_error)
    run.killed = True
    return OK


help_command("script", "scripting", "5.0.0", [
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
])
