"""A Hypothesis state machine driving XADD/XDEL/XREADGROUP/XACK/XCLAIM/XAUTOCLAIM/
XGROUP SETID through the server and checking every reply, plus XPENDING after each step,
against a plain-Python model of one group's PEL.

Idle times are not modelled: every claim uses min-idle-time 0, so timing cannot matter.
The model also keeps the CLAIM order (§4.3): the NACK zone, then entries in the order of
their last delivery (the clock never goes back within a test). XNACK and CLAIM reads run
only on targets that have them (8.8 / 8.4).
Runs against a real Redis too (``--redis-url``), which checks the model itself."""

from __future__ import annotations

import redis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, invariant, precondition, rule,
                                 run_state_machine_as_test)

CONSUMERS = ["c0", "c1", "c2"]
MAX_ID = 12  # entries are n-0 for n in 1..MAX_ID


def wrap(count: int) -> int:
    return count - 2**64 if count >= 2**63 else count


def fid(n: int) -> bytes:
    return b"%d-0" % n


class GroupModel(RuleBasedStateMachine):
    client = None  # set by the test
    version = (0,)  # target version, set by the test

    def __init__(self):
        super().__init__()
        self.r = type(self).client
        self.cmd("FLUSHALL")
        self.cmd("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
        self.live: dict[int, bytes] = {}  # entry n -> value
        self.added = 0  # highest n appended
        self.last = 0  # group last-delivered n
        self.pel: dict[int, list] = {}  # n -> [owner or None, delivery count]
        self.order: list[int] = []  # owned entries, oldest delivery first
        self.nackq: list[int] = []  # the NACK zone, in NACK order

    def _unplace(self, n):
        if n in self.order:
            self.order.remove(n)
        if n in self.nackq:
            self.nackq.remove(n)

    def _delivered(self, n):
        """n was (re)delivered now: it moves to the tail of the time order."""
        self._unplace(n)
        self.order.append(n)

    def _drop(self, n):
        self.pel.pop(n, None)
        self._unplace(n)

    def cmd(self, *args):
        # A bare connection: replies exactly as parsed, without redis-py's callbacks.
        self.r.send_command(*args)
        reply = self.r.read_response()
        if isinstance(reply, Exception):
            raise reply
        return reply

    # --- stream changes ------------------------------------------------------------------
    @rule(k=st.integers(1, 3))
    def xadd(self, k):
        for _ in range(k):
            if self.added >= MAX_ID:
                return
            self.added += 1
            v = b"v%d" % self.added
            assert self.cmd("XADD", "s", fid(self.added), "f", v) == fid(self.added)
            self.live[self.added] = v

    @rule(n=st.integers(1, MAX_ID))
    def xdel(self, n):
        assert self.cmd("XDEL", "s", fid(n)) == (1 if n in self.live else 0)
        self.live.pop(n, None)

    # --- reads ---------------------------------------------------------------------------
    @rule(c=st.sampled_from(CONSUMERS), count=st.integers(0, 4), noack=st.booleans())
    def read_new(self, c, count, noack):
        args = ["XREADGROUP", "GROUP", "g", c]
        if count:
            args += ["COUNT", count]
        if noack:
            args.append("NOACK")
        reply = self.cmd(*args, "STREAMS", "s", ">")
        fresh = sorted(n for n in self.live if n > self.last)
        if count:
            fresh = fresh[:count]
        if not fresh:
            assert reply is None
            return
        assert reply == [[b"s", [[fid(n), [b"f", self.live[n]]] for n in fresh]]]
        self.last = fresh[-1]
        if not noack:
            for n in fresh:
                self.pel[n] = [c, 1]
                self._delivered(n)

    @rule(c=st.sampled_from(CONSUMERS), start=st.integers(0, MAX_ID), count=st.integers(0, 4))
    def read_history(self, c, start, count):
        args = ["XREADGROUP", "GROUP", "g", c]
        if count:
            args += ["COUNT", count]
        reply = self.cmd(*args, "STREAMS", "s", fid(start))
        mine = sorted(n for n, (o, _) in self.pel.items() if o == c and n > start)
        if count:
            mine = mine[:count]
        expect = []
        for n in mine:
            if n in self.live:
                expect.append([fid(n), [b"f", self.live[n]]])
                self.pel[n][1] += 1
                self._delivered(n)
            else:
                expect.append([fid(n), None])
        assert reply == [[b"s", expect]]

    # --- PEL changes ---------------------------------------------------------------------
    @rule(ns=st.lists(st.integers(1, MAX_ID), min_size=1, max_size=4))
    def xack(self, ns):
        expect = len({n for n in ns if n in self.pel})
        assert self.cmd("XACK", "s", "g", *map(fid, ns)) == expect
        for n in ns:
            self._drop(n)

    @rule(c=st.sampled_from(CONSUMERS), ns=st.lists(st.integers(1, MAX_ID), min_size=1,
                                                      max_size=3),
          justid=st.booleans(), force=st.booleans())
    def xclaim(self, c, ns, justid, force):
        args = ["XCLAIM", "s", "g", c, "0", *map(fid, ns)]
        if justid:
            args.append("JUSTID")
        if force:
            args.append("FORCE")
        reply = self.cmd(*args)
        expect = []
        for n in ns:
            if n not in self.live:
                self._drop(n)
                continue
            if n not in self.pel:
                if not force:
                    continue
                self.pel[n] = [None, 1]
            pe = self.pel[n]
            pe[0] = c
            if not justid:
                pe[1] += 1
            self._delivered(n)
            expect.append(fid(n) if justid else [fid(n), [b"f", self.live[n]]])
        assert reply == expect

    @rule(c=st.sampled_from(CONSUMERS), start=st.integers(0, MAX_ID), count=st.integers(1, 3),
          justid=st.booleans())
    def xautoclaim(self, c, start, count, justid):
        args = ["XAUTOCLAIM", "s", "g", c, "0", fid(start), "COUNT", count]
        if justid:
            args.append("JUSTID")
        reply = self.cmd(*args)
        scan = sorted(n for n in self.pel if n >= start)
        attempts = count * 10
        claimed, deleted = [], []
        k = 0
        while k < len(scan) and attempts and count:
            attempts -= 1
            n = scan[k]
            k += 1
            count -= 1
            if n not in self.live:
                self._drop(n)
                deleted.append(fid(n))
                continue
            pe = self.pel[n]
            pe[0] = c
            if not justid:
                pe[1] += 1
            self._delivered(n)
            claimed.append(fid(n) if justid else [fid(n), [b"f", self.live[n]]])
        cursor = fid(scan[k]) if k < len(scan) else b"0-0"
        assert reply == [cursor, claimed, deleted]

    @rule(n=st.integers(0, MAX_ID))
    def setid(self, n):
        assert self.cmd("XGROUP", "SETID", "s", "g", fid(n)) == b"OK"
        self.last = n

    @precondition(lambda self: self.version >= (8, 8))
    @rule(mode=st.sampled_from(["SILENT", "FAIL", "FATAL"]),
          ns=st.lists(st.integers(1, MAX_ID), min_size=1, max_size=3),
          retry=st.none() | st.integers(0, 5), force=st.booleans())
    def xnack(self, mode, ns, retry, force):
        args = ["XNACK", "s", "g", mode, "IDS", len(ns), *map(fid, ns)]
        if retry is not None:
            args += ["RETRYCOUNT", retry]
        if force:
            args.append("FORCE")
        reply = self.cmd(*args)
        done = 0
        for n in ns:
            if n in self.pel:
                pe = self.pel[n]
                if retry is not None:
                    pe[1] = retry
                elif mode == "SILENT":
                    pe[1] = max(pe[1] - 1, 0)
                elif mode == "FATAL":
                    pe[1] = 2**63 - 1
            elif force and n in self.live:
                self.pel[n] = [None, retry if retry is not None
                               else (2**63 - 1 if mode == "FATAL" else 0)]
            else:
                continue
            self.pel[n][0] = None
            self._unplace(n)
            self.nackq.append(n)
            done += 1
        assert reply == done

    @precondition(lambda self: self.version >= (8, 4))
    @rule(c=st.sampled_from(CONSUMERS), count=st.integers(0, 4))
    def claim_read(self, c, count):
        args = ["XREADGROUP", "GROUP", "g", c]
        if count:
            args += ["COUNT", count]
        reply = self.cmd(*args, "CLAIM", "0", "STREAMS", "s", ">")
        picked = [n for n in self.nackq + self.order if n in self.live]
        if count:
            picked = picked[:count]
        expect = []
        for n in picked:
            expect.append((fid(n), [b"f", self.live[n]], self.pel[n][1]))
            self.pel[n] = [c, self.pel[n][1] + 1]
            self._delivered(n)
        room = count - len(picked) if count else None
        fresh = sorted(n for n in self.live if n > self.last)
        if room is not None:
            fresh = fresh[:room]
        for n in fresh:
            expect.append((fid(n), [b"f", self.live[n]], 0))
            self.pel[n] = [c, 1]
            self._delivered(n)
        if fresh:
            self.last = fresh[-1]
        if not expect:
            assert reply is None
            return
        assert len(reply) == 1 and reply[0][0] == b"s"
        got = reply[0][1]
        assert [(e[0], e[1], e[3]) for e in got] == [(i, f, wrap(k)) for i, f, k in expect]
        assert all(isinstance(e[2], int) and e[2] >= 0 for e in got)

    # --- checks --------------------------------------------------------------------------
    @invariant()
    def pending_matches(self):
        rows = self.cmd("XPENDING", "s", "g", "-", "+", "1000")
        got = [(row[0], row[1], row[3]) for row in rows]
        # Counts are unsigned 64-bit in Redis and printed signed: FATAL + 1 wraps negative.
        want = [(fid(n), o.encode() if o else b"", wrap(cnt))
                for n, (o, cnt) in sorted(self.pel.items())]
        assert got == want
        assert all(row[2] == -1 for row in rows if row[1] == b"")  # NACKed: idle -1
        summary = self.cmd("XPENDING", "s", "g")
        assert summary[0] == len(self.pel)
        if self.pel:
            assert summary[1:3] == [fid(min(self.pel)), fid(max(self.pel))]
            owners: dict[str, int] = {}
            for o, _ in self.pel.values():
                if o is not None:  # NACKed entries belong to no consumer
                    owners[o] = owners.get(o, 0) + 1
            assert summary[3] == [[o.encode(), b"%d" % k] for o, k in sorted(owners.items())]


def test_group_state_machine(target, r):
    conn = redis.Connection(host=target.host, port=target.port, db=target.db,
                            password=target.password, protocol=2, socket_timeout=10)
    conn.connect()
    GroupModel.client = conn
    GroupModel.version = target.version
    try:
        run_state_machine_as_test(
            GroupModel,
            settings=settings(max_examples=60, stateful_step_count=40, deadline=None,
                              suppress_health_check=list(HealthCheck)))
    finally:
        conn.disconnect()
