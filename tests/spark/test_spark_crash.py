"""Exactly-once when the whole query process is killed mid-batch (kill -9), then restarted
from its checkpoint.

One subprocess (tests/spark/crash_job.py) runs two queries over the same source: into an
idempotent sink and into a plain one (``idempotent=false``). Rows are slowed by a UDF so the
kill lands while both queries are inside a micro-batch that has been partly written. The
restart replays that batch: the idempotent output must hold every input exactly once, and
the plain output must hold duplicates -- proof that the replay really re-sent rows.
This module starts no SparkSession of its own; the subprocess does.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

from tests.spark.conftest import require_spark  # noqa: E402

require_spark()

from tests.spark.conftest import ROOT, server_has_idmp, spark_env  # noqa: E402

JOB = os.path.join(os.path.dirname(__file__), "crash_job.py")
N = 600      # entries: six micro-batches of crash_job.BATCH = 100
BATCH = 100


def _run(args, slow_ms, log):
    env = dict(os.environ, **spark_env())
    # A new session makes the job, its JVM and the Python workers one process group,
    # so a single killpg takes down everything, like a machine crash would.
    return subprocess.Popen([sys.executable, JOB, args[0], args[1], args[2], str(slow_ms),
                             *args[3:]], cwd=ROOT, env=env, stdout=log, stderr=log,
                            start_new_session=True)


def test_kill_mid_batch_then_restart(target, client, names, tmp_path):
    src = names("src")
    outs = {"false": names("plain")}
    if server_has_idmp(client):
        outs["true"] = names("idem")
    pipe = client.pipeline(transaction=False)
    for i in range(N):
        pipe.xadd(src, {"n": str(i)}, id=f"{5_000_000 + i}-0")
    pipe.execute()
    args = [target.url, src, str(tmp_path / "ckpt"), *(f"{o}:{m}" for m, o in outs.items())]
    log_path = tmp_path / "job.log"

    with open(log_path, "ab") as log:
        proc = _run(args, slow_ms=60, log=log)
        try:
            deadline = time.time() + 300
            while True:
                lens = [client.xlen(o) for o in outs.values()]
                # Mid-batch for every query: some rows of a batch written, not all.
                if all(n % BATCH for n in lens):
                    break
                assert proc.poll() is None, f"job ended early:\n{log_path.read_text()[-3000:]}"
                assert time.time() < deadline, f"never caught mid-batch, lengths {lens}"
                time.sleep(0.02)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(1)
        at_kill = {m: client.xlen(o) for m, o in outs.items()}
        assert all(n < N for n in at_kill.values()), at_kill

        proc = _run(args, slow_ms=0, log=log)
        if proc.wait(600) != 0 and b"java.io.OptionalDataException" in log_path.read_bytes():
            # Spark itself, in local mode, now and then fails to deserialize a task
            # (seen once in CI). A supervisor would restart the query again; the
            # exactly-once checks below hold across any number of restarts.
            log.write(b"\n--- restarted again after a Spark task deserialization error ---\n")
            log.flush()
            proc = _run(args, slow_ms=0, log=log)
        assert proc.wait(600) == 0, log_path.read_text()[-3000:]

    expected = {f"{src}:{5_000_000 + i}-0" for i in range(N)}
    for mode, out in outs.items():
        got = collections.Counter(f[b"src"].decode() for _, f in client.xrange(out))
        assert set(got) == expected, f"{mode}: lost rows"
        if mode == "true":
            assert sum(got.values()) == N, f"duplicates in the idempotent sink: {at_kill}"
            assert client.xinfo_stream(out)["iids-duplicates"] > 0  # the replay re-sent rows
        else:
            assert sum(got.values()) > N, "plain sink without duplicates: nothing replayed?"
