"""Request parsing: hiredis for multibulk requests, an exact pure-Python parser otherwise.

hiredis is the fast path. It does not understand inline commands (``PING\\r\\n``) and its
errors are not Redis's, so whenever it rejects input, or yields something a request may not
contain, the unparsed bytes are handed to ``_PyParser``, which follows Redis's
``processInlineBuffer`` / ``processMultibulkBuffer`` and raises ``ProtocolError`` with
Redis's exact text. A request split at any byte boundary parses the same as one write.

The bytes hiredis consumed are accounted for by the requests' canonical sizes; hiredis
refuses non-canonical lengths, so the sizes are exact unless an element is a simple string,
big number or verbatim string, which hiredis returns as plain bytes too. Those start with
'+', '(' or '='; a read holding none of these bytes is accounted for by the sizes alone,
any other read is checked byte by byte where each request and argument must begin.
"""

from __future__ import annotations

import re
from itertools import chain

import hiredis

INLINE_MAX = 64 * 1024  # PROTO_INLINE_MAX_SIZE
MULTIBULK_MAX = 2**31 - 1  # INT_MAX, as Redis checks it
# hiredis allocates a request's whole argument list when it reads the '*N' header, and
# freeing it walks every slot: '*2000000000' costs seconds of CPU when the client goes away.
# Requests with a count from BIG_COUNT on (and anything that looks like such a header,
# even inside an argument) are parsed here instead, element by element as data arrives.
BIG_COUNT = 1_000_000
_BIG_STAR = re.compile(rb"\*\+?[0-9]{7}").search
# hiredis allocates the same way for a set ('~'), push ('>') or attribute ('|') header,
# which a request can only hold nested. A search for one literal first byte scans about
# five times faster than for a class of them, and these bytes are rare in requests (but
# for XADD's and XTRIM's '~'), so each has its own search, run only when the byte is there.
_BIG_OTHER = tuple((ord(c), re.compile(re.escape(c.encode()) + rb"\+?[0-9]{7}").search)
                   for c in "~>|")


def _big_other(data: bytes) -> bool:
    """Whether ``data`` holds a '~', '>' or '|' followed by a count of 7+ digits."""
    for byte, search in _BIG_OTHER:
        if data.find(byte) >= 0 and search(data) is not None:
            return True
    return False


def _big_header(data: bytes) -> bool:
    """Whether ``data`` holds what hiredis could read as the header of an aggregate of
    BIG_COUNT or more elements (or bytes that only look like one, inside an argument)."""
    return _BIG_STAR(data) is not None or _big_other(data)


# What a client that has not authenticated may send in one multibulk request (Redis checks
# both while parsing; inline requests have no such limits).
UNAUTH_MAX_ARGS = 10
UNAUTH_MAX_BULK = 16384


_ONLY_BYTES = frozenset((bytes,))


class ProtocolError(Exception):
    """Malformed request; the message follows ``-ERR Protocol error: ``."""


class QueryBufferFull(ProtocolError):
    """The pending bytes passed client-query-buffer-limit: Redis closes the connection
    without a reply."""


class InlineArgs(list):
    """The argv of an inline request (the unauthenticated limits never apply to it), with
    the bytes of its line (CLIENT LIST's qbuf while it runs)."""

    __slots__ = ("size",)


def unauthenticated_refusal(argv: list) -> str | None:
    """The protocol error Redis raises while parsing ``argv`` for a client that has not
    authenticated, or None. The reader applies the limits itself while the client is not
    authenticated; this serves requests parsed before a command (RESET) took that away."""
    if type(argv) is InlineArgs:
        return None
    if len(argv) > UNAUTH_MAX_ARGS:
        return "unauthenticated multibulk length"
    for a in argv:
        if len(a) > UNAUTH_MAX_BULK:
            return "unauthenticated bulk length"
    return None


_NEED_MORE = object()
# Bytes that start the elements hiredis also returns as bytes but Redis refuses in a
# request: a simple string ('+'), a big number ('(') and a verbatim string ('=').
_PLUS, _PAREN, _EQUALS = 0x2B, 0x28, 0x3D
_SUSPECTS = b"+(="
_SUSPECT_SEARCH = re.compile(rb"[+(=]").search
# Those, or the first bytes of the aggregates hiredis allocates up front besides '*'.
_ODD_SEARCH = re.compile(rb"[+(=~>|]").search


def _header_size(n: int) -> int:
    """Bytes of a canonical multibulk header ('*', n, CRLF)."""
    return 3 + len(b"%d" % n)


def _bulk_size(n: int) -> int:
    """Bytes of a canonical bulk argument of n bytes ('$', n, CRLF, the bytes, CRLF)."""
    return n + 5 + len(b"%d" % n)


# The same sizes, looked up for the common counts and lengths.
_MB_SIZE = [_header_size(n) for n in range(1024)]
_BULK_SIZE = [_bulk_size(n) for n in range(8192)]
_MB_AT, _BULK_AT, _BLEN, _chain = (_MB_SIZE.__getitem__, _BULK_SIZE.__getitem__, bytes.__len__,
                                   chain.from_iterable)


def _encoded_size(argv: list) -> int:
    """Bytes of the canonical multibulk encoding of ``argv``."""
    try:
        return _MB_SIZE[len(argv)] + sum(map(_BULK_SIZE.__getitem__, map(len, argv)))
    except IndexError:
        return _header_size(len(argv)) + sum(map(_bulk_size, map(len, argv)))


def request_size(argv: list) -> int:
    """The bytes ``argv`` took on the wire (CLIENT LIST shows a running request's): an
    inline line's own, a multibulk request's canonical form."""
    if type(argv) is InlineArgs:
        return argv.size
    return _encoded_size(argv)


def _canonical(requests: list, buf) -> bool:
    """Whether ``buf`` starts with ``requests`` in canonical multibulk form: a '*' where each
    request starts and a '$' where each argument starts, at the offsets their sizes give.
    hiredis refuses non-canonical lengths ('$03'), so this proves every element a bulk
    string: one of another type shifts the offsets after it, or sits where a '$' belongs."""
    pos = 0
    mb, bulk = _MB_SIZE, _BULK_SIZE
    try:
        for req in requests:
            if buf[pos] != 0x2A:
                return False
            n = len(req)
            pos += mb[n] if n < 1024 else _header_size(n)
            for arg in req:
                if buf[pos] != 0x24:
                    return False
                n = len(arg)
                pos += bulk[n] if n < 8192 else _bulk_size(n)
    except IndexError:  # the sizes run past the bytes
        return False
    return True


# A bulk header in its usual form: '$', a length without sign or leading zero, CR LF. Its
# line holds no NUL and ends at its first CR, so Redis reads it just as this does.
_BULK_HEAD = re.compile(rb"\$(0|[1-9][0-9]{0,17})\r\n").match


def _strict_ll(s: bytes) -> int | None:
    """Redis string2ll: optional '-', no '+', no leading zeros, no spaces."""
    if not s or len(s) > 20:
        return None
    body = s[1:] if s[:1] == b"-" else s
    if not body.isdigit() or (len(body) > 1 and body[:1] == b"0") or (s[:1] == b"-" and body == b"0"):
        return None
    v = int(s)
    if not -(2**63) <= v < 2**63:
        return None
    return v


_ESCAPES = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b",
            ord("a"): b"\a"}
_HEX = b"0123456789abcdefABCDEF"
_SPACE = b" \n\r\t\v\f"  # C isspace()


def split_args(line: bytes) -> list[bytes] | None:
    """sdssplitargs: words, "double quotes" with escapes, 'single quotes'. None if unbalanced."""
    nul = line.find(0)
    if nul >= 0:
        # sdssplitargs walks a C string: a raw NUL ends the line (inside quotes too, where
        # the quote is then left open)
        line = line[:nul]
    out = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in _SPACE:
            i += 1
        if i >= n:
            return out
        cur = bytearray()
        inq = insq = False
        while True:
            if inq:
                if i >= n:
                    return None
                c = line[i]
                if (c == 0x5C and i + 3 < n and line[i + 1] == 0x78 and line[i + 2] in _HEX
                        and line[i + 3] in _HEX):
                    cur.append(int(line[i + 2:i + 4], 16))
                    i += 3
                elif c == 0x5C and i + 1 < n:
                    i += 1
                    cur += _ESCAPES.get(line[i], bytes([line[i]]))
                elif c == 0x22:
                    # A closing quote must be followed by a space or the end.
                    if i + 1 < n and line[i + 1] not in _SPACE:
                        return None
                    inq = False
                    i += 1
                    break
                else:
                    cur.append(c)
            elif insq:
                if i >= n:
                    return None
                c = line[i]
                if c == 0x5C and i + 1 < n and line[i + 1] == 0x27:
                    i += 1
                    cur.append(0x27)
                elif c == 0x27:
                    if i + 1 < n and line[i + 1] not in _SPACE:
                        return None
                    insq = False
                    i += 1
                    break
                else:
                    cur.append(c)
            else:
                if i >= n:
                    break
                c = line[i]
                if c in b" \n\r\t":
                    break
                if c == 0x22:
                    inq = True
                elif c == 0x27:
                    insq = True
                else:
                    cur.append(c)
            i += 1
        out.append(bytes(cur))


class _Span:
    """Buffered input kept as chunks, read at increasing offsets without joining it (a
    client may be sending a bulk argument of hundreds of megabytes)."""

    __slots__ = ("chunks", "start", "index", "base")

    def __init__(self, chunks: list, start: int):
        self.chunks, self.start = chunks, start
        self.index = self.base = 0  # the chunk the last peek started in, and its offset

    def peek(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` (offsets never go back between calls)."""
        offset += self.start
        chunks = self.chunks
        while self.index < len(chunks) and offset >= self.base + len(chunks[self.index]):
            self.base += len(chunks[self.index])
            self.index += 1
        out = b""
        i, at = self.index, offset - self.base
        while len(out) < size and i < len(chunks):
            out += chunks[i][at:at + size - len(out)]
            i, at = i + 1, 0
        return out


_LINE_PEEK = 32  # enough for any header line Redis accepts ('$' and a 64-bit length)


def partial_request(n: int, peek) -> tuple[int, int]:
    """Split the start of a request, ``n`` bytes that ``peek(offset, size)`` reads, into
    what Redis's query buffer still holds and the bytes of the arguments it already parsed
    out of it. Redis takes a multibulk request apart line by line: the header, then each
    argument once it is whole (its ``$`` line as soon as that is complete); an inline
    request stays whole until its newline."""
    if not n or peek(0, 1) != b"*":
        return n, 0
    end = peek(0, _LINE_PEEK).find(b"\r\n")
    if end < 0:
        return n, 0
    pos, taken = end + 2, 0
    while pos < n:
        line = peek(pos, _LINE_PEEK)
        end = line.find(b"\r\n")
        if line[:1] != b"$" or end < 0:
            break
        try:
            size = int(line[1:end])
        except ValueError:
            break
        if size < 0:
            break
        start = pos + end + 2
        if start + size + 2 > n:
            pos = start  # the length line is consumed; the bytes are still coming
            break
        taken += size
        pos = start + size + 2
    return n - pos, taken


class _PyParser:
    """Exact Redis request parser over a bytes buffer; used for inline and error paths."""

    def __init__(self, limits):
        self.limits = limits
        self.big: list | None = None  # arguments so far of a BIG_COUNT request, if one is open
        self.big_left = 0  # arguments it still needs
        self.need = 0  # where the bulk argument the last parse stopped in ends (else 0)
        # (position after its complete arguments, arguments missing) of the multibulk
        # request the last parse stopped in, else None
        self.resume: tuple[int, int] | None = None

    def parse(self, buf: bytes, pos: int, out: list, limit: int = -1) -> int:
        """Append complete requests from ``buf[pos:]`` to ``out``, at most ``limit`` of them
        if it is not negative; return the new position.

        An open big request consumes its complete arguments even when it stays incomplete,
        so the caller never hands the same bytes over twice."""
        n = len(buf)
        while pos < n and limit:
            if self.big is not None:
                pos = self._big_args(buf, pos, out)
                if self.big is not None:
                    return pos
                limit -= 1  # it completed
                continue
            if buf[pos] == 0x2A:  # '*'
                r = self._multibulk(buf, pos)
            else:
                r = self._inline(buf, pos)
            if r is _NEED_MORE:
                return pos
            argv, pos = r
            if argv:
                out.append(argv)
                limit -= 1
        return pos

    def _inline(self, buf, pos):
        nl = buf.find(b"\n", pos)
        if buf.find(0, pos, nl if nl >= 0 else len(buf)) >= 0:
            # Redis looks for the newline with strchr, which stops at a NUL byte: a line
            # with a raw NUL before its newline never completes, and the buffer grows until
            # it is too big an inline request.
            nl = -1
        if nl < 0:
            if len(buf) - pos > INLINE_MAX:
                raise ProtocolError("too big inline request")
            return _NEED_MORE
        line = buf[pos:nl]
        if line.endswith(b"\r"):
            line = line[:-1]
        argv = split_args(line)
        if argv is None:
            raise ProtocolError("unbalanced quotes in request")
        argv = InlineArgs(argv)
        argv.size = nl + 1 - pos
        return argv, nl + 1

    def _line(self, buf, pos, too_big):
        """Where the header line at ``pos`` ends, or None until it is complete.

        Redis looks for the end with strchr(buf, CR): the first CR ends the line and the
        byte after it is skipped unseen (it need not be LF, but it must have arrived); a NUL
        byte before the CR hides it, so the line never completes."""
        cr = buf.find(b"\r", pos)
        if cr < 0 or buf.find(0, pos, cr) >= 0:
            if len(buf) - pos > INLINE_MAX:
                raise ProtocolError(too_big)
            return None
        return cr if cr + 1 < len(buf) else None

    def _multibulk(self, buf, pos):
        nl = self._line(buf, pos, "too big mbulk count string")
        if nl is None:
            return _NEED_MORE
        count = _strict_ll(buf[pos + 1:nl])
        if count is None or count > MULTIBULK_MAX:
            raise ProtocolError("invalid multibulk length")
        if count > UNAUTH_MAX_ARGS and self.limits.auth_required():
            raise ProtocolError("unauthenticated multibulk length")
        pos = nl + 2
        if count <= 0:
            return [], pos
        if count >= BIG_COUNT:
            self.big, self.big_left = [], count
            return None, pos  # the header is consumed; parse() goes on argument by argument
        argv: list = []
        pos, left = self._args(buf, pos, argv, count)
        if left:
            self.resume = (pos, left)
            return _NEED_MORE
        return argv, pos

    def _args(self, buf, pos: int, argv: list, left: int) -> tuple[int, int]:
        """Append to ``argv`` up to ``left`` complete bulk arguments from ``pos``; returns
        (the position after them, how many are still missing). Raises on a malformed one."""
        limits = self.limits
        max_bulk = limits.proto_max_bulk_len()
        # An argument whose header has the usual form and whose bytes are all there is
        # taken here; any other goes through _bulk, which finds what Redis finds.
        fast_max = min(max_bulk, UNAUTH_MAX_BULK) if limits.auth_required() else max_bulk
        head, n = _BULK_HEAD, len(buf)
        while left:
            m = head(buf, pos)
            if m is not None:
                start = m.end()
                size = int(m.group(1))
                end = start + size + 2
                if size <= fast_max and end <= n:
                    argv.append(bytes(buf[start:end - 2]))
                    pos = end
                    left -= 1
                    continue
            r = self._bulk(buf, pos, max_bulk)
            if r is None:
                break
            start, pos = r
            argv.append(bytes(buf[start:pos - 2]))
            left -= 1
        return pos, left

    def _bulk(self, buf, pos, max_bulk: int) -> tuple[int, int] | None:
        """(start of its data, position after it) of the bulk argument at ``pos``, or None
        if it is not all there yet; raises on a malformed one."""
        if pos >= len(buf):
            return None
        nl = self._line(buf, pos, "too big bulk count string")
        if nl is None:
            return None  # Redis looks at the first byte only once the line is complete
        if buf[pos] != 0x24:  # '$'
            ch = chr(buf[pos])
            raise ProtocolError(f"expected '$', got '{ch}'")
        size = _strict_ll(buf[pos + 1:nl])
        if size is None or size < 0 or size > max_bulk:
            raise ProtocolError("invalid bulk length")
        if size > UNAUTH_MAX_BULK and self.limits.auth_required():
            raise ProtocolError("unauthenticated bulk length")
        start = nl + 2
        if len(buf) < start + size + 2:
            self.need = start + size + 2
            return None
        return start, start + size + 2

    def _big_args(self, buf, pos: int, out: list) -> int:
        pos, self.big_left = self._args(buf, pos, self.big, self.big_left)
        if not self.big_left:
            out.append(self.big)
            self.big = None
        return pos


class RequestReader:
    """Feed bytes, get back complete argv lists.

    ``limits`` supplies ``proto_max_bulk_len()``, ``query_buffer_limit()`` and
    ``auth_required()`` (the client's view of the server config), and ``input_queued()``:
    whether more bytes wait on the connection, so that another feed follows.
    """

    __slots__ = ("_hi", "_chunks", "_fed", "_consumed", "_need", "_resume", "_py", "_limits",
                 "_pybuf", "_gpos", "_gated", "_gate", "held", "_suspect")

    def __init__(self, limits):
        self._limits = limits
        # While gated (the client is not authenticated) each feed returns at most one
        # request: Redis checks every request against the state the one before it left, so
        # the size limits for unauthenticated clients apply only until an AUTH succeeds.
        # ``held`` tells the caller that bytes are left over to feed(b"") again; ``_gate``
        # (gated, or bytes of the gated mode still to hand over) is feed's one check.
        self._gated = self._gate = self.held = False
        self._gpos = 0
        self._hi = hiredis.Reader()
        self._chunks: list[bytes] = []  # data fed since the hiredis buffer was last empty
        self._fed = 0  # bytes in _chunks
        self._consumed = 0  # bytes of _chunks already returned as requests
        # Pending bytes (after _consumed) before which no new header line can complete: the
        # end of the bulk argument the last check stopped in. A request trickling in then
        # costs no re-check per read.
        self._need = 0
        # Where the last check left the request in progress: (offset in the pending bytes
        # after its complete arguments, arguments it still misses), or None. The next check
        # goes on from there instead of re-reading the request from its start.
        self._resume = None
        # Whether _chunks hold a '+', '(' or '=' byte: the requests hiredis completes are
        # then checked byte by byte (``_canonical``) before they are trusted; without one,
        # their sizes alone account for the bytes exactly.
        self._suspect = False
        self._py = _PyParser(limits)
        self._pybuf: bytes | None = None  # pending bytes while in pure-Python mode

    def feed(self, data: bytes) -> list[list[bytes]]:
        """All requests completed by ``data``, in order.

        Raises ``ProtocolError``; its ``requests`` attribute holds the requests that came
        before the bad bytes, which Redis still executes before it replies with the error.
        """
        out: list = []
        try:
            if self._gate:
                return self._feed_gated(data, out)
            return self._feed(data, out)
        except ProtocolError as exc:
            exc.requests = out
            raise

    def set_gated(self, gated: bool) -> None:
        """Whether the client is unauthenticated (see ``__init__``)."""
        self._gated = gated
        self._gate = gated or self.held or self._gpos != 0

    def _feed_gated(self, data: bytes, out: list) -> list[list[bytes]]:
        self.held = False
        if self._chunks:  # hiredis has buffered bytes (authenticated until now)
            data = self._take_from_hiredis() + data
        # The bytes left over are kept whole with the position reached (``_gpos``), so
        # taking a pipeline one request at a time does not copy its tail each time.
        buf, pos = self._pybuf, self._gpos
        if buf is None:
            buf, pos = data, 0
        elif data:
            buf, pos = buf[pos:] + data, 0
        self._pybuf, self._gpos = None, 0
        if not self._gated:  # authenticated meanwhile: the rest goes the usual way
            self._gate = False
            rest = buf[pos:] if pos else buf
            return self._feed(rest, out) if rest else out
        pos = self._py.parse(buf, pos, out, 1)
        if pos < len(buf):
            self._pybuf, self._gpos = buf, pos
            self.held = bool(out)  # a request was taken: more may follow
        return out

    def _feed(self, data: bytes, out: list) -> list[list[bytes]]:
        if self._pybuf is not None:
            return self._feed_py(self._pybuf + data, out)
        chunks = self._chunks
        if not chunks and data[:1] != b"*":
            return self._feed_py(data, out)
        # The rare first bytes that need a closer look: '+', '(' and '=' (``suspect``
        # below), and '~', '>' and '|' (``_big_other``). A short read is searched once for
        # all six; a long one's finds run at memchr speed.
        if len(data) < 128:
            odd = _ODD_SEARCH(data) is not None
            suspect_bytes = odd and _SUSPECT_SEARCH(data) is not None
        else:
            odd = True
            suspect_bytes = (data.find(_PLUS) >= 0 or data.find(_PAREN) >= 0
                             or data.find(_EQUALS) >= 0)
        if (_BIG_STAR(data) is not None or (odd and _big_other(data))
                or (chunks and _big_header(self._tail() + data[:10]))):
            # Before hiredis reads the header (see BIG_COUNT); a header split across reads
            # is still incomplete in hiredis, so nothing was allocated yet.
            chunks.append(data)
            self._fed += len(data)
            return self._fallback(out)
        hi = self._hi
        hi.feed(data)
        start = len(out)
        chunks.append(data)
        suspect = self._suspect or suspect_bytes
        extra = 0  # bytes of '*0' / '*-1', which yield no request
        gets, put, more = hi.gets, out.append, hi.has_data
        try:
            while True:
                req = gets()
                if type(req) is list and req:
                    put(req)
                elif req is False:
                    break
                elif req == []:
                    extra += 4  # '*0\r\n' is skipped, as Redis does
                elif req is None:
                    extra += 5  # '*-1\r\n'
                else:
                    raise ValueError("not a request")
                if not more():
                    # A request just ended on the last byte hiredis holds: the buffer ends
                    # on a request boundary, so no byte accounting is needed (asked after
                    # the last request, not after gets() says False: by then hiredis may
                    # have swallowed a partial request's complete elements).
                    new = out[start:] if start else out
                    # Prove each element a bulk string, not one of the integers, nested
                    # arrays, nulls and errors hiredis also parses (its strict lengths
                    # leave no other way to differ from Redis's parse).
                    if suspect and new:
                        # A '+x', '(1' or '=...' element, which hiredis also gives as bytes.
                        # bytes.join takes only bytes-like objects, and hiredis gives no
                        # other kind: the type check too.
                        args = b"".join(_chain(new))
                        buf = (data if len(chunks) == 1
                               else b"".join(chunks)[self._consumed:])
                        if len(buf) < 64 * len(new) * len(new[0]):
                            # Short arguments: such an element's type byte is in no
                            # argument, and framing holds none of these bytes, so the
                            # requests hold more of them than their arguments exactly when
                            # there is one. Two passes over the bytes, in C.
                            if (len(buf) - len(buf.translate(None, _SUSPECTS))
                                    != len(args) - len(args.translate(None, _SUSPECTS))):
                                raise ValueError("not a request")
                        elif extra or not _canonical(new, buf):
                            # Long ones: checking each argument's offset costs less.
                            raise ValueError("not a request")
                    else:
                        # A plain loop: as fast as a bytes.join of the arguments (1.1 µs
                        # for 16 XADDs), without a copy of the read's arguments to allocate
                        # and free (9 KiB for 16 XADDs of 512 bytes).
                        for one in new:
                            for arg in one:
                                if type(arg) is not bytes:
                                    raise TypeError
                    # _settled(), inline: nearly every read ends here.
                    chunks.clear()
                    self._fed = self._consumed = self._need = 0
                    self._resume = None
                    self._suspect = False
                    return out
            new = out[start:] if start else out
            try:
                # Size the requests and prove each element a bulk string, not one of the
                # integers, nested arrays, nulls and errors hiredis also parses. A lone
                # request (an unpipelined client) takes a plain loop: cheaper than the
                # C-level passes below, which pay off only over many elements.
                if len(new) == 1:
                    req = new[0]
                    consumed = extra + _MB_SIZE[len(req)]
                    for arg in req:
                        if type(arg) is not bytes:
                            raise TypeError
                        consumed += _BULK_SIZE[len(arg)]
                else:
                    # bytes.__len__ raises TypeError for anything but bytes.
                    consumed = extra + sum(map(_MB_AT, map(len, new))) + sum(
                        map(_BULK_AT, map(_BLEN, _chain(new))))
            except IndexError:  # 1024+ arguments or an 8 KiB+ argument
                if not _ONLY_BYTES >= set(map(type, _chain(new))):
                    raise ValueError("not a request") from None
                consumed = extra + sum(map(_encoded_size, new))
        except (hiredis.ProtocolError, ValueError, TypeError):
            # The exact parser re-reads this read from its start and stops at the error,
            # keeping the requests before it (Redis runs those first).
            del out[start:]
            return self._fallback(out)
        if suspect and new and (extra or not _canonical(
                new, data if len(chunks) == 1 else b"".join(chunks)[self._consumed:])):
            # An element that is no bulk string: the exact parser re-reads and reports it.
            del out[start:]
            return self._fallback(out)
        if consumed == len(data) and len(chunks) == 1:
            chunks.clear()  # the read ended on a request boundary: the usual case
            return out
        self._fed += len(data)
        self._suspect = suspect
        pending = self._fed - self._consumed - consumed
        if pending < 0 or (pending and consumed
                           and self._byte_at(self._consumed + consumed) != 0x2A):
            # The count does not match the bytes: hiredis took an element shorter than its
            # bulk form, a simple string ('+x') Redis does not accept in a request (the
            # count then overshoots the read, or lands off the '*' that starts the request
            # still coming). Drop what this read parsed; the exact parser re-reads it and
            # stops at the error.
            del out[start:]
            return self._fallback(out)
        if consumed:
            self._consumed += consumed
            self._need = 0
            self._resume = None
        if pending == 0:
            self._settled()
        elif pending > self._limits.query_buffer_limit():
            # hiredis happily waits for a 3 GB bulk; Redis rejects the header at once.
            raise QueryBufferFull("query buffer limit")
        elif (pending > INLINE_MAX + 8 and not hi.has_data()
              and self._byte_at(self._consumed) != 0x2A):
            # hiredis holds no byte it has not parsed, yet the pending bytes do not start a
            # request: only a non-canonical encoding (e.g. '*02') gets the byte count
            # wrong like this. The accounting is reset.
            self._settled()
        elif self._check_pending(pending):
            return self._fallback(out)
        return out

    def buffered(self, parsed: bool = True) -> tuple[int, int]:
        """(bytes of the incomplete request Redis would still hold in its query buffer,
        bytes of that request's arguments it would already have taken out): CLIENT LIST's
        qbuf and argv-mem between two reads. Not ``parsed``: Redis has not started on it
        (its client is blocked), so all of it is in the query buffer. Only CLIENT LIST and
        CLIENT INFO ask."""
        if self._chunks:
            n, span = self._fed - self._consumed, _Span(self._chunks, self._consumed)
        elif self._pybuf is not None:
            n, span = len(self._pybuf) - self._gpos, _Span([self._pybuf], self._gpos)
        else:
            return 0, 0
        if not parsed:
            return n, 0
        if self._py.big is not None:  # its complete arguments left the buffer already
            return n, sum(map(len, self._py.big))
        return partial_request(n, span.peek)

    def _tail(self) -> bytes:
        """The last (up to) 10 buffered bytes: room for a '*+NNNNNNN' header's start."""
        out = b""
        for chunk in reversed(self._chunks):
            out = chunk[-(10 - len(out)):] + out
            if len(out) >= 10:
                break
        return out

    def _byte_at(self, offset: int) -> int:
        """The byte at ``offset`` in the buffered chunks (-1 past their end)."""
        for chunk in self._chunks:
            if offset < len(chunk):
                return chunk[offset]
            offset -= len(chunk)
        return -1

    def _pending(self, offset: int = 0) -> bytes:
        """The pending bytes (those after ``_consumed``) from ``offset`` on, joining only
        the chunks that hold them."""
        skip = self._consumed + offset
        chunks = self._chunks
        i = 0
        while i < len(chunks) and skip >= len(chunks[i]):
            skip -= len(chunks[i])
            i += 1
        if i == len(chunks):
            return b""
        first = chunks[i][skip:] if skip else chunks[i]
        return first if i + 1 == len(chunks) else first + b"".join(chunks[i + 1:])

    def _check_pending(self, pending: int) -> bool:
        """Check the bytes hiredis holds back as Redis would; True if Redis would run a
        request hiredis still waits on (a header line ended by a bare CR: hiredis wants
        CR LF), which the exact parser must then take. Raises the protocol error Redis
        would answer at once where hiredis waits (an element that is no bulk string, a
        bulk length over the limit). ``pending`` is within the query buffer limit (the
        caller checks)."""
        if pending < self._need:
            return False  # still inside the bulk argument the last check stopped in
        if self._limits.input_queued():
            # The client is still sending: the read of the bytes queued on the socket comes
            # next and checks from where this one would have started (nothing is changed
            # here). A request arriving in many reads is then checked when its sender
            # stops, not argument by argument in Python at every read. Nothing runs in
            # between, and what hiredis makes of those bytes is checked as any read's.
            return False
        py = self._py
        py.need = 0
        py.resume = None
        if self._resume is not None:
            # The request in progress, from where the last check left it: only the bytes
            # after its complete arguments are joined and read again.
            at, left = self._resume
            pos, left = py._args(self._pending(at), 0, [], left)
            if left:
                self._resume = (at + pos, left)
                self._need = at + py.need if py.need else 0
                return False
            return True  # complete for Redis, and hiredis did not return it
        ready: list = []
        py.parse(self._pending(), 0, ready)  # a check: hiredis has these bytes
        py.big = None
        self._need = py.need
        self._resume = py.resume if not ready else None
        return bool(ready)

    def _take_from_hiredis(self) -> bytes:
        """The bytes hiredis holds but has not returned as requests; hiredis starts over."""
        data = self._pending()
        self._hi = hiredis.Reader()
        self._settled()
        return data

    def _settled(self) -> None:
        """No byte is pending any more (or the count starts afresh): forget the chunks and
        everything the checks of the request in progress kept."""
        self._chunks.clear()
        self._fed = self._consumed = self._need = 0
        self._resume = None
        self._suspect = False

    def _fallback(self, out: list) -> list:
        return self._feed_py(self._take_from_hiredis(), out, True)

    def _feed_py(self, data: bytes, out: list, refused: bool = False) -> list:
        py = self._py
        pos = py.parse(data, 0, out)
        rest = data[pos:]
        # The limit is at least 1 MiB: shorter leftovers (all inline ones) need no check.
        if len(rest) > 1 << 20 and len(rest) > self._limits.query_buffer_limit():
            raise QueryBufferFull("query buffer limit")
        # Go back to hiredis as soon as the buffer is empty or a multibulk request starts,
        # unless a big request is open or its header is still incomplete: both stay here,
        # as does a request hiredis refused that Redis still waits for the rest of (a header
        # line ended by a bare CR, or one a NUL byte hides): hiredis would refuse it again.
        if py.big is not None or (refused and not pos):
            self._pybuf = rest
        elif rest[:1] == b"*" and not _big_header(rest):
            self._pybuf = None
            self._feed(rest, out)
        else:
            self._pybuf = rest if rest else None
        return out
