"""Reply values returned by command handlers.

Handlers never produce bytes on the wire themselves: they return plain Python values and
these few wrappers, and ``protocol.encoder`` renders them as RESP2 or RESP3 for the client.
The mapping is deliberately small so that the RESP2/RESP3 split lives in one place:

==================  =========================  ==========================
value               RESP2                      RESP3
==================  =========================  ==========================
``bytes``/``str``   bulk string                bulk string
``int``             integer                    integer
``float``           bulk string (repr)         double ``,``
``None``            null bulk ``$-1``          null ``_``
``list``/``tuple``  array                      array
``NULL_ARRAY``      null array ``*-1``         null ``_``
``Simple``          ``+...``                   ``+...``
``Map``             flat array                 map ``%``
``SetReply``        array                      set ``~``
``Verbatim``        bulk string                verbatim ``=``
``Push``            array                      push ``>``
``Replies``         each item in turn          each item in turn
``Raw``             pre-encoded bytes          pre-encoded bytes
``ErrorReply``      ``-...``                   ``-...``
==================  =========================  ==========================
"""

from __future__ import annotations


class Simple:
    """A simple string (``+OK``)."""

    __slots__ = ("text",)

    def __init__(self, text: bytes | str):
        self.text = text.encode() if isinstance(text, str) else text

    def __eq__(self, other):
        return isinstance(other, Simple) and other.text == self.text

    def __repr__(self):
        return f"Simple({self.text!r})"


class Map:
    """An ordered map; ``items`` is a list of (key, value) pairs (or a dict)."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = list(items.items()) if isinstance(items, dict) else items

    def __repr__(self):
        return f"Map({self.items!r})"


class Entries:
    """Stream entries, the body of every stream read, encoded as an array of ``[id, [field,
    value, ...]]`` (the same in RESP2 and RESP3) without per-element dispatch.

    ``items`` holds pairs and runs, in reply order. A pair is ``(id, fields)``: ``id`` bytes,
    ``fields`` a flat list of bytes or another reply value (a null for an entry deleted
    since delivery). A run is ``(ms, seq, names, values)``: consecutive entries with IDs
    ``ms[i]-seq[i]`` and the field names ``names``, ``len(names)`` values per entry in the
    flat ``values``. A span ``(ms, seq, names, data, offs, j, stop, reverse, node)`` is the
    entries ``j .. stop-1`` of those arrays (newest first if ``reverse``), entry k's i-th
    value being ``data[offs[v - 1]:offs[v]]`` for ``v = k * len(names) + i`` (0 where v - 1 <
    0); the arrays must not change before the reply is encoded, except by appends, and a
    slot index names the same entry for as long as ``node`` lives. ``node.memo`` belongs to
    the encoder: it caches a node's encoded entries there while ``data`` is bytes (the
    store resets it to 0 when it adds slots). ``count`` is the number of entries."""

    __slots__ = ("items", "count")

    def __init__(self, items: list, count: int | None = None):
        self.items = items
        self.count = len(items) if count is None else count

    def __len__(self) -> int:
        return self.count

    def __repr__(self):
        return f"Entries({self.items!r})"


class SetReply:
    """A set: an array in RESP2, ``~`` in RESP3."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items


class Verbatim:
    """Verbatim text (INFO, CLIENT LIST): a bulk string in RESP2, ``=`` in RESP3."""

    __slots__ = ("text", "fmt")

    def __init__(self, text: bytes | str, fmt: bytes = b"txt"):
        self.text = text.encode() if isinstance(text, str) else text
        self.fmt = fmt


class Push:
    """An out-of-band push message: an array in RESP2, ``>`` in RESP3."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items


class Replies:
    """Several replies in a row for one command (SUBSCRIBE confirms each channel)."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items


def is_push(reply) -> bool:
    """(P|S)(UN)SUBSCRIBE's confirmations: pushes, which CLIENT REPLY OFF|SKIP lets through
    (since Redis 7.2, and in 7.0.15), inside EXEC too."""
    return type(reply) is Replies and all(type(r) is Push for r in reply.items)


class Raw:
    """Bytes already encoded as RESP, identical in both protocol versions."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data


# A command that answers nothing at all (CLIENT REPLY OFF, a second MONITOR, SHUTDOWN).
NO_REPLY = Raw(b"")


class ErrorReply:
    """An error line; ``text`` carries its code (``ERR ...``, ``WRONGTYPE ...``)."""

    __slots__ = ("text",)

    def __init__(self, text: str | bytes):
        self.text = text if isinstance(text, str) else text.decode("utf-8", "replace")

    def __repr__(self):
        return f"ErrorReply({self.text!r})"


class _NullArray:
    __slots__ = ()

    def __repr__(self):
        return "NULL_ARRAY"


NULL_ARRAY = _NullArray()
OK = Simple(b"OK")
QUEUED = Simple(b"QUEUED")
PONG = Simple(b"PONG")
