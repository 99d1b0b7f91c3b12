"""The server-wide index of IDMP states that hold records, for timer-driven expiry.

A min-heap of ``(due_ms, seq, weakref-to-state)``: ``due_ms`` is the earliest time one of
the state's records expires. The periodic tick (``expire(now_ms)``) therefore costs one
comparison when nothing is due, however many streams and records exist.

Entries are never updated in place. When a state's due time moves, a new entry is pushed
and the old one becomes stale; an entry counts only while its ``due_ms`` equals the
state's current ``_due``. Weak references keep deleted streams (DEL, FLUSHALL, overwrite)
from being held alive by the index; their entries are dropped when they surface, and the
heap is rebuilt when stale entries outnumber live states, so it cannot grow without bound.
RENAME/MOVE/SWAPDB move the stream object, and with it the state, so expiry continues.
"""

from __future__ import annotations

import heapq
import itertools
import weakref

from .state import IdmpState

# Rebuild the heap when it holds more than this many entries beyond twice the live states.
_SLACK = 64


class IdmpRegistry:
    __slots__ = ("_heap", "_seq", "_live")

    def __init__(self):
        self._heap: list = []  # (due_ms, seq, weakref(state)); seq breaks ties, never refs
        self._seq = itertools.count()
        self._live = weakref.WeakSet()  # states with at least one record (_due not None)

    def new_state(self, duration: int, maxsize: int) -> IdmpState:
        """A fresh, empty state whose records this registry will expire."""
        return IdmpState(duration, maxsize, self)

    def __len__(self) -> int:
        """Number of live states currently holding records."""
        return sum(1 for s in self._live if s._due is not None)

    def next_due(self) -> int | None:
        """Earliest due time in the heap (possibly of a stale entry), or None."""
        return self._heap[0][0] if self._heap else None

    def expire(self, now_ms: int) -> int:
        """Remove every record expired at ``now_ms``; returns how many were removed."""
        heap = self._heap
        if not heap or heap[0][0] > now_ms:  # the common case: nothing due
            return 0
        removed = 0
        pop = heapq.heappop
        while heap and heap[0][0] <= now_ms:
            due, _, ref = pop(heap)
            state = ref()
            if state is None:
                continue  # the stream was deleted
            if state._due != due:
                # Superseded by a newer entry, or the records were cleared meanwhile.
                if state._due is None:
                    self._live.discard(state)
                continue
            # This entry is consumed: clear _due so the state re-schedules its next due.
            state._due = None
            removed += state._expire_due(now_ms)
            if state._due is None:
                self._live.discard(state)
        return removed

    def discard(self, state: IdmpState) -> None:
        """Stop expiring ``state`` (optional: weak references already cover deletion)."""
        state._due = None
        self._live.discard(state)

    def _schedule(self, state: IdmpState, due: int) -> None:
        ref = state._ref
        if ref is None:
            ref = state._ref = weakref.ref(state)
            self._live.add(state)
        elif state not in self._live:
            self._live.add(state)
        heap = self._heap
        heapq.heappush(heap, (due, next(self._seq), ref))
        if len(heap) > 2 * len(self._live) + _SLACK:
            self._compact()

    def _compact(self) -> None:
        # Keep only entries that would still be acted on.
        keep = []
        for entry in self._heap:
            s = entry[2]()
            if s is not None and s._due == entry[0]:
                keep.append(entry)
        for s in list(self._live):
            if s._due is None:
                self._live.discard(s)
        heapq.heapify(keep)
        self._heap = keep
