"""Connection commands and the client handshake (HELLO, AUTH, CLIENT, SELECT, RESET)."""

from __future__ import annotations

import contextlib
import re
import socket
import time

import pytest
import redis

from tests.conftest import encode_request, wait_for


def test_ping_echo(r, raw):
    assert r.execute_command("PING") is True
    c = raw()  # redis-py turns any PING reply into a bool, so check the message raw
    c.send(b"PING hi\r\n")
    assert c.read_reply() == b"$2\r\nhi\r\n"
    assert r.echo("x y") == b"x y"
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'ping'"):
        r.execute_command("PING", "a", "b")


def test_hello_reply_shapes(r, target):
    reply = r.execute_command("HELLO", "2")
    flat = dict(zip(reply[::2], reply[1::2]))
    assert list(flat)[:7] == [b"server", b"version", b"proto", b"id", b"mode", b"role",
                              b"modules"]
    assert flat[b"proto"] == 2 and flat[b"mode"] == b"standalone"
    assert flat[b"role"] == b"master" and flat[b"modules"] == []
    assert flat[b"id"] == r.client_id()


def test_hello_errors(r):
    with pytest.raises(redis.ResponseError, match="^Protocol version is not an integer"):
        r.execute_command("HELLO", "x")
    with pytest.raises(redis.ResponseError, match="unsupported protocol version"):
        r.execute_command("HELLO", "4")
    with pytest.raises(redis.ResponseError, match="^Syntax error in HELLO option 'BOGUS'"):
        r.execute_command("HELLO", "2", "BOGUS")


def test_hello3_switches_to_resp3_and_setname(r3):
    info = r3.execute_command("HELLO", "3", "SETNAME", "me")
    assert info[b"proto"] == 3
    assert r3.client_getname() in (b"me", "me")


@pytest.mark.min_redis("7.2")
def test_redis_py_resp3_handshake_works(r3):
    # redis-py sends HELLO 3 and CLIENT SETINFO on connect
    assert r3.ping() is True
    assert b"lib-name=redis-py" in r3.execute_command("CLIENT", "INFO")


def test_client_names_and_ids(r, make_client):
    other = make_client()
    assert other.client_id() != r.client_id()
    r.client_setname("conn-1")
    assert r.client_getname() in (b"conn-1", "conn-1")
    with pytest.raises(redis.ResponseError, match="Client names cannot contain spaces"):
        r.client_setname("a b")
    listing = r.execute_command("CLIENT", "LIST")
    assert b"name=conn-1" in listing
    assert listing.count(b"\n") >= 2
    only_me = r.execute_command("CLIENT", "LIST", "ID", str(r.client_id()))
    assert only_me.count(b"\n") == 1 and b"name=conn-1" in only_me


@pytest.mark.min_redis("7.2")
def test_client_setinfo(r):
    assert r.execute_command("CLIENT", "SETINFO", "LIB-NAME", "mylib") == b"OK"
    assert r.execute_command("CLIENT", "SETINFO", "lib-ver", "1.0") == b"OK"
    info = r.execute_command("CLIENT", "INFO")
    assert b"lib-name=mylib" in info and b"lib-ver=1.0" in info
    with pytest.raises(redis.ResponseError, match="Unrecognized option 'bogus'"):
        r.execute_command("CLIENT", "SETINFO", "bogus", "x")
    with pytest.raises(redis.ResponseError, match="cannot contain spaces"):
        r.execute_command("CLIENT", "SETINFO", "LIB-NAME", "a b")


def test_client_unknown_subcommand(r):
    with pytest.raises(redis.ResponseError, match=r"^unknown subcommand 'nope'. Try CLIENT HELP."):
        r.execute_command("CLIENT", "nope")
    with pytest.raises(redis.ResponseError,
                       match=r"^wrong number of arguments for 'client\|setname' command"):
        r.execute_command("CLIENT", "SETNAME")


def test_client_kill_by_id(r, make_client):
    victim = make_client()
    vid = victim.client_id()
    assert r.execute_command("CLIENT", "KILL", "ID", str(vid)) == 1
    assert r.execute_command("CLIENT", "KILL", "ID", str(vid)) == 0
    with pytest.raises(redis.ResponseError, match="No such client"):
        r.execute_command("CLIENT", "KILL", "1.2.3.4:5")


@pytest.mark.min_redis("7.2")
def test_client_no_evict_no_touch_pause(r):
    assert r.execute_command("CLIENT", "NO-EVICT", "on") == b"OK"
    assert r.execute_command("CLIENT", "NO-TOUCH", "off") == b"OK"
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("CLIENT", "NO-EVICT", "maybe")
    assert r.execute_command("CLIENT", "PAUSE", "10") == b"OK"
    assert r.execute_command("CLIENT", "UNPAUSE") == b"OK"


def test_select(r, call):
    r.set("k", "db0")
    assert call("SELECT", "1") == b"OK"
    assert call("GET", "k") is None
    call("SELECT", "0")
    assert call("GET", "k") == b"db0"
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        r.execute_command("SELECT", "16")
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        r.execute_command("SELECT", "x")
    # The index is a C int: beyond it a range error of its own, beyond int64 the usual one.
    with pytest.raises(redis.ResponseError) as err:
        r.execute_command("SELECT", "3000000000")
    assert str(err.value) == ("value is out of range, value must between -2147483648 and "
                              "2147483647")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.execute_command("SELECT", "99999999999999999999")
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        r.execute_command("SELECT", "-1")


def test_reset(raw):
    c = raw()
    c.send(b"HELLO 3\r\n")
    c.read_reply()
    c.send(b"SELECT 2\r\nCLIENT SETNAME n\r\nMULTI\r\nRESET\r\nCLIENT GETNAME\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+RESET\r\n"
    assert c.read_reply() == b"$-1\r\n"  # back to RESP2, name cleared, no MULTI


@pytest.fixture
def password(r):
    r.config_set("requirepass", "s3cret")
    yield "s3cret"
    admin = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                        port=r.connection_pool.connection_kwargs["port"],
                        password="s3cret", protocol=2)
    admin.config_set("requirepass", "")
    admin.close()


def test_auth_without_password_configured(call):
    with pytest.raises(redis.RedisError, match="called without any password configured"):
        call("AUTH", "x")


def test_auth_flow(raw, password):
    c = raw()
    c.send(b"PING\r\n")
    assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"
    c.send(b"AUTH wrong\r\n")
    assert c.read_reply() == b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    c.send(b"AUTH default s3cret\r\nPING\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+PONG\r\n"


def _del_request(n_keys: int, key_size: int = 1) -> bytes:
    key = b"k" * key_size
    return (b"*%d\r\n$3\r\nDEL\r\n" % (n_keys + 1)
            + (b"$%d\r\n%s\r\n" % (key_size, key)) * n_keys)


@pytest.mark.parametrize("data, error", [
    (_del_request(9), None),  # 10 arguments: still a request (NOAUTH)
    (_del_request(10), b"unauthenticated multibulk length"),
    (_del_request(1, 16384), None),  # a 16 KiB argument: still a request
    (_del_request(1, 16385), b"unauthenticated bulk length"),
])
def test_unauthenticated_request_size_limits(raw, password, data, error):
    # Before AUTH, Redis accepts at most 10 arguments of at most 16 KiB each.
    c = raw()
    c.send(data)
    if error is None:
        assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"
        c.send(b"PING\r\n")
        assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"
    else:
        assert c.read_reply() == b"-ERR Protocol error: " + error + b"\r\n"
        assert c.is_closed()


def test_auth_lifts_the_limits_for_the_requests_pipelined_after_it(raw, password):
    # Each request is checked against the state the one before it left: in one write,
    # NOAUTH for the first PING, then AUTH, then a request an unauthenticated client
    # could not send.
    c = raw()
    c.send(b"PING\r\n" + b"*3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$6\r\ns3cret\r\n"
           + _del_request(11) + _del_request(1, 20000) + b"PING\r\n")
    assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b":0\r\n"
    assert c.read_reply() == b":0\r\n"
    assert c.read_reply() == b"+PONG\r\n"


_AUTH_RESET = b"*3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$6\r\ns3cret\r\n*1\r\n$5\r\nRESET\r\n"
_INLINE_11 = b"DEL" + b" k" * 10 + b"\r\n"


@pytest.mark.parametrize("after_reset, noauths, error", [
    (_del_request(10), 0, b"unauthenticated multibulk length"),
    (_del_request(1, 16385), 0, b"unauthenticated bulk length"),
    (b"PING\r\n" + _del_request(10), 1, b"unauthenticated multibulk length"),
    (_INLINE_11, 1, None),  # inline requests have no unauthenticated limits
    (_del_request(9) + _del_request(1, 16384), 2, None),
], ids=["11-args", "16385-byte-arg", "after-a-ping", "inline", "within-limits"])
def test_reset_brings_the_limits_back_for_requests_pipelined_after_it(
        raw, password, after_reset, noauths, error):
    # RESET logs the client out: the requests after it in the same write meet the
    # unauthenticated limits, as they would arriving one by one.
    c = raw()
    c.send(_AUTH_RESET + after_reset)
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+RESET\r\n"
    for _ in range(noauths):
        assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"
    if error is None:
        assert not c.is_closed()
    else:
        assert c.read_reply() == b"-ERR Protocol error: " + error + b"\r\n"
        assert c.is_closed()


def test_unauthenticated_pipeline_gets_every_reply(raw, password):
    c = raw()
    c.send(b"PING\r\n" * 50 + _del_request(3) + b"*1\r\n$4\r\nPI")
    for _ in range(51):
        assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"
    c.send(b"NG\r\n")  # the request split across writes completes
    assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"
    assert not c.is_closed()


def test_hello_with_auth(raw, password):
    c = raw()
    c.send(b"HELLO 3 AUTH default s3cret SETNAME x\r\n")
    assert c.read_reply().startswith(b"%7\r\n")
    c.send(b"CLIENT GETNAME\r\n")
    assert c.read_reply() == b"$1\r\nx\r\n"
    d = raw()
    d.send(b"HELLO 3 AUTH default nope\r\n")
    assert d.read_reply().startswith(b"-WRONGPASS")


def test_reset_selects_db0_and_drops_watches(r, raw, make_client):
    r.set("k", "db0")
    c = raw()
    c.send(b"WATCH k\r\nSELECT 2\r\nRESET\r\nGET k\r\n")
    assert [c.read_reply() for _ in range(4)] == [b"+OK\r\n", b"+OK\r\n", b"+RESET\r\n",
                                                  b"$3\r\ndb0\r\n"]
    make_client().set("k", "changed")  # would abort the EXEC if the WATCH had survived
    c.send(b"MULTI\r\nEXEC\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"*0\r\n"


def test_reset_deauthenticates_when_a_password_is_set(raw, password):
    c = raw()
    c.send(b"AUTH s3cret\r\nRESET\r\nPING\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+RESET\r\n"
    assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"


@pytest.mark.parametrize("request_, reply", [
    (b"AUTH nosuchuser s3cret\r\n",
     b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"),
    (b"AUTH default s3cret extra\r\n", b"-ERR syntax error\r\n"),
    (b"HELLO 3\r\n", b"-NOAUTH HELLO must be called with the client already authenticated"),
    (b"HELLO 3 SETNAME a\x7fb\r\n", b"-ERR Client names cannot contain spaces"),
])
def test_auth_and_hello_refusals_with_a_password(raw, password, request_, reply):
    c = raw()
    c.send(request_)
    assert c.read_reply().startswith(reply)
    c.send(b"PING\r\n")
    assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"


@pytest.mark.min_redis("7.2")
@pytest.mark.parametrize("options", [b"BOGUS", b"SETNAME a\x7fb"])
def test_hello_checks_every_option_before_it_authenticates(raw, password, options):
    # Since 7.2 HELLO reads all its options first: an error in a later one leaves the
    # connection unauthenticated (Redis 7.0 applied AUTH as it read it).
    c = raw()
    c.send(b"HELLO 3 AUTH default s3cret " + options + b"\r\n")
    assert c.read_reply().startswith(b"-ERR ")
    c.send(b"PING\r\n")
    assert c.read_reply() == b"-NOAUTH Authentication required.\r\n"


@pytest.mark.min_redis("7.2")
@pytest.mark.parametrize("request_, reply", [
    (b"HELLO 3 SETNAME nm\r\n", b"-NOAUTH HELLO must be called"),
    (b"HELLO 3 SETNAME nm AUTH default nope\r\n", b"-WRONGPASS "),
])
def test_hello_sets_the_name_only_once_authenticated(raw, password, request_, reply):
    c = raw()
    c.send(request_)
    assert c.read_reply().startswith(reply)
    c.send(b"AUTH s3cret\r\nCLIENT GETNAME\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"$-1\r\n"


@pytest.mark.min_redis("7.2")
def test_hello_tries_only_the_last_auth(raw, password):
    c = raw()
    c.send(b"HELLO 2 AUTH default nope AUTH default s3cret SETNAME a SETNAME b\r\n")
    assert c.read_reply().startswith(b"*14\r\n")
    c.send(b"CLIENT GETNAME\r\n")
    assert c.read_reply() == b"$1\r\nb\r\n"


@pytest.mark.min_redis("7.2")
def test_hello_bad_option_leaves_the_name_unset(raw):
    c = raw()
    c.send(b"HELLO 2 SETNAME nm BOGUS\r\nCLIENT GETNAME\r\n")
    assert c.read_reply() == b"-ERR Syntax error in HELLO option 'BOGUS'\r\n"
    assert c.read_reply() == b"$-1\r\n"


def test_auth_without_password_configured_accepts_the_default_user(call):
    # With no password the default user is "nopass": any password authenticates it,
    # while another user name is still refused.
    assert call("AUTH", "default", "anything") == b"OK"
    assert call.resp3("HELLO", "3", "AUTH", "default", "anything")[b"proto"] == 3
    with pytest.raises(redis.RedisError, match="invalid username-password pair"):
        call("AUTH", "someone", "anything")


@pytest.mark.parametrize("args, error", [
    (("AUTH", "x"), "^Syntax error in HELLO option 'AUTH'"),
    (("SETNAME",), "^Syntax error in HELLO option 'SETNAME'"),
    (("SETNAME", "a b"), "^Client names cannot contain spaces"),
    (("SETNAME", "a\x7fb"), "^Client names cannot contain spaces"),
])
def test_hello_option_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("HELLO", "2", *args)
    assert r.client_getname() is None


def test_hello_without_arguments_keeps_the_protocol(raw):
    c = raw()
    c.send(b"HELLO 3\r\n")
    c.read_reply()
    c.send(b"HELLO\r\n")
    reply = c.read_reply()
    assert reply.startswith(b"%7\r\n") and b"$5\r\nproto\r\n:3\r\n" in reply


@pytest.mark.parametrize("index, error", [
    ("2147483647", "^DB index is out of range$"),
    ("2147483648", "^value is out of range, value must between"),
    ("-2147483648", "^DB index is out of range$"),
    ("-2147483649", "^value is out of range, value must between"),
])
def test_select_index_is_a_c_int(r, index, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("SELECT", index)


def _client_fields(listing: bytes) -> dict:
    lines = listing.decode().splitlines()
    assert len(lines) == 1, listing
    return dict(f.split("=", 1) for f in lines[0].split(" "))


def _fields_of(r, client_id: int) -> dict:
    return _client_fields(r.execute_command("CLIENT", "LIST", "ID", str(client_id)))


def _raw_client_id(c) -> int:
    c.send(b"CLIENT ID\r\n")
    return int(c.read_reply()[1:-2])


def test_client_list_fields_follow_the_connection_state(r, raw):
    idle = raw()
    idle_id = _raw_client_id(idle)
    idle.send(b"ECHO x\r\n")
    idle.read_reply()
    fields = _fields_of(r, idle_id)
    assert (fields["flags"], fields["db"], fields["multi"], fields["resp"], fields["cmd"]) == (
        "N", "0", "-1", "2", "echo")
    busy = raw()
    busy_id = _raw_client_id(busy)
    busy.send(b"HELLO 3\r\nSELECT 3\r\nMULTI\r\nPING\r\nPING\r\n")
    for _ in range(5):
        busy.read_reply()
    fields = _fields_of(r, busy_id)
    assert "x" in fields["flags"] and "b" not in fields["flags"]
    assert (fields["db"], fields["multi"], fields["resp"]) == ("3", "2", "3")


def test_client_list_flags_blocked_and_no_evict(r, raw):
    c = raw()
    cid = _raw_client_id(c)
    c.send(b"CLIENT NO-EVICT on\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert _fields_of(r, cid)["flags"] == "e"
    c.send(b"CLIENT NO-EVICT off\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert _fields_of(r, cid)["flags"] == "N"
    c.send(b"XREAD BLOCK 0 STREAMS s $\r\n")
    deadline = time.monotonic() + 5
    while "b" not in _fields_of(r, cid)["flags"] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _fields_of(r, cid)["flags"] == "b"
    assert r.execute_command("CLIENT", "UNBLOCK", str(cid)) == 1
    assert c.read_reply() in (b"*-1\r\n", b"$-1\r\n")


def test_client_info_is_one_line_ending_in_a_newline(r):
    info = r.execute_command("CLIENT", "INFO")
    assert info.endswith(b"\n") and info.count(b"\n") == 1
    assert _client_fields(info)["id"] == str(r.client_id())


@pytest.mark.parametrize("args, error", [
    (("TYPE", "foo"), "^Unknown client type 'foo'$"),
    (("TYPE",), "^syntax error$"),
    (("ID",), "^syntax error$"),
    (("ID", "x"), "^Invalid client ID$"),
    (("BOGUS", "1"), "^syntax error$"),
    (("TYPE", "BoGus"), "^Unknown client type 'BoGus'$"),
    # One filter at most: TYPE takes exactly one value and cannot be followed by ID.
    (("TYPE", "normal", "ID", "1"), "^syntax error$"),
    (("TYPE", "normal", "TYPE", "normal"), "^syntax error$"),
    # After ID every argument is an ID, so a TYPE there is an invalid ID.
    (("ID", "1", "TYPE", "normal"), "^Invalid client ID$"),
])
def test_client_list_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("CLIENT", "LIST", *args)


def test_client_list_ids_in_the_order_given(r, make_client):
    other = make_client()
    me, them = r.client_id(), other.client_id()
    got = r.execute_command("CLIENT", "LIST", "ID", str(them), "999999999", str(me), str(them))
    assert [_client_fields(line + b"\n")["id"] for line in got.splitlines()] == \
        [str(them), str(me), str(them)]


def test_client_list_by_type(r):
    assert r.execute_command("CLIENT", "LIST", "TYPE", "pubsub") == b""
    assert r.execute_command("CLIENT", "LIST", "TYPE", "master") == b""
    mine = r.execute_command("CLIENT", "LIST", "TYPE", "normal")
    assert f"id={r.client_id()} ".encode() in mine


@pytest.mark.parametrize("args, error", [
    (("ID", "5", "SKIPME"), "^syntax error$"),
    (("ID", "0"), "^client-id should be greater than 0$"),
    (("ID", "x"), "^client-id should be greater than 0$"),
    (("ID", "5", "SKIPME", "maybe"), "^syntax error$"),
    (("TYPE", "bogus"), "^Unknown client type 'bogus'$"),
    (("USER", "nosuchuser"), "^No such user 'nosuchuser'$"),
    (("BOGUS", "1"), "^syntax error$"),
])
def test_client_kill_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("CLIENT", "KILL", *args)


@pytest.mark.parametrize("filters", [
    ("ADDR", "1.2.3.4:5"),
    ("LADDR", "1.2.3.4:5"),
    ("TYPE", "pubsub"),
    ("TYPE", "master"),
    ("TYPE", "replica"),
])
def test_client_kill_filters_that_match_no_one(r, make_client, filters):
    other = make_client()
    other_id = other.client_id()
    assert r.execute_command("CLIENT", "KILL", "ID", str(other_id), *filters) == 0
    assert other.echo("alive") == b"alive"


def test_client_kill_filters_that_match(r, raw):
    c = raw()
    cid = _raw_client_id(c)
    addr = _fields_of(r, cid)["addr"]
    assert r.execute_command("CLIENT", "KILL", "ID", str(cid), "TYPE", "normal",
                             "USER", "default", "ADDR", addr) == 1
    assert c.is_closed()


@pytest.mark.min_redis("7.4")
@pytest.mark.parametrize("value, error", [
    ("0", "^maxage should be greater than 0$"),
    ("-5", "^maxage should be greater than 0$"),
    ("x", "^maxage is not an integer or out of range$"),
])
def test_client_kill_maxage_errors(r, value, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("CLIENT", "KILL", "MAXAGE", value)


@pytest.mark.min_redis("7.4")
def test_client_kill_maxage_takes_clients_connected_that_long(r, raw):
    old = raw()
    old_id = _raw_client_id(old)
    assert r.execute_command("CLIENT", "KILL", "ID", str(old_id), "MAXAGE", "100000") == 0
    time.sleep(1.1)  # ages are whole seconds
    young = raw()
    young_id = _raw_client_id(young)
    for cid in (old_id, young_id):
        r.execute_command("CLIENT", "KILL", "ID", str(cid), "MAXAGE", "1")
    assert old.is_closed()
    young.send(b"PING\r\n")
    assert young.read_reply() == b"+PONG\r\n"


def test_client_kill_skips_the_caller_unless_told_not_to(r, raw):
    assert r.execute_command("CLIENT", "KILL", "ID", str(r.client_id())) == 0
    c = raw()
    cid = _raw_client_id(c)
    c.send(b"CLIENT KILL ID %d SKIPME no\r\n" % cid)
    assert c.read_reply() == b":1\r\n"  # the reply arrives, then the connection closes
    assert c.is_closed()


@pytest.mark.parametrize("args, error", [
    (("1", "bogus"), "^CLIENT UNBLOCK reason should be TIMEOUT or ERROR$"),
    (("x", "bogus"), "^CLIENT UNBLOCK reason should be TIMEOUT or ERROR$"),  # checked first
    (("x",), "^value is not an integer or out of range$"),
    (("1", "TIMEOUT", "extra"),
     r"^unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP.$"),
])
def test_client_unblock_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("CLIENT", "UNBLOCK", *args)


@pytest.mark.parametrize("args, error", [
    (("-1",), "^timeout is negative$"),
    (("x",), "^timeout is not an integer or out of range$"),
    (("10", "BOGUS"), "^CLIENT PAUSE mode must be WRITE or ALL$"),
    (("-1", "BOGUS"), "^CLIENT PAUSE mode must be WRITE or ALL$"),  # the mode is checked first
    (("10", "WRITE", "extra"),
     r"^unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.$"),
])
def test_client_pause_errors(r, args, error):
    with pytest.raises(redis.ResponseError, match=error):
        r.execute_command("CLIENT", "PAUSE", *args)


@pytest.mark.parametrize("name", ["a b", "a\nb", "a\x7fb", "é"])
def test_client_setname_refuses_non_printable_ascii(r, name):
    with pytest.raises(redis.ResponseError, match="^Client names cannot contain spaces"):
        r.client_setname(name)
    assert r.client_setname("!~") is True  # the printable range ends are allowed


def _nothing_yet(conn, wait: float = 0.15) -> bool:
    return conn.read_until(lambda b: False, timeout=wait) == b""


@contextlib.contextmanager
def _paused(r, raw, args: bytes):
    """A connection that has just run ``CLIENT PAUSE <args>``; the pause is lifted on the
    way out, whatever the test did."""
    pauser = raw()
    pauser.send(b"CLIENT PAUSE " + args + b"\r\n")
    assert pauser.read_reply() == b"+OK\r\n"
    try:
        yield pauser
    finally:
        r.execute_command("CLIENT", "UNPAUSE")


def test_client_pause_write_holds_writes_not_reads(r, raw):
    r.set("k", "old")
    a = raw()
    with _paused(r, raw, b"700 WRITE") as pauser:
        start = time.monotonic()
        # The write waits, and so does everything the client sent after it.
        a.send(b"SET k new\r\nGET k\r\n")
        assert _nothing_yet(a)
        # Reads of other clients go on; the pauser's own writes wait too.
        pauser.send(b"GET k\r\nXREAD STREAMS s 0\r\n")
        assert pauser.read_reply() == b"$3\r\nold\r\n"
        assert pauser.read_reply() == b"*-1\r\n"
        pauser.send(b"DEL k\r\n")
        assert _nothing_yet(pauser)
        # The held requests run when the pause ends, in order.
        assert a.read_reply() == b"+OK\r\n"
        assert time.monotonic() - start >= 0.5
        assert a.read_reply() == b"$3\r\nnew\r\n"
        assert pauser.read_reply() == b":1\r\n"


def test_client_pause_write_holds_queued_writes_and_unpause_releases(r, raw):
    a = raw()
    with _paused(r, raw, b"30000 WRITE") as pauser:
        # Inside MULTI a read is queued at once; a write waits even to be queued.
        a.send(b"MULTI\r\nGET k\r\nSET k 1\r\nEXEC\r\n")
        assert a.read_reply() == b"+OK\r\n"
        assert a.read_reply() == b"+QUEUED\r\n"
        assert _nothing_yet(a)
        pauser.send(b"CLIENT UNPAUSE\r\n")
        assert pauser.read_reply() == b"+OK\r\n"
        assert a.read_reply(timeout=2) == b"+QUEUED\r\n"
        assert a.read_reply() == b"*2\r\n$-1\r\n+OK\r\n"


def test_client_pause_all_holds_every_command(r, raw):
    pauser, a = raw(), raw()
    pauser.send(b"CLIENT PAUSE 400\r\n")
    assert pauser.read_reply() == b"+OK\r\n"
    a.send(b"PING\r\n")
    assert _nothing_yet(a)
    a.send(b"CLIENT UNPAUSE\r\n")  # held as well: only the timeout ends this pause
    assert _nothing_yet(a)
    assert a.read_reply() == b"+PONG\r\n"
    assert a.read_reply() == b"+OK\r\n"


def test_unauthenticated_errors_come_in_redis_order(raw, password):
    # Redis checks that the command exists and its arity before authentication: an
    # unknown command or a wrong argument count is reported as such, not as NOAUTH.
    # QUIT needs no authentication; a refused EXEC ends in EXECABORT with the reason.
    c = raw()
    c.send(b"FOO x\r\nGET\r\nGET k\r\nCLIENT NOPE\r\nEXEC\r\nQUIT\r\n")
    for expected in (b"-ERR unknown command 'FOO', with args beginning with: 'x' ",
                     b"-ERR wrong number of arguments for 'get' command",
                     b"-NOAUTH Authentication required.",
                     b"-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.",
                     b"-EXECABORT Transaction discarded because of: NOAUTH Authentication "
                     b"required.",
                     b"+OK"):
        assert c.read_reply() == expected + b"\r\n"
    assert c.is_closed()


def test_requests_after_client_unpause_run_before_the_held_ones(r, raw):
    r.set("k", "old")
    a = raw()
    with _paused(r, raw, b"5000 WRITE") as pauser:
        a.send(b"SET k new\r\n")
        assert _nothing_yet(a)
        pauser.send(b"CLIENT UNPAUSE\r\nGET k\r\n")
        assert pauser.read_reply() == b"+OK\r\n"
        assert pauser.read_reply() == b"$3\r\nold\r\n"
        assert a.read_reply(timeout=2) == b"+OK\r\n"


def test_client_pause_holds_exec_of_a_queued_write_and_new_clients(r, raw, target):
    a = raw()
    a.send(b"MULTI\r\nSET k 1\r\n")
    assert a.read_reply() == b"+OK\r\n"
    assert a.read_reply() == b"+QUEUED\r\n"
    with _paused(r, raw, b"30000 WRITE") as pauser:
        a.send(b"EXEC\r\n")  # queued before the pause, the write still waits
        late = raw()  # connected during the pause
        late.send(b"SET j 1\r\n")
        assert _nothing_yet(a) and _nothing_yet(late)
        pauser.send(b"CLIENT UNPAUSE\r\n")
        assert pauser.read_reply() == b"+OK\r\n"
        assert a.read_reply(timeout=2) == b"*1\r\n+OK\r\n"
        assert late.read_reply(timeout=2) == b"+OK\r\n"


def test_client_pause_stops_key_expiry(r, raw):
    """During a pause Redis deletes no expired key: it reads as absent, but DBSIZE and
    INFO keyspace still count it and expired_keys does not move until the pause ends."""
    r.config_resetstat()
    r.set("k", "v", px=100)
    r.set("keep", "v")
    with _paused(r, raw, b"1000 WRITE") as pauser:
        time.sleep(0.35)  # past the TTL, and past a few active-expiry cycles
        pauser.send(b"GET k\r\nEXISTS k\r\nKEYS *\r\nDBSIZE\r\nINFO keyspace\r\n"
                    b"INFO stats\r\n")
        assert pauser.read_reply(timeout=3) == b"$-1\r\n"
        assert pauser.read_reply() == b":0\r\n"
        assert pauser.read_reply() == b"*1\r\n$4\r\nkeep\r\n"
        assert pauser.read_reply() == b":2\r\n"
        assert b"db0:keys=2,expires=1," in pauser.read_reply()
        assert b"\r\nexpired_keys:0\r\n" in pauser.read_reply()
    deadline = time.monotonic() + 3
    while r.dbsize() != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert r.dbsize() == 1 and r.info("stats")["expired_keys"] == 1


def test_a_shorter_client_pause_does_not_end_a_longer_one(r, raw):
    pauser, a = raw(), raw()
    pauser.send(b"CLIENT PAUSE 800 WRITE\r\nCLIENT PAUSE 50 WRITE\r\n")
    assert pauser.read_reply() == b"+OK\r\n"
    assert pauser.read_reply() == b"+OK\r\n"
    start = time.monotonic()
    a.send(b"SET k 1\r\n")
    assert a.read_reply() == b"+OK\r\n"
    assert time.monotonic() - start >= 0.6


def test_clients_held_by_client_pause_count_as_blocked(r, raw):
    """Redis blocks a client whose command CLIENT PAUSE postpones: INFO counts it in
    blocked_clients (not in the timeout table) and CLIENT LIST flags it b, after x for one
    whose EXEC waits."""
    a, c = raw(), raw()
    c.send(b"CLIENT SETNAME c\r\nMULTI\r\nSET k 1\r\n")
    assert c.read_reply() == b"+OK\r\n" and c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+QUEUED\r\n"
    with _paused(r, raw, b"30000 WRITE") as pauser:
        a.send(b"CLIENT SETNAME a\r\nSET k v\r\n")
        assert a.read_reply() == b"+OK\r\n"
        c.send(b"EXEC\r\n")
        assert _nothing_yet(a) and _nothing_yet(c)
        info = r.info("clients")
        assert (info["blocked_clients"], info["clients_in_timeout_table"]) == (2, 0)
        listed = {cl["name"]: cl for cl in r.client_list()}
        assert (listed["a"]["flags"], listed["c"]["flags"]) == ("b", "xb")
        assert (listed["a"]["cmd"], listed["c"]["cmd"]) == ("set", "exec")  # what waits
        # Unpaused, they are no longer blocked, even before their commands have run.
        pauser.send(b"CLIENT UNPAUSE\r\nCLIENT LIST\r\nINFO clients\r\n")
        assert pauser.read_reply() == b"+OK\r\n"
        listing = pauser.read_reply().decode()
        line = next(l for l in listing.splitlines() if " name=a " in l)
        assert "b" not in line.split(" flags=")[1].split()[0]
        assert "\r\nblocked_clients:0\r\n" in pauser.read_reply().decode()
    assert a.read_reply(timeout=2) == b"+OK\r\n"
    assert c.read_reply(timeout=2) == b"*1\r\n+OK\r\n"
    assert r.info("clients")["blocked_clients"] == 0
    assert {cl["name"]: cl["flags"] for cl in r.client_list()}["a"] == "N"


def test_client_list_cmd_is_the_last_command_looked_up(r, raw):
    """CLIENT LIST's cmd is the last command Redis found for the client, whether it ran
    or was refused or queued; NULL when the name (or subcommand) is unknown."""
    a = raw()
    a.send(b"CLIENT SETNAME a\r\n")
    assert a.read_reply() == b"+OK\r\n"
    for request, reply, cmd in [
            (b"GET\r\n", b"-ERR wrong number", "get"),
            (b"NOSUCH\r\n", b"-ERR unknown command", "NULL"),
            (b"CLIENT\r\n", b"-ERR wrong number", "client"),
            (b"SET k v\r\n", b"+OK", "set"),
            (b"CLIENT NOPE\r\n", b"-ERR unknown subcommand", "NULL"),
            (b"MULTI\r\n", b"+OK", "multi"),
            (b"SET k 1\r\n", b"+QUEUED", "set"),
            (b"EXEC x\r\n", b"-EXECABORT", "exec"),
            (b"SUBSCRIBE x\r\n", b"*3", "subscribe"),
            (b"GET k\r\n", b"-ERR Can't execute", "get")]:
        a.send(request)
        assert a.read_reply().startswith(reply)
        assert next(cl for cl in r.client_list() if cl["name"] == "a")["cmd"] == cmd, request


# --- MONITOR -------------------------------------------------------------------------------

_MONITOR_LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)\r\n$")
_END = b'"ECHO" "end"'


def _monitoring(raw, resp: int = 2):
    """A raw connection in MONITOR mode (after HELLO ``resp``). The tests connect their
    other clients first: an AUTH the fixture sends for them is not in what they check."""
    m = raw()
    if resp == 3:
        m.send(encode_request("HELLO", 3))
        m.read_reply()
    m.send(b"MONITOR\r\n")
    assert m.read_reply() == b"+OK\r\n"
    return m


def _addr(conn) -> bytes:
    return b"%s:%d" % (conn.sock.getsockname()[0].encode(), conn.sock.getsockname()[1])


def _shown(m, conn) -> list[tuple[int, bytes]]:
    """The (db, arguments) of ``conn``'s commands that monitor ``m`` reports, up to ``conn``'s
    closing ``ECHO end`` (sent here), each line checked against Redis's format."""
    conn.send(b"ECHO end\r\n")
    assert conn.read_reply() == b"$3\r\nend\r\n"
    data = m.read_until(lambda b: _END + b"\r\n" in b)
    lines = data.split(b"\r\n")[:-1]
    out, times = [], []
    for line in lines:
        match = _MONITOR_LINE.match(line + b"\r\n")
        assert match, line
        times.append((int(match[1]), int(match[2])))
        if match[4] == _addr(conn):
            out.append((int(match[3]), match[5]))
    assert times == sorted(times)
    return out


def _args(shown) -> list[bytes]:
    return [args for _, args in shown]


def test_monitor_shows_other_clients_commands_with_redis_quoting(r, raw):
    c = raw()
    m = _monitoring(raw)
    c.send(encode_request("SET", "k", b'v"q\\ \n\r\t\x07\x08\x01\xff\xc3\xa9 ok'))
    assert c.read_reply() == b"+OK\r\n"
    c.send(b"get k\r\nPING inline\r\nSET n 12345\r\nSET e \"\"\r\nXADD s * f v\r\n")
    for _ in range(5):
        c.read_reply()
    assert _args(_shown(m, c)) == [
        b'"SET" "k" "v\\"q\\\\ \\n\\r\\t\\a\\b\\x01\\xff\\xc3\\xa9 ok"',
        b'"get" "k"', b'"PING" "inline"', b'"SET" "n" "12345"', b'"SET" "e" ""',
        b'"XADD" "s" "*" "f" "v"', _END]


def test_monitor_leaves_out_admin_refused_and_redacts_credentials(r, raw):
    c = raw()
    m = _monitoring(raw)
    for request in [("AUTH", "pw"), ("AUTH", "someone", "pw"), ("AUTH", "a", "b", "c"),
                    ("HELLO", "2", "AUTH", "default", "pw"),
                    ("HELLO", "4", "AUTH", "default", "pw"),
                    ("HELLO", "2", "AUTH", "default", "pw", "BOGUS"),
                    ("HELLO", "2", "SETNAME", "nm"),
                    ("CONFIG", "GET", "port"), ("CLIENT", "LIST"), ("CLIENT", "ID"),
                    ("NOSUCH", "x"), ("GET",), ("CLIENT", "SETNAME", "a b")]:
        c.send(encode_request(*request))
        c.read_reply()
    assert _args(_shown(m, c)) == [
        b'"AUTH" "(redacted)"', b'"AUTH" "(redacted)" "(redacted)"',
        b'"AUTH" "a" "b" "c"',  # a syntax error before AUTH looks at them
        b'"HELLO" "2" "AUTH" "(redacted)" "(redacted)"',
        b'"HELLO" "4" "AUTH" "default" "pw"',  # refused before its options are read
        b'"HELLO" "2" "AUTH" "(redacted)" "(redacted)" "BOGUS"',
        b'"HELLO" "2" "SETNAME" "nm"',
        b'"CLIENT" "ID"',
        b'"CLIENT" "SETNAME" "a b"',  # failed, but it ran: shown
        _END]


def test_monitor_shows_transactions_as_they_run(r, raw):
    c = raw()
    m = _monitoring(raw)
    c.send(b"MULTI\r\nSET a 1\r\nSELECT 2\r\nINCR a\r\nEXEC\r\nSELECT 0\r\n"
           b"MULTI\r\nSET a\r\nEXEC\r\nMULTI\r\nSET a 1\r\nDISCARD\r\n")
    replies = [c.read_reply() for _ in range(12)]
    assert replies[4] == b"*3\r\n+OK\r\n+OK\r\n:1\r\n"
    assert replies[8].startswith(b"-EXECABORT")
    # The queued commands when EXEC runs them (never when queued; one refused when queued,
    # never); EXEC after them, each with the database selected after it.
    assert _shown(m, c) == [
        (0, b'"MULTI"'), (0, b'"SET" "a" "1"'), (2, b'"SELECT" "2"'), (2, b'"INCR" "a"'),
        (2, b'"EXEC"'), (0, b'"SELECT" "0"'), (0, b'"MULTI"'), (0, b'"EXEC"'),
        (0, b'"MULTI"'), (0, b'"DISCARD"'), (0, _END)]


def test_monitor_shows_an_exec_the_dispatcher_refused(r, raw):
    # An EXEC refused before it runs (wrong arity, a RESP2 subscriber's) ends the
    # transaction with EXECABORT, and Redis shows it to the monitors, within MULTI or not:
    # they saw MULTI, and see the transaction end.
    c = raw()
    m = _monitoring(raw)
    c.send(b"EXEC x\r\nMULTI\r\nEXEC a b\r\nSUBSCRIBE ch\r\nEXEC\r\nUNSUBSCRIBE\r\n")
    replies = [c.read_reply() for _ in range(6)]
    assert [replies[i].split(b":")[0] for i in (0, 2, 4)] == [
        b"-EXECABORT Transaction discarded because of"] * 3
    assert _args(_shown(m, c)) == [
        b'"EXEC" "x"', b'"MULTI"', b'"EXEC" "a" "b"', b'"SUBSCRIBE" "ch"', b'"EXEC"',
        b'"UNSUBSCRIBE"', _END]


def test_monitor_shows_a_blocking_command_once_when_it_blocks(r, raw):
    b, c = raw(), raw()
    m = _monitoring(raw)
    b.send(b"XREAD BLOCK 0 STREAMS s $\r\n")
    assert wait_for(lambda: r.info("clients")["blocked_clients"] == 1)
    c.send(b"XADD s 1-1 f v\r\n")
    assert c.read_reply() == b"$3\r\n1-1\r\n"
    assert b.read_reply().startswith(b"*1\r\n")
    assert _args(_shown(m, b)) == [b'"XREAD" "BLOCK" "0" "STREAMS" "s" "$"', _END]


@pytest.mark.parametrize("resp", [2, 3])
def test_a_monitor_runs_only_commands_that_leave_the_keyspace_alone(r, raw, resp):
    m = _monitoring(raw, resp)
    for request, reply in [
            (b"GET k", b"-ERR Replica can't interact with the keyspace\r\n"),
            (b"SET k v", b"-ERR Replica can't interact with the keyspace\r\n"),
            (b"PUBLISH ch m", b"-ERR Replica can't interact with the keyspace\r\n"),
            (b"DBSIZE", b"-ERR Replica can't interact with the keyspace\r\n"),
            (b"NOSUCH", b"-ERR unknown command 'NOSUCH', with args beginning with: \r\n"),
            (b"GET", b"-ERR wrong number of arguments for 'get' command\r\n")]:
        m.send(request + b"\r\n")
        assert m.read_reply() == reply, request
    # What it may run is answered, and then shown to it like anyone's command; a second
    # MONITOR is not answered at all.
    m.send(b"MONITOR\r\nECHO e\r\n")
    assert m.read_reply() == b"$1\r\ne\r\n"
    line = m.read_reply()
    assert _MONITOR_LINE.match(line).group(4, 5) == (_addr(m), b'"ECHO" "e"')
    m.send(b"CLIENT INFO\r\n")
    info = m.read_reply()
    assert b" flags=O " in info
    m.read_reply()  # its line
    # A monitor is a normal client for CLIENT LIST TYPE (and for the output buffer limits).
    cid = int(re.search(rb"id=(\d+)", info)[1])
    assert str(cid).encode() in r.execute_command("CLIENT", "LIST", "TYPE", "normal")
    # RESET ends the monitoring.
    m.send(b"RESET\r\n")
    assert m.read_reply() == b"+RESET\r\n"
    r.set("after", "reset")
    m.send(b"GET after\r\n")
    assert m.read_reply() == b"$5\r\nreset\r\n"


def test_monitor_lines_are_simple_strings_in_resp3_too(r, raw):
    c = raw()
    m2, m3 = _monitoring(raw, 2), _monitoring(raw, 3)
    c.send(b"PING\r\n")
    c.read_reply()
    c.send(b"ECHO end\r\n")
    c.read_reply()
    mine = [m.read_until(lambda b: _END + b"\r\n" in b) for m in (m2, m3)]
    mine = [[line for line in data.split(b"\r\n") if b" " + _addr(c) + b"] " in line]
            for data in mine]
    assert mine[0] == mine[1] and [line.split(b"] ", 1)[1] for line in mine[0]] == [
        b'"PING"', _END]


def test_monitor_refused_inside_exec(r, raw):
    c = raw()
    c.send(b"MULTI\r\nMONITOR\r\nEXEC\r\nCLIENT INFO\r\n")
    assert [c.read_reply() for _ in range(3)] == [
        b"+OK\r\n", b"+QUEUED\r\n", b"*1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n"]
    assert b" flags=N " in c.read_reply()


def test_a_monitor_is_not_held_by_client_pause(r, raw):
    p, c = raw(), raw()
    m = _monitoring(raw)
    p.send(b"CLIENT PAUSE 20000 ALL\r\n")
    assert p.read_reply() == b"+OK\r\n"
    try:
        c.send(b"PING held\r\n")
        m.send(b"PING free\r\n")
        assert m.read_reply() == b"$4\r\nfree\r\n"
        assert _nothing_yet(c)
    finally:
        # Everyone else waits, CLIENT UNPAUSE included: the monitor ends the pause.
        m.send(b"CLIENT UNPAUSE\r\n")
    assert c.read_reply() == b"$4\r\nheld\r\n"
    lines = m.read_until(lambda b: b'"held"\r\n' in b).split(b"\r\n")
    assert [line.split(b"] ")[-1] for line in lines] == [
        b'"PING" "free"', b"+OK", b'"PING" "held"', b""]


def test_a_monitor_that_does_not_read_meets_the_normal_output_buffer_limit(r, target):
    # Redis classes a monitor as a normal client (CLIENT LIST TYPE normal lists it): with
    # a hard limit for that class, a monitor that stops reading is closed.
    m = socket.socket()
    m.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    m.connect((target.host, target.port))
    try:
        if target.password:
            m.sendall(encode_request("AUTH", target.password))
        m.sendall(b"CLIENT SETNAME mon\r\nMONITOR\r\n")
        assert wait_for(lambda: any(c["name"] == "mon" and c["flags"] == "O"
                                    for c in r.client_list()))
        r.config_set("client-output-buffer-limit", "normal 1mb 0 0")
        value = "x" * 1000
        for _ in range(20):
            p = r.pipeline(transaction=False)
            for _ in range(500):
                p.set("k", value)
            p.execute()
        assert wait_for(lambda: all(c["name"] != "mon" for c in r.client_list()))
    finally:
        r.config_set("client-output-buffer-limit", "normal 0 0 0")
        m.close()


# --- CLIENT REPLY --------------------------------------------------------------------------

def _replies_to(raw, *requests) -> bytes:
    """Every byte answered to ``requests``, sent in one write and followed by ``ECHO end``
    (whose reply is left out of the result)."""
    c = raw()
    c.send(b"".join(encode_request(*req) for req in requests) + encode_request("ECHO", "end"))
    data = c.read_until(lambda b: b.endswith(b"$3\r\nend\r\n"))
    assert data.endswith(b"$3\r\nend\r\n"), data
    return data[:-len(b"$3\r\nend\r\n")]


_OFF, _ON, _SKIP = ("CLIENT", "REPLY", "OFF"), ("CLIENT", "REPLY", "ON"), ("CLIENT", "REPLY", "SKIP")
_SUB = b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
_UNSUB = b"*3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n"


@pytest.mark.parametrize("requests, replies", [
    # OFF leaves out every reply, errors included, until ON, which answers OK.
    ([_OFF, ("SET", "k", "v"), ("GET", "k"), ("NOSUCH",), ("GET",), _ON, ("GET", "k")],
     b"+OK\r\n$1\r\nv\r\n"),
    ([_OFF, _OFF, _ON, _ON], b"+OK\r\n+OK\r\n"),
    # SKIP leaves out the next command's reply, whatever becomes of the command.
    ([_SKIP, ("GET", "k"), ("PING", "after")], b"$5\r\nafter\r\n"),
    ([_SKIP, ("NOSUCH",), ("PING", "after")], b"$5\r\nafter\r\n"),
    ([_SKIP, _SKIP, ("PING", "a"), ("PING", "b")], b"$1\r\nb\r\n"),
    # ON ends a SKIP in force and answers; SKIP is ignored under OFF.
    ([_SKIP, _ON, ("PING", "b")], b"+OK\r\n$1\r\nb\r\n"),
    ([_OFF, _SKIP, ("PING", "x"), _ON, ("PING", "b")], b"+OK\r\n$1\r\nb\r\n"),
    (["client reply on".split()], b"+OK\r\n"),
    # Errors, answered under OFF neither.
    ([("CLIENT", "REPLY", "foo")], b"-ERR syntax error\r\n"),
    ([_OFF, ("CLIENT", "REPLY", "foo"), _ON], b"+OK\r\n"),
    ([("CLIENT", "REPLY")], b"-ERR wrong number of arguments for 'client|reply' command\r\n"),
    ([("CLIENT", "REPLY", "ON", "x")],
     b"-ERR wrong number of arguments for 'client|reply' command\r\n"),
    # Transactions: a skipped MULTI; QUEUED answers are replies too; EXEC's array goes out
    # piece by piece, each piece only if replies are on at that moment (so a CLIENT REPLY
    # inside leaves an array shorter than its header says, as in Redis).
    ([_SKIP, ("MULTI",), ("SET", "a", "1"), ("EXEC",)], b"+QUEUED\r\n*1\r\n+OK\r\n"),
    ([("MULTI",), _SKIP, ("SET", "a", "1"), ("EXEC",), ("PING", "p")],
     b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n"),
    ([("MULTI",), ("SET", "a", "1"), _OFF, ("SET", "a", "2"), ("EXEC",), ("PING", "p"), _ON],
     b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n+OK\r\n"),
    ([_OFF, ("MULTI",), ("SET", "a", "1"), _ON, ("SET", "a", "2"), ("EXEC",), ("PING", "p")],
     b"+OK\r\n+OK\r\n$1\r\np\r\n"),
    ([_OFF, ("MULTI",), ("SET", "a", "1"), ("EXEC",), _ON], b"+OK\r\n"),
    # Subscription confirmations are pushes: they go out inside EXEC too, whatever the mode.
    ([_OFF, ("MULTI",), ("SUBSCRIBE", "ch"), ("GET", "k"), ("EXEC",), ("UNSUBSCRIBE",), _ON],
     _SUB + _UNSUB + b"+OK\r\n"),
    ([("MULTI",), _OFF, ("SUBSCRIBE", "ch"), ("UNSUBSCRIBE", "ch"), _ON, ("EXEC",)],
     b"+OK\r\n" + b"+QUEUED\r\n" * 4 + b"*4\r\n" + _SUB + _UNSUB + b"+OK\r\n"),
    ([_SKIP, ("MULTI",), ("SUBSCRIBE", "ch"), ("EXEC",), ("UNSUBSCRIBE",)],
     b"+QUEUED\r\n*1\r\n" + _SUB + _UNSUB),
    # RESET turns OFF off before it answers, but a SKIP in force still takes its reply.
    ([_OFF, ("RESET",), ("PING", "p")], b"+RESET\r\n$1\r\np\r\n"),
    ([_SKIP, ("RESET",), ("PING", "p")], b"$1\r\np\r\n"),
])
def test_client_reply(r, raw, requests, replies):
    assert _replies_to(raw, *requests) == replies


def test_client_reply_skip_takes_a_blocked_commands_later_reply(r, raw):
    c = raw()
    c.send(b"CLIENT REPLY SKIP\r\nXREAD BLOCK 0 STREAMS s $\r\nPING after\r\n")
    assert wait_for(lambda: r.info("clients")["blocked_clients"] == 1)
    r.xadd("s", {"f": "v"})
    assert c.read_reply() == b"$5\r\nafter\r\n"


@pytest.mark.parametrize("resp", [2, 3])
def test_client_reply_off_lets_subscription_messages_through(r, raw, resp):
    c = raw()
    c.send(encode_request("HELLO", resp))
    c.read_reply()
    c.send(b"CLIENT REPLY OFF\r\nSUBSCRIBE ch\r\nPSUBSCRIBE c*\r\n")
    assert wait_for(lambda: r.pubsub_numpat() == 1)
    r.publish("ch", "m")
    push = b">" if resp == 3 else b"*"
    assert c.read_until(lambda b: b.endswith(b"$1\r\nm\r\n")) == (
        push + b"3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
        + push + b"3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:2\r\n"
        + push + b"3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n"
        + push + b"4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$1\r\nm\r\n")
    c.send(b"UNSUBSCRIBE ch\r\n")
    assert c.read_reply() == push + b"3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:1\r\n"


def test_client_reply_shows_no_flag_in_client_list(r, raw):
    c = raw()
    cid = _raw_client_id(c)
    c.send(b"CLIENT REPLY OFF\r\n")
    assert wait_for(lambda: _fields_of(r, cid)["cmd"] == "client|reply")
    assert _fields_of(r, cid)["flags"] == "N"


def test_client_reply_off_silences_a_monitor(r, raw):
    c = raw()
    m = _monitoring(raw)
    m.send(b"CLIENT REPLY OFF\r\n")
    c.send(b"PING one\r\n")
    c.read_reply()
    m.send(b"CLIENT REPLY ON\r\n")
    assert m.read_reply() == b"+OK\r\n"
    assert _MONITOR_LINE.match(m.read_reply()).group(4, 5) == (
        _addr(m), b'"CLIENT" "REPLY" "ON"')
    assert _args(_shown(m, c)) == [_END]


@pytest.mark.parametrize("requests", [
    b"CLIENT REPLY OFF\r\nQUIT\r\n",
    b"CLIENT REPLY SKIP\r\nQUIT\r\n",
    b"CLIENT REPLY OFF\r\n*1\r\n$x\r\n",  # a protocol error, its reply left out too
])
def test_closing_with_nothing_to_write_leaves_the_connection_open(r, raw, requests):
    """Redis closes a client after QUIT (or a protocol error) once its output is written;
    with the reply left out there is none, so the connection stays open, flagged ``c``,
    and nothing it sends runs any more; it goes when the peer closes."""
    c = raw()
    cid = _raw_client_id(c)
    c.send(requests)
    assert wait_for(lambda: _fields_of(r, cid).get("flags") == "c")
    c.send(b"CLIENT REPLY ON\r\nSET k v\r\nPING\r\n")
    assert not c.is_closed(timeout=0.3)
    assert c.buf == b"" and r.exists("k") == 0
    assert _fields_of(r, cid)["flags"] == "c"
    c.close()
    assert wait_for(lambda: r.execute_command("CLIENT", "LIST", "ID", str(cid)) == b"")


def test_quit_after_a_pending_reply_closes_once_it_is_written(r, raw):
    c = raw()
    c.send(b"PING\r\nCLIENT REPLY OFF\r\nQUIT\r\n")
    assert c.is_closed() and c.buf == b"+PONG\r\n"


@pytest.mark.parametrize("setup, trigger", [
    ([b"SUBSCRIBE ch\r\n"], lambda r: r.publish("ch", "m")),
    ([b"CLIENT TRACKING ON\r\n", b"GET k\r\n"], lambda r: r.set("k", "v")),
])
def test_a_message_for_a_client_left_open_by_quit_closes_it_unsent(r, raw, setup, trigger):
    c = raw()
    for request in [b"HELLO 3\r\n"] + setup:
        c.send(request)
        c.read_reply()
    c.send(b"CLIENT REPLY OFF\r\nQUIT\r\n")
    assert not c.is_closed(timeout=0.3)
    trigger(r)
    assert c.is_closed() and c.buf == b""


class _PeerlessTransport:
    def get_extra_info(self, name, default=None):
        return default

    def write(self, data) -> None:
        self.written = getattr(self, "written", b"") + bytes(data)

    def is_closing(self) -> bool:
        return False


@pytest.mark.streamd_only
@pytest.mark.parametrize("state", ["pause", "monitor"])
def test_a_client_made_before_a_pause_or_monitor_and_registered_after_meets_it(state):
    # The event loop builds a connection's client, then registers it in a later callback;
    # a CLIENT PAUSE or MONITOR that ran in between must still hold or show its commands.
    from streamd.server.client import Client
    from streamd.server.server import Server

    server = Server()
    late = Client(server)
    if state == "pause":
        server.pause("all", 10_000)
    else:
        watcher = Client(server)
        watcher.connection_made(_PeerlessTransport())
        server.add_monitor(watcher)
    late.connection_made(_PeerlessTransport())
    late.data_received(b"*1\r\n$4\r\nPING\r\n")
    if state == "pause":
        assert getattr(late.transport, "written", b"") == b""  # held by the pause
        assert late.postponed
    else:
        assert late.transport.written == b"+PONG\r\n"
        assert b'"PING"' in watcher.transport.written
