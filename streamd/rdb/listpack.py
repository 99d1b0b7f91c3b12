"""Listpack, the packed list Redis keeps small hashes and stream nodes in, and saves as is.

A listpack is a 4-byte total size, a 2-byte element count (65535: "count them"), the
elements, and a 0xFF end byte. Each element is an encoding byte (plus length or value
bytes), its data, and a "backlen": the element's own size written so that it can be read
from its last byte backwards. A string that reads as a canonical int64 is stored as an
integer, in the smallest of seven integer encodings.

``encode`` builds one from Python values; ``decode`` checks one completely and returns its
elements, integers as ``int`` and strings as ``bytes``.
"""

from __future__ import annotations

from struct import pack_into, unpack_from

_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_NO_COUNT = 65535  # the header's count field when the list holds that many or more


class ListpackError(ValueError):
    """A listpack that is not well formed."""


def as_int(b: bytes) -> int | None:
    """The int64 that listpack stores ``b`` as, or None when ``b`` stays a string.

    Canonical decimal only: no sign but a leading '-', no leading zeros, no "-0", at most
    20 characters, within int64.
    """
    n = len(b)
    if not 0 < n <= 20:
        return None
    if b[0] == 0x2D:  # '-'
        body = b[1:]
        if not body or body[0] == 0x30:
            return None
    else:
        body = b
        if body[0] == 0x30:
            return 0 if n == 1 else None
    if not body.isdigit():  # ASCII digits only for bytes
        return None
    v = int(b)
    return v if _I64_MIN <= v <= _I64_MAX else None


def _backlen(size: int) -> bytes:
    """``size`` (an element's encoding plus data bytes) as its backwards-readable tail:
    7 bits per byte, the last byte holding the low bits, every byte but the first
    flagged with 0x80."""
    if size <= 127:
        return bytes((size,))
    out = bytearray()
    while size:
        out.append((size & 127) | 128)
        size >>= 7
    out[-1] &= 127  # the byte read last (the first in memory) has no continuation flag
    out.reverse()
    return bytes(out)


def _int_element(v: int) -> bytes:
    if 0 <= v <= 127:
        enc = bytes((v,))
    elif -4096 <= v <= 4095:
        v &= 0x1FFF
        enc = bytes((0xC0 | (v >> 8), v & 0xFF))
    elif -32768 <= v <= 32767:
        enc = b"\xf1" + v.to_bytes(2, "little", signed=True)
    elif -8388608 <= v <= 8388607:
        enc = b"\xf2" + v.to_bytes(3, "little", signed=True)
    elif -2147483648 <= v <= 2147483647:
        enc = b"\xf3" + v.to_bytes(4, "little", signed=True)
    else:
        enc = b"\xf4" + v.to_bytes(8, "little", signed=True)
    return enc + _backlen(len(enc))


def _str_element(b: bytes) -> bytes:
    n = len(b)
    if n < 64:
        enc = bytes((0x80 | n,)) + b
    elif n < 4096:
        enc = bytes((0xE0 | (n >> 8), n & 0xFF)) + b
    else:
        enc = b"\xf0" + n.to_bytes(4, "little") + b
    return enc + _backlen(len(enc))


# 0..127 in one byte plus a 1-byte backlen: most stream node elements (flags, ID deltas
# within a node, counts) are these.
_SMALL_INTS = tuple(bytes((v, 1)) for v in range(128))


def element(x) -> bytes:
    """One element: an ``int`` (int64) as an integer, ``bytes`` as listpack would store it."""
    if type(x) is int:
        return _SMALL_INTS[x] if 0 <= x < 128 else _int_element(x)
    v = as_int(x)
    return _str_element(x) if v is None else _int_element(v)


def encode(items) -> bytes:
    """A listpack of ``items`` (ints and bytes, see ``element``)."""
    body = b"".join(map(element, items))
    count = len(items)
    head = bytearray(6)
    pack_into("<IH", head, 0, len(body) + 7, count if count < _NO_COUNT else _NO_COUNT)
    return bytes(head) + body + b"\xff"


def decode(lp: bytes) -> list:
    """The elements of listpack ``lp``; raises ListpackError unless every byte checks out
    (header size, each element's encoding, length and backlen, the count, the end byte)."""
    n = len(lp)
    if n < 7:
        raise ListpackError("too short")
    total, count = unpack_from("<IH", lp, 0)
    if total != n or lp[-1] != 0xFF:
        raise ListpackError("bad header or end")
    out = []
    p = 6
    end = n - 1
    while p < end:
        b = lp[p]
        if b < 0x80:
            v, size = b, 1
        elif b < 0xC0:
            size = 1 + (b & 0x3F)
            v = lp[p + 1:p + size]
        elif b < 0xE0:
            if p + 2 > end:
                raise ListpackError("truncated")
            v = ((b & 0x1F) << 8) | lp[p + 1]
            if v >= 4096:
                v -= 8192
            size = 2
        elif b < 0xF0:
            if p + 2 > end:
                raise ListpackError("truncated")
            size = 2 + (((b & 0x0F) << 8) | lp[p + 1])
            v = lp[p + 2:p + size]
        elif b == 0xF0:
            if p + 5 > end:
                raise ListpackError("truncated")
            size = 5 + int.from_bytes(lp[p + 1:p + 5], "little")
            v = lp[p + 5:p + size]
        elif 0xF1 <= b <= 0xF4:
            width = (2, 3, 4, 8)[b - 0xF1]
            size = 1 + width
            if p + size > end:
                raise ListpackError("truncated")
            v = int.from_bytes(lp[p + 1:p + size], "little", signed=True)
        else:
            raise ListpackError("bad encoding byte")
        if p + size > end:
            raise ListpackError("truncated")
        q = p + size
        if size <= 127:  # a one-byte backlen: most elements
            if lp[q] != size:
                raise ListpackError("bad backlen")
            p = q + 1
        else:
            tail = _backlen(size)
            if lp[q:q + len(tail)] != tail:
                raise ListpackError("bad backlen")
            p = q + len(tail)
        out.append(v)
    if p != end:
        raise ListpackError("overrun")
    if count != _NO_COUNT and count != len(out):
        raise ListpackError("bad count")
    return out


def as_bytes(x) -> bytes:
    """An element as the string Redis reads back (integers in decimal)."""
    return b"%d" % x if type(x) is int else bytes(x)
