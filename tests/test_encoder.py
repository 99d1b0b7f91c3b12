"""RESP2/RESP3 encoding of every reply value: the two protocols differ only for maps, sets,
nulls, doubles, verbatim strings and pushes."""

from __future__ import annotations

import pytest

from streamd.protocol.encoder import to_bytes
from streamd.protocol.replies import (
    NULL_ARRAY, Entries, ErrorReply, Map, Push, Raw, SetReply, Simple, Verbatim)

SAME = [
    (b"abc", b"$3\r\nabc\r\n"),
    (b"", b"$0\r\n\r\n"),
    ("é", b"$2\r\n\xc3\xa9\r\n"),
    (7, b":7\r\n"),
    (-3, b":-3\r\n"),
    (2**63 - 1, b":9223372036854775807\r\n"),
    (-2**63, b":-9223372036854775808\r\n"),
    (2**63, b":-9223372036854775808\r\n"),  # beyond int64: wraps, as Redis's counters do
    (2**64 + 5, b":5\r\n"),
    ([b"a", [b"b", 1]], b"*2\r\n$1\r\na\r\n*2\r\n$1\r\nb\r\n:1\r\n"),
    ([], b"*0\r\n"),
    (Simple(b"OK"), b"+OK\r\n"),
    (ErrorReply("ERR bad\r\nthing"), b"-ERR bad  thing\r\n"),
    (Raw(b"+X\r\n"), b"+X\r\n"),
    (b"x" * 2000, b"$2000\r\n" + b"x" * 2000 + b"\r\n"),
]


@pytest.mark.parametrize("value,wire", SAME)
def test_identical_in_both_protocols(value, wire):
    assert to_bytes(value, 2) == wire
    assert to_bytes(value, 3) == wire


DIFFERENT = [
    (None, b"$-1\r\n", b"_\r\n"),
    (NULL_ARRAY, b"*-1\r\n", b"_\r\n"),
    (Map([(b"k", 1)]), b"*2\r\n$1\r\nk\r\n:1\r\n", b"%1\r\n$1\r\nk\r\n:1\r\n"),
    (SetReply([b"a"]), b"*1\r\n$1\r\na\r\n", b"~1\r\n$1\r\na\r\n"),
    (1.5, b"$3\r\n1.5\r\n", b",1.5\r\n"),
    (3.0, b"$1\r\n3\r\n", b",3\r\n"),
    (float("inf"), b"$3\r\ninf\r\n", b",inf\r\n"),
    (Verbatim(b"hi"), b"$2\r\nhi\r\n", b"=6\r\ntxt:hi\r\n"),
    (Push([b"message"]), b"*1\r\n$7\r\nmessage\r\n", b">1\r\n$7\r\nmessage\r\n"),
    (True, b":1\r\n", b"#t\r\n"),
]


@pytest.mark.parametrize("value,resp2,resp3", DIFFERENT)
def test_protocol_specific(value, resp2, resp3):
    assert to_bytes(value, 2) == resp2
    assert to_bytes(value, 3) == resp3


def test_nested_nulls_follow_the_protocol():
    value = [b"id", None, [NULL_ARRAY]]
    assert to_bytes(value, 2) == b"*3\r\n$2\r\nid\r\n$-1\r\n*1\r\n*-1\r\n"
    assert to_bytes(value, 3) == b"*3\r\n$2\r\nid\r\n_\r\n*1\r\n_\r\n"


def test_unknown_types_are_rejected():
    with pytest.raises(TypeError):
        to_bytes(object())


def test_entries_pairs_and_runs_encode_as_nested_arrays():
    big = b"v" * 1500
    value = Entries([
        (b"1-0", [b"f", b"x"]),
        ((5, 5), (0, 7), (b"f",), [b"", big]),  # a one-field run
        ((6,), (1,), (b"a", b"bb"), [b"1", b"22"]),  # a multi-field run
        (b"7-0", NULL_ARRAY),  # an entry deleted since delivery
    ], 5)
    want = [[b"1-0", [b"f", b"x"]], [b"5-0", [b"f", b""]], [b"5-7", [b"f", big]],
            [b"6-1", [b"a", b"1", b"bb", b"22"]]]
    for resp in (2, 3):
        null = b"*-1\r\n" if resp == 2 else b"_\r\n"
        # The four entries as plain nested arrays, then the deleted one; "*4" becomes "*5".
        body = to_bytes(want, resp)[len(b"*4"):]
        assert to_bytes(value, resp) == b"*5" + body + b"*2\r\n$3\r\n7-0\r\n" + null


def test_runs_of_several_entries_encode_like_nested_arrays():
    # Each entry's closing CRLF is written with the next entry's header, and a run's field
    # names are rendered once and reused: runs of several entries, of one, three and no
    # fields, and more distinct field names than the rendered-names cache keeps.
    runs = [((1, 2, 3), (0, 1, 2), (b"f",), [b"a", b"", b"c" * 1100]),
            ((4, 5), (0, 0), (b"x", b"yy", b"zzz"), [b"1", b"2", b"3", b"4", b"5", b"6"]),
            ((6, 7), (0, 0), (), [])]
    runs += [((10 + i,), (0,), (b"n%d" % i,), [b"v%d" % i]) for i in range(1100)]
    runs.append(((2000,), (0,), (b"f",), [b"last"]))
    want = [[b"1-0", [b"f", b"a"]], [b"2-1", [b"f", b""]], [b"3-2", [b"f", b"c" * 1100]],
            [b"4-0", [b"x", b"1", b"yy", b"2", b"zzz", b"3"]],
            [b"5-0", [b"x", b"4", b"yy", b"5", b"zzz", b"6"]], [b"6-0", []], [b"7-0", []]]
    want += [[b"%d-0" % (10 + i), [b"n%d" % i, b"v%d" % i]] for i in range(1100)]
    want.append([b"2000-0", [b"f", b"last"]])
    for resp in (2, 3):
        assert to_bytes(Entries(runs, len(want)), resp) == to_bytes(want, resp)


@pytest.mark.parametrize("resp", [2, 3])
def test_encode_each_equals_one_encode_per_value(resp):
    from streamd.protocol.encoder import encode_each

    values = [b"1-1", 0, 1, 1023, 1024, -1, 2**63, b"x" * 2000, None, [b"a", 1], True, 1.5]
    out = bytearray()
    encode_each(values, out, resp)
    assert bytes(out) == b"".join(to_bytes(v, resp) for v in values)


@pytest.mark.parametrize("value, resp2, resp3", [
    (False, b":0\r\n", b"#f\r\n"),
    (float("-inf"), b"$4\r\n-inf\r\n", b",-inf\r\n"),
    (float("nan"), b"$3\r\nnan\r\n", b",nan\r\n"),
    (-2.5, b"$4\r\n-2.5\r\n", b",-2.5\r\n"),
    (bytearray(b"ab"), b"$2\r\nab\r\n", b"$2\r\nab\r\n"),
    (memoryview(b"ab"), b"$2\r\nab\r\n", b"$2\r\nab\r\n"),
    (Map([]), b"*0\r\n", b"%0\r\n"),
    (SetReply([]), b"*0\r\n", b"~0\r\n"),
])
def test_more_reply_values(value, resp2, resp3):
    assert to_bytes(value, 2) == resp2
    assert to_bytes(value, 3) == resp3


def _span(entries: list, names: tuple, j: int, stop: int, reverse: bool, buffer=bytes):
    """A span over arrays holding ``entries`` ((ms, seq, values) each), as a node keeps
    them: ms and seq arrays, the values concatenated, their cumulative end offsets."""
    from array import array

    ms = array("Q", [m for m, _, _ in entries])
    seq = array("Q", [q for _, q, _ in entries])
    data, offs = bytearray(), array("I")
    for _, _, values in entries:
        for v in values:
            data += v
            offs.append(len(data))
    data = buffer(data)
    return (ms, seq, names, data, offs, j, stop, reverse, _Holder(data))


class _Holder:
    """What a span's last element is to the encoder: the node whose ``memo`` it may use,
    and whose buffer the span's must still be for the node to be encoded whole."""

    __slots__ = ("memo", "data", "__weakref__")

    def __init__(self, data):
        self.memo = 0
        self.data = data


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("buffer", [bytes, bytearray])  # a sealed node's, the tail's
def test_spans_encode_like_nested_arrays(reverse, buffer):
    # Spans start and stop inside the arrays; one field, three, none; values of 0, 1024+
    # bytes; sequence 0 and not; the growing buffer of a tail node.
    one = [(1, 0, [b"a"]), (2, 3, [b""]), (3, 0, [b"c" * 1100]), (4, 9, [b"d"])]
    three = [(5, 0, [b"1", b"2", b"3"]), (6, 1, [b"4", b"", b"6" * 1030]), (7, 0, [b"7", b"8", b"9"])]
    none = [(8, 0, []), (9, 2, [])]
    many = [(10 + i, i % 3, [b"w%d" % i]) for i in range(60)]  # long spans take zip
    cases = [(one, (b"f",), 1, 4), (one, (b"f",), 0, 2), (three, (b"x", b"yy", b"zzz"), 1, 3),
             (many, (b"f",), 3, 57), (many, (b"f",), 0, 60),
             (three, (b"x", b"yy", b"zzz"), 0, 1), (none, (), 0, 2), (one, (b"f",), 2, 2)]
    for entries, names, j, stop in cases:
        chosen = entries[j:stop][::-1] if reverse else entries[j:stop]
        want = [[b"%d-%d" % (m, q), [x for pair in zip(names, vals) for x in pair]]
                for m, q, vals in chosen]
        span = _span(entries, names, j, stop, reverse, buffer)
        for resp in (2, 3):
            got = to_bytes(Entries([(b"0-1", [b"k", b"v"]), span], len(want) + 1), resp)
            assert got == to_bytes([[b"0-1", [b"k", b"v"]]] + want, resp), (names, j, stop)


@pytest.mark.parametrize("reverse", [False, True])
def test_a_sealed_nodes_cached_encoding_is_its_entries(reverse):
    # Reads of a sealed node (bytes buffer) encode from the arrays until they have encoded
    # as many entries as it holds; from then on they copy from its cached encoding. Every
    # read, before and after, must be the same bytes as the entries as nested arrays.
    one = [(1, 0, [b"a"]), (2, 3, [b""]), (3, 0, [b"c" * 1100]), (4, 9, [b"d"])]
    three = [(5, 0, [b"1", b"2", b"3"]), (6, 1, [b"4", b"", b"6" * 1030]), (7, 0, [b"7", b"8", b"9"])]
    none = [(8, 0, []), (9, 2, [])]
    for entries, names in ((one, (b"f",)), (three, (b"x", b"yy", b"zzz")), (none, ())):
        base = _span(entries, names, 0, len(entries), reverse)
        holder = base[8]
        n = len(entries)
        for j in range(n):  # reads of one entry do not count toward caching
            to_bytes(Entries([base[:5] + (j, j + 1, reverse, holder)], 1))
        assert holder.memo == 0
        reads = [(j, stop) for j in range(n) for stop in range(j + 1, n + 1)]
        for j, stop in reads + reads:
            span = base[:5] + (j, stop, reverse, holder)
            chosen = entries[j:stop][::-1] if reverse else entries[j:stop]
            want = [[b"%d-%d" % (m, q), [x for pair in zip(names, vals) for x in pair]]
                    for m, q, vals in chosen]
            for resp in (2, 3):
                assert to_bytes(Entries([span], len(want)), resp) == to_bytes(want, resp)
        assert type(holder.memo) is list, names  # it was cached along the way


def test_a_tail_nodes_growing_buffer_is_never_cached():
    span = _span([(1, 0, [b"a"]), (2, 0, [b"b"])], (b"f",), 0, 2, False, bytearray)
    for _ in range(10):
        assert to_bytes(Entries([span], 2)) == to_bytes([[b"1-0", [b"f", b"a"]],
                                                           [b"2-0", [b"f", b"b"]]])
    assert span[8].memo == 0


def test_the_node_cache_stays_within_its_budget():
    from streamd.protocol import encoder

    entries = [(m, 0, [b"v" * 50]) for m in range(1, 21)]
    spans = [_span(entries, (b"f",), 0, 20, False) for _ in range(10)]
    before = encoder._cache_budget
    try:
        encoder.set_node_cache_budget(0)
        encoder.set_node_cache_budget(8000)
        for span in spans:
            to_bytes(Entries([span], 20))
            assert span[8].memo == 20  # one reader of every entry: nothing cached
            to_bytes(Entries([span], 20))  # the second read caches it
            to_bytes(Entries([span], 20))  # and the third is served from it
        size = len(spans[-1][8].memo[0]) + 4 * 21  # one node's encoding and boundaries
        fit = 8000 // size
        assert 1 < fit < 10
        assert encoder.node_cache_usage() == (fit, fit * size)
        kept = [type(span[8].memo) is list for span in spans]
        assert kept == [False] * (10 - fit) + [True] * fit  # the oldest went first
        assert all(span[8].memo == 0 for span in spans[:10 - fit])  # may be cached again
        # A node that is gone takes its encoding with it.
        del span
        spans.pop()
        assert encoder.node_cache_usage() == (fit - 1, (fit - 1) * size)
        encoder.set_node_cache_budget(0)
        assert encoder.node_cache_usage() == (0, 0)
        assert spans[-1][8].memo == 0
        fresh = _span(entries, (b"f",), 0, 20, False)
        for _ in range(2):
            assert to_bytes(Entries([fresh], 20)) == to_bytes(Entries([spans[0]], 20))
        assert fresh[8].memo is None  # too big for the budget: never tried again
    finally:
        encoder.set_node_cache_budget(before)


def test_reads_spread_over_more_nodes_than_fit_stop_encoding_them_whole(monkeypatch):
    from streamd.protocol import encoder

    builds = []
    build = encoder._cache_node
    monkeypatch.setattr(encoder, "_cache_node", lambda *a: builds.append(1) or build(*a))
    entries = [(m, 0, [b"v" * 50]) for m in range(1, 21)]
    spans = [_span(entries, (b"f",), 0, 20, False) for _ in range(12)]
    want = to_bytes(Entries([spans[0]], 20))

    def rounds(n):
        before = len(builds)
        for _ in range(n):  # round robin over 12 nodes: each is dropped before it is read
            for span in spans:
                assert to_bytes(Entries([span], 20)) == want
        return len(builds) - before

    budget = encoder._cache_budget
    try:
        encoder.set_node_cache_budget(0)
        encoder.set_node_cache_budget(2000)  # room for one node (~1.7 KB)
        first, later = rounds(8), rounds(8)
        assert encoder._admit > 1
        assert later * 2 <= first, (first, later)  # fewer and fewer nodes encoded in vain
        # One node read again and again pays off: when it is dropped, the bar comes down.
        admit = encoder._admit
        for _ in range(2 * admit + 2):
            to_bytes(Entries([spans[0]], 20))
        assert type(spans[0][8].memo) is list
        peak = encoder._admit
        for _ in range(4 * peak + 2):
            to_bytes(Entries([spans[1]], 20))  # caching it drops spans[0]'s encoding
        assert type(spans[1][8].memo) is list and spans[0][8].memo == 0
        assert encoder._admit == peak // 2
    finally:
        encoder.set_node_cache_budget(budget)


def test_the_node_cache_accounts_exactly_under_threads():
    # Embedded servers encode on threads of their own; the cache's bookkeeping is shared.
    import random
    import sys
    import threading

    from streamd.protocol import encoder

    entries = [(m, 0, [b"v" * 30]) for m in range(1, 21)]
    spans = [_span(entries, (b"f",), 0, 20, False) for _ in range(40)]
    want = to_bytes(Entries([spans[0]], 20))
    errors = []

    def reader(seed):
        rnd = random.Random(seed)
        try:
            for _ in range(3000):
                span = rnd.choice(spans)
                j = rnd.randrange(0, 19)
                got = to_bytes(Entries([span[:5] + (j, 20, False, span[8])], 20 - j))
                if got != to_bytes(Entries([spans[0][:5] + (j, 20, False, _Holder(spans[0][3]))],
                                           20 - j)):
                    errors.append((seed, j))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    budget, switch = encoder._cache_budget, sys.getswitchinterval()
    try:
        sys.setswitchinterval(1e-6)  # threads switch every few bytecodes: races show
        encoder.set_node_cache_budget(0)
        encoder.set_node_cache_budget(20_000)  # a dozen nodes of forty: constant eviction
        threads = [threading.Thread(target=reader, args=(seed,)) for seed in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        cached = [s[8].memo for s in spans if type(s[8].memo) is list]
        assert encoder.node_cache_usage() == (
            len(cached), sum(len(m[0]) + 4 * len(m[1]) for m in cached))
        assert to_bytes(Entries([spans[0]], 20)) == want
    finally:
        sys.setswitchinterval(switch)
        encoder.set_node_cache_budget(budget)
