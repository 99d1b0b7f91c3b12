"""The slow log: the last ``slowlog-max-len`` commands that ran for at least
``slowlog-log-slower-than`` microseconds, newest first (SLOWLOG GET reads it)."""

from __future__ import annotations

import time
from collections import deque

from ..commands.ops import slowlog_argv

# slowlog-log-slower-than -1 turns the log off: a threshold no duration reaches.
NEVER = 1 << 80


class SlowLog:
    __slots__ = ("entries", "next_id")

    def __init__(self):
        # Each entry is SLOWLOG GET's array: id, unix time, microseconds, argv, client
        # address, client name.
        self.entries: deque = deque()
        self.next_id = 0  # SLOWLOG RESET empties the log but IDs keep counting, as in Redis

    def push(self, client, cmd, argv: list[bytes], usec: int, max_len: int) -> None:
        # EXEC is flagged skip_slowlog: its commands are logged one by one instead. A
        # slowlog-max-len of 0 turns the log off as a negative threshold does (Redis 7.4+):
        # nothing is added, and what is there stays.
        if "skip_slowlog" in cmd.flags or not max_len:
            return
        self.entries.appendleft((self.next_id, int(time.time()), usec,
                                 slowlog_argv(cmd.name, argv), client.addr.encode(),
                                 client.name))
        self.next_id += 1
        self.trim(max_len)

    def trim(self, max_len: int) -> None:
        """Keep the newest ``max_len`` entries. Redis trims after every command while the
        log is on; only CONFIG SET can leave it too long, so streamd trims after pushes
        and after CONFIG SET (``Server.config_changed``)."""
        while len(self.entries) > max_len:
            self.entries.pop()


def threshold_us(usec: int) -> int:
    """slowlog-log-slower-than as the dispatcher compares it, NEVER when disabled."""
    return NEVER if usec < 0 else usec
