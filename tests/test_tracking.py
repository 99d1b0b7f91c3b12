"""CLIENT TRACKING: server-assisted client-side caching, as Redis 7.0.15 sends it.

Replies and invalidation messages are compared on the raw bytes (RESP2 and RESP3).
"""

from __future__ import annotations

import time

import pytest
import redis

from tests.conftest import encode_request as enc, wait_for


def inval(*keys, null: bytes | None = None) -> bytes:
    """An invalidation push (RESP3): the keys, or a flush's null."""
    out = b">2\r\n$10\r\ninvalidate\r\n"
    if null is not None:
        return out + null
    out += b"*%d\r\n" % len(keys)
    for k in keys:
        out += b"$%d\r\n%s\r\n" % (len(k), k.encode())
    return out


def message(*keys, null: bytes | None = None) -> bytes:
    """An invalidation as a RESP2 message on __redis__:invalidate."""
    out = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
    if null is not None:
        return out + null
    out += b"*%d\r\n" % len(keys)
    for k in keys:
        out += b"$%d\r\n%s\r\n" % (len(k), k.encode())
    return out


def expect(conn, expected: bytes) -> None:
    assert conn.read_exact(len(expected)) == expected
    assert conn.read_until(lambda b: False, timeout=0.05) == b""  # nothing more


def nothing(conn) -> None:
    assert conn.read_until(lambda b: False, timeout=0.1) == b""


def connect(raw, resp: int = 3, *tracking):
    c = raw()
    if resp == 3:
        c.send(enc("HELLO", "3"))
        c.read_reply()
    if tracking:
        c.send(enc("CLIENT", "TRACKING", *tracking))
        assert c.read_reply() == b"+OK\r\n"
    return c


def run(conn, *args) -> bytes:
    conn.send(enc(*args))
    return conn.read_reply()


def client_id(conn) -> int:
    return int(run(conn, "CLIENT", "ID")[1:-2])


# --- default mode ---------------------------------------------------------------------------
def test_a_read_key_is_invalidated_once_by_another_clients_write(raw):
    a = connect(raw, 3, "ON")
    b = connect(raw, 2)
    assert run(a, "GET", "k") == b"_\r\n"
    assert run(b, "SET", "k", "v") == b"+OK\r\n"
    expect(a, inval("k"))
    # Forgotten after the message: the next write says nothing until k is read again.
    assert run(b, "SET", "k", "w") == b"+OK\r\n"
    nothing(a)
    # Every key of a read-only command counts, read or not found, and even when the
    # command fails on the key's type.
    assert run(b, "HSET", "h", "f", "v") == b":1\r\n"
    a.send(enc("MGET", "k", "x1") + enc("GET", "h") + enc("EXISTS", "x2"))
    a.read_until(lambda buf: buf.endswith(b":0\r\n"))
    assert run(b, "MSET", "x1", "1", "x2", "2", "h", "s") == b"+OK\r\n"
    expect(a, inval("x1") + inval("x2") + inval("h"))


def test_own_writes_are_invalidated_after_their_reply(raw):
    a = connect(raw, 3, "ON")
    a.send(enc("GET", "k") + enc("SET", "k", "x") + enc("GET", "k") + enc("SET", "k", "y"))
    expect(a, b"_\r\n+OK\r\n" + inval("k") + b"$1\r\nx\r\n+OK\r\n" + inval("k"))


def test_noloop_leaves_out_the_clients_own_writes(raw):
    a = connect(raw, 3, "ON", "NOLOOP")
    b = connect(raw, 2)
    a.send(enc("GET", "k") + enc("SET", "k", "1") + enc("GET", "k"))
    expect(a, b"_\r\n+OK\r\n$1\r\n1\r\n")
    assert run(b, "SET", "k", "2") == b"+OK\r\n"
    expect(a, inval("k"))


def test_a_transactions_invalidations_follow_the_exec_array(raw):
    a = connect(raw, 3, "ON")
    a.send(enc("MGET", "k", "k2"))
    a.read_reply()
    a.send(enc("MULTI") + enc("SET", "k", "1") + enc("SET", "k2", "1") + enc("EXEC"))
    expect(a, b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n+OK\r\n" + inval("k") + inval("k2"))
    # Reads inside EXEC are remembered too.
    a.send(enc("MULTI") + enc("GET", "k") + enc("EXEC"))
    expect(a, b"+OK\r\n+QUEUED\r\n*1\r\n$1\r\n1\r\n")
    b = connect(raw, 2)
    run(b, "DEL", "k")
    expect(a, inval("k"))


def test_keys_are_tracked_by_name_across_databases(raw):
    a = connect(raw, 3, "ON")
    b = connect(raw, 2)
    assert run(a, "GET", "q") == b"_\r\n"
    run(b, "SELECT", "1")
    assert run(b, "SET", "q", "1") == b"+OK\r\n"
    expect(a, inval("q"))


def test_which_writes_invalidate(raw):
    a = connect(raw, 3, "ON")
    b = connect(raw, 2)

    def read(*keys):
        a.send(enc("MGET", *keys))
        a.read_reply()

    read("d")
    assert run(b, "DEL", "d") == b":0\r\n"  # nothing deleted: nothing changed
    nothing(a)
    run(b, "SET", "d", "1")
    expect(a, inval("d"))
    read("d")
    assert run(b, "SETNX", "d", "2") == b":0\r\n"
    nothing(a)
    assert run(b, "EXPIRE", "d", "100") == b":1\r\n"
    expect(a, inval("d"))
    read("d")
    assert run(b, "PERSIST", "d") == b":1\r\n"
    expect(a, inval("d"))
    read("d", "e")
    assert run(b, "RENAME", "d", "e") == b"+OK\r\n"
    expect(a, inval("d") + inval("e"))
    read("e")
    assert run(b, "MOVE", "e", "3") == b":1\r\n"
    expect(a, inval("e"))
    read("s")
    assert run(b, "XADD", "s", "1-1", "f", "v") == b"$3\r\n1-1\r\n"
    expect(a, inval("s"))
    a.send(enc("XREAD", "STREAMS", "s", "0"))
    a.read_reply()
    run(b, "XADD", "s", "2-1", "f", "v")
    expect(a, inval("s"))


@pytest.mark.min_redis("7.4")
def test_hash_field_ttl_writes_invalidate(raw):
    a = connect(raw, 3, "ON")
    b = connect(raw, 2)
    run(b, "HSET", "h", "f", "v", "g", "w")
    assert run(a, "HGET", "h", "f") == b"$1\r\nv\r\n"
    assert run(b, "HEXPIRE", "h", "1000", "FIELDS", "1", "f") == b"*1\r\n:1\r\n"
    expect(a, inval("h"))
    run(a, "HGET", "h", "f")
    assert run(b, "HPEXPIREAT", "h", "1", "FIELDS", "1", "f") == b"*1\r\n:2\r\n"
    expect(a, inval("h"))


def test_swapdb_invalidates_nothing_in_7_0(raw):
    a = connect(raw, 3, "ON")
    b = connect(raw, 2)
    run(b, "SET", "s", "1")
    run(a, "GET", "s")
    assert run(b, "SWAPDB", "0", "1") == b"+OK\r\n"
    nothing(a)
    run(b, "SWAPDB", "0", "1")
    run(b, "SET", "s", "2")
    expect(a, inval("s"))


def test_an_expired_key_is_invalidated(raw):
    a = connect(raw, 3, "ON")
    b = connect(raw, 2)
    run(b, "SET", "e", "1", "PX", "30")
    assert run(a, "GET", "e") in (b"$1\r\n1\r\n", b"_\r\n")
    # Expired by the cron, or by this GET, either way the reader hears of it.
    got = b""
    for _ in range(50):
        got += a.read_until(lambda buf: buf.startswith(b">"), timeout=0.1)
        if got.startswith(b">"):
            break
        b.send(enc("GET", "e"))
        b.read_reply()
    assert got == inval("e")


def test_flush_sends_a_null_to_every_tracking_client_and_forgets_all_keys(raw):
    a = connect(raw, 3, "ON")
    b = connect(raw, 3, "ON", "BCAST")
    c = connect(raw, 2)
    run(a, "GET", "k")
    run(c, "SELECT", "5")
    assert run(c, "FLUSHDB") == b"+OK\r\n"  # another, empty database
    expect(a, inval(null=b"_\r\n"))
    expect(b, inval(null=b"_\r\n"))
    run(c, "SELECT", "0")
    run(c, "SET", "k", "1")
    nothing(a)
    b.read_until(lambda buf: buf.endswith(b"\r\n$1\r\nk\r\n"))
    # The flushing client's own null follows its reply.
    assert run(a, "FLUSHALL") == b"+OK\r\n"
    expect(a, inval(null=b"_\r\n"))


def test_off_keeps_the_keys_read_and_reset_turns_tracking_off(raw):
    a = connect(raw, 3, "ON")
    b = connect(raw, 2)
    run(a, "MGET", "k", "j")
    assert run(a, "CLIENT", "TRACKING", "OFF") == b"+OK\r\n"
    run(b, "SET", "k", "1")
    nothing(a)
    # Turned on again, the client hears of the reads it made before.
    run(a, "CLIENT", "TRACKING", "ON")
    run(b, "SET", "j", "1")
    expect(a, inval("j"))
    run(a, "GET", "k")
    assert run(a, "RESET") == b"+RESET\r\n"
    a.send(enc("HELLO", "3"))
    a.read_reply()
    run(b, "SET", "k", "2")
    nothing(a)
    assert run(a, "CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n"
        b"$8\r\nprefixes\r\n*0\r\n")


def test_resp2_without_redirect_is_accepted_and_sent_nothing(raw):
    a = connect(raw, 2, "ON")
    b = connect(raw, 2)
    run(a, "GET", "k")
    run(b, "SET", "k", "1")
    nothing(a)


# --- OPTIN / OPTOUT and CLIENT CACHING -------------------------------------------------------
def test_optin_tracks_only_after_caching_yes(raw):
    c = connect(raw, 3, "ON", "OPTIN")
    b = connect(raw, 2)
    c.send(enc("GET", "o1") + enc("CLIENT", "CACHING", "YES") + enc("GET", "o2")
           + enc("GET", "o3"))
    c.read_until(lambda buf: buf.count(b"_\r\n") == 3)
    run(b, "MSET", "o1", "1", "o2", "1", "o3", "1")
    expect(c, inval("o2"))
    # The flag lasts through a transaction and CLIENT's subcommands, not past another
    # command.
    c.send(enc("CLIENT", "CACHING", "YES") + enc("MULTI") + enc("GET", "o1") + enc("GET", "o2")
           + enc("EXEC") + enc("GET", "o3"))
    c.read_until(lambda buf: buf.endswith(b"*2\r\n$1\r\n1\r\n$1\r\n1\r\n$1\r\n1\r\n"))
    run(b, "MSET", "o1", "2", "o2", "2", "o3", "2")
    expect(c, inval("o1") + inval("o2"))
    c.send(enc("CLIENT", "CACHING", "YES") + enc("CLIENT", "ID") + enc("GET", "o1")
           + enc("CLIENT", "CACHING", "YES") + enc("PING") + enc("GET", "o2"))
    c.read_until(lambda buf: buf.endswith(b"+PONG\r\n$1\r\n2\r\n"))
    run(b, "MSET", "o1", "3", "o2", "3")
    expect(c, inval("o1"))


def test_optout_tracks_all_but_after_caching_no(raw):
    c = connect(raw, 3, "ON", "OPTOUT")
    b = connect(raw, 2)
    c.send(enc("GET", "o1") + enc("CLIENT", "CACHING", "NO") + enc("GET", "o2")
           + enc("GET", "o3"))
    c.read_until(lambda buf: buf.count(b"_\r\n") == 3)
    run(b, "MSET", "o1", "1", "o2", "1", "o3", "1")
    expect(c, inval("o1") + inval("o3"))


@pytest.mark.parametrize("tracking, args, error", [
    (None, ("YES",), "CLIENT CACHING can be called only when the client is in tracking mode "
                     "with OPTIN or OPTOUT mode enabled"),
    (None, ("MAYBE",), "CLIENT CACHING can be called only when the client is in tracking "
                       "mode with OPTIN or OPTOUT mode enabled"),
    (("ON",), ("YES",), "CLIENT CACHING YES is only valid when tracking is enabled in OPTIN "
                        "mode."),
    (("ON",), ("NO",), "CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT "
                       "mode."),
    (("ON",), ("maybe",), "syntax error"),
    (("ON", "OPTIN"), ("no",), "CLIENT CACHING NO is only valid when tracking is enabled in "
                               "OPTOUT mode."),
    (("ON", "OPTOUT"), ("yes",), "CLIENT CACHING YES is only valid when tracking is enabled "
                                 "in OPTIN mode."),
    (("ON", "BCAST"), ("YES",), "CLIENT CACHING YES is only valid when tracking is enabled in "
                                "OPTIN mode."),
    (None, (), "wrong number of arguments for 'client|caching' command"),
    (None, ("YES", "x"), "wrong number of arguments for 'client|caching' command"),
])
def test_client_caching_errors(raw, tracking, args, error):
    c = connect(raw, 2, *(tracking or ()))
    assert run(c, "CLIENT", "CACHING", *args) == b"-ERR " + error.encode() + b"\r\n"


# --- CLIENT TRACKING's validation ------------------------------------------------------------
@pytest.mark.parametrize("args, error", [
    (("ON", "PREFIX", "a"), "PREFIX option requires BCAST mode to be enabled"),
    (("ON", "PREFIX", "a", "OPTIN", "OPTOUT"), "PREFIX option requires BCAST mode to be enabled"),
    (("ON", "BCAST", "OPTIN"), "OPTIN and OPTOUT are not compatible with BCAST"),
    (("ON", "BCAST", "OPTIN", "OPTOUT"), "OPTIN and OPTOUT are not compatible with BCAST"),
    (("ON", "OPTIN", "OPTOUT"), "You can't specify both OPTIN mode and OPTOUT mode"),
    (("ON", "REDIRECT", "999999"), "The client ID you want redirect to does not exist"),
    (("ON", "REDIRECT", "0"), "The client ID you want redirect to does not exist"),
    (("ON", "REDIRECT", "-1"), "The client ID you want redirect to does not exist"),
    (("OFF", "REDIRECT", "999999"), "The client ID you want redirect to does not exist"),
    (("ON", "REDIRECT", "x"), "value is not an integer or out of range"),
    (("ON", "REDIRECT", "99999999999999999999"), "value is not an integer or out of range"),
    (("ON", "PREFIX", "a", "REDIRECT", "999999"),
     "The client ID you want redirect to does not exist"),
    (("ON", "FOO"), "syntax error"),
    (("MAYBE",), "syntax error"),
    (("ON", "PREFIX"), "syntax error"),
    (("ON", "REDIRECT"), "syntax error"),
    (("ON", "OPTIN", "OPTOUT", "FOO"), "syntax error"),
    (("OFF", "FOO"), "syntax error"),
    (("ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"),
     "Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client "
     "must not overlap."),
    (("ON", "BCAST", "PREFIX", "a", "PREFIX", "ab"),
     "Prefix 'a' overlaps with another provided prefix 'ab'. Prefixes for a single client "
     "must not overlap."),
    (("ON", "BCAST", "PREFIX", "", "PREFIX", "z"),
     "Prefix '' overlaps with another provided prefix 'z'. Prefixes for a single client "
     "must not overlap."),
    ((), "wrong number of arguments for 'client|tracking' command"),
])
def test_client_tracking_errors(raw, args, error):
    c = connect(raw, 2)
    assert run(c, "CLIENT", "TRACKING", *args) == b"-ERR " + error.encode() + b"\r\n"
    assert run(c, "CLIENT", "GETREDIR") == b":-1\r\n"  # still off


def test_redirect_twice_is_refused(raw):
    c = connect(raw, 2)
    me = client_id(c)
    assert run(c, "CLIENT", "TRACKING", "ON", "REDIRECT", str(me), "REDIRECT", str(me)) == (
        b"-ERR A client can only redirect to a single other client\r\n")


def test_switching_modes_while_on_is_refused(raw):
    c = connect(raw, 2, "ON", "OPTIN")
    switch = (b"-ERR You can't switch %s before disabling tracking for this client, "
              b"and then re-enabling it with a different mode.\r\n")
    assert run(c, "CLIENT", "TRACKING", "ON", "OPTOUT") == switch % b"OPTIN/OPTOUT mode"
    assert run(c, "CLIENT", "TRACKING", "ON", "BCAST") == switch % b"BCAST mode on/off"
    # Checked before the mode switch: both at once.
    assert run(c, "CLIENT", "TRACKING", "ON", "OPTOUT", "OPTIN") == (
        b"-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n")
    assert run(c, "CLIENT", "TRACKING", "ON") == b"+OK\r\n"  # plain mode from OPTIN is fine
    assert run(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a") == (
        switch % b"BCAST mode on/off")
    run(c, "CLIENT", "TRACKING", "OFF")
    assert run(c, "CLIENT", "TRACKING", "ON", "BCAST") == b"+OK\r\n"
    assert run(c, "CLIENT", "TRACKING", "ON") == switch % b"BCAST mode on/off"
    assert run(c, "CLIENT", "TRACKING", "ON", "BCAST", "OPTIN") == (
        b"-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n")


def test_new_prefixes_may_not_overlap_the_clients_own(raw):
    c = connect(raw, 2, "ON", "BCAST", "PREFIX", "ab")
    overlap = (b"-ERR Prefix '%s' overlaps with an existing prefix '%s'. Prefixes for a "
               b"single client must not overlap.\r\n")
    assert run(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "abc") == overlap % (b"abc", b"ab")
    assert run(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab") == overlap % (b"ab", b"ab")
    # Added to those already there, listed in byte order.
    assert run(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "c", "PREFIX", "b") == b"+OK\r\n"
    assert run(c, "CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$5\r\nbcast\r\n$8\r\nredirect\r\n:0\r\n"
        b"$8\r\nprefixes\r\n*3\r\n$2\r\nab\r\n$1\r\nb\r\n$1\r\nc\r\n")
    assert run(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "") == overlap % (b"", b"ab")


# --- introspection --------------------------------------------------------------------------
def test_trackinginfo_and_getredir(raw):
    a = connect(raw, 3)
    assert run(a, "CLIENT", "GETREDIR") == b":-1\r\n"
    run(a, "CLIENT", "TRACKING", "ON")
    assert run(a, "CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~1\r\n$2\r\non\r\n$8\r\nredirect\r\n:0\r\n"
        b"$8\r\nprefixes\r\n*0\r\n")
    assert run(a, "CLIENT", "GETREDIR") == b":0\r\n"
    run(a, "CLIENT", "TRACKING", "ON", "OPTIN", "NOLOOP")
    run(a, "CLIENT", "CACHING", "YES")
    assert run(a, "CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~4\r\n$2\r\non\r\n$5\r\noptin\r\n$11\r\ncaching-yes\r\n"
        b"$6\r\nnoloop\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n")
    b = connect(raw, 2)
    bid = client_id(b)
    run(a, "CLIENT", "TRACKING", "OFF")
    run(a, "CLIENT", "TRACKING", "ON", "OPTOUT", "REDIRECT", str(bid))
    run(a, "CLIENT", "CACHING", "NO")
    assert run(a, "CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~3\r\n$2\r\non\r\n$6\r\noptout\r\n$10\r\ncaching-no\r\n"
        b"$8\r\nredirect\r\n:" + str(bid).encode() + b"\r\n$8\r\nprefixes\r\n*0\r\n")
    assert run(a, "CLIENT", "GETREDIR") == b":%d\r\n" % bid
    run(a, "CLIENT", "TRACKING", "OFF")
    assert run(a, "CLIENT", "GETREDIR") == b":-1\r\n"
    assert run(a, "CLIENT", "GETREDIR", "x") == (
        b"-ERR wrong number of arguments for 'client|getredir' command\r\n")
    assert run(a, "CLIENT", "TRACKINGINFO", "x") == (
        b"-ERR wrong number of arguments for 'client|trackinginfo' command\r\n")


def _field(line: bytes, name: bytes) -> bytes:
    return next(f for f in line.split() if f.startswith(name + b"=")).split(b"=", 1)[1]


def test_client_list_shows_tracking_flags_and_redirect(raw):
    a = connect(raw, 2)
    b = connect(raw, 2)
    bid = client_id(b)
    assert _field(run(a, "CLIENT", "INFO"), b"redir") == b"-1"
    run(a, "CLIENT", "TRACKING", "ON")
    info = run(a, "CLIENT", "INFO")
    assert (_field(info, b"flags"), _field(info, b"redir")) == (b"t", b"0")
    run(a, "CLIENT", "TRACKING", "ON", "REDIRECT", str(bid))
    assert _field(run(a, "CLIENT", "INFO"), b"redir") == str(bid).encode()
    run(a, "CLIENT", "TRACKING", "OFF")
    run(a, "CLIENT", "TRACKING", "ON", "BCAST")
    assert _field(run(a, "CLIENT", "INFO"), b"flags") == b"tB"
    aid = client_id(a)
    listed = run(b, "CLIENT", "LIST", "ID", str(aid))
    assert _field(listed, b"flags") == b"tB"


def test_info_counts_tracking(raw, r):
    a = connect(raw, 3, "ON")
    run(a, "MGET", "k", "j")
    b = connect(raw, 3, "ON")
    run(b, "GET", "k")
    c = connect(raw, 3, "ON", "BCAST", "PREFIX", "p", "PREFIX", "q")
    assert r.info("clients")["tracking_clients"] == 3
    stats = r.info("stats")
    assert (stats["tracking_total_keys"], stats["tracking_total_items"],
            stats["tracking_total_prefixes"]) == (2, 3, 2)
    run(c, "CLIENT", "TRACKING", "OFF")
    r.set("k", "1")
    stats = r.info("stats")
    assert (stats["tracking_total_keys"], stats["tracking_total_items"],
            stats["tracking_total_prefixes"]) == (1, 1, 0)


@pytest.mark.parametrize("sub, arity", [("tracking", -3), ("caching", 3), ("getredir", 2),
                                        ("trackinginfo", 2)])
def test_command_info_of_the_tracking_subcommands(raw, sub, arity):
    c = connect(raw, 2)
    name = b"client|" + sub.encode()
    assert run(c, "COMMAND", "INFO", name) == (
        b"*1\r\n*10\r\n$%d\r\n%s\r\n:%d\r\n*3\r\n+noscript\r\n+loading\r\n+stale\r\n"
        b":0\r\n:0\r\n:0\r\n*2\r\n+@slow\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n"
        % (len(name), name, arity))


# --- REDIRECT -------------------------------------------------------------------------------
def test_redirect_to_a_resp2_subscriber(raw):
    b = connect(raw, 2)
    bid = str(client_id(b))
    r2 = connect(raw, 2, "ON", "REDIRECT", bid)
    w = connect(raw, 2)
    run(r2, "GET", "k")
    run(w, "SET", "k", "1")
    nothing(b)  # not subscribed: RESP2 has no way to deliver it
    run(r2, "GET", "k")
    b.send(enc("SUBSCRIBE", "__redis__:invalidate"))
    b.read_reply()
    run(w, "SET", "k", "2")
    expect(b, message("k"))
    nothing(r2)
    run(r2, "GET", "k")
    run(w, "FLUSHALL")
    expect(b, message(null=b"$-1\r\n"))
    # Any subscription will do.
    b.send(enc("UNSUBSCRIBE") + enc("SUBSCRIBE", "other"))
    b.read_reply()
    b.read_reply()
    run(r2, "GET", "k")
    run(w, "SET", "k", "3")
    expect(b, message("k"))


def test_redirect_to_a_resp3_client(raw):
    c = connect(raw, 3)
    cid = str(client_id(c))
    r2 = connect(raw, 2, "ON", "REDIRECT", cid)
    w = connect(raw, 2)
    run(r2, "GET", "k")
    run(w, "SET", "k", "1")
    expect(c, inval("k"))
    # A flush's null is in the tracking client's protocol.
    run(w, "FLUSHDB")
    expect(c, inval(null=b"$-1\r\n"))
    # BCAST too.
    run(r2, "CLIENT", "TRACKING", "OFF")
    run(r2, "CLIENT", "TRACKING", "ON", "REDIRECT", cid, "BCAST")
    run(w, "SET", "zz", "1")
    expect(c, inval("zz"))


def test_a_redirect_target_gone_breaks_the_redirect(raw):
    r3 = connect(raw, 3)
    x = connect(raw, 2)
    xid = client_id(x)
    run(r3, "CLIENT", "TRACKING", "ON", "REDIRECT", str(xid))
    run(r3, "GET", "k")
    x.sock.close()
    w = connect(raw, 2)
    assert wait_for(lambda: b"id=%d " % xid not in run(w, "CLIENT", "LIST"))
    run(w, "SET", "k", "1")
    broken = b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % xid
    expect(r3, broken)
    assert run(r3, "CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$15\r\nbroken_redirect\r\n$8\r\nredirect\r\n"
        b":" + str(xid).encode() + b"\r\n$8\r\nprefixes\r\n*0\r\n")
    assert _field(run(r3, "CLIENT", "INFO"), b"flags") == b"tR"
    assert run(r3, "CLIENT", "GETREDIR") == b":%d\r\n" % xid
    # Own writes: after the reply.
    r3.send(enc("GET", "k") + enc("SET", "k", "2"))
    expect(r3, b"$1\r\n1\r\n+OK\r\n" + broken)
    assert run(r3, "CLIENT", "TRACKING", "ON", "REDIRECT", str(xid)) == (
        b"-ERR The client ID you want redirect to does not exist\r\n")


# --- BCAST ----------------------------------------------------------------------------------
def test_bcast_sends_each_prefixs_changed_keys_in_one_message(raw):
    b = connect(raw, 3, "ON", "BCAST", "PREFIX", "a", "PREFIX", "b")
    w = connect(raw, 2)
    # Nothing read is remembered in BCAST mode; keys under no prefix are not sent.
    run(b, "GET", "c1")
    assert run(w, "MSET", "a2", "1", "a1", "1", "b1", "1", "c1", "1") == b"+OK\r\n"
    expect(b, inval("a1", "a2") + inval("b1"))
    # A pipeline's writes, read together, go in one message per prefix.
    w.send(enc("SET", "a3", "1") + enc("SET", "b3", "1") + enc("SET", "a0", "1"))
    expect(b, inval("a0", "a3") + inval("b3"))
    # The client's own write: its message follows the reply.
    b.send(enc("SET", "a9", "1"))
    expect(b, b"+OK\r\n" + inval("a9"))


def test_bcast_noloop_leaves_out_the_clients_own_keys(raw):
    b = connect(raw, 3, "ON", "BCAST", "NOLOOP")
    w = connect(raw, 2)
    b.send(enc("MSET", "x", "1", "y", "1"))
    expect(b, b"+OK\r\n")
    run(w, "SET", "x", "2")
    expect(b, inval("x"))
    assert run(b, "FLUSHDB") == b"+OK\r\n"
    expect(b, inval(null=b"_\r\n"))


def test_bcast_noloop_hears_of_its_own_key_expiring(raw, r):
    # An expiry is no command's change: NOLOOP does not hold it back, even when the client's
    # own lookup expires the key (the cron slowed down so that it mostly does).
    hz = r.config_get("hz")["hz"]
    r.config_set("hz", 1)
    try:
        b = connect(raw, 3, "ON", "BCAST", "NOLOOP", "PREFIX", "e")
        b.send(enc("SET", "e1", "1", "PX", "30"))
        assert b.read_exact(5) == b"+OK\r\n"  # its own write: no message
        got = b""
        for _ in range(300):
            time.sleep(0.01)
            b.send(enc("GET", "e1"))  # expires it if the cron has not yet
            got = b.read_until(lambda buf: buf == b"$1\r\n1\r\n" or buf.startswith(b"_\r\n")
                               or b">" in buf, timeout=1)
            if got != b"$1\r\n1\r\n":
                break
        # Redis may send it only at its next event-loop iteration, when the cron's expiry
        # cycle took the key.
        if not got.endswith(b"e1\r\n"):
            got += b.read_until(lambda buf: buf.endswith(b"e1\r\n"), timeout=3)
        assert got.replace(b"_\r\n", b"").replace(b"$1\r\n1\r\n", b"") == inval("e1")
    finally:
        r.config_set("hz", hz)


def test_bcast_without_prefix_tracks_everything(raw):
    b = connect(raw, 3, "ON", "BCAST")
    assert run(b, "CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$5\r\nbcast\r\n$8\r\nredirect\r\n:0\r\n"
        b"$8\r\nprefixes\r\n*1\r\n$0\r\n\r\n")
    w = connect(raw, 2)
    run(w, "SET", "anything", "1")
    expect(b, inval("anything"))


# --- a real client --------------------------------------------------------------------------
# redis-py enables its cache only on servers from 7.4 on (it refuses older ones).
@pytest.mark.min_redis("7.4")
def test_redis_py_client_side_cache_sees_another_clients_write(target, r):
    from redis.cache import CacheConfig

    cached = redis.Redis(host=target.host, port=target.port, db=target.db,
                         password=target.password, protocol=3, cache_config=CacheConfig(),
                         single_connection_client=True)
    try:
        r.set("k", "v1")
        assert cached.get("k") == b"v1"
        assert cached.get_cache().size == 1
        r.set("k", "v2")
        assert wait_for(lambda: cached.get("k") == b"v2")
        assert cached.get_cache().size == 1  # cached again, with the new value
    finally:
        cached.close()


@pytest.mark.streamd_only
def test_the_reads_of_clients_gone_are_dropped_with_the_last_tracking_client(raw, r):
    a = connect(raw, 3, "ON")
    run(a, "MGET", "k", "j")
    b = connect(raw, 3)
    run(b, "CLIENT", "TRACKING", "ON")
    run(b, "GET", "k")
    run(b, "CLIENT", "TRACKING", "OFF")  # b's read stays: it may turn tracking on again
    a.sock.close()
    assert wait_for(lambda: r.info("clients")["tracking_clients"] == 0)
    stats = r.info("stats")
    assert (stats["tracking_total_keys"], stats["tracking_total_items"]) == (1, 1)
    run(b, "CLIENT", "TRACKING", "ON")
    r.set("k", "1")
    expect(b, inval("k"))


@pytest.mark.min_redis("7.2")
def test_command_docs_of_client_tracking(call):
    docs = call("COMMAND", "DOCS", "client|tracking")
    docs = dict(zip(docs[1][::2], docs[1][1::2]))
    assert docs[b"summary"] == b"Controls server-assisted client-side caching for the connection."
    names = [dict(zip(a[::2], a[1::2]))[b"name"] for a in docs[b"arguments"]]
    assert names == [b"status", b"client-id", b"prefix", b"BCAST", b"OPTIN", b"OPTOUT",
                     b"NOLOOP"]
