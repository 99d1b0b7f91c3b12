"""Command handlers, one module per family, registered in ``table.TABLE``."""

from __future__ import annotations

from .table import TABLE  # noqa: F401

_loaded = False


def load_commands() -> None:
    """Import every command family once; importing a family registers its commands."""
    global _loaded
    if _loaded:
        return
    from . import (acl, bitmaps, cluster, connection, debug, dump, groups,  # noqa: F401
                   hashes, hotkeys, idmp, keys, functions, migrate, ops, pubsub, scripting,
                   server, streams, strings, transactions)
    _loaded = True
