"""Bit commands on strings (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO)
and the string commands SUBSTR and LCS: replies, error texts, reply shapes, change counting
and the command table, as recorded from Redis 7.0.15."""

from __future__ import annotations

import pytest

from tests.conftest import dirty, dirty_changes, watch_broken, error_text as err
from tests.test_server_commands import _key_spec

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
BIT_OFFSET = "bit offset is not an integer or out of range"
BIT_VALUE = "bit is not an integer or out of range"
NOT_INT = "value is not an integer or out of range"
BAD_TYPE = ("Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
            "supported but i64 is.")


@pytest.fixture
def proto_max_bulk_len(r):
    """Set proto-max-bulk-len for one test (restored afterwards)."""
    saved = r.config_get("proto-max-bulk-len")["proto-max-bulk-len"]
    yield lambda value: r.config_set("proto-max-bulk-len", value)
    r.config_set("proto-max-bulk-len", saved)


# --- SETBIT / GETBIT ---------------------------------------------------------------------

def test_setbit_grows_with_zeros_and_returns_the_old_bit(r, call):
    assert call("SETBIT", "k", 7, 1) == 0
    assert r.get("k") == b"\x01"
    assert call("SETBIT", "k", 7, 1) == 1
    assert call("SETBIT", "k", 7, 0) == 1
    assert call("SETBIT", "k", 100, 1) == 0
    assert r.get("k") == b"\x00" * 12 + b"\x08"
    assert [call("GETBIT", "k", i) for i in (99, 100, 101, 104, 1000)] == [0, 1, 0, 0, 0]
    assert call("GETBIT", "nokey", 5) == 0
    assert r.exists("nokey") == 0
    # clearing a bit past the end still grows the string
    assert call("SETBIT", "k", 130, 0) == 0
    assert r.strlen("k") == 17


@pytest.mark.parametrize("offset", ["-1", "abc", "", "+5", "05", " 5", "1.5", "4294967296",
                                    "9223372036854775808"])
def test_bit_offset_errors(call, offset):
    assert err(call, "SETBIT", "k", offset, 1) == BIT_OFFSET
    assert err(call, "GETBIT", "k", offset) == BIT_OFFSET


@pytest.mark.parametrize("value", ["2", "-1", "x", "", " 1", "01", "-0", "1.0"])
def test_setbit_value_errors(call, value):
    assert err(call, "SETBIT", "k", 1, value) == BIT_VALUE


def test_setbit_checks_offset_then_value_then_type(r, call):
    r.hset("h", "f", "v")
    assert err(call, "SETBIT", "h", "abc", 1) == BIT_OFFSET
    assert err(call, "SETBIT", "h", 1, 5) == BIT_VALUE
    assert err(call, "SETBIT", "h", 1, 1) == WRONGTYPE
    assert err(call, "GETBIT", "h", "x") == BIT_OFFSET
    assert err(call, "GETBIT", "h", 1) == WRONGTYPE
    assert err(call, "SETBIT", "k", 1) == "wrong number of arguments for 'setbit' command"
    assert err(call, "GETBIT", "k") == "wrong number of arguments for 'getbit' command"


def test_bit_offsets_reach_to_proto_max_bulk_len(r, call, proto_max_bulk_len):
    # 2^32 - 1 is the last bit of the default 512 MB (read, not written: no 512 MB string)
    assert call("GETBIT", "k", 4294967295) == 0
    proto_max_bulk_len("1mb")
    assert err(call, "GETBIT", "k", 8 * 1024 * 1024) == BIT_OFFSET
    assert call("SETBIT", "k", 8 * 1024 * 1024 - 1, 1) == 0
    assert err(call, "SETBIT", "k", 8 * 1024 * 1024, 1) == BIT_OFFSET
    assert r.strlen("k") == 1024 * 1024
    assert call("BITCOUNT", "k") == 1 and call("BITPOS", "k", 1) == 8 * 1024 * 1024 - 1


def test_integer_strings_behave_as_their_text(r, call):
    r.set("n", "123")
    assert r.object("encoding", "n") == b"int"
    assert call("BITCOUNT", "n") == sum(bin(c).count("1") for c in b"123")
    assert [call("GETBIT", "n", i) for i in range(8)] == [0, 0, 1, 1, 0, 0, 0, 1]
    assert call("BITPOS", "n", 1) == 2
    assert call("SETBIT", "n", 0, 1) == 0
    assert r.get("n") == b"\xb123"
    assert r.object("encoding", "n") == b"raw"


def test_setbit_that_changes_nothing_still_makes_the_string_raw(r, call):
    r.set("n", "123")
    r.set("s", "abc")
    assert call("SETBIT", "n", 0, 0) == 0
    assert call("GETBIT", "s", 1) == 1
    assert r.object("encoding", "n") == b"raw"
    assert r.get("n") == b"123"
    assert r.object("encoding", "s") == b"embstr"  # a read leaves it alone


def test_setbit_keeps_the_ttl(r, call):
    r.set("t", "abc", ex=100)
    call("SETBIT", "t", 0, 1)
    call("SETBIT", "t", 100, 1)
    assert 99 <= r.ttl("t") <= 100


def test_setbit_counts_only_real_changes(r):
    got = dirty_changes(r, [
        ("SETBIT", "k", 7, 1),   # created
        ("SETBIT", "k", 7, 1),   # already set
        ("SETBIT", "k", 7, 0),   # cleared
        ("SETBIT", "k", 3, 0),   # already clear
        ("SETBIT", "k", 30, 0),  # grows the string
        ("GETBIT", "k", 30),
    ])
    assert [n for _, n in got] == [1, 0, 1, 0, 1, 0]


def test_setbit_invalidates_watch_only_when_it_changes_something(r, make_client):
    r.set("k", "\x01")
    assert not watch_broken(make_client, "k", lambda: r.setbit("k", 7, 1))
    assert watch_broken(make_client, "k", lambda: r.setbit("k", 7, 0))
    assert watch_broken(make_client, "k", lambda: r.setbit("k", 40, 0))


# --- BITCOUNT ----------------------------------------------------------------------------

@pytest.mark.parametrize("args, expected", [
    ((), 26),
    ((0, 0), 4),
    ((1, 1), 6),
    ((1, -1), 22),
    ((-2, -1), 7),
    ((-1, -2), 0),
    ((-100, 100), 26),
    ((3, 1), 0),
    ((5, 30, "BIT"), 17),
    ((5, 30, "bit"), 17),
    ((5, 30, "byte"), 4),
    ((-3, -1, "BIT"), 1),
    ((47, 47, "BIT"), 0),
    ((48, 48, "BIT"), 0),
    ((2, 1, "BIT"), 0),
    ((-9223372036854775808, -1, "BIT"), 26),
    ((0, 9223372036854775807, "BIT"), 26),
    # two negative indexes out of order answer 0 before the unit is read
    ((-1, -5, "foo"), 0),
])
def test_bitcount_ranges(r, call, args, expected):
    r.set("s", "foobar")
    assert call("BITCOUNT", "s", *args) == expected


@pytest.mark.parametrize("args, error", [
    ((0,), "syntax error"),
    ((0, 1, 2), "syntax error"),
    ((3, 1, "foo"), "syntax error"),
    ((0, 1, "BIT", "x"), "syntax error"),
    (("a", "b"), NOT_INT),
    ((0, "b"), NOT_INT),
])
def test_bitcount_argument_errors(r, call, args, error):
    r.set("s", "foobar")
    assert err(call, "BITCOUNT", "s", *args) == error


def test_bitcount_missing_key_reads_no_argument_and_empty_string(r, call):
    assert call("BITCOUNT", "nokey", "a") == 0
    assert call("BITCOUNT", "nokey", 0, 1, "x", "y") == 0
    r.set("e", "")
    assert call("BITCOUNT", "e") == 0
    assert call("BITCOUNT", "e", 0, -1, "BIT") == 0
    r.hset("h", "f", "v")
    assert err(call, "BITCOUNT", "h") == WRONGTYPE
    assert err(call, "BITCOUNT", "h", "a") == WRONGTYPE


def test_bitcount_of_a_large_bitmap(r, call):
    size = 4 * 1024 * 1024
    r.setrange("big", size - 1, b"\x81")
    r.setrange("big", 1000, b"\xff")
    assert call("BITCOUNT", "big") == 10
    assert call("BITCOUNT", "big", 1001, -1) == 2
    assert call("BITCOUNT", "big", 8 * size - 8, 8 * size - 2, "BIT") == 1
    assert call("BITPOS", "big", 1, 1001) == 8 * size - 8
    assert call("BITPOS", "big", 0, 1000, 1000) == -1


def test_bitpos_across_a_long_run(r, call):
    r.set("ones", b"\xff" * 200000 + b"\xfe" + b"\xff" * 3)
    assert call("BITPOS", "ones", 0) == 8 * 200000 + 7
    assert call("BITPOS", "ones", 0, 8 * 200000 + 8, -1, "BIT") == -1
    assert call("BITPOS", "ones", 0, 200001) == 8 * 200004
    assert call("BITPOS", "ones", 1, 3, 8 * 200000 + 6, "BIT") == 3
    r.set("zeros", bytes(300000) + b"\x10")
    assert call("BITPOS", "zeros", 1) == 8 * 300000 + 3
    assert call("BITPOS", "zeros", 1, 7, 8 * 300000 + 2, "BIT") == -1
    assert call("BITPOS", "zeros", 0, 299999, -1) == 8 * 299999


# --- BITPOS ------------------------------------------------------------------------------

S = b"\xff\xf0\x00"
ONES = b"\xff\xff\xff"


@pytest.mark.parametrize("value, args, expected", [
    (S, (0,), 12),
    (S, (1,), 0),
    (S, (1, 2), -1),
    (S, (0, 2), 16),
    (S, (0, 1, 1), 12),
    (S, (1, 1, 1), 8),
    (S, (0, 0, 0), -1),
    (S, (0, 5, 17, "BIT"), 12),
    (S, (1, 9, 17, "bit"), 9),
    (S, (1, 12, 23, "BIT"), -1),
    (S, (0, 0, 11, "BIT"), -1),
    (S, (0, 0, 12, "BIT"), 12),
    (S, (0, 3, 2), -1),
    (S, (0, -1, -2, "BIT"), -1),
    (S, (1, -1), -1),
    (S, (0, -1), 16),
    (S, (0, 100), -1),
    (S, (0, -100, -50), -1),
    (S, (0, 1, 1, "byte"), 12),
    # all ones: a clear bit is found just past the end, unless an end was given
    (ONES, (0,), 24),
    (ONES, (0, 1), 24),
    (ONES, (0, 3, "BIT"), None),  # "BIT" read as the end: an error (below)
    (ONES, (0, 0, -1), -1),
    (ONES, (0, 0, 2), -1),
    (ONES, (0, 3, 20, "BIT"), -1),
    (ONES, (1, 5), -1),
    (b"\x00\x00", (1,), -1),
    (b"\x00\x00", (0,), 0),
    (b"\x00\x00", (1, 0, -1), -1),
    (b"", (0,), -1),
    (b"", (1,), -1),
    (b"", (0, 0), -1),
    (b"", (0, 0, -1, "BIT"), -1),
])
def test_bitpos(r, call, value, args, expected):
    r.set("k", value)
    if expected is None:
        assert err(call, "BITPOS", "k", *args) == NOT_INT
    else:
        assert call("BITPOS", "k", *args) == expected


def test_bitpos_missing_key_and_argument_order(r, call):
    # a missing key is endless zeros; its other arguments go unread
    assert call("BITPOS", "nokey", 0) == 0
    assert call("BITPOS", "nokey", 1) == -1
    assert call("BITPOS", "nokey", 0, "x", "y", "z", "w") == 0
    assert err(call, "BITPOS", "nokey", 2) == "The bit argument must be 1 or 0."
    assert err(call, "BITPOS", "nokey", "a") == NOT_INT
    r.hset("h", "f", "v")
    assert err(call, "BITPOS", "h", 2) == "The bit argument must be 1 or 0."
    assert err(call, "BITPOS", "h", 1, "a") == WRONGTYPE
    r.set("s", S)
    assert err(call, "BITPOS", "s", 1, "a") == NOT_INT
    assert err(call, "BITPOS", "s", 1, 0, "a") == NOT_INT
    assert err(call, "BITPOS", "s", 1, 0, 1, "x") == "syntax error"
    # the unit is read before the end
    assert err(call, "BITPOS", "s", 1, 0, "a", "x") == "syntax error"
    assert err(call, "BITPOS", "s", 1, "a", 1, "x") == NOT_INT
    assert err(call, "BITPOS", "s", 1, 0, 1, "BIT", "x") == "syntax error"
    for bit in ("01", "-0", " 1"):
        assert err(call, "BITPOS", "s", bit) == NOT_INT


# --- BITOP -------------------------------------------------------------------------------

@pytest.mark.parametrize("op, keys, result", [
    ("AND", ("a", "b"), b"\x0f\x00"),
    ("and", ("a", "b", "a"), b"\x0f\x00"),
    ("OR", ("a", "b"), b"\xff\x0f"),
    ("XOR", ("a", "b", "nokey"), b"\xf0\x0f"),
    ("XOR", ("a", "a"), b"\x00\x00"),
    ("NOT", ("a",), b"\x00\xf0"),
    ("NOT", ("b",), b"\xf0"),
    ("AnD", ("a", "nokey"), b"\x00\x00"),  # a missing key is zeros as long as the longest
    ("OR", ("n",), b"12"),
    ("NOT", ("n",), b"\xce\xcd"),
])
def test_bitop_results(r, call, op, keys, result):
    r.set("a", b"\xff\x0f")
    r.set("b", b"\x0f")
    r.set("n", "12")
    assert call("BITOP", op, "d", *keys) == len(result)
    assert r.get("d") == result
    assert r.object("encoding", "d") == b"raw"


def test_bitop_replaces_the_destination(r, call):
    r.set("a", b"\xff")
    r.set("d", "x", ex=100)
    assert call("BITOP", "OR", "d", "a") == 1
    assert r.ttl("d") == -1
    r.hset("h", "f", "v")
    assert call("BITOP", "OR", "h", "a") == 1  # any type: the destination is overwritten
    assert r.type("h") == b"string"


def test_bitop_empty_result_deletes_the_destination(r):
    r.set("d", "x")
    r.set("e", "")
    got = dirty_changes(r, [
        ("BITOP", "AND", "d", "nokey", "nokey2"),
        ("BITOP", "AND", "d", "nokey"),
        ("SET", "d", "x"),
        ("BITOP", "OR", "d", "e"),
        ("BITOP", "OR", "d", "e", "nokey"),
    ])
    assert [n for _, n in got] == [1, 0, 1, 1, 0]
    assert r.exists("d") == 0


def test_bitop_errors(r, call):
    r.set("a", "x")
    r.hset("h", "f", "v")
    assert err(call, "BITOP", "NOT", "d", "a", "a") == \
        "BITOP NOT must be called with a single source key."
    assert err(call, "BITOP", "NOT", "d") == "wrong number of arguments for 'bitop' command"
    assert err(call, "BITOP", "nand", "d", "a") == "syntax error"
    assert err(call, "BITOP", "nand", "d", "h") == "syntax error"  # before any lookup
    assert err(call, "BITOP", "not", "d", "a", "h") == \
        "BITOP NOT must be called with a single source key."
    assert err(call, "BITOP", "AND", "d", "a", "h") == WRONGTYPE
    assert r.exists("d") == 0


@pytest.mark.min_redis("8.2")
@pytest.mark.parametrize("op, keys, result", [
    # a = f00a, b = cc, c = aaff; the union of b and c is eeff.
    ("DIFF", ("a", "b", "c"), b"\x10\x00"),    # in a, in neither b nor c
    ("diff1", ("a", "b", "c"), b"\x0e\xf5"),   # in b or c, not in a
    ("AndOr", ("a", "b", "c"), b"\xe0\x0a"),   # in a and in b or c
    ("ONE", ("a", "b", "c"), b"\x16\xf5"),     # in exactly one of them
    ("ONE", ("a",), b"\xf0\x0a"),
    ("ONE", ("a", "a"), b"\x00\x00"),
    ("DIFF", ("b", "nokey"), b"\xcc"),
    ("DIFF1", ("nokey", "b", "c"), b"\xee\xff"),
    ("ANDOR", ("b", "c", "nokey"), b"\x88\x00"),
])
def test_bitop_diff_diff1_andor_one(r, call, op, keys, result):
    r.set("a", b"\xf0\x0a")
    r.set("b", b"\xcc")
    r.set("c", b"\xaa\xff")
    assert call("BITOP", op, "d", *keys) == len(result)
    assert r.get("d") == result


@pytest.mark.min_redis("8.2")
def test_bitop_diff_diff1_andor_need_two_sources(r, call):
    r.set("a", "x")
    r.hset("h", "f", "v")
    for op in ("DIFF", "diff1", "AndOr"):
        # Checked before any lookup, and the operation is named in upper case.
        assert err(call, "BITOP", op, "d", "h") == \
            f"BITOP {op.upper()} must be called with at least two source keys."
        assert err(call, "BITOP", op, "d", "a", "h") == WRONGTYPE
    assert err(call, "BITOP", "ONE", "d", "h") == WRONGTYPE
    assert call("BITOP", "DIFF", "d", "nokey", "nokey2") == 0
    assert r.exists("d") == 0


# --- BITFIELD ----------------------------------------------------------------------------

def test_bitfield_get_set_incrby(r, call):
    assert call("BITFIELD", "k") == []
    assert call("BITFIELD", "k", "GET", "u8", 0) == [0]
    assert r.exists("k") == 0  # reads create nothing
    assert call("BITFIELD", "k", "SET", "u8", 0, 255) == [0]
    assert r.get("k") == b"\xff"
    assert call("BITFIELD", "k", "get", "u8", 0, "GET", "i8", 0, "GET", "u4", 4,
                "GET", "i64", 0, "GET", "u63", 1) == \
        [255, -1, 15, -72057594037927936, 9151314442816847872]
    assert call("BITFIELD", "k", "SET", "u8", "#2", 7) == [0]
    assert r.get("k") == b"\xff\x00\x07"
    assert call("BITFIELD", "k", "INCRBY", "u2", 100, 1, "GET", "u2", 100,
                "INCRBY", "u2", 100, 5) == [1, 1, 2]
    assert r.strlen("k") == 13
    assert call("BITFIELD", "k", "SET", "i8", 0, 127, "INCRBY", "i8", 0, 1) == [-1, -128]
    # 64-bit signed and 63-bit unsigned fields wrap by default
    assert call("BITFIELD", "w", "SET", "i64", 0, -9223372036854775808,
                "INCRBY", "i64", 0, -1) == [0, 9223372036854775807]
    assert call("BITFIELD", "u", "SET", "u63", 0, 9223372036854775807,
                "GET", "u63", 0, "INCRBY", "u63", 0, 1) == [0, 9223372036854775807, 0]


def test_bitfield_overflow_modes(r, call):
    assert call("BITFIELD", "k", "SET", "u8", 0, 255) == [0]
    assert call("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 1) == [None]
    assert call("BITFIELD", "k", "overflow", "sat", "INCRBY", "u8", 0, 1,
                "OVERFLOW", "WRAP", "INCRBY", "u8", 0, 1) == [255, 0]
    assert call("BITFIELD", "k", "GET", "u8", 0, "Overflow", "SAT",
                "INCRBY", "u8", 0, 1000) == [0, 255]
    # SET with a value out of range: an unsigned field takes it as a C uint64
    assert call("BITFIELD", "k", "OVERFLOW", "SAT", "SET", "u8", 0, -5) == [255]
    assert call("BITFIELD", "k", "GET", "u8", 0) == [255]
    assert call("BITFIELD", "k", "OVERFLOW", "WRAP", "SET", "u8", 0, -5) == [255]
    assert call("BITFIELD", "k", "GET", "u8", 0) == [251]
    assert call("BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "u8", 0, -5) == [None]
    assert call("BITFIELD", "k", "OVERFLOW", "SAT", "SET", "i8", 0, -200) == [-5]
    assert call("BITFIELD", "k", "GET", "i8", 0) == [-128]
    # Redis tests a signed SET in C int64: a value this far below the minimum reads as
    # over the maximum, and SAT stores the maximum
    assert call("BITFIELD", "k", "OVERFLOW", "SAT", "SET", "i8", 0,
                -9223372036854775808) == [-128]
    assert call("BITFIELD", "k", "GET", "i8", 0) == [127]
    assert call("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i64", 8, -1,
                "INCRBY", "i64", 8, 9223372036854775807,
                "SET", "i64", 8, -9223372036854775808,
                "INCRBY", "i64", 8, -1) == [-1, 9223372036854775806, 9223372036854775806,
                                            -9223372036854775808]


@pytest.mark.parametrize("args, error", [
    (("GET", "u64", 0), BAD_TYPE),
    (("GET", "i65", 0), BAD_TYPE),
    (("GET", "u0", 0), BAD_TYPE),
    (("GET", "U8", 0), BAD_TYPE),
    (("GET", "x8", 0), BAD_TYPE),
    (("GET", "", 0), BAD_TYPE),
    (("GET", "u08", 0), BAD_TYPE),
    (("GET", "u+8", 0), BAD_TYPE),
    (("GET", "u8", -1), BIT_OFFSET),
    (("GET", "u8", "#-1"), BIT_OFFSET),
    (("GET", "u8", "##1"), BIT_OFFSET),
    (("GET", "u8", 4294967296), BIT_OFFSET),
    (("GET", "u8", "#536870912"), BIT_OFFSET),
    (("SET", "i8", "#9223372036854775807", 1), BIT_OFFSET),  # n * 8 wraps negative
    (("GET", "i8", "#1152921504606846976"), BIT_OFFSET),
    (("GET", "u8"), "syntax error"),
    (("GET",), "syntax error"),
    (("SET", "u8", 0), "syntax error"),
    (("INCRBY", "u8", 0), "syntax error"),
    (("bogus",), "syntax error"),
    (("OVERFLOW",), "syntax error"),
    (("OVERFLOW", "bogus"), "Invalid OVERFLOW type specified"),
    (("SET", "u8", 0, "abc"), NOT_INT),
    (("SET", "u8", 0, "1.5"), NOT_INT),
])
def test_bitfield_errors(r, call, args, error):
    r.set("k", "x")
    assert err(call, "BITFIELD", "k", *args) == error
    assert r.get("k") == b"x"


def test_bitfield_offsets_up_to_the_limit(call):
    assert call("BITFIELD", "k", "GET", "u8", 4294967295, "GET", "u8", "#536870911") == [0, 0]
    # '#n' is multiplied in C int64: 2^58 fields of 64 bits wrap around to offset 0
    assert call("BITFIELD", "k", "SET", "i64", "#288230376151711744", 5,
                "GET", "i64", 0) == [0, 5]


def test_bitfield_ro(r, call):
    r.hset("h", "f", "v")
    assert call("BITFIELD_RO", "nokey", "GET", "i8", 0) == [0]
    assert call("BITFIELD_RO", "k") == []
    assert call("BITFIELD_RO", "k", "OVERFLOW", "SAT") == []
    assert err(call, "BITFIELD_RO", "k", "SET", "u8", 0, 1) == \
        "BITFIELD_RO only supports the GET subcommand"
    # every argument is parsed first, the key looked up last
    assert err(call, "BITFIELD_RO", "h", "SET", "u8", 0, 1) == \
        "BITFIELD_RO only supports the GET subcommand"
    assert err(call, "BITFIELD_RO", "k", "GET", "u8", 0, "SET", "u8", 0, "x") == NOT_INT
    assert err(call, "BITFIELD_RO", "k", "GET", "u8", 0, "SET", "u99", 0, 1) == BAD_TYPE
    assert err(call, "BITFIELD_RO", "h", "GET", "u8", 0) == WRONGTYPE
    assert err(call, "BITFIELD", "h", "GET", "u8", 0) == WRONGTYPE
    assert err(call, "BITFIELD", "h", "SET", "u8", 0, 1) == WRONGTYPE
    assert err(call, "BITFIELD", "h", "GET", "u99", 0) == BAD_TYPE
    assert r.exists("nokey", "k") == 0


def test_bitfield_counts_writes_that_change_a_field(r):
    got = dirty_changes(r, [
        ("BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "u8", 0, 999),  # created, not written
        ("BITFIELD", "k", "SET", "u8", 0, 1, "INCRBY", "u8", 0, 1),
        ("BITFIELD", "k", "SET", "u8", 0, 2, "INCRBY", "u8", 0, 0),  # nothing changes
        ("BITFIELD", "k", "GET", "u8", 0),
        ("BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "u8", 99, 999),  # grown, not written
        ("BITFIELD", "k", "SET", "u8", 200, 0, "SET", "u8", 200, 0),  # grown: both count
        ("BITFIELD", "k2", "SET", "u8", 0, 0),
    ])
    assert [n for _, n in got] == [0, 2, 0, 0, 0, 2, 1]
    assert r.get("k") == b"\x02" + b"\x00" * 25


def test_bitfield_fail_only_write_does_not_invalidate_watch(r, make_client):
    r.set("k", "\x01")
    assert not watch_broken(make_client, "k", lambda: r.execute_command(
        "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 1000))
    assert not watch_broken(make_client, "k", lambda: r.execute_command(
        "BITFIELD", "k", "SET", "u8", 0, 1))
    assert watch_broken(make_client, "k", lambda: r.execute_command(
        "BITFIELD", "k", "SET", "u8", 0, 2))


def test_bitfield_makes_the_string_raw(r, call):
    r.set("n", "1")
    assert call("BITFIELD", "n", "GET", "u8", 0) == [ord("1")]
    assert r.object("encoding", "n") == b"int"
    assert call("BITFIELD", "n", "SET", "u8", 0, ord("1")) == [ord("1")]
    assert r.object("encoding", "n") == b"raw"


# --- SUBSTR ------------------------------------------------------------------------------

@pytest.mark.parametrize("start, end", [(0, 3), (-3, -1), (5, 1), (-1, -5), (0, -1), (-100, 100),
                                        (20, 30)])
def test_substr_is_getrange(r, call, start, end):
    r.set("k", "This is a string")
    assert call("SUBSTR", "k", start, end) == call("GETRANGE", "k", start, end)
    assert call("SUBSTR", "nokey", start, end) == b""


def test_substr_errors(r, call):
    r.hset("h", "f", "v")
    assert err(call, "SUBSTR", "h", 0, 1) == WRONGTYPE
    assert err(call, "SUBSTR", "k", "a", 1) == NOT_INT
    assert err(call, "SUBSTR", "k", 0) == "wrong number of arguments for 'substr' command"


# --- LCS ---------------------------------------------------------------------------------

def test_lcs_string_and_len(r, call):
    r.set("a", "ohmytext")
    r.set("b", "mynewtext")
    assert call("LCS", "a", "b") == b"mytext"
    assert call("LCS", "a", "b", "LEN") == 6
    assert call("LCS", "a", "b", "LEN", "LEN") == 6
    assert call("LCS", "a", "b", "withmatchlen") == b"mytext"
    assert call("LCS", "a", "b", "WITHMATCHLEN", "LEN") == 6
    assert call("LCS", "a", "nokey") == b""
    assert call("LCS", "nokey", "nokey2", "LEN") == 0
    r.set("n", 12345)
    r.set("m", 2345)
    assert call("LCS", "n", "m") == b"2345"


def test_lcs_idx_resp2_bytes(r, wire):
    r.set("a", "ohmytext")
    r.set("b", "mynewtext")
    assert wire("LCS", "a", "b", "IDX") == (
        b"*4\r\n$7\r\nmatches\r\n*2\r\n"
        b"*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n"
        b"*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n"
        b"$3\r\nlen\r\n:6\r\n")
    assert wire("LCS", "a", "b", "IDX", "MINMATCHLEN", 4, "WITHMATCHLEN") == (
        b"*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n"
        b"$3\r\nlen\r\n:6\r\n")
    assert wire("LCS", "a", "nokey", "IDX") == \
        b"*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n"


def test_lcs_idx_resp3_is_a_map(r, wire):
    r.set("a", "ohmytext")
    r.set("b", "mynewtext")
    assert wire.resp3("LCS", "a", "b", "IDX", "MINMATCHLEN", 4) == (
        b"%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n"
        b"$3\r\nlen\r\n:6\r\n")


@pytest.mark.parametrize("x, y, matches, total", [
    ("abcdefgh", "xbcxefxhabc", [[[7, 7], [7, 7], 1], [[4, 5], [4, 5], 2],
                                 [[1, 2], [1, 2], 2]], 5),
    ("xbcxefxhabc", "abcdefgh", [[[7, 7], [7, 7], 1], [[4, 5], [4, 5], 2],
                                 [[1, 2], [1, 2], 2]], 5),
    ("ohmytext", "ohmytext", [[[0, 7], [0, 7], 8]], 8),
    ("12345", "2345", [[[1, 4], [0, 3], 4]], 4),
    ("aaa", "aa", [[[1, 2], [0, 1], 2]], 2),
    ("abc", "xyz", [], 0),
])
def test_lcs_idx_matches(r, call, x, y, matches, total):
    r.set("x", x)
    r.set("y", y)
    assert call("LCS", "x", "y", "IDX", "WITHMATCHLEN") == [b"matches", matches, b"len", total]
    # MINMATCHLEN filters the ranges, not the length; negative counts as 0
    assert call("LCS", "x", "y", "IDX", "MINMATCHLEN", 2) == \
        [b"matches", [m[:2] for m in matches if m[2] >= 2], b"len", total]
    assert call("LCS", "x", "y", "MINMATCHLEN", -5, "IDX", "WITHMATCHLEN") == \
        [b"matches", matches, b"len", total]


def test_lcs_errors(r, call):
    r.set("a", "x")
    r.hset("h", "f", "v")
    assert err(call, "LCS", "a", "a", "LEN", "IDX") == \
        "If you want both the length and indexes, please just use IDX."
    assert err(call, "LCS", "a", "a", "MINMATCHLEN") == "syntax error"
    assert err(call, "LCS", "a", "a", "MINMATCHLEN", "x") == NOT_INT
    assert err(call, "LCS", "a", "a", "bogus") == "syntax error"
    # the type is checked before the options are read
    assert err(call, "LCS", "a", "h") == "The specified keys must contain string values"
    assert err(call, "LCS", "h", "a", "bogus") == "The specified keys must contain string values"
    assert err(call, "LCS", "a") == "wrong number of arguments for 'lcs' command"


def test_lcs_table_is_bounded_by_proto_max_bulk_len(r, call, proto_max_bulk_len):
    proto_max_bulk_len("1mb")
    r.set("p", "a" * 400)
    r.set("q", "b" * 600)
    assert call("LCS", "p", "q", "LEN") == 0  # 401 * 601 * 4 bytes fit in 1 MB
    r.set("q", "b" * 700)
    assert err(call, "LCS", "p", "q", "LEN") == \
        "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"


# --- WRONGTYPE everywhere ----------------------------------------------------------------

@pytest.mark.parametrize("command", [
    ("SETBIT", "h", 0, 1), ("GETBIT", "h", 0), ("BITCOUNT", "h"), ("BITPOS", "h", 1),
    ("BITOP", "AND", "d", "h"), ("BITFIELD", "h", "GET", "u8", 0),
    ("BITFIELD_RO", "h", "GET", "u8", 0), ("SUBSTR", "h", 0, 1),
])
def test_wrongtype(r, call, command):
    r.hset("h", "f", "v")
    assert err(call, *command) == WRONGTYPE
    assert r.type("h") == b"hash" and r.exists("d") == 0


# --- the command table -------------------------------------------------------------------

def _info(name, arity, flags, keys, cats, specs) -> bytes:
    """One COMMAND INFO entry in RESP3, as Redis 7.0 encodes it."""
    def strings(items, kind=b"+"):
        return b"~%d\r\n" % len(items) + b"".join(kind + i.encode() + b"\r\n" for i in items)
    return (b"*10\r\n$%d\r\n%s\r\n:%d\r\n" % (len(name), name.encode(), arity) +
            strings(flags.split()) + b":%d\r\n:%d\r\n:%d\r\n" % keys +
            strings(cats.split()) + b"~0\r\n" + b"~%d\r\n" % len(specs) + b"".join(specs) +
            b"~0\r\n")


def _flags(text: str) -> bytes:
    words = text.split()
    return b"~%d\r\n" % len(words) + b"".join(b"+%s\r\n" % w.encode() for w in words)


_RW = _key_spec(_flags("RW access update"), 1, 0)
_RO = _key_spec(_flags("RO access"), 1, 0)
_BITFIELD_SPEC = (b"%4\r\n$5\r\nnotes\r\n$59\r\nThis command allows both access and "
                  b"modification of the key\r\n" +
                  _key_spec(_flags("RW access update variable_flags"), 1, 0)[4:])


@pytest.mark.parametrize("name, arity, flags, keys, cats, specs", [
    ("setbit", 4, "write denyoom", (1, 1, 1), "@write @bitmap @slow", [_RW]),
    ("getbit", 3, "readonly fast", (1, 1, 1), "@read @bitmap @fast", [_RO]),
    ("bitcount", -2, "readonly", (1, 1, 1), "@read @bitmap @slow", [_RO]),
    ("bitpos", -3, "readonly", (1, 1, 1), "@read @bitmap @slow", [_RO]),
    ("bitop", -4, "write denyoom", (2, -1, 1), "@write @bitmap @slow",
     [_key_spec(_flags("OW update"), 2, 0), _key_spec(_flags("RO access"), 3, -1)]),
    ("bitfield", -2, "write denyoom", (1, 1, 1), "@write @bitmap @slow", [_BITFIELD_SPEC]),
    ("bitfield_ro", -2, "readonly fast", (1, 1, 1), "@read @bitmap @fast", [_RO]),
    ("substr", 4, "readonly", (1, 1, 1), "@read @string @slow", [_RO]),
    ("lcs", -3, "readonly", (1, 2, 1), "@read @string @slow",
     [_key_spec(_flags("RO access"), 1, 1)]),
])
def test_command_info_bytes(wire, name, arity, flags, keys, cats, specs):
    assert wire.resp3("COMMAND", "INFO", name) == \
        b"*1\r\n" + _info(name, arity, flags, keys, cats, specs)


@pytest.mark.parametrize("args, expected", [
    (("BITOP", "AND", "d", "a", "b"),
     [[b"d", [b"OW", b"update"]], [b"a", [b"RO", b"access"]], [b"b", [b"RO", b"access"]]]),
    (("BITFIELD", "k", "GET", "u8", 0), [[b"k", [b"RO", b"access"]]]),
    (("BITFIELD", "k", "OVERFLOW", "SAT"), [[b"k", [b"RO", b"access"]]]),
    (("BITFIELD", "k", "GET", "u8", 0, "SET", "u8", 0, 1),
     [[b"k", [b"RW", b"access", b"update"]]]),
    (("BITFIELD", "k", "bogus"), [[b"k", [b"RW", b"access", b"update"]]]),
    (("BITFIELD", "k", "GET", "u8"), [[b"k", [b"RW", b"access", b"update"]]]),
    (("LCS", "a", "b"), [[b"a", [b"RO", b"access"]], [b"b", [b"RO", b"access"]]]),
])
def test_command_getkeysandflags(call, args, expected):
    assert call("COMMAND", "GETKEYSANDFLAGS", *args) == expected


@pytest.mark.parametrize("name, group, since", [
    ("setbit", b"bitmap", b"2.2.0"), ("getbit", b"bitmap", b"2.2.0"),
    ("bitcount", b"bitmap", b"2.6.0"), ("bitpos", b"bitmap", b"2.8.7"),
    ("bitop", b"bitmap", b"2.6.0"), ("bitfield", b"bitmap", b"3.2.0"),
    ("bitfield_ro", b"bitmap", b"6.0.0"), ("substr", b"string", b"1.0.0"),
    ("lcs", b"string", b"7.0.0"),
])
def test_command_docs(call, name, group, since):
    docs = call.resp3("COMMAND", "DOCS", name)[name.encode()]
    assert (docs[b"group"], docs[b"since"]) == (group, since)
    assert docs[b"arguments"][0][b"type"] == b"key" or name == "bitop"


def test_substr_docs_name_its_replacement(call):
    docs = call.resp3("COMMAND", "DOCS", "substr")[b"substr"]
    assert docs[b"doc_flags"] == [b"deprecated"]
    assert (docs[b"deprecated_since"], docs[b"replaced_by"]) == (b"2.0.0", b"`GETRANGE`")


def test_acl_category_bitmap(call):
    names = set(call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "bitmap"))
    assert {b"setbit", b"getbit", b"bitcount", b"bitpos", b"bitop", b"bitfield",
            b"bitfield_ro"} <= names
    assert b"lcs" not in names and b"get" not in names


def test_dirty_counts_of_reads_are_zero(r):
    r.set("a", "abc")
    before = dirty(r)
    for command in (("GETBIT", "a", 1), ("BITCOUNT", "a"), ("BITPOS", "a", 1),
                    ("BITFIELD_RO", "a", "GET", "u8", 0), ("SUBSTR", "a", 0, 1),
                    ("LCS", "a", "a")):
        r.execute_command(*command)
    assert dirty(r) == before


def test_bitop_and_bitfield_watch(r, make_client):
    r.set("a", b"\x0f")
    assert watch_broken(make_client, "d", lambda: r.bitop("OR", "d", "a"))
    assert watch_broken(make_client, "d", lambda: r.bitop("AND", "d", "nokey"))  # deleted
    assert not watch_broken(make_client, "d", lambda: r.bitop("AND", "d", "nokey"))
    # a BITFIELD whose writes all fail creates the key unsignalled
    assert not watch_broken(make_client, "f", lambda: r.execute_command(
        "BITFIELD", "f", "OVERFLOW", "FAIL", "SET", "u8", 0, 999))
    assert r.get("f") == b"\x00"
    assert watch_broken(make_client, "g", lambda: r.execute_command(
        "BITFIELD", "g", "SET", "u8", 0, 0))
