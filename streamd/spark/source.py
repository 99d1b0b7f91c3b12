"""Readers: batch (``spark.read``) and micro-batch streaming (``spark.readStream``).

Rows are ``(stream, id, fields)``, produced as Arrow record batches. Work is split into
:class:`StreamRange` partitions, each an inclusive ID range of one stream read with paged
``XRANGE``. A micro-batch's partition bounds are fixed when the batch is planned and stored
in its end offset, so a replayed micro-batch gets the same partitions -- and hence the sink
the same producer IDs -- as the first run; batch reads split by time (see
:func:`streamd.spark._ids.split_range`).
"""

from __future__ import annotations

import json
import logging
from typing import Iterator, Mapping

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from ._conn import (
    MAX_IDMP_MAXSIZE,
    StreamdSparkError,
    bool_opt,
    connect,
    int_opt,
    opt,
    required,
    stream_list,
)
from ._ids import MAX_SEQ, StreamID, fmt_id, next_id, parse_id, split_range

log = logging.getLogger("streamd.spark")

ZERO: StreamID = (0, 0)

# How many entries one XRANGE call fetches while reading a partition.
DEFAULT_READ_BATCH = 1000
# Partitions per stream and per (micro-)batch.
DEFAULT_PARTITIONS = 4
# Without maxEntriesPerTrigger a micro-batch admits numPartitions times this many entries:
# the most one write task of the streamd sink can deduplicate (its IDMP window). A bigger
# batch would fail that task on every replay, with no way to shrink the batch afterwards.
DEFAULT_ENTRIES_PER_PARTITION = MAX_IDMP_MAXSIZE
# With the ``group`` option, commit() counts the entries after the committed ID (to set the
# group's entries-read so XINFO GROUPS shows an exact lag) only up to this many.
LAG_SCAN_LIMIT = 1000


class StreamRange(InputPartition):
    """One task's work: entries of ``stream`` with ``lo <= id <= hi`` (``ms-seq`` strings)."""

    def __init__(self, stream: str, lo: str, hi: str):
        super().__init__((stream, lo, hi))
        self.stream, self.lo, self.hi = stream, lo, hi

    def __repr__(self) -> str:
        return f"StreamRange({self.stream!r}, {self.lo}, {self.hi})"


def _text(value: bytes | str) -> str:
    """Decode a reply to str; invalid UTF-8 becomes U+FFFD (Spark strings must be UTF-8)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _pairs(flat: list) -> list[tuple]:
    """An entry's ``[field, value, ...]`` as (field, value) pairs with unique fields.

    XADD accepts a field name twice, but a Spark map must not hold a key twice: Spark would
    answer ``fields['f']`` with the first value, collect() with the last, and map_concat
    would fail with DUPLICATED_MAP_KEY. The last value wins, as in redis-py's dicts and
    Spark's own LAST_WIN policy.
    """
    names = flat[::2]
    if len(names) > 1 and len(set(names)) < len(names):
        return list(dict(zip(names, flat[1::2])).items())
    return list(zip(names, flat[1::2]))


def _arrow_schema():
    """The Arrow schema Spark expects for :data:`SCHEMA` (checked by Spark on every batch)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import MapType, StringType, StructField, StructType

    return to_arrow_schema(StructType([
        StructField("stream", StringType()), StructField("id", StringType()),
        StructField("fields", MapType(StringType(), StringType()))]), timezone="UTC")


def _page_batch(schema, stream: str, entries: list):
    """One XRANGE page as an Arrow RecordBatch.

    Built column-wise by pyarrow in C, which is several times faster than handing Spark
    Python tuples to convert row by row. Entries that are not valid UTF-8 make pyarrow
    refuse the page; it is then decoded in Python with U+FFFD replacements.
    """
    import pyarrow as pa

    ids = [e[0] for e in entries]
    pairs = [_pairs(f) for _, f in entries]
    try:
        cols = [pa.array(ids, pa.string()), pa.array(pairs, schema.field("fields").type)]
    except pa.ArrowInvalid:
        # Decoding can make two distinct field names equal (both become U+FFFD).
        cols = [pa.array([_text(i) for i in ids], pa.string()),
                pa.array([_pairs([_text(x) for kv in p for x in kv]) for p in pairs],
                         schema.field("fields").type)]
    return pa.RecordBatch.from_arrays(
        [pa.array([stream] * len(entries), pa.string()), *cols], schema=schema)


def read_range(url: str, part: StreamRange, batch: int) -> Iterator:
    """Yield Arrow batches of ``(stream, id, fields)`` for the entries in ``part``.

    Pages through XRANGE ``batch`` entries at a time; the client's XRANGE reply callback is
    dropped so replies stay raw ``[id, [field, value, ...]]`` lists (no per-entry dicts).
    """
    client = connect(url)
    client.response_callbacks.pop("XRANGE", None)
    schema = _arrow_schema()
    try:
        cursor = part.lo
        while True:
            entries = client.execute_command("XRANGE", part.stream, cursor, part.hi,
                                             "COUNT", batch)
            if entries:
                yield _page_batch(schema, part.stream, entries)
            if len(entries) < batch:
                return
            cursor = "(" + _text(entries[-1][0])
    finally:
        client.close()


def _first_in(client, stream: str, lo: str, hi: str) -> StreamID | None:
    """ID of the first entry with lo <= id <= hi (XRANGE syntax), or None."""
    got = client.execute_command("XRANGE", stream, lo, hi, "COUNT", 1)
    return parse_id(got[0][0]) if got else None


def _last_in(client, stream: str, hi: str = "+", lo: str = "-") -> StreamID | None:
    """ID of the last entry with lo <= id <= hi (XRANGE syntax), or None."""
    got = client.execute_command("XREVRANGE", stream, hi, lo, "COUNT", 1)
    return parse_id(got[0][0]) if got else None


def _count_between(client, stream: str, lo: str, hi: str) -> int:
    """Number of entries with lo < id <= hi (paged XRANGE)."""
    n, cursor = 0, "(" + lo
    while True:
        got = client.execute_command("XRANGE", stream, cursor, hi, "COUNT", 1000)
        n += len(got)
        if len(got) < 1000:
            return n
        cursor = "(" + _text(got[-1][0])


def plan_ranges(stream: str, first: StreamID, last: StreamID, parts: int) -> list[StreamRange]:
    """Partitions for the inclusive range [first, last] of one stream (pure function)."""
    return [StreamRange(stream, fmt_id(lo), fmt_id(hi))
            for lo, hi in split_range(first, last, parts)]


class StreamdBatchReader(DataSourceReader):
    """Batch read of ``streams`` between the ``start`` and ``end`` options (inclusive).

    ``start``/``end`` take XRANGE syntax (``-``, ``+``, ``ms`` or ``ms-seq``). partitions()
    resolves them to the first and last entry present at planning time and cuts that range
    into ``numPartitions`` slices per stream.
    """

    def __init__(self, options: Mapping[str, str]):
        self.url = required(options, "url")
        self.streams = stream_list(options)
        self.start = opt(options, "start", "-") or "-"
        self.end = opt(options, "end", "+") or "+"
        self.parts = int_opt(options, "numPartitions", DEFAULT_PARTITIONS)
        self.batch = int_opt(options, "readBatchSize", DEFAULT_READ_BATCH)

    def partitions(self) -> list[StreamRange]:
        """Deterministic ID-range partitions for every stream (none for empty ranges)."""
        client = connect(self.url)
        try:
            out: list[StreamRange] = []
            for stream in self.streams:
                first = _first_in(client, stream, self.start, self.end)
                if first is None:
                    continue
                last = _last_in(client, stream, self.end, self.start)
                out.extend(plan_ranges(stream, first, last, self.parts))
            # Spark needs at least one partition; an empty range reads nothing.
            return out or [StreamRange(self.streams[0], "1-0", "0-0")]
        finally:
            client.close()

    def read(self, partition: StreamRange) -> Iterator:
        """Arrow batches of one partition (runs on an executor; opens its own connection)."""
        if parse_id(partition.hi, default_seq=MAX_SEQ) < parse_id(partition.lo):
            return iter(())
        return read_range(self.url, partition, self.batch)


def _offset_json(streams: list[str], ids: Mapping[str, StreamID]) -> dict:
    """Offset dict ``{stream: "ms-seq"}`` in the fixed order of the ``streams`` option.

    Spark compares offsets by their JSON text, so the key order must never vary.
    """
    return {s: fmt_id(ids.get(s, ZERO)) for s in streams}


def _offset_id(value) -> StreamID:
    """The last ID an offset value includes: ``"ms-seq"``, or ``{"last": ..., "cuts": ...}``."""
    return parse_id(value["last"] if isinstance(value, dict) else str(value))


def _cuts(ids: list[StreamID], parts: int) -> list[str]:
    """Where to cut the sorted entry IDs ``ids`` into at most ``parts`` runs of nearly equal
    length: the last ID of every run but the final one."""
    n = len(ids)
    k = min(parts, n)
    return [fmt_id(ids[(j * n + k - 1) // k - 1]) for j in range(1, k)]


def _ranges_from_cuts(stream: str, begin: StreamID, last: StreamID,
                      cuts: list[str]) -> list[StreamRange]:
    """Partitions (begin, cut1], (cut1, cut2], ..., (cutN, last] as inclusive ranges."""
    out, after = [], begin
    for hi in [*(parse_id(c) for c in cuts), last]:
        out.append(StreamRange(stream, fmt_id(next_id(after)), fmt_id(hi)))
        after = hi
    return out


class StreamdStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batch reader. Offsets are ``{stream: last ID included}``; a stream that a
    micro-batch admitted under a read limit has ``{"last": id, "cuts": [id, ...]}``, the
    partition bounds chosen when the batch was planned (see ``latestOffset``).

    Spark's checkpoint (offset and commit logs) is the only source of truth for progress;
    the optional ``group`` is a mirror updated in commit() for monitoring (XINFO GROUPS
    lag), never read back. Supports ``maxEntriesPerTrigger`` (ReadMaxRows admission
    control: the oldest entries across all streams go first) and Trigger.AvailableNow.

    Spark creates instances of this class in several processes (a long-lived planner on the
    driver, and one per read task), so __init__ only parses options; connections are opened
    per call.
    """

    def __init__(self, options: Mapping[str, str]):
        self.url = required(options, "url")
        self.streams = stream_list(options)
        self.starting = opt(options, "startingOffsets", "latest") or "latest"
        self.parts = int_opt(options, "numPartitions", DEFAULT_PARTITIONS)
        # 0 = no limit (all available entries in every micro-batch)
        self.max_entries = int_opt(options, "maxEntriesPerTrigger",
                                   self.parts * DEFAULT_ENTRIES_PER_PARTITION, minimum=0)
        self.batch = int_opt(options, "readBatchSize", DEFAULT_READ_BATCH)
        self.group = opt(options, "group")
        self.strict_group = bool_opt(options, "groupStrict", False)
        # Set by prepareForTriggerAvailableNow(): the tail IDs that bound this run.
        self.target: dict[str, StreamID] | None = None
        # Last offset mirrored into the group (the planner instance lives for the query).
        self.mirrored: dict | None = None
        # json(end offset) -> (start offset, {stream: entries}) for recent limited batches.
        self.batch_sizes: dict[str, tuple[dict, dict]] = {}

    # -- offsets -------------------------------------------------------------------------

    def _tails(self) -> dict[str, StreamID]:
        """Current last entry ID of every stream (0-0 for a missing or empty stream)."""
        client = connect(self.url)
        try:
            return {s: _last_in(client, s) or ZERO for s in self.streams}
        finally:
            client.close()

    def initialOffset(self) -> dict:
        """Where a new query starts: ``earliest``, ``latest`` or a JSON ``{stream: id}``.

        Streams missing from a JSON value start at the beginning. Each offset is the last
        ID *already consumed*, so ``earliest`` is 0-0 and ``latest`` the current tail.
        """
        mode = self.starting.strip()
        if mode.lower() == "earliest":
            return _offset_json(self.streams, {})
        if mode.lower() == "latest":
            return _offset_json(self.streams, self._tails())
        try:
            given = json.loads(mode)
            if not isinstance(given, dict):
                raise ValueError("not an object")
            # A misspelt name would otherwise leave the real stream to start at 0-0 and
            # silently replay its whole history.
            unknown = [s for s in given if s not in self.streams]
            if unknown:
                raise ValueError(f"{unknown} not among the streams option's {self.streams}")
            ids = {s: parse_id(str(given[s])) for s in self.streams if s in given}
        except ValueError as exc:
            raise StreamdSparkError(
                "startingOffsets must be 'earliest', 'latest' or a JSON object "
                f"{{\"stream\": \"ms-seq\"}}; got {self.starting!r} ({exc})") from None
        return _offset_json(self.streams, ids)

    def _start_ids(self, start: dict) -> dict[str, StreamID]:
        # A stream added to the option after the query started has no offset yet: it is
        # read from the beginning.
        return {s: _offset_id(start[s]) if s in start else ZERO for s in self.streams}

    def _end_offset(self, start: dict, begin: dict, ends: dict, cuts: dict) -> dict:
        """The offset of a batch reading (begin, ends]: a stream that does not advance keeps
        its value from ``start`` as it was, so "no new data" returns ``start`` itself."""
        out = {}
        for s in self.streams:
            if ends[s] == begin[s] and s in start:
                out[s] = start[s]
            elif s in cuts:
                out[s] = {"last": fmt_id(ends[s]), "cuts": cuts[s]}
            else:
                out[s] = fmt_id(ends[s])
        return out

    def getDefaultReadLimit(self) -> ReadLimit:
        """ReadMaxRows(maxEntriesPerTrigger), by default numPartitions x 10,000 (what the
        streamd sink's write tasks can deduplicate); all available when the option is 0."""
        if self.max_entries > 0:
            return ReadMaxRows(self.max_entries)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Freeze the current tails: an AvailableNow run never reads past them."""
        self.target = self._tails()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        """End offset of the next micro-batch, honouring ``limit`` and the AvailableNow target.

        With ReadMaxRows(n) the next n entries in ID (= time) order across all streams are
        admitted, so a busy stream cannot starve the others. Any other limit reads all.
        Returning ``start`` unchanged means "no new data".
        """
        begin = self._start_ids(start)
        # Spark commits source offsets lazily (the last batch of an AvailableNow run never
        # gets a commit() call); ``start`` is the end of the previous batch, whose
        # commit-log entry is written before the engine asks for the next one.
        self._mirror_group(start)
        tails = self.target if self.target is not None else self._tails()
        ends = {s: max(begin[s], tails.get(s, ZERO)) for s in self.streams}
        if not isinstance(limit, ReadMaxRows):
            return self._end_offset(start, begin, ends, {})
        budget = limit.max_rows
        client = connect(self.url)
        try:
            candidates: list[tuple[StreamID, str]] = []
            for s in self.streams:
                if ends[s] <= begin[s]:
                    continue
                got = client.execute_command("XRANGE", s, "(" + fmt_id(begin[s]),
                                             fmt_id(ends[s]), "COUNT", budget)
                candidates.extend((parse_id(eid), s) for eid, _ in got)
        finally:
            client.close()
        candidates.sort()
        limited = dict(begin)
        admitted: dict[str, list[StreamID]] = {s: [] for s in self.streams}
        for sid, s in candidates[:budget]:
            limited[s] = max(limited[s], sid)
            admitted[s].append(sid)
        counts = {s: len(ids) for s, ids in admitted.items()}
        # The partition bounds are fixed here, from the entries admitted, and travel in the
        # offset: a replay after a restart reads the same ranges (and the sink writes each
        # row under the same producer) even if entries of the batch were deleted meanwhile,
        # and every partition holds an equal share, whatever the arrival pattern.
        end = self._end_offset(start, begin, limited,
                               {s: _cuts(ids, self.parts) for s, ids in admitted.items() if ids})
        # Remember how many entries each stream contributes, so the group mirror can
        # advance entries-read without scanning the stream again.
        self.batch_sizes[json.dumps(end)] = (_offset_json(self.streams, begin), counts)
        while len(self.batch_sizes) > 16:
            self.batch_sizes.pop(next(iter(self.batch_sizes)))
        return end

    def reportLatestOffset(self) -> dict:
        """Current tails, shown as ``latestOffset`` in the query progress."""
        return _offset_json(self.streams, self._tails())

    # -- planning and reading ----------------------------------------------------------

    def partitions(self, start: dict, end: dict) -> list[StreamRange]:
        """Partitions for the entries in (start, end] of every stream.

        A batch planned under a read limit (the default) carries its cuts in ``end``.
        Otherwise (all available) the range is split by time, starting at the first entry
        actually present after ``start`` (so a query starting at 0-0 is not cut on the
        empty span since 1970); such a replay gets the same partitions as long as that
        first entry is not deleted in between.
        """
        begin = self._start_ids(start)
        ends = self._start_ids(end)
        client = connect(self.url)
        try:
            out: list[StreamRange] = []
            for s in self.streams:
                if ends[s] <= begin[s]:
                    continue
                value = end.get(s)
                if isinstance(value, dict) and isinstance(value.get("cuts"), list):
                    out.extend(_ranges_from_cuts(s, begin[s], ends[s], value["cuts"]))
                    continue
                first = _first_in(client, s, "(" + fmt_id(begin[s]), fmt_id(ends[s]))
                if first is not None:
                    out.extend(plan_ranges(s, first, ends[s], self.parts))
            return out
        finally:
            client.close()

    def read(self, partition: StreamRange) -> Iterator:
        """Arrow batches of one partition (runs on an executor; opens its own connection)."""
        return read_range(self.url, partition, self.batch)

    # -- progress mirror ---------------------------------------------------------------

    def commit(self, end: dict) -> None:
        """Mirror the committed offsets into consumer group ``group`` (if configured).

        Also called from latestOffset() with the previous batch's end, because Spark calls
        commit() lazily and skips it for the final batch of an AvailableNow run.

        The group is created at the committed ID if missing, then moved with XGROUP SETID
        and an ENTRIESREAD that makes XINFO GROUPS report an exact lag:
        - for a batch admitted under maxEntriesPerTrigger, whose per-stream size
          latestOffset() recorded, the group's entries-read plus that size;
        - otherwise, from an atomic snapshot (MULTI: XINFO STREAM, up to LAG_SCAN_LIMIT
          entries after the committed ID, XINFO GROUPS): entries-added minus the pending
          entries if fewer than the limit, else the group's entries-read plus the entries
          of this batch counted with XRANGE;
        - if neither is known (e.g. someone else moved the group), SETID without it, and
          Redis shows the lag as unknown.
        Failures are logged, not raised, because the mirror is informational (option
        groupStrict=true makes them fatal).
        """
        self._mirror_group(end)

    def _mirror_group(self, end: dict) -> None:
        if not self.group or end == self.mirrored:
            return
        import redis

        prev, sizes = self.batch_sizes.get(json.dumps(end), (None, None))
        client = connect(self.url)
        try:
            for s, last in self._start_ids(end).items():
                try:
                    if sizes is None or not self._advance(client, s, prev.get(s), fmt_id(last),
                                                          sizes.get(s, 0)):
                        self._mirror(client, s, fmt_id(last))
                except redis.RedisError as exc:
                    if self.strict_group:
                        raise
                    log.warning("streamd: could not update group %s on %s: %s",
                                self.group, s, exc)
        finally:
            client.close()
        self.mirrored = dict(end)

    def _advance(self, client, stream: str, prev: str | None, last: str, n: int) -> bool:
        """Move the group from ``prev`` to ``last`` adding the ``n`` entries of the batch to
        its entries-read; False (do nothing) unless the group sits exactly at ``prev`` with
        a known entries-read."""
        groups = client.xinfo_groups(stream) if client.exists(stream) else []
        grp = next((g for g in groups if _text(g["name"]) == self.group), None)
        if (grp is None or prev is None or _text(grp["last-delivered-id"]) != prev
                or grp.get("entries-read") is None):
            return False
        if prev != last:
            client.execute_command("XGROUP", "SETID", stream, self.group, last,
                                   "ENTRIESREAD", int(grp["entries-read"]) + n)
        return True

    def _mirror(self, client, stream: str, last: str) -> None:
        import redis

        if not client.exists(stream):
            return
        try:
            client.execute_command("XGROUP", "CREATE", stream, self.group, last)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        with client.pipeline(transaction=True) as pipe:
            pipe.xinfo_stream(stream)
            pipe.execute_command("XRANGE", stream, "(" + last, "+", "COUNT", LAG_SCAN_LIMIT)
            pipe.xinfo_groups(stream)
            info, after, groups = pipe.execute()
        read = None
        added, length = info.get("entries-added"), info.get("length", 0)
        if added is not None and len(after) < LAG_SCAN_LIMIT:
            # Everything not after ``last`` counts as read, including deleted entries.
            read = int(added) - len(after)
        elif added is not None:
            # Long backlog: advance the group's own count by the entries in this batch.
            grp = next((g for g in groups if _text(g["name"]) == self.group), None)
            first = info.get("first-entry")
            if grp is not None and parse_id(grp["last-delivered-id"]) <= parse_id(last):
                done, base = _text(grp["last-delivered-id"]), grp.get("entries-read")
                if base is None and (first is None or parse_id(done) < parse_id(first[0])):
                    base = int(added) - int(length)  # all entries up to the first are gone
                if base is not None:
                    read = int(base) + _count_between(client, stream, done, last)
        if read is None:
            client.execute_command("XGROUP", "SETID", stream, self.group, last)
        else:
            client.execute_command("XGROUP", "SETID", stream, self.group, last,
                                   "ENTRIESREAD", max(0, read))

    def stop(self) -> None:
        """Nothing to release: connections are opened and closed per call."""
