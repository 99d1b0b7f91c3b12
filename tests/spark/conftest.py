"""Fixtures for the Spark data source tests.

The server is the suite-wide ``target`` (streamd in-process, or ``--redis-url``). IDMP
tests need XCFGSET and skip on an older server; everything else runs on Redis 7.0 too.
Spark workers must run this interpreter and import this checkout, so both are exported
before any SparkSession starts.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def spark_available() -> str | None:
    """Why Spark tests cannot run here, or None when they can."""
    try:
        import pyspark  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        return f"pyspark/pyarrow not installed ({exc.name})"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "no Java runtime (java not on PATH, JAVA_HOME unset)"
    return None


def require_spark() -> None:
    """Skip the calling test module (visibly, with the reason) when Spark cannot run.

    Called at the top of each module, before it imports pyspark, so a machine without
    pyspark or Java reports skips instead of import errors.
    """
    why = spark_available()
    if why is not None:
        pytest.skip(why, allow_module_level=True)


def spark_env() -> dict:
    """Environment for Spark (and its Python workers): same interpreter, this checkout."""
    env = {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    path = os.environ.get("PYTHONPATH", "")
    if str(ROOT) not in path.split(os.pathsep):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), path) if p)
    return env


def make_spark(master: str, **conf):
    """A small local SparkSession with the streamd format registered."""
    os.environ.update(spark_env())
    from pyspark.sql import SparkSession

    from streamd.spark import register

    builder = (SparkSession.builder.master(master).appName("streamd-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.memory", "512m")
               .config("spark.sql.streaming.stopTimeout", "10s"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


@pytest.fixture
def names():
    """Unique key names per test, so tests share one server without interfering."""
    tag = uuid.uuid4().hex[:8]
    return lambda base: f"t{tag}:{base}"


@pytest.fixture
def client(target):
    """A bytes redis-py client on the test server."""
    c = target.client()
    yield c
    c.close()


def server_has_idmp(client) -> bool:
    """True when the server implements XCFGSET / XADD IDMP (streamd, Redis >= 8.6).

    Probed with XCFGSET on a key that does not exist: "no such key" means the command is
    known; "unknown command" means it is not.
    """
    import redis

    try:
        client.execute_command("XCFGSET", "streamd-spark-tests:probe:missing", "IDMP-MAXSIZE", 1)
    except redis.ResponseError as exc:
        return "unknown command" not in str(exc).lower()
    return True


@pytest.fixture
def idmp(client):
    """Skip unless the server supports IDMP (the exactly-once sink needs it)."""
    if not server_has_idmp(client):
        pytest.skip("server lacks XADD IDMP / XCFGSET (needs streamd or Redis >= 8.6)")
