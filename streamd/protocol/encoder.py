"""RESP2 / RESP3 encoder for the reply values of ``protocol.replies``.

``encode(value, out, resp)`` appends to a ``bytearray`` so one batch of replies is built in a
single buffer and written once. The type checks are ordered by frequency on the hot path
(bulk strings, arrays, integers) and use ``type() is`` rather than ``isinstance``.
"""

from __future__ import annotations

import re
import threading
import weakref
from array import array
from collections import deque

from .replies import (
    NULL_ARRAY,
    Entries,
    ErrorReply,
    Map,
    Push,
    Raw,
    Replies,
    SetReply,
    Simple,
    Verbatim,
)

_I64 = 1 << 63
_NULL2 = b"$-1\r\n"
_NULL_ARRAY2 = b"*-1\r\n"
_NULL3 = b"_\r\n"
_CRLF = b"\r\n"
_ENTRY_HDR = b"*2\r\n"

# Small integers and short lengths recur constantly; render them once.
_INT_CACHE = [b":%d\r\n" % i for i in range(1024)]
_BULK_HDR = [b"$%d\r\n" % i for i in range(1024)]
_ARR_HDR = [b"*%d\r\n" % i for i in range(1024)]
_ID_HDR = [b"*2\r\n$%d\r\n" % i for i in range(48)]  # an entry's header and its ID's length
_CRLF_ID_HDR = [b"\r\n" + h for h in _ID_HDR]  # the same after the previous entry's last value


def _format_double(value: float) -> bytes:
    if value != value:
        return b"nan"
    if value in (float("inf"), float("-inf")):
        return b"inf" if value > 0 else b"-inf"
    text = repr(value)
    if text.endswith(".0"):
        text = text[:-2]
    return text.encode()


def format_double(value: float) -> bytes:
    """A double as text: the shortest form that reads back exactly (Python's repr, without
    a trailing ``.0``), ``inf``, ``-inf`` or ``nan``. No command replies with a double yet;
    Redis's own forms differ by version (7.0: ``%.17g``, 7.2+: a shortest round-trip form),
    so the first command that does must pin its format against them."""
    return _format_double(value)


_NAMES_PARTS: dict = {}  # field-name tuple -> _names_parts(tuple)


def _names_parts(names: tuple) -> tuple:
    """(what follows an entry's ID up to its first value's header, the headers of the other
    field names, or None when there is one name): the constant bytes of a run, rendered once
    per field-name tuple. An entry without fields (only the store allows one) is all
    ``mid``, with no heads."""
    parts = _NAMES_PARTS.get(names)
    if parts is None:
        if len(_NAMES_PARTS) >= 1024:  # field names chosen per entry must not grow it forever
            _NAMES_PARTS.clear()
        if names:
            first = names[0]
            mid = b"\r\n*%d\r\n$%d\r\n%b\r\n" % (2 * len(names), len(first), first)
            heads = tuple(b"\r\n$%d\r\n%b\r\n" % (len(x), x) for x in names[1:]) or None
        else:
            mid, heads = b"\r\n*0", ()
        parts = _NAMES_PARTS[names] = (mid, heads)
    return parts


def _encode_run(run: tuple, out: bytearray) -> None:
    """Entries given as a run ``(ms, seq, names, values)`` (see ``Entries``): the bytes
    between the variable pieces come from ``_names_parts``, and each piece goes straight
    into ``out``. An entry's closing CRLF is written with the next entry's header. A zero
    sequence (explicit IDs, and most automatic ones) formats a third faster on its own."""
    ms, seq, names, values = run
    mid, heads = _names_parts(names)
    hdr = _ID_HDR
    if heads is None:
        # The one-field entry has its own copy of the multi-field loop's first-value step:
        # going through that loop with no heads costs 55 % more for a run of 10 (measured).
        for m, s, v in zip(ms, seq, values):
            sid = b"%d-%d" % (m, s) if s else b"%d-0" % m
            out += hdr[len(sid)]
            hdr = _CRLF_ID_HDR
            out += sid
            out += mid
            n = len(v)
            out += _BULK_HDR[n] if n < 1024 else b"$%d\r\n" % n
            out += v
    elif not heads:
        for m, s in zip(ms, seq):
            sid = b"%d-%d" % (m, s) if s else b"%d-0" % m
            out += hdr[len(sid)]
            hdr = _CRLF_ID_HDR
            out += sid
            out += mid
    else:
        vals = iter(values)
        for m, s, v in zip(ms, seq, vals):
            sid = b"%d-%d" % (m, s) if s else b"%d-0" % m
            out += hdr[len(sid)]
            hdr = _CRLF_ID_HDR
            out += sid
            out += mid
            n = len(v)
            out += _BULK_HDR[n] if n < 1024 else b"$%d\r\n" % n
            out += v
            for head, v in zip(heads, vals):  # stops at the last name: one entry's values
                out += head
                n = len(v)
                out += _BULK_HDR[n] if n < 1024 else b"$%d\r\n" % n
                out += v
    if hdr is _CRLF_ID_HDR:
        out += _CRLF


# --- encoded sealed nodes ------------------------------------------------------------------
# A sealed node's slots never change (see ``Entries``), so once reads of such a node have
# encoded as many entries as it holds, the next read encodes the whole node once, into its
# ``memo`` as ``[bytes, entry boundaries, entries served since]``, and later reads copy
# one slice: a consumer that reads each entry once never pays for it, a second reader of
# the same entries does. Until then ``memo`` counts the entries encoded from the node (an
# int), and None marks a node too big to cache. Reads of a single entry use a cached
# encoding but do not count: one entry encodes in little more time than the counting
# takes, and seeks by one would write to every node they touch.
#
# The cache is bounded: past _cache_budget bytes of encodings, the oldest are dropped.
# It holds its nodes weakly, so a node trimmed or deleted takes its encoding with it.
# When reads spread over more nodes than fit, nodes would be encoded whole only to be
# dropped unread: each node dropped before it served its own size doubles the reading a
# node must have had before it is encoded (``_admit``, up to 64 times its size), each
# that paid off halves it again.


class _Cached(weakref.ref):
    """A cached node, weakly: what its encoding counts for, until it is dropped."""

    __slots__ = ("memo", "size")


class _Uncached:
    __slots__ = ("memo",)

    def __init__(self):
        self.memo = None


_UNCACHED = _Uncached()  # the node of a span the encoder must not cache (its own builds)
_cached: deque = deque()  # _Cached entries, oldest first; dead ones until they are passed
_cache_used = 0  # the sizes of the live entries
_cache_live = 0
_cache_budget = 16 << 20
_admit = 1  # a node is encoded whole once reads have encoded _admit times its entries


def set_node_cache_budget(nbytes: int) -> None:
    """Bound the encoded-node cache to ``nbytes`` (0 turns it off) and drop what is over."""
    global _cache_budget, _admit
    _cache_budget = max(0, nbytes)
    _cache_room(0)
    _admit = 1


def drop_node_cache() -> None:
    """Drop every cached node encoding (MEMORY PURGE); nodes may be cached again later."""
    budget = _cache_budget
    set_node_cache_budget(0)
    set_node_cache_budget(budget)


def node_cache_usage() -> tuple[int, int]:
    """(nodes cached, bytes of their encodings)."""
    return _cache_live, _cache_used


# The cache's bookkeeping is shared by every server of the process (embedded servers run
# on threads of their own) and by the weakref callbacks of nodes that die: one lock. Reads
# of cached encodings take no lock; they only read a node's memo.
_cache_lock = threading.RLock()


def _uncount(entry: _Cached) -> None:
    global _cache_used, _cache_live
    with _cache_lock:
        if entry.size:
            _cache_used -= entry.size
            _cache_live -= 1
            entry.size = 0
            entry.memo = None


def _cache_room(size: int) -> None:
    with _cache_lock:
        _make_room(size)


def _make_room(size: int) -> None:
    global _admit
    while _cached and _cache_used + size > _cache_budget:
        entry = _cached.popleft()
        memo = entry.memo
        if memo is not None:
            if memo[2] < len(memo[1]) - 1:  # it served fewer entries than it holds
                # (besides the read that encoded it)
                _admit = min(64, 2 * _admit)
            elif _admit > 1:
                _admit //= 2
            node = entry()
            if node is not None and node.memo is memo:
                node.memo = 0  # it may earn its place again
        _uncount(entry)


def _cache_node(ms, seq, names, data, offs, node, taking: int) -> list | None:
    """Encode every slot of a sealed node into its memo for a read ``taking`` entries of it
    (not counted as served from the cache); None when the node cannot be cached."""
    global _cache_used, _cache_live, _cached
    n = len(ms)
    out = bytearray()
    bounds = array("I", [0])
    mid, heads = _names_parts(names)
    if heads is None and len(offs) == n:
        # The one-field loop of _encode_span with each entry's CRLF and boundary: a node is
        # encoded whole at twice the speed of one call per entry (a 100-entry node: 30
        # against 70 µs), and while nodes come and go from a full cache, that is the cost.
        a = 0
        for k in range(n):
            s = seq[k]
            sid = b"%d-%d" % (ms[k], s) if s else b"%d-0" % ms[k]
            out += _ID_HDR[len(sid)]
            out += sid
            out += mid
            b = offs[k]
            size = b - a
            out += _BULK_HDR[size] if size < 1024 else b"$%d\r\n" % size
            out += data[a:b]
            out += _CRLF
            a = b
            bounds.append(len(out))
    else:
        for k in range(n):
            _encode_span((ms, seq, names, data, offs, k, k + 1, False, _UNCACHED), out)
            bounds.append(len(out))
    size = len(out) + 4 * len(bounds)
    if size > _cache_budget:
        node.memo = None
        return None
    memo = [bytes(out), bounds, -taking]
    with _cache_lock:
        if type(node.memo) is list:  # another server's thread encoded it meanwhile
            return node.memo
        _make_room(size)
        if len(_cached) > 2 * _cache_live + 1024:  # mostly entries of nodes gone since
            _cached = deque(entry for entry in _cached if entry.size)
        node.memo = memo
        entry = _Cached(node, _uncount)
        entry.memo, entry.size = memo, size
        _cached.append(entry)
        _cache_used += size
        _cache_live += 1
    return memo


def _encode_span(span: tuple, out: bytearray) -> None:
    """Entries given as a span (see ``Entries``): copied from the node's cached encoding
    when it has one, else read straight from the arrays and the buffer, each value sliced
    once on its way into ``out``."""
    ms, seq, names, data, offs, j, stop, reverse, node = span
    if j >= stop:
        return
    if type(data) is bytes:
        memo = node.memo
        if type(memo) is not list and stop - j > 1 and memo is not None:
            if memo < len(ms) * _admit:
                node.memo = memo + stop - j
            elif node.data is data:
                memo = _cache_node(ms, seq, names, data, offs, node, stop - j)
            # else the node was appended to since this span was read (its replies wait for
            # the end of a transaction or script): the arrays it shares with the node hold
            # slots its buffer does not, so it may encode only its own slots.
        if type(memo) is list:
            enc, bounds, served = memo
            if stop < len(bounds):
                memo[2] = served + stop - j
                if not reverse:
                    out += enc[bounds[j]:bounds[stop]]
                else:
                    for k in range(stop - 1, j - 1, -1):
                        out += enc[bounds[k]:bounds[k + 1]]
                return
    mid, heads = _names_parts(names)
    n = len(names)
    hdr = _ID_HDR
    if n == 1 and not reverse:
        # The usual read: one field, oldest first; slot k's value ends at offs[k].
        a = offs[j - 1] if j else 0
        if stop - j > 24:
            # Past a few dozen entries, copying out the three slices and zipping them
            # beats indexing each array per entry (10 % at 100; it loses 30 % at 1).
            for m, s, b in zip(ms[j:stop], seq[j:stop], offs[j:stop]):
                sid = b"%d-%d" % (m, s) if s else b"%d-0" % m
                out += hdr[len(sid)]
                hdr = _CRLF_ID_HDR
                out += sid
                out += mid
                size = b - a
                out += _BULK_HDR[size] if size < 1024 else b"$%d\r\n" % size
                out += data[a:b]
                a = b
            out += _CRLF
            return
        for k in range(j, stop):
            s = seq[k]
            sid = b"%d-%d" % (ms[k], s) if s else b"%d-0" % ms[k]
            out += hdr[len(sid)]
            hdr = _CRLF_ID_HDR
            out += sid
            out += mid
            b = offs[k]
            size = b - a
            out += _BULK_HDR[size] if size < 1024 else b"$%d\r\n" % size
            out += data[a:b]
            a = b
        out += _CRLF
        return
    for k in (range(stop - 1, j - 1, -1) if reverse else range(j, stop)):
        s = seq[k]
        sid = b"%d-%d" % (ms[k], s) if s else b"%d-0" % ms[k]
        out += hdr[len(sid)]
        hdr = _CRLF_ID_HDR
        out += sid
        out += mid
        if n:
            v = k * n
            a = offs[v - 1] if v else 0
            b = offs[v]
            size = b - a
            out += _BULK_HDR[size] if size < 1024 else b"$%d\r\n" % size
            out += data[a:b]
            for head in heads or ():
                a = b
                v += 1
                b = offs[v]
                out += head
                size = b - a
                out += _BULK_HDR[size] if size < 1024 else b"$%d\r\n" % size
                out += data[a:b]
    out += _CRLF


def encode(value, out: bytearray, resp: int = 2) -> None:
    """Append the RESP encoding of ``value`` to ``out``."""
    t = type(value)
    if t is bytes:
        n = len(value)
        out += _BULK_HDR[n] if n < 1024 else b"$%d\r\n" % n
        out += value
        out += _CRLF
    elif t is list or t is tuple:
        n = len(value)
        out += _ARR_HDR[n] if n < 1024 else b"*%d\r\n" % n
        encode_each(value, out, resp)
    elif t is Entries:
        n = value.count
        out += _ARR_HDR[n] if n < 1024 else b"*%d\r\n" % n
        for item in value.items:
            size = len(item)
            if size == 2:
                sid, fields = item
                out += _ENTRY_HDR
                out += _BULK_HDR[len(sid)]  # an ID is at most 41 bytes
                out += sid
                out += _CRLF
                encode(fields, out, resp)  # a flat array of bulk strings, or a null
            elif size == 9:
                _encode_span(item, out)
            else:
                _encode_run(item, out)
    elif t is int:
        if 0 <= value < 1024:
            out += _INT_CACHE[value]
        elif -_I64 <= value < _I64:
            out += b":%d\r\n" % value
        else:
            # A RESP integer is a signed 64-bit value. Redis's int64 counters wrap there
            # (XSETID ENTRIESADDED 2**63-1, then an XADD, shows -2**63); so does the reply.
            out += b":%d\r\n" % ((value + _I64) % (2 * _I64) - _I64)
    elif value is None:
        out += _NULL3 if resp == 3 else _NULL2
    elif t is Simple:
        out += b"+"
        out += value.text
        out += _CRLF
    elif t is Raw:
        out += value.data
    elif t is Map:
        items = value.items
        if resp == 3:
            out += b"%%%d\r\n" % len(items)
        else:
            out += b"*%d\r\n" % (2 * len(items))
        for k, v in items:
            encode(k, out, resp)
            encode(v, out, resp)
    elif t is str:
        encode(value.encode(), out, resp)
    elif value is NULL_ARRAY:
        out += _NULL3 if resp == 3 else _NULL_ARRAY2
    elif t is ErrorReply:
        text = value.text.replace("\r", " ").replace("\n", " ")
        out += b"-"
        try:  # the bytes of an echoed argument go back as they came (errors._show)
            out += text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            out += text.encode("utf-8", "replace")
        out += _CRLF
    elif t is float:
        if resp == 3:
            out += b","
            out += _format_double(value)
            out += _CRLF
        else:
            encode(_format_double(value), out, resp)
    elif t is bool:
        if resp == 3:
            out += b"#t\r\n" if value else b"#f\r\n"
        else:
            out += b":1\r\n" if value else b":0\r\n"
    elif t is Verbatim:
        if resp == 3:
            body = value.fmt + b":" + value.text
            out += b"=%d\r\n" % len(body)
            out += body
            out += _CRLF
        else:
            encode(value.text, out, resp)
    elif t is SetReply:
        items = value.items
        out += (b"~%d\r\n" if resp == 3 else b"*%d\r\n") % len(items)
        for item in items:
            encode(item, out, resp)
    elif t is Push:
        items = value.items
        out += (b">%d\r\n" if resp == 3 else b"*%d\r\n") % len(items)
        for item in items:
            encode(item, out, resp)
    elif t is Replies:
        for item in value.items:
            encode(item, out, resp)
    elif t is bytearray or t is memoryview:
        encode(bytes(value), out, resp)
    else:
        raise TypeError(f"cannot encode reply value of type {t.__name__}")


def encode_each(values, out: bytearray, resp: int = 2) -> None:
    """Append the encodings of ``values`` one after another: an array's items, or the
    replies of a batch. Bulk strings and small integers (stream replies' leaves, pipelined
    XADD's and XACK's replies) are written inline."""
    for value in values:
        t = type(value)
        if t is bytes:
            n = len(value)
            out += _BULK_HDR[n] if n < 1024 else b"$%d\r\n" % n
            out += value
            out += _CRLF
        elif t is int and 0 <= value < 1024:
            out += _INT_CACHE[value]
        else:
            encode(value, out, resp)


def to_bytes(value, resp: int = 2) -> bytes:
    """Encode a single reply value (convenience for tests and constant replies)."""
    out = bytearray()
    encode(value, out, resp)
    return bytes(out)


# sdscatrepr's escapes: quote and backslash, the C escapes it knows, and \xNN for any other
# byte outside printable ASCII (Redis's isprint in the C locale).
_REPR_ESCAPES = {i: b"\\x%02x" % i for i in range(256) if not 32 <= i < 127}
_REPR_ESCAPES.update({0x5C: b"\\\\", 0x22: b'\\"', 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t",
                      0x07: b"\\a", 0x08: b"\\b"})
_REPR_UNSAFE = re.compile(rb'[^\x20\x21\x23-\x5b\x5d-\x7e]')


def quoted(data: bytes) -> bytes:
    """``data`` as Redis's sdscatrepr writes it (MONITOR's arguments, CONFIG REWRITE's
    strings): in double quotes, with quotes, backslashes and unprintable bytes escaped."""
    return b'"' + _REPR_UNSAFE.sub(lambda m: _REPR_ESCAPES[m.group()[0]], data) + b'"'
