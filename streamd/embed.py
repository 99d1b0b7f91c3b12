"""streamd inside another Python program: a server on a background thread.

    from streamd.embed import EmbeddedServer

    with EmbeddedServer() as srv:                # a free port on 127.0.0.1
        r = redis.Redis.from_url(srv.url)
        ...

Keyword arguments are redis.conf settings (``requirepass="pw"``,
``stream_node_max_entries=10``: underscores stand for dashes). The server runs its own
event loop (uvloop when importable) on a daemon thread, so the calling program keeps its
own loop, or none. It is what the test suite and the pytest plugin (``streamd.pytest_plugin``)
use; for a separate process, run ``streamd`` or ``python -m streamd``.
"""

from __future__ import annotations

import asyncio
import threading

from .config import Config
from .server.loop import new_event_loop
from .server.server import Server


class EmbeddedServer:
    """One streamd server, started by ``start()`` (or ``with``), stopped by ``stop()``."""

    def __init__(self, **config):
        config.setdefault("port", 0)
        # Polling after each read would compete for the GIL with the program around it.
        config.setdefault("streamd_busy_poll_us", 0)
        self.config = Config(**config)
        self.server: Server | None = None
        self.port = 0  # the port listened on, once started
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def host(self) -> str:
        """The first bind address, or 127.0.0.1 where that is a wildcard."""
        first = (self.config["bind"].split() or ["127.0.0.1"])[0].lstrip("-")
        return "127.0.0.1" if first in ("*", "0.0.0.0", "::", "::*") else first

    @property
    def url(self) -> str:
        """``redis://host:port/0``, with the password when ``requirepass`` is set."""
        password = self.config["requirepass"]
        auth = f":{password}@" if password else ""
        return f"redis://{auth}{self.host}:{self.port}/0"

    def _run(self) -> None:
        loop = new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            self.server = Server(self.config)
            loop.run_until_complete(self.server.start())
            self.port = self.server.port
            self._ready.set()
            loop.run_until_complete(self.server.serve_until_stopped())
        except BaseException as exc:  # surfaced to the thread that called start()
            self._error = exc
            self._ready.set()
        finally:
            loop.close()

    def start(self, timeout: float = 10.0) -> "EmbeddedServer":
        """Start listening; returns once the port is bound (or raises why it could not)."""
        self._thread = threading.Thread(target=self._run, name="streamd", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"streamd did not start within {timeout} s")
        if self._error is not None:
            raise self._error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the server down as SHUTDOWN NOSAVE would, and wait for its thread."""
        if self.server is not None and self.server.loop is not None:
            try:
                self.server.loop.call_soon_threadsafe(self.server.shutdown, "embedded stop")
            except RuntimeError:  # its loop is already closed
                pass
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> "EmbeddedServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
