"""Stream-ID arithmetic for planning reads: parse, format, order and split ID ranges.

Everything here is pure (no I/O), so partition planning built on it is a deterministic
function of its inputs -- the property Spark needs to replay a micro-batch identically.
"""

from __future__ import annotations

MAX_SEQ = 2**64 - 1
MAX_MS = 2**64 - 1

StreamID = tuple[int, int]


def parse_id(text: str | bytes, *, default_seq: int = 0) -> StreamID:
    """Parse ``ms-seq`` (or a bare ``ms``, completed with ``default_seq``) into a tuple."""
    if isinstance(text, bytes):
        text = text.decode()
    ms, sep, seq = text.partition("-")
    try:
        out = (int(ms), int(seq) if sep else default_seq)
    except ValueError:
        raise ValueError(f"invalid stream ID {text!r}: expected <ms>-<seq>") from None
    if not (0 <= out[0] <= MAX_MS and 0 <= out[1] <= MAX_SEQ):
        raise ValueError(f"invalid stream ID {text!r}: out of range")
    return out


def fmt_id(sid: StreamID) -> str:
    """Format an ID tuple as ``ms-seq``."""
    return f"{sid[0]}-{sid[1]}"


def next_id(sid: StreamID) -> StreamID:
    """The smallest ID after ``sid`` (which must not be the largest ID)."""
    return (sid[0], sid[1] + 1) if sid[1] < MAX_SEQ else (sid[0] + 1, 0)


def split_range(first: StreamID, last: StreamID, parts: int) -> list[tuple[StreamID, StreamID]]:
    """Cut the inclusive ID range [first, last] into at most ``parts`` contiguous slices.

    Slices are cut on the millisecond part only (entry IDs are time-based, so this is
    splitting by arrival time); a range narrower than ``parts`` milliseconds gets fewer
    slices. The result covers the range exactly, with no gap and no overlap, and depends
    on nothing but the arguments.
    """
    if last < first:
        return []
    width = last[0] - first[0] + 1
    n = max(1, min(parts, width))
    if n == 1:
        return [(first, last)]
    bounds = [first[0] + width * i // n for i in range(n + 1)]
    slices = []
    for i in range(n):
        lo = first if i == 0 else (bounds[i], 0)
        hi = last if i == n - 1 else (bounds[i + 1] - 1, MAX_SEQ)
        slices.append((lo, hi))
    return slices
