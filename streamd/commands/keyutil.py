"""Helpers shared by the key, string and hash commands: type names, typed lookups,
OBJECT ENCODING bookkeeping, value copies and the stable SCAN cursor.

Strings are ``bytes`` (or a ``StrBuf`` once edited in place) and hashes ``dict`` in the
keyspace. Redis's OBJECT ENCODING depends on how a value was built, not only on its content,
so ``bytes`` subclasses and the ``dict`` subclass ``store.hashes.Hash`` carry that history
without changing what other code sees (``isinstance(v, STRING)`` / ``isinstance(v, dict)``).
"""

from __future__ import annotations

from collections import OrderedDict

from ..store.hashes import Hash
from ..store.keyspace import EV_OVERWRITTEN, EV_TYPE_CHANGED
from . import errors as E
from .args import parse_int
from .errors import CommandError

EMBSTR_LIMIT = 44  # Redis OBJ_ENCODING_EMBSTR_SIZE_LIMIT
SHARED_INTEGERS = 10000  # Redis OBJ_SHARED_INTEGERS: refcount reads INT_MAX for these
SHARED_REFCOUNT = 2147483647


class RawStr(bytes):
    """A string Redis holds as ``raw`` whatever its length (APPEND/SETRANGE results)."""

    __slots__ = ()


class PlainStr(bytes):
    """A string Redis never int-encodes (INCRBYFLOAT results): embstr or raw by length."""

    __slots__ = ()


class OwnStr(bytes):
    """A string with its own object, never the shared integer: a COPY duplicate, or a value
    stored while an LRU/LFU policy kept Redis from sharing integers."""

    __slots__ = ()


class StrBuf(bytearray):
    """A string edited in place by APPEND, SETRANGE, SETBIT or BITFIELD, so that a run of
    small edits costs each its own length, not the whole value's (a ``bytearray`` keeps
    spare room as Redis's sds does). Redis holds such a string as ``raw``.

    It is mutable, so it belongs to one key only: readers reply with ``bytes`` copies
    (replies wait in lists before they are encoded, e.g. in MULTI), and COPY makes its
    own value."""

    __slots__ = ()


STRING = (bytes, StrBuf)  # isinstance() of a string value, whichever form it is in


def type_name(value) -> str:
    if isinstance(value, STRING):
        return "string"
    if isinstance(value, dict):
        return "hash"
    name = getattr(value, "TYPE_NAME", None)
    if name:
        return name
    return type(value).__name__.lower()


def set_key(db, key: bytes, value, keep_ttl: bool = False) -> None:
    """Redis's setKey, the write of SET, MSET, BITOP's destination ...: store ``value`` at
    ``key``, announcing ``new``, or ``overwritten`` when it replaced a value. The in-place
    rewrites of INCR and friends call ``db.set`` and announce neither."""
    old = db.set(key, value, keep_ttl=keep_ttl)
    if old is not None and db.keyspace.events:
        announce_overwrite(db, key, old, value)


def place_value(db, dst: bytes, value, when_ms, changes: int = 1) -> None:
    """Put a value that comes whole from elsewhere (another key or database, a payload) at
    ``dst``, known absent now, with its expiry time or None: the command's one change (the
    removals that made room count none; a load counts none at all)."""
    db.add(dst, value, changes)
    if when_ms is not None:
        db.set_expire(dst, when_ms, changes=0)
    if isinstance(value, Hash) and value.ttls:
        db.track_field_ttls(dst, value, moved=True)  # field TTLs travel with the hash
    if is_stream(value):
        db.signal_ready(dst)  # XREAD waiters on ``dst`` see the arrived entries


def announce_overwrite(db, key: bytes, old, new) -> None:
    """``overwritten`` on ``key``, then ``type_changed`` if ``new`` is not of ``old``'s
    type (Redis 8.2's classes o and c, which 'A' leaves out)."""
    db.notify(EV_OVERWRITTEN, b"overwritten", key)
    if type_name(old) != type_name(new):
        db.notify(EV_TYPE_CHANGED, b"type_changed", key)


def is_stream(value) -> bool:
    return type_name(value) == "stream"


def lookup(db, key: bytes, kind):
    """The live value at ``key`` if it is a ``kind`` (STRING/dict), ``None`` if absent;
    raises WRONGTYPE for any other type."""
    value = db.get(key)
    if value is None or isinstance(value, kind):
        return value
    raise CommandError(E.WRONGTYPE)


def lookup_read(db, key: bytes, kind: type):
    """``lookup`` for a command that reads the key: counted as a keyspace hit or miss."""
    value = db.read(key)
    if value is None or isinstance(value, kind):
        return value
    raise CommandError(E.WRONGTYPE)


def string_encoding(value: bytes) -> str:
    cls = type(value)
    if cls is RawStr or cls is StrBuf:
        return "raw"
    if cls is not PlainStr and len(value) <= 20:
        try:
            parse_int(value)
            return "int"
        except CommandError:
            pass
    return "embstr" if len(value) <= EMBSTR_LIMIT else "raw"


def string_refcount(value: bytes) -> int:
    if type(value) is OwnStr or string_encoding(value) != "int":
        return 1
    return SHARED_REFCOUNT if 0 <= int(value) < SHARED_INTEGERS else 1


def own_if_unshared(value: bytes, config) -> bytes:
    """``value`` as a string command stores it now: Redis stops handing out its shared
    integers while an LRU/LFU eviction policy needs per-object clocks. The choice is made
    when the value is created; a later policy change leaves existing values as they are."""
    if config["maxmemory"]:
        policy = str(config["maxmemory-policy"])
        if "lru" in policy or "lfu" in policy:
            return OwnStr(value)
    return value


def own_buffer(db, key: bytes, value) -> StrBuf:
    """The string ``value`` at ``key`` as a buffer to edit in place: itself when it is one,
    else a copy put in its place (unsignalled: the bytes are the same, the caller signals
    its edit). The one full copy a string pays before its in-place edits; Redis likewise
    unshares a string (which makes it raw) before editing it."""
    if type(value) is StrBuf:
        return value
    buf = StrBuf(value)
    db.put_unsignalled(key, buf)
    return buf


def hash_note_write(h: Hash, config, *items: bytes) -> None:
    """After a write to ``h``: switch to hashtable as Redis does (one way)."""
    if h.hashtable:
        return
    if len(h) > config["hash-max-listpack-entries"]:
        h.hashtable = True
        return
    limit = config["hash-max-listpack-value"]
    for x in items:  # a plain loop: any() over a generator costs HSET a third more
        if len(x) > limit:
            h.hashtable = True
            return


def encoding(value, config) -> str:
    if isinstance(value, STRING):
        return string_encoding(value)
    if isinstance(value, dict):
        if isinstance(value, Hash):
            # Its history decides: Redis converts on a write that outgrows the limits, so
            # a later CONFIG SET that lowers them leaves an unwritten listpack as it is.
            if value.hashtable:
                return "hashtable"
            return "listpackex" if value.listpackex else "listpack"
        # A plain dict placed by someone else: judge by content as Redis would on load.
        limit = config["hash-max-listpack-value"]
        if len(value) > config["hash-max-listpack-entries"] or any(
                len(f) > limit or len(v) > limit for f, v in value.items()):
            return "hashtable"
        return "listpack"
    enc = getattr(value, "ENCODING", None)
    return enc or type_name(value)


def copy_value(value):
    """A deep-enough copy for COPY: bytes are immutable, containers copy themselves."""
    if type(value) is StrBuf:
        return RawStr(value)  # raw as Redis's copy of a raw string; never the same buffer
    if isinstance(value, bytes):
        if type(value) is bytes and string_encoding(value) == "int":
            return OwnStr(value)
        return value
    if isinstance(value, dict) and not isinstance(value, Hash):
        return Hash(value)
    return value.copy()


# --- SCAN cursors ------------------------------------------------------------------------
#
# A scan walks a snapshot of the names (a plain list copy: cheap even for a large keyspace,
# unlike sorting) taken when the scan starts, so every name present for the whole scan is
# in it and gets returned once; names removed meanwhile are skipped by the caller's
# presence check. The cursor carries the snapshot's id and a position.
#
# Snapshots live in an LRU table bounded by the names they hold in total. A cursor whose
# snapshot was evicted (or that belongs to another collection) goes on from the same
# position in a fresh snapshot: the scan always progresses, but under that memory pressure
# names shifted by deletions may be missed.

_SNAPSHOT_BUDGET = 4_000_000  # names held by all snapshots together (8 bytes each)
_SNAPSHOT_COUNT = 1024
_POS_BITS = 32
_POS_MASK = (1 << _POS_BITS) - 1


class ScanSnapshots:
    def __init__(self, budget: int = _SNAPSHOT_BUDGET, count: int = _SNAPSHOT_COUNT):
        self.budget = budget
        self.count = count
        self.held = 0
        self.table: OrderedDict[int, tuple] = OrderedDict()
        self.next_id = 1

    def step(self, owner, names, cursor: int, count: int) -> tuple[int, list]:
        """One SCAN call over ``owner`` (a Database or a hash); ``names()`` lists it now.
        Returns (next cursor, 0 when done; the names to check and reply with)."""
        sid, pos = cursor >> _POS_BITS, cursor & _POS_MASK
        snap = self.table.get(sid) if cursor else None
        if snap is None or snap[0] is not owner:
            sid = self.next_id
            self.next_id = self.next_id % (1 << 31) + 1
            snap = self.table[sid] = (owner, names())
            self.held += len(snap[1])
            while len(self.table) > 1 and (self.held > self.budget
                                            or len(self.table) > self.count):
                _, (_, old) = self.table.popitem(last=False)
                self.held -= len(old)
        else:
            self.table.move_to_end(sid)
        listed = snap[1]
        end = min(pos + count, len(listed))
        batch = listed[pos:end]
        if end >= len(listed):
            if self.table.pop(sid, None) is not None:
                self.held -= len(listed)
            return 0, batch
        return (sid << _POS_BITS) | end, batch


SNAPSHOTS = ScanSnapshots()


def parse_cursor(arg: bytes) -> int:
    """Redis parseScanCursorOrReply: strtoul over the whole argument."""
    text = arg.decode("latin-1")
    if not text:
        return 0  # strtoul consumed nothing and stopped at the terminator
    # strtoul would skip leading whitespace, but Redis refuses it before that (isspace).
    if text[0] in " \t\n\r\f\v":
        raise CommandError("ERR invalid cursor")
    body = text
    neg = body[:1] == "-"
    if body[:1] in "+-":
        body = body[1:]
    if not body.isdigit() or not body.isascii():
        raise CommandError("ERR invalid cursor")
    value = int(body)
    if value > (1 << 64) - 1:
        raise CommandError("ERR invalid cursor")
    return ((1 << 64) - value) % (1 << 64) if neg else value


# --- glob patterns -------------------------------------------------------------------------
#
# Redis's stringmatchlen semantics (*, ?, [abc], [^a], [a-z], backslash escapes, an
# unterminated class closing at the pattern's end), matched with one backtrack point: every
# token but '*' consumes exactly one character, so only the latest '*' ever needs to grow.
# That keeps KEYS/SCAN MATCH linear in practice where naive recursion on "*a*a*a*...b" is
# exponential (Redis bounds the same case with its skipLongerMatches rule).

def _lower(c: int) -> int:
    return c + 32 if 0x41 <= c <= 0x5A else c  # C tolower: ASCII letters only


_SIGNED = tuple(range(128)) + tuple(range(-128, 0))  # a byte read as a signed C char


def _token(p: bytes, pi: int, ch: int, nocase: bool) -> tuple[bool, int]:
    """Whether the one-character token at ``p[pi]`` accepts ``ch``; and the next index.

    With ``nocase``, Redis folds case the way its loop does, not by lowering the whole
    pattern first: an escaped character inside a class still compares exactly, and a
    range has its ends ordered before they are folded ("[Z-a]" then matches nothing)."""
    plen = len(p)
    c = p[pi]
    if c == 0x3F:  # ?
        return True, pi + 1
    folded = _lower(ch) if nocase else ch
    if c == 0x5B:  # [
        pi += 1
        negate = pi < plen and p[pi] == 0x5E
        if negate:
            pi += 1
        matched = False
        while pi < plen and p[pi] != 0x5D:
            if p[pi] == 0x5C and pi + 1 < plen:
                pi += 1
                matched |= p[pi] == ch
            elif pi + 2 < plen and p[pi + 1] == 0x2D:
                # Redis compares range ends as C chars, signed: bytes from 0x80 sort
                # below 0x00, so "[a-\xff]" covers 0xff and 0x00-'a', not 'a'-0xff.
                lo, hi = sorted((_SIGNED[p[pi]], _SIGNED[p[pi + 2]]))
                if nocase:
                    lo, hi = _lower(lo), _lower(hi)
                matched |= lo <= _SIGNED[folded] <= hi
                pi += 2
            else:
                matched |= (_lower(p[pi]) if nocase else p[pi]) == folded
            pi += 1
        return matched != negate, pi + 1  # past ']' (or past the end when unterminated)
    if c == 0x5C and pi + 1 < plen:  # escaped literal
        c = p[pi + 1]
        pi += 1
    return (_lower(c) if nocase else c) == folded, pi + 1


def glob_match(pattern: bytes, text: bytes, nocase: bool = False) -> bool:
    plen, slen = len(pattern), len(text)
    if slen == 0:
        return plen == 0  # Redis never enters its loop for an empty string
    pi = si = 0
    star_pi, star_si = -1, 0
    while si < slen:
        if pi < plen:
            if pattern[pi] == 0x2A:  # *
                while pi + 1 < plen and pattern[pi + 1] == 0x2A:
                    pi += 1
                star_pi, star_si = pi, si
                pi += 1
                continue
            ok, nxt = _token(pattern, pi, text[si], nocase)
            if ok:
                pi, si = nxt, si + 1
                continue
        if star_pi < 0:
            return False
        star_si += 1
        pi, si = star_pi + 1, star_si
    while pi < plen and pattern[pi] == 0x2A:
        pi += 1
    return pi >= plen
