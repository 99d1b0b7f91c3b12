"""Run sizes: ``full`` (default, <= 15 min), ``quick`` (<= 2 min), ``smoke`` (CI, seconds)."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Profile:
    name: str
    rounds: int               # interleaved rounds for the throughput/latency workloads
    seconds: float            # target length of one timed run
    warmup_seconds: float     # calibration / warm-up run per target, discarded
    rb_min: int               # bounds on redis-benchmark -n
    rb_max: int
    xrange_entries: int       # the XRANGE stream (fakeredis gets xrange_entries_slow)
    xrange_entries_slow: int
    readgroup_max: int        # entries consumed per XREADGROUP round, at most
    wakeup_samples: int
    mem_rounds: int           # memory and seek runs use a fresh server each; loads dominate
    mem_8: int                # entries for the 8 B memory run (fakeredis: *_slow)
    mem_512: int
    mem_8_slow: int
    mem_512_slow: int
    seek_sizes: tuple[int, ...]
    seek_max_slow: int        # largest seek size for fakeredis
    seek_seconds: float
    load_budget: float        # seconds allowed for one big load before it is cut short
    idmp_fill: int            # IDMP workload: records per producer before timing (MAXSIZE
                              # 10000: a full producer evicts on every append)


PROFILES = {
    "full": Profile(
        name="full", rounds=5, seconds=1.2, warmup_seconds=0.3, rb_min=2_000,
        rb_max=2_000_000, xrange_entries=100_000, xrange_entries_slow=20_000,
        readgroup_max=400_000, wakeup_samples=300, mem_rounds=1,
        mem_8=1_000_000, mem_512=200_000, mem_8_slow=30_000, mem_512_slow=10_000,
        seek_sizes=(10_000, 1_000_000, 10_000_000), seek_max_slow=100_000,
        seek_seconds=0.8, load_budget=400.0, idmp_fill=10_000),
    "quick": Profile(
        name="quick", rounds=3, seconds=0.25, warmup_seconds=0.08, rb_min=1_000,
        rb_max=500_000, xrange_entries=100_000, xrange_entries_slow=10_000,
        readgroup_max=100_000, wakeup_samples=40, mem_rounds=1,
        mem_8=50_000, mem_512=30_000, mem_8_slow=5_000, mem_512_slow=2_000,
        seek_sizes=(10_000, 100_000), seek_max_slow=10_000,
        seek_seconds=0.25, load_budget=30.0, idmp_fill=10_000),
    "smoke": Profile(
        name="smoke", rounds=1, seconds=0.1, warmup_seconds=0.05, rb_min=800,
        rb_max=20_000, xrange_entries=2_000, xrange_entries_slow=1_000,
        readgroup_max=2_000, wakeup_samples=5, mem_rounds=1,
        mem_8=10_000, mem_512=2_000, mem_8_slow=2_000, mem_512_slow=500,
        seek_sizes=(1_000, 3_000), seek_max_slow=1_000,
        seek_seconds=0.1, load_budget=10.0, idmp_fill=100),
}


def get(name: str, rounds: int | None = None) -> Profile:
    p = PROFILES[name]
    if rounds is not None:
        p = replace(p, rounds=max(1, rounds))
    return p


def size_label(n: int) -> str:
    for div, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= div and n % div == 0:
            return f"{n // div}{suffix}"
    return str(n)
