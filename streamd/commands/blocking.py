"""The value a handler returns to park its client until a key changes.

Blocking is re-execution: when a key in ``keys`` is signalled, the server runs the same
handler again with ``argv`` (or the ``rerun`` that stands for it). If that run returns
another ``Block``, the client stays parked under its original deadline.
"""

from __future__ import annotations


class Block:
    __slots__ = ("keys", "timeout_ms", "argv", "nokey", "timeout_reply", "rerun")

    def __init__(self, keys: list[bytes], timeout_ms: int, argv: list[bytes] | None = None,
                 nokey: bool = False, timeout_reply=None, rerun=None):
        self.keys = keys  # keys whose change should re-run the command
        self.timeout_ms = timeout_ms  # 0 = forever; counted from the first park only
        self.argv = argv  # argv to re-run (XREAD rewrites `$` to a concrete ID); None = same
        self.nokey = nokey  # also wake on deletion/type change of the key (XREADGROUP)
        # What the client gets when the timeout fires or CLIENT UNBLOCK ends the wait
        # without an error; None: the null array of the blocking reads. WAIT, which waits
        # on no key, answers the number of replicas reached.
        self.timeout_reply = timeout_reply
        # What a wake-up runs instead of the command's handler, called like it (ctx, argv):
        # the same command with what it parsed kept. None: the handler itself.
        self.rerun = rerun
