"""Writers: batch (``df.write``) and streaming (``df.writeStream``) XADD sinks.

Exactly-once comes from IDMP, not from a transaction: every row is sent as
``XADD stream IDMP <pid> <iid> * field value ...`` where

- ``pid`` names the task slot: ``spark:<queryId>:<partitionId>`` for a streaming query (the
  query ID survives restarts from a checkpoint) or ``spark:<jobId>:<partitionId>`` for a
  batch write;
- ``iid`` names the row: ``<stream>:<id>`` from the source columns, or the ``idColumn``.
  Two rows of one task with the same ``<stream>:<id>`` (one entry turned into several
  rows) fail the task, since IDMP would keep only the first; repeated ``idColumn`` values
  are deduplicated, that column being the caller's own notion of identity.

A retried task, or a micro-batch replayed after a crash, re-sends the same (pid, iid) pairs;
the server answers duplicates with the original entry ID and adds nothing. This relies on
the replay putting each row in the same partition, which holds for the streamd reader
(deterministic partitions) and any deterministic pipeline without a repartition by random
keys.

A producer's window holds its last ``IDMP-MAXSIZE`` IIDs. One task must therefore never
write more rows than that, or its first rows could be evicted before a retry checks them;
a task that would do so fails with :class:`StreamdSparkError` instead of silently losing
dedup. Windows also expire after ``IDMP-DURATION`` seconds, which bounds how long after a
crash a restart still deduplicates (a day with the defaults this sink sets).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import logging
import struct
import uuid
from dataclasses import dataclass
from typing import Iterator, Mapping

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import MapType, StructType

from ._conn import (
    DEFAULT_IDMP_DURATION,
    DEFAULT_IDMP_MAXSIZE,
    MAX_IDMP_DURATION,
    MAX_IDMP_MAXSIZE,
    StreamdSparkError,
    bool_opt,
    connect,
    ensure_target,
    int_opt,
    opt,
    required,
    stream_info,
)
from ._ids import parse_id

log = logging.getLogger("streamd.spark")

DEFAULT_WRITE_BATCH = 500

# Local properties Spark sets on every task of a micro-batch.
QUERY_ID_PROPERTY = "sql.streaming.queryId"
BATCH_ID_PROPERTY = "streaming.sql.batchId"

# Source columns that identify a row and are not copied into the entry's fields.
SOURCE_COLUMNS = ("stream", "id")


@dataclass
class StreamdCommitMessage(WriterCommitMessage):
    """What one write task did: rows sent, how many of them the server reported as
    duplicates (already written by an earlier attempt), and the producer ID used."""

    partition_id: int
    attempt: int
    rows: int
    duplicates: int
    pid: str | None


def _json_default(value):
    """JSON text for what json.dumps cannot encode itself, found inside nested values."""
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()  # as Spark's to_json renders binary
    return str(value)


def _field_value(value) -> str | bytes:
    """Render a column value as a stream field value (nested values as JSON)."""
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, decimal.Decimal)):
        return str(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if hasattr(value, "asDict"):
        value = value.asDict(recursive=True)
    if not isinstance(value, (dict, list, tuple)):
        return str(value)
    return json.dumps(value, default=_json_default, sort_keys=True)


def _float32_text(value: float) -> str:
    """The shortest text that reads back as the same float32 (0.1, not 0.10000000149011612).

    Arrow hands float32 values over as the Python float nearest to them, whose repr shows
    digits the column never had.
    """
    for digits in range(1, 10):
        text = repr(float(f"{value:.{digits}g}"))
        if struct.unpack("f", struct.pack("f", float(text)))[0] == value:
            return text
    return repr(value)  # nan


def _column_values(column) -> list:
    """Python values of an Arrow column of field values: maps become dicts (so they render
    as JSON objects, not lists of pairs) and float32 values their own shortest text."""
    import pyarrow as pa

    if column.type == pa.float32():
        return [None if v is None else _float32_text(v) for v in column.to_pylist()]
    return column.to_pylist(maps_as_pydicts="lossy")


class _SinkBase:
    """Option parsing and the row loop shared by the batch and streaming writers.

    Instances are pickled to executors, so they hold only plain values (no client).
    """

    def __init__(self, options: Mapping[str, str], schema: StructType, streaming: bool):
        self.url = required(options, "url")
        self.stream = required(options, "stream")
        self.id_column = opt(options, "idColumn")
        self.idempotent = bool_opt(options, "idempotent", True)
        self.chunk = int_opt(options, "writeBatchSize", DEFAULT_WRITE_BATCH)
        # Checked here: out of range, XCFGSET would fail after the stream was created, and
        # the stream would keep the server's defaults for good (see ensure_target).
        self.duration = int_opt(options, "idmpDuration", DEFAULT_IDMP_DURATION,
                                maximum=MAX_IDMP_DURATION)
        self.maxsize = int_opt(options, "idmpMaxSize", DEFAULT_IDMP_MAXSIZE,
                               maximum=MAX_IDMP_MAXSIZE)
        self.streaming = streaming
        # A batch write needs a producer name shared by all attempts of its tasks: the
        # jobId option (stable across re-submissions, so a re-run job deduplicates too), or
        # a fresh UUID made here on the driver and shipped to every task with the writer.
        self.job_id = opt(options, "jobId") or (None if streaming else uuid.uuid4().hex)
        names = schema.fieldNames()
        lower = {n.lower(): n for n in names}
        fields_col = lower.get("fields")
        if fields_col is not None and not isinstance(schema[fields_col].dataType, MapType):
            fields_col = None  # an ordinary column that happens to be called 'fields'
        self.fields_col: str | None = fields_col
        # Columns added next to the map (say, a processing timestamp) are written too:
        # dropping them would lose data without a word.
        self.value_cols: list[str] = [n for n in names if n != fields_col
                                      and n.lower() not in SOURCE_COLUMNS]
        if fields_col is None and not self.value_cols:
            raise StreamdSparkError(
                "nothing to write: give a 'fields' map<string,string> column or at least "
                "one column besides 'stream' and 'id'")
        if self.id_column is not None:
            if self.id_column.lower() not in lower:
                raise StreamdSparkError(
                    f"idColumn '{self.id_column}' is not a column of {names}")
            self.id_column = lower[self.id_column.lower()]
            self.iid_cols: list[str] = [self.id_column]
        elif self.idempotent:
            if "stream" not in lower or "id" not in lower:
                raise StreamdSparkError(
                    "the idempotent streamd sink needs a row identity: keep the source "
                    "'stream' and 'id' columns, or name a unique column with option idColumn "
                    "(or set idempotent=false for an at-least-once sink)")
            self.iid_cols = [lower["stream"], lower["id"]]
        else:
            self.iid_cols = []
        if self.idempotent:
            # Create the target once from the driver, so the configuration is in place
            # before any task runs (tasks repeat the cheap check in case it was deleted).
            client = connect(self.url)
            try:
                ensure_target(client, self.stream, self.duration, self.maxsize)
            finally:
                client.close()

    def _columns(self) -> list[str]:
        """Input columns the sink reads as they are: the fields map and the row identity."""
        cols = [self.fields_col] if self.fields_col is not None else []
        return cols + [c for c in self.iid_cols if c not in cols]

    def _records(self, batches: Iterator) -> Iterator[tuple[str | None, list]]:
        """``(iid, [field, value, ...])`` for every row of the incoming Arrow batches.

        Works column-wise (one to_pylist() per column and batch) instead of building a
        Spark Row per record, which is what makes the Arrow writer API worth using.
        """
        for batch in batches:
            cols = {name: batch.column(name).to_pylist() for name in self._columns()}
            # Kept apart from ``cols``: the iid of an idColumn that is also written as a
            # field must not depend on how the field is rendered.
            values = {name: _column_values(batch.column(name)) for name in self.value_cols}
            for i in range(batch.num_rows):
                yield self._iid(cols, i), self._fields(cols, values, i)

    def _iid(self, cols: dict, i: int) -> str | None:
        if not self.iid_cols:
            return None
        if self.id_column is not None:
            value = cols[self.id_column][i]
            if value is None:
                raise StreamdSparkError(f"idColumn '{self.id_column}' is null in a row")
            return str(value)
        stream, eid = cols[self.iid_cols[0]][i], cols[self.iid_cols[1]][i]
        if stream is None or eid is None:
            raise StreamdSparkError("'stream' or 'id' is null in a row")
        # An entry ID never contains ':', so the last ':' splits this unambiguously.
        return f"{stream}:{eid}"

    def _fields(self, cols: dict, values: dict, i: int) -> list:
        flat: list = []
        if self.fields_col is not None:
            for key, value in cols[self.fields_col][i] or ():
                if value is not None:
                    flat += (key, _field_value(value))
        for name in self.value_cols:
            value = values[name][i]
            if value is not None:
                flat += (name, _field_value(value))
        if not flat:
            raise StreamdSparkError("a row has no non-null field to write (iid "
                                    f"{self._iid(cols, i)!r})")
        return flat

    def _producer(self, ctx) -> str:
        if self.streaming:
            query = ctx.getLocalProperty(QUERY_ID_PROPERTY) if ctx else None
            if not query:
                raise StreamdSparkError("streaming write without the sql.streaming.queryId "
                                        "task property; cannot name the IDMP producer")
            return f"spark:{query}:{ctx.partitionId()}"
        return f"spark:{self.job_id}:{ctx.partitionId() if ctx else 0}"

    def _write_batches(self, batches: Iterator) -> StreamdCommitMessage:
        """Send every row of ``batches`` (Arrow) with pipelined XADDs, ``writeBatchSize``
        per round trip; the IDMP-MAXSIZE guard fails the task before it writes too many."""
        from pyspark import TaskContext

        ctx = TaskContext.get()
        part = ctx.partitionId() if ctx else 0
        attempt = ctx.attemptNumber() if ctx else 0
        batch_id = ctx.getLocalProperty(BATCH_ID_PROPERTY) if (ctx and self.streaming) else None
        pid = self._producer(ctx) if self.idempotent else None
        client = connect(self.url)
        sent = dups = 0
        try:
            limit = None
            baseline = (0, 0)
            if self.idempotent:
                ensure_target(client, self.stream, self.duration, self.maxsize)
                info = stream_info(client, self.stream)
                limit = int(info["idmp-maxsize"]) if info.get("idmp-maxsize") else None
                if limit is None:
                    raise StreamdSparkError(
                        f"stream '{self.stream}' reports no idmp-maxsize in XINFO STREAM: the "
                        "server lacks IDMP (needs streamd or Redis >= 8.6); use "
                        "idempotent=false for an at-least-once sink")
                # Every ID the server hands back that is not newer than this was there
                # before the task started, i.e. the reply to a duplicate.
                baseline = parse_id(info.get("last-generated-id") or b"0-0")
            pipe = client.pipeline(transaction=False)
            pending = 0
            # With the default identity a repeated iid is not a replay but a second row made
            # from one source entry (explode, a join, a union): IDMP would keep only the
            # first. The guard above bounds this set to IDMP-MAXSIZE iids.
            seen: set | None = set() if self.idempotent and self.id_column is None else None

            def flush() -> int:
                replies = pipe.execute()
                return sum(1 for r in replies if parse_id(r) <= baseline)

            for iid, flat in self._records(batches):
                if limit is not None and sent >= limit:
                    raise StreamdSparkError(
                        f"write task for partition {part}"
                        + (f" of micro-batch {batch_id}" if batch_id is not None else "")
                        + f" has more than {limit} rows, the IDMP-MAXSIZE of stream "
                        f"'{self.stream}': beyond that its oldest dedup records would be "
                        "evicted and a retry could duplicate them. Use more partitions "
                        "(e.g. numPartitions on the streamd reader, or repartition), a "
                        "smaller maxEntriesPerTrigger, or a larger IDMP-MAXSIZE (option "
                        "idmpMaxSize, which only applies when the sink creates the stream)")
                if seen is not None:
                    if iid in seen:
                        raise StreamdSparkError(
                            f"write task for partition {part} has two rows from source entry "
                            f"{iid!r}; the idempotent sink would write only the first. Name a "
                            "column unique per row with option idColumn (e.g. stream, id and "
                            "the position within the entry), or set idempotent=false")
                    seen.add(iid)
                if self.idempotent:
                    pipe.execute_command("XADD", self.stream, "IDMP", pid, iid, "*", *flat)
                else:
                    pipe.execute_command("XADD", self.stream, "*", *flat)
                sent += 1
                pending += 1
                if pending >= self.chunk:
                    dups += flush()
                    pending = 0
            if pending:
                dups += flush()
        finally:
            client.close()
        if not self.idempotent:
            dups = 0
        return StreamdCommitMessage(part, attempt, sent, dups, pid)

    def _summary(self, messages, what: str) -> None:
        done = [m for m in messages if isinstance(m, StreamdCommitMessage)]
        log.info("streamd sink %s on %s: %d rows sent by %d tasks, %d duplicates dropped",
                 what, self.stream, sum(m.rows for m in done), len(done),
                 sum(m.duplicates for m in done))


class StreamdBatchWriter(_SinkBase, DataSourceArrowWriter):
    """``df.write.format("streamd")``: appends every row to ``stream``.

    Options: url, stream, idColumn, jobId (producer name; pass a stable one to make a
    re-submitted job deduplicate against its earlier run), idempotent, writeBatchSize,
    idmpDuration/idmpMaxSize (used only when the sink creates the stream).
    """

    def __init__(self, options: Mapping[str, str], schema: StructType):
        super().__init__(options, schema, streaming=False)

    def write(self, iterator: Iterator) -> StreamdCommitMessage:
        """Write one partition, given as Arrow record batches (runs on an executor)."""
        return self._write_batches(iterator)

    def commit(self, messages) -> None:
        """Entries are already visible once written; only log a summary."""
        self._summary(messages, "batch write committed")

    def abort(self, messages) -> None:
        """Entries written before the failure stay; re-running the job with the same
        ``jobId`` completes it without duplicates."""
        self._summary(messages, "batch write aborted")


class StreamdStreamWriter(_SinkBase, DataSourceStreamArrowWriter):
    """``df.writeStream.format("streamd")``: exactly-once XADD sink (see module doc)."""

    def __init__(self, options: Mapping[str, str], schema: StructType):
        super().__init__(options, schema, streaming=True)

    def write(self, iterator: Iterator) -> StreamdCommitMessage:
        """Write one partition of a micro-batch, as Arrow batches (runs on an executor)."""
        return self._write_batches(iterator)

    def commit(self, messages, batchId: int) -> None:
        """Runs on the driver in a fresh writer; the data is already in place, so this only
        logs what the batch did (duplicates > 0 means a retry or replay was absorbed)."""
        self._summary(messages, f"micro-batch {batchId} committed")

    def abort(self, messages, batchId: int) -> None:
        """Nothing to undo: a replay of the batch re-sends the same (pid, iid) pairs."""
        self._summary(messages, f"micro-batch {batchId} aborted")
