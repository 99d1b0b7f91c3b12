"""Values in Redis's RDB object format, wrapped as DUMP payloads.

A payload is an object type byte, the object, the RDB version (2 bytes, little-endian) and
a CRC-64 of everything before it (8 bytes, little-endian). Values are written as Redis 8.8
writes them (RDB version 14); RESTORE reads every version up to that one, so payloads from
Redis 7.x and 8.x restore here.

Types: strings; hashes as listpack, listpack with field TTLs, or hash table; streams with
their nodes' listpacks byte for byte, consumer groups, pending entries, the 8.8 NACK zone,
and IDMP state. Data only: no command names or reply texts (the command layer turns
``PayloadError`` and ``BadData`` into Redis's errors).
"""

from __future__ import annotations

from struct import pack, unpack_from

from ..idmp.state import DURATION_RANGE, MAXSIZE_RANGE, IdmpConflict
from ..store.groups import UNKNOWN, Consumer, ConsumerGroup, estimate_entries_read
from ..store.hashes import Hash
from ..store.stream import Stream
from ..store.streamid import U64
from . import listpack as lp
from .crc64 import crc64
from .lzf import compress as lzf_compress, decompress as lzf_decompress

RDB_VERSION = 14  # Redis 8.8's

T_STRING = 0
T_HASH = 4
T_STREAM = 15  # 5.0: nodes, length, last ID, groups (no entries_read), consumers
T_HASH_LISTPACK = 16
T_STREAM_2 = 19  # 7.0: + first ID, max deleted ID, entries added; groups' entries_read
T_STREAM_3 = 21  # 7.2: + consumers' active time
T_HASH_METADATA_PRE_GA = 22
T_HASH_LISTPACK_EX_PRE_GA = 23
T_HASH_METADATA = 24  # 7.4: hash table with field TTLs
T_HASH_LISTPACK_EX = 25  # 7.4: listpack with field TTLs
T_STREAM_4 = 26  # 8.6: + IDMP
T_STREAM_5 = 27  # 8.8: + each group's NACK zone

OP_FUNCTION2 = 245  # FUNCTION DUMP: one library's source follows

_STREAM_VERSION = {T_STREAM: 1, T_STREAM_2: 2, T_STREAM_3: 3, T_STREAM_4: 4, T_STREAM_5: 5}

_ENC_INT8, _ENC_INT16, _ENC_INT32, _ENC_LZF = 0, 1, 2, 3
_INT_WIDTHS = {_ENC_INT8: 1, _ENC_INT16: 2, _ENC_INT32: 4}  # bytes of each int encoding
_FLAG_DELETED, _FLAG_SAMEFIELDS = 1, 2


class PayloadError(ValueError):
    """A payload whose version is too new or whose checksum does not match."""


class BadData(ValueError):
    """A payload that passed the checks but does not hold a valid value."""


class NotAFunction(BadData):
    """A FUNCTION RESTORE payload holding something other than libraries."""


# --- primitives ------------------------------------------------------------------------------

class _Out(bytearray):
    def length(self, n: int) -> None:
        if n < 64:
            self.append(n)
        elif n < 16384:
            self += bytes((0x40 | (n >> 8), n & 0xFF))
        elif n <= 0xFFFFFFFF:
            self += b"\x80" + n.to_bytes(4, "big")
        else:
            self += b"\x81" + n.to_bytes(8, "big")

    def string(self, b: bytes, compress: bool) -> None:
        n = len(b)
        if n <= 11:
            v = lp.as_int(b)
            if v is not None and -(1 << 31) <= v < (1 << 31):
                enc = _ENC_INT8 if -128 <= v <= 127 else (
                    _ENC_INT16 if -32768 <= v <= 32767 else _ENC_INT32)
                self.append(0xC0 | enc)
                self += v.to_bytes(_INT_WIDTHS[enc], "little", signed=True)
                return
        if compress and n > 20:
            packed = lzf_compress(b, n - 4)
            if packed is not None:
                self.append(0xC0 | _ENC_LZF)
                self.length(len(packed))
                self.length(n)
                self += packed
                return
        self.length(n)
        self += b

    def ms(self, t: int) -> None:
        self += pack("<q", t)

    def stream_id(self, sid: int) -> None:
        """An ID as two lengths (the stream's own IDs)."""
        self.length(sid >> 64)
        self.length(sid & U64)

    def raw_id(self, sid: int) -> None:
        """An ID as 16 big-endian bytes (node keys and pending entries)."""
        self += sid.to_bytes(16, "big")


class _In:
    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes, end: int):
        self.buf = buf
        self.pos = 0
        self.end = end

    def take(self, n: int) -> bytes:
        p = self.pos
        if n < 0 or p + n > self.end:
            raise BadData("truncated")
        self.pos = p + n
        return self.buf[p:p + n]

    def byte(self) -> int:
        return self.take(1)[0]

    def _len(self) -> tuple[int, bool]:
        b = self.byte()
        kind = b >> 6
        if kind == 0:
            return b & 0x3F, False
        if kind == 1:
            return ((b & 0x3F) << 8) | self.byte(), False
        if kind == 3:
            return b & 0x3F, True
        if b == 0x80:
            return int.from_bytes(self.take(4), "big"), False
        if b == 0x81:
            return int.from_bytes(self.take(8), "big"), False
        raise BadData("bad length")

    def length(self) -> int:
        n, encoded = self._len()
        if encoded:
            raise BadData("encoded length")
        return n

    def string(self) -> bytes:
        n, encoded = self._len()
        if not encoded:
            return self.take(n)
        width = _INT_WIDTHS.get(n)
        if width is not None:
            return b"%d" % int.from_bytes(self.take(width), "little", signed=True)
        if n == _ENC_LZF:
            clen = self.length()
            size = self.length()
            try:
                return lzf_decompress(self.take(clen), size)
            except ValueError as e:
                raise BadData("bad LZF data") from e
        raise BadData("unknown string encoding")

    def ms(self) -> int:
        return unpack_from("<q", self.take(8))[0]

    def stream_id(self) -> int:
        ms = self.length()
        seq = self.length()
        if ms > U64 or seq > U64:
            raise BadData("ID out of range")
        return (ms << 64) | seq

    def raw_id(self) -> int:
        return int.from_bytes(self.take(16), "big")

    def listpack(self) -> list:
        try:
            return lp.decode(self.string())
        except lp.ListpackError as e:
            raise BadData("bad listpack") from e


# --- the envelope ------------------------------------------------------------------------------

def dump(value, *, compress: bool = True) -> bytes:
    """The DUMP payload of a string (bytes), hash or stream. Strings longer than 20 bytes
    are LZF-compressed when ``compress`` (Redis's ``rdbcompression``) and it saves room."""
    out = _Out()
    if isinstance(value, (bytes, bytearray)):
        out.append(T_STRING)
        out.string(bytes(value), compress)
    elif isinstance(value, dict):
        _dump_hash(out, value, compress)
    elif isinstance(value, Stream):
        out.append(T_STREAM_5)
        _dump_stream(out, value, compress)
    else:
        raise TypeError(f"no RDB form for {type(value).__name__}")
    return seal(out)


def verify(payload: bytes, check_crc: bool = True) -> int:
    """The payload's RDB version; raises PayloadError when it is shorter than its footer,
    newer than this server's format, or (if ``check_crc``) its checksum is wrong."""
    if len(payload) < 10:
        raise PayloadError("too short")
    version = payload[-10] | (payload[-9] << 8)
    if version > RDB_VERSION:
        raise PayloadError("version")
    stored = int.from_bytes(payload[-8:], "little")
    # An all-zero checksum means "not computed" (Redis 8 accepts it; 7.0 did not).
    if check_crc and stored and crc64(memoryview(payload)[:-8]) != stored:
        raise PayloadError("checksum")
    return version


def load(payload: bytes, *, hash_max_entries: int = 128, hash_max_value: int = 64,
         new_idmp=None):
    """The value a (verified) payload holds; raises BadData when it holds none.

    Hashes get the encoding Redis would load them with under the given listpack limits.
    ``new_idmp(duration, maxsize)`` makes a stream's IDMP state (None: the stream gets
    none); streams from formats before IDMP get ``new_idmp(None, None)``, the defaults.
    """
    r = _In(payload, len(payload) - 10)
    kind = r.byte()
    if kind == T_STRING:
        value = r.string()
    elif kind in _HASH_TYPES:
        value = _load_hash(r, kind, hash_max_entries, hash_max_value)
    elif kind in _STREAM_VERSION:
        value = _load_stream(r, _STREAM_VERSION[kind], new_idmp)
    else:
        raise BadData("unsupported type")
    return value  # bytes left before the footer are ignored, as Redis does


def seal(body: bytes, version: int = RDB_VERSION) -> bytes:
    """``body`` (a type byte and an object, or FUNCTION DUMP's libraries) made a payload:
    the RDB version and the CRC-64 of all before it."""
    out = bytearray(body)
    out += version.to_bytes(2, "little")
    out += crc64(out).to_bytes(8, "little")
    return bytes(out)


def dump_functions(codes, *, compress: bool = True) -> bytes:
    """FUNCTION DUMP's payload: each library's source, in order."""
    out = _Out()
    for code in codes:
        out.append(OP_FUNCTION2)
        out.string(code, compress)
    return seal(out)


def load_functions(payload: bytes) -> list[bytes]:
    """The library sources of a (verified) FUNCTION DUMP payload."""
    r = _In(payload, len(payload) - 10)
    codes = []
    while r.pos < r.end:
        if r.byte() != OP_FUNCTION2:
            raise NotAFunction("not a library")
        codes.append(r.string())
    return codes


# --- hashes --------------------------------------------------------------------------------

def _dump_hash(out: _Out, h: dict, compress: bool) -> None:
    ttls = getattr(h, "ttls", None) or {}
    if getattr(h, "hashtable", False):
        if ttls:
            # Each TTL relative to the earliest, plus one so that 0 keeps meaning "none".
            base = min(ttls.values())
            out.append(T_HASH_METADATA)
            out.ms(base)
        else:
            out.append(T_HASH)
        out.length(len(h))
        for f, v in h.items():
            if ttls:
                t = ttls.get(f)
                out.length(0 if t is None else t - base + 1)
            out.string(f, compress)
            out.string(v, compress)
        return
    items = []
    if getattr(h, "listpackex", False):
        # Once a field-TTL command touched it, a listpack hash stays this type, TTLs or not.
        out.append(T_HASH_LISTPACK_EX)
        out.ms(min(ttls.values()) if ttls else 0)
        for f, v in h.items():
            items += (f, v, ttls.get(f, 0))
    else:
        out.append(T_HASH_LISTPACK)
        for f, v in h.items():
            items += (f, v)
    out.string(lp.encode(items), compress)


_HASH_TYPES = (T_HASH, T_HASH_LISTPACK, T_HASH_METADATA, T_HASH_LISTPACK_EX,
               T_HASH_METADATA_PRE_GA, T_HASH_LISTPACK_EX_PRE_GA)
_WITH_TTLS = (T_HASH_METADATA, T_HASH_LISTPACK_EX, T_HASH_METADATA_PRE_GA,
              T_HASH_LISTPACK_EX_PRE_GA)


def _load_hash(r: _In, kind: int, max_entries: int, max_value: int) -> Hash:
    rows = []  # (field, value, absolute TTL in ms or 0)
    if kind in (T_HASH_LISTPACK, T_HASH_LISTPACK_EX, T_HASH_LISTPACK_EX_PRE_GA):
        if kind == T_HASH_LISTPACK_EX:
            r.ms()  # the earliest TTL: a hint Redis does not use on load either
        items = r.listpack()
        step = 2 if kind == T_HASH_LISTPACK else 3
        if len(items) % step:
            raise BadData("bad hash listpack")
        for i in range(0, len(items), step):
            t = items[i + 2] if step == 3 else 0
            if type(t) is not int or t < 0:
                raise BadData("bad field TTL")
            rows.append((lp.as_bytes(items[i]), lp.as_bytes(items[i + 1]), t))
    else:
        base = r.ms() if kind == T_HASH_METADATA else 0
        for _ in range(r.length()):
            t = r.length() if kind != T_HASH else 0
            if t and kind == T_HASH_METADATA:
                t += base - 1
            rows.append((r.string(), r.string(), t))
    if not rows:
        raise BadData("empty hash")
    h = Hash()
    if len(rows) > max_entries or any(len(f) > max_value or len(v) > max_value
                                      for f, v, _ in rows):
        h.hashtable = True
    elif kind in _WITH_TTLS:
        # A listpack with TTLs keeps fields by expiry, soonest first, the rest after.
        h.listpackex = True
        rows.sort(key=lambda row: (row[2] == 0, row[2]))
    for f, v, _ in rows:
        h[f] = v
    if len(h) != len(rows):
        raise BadData("duplicate field")
    ttls = {f: t for f, _, t in rows if t}
    if ttls:
        h.ttls = ttls
        h.next_due = min(ttls.values())
    return h


# --- streams -------------------------------------------------------------------------------

def _node_listpack(master_id: int, master: tuple, live: int, deleted: int,
                   slots: list) -> bytes:
    ms0, seq0 = master_id >> 64, master_id & U64
    items = [live, deleted, len(master), *master, 0]
    for sid, names, values, is_live in slots:
        same = names is master
        flags = (0 if is_live else _FLAG_DELETED) | (_FLAG_SAMEFIELDS if same else 0)
        items += (flags, _int64((sid >> 64) - ms0), _int64((sid & U64) - seq0))
        if same:
            items += values
            items.append(len(values) + 3)
        else:
            items.append(len(values))
            for f, v in zip(names, values):
                items += (f, v)
            items.append(2 * len(values) + 4)
    return lp.encode(items)


def _int64(v: int) -> int:
    v &= U64
    return v - (1 << 64) if v >> 63 else v


def _dump_stream(out: _Out, s: Stream, compress: bool) -> None:
    out.length(s.node_count())
    for master_id, master, live, deleted, slots in s.export_nodes():
        out.string(master_id.to_bytes(16, "big"), compress)
        out.string(_node_listpack(master_id, master, live, deleted, slots), compress)
    out.length(s.length)
    out.stream_id(s.last_id)
    out.stream_id(s.first_id)
    out.stream_id(s.max_deleted_id)
    out.length(s.entries_added)
    out.length(len(s.groups))
    for name in sorted(s.groups):
        g = s.groups[name]
        out.string(name, compress)
        out.stream_id(g.last_id)
        out.length(g.entries_read & U64)  # unknown (-1) is saved as 2**64 - 1
        out.length(len(g.pel))
        for sid in g.pending_ids(0, (U64 << 64) | U64):
            pe = g.pel[sid]
            out.raw_id(sid)
            out.ms(pe.delivery_time)
            out.length(pe.delivery_count)
        out.length(len(g.consumers))
        for c in g.sorted_consumers():
            out.string(c.name, compress)
            out.ms(c.seen_time)
            out.ms(c.active_time)
            out.length(len(c.pel))
            for sid in c.pel:
                out.raw_id(sid)
        nacked = [pe.id for pe in g.by_time() if pe.nacked]
        out.length(len(nacked))
        for sid in nacked:
            out.raw_id(sid)
    _dump_idmp(out, s.idmp, compress)


def _dump_idmp(out: _Out, state, compress: bool) -> None:
    if state is None:  # a stream built without one (embedding code): Redis's defaults
        out += b"\x40\x64\x40\x64\x00\x00\x00"  # 100 s, 100 records, no producers, 0, 0
        return
    out.length(state.duration)
    out.length(state.maxsize)
    out.length(len(state.producers))
    for pid in sorted(state.producers):  # Redis's radix tree order
        records = state.producers[pid]
        out.string(pid, compress)
        out.length(len(records))
        for iid, sid in records.items():
            out.string(iid, compress)
            out.length(sid >> 64)
            out.length(sid & U64)
    out.length(state.iids_added)
    out.length(state.iids_duplicates)


def _stream_nodes(r: _In, s: Stream) -> None:
    for _ in range(r.length()):
        key = r.string()
        if len(key) != 16:
            raise BadData("bad node key")
        master_id = int.from_bytes(key, "big")
        raw = r.string()
        try:
            items = lp.decode(raw)
        except lp.ListpackError as e:
            raise BadData("bad listpack") from e
        master, slots = _parse_node(items, master_id)
        try:
            s.import_node(master_id, master, slots, len(raw))
        except ValueError as e:
            raise BadData(str(e)) from e


def _parse_node(items: list, master_id: int) -> tuple:
    """(master names, slots) of a stream node's listpack elements."""
    try:
        live, deleted, nf = items[0], items[1], items[2]
        if not all(type(x) is int and x >= 0 for x in (live, deleted, nf)):
            raise BadData("bad master entry")
        master = tuple(lp.as_bytes(x) for x in items[3:3 + nf])
        if len(master) != nf or items[3 + nf] != 0:
            raise BadData("bad master entry")
        ms0, seq0 = master_id >> 64, master_id & U64
        p = 4 + nf
        slots = []
        n_live = n_dead = 0
        while p < len(items):
            flags, dms, dseq = items[p], items[p + 1], items[p + 2]
            if type(flags) is not int or type(dms) is not int or type(dseq) is not int:
                raise BadData("bad entry header")
            p += 3
            if flags & _FLAG_SAMEFIELDS:
                names = master
                values = [lp.as_bytes(x) for x in items[p:p + nf]]
                p += nf
                expect = nf + 3
            else:
                k = items[p]
                if type(k) is not int or k < 0:
                    raise BadData("bad field count")
                pairs = items[p + 1:p + 1 + 2 * k]
                names = [lp.as_bytes(x) for x in pairs[0::2]]
                values = [lp.as_bytes(x) for x in pairs[1::2]]
                p += 1 + 2 * k
                expect = 2 * k + 4
            if len(values) != len(names) or items[p] != expect:
                raise BadData("bad entry")
            p += 1
            sid = (((ms0 + dms) & U64) << 64) | ((seq0 + dseq) & U64)
            is_live = not flags & _FLAG_DELETED
            if is_live:
                n_live += 1
            else:
                n_dead += 1
            slots.append((sid, names, values, is_live))
    except IndexError as e:
        raise BadData("truncated stream node") from e
    if n_live != live or n_dead != deleted:
        raise BadData("node counts differ from its entries")
    return master, slots


def _load_stream(r: _In, version: int, new_idmp) -> Stream:
    s = Stream()
    _stream_nodes(r, s)
    length = r.length()
    last_id = r.stream_id()
    if version >= 2:
        first_id = r.stream_id()
        max_deleted = r.stream_id()
        added = r.length()
    else:
        first_id, max_deleted, added = None, 0, length
    if length != s.length:
        raise BadData("length differs from the nodes' entries")
    if s.length and s.last_live_id() > last_id:
        raise BadData("an entry beyond the last ID")
    s.set_counters(last_id=last_id, first_id=first_id, max_deleted_id=max_deleted,
                   entries_added=added)
    for _ in range(r.length()):
        g = _load_group(r, s, version)
        if g.name in s.groups:
            raise BadData("duplicate group")
        s.groups[g.name] = g
    if version >= 4:
        state = _load_idmp(r, new_idmp)
    else:
        state = new_idmp(None, None) if new_idmp is not None else None
    s.idmp = state
    return s


def _load_group(r: _In, s: Stream, version: int) -> ConsumerGroup:
    name = r.string()
    last_id = r.stream_id()
    if version >= 2:
        entries_read = r.length()
        if entries_read == U64:
            entries_read = UNKNOWN
    else:
        entries_read = estimate_entries_read(s, last_id)
    g = ConsumerGroup(name, last_id, entries_read)
    pending = {}
    for _ in range(r.length()):
        sid = r.raw_id()
        t = r.ms()
        count = r.length()
        if sid in pending:
            raise BadData("duplicate pending entry")
        pending[sid] = (t, count)
    owner = {}
    for _ in range(r.length()):
        cname = r.string()
        seen = r.ms()
        active = r.ms() if version >= 3 else seen
        if cname in g.consumers:
            raise BadData("duplicate consumer")
        c = g.consumers[cname] = Consumer(cname, seen, active)
        for _ in range(r.length()):
            sid = r.raw_id()
            if sid not in pending or sid in owner:
                raise BadData("consumer entry not in the group's PEL")
            owner[sid] = c
    nacked = []
    if version >= 5:
        for _ in range(r.length()):
            sid = r.raw_id()
            if sid not in pending or sid in owner:
                raise BadData("NACKed entry not an unowned pending entry")
            nacked.append(sid)
    if len(owner) + len(set(nacked)) != len(pending) or len(set(nacked)) != len(nacked):
        raise BadData("pending entry without an owner")
    # The time order: the NACK zone first, in its saved order, then by delivery time.
    for sid in nacked:
        g.add_nacked(sid, pending[sid][1])
    for sid in sorted(owner, key=lambda x: (pending[x][0], x)):
        t, count = pending[sid]
        g.add_pending(sid, owner[sid], t, count)
    return g


def _load_idmp(r: _In, new_idmp):
    duration = r.length()
    maxsize = r.length()
    producers = []
    for _ in range(r.length()):
        pid = r.string()
        records = []
        for _ in range(r.length()):
            iid = r.string()
            ms = r.length()
            seq = r.length()
            records.append((iid, (ms << 64) | seq))
        producers.append((pid, records))
    added = r.length()
    duplicates = r.length()
    if not (DURATION_RANGE[0] <= duration <= DURATION_RANGE[1]
            and MAXSIZE_RANGE[0] <= maxsize <= MAXSIZE_RANGE[1]):
        raise BadData("IDMP settings out of range")
    if new_idmp is None:
        return None
    state = new_idmp(duration, maxsize)
    for pid, records in producers:
        if not records:
            raise BadData("an IDMP producer without records")
        for iid, sid in records:
            try:
                fresh = state.restore(pid, iid, sid)
            except IdmpConflict:
                fresh = False
            if not fresh:
                raise BadData("a repeated IDMP record")
    state.iids_added = added
    state.iids_duplicates = duplicates
    return state
