"""Command handlers, one module per family, registered in ``table.TABLE``."""

from __future__ import annotations

import importlib
import pkgutil

from .table import TABLE  # noqa: F401

_FAMILIES = ("connection", "server", "transactions", "keys", "strings", "hashes",
             "streams", "groups", "idmp")
_loaded = False


def load_commands() -> None:
    """Import every command family once, filling the table."""
    global _loaded
    if _loaded:
        return
    present = {m.name for m in pkgutil.iter_modules(__path__)}
    for family in _FAMILIES:
        if family in present:
            importlib.import_module(f"{__name__}.{family}")
    _loaded = True
