"""Redis's exact error texts, in one catalogue.

A handler signals an error by raising ``CommandError(TEXT)``; the text carries its code
(``ERR``, ``WRONGTYPE``, ``NOGROUP`` ...) exactly as Redis sends it, without the leading ``-``.
"""

from __future__ import annotations


class CommandError(Exception):
    """An error reply. ``str(exc)`` is the wire text without the leading ``-``."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    @property
    def code(self) -> str:
        return self.text.split(" ", 1)[0]


# Generic
SYNTAX = "ERR syntax error"
NOT_INTEGER = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NO_SUCH_KEY = "ERR no such key"
OVERFLOW = "ERR increment or decrement would overflow"
INCR_FLOAT_NAN = "ERR increment would produce NaN or Infinity"
DB_INDEX = "ERR DB index is out of range"
INVALID_EXPIRE = "ERR invalid expire time in '{}' command"
TIMEOUT_NOT_INT = "ERR timeout is not an integer or out of range"
TIMEOUT_NEGATIVE = "ERR timeout is negative"
TIMEOUT_RANGE = "ERR timeout is out of range"
NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
AUTH_NOT_CONFIGURED = (
    "ERR AUTH <password> called without any password configured for the default user. "
    "Are you sure your configuration is correct?"
)
NOPROTO = "NOPROTO unsupported protocol version"
PROTO_NOT_INT = "ERR Protocol version is not an integer or out of range"
MULTI_NESTED = "ERR MULTI calls can not be nested"
EXEC_WITHOUT_MULTI = "ERR EXEC without MULTI"
DISCARD_WITHOUT_MULTI = "ERR DISCARD without MULTI"
WATCH_IN_MULTI = "ERR WATCH inside MULTI is not allowed"
EXECABORT = "EXECABORT Transaction discarded because of previous errors."
UNBLOCKED = "UNBLOCKED client unblocked via CLIENT UNBLOCK"


def wrong_arity(name: str) -> str:
    """``name`` is the lower-case command, or ``container|sub`` for subcommands."""
    return f"ERR wrong number of arguments for '{name}' command"


def unknown_command(name: str, args: list[bytes]) -> str:
    shown = "".join(f"'{_show(a)}' " for a in args[:20])
    return f"ERR unknown command '{_show(name)}', with args beginning with: {shown}"


def unknown_subcommand(sub: bytes | str, container: str) -> str:
    return f"ERR unknown subcommand '{_show(sub)}'. Try {container.upper()} HELP."


def unknown_subcommand_or_arity(sub: bytes | str, container: str) -> str:
    return (
        f"ERR unknown subcommand or wrong number of arguments for '{_show(sub)}'. "
        f"Try {container.upper()} HELP."
    )


def _show(value: bytes | str, limit: int = 128) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    # Redis sanitises the echoed argument so the error stays one line.
    value = value[:limit]
    return "".join(ch if ch.isprintable() else " " for ch in value)
