"""Pub/sub: subscriptions, their confirmations, messages, and the RESP2 subscribed mode.

Replies are compared on the raw bytes (RESP2 and RESP3), as Redis 7.0.15 sends them.
"""

from __future__ import annotations

import socket
import time

import pytest
import redis

from tests.conftest import encode_request as enc


def push(resp: int, *items) -> bytes:
    """A push message (or subscription confirmation) as it goes on the wire."""
    out = b"%s%d\r\n" % (b">" if resp == 3 else b"*", len(items))
    for item in items:
        if item is None:
            out += b"$-1\r\n" if resp == 2 else b"_\r\n"
        elif isinstance(item, int):
            out += b":%d\r\n" % item
        else:
            item = item.encode() if isinstance(item, str) else item
            out += b"$%d\r\n%s\r\n" % (len(item), item)
    return out


def expect(conn, expected: bytes) -> None:
    assert conn.read_exact(len(expected)) == expected
    assert conn.read_until(lambda b: False, timeout=0.05) == b""  # nothing more


def expect_either(conn, first: bytes, second: bytes) -> None:
    """One of two orders: Redis leaves a client's channels or patterns in hash order."""
    got = conn.read_exact(len(first))
    assert got in (first, second)


def connect(raw, resp: int):
    c = raw()
    if resp == 3:
        c.send(enc("HELLO", "3"))
        c.read_reply()
    return c


@pytest.mark.parametrize("resp", [2, 3])
def test_subscribe_confirms_each_channel_with_the_count(raw, resp):
    c = connect(raw, resp)
    c.send(enc("SUBSCRIBE", "a", "b", "a"))
    expect(c, push(resp, "subscribe", "a", 1) + push(resp, "subscribe", "b", 2)
           + push(resp, "subscribe", "a", 2))
    # Patterns add to the same count; shard channels count on their own.
    c.send(enc("PSUBSCRIBE", "a*", "?") + enc("SSUBSCRIBE", "s"))
    expect(c, push(resp, "psubscribe", "a*", 3) + push(resp, "psubscribe", "?", 4)
           + push(resp, "ssubscribe", "s", 1))
    c.send(enc("UNSUBSCRIBE", "zz"))
    expect(c, push(resp, "unsubscribe", "zz", 4))
    c.send(enc("UNSUBSCRIBE"))  # every channel, each confirmed with the count after it
    expect_either(c, push(resp, "unsubscribe", "a", 3) + push(resp, "unsubscribe", "b", 2),
                  push(resp, "unsubscribe", "b", 3) + push(resp, "unsubscribe", "a", 2))
    c.send(enc("PUNSUBSCRIBE"))
    expect_either(c, push(resp, "punsubscribe", "a*", 1) + push(resp, "punsubscribe", "?", 0),
                  push(resp, "punsubscribe", "?", 1) + push(resp, "punsubscribe", "a*", 0))
    c.send(enc("PUNSUBSCRIBE"))  # none left: one confirmation without a name
    expect(c, push(resp, "punsubscribe", None, 0))
    c.send(enc("SUNSUBSCRIBE") + enc("UNSUBSCRIBE") + enc("SUNSUBSCRIBE", "x", "y"))
    expect(c, push(resp, "sunsubscribe", "s", 0) + push(resp, "unsubscribe", None, 0)
           + push(resp, "sunsubscribe", "x", 0) + push(resp, "sunsubscribe", "y", 0))
    c.send(enc("PING"))  # out of subscribed mode
    expect(c, b"+PONG\r\n")


@pytest.mark.parametrize("resp", [2, 3])
def test_messages_reach_channel_and_pattern_subscribers(raw, r, resp):
    sub = connect(raw, resp)
    sub.send(enc("SUBSCRIBE", "news.1") + enc("PSUBSCRIBE", "news.*"))
    sub.read_until(lambda b: b.count(b"subscribe") == 2)
    other = connect(raw, resp)
    other.send(enc("PSUBSCRIBE", "n[a-e]ws.?"))
    other.read_until(lambda b: b"psubscribe" in b)
    # One delivery per matching subscription: the channel's, then the patterns'.
    assert r.publish("news.1", "hi") == 3
    expect(sub, push(resp, "message", "news.1", "hi")
           + push(resp, "pmessage", "news.*", "news.1", "hi"))
    expect(other, push(resp, "pmessage", "n[a-e]ws.?", "news.1", "hi"))
    assert r.publish("news.10", b"\x00\xff") == 1
    expect(sub, push(resp, "pmessage", "news.*", "news.10", b"\x00\xff"))
    assert r.publish("nobody", "x") == 0
    # Shard channels are a namespace of their own.
    sub.send(enc("SSUBSCRIBE", "news.1"))
    expect(sub, push(resp, "ssubscribe", "news.1", 1))
    assert r.execute_command("SPUBLISH", "news.1", "s") == 1
    expect(sub, push(resp, "smessage", "news.1", "s"))
    assert r.execute_command("SPUBLISH", "news.2", "s") == 0
    expect(other, b"")


def test_resp2_subscribed_mode_allows_only_pubsub_ping_quit_reset(raw):
    c = raw()
    c.send(enc("SUBSCRIBE", "x"))
    c.read_until(lambda b: b.endswith(b":1\r\n"))
    c.send(enc("PING") + enc("PING", "hi") + enc("GET", "k") + enc("CLIENT", "INFO")
           + enc("NOSUCH") + enc("GET") + enc("PING", "a", "b"))
    refused = ("-ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
               "QUIT / RESET are allowed in this context\r\n")
    expect(c, b"*2\r\n$4\r\npong\r\n$0\r\n\r\n*2\r\n$4\r\npong\r\n$2\r\nhi\r\n"
           + refused.format("get").encode() + refused.format("client|info").encode()
           + b"-ERR unknown command 'NOSUCH', with args beginning with: \r\n"
           + b"-ERR wrong number of arguments for 'get' command\r\n"
           + b"-ERR wrong number of arguments for 'ping' command\r\n")
    # HELLO 3 is refused too; RESET leaves every subscription and answers normally.
    c.send(enc("HELLO", "3") + enc("RESET") + enc("GET", "k") + enc("PING"))
    expect(c, refused.format("hello").encode() + b"+RESET\r\n$-1\r\n+PONG\r\n")
    c.send(enc("SUBSCRIBE", "x") + enc("QUIT"))
    expect(c, push(2, "subscribe", "x", 1) + b"+OK\r\n")
    assert c.is_closed()


def own_message_after(target, reply: bytes, pushes: bytes) -> bytes:
    """What a client gets for a command that published ``pushes`` to itself: since Redis
    7.2 the messages follow the command's whole reply; 7.0 wrote them at once."""
    return reply + pushes if target.version >= (7, 2) else pushes + reply


def test_resp3_subscriber_runs_any_command_and_may_switch_to_resp2(raw, r, target):
    c = connect(raw, 3)
    c.send(enc("SUBSCRIBE", "x") + enc("GET", "k") + enc("PING"))
    expect(c, push(3, "subscribe", "x", 1) + b"_\r\n+PONG\r\n")
    c.send(enc("PUBLISH", "x", "me"))  # to itself
    expect(c, own_message_after(target, b":1\r\n", push(3, "message", "x", "me")))
    c.send(enc("HELLO", "2"))
    c.read_reply()
    c.send(enc("GET", "k") + enc("PING"))
    expect(c, b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
           b"QUIT / RESET are allowed in this context\r\n*2\r\n$4\r\npong\r\n$0\r\n\r\n")


def test_pubsub_introspection(raw, r, target):
    a, b = raw(), raw()
    a.send(enc("SUBSCRIBE", "ch", "x") + enc("PSUBSCRIBE", "c*", "*") + enc("SSUBSCRIBE", "s"))
    a.read_until(lambda buf: buf.count(b"subscribe") == 5)
    b.send(enc("SUBSCRIBE", "ch") + enc("PSUBSCRIBE", "c*"))
    b.read_until(lambda buf: buf.count(b"subscribe") == 2)
    assert sorted(r.execute_command("PUBSUB", "CHANNELS")) == [b"ch", b"x"]
    assert r.execute_command("PUBSUB", "CHANNELS", "c?") == [b"ch"]
    assert r.execute_command("PUBSUB", "NUMSUB", "ch", "x", "nope") == [b"ch", 2, b"x", 1,
                                                                          b"nope", 0]
    assert r.execute_command("PUBSUB", "NUMSUB") == []
    assert r.execute_command("PUBSUB", "NUMPAT") == 2  # distinct patterns
    assert r.execute_command("PUBSUB", "SHARDCHANNELS") == [b"s"]
    assert r.execute_command("PUBSUB", "SHARDCHANNELS", "x*") == []
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "s", "ch") == [b"s", 1, b"ch", 0]
    stats = r.info("stats")
    assert (stats["pubsub_channels"], stats["pubsub_patterns"],
            stats["pubsubshard_channels"]) == (2, 2, 1)
    lines = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").decode().splitlines()
    assert len(lines) == 2
    assert all(" flags=P " in line for line in lines)
    assert any(" sub=2 psub=2 ssub=1 " in line for line in lines)
    assert any(" sub=1 psub=1 ssub=0 " in line for line in lines)
    assert str(r.client_id()) in [c["id"] for c in r.client_list(_type="normal")]
    assert len(r.client_list(_type="normal")) == 1
    help_ = r.execute_command("PUBSUB", "HELP")
    assert help_[0].startswith(b"PUBSUB <subcommand>") and len(help_) == 14
    assert help_[-1] == (b"    Prints this help." if target.version < (7, 2)
                         else b"    Print this help.")
    # Disconnection and RESET leave every subscription.
    a.close()
    b.send(enc("RESET"))
    b.read_until(lambda buf: buf.endswith(b"+RESET\r\n"))
    deadline = time.monotonic() + 5
    while r.execute_command("PUBSUB", "NUMPAT") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert r.execute_command("PUBSUB", "CHANNELS") == []
    assert r.execute_command("PUBSUB", "NUMPAT") == 0
    assert r.execute_command("PUBSUB", "SHARDCHANNELS") == []
    assert r.info("stats")["pubsub_channels"] == 0


def test_pubsub_argument_errors(r, raw):
    c = raw()
    c.send(enc("PUBSUB") + enc("PUBSUB", "NUMPAT", "x") + enc("PUBSUB", "CHANNELS", "a", "b")
           + enc("PUBSUB", "foo") + enc("PUBSUB", "SHARDCHANNELS", "a", "b")
           + enc("PUBLISH", "a") + enc("SPUBLISH", "a") + enc("SUBSCRIBE")
           + enc("PSUBSCRIBE") + enc("SSUBSCRIBE"))
    expect(c, b"-ERR wrong number of arguments for 'pubsub' command\r\n"
           b"-ERR wrong number of arguments for 'pubsub|numpat' command\r\n"
           b"-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. "
           b"Try PUBSUB HELP.\r\n"
           b"-ERR unknown subcommand 'foo'. Try PUBSUB HELP.\r\n"
           b"-ERR unknown subcommand or wrong number of arguments for 'SHARDCHANNELS'. "
           b"Try PUBSUB HELP.\r\n"
           b"-ERR wrong number of arguments for 'publish' command\r\n"
           b"-ERR wrong number of arguments for 'spublish' command\r\n"
           b"-ERR wrong number of arguments for 'subscribe' command\r\n"
           b"-ERR wrong number of arguments for 'psubscribe' command\r\n"
           b"-ERR wrong number of arguments for 'ssubscribe' command\r\n")


def test_subscribed_mode_commandstats(r, raw):
    r.config_resetstat()
    c = raw()
    c.send(enc("SUBSCRIBE", "a") + enc("PING") + enc("GET", "k") + enc("PING", "a", "b"))
    c.read_until(lambda b: b.count(b"\r\n-ERR") == 2 or b.count(b"-ERR") == 2)
    stats = r.info("commandstats")
    assert stats["cmdstat_ping"]["calls"] == 2
    assert stats["cmdstat_ping"]["failed_calls"] == 1
    assert stats["cmdstat_get"]["rejected_calls"] == 1
    assert stats["cmdstat_get"]["calls"] == 0
    assert stats["cmdstat_subscribe"]["calls"] == 1
    assert r.info("errorstats")["errorstat_ERR"]["count"] == 2


def test_many_messages_in_one_batch_reach_a_subscriber_in_order(raw, r):
    sub = raw()
    sub.send(enc("SUBSCRIBE", "q"))
    sub.read_until(lambda b: b.endswith(b":1\r\n"))
    pub = raw()
    pub.send(b"".join(enc("PUBLISH", "q", str(i)) for i in range(200)))
    assert pub.read_exact(4 * 200) == b":1\r\n" * 200
    expect(sub, b"".join(push(2, "message", "q", str(i)) for i in range(200)))


# --- client-output-buffer-limit --------------------------------------------------------

DEFAULT_OBUF_LIMITS = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


@pytest.fixture
def obuf_limits(r):
    """Sets client-output-buffer-limit for one test; the defaults come back afterwards."""
    yield lambda value: r.config_set("client-output-buffer-limit", value)
    r.config_set("client-output-buffer-limit", DEFAULT_OBUF_LIMITS)


def test_client_output_buffer_limit_config(r, obuf_limits):
    assert r.config_get("client-output-buffer-limit") == {
        "client-output-buffer-limit": DEFAULT_OBUF_LIMITS}
    # Each class given replaces its own limits; memory units and "replica" are understood.
    obuf_limits("PUBSUB 1mb 2kb 3 replica 1 1K 0")
    obuf_limits("")
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == (
        "normal 0 0 0 slave 1 1000 0 pubsub 1048576 2048 3")
    # The seconds are a C int: strtoll's value cut to 32 bits.
    obuf_limits("normal 1 2 4294967297")
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == (
        "normal 1 2 1 slave 1 1000 0 pubsub 1048576 2048 3")
    prefix = ("CONFIG SET failed (possibly related to argument 'client-output-buffer-limit')"
              " - ")
    bad = {
        "normal": "Wrong number of arguments in buffer limit configuration.",
        "normal 1 2 3 ": "Wrong number of arguments in buffer limit configuration.",
        "normal  1 2 3": "Wrong number of arguments in buffer limit configuration.",
        "master 1 2 3": "Invalid client class specified in buffer limit configuration.",
        "normal 1 2 3 foo 1 2 3": "Invalid client class specified in buffer limit "
                                  "configuration.",
        "normal 1x 2 3": "Error in hard, soft or soft_seconds setting in buffer limit "
                         "configuration.",
        "normal -1 2 3": "Error in hard, soft or soft_seconds setting in buffer limit "
                         "configuration.",
        "normal 1 2 -1": "Error in hard, soft or soft_seconds setting in buffer limit "
                         "configuration.",
        # Blanks alone: strtoll reads nothing, so the token is not a number.
        "normal 1 2 \t": "Error in hard, soft or soft_seconds setting in buffer limit "
                          "configuration.",
        "normal 1 2 2147483648": "Error in hard, soft or soft_seconds setting in buffer "
                                 "limit configuration.",
        "normal 1 2 3 pubsub 1 2 3x": "Error in hard, soft or soft_seconds setting in "
                                      "buffer limit configuration.",
    }
    for value, reason in bad.items():
        with pytest.raises(redis.ResponseError) as exc:
            r.config_set("client-output-buffer-limit", value)
        assert str(exc.value) == prefix + reason, value
    # Nothing of a refused value was applied, not even its valid first class.
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == (
        "normal 1 2 1 slave 1 1000 0 pubsub 1048576 2048 3")


def lazy_subscriber(target, channel: str) -> socket.socket:
    """A subscriber that never reads its messages (with a small receive window, so that
    the kernel holds little of them)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((target.host, target.port))
    if target.password:
        s.sendall(enc("AUTH", target.password))
        s.recv(100)
    s.sendall(enc("SUBSCRIBE", channel))
    got = b""
    while got.count(b"\r\n") < 6:
        got += s.recv(100)
    return s


def numsub(r, channel: str) -> int:
    return r.pubsub_numsub(channel)[0][1]


def publish_until_gone(r, channel: str, size: int, most: int) -> int:
    """Publishes ``size``-byte messages until ``channel`` has no subscriber left (at most
    ``most`` of them); how many it took."""
    payload = b"x" * size
    for n in range(1, most + 1):
        r.publish(channel, payload)
        if numsub(r, channel) == 0:
            return n
    return most + 1


def disconnections(r, target) -> int | None:
    """INFO's client_output_buffer_limit_disconnections (Redis 8 has it, 7.0 not)."""
    if not target.is_streamd and target.version < (8, 0):
        return None
    return r.info("stats")["client_output_buffer_limit_disconnections"]


def test_subscriber_over_the_hard_output_limit_is_closed(r, target, make_client, obuf_limits,
                                                        caplog):
    obuf_limits("pubsub 1mb 0 0")
    before = disconnections(r, target)
    healthy = make_client().pubsub()
    healthy.subscribe("small")
    assert healthy.get_message(timeout=2)["type"] == "subscribe"
    lazy = lazy_subscriber(target, "big")
    try:
        # Loopback buffers take a few MB; past them the server holds the rest itself.
        assert publish_until_gone(r, "big", 256 * 1024, 400) <= 400
        # The others are served on: the reading subscriber keeps its subscription.
        assert r.ping()
        assert r.publish("small", "hi") == 1
        msg = healthy.get_message(timeout=2)
        assert (msg["type"], msg["data"]) == ("message", b"hi")
        if before is not None:
            assert disconnections(r, target) == before + 1
        if target.is_streamd:  # Redis's log line, with the client's CLIENT LIST line
            assert any(rec.getMessage().startswith("Client id=")
                       and rec.getMessage().endswith(" scheduled to be closed ASAP for "
                                                     "overcoming of output buffer limits.")
                       for rec in caplog.records)
    finally:
        lazy.close()
        healthy.close()


def test_subscriber_over_the_soft_output_limit_too_long_is_closed(r, target, obuf_limits):
    obuf_limits("pubsub 0 1mb 10")
    lazy = lazy_subscriber(target, "big")
    try:
        payload = b"x" * (256 * 1024)
        for _ in range(40):  # 10 MB: well past what the loopback buffers take
            r.publish("big", payload)
        assert numsub(r, "big") == 1  # over the soft limit, but not for 10 seconds yet
        # It has been over the soft limit since the first of these messages; with 0
        # seconds allowed, the next message after a second boundary closes it.
        obuf_limits("pubsub 0 1mb 0")
        time.sleep(1.2)
        r.publish("big", payload)
        assert numsub(r, "big") == 0
        assert r.ping()
    finally:
        lazy.close()


def test_client_pause_write_holds_publish_and_spublish(r, raw):
    """PUBLISH and SPUBLISH write no key, but Redis may replicate them: CLIENT PAUSE WRITE
    holds them as it holds writes, even from being queued in MULTI."""
    sub = raw()
    sub.send(enc("SUBSCRIBE", "ch") + enc("SSUBSCRIBE", "ch"))
    sub.read_until(lambda b: b.count(b"subscribe") == 2)
    pauser, p, q = raw(), raw(), raw()
    pauser.send(enc("CLIENT", "PAUSE", "30000", "WRITE"))
    assert pauser.read_reply() == b"+OK\r\n"
    try:
        p.send(enc("PUBLISH", "ch", "m1"))
        q.send(enc("MULTI") + enc("SPUBLISH", "ch", "m2") + enc("EXEC"))
        assert q.read_reply() == b"+OK\r\n"
        pauser.send(enc("GET", "k"))  # a read goes on
        assert pauser.read_reply() == b"$-1\r\n"
        for c in (p, q, sub):
            assert c.read_until(lambda b: False, timeout=0.3) == b""
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert p.read_reply() == b":1\r\n"
    assert q.read_reply() == b"+QUEUED\r\n"
    assert q.read_reply() == b"*1\r\n:1\r\n"
    expect(sub, push(2, "message", "ch", "m1") + push(2, "smessage", "ch", "m2"))


def test_publish_flags_hide_may_replicate(call):
    # Redis keeps the flag that makes CLIENT PAUSE WRITE hold PUBLISH out of COMMAND INFO.
    for info in call("COMMAND", "INFO", "publish", "spublish"):
        assert info[2] == [b"pubsub", b"loading", b"stale", b"fast"]


def test_messages_to_itself_follow_each_reply_of_a_pipeline(raw, r, target):
    c = connect(raw, 3)
    c.send(enc("SUBSCRIBE", "a"))
    expect(c, push(3, "subscribe", "a", 1))
    c.send(enc("PUBLISH", "a", "x") + enc("PING") + enc("PUBLISH", "a", "y")
           + enc("UNSUBSCRIBE") + enc("PUBLISH", "a", "z"))
    expect(c, own_message_after(target, b":1\r\n", push(3, "message", "a", "x"))
           + b"+PONG\r\n"
           + own_message_after(target, b":1\r\n", push(3, "message", "a", "y"))
           + push(3, "unsubscribe", "a", 0) + b":0\r\n")


def test_messages_to_itself_follow_the_reply_when_it_subscribed_in_the_same_read(raw, r,
                                                                                 target):
    # Not a subscriber when the read starts: SUBSCRIBE makes it one mid-read, and the
    # PUBLISH after it must still see its reply before the message.
    c = connect(raw, 3)
    c.send(enc("SUBSCRIBE", "a") + enc("PUBLISH", "a", "x") + enc("PING"))
    expect(c, push(3, "subscribe", "a", 1)
           + own_message_after(target, b":1\r\n", push(3, "message", "a", "x"))
           + b"+PONG\r\n")
    # Leaving the last subscription in a read, then subscribing again in a later one.
    c.send(enc("UNSUBSCRIBE") + enc("PUBLISH", "a", "y"))
    expect(c, push(3, "unsubscribe", "a", 0) + b":0\r\n")
    c.send(enc("SUBSCRIBE", "a") + enc("PUBLISH", "a", "z"))
    expect(c, push(3, "subscribe", "a", 1)
           + own_message_after(target, b":1\r\n", push(3, "message", "a", "z")))


@pytest.mark.parametrize("resp", [2, 3])
def test_exec_reply_stays_whole_around_messages_to_itself(raw, r, target, resp):
    """Since Redis 7.2 the messages a transaction publishes to its own client come after
    EXEC's array; 7.0 wrote them inside it. A SUBSCRIBE's confirmations are its reply
    and stay in place."""
    c = connect(raw, resp)
    c.send(enc("MULTI") + enc("SUBSCRIBE", "a") + enc("PUBLISH", "a", "x")
           + enc("SET", "k", "v") + enc("PUBLISH", "a", "y") + enc("EXEC"))
    x, y = push(resp, "message", "a", "x"), push(resp, "message", "a", "y")
    if target.version >= (7, 2):
        exec_reply = b"*4\r\n" + push(resp, "subscribe", "a", 1) + b":1\r\n+OK\r\n:1\r\n" + x + y
    else:
        exec_reply = (b"*4\r\n" + push(resp, "subscribe", "a", 1) + x + b":1\r\n+OK\r\n" + y
                      + b":1\r\n")
    expect(c, b"+OK\r\n" + b"+QUEUED\r\n" * 4 + exec_reply)


@pytest.mark.parametrize("resp", [2, 3])
def test_ping_after_subscribe_in_the_same_transaction(raw, resp):
    # The SUBSCRIBE has run when PING does: over RESP2 the PING answers as a subscriber's
    # (a pong array), until an UNSUBSCRIBE later in the queue ends the subscriptions.
    c = connect(raw, resp)
    c.send(enc("MULTI") + enc("SUBSCRIBE", "a") + enc("PING") + enc("PING", "hi")
           + enc("UNSUBSCRIBE") + enc("PING") + enc("EXEC"))
    if resp == 2:
        pings = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n*2\r\n$4\r\npong\r\n$2\r\nhi\r\n"
    else:
        pings = b"+PONG\r\n$2\r\nhi\r\n"
    expect(c, b"+OK\r\n" + b"+QUEUED\r\n" * 5 + b"*5\r\n" + push(resp, "subscribe", "a", 1)
           + pings + push(resp, "unsubscribe", "a", 0) + b"+PONG\r\n")


def test_keyspace_events_to_itself_follow_the_reply(raw, r, target):
    r.config_set("notify-keyspace-events", "KEA")
    try:
        c = connect(raw, 3)
        c.send(enc("SUBSCRIBE", "__keyevent@0__:set"))
        expect(c, push(3, "subscribe", "__keyevent@0__:set", 1))
        event = push(3, "message", "__keyevent@0__:set", "k")
        c.send(enc("SET", "k", "1") + enc("GET", "k"))
        expect(c, own_message_after(target, b"+OK\r\n", event) + b"$1\r\n1\r\n")
        c.send(enc("MULTI") + enc("SET", "k", "2") + enc("GET", "k") + enc("EXEC"))
        if target.version >= (7, 2):
            expected = b"*2\r\n+OK\r\n$1\r\n2\r\n" + event
        else:
            expected = b"*2\r\n" + event + b"+OK\r\n$1\r\n2\r\n"
        expect(c, b"+OK\r\n+QUEUED\r\n+QUEUED\r\n" + expected)
    finally:
        r.config_set("notify-keyspace-events", "")


def test_events_of_a_woken_reader_follow_the_writers_reply_and_events(raw, r, target):
    """An XADD wakes an XREADGROUP whose consumer was deleted meanwhile: the writer gets its
    reply, then its own xadd event, then the event of the consumer the woken read creates
    again. The reader's own event: since Redis 7.2 the blocking call creates the consumer
    and its events follow each reply; 7.0 created it only when serving, event first."""
    r.config_set("notify-keyspace-events", "KEA")
    try:
        r.xgroup_create("s", "g", "$", mkstream=True)
        created = "__keyevent@0__:xgroup-createconsumer"
        b = connect(raw, 3)
        b.send(enc("SUBSCRIBE", created))
        expect(b, push(3, "subscribe", created, 1))
        b.send(enc("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"))
        b_event = push(3, "message", created, "s")
        expect(b, b_event if target.version >= (7, 2) else b"")
        assert r.xgroup_delconsumer("s", "g", "c1") == 0
        w = connect(raw, 3)
        w.send(enc("PSUBSCRIBE", "__keyevent@0__:x*"))
        expect(w, push(3, "psubscribe", "__keyevent@0__:x*", 1))
        w.send(enc("XADD", "s", "1-1", "f", "v"))
        expect(w, b"$3\r\n1-1\r\n"
               + push(3, "pmessage", "__keyevent@0__:x*", "__keyevent@0__:xadd", "s")
               + push(3, "pmessage", "__keyevent@0__:x*", created, "s"))
        served = b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
        expect(b, own_message_after(target, served, b_event))
    finally:
        r.config_set("notify-keyspace-events", "")
