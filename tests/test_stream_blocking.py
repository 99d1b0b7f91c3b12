"""XREAD ... BLOCK through the server (§5): wake-up by XADD, `$` captured at call time,
timeouts, several waiters, disconnects, CLIENT UNBLOCK, MULTI, key deletion, and one
wake-up per transaction. Blocked clients are raw sockets so the reply bytes are exact;
also runs against a real Redis (``--redis-url``)."""

from __future__ import annotations

import time

import pytest

from tests.conftest import encode_request as enc

ENTRY_1 = b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


def send(conn, *args):
    conn.send(enc(*args))


def blocked_count(r) -> int:
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n=1, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if blocked_count(r) == n:
            return
        time.sleep(0.01)
    raise AssertionError(f"expected {n} blocked clients, have {blocked_count(r)}")


def client_id(conn) -> int:
    send(conn, "CLIENT", "ID")
    return int(conn.read_reply()[1:-2])


def test_xadd_wakes_reader_with_the_new_entry(r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert c.read_reply() == ENTRY_1
    assert blocked_count(r) == 0


def test_dollar_is_the_last_id_at_call_time(r, raw):
    r.xadd("s", {"old": "x"}, id="1-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.xadd("s", {"f": "v"}, id="2-0")
    reply = c.read_reply()
    assert b"2-0" in reply and b"1-0" not in reply


def test_dollar_on_missing_key_then_created(r, raw):
    c = raw()
    send(c, "XREAD", "COUNT", "5", "BLOCK", "0", "STREAMS", "nokey", "s", "$", "$")
    wait_blocked(r)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert c.read_reply() == ENTRY_1


def test_explicit_id_blocks_until_something_newer(r, raw):
    r.xadd("s", {"f": "v"}, id="5-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "5")
    wait_blocked(r)
    r.xadd("s", {"g": "w"}, id="6-0")
    assert b"6-0" in c.read_reply()


def test_timeout_null_array_resp2_and_resp3(r, raw):
    c = raw()
    start = time.monotonic()
    send(c, "XREAD", "BLOCK", "100", "STREAMS", "s", "$")
    assert c.read_reply() == b"*-1\r\n"
    assert time.monotonic() - start >= 0.09
    c3 = raw()
    send(c3, "HELLO", "3")
    c3.read_reply()
    send(c3, "XREAD", "BLOCK", "50", "STREAMS", "s", "$")
    assert c3.read_reply() == b"_\r\n"


def test_all_waiters_served_in_blocking_order(r, raw):
    conns = [raw() for _ in range(3)]
    for i, c in enumerate(conns):
        send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        wait_blocked(r, i + 1)
    r.xadd("s", {"f": "v"}, id="1-0")
    # XREAD does not consume: every waiter gets the entry
    for c in conns:
        assert c.read_reply() == ENTRY_1
    assert blocked_count(r) == 0


def test_waiters_reblock_when_not_served(r, raw):
    c1, c2 = raw(), raw()
    send(c1, "XREAD", "BLOCK", "0", "STREAMS", "a", "$")
    send(c2, "XREAD", "BLOCK", "0", "STREAMS", "b", "$")
    wait_blocked(r, 2)
    r.xadd("a", {"f": "v"}, id="1-0")
    assert b"1-0" in c1.read_reply()
    wait_blocked(r, 1)
    r.xadd("b", {"f": "v"}, id="2-0")
    assert b"2-0" in c2.read_reply()


def test_disconnect_while_blocked_cleans_up(r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    c.close()
    wait_blocked(r, 0)
    assert r.xadd("s", {"f": "v"}, id="1-0") == b"1-0"
    assert r.ping()


def test_client_unblock_timeout_and_error(r, raw):
    c = raw()
    cid = client_id(c)
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert c.read_reply() == b"*-1\r\n"
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
    assert c.read_reply() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0  # not blocked any more


def test_block_inside_multi_replies_null_immediately(r, raw):
    c = raw()
    for cmd in (("MULTI",), ("XREAD", "BLOCK", "0", "STREAMS", "s", "$")):
        send(c, *cmd)
        c.read_reply()
    send(c, "EXEC")
    assert c.read_reply(timeout=2) == b"*1\r\n*-1\r\n"
    assert blocked_count(r) == 0


def test_stays_blocked_when_key_deleted_or_replaced(r, raw):
    r.xadd("s", {"f": "v"}, id="1-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.delete("s")
    time.sleep(0.1)
    assert blocked_count(r) == 1
    r.set("s", "string now")
    time.sleep(0.1)
    assert blocked_count(r) == 1
    r.delete("s")
    r.xadd("s", {"f": "v"}, id="2-0")
    assert b"2-0" in c.read_reply()


def test_multi_with_three_xadds_wakes_once_with_all(r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    p = r.pipeline(transaction=True)
    for i in (1, 2, 3):
        p.xadd("s", {"f": "v"}, id=f"{i}-0")
    p.execute()
    reply = c.read_reply()
    assert reply.startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*3\r\n")
    for i in (1, 2, 3):
        assert b"%d-0" % i in reply


def test_count_is_kept_by_the_wakeup(r, raw):
    c = raw()
    send(c, "XREAD", "COUNT", "2", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    p = r.pipeline(transaction=True)
    for i in (1, 2, 3):
        p.xadd("s", {"f": "v"}, id=f"{i}-0")
    p.execute()
    reply = c.read_reply()
    assert reply.startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n")
    assert b"1-0" in reply and b"2-0" in reply and b"3-0" not in reply


def test_multi_xadd_then_del_does_not_wake(r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    p = r.pipeline(transaction=True)
    p.xadd("s", {"f": "v"}, id="1-0")
    p.delete("s")
    p.execute()
    time.sleep(0.1)
    assert blocked_count(r) == 1
    r.xadd("s", {"f": "v"}, id="2-0")
    assert b"2-0" in c.read_reply()


def test_commands_after_a_blocked_xread_wait_for_it(r, raw):
    c = raw()
    c.send(enc("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + enc("PING"))
    wait_blocked(r)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert c.read_reply() == ENTRY_1
    assert c.read_reply() == b"+PONG\r\n"


def test_blocked_on_several_keys_served_by_the_one_written(r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$")
    wait_blocked(r)
    r.xadd("b", {"f": "v"}, id="1-0")
    assert c.read_reply().startswith(b"*1\r\n*2\r\n$1\r\nb\r\n")


def test_blocked_reader_in_resp3_gets_a_map(r, raw):
    c = raw()
    send(c, "HELLO", "3")
    c.read_reply()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert c.read_reply() == b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"


@pytest.mark.min_redis("7.4")
def test_plus_is_reevaluated_when_woken(r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "+")
    wait_blocked(r)
    p = r.pipeline(transaction=True)
    p.xadd("s", {"f": "v"}, id="1-0")
    p.xadd("s", {"f": "v"}, id="2-0")
    p.execute()
    reply = c.read_reply()
    assert b"2-0" in reply and b"1-0" not in reply


def test_timeout_deadline_kept_across_reblocks(r, raw):
    c = raw()
    start = time.monotonic()
    send(c, "XREAD", "BLOCK", "1000", "STREAMS", "s", "5")
    wait_blocked(r)
    time.sleep(0.7)
    # an entry not newer than 5-0 wakes the reader, which finds nothing and parks again
    r.xadd("s", {"f": "v"}, id="1-0")
    assert c.read_reply(timeout=3) == b"*-1\r\n"
    elapsed = time.monotonic() - start
    # A deadline restarted at the re-block would end at about 1.7 s.
    assert 0.95 <= elapsed < 1.5, elapsed


def test_stays_blocked_when_the_stream_is_overwritten_by_a_string(r, raw):
    # SET over the stream changes the key's type in one step: XREAD is not woken by it
    # (re-running it there would reply WRONGTYPE).
    r.xadd("s", {"f": "v"}, id="1-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.set("s", "string now")
    time.sleep(0.1)
    assert blocked_count(r) == 1
    r.delete("s")
    r.xadd("s", {"f": "v"}, id="2-0")
    assert c.read_reply() == ENTRY_1.replace(b"1-0", b"2-0")


def test_rename_of_a_string_onto_the_key_keeps_the_reader_blocked(r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.set("t", "string")
    assert r.rename("t", "s")
    time.sleep(0.1)
    assert blocked_count(r) == 1
    r.delete("s")
    r.xadd("s", {"f": "v"}, id="1-0")
    assert c.read_reply() == ENTRY_1


def test_swapdb_bringing_a_string_keeps_the_reader_blocked(r, raw, make_client):
    # The database swapped in holds a string at the key: Redis only serves XREAD waiters
    # when the key holds a stream, so the reader stays parked.
    one = make_client()
    one.execute_command("SELECT", 1)
    one.set("s", "string")
    r.xadd("s", {"f": "v"}, id="1-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.swapdb(0, 1)
    time.sleep(0.1)
    assert blocked_count(r) == 1
    r.swapdb(0, 1)
    r.xadd("s", {"f": "v"}, id="2-0")
    assert c.read_reply() == ENTRY_1.replace(b"1-0", b"2-0")


def test_timeout_table_counts_only_waiters_with_a_timeout(r, raw):
    forever, timed = raw(), raw()
    send(forever, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    assert r.info("clients")["clients_in_timeout_table"] == 0
    send(timed, "XREAD", "BLOCK", "10000", "STREAMS", "s", "$")
    wait_blocked(r, 2)
    assert r.info("clients")["clients_in_timeout_table"] == 1
    r.xadd("s", {"f": "v"}, id="1-0")
    assert forever.read_reply() == ENTRY_1
    assert timed.read_reply() == ENTRY_1
    assert r.info("clients")["clients_in_timeout_table"] == 0


def test_dollar_on_an_emptied_stream_is_its_last_id(r, raw):
    # The stream is empty but remembers 5-0: `$` means 5-0, so a stream renamed onto the
    # key with only older entries serves nothing.
    r.xadd("s", {"f": "v"}, id="5-0")
    r.xdel("s", "5-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.xadd("t", {"f": "v"}, id="1-0")
    assert r.rename("t", "s")
    time.sleep(0.1)
    assert blocked_count(r) == 1
    r.xadd("s", {"f": "v"}, id="6-0")
    assert c.read_reply() == ENTRY_1.replace(b"1-0", b"6-0")


def test_client_kill_of_a_parked_client_closes_it(r, raw):
    c = raw()
    cid = client_id(c)
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    assert r.execute_command("CLIENT", "KILL", "ID", cid) == 1
    assert c.is_closed()
    wait_blocked(r, 0)
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0


def test_key_named_twice_leaves_no_blocking_key_behind(r, raw, target):
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "s", "$", "$")
    wait_blocked(r)
    if target.version >= (7, 2):  # total_blocking_keys is 7.2+
        assert r.info("clients")["total_blocking_keys"] == 1
    r.xadd("s", {"f": "v"}, id="1-0")
    assert b"1-0" in c.read_reply()
    assert blocked_count(r) == 0
    if target.version >= (7, 2):
        assert r.info("clients")["total_blocking_keys"] == 0


def test_a_blocked_command_counts_once_in_commandstats(r, raw):
    # However often a parked command re-runs, it is one call: served, timed out or
    # unblocked (ERROR also counts as a failed call).
    r.config_resetstat()
    served, reblocked, unblocked = raw(), raw(), raw()
    uid = client_id(unblocked)
    send(served, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    send(reblocked, "XREAD", "BLOCK", "300", "STREAMS", "s", "9-0")
    wait_blocked(r, 2)
    r.xadd("s", {"f": "v"}, id="1-0")  # serves one, the other re-runs and parks again
    assert served.read_reply() == ENTRY_1
    assert reblocked.read_reply() == b"*-1\r\n"
    send(unblocked, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", uid, "ERROR") == 1
    assert unblocked.read_reply().startswith(b"-UNBLOCKED")
    stats = r.info("commandstats")["cmdstat_xread"]
    assert (stats["calls"], stats["failed_calls"]) == (3, 1)


def test_dollar_keeps_its_id_when_the_stream_is_recreated(r, raw):
    # `$` was 5-0 when the reader parked; a new stream at the key only serves it once an
    # entry after 5-0 arrives.
    r.xadd("s", {"f": "v"}, id="5-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.delete("s")
    r.xadd("s", {"f": "v"}, id="1-0")
    time.sleep(0.1)
    assert blocked_count(r) == 1
    r.xadd("s", {"f": "v"}, id="6-0")
    assert c.read_reply() == ENTRY_1.replace(b"1-0", b"6-0")


def test_requests_after_a_second_blocking_read_wait_for_it_too(r, raw):
    c = raw()
    cid = client_id(c)
    c.send(enc("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + enc("PING")
           + enc("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + enc("ECHO", "hi"))
    wait_blocked(r)
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert c.read_reply() == b"*-1\r\n"
    assert c.read_reply() == b"+PONG\r\n"
    wait_blocked(r)  # the second XREAD parked: ECHO must not run before it ends
    assert c.read_until(lambda buf: False, timeout=0.2) == b""
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert c.read_reply() == b"*-1\r\n"
    assert c.read_reply() == b"$2\r\nhi\r\n"


def test_dollar_is_last_generated_id_not_last_entry(r, raw):
    # `$` is the stream's last generated ID: after XSETID moved it past the last entry
    # (and back), an entry added in between is older than what the reader waits for
    r.execute_command("XADD", "s", "1-0", "f", "v")
    r.execute_command("XSETID", "s", "5-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    r.execute_command("XSETID", "s", "1-0")
    r.execute_command("XADD", "s", "3-0", "f", "v")
    r.execute_command("XADD", "s", "6-0", "f", "v")
    assert c.read_reply() == ENTRY_1.replace(b"1-0", b"6-0")


def test_woken_clients_pipelined_requests_run_after_the_writers(r, raw):
    # Redis runs what a woken client pipelined behind its blocking read only once the
    # loop is done with the command that woke it and the rest of the writer's pipeline.
    c, w = raw(), raw()
    c.send(enc("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + enc("INCR", "n"))
    wait_blocked(r)
    w.send(enc("XADD", "s", "1-0", "f", "v") + enc("GET", "n"))
    assert w.read_reply() == b"$3\r\n1-0\r\n"
    assert w.read_reply() == b"$-1\r\n"
    assert c.read_reply() == ENTRY_1
    assert c.read_reply() == b":1\r\n"


def test_dollar_of_a_pipelined_second_read_is_taken_after_the_writers_pipeline(r, raw):
    # The second XREAD runs after both XADDs: its `$` is 2-0, so it parks.
    c, w = raw(), raw()
    c.send(enc("XREAD", "BLOCK", "0", "STREAMS", "s", "$") * 2)
    wait_blocked(r)
    w.send(enc("XADD", "s", "1-0", "f", "v") + enc("XADD", "s", "2-0", "f", "v"))
    assert [w.read_reply(), w.read_reply()] == [b"$3\r\n1-0\r\n", b"$3\r\n2-0\r\n"]
    assert c.read_reply() == ENTRY_1
    wait_blocked(r)
    r.xadd("s", {"f": "v"}, id="3-0")
    assert c.read_reply() == ENTRY_1.replace(b"1-0", b"3-0")


def test_unblocked_clients_pipelined_requests_run_after_the_callers(r, raw):
    c, w = raw(), raw()
    cid = client_id(c)
    c.send(enc("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + enc("INCR", "n"))
    wait_blocked(r)
    w.send(enc("CLIENT", "UNBLOCK", cid) + enc("GET", "n"))
    assert [w.read_reply(), w.read_reply()] == [b":1\r\n", b"$-1\r\n"]
    assert [c.read_reply(), c.read_reply()] == [b"*-1\r\n", b":1\r\n"]


# Redis 7.2 (#11338) refuses a timeout whose deadline, now + timeout, overflows a signed
# 64-bit integer; 7.0.15 accepts it and blocks forever.
@pytest.mark.min_redis("7.2")
def test_timeout_past_the_clock_range_is_refused(r, raw):
    c = raw()
    send(c, "XREAD", "BLOCK", str(2**63 - 1), "STREAMS", "s", "$")
    assert c.read_reply() == b"-ERR timeout is out of range\r\n"
    assert blocked_count(r) == 0


def test_transaction_appending_then_overwriting_the_stream_keeps_the_reader_blocked(r, raw):
    # Redis looks at the key once the transaction is done: it holds a string, so XREAD is
    # not re-run (it would reply WRONGTYPE), although an XADD signalled it first.
    r.xadd("s", {"f": "v"}, id="1-0")
    c = raw()
    send(c, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r)
    p = r.pipeline(transaction=True)
    p.xadd("s", {"f": "v"}, id="2-0")
    p.set("s", "string now")
    p.execute()
    assert c.read_until(lambda buf: False, timeout=0.2) == b""
    assert blocked_count(r) == 1
    r.delete("s")
    r.xadd("s", {"f": "v"}, id="3-0")
    assert c.read_reply() == ENTRY_1.replace(b"1-0", b"3-0")
