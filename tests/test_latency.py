"""Latency tracking (INFO latencystats, LATENCY HISTOGRAM, latency-tracking and
latency-tracking-info-percentiles) and the latency monitor (latency-monitor-threshold,
LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR), as Redis 7.0 has them.

Replies recorded from redis-server 7.0.15; the tests run against a real Redis too
(``--redis-url``). Durations are timings: these tests check names, shapes, counts and the
bucket layout, not microseconds. The streamd-only tests at the end feed streamd's
formatting known durations and compare with what Redis 7.0.15 printed for them.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
import redis

from tests.conftest import encode_request as enc
from tests.test_stream_blocking import send, wait_blocked

# LATENCY HISTOGRAM's bucket names: the powers of two from 1024 ns, each named by the
# highest value of its HDR bucket, in microseconds (1, 2, 4, 8, 16, 33, 66, 132, ...).
_STEPS = [((1024 << k) + (8 << k) - 1) // 1000 for k in range(20)] + [1073741]


@pytest.fixture(autouse=True)
def _latency_defaults(r):
    yield
    r.config_set("latency-tracking", "yes")
    r.config_set("latency-tracking-info-percentiles", "50 99 99.9")
    r.config_set("latency-monitor-threshold", 0)
    r.execute_command("LATENCY", "RESET")


def _bulk(reply: bytes) -> bytes:
    head, _, rest = reply.partition(b"\r\n")
    assert head[:1] == b"$"
    return rest[:int(head[1:])]


def latencystats(wire) -> dict[str, dict[str, float]]:
    text = _bulk(wire("INFO", "latencystats")).decode()
    lines = text.split("\r\n")
    assert lines[0] == "# Latencystats" and lines[-1] == ""
    out = {}
    for line in lines[1:-1]:
        m = re.fullmatch(r"latency_percentiles_usec_([a-z|-]+):(.*)", line)
        assert m, line
        out[m[1]] = {}
        for part in m[2].split(",") if m[2] else ():
            label, value = part.split("=")
            assert re.fullmatch(r"\d+\.\d{3}", value), line
            out[m[1]][label] = float(value)
    return out


def histograms(call, *names) -> list[tuple[str, int, list[tuple[int, int]]]]:
    """LATENCY HISTOGRAM as (command, calls, [(bucket, calls up to it)]), in reply order."""
    reply = call("LATENCY", "HISTOGRAM", *names)
    out = []
    for name, body in zip(reply[::2], reply[1::2]):
        assert body[0] == b"calls" and body[2] == b"histogram_usec"
        flat = body[3]
        out.append((name.decode(), body[1], list(zip(flat[::2], flat[1::2]))))
    return out


def _check_layout(calls: int, steps: list[tuple[int, int]]) -> None:
    keys = [k for k, _ in steps]
    counts = [n for _, n in steps]
    assert keys and all(k in _STEPS for k in keys)
    assert keys == sorted(set(keys))
    assert counts == sorted(set(counts)) and counts[-1] == calls


def _ends_an_hdr_bucket(usec: float) -> bool:
    """Redis's percentiles name the highest value of an HDR bucket (2 significant digits:
    exact below 256 ns, then 128 buckets per power of two)."""
    ns = round(usec * 1000)
    return ns < 256 or (ns + 1) % (1 << (ns.bit_length() - 8)) == 0


# --- INFO latencystats ---------------------------------------------------------------------

def test_latencystats_shows_the_commands_called(wire):
    wire("CONFIG", "RESETSTAT")
    for args in (("PING",), ("PING",), ("CLIENT", "LIST"), ("SET", "k", "v"), ("GET", "k")):
        wire(*args)
    stats = latencystats(wire)
    assert set(stats) == {"config|resetstat", "ping", "client|list", "set", "get"}
    for name, values in stats.items():
        assert list(values) == ["p50", "p99", "p99.9"]
        assert values["p50"] <= values["p99"] <= values["p99.9"]
        assert all(_ends_an_hdr_bucket(v) for v in values.values())


def test_config_resetstat_clears_the_latency_figures(wire, call):
    call("PING")
    assert histograms(call, "ping")
    call("CONFIG", "RESETSTAT")
    assert histograms(call, "ping") == []
    assert {name for name, _, _ in histograms(call)} == {"config|resetstat",
                                                          "latency|histogram"}
    assert set(latencystats(wire)) == {"config|resetstat", "latency|histogram"}


def test_latency_tracking_off_hides_and_stops_the_figures(wire):
    wire("CONFIG", "RESETSTAT")
    wire("PING")
    assert wire("CONFIG", "SET", "latency-tracking", "no") == b"+OK\r\n"
    assert wire("INFO", "latencystats") == b"$16\r\n# Latencystats\r\n\r\n"
    for _ in range(3):
        wire("PING")
    # What was kept still shows in LATENCY HISTOGRAM; the calls made meanwhile are not in it.
    assert re.fullmatch(rb"\*2\r\n\$4\r\nping\r\n\*4\r\n\$5\r\ncalls\r\n:1\r\n"
                        rb"\$14\r\nhistogram_usec\r\n\*2\r\n:\d+\r\n:1\r\n",
                        wire("LATENCY", "HISTOGRAM", "ping"))
    # commandstats counts them all.
    assert b"cmdstat_ping:calls=4," in _bulk(wire("INFO", "commandstats"))
    wire("CONFIG", "SET", "latency-tracking", "yes")
    wire("PING")
    assert b":2\r\n" in wire("LATENCY", "HISTOGRAM", "ping")
    assert "ping" in latencystats(wire)


_PERCENTILES_ERR = (b"-ERR CONFIG SET failed (possibly related to argument "
                    b"'latency-tracking-info-percentiles') - ")


@pytest.mark.parametrize("value, shown", [
    ("50 99 99.9", b"50 99 99.9"), ("50.0 99", b"50 99"), ("1e1 2.50", b"10 2.5"),
    ("0.0001 33.333333333", b"0.0001 33.333333"), ("0x10", b"16"), ("0 100", b"0 100"),
    ("", b""),
])
def test_percentiles_config_values(wire, value, shown):
    assert wire("CONFIG", "SET", "latency-tracking-info-percentiles", value) == b"+OK\r\n"
    assert wire("CONFIG", "GET", "latency-tracking-info-percentiles") == (
        b"*2\r\n$33\r\nlatency-tracking-info-percentiles\r\n$%d\r\n%s\r\n"
        % (len(shown), shown))


@pytest.mark.parametrize("value, reason", [
    ("abc", b"Invalid latency-tracking-info-percentiles parameters"),
    ("50  99", b"Invalid latency-tracking-info-percentiles parameters"),
    (" 50", b"Invalid latency-tracking-info-percentiles parameters"),
    ("nan", b"Invalid latency-tracking-info-percentiles parameters"),
    ("1e999", b"Invalid latency-tracking-info-percentiles parameters"),
    ("101", b"latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
    ("-1", b"latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
    ("inf", b"latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
])
def test_percentiles_config_errors_keep_the_value(wire, value, reason):
    wire("CONFIG", "SET", "latency-tracking-info-percentiles", "10 20")
    assert wire("CONFIG", "SET", "latency-tracking-info-percentiles", value) == (
        _PERCENTILES_ERR + reason + b"\r\n")
    assert wire("CONFIG", "GET", "latency-tracking-info-percentiles").endswith(
        b"$5\r\n10 20\r\n")


def test_percentiles_config_names_the_info_fields(wire):
    wire("PING")
    wire("CONFIG", "SET", "latency-tracking-info-percentiles", "0 100 2.5")
    stats = latencystats(wire)
    assert list(stats["ping"]) == ["p0", "p100", "p2.5"]
    assert stats["ping"]["p0"] <= stats["ping"]["p2.5"] <= stats["ping"]["p100"]
    wire("CONFIG", "SET", "latency-tracking-info-percentiles", "")
    assert b"\r\nlatency_percentiles_usec_ping:\r\n" in wire("INFO", "latencystats")


@pytest.mark.streamd_only
def test_percentiles_in_the_config_file_and_its_rewrite(tmp_path):
    """As Redis 7.0.15 read and rewrote its own config file: one word per percentile
    (quoted or not, spaces between them collapse), rewritten in CONFIG GET's form and
    always written, "" for none."""
    from streamd.config import Config
    conf = tmp_path / "streamd.conf"
    conf.write_text('latency-tracking-info-percentiles 50   99.5 "1e1"\n')
    config = Config()
    config.file = str(conf)
    config.load_file(str(conf))
    assert str(config["latency-tracking-info-percentiles"]) == "50 99.5 10"
    config.rewrite()
    assert conf.read_text().splitlines()[0] == "latency-tracking-info-percentiles 50 99.5 10"
    config.set("latency-tracking-info-percentiles", "")
    config.rewrite()
    assert conf.read_text().splitlines()[0] == 'latency-tracking-info-percentiles ""'
    config.load_file(str(conf))
    assert str(config["latency-tracking-info-percentiles"]) == ""


# --- LATENCY HISTOGRAM ---------------------------------------------------------------------

def test_latency_histogram_reply_shape(wire):
    wire("CONFIG", "RESETSTAT")
    wire("PING")
    assert re.fullmatch(rb"\*2\r\n\$4\r\nping\r\n\*4\r\n\$5\r\ncalls\r\n:1\r\n"
                        rb"\$14\r\nhistogram_usec\r\n\*2\r\n:(\d+)\r\n:1\r\n",
                        wire("LATENCY", "HISTOGRAM", "ping"))
    assert re.fullmatch(rb"%1\r\n\$4\r\nping\r\n%2\r\n\$5\r\ncalls\r\n:1\r\n"
                        rb"\$14\r\nhistogram_usec\r\n%1\r\n:(\d+)\r\n:1\r\n",
                        wire.resp3("LATENCY", "HISTOGRAM", "ping"))


def test_latency_histogram_buckets_and_calls(call):
    call("CONFIG", "RESETSTAT")
    for i in range(300):
        call("SET", f"k{i}", "v")
    for _ in range(5):
        call("PING")
    call("MSET", *[f"m{i}" for i in range(20000)])  # a slower command
    call("KEYS", "*")
    got = histograms(call, "ping", "set", "nosuch", "PING", "keys", "mset")
    assert [name for name, _, _ in got] == ["ping", "set", "ping", "keys", "mset"]
    calls = {name: n for name, n, _ in got}
    assert calls == {"ping": 5, "set": 300, "keys": 1, "mset": 1}
    for _, n, steps in got:
        _check_layout(n, steps)
    everything = histograms(call)
    assert {name for name, _, _ in everything} == {"config|resetstat", "set", "ping", "mset",
                                                  "keys", "latency|histogram"}
    for _, n, steps in everything:
        _check_layout(n, steps)


def test_latency_histogram_names_containers_and_subcommands(call):
    call("CONFIG", "RESETSTAT")
    call("CLIENT", "LIST")
    call("CLIENT", "GETNAME")
    call("COMMAND", "COUNT")
    call("COMMAND")
    assert sorted(name for name, _, _ in histograms(call, "client")) == [
        "client|getname", "client|list"]
    assert [name for name, _, _ in histograms(call, "CLIENT|LIST", "client|nosuch",
                                              "ping|x", "client|list|x")] == ["client|list"]
    assert sorted(name for name, _, _ in histograms(call, "command")) == [
        "command", "command|count"]


def test_pipelined_commands_each_count(raw, call):
    call("CONFIG", "RESETSTAT")
    c = raw()
    c.send(enc("PING") * 20 + enc("XADD", "s", "*", "f", "v") * 10 + enc("GET", "k") * 7)
    for _ in range(37):
        c.read_reply()
    calls = {name: n for name, n, _ in histograms(call, "ping", "xadd", "get")}
    assert calls == {"ping": 20, "xadd": 10, "get": 7}


def test_blocked_commands_in_the_histogram(r, raw, call):
    call("CONFIG", "RESETSTAT")
    c = raw()
    # Timed out: a call for commandstats, none for the histogram.
    send(c, "XREAD", "BLOCK", "50", "STREAMS", "s", "$")
    assert c.read_reply() == b"*-1\r\n"
    assert histograms(call, "xread") == []
    assert r.info("commandstats")["cmdstat_xread"]["calls"] == 1
    # Served: counted once, when it completes.
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    call("XADD", "s", "1-1", "f", "v")
    c.read_reply()
    [(name, n, steps)] = histograms(call, "xread")
    assert (name, n) == ("xread", 1)
    _check_layout(n, steps)


# --- latency monitor -----------------------------------------------------------------------

def _fill(r, n: int) -> None:
    """``n`` keys, so that KEYS takes milliseconds."""
    pipe = r.pipeline(transaction=False)
    for i in range(0, n, 1000):
        pipe.mset({f"key:{j}": "v" for j in range(i, i + 1000)})
    pipe.execute()


_CALM = (b"Dave, no latency spike was observed during the lifetime of this Redis instance, "
         b"not in the slightest bit. I honestly think you ought to sit down calmly, take a "
         b"stress pill, and think things over.\n")


def test_doctor_with_monitoring_on_and_no_events(wire):
    wire("CONFIG", "SET", "latency-monitor-threshold", "100")
    wire("LATENCY", "RESET")
    assert wire("LATENCY", "DOCTOR") == b"$%d\r\n%s\r\n" % (len(_CALM), _CALM)
    assert wire.resp3("LATENCY", "DOCTOR") == b"=%d\r\ntxt:%s\r\n" % (len(_CALM) + 4, _CALM)


def test_monitor_off_by_default_records_nothing(r, call):
    assert r.config_get("latency-monitor-threshold") == {"latency-monitor-threshold": "0"}
    _fill(r, 100_000)
    call("KEYS", "nomatch*")
    assert call("LATENCY", "LATEST") == []
    assert call("LATENCY", "HISTORY", "command") == []


def test_monitor_records_a_slow_command(r, call):
    _fill(r, 100_000)
    call("LATENCY", "RESET")
    r.config_set("latency-monitor-threshold", 1)
    call("KEYS", "nomatch*")  # not a fast command: the event is "command"
    now = int(call("TIME")[0])
    latest = {entry[0]: entry[1:] for entry in call("LATENCY", "LATEST")}
    when, ms, worst = latest[b"command"]
    assert abs(when - now) <= 2 and 1 <= ms <= worst
    history = call("LATENCY", "HISTORY", "command")
    assert history and history[-1] == [when, ms]
    times = [t for t, _ in history]
    assert times == sorted(set(times))  # one sample per second
    assert call("LATENCY", "HISTORY", "COMMAND") == []  # event names are case-sensitive
    graph = call("LATENCY", "GRAPH", "command").decode()
    lines = graph.split("\n")
    assert re.fullmatch(r"command - high \d+ ms, low \d+ ms \(all time high %d ms\)" % worst,
                        lines[0])
    assert lines[1] == "-" * 80
    doctor = call("LATENCY", "DOCTOR").decode()
    assert doctor.startswith("Dave, I have observed latency spikes in this Redis instance. "
                             "You don't mind talking about it, do you Dave?\n\n")
    assert re.search(r"\n\d+\. command: \d+ latency spikes \(average \d+ms, mean deviation "
                     r"\d+ms, period \d+\.\d\d sec\)\. Worst all time event %dms\.\n" % worst,
                     doctor)
    assert ("- Your current Slow Log configuration only logs events that are slower than "
            "your configured latency monitor threshold. Please use 'CONFIG SET "
            "slowlog-log-slower-than 1000'.\n") in doctor
    assert call("LATENCY", "RESET", "command", "nosuch", "command") == 1
    assert b"command" not in [entry[0] for entry in call("LATENCY", "LATEST")]
    with pytest.raises(redis.ResponseError, match="^No samples available for event 'command'$"):
        call("LATENCY", "GRAPH", "command")


def test_monitor_names_a_slow_fast_command(r, call):
    _fill(r, 100_000)
    call("LATENCY", "RESET")
    r.config_set("latency-monitor-threshold", 1)
    assert call("EXISTS", *[f"key:{i}" for i in range(100_000)]) == 100_000
    latest = {entry[0]: entry[1:] for entry in call("LATENCY", "LATEST")}
    assert latest[b"fast-command"][1] >= 1


# --- streamd's formatting against what Redis 7.0.15 printed ---------------------------------

def _fake_command(*usecs):
    from streamd.server.latency import Latency
    cmd = SimpleNamespace(hist=[], hist_big={}, shadow=[], lat=[], usec=0, more_calls=0,
                          bare=None)
    tracker = Latency()
    for u in usecs:
        tracker.record(cmd, u)
    return cmd


@pytest.mark.streamd_only
@pytest.mark.parametrize("usecs, line, steps", [
    ((1,), "p50=1.003,p99=1.003,p99.9=1.003", [(1, 1)]),
    ((7,), "p50=7.007,p99=7.007,p99.9=7.007", [(8, 1)]),
    ((14,), "p50=14.015,p99=14.015,p99.9=14.015", [(16, 1)]),
    ((60,), "p50=60.159,p99=60.159,p99.9=60.159", [(66, 1)]),
    ((81,), "p50=81.407,p99=81.407,p99.9=81.407", [(132, 1)]),
    ((6, 7), "p50=6.015,p99=7.007,p99.9=7.007", [(8, 2)]),
    ((26, 75), "p50=26.111,p99=75.263,p99.9=75.263", [(33, 1), (132, 2)]),
    # Beyond the per-microsecond counts: 300 µs and 70 ms fall in wider buckets.
    ((0, 1, 2, 3, 300, 70_000), "p50=2.007,p99=70254.591,p99.9=70254.591",
     [(1, 2), (2, 3), (4, 4), (528, 5), (135266, 6)]),
])
def test_figures_of_known_durations(usecs, line, steps):
    """INFO's percentiles and LATENCY HISTOGRAM's buckets of these durations: the single
    ones and the (6, 7) pair as Redis 7.0.15 printed them (its commandstats told the
    microseconds), the others by the same HDR rules."""
    from streamd.commands.latencystats import cdf, percentiles_line
    cmd = _fake_command(*usecs)
    assert percentiles_line(cmd, "x", (50, 99, 99.9)) == "latency_percentiles_usec_x:" + line
    assert cdf(cmd) == (len(usecs), steps)


def _series(*samples, worst=None):
    from streamd.server.latency import Series
    series = Series()
    for t, ms in samples:
        series.samples.append([t, ms])
    series.max = worst if worst is not None else max(ms for _, ms in samples)
    return series


@pytest.mark.streamd_only
def test_graph_text_as_redis_draws_it():
    from streamd.commands.ops import latency_graph_text
    now = 1795531641
    series = _series((now - 4, 13), (now - 3, 33), (now - 2, 13))
    assert latency_graph_text("command", series, now) == (
        "command - high 33 ms, low 13 ms (all time high 33 ms)\n" + "-" * 80 + "\n"
        " # \n | \n | \n_|_\n   \n432\nsss\n")
    single = _series((now - 3, 11))
    assert latency_graph_text("command", single, now) == (
        "command - high 11 ms, low 11 ms (all time high 11 ms)\n" + "-" * 80 + "\n"
        " \n \n \n_\n \n3\ns\n")


_ADVICE_INSPECT = (
    "- Check your Slow Log to understand what are the commands you are running which are "
    "too slow to execute. Please check https://redis.io/commands/slowlog for more "
    "information.\n")
_ADVICE_LARGE = (
    "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a "
    "blocking operation. If you have very large objects that are often deleted, expired, "
    "or evicted, try to fragment those objects into multiple smaller objects.\n")


@pytest.mark.streamd_only
def test_doctor_text_as_redis_writes_it():
    from streamd.commands.ops import latency_report
    now = 1795531641
    events = {"fast-command": _series((now - 4, 18), (now - 1, 18)),
              "command": _series((now - 4, 13), (now - 3, 33), (now - 2, 13))}
    assert latency_report(events, 1, 10000, 128, now) == (
        "Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
        "about it, do you Dave?\n\n"
        "1. fast-command: 2 latency spikes (average 18ms, mean deviation 0ms, period 2.00 "
        "sec). Worst all time event 18ms.\n"
        "2. command: 3 latency spikes (average 19ms, mean deviation 8ms, period 1.33 sec). "
        "Worst all time event 33ms.\n"
        "\nI have a few advices for you:\n\n"
        "- Your current Slow Log configuration only logs events that are slower than your "
        "configured latency monitor threshold. Please use 'CONFIG SET "
        "slowlog-log-slower-than 1000'.\n" + _ADVICE_INSPECT +
        "- The system is slow to execute Redis code paths not containing system calls. This "
        "usually means the system does not provide Redis CPU time to run for long periods. "
        "You should try to:\n"
        "  1) Lower the system load.\n"
        "  2) Use a computer / VM just for Redis if you are running other software in the "
        "same system.\n"
        "  3) Check if you have a \"noisy neighbour\" problem.\n"
        "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency "
        "in your system.\n"
        "  5) Check if the problem is allocator-related by recompiling Redis with "
        "MALLOC=libc, if you are using Jemalloc. However this may create fragmentation "
        "problems.\n" + _ADVICE_LARGE)
    # The slow log off (a negative threshold): the advice is to turn it on. With the
    # monitor turned off again, the events kept are still reported.
    one = {"command": _series((now - 1, 13))}
    assert latency_report(one, 1, -1, 128, now) == (
        "Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
        "about it, do you Dave?\n\n"
        "1. command: 1 latency spikes (average 13ms, mean deviation 0ms, period 1.00 sec). "
        "Worst all time event 13ms.\n"
        "\nI have a few advices for you:\n\n"
        "- There are latency issues with potentially slow commands you are using. Try to "
        "enable the Slow Log Redis feature using the command 'CONFIG SET "
        "slowlog-log-slower-than 1000'. If the Slow log is disabled Redis is not able to log "
        "slow commands execution for you.\n" + _ADVICE_INSPECT + _ADVICE_LARGE)
    assert "'CONFIG SET slowlog-log-slower-than 0'.\n" in latency_report(
        {"command": _series((now - 3, 13))}, 0, 10000, 128, now)


@pytest.mark.streamd_only
def test_one_sample_per_second_and_at_most_160(monkeypatch):
    from streamd.server import latency as mod
    clock = [1000.2]
    monkeypatch.setattr(mod.time, "time", lambda: clock[0])
    tracker = mod.Latency()
    tracker.add_sample("command", 5)
    tracker.add_sample("command", 9)  # same second: the sample is raised
    tracker.add_sample("command", 2)  # same second, lower: kept as it was
    assert list(tracker.events["command"].samples) == [[1000, 9]]
    for i in range(1, 200):
        clock[0] = 1000.5 + i
        tracker.add_sample("command", i % 7)
    series = tracker.events["command"]
    assert len(series.samples) == 160
    assert series.samples[0][0] == 1000 + 199 - 159 and series.samples[-1] == [1199, 199 % 7]
    assert series.max == 9
    assert tracker.reset(["command", "command", "x"]) == 1
    assert tracker.events == {}
