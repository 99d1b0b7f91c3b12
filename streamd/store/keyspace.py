"""Numbered databases of keys, with lazy and active expiry, WATCH and blocking hooks.

The store knows nothing of clients or the network. Two kinds of opaque observers hang off a
database and are maintained by the server:

- ``watched``: key -> set of watcher objects; a write to the key sets ``watcher.watch_dirty``.
- ``blocking``: key -> waiters parked on it; ``signal_ready`` queues the key on the keyspace
  so the server can re-run those waiters after the current command.
"""

from __future__ import annotations

import random
import time


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Database:
    __slots__ = ("index", "data", "expires", "watched", "blocking", "keyspace")

    def __init__(self, index: int, keyspace: "Keyspace"):
        self.index = index
        self.data: dict[bytes, object] = {}  # key -> value object (bytes, dict, Stream ...)
        self.expires: dict[bytes, int] = {}  # key -> absolute unix ms; only keys with a TTL
        self.watched: dict[bytes, set] = {}  # key -> watchers (see module doc)
        self.blocking: dict[bytes, object] = {}  # key -> server-owned waiter queue
        self.keyspace = keyspace

    # --- lookup --------------------------------------------------------------------------
    def get(self, key: bytes):
        """The live value at ``key`` or ``None``; an expired key is removed on the way."""
        value = self.data.get(key)
        if value is not None and self.expires and key in self.expires:
            if self.expires[key] <= now_ms():
                self._expire(key)
                return None
        return value

    def exists(self, key: bytes) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return len(self.data)

    def keys(self):
        """Live keys (expired ones are purged first)."""
        if self.expires:
            t = now_ms()
            for k in [k for k, when in self.expires.items() if when <= t]:
                self._expire(k)
        return list(self.data)

    # --- mutation ------------------------------------------------------------------------
    def set(self, key: bytes, value, *, keep_ttl: bool = False) -> None:
        """Store ``value`` at ``key``, replacing any previous value (and its TTL)."""
        old = self.data.get(key)
        self.data[key] = value
        if not keep_ttl and self.expires:
            self.expires.pop(key, None)
        self.modified(key)
        if old is not None and type(old) is not type(value) and key in self.blocking:
            # A type change must reach waiters whose command fails on it (XREADGROUP).
            self.keyspace.ready.append((self, key, True))

    def add(self, key: bytes, value) -> None:
        """Create ``key`` (known to be absent) without touching WATCH state twice."""
        self.data[key] = value
        self.modified(key)

    def delete(self, key: bytes) -> bool:
        if key not in self.data:
            return False
        if self.expires and key in self.expires and self.expires[key] <= now_ms():
            self._expire(key)
            return False
        del self.data[key]
        if self.expires:
            self.expires.pop(key, None)
        self.modified(key)
        if key in self.blocking:
            self.keyspace.ready.append((self, key, True))
        return True

    def pop(self, key: bytes):
        """Remove and return the live value (for RENAME/MOVE), or ``None``."""
        value = self.get(key)
        if value is None:
            return None
        ttl = self.expires.pop(key, None) if self.expires else None
        del self.data[key]
        self.modified(key)
        if key in self.blocking:
            self.keyspace.ready.append((self, key, True))
        return value, ttl

    def set_expire(self, key: bytes, when_ms: int) -> None:
        self.expires[key] = when_ms
        self.modified(key)

    def persist(self, key: bytes) -> bool:
        if self.expires.pop(key, None) is None:
            return False
        self.modified(key)
        return True

    def ttl_ms(self, key: bytes) -> int | None:
        """Absolute expiry in unix ms, or ``None`` when the key has no TTL."""
        return self.expires.get(key) if self.expires else None

    def flush(self) -> int:
        n = len(self.data)
        keys = list(self.data)
        self.data = {}
        self.expires = {}
        for k in keys:
            self._touch_watchers(k)
            if k in self.blocking:
                self.keyspace.ready.append((self, k, True))
        return n

    # --- change signals -------------------------------------------------------------------
    def modified(self, key: bytes, changes: int = 1) -> None:
        """Record a write to ``key``: dirty counter and WATCH invalidation."""
        self.keyspace.dirty += changes
        if self.watched:
            self._touch_watchers(key)

    def _touch_watchers(self, key: bytes) -> None:
        watchers = self.watched.get(key)
        if watchers:
            for w in watchers:
                w.watch_dirty = True

    def signal_ready(self, key: bytes) -> None:
        """New data at ``key``: let the server re-run commands blocked on it."""
        if key in self.blocking:
            self.keyspace.ready.append((self, key, False))

    def _expire(self, key: bytes) -> None:
        del self.data[key]
        del self.expires[key]
        self.keyspace.expired_keys += 1
        self.modified(key)
        if key in self.blocking:
            self.keyspace.ready.append((self, key, True))

    # --- active expiry -------------------------------------------------------------------
    def active_expire(self, t: int, samples: int = 20) -> int:
        """Redis-style sampling: repeat while more than a quarter of the sample expired."""
        removed = 0
        while self.expires:
            keys = random.sample(list(self.expires), min(samples, len(self.expires))) \
                if len(self.expires) > samples else list(self.expires)
            hit = 0
            for k in keys:
                if self.expires.get(k, t + 1) <= t:
                    self._expire(k)
                    hit += 1
            removed += hit
            if hit * 4 <= len(keys):
                break
        return removed


class Keyspace:
    """All databases of one server, plus the counters INFO reports about them."""

    def __init__(self, databases: int = 16):
        self.dirty = 0  # writes since the last save (INFO rdb_changes_since_last_save)
        self.expired_keys = 0
        # (db, key, deleted) triples signalled during the current command; drained by server
        self.ready: list = []
        self.idmp = None  # IdmpRegistry set by the server: streams holding IDMP records
        self.dbs = [Database(i, self) for i in range(databases)]

    def active_expire(self) -> int:
        t = now_ms()
        return sum(db.active_expire(t) for db in self.dbs if db.expires)

    def swap(self, a: int, b: int) -> None:
        da, db_ = self.dbs[a], self.dbs[b]
        before_a, before_b = da.data, db_.data
        da.data, db_.data = db_.data, da.data
        da.expires, db_.expires = db_.expires, da.expires
        for d in (da, db_):
            # A watched key changed if it existed on either side: it got another value or
            # vanished (watchers hang off the db a client watched in, not off the data).
            for k in list(d.watched):
                if k in before_a or k in before_b:
                    d._touch_watchers(k)
            # Waiters re-run when their key now holds data; a vanished key only wakes the
            # ones that care about deletion.
            for k in list(d.blocking):
                self.ready.append((d, k, k not in d.data))
