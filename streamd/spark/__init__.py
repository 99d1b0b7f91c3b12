"""PySpark data source ``streamd``: read and write Redis streams, batch and streaming.

Usage::

    from streamd.spark import register
    register(spark)
    df = (spark.read.format("streamd")
          .option("url", "redis://localhost:6379/0").option("streams", "orders").load())
    df.write.format("streamd").option("url", url).option("stream", "copy").save()

Reader options: ``url``, ``streams`` (comma-separated), ``start``/``end`` (batch),
``startingOffsets`` (``earliest`` | ``latest`` | JSON), ``maxEntriesPerTrigger`` (default
``numPartitions`` x 10,000, what the sink's tasks can deduplicate; 0 = no limit),
``group`` (a consumer group mirroring the query's progress), ``groupStrict`` (default false:
a failed update of it is logged; true makes it fail the query), ``numPartitions`` (per stream),
``readBatchSize``. Columns: ``stream`` string,
``id`` string, ``fields`` map<string,string>.

Writer options: ``url``, ``stream``, ``idColumn``, ``jobId`` (batch), ``idempotent``
(default true: exactly-once via XADD IDMP), ``writeBatchSize``, ``idmpDuration``,
``idmpMaxSize``. See :mod:`streamd.spark.sink` for the exactly-once argument. An entry's
fields are the pairs of a ``fields`` map column, if there is one, followed by every other
column except ``stream`` and ``id`` (nulls are left out).

Needs ``pip install 'streamd[spark]'`` (pyspark >= 4.0, pyarrow, redis) in the driver's
interpreter and the workers' (set PYSPARK_PYTHON to the same interpreter).
"""

from __future__ import annotations

from ._conn import SCHEMA, StreamdSparkError, require_pyarrow

try:
    from pyspark.sql.datasource import DataSource
except ImportError as exc:  # pragma: no cover - exercised only without pyspark
    raise ImportError("streamd.spark needs PySpark >= 4.0: pip install 'streamd[spark]'") from exc

__all__ = ["StreamdDataSource", "StreamdSparkError", "register", "FORMAT"]

FORMAT = "streamd"


class StreamdDataSource(DataSource):
    """The ``streamd`` format: a Python data source over Redis Streams (RESP)."""

    def __init__(self, options):
        require_pyarrow()
        super().__init__(options)

    @classmethod
    def name(cls) -> str:
        """Format name used in ``spark.read.format(...)``."""
        return FORMAT

    def schema(self) -> str:
        """Fixed read schema: stream, id, fields."""
        return SCHEMA

    def reader(self, schema):
        """Batch reader (``spark.read``)."""
        from .source import StreamdBatchReader

        return StreamdBatchReader(self.options)

    def streamReader(self, schema):
        """Micro-batch reader (``spark.readStream``)."""
        from .source import StreamdStreamReader

        return StreamdStreamReader(self.options)

    def writer(self, schema, overwrite: bool):
        """Batch writer (``df.write``); streams are append-only, so overwrite is refused."""
        from .sink import StreamdBatchWriter

        if overwrite:
            raise StreamdSparkError("the streamd sink only appends; use mode('append')")
        return StreamdBatchWriter(self.options, schema)

    def streamWriter(self, schema, overwrite: bool):
        """Streaming writer (``df.writeStream``), append output mode."""
        from .sink import StreamdStreamWriter

        return StreamdStreamWriter(self.options, schema)


def register(spark) -> None:
    """Register the ``streamd`` format with a SparkSession (checks pyarrow first)."""
    require_pyarrow()
    spark.dataSource.register(StreamdDataSource)
