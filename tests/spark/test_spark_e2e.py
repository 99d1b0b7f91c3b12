"""End-to-end through Spark (local mode, one SparkSession for the module).

Covers: batch round trip; streaming with Trigger.AvailableNow, maxEntriesPerTrigger and the
consumer-group mirror; and exactly-once under task retries -- a UDF fails the first attempt
of one partition after part of that partition has already been written, with
``local[2,3]`` allowing the retry. The idempotent sink must absorb the replayed rows; the
plain sink (``idempotent=false``) run through the same scenario must show duplicates,
which proves the scenario really re-sends rows and that the check can fail.
"""

from __future__ import annotations

import collections
import time

import pytest

pytestmark = pytest.mark.spark

from tests.spark.conftest import require_spark  # noqa: E402

require_spark()

from tests.spark.conftest import make_spark, server_has_idmp  # noqa: E402

# Rows per Arrow batch between the JVM and Python workers: small, so a partition reaches the
# sink in several pieces and a failure can land after part of it was written.
ARROW_BATCH = 20


@pytest.fixture(scope="module")
def spark():
    session = make_spark("local[2,3]", **{
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH),
        "spark.task.maxFailures": "3"})
    yield session
    session.stop()


@pytest.fixture
def idem(client):
    """The idempotent sink when the server has IDMP; the plain one otherwise."""
    return "true" if server_has_idmp(client) else "false"


def _produce(client, stream, n, start_ms):
    """n entries with IDs one millisecond apart, so ID-range partitions are even."""
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        pipe.xadd(stream, {"n": str(i), "amount": str(i % 7)}, id=f"{start_ms + i}-0")
    return [x.decode() for x in pipe.execute()]


def _with_source_ref(df):
    """Keep each row's origin in the output (field ``src`` = stream:id) to match by id."""
    from pyspark.sql import functions as F

    return df.select("stream", "id", F.map_concat(
        "fields", F.create_map(F.lit("src"), F.concat_ws(":", "stream", "id"))).alias("fields"))


def _sources(client, stream):
    """Counter of the ``src`` field over the whole output stream."""
    return collections.Counter(f[b"src"].decode() for _, f in client.xrange(stream))


def test_batch_round_trip(spark, target, client, names, idem):
    src, out, out2 = names("src"), names("out"), names("out2")
    ids = _produce(client, src, 300, start_ms=1_000_000)
    df = (spark.read.format("streamd").option("url", target.url).option("streams", src)
          .option("numPartitions", "3").load())
    assert [f.name for f in df.schema.fields] == ["stream", "id", "fields"]
    assert df.rdd.getNumPartitions() == 3
    _with_source_ref(df).write.format("streamd").mode("append") \
        .option("url", target.url).option("stream", out).option("idempotent", idem).save()
    assert _sources(client, out) == collections.Counter(f"{src}:{i}" for i in ids)
    back = (spark.read.format("streamd").option("url", target.url).option("streams", out)
            .load().collect())
    assert sorted(int(r.fields["n"]) for r in back) == list(range(300))

    # Without a 'fields' map every other column becomes a field; idColumn names the row.
    from pyspark.sql import functions as F

    flat = df.select(F.col("fields")["n"].alias("n"), F.col("fields")["amount"].alias("amt"),
                     F.concat_ws("/", "stream", "id").alias("key"))
    writer = (flat.write.format("streamd").mode("append").option("url", target.url)
              .option("stream", out2).option("idColumn", "key").option("jobId", "rt-1")
              .option("idempotent", idem))
    writer.save()
    if idem == "true":
        writer.save()  # the same job re-submitted: every row is a duplicate
    entries = client.xrange(out2)
    assert len(entries) == 300
    assert set(entries[0][1]) == {b"n", b"amt", b"key"}


def test_streaming_available_now_with_read_limit_and_group(spark, target, client, names,
                                                          idem, tmp_path):
    a, b, out = names("a"), names("b"), names("out")
    ids = _produce(client, a, 150, start_ms=2_000_000) + \
        _produce(client, b, 100, start_ms=2_000_050)
    stream = (spark.readStream.format("streamd").option("url", target.url)
              .option("streams", f"{a},{b}").option("startingOffsets", "earliest")
              .option("maxEntriesPerTrigger", "100").option("group", "spark").load())
    query = (_with_source_ref(stream).writeStream.format("streamd")
             .option("url", target.url).option("stream", out).option("idempotent", idem)
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    query.awaitTermination(300)
    assert query.exception() is None
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sizes == [100, 100, 50]
    got = _sources(client, out)
    assert sum(got.values()) == 250 and set(got.values()) == {1}
    assert sorted(k.rsplit(":", 1)[1] for k in got) == sorted(ids)
    # The group mirrors the checkpoint: at the tail, with an exact lag of 0.
    for s in (a, b):
        (grp,) = client.xinfo_groups(s)
        assert grp["lag"] == 0 and grp["last-delivered-id"] == client.xrevrange(s, count=1)[0][0]


# The UDF's Python worker writes results through a 64 KiB buffered socket, so small results
# would sit there while the UDF waits below, and the sink would see none of partition 1.
# Padding the result makes the worker flush every few dozen rows.
PAD = "." * 2048


def _failing_once_udf(url, out, fail_n, wait_for):
    """UDF returning ``n`` + padding that, in the first attempt of partition 1, waits until
    the sink holds ``wait_for`` rows (so part of partition 1 is written), then raises at
    ``fail_n``.
    """
    from pyspark.sql.functions import udf

    def ident(n):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if n == str(fail_n) and ctx.partitionId() == 1 and ctx.attemptNumber() == 0:
            import redis

            r = redis.Redis.from_url(url)
            deadline = time.time() + 120  # generous for loaded CI machines; ends early
            while r.xlen(out) < wait_for and time.time() < deadline:
                time.sleep(0.05)
            raise RuntimeError(f"injected failure at n={n} after {r.xlen(out)} rows written")
        return n + PAD

    return udf(ident, useArrow=False)


@pytest.mark.parametrize("idempotent", ["true", "false"])
def test_task_retry_is_exactly_once(spark, target, client, names, tmp_path, idempotent):
    if idempotent == "true" and not server_has_idmp(client):
        pytest.skip("server lacks XADD IDMP (needs streamd or Redis >= 8.6)")
    from pyspark.sql import functions as F

    src, out = names("src"), names("out")
    ids = _produce(client, src, 400, start_ms=3_000_000)  # partition 1 = n 200..399
    fail = _failing_once_udf(target.url, out, fail_n=350, wait_for=250)
    stream = (spark.readStream.format("streamd").option("url", target.url)
              .option("streams", src).option("startingOffsets", "earliest")
              .option("numPartitions", "2").load())
    shaped = _with_source_ref(stream).withColumn(
        "fields", F.map_concat("fields", F.create_map(F.lit("checked"),
                                                      fail(F.col("fields")["n"]))))
    query = (shaped.writeStream.format("streamd").option("url", target.url)
             .option("stream", out).option("idempotent", idempotent)
             .option("writeBatchSize", "10")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    got = _sources(client, out)
    assert set(got) == {f"{src}:{i}" for i in ids}  # nothing lost
    if idempotent == "true":
        assert sum(got.values()) == 400, "duplicates despite IDMP"
        # ...and the retry really re-sent rows, which the server dropped:
        assert client.xinfo_stream(out)["iids-duplicates"] >= 50
    else:
        # Same scenario without IDMP: the rows written before the failure come twice.
        assert sum(got.values()) >= 450
