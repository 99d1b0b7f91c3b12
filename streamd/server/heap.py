"""How the server process gives freed memory back to the system.

glibc's malloc returns the free top of its heap as soon as a free leaves more than 128 KiB
there. A stream that is deleted and built again, as test suites and benchmarks do between
runs, then takes a page fault for every 4 KiB it grows by, once more. For 360,000 XADDs
of 512 bytes over 50 clients × 16 (python -m bench's load, run by hand after a DEL) that
was about 46,000 faults and 305k ops/s; with this policy 700 to 4,000 faults and 322k to
332k ops/s.
Redis's jemalloc keeps freed pages for a while instead (its dirty_decay_ms, 10 s) and
purges them once they have stayed unused.

``HeapPolicy`` does the same with glibc. free() no longer trims the heap (it still does
past TRIM_MAX of free top), and allocations up to MMAP_MIN come from the heap, where they
are reused, instead of a fresh mapping each time (glibc's own threshold moves up to that
size anyway once it has freed a mapped block). The cron gives the free memory back with
malloc_trim once the dataset has gone DECAY seconds without a write after the last one,
and MEMORY PURGE does at once. A trim walks the heap's free chunks: about 20 ms for
250,000 of them, which is why it waits for a quiet moment instead of running on a timer.

On another C library (musl has no malloc_trim) the policy is unavailable: ``load``
returns None and malloc keeps its own rules.
"""

from __future__ import annotations

import ctypes
import ctypes.util

# mallopt parameters (malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

TRIM_MAX = 1 << 30  # free() still trims a free top larger than this at once
MMAP_MIN = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems
DECAY = 10.0  # seconds without a write before freed memory goes back


class HeapPolicy:
    """Call ``start()`` once, ``tick(dirty, now)`` from the cron (the keyspace's write
    counter and a monotonic clock) and ``trim()`` for MEMORY PURGE."""

    __slots__ = ("_libc", "_dirty", "_since", "_pending", "trims")

    def __init__(self, libc):
        self._libc = libc
        self._dirty = 0  # the write counter at the last tick
        self._since = 0.0  # when it last changed
        self._pending = False  # writes since the last trim
        self.trims = 0

    @classmethod
    def load(cls) -> HeapPolicy | None:
        """A policy for this process's C library, or None if it is not glibc."""
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
            libc.gnu_get_libc_version  # noqa: B018  (raises AttributeError elsewhere)
            libc.malloc_trim
            libc.mallopt
        except (OSError, AttributeError):
            return None
        return cls(libc)

    def start(self) -> None:
        # mallopt returns 1 on success; a refusal leaves glibc's defaults, which still work.
        self._libc.mallopt(M_TRIM_THRESHOLD, TRIM_MAX)
        self._libc.mallopt(M_MMAP_THRESHOLD, MMAP_MIN)

    def tick(self, dirty: int, now: float) -> None:
        if dirty != self._dirty:
            self._dirty, self._since, self._pending = dirty, now, True
        elif self._pending and now - self._since >= DECAY:
            self.trim()

    def trim(self) -> bool:
        """Give the heap's free memory back to the system. Whether there was any."""
        self._pending = False
        self.trims += 1
        return bool(self._libc.malloc_trim(0))
