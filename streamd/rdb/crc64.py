"""Redis's CRC-64: the checksum that closes every DUMP payload (and RDB file).

The variant is the one Redis's ``crc64.c`` computes, "Jones" in CRC catalogues: polynomial
0xad93d23594c935a9, reflected input and output, initial value 0 and no final xor, so that
``crc64(b"123456789") == 0xe9c6d914c4b8d9ca``. With no initial or final xor the checksum
is linear, and ``crc64(b, crc64(a)) == crc64(a + b)``: data may arrive in pieces.

Two ways to compute it, both pure Python, chosen by size:

- short inputs (DUMP payloads are mostly short) go through a slicing-by-8 table loop: eight
  256-entry tables let one step take eight bytes, with Python's per-step cost paid an
  eighth as often as in the one-table byte loop (about 30 MB/s against 16).
- long inputs are folded: CRC is the remainder of a polynomial division over GF(2), and a
  long message A = H * x^n + L has the same remainder as H * (x^n mod P) + L, which is
  about half as long. Multiplying H by that 64-bit constant is done a byte lane at a time
  with ``bytes.translate`` and the XOR of big Python integers, which run in C, so each
  halving costs a few passes over memory rather than a Python step per byte (about
  95 MB/s). Work goes in chunks of 64 KiB, which keeps those passes in the CPU cache.
"""

from __future__ import annotations

import struct

__all__ = ["crc64"]

_POLY = 0xAD93D23594C935A9
_MASK = (1 << 64) - 1

# Below this many bytes the folding's fixed costs (a few dozen C calls per halving)
# outweigh its speed; measured crossover is near 1 KiB.
_FOLD_MIN = 1024
# Chosen so a chunk plus the 8 zero bytes the division appends is a power of two: every
# fold then halves exactly.
_CHUNK = (1 << 16) - 8


def _reflect_byte(b: int) -> int:
    return int(f"{b:08b}"[::-1], 2)


# Reflected CRCs feed each byte least significant bit first; translating every byte to
# its bit-reversed self turns the message into the ordinary (most significant bit first)
# polynomial that the folding below divides.
_REVERSE_BITS = bytes(_reflect_byte(b) for b in range(256))
_POLY_REFLECTED = int(f"{_POLY:064b}"[::-1], 2)


def _reflect64(v: int) -> int:
    return int.from_bytes(v.to_bytes(8, "little").translate(_REVERSE_BITS), "big")


def _reflected_tables() -> list[list[int]]:
    # tables[0][b]: the register after feeding byte b to a zero register; tables[k][b]:
    # the same followed by k zero bytes, so a byte k places before the end of an 8-byte
    # word contributes tables[k][b] and a whole word is eight look-ups.
    first = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ (_POLY_REFLECTED if c & 1 else 0)
        first.append(c)
    tables = [first]
    for _ in range(7):
        prev = tables[-1]
        tables.append([first[v & 0xFF] ^ (v >> 8) for v in prev])
    return tables


_TABLES = _reflected_tables()


def _crc_sliced(data: memoryview, crc: int) -> int:
    t0, t1, t2, t3, t4, t5, t6, t7 = _TABLES
    words = len(data) // 8
    # '<' pins the byte order: the register's low byte meets the word's first byte.
    for word in struct.unpack_from(f"<{words}Q", data):
        b0, b1, b2, b3, b4, b5, b6, b7 = (crc ^ word).to_bytes(8, "little")
        crc = (t7[b0] ^ t6[b1] ^ t5[b2] ^ t4[b3]
               ^ t3[b4] ^ t2[b5] ^ t1[b6] ^ t0[b7])
    for b in data[words * 8:]:
        crc = t0[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


# --- folding, in the unreflected domain: polynomials are big-endian integers ---------

def _normal_table() -> list[int]:
    # table[t] = t * x^64 mod P: what shifting a top byte t out of the register adds.
    table = []
    for t in range(256):
        c = t << 56
        for _ in range(8):
            c = ((c << 1) & _MASK) ^ (_POLY if c >> 63 else 0)
        table.append(c)
    return table


_NORMAL = _normal_table()


def _mod_p(data: bytes) -> int:
    """The remainder mod P of the polynomial ``data`` (big-endian, at least 8 bytes)."""
    # data = U * x^64 + V with V already of degree < 64; U * x^64 mod P is what an
    # MSB-first CRC register holds after U's bytes.
    table = _NORMAL
    reg = 0
    for b in data[:-8]:
        reg = ((reg << 8) & _MASK) ^ table[(reg >> 56) ^ b]
    return reg ^ int.from_bytes(data[-8:], "big")


def _mulmod(a: int, b: int) -> int:
    """a * b mod P for polynomials of degree < 64 (only used to build constants)."""
    product = 0
    while a:
        low = a & -a
        product ^= b << (low.bit_length() - 1)
        a ^= low
    return _mod_p(product.to_bytes(16, "big"))


# _LANES[j], for folding by x^(8 * 2^j): eight translate tables, lane i mapping a byte b
# to byte i (most significant first) of (b * x^(8 * 2^j)) mod P. Built as sizes need
# them; a dict, so two threads racing to build one only duplicate work.
_LANES: dict[int, list[bytes]] = {}


def _lanes(j: int) -> list[bytes]:
    lanes = _LANES.get(j)
    if lanes is None:
        r = 1 << 8
        for _ in range(j):
            r = _mulmod(r, r)
        # Each byte's product is reduced mod P up front, which keeps it to 8 bytes (one
        # lane fewer than the raw 71-bit product); remainders survive later multiplying.
        products = [0] * 256
        for b in range(1, 256):
            low = b & -b
            products[b] = products[b ^ low] ^ _mod_p(
                (r << (low.bit_length() - 1)).to_bytes(16, "big"))
        lanes = _LANES[j] = [bytes((v >> (8 * (7 - i))) & 0xFF for v in products)
                             for i in range(8)]
    return lanes


def _crc_folded(chunk: bytes, crc: int) -> int:
    # The MSB-first register after a message M of n bytes, starting from c, is
    # (c * x^(8n) + M * x^64) mod P: the message with 8 zero bytes appended and c xored
    # onto its first 8 bytes.
    a = chunk.translate(_REVERSE_BITS) + bytes(8)
    if crc:
        a = (int.from_bytes(a[:8], "big") ^ _reflect64(crc)).to_bytes(8, "big") + a[8:]
    size = len(a)
    while size > 64:
        # a = high * x^(8k) + low with k the largest power of two below size.
        j = (size - 1).bit_length() - 1
        k = 1 << j
        high = a[:size - k]
        acc = int.from_bytes(a[size - k:], "big")
        # high * (x^(8k) mod P): byte p of high contributes an 8-byte product at byte p
        # onwards; lane i gathers every product's byte i, all at once.
        for i, lane in enumerate(_lanes(j)):
            acc ^= int.from_bytes(high.translate(lane), "big") << (8 * (7 - i))
        size = max(k, size - k + 7)
        a = acc.to_bytes(size, "big")
    return _reflect64(_mod_p(a))


def crc64(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """Redis's CRC-64 of ``data``, continuing from ``crc`` (the checksum of whatever came
    before ``data``; 0 to start)."""
    if not 0 <= crc <= _MASK:
        raise ValueError("crc64: crc must be a 64-bit checksum")
    view = memoryview(data).cast("B")
    n = len(view)
    if n < _FOLD_MIN:
        return _crc_sliced(view, crc)
    for start in range(0, n, _CHUNK):
        piece = view[start:start + _CHUNK]
        if len(piece) < _FOLD_MIN:
            crc = _crc_sliced(piece, crc)
        else:
            crc = _crc_folded(bytes(piece), crc)
    return crc
