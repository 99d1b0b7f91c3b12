"""Unit tests of streamd.store.groups: the PEL structures, entries_read/lag rules (§4.4),
the "referenced" rule (§4.6) and copy(). No server involved."""

from __future__ import annotations

import random

import pytest

from streamd.store.groups import (UNKNOWN, ConsumerGroup, SortedIds, drop_references,
                                  estimate_entries_read, has_tombstone_from, is_referenced)
from streamd.store.stream import Stream
from streamd.store.streamid import make_id


def sid(ms, seq=0):
    return make_id(ms, seq)


def stream_with(n):
    s = Stream()
    for i in range(1, n + 1):
        s.append(sid(i), [b"f", b"v"], 100, 4096)
    return s


def time_order(g):
    return [pe.id for pe in g.by_time()]


# --- SortedIds ----------------------------------------------------------------------------

def test_sorted_ids_matches_a_sorted_set_under_random_operations():
    rng = random.Random(7)
    s, model = SortedIds(), set()
    for _ in range(20000):
        x = rng.randrange(3000)
        if x in model:
            assert s.discard(x)
            model.remove(x)
        else:
            s.add(x)
            model.add(x)
        assert len(s) == len(model)
    assert list(s) == sorted(model)
    assert s.first() == min(model) and s.last() == max(model)
    assert not s.discard(-5)
    for lo, hi in [(0, 10), (500, 1700), (2999, 5000), (100, 99)]:
        assert list(s.irange(lo, hi)) == [x for x in sorted(model) if lo <= x <= hi]


def test_sorted_ids_batches_of_new_maxima_keep_blocks_bounded():
    rng = random.Random(3)
    s, model, top = SortedIds(), [], 0
    for _ in range(300):
        if model and rng.random() < 0.3:
            x = model.pop(rng.randrange(len(model)))
            assert s.discard(x)
        else:
            batch = list(range(top + 1, top + 1 + rng.choice([1, 5, 100, 700, 1500])))
            top = batch[-1]
            s.extend_new(batch)
            model += batch
    assert list(s) == model and len(s) == len(model)
    assert all(0 < len(sub) <= 512 for sub in s._lists)
    assert s._maxes == [sub[-1] for sub in s._lists]


def test_sorted_ids_discarding_oldest_first_drains_block_after_block():
    """XACK's usual order (the head each time, ``discard``'s own path): emptied blocks go,
    the maxima stay those of the blocks left, and misses around the head are misses."""
    s = SortedIds()
    s.extend_new(list(range(10, 2500, 2)))
    model = list(range(10, 2500, 2))
    assert len(s._lists) > 2
    while model:
        assert not s.discard(model[0] - 1) and not s.discard(model[0] + 1)
        assert s.discard(model.pop(0))
        assert list(s) == model and len(s) == len(model)
        assert s._maxes == [sub[-1] for sub in s._lists] and all(s._lists)
    assert not s.discard(10) and s.first() is None and s.last() is None


def test_sorted_ids_tail_appends_split_into_blocks_and_copy_is_independent():
    s = SortedIds()
    for i in range(2000):
        s.add(i)
    assert len(s._lists) > 1  # blocks really split, so irange crosses block borders
    assert list(s.irange(250, 1300)) == list(range(250, 1301))
    c = s.copy()
    c.discard(5)
    assert 5 in list(s.irange(5, 5)) and list(c.irange(5, 5)) == []


# --- PEL and time order -------------------------------------------------------------------

def test_deliver_ack_and_consumer_views():
    g = ConsumerGroup(b"g", 0)
    a, created = g.create_consumer(b"a", 100)
    assert created and a.seen_time == 100 and a.active_time == -1
    assert g.create_consumer(b"a", 200) == (a, False)
    b, _ = g.create_consumer(b"b", 100)
    for i in (1, 2, 3):
        g.deliver(a, sid(i), 1000 + i)
    g.deliver(b, sid(4), 1010)
    assert list(a.pel) == [sid(1), sid(2), sid(3)] and list(b.pel) == [sid(4)]
    assert time_order(g) == [sid(1), sid(2), sid(3), sid(4)]
    assert g.owner_counts() == [(b"a", 3), (b"b", 1)]
    assert g.ack(sid(2)) and not g.ack(sid(2))
    assert list(a.pel) == [sid(1), sid(3)]
    assert time_order(g) == [sid(1), sid(3), sid(4)]
    # Re-delivery of a pending ID (after SETID moved back) reassigns and resets the count.
    pe = g.pel[sid(1)]
    pe.delivery_count = 5
    g.deliver(b, sid(1), 2000)
    assert pe.consumer is b and pe.delivery_count == 1 and pe.delivery_time == 2000
    assert list(a.pel) == [sid(3)] and list(b.pel) == [sid(1), sid(4)]
    assert time_order(g) == [sid(3), sid(4), sid(1)]
    assert g.first_pending() == sid(1) and g.last_pending() == sid(4)
    assert list(g.pending_ids(sid(2), sid(4))) == [sid(3), sid(4)]
    assert list(g.pending_ids(0, sid(9), b)) == [sid(1), sid(4)]


def test_claim_with_past_time_is_inserted_in_time_order():
    g = ConsumerGroup(b"g", 0)
    a, _ = g.create_consumer(b"a", 0)
    for i, t in zip(range(1, 6), (100, 200, 300, 400, 500)):
        g.deliver(a, sid(i), t)
    g.claim(g.pel[sid(5)], a, 250, 2)  # XCLAIM ... IDLE/TIME into the past
    assert time_order(g) == [sid(1), sid(2), sid(5), sid(3), sid(4)]
    g.claim(g.pel[sid(1)], a, 50, 2)  # before everything: still first
    assert time_order(g) == [sid(1), sid(2), sid(5), sid(3), sid(4)]
    g.claim(g.pel[sid(2)], a, 300, 2)  # equal time: after the existing 300 (insertion order)
    assert time_order(g) == [sid(1), sid(5), sid(3), sid(2), sid(4)]


def test_nack_zone_is_fifo_at_the_head_and_claims_leave_it():
    g = ConsumerGroup(b"g", 0)
    a, _ = g.create_consumer(b"a", 0)
    for i in range(1, 6):
        g.deliver(a, sid(i), 100 * i)
    assert g.nack(sid(4), 0) and g.nack(sid(2), 7)
    assert not g.nack(sid(9), 0)
    assert g.nacked_count == 2
    assert time_order(g) == [sid(4), sid(2), sid(1), sid(3), sid(5)]
    pe = g.pel[sid(2)]
    assert pe.consumer is None and pe.delivery_time == 0 and pe.delivery_count == 7
    assert list(a.pel) == [sid(1), sid(3), sid(5)]
    assert g.owner_counts() == [(b"a", 3)]
    # A past-time claim never lands inside the NACK zone.
    g.claim(g.pel[sid(5)], a, 1, 3)
    assert time_order(g) == [sid(4), sid(2), sid(5), sid(1), sid(3)]
    # Re-NACK moves to the zone's tail; FORCE adds unowned entries there too.
    g.nack(sid(4), 1)
    g.add_nacked(sid(9), 0)
    assert time_order(g) == [sid(2), sid(4), sid(9), sid(5), sid(1), sid(3)]
    assert g.nacked_count == 3
    g.claim(g.pel[sid(4)], a, 1000, 2)  # claimed: leaves the zone, owned again
    assert g.nacked_count == 2 and g.pel[sid(4)].consumer is a
    assert time_order(g) == [sid(2), sid(9), sid(5), sid(1), sid(3), sid(4)]
    # Removing the zone's tail keeps the zone consistent.
    g.remove(sid(9))
    g.nack(sid(1), 0)
    assert time_order(g) == [sid(2), sid(1), sid(5), sid(3), sid(4)]
    assert g.nacked_count == 2


def test_delete_consumer_drops_only_its_entries():
    g = ConsumerGroup(b"g", 0)
    a, _ = g.create_consumer(b"a", 0)
    b, _ = g.create_consumer(b"b", 0)
    g.deliver(a, sid(1), 1)
    g.deliver(a, sid(2), 2)
    g.deliver(b, sid(3), 3)
    g.nack(sid(2), 0)
    assert g.delete_consumer(b"a") == 1  # sid(2) was NACKed: unowned, survives
    assert g.delete_consumer(b"a") is None
    assert sorted(g.pel) == [sid(2), sid(3)] and time_order(g) == [sid(2), sid(3)]


def test_copy_is_deep_and_keeps_order_owners_and_zone():
    g = ConsumerGroup(b"g", sid(5), 5)
    a, _ = g.create_consumer(b"a", 10)
    a.active_time = 11
    for i in range(1, 5):
        g.deliver(a, sid(i), i)
    g.nack(sid(3), 2)
    c = g.copy()
    assert (c.last_id, c.entries_read, c.nacked_count) == (sid(5), 5, 1)
    assert time_order(c) == time_order(g)
    ca = c.consumers[b"a"]
    assert ca is not a and (ca.seen_time, ca.active_time) == (10, 11)
    assert list(ca.pel) == [sid(1), sid(2), sid(4)]
    assert c.pel[sid(3)].consumer is None and c.pel[sid(1)].consumer is ca
    c.ack(sid(1))
    c.nack(sid(2), 0)
    assert sid(1) in g.pel and g.pel[sid(2)].consumer is a and g.nacked_count == 1
    assert list(g.pending_ids(0, sid(9))) == [sid(1), sid(2), sid(3), sid(4)]


def test_stream_copy_copies_groups():
    s = stream_with(3)
    g = s.groups[b"g"] = ConsumerGroup(b"g", 0)
    a, _ = g.create_consumer(b"a", 0)
    g.deliver(a, sid(1), 5)
    s2 = s.copy()
    assert s2.groups[b"g"] is not g and sid(1) in s2.groups[b"g"].pel


# --- entries_read / lag (§4.4) --------------------------------------------------------------

def read_all(g, s, upto=None):
    for i, _ in s.range(g.last_id + 1, upto if upto is not None else s.last_id):
        g.advance(s, i)


def test_lag_counts_down_as_the_group_reads():
    s = stream_with(5)
    g = ConsumerGroup(b"g", 0)
    assert g.entries_read == UNKNOWN and g.lag(s) == 5
    g.advance(s, sid(1))
    assert (g.entries_read, g.lag(s)) == (1, 4)
    read_all(g, s)
    assert (g.entries_read, g.lag(s)) == (5, 0)


def test_tombstone_ahead_makes_lag_unknown_until_passed():
    s = stream_with(5)
    g = ConsumerGroup(b"g", 0)
    g.advance(s, sid(1))
    s.delete(sid(3))
    assert has_tombstone_from(s, g.last_id)
    assert g.lag(s) is None
    g.advance(s, sid(2))
    assert g.entries_read == UNKNOWN and g.lag(s) is None  # estimate of 2-0 is unknown
    g.advance(s, sid(4))
    assert g.lag(s) is None
    g.advance(s, sid(5))  # the last ID: its counter is entries_added
    assert (g.entries_read, g.lag(s)) == (5, 0)


def test_estimate_rules():
    s = Stream()
    assert estimate_entries_read(s, sid(3)) == 0  # never used
    s = stream_with(5)
    assert estimate_entries_read(s, sid(5)) == 5
    assert estimate_entries_read(s, sid(6)) == UNKNOWN
    assert estimate_entries_read(s, sid(1)) == 1
    assert estimate_entries_read(s, sid(0, 5)) == 0
    assert estimate_entries_read(s, sid(3)) == UNKNOWN  # in the middle
    s.trim(maxlen=3)  # trimming leaves max_deleted alone: first is now 3-0
    assert estimate_entries_read(s, sid(3)) == 3 and estimate_entries_read(s, sid(2)) == 2
    s.delete(sid(4))
    assert estimate_entries_read(s, sid(3)) == UNKNOWN  # before the tombstone
    assert estimate_entries_read(s, sid(5)) == 5
    s.delete(sid(3))
    s.delete(sid(5))
    assert s.length == 0 and estimate_entries_read(s, sid(2)) == 5


def test_lag_special_cases():
    s = Stream()
    g = ConsumerGroup(b"g", 0)
    assert g.lag(s) == 0  # nothing ever added
    s = stream_with(4)
    s.trim(maxlen=2)
    assert g.lag(s) == 2  # behind the first entry and no tombstone: the length
    for i in (3, 4):
        s.delete(sid(i))
    assert g.lag(s) == 0  # empty stream


def test_set_position_caps_entries_read():
    s = stream_with(3)
    g = ConsumerGroup(b"g", 0)
    g.set_position(s, sid(1), 10)
    assert g.entries_read == 3
    g.set_position(s, sid(1), UNKNOWN)
    assert g.entries_read == UNKNOWN


# --- referenced / DELREF (§4.6) -----------------------------------------------------------

def test_is_referenced_and_drop_references():
    s = stream_with(5)
    assert not is_referenced(s, sid(1))  # no groups
    g1 = s.groups[b"g1"] = ConsumerGroup(b"g1", sid(5))
    g2 = s.groups[b"g2"] = ConsumerGroup(b"g2", sid(3))
    assert not is_referenced(s, sid(2))
    assert is_referenced(s, sid(4))  # g2 has not read it yet
    assert is_referenced(s, sid(9))  # nor a future ID
    a, _ = g1.create_consumer(b"a", 0)
    g1.deliver(a, sid(2), 1)
    g2.add_nacked(sid(2), 0)
    assert is_referenced(s, sid(2))
    drop_references(s, sid(2))
    assert sid(2) not in g1.pel and sid(2) not in g2.pel and not a.pel
    assert not is_referenced(s, sid(2))
    assert g2.nacked_count == 0
