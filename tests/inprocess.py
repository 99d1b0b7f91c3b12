"""The test suite's in-process server: streamd's public embedding (``streamd.embed``)."""

from __future__ import annotations

from streamd.embed import EmbeddedServer as InProcessServer

__all__ = ["InProcessServer"]
