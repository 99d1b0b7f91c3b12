"""The server process's garbage-collector policy and the cycle-free structures it relies
on (``streamd/server/gcpolicy.py``)."""

from __future__ import annotations

import gc
import time
import weakref

import pytest
import redis

from streamd.server import gcpolicy
from streamd.server.gcpolicy import GcPolicy
from tests.inprocess import InProcessServer

pytestmark = pytest.mark.streamd_only


class _Cyclic:
    def __init__(self):
        self.me = self


@pytest.fixture
def policy():
    enabled = gc.isenabled()
    gc.disable()  # only the collections the test makes
    p = GcPolicy()
    p.start()
    yield p
    gc.unfreeze()
    if enabled:
        gc.enable()


def _full_collections() -> int:
    return gc.get_stats()[2]["collections"]


def _frozen(objs) -> bool:
    # gc.get_objects() walks generations 0-2 only, never the permanent (frozen) one. The
    # freeze count itself is no measure here: frozen objects that other threads of the test
    # process free by reference counting (earlier tests' servers) lower it at any time.
    ids = {id(o) for o in objs}
    return not any(id(o) in ids for o in gc.get_objects()) and all(map(gc.is_tracked, objs))


def test_survivors_of_a_full_collection_are_frozen(policy):
    full = _full_collections()
    kept = [[i] for i in range(1000)]
    policy.tick()
    assert _full_collections() == full  # nothing reached the oldest generation: no work
    assert not _frozen(kept)
    gc.collect()
    policy.tick()
    assert _frozen(kept)


def test_reclaim_collects_cyclic_garbage_that_was_frozen(policy):
    objs = [_Cyclic() for _ in range(500)]
    gc.collect()
    policy.tick()  # the cycles are alive: frozen with the other survivors
    ref = weakref.ref(objs[0])
    del objs
    assert ref() is not None  # garbage now, but frozen: not collected...
    gc.collect()
    assert ref() is not None
    assert policy.reclaim() >= 500  # ...until a reclaim
    assert ref() is None


def test_reclaim_when_peak_memory_doubles(policy, monkeypatch):
    monkeypatch.setattr(gcpolicy, "FLOOR", 0)
    rss = [policy._base]
    monkeypatch.setattr(gcpolicy, "peak_rss", lambda: rss[0])
    gc.collect()
    policy.tick()
    assert policy.reclaims == 0  # a full collection, no growth: survivors frozen only
    rss[0] = 2 * rss[0] + 1
    gc.collect()
    policy.tick()
    assert policy.reclaims == 1
    assert policy._base == rss[0]


def test_peak_rss_is_bytes():
    assert 1 << 20 < gcpolicy.peak_rss() < 1 << 40


def _wait(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.01)


def _pending_entries() -> int:
    # Garbage stays tracked until collected, so this also counts an uncollected ring.
    return sum(1 for o in gc.get_objects() if type(o).__name__ == "PendingEntry")


def test_closed_clients_and_dropped_groups_need_no_cycle_collection():
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        with InProcessServer() as srv:
            r = redis.Redis(port=srv.port)
            c = redis.Redis(port=srv.port, single_connection_client=True)
            c.client_setname("gc-test")
            server = srv.server
            ours = [cl for cl in list(server.clients.values()) if cl.name == b"gc-test"]
            assert len(ours) == 1
            client = weakref.ref(ours[0])
            del ours
            c.close()
            _wait(lambda: all(cl.name != b"gc-test" for cl in list(server.clients.values())))
            _wait(lambda: client() is None)

            before = _pending_entries()
            r.xadd("s", {"f": "v"})
            r.xadd("s", {"f": "v"})
            r.xgroup_create("s", "g", "0")
            r.xreadgroup("g", "c", {"s": ">"})
            assert _pending_entries() == before + 3  # two entries and the ring's sentinel
            r.xgroup_destroy("s", "g")
            _wait(lambda: _pending_entries() == before)
            r.close()
    finally:
        if enabled:
            gc.enable()
