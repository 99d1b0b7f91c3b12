"""Busy polling: after a read, the loop keeps polling for a short window before it sleeps.

An unpipelined client sends its next request a few tens of microseconds after it gets a
reply. A server that has gone to sleep in ``epoll_wait`` by then pays for the wake-up (a
cross-CPU interrupt, expensive on a VM) and then serves the request with cold caches: on
the 2-core VM this project is measured on, a request that finds streamd asleep costs
several times what it costs warm (PING ~7 µs against ~2.3 µs). Redis pays the same wake-up
and simply has less work per request. Keeping the loop awake for ``streamd-busy-poll-us`` after
each read, polling with a zero timeout, catches that next request without the wake-up.
Measured live on that machine, one unpipelined client, polling against not: redis-benchmark's
XADD 22-27k against 15k requests/s and XRANGE COUNT 10 18-20k against 11-12k (Redis 7.0:
15-19k and 14-15k); redis-py's ``xadd`` in a loop 12.4k against 9.0k (Redis: 9.8k), at 80 %
of a CPU against 37 %.

It costs CPU: while a client keeps the loop polling, the server uses up to a whole CPU. Two rules
bound that. A window opens only at a read that came soon after the loop last went idle (within
one window): a client whose requests come further apart than that never makes the loop poll,
and one just past it costs at most half a CPU. And polling is off with less than two CPUs to
run on, a container's CPU quota included (there it would keep the client itself from
running), and in a server embedded in another program's thread (where it would compete for
the GIL), which ``EmbeddedServer`` sets to 0.

The loop polls because a callback is always scheduled: ``call_soon`` makes libuv (and
asyncio) poll with a zero timeout. Every client's reads are served while it polls, so the
window serves them all, not one connection.
"""

from __future__ import annotations

import os
from time import perf_counter


def cpus_available() -> float:
    """The CPUs this process may use: its affinity mask, bounded by a cgroup CPU quota."""
    try:
        n: float = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        n = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return n if quota is None else min(n, quota)


def cgroup_cpu_quota(proc_cgroup: str = "/proc/self/cgroup",
                     root: str = "/sys/fs/cgroup") -> float | None:
    """The CPU time this process's cgroups allow, in CPUs (quota / period, the smallest
    along the cgroup's path), or None when none sets a quota.

    A container started with ``--cpus 1`` (``cpus: 1`` in compose) still sees every host
    CPU in its affinity mask; only the cgroup says it gets one CPU's time. Reads cgroup v2's
    ``cpu.max`` and v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``. Inside a container
    the cgroup path is usually ``/``, the mount's own directory; a path the mount does not
    have is walked up until one exists.
    """
    try:
        with open(proc_cgroup) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, path = fields
        parts = [p for p in path.split("/") if p]
        if not controllers:  # cgroup v2: one hierarchy at the root
            mounts = [root]
        elif "cpu" in controllers.split(","):
            mounts = [os.path.join(root, controllers), os.path.join(root, "cpu")]
        else:
            continue
        for mount in mounts:
            if not os.path.isdir(mount):
                continue
            for depth in range(len(parts), -1, -1):
                limit = _cpu_limit(os.path.join(mount, *parts[:depth]), v2=not controllers)
                if limit is not None:
                    limits.append(limit)
            break
    return min(limits) if limits else None


def _cpu_limit(directory: str, v2: bool) -> float | None:
    try:
        if v2:
            with open(os.path.join(directory, "cpu.max")) as f:
                quota, period = f.read().split()[:2]
            if quota == "max":
                return None
        else:
            with open(os.path.join(directory, "cpu.cfs_quota_us")) as f:
                quota = f.read().strip()
            with open(os.path.join(directory, "cpu.cfs_period_us")) as f:
                period = f.read().strip()
            if int(quota) < 0:  # -1: no quota
                return None
        return int(quota) / int(period) if int(period) > 0 else None
    except (OSError, ValueError):
        return None


class BusyPoll:
    __slots__ = ("loop", "window", "polling", "active", "_deadline", "_idle_since")

    def __init__(self):
        self.loop = None  # the server's event loop once it serves; None: never poll
        self.window = 0.0  # seconds the loop keeps polling after a read; 0: off
        self.polling = False  # whether the poll callback is scheduled
        self.active = False  # a read arrived since the poll callback last ran
        self._deadline = 0.0
        self._idle_since = 0.0  # when the loop last stopped polling or last read without it

    def configure(self, window_us: int) -> None:
        # A polling loop takes a whole CPU while a client keeps it busy: off unless there is
        # another one for the client (and everything else).
        self.window = window_us / 1e6 if window_us > 0 and cpus_available() >= 2 else 0.0

    def wake(self) -> None:
        """A read arrived while the loop was not polling: poll after it if it came soon."""
        if not self.window or self.loop is None:
            return
        now = perf_counter()
        idle = now - self._idle_since
        self._idle_since = now
        if idle < self.window:
            self.polling = True
            self.active = False
            self._deadline = now + self.window
            self.loop.call_soon(self._poll)

    def _poll(self) -> None:
        now = perf_counter()
        if self.active:  # a read came within the window: keep polling
            self.active = False
            self._deadline = now + self.window
        if now < self._deadline and self.window:
            self.loop.call_soon(self._poll)
            return
        self.polling = False
        self._idle_since = now
