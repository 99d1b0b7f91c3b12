"""LZF, the compression Redis applies to long strings in RDB files and DUMP payloads.

The stream format (liblzf's) is a sequence of tokens, each opening with a control byte:

- ``000LLLLL`` then L+1 bytes copied as they are (a literal run of 1 to 32 bytes);
- ``LLLooooo oooooooo``: copy L+2 bytes (L of 1 to 6) starting o+1 bytes back in the output;
- ``111ooooo LLLLLLLL oooooooo``: the same with a length of L+9 (9 to 264 bytes).

A back-reference may overlap the bytes it produces (offset 1 repeats one byte).

``compress`` reproduces the choices of liblzf's compressor (version 3.6, as Redis 7
builds it: a 2^16-slot hash table of 3-byte prefixes, the "very fast" setting, the same
output-limit tests), because DUMP's output is compared byte for byte with real Redis's: a
merely valid stream would RESTORE fine but would not match. Its quirks are kept on
purpose: it never refers back to the first input byte; after a back-reference only the
last two positions it covered enter the hash table; a match is never shorter than three
bytes, even at the very end of the input where its own length cap is lower.

One difference cannot be copied: liblzf leaves its hash table uninitialised, so in Redis
a slot may still hold a position left by an earlier compression. This module starts from
an empty table, which is what Redis does whenever such leftovers happen not to point at a
usable match in the current input, as they almost always do not.
"""

from __future__ import annotations

import sys
from array import array
from itertools import islice

__all__ = ["compress", "decompress"]

_MAX_LIT = 32           # longest literal run
_MAX_OFF = 1 << 13      # farthest back-reference (offset field + 1)
_MAX_REF = 264          # longest back-reference: 7 + 255 + 2
_HSIZE = 1 << 16        # liblzf's HLOG of 16

# The hash table holds positions; this stands for an empty slot, so far back that it can
# never pass the distance test.
_EMPTY = -(1 << 40)

# Positions hashed per batch: enough to spread the cost of building the batch, few enough
# that its Python ints (about 36 bytes each) stay small for multi-megabyte inputs.
_BATCH = 1 << 15


def decompress(data: bytes | bytearray | memoryview, out_len: int) -> bytes:
    """The ``out_len`` bytes that the LZF stream ``data`` encodes.

    ValueError if the stream is malformed: a token running past its end, a back-reference
    to before the start of the output, or output longer or shorter than ``out_len`` (how
    Redis tells a corrupt payload)."""
    src = data if type(data) is bytes else bytes(data)
    n = len(src)
    if n == 0 and out_len != 0:
        raise ValueError("LZF: empty input")
    out = bytearray()
    ip = op = 0
    while ip < n:
        ctrl = src[ip]
        ip += 1
        if ctrl < 32:
            ctrl += 1
            if op + ctrl > out_len:
                raise ValueError("LZF: output longer than expected")
            if ip + ctrl > n:
                raise ValueError("LZF: literal run past the end of the input")
            out += src[ip:ip + ctrl]
            ip += ctrl
            op += ctrl
            continue
        length = ctrl >> 5
        if ip >= n:
            raise ValueError("LZF: back-reference past the end of the input")
        if length == 7:
            length += src[ip]
            ip += 1
            if ip >= n:
                raise ValueError("LZF: back-reference past the end of the input")
        start = op - ((ctrl & 0x1F) << 8) - src[ip] - 1
        ip += 1
        length += 2
        if op + length > out_len:
            raise ValueError("LZF: output longer than expected")
        if start < 0:
            raise ValueError("LZF: back-reference before the start of the output")
        if start + length <= op:
            out += out[start:start + length]
        else:
            # An overlapping copy repeats the last op - start bytes: build it by slicing
            # a repetition rather than copying a byte at a time as C does.
            pattern = out[start:]
            out += (pattern * (length // len(pattern) + 1))[:length]
        op += length
    if op != out_len:
        raise ValueError("LZF: output shorter than expected")
    return bytes(out)


_BIAS: dict[int, int] = {}


def _hashes(src: bytes, start: int, end: int) -> list[int]:
    """liblzf's hash slot for each position in [start, end): for the bytes b0 b1 b2 there,
    ((b0 b1) - 5 * (b1 b2)) mod 2^16, reading byte pairs as big-endian 16-bit numbers.

    Done for the whole batch at once in big-integer arithmetic, which runs in C: every
    position gets a 32-bit field, wide enough that no field carries into the next."""
    count = end - start
    fields = count + 1
    # Field k holds the pair at start + k (little-endian: low byte first).
    buf = bytearray(4 * fields)
    buf[0::4] = src[start + 1:start + fields + 1]
    buf[1::4] = src[start:start + fields]
    pairs = int.from_bytes(buf, "little")
    # Field k of `pairs >> 32` is the pair one position on. 5 * 2^16 added to every field
    # keeps each field's difference positive (no borrows) and changes nothing mod 2^16.
    bias = _BIAS.get(fields)
    if bias is None:
        bias = int.from_bytes(b"\x00\x00\x01\x00" * fields, "little")
        if fields == _BATCH + 1:
            _BIAS[fields] = bias
    mixed = pairs + 5 * (bias - (pairs >> 32))
    halves = array("H", mixed.to_bytes(4 * fields, "little"))
    if sys.byteorder == "big":
        halves.byteswap()
    # A field's low 16 bits are its first half.
    return halves[0:2 * count:2].tolist()


def _common(src: bytes, a: int, b: int, lo: int, hi: int) -> int:
    """The first k in [lo, hi) where src[a + k] != src[b + k], or hi if there is none."""
    # Gallop then bisect with slice comparisons (C speed), since most matches are short
    # and a few are hundreds of bytes long.
    step = 4
    while lo < hi:
        top = min(lo + step, hi)
        if src[a + lo:a + top] != src[b + lo:b + top]:
            hi = top
            break
        lo = top
        step *= 2
    else:
        return hi
    while hi - lo > 4:
        mid = (lo + hi) // 2
        if src[a + lo:a + mid] == src[b + lo:b + mid]:
            lo = mid
        else:
            hi = mid
    while src[a + lo] == src[b + lo]:
        lo += 1
    return lo


def _match_length(src: bytes, ref: int, ip: int, n: int) -> int:
    """How many bytes liblzf's compressor takes for a match of ip against ref (their
    first three bytes agreeing): the common prefix, capped at _MAX_REF and at what is
    left of the input less two bytes, but never under three."""
    limit = min(n - ip - 2, _MAX_REF)
    if limit <= 3:
        return 3  # liblzf counts the three bytes already compared whatever the cap
    if limit <= 16:
        return _common(src, ref, ip, 3, limit)
    # liblzf compares bytes 3 to 18 unconditionally when more than 16 may match, so with
    # a cap of 17 or 18 it can take 19 bytes: the whole remaining input. Copied as is.
    if src[ref + 3:ref + 19] != src[ip + 3:ip + 19]:
        return _common(src, ref, ip, 3, 19)
    if limit <= 19:
        return 19
    return _common(src, ref, ip, 19, limit)


def _put_literals(out: bytearray, src: bytes, start: int, end: int) -> None:
    for run in range(start, end, _MAX_LIT):
        stop = min(run + _MAX_LIT, end)
        out.append(stop - run - 1)
        out += src[run:stop]


def _op_after_literals(out: bytearray, pending: int) -> int:
    """Where liblzf's output pointer stands with `pending` literal bytes written after
    `out`, counting the control byte it reserves for the next run."""
    return len(out) + pending + pending // _MAX_LIT + 1


def compress(data: bytes | bytearray | memoryview, max_out: int) -> bytes | None:
    """``data`` compressed as Redis's liblzf would, or None where liblzf gives up: when
    the output would not fit in ``max_out`` bytes (Redis passes the input's length less
    4, and stores the string uncompressed on failure), and for empty input."""
    src = bytes(data)
    n = len(src)
    if n == 0 or max_out <= 0:
        return None
    table = [_EMPTY] * _HSIZE
    out = bytearray()
    literal_from = 0        # first input byte not yet in `out`
    # A match needs its three bytes in the input; position 0 never enters the table, as
    # liblzf refuses a reference to it.
    last_start = n - 2
    scan_end = max(last_start, 0)  # where liblzf's main loop stops, save after a late match
    pos = 1
    # This loop runs once per input byte: locals only, and the rare paths out of line.
    while pos < last_start:
        batch_end = min(pos + _BATCH, last_start)
        steps = zip(range(pos, batch_end), _hashes(src, pos, batch_end))
        pos = batch_end
        while True:
            for ip, h in steps:
                ref = table[h]
                table[h] = ip
                # Equal slots mean equal hashes, and the hash is one-to-one in the third
                # byte once the first two agree: two comparisons settle three bytes.
                # (8192 is _MAX_OFF, a constant here for speed.)
                if ip - ref <= 8192 and src[ref] == src[ip] and src[ref + 1] == src[ip + 1]:
                    break
            else:
                break
            # Most matches in text are 3 bytes long: settle those without a call.
            if n - ip > 5 and src[ref + 3] == src[ip + 3]:
                length = _match_length(src, ref, ip, n)
            else:
                length = 3
            pending = ip - literal_from
            if pending:
                if pending <= _MAX_LIT:
                    out.append(pending - 1)
                    out += src[literal_from:ip]
                else:
                    _put_literals(out, src, literal_from, ip)
            offset = ip - ref - 1
            if length < 9:
                out.append((offset >> 8) | ((length - 2) << 5))
            else:
                out.append((offset >> 8) | 0xE0)
                out.append(length - 9)
            out.append(offset & 0xFF)
            literal_from = ip + length
            if len(out) + 4 > max_out:
                return None  # the pointer only moves on: the final test must fail
            if literal_from >= last_start:
                scan_end = literal_from
                pos = last_start
                break
            # "Very fast" liblzf hashes only the last two positions a match covered: step
            # over the others, and take those two (and their hashes) from the batch.
            if literal_from <= batch_end:
                if length > 3:
                    next(islice(steps, length - 3, length - 3), None)
                p, h = next(steps)
                table[h] = p
                p, h = next(steps)
                table[h] = p
            else:
                p = literal_from - 2
                b0, b1, b2, b3 = src[p:p + 4]
                w12 = (b1 << 8) | b2
                table[(((b0 << 8) | b1) - 5 * w12) & 0xFFFF] = p
                table[(w12 - 5 * ((b2 << 8) | b3)) & 0xFFFF] = p + 1
                pos = literal_from
                break
        if _op_after_literals(out, max(pos - literal_from, 0)) + 3 > max_out:
            return None  # already too long for the final test
    # liblzf's one output test that matters: after its main loop, 3 bytes must remain.
    # (Its earlier tests are implied by this one, as the pointer only moves forward.)
    if _op_after_literals(out, max(scan_end - literal_from, 0)) + 3 > max_out:
        return None
    _put_literals(out, src, literal_from, n)
    return bytes(out)
