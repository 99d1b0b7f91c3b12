"""Unit and model-based tests of ``streamd.store.stream.Stream`` (no server involved).

The §7.3 worked examples come from Redis's own test suite; node boundaries are what make
them come out right, so each one is a test of the node model as much as of trimming.
"""

from __future__ import annotations

import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, precondition,
                                 rule)

from streamd.commands.streams import runs_reply
from streamd.protocol.encoder import to_bytes
from streamd.store.stream import Stream, _str_size
from streamd.store.streamid import MAX_ID, U64, make_id

FV = [b"f", b"v"]
END = MAX_ID


def ids(stream, start=0, end=END, count=-1, reverse=False):
    return [sid for sid, _ in stream.range(start, end, count, reverse)]


def filled(n, node_max=100, fields=FV, start_ms=1):
    s = Stream()
    for i in range(n):
        s.append(make_id(start_ms + i, 0), fields, node_max, 4096)
    return s


def default_limit(node_max):
    # what XADD/XTRIM use for `~` without LIMIT (§3.1)
    return min(100 * node_max, 1_000_000) if node_max > 0 else 10000


# --- §7.3 worked examples ----------------------------------------------------------------

def test_xadd_maxlen_approx_555_leaves_600():
    s = Stream()
    for i in range(1, 1001):
        s.append(make_id(i, 0), FV, 100, 4096)
        s.trim(maxlen=555, approx=True, limit=default_limit(100))
    assert s.length == 600
    assert s.node_count() == 6


def test_xtrim_sequence_exact_then_approx():
    s = filled(1000)
    assert s.trim(maxlen=666) == 334
    assert s.length == 666
    s.trim(maxlen=555)
    assert s.length == 555
    s.trim(maxlen=444, approx=True, limit=default_limit(100))
    assert s.length == 500
    s.trim(maxlen=400, approx=True, limit=default_limit(100))
    assert s.length == 400


def test_xadd_maxlen_approx_with_limit_node_max_10():
    s = filled(100, node_max=10)
    s.append(make_id(1000, 0), FV, 10, 4096)
    s.trim(maxlen=55, approx=True, limit=30)
    assert s.length == 71
    s.append(make_id(1001, 0), FV, 10, 4096)
    s.trim(maxlen=55, approx=True, limit=30)
    assert s.length == 62


def test_node_max_1_approx_stops_at_default_limit():
    s = filled(102, node_max=1)
    assert s.node_count() == 102
    s.trim(maxlen=1, approx=True, limit=default_limit(1))
    assert s.length == 2
    s.trim(maxlen=1)
    assert s.length == 1


def test_limit_smaller_than_a_node_removes_nothing():
    s = filled(3, node_max=2)
    assert s.trim(maxlen=0, approx=True, limit=1) == 0
    assert s.length == 3
    assert s.trim(maxlen=0, approx=True, limit=2) == 2
    assert s.length == 1


def test_xadd_maxlen_0_limit_1_keeps_everything():
    s = filled(3)
    s.append(make_id(100, 0), FV, 100, 4096)
    s.trim(maxlen=0, approx=True, limit=1)
    assert s.length == 4


def test_minid_approx_acked_keeps_referenced_entries():
    s = filled(5, node_max=2)  # nodes [1,2] [3,4] [5]
    pel = {make_id(3, 0), make_id(5, 0)}  # read by a group, 1, 2 and 4 acked
    removed = s.trim(minid=make_id(6, 0), approx=True, limit=default_limit(2),
                     keep=lambda sid: sid in pel)
    assert removed == 3
    assert ids(s) == [make_id(3, 0), make_id(5, 0)]
    assert s.first_id == make_id(3, 0)
    assert s.node_count() == 2  # the first node went entirely; the others keep survivors


def test_exact_minid_removes_only_smaller_ids():
    s = Stream()
    for sid in (make_id(1, 0), make_id(1641544570597, 0), make_id(1641544570597, 1)):
        s.append(sid, FV, 100, 4096)
    assert s.trim(minid=make_id(1641544570597, 0)) == 1
    assert ids(s) == [make_id(1641544570597, 0), make_id(1641544570597, 1)]


def test_delref_calls_on_delete_per_entry_and_ignores_approx():
    s = filled(10, node_max=5)
    seen = []
    removed = s.trim(maxlen=3, approx=True, limit=default_limit(5), on_delete=seen.append)
    # DELREF walks entries one by one, so `~` acts exactly
    assert removed == 7
    assert seen == [make_id(i, 0) for i in range(1, 8)]
    assert s.length == 3
    assert s.node_count() == 1


def test_keepref_approx_minid_drops_only_whole_nodes():
    s = filled(10, node_max=4)  # [1-4] [5-8] [9,10]
    assert s.trim(minid=make_id(7, 0), approx=True, limit=default_limit(4)) == 4
    assert ids(s)[0] == make_id(5, 0)
    assert s.trim(minid=make_id(7, 0)) == 2
    assert ids(s)[0] == make_id(7, 0)
    assert s.node_sizes()[0] == (2, 2)  # partial trim leaves tombstones in the node


# --- node boundaries ----------------------------------------------------------------------

def test_node_entry_limit_counts_tombstones():
    s = filled(3, node_max=3)
    s.delete(make_id(2, 0))
    s.append(make_id(10, 0), FV, 3, 4096)
    assert s.node_sizes() == [(2, 1), (1, 0)]


def test_node_entry_limit_zero_means_bytes_only():
    s = filled(500, node_max=0)
    # ~12 listpack bytes per small entry: 4096 bytes hold a few hundred
    assert 1 < s.node_count() < 5


def test_node_byte_limit_uses_listpack_estimate():
    # Fresh node with master field "f": 6 header + 1 end, count, deleted, num-fields and
    # master terminator (small ints: 2 bytes each), "f" (1-char string: 3 bytes) = 18.
    # Each entry with small deltas and value "v": flags, ms, seq, lp-count (2 each) and
    # the value (3) = 11 bytes.
    s = Stream()
    for i in range(3):
        s.append(make_id(1, i), FV, 0, 100)
    assert s._nodes[0].lp_bytes() == 18 + 3 * 11
    # before the 3rd entry: 40 + raw 2 < 50; before the 4th: 51 + 2 >= 50 -> new node
    s = Stream()
    for i in range(5):
        s.append(make_id(1, i), FV, 0, 50)
    assert s.node_sizes() == [(3, 0), (2, 0)]


@pytest.mark.parametrize("value", [b"", b"v", b"12345678", b"-5", b"007", b"x" * 63,
                                   b"x" * 64, b"x" * 125, b"x" * 126, b"x" * 4095,
                                   b"x" * 4096, b"9" * 5000])
@pytest.mark.parametrize("nf", [1, 2])
def test_entry_listpack_bytes_by_value_size(value, nf):
    # A non-master entry with the master's fields: flags, ms delta, seq delta and lp-count
    # (small ints: 2 bytes each) and its values. One field (sized without the loop) and
    # two fields (the loop) must agree with _str_size for every size class.
    fields = [b"f", value, b"g", value][:2 * nf]
    s = Stream()
    s.append(make_id(1, 0), fields, 0, 0)
    before = s._nodes[0].body
    s.append(make_id(1, 1), fields, 0, 0)
    assert s._nodes[0].body - before == 8 + nf * _str_size(value)


def test_str_size_matches_listpack_encodings():
    assert _str_size(b"0") == 2  # 7-bit uint
    assert _str_size(b"127") == 2
    assert _str_size(b"128") == 3  # 13-bit int
    assert _str_size(b"-4096") == 3
    assert _str_size(b"65535") == 5  # 24-bit int
    assert _str_size(b"9223372036854775807") == 10
    assert _str_size(b"9223372036854775808") == 1 + 19 + 1  # not int64: string
    assert _str_size(b"007") == 5  # leading zero: string
    assert _str_size(b"-0") == 4
    assert _str_size(b"x" * 63) == 65
    assert _str_size(b"x" * 64) == 67
    assert _str_size(b"x" * 200) == 204  # backlen of 202 needs 2 bytes


def test_same_fields_share_the_master_tuple():
    s = filled(3, fields=[b"name", b"a", b"n", b"1"])
    node = s._nodes[0]
    assert node.odd is None and node.vstart is None


def test_consecutive_nodes_share_one_master_tuple():
    s = Stream()
    for i in range(6):  # fresh lists and name bytes every time, as requests bring them
        s.append(make_id(1 + i, 0), [bytes(b"name"), b"%d" % i], 2, 4096)
    s.append(make_id(10, 0), [b"other", b"x"], 2, 4096)
    masters = [n.master for n in s._nodes]
    assert len(masters) == 4
    assert masters[0] is masters[1] is masters[2]
    assert masters[3] == (b"other",)
    assert [f for _, f in s.range(0, END)][-2:] == [[b"name", b"5"], [b"other", b"x"]]


def test_variable_field_schemas_round_trip():
    s = Stream()
    rows = [[b"a", b"1"], [b"a", b"2", b"b", b"3"], [b"a", b"4"], [b"b", b""],
            [b"a", b"x", b"a", b"y"]]
    for i, f in enumerate(rows):
        s.append(make_id(5, i), f, 100, 4096)
    assert [f for _, f in s.range(0, END)] == rows
    assert s.get(make_id(5, 1)) == rows[1]
    assert [f for _, f in s.range(0, END, reverse=True)] == rows[::-1]


# --- tombstones, first_id, max_deleted -----------------------------------------------------

def test_delete_marks_tombstone_and_updates_counters():
    s = filled(5)
    assert s.delete(make_id(3, 0)) is True
    assert s.delete(make_id(3, 0)) is False
    assert s.delete(make_id(99, 0)) is False
    assert s.length == 4
    assert s.max_deleted_id == make_id(3, 0)
    assert s.first_id == make_id(1, 0)
    assert s.get(make_id(3, 0)) is None
    assert s.node_sizes() == [(4, 1)]
    s.delete(make_id(1, 0))
    assert s.first_id == make_id(2, 0)
    assert s.max_deleted_id == make_id(3, 0)  # only grows


def test_deleting_last_live_entry_frees_node():
    s = filled(4, node_max=2)
    s.delete(make_id(1, 0))
    s.delete(make_id(2, 0))
    assert s.node_count() == 1
    assert s.first_id == make_id(3, 0)


def test_delete_everything_leaves_empty_stream_with_last_id():
    s = filled(3)
    for i in range(1, 4):
        s.delete(make_id(i, 0))
    assert (s.length, s.first_id, s.node_count()) == (0, 0, 0)
    assert s.last_id == make_id(3, 0)
    assert s.entries_added == 3
    assert s.first_entry() is None and s.last_entry() is None


def test_trim_does_not_touch_max_deleted_but_recomputes_first_id():
    s = filled(10, node_max=3)
    s.trim(maxlen=4)
    assert s.max_deleted_id == 0
    assert s.first_id == make_id(7, 0)
    s.trim(maxlen=0)
    assert (s.length, s.first_id) == (0, 0)


def test_first_id_set_on_first_append_into_empty_stream():
    s = Stream()
    s.append(make_id(7, 0), FV, 100, 4096)
    assert s.first_id == make_id(7, 0)
    s.delete(make_id(7, 0))
    s.append(make_id(9, 0), FV, 100, 4096)
    assert s.first_id == make_id(9, 0)


def test_minid_partial_trim_can_leave_node_without_live_entries():
    # Redis reads a node's last ID even when it is a tombstone, so the node is not
    # "eligible" and survives with zero live entries (still a radix-tree key).
    s = filled(3)
    s.delete(make_id(3, 0))
    assert s.trim(minid=make_id(3, 0)) == 2
    assert s.length == 0 and s.node_count() == 1 and s.first_id == 0
    s.append(make_id(4, 0), FV, 100, 4096)
    assert s.node_sizes() == [(1, 3)]
    assert ids(s) == [make_id(4, 0)]


def test_append_below_trailing_trim_tombstones_stays_ordered():
    # ACKED trimming can tombstone the tail while an earlier entry survives; XSETID may
    # then lower last_id below those tombstones. The next append must keep ID order.
    s = filled(3)
    s.trim(minid=make_id(4, 0), keep=lambda sid: sid == make_id(1, 0))
    assert ids(s) == [make_id(1, 0)]
    s.last_id = make_id(1, 5)
    s.append(make_id(1, 6), FV, 100, 4096)
    assert ids(s) == [make_id(1, 0), make_id(1, 6)]
    assert ids(s, reverse=True) == [make_id(1, 6), make_id(1, 0)]
    assert s.get(make_id(1, 6)) == FV and s.get(make_id(2, 0)) is None
    assert s.length == 2


# --- ranges --------------------------------------------------------------------------------

def test_range_bounds_at_node_edges_forward_and_backward():
    s = filled(10, node_max=3)  # [1-3] [4-6] [7-9] [10]
    assert ids(s, make_id(3, 0), make_id(4, 0)) == [make_id(3, 0), make_id(4, 0)]
    assert ids(s, make_id(3, 1), make_id(6, 0)) == [make_id(i, 0) for i in (4, 5, 6)]
    assert ids(s, make_id(4, 0), make_id(7, 0), reverse=True) == \
        [make_id(i, 0) for i in (7, 6, 5, 4)]
    assert ids(s, 0, make_id(3, U64), 2, reverse=True) == [make_id(3, 0), make_id(2, 0)]
    assert ids(s, make_id(6, 5), END, 2) == [make_id(7, 0), make_id(8, 0)]
    assert ids(s, make_id(11, 0), END) == []
    assert ids(s, 0, make_id(0, 5), reverse=True) == []
    assert ids(s, make_id(5, 0), make_id(4, 0)) == []
    assert ids(s, 0, END, 0) == []


def test_range_skips_tombstones_across_nodes():
    s = filled(9, node_max=3)
    for i in (3, 4, 5, 6):
        s.delete(make_id(i, 0))
    assert ids(s) == [make_id(i, 0) for i in (1, 2, 7, 8, 9)]
    assert ids(s, reverse=True, count=3) == [make_id(i, 0) for i in (9, 8, 7)]
    assert ids(s, make_id(3, 0), END, 1) == [make_id(7, 0)]
    assert ids(s, 0, make_id(6, 0), 1, reverse=True) == [make_id(2, 0)]
    assert s.last_live_id() == make_id(9, 0)


def test_first_and_last_entry():
    s = filled(4, node_max=2)
    s.delete(make_id(4, 0))
    assert s.first_entry() == (make_id(1, 0), FV)
    assert s.last_entry() == (make_id(3, 0), FV)


# --- auto IDs, copy -------------------------------------------------------------------------

def test_next_auto_id():
    s = Stream()
    assert s.next_auto_id(1000) == make_id(1000, 0)
    s.last_id = make_id(2000, 5)
    assert s.next_auto_id(1000) == make_id(2000, 6)  # clock behind: sequence bumps
    assert s.next_auto_id(2000) == make_id(2000, 6)
    s.last_id = make_id(2000, U64)
    assert s.next_auto_id(1000) == make_id(2001, 0)
    s.last_id = MAX_ID
    assert s.next_auto_id(10**20) is None


def test_copy_is_independent():
    s = filled(5, node_max=2)
    s.delete(make_id(2, 0))

    class G:
        def __init__(self):
            self.copied = False

        def copy(self):
            g = G()
            g.copied = True
            return g

    s.groups[b"g"] = G()
    c = s.copy()
    c.delete(make_id(3, 0))
    c.append(make_id(9, 0), [b"x", b"y"], 2, 4096)
    assert ids(s) == [make_id(i, 0) for i in (1, 3, 4, 5)]
    assert ids(c) == [make_id(i, 0) for i in (1, 4, 5, 9)]
    assert c.groups[b"g"].copied and not s.groups[b"g"].copied
    assert (c.max_deleted_id, s.max_deleted_id) == (make_id(3, 0), make_id(2, 0))


def test_tail_node_reopened_after_config_change():
    s = filled(4, node_max=2)  # two sealed nodes
    s.append(make_id(10, 0), FV, 5, 4096)  # larger limit: the tail node takes it
    assert s.node_sizes() == [(2, 0), (3, 0)]
    assert s.get(make_id(10, 0)) == FV and s.get(make_id(3, 0)) == FV


# --- cost and memory -----------------------------------------------------------------------

def _fill_seekable(n):
    s = Stream()
    app = s.append
    for i in range(n):
        app(make_id(1_000 + i // 4, i % 4), [b"field", b"%08d" % i], 100, 4096)
    return s


class _CountedReads(list):
    """A stream's node list or first-ID array, counting the items read from it."""

    reads = 0

    def __getitem__(self, i):
        self.reads += 1
        return super().__getitem__(i)


def _seek_cost(stream, n, reps=500):
    # IDs spread over the whole stream so each lookup really has to find its node. The
    # cost is counted, not timed: the reads from the first-ID array (which bisection
    # probes) and from the node list, per seek.
    stream._fms = fms = _CountedReads(stream._fms)
    stream._nodes = nodes = _CountedReads(stream._nodes)
    for k in range(reps):
        i = (k * 7919) % n
        assert stream.range(make_id(1_000 + i // 4, i % 4), END, 1)[0][0] == \
            make_id(1_000 + i // 4, i % 4)
    return fms.reads / reps, nodes.reads / reps


@pytest.mark.slow
def test_memory_per_entry():
    import tracemalloc

    # 1M entries measure ~26 B/entry in RSS (see the report); tracemalloc makes that slow,
    # and the per-entry figure is the same at 50k because nodes have a fixed size: 24.9 B
    # here, 33.6 B with seq parts and offsets kept 8 and 4 bytes wide in sealed nodes.
    n = 50_000
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    s = _fill_seekable(n)
    per_entry = (tracemalloc.get_traced_memory()[0] - base) / n
    tracemalloc.stop()
    assert s.length == n
    assert per_entry < 30, per_entry


@pytest.mark.slow
def test_seek_is_logarithmic():
    small, big = _fill_seekable(2_000), _fill_seekable(200_000)
    fms_small, nodes_small = _seek_cost(small, 2_000)
    fms_big, nodes_big = _seek_cost(big, 200_000)
    assert len(big._nodes) >= 50 * len(small._nodes) > 0
    # 100x more entries: bisection probes about log2(100) ~ 7 more first IDs, a linear
    # search through them ~100x more; and a seek visits the same few nodes either way.
    assert fms_big <= fms_small + 10, (fms_small, fms_big)
    assert nodes_big <= nodes_small <= 4, (nodes_small, nodes_big)


def test_a_cached_node_that_becomes_the_tail_again_shows_its_new_entries():
    s = filled(6, node_max=3)  # nodes [1..3] sealed, [4..6] the tail
    wire = lambda: to_bytes(runs_reply(s.runs(0, END)))  # noqa: E731
    for _ in range(3):
        wire()  # enough reads to cache the sealed node's encoding
    first = s._nodes[0]
    assert type(first.memo) is list
    for ms in (4, 5, 6):
        assert s.delete(make_id(ms, 0))
    assert s._nodes == [first]  # the sealed node is the tail again
    s.append(make_id(7, 0), [b"f", b"new"], 100, 4096)
    assert first.memo == 0
    want = [[b"%d-0" % m, FV] for m in (1, 2, 3)] + [[b"7-0", [b"f", b"new"]]]
    for _ in range(3):
        assert wire() == to_bytes(want)


# --- model-based ----------------------------------------------------------------------------

class StreamModel(RuleBasedStateMachine):
    """The store against a plain sorted list, under random XADD/XDEL/XTRIM/XSETID/ranges."""

    @initialize(node_max=st.sampled_from([1, 2, 3, 100]),
                node_bytes=st.sampled_from([4096, 60, 0]))
    def setup(self, node_max, node_bytes):
        self.node_max, self.node_bytes = node_max, node_bytes
        self.s = Stream()
        self.model: list[tuple[int, list]] = []
        self.last_id = 0
        self.max_deleted = 0
        self.first_id = 0
        self.added = 0

    def _all_ids(self):
        return [sid for sid, _ in self.model]

    @rule(gap_ms=st.sampled_from([0, 0, 1, 2, 1000]),
          fields=st.lists(st.tuples(st.sampled_from([b"a", b"b", b"123"]),
                                    st.binary(max_size=12)), min_size=1, max_size=3))
    def xadd(self, gap_ms, fields):
        sid = self.s.next_auto_id((self.last_id >> 64) + gap_ms)
        if sid is None:
            return
        flat = [x for pair in fields for x in pair]
        self.s.append(sid, flat, self.node_max, self.node_bytes)
        self.model.append((sid, flat))
        if len(self.model) == 1:
            self.first_id = sid
        self.last_id = sid
        self.added += 1

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def xdel_existing(self, data):
        sid = data.draw(st.sampled_from(self._all_ids()))
        assert self.s.delete(sid) is True
        self.model = [e for e in self.model if e[0] != sid]
        self.max_deleted = max(self.max_deleted, sid)
        if not self.model:
            self.first_id = 0
        elif sid == self.first_id:
            self.first_id = self.model[0][0]

    @rule(ms=st.integers(0, 40), seq=st.integers(0, 3))
    def xdel_maybe_missing(self, ms, seq):
        sid = make_id(ms, seq)
        present = sid in self._all_ids()
        assert self.s.delete(sid) is present
        if present:
            self.model = [e for e in self.model if e[0] != sid]
            self.max_deleted = max(self.max_deleted, sid)
            if not self.model:
                self.first_id = 0
            elif sid == self.first_id:
                self.first_id = self.model[0][0]

    @rule(maxlen=st.integers(0, 30))
    def xtrim_maxlen_exact(self, maxlen):
        removed = self.s.trim(maxlen=maxlen)
        drop = max(0, len(self.model) - maxlen)
        assert removed == drop
        self.model = self.model[drop:]
        self._after_trim(drop)

    @rule(ms=st.integers(0, 40), seq=st.integers(0, 3))
    def xtrim_minid_exact(self, ms, seq):
        minid = make_id(ms, seq)
        removed = self.s.trim(minid=minid)
        keep = [e for e in self.model if e[0] >= minid]
        assert removed == len(self.model) - len(keep)
        drop = len(self.model) - len(keep)
        self.model = keep
        self._after_trim(drop)

    @rule(maxlen=st.integers(0, 30), limit=st.sampled_from([0, 1, 5, 100]))
    def xtrim_maxlen_approx(self, maxlen, limit):
        before = len(self.model)
        removed = self.s.trim(maxlen=maxlen, approx=True, limit=limit)
        # approximate trimming removes a prefix, never below maxlen
        assert 0 <= removed <= max(0, before - maxlen)
        if limit:
            assert removed <= limit
        self.model = self.model[removed:]
        self._after_trim(removed)

    def _after_trim(self, removed):
        if not self.model:
            self.first_id = 0
        elif removed:
            self.first_id = self.model[0][0]

    @rule(bump=st.sampled_from([0, 1, 5, 1 << 64]))
    def xsetid(self, bump):
        # XSETID accepts anything >= the last live entry and >= max_deleted
        floor = max(self.model[-1][0] if self.model else 0, self.max_deleted)
        new = floor + bump
        if new > MAX_ID:
            return
        self.s.last_id = self.last_id = new

    @rule(a=st.integers(0, 45), b=st.integers(0, 45), count=st.sampled_from([-1, 1, 2, 7]),
          reverse=st.booleans())
    def xrange(self, a, b, count, reverse):
        start, end = make_id(a, 0), make_id(b, U64)
        want = [e for e in self.model if start <= e[0] <= end]
        if reverse:
            want = want[::-1]
        if count >= 0:
            want = want[:count]
        assert self.s.range(start, end, count, reverse) == [(sid, f) for sid, f in want]
        # The runs a read replies with encode exactly as the entries would.
        wire = to_bytes([[b"%d-%d" % (sid >> 64, sid & U64), f] for sid, f in want])
        assert to_bytes(runs_reply(self.s.runs(start, end, count, reverse))) == wire
        # Again: the first read may have cached sealed nodes' encodings for this one.
        assert to_bytes(runs_reply(self.s.runs(start, end, count, reverse))) == wire

    @invariant()
    def counters_match(self):
        if not hasattr(self, "s"):
            return
        s = self.s
        assert s.length == len(self.model) == len(s)
        assert s.last_id == self.last_id
        assert s.first_id == self.first_id
        assert s.max_deleted_id == self.max_deleted
        assert s.entries_added == self.added
        assert s.range(0, END) == [(sid, f) for sid, f in self.model]
        assert s.first_entry() == (tuple(self.model[0]) if self.model else None)
        assert s.last_entry() == (tuple(self.model[-1]) if self.model else None)
        assert s.last_live_id() == (self.model[-1][0] if self.model else 0)
        for live, dead in s.node_sizes():
            assert live + dead > 0
            if self.node_max:
                assert live + dead <= max(self.node_max, 1)


StreamModel.TestCase.settings = settings(max_examples=150, stateful_step_count=60,
                                         deadline=None)
TestStreamModel = StreamModel.TestCase


@pytest.mark.parametrize("names, added", [((b"f",), [b"f", b"new5"]),
                                          ((b"a", b"b"), [b"f", b"new5"])],
                         ids=["same-fields", "fewer-fields"])
def test_a_read_encoded_after_its_sealed_node_gained_slots_caches_nothing_stale(names, added):
    # A transaction's replies are encoded after all its commands ran: here three reads of
    # the sealed node [1..3] wait while the tail [4] is deleted and 5-0 joins [1..3]. The
    # reads show 1..3; encoding them must not encode [1..3] whole from their buffer, which
    # lacks 5-0: the node's later reads would show 5-0 with no value, or the encoding
    # would run past the end of the values (5-0 has fewer fields than the reads' names).
    def fields(ms):
        return [x for name in names for x in (name, b"v%d" % ms)]

    s = Stream()
    for ms in (1, 2, 3):
        s.append(make_id(ms, 0), fields(ms), 100, 100)
    s.append(make_id(4, 0), [b"f", b"x" * 80], 100, 100)  # too big to join [1..3]
    assert s.node_sizes() == [(3, 0), (1, 0)]
    pending = [s.runs(0, make_id(3, 0)) for _ in range(3)]
    assert s.delete(make_id(4, 0))
    s.append(make_id(5, 0), added, 100, 100)
    assert s.node_sizes() == [(4, 0)]
    for runs in pending:
        assert to_bytes(runs_reply(runs)) == to_bytes([[b"%d-0" % m, fields(m)]
                                                       for m in (1, 2, 3)])
    for ms in range(6, 10):  # [1..5] is sealed again
        s.append(make_id(ms, 0), [b"f", b"y" * 40], 100, 100)
    want = to_bytes([[b"%d-0" % m, fields(m)] for m in (1, 2, 3)] + [[b"5-0", added]])
    for _ in range(3):  # read, encoded whole, then served from that encoding
        assert to_bytes(runs_reply(s.runs(0, make_id(5, 0)))) == want


def _deferred_reads_round(seed: int, ops: int) -> None:
    """Random appends (mostly one field, sizes that seal nodes by bytes), deletions (mostly
    of the newest entries, so sealed nodes become the tail again), trims and reads; half
    the reads are encoded at once, half later, after more writes, as a transaction's are.
    Every reply must be the entries as they were when read."""
    import random

    from streamd.protocol import encoder

    rng = random.Random(seed)
    schemas = [(b"f",)] * 12 + [(b"a", b"b"), (), (b"x", b"y", b"z")]

    def value():
        t = rng.random()
        if t < 0.3:
            return b"%d" % rng.choice([0, 1, -7, 127, 4096, 2 ** 40, rng.randint(-999, 999)])
        if t < 0.5:
            return b""
        if t < 0.9:
            return bytes(rng.choice(b"abc12") for _ in range(rng.randint(1, 30)))
        return b"v" * rng.randint(30, 3000)

    encoder.set_node_cache_budget(rng.choice([2000, 20000, 16 << 20, 16 << 20]))
    s, model, pending, ms = Stream(), [], [], 0
    max_entries = rng.choice([0, 1, 2, 3, 5, 10, 100])
    max_bytes = rng.choice([0, 1, 60, 100, 300, 1000, 4096])
    for _ in range(ops):
        t = rng.random()
        if t < 0.35:
            ms += rng.choice([0, 1, 1, 2])
            sid = max(make_id(ms, rng.randint(0, 3)), s.last_id + 1)
            fields = [x for name in rng.choice(schemas) for x in (name, value())]
            s.append(sid, fields, max_entries, max_bytes)
            model.append((sid, fields))
        elif t < 0.45 and model:
            k = rng.randint(1, 4)
            victims = ([sid for sid, _ in model[-k:]] if rng.random() < 0.8
                       else [rng.choice(model)[0] for _ in range(k)])
            for sid in victims:
                assert s.delete(sid) == any(e[0] == sid for e in model)
                model = [e for e in model if e[0] != sid]
        elif t < 0.47 and model:
            n = rng.randint(0, len(model))
            assert s.trim(maxlen=n) == len(model) - n
            model = model[len(model) - n:]
        elif t < 0.97:
            lo = make_id(rng.choice([0, 0, rng.randint(0, ms + 1)]), 0)
            hi = rng.choice([END, END, make_id(rng.randint(0, ms + 1), rng.randint(0, 3))])
            count, reverse = rng.choice([-1, -1, 1, 2, 5]), rng.random() < 0.3
            chosen = [e for e in model if lo <= e[0] <= hi][::-1 if reverse else 1]
            if count > 0:
                chosen = chosen[:count]
            want = to_bytes([[b"%d-%d" % (sid >> 64, sid & U64), f] for sid, f in chosen])
            pending.append((s.runs(lo, hi, count, reverse), want))
            if rng.random() < 0.5:
                runs, want = pending.pop()
                assert to_bytes(runs_reply(runs)) == want, seed
        else:
            rng.shuffle(pending)
            for runs, want in pending:
                assert to_bytes(runs_reply(runs)) == want, seed
            pending = []


def test_reads_encoded_after_later_writes_show_what_they_read():
    from streamd.protocol import encoder

    budget = encoder._cache_budget
    try:
        for seed in range(100):  # seeds 16 and 79 failed before the encoder's fix
            _deferred_reads_round(seed, 600)
    finally:
        encoder.set_node_cache_budget(budget)


@pytest.mark.parametrize("seqs, value, codes", [
    (range(40), b"x", ("B", "B")),  # seq parts and the 40 value bytes fit in a byte
    (range(0, 400, 10), b"12345678", ("H", "H")),
    (range(70_000, 70_040), b"v" * 2000, ("Q", "I")),  # 80 kB of values
])
def test_a_sealed_node_keeps_seq_parts_and_offsets_in_the_narrowest_items(seqs, value, codes):
    s = Stream()
    for q in seqs:
        s.append(make_id(1, q), [b"f", value], 40, 1 << 30)
    s.append(make_id(2, 0), [b"f", value], 40, 1 << 30)  # the first node is full: sealed
    node = s._nodes[0]
    assert (node.seq.typecode, node.offs.typecode) == codes
    assert node.ms.typecode == "Q"
    assert ids(s) == [make_id(1, q) for q in seqs] + [make_id(2, 0)]
    assert all(fields == [b"f", value] for _, fields in s.range(0, END))
    assert s.copy().range(0, END) == s.range(0, END)


def test_a_narrowed_node_that_becomes_the_tail_again_takes_larger_seqs_and_values():
    s = Stream()
    for q in range(40):
        s.append(make_id(1, q), [b"f", b"x"], 40, 1 << 20)
    s.append(make_id(2, 0), [b"f", b"x"], 40, 1 << 20)
    assert s._nodes[0].seq.typecode == "B"
    assert s.delete(make_id(2, 0))  # the tail node goes: the sealed node is the tail again
    big = b"v" * 300
    s.append(make_id(3, 70_000), [b"f", big], 100, 1 << 20)  # a larger entry limit
    assert len(s._nodes) == 1
    assert s.range(0, END) == ([(make_id(1, q), [b"f", b"x"]) for q in range(40)]
                               + [(make_id(3, 70_000), [b"f", big])])
