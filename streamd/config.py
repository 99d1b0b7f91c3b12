"""Server configuration, named after redis.conf keys.

One ``Param`` per key: default, parser/validator, formatter for CONFIG GET, and whether
CONFIG SET may change it at run time. The command line, the config file, CONFIG GET/SET and
CONFIG REWRITE all go through this table.
"""

from __future__ import annotations

import errno
import math
import os
import re
from dataclasses import dataclass
from typing import Callable

from .protocol.encoder import quoted
from .store.keyspace import ALL_EVENT_CLASSES, EVENT_CHANNELS, EVENT_LETTERS


class ConfigError(ValueError):
    """An invalid value; the message is Redis's reason text."""


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": 1024**2,
          "g": 1000**3, "gb": 1024**3}


_U64 = 2**64


def _memory(text: str) -> int:
    """A memory value as Redis's memtoull reads it: ASCII digits, then a unit or nothing.
    No sign and no spaces; a bare unit (or nothing at all) is 0, as strtoull reads "".
    The result is unsigned 64-bit arithmetic: too many digits saturate, the unit's product
    wraps (callers with a signed range see values past LLONG_MAX as negative)."""
    digits = len(text) - len(text.lstrip("0123456789"))
    unit = text[digits:].lower()
    if unit not in _UNITS or digits >= 128:  # memtoull copies the digits to a 128-byte buffer
        raise ConfigError("argument must be a memory value")
    return min(int(text[:digits] or 0), _U64 - 1) * _UNITS[unit] % _U64


def _strict_int(text: str) -> int:
    """A signed 64-bit decimal as Redis's string2ll reads it: no sign but '-', no spaces,
    no leading zeros (so no "-0"), nothing past LLONG_MAX."""
    body = text[1:] if text[:1] == "-" else text
    if not (body.isascii() and body.isdigit()) or (body[0] == "0" and text != "0"):
        raise ConfigError("argument couldn't be parsed into an integer")
    value = int(text)
    if not -2**63 <= value < 2**63:
        raise ConfigError("argument couldn't be parsed into an integer")
    return value


def _int_range(lo: int, hi: int, memory: bool = False, clamp: tuple | None = None):
    """Redis's numeric configs: parse, check [lo, hi], then (for hz) clamp silently."""
    def parse(text: str) -> int:
        if memory:
            value = _memory(text)
            if hi < 2**63 and value >= 2**63:  # a signed config reads the bits as negative
                value -= _U64
        else:
            value = _strict_int(text)
        if not lo <= value <= hi:
            raise ConfigError(f"argument must be between {lo} and {hi} inclusive")
        if clamp is not None:
            value = min(max(value, clamp[0]), clamp[1])
        return value
    parse.memory = memory  # CONFIG REWRITE writes these in kb/mb/gb when they divide
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


def _strtoll_whole(text: str) -> int | None:
    """C's strtoll where the whole token must be read (``save``, the soft seconds of
    ``client-output-buffer-limit``): leading blanks and a sign allowed, saturating at the
    64-bit bounds, an empty token reading as 0; None if anything is left unread (blanks
    alone included: strtoll then reads nothing)."""
    if not text:
        return 0
    t = text.lstrip(" \t\n\v\f\r")
    body = t[1:] if t[:1] in "+-" else t
    if not (body.isascii() and body.isdigit()):
        return None
    return min(max(int(t), -2**63), 2**63 - 1)


def _save(text: str) -> str:
    """``save`` as Redis 7.0's CONFIG SET takes it: pairs split on single spaces, seconds
    >= 1 and changes >= 0, read by strtoll; the changes count is a C int, so it wraps.
    Kept as CONFIG GET shows it, ``"3600 1 300 100"``."""
    words = text.split(" ") if text else []
    if len(words) % 2:
        raise ConfigError("Invalid save parameters")
    numbers = [_strtoll_whole(w) for w in words]
    if None in numbers or any(n < 1 for n in numbers[::2]) or any(
            n < 0 for n in numbers[1::2]):
        raise ConfigError("Invalid save parameters")
    return " ".join(f"{secs} {(changes + 2**31) % 2**32 - 2**31}"
                    for secs, changes in zip(numbers[::2], numbers[1::2]))


# The letters the setting takes besides 'A' (which stands for ALL_EVENT_CLASSES): every
# event class, and the channel kinds (K, E, and 8.8's subkey channels S, T, I, V).
_EVENT_FLAGS = set(EVENT_LETTERS) | set(EVENT_CHANNELS)


class EventFlags(str):
    """``notify-keyspace-events`` as CONFIG GET shows it, with every letter it enables in
    ``letters``: Redis's spelling drops ``n``, ``o`` and ``c`` after ``A`` ("KEAn" reads
    back as "AKE"), yet those events stay on."""

    letters: str = ""


def _keyspace_events(text: str) -> str:
    """``notify-keyspace-events``, kept in Redis's canonical spelling: "A" or the classes
    in a fixed order, then K, E, m, S, T, I and V ("KEA" reads back as "AKE")."""
    flags = set()
    for c in text:
        if c == "A":
            flags.update(ALL_EVENT_CLASSES)
        elif c in _EVENT_FLAGS:
            flags.add(c)
        else:
            raise ConfigError("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
    if flags >= set(ALL_EVENT_CLASSES):
        head = "A"
    else:
        head = "".join(c for c in ALL_EVENT_CLASSES + "noc" if c in flags)
    value = EventFlags(head + "".join(c for c in "KEmSTIV" if c in flags))
    value.letters = "".join(sorted(flags))
    return value


# Client classes of client-output-buffer-limit, in CONFIG GET order, with their defaults:
# (hard bytes, soft bytes, soft seconds).
_OBUF_CLASSES = ("normal", "slave", "pubsub")
_OBUF_DEFAULTS = {"normal": (0, 0, 0), "slave": (256 * 1024**2, 64 * 1024**2, 60),
                  "pubsub": (32 * 1024**2, 8 * 1024**2, 60)}
_OBUF_CLASS_NAMES = {"normal": "normal", "slave": "slave", "replica": "slave",
                     "pubsub": "pubsub"}


class OutputBufferLimits(str):
    """``client-output-buffer-limit`` as CONFIG GET shows it; ``limits`` maps each class
    to its (hard, soft, soft seconds)."""

    limits: dict = {}


def _obuf_text(limits: dict) -> OutputBufferLimits:
    value = OutputBufferLimits(" ".join(f"{c} {h} {s} {t}" for c in _OBUF_CLASSES
                                        for h, s, t in (limits[c],)))
    value.limits = limits
    return value




def _output_buffer_limits(text: str, current: OutputBufferLimits | None = None):
    """``client-output-buffer-limit``: groups of ``<class> <hard> <soft> <soft seconds>``
    split on single spaces, each class replacing its own limits (the others keep theirs).
    Checked as a whole before any is applied, with Redis 7.0's reasons. The seconds are a
    C int: strtoll's value truncated to 32 bits, refused when that is negative."""
    words = text.split(" ") if text else []
    if len(words) % 4:
        raise ConfigError("Wrong number of arguments in buffer limit configuration.")
    limits = dict(current.limits if current is not None else _OBUF_DEFAULTS)
    for i in range(0, len(words), 4):
        name = _OBUF_CLASS_NAMES.get(words[i].lower())
        if name is None:
            raise ConfigError("Invalid client class specified in buffer limit configuration.")
        try:
            hard, soft = _memory(words[i + 1]), _memory(words[i + 2])
        except ConfigError:
            hard = None
        seconds = _strtoll_whole(words[i + 3])
        if seconds is not None:
            seconds = (seconds + 2**31) % 2**32 - 2**31
        if hard is None or seconds is None or seconds < 0:
            raise ConfigError("Error in hard, soft or soft_seconds setting in "
                              "buffer limit configuration.")
        limits[name] = (hard, soft, seconds)
    return _obuf_text(limits)


_output_buffer_limits.merges = True  # a value updates the current one (Config.set)


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?")
_INFINITY = re.compile(r"[+-]?(?:inf|infinity)", re.IGNORECASE)


def _string2d(text: str) -> float:
    """A double as Redis's string2d reads it (strtod over the whole text): decimal or
    hexadecimal, or infinity; not NaN, nothing that overflows or underflows to zero."""
    if _INFINITY.fullmatch(text):
        return float(text)
    if _DECIMAL.fullmatch(text):
        value = float(text)
        mantissa = re.split("[eE]", text)[0]
    elif _HEX.fullmatch(text):
        sign = -1.0 if text[0] == "-" else 1.0
        body = text.lstrip("+-")
        if "p" not in body.lower():
            body += "p0"
        try:
            value = sign * float.fromhex(body)
        except OverflowError:
            value = math.inf
        mantissa = re.split("[pP]", body)[0][2:]
    else:
        raise ValueError(text)
    if math.isinf(value) or (value == 0 and mantissa.strip("0.+-")):
        raise ValueError(text)  # ERANGE
    return value


def percentile_text(p: float) -> str:
    """A percentile as Redis prints it: "%f" without its trailing zeros (99.9, 50)."""
    text = "%f" % p
    return text.rstrip("0").rstrip(".") if "." in text else text


class Percentiles(tuple):
    """latency-tracking-info-percentiles: CONFIG GET shows each as INFO names it."""

    def __str__(self) -> str:
        return " ".join(percentile_text(p) for p in self)


def _percentiles(text: str) -> Percentiles:
    """Space-separated percentiles (each word one: two spaces make an empty, invalid
    one); "" is none at all."""
    out = []
    for word in text.split(" ") if text else ():
        try:
            p = _string2d(word)
        except ValueError:
            raise ConfigError("Invalid latency-tracking-info-percentiles parameters") from None
        if not 0.0 <= p <= 100.0:
            raise ConfigError("latency-tracking-info-percentiles parameters should sit "
                              "between [0.0,100.0]")
        out.append(p)
    return Percentiles(out)


def _directory(text: str) -> str:
    """``dir``: Redis changes into it, so it must exist; CONFIG GET shows the absolute path."""
    if not os.path.isdir(text):
        raise ConfigError(os.strerror(errno.ENOTDIR if os.path.exists(text) else errno.ENOENT))
    return os.path.abspath(text)


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
    protected: bool = False  # settable at run time only under enable-protected-configs


LLONG_MAX = 2**63 - 1
PARAMS: dict[str, Param] = {}


def _p(name, default, parse, mutable=True, sensitive=False, protected=False):
    PARAMS[name] = Param(name, default, parse, mutable, sensitive, protected)


_UINT_MAX = 2**32 - 1
INT_MAX = 2**31 - 1
_YES, _NO = True, False

_p("port", 6379, _int_range(0, 65535), mutable=False)
_p("bind", "127.0.0.1", _string, mutable=False)
_p("requirepass", "", _string, sensitive=True)
_p("masterauth", "", _string, sensitive=True)
_p("masteruser", "", _string)
_p("databases", 16, _int_range(1, INT_MAX), mutable=False)
_p("loglevel", "notice", _enum("debug", "verbose", "notice", "warning", "nothing"))
_p("logfile", "", _string, mutable=False)
_p("syslog-enabled", _NO, _yesno, mutable=False)
_p("hz", 10, _int_range(0, INT_MAX, clamp=(1, 500)))
_p("dynamic-hz", _YES, _yesno)
# streamd's own: microseconds the loop keeps polling after a read (server/busypoll.py); 0 off
_p("streamd-busy-poll-us", 100, _int_range(0, 1_000_000))
_p("timeout", 0, _int_range(0, INT_MAX))
_p("tcp-keepalive", 300, _int_range(0, INT_MAX))
_p("tcp-backlog", 511, _int_range(0, INT_MAX), mutable=False)
_p("maxclients", 10000, _int_range(1, _UINT_MAX))
_p("maxmemory", 0, _int_range(0, 2**64 - 1, memory=True))
_p("maxmemory-policy", "noeviction", _enum(
    "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
    "allkeys-lfu", "allkeys-random", "noeviction"))
_p("maxmemory-samples", 5, _int_range(1, INT_MAX))
_p("maxmemory-eviction-tenacity", 10, _int_range(0, 100))
_p("lfu-log-factor", 10, _int_range(0, INT_MAX))
_p("lfu-decay-time", 1, _int_range(0, INT_MAX))
_p("proto-max-bulk-len", 512 * 1024 * 1024, _int_range(1024 * 1024, LLONG_MAX, memory=True))
_p("client-query-buffer-limit", 1024**3, _int_range(1024 * 1024, LLONG_MAX, memory=True))
_p("client-output-buffer-limit", _obuf_text(dict(_OBUF_DEFAULTS)), _output_buffer_limits)
_p("stream-node-max-entries", 100, _int_range(0, LLONG_MAX))
_p("stream-node-max-bytes", 4096, _int_range(0, LLONG_MAX, memory=True))
_p("stream-idmp-duration", 100, _int_range(1, 86400))
_p("stream-idmp-maxsize", 100, _int_range(1, 10000))
_p("appendonly", _NO, _yesno)
_p("appendfsync", "everysec", _enum("everysec", "always", "no"))
_p("no-appendfsync-on-rewrite", _NO, _yesno)
_p("auto-aof-rewrite-percentage", 100, _int_range(0, INT_MAX))
_p("auto-aof-rewrite-min-size", 64 * 1024 * 1024, _int_range(0, LLONG_MAX, memory=True))
_p("aof-use-rdb-preamble", _YES, _yesno)
_p("save", "", _save)
_p("stop-writes-on-bgsave-error", _YES, _yesno)
_p("rdbcompression", _YES, _yesno)
_p("rdbchecksum", _YES, _yesno, mutable=False)
# RESTORE checks every payload in full whatever this says (Redis's "yes" level).
_p("sanitize-dump-payload", "no", _enum("no", "yes", "clients"))
_p("dir", ".", _directory, protected=True)
_p("dbfilename", "dump.rdb", _string, protected=True)
_p("appendfilename", "appendonly.aof", _string, mutable=False)
_p("notify-keyspace-events", "", _keyspace_events)
_p("daemonize", _NO, _yesno, mutable=False)
_p("protected-mode", _NO, _yesno)
_p("pidfile", "", _string, mutable=False)
_p("supervised", "no", _enum("upstart", "systemd", "auto", "no"), mutable=False)
_p("io-threads", 1, _int_range(1, 128), mutable=False)
_p("cluster-enabled", _NO, _yesno, mutable=False)
_p("replica-read-only", _YES, _yesno)
_p("replica-serve-stale-data", _YES, _yesno)
_p("replica-priority", 100, _int_range(0, INT_MAX))
_p("replica-lazy-flush", _NO, _yesno)
_p("repl-backlog-size", 1024 * 1024,
   _int_range(1, LLONG_MAX, memory=True, clamp=(16384, LLONG_MAX)))
_p("min-replicas-to-write", 0, _int_range(0, INT_MAX))
_p("min-replicas-max-lag", 10, _int_range(0, INT_MAX))
_p("lazyfree-lazy-eviction", _NO, _yesno)
_p("lazyfree-lazy-expire", _NO, _yesno)
_p("lazyfree-lazy-server-del", _NO, _yesno)
_p("lazyfree-lazy-user-del", _NO, _yesno)
_p("lazyfree-lazy-user-flush", _NO, _yesno)
_p("activerehashing", _YES, _yesno)
_p("busy-reply-threshold", 5000, _int_range(0, LLONG_MAX))
_p("slowlog-log-slower-than", 10000, _int_range(-1, LLONG_MAX))
_p("slowlog-max-len", 128, _int_range(0, LLONG_MAX))
_p("latency-tracking", _YES, _yesno)
_p("latency-monitor-threshold", 0, _int_range(0, LLONG_MAX))
_p("latency-tracking-info-percentiles", _percentiles("50 99 99.9"), _percentiles)
_p("acllog-max-len", 128, _int_range(0, LLONG_MAX))
_p("tracking-table-max-keys", 1000000, _int_range(0, LLONG_MAX))
_p("list-max-listpack-size", -2, _int_range(-2**31, INT_MAX))
_p("list-compress-depth", 0, _int_range(0, INT_MAX))
_p("hash-max-listpack-entries", 512, _int_range(0, LLONG_MAX))
_p("hash-max-listpack-value", 64, _int_range(0, LLONG_MAX, memory=True))
_p("set-max-intset-entries", 512, _int_range(0, LLONG_MAX))
_p("zset-max-listpack-entries", 128, _int_range(0, LLONG_MAX))
_p("zset-max-listpack-value", 64, _int_range(0, LLONG_MAX, memory=True))
_p("hll-sparse-max-bytes", 3000, _int_range(0, LLONG_MAX, memory=True))
_p("active-expire-effort", 1, _int_range(1, 10))
_p("crash-log-enabled", _YES, _yesno)
_p("crash-memcheck-enabled", _YES, _yesno)
_p("always-show-logo", _NO, _yesno, mutable=False)
_p("enable-protected-configs", "no", _enum("no", "yes", "local"), mutable=False)
_p("enable-debug-command", "no", _enum("no", "yes", "local"), mutable=False)
_p("enable-module-command", "no", _enum("no", "yes", "local"), mutable=False)

# redis.conf spells some keys differently from CONFIG GET.
ALIASES = {"hash-max-ziplist-entries": "hash-max-listpack-entries",
           "hash-max-ziplist-value": "hash-max-listpack-value",
           "list-max-ziplist-size": "list-max-listpack-size",
           "lua-time-limit": "busy-reply-threshold",
           "zset-max-ziplist-entries": "zset-max-listpack-entries",
           "zset-max-ziplist-value": "zset-max-listpack-value",
           "slave-read-only": "replica-read-only",
           "slave-serve-stale-data": "replica-serve-stale-data",
           "slave-priority": "replica-priority",
           "slave-lazy-flush": "replica-lazy-flush",
           "min-slaves-to-write": "min-replicas-to-write",
           "min-slaves-max-lag": "min-replicas-max-lag"}


# Lines Redis 7.0 still reads from a config file but ignores (keys of removed settings).
_DEPRECATED = ("list-max-ziplist-entries", "list-max-ziplist-value", "lua-replicate-commands")
REWRITE_SIGNATURE = "# Generated by CONFIG REWRITE"


def canonical(name: str) -> str | None:
    """The parameter a name (any case, or an old alias) stands for; None if unknown."""
    name = name.lower()
    name = ALIASES.get(name, name)
    return name if name in PARAMS else None


class ConfigFileError(Exception):
    """A fatal error while reading configuration text, where Redis reports it."""

    def __init__(self, message: str, lineno: int | None = None, line: str = ""):
        super().__init__(message)
        self.message, self.lineno, self.line = message, lineno, line


def read_config_file(path: str) -> str:
    """A config file's text; Redis's fatal error when it cannot be opened."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read()
    except OSError as exc:
        raise ConfigFileError(f"Fatal error, can't open config file '{path}': "
                              f"{exc.strerror}") from None


class Config:
    """The running configuration: typed values keyed by redis.conf name."""

    def __init__(self, **overrides):
        self.values = {name: p.default for name, p in PARAMS.items()}
        self.values["dir"] = os.getcwd()
        self.file: str | None = None  # config file path, for CONFIG REWRITE
        for name, value in overrides.items():
            self.set(name.replace("_", "-"), str(value), startup=True)

    def __getitem__(self, name: str):
        return self.values[name]

    def get(self, name: str, default=None):
        return self.values.get(name, default)

    def set(self, name: str, text: str, startup: bool = False) -> None:
        """Validate and apply; raises KeyError (unknown/immutable) or ConfigError."""
        param = PARAMS.get(canonical(name) or "")
        if param is None:
            raise KeyError(name)
        if not startup and not param.mutable:
            raise ConfigError("can't set immutable config")
        if getattr(param.parse, "merges", False):
            self.values[param.name] = param.parse(text, self.values[param.name])
        else:
            self.values[param.name] = param.parse(text)

    def names(self):
        """Every name CONFIG GET can report: the parameters, then their old aliases."""
        yield from PARAMS
        yield from ALIASES

    def lookup(self, name: str) -> str | None:
        """The value of a parameter named by itself or an alias (any case), as text."""
        name = canonical(name)
        return _fmt(self.values[name]) if name else None

    # --- config files ----------------------------------------------------------------

    def load_text(self, text: str) -> None:
        """Apply redis.conf text as Redis does: one directive a line, trimmed; ``#``
        comments; quoted words; ``include`` of further files; several ``save`` lines add up.
        Raises ConfigFileError naming the line, Redis's wording."""
        from .protocol.reader import split_args

        saves: list[str] | None = None
        for lineno, raw in enumerate(text.split("\n"), 1):
            line = raw.strip(" \t\r\n")
            if not line or line.startswith("#"):
                continue
            words = split_args(line.encode())
            if words is None:
                raise ConfigFileError("Unbalanced quotes in configuration line", lineno, line)
            if not words:
                continue
            args = [w.decode("utf-8", "surrogateescape") for w in words]
            name = canonical(args[0])
            try:
                if name == "save":
                    parts = args[1:]
                    if len(parts) == 1 and parts[0]:
                        parts = [w.decode("utf-8", "surrogateescape")
                                 for w in split_args(parts[0].encode()) or []]
                    value = _save(" ".join(parts))
                    saves = [] if saves is None or not value else saves
                    saves += [value] if value else []
                    self.values["save"] = " ".join(saves)
                elif name == "client-output-buffer-limit":
                    # Several words, like a CONFIG SET value; each line updates its classes.
                    self.set(name, " ".join(args[1:]), startup=True)
                elif name == "latency-tracking-info-percentiles":
                    self.set(name, " ".join(args[1:]), startup=True)  # one word each
                elif name is not None:
                    if len(args) != 2:
                        raise ConfigError("wrong number of arguments")
                    self.set(name, args[1], startup=True)
                elif args[0].lower() in _DEPRECATED and len(args) == 2:
                    pass
                elif args[0].lower() == "include" and len(args) == 2:
                    self.load_file(args[1])
                else:
                    raise ConfigError("Bad directive or wrong number of arguments")
            except ConfigError as exc:
                raise ConfigFileError(str(exc), lineno, line) from None

    def load_file(self, path: str) -> None:
        """Load one config file, or every file a glob pattern names (``include``)."""
        import glob

        if any(c in path for c in "*?["):
            matches = sorted(glob.glob(path))
            for match in matches:
                self.load_file(match)
            return
        self.load_text(read_config_file(path))

    def rewrite(self) -> None:
        """CONFIG REWRITE as Redis 7.0 does it: the file's lines are kept (trimmed), each
        setting's first line is replaced with its current value and its other lines
        dropped; settings not in the file yet are appended when not at their default,
        under a signature line; runs of blank lines shrink to one."""
        from .protocol.reader import split_args

        if not self.file:
            raise ConfigError("The server is running without a config file")
        try:
            with open(self.file, encoding="utf-8", errors="surrogateescape") as fh:
                text = fh.read()
        except FileNotFoundError:
            text = ""
        lines = [raw.strip(" \t\r\n") for raw in text.split("\n")] if text else []
        at: dict[str, list[int]] = {}
        signed = False
        for i, line in enumerate(lines):
            if not line or line.startswith("#"):
                signed = signed or line == REWRITE_SIGNATURE
                continue
            words = split_args(line.encode())
            if words:
                name = words[0].decode("utf-8", "surrogateescape").lower()
                at.setdefault(canonical(name) or name, []).append(i)
        for name, param in PARAMS.items():
            value = self.values[name]
            new, force = _rewrite_lines(name, value, param)
            old = at.pop(name, [])
            for n, line in enumerate(new):
                if old:
                    lines[old.pop(0)] = line
                elif force[n] if isinstance(force, list) else force:
                    if not signed:
                        lines.append(REWRITE_SIGNATURE)
                        signed = True
                    lines.append(line)
            for i in old:
                lines[i] = ""
        out = []
        for line in lines:
            if line or not out or out[-1]:
                out.append(line)
        tmp = f"{self.file}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write("".join(line + "\n" for line in out))
        os.replace(tmp, self.file)


_GB, _MB, _KB = 1024**3, 1024**2, 1024


def _rewrite_lines(name: str, value, param: Param) -> tuple[list[str], bool]:
    """The lines CONFIG REWRITE writes for a setting, and whether they are written even
    where the file had none (a value off its default; ``save`` and ``dir`` always)."""
    if name == "save":
        pairs = value.split()
        return ([f"save {a} {b}" for a, b in zip(pairs[::2], pairs[1::2])]
                or ['save ""']), True
    if name == "client-output-buffer-limit":
        # One line per class, written where it is off its default (Redis names the
        # replica class "replica" here, "slave" in CONFIG GET).
        out, forced = [], []
        for cls in _OBUF_CLASSES:
            hard, soft, seconds = value.limits[cls]
            out.append(f"{name} {'replica' if cls == 'slave' else cls} "
                       f"{_memory_text(hard)} {_memory_text(soft)} {seconds}")
            forced.append(value.limits[cls] != _OBUF_DEFAULTS[cls])
        return out, forced
    if name == "latency-tracking-info-percentiles":
        # Redis always writes it, "" for none (so the defaults do not come back).
        return [f"{name} {_fmt(value) or chr(34) * 2}"], True
    force = value != param.default or name == "dir"
    if param.parse is _string or param.parse is _directory or name == "notify-keyspace-events":
        if param.sensitive and not value:
            return [], False  # an empty password leaves no line at all
        return [f"{name} {_repr(value)}"], force
    if getattr(param.parse, "memory", False):
        return [f"{name} {_memory_text(value)}"], force
    return [f"{name} {_fmt(value)}"], force


def _memory_text(value: int) -> str:
    """A byte count as CONFIG REWRITE writes it: in gb, mb or kb when one divides it."""
    if value:
        for unit, size in (("gb", _GB), ("mb", _MB), ("kb", _KB)):
            if value % size == 0:
                return f"{value // size}{unit}"
    return str(value)


def _repr(text: str) -> str:
    """sdscatrepr of a string option's value, for CONFIG REWRITE."""
    return quoted(text.encode("utf-8", "surrogateescape")).decode("latin-1")
