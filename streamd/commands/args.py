"""Argument parsing shared by every command family: Redis's strict number parsers and a
small cursor over argv."""

from __future__ import annotations

import math
import re

from . import errors as E
from .errors import CommandError

LLONG_MIN = -(2**63)
LLONG_MAX = 2**63 - 1


# The counts, timeouts and limits clients send most (COUNT 10, BLOCK 0, EX 60, -1 ...),
# already parsed: one dict lookup instead of the checks below.
_SMALL_INTS = {b"%d" % i: i for i in range(-1, 1025)}


_ATOI = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def atoi(text: bytes) -> int:
    """C's atoi as glibc has it: strtol's value (saturated to 64 bits) cut to an int.
    Where Redis reads an argument with atoi, junk reads as 0 and "12x" as 12."""
    m = _ATOI.match(text)
    if m is None:
        return 0
    value = min(max(int(m.group(1)), LLONG_MIN), LLONG_MAX)
    return (value + 2**31) % 2**32 - 2**31


def parse_int(arg: bytes, error: str = E.NOT_INTEGER) -> int:
    """Redis string2ll: optional '-', digits, no '+', no leading zeros, no spaces, int64."""
    try:
        value = _SMALL_INTS.get(arg)
    except TypeError:  # a mutable buffer: the checks below take it as it is
        value = None
    if value is not None:
        return value
    if 0 < len(arg) <= 20:
        body = arg[1:] if arg[:1] == b"-" else arg
        if body.isdigit() and (body[:1] != b"0" or len(body) == 1) and arg != b"-0":
            value = int(arg)
            if LLONG_MIN <= value <= LLONG_MAX:
                return value
    raise CommandError(error)


def parse_int_in(arg: bytes, low: int, high: int, error: str = E.NOT_INTEGER,
                 range_error: str | None = None) -> int:
    """Redis getRangeLongFromObjectOrReply: ``parse_int``, then ``low <= value <= high``;
    ``range_error`` for a value out of range (by default the same ``error``, as Redis
    answers when the caller gives its own message)."""
    value = parse_int(arg, error)
    if not low <= value <= high:
        raise CommandError(range_error or error)
    return value


def parse_float(arg: bytes, error: str = E.NOT_FLOAT) -> float:
    """Redis string2ld/strtold: no spaces, no NaN; 'inf' and '-inf' accepted."""
    text = arg.decode("ascii", "replace")
    if not text or text != text.strip() or text.lower() in ("nan", "-nan", "+nan"):
        raise CommandError(error)
    try:
        value = float(text)
    except ValueError:
        raise CommandError(error) from None
    if math.isnan(value):
        raise CommandError(error)
    return value


def parse_timeout_ms(arg: bytes, now: int, unit_ms: int = 1) -> int:
    """BLOCK-style timeout in milliseconds (0 = forever)."""
    try:
        value = parse_int(arg)
    except CommandError:
        raise CommandError(E.TIMEOUT_NOT_INT) from None
    if value < 0:
        raise CommandError(E.TIMEOUT_NEGATIVE)
    value *= unit_ms
    if value > 0 and now + value > LLONG_MAX:
        raise CommandError(E.TIMEOUT_RANGE)
    return value


def lower(arg: bytes) -> bytes:
    return arg.lower()


class Args:
    """A cursor over argv: ``next()``, ``next_int()``, ``peek_is(b'WORD')``, ``done``."""

    __slots__ = ("argv", "pos")

    def __init__(self, argv: list[bytes], pos: int = 1):
        self.argv = argv
        self.pos = pos

    @property
    def done(self) -> bool:
        return self.pos >= len(self.argv)

    @property
    def remaining(self) -> int:
        return len(self.argv) - self.pos

    def peek(self) -> bytes | None:
        return self.argv[self.pos] if self.pos < len(self.argv) else None

    def peek_upper(self) -> bytes:
        return self.argv[self.pos].upper() if self.pos < len(self.argv) else b""

    def next(self, error: str = E.SYNTAX) -> bytes:
        if self.pos >= len(self.argv):
            raise CommandError(error)
        self.pos += 1
        return self.argv[self.pos - 1]

    def next_int(self, error: str = E.NOT_INTEGER, missing: str = E.SYNTAX) -> int:
        return parse_int(self.next(missing), error)

    def rest(self) -> list[bytes]:
        out = self.argv[self.pos:]
        self.pos = len(self.argv)
        return out
