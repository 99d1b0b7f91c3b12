"""IDMPAUTO: the 16-byte idempotent id derived from an entry's field/value pairs.

Bit-exact with Redis 8.6 so that an automatic iid collides with an explicit 16-byte iid
under the same producer exactly when it would in Redis (and so that ids written to an AOF
by ``XIDMPRECORD`` match). Python's ``hash()`` is salted per process and must never be used.

Per pair: XXH3-128 (seed 0) over ``field || int64_le(len(field)) || value``. The length
separator keeps ``("ab", "c")`` and ``("a", "bc")`` apart. Pairs are combined with sums
and xors of the 64-bit halves, which makes the result independent of pair order, while the
sums keep repeated pairs from cancelling out (xor alone would map ``f v f v`` to zero).
The result is the in-memory ``XXH128_hash_t`` of a little-endian host: low64 LE, high64 LE
(not the canonical big-endian digest).
"""

from __future__ import annotations

import struct

from xxhash import xxh3_128_digest, xxh3_128_intdigest

_M64 = (1 << 64) - 1
_LEN = struct.Struct("<q").pack  # C `long` on LP64 hosts: 8 bytes, little-endian
# field -> field || int64_le(len(field)): producers repeat their field names on every call.
# Bounded, as field names can be anything.
_PREFIX: dict[bytes, bytes] = {}
_PREFIX_MAX = 1024
# On the 128-bit digest h = high64 << 64 | low64, both halves rotated left by one at once:
# shift, drop the bit each half pushed into the other, bring the top bits round.
_ROT_KEEP = ((1 << 128) - 1) & ~(1 << 64)
_ROT_CARRY = (1 << 64) | 1
# digest() is the canonical big-endian form (high64, low64): unpacking it yields the two
# halves as machine-sized ints, cheaper than splitting one 128-bit int.
_HALVES = struct.Struct(">QQ").unpack
_OUT = struct.Struct("<QQ").pack


def auto_iid(fields: list[bytes]) -> bytes:
    """The IDMPAUTO iid of ``fields`` (flat ``[field, value, field, value, ...]``)."""
    if len(fields) == 2:  # the usual single pair: both sums are the pair's halves
        # low64 ^ rotl(high64), high64 ^ rotl(low64): h xor its rotated halves swapped,
        # in a few operations on one int (the hot path of every IDMPAUTO append).
        h = xxh3_128_intdigest(_prefix(fields[0]) + fields[1])
        r = ((h << 1) & _ROT_KEEP) | ((h >> 63) & _ROT_CARRY)
        return (h ^ ((r >> 64) | ((r & _M64) << 64))).to_bytes(16, "little")
    if len(fields) % 2:
        raise ValueError("fields must hold field/value pairs")
    sum_lo = sum_hi = xor_lo = xor_hi = 0
    it = iter(fields)
    for f, v in zip(it, it):
        hi, lo = _HALVES(xxh3_128_digest(_prefix(f) + v))
        sum_lo += lo  # reduced mod 2**64 once at the end; Python ints don't overflow
        sum_hi += hi
        xor_lo ^= lo
        xor_hi ^= hi
    low64 = (sum_lo & _M64) ^ (((xor_hi << 1) | (xor_hi >> 63)) & _M64)  # ^ rotl64(xor_hi, 1)
    high64 = (sum_hi & _M64) ^ (((xor_lo << 1) | (xor_lo >> 63)) & _M64)  # ^ rotl64(xor_lo, 1)
    return _OUT(low64, high64)


def _prefix(field: bytes) -> bytes:
    p = _PREFIX.get(field)
    if p is None:
        if len(_PREFIX) >= _PREFIX_MAX:
            _PREFIX.clear()
        p = _PREFIX[field] = field + _LEN(len(field))
    return p
