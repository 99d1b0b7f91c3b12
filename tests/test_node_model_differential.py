"""Differential test of the node model: random appends, deletions and trims against a real
Redis and an in-process streamd, comparing after every step what the node boundaries show.

Which entries share a listpack node decides what ``MAXLEN ~``, ``MINID ~`` and ``LIMIT``
remove and what XINFO STREAM reports as ``radix-tree-keys`` / ``radix-tree-nodes``; the
boundaries follow listpack's byte encodings, so the generator aims at the encoding edges:
values that are small, negative or int64-edge integers, 12/13/19/20-digit numbers, leading
zeros, ``-0``, floats, empty strings and strings around 63/64/4095/4096 bytes and far
beyond; field lists that repeat the node's master fields or change them; entry IDs in
same-ms bursts and with jumps that make the ms and seq deltas against the node's master ID
need every integer width (negative seq deltas and deltas past int64 included); and
``stream-node-max-entries`` / ``stream-node-max-bytes`` from 0 (unlimited) and 1 up.

After every command the replies must agree, and so must XLEN, XINFO STREAM (every field the
target has) and, every few steps, XRANGE / XREVRANGE / XREAD over node edges. A second test
measures the byte estimate itself: for a short random stream it finds, by bisection on
each server, the smallest ``stream-node-max-bytes`` that keeps every entry in one node
(one more than the largest "node bytes so far + next entry's raw size"); the two must be
equal to the byte. A third compares, case by case, the answers to bad trimming options and
XSETID arguments (which error wins when several are wrong, and that nothing changed).

The Redis is ``--redis-url``'s, or a redis-server started for the module (see
test_differential); without one the tests skip. ``STREAMD_NODE_SEEDS=n`` runs seeds
``1..n`` instead of the few of the default run, ``STREAMD_NODE_STEPS`` sets the commands
per seed.
"""

from __future__ import annotations

import contextlib
import os
import random
import time

import pytest
import redis

from tests.test_differential import _local_redis

U64 = (1 << 64) - 1
KEY = "nodes:s"
SEEDS = range(1, int(os.environ.get("STREAMD_NODE_SEEDS", "6")) + 1)
STEPS = int(os.environ.get("STREAMD_NODE_STEPS", "250"))
NODE_ENTRIES = (0, 1, 2, 3, 5, 10, 100, 128, 130, 300)
# Byte limits. Redis preallocates min(limit, 4096) bytes for a new node, and lowering a
# limit below 4096 under a live stream can crash Redis 7.0 on the next read: when the new
# node's first realloc lands on the block the previous node's shrink just freed, the tree
# keeps the new node's old pointer. So a limit under 4096 is set while the key is absent,
# and a live stream's limit only goes up (0 = unlimited = the top).
NODE_BYTES = (1, 10, 30, 50, 60, 100, 150, 300, 1000, 4096, 8192, 65536, 0)
INT_EDGES = (
    "0", "1", "127", "128", "-1", "-128", "-129", "4095", "4096", "-4096", "-4097",
    "32767", "32768", "-32768", "-32769", "8388607", "8388608", "-8388608", "-8388609",
    "2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "18446744073709551615", "123456789012", "1234567890123", "1234567890123456789",
    "12345678901234567890", "-123456789012", "-1234567890123", "-1234567890123456789",
    "-12345678901234567890", "007", "00", "-0", "-007", "0.5", "-1.5", "1e3", "+1", " 1",
    "1 ", "-", "", "x")
STRING_LENGTHS = (62, 63, 64, 65, 125, 126, 127, 128, 4094, 4095, 4096, 4097)
FIELD_NAMES = ("f", "g", "name", "123", "-5", "0", "", "x" * 70)
# Field names at the string encoding edges (6-bit / 12-bit length, 1- / 2-byte backlen),
# and integer-like ones; for the byte-threshold test, where a one-byte error shows.
EDGE_NAMES = FIELD_NAMES + ("n" * 63, "n" * 64, "n" * 125, "n" * 126, "-4096", "4096", "00")
# ID delta edges: where the listpack integer encoding of ms / seq deltas gets wider.
DELTA_EDGES = (0, 1, 127, 128, 4095, 4096, 32767, 32768, (1 << 23) - 1, 1 << 23,
               (1 << 31) - 1, 1 << 31, (1 << 63) - 1, 1 << 63)


class NodeGenerator:
    """A seeded source of XADD / XDEL / XTRIM / CONFIG SET commands on one stream."""

    def __init__(self, seed: int, version: tuple):
        self.rnd = random.Random(seed)
        self.version = version
        self.last = (0, 0)  # the last ID a reply handed out
        self.added: list[str] = []  # IDs added so far (XDEL and range targets)
        self.schema = ["f"]  # the field names the "producer" currently sends
        # Once IDs are past the clock, "*" is last_id + 1 on both servers alike.
        self.clock_ms = int(time.time() * 1000) + 10**9
        entries = self.rnd.choice(NODE_ENTRIES)
        self.node_bytes = self.rnd.choice(NODE_BYTES)  # see NODE_BYTES
        self.setup = [["DEL", KEY],
                      ["CONFIG", "SET", "stream-node-max-entries", str(entries)],
                      ["CONFIG", "SET", "stream-node-max-bytes", str(self.node_bytes)]]

    def value(self) -> bytes:
        rnd = self.rnd
        c = rnd.random()
        if c < 0.35:
            return rnd.choice(INT_EDGES).encode()
        if c < 0.55:
            return str(rnd.randint(-10**6, 10**6)).encode()
        if c < 0.7:
            return rnd.choice((b"a", b"1")) * rnd.choice(STRING_LENGTHS)
        if c < 0.9:
            return bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 40)))
        if c < 0.97:
            return b"v" * rnd.randint(0, 300)
        return b"L" * rnd.choice((10000, 20000, 70000))

    def fields(self) -> list:
        rnd = self.rnd
        if rnd.random() < 0.01:  # many fields: the entry's lp-count needs a wider int
            return [x for _ in range(rnd.choice((124, 125, 126, 130))) for x in ("n", "1")]
        if rnd.random() < 0.2:
            width = rnd.choice((1, 1, 1, 2, 3, 5, 10))
            self.schema = [rnd.choice(FIELD_NAMES) for _ in range(width)]
        names = list(self.schema)
        if rnd.random() < 0.1:  # one entry with other names, then back to the schema
            names[rnd.randrange(len(names))] = rnd.choice(FIELD_NAMES)
        out = []
        for name in names:
            out += [name, self.value()]
        return out

    def new_id(self) -> str:
        rnd = self.rnd
        ms, seq = self.last
        if ms > self.clock_ms and seq < U64 and rnd.random() < 0.2:
            return "*"
        if seq == U64 and self.version < (7, 2):
            ms += 1  # 7.0 answers "ms-*" at the last seq with a wrong error (fixed in 7.2)
        c = rnd.random()
        if c < 0.35:
            return f"{max(ms, 1)}-*"  # same-ms burst
        if c < 0.6:
            return f"{ms + rnd.randint(1, 200)}-*"
        if c < 0.7:
            return f"{ms}-{min(U64, seq + rnd.randint(1, 1 << rnd.choice((2, 8, 20, 40, 63))))}"
        if c < 0.8:
            jump = rnd.randint(1, 1 << rnd.choice((7, 12, 15, 23, 31, 40)))
            return f"{ms + jump}-{rnd.randint(0, 3)}"
        if c < 0.85:  # ms deltas past int32 and int64; seqs far from the master's
            jump = (1 << rnd.choice((32, 45, 60, 63, 63))) + rnd.randint(0, 5)
            return f"{min(U64 - 1, ms + jump)}-{rnd.choice((0, 0, U64 - 5, 1 << 63))}"
        if c < 0.9:
            return f"{ms}-{min(U64, seq + (1 << 63) + rnd.randint(0, 10))}"
        return f"{ms + 1}-{rnd.randint(0, U64)}"

    def trim(self, required: bool) -> list:
        rnd = self.rnd
        if not required and rnd.random() < 0.6:
            return []
        strategy = rnd.choice(("MAXLEN", "MINID"))
        op = rnd.choice(("", "=", "~", "~"))
        out = [strategy] + ([op] if op else [])
        if strategy == "MAXLEN":
            out.append(str(rnd.choice((0, 1, 2, 5, 10, 20, 50, rnd.randint(0, 300)))))
        else:
            ms = max(0, self.last[0] - rnd.randint(0, 300))
            out.append(f"{ms}-{rnd.randint(0, 3)}" if rnd.random() < 0.8 else str(ms))
        if op == "~" and rnd.random() < 0.4:
            out += ["LIMIT", str(rnd.choice((0, 1, 2, 3, 5, 10, 50, 100, 1000)))]
        return out

    def some_id(self) -> str:
        if self.added and self.rnd.random() < 0.8:
            return self.rnd.choice(self.added)
        return self.rnd.choice(("-", "+", "0", f"{self.last[0]}", f"{self.last[0]}-0"))

    def command(self) -> list:
        rnd = self.rnd
        t = rnd.random()
        if t < 0.04:
            return ["CONFIG", "SET", "stream-node-max-entries", str(rnd.choice(NODE_ENTRIES))]
        if t < 0.06:
            higher = NODE_BYTES[NODE_BYTES.index(self.node_bytes):]
            self.node_bytes = rnd.choice(higher)
            return ["CONFIG", "SET", "stream-node-max-bytes", str(self.node_bytes)]
        if t < 0.70:
            return ["XADD", KEY, *self.trim(False), self.new_id(), *self.fields()]
        if t < 0.80 and self.added:
            return ["XDEL", KEY, *(rnd.choice(self.added) for _ in range(rnd.randint(1, 4)))]
        if t < 0.94:
            return ["XTRIM", KEY, *self.trim(True)]
        if t < 0.97:  # a capped producer
            limit = ["LIMIT", str(rnd.randint(0, 30))] if rnd.random() < 0.5 else []
            return ["XADD", KEY, "MAXLEN", "~", str(rnd.randint(0, 30)), *limit,
                    self.new_id(), *self.fields()]
        ms, seq = self.last
        if seq < U64:  # forward only: a lower last ID could put entries out of order
            extra = ["ENTRIESADDED", str(10**6 + rnd.randint(0, 10))] if rnd.random() < 0.3 else []
            return ["XSETID", KEY, f"{ms}-{seq + rnd.randint(1, 1000)}", *extra]
        return ["XLEN", KEY]

    def reads(self) -> list:
        """Reads that cross node edges, to run after a command."""
        rnd = self.rnd
        a, b = sorted((self.some_id(), self.some_id()), key=_order)
        count = str(rnd.choice((1, 2, 3, 7, 50)))
        excl = "(" if a not in ("-", "+") and rnd.random() < 0.3 else ""
        return [["XRANGE", KEY, "-", "+"],
                ["XRANGE", KEY, excl + a, b, "COUNT", count],
                ["XREVRANGE", KEY, b, a, "COUNT", count],
                ["XREAD", "COUNT", count, "STREAMS", KEY, a if a not in ("-", "+") else "0"],
                ["XINFO", "STREAM", KEY, "FULL", "COUNT", count]]


def _order(arg: str):
    if arg == "-":
        return (-1, 0)
    if arg == "+":
        return (1 << 65, 0)
    ms, _, seq = arg.partition("-")
    return (int(ms), int(seq or 0))


def _run(client, cmd):
    try:
        return client.execute_command(*cmd)
    except redis.ResponseError as exc:
        return ("error", str(exc))


def _info(client, cmd=("XINFO", "STREAM", KEY)):
    reply = _run(client, cmd)
    if isinstance(reply, list):
        return dict(zip(reply[0::2], reply[1::2]))
    return reply


def _short(cmd) -> str:
    words = (x.decode("latin-1") if isinstance(x, bytes) else str(x) for x in cmd)
    return " ".join(w if len(w) < 40 else f"{w[:12]}...({len(w)} bytes)" for w in words)


@pytest.fixture(scope="module")
def pair(request):
    """(redis client, streamd client, Redis's version), RESP2, raw replies."""
    from tests.inprocess import InProcessServer

    with contextlib.ExitStack() as stack:
        url = request.config.getoption("--redis-url") or stack.enter_context(_local_redis())
        if not url:
            pytest.skip("node model differential test: needs --redis-url or a redis-server")
        ref = redis.Redis.from_url(url, single_connection_client=True)
        version = tuple(int(p) for p in ref.info("server")["redis_version"].split(".")[:3])
        if version < (7, 0):
            pytest.skip(f"node model differential test: needs Redis >= 7.0, found {version}")
        srv = stack.enter_context(InProcessServer())
        ours = redis.Redis(port=srv.port, single_connection_client=True)
        saved = ref.config_get("stream-node-max-*")
        for c in (ref, ours):
            c.response_callbacks.clear()
        yield ref, ours, version
        ref.delete(KEY)
        for name, value in saved.items():
            ref.config_set(name, value)
        ref.close()
        ours.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_node_boundaries_match_redis(pair, seed):
    ref, ours, version = pair
    gen = NodeGenerator(seed, version)
    rnd = gen.rnd
    history = [_short(cmd) for cmd in gen.setup]
    for cmd in gen.setup:
        for c in (ref, ours):
            c.execute_command(*cmd)

    def check(cmd, a, b, what):
        if a != b:
            tail = "\n".join(history[-15:])
            pytest.fail(f"seed {seed}: {what} differs after {_short(cmd)}\n"
                        f"  redis:   {a!r:.2000}\n  streamd: {b!r:.2000}\n"
                        f"last commands:\n{tail}")

    for _ in range(STEPS):
        cmd = gen.command()
        expected, got = _run(ref, cmd), _run(ours, cmd)
        history.append(f"{_short(cmd)} -> {expected!r:.80}")
        check(cmd, expected, got, "the reply")
        if cmd[0] == "XADD" and isinstance(expected, bytes):
            ms, _, seq = expected.decode().partition("-")
            gen.last = (int(ms), int(seq))
            gen.added.append(expected.decode())
        elif cmd[0] == "XSETID" and expected == b"OK":
            ms, _, seq = cmd[2].partition("-")
            gen.last = (int(ms), int(seq))
        check(cmd, _run(ref, ["XLEN", KEY]), _run(ours, ["XLEN", KEY]), "XLEN")
        a, b = _info(ref), _info(ours)
        if isinstance(a, dict) and isinstance(b, dict):
            b = {k: v for k, v in b.items() if k in a}  # fields newer than the target
        check(cmd, a, b, "XINFO STREAM")
        if rnd.random() < 0.15:
            for read in gen.reads():
                if read[1] == "STREAM":
                    ra, rb = _info(ref, read), _info(ours, read)
                    if isinstance(ra, dict) and isinstance(rb, dict):
                        rb = {k: v for k, v in rb.items() if k in ra}
                else:
                    ra, rb = _run(ref, read), _run(ours, read)
                check(cmd, ra, rb, _short(read))


def _one_node_limit(client, appends: list, deletes: list) -> int:
    """The smallest stream-node-max-bytes at which ``appends`` (XADD argument lists, with
    the IDs in ``deletes`` XDELed before the last one) all land in one node."""

    def nodes(limit: int) -> int:
        client.execute_command("DEL", KEY)  # the limit changes only while the key is absent
        client.execute_command("CONFIG", "SET", "stream-node-max-bytes", str(limit))
        pipe = client.pipeline(transaction=False)
        for args in appends[:-1]:
            pipe.execute_command("XADD", KEY, *args)
        if deletes:
            pipe.execute_command("XDEL", KEY, *deletes)
        pipe.execute_command("XADD", KEY, *appends[-1])
        pipe.execute_command("XINFO", "STREAM", KEY)
        info = pipe.execute()[-1]
        if isinstance(info, list):
            info = dict(zip(info[0::2], info[1::2]))
        return info[b"radix-tree-keys"]

    lo, hi = 1, 1 << 21  # a limit of lo splits the stream, one of hi does not
    assert nodes(lo) > 1 and nodes(hi) == 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if nodes(mid) == 1:
            hi = mid
        else:
            lo = mid
    return hi


def _threshold_case(gen: NodeGenerator, kind: str):
    """``(appends, deletes)`` for one byte-threshold probe: XADD argument lists and the IDs
    to XDEL before the last append (never the first, so the node survives)."""
    rnd = gen.rnd
    first = (rnd.choice((1, 10**6, 1 << 40)), rnd.choice((0, 5, 1 << 62)))
    ids = [first]
    if kind == "edges":  # every entry's ms / seq delta against the first one at an edge
        for _ in range(rnd.choice((2, 3, 4))):
            dms = rnd.choice(DELTA_EDGES)
            if dms:
                seq = (first[1] + rnd.choice((-1, 1)) * rnd.choice(DELTA_EDGES)) % (U64 + 1)
                ids.append((first[0] + dms, seq))
            else:
                ids.append((first[0], first[1] + rnd.choice(DELTA_EDGES[1:-2])))
        ids = sorted(set(ids))
    else:
        count = {"mixed": rnd.choice((2, 3, 5)), "wide": rnd.choice((2, 3)),
                 "long": rnd.randint(128, 134)}[kind]
        gen.last = first
        for _ in range(count - 1):
            ms, _, seq = gen.new_id().partition("-")
            if not seq.isdigit():  # "*" and "ms-*": the ID they would get
                ms = gen.last[0] + 1 if ms == "*" else int(ms)
                seq = gen.last[1] + 1 if ms == gen.last[0] else 0
            sid = (int(ms), int(seq))
            if sid <= gen.last or sid[1] > U64:
                sid = (gen.last[0] + 1, 0)
            ids.append(sid)
            gen.last = sid
    appends = []
    for sid in ids:
        if kind == "long":
            fields = ["f", str(rnd.randint(0, 200))]
        elif kind == "wide":  # same-fields lp-count n+3 and other-fields 2n+4 near 128
            n = rnd.choice((124, 125, 126)) if not appends or rnd.random() < 0.5 \
                else rnd.choice((61, 62, 62, 63))
            fields = ["w", "1"] * n
        elif kind == "edges":
            names = [rnd.choice(EDGE_NAMES) for _ in range(rnd.choice((1, 1, 2, 3)))]
            fields = [x for name in names for x in (
                name, rnd.choice(INT_EDGES) if rnd.random() < 0.6 else gen.value())]
        else:
            fields = gen.fields()
        appends.append(["%d-%d" % sid, *fields])
    # "long" cases cross 127 live entries, or (all but two deleted) 127 tombstones
    share = rnd.choice((0.0, 1.0)) if kind == "long" else 0.3
    deletes = [a[0] for a in appends[1:-1] if rnd.random() < share]
    return appends, deletes


@pytest.mark.parametrize("seed", SEEDS)
def test_node_byte_threshold_matches_redis(pair, seed):
    ref, ours, version = pair
    gen = NodeGenerator(seed, version)
    for c in (ref, ours):
        c.execute_command("CONFIG", "SET", "stream-node-max-entries", "0")
    for case in range(16):
        kind = ("mixed", "edges", "wide", "long")[case % 4]
        appends, deletes = _threshold_case(gen, kind)
        if len(appends) < 2 or any(int(a[0].partition("-")[0]) > U64 for a in appends):
            continue
        limits = [_one_node_limit(c, appends, deletes) for c in (ref, ours)]
        assert limits[0] == limits[1], (
            f"seed {seed} case {case} ({kind}): Redis fits the entries in one node from "
            f"stream-node-max-bytes {limits[0]}, streamd from {limits[1]}; entries: "
            + "; ".join(_short(a[:7]) for a in appends) + f"; deleted before the last: {deletes}")
    for c in (ref, ours):
        c.execute_command("DEL", KEY)


# Bad trimming options and XSETID arguments, each on a fresh 1-0, (2-0 deleted), 3-0
# stream (STR is a string key, NONE is missing): Redis's validation order decides which
# error a command with several faults gets, and whether anything changed first.
STR, NONE = "nodes:str", "nodes:none"
FAR_MS = 10**14  # a last ID past any clock
_TRIMS = (
    ["MAXLEN"], ["MAXLEN", "-1"], ["MAXLEN", "abc"], ["MAXLEN", "1.5"], ["MAXLEN", "-0"],
    ["MAXLEN", "+1"], ["MAXLEN", "007"], ["MAXLEN", "9223372036854775808"], ["MAXLEN", "~"],
    ["MAXLEN", "="], ["MAXLEN", "~", "-1"], ["MAXLEN", "~", "~"], ["MAXLEN", "1", "LIMIT", "5"],
    ["MAXLEN", "=", "1", "LIMIT", "5"], ["MAXLEN", "~", "1", "LIMIT", "-1"],
    ["MAXLEN", "~", "1", "LIMIT", "x"], ["MAXLEN", "~", "1", "LIMIT", "0"], ["LIMIT", "5"],
    ["LIMIT", "0"], ["LIMIT", "-1"], ["LIMIT", "5", "MAXLEN", "~", "1"],
    ["MAXLEN", "1", "MAXLEN", "2"], ["MAXLEN", "1", "MINID", "2"], ["MINID", "1", "MAXLEN", "x"],
    ["MAXLEN", "-1", "LIMIT", "x"], ["MAXLEN", "x", "MINID", "y"], ["MINID", "abc"],
    ["MINID", "-"], ["MINID", "+"], ["MINID", "1-"], ["MINID", "5-*"], ["MINID", "(5"],
    ["MINID", "18446744073709551616"], ["MINID", "~", "9", "LIMIT", "2", "LIMIT", "3"],
    ["maxlen", "~", "1", "limit", "3"], ["MAXLEN", "~", "1", "LIMIT", "3", "MAXLEN", "2"])
OPTION_CASES = (
    [["XADD", KEY, *t, *tail] for t in _TRIMS
     for tail in (["*", "f", "v"], ["*", "f"], ["2-0", "f", "v"], ["0", "f", "v"], ["bad", "f"])]
    + [["XADD", k, "NOMKSTREAM", *t, "5-0", "f", "v"] for k in (NONE, STR)
       for t in (["MAXLEN", "-1"], ["MAXLEN", "1"], ["LIMIT", "1"])]
    + [["XTRIM", k, *t] for k in (KEY, NONE, STR)
       for t in _TRIMS + (["MAXLEN", "1", "FOO"], ["FOO"], ["MAXLEN", "1", "NOMKSTREAM"],
                          ["MAXLEN", "1", "*"], ["MAXLEN", "1", "LIMIT"], ["MAXLEN", "="])]
    + [["XSETID", k, *args] for k in (KEY, NONE, STR) for args in (
        ["5-0"], ["x"], ["-"], ["+"], ["5-*"], ["5"], ["5-0", "ENTRIESADDED"],
        ["5-0", "ENTRIESADDED", "-1"], ["5-0", "ENTRIESADDED", "x"], ["5-0", "ENTRIESADDED", "1"],
        ["5-0", "ENTRIESADDED", "2"], ["5-0", "MAXDELETEDID"], ["5-0", "MAXDELETEDID", "x"],
        ["5-0", "MAXDELETEDID", "6-0"], ["5-0", "MAXDELETEDID", "5-0"],
        ["5-0", "MAXDELETEDID", "-"], ["5-0", "MAXDELETEDID", "0-0"],
        ["5-0", "MAXDELETEDID", "1-0", "ENTRIESADDED", "-1"],
        ["5-0", "ENTRIESADDED", "-1", "MAXDELETEDID", "x"], ["5-0", "FOO"], ["5-0", "5"],
        ["5-0", "ENTRIESADDED", "3", "ENTRIESADDED", "1"], ["3-0"], ["3-0", "ENTRIESADDED", "1"],
        ["2-0", "ENTRIESADDED", "1"], ["100-0", "ENTRIESADDED", "1"],
        ["5-0", "MAXDELETEDID", "4-0", "MAXDELETEDID", "6-0"],
        ["5-0", "maxdeletedid", "3-0", "entriesadded", "9"],
        ["5-0", "ENTRIESADDED", "9223372036854775808"], ["1-0"])])


def _option_case_skipped(cmd, version) -> bool:
    """Cases whose answer changed after ``version``."""
    if version < (7, 2) and cmd[:3] == ["XSETID", KEY, "1-0"]:
        return True  # 7.2 checks the current max-deleted-entry-id (2-0) before the top item
    return False


@pytest.mark.parametrize("cmd", OPTION_CASES, ids=lambda cmd: " ".join(cmd))
def test_trim_and_xsetid_option_errors_match_redis(pair, cmd):
    ref, ours, version = pair
    if _option_case_skipped(cmd, version):
        pytest.skip("answer changed after the target's version")
    for c in (ref, ours):
        c.execute_command("DEL", KEY, STR, NONE)
        c.execute_command("CONFIG", "SET", "stream-node-max-entries", "2")
        c.execute_command("CONFIG", "SET", "stream-node-max-bytes", "4096")
        c.execute_command("SET", STR, "x")
        for sid in ("1-0", "2-0", "3-0"):
            c.execute_command("XADD", KEY, sid, "f", "v")
        c.execute_command("XDEL", KEY, "2-0")
        c.execute_command("XSETID", KEY, f"{FAR_MS}-0")  # "*" then means FAR_MS-1 on both
    assert _run(ours, cmd) == _run(ref, cmd)
    a, b = _info(ref), _info(ours)
    assert {k: v for k, v in b.items() if k in a} == a
    for c in (ref, ours):
        c.execute_command("DEL", KEY, STR, NONE)
