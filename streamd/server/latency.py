"""Latency data the dispatcher records: per-command call durations (latency-tracking,
read by INFO latencystats and LATENCY HISTOGRAM) and the latency monitor's events
(latency-monitor-threshold, read by the LATENCY subcommands).

The dispatcher's fast path does ``cmd.lat[usec] += 1`` itself; ``Latency.record`` takes
what that cannot: a command's first call (its ``hist`` is still empty), a call slower than
``HIST_LEN`` microseconds, and runs of calls counted at once.
"""

from __future__ import annotations

import time
from collections import deque

from ..commands.latencystats import HIST_LEN, big_bucket
from ..commands.table import every_command

# Redis keeps this many samples per event, at most one per second.
MAX_SAMPLES = 160

class Series:
    """One event's samples, oldest first: [unix time, milliseconds]; and its all-time
    maximum, which LATENCY RESET alone clears."""

    __slots__ = ("samples", "max")

    def __init__(self):
        self.samples: deque = deque(maxlen=MAX_SAMPLES)
        self.max = 0


class Latency:
    __slots__ = ("tracking", "events")

    def __init__(self):
        self.tracking = True
        self.events: dict[str, Series] = {}

    # --- latency-tracking ----------------------------------------------------------------
    def set_tracking(self, on: bool) -> None:
        """Point every command's ``lat`` at its histogram (on) or at its shadow counts."""
        self.tracking = on
        for cmd in _commands():
            cmd.lat = cmd.hist if on else cmd.shadow

    def reset_histograms(self) -> None:
        """CONFIG RESETSTAT: every command's figures go."""
        for cmd in _commands():
            cmd.hist = []
            cmd.hist_big = {}
            cmd.shadow = []
            cmd.lat = cmd.hist if self.tracking else cmd.shadow

    def record(self, cmd, usec: int, count: int = 1) -> None:
        """Count ``count`` calls of ``usec`` microseconds each: the calls and their time
        for commandstats, and, while latency-tracking is on, their histogram."""
        if usec < 0:  # the wall clock stepped back
            usec = 0
        if usec < HIST_LEN:
            if not cmd.lat:  # the command's first call since the start or RESETSTAT
                if self.tracking:
                    cmd.hist = cmd.lat = [0] * HIST_LEN
                else:
                    cmd.shadow = cmd.lat = [0] * HIST_LEN
            cmd.lat[usec] += count
            return
        cmd.usec += usec * count
        if self.tracking:
            key = big_bucket(usec)
            cmd.hist_big[key] = cmd.hist_big.get(key, 0) + count
        else:
            cmd.more_calls += count

    # --- latency monitor -----------------------------------------------------------------
    def add_sample(self, event: str, ms: int) -> None:
        """An event of ``ms`` milliseconds: a new sample, or, within the same second as the
        last one, that sample raised to the larger of the two."""
        series = self.events.get(event)
        if series is None:
            series = self.events[event] = Series()
        if ms > series.max:
            series.max = ms
        now = int(time.time())
        samples = series.samples
        if samples and samples[-1][0] == now:
            if ms > samples[-1][1]:
                samples[-1][1] = ms
            return
        samples.append([now, ms])

    def reset(self, names) -> int:
        """Drop the named events (all when ``names`` is None); how many there were."""
        if names is None:
            n = len(self.events)
            self.events.clear()
            return n
        return sum(self.events.pop(name, None) is not None for name in names)


def _commands():
    for cmd in every_command():
        yield cmd
        if cmd.bare is not None and cmd.bare is not cmd:
            yield cmd.bare

