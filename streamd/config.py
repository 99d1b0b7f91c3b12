"""Server configuration, named after redis.conf keys.

One ``Param`` per key: default, parser/validator, formatter for CONFIG GET, and whether
CONFIG SET may change it at run time. The command line, the config file, CONFIG GET/SET and
CONFIG REWRITE all go through this table.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Callable


class ConfigError(ValueError):
    """An invalid value; the message is Redis's reason text."""


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": 1024**2,
          "g": 1000**3, "gb": 1024**3}


def _memory(text: str) -> int:
    """A memory value as Redis's memtoull reads it: ASCII digits, then a unit or nothing.
    No sign and no spaces; a bare unit (or nothing at all) is 0, as strtoull reads ""."""
    digits = len(text) - len(text.lstrip("0123456789"))
    unit = text[digits:].lower()
    if unit not in _UNITS or digits >= 128:  # memtoull copies the digits to a 128-byte buffer
        raise ConfigError("argument must be a memory value")
    return int(text[:digits] or 0) * _UNITS[unit]


def _int_range(lo: int, hi: int, memory: bool = False):
    def parse(text: str) -> int:
        if memory:
            value = _memory(text)
        else:
            try:
                value = int(text, 10)
            except ValueError:
                raise ConfigError("argument couldn't be parsed into an integer") from None
        if not lo <= value <= hi:
            raise ConfigError(f"argument must be between {lo} and {hi} inclusive")
        return value
    return parse


def _yesno(text: str) -> bool:
    t = text.lower()
    if t not in ("yes", "no"):
        raise ConfigError("argument must be 'yes' or 'no'")
    return t == "yes"


def _enum(*choices):
    def parse(text: str) -> str:
        if text.lower() not in choices:
            raise ConfigError("argument(s) must be one of the following: " + ", ".join(choices))
        return text.lower()
    return parse


def _string(text: str) -> str:
    return text


def _fmt(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@dataclass
class Param:
    name: str
    default: object
    parse: Callable[[str], object]
    mutable: bool = True
    sensitive: bool = False


LLONG_MAX = 2**63 - 1
PARAMS: dict[str, Param] = {}


def _p(name, default, parse, mutable=True, sensitive=False):
    PARAMS[name] = Param(name, default, parse, mutable, sensitive)


_p("port", 6379, _int_range(0, 65535), mutable=False)
_p("bind", "127.0.0.1", _string, mutable=False)
_p("requirepass", "", _string, sensitive=True)
_p("databases", 16, _int_range(1, 1 << 20), mutable=False)
_p("loglevel", "notice", _enum("debug", "verbose", "notice", "warning", "nothing"))
_p("logfile", "", _string, mutable=False)
_p("hz", 10, _int_range(1, 500))
_p("timeout", 0, _int_range(0, 2**31 - 1))
_p("tcp-keepalive", 300, _int_range(0, 2**31 - 1))
_p("tcp-backlog", 511, _int_range(0, 2**31 - 1), mutable=False)
_p("maxclients", 10000, _int_range(1, 2**31 - 1))
_p("maxmemory", 0, _int_range(0, LLONG_MAX, memory=True))
_p("maxmemory-policy", "noeviction", _string)
_p("proto-max-bulk-len", 512 * 1024 * 1024, _int_range(1024 * 1024, LLONG_MAX, memory=True))
_p("client-query-buffer-limit", 1024**3, _int_range(1024 * 1024, LLONG_MAX, memory=True))
_p("stream-node-max-entries", 100, _int_range(0, LLONG_MAX))
_p("stream-node-max-bytes", 4096, _int_range(0, LLONG_MAX, memory=True))
_p("stream-idmp-duration", 100, _int_range(1, 86400))
_p("stream-idmp-maxsize", 100, _int_range(1, 10000))
_p("appendonly", False, _yesno)
_p("appendfsync", "everysec", _enum("always", "everysec", "no"))
_p("save", "", _string)
_p("dir", ".", _string)
_p("dbfilename", "dump.rdb", _string)
_p("appendfilename", "appendonly.aof", _string, mutable=False)
_p("notify-keyspace-events", "", _string)
_p("daemonize", False, _yesno, mutable=False)
_p("protected-mode", False, _yesno)
_p("pidfile", "", _string, mutable=False)
_p("supervised", "no", _enum("no", "upstart", "systemd", "auto"), mutable=False)
_p("io-threads", 1, _int_range(1, 128), mutable=False)
_p("lazyfree-lazy-user-del", False, _yesno)
_p("lazyfree-lazy-user-flush", False, _yesno)
_p("busy-reply-threshold", 5000, _int_range(0, LLONG_MAX))
_p("slowlog-log-slower-than", 10000, _int_range(-1, LLONG_MAX))
_p("slowlog-max-len", 128, _int_range(0, LLONG_MAX))
_p("latency-tracking", True, _yesno)
_p("list-max-listpack-size", -2, _int_range(-5, LLONG_MAX))
_p("hash-max-listpack-entries", 512, _int_range(0, LLONG_MAX))
_p("hash-max-listpack-value", 64, _int_range(0, LLONG_MAX))
_p("active-expire-effort", 1, _int_range(1, 10))
_p("always-show-logo", False, _yesno, mutable=False)
_p("enable-debug-command", "no", _enum("no", "yes", "local"), mutable=False)

# redis.conf spells some keys differently from CONFIG GET.
ALIASES = {"hash-max-ziplist-entries": "hash-max-listpack-entries",
           "hash-max-ziplist-value": "hash-max-listpack-value",
           "list-max-ziplist-size": "list-max-listpack-size",
           "lua-time-limit": "busy-reply-threshold"}


class Config:
    """The running configuration: typed values keyed by redis.conf name."""

    def __init__(self, **overrides):
        self.values = {name: p.default for name, p in PARAMS.items()}
        self.file: str | None = None  # config file path, for CONFIG REWRITE
        for name, value in overrides.items():
            self.set(name.replace("_", "-"), str(value), startup=True)

    def __getitem__(self, name: str):
        return self.values[name]

    def get(self, name: str, default=None):
        return self.values.get(name, default)

    def set(self, name: str, text: str, startup: bool = False) -> None:
        """Validate and apply; raises KeyError (unknown/immutable) or ConfigError."""
        name = ALIASES.get(name.lower(), name.lower())
        param = PARAMS.get(name)
        if param is None:
            raise KeyError(name)
        if not startup and not param.mutable:
            raise ConfigError("can't set immutable config")
        self.values[name] = param.parse(text)

    def names(self):
        """Every name CONFIG GET can report: the parameters, then their old aliases."""
        yield from PARAMS
        yield from ALIASES

    def lookup(self, name: str) -> str | None:
        """The value of a parameter named by itself or an alias (any case), as text."""
        name = name.lower()
        name = ALIASES.get(name, name)
        return _fmt(self.values[name]) if name in PARAMS else None

    def rewrite(self) -> None:
        """Write the non-default values back to the config file (CONFIG REWRITE)."""
        if not self.file:
            raise ConfigError("The server is running without a config file")
        lines = [f"{n} {_quote(_fmt(v))}" for n, v in self.values.items()
                 if v != PARAMS[n].default]
        with open(self.file, "w") as fh:
            fh.write("# Generated by CONFIG REWRITE\n")
            fh.write("\n".join(lines) + ("\n" if lines else ""))


def _quote(text: str) -> str:
    if text == "" or any(c in text for c in ' "\'\\'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def parse_config_text(text: str) -> list[tuple[str, str]]:
    """redis.conf syntax: ``key value...`` lines, ``#`` comments, quoted values."""
    from .protocol.reader import split_args

    pairs = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = split_args(line.encode())
        if words is None:
            raise ConfigError(f"line {lineno}: unbalanced quotes")
        key = words[0].decode()
        value = " ".join(w.decode() for w in words[1:])
        pairs.append((key, value))
    return pairs
