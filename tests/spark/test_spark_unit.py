"""The data source's planning, offset and write logic, driven directly (no SparkSession).

These call the reader/writer classes the way Spark's Python runners do, against the test
server, so they are fast and pin down the behaviour the end-to-end tests rely on:
deterministic partitions, read limits, the AvailableNow bound, the group mirror, target
creation and the IDMP-MAXSIZE guard.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark

from tests.spark.conftest import require_spark  # noqa: E402

require_spark()

from pyspark.sql import Row  # noqa: E402
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows  # noqa: E402
from pyspark.sql.types import MapType, StringType, StructField, StructType  # noqa: E402

from streamd.spark import StreamdDataSource, StreamdSparkError  # noqa: E402
from streamd.spark._conn import ensure_target  # noqa: E402
from streamd.spark._ids import MAX_SEQ, parse_id, split_range  # noqa: E402
from streamd.spark.sink import StreamdBatchWriter  # noqa: E402
from streamd.spark.source import StreamdStreamReader  # noqa: E402

SINK_SCHEMA = StructType([StructField("stream", StringType()), StructField("id", StringType()),
                          StructField("fields", MapType(StringType(), StringType()))])


def _rows_of(reader, plan):
    """Flatten the Arrow batches read() yields into (stream, id, fields-dict) tuples."""
    return [(d["stream"], d["id"], dict(d["fields"]))
            for p in plan for batch in reader.read(p) for d in batch.to_pylist()]


def _batches(rows, schema):
    """Rows as one Arrow batch, the way Spark hands them to an Arrow writer."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    dicts = [{k: (list(v.items()) if isinstance(v, dict) else v) for k, v in r.asDict().items()}
             for r in rows]
    return iter([pa.RecordBatch.from_pylist(dicts, schema=to_arrow_schema(schema))])


def _ids_between(lo, hi):
    return [(ms, seq) for ms in range(lo[0], hi[0] + 1) for seq in (0, 5, MAX_SEQ)
            if lo <= (ms, seq) <= hi]


@pytest.mark.parametrize("first,last,parts", [
    ((100, 3), (100, 9), 4), ((100, 3), (103, 1), 4), ((5, 0), (1005, 7), 4),
    ((5, 0), (11, 0), 7), ((0, 0), (0, 0), 1)])
def test_split_range_covers_exactly_once(first, last, parts):
    slices = split_range(first, last, parts)
    assert slices == split_range(first, last, parts)  # pure: same input, same plan
    assert 1 <= len(slices) <= parts
    assert slices[0][0] == first and slices[-1][1] == last
    for (lo1, hi1), (lo2, _) in zip(slices, slices[1:]):
        assert hi1 < lo2 and (hi1[0] + 1, 0) == lo2  # contiguous, no overlap
    for sid in _ids_between(first, last):
        assert sum(lo <= sid <= hi for lo, hi in slices) == 1


def _produce(client, stream, n, start_ms=None):
    """Add n entries; with start_ms, at explicit increasing IDs (one per ms)."""
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        eid = f"{start_ms + i}-0" if start_ms is not None else "*"
        pipe.xadd(stream, {"n": str(i), "who": stream}, id=eid)
    return [x.decode() for x in pipe.execute()]


def test_batch_partitions_are_deterministic_and_complete(target, client, names):
    a, b = names("a"), names("b")
    ids_a = _produce(client, a, 200, start_ms=1_000)
    ids_b = _produce(client, b, 3, start_ms=5_000)
    src = StreamdDataSource({"url": target.url, "streams": f"{a},{b},{names('none')}",
                             "numpartitions": "4", "readbatchsize": "7"})
    reader = src.reader(None)
    plan = reader.partitions()
    assert [vars(p) for p in plan] == [vars(p) for p in src.reader(None).partitions()]
    assert sum(p.stream == a for p in plan) == 4 and sum(p.stream == b for p in plan) == 3
    rows = _rows_of(reader, plan)
    assert [r[1] for r in rows if r[0] == a] == ids_a  # all, once, in order
    assert [r[1] for r in rows if r[0] == b] == ids_b
    assert rows[0][2] == {"n": "0", "who": a}
    # start/end bound the read (XRANGE syntax, inclusive)
    part = StreamdDataSource({"url": target.url, "streams": a, "start": "1010",
                              "end": "1019-0"}).reader(None)
    got = [r[1] for r in _rows_of(part, part.partitions())]
    assert got == ids_a[10:20]


def test_batch_reader_on_missing_streams_reads_nothing(target, names):
    reader = StreamdDataSource({"url": target.url, "streams": names("x")}).reader(None)
    assert _rows_of(reader, reader.partitions()) == []


def _stream_reader(target, streams, **opts):
    options = {"url": target.url, "streams": ",".join(streams)}
    options.update({k.lower(): str(v) for k, v in opts.items()})  # Spark lower-cases keys
    return StreamdDataSource(options).streamReader(None)


def _last_ids(offset):
    """``{stream: last ID}`` of an offset, whatever form each stream's value takes."""
    return {s: v["last"] if isinstance(v, dict) else v for s, v in offset.items()}


def _drain(reader, start, limit):
    """Run micro-batches the way Spark does; returns (batches' row ids, final offset)."""
    batches = []
    while True:
        end = reader.latestOffset(start, limit)
        if end == start:
            return batches, end
        batches.append([r[1] for r in _rows_of(reader, reader.partitions(start, end))])
        reader.commit(end)
        start = end


def test_starting_offsets(target, client, names):
    a, b = names("a"), names("b")
    ids = _produce(client, a, 5)
    assert _stream_reader(target, [a, b], startingOffsets="earliest").initialOffset() == \
        {a: "0-0", b: "0-0"}
    assert _stream_reader(target, [a, b]).initialOffset() == {a: ids[-1], b: "0-0"}
    given = _stream_reader(target, [a, b], startingOffsets=f'{{"{a}": "{ids[1]}"}}')
    assert given.initialOffset() == {a: ids[1], b: "0-0"}
    batches, _ = _drain(given, given.initialOffset(), ReadAllAvailable())
    assert batches == [ids[2:]]
    with pytest.raises(StreamdSparkError, match="startingOffsets"):
        _stream_reader(target, [a], startingOffsets="yesterday").initialOffset()
    for bad in (f'["{a}"]', f'{{"{a}": "x-1"}}', f'{{"{a}": "{2**64}-0"}}',
                f'{{"{a}x": "{ids[1]}"}}'):  # not an object, bad IDs, unknown stream
        with pytest.raises(StreamdSparkError, match="startingOffsets"):
            _stream_reader(target, [a, b], startingOffsets=bad).initialOffset()


def test_read_limit_admits_oldest_entries_across_streams(target, client, names):
    a, b = names("a"), names("b")
    ids_a = _produce(client, a, 30, start_ms=10)   # a: ms 10..39
    ids_b = _produce(client, b, 30, start_ms=25)   # b: ms 25..54, overlaps a
    reader = _stream_reader(target, [a, b], startingOffsets="earliest",
                            maxEntriesPerTrigger=20, numPartitions=3)
    limit = reader.getDefaultReadLimit()
    assert limit == ReadMaxRows(20)
    batches, end = _drain(reader, reader.initialOffset(), limit)
    assert [len(x) for x in batches] == [20, 20, 20]
    # ID (= time) order across streams: the first batch is the 20 oldest of both, so b,
    # which starts later, is not starved by a, nor a by b.
    oldest = sorted(ids_a + ids_b, key=parse_id)[:20]
    assert sorted(batches[0]) == sorted(oldest)
    assert any(i in ids_b for i in batches[0]) and len(set(batches[0]) & set(ids_a)) >= 15
    assert sorted(sum(batches, [])) == sorted(ids_a + ids_b)
    assert _last_ids(end) == {a: ids_a[-1], b: ids_b[-1]}
    # The engine may ask for everything regardless of the option (e.g. Trigger.Once)
    assert reader.latestOffset({a: "0-0", b: "0-0"}, ReadAllAvailable()) == _last_ids(end)


def test_available_now_stops_at_the_tails_seen_at_start(target, client, names):
    a = names("a")
    before = _produce(client, a, 25)
    reader = _stream_reader(target, [a], startingOffsets="earliest", maxEntriesPerTrigger=10)
    start = reader.initialOffset()
    reader.prepareForTriggerAvailableNow()
    after = _produce(client, a, 7)  # arrives after the run began: not part of it
    batches, end = _drain(reader, start, reader.getDefaultReadLimit())
    assert [len(x) for x in batches] == [10, 10, 5]
    assert sum(batches, []) == before and _last_ids(end) == {a: before[-1]}
    assert reader.reportLatestOffset() == {a: after[-1]}


def test_partitions_replay_identically(target, client, names):
    a = names("a")
    _produce(client, a, 100, start_ms=7_000)
    reader = _stream_reader(target, [a], numPartitions=4)
    start, end = {a: "7009-0"}, {a: "7090-0"}
    plan = [vars(p) for p in reader.partitions(start, end)]
    # A fresh reader (as after a driver restart) plans the same batch the same way.
    assert plan == [vars(p) for p in _stream_reader(target, [a]).partitions(start, end)] or \
        plan == [vars(p) for p in _stream_reader(target, [a], numPartitions=4)
                 .partitions(start, end)]
    assert len(plan) == 4 and plan[0]["lo"] == "7010-0" and plan[-1]["hi"] == "7090-0"
    assert reader.partitions(end, end) == []


def test_group_mirror_shows_lag(target, client, names):
    a = names("a")
    ids = _produce(client, a, 12)
    reader = _stream_reader(target, [a], startingOffsets="earliest", group="spark")
    reader.commit({a: ids[4]})
    (grp,) = client.xinfo_groups(a)
    assert grp["last-delivered-id"].decode() == ids[4]
    assert grp["entries-read"] == 5 and grp["lag"] == 7
    reader.commit({a: ids[-1]})
    (grp,) = client.xinfo_groups(a)
    assert grp["lag"] == 0 and grp["last-delivered-id"].decode() == ids[-1]


def test_group_mirror_lag_with_a_long_backlog(target, client, names, monkeypatch):
    # More pending entries than the mirror scans: it must count this batch instead.
    import streamd.spark.source as source

    monkeypatch.setattr(source, "LAG_SCAN_LIMIT", 5)
    a = names("a")
    ids = _produce(client, a, 30)
    client.xdel(a, ids[0])  # a trimmed head: entries-added 30, length 29
    reader = _stream_reader(target, [a], startingOffsets="earliest", group="spark")
    reader.commit({a: "0-0"})
    reader.commit({a: ids[4]})
    (grp,) = client.xinfo_groups(a)
    assert grp["entries-read"] == 5 and grp["lag"] == 25
    reader.commit({a: ids[9]})
    (grp,) = client.xinfo_groups(a)
    assert grp["entries-read"] == 10 and grp["lag"] == 20
    reader.commit({a: ids[-1]})
    assert client.xinfo_groups(a)[0]["lag"] == 0


def _rows(stream, n, prefix="v"):
    return [Row(stream=stream, id=f"{1000 + i}-0", fields={"k": f"{prefix}{i}"})
            for i in range(n)]


def test_writer_field_mapping_and_validation(target, client, names):
    out = names("out")
    schema = StructType([StructField("stream", StringType()), StructField("id", StringType()),
                         StructField("amount", StringType()), StructField("note", StringType())])
    w = StreamdBatchWriter({"url": target.url, "stream": out, "idempotent": "false"}, schema)
    msg = w.write(_batches([Row(stream="s", id="1-0", amount="3", note=None)], schema))
    assert msg.rows == 1
    ((_, fields),) = client.xrange(out)
    assert fields == {b"amount": b"3"}  # source columns and nulls are not copied
    with pytest.raises(StreamdSparkError, match="idColumn"):
        StreamdBatchWriter({"url": target.url, "stream": out, "idcolumn": "nope"}, schema)
    bare = StructType([StructField("x", StringType())])
    with pytest.raises(StreamdSparkError, match="row identity"):
        StreamdBatchWriter({"url": target.url, "stream": out}, bare)


def test_ensure_target_creates_empty_configured_stream_once(target, client, names, idmp):
    out = names("out")
    assert ensure_target(client, out, 60, 7) is True
    info = client.xinfo_stream(out)
    assert info["length"] == 0 and info["groups"] == 0
    assert info["idmp-duration"] == 60 and info["idmp-maxsize"] == 7
    # An existing stream keeps its configuration (and so its dedup history).
    assert ensure_target(client, out, 86400, 10000) is False
    assert client.xinfo_stream(out)["idmp-maxsize"] == 7


def test_idempotent_batch_write_deduplicates_a_rerun(target, client, names, idmp):
    out = names("out")
    opts = {"url": target.url, "stream": out, "jobid": "job-1", "writebatchsize": "3"}
    first = StreamdBatchWriter(opts, SINK_SCHEMA).write(_batches(_rows("src", 10), SINK_SCHEMA))
    again = StreamdBatchWriter(opts, SINK_SCHEMA).write(_batches(_rows("src", 12), SINK_SCHEMA))
    assert (first.rows, first.duplicates) == (10, 0)
    assert (again.rows, again.duplicates) == (12, 10)
    assert client.xlen(out) == 12
    info = client.xinfo_stream(out)
    assert info["idmp-maxsize"] == 10000 and info["idmp-duration"] == 86400
    # Another job (another producer) is not deduplicated against job-1.
    other = dict(opts, jobid="job-2")
    StreamdBatchWriter(other, SINK_SCHEMA).write(_batches(_rows("src", 2), SINK_SCHEMA))
    assert client.xlen(out) == 14


def test_task_larger_than_idmp_maxsize_fails_clearly(target, client, names, idmp):
    out = names("out")
    opts = {"url": target.url, "stream": out, "idmpmaxsize": "5", "writebatchsize": "2"}
    writer = StreamdBatchWriter(opts, SINK_SCHEMA)
    with pytest.raises(StreamdSparkError, match=r"more than 5 rows, the IDMP-MAXSIZE"):
        writer.write(_batches(_rows("src", 6), SINK_SCHEMA))
    assert client.xlen(out) <= 5  # never more than the window can protect
    assert writer.write(_batches(_rows("src", 5), SINK_SCHEMA)).rows == 5
    assert client.xlen(out) == 5


def test_plain_sink_duplicates_on_rerun(target, client, names):
    out = names("out")
    opts = {"url": target.url, "stream": out, "idempotent": "false"}
    for _ in range(2):
        StreamdBatchWriter(opts, SINK_SCHEMA).write(_batches(_rows("src", 4), SINK_SCHEMA))
    assert client.xlen(out) == 8


def test_parse_id_forms():
    assert parse_id("5") == (5, 0) and parse_id(b"5-7") == (5, 7)
    assert parse_id("5", default_seq=MAX_SEQ) == (5, MAX_SEQ)
    with pytest.raises(ValueError):
        parse_id("x-1")


@pytest.mark.parametrize("option,value", [("idmpmaxsize", "10001"), ("idmpduration", "86401")])
def test_idmp_settings_out_of_range_are_refused_before_touching_the_stream(
        target, client, names, idmp, option, value):
    # XCFGSET would reject them inside the MULTI that already created the stream, leaving
    # it with the server's defaults, which a re-run would then keep without a word.
    out = names("out")
    with pytest.raises(StreamdSparkError, match=f"(?i){option}' must be <="):
        StreamdBatchWriter({"url": target.url, "stream": out, option: value}, SINK_SCHEMA)
    assert not client.exists(out)
    StreamdBatchWriter({"url": target.url, "stream": out, option: str(int(value) - 1)},
                       SINK_SCHEMA)  # the largest value XCFGSET takes
    assert client.xinfo_stream(out)[option.replace("idmp", "idmp-")] == int(value) - 1


def test_writer_configures_the_target_from_the_driver(target, client, names, idmp):
    out = names("out")
    StreamdBatchWriter({"url": target.url, "stream": out, "idmpduration": "60",
                        "idmpmaxsize": "86"}, SINK_SCHEMA)
    # In place before any task runs, so every task reads the same IDMP-MAXSIZE.
    info = client.xinfo_stream(out)
    assert (info["idmp-duration"], info["idmp-maxsize"], info["length"]) == (60, 86, 0)


def test_reader_gives_valid_spark_maps_for_any_entry(target, client, names):
    a = names("a")
    client.execute_command("XADD", a, "1-0", "f", "1", "g", "x", "f", "2")
    client.execute_command("XADD", a, "2-0", "ok", b"caf\xc3\xa9", "bad", b"\xff", b"\xfe", "v")
    client.execute_command("XADD", a, "3-0", b"\xff", "1", b"\xfe", "2")
    # readBatchSize 1: every page is full, so only an empty page ends the partition.
    reader = StreamdDataSource({"url": target.url, "streams": a, "numpartitions": "1",
                                "readbatchsize": "1"}).reader(None)
    got = [(d["id"], d["fields"]) for p in reader.partitions()
           for batch in reader.read(p) for d in batch.to_pylist()]
    # A map holds each key once (Spark misbehaves otherwise); as in redis-py, the last
    # value of a repeated field wins. Invalid UTF-8 becomes U+FFFD, valid text is kept.
    assert got == [("1-0", [("f", "2"), ("g", "x")]),
                   ("2-0", [("ok", "café"), ("bad", "\ufffd"), ("\ufffd", "v")]),
                   ("3-0", [("\ufffd", "2")])]


def test_writer_renders_column_types_as_text(target, client, names):
    import datetime
    import decimal

    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import (ArrayType, BinaryType, BooleanType, DateType, DecimalType,
                                   DoubleType, FloatType, IntegerType, TimestampType)

    out = names("out")
    schema = StructType([
        StructField("flag", BooleanType()), StructField("ratio", FloatType()),
        StructField("score", DoubleType()), StructField("amount", DecimalType(10, 2)),
        StructField("day", DateType()), StructField("at", TimestampType()),
        StructField("blob", BinaryType()), StructField("tags", ArrayType(StringType())),
        StructField("attrs", MapType(StringType(), IntegerType())),
        StructField("info", StructType([
            StructField("x", IntegerType()), StructField("at", TimestampType()),
            StructField("m", MapType(StringType(), StringType())),
            StructField("raw", BinaryType())]))])
    utc_noon = datetime.datetime(2024, 3, 1, 12, 0, tzinfo=datetime.timezone.utc)
    row = {"flag": True, "ratio": 0.1, "score": 0.25, "amount": decimal.Decimal("1.50"),
           "day": datetime.date(2024, 3, 1), "at": utc_noon, "blob": b"\x00\xff",
           "tags": ["x", "y"], "attrs": [("b", 2), ("a", 1)],
           "info": {"x": 1, "at": utc_noon, "m": [("k", "v")], "raw": b"\x00\xff"}}
    # Spark hands timestamps over in the session time zone.
    arrow = to_arrow_schema(schema, timezone="America/New_York")
    w = StreamdBatchWriter({"url": target.url, "stream": out, "idempotent": "false"}, schema)
    w.write(iter([pa.RecordBatch.from_pylist([row], schema=arrow)]))
    ((_, fields),) = client.xrange(out)
    local = "2024-03-01T07:00:00-05:00"
    assert {k.decode(): v for k, v in fields.items()} == {
        "flag": b"true", "ratio": b"0.1", "score": b"0.25", "amount": b"1.50",
        "day": b"2024-03-01", "at": local.encode(), "blob": b"\x00\xff",
        "tags": b'["x", "y"]', "attrs": b'{"a": 1, "b": 2}',
        "info": ('{"at": "%s", "m": {"k": "v"}, "raw": "AP8=", "x": 1}' % local).encode()}


def test_writer_writes_columns_next_to_the_fields_map(target, client, names):
    out, flat = names("out"), names("flat")
    schema = StructType(SINK_SCHEMA.fields + [StructField("seen", StringType())])
    w = StreamdBatchWriter({"url": target.url, "stream": out, "idempotent": "false"}, schema)
    w.write(_batches([Row(stream="s", id="1-0", fields={"k": "v", "gone": None},
                          seen="2024-03-01")], schema))
    # Map pairs first (null values left out), then the other columns.
    assert list(client.xrange(out)[0][1].items()) == [(b"k", b"v"), (b"seen", b"2024-03-01")]
    # A 'fields' column that is not a map is an ordinary column.
    plain = StructType([StructField("fields", StringType())])
    w = StreamdBatchWriter({"url": target.url, "stream": flat, "idempotent": "false"}, plain)
    w.write(_batches([Row(fields="text")], plain))
    assert client.xrange(flat)[0][1] == {b"fields": b"text"}


def test_rows_sharing_a_source_entry_are_refused_not_dropped(target, client, names, idmp):
    # E.g. explode(): several rows keep one entry's stream and id, so they would share an
    # iid and IDMP would silently keep only the first.
    out = names("out")
    rows = [Row(stream="s", id="1-0", fields={"item": "a"}),
            Row(stream="s", id="1-0", fields={"item": "b"})]
    writer = StreamdBatchWriter({"url": target.url, "stream": out}, SINK_SCHEMA)
    with pytest.raises(StreamdSparkError, match="two rows from source entry 's:1-0'"):
        writer.write(_batches(rows, SINK_SCHEMA))
    # An explicit idColumn is the caller's identity: repeats are deduplicated on purpose.
    schema = StructType(SINK_SCHEMA.fields + [StructField("key", StringType())])
    keyed = [Row(stream="s", id="1-0", fields={"item": x}, key=k)
             for x, k in (("a", "k1"), ("b", "k2"), ("b", "k2"))]
    msg = StreamdBatchWriter({"url": target.url, "stream": out, "idcolumn": "key"},
                             schema).write(_batches(keyed, schema))
    assert msg.rows == 3 and client.xlen(out) == 2


def test_streams_added_to_the_option_later_are_read_from_the_start(target, client, names):
    a, b = names("a"), names("b")
    ids_a, ids_b = _produce(client, a, 3), _produce(client, b, 2)
    # The checkpointed offset predates stream b.
    reader = _stream_reader(target, [a, b], numPartitions=1)
    start = {a: ids_a[0]}
    end = reader.latestOffset(start, ReadAllAvailable())
    assert end == {a: ids_a[-1], b: ids_b[-1]}
    assert sorted(r[1] for r in _rows_of(reader, reader.partitions(start, end))) == \
        sorted(ids_a[1:] + ids_b)


def test_offsets_never_move_back_when_the_tail_is_deleted(target, client, names):
    a = names("a")
    ids = _produce(client, a, 5)
    for limit in (ReadAllAvailable(), ReadMaxRows(10)):
        reader = _stream_reader(target, [a], startingOffsets="earliest")
        start = {a: ids[-1]}
        client.xdel(a, ids[-1], ids[-2])  # read already, then deleted
        # An earlier end would make the next batch re-read ids[2] (and the sink write it twice).
        assert reader.latestOffset(start, limit) == start
        client.xadd(a, {"n": "new"}, id=ids[-1].split("-")[0] + "-9")
        assert _last_ids(reader.latestOffset(start, limit)) == {a: ids[-1].split("-")[0] + "-9"}
        client.delete(a)
        ids = _produce(client, a, 5)


def test_max_entries_per_trigger_of_one_is_a_limit(target):
    reader = _stream_reader(target, ["x"], maxEntriesPerTrigger=1)
    assert reader.getDefaultReadLimit() == ReadMaxRows(1)
    # Unset: as many as the sink's write tasks can deduplicate, 10,000 per partition.
    assert _stream_reader(target, ["x"]).getDefaultReadLimit() == ReadMaxRows(40_000)
    assert _stream_reader(target, ["x"], numPartitions=3).getDefaultReadLimit() == \
        ReadMaxRows(30_000)
    assert isinstance(_stream_reader(target, ["x"], maxEntriesPerTrigger=0)
                      .getDefaultReadLimit(), ReadAllAvailable)
    with pytest.raises(StreamdSparkError, match="numPartitions"):
        _stream_reader(target, ["x"], numPartitions=0)


def test_group_mirror_follows_limited_batches_and_the_last_one(target, client, names):
    a = names("a")
    ids = _produce(client, a, 10)
    reader = _stream_reader(target, [a], startingOffsets="earliest", group="spark",
                            maxEntriesPerTrigger=4)
    start, limit = reader.initialOffset(), reader.getDefaultReadLimit()
    seen = []
    while True:
        end = reader.latestOffset(start, limit)  # mirrors ``start``, the previous end
        grp = client.xinfo_groups(a)[0]
        seen.append((grp["last-delivered-id"].decode(), grp["entries-read"], grp["lag"]))
        if end == start:
            break
        start = end  # no commit() call: the engine skips it for an AvailableNow run's end
    assert seen == [("0-0", 0, 10), (ids[3], 4, 6), (ids[7], 8, 2), (ids[9], 10, 0)]


class _FakeTaskContext:
    """What the sink asks of pyspark.TaskContext inside a write task."""

    def __init__(self, partition, props=None, attempt=0):
        self.partition, self.props, self.attempt = partition, props or {}, attempt

    def partitionId(self):
        return self.partition

    def attemptNumber(self):
        return self.attempt

    def getLocalProperty(self, key):
        return self.props.get(key)


def _in_task(monkeypatch, ctx):
    import pyspark

    monkeypatch.setattr(pyspark.TaskContext, "get", lambda: ctx)


def test_streaming_producers_are_per_query_and_partition(target, client, names, idmp,
                                                         monkeypatch):
    from streamd.spark.sink import StreamdStreamWriter

    out = names("out")
    opts = {"url": target.url, "stream": out}
    query = {"sql.streaming.queryId": "q-1", "streaming.sql.batchId": "7"}
    msgs = []
    for part in (0, 1):
        # Same iids in both partitions: each task has its own producer and IDMP window,
        # so neither swallows the other's rows.
        _in_task(monkeypatch, _FakeTaskContext(part, query))
        msgs.append(StreamdStreamWriter(opts, SINK_SCHEMA).write(
            _batches(_rows("src", 3), SINK_SCHEMA)))
    assert client.xlen(out) == 6 and client.xinfo_stream(out)["pids-tracked"] == 2
    assert msgs[0].pid != msgs[1].pid and all("q-1" in m.pid for m in msgs)
    # A retry, or the same query restarted from its checkpoint (same query ID, fresh
    # writer), re-sends the partition's rows: all duplicates.
    _in_task(monkeypatch, _FakeTaskContext(1, query, attempt=1))
    again = StreamdStreamWriter(opts, SINK_SCHEMA).write(_batches(_rows("src", 3), SINK_SCHEMA))
    assert (again.rows, again.duplicates, again.pid) == (3, 3, msgs[1].pid)
    assert client.xlen(out) == 6
    # Another query is another producer.
    _in_task(monkeypatch, _FakeTaskContext(1, dict(query, **{"sql.streaming.queryId": "q-2"})))
    StreamdStreamWriter(opts, SINK_SCHEMA).write(_batches(_rows("src", 3), SINK_SCHEMA))
    assert client.xlen(out) == 9
    _in_task(monkeypatch, _FakeTaskContext(0))
    with pytest.raises(StreamdSparkError, match="queryId"):
        StreamdStreamWriter(opts, SINK_SCHEMA).write(_batches(_rows("src", 1), SINK_SCHEMA))


def test_batch_producers_are_per_partition(target, client, names, idmp, monkeypatch):
    out = names("out")
    writer = StreamdBatchWriter({"url": target.url, "stream": out, "jobid": "j"}, SINK_SCHEMA)
    for part in (0, 1, 0):
        _in_task(monkeypatch, _FakeTaskContext(part))
        writer.write(_batches(_rows("src", 3), SINK_SCHEMA))
    assert client.xlen(out) == 6 and client.xinfo_stream(out)["pids-tracked"] == 2


def test_rows_of_different_streams_with_equal_ids_are_distinct(target, client, names, idmp):
    out = names("out")
    # 's1' + '1-0' and 's' + '11-0' would collide without a separator in the iid.
    rows = [Row(stream=s, id=i, fields={"k": f"{s}/{i}"})
            for s, i in (("s", "1-0"), ("t", "1-0"), ("s1", "1-0"), ("s", "11-0"))]
    msg = StreamdBatchWriter({"url": target.url, "stream": out}, SINK_SCHEMA).write(
        _batches(rows, SINK_SCHEMA))
    assert (msg.rows, msg.duplicates, client.xlen(out)) == (4, 0, 4)


def test_writer_refuses_rows_it_cannot_identify_or_write(target, client, names, idmp):
    out = names("out")
    with pytest.raises(StreamdSparkError, match="'stream' or 'id' is null"):
        StreamdBatchWriter({"url": target.url, "stream": out}, SINK_SCHEMA).write(
            _batches([Row(stream="s", id=None, fields={"k": "v"})], SINK_SCHEMA))
    with pytest.raises(StreamdSparkError, match="no non-null field"):
        StreamdBatchWriter({"url": target.url, "stream": out}, SINK_SCHEMA).write(
            _batches([Row(stream="s", id="1-0", fields={"k": None})], SINK_SCHEMA))
    keyed = StructType([StructField("KEY", StringType()), StructField("v", StringType())])
    w = StreamdBatchWriter({"url": target.url, "stream": out, "idcolumn": "key"}, keyed)
    with pytest.raises(StreamdSparkError, match="idColumn 'KEY' is null"):
        w.write(_batches([Row(KEY=None, v="x")], keyed))
    assert w.write(_batches([Row(KEY="k1", v="x")], keyed)).rows == 1
    assert client.xlen(out) == 1
    no_id = StructType([StructField("stream", StringType()), StructField("v", StringType())])
    with pytest.raises(StreamdSparkError, match="row identity"):
        StreamdBatchWriter({"url": target.url, "stream": out}, no_id)
    with pytest.raises(StreamdSparkError, match="only appends"):
        StreamdDataSource({"url": target.url, "stream": out}).writer(SINK_SCHEMA, True)


def test_write_tasks_recreate_a_deleted_target_and_check_it(target, client, names, idmp,
                                                            monkeypatch):
    import streamd.spark.sink as sink

    out = names("out")
    writer = StreamdBatchWriter({"url": target.url, "stream": out, "idmpmaxsize": "2"},
                                SINK_SCHEMA)
    client.delete(out)  # between planning on the driver and the task
    with pytest.raises(StreamdSparkError, match="more than 2 rows") as failed:
        writer.write(_batches(_rows("src", 3), SINK_SCHEMA))
    assert client.xinfo_stream(out)["idmp-maxsize"] == 2
    # The option alone does not resize an existing stream; the advice must say so.
    assert "only applies when the sink creates the stream" in str(failed.value)
    client.delete(out)
    client.set(out, "not a stream")
    with pytest.raises(Exception, match="WRONGTYPE"):
        writer.write(_batches(_rows("src", 1), SINK_SCHEMA))
    client.delete(out)
    writer = StreamdBatchWriter({"url": target.url, "stream": out}, SINK_SCHEMA)
    # A server without IDMP shows no idmp-maxsize: say so rather than write unguarded.
    monkeypatch.setattr(sink, "stream_info", lambda c, s: {"length": 0})
    with pytest.raises(StreamdSparkError, match="idempotent=false"):
        writer.write(_batches(_rows("src", 1), SINK_SCHEMA))


def test_write_batch_size_sets_the_pipeline_chunks(target, client, names, monkeypatch):
    import streamd.spark.sink as sink

    real_connect, chunks = sink.connect, []

    def connect(url):
        c = real_connect(url)
        make = c.pipeline

        def pipeline(*args, **kwargs):
            pipe = make(*args, **kwargs)
            execute = pipe.execute
            pipe.execute = lambda *a, **k: chunks.append(len(pipe.command_stack)) or \
                execute(*a, **k)
            return pipe
        c.pipeline = pipeline
        return c

    monkeypatch.setattr(sink, "connect", connect)
    out = names("out")
    StreamdBatchWriter({"url": target.url, "stream": out, "idempotent": "false",
                        "writebatchsize": "3"}, SINK_SCHEMA).write(
        _batches(_rows("src", 7), SINK_SCHEMA))
    assert chunks == [3, 3, 1] and client.xlen(out) == 7


def test_option_parsing():
    from streamd.spark._conn import bool_opt, int_opt, required, stream_list

    assert stream_list({"streams": " a , b,,a "}) == ["a", "b"]
    assert [bool_opt({"x": v}, "x", True) for v in ("no", "0", "FALSE")] == [False] * 3
    assert [bool_opt({"x": v}, "x", False) for v in ("yes", "1", "True")] == [True] * 3
    with pytest.raises(StreamdSparkError, match="true or false"):
        bool_opt({"x": "maybe"}, "x", True)
    assert int_opt({"n": "1"}, "n", 5) == 1 and int_opt({"n": ""}, "n", 5) == 5
    assert int_opt({"n": "9"}, "n", 5, maximum=9) == 9
    with pytest.raises(StreamdSparkError, match="must be >= 1"):
        int_opt({"n": "0"}, "n", 5)
    with pytest.raises(StreamdSparkError, match="integer"):
        int_opt({"n": "1.5"}, "n", 5)
    with pytest.raises(StreamdSparkError, match="'url' is required"):
        required({"url": ""}, "url")
    with pytest.raises(StreamdSparkError, match="names no stream"):
        stream_list({"streams": " , "})


def test_scalar_renderings():
    import datetime
    import struct

    from streamd.spark.sink import _field_value, _float32_text

    for x in (0.1, 1 / 3, -2.5e-8, 16777217.0, 3.4e38, 1e-45):
        f32 = struct.unpack("f", struct.pack("f", x))[0]
        text = _float32_text(f32)
        # Reads back as the same float32, and is no longer than Python's own float repr.
        assert struct.unpack("f", struct.pack("f", float(text)))[0] == f32
        assert len(text) <= len(repr(x))
    assert _float32_text(struct.unpack("f", struct.pack("f", 1 / 3))[0]) == "0.33333334"
    # Scalars are never JSON-quoted; only containers become JSON.
    assert _field_value(datetime.timedelta(days=1)) == "1 day, 0:00:00"
    assert _field_value(bytearray(b"\x00")) == b"\x00"


def test_group_mirror_skips_missing_streams(target, client, names):
    a = names("a")
    reader = _stream_reader(target, [a], group="spark", groupStrict="true")
    reader.commit({a: "5-0"})  # nothing to mirror into, and not an error
    assert not client.exists(a)


@pytest.mark.parametrize("n,parts,sizes", [
    (10, 4, [3, 2, 3, 2]), (2, 4, [1, 1]), (1, 4, [1]), (8, 4, [2, 2, 2, 2]), (7, 1, [7])])
def test_cuts_make_runs_of_nearly_equal_length(n, parts, sizes):
    from streamd.spark.source import _cuts, _ranges_from_cuts

    ids = [(7, i) for i in range(n)]
    cuts = _cuts(ids, parts)
    ranges = _ranges_from_cuts("s", (6, 0), ids[-1], cuts)
    got = [sum(1 for i in ids if parse_id(r.lo) <= i <= parse_id(r.hi)) for r in ranges]
    assert got == sizes  # every ID in exactly one range, the ranges in order


def test_limited_batches_carry_their_cuts_and_replay_identically(target, client, names):
    a = names("a")
    # A burst: 90 entries within one millisecond, then ten spread out. A split by time
    # would give one partition nearly everything (and the sink's task a window overflow).
    pipe = client.pipeline(transaction=False)
    for i in range(90):
        pipe.xadd(a, {"n": str(i)}, id=f"5000-{i}")
    for i in range(10):
        pipe.xadd(a, {"n": str(90 + i)}, id=f"{5001 + i}-0")
    ids = [x.decode() for x in pipe.execute()]
    reader = _stream_reader(target, [a], startingOffsets="earliest", numPartitions=4)
    start = reader.initialOffset()
    end = reader.latestOffset(start, reader.getDefaultReadLimit())
    assert end[a]["last"] == ids[-1] and len(end[a]["cuts"]) == 3
    plan = [vars(p) for p in reader.partitions(start, end)]
    assert [len(_rows_of(reader, [p])) for p in reader.partitions(start, end)] == [25] * 4
    # The driver restarts and replays the batch after its first entries were deleted: the
    # same ranges, so every remaining row goes to the same task (and sink producer).
    client.xdel(a, *ids[:3])
    again = _stream_reader(target, [a], startingOffsets="earliest", numPartitions=4)
    assert [vars(p) for p in again.partitions(start, end)] == plan
    assert [r[1] for r in _rows_of(again, again.partitions(start, end))] == ids[3:]
    # The next batch starts after the last ID, whatever form the offset took.
    assert again.latestOffset(end, again.getDefaultReadLimit()) == end
