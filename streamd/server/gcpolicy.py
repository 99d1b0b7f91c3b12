"""How the server process uses CPython's cyclic garbage collector.

The data a server holds for long (stream nodes: the node and its three arrays are all
tracked containers) needs no cycle detection: it is freed by reference counting when
trimmed or deleted. Left alone, CPython re-traverses every tracked object each time the
oldest generation has grown by a quarter, so each object is walked about five times while
a stream grows, and each of those full collections stops the server for a time
proportional to the whole heap (about 270 ms at 1.2 million tracked objects on the
reference machine: a stream of 512-byte values holds four per seven entries).

``GcPolicy`` runs a full collection from the server's cron whenever something has reached
the oldest generation since the last tick, and freezes (``gc.freeze``) what survives, so
each one walks only what was promoted since: a few thousand objects, milliseconds. Frozen
objects are still freed by reference counting. Only cyclic garbage among them stays until
the process has doubled its peak memory since the last reclaim, when one full collection
over everything (the pause CPython would have taken anyway, but at every doubling instead
of every quarter) reclaims it. Peak RSS stands in for the frozen set's size, which
``gc.get_freeze_count`` can only give by walking it (about 50 ms at two million objects).
The server's own long-lived structures avoid cycles so that this holds little: a client's
request reader refers back to it weakly, and a consumer group unlinks its pending-entries
ring when it is freed.
"""

from __future__ import annotations

import gc
import resource

# Reclaim when peak RSS has grown by this factor, and by at least FLOOR bytes.
GROWTH = 2.0
FLOOR = 64 << 20


def peak_rss() -> int:
    """The process's peak resident set size in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class GcPolicy:
    """Call ``start()`` once the server is set up and ``tick()`` from its periodic cron."""

    __slots__ = ("_full", "_base", "reclaims")

    def __init__(self):
        self._full = 0  # full collections seen so far
        self._base = 0  # peak RSS right after the last reclaim (or start)
        self.reclaims = 0

    def start(self) -> None:
        gc.collect()
        gc.freeze()  # modules, the command table, config: never garbage
        self._base = peak_rss()
        self._full = gc.get_stats()[2]["collections"]

    def tick(self) -> None:
        if gc.get_count()[2] == 0 and gc.get_stats()[2]["collections"] == self._full:
            return  # nothing reached the oldest generation since the last tick
        # A full collection now walks only what was promoted since the last tick (a few
        # thousand objects at most write rates); left to CPython, the first one after a
        # reclaim would wait for a quarter of the heap and walk all of it at once.
        gc.collect()
        gc.freeze()
        if peak_rss() > max(self._base * GROWTH, self._base + FLOOR):
            self.reclaim()
        self._full = gc.get_stats()[2]["collections"]

    def reclaim(self) -> int:
        """One full collection over everything, frozen included; refreezes the survivors.
        Returns the number of objects collected."""
        gc.unfreeze()
        collected = gc.collect()
        gc.freeze()
        self._base = peak_rss()
        self._full = gc.get_stats()[2]["collections"]
        self.reclaims += 1
        return collected
