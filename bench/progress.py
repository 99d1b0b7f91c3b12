"""Progress on stderr: one live line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time


def _clock(s: float) -> str:
    s = int(s)
    return f"{s // 60}:{s % 60:02d}"


class Progress:
    def __init__(self, total: int, stream=None):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.total = max(1, total)
        self.done = 0
        self.start = time.monotonic()

    def _prefix(self) -> str:
        el = time.monotonic() - self.start
        pct = 100 * self.done // self.total
        eta = ""
        if self.done:
            eta = f" eta {_clock(el / self.done * (self.total - self.done))}"
        return f"[{self.done:>3}/{self.total} {pct:>3}% {_clock(el)}{eta}]"

    def begin(self, text: str) -> None:
        if self.tty:
            self.stream.write(f"\r\x1b[K{self._prefix()} {text} …")
            self.stream.flush()

    def end(self, text: str) -> None:
        self.done += 1
        if self.tty:
            self.stream.write(f"\r\x1b[K{self._prefix()} {text}")
        else:
            self.stream.write(f"{self._prefix()} {text}\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        if self.tty:
            self.stream.write(f"\r\x1b[K{text}\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
