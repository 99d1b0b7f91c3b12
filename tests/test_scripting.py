"""Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, byte for byte as Redis
7.0.15 answers (recorded from it; the tests run against it with --redis-url)."""

from __future__ import annotations

import hashlib
import re
import types

import pytest
import redis

from tests.conftest import dirty, encode_request, watch_broken
from tests.test_connection import _monitoring
from tests.test_ops_commands import help_reply


def sha(body: str) -> str:
    return hashlib.sha1(body.encode()).hexdigest()


def where(body: str, line: int = 1) -> str:
    """What Redis appends to the error of a script that raised."""
    return f" script: {sha(body)}, on @user_script:{line}."


# (script, reply) for scripts that touch no key: the Lua -> RESP conversion rules.
CONVERSIONS = [
    ("return 1", b":1\r\n"),
    ("return {1,2,3,'x',nil,5}", b"*4\r\n:1\r\n:2\r\n:3\r\n$1\r\nx\r\n"),  # stops at nil
    ("return 3.99", b":3\r\n"),
    ("return -3.99", b":-3\r\n"),
    ("return -0.5", b":0\r\n"),
    ("return 1e20", b":-9223372036854775808\r\n"),
    ("return 0/0", b":-9223372036854775808\r\n"),
    ("return 9007199254740993", b":9007199254740992\r\n"),
    ("return true", b":1\r\n"),
    ("return false", b"$-1\r\n"),
    ("return nil", b"$-1\r\n"),
    ("return", b"$-1\r\n"),
    ("return '3'", b"$1\r\n3\r\n"),
    ("return {ok='fine'}", b"+fine\r\n"),
    ("return {err='bad thing'}", b"-bad thing\r\n"),
    ("return {err=''}", b"-\r\n"),
    ("return {err=5}", b"*0\r\n"),  # only a string field counts
    ("return {ok=5}", b"*0\r\n"),
    ("return {err='x', ok='y'}", b"-x\r\n"),
    ("return {1, 2, err='x'}", b"-x\r\n"),
    ("return {a=1}", b"*0\r\n"),
    ("return {'a', {}, 'b'}", b"*3\r\n$1\r\na\r\n*0\r\n$1\r\nb\r\n"),
    ("return {1,{2,{3}},true,false,3.5}",
     b"*5\r\n:1\r\n*2\r\n:2\r\n*1\r\n:3\r\n:1\r\n$-1\r\n:3\r\n"),
    ("return redis.status_reply('X')", b"+X\r\n"),
    ("return redis.error_reply('My Error')", b"-My Error\r\n"),
    ("return redis.error_reply('-My Error')", b"-My Error\r\n"),
    ("return redis.error_reply('x y')", b"-x y\r\n"),
    ("return {1, redis.error_reply('inner'), 2}", b"*3\r\n:1\r\n-ERR inner\r\n:2\r\n"),
    ("return {1, {ok='st'}, 2}", b"*3\r\n:1\r\n+st\r\n:2\r\n"),
    ("return redis.status_reply()", b"-ERR wrong number or type of arguments\r\n"),
    ("return redis.error_reply(5)", b"-ERR wrong number or type of arguments\r\n"),
    ("local t = redis.error_reply('x') local n = 0 for k in pairs(t) do n = n + 1 end "
     "return {n, t.err}", b"*2\r\n:1\r\n$5\r\nERR x\r\n"),
    ("return {double=3.5}", b"$3\r\n3.5\r\n"),
    ("return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ("return {set={a=true}}", b"*1\r\n$1\r\na\r\n"),
    ("return {big_number='123'}", b"$3\r\n123\r\n"),
    ("return redis.sha1hex('')", b"$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"),
    ("return redis.sha1hex(123)", b"$40\r\n40bd001563085fc35165329ea1ff5c5ecbdbbeef\r\n"),
    ("return redis.log(redis.LOG_WARNING, 'hi')", b"$-1\r\n"),
    ("return _VERSION", b"$7\r\nLua 5.1\r\n"),
    ("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, "
     "redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}",
     b"*9\r\n:0\r\n:1\r\n:2\r\n:3\r\n:0\r\n:1\r\n:2\r\n:2\r\n:3\r\n"),
    ("return redis.replicate_commands()", b":1\r\n"),
    ("return cjson.encode({1,2,3})", b"$7\r\n[1,2,3]\r\n"),
    ("return cjson.encode({a=1})", b'$7\r\n{"a":1}\r\n'),
    ("return cjson.decode('[1,2,\"x\"]')", b"*3\r\n:1\r\n:2\r\n$1\r\nx\r\n"),
    ("return cjson.decode('{\"a\":[1,2.5,null,true]}').a", b"*4\r\n:1\r\n:2\r\n$-1\r\n:1\r\n"),
    ("return bit.band(7, 3)", b":3\r\n"),
    ("return bit.tohex(255)", b"$8\r\n000000ff\r\n"),
    ("local ok, e = pcall(error, {err='x', foo=1}); return e", b"$1\r\nx\r\n"),
    ("local ok, e = pcall(error, 'str'); return e", b"$3\r\nstr\r\n"),
    ("local ok, e = pcall(function() error('str') end); return e",
     b"$18\r\nuser_script:1: str\r\n"),
    ("local ok, e = pcall(error, {1,2}); return type(e)", b"$5\r\ntable\r\n"),
    ("local ok, e = pcall(redis.call, 'nosuch'); return e",
     b"$44\r\nERR Unknown Redis command called from script\r\n"),
    ("local ok, e = pcall(redis.call); return e",
     b"$64\r\nERR Please specify at least one argument for this redis lib call\r\n"),
    ("local ok, e = pcall(redis.log); return e",
     b"$47\r\nERR redis.log() requires two arguments or more.\r\n"),
    ("local ok, e = pcall(redis.setresp, 5); return e",
     b"$32\r\nERR RESP version must be 2 or 3.\r\n"),
    ("return redis.pcall('get', {})",
     b"-ERR Lua redis lib command arguments must be strings or integers\r\n"),
    ("return redis.pcall()",
     b"-ERR Please specify at least one argument for this redis lib call\r\n"),
    ("return redis.pcall('nosuch', 'k')", b"-ERR Unknown Redis command called from script\r\n"),
    ("return redis.pcall('get')",
     b"-ERR Wrong number of args calling Redis command from script\r\n"),
    ("return redis.pcall('multi')", b"-ERR This Redis command is not allowed from script\r\n"),
    ("local t = redis.pcall('nosuch') local n = 0 for k in pairs(t) do n = n + 1 end return n",
     b":2\r\n"),
    ("return redis.call('ping')", b"+PONG\r\n"),
    ("return redis.call('PiNg', 'x')", b"$1\r\nx\r\n"),
    ("return redis.call('get', 1.5)", b"$-1\r\n"),
]

# The bundled libraries and the error tables, where an audit against 7.0.15 found streamd
# answering otherwise (recorded from it).
CONVERSIONS += [
    # only a command's error reply carries ignore_error_stats_update, not refused arguments
    ("return cjson.encode(redis.pcall('GET', {}))",
     b'$73\r\n{"err":"ERR Lua redis lib command arguments must be strings or integers"}\r\n'),
    ("return cjson.encode(redis.pcall())",
     b'$74\r\n{"err":"ERR Please specify at least one argument for this redis lib call"}\r\n'),
    ("return cjson.encode(redis.pcall('EVAL', 'return 1', 0))",
     b'$92\r\n{"ignore_error_stats_update":true,'
     b'"err":"ERR This Redis command is not allowed from script"}\r\n'),
    # a library function's error names the calling line, if a script line called it
    ("return {pcall(cjson.encode, function() end)}",
     b"*2\r\n$-1\r\n$45\r\nCannot serialise function: type not supported\r\n"),
    ("return {pcall(function() return cjson.encode(function() end) end)}",
     b"*2\r\n$-1\r\n$60\r\nuser_script:1: Cannot serialise function: type not supported\r\n"),
    ("return {pcall(bit.band, 'x')}",
     b"*2\r\n$-1\r\n$52\r\nbad argument #1 to '?' (number expected, got string)\r\n"),
    ("return {pcall(cjson.decode, '[1,2')}",
     b"*2\r\n$-1\r\n$58\r\nExpected comma or array end but found T_END at character 5\r\n"),
    # LuaBitOp takes numeric strings as Lua does, and a double's low word
    ("return bit.tohex('0x10')", b"$8\r\n00000010\r\n"),
    ("return bit.band(' 0x11 ', 1)", b":1\r\n"),
    ("return bit.tobit(-1e300)", b":-2013235812\r\n"),
    ("return bit.tobit(2.5)", b":2\r\n"),
    # cjson decodes what strtod reads
    ("return cjson.decode('nan')", b":-9223372036854775808\r\n"),
    ("return cjson.decode('+5')", b":5\r\n"),
    ("return cjson.decode('0x10')", b":16\r\n"),
    ("return cjson.decode('[1]\\0junk')", b"*1\r\n:1\r\n"),
    ("return cjson.decode('\"\\\\ud83d\\\\ude00\"')", b"$4\r\n\xf0\x9f\x98\x80\r\n"),
    # lua_tolstring: nothing for a table or boolean, %.14g for a number
    ("return redis.sha1hex({})", b"$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"),
    ("return redis.sha1hex(true)", b"$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"),
    ("return redis.sha1hex(2^53)", b"$40\r\n0657a6c1a05f84abbec76d2e23050d245b40333f\r\n"),
    # redis.setresp and redis.set_repl read their number with lua_tonumber
    ("redis.setresp(' 0x3 ') return type(redis.call('hgetall', 'nokey').map)",
     b"$5\r\ntable\r\n"),
    ("redis.setresp('3\\0zz') return type(redis.call('hgetall', 'nokey').map)",
     b"$5\r\ntable\r\n"),
    ("redis.set_repl('0x3') return 1", b":1\r\n"),
    # ... cast to an int: 3.99 is 3, a string that is no number 0
    ("return {pcall(redis.setresp, 3.99)}", b"*1\r\n:1\r\n"),
    ("return {pcall(redis.set_repl, 'str'), pcall(redis.set_repl, -0.5)}",
     b"*2\r\n:1\r\n:1\r\n"),
    ("return {pcall(redis.set_repl, 2^32 + 1)}",
     b"*2\r\n$-1\r\n$81\r\nERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
     b"REPL_ALL or REPL_NONE.\r\n"),
    # status and error texts go out on one line
    ("return {err = 'a\\r\\nb'}", b"-a  b\r\n"),
    ("return {ok = 'a\\nb'}", b"+a b\r\n"),
    ("return redis.error_reply('x\\r\\ny')", b"-ERR x  y\r\n"),
    ("return {{err = 'a\\nb'}, {ok = 'c\\rd'}}", b"*2\r\n-a b\r\n+c d\r\n"),
    # coroutine.wrap passes values both ways, yields included
    ("local f = coroutine.wrap(function(a) coroutine.yield(a + 1) return 'x' end) "
     "return {f(1), f()}", b"*2\r\n:2\r\n$1\r\nx\r\n"),
    ("local f = coroutine.wrap(function(...) return select('#', ...), ... end) "
     "return {f(1, nil, 3)}", b"*2\r\n:3\r\n:1\r\n"),
    ("local ok, e = pcall(coroutine.wrap(function() error('in') end)) return {tostring(ok), e}",
     b"*2\r\n$5\r\nfalse\r\n$17\r\nuser_script:1: in\r\n"),
]


@pytest.mark.parametrize("body, reply", CONVERSIONS)
def test_lua_values_convert_as_in_redis(wire, body, reply):
    assert wire("EVAL", body, "0") == reply


# Scripts that raise: Redis names the script and the line the error came from.
FAILURES = [
    ("return redis.call('nosuch','k')", "ERR Unknown Redis command called from script", 1),
    ("return redis.call('get')", "ERR Wrong number of args calling Redis command from script", 1),
    ("return redis.call('xinfo')", "ERR Wrong number of args calling Redis command from script", 1),
    ("return redis.call('xinfo','nosub')", "ERR Unknown Redis command called from script", 1),
    ("return redis.call()", "ERR Please specify at least one argument for this redis lib call", 1),
    ("return redis.call('get',{})",
     "ERR Lua redis lib command arguments must be strings or integers", 1),
    ("return redis.call('get',nil)",
     "ERR Lua redis lib command arguments must be strings or integers", 1),
    ("return redis.call('multi')", "ERR This Redis command is not allowed from script", 1),
    ("return redis.call('subscribe','x')", "ERR This Redis command is not allowed from script", 1),
    ("return redis.call('eval','return 1','0')",
     "ERR This Redis command is not allowed from script", 1),
    ("return redis.call('client','list')", "ERR This Redis command is not allowed from script", 1),
    ("return redis.call('config','get','maxmemory')",
     "ERR This Redis command is not allowed from script", 1),
    ("return redis.call('script','load','return 1')",
     "ERR This Redis command is not allowed from script", 1),
    ("return redis.call('watch','k')", "ERR This Redis command is not allowed from script", 1),
    ("return redis.call('set', 'k', 'v', 'ex', '-1')",
     "ERR invalid expire time in 'set' command", 1),
    ("x = 5", "ERR user_script:1: Attempt to modify a readonly table", 1),
    ("redis.call = 1", "ERR user_script:1: Attempt to modify a readonly table", 1),
    ("return y", "ERR user_script:1: Script attempted to access nonexistent global variable 'y'", 1),
    ("return os", "ERR user_script:1: Script attempted to access nonexistent global variable 'os'", 1),
    ("error('boom')", "ERR user_script:1: boom", 1),
    ("error({err='boom2'})", "boom2", 1),
    ("error({err='ERR my own'})", "ERR my own", 1),
    ("error('ERR my own')", "ERR user_script:1: ERR my own", 1),
    ("error(5)", "ERR user_script:1: 5", 1),
    ("error()", "ERR nil", 1),
    ("return 1 + nil", "ERR user_script:1: attempt to perform arithmetic on a nil value", 1),
    ("\n\nreturn redis.call('nosuch')", "ERR Unknown Redis command called from script", 3),
    ("local function f()\n return redis.call('nosuch')\nend\nreturn f()",
     "ERR Unknown Redis command called from script", 2),
    ("local function f()\n error('deep')\nend\nreturn f()", "ERR user_script:2: deep", 2),
    ("return redis.log()", "ERR redis.log() requires two arguments or more.", 1),
    ("return redis.log(99, 'x')", "ERR Invalid debug level.", 1),
    ("return redis.sha1hex()", "ERR wrong number of arguments", 1),
    ("return redis.setresp(4)", "ERR RESP version must be 2 or 3.", 1),
    ("return redis.setresp()", "ERR redis.setresp() requires one argument.", 1),
]

FAILURES += [
    ("return cjson.encode(function() end)",
     "ERR user_script:1: Cannot serialise function: type not supported", 1),
    ("return cjson.encode({[true]=1})",
     "ERR user_script:1: Cannot serialise boolean: table key must be a number or string", 1),
    ("return cjson.encode({[1]=1,[100]=3})",
     "ERR user_script:1: Cannot serialise table: excessively sparse array", 1),
    ("return cjson.encode(1, 2)",
     "ERR user_script:1: bad argument #1 to 'encode' (expected 1 argument)", 1),
    ("return cjson.decode()",
     "ERR user_script:1: bad argument #1 to 'decode' (expected 1 argument)", 1),
    ("return cjson.decode({})",
     "ERR user_script:1: bad argument #1 to 'decode' (string expected, got table)", 1),
    ("return cjson.decode('[1,2')",
     "ERR user_script:1: Expected comma or array end but found T_END at character 5", 1),
    ("return cjson.decode('  ')",
     "ERR user_script:1: Expected value but found T_END at character 3", 1),
    ("return cjson.decode('[1,]')",
     "ERR user_script:1: Expected value but found T_ARR_END at character 4", 1),
    ("return cjson.decode('{\"a\" 1}')",
     "ERR user_script:1: Expected colon but found T_NUMBER at character 6", 1),
    ("return cjson.decode('[1] x')",
     "ERR user_script:1: Expected the end but found invalid token at character 5", 1),
    ("return cjson.decode('-')",
     "ERR user_script:1: Expected value but found invalid number at character 1", 1),
    ("return cjson.decode('\"a\\\\qb\"')",
     "ERR user_script:1: Expected value but found invalid escape code at character 3", 1),
    ("return cjson.decode('\"\\\\ud800\"')",
     "ERR user_script:1: Expected value but found invalid unicode escape code at character 2", 1),
    ("return bit.band('x')",
     "ERR user_script:1: bad argument #1 to 'band' (number expected, got string)", 1),
    ("return bit.band()",
     "ERR user_script:1: bad argument #1 to 'band' (number expected, got no value)", 1),
    ("return bit.lshift(1)",
     "ERR user_script:1: bad argument #2 to 'lshift' (number expected, got no value)", 1),
    ("return bit.tohex(nil)",
     "ERR user_script:1: bad argument #1 to 'tohex' (number expected, got nil)", 1),
    ("local f = bit.bor return f({})",
     "ERR user_script:1: bad argument #1 to 'f' (number expected, got table)", 1),
    ("error({err = 5})", "5", 1),
    ("error({err = 'a\\nb'})", "a b", 1),
    # coroutine.wrap: its function's string error gets the caller's position on top of its
    # own (what the sandbox's wrap, resuming through the hook-setting resume, rebuilds).
    ("local f = coroutine.wrap(1) return f",
     "ERR user_script:1: bad argument #1 to 'wrap' (Lua function expected)", 1),
    ("local f = coroutine.wrap(function() error('boom') end) local r = f() return r",
     "ERR user_script:1: user_script:1: boom", 1),
    ("local f = coroutine.wrap(function() return 1 end) f() local r = f() return r",
     "ERR user_script:1: cannot resume dead coroutine", 1),
    ("local f = coroutine.wrap(function() return cjson.decode('{') end) local r = f() return r",
     "ERR user_script:1: user_script:1: Expected object key string but found T_END at "
     "character 2", 1),
    ("local f = coroutine.wrap(function() error({err='tbl'}) end) local r = f() return r",
     "tbl", 1),
]


@pytest.mark.parametrize("body, text, line", FAILURES)
def test_a_script_that_raises_names_itself_and_its_line(wire, body, text, line):
    assert wire("EVAL", body, "0") == b"-%s%s\r\n" % (text.encode(), where(body, line).encode())


def test_redis_call_raises_the_command_error_and_pcall_returns_it(wire):
    assert wire("SET", "k", "v") == b"+OK\r\n"
    body = "return redis.call('incr','k')"
    assert wire("EVAL", body, "1", "k") == (
        b"-ERR value is not an integer or out of range" + where(body).encode() + b"\r\n")
    body = "return redis.call('lpush','k','v')"
    if wire("LPUSH", "x", "y").startswith(b"-ERR unknown command"):
        body = "return redis.call('hset','k','f','v')"  # streamd has no lists
    assert wire("EVAL", body, "1", "k") == (
        b"-WRONGTYPE Operation against a key holding the wrong kind of value"
        + where(body).encode() + b"\r\n")
    assert wire("EVAL", "return redis.pcall('incr','k')", "1", "k") == (
        b"-ERR value is not an integer or out of range\r\n")
    assert wire("EVAL", "local r = redis.pcall('incr','k'); return type(r) .. ':' .. r.err",
                "1", "k") == b"$49\r\ntable:ERR value is not an integer or out of range\r\n"
    assert wire("EVAL", "return {redis.pcall('incr','k')}", "1", "k") == (
        b"*1\r\n-ERR value is not an integer or out of range\r\n")
    assert wire("EVAL", "local ok, e = pcall(redis.call, 'incr', 'k'); return e", "0") == (
        b"$43\r\nERR value is not an integer or out of range\r\n")


def test_command_replies_convert_to_lua(wire):
    assert wire("EVAL", "local r = redis.call('set','k','v'); return type(r) .. ':' .. r.ok",
                "0") == b"$8\r\ntable:OK\r\n"
    assert wire("EVAL", "return redis.call('get','k')", "1", "k") == b"$1\r\nv\r\n"
    assert wire("EVAL", "return redis.call('get','nokey')", "0") == b"$-1\r\n"
    assert wire("EVAL", "return type(redis.call('get','nokey'))", "0") == b"$7\r\nboolean\r\n"
    assert wire("EVAL", "return redis.call('xadd','s','1-1','f','v')", "0") == b"$3\r\n1-1\r\n"
    assert wire("EVAL", "return redis.call('xrange','s','-','+')", "0") == (
        b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
    assert wire("EVAL", "return redis.call('hset','h','a','1','b','2')", "0") == b":2\r\n"
    flat = b"*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
    assert wire("EVAL", "return redis.call('hgetall','h')", "0") == flat


def test_number_arguments_are_formatted_with_17_digits(wire):
    for arg, stored in (("1e20", b"1e+20"), ("3.0", b"3"), ("-0.5", b"-0.5"),
                        ("0.1", b"0.10000000000000001"), ("1/0", b"inf")):
        assert wire("EVAL", f"return redis.call('set', 'num', {arg})", "0") == b"+OK\r\n"
        assert wire("GET", "num") == b"$%d\r\n%s\r\n" % (len(stored), stored)


def test_keys_and_argv(wire):
    assert wire("EVAL", "return {KEYS[1],KEYS[2],ARGV[1],ARGV[2]}", "2", "a", "b", "c", "d") == (
        b"*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n")
    assert wire("EVAL", "return {#KEYS, #ARGV}", "0") == b"*2\r\n:0\r\n:0\r\n"


def test_numkeys_errors(wire):
    assert wire("EVAL", "return 1", "3", "a") == (
        b"-ERR Number of keys can't be greater than number of args\r\n")
    assert wire("EVAL", "return 1", "-1") == b"-ERR Number of keys can't be negative\r\n"
    assert wire("EVAL", "return 1", "x") == b"-ERR value is not an integer or out of range\r\n"
    assert wire("EVAL", "return 1") == b"-ERR wrong number of arguments for 'eval' command\r\n"
    assert wire("EVALSHA", "x" * 40, "2", "a") == (
        b"-ERR Number of keys can't be greater than number of args\r\n")
    # numkeys is checked before the script compiles
    assert wire("EVAL", "syntax error", "-1") == b"-ERR Number of keys can't be negative\r\n"


def test_compile_errors(wire):
    expected = (b"-ERR Error compiling script (new function): user_script:1: '=' expected "
                b"near 'error'\r\n")
    assert wire("EVAL", "syntax error here", "0") == expected
    assert wire("SCRIPT", "LOAD", "syntax error") == expected


def test_script_cache(wire):
    body = "return 'hello'"
    digest = sha(body).encode()
    assert wire("SCRIPT", "FLUSH") == b"+OK\r\n"
    assert wire("EVALSHA", digest, "0") == b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
    assert wire("EVALSHA", "fff", "0") == b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
    assert wire("SCRIPT", "LOAD", body) == b"$40\r\n" + digest + b"\r\n"
    assert wire("EVALSHA", digest, "0") == b"$5\r\nhello\r\n"
    assert wire("EVALSHA", digest.upper(), "0") == b"$5\r\nhello\r\n"
    assert wire("EVALSHA_RO", digest, "0") == b"$5\r\nhello\r\n"
    assert wire("SCRIPT", "EXISTS", digest, digest.upper(), "abc") == b"*3\r\n:1\r\n:1\r\n:0\r\n"
    assert wire("SCRIPT", "FLUSH", "ASYNC") == b"+OK\r\n"
    assert wire("SCRIPT", "EXISTS", digest) == b"*1\r\n:0\r\n"
    assert wire("EVAL", body, "0") == b"$5\r\nhello\r\n"  # EVAL caches what it runs
    assert wire("SCRIPT", "EXISTS", digest) == b"*1\r\n:1\r\n"
    assert wire("SCRIPT", "FLUSH", "SYNC") == b"+OK\r\n"
    assert wire("SCRIPT", "EXISTS", digest) == b"*1\r\n:0\r\n"


def test_script_subcommand_errors(wire):
    bad_flush = b"-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n"
    assert wire("SCRIPT", "FLUSH", "bad") == bad_flush
    assert wire("SCRIPT", "FLUSH", "SYNC", "x") == bad_flush
    assert wire("SCRIPT", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"
    assert wire("SCRIPT") == b"-ERR wrong number of arguments for 'script' command\r\n"
    assert wire("SCRIPT", "NOPE") == b"-ERR unknown subcommand 'NOPE'. Try SCRIPT HELP.\r\n"
    assert wire("SCRIPT", "EXISTS") == (
        b"-ERR wrong number of arguments for 'script|exists' command\r\n")


def test_script_help(wire):
    assert wire("SCRIPT", "HELP") == help_reply(
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
        "    Prints this help.")


def test_read_only_scripts_refuse_writes(wire):
    body = "return redis.call('set','k','v')"
    assert wire("EVAL_RO", body, "1", "k") == (
        b"-ERR Write commands are not allowed from read-only scripts." + where(body).encode()
        + b"\r\n")
    assert wire("EVAL_RO", "return redis.pcall('set','k','v')", "1", "k") == (
        b"-ERR Write commands are not allowed from read-only scripts.\r\n")
    assert wire("EVAL_RO", "return redis.pcall('publish','ch','m')", "0") == (
        b"-ERR Write commands are not allowed from read-only scripts.\r\n")
    assert wire("EXISTS", "k") == b":0\r\n"
    assert wire("SET", "k", "v") == b"+OK\r\n"
    assert wire("EVAL_RO", "return redis.call('get','k')", "1", "k") == b"$1\r\nv\r\n"


def test_a_scripts_select_is_its_own(wire):
    assert wire("EVAL", "redis.call('select', 5) return redis.call('set','db5key','1')",
                "0") == b"+OK\r\n"
    assert wire("EXISTS", "db5key") == b":0\r\n"
    assert wire("SELECT", "5") == b"+OK\r\n"
    assert wire("EXISTS", "db5key") == b":1\r\n"
    assert wire("FLUSHDB") == b"+OK\r\n"


def test_sandbox_globals(wire):
    for name in ("call", "pcall", "log", "sha1hex", "setresp", "set_repl", "status_reply",
                 "error_reply", "breakpoint", "debug", "acl_check_cmd", "replicate_commands"):
        assert wire("EVAL", f"return redis.{name} ~= nil", "0") == b":1\r\n", name
    for name in ("loadstring", "load", "unpack", "gcinfo", "coroutine", "collectgarbage",
                 "cjson", "bit", "__redis__err__handler"):
        assert wire("EVAL", f"return {name} ~= nil", "0") == b":1\r\n", name
    assert wire("EVAL", "return type(redis.REDIS_VERSION)", "0") == b"$6\r\nstring\r\n"
    # Code compiled by a script runs in the same sandbox.
    body = "return loadstring('return os')()"
    reply = wire("EVAL", body, "0")
    assert b"Script attempted to access nonexistent global variable 'os'" in reply


def test_precompiled_chunks_are_read_as_source_text(wire):
    # Bytecode is never loaded (the VM does not verify it): a dumped function is a string
    # the parser rejects, through loadstring and load alike.
    dumped = "string.dump(function() return 1 end)"
    assert wire("EVAL", f"return tostring(loadstring({dumped}))", "0") == b"$3\r\nnil\r\n"
    assert wire("EVAL", "local f, e = loadstring('\\27Lua') return e", "0") == (
        b"$52\r\n[string \"\x1bLua\"]:1: unexpected symbol near 'char(27)'\r\n")
    body = ("local n = 0 local f, e = load(function() n = n + 1 if n == 1 then return "
            f"{dumped} end end) return {{tostring(f), e}}")
    assert wire("EVAL", body, "0") == (
        b"*2\r\n$3\r\nnil\r\n$43\r\n(load):1: unexpected symbol near 'char(27)'\r\n")
    body = "local n = 0 return load(function() n = n + 1 if n == 1 then return 'return 7' end end)()"
    assert wire("EVAL", body, "0") == b":7\r\n"


def test_library_functions_have_no_reachable_attributes(wire):
    # In Redis they are C functions, which cannot be indexed; here some are Python
    # functions, whose attributes (__globals__ ...) would lead out of the sandbox.
    for fn in ("redis.call", "redis.pcall", "redis.sha1hex", "redis.log", "redis.setresp",
               "bit.band", "cjson.encode"):
        for attr in ("__globals__", "__class__", "x"):
            body = f"local ok = pcall(function() return {fn}.{attr} end) return ok"
            assert wire("EVAL", body, "0") == b"$-1\r\n", (fn, attr)
            body = f"local ok = pcall(function() {fn}.{attr} = 1 end) return ok"
            assert wire("EVAL", body, "0") == b"$-1\r\n", (fn, attr)


def test_returned_tables_are_read_raw(wire):
    # Redis reads a script's reply table without its metamethods.
    assert wire("EVAL", "return setmetatable({}, {__index = function() error('boom') end})",
                "0") == b"*0\r\n"
    assert wire("EVAL", "return {setmetatable({}, {__index = function() return 1 end})}",
                "0") == b"*1\r\n*0\r\n"
    assert wire("EVAL", "return setmetatable({}, {__index = function(t, k) "
                        "if k == 'ok' then return 'fine' end end})", "0") == b"*0\r\n"
    assert wire("EVAL", "return setmetatable({7, ok='x'}, {__index = function() return 1 end})",
                "0") == b"+x\r\n"


def test_cjson_nesting_limits(wire):
    deep = "local t = {} local c = t for i = 1, %d do c[1] = {} c = c[1] end "
    assert wire("EVAL", deep % 999 + "return #cjson.encode(t)", "0") == b":2000\r\n"
    for body in (deep % 1001 + "local ok, e = pcall(cjson.encode, t) return e",
                 "local t = {} t[1] = t local ok, e = pcall(cjson.encode, t) return e"):
        assert wire("EVAL", body, "0") == (
            b"$42\r\nCannot serialise, excessive nesting (1001)\r\n")
    nested = "string.rep('[', 1000) .. string.rep(']', 1000)"
    assert wire("EVAL", f"return #cjson.encode(cjson.decode({nested}))", "0") == b":2000\r\n"
    body = "local ok, e = pcall(cjson.decode, string.rep('[', 100000)) return e"
    assert wire("EVAL", body, "0") == (
        b"$62\r\nFound too many nested data structures (1001) at character 1001\r\n")


def test_resp3_conversions(wire):
    w = wire.resp3
    assert w("HSET", "h", "a", "1") == b":1\r\n"
    assert w("EVAL", "redis.setresp(3) return redis.call('hgetall','h')", "0") == (
        b"%1\r\n$1\r\na\r\n$1\r\n1\r\n")
    assert wire("EVAL", "redis.setresp(3) return redis.call('hgetall','h')", "0") == (
        b"*2\r\n$1\r\na\r\n$1\r\n1\r\n")
    assert w("EVAL", "return redis.call('hgetall','h')", "0") == b"*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert w("EVAL", "redis.setresp(3) local t = redis.call('hgetall','h') return type(t.map)",
             "0") == b"$5\r\ntable\r\n"
    assert w("EVAL", "return {double=3.5}", "0") == b",3.5\r\n"
    assert w("EVAL", "return {map={a=1}}", "0") == b"%1\r\n$1\r\na\r\n:1\r\n"
    assert w("EVAL", "return {set={a=true}}", "0") == b"~1\r\n$1\r\na\r\n"
    assert w("EVAL", "return {big_number='123'}", "0") == b"(123\r\n"
    assert w("EVAL", "return false", "0") == b"_\r\n"
    assert w("EVAL", "return nil", "0") == b"_\r\n"
    assert w("EVAL", "redis.setresp(3) return redis.call('get','nokey')", "0") == b"_\r\n"
    assert w("EVAL", "redis.setresp(3) return type(redis.call('get','nokey'))", "0") == (
        b"$3\r\nnil\r\n")
    assert w("EVAL", "redis.setresp(3) return type(redis.call('incrbyfloat','fl','1.5'))",
             "0") == b"$6\r\nstring\r\n"


@pytest.mark.min_redis("7.4")
def test_xread_block_in_a_script_does_not_block(wire):
    # Redis 7.0 refused BLOCK in scripts; since 7.4 (redis#12596) it runs non-blocking,
    # as in a transaction.
    assert wire("EVAL", "return redis.call('xread','block','0','streams','s','$')", "0") == (
        b"$-1\r\n")
    assert wire("XADD", "s", "1-1", "f", "v") == b"$3\r\n1-1\r\n"
    assert wire("EVAL", "return redis.call('xread','block','0','streams','s','0')", "0") == (
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")


def test_script_writes_count_as_the_same_commands(r, make_client):
    before = dirty(r)
    r.eval("redis.call('set','a','1') redis.call('xadd','s','*','f','v') return 1", 0)
    assert dirty(r) - before == 2
    assert watch_broken(make_client, "a", lambda: r.eval("return redis.call('set','a','2')", 0))
    assert not watch_broken(make_client, "a", lambda: r.eval("return redis.call('get','a')", 0))


def test_script_writes_notify_the_keyspace(r, make_client):
    r.config_set("notify-keyspace-events", "KEA")
    try:
        sub = make_client().pubsub()
        sub.psubscribe("__keyevent@0__:*")
        assert sub.get_message(timeout=2)["type"] == "psubscribe"
        r.eval("redis.call('set','a','1') redis.call('xadd','s','*','f','v')", 0)
        got = [sub.get_message(timeout=2) for _ in range(2)]
        assert [(m["channel"], m["data"]) for m in got] == [
            (b"__keyevent@0__:set", b"a"), (b"__keyevent@0__:xadd", b"s")]
        sub.close()
    finally:
        r.config_set("notify-keyspace-events", "")


def test_blocked_reader_is_served_after_the_script(r, make_client):
    reader = make_client()
    import threading
    out = {}
    t = threading.Thread(target=lambda: out.setdefault(
        "r", reader.xread({"s": "$"}, block=5000)))
    t.start()
    from tests.conftest import wait_for
    assert wait_for(lambda: r.info("clients")["blocked_clients"] == 1)
    r.eval("redis.call('xadd','s','1-1','f','v') return 1", 0)
    t.join(5)
    assert out["r"] == [[b"s", [(b"1-1", {b"f": b"v"})]]]


_LINE = re.compile(rb"\+\d+\.\d+ \[(\d+) ([^\]]+)\] (.*)")


def test_monitor_shows_the_script_then_its_commands(r, raw):
    c = raw()
    m = _monitoring(raw)
    body = "redis.call('set','a','1'); redis.call('select','3'); return redis.call('get','a')"
    c.send(encode_request("EVAL", body, "0"))
    assert c.read_reply() == b"$-1\r\n"
    c.send(encode_request("ECHO", "end"))
    c.read_reply()
    data = m.read_until(lambda b: b'"ECHO" "end"\r\n' in b)
    lines = [_LINE.match(line).groups() for line in data.split(b"\r\n")[:-1]]
    shown = [(db, who == b"lua", args) for db, who, args in lines]
    assert shown == [
        (b"0", False, b'"EVAL" "' + body.encode().replace(b"'", b"'") + b'" "0"'),
        (b"0", True, b'"set" "a" "1"'), (b"3", True, b'"select" "3"'),
        (b"3", True, b'"get" "a"'), (b"0", False, b'"ECHO" "end"')]


def test_slowlog_logs_a_scripts_commands_as_the_lua_client(r, call):
    call("PING")
    r.config_set("slowlog-log-slower-than", 0)
    try:
        call("SLOWLOG", "RESET")
        call("EVAL", "redis.call('set','a','1') return redis.call('get','a')", "0")
        entries = list(reversed(call("SLOWLOG", "GET", "-1")))
        assert [(e[3], e[4], e[5]) for e in entries[1:]] == [
            ([b"set", b"a", b"1"], b"?:0", b""), ([b"get", b"a"], b"?:0", b""),
            ([b"EVAL", b"redis.call('set','a','1') return redis.call('get','a')", b"0"],
             entries[3][4], b"")]
        assert entries[3][4] != b"?:0"
    finally:
        r.config_set("slowlog-log-slower-than", 10000)
        call("SLOWLOG", "RESET")


@pytest.mark.parametrize("body, incr_failed", [
    ("return redis.call('incr','k')", 1),   # the command's error, raised
    ("return redis.pcall('incr','k')", 1),  # its error table, returned
    ("error('mine')", 0),                   # the script's own errors
    ("return redis.error_reply('mine')", 0),
])
def test_error_statistics_count_a_scripts_error_once(r, body, incr_failed):
    r.set("k", "v")
    r.config_resetstat()
    with pytest.raises(redis.ResponseError):
        r.eval(body, 1, "k")
    calls = r.info("commandstats")
    assert (r.info("stats")["total_error_replies"],
            r.info("errorstats")["errorstat_ERR"]["count"],
            calls.get("cmdstat_incr", {}).get("failed_calls", 0),
            calls["cmdstat_eval"]["failed_calls"]) == (1, 1, incr_failed, 1)


def test_command_info_and_getkeys(call):
    info = call("COMMAND", "INFO", "eval", "eval_ro", "evalsha", "evalsha_ro")
    assert [(i[0], i[1], sorted(i[2]), i[3:6], sorted(i[6])) for i in info] == [
        (b"eval", -3, sorted([b"noscript", b"stale", b"skip_monitor", b"no_mandatory_keys",
                              b"movablekeys"]), [0, 0, 0], [b"@scripting", b"@slow"]),
        (b"eval_ro", -3, sorted([b"readonly", b"noscript", b"stale", b"skip_monitor",
                                 b"no_mandatory_keys", b"movablekeys"]), [0, 0, 0],
         [b"@scripting", b"@slow"]),
        (b"evalsha", -3, sorted([b"noscript", b"stale", b"skip_monitor", b"no_mandatory_keys",
                                 b"movablekeys"]), [0, 0, 0], [b"@scripting", b"@slow"]),
        (b"evalsha_ro", -3, sorted([b"readonly", b"noscript", b"stale", b"skip_monitor",
                                    b"no_mandatory_keys", b"movablekeys"]), [0, 0, 0],
         [b"@scripting", b"@slow"])]
    spec = info[0][8][0]
    spec = dict(zip(spec[::2], spec[1::2]))
    assert spec[b"flags"] == [b"RW", b"access", b"update"]
    assert spec[b"begin_search"] == [b"type", b"index", b"spec", [b"index", 2]]
    assert spec[b"find_keys"] == [b"type", b"keynum", b"spec",
                                  [b"keynumidx", 0, b"firstkey", 1, b"keystep", 1]]
    assert call("COMMAND", "GETKEYS", "EVAL", "return 1", "2", "a", "b", "c") == [b"a", b"b"]
    assert call("COMMAND", "GETKEYSANDFLAGS", "EVAL_RO", "return 1", "1", "a", "c") == [
        [b"a", [b"RO", b"access"]]]


@pytest.mark.streamd_only
def test_without_lupa_the_commands_answer_an_error(monkeypatch):
    from streamd.commands import scripting as cmds
    from streamd.commands.errors import CommandError
    from streamd.scripting import engine

    monkeypatch.setattr(engine, "_lupa", None)
    monkeypatch.setattr(engine, "_import_error", "ModuleNotFoundError: No module named 'lupa'")
    ctx = types.SimpleNamespace(server=types.SimpleNamespace(scripts=None, monitors=[]))
    for handler, argv in ((cmds.eval_, [b"EVAL", b"return 1", b"0"]),
                          (cmds.evalsha, [b"EVALSHA", b"a" * 40, b"0"]),
                          (cmds.script_load, [b"SCRIPT", b"LOAD", b"return 1"])):
        with pytest.raises(CommandError) as err:
            handler(ctx, argv)
        assert err.value.text.startswith("ERR Lua scripting is not available"), handler
    assert cmds.script_exists(ctx, [b"SCRIPT", b"EXISTS", b"a" * 40]) == [0]


def test_redis_py_lock_and_registered_scripts(r):
    lock = r.lock("resource", timeout=10)
    assert lock.acquire(blocking=False)
    assert not r.lock("resource", timeout=10).acquire(blocking=False)
    assert lock.extend(5)
    lock.release()
    assert r.get("resource") is None
    add_and_mark = r.register_script(
        "local id = redis.call('XADD', KEYS[1], '*', 'f', ARGV[1]) "
        "redis.call('SET', KEYS[2], id) return id")
    r.script_flush()
    entry_id = add_and_mark(keys=["s", "checkpoint"], args=["v"])  # NOSCRIPT, then EVAL
    assert r.get("checkpoint") == entry_id
    assert r.xrange("s") == [(entry_id, {b"f": b"v"})]


def test_eval_inside_a_transaction(wire):
    assert wire("MULTI") == b"+OK\r\n"
    assert wire("EVAL", "return redis.call('set','k','v')", "1", "k") == b"+QUEUED\r\n"
    assert wire("EVAL", "return redis.call('get','k')", "1", "k") == b"+QUEUED\r\n"
    assert wire("EXEC") == b"*2\r\n+OK\r\n$1\r\nv\r\n"


def test_code_compiled_by_loadstring_is_named_by_its_source(wire):
    # Redis names the innermost Lua frame of the script's code, the compiled chunk here.
    for body in ("return loadstring('return os')()",
                 "local f = loadstring('return os') local x = f() return x"):
        assert wire("EVAL", body, "0") == (
            b"-ERR [string \"return os\"]:1: Script attempted to access nonexistent global "
            b"variable 'os' script: " + sha(body).encode() + b", on return os:1.\r\n")


def test_a_refused_script_command_counts_as_one_rejected_error(r):
    # Recorded from 7.0.15: the refusal is counted once (an unknown command has no
    # command statistics to count it in); EVAL's reply with it does not count again.
    for body, ro, refused in (("return redis.call('nosuch')", False, None),
                              ("return redis.pcall('multi')", False, "multi"),
                              ("return redis.call('get')", False, "get"),
                              ("return redis.pcall('set', 'a', 'b')", True, "set")):
        r.config_resetstat()
        with pytest.raises(redis.ResponseError):
            r.execute_command("EVAL_RO" if ro else "EVAL", body, 0)
        assert r.info("errorstats") == {"errorstat_ERR": {"count": 1}}
        assert r.info("stats")["total_error_replies"] == 1
        stats = r.info("commandstats")
        assert stats["cmdstat_eval_ro" if ro else "cmdstat_eval"]["failed_calls"] == 1
        if refused:
            assert stats[f"cmdstat_{refused}"]["rejected_calls"] == 1


def test_info_memory_counts_the_script_cache_as_redis_does(r):
    def memory():
        return r.info("memory")

    r.script_flush()
    m = memory()
    assert (m["number_of_cached_scripts"], m["used_memory_scripts_eval"]) == (0, 0)
    for body in ("return 1", "return '%s'" % ("x" * 100), "return '%s'" % ("x" * 1000)):
        r.script_load(body)
    r.eval("return 1", 0)  # cached already: no change
    m = memory()
    # Recorded from Redis 7.0.15: each script's SHA and body in jemalloc's sizes, its
    # dict entry, and the dict's four buckets.
    assert (m["number_of_cached_scripts"], m["used_memory_scripts_eval"]) == (3, 1464)
    assert m["used_memory_scripts"] == m["used_memory_scripts_eval"] + m["used_memory_functions"]
    # The Lua state's own count, in whole kilobytes as Redis reads it.
    assert m["used_memory_lua"] == m["used_memory_vm_eval"] > 0
    assert m["used_memory_lua"] % 1024 == 0
    assert m["used_memory_vm_total"] == m["used_memory_vm_eval"] + m["used_memory_vm_functions"]
    r.script_flush()
    m = memory()
    assert (m["number_of_cached_scripts"], m["used_memory_scripts_eval"]) == (0, 0)
