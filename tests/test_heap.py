"""How the server process keeps and returns freed memory (``streamd/server/heap.py``)."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap
import time

import pytest
import redis

from streamd.server import heap
from streamd.server.heap import HeapPolicy
from tests.conftest import wait_for
from tests.inprocess import InProcessServer

pytestmark = pytest.mark.streamd_only

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")


class _FakeLibc:
    def __init__(self):
        self.calls = []

    def mallopt(self, param, value):
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))
        return 1


def _trims(libc) -> int:
    return sum(1 for c in libc.calls if c[0] == "malloc_trim")


def test_start_keeps_freed_memory_in_the_heap():
    libc = _FakeLibc()
    HeapPolicy(libc).start()
    assert libc.calls == [("mallopt", heap.M_TRIM_THRESHOLD, heap.TRIM_MAX),
                          ("mallopt", heap.M_MMAP_THRESHOLD, heap.MMAP_MIN)]


def test_trims_once_writes_have_stopped_for_the_decay_time():
    libc = _FakeLibc()
    p = HeapPolicy(libc)
    p.tick(0, 0.0)
    p.tick(0, 100.0)
    assert _trims(libc) == 0  # no write ever: nothing was freed by the dataset
    p.tick(5, 100.0)
    p.tick(5, 100.0 + heap.DECAY - 0.1)
    assert _trims(libc) == 0
    p.tick(5, 100.0 + heap.DECAY)
    assert _trims(libc) == 1
    p.tick(5, 200.0)
    assert _trims(libc) == 1  # once per quiet period
    for t in range(300, 400):  # a write every second: the memory is in use, keep it
        p.tick(t, float(t))
    assert _trims(libc) == 1
    p.tick(399, 399.0 + heap.DECAY)
    assert _trims(libc) == 2
    assert p.trims == 2


@glibc
def test_load_finds_glibc():
    assert HeapPolicy.load() is not None


@glibc
@pytest.mark.parametrize("policy", [False, True])
def test_a_stream_rebuilt_after_delete_reuses_the_memory(policy):
    # In a child process: mallopt's settings are process-wide. Page faults count the pages
    # taken from the system: each build of 100k entries of 512 bytes needs about 14k.
    script = textwrap.dedent(f"""
        import resource
        from streamd.server.heap import HeapPolicy
        from streamd.store.stream import Stream

        p = HeapPolicy.load()
        if {policy}:
            p.start()

        def faults_to_build():
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            s = Stream()
            for i in range(1, 100_001):
                s.append(i << 64, [b"f", b"v" * 512], 100, 4096)
            return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, s

        first, s = faults_to_build()
        del s
        again, s = faults_to_build()
        del s
        p.trim()
        trimmed, s = faults_to_build()
        print(first, again, trimmed)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    first, again, trimmed = map(int, out.split())
    assert first > 10_000
    if policy:
        assert again < first * 0.4  # the freed pages were kept and reused
    else:
        assert again > first * 0.7  # glibc's default gave them back at the delete
    assert trimmed > first * 0.7  # a trim gives them back


def test_memory_purge_trims_the_heap():
    libc = _FakeLibc()
    with InProcessServer() as srv:
        srv.server.heap_policy = HeapPolicy(libc)
        r = redis.Redis(port=srv.port)
        assert r.memory_purge() is True
        r.close()
    assert _trims(libc) == 1


def test_the_cron_trims_after_writes_stop(monkeypatch):
    monkeypatch.setattr(heap, "DECAY", 0.3)
    libc = _FakeLibc()
    with InProcessServer() as srv:
        srv.server.heap_policy = HeapPolicy(libc)
        r = redis.Redis(port=srv.port)
        r.xadd("s", {"f": "v"})
        assert wait_for(lambda: _trims(libc) == 1, timeout=5)
        r.xrange("s")  # a read is no write: nothing new to give back
        r.xlen("s")
        time.sleep(0.6)
        assert _trims(libc) == 1
        r.delete("s")
        assert wait_for(lambda: _trims(libc) == 2, timeout=5)
        r.close()
