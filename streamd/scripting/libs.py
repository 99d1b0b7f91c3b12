"""The parts of Redis's bundled Lua libraries lupa's Lua 5.1 lacks, in Python: ``bit``
(LuaBitOp's functions on 32-bit integers) and the core of ``cjson`` (encode, decode,
null). They follow those libraries' documented rules; error texts are close to theirs,
not guaranteed identical."""

from __future__ import annotations

import re
import struct
import sys


class LuaError(Exception):
    """A library function's Lua error (a string message, as ``luaL_error`` raises it):
    the bridge prepends where the function was called from."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


class ArgError(LuaError):
    """``luaL_argerror``'s "bad argument #index to 'name' (why)": the bridge fills in the
    name and, with ``got``, the type of the argument (", got <type>")."""

    def __init__(self, index: int, why: str, got: bool = True):
        super().__init__(why)
        self.index = index
        self.got = got


_C_SPACE = b" \t\n\v\f\r"
_HEX = re.compile(rb"[+-]?0[xX][0-9a-fA-F]+")
_DECIMAL = re.compile(rb"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)",
                      re.IGNORECASE)


def lua_tonumber(v):
    """``lua_tonumber``: a number, or a string Lua 5.1 reads as one (strtod's decimal,
    hexadecimal, inf and nan forms, blanks around it, the text up to a NUL byte); None
    for anything else."""
    t = type(v)
    if t is int or t is float:
        return v
    if t is not bytes:
        return None
    text = v.split(b"\0", 1)[0].strip(_C_SPACE)
    if _HEX.fullmatch(text):
        return int(text, 16)
    if _DECIMAL.fullmatch(text):
        return float(text)
    return None


def _bits(args, i: int) -> int:
    """LuaBitOp's argument ``i`` (1-based): a number taken modulo 2^32 the way its C code
    does, through the low word of the double plus 2^52 + 2^51 (rounding to even, and
    what it gives for huge values)."""
    if i > len(args):
        raise ArgError(i, "number expected")
    n = lua_tonumber(args[i - 1])
    if n is None:
        raise ArgError(i, "number expected")
    return struct.unpack("<Q", struct.pack("<d", float(n) + 6755399441055744.0))[0] & _MASK


_MASK = 0xFFFFFFFF


def _s32(x: int) -> int:
    x &= _MASK
    return x - (1 << 32) if x & 0x80000000 else x


def _tobit(*args):
    return _s32(_bits(args, 1))


def _bnot(*args):
    return _s32(~_bits(args, 1))


def _fold(op):
    def fold(*args):
        v = _bits(args, 1)
        for i in range(2, len(args) + 1):
            v = op(v, _bits(args, i))
        return _s32(v)
    return fold


def _shift(op):
    def shift(*args):
        v = _bits(args, 1)
        return _s32(op(v, _bits(args, 2) & 31))
    return shift


def _bswap(*args):
    return _s32(int.from_bytes(_bits(args, 1).to_bytes(4, "little"), "big"))


def _tohex(*args):
    x = _bits(args, 1)
    n = 8 if len(args) < 2 else _s32(_bits(args, 2))
    upper = n < 0
    n = min(abs(n), 8)
    text = "%0*x" % (n, x & ((1 << (4 * n)) - 1)) if n else ""
    return (text.upper() if upper else text).encode()


BIT = {"tobit": _tobit, "bnot": _bnot,
       "band": _fold(lambda a, b: a & b), "bor": _fold(lambda a, b: a | b),
       "bxor": _fold(lambda a, b: a ^ b),
       "lshift": _shift(lambda v, n: v << n), "rshift": _shift(lambda v, n: v >> n),
       "arshift": _shift(lambda v, n: _s32(v) >> n),
       "rol": _shift(lambda v, n: (v << n) | (v >> (32 - n))),
       "ror": _shift(lambda v, n: (v >> n) | (v << (32 - n))),
       "bswap": _bswap, "tohex": _tohex}



class JsonError(LuaError):
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
            raise JsonError(f"Cannot serialise {_type_name(k, lua_type)}: "
                            "table key must be a number or string")
        parts.append(_string(key) + b":" + _json_encode(v, lua_type, depth + 1))
    return b"{" + b",".join(parts) + b"}"


_MAX_NESTING = 1000  # cjson's default encode and decode depth


def _type_name(v, lua_type) -> str:
    if type(v) is bool:
        return "boolean"
    return lua_type(v) or "nil"


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


# cjson's decoder, token by token, for its error texts: "Expected <what> but found <token
# or what is wrong with it> at character <1-based byte offset>". A NUL byte ends the
# input; numbers are whatever strtod reads (cjson decodes the invalid JSON numbers
# too: hex, inf, nan, a leading + or zeros).
_SINGLE = {0x7B: "T_OBJ_BEGIN", 0x7D: "T_OBJ_END", 0x5B: "T_ARR_BEGIN", 0x5D: "T_ARR_END",
           0x3A: "T_COLON", 0x2C: "T_COMMA"}
_JSON_SPACE = b" \t\n\r"
_ESCAPE = {ord('"'): b'"', ord("\\"): b"\\", ord("/"): b"/", ord("b"): b"\b",
           ord("f"): b"\f", ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t"}
_STRTOD = re.compile(
    rb"[+-]?(?:(0[xX])(?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    rb"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(?i:infinity|inf|nan(?:\([0-9A-Za-z_]*\))?))")
_HEX4 = re.compile(rb"[0-9a-fA-F]{4}")


class _Token:
    __slots__ = ("kind", "value", "index")

    def __init__(self, kind, value=None, index=0):
        self.kind, self.value, self.index = kind, value, index


class _JsonReader:
    def __init__(self, data: bytes, lua, null):
        self.data, self.pos, self.depth = data, 0, 0
        self.lua, self.null = lua, null

    def fail(self, expected: str, token: _Token):
        found = token.value if token.kind == "T_ERROR" else token.kind
        raise JsonError(f"Expected {expected} but found {found} at character {token.index + 1}")

    def token(self) -> _Token:
        data, pos = self.data, self.pos
        while pos < len(data) and data[pos] in _JSON_SPACE:
            pos += 1
        self.pos = pos
        if pos >= len(data) or data[pos] == 0:
            return _Token("T_END", None, pos)
        ch = data[pos]
        kind = _SINGLE.get(ch)
        if kind is not None:
            self.pos = pos + 1
            return _Token(kind, None, pos)
        if ch == 0x22:
            return self.string()
        rest = data[pos:pos + 5]
        if ch == 0x2D or 0x30 <= ch <= 0x39:
            return self.number()
        if rest[:4] == b"true":
            self.pos = pos + 4
            return _Token("T_BOOLEAN", True, pos)
        if rest == b"false":
            self.pos = pos + 5
            return _Token("T_BOOLEAN", False, pos)
        if rest[:4] == b"null":
            self.pos = pos + 4
            return _Token("T_NULL", None, pos)
        if ch == 0x2B or rest[:3].lower() in (b"inf", b"nan"):
            return self.number()
        return _Token("T_ERROR", "invalid token", pos)

    def number(self) -> _Token:
        start = self.pos
        m = _STRTOD.match(self.data, start)
        if m is None:
            return _Token("T_ERROR", "invalid number", start)
        text = m.group()
        if m.group(1):
            value = float.fromhex(text.decode())
        else:
            low = text.lower().lstrip(b"+-")
            if low.startswith(b"nan"):
                value = float("nan")
            else:
                value = float(text[:len(text) - len(low)] + (b"inf" if low.startswith(b"inf")
                                                             else low))
        self.pos = m.end()
        return _Token("T_NUMBER", value, start)

    def string(self) -> _Token:
        data = self.data
        start = self.pos
        pos = start + 1
        out = bytearray()
        while True:
            if pos >= len(data) or data[pos] == 0:
                return _Token("T_ERROR", "unexpected end of string", pos)
            ch = data[pos]
            if ch == 0x22:
                break
            if ch == 0x5C:
                nxt = data[pos + 1] if pos + 1 < len(data) else 0
                if nxt == 0x75:  # u
                    code, length = self.unicode_escape(pos)
                    if code is None:
                        return _Token("T_ERROR", "invalid unicode escape code", pos)
                    out += chr(code).encode("utf-8", "surrogatepass")
                    pos += length
                    continue
                esc = _ESCAPE.get(nxt)
                if esc is None:
                    return _Token("T_ERROR", "invalid escape code", pos)
                out += esc
                pos += 2
                continue
            out.append(ch)
            pos += 1
        self.pos = pos + 1
        return _Token("T_STRING", bytes(out), start)

    def unicode_escape(self, pos: int):
        data = self.data
        if not _HEX4.fullmatch(data, pos + 2, pos + 6):
            return None, 0
        code = int(data[pos + 2:pos + 6], 16)
        if code & 0xF800 != 0xD800:
            return code, 6
        if code & 0x400 or data[pos + 6:pos + 8] != b"\\u" or \
                not _HEX4.fullmatch(data, pos + 8, pos + 12):
            return None, 0
        low = int(data[pos + 8:pos + 12], 16)
        if low & 0xFC00 != 0xDC00:
            return None, 0
        return (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000, 12

    def descend(self):
        self.depth += 1
        if self.depth > _MAX_NESTING:
            raise JsonError(f"Found too many nested data structures ({self.depth}) "
                            f"at character {self.pos}")

    def value(self, token: _Token):
        kind = token.kind
        if kind in ("T_STRING", "T_NUMBER", "T_BOOLEAN"):
            return token.value
        if kind == "T_NULL":
            return self.null
        if kind == "T_OBJ_BEGIN":
            return self.obj()
        if kind == "T_ARR_BEGIN":
            return self.array()
        self.fail("value", token)

    def obj(self):
        self.descend()
        t = self.lua.table()
        token = self.token()
        if token.kind != "T_OBJ_END":
            while True:
                if token.kind != "T_STRING":
                    self.fail("object key string", token)
                k = token.value
                token = self.token()
                if token.kind != "T_COLON":
                    self.fail("colon", token)
                t[k] = self.value(self.token())
                token = self.token()
                if token.kind == "T_OBJ_END":
                    break
                if token.kind != "T_COMMA":
                    self.fail("comma or object end", token)
                token = self.token()
        self.depth -= 1
        return t

    def array(self):
        self.descend()
        t = self.lua.table()
        token = self.token()
        i = 1
        if token.kind != "T_ARR_END":
            while True:
                t[i] = self.value(token)
                i += 1
                token = self.token()
                if token.kind == "T_ARR_END":
                    break
                if token.kind != "T_COMMA":
                    self.fail("comma or array end", token)
                token = self.token()
        self.depth -= 1
        return t


def json_decode(data: bytes, lua, null):
    """cjson.decode: objects and arrays become tables, JSON null ``null`` (cjson.null)."""
    if len(data) >= 2 and (not data[0] or not data[1]):
        raise JsonError("JSON parser does not support UTF-16 or UTF-32")
    return _deep(_json_decode, _JsonReader(data, lua, null))


def _json_decode(reader: _JsonReader):
    value = reader.value(reader.token())
    token = reader.token()
    if token.kind != "T_END":
        reader.fail("the end", token)
    return value
