"""Redis functions: FUNCTION LOAD/DELETE/LIST/STATS/FLUSH/KILL/HELP, FCALL and FCALL_RO,
byte for byte as Redis 7.0.15 answers (recorded from it; the tests run against it with
--redis-url). Libraries outlive FLUSHALL, so every test starts and ends with none."""

from __future__ import annotations

import re

import pytest
import redis

from streamd.rdb.crc64 import crc64
from streamd.rdb.objects import seal
from tests.conftest import dirty, encode_request, watch_broken
from tests.test_connection import _monitoring
from tests.test_ops_commands import help_reply

BAD_NAME = (b"ERR Library names can only contain letters, numbers, or underscores(_) and must "
            b"be at least one character long")


@pytest.fixture(autouse=True)
def _no_libraries(r):
    r.function_flush()
    yield
    r.function_flush()


def lib(name: str, *functions: str) -> str:
    """A library registering each ``(name, body)`` positionally."""
    regs = "\n".join(f"redis.register_function('{f}', function(keys, args) {body} end)"
                     for f, body in functions)
    return f"#!lua name={name}\n{regs}"


def err(text: bytes) -> bytes:
    return b"-" + text + b"\r\n"


def bulk(b: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(b), b)


# --- FUNCTION LOAD -----------------------------------------------------------------------

REG = "\nredis.register_function('f', function() return 1 end)"

METADATA = [
    ("return 1", b"ERR Missing library metadata"),
    ("", b"ERR Missing library metadata"),
    ("#lua name=z\n", b"ERR Missing library metadata"),
    ("#!lua name=z", b"ERR Invalid library metadata"),  # no newline after the shebang
    ('#!lua name="unbal' + REG, b"ERR Invalid library metadata"),
    ("#!lua" + REG, b"ERR Library name was not given"),
    ("#!" + REG, b"ERR Library name was not given"),
    ("#!lua name=" + REG, BAD_NAME),
    ("#!lua name=a-b" + REG, BAD_NAME),
    ("#!foo name=a-b" + REG, BAD_NAME),
    ("#!lua name=ok x=y" + REG, b"ERR Invalid metadata value given: x=y"),
    ("#!  lua name=x" + REG, b"ERR Invalid metadata value given: lua"),
    ("#!lua name=x name=y" + REG,
     b"ERR Invalid metadata value, name argument was given multiple times"),
    ("#!lua name=x\tname=y" + REG,
     b"ERR Invalid metadata value, name argument was given multiple times"),
    ("#!foo name=x" + REG, b"ERR Engine 'foo' not found"),
    ("#! name=x" + REG, b"ERR Engine '' not found"),
    ("#!lua name=z\n", b"ERR No functions registered"),
    ("#!lua name=z\nreturn 1", b"ERR No functions registered"),
    ("#!lua name=z\nsyntax error",
     b"ERR Error compiling function: user_function:2: '=' expected near 'error'"),
]


@pytest.mark.parametrize("code, text", METADATA)
def test_load_refuses_bad_metadata(wire, code, text):
    assert wire("FUNCTION", "LOAD", code) == err(text)


@pytest.mark.parametrize("shebang, name", [
    ("#!lua  name=lib2 ", b"lib2"), ("#!LUA name=lib3", b"lib3"), ("#!lua NAME=up", b"up"),
    ('#!lua "name=q"', b"q"), ("#!lua name=x\r", b"x"), ("#!lua\tname=tab", b"tab"),
])
def test_load_reads_the_shebang_as_redis_does(wire, shebang, name):
    assert wire("FUNCTION", "LOAD", shebang + REG) == bulk(name)


def registering(body: str) -> bytes:
    return b"ERR Error registering functions: " + body.encode()


def fn_table(fields: str) -> str:
    return "#!lua name=e\nredis.register_function{" + fields + "}"


LOAD_FAILURES = [
    ("#!lua name=l\nredis.call('ping')", registering(
        "ERR user_function:2: Script attempted to access nonexistent global variable 'call'")),
    ("#!lua name=l\nerror('x')", registering(
        "ERR user_function:2: Script attempted to access nonexistent global variable 'error'")),
    ("#!lua name=l\nreturn redis.setresp(3)", registering(
        "ERR user_function:2: Script attempted to access nonexistent global variable "
        "'setresp'")),
    ("#!lua name=l\nlocal _ = string", registering(
        "ERR user_function:2: Script attempted to access nonexistent global variable "
        "'string'")),
    ("#!lua name=l\nlocal _ = KEYS", registering(
        "ERR user_function:2: Script attempted to access nonexistent global variable 'KEYS'")),
    ("#!lua name=l\nx = 1", registering("ERR user_function:2: Attempt to modify a readonly table")),
    ("#!lua name=l\nredis = 1",
     registering("ERR user_function:2: Attempt to modify a readonly table")),
    ("#!lua name=l\nredis.x = 1",
     registering("ERR user_function:2: Attempt to modify a readonly table")),
    ("#!lua name=l\nlocal x = 1 + nil",
     registering("ERR user_function:2: attempt to perform arithmetic on a nil value")),
    ("#!lua name=l\nredis.register_function('a b', function() return 1 end)",
     registering(BAD_NAME.decode())),
    ("#!lua name=l\nredis.register_function('x', function() end) "
     "redis.register_function('x', function() end)",
     registering("ERR Function already exists in the library")),
    ("#!lua name=l\nredis.register_function('ab', 5)",
     registering("ERR second argument to redis.register_function must be a function")),
    ("#!lua name=l\nredis.register_function({}, function() end)",
     registering("ERR first argument to redis.register_function must be a string")),
    ("#!lua name=l\nredis.register_function('ab')", registering(
        "ERR calling redis.register_function with a single argument is only applicable to "
        "Lua table (representing named arguments).")),
    ("#!lua name=l\nredis.register_function()",
     registering("ERR wrong number of arguments to redis.register_function")),
    ("#!lua name=l\nredis.register_function('a', function() end, 3)",
     registering("ERR wrong number of arguments to redis.register_function")),
    (fn_table("function_name='ab'"),
     registering("ERR redis.register_function must get a callback argument")),
    (fn_table("callback=function() end"),
     registering("ERR redis.register_function must get a function name argument")),
    (fn_table("function_name='ab', callback=function() end, flags={'bad'}"),
     registering("ERR unknown flag given")),
    (fn_table("FUNCTION_NAME='Q', CallBack=function() end, FLAGS={'no-writes', 5}"),
     registering("ERR unknown flag given")),
    (fn_table("function_name='ab', callback=function() end, flags='no-writes'"), registering(
        "ERR flags argument to redis.register_function must be a table representing "
        "function flags")),
    (fn_table("function_name='ab', callback=function() end, foo=1"),
     registering("ERR unknown argument given to redis.register_function")),
    (fn_table("'x', function() end"),
     registering("ERR unknown argument given to redis.register_function")),
    (fn_table("[{}]=1"),
     registering("ERR named argument key given to redis.register_function is not a string")),
    (fn_table("function_name={}, callback=function() end"), registering(
        "ERR function_name argument given to redis.register_function must be a string")),
    (fn_table("function_name='q', callback=5"), registering(
        "ERR callback argument given to redis.register_function must be a function")),
    (fn_table("function_name='q', callback=function() end, description={}"), registering(
        "ERR description argument given to redis.register_function must be a string")),
]


@pytest.mark.parametrize("code, text", LOAD_FAILURES)
def test_load_failures_name_what_went_wrong(wire, code, text):
    assert wire("FUNCTION", "LOAD", code) == err(text)
    assert wire("FUNCTION", "LIST") == b"*0\r\n"


def test_load_sees_only_the_loading_api(wire):
    code = ("#!lua name=l\nredis.log(redis.LOG_WARNING, 'loading')\n"
            "local v = redis.REDIS_VERSION .. redis.REDIS_VERSION_NUM .. redis.LOG_DEBUG\n"
            "redis.register_function('f', function() return 1 end)")
    assert wire("FUNCTION", "LOAD", code) == b"$1\r\nl\r\n"


def test_load_options_and_collisions(wire):
    assert wire("FUNCTION", "LOAD") == err(
        b"ERR wrong number of arguments for 'function|load' command")
    assert wire("FUNCTION", "LOAD", "REPLACE") == err(b"ERR Missing library metadata")
    assert wire("FUNCTION", "LOAD", "x", lib("lib1", ("f1", "return 1"))) == err(
        b"ERR Unknown option given: x")
    assert wire("FUNCTION", "LOAD", lib("lib1", ("f1", "return 1"))) == b"$4\r\nlib1\r\n"
    assert wire("FUNCTION", "LOAD", lib("lib1", ("f2", "return 2"))) == err(
        b"ERR Library 'lib1' already exists")
    # Function names collide across libraries, whatever their case.
    assert wire("FUNCTION", "LOAD", lib("lib2", ("F1", "return 2"))) == err(
        b"ERR Function F1 already exists")
    assert wire("FUNCTION", "LOAD", "REPLACE", "REPLACE", lib("lib1", ("f1", "return 11"))) == (
        b"$4\r\nlib1\r\n")
    assert wire("FCALL", "f1", "0") == b":11\r\n"
    assert wire("FUNCTION", "LOAD", lib("lib2", ("g", "return 2"))) == b"$4\r\nlib2\r\n"
    # A replacement that fails leaves the old library in place.
    assert wire("FUNCTION", "LOAD", "replace", lib("lib1", ("g", "return 3"))) == err(
        b"ERR Function g already exists")
    assert wire("FCALL", "f1", "0") == b":11\r\n"
    assert wire("FUNCTION", "LOAD", "REPLACE", lib("lib1", ("h", "return 4"))) == (
        b"$4\r\nlib1\r\n")
    assert wire("FCALL", "f1", "0") == err(b"ERR Function not found")
    assert wire("FCALL", "H", "0") == b":4\r\n"
    # Library names are exact.
    assert wire("FUNCTION", "LOAD", lib("LIB1", ("k", "return 5"))) == b"$4\r\nLIB1\r\n"


# --- FUNCTION DUMP / RESTORE ---------------------------------------------------------------

def _payload(*codes: str, version: int = 10) -> bytes:
    """A FUNCTION DUMP payload of ``codes``, uncompressed, as Redis 7.0 would seal it."""
    body = b""
    for code in codes:
        raw = code.encode()
        assert len(raw) < 16384
        body += b"\xf5" + (bytes((len(raw),)) if len(raw) < 64
                            else bytes((0x40 | len(raw) >> 8, len(raw) & 0xFF))) + raw
    return seal(body, version)


def test_dump_of_one_library_is_redis_7_0s_but_for_the_footer(r):
    # Recorded from Redis 7.0.15 (rdbcompression yes): the code is LZF-compressed.
    r.config_set("rdbcompression", "yes")
    r.function_load("#!lua name=mylib\nredis.register_function('myfunc', "
                    "function(keys, args) return args[1] end)")
    dumped = r.function_dump()
    assert dumped[:-10] == bytes.fromhex(
        "f5c34056405b1f23216c7561206e616d653d6d796c69620a72656469732e72656769737465725f"
        "0b66756e6374696f6e28276d79400b02272c2040066012116b6579732c20617267732920726574"
        "75726e600c075b315d20656e6429")
    assert dumped[-8:] == crc64(dumped[:-8]).to_bytes(8, "little")
    r.function_flush()
    assert r.function_dump()[:-10] == b""


def test_dump_and_restore_round_trip(r):
    r.function_load(lib("one", ("f1", "return 1"), ("f2", "return 2")))
    r.function_load(lib("two", ("g", "return 3")))
    payload = r.function_dump()
    listing = sorted(map(str, r.function_list(withcode=True)))
    r.function_flush()
    assert r.function_restore(payload)
    assert sorted(map(str, r.function_list(withcode=True))) == listing
    assert r.fcall("g", 0) == 3


def test_restore_policies(wire):
    one = lib("one", ("f1", "return 1"))
    assert wire("FUNCTION", "LOAD", one) == b"$3\r\none\r\n"
    same = _payload(lib("one", ("f1", "return 11")))
    assert wire("FUNCTION", "RESTORE", same) == err(b"ERR Library one already exists")
    assert wire("FUNCTION", "RESTORE", same, "append") == err(
        b"ERR Library one already exists")
    assert wire("FUNCTION", "RESTORE", same, "REPLACE") == b"+OK\r\n"
    assert wire("FCALL", "f1", "0") == b":11\r\n"
    # Another library's function of the same name collides, REPLACE or not.
    other = _payload(lib("other", ("f1", "return 2")))
    for policy in ("APPEND", "REPLACE"):
        assert wire("FUNCTION", "RESTORE", other, policy) == err(
            b"ERR Function f1 already exists")
    assert wire("FUNCTION", "RESTORE", other, "FLUSH") == b"+OK\r\n"
    assert wire("FCALL", "f1", "0") == b":2\r\n"
    assert wire("FUNCTION", "DELETE", "one") == err(b"ERR Library not found")
    # An empty payload adds nothing; FLUSH with it removes everything.
    assert wire("FUNCTION", "RESTORE", _payload()) == b"+OK\r\n"
    assert wire("FCALL", "f1", "0") == b":2\r\n"
    assert wire("FUNCTION", "RESTORE", _payload(), "FLUSH") == b"+OK\r\n"
    assert wire("FCALL", "f1", "0") == err(b"ERR Function not found")


def test_restore_failures_leave_the_libraries_alone(wire):
    assert wire("FUNCTION", "LOAD", lib("keep", ("k", "return 7"))) == b"$4\r\nkeep\r\n"
    dup = lib("dup", ("f3", "return 2"))
    cases = [
        (("BOGUS",), b"ERR Wrong restore policy given, value should be either FLUSH, "
                     b"APPEND or REPLACE."),
        (("FLUSH", "x"), b"ERR unknown subcommand or wrong number of arguments for "
                         b"'RESTORE'. Try FUNCTION HELP."),
    ]
    for extra, text in cases:
        assert wire("FUNCTION", "RESTORE", _payload(dup), *extra) == err(text)
    bad = [
        (b"garbage", b"ERR DUMP payload version or checksum are wrong"),
        (_payload(dup)[:-1] + b"\x00", b"ERR DUMP payload version or checksum are wrong"),
        (_payload(dup, version=0xFFFF), b"ERR DUMP payload version or checksum are wrong"),
        (seal(b"\x00\x05hello", 10), b"ERR given type is not a function"),
        (seal(b"\xf5\x05hello", 10), b"ERR Missing library metadata"),
        (seal(b"\xf5\x40", 10), b"ERR Failed loading library payload"),
        (_payload(dup, dup), b"ERR Library 'dup' already exists"),
        (_payload(dup, "#!lua name=d2\nredis.register_function('F3', function() end)"),
         b"ERR Function F3 already exists"),
        (_payload("#!lua name=bad\nreturn 1"), b"ERR No functions registered"),
        (_payload("#!lua name=bad\nsyntax error here"),
         b"ERR Error compiling function: user_function:2: '=' expected near 'error'"),
    ]
    for payload, text in bad:
        for policy in ((), ("FLUSH",)):
            assert wire("FUNCTION", "RESTORE", payload, *policy) == err(text), payload
    assert wire("FCALL", "k", "0") == b":7\r\n"
    assert wire("FUNCTION", "DUMP", "x") == err(
        b"ERR wrong number of arguments for 'function|dump' command")
    assert wire("FUNCTION", "RESTORE") == err(
        b"ERR wrong number of arguments for 'function|restore' command")


def test_restore_counts_as_a_change(r):
    r.function_load(lib("one", ("f1", "return 1")))
    payload = r.function_dump()
    before = dirty(r)
    r.function_restore(payload, "REPLACE")
    assert dirty(r) == before + 1


# --- FCALL -------------------------------------------------------------------------------

def load(wire, body: str, flags: str | None = None, name: str = "t") -> None:
    if flags is None:
        code = (f"#!lua name=lt\nredis.register_function('{name}', function(keys, args)\n"
                f"{body}\nend)")
    else:
        code = (f"#!lua name=lt\nredis.register_function{{function_name='{name}', "
                f"callback=function(keys, args)\n{body}\nend, flags={{{flags}}}}}")
    assert wire("FUNCTION", "LOAD", "REPLACE", code) == b"$2\r\nlt\r\n"


def where(name: str, line: int, source: str = "@user_function") -> bytes:
    return f" script: {name}, on {source}:{line}.".encode()


def test_fcall_passes_keys_and_args(wire):
    load(wire, "return {keys[1], keys[2], args[1], #keys, #args}")
    assert wire("FCALL", "t", "2", "a", "b", "c") == (
        b"*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n:2\r\n:1\r\n")
    load(wire, "return {#keys, #args}")
    assert wire("FCALL", "T", "0") == b"*2\r\n:0\r\n:0\r\n"  # names match in any case


def test_fcall_argument_errors(wire):
    load(wire, "return 1")
    assert wire("FCALL", "nosuch", "0") == err(b"ERR Function not found")
    assert wire("FCALL", "nosuch", "x") == err(b"ERR Function not found")
    assert wire("FCALL_RO", "nosuch", "0") == err(b"ERR Function not found")
    assert wire("FCALL", "t") == err(b"ERR wrong number of arguments for 'fcall' command")
    assert wire("FCALL", "t", "2", "a") == err(
        b"ERR Number of keys can't be greater than number of args")
    assert wire("FCALL", "t", "-1") == err(b"ERR Number of keys can't be negative")
    for bad in ("x", "1.5", "99999999999999999999"):
        assert wire("FCALL", "t", bad) == err(b"ERR Bad number of keys provided")


RUNTIME_FAILURES = [
    ("return redis.call('nosuch')", b"ERR Unknown Redis command called from script", 3),
    ("\n\nreturn redis.call('nosuch')", b"ERR Unknown Redis command called from script", 5),
    ("error('boom')", b"ERR user_function:3: boom", 3),
    ("x = 5", b"ERR user_function:3: Attempt to modify a readonly table", 3),
    ("return y", b"ERR user_function:3: Script attempted to access nonexistent global "
                 b"variable 'y'", 3),
    ("return os", b"ERR user_function:3: Script attempted to access nonexistent global "
                  b"variable 'os'", 3),
    ("return KEYS", b"ERR user_function:3: Script attempted to access nonexistent global "
                    b"variable 'KEYS'", 3),
    ("return __redis__err__handler", b"ERR user_function:3: Script attempted to access "
                                     b"nonexistent global variable '__redis__err__handler'", 3),
    ("return redis.register_function('a', function() end)",
     b"ERR user_function:3: attempt to call field 'register_function' (a nil value)", 3),
    ("error({err='mine'})", b"mine", 3),
    ("return redis.call('eval','return 1', '0')",
     b"ERR This Redis command is not allowed from script", 3),
    ("return redis.call('fcall','t', '0')",
     b"ERR This Redis command is not allowed from script", 3),
    ("return redis.call('function','list')",
     b"ERR This Redis command is not allowed from script", 3),
    ("local function f()\n error('deep')\nend\nreturn f()", b"ERR user_function:4: deep", 4),
]


@pytest.mark.parametrize("body, text, line", RUNTIME_FAILURES)
def test_a_function_that_raises_names_itself_and_its_line(wire, body, text, line):
    load(wire, body)
    assert wire("FCALL", "t", "0") == err(text + where("t", line))


def test_errors_name_the_function_as_registered(wire):
    load(wire, "error('boom')", name="MyFn")
    assert wire("FCALL", "myfn", "0") == err(b"ERR user_function:3: boom" + where("MyFn", 3))


def test_code_compiled_by_loadstring_is_named_by_its_source(wire):
    load(wire, "return loadstring('return os')()")
    assert wire("FCALL", "t", "0") == err(
        b"ERR [string \"return os\"]:1: Script attempted to access nonexistent global "
        b"variable 'os'" + where("t", 1, "return os"))


def test_replies_convert_as_for_eval(wire):
    for body, reply in [("return redis.error_reply('My')", err(b"ERR My")),
                        ("return {err='x'}", err(b"x")), ("return", b"$-1\r\n"),
                        ("local ok, e = pcall(error, 'x') return e", b"$1\r\nx\r\n"),
                        ("return redis.setresp(3)", b"$-1\r\n"),
                        ("return {1, 2}", b"*2\r\n:1\r\n:2\r\n")]:
        load(wire, body)
        assert wire("FCALL", "t", "0") == reply, body


def test_a_functions_sandbox(wire):
    present = ["string", "math", "table", "coroutine", "bit", "cjson", "pcall", "xpcall",
               "error", "type", "loadstring", "load", "_G", "gcinfo", "unpack"]
    absent = ["os", "print", "setfenv", "getfenv", "newproxy", "debug", "KEYS", "ARGV",
              "__redis__err__handler"]
    load(wire, "local out = {} for _, n in ipairs(args) do "
               "out[#out + 1] = tostring(rawget(_G, n) ~= nil or pcall(function() "
               "return _G[n] end)) end return out")
    reply = wire("FCALL", "t", "0", *present, *absent)
    assert reply == b"*%d\r\n" % (len(present) + len(absent)) + (
        b"$4\r\ntrue\r\n" * len(present) + b"$5\r\nfalse\r\n" * len(absent))
    load(wire, "local out = {} for _, n in ipairs(args) do out[#out + 1] = "
               "redis[n] == nil and 'nil' or 'set' end return out")
    names = ["call", "pcall", "log", "sha1hex", "setresp", "set_repl", "status_reply",
             "error_reply", "acl_check_cmd", "LOG_WARNING", "REPL_ALL", "REDIS_VERSION",
             "breakpoint", "debug", "replicate_commands", "register_function"]
    assert wire("FCALL", "t", "0", *names) == b"*16\r\n" + b"$3\r\nset\r\n" * 12 + (
        b"$3\r\nnil\r\n" * 4)


def test_what_a_library_keeps_from_loading(wire):
    # The loading API's redis table, kept by the library, is still the loading one.
    code = ("#!lua name=f\nlocal r = redis\n"
            "redis.register_function('rr', function() return r.call('ping') end)")
    assert wire("FUNCTION", "LOAD", code) == b"$1\r\nf\r\n"
    assert wire("FCALL", "rr", "0") == err(
        b"ERR user_function:3: Script attempted to access nonexistent global variable "
        b"'call'" + where("rr", 3))
    code = ("#!lua name=g\nlocal reg = redis.register_function\n"
            "redis.register_function('rg', function() reg('zz', function() end) end)")
    assert wire("FUNCTION", "LOAD", code) == b"$1\r\ng\r\n"
    assert wire("FCALL", "rg", "0") == err(
        b"ERR redis.register_function can only be called on FUNCTION LOAD command"
        + where("rg", 3))


def test_no_writes_and_fcall_ro(wire):
    assert wire("SET", "k", "v") == b"+OK\r\n"
    load(wire, "return redis.call('set','k','v2')", flags="'no-writes'")
    assert wire("FCALL", "t", "1", "k") == err(
        b"ERR Write commands are not allowed from read-only scripts." + where("t", 3))
    assert wire("FCALL_RO", "t", "1", "k") == err(
        b"ERR Write commands are not allowed from read-only scripts." + where("t", 3))
    load(wire, "return redis.pcall('publish','ch','m')", flags="'no-writes'")
    assert wire("FCALL", "t", "0") == err(
        b"ERR Write commands are not allowed from read-only scripts.")
    load(wire, "return redis.call('get','k')", flags="'NO-WRITES'")
    assert wire("FCALL_RO", "t", "1", "k") == b"$1\r\nv\r\n"
    load(wire, "return redis.call('get','k')")
    assert wire("FCALL_RO", "t", "1", "k") == err(
        b"ERR Can not execute a script with write flag using *_ro command.")
    # numkeys is checked first
    assert wire("FCALL_RO", "t", "5") == err(
        b"ERR Number of keys can't be greater than number of args")
    load(wire, "return redis.call('get','k')", flags="'allow-oom', 'allow-stale'")
    assert wire("FCALL", "t", "0") == b"$1\r\nv\r\n"
    assert wire("GET", "k") == b"$1\r\nv\r\n"


def test_a_functions_select_is_its_own(wire):
    load(wire, "redis.call('select', 5) return redis.call('set','db5key','1')")
    assert wire("FCALL", "t", "0") == b"+OK\r\n"
    assert wire("EXISTS", "db5key") == b":0\r\n"
    assert wire("SELECT", "5") == b"+OK\r\n"
    assert wire("EXISTS", "db5key") == b":1\r\n"
    assert wire("FLUSHDB") == b"+OK\r\n"


def test_fcall_inside_a_transaction(wire):
    load(wire, "return redis.call('set', keys[1], args[1])")
    assert wire("MULTI") == b"+OK\r\n"
    assert wire("FCALL", "t", "1", "k", "v") == b"+QUEUED\r\n"
    assert wire("GET", "k") == b"+QUEUED\r\n"
    assert wire("EXEC") == b"*2\r\n+OK\r\n$1\r\nv\r\n"


# --- FUNCTION LIST / STATS / DELETE / FLUSH / KILL / HELP ----------------------------------

FLAGGED = ("#!lua name=lib5\nredis.register_function{function_name='ab', callback=function() "
           "end, description='d', flags={'allow-cross-slot-keys','no-cluster','allow-stale',"
           "'allow-oom','no-writes'}}")
FLAGS2 = (b"*5\r\n+no-writes\r\n+allow-oom\r\n+allow-stale\r\n+no-cluster\r\n"
          b"+allow-cross-slot-keys\r\n")
FLAGS3 = b"~5" + FLAGS2[2:]


def test_function_list_resp2_and_resp3(wire):
    assert wire("FUNCTION", "LOAD", FLAGGED) == b"$4\r\nlib5\r\n"
    head = (b"$12\r\nlibrary_name\r\n$4\r\nlib5\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\n"
            b"functions\r\n*1\r\n")
    fn = b"$4\r\nname\r\n$2\r\nab\r\n$11\r\ndescription\r\n$1\r\nd\r\n$5\r\nflags\r\n"
    code = b"$12\r\nlibrary_code\r\n" + bulk(FLAGGED.encode())
    assert wire("FUNCTION", "LIST") == b"*1\r\n*6\r\n" + head + b"*6\r\n" + fn + FLAGS2
    assert wire("FUNCTION", "LIST", "WITHCODE") == (
        b"*1\r\n*8\r\n" + head + b"*6\r\n" + fn + FLAGS2 + code)
    assert wire("FUNCTION", "LIST", "LIBRARYNAME", "LIB*", "withcode") == (
        b"*1\r\n*8\r\n" + head + b"*6\r\n" + fn + FLAGS2 + code)
    assert wire.resp3("FUNCTION", "LIST") == b"*1\r\n%3\r\n" + head + b"%3\r\n" + fn + FLAGS3
    assert wire.resp3("FUNCTION", "LIST", "WITHCODE") == (
        b"*1\r\n%4\r\n" + head + b"%3\r\n" + fn + FLAGS3 + code)


def test_function_list_without_flags_or_description(wire):
    code = ("#!lua name=d\nredis.register_function{function_name=5, callback=function() "
            "return 'five' end, description=5}")
    assert wire("FUNCTION", "LOAD", code) == b"$1\r\nd\r\n"
    assert wire("FCALL", "5", "0") == b"$4\r\nfive\r\n"
    assert wire("FUNCTION", "LOAD", lib("p", ("pf", "return 1"))) == b"$1\r\np\r\n"
    assert wire("FUNCTION", "LIST", "LIBRARYNAME", "p") == (
        b"*1\r\n*6\r\n$12\r\nlibrary_name\r\n$1\r\np\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\n"
        b"functions\r\n*1\r\n*6\r\n$4\r\nname\r\n$2\r\npf\r\n$11\r\ndescription\r\n$-1\r\n"
        b"$5\r\nflags\r\n*0\r\n")
    assert wire.resp3("FUNCTION", "LIST", "LIBRARYNAME", "d") == (
        b"*1\r\n%3\r\n$12\r\nlibrary_name\r\n$1\r\nd\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\n"
        b"functions\r\n*1\r\n%3\r\n$4\r\nname\r\n$1\r\n5\r\n$11\r\ndescription\r\n$1\r\n5\r\n"
        b"$5\r\nflags\r\n~0\r\n")


def test_function_list_filters_and_errors(call, wire):
    for name in ("alpha", "beta", "Alps"):
        assert wire("FUNCTION", "LOAD", lib(name, (name + "_f", "return 1"))) == bulk(
            name.encode())
    names = {e[1] for e in call("FUNCTION", "LIST")}  # in no particular order
    assert names == {b"alpha", b"beta", b"Alps"}
    assert {e[1] for e in call("FUNCTION", "LIST", "LIBRARYNAME", "al*")} == {
        b"alpha", b"Alps"}
    assert wire("FUNCTION", "LIST", "libraryname", "x*") == b"*0\r\n"
    assert wire("FUNCTION", "LIST", "LIBRARYNAME") == err(
        b"ERR library name argument was not given")
    assert wire("FUNCTION", "LIST", "WITHCODE", "WITHCODE") == err(
        b"ERR Unknown argument WITHCODE")
    assert wire("FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b") == err(
        b"ERR Unknown argument LIBRARYNAME")
    assert wire("FUNCTION", "LIST", "foo") == err(b"ERR Unknown argument foo")


def stats2(libs: int, fns: int) -> bytes:
    return (b"*4\r\n$14\r\nrunning_script\r\n$-1\r\n$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n"
            b"$15\r\nlibraries_count\r\n:%d\r\n$15\r\nfunctions_count\r\n:%d\r\n" % (libs, fns))


def test_function_stats(wire):
    assert wire("FUNCTION", "STATS") == stats2(0, 0)
    assert wire("FUNCTION", "LOAD", lib("a", ("a1", "return 1"), ("a2", "return 2"))) == (
        b"$1\r\na\r\n")
    assert wire("FUNCTION", "LOAD", FLAGGED) == b"$4\r\nlib5\r\n"
    assert wire("FUNCTION", "STATS") == stats2(2, 3)
    assert wire.resp3("FUNCTION", "STATS") == (
        b"%2\r\n$14\r\nrunning_script\r\n_\r\n$7\r\nengines\r\n%1\r\n$3\r\nLUA\r\n%2\r\n"
        b"$15\r\nlibraries_count\r\n:2\r\n$15\r\nfunctions_count\r\n:3\r\n")
    assert wire("FUNCTION", "STATS", "x") == err(
        b"ERR wrong number of arguments for 'function|stats' command")


def test_function_delete_flush_kill(wire):
    assert wire("FUNCTION", "LOAD", FLAGGED) == b"$4\r\nlib5\r\n"
    assert wire("FUNCTION", "DELETE", "LIB5") == err(b"ERR Library not found")
    assert wire("FUNCTION", "DELETE") == err(
        b"ERR wrong number of arguments for 'function|delete' command")
    assert wire("FUNCTION", "DELETE", "a", "b") == err(
        b"ERR wrong number of arguments for 'function|delete' command")
    assert wire("FUNCTION", "DELETE", "lib5") == b"+OK\r\n"
    assert wire("FUNCTION", "DELETE", "lib5") == err(b"ERR Library not found")
    assert wire("FCALL", "ab", "0") == err(b"ERR Function not found")
    assert wire("FUNCTION", "LOAD", FLAGGED) == b"$4\r\nlib5\r\n"
    assert wire("FUNCTION", "FLUSH", "x") == err(
        b"ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    assert wire("FUNCTION", "FLUSH", "sync", "x") == err(
        b"ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.")
    assert wire("FUNCTION", "LIST") != b"*0\r\n"
    assert wire("FUNCTION", "FLUSH", "ASYNC") == b"+OK\r\n"
    assert wire("FUNCTION", "LIST") == b"*0\r\n"
    assert wire("FUNCTION", "LOAD", FLAGGED) == b"$4\r\nlib5\r\n"  # the name is free again
    assert wire("FUNCTION", "FLUSH") == b"+OK\r\n"
    assert wire("FUNCTION", "STATS") == stats2(0, 0)
    assert wire("FUNCTION", "KILL") == err(b"NOTBUSY No scripts in execution right now.")
    assert wire("FUNCTION", "KILL", "x") == err(
        b"ERR wrong number of arguments for 'function|kill' command")
    assert wire("FUNCTION") == err(b"ERR wrong number of arguments for 'function' command")
    assert wire("FUNCTION", "nope") == err(b"ERR unknown subcommand 'nope'. Try FUNCTION HELP.")


def test_function_help(wire):
    assert wire("FUNCTION", "HELP") == help_reply(
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
        "    It also possible to get only function that matches a pattern using LIBRARYNAME "
        "argument.",
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
        "    Prints this help.")
    assert wire("FUNCTION", "HELP", "x") == err(
        b"ERR wrong number of arguments for 'function|help' command")


# --- effects -----------------------------------------------------------------------------

def test_dirty_counts_library_changes_and_function_writes(r):
    setter = lib("a", ("fa", "return redis.call('set', keys[1], args[1])"))
    steps = [(("FUNCTION", "LOAD", setter), 1), (("FUNCTION", "LOAD", setter), 0),
             (("FUNCTION", "LOAD", "REPLACE", setter), 1), (("FCALL", "fa", "1", "k", "v"), 1),
             (("FCALL", "fa", "1", "k", "v"), 1), (("FUNCTION", "DELETE", "a"), 1),
             (("FUNCTION", "DELETE", "a"), 0), (("FUNCTION", "FLUSH"), 1),
             (("FUNCTION", "FLUSH", "ASYNC"), 1)]
    got = []
    for argv, _ in steps:
        before = dirty(r)
        try:
            r.execute_command(*argv)
        except redis.ResponseError:
            pass
        got.append((argv, dirty(r) - before))
    assert got == steps


def test_function_writes_break_watch_and_notify(r, make_client):
    r.function_load(lib("w", ("setk", "return redis.call('set', keys[1], args[1])"),
                        ("getk", "return redis.call('get', keys[1])")))
    assert watch_broken(make_client, "a", lambda: r.fcall("setk", 1, "a", "1"))
    assert not watch_broken(make_client, "a", lambda: r.fcall("getk", 1, "a"))
    assert not watch_broken(make_client, "a", lambda: r.function_load(
        lib("x", ("xf", "return 1"))))
    r.config_set("notify-keyspace-events", "KEA")
    try:
        sub = make_client().pubsub()
        sub.psubscribe("__keyevent@0__:*")
        assert sub.get_message(timeout=2)["type"] == "psubscribe"
        r.fcall("setk", 1, "b", "2")
        got = sub.get_message(timeout=2)
        assert (got["channel"], got["data"]) == (b"__keyevent@0__:set", b"b")
        sub.close()
    finally:
        r.config_set("notify-keyspace-events", "")


_LINE = re.compile(rb"\+\d+\.\d+ \[(\d+) ([^\]]+)\] (.*)")


def test_monitor_shows_the_call_then_its_commands(r, raw):
    c = raw()
    c.send(encode_request("FUNCTION", "LOAD", lib("m", ("mf", "redis.call('set','a','1') "
                                                          "return redis.call('get','a')"))))
    assert c.read_reply() == b"$1\r\nm\r\n"
    m = _monitoring(raw)
    for req in (("FCALL", "mf", "0"), ("FCALL", "nosuch", "0"), ("ECHO", "end")):
        c.send(encode_request(*req))
        c.read_reply()
    data = m.read_until(lambda b: b'"ECHO" "end"\r\n' in b)
    lines = [_LINE.match(line).groups() for line in data.split(b"\r\n")[:-1]]
    assert [(db, who == b"lua", args) for db, who, args in lines] == [
        (b"0", False, b'"FCALL" "mf" "0"'), (b"0", True, b'"set" "a" "1"'),
        (b"0", True, b'"get" "a"'), (b"0", False, b'"FCALL" "nosuch" "0"'),
        (b"0", False, b'"ECHO" "end"')]


def test_command_info_docs_and_getkeys(call):
    info = call("COMMAND", "INFO", "fcall", "fcall_ro")
    assert [(i[0], i[1], sorted(i[2]), i[3:6], sorted(i[6])) for i in info] == [
        (b"fcall", -3, sorted([b"noscript", b"stale", b"skip_monitor", b"no_mandatory_keys",
                               b"movablekeys"]), [0, 0, 0], [b"@scripting", b"@slow"]),
        (b"fcall_ro", -3, sorted([b"readonly", b"noscript", b"stale", b"skip_monitor",
                                  b"no_mandatory_keys", b"movablekeys"]), [0, 0, 0],
         [b"@scripting", b"@slow"])]
    spec = dict(zip(info[1][8][0][::2], info[1][8][0][1::2]))
    assert spec[b"notes"] == (b"We cannot tell how the keys will be used so we assume the "
                              b"worst, RO and ACCESS")
    assert spec[b"flags"] == [b"RO", b"access"]
    assert spec[b"find_keys"] == [b"type", b"keynum", b"spec",
                                  [b"keynumidx", 0, b"firstkey", 1, b"keystep", 1]]
    assert call("COMMAND", "GETKEYS", "FCALL", "f", "2", "a", "b", "c") == [b"a", b"b"]
    assert call("COMMAND", "GETKEYSANDFLAGS", "FCALL_RO", "f", "1", "a", "c") == [
        [b"a", [b"RO", b"access"]]]
    subs = {e[0]: e for e in call("COMMAND", "INFO", "function")[0][9]}
    shapes = {name: (e[1], sorted(e[2])) for name, e in subs.items()}
    expected = {b"function|load": (-3, [b"denyoom", b"noscript", b"write"]),
                b"function|delete": (3, [b"noscript", b"write"]),
                b"function|list": (-2, [b"noscript"]),
                b"function|stats": (2, [b"allow_busy", b"noscript"]),
                b"function|kill": (2, [b"allow_busy", b"noscript"]),
                b"function|flush": (-2, [b"noscript", b"write"]),
                b"function|help": (2, [b"loading", b"stale"])}
    assert {k: shapes[k] for k in expected} == expected
    docs = call.resp3("COMMAND", "DOCS", "fcall")[b"fcall"]
    assert [(a[b"name"], a[b"type"]) for a in docs[b"arguments"]] == [
        (b"function", b"string"), (b"numkeys", b"integer"), (b"key", b"key"),
        (b"arg", b"string")]


def test_redis_py_function_api(r):
    assert r.function_load(
        "#!lua name=mylib\nredis.register_function('add_and_mark', function(keys, args) "
        "local id = redis.call('XADD', keys[1], '*', 'f', args[1]) "
        "redis.call('SET', keys[2], id) return id end)") == b"mylib"
    entry_id = r.fcall("add_and_mark", 2, "s", "checkpoint", "v")
    assert r.get("checkpoint") == entry_id
    assert r.xrange("s") == [(entry_id, {b"f": b"v"})]
    listed = r.function_list()
    assert [(e[b"library_name"] if isinstance(e, dict) else e[1]) for e in listed] == [b"mylib"]
    r.function_delete("mylib")
    with pytest.raises(redis.ResponseError, match="Function not found"):
        r.fcall("add_and_mark", 2, "s", "checkpoint", "v")


def test_info_counts_functions_and_libraries(r):
    def counts():
        info = r.info("memory")
        return info["number_of_functions"], info["number_of_libraries"]

    assert counts() == (0, 0)
    r.function_load(lib("a", ("a1", "return 1"), ("a2", "return 2")))
    r.function_load(lib("b", ("b1", "return 1")))
    assert counts() == (3, 2)
    r.function_delete("a")
    assert counts() == (1, 1)


@pytest.mark.parametrize("body, incr_failed", [
    ("return redis.call('incr', keys[1])", 1),   # the command's error, raised
    ("return redis.pcall('incr', keys[1])", 1),  # its error table, returned
    ("error('mine')", 0),                        # the function's own errors
    ("return redis.error_reply('mine')", 0),
])
def test_error_statistics_count_a_functions_error_once(r, body, incr_failed):
    r.function_load(lib("s", ("sf", body)))
    r.set("k", "v")
    r.config_resetstat()
    with pytest.raises(redis.ResponseError):
        r.fcall("sf", 1, "k")
    calls = r.info("commandstats")
    assert (r.info("stats")["total_error_replies"],
            r.info("errorstats")["errorstat_ERR"]["count"],
            calls.get("cmdstat_incr", {}).get("failed_calls", 0),
            calls["cmdstat_fcall"]["failed_calls"]) == (1, 1, incr_failed, 1)


@pytest.mark.streamd_only
def test_without_lupa_load_answers_an_error(monkeypatch):
    import types

    from streamd.commands import functions as cmds
    from streamd.commands.errors import CommandError
    from streamd.scripting import engine

    monkeypatch.setattr(engine, "_lupa", None)
    monkeypatch.setattr(engine, "_import_error", "ModuleNotFoundError: No module named 'lupa'")
    ctx = types.SimpleNamespace(server=types.SimpleNamespace(scripts=None, functions=None,
                                                             monitors=[]))
    with pytest.raises(CommandError) as exc:
        cmds.function_load(ctx, [b"FUNCTION", b"LOAD", lib("a", ("f", "return 1")).encode()])
    assert exc.value.text.startswith("ERR Lua scripting is not available")
    with pytest.raises(CommandError) as exc:
        cmds.fcall(ctx, [b"FCALL", b"f", b"0"])
    assert exc.value.text == "ERR Function not found"
