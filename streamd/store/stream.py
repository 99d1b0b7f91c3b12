"""The stream data type: entries in packed nodes that mirror Redis's listpack nodes.

Redis keeps a stream as a radix tree of listpacks. Which entries share a listpack is
observable (``MAXLEN ~``, ``MINID ~`` and ``LIMIT`` drop whole nodes; ``radix-tree-keys``
counts them), so this module reproduces the node boundaries exactly: a new node starts when
the tail node's estimated listpack size plus the new entry's raw size reaches
``stream-node-max-bytes``, or when the tail already holds ``stream-node-max-entries`` slots
(live and deleted). The byte estimate follows listpack's element encodings.

Storage is packed so a million small entries stay small: per node, two arrays of ms/seq
parts, one byte buffer of concatenated values with an array of end offsets (a sealed node
keeps seq parts and offsets in the narrowest item size that holds them), the
node's master field tuple shared by every entry that has the same field names (and by the
next node when it starts with them too), and a per-slot schema only for entries whose field
names differ. The nodes' first IDs sit in two more arrays, for bisecting. Deleted slots are tombstones in
a per-node bytearray; nothing shifts.

IDs are the single ints of ``store.streamid``. No command names or error texts here.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import islice
from sys import byteorder

from .streamid import MAX_ID, U64

LISTPACK_MAX_SIZE = 1 << 30  # Redis caps a stream listpack at 1 GiB (and 0 means "this")
_I64_SIGN = 1 << 63
_TWO64 = 1 << 64
_NUM_START = frozenset(b"-0123456789")  # first bytes of strings listpack may store as ints
_LITTLE = byteorder == "little"


def entry_too_large(fields: list) -> bool:
    """Whether an entry with flat ``fields`` is too large to append (Redis refuses entries
    whose fields and values together exceed the 1 GiB listpack cap)."""
    if len(fields) == 2:  # the usual entry, checked without building an iterator
        return len(fields[0]) + len(fields[1]) > LISTPACK_MAX_SIZE
    return sum(map(len, fields)) > LISTPACK_MAX_SIZE


# --- listpack size estimator ---------------------------------------------------------------

def _backlen(n: int) -> int:
    """Bytes listpack needs to store an element's encoded length backwards."""
    if n <= 127:
        return 1
    if n < 16383:
        return 2
    if n < 2097151:
        return 3
    if n < 268435455:
        return 4
    return 5


def _int_size(v: int) -> int:
    """Listpack bytes of an integer element (encoding + backlen)."""
    if 0 <= v <= 127:
        return 2
    if -4096 <= v <= 4095:
        return 3
    if -32768 <= v <= 32767:
        return 4
    if -8388608 <= v <= 8388607:
        return 5
    if -2147483648 <= v <= 2147483647:
        return 6
    return 10


def _as_int64(v: int) -> int:
    """A uint64 difference as the int64 listpack stores for ID deltas."""
    v &= U64
    return v - _TWO64 if v & _I64_SIGN else v


# Listpack bytes of a non-negative integer by its decimal digit count, where the count
# alone decides it (0: look at the value).
_DIGITS_SIZE = (0, 2, 2, 0, 0, 0, 5, 0, 6, 6, 0, 10, 10, 10, 10, 10, 10, 10, 10)


def _str_size(b: bytes) -> int:
    """Listpack bytes of a string element; strings that parse as int64 are stored as ints."""
    n = len(b)
    if 0 < n <= 18 and b.isdigit() and (b[0] != 0x30 or n == 1):
        # < 10**18 < 2**63: always an int64; bytes.isdigit is ASCII-only
        return _DIGITS_SIZE[n] or _int_size(int(b))
    if 0 < n <= 20:
        body = b[1:] if b[0] == 0x2D else b
        if body and body.isdigit() and (body[0] != 0x30 or len(body) == 1) and b != b"-0":
            # bytes.isdigit is ASCII-only, so int() parses exactly what string2ll accepts
            v = int(b)
            if -_I64_SIGN <= v < _I64_SIGN:
                return _int_size(v)
    if n < 64:
        enc = 1 + n
    elif n < 4096:
        enc = 2 + n
    else:
        enc = 5 + n
    return enc + _backlen(enc)


# --- runs: the compact form of a read --------------------------------------------------------
#
# A read returns runs of consecutive entries (in reply order) that share their field names:
#   * ``(ms, seq, names, values)``: IDs ``ms[i]-seq[i]``, ``len(names)`` values per entry in
#     the flat list ``values``;
#   * a span ``(ms, seq, names, data, offs, j, stop, reverse, node)``: slots ``j .. stop-1``
#     of a node's own arrays, newest first if ``reverse``; slot k's i-th value is
#     ``data[offs[v - 1]:offs[v]]`` with ``v = k * len(names) + i`` (``offs[-1]`` read as 0
#     for v == 0). Nothing is copied: a node only ever appends to these arrays and buffer
#     (sealing, trimming and deleting replace or flag, never rewrite), so a span keeps
#     showing the entries as they were read. For the same reason a slot of a node object
#     holds the same entry for the node's whole life, which lets the reply encoder keep
#     what it derives from a sealed node's slots in ``node.memo`` (reset to 0 here whenever
#     slots are added; the store never reads it).

def run_len(run: tuple) -> int:
    """Number of entries in a run or span."""
    return len(run[0]) if len(run) == 4 else run[6] - run[5]


def run_ids(run: tuple) -> list[int]:
    """The entry IDs of a run or span, in its order."""
    if len(run) == 4:
        return [(m << 64) | q for m, q in zip(run[0], run[1])]
    ms, seq, _, _, _, j, stop, reverse, _ = run
    ids = [(m << 64) | q for m, q in zip(ms[j:stop], seq[j:stop])]
    if reverse:
        ids.reverse()
    return ids


def run_entries(run: tuple) -> list:
    """The entries of a run or span as ``(id, [field, value, ...])`` pairs, in its order."""
    ids = run_ids(run)
    if len(run) == 4:
        names, values = run[2], run[3]
    else:
        _, _, names, data, offs, j, stop, reverse, _ = run
        n = len(names)
        values = _values(data, offs, j * n, stop * n)
        if reverse and n:  # entries newest first, each entry's values in field order
            values = [v for at in range(len(values) - n, -1, -n) for v in values[at:at + n]]
    n = len(names)
    if n == 1:
        name = names[0]
        return [(sid, [name, v]) for sid, v in zip(ids, values)]
    out = []
    at = 0
    for sid in ids:
        fields = [None] * (2 * n)
        fields[0::2] = names
        fields[1::2] = values[at:at + n]
        out.append((sid, fields))
        at += n
    return out


def _values(data, offs, first: int, stop: int) -> list:
    """Values ``first .. stop-1`` (value indices) of a node's buffer and end offsets, as
    bytes."""
    a = offs[first - 1] if first else 0
    ends = offs[first:stop]
    if type(data) is not bytes:  # the tail's growing buffer: copy the span once
        data = bytes(data[a:ends[-1]]) if ends else b""
        ends = [b - a for b in ends]
        a = 0
    out = []
    for b in ends:
        out.append(data[a:b])
        a = b
    return out


# --- nodes ---------------------------------------------------------------------------------

def _narrowest(a: array) -> array:
    """A copy of ``a`` (an array of non-negative ints) with item size 1 or 2 where its
    values fit, else of its own type.

    Decided on the bytes (little-endian: a value fits in k bytes when all its other bytes
    are zero), since ``max`` or converting item by item costs a Python int per item: about
    1 µs per 100-slot array this way, 4.5 µs the other.
    """
    if not _LITTLE:
        return array(a.typecode, a)
    b = a.tobytes()
    step = a.itemsize
    n = len(a)
    low = b[::step]
    high_zeros = b.count(0) - low.count(0)
    if high_zeros == (step - 1) * n:
        return array("B", low)
    if high_zeros - b[1::step].count(0) == (step - 2) * n:
        narrow = array("H")
        narrow.frombytes(memoryview(b).cast("H")[::step // 2].tobytes())
        return narrow
    return array(a.typecode, a)


class _Node:
    """One listpack's worth of entries ("slots"), live or tombstoned.

    Invariants: slot IDs increase (a run of tombstones may repeat the ID before them, see
    ``Stream._drop_dead_tail``); ``len(ms) == len(seq) == slots``; ``live +
    ndead == slots``; ``offs`` holds one cumulative end offset per stored value; when
    ``vstart`` is None every slot uses ``master`` and slot j's values start at value index
    ``j * len(master)``.
    """

    __slots__ = ("ms", "seq", "data", "offs", "master", "odd", "vstart", "dead", "live",
                 "ndead", "body", "base", "ms0", "seq0", "last", "memo", "__weakref__")

    def __init__(self, master: tuple, base: int = 0):
        self.ms = array("Q")  # slot ms parts
        self.seq = array("Q")  # slot seq parts
        self.data = bytearray()  # concatenated values; frozen to bytes once the node is sealed
        self.offs = array("I")  # end offset in data of each value, in slot order
        self.master = master  # field names of the node's first entry (the master entry)
        self.odd: dict | None = None  # slot -> field tuple, for slots whose names differ
        self.vstart: array | None = None  # slot -> first value index; only with odd slots
        self.dead: bytearray | None = None  # slot -> 1 if tombstoned; None while none are
        self.live = 0  # live slots (the listpack master "count")
        self.ndead = 0  # tombstoned slots (the master "deleted")
        # Listpack bytes except the two count elements (whose size depends on their value):
        # header + end byte, num-fields, master fields, master terminator, and every slot.
        # ``base`` is that size with no slots: the same for every node with this master,
        # so the caller passes the previous node's when they share it.
        if not base:
            base = 7 + _int_size(len(master)) + sum(map(_str_size, master)) + 2
        self.base = self.body = base
        # The master entry's ID parts (what slot deltas are taken from) and the last slot's
        # ID; both are set by the first append.
        self.ms0 = self.seq0 = self.last = 0
        # The reply encoder's own use (see ``runs``); reset whenever slots are added.
        self.memo = 0

    # -- size / ids --
    def lp_bytes(self) -> int:
        return self.body + _int_size(self.live) + _int_size(self.ndead)

    def slots(self) -> int:
        return len(self.ms)

    def id_at(self, j: int) -> int:
        return (self.ms[j] << 64) | self.seq[j]

    def first_id(self) -> int:
        return (self.ms[0] << 64) | self.seq[0]

    def last_slot_id(self) -> int:
        return (self.ms[-1] << 64) | self.seq[-1]

    def lower_bound(self, sid: int) -> int:
        """Index of the first slot with ID >= sid (binary searches run in C)."""
        ms_t = sid >> 64
        ms = self.ms
        lo = bisect_left(ms, ms_t)
        if lo == len(ms) or ms[lo] != ms_t:
            return lo
        seq_t = sid & U64
        if self.seq[lo] >= seq_t:  # a start of "ms" or "ms-0" ends here
            return lo
        # slots sharing the ms are ordered by seq
        return bisect_left(self.seq, seq_t, lo, bisect_right(ms, ms_t, lo))

    def is_live(self, j: int) -> bool:
        return self.dead is None or not self.dead[j]

    # -- entries --
    def fields(self, j: int) -> list:
        names = self.master
        odd = self.odd
        if odd is not None:
            names = odd.get(j, names)
            start = self.vstart[j]
        else:
            start = j * len(names)
        offs, data = self.offs, self.data
        a = offs[start - 1] if start else 0
        out = []
        frozen = type(data) is bytes
        for k, name in enumerate(names):
            b = offs[start + k]
            out.append(name)
            out.append(data[a:b] if frozen else bytes(data[a:b]))
            a = b
        return out

    def _vindex(self, j: int) -> int:
        """Index in ``offs`` of slot j's first value (``len(offs)`` past the last slot)."""
        if j >= len(self.ms):
            return len(self.offs)
        return self.vstart[j] if self.vstart is not None else j * len(self.master)

    def values(self, first: int, stop: int) -> list:
        """Stored values ``first .. stop-1`` (value indices) as bytes."""
        return _values(self.data, self.offs, first, stop)

    def runs(self, j: int, stop: int, left: int, out: list) -> int:
        """Append to ``out`` the live slots of ``j .. stop-1``, at most ``left`` of them (< 0:
        all), as runs or a span (see "runs" above) of consecutive slots that share field
        names; returns how many entries were added."""
        master, dead, odd = self.master, self.dead, self.odd
        if dead is None and odd is None:
            # The usual node: one span over its arrays, nothing copied (see ``run_ids``).
            if 0 < left < stop - j:
                stop = j + left
            out.append((self.ms, self.seq, master, self.data, self.offs, j, stop, False, self))
            return stop - j
        added = 0
        k = j
        while k < stop and added != left:
            if dead is not None and dead[k]:
                k += 1
                continue
            names = master if odd is None else odd.get(k, master)
            e = k + 1
            while (e < stop and added + e - k != left and (dead is None or not dead[e])
                   and (odd is None or odd.get(e, master) == names)):
                e += 1
            out.append((self.ms[k:e], self.seq[k:e], names,
                        self.values(self._vindex(k), self._vindex(e))))
            added += e - k
            k = e
        return added

    def runs_back(self, j: int, stop: int, left: int, out: list) -> int:
        """``runs`` in descending order: the live slots of ``j .. stop-1``, the highest
        ``left`` of them (< 0: all), newest first; returns how many entries were added."""
        master, dead = self.master, self.dead
        if dead is None and self.odd is None:
            if 0 < left < stop - j:
                j = stop - left
            out.append((self.ms, self.seq, master, self.data, self.offs, j, stop, True, self))
            return stop - j
        # Tombstones or odd schemas (rare): one run per live slot.
        added = 0
        for k in range(stop - 1, j - 1, -1):
            if added == left:
                break
            if dead is None or not dead[k]:
                added += self.runs(k, k + 1, 1, out)
        return added

    def append(self, sid: int, names: tuple, values: list, elem_bytes: int) -> None:
        if type(self.data) is bytes:  # a sealed node became the tail again
            self.data = bytearray(self.data)
            self.seq = array("Q", self.seq)  # sealing may have narrowed these two
            self.offs = array("I", self.offs)
            self.memo = 0
        j = len(self.ms)
        if not j:
            self.ms0, self.seq0 = sid >> 64, sid & U64
        if names is not self.master:
            if self.odd is None:
                n = len(self.master)
                self.odd = {}
                self.vstart = array("I", range(0, j * n, n)) if n else array("I", [0] * j)
            self.odd[j] = names
        if self.vstart is not None:
            self.vstart.append(len(self.offs))
        ms = sid >> 64
        self.ms.append(ms)
        self.seq.append(sid & U64)
        data, offs = self.data, self.offs
        for v in values:
            data += v
            offs.append(len(data))
        if self.dead is not None:
            self.dead.append(0)
        self.live += 1
        self.body += elem_bytes
        self.last = sid

    def seal(self) -> None:
        """The node stops being the tail: freeze the buffer, drop array over-allocation,
        and keep seq parts and value offsets in the narrowest item size that holds them."""
        if type(self.data) is not bytes:
            self.data = bytes(self.data)
            if len(self.ms) < 32:
                # A few slots over at most (arrays over-allocate 1/16 plus 3 to 7 slots): not
                # worth three copies per node when big values fill nodes in a few entries.
                return
            self.ms = array("Q", self.ms)
            # Seq parts are mostly 0 or small (they count entries within one ms), and a
            # node's values rarely reach 64 KiB: about 9 of the 35 bytes an 8-byte entry
            # took (python -m bench, 1M entries).
            self.seq = _narrowest(self.seq)
            self.offs = _narrowest(self.offs)

    def kill(self, j: int) -> None:
        if self.dead is None:
            self.dead = bytearray(len(self.ms))
        self.dead[j] = 1
        self.live -= 1
        self.ndead += 1

    def copy(self) -> "_Node":
        n = _Node.__new__(_Node)
        n.ms = array("Q", self.ms)
        n.seq = array(self.seq.typecode, self.seq)
        n.data = self.data if type(self.data) is bytes else bytearray(self.data)
        n.offs = array(self.offs.typecode, self.offs)
        n.master = self.master
        n.odd = dict(self.odd) if self.odd is not None else None
        n.vstart = array("I", self.vstart) if self.vstart is not None else None
        n.dead = bytearray(self.dead) if self.dead is not None else None
        n.live, n.ndead, n.body, n.base = self.live, self.ndead, self.body, self.base
        n.ms0, n.seq0, n.last = self.ms0, self.seq0, self.last
        n.memo = 0
        return n


# --- the stream ----------------------------------------------------------------------------

class Stream:
    """A Redis stream value. Consumer groups and IDMP state hang off it, owned elsewhere."""

    TYPE_NAME = "stream"  # what TYPE reports
    ENCODING = "stream"  # what OBJECT ENCODING reports

    __slots__ = ("length", "last_id", "first_id", "max_deleted_id", "entries_added",
                 "groups", "idmp", "_nodes", "_fms", "_fseq", "__weakref__")

    def __init__(self):
        self.length = 0  # live entries
        self.last_id = 0  # last generated/added ID; only XSETID lowers it; deletions don't
        self.first_id = 0  # first live entry's ID as Redis records it (§1.2); 0 when empty
        self.max_deleted_id = 0  # max ID removed by XDEL-style deletion; trimming leaves it
        self.entries_added = 0  # lifetime appends
        self.groups: dict = {}  # name -> consumer group (owned by the group code)
        self.idmp = None  # per-stream IDMP state (owned by streamd.idmp), or None
        self._nodes: list[_Node] = []  # in ID order; never holds a node without slots
        # The nodes' first IDs, for bisecting: ``_fms[i] << 64 | _fseq[i] ==
        # _nodes[i].first_id()``. Packed arrays rather than a list of ints: a seek in a big
        # stream then reads a few adjacent cache lines instead of one scattered int object
        # per bisection step.
        self._fms = array("Q")
        self._fseq = array("Q")

    def __len__(self) -> int:
        return self.length

    def node_count(self) -> int:
        """Number of listpack nodes (XINFO ``radix-tree-keys``)."""
        return len(self._nodes)

    # --- IDs -------------------------------------------------------------------------------
    def next_auto_id(self, now_ms: int) -> int | None:
        """The ID ``XADD *`` would use now; None when ``last_id`` is the maximum ID."""
        last = self.last_id
        if last == MAX_ID:
            return None
        if now_ms > (last >> 64):
            return now_ms << 64
        return last + 1  # the int form carries seq overflow into ms by itself

    # --- writes ----------------------------------------------------------------------------
    def append(self, sid: int, fields: list, node_max_entries: int,
               node_max_bytes: int) -> None:
        """Add entry ``sid`` (the caller checked ``sid > last_id``) with flat ``fields``.

        This is XADD's inner loop, so the common case (the entry has the tail node's field
        names, the tail has no tombstones or odd slots) is written out inline; anything
        else goes through ``_Node.append``.
        """
        nodes = self._nodes
        if nodes and len(fields) == 2:
            # The usual append, first: one field, named as the tail node's one master
            # field, into a plain tail that has room. The same rules as the general path
            # below (which anything else takes), with what they cannot change left out.
            # It keeps its own copy of the inline append at the end of that path: one
            # block serving both cost 4-7 % on pipelined XADD (in-process A/B).
            tail = nodes[-1]
            master = tail.master
            slots = tail.ms
            if (len(master) == 1 and fields[0] == master[0] and tail.last < sid
                    and tail.vstart is None and tail.dead is None
                    and type(tail.data) is bytearray
                    and (node_max_entries <= 0 or len(slots) < node_max_entries)):
                value = fields[1]
                n = len(value)
                if n < 64:
                    size = n + 4 if not n or value[0] not in _NUM_START else 2 + _str_size(value)
                elif n < 4096:
                    size = n + 5 if n < 126 else n + 6
                else:
                    size = 2 + _str_size(value)
                if node_max_bytes <= 0 or node_max_bytes > LISTPACK_MAX_SIZE:
                    node_max_bytes = LISTPACK_MAX_SIZE
                body = tail.body
                lp = body + 4 if len(slots) < 128 else tail.lp_bytes()
                if lp + len(master[0]) + n < node_max_bytes:
                    ms, seq = sid >> 64, sid & U64
                    dms = ms - tail.ms0
                    dseq = seq - tail.seq0
                    size += 2 if 0 <= dms < 128 else _int_size(
                        dms if -_I64_SIGN <= dms < _I64_SIGN else _as_int64(dms))
                    size += 2 if 0 <= dseq < 128 else _int_size(
                        dseq if -_I64_SIGN <= dseq < _I64_SIGN else _as_int64(dseq))
                    slots.append(ms)
                    tail.seq.append(seq)
                    data = tail.data
                    data += value
                    tail.offs.append(len(data))
                    tail.live += 1
                    tail.body = body + size + 2  # + lp-count
                    tail.last = sid
                    self.length += 1
                    self.entries_added += 1
                    self.last_id = sid
                    if self.length == 1:
                        self.first_id = sid
                    return
        tail = nodes[-1] if nodes else None
        if tail is not None and tail.last >= sid:
            # Only reachable when trailing tombstones outlive an XSETID that moved last_id
            # below them; Redis writes after them, out of order.
            self._drop_dead_tail(sid)
            tail = nodes[-1] if nodes else None
        nf = len(fields) >> 1
        # Raw bytes (the node-size check) and listpack bytes of the values (after the 2-byte
        # flags element), in one pass; the common values are sized without a call: short
        # non-numeric strings, and any string of 64 bytes to 4 KiB (too long to be an
        # integer). A single field, the usual entry, is sized without the loop.
        if nf == 1:
            value = fields[1]
            n = len(value)
            raw = len(fields[0]) + n
            if n < 64:
                size = n + 4 if not n or value[0] not in _NUM_START else 2 + _str_size(value)
            elif n < 4096:
                size = n + 5 if n < 126 else n + 6  # 2-byte header, 1- or 2-byte backlen
            else:
                size = 2 + _str_size(value)
        else:
            raw = 0
            size = 2
            for k in range(1, 2 * nf, 2):
                value = fields[k]
                n = len(value)
                raw += len(fields[k - 1]) + n
                if n < 64:
                    size += n + 2 if not n or value[0] not in _NUM_START else _str_size(value)
                elif n < 4096:
                    size += n + 3 if n < 126 else n + 4
                else:
                    size += _str_size(value)
        if tail is not None:
            if node_max_entries > 0 and len(tail.ms) >= node_max_entries:
                tail.seal()
                tail = None
            else:
                if node_max_bytes <= 0 or node_max_bytes > LISTPACK_MAX_SIZE:
                    node_max_bytes = LISTPACK_MAX_SIZE
                # below 128 slots both count elements take 2 bytes
                lp = tail.body + 4 if len(tail.ms) < 128 else tail.lp_bytes()
                if lp + raw >= node_max_bytes:
                    tail.seal()
                    tail = None
        ms, seq = sid >> 64, sid & U64
        if tail is None:
            names = tuple(fields[0::2])
            prev = nodes[-1] if nodes else None
            if prev is not None and names == prev.master:
                # Consecutive nodes of one producer share one tuple (and its name strings)
                # rather than keeping each node's first request's copies alive.
                tail = _Node(prev.master, prev.base)
                names = tail.master
            else:
                tail = _Node(names)
            tail.ms0, tail.seq0 = ms, seq
            nodes.append(tail)
            self._fms.append(ms)
            self._fseq.append(seq)
            size += 4  # ms and seq deltas are 0
        else:
            master = tail.master
            if nf == 1 and len(master) == 1 and fields[0] == master[0]:
                names = master  # the usual entry: no tuple to build and compare
            else:
                names = tuple(fields[0::2])
                if names == master:
                    names = master  # share the tuple; identity marks "same fields"
            dms = ms - tail.ms0
            dseq = seq - tail.seq0
            size += 2 if 0 <= dms < 128 else _int_size(
                dms if -_I64_SIGN <= dms < _I64_SIGN else _as_int64(dms))
            size += 2 if 0 <= dseq < 128 else _int_size(
                dseq if -_I64_SIGN <= dseq < _I64_SIGN else _as_int64(dseq))
        if names is tail.master:
            size += 2 if nf < 125 else _int_size(nf + 3)  # lp-count
            if tail.vstart is None and tail.dead is None and type(tail.data) is bytearray:
                tail.ms.append(ms)
                tail.seq.append(seq)
                data, offs = tail.data, tail.offs
                for k in range(1, 2 * nf, 2):
                    data += fields[k]
                    offs.append(len(data))
                tail.live += 1
                tail.body += size
                tail.last = sid
                self.length += 1
                self.entries_added += 1
                self.last_id = sid
                if self.length == 1:
                    self.first_id = sid
                return
        else:
            size += _int_size(nf) + _int_size(2 * nf + 4)
            for f in names:
                size += _str_size(f)
        tail.append(sid, names, fields[1::2], size)
        self.length += 1
        self.entries_added += 1
        self.last_id = sid
        if self.length == 1:
            self.first_id = sid

    def _drop_dead_tail(self, sid: int) -> None:
        """Make room to append ``sid`` below the tail's trailing tombstones: a tail node
        with nothing below ``sid`` goes, a tail node with slots below it keeps them and
        the passed tombstones' weight."""
        nodes = self._nodes
        while nodes:
            node = nodes[-1]
            j = node.lower_bound(sid)
            if j == 0:
                nodes.pop()
                self._fms.pop()
                self._fseq.pop()
                continue
            if j < node.slots():
                keep = [(node.id_at(k), node.fields(k), node.is_live(k)) for k in range(j)]
                fresh = _Node(node.master)
                for k_sid, k_fields, k_live in keep:
                    names = tuple(k_fields[0::2])
                    fresh.append(k_sid, node.master if names == node.master else names,
                                 k_fields[1::2], 0)
                    if not k_live:
                        fresh.kill(fresh.slots() - 1)
                # Redis's listpack keeps the passed tombstones, so their slots and their
                # bytes still count toward the node limits. They stay as tombstones that
                # repeat the last kept ID, keeping slot IDs in order (unlike Redis's, a
                # MINID walk through the node does not stop at them).
                filler = [b""] * len(node.master)
                for _ in range(node.slots() - j):
                    fresh.append(fresh.last, node.master, filler, 0)
                    fresh.kill(fresh.slots() - 1)
                fresh.body = node.body
                nodes[-1] = fresh
            break

    def delete(self, sid: int) -> bool:
        """XDEL one ID: tombstone it, update max_deleted/first_id, free an emptied node."""
        loc = self._locate(sid)
        if loc is None:
            return False
        ni, j = loc
        node = self._nodes[ni]
        if node.live == 1:
            del self._nodes[ni]
            del self._fms[ni]
            del self._fseq[ni]
        else:
            node.kill(j)
        self.length -= 1
        if sid > self.max_deleted_id:
            self.max_deleted_id = sid
        if self.length == 0:
            self.first_id = 0
        elif sid == self.first_id:
            self.first_id = self._first_live_id()
        return True

    def trim(self, *, maxlen: int | None = None, minid: int | None = None,
             approx: bool = False, limit: int = 0, keep=None, on_delete=None) -> int:
        """Remove entries from the head as Redis's streamTrim does; returns how many.

        ``keep(sid)`` true means the entry must survive (ACKED); ``on_delete(sid)`` runs for
        each entry deleted one by one (DELREF). With neither (KEEPREF) whole eligible nodes
        are dropped without visiting their entries, and ``approx`` stops at the first node
        that cannot go as a whole. ``limit`` (0 = none) caps the entries removed, checked
        per node. ``max_deleted_id`` is left alone.
        """
        if maxlen is None and minid is None:
            return 0
        keepref = keep is None and on_delete is None
        nodes = self._nodes
        deleted = 0
        gone: list[int] = []  # indexes of nodes to free
        i = 0
        by_len = maxlen is not None
        while i < len(nodes):
            if by_len and self.length <= maxlen:
                break
            node = nodes[i]
            entries = node.live
            if limit and deleted + entries > limit:
                break
            if by_len:
                eligible = self.length - entries >= maxlen
            else:
                eligible = node.last_slot_id() < minid
            if eligible and keepref:
                gone.append(i)
                self.length -= entries
                deleted += entries
                i += 1
                continue
            if approx and keepref:
                break
            here = 0
            ms, seq = node.ms, node.seq
            for j in range(len(ms)):
                sid = (ms[j] << 64) | seq[j]
                if by_len:
                    if self.length <= maxlen:
                        break
                elif sid >= minid:
                    break
                if node.dead is not None and node.dead[j]:
                    continue
                if keep is not None and keep(sid):
                    continue
                if on_delete is not None:
                    on_delete(sid)
                node.kill(j)
                self.length -= 1
                here += 1
            deleted += here
            if eligible:
                if here == entries:
                    gone.append(i)
                i += 1
                continue
            break
        if gone:
            if gone[-1] == len(gone) - 1:  # a prefix: the usual case
                del nodes[:len(gone)]
                del self._fms[:len(gone)]
                del self._fseq[:len(gone)]
            else:
                drop = set(gone)
                self._nodes = [n for k, n in enumerate(nodes) if k not in drop]
                self._fms = array("Q", [f for k, f in enumerate(self._fms) if k not in drop])
                self._fseq = array("Q", [f for k, f in enumerate(self._fseq) if k not in drop])
        if self.length == 0:
            self.first_id = 0
        elif deleted:
            self.first_id = self._first_live_id()
        return deleted

    # --- reads -----------------------------------------------------------------------------
    def _node_index(self, sid: int) -> int:
        """Index of the last node whose first ID is <= sid; -1 when there is none."""
        ms_t = sid >> 64
        fms = self._fms
        hi = bisect_right(fms, ms_t)
        if hi and fms[hi - 1] == ms_t:
            # nodes that start in the same ms are ordered by their first seq
            lo = bisect_left(fms, ms_t, 0, hi)
            return bisect_right(self._fseq, sid & U64, lo, hi) - 1
        return hi - 1

    def first_ids(self) -> list[int]:
        """Each node's first slot ID, head first (the keys of Redis's radix tree)."""
        return [(m << 64) | q for m, q in zip(self._fms, self._fseq)]

    def _locate(self, sid: int):
        """(node index, slot) of the live entry ``sid``, or None."""
        ni = self._node_index(sid)
        if ni < 0:
            return None
        node = self._nodes[ni]
        j = node.lower_bound(sid)
        if j < node.slots() and node.id_at(j) == sid and node.is_live(j):
            return ni, j
        return None

    def get(self, sid: int) -> list | None:
        loc = self._locate(sid)
        if loc is None:
            return None
        return self._nodes[loc[0]].fields(loc[1])

    def __contains__(self, sid: int) -> bool:
        return self._locate(sid) is not None

    def _first_live_id(self) -> int:
        for node in self._nodes:
            if node.live:
                dead = node.dead
                for j in range(node.slots()):
                    if dead is None or not dead[j]:
                        return node.id_at(j)
        return 0

    def first_entry(self):
        """(id, fields) of the first live entry, or None."""
        for node in self._nodes:
            if node.live:
                dead = node.dead
                for j in range(node.slots()):
                    if dead is None or not dead[j]:
                        return node.id_at(j), node.fields(j)
        return None

    def last_entry(self):
        """(id, fields) of the last live entry, or None."""
        for node in reversed(self._nodes):
            if node.live:
                dead = node.dead
                for j in range(node.slots() - 1, -1, -1):
                    if dead is None or not dead[j]:
                        return node.id_at(j), node.fields(j)
        return None

    def last_live_id(self) -> int:
        """ID of the last live entry, 0 when empty (XREAD serves only streams past it)."""
        nodes = self._nodes
        if nodes and nodes[-1].dead is None:  # no tombstone in the tail: its last slot
            return nodes[-1].last
        for node in reversed(nodes):
            if node.live:
                dead = node.dead
                for j in range(node.slots() - 1, -1, -1):
                    if dead is None or not dead[j]:
                        return node.id_at(j)
        return 0

    def runs(self, start: int, end: int, count: int = -1, reverse: bool = False) -> list:
        """Live entries with start <= id <= end, ascending unless ``reverse``, at most
        ``count`` (-1 = all), as runs and spans (see "runs" above): the compact form of a
        read, for replies built straight from it."""
        out: list = []
        nodes = self._nodes
        if start > end or count == 0 or not nodes:
            return out
        left = count
        if reverse:
            ni = self._node_index(end)
            if ni < 0:
                return out
            node = nodes[ni]
            stop = len(node.ms) if node.last <= end else node.lower_bound(end + 1)
            while True:
                j = node.lower_bound(start)
                if j < stop:
                    left -= node.runs_back(j, stop, left, out)
                    if left == 0 or j:
                        break
                elif j:
                    break
                ni -= 1
                if ni < 0:
                    break
                node = nodes[ni]
                stop = len(node.ms)
            return out
        ni = self._node_index(start)
        if ni < 0:
            ni, j = 0, 0
        else:
            j = nodes[ni].lower_bound(start)
        # Reads to the end (XREAD, "+") need no per-node end check; the tail node is hot,
        # an inner node's ``last`` int would be one more cache miss per seek.
        to_end = end >= nodes[-1].last
        for ni in range(ni, len(nodes)):
            node = nodes[ni]
            n = len(node.ms)
            stop = n if to_end or node.last <= end else node.lower_bound(end + 1)
            if j < stop:
                left -= node.runs(j, stop, left, out)
                if left == 0:
                    break
            if stop < n:
                break
            j = 0
        return out

    def range(self, start: int, end: int, count: int = -1, reverse: bool = False) -> list:
        """Live entries with start <= id <= end as (id, fields), ascending unless reverse;
        at most ``count`` (-1 = unlimited)."""
        out: list = []
        for run in self.runs(start, end, count, reverse):
            out += run_entries(run)
        return out

    # --- whole-value operations ------------------------------------------------------------
    def copy(self) -> "Stream":
        """An independent copy (COPY): nodes, counters, groups and IDMP state."""
        s = Stream()
        s.length, s.last_id, s.first_id = self.length, self.last_id, self.first_id
        s.max_deleted_id, s.entries_added = self.max_deleted_id, self.entries_added
        s._nodes = [n.copy() for n in self._nodes]
        s._fms = array("Q", self._fms)
        s._fseq = array("Q", self._fseq)
        s.groups = {name: (g.copy() if hasattr(g, "copy") else g)
                    for name, g in self.groups.items()}
        if self.idmp is not None and hasattr(self.idmp, "copy"):
            s.idmp = self.idmp.copy()
        else:
            s.idmp = self.idmp
        return s

    def memory_estimate(self, samples: int, per_node: int, per_group: int, per_pending: int,
                        per_consumer: int) -> int:
        """Bytes for MEMORY USAGE: the nodes' modelled listpacks plus ``per_node`` each,
        and the consumer groups with their pending entries and consumers. As Redis does,
        the first ``samples`` nodes (0: all) stand for every node but the last, which is
        counted on its own (the tail is usually the partly filled one); likewise the first
        ``samples`` groups and each one's first ``samples`` consumer names."""
        nodes = self._nodes
        n = len(nodes)
        if not samples or n <= samples:
            size = sum(node.lp_bytes() for node in nodes)
        else:
            taken = sum(nodes[i].lp_bytes() for i in range(samples))
            size = taken * (n - 1) // samples + nodes[-1].lp_bytes()
        size += per_node * n
        groups = self.groups
        some = groups.values() if not samples else islice(groups.values(), samples)
        part = 0
        for group in some:
            part += per_group + len(group.name) + per_pending * len(group.pel)
            names = group.consumers
            k = len(names)
            if not samples or k <= samples:
                part += sum(per_consumer + len(name) for name in names)
            elif k:
                part += sum(per_consumer + len(name)
                            for name in islice(names, samples)) * k // samples
        if samples and len(groups) > samples:
            part = part * len(groups) // samples
        return size + part

    # --- node-level export and import (DUMP / RESTORE) -------------------------------------
    def export_nodes(self):
        """Each node as Redis's listpack holds it: ``(master_id, master_names, live,
        deleted, slots)``, slots being ``(sid, names, values, is_live)`` in order, tombstones
        included (their data stays in a listpack until the node goes)."""
        for node in self._nodes:
            master = node.master
            slots = []
            for j in range(len(node.ms)):
                fields = node.fields(j)
                names = fields[0::2]
                slots.append((node.id_at(j), master if tuple(names) == master else names,
                              fields[1::2], node.is_live(j)))
            yield (node.ms0 << 64) | node.seq0, master, node.live, node.ndead, slots

    def import_node(self, master_id: int, master: tuple, slots: list, lp_bytes: int) -> None:
        """Append a node rebuilt from a saved listpack (see ``export_nodes``); its slots must
        follow every slot already here, in ascending ID order. ``lp_bytes`` is the saved
        listpack's size, which the node-size limits keep counting from. Raises ValueError
        for a node that breaks those rules; counters are the caller's (``set_counters``)."""
        if not slots or not any(live for _, _, _, live in slots):
            raise ValueError("a node without live entries")
        prev = self._nodes[-1].last if self._nodes else -1
        master = tuple(master)
        if self._nodes and self._nodes[-1].master == master:
            # Share the previous node's names, as appends do (memory per node).
            node = _Node(self._nodes[-1].master, self._nodes[-1].base)
        else:
            node = _Node(master)
        for sid, names, values, live in slots:
            if sid <= prev:
                if live:
                    raise ValueError("entry IDs out of order")
                # A tombstone out of order (left behind a lowered last ID): it repeats
                # the ID before it, as ``_drop_dead_tail`` keeps such tombstones.
                sid = prev
            prev = sid
            names = tuple(names)
            node.append(sid, node.master if names == node.master else names, list(values), 0)
            if not live:
                node.kill(len(node.ms) - 1)
        node.ms0, node.seq0 = master_id >> 64, master_id & U64
        node.body = lp_bytes - _int_size(node.live) - _int_size(node.ndead)
        if self._nodes:
            self._nodes[-1].seal()
        self._nodes.append(node)
        self._fms.append(node.ms[0])
        self._fseq.append(node.seq[0])
        self.length += node.live

    def set_counters(self, *, last_id: int, first_id: int | None, max_deleted_id: int,
                     entries_added: int) -> None:
        """The saved counters of a stream whose nodes ``import_node`` rebuilt; ``first_id``
        None derives it from the first live entry (formats that did not save it)."""
        self.last_id = last_id
        self.first_id = (self._first_live_id() if self.length else 0) if first_id is None \
            else first_id
        self.max_deleted_id = max_deleted_id
        self.entries_added = entries_added

    def listpack_bytes(self) -> list[int]:
        """Each node's modelled listpack size in bytes, head first (DEBUG OBJECT)."""
        return [n.lp_bytes() for n in self._nodes]

    def node_sizes(self) -> list[tuple[int, int]]:
        """(live, deleted) per node, head first; for tests and diagnostics."""
        return [(n.live, n.ndead) for n in self._nodes]
