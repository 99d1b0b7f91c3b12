"""The ACL log: the last ``acllog-max-len`` security events, newest first (ACL LOG reads
it). With only the ``default`` user and every command allowed, the only events are failed
authentications (AUTH and HELLO ... AUTH), which Redis logs with reason ``auth``."""

from __future__ import annotations

import time

from ..commands.connection import client_line

# Redis folds a new event into a recent one alike in everything but time: looking at the
# newest few entries only, and only while the last update is at most this old.
_GROUPING_SCAN = 10
_GROUPING_MS = 60_000


class AclEntry:
    __slots__ = ("count", "reason", "context", "object", "username", "ctime_ms",
                 "client_info")

    def __init__(self, reason: bytes, context: bytes, obj: bytes, username: bytes,
                 ctime_ms: int, client_info: str):
        self.count = 1
        self.reason, self.context, self.object, self.username = reason, context, obj, username
        self.ctime_ms = ctime_ms
        self.client_info = client_info


class AclLog:
    __slots__ = ("entries",)

    def __init__(self):
        self.entries: list[AclEntry] = []  # newest first

    def auth_failed(self, client, obj: bytes, username: bytes, max_len: int) -> None:
        """Log a failed authentication by ``client``; ``obj`` is the command name as the
        client sent it, which Redis reports as the event's object."""
        now = time.time()
        now_ms = int(now * 1000)
        context = b"multi" if client.multi is not None else b"toplevel"
        info = client_line(client, now)
        entries = self.entries
        for i, e in enumerate(entries[:_GROUPING_SCAN]):
            if (e.reason == b"auth" and e.context == context and e.object == obj
                    and e.username == username and now_ms - e.ctime_ms <= _GROUPING_MS):
                e.count += 1
                e.ctime_ms = now_ms
                e.client_info = info
                entries.insert(0, entries.pop(i))  # the updated entry becomes the newest
                return
        entries.insert(0, AclEntry(b"auth", context, obj, username, now_ms, info))
        del entries[max_len:]

    def reset(self) -> None:
        self.entries.clear()
