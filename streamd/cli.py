"""Command line: ``streamd [config-file] [--port 6379] [--<redis.conf key> value ...]``."""

from __future__ import annotations

import logging
import os
import sys
import time

from . import REDIS_VERSION, VERBOSE, __version__
from .config import Config, ConfigFileError, _repr, read_config_file
from .server.loop import new_event_loop

USAGE = """Usage: streamd [/path/to/redis.conf] [options]
       streamd -v or --version
       streamd -h or --help

Options are redis.conf keys with two leading dashes, for example:
  --port 6379 --bind 127.0.0.1 --requirepass secret --databases 16 --loglevel notice
  --port 0 picks a free port and logs the one chosen.
"""

_LEVELS = {"debug": logging.DEBUG, "verbose": VERBOSE, "notice": logging.INFO,
           "warning": logging.WARNING, "nothing": logging.CRITICAL + 1}
_MARKS = {logging.DEBUG: ".", VERBOSE: "-", logging.INFO: "*", logging.WARNING: "#",
          logging.ERROR: "#", logging.CRITICAL: "#"}


class _RedisFormatter(logging.Formatter):
    """``pid:M 22 Nov 2026 07:40:01.123 * message``, as redis-server logs."""

    def format(self, record):
        t = time.localtime(record.created)
        stamp = time.strftime("%d %b %Y %H:%M:%S", t) + f".{int(record.msecs):03d}"
        mark = _MARKS.get(record.levelno, "*")
        text = f"{os.getpid()}:M {stamp} {mark} {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def _options_text(args: list[str]) -> str:
    """The command-line options as the config lines Redis makes of them: ``--name`` starts a
    line, each value follows quoted (``--port 1 2`` is ``port "1" "2"``). The first word
    after a name is its value even when it starts with ``--``; a ``--save`` with no value
    means ``save ""``."""
    lines: list[str] = []
    expecting_value = False
    for i, arg in enumerate(args):
        if not expecting_value and arg.startswith("--"):
            lines.append(arg[2:] + " ")
            expecting_value = len(arg[2:].split()) < 2
            if expecting_value and arg.lower() == "--save" and (
                    i == len(args) - 1 or args[i + 1].startswith("--")):
                lines[-1] += '"" '
                expecting_value = False
        else:
            if not lines:
                lines.append("")
            lines[-1] += _repr(arg) + " "
            expecting_value = False
    return "\n".join(lines)


def _fatal(exc: ConfigFileError) -> str:
    if exc.lineno is None:
        return exc.message
    return (f"\n*** FATAL CONFIG FILE ERROR (Redis {REDIS_VERSION}) ***\n"
            f"Reading the configuration file, at line {exc.lineno}\n"
            f">>> '{exc.line}'\n{exc.message}")


def parse_args(argv: list[str]) -> Config:
    """Build the Config as redis-server does: an optional config file (the first argument,
    when it does not start with ``-``), then the ``--name value`` options as if they were
    more lines after it. A bad line ends the start with Redis's fatal-error report."""
    config = Config()
    args = list(argv)
    text = ""
    try:
        if args and not args[0].startswith("-"):
            path = args.pop(0)
            text = read_config_file(path)
            config.file = os.path.abspath(path)
        if args:
            text += "\n" + _options_text(args)
        config.load_text(text)
    except ConfigFileError as exc:
        raise SystemExit(_fatal(exc)) from None
    return config


def setup_logging(config: Config) -> None:
    handler: logging.Handler
    if config["logfile"]:
        handler = logging.FileHandler(config["logfile"])
    else:
        handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(_RedisFormatter())
    root = logging.getLogger("streamd")
    root.handlers[:] = [handler]
    root.setLevel(_LEVELS[config["loglevel"]])
    root.propagate = False


async def _serve(config: Config) -> int:
    from .server.gcpolicy import GcPolicy
    from .server.heap import HeapPolicy
    from .server.server import Server

    log = logging.getLogger("streamd")
    server = Server(config)
    try:
        await server.start(handle_signals=True)
    except OSError as exc:
        log.warning("Failed listening on port %s (tcp), aborting: %s", config["port"], exc)
        return 1
    server.gc_policy = GcPolicy()
    server.gc_policy.start()
    server.heap_policy = HeapPolicy.load()
    if server.heap_policy is not None:
        server.heap_policy.start()
    await server.serve_until_stopped()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-v", "--version"):
        print(f"streamd v={__version__} redis-api={REDIS_VERSION}")
        return 0
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    try:
        config = parse_args(argv)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 1
    setup_logging(config)
    log = logging.getLogger("streamd")
    log.info("oO0OoO0OoO0Oo streamd is starting oO0OoO0OoO0Oo")
    log.info("streamd version=%s, Redis API=%s, bits=64, pid=%d, just started",
             __version__, REDIS_VERSION, os.getpid())
    if config["daemonize"]:
        # A redis.conf copied as it is often says so; without this line the start looks
        # as if it hung, where redis-server would have forked and returned.
        log.warning("daemonize yes is not supported: streamd stays in the foreground "
                    "(start it with & or under a process supervisor)")
    loop = new_event_loop()
    log.info("Event loop: %s", type(loop).__module__.split(".")[0])
    try:
        code = loop.run_until_complete(_serve(config))
    finally:
        loop.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
