"""Connections, option parsing and target-stream set-up shared by the reader and the sink.

Redis clients hold sockets and cannot be pickled, so nothing here caches a client on an
object Spark may serialise: callers open one with :func:`connect` inside the method that
uses it (``partitions()``, ``read()``, ``write()``, ``commit()``) and close it there.
"""

from __future__ import annotations

from typing import Mapping

SCHEMA = "stream string, id string, fields map<string,string>"

# The largest IDMP settings XCFGSET accepts (the smallest is 1).
MAX_IDMP_DURATION = 86400
MAX_IDMP_MAXSIZE = 10000
# Defaults applied when the sink creates its target stream (the largest values Redis
# accepts): a day of dedup history and 10,000 IIDs per producer.
DEFAULT_IDMP_DURATION = MAX_IDMP_DURATION
DEFAULT_IDMP_MAXSIZE = MAX_IDMP_MAXSIZE

# Temporary consumer group used to create an empty stream (XGROUP CREATE ... MKSTREAM is the
# only way to create a stream without adding an entry); destroyed in the same transaction.
_INIT_GROUP = "__streamd_spark_init__"


class StreamdSparkError(RuntimeError):
    """A configuration or runtime problem of the streamd Spark data source."""


def require_pyarrow() -> None:
    """Fail early with an actionable message if pyarrow is missing.

    Without it PySpark fails deep inside the Python data source machinery with an
    ImportError that does not mention the data source at all.
    """
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise StreamdSparkError(
            "the streamd Spark data source needs pyarrow on the driver and on every worker: "
            "pip install 'streamd[spark]' (or pip install pyarrow) in the interpreter named "
            "by PYSPARK_PYTHON") from exc


def opt(options: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """Read an option case-insensitively (Spark hands them over lower-cased)."""
    low = name.lower()
    for key, value in options.items():
        if key.lower() == low:
            return value
    return default


def required(options: Mapping[str, str], name: str) -> str:
    """Read a mandatory option or raise a clear error naming it."""
    value = opt(options, name)
    if value is None or value == "":
        raise StreamdSparkError(f"option '{name}' is required by the streamd data source")
    return value


def int_opt(options: Mapping[str, str], name: str, default: int, minimum: int = 1,
            maximum: int | None = None) -> int:
    """Read an integer option, validating its bounds."""
    raw = opt(options, name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise StreamdSparkError(f"option '{name}' must be an integer, got {raw!r}") from None
    if value < minimum:
        raise StreamdSparkError(f"option '{name}' must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise StreamdSparkError(f"option '{name}' must be <= {maximum}, got {value}")
    return value


def bool_opt(options: Mapping[str, str], name: str, default: bool) -> bool:
    """Read a boolean option (true/false, case-insensitive)."""
    raw = opt(options, name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no"):
        return False
    raise StreamdSparkError(f"option '{name}' must be true or false, got {raw!r}")


def stream_list(options: Mapping[str, str]) -> list[str]:
    """The ``streams`` option as a de-duplicated list, in the order given."""
    names = [s.strip() for s in required(options, "streams").split(",")]
    out = list(dict.fromkeys(s for s in names if s))
    if not out:
        raise StreamdSparkError("option 'streams' names no stream")
    return out


def connect(url: str):
    """Open a redis-py client for ``redis://host:port/db`` (bytes replies, RESP2)."""
    import redis

    return redis.Redis.from_url(url, socket_timeout=60, socket_connect_timeout=10,
                                health_check_interval=0, decode_responses=False)


def ensure_target(client, stream: str, duration: int, maxsize: int) -> bool:
    """Create ``stream`` empty with the given IDMP settings unless it already exists.

    Atomicity: ``WATCH stream``, ``EXISTS``; if missing, one ``MULTI`` creates the key with
    ``XGROUP CREATE ... MKSTREAM``, drops the helper group again and applies ``XCFGSET``.
    If anyone touches the key between WATCH and EXEC the transaction is discarded and the
    check repeats, so an existing stream's configuration (and with it its dedup history,
    which XCFGSET clears on change) is never modified, and no placeholder entry is ever
    written. Returns True when this call created the stream.

    ``duration`` and ``maxsize`` must be within XCFGSET's ranges: MULTI does not roll back,
    so a rejected XCFGSET would leave the stream created with the server's defaults, which
    every later call then keeps.
    """
    import redis

    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(stream)
                if pipe.exists(stream):
                    pipe.unwatch()
                    return False
                pipe.multi()
                pipe.execute_command("XGROUP", "CREATE", stream, _INIT_GROUP, "$", "MKSTREAM")
                pipe.execute_command("XGROUP", "DESTROY", stream, _INIT_GROUP)
                pipe.execute_command("XCFGSET", stream, "IDMP-DURATION", duration,
                                     "IDMP-MAXSIZE", maxsize)
                pipe.execute()
                return True
            except redis.WatchError:
                continue
            except redis.ResponseError as exc:
                if "unknown command" in str(exc).lower() and "xcfgset" in str(exc).lower():
                    raise StreamdSparkError(
                        f"server at {client.connection_pool.connection_kwargs.get('host')} has "
                        "no XCFGSET/IDMP (needs streamd or Redis >= 8.6); use option "
                        "idempotent=false for a plain, at-least-once XADD sink") from exc
                raise


def stream_info(client, stream: str) -> dict:
    """XINFO STREAM as a dict with str keys (empty dict when the stream is missing)."""
    import redis

    try:
        raw = client.xinfo_stream(stream)
    except redis.ResponseError as exc:
        if "no such key" in str(exc).lower():
            return {}
        raise
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in raw.items()}
