"""Numbered databases of keys, with lazy and active expiry, WATCH and blocking hooks.

The store knows nothing of clients or the network. Two kinds of opaque observers hang off a
database and are maintained by the server:

- ``watched``: key -> set of watcher objects; a write to the key sets ``watcher.watch_dirty``.
- ``blocking``: key -> waiters parked on it; ``signal_ready`` queues the key on the keyspace
  so the server can re-run those waiters after the current command.

Client-side caching (CLIENT TRACKING) hangs off the keyspace too: ``Keyspace.tracking`` is
None unless the server has something to invalidate, else its object with
``invalidate(key, by_command)`` (a key changed) and ``flushed()`` (FLUSHDB/FLUSHALL).

Keyspace events (``notify-keyspace-events``) go to one hook the server installs. Commands
announce their own events through ``Database.notify``; the store announces only what it
does by itself: a key created (``new``), a key expired (``expired``), a read that found
no key (``keymiss``), and hash fields expired (``hexpired``, then ``del`` when that empties
the hash).
"""

from __future__ import annotations

import random
import time

from .hashes import FieldExpiryIndex, Hash


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# Keyspace event classes, Redis's NOTIFY_* bits; the letters are notify-keyspace-events'.
EV_GENERIC = 1 << 2  # g
EV_STRING = 1 << 3  # $
EV_LIST = 1 << 4  # l
EV_SET = 1 << 5  # s
EV_HASH = 1 << 6  # h
EV_ZSET = 1 << 7  # z
EV_EXPIRED = 1 << 8  # x
EV_EVICTED = 1 << 9  # e
EV_STREAM = 1 << 10  # t
EV_KEY_MISS = 1 << 11  # m
EV_MODULE = 1 << 12  # d
EV_NEW = 1 << 13  # n
EV_OVERWRITTEN = 1 << 15  # o (Redis 8.2): a value replaced by SET, MSET, RENAME, COPY ...
EV_TYPE_CHANGED = 1 << 16  # c (Redis 8.2): ... by one of another type
# The one table of the class letters (config.py parses and spells the setting with it):
# first the ten 'A' stands for, in the order CONFIG GET lists them, then those it omits.
EVENT_LETTERS = {"g": EV_GENERIC, "$": EV_STRING, "l": EV_LIST, "s": EV_SET, "h": EV_HASH,
                 "z": EV_ZSET, "x": EV_EXPIRED, "e": EV_EVICTED, "t": EV_STREAM,
                 "d": EV_MODULE, "m": EV_KEY_MISS, "n": EV_NEW, "o": EV_OVERWRITTEN,
                 "c": EV_TYPE_CHANGED}
ALL_EVENT_CLASSES = "".join(c for c in EVENT_LETTERS if c not in "mnoc")  # "g$lshzxetd"
# The channel kinds an event goes out on, by their letters; the bits are the hook's
# ``channels``. K: __keyspace@<db>__:<key>, E: __keyevent@<db>__:<event>, and Redis 8.8's
# four subkey channels, only for events that name subkeys: S __subkeyspace, T
# __subkeyevent, I __subkeyspaceitem, V __subkeyspaceevent.
EVENT_CHANNELS = {"K": 1, "E": 2, "S": 4, "T": 8, "I": 16, "V": 32}


# A key expires once the clock is past its expiry time, as in Redis (now > when): during
# that very millisecond it still reads, with a PTTL of 0. Every check below uses ``<``.


class Database:
    __slots__ = ("index", "data", "expires", "watched", "blocking", "keyspace", "_pool",
                 "_pool_built", "hexpires", "hits", "misses")

    def __init__(self, index: int, keyspace: "Keyspace"):
        self.index = index
        self.data: dict[bytes, object] = {}  # key -> value object (bytes, dict, Stream ...)
        self.expires: dict[bytes, int] = {}  # key -> absolute unix ms; only keys with a TTL
        self.watched: dict[bytes, set] = {}  # key -> watchers (see module doc)
        self.blocking: dict[bytes, object] = {}  # key -> server-owned waiter queue
        self.keyspace = keyspace
        self._pool: list | None = None  # TTL keys to sample for active expiry
        self._pool_built = 0
        self.hexpires = FieldExpiryIndex()  # hashes with field TTLs, by the earliest one
        # INFO's keyspace_hits / keyspace_misses, kept per database so that counting costs
        # each read one attribute add (the Keyspace sums them for INFO)
        self.hits = 0
        self.misses = 0

    # --- lookup --------------------------------------------------------------------------
    def get(self, key: bytes):
        """The live value at ``key`` or ``None``; an expired key is removed on the way
        (unless expiry is paused: then it only reads as absent)."""
        value = self.data.get(key)
        if value is not None and self.expires and key in self.expires:
            if self.expires[key] < now_ms():
                if not self.keyspace.expiry_paused:
                    self._expire(key)
                return None
        return value

    def read(self, key: bytes):
        """``get`` for a command that reads the key, counted as a keyspace hit or miss as
        Redis's read lookups count (its write lookups, ``get`` here, count nothing). A miss
        announces ``keymiss`` (class m), as Redis's lookupKeyRead does, after ``expired``
        if the key had just run out."""
        value = self.data.get(key)
        if value is not None:
            if not (self.expires and key in self.expires and self.expires[key] < now_ms()):
                self.hits += 1
                return value
            if not self.keyspace.expiry_paused:
                self._expire(key)
        self.missed((key,))
        return None

    def read_quiet(self, key: bytes):
        """``read`` announcing no ``keymiss``, for OBJECT: Redis looks its key up with
        LOOKUP_NONOTIFY, which counts the miss but keeps it off the event channels."""
        value = self.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def missed(self, keys) -> None:
        """Count read lookups that found none of ``keys`` (one miss each, in order), for a
        command that counts its lookups itself (XREAD)."""
        self.misses += len(keys)
        if self.keyspace.events & EV_KEY_MISS:
            for key in keys:
                self.notify(EV_KEY_MISS, b"keymiss", key)

    def peek(self, key: bytes):
        """The live value at ``key`` or ``None``, with no side effect: an expired key reads
        as absent and is left for expiry to remove."""
        value = self.data.get(key)
        if value is not None and self.expires and key in self.expires:
            if self.expires[key] < now_ms():
                return None
        return value

    def exists(self, key: bytes) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return len(self.data)

    def keys(self, reclaim: bool = True):
        """Live keys. Expired ones are purged first, or with ``reclaim=False`` (or while
        expiry is paused) only left out."""
        if self.expires:
            t = now_ms()
            gone = [k for k, when in self.expires.items() if when < t]
            if not reclaim or self.keyspace.expiry_paused:
                gone = set(gone)
                return [k for k in self.data if k not in gone]
            for k in gone:
                self._expire(k)
        return list(self.data)

    # --- mutation ------------------------------------------------------------------------
    # The writes below take ``changes``, what they add to the dirty counter: a command that
    # makes several of them counts as Redis counts it (RENAME is one change, not a delete
    # and an add); 0 still signals WATCH.
    def set(self, key: bytes, value, *, keep_ttl: bool = False, changes: int = 1):
        """Store ``value`` at ``key``, replacing any previous value (and its TTL); returns
        that previous value, or None."""
        old = self.data.get(key)
        self.data[key] = value
        if not keep_ttl and self.expires:
            self.expires.pop(key, None)
        self.modified(key, changes)
        if old is None and self.keyspace.events & EV_NEW:
            self.notify(EV_NEW, b"new", key)
        if old is not None and type(old) is not type(value) and key in self.blocking:
            # A type change must reach waiters whose command fails on it (XREADGROUP).
            self.keyspace.ready.append((self, key))
        return old

    def add(self, key: bytes, value, changes: int = 1) -> None:
        """Create ``key`` (known to be absent) without touching WATCH state twice."""
        self.data[key] = value
        self.modified(key, changes)
        if self.keyspace.events & EV_NEW:
            self.notify(EV_NEW, b"new", key)

    def put_unsignalled(self, key: bytes, value) -> None:
        """Store ``value`` at ``key`` without counting a change or touching WATCH, for the
        edits Redis makes without signalling them: a string made raw in place by a bit
        command that changed no bit, or created or grown by a BITFIELD whose writes all
        failed. A created key still announces ``new``, as Redis's dbAdd does."""
        old = self.data.get(key)
        self.data[key] = value
        if old is None and self.keyspace.events & EV_NEW:
            self.notify(EV_NEW, b"new", key)

    def delete(self, key: bytes, changes: int = 1) -> bool:
        if key not in self.data:
            return False
        if self.expires and key in self.expires and self.expires[key] < now_ms():
            self._expire(key)
            return False
        del self.data[key]
        if self.expires:
            self.expires.pop(key, None)
        self.modified(key, changes)
        if key in self.blocking:
            self.keyspace.ready.append((self, key))
        return True

    def pop(self, key: bytes, changes: int = 1):
        """Remove and return the live value (for RENAME/MOVE), or ``None``."""
        value = self.get(key)
        if value is None:
            return None
        ttl = self.expires.pop(key, None) if self.expires else None
        del self.data[key]
        self.modified(key, changes)
        if key in self.blocking:
            self.keyspace.ready.append((self, key))
        return value, ttl

    def set_expire(self, key: bytes, when_ms: int, changes: int = 1) -> None:
        self.expires[key] = when_ms
        self.modified(key, changes)

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
        self._pool = None
        self.hexpires.clear()
        for k in keys:
            self._touch_watchers(k)
            if k in self.blocking:
                self.keyspace.ready.append((self, k))
        return n

    # --- change signals -------------------------------------------------------------------
    def modified(self, key: bytes, changes: int = 1) -> None:
        """Record a write to ``key``: dirty counter, WATCH and tracking invalidation."""
        ks = self.keyspace
        ks.dirty += changes
        if self.watched:
            self._touch_watchers(key)
        if ks.tracking is not None:
            ks.tracking.invalidate(key, True)

    def notify(self, kind: int, event: bytes, key: bytes, subkeys=()) -> None:
        """Announce ``event`` (of class ``kind``) on ``key``, if that class is enabled.
        ``subkeys`` are the fields it touched, for the subkey channels (Redis 8.8; hash
        events only). Callers on a hot path test ``keyspace.events`` first, so that a server
        with no events enabled pays one attribute test."""
        ks = self.keyspace
        if ks.events & kind:
            ks.event_hook(event, key, self.index, ks.event_channels, subkeys)

    def _touch_watchers(self, key: bytes) -> None:
        watchers = self.watched.get(key)
        if watchers:
            for w in watchers:
                w.watch_dirty = True

    def signal_ready(self, key: bytes) -> None:
        """New data at ``key``: let the server re-run commands blocked on it."""
        if key in self.blocking:
            self.keyspace.ready.append((self, key))

    def _expire(self, key: bytes) -> None:
        del self.data[key]
        del self.expires[key]
        ks = self.keyspace
        ks.expired_keys += 1  # Redis counts an expiry there, not as a change
        if self.watched:
            self._touch_watchers(key)
        if ks.tracking is not None:
            # No command made this change: Redis signals an expiry without a client, so a
            # BCAST NOLOOP client still hears of a key it wrote that expired.
            ks.tracking.invalidate(key, False)
        if self.keyspace.events & EV_EXPIRED:
            self.notify(EV_EXPIRED, b"expired", key)
        if key in self.blocking:
            self.keyspace.ready.append((self, key))

    # --- hash field expiry ---------------------------------------------------------------
    # Fields go lazily when a hash command finds them due, and actively from the cron
    # through ``hexpires``. A field expiry is neither a change nor an expired key (Redis
    # counts it in expired_subkeys); a hash left empty is deleted.
    def track_field_ttls(self, key: bytes, h: Hash, moved: bool = False) -> None:
        """After ``h`` (at ``key``) got a field TTL, or arrived at ``key`` carrying some."""
        if moved:
            if h.ttls:
                self.hexpires.push(key, h, h.next_due)
        else:
            self.hexpires.track(key, h)

    def expire_fields(self, key: bytes, h: Hash, now: int):
        """Lazy expiry before a command uses the hash at ``key``: the hash without its due
        fields, or ``None`` if none is left (the key is then deleted). While expiry is
        paused nothing is deleted and a live copy is returned: only reads run then (a
        pause holds back every write), and they must not see the expired fields."""
        if self.keyspace.expiry_paused:
            live = h.live_copy(now)
            return live if live else None
        gone = h.expire_due(now)
        if not gone:
            return h
        if self._fields_expired(key, h, gone, changes=0):
            return None
        self.modified(key, 0)
        return h

    def _fields_expired(self, key: bytes, h: Hash, gone: list, changes: int) -> bool:
        """Count and announce the fields ``gone`` from the hash at ``key``; delete the
        hash if that emptied it (``changes`` to the dirty counter). Whether it did."""
        self.keyspace.expired_subkeys += len(gone)
        # One hexpired however many fields went, as Redis announces a command's expiry.
        self.notify(EV_HASH, b"hexpired", key, gone)
        if h:
            return False
        self.delete(key, changes=changes)
        self.notify(EV_GENERIC, b"del", key)
        return True

    def active_expire_fields(self, t: int, deadline: float | None = None) -> int:
        """Expire the due fields of the hashes whose earliest TTL has passed."""
        removed = 0
        data = self.data
        index = self.hexpires
        for key, h in index.due(t):
            if data.get(key) is not h:
                continue  # moved, deleted or replaced since it was queued
            gone = h.expire_due(t)
            removed += len(gone)
            # Redis counts the deletion of a hash its expiry cycle emptied.
            emptied = bool(gone) and self._fields_expired(key, h, gone, changes=1)
            if not emptied and h.ttls:
                index.push(key, h, h.next_due)
            if deadline is not None and time.perf_counter() >= deadline:
                break
        return removed

    def subexpiry(self) -> int:
        """How many hashes have fields with a TTL (INFO keyspace's ``subexpiry``)."""
        if not self.hexpires:
            return 0
        return sum(1 for _ in self.hexpires.hashes(self.data))

    # --- active expiry -------------------------------------------------------------------
    # Sampling needs random access, which a dict lacks: draws come from a list of the TTL
    # keys ("pool") rebuilt when small, stale (POOL_MAX_AGE_MS) or mostly gone, instead of
    # copying every TTL key for every 20-key sample (quadratic: 200k keys expiring together
    # blocked the server for 20 s). Keys given a TTL after the pool was built are sampled
    # from the next rebuild on; lookups expire them lazily meanwhile.
    POOL_REBUILD_ALWAYS = 1024  # below this many TTL keys, a fresh pool is cheap
    POOL_MAX_AGE_MS = 1000

    def active_expire(self, t: int, samples: int = 20, deadline: float | None = None) -> int:
        """Redis-style sampling: repeat while more than a quarter of the sample expired,
        stopping at ``deadline`` (a ``time.perf_counter()`` value) if given."""
        removed = 0
        expires = self.expires
        while expires:
            pool = self._pool
            if (pool is None or len(expires) <= self.POOL_REBUILD_ALWAYS
                    or t - self._pool_built >= self.POOL_MAX_AGE_MS):
                pool = self._pool = list(expires)
                self._pool_built = t
            keys = pool if len(pool) <= samples else random.sample(pool, samples)
            hit = seen = 0
            for k in keys:
                when = expires.get(k)
                if when is None:
                    continue  # gone since the pool was built
                seen += 1
                if when < t:
                    self._expire(k)
                    hit += 1
            removed += hit
            self.keyspace.expire_sampled += seen
            if seen * 2 < len(keys):
                self._pool = None  # mostly stale: rebuild on the next round
                if seen == 0:
                    continue
            if hit * 4 <= seen or (deadline is not None and time.perf_counter() >= deadline):
                break
        return removed


class Keyspace:
    """All databases of one server, plus the counters INFO reports about them."""

    def __init__(self, databases: int = 16):
        self.dirty = 0  # writes since the last save (INFO rdb_changes_since_last_save)
        self.expired_keys = 0
        self.expired_subkeys = 0  # hash fields expired (INFO expired_subkeys)
        # The active expiry cycle, as INFO reports it: the running estimate of the share
        # of sampled TTL keys found expired (expired_stale_perc), the cycles cut short by
        # their time budget and the time spent in them.
        self.expired_stale = 0.0
        self.expire_time_cap_reached = 0
        self.expire_cycle_us = 0
        self.expire_sampled = 0  # TTL keys looked at by the current cycle
        # (db, key) pairs signalled during the current command (new data, deleted, another
        # type, another value); drained by the server, which looks at what the key holds then
        self.ready: list = []
        self.idmp = None  # IdmpRegistry set by the server: streams holding IDMP records
        self.dbs = [Database(i, self) for i in range(databases)]
        self._expire_next = 0  # db the next active-expire cycle starts with
        # True during CLIENT PAUSE: Redis then deletes no expired key (they read as absent
        # but stay counted in DBSIZE and INFO keyspace, and expired_keys does not move).
        self.expiry_paused = False
        # DEBUG SET-ACTIVE-EXPIRE 0 turns the cron's expiry off; lazy expiry still runs.
        self.active_expire_enabled = True
        # DEBUG SET-SKIP-CHECKSUM-VALIDATION: RESTORE then takes payloads without a valid CRC.
        self.skip_checksum_validation = False
        # Keyspace events: the classes announced (0 unless a channel kind is on too), the
        # channel kinds (1: __keyspace@<db>__:<key>, 2: __keyevent@<db>__:<event>) and the
        # server's hook ``fn(event, key, db index, channel kinds)``.
        self.events = 0
        self.event_channels = 0
        self.event_hook = None
        self.tracking = None  # see the module doc

    def lookups(self) -> tuple[int, int]:
        """INFO's (keyspace_hits, keyspace_misses): the reads that found their key or not."""
        return sum(db.hits for db in self.dbs), sum(db.misses for db in self.dbs)

    def reset_stats(self) -> None:
        """CONFIG RESETSTAT: the expiry and lookup counters start again from 0."""
        self.expired_keys = self.expired_subkeys = 0
        self.expired_stale = 0.0
        self.expire_time_cap_reached = self.expire_cycle_us = 0
        for db in self.dbs:
            db.hits = db.misses = 0

    def flushed(self) -> None:
        """FLUSHDB or FLUSHALL is emptying databases: tell the tracking clients."""
        if self.tracking is not None:
            self.tracking.flushed()

    def flush_all(self) -> int:
        """Empty every database (FLUSHALL, a reload); returns how many keys went."""
        self.flushed()
        return sum(db.flush() for db in self.dbs)

    def configure_events(self, flags: str) -> None:
        """Take ``notify-keyspace-events``: its letters (``A`` standing for all classes)."""
        flags = getattr(flags, "letters", flags)
        classes = 0
        for c in flags.replace("A", ALL_EVENT_CLASSES):
            classes |= EVENT_LETTERS.get(c, 0)
        self.event_channels = sum(bit for c, bit in EVENT_CHANNELS.items() if c in flags)
        self.events = classes if self.event_channels and self.event_hook else 0

    # Redis's slow expire cycle takes at most a quarter of each cron period: 25 ms at hz 10.
    ACTIVE_EXPIRE_BUDGET_S = 0.025

    def active_expire(self) -> int:
        if self.expiry_paused or not self.active_expire_enabled:
            return 0
        start = time.perf_counter()
        t = now_ms()
        deadline = start + self.ACTIVE_EXPIRE_BUDGET_S
        removed = 0
        self.expire_sampled = 0
        n = len(self.dbs)
        first = self._expire_next
        for i in range(n):
            db = self.dbs[(first + i) % n]
            due = db.hexpires.heap
            if due and due[0][0] < t:
                db.active_expire_fields(t, deadline=deadline)  # fields, not keys: uncounted
            if db.expires:
                removed += db.active_expire(t, deadline=deadline)
            if (db.expires or due) and time.perf_counter() >= deadline:
                # Out of time: the next cycle starts after this db, so none starves.
                self._expire_next = (first + i + 1) % n
                self.expire_time_cap_reached += 1
                break
        if self.expire_sampled:
            # Redis's estimate: 5 % this cycle's expired share, 95 % the previous estimate
            self.expired_stale = (removed / self.expire_sampled * 0.05
                                  + self.expired_stale * 0.95)
        self.expire_cycle_us += int((time.perf_counter() - start) * 1_000_000)
        return removed

    def swap(self, a: int, b: int) -> None:
        da, db_ = self.dbs[a], self.dbs[b]
        before_a, before_b = da.data, db_.data
        da.data, db_.data = db_.data, da.data
        da.expires, db_.expires = db_.expires, da.expires
        da.hexpires, db_.hexpires = db_.hexpires, da.hexpires
        da._pool = db_._pool = None
        for d in (da, db_):
            # A watched key changed if it existed on either side: it got another value or
            # vanished (watchers hang off the db a client watched in, not off the data).
            for k in list(d.watched):
                if k in before_a or k in before_b:
                    d._touch_watchers(k)
            # Every waiter's key may hold something else now (the server decides whom
            # that wakes).
            for k in list(d.blocking):
                self.ready.append((d, k))
