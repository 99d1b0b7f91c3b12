"""Protocol-level behaviour over raw sockets: pipelining, split requests, inline commands,
protocol errors. These hold for real Redis as well (run with --redis-url)."""

from __future__ import annotations

import contextlib
import time

import pytest


def test_thousand_pipelined_commands_in_one_write(raw):
    c = raw()
    c.send(b"".join(b"*2\r\n$4\r\nECHO\r\n$%d\r\n%d\r\n" % (len(b"%d" % i), i)
                    for i in range(1000)))
    expected = b"".join(b"$%d\r\n%d\r\n" % (len(b"%d" % i), i) for i in range(1000))
    assert c.read_exact(len(expected), timeout=10) == expected


def test_byte_at_a_time(raw):
    c = raw()
    req = b"*3\r\n$4\r\nECHO\r\n$5\r\nhello\r\n" [:0] + b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\nPING\r\n"
    for i in range(len(req)):
        c.send(req[i:i + 1])
    assert c.read_exact(len(b"$5\r\nhello\r\n+PONG\r\n")) == b"$5\r\nhello\r\n+PONG\r\n"


@pytest.mark.parametrize("line,reply", [
    (b"PING\r\n", b"+PONG\r\n"),
    (b"PING\n", b"+PONG\r\n"),
    (b"ECHO hello\r\n", b"$5\r\nhello\r\n"),
    (b"  ECHO   spaced  \r\n", b"$6\r\nspaced\r\n"),
    (b'ECHO "a b\\x41\\n"\r\n', b"$5\r\na bA\n\r\n"),
    (b"ECHO 'it''s'\r\n", None),
    (b"ECHO 'x\\'y'\r\n", b"$3\r\nx'y\r\n"),
    (b'ECHO "a\\x00b"\r\n', b"$3\r\na\x00b\r\n"),  # an escaped NUL is just a byte
])
def test_inline_commands(raw, line, reply):
    c = raw()
    c.send(line)
    if reply is None:  # closing quote not followed by a space: unbalanced
        assert c.read_reply() == b"-ERR Protocol error: unbalanced quotes in request\r\n"
        assert c.is_closed()
    else:
        assert c.read_reply() == reply


@pytest.mark.parametrize("line", [b"\x00\x01\x02\r\n", b"PING\x00junk\r\n"])
def test_inline_line_with_a_nul_byte_never_completes(raw, line):
    # Redis finds the end of an inline line with strchr, which stops at the NUL: the line
    # stays incomplete, later requests wait behind it, and past 64 KiB it is too big.
    c = raw()
    c.send(line + b"PING\r\n")
    assert c.read_until(lambda b: False, timeout=0.5) == b""
    c.send(b"x" * (64 * 1024) + b"\r\n")
    assert c.read_reply() == b"-ERR Protocol error: too big inline request\r\n"
    assert c.is_closed()


def test_empty_inline_lines_are_ignored(raw):
    c = raw()
    c.send(b"\r\n\r\nPING\r\n")
    assert c.read_reply() == b"+PONG\r\n"


def test_inline_and_multibulk_mixed(raw):
    c = raw()
    c.send(b"PING\r\n*1\r\n$4\r\nPING\r\nECHO x\r\n*0\r\n*2\r\n$4\r\nECHO\r\n$1\r\ny\r\n")
    assert c.read_exact(28) == b"+PONG\r\n+PONG\r\n$1\r\nx\r\n$1\r\ny\r\n"


@pytest.mark.parametrize("data,message", [
    (b"*abc\r\n", b"invalid multibulk length"),
    (b"*3000000000\r\n", b"invalid multibulk length"),
    (b"*1\r\n$abc\r\n", b"invalid bulk length"),
    (b"*1\r\n$-1\r\n", b"invalid bulk length"),
    (b"*1\r\n$600000000\r\n", b"invalid bulk length"),
    (b"*1\r\nxyz\r\n", b"expected '$', got 'x'"),
    (b"*2\r\n$4\r\nECHO\r\n:1\r\n", b"expected '$', got ':'"),
    # Elements hiredis reads as plain strings: still not bulk strings.
    (b"*1\r\n+PING\r\n", b"expected '$', got '+'"),
    (b"*2\r\n$4\r\nECHO\r\n+hello\r\n", b"expected '$', got '+'"),
    (b"*1\r\n=7\r\ntxt:abc\r\n", b"expected '$', got '='"),  # RESP3 verbatim string
    (b"*2\r\n$4\r\nECHO\r\n(123\r\n", b"expected '$', got '('"),  # RESP3 big number
    # Shorter than its bulk form by as many bytes as the partial request after it holds.
    (b"*1\r\n+OK\r\n*1\r", b"expected '$', got '+'"),
    # A verbatim string 4 bytes longer than its bulk form, a simple string 4 shorter.
    (b"*2\r\n$4\r\nECHO\r\n=7\r\ntxt:abc\r\n*2\r\n$4\r\nECHO\r\n+0123456789\r\n",
     b"expected '$', got '='"),
    (b'ECHO "unterminated\r\n', b"unbalanced quotes in request"),
    # A simple string whose text starts with '+'; a simple string 4 bytes short of its
    # bulk form with a verbatim string 4 bytes over it.
    (b"*2\r\n$4\r\nECHO\r\n++x\r\n", b"expected '$', got '+'"),
    (b"*3\r\n$4\r\nECHO\r\n+0123456789\r\n=14\r\ntxt:0123456789\r\n",
     b"expected '$', got '+'"),
    # The request is not complete, and the write ends right after the refused element:
    # Redis answers at once, while hiredis, which took the element whole, waits for more.
    (b"*3\r\n$4\r\nECHO\r\n:5\r\n", b"expected '$', got ':'"),
    (b"*2\r\n$4\r\nECHO\r\n*5\r\n", b"expected '$', got '*'"),
    (b"*3\r\n$4\r\nECHO\r\n%1\r\n", b"expected '$', got '%'"),
])
def test_protocol_errors_close_the_connection(raw, data, message):
    c = raw()
    c.send(data)
    assert c.read_reply() == b"-ERR Protocol error: " + message + b"\r\n"
    assert c.is_closed()
    # the server goes on serving everyone else
    other = raw()
    other.send(b"PING\r\n")
    assert other.read_reply() == b"+PONG\r\n"


@pytest.mark.parametrize("writes,bad", [
    ([b"*1\r\n$4\r\nPING\r\n*1\r\nx\r\n"], b"x"),
    # a simple string element: hiredis reads it as a string, Redis refuses it
    ([b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n+x\r\n*1\r\n$4\r\nPING\r\n"], b"+"),
    # ... followed by the start of another request, completed by a later write
    ([b"*1\r\n$4\r\nPING\r\n*1\r\n+PING\r\n*1\r\n$4\r\nPI", b"NG\r\n"], b"+"),
])
def test_commands_before_a_protocol_error_still_run(raw, writes, bad):
    c = raw()
    for i, data in enumerate(writes):
        if i:
            time.sleep(0.1)
            if c.is_closed():
                break
        c.send(data)
    assert c.read_reply() == b"+PONG\r\n"
    assert c.read_reply() == b"-ERR Protocol error: expected '$', got '" + bad + b"'\r\n"
    assert c.is_closed()


def test_plus_arguments_then_a_simple_string_starting_with_plus(raw):
    # The arguments '+' and '+x' hold as many '+' bytes as the simple string '++x' whose
    # text hiredis returns: the read is still refused at that element.
    c = raw()
    c.send(b"*2\r\n$4\r\nECHO\r\n$1\r\n+\r\n*2\r\n$4\r\nECHO\r\n$2\r\n+x\r\n"
           b"*2\r\n$4\r\nECHO\r\n++x\r\n")
    assert c.read_reply() == b"$1\r\n+\r\n"
    assert c.read_reply() == b"$2\r\n+x\r\n"
    assert c.read_reply() == b"-ERR Protocol error: expected '$', got '+'\r\n"
    assert c.is_closed()


@pytest.mark.parametrize("writes", [
    [b"XREAD BLOCK 200 STREAMS pe:none $\r\nPING\r\n*x\r\n"],
    [b"XREAD BLOCK 300 STREAMS pe:none $\r\n", b"PING\r\n*x\r\n"],  # blocked already
    [b"XREAD BLOCK 300 STREAMS pe:none $\r\nPING\r\n", b"*x\r\nPING\r\n"],
])
def test_blocked_client_is_served_before_its_protocol_error(raw, writes):
    # Redis parses nothing while a client is blocked: the blocking command times out, the
    # requests queued behind it run, and only then are the bad bytes read and refused.
    c = raw()
    for i, data in enumerate(writes):
        if i:
            time.sleep(0.05)
        c.send(data)
    assert c.read_reply() == b"*-1\r\n"
    assert c.read_reply() == b"+PONG\r\n"
    assert c.read_reply() == b"-ERR Protocol error: invalid multibulk length\r\n"
    assert c.is_closed()


def test_protocol_error_waits_for_the_entry_that_unblocks(r, raw):
    r.delete("pe:s")
    c = raw()
    c.send(b"XREAD BLOCK 5000 STREAMS pe:s $\r\n\"unbalanced\r\n")
    time.sleep(0.1)
    assert c.read_until(lambda b: False, timeout=0.1) == b""
    r.xadd("pe:s", {"f": "v"}, id="1-1")
    assert c.read_reply() == (b"*1\r\n*2\r\n$4\r\npe:s\r\n*1\r\n*2\r\n$3\r\n1-1\r\n"
                              b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
    assert c.read_reply() == b"-ERR Protocol error: unbalanced quotes in request\r\n"
    assert c.is_closed()


def test_paused_client_is_served_before_its_protocol_error(r, raw):
    c = raw()
    try:
        r.execute_command("CLIENT", "PAUSE", "300", "ALL")
        c.send(b"PING\r\n*x\r\n")
        assert c.read_until(lambda b: False, timeout=0.1) == b""
        assert c.read_reply() == b"+PONG\r\n"
        assert c.read_reply() == b"-ERR Protocol error: invalid multibulk length\r\n"
        assert c.is_closed()
    finally:
        r.execute_command("CLIENT", "UNPAUSE")


def test_multibulk_length_limit_is_int_max(raw):
    c = raw()
    c.send(b"*2147483648\r\n")
    assert c.read_reply() == b"-ERR Protocol error: invalid multibulk length\r\n"
    assert c.is_closed()
    ok = raw()
    ok.send(b"*2147483647\r\n")  # a valid header: the server waits for the arguments
    assert ok.read_until(lambda b: False, timeout=0.3) == b""
    assert not ok.is_closed()


@pytest.mark.parametrize("data,reply", [
    (b"*1\rx$4\r\nPING\r\n", b"+PONG\r\n"),
    (b"*2\r\n$4\r\nECHO\r\n$1\rxa\r\n", b"$1\r\na\r\n"),
    (b"*2\r\n$4\r\nECHO\r\n$1\r\r\nab\r\n", b"$1\r\n\n\r\n"),  # the LF is the argument
    # complete for Redis, while a parser that wants CR LF still waits
    (b"*2\r\n$4\r\nECHO\r\n$1\rxab\r", b"$1\r\na\r\n"),
])
@pytest.mark.parametrize("split", [False, True])
def test_header_line_ends_at_the_first_cr(raw, data, reply, split):
    # Redis ends a '*' or '$' line at its first CR and skips the byte after it unseen.
    c = raw()
    for piece in ([data[i:i + 1] for i in range(len(data))] if split else [data]):
        c.send(piece)
    assert c.read_reply() == reply
    c.send(b"PING\r\n")
    assert c.read_reply() == b"+PONG\r\n"


@pytest.mark.parametrize("data,message", [
    (b"*1\r\r\n$4\r\nPING\r\n", b"expected '$', got ' '"),  # the LF, shown as a space
    (b"*1\r\n$4\r\r\nPING\r\n", None),  # the argument is "\nPIN", an unknown command
])
def test_header_line_cr_followed_by_cr(raw, data, message):
    c = raw()
    c.send(data)
    if message is None:
        assert c.read_reply() == (b"-ERR unknown command ' PIN', with args beginning with: "
                                  b"\r\n")
        assert not c.is_closed()
    else:
        assert c.read_reply() == b"-ERR Protocol error: " + message + b"\r\n"
        assert c.is_closed()


@pytest.mark.parametrize("data,message", [
    (b"*1\x00\r\n", b"too big mbulk count string"),
    (b"*1\r\n$4\x00\r\nPING\r\n", b"too big bulk count string"),
    (b"*1\r\nx\x00\r\n", b"too big bulk count string"),
])
def test_header_line_with_a_nul_byte_never_completes(raw, data, message):
    # strchr stops at the NUL: the line's CR is never found, and past 64 KiB the line is
    # too big. A non-'$' first byte is not looked at before the line is complete.
    c = raw()
    c.send(data + b"*1\r\n$4\r\nPING\r\n")
    assert c.read_until(lambda b: False, timeout=0.3) == b""
    assert not c.is_closed()
    c.send(b"x" * (64 * 1024))
    assert c.read_reply() == b"-ERR Protocol error: " + message + b"\r\n"
    assert c.is_closed()


def test_bulk_header_first_byte_is_checked_once_the_line_is_complete(raw):
    c = raw()
    c.send(b"*1\r\n$4\r\nPING\r\n*1\r\nxyz")
    assert c.read_reply() == b"+PONG\r\n"
    assert c.read_until(lambda b: False, timeout=0.3) == b""
    c.send(b"\r")  # the CR alone does not complete the line: the byte after it must come
    assert c.read_until(lambda b: False, timeout=0.3) == b""
    assert not c.is_closed()
    c.send(b"\n")
    assert c.read_reply() == b"-ERR Protocol error: expected '$', got 'x'\r\n"
    assert c.is_closed()


def test_protocol_error_split_across_writes(raw):
    c = raw()
    for b in (b"*1\r", b"\n$", b"9999999999", b"99\r\n"):
        c.send(b)
    assert c.read_reply() == b"-ERR Protocol error: invalid bulk length\r\n"
    assert c.is_closed()


def test_command_errors_keep_the_connection_open(raw):
    c = raw()
    c.send(b"NOSUCHCMD a b\r\n")
    assert c.read_reply() == (b"-ERR unknown command 'NOSUCHCMD', with args beginning with: "
                              b"'a' 'b' \r\n")
    c.send(b"*1\r\n$4\r\nECHO\r\n")
    assert c.read_reply() == b"-ERR wrong number of arguments for 'echo' command\r\n"
    c.send(b"PING\r\n")
    assert c.read_reply() == b"+PONG\r\n"


def test_large_bulk_argument_split_in_chunks(raw):
    c = raw()
    payload = b"x" * (3 * 1024 * 1024 + 7)
    req = b"*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n" % (len(payload), payload)
    for i in range(0, len(req), 65536):
        c.send(req[i:i + 65536])
    head = b"$%d\r\n" % len(payload)
    got = c.read_exact(len(head) + len(payload) + 2, timeout=20)
    assert got == head + payload + b"\r\n"


def test_quit_replies_ok_then_closes(raw):
    c = raw()
    c.send(b"QUIT\r\nPING\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.is_closed()


def test_resp3_null_and_map_encoding(raw):
    c = raw()
    c.send(b"HELLO 3\r\n")
    reply = c.read_reply()
    assert reply.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n")
    c.send(b"CLIENT GETNAME\r\n")
    assert c.read_reply() == b"_\r\n"
    c.send(b"HELLO 2\r\nCLIENT GETNAME\r\n")
    assert c.read_reply().startswith(b"*14\r\n")
    assert c.read_reply() == b"$-1\r\n"


def test_client_that_does_not_read_replies_does_not_stall_others(raw):
    # The slow client keeps sending while never reading; the server must pause reading from
    # it (flow control) rather than buffer without bound or stop serving everyone else.
    slow = raw()
    big = b"x" * 65536
    req = b"*2\r\n$4\r\nECHO\r\n$65536\r\n" + big + b"\r\n"
    slow.sock.setblocking(False)
    sent = 0
    for _ in range(2000):
        try:
            sent += slow.sock.send(req)
        except BlockingIOError:
            break
    other = raw()
    other.send(b"PING\r\n")
    assert other.read_reply() == b"+PONG\r\n"
    slow.sock.setblocking(True)


def test_proto_max_bulk_len_is_configurable(r, raw):
    old = r.config_get("proto-max-bulk-len")["proto-max-bulk-len"]
    r.config_set("proto-max-bulk-len", "1mb")
    try:
        c = raw()
        c.send(b"*2\r\n$4\r\nECHO\r\n$1048577\r\n")
        assert c.read_reply() == b"-ERR Protocol error: invalid bulk length\r\n"
        assert c.is_closed()
        ok = raw()
        ok.send(b"*2\r\n$4\r\nECHO\r\n$1048576\r\n" + b"y" * 1048576 + b"\r\n")
        assert ok.read_exact(1048576 + 13).startswith(b"$1048576\r\nyyy")
    finally:
        r.config_set("proto-max-bulk-len", old)


@pytest.mark.parametrize("header", [
    b"*2\r\n$4\r\nECHO\r\n$2000000\r\n",
    b"*1000000\r\n$2000000\r\n",  # a request with a big count, read argument by argument
])
def test_query_buffer_limit_closes_the_connection_without_a_reply(r, raw, header):
    # Redis logs the overflow and drops the client: no error reply, unlike a protocol
    # error. Replies to what it ran before are not lost.
    old = r.config_get("client-query-buffer-limit")["client-query-buffer-limit"]
    r.config_set("client-query-buffer-limit", "1mb")
    try:
        c = raw()
        c.send(b"PING\r\n")
        assert c.read_reply() == b"+PONG\r\n"
        c.send(header)
        with contextlib.suppress(OSError):  # the server may close while this is sent
            for _ in range(12):
                c.send(b"x" * 100_000)
        assert c.is_closed()
        assert c.buf == b""
    finally:
        r.config_set("client-query-buffer-limit", old)


def _bulks(*args: bytes) -> bytes:
    return b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def test_request_with_a_million_arguments(raw):
    # Counts from 1,000,000 on bypass hiredis (see streamd.protocol.reader.BIG_COUNT)
    n = 1_000_000
    c = raw()
    body = b"*%d\r\n$3\r\nDEL\r\n" % (n + 1) + _bulks(b"k") * n
    for i in range(0, len(body), 1 << 20):  # a megabyte at a time, split anywhere
        c.send(body[i:i + (1 << 20)])
    c.send(b"*1\r\n$4\r\nPING\r\n")
    assert c.read_reply(timeout=60) == b":0\r\n"
    assert c.read_reply() == b"+PONG\r\n"


@pytest.mark.parametrize("tail,reply,closed", [
    # the last header ends at a bare CR: complete for Redis, hiredis still waits for CR LF
    (b"$1\rxk\ry", b":0\r\n", False),
    # an element Redis refuses: it answers at once, while hiredis waits for the rest
    (b"*5\r\n", b"-ERR Protocol error: expected '$', got '*'\r\n", True),
])
def test_many_argument_request_whose_end_only_redis_sees(raw, tail, reply, closed):
    # 200,000 arguments arrive in many reads, most with more bytes already waiting on the
    # socket; the server must still answer when the last bytes come and the sender stops.
    n = 200_000
    c = raw()
    body = b"*%d\r\n$3\r\nDEL\r\n" % (n + 2) + _bulks(b"k") * n + tail
    for i in range(0, len(body), 100_000):
        c.send(body[i:i + 100_000])
    assert c.read_reply(timeout=30) == reply
    assert c.is_closed() == closed


def test_big_count_header_split_byte_by_byte(raw):
    c = raw()
    for b in b"*1000002\r\n":
        c.send(bytes([b]))
        time.sleep(0.001)
    c.send(b"$4\r\nECHO\r\n$1\r\nx\r\n")  # ECHO with 1,000,001 arguments: arity error
    c.send(_bulks(b"y") * 1_000_000)
    assert c.read_reply(timeout=60) == b"-ERR wrong number of arguments for 'echo' command\r\n"


def test_abandoned_huge_header_does_not_stall_the_server(raw):
    # A client announces two billion arguments and leaves. Redis allocates as arguments
    # arrive; a reader that allocated the whole list up front would spend seconds freeing it.
    c = raw()
    c.send(b"*2000000000\r\n$3\r\nDEL\r\n")
    time.sleep(0.05)
    c.close()
    other = raw()
    t0 = time.monotonic()
    other.send(b"PING\r\n")
    assert other.read_reply() == b"+PONG\r\n"
    assert time.monotonic() - t0 < 2.0


def test_big_count_looking_bytes_inside_an_argument(raw):
    c = raw()
    c.send(b"*2\r\n$4\r\nECHO\r\n$10\r\n*123456789\r\n*2\r\n$4\r\nECHO\r\n$1\r\nz\r\n")
    assert c.read_reply() == b"$10\r\n*123456789\r\n"
    assert c.read_reply() == b"$1\r\nz\r\n"
    c.send(b"*2\r\n$4\r\nECHO\r\n*1000000\r\n")  # an array where an argument belongs
    assert c.read_reply() == b"-ERR Protocol error: expected '$', got '*'\r\n"
    assert c.is_closed()


@pytest.mark.parametrize("kind", [b"*", b"~", b">", b"|"])
@pytest.mark.parametrize("split", [None, 2, 5])
def test_huge_nested_aggregate_header_is_refused_at_once(raw, kind, split):
    # hiredis would allocate a set, push or attribute header's whole element list up front,
    # as it does an array's, and freeing two billion slots takes seconds; Redis refuses
    # the element at its first byte.
    data = b"*2\r\n$4\r\nECHO\r\n" + kind + b"2000000000\r\n"
    c = raw()
    t0 = time.monotonic()
    if split is None:
        c.send(data)
    else:  # the header split across two reads
        cut = len(data) - 12 + split
        c.send(data[:cut])
        time.sleep(0.05)
        c.send(data[cut:])
    assert c.read_reply() == b"-ERR Protocol error: expected '$', got '" + kind + b"'\r\n"
    assert c.is_closed()
    other = raw()
    other.send(b"PING\r\n")
    assert other.read_reply() == b"+PONG\r\n"
    assert time.monotonic() - t0 < 2.0


def _request(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


@pytest.mark.parametrize("argv,shown", [
    # Every argument fits the 128-byte budget: all are shown, however many there are.
    ([b"FOO"] + [b"%d" % i for i in range(25)],
     b"'FOO', with args beginning with: " + b"".join(b"'%d' " % i for i in range(25))),
    # The argument that reaches the budget is cut to what is left; none follows it.
    ([b"FOO", b"a" * 120, b"b" * 34, b"c"],
     b"'FOO', with args beginning with: '" + b"a" * 120 + b"' 'bbbbb' "),
    ([b"FOO", b"x" * 125, b"y"], b"'FOO', with args beginning with: '" + b"x" * 125 + b"' "),
    # The name is cut at 128 bytes (not characters); a NUL ends a name or an argument;
    # CR and LF become spaces, other bytes are echoed as they are.
    ([("\u00e9" * 70).encode(), b"x"],
     b"'" + ("\u00e9" * 64).encode() + b"', with args beginning with: 'x' "),
    ([b"FO\r\nO\x00X", b"d\x00e", b"a\x01b\tc", b"\xff"],
     b"'FO  O', with args beginning with: 'd' 'a\x01b\tc' '\xff' "),
])
def test_unknown_command_error_previews_args_as_redis(raw, argv, shown):
    c = raw()
    c.send(_request(*argv))
    assert c.read_reply() == b"-ERR unknown command " + shown + b"\r\n"


def test_unknown_subcommand_error_echoes_bytes_as_redis(raw):
    c = raw()
    c.send(_request(b"OBJECT", b"a\r\nb\x00c"))
    assert c.read_reply() == b"-ERR unknown subcommand 'a  b'. Try OBJECT HELP.\r\n"
    c.send(_request(b"OBJECT", b"x" * 200))
    assert c.read_reply() == b"-ERR unknown subcommand '" + b"x" * 128 + b"'. Try OBJECT HELP.\r\n"


@pytest.mark.parametrize("argv,name", [
    ([b"XINFO", b"STREAM"], b"xinfo|stream"),
    ([b"xgroup", b"create", b"s", b"g"], b"xgroup|create"),
    ([b"XINFO", b"consumers", b"s"], b"xinfo|consumers"),
    ([b"XADD", b"s", b"*", b"f"], b"xadd"),
    ([b"XADD", b"s", b"*"], b"xadd"),
    ([b"XREAD", b"STREAMS"], b"xread"),
    ([b"PING", b"a", b"b"], b"ping"),
    ([b"CONFIG", b"SET", b"x"], b"config|set"),
    ([b"XINFO"], b"xinfo"),
])
def test_arity_errors_name_the_command_or_subcommand(raw, argv, name):
    # Checked by the dispatcher before the handler runs, alone and mid-pipeline.
    c = raw()
    c.send(_request(*argv) + b"PING\r\n" + _request(*argv))
    error = b"-ERR wrong number of arguments for '" + name + b"' command\r\n"
    assert c.read_reply() == error
    assert c.read_reply() == b"+PONG\r\n"
    assert c.read_reply() == error
