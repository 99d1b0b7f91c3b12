"""The RDB object codec without a server: stream nodes, sizes, IDMP state, bad input.

The stream store keeps a model of each node's listpack size (it decides where nodes split);
here the real encoder checks that model on streams of every shape.
"""

from __future__ import annotations

import random

import pytest

from streamd.idmp import IdmpRegistry
from streamd.rdb import objects
from streamd.store.groups import ConsumerGroup
from streamd.store.stream import Stream

_VALUES = [b"", b"0", b"7", b"127", b"128", b"-1", b"-4096", b"4095", b"4096", b"32768",
           b"-32769", b"8388608", b"2147483648", b"-9223372036854775808",
           b"9223372036854775807", b"9223372036854775808", b"007", b"-0", b"+5", b"1.5",
           b"x" * 63, b"x" * 64, b"y" * 4095, b"y" * 4096, b"hello"]


def _random_stream(rng: random.Random, n: int, max_entries: int, max_bytes: int) -> Stream:
    s = Stream()
    ms = rng.randrange(1, 1 << 40)
    names = [(b"f",), (b"f", b"g"), (b"a", b"b", b"c"), (b"12", b"-3")]
    for _ in range(n):
        ms += rng.choice((0, 0, 1, 1000, 1 << 33))
        sid = max((ms << 64) | rng.randrange(0, 3), s.last_id + 1)
        fields = []
        for name in rng.choice(names):
            fields += (name, rng.choice(_VALUES))
        s.append(sid, fields, max_entries, max_bytes)
    for sid in rng.sample([e[0] for e in s.range(0, (1 << 128) - 1)], n // 5):
        s.delete(sid)
    if rng.random() < 0.5:
        s.trim(maxlen=n // 2, approx=rng.random() < 0.5)
    return s


@pytest.mark.parametrize("seed", range(12))
def test_node_size_model_matches_the_encoded_listpacks(seed):
    rng = random.Random(seed)
    s = _random_stream(rng, rng.randrange(1, 400), rng.choice((0, 3, 100)),
                       rng.choice((0, 200, 4096, 20000)))
    encoded = [len(objects._node_listpack(*node)) for node in s.export_nodes()]
    assert encoded == s.listpack_bytes()


@pytest.mark.parametrize("seed", range(6))
def test_stream_round_trip_rebuilds_nodes_and_counters(seed):
    rng = random.Random(100 + seed)
    s = _random_stream(rng, 300, 7, 4096)
    s.idmp = IdmpRegistry().new_state(100, 100)
    back = objects.load(objects.dump(s), new_idmp=lambda d, m: IdmpRegistry().new_state(d, m))
    assert list(back.export_nodes()) == list(s.export_nodes())
    for attr in ("length", "last_id", "first_id", "max_deleted_id", "entries_added"):
        assert getattr(back, attr) == getattr(s, attr), attr
    assert back.range(0, (1 << 128) - 1) == s.range(0, (1 << 128) - 1)
    # the size model of restored nodes starts from the saved listpacks
    assert back.listpack_bytes() == s.listpack_bytes()


def _idmp_stream() -> Stream:
    s = Stream()
    s.append(5 << 64, [b"f", b"v"], 100, 4096)
    s.idmp = IdmpRegistry().new_state(300, 3)
    for pid, iids in ((b"zeta", [b"a", b"b"]), (b"alpha", [b"1", b"2", b"3", b"4"])):
        for iid in iids:
            s.idmp.record(pid, iid, 5 << 64)
    s.idmp.iids_duplicates = 7
    return s


def test_idmp_state_round_trip_keeps_records_in_order():
    s = _idmp_stream()
    back = objects.load(objects.dump(s), new_idmp=lambda d, m: IdmpRegistry().new_state(d, m))
    state = back.idmp
    assert (state.duration, state.maxsize) == (300, 3)
    assert {pid: list(p.items()) for pid, p in state.producers.items()} == {
        b"zeta": [(b"a", 5 << 64), (b"b", 5 << 64)],
        b"alpha": [(b"2", 5 << 64), (b"3", 5 << 64), (b"4", 5 << 64)],  # maxsize 3
    }
    assert (state.iids_added, state.iids_duplicates) == (6, 7)
    assert state.iids_tracked == 5


def _idmp_section_of(payload: bytes) -> int:
    """Offset of the IDMP section of a one-node stream payload without groups."""
    marker = bytes((0x41, 0x2C, 0x03))  # duration 300 (14-bit length), maxsize 3
    return payload.index(marker)


@pytest.mark.parametrize("mangle,why", [
    ("duration 0", "IDMP settings out of range"),
    ("repeated record", "a repeated IDMP record"),
    ("empty producer", "an IDMP producer without records"),
])
def test_bad_idmp_sections_are_bad_data(mangle, why):
    s = _idmp_stream()
    body = objects.dump(s)[:-10]
    at = _idmp_section_of(body)
    if mangle == "duration 0":
        body = body[:at] + b"\x00" + body[at + 2:]
    elif mangle == "repeated record":
        body = body.replace(b"\x01b", b"\x01a", 1)  # zeta's second iid becomes its first
    else:  # zeta, the last producer (pids are saved sorted), loses its records
        start = body.index(b"\x04zeta") + 5
        body = body[:start] + b"\x00" + body[-2:]  # then iids_added and iids_duplicates
    with pytest.raises(objects.BadData, match=why):
        objects.load(objects.seal(body), new_idmp=lambda d, m: IdmpRegistry().new_state(d, m))


def test_group_pel_needs_an_owner_or_the_nack_zone():
    s = Stream()
    s.append(1 << 64, [b"f", b"v"], 100, 4096)
    s.idmp = IdmpRegistry().new_state(100, 100)
    g = s.groups[b"g"] = ConsumerGroup(b"g", 1 << 64, 1)
    c, _ = g.create_consumer(b"c", 1000)
    g.add_pending(1 << 64, c, 1000, 1)
    good = objects.dump(s)
    assert objects.load(good).groups[b"g"].pel[1 << 64].consumer.name == b"c"
    # the consumer's PEL list emptied: the entry has no owner and is not NACKed
    body = good[:-10]
    owned = (1 << 64).to_bytes(16, "big")
    at = body.rindex(owned)
    body = body[:at - 1] + b"\x00" + body[at + 16:]
    with pytest.raises(objects.BadData, match="pending entry without an owner"):
        objects.load(objects.seal(body))


@pytest.mark.parametrize("payload", [b"", b"\x00" * 9])
def test_payloads_shorter_than_the_footer(payload):
    with pytest.raises(objects.PayloadError):
        objects.verify(payload)


def test_a_stream_without_idmp_state_dumps_redis_defaults():
    s = Stream()
    s.append(1 << 64, [b"f", b"v"], 100, 4096)
    back = objects.load(objects.dump(s), new_idmp=lambda d, m: IdmpRegistry().new_state(d, m))
    assert (back.idmp.duration, back.idmp.maxsize, back.idmp.iids_tracked) == (100, 100, 0)


def test_import_takes_out_of_order_tombstones_but_not_live_entries():
    s = Stream()
    slots = [(5 << 64, (b"f",), [b"a"], True), (9 << 64, (b"f",), [b"b"], False),
             (7 << 64, (b"f",), [b"c"], False)]  # a tombstone behind a lowered last ID
    s.import_node(5 << 64, (b"f",), slots, 40)
    assert s.node_sizes() == [(1, 2)]
    assert [sid for sid, _ in s.range(0, (1 << 128) - 1)] == [5 << 64]
    bad = Stream()
    with pytest.raises(ValueError):
        bad.import_node(5 << 64, (b"f",), [(5 << 64, (b"f",), [b"a"], True),
                                           (4 << 64, (b"f",), [b"b"], True)], 40)
