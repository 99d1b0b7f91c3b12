"""DEBUG and enable-debug-command, as Redis 7.0 has them.

The refusal tests run against any server started with the default (DEBUG not allowed);
the others need DEBUG enabled: an in-process streamd started with
``enable-debug-command yes``, or a real Redis started that way (``--redis-url``); against
a default Redis they are skipped.
"""

from __future__ import annotations

import re
import select
import socket
import time

import pytest
import redis

from streamd.commands.args import atoi
from streamd.commands.debug import _sleep_seconds
from tests.conftest import (RawConn, Target, encode_request, refusing_target, target_allowing,
                            wait_for)

REFUSED = (b'-ERR DEBUG command not allowed. If the enable-debug-command option is set to '
           b'"local", you can run it from a local connection, otherwise you need to set this '
           b'option in the configuration file, and then restart the server.\r\n')


@pytest.fixture
def refusing(r):
    return refusing_target(r, "enable-debug-command", "DEBUG")


@pytest.fixture(scope="module")
def debug_target(target):
    """A server that allows DEBUG to every client."""
    yield from target_allowing(target, "enable-debug-command")


@pytest.fixture
def d(debug_target):
    client = debug_target.client()
    client.flushall()
    yield client
    client.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    client.close()


def _conn(t: Target) -> RawConn:
    c = RawConn(t.host, t.port)
    if t.password:
        c.send(encode_request("AUTH", t.password))
        c.read_reply()
    return c


def _wire(t: Target, *args) -> bytes:
    c = _conn(t)
    try:
        c.send(encode_request(*args))
        return c.read_reply()
    finally:
        c.close()


# --- refused by default --------------------------------------------------------------------

def test_debug_is_refused_by_default_after_the_arity_check(refusing, wire):
    assert wire("DEBUG", "HELP") == REFUSED
    assert wire("debug", "nosuch", "x") == REFUSED
    assert wire("DEBUG") == b"-ERR wrong number of arguments for 'debug' command\r\n"


def test_refused_debug_aborts_a_transaction_and_counts_as_rejected(refusing, wire):
    refusing.config_resetstat()
    assert wire("MULTI") == b"+OK\r\n"
    assert wire("DEBUG", "SLEEP", "0") == REFUSED
    assert wire("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    stats = refusing.info("commandstats")["cmdstat_debug"]
    assert (stats["calls"], stats["rejected_calls"]) == (0, 1)


def test_enable_debug_command_reads_no_and_cannot_be_set(refusing, wire):
    assert wire("CONFIG", "GET", "enable-debug-command") == (
        b"*2\r\n$20\r\nenable-debug-command\r\n$2\r\nno\r\n")
    assert wire("CONFIG", "SET", "enable-debug-command", "yes") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - "
        b"can't set immutable config\r\n")


@pytest.mark.streamd_only  # needs servers started with other settings
def test_refusal_comes_before_authentication():
    from tests.inprocess import InProcessServer

    with InProcessServer(requirepass="pw") as srv:
        t = Target.__new__(Target)
        t.host, t.port, t.password = "127.0.0.1", srv.port, None
        assert _wire(t, "DEBUG", "SLEEP", "0") == REFUSED
        assert _wire(t, "DEBUG") == b"-ERR wrong number of arguments for 'debug' command\r\n"


@pytest.mark.streamd_only  # needs a server started with enable-debug-command local
@pytest.mark.parametrize("option", ["enable_debug_command", "enable_protected_configs"])
def test_local_means_the_loopback_address_itself(option):
    """Redis's "local" is a peer whose address reads 127.0.0.1 or ::1: another address of
    the loopback network (127.0.0.2) is not local."""
    from tests.inprocess import InProcessServer

    def reply(source: str, *args) -> bytes:
        sock = socket.socket()
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", srv.port))
        c = RawConn.__new__(RawConn)
        c.sock, c.buf = sock, b""
        try:
            c.send(encode_request(*args))
            return c.read_reply()
        finally:
            c.close()

    with InProcessServer(**{option: "local"}) as srv:
        if option == "enable_debug_command":
            args = ("DEBUG", "SLEEP", "0")
            assert reply("127.0.0.1", *args) == b"+OK\r\n"
            assert reply("127.0.0.2", *args) == REFUSED
        else:
            args = ("CONFIG", "SET", "dbfilename", "x.rdb")
            assert reply("127.0.0.1", *args) == b"+OK\r\n"
            assert reply("127.0.0.2", *args).startswith(b"-ERR CONFIG SET failed")


# --- allowed ---------------------------------------------------------------------------------

def test_debug_in_command_info_and_docs(debug_target):
    assert _wire(debug_target, "COMMAND", "INFO", "debug") == (
        b"*1\r\n*10\r\n$5\r\ndebug\r\n:-2\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n"
        b"+stale\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n"
        b"*0\r\n")
    assert _wire(debug_target, "COMMAND", "DOCS", "debug") == (
        b"*2\r\n$5\r\ndebug\r\n*10\r\n$7\r\nsummary\r\n$34\r\nA container for debugging "
        b"commands\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nserver\r\n"
        b"$10\r\ncomplexity\r\n$22\r\nDepends on subcommand.\r\n$9\r\ndoc_flags\r\n"
        b"*1\r\n+syscmd\r\n")


def test_debug_help(d):
    lines = d.execute_command("DEBUG", "HELP")
    assert lines[0] == b"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[lines.index(b"SLEEP <seconds>") + 1] == (
        b"    Stop the server for <seconds>. Decimals allowed.")
    assert b"OBJECT <key>" in lines and b"SET-ACTIVE-EXPIRE <0|1>" in lines
    assert lines[-2:] == [b"HELP", b"    Prints this help."]
    assert len(lines) == 106


@pytest.mark.parametrize("args", [
    ("nosuch",), ("JMAP",), ("help", "x"), ("digest", "x"), ("sleep",), ("sleep", "0", "1"), ("object",),
    ("object", "a", "b"), ("set-active-expire",), ("change-repl-id", "x")])
def test_unknown_subcommand_or_wrong_count(debug_target, args):
    assert _wire(debug_target, "DeBuG", *args) == (
        b"-ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.\r\n"
        % args[0].encode())


@pytest.mark.parametrize("seconds", ["0", "abc", "-1", "inf", "nan", "-inf", "0.001xyz",
                                     "", "0x0.01p-4"])
def test_debug_sleep_reads_seconds_as_strtod(d, seconds):
    assert d.execute_command("DEBUG", "SLEEP", seconds) == b"OK"


def test_debug_sleep_holds_every_client(debug_target):
    """Redis sleeps in the command itself: a client that asks during the sleep is served
    after it (its reply comes after the sleeper's)."""
    sleeper, other = _conn(debug_target), _conn(debug_target)
    try:
        sleeper.send(encode_request("DEBUG", "SLEEP", "1"))
        time.sleep(0.1)  # let the sleep start
        readable, _, _ = select.select([sleeper.sock], [], [], 0)
        assert not readable, "DEBUG SLEEP 1 returned at once"
        other.send(encode_request("PING"))
        assert other.read_reply() == b"+PONG\r\n"
        readable, _, _ = select.select([sleeper.sock], [], [], 0)
        assert readable, "PING was answered while DEBUG SLEEP ran"
        assert sleeper.read_reply() == b"+OK\r\n"
    finally:
        sleeper.close()
        other.close()


@pytest.mark.streamd_only
def test_sleep_and_flag_parsing_follow_c():
    assert _sleep_seconds(b"0.5xyz") == 0.5
    assert _sleep_seconds(b" \t1e-1") == pytest.approx(0.1)
    assert _sleep_seconds(b"0x1p-1") == 0.5
    assert _sleep_seconds(b"0x") == 0
    assert _sleep_seconds(b"inf") == _sleep_seconds(b"nan") == _sleep_seconds(b"-2") == 0
    assert _sleep_seconds(b"1e300") == 0  # past what the microsecond count holds
    assert _sleep_seconds(b"0.0000019") == 0.000001  # whole microseconds, toward zero
    assert [atoi(x) for x in (b"x", b" 7z", b"-3", b"4294967296", b"4294967297")] == [
        0, 7, -3, 0, 1]


_OBJECT = re.compile(rb"Value at:0x[0-9a-f]+ refcount:(\d+) encoding:(\S+) "
                     rb"serializedlength:(\d+) lru:(\d+) lru_seconds_idle:(\d+)")


@pytest.mark.parametrize("setup, key, length", [
    (("SET", "k", "hello"), "k", 6), (("SET", "k", "12345"), "k", 3),
    (("SET", "k", "5"), "k", 2), (("SET", "k", ""), "k", 1),
    (("SET", "k", "70000"), "k", 5), (("SET", "k", "12345678901"), "k", 12),
    (("HSET", "k", "f", "v"), "k", 14), (("SET", "k", "a" * 100), "k", 13),
    (("XADD", "k", "1-1", "a", "b"), "k", None)])
def test_debug_object(d, setup, key, length):
    d.execute_command(*setup)
    line = d.execute_command("DEBUG", "OBJECT", key)
    m = _OBJECT.fullmatch(line)
    assert m, line
    refcount, encoding, serialized = int(m[1]), m[2], int(m[3])
    assert refcount == d.object("refcount", key)
    assert encoding == d.object("encoding", key)
    if length is not None:
        assert serialized == length


def test_debug_object_of_a_missing_key(d):
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        d.execute_command("DEBUG", "OBJECT", "nokey")


def test_set_active_expire_stops_and_restarts_the_cron_expiry(d):
    d.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    d.set("k", "v", px=1)
    # Nothing reads the key, so only the cron could delete it.
    assert not wait_for(lambda: d.dbsize() == 0, timeout=0.5)
    d.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "x")  # atoi: 0, still off
    assert d.dbsize() == 1
    assert d.get("k") is None  # lazy expiry still works
    d.set("k2", "v", px=1)
    d.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "2")  # any non-zero turns it on
    assert wait_for(lambda: d.dbsize() == 0)


def test_change_repl_id(d):
    before = d.info()
    assert d.execute_command("DEBUG", "CHANGE-REPL-ID") == b"OK"
    after = d.info()
    assert after["master_replid"] != before["master_replid"]
    assert re.fullmatch(r"[0-9a-f]{40}", after["master_replid"])
    assert after["master_replid2"] == 0  # forty zeros, read by redis-py as a number
    assert after["run_id"] == before["run_id"]


def _digest_dataset(t: Target, d) -> None:
    d.set("s", "hello")
    d.set("n", "123")
    d.pexpire("s", 100000)
    d.hset("h", mapping={"a": "1", "b": "2"})
    d.xadd("x", {"f": "v", "g": "w"}, id="1-1")
    d.xadd("x", {"f": "v2"}, id="5-0")
    d.xgroup_create("x", "g", id="0")  # groups are not part of the digest
    other = redis.Redis(host=t.host, port=t.port, db=1, password=t.password)
    other.set("s", "z")
    other.close()


# Recorded from Redis 7.0.15 for the dataset above: the digest is a function of the data
# alone (SHA1 based), so a server computing it as Redis does gives these very values.
def test_debug_digest(debug_target, d):
    assert d.execute_command("DEBUG", "DIGEST") == b"0" * 40
    _digest_dataset(debug_target, d)
    assert d.execute_command("DEBUG", "DIGEST") == b"1f96b31e1503ee0644bcf51bbed603c3b6b01c3e"
    d.persist("s")
    assert d.execute_command("DEBUG", "DIGEST") != b"1f96b31e1503ee0644bcf51bbed603c3b6b01c3e"


def test_debug_digest_value(debug_target, d):
    _digest_dataset(debug_target, d)
    assert d.execute_command("DEBUG", "DIGEST-VALUE", "s", "x", "nokey", "h") == [
        b"d037c4eb8a8b36b602fbced4000daeab0714c1e3", b"0ff38b4db8b8b1ebcca6a4c65750e1f96d6f1bb4",
        b"0" * 40, b"6c8f22b3bf510fdcfd6122dd0f908a80e88243bf"]
    assert d.execute_command("DEBUG", "DIGEST-VALUE") == []
    d.delete("h")
    d.hset("h", mapping={"b": "2", "a": "1"})  # field order does not matter
    assert d.execute_command("DEBUG", "DIGEST-VALUE", "h") == [
        b"6c8f22b3bf510fdcfd6122dd0f908a80e88243bf"]


def test_digest_and_object_of_a_string_edited_in_place(d):
    # An appended string is kept in a mutable buffer: DEBUG still sees a string, with the
    # digest of its bytes and the sizes and refcount of a raw string.
    d.set("plain", "hello world")
    d.set("edited", "hello")
    d.append("edited", " world")
    plain, edited = d.execute_command("DEBUG", "DIGEST-VALUE", "plain", "edited")
    assert edited == plain != b"0" * 40
    info = d.execute_command("DEBUG", "OBJECT", "edited")
    info = info.decode() if isinstance(info, bytes) else info
    assert "encoding:raw" in info and "refcount:1" in info and "serializedlength:12" in info
