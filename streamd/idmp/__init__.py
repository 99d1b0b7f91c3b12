"""Idempotent production (IDMP) for streams: per-producer dedup records with a size bound
and a time window, the IDMPAUTO id, and the server-wide expiry index.

Pure data rules: imports nothing from commands, server or protocol.

Use::

    registry = IdmpRegistry()                       # one per server (keyspace.idmp)
    state = registry.new_state(duration, maxsize)   # one per stream, at creation
    dup = state.claim(pid, iid, new_id)             # before an append that cannot fail:
                                                    # stored id, or None and recorded
    dup = state.lookup(pid, iid)                    # or in two steps: before appending,
    state.record(pid, iid, new_id)                  # and after a successful append
    registry.expire(now_ms)                         # every server tick
"""

from .autoiid import auto_iid
from .registry import IdmpRegistry
from .state import IdmpConflict, IdmpState

__all__ = ["IdmpConflict", "IdmpRegistry", "IdmpState", "auto_iid"]
