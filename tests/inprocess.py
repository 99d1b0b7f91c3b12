"""Run a streamd server on port 0 in a background thread, for tests and tools."""

from __future__ import annotations

import asyncio
import threading

from streamd.config import Config
from streamd.server.server import Server


class InProcessServer:
    def __init__(self, **config):
        config.setdefault("port", 0)
        self.config = Config(**config)
        self.server: Server | None = None
        self.port = 0
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def _run(self):
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            self.server = Server(self.config)
            loop.run_until_complete(self.server.start())
            self.port = self.server.port
            self._ready.set()
            loop.run_until_complete(self.server.serve_until_stopped())
        except BaseException as exc:  # surfaced to the starting thread
            self._error = exc
            self._ready.set()
        finally:
            loop.close()

    def start(self) -> "InProcessServer":
        self._thread = threading.Thread(target=self._run, name="streamd", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        if self.server is not None and self.server.loop is not None:
            self.server.loop.call_soon_threadsafe(self.server.shutdown, "test teardown")
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
