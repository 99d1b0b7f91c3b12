"""Key expiry: the EXPIRE/TTL families, lazy expiry on access, active expiry of keys
nobody touches, and expiry's effect on WATCH."""

from __future__ import annotations

import re
import time

import pytest

from tests.conftest import dirty, encode_request, wait_for, error_text as err

LLONG_MAX = 2**63 - 1


def cmd(r, *args):
    return r.execute_command(*args)


# --- setting and reading TTLs ------------------------------------------------------------

def test_ttl_of_missing_and_persistent_keys(r):
    assert r.ttl("nokey") == -2
    assert r.pttl("nokey") == -2
    assert r.expiretime("nokey") == -2
    assert r.pexpiretime("nokey") == -2
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.pttl("k") == -1
    assert r.expiretime("k") == -1
    assert r.pexpiretime("k") == -1


def test_expire_pexpire_and_absolute_forms(r):
    r.set("k", "v")
    assert r.expire("k", 100) is True
    assert 99 <= r.ttl("k") <= 100
    assert r.pexpire("k", 50000) is True
    assert 49000 < r.pttl("k") <= 50000
    assert r.expireat("k", 4000000000) is True
    assert r.expiretime("k") == 4000000000
    assert r.pexpiretime("k") == 4000000000000
    assert r.pexpireat("k", 4000000000123) is True
    assert r.pexpiretime("k") == 4000000000123
    assert r.expire("nokey", 100) is False
    assert r.pexpireat("nokey", 4000000000000) is False


def test_expiretime_rounds_to_nearest_second(r):
    r.set("k", "v")
    r.pexpireat("k", 4000000000600)
    assert r.expiretime("k") == 4000000001
    r.pexpireat("k", 4000000000400)
    assert r.expiretime("k") == 4000000000


def test_past_or_zero_expire_deletes_at_once(r):
    for setter in (lambda: r.expire("k", 0), lambda: r.expire("k", -10),
                   lambda: r.pexpire("k", -1), lambda: r.expireat("k", 1),
                   lambda: r.pexpireat("k", 1)):
        r.set("k", "v")
        assert setter() is True
        assert r.exists("k") == 0


def test_persist(r):
    r.set("k", "v", ex=100)
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.persist("k") is False
    assert r.persist("nokey") is False


def test_expire_nx_xx_gt_lt(r):
    r.set("k", "v")
    assert r.expire("k", 100, xx=True) is False  # no TTL yet
    assert r.expire("k", 100, gt=True) is False  # no TTL counts as infinite
    assert r.expire("k", 100, nx=True) is True
    assert r.expire("k", 200, nx=True) is False
    assert r.expire("k", 200, xx=True) is True
    assert r.expire("k", 100, gt=True) is False
    assert r.expire("k", 300, gt=True) is True
    assert r.expire("k", 400, lt=True) is False
    assert r.expire("k", 50, lt=True) is True
    assert 49 <= r.ttl("k") <= 50
    r.persist("k")
    assert r.expire("k", 50, lt=True) is True  # any TTL is less than none
    assert cmd(r, "EXPIRE", "k", "10", "xx", "GT") == 0  # XX and GT both apply
    assert cmd(r, "EXPIRE", "k", "100", "xx", "GT") == 1


def test_expire_gt_and_lt_against_the_same_time_do_nothing(r):
    r.set("k", "v")
    at = 4_000_000_000_000
    assert r.pexpireat("k", at) is True
    assert cmd(r, "PEXPIREAT", "k", str(at), "GT") == 0  # not greater
    assert cmd(r, "PEXPIREAT", "k", str(at), "LT") == 0  # not less
    assert cmd(r, "PEXPIREAT", "k", str(at + 1), "GT") == 1
    assert cmd(r, "PEXPIREAT", "k", str(at), "LT") == 1
    assert r.pexpiretime("k") == at


def test_expire_option_errors(r):
    r.set("k", "v")
    nx_text = "NX and XX, GT or LT options at the same time are not compatible"
    for opts in (["NX", "XX"], ["NX", "GT"], ["LT", "NX"], ["nx", "xx", "gt"]):
        assert err(cmd, r, "EXPIRE", "k", "10", *opts) == nx_text, opts
    assert err(cmd, r, "EXPIRE", "k", "10", "GT", "LT") == \
        "GT and LT options at the same time are not compatible"
    assert err(cmd, r, "EXPIRE", "k", "10", "FOO") == "Unsupported option FOO"
    # Options are checked before the time argument.
    assert err(cmd, r, "EXPIRE", "k", "abc", "NX", "XX") == nx_text
    assert err(cmd, r, "EXPIRE", "k", "abc") == "value is not an integer or out of range"
    assert r.ttl("k") == -1


@pytest.mark.parametrize("name,value", [
    ("expire", str(LLONG_MAX)), ("expire", str(LLONG_MAX // 1000 + 1)),
    ("expire", str(-(LLONG_MAX // 1000) - 1)), ("pexpire", str(LLONG_MAX)),
    ("expireat", str(LLONG_MAX)), ("pexpire", str(LLONG_MAX - 1000)),
])
def test_expire_overflow_texts(r, name, value):
    r.set("k", "v")
    assert err(cmd, r, name.upper(), "k", value) == f"invalid expire time in '{name}' command"
    assert r.ttl("k") == -1


def test_overwrite_clears_ttl_but_changes_in_place_keep_it(r):
    r.set("k", "v", ex=100)
    r.set("k", "w")
    assert r.ttl("k") == -1
    r.set("k", "1", ex=100)
    r.incr("k")
    r.append("k", "0")
    r.setrange("k", 0, "9")
    assert 99 <= r.ttl("k") <= 100
    r.hset("h", "f", "v")
    r.expire("h", 100)
    r.hset("h", "g", "w")
    r.hdel("h", "f")
    assert 99 <= r.ttl("h") <= 100


# --- lazy and active expiry --------------------------------------------------------------

def test_lazy_expiry_on_access(r):
    r.set("s", "v", px=50)
    r.hset("h", "f", "v")
    r.pexpire("h", 50)
    time.sleep(0.12)
    assert r.get("s") is None
    assert r.hgetall("h") == {}
    assert r.exists("s", "h") == 0
    assert r.ttl("s") == -2
    assert r.type("h") == b"none"
    # An expired key is gone for writers too: a fresh key without the old TTL.
    r.set("w", "1", px=50)
    time.sleep(0.12)
    assert r.incr("w") == 1
    assert r.ttl("w") == -1


def test_key_past_its_ttl_is_absent_for_del_persist_keys_and_scan(r):
    # Expired but not yet reclaimed: DEL finds nothing to delete (the expiry counts in
    # expired_keys), PERSIST cannot bring the key back, KEYS * and SCAN do not list it.
    before = r.info("stats")["expired_keys"]
    r.set("d", "v", px=1)
    r.set("p", "v", px=1)
    time.sleep(0.01)
    assert r.delete("d") == 0
    assert r.persist("p") is False
    assert r.exists("d", "p") == 0
    assert r.info("stats")["expired_keys"] - before == 2
    r.set("k", "v", px=1)
    r.set("live", "v")
    time.sleep(0.01)
    assert r.keys("*") == [b"live"]
    r.set("k", "v", px=1)
    time.sleep(0.01)
    assert r.scan(0, count=100) == (0, [b"live"])


def _right_after_expiry(r, raw, dead, requests, ttl_ms=300):
    """Replies to ``requests``, run as soon as the keys in ``dead`` (set here with a short
    TTL) have expired and before anything else could reclaim them: a WRITE pause stops
    all expiry while they run out, and the requests go in one packet behind CLIENT
    UNPAUSE, so no expiry cycle runs in between. Also returns what expired_keys gained."""
    for k in dead:
        r.set(k, "v", px=ttl_ms)
    c = raw()
    c.send(encode_request("CLIENT", "PAUSE", "30000", "WRITE"))
    try:
        assert c.read_reply() == b"+OK\r\n"
        before = r.info("stats")["expired_keys"]
        time.sleep(ttl_ms / 1000 + 0.1)
        c.send(b"".join(encode_request(*argv) for argv in [("CLIENT", "UNPAUSE"), *requests,
                                                           ("INFO", "stats")]))
        replies = [c.read_reply() for _ in range(len(requests) + 2)]
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert replies[0] == b"+OK\r\n"
    gained = int(re.search(rb"expired_keys:(\d+)", replies[-1])[1]) - before
    return replies[1:-1], gained


def test_keys_leaves_expired_keys_in_place(r, raw):
    # Redis's KEYS only skips them: DBSIZE still counts them and expired_keys stays.
    r.set("live", "v")
    replies, gained = _right_after_expiry(r, raw, ["dead1", "dead2"],
                                          [("KEYS", "*"), ("DBSIZE",)])
    assert replies == [b"*1\r\n$4\r\nlive\r\n", b":3\r\n"]
    assert gained == 0


def test_scan_reclaims_only_expired_keys_that_match(r, raw):
    # The pattern is checked first; a name it rejects is not looked up, so not expired.
    r.set("live", "v")
    replies, gained = _right_after_expiry(
        r, raw, ["a", "b"], [("SCAN", "0", "MATCH", "a", "COUNT", "100"), ("DBSIZE",)])
    assert replies == [b"*2\r\n$1\r\n0\r\n*0\r\n", b":2\r\n"]
    assert gained == 1


def test_overwriting_an_expired_key_counts_its_expiry(r, raw):
    # Every SET-family write looks its key up first, which reclaims an expired one.
    replies, gained = _right_after_expiry(
        r, raw, ["m1", "m2", "s", "p", "plain"],
        [("MSET", "m1", "1", "m2", "2"), ("SETEX", "s", "100", "v"),
         ("PSETEX", "p", "100000", "v"), ("SET", "plain", "v")])
    assert replies == [b"+OK\r\n"] * 4
    assert gained == 5


def test_expired_key_is_not_listed(r):
    r.set("dead", "v", px=30)
    r.set("live", "v")
    time.sleep(0.1)
    assert r.keys("*") == [b"live"]
    seen, cursor = [], 0
    while True:
        cursor, batch = r.scan(cursor)
        seen += batch
        if cursor == 0:
            break
    assert seen == [b"live"]


def _keyspace_keys(r):
    return r.info("keyspace").get("db0", {}).get("keys", 0)


def test_active_expiry_reclaims_untouched_keys(r):
    before = r.info("stats")["expired_keys"]
    r.set("keep", "v")
    r.mset({f"k{i}": i for i in range(200)})
    # 300 ms leaves room for the 200 round trips and the checks below on a slow machine.
    for i in range(200):
        r.pexpire(f"k{i}", 300)
    assert _keyspace_keys(r) == 201
    assert r.info("keyspace")["db0"]["expires"] == 200
    # Nobody reads the keys: only the server's periodic cycle can reclaim them.
    assert wait_for(lambda: _keyspace_keys(r) == 1, timeout=2.0)
    assert r.dbsize() == 1
    assert r.info("stats")["expired_keys"] - before == 200


def test_config_resetstat_zeroes_expired_keys(r):
    r.set("k", "v", px=1)
    time.sleep(0.01)
    assert r.get("k") is None
    assert r.info("stats")["expired_keys"] >= 1
    r.config_resetstat()
    assert r.info("stats")["expired_keys"] == 0


def test_active_expiry_in_another_db(r):
    r.execute_command("SELECT", 3)
    try:
        r.set("k", "v", px=100)
        assert wait_for(lambda: "db3" not in r.info("keyspace"), timeout=2.0)
    finally:
        r.execute_command("SELECT", 0)


def test_expiry_is_not_a_change_for_the_dirty_counter(r):
    """A key removed by its TTL, on access or by the periodic cycle, counts as expired but
    adds nothing to rdb_changes_since_last_save (Redis 7.0.15: +0 either way)."""
    r.set("lazy", "v", px=1)
    r.mset({f"k{i}": i for i in range(20)})
    for i in range(20):
        r.pexpire(f"k{i}", 1)
    before, expired = dirty(r), r.info("stats")["expired_keys"]
    time.sleep(0.05)
    assert r.get("lazy") is None  # removed now, or already by the cycle
    assert wait_for(lambda: r.dbsize() == 0, timeout=2.0)
    assert r.info("stats")["expired_keys"] - expired == 21
    assert dirty(r) == before

# --- WATCH and expiry --------------------------------------------------------------------

def _exec_after_watch(client, between):
    client.execute_command("WATCH", "k")
    between()
    client.execute_command("MULTI")
    client.execute_command("SET", "x", "1")
    return client.execute_command("EXEC")


def test_watched_key_that_expires_aborts_exec(r, make_client):
    c = make_client()
    r.set("k", "v", px=100)
    assert _exec_after_watch(c, lambda: time.sleep(0.3)) is None
    assert r.exists("x") == 0


def test_exec_itself_notices_a_watched_key_past_its_ttl(r, make_client):
    """Nobody touches the key and the active cycle (1 Hz here) has most likely not yet
    removed it when EXEC runs: EXEC's own check must abort. Repeated, so that a cycle
    landing in one short window cannot hide a missing check."""
    old_hz = r.config_get("hz")["hz"]
    r.config_set("hz", 1)
    try:
        c = make_client()
        for _ in range(5):
            r.set("k", "v", px=30)
            assert _exec_after_watch(c, lambda: time.sleep(0.06)) is None
        assert r.exists("x") == 0
    finally:
        r.config_set("hz", old_hz)


def test_watched_key_expired_and_read_by_another_client_aborts_exec(r, make_client):
    c = make_client()
    r.set("k", "v", px=100)

    def between():
        time.sleep(0.2)
        assert r.get("k") is None

    assert _exec_after_watch(c, between) is None


def test_watched_key_with_ttl_that_has_not_expired_does_not_abort(r, make_client):
    c = make_client()
    r.set("k", "v", ex=100)
    assert _exec_after_watch(c, lambda: r.ttl("k")) == [b"OK"]


def test_expire_and_persist_of_watched_key(r, make_client):
    c = make_client()
    r.set("k", "v")
    assert _exec_after_watch(c, lambda: r.expire("k", 100)) is None
    # PERSIST of a key without TTL changes nothing.
    r.persist("k")
    assert _exec_after_watch(c, lambda: r.persist("k")) == [b"OK"]
    assert _exec_after_watch(c, lambda: r.persist("k") or r.expire("k", 50)) is None
    assert _exec_after_watch(c, lambda: r.persist("k")) is None


def test_key_already_expired_when_watched_is_just_absent(r, make_client):
    c = make_client()
    # Expired but (most likely) not yet reclaimed when WATCH runs; its reclaiming later,
    # by EXEC or by another client's read, is not a modification.
    r.set("k", "v", px=20)
    time.sleep(0.03)
    assert _exec_after_watch(c, lambda: None) == [b"OK"]
    r.set("k", "v", px=20)
    time.sleep(0.03)
    assert _exec_after_watch(c, lambda: r.get("k")) == [b"OK"]
    r.set("k", "v", px=20)
    time.sleep(0.03)
    assert _exec_after_watch(c, lambda: r.set("k", "new")) is None


@pytest.mark.streamd_only
def test_a_key_still_lives_in_its_expiry_millisecond(monkeypatch):
    # Redis expires a key once the clock is past its time (now > when), on access and
    # in the active cycle alike; a millisecond is too short to pin over the wire.
    from streamd.store import keyspace

    ks = keyspace.Keyspace(1)
    db = ks.dbs[0]
    db.data[b"k"] = b"v"
    db.expires[b"k"] = 1_000
    monkeypatch.setattr(keyspace, "now_ms", lambda: 1_000)
    assert ks.active_expire() == 0
    assert db.get(b"k") == b"v"
    assert db.keys() == [b"k"]
    assert db.delete(b"k", changes=0) is True
    db.data[b"k"] = b"v"
    db.expires[b"k"] = 1_000
    monkeypatch.setattr(keyspace, "now_ms", lambda: 1_001)
    assert db.get(b"k") is None
    assert ks.expired_keys == 1


@pytest.mark.streamd_only
def test_mass_expiry_is_reclaimed_in_bounded_steps():
    # Dedup keys written together expire together: each cron step must stay short (the
    # server is single-threaded) and the whole batch must still go in reasonable time.
    # Counted, not timed: a step's deadline passes at its 25th check, and every key
    # examined or copied is counted.
    from streamd.store.keyspace import Keyspace, now_ms

    n = 100_000
    work = {"examined": 0, "copied": 0}

    class CountedExpires(dict):
        def get(self, key, default=None):
            work["examined"] += 1
            return super().get(key, default)

        def __iter__(self):
            # Copying the keys for the sample pool: a few times the keys in all while the
            # pool is rebuilt only when stale or a second old; a copy per sample would be
            # quadratic (billions here), so stop it early.
            work["copied"] += len(self)
            assert work["copied"] <= 20 * n, "the sample pool is copied far too often"
            return super().__iter__()

    class Deadline:
        # ``time.perf_counter() >= deadline`` asks ``deadline <= now``.
        def __init__(self):
            self.checks = 0

        def __le__(self, now):
            self.checks += 1
            return self.checks >= 25

    class Budget:
        def __radd__(self, start):  # ``time.perf_counter() + budget``
            return Deadline()

    class CountedKeyspace(Keyspace):
        ACTIVE_EXPIRE_BUDGET_S = Budget()

    ks = CountedKeyspace(2)
    db = ks.dbs[0]
    db.expires = CountedExpires()
    t = now_ms()
    for i in range(n):
        k = b"dedup:%d" % i
        db.data[k] = b"1"
        db.expires[k] = t - 1
    other = ks.dbs[1]
    other.data[b"k"] = b"1"
    other.expires[b"k"] = t - 1
    worst = 0
    steps = 0
    while (db.expires or other.expires) and steps < 2000:
        before = work["examined"]
        ks.active_expire()
        worst = max(worst, work["examined"] - before)
        steps += 1
    assert not db.expires and not db.data
    assert not other.expires  # the busy db does not starve the next one
    # A step samples 25 rounds of 20 keys, then stops (a round that found its whole sample
    # gone skips the check, and the fresh pool it leaves makes the next one count).
    assert 0 < worst <= 2 * 25 * 20
    assert work["copied"] <= 20 * n
    assert ks.expired_keys == n + 1
