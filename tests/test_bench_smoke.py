"""CI smoke test of the benchmark suite: ``python -m bench --smoke`` end to end.

It checks that the run finishes, that the JSON, markdown and chart are written, and that
the numbers are sane (positive and finite where measured, n/a with a reason where not). It
never compares timings: the targets in the report may pass or fail.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytest.importorskip("hiredis")

EXPECTED_METRICS = {
    "ping_50x16", "xadd_8b_1c", "xadd_512b_1c", "xadd_8b_50x16", "xadd_512b_50x16",
    "idmp_1c.plain", "idmp_1c.idmp", "idmp_1c.idmpauto",
    "idmp_50x16.plain", "idmp_50x16.idmp", "idmp_50x16.idmpauto",
    "xrange_c10_1c", "xrange_c10_50x16", "xreadgroup_ack", "xread_wakeup",
    "mem_8b", "mem_512b",
}


@pytest.mark.slow
def test_bench_smoke(tmp_path):
    targets = ["streamd"] + (["redis"] if shutil.which("redis-server") else [])
    out = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--targets", ",".join(targets),
         "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=55)
    assert proc.returncode == 0, proc.stderr[-3000:]

    wanted = ["latest.json", "latest.md"]
    try:
        import matplotlib  # noqa: F401  (the chart is optional without it)
        wanted.append("latest.png")
    except ImportError:
        pass
    for name in wanted:
        assert (out / name).stat().st_size > 0, name
    assert len(list(out.glob("*-smoke.json"))) == 1

    data = json.loads((out / "latest.json").read_text())
    assert data["meta"]["mode"] == "smoke"
    for t in targets:
        assert data["targets"][t]["started"], data["targets"][t]
    metrics = data["metrics"]
    assert EXPECTED_METRICS <= set(metrics), sorted(metrics)
    assert any(k.startswith("seek.") for k in metrics)

    for key, m in metrics.items():
        assert m["better"] in ("higher", "lower")
        for t in targets:
            r = m["results"][t]
            where = f"{key} on {t}: {r.get('reason')}"
            assert r["status"] in ("ok", "n/a"), where
            if r["status"] == "ok":
                assert r["samples"], where
                assert all(math.isfinite(v) for v in r["samples"]), where
                if not key.startswith("mem_"):  # an RSS delta of a tiny load can be ~0
                    assert all(v > 0 for v in r["samples"]), where
            else:
                assert r["reason"], where
        for t, ratio in m["vs_redis"].items():
            assert ratio is None or (math.isfinite(ratio) and ratio > 0), (key, t, ratio)

    # the machinery itself works: PING everywhere, every non-IDMP workload on Redis
    assert metrics["ping_50x16"]["results"]["streamd"]["status"] == "ok"
    if "redis" in targets and shutil.which("redis-benchmark"):
        for key, m in metrics.items():
            if ".idmp" not in key:
                assert m["results"]["redis"]["status"] == "ok", key

    for c in data["checks"]:
        assert c["pass"] in (True, False, None)

    for when in ("start", "end"):  # the machine-speed figure that makes runs comparable
        assert 0 < data["meta"][f"speed_ms_{when}"] < 60_000
    md = (out / "latest.md").read_text()
    assert "| Workload | unit |" in md
    assert "- Machine speed: a fixed Python loop took " in md
    for key, m in metrics.items():
        assert m["title"] in md


@pytest.mark.parametrize("options,workloads", [
    ([], ["ping", "readgroup"]),
    (["--cold"], ["xadd1", "idmp"]),
])
def test_ab_compares_the_working_tree_with_a_revision(options, workloads):
    if not (REPO / ".git").exists() or not shutil.which("git"):
        pytest.skip("needs a git checkout")
    proc = subprocess.run([sys.executable, "-m", "bench.ab", "--rounds", "2", *options,
                           *workloads], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines()[1:]}
    assert set(rows) == set(workloads)
    for name, row in rows.items():
        base, work = float(row[1]), float(row[3])
        assert 0 < base < 1e4 and 0 < work < 1e4, row
