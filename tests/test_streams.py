"""Stream commands without groups, through the server: XADD, XRANGE, XREVRANGE, XLEN, XDEL,
XDELEX, XTRIM, XSETID, XREAD (non-blocking; blocking is in test_stream_blocking.py),
XINFO STREAM / HELP, COMMAND DOCS.

Every test also runs against a real Redis (``--redis-url``); behaviour newer than the
target is marked ``min_redis``. Error texts and reply shapes are checked on the wire
(``wire``/``werr``), because parsed replies hide the RESP2/RESP3 null kinds and the
``ERR`` prefix."""

from __future__ import annotations

import pytest
import redis

from tests.conftest import dirty

MAXID = "18446744073709551615-18446744073709551615"
INVALID_ID = "ERR Invalid stream ID specified as stream command argument"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NULL2, NULL3 = b"*-1\r\n", b"_\r\n"


@pytest.fixture
def werr(wire):
    """werr(*args) -> the error line's text exactly as sent (without '-' and CRLF)."""
    def do(*args):
        reply = wire(*args)
        assert reply[:1] == b"-", reply
        return reply[1:-2].decode()
    return do


def xadd(call, key, sid, *fields):
    return call("XADD", key, sid, *(fields or ("f", "v")))


def ids(call, key="s", start="-", end="+", *extra):
    return [e[0] for e in call("XRANGE", key, start, end, *extra)]


def fill(call, key="s", n=3, start=1):
    for i in range(start, start + n):
        call("XADD", key, f"{i}-0", "f", f"v{i}")


def info(call, key="s", *extra):
    flat = call("XINFO", "STREAM", key, *extra)
    return dict(zip(flat[0::2], flat[1::2]))


def node_config(r, entries):
    r.config_set("stream-node-max-entries", entries)


# --- XADD: IDs ---------------------------------------------------------------------------

def test_xadd_auto_id_and_reply_is_bulk(wire, call):
    reply = wire("XADD", "s", "*", "f", "v")
    assert reply.startswith(b"$")
    sid = reply.split(b"\r\n")[1]
    ms, seq = sid.split(b"-")
    assert int(ms) > 1_600_000_000_000 and seq == b"0"
    assert call("XLEN", "s") == 1


def test_xadd_explicit_ids_must_grow(call, werr):
    assert xadd(call, "s", "5-5") == b"5-5"
    assert xadd(call, "s", "5-6") == b"5-6"
    assert werr("XADD", "s", "5-6", "f", "v") == \
        "ERR The ID specified in XADD is equal or smaller than the target stream top item"
    assert werr("XADD", "s", "5", "f", "v") == \
        "ERR The ID specified in XADD is equal or smaller than the target stream top item"
    assert xadd(call, "s", "6") == b"6-0"


def test_xadd_ms_star_sequence(call, werr):
    assert xadd(call, "s", "5-*") == b"5-0"
    assert xadd(call, "s", "5-*") == b"5-1"
    assert xadd(call, "s", "7-*") == b"7-0"
    assert werr("XADD", "s", "6-*", "f", "v").startswith("ERR The ID specified in XADD is")
    assert xadd(call, "t", "0-*") == b"0-1"


@pytest.mark.min_redis("7.2")
def test_xadd_ms_star_at_max_sequence(call, werr):
    # Redis 7.0 replies "Elements are too large to be stored" here (wrong errno)
    xadd(call, "s", "1-18446744073709551615")
    assert werr("XADD", "s", "1-*", "f", "v") == \
        "ERR The ID specified in XADD is equal or smaller than the target stream top item"
    assert xadd(call, "s", "*")  # the clock is far ahead of ms 1


def test_xadd_zero_id_refused_before_key_creation(call, werr):
    for sid in ("0-0", "0"):
        assert werr("XADD", "s", sid, "f", "v") == \
            "ERR The ID specified in XADD must be greater than 0-0"
    assert call("EXISTS", "s") == 0


def test_xadd_after_deleting_top_still_needs_bigger_id(call, werr):
    xadd(call, "s", "666")
    call("XDEL", "s", "666")
    for sid in ("665", "666"):
        assert werr("XADD", "s", sid, "f", "v").startswith(
            "ERR The ID specified in XADD is equal or smaller")
    assert call("XLEN", "s") == 0


def test_xadd_exhausted_stream(call, werr):
    xadd(call, "s", MAXID)
    assert werr("XADD", "s", "*", "f", "v") == \
        "ERR The stream has exhausted the last possible ID, unable to add more items"
    assert werr("XADD", "s", MAXID, "f", "v") == \
        "ERR The stream has exhausted the last possible ID, unable to add more items"


@pytest.mark.parametrize("bad", ["-", "+", "1-", "-1", "--", "a-1", "1-b", "*-1",
                                 "18446744073709551616-0", "1-18446744073709551616",
                                 "x" * 128])
def test_xadd_invalid_ids(werr, bad):
    assert werr("XADD", "s", bad, "f", "v") == INVALID_ID


def test_xadd_lenient_number_forms(call):
    # the strtoull fallback of Redis's ID parser: leading zeros and '+'
    assert xadd(call, "s", "007-01") == b"7-1"
    assert xadd(call, "s", "+8-1") == b"8-1"


@pytest.mark.parametrize("bad", ["1--1", "-1", "1--9223372036854775808", "-5-0"])
def test_negative_id_parts_are_invalid(call, werr, bad):
    # string2ll reads these, and a negative value is out of range (no strtoull fallback)
    xadd(call, "s", "1-1")
    for cmd in (("XRANGE", "s", bad, "+"), ("XDEL", "s", bad), ("XTRIM", "s", "MINID", bad),
                ("XREAD", "STREAMS", "s", bad)):
        assert werr(*cmd) == INVALID_ID, cmd


def test_negative_id_parts_only_strtoull_reads_are_accepted(call):
    # "-0", "-01" and numbers below INT64_MIN fail string2ll; strtoull then wraps them
    xadd(call, "s", "5-0")
    assert call("XRANGE", "s", "-", "5--0") == [[b"5-0", [b"f", b"v"]]]
    assert call("XRANGE", "s", "5--01", "+") == []
    assert call("XRANGE", "s", "5-0", "5--9223372036854775809") == [[b"5-0", [b"f", b"v"]]]


def test_entries_added_wraps_past_int64_max(call):
    # Redis's counter is a signed 64-bit integer: one XADD past the maximum wraps it.
    xadd(call, "s", "1-1")
    assert call("XSETID", "s", "2-0", "ENTRIESADDED", str(2**63 - 1)) == b"OK"
    xadd(call, "s", "3-0")
    info = call("XINFO", "STREAM", "s")
    assert info[info.index(b"entries-added") + 1] == -2**63


def test_xadd_same_ms_in_multi_gets_consecutive_seqs(r, call):
    p = r.pipeline(transaction=True)
    for _ in range(3):
        p.execute_command("XADD", "s", "*", "f", "v")
    out = p.execute()
    ms = {x.split(b"-")[0] for x in out}
    assert len(ms) == 1
    assert [x.split(b"-")[1] for x in out] == [b"0", b"1", b"2"]


def test_xadd_keeps_field_order_and_duplicates(call):
    xadd(call, "s", "1", "b", "1", "a", "2", "b", "3")
    assert call("XRANGE", "s", "-", "+") == [[b"1-0", [b"b", b"1", b"a", b"2", b"b", b"3"]]]


# --- XADD: arguments ---------------------------------------------------------------------

@pytest.mark.parametrize("args", [("*", "f"), ("*", "f", "v", "g"), ("NOMKSTREAM",),
                                  ("MAXLEN", "5", "NOMKSTREAM")])
def test_xadd_field_count_is_an_arity_error(werr, args):
    assert werr("XADD", "s", *args) == "ERR wrong number of arguments for 'xadd' command"


def test_xadd_arity(werr):
    assert werr("XADD", "s", "*", ) == "ERR wrong number of arguments for 'xadd' command"


def test_xadd_unknown_option_is_parsed_as_id(werr):
    assert werr("XADD", "s", "FOO", "*", "f", "v") == INVALID_ID
    assert werr("XADD", "s", "MAXLEN", "5", "f", "v") == INVALID_ID


def test_xadd_nomkstream(wire, call):
    assert wire("XADD", "s", "NOMKSTREAM", "*", "f", "v") == b"$-1\r\n"
    assert wire.resp3("XADD", "s", "NOMKSTREAM", "*", "f", "v") == b"_\r\n"
    assert call("EXISTS", "s") == 0
    xadd(call, "s", "1")
    assert call("XADD", "s", "nomkstream", "NOMKSTREAM", "2", "f", "v") == b"2-0"


def test_xadd_trim_option_errors(werr):
    assert werr("XADD", "s", "MAXLEN", "-1", "*", "f", "v") == \
        "ERR The MAXLEN argument must be >= 0."
    assert werr("XADD", "s", "MAXLEN", "x", "*", "f", "v") == \
        "ERR value is not an integer or out of range"
    assert werr("XADD", "s", "MAXLEN", "~", "+1", "*", "f", "v") == \
        "ERR value is not an integer or out of range"
    assert werr("XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v") == \
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
    assert werr("XADD", "s", "MINID", "0", "MAXLEN", "1", "*", "f", "v") == \
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
    assert werr("XADD", "s", "LIMIT", "1", "*", "f", "v") == \
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
    assert werr("XADD", "s", "MAXLEN", "1", "LIMIT", "5", "*", "f", "v") == \
        "ERR syntax error, LIMIT cannot be used without the special ~ option"
    assert werr("XADD", "s", "MAXLEN", "=", "1", "LIMIT", "5", "*", "f", "v") == \
        "ERR syntax error, LIMIT cannot be used without the special ~ option"
    assert werr("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "-1", "*", "f", "v") == \
        "ERR The LIMIT argument must be >= 0."
    assert werr("XADD", "s", "MINID", "-", "*", "f", "v") == INVALID_ID
    assert werr("XADD", "s", "MINID", "+", "*", "f", "v") == INVALID_ID


def test_xadd_limit_zero_without_strategy(werr):
    # LIMIT 0 slips past the "without a strategy" check and hits the "~" one
    assert werr("XADD", "s", "LIMIT", "0", "*", "f", "v") == \
        "ERR syntax error, LIMIT cannot be used without the special ~ option"


def test_xadd_maxlen_0_leaves_empty_stream(call):
    sid = call("XADD", "s", "MAXLEN", "0", "*", "a", "b")
    assert call("XLEN", "s") == 0
    assert call("EXISTS", "s") == 1
    assert call("TYPE", "s") == b"stream"
    i = info(call)
    assert i[b"entries-added"] == 1
    assert i[b"last-generated-id"] == sid
    assert i[b"recorded-first-entry-id"] == b"0-0"
    assert i[b"max-deleted-entry-id"] == b"0-0"  # trimming is not deletion


def test_xadd_maxlen_exact_and_minid(call):
    fill(call, n=5)
    call("XADD", "s", "maxlen", "=", "3", "6", "f", "v")
    assert ids(call) == [b"4-0", b"5-0", b"6-0"]
    call("XADD", "s", "MINID", "6", "7", "f", "v")
    assert ids(call) == [b"6-0", b"7-0"]


def test_xadd_maxlen_approx_555_leaves_600(r, call):
    node_config(r, 100)
    p = r.pipeline(transaction=False)
    for _ in range(1000):
        p.execute_command("XADD", "s", "MAXLEN", "~", "555", "*", "xitem", "v")
    p.execute()
    assert call("XLEN", "s") == 600


def test_xadd_maxlen_approx_with_limit(r, call):
    node_config(r, 10)
    fill(call, n=100)
    call("XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "*", "xitem", "v")
    assert call("XLEN", "s") == 71
    call("XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "*", "xitem", "v")
    assert call("XLEN", "s") == 62


def test_xadd_maxlen_approx_0_limit_1(r, call):
    node_config(r, 100)
    fill(call, n=3)
    call("XADD", "s", "MAXLEN", "~", "0", "LIMIT", "1", "*", "f", "v")
    assert call("XLEN", "s") == 4


def test_xadd_wrongtype(call, werr):
    call("SET", "str", "x")
    assert werr("XADD", "str", "*", "f", "v") == WRONGTYPE


@pytest.mark.min_redis("8.2")
def test_xadd_deletion_strategies_parse(call, werr):
    assert call("XADD", "s", "KEEPREF", "*", "f", "v")
    assert call("XADD", "s", "delref", "MAXLEN", "5", "*", "f", "v")
    assert call("XADD", "s", "ACKED", "*", "f", "v")
    # a second strategy word is not an option any more: it is read as the ID
    assert werr("XADD", "s", "KEEPREF", "DELREF", "*", "f", "v") == INVALID_ID


@pytest.mark.min_redis("8.6")
def test_xadd_idmp_parse_errors(werr, call):
    assert werr("XADD", "s", "IDMP", "p", "i", "IDMPAUTO", "p", "*", "f", "v") == \
        "ERR syntax error, IDMP/IDMPAUTO specified multiple times"
    assert werr("XADD", "s", "IDMPAUTO", "p", "IDMP", "p", "i", "*", "f", "v") == \
        "ERR syntax error, IDMP/IDMPAUTO specified multiple times"
    assert werr("XADD", "s", "IDMP", "", "i", "*", "f", "v") == \
        "ERR syntax error, IDMP requires a non-empty producer ID"
    assert werr("XADD", "s", "IDMP", "p", "", "*", "f", "v") == \
        "ERR syntax error, IDMP requires a non-empty idempotent ID"
    assert werr("XADD", "s", "IDMPAUTO", "", "*", "f", "v") == \
        "ERR syntax error, IDMPAUTO requires a non-empty producer ID"
    assert werr("XADD", "s", "IDMP", "p", "i", "1-1", "f", "v") == \
        "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"
    assert werr("XADD", "s", "IDMP", "p", "i", "5-*", "f", "v") == \
        "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"
    # IDMP takes two arguments: here `*` becomes the iid and `f` the (invalid) ID
    assert werr("XADD", "s", "IDMP", "p1", "*", "f", "v") == INVALID_ID
    assert call("EXISTS", "s") == 0


@pytest.mark.min_redis("8.6")
def test_xadd_idmp_duplicate_returns_original_id(call, wire):
    first = call("XADD", "s", "IDMP", "p", "i1", "*", "f", "v")
    assert call("XADD", "s", "IDMP", "p", "i1", "*", "other", "x") == first
    assert call("XADD", "s", "IDMP", "q", "i1", "*", "f", "v") != first
    assert call("XLEN", "s") == 2
    auto = call("XADD", "s", "IDMPAUTO", "p", "*", "a", "1", "b", "2")
    assert call("XADD", "s", "IDMPAUTO", "p", "*", "b", "2", "a", "1") == auto
    i = info(call)
    assert (i[b"entries-added"], i[b"pids-tracked"], i[b"iids-tracked"]) == (3, 2, 3)
    assert (i[b"iids-added"], i[b"iids-duplicates"]) == (3, 2)
    call("XDEL", "s", first)
    assert call("XADD", "s", "IDMP", "p", "i1", "*", "f", "v") == first  # by design


@pytest.mark.min_redis("8.6")
def test_xadd_idmp_duplicate_does_not_trim(call):
    fill(call, n=5)
    call("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    call("XADD", "s", "IDMP", "p", "i", "MAXLEN", "1", "*", "f", "v")
    assert call("XLEN", "s") == 6


# --- XRANGE / XREVRANGE ------------------------------------------------------------------

def test_xrange_basic_and_count(call):
    fill(call, n=5)
    assert call("XRANGE", "s", "-", "+", "COUNT", "2") == \
        [[b"1-0", [b"f", b"v1"]], [b"2-0", [b"f", b"v2"]]]
    assert ids(call, "s", "2", "4") == [b"2-0", b"3-0", b"4-0"]
    assert [e[0] for e in call("XREVRANGE", "s", "+", "-", "COUNT", "2")] == [b"5-0", b"4-0"]
    assert [e[0] for e in call("XREVRANGE", "s", "4", "2")] == [b"4-0", b"3-0", b"2-0"]
    assert ids(call, "s", "4", "2") == []
    assert call("XREVRANGE", "s", "2", "4") == []


def test_xrange_count_repeats_last_wins(call):
    fill(call, n=5)
    assert len(call("XRANGE", "s", "-", "+", "COUNT", "1", "count", "3")) == 3


def test_xrange_count_zero_or_negative_is_null_array(wire, call):
    fill(call, n=2)
    for n in ("0", "-5"):
        assert wire("XRANGE", "s", "-", "+", "COUNT", n) == NULL2
        assert wire.resp3("XRANGE", "s", "-", "+", "COUNT", n) == NULL3
        assert wire("XREVRANGE", "s", "+", "-", "COUNT", n) == NULL2


def test_xrange_missing_key_is_empty_array_after_argument_checks(wire, werr):
    assert wire("XRANGE", "nokey", "-", "+") == b"*0\r\n"
    assert wire("XRANGE", "nokey", "-", "+", "COUNT", "0") == b"*0\r\n"
    assert wire.resp3("XREVRANGE", "nokey", "+", "-") == b"*0\r\n"
    assert werr("XRANGE", "nokey", "x", "+") == INVALID_ID
    assert werr("XRANGE", "nokey", "-", "+", "LIMIT", "1") == "ERR syntax error"


def test_xrange_syntax(werr, call):
    fill(call)
    assert werr("XRANGE", "s", "-", "+", "COUNT") == "ERR syntax error"
    assert werr("XRANGE", "s", "-", "+", "COUNT", "x") == \
        "ERR value is not an integer or out of range"
    assert werr("XRANGE", "s", "-") == "ERR wrong number of arguments for 'xrange' command"


def test_xrange_incomplete_ids(call):
    for seq in (0, 1, 2):
        call("XADD", "s", f"5-{seq}", "f", "v")
    call("XADD", "s", "6-0", "f", "v")
    assert ids(call, "s", "5", "5") == [b"5-0", b"5-1", b"5-2"]
    assert [e[0] for e in call("XREVRANGE", "s", "5", "5")] == [b"5-2", b"5-1", b"5-0"]


def test_xrange_exclusive_bounds(call, werr):
    fill(call, n=4)
    assert ids(call, "s", "(1-0", "(4-0") == [b"2-0", b"3-0"]
    assert [e[0] for e in call("XREVRANGE", "s", "(4-0", "(1")] == [b"3-0", b"2-0"]
    # an incomplete exclusive end means 4-18446744073709551615, so 4-0 stays in
    assert [e[0] for e in call("XREVRANGE", "s", "(4", "(1")] == [b"4-0", b"3-0", b"2-0"]
    assert ids(call, "s", "(1", "+") == [b"2-0", b"3-0", b"4-0"]
    # `(5` as an end excludes only 5-18446744073709551615
    call("XADD", "s", "5-3", "f", "v")
    assert ids(call, "s", "(4", "(5") == [b"5-3"]


def test_xrange_exclusive_bound_errors(werr, call):
    fill(call)
    assert werr("XRANGE", "s", "(-", "+") == INVALID_ID
    assert werr("XRANGE", "s", "-", "(+") == INVALID_ID
    assert werr("XRANGE", "s", f"({MAXID}", "+") == "ERR invalid start ID for the interval"
    assert werr("XRANGE", "s", "-", "(0-0") == "ERR invalid end ID for the interval"
    assert werr("XREVRANGE", "s", "(0-0", "-") == "ERR invalid end ID for the interval"
    # a lone "(" is an ordinary (invalid) ID
    assert werr("XRANGE", "s", "(", "+") == INVALID_ID


def test_xrevrange_validates_its_start_argument_first(werr):
    # XREVRANGE key end start: Redis parses `start` (argv[3]) before `end` (argv[2])
    assert werr("XREVRANGE", "s", "(0-0", f"({MAXID}") == "ERR invalid start ID for the interval"


def test_xrange_node_edges(r, call):
    node_config(r, 3)
    fill(call, n=10)
    for i in (4, 5, 6):
        call("XDEL", "s", f"{i}-0")
    assert ids(call, "s", "3", "7") == [b"3-0", b"7-0"]
    assert ids(call, "s", "4", "+", "COUNT", "2") == [b"7-0", b"8-0"]
    assert [e[0] for e in call("XREVRANGE", "s", "6", "-", "COUNT", "2")] == [b"3-0", b"2-0"]
    assert [e[0] for e in call("XREVRANGE", "s", "+", "(9")] == [b"10-0"]


def test_xrange_wrongtype(call, werr):
    call("SET", "str", "x")
    assert werr("XRANGE", "str", "-", "+") == WRONGTYPE
    assert werr("XREVRANGE", "str", "+", "-") == WRONGTYPE


def test_entries_are_arrays_in_resp3(wire, call):
    call("XADD", "s", "1-1", "f", "v")
    assert wire.resp3("XRANGE", "s", "-", "+") == \
        b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


# --- XLEN -----------------------------------------------------------------------------------

def test_xlen(call, werr):
    assert call("XLEN", "s") == 0
    fill(call, n=3)
    call("XDEL", "s", "2-0")
    assert call("XLEN", "s") == 2
    call("SET", "str", "x")
    assert werr("XLEN", "str") == WRONGTYPE
    assert werr("XLEN", "a", "b") == "ERR wrong number of arguments for 'xlen' command"


# --- XDEL -----------------------------------------------------------------------------------

def test_xdel_counts_only_existing(call):
    fill(call, n=5)
    assert call("XDEL", "s", "2-0", "2-0", "9-0", "3") == 2
    assert ids(call) == [b"1-0", b"4-0", b"5-0"]


def test_xdel_missing_key_before_id_validation(call, werr):
    assert call("XDEL", "nokey", "garbage") == 0
    fill(call)
    assert werr("XDEL", "s", "1-0", "garbage") == INVALID_ID
    assert werr("XDEL", "s", "-") == INVALID_ID
    assert call("XLEN", "s") == 3  # nothing deleted


def test_xdel_updates_first_and_max_deleted(call):
    fill(call, n=4)
    call("XDEL", "s", "3-0")
    i = info(call)
    assert (i[b"max-deleted-entry-id"], i[b"recorded-first-entry-id"]) == (b"3-0", b"1-0")
    call("XDEL", "s", "1-0")
    i = info(call)
    assert (i[b"max-deleted-entry-id"], i[b"recorded-first-entry-id"]) == (b"3-0", b"2-0")
    call("XDEL", "s", "2-0", "4-0")
    i = info(call)
    assert (i[b"max-deleted-entry-id"], i[b"recorded-first-entry-id"]) == (b"4-0", b"0-0")
    assert (i[b"length"], i[b"last-generated-id"]) == (0, b"4-0")
    assert call("EXISTS", "s") == 1


def test_xdel_frees_node_when_last_live_entry_goes(r, call):
    node_config(r, 2)
    fill(call, n=5)
    assert info(call)[b"radix-tree-keys"] == 3
    call("XDEL", "s", "1-0")
    assert info(call)[b"radix-tree-keys"] == 3
    call("XDEL", "s", "2-0")
    assert info(call)[b"radix-tree-keys"] == 2


def test_xdel_wrongtype(call, werr):
    call("SET", "str", "x")
    assert werr("XDEL", "str", "1") == WRONGTYPE


def test_xdel_and_xtrim_count_each_deleted_entry_as_a_change(r, call):
    fill(call, n=6)
    before = dirty(r)
    assert call("XDEL", "s", "1-0", "2-0", "3-0", "9-0") == 3
    assert dirty(r) - before == 3
    before = dirty(r)
    assert call("XTRIM", "s", "MAXLEN", "1") == 2
    assert dirty(r) - before == 2
    before = dirty(r)
    assert call("XDEL", "s", "9-0") == 0
    assert call("XTRIM", "s", "MAXLEN", "5") == 0
    assert dirty(r) == before  # nothing deleted, nothing changed


# --- XDELEX (8.2) ---------------------------------------------------------------------------

@pytest.mark.min_redis("8.2")
def test_xdelex_replies_per_id(call):
    fill(call, n=3)
    assert call("XDELEX", "s", "IDS", "3", "1-0", "1-0", "7-0") == [1, -1, -1]
    assert call("XDELEX", "s", "KEEPREF", "IDS", "1", "2") == [1]
    i = info(call)
    assert (i[b"max-deleted-entry-id"], i[b"recorded-first-entry-id"]) == (b"2-0", b"3-0")


@pytest.mark.min_redis("8.2")
def test_xdelex_missing_key_does_not_validate_ids(call):
    assert call("XDELEX", "nokey", "IDS", "2", "junk", "1") == [-1, -1]


@pytest.mark.min_redis("8.2")
def test_xdelex_errors(call, werr):
    fill(call)
    assert werr("XDELEX", "s", "IDS", "0", "1") == "ERR Number of IDs must be a positive integer"
    assert werr("XDELEX", "s", "IDS", "x", "1") == "ERR Number of IDs must be a positive integer"
    assert werr("XDELEX", "s", "IDS", "3", "1", "2") == \
        "ERR The `numids` parameter must match the number of arguments"
    assert werr("XDELEX", "s", "IDS", "1", "1", "2") == "ERR syntax error"
    assert werr("XDELEX", "s", "ACKED", "DELREF", "IDS", "1", "1") == "ERR syntax error"
    assert werr("XDELEX", "s", "KEEPREF", "FOO", "BAR") == "ERR syntax error"
    assert werr("XDELEX", "s", "KEEPREF", "KEEPREF", "x") == "ERR syntax error"
    assert werr("XDELEX", "s", "IDS", "1", "bad") == INVALID_ID
    assert werr("XDELEX", "s", "ACKED", "DELREF", "KEEPREF") == "ERR syntax error"
    assert werr("XDELEX", "s", "IDS", "1") == "ERR wrong number of arguments for 'xdelex' command"
    call("SET", "str", "x")
    # the key is looked up before the options are parsed
    assert werr("XDELEX", "str", "FOO", "BAR", "BAZ") == WRONGTYPE


@pytest.mark.min_redis("8.2")
def test_xdelex_strategies_without_groups_delete(call):
    fill(call, n=3)
    assert call("XDELEX", "s", "ACKED", "IDS", "1", "1") == [1]
    assert call("XDELEX", "s", "DELREF", "IDS", "2", "2", "9") == [1, -1]


@pytest.mark.min_redis("8.2")
def test_xdelex_acked_keeps_referenced(call):
    fill(call, n=3)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    call("XACK", "s", "g", "1-0")
    # 2-0 is pending, 3-0 not yet read, 4-0 does not exist but is beyond the group
    assert call("XDELEX", "s", "ACKED", "IDS", "4", "1", "2", "3", "4") == [1, 2, 2, 2]
    assert call("XDELEX", "s", "DELREF", "IDS", "1", "2") == [1]
    assert call("XPENDING", "s", "g")[0] == 0


# --- XTRIM ----------------------------------------------------------------------------------

def test_xtrim_sequence_with_node_size_100(r, call):
    node_config(r, 100)
    p = r.pipeline(transaction=False)
    for _ in range(1000):
        p.execute_command("XADD", "s", "*", "xitem", "v")
    p.execute()
    assert call("XTRIM", "s", "MAXLEN", "666") == 334
    assert call("XLEN", "s") == 666
    call("XTRIM", "s", "MAXLEN", "=", "555")
    assert call("XLEN", "s") == 555
    call("XTRIM", "s", "MAXLEN", "~", "444")
    assert call("XLEN", "s") == 500
    call("XTRIM", "s", "MAXLEN", "~", "400")
    assert call("XLEN", "s") == 400


def test_xtrim_node_size_1_default_limit(r, call, werr):
    node_config(r, 1)
    p = r.pipeline(transaction=False)
    for _ in range(102):
        p.execute_command("XADD", "s", "*", "f", "v")
    p.execute()
    call("XTRIM", "s", "MAXLEN", "~", "1")
    assert call("XLEN", "s") == 2
    call("XTRIM", "s", "MAXLEN", "1")
    assert call("XLEN", "s") == 1
    assert werr("XTRIM", "s", "MAXLEN", "1", "LIMIT", "30") == \
        "ERR syntax error, LIMIT cannot be used without the special ~ option"


def test_xtrim_limit_smaller_than_node(r, call):
    node_config(r, 2)
    fill(call, n=3)
    assert call("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "1") == 0
    assert call("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "2") == 2


def test_xtrim_minid_exact_and_approx(r, call):
    node_config(r, 4)
    fill(call, n=10)
    assert call("XTRIM", "s", "MINID", "~", "7") == 4
    assert call("XTRIM", "s", "MINID", "7") == 2
    assert ids(call)[0] == b"7-0"
    call("DEL", "s")
    for sid in ("1-0", "1641544570597-0", "1641544570597-1"):
        call("XADD", "s", sid, "f", "v")
    assert call("XTRIM", "s", "MINID", "1641544570597-0") == 1


def test_xtrim_minid_node_with_tombstone_tail_keeps_node(call):
    # the node's last slot (deleted 3-0) is not below MINID 3, so the node survives
    fill(call, n=3)
    call("XDEL", "s", "3-0")
    assert call("XTRIM", "s", "MINID", "3") == 2
    i = info(call)
    assert (i[b"length"], i[b"radix-tree-keys"], i[b"recorded-first-entry-id"]) == (0, 1, b"0-0")


def test_xtrim_does_not_set_max_deleted_but_updates_first(call):
    fill(call, n=5)
    assert call("XTRIM", "s", "MAXLEN", "2") == 3
    i = info(call)
    assert (i[b"max-deleted-entry-id"], i[b"recorded-first-entry-id"]) == (b"0-0", b"4-0")


def test_xtrim_errors(call, werr):
    fill(call)
    assert werr("XTRIM", "s", "LIMIT", "1") == \
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
    assert werr("XTRIM", "s", "FOO", "1") == "ERR syntax error"
    assert werr("XTRIM", "s", "MAXLEN", "1", "foo") == "ERR syntax error"
    assert werr("XTRIM", "s", "NOMKSTREAM", "MAXLEN", "1") == "ERR syntax error"
    assert werr("XTRIM", "s", "MAXLEN", "-1") == "ERR The MAXLEN argument must be >= 0."
    assert werr("XTRIM", "s", "MINID", "-") == INVALID_ID
    assert werr("XTRIM", "s", "MAXLEN") == "ERR wrong number of arguments for 'xtrim' command"
    assert werr("XTRIM", "s", "MAXLEN", "1", "MINID", "1") == \
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"


def test_xtrim_no_strategy(werr):
    assert werr("XTRIM", "s", "LIMIT", "0") == \
        "ERR syntax error, XTRIM must be called with a trimming strategy"


def test_xtrim_missing_key_and_wrongtype_after_parsing(call, werr):
    assert call("XTRIM", "nokey", "MAXLEN", "1") == 0
    assert call("EXISTS", "nokey") == 0
    call("SET", "str", "x")
    assert werr("XTRIM", "str", "MAXLEN", "x") == "ERR value is not an integer or out of range"
    assert werr("XTRIM", "str", "MAXLEN", "1") == WRONGTYPE


def test_xtrim_to_zero_keeps_key(call):
    fill(call)
    assert call("XTRIM", "s", "MAXLEN", "0") == 3
    assert call("EXISTS", "s") == 1 and call("XLEN", "s") == 0


@pytest.mark.min_redis("8.2")
def test_xtrim_minid_approx_acked(r, call):
    node_config(r, 2)
    fill(call, n=5)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    call("XACK", "s", "g", "1-0", "2-0", "4-0")
    assert call("XTRIM", "s", "MINID", "~", "6-0", "ACKED") == 3
    assert ids(call) == [b"3-0", b"5-0"]


@pytest.mark.min_redis("8.2")
def test_xtrim_delref_acts_exactly_and_cleans_pel(r, call):
    node_config(r, 5)
    fill(call, n=10)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert call("XTRIM", "s", "MAXLEN", "~", "3", "DELREF") == 7
    assert call("XPENDING", "s", "g")[0] == 3
    assert call("XTRIM", "s", "MAXLEN", "~", "0", "KEEPREF", "LIMIT", "100") == 3
    assert call("XPENDING", "s", "g")[0] == 3  # KEEPREF leaves the references


@pytest.mark.min_redis("8.2")
def test_xtrim_strategy_repeated_is_syntax_error(call, werr):
    fill(call)
    assert werr("XTRIM", "s", "MAXLEN", "1", "ACKED", "ACKED") == "ERR syntax error"


# --- XSETID ---------------------------------------------------------------------------------

def test_xsetid_sets_last_id_and_counters(call):
    fill(call, n=3)
    assert call("XSETID", "s", "5-5", "ENTRIESADDED", "10", "MAXDELETEDID", "4-0") == b"OK"
    i = info(call)
    assert (i[b"last-generated-id"], i[b"entries-added"], i[b"max-deleted-entry-id"]) == \
        (b"5-5", 10, b"4-0")
    assert i[b"recorded-first-entry-id"] == b"1-0"
    assert call("XADD", "s", "*", "f", "v").split(b"-")[1] == b"0"


def test_xsetid_then_auto_seq(call, werr):
    fill(call, n=1)
    call("XSETID", "s", "5-5")
    assert call("XADD", "s", "5-*", "f", "v") == b"5-6"
    assert werr("XADD", "s", "5-6", "f", "v").startswith("ERR The ID specified in XADD is")


def test_xsetid_errors(call, werr):
    assert werr("XSETID", "nokey", "1-1") == "ERR no such key"
    fill(call, n=3)
    assert werr("XSETID", "s", "2-0") == \
        "ERR The ID specified in XSETID is smaller than the target stream top item"
    assert werr("XSETID", "s", "5-0", "ENTRIESADDED", "2") == \
        "ERR The entries_added specified in XSETID is smaller than the target stream length"
    assert werr("XSETID", "s", "5-0", "ENTRIESADDED", "-1") == "ERR entries_added must be positive"
    assert werr("XSETID", "s", "5-0", "MAXDELETEDID", "6-0") == \
        "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
    assert werr("XSETID", "s", "5-0", "5") == "ERR syntax error"
    assert werr("XSETID", "s", "5-0", "ENTRIESADDED") == "ERR syntax error"
    assert werr("XSETID", "s", "-") == INVALID_ID
    assert werr("XSETID", "s", "5-0", "MAXDELETEDID", "+") == INVALID_ID
    # option errors come before the key lookup
    assert werr("XSETID", "nokey", "5-0", "FOO") == "ERR syntax error"
    call("SET", "str", "x")
    assert werr("XSETID", "str", "1") == WRONGTYPE


def test_xsetid_on_empty_stream_may_go_back(call):
    fill(call, n=3)
    call("XTRIM", "s", "MAXLEN", "0")
    assert call("XSETID", "s", "1-0") == b"OK"
    assert info(call)[b"last-generated-id"] == b"1-0"


@pytest.mark.min_redis("7.2")
def test_xsetid_below_current_max_deleted(call, werr):
    # Redis 7.0 lacks this check (it accepts the ID); 7.2+ refuses it
    fill(call, n=2)
    call("XDEL", "s", "1-0", "2-0")
    assert werr("XSETID", "s", "1-5") == \
        "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"


# --- XREAD (non-blocking) -------------------------------------------------------------------

def test_xread_resp2_and_resp3_shapes(wire, call):
    call("XADD", "s", "1-1", "f", "v")
    entry = b"*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert wire("XREAD", "STREAMS", "s", "0") == b"*1\r\n*2\r\n$1\r\ns\r\n" + entry
    assert wire.resp3("XREAD", "STREAMS", "s", "0") == b"%1\r\n$1\r\ns\r\n" + entry


def test_xread_nothing_is_null_array(wire, call):
    fill(call)
    for args in (("s", "3"), ("nokey", "0"), ("s", "$")):
        assert wire("XREAD", "STREAMS", *args) == NULL2
        assert wire.resp3("XREAD", "STREAMS", *args) == NULL3


def test_xread_multiple_keys_count_and_omission(call):
    fill(call, "a", n=3)
    fill(call, "b", n=2)
    out = call("XREAD", "COUNT", "2", "STREAMS", "a", "nokey", "b", "0", "0", "2")
    assert [k for k, _ in out] == [b"a"]
    assert [e[0] for e in out[0][1]] == [b"1-0", b"2-0"]
    out = call("XREAD", "STREAMS", "b", "a", "0-0", "1")
    assert [(k, len(v)) for k, v in out] == [(b"b", 2), (b"a", 2)]


def test_xread_same_key_twice_served_twice(call):
    fill(call, n=2)
    out = call("XREAD", "STREAMS", "s", "s", "0", "1")
    assert [(k, [e[0] for e in v]) for k, v in out] == \
        [(b"s", [b"1-0", b"2-0"]), (b"s", [b"2-0"])]


def test_xread_count_zero_or_negative_is_unlimited(call):
    fill(call, n=4)
    assert len(call("XREAD", "COUNT", "0", "STREAMS", "s", "0")[0][1]) == 4
    assert len(call("XREAD", "COUNT", "-3", "STREAMS", "s", "0")[0][1]) == 4


def test_xread_incomplete_id_and_deleted_tail(call, wire):
    fill(call, n=3)
    assert [e[0] for e in call("XREAD", "STREAMS", "s", "2")[0][1]] == [b"3-0"]
    call("XDEL", "s", "3-0")
    # the last live entry is 2-0: nothing after 2
    assert wire("XREAD", "STREAMS", "s", "2") == NULL2


def test_xread_errors(call, werr):
    fill(call)
    assert werr("XREAD", "STREAMS", "s", "x") == INVALID_ID
    assert werr("XREAD", "STREAMS", "s", "-") == INVALID_ID
    assert werr("XREAD", "COUNT", "x", "STREAMS", "s", "0") == \
        "ERR value is not an integer or out of range"
    assert werr("XREAD", "BLOCK", "x", "STREAMS", "s", "0") == \
        "ERR timeout is not an integer or out of range"
    assert werr("XREAD", "BLOCK", "-1", "STREAMS", "s", "0") == "ERR timeout is negative"
    assert werr("XREAD", "FOO", "STREAMS", "s", "0") == "ERR syntax error"
    assert werr("XREAD", "COUNT", "1", "BLOCK") == "ERR syntax error"
    assert werr("XREAD", "COUNT", "1", "s", "0") == "ERR syntax error"
    assert werr("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0") == \
        "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
    assert werr("XREAD", "NOACK", "STREAMS", "s", "0") == \
        "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
    assert werr("XREAD", "STREAMS", "s", ">") == \
        "ERR The > ID can be specified only when calling XREADGROUP using the GROUP " \
        "<group> <consumer> option."
    # exact text differs by version (7.0: "Unbalanced XREAD list ..."); see the 7.4 test
    assert werr("XREAD", "STREAMS", "s", "0", "0").startswith("ERR Unbalanced ")
    assert werr("XREAD", "STREAMS") == "ERR wrong number of arguments for 'xread' command"


@pytest.mark.min_redis("7.4")
def test_xread_unbalanced_text_mentions_plus(werr):
    assert werr("XREAD", "STREAMS", "a", "b", "0") == (
        "ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' "
        "must be specified.")


@pytest.mark.min_redis("8.4")
def test_xread_claim_only_for_xreadgroup(werr):
    assert werr("XREAD", "CLAIM", "10", "STREAMS", "s", "0") == \
        "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead."


def test_xread_key_types_checked_in_order(call, werr):
    call("SET", "str", "x")
    # key 1's ID is validated before key 2's type
    assert werr("XREAD", "STREAMS", "nokey", "str", "bad", "0") == INVALID_ID
    assert werr("XREAD", "STREAMS", "nokey", "str", "0", "bad") == WRONGTYPE


@pytest.mark.min_redis("7.4")
def test_xread_plus_returns_last_entry_only(call, wire):
    fill(call, n=3)
    out = call("XREAD", "COUNT", "10", "STREAMS", "s", "+")
    assert out == [[b"s", [[b"3-0", [b"f", b"v3"]]]]]
    call("XDEL", "s", "3-0")
    assert call("XREAD", "STREAMS", "s", "+")[0][1][0][0] == b"2-0"
    assert wire("XREAD", "STREAMS", "nokey", "+") == NULL2
    call("XDEL", "s", "1-0", "2-0")  # empty, though its last ID is 3-0: nothing to give
    assert wire("XREAD", "STREAMS", "s", "+") == NULL2


def test_xread_block_inside_multi_is_not_blocking(wire, call):
    fill(call, n=1)
    assert wire("MULTI") == b"+OK\r\n"
    for sid in ("$", "0", "1"):
        assert wire("XREAD", "BLOCK", "0", "STREAMS", "s", sid) == b"+QUEUED\r\n"
    assert wire("EXEC") == b"*3\r\n*-1\r\n*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0" \
        b"\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n*-1\r\n"


# --- XINFO ----------------------------------------------------------------------------------

def _expected_fields(target, full=False):
    head = [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
            b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id"]
    if target.version >= (8, 6):
        head += [b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
                 b"iids-added", b"iids-duplicates"]
    if full:
        return head + [b"entries", b"groups"]
    return head + [b"groups", b"first-entry", b"last-entry"]


def test_xinfo_stream_fields_in_order(call, target):
    fill(call, n=3)
    flat = call("XINFO", "STREAM", "s")
    assert flat[0::2] == _expected_fields(target)
    i = dict(zip(flat[0::2], flat[1::2]))
    assert (i[b"length"], i[b"radix-tree-keys"], i[b"radix-tree-nodes"]) == (3, 1, 2)
    assert i[b"first-entry"] == [b"1-0", [b"f", b"v1"]]
    assert i[b"last-entry"] == [b"3-0", [b"f", b"v3"]]
    assert (i[b"last-generated-id"], i[b"entries-added"], i[b"groups"]) == (b"3-0", 3, 0)


@pytest.mark.min_redis("8.6")
def test_xinfo_stream_idmp_defaults(call, r):
    r.config_set("stream-idmp-duration", 7)
    fill(call, n=1)
    r.config_set("stream-idmp-duration", 100)
    i = info(call)
    # the settings are copied when the stream is created
    assert (i[b"idmp-duration"], i[b"idmp-maxsize"]) == (7, 100)
    assert [i[k] for k in (b"pids-tracked", b"iids-tracked", b"iids-added",
                           b"iids-duplicates")] == [0, 0, 0, 0]


def test_xinfo_stream_empty_stream_nulls(wire, call):
    fill(call, n=1)
    call("XDEL", "s", "1-0")
    reply = wire("XINFO", "STREAM", "s")
    assert reply.endswith(b"$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n")
    reply3 = wire.resp3("XINFO", "STREAM", "s")
    assert reply3.startswith(b"%")
    assert reply3.endswith(b"$11\r\nfirst-entry\r\n_\r\n$10\r\nlast-entry\r\n_\r\n")


def test_xinfo_stream_resp3_is_map(call):
    fill(call, n=2)
    out = call.resp3("XINFO", "STREAM", "s")
    assert isinstance(out, dict)
    assert out[b"length"] == 2 and out[b"last-entry"] == [b"2-0", [b"f", b"v2"]]


def test_xinfo_stream_radix_tree_keys_follow_node_size(r, call):
    node_config(r, 3)
    fill(call, n=10)
    assert info(call)[b"radix-tree-keys"] == 4


def test_xinfo_stream_radix_tree_nodes(r, call):
    node_config(r, 2)
    for sid in ("1-0", "2-0", "3-0", "4-0", "5-0", "1000-0", "1000-1", "70000-0", "70000-5"):
        call("XADD", "s", sid, "f", "v")
    i = info(call)
    # values read from Redis 7.0 for this exact sequence
    assert (i[b"radix-tree-keys"], i[b"radix-tree-nodes"]) == (5, 14)


def test_xinfo_stream_node_bytes_limit(r, call):
    r.config_set("stream-node-max-bytes", 100)
    for i in range(1, 21):
        call("XADD", "s", f"{i}-0", "field", "x" * 20)
    # listpack estimate: 22 bytes of header and master entry, 30 per entry; the third
    # entry would need 82 + 25 raw bytes >= 100, so every node holds two
    assert info(call)[b"radix-tree-keys"] == 10


def test_xinfo_stream_full(call, target):
    fill(call, n=15)
    flat = call("XINFO", "STREAM", "s", "FULL")
    assert flat[0::2] == _expected_fields(target, full=True)
    i = dict(zip(flat[0::2], flat[1::2]))
    assert len(i[b"entries"]) == 10  # default COUNT
    assert i[b"groups"] == []
    assert len(info(call, "s", "FULL", "COUNT", "3")[b"entries"]) == 3
    assert len(info(call, "s", "FULL", "COUNT", "0")[b"entries"]) == 15
    assert len(info(call, "s", "full", "count", "-1")[b"entries"]) == 10


def test_xinfo_stream_full_lists_groups(call):
    fill(call, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    groups = info(call, "s", "FULL")[b"groups"]
    assert len(groups) == 1
    g = dict(zip(groups[0][0::2], groups[0][1::2]))
    assert (g[b"name"], g[b"pel-count"]) == (b"g", 2)


def test_xinfo_errors(call, werr):
    assert werr("XINFO", "STREAM", "nokey") == "ERR no such key"
    fill(call)
    bad = "ERR unknown subcommand or wrong number of arguments for '{}'. Try XINFO HELP."
    assert werr("XINFO", "STREAM", "s", "FOO") == bad.format("STREAM")
    assert werr("XINFO", "stream", "s", "FULL", "COUNT") == bad.format("stream")
    assert werr("XINFO", "STREAM", "s", "FULL", "LIMIT", "1") == bad.format("STREAM")
    assert werr("XINFO", "STREAM", "s", "FULL", "COUNT", "x") == \
        "ERR value is not an integer or out of range"
    assert werr("XINFO", "STREAM") == "ERR wrong number of arguments for 'xinfo|stream' command"
    assert werr("XINFO", "FOO") == "ERR unknown subcommand 'FOO'. Try XINFO HELP."
    assert werr("XINFO") == "ERR wrong number of arguments for 'xinfo' command"
    call("SET", "str", "x")
    # the key is checked before the options
    assert werr("XINFO", "STREAM", "str", "FOO") == WRONGTYPE
    assert werr("XINFO", "STREAM", "nokey", "FOO") == "ERR no such key"


@pytest.mark.min_redis("7.2")
def test_xinfo_help(wire):
    # Redis 7.0 ends with "Prints this help."; 7.2+ say "Print"
    lines = [b"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
             b"CONSUMERS <key> <groupname>", b"    Show consumers of <groupname>.",
             b"GROUPS <key>", b"    Show the stream consumer groups.",
             b"STREAM <key> [FULL [COUNT <count>]", b"    Show information about the stream.",
             b"HELP", b"    Print this help."]
    assert wire("XINFO", "HELP") == b"*9\r\n" + b"".join(b"+%s\r\n" % x for x in lines)


# --- WATCH / dirty ----------------------------------------------------------------------------

def _watch_broken_by(r, make_client, cmds):
    for cmd in cmds:
        r.delete("s")
        r.execute_command("XADD", "s", "1-0", "f", "v")
        r.execute_command("XADD", "s", "2-0", "f", "v")
        c = make_client()
        p = c.pipeline(transaction=True)
        p.watch("s")
        r.execute_command(*cmd)
        p.multi()
        p.execute_command("XLEN", "s")
        with pytest.raises(redis.WatchError):
            p.execute()


def test_writes_invalidate_watch(r, make_client):
    _watch_broken_by(r, make_client, [("XADD", "s", "*", "f", "v"), ("XDEL", "s", "1-0"),
                                      ("XTRIM", "s", "MAXLEN", "0")])


@pytest.mark.min_redis("7.2")
def test_xsetid_invalidates_watch(r, make_client):
    # Redis 7.0 forgets to signal the key for XSETID
    _watch_broken_by(r, make_client, [("XSETID", "s", "99999999999999-0")])


def test_noop_writes_do_not_invalidate_watch(r, make_client):
    r.execute_command("XADD", "s", "1-0", "f", "v")
    c = make_client()
    p = c.pipeline(transaction=True)
    p.watch("s")
    r.execute_command("XDEL", "s", "9-9")
    r.execute_command("XTRIM", "s", "MAXLEN", "5")
    p.multi()
    p.execute_command("XLEN", "s")
    assert p.execute() == [1]


# --- COMMAND DOCS ------------------------------------------------------------------------------

@pytest.mark.min_redis("7.2")
def test_command_docs_xadd(call):
    # 7.0 named the last two arguments id_or_auto and field_value
    docs = call("COMMAND", "DOCS", "XADD")
    d = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert d[b"group"] == b"stream" and d[b"since"] == b"5.0.0"
    names = [dict(zip(a[0::2], a[1::2]))[b"name"] for a in d[b"arguments"]]
    for name in (b"key", b"nomkstream", b"trim", b"id-selector", b"data"):
        assert name in names


def test_command_info_xrange_keys(call):
    info_ = call("COMMAND", "INFO", "XRANGE")[0]
    assert info_[:6] == [b"xrange", -4, info_[2], 1, 1, 1]
    assert b"readonly" in info_[2]


@pytest.mark.parametrize("argv, keys", [
    (("XREAD", "COUNT", "1", "STREAMS", "a", "b", "0", "0"), [b"a", b"b"]),
    (("XREAD", "STREAMS", "only", "$"), [b"only"]),
    (("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "a", "b", ">", ">"),
     [b"a", b"b"]),
])
def test_command_getkeys_finds_keys_after_streams(call, argv, keys):
    assert call("COMMAND", "GETKEYS", *argv) == keys


@pytest.mark.parametrize("name, start", [("XREAD", 1), ("XREADGROUP", 4)])
def test_command_info_xread_keyword_key_spec(call, name, start):
    """Cluster clients read these key specs to route XREAD/XREADGROUP."""
    info_ = call("COMMAND", "INFO", name)[0]
    assert info_[3:6] == [0, 0, 0]
    assert b"movablekeys" in info_[2]
    spec = dict(zip(info_[8][0][0::2], info_[8][0][1::2]))
    assert spec[b"flags"] == [b"RO", b"access"]
    assert spec[b"begin_search"] == [b"type", b"keyword", b"spec",
                                     [b"keyword", b"STREAMS", b"startfrom", start]]
    assert spec[b"find_keys"] == [b"type", b"range", b"spec",
                                  [b"lastkey", -1, b"keystep", 1, b"limit", 2]]
# --- edge cases pinned by a mutation audit (each kills a mutant the tests above let live) ---

def test_trim_operator_without_threshold_is_read_as_the_threshold(call, werr):
    # `~` / `=` count as operators only when an argument follows them; a trailing one is
    # the threshold itself
    fill(call)
    not_int = "ERR value is not an integer or out of range"
    assert werr("XTRIM", "s", "MAXLEN", "~") == not_int
    assert werr("XTRIM", "s", "MAXLEN", "=") == not_int
    assert werr("XTRIM", "s", "MINID", "~") == INVALID_ID
    assert werr("XTRIM", "s", "MINID", "=") == INVALID_ID
    assert call("XLEN", "s") == 3


def test_xtrim_approx_default_limit_without_node_entry_limit(r, call):
    # stream-node-max-entries 0: `~` without LIMIT may remove 10000 entries at most
    node_config(r, 0)
    r.config_set("stream-node-max-bytes", 1)  # every entry in a node of its own
    p = r.pipeline(transaction=False)
    for i in range(1, 10006):
        p.execute_command("XADD", "s", f"{i}-0", "f", "v")
    p.execute()
    assert info(call)[b"radix-tree-keys"] == 10005
    assert call("XTRIM", "s", "MAXLEN", "~", "0") == 10000
    assert ids(call) == [b"10001-0", b"10002-0", b"10003-0", b"10004-0", b"10005-0"]


def test_xsetid_max_deleted_may_equal_last_id(call):
    fill(call, n=2)
    assert call("XSETID", "s", "5-0", "MAXDELETEDID", "5-0") == b"OK"
    got = info(call)
    assert got[b"last-generated-id"] == b"5-0"
    assert got[b"max-deleted-entry-id"] == b"5-0"


@pytest.mark.min_redis("8.2")
def test_xdelex_delref_cleans_pel_of_an_entry_already_deleted(call):
    fill(call, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    call("XDEL", "s", "1-0")  # the PEL keeps its reference
    assert call("XPENDING", "s", "g")[0] == 2
    assert call("XDELEX", "s", "DELREF", "IDS", "1", "1-0") == [-1]
    assert call("XPENDING", "s", "g")[0] == 1


def test_xsetid_compares_with_last_live_entry_not_last_id(call):
    fill(call, n=1)
    assert call("XSETID", "s", "5-0") == b"OK"
    # going back is fine while the ID stays >= the last entry actually in the stream
    assert call("XSETID", "s", "3-0") == b"OK"
    assert call("XSETID", "s", "1-0") == b"OK"
    assert info(call)[b"last-generated-id"] == b"1-0"


def test_xsetid_may_equal_current_max_deleted(call):
    fill(call, n=2)
    call("XDEL", "s", "2-0")
    assert call("XSETID", "s", "2-0") == b"OK"
    assert info(call)[b"last-generated-id"] == b"2-0"


def test_xsetid_entries_added_may_equal_length(call):
    fill(call, n=3)
    assert call("XSETID", "s", "3-0", "ENTRIESADDED", "3") == b"OK"
    assert info(call)[b"entries-added"] == 3


def test_xsetid_top_item_checked_before_entries_added(call, werr):
    fill(call, n=3)
    assert werr("XSETID", "s", "2-0", "ENTRIESADDED", "1") == \
        "ERR The ID specified in XSETID is smaller than the target stream top item"


def test_tombstone_passed_by_a_lower_append_still_fills_its_node(r, call):
    # 3-0 is deleted; MAXDELETEDID then lowers max-deleted-entry-id, so XSETID may go below
    # the tombstone and 2-6 lands after it in the same node, which then holds four slots
    # (1-0, 2-0, the tombstone 3-0, 2-6): with four per node, 2-7 starts the next one
    node_config(r, 4)
    fill(call, n=3)
    call("XDEL", "s", "3-0")
    assert call("XSETID", "s", "3-0", "MAXDELETEDID", "1-0") == b"OK"
    assert call("XSETID", "s", "2-5") == b"OK"
    assert call("XADD", "s", "2-6", "f", "v") == b"2-6"
    assert info(call)[b"radix-tree-keys"] == 1
    call("XADD", "s", "2-7", "f", "v")
    assert ids(call) == [b"1-0", b"2-0", b"2-6", b"2-7"]
    assert info(call)[b"radix-tree-keys"] == 2
    assert call("XDEL", "s", "3-0") == 0
    assert call("XTRIM", "s", "MINID", "2-7") == 3  # the whole first node
    assert ids(call) == [b"2-7"]


@pytest.mark.parametrize("limit,nodes", [(67, 2), (68, 1)])
def test_tombstone_passed_by_a_lower_append_keeps_its_bytes(r, call, limit, nodes):
    # The listpack keeps the tombstone's 11 bytes: 1-0, 2-0, 3-0 (deleted), 2-6 make 63
    # bytes, so 2-7 (2 raw bytes) starts a new node below a 68-byte limit.
    node_config(r, 0)
    r.config_set("stream-node-max-bytes", limit)
    fill(call, n=3)
    call("XDEL", "s", "3-0")
    call("XSETID", "s", "3-0", "MAXDELETEDID", "1-0")
    call("XSETID", "s", "2-5")
    call("XADD", "s", "2-6", "f", "v")
    call("XADD", "s", "2-7", "f", "v")
    assert info(call)[b"radix-tree-keys"] == nodes


def test_xsetid_without_maxdeletedid_keeps_max_deleted(call):
    fill(call, n=2)
    call("XDEL", "s", "2-0")
    assert call("XSETID", "s", "3-0") == b"OK"
    assert call("XSETID", "s", "4-0", "MAXDELETEDID", "0-0") == b"OK"
    assert info(call)[b"max-deleted-entry-id"] == b"2-0"


def test_xread_without_streams_is_a_syntax_error(call, werr):
    fill(call)
    assert werr("XREAD", "COUNT", "1", "COUNT", "2") == "ERR syntax error"
    assert werr("XREAD", "COUNT", "1", "BLOCK", "10") == "ERR syntax error"


@pytest.mark.min_redis("7.4")
def test_xread_plus_on_an_emptied_stream_is_null(wire, call):
    fill(call, n=1)
    call("XDEL", "s", "1-0")
    assert wire("XREAD", "STREAMS", "s", "+") == NULL2
    assert wire("XREAD", "STREAMS", "nokey", "s", "+", "+") == NULL2


def test_xinfo_stream_radix_tree_nodes_keys_differing_in_last_byte(r, call):
    node_config(r, 1)
    call("XADD", "s", "1-0", "f", "v")
    call("XADD", "s", "1-1", "f", "v")
    # read from Redis 7.0: a 15-byte compressed prefix node, the branching node and two
    # leaves
    assert (info(call)[b"radix-tree-keys"], info(call)[b"radix-tree-nodes"]) == (2, 4)


def test_xinfo_stream_full_count_0_lists_every_pending_entry(call):
    fill(call, n=12)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    for count, shown in (("0", 12), ("3", 3)):
        group = info(call, "s", "FULL", "COUNT", count)[b"groups"][0]
        g = dict(zip(group[0::2], group[1::2]))
        assert len(g[b"pending"]) == shown
        consumer = dict(zip(g[b"consumers"][0][0::2], g[b"consumers"][0][1::2]))
        assert len(consumer[b"pending"]) == shown
    group = info(call, "s", "FULL")[b"groups"][0]
    assert len(dict(zip(group[0::2], group[1::2]))[b"pending"]) == 10


def _many(n, value="v"):
    return [x for i in range(n) for x in (f"k{i}", value)]


# (first entry, second entry) and the smallest stream-node-max-bytes that keeps both and a
# third entry `f x` in one node, read from Redis 7.0 (stream-node-max-entries 0): one byte
# less and the node is split. Each pins the listpack size of an element class at an
# encoding boundary.
_NODE_BYTES_BOUNDARIES = [
    (["f", "x"], ["f", "x" * 16377], 16424),  # backlen of a 16382-byte element: 2 bytes
    (["f", "x"], ["f", "x" * 16378], 16426),  # 16383 bytes: 3
    (["f", "x"], ["f", "x" * 126], 170),
    (["f", "x"], ["f", "x" * 4095], 4139),
    (["f", "x"], ["f", "x" * 4096], 4143),
    (["f", "x"], ["f", "999999999999999999"], 50),  # int64: 9 bytes + backlen
    (["f", "x"], ["f", "9999999999999999999"], 61),  # not an int64: a string
    (["f", "x"], ["f", "-0"], 44),  # not an integer for listpack
    (["f", "x"], ["f", "99"], 42),  # 7-bit unsigned integer
    (["f", "x"], ["f", "128"], 43),  # 13-bit integer
    (["f", "x"], ["f", "999999"], 45),
    (["f", "x"], ["f", "99999999"], 46),
    (["f", "x"], ["f", "99999999999"], 50),
    (["f", "x"], ["f", "4095"], 43),
    (["f", "x"], ["f", "-4096"], 43),
    (["f", "x"], ["f", "32767"], 44),  # int16
    (["f", "x"], ["f", "8388607"], 45),  # int24
    (["f", "x"], ["f", "8388608"], 46),  # int32
    (["f", "x"], ["g", "x", "h", "y"], 54),  # field names differ from the master's
    (["f", "x"], _many(61), 520),  # lp-count 2 * 61 + 4 = 126: 1-byte integer
    (["f", "x"], _many(62), 529),  # lp-count 128: 13-bit integer
    (["f", "x"], _many(125), 1058),
    (_many(124), _many(124), 1540),  # lp-count 127: 1-byte integer
    (_many(125), _many(125), 1555),  # lp-count 128: 13-bit integer
]


@pytest.mark.parametrize("first,second,fits", _NODE_BYTES_BOUNDARIES)
def test_node_byte_limit_at_encoding_boundaries(r, call, first, second, fits):
    node_config(r, 0)
    for limit, nodes in ((fits - 1, 2), (fits, 1)):
        call("DEL", "s")
        r.config_set("stream-node-max-bytes", limit)
        for i, fields in enumerate((first, second, ["f", "x"]), 1):
            call("XADD", "s", f"1-{i}", *fields)
        assert info(call)[b"radix-tree-keys"] == nodes, limit


def test_node_byte_limit_counts_grow_past_127_entries(r, call):
    # the node's live-count element takes 3 bytes from 128 entries on: read from Redis 7.0
    node_config(r, 0)
    for limit, nodes in ((1429, 2), (1430, 1)):
        call("DEL", "s")
        r.config_set("stream-node-max-bytes", limit)
        for i in range(1, 130):
            call("XADD", "s", f"1-{i}", "f", "x")
        assert info(call)[b"radix-tree-keys"] == nodes, limit


def _node_of_tombstones_at_head(r, call):
    """Nodes [1-0 2-0] [3-0 4-0] with the first node left holding tombstones only (an
    exact MINID trim stops at the tombstone 2-0, so the node is not removed)."""
    node_config(r, 2)
    fill(call, n=4)
    call("XDEL", "s", "2-0")
    assert call("XTRIM", "s", "MINID", "2-0") == 1
    assert (info(call)[b"length"], info(call)[b"radix-tree-keys"]) == (2, 2)


def test_trim_at_maxlen_keeps_a_node_of_tombstones(r, call):
    _node_of_tombstones_at_head(r, call)
    assert call("XTRIM", "s", "MAXLEN", "2") == 0
    assert info(call)[b"radix-tree-keys"] == 2
    assert call("XTRIM", "s", "MAXLEN", "1") == 1  # drops it on the way
    assert info(call)[b"radix-tree-keys"] == 1
    assert ids(call) == [b"4-0"]


def test_first_id_recorded_when_appending_to_a_node_of_tombstones(r, call):
    node_config(r, 100)
    fill(call, n=2)
    call("XDEL", "s", "2-0")
    assert call("XTRIM", "s", "MINID", "2-0") == 1
    assert info(call)[b"recorded-first-entry-id"] == b"0-0"
    call("XADD", "s", "3-0", "f", "v")
    got = info(call)
    assert (got[b"radix-tree-keys"], got[b"recorded-first-entry-id"]) == (1, b"3-0")


@pytest.mark.min_redis("8.2")
def test_xsetid_top_item_is_the_last_live_entry_after_acked_trim(call):
    # ACKED trimming can leave the tail entry a tombstone without touching
    # max-deleted-entry-id; XSETID then compares with the last live entry
    fill(call, n=3)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    call("XACK", "s", "g", "1-0", "3-0")
    assert call("XTRIM", "s", "MINID", "10-0", "ACKED") == 2
    assert info(call)[b"max-deleted-entry-id"] == b"0-0"
    assert call("XSETID", "s", "2-0") == b"OK"


@pytest.mark.streamd_only
@pytest.mark.parametrize("node_entries,limit", [(1, 100), (100, 10_000), (0, 10_000),
                                                (-5, 10_000), (10_000, 1_000_000),
                                                (20_000, 1_000_000)])
def test_default_approx_trim_limit(node_entries, limit):
    # 100 nodes' worth, 10000 when the node entry limit is off, capped at a million (seeing
    # the cap through the server would need a stream of more than a million entries)
    from types import SimpleNamespace

    from streamd.commands.streams import default_trim_limit
    ctx = SimpleNamespace(config={"stream-node-max-entries": node_entries})
    assert default_trim_limit(ctx) == limit


def test_id_argument_longer_than_127_bytes_is_invalid(call, werr):
    # leading zeros make strtoull read any length; the 127-byte cap is checked first
    assert call("XADD", "s", "0" * 124 + "1-1", "f", "v") == b"1-1"
    assert werr("XADD", "s", "0" * 125 + "2-1", "f", "v") == INVALID_ID
    assert len(call("XRANGE", "s", "0" * 126 + "1", "+")) == 1
    assert werr("XRANGE", "s", "0" * 127 + "1", "+") == INVALID_ID


def test_lenient_id_parts_still_overflow(werr):
    for sid in ("018446744073709551616-1", "5-018446744073709551616", "+18446744073709551616"):
        assert werr("XADD", "s", sid, "f", "v") == INVALID_ID
    assert werr("XRANGE", "s", "018446744073709551616", "+") == INVALID_ID


def test_auto_sequence_only_in_xadd_id(call, werr):
    assert call("XADD", "s", "1-*", "f", "v") == b"1-0"
    for args in (("XRANGE", "s", "1-*", "+"), ("XRANGE", "s", "-", "1-*"),
                 ("XRANGE", "s", "(1-*", "+"), ("XDEL", "s", "1-*"),
                 ("XREAD", "STREAMS", "s", "1-*"), ("XTRIM", "s", "MINID", "1-*"),
                 ("XADD", "s", "MINID", "1-*", "*", "f", "v"), ("XSETID", "s", "9-*"),
                 ("XSETID", "s", "9-0", "MAXDELETEDID", "1-*")):
        assert werr(*args) == INVALID_ID, args


def test_exclusive_bounds_step_by_one_id(call):
    for sid in ("1-1", "1-2", "1-3", "1-18446744073709551615", "2-0", "2-1"):
        call("XADD", "s", sid, "f", "v")
    assert ids(call, "s", "-", "(1-3") == [b"1-1", b"1-2"]
    assert ids(call, "s", "(1-1", "(1-3") == [b"1-2"]
    assert ids(call, "s", "-", "(2-0") == [b"1-1", b"1-2", b"1-3", b"1-18446744073709551615"]
    assert ids(call, "s", "(1-18446744073709551615", "+") == [b"2-0", b"2-1"]
    assert [e[0] for e in call("XREVRANGE", "s", "(2-1", "(1-3")] == \
        [b"2-0", b"1-18446744073709551615"]


@pytest.mark.min_redis("8.2")
def test_xdelex_counts_each_deleted_entry_as_a_change(r, call):
    fill(call, n=4)
    before = dirty(r)
    assert call("XDELEX", "s", "IDS", "3", "1-0", "2-0", "9-0") == [1, 1, -1]
    assert dirty(r) - before == 2
    before = dirty(r)
    assert call("XDELEX", "s", "IDS", "1", "9-0") == [-1]
    assert dirty(r) == before


def test_xadd_creating_the_stream_is_one_change(r, call):
    before = dirty(r)
    call("XADD", "s", "1-0", "f", "v")
    assert dirty(r) - before == 1
    before = dirty(r)
    call("XADD", "s", "MAXLEN", "0", "2-0", "f", "v")  # the trimming adds nothing
    assert dirty(r) - before == 1


def test_xsetid_entries_added_zero_on_an_empty_stream(call):
    fill(call, n=1)
    call("XDEL", "s", "1-0")
    assert call("XSETID", "s", "1-0", "ENTRIESADDED", "0") == b"OK"
    assert info(call)[b"entries-added"] == 0


def test_xread_streams_keyword_without_keys_is_a_syntax_error(werr):
    assert werr("XREAD", "COUNT", "1", "STREAMS") == "ERR syntax error"
    assert werr("XREAD", "BLOCK", "10", "STREAMS") == "ERR syntax error"


def test_ranges_over_nodes_that_start_in_the_same_ms(r, call):
    node_config(r, 2)
    for seq in range(6):
        call("XADD", "s", f"1-{seq}", "f", "v")
    call("XADD", "s", "2-0", "f", "v")
    assert ids(call, "s", "1-3", "1-3") == [b"1-3"]
    assert ids(call, "s", "1-1", "1-4") == [b"1-1", b"1-2", b"1-3", b"1-4"]
    assert [e[0] for e in call("XREVRANGE", "s", "1-3", "1-2")] == [b"1-3", b"1-2"]
    assert call("XDEL", "s", "1-3") == 1
    assert call("XREAD", "STREAMS", "s", "1-2")[0][1][0][0] == b"1-4"


def test_xinfo_first_entry_skips_deleted_slots(call):
    fill(call, n=3)
    call("XDEL", "s", "1-0")
    got = info(call)
    assert got[b"first-entry"] == [b"2-0", [b"f", b"v2"]]
    call("XDEL", "s", "3-0")
    assert info(call)[b"last-entry"] == [b"2-0", [b"f", b"v2"]]


@pytest.mark.min_redis("8.2")
def test_acked_trim_frees_a_node_behind_one_that_survives(r, call):
    # [1-0 2-0] keeps the unacknowledged 1-0, [3-0 4-0] goes whole, [5-0 6-0] stays
    node_config(r, 2)
    fill(call, n=6)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    call("XACK", "s", "g", "2-0", "3-0", "4-0", "5-0", "6-0")
    assert call("XTRIM", "s", "MINID", "5-0", "ACKED") == 3
    assert ids(call) == [b"1-0", b"5-0", b"6-0"]
    got = info(call)
    assert (got[b"length"], got[b"radix-tree-keys"]) == (3, 2)
    assert ids(call, "s", "3-0", "+") == [b"5-0", b"6-0"]


def test_xread_count_repeated_last_wins(call):
    fill(call, n=3)
    assert len(call("XREAD", "COUNT", "1", "COUNT", "2", "STREAMS", "s", "0")[0][1]) == 2
    assert len(call("XREAD", "COUNT", "2", "COUNT", "1", "STREAMS", "s", "0")[0][1]) == 1


def test_copy_is_independent_of_its_source(r, call):
    node_config(r, 3)
    fill(call, n=3)
    call("XDEL", "s", "1-0")
    assert call("COPY", "s", "d") == 1
    assert info(call, "d")[b"max-deleted-entry-id"] == b"1-0"
    call("XDEL", "d", "2-0")
    assert ids(call, "s") == [b"2-0", b"3-0"]
    assert ids(call, "d") == [b"3-0"]
    call("XDEL", "s", "3-0")
    assert ids(call, "d") == [b"3-0"]
    fill(call, "d", n=2, start=4)  # a new node in the copy only
    assert ids(call, "s", "(2-0", "+") == []
    assert [e[0] for e in call("XREVRANGE", "s", "+", "-")] == [b"2-0"]
    assert info(call)[b"radix-tree-keys"] == 1


def test_lenient_id_parts_accept_every_c_whitespace(call):
    fill(call, n=2)
    for space in (b" ", b"\t", b"\n", b"\x0b", b"\x0c", b"\r"):
        assert ids(call, "s", space + b"2", "+") == [b"2-0"], space
        assert ids(call, "s", b"1-" + space + b"0", b"1-" + space + b"0") == [b"1-0"], space


def test_id_argument_ends_at_a_nul_byte(call, werr):
    # Redis parses an ID argument as a C string: whatever follows a NUL byte is ignored
    # (the 127-byte cap still counts the whole argument)
    call("XADD", "s", "1-1", "f", "v")
    assert call("XADD", "s", b"9-1\x00zz", "f", "v") == b"9-1"
    assert call("XADD", "s", b"10-*\x00x", "f", "v") == b"10-0"
    assert werr("XADD", "s", b"\x0011-1", "f", "v") == INVALID_ID
    assert werr("XADD", "s", b"12-1\x00" + b"x" * 123, "f", "v") == INVALID_ID
    assert ids(call, "s", b"-\x00", b"+\x00") == [b"1-1", b"9-1", b"10-0"]
    assert ids(call, "s", b"(9-1\x00x", "+") == [b"10-0"]
    assert ids(call, "s", b"1\x00-5", b"9\x00") == [b"1-1", b"9-1"]
    assert call("XREAD", "STREAMS", "s", b"9-1\x00a")[0][1][0][0] == b"10-0"
    assert werr("XDEL", "s", b"-\x00") == INVALID_ID  # strict: a lone - stays invalid
    assert call("XDEL", "s", b"9-1\x00") == 1
    assert call("XSETID", "s", b"99-0\x00") == b"OK"
    assert info(call)[b"last-generated-id"] == b"99-0"


def test_xadd_auto_id_star_ends_at_a_nul_byte(call):
    sid = call("XADD", "s", b"*\x00x", "f", "v")
    assert int(sid.split(b"-")[0]) > 1_600_000_000_000

