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

from xxhash import xxh3_128_digest

_M64 = (1 << 64) - 1
_LEN = struct.Struct("<q").pack  # C `long` on LP64 hosts: 8 bytes, little-endian
# digest() is the canonical big-endian form (high64, low64): unpacking it yields the two
# halves as machine-sized ints, cheaper than splitting one 128-bit int.
_HALVES = struct.Struct(">QQ").unpack
_OUT = struct.Struct("<QQ").pack


def auto_iid(fields: list[bytes]) -> bytes:
    """The IDMPAUTO iid of ``fields`` (flat ``[field, value, field, value, ...]``)."""
    if len(fields) == 2:  # the usual single pair: both sums are the pair's halves
        f = fields[0]
        hi, lo = _HALVES(xxh3_128_digest(f + _LEN(len(f)) + fields[1]))
        return _OUT(lo ^ (((hi << 1) | (hi >> 63)) & _M64), hi ^ (((lo << 1) | (lo >> 63)) & _M64))
    if len(fields) % 2:
        raise ValueError("fields must hold field/value pairs")
    sum_lo = sum_hi = xor_lo = xor_hi = 0
    it = iter(fields)
    for f, v in zip(it, it):
        hi, lo = _HALVES(xxh3_128_digest(f + _LEN(len(f)) + v))
        sum_lo += lo  # reduced mod 2**64 once at the end; Python ints don't overflow
        sum_hi += hi
        xor_lo ^= lo
        xor_hi ^= hi
    low64 = (sum_lo & _M64) ^ (((xor_hi << 1) | (xor_hi >> 63)) & _M64)  # ^ rotl64(xor_hi, 1)
    high64 = (sum_hi & _M64) ^ (((xor_lo << 1) | (xor_lo >> 63)) & _M64)  # ^ rotl64(xor_lo, 1)
    return _OUT(low64, high64)
