"""``python -m bench``: run the workloads against streamd, Redis and fakeredis, interleaved."""

from __future__ import annotations

import argparse
import fnmatch
import os
import platform
import signal
import sys
import time
import traceback
from datetime import datetime, timezone

from . import profiles, report
from .progress import Progress
from .servers import ALL_TARGETS, Fleet, REPO, StartError, available
from .workloads import Ctx, NotApplicable, Target, all_workloads, probe_features


DEFAULT_OUT = str(REPO / "bench" / "results")


def machine_speed_ms() -> float:
    """Milliseconds a fixed pure-Python loop takes here, best of three. This machine's speed
    drifts several-fold between runs; the figure in each report lets runs be compared."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        total = 0
        for i in range(300_000):
            total += i & 7
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmark streamd against redis-server and fakeredis in one interleaved run.")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="short run (<= 2 min)")
    mode.add_argument("--smoke", action="store_true",
                      help="tiny counts, one round (for CI; numbers are not meaningful)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="interleaved rounds (default: full 5, quick 3, smoke 1)")
    ap.add_argument("--only", default=None,
                    help="comma-separated workload names or globs, e.g. 'xadd_*,seek'")
    ap.add_argument("--targets", default=",".join(ALL_TARGETS),
                    help="comma-separated subset of streamd,redis,fakeredis,streamd-nopoll "
                         "(default: all)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="results directory (default bench/results)")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    return ap.parse_args(argv)


def _select(workloads, only):
    if not only:
        return workloads
    pats = [p.strip() for p in only.split(",") if p.strip()]
    chosen = [w for w in workloads if any(fnmatch.fnmatch(w.name, p) for p in pats)]
    if not chosen:
        names = ", ".join(w.name for w in workloads)
        raise SystemExit(f"--only {only!r} matches no workload; choose from: {names}")
    return chosen


def _sigterm(signum, frame):
    raise SystemExit(128 + signum)


def _short(v, unit):
    return f"{report.fmt_value(v, unit)} {unit}"


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    profile = profiles.get(mode, args.rounds)
    workloads = all_workloads()
    if args.list:
        for w in workloads:
            print(f"{w.name:18} {w.title}")
        return 0
    workloads = _select(workloads, args.only)
    wanted = [t.strip() for t in args.targets.split(",") if t.strip()]
    for t in wanted:
        if t not in ALL_TARGETS:
            raise SystemExit(f"unknown target {t!r}; choose from {', '.join(ALL_TARGETS)}")

    signal.signal(signal.SIGTERM, _sigterm)
    started = datetime.now(timezone.utc)
    stamp = started.strftime("%Y%m%d-%H%M%S")
    t_start = time.monotonic()
    fleet = Fleet()
    data = {
        "meta": {
            "mode": mode, "rounds": profile.rounds, "mem_rounds": profile.mem_rounds,
            "started_utc": started.strftime("%Y-%m-%d %H:%M UTC"),
            "host": platform.node() or "?", "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg_start": os.getloadavg()[0],
            "speed_ms_start": machine_speed_ms(),
            "command": "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv),
            "profile": profile.__dict__,
        },
        "targets": {}, "workloads": [], "metrics": {}, "notes": [],
    }
    progress = None
    try:
        try:
            with open("/proc/meminfo") as fh:
                avail = next(int(l.split()[1]) * 1024 for l in fh if l.startswith("MemAvailable"))
        except (OSError, StopIteration):
            avail = 8 << 30
        ctx = Ctx(profile=profile, fleet=fleet, mem_limit=int(avail * 0.6), notes=data["notes"])
        targets: list[Target] = []
        for name in wanted:
            ok, why = available(name)
            info = data["targets"][name] = {"started": False, "reason": why}
            if not ok:
                print(f"bench: {name} not run: {why}", file=sys.stderr)
                continue
            try:
                sp = fleet.start(name)
            except StartError as exc:
                info["reason"] = str(exc)
                print(f"bench: {name} failed to start: {exc}", file=sys.stderr)
                continue
            t = Target(name, sp, probe_features(sp.port))
            info.update(started=True, reason="", version=sp.version, features=t.features)
            targets.append(t)
        if not targets:
            print("bench: no target could be started", file=sys.stderr)
            return 2

        total = sum(w.rounds(profile) * len(targets) for w in workloads)
        progress = Progress(total)
        progress.message(f"bench: {mode} run, {profile.rounds} rounds, targets "
                         f"{', '.join(f'{t.name} {t.proc.version}' for t in targets)}")
        for w in workloads:
            _run_workload(ctx, w, targets, data, progress, fleet)
        progress.close()
    except KeyboardInterrupt:
        if progress:
            progress.close()
        print("bench: interrupted; writing partial results", file=sys.stderr)
        data["notes"].append("run interrupted: partial results")
    finally:
        fleet.stop_all()
    data["meta"]["duration_s"] = time.monotonic() - t_start
    data["meta"]["loadavg_end"] = os.getloadavg()[0]
    data["meta"]["speed_ms_end"] = machine_speed_ms()
    paths = report.write(data, args.out, stamp)
    print(paths.pop("markdown_text"))
    print("bench: wrote " + ", ".join(paths.values()) + " (+ latest.*)", file=sys.stderr)
    return 0


def _ensure_alive(ctx, t: Target, progress) -> None:
    if t.proc.alive():
        return
    tail = t.proc.log_tail()
    ctx.note(f"{t.name} exited during the run and was restarted ({tail[:200]})")
    progress.message(f"bench: {t.name} died ({tail[:200]}); restarting")
    ctx.fleet.stop(t.proc)
    t.proc = ctx.fleet.start(t.name)


def _run_workload(ctx, w, targets, data, progress, fleet):
    p = ctx.profile
    mets = w.metrics(p)
    data["workloads"].append({"name": w.name, "title": w.title, "tool": w.tool,
                              "rounds": w.rounds(p), "fresh": w.fresh})
    for m in mets:
        data["metrics"][m.key] = {"title": m.title, "unit": m.unit, "better": m.better,
                                  "workload": w.name,
                                  "results": {t.name: {"samples": [], "errors": [], "extra": []}
                                              for t in targets}}
    units = {m.key: m.unit for m in mets}

    def mark(t, reason, status):
        for m in mets:
            r = data["metrics"][m.key]["results"][t.name]
            if status == "error":
                r["errors"].append(reason)
            r["reason"] = reason

    states, usable = {}, []
    for t in targets:
        try:
            _ensure_alive(ctx, t, progress)
            w.check(t)
            progress.begin(f"{w.name} setup {t.name}")
            states[t.name] = w.setup(ctx, t)
            usable.append(t)
        except NotApplicable as exc:
            mark(t, str(exc), "n/a")
        except Exception as exc:
            mark(t, f"setup failed: {type(exc).__name__}: {exc}", "error")
            progress.message(f"bench: {w.name} setup on {t.name} failed: {exc}")
            if os.environ.get("BENCH_DEBUG"):
                traceback.print_exc()
    rounds = w.rounds(p)
    for rnd in range(rounds):
        for t in targets:  # A B C, A B C, ...
            desc = f"{w.name} r{rnd + 1}/{rounds} {t.name}"
            if t not in usable:
                progress.end(f"{desc}: skipped")
                continue
            progress.begin(desc)
            try:
                _ensure_alive(ctx, t, progress)
                out = w.run(ctx, t, states[t.name], rnd)
            except NotApplicable as exc:
                mark(t, str(exc), "n/a")
                progress.end(f"{desc}: n/a")
                continue
            except Exception as exc:
                mark(t, f"{type(exc).__name__}: {exc}", "error")
                progress.end(f"{desc}: ERROR {exc}")
                if os.environ.get("BENCH_DEBUG"):
                    traceback.print_exc()
                continue
            extra = out.pop("_extra", None)
            for key, v in (out.pop("_cpu", None) or {}).items():
                data["metrics"][key]["results"][t.name].setdefault("cpu_us_per_op", []).append(v)
            shown = []
            for key, v in out.items():
                r = data["metrics"][key]["results"][t.name]
                if isinstance(v, NotApplicable):
                    r["reason"] = str(v)
                elif isinstance(v, Exception):
                    r["errors"].append(str(v))
                    r["reason"] = str(v)
                    shown.append(f"{key} ERROR")
                else:
                    r["samples"].append(float(v))
                    shown.append(_short(v, units[key]) if len(out) == 1
                                 else f"{key.split('.')[-1]} {_short(v, units[key])}")
            if extra:
                for key in out:
                    data["metrics"][key]["results"][t.name]["extra"].append(extra)
            progress.end(f"{desc}: {', '.join(shown)}")
    for t in usable:
        try:
            if t.proc.alive():
                w.teardown(ctx, t, states[t.name])
        except Exception:
            pass
