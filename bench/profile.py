"""Profile streamd's hot path under a pipelined load with py-spy.

    python -m bench.profile [--load xadd|xadd512|idmp|ping|xrange|readgroup] [--seconds 15]
                            [--svg]

Starts streamd, drives it with redis-benchmark (50 clients x P16), the Python IDMP
generator or the one-consumer XREADGROUP + XACK loop, samples it with ``py-spy record --format raw`` and prints the top frames by own
time and by inclusive time. Files go to bench/results/tmp/ (not committed).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import threading
import time

from . import loadgen
from .resp import Conn, load_stream
from .servers import REPO, ServerProc
from .workloads import xadd_maker

LOADS = {
    "ping": ["PING"],
    "xadd": ["XADD", "bench:prof", "*", "f", "12345678"],
    "xadd512": ["XADD", "bench:prof", "*", "f", "v" * 512],
    "xrange": ["XRANGE", "bench:prof", "__rand_int__", "+", "COUNT", "10"],
}
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _short_file(path: str) -> str:
    path = path.replace(str(REPO) + "/", "")
    if "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    elif "/lib/python3" in path:
        path = "stdlib/" + path.split("/lib/python3", 1)[1].split("/", 1)[-1]
    return path


def parse_raw(path: str):
    """py-spy raw output -> (samples, own time by function, inclusive, own time by line)."""
    own, incl, lines = collections.Counter(), collections.Counter(), collections.Counter()
    total = 0
    with open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            try:
                n = int(count)
            except ValueError:
                continue
            frames = []
            last = ""
            for fr in stack.split(";"):
                m = _FRAME.match(fr)
                frames.append(f"{m['func']} ({_short_file(m['file'])})" if m else fr)
                last = (f"{m['func']} ({_short_file(m['file'])}:{m['line']})"
                        if m and m["line"] else frames[-1])
            total += n
            own[frames[-1]] += n
            lines[last] += n
            for fr in set(frames):
                incl[fr] += n
    return total, own, incl, lines


def _proc_times(pid: int) -> dict:
    """CPU seconds (user+sys), context switches and a wall-clock stamp for ``pid``."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    out = {"cpu": (int(fields[11]) + int(fields[12])) / tick, "wall": time.monotonic()}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("voluntary_ctxt_switches"):
                out["voluntary"] = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches"):
                out["nonvoluntary"] = int(line.split()[1])
    return out


def _drive(port: int, load: str, seconds: float, stop: threading.Event) -> None:
    if load == "idmp":
        key = b"bench:prof"
        with Conn(port) as c:
            c.call(b"XADD", key, b"*", b"f", b"init")
            c.call(b"XCFGSET", key, b"IDMP-MAXSIZE", b"10000")

        def factory(ci):
            make = xadd_maker("idmp", key, ci)
            counter = [0]

            def batch():
                i = counter[0]
                counter[0] = i + 16
                return b"".join([make(j) for j in range(i, i + 16)])
            return batch
        loadgen.pipelined(port, 50, 16, factory, seconds)
        return
    if load == "readgroup":
        # One consumer, as in the bench workload; rewinding the group re-delivers the
        # (acknowledged) entries, so the load never runs dry.
        key = b"bench:prof"
        end = time.monotonic() + seconds
        with Conn(port) as c:
            load_stream(c, key, 200_000, b"12345678", explicit_ids=True)
            c.call(b"XGROUP", b"CREATE", key, b"g", b"0")
            while time.monotonic() < end and not stop.is_set():
                loadgen.readgroup_ack(port, key, b"g", 200_000, end - time.monotonic())
                c.call(b"XGROUP", b"SETID", key, b"g", b"0")
        return
    args = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", "50", "-P", "16",
            "-n", "100000000", "-q", "-r", "99990"] + LOADS[load]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        stop.wait(seconds)
    finally:
        proc.terminate()
        proc.wait(5)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.profile")
    ap.add_argument("--load", choices=sorted([*LOADS, "idmp", "readgroup"]), default="xadd")
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--svg", action="store_true", help="also record a flame graph SVG")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "tmp"))
    args = ap.parse_args(argv)
    # A virtualenv's scripts are not necessarily on PATH; look beside the interpreter too.
    pyspy = shutil.which("py-spy") or shutil.which("py-spy", path=os.path.dirname(sys.executable))
    if not pyspy:
        print("py-spy is not installed (pip install py-spy)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    raw = os.path.join(args.out, f"profile-{args.load}-{stamp}.txt")
    sp = ServerProc("streamd").start()
    try:
        if args.load == "xrange":
            with Conn(sp.port) as c:
                load_stream(c, b"bench:prof", 100_000, b"12345678")
        stop = threading.Event()
        driver = threading.Thread(target=_drive, args=(sp.port, args.load, args.seconds + 3, stop),
                                  daemon=True)
        driver.start()
        time.sleep(1.5)  # let the load reach a steady state
        cmd = [pyspy, "record", "--pid", str(sp.pid), "--duration", str(int(args.seconds)),
               "--rate", str(args.rate), "--format", "raw", "--output", raw, "--nonblocking"]
        before = _proc_times(sp.pid)
        subprocess.run(cmd, check=True, capture_output=True, timeout=args.seconds + 60)
        after = _proc_times(sp.pid)
        usage = {k: after[k] - before[k] for k in after}
        svg = None
        if args.svg:
            svg = raw.replace(".txt", ".svg")
            subprocess.run([pyspy, "record", "--pid", str(sp.pid), "--duration", "5",
                            "--rate", str(args.rate), "--output", svg, "--nonblocking"],
                           check=False, capture_output=True, timeout=70)
        stop.set()
        driver.join(args.seconds + 30)
    finally:
        sp.stop()
    total, own, incl, lines = parse_raw(raw)
    wall = usage.pop("wall")
    print(f"streamd during the sample: {100 * usage['cpu'] / wall:.0f}% of one core "
          f"(user+sys), {usage['nonvoluntary'] / wall:,.0f} involuntary and "
          f"{usage['voluntary'] / wall:,.0f} voluntary context switches/s. py-spy counts a "
          "runnable-but-preempted process as busy, so on a shared machine the frame where it "
          "is usually preempted (the socket write that wakes the client) is over-weighted.")
    print(f"py-spy: {total} samples of streamd under '{args.load}' load "
          f"(50 clients x P16), {args.seconds:.0f} s at {args.rate} Hz; raw: {raw}"
          + (f"; svg: {svg}" if svg else ""))
    print(f"\nTop {args.top} frames by own time:")
    for fr, n in own.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {fr}")
    print(f"\nTop {args.top} source lines by own time:")
    for fr, n in lines.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {fr}")
    print(f"\nTop {args.top} frames by inclusive time:")
    for fr, n in incl.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {fr}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
