"""Redis functions: FUNCTION LOAD/DELETE/LIST/STATS/FLUSH/KILL/HELP, FCALL and FCALL_RO.

A library is Lua code behind a ``#!lua name=<library>`` line; loading it runs the code
once, and what it hands ``redis.register_function`` becomes callable by name (names are
matched without regard to case, as Redis's function table does; library names are
exact). The Lua side (the loading API, the functions' sandbox) is in streamd/scripting/;
here are the libraries, the arguments and Redis's error texts. A function runs as EVAL
runs a script (scripting.run_script): its redis.call's go through the server's dispatch.

FUNCTION DUMP and RESTORE carry the libraries' sources in Redis's RDB encoding (see
streamd/rdb/).
"""

from __future__ import annotations

import re

from ..protocol.reader import split_args
from ..protocol.replies import OK, Map, SetReply, Simple
from ..rdb import objects as rdb
from ..scripting import ScriptError
from . import errors as E
from .args import parse_int
from .errors import CommandError
from .keyutil import glob_match
from .scripting import kill_script, lua_engine, run_script
from .table import command, help_command, integer, key, oneof, string, token

# Redis's flag names, in the order FUNCTION LIST gives them.
FLAG_ORDER = ("no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys")
_NAME = re.compile(rb"[A-Za-z0-9_]+")
_BAD_NAME = ("ERR Library names can only contain letters, numbers, or underscores(_) and "
             "must be at least one character long")


class Function:
    __slots__ = ("name", "callback", "flags", "description", "library")

    def __init__(self, name: bytes, callback, flags: tuple, description, library):
        self.name, self.callback, self.flags = name, callback, flags
        self.description, self.library = description, library


class Library:
    __slots__ = ("name", "code", "functions")

    def __init__(self, name: bytes, code: bytes):
        self.name, self.code = name, code
        self.functions: dict[bytes, Function] = {}  # by exact name, in registration order


class Libraries:
    """Every library, and every function by its lower-cased name."""

    def __init__(self):
        self.libraries: dict[bytes, Library] = {}
        self.functions: dict[bytes, Function] = {}

    def link(self, lib: Library) -> None:
        for fn in lib.functions.values():
            # Two names of one library that differ only in case: the first one answers.
            self.functions.setdefault(fn.name.lower(), fn)
        self.libraries[lib.name] = lib

    def unlink(self, lib: Library) -> None:
        for fn in lib.functions.values():
            if self.functions.get(fn.name.lower()) is fn:
                del self.functions[fn.name.lower()]
        del self.libraries[lib.name]


def _libraries(ctx) -> Libraries:
    libs = ctx.server.functions
    if libs is None:
        libs = ctx.server.functions = Libraries()
    return libs


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _metadata(code: bytes) -> tuple[bytes, bytes, bytes]:
    """The engine, the library name and the code of a library's source (its first line
    is ``#!<engine> name=<name>``, split as Redis splits arguments)."""
    if not code.startswith(b"#!"):
        raise CommandError("ERR Missing library metadata")
    end = code.find(b"\n")
    parts = split_args(code[:end]) if end >= 0 else None
    if not parts:
        raise CommandError("ERR Invalid library metadata")
    name = None
    for part in parts[1:]:
        if part[:5].lower() == b"name=":
            if name is not None:
                raise CommandError("ERR Invalid metadata value, name argument was given "
                                   "multiple times")
            name = part[5:]
            continue
        raise CommandError(f"ERR Invalid metadata value given: {_text(part)}")
    if name is None:
        raise CommandError("ERR Library name was not given")
    # The code keeps the first line's newline, so its line numbers count the shebang's.
    return parts[0][2:], name, code[end:]


def _library_name(code: bytes) -> tuple[bytes, bytes]:
    """A library source's name and code after the metadata line, checked as FUNCTION LOAD
    checks them before it looks at the existing libraries."""
    engine_name, name, body = _metadata(code)
    if not _NAME.fullmatch(name):
        raise CommandError(_BAD_NAME)
    if engine_name.lower() != b"lua":
        raise CommandError(f"ERR Engine '{_text(engine_name)}' not found")
    return name, body


def _build(ctx, code: bytes, name: bytes, body: bytes) -> Library:
    """Run the library's code: the library with the functions it registered (not linked)."""
    engine = lua_engine(ctx)
    try:
        found = engine.load_library(body)
    except ScriptError as exc:
        raise CommandError(exc.text) from None
    if not found:
        raise CommandError("ERR No functions registered")
    lib = Library(name, code)
    for fname, callback, flags, desc in found:
        flags = tuple(f for f in FLAG_ORDER if f.encode() in flags)
        lib.functions[fname] = Function(fname, callback, flags, desc, lib)
    return lib


def _check_functions(libs: Libraries, lib: Library, replaced=()) -> None:
    """A library's function names must be free, but in the libraries it replaces."""
    for fname in lib.functions:
        other = libs.functions.get(fname.lower())
        if other is not None and other.library not in replaced:
            raise CommandError(f"ERR Function {_text(fname)} already exists")


def _load(ctx, code: bytes, replace: bool) -> bytes:
    name, body = _library_name(code)
    libs = _libraries(ctx)
    old = libs.libraries.get(name)
    if old is not None and not replace:
        raise CommandError(f"ERR Library '{_text(name)}' already exists")
    lib = _build(ctx, code, name, body)
    _check_functions(libs, lib, (old,))
    if old is not None:
        libs.unlink(old)
    libs.link(lib)
    ctx.keyspace.dirty += 1
    return name


command("function", -2, "slow", group="scripting", since="7.0.0",
        summary="A container for function commands.", complexity="Depends on subcommand.",
        container=True)

_ALL_SHARDS = "request_policy:all_shards response_policy:all_succeeded"


@command("function|load", -3, "write denyoom noscript", tips=_ALL_SHARDS,
         group="scripting", since="7.0.0", summary="Creates a library.",
         complexity="O(1) (considering compilation time is redundant)",
         args=(token("REPLACE", "replace", optional=True), string("function-code")))
def function_load(ctx, argv):
    """FUNCTION LOAD [REPLACE] function-code"""
    replace = False
    for opt in argv[2:-1]:
        if opt.lower() != b"replace":
            raise CommandError(f"ERR Unknown option given: {_text(opt)}")
        replace = True
    return _load(ctx, argv[-1], replace)


@command("function|delete", 3, "write noscript", tips=_ALL_SHARDS, group="scripting",
         since="7.0.0", summary="Deletes a library and its functions.", complexity="O(1)",
         args=(string("library-name"),))
def function_delete(ctx, argv):
    """FUNCTION DELETE library-name"""
    libs = ctx.server.functions
    lib = libs.libraries.get(argv[2]) if libs is not None else None
    if lib is None:
        raise CommandError("ERR Library not found")
    libs.unlink(lib)
    ctx.keyspace.dirty += 1
    return OK


@command("function|flush", -2, "write noscript", tips=_ALL_SHARDS,
         group="scripting", since="7.0.0",
         summary="Deletes all libraries and functions.",
         complexity="O(N) where N is the number of functions deleted",
         args=(oneof("flush-type", token("ASYNC"), token("SYNC"), optional=True),))
def function_flush(ctx, argv):
    """FUNCTION FLUSH [ASYNC | SYNC]"""
    if len(argv) > 3:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "function"))
    if len(argv) == 3 and argv[2].upper() not in (b"ASYNC", b"SYNC"):
        raise CommandError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    ctx.server.functions = None
    ctx.keyspace.dirty += 1  # even with nothing to delete, as in Redis
    return OK


def _function_entry(fn: Function) -> Map:
    return Map([(b"name", fn.name), (b"description", fn.description),
                (b"flags", SetReply([Simple(f.encode()) for f in fn.flags]))])


@command("function|list", -2, "noscript", tips="nondeterministic_output_order",
         group="scripting", since="7.0.0", summary="Returns information about all libraries.",
         complexity="O(N) where N is the number of functions",
         args=(string("library-name-pattern", token="LIBRARYNAME", optional=True),
               token("WITHCODE", "withcode", optional=True)))
def function_list(ctx, argv):
    """FUNCTION LIST [LIBRARYNAME library-name-pattern] [WITHCODE]"""
    with_code = False
    pattern = None
    i = 2
    while i < len(argv):
        arg = argv[i].lower()
        if not with_code and arg == b"withcode":
            with_code = True
        elif pattern is None and arg == b"libraryname":
            if i == len(argv) - 1:
                raise CommandError("ERR library name argument was not given")
            i += 1
            pattern = argv[i]
        else:
            raise CommandError(f"ERR Unknown argument {_text(argv[i])}")
        i += 1
    libs = ctx.server.functions
    out = []
    for lib in (libs.libraries.values() if libs is not None else ()):
        if pattern is not None and not glob_match(pattern, lib.name, nocase=True):
            continue
        fields = [(b"library_name", lib.name), (b"engine", b"LUA"),
                  (b"functions", [_function_entry(fn) for fn in lib.functions.values()])]
        if with_code:
            fields.append((b"library_code", lib.code))
        out.append(Map(fields))
    return out


@command("function|stats", 2, "noscript allow_busy",
         tips="nondeterministic_output request_policy:all_shards response_policy:special",
         group="scripting", since="7.0.0",
         summary="Returns information about a function during execution.", complexity="O(1)")
def function_stats(ctx, argv):
    """FUNCTION STATS"""
    libs = ctx.server.functions
    n_libs = len(libs.libraries) if libs is not None else 0
    n_functions = sum(len(lib.functions) for lib in libs.libraries.values()) if n_libs else 0
    run = ctx.server.script_run  # one past busy-reply-threshold: nothing else runs before
    running = None
    if run is not None:
        if run.is_eval:
            raise CommandError(E.BUSY_EVAL)
        running = Map([(b"name", run.name.encode("utf-8", "surrogateescape")),
                       (b"command", list(run.argv)), (b"duration_ms", run.duration_ms())])
    return Map([(b"running_script", running), (b"engines", Map([(b"LUA", Map([
        (b"libraries_count", n_libs), (b"functions_count", n_functions)]))]))])


@command("function|kill", 2, "noscript allow_busy",
         tips="request_policy:all_shards response_policy:one_succeeded", group="scripting",
         since="7.0.0", summary="Terminates a function during execution.", complexity="O(1)")
def function_kill(ctx, argv):
    """FUNCTION KILL"""
    return kill_script(ctx, False)


@command("function|dump", 2, "noscript", group="scripting", since="7.0.0",
         summary="Dumps all libraries into a serialized binary payload.",
         complexity="O(N) where N is the number of functions")
def function_dump(ctx, argv):
    """FUNCTION DUMP"""
    libs = ctx.server.functions
    codes = [lib.code for lib in libs.libraries.values()] if libs is not None else []
    return rdb.dump_functions(codes, compress=ctx.config["rdbcompression"])


@command("function|restore", -3, "write denyoom noscript", tips=_ALL_SHARDS,
         group="scripting", since="7.0.0",
         summary="Restores all libraries from a payload.",
         complexity="O(N) where N is the number of functions on the payload",
         args=(string("serialized-value"),
               oneof("policy", token("FLUSH"), token("APPEND"), token("REPLACE"),
                     optional=True)))
def function_restore(ctx, argv):
    """FUNCTION RESTORE serialized-value [FLUSH | APPEND | REPLACE]"""
    if len(argv) > 4:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "function"))
    policy = argv[3].upper() if len(argv) == 4 else b"APPEND"
    if policy not in (b"FLUSH", b"APPEND", b"REPLACE"):
        raise CommandError("ERR Wrong restore policy given, value should be either FLUSH, "
                           "APPEND or REPLACE.")
    payload = bytes(argv[2])
    try:
        rdb.verify(payload, check_crc=not ctx.keyspace.skip_checksum_validation)
        codes = rdb.load_functions(payload)
    except rdb.PayloadError:
        raise CommandError("ERR DUMP payload version or checksum are wrong") from None
    except rdb.NotAFunction:
        raise CommandError("ERR given type is not a function") from None
    except rdb.BadData:
        raise CommandError("ERR Failed loading library payload") from None
    # Build every library aside first: a failure leaves the current ones untouched.
    new = Libraries()
    for code in codes:
        name, body = _library_name(code)
        if name in new.libraries:
            raise CommandError(f"ERR Library '{_text(name)}' already exists")
        lib = _build(ctx, code, name, body)
        _check_functions(new, lib)
        new.link(lib)
    if policy == b"FLUSH":
        ctx.server.functions = new
    else:
        libs = _libraries(ctx)
        replaced = []
        for lib in new.libraries.values():
            old = libs.libraries.get(lib.name)
            if old is not None:
                if policy != b"REPLACE":
                    raise CommandError(f"ERR Library {_text(lib.name)} already exists")
                replaced.append(old)
        for lib in new.libraries.values():
            _check_functions(libs, lib, replaced)
        for old in replaced:
            libs.unlink(old)
        for lib in new.libraries.values():
            libs.link(lib)
    ctx.keyspace.dirty += 1
    return OK


help_command("function", "scripting", "7.0.0", [
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored "
    "using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a "
    "restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
    "abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
    "replace the old",
    "      libraries with the new libraries (notice that even on this option there is a "
    "chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
])


# --- FCALL -------------------------------------------------------------------------------

def _fcall(ctx, argv, ro: bool):
    server = ctx.server
    if server.monitors:  # the call first, then its commands, as Redis shows them
        server.show_line(ctx, argv)
    libs = server.functions
    fn = libs.functions.get(argv[1].lower()) if libs is not None else None
    if fn is None:
        raise CommandError("ERR Function not found")
    n = parse_int(argv[2], "ERR Bad number of keys provided")
    if n > len(argv) - 3:
        raise CommandError("ERR Number of keys can't be greater than number of args")
    if n < 0:
        raise CommandError("ERR Number of keys can't be negative")
    read_only = "no-writes" in fn.flags
    if ro and not read_only:
        raise CommandError("ERR Can not execute a script with write flag using *_ro command.")
    engine = lua_engine(ctx)
    return run_script(ctx, engine, argv, read_only, lambda call, known, resp: (
        engine.call_function(fn.name, fn.callback, argv[3:3 + n], argv[3 + n:], call, known,
                             resp)), fn.name.decode("utf-8", "replace"), False)


_FCALL_ARGS = (string("function"), integer("numkeys"), key(optional=True, multiple=True),
               string("arg", optional=True, multiple=True))


@command("fcall", -3, "noscript stale skip_monitor no_mandatory_keys", numkeys_keys=(2, 0, 1, 1),
         key_flags="RW access update",
         key_notes="We cannot tell how the keys will be used so we assume the worst, RW and "
                   "UPDATE", group="scripting", since="7.0.0", summary="Invokes a function.",
         complexity="Depends on the function that is executed.", args=_FCALL_ARGS)
def fcall(ctx, argv):
    """FCALL function numkeys [key [key ...]] [arg [arg ...]]"""
    return _fcall(ctx, argv, False)


@command("fcall_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
         numkeys_keys=(2, 0, 1, 1), key_flags="RO access",
         key_notes="We cannot tell how the keys will be used so we assume the worst, RO and "
                   "ACCESS", flag_acl=False, group="scripting", since="7.0.0",
         summary="Invokes a read-only function.",
         complexity="Depends on the function that is executed.", args=_FCALL_ARGS)
def fcall_ro(ctx, argv):
    """FCALL_RO function numkeys [key [key ...]] [arg [arg ...]]"""
    return _fcall(ctx, argv, True)
