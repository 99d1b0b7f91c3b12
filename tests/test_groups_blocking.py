"""XREADGROUP ... BLOCK through the server (§5): wake-up by XADD, FIFO order, NOGROUP /
WRONGTYPE after the group or key goes away, deadlines kept across re-blocks, and the
CLAIM wake-ups. The blocked client is a raw socket so we see the exact reply bytes."""

from __future__ import annotations

import time

import pytest

from tests.conftest import encode_request as enc


def send(conn, *args):
    conn.send(enc(*args))


def blocked_count(r) -> int:
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n=1, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if blocked_count(r) >= n:
            return
        time.sleep(0.01)
    raise AssertionError(f"expected {n} blocked clients, have {blocked_count(r)}")


@pytest.fixture
def group(r):
    r.xgroup_create("s", "g", "$", mkstream=True)
    return r


def test_xadd_wakes_a_blocked_reader(group, raw):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    r.xadd("s", {"f": "v"}, id="5-0")
    assert c.read_reply() == \
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert r.xpending("s", "g")["consumers"] == [{"name": b"c1", "pending": 1}]


def test_blocked_readers_are_served_fifo(group, raw):
    r = group
    c1, c2 = raw(), raw()
    send(c1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    send(c2, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 2)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert b"1-0" in c1.read_reply()
    wait_blocked(r, 1)  # c2 found nothing left and blocked again
    r.xadd("s", {"f": "v"}, id="2-0")
    assert b"2-0" in c2.read_reply()


# Redis 7.0 did not re-execute blocked commands: it replied "-NOGROUP the consumer group
# this client was blocked on no longer exists" / "-UNBLOCKED the stream key no longer
# exists" and could serve an empty per-stream list. 7.2+ re-runs the command (§5).
@pytest.mark.min_redis("7.2")
def test_group_destroy_wakes_with_nogroup(group, raw):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    assert r.xgroup_destroy("s", "g") == 1
    assert c.read_reply() == (b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP "
                              b"with GROUP option\r\n")


@pytest.mark.min_redis("7.2")
def test_key_deletion_wakes_with_nogroup(group, raw):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    r.delete("s")
    assert c.read_reply().startswith(b"-NOGROUP No such key 's' or consumer group 'g'")


@pytest.mark.min_redis("7.2")
def test_type_change_wakes_with_wrongtype(group, raw):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    r.set("s", "now a string")
    assert c.read_reply() == b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


def test_xread_stays_blocked_when_key_is_deleted(group, raw):
    r = group
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.delete("s")
    time.sleep(0.1)
    assert blocked_count(r) == 1  # XREAD is not woken by a deletion
    r.xadd("s", {"f": "v"}, id="1-0")
    assert b"1-0" in c.read_reply()


def test_timeout_replies_null_array_resp2_and_resp3(group, raw):
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "50", "STREAMS", "s", ">")
    assert c.read_reply() == b"*-1\r\n"
    c3 = raw()
    send(c3, "HELLO", "3")
    c3.read_reply()
    send(c3, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "50", "STREAMS", "s", ">")
    assert c3.read_reply() == b"_\r\n"


@pytest.mark.min_redis("7.2")
def test_reblocking_keeps_the_original_deadline(group, raw, make_client):
    r = group
    c = raw()
    start = time.monotonic()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "1000", "STREAMS", "s", ">")
    wait_blocked(r)
    time.sleep(0.7)
    # The entry is gone before the waiter re-runs: it must block again, not reply empty.
    p = r.pipeline(transaction=True)
    p.xadd("s", {"f": "v"}, id="1-0")
    p.xdel("s", "1-0")
    p.execute()
    assert c.read_reply(timeout=3) == b"*-1\r\n"
    elapsed = time.monotonic() - start
    # A deadline restarted at the re-block would end at about 1.7 s.
    assert 0.95 <= elapsed < 1.5, elapsed


def test_history_id_never_blocks(group, raw):
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", "0")
    assert c.read_reply() == b"*1\r\n*2\r\n$1\r\ns\r\n*0\r\n"


def test_multi_key_block_served_by_either(r, raw):
    for k in ("a", "b"):
        r.xgroup_create(k, "g", "$", mkstream=True)
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "a", "b", ">", ">")
    wait_blocked(r)
    r.xadd("b", {"f": "v"}, id="3-0")
    assert c.read_reply().startswith(b"*1\r\n*2\r\n$1\r\nb\r\n")


@pytest.mark.min_redis("8.4")
def test_claim_block_wakes_when_pending_entry_becomes_claimable(group, raw):
    r = group
    r.xadd("s", {"f": "v"}, id="1-0")
    r.xreadgroup("g", "a", {"s": ">"})
    c = raw()
    start = time.monotonic()
    send(c, "XREADGROUP", "GROUP", "g", "b", "CLAIM", "300", "BLOCK", "3000",
         "STREAMS", "s", ">")
    reply = c.read_reply(timeout=5)
    elapsed = time.monotonic() - start
    assert b"1-0" in reply
    assert 0.2 <= elapsed < 2.0, elapsed


@pytest.mark.min_redis("8.8")
def test_xnack_wakes_claim_blocked_reader(group, raw):
    r = group
    r.xadd("s", {"f": "v"}, id="1-0")
    r.xreadgroup("g", "a", {"s": ">"})
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "b", "CLAIM", "3600000", "BLOCK", "0",
         "STREAMS", "s", ">")
    wait_blocked(r)
    assert r.execute_command("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0") == 1
    reply = c.read_reply()
    assert b"1-0" in reply
    assert r.xpending_range("s", "g", "-", "+", 10)[0]["consumer"] == b"b"


@pytest.mark.min_redis("7.2")
def test_flushall_wakes_with_nogroup(group, raw):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    r.flushall()
    assert c.read_reply().startswith(b"-NOGROUP No such key 's' or consumer group 'g'")


@pytest.mark.min_redis("7.2")
def test_rename_of_a_stream_with_the_group_serves_the_waiter(group, raw):
    r = group
    r.xadd("other", {"f": "v"}, id="7-0")
    r.xgroup_create("other", "g", "0")
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    r.rename("other", "s")
    assert b"7-0" in c.read_reply()


def test_noack_blocked_read_creates_no_pel(group, raw):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "NOACK", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert b"1-0" in c.read_reply()
    assert r.xpending("s", "g")["pending"] == 0


def test_blocked_client_counters(group, raw, target):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    info = r.info("clients")
    assert info["blocked_clients"] == 1
    if target.version >= (7, 2):
        assert info["total_blocking_keys"] == 1
        assert info["total_blocking_keys_on_nokey"] == 1  # XREADGROUP wakes on deletion
    r.xadd("s", {"f": "v"}, id="1-0")
    c.read_reply()
    assert r.info("clients")["blocked_clients"] == 0


@pytest.mark.min_redis("8.4")
def test_claim_block_second_waiter_gets_the_entry_once_it_is_idle(r, raw):
    # The first waiter takes the new entry; the second re-blocks and must then be woken
    # when that (now pending) entry has been idle for min-idle-time.
    r.xadd("s", {"f": "v"}, id="1-0")
    r.xdel("s", "1-0")
    r.xgroup_create("s", "g", "0")
    c1, c2 = raw(), raw()
    send(c1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "CLAIM", "100", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    send(c2, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "CLAIM", "100", "STREAMS", "s", ">")
    wait_blocked(r, 2)
    r.xadd("s", {"f": "v"}, id="2-0")
    assert b"2-0" in c1.read_reply()
    reply = c2.read_reply(timeout=3)
    assert reply.startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n2-0\r\n")
    assert r.xpending_range("s", "g", "-", "+", 10)[0]["consumer"] == b"c2"


def _key_gone_reply(target) -> bytes:
    # 7.0 answered a parked XREADGROUP whose key went away with its own error; 7.2+ re-run
    # the command, which fails to find the key (§5).
    if target.version >= (7, 2):
        return (b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP "
                b"option\r\n")
    return b"-UNBLOCKED the stream key no longer exists\r\n"


def test_reader_that_disconnected_takes_no_entry(group, raw):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    c.close()
    deadline = time.monotonic() + 3
    while blocked_count(r) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert blocked_count(r) == 0
    r.xadd("s", {"f": "v"}, id="1-0")
    assert r.xpending("s", "g")["pending"] == 0
    assert r.xinfo_groups("s")[0]["last-delivered-id"] == b"0-0"


def test_waiter_is_served_before_the_writers_next_pipelined_command(group, raw):
    # Redis serves the clients a command made ready before running the next command, even
    # one already read in the same packet.
    r = group
    c, w = raw(), raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    w.send(enc("XADD", "s", "1-0", "f", "v") + enc("XPENDING", "s", "g"))
    assert w.read_reply() == b"$3\r\n1-0\r\n"
    assert w.read_reply() == (b"*4\r\n:1\r\n$3\r\n1-0\r\n$3\r\n1-0\r\n"
                              b"*1\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n")
    assert b"1-0" in c.read_reply()


def test_key_expiring_wakes_the_reader(group, raw, target):
    # Nobody touches the key: the server's own expiry cycle must remove it and serve the
    # waiter (no command runs in between that could do it instead).
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    r.pexpire("s", 50)
    assert c.read_reply(timeout=3) == _key_gone_reply(target)


@pytest.mark.parametrize("move_away", [("RENAME", "s", "t"), ("MOVE", "s", "1")])
def test_key_moved_away_wakes_the_reader(group, raw, target, move_away):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    r.execute_command(*move_away)
    assert c.read_reply() == _key_gone_reply(target)
    if move_away[0] == "MOVE":
        r.execute_command("SELECT", 1)
        r.delete("s")
        r.execute_command("SELECT", 0)


# 7.0 created the consumer only once it was served; 7.2+ create it before blocking (§3).
@pytest.mark.min_redis("7.2")
def test_consumer_is_created_when_the_read_blocks(group, raw):
    r = group
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    assert [x["name"] for x in r.xinfo_consumers("s", "g")] == [b"c"]
    m = raw()  # inside MULTI the read cannot block: null, but the consumer exists
    m.send(enc("MULTI") + enc("XREADGROUP", "GROUP", "g", "m", "BLOCK", "0", "STREAMS", "s",
                              ">") + enc("EXEC"))
    assert [m.read_reply() for _ in range(3)] == [b"+OK\r\n", b"+QUEUED\r\n", b"*1\r\n*-1\r\n"]
    assert [x["name"] for x in r.xinfo_consumers("s", "g")] == [b"c", b"m"]


def test_every_read_refreshes_the_consumers_seen_time(group, raw):
    # Even a read that serves nothing (here: an empty history) counts as the consumer
    # being seen, so XINFO CONSUMERS shows it as just idle.
    r = group
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")  # creates it
    time.sleep(0.3)
    assert r.xinfo_consumers("s", "g")[0]["idle"] >= 250
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    assert r.xinfo_consumers("s", "g")[0]["idle"] < 250


def _parked_behind_setid(r, raw):
    # XGROUP SETID back to 0 leaves the stream's entries unread by the group but wakes
    # nobody: the parked reader only sees them once something signals the key.
    r.xgroup_setid("s", "g", "$")
    c = raw()
    send(c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r)
    assert r.xgroup_setid("s", "g", "0")
    return c


def test_group_setid_back_wakes_nobody_until_the_next_xadd(group, raw):
    group.xadd("s", {"f": "v"}, id="1-0")
    c = _parked_behind_setid(group, raw)
    assert c.read_until(lambda buf: False, timeout=0.2) == b""
    group.xadd("s", {"g": "w"}, id="2-0")
    assert c.read_reply() == (b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n"
                              b"*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
                              b"*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\ng\r\n$1\r\nw\r\n")


@pytest.mark.min_redis("8.6")
def test_idmp_duplicate_wakes_nobody(group, raw):
    # A duplicate appends nothing and signals nothing (reference §6.2): were the parked
    # reader re-run, it would take the entry the SETID left unread.
    r = group
    r.execute_command("XADD", "s", "IDMP", "p", "i", "*", "x", "y")
    c = _parked_behind_setid(r, raw)
    r.execute_command("XADD", "s", "IDMP", "p", "i", "*", "x", "y")
    assert c.read_until(lambda buf: False, timeout=0.2) == b""
    assert r.xpending("s", "g")["pending"] == 0


# 7.2+ re-runs a woken command; one that finds nothing parks again at the back of every
# key's queue (7.0 served it an empty list instead, §5).
@pytest.mark.min_redis("7.2")
def test_a_reader_that_parks_again_goes_behind_the_others(r, raw):
    for k in ("t", "s"):
        r.xgroup_create(k, "g", "$", mkstream=True)
    first, second = raw(), raw()
    send(first, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "t", "s", ">", ">")
    wait_blocked(r, 1)
    send(second, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 2)
    p = r.pipeline(transaction=True)  # wakes the first reader, which finds nothing
    p.xadd("t", {"f": "v"}, id="1-0")
    p.xdel("t", "1-0")
    p.execute()
    r.xadd("s", {"f": "v"}, id="1-0")
    assert second.read_reply() == \
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert blocked_count(r) == 1
    assert r.xpending("s", "g")["consumers"] == [{"name": b"c2", "pending": 1}]
