"""Aggregate samples into medians and ratios; write JSON, markdown and a PNG chart.

"vs redis" is a performance factor, >1 meaning better than Redis: value/redis for
throughput, redis/value for latency, memory and seek cost. All ratios come from one run in
which the targets were interleaved round by round.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from dataclasses import dataclass

TARGET_ORDER = ("streamd", "streamd-nopoll", "redis", "fakeredis")


@dataclass(frozen=True)
class Check:
    metric: str
    kind: str          # vs_redis | vs_fakeredis | vs_plain | absolute | growth
    op: str            # ">=" or "<="
    threshold: float
    label: str


CHECKS = [
    Check("ping_50x16", "vs_redis", ">=", 0.30, "≥0.30× redis"),
    Check("xadd_8b_1c", "vs_redis", ">=", 0.85, "≥0.85× redis"),
    Check("xadd_512b_1c", "vs_redis", ">=", 0.85, "≥0.85× redis"),
    Check("xadd_8b_50x16", "vs_redis", ">=", 0.25, "≥0.25× redis"),
    Check("xadd_512b_50x16", "vs_redis", ">=", 0.25, "≥0.25× redis"),
    Check("xrange_c10_1c", "vs_redis", ">=", 0.85, "≥0.85× redis"),
    Check("xrange_c10_50x16", "vs_redis", ">=", 0.25, "≥0.25× redis"),
    Check("xreadgroup_ack", "vs_redis", ">=", 0.60, "≥0.6× redis"),
    Check("idmp_1c.idmp", "vs_plain", ">=", 0.95, "≥0.95× plain XADD (streamd)"),
    Check("idmp_1c.idmpauto", "vs_plain", ">=", 0.95, "≥0.95× plain XADD (streamd)"),
    Check("idmp_50x16.idmp", "vs_plain", ">=", 0.95, "≥0.95× plain XADD (streamd)"),
    Check("idmp_50x16.idmpauto", "vs_plain", ">=", 0.95, "≥0.95× plain XADD (streamd)"),
    Check("mem_8b", "absolute", "<=", 80, "≤80 B/entry"),
    Check("mem_512b", "absolute", "<=", 700, "≤700 B/entry"),
    Check("seek.10M", "growth", "<=", 1.3, "≤1.3× the 10k cost"),
    Check("ping_50x16", "vs_fakeredis", ">=", 20, "≥20× fakeredis"),
    Check("xadd_8b_50x16", "vs_fakeredis", ">=", 20, "≥20× fakeredis"),
    Check("xadd_512b_50x16", "vs_fakeredis", ">=", 20, "≥20× fakeredis"),
    Check("xrange_c10_50x16", "vs_fakeredis", ">=", 20, "≥20× fakeredis"),
    Check("idmp_50x16.plain", "vs_fakeredis", ">=", 20, "≥20× fakeredis"),
]


def _median(values):
    return statistics.median(values) if values else None


def perf_ratio(value, ref, better):
    if value is None or ref is None or value <= 0 or ref <= 0:
        return None
    return value / ref if better == "higher" else ref / value


def aggregate(data: dict) -> dict:
    """Fill medians, spreads, ratios and checks into ``data`` (the JSON document)."""
    metrics = data["metrics"]
    for key, m in metrics.items():
        for tname, r in m["results"].items():
            s = r.get("samples", [])
            r["median"] = _median(s)
            if s:
                r["min"], r["max"] = min(s), max(s)
                r["spread_pct"] = (100.0 * (max(s) - min(s)) / 2 / r["median"]
                                   if r["median"] else None)
            if s and not r.get("errors"):
                r["status"] = "ok"
            elif s:
                r["status"] = "partial"
            elif r.get("errors"):
                r["status"] = "error"
            else:
                r["status"] = "n/a"
            cpu = r.get("cpu_us_per_op") or []
            r["cpu_median"] = _median(cpu)
        ref_cpu = m["results"].get("redis", {}).get("cpu_median")
        m["cpu_vs_redis"] = {t: perf_ratio(r.get("cpu_median"), ref_cpu, "lower")
                             for t, r in m["results"].items() if t != "redis"}
        ref = m["results"].get("redis", {}).get("median")
        m["vs_redis"] = {t: perf_ratio(r.get("median"), ref, m["better"])
                         for t, r in m["results"].items() if t != "redis"}
        fake = m["results"].get("fakeredis", {}).get("median")
        sd = m["results"].get("streamd", {}).get("median")
        m["streamd_vs_fakeredis"] = perf_ratio(sd, fake, m["better"])
    data["checks"] = [_check(c, metrics) for c in CHECKS if c.metric in metrics]
    return data


def _seek_metrics(metrics):
    return sorted((k for k in metrics if k.startswith("seek.")),
                  key=lambda k: _parse_size(k.split(".", 1)[1]))


def _parse_size(label: str) -> int:
    mult = {"k": 1_000, "M": 1_000_000}.get(label[-1], 1)
    return int(label.rstrip("kM")) * mult


def _check(c: Check, metrics: dict) -> dict:
    m = metrics[c.metric]
    sd = m["results"].get("streamd", {}).get("median")
    value, why = None, ""
    if c.kind == "vs_redis":
        value = m["vs_redis"].get("streamd")
        why = "needs streamd and redis"
    elif c.kind == "vs_fakeredis":
        value = m.get("streamd_vs_fakeredis")
        why = "needs streamd and fakeredis"
    elif c.kind == "vs_plain":
        plain_key = c.metric.rsplit(".", 1)[0] + ".plain"
        plain = metrics.get(plain_key, {}).get("results", {}).get("streamd", {}).get("median")
        value = perf_ratio(sd, plain, "higher")
        why = "needs IDMP on streamd"
    elif c.kind == "absolute":
        value = sd
        why = "needs streamd"
    elif c.kind == "growth":
        seeks = _seek_metrics(metrics)
        small = metrics[seeks[0]]["results"].get("streamd", {}).get("median") if seeks else None
        if small and sd:
            value = sd / small
        why = "needs the 10M seek (full mode)"
    passed = None
    if value is not None:
        passed = value >= c.threshold if c.op == ">=" else value <= c.threshold
    return {"metric": c.metric, "kind": c.kind, "op": c.op, "threshold": c.threshold,
            "label": c.label, "value": value, "pass": passed,
            "reason": "" if value is not None else why}


# --------------------------------------------------------------------------- formatting
def fmt_value(v, unit: str) -> str:
    if v is None:
        return "–"
    if unit in ("ops/s", "entries/s"):
        if v >= 1e6:
            return f"{v / 1e6:.2f}M"
        if v >= 1e3:
            return f"{v / 1e3:.1f}k"
        return f"{v:.0f}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def fmt_ratio(r) -> str:
    if r is None:
        return "–"
    if r >= 100:
        return f"{r:.0f}×"
    if r >= 10:
        return f"{r:.1f}×"
    return f"{r:.2f}×"


def _cell(r: dict | None, unit: str) -> str:
    if not r:
        return "–"
    st = r.get("status")
    if st in ("ok", "partial"):
        text = fmt_value(r["median"], unit)
        sp = r.get("spread_pct")
        if sp is not None and len(r.get("samples", [])) > 1:
            text += f" ±{sp:.0f}%"
        if st == "partial":
            text += " (some rounds failed)"
        return text
    if st == "error":
        return "error"
    return "n/a"


def markdown(data: dict) -> str:
    meta = data["meta"]
    metrics = data["metrics"]
    targets = [t for t in TARGET_ORDER if t in data["targets"]]
    lines = [f"# streamd benchmark — {meta['mode']} run, {meta['started_utc']}", ""]
    tdesc = []
    for t in targets:
        info = data["targets"][t]
        if info.get("started"):
            tdesc.append(f"{t} {info.get('version', '?')}")
        else:
            tdesc.append(f"{t} (not run: {info.get('reason', '')})")
    lines += [
        f"- Targets: {', '.join(tdesc)}",
        f"- Rounds: {meta['rounds']} interleaved ({' → '.join(targets)} per round; "
        f"memory/seek: {meta['mem_rounds']} fresh-server run per target); "
        f"medians, ± = half the min–max range",
        f"- Host: {meta['host']}, {meta['cpus']} CPUs, Python {meta['python']}, load average "
        f"{meta.get('loadavg_start', 0):.1f} at start / {meta.get('loadavg_end', 0):.1f} at end "
        f"(other work shares the CPUs); duration {meta['duration_s']:.0f} s; "
        f"command `{meta['command']}`",
        f"- Machine speed: a fixed Python loop took {meta.get('speed_ms_start', 0):.1f} ms at "
        f"start / {meta.get('speed_ms_end', 0):.1f} ms at end (lower is faster; compare runs "
        f"by it, the ratios inside a run do not depend on it)",
        "- \"vs\" columns are performance factors (>1 = streamd better): value ratio for "
        "throughput, inverse ratio for latency, memory and seek cost.",
        "",
    ]
    checks_by_metric: dict[str, list] = {}
    for c in data.get("checks", []):
        checks_by_metric.setdefault(c["metric"], []).append(c)
    head = ["Workload", "unit", *targets]
    if "streamd" in targets and "redis" in targets:
        head.append("streamd vs redis")
    if "streamd-nopoll" in targets and "redis" in targets:
        head.append("streamd-nopoll vs redis")
    if "streamd" in targets and "fakeredis" in targets:
        head.append("streamd vs fakeredis")
    head += ["target", "result"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] * 2 + ["--:"] * (len(head) - 4) + ["---"] * 2) + "|")
    for key, m in metrics.items():
        row = [m["title"], m["unit"]]
        row += [_cell(m["results"].get(t), m["unit"]) for t in targets]
        if "streamd vs redis" in head:
            row.append(fmt_ratio(m["vs_redis"].get("streamd")))
        if "streamd-nopoll vs redis" in head:
            row.append(fmt_ratio(m["vs_redis"].get("streamd-nopoll")))
        if "streamd vs fakeredis" in head:
            row.append(fmt_ratio(m.get("streamd_vs_fakeredis")))
        cs = checks_by_metric.get(key, [])
        row.append("; ".join(c["label"] for c in cs) or "")
        res = []
        for c in cs:
            if c["pass"] is None:
                res.append("n/a")
            else:
                shown = (fmt_value(c["value"], m["unit"]) if c["kind"] == "absolute"
                         else fmt_ratio(c["value"]))
                res.append(f"{'PASS' if c['pass'] else 'FAIL'} ({shown})")
        row.append("; ".join(res))
        lines.append("| " + " | ".join(row) + " |")
    cpu_rows = [(k, m) for k, m in metrics.items()
                if any(r.get("cpu_median") for r in m["results"].values())]
    if cpu_rows:
        lines += ["", "Server CPU time per operation (user+sys of the server process / ops, "
                  "median; µs). Unlike throughput it barely depends on how much CPU the "
                  "machine's other load leaves the server:", ""]
        chead = ["Workload", *targets] + (["streamd vs redis"] if "streamd vs redis" in head
                                          else [])
        lines.append("| " + " | ".join(chead) + " |")
        lines.append("|---|" + "|".join(["--:"] * (len(chead) - 1)) + "|")
        for key, m in cpu_rows:
            row = [m["title"]]
            for t in targets:
                c = (m["results"].get(t) or {}).get("cpu_median")
                row.append(fmt_value(c, "µs") if c else "–")
            if "streamd vs redis" in head:
                row.append(fmt_ratio(m["cpu_vs_redis"].get("streamd")))
            lines.append("| " + " | ".join(row) + " |")
    checks = data.get("checks", [])
    npass = sum(1 for c in checks if c["pass"] is True)
    nfail = sum(1 for c in checks if c["pass"] is False)
    nna = sum(1 for c in checks if c["pass"] is None)
    lines += ["", f"Targets: {npass} pass, {nfail} fail, {nna} n/a.", ""]
    grouped: dict[tuple, list[str]] = {}
    for key, m in metrics.items():
        for t in targets:
            r = m["results"].get(t) or {}
            if r.get("status") in ("n/a", "error", "partial") and r.get("reason"):
                grouped.setdefault((t, r["status"], r["reason"]), []).append(key)
    reasons = [f"- {t}, {st}: {', '.join(f'`{k}`' for k in keys)} — {why}"
               for (t, st, why), keys in grouped.items()]
    if reasons or data.get("notes"):
        lines += ["## Notes", ""] + [f"- {n}" for n in data.get("notes", [])] + reasons + [""]
    lines += ["## Workloads", ""]
    for w in data["workloads"]:
        lines.append(f"- `{w['name']}` — {w['title']} [{w['tool']}]")
    lines.append("")
    return "\n".join(lines)


def chart(data: dict, path: str) -> bool:
    """Left: performance relative to Redis. Right: streamd's own targets (IDMP vs plain,
    seek growth, memory), each as measured / threshold."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = []
    for key, m in data["metrics"].items():
        sd = m["vs_redis"].get("streamd")
        fk = m["vs_redis"].get("fakeredis")
        if sd is None and fk is None:
            continue
        target = next((c["threshold"] for c in data.get("checks", [])
                       if c["metric"] == key and c["kind"] == "vs_redis"), None)
        rows.append((m["title"], sd, fk, target))
    own = [(f"{data['metrics'][c['metric']]['title']} ({c['op']}{c['threshold']:g})",
            c["value"] / c["threshold"],
            c["pass"]) for c in data.get("checks", [])
           if c["kind"] in ("vs_plain", "absolute", "growth") and c["value"] is not None]
    if not rows and not own:
        return False
    n = max(len(rows), len(own), 1)
    fig, axes = plt.subplots(1, 2, figsize=(15, 0.42 * n + 2.0),
                             gridspec_kw={"width_ratios": [3, 2]})
    ax = axes[0]
    h = 0.38
    ys = list(range(len(rows)))
    if rows:
        ax.barh([y - h / 2 for y in ys], [r[1] or 0 for r in rows], height=h, label="streamd",
                color="#2b7bba")
        ax.barh([y + h / 2 for y in ys], [r[2] or 0 for r in rows], height=h, label="fakeredis",
                color="#bbbbbb")
        for y, r in zip(ys, rows):
            if r[3] is not None:
                ax.plot([r[3], r[3]], [y - h, y], color="#d62728", lw=2)
        ax.set_xscale("log")
        ax.legend(loc="lower right", fontsize=8)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([r[0] for r in rows], fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("relative to Redis, same run (log; >1 = better; red = target)")
    ax.set_title("vs Redis", fontsize=10)
    ax = axes[1]
    ys = list(range(len(own)))
    ax.barh(ys, [o[1] for o in own], height=0.5,
            color=["#2ca02c" if o[2] else "#d62728" for o in own])
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([o[0] for o in own], fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("measured ÷ threshold (green = pass)")
    ax.set_title("streamd's own targets", fontsize=10)
    fig.suptitle(f"streamd benchmark ({data['meta']['mode']}, {data['meta']['started_utc']})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def _clean(o):
    if isinstance(o, float) and (math.isnan(o) or math.isinf(o)):
        return None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_clean(v) for v in o]
    return o


def write(data: dict, out_dir: str, stamp: str, latest: bool = True) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    aggregate(data)
    md = markdown(data)
    base = os.path.join(out_dir, f"{stamp}-{data['meta']['mode']}")
    paths = {"json": base + ".json", "md": base + ".md", "png": base + ".png"}
    with open(paths["json"], "w") as fh:
        json.dump(_clean(data), fh, indent=1, ensure_ascii=False)
    with open(paths["md"], "w") as fh:
        fh.write(md)
    if not chart(data, paths["png"]):
        paths.pop("png")
    if latest:
        for ext, p in list(paths.items()):
            dst = os.path.join(out_dir, f"latest.{ext}")
            with open(p, "rb") as src, open(dst + ".tmp", "wb") as d:
                d.write(src.read())
            os.replace(dst + ".tmp", dst)
    paths["markdown_text"] = md
    return paths
