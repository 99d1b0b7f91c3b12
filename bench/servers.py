"""Start and stop the servers under test: streamd, redis-server and fakeredis's TCP server.

Each target runs as a subprocess on a free loopback port, in its own process group, with
``PR_SET_PDEATHSIG`` so that it dies with the benchmark even if the benchmark is killed.
``ServerProc.stop`` is idempotent; ``Fleet`` stops everything it started on exit.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
# streamd-nopoll: streamd with busy polling off (streamd/server/busypoll.py), run only where an
# idle server matters (unpipelined clients, wake-up latency), to show what polling changes.
ALL_TARGETS = ("streamd", "redis", "fakeredis", "streamd-nopoll")
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """preexec_fn: SIGKILL the child when the benchmark process goes away (Linux)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def available(name: str) -> tuple[bool, str]:
    """Whether a target can be started here, and why not."""
    if name in ("streamd", "streamd-nopoll"):
        if (REPO / "streamd" / "__main__.py").exists() or importlib.util.find_spec("streamd"):
            return True, ""
        return False, "streamd package not found"
    if name == "redis":
        if shutil.which("redis-server"):
            return True, ""
        return False, "redis-server not installed"
    if name == "fakeredis":
        if importlib.util.find_spec("fakeredis"):
            return True, ""
        return False, "fakeredis not installed"
    return False, f"unknown target {name!r}"


def _command(name: str, port: int) -> list[str]:
    if name in ("streamd", "streamd-nopoll"):
        off = ["--streamd-busy-poll-us", "0"] if name == "streamd-nopoll" else []
        return [sys.executable, "-m", "streamd", "--port", str(port), "--bind", HOST,
                "--loglevel", "warning", *off]
    if name == "redis":
        return ["redis-server", "--port", str(port), "--bind", HOST, "--save", "",
                "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no",
                "--loglevel", "warning"]
    if name == "fakeredis":
        return [sys.executable, "-m", "bench.fakeredis_server", "--port", str(port)]
    raise ValueError(name)


class StartError(RuntimeError):
    pass


class ServerProc:
    """One running server subprocess."""

    def __init__(self, name: str):
        self.name = name
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.logfile: str | None = None
        self.version = "?"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 30.0) -> "ServerProc":
        last_error = "did not start"
        for _attempt in range(3):  # a free port can be taken between probe and bind
            self.port = free_port()
            fd, self.logfile = tempfile.mkstemp(prefix=f"bench-{self.name}-", suffix=".log")
            log = os.fdopen(fd, "wb")
            env = dict(os.environ)
            env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
            env.pop("PYTHONDEVMODE", None)
            self.proc = subprocess.Popen(
                _command(self.name, self.port), cwd=str(REPO), stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                start_new_session=True, preexec_fn=_die_with_parent)
            log.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    last_error = f"exited with {self.proc.returncode}: {self.log_tail()}"
                    break
                if self._ping():
                    self.version = self._version()
                    return self
                time.sleep(0.05)
            else:
                last_error = f"no PONG within {timeout:.0f}s: {self.log_tail()}"
            self.stop()
        raise StartError(f"{self.name}: {last_error}")

    def _ping(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=1.0) as s:
                s.sendall(b"*1\r\n$4\r\nPING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def _version(self) -> str:
        if self.name == "fakeredis":
            try:
                from importlib.metadata import version
                return version("fakeredis")
            except Exception:
                return "?"
        from .resp import Conn
        try:
            with Conn(self.port) as c:
                info = c.call(b"INFO", b"server")
            if isinstance(info, bytes):
                fields = dict(line.split(":", 1) for line in
                              info.decode(errors="replace").splitlines() if ":" in line)
                rv = fields.get("redis_version", "?").strip()
                if "streamd_version" in fields:
                    return f"{fields['streamd_version'].strip()} (Redis API {rv})"
                return rv
        except Exception:
            pass
        return "?"

    def log_tail(self, n: int = 5) -> str:
        try:
            with open(self.logfile or "", "rb") as fh:
                lines = fh.read().decode(errors="replace").strip().splitlines()
            return " | ".join(lines[-n:])
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def rss_bytes(self) -> int:
        """VmRSS of the server process, from /proc/PID/status."""
        with open(f"/proc/{self.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError("VmRSS not found")

    def cpu_seconds(self) -> float:
        """user+sys CPU time of the server process (all threads, incl. exited ones)."""
        with open(f"/proc/{self.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    proc.kill()
                proc.wait(5)
        if self.logfile:
            try:
                os.unlink(self.logfile)
            except OSError:
                pass
            self.logfile = None
        # keep self.proc None so that a second stop() is a no-op

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class Fleet:
    """Every server started during a run; ``stop_all`` runs on any exit path."""

    def __init__(self):
        self.procs: list[ServerProc] = []

    def start(self, name: str) -> ServerProc:
        sp = ServerProc(name)
        self.procs.append(sp)
        return sp.start()

    def stop(self, sp: ServerProc) -> None:
        sp.stop()
        if sp in self.procs:
            self.procs.remove(sp)

    def stop_all(self) -> None:
        while self.procs:
            self.procs.pop().stop()
