"""Streaming job run as a subprocess by test_spark_crash.py (and killed by it).

``python crash_job.py URL SRC CHECKPOINT_BASE SLOW_MS OUT:IDEMPOTENT [OUT:IDEMPOTENT ...]``

Starts one query per ``OUT:IDEMPOTENT`` pair, all reading SRC from the beginning with
Trigger.AvailableNow in micro-batches of 100 entries, and waits for all of them. SLOW_MS > 0
makes every row sleep that long in a UDF, so the test can kill the process mid-batch.
"""

from __future__ import annotations

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tests.spark.conftest import make_spark  # noqa: E402

BATCH = 100


def main(url: str, src: str, base: str, slow_ms: str, *outs: str) -> int:
    """Run the queries to completion; returns the process exit code."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import udf

    delay = int(slow_ms) / 1000.0
    # Four task slots: the two queries' tasks mostly sleep in the UDF, and with slots for
    # all of them neither query waits between batches for the other to free a core.
    # Small batches everywhere (UDF input, Arrow to the sink, sink round trips) so rows trickle
    # into the output and the test can catch every query in the middle of a micro-batch.
    spark = make_spark("local[4]", **{"spark.sql.execution.arrow.maxRecordsPerBatch": "5",
                                      "spark.sql.execution.python.udf.maxRecordsPerBatch": "5"})

    def slow(n):
        # Padding makes the UDF worker flush its (64 KiB buffered) results every few rows,
        # so rows reach the sink while the batch is still running.
        time.sleep(delay)
        return n + "." * 4096

    slow_udf = udf(slow, useArrow=False)
    queries = []
    for spec in outs:
        out, idem = spec.rsplit(":", 1)
        df = (spark.readStream.format("streamd").option("url", url).option("streams", src)
              .option("startingOffsets", "earliest").option("maxEntriesPerTrigger", BATCH)
              .option("numPartitions", 2).load())
        shaped = df.select("stream", "id", F.map_concat("fields", F.create_map(
            F.lit("src"), F.concat_ws(":", "stream", "id"),
            F.lit("pad"), slow_udf(F.col("fields")["n"]))).alias("fields"))
        queries.append(shaped.writeStream.format("streamd").option("url", url)
                       .option("stream", out).option("idempotent", idem)
                       .option("writeBatchSize", 5)
                       .option("checkpointLocation", os.path.join(base, out.replace(":", "_")))
                       .trigger(availableNow=True).start())
    print("started", flush=True)
    for q in queries:
        q.awaitTermination()
        if q.exception() is not None:
            print(q.exception(), file=sys.stderr)
            return 1
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
