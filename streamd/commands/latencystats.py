"""Per-command latency figures as Redis 7.0 reports them (INFO latencystats, LATENCY
HISTOGRAM), from the counts the dispatcher keeps on each command.

Redis records every call's duration, in whole microseconds times 1000 (nanoseconds, at
least 1, at most one second), into an HDR histogram with 2 significant digits: values
below 256 ns are exact, above that each power-of-two range is split into 128 equal
buckets. Its percentiles name a bucket's highest value; LATENCY HISTOGRAM walks the
powers of two from 1024 ns and names each step by its bucket's highest value in
microseconds (1, 2, 4, 8, 16, 33, 66, 132, ...), with the calls up to there.

streamd counts calls per whole microsecond (``Command.hist``, for the fast ones) and per
HDR bucket above that (``Command.hist_big``); the figures are derived only when asked.
"""

from __future__ import annotations

from ..config import percentile_text

HIST_LEN = 256  # whole microseconds counted one by one; slower calls go to ``hist_big``
_MIN_NS, _MAX_NS = 1, 1_000_000_000
# The last power of two LATENCY HISTOGRAM reaches stays inside the histogram's range; a
# call beyond it is named by the range's last bucket (2^30 - 1 ns).
_LAST_STEP = 19
_BEYOND_LAST_USEC = ((1 << 30) - 1) // 1000


def recorded_ns(usec: int) -> int:
    """The value Redis records for a call of ``usec`` microseconds."""
    return min(max(usec * 1000, _MIN_NS), _MAX_NS)


def _bucket(ns: int) -> tuple[int, int]:
    """(lowest value, size) of the HDR bucket holding ``ns``."""
    shift = ns.bit_length() - 8
    if shift <= 0:
        return ns, 1
    return (ns >> shift) << shift, 1 << shift


def big_bucket(usec: int) -> int:
    """``hist_big``'s key for a slow call: its bucket's lowest value in ns."""
    return _bucket(recorded_ns(usec))[0]


def _counts(cmd) -> list[tuple[int, int]]:
    """(bucket's lowest ns, calls) of a command, in increasing order, merged per bucket."""
    merged: dict[int, int] = {}
    for usec, n in enumerate(cmd.hist):
        if n:
            low = _bucket(recorded_ns(usec))[0]
            merged[low] = merged.get(low, 0) + n
    for low, n in cmd.hist_big.items():
        merged[low] = merged.get(low, 0) + n
    return sorted(merged.items())


def command_usec(cmd) -> int:
    """INFO commandstats's time of a command: the fast calls' microseconds, counted only
    in its histogram (or its shadow counts while latency-tracking is off), and the rest."""
    return cmd.usec + sum(usec * n for counts in (cmd.hist, cmd.shadow)
                          for usec, n in enumerate(counts) if n)


def total_calls(cmd) -> int:
    return sum(cmd.hist) + sum(cmd.hist_big.values())


def cdf(cmd) -> tuple[int, list[tuple[int, int]]]:
    """LATENCY HISTOGRAM's (calls, [(microseconds, calls up to there)]): a step is shown
    when it adds calls."""
    counts = _counts(cmd)
    total = sum(n for _, n in counts)
    out: list[tuple[int, int]] = []
    cumulative = 0
    i = 0
    step = 0
    while cumulative < total:
        if step > _LAST_STEP:
            cumulative = total
            out.append((_BEYOND_LAST_USEC, total))
            break
        level = 1024 << step
        highest = level + _bucket(level)[1] - 1
        before = cumulative
        while i < len(counts) and counts[i][0] <= highest:
            cumulative += counts[i][1]
            i += 1
        if cumulative > before:
            out.append((highest // 1000, cumulative))
        step += 1
    return total, out


def _value_at(counts: list[tuple[int, int]], total: int, percentile: float) -> int:
    wanted = int((min(percentile, 100.0) / 100) * total + 0.5)
    wanted = max(wanted, 1)
    seen = 0
    for low, n in counts:
        seen += n
        if seen >= wanted:
            return low if percentile == 0.0 else low + _bucket(low)[1] - 1
    return 0


def percentiles_line(cmd, name: str, percentiles) -> str:
    """INFO latencystats's line for a command with calls."""
    counts = _counts(cmd)
    total = sum(n for _, n in counts)
    parts = ["p%s=%.3f" % (percentile_text(p), _value_at(counts, total, p) / 1000.0)
             for p in percentiles]
    return f"latency_percentiles_usec_{name}:" + ",".join(parts)


def tracked(cmd):
    """The command object whose calls ``cmd``'s name stands for: a command that also runs
    alone (COMMAND) keeps its figures on its plain form."""
    return cmd.bare if cmd.bare is not None else cmd
