"""Consumer groups: the pending-entries list (PEL), consumers, and the group counters.

Data rules only: nothing here knows a command name, an argv position or an error text.
Stream IDs are single ints (see ``streamid``). Memory grows with the number of pending
entries and consumers, never with the stream length.

A group keeps every pending entry three ways:

- ``pel``: dict ID -> ``PendingEntry``, for O(1) lookup;
- ``_ids``: a blocked sorted list of the same IDs, for ID-ordered ranges (XPENDING,
  XAUTOCLAIM, XINFO) in O(log n + output);
- a doubly linked list in *delivery-time order*, for CLAIM reads: the 8.8 NACK zone
  (entries released by XNACK, in the order they were released) at the head, then the
  others by (delivery_time, order of insertion). Deliveries happen "now", so they append at
  the tail in O(1); only XCLAIM with a past IDLE/TIME walks back from the tail to its slot.

Each consumer has its own sorted ID list (its view of the PEL) for history reads.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

UNKNOWN = -1  # entries_read value meaning "unknown" (XINFO shows null)

_LOAD = 256  # sublist size of the blocked sorted list (split at 2 * _LOAD)


class SortedIds:
    """A sorted set of ints as a list of sorted sublists (a one-level B-tree).

    ``add``/``discard`` cost O(log n + _LOAD); appending a new maximum (the usual case:
    deliveries come in ID order) is O(log n) with no shifting. Iterating a range costs
    O(log n + size of the range).
    """

    __slots__ = ("_lists", "_maxes", "_len")

    def __init__(self, items=()):
        self._lists: list[list[int]] = []  # non-empty sorted sublists, in order
        self._maxes: list[int] = []  # _maxes[i] == _lists[i][-1]
        self._len = 0
        items = sorted(items)
        for i in range(0, len(items), _LOAD):
            chunk = items[i:i + _LOAD]
            self._lists.append(chunk)
            self._maxes.append(chunk[-1])
        self._len = len(items)

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __iter__(self):
        for sub in self._lists:
            yield from sub

    def add(self, x: int) -> None:
        """Insert ``x``; the caller guarantees it is absent."""
        maxes = self._maxes
        if maxes and x > maxes[-1]:  # the common case: a new largest ID
            i = len(maxes) - 1
            sub = self._lists[i]
            sub.append(x)
        elif not maxes:
            self._lists.append([x])
            maxes.append(x)
            self._len = 1
            return
        else:
            i = bisect_left(maxes, x)
            if i == len(maxes):
                i -= 1
                sub = self._lists[i]
                sub.append(x)
            else:
                sub = self._lists[i]
                insort(sub, x)
        maxes[i] = sub[-1]
        self._len += 1
        self._split(i)

    def extend_new(self, xs: list[int]) -> None:
        """Add ascending ``xs``, all larger than every member (a batch of deliveries)."""
        if not xs:
            return
        lists, maxes = self._lists, self._maxes
        if lists:
            sub = lists[-1]
            sub.extend(xs)
        else:
            sub = list(xs)
            lists.append(sub)
            maxes.append(0)
        maxes[-1] = sub[-1]
        self._len += len(xs)
        self._split(len(lists) - 1)

    def _split(self, i: int) -> None:
        """Keep sublist ``i`` within 2 * _LOAD by moving its tail, _LOAD at a time, into
        new sublists right after it."""
        lists, maxes = self._lists, self._maxes
        sub = lists[i]
        while len(sub) > 2 * _LOAD:
            half = sub[_LOAD:]
            del sub[_LOAD:]
            maxes[i] = sub[-1]
            i += 1
            lists.insert(i, half)
            maxes.insert(i, half[-1])
            sub = half

    def discard(self, x: int) -> bool:
        lists = self._lists
        if not lists:
            return False
        sub = lists[0]
        if sub[0] == x:  # acknowledging the oldest, the usual case: the sublist's max stays
            del sub[0]
            self._len -= 1
            if not sub:
                del lists[0]
                del self._maxes[0]
            return True
        maxes = self._maxes
        i = bisect_left(maxes, x)
        if i == len(maxes):
            return False
        sub = lists[i]
        j = bisect_left(sub, x)
        if j == len(sub) or sub[j] != x:
            return False
        del sub[j]
        self._len -= 1
        if not sub:
            del lists[i]
            del self._maxes[i]
        elif j == len(sub):  # the sublist's maximum went
            self._maxes[i] = sub[-1]
        return True

    def first(self) -> int | None:
        return self._lists[0][0] if self._lists else None

    def last(self) -> int | None:
        return self._maxes[-1] if self._maxes else None

    def irange(self, lo: int, hi: int):
        """IDs with ``lo <= id <= hi``, ascending (lazily, so a caller may stop early)."""
        maxes = self._maxes
        i = bisect_left(maxes, lo)
        if i == len(maxes):
            return
        lists = self._lists
        j = bisect_left(lists[i], lo)
        while i < len(lists):
            sub = lists[i]
            end = bisect_right(sub, hi)
            for k in range(j, end):
                yield sub[k]
            if end < len(sub):
                return
            i += 1
            j = 0

    def copy(self) -> "SortedIds":
        new = SortedIds()
        new._lists = [list(s) for s in self._lists]
        new._maxes = list(self._maxes)
        new._len = self._len
        return new


class PendingEntry:
    """One delivered-but-unacknowledged entry; also a node of the time-ordered list."""

    __slots__ = ("id", "consumer", "delivery_time", "delivery_count", "nacked", "prev", "next")

    def __init__(self, sid: int, consumer: "Consumer | None", delivery_time: int,
                 delivery_count: int):
        self.id = sid  # stream ID of the entry (the entry itself may have been deleted)
        self.consumer = consumer  # owner; None for unowned (NACKed / XNACK FORCE) entries
        self.delivery_time = delivery_time  # unix ms of the last delivery; 0 while NACKed
        self.delivery_count = delivery_count  # deliveries so far (XNACK may set any value)
        self.nacked = False  # in the NACK zone at the head of the time order
        self.prev: PendingEntry | None = None  # time-ordered list links (circular,
        self.next: PendingEntry | None = None  # through the group's sentinel)


class Consumer:
    __slots__ = ("name", "seen_time", "active_time", "pel")

    def __init__(self, name: bytes, seen_time: int, active_time: int = -1):
        self.name = name
        self.seen_time = seen_time  # unix ms of the last attempted interaction
        self.active_time = active_time  # unix ms of the last successful one; -1 = never
        self.pel = SortedIds()  # IDs of the pending entries this consumer owns


class ConsumerGroup:
    __slots__ = ("name", "last_id", "entries_read", "pel", "_ids", "consumers", "_head",
                 "_nack_tail", "nacked_count")

    def __init__(self, name: bytes, last_id: int, entries_read: int = UNKNOWN):
        self.name = name
        self.last_id = last_id  # last ID delivered to the group (XGROUP SETID may move it back)
        self.entries_read = entries_read  # logical read counter; UNKNOWN when not derivable
        self.pel: dict[int, PendingEntry] = {}  # ID -> pending entry
        self._ids = SortedIds()  # the keys of ``pel``, sorted
        self.consumers: dict[bytes, Consumer] = {}  # name -> consumer (report sorted)
        head = PendingEntry(-1, None, 0, 0)  # sentinel of the circular time-ordered list
        head.prev = head.next = head
        self._head = head
        self._nack_tail = head  # last node of the NACK zone, or the sentinel when empty
        self.nacked_count = 0  # number of entries in the NACK zone

    # --- consumers -----------------------------------------------------------------------
    def get_consumer(self, name: bytes) -> Consumer | None:
        return self.consumers.get(name)

    def create_consumer(self, name: bytes, now: int) -> tuple[Consumer, bool]:
        """The consumer ``name``, created (seen now, never active) if absent; (c, created)."""
        c = self.consumers.get(name)
        if c is not None:
            return c, False
        c = self.consumers[name] = Consumer(name, now)
        return c, True

    def delete_consumer(self, name: bytes) -> int | None:
        """Remove a consumer and the PEL entries it owns; their number, or None if absent.
        Unowned (NACKed) entries are not touched."""
        c = self.consumers.pop(name, None)
        if c is None:
            return None
        n = len(c.pel)
        for sid in c.pel:
            pe = self.pel.pop(sid)
            self._ids.discard(sid)
            self._unlink(pe)
        return n

    def sorted_consumers(self) -> list[Consumer]:
        return [self.consumers[k] for k in sorted(self.consumers)]

    # --- time-ordered list ---------------------------------------------------------------
    def _unlink(self, pe: PendingEntry) -> None:
        if pe.nacked:
            if self._nack_tail is pe:
                self._nack_tail = pe.prev
            pe.nacked = False
            self.nacked_count -= 1
        pe.prev.next = pe.next
        pe.next.prev = pe.prev

    @staticmethod
    def _insert_after(node: PendingEntry, pe: PendingEntry) -> None:
        pe.prev = node
        pe.next = node.next
        node.next.prev = pe
        node.next = pe

    def _place_timed(self, pe: PendingEntry) -> None:
        """Insert ``pe`` (not linked) after the last non-NACKed entry delivered at or
        before its delivery time: O(1) for "now", a walk back from the tail otherwise."""
        node = self._head.prev
        t = pe.delivery_time
        while node is not self._head and not node.nacked and node.delivery_time > t:
            node = node.prev
        self._insert_after(node, pe)

    def _place_nacked(self, pe: PendingEntry) -> None:
        self._insert_after(self._nack_tail, pe)
        self._nack_tail = pe
        pe.nacked = True
        self.nacked_count += 1

    def by_time(self):
        """Pending entries in CLAIM order: NACK zone first, then longest idle first.
        Safe against the caller re-placing the yielded entry (the next node is taken first)."""
        head = self._head
        node = head.next
        while node is not head:
            nxt = node.next
            yield node
            node = nxt

    # --- the PEL -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.pel)

    def _set_owner(self, pe: PendingEntry, consumer: Consumer | None) -> None:
        if pe.consumer is consumer:
            return
        if pe.consumer is not None:
            pe.consumer.pel.discard(pe.id)
        if consumer is not None:
            consumer.pel.add(pe.id)
        pe.consumer = consumer

    def add_pending(self, sid: int, consumer: Consumer | None, delivery_time: int,
                    delivery_count: int) -> PendingEntry:
        """A new PEL entry (``sid`` must not be pending)."""
        pe = PendingEntry(sid, consumer, delivery_time, delivery_count)
        self.pel[sid] = pe
        self._ids.add(sid)
        if consumer is not None:
            consumer.pel.add(sid)
        tail = self._head.prev
        if tail is self._head or tail.nacked or tail.delivery_time <= delivery_time:
            self._insert_after(tail, pe)  # delivered "now": the tail (no walk)
        else:
            self._place_timed(pe)
        return pe

    def deliver_new(self, stream, consumer: Consumer, sids: list[int], now: int,
                    noack: bool = False) -> None:
        """A ``>`` read of ``sids`` (ascending, all beyond ``last_id``) by ``consumer``:
        advance the group, and unless NOACK put each entry in the PEL as delivered now.

        Same result as ``advance`` + ``deliver`` per ID; the usual case (IDs beyond every
        pending one, counters derivable) is done for the whole batch at once."""
        if not sids:
            return
        last = self.last_id
        if (self.entries_read != UNKNOWN and sids[0] > last and last >= stream.first_id
                and not has_tombstone_from(stream, last)):
            # Holds for every later ID of the batch too: each is a live entry past last.
            self.entries_read += len(sids)
            self.last_id = sids[-1]
        else:
            for sid in sids:
                self.advance(stream, sid)
        if noack:
            return
        ids = self._ids
        head = self._head
        tail = head.prev
        top = ids.last()
        if (top is None or sids[0] > top) and (tail is head or tail.nacked
                                               or tail.delivery_time <= now):
            pel = self.pel
            for sid in sids:
                pe = PendingEntry(sid, consumer, now, 1)
                pel[sid] = pe
                pe.prev = tail
                tail.next = pe
                tail = pe
            tail.next = head
            head.prev = tail
            ids.extend_new(sids)
            consumer.pel.extend_new(sids)  # a subset of ids: also beyond its top
        else:
            for sid in sids:
                self.deliver(consumer, sid, now)

    def deliver(self, consumer: Consumer, sid: int, now: int) -> PendingEntry:
        """A ``>`` delivery of ``sid`` to ``consumer``: a new PEL entry, or the existing one
        (possible after SETID moved back) reassigned with its count reset to 1."""
        pe = self.pel.get(sid)
        if pe is None:
            return self.add_pending(sid, consumer, now, 1)
        self.claim(pe, consumer, now, 1)
        return pe

    def claim(self, pe: PendingEntry, consumer: Consumer, delivery_time: int,
              delivery_count: int) -> None:
        """Give ``pe`` to ``consumer`` as delivered at ``delivery_time`` (leaves the NACK zone)."""
        self._set_owner(pe, consumer)
        pe.delivery_count = delivery_count
        self.redeliver(pe, delivery_time)

    def redeliver(self, pe: PendingEntry, delivery_time: int) -> None:
        """Set the delivery time of ``pe`` and move it to its place in the time order."""
        self._unlink(pe)
        pe.delivery_time = delivery_time
        self._place_timed(pe)

    def remove(self, sid: int) -> bool:
        """Drop ``sid`` from the PEL (XACK, deleted entries, DELREF); True if it was there."""
        pe = self.pel.pop(sid, None)
        if pe is None:
            return False
        self._ids.discard(sid)
        if pe.consumer is not None:
            pe.consumer.pel.discard(sid)
            pe.consumer = None
        if pe.nacked:
            self._unlink(pe)
        else:  # _unlink's whole work for an entry outside the NACK zone (XACK's case)
            pe.prev.next = pe.next
            pe.next.prev = pe.prev
        return True

    ack = remove

    def nack(self, sid: int, delivery_count: int) -> bool:
        """Release a pending entry: unowned, delivery time 0, at the tail of the NACK zone.
        False if ``sid`` is not pending."""
        pe = self.pel.get(sid)
        if pe is None:
            return False
        self._set_owner(pe, None)
        self._unlink(pe)
        pe.delivery_time = 0
        pe.delivery_count = delivery_count
        self._place_nacked(pe)
        return True

    def add_nacked(self, sid: int, delivery_count: int) -> PendingEntry:
        """A new unowned entry in the NACK zone (XNACK FORCE); ``sid`` must not be pending."""
        pe = PendingEntry(sid, None, 0, delivery_count)
        self.pel[sid] = pe
        self._ids.add(sid)
        self._place_nacked(pe)
        return pe

    def first_pending(self) -> int | None:
        return self._ids.first()

    def last_pending(self) -> int | None:
        return self._ids.last()

    def pending_ids(self, start: int, end: int, consumer: Consumer | None = None):
        """Pending IDs in ``[start, end]`` ascending, of the whole group or of ``consumer``."""
        source = self._ids if consumer is None else consumer.pel
        return source.irange(start, end)

    def owner_counts(self) -> list[tuple[bytes, int]]:
        """(consumer name, owned entries) for consumers owning ≥1 entry, in name order."""
        return [(c.name, len(c.pel)) for c in self.sorted_consumers() if c.pel]

    # --- counters ------------------------------------------------------------------------
    def set_position(self, stream, last_id: int, entries_read: int) -> None:
        """XGROUP CREATE/SETID: position and counter (a counter beyond the stream's
        entries_added is capped to it; UNKNOWN stays unknown)."""
        self.last_id = last_id
        self.entries_read = cap_entries_read(stream, entries_read)

    def advance(self, stream, sid: int) -> None:
        """Record that ``sid`` (> last_id) was delivered as a new entry (``>`` read)."""
        if sid <= self.last_id:
            return
        if (self.entries_read != UNKNOWN and self.last_id >= stream.first_id
                and not has_tombstone_from(stream, self.last_id)):
            self.entries_read += 1
        elif stream.entries_added:
            self.entries_read = estimate_entries_read(stream, sid)
        self.last_id = sid

    def lag(self, stream) -> int | None:
        """Entries not yet delivered to the group, or None when not derivable."""
        if not stream.entries_added or not stream.length:
            return 0
        if self.last_id < stream.first_id and stream.max_deleted_id < stream.first_id:
            return stream.length
        if self.entries_read != UNKNOWN and not has_tombstone_from(stream, self.last_id):
            return stream.entries_added - self.entries_read
        est = estimate_entries_read(stream, self.last_id)
        return None if est == UNKNOWN else stream.entries_added - est

    def __del__(self):
        # The pending entries and the sentinel form a ring, which reference counting alone
        # cannot free; unlink it so the group's pending entries go with the group.
        node = self._head
        while node is not None:
            node.prev, node.next, node = None, None, node.next

    # --- copying -------------------------------------------------------------------------
    def copy(self) -> "ConsumerGroup":
        new = ConsumerGroup(self.name, self.last_id, self.entries_read)
        for name, c in self.consumers.items():
            new.consumers[name] = Consumer(name, c.seen_time, c.active_time)
        for pe in self.by_time():
            owner = new.consumers[pe.consumer.name] if pe.consumer is not None else None
            npe = PendingEntry(pe.id, None, pe.delivery_time, pe.delivery_count)
            new.pel[pe.id] = npe
            new._set_owner(npe, owner)
            if pe.nacked:
                new._place_nacked(npe)
            else:
                new._insert_after(new._head.prev, npe)  # same order as the original
        new._ids = self._ids.copy()
        return new


# --- stream-level rules ---------------------------------------------------------------------

def cap_entries_read(stream, entries_read: int) -> int:
    if entries_read != UNKNOWN and entries_read > stream.entries_added:
        return stream.entries_added
    return entries_read


def has_tombstone_from(stream, sid: int) -> bool:
    """Is there a deleted entry at or after ``sid`` (up to the end of the stream)?
    Only the largest deleted ID is known, so it stands for all of them."""
    md = stream.max_deleted_id
    if not stream.length or not md:
        return False
    if stream.first_id > md:
        return False  # every deletion happened before the current first entry
    return sid <= md


def estimate_entries_read(stream, sid: int) -> int:
    """The logical read counter of ``sid`` (entries added up to and including it), or
    UNKNOWN when deletions make it impossible to know."""
    added = stream.entries_added
    if not added:
        return 0
    if not stream.length and sid <= stream.last_id:
        return added
    md = stream.max_deleted_id
    if sid and sid < md:
        return UNKNOWN
    if sid == stream.last_id:
        return added
    if sid > stream.last_id:
        return UNKNOWN
    first = stream.first_id
    if not md or md < first:
        if sid < first:
            return added - stream.length
        if sid == first:
            return added - stream.length + 1
    return UNKNOWN


def is_referenced(stream, sid: int) -> bool:
    """Would deleting ``sid`` lose something a group still needs (the ACKED strategy)?
    True iff some group has not read that far yet, or holds it in its PEL."""
    groups = stream.groups
    if not groups:
        return False
    for g in groups.values():
        if sid > g.last_id or sid in g.pel:
            return True
    return False


def drop_references(stream, sid: int) -> None:
    """DELREF: remove ``sid`` from every group's PEL."""
    for g in stream.groups.values():
        g.remove(sid)
