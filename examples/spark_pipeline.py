"""Orders -> Spark enrichment -> results, exactly once, through the ``streamd`` data source.

    python examples/spark_pipeline.py                    # starts a local streamd for the run
    python examples/spark_pipeline.py --url redis://127.0.0.1:6379/0 --reset

1. starts ``python -m streamd --port 0`` (unless ``--url`` is given);
2. produces ``--orders`` entries into the ``orders`` stream (customer, sku, amount, currency);
3. runs a Structured Streaming query with Trigger.AvailableNow in micro-batches of
   ``--batch`` entries: it converts each amount to USD, tags large orders, and appends the
   result to the ``results`` stream with the idempotent (XADD IDMP) sink; the consumer group
   ``pipeline`` on ``orders`` mirrors its progress;
4. prints progress per micro-batch, then the final counts and the end-to-end throughput, and
   checks that every order appears in ``results`` exactly once.

Needs ``pip install -e '.[spark]'`` (pyspark >= 4.0, pyarrow, redis) and Java 17.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# Spark's Python workers must run this interpreter and be able to import streamd.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)

ORDERS, RESULTS, GROUP = "orders", "results", "pipeline"
RATES = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0067}


def start_streamd() -> tuple[subprocess.Popen, str]:
    """Start ``python -m streamd --port 0`` and return it with its URL (port from its log)."""
    proc = subprocess.Popen([sys.executable, "-m", "streamd", "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 30
    for line in proc.stdout:
        m = re.search(r"Ready to accept connections tcp on port (\d+)", line)
        if m:
            return proc, f"redis://127.0.0.1:{m.group(1)}/0"
        if time.time() > deadline:
            break
    proc.kill()
    raise SystemExit("streamd did not start; is this a checkout with streamd/?")


def produce(client, n: int) -> list[str]:
    """Append n random orders to ``orders`` in pipelined chunks; returns their IDs."""
    rng = random.Random(42)
    ids: list[str] = []
    for base in range(0, n, 1000):
        pipe = client.pipeline(transaction=False)
        for i in range(base, min(n, base + 1000)):
            pipe.xadd(ORDERS, {"customer": f"c{rng.randrange(500)}",
                               "sku": f"sku-{rng.randrange(50)}",
                               "amount": f"{rng.uniform(1, 400):.2f}",
                               "currency": rng.choice(list(RATES))})
        ids += [x.decode() for x in pipe.execute()]
    return ids


def build_query(spark, url: str, batch: int, checkpoint: str):
    """The pipeline: orders -> amount in USD + tier -> results (exactly once)."""
    from pyspark.sql import functions as F

    orders = (spark.readStream.format("streamd").option("url", url)
              .option("streams", ORDERS).option("startingOffsets", "earliest")
              .option("maxEntriesPerTrigger", batch).option("numPartitions", 2)
              .option("group", GROUP).load())
    rates = F.create_map(*[F.lit(x) for kv in RATES.items() for x in kv])
    usd = F.round(F.col("fields")["amount"].cast("double") * rates[F.col("fields")["currency"]], 2)
    enriched = orders.select(
        "stream", "id",  # kept: the sink's default IDMP iid is "<stream>:<id>"
        F.create_map(
            F.lit("order"), F.col("id"),
            F.lit("customer"), F.col("fields")["customer"],
            F.lit("sku"), F.col("fields")["sku"],
            F.lit("amount_usd"), usd.cast("string"),
            F.lit("tier"), F.when(usd >= 250, "large").otherwise("regular"),
        ).alias("fields"))
    return (enriched.writeStream.format("streamd").option("url", url)
            .option("stream", RESULTS).option("checkpointLocation", checkpoint)
            .trigger(availableNow=True).start())


def main(argv=None) -> int:
    """Run the example end to end; returns the exit code (1 if the counts are wrong)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="use this server instead of starting streamd")
    ap.add_argument("--reset", action="store_true", help="delete orders/results first")
    ap.add_argument("--orders", type=int, default=100000, help="orders to produce")
    ap.add_argument("--batch", type=int, default=10000,
                    help="maxEntriesPerTrigger (keep <= 2 x 10000: two partitions, each "
                         "within the sink's IDMP-MAXSIZE)")
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args(argv)

    import redis

    server = None
    url = args.url
    if url is None:
        server, url = start_streamd()
        print(f"started streamd at {url}")
    try:
        client = redis.Redis.from_url(url)
        if args.reset or server is not None:
            client.delete(ORDERS, RESULTS)
        t0 = time.time()
        ids = produce(client, args.orders)
        print(f"produced {len(ids)} orders in {time.time() - t0:.1f}s")

        from pyspark.sql import SparkSession

        from streamd.spark import register

        spark = (SparkSession.builder.master(args.master).appName("streamd-example")
                 .config("spark.ui.enabled", "false")
                 .config("spark.sql.shuffle.partitions", "2").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)

        with tempfile.TemporaryDirectory() as ckpt:
            start = time.time()
            query = build_query(spark, url, args.batch, ckpt)
            seen = 0

            def report() -> int:
                """Print the micro-batches finished since the last call."""
                progress = query.recentProgress
                for p in progress[seen:]:
                    if p["numInputRows"]:
                        lag = [g["lag"] for g in client.xinfo_groups(ORDERS)]
                        print(f"  batch {p['batchId']}: {p['numInputRows']} orders, "
                              f"{p['processedRowsPerSecond']:.0f} rows/s; results="
                              f"{client.xlen(RESULTS)}, group lag={lag[0] if lag else '-'}")
                return len(progress)

            while query.isActive:
                seen = report()
                time.sleep(0.5)
            query.awaitTermination()
            report()
            elapsed = time.time() - start
            batches = [p for p in query.recentProgress if p["numInputRows"]]
        spark.stop()

        produced = set(ids)
        got = [f[b"order"].decode() for _, f in client.xrange(RESULTS)]
        mine = [o for o in got if o in produced]
        lag = client.xinfo_groups(ORDERS)[0]["lag"]
        print(f"final: orders={client.xlen(ORDERS)} results={client.xlen(RESULTS)} "
              f"(this run: {len(mine)} results, {len(set(mine))} distinct) group lag={lag}")
        print(f"throughput: {len(ids) / elapsed:.0f} entries/s end to end "
              f"({len(ids)} orders in {elapsed:.1f}s from query start to finish, "
              f"{args.master}, batches of {args.batch})")
        # The first micro-batch also pays for starting Python workers; the rest show the
        # steady rate of read -> transform -> exactly-once write.
        steady = batches[1:]
        if steady:
            rows = sum(p["numInputRows"] for p in steady)
            secs = sum(p["durationMs"]["triggerExecution"] for p in steady) / 1000
            print(f"steady state (batches after the first): {rows / secs:.0f} entries/s")
        ok = len(mine) == len(set(mine)) == len(produced)
        print("exactly once: OK" if ok else "exactly once: MISMATCH")
        return 0 if ok else 1
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    sys.exit(main())
