"""The server-wide index of IDMP states that hold records, for timer-driven expiry.

A ``WeakDueHeap`` of the states by ``due_ms``, the earliest time one of the state's records
expires (the entry's weak reference is the state's own ``_ref``, made once). The periodic
tick (``expire(now_ms)``) therefore costs one comparison when nothing is due, however many
streams and records exist.

Entries are never updated in place. When a state's due time moves, a new entry is pushed
and the old one becomes stale; an entry counts only while its ``due_ms`` equals the
state's current ``_due``. Weak references keep deleted streams (DEL, FLUSHALL, overwrite)
from being held alive by the index; their entries are dropped when they surface, and the
heap is rebuilt when stale entries outnumber live states, so it cannot grow without bound.
RENAME/MOVE/SWAPDB move the stream object, and with it the state, so expiry continues.
"""

from __future__ import annotations

import weakref

from ..dueheap import WeakDueHeap
from .state import IdmpState

# Rebuild the heap when it holds more than this many entries beyond twice the live states.
_SLACK = 64


class IdmpRegistry:
    __slots__ = ("_heap", "_live")

    def __init__(self):
        # A record expires at its due time itself (sid ms <= now - duration).
        self._heap = WeakDueHeap(inclusive=True)
        self._live = weakref.WeakSet()  # states with at least one record (_due not None)

    def new_state(self, duration: int, maxsize: int) -> IdmpState:
        """A fresh, empty state whose records this registry will expire."""
        return IdmpState(duration, maxsize, self)

    def __len__(self) -> int:
        """Number of live states currently holding records."""
        return sum(1 for s in self._live if s._due is not None)

    def next_due(self) -> int | None:
        """Earliest due time in the heap (possibly of a stale entry), or None."""
        heap = self._heap.heap
        return heap[0][0] if heap else None

    def expire(self, now_ms: int) -> int:
        """Remove every record expired at ``now_ms``; returns how many were removed."""
        heap = self._heap.heap
        if not heap or heap[0][0] > now_ms:  # the common case: nothing due
            return 0
        removed = 0
        live = self._live
        for due, state, _ in self._heap.pop_due(now_ms):  # the deleted streams skipped
            if state._due != due:
                # Superseded by a newer entry, or the records were cleared meanwhile.
                if state._due is None:
                    live.discard(state)
                continue
            # This entry is consumed: clear _due so the state re-schedules its next due.
            state._due = None
            removed += state._expire_due(now_ms)
            if state._due is None:
                live.discard(state)
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
        if self._heap.add(due, ref) > 2 * len(self._live) + _SLACK:
            # Keep only entries that would still be acted on.
            self._heap.compact(lambda due, s: s._due == due)
            for s in list(self._live):
                if s._due is None:
                    self._live.discard(s)
