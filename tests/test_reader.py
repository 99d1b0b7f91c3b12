"""The request reader on its own: whatever the split of a byte stream into reads, it yields
the requests, and the protocol error, that the exact pure-Python parser finds in the whole
stream at once.

The reader takes hiredis's parse; it trusts a read that ends on a request boundary and
otherwise accounts for the bytes by the requests' sizes. The streams here mix valid
requests (multibulk, inline, empty) with elements hiredis also parses but Redis refuses,
such as simple strings, verbatim strings and big numbers, which hiredis returns as plain
bytes.
"""

from __future__ import annotations

import random

import pytest

from streamd.protocol.reader import ProtocolError, RequestReader, _PyParser


class _Limits:
    def __init__(self, auth_required: bool):
        self.auth = auth_required
        self.queued = False  # what input_queued() answers: more bytes wait on the socket

    def proto_max_bulk_len(self) -> int:
        return 512 << 20

    def query_buffer_limit(self) -> int:
        return 1 << 30

    def auth_required(self) -> bool:
        return self.auth

    def input_queued(self) -> bool:
        return self.queued


def _arg(rnd: random.Random) -> bytes:
    kind = rnd.random()
    if kind < 0.5:  # the bytes that matter to the parsers
        return bytes(rnd.choice(b"ab*$:+-=(\r\n 09\"'") for _ in range(rnd.randrange(8)))
    if kind < 0.8:
        return rnd.randbytes(rnd.randrange(40))
    return b"x" * rnd.choice([127, 128, 1023, 1024, 8191, 8192, 20000])


def _valid(rnd: random.Random) -> bytes:
    kind = rnd.random()
    if kind < 0.7:
        args = [_arg(rnd) for _ in range(rnd.randrange(1, 6))]
        return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
    if kind < 0.8:
        words = [bytes(rnd.choice(b"abcdef") for _ in range(rnd.randrange(1, 5)))
                 for _ in range(rnd.randrange(1, 4))]
        return b" ".join(words) + rnd.choice([b"\r\n", b"\n"])
    if kind < 0.9:
        return rnd.choice([b"*0\r\n", b"*-1\r\n", b"\r\n", b"\n", b"*1\r\n$0\r\n\r\n"])
    return b"SET \"a b\" 'c'\r\n"


_INVALID = (
    b"*1\r\n+OK\r\n", b"*2\r\n$2\r\nab\r\n+0123456789\r\n", b"*1\r\n=7\r\ntxt:abc\r\n",
    b"*1\r\n(12345\r\n", b"*1\r\n:1\r\n", b"*2\r\n$x\r\n", b"*abc\r\n", b"*1\r\n$-5\r\n",
    b"*01\r\n$1\r\na\r\n", b"*1\r\n$03\r\nabc\r\n", b"*1\r\n$3\r\nabcd\r\n", b'"unbalanced\r\n',
    b"*1\r\n*1\r\n$1\r\na\r\n", b"*1\r\n_\r\n", b"*1\r\n,1.5\r\n", b"*1\r\n#t\r\n",
    # header lines Redis ends at a bare CR (hiredis wants CR LF), or never ends past a NUL
    b"*1\rx$4\r\nPING\r\n", b"*2\r\n$4\r\nECHO\r\n$1\rxab\r", b"*1\r\r\n$1\r\na\r\n",
    b"*3\r\n$1\rxa\r\n$1\r\nb\r\n$2\r\r\nab\r\n", b"*1\x00\r\n", b"*1\r\n$3\x00\r\n",
    b"*1\r\nx\x00\r\n",
)


def _whole(data: bytes, auth: bool):
    out: list = []
    try:
        _PyParser(_Limits(auth)).parse(data, 0, out)
    except ProtocolError as exc:
        return out, str(exc)
    return out, None


def _split(data: bytes, cuts: list, auth: bool, queued: bool = False):
    """What a reader fed ``data`` in reads ending at ``cuts`` yields. ``queued``: the
    connection reports more bytes waiting before every read but the last, as when a client
    sends faster than the reads take its bytes."""
    limits = _Limits(auth)
    reader = RequestReader(limits)
    reader.set_gated(auth)
    out: list = []
    for lo, hi in zip([0, *cuts], [*cuts, len(data)]):
        limits.queued = queued and hi < len(data)
        try:
            out += reader.feed(data[lo:hi])
            while reader.held:
                out += reader.feed(b"")
        except ProtocolError as exc:
            return out + exc.requests, str(exc)
    return out, None


@pytest.mark.parametrize("seed", range(8))
def test_any_split_reads_what_the_exact_parser_reads(seed):
    rnd = random.Random(seed)
    for _ in range(250):
        parts = [_valid(rnd) for _ in range(rnd.randrange(1, 12))]
        if rnd.random() < 0.4:
            parts.insert(rnd.randrange(len(parts) + 1), rnd.choice(_INVALID))
        data = b"".join(parts)
        auth = rnd.random() < 0.2  # an unauthenticated client: one request per feed
        if rnd.random() < 0.05:
            cuts = list(range(1, len(data)))  # byte by byte
        else:
            cuts = sorted(rnd.sample(range(1, len(data)), min(rnd.randrange(6), len(data) - 1)))
        queued = rnd.random() < 0.5
        assert _split(data, cuts, auth, queued) == _whole(data, auth), (data, cuts, auth, queued)


@pytest.mark.parametrize("bad", [b":1\r\n", b"+OK\r\n", b"*1\r\n$1\r\na\r\n"])
def test_a_read_ending_inside_a_request_on_an_element_boundary(bad):
    # The first read ends right after a complete element of an unfinished request: hiredis
    # has then consumed every byte, as it has at a request boundary. The reader must still
    # know that request started in this read, so that the exact parser re-reads it from
    # its '*' when the next read brings an element Redis refuses.
    head = b"*1\r\n$4\r\nPING\r\n*3\r\n$4\r\nECHO\r\n"
    data = head + bad + b"$1\r\nx\r\n"
    expected = _whole(data, False)
    assert expected[1] is not None  # Redis refuses it
    assert _split(data, [len(head)], False) == expected
    assert _split(data, [len(head), len(head) + 2], False) == expected


@pytest.mark.parametrize("element", [b":5\r\n", b"*5\r\n", b"%1\r\n", b"+x\r\n", b"_\r\n"])
@pytest.mark.parametrize("queued", [False, True])
def test_a_refused_element_is_reported_by_the_read_that_ends_with_it(element, queued):
    # hiredis takes the element whole and waits for the rest of the request; Redis refuses
    # it as soon as its line is complete, and the client may wait for that answer. Unless
    # more bytes are queued on the socket: then the read that takes them reports it.
    data = b"*1\r\n$4\r\nPING\r\n*3\r\n$4\r\nECHO\r\n" + element
    requests, message = _whole(data, False)
    assert requests == [[b"PING"]] and message == f"expected '$', got '{element[:1].decode()}'"
    limits = _Limits(False)
    limits.queued = queued
    reader = RequestReader(limits)
    if queued:
        assert reader.feed(data) == requests
        limits.queued = False
        data, requests = b"", []
    with pytest.raises(ProtocolError) as exc:
        reader.feed(data)
    assert (exc.value.requests, str(exc.value)) == (requests, message)


@pytest.mark.parametrize("seed", range(20))
def test_buffered_splits_the_pending_request_whatever_the_reads(seed):
    """CLIENT LIST's qbuf and argv-mem: the bytes of the incomplete request after its
    header, complete arguments and the length line of the one coming, and the bytes of
    those complete arguments, whether the reader holds the input in hiredis's chunks or in
    one buffer of its own."""
    rnd = random.Random(seed)
    args = [rnd.randbytes(rnd.choice((0, 3, 9000, 70_000))) for _ in range(rnd.randrange(1, 5))]
    stream = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
    cut = rnd.randrange(1, len(stream))
    reader = RequestReader(_Limits(False))
    pos = 0
    while pos < cut:
        step = rnd.randrange(1, 20_000)
        assert reader.feed(stream[pos:min(cut, pos + step)]) == []
        pos += step
    # Where Redis's parse of stream[:cut] stops: after the header, each complete argument,
    # and the length line of an argument whose bytes are still coming.
    header = stream.index(b"\r\n") + 2
    at, taken = (header, 0) if cut >= header else (0, 0)
    for a in args:
        line = b"$%d\r\n" % len(a)
        if at == 0 or at + len(line) > cut:
            break
        if at + len(line) + len(a) + 2 > cut:
            at += len(line)
            break
        at += len(line) + len(a) + 2
        taken += len(a)
    assert reader.buffered() == (cut - at, taken)
    assert reader.buffered(parsed=False) == (cut, 0)


@pytest.mark.parametrize("chunk", [70_000, 200_000])
def test_a_long_request_read_in_pieces_that_end_on_argument_boundaries(chunk):
    # hiredis holds no bytes after a read that ends where an argument ends (it has taken
    # the complete arguments of the request in progress): the reader's byte count must
    # carry on there, or the rest of the request is read as inline commands.
    args = [b"EXISTS"] + [b"key:%d" % i for i in range(100_000)]
    pieces, cut, size = [], [], 0
    for a in args:
        piece = b"$%d\r\n%s\r\n" % (len(a), a)
        cut.append(piece)
        size += len(piece)
        if size >= chunk:
            pieces.append(b"".join(cut))
            cut, size = [], 0
    pieces.append(b"".join(cut))
    pieces[0] = b"*%d\r\n" % len(args) + pieces[0]
    reader = RequestReader(_Limits(False))
    got = []
    for _ in range(3):  # the same request again on the same reader
        for piece in pieces:
            got += reader.feed(piece)
    assert len(got) == 3 and all(req == args for req in got)
    assert reader.feed(b"*1\r\n$4\r\nPING\r\n") == [[b"PING"]]


def _chunked_pipeline(seed: int):
    """Requests of 1 to 60,000 arguments (a few of 70-200 KB), encoded, and cut into reads at
    argument boundaries and, in half the cases, at random bytes too."""
    rnd = random.Random(seed)
    requests = []
    for _ in range(rnd.randint(1, 6)):
        n = rnd.choice([1, 2, 3, 10, 100, 1000, rnd.randint(1, 60_000)])
        sizes = [0, 1, 5, 20, 300] + ([70_000, 200_000] if n <= 20 and rnd.random() < 0.2 else [])
        requests.append([b"CMD"] + [bytes([rnd.randint(97, 122)]) * rnd.choice(sizes)
                                    for _ in range(n)])
    parts, marks, size = [], [], 0
    for argv in requests:
        for part in [b"*%d\r\n" % len(argv)] + [b"$%d\r\n%s\r\n" % (len(a), a) for a in argv]:
            parts.append(part)
            size += len(part)
            marks.append(size)
    data = b"".join(parts)
    cuts = {rnd.choice(marks) for _ in range(rnd.randint(1, 60))}
    if rnd.random() < 0.5:
        cuts |= {rnd.randint(1, len(data)) for _ in range(rnd.randint(0, 60))}
    bounds = [0, *sorted(cuts - {0, len(data)}), len(data)]
    return requests, [data[a:b] for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("seed", range(100))
def test_pipelines_cut_anywhere_parse_to_the_requests_sent(seed):
    requests, reads = _chunked_pipeline(seed)
    reader = RequestReader(_Limits(False))
    got = []
    for data in reads:
        got += reader.feed(data)
    assert got == requests


def test_a_bad_header_late_in_a_long_request_is_refused_as_soon_as_it_is_complete():
    # The check of what hiredis holds back goes on from where the last read left it: the
    # 3,000th argument's header, too long a bulk, is still refused when its line completes.
    head = b"*5000\r\n" + b"".join(b"$4\r\nk%03d\r\n" % (i % 1000) for i in range(2999))
    reader = RequestReader(_Limits(False))
    for i in range(0, len(head), 7001):
        assert reader.feed(head[i:i + 7001]) == []
    assert reader.feed(b"$600000000") == []
    with pytest.raises(ProtocolError, match="invalid bulk length"):
        reader.feed(b"\r\n")


def _args_outcome(parser, buf: bytes, left: int):
    argv: list = []
    parser.need = 0
    try:
        result = parser._args(buf, 0, argv, left)
    except ProtocolError as exc:
        result = str(exc)
    return result, argv, parser.need


@pytest.mark.parametrize("seed", range(4))
def test_usual_bulk_headers_are_read_as_the_exact_path_reads_them(seed, monkeypatch):
    # _args takes '$<len>\r\n' headers through a shortcut; with it turned off, every header
    # goes through _bulk. Both must agree on every prefix of every stream, odd headers too.
    import streamd.protocol.reader as reader_mod

    odd = [b"$03\r\nabc\r\n", b"$-1\r\n", b"$+3\r\nabc\r\n", b"$3\rxabc\r\n", b"$3\x00\r\nabc\r\n",
           b"$ 3\r\nabc\r\n", b"*3\r\n", b":1\r\n", b"$99999999999\r\n", b"$20000\r\n",
           b"$3\r\r\nab\r\n", b"$0\r\n\r\n", b"$00\r\n\r\n", b"$18446744073709551616\r\n"]
    rnd = random.Random(seed)
    for _ in range(300):
        parts = []
        for _ in range(rnd.randrange(1, 8)):
            if rnd.random() < 0.25:
                parts.append(rnd.choice(odd))
            else:
                a = rnd.randbytes(rnd.choice((0, 1, 5, 300, 17000)))
                parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
        stream = b"".join(parts)
        auth = rnd.random() < 0.3
        for cut in sorted(rnd.sample(range(len(stream) + 1), min(6, len(stream) + 1))):
            buf, left = stream[:cut], rnd.randrange(1, 9)
            fast = _args_outcome(_PyParser(_Limits(auth)), buf, left)
            with monkeypatch.context() as m:
                m.setattr(reader_mod, "_BULK_HEAD", lambda buf, pos: None)
                exact = _args_outcome(_PyParser(_Limits(auth)), buf, left)
            assert fast == exact, (buf[:80], left, auth)
