"""APPEND, SETRANGE, SETBIT and BITFIELD edit a string in place once it has been edited
(keyutil.StrBuf): the replies, encodings, change counts and copies must be those of Redis,
whichever form the value is in, and no reply or other key may see a later edit."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import redis

from streamd.commands import bitmaps, keys, keyutil as K, strings
from streamd.config import Config
from streamd.store.keyspace import Keyspace
from tests.conftest import dirty_changes, watch_broken


def cmd(r, *args):
    return r.execute_command(*args)


def enc(r, k):
    return r.object("encoding", k)


# --- replies and encodings, against Redis --------------------------------------------------

def test_many_appends_read_back_whole_and_in_parts(r):
    expected = b""
    for i in range(300):
        piece = b"line %d \x00\xff\r\n" % i
        expected += piece
        assert r.append("log", piece) == len(expected)
        if i % 50 == 0:
            assert r.get("log") == expected
            assert r.strlen("log") == len(expected)
    assert r.get("log") == expected
    assert r.strlen("log") == len(expected)
    assert r.getrange("log", 0, 9) == expected[:10]
    assert r.getrange("log", -20, -1) == expected[-20:]
    assert r.getrange("log", 100, 199) == expected[100:200]
    assert cmd(r, "SUBSTR", "log", 5, 15) == expected[5:16]
    assert r.mget("log", "nokey", "log") == [expected, None, expected]
    assert r.type("log") == b"string"
    assert enc(r, "log") == b"raw"
    assert r.object("refcount", "log") == 1
    assert list(r.scan_iter(_type="string")) == [b"log"]
    assert r.lcs("log", "log") == expected


def test_encodings_through_appends_and_setrange(r):
    # Recorded from Redis 7.0.15: APPEND to a new key stores the argument as SET would; any
    # edit of an existing string leaves it raw, even an empty one; a rewrite resets it.
    assert r.append("a", "123") == 3
    assert enc(r, "a") == b"int"
    assert r.append("a", "4") == 4
    assert enc(r, "a") == b"raw"
    assert r.get("a") == b"1234"
    assert r.incr("a") == 1235
    assert enc(r, "a") == b"int"
    assert r.append("d", "abc") == 3
    assert enc(r, "d") == b"embstr"
    r.set("k", 10)
    assert r.append("k", "") == 2
    assert enc(r, "k") == b"raw"
    assert r.get("k") == b"10"
    r.set("c", 5)
    assert r.setrange("c", 0, "") == 1
    assert enc(r, "c") == b"int"  # an empty SETRANGE edits nothing
    assert r.setrange("c", 0, "7") == 1
    assert enc(r, "c") == b"raw"
    assert r.incr("c") == 8
    assert enc(r, "c") == b"int"
    assert r.setrange("e", 3, "ab") == 5
    assert enc(r, "e") == b"raw"
    r.append("e", "c")
    r.set("e", "short")
    assert enc(r, "e") == b"embstr"
    assert r.incrbyfloat("a", "0.5") == 1235.5
    assert r.append("a", "0") == 7
    assert r.get("a") == b"1235.50"
    assert enc(r, "a") == b"raw"


def test_setrange_on_an_appended_value_pads_with_zeros(r):
    r.set("k", "ab")
    r.append("k", "cd")
    assert r.setrange("k", 10, "XY") == 12
    assert r.get("k") == b"abcd" + b"\x00" * 6 + b"XY"
    assert r.setrange("k", 1, "--") == 12  # inside: the length stays
    assert r.get("k") == b"a--d" + b"\x00" * 6 + b"XY"
    assert r.setrange("k", 11, "zzz") == 14  # overlaps the end, then grows
    assert r.get("k") == b"a--d" + b"\x00" * 6 + b"Xzzz"
    assert r.append("k", "!") == 15
    assert r.strlen("k") == 15
    assert r.getrange("k", 4, 9) == b"\x00" * 6
    assert enc(r, "k") == b"raw"
    assert r.setrange("k", 20, "") == 15  # an empty piece does not pad
    assert r.strlen("k") == 15


def test_bit_commands_on_a_grown_value(r):
    r.set("b", "a")
    r.append("b", "b")  # b"ab" = 01100001 01100010
    assert r.getbit("b", 1) == 1
    assert r.setbit("b", 0, 1) == 0
    assert r.get("b") == b"\xe1b"
    assert r.setbit("b", 23, 1) == 0  # grows by a zero byte, then sets its last bit
    assert r.get("b") == b"\xe1b\x01"
    assert r.setbit("b", 23, 1) == 1  # no change
    assert r.bitcount("b") == 8
    assert r.bitpos("b", 1, 2) == 23
    assert cmd(r, "BITFIELD", "b", "GET", "u8", 0, "SET", "u8", 8, 255,
               "INCRBY", "u16", 32, 513) == [0xe1, ord("b"), 513]
    assert r.get("b") == b"\xe1\xff\x01\x00\x02\x01"  # grown to fit bits 32-47
    assert cmd(r, "BITFIELD_RO", "b", "GET", "u8", 8) == [255]
    assert r.append("b", "z") == 7
    assert r.get("b") == b"\xe1\xff\x01\x00\x02\x01z"
    assert r.setrange("b", 1, "Q") == 7
    assert r.getbit("b", 9) == 1
    assert enc(r, "b") == b"raw"
    assert r.bitop("not", "inv", "b") == 7
    assert r.get("inv") == bytes(255 - c for c in b"\xe1Q\x01\x00\x02\x01z")
    assert r.bitop("xor", "b", "b", "inv") == 7  # the source is also the destination
    assert r.get("b") == b"\xff" * 7
    assert r.get("inv") == bytes(255 - c for c in b"\xe1Q\x01\x00\x02\x01z")
    assert enc(r, "b") == b"raw"


def test_bit_writes_on_a_new_key_and_after(r):
    assert r.setbit("s", 7, 1) == 0
    assert enc(r, "s") == b"raw"
    assert r.append("s", "x") == 2
    assert r.get("s") == b"\x01x"
    assert cmd(r, "BITFIELD", "f", "SET", "u8", 8, 65) == [0]
    assert enc(r, "f") == b"raw"
    assert r.append("f", "B") == 3
    assert r.get("f") == b"\x00AB"
    # FAIL refuses every write: the key is still created, zero-filled to fit them.
    assert cmd(r, "BITFIELD", "g", "OVERFLOW", "FAIL", "INCRBY", "u2", 100, 9) == [None]
    assert r.get("g") == b"\x00" * 13
    assert r.append("g", "x") == 14


def test_replies_do_not_change_with_later_edits(r):
    r.set("k", "abc")
    r.append("k", "d")  # an in-place buffer from here on
    p = r.pipeline(transaction=True)
    p.get("k")
    p.mget("k", "k")
    p.getrange("k", 0, -1)
    p.append("k", "e")
    p.get("k")
    p.set("k", "zz", get=True)
    p.append("k", "y")
    p.getset("k", "q")
    p.append("k", "r")
    p.setrange("k", 0, "Q")
    p.getex("k")
    p.setbit("k", 0, 1)
    p.getdel("k")
    p.append("k", "new")
    assert p.execute() == [b"abcd", [b"abcd", b"abcd"], b"abcd", 5, b"abcde",
                           b"abcde", 3, b"zzy", 2, 2, b"Qr", 0, b"\xd1r", 3]
    # The same without a transaction: the replies of one pipelined read are encoded later.
    r.set("p", "x")
    r.append("p", "y")
    p = r.pipeline(transaction=False)
    for i in range(5):
        p.get("p")
        p.append("p", str(i))
    replies = p.execute()
    assert replies[0::2] == [b"xy", b"xy0", b"xy01", b"xy012", b"xy0123"]
    assert r.get("p") == b"xy01234"


def test_copy_then_append_to_either(r):
    r.set("h", "x")
    assert r.copy("h", "h2") == 1
    assert r.append("h", "y") == 2
    assert enc(r, "h") == b"raw"
    assert enc(r, "h2") == b"embstr"
    assert r.copy("h", "h3") == 1
    assert enc(r, "h3") == b"raw"  # recorded: a copy of a raw string is raw
    assert r.append("h3", "z") == 3
    assert r.append("h", "w") == 3
    assert r.setrange("h3", 0, "X") == 3
    assert r.setbit("h", 0, 1) == 0
    assert [r.get("h"), r.get("h2"), r.get("h3")] == [b"\xf8yw", b"x", b"Xyz"]
    # COPY into another database, and over an existing key with REPLACE.
    assert r.copy("h3", "h", replace=True) == 1
    assert r.append("h", "1") == 4
    assert r.append("h3", "3") == 4
    assert [r.get("h"), r.get("h3")] == [b"Xyz1", b"Xyz3"]
    assert r.copy("h", "h", destination_db=1) == 1
    r.append("h", "2")
    cmd(r, "SELECT", 1)
    try:
        assert r.get("h") == b"Xyz1"
        assert r.append("h", "!") == 5
        assert enc(r, "h") == b"raw"
    finally:
        cmd(r, "SELECT", 0)
    assert r.get("h") == b"Xyz12"


def test_rename_and_move_carry_the_edited_value(r):
    r.set("a", "1")
    r.append("a", "2")
    r.expire("a", 100)
    assert r.rename("a", "b") is True
    assert r.append("b", "3") == 3
    assert r.get("b") == b"123"
    assert 99 <= r.ttl("b") <= 100
    assert enc(r, "b") == b"raw"
    assert r.move("b", 1) is True
    assert r.exists("b") == 0
    r.append("b", "fresh")
    cmd(r, "SELECT", 1)
    try:
        assert r.append("b", "4") == 4
        assert r.get("b") == b"1234"
    finally:
        cmd(r, "SELECT", 0)
    assert r.get("b") == b"fresh"


def test_edited_value_is_still_a_string_to_other_types(r):
    r.set("s", "v")
    r.append("s", "w")
    for fn, args in ((r.hset, ("s", "f", "v")), (r.hget, ("s", "f")),
                     (r.xadd, ("s", {"f": "v"})), (r.xlen, ("s",))):
        with pytest.raises(redis.ResponseError) as info:
            fn(*args)
        assert str(info.value).startswith("WRONGTYPE")
    assert r.get("s") == b"vw"


def test_in_place_edits_count_and_signal_as_before(r, make_client):
    r.set("k", "a")
    r.append("k", "b")
    changes = dirty_changes(r, [("APPEND", "k", "c"), ("APPEND", "k", ""),
                                ("SETRANGE", "k", 0, "Z"), ("SETRANGE", "k", 9, ""),
                                ("SETBIT", "k", 0, 1), ("SETBIT", "k", 0, 1),
                                ("BITFIELD", "k", "SET", "u8", 8, 0),
                                ("BITFIELD", "k", "SET", "u8", 8, 0),
                                ("BITFIELD", "k", "GET", "u8", 0)])
    assert [n for _, n in changes] == [1, 1, 1, 0, 1, 0, 1, 0, 0]
    assert watch_broken(make_client, "k", lambda: r.append("k", "x"))
    assert watch_broken(make_client, "k", lambda: r.setrange("k", 1, "y"))
    assert not watch_broken(make_client, "k", lambda: r.setbit("k", 0, 1))
    assert watch_broken(make_client, "k", lambda: r.setbit("k", 0, 0))
    assert watch_broken(make_client, "k", lambda: cmd(r, "BITFIELD", "k", "INCRBY", "u8", 0, 1))
    assert not watch_broken(make_client, "k", lambda: r.get("k"))


# --- the work an edit does (streamd internals) ---------------------------------------------

def _ctx():
    ks = Keyspace(2)
    return SimpleNamespace(db=ks.dbs[0], config=Config(), now_ms=0, keyspace=ks)


@pytest.mark.streamd_only
def test_appends_edit_one_buffer_in_place():
    # A copy of the whole value per APPEND would show as a new object each time; Redis
    # (sds with spare room) and streamd append in amortized O(len(argument)).
    ctx = _ctx()
    data = ctx.db.data
    strings.append(ctx, [b"append", b"k", b"first"])
    strings.append(ctx, [b"append", b"k", b"-"])
    buf = data[b"k"]
    assert type(buf) is K.StrBuf
    for i in range(1000):
        strings.append(ctx, [b"append", b"k", b"%d," % i])
        assert data[b"k"] is buf
    model = bytearray(b"first-" + b"".join(b"%d," % i for i in range(1000)))
    assert buf == model
    strings.setrange(ctx, [b"setrange", b"k", b"0", b"F"])
    model[0:1] = b"F"
    n = len(model)
    strings.setrange(ctx, [b"setrange", b"k", b"%d" % (n + 3), b"end"])
    model += b"\x00\x00\x00end"
    bitmaps.setbit(ctx, [b"setbit", b"k", b"0", b"1"])  # "F" 0x46 -> 0xc6
    model[0] = 0xC6
    bitmaps.setbit(ctx, [b"setbit", b"k", b"%d" % (8 * (n + 6) + 15), b"1"])
    model += b"\x00\x01"
    bitmaps.bitfield(ctx, [b"bitfield", b"k", b"SET", b"u8", b"8", b"0",
                           b"INCRBY", b"u8", b"#%d" % (n + 9), b"7"])
    model[1] = 0
    model += b"\x00\x07"
    assert data[b"k"] is buf
    assert buf == model


@pytest.mark.streamd_only
def test_replies_and_copies_never_share_the_buffer():
    ctx = _ctx()
    strings.append(ctx, [b"append", b"k", b"ab"])
    strings.append(ctx, [b"append", b"k", b"cd"])
    buf = ctx.db.data[b"k"]
    replies = [strings.get(ctx, [b"get", b"k"]),
               strings.getrange(ctx, [b"getrange", b"k", b"0", b"-1"]),
               *strings.mget(ctx, [b"mget", b"k"])]
    keys.copy(ctx, [b"copy", b"k", b"k2"])
    assert ctx.db.data[b"k2"] is not buf
    strings.append(ctx, [b"append", b"k", b"ef"])
    strings.append(ctx, [b"append", b"k2", b"gh"])
    assert [type(x) for x in replies] == [bytes] * 3
    assert replies == [b"abcd"] * 3
    assert (bytes(ctx.db.data[b"k"]), bytes(ctx.db.data[b"k2"])) == (b"abcdef", b"abcdgh")
