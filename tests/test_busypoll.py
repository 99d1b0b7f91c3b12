"""Busy polling after reads (``server/busypoll.py``): when a window opens, how long the loop
keeps polling, that it stops, and where it is off."""

from __future__ import annotations

import time

import pytest
import redis

from streamd.embed import EmbeddedServer
from streamd.server import busypoll
from streamd.server.busypoll import BusyPoll

from .conftest import FakeLoop
from .test_cli import start, stop

pytestmark = pytest.mark.streamd_only


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def poll(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(busypoll, "perf_counter", clock)
    monkeypatch.setattr(busypoll, "cpus_available", lambda: 2)
    bp = BusyPoll()
    bp.loop = FakeLoop()
    bp.configure(100)  # µs
    return bp, clock


def _read(bp: BusyPoll) -> None:
    """What a client does per read (Client.data_received)."""
    if bp.polling:
        bp.active = True
    else:
        bp.wake()


def test_a_read_after_a_long_idle_opens_no_window(poll):
    bp, clock = poll
    _read(bp)
    assert not bp.polling and not bp.loop.callbacks
    clock.now += 1.0
    _read(bp)
    assert not bp.polling


def test_a_read_soon_after_the_last_opens_a_window_that_reads_keep_open(poll):
    bp, clock = poll
    _read(bp)
    clock.now += 60e-6  # within the 100 µs window of the last read
    _read(bp)
    assert bp.polling and len(bp.loop.callbacks) == 1
    for _ in range(20):  # a client answering every 80 µs keeps the loop polling
        clock.now += 80e-6
        _read(bp)
        assert bp.loop.run_iteration_end() == 1 and bp.polling
    # No read: the loop polls until 100 µs after the last read, then goes idle.
    clock.now += 50e-6
    assert bp.loop.run_iteration_end() == 1 and bp.polling
    clock.now += 51e-6
    assert bp.loop.run_iteration_end() == 1
    assert not bp.polling and not bp.loop.callbacks


def test_a_client_slower_than_the_window_stops_polling(poll):
    bp, clock = poll
    _read(bp)
    clock.now += 10e-6
    _read(bp)
    assert bp.polling
    clock.now += 101e-6
    bp.loop.run_iteration_end()
    assert not bp.polling  # the window ended without a read
    clock.now += 150e-6  # the next read comes 150 µs after the loop went idle
    _read(bp)
    assert not bp.polling and not bp.loop.callbacks


@pytest.mark.parametrize("window_us, cpus", [(0, 8), (100, 1), (100, 1.5)])
def test_off_with_a_zero_window_or_one_cpu(monkeypatch, window_us, cpus):
    clock = _Clock()
    monkeypatch.setattr(busypoll, "perf_counter", clock)
    monkeypatch.setattr(busypoll, "cpus_available", lambda: cpus)
    bp = BusyPoll()
    bp.loop = FakeLoop()
    bp.configure(window_us)
    assert bp.window == 0
    for _ in range(3):
        clock.now += 1e-6
        _read(bp)
    assert not bp.polling and not bp.loop.callbacks


def test_config_set_changes_the_window_and_the_embedded_default_is_off(monkeypatch):
    monkeypatch.setattr(busypoll, "cpus_available", lambda: 2)
    with EmbeddedServer() as srv:
        r = redis.Redis(port=srv.port)
        assert r.config_get("streamd-busy-poll-us") == {"streamd-busy-poll-us": "0"}
        assert srv.server.busy.window == 0
        assert r.config_set("streamd-busy-poll-us", 250)
        assert srv.server.busy.window == pytest.approx(250e-6)
        with pytest.raises(redis.ResponseError) as exc:
            r.config_set("streamd-busy-poll-us", -1)
        assert str(exc.value) == ("CONFIG SET failed (possibly related to argument "
                                  "'streamd-busy-poll-us') - argument must be between 0 and 1000000 "
                                  "inclusive")
        assert r.ping()  # traffic with polling on: served as ever
        r.close()


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks


@pytest.mark.skipif(busypoll.cpus_available() < 2, reason="polling is off on one CPU")
def test_the_server_polls_by_default_and_goes_idle_after_the_traffic():
    proc, port, _ = start("--port", "0")
    try:
        r = redis.Redis(port=port)
        assert r.config_get("streamd-busy-poll-us") == {"streamd-busy-poll-us": "100"}
        for i in range(2000):  # back-to-back requests: the loop polls between them
            r.xadd("s", {"f": i})
        assert r.xlen("s") == 2000
        time.sleep(0.2)
        before = _cpu_seconds(proc.pid)
        time.sleep(1.0)
        # Idle: the cron's ten ticks a second, no polling (which would use the whole second).
        assert _cpu_seconds(proc.pid) - before < 0.3
        r.close()
    finally:
        stop(proc)


# --- CPU quotas: what a container's --cpus sets, which the affinity mask does not show -----

def _tree(tmp_path, cgroup_lines: list[str], files: dict[str, str]):
    proc = tmp_path / "cgroup"
    proc.write_text("".join(line + "\n" for line in cgroup_lines))
    root = tmp_path / "fs"
    root.mkdir()
    for rel, text in files.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return str(proc), str(root)


@pytest.mark.parametrize("lines, files, quota", [
    # cgroup v2 in a container: the namespace root holds the limit
    (["0::/"], {"cpu.max": "150000 100000\n"}, 1.5),
    (["0::/"], {"cpu.max": "max 100000\n"}, None),
    # v2 without a namespace: the smallest limit along the path counts
    (["0::/a/b"], {"cpu.max": "max 100000\n", "a/cpu.max": "100000 100000\n",
                   "a/b/cpu.max": "400000 100000\n"}, 1.0),
    # cgroup v1, the cpu controller mounted with cpuacct; -1 is no quota
    (["4:memory:/x", "2:cpu,cpuacct:/"], {"cpu,cpuacct/cpu.cfs_quota_us": "50000\n",
                                          "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 0.5),
    (["1:cpu:/"], {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    # v1 with the host's path, mounted as the container's own cgroup: the path is walked up
    (["3:cpu,cpuacct:/docker/abc"], {"cpu/cpu.cfs_quota_us": "200000\n",
                                     "cpu/cpu.cfs_period_us": "100000\n"}, 2.0),
    # a hybrid host: v2 mounted with no cpu controller, v1 cpu with no quota
    (["1:cpu:/", "0::/"], {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n",
                           "unified/cgroup.procs": ""}, None),
    (["garbage", "0::/"], {"cpu.max": "bad\n"}, None),
])
def test_the_cgroup_cpu_quota_is_read_from_v1_and_v2(tmp_path, lines, files, quota):
    proc, root = _tree(tmp_path, lines, files)
    assert busypoll.cgroup_cpu_quota(proc, root) == quota


def test_no_cgroup_file_means_no_quota(tmp_path):
    assert busypoll.cgroup_cpu_quota(str(tmp_path / "missing"), str(tmp_path)) is None


def test_a_quota_bounds_the_cpus_available(monkeypatch):
    monkeypatch.setattr(busypoll.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(busypoll, "cgroup_cpu_quota", lambda: 1.0)
    assert busypoll.cpus_available() == 1.0
    monkeypatch.setattr(busypoll, "cgroup_cpu_quota", lambda: None)
    assert busypoll.cpus_available() == 4
