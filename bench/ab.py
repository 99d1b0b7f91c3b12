"""In-process A/B of the request path: the same requests through two versions of streamd.

    python -m bench.ab [--base REV] [--rounds 40] [workload ...]

``--base`` is a git revision (default ``HEAD``); it is compared with the working tree.
Both versions are loaded into this one process, under different package names, each with
its own ``Server`` and a ``Client`` whose transport discards the replies. Every round feeds
each version the same reads, alternating which goes first, and keeps each read's fastest
time. On a shared machine, whose speed drifts by tens of percent within seconds, this is
what still shows a 3 % change: both versions see the same drift, and the minimum drops
the interruptions. It measures the parse -> dispatch -> execute -> encode path, not the
socket I/O (``python -m bench`` measures that, against Redis).

``--cold`` pauses 100 µs before every read. An unpipelined client leaves the server idle
between requests, and a request served after such a pause runs with cold caches at several
times its hot cost (PING: ~14 µs against ~3 µs here); this mode compares that cost, by
medians. It is far noisier than the default mode: two versions with the same request path
have differed by 12 % in it, so only a larger change means anything.

Workloads: ping1 / xadd1 / xrange1 (one PING, XADD or XRANGE COUNT 10 per read, as an
unpipelined client sends them), plain1 / idmp1 / idmpauto1 (one XADD, XADD IDMP or XADD
IDMPAUTO per read from 50 producers, values 8-512 B), ping (16 per read),
xadd8 / xadd512 (16 XADD per read), xaddcap (16 XADD MAXLEN ~ 1000 per read), plain / idmp / idmpauto (16 XADD, XADD IDMP or XADD
IDMPAUTO per read from 50 producers, values 8-512 B), xrange / xrevrange (16 XRANGE / XREVRANGE COUNT 10 per
read on a 100k stream), xread (16 XREAD COUNT 1 STREAMS key id per read, same stream),
xreadblock (one XREAD COUNT 10 BLOCK 1000 STREAMS key id per read, same stream: a blocking
consumer's request when data is there, so it never parks),
readgroup (XREADGROUP COUNT 100, then its 100 XACKs in one read), readgroup1 (XREADGROUP
COUNT 1 STREAMS key > and the XACK of what it read, in one read: a consumer taking one entry
at a time). Figures are µs per request (per entry for readgroup and readgroup1).
"""

from __future__ import annotations

import argparse
import importlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .workloads import xadd_maker

REPO = Path(__file__).resolve().parent.parent
WORKLOADS = ("ping1", "xadd1", "plain1", "idmp1", "idmpauto1", "xrange1", "ping", "xadd8", "xadd512", "xaddcap", "plain", "idmp", "idmpauto", "xrange",
             "xrevrange", "xread", "xreadblock", "readgroup", "readgroup1")


def _req(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


class _Sink:
    """A transport that accepts and drops every reply."""

    def write(self, data) -> None:
        pass

    def is_closing(self) -> bool:
        return False


def _install(tree: Path, name: str, into: Path) -> None:
    shutil.copytree(tree / "streamd", into / name,
                    ignore=shutil.ignore_patterns("spark", "__pycache__"))


def _client(pkg: str):
    server_mod = importlib.import_module(f"{pkg}.server.server")
    client_mod = importlib.import_module(f"{pkg}.server.client")
    client = client_mod.Client(server_mod.Server())
    client.transport = _Sink()
    return client


def _fill(client, key: bytes, n: int) -> None:
    for i in range(0, n, 1000):
        client.data_received(b"".join(_req(b"XADD", key, b"%d-0" % (j + 1), b"f", b"12345678")
                                      for j in range(i, min(n, i + 1000))))


def _workload(name: str, clients: list):
    """(reads, requests per read, a reset run between rounds or None)."""
    rnd = random.Random(3)
    if name == "ping1":
        return [_req(b"PING")] * 50, 1, None
    if name == "xadd1":
        return ([_req(b"XADD", b"ab:x", b"*", b"f", b"12345678")] * 50, 1,
                lambda c: c.data_received(_req(b"XTRIM", b"ab:x", b"MAXLEN", b"1000")))
    if name == "ping":
        return [_req(b"PING") * 16] * 50, 16, None
    if name in ("xadd8", "xadd512"):
        value = b"12345678" if name == "xadd8" else b"v" * 512  # the values of python -m bench
        return ([_req(b"XADD", b"ab:x", b"*", b"f", value) * 16] * 50, 16,
                lambda c: c.data_received(_req(b"XTRIM", b"ab:x", b"MAXLEN", b"1000")))
    if name == "xaddcap":  # a capped stream, as producers usually keep one
        return ([_req(b"XADD", b"ab:c", b"MAXLEN", b"~", b"1000", b"*", b"f", b"12345678")
                 * 16] * 50, 16, None)
    if name in ("plain", "idmp", "idmpauto", "plain1", "idmp1", "idmpauto1"):
        # 50 producers, 16 appends per read, values 8-512 B (python -m bench's generator);
        # between rounds a changed IDMP-MAXSIZE clears the records, so every round's iids
        # are new again.
        key = b"ab:" + name.encode()
        for c in clients:
            c.data_received(_req(b"XADD", key, b"*", b"f", b"init"))
        per_read = 1 if name.endswith("1") else 16
        makers = [xadd_maker(name.rstrip("1"), key, p) for p in range(50)]
        reads = [b"".join(makers[r % 50](r * per_read + j) for j in range(per_read))
                 for r in range(50)]
        sizes = iter(range(10**9))

        def reset(c):
            n = next(sizes)
            c.data_received(_req(b"XTRIM", key, b"MAXLEN", b"1000")
                            + _req(b"XCFGSET", key, b"IDMP-MAXSIZE", b"%d" % (10000 - n % 2)))
        return reads, per_read, reset
    if name in ("xrange", "xrevrange", "xrange1", "xread", "xreadblock"):
        for c in clients:
            _fill(c, b"ab:r", 100_000)

        def one() -> bytes:
            if name == "xread":  # an ID as a consumer passes it back
                at = b"%d-0" % rnd.randrange(1, 99_990)
                return _req(b"XREAD", b"COUNT", b"1", b"STREAMS", b"ab:r", at)
            if name == "xreadblock":
                at = b"%d-0" % rnd.randrange(1, 99_980)
                return _req(b"XREAD", b"COUNT", b"10", b"BLOCK", b"1000", b"STREAMS", b"ab:r",
                            at)
            at = b"%d" % rnd.randrange(11, 99_980)
            if name == "xrevrange":
                return _req(b"XREVRANGE", b"ab:r", at, b"-", b"COUNT", b"10")
            return _req(b"XRANGE", b"ab:r", at, b"+", b"COUNT", b"10")
        per_read = 1 if name in ("xrange1", "xreadblock") else 16
        return [b"".join(one() for _ in range(per_read)) for _ in range(50)], per_read, None
    if name == "readgroup":
        for c in clients:
            _fill(c, b"ab:g", 5000)
            c.data_received(_req(b"XGROUP", b"CREATE", b"ab:g", b"g", b"0"))
        read = _req(b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"100", b"STREAMS",
                    b"ab:g", b">")
        reads = []
        for i in range(0, 5000, 100):
            reads.append(read)
            reads.append(b"".join(_req(b"XACK", b"ab:g", b"g", b"%d-0" % (j + 1))
                                  for j in range(i, i + 100)))
        # per entry: 100 reads of 50 entries' worth -> divide the summed minimum by 5000
        return reads, 1, lambda c: c.data_received(_req(b"XGROUP", b"SETID", b"ab:g", b"g",
                                                         b"0"))
    if name == "readgroup1":
        for c in clients:
            _fill(c, b"ab:g1", 2000)
            c.data_received(_req(b"XGROUP", b"CREATE", b"ab:g1", b"g", b"0"))
        read = _req(b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS",
                    b"ab:g1", b">")
        reads = [read + _req(b"XACK", b"ab:g1", b"g", b"%d-0" % (j + 1)) for j in range(2000)]
        return reads, 1, lambda c: c.data_received(_req(b"XGROUP", b"SETID", b"ab:g1", b"g",
                                                         b"0"))
    raise SystemExit(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}")


def compare(name: str, clients: dict, rounds: int, cold: bool = False) -> dict:
    reads, per_read, reset = _workload(name, list(clients.values()))
    every = {label: [[] for _ in reads] for label in clients}  # each read's times
    clock = time.perf_counter
    pause = time.sleep
    order = list(clients)
    for r in range(rounds):
        for label in (order if r % 2 else order[::-1]):
            c = clients[label]
            for i, data in enumerate(reads):
                if cold:
                    pause(0.0001)
                t0 = clock()
                c.data_received(data)
                every[label][i].append(clock() - t0)
            if reset is not None:
                reset(c)
    units = 5000 if name == "readgroup" else len(reads) * per_read
    # After a pause the caches are cold and the times spread widely: medians, not minima.
    pick = statistics.median if cold else min
    return {label: sum(map(pick, times)) / units * 1e6 for label, times in every.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ab")
    ap.add_argument("--base", default="HEAD", help="git revision to compare with (default HEAD)")
    ap.add_argument("--rounds", type=int, default=40,
                    help="rounds; each feeds both versions the same reads (default 40)")
    ap.add_argument("--cold", action="store_true",
                    help="pause 100 µs before every read, as an unpipelined client's server "
                         "idles between requests (cold caches), and compare medians")
    ap.add_argument("workloads", nargs="*", default=list(WORKLOADS), metavar="workload",
                    help="default: all of " + " ".join(WORKLOADS))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="streamd-ab-") as tmp:
        tmp = Path(tmp)
        base_tree = tmp / "base-tree"
        base_tree.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.base, "streamd"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base_tree)], input=archive, check=True)
        pkgs = tmp / "pkgs"
        _install(base_tree, "streamd_base", pkgs)
        _install(REPO, "streamd_work", pkgs)
        sys.path.insert(0, str(pkgs))
        print(f"{'workload':<10} {'base ' + args.base:>16} {'working tree':>14}  change")
        for name in args.workloads:
            clients = {"base": _client("streamd_base"), "work": _client("streamd_work")}
            res = compare(name, clients, args.rounds, args.cold)
            change = (res["work"] / res["base"] - 1) * 100
            print(f"{name:<10} {res['base']:>13.3f} µs {res['work']:>11.3f} µs  {change:+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
