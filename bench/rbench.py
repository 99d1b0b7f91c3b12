"""Drive ``redis-benchmark`` (C client) and parse its ``--csv`` output.

redis-benchmark does not report error replies, so callers check the command once by hand
before timing it and verify its effect afterwards (see ``workloads``).
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess


class RBenchError(RuntimeError):
    pass


def available() -> bool:
    return shutil.which("redis-benchmark") is not None


def run(port: int, command: list[str], *, clients: int, pipeline: int, requests: int,
        randomkeys: int | None = None, timeout: float = 180.0) -> dict:
    args = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
            "-P", str(pipeline), "-n", str(requests), "--csv"]
    if randomkeys:
        args += ["-r", str(randomkeys)]
    args += command
    try:
        out = subprocess.run(args, capture_output=True, timeout=timeout, text=True,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RBenchError(f"redis-benchmark did not finish in {timeout:.0f}s") from None
    if out.returncode != 0:
        raise RBenchError(f"redis-benchmark exited {out.returncode}: {out.stderr.strip()[-300:]}")
    rows = list(csv.DictReader(io.StringIO(out.stdout.strip())))
    if not rows or "rps" not in rows[-1]:
        raise RBenchError(f"unparsable redis-benchmark output: {out.stdout[-300:]!r}")
    row = rows[-1]
    try:
        result = {"ops_per_sec": float(row["rps"]), "requests": requests}
        for k in ("avg_latency_ms", "p50_latency_ms", "p99_latency_ms"):
            if row.get(k):
                result[k] = float(row[k])
    except ValueError:
        raise RBenchError(f"unparsable redis-benchmark row: {row}") from None
    if not result["ops_per_sec"] > 0:
        raise RBenchError(f"redis-benchmark reported no throughput: {row}")
    return result
