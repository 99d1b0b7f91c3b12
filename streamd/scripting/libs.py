"""Redis's bundled Lua libraries that lupa's Lua 5.1 lacks, in Python: ``bit`` (LuaBitOp),
``cjson`` (lua-cjson 2.1.0 as Redis 7.0 embeds it), ``cmsgpack`` (lua-cmsgpack 0.4.0)
and ``struct`` (Roberto Ierusalimschy's struct library). They follow those libraries'
rules and error texts; the engine turns a ``LibError`` into the Lua error a C library
raises (``luaL_error``: the calling line first; ``luaL_argerror``: "bad argument #n to
'name' (...)").

Lua values arrive as lupa gives them: strings as bytes, numbers as int or float, nil as
None, tables and functions as lupa objects (``lua_type`` names them)."""

from __future__ import annotations

import math
import operator
import struct as _struct
import sys


class LibError(Exception):
    """A library function's error, as luaL_error raises it (the engine adds the caller's
    position)."""

    def __init__(self, text: str, positioned: bool = True):
        super().__init__(text)
        self.text = text
        self.positioned = positioned  # False: raised by the VM itself, no "where" prefix


class ArgError(LibError):
    """luaL_argerror: argument ``narg`` is wrong; the engine adds the function's name."""

    def __init__(self, narg: int, text: str):
        super().__init__(text)
        self.narg = narg


def type_name(v, lua_type) -> str:
    """lua_typename(lua_type(v)) for a value lupa handed over."""
    t = type(v)
    if v is None:
        return "nil"
    if t is bool:
        return "boolean"
    if t is int or t is float:
        return "number"
    if t is bytes:
        return "string"
    if t.__name__ in ("_LuaThread", "_LuaCoroutineFunction"):  # lupa's lua_type: 'function'
        return "thread"
    kind = lua_type(v)
    if kind is None:  # a Python callable (a library function) handed back as itself
        return "function" if callable(v) else "userdata"
    return kind


def num_text(v) -> bytes:
    """A number as lua_tolstring writes it (LUA_NUMBER_FMT, ``%.14g``, integers too:
    2^53 is 9.007199254741e+15; glibc writes a NaN's sign, and 0/0 has it)."""
    if v != v:
        return b"-nan" if math.copysign(1.0, v) < 0 else b"nan"
    return b"%.14g" % v


def check_number(args, i: int, lua_type):
    """luaL_checknumber on argument ``i`` (1-based)."""
    v = args[i - 1] if i <= len(args) else None
    t = type(v)
    if t is int or t is float:
        return v
    if t is bytes:
        n = str2number(v)
        if n is not None:
            return n
    got = type_name(v, lua_type) if i <= len(args) else "no value"
    raise ArgError(i, f"number expected, got {got}")


def check_integer(args, i: int, lua_type) -> int:
    """luaL_checkinteger: the number truncated toward zero (a C cast)."""
    return to_int64(check_number(args, i, lua_type))


def opt_integer(args, i: int, default: int, lua_type) -> int:
    if i > len(args) or args[i - 1] is None:
        return default
    return check_integer(args, i, lua_type)


def to_int64(v) -> int:
    """A C cast of a Lua number to a 64-bit integer: truncated; out of range, infinite or
    NaN gives the lowest 64-bit integer (what x86 gives)."""
    if type(v) is int:
        return v if -(1 << 63) <= v < (1 << 63) else -(1 << 63)
    if v != v or not -9.223372036854775808e18 <= v < 9.223372036854775808e18:
        return -(1 << 63)
    return int(v)


def check_string(args, i: int, lua_type) -> bytes:
    """luaL_checklstring: strings, and numbers as Lua writes them."""
    v = args[i - 1] if i <= len(args) else None
    t = type(v)
    if t is bytes:
        return v
    if t is int or t is float:
        return num_text(v)
    got = type_name(v, lua_type) if i <= len(args) else "no value"
    raise ArgError(i, f"string expected, got {got}")


_HEX = b"0123456789abcdefABCDEF"
_DIGITS = b"0123456789"


def strtod(s: bytes, pos: int):
    """glibc's strtod from ``pos``: (value, end); ``end == pos`` when no number starts
    there. Decimal and hexadecimal forms, ``inf``/``infinity`` and ``nan``/``nan(...)``
    in any case, with an optional sign."""
    n = len(s)
    i = pos
    neg = False
    if i < n and s[i] in b"+-":
        neg = s[i] == 45
        i += 1
    word = s[i:i + 8].lower()
    if word.startswith(b"inf"):
        end = i + (8 if word == b"infinity" else 3)
        return (-math.inf if neg else math.inf), end
    if word.startswith(b"nan"):
        end = i + 3
        if end < n and s[end] == 40:  # '(' n-char-sequence ')'
            j = end + 1
            while j < n and (chr(s[j]).isalnum() or s[j] == 95) and s[j] < 128:
                j += 1
            if j < n and s[j] == 41:
                end = j + 1
        return math.copysign(math.nan, -1.0 if neg else 1.0), end
    if s[i:i + 2].lower() == b"0x":
        j = i + 2
        k, digits = _mantissa(s, j, _HEX)
        if digits:
            mant = s[j:k].decode()
            e = _exponent(s, k, b"pP")
            exp = int(s[k + 1:e]) if e > k else 0
            try:
                v = float.fromhex("0x" + (mant if mant != "." else "0") + "p%d" % exp)
            except OverflowError:
                v = math.inf
            return (-v if neg else v), e
    j, digits = _mantissa(s, i, _DIGITS)
    if not digits:
        return 0.0, pos
    j = _exponent(s, j, b"eE")
    return float(s[pos:j]), j


def _mantissa(s: bytes, i: int, digits: bytes):
    """(end, whether it has a digit) of the digits at ``i``, a point and more digits."""
    n = len(s)
    k = i
    while k < n and s[k] in digits:
        k += 1
    found = k > i
    if k < n and s[k] == 46:
        m = k + 1
        while m < n and s[m] in digits:
            m += 1
        if m > k + 1 or found:
            found, k = True, m
    return k, found


def _exponent(s: bytes, k: int, letters: bytes) -> int:
    """The end of the exponent at ``k`` (a letter, a sign, digits); ``k`` if none is."""
    n = len(s)
    if k < n and s[k] in letters:
        m = k + 1
        if m < n and s[m] in b"+-":
            m += 1
        e = m
        while e < n and s[e] in _DIGITS:
            e += 1
        if e > m:
            return e
    return k


def str2number(s: bytes):
    """luaO_str2d: the number a string reads as, else None. The string is a C string (a
    NUL byte ends it); strtod reads it (hexadecimal with its sign too), and only spaces
    may follow."""
    nul = s.find(b"\0")
    if nul >= 0:
        s = s[:nul]
    i = 0
    n = len(s)
    while i < n and s[i] in b" \t\n\v\f\r":
        i += 1
    v, end = strtod(s, i)
    if end == i:
        return None
    while end < n and s[end] in b" \t\n\v\f\r":
        end += 1
    return v if end == n else None


# --- bit (LuaBitOp 1.0.2) ---------------------------------------------------------------

_MASK = 0xFFFFFFFF
_BIG = 1 << 51  # below this magnitude an integer's low word is the low word of the double


def _u32(x) -> int:
    """A number as LuaBitOp takes it modulo 2^32: its C code adds 2^52 + 2^51 to the
    double and keeps the low word, which rounds half to even, and for magnitudes past
    2^51 (and inf, nan) gives whatever that low word holds."""
    if type(x) is int and -_BIG < x < _BIG:
        return x & _MASK
    return _struct.unpack("<Q", _struct.pack("<d", float(x) + 6755399441055744.0))[0] & _MASK


def _s32(x: int) -> int:
    x &= _MASK
    return x - (1 << 32) if x & 0x80000000 else x


def make_bit(lua_type) -> dict:
    """The ``bit`` functions, checking their arguments as luaL_checknumber does."""

    def barg(args, i):
        return _u32(check_number(args, i, lua_type))

    def tobit(*a):
        return _s32(barg(a, 1))

    def bnot(*a):
        return _s32(~barg(a, 1))

    def fold(op):
        def f(*a):
            if len(a) == 2:  # the usual call: two integers below 2^51 (see _u32)
                x, y = a
                if type(x) is int and type(y) is int and -_BIG < x < _BIG and -_BIG < y < _BIG:
                    return _s32(op(x & _MASK, y & _MASK))
            v = barg(a, 1)
            for i in range(2, len(a) + 1):
                v = op(v, barg(a, i))
            return _s32(v)
        return f

    def shift(op):
        def f(*a):
            if len(a) == 2:
                x, y = a
                if type(x) is int and type(y) is int and -_BIG < x < _BIG and -_BIG < y < _BIG:
                    return _s32(op(x & _MASK, y & 31))
            v, n = barg(a, 1), barg(a, 2) & 31
            return _s32(op(v, n))
        return f

    def tohex(*a):
        v = barg(a, 1)
        n = 8 if len(a) < 2 else _s32(barg(a, 2))
        upper = n < 0
        n = min(abs(n), 8)
        text = "%0*x" % (n, v & ((1 << (4 * n)) - 1)) if n else ""
        return (text.upper() if upper else text).encode()

    return {
        "tobit": tobit, "bnot": bnot,
        "band": fold(operator.and_), "bor": fold(operator.or_), "bxor": fold(operator.xor),
        "lshift": shift(lambda v, n: v << n), "rshift": shift(lambda v, n: v >> n),
        "arshift": shift(lambda v, n: _s32(v) >> n),
        "rol": shift(lambda v, n: (v << n) | (v >> (32 - n))),
        "ror": shift(lambda v, n: (v >> n) | (v << (32 - n))),
        "bswap": lambda *a: _s32(int.from_bytes(barg(a, 1).to_bytes(4, "little"), "big")),
        "tohex": tohex,
    }


# --- cjson (lua-cjson 2.1.0) -----------------------------------------------------------

_ESCAPES = {i: b"\\u%04x" % i for i in range(32)}
_ESCAPES.update({8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r",
                 34: b'\\"', 92: b"\\\\", 47: b"\\/", 127: b"\\u007f"})
_NEEDS_ESCAPE = bytes(sorted(_ESCAPES))
_INT_MAX = 2147483647
_LUA_MAX_SLOTS = 8000  # LUAI_MAXCSTACK: the Lua stack a C function may use

# Token kinds, named as the library's errors name them.
_OBJ_BEGIN, _OBJ_END, _ARR_BEGIN, _ARR_END = "T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END"
_STRING, _NUMBER, _BOOLEAN, _NULL = "T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL"
_COLON, _COMMA, _END, _ERROR = "T_COLON", "T_COMMA", "T_END", "T_ERROR"
_SINGLE = {ord("{"): _OBJ_BEGIN, ord("}"): _OBJ_END, ord("["): _ARR_BEGIN,
           ord("]"): _ARR_END, ord(","): _COMMA, ord(":"): _COLON}
_UNKNOWN = frozenset(b'fiInNt"+-0123456789')
_SIMPLE_ESCAPES = {ord('"'): 34, ord("\\"): 92, ord("/"): 47, ord("b"): 8, ord("t"): 9,
                   ord("n"): 10, ord("f"): 12, ord("r"): 13}


def _quote(s: bytes) -> bytes:
    if not any(c in _NEEDS_ESCAPE for c in s):
        return b'"' + s + b'"'
    return b'"' + b"".join(_ESCAPES.get(c) or bytes((c,)) for c in s) + b'"'


class CJson:
    """One cjson module: its settings (each Lua state has its own, and ``cjson.new()``
    makes another) and its functions."""

    def __init__(self, lua_type, table_from, null):
        self._type, self._table, self.null = lua_type, table_from, null
        self.reset()

    def reset(self):
        """The library's default settings."""
        self.sparse_convert, self.sparse_ratio, self.sparse_safe = 0, 2, 10
        self.encode_depth = self.decode_depth = 1000
        self.encode_invalid = 0   # 0 off, 1 on, 2 null
        self.decode_invalid = 1
        self.keep_buffer = 1
        self.precision = 14

    def functions(self) -> dict:
        return {"encode": self.encode, "decode": self.decode,
                "encode_sparse_array": self.cfg_sparse_array,
                "encode_max_depth": self.cfg_encode_max_depth,
                "decode_max_depth": self.cfg_decode_max_depth,
                "encode_number_precision": self.cfg_precision,
                "encode_keep_buffer": self.cfg_keep_buffer,
                "encode_invalid_numbers": self.cfg_encode_invalid,
                "decode_invalid_numbers": self.cfg_decode_invalid}

    # --- settings ----------------------------------------------------------------------
    def _args(self, args, n):
        if len(args) > n:
            raise ArgError(n + 1, "found too many arguments")
        return list(args) + [None] * (n - len(args))

    def _integer(self, args, i, attr, low, high):
        if args[i - 1] is not None:
            v = check_integer(args, i, self._type)
            if not low <= v <= high:
                raise ArgError(1, f"expected integer between {low} and {high}")
            setattr(self, attr, v)
        return getattr(self, attr)

    def _enum(self, args, i, attr, options=None):
        """json_enum_option with a boolean for the first and second choices."""
        options = options or ("off", "on")
        v = args[i - 1]
        if v is not None:
            if type(v) is bool:
                setattr(self, attr, int(v))
            else:
                name = check_string(args, i, self._type)
                try:
                    setattr(self, attr, options.index(name.decode("latin-1")))
                except ValueError:
                    raise ArgError(i, "invalid option '%s'" % name.decode("latin-1")) from None
        cur = getattr(self, attr)
        return bool(cur) if cur in (0, 1) else options[cur].encode()

    def cfg_sparse_array(self, *args):
        args = self._args(args, 3)
        return (self._enum(args, 1, "sparse_convert"),
                self._integer(args, 2, "sparse_ratio", 0, _INT_MAX),
                self._integer(args, 3, "sparse_safe", 0, _INT_MAX))

    def cfg_encode_max_depth(self, *args):
        return self._integer(self._args(args, 1), 1, "encode_depth", 1, _INT_MAX)

    def cfg_decode_max_depth(self, *args):
        return self._integer(self._args(args, 1), 1, "decode_depth", 1, _INT_MAX)

    def cfg_precision(self, *args):
        return self._integer(self._args(args, 1), 1, "precision", 1, 14)

    def cfg_keep_buffer(self, *args):
        return self._enum(self._args(args, 1), 1, "keep_buffer")

    def cfg_encode_invalid(self, *args):
        return self._enum(self._args(args, 1), 1, "encode_invalid", ("off", "on", "null"))

    def cfg_decode_invalid(self, *args):
        return self._enum(self._args(args, 1), 1, "decode_invalid")

    # --- encoding ----------------------------------------------------------------------
    def encode(self, *args):
        if len(args) != 1:
            raise ArgError(1, "expected 1 argument")
        out = []
        _deep(min(self.encode_depth, _LUA_MAX_SLOTS), self._value, args[0], 0, 1, out)
        return b"".join(out)

    def _number(self, v, what="number") -> bytes:
        if type(v) is float and (v != v or v in (math.inf, -math.inf)):
            if self.encode_invalid == 0:
                raise LibError(f"Cannot serialise {what}: must not be NaN or Inf")
            if self.encode_invalid == 2:
                return b"null"
            if v != v:
                return b"nan"
        return b"%.*g" % (self.precision, v)

    def _value(self, v, depth, slots, out):
        """Appends ``v``; ``slots`` is how much of the Lua stack the C encoder would be
        using (the argument, and a value, or a key and a value, for each open table)."""
        t = type(v)
        if t is bytes:
            out.append(_quote(v))
        elif t is int or t is float:
            out.append(self._number(v))
        elif t is bool:
            out.append(b"true" if v else b"false")
        elif v is None:
            out.append(b"null")
        else:
            kind = type_name(v, self._type)
            if kind == "table":
                self._table_value(v, depth + 1, slots, out)
            elif kind == "userdata":  # cjson.null, the only userdata a script can hold
                out.append(b"null")
            else:
                raise LibError(f"Cannot serialise {kind}: type not supported")

    def _table_value(self, table, depth, slots, out):
        if depth > self.encode_depth or slots + 3 > _LUA_MAX_SLOTS:
            raise LibError(f"Cannot serialise, excessive nesting ({depth})")
        items = list(table.items())  # lua_next: raw, in the table's own order
        top, count = 0, 0
        for k, _ in items:
            if type(k) not in (int, float) or not k or k < 1 or k != k or k == math.inf \
                    or k != math.floor(k):
                top = -1
                break
            count += 1
            if k > top:
                # The C int it lands in: 2^31 and up become INT_MIN, as x86 converts.
                top = int(k) if k < 2147483648 else -2147483648
        if top > 0 and self.sparse_ratio > 0 and top > count * self.sparse_ratio \
                and top > self.sparse_safe:
            if not self.sparse_convert:
                raise LibError("Cannot serialise table: excessively sparse array")
            top = -1
        if top > 0:
            byidx = {int(k): v for k, v in items}
            out.append(b"[")
            for i in range(1, top + 1):
                if i > 1:
                    out.append(b",")
                self._value(byidx.get(i), depth, slots + 1, out)
            out.append(b"]")
            return
        out.append(b"{")
        first = True
        for k, v in items:
            if not first:
                out.append(b",")
            first = False
            kt = type(k)
            if kt is int or kt is float:
                out.append(b'"' + self._number(k) + b'":')
            elif kt is bytes:
                out.append(_quote(k) + b":")
            else:
                raise LibError("Cannot serialise %s: table key must be a number or string"
                               % type_name(k, self._type))
            self._value(v, depth, slots + 2, out)
        out.append(b"}")

    # --- decoding ----------------------------------------------------------------------
    def decode(self, *args):
        if len(args) != 1:
            raise ArgError(1, "expected 1 argument")
        data = check_string(args, 1, self._type)
        if len(data) >= 2 and (data[0] == 0 or data[1] == 0):
            raise LibError("JSON parser does not support UTF-16 or UTF-32")
        nul = data.find(b"\0")
        if nul >= 0:  # the parser reads a C string
            data = data[:nul]
        parser = _Parser(self, data)
        tok = parser.next()
        value = _deep(min(self.decode_depth, _LUA_MAX_SLOTS), parser.value, tok)
        tok = parser.next()
        if tok[0] is not _END:
            parser.fail("the end", tok)
        return value


class _Parser:
    def __init__(self, cfg: CJson, data: bytes):
        self.cfg, self.data, self.pos, self.depth = cfg, data, 0, 0
        self.slots = 1  # the C decoder's Lua stack: the input, and per open table its own
                        # slot (an object's key too)

    def fail(self, expected, tok):
        found = tok[2] if tok[0] is _ERROR else tok[0]
        raise LibError(f"Expected {expected} but found {found} at character {tok[1] + 1}")

    def next(self):
        """(kind, index, value); an error's value is its description."""
        data, n = self.data, len(self.data)
        pos = self.pos
        while pos < n and data[pos] in b" \t\n\r":
            pos += 1
        self.pos = pos
        if pos >= n:
            return (_END, pos, None)
        ch = data[pos]
        kind = _SINGLE.get(ch)
        if kind is not None:
            self.pos = pos + 1
            return (kind, pos, None)
        if ch not in _UNKNOWN:
            return (_ERROR, pos, "invalid token")
        if ch == 34:
            return self._string(pos)
        if ch == 45 or 48 <= ch <= 57:
            if not self.cfg.decode_invalid and self._invalid_number(pos):
                return (_ERROR, pos, "invalid number")
            return self._number(pos)
        if data.startswith(b"true", pos):
            self.pos = pos + 4
            return (_BOOLEAN, pos, True)
        if data.startswith(b"false", pos):
            self.pos = pos + 5
            return (_BOOLEAN, pos, False)
        if data.startswith(b"null", pos):
            self.pos = pos + 4
            return (_NULL, pos, None)
        if self.cfg.decode_invalid and self._invalid_number(pos):
            return self._number(pos)
        return (_ERROR, pos, "invalid token")

    def _invalid_number(self, p) -> bool:
        """What strict JSON refuses but strtod reads: a '+', hex, leading zeros, inf, nan."""
        data = self.data
        c = data[p:p + 1]
        if c == b"+":
            return True
        if c == b"-":
            p += 1
            c = data[p:p + 1]
        if c == b"0":
            c2 = data[p + 1:p + 2]
            return c2 in (b"x", b"X") or (c2 != b"" and c2 in b"0123456789")
        if c == b"" or c <= b"9":
            return False
        word = data[p:p + 3].lower()
        return word in (b"inf", b"nan")

    def _number(self, pos):
        value, end = strtod(self.data, pos)
        if end == pos:
            return (_ERROR, pos, "invalid number")
        self.pos = end
        return (_NUMBER, pos, value)

    def _string(self, start):
        data, n = self.data, len(self.data)
        pos = start + 1
        out = bytearray()
        while True:
            if pos >= n:
                self.pos = pos
                return (_ERROR, pos, "unexpected end of string")
            ch = data[pos]
            if ch == 34:
                break
            if ch == 92:
                esc = data[pos + 1] if pos + 1 < n else 0
                if esc == 117:  # \u
                    size = self._unicode(pos, out)
                    if not size:
                        self.pos = pos
                        return (_ERROR, pos, "invalid unicode escape code")
                    pos += size
                    continue
                c = _SIMPLE_ESCAPES.get(esc)
                if c is None:
                    self.pos = pos
                    return (_ERROR, pos, "invalid escape code")
                out.append(c)
                pos += 2
                continue
            out.append(ch)
            pos += 1
        self.pos = pos + 1
        return (_STRING, start, bytes(out))

    def _hex4(self, p) -> int:
        h = self.data[p:p + 4]
        if len(h) != 4 or any(c not in _HEX for c in h):
            return -1
        return int(h, 16)

    def _unicode(self, pos, out) -> int:
        """Appends the UTF-8 of the escape at ``pos``; its length in the input, 0 if bad."""
        cp = self._hex4(pos + 2)
        if cp < 0:
            return 0
        size = 6
        if cp & 0xF800 == 0xD800:
            if cp & 0x400:
                return 0
            if self.data[pos + 6:pos + 8] != b"\\u":
                return 0
            low = self._hex4(pos + 8)
            if low < 0 or low & 0xFC00 != 0xDC00:
                return 0
            cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000
            size = 12
        out += chr(cp).encode("utf-8", "surrogatepass")
        return size

    def value(self, tok):
        kind = tok[0]
        if kind is _STRING or kind is _NUMBER or kind is _BOOLEAN:
            return tok[2]
        if kind is _NULL:
            return self.cfg.null
        if kind is _OBJ_BEGIN:
            return self._object()
        if kind is _ARR_BEGIN:
            return self._array()
        self.fail("value", tok)

    def _descend(self, need):
        self.depth += 1
        if self.depth > self.cfg.decode_depth or self.slots + need > _LUA_MAX_SLOTS:
            raise LibError(f"Found too many nested data structures ({self.depth}) at "
                           f"character {self.pos}")

    def _object(self):
        self._descend(3)
        self.slots += 2
        items = {}
        tok = self.next()
        if tok[0] is not _OBJ_END:
            while True:
                if tok[0] is not _STRING:
                    self.fail("object key string", tok)
                key = tok[2]
                tok = self.next()
                if tok[0] is not _COLON:
                    self.fail("colon", tok)
                items[key] = self.value(self.next())
                tok = self.next()
                if tok[0] is _OBJ_END:
                    break
                if tok[0] is not _COMMA:
                    self.fail("comma or object end", tok)
                tok = self.next()
        self.depth -= 1
        self.slots -= 2
        return self.cfg._table(items)

    def _array(self):
        self._descend(2)
        self.slots += 1
        items = []
        tok = self.next()
        if tok[0] is not _ARR_END:
            while True:
                items.append(self.value(tok))
                tok = self.next()
                if tok[0] is _ARR_END:
                    break
                if tok[0] is not _COMMA:
                    self.fail("comma or array end", tok)
                tok = self.next()
        self.depth -= 1
        self.slots -= 1
        return self.cfg._table(items)


def _deep(depth_limit, fn, *args):
    """``fn(*args)`` with room for the nesting the settings allow (a few Python frames a
    level); what goes deeper is cut off by the depth checks, not by Python."""
    want = min(depth_limit, 100_000) * 3 + 200
    limit = sys.getrecursionlimit()
    if limit < want:
        sys.setrecursionlimit(want)
    try:
        return fn(*args)
    finally:
        sys.setrecursionlimit(limit)


# --- cmsgpack (lua-cmsgpack 0.4.0) -----------------------------------------------------

_MP_MAX_NESTING = 16  # a table deeper than this packs as nil (it may hold itself)
# Unpacking pushes every value, and each open array or map its table and a key, on the
# C function's Lua stack, which stops at LUAI_MAXCSTACK (8000) slots.
_MP_MAX_SLOTS = 8000
_MP_OVERFLOW = ("stack overflow (too many return values at once; use unpack_one or "
                "unpack_limit instead.)")


class _Missing(Exception):
    pass


class _BadFormat(Exception):
    pass


class MsgPack:
    def __init__(self, lua_type, table_from):
        self._type, self._table = lua_type, table_from

    def functions(self) -> dict:
        return {"pack": self.pack, "unpack": self.unpack, "unpack_one": self.unpack_one,
                "unpack_limit": self.unpack_limit}

    def pack(self, *args):
        if not args:
            raise ArgError(0, "MessagePack pack needs input.")
        out = bytearray()
        for v in args:
            self._encode(v, 0, out)
        return bytes(out)

    def _encode(self, v, level, out):
        t = type(v)
        if t is bytes:
            n = len(v)
            if n < 32:
                out.append(0xA0 | n)
            elif n <= 0xFF:
                out += b"\xd9" + bytes((n,))
            elif n <= 0xFFFF:
                out += b"\xda" + n.to_bytes(2, "big")
            else:
                out += b"\xdb" + (n & 0xFFFFFFFF).to_bytes(4, "big")
            out += v
        elif t is bool:
            out.append(0xC3 if v else 0xC2)
        elif t is int or t is float:
            self._number(v, out)
        elif v is not None and level < _MP_MAX_NESTING and self._type(v) == "table":
            self._table_value(v, level, out)
        else:
            out.append(0xC0)

    @staticmethod
    def _number(v, out):
        f = float(v)
        # A double that an int64 holds exactly packs as an integer (Lua 5.1 has only
        # doubles); the C cast of anything out of range gives INT64_MIN.
        if f == f and -9.223372036854775808e18 <= f < 9.223372036854775808e18 \
                and f == math.floor(f):
            _mp_int(int(f), out)
        elif f == -9.223372036854775808e18:
            _mp_int(-(1 << 63), out)
        else:
            # A single when the double survives the C cast to float and back (NaN never
            # compares equal, so it stays a double).
            try:
                single = _struct.pack(">f", f)
            except OverflowError:
                single = None
            if single is not None and f == f and _struct.unpack(">f", single)[0] == f:
                out += b"\xca" + single
            else:
                out += b"\xcb" + _struct.pack(">d", f)

    def _table_value(self, table, level, out):
        items = list(table.items())
        count = top = 0
        array = True
        for k, _ in items:
            if type(k) not in (int, float) or not 0 < k <= 2147483647 or k != math.floor(k):
                array = False
                break
            count += 1
            if k > top:
                top = int(k)
        if array and top == count:
            byidx = {int(k): v for k, v in items}
            _mp_len(count, 0x90, b"\xdc", b"\xdd", out)
            for i in range(1, count + 1):
                self._encode(byidx.get(i), level + 1, out)
        else:
            _mp_len(len(items), 0x80, b"\xde", b"\xdf", out)
            for k, v in items:
                self._encode(k, level + 1, out)
                self._encode(v, level + 1, out)

    # --- unpacking ---------------------------------------------------------------------
    def unpack(self, *args):
        return self._unpack_full(args, 0, 0)

    def unpack_one(self, *args):
        offset = opt_integer(args, 2, 0, self._type)
        return self._unpack_full(args[:1], 1, offset)

    def unpack_limit(self, *args):
        limit = check_integer(args, 2, self._type)
        offset = opt_integer(args, 3, 0, self._type)
        return self._unpack_full(args[:1], limit, offset)

    def _unpack_full(self, args, limit, offset):
        data = check_string(args, 1, self._type)
        n = len(data)
        decode_all = not limit and not offset
        if offset < 0 or limit < 0:
            raise LibError("Invalid request to unpack with offset of %d and limit of %d."
                           % (_c_int(offset), _c_int(n)))
        if offset > n:
            raise LibError("Start offset %d greater than input length %d."
                           % (_c_int(offset), _c_int(n)))
        if decode_all:
            limit = 2147483647
        pos, values = offset, []
        try:
            while pos < n and len(values) < limit:
                v, pos = _deep(_MP_MAX_SLOTS // 2, self._decode, data, pos,
                               1 + len(values))
                values.append(v)
        except _Missing:
            raise LibError("Missing bytes in input.") from None
        except _BadFormat:
            raise LibError("Bad data format in input.") from None
        if not decode_all:
            values.insert(0, -1 if pos >= n else pos)
        return tuple(values)

    def _decode(self, d, p, slots):
        """The value at ``p`` and the position after it; ``slots`` is how much of the Lua
        stack is in use (the input string, the values and open tables before it)."""
        if slots + 1 > _MP_MAX_SLOTS:
            raise LibError(_MP_OVERFLOW)
        n = len(d)
        if p >= n:
            raise _Missing
        c = d[p]

        def need(k):
            if n - p < k:
                raise _Missing

        if c < 0x80:
            return c, p + 1
        if c >= 0xE0:
            return c - 256, p + 1
        if 0xA0 <= c <= 0xBF:
            size = c & 0x1F
            need(1 + size)
            return d[p + 1:p + 1 + size], p + 1 + size
        if 0x90 <= c <= 0x9F:
            return self._array(d, p + 1, c & 0xF, slots)
        if 0x80 <= c <= 0x8F:
            return self._map(d, p + 1, c & 0xF, slots)
        fixed = _MP_FIXED.get(c)
        if fixed is not None:
            size, fmt = fixed
            need(1 + size)
            v = _struct.unpack(fmt, d[p + 1:p + 1 + size])[0]
            if c == 0xCF and v >= 1 << 63:
                v -= 1 << 64  # pushed through lua_pushinteger (a signed 64-bit cast)
            return (float(v) if type(v) is int and abs(v) > (1 << 53) else v), p + 1 + size
        if c == 0xC0:
            return None, p + 1
        if c == 0xC3:
            return True, p + 1
        if c == 0xC2:
            return False, p + 1
        if c in (0xD9, 0xDA, 0xDB):
            hdr = {0xD9: 1, 0xDA: 2, 0xDB: 4}[c]
            need(1 + hdr)
            size = int.from_bytes(d[p + 1:p + 1 + hdr], "big")
            start = p + 1 + hdr
            if n - start < size:
                raise _Missing
            return d[start:start + size], start + size
        if c in (0xDC, 0xDD, 0xDE, 0xDF):
            hdr = 2 if c in (0xDC, 0xDE) else 4
            need(1 + hdr)
            size = int.from_bytes(d[p + 1:p + 1 + hdr], "big")
            if c in (0xDC, 0xDD):
                return self._array(d, p + 1 + hdr, size, slots)
            return self._map(d, p + 1 + hdr, size, slots)
        raise _BadFormat

    def _array(self, d, p, size, slots):
        if slots + 2 > _MP_MAX_SLOTS:
            raise LibError("stack overflow (in function mp_decode_to_lua_array)")
        t = {}
        for i in range(1, size + 1):
            v, p = self._decode(d, p, slots + 2)
            if v is not None:
                t[i] = v
        return self._table(t), p

    def _map(self, d, p, size, slots):
        t = {}
        for _ in range(size):
            k, p = self._decode(d, p, slots + 1)
            v, p = self._decode(d, p, slots + 2)
            if k is None:
                raise LibError("table index is nil", positioned=False)
            if type(k) is float and k != k:
                raise LibError("table index is NaN", positioned=False)
            if v is None:
                t.pop(k, None)
            else:
                t[k] = v
        return self._table(t), p


_MP_FIXED = {0xCC: (1, ">B"), 0xCD: (2, ">H"), 0xCE: (4, ">I"), 0xCF: (8, ">Q"),
             0xD0: (1, ">b"), 0xD1: (2, ">h"), 0xD2: (4, ">i"), 0xD3: (8, ">q"),
             0xCA: (4, ">f"), 0xCB: (8, ">d")}


def _c_int(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _mp_int(v: int, out):
    if v >= 0:
        if v <= 127:
            out.append(v)
        elif v <= 0xFF:
            out += b"\xcc" + bytes((v,))
        elif v <= 0xFFFF:
            out += b"\xcd" + v.to_bytes(2, "big")
        elif v <= 0xFFFFFFFF:
            out += b"\xce" + v.to_bytes(4, "big")
        else:
            out += b"\xcf" + v.to_bytes(8, "big")
    elif v >= -32:
        out.append(v & 0xFF)
    elif v >= -128:
        out += b"\xd0" + (v & 0xFF).to_bytes(1, "big")
    elif v >= -32768:
        out += b"\xd1" + (v & 0xFFFF).to_bytes(2, "big")
    elif v >= -2147483648:
        out += b"\xd2" + (v & 0xFFFFFFFF).to_bytes(4, "big")
    else:
        out += b"\xd3" + (v & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "big")


def _mp_len(n: int, fix: int, b16: bytes, b32: bytes, out):
    if n <= 15:
        out.append(fix | n)
    elif n <= 0xFFFF:
        out += b16 + n.to_bytes(2, "big")
    else:
        out += b32 + (n & 0xFFFFFFFF).to_bytes(4, "big")


# --- struct (Roberto Ierusalimschy's struct library, as Redis builds it) ----------------

_ST_SIZES = {"b": 1, "B": 1, "h": 2, "H": 2, "l": 8, "L": 8, "T": 8, "f": 4, "d": 8, "x": 1}
_ST_MAXALIGN = 8
_ST_MAXINTSIZE = 32
_ST_INTEGERS = frozenset("bBhHlLTiI")


class Struct:
    def __init__(self, lua_type):
        self._type = lua_type

    def functions(self) -> dict:
        return {"pack": self.pack, "unpack": self.unpack, "size": self.size}

    @staticmethod
    def _getnum(fmt: str, i: int, default: int):
        if i >= len(fmt) or not "0" <= fmt[i] <= "9":
            return default, i
        a = 0
        while i < len(fmt) and "0" <= fmt[i] <= "9":
            d = ord(fmt[i]) - 48
            if a > 2147483647 // 10 or a * 10 > 2147483647 - d:
                raise LibError("integral size overflow")
            a = a * 10 + d
            i += 1
        return a, i

    def _optsize(self, opt: str, fmt: str, i: int):
        size = _ST_SIZES.get(opt)
        if size is not None:
            return size, i
        if opt == "c":
            return self._getnum(fmt, i, 1)
        if opt in "iI":
            size, i = self._getnum(fmt, i, 4)
            if size > _ST_MAXINTSIZE:
                raise LibError("integral size %d is larger than limit of %d"
                               % (size, _ST_MAXINTSIZE))
            return size, i
        return 0, i

    @staticmethod
    def _toalign(length: int, align: int, opt: str, size: int) -> int:
        if size == 0 or opt == "c":
            return 0
        if size > align:
            size = align
        return (size - (length & (size - 1))) & (size - 1)

    def _control(self, opt: str, fmt: str, i: int, state: list) -> int:
        """Endianness and alignment options; ``state`` is [little, align]."""
        if opt == " ":
            return i
        if opt == ">":
            state[0] = False
        elif opt == "<":
            state[0] = True
        elif opt == "!":
            a, i = self._getnum(fmt, i, _ST_MAXALIGN)
            if not (a > 0 and a & (a - 1) == 0):
                raise LibError("alignment %d is not a power of 2" % a)
            state[1] = a
        else:
            raise ArgError(1, "invalid format option '%s'" % opt)
        return i

    def _format(self, args) -> str:
        fmt = check_string(args, 1, self._type)
        nul = fmt.find(b"\0")
        return (fmt if nul < 0 else fmt[:nul]).decode("latin-1")

    def pack(self, *args):
        fmt = self._format(args)
        args += (None,)  # the nil pack() pushes after its arguments, read as the next one
        state = [True, 1]
        out = bytearray()
        arg, i = 2, 0
        while i < len(fmt):
            opt = fmt[i]
            i += 1
            size, i = self._optsize(opt, fmt, i)
            pad = self._toalign(len(out), state[1], opt, size)
            out += b"\0" * pad
            if opt in _ST_INTEGERS:
                n = check_number(args, arg, self._type)
                arg += 1
                value = to_int64(n) & 0xFFFFFFFFFFFFFFFF if n == n else 0
                raw = value.to_bytes(max(size, 8), "little")[:size] if size else b""
                out += raw if state[0] else raw[::-1]
            elif opt == "x":
                out += b"\0"
            elif opt in "fd":
                n = float(check_number(args, arg, self._type))
                arg += 1
                if opt == "f":
                    try:
                        raw = _struct.pack("<f", n)
                    except OverflowError:
                        raw = _struct.pack("<f", math.copysign(math.inf, n))
                else:
                    raw = _struct.pack("<d", n)
                out += raw if state[0] else raw[::-1]
            elif opt in "cs":
                s = check_string(args, arg, self._type)
                arg += 1
                if size == 0:
                    size = len(s)
                if len(s) < size:
                    raise ArgError(arg, "string too short")
                out += s[:size]
                if opt == "s":
                    out += b"\0"
            else:
                i = self._control(opt, fmt, i, state)
        return bytes(out)

    def unpack(self, *args):
        fmt = self._format(args)
        data = check_string(args, 2, self._type)
        pos = opt_integer(args, 3, 1, self._type)
        if pos == 0:  # a size_t: a negative offset passes this, and fails as too short
            raise ArgError(3, "offset must be 1 or greater")
        pos -= 1
        n = len(data)
        state = [True, 1]
        out = []
        i = 0
        while i < len(fmt):
            opt = fmt[i]
            i += 1
            size, i = self._optsize(opt, fmt, i)
            pos += self._toalign(pos, state[1], opt, size)
            if pos < 0 or pos + size > n:
                raise ArgError(2, "data string too short")
            if opt in _ST_INTEGERS:
                raw = data[pos:pos + size]
                if not state[0]:
                    raw = raw[::-1]
                v = int.from_bytes(raw[:8], "little")  # a 64-bit accumulator
                if opt.islower() and size:
                    mask = (0xFFFFFFFFFFFFFFFF << ((size * 8 - 1) & 63)) & 0xFFFFFFFFFFFFFFFF
                    if v & mask:
                        v |= mask
                    if v >= 1 << 63:
                        v -= 1 << 64
                out.append(float(v) if abs(v) > (1 << 53) else v)
            elif opt in "fd":
                raw = data[pos:pos + size]
                out.append(_struct.unpack("<f" if opt == "f" else "<d",
                                          raw if state[0] else raw[::-1])[0])
            elif opt == "c":
                if size == 0:
                    prev = out[-1] if out else data
                    if type(prev) is bytes:
                        prev = str2number(prev)
                    if type(prev) not in (int, float):
                        raise LibError("format 'c0' needs a previous size")
                    size = to_int64(prev)
                    if out:
                        out.pop()
                    if pos + size > n:
                        raise ArgError(2, "data string too short")
                out.append(data[pos:pos + size])
            elif opt == "s":
                end = data.find(b"\0", pos)
                if end < 0:
                    raise LibError("unfinished string in data")
                out.append(data[pos:end])
                size = end - pos + 1
            elif opt != "x":
                i = self._control(opt, fmt, i, state)
            pos += size
        out.append(pos + 1)
        return tuple(out)

    def size(self, *args):
        fmt = self._format(args)
        state = [True, 1]
        pos, i = 0, 0
        while i < len(fmt):
            opt = fmt[i]
            i += 1
            size, i = self._optsize(opt, fmt, i)
            pos += self._toalign(pos, state[1], opt, size)
            if opt == "s":
                raise ArgError(1, "option 's' has no fixed size")
            if opt == "c" and size == 0:
                raise ArgError(1, "option 'c0' has no fixed size")
            if not (opt.isascii() and opt.isalnum()):
                i = self._control(opt, fmt, i, state)
            pos += size
        return pos


# --- math.random / math.randomseed -----------------------------------------------------

class Rand48:
    """Redis's replacement for math.random: its own rand48 generator (a 48-bit linear
    congruential one), one state for the whole process, never reseeded by Redis 7.0 (it
    no longer resets it before each script): a script's numbers continue the sequence."""

    _MAX = 0x7FFFFFFF  # INT32_MAX, the divisor Redis uses

    def __init__(self, lua_type):
        self._type = lua_type
        self.x = 0x1234ABCD330E

    def functions(self) -> dict:
        return {"random": self.random, "randomseed": self.randomseed}

    def _next(self) -> float:
        self.x = (0x5DEECE66D * self.x + 0xB) & 0xFFFFFFFFFFFF
        return ((self.x >> 17) % self._MAX) / self._MAX

    def random(self, *args):
        r = self._next()  # drawn before the arguments are checked, as in C
        if not args:
            return r
        if len(args) == 1:
            u = _c_int(check_integer(args, 1, self._type))
            if u < 1:
                raise ArgError(1, "interval is empty")
            return float(math.floor(r * u) + 1)
        if len(args) == 2:
            low = _c_int(check_integer(args, 1, self._type))
            u = _c_int(check_integer(args, 2, self._type))
            if low > u:
                raise ArgError(2, "interval is empty")
            return float(math.floor(r * (u - low + 1)) + low)
        raise LibError("wrong number of arguments")

    def randomseed(self, *args):
        seed = _c_int(check_integer(args, 1, self._type)) & 0xFFFFFFFF
        self.x = (seed << 16) | 0x330E
