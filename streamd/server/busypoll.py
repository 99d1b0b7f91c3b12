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
15-19k and 14-15k); redis-py's ``xadd`` in a loop 12.4k against 9.0k (Redis: 9.8k), at 80 % of a CPU against
37 %.

It costs CPU: while a client keeps the loop polling, the server uses up to a whole CPU. Two rules
bound that. A window opens only at a read that came soon after the loop last went idle (within
one window): a client whose requests come further apart than that never makes the loop poll,
and one just past it costs at most half a CPU. And polling is off on a machine with one CPU
(where it would keep the client itself from running) and in a server embedded in another
program's thread (where it would compete for the GIL), which ``EmbeddedServer`` sets to 0.

The loop polls because a callback is always scheduled: ``call_soon`` makes libuv (and
asyncio) poll with a zero timeout. Every client's reads are served while it polls, so the
window serves them all, not one connection.
"""

from __future__ import annotations

import os
from time import perf_counter


def cpus_available() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


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
        self.window = window_us / 1e6 if window_us > 0 and cpus_available() > 1 else 0.0

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
