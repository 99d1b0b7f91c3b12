"""HOTKEYS (Redis 8.6): a session that ranks keys by the CPU time and network bytes the
commands on them take."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from tests.conftest import wait_for, error_text as _err

pytestmark = pytest.mark.min_redis("8.6")


@pytest.fixture
def hk(r, call):
    """``call`` (RESP2, raw replies), with no session before or after the test."""
    def clear():
        call("HOTKEYS", "STOP")
        call("HOTKEYS", "RESET")
    clear()
    yield call
    clear()


def _session(call) -> dict:
    reply = call("HOTKEYS", "GET")
    assert isinstance(reply, list) and len(reply) == 1
    flat = reply[0]
    return dict(zip(flat[::2], flat[1::2]))


def _ranking(flat: list) -> list:
    return flat[::2]


def test_no_session_gets_null(hk):
    assert hk("HOTKEYS", "GET") is None
    assert hk("HOTKEYS", "STOP") is None
    assert hk("HOTKEYS", "RESET") == b"OK"


@pytest.mark.parametrize("args, error", [
    ((), "METRICS parameter is required"),
    (("COUNT", "5", "CPU"), "METRICS parameter is required"),
    (("METRICS", "0", "CPU"), "METRICS count must be > 0 and <= 2"),
    (("METRICS", "3", "CPU", "NET", "CPU"), "METRICS count must be > 0 and <= 2"),
    (("METRICS", "x", "CPU"), "METRICS count must be > 0 and <= 2"),
    (("METRICS", "2", "CPU"), "METRICS count does not match number of metric types provided"),
    (("METRICS", "2", "CPU", "CPU"), "METRICS CPU defined more than once!"),
    (("METRICS", "2", "NET", "NET"), "METRICS NET defined more than once!"),
    (("METRICS", "1", "RAM"), "METRICS no valid metrics passed. Supported: CPU|NET"),
    (("METRICS", "1", "CPU", "COUNT", "0"), "COUNT must be between 1 and 64"),
    (("METRICS", "1", "CPU", "COUNT", "65"), "COUNT must be between 1 and 64"),
    (("METRICS", "1", "CPU", "DURATION", "0"), "DURATION must be between 1 and 1000000"),
    (("METRICS", "1", "CPU", "DURATION", "1000001"),
     "DURATION must be between 1 and 1000000"),
    (("METRICS", "1", "CPU", "SAMPLE", "0"), "SAMPLE ratio must be positive"),
    (("METRICS", "1", "CPU", "SAMPLE", "1.5"), "SAMPLE ratio must be positive"),
    (("METRICS", "1", "CPU", "SLOTS", "1", "0"),
     "SLOTS parameter cannot be used in non-cluster mode"),
    (("METRICS", "1", "CPU", "COUNT"), "syntax error"),  # an option without its value
    (("METRICS", "1", "CPU", "NET"), "syntax error"),  # past the count: no option
])
def test_start_validation(hk, args, error):
    assert _err(hk, "HOTKEYS", "START", *args) == error
    assert hk("HOTKEYS", "GET") is None  # nothing started


def test_arity_and_help(hk):
    assert _err(hk, "HOTKEYS") == "wrong number of arguments for 'hotkeys' command"
    assert _err(hk, "HOTKEYS", "GET", "x") == \
        "wrong number of arguments for 'hotkeys|get' command"
    assert _err(hk, "HOTKEYS", "NOPE").startswith("unknown subcommand 'NOPE'")
    help_lines = hk("HOTKEYS", "HELP")
    assert help_lines[0].startswith(b"HOTKEYS <subcommand>")
    assert any(line.startswith(b"START <METRICS count [CPU] [NET]>") for line in help_lines)


def test_session_ranks_keys_by_cpu_and_bytes(hk):
    assert hk("HOTKEYS", "START", "METRICS", "2", "CPU", "NET", "COUNT", "2") == b"OK"
    assert _err(hk, "HOTKEYS", "START", "METRICS", "1", "CPU") == \
        "hotkey tracking session already in progress"
    for _ in range(30):
        hk("SET", "hot", "x" * 1000)
        hk("GET", "hot")
    hk("SET", "warm", "v")
    hk("SET", "cold", "v")
    s = _session(hk)
    assert list(s) == [b"tracking-active", b"sample-ratio", b"selected-slots",
                       b"all-commands-all-slots-us", b"net-bytes-all-commands-all-slots",
                       b"collection-start-time-unix-ms", b"collection-duration-ms",
                       b"total-cpu-time-user-ms", b"total-cpu-time-sys-ms",
                       b"total-net-bytes", b"by-cpu-time-us", b"by-net-bytes"]
    assert s[b"tracking-active"] == 1
    assert s[b"sample-ratio"] == 1
    assert s[b"selected-slots"] == [[0, 16383]]
    assert abs(s[b"collection-start-time-unix-ms"] - time.time() * 1000) < 60_000
    assert _ranking(s[b"by-net-bytes"])[0] == b"hot"
    assert len(_ranking(s[b"by-net-bytes"])) <= 2  # COUNT 2
    assert _ranking(s[b"by-cpu-time-us"])[0] == b"hot"
    # 62 commands of at least 27 bytes each; the SETs of 1000 bytes carry most
    assert s[b"net-bytes-all-commands-all-slots"] > 60_000
    assert s[b"total-net-bytes"] == s[b"net-bytes-all-commands-all-slots"]  # no sampling


def test_only_the_metrics_asked_for(hk):
    hk("HOTKEYS", "START", "METRICS", "1", "NET")
    hk("SET", "k", "v")
    s = _session(hk)
    assert b"by-cpu-time-us" not in s and b"total-cpu-time-user-ms" not in s
    assert _ranking(s[b"by-net-bytes"]) == [b"k"]


def test_commands_without_keys_are_not_counted(hk):
    hk("HOTKEYS", "START", "METRICS", "2", "CPU", "NET")
    for _ in range(20):
        hk("PING")
        hk("DBSIZE")
    s = _session(hk)
    assert s[b"all-commands-all-slots-us"] == 0
    assert s[b"net-bytes-all-commands-all-slots"] == 0
    assert s[b"by-cpu-time-us"] == [] and s[b"by-net-bytes"] == []


def test_stop_keeps_results_until_reset(hk):
    hk("HOTKEYS", "START", "METRICS", "1", "NET")
    hk("SET", "k", "v")
    assert _err(hk, "HOTKEYS", "RESET") == \
        "hotkey tracking session in progress, stop tracking first"
    time.sleep(0.02)
    assert hk("HOTKEYS", "STOP") == b"OK"
    first = _session(hk)
    hk("SET", "other", "v")  # not tracked any more
    time.sleep(0.02)
    second = _session(hk)
    assert first[b"tracking-active"] == 0
    assert first == second  # the duration stopped with the session
    assert first[b"collection-duration-ms"] >= 20
    assert _ranking(second[b"by-net-bytes"]) == [b"k"]
    assert hk("HOTKEYS", "STOP") is None
    assert hk("HOTKEYS", "RESET") == b"OK"
    assert hk("HOTKEYS", "GET") is None


def test_a_new_start_replaces_a_stopped_session(hk):
    hk("HOTKEYS", "START", "METRICS", "1", "NET")
    hk("SET", "old", "v")
    hk("HOTKEYS", "STOP")
    hk("HOTKEYS", "START", "METRICS", "1", "NET", "SAMPLE", "1")
    hk("SET", "new", "v")
    assert _ranking(_session(hk)[b"by-net-bytes"]) == [b"new"]


def test_duration_stops_the_session(hk):
    hk("HOTKEYS", "START", "METRICS", "1", "CPU", "DURATION", "1")
    assert wait_for(lambda: _session(hk)[b"tracking-active"] == 0, timeout=5)
    assert 1000 <= _session(hk)[b"collection-duration-ms"] < 5000


def test_sampling_is_reported(hk):
    hk("HOTKEYS", "START", "METRICS", "1", "NET", "SAMPLE", "1000000")
    for i in range(20):
        hk("SET", f"k{i}", "v")
    s = _session(hk)
    assert s[b"sample-ratio"] == 1000000
    assert s[b"net-bytes-all-commands-all-slots"] > 0  # every command counts here...
    assert s[b"total-net-bytes"] < s[b"net-bytes-all-commands-all-slots"]  # ...few sampled


def test_transaction_commands_count_script_commands_do_not(hk):
    hk("HOTKEYS", "START", "METRICS", "1", "NET")
    hk("MULTI")
    hk("SET", "in-multi", "v")
    hk("EXEC")
    hk("EVAL", "redis.call('SET', KEYS[1], 'v') redis.call('SET', 'undeclared', 'v')",
       "1", "declared")
    ranked = _ranking(_session(hk)[b"by-net-bytes"])
    assert sorted(ranked) == [b"declared", b"in-multi"]


def test_served_blocked_read_counts(hk, make_client):
    hk("HOTKEYS", "START", "METRICS", "1", "NET")
    reader = make_client()
    got = []
    t = threading.Thread(target=lambda: got.append(reader.xread({"s": "$"}, block=5000)))
    t.start()
    assert wait_for(lambda: hk("INFO", "clients").count(b"blocked_clients:1"))
    hk("XADD", "s", "*", "f", "v")
    t.join(5)
    assert got and got[0]
    net = _session(hk)[b"by-net-bytes"]
    assert _ranking(net) == [b"s"]


def test_hotkeys_metadata(hk):
    info = hk("COMMAND", "INFO", "HOTKEYS")[0]
    assert info[0] == b"hotkeys" and info[1] == -2
    subs = {s[0]: s for s in info[9]}
    assert subs[b"hotkeys|start"][1] == -2
    assert subs[b"hotkeys|get"][1] == 2
    assert set(subs[b"hotkeys|start"][2]) == {b"admin", b"noscript"}


@pytest.mark.streamd_only
def test_bytes_are_the_request_and_its_reply(hk):
    hk("HOTKEYS", "START", "METRICS", "1", "NET")
    hk("SET", "k", "v")  # *3 $3 SET $1 k $1 v: 27 bytes in, +OK: 5 out
    s = _session(hk)
    assert s[b"by-net-bytes"] == [b"k", 32]
    hk("MSET", "a", "1", "b", "2")  # 42 bytes in, 5 out: 23 and 24 (the odd byte to one)
    net = dict(zip(*[iter(_session(hk)[b"by-net-bytes"])] * 2))
    assert sorted((net[b"a"], net[b"b"])) == [23, 24]


def test_get_is_an_array_of_one_map_in_resp3(hk):
    hk("HOTKEYS", "START", "METRICS", "1", "CPU")
    hk("SET", "k", "v")
    reply = hk.resp3("HOTKEYS", "GET")
    assert isinstance(reply, list) and len(reply) == 1
    session = reply[0]
    assert isinstance(session, dict)
    assert session[b"tracking-active"] == 1
    assert session[b"selected-slots"] == [[0, 16383]]
    assert b"by-cpu-time-us" in session and b"by-net-bytes" not in session
