"""The parts of Redis's bundled Lua libraries lupa's Lua 5.1 lacks, in Python: ``bit``
(LuaBitOp's functions on 32-bit integers) and the core of ``cjson`` (encode, decode,
null). They follow those libraries' documented rules; error texts are close to theirs,
not guaranteed identical."""

from __future__ import annotations

import json
import sys

_MASK = 0xFFFFFFFF


def _u32(x) -> int:
    """A number as LuaBitOp takes it: rounded to an integer, modulo 2^32."""
    if type(x) is not int:
        x = round(float(x))
    return x & _MASK


def _s32(x: int) -> int:
    x &= _MASK
    return x - (1 << 32) if x & 0x80000000 else x


def _tobit(x):
    return _s32(_u32(x))


def _bnot(x):
    return _s32(~_u32(x))


def _band(x, *more):
    v = _u32(x)
    for m in more:
        v &= _u32(m)
    return _s32(v)


def _bor(x, *more):
    v = _u32(x)
    for m in more:
        v |= _u32(m)
    return _s32(v)


def _bxor(x, *more):
    v = _u32(x)
    for m in more:
        v ^= _u32(m)
    return _s32(v)


def _lshift(x, n):
    return _s32(_u32(x) << (_u32(n) & 31))


def _rshift(x, n):
    return _s32(_u32(x) >> (_u32(n) & 31))


def _arshift(x, n):
    return _s32(_s32(_u32(x)) >> (_u32(n) & 31))


def _rol(x, n):
    v, n = _u32(x), _u32(n) & 31
    return _s32((v << n) | (v >> (32 - n)))


def _ror(x, n):
    v, n = _u32(x), _u32(n) & 31
    return _s32((v >> n) | (v << (32 - n)))


def _bswap(x):
    return _s32(int.from_bytes(_u32(x).to_bytes(4, "little"), "big"))


def _tohex(x, n=8):
    n = _tobit(n)
    upper = n < 0
    n = min(abs(n), 8)
    text = "%0*x" % (n, _u32(x) & ((1 << (4 * n)) - 1)) if n else ""
    return (text.upper() if upper else text).encode()


BIT = {"tobit": _tobit, "bnot": _bnot, "band": _band, "bor": _bor, "bxor": _bxor,
       "lshift": _lshift, "rshift": _rshift, "arshift": _arshift, "rol": _rol,
       "ror": _ror, "bswap": _bswap, "tohex": _tohex}


class JsonError(Exception):
    pass


_ESCAPES = {i: b"\\u%04x" % i for i in range(32)}
_ESCAPES.update({8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r",
                 34: b'\\"', 92: b"\\\\", 47: b"\\/", 127: b"\\u007f"})


def _string(s: bytes) -> bytes:
    out = bytearray(b'"')
    for c in s:
        esc = _ESCAPES.get(c)
        if esc is None:
            out.append(c)
        else:
            out += esc
    out += b'"'
    return bytes(out)


def _number(v) -> bytes:
    if type(v) is float and (v != v or v in (float("inf"), float("-inf"))):
        raise JsonError("Cannot serialise number: must not be NaN or Inf")
    return b"%.14g" % v


def json_encode(value, lua_type) -> bytes:
    """cjson.encode: a table of positive integer keys is an array (holes are null), any
    other table an object; an empty table is ``{}``. Tables are read raw (no
    metamethods), as cjson reads them."""
    return _deep(_json_encode, value, lua_type, 0)


def _json_encode(value, lua_type, depth: int) -> bytes:
    t = type(value)
    if value is None:
        return b"null"
    if t is bool:
        return b"true" if value else b"false"
    if t is int or t is float:
        return _number(value)
    if t is bytes:
        return _string(value)
    kind = lua_type(value)
    if kind == "userdata":
        return b"null"  # cjson.null
    if kind != "table":
        raise JsonError(f"Cannot serialise {kind}: type not supported")
    if depth >= _MAX_NESTING:
        raise JsonError(f"Cannot serialise, excessive nesting ({depth + 1})")
    items = list(value.items())
    if items and all(type(k) in (int, float) and k >= 1 and k == int(k) for k, _ in items):
        top = int(max(k for k, _ in items))
        if top > 10 and top > 2 * len(items):
            raise JsonError("Cannot serialise table: excessively sparse array")
        byidx = {int(k): v for k, v in items}
        return b"[" + b",".join(_json_encode(byidx.get(i), lua_type, depth + 1)
                                for i in range(1, top + 1)) + b"]"
    parts = []
    for k, v in items:
        if type(k) is bytes:
            key = k
        elif type(k) in (int, float):
            key = _number(k)
        else:
            raise JsonError("Cannot serialise table: table key must be a number or string")
        parts.append(_string(key) + b":" + _json_encode(v, lua_type, depth + 1))
    return b"{" + b",".join(parts) + b"}"


_MAX_NESTING = 1000  # cjson's default encode and decode depth


def _deep(fn, *args):
    """``fn(*args)`` with room for cjson's full nesting depth (two Python frames a level);
    what goes deeper than that is cut off by the depth checks, not by Python."""
    limit = sys.getrecursionlimit()
    if limit < 4 * _MAX_NESTING:
        sys.setrecursionlimit(4 * _MAX_NESTING)
    try:
        return fn(*args)
    finally:
        sys.setrecursionlimit(limit)


def _too_deep(text: str) -> int:
    """The 1-based position of the bracket that opens level 1001, outside strings; 0 if
    the nesting stays within cjson's limit."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > _MAX_NESTING:
                return i + 1
        elif ch in "]}":
            depth -= 1
    return 0


def json_decode(data, lua, null):
    """cjson.decode: objects and arrays become tables, JSON null ``null`` (cjson.null)."""
    if type(data) is not bytes:
        data = str(data).encode()
    text = data.decode("utf-8", "surrogateescape")
    if text.count("[") + text.count("{") > _MAX_NESTING:
        at = _too_deep(text)
        if at:
            raise JsonError(f"Found too many nested data structures ({_MAX_NESTING + 1}) "
                            f"at character {at}")
    return _deep(_json_decode, text, lua, null)


def _json_decode(text, lua, null):
    try:
        parsed = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        pos = getattr(exc, "pos", 0)
        raise JsonError(f"Expected value but found invalid token at character {pos + 1}") from None
    return _to_lua(parsed, lua, null)


def _to_lua(v, lua, null):
    if v is None:
        return null
    if type(v) is str:
        return v.encode("utf-8", "surrogateescape")
    if type(v) is int:
        return v if -(1 << 53) <= v <= (1 << 53) else float(v)
    if type(v) is list:
        t = lua.table()
        for i, x in enumerate(v, 1):
            t[i] = _to_lua(x, lua, null)
        return t
    if type(v) is dict:
        t = lua.table()
        for k, x in v.items():
            t[k.encode("utf-8", "surrogateescape")] = _to_lua(x, lua, null)
        return t
    return v
