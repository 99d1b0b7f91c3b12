"""Stream IDs as single Python ints: ``(ms << 64) | seq``.

One int compares, hashes and sorts faster than an (ms, seq) tuple and is one object, not
three. 0 is ``0-0``; ``MAX_ID`` is ``18446744073709551615-18446744073709551615``.
"""

from __future__ import annotations

U64 = (1 << 64) - 1
MAX_ID = (U64 << 64) | U64
MIN_ID = 0


def make_id(ms: int, seq: int) -> int:
    return (ms << 64) | seq


def id_ms(sid: int) -> int:
    return sid >> 64


def id_seq(sid: int) -> int:
    return sid & U64


def format_id(sid: int) -> bytes:
    return b"%d-%d" % (sid >> 64, sid & U64)


# The text of sequence numbers 0..1023: IDs made in one millisecond share their ``ms-`` part
# and differ in a small sequence, so a producer's run of appends formats each ID as that
# shared prefix plus one of these (half the cost of ``format_id``).
SMALL_SEQ = tuple(b"%d" % i for i in range(1024))


def _strict_u64(part: bytes) -> int | None:
    """Redis's string2ull-style parse: strict decimal first, then strtoull's leniency."""
    if not part:
        return None
    if part.isdigit() and (len(part) == 1 or part[0] != 0x30):
        value = int(part)
        return value if value <= U64 else None
    if part[:1] == b"-":
        body = part[1:]
        if body.isdigit() and body[0] != 0x30 and int(body) <= 1 << 63:
            return None  # string2ll reads a negative number: out of range, no strtoull
    return _strtoull(part)


def _strtoull(part: bytes) -> int | None:
    # C strtoull: leading whitespace, optional sign, digits; the whole part must be consumed.
    s = part.lstrip(b" \t\n\v\f\r")
    neg = False
    if s[:1] in (b"+", b"-"):
        neg = s[:1] == b"-"
        s = s[1:]
    if not s or not s.isdigit():
        return None
    value = int(s)
    if value > U64:
        return None
    return (-value) & U64 if neg else value


def parse_id(arg: bytes, *, strict: bool = False, missing_seq: int = 0,
             allow_auto_seq: bool = False) -> int | None:
    """Parse a stream ID argument; ``None`` when invalid.

    ``strict`` rejects ``-`` and ``+``. ``missing_seq`` is the sequence given to an
    incomplete ID (``5``): 0 for starts, ``U64`` for range ends. With ``allow_auto_seq``
    (XADD only) ``ms-*`` returns ``-(ms + 1)``, a negative marker decoded by ``auto_seq_ms``.
    Redis reads the argument as a C string, so it ends at its first NUL byte (the 127-byte
    cap still counts every byte).
    """
    ms_part, dash, seq_part = arg.partition(b"-")
    if ms_part.isdigit() and len(ms_part) < 20:  # the usual "ms-seq" / "ms" (< 2**64)
        if not dash:
            return (int(ms_part) << 64) | missing_seq
        if seq_part.isdigit() and len(seq_part) < 20:
            return (int(ms_part) << 64) | int(seq_part)
    if len(arg) > 127:
        return None
    nul = arg.find(b"\0")
    if nul >= 0:
        arg = arg[:nul]  # Redis reads the argument as a C string
    if not strict and len(arg) == 1:
        if arg == b"-":
            return MIN_ID
        if arg == b"+":
            return MAX_ID
    dash = arg.find(b"-")
    if dash < 0:
        ms = _strict_u64(arg)
        return None if ms is None else (ms << 64) | missing_seq
    ms = _strict_u64(arg[:dash])
    if ms is None:
        return None
    tail = arg[dash + 1:]
    if allow_auto_seq and tail == b"*":
        return -(ms + 1)
    seq = _strict_u64(tail)
    if seq is None:
        return None
    return (ms << 64) | seq


def auto_seq_ms(marker: int) -> int:
    """The ms part of an ``ms-*`` marker returned by ``parse_id(..., allow_auto_seq=True)``."""
    return -marker - 1
