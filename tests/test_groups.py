"""Consumer-group commands through the server: XGROUP, XREADGROUP, XACK, XACKDEL, XNACK,
XPENDING, XCLAIM, XAUTOCLAIM, XINFO GROUPS/CONSUMERS/STREAM FULL groups.

Every test also runs against a real Redis (``--redis-url``); newer features are marked
``min_redis``. ``call`` returns replies without redis-py's callbacks; ``wire`` returns the
exact bytes, for the RESP2/RESP3 shapes that parsed replies hide (null kinds, maps)."""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import dirty, error_text as err

NOGROUP_READ = "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option"


def fill(r, key="s", n=3):
    for i in range(1, n + 1):
        r.xadd(key, {"f": f"v{i}"}, id=f"{i}-0")


def group_info(call, key="s"):
    """XINFO GROUPS as a list of dicts keyed by str."""
    out = []
    for flat in call("XINFO", "GROUPS", key):
        d = {}
        for k, v in zip(flat[::2], flat[1::2]):
            d[k.decode()] = v
        out.append(d)
    return out


# --- XGROUP ---------------------------------------------------------------------------------

def test_xgroup_create_variants(r, call):
    fill(r)
    assert call("XGROUP", "CREATE", "s", "g0", "0") == b"OK"
    assert call("XGROUP", "CREATE", "s", "g1", "$") == b"OK"
    assert call("XGROUP", "create", "s", "g2", "2-0", "ENTRIESREAD", "2") == b"OK"
    info = group_info(call)
    assert [g["name"] for g in info] == [b"g0", b"g1", b"g2"]
    assert info[0]["last-delivered-id"] == b"0-0" and info[0]["lag"] == 3
    assert info[0]["entries-read"] is None
    assert info[1]["last-delivered-id"] == b"3-0" and info[1]["lag"] == 0
    assert info[2]["entries-read"] == 2 and info[2]["lag"] == 1
    assert err(call, "XGROUP", "CREATE", "s", "g0", "0") == \
        "BUSYGROUP Consumer Group name already exists"


def test_xgroup_create_errors(r, call):
    assert err(call, "XGROUP", "CREATE", "nokey", "g", "$") == (
        "The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
        "want to use the MKSTREAM option to create an empty stream automatically.")
    assert r.exists("nokey") == 0
    r.set("str", "x")
    assert err(call, "XGROUP", "CREATE", "str", "g", "$").startswith("WRONGTYPE")
    fill(r)
    assert err(call, "XGROUP", "CREATE", "s", "g", "-") == \
        "Invalid stream ID specified as stream command argument"
    assert err(call, "XGROUP", "CREATE", "s", "g", "0", "FOO") == \
        "unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
    assert err(call, "XGROUP", "create", "s", "g", "0", "ENTRIESREAD") == \
        "unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP."
    assert err(call, "XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "-2") == \
        "value for ENTRIESREAD must be positive or -1"
    assert err(call, "XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "x") == \
        "value is not an integer or out of range"
    assert err(call, "XGROUP", "CREATE", "s", "g") == \
        "wrong number of arguments for 'xgroup|create' command"
    assert err(call, "XGROUP", "FOO") == "unknown subcommand 'FOO'. Try XGROUP HELP."
    # Options that all parse but make more than 8 arguments are a syntax error too.
    assert err(call, "XGROUP", "CREATE", "s", "g", "0", *["MKSTREAM"] * 4) == \
        "unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
    assert call("XGROUP", "CREATE", "s", "g", "0", *["MKSTREAM"] * 3) == b"OK"


def test_dollar_is_the_last_generated_id_even_when_deleted(r, call):
    fill(r)
    r.xdel("s", "3-0")
    call("XGROUP", "CREATE", "s", "g", "$")
    assert group_info(call)[0]["last-delivered-id"] == b"3-0"
    call("XGROUP", "SETID", "s", "g", "0")
    call("XGROUP", "SETID", "s", "g", "$")
    assert group_info(call)[0]["last-delivered-id"] == b"3-0"


def test_xgroup_create_mkstream(r, call):
    assert call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == b"OK"
    assert r.type("s") == b"stream" and r.xlen("s") == 0
    info = group_info(call)[0]
    assert info["last-delivered-id"] == b"0-0" and info["lag"] == 0
    # MKSTREAM on an existing stream: nothing new, the group name still clashes.
    assert err(call, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM").startswith("BUSYGROUP")
    # A bad ID means nothing is created.
    assert err(call, "XGROUP", "CREATE", "s2", "g", "bad", "MKSTREAM").startswith("Invalid")
    assert r.exists("s2") == 0


@pytest.mark.min_redis("7.4")
def test_xgroup_entriesread_is_capped_to_entries_added(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "100")
    assert group_info(call)[0]["entries-read"] == 3
    call("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "4")  # one past: capped too
    assert group_info(call)[0]["entries-read"] == 3


def test_xgroup_setid(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert group_info(call)[0]["entries-read"] == 3
    assert call("XGROUP", "SETID", "s", "g", "1-0") == b"OK"
    info = group_info(call)[0]
    assert info["last-delivered-id"] == b"1-0" and info["entries-read"] is None
    assert call("XGROUP", "SETID", "s", "g", "-") == b"OK"  # non-strict here
    assert group_info(call)[0]["last-delivered-id"] == b"0-0"
    assert call("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "3") == b"OK"
    info = group_info(call)[0]
    assert (info["last-delivered-id"], info["entries-read"], info["lag"]) == (b"3-0", 3, 0)
    assert err(call, "XGROUP", "SETID", "s", "nog", "0") == \
        "NOGROUP No such consumer group 'nog' for key name 's'"
    assert err(call, "XGROUP", "SETID", "nokey", "g", "0").startswith(
        "The XGROUP subcommand requires the key to exist")
    assert err(call, "XGROUP", "SETID", "s", "g", "0", "MKSTREAM") == \
        "unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."
    assert err(call, "XGROUP", "SETID", "s", "g", "zz") == \
        "Invalid stream ID specified as stream command argument"


def test_setid_backwards_redelivers_and_reassigns(r, call):
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XCLAIM", "s", "g", "a", "0", "1-0", "RETRYCOUNT", "5")
    call("XGROUP", "SETID", "s", "g", "0")
    reply = call("XREADGROUP", "GROUP", "g", "b", "COUNT", "1", "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"]]]]]
    rows = call("XPENDING", "s", "g", "-", "+", "10")
    assert [(row[0], row[1], row[3]) for row in rows] == [(b"1-0", b"b", 1), (b"2-0", b"a", 1)]


def test_setid_just_below_the_last_pending_entry_redelivers_it_once(r, call):
    # The new read starts at the greatest pending ID: it must take over that entry, not
    # add a second one.
    fill(r, n=3)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XGROUP", "SETID", "s", "g", "2-0")
    call("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    rows = call("XPENDING", "s", "g", "-", "+", "10")
    assert [(row[0], row[1], row[3]) for row in rows] == \
        [(b"1-0", b"a", 1), (b"2-0", b"a", 1), (b"3-0", b"b", 1)]
    assert call("XPENDING", "s", "g")[3] == [[b"a", b"2"], [b"b", b"1"]]
    assert call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", "0")[0][1] == \
        [[b"1-0", [b"f", b"v1"]], [b"2-0", [b"f", b"v2"]]]


def test_xgroup_destroy_createconsumer_delconsumer(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert call("XGROUP", "CREATECONSUMER", "s", "g", "alice") == 1
    assert call("XGROUP", "CREATECONSUMER", "s", "g", "alice") == 0
    call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "2", "STREAMS", "s", ">")
    assert call("XGROUP", "DELCONSUMER", "s", "g", "bob") == 2
    assert call("XGROUP", "DELCONSUMER", "s", "g", "bob") == 0
    assert call("XPENDING", "s", "g")[0] == 0
    assert err(call, "XGROUP", "CREATECONSUMER", "s", "nog", "x") == \
        "NOGROUP No such consumer group 'nog' for key name 's'"
    assert err(call, "XGROUP", "DELCONSUMER", "s", "nog", "x").startswith("NOGROUP")
    assert call("XGROUP", "DESTROY", "s", "g") == 1
    assert call("XGROUP", "DESTROY", "s", "g") == 0
    assert call("XINFO", "GROUPS", "s") == []
    assert err(call, "XGROUP", "DESTROY", "nokey", "g").startswith(
        "The XGROUP subcommand requires the key to exist")
    assert err(call, "XGROUP", "DESTROY", "s") == \
        "wrong number of arguments for 'xgroup|destroy' command"


def test_xgroup_help(r, wire, call, target):
    lines = call("XGROUP", "HELP")
    assert lines[0] == b"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[1] == b"CREATE <key> <groupname> <id|$> [option]"
    # Redis 7.0 says "Prints this help."; the 8.x help helper says "Print this help."
    last = b"    Prints this help." if target.version < (7, 2) else b"    Print this help."
    assert lines[-2:] == [b"HELP", last]
    assert b"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]" in lines
    raw_reply = wire("XGROUP", "HELP")
    assert raw_reply.startswith(b"*%d\r\n+XGROUP <subcommand>" % len(lines))
    assert err(call, "XGROUP", "HELP", "x") == \
        "wrong number of arguments for 'xgroup|help' command"


# --- XREADGROUP -----------------------------------------------------------------------------

def test_xreadgroup_new_entries_and_pel(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    reply = call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"]], [b"2-0", [b"f", b"v2"]]]]]
    info = group_info(call)[0]
    assert (info["entries-read"], info["lag"], info["pending"]) == (2, 1, 2)
    assert call("XPENDING", "s", "g") == [2, b"1-0", b"2-0", [[b"c", b"2"]]]
    reply = call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"3-0", [b"f", b"v3"]]]]]
    assert call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") is None


def test_xreadgroup_history(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", "1") == \
        [[b"s", [[b"2-0", [b"f", b"v2"]]]]]  # 1 = 1-0: strictly after it
    rows = call("XPENDING", "s", "g", "-", "+", "10")
    assert [row[3] for row in rows] == [1, 2, 1]
    r.xdel("s", "1-0")
    reply = call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    assert reply[0][1][0] == [b"1-0", None]  # deleted entries come back as [id, null]
    # Another consumer has no history: an empty list, not a null.
    assert call("XREADGROUP", "GROUP", "g", "other", "STREAMS", "s", "0") == [[b"s", []]]
    # History ignores BLOCK.
    assert call("XREADGROUP", "GROUP", "g", "other", "BLOCK", "0", "STREAMS", "s", "0") == \
        [[b"s", []]]


def test_xreadgroup_wire_shapes(r, wire):
    fill(r, n=1)
    wire("XGROUP", "CREATE", "s", "g", "0")
    assert wire("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == \
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n"
    assert wire("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == b"*-1\r\n"
    r.xdel("s", "1-0")
    assert wire("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0") == \
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*-1\r\n"
    r.xadd("s", {"a": "b"}, id="2-0")
    assert wire.resp3("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == \
        b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert wire.resp3("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == b"_\r\n"


def test_xreadgroup_multiple_streams_and_noack(r, call):
    fill(r, "s1", 2)
    fill(r, "s2", 1)
    for k in ("s1", "s2"):
        call("XGROUP", "CREATE", k, "g", "0")
    reply = call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "NOACK",
                 "STREAMS", "s1", "s2", ">", ">")
    assert reply == [[b"s1", [[b"1-0", [b"f", b"v1"]]]], [b"s2", [[b"1-0", [b"f", b"v1"]]]]]
    assert call("XPENDING", "s1", "g")[0] == 0  # NOACK: nothing pending
    info = group_info(call, "s1")[0]
    assert (info["last-delivered-id"], info["entries-read"]) == (b"1-0", 1)
    # The consumer exists (created by the read) but was never active.
    cons = call("XINFO", "CONSUMERS", "s1", "g")
    assert cons[0][:4] == [b"name", b"c", b"pending", 0]
    if call("INFO", "server").find(b"redis_version:7.0") < 0:
        assert cons[0][6:8] == [b"inactive", -1]


def test_xreadgroup_creates_consumer_even_without_data(r, call, target):
    call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert call("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">") is None
    assert call("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0") == [[b"s", []]]
    names = [c[1] for c in call("XINFO", "CONSUMERS", "s", "g")]
    # Redis 7.0 created the consumer only when it served the stream; 7.2+ always does.
    assert names == ([b"c2"] if target.version < (7, 2) else [b"c1", b"c2"])


def test_xreadgroup_parse_errors(r, call, target):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    X = ("XREADGROUP", "GROUP", "g", "c")
    assert err(call, *X, "STREAMS", "s") == \
        "wrong number of arguments for 'xreadgroup' command"
    # Redis 7.0 used XREAD's text ("Unbalanced XREAD list ... or '$'") here too.
    if target.version >= (7, 2):
        assert err(call, *X, "STREAMS", "s", "s2", ">") == (
            "Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' "
            "must be specified.")
    assert err(call, "XREADGROUP", "COUNT", "1", "NOACK", "STREAMS", "s", ">") == \
        "Missing GROUP option for XREADGROUP"
    assert err(call, "XREADGROUP", "GROUPS", "g", "c", "STREAMS", "s", ">") == "syntax error"
    assert err(call, *X, "COUNT", "x", "STREAMS", "s", ">") == \
        "value is not an integer or out of range"
    assert err(call, *X, "BLOCK", "x", "STREAMS", "s", ">") == \
        "timeout is not an integer or out of range"
    assert err(call, *X, "BLOCK", "-1", "STREAMS", "s", ">") == "timeout is negative"
    assert err(call, *X, "COUNT", "1", "FOO", "STREAMS", "s", ">") == "syntax error"
    assert err(call, *X, "COUNT", "1", "BLOCK", "10", "NOACK", "s", ">") == "syntax error"
    assert err(call, *X, "STREAMS", "s", "$").startswith(
        "The $ ID is meaningless in the context of XREADGROUP: you want to read the history "
        "of this consumer by specifying a proper ID, or use the > ID to get new messages. "
        "The $ ID would just return an empty result set.")
    assert err(call, *X, "STREAMS", "s", "-") == \
        "Invalid stream ID specified as stream command argument"
    assert err(call, *X, "STREAMS", "nokey", ">") == NOGROUP_READ.format("nokey", "g")
    assert err(call, "XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">") == \
        NOGROUP_READ.format("s", "nog")
    r.set("str", "x")
    assert err(call, *X, "STREAMS", "str", ">").startswith("WRONGTYPE")
    # Key k is checked (type, group) before its ID; an earlier bad ID wins over a later key.
    assert err(call, *X, "STREAMS", "s", "nokey", "bad", ">").startswith("Invalid stream ID")
    assert err(call, *X, "STREAMS", "nokey", "s", "bad", ">").startswith("NOGROUP")
    # Errors leave no trace: no consumer was created.
    assert call("XINFO", "CONSUMERS", "s", "g") == []


@pytest.mark.min_redis("7.4")
def test_xreadgroup_plus_id_is_meaningless(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert err(call, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+").startswith(
        "The + ID is meaningless in the context of XREADGROUP")


def test_xreadgroup_group_anywhere_before_streams(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert call("XREADGROUP", "COUNT", "5", "GROUP", "g", "c", "STREAMS", "s", ">") == \
        [[b"s", [[b"1-0", [b"f", b"v1"]]]]]


def test_xreadgroup_counts_every_entry_of_a_batch_read(r, call):
    # Once the group has read an entry, later reads of several entries each move
    # entries-read by the number of entries delivered.
    fill(r, n=7)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", ">")
    info = group_info(call)[0]
    assert (info["last-delivered-id"], info["entries-read"], info["lag"]) == (b"4-0", 4, 3)
    call("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">")
    info = group_info(call)[0]
    assert (info["last-delivered-id"], info["entries-read"], info["lag"]) == (b"7-0", 7, 0)
    assert info["pending"] == 4  # NOACK entries are counted, not kept pending


def test_xreadgroup_entries_read_with_deletions(r, call):
    fill(r, n=5)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    info = group_info(call)[0]
    assert (info["entries-read"], info["lag"]) == (1, 4)
    r.xdel("s", "3-0")
    assert group_info(call)[0]["lag"] is None  # a tombstone ahead: unknown
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    info = group_info(call)[0]
    assert (info["entries-read"], info["lag"]) == (5, 0)


def test_xreadgroup_lag_when_group_is_behind_trimmed_entries(r, call):
    fill(r, n=5)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert call("XTRIM", "s", "MAXLEN", "2") == 3
    info = group_info(call)[0]
    assert info["lag"] == 2


# Two lag/entries-read rules Redis added after 7.0 (7.0 answers lag 2 and entries-read 3 /
# lag 1 here); the reference gives them for 8.8, the exact version that added them is not
# pinned, hence the conservative marker.
@pytest.mark.min_redis("8.0")
def test_lag_of_an_emptied_stream_is_zero(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    assert call("XDEL", "s", "1-0", "2-0", "3-0") == 3
    info = group_info(call)[0]
    assert (info["entries-read"], info["lag"]) == (1, 0)


@pytest.mark.min_redis("8.0")
def test_entries_read_restarts_from_the_estimate_when_group_was_before_first_entry(r, call):
    fill(r, n=4)
    r.xdel("s", "1-0")  # first entry 2-0, max deleted 1-0
    call("XGROUP", "CREATE", "s", "g", "1-5", "ENTRIESREAD", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    # 2-0 is entry number 2 of the 4 ever added (4 added - 3 live + 1), not "0 + 1"
    info = group_info(call)[0]
    assert (info["entries-read"], info["lag"]) == (4, 0)


def test_entries_read_of_the_first_entry_after_head_deletions(r, call):
    # Deletions only before the first entry leave its number known (entries added -
    # length + 1), so a group with an unknown counter gets one when it reads that entry,
    # and a group positioned there has a lag.
    fill(r, n=5)
    r.xdel("s", "1-0")
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XGROUP", "CREATE", "s", "at-first", "2-0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    info = {g["name"]: g for g in group_info(call)}
    assert (info[b"g"]["entries-read"], info[b"g"]["lag"]) == (2, 3)
    assert (info[b"at-first"]["entries-read"], info[b"at-first"]["lag"]) == (None, 3)


def test_xreadgroup_in_multi_does_not_block(r, wire):
    wire("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert wire("MULTI") == b"+OK\r\n"
    assert wire("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">") == \
        b"+QUEUED\r\n"
    assert wire("EXEC") == b"*1\r\n*-1\r\n"  # the null array of a timeout, at once


# --- CLAIM option of XREADGROUP (8.4) ------------------------------------------------------------

@pytest.mark.min_redis("8.4")
def test_xreadgroup_claim_takes_idle_pending_then_new(r, call):
    fill(r, n=3)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "COUNT", "2", "STREAMS", "s", ">")
    call("XCLAIM", "s", "g", "a", "0", "1-0", "2-0", "IDLE", "5000")
    reply = call("XREADGROUP", "GROUP", "g", "b", "CLAIM", "1000", "STREAMS", "s", ">")
    entries = reply[0][1]
    assert [e[0] for e in entries] == [b"1-0", b"2-0", b"3-0"]
    assert all(len(e) == 4 for e in entries)
    assert entries[0][2] >= 5000 and entries[0][3] == 2  # count before this delivery
    assert entries[2][2:] == [0, 0]  # new entries: idle 0, count 0
    rows = call("XPENDING", "s", "g", "-", "+", "10")
    assert [(row[1], row[3]) for row in rows] == [(b"b", 3), (b"b", 3), (b"b", 1)]


@pytest.mark.min_redis("8.4")
def test_claim_read_of_pending_entries_only_is_activity(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XGROUP", "CREATECONSUMER", "s", "g", "b")
    reply = call("XREADGROUP", "GROUP", "g", "b", "CLAIM", "0", "STREAMS", "s", ">")
    assert [e[0] for e in reply[0][1]] == [b"1-0"]  # no new entry: the claim alone
    consumers = {c[1]: dict(zip(c[::2], c[1::2])) for c in call("XINFO", "CONSUMERS", "s", "g")}
    assert consumers[b"b"][b"inactive"] != -1


@pytest.mark.min_redis("8.4")
def test_xreadgroup_claim_errors(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    X = ("XREADGROUP", "GROUP", "g", "c")
    assert err(call, *X, "CLAIM", "+10", "STREAMS", "s", ">") == \
        "min-idle-time is not an integer or out of range"
    assert err(call, *X, "CLAIM", "-1", "STREAMS", "s", ">") == \
        "min-idle-time must be a positive integer"
    assert err(call, *X, "CLAIM", "STREAMS", "s", ">") == \
        "min-idle-time is not an integer or out of range"
    assert err(call, "XREADGROUP", "GROUP", "g", "CLAIM", "50", "c", "STREAMS", "s", ">") == \
        "syntax error"


# --- XACK / XACKDEL -------------------------------------------------------------------------

def test_xack(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert call("XACK", "s", "g", "1-0", "1-0", "9-0") == 1
    assert call("XACK", "s", "g", "2", "3-0") == 2
    assert call("XACK", "s", "nog", "garbage") == 0  # missing group: before ID checks
    assert call("XACK", "nokey", "g", "garbage") == 0
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    assert err(call, "XACK", "s", "g", "1-0", "bad") == \
        "Invalid stream ID specified as stream command argument"
    assert call("XPENDING", "s", "g")[0] == 0  # nothing was pending any more
    r.xgroup_setid("s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert err(call, "XACK", "s", "g", "1-0", "2-0", "bad").startswith("Invalid stream ID")
    assert call("XPENDING", "s", "g")[0] == 3  # an invalid ID acknowledges none of them
    r.set("str", "x")
    assert err(call, "XACK", "str", "g", "1-0").startswith("WRONGTYPE")


@pytest.mark.min_redis("8.2")
def test_xackdel(r, call):
    fill(r, n=4)
    for g in ("g1", "g2"):
        call("XGROUP", "CREATE", "s", g, "0")
        call("XREADGROUP", "GROUP", g, "c", "STREAMS", "s", ">")
    assert call("XACKDEL", "s", "g1", "IDS", "2", "1-0", "9-0") == [1, -1]
    assert r.xlen("s") == 3  # KEEPREF deleted 1-0 though g2 still has it pending
    assert call("XPENDING", "s", "g2")[0] == 4
    assert call("XACKDEL", "s", "g1", "ACKED", "IDS", "1", "2-0") == [2]
    assert r.xlen("s") == 3
    assert call("XACKDEL", "s", "g1", "DELREF", "IDS", "1", "3-0") == [1]
    assert call("XPENDING", "s", "g2", "-", "+", "10")[1][0] == b"2-0"
    assert [row[0] for row in call("XPENDING", "s", "g2", "-", "+", "10")] == \
        [b"1-0", b"2-0", b"4-0"]
    assert call("XACKDEL", "s", "nog", "IDS", "2", "x", "y") == [-1, -1]
    assert call("XACKDEL", "nokey", "g", "IDS", "1", "x") == [-1]
    assert err(call, "XACKDEL", "s", "g1", "IDS", "0", "1-0") == \
        "Number of IDs must be a positive integer"
    assert err(call, "XACKDEL", "s", "g1", "IDS", "3", "1-0", "2-0") == \
        "The `numids` parameter must match the number of arguments"
    assert err(call, "XACKDEL", "s", "g1", "KEEPREF", "DELREF", "IDS", "1", "1-0") == \
        "syntax error"
    assert err(call, "XACKDEL", "s", "g1", "IDS", "1", "1-0", "extra") == "syntax error"
    assert err(call, "XACKDEL", "s", "g1", "FOO", "BAR", "1-0") == "syntax error"
    assert err(call, "XACKDEL", "s", "g1", "ACKED", "DELREF", "1-0") == "syntax error"
    assert err(call, "XACKDEL", "s", "g1", "IDS", "1", "bad") == \
        "Invalid stream ID specified as stream command argument"


# --- XPENDING -------------------------------------------------------------------------------

def test_xpending_summary_and_extended(r, call, wire):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert wire("XPENDING", "s", "g") == b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"
    assert wire.resp3("XPENDING", "s", "g") == b"*4\r\n:0\r\n_\r\n_\r\n_\r\n"
    call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", ">")
    call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    assert wire("XPENDING", "s", "g") == (
        b"*4\r\n:3\r\n$3\r\n1-0\r\n$3\r\n3-0\r\n*2\r\n*2\r\n$5\r\nalice\r\n$1\r\n2\r\n"
        b"*2\r\n$3\r\nbob\r\n$1\r\n1\r\n")
    rows = call("XPENDING", "s", "g", "-", "+", "10")
    assert [(row[0], row[1], row[3]) for row in rows] == \
        [(b"1-0", b"bob", 1), (b"2-0", b"alice", 1), (b"3-0", b"alice", 1)]
    assert all(isinstance(row[2], int) and row[2] >= 0 for row in rows)
    assert [row[0] for row in call("XPENDING", "s", "g", "(1-0", "+", "10")] == \
        [b"2-0", b"3-0"]
    assert [row[0] for row in call("XPENDING", "s", "g", "-", "(3-0", "10")] == \
        [b"1-0", b"2-0"]
    # An incomplete exclusive end keeps seq max before the decrement: 3-0 stays in.
    assert [row[0] for row in call("XPENDING", "s", "g", "-", "(3", "10")] == \
        [b"1-0", b"2-0", b"3-0"]
    assert [row[0] for row in call("XPENDING", "s", "g", "-", "2", "10")] == \
        [b"1-0", b"2-0"]  # incomplete end: seq max
    assert [row[0] for row in call("XPENDING", "s", "g", "-", "+", "10", "bob")] == [b"1-0"]
    assert call("XPENDING", "s", "g", "-", "+", "10", "nobody") == []
    assert call("XPENDING", "s", "g", "-", "+", "0") == []
    assert call("XPENDING", "s", "g", "-", "+", "-5") == []
    assert len(call("XPENDING", "s", "g", "-", "+", "2")) == 2
    assert call("XPENDING", "s", "g", "3", "1", "10") == []
    call("XCLAIM", "s", "g", "bob", "0", "2-0", "IDLE", "100000")
    rows = call("XPENDING", "s", "g", "IDLE", "50000", "-", "+", "10")
    assert [row[0] for row in rows] == [b"2-0"] and rows[0][2] >= 100000


def test_xpending_errors(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert err(call, "XPENDING", "s", "g", "-") == "syntax error"
    assert err(call, "XPENDING", "s", "g", "-", "+") == "syntax error"
    assert err(call, "XPENDING", "s", "g", "IDLE", "10", "-", "+") == "syntax error"
    assert err(call, "XPENDING", "s", "g", "IDLE", "x", "-", "+", "1") == \
        "value is not an integer or out of range"
    assert err(call, "XPENDING", "s", "g", "-", "+", "x") == \
        "value is not an integer or out of range"
    assert err(call, "XPENDING", "s", "g", "x", "+", "1") == \
        "Invalid stream ID specified as stream command argument"
    assert err(call, "XPENDING", "s", "g", "(18446744073709551615-18446744073709551615",
               "+", "1") == "invalid start ID for the interval"
    assert err(call, "XPENDING", "s", "g", "-", "(0-0", "1") == \
        "invalid end ID for the interval"
    assert err(call, "XPENDING", "s", "nog") == \
        "NOGROUP No such key 's' or consumer group 'nog'"
    assert err(call, "XPENDING", "nokey", "g", "-", "+", "1") == \
        "NOGROUP No such key 'nokey' or consumer group 'g'"
    # Argument errors come before the key lookup.
    assert err(call, "XPENDING", "nokey", "g", "-", "+", "x").startswith("value is not")
    # At most 9 arguments, whatever they are (after the consumer they are ignored).
    assert call("XPENDING", "s", "g", "-", "+", "1", "c", "x", "y") == []
    assert err(call, "XPENDING", "s", "g", "-", "+", "1", "c", "x", "y", "z") == \
        "syntax error"
    assert err(call, "XPENDING", "s", "g", "IDLE", "0", "-", "+", "1", "c", "x") == \
        "syntax error"


# --- XCLAIM ---------------------------------------------------------------------------------

def test_xclaim(r, call, target):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    # Not idle enough: nothing claimed, but the consumer gets created.
    assert call("XCLAIM", "s", "g", "b", "3600000", "1-0") == []
    if target.version >= (7, 2):  # 7.0 created it only when it claimed something
        assert [c[1] for c in call("XINFO", "CONSUMERS", "s", "g")] == [b"a", b"b"]
    assert call("XCLAIM", "s", "g", "b", "0", "1-0", "2-0") == \
        [[b"1-0", [b"f", b"v1"]], [b"2-0", [b"f", b"v2"]]]
    rows = call("XPENDING", "s", "g", "-", "+", "10")
    assert [(row[1], row[3]) for row in rows] == [(b"b", 2), (b"b", 2), (b"a", 1)]
    assert call("XCLAIM", "s", "g", "c", "0", "1-0", "JUSTID") == [b"1-0"]
    assert call("XPENDING", "s", "g", "-", "+", "1")[0][3] == 2  # JUSTID: no increment
    assert call("XCLAIM", "s", "g", "c", "0", "2-0", "RETRYCOUNT", "9", "JUSTID") == [b"2-0"]
    assert call("XPENDING", "s", "g", "-", "+", "10")[1][3] == 9
    # Deleted entry: its PEL entry is dropped, nothing returned.
    r.xdel("s", "3-0")
    assert call("XCLAIM", "s", "g", "c", "0", "3-0") == []
    assert call("XPENDING", "s", "g")[0] == 2


def test_xclaim_force_time_idle_lastid(r, call):
    fill(r, n=4)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert call("XCLAIM", "s", "g", "c", "0", "2-0") == []  # not pending, no FORCE
    assert call("XCLAIM", "s", "g", "c", "0", "2-0", "FORCE", "JUSTID") == [b"2-0"]
    row = call("XPENDING", "s", "g", "-", "+", "10")[0]
    assert (row[1], row[3]) == (b"c", 1)  # FORCE starts at 1; JUSTID adds nothing
    assert call("XCLAIM", "s", "g", "c", "0", "9-0", "FORCE") == []  # no such entry
    past = int(time.time() * 1000) - 60000
    call("XCLAIM", "s", "g", "c", "0", "2-0", "TIME", str(past), "JUSTID")
    assert call("XPENDING", "s", "g", "-", "+", "10")[0][2] >= 60000
    call("XCLAIM", "s", "g", "c", "0", "2-0", "IDLE", "30000", "JUSTID")
    idle = call("XPENDING", "s", "g", "-", "+", "10")[0][2]
    assert 30000 <= idle < 40000
    call("XCLAIM", "s", "g", "c", "0", "2-0", "TIME", "99999999999999", "JUSTID")
    assert call("XPENDING", "s", "g", "-", "+", "10")[0][2] < 5000  # future -> now
    call("XCLAIM", "s", "g", "c", "0", "2-0", "LASTID", "3-0", "JUSTID")
    assert group_info(call)[0]["last-delivered-id"] == b"3-0"
    call("XCLAIM", "s", "g", "c", "0", "2-0", "LASTID", "1-0", "JUSTID")
    assert group_info(call)[0]["last-delivered-id"] == b"3-0"  # never moves back


def test_xclaim_errors(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert err(call, "XCLAIM", "s", "nog", "c", "0", "1-0") == \
        "NOGROUP No such key 's' or consumer group 'nog'"
    assert err(call, "XCLAIM", "nokey", "g", "c", "x", "1-0").startswith("NOGROUP")
    assert err(call, "XCLAIM", "s", "g", "c", "x", "1-0") == \
        "Invalid min-idle-time argument for XCLAIM"
    assert err(call, "XCLAIM", "s", "g", "c", "0", "1-0", "IDLE", "x") == \
        "Invalid IDLE option argument for XCLAIM"
    assert err(call, "XCLAIM", "s", "g", "c", "0", "1-0", "TIME", "x") == \
        "Invalid TIME option argument for XCLAIM"
    assert err(call, "XCLAIM", "s", "g", "c", "0", "1-0", "RETRYCOUNT", "x") == \
        "Invalid RETRYCOUNT option argument for XCLAIM"
    assert err(call, "XCLAIM", "s", "g", "c", "0", "1-0", "LASTID", "x") == \
        "Invalid stream ID specified as stream command argument"
    assert err(call, "XCLAIM", "s", "g", "c", "0", "1-0", "FOO") == \
        "Unrecognized XCLAIM option 'FOO'"
    assert err(call, "XCLAIM", "s", "g", "c", "0", "1-0", "JUSTID", "2-0") == \
        "Unrecognized XCLAIM option '2-0'"
    assert err(call, "XCLAIM", "s", "g", "c", "0", "1-0", "IDLE") == \
        "Unrecognized XCLAIM option 'IDLE'"
    assert err(call, "XCLAIM", "s", "g", "c", "0") == \
        "wrong number of arguments for 'xclaim' command"


# --- XAUTOCLAIM -----------------------------------------------------------------------------

def test_xautoclaim(r, call):
    fill(r, n=5)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    assert call("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", "2") == \
        [b"3-0", [[b"1-0", [b"f", b"v1"]], [b"2-0", [b"f", b"v2"]]], []]
    r.xdel("s", "3-0")
    assert call("XAUTOCLAIM", "s", "g", "b", "0", "3-0", "COUNT", "2", "JUSTID") == \
        [b"5-0", [b"4-0"], [b"3-0"]]  # the deleted entry uses up COUNT too
    assert call("XAUTOCLAIM", "s", "g", "b", "0", "(4-0", "JUSTID") == [b"0-0", [b"5-0"], []]
    assert call("XAUTOCLAIM", "s", "g", "b", "3600000", "-") == [b"0-0", [], []]
    rows = call("XPENDING", "s", "g", "-", "+", "10")
    assert [(row[0], row[1], row[3]) for row in rows] == \
        [(b"1-0", b"b", 2), (b"2-0", b"b", 2), (b"4-0", b"b", 1), (b"5-0", b"b", 1)]


def test_xautoclaim_attempts_limit(r, call):
    fill(r, n=25)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    # COUNT 1 examines at most 10 entries; none is idle enough, so the cursor moves on.
    assert call("XAUTOCLAIM", "s", "g", "b", "3600000", "-", "COUNT", "1") == \
        [b"11-0", [], []]


def test_xautoclaim_errors(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert err(call, "XAUTOCLAIM", "s", "g", "c", "x", "0") == \
        "Invalid min-idle-time argument for XAUTOCLAIM"
    assert err(call, "XAUTOCLAIM", "s", "g", "c", "0", "x") == \
        "Invalid stream ID specified as stream command argument"
    assert err(call, "XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0") == \
        "COUNT must be > 0"
    assert err(call, "XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "x") == \
        "COUNT must be > 0"
    assert err(call, "XAUTOCLAIM", "s", "g", "c", "0", "0", "FOO") == "syntax error"
    assert err(call, "XAUTOCLAIM", "s", "g", "c", "0", "(+") == \
        "Invalid stream ID specified as stream command argument"  # strict after "("
    assert err(call, "XAUTOCLAIM", "s", "g", "c", "0",
               "(18446744073709551615-18446744073709551615") == \
        "invalid start ID for the interval"
    # Argument errors before the key check; then NOGROUP.
    assert err(call, "XAUTOCLAIM", "nokey", "g", "c", "x", "0").startswith("Invalid min-idle")
    assert err(call, "XAUTOCLAIM", "s", "nog", "c", "0", "0") == \
        "NOGROUP No such key 's' or consumer group 'nog'"


# --- XINFO ----------------------------------------------------------------------------------

def test_xinfo_groups_and_consumers_shapes(r, call, wire):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    groups = call("XINFO", "GROUPS", "s")
    assert groups == [[b"name", b"g", b"consumers", 1, b"pending", 1,
                       b"last-delivered-id", b"1-0", b"entries-read", 1, b"lag", 2]]
    g3 = call.resp3("XINFO", "GROUPS", "s")
    assert g3[0][b"lag"] == 2
    cons = call("XINFO", "CONSUMERS", "s", "g")
    assert [cons[0][i] for i in (0, 1, 2, 3, 4)] == [b"name", b"c", b"pending", 1, b"idle"]
    assert err(call, "XINFO", "CONSUMERS", "s", "nog") == \
        "NOGROUP No such consumer group 'nog' for key name 's'"
    assert err(call, "XINFO", "GROUPS", "nokey") == "no such key"
    assert err(call, "XINFO", "CONSUMERS", "nokey", "g") == "no such key"
    call("XGROUP", "SETID", "s", "g", "1-0")
    assert wire.resp3("XINFO", "GROUPS", "s").endswith(b"$12\r\nentries-read\r\n_\r\n$3\r\nlag\r\n:2\r\n")
    r.set("str", "x")
    assert err(call, "XINFO", "GROUPS", "str").startswith("WRONGTYPE")


@pytest.mark.min_redis("7.2")
def test_xinfo_consumers_inactive(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XGROUP", "CREATECONSUMER", "s", "g", "idle")
    call("XREADGROUP", "GROUP", "g", "busy", "COUNT", "1", "STREAMS", "s", ">")
    cons = {c[1]: c for c in call("XINFO", "CONSUMERS", "s", "g")}
    assert cons[b"idle"][6:] == [b"inactive", -1]
    assert cons[b"busy"][6] == b"inactive" and 0 <= cons[b"busy"][7] < 5000


def _full_groups(call, key="s", *extra):
    full = call("XINFO", "STREAM", key, "FULL", *extra)
    d = dict(zip(full[::2], full[1::2]))
    return d[b"groups"]


def test_xinfo_stream_full_groups_section(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    groups = _full_groups(call)
    g = dict(zip(groups[0][::2], groups[0][1::2]))
    assert g[b"name"] == b"g" and g[b"last-delivered-id"] == b"3-0"
    assert (g[b"entries-read"], g[b"lag"], g[b"pel-count"]) == (3, 0, 3)
    assert [row[0] for row in g[b"pending"]] == [b"1-0", b"2-0", b"3-0"]
    assert g[b"pending"][0][1] == b"c" and g[b"pending"][0][3] == 1
    c = dict(zip(g[b"consumers"][0][::2], g[b"consumers"][0][1::2]))
    assert c[b"name"] == b"c" and c[b"pel-count"] == 3
    assert [row[0] for row in c[b"pending"]] == [b"1-0", b"2-0", b"3-0"]
    assert c[b"pending"][0][2] == 1
    # COUNT caps every PEL listing.
    g = dict(zip(*[iter(_full_groups(call, "s", "COUNT", "1")[0])] * 2))
    assert len(g[b"pending"]) == 1 and g[b"pel-count"] == 3


def test_groups_are_listed_in_byte_order_of_their_names(r, call):
    fill(r)
    for name in (b"b", b"B", b"aa", b"a", b"\xff", b"a\x00"):
        call("XGROUP", "CREATE", "s", name, "0")
    order = [b"B", b"a", b"a\x00", b"aa", b"b", b"\xff"]
    assert [g["name"] for g in group_info(call)] == order
    assert [dict(zip(g[::2], g[1::2]))[b"name"] for g in _full_groups(call)] == order


# --- XNACK (8.8) ----------------------------------------------------------------------------

@pytest.mark.min_redis("8.8")
def test_xnack_modes_and_visibility(r, call):
    fill(r, n=4)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XCLAIM", "s", "g", "a", "0", "1-0", "2-0", "3-0", "RETRYCOUNT", "3", "JUSTID")
    assert call("XNACK", "s", "g", "SILENT", "IDS", "1", "1-0") == 1
    assert call("XNACK", "s", "g", "FAIL", "IDS", "1", "2-0") == 1
    assert call("XNACK", "s", "g", "FATAL", "IDS", "1", "3-0") == 1
    rows = {row[0]: row for row in call("XPENDING", "s", "g", "-", "+", "10")}
    assert rows[b"1-0"][1:] == [b"", -1, 2]
    assert rows[b"2-0"][1:] == [b"", -1, 3]
    assert rows[b"3-0"][1:] == [b"", -1, 9223372036854775807]
    assert rows[b"4-0"][1] == b"a"
    assert call("XPENDING", "s", "g") == [4, b"1-0", b"4-0", [[b"a", b"1"]]]
    # History reads of the old owner no longer include them.
    assert [e[0] for e in call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", "0")[0][1]] \
        == [b"4-0"]
    # CLAIM serves the NACK zone first, in NACK order.
    reply = call("XREADGROUP", "GROUP", "g", "b", "COUNT", "2", "CLAIM", "3600000",
                 "STREAMS", "s", ">")
    assert [e[0] for e in reply[0][1]] == [b"1-0", b"2-0"]


@pytest.mark.min_redis("8.8")
def test_xnack_force_retrycount_and_errors(r, call):
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert call("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0") == 0  # not pending
    assert call("XNACK", "s", "g", "FAIL", "FORCE", "IDS", "2", "1-0", "9-0") == 1
    assert call("XNACK", "s", "g", "FAIL", "IDS", "2", "1-0", "1-0", "RETRYCOUNT", "4") == 2
    assert call("XPENDING", "s", "g", "-", "+", "10") == [[b"1-0", b"", -1, 4]]
    assert err(call, "XNACK", "s", "g", "MAYBE", "IDS", "1", "1-0") == \
        "mode must be SILENT, FAIL, or FATAL"
    assert err(call, "XNACK", "s", "g", "FAIL", "FORCE", "RETRYCOUNT", "1") == \
        "syntax error, expected IDS keyword"
    assert err(call, "XNACK", "s", "g", "FAIL", "IDS", "0", "1-0").startswith(
        "numids must be a positive integer")
    assert err(call, "XNACK", "s", "g", "FAIL", "IDS", "3", "1-0", "2-0") == \
        "number of IDs doesn't match numids"
    assert err(call, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "2-0") == \
        "Unrecognized XNACK option '2-0'"
    assert err(call, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "-1") == \
        "Invalid RETRYCOUNT value, must be >= 0"
    assert err(call, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "x") == \
        "value is not an integer or out of range"
    assert err(call, "XNACK", "s", "g", "FAIL", "IDS", "1", "bad") == \
        "Invalid stream ID specified as stream command argument"
    assert err(call, "XNACK", "s", "nog", "FAIL", "IDS", "1", "1-0").startswith("NOGROUP")


@pytest.mark.min_redis("8.8")
def test_xnack_in_xinfo_full(r, call):
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XNACK", "s", "g", "FAIL", "IDS", "1", "2-0")
    g = dict(zip(*[iter(_full_groups(call)[0])] * 2))
    assert g[b"nacked-count"] == 1
    assert g[b"pending"][1][:3] == [b"2-0", b"", 0]
    assert call("XACK", "s", "g", "2-0") == 1


# --- RESP3 shapes ---------------------------------------------------------------------------

def test_resp3_shapes_of_pel_commands(r, wire):
    fill(r, n=2)
    wire("XGROUP", "CREATE", "s", "g", "0")
    wire("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    # XPENDING extended: arrays of 4 (integers for idle and count) in both protocols.
    reply = wire.resp3("XPENDING", "s", "g", "-", "+", "1")
    assert reply.startswith(b"*1\r\n*4\r\n$3\r\n1-0\r\n$1\r\nc\r\n:") and reply.endswith(b":1\r\n")
    assert wire.resp3("XPENDING", "s", "g") == (
        b"*4\r\n:2\r\n$3\r\n1-0\r\n$3\r\n2-0\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n2\r\n")
    # XCLAIM: entries are arrays, never maps.
    assert wire.resp3("XCLAIM", "s", "g", "d", "0", "1-0") == \
        b"*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n"
    assert wire.resp3("XCLAIM", "s", "g", "d", "0", "1-0", "JUSTID") == b"*1\r\n$3\r\n1-0\r\n"
    assert wire.resp3("XAUTOCLAIM", "s", "g", "d", "0", "0", "JUSTID") == \
        b"*3\r\n$3\r\n0-0\r\n*2\r\n$3\r\n1-0\r\n$3\r\n2-0\r\n*0\r\n"
    assert wire("XAUTOCLAIM", "s", "g", "d", "0", "0", "JUSTID") == \
        b"*3\r\n$3\r\n0-0\r\n*2\r\n$3\r\n1-0\r\n$3\r\n2-0\r\n*0\r\n"
    assert wire.resp3("XACK", "s", "g", "1-0") == b":1\r\n"
    assert wire.resp3("XGROUP", "CREATECONSUMER", "s", "g", "e") == b":1\r\n"
    assert wire.resp3("XGROUP", "SETID", "s", "g", "0") == b"+OK\r\n"


def test_resp3_xinfo_maps(r, call):
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    groups = call.resp3("XINFO", "GROUPS", "s")
    assert isinstance(groups, list) and isinstance(groups[0], dict)
    assert list(groups[0]) == [b"name", b"consumers", b"pending", b"last-delivered-id",
                               b"entries-read", b"lag"]
    cons = call.resp3("XINFO", "CONSUMERS", "s", "g")
    assert isinstance(cons[0], dict) and cons[0][b"name"] == b"c"
    full = call.resp3("XINFO", "STREAM", "s", "FULL")
    g = full[b"groups"][0]
    assert isinstance(g, dict) and g[b"pel-count"] == 1
    assert isinstance(g[b"consumers"][0], dict) and g[b"consumers"][0][b"pel-count"] == 1
    assert g[b"pending"][0][:2] == [b"1-0", b"c"]


def test_resp3_xreadgroup_history_with_deleted_entry(r, wire):
    fill(r, n=1)
    wire("XGROUP", "CREATE", "s", "g", "0")
    wire("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    r.xdel("s", "1-0")
    assert wire.resp3("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0") == \
        b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n_\r\n"


def test_resp3_nulls_of_empty_streams_and_groups(r, wire):
    """RESP3 nulls are ``_`` wherever Redis has nothing to give: NOMKSTREAM on a missing
    key, XREAD with no data, the summary XPENDING of an empty PEL, a never-read group's
    entries-read and the first/last entry of an emptied stream."""
    assert wire.resp3("XADD", "s", "NOMKSTREAM", "*", "a", "1") == b"_\r\n"
    assert wire.resp3("XREAD", "STREAMS", "s", "0") == b"_\r\n"
    wire("XADD", "s", "1-1", "a", "1")
    wire("XGROUP", "CREATE", "s", "g", "$")
    assert wire.resp3("XPENDING", "s", "g") == b"*4\r\n:0\r\n_\r\n_\r\n_\r\n"
    assert wire.resp3("XDEL", "s", "1-1") == b":1\r\n"
    assert wire.resp3("XINFO", "GROUPS", "s") == (
        b"*1\r\n%6\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:0\r\n"
        b"$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n1-1\r\n"
        b"$12\r\nentries-read\r\n_\r\n$3\r\nlag\r\n:0\r\n")
    info = wire.resp3("XINFO", "STREAM", "s")
    assert info.startswith(b"%") and info.endswith(
        b"$6\r\ngroups\r\n:1\r\n$11\r\nfirst-entry\r\n_\r\n$10\r\nlast-entry\r\n_\r\n")
    assert wire("XINFO", "STREAM", "s").endswith(
        b"$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n")


# --- more CLAIM-read behaviour (8.4) ------------------------------------------------------------

@pytest.mark.min_redis("8.4")
def test_claim_read_skips_deleted_entries_and_ignores_noack(r, call):
    fill(r, n=3)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    r.xdel("s", "2-0")
    reply = call("XREADGROUP", "GROUP", "g", "b", "NOACK", "CLAIM", "0", "STREAMS", "s", ">")
    assert [e[0] for e in reply[0][1]] == [b"1-0", b"3-0"]
    rows = {row[0]: row for row in call("XPENDING", "s", "g", "-", "+", "10")}
    assert rows[b"1-0"][1] == b"b" and rows[b"3-0"][1] == b"b"  # claimed despite NOACK
    assert rows[b"2-0"][1] == b"a"  # the deleted one stays where it was


@pytest.mark.min_redis("8.4")
def test_claim_read_order_is_longest_idle_first_and_count_applies(r, call, wire):
    fill(r, n=3)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XCLAIM", "s", "g", "a", "0", "3-0", "IDLE", "9000", "JUSTID")
    call("XCLAIM", "s", "g", "a", "0", "1-0", "IDLE", "5000", "JUSTID")
    reply = call("XREADGROUP", "GROUP", "g", "a", "COUNT", "2", "CLAIM", "1000",
                 "STREAMS", "s", ">")
    assert [e[0] for e in reply[0][1]] == [b"3-0", b"1-0"]
    # Nothing idle enough and nothing new: null, as without CLAIM.
    assert wire("XREADGROUP", "GROUP", "g", "a", "CLAIM", "1000", "STREAMS", "s", ">") == \
        b"*-1\r\n"
    # History reads ignore CLAIM: plain 2-element entries.
    hist = call("XREADGROUP", "GROUP", "g", "a", "CLAIM", "0", "STREAMS", "s", "0")
    assert all(len(e) == 2 for e in hist[0][1])


@pytest.mark.min_redis("8.4")
def test_claim_read_resp3_shape(r, wire):
    fill(r, n=1)
    wire("XGROUP", "CREATE", "s", "g", "0")
    assert wire.resp3("XREADGROUP", "GROUP", "g", "c", "CLAIM", "0", "STREAMS", "s", ">") == \
        b"%1\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n:0\r\n:0\r\n"


# --- writes as WATCH sees them --------------------------------------------------------------

# Redis 7.0 touched WATCH for none of these (no signalModifiedKey in the group commands);
# the reference (§8) says 8.x does for all of them. The version of the change is unpinned.
@pytest.mark.min_redis("8.0")
def test_group_writes_invalidate_watch(r, make_client):
    fill(r)
    r.xgroup_create("s", "g", "0")
    other = make_client()
    for write in (lambda: other.xreadgroup("g", "c", {"s": ">"}, count=1),
                  lambda: other.xack("s", "g", "1-0"),
                  lambda: other.xgroup_createconsumer("s", "g", "new"),
                  lambda: other.xclaim("s", "g", "z", 0, ["2-0"])):
        p = r.pipeline(transaction=True)
        p.watch("s")
        write()
        p.multi()
        p.xlen("s")
        with pytest.raises(redis.WatchError):
            p.execute()
        p.reset()


@pytest.mark.min_redis("8.8")
def test_copy_keeps_pel_and_nack_state(r, call):
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    call("XNACK", "s", "g", "FAIL", "IDS", "1", "2-0")
    assert call("COPY", "s", "s2") == 1
    def rows(k):  # idle times may differ by a millisecond between the two calls
        return [(row[0], row[1], row[3], row[2] == -1)
                for row in call("XPENDING", k, "g", "-", "+", "10")]

    assert rows("s2") == rows("s") == [(b"1-0", b"c", 1, False), (b"2-0", b"", 1, True)]
    call("XACK", "s2", "g", "1-0")
    assert call("XPENDING", "s", "g")[0] == 2  # the copy is independent


@pytest.mark.min_redis("8.8")
def test_fatal_count_delivered_again_wraps_like_an_unsigned_counter(r, call):
    # Inferred from Redis's uint64 delivery_count printed with addReplyLongLong.
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XNACK", "s", "g", "FATAL", "IDS", "1", "1-0")
    assert call("XAUTOCLAIM", "s", "g", "b", "0", "0", "JUSTID") == [b"0-0", [b"1-0"], []]
    assert call("XPENDING", "s", "g", "-", "+", "1")[0][3] == 9223372036854775807
    call("XCLAIM", "s", "g", "b", "0", "1-0", "JUSTID")
    assert call("XPENDING", "s", "g", "-", "+", "1")[0][3] == 9223372036854775807
    call("XCLAIM", "s", "g", "b", "0", "1-0")
    assert call("XPENDING", "s", "g", "-", "+", "1")[0][3] == -9223372036854775808


# --- deletion strategies reaching the group hooks (§4.6, §7.3) ------------------------------

@pytest.mark.min_redis("8.2")
def test_xtrim_acked_keeps_referenced_entries(r, call):
    call("CONFIG", "SET", "stream-node-max-entries", "2")
    fill(r, n=5)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    call("XACK", "s", "g", "1-0", "2-0", "4-0")
    assert call("XTRIM", "s", "MINID", "~", "6-0", "ACKED") == 3
    assert [e[0] for e in call("XRANGE", "s", "-", "+")] == [b"3-0", b"5-0"]


@pytest.mark.min_redis("8.2")
def test_xdelex_acked_and_delref_use_group_references(r, call):
    fill(r, n=4)
    call("XGROUP", "CREATE", "s", "g1", "0")
    call("XGROUP", "CREATE", "s", "g2", "2-0")
    call("XREADGROUP", "GROUP", "g1", "c", "COUNT", "2", "STREAMS", "s", ">")
    # 1-0: pending in g1; 3-0: g1 has not read it; 9-0: nobody has read that far.
    assert call("XDELEX", "s", "ACKED", "IDS", "3", "1-0", "3-0", "9-0") == [2, 2, 2]
    call("XACK", "s", "g1", "1-0")
    assert call("XDELEX", "s", "ACKED", "IDS", "1", "1-0") == [1]
    assert call("XDELEX", "s", "DELREF", "IDS", "1", "2-0") == [1]
    assert call("XPENDING", "s", "g1")[0] == 0


@pytest.mark.min_redis("8.2")
def test_xdelex_delref_clears_references_to_an_entry_already_gone(r, call):
    # XDEL keeps the PEL references; a later DELREF of the same ID finds no entry (-1) but
    # still removes the references from every group.
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert call("XDEL", "s", "1-0") == 1
    assert call("XPENDING", "s", "g")[0] == 2
    assert call("XDELEX", "s", "DELREF", "IDS", "1", "1-0") == [-1]
    assert call("XPENDING", "s", "g") == [1, b"2-0", b"2-0", [[b"c", b"1"]]]


def _dirty_table(r, call, requests) -> list:
    """``(argv, n)`` for each request, n being what it added to the dirty counter; a
    request that fails still gets its row."""
    out = []
    for argv in requests:
        before = dirty(r)
        try:
            call(*argv)
        except redis.ResponseError:
            pass
        out.append((argv, dirty(r) - before))
    return out


# Each write counts once per entry it changes, except that an XREADGROUP counts once per
# stream it serves. XCLAIM's LASTID is a change of its own only when no entry is claimed
# or dropped: Redis carries the new last ID inside the per-entry changes otherwise.
_GROUP_DIRTY_CASES = [
    (("XGROUP", "CREATE", "s", "g", "0"), 1), (("XGROUP", "CREATE", "s", "g", "0"), 0),
    (("XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"), 1),
    (("XGROUP", "CREATE", "nokey", "g", "bad", "MKSTREAM"), 0),
    (("XGROUP", "CREATECONSUMER", "s", "g", "a"), 1),
    (("XGROUP", "CREATECONSUMER", "s", "g", "a"), 0),
    (("XGROUP", "CREATECONSUMER", "new", "g", "a"), 1),
    (("XREADGROUP", "GROUP", "g", "a", "COUNT", "2", "STREAMS", "s", ">"), 1),
    (("XREADGROUP", "GROUP", "g", "a", "NOACK", "COUNT", "1", "STREAMS", "s", ">"), 1),
    (("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", "new", ">", ">"), 1),
    (("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">"), 0),
    (("XACK", "s", "g", "1-0", "2-0", "9-0"), 2), (("XACK", "s", "g", "1-0"), 0),
    (("XCLAIM", "s", "g", "a", "0", "4-0"), 1),
    (("XCLAIM", "s", "g", "a", "0", "4-0", "9-0", "LASTID", "9-0"), 1),
    (("XCLAIM", "s", "g", "a", "0", "9-0", "LASTID", "10-0"), 1),
    (("XCLAIM", "s", "g", "a", "0", "9-0", "LASTID", "10-0"), 0),
    (("XCLAIM", "s", "g", "a", "0", "9-0", "LASTID", "5-0"), 0),
    (("XCLAIM", "s", "g", "a", "0", "4-0", "FORCE", "JUSTID"), 1),
    (("XCLAIM", "s", "g", "a", "0", "3-0", "4-0", "FORCE", "JUSTID"), 2),
    (("XAUTOCLAIM", "s", "g", "a", "0", "0"), 2),
    (("XAUTOCLAIM", "s", "g", "a", "3600000", "0"), 0),
    (("XDEL", "s", "3-0", "4-0"), 2),
    (("XCLAIM", "s", "g", "a", "0", "3-0", "LASTID", "11-0"), 1),
    (("XAUTOCLAIM", "s", "g", "a", "0", "0"), 1),
    (("XGROUP", "SETID", "s", "g", "0"), 1),
    (("XGROUP", "DELCONSUMER", "s", "g", "a"), 1),
    (("XGROUP", "DELCONSUMER", "s", "g", "a"), 0),
    (("XGROUP", "DESTROY", "s", "g"), 1), (("XGROUP", "DESTROY", "s", "g"), 0),
]


def test_dirty_counter_per_group_command(r, call):
    fill(r, n=4)
    assert _dirty_table(r, call, [argv for argv, _ in _GROUP_DIRTY_CASES]) == _GROUP_DIRTY_CASES


# Since 7.4 a history read is no write (7.0 counted one), and XREADGROUP, XCLAIM and
# XAUTOCLAIM create their consumer (one change) even when they deliver nothing.
_CONSUMER_DIRTY_CASES = [
    (("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">"), 2),
    (("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", "0"), 0),
    (("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", "0"), 1),
    (("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"), 1),
    (("XREADGROUP", "GROUP", "g", "d", "NOACK", "STREAMS", "s", ">"), 1),
    (("XCLAIM", "s", "g", "e", "3600000", "1-0"), 1),
    (("XAUTOCLAIM", "s", "g", "f", "3600000", "0"), 1),
    (("XCLAIM", "s", "g", "h", "0", "1-0"), 2),
]


@pytest.mark.min_redis("7.4")
def test_dirty_counter_counts_consumer_creation_not_history_reads(r, call):
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert _dirty_table(r, call, [argv for argv, _ in _CONSUMER_DIRTY_CASES]) == \
        _CONSUMER_DIRTY_CASES


def test_dirty_counter_counts_group_writes(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XGROUP", "CREATECONSUMER", "s", "g", "c")
    before = dirty(r)
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")  # 3 entries, one change
    assert dirty(r) == before + 1
    before = dirty(r)
    call("XACK", "s", "g", "1-0", "2-0")
    assert dirty(r) == before + 2


@pytest.mark.min_redis("8.4")
def test_claim_read_after_setid_back_returns_ids_twice(r, call):
    # Claimed pending entries first, then the same IDs again as new deliveries (count
    # reset to 1), and the PEL still holds each ID once.
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XGROUP", "SETID", "s", "g", "0")
    reply = call("XREADGROUP", "GROUP", "g", "b", "CLAIM", "0", "STREAMS", "s", ">")
    assert [(e[0], e[3]) for e in reply[0][1]] == \
        [(b"1-0", 1), (b"2-0", 1), (b"1-0", 0), (b"2-0", 0)]
    rows = call("XPENDING", "s", "g", "-", "+", "10")
    assert [(row[0], row[1], row[3]) for row in rows] == [(b"1-0", b"b", 1), (b"2-0", b"b", 1)]


@pytest.mark.min_redis("8.8")
def test_renack_moves_entry_to_the_end_of_the_nack_zone(r, call):
    fill(r, n=3)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XNACK", "s", "g", "FAIL", "IDS", "3", "1-0", "2-0", "3-0")
    call("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0")
    order = []
    for _ in range(3):
        reply = call("XREADGROUP", "GROUP", "g", "b", "COUNT", "1", "CLAIM", "3600000",
                     "STREAMS", "s", ">")
        order.append(reply[0][1][0][0])
    assert order == [b"2-0", b"3-0", b"1-0"]
    g = dict(zip(*[iter(_full_groups(call)[0])] * 2))
    assert g[b"nacked-count"] == 0 and g[b"pel-count"] == 3
