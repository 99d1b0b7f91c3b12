"""The workloads. Each one measures one or more metrics on one target per call of ``run``.

A workload's ``setup`` runs once per target before the rounds (prefill, calibration and
warm-up); ``run`` is one timed sample. Workloads marked ``fresh`` start their own server
for every sample (memory and seek measurements need a clean process).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from . import loadgen, rbench
from .profiles import Profile, size_label
from .resp import Conn, RespError, load_stream
from .servers import Fleet, ServerProc


class NotApplicable(Exception):
    """The target lacks what the workload needs (reported as n/a, not as a failure)."""


@dataclass
class Metric:
    key: str
    title: str
    unit: str
    better: str  # "higher" or "lower"


@dataclass
class Target:
    name: str
    proc: ServerProc
    features: dict = field(default_factory=dict)  # feature -> None (ok) or reason string

    @property
    def port(self) -> int:
        return self.proc.port

    @property
    def slow(self) -> bool:
        return self.name == "fakeredis"

    def lacks(self, feature: str) -> str | None:
        return self.features.get(feature, f"{feature} not probed")


@dataclass
class Ctx:
    profile: Profile
    fleet: Fleet
    mem_limit: int
    notes: list = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


# --------------------------------------------------------------------------- probing
def probe_features(port: int) -> dict:
    """Which command families the server answers without an error."""
    feats: dict = {}
    key = b"bench:probe"

    def attempt(name, *cmds):
        try:
            with Conn(port, timeout=5) as c:
                for cmd in cmds:
                    reply = c.try_call(*cmd)
                    if isinstance(reply, RespError):
                        feats[name] = f"{cmd[0].decode()}: {str(reply)[:80]}"
                        return
            feats[name] = None
        except OSError as exc:
            feats[name] = f"probe failed: {exc}"

    attempt("ping", (b"PING",))
    attempt("streams", (b"DEL", key), (b"XADD", key, b"*", b"f", b"v"),
            (b"XRANGE", key, b"-", b"+", b"COUNT", b"1"), (b"XLEN", key))
    attempt("xreadgroup", (b"XGROUP", b"CREATE", key, b"g", b"0"),
            (b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS", key, b">"),
            (b"XACK", key, b"g", b"0-1"))
    attempt("block", (b"XREAD", b"BLOCK", b"1", b"STREAMS", key, b"$"))
    attempt("idmp", (b"XCFGSET", key, b"IDMP-MAXSIZE", b"10000"),
            (b"XADD", key, b"IDMP", b"p", b"i1", b"*", b"f", b"v"))
    attempt("idmpauto", (b"XADD", key, b"IDMPAUTO", b"p", b"*", b"f", b"v"))
    try:
        with Conn(port, timeout=5) as c:
            c.try_call(b"DEL", key)
    except OSError:
        pass
    return feats


# --------------------------------------------------------------------------- base
class Workload:
    name = ""
    title = ""
    tool = ""
    requires: tuple = ("streams",)
    fresh = False
    idle_between = False  # the server idles between requests (the one case busy polling changes)

    def metrics(self, p: Profile) -> list[Metric]:
        raise NotImplementedError

    def rounds(self, p: Profile) -> int:
        return p.rounds

    def check(self, t: Target) -> None:
        if t.name == "streamd-nopoll" and not self.idle_between:
            raise NotApplicable("busy polling only matters while the server idles between "
                                "requests")
        for feat in self.requires:
            reason = t.lacks(feat)
            if reason:
                raise NotApplicable(f"{t.name} lacks {feat} ({reason})")

    def setup(self, ctx: Ctx, t: Target):
        return None

    def run(self, ctx: Ctx, t: Target, state, rnd: int) -> dict:
        raise NotImplementedError

    def teardown(self, ctx: Ctx, t: Target, state) -> None:
        pass


def _del(port: int, *keys: bytes) -> None:
    with Conn(port) as c:
        c.call(b"DEL", *keys)


# --------------------------------------------------------------------------- redis-benchmark
class RBench(Workload):
    """A command driven by redis-benchmark; -n is calibrated per target in ``setup``."""

    tool = "redis-benchmark"

    def __init__(self, name, title, metric_title, command, clients, pipeline, *,
                 key=b"", requires=("streams",), prefill=None):
        self.name, self.title, self.metric_title = name, title, metric_title
        self.command, self.clients, self.pipeline = command, clients, pipeline
        self.key, self.requires, self.prefill = key, requires, prefill
        self.idle_between = clients == 1 and pipeline == 1

    def metrics(self, p):
        return [Metric(self.name, self.metric_title, "ops/s", "higher")]

    def _sample_command(self):
        return [a.replace("__rand_int__", "000000000042").encode() for a in self.command]

    def setup(self, ctx, t):
        if not rbench.available():
            raise NotApplicable("redis-benchmark not installed")
        state = {"randomkeys": None}
        if self.prefill is not None:
            state["randomkeys"] = self.prefill(ctx, t)
        with Conn(t.port) as c:  # redis-benchmark ignores error replies: check by hand
            reply = c.try_call(*self._sample_command())
            if isinstance(reply, RespError):
                raise NotApplicable(f"{self.command[0]} rejected: {reply}")
            if self.command[0] == "XRANGE" and (not reply or len(reply) != 10):
                raise RuntimeError(f"XRANGE sample returned {len(reply or [])} entries, expected 10")
        if self.key:
            _del(t.port, self.key)
        warm = max(self.clients * self.pipeline * 4, 500)
        res = rbench.run(t.port, self.command, clients=self.clients, pipeline=self.pipeline,
                         requests=warm, randomkeys=state["randomkeys"])
        p = ctx.profile
        n = int(res["ops_per_sec"] * p.seconds)
        n = max(p.rb_min, min(p.rb_max, n))
        state["n"] = max(n, self.clients * self.pipeline * 2)
        return state

    def run(self, ctx, t, state, rnd):
        if self.key:
            _del(t.port, self.key)
        cpu0 = t.proc.cpu_seconds()
        res = rbench.run(t.port, self.command, clients=self.clients, pipeline=self.pipeline,
                         requests=state["n"], randomkeys=state["randomkeys"])
        cpu = t.proc.cpu_seconds() - cpu0
        if self.command[0] == "XADD":
            with Conn(t.port) as c:
                xlen = c.call(b"XLEN", self.key)
            if xlen < state["n"]:
                raise RuntimeError(f"XLEN {xlen} after {state['n']} XADDs: commands failed")
        return {self.name: res["ops_per_sec"], "_cpu": {self.name: cpu / state["n"] * 1e6},
                "_extra": {"n": state["n"], **{k: v for k, v in res.items() if k.endswith("_ms")}}}

    def teardown(self, ctx, t, state):
        if self.key:
            _del(t.port, self.key)


XRANGE_KEY = b"bench:xrange"


def _xrange_prefill(ctx: Ctx, t: Target) -> int:
    """The XRANGE stream: IDs 1-0 .. N-0 (so __rand_int__ < N is a valid start)."""
    p = ctx.profile
    n = p.xrange_entries_slow if t.slow else p.xrange_entries
    if n != p.xrange_entries:
        ctx.note(f"XRANGE on {t.name}: {size_label(n)}-entry stream instead of "
                 f"{size_label(p.xrange_entries)} (slow to load)")
    with Conn(t.port) as c:
        if c.call(b"EXISTS", XRANGE_KEY) and c.call(b"XLEN", XRANGE_KEY) == n:
            return n
        c.call(b"DEL", XRANGE_KEY)
        load_stream(c, XRANGE_KEY, n, b"12345678", explicit_ids=True)
        if c.call(b"XLEN", XRANGE_KEY) != n:
            raise RuntimeError("XRANGE prefill incomplete")
    return n - 10  # a start near the end still returns 10 entries


# --------------------------------------------------------------------------- IDMP vs plain
_SIZES = [8, 512, 64, 256, 16, 384, 32, 128, 448, 192, 24, 320]  # 8-512 B, mean ~199 B
_FILL = b"v" * 512


def _bulk(b: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(b), b)


def xadd_maker(variant: str, key: bytes, client: int):
    """``make(i)``: the i-th XADD of ``client``; values 8-512 B, unique per client."""
    pid = b"p%d" % client
    kb = _bulk(key)
    tail = b"$1\r\n*\r\n$1\r\nf\r\n"
    if variant == "plain":
        head = b"*5\r\n$4\r\nXADD\r\n" + kb
    elif variant == "idmp":
        head = b"*8\r\n$4\r\nXADD\r\n" + kb + b"$4\r\nIDMP\r\n" + _bulk(pid)
    elif variant == "idmpauto":
        head = b"*7\r\n$4\r\nXADD\r\n" + kb + b"$8\r\nIDMPAUTO\r\n" + _bulk(pid)
    else:
        raise ValueError(variant)
    sizes, nsizes, fill = _SIZES, len(_SIZES), _FILL
    if variant == "idmp":
        def make(i):
            size = sizes[i % nsizes]
            iid = b"%d" % i
            return (head + b"$%d\r\n%s\r\n" % (len(iid), iid) + tail
                    + b"$%d\r\n%08d%s\r\n" % (size, i % 100_000_000, fill[:size - 8]))
    else:
        def make(i):
            size = sizes[i % nsizes]
            return head + tail + b"$%d\r\n%08d%s\r\n" % (size, i % 100_000_000, fill[:size - 8])
    return make


class IdmpVsPlain(Workload):
    """Plain XADD, XADD IDMP pid iid and XADD IDMPAUTO pid back to back on each target
    (IDMP-MAXSIZE 10000, values 8-512 B); the variant order rotates every round.

    Each variant's key is filled once per target before timing, to ``idmp_fill`` records
    per producer (plain: as many entries), and kept across rounds: a timed IDMP append then
    meets a full producer and evicts its oldest record, the steady state of a long-running
    producer. Without the fill a 1.2 s run never reaches MAXSIZE and leaves eviction out."""

    tool = "python (raw socket + hiredis)"
    VARIANTS = ("plain", "idmp", "idmpauto")

    def __init__(self, clients: int, pipeline: int):
        self.clients, self.pipeline = clients, pipeline
        self.idle_between = clients == 1 and pipeline == 1
        shape = "1c" if self.idle_between else f"{clients}x{pipeline}"
        self.shape = shape
        self.name = f"idmp_{shape}"
        who = "1 client, unpipelined" if shape == "1c" else f"{clients} clients x P{pipeline}"
        self.title = f"XADD plain / IDMP / IDMPAUTO, 8-512 B, {who}"

    def metrics(self, p):
        return [Metric(f"{self.name}.{v}", f"XADD {'plain' if v == 'plain' else v.upper()} "
                       f"8-512 B, {self.shape}", "ops/s", "higher") for v in self.VARIANTS]

    def _key(self, v):
        return b"bench:idmp:" + v.encode()

    def _entries(self, ctx) -> int:
        """Entries a filled key holds: one per record, and the first entry."""
        return self.clients * ctx.profile.idmp_fill + 1

    def _fill(self, ctx, t, v) -> int:
        """A fresh key whose producers each hold ``idmp_fill`` records (MAXSIZE 10000), so
        that the timed appends of a full producer each evict one; plain gets as many
        entries. Returns the request index each producer continues from."""
        key = self._key(v)
        n = ctx.profile.idmp_fill
        with Conn(t.port) as c:
            c.call(b"DEL", key)
            c.call(b"XADD", key, b"*", b"f", b"init")
            if v != "plain":
                c.call(b"XCFGSET", key, b"IDMP-MAXSIZE", b"10000")
            if t.slow:
                ctx.note(f"idmp on {t.name}: no fill before timing (loading is too slow)")
                return 0
            chunk = 1000
            for client in range(self.clients):
                make = xadd_maker(v, key, client)
                for lo in range(0, n, chunk):
                    hi = min(n, lo + chunk)
                    c.send(b"".join([make(i) for i in range(lo, hi)]))
                    if c.read_replies(hi - lo):
                        raise RuntimeError(f"{v} fill: {c.last_error}")
        return n

    def _one(self, ctx, t, v, seconds, state):
        key = self._key(v)
        start = state[v]  # per producer, the next request index: iids never repeat
        with Conn(t.port) as c:
            # The entries go, the IDMP records stay: every round starts from a stream of
            # the fill's size, instead of one that grew by every earlier round (with the
            # memory behind it, on every target at once).
            c.call(b"XTRIM", key, b"MAXLEN", b"%d" % self._entries(ctx))
            xlen0 = c.call(b"XLEN", key)
        cpu0 = t.proc.cpu_seconds()
        if self.idle_between:  # one client, unpipelined
            make = xadd_maker(v, key, 0)
            res = loadgen.unpipelined(t.port, lambda i: make(start + i), seconds)
            state[v] = start + res["ops"]
        else:
            depth = self.pipeline
            counters = [start] * self.clients

            def factory(c):
                make = xadd_maker(v, key, c)

                def batch():
                    i = counters[c]
                    counters[c] = i + depth
                    return b"".join([make(j) for j in range(i, i + depth)])
                return batch
            res = loadgen.pipelined(t.port, self.clients, depth, factory, seconds)
            state[v] = max(counters)  # a batch sent but not counted still used its iids
        res["cpu_s"] = t.proc.cpu_seconds() - cpu0
        with Conn(t.port) as c:  # every XADD must have added an entry (no dedup hits)
            xlen = c.call(b"XLEN", key)
        if xlen != xlen0 + res["ops"]:
            raise RuntimeError(f"{v}: XLEN grew by {xlen - xlen0} after {res['ops']} XADDs")
        return res

    def _variants(self, t):
        out = []
        for v in self.VARIANTS:
            if v == "plain" or not t.lacks(v):
                out.append(v)
        return out

    def setup(self, ctx, t):
        state = {}
        for v in self._variants(t):
            state[v] = self._fill(ctx, t, v)
            self._one(ctx, t, v, ctx.profile.warmup_seconds, state)
        return state

    def run(self, ctx, t, state, rnd):
        vs = self._variants(t)
        k = rnd % len(vs)
        result, extra, cpu = {}, {}, {}
        for v in vs[k:] + vs[:k]:
            res = self._one(ctx, t, v, ctx.profile.seconds, state)
            cpu[f"{self.name}.{v}"] = res["cpu_s"] / res["ops"] * 1e6
            result[f"{self.name}.{v}"] = res["ops_per_sec"]
            if "p50_us" in res:
                extra[f"{v}.p50_us"] = res["p50_us"]
        for v in self.VARIANTS:
            if v not in vs:
                result[f"{self.name}.{v}"] = NotApplicable(f"{t.name} lacks {v} ({t.lacks(v)})")
        result["_extra"] = extra
        result["_cpu"] = cpu
        return result

    def teardown(self, ctx, t, state):
        _del(t.port, *(self._key(v) for v in self.VARIANTS))


# --------------------------------------------------------------------------- consumer group
class ReadGroupAck(Workload):
    name = "xreadgroup_ack"
    title = "XREADGROUP COUNT 100 + one XACK per entry (acks pipelined), 1 consumer"
    tool = "python (raw socket + hiredis)"
    requires = ("streams", "xreadgroup")
    KEY = b"bench:group"

    def metrics(self, p):
        return [Metric(self.name, "XREADGROUP COUNT 100 + XACK per entry", "entries/s", "higher")]

    def _prefill(self, t, n):
        with Conn(t.port) as c:
            c.call(b"DEL", self.KEY)
            load_stream(c, self.KEY, n, b"12345678", explicit_ids=True)
            c.call(b"XGROUP", b"CREATE", self.KEY, b"g", b"0")

    def setup(self, ctx, t):
        n = 3000
        self._prefill(t, n)
        res = loadgen.readgroup_ack(t.port, self.KEY, b"g", n, ctx.profile.warmup_seconds)
        return {"rate": res["entries_per_sec"]}

    def run(self, ctx, t, state, rnd):
        p = ctx.profile
        n = int(min(p.readgroup_max, max(2000, state["rate"] * p.seconds * 1.5)))
        self._prefill(t, n)
        cpu0 = t.proc.cpu_seconds()
        res = loadgen.readgroup_ack(t.port, self.KEY, b"g", n, p.seconds)
        cpu = t.proc.cpu_seconds() - cpu0
        state["rate"] = max(state["rate"], res["entries_per_sec"])
        return {self.name: res["entries_per_sec"],
                "_cpu": {self.name: cpu / res["entries"] * 1e6},
                "_extra": {"entries": res["entries"], "prefill": n}}

    def teardown(self, ctx, t, state):
        _del(t.port, self.KEY)


# --------------------------------------------------------------------------- wake-up
class Wakeup(Workload):
    name = "xread_wakeup"
    title = "Wake-up latency of a client blocked in XREAD, from XADD sent to entry received"
    tool = "python (raw socket + hiredis)"
    requires = ("streams", "block")
    idle_between = True
    KEY = b"bench:wakeup"

    def metrics(self, p):
        return [Metric(self.name, "blocked XREAD wake-up latency (median)", "µs", "lower")]

    def run(self, ctx, t, state, rnd):
        _del(t.port, self.KEY)
        p = ctx.profile
        res = loadgen.wakeup_latency(t.port, self.KEY, p.wakeup_samples, max(2.0, p.seconds * 3))
        return {self.name: res["p50_us"], "_extra": {"p99_us": res["p99_us"],
                                                   "samples": res["samples"]}}

    def teardown(self, ctx, t, state):
        _del(t.port, self.KEY)


# --------------------------------------------------------------------------- fresh-server
class _MemGuard:
    def __init__(self, ctx: Ctx, sp: ServerProc):
        self.ctx, self.sp, self.calls = ctx, sp, 0

    def __call__(self, done: int) -> None:
        self.calls += 1
        if self.calls % 10 == 0 and self.sp.rss_bytes() > self.ctx.mem_limit:
            raise MemoryError(f"{self.sp.name} RSS above the {self.ctx.mem_limit >> 20} MiB guard "
                              f"after {done} entries")


class Memory(Workload):
    """RSS delta of a fresh server process per stream entry (auto IDs, one field)."""

    tool = "python loader; /proc/PID/status VmRSS"
    fresh = True

    def __init__(self, value_size: int):
        self.value_size = value_size
        self.name = f"mem_{value_size}b"

    def _count(self, p, t):
        if t.slow:
            return p.mem_8_slow if self.value_size == 8 else p.mem_512_slow
        return p.mem_8 if self.value_size == 8 else p.mem_512

    @property
    def title(self):
        return f"Memory per entry, {self.value_size} B values (RSS delta / entries)"

    def metrics(self, p):
        n = p.mem_8 if self.value_size == 8 else p.mem_512
        return [Metric(self.name, f"memory per entry, {size_label(n)} x {self.value_size} B",
                       "B/entry", "lower")]

    def rounds(self, p):
        return p.mem_rounds

    def run(self, ctx, t, state, rnd):
        p = ctx.profile
        n = self._count(p, t)
        full = p.mem_8 if self.value_size == 8 else p.mem_512
        if n != full:
            ctx.note(f"memory on {t.name}: {size_label(n)} entries instead of {size_label(full)} "
                     f"({self.value_size} B; loading is too slow)")
        sp = ctx.fleet.start(t.name)
        try:
            value = (b"%0" + str(self.value_size).encode() + b"d") % 7
            with Conn(sp.port) as c:
                # warm the code paths (lazy imports, first-key structures) before the baseline
                c.call(b"XADD", b"bench:warm", b"*", b"f", value)
                c.call(b"DEL", b"bench:warm")
                time.sleep(0.3)
                base = sp.rss_bytes()
                t0 = time.perf_counter()
                # ~64 KB per write: deeper pipelines leave the server's freed request buffers
                # as allocator fragmentation that would be counted against the entries
                chunk = max(50, (64 << 10) // (self.value_size + 60))
                added = load_stream(c, b"bench:mem", n, value, explicit_ids=False, chunk=chunk,
                                    deadline=time.monotonic() + p.load_budget,
                                    check=_MemGuard(ctx, sp))
                load_s = time.perf_counter() - t0
                if added < n:
                    raise RuntimeError(f"loaded only {added}/{n} entries in {p.load_budget:.0f}s")
                if c.call(b"XLEN", b"bench:mem") != n:
                    raise RuntimeError("XLEN mismatch after loading")
                time.sleep(0.3)
                after = sp.rss_bytes()
        finally:
            ctx.fleet.stop(sp)
        return {self.name: (after - base) / n,
                "_extra": {"entries": n, "rss_before": base, "rss_after": after,
                           "load_entries_per_sec": n / load_s}}


class Seek(Workload):
    """Cost of a seek to a random position as the stream grows: ``XREAD COUNT 1 STREAMS key
    <random id>`` (the first entry after a random existing ID) driven by redis-benchmark at
    50 clients x P16, reported as µs per op at saturation (1 / throughput). The stream lives
    in a fresh server, loaded with pipelined XADD and explicit increasing IDs ``1-0..N-0``."""

    name = "seek"
    tool = "redis-benchmark 50x16 (1/throughput); python loader"
    fresh = True

    @property
    def title(self):
        return "Seek: XREAD COUNT 1 from a random existing id, by stream length"

    def metrics(self, p):
        return [Metric(f"seek.{size_label(n)}", f"seek XREAD COUNT 1 @ {size_label(n)} entries",
                       "µs/op", "lower") for n in p.seek_sizes]

    def rounds(self, p):
        return p.mem_rounds

    def check(self, t):
        super().check(t)
        if not rbench.available():
            raise NotApplicable("redis-benchmark not installed")

    def run(self, ctx, t, state, rnd):
        p = ctx.profile
        key = b"bench:seek"
        result: dict = {}
        extra: dict = {}
        sp = ctx.fleet.start(t.name)
        started = time.monotonic()
        try:
            with Conn(sp.port) as c:
                loaded = 0
                guard = _MemGuard(ctx, sp)
                for n in p.seek_sizes:
                    label = size_label(n)
                    mkey = f"seek.{label}"
                    if t.slow and n > p.seek_max_slow:
                        result[mkey] = NotApplicable(f"skipped on {t.name}: loading {label} "
                                                     "entries takes too long")
                        ctx.note(f"seek on {t.name}: sizes above {size_label(p.seek_max_slow)} "
                                 "skipped (loading too slow)")
                        continue
                    remaining = p.load_budget - (time.monotonic() - started)
                    rate = extra.get(f"load_{size_label(loaded)}_entries_per_sec") if loaded else None
                    if rate and (n - loaded) / rate > remaining:
                        result[mkey] = NotApplicable(
                            f"skipped on {t.name}: loading to {label} entries would take "
                            f"~{(n - loaded) / rate:.0f} s at the measured {rate:,.0f} entries/s "
                            f"(load budget {p.load_budget:.0f} s)")
                        ctx.note(f"seek on {t.name}: {label} skipped (load too slow: "
                                 f"{rate:,.0f} entries/s)")
                        break
                    t0 = time.perf_counter()
                    try:
                        added = load_stream(c, key, n - loaded, b"12345678", first_ms=loaded + 1,
                                            explicit_ids=True,
                                            deadline=time.monotonic() + max(1.0, remaining),
                                            check=guard)
                    except MemoryError as exc:
                        result[mkey] = RuntimeError(str(exc))
                        break
                    extra[f"load_{label}_entries_per_sec"] = added / max(1e-9, time.perf_counter() - t0)
                    loaded += added
                    if loaded < n:
                        result[mkey] = RuntimeError(f"load cut at {loaded} entries (load budget "
                                                    f"{p.load_budget:.0f} s)")
                        break
                    probe = n // 2
                    sample = c.call(b"XREAD", b"COUNT", b"1", b"STREAMS", key, b"%012d" % probe)
                    if not sample or sample[0][1][0][0] != b"%d-0" % (probe + 1):
                        raise RuntimeError(f"XREAD from {probe} returned {sample!r:.100}")
                    cmd = ["XREAD", "COUNT", "1", "STREAMS", key.decode(), "__rand_int__"]
                    warm = rbench.run(sp.port, cmd, clients=50, pipeline=16, requests=3200,
                                      randomkeys=n - 1)
                    req = int(max(3200, min(2_000_000, warm["ops_per_sec"] * p.seek_seconds)))
                    # Best of three short samples: the cost at one size is compared with
                    # the cost at another, and contention from other work only adds time.
                    best = max(rbench.run(sp.port, cmd, clients=50, pipeline=16, requests=req,
                                          randomkeys=n - 1)["ops_per_sec"] for _ in range(3))
                    result[mkey] = 1e6 / best
                    extra[f"ops_per_sec_{label}"] = best
                extra["rss_bytes"] = sp.rss_bytes()
        finally:
            ctx.fleet.stop(sp)
        result["_extra"] = extra
        return result


# --------------------------------------------------------------------------- registry
V8 = "12345678"
V512 = "v" * 512


def all_workloads() -> list[Workload]:
    return [
        RBench("ping_50x16", "PING, 50 clients x P16", "PING 50x16", ["PING"], 50, 16,
               requires=("ping",)),
        RBench("xadd_8b_1c", "XADD 8 B value, 1 client unpipelined", "XADD 8 B, 1c",
               ["XADD", "bench:xadd", "*", "f", V8], 1, 1, key=b"bench:xadd"),
        RBench("xadd_512b_1c", "XADD 512 B value, 1 client unpipelined", "XADD 512 B, 1c",
               ["XADD", "bench:xadd", "*", "f", V512], 1, 1, key=b"bench:xadd"),
        RBench("xadd_8b_50x16", "XADD 8 B value, 50 clients x P16", "XADD 8 B, 50x16",
               ["XADD", "bench:xadd", "*", "f", V8], 50, 16, key=b"bench:xadd"),
        RBench("xadd_512b_50x16", "XADD 512 B value, 50 clients x P16", "XADD 512 B, 50x16",
               ["XADD", "bench:xadd", "*", "f", V512], 50, 16, key=b"bench:xadd"),
        IdmpVsPlain(1, 1),
        IdmpVsPlain(50, 16),
        RBench("xrange_c10_1c", "XRANGE random-start COUNT 10 on a 100k stream, 1 client",
               "XRANGE COUNT 10, 1c", ["XRANGE", XRANGE_KEY.decode(), "__rand_int__", "+",
                                       "COUNT", "10"], 1, 1, prefill=_xrange_prefill),
        RBench("xrange_c10_50x16", "XRANGE random-start COUNT 10 on a 100k stream, 50 x P16",
               "XRANGE COUNT 10, 50x16", ["XRANGE", XRANGE_KEY.decode(), "__rand_int__", "+",
                                          "COUNT", "10"], 50, 16, prefill=_xrange_prefill),
        ReadGroupAck(),
        Wakeup(),
        Memory(8),
        Memory(512),
        Seek(),
    ]
