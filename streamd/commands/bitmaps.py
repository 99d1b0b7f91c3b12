"""Bit commands on strings: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.

Applications keep dedup flags in bitmaps that can be megabytes long, so every scan works on
whole slices in C (``int.from_bytes`` / ``int.bit_count`` / ``bytes.translate``), never bit
by bit in Python. A write edits the string in place once it is a ``keyutil.StrBuf`` (the
first write makes it one), so setting one bit of a large bitmap costs O(1), as in Redis.
"""

from __future__ import annotations

from ..store.keyspace import EV_GENERIC, EV_STRING
from . import errors as E
from . import keyutil as K
from .args import parse_int
from .errors import CommandError
from .table import TABLE, block, command, integer, key, oneof, string, token

_ONE_KEY = (1, 1, 1)
BIT_OFFSET = "ERR bit offset is not an integer or out of range"
BIT_VALUE = "ERR bit is not an integer or out of range"
BITPOS_BIT = "ERR The bit argument must be 1 or 0."
BITOP_NOT = "ERR BITOP NOT must be called with a single source key."
BITOP_TWO_SOURCES = "ERR BITOP {} must be called with at least two source keys."
BITFIELD_TYPE = ("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is "
                 "not supported but i64 is.")
BITFIELD_OVERFLOW = "ERR Invalid OVERFLOW type specified"
BITFIELD_RO_ONLY_GET = "ERR BITFIELD_RO only supports the GET subcommand"

_M64 = (1 << 64) - 1


def _int64(x: int) -> int:
    """``x`` wrapped to a C int64, as Redis's arithmetic leaves it."""
    x &= _M64
    return x - (1 << 64) if x >> 63 else x


def _bit_offset(ctx, arg: bytes, bits: int = 0) -> int:
    """Redis getBitOffsetFromArgument: a bit offset, or with ``bits`` (BITFIELD) also the
    ``#n`` form meaning n fields of that width. The limit is proto-max-bulk-len in bytes,
    not a fixed 2^32 bits."""
    scaled = bits > 0 and arg[:1] == b"#"
    value = parse_int(arg[1:] if scaled else arg, BIT_OFFSET)
    if scaled:
        value = _int64(value * bits)  # C multiplies in int64: a huge n wraps negative
    if value < 0 or value >> 3 >= ctx.config["proto-max-bulk-len"]:
        raise CommandError(BIT_OFFSET)
    return value


def _string(db, k: bytes):
    """The string at ``k``, ``None`` if absent; WRONGTYPE for another type."""
    return K.lookup(db, k, K.STRING)


def _make_raw(db, k: bytes, value) -> None:
    """Redis unshares the string before a bit write, which leaves it raw even when no bit
    changes; that edit is not signalled."""
    if type(value) is not K.RawStr:
        K.own_buffer(db, k, value)


# --- SETBIT / GETBIT ---------------------------------------------------------------------

@command("setbit", 4, "write denyoom", _ONE_KEY,
         key_flags="RW access update", group="bitmap", since="2.2.0",
         summary="Sets or clears the bit at offset of the string value. Creates the key if "
                 "it doesn't exist.", complexity="O(1)",
         args=(key(), integer("offset"), integer("value")))
def setbit(ctx, argv):
    """SETBIT key offset value"""
    offset = _bit_offset(ctx, argv[2])
    # string2ll then a 0/1 check: only the exact texts "0" and "1" pass
    if argv[3] not in (b"0", b"1"):
        raise CommandError(BIT_VALUE)
    on = argv[3] == b"1"
    db = ctx.db
    k = argv[1]
    value = _string(db, k)
    byte, shift = offset >> 3, 7 - (offset & 7)
    if value is None:
        new = K.StrBuf(byte + 1)
        new[byte] = on << shift
        db.add(k, new)
        db.notify(EV_STRING, b"setbit", k)
        return 0
    grows = byte >= len(value)
    old = 0 if grows else value[byte] >> shift & 1
    if not grows and old == on:
        _make_raw(db, k, value)  # nothing changed: no event, no dirty, WATCH untouched
        return old
    buf = K.own_buffer(db, k, value)
    if grows:
        buf.extend(bytes(byte + 1 - len(buf)))
    buf[byte] = (buf[byte] & ~(1 << shift)) | (on << shift)
    db.modified(k)
    db.notify(EV_STRING, b"setbit", k)
    return old


@command("getbit", 3, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="bitmap", since="2.2.0",
         summary="Returns a bit value by offset.", complexity="O(1)",
         args=(key(), integer("offset")), pure=True)
def getbit(ctx, argv):
    """GETBIT key offset"""
    offset = _bit_offset(ctx, argv[2])
    value = K.lookup_read(ctx.db, argv[1], K.STRING)
    byte = offset >> 3
    if value is None or byte >= len(value):
        return 0
    return value[byte] >> (7 - (offset & 7)) & 1


# --- BITCOUNT / BITPOS -------------------------------------------------------------------

def _unit_is_bit(arg: bytes) -> bool:
    word = arg.lower()
    if word == b"bit":
        return True
    if word == b"byte":
        return False
    raise CommandError(E.SYNTAX)


def _bits_in(value: bytes, first: int, last: int) -> int:
    """The bits ``first``..``last`` (inclusive, from the string's first bit) as one int,
    ``last - first + 1`` bits wide."""
    lo, hi = first >> 3, last >> 3
    n = int.from_bytes(memoryview(value)[lo:hi + 1], "big")
    n >>= 7 - (last & 7)
    return n & ((1 << (last - first + 1)) - 1)


def _clamp(start: int, end: int, total: int) -> tuple[int, int]:
    """Redis's index rules: negative from the end, then clipped to the string."""
    if start < 0:
        start += total
    if end < 0:
        end += total
    start = max(start, 0)
    end = max(end, 0)
    if end >= total:
        end = total - 1
    return start, end


@command("bitcount", -2, "readonly", _ONE_KEY,
         key_flags="RO access", group="bitmap", since="2.6.0",
         summary="Counts the number of set bits (population counting) in a string.",
         complexity="O(N)",
         args=(key(), block("range", integer("start"), integer("end"),
                            oneof("unit", token("BYTE"), token("BIT"), optional=True,
                                  since="7.0.0"),
                            optional=True)),
         pure=True,
         history=(
             ("7.0.0", "Added the `BYTE|BIT` option."),
         ))
def bitcount(ctx, argv):
    """BITCOUNT key [start end [BYTE | BIT]]"""
    value = K.lookup_read(ctx.db, argv[1], K.STRING)
    if value is None:
        return 0  # before the arguments are looked at: any of them passes
    n = len(argv)
    if n == 2:
        return int.from_bytes(value, "big").bit_count()
    if n not in (4, 5):
        raise CommandError(E.SYNTAX)
    start, end = parse_int(argv[2]), parse_int(argv[3])
    if start < 0 and end < 0 and start > end:
        return 0  # decided before the unit is read
    as_bits = n == 5 and _unit_is_bit(argv[4])
    start, end = _clamp(start, end, len(value) * 8 if as_bits else len(value))
    if start > end:
        return 0
    if as_bits:
        return _bits_in(value, start, end).bit_count()
    return int.from_bytes(memoryview(value)[start:end + 1], "big").bit_count()


_SCAN_BITS = 8 * 65536  # a bitmap's first free slot is usually near its start


def _first_bit(value: bytes, bit: int, first: int, last: int) -> int:
    """The position of the first ``bit`` in bits ``first``..``last``, or -1. Scanned in
    chunks, so that an early hit in a large bitmap costs one chunk."""
    while first <= last:
        stop = min(last, first | (_SCAN_BITS - 1))
        width = stop - first + 1
        field = _bits_in(value, first, stop)
        if not bit:
            field ^= (1 << width) - 1
        if field:
            return first + width - field.bit_length()
        first = stop + 1
    return -1


@command("bitpos", -3, "readonly", _ONE_KEY,
         key_flags="RO access", group="bitmap", since="2.8.7",
         summary="Finds the first set (1) or clear (0) bit in a string.", complexity="O(N)",
         args=(key(), integer("bit"),
               block("range", integer("start"),
                     block("end-unit-block", integer("end"),
                           oneof("unit", token("BYTE"), token("BIT"), optional=True,
                                 since="7.0.0"),
                           optional=True),
                     optional=True)),
         pure=True,
         history=(
             ("7.0.0", "Added the `BYTE|BIT` option."),
         ))
def bitpos(ctx, argv):
    """BITPOS key bit [start [end [BYTE | BIT]]]"""
    bit = parse_int(argv[2])
    if bit not in (0, 1):
        raise CommandError(BITPOS_BIT)
    value = K.lookup_read(ctx.db, argv[1], K.STRING)
    if value is None:
        # a missing key is an endless run of zeros (the other arguments go unread)
        return -1 if bit else 0
    n = len(argv)
    end_given = n >= 5
    if n == 3:
        first, last = 0, len(value) * 8 - 1
    elif n <= 6:
        start = parse_int(argv[3])
        as_bits = n == 6 and _unit_is_bit(argv[5])  # the unit is read before the end
        total = len(value) * 8 if as_bits else len(value)
        end = parse_int(argv[4]) if end_given else total - 1
        start, end = _clamp(start, end, total)
        if start > end:
            return -1
        first, last = (start, end) if as_bits else (start * 8, end * 8 + 7)
    else:
        raise CommandError(E.SYNTAX)
    if first > last:
        return -1  # the empty string
    found = _first_bit(value, bit, first, last)
    if found >= 0:
        return found
    if bit or end_given:
        return -1
    # Looking for a clear bit without an explicit end: the string reads as zero-padded to
    # the right, so the answer is the first bit past it.
    return last + 1


# --- BITOP -------------------------------------------------------------------------------

_BITOPS = (b"and", b"or", b"xor", b"not", b"diff", b"diff1", b"andor", b"one")
# These weigh the first source against the union of the others, so need two sources.
_BITOPS_FIRST_VS_REST = (b"diff", b"diff1", b"andor")
_INVERT = bytes(255 - i for i in range(256))


@command("bitop", -4, "write denyoom", (2, -1, 1),
         key_flags=("OW update", "RO access"), spec_last=(0, -1), group="bitmap",
         since="2.6.0",
         summary="Performs bitwise operations on multiple strings, and stores the result.",
         complexity="O(N)",
         args=(oneof("operation", token("AND"), token("OR"), token("XOR"), token("NOT"),
                     token("DIFF", since="8.2.0"), token("DIFF1", since="8.2.0"),
                     token("ANDOR", since="8.2.0"), token("ONE", since="8.2.0")),
               key("destkey"), key(spec=1, multiple=True)))
def bitop(ctx, argv):
    """BITOP AND | OR | XOR | NOT | DIFF | DIFF1 | ANDOR | ONE destkey key [key ...]"""
    op = argv[1].lower()
    if op not in _BITOPS:
        raise CommandError(E.SYNTAX)
    if op == b"not" and len(argv) != 4:
        raise CommandError(BITOP_NOT)
    if op in _BITOPS_FIRST_VS_REST and len(argv) < 5:
        raise CommandError(BITOP_TWO_SOURCES.format(op.upper().decode()))
    db = ctx.db
    sources = []
    for k in argv[3:]:
        value = db.read(k)
        if value is None:
            value = b""  # a missing key reads as zeros as long as the longest source
        elif not isinstance(value, K.STRING):
            raise CommandError(E.WRONGTYPE)
        sources.append(value)
    size = max(len(v) for v in sources)
    dest = argv[2]
    if not size:
        if db.delete(dest):
            db.notify(EV_GENERIC, b"del", dest)
        return 0
    if op == b"not":
        result = sources[0].translate(_INVERT)
    else:
        # Each source as an int of ``size`` bytes, shorter ones zero-padded on the right.
        ints = [int.from_bytes(v, "big") << 8 * (size - len(v)) for v in sources]
        acc = ints[0]
        if op in _BITOPS_FIRST_VS_REST:
            rest = 0
            for x in ints[1:]:
                rest |= x
            if op == b"diff":
                acc &= ~rest
            elif op == b"diff1":
                acc = rest & ~acc
            else:
                acc &= rest
        elif op == b"one":
            # A bit survives only if exactly one source sets it: XOR, minus the bits any
            # two sources share.
            shared = 0
            for x in ints[1:]:
                shared |= acc & x
                acc ^= x
            acc &= ~shared
        else:
            for x in ints[1:]:
                if op == b"and":
                    acc &= x
                elif op == b"or":
                    acc |= x
                else:
                    acc ^= x
        result = acc.to_bytes(size, "big")
    K.set_key(db, dest, K.RawStr(result))
    db.notify(EV_STRING, b"set", dest)
    return size


# --- BITFIELD ----------------------------------------------------------------------------

_GET, _SET, _INCRBY = 0, 1, 2
_WRAP, _SAT, _FAIL = 0, 1, 2
_OVERFLOWS = {b"wrap": _WRAP, b"sat": _SAT, b"fail": _FAIL}


def _field_type(arg: bytes) -> tuple[bool, int]:
    """(signed, bits) from ``i1``..``i64`` / ``u1``..``u63`` (lower-case letter only)."""
    # Redis reads the width as a C string: it ends at the first NUL byte.
    sign = arg[:1]
    if sign not in (b"i", b"u"):
        raise CommandError(BITFIELD_TYPE)
    signed = sign == b"i"
    bits = parse_int(arg[1:].split(b"\0", 1)[0], BITFIELD_TYPE)
    if bits < 1 or bits > (64 if signed else 63):
        raise CommandError(BITFIELD_TYPE)
    return signed, bits


def _read_field(buf, offset: int, bits: int, signed: bool) -> int:
    """The field at ``offset``; bytes past the end of ``buf`` read as zeros."""
    last = offset + bits - 1
    lo, hi = offset >> 3, last >> 3
    chunk = bytes(buf[lo:hi + 1])
    n = int.from_bytes(chunk.ljust(hi + 1 - lo, b"\0"), "big")
    n = (n >> (7 - (last & 7))) & ((1 << bits) - 1)
    if signed and n >> (bits - 1):
        n -= 1 << bits
    return n


def _write_field(buf: bytearray, offset: int, bits: int, value: int) -> None:
    """Store the low ``bits`` bits of ``value`` (two's complement) at ``offset``."""
    last = offset + bits - 1
    lo, hi = offset >> 3, last >> 3
    shift = 7 - (last & 7)
    span = 8 * (hi + 1 - lo)
    n = int.from_bytes(buf[lo:hi + 1], "big")
    mask = ((1 << bits) - 1) << shift
    n = (n & ~mask) | ((value << shift) & mask)
    buf[lo:hi + 1] = n.to_bytes(span // 8, "big")


def _signed_overflow(value: int, incr: int, bits: int) -> int:
    """Redis checkSignedBitfieldOverflow's verdict: 1 over, -1 under, 0 fits. Its tests
    run in C int64, so a SET of a value far below the minimum reads as over (SAT then
    stores the maximum, as Redis does)."""
    high = (1 << (bits - 1)) - 1
    low = -high - 1
    max_incr = _int64(high - value)
    min_incr = _int64(low - value)
    if value > high or (bits != 64 and incr > max_incr) or \
            (value >= 0 and incr > 0 and incr > max_incr):
        return 1
    if value < low or (bits != 64 and incr < min_incr) or \
            (value < 0 and incr < 0 and incr < min_incr):
        return -1
    return 0


def _unsigned_overflow(value: int, incr: int, bits: int) -> int:
    """Redis checkUnsignedBitfieldOverflow: ``value`` is a C uint64, ``incr`` an int64."""
    high = (1 << bits) - 1
    if value > high or (incr > 0 and incr > _int64(high - value)):
        return 1
    if incr < 0 and incr < _int64(-value):
        return -1
    return 0


def _wrapped(value: int, incr: int, bits: int, signed: bool) -> int:
    n = (value + incr) & ((1 << bits) - 1)
    if signed and n >> (bits - 1):
        n -= 1 << bits
    return n


def _run_write(buf: bytearray, op: tuple):
    """One SET or INCRBY on ``buf``: (its reply, whether the field's value changed); the
    reply is None when OVERFLOW FAIL refused the write."""
    opcode, offset, bits, signed, arg, overflow_mode = op
    old = _read_field(buf, offset, bits, signed)
    if signed:
        value, incr = (old, arg) if opcode == _INCRBY else (arg, 0)
        verdict = _signed_overflow(value, incr, bits)
        high = (1 << (bits - 1)) - 1
        low = -high - 1
    else:
        # SET takes the int64 argument as a C uint64: a negative value is huge.
        value, incr = (old, arg) if opcode == _INCRBY else (arg & _M64, 0)
        verdict = _unsigned_overflow(value, incr, bits)
        high, low = (1 << bits) - 1, 0
    if not verdict:
        new = value + incr
    elif overflow_mode == _FAIL:
        return None, False
    elif overflow_mode == _SAT:
        new = high if verdict > 0 else low
    else:
        new = _wrapped(value, incr, bits, signed)
    _write_field(buf, offset, bits, new)
    return (new if opcode == _INCRBY else old), new != old


def _parse_bitfield(ctx, argv) -> tuple[list, int]:
    """The operations in order, and the highest bit a write reaches (-1: none writes)."""
    ops = []
    overflow_mode = _WRAP
    highest = -1
    j, n = 2, len(argv)
    while j < n:
        word = argv[j].lower()
        left = n - j - 1
        if word == b"get" and left >= 2:
            opcode = _GET
        elif word == b"set" and left >= 3:
            opcode = _SET
        elif word == b"incrby" and left >= 3:
            opcode = _INCRBY
        elif word == b"overflow" and left >= 1:
            mode = _OVERFLOWS.get(argv[j + 1].lower())
            if mode is None:
                raise CommandError(BITFIELD_OVERFLOW)
            overflow_mode = mode
            j += 2
            continue
        else:
            raise CommandError(E.SYNTAX)
        signed, bits = _field_type(argv[j + 1])
        offset = _bit_offset(ctx, argv[j + 2], bits)
        arg = 0
        if opcode != _GET:
            highest = max(highest, offset + bits - 1)
            arg = parse_int(argv[j + 3])
        ops.append((opcode, offset, bits, signed, arg, overflow_mode))
        j += 3 if opcode == _GET else 4
    return ops, highest


def _bitfield(ctx, argv, read_only: bool):
    ops, highest = _parse_bitfield(ctx, argv)
    db = ctx.db
    k = argv[1]
    if highest < 0:  # GETs only: Redis looks the key up as a read
        value = K.lookup_read(db, k, K.STRING)
        buf = value or b""
        return [_read_field(buf, op[1], op[2], op[3]) for op in ops]
    if read_only:
        raise CommandError(BITFIELD_RO_ONLY_GET)
    value = _string(db, k)
    size = 0 if value is None else len(value)
    # Edited in place (a key created here is added at the end, once its fate is known).
    buf = K.StrBuf() if value is None else K.own_buffer(db, k, value)
    need = (highest >> 3) + 1
    if len(buf) < need:
        buf.extend(bytes(need - len(buf)))
    # A write counts as a change when it alters its field, or, when the key was created or
    # grown for these writes, when it is carried out at all (not refused by FAIL).
    resized = value is None or len(buf) != size
    replies = []
    changes = 0
    for op in ops:
        if op[0] == _GET:
            replies.append(_read_field(buf, op[1], op[2], op[3]))
            continue
        reply, changed = _run_write(buf, op)
        replies.append(reply)
        if reply is not None and (changed or resized):
            changes += 1
    if changes:
        if value is None:
            db.add(k, buf, changes=changes)
        else:
            db.modified(k, changes)
        db.notify(EV_STRING, b"setbit", k)
    elif value is None:
        # No write changed a field: the key was still created to fit them (and made raw,
        # as an existing one was, grown or not), and Redis counts none of it as a change.
        db.put_unsignalled(k, buf)
    return replies


def _bitfield_key_flags(argv) -> str:
    # Redis bitfieldGetKeys: read-only while only GET and OVERFLOW come first; a SET,
    # INCRBY or anything unparsable makes it a write.
    i, n = 2, len(argv)
    while i < n:
        word = argv[i].lower()
        left = n - i - 1
        if word == b"get" and left >= 2:
            i += 3
        elif word == b"overflow" and left >= 1:
            i += 2
        else:
            return "RW access update"
    return "RO access"


_FIELD = (string("encoding"), integer("offset"))


@command("bitfield", -2, "write denyoom", _ONE_KEY,
         key_flags="RW access update variable_flags",
         key_notes="This command allows both access and modification of the key",
         group="bitmap", since="3.2.0",
         summary="Performs arbitrary bitfield integer operations on strings.",
         complexity="O(1) for each subcommand specified",
         args=(key(), oneof(
             "operation",
             block("encoding_offset", *_FIELD, token="GET"),
             block("write",
                   oneof("wrap_sat_fail", token("WRAP"), token("SAT"), token("FAIL"),
                         token="OVERFLOW", optional=True),
                   oneof("write_operation",
                         block("encoding_offset_value", *_FIELD, integer("value"), token="SET"),
                         block("encoding_offset_increment", *_FIELD, integer("increment"),
                               token="INCRBY"))),
             optional=True, multiple=True)))
def bitfield(ctx, argv):
    """BITFIELD key [GET encoding offset | [OVERFLOW WRAP | SAT | FAIL]
  SET encoding offset value | INCRBY encoding offset increment
  [GET encoding offset | [OVERFLOW WRAP | SAT | FAIL]
  SET encoding offset value | INCRBY encoding offset increment ...]]"""
    return _bitfield(ctx, argv, read_only=False)


TABLE[b"bitfield"].key_flags_for = _bitfield_key_flags


@command("bitfield_ro", -2, "readonly fast", _ONE_KEY,
         key_flags="RO access", group="bitmap", since="6.0.0",
         summary="Performs arbitrary read-only bitfield integer operations on strings.",
         complexity="O(1) for each subcommand specified",
         args=(key(), block("encoding_offset", *_FIELD, token="GET", optional=True,
                            multiple=True, multiple_token=True)))
def bitfield_ro(ctx, argv):
    """BITFIELD_RO key [GET encoding offset [GET encoding offset ...]]"""
    return _bitfield(ctx, argv, read_only=True)
