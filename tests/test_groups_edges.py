"""Consumer-group edge cases: idle and seen/active times, delivery counts, boundaries and
counters that an audit with hand-made mutants found no test could fail on.

Each test names what it pins; the ones that need a newer Redis say so with min_redis.
"""

from __future__ import annotations

import time

import pytest

from tests.test_groups import _full_groups, err, fill, group_info
from tests.test_pipelined_runs import _pipeline


def _full_consumer(call, name: bytes, key="s") -> dict:
    """One consumer's map from XINFO STREAM key FULL (first group)."""
    g = dict(zip(*[iter(_full_groups(call, key)[0])] * 2))
    for c in g[b"consumers"]:
        d = dict(zip(c[::2], c[1::2]))
        if d[b"name"] == name:
            return d
    raise KeyError(name)


def _pending_rows(call, key="s", group="g"):
    return {row[0]: row for row in call("XPENDING", key, group, "-", "+", "100")}


# --- XREADGROUP history reads ---------------------------------------------------------------

def test_history_read_resets_idle_time(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    call("XCLAIM", "s", "g", "c", "0", "1-0", "IDLE", "600000", "JUSTID")
    assert _pending_rows(call)[b"1-0"][2] >= 600000
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    assert _pending_rows(call)[b"1-0"][2] < 60000  # a history read is a new delivery


def test_history_read_of_a_deleted_entry_is_not_a_delivery(r, call):
    fill(r, n=2)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    r.xdel("s", "1-0")
    reply = call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    assert reply == [[b"s", [[b"1-0", None], [b"2-0", [b"f", b"v2"]]]]]
    rows = _pending_rows(call)
    assert (rows[b"1-0"][3], rows[b"2-0"][3]) == (1, 2)  # only the live entry counts


@pytest.mark.min_redis("7.2")
def test_xreadgroup_updates_seen_time_but_history_read_is_not_activity(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    before = _full_consumer(call, b"c")
    assert before[b"active-time"] != -1
    time.sleep(0.02)
    call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")  # history: 1-0 again
    after = _full_consumer(call, b"c")
    assert after[b"seen-time"] > before[b"seen-time"]
    assert after[b"active-time"] == before[b"active-time"]
    # XINFO CONSUMERS: idle counts from the last read, inactive from the last delivery.
    c = dict(zip(*[iter(call("XINFO", "CONSUMERS", "s", "g")[0])] * 2))
    assert c[b"inactive"] >= c[b"idle"] + 15


# --- XCLAIM ---------------------------------------------------------------------------------

def test_xclaim_retrycount_zero_sets_the_count_to_zero(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    assert call("XCLAIM", "s", "g", "b", "0", "1-0", "RETRYCOUNT", "0", "JUSTID") == [b"1-0"]
    assert _pending_rows(call)[b"1-0"][3] == 0


def test_xclaim_bogus_delivery_times_mean_now(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XCLAIM", "s", "g", "a", "0", "1-0", "TIME", "-5", "JUSTID")  # negative
    assert _pending_rows(call)[b"1-0"][2] < 60000
    call("XCLAIM", "s", "g", "a", "0", "1-0", "IDLE", "100000000000000", "JUSTID")  # < 0 too
    assert _pending_rows(call)[b"1-0"][2] < 60000
    call("XCLAIM", "s", "g", "a", "0", "1-0", "TIME", "99999999999999", "JUSTID")  # future
    g = dict(zip(*[iter(_full_groups(call)[0])] * 2))
    delivered = g[b"pending"][0][2]  # the absolute delivery time, unclamped by XPENDING
    assert abs(delivered - time.time() * 1000) < 60000


@pytest.mark.min_redis("7.2")
@pytest.mark.parametrize("too_early, none_claimed, claim, claimed", [
    (("XCLAIM", "s", "g", "b", "3600000", "1-0"), [],
     ("XCLAIM", "s", "g", "b", "0", "1-0", "JUSTID"), [b"1-0"]),
    (("XAUTOCLAIM", "s", "g", "b", "3600000", "0"), [b"0-0", [], []],
     ("XAUTOCLAIM", "s", "g", "b", "0", "0", "JUSTID"), [b"0-0", [b"1-0"], []]),
], ids=("xclaim", "xautoclaim"))
def test_claims_update_seen_time_and_active_time_only_when_claiming(
        r, call, too_early, none_claimed, claim, claimed):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XGROUP", "CREATECONSUMER", "s", "g", "b")
    before = _full_consumer(call, b"b")
    assert before[b"active-time"] == -1
    time.sleep(0.02)
    assert call(*too_early) == none_claimed  # not idle enough: seen, not active
    mid = _full_consumer(call, b"b")
    assert mid[b"seen-time"] > before[b"seen-time"] and mid[b"active-time"] == -1
    assert call(*claim) == claimed
    assert _full_consumer(call, b"b")[b"active-time"] >= mid[b"seen-time"]


# --- XAUTOCLAIM -----------------------------------------------------------------------------

@pytest.mark.min_redis("7.0")
def test_xautoclaim_count_upper_bound(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    # Redis caps COUNT at LONG_MAX / 16 = 2**59 - 1
    assert err(call, "XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", str(2**59)) == \
        "COUNT must be > 0"


# --- min-idle-time boundaries (one time snapshot inside EXEC) -------------------------------

@pytest.mark.min_redis("7.2")
def test_min_idle_time_is_inclusive(r, call):
    fill(r, n=3)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("MULTI")
    call("XCLAIM", "s", "g", "a", "0", "1-0", "2-0", "3-0", "IDLE", "5000", "JUSTID")
    call("XPENDING", "s", "g", "IDLE", "5000", "-", "+", "10")
    call("XCLAIM", "s", "g", "b", "5000", "1-0", "JUSTID")
    call("XAUTOCLAIM", "s", "g", "c", "5000", "2-0", "COUNT", "1", "JUSTID")
    _, pending, xclaim, xautoclaim = call("EXEC")
    assert [row[0] for row in pending] == [b"1-0", b"2-0", b"3-0"]  # idle == 5000 passes
    assert xclaim == [b"1-0"]
    assert xautoclaim == [b"3-0", [b"2-0"], []]


# --- XGROUP ---------------------------------------------------------------------------------

def test_xgroup_setid_with_entriesread_twice_is_an_arity_error(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert err(call, "XGROUP", "SETID", "s", "g", "2-0", "ENTRIESREAD", "1",
               "ENTRIESREAD", "2") == \
        "unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."
    assert group_info(call)[0]["last-delivered-id"] == b"0-0"


def test_createconsumer_leaves_an_existing_consumer_untouched(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    assert call("XGROUP", "CREATECONSUMER", "s", "g", "c") == 1
    seen = _full_consumer(call, b"c")[b"seen-time"]
    time.sleep(0.02)
    assert call("XGROUP", "CREATECONSUMER", "s", "g", "c") == 0
    assert _full_consumer(call, b"c")[b"seen-time"] == seen


# --- XINFO ----------------------------------------------------------------------------------

def test_xinfo_consumers_idle_of_a_never_active_consumer(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XGROUP", "CREATECONSUMER", "s", "g", "c")
    cons = call("XINFO", "CONSUMERS", "s", "g")[0]
    assert cons[4] == b"idle" and 0 <= cons[5] < 60000  # since it was seen (created)


@pytest.mark.min_redis("7.2")
def test_xinfo_full_active_time_of_a_never_active_consumer(r, call):
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XGROUP", "CREATECONSUMER", "s", "g", "c")
    c = _full_consumer(call, b"c")
    assert c[b"seen-time"] > 0 and c[b"active-time"] == -1


def test_xinfo_full_consumer_pel_count_and_count_cap_per_consumer(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "COUNT", "2", "STREAMS", "s", ">")
    call("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    assert (_full_consumer(call, b"a")[b"pel-count"],
            _full_consumer(call, b"b")[b"pel-count"]) == (2, 1)
    g = dict(zip(*[iter(_full_groups(call, "s", "COUNT", "1")[0])] * 2))
    a = dict(zip(g[b"consumers"][0][::2], g[b"consumers"][0][1::2]))
    assert a[b"name"] == b"a" and a[b"pel-count"] == 2
    assert [row[0] for row in a[b"pending"]] == [b"1-0"]  # COUNT caps consumer PELs too


# --- lag ------------------------------------------------------------------------------------

def test_lag_is_unknown_when_the_last_delivered_entry_was_deleted(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    r.xdel("s", "2-0")  # the tombstone is at last-delivered-id itself
    info = group_info(call)[0]
    assert (info["entries-read"], info["lag"]) == (2, None)


@pytest.mark.min_redis("8.0")  # 7.0 answers 5 (entries-added - entries-read)
def test_lag_of_a_group_with_a_known_counter_behind_trimmed_entries(r, call):
    fill(r, n=5)
    call("XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "0")
    assert call("XTRIM", "s", "MAXLEN", "2") == 3
    assert group_info(call)[0]["lag"] == 2


# --- XACKDEL ACKED --------------------------------------------------------------------------

@pytest.mark.min_redis("8.2")
def test_xackdel_acked_deletes_the_last_delivered_entry(r, call):
    fill(r)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    # 2-0 is the group's last-delivered-id: read, and once acknowledged no longer needed
    assert call("XACKDEL", "s", "g", "ACKED", "IDS", "1", "2-0") == [1]
    assert r.xlen("s") == 2


# --- pipelined XACK run ---------------------------------------------------------------------

def test_xack_run_switching_key_with_the_same_group_name(raw, r):
    for k in ("k1", "k2"):
        r.xadd(k, {"f": "v"}, id="1-0")
        r.xgroup_create(k, "g", "0")
        r.xreadgroup("g", "c", {k: ">"})
    replies = _pipeline(raw(), ("XACK", "k1", "g", "1-0"), ("XACK", "k2", "g", "1-0"))
    assert replies == [1, 1]
    assert r.xpending("k2", "g")["pending"] == 0


def test_xack_run_switching_group_on_the_same_key(raw, r):
    r.xadd("s", {"f": "v"}, id="1-0")
    for g in ("g1", "g2"):
        r.xgroup_create("s", g, "0")
        r.xreadgroup(g, "c", {"s": ">"})
    replies = _pipeline(raw(), ("XACK", "s", "g1", "1-0"), ("XACK", "s", "g2", "1-0"))
    assert replies == [1, 1]
    assert r.xpending("s", "g2")["pending"] == 0


# --- XNACKed entries and min-idle-time -------------------------------------------------------
# The reference (XCLAIM) says unowned/NACKed entries pass any min-idle-time; this pins that
# for XPENDING IDLE, XAUTOCLAIM and XCLAIM alike. Not yet run against an 8.8 server.

@pytest.mark.min_redis("8.8")
def test_nacked_entries_pass_any_min_idle_time(r, call):
    huge = str(10**14)  # beyond the current Unix time in ms
    fill(r, n=1)
    call("XGROUP", "CREATE", "s", "g", "0")
    call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    call("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0")
    assert call("XPENDING", "s", "g", "IDLE", huge, "-", "+", "10") == [[b"1-0", b"", -1, 1]]
    assert call("XAUTOCLAIM", "s", "g", "b", huge, "0", "JUSTID") == [b"0-0", [b"1-0"], []]
    call("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0")
    assert call("XCLAIM", "s", "g", "c", huge, "1-0", "JUSTID") == [b"1-0"]
