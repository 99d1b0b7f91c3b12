"""A HOTKEYS tracking session (Redis 8.6): which keys the commands spend their CPU time and
network bytes on.

Redis keeps each metric in a probabilistic top-K structure sized for ten times the K asked
for. streamd counts exactly and, when a metric holds more than PRUNE_AT × K keys, keeps the
10 × K heaviest: the same keys come out on top, without an error bound.

The dispatcher sends every client through its slow path while a session is active (one
check per command then, none otherwise) and calls ``record`` for each command it runs from
a client or inside EXEC, not for the commands scripts run, as Redis skips nested calls.
"""

from __future__ import annotations

import heapq
import resource
from operator import itemgetter
from random import random, randrange

CLUSTER_SLOTS = 16384
KEEP = 10  # keys kept per K when pruning, as Redis's structure tracks 10 × K
PRUNE_AT = 100


def _cpu_ms() -> tuple[float, float]:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime, ru.ru_stime


class HotKeys:
    """One session, from HOTKEYS START until HOTKEYS RESET (or the next START)."""

    __slots__ = ("cpu", "net", "count", "duration", "sample_ratio", "active", "start",
                 "_cpu0", "time_all", "net_all", "net_total")

    def __init__(self, cpu: bool, net: bool, count: int, duration_ms: int,
                 sample_ratio: int, now_ms: int):
        self.cpu: dict | None = {} if cpu else None  # key -> microseconds
        self.net: dict | None = {} if net else None  # key -> bytes in and out
        self.count = count
        self.duration = duration_ms  # 0: until HOTKEYS STOP; once stopped, how long it ran
        self.sample_ratio = sample_ratio
        self.active = True
        self.start = now_ms
        self._cpu0 = _cpu_ms()
        self.time_all = 0  # all-commands-all-slots-us
        self.net_all = 0  # net-bytes-all-commands-all-slots
        self.net_total = 0  # total-net-bytes: what the sampled commands gave the keys

    def record(self, keys: list, usec: int, nbytes: int) -> None:
        """A command that ran for ``usec`` on ``keys`` and read and wrote ``nbytes``."""
        if not keys:
            return  # Redis counts the commands that have keys only
        self.time_all += usec
        self.net_all += nbytes
        if self.sample_ratio > 1 and random() >= 1.0 / self.sample_ratio:
            return
        if self.cpu is not None:
            self.cpu = self._add(self.cpu, keys, usec)
        if self.net is not None:
            self.net = self._add(self.net, keys, nbytes)
            self.net_total += nbytes

    def _add(self, counts: dict, keys: list, weight: int) -> dict:
        # Each key gets an equal share; what the shares leave over goes one unit per key
        # from a random one on, so a command's keys add up to its whole cost.
        n = len(keys)
        share, rest = divmod(weight, n)
        first = randrange(n) if rest else 0
        for i, key in enumerate(keys):
            w = share + ((i - first) % n < rest)
            if w:
                counts[key] = counts.get(key, 0) + w
        if len(counts) > PRUNE_AT * self.count:
            counts = dict(heapq.nlargest(KEEP * self.count, counts.items(), key=itemgetter(1)))
        return counts

    def stop(self, now_ms: int) -> None:
        self.active = False
        self.duration = now_ms - self.start

    def expired(self, now_ms: int) -> bool:
        return self.active and self.duration > 0 and now_ms - self.start >= self.duration

    def top(self, counts: dict) -> list:
        """The session's K heaviest keys of a metric: [key, value, key, value, ...]."""
        out = []
        for key, value in heapq.nlargest(self.count, counts.items(), key=itemgetter(1)):
            out += (key, value)
        return out

    def report(self, now_ms: int) -> list:
        """HOTKEYS GET's fields, in Redis's order, as (name, value) pairs."""
        fields = [("tracking-active", int(self.active)),
                  ("sample-ratio", self.sample_ratio),
                  # The slots this node serves: all of them, without cluster mode.
                  ("selected-slots", [[0, CLUSTER_SLOTS - 1]]),
                  ("all-commands-all-slots-us", self.time_all),
                  ("net-bytes-all-commands-all-slots", self.net_all),
                  ("collection-start-time-unix-ms", self.start),
                  ("collection-duration-ms",
                   now_ms - self.start if self.active else self.duration)]
        if self.cpu is not None:
            user, sys_ = _cpu_ms()
            fields += [("total-cpu-time-user-ms", int((user - self._cpu0[0]) * 1000)),
                       ("total-cpu-time-sys-ms", int((sys_ - self._cpu0[1]) * 1000))]
        if self.net is not None:
            fields.append(("total-net-bytes", self.net_total))
        if self.cpu is not None:
            fields.append(("by-cpu-time-us", self.top(self.cpu)))
        if self.net is not None:
            fields.append(("by-net-bytes", self.top(self.net)))
        return fields
