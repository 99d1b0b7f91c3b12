"""Helpers shared by the key, string and hash commands: type names, typed lookups,
OBJECT ENCODING bookkeeping, value copies and the stable SCAN cursor.

Strings are ``bytes`` and hashes ``dict`` in the keyspace. Redis's OBJECT ENCODING depends
on how a value was built, not only on its content, so two ``bytes`` subclasses and one
``dict`` subclass carry that history without changing what other code sees
(``isinstance(v, bytes)`` / ``isinstance(v, dict)`` stay true).
"""

from __future__ import annotations

from bisect import bisect_left

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


class Hash(dict):
    """A hash; ``hashtable`` is set once it outgrew listpack (Redis never converts back)."""

    __slots__ = ("hashtable", "scan_snapshot")

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.hashtable = False
        self.scan_snapshot = None

    def copy(self):
        # dict.copy() would drop the subclass and with it the encoding.
        new = Hash(self)
        new.hashtable = self.hashtable
        return new


def type_name(value) -> str:
    if isinstance(value, bytes):
        return "string"
    if isinstance(value, dict):
        return "hash"
    name = getattr(value, "TYPE_NAME", None)
    if name:
        return name
    return type(value).__name__.lower()


def is_stream(value) -> bool:
    return type_name(value) == "stream"


def lookup(db, key: bytes, kind: type):
    """The live value at ``key`` if it is a ``kind`` (bytes/dict), ``None`` if absent;
    raises WRONGTYPE for any other type."""
    value = db.get(key)
    if value is None or isinstance(value, kind):
        return value
    raise CommandError(E.WRONGTYPE)


def string_encoding(value: bytes) -> str:
    cls = type(value)
    if cls is RawStr:
        return "raw"
    if cls is not PlainStr and len(value) <= 20:
        try:
            parse_int(value)
            return "int"
        except CommandError:
            pass
    return "embstr" if len(value) <= EMBSTR_LIMIT else "raw"


def string_refcount(value: bytes) -> int:
    if string_encoding(value) == "int" and 0 <= int(value) < SHARED_INTEGERS:
        return SHARED_REFCOUNT
    return 1


def hash_note_write(h: Hash, config, *items: bytes) -> None:
    """After a write to ``h``: switch to hashtable as Redis does (one way)."""
    if h.hashtable:
        return
    limit = config["hash-max-listpack-value"]
    if len(h) > config["hash-max-listpack-entries"] or any(len(x) > limit for x in items):
        h.hashtable = True


def encoding(value, config) -> str:
    if isinstance(value, bytes):
        return string_encoding(value)
    if isinstance(value, dict):
        if getattr(value, "hashtable", False):
            return "hashtable"
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
    if isinstance(value, bytes):
        return value
    if isinstance(value, dict) and not isinstance(value, Hash):
        return Hash(value)
    return value.copy()


# --- SCAN cursors ------------------------------------------------------------------------
#
# A cursor is a position in a fixed order of 63-bit hashes of the names, so it stays valid
# however the collection changes: a call returns the names whose hash lies in
# [cursor, next). Each call works on a sorted snapshot taken at some time during the scan
# (rebuilt at cursor 0, or when missing), so every name present for the whole scan is in
# the snapshot that covers its hash and is returned exactly once.

_MASK = (1 << 63) - 1


def name_hash(name: bytes) -> int:
    return hash(name) & _MASK


def build_snapshot(names) -> tuple[list[int], list[bytes]]:
    pairs = sorted((name_hash(n), n) for n in names)
    return [h for h, _ in pairs], [n for _, n in pairs]


def scan_step(snapshot, cursor: int, count: int) -> tuple[int, list[bytes]]:
    """Names from ``snapshot`` at or after ``cursor``: about ``count`` of them, never
    splitting equal hashes; returns (next cursor or 0 when done, names)."""
    hashes, names = snapshot
    i = bisect_left(hashes, cursor)
    end = min(i + count, len(names))
    while end < len(names) and hashes[end] == hashes[end - 1]:
        end += 1
    nxt = hashes[end - 1] + 1 if end < len(names) else 0
    return nxt, names[i:end]


def parse_cursor(arg: bytes) -> int:
    """Redis parseScanCursorOrReply: strtoul over the whole argument."""
    text = arg.decode("latin-1")
    if not text:
        return 0  # strtoul consumed nothing and stopped at the terminator
    body = text.lstrip(" \t\n\r\f\v")
    neg = body[:1] == "-"
    if body[:1] in "+-":
        body = body[1:]
    if not body.isdigit() or not body.isascii():
        raise CommandError("ERR invalid cursor")
    value = int(body)
    if value > (1 << 64) - 1:
        raise CommandError("ERR invalid cursor")
    return ((1 << 64) - value) % (1 << 64) if neg else value
