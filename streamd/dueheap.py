"""A min-heap of due times for objects held weakly: the core of the timer-driven expiry
indexes of the store (hashes with field TTLs) and of IDMP (states holding records).

An entry is ``(due, seq, weakref, key)``. ``seq`` breaks ties, so weakrefs and keys are
never compared; ``key`` is whatever the user needs besides the object (a hash's key in its
database; None for IDMP). Entries are hints, never updated in place: when an object's due
time moves, its user pushes another entry and decides, as each surfaces, whether it still
counts. The weak references keep deleted objects from being held alive by the heap; their
entries are dropped when they surface and when the user has the heap rebuilt.

This module imports nothing from streamd, so store and idmp may both use it.
"""

from __future__ import annotations

import heapq
import itertools
import operator


class WeakDueHeap:
    __slots__ = ("heap", "_seq", "_due_by")

    def __init__(self, inclusive: bool):
        """``inclusive``: an entry is due at its own time (``due <= now``), else only
        once that time has passed (``due < now``)."""
        self.heap: list = []
        self._seq = itertools.count()
        self._due_by = operator.le if inclusive else operator.lt

    def __bool__(self) -> bool:
        return bool(self.heap)

    def add(self, due: int, ref, key=None) -> int:
        """Queue the object behind ``ref`` for ``due``; the heap's size after."""
        heap = self.heap
        heapq.heappush(heap, (due, next(self._seq), ref, key))
        return len(heap)

    def pop_due(self, now: int):
        """Pop each entry due at ``now`` and yield ``(due, object, key)`` for those whose
        object still lives. Lazy: entries not reached when the caller stops stay queued,
        and entries added meanwhile are seen if they are due."""
        heap = self.heap
        due_by = self._due_by
        pop = heapq.heappop
        while heap and due_by(heap[0][0], now):
            due, _, ref, key = pop(heap)
            obj = ref()
            if obj is not None:
                yield due, obj, key

    def entries(self):
        """``(due, object, key)`` for every entry whose object lives, in no order."""
        for due, _, ref, key in self.heap:
            obj = ref()
            if obj is not None:
                yield due, obj, key

    def compact(self, keep) -> int:
        """Drop the entries whose object died or for which ``keep(due, object)`` is false;
        the heap's size after. The list is rebuilt in place, so a ``pop_due`` under way
        goes on over the rebuilt heap."""
        heap = self.heap
        kept = []
        for entry in heap:
            obj = entry[2]()
            if obj is not None and keep(entry[0], obj):
                kept.append(entry)
        heapq.heapify(kept)
        heap[:] = kept
        return len(kept)

    def clear(self) -> None:
        self.heap.clear()
