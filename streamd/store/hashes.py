"""The hash data type and its field expiration (Redis 7.4+).

A hash is a ``dict`` of bytes to bytes. Field TTLs live beside it, in ``ttls``, only once a
field was ever given one: a hash that never had a field TTL pays one ``None`` check.

Redis's listpack hash (``hash-max-listpack-*``) lists fields in the order they were added.
The first field-TTL command on it turns it into a ``listpackex``, which keeps fields sorted
by expiry time: fields with a TTL first, soonest first (a field goes before those expiring
at the same time or later), then the fields without one in the order they got there. That
order shows in HGETALL, HSCAN and friends, so it is reproduced here; a ``hashtable`` hash
has no defined order and is left alone.

Expiry follows Redis's test: a field is gone once its time is strictly before now.
No command names or error texts here.
"""

from __future__ import annotations

import weakref

from ..dueheap import WeakDueHeap

# What setting a field's expiry did (Redis replies with these codes).
NO_FIELD = -2  # no such field
NOT_MET = 0  # the NX / XX / GT / LT condition did not hold
SET = 1  # the expiry was set or updated
DELETED = 2  # the time was not in the future: the field was deleted


class Hash(dict):
    """A hash; ``hashtable`` is set once it outgrew listpack and ``listpackex`` once a
    field-TTL command touched it as a listpack (Redis never converts back from either)."""

    __slots__ = ("hashtable", "listpackex", "ttls", "next_due", "indexed_at", "__weakref__")

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.hashtable = False
        self.listpackex = False
        self.ttls: dict[bytes, int] | None = None  # field -> unix ms; only fields with a TTL
        # At most the earliest TTL in ``ttls`` (never later); exact after ``expire_due``.
        self.next_due = 0
        # The time of this hash's entry in its database's field-expiry heap, 0 when none.
        self.indexed_at = 0

    def copy(self):
        # dict.copy() would drop the subclass and with it the encoding and the TTLs.
        new = Hash(self)
        new.hashtable = self.hashtable
        new.listpackex = self.listpackex
        if self.ttls:
            new.ttls = dict(self.ttls)
            new.next_due = self.next_due
        return new

    # --- field TTLs ----------------------------------------------------------------------
    def ttl_of(self, field: bytes) -> int | None:
        """The field's expiry in unix ms, or ``None`` without one."""
        return self.ttls.get(field) if self.ttls else None

    def set_ttl(self, field: bytes, when_ms: int) -> None:
        """Give the (present) field an expiry time."""
        if self.ttls is None:
            self.ttls = {}
            self.next_due = when_ms
        elif not self.ttls or when_ms < self.next_due:
            self.next_due = when_ms
        self.ttls[field] = when_ms
        if self.listpackex and not self.hashtable:
            self._place_by_expiry(field, when_ms)

    def clear_ttl(self, field: bytes) -> bool:
        """Drop the field's expiry; whether it had one. In a listpackex the field moves
        to the end, behind the fields with a TTL, as Redis re-inserts it."""
        if not self.ttls or self.ttls.pop(field, None) is None:
            return False
        if self.listpackex and not self.hashtable:
            self[field] = self.pop(field)
        return True

    def remove(self, field: bytes) -> bool:
        """Delete a field with its TTL; whether it was there."""
        if field not in self:
            return False
        del self[field]
        if self.ttls:
            self.ttls.pop(field, None)
        return True

    def enable_field_ttls(self) -> None:
        """A field-TTL command is about to work on this hash: a listpack becomes a
        listpackex (even if the command then sets nothing)."""
        if not self.hashtable:
            self.listpackex = True

    def expire_field(self, field: bytes, when_ms: int, cond: str, now_ms: int) -> int:
        """Give ``field`` the expiry ``when_ms`` under ``cond`` ("", "nx", "xx", "gt",
        "lt"). A field without a TTL counts as never expiring: GT and XX fail on it, LT
        holds. A time not after ``now_ms`` deletes the field. Returns NO_FIELD, NOT_MET,
        SET or DELETED."""
        if field not in self:
            return NO_FIELD
        old = self.ttls.get(field) if self.ttls else None
        if old is None:
            if cond == "xx" or cond == "gt":
                return NOT_MET
        elif cond == "nx" or (cond == "gt" and old >= when_ms) or (
                cond == "lt" and old <= when_ms):
            return NOT_MET
        if when_ms <= now_ms:
            self.remove(field)
            return DELETED
        self.set_ttl(field, when_ms)
        return SET

    def is_due(self, now_ms: int) -> bool:
        """Whether some field may have expired by ``now_ms`` (cheap; may say yes wrongly)."""
        return bool(self.ttls) and self.next_due < now_ms

    def expire_due(self, now_ms: int) -> list[bytes]:
        """Remove the fields whose time is before ``now_ms``; the removed field names,
        soonest time first (the order Redis expires them in, and names them in)."""
        ttls = self.ttls
        if not ttls:
            return []
        gone = sorted((f for f, when in ttls.items() if when < now_ms), key=ttls.__getitem__)
        for f in gone:
            del ttls[f]
            del self[f]
        self.next_due = min(ttls.values()) if ttls else 0
        return gone

    def live_copy(self, now_ms: int) -> "Hash":
        """This hash without its expired fields, leaving this one untouched (what reads see
        while expiry is paused)."""
        new = self.copy()
        new.expire_due(now_ms)
        return new

    def _place_by_expiry(self, field: bytes, when_ms: int) -> None:
        ttls = self.ttls
        items = [(f, v) for f, v in self.items() if f != field]
        at = len(items)
        for i, (f, _) in enumerate(items):
            other = ttls.get(f)
            if other is None or other >= when_ms:
                at = i
                break
        items.insert(at, (field, self[field]))
        self.clear()
        self.update(items)


class FieldExpiryIndex(WeakDueHeap):
    """The hashes of one database that have field TTLs, by their earliest one: a heap of
    ``(time, seq, weakref to the hash, key)``. An entry is a hint, checked when it comes
    due: the key may since hold another value, or the hash a later earliest TTL (then it
    goes back in). A hash has an entry no later than its earliest TTL, and only one unless
    it moved.

    The references are weak, as in the IDMP registry: a hash deleted with a TTL years ahead
    is not kept alive by its entry. Entries of dead or TTL-less hashes are dropped when they
    surface, and the heap is rebuilt without them whenever it has doubled since the last
    rebuild, so deleting such hashes cannot grow it without bound."""

    __slots__ = ("_compact_at",)

    def __init__(self):
        super().__init__(inclusive=False)  # a field is gone once its time is before now
        self._compact_at = _COMPACT_MIN

    def track(self, key: bytes, h: Hash) -> None:
        """Make sure ``h`` (now at ``key``) comes up by its earliest TTL."""
        if not h.ttls:
            return
        when = h.next_due
        if h.indexed_at and h.indexed_at <= when:
            return  # an entry at least as early is already queued
        self.push(key, h, when)

    def push(self, key: bytes, h: Hash, when: int) -> None:
        h.indexed_at = when
        if self.add(when, weakref.ref(h), key) >= self._compact_at:
            # Only entries whose hash is gone or holds no TTL any more are certainly
            # useless; the others may still be the one that brings their hash up.
            kept = self.compact(lambda _, other: bool(other.ttls))
            self._compact_at = max(_COMPACT_MIN, 2 * kept)

    def due(self, now_ms: int):
        """Pop and yield ``(key, hash)`` for each entry whose time is before ``now_ms``
        and whose hash still exists; the consumer re-tracks the hashes that keep TTLs."""
        for _, h, key in self.pop_due(now_ms):
            h.indexed_at = 0
            yield key, h

    def hashes(self, data: dict):
        """The distinct hashes with field TTLs that are still where their entry says."""
        seen = set()
        for _, h, key in self.entries():
            if data.get(key) is h and h.ttls and id(h) not in seen:
                seen.add(id(h))
                yield key, h

    def clear(self) -> None:
        super().clear()
        self._compact_at = _COMPACT_MIN


# The heap size below which FieldExpiryIndex never rebuilds itself.
_COMPACT_MIN = 64
