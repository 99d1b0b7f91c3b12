"""Differential test: random command sequences sent to a real Redis (``--redis-url``) and
to an in-process streamd side by side; every reply must match.

The Redis is the ``--redis-url`` server, or else a redis-server this module starts when one
is installed (CI installs Debian's); without either the test skips. The sequences
mix valid and invalid commands over two streams and a string key: XADD with explicit and
``ms-*`` IDs, trimming with ``=``/``~``/LIMIT, ranges, XDEL, XTRIM, XSETID, the XGROUP
subcommands, XREADGROUP (one or two streams), XREAD, XACK, XPENDING (with IDLE), XCLAIM
(with IDLE / TIME / LASTID), XAUTOCLAIM and XINFO, with small nodes
(``stream-node-max-entries 3``) so that node boundaries matter; each of these commands must
also add as much to the dirty counter on both servers. Seeds are fixed, so a failure
reproduces. A second generator does the same for strings, hashes and the key
commands around them, a third for the bit commands with LCS and SUBSTR (counting changes
too), a fourth wraps the first two in MULTI / EXEC / DISCARD / WATCH, with a second
client writing to watched keys, and a fifth does the same around the bit commands.

streamd follows Redis 8.8; where an older target answers differently because Redis changed
the behaviour later, the generator steers around it or the comparison leaves it out. Each
such adjustment names its reason and applies only below the version that changed it.

Every generator runs over RESP2 and over RESP3 (HELLO 3 on both connections). Replies are
read off the socket by ``TypedConn``, which keeps what the wire says and a client library
would fold together: simple strings vs bulk strings, the three null kinds, maps vs arrays,
sets, booleans vs integers, doubles and big numbers by their text, verbatim strings with
their format. Two replies match only if they have the same types all the way down.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import re
import shutil
import socket
import subprocess
import time
import urllib.parse

import pytest
import redis

SEEDS = (1, 2, 3, 4)
COMMANDS_PER_SEED = 1500
KEYS = ("s1", "s2", "str")
GROUPS = ("g1", "g2")
CONSUMERS = ("c1", "c2", "c3")
SPECIAL_IDS = ("-", "+", "$", ">", "0", "0-0", "(5", "(5-1", "abc", "5-", "-5",
               "18446744073709551615-18446744073709551615", "5-18446744073709551616")
TIME_VALUED = {b"idle", b"inactive", b"seen-time", b"active-time"}


@contextlib.contextmanager
def _local_redis():
    """A throwaway redis-server on a free port, or None when none is installed."""
    exe = shutil.which("redis-server")
    if exe is None:
        yield None
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--loglevel", "warning"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        client.close()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def servers(request):
    """(pair(protocol) -> (redis client, streamd client), Redis's version). The Redis is the
    ``--redis-url`` server, else a redis-server started here if one is installed."""
    from tests.inprocess import InProcessServer

    with contextlib.ExitStack() as stack:
        url = request.config.getoption("--redis-url") or stack.enter_context(_local_redis())
        if not url:
            pytest.skip("differential test: needs --redis-url or a redis-server binary")
        probe = redis.Redis.from_url(url)
        version = tuple(int(p) for p in probe.info("server")["redis_version"].split(".")[:3])
        probe.close()
        if version < (7, 0):
            # before 7.0 whole options and reply fields were missing (XSETID's, ENTRIESREAD,
            # XAUTOCLAIM's deleted IDs); the adjustments below start at 7.0
            pytest.skip(f"differential test: needs Redis >= 7.0, found {version}")
        srv = stack.enter_context(InProcessServer())
        made = []

        parsed = urllib.parse.urlparse(url)
        db = int(parsed.path.strip("/") or 0)

        def pair(protocol: int):
            # one connection each: MULTI and WATCH state belongs to the connection
            ref = TypedConn.connect(parsed.hostname or "127.0.0.1", parsed.port or 6379, protocol,
                            password=parsed.password, db=db)
            ours = TypedConn.connect("127.0.0.1", srv.port, protocol)
            made.extend((ref, ours))
            return ref, ours

        yield pair, version
        for c in made:
            c.close()


class _Tagged(bytes):
    def __repr__(self):
        return f"{type(self).__name__}({bytes(self)!r})"


class Simple(_Tagged):
    """A ``+`` simple string (a bulk string is plain bytes)."""


class Verbatim(_Tagged):
    """A RESP3 ``=`` verbatim string, its text without the format; ``fmt`` is the format."""
    fmt = b""


class Double(_Tagged):
    """A RESP3 ``,`` double, as its text (``1.5`` and ``1.50`` differ on the wire)."""


class BigNumber(_Tagged):
    """A RESP3 ``(`` big number, as its text."""


class Boolean(int):
    """A RESP3 ``#`` boolean (an int subclass, so ``#t`` and ``:1`` still differ by type)."""

    def __repr__(self):
        return f"Boolean({bool(self)})"


class RespMap(dict):
    """A RESP3 ``%`` map; ``pairs`` keeps the wire order (and any repeated key)."""
    pairs: list = []

    def __repr__(self):
        return f"Map{dict(self)!r}"


class RespSet(list):
    """A RESP3 ``~`` set, in wire order."""

    def __repr__(self):
        return f"Set{list(self)!r}"


class Null:
    """The null kinds: RESP3's ``_`` and RESP2's ``$-1`` and ``*-1`` differ on the wire."""

    def __init__(self, kind: str):
        self.kind = kind

    def __eq__(self, other):
        return isinstance(other, Null) and other.kind == self.kind

    def __hash__(self):
        return hash(("null", self.kind))

    def __repr__(self):
        return f"Null({self.kind!r})"


class TypedConn:
    """One connection that sends commands and reads each reply with its RESP types kept
    (see the module docstring). A top-level error raises ``redis.ResponseError`` with the
    full error text; one inside an aggregate (EXEC's) comes back as ``("error", text)``."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.file = sock.makefile("rb")

    @classmethod
    def connect(cls, host: str, port: int, protocol: int, password=None, db: int = 0):
        self = cls(socket.create_connection((host, port), timeout=10))
        if password:
            self.execute_command("AUTH", password)
        if protocol == 3:
            hello = self.execute_command("HELLO", "3")
            assert isinstance(hello, RespMap), hello
        if db:
            self.execute_command("SELECT", str(db))
        return self

    def execute_command(self, *args):
        parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        self.sock.sendall(b"*%d\r\n" % len(parts)
                          + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in parts))
        reply = self._read()
        if isinstance(reply, tuple) and reply[0] == "error":
            raise redis.ResponseError(reply[1])
        return reply

    def _line(self) -> bytes:
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError(f"connection closed mid-reply: {line!r}")
        return line[:-2]

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return Simple(rest)
        if kind == b"-":
            return ("error", rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind in (b"$", b"=", b"!"):
            n = int(rest)
            if n < 0:
                return Null("bulk")
            data = self.file.read(n + 2)[:-2]
            if kind == b"!":
                return ("blob error", data.decode(errors="replace"))
            if kind == b"=":
                v = Verbatim(data[4:])
                v.fmt = data[:3]
                return v
            return data
        if kind in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return Null("array")
            items = [self._read() for _ in range(n)]
            if kind == b">":
                raise AssertionError(f"unexpected push message: {items!r}")
            return RespSet(items) if kind == b"~" else items
        if kind == b"%":
            pairs = [(self._read(), self._read()) for _ in range(int(rest))]
            m = RespMap((_hashable(k), v) for k, v in pairs)
            m.pairs = pairs
            return m
        if kind == b"_":
            return Null("_")
        if kind == b"#":
            return Boolean(rest == b"t")
        if kind == b",":
            return Double(rest)
        if kind == b"(":
            return BigNumber(rest)
        raise AssertionError(f"unknown reply type: {line!r}")

    def close(self):
        self.file.close()
        self.sock.close()


def _hashable(x):
    return tuple(_hashable(i) for i in x) if isinstance(x, list) else x


def typed(x):
    """``x`` (a reply, or the part of one ``comparable`` kept) as a hashable tree in which
    every value carries its RESP type."""
    if isinstance(x, RespMap):
        return ("map", tuple((typed(k), typed(v)) for k, v in x.pairs))
    if isinstance(x, dict):  # a RESP2 field/value array, taken apart by comparable()
        return ("fields", frozenset((typed(k), typed(v)) for k, v in x.items()))
    if isinstance(x, RespSet):
        return ("set", tuple(typed(i) for i in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(typed(i) for i in x))
    if isinstance(x, (Simple, Verbatim, Double, BigNumber)):
        return (type(x).__name__, getattr(x, "fmt", b""), bytes(x))
    if isinstance(x, Boolean):
        return ("boolean", int(x))
    if isinstance(x, int):
        return ("integer", x)
    return (type(x).__name__, x)


class Generator:
    """A seeded source of commands. ``command()`` returns the next one; ``by_other`` says
    it is the second client's (only transactions use one), ``in_multi`` that a MULTI is
    open (``compare_runs`` keeps it)."""

    by_other = False
    in_multi = False

    def __init__(self, seed: int, version: tuple):
        self.rnd = random.Random(seed)
        self.version = version


class StreamGenerator(Generator):

    def rid(self, special=True) -> str:
        rnd = self.rnd
        c = rnd.random()
        if special and c < 0.1:
            return rnd.choice(SPECIAL_IDS)
        ms = rnd.randint(0, 30)
        return str(ms) if c < 0.3 else f"{ms}-{rnd.randint(0, 3)}"

    def fields(self) -> list:
        rnd = self.rnd
        out = []
        for _ in range(rnd.choice((1, 1, 2, 3))):
            out += [rnd.choice(("a", "b", "f", "123")), rnd.choice(("1", "x", "", "hello", "-7"))]
        return out[:-1] if rnd.random() < 0.03 else out

    def trim(self) -> list:
        rnd = self.rnd
        if rnd.random() < 0.6:
            return []
        out = [rnd.choice(("MAXLEN", "MINID"))]
        if rnd.random() < 0.6:
            out.append(rnd.choice(("=", "~")))
        out.append(str(rnd.randint(0, 12)) if out[0] == "MAXLEN" else self.rid(False))
        if rnd.random() < 0.3:
            out += ["LIMIT", str(rnd.randint(0, 5))]
        return out

    def entriesread(self) -> list:
        if self.rnd.random() >= 0.2:
            return []
        # Below 8.0 an ENTRIESREAD beyond entries-added is not capped and later lag
        # figures differ; -1 and 0 mean the same everywhere.
        hi = 10 if self.version >= (8, 0) else 0
        return ["ENTRIESREAD", str(self.rnd.randint(-1, hi))]

    def min_idle(self) -> str:
        """A min-idle-time whose outcome no clock difference can change: 0 (or negative,
        the same) takes everything, an hour nothing but entries claimed with a past IDLE
        or TIME."""
        return self.rnd.choice(("0", "0", "-5", "3600000"))

    def command(self) -> list:
        rnd = self.rnd
        k, g, c = rnd.choice(KEYS), rnd.choice(GROUPS), rnd.choice(CONSUMERS)
        t = rnd.random()
        if t < 0.30:
            nomk = ["NOMKSTREAM"] if rnd.random() < 0.1 else []
            new_id = self.rid() if rnd.random() < 0.9 else f"{rnd.randint(0, 30)}-*"
            return ["XADD", k, *nomk, *self.trim(), new_id, *self.fields()]
        if t < 0.38:
            count = ["COUNT", str(rnd.randint(-1, 5))] if rnd.random() < 0.5 else []
            return [rnd.choice(("XRANGE", "XREVRANGE")), k, self.rid(), self.rid(), *count]
        if t < 0.40:
            return ["XLEN", k]
        if t < 0.44:
            return ["XDEL", k, *(self.rid(False) for _ in range(rnd.randint(1, 3)))]
        if t < 0.48:
            return ["XTRIM", k, *(self.trim() or ["MAXLEN", "5"])]
        if t < 0.50:
            extra = ["ENTRIESADDED", str(rnd.randint(0, 40))] if rnd.random() < 0.3 else []
            if rnd.random() < 0.3:
                extra += ["MAXDELETEDID", self.rid(False)]
            return ["XSETID", k, self.rid(), *extra]
        if t < 0.56:
            sub = rnd.choice(("CREATE", "SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER"))
            if sub == "CREATE":
                mk = ["MKSTREAM"] if rnd.random() < 0.3 else []
                return ["XGROUP", "CREATE", k, g, rnd.choice(("$", "0", self.rid())), *mk,
                        *self.entriesread()]
            if sub == "SETID":
                return ["XGROUP", "SETID", k, g, rnd.choice(("$", "0", self.rid())),
                        *self.entriesread()]
            if sub == "DESTROY":
                return ["XGROUP", "DESTROY", k, g]
            return ["XGROUP", sub, k, g, c]
        if t < 0.68:
            count = ["COUNT", str(rnd.randint(0, 4))] if rnd.random() < 0.7 else []
            noack = ["NOACK"] if rnd.random() < 0.1 else []
            keys = [k] + ([rnd.choice(KEYS)] if rnd.random() < 0.2 else [])
            return ["XREADGROUP", "GROUP", g, c, *count, *noack, "STREAMS", *keys,
                    *(rnd.choice((">", ">", "0", self.rid())) for _ in keys)]
        if t < 0.72:
            count = ["COUNT", str(rnd.randint(0, 4))] if rnd.random() < 0.5 else []
            return ["XREAD", *count, "STREAMS", k, self.rid()]
        if t < 0.78:
            return ["XACK", k, g, *(self.rid(False) for _ in range(rnd.randint(1, 3)))]
        if t < 0.84:
            if rnd.random() < 0.4:
                return ["XPENDING", k, g]
            owner = [c] if rnd.random() < 0.4 else []
            idle = ["IDLE", self.min_idle()] if rnd.random() < 0.2 else []
            return ["XPENDING", k, g, *idle, self.rid(), self.rid(), str(rnd.randint(-1, 5)),
                    *owner]
        if t < 0.90:
            ids = [self.rid(False) for _ in range(rnd.randint(1, 3))]
            opts = ["RETRYCOUNT", str(rnd.randint(0, 3))] if rnd.random() < 0.2 else []
            opts += ["FORCE"] if rnd.random() < 0.2 else []
            opts += ["JUSTID"] if rnd.random() < 0.3 else []
            opts += ["LASTID", self.rid(False)] if rnd.random() < 0.15 else []
            if rnd.random() < 0.15:
                opts += ["IDLE", rnd.choice(("7200000", "0", "-3", "99999999999999"))]
            if rnd.random() < 0.1:
                opts += ["TIME", rnd.choice(("0", "-1", "99999999999999"))]
            return ["XCLAIM", k, g, c, self.min_idle(), *ids, *opts]
        if t < 0.95:
            opts = ["COUNT", str(rnd.randint(0, 4))] if rnd.random() < 0.5 else []
            opts += ["JUSTID"] if rnd.random() < 0.3 else []
            return ["XAUTOCLAIM", k, g, c, self.min_idle(), self.rid(), *opts]
        if t < 0.97:
            return ["SET", "str", "v"]
        if t < 0.985:
            if rnd.random() < 0.6:
                return ["XINFO", "STREAM", k]
            count = ["COUNT", str(rnd.randint(-1, 3))] if rnd.random() < 0.5 else []
            return ["XINFO", "STREAM", k, "FULL", *count]
        return ["XINFO", rnd.choice(("GROUPS", "CONSUMERS")), k, *([g] if rnd.random() < 0.8 else [])]


class KeyspaceGenerator(Generator):
    """Strings, hashes and the key commands around them, over string, hash and stream keys
    (so WRONGTYPE paths are exercised): SET with its options, GET*, ranges, APPEND,
    counters at the int64 edges, INCRBYFLOAT with odd floats, M*, the hash commands, RENAME,
    COPY, EXPIRE with its flags, OBJECT ENCODING."""

    STRINGS = ("k1", "k2", "k3")
    HASHES = ("h1", "h2")
    KEYS = STRINGS + HASHES + ("s1", "nokey")
    INTS = ("0", "1", "-1", "10", "9223372036854775807", "-9223372036854775808",
            "9223372036854775806", "1.5", "abc", "", " 1", "007", "-0", "1e3",
            "100000000000000000000")
    FLOATS = ("0", "1.5", "-2.25", "1e3", "inf", "-inf", "nan", "abc", "1e400", "0.1", "3",
              "-0", "1.0e", "  1", "0x10")

    def value(self) -> str:
        rnd = self.rnd
        return rnd.choice(("", "a", "hello", "10", "-5", "3.5", "x" * rnd.randint(0, 50),
                           "12345678901234567890", "1e5"))

    def integer(self) -> str:
        return self.rnd.choice(self.INTS + (str(self.rnd.randint(-1000, 1000)),))

    def float(self) -> str:
        return self.rnd.choice(self.FLOATS + (repr(self.rnd.uniform(-100, 100)),))

    def pairs(self, keys, most: int) -> list:
        out = []
        for _ in range(self.rnd.randint(1, most)):
            out += [self.rnd.choice(keys), self.value()]
        return out

    def command(self) -> list:
        rnd = self.rnd
        k = rnd.choice(self.KEYS)
        h = rnd.choice(self.HASHES + ("k1", "s1", "nokey"))
        f = rnd.choice(("f1", "f2", "f3"))
        t = rnd.random()
        if t < 0.08:
            if rnd.random() < 0.1:
                return ["GETSET", k, self.value()]
            opts = [rnd.choice(("NX", "XX"))] if rnd.random() < 0.3 else []
            opts += ["GET"] if rnd.random() < 0.3 else []
            if rnd.random() < 0.2:
                opts += rnd.choice((["EX", rnd.choice(("100", "0", "-1", "abc"))],
                                    ["PX", "100000"], ["KEEPTTL"], ["EXAT", "99999999999"],
                                    ["PXAT", "1"]))
            opts += ["BOGUS"] if rnd.random() < 0.05 else []
            return ["SET", k, self.value(), *opts]
        if t < 0.12:
            return [rnd.choice(("GET", "GETDEL", "STRLEN", "TYPE", "EXISTS", "DEL", "PERSIST",
                                "TTL")), k]
        if t < 0.15:
            return ["GETRANGE", k, str(rnd.randint(-20, 20)), str(rnd.randint(-20, 20))]
        if t < 0.18:
            return ["SETRANGE", k, rnd.choice(("0", "3", "-1", "10", "abc")), self.value()]
        if t < 0.21:
            return ["APPEND", k, self.value()]
        if t < 0.30:
            if rnd.random() < 0.4:
                return [rnd.choice(("INCR", "DECR")), k]
            return [rnd.choice(("INCRBY", "DECRBY")), k, self.integer()]
        if t < 0.34:
            return ["INCRBYFLOAT", k, self.float()]
        if t < 0.37:
            return ["MSET", *self.pairs(self.STRINGS, 3), *(["x"] if rnd.random() < 0.1 else [])]
        if t < 0.39:
            return ["MSETNX", *self.pairs(self.STRINGS, 2)]
        if t < 0.41:
            return ["MGET", *(rnd.choice(self.KEYS) for _ in range(rnd.randint(1, 4)))]
        if t < 0.43:
            return ["GETEX", k, *rnd.choice(([], ["PERSIST"], ["EX", "100"], ["PX", "abc"],
                                             ["EX", "0"], ["BOGUS"]))]
        if t < 0.52:
            return ["HSET", h, *self.pairs(("f1", "f2", "f3"), 3),
                    *(["x"] if rnd.random() < 0.1 else [])]
        if t < 0.55:
            return ["HSETNX", h, f, self.value()]
        if t < 0.60:
            return [rnd.choice(("HGET", "HEXISTS", "HSTRLEN")), h, f]
        if t < 0.63:
            return ["HDEL", h, *(rnd.choice(("f1", "f2", "f3", "f4"))
                                 for _ in range(rnd.randint(1, 3)))]
        if t < 0.69:
            return ["HINCRBY", h, f, self.integer()]
        if t < 0.73:
            return ["HINCRBYFLOAT", h, f, self.float()]
        if t < 0.78:
            return [rnd.choice(("HGETALL", "HKEYS", "HVALS", "HLEN")), h]
        if t < 0.80:
            return ["HMGET", h, *(rnd.choice(("f1", "f2", "f4")) for _ in range(rnd.randint(1, 3)))]
        if t < 0.82:
            return ["HMSET", h, f, self.value()]
        if t < 0.86:
            return [rnd.choice(("RENAME", "RENAMENX")), k, rnd.choice(self.KEYS)]
        if t < 0.88:
            return ["COPY", k, rnd.choice(self.KEYS), *(["REPLACE"] if rnd.random() < 0.5 else [])]
        if t < 0.92:
            flag = [rnd.choice(("NX", "XX", "GT", "LT", "BAD"))] if rnd.random() < 0.4 else []
            return [rnd.choice(("EXPIRE", "PEXPIRE")), k,
                    rnd.choice(("100000", "-1", "0", "abc", "9223372036854775807")), *flag]
        if t < 0.94:
            return ["OBJECT", "ENCODING", k]
        if t < 0.96:
            return ["EXISTS", *(rnd.choice(self.KEYS) for _ in range(3))]
        if t < 0.98:
            return ["XADD", "s1", "*", "f", "v"] if rnd.random() < 0.5 else ["DBSIZE"]
        return ["TOUCH", k, rnd.choice(self.KEYS)]


class BitmapGenerator(KeyspaceGenerator):
    """The bit commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO)
    with LCS and SUBSTR, over short binary strings, integer strings, a hash and a stream:
    ranges in both units, every overflow mode at the int64 edges, '#' offsets, options
    in odd orders and misspelt. One string write in ten keeps the values varied."""

    OFFSETS = (0, 1, 2, 3, -1, -2, -5, 5, 7, 8, 9, 15, 16, 17, 23, 24, 31, 40, 63, 64, 100,
               -100, 9223372036854775807, -9223372036854775808)
    NUMBERS = (0, 1, -1, 2, 100, -100, 127, 128, -128, 255, 256, 2**31, 2**62, -2**62,
               2**63 - 1, -2**63)

    def bytes_value(self) -> str:
        # (text, as the history line joins it; characters past 0x7f go out as two bytes)
        rnd = self.rnd
        return "".join(chr(rnd.choice((0, 0xFF, 0x0F, 0xF0, 0x55, 0x80, 0x01,
                                       rnd.randrange(256))))
                       for _ in range(rnd.choice((0, 1, 2, 3, 5, 9, 17))))

    def index(self) -> str:
        return str(self.rnd.choice(self.OFFSETS + (self.rnd.randint(-80, 80),)))

    def unit(self) -> list:
        return [self.rnd.choice(("BIT", "BYTE", "bit", "x"))] if self.rnd.random() < 0.6 else []

    def field_type(self) -> str:
        rnd = self.rnd
        if rnd.random() < 0.05:
            return rnd.choice(("u64", "i65", "x8", "u0", "", "I8"))
        sign = rnd.choice("iu")
        return sign + str(rnd.randint(1, 64 if sign == "i" else 63))

    def field_offset(self) -> str:
        rnd = self.rnd
        if rnd.random() < 0.2:
            return "#" + str(rnd.randint(0, 5))
        return str(rnd.choice((0, 1, 3, 7, 8, 13, 31, 64, 100)))

    def number(self) -> str:
        rnd = self.rnd
        return str(rnd.choice(self.NUMBERS + (rnd.randint(-1000, 1000),
                                              rnd.randint(-2**63, 2**63 - 1))))

    def command(self) -> list:
        rnd = self.rnd
        keys = self.STRINGS + ("h1", "s1", "nokey")
        k = rnd.choice(keys)
        t = rnd.random()
        if t < 0.08:
            return ["SET", k if k in self.STRINGS else "k1", self.bytes_value()]
        if t < 0.10:
            return rnd.choice((["HSET", "h1", "f1", "v"], ["INCR", k], ["XADD", "s1", "1-1",
                                                                      "f", "v"]))
        if t < 0.20:
            offset = str(rnd.randint(0, 80)) if rnd.random() < 0.95 else \
                rnd.choice(("-1", "x", "4294967296"))
            return ["SETBIT", k, offset, rnd.choice(("0", "1", "1", "2"))]
        if t < 0.26:
            return ["GETBIT", k, str(rnd.randint(0, 80))]
        if t < 0.38:
            cmd = ["BITCOUNT", k]
            if rnd.random() < 0.8:
                cmd += [self.index(), self.index(), *self.unit()]
            return cmd[:3] if rnd.random() < 0.03 else cmd
        if t < 0.52:
            cmd = ["BITPOS", k, rnd.choice(("0", "1", "1", "0", "2"))]
            extra = rnd.random()
            if extra < 0.8:
                cmd.append(self.index())
            if extra < 0.6:
                cmd.append(self.index())
            if extra < 0.4:
                cmd += self.unit() or ["BIT"]
            return cmd
        if t < 0.62:
            op = rnd.choice(("AND", "OR", "XOR", "NOT", "not", "bad"))
            count = 1 if op.lower() == "not" and rnd.random() < 0.9 else rnd.randint(1, 3)
            return ["BITOP", op, rnd.choice(keys), *(rnd.choice(keys) for _ in range(count))]
        if t < 0.82:
            cmd = [rnd.choice(("BITFIELD", "BITFIELD", "BITFIELD_RO")), k]
            for _ in range(rnd.randint(0, 4)):
                op = rnd.random()
                if op < 0.35:
                    cmd += ["GET", self.field_type(), self.field_offset()]
                elif op < 0.6:
                    cmd += ["SET", self.field_type(), self.field_offset(), self.number()]
                elif op < 0.85:
                    cmd += ["INCRBY", self.field_type(), self.field_offset(), self.number()]
                else:
                    cmd += ["OVERFLOW", rnd.choice(("WRAP", "SAT", "FAIL", "sat", "bad"))]
            return cmd
        if t < 0.90:
            options = rnd.sample(("LEN", "IDX", "WITHMATCHLEN", "MINMATCHLEN",
                                  str(rnd.randint(-1, 3)), "IDX"), rnd.randint(0, 3))
            return ["LCS", k, rnd.choice(keys), *options]
        if t < 0.94:
            return [rnd.choice(("SUBSTR", "GETRANGE")), k, self.index(), self.index()]
        return rnd.choice((["GET", k], ["OBJECT", "ENCODING", k], ["STRLEN", k]))


class ScriptGenerator(Generator):
    """Lua scripts assembled from pieces (see ``PIECES``), sent with EVAL, EVAL_RO and
    EVALSHA, with SCRIPT LOAD / EXISTS / FLUSH among them and plain writes that keep a
    stream, a hash and a string around for the scripts to read. A script runs some
    redis.call / redis.pcall lines (valid and invalid arguments, over the right and the
    wrong type), may switch to RESP3 with redis.setresp, and returns one value of any Lua
    type: numbers at the edges, strings, booleans, nil, nested tables with holes, status
    and error tables, a raised error. No script loops or raises a table without ``err``
    (``error({})`` crashed Redis 7.0.15)."""

    KEYS = ("s1", "h1", "k1", "nokey")
    CALLS = (
        "'XADD', KEYS[1], '7-*', 'f', ARGV[1]", "'XADD', KEYS[1], '5-1', 'a', 'b'",
        "'XADD', KEYS[1], 'bad', 'f', 'v'", "'XADD', KEYS[1], 'MAXLEN', '2', '9-*', 'f', 'v'",
        "'XRANGE', KEYS[1], '-', '+'", "'XREVRANGE', KEYS[1], '+', '-', 'COUNT', 2",
        "'XRANGE', KEYS[1], 'x', '+'", "'XLEN', KEYS[1]", "'XDEL', KEYS[1], '5-1'",
        "'XTRIM', KEYS[1], 'MAXLEN', 1", "'XREAD', 'COUNT', 2, 'STREAMS', KEYS[1], '0'",
        "'XREAD', 'BLOCK', 0, 'STREAMS', KEYS[1], '$'",
        "'XGROUP', 'CREATE', KEYS[1], 'g', '0', 'MKSTREAM'",
        "'XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 1, 'STREAMS', KEYS[1], '>'",
        "'XPENDING', KEYS[1], 'g'", "'XACK', KEYS[1], 'g', '0-1'",
        "'SET', KEYS[1], ARGV[1]", "'SET', KEYS[1], 1.5", "'SET', KEYS[1], 12345678901234",
        "'GET', KEYS[1]", "'INCR', KEYS[1]", "'INCRBYFLOAT', KEYS[1], '0.1'",
        "'APPEND', KEYS[1], 'x'", "'STRLEN', KEYS[1]", "'GETDEL', KEYS[1]",
        "'HSET', KEYS[1], 'f1', ARGV[1], 'f2', 2", "'HGET', KEYS[1], 'f1'",
        "'HGETALL', KEYS[1]", "'HINCRBY', KEYS[1], 'n', 3", "'HINCRBYFLOAT', KEYS[1], 'x', 'y'",
        "'HMGET', KEYS[1], 'f1', 'nope'", "'HLEN', KEYS[1]", "'HSET', KEYS[1]",
        "'TYPE', KEYS[1]", "'EXISTS', KEYS[1], 'nokey'", "'DEL', KEYS[1]", "'PING'",
        "'ECHO', 'hi'", "'NOSUCH'", "'GET'", "'SET', KEYS[1], {}", "'SUBSCRIBE', 'ch'",
        "'EVAL', 'return 1', 0", "'MULTI'", "'DBSIZE'", "'INCRBY', KEYS[1], 'abc'",
        "'SET', KEYS[1], 'v', 'EX', '-5'",
        "'XINFO', 'GROUPS', KEYS[1]", "'SELECT', 0", "'SET', KEYS[1], 'v', 'BOGUS'",
    )
    VALUES = (
        "1", "-1", "0", "3.99", "-3.99", "1e20", "-1e20", "2^53", "2^63", "-2^63",
        "0.5", "1/0", "-1/0", "'str'", "''", "'123'", "'1.5'", "true", "false", "nil",
        "{}", "{1, 2, 3}", "{1, nil, 3}", "{nil, 2}", "{1, {2, {3, 'x'}}, true, false}",
        "{'a', false, 'b'}", "{1.5, -2.5, 'c'}", "{x = 1, 2}", "{ok = 'FINE'}",
        "{err = 'MYERR bad thing'}", "{err = 'no code'}", "{ok = 5}", "{err = 5}",
        "{ok = 'a', err = 'E b'}", "{{ok = 'in'}, {err = 'ERR inner'}}",
        "redis.status_reply('PONG')", "redis.error_reply('CODE some text')",
        "redis.error_reply('-X y')", "redis.error_reply('single')", "redis.error_reply('')",
        "redis.status_reply(1)", "redis.error_reply()",
        "KEYS", "ARGV", "#ARGV", "KEYS[1]", "ARGV[1]", "ARGV[5]", "tonumber(ARGV[1])",
        "tostring(1e15)", "tostring(1e16)", "tostring(0.1)", "tostring(-0)", "tostring(1/0)",
        "tostring(2^53)", "tostring(nil)", "tostring(true)", "tostring(12345678901234567)",
        "tonumber('0x10')", "tonumber('  5  ')", "tonumber('1e')", "tonumber('1e2')",
        "tonumber('z', 36)", "tonumber('10', 2)", "tonumber('')", "tonumber('-0x1')",
        "tonumber('inf')", "tonumber('nan')", "tonumber('5.')", "tonumber('.5')",
        "bit.band(0xff, 0x0f)", "bit.bor(1, 2, 4)", "bit.bxor(-1, 1)", "bit.bnot(0)",
        "bit.lshift(1, 31)", "bit.rshift(-1, 28)", "bit.arshift(-256, 4)",
        "bit.tobit(2^32 + 7)", "bit.tohex(255)", "bit.tohex(-1, -4)", "bit.tohex(1, 2)",
        "bit.bswap(0x12345678)", "bit.rol(0x80000001, 1)", "bit.ror(1, 1)", "bit.tobit(1.5)",
        "bit.tobit(-2.5)", "bit.tohex(0xabcdef, 20)",
        "cjson.encode({1, 2, 3})", "cjson.encode({a = 1})", "cjson.encode('a\"b\\\\c/d')",
        "cjson.encode({1.5, -0.25, 1e100})", "cjson.encode({true, false})",
        "cjson.encode({})", "cjson.encode({{}, {1}})", "cjson.encode(cjson.null)",
        "cjson.encode({[1] = 'a', [2] = 'b', [4] = 'd'})", "cjson.encode(3)",
        "cjson.decode('[1, 2, 3]')", "cjson.decode('{\"a\": [1, 2.5, \"x\"]}').a",
        "cjson.decode('\"s\"')", "cjson.decode('12.5')", "cjson.decode('[true, null]')[1]",
        "cjson.decode(cjson.encode({1, 'two', {3}}))", "type(cjson.decode('null'))",
        "cjson.decode('[1,2')", "cjson.encode(function() end)", "cjson.decode('1e400')",
        "redis.sha1hex('')", "redis.sha1hex('abc')", "string.format('%5.2f', 3.14159)",
        "string.format('%d', 3.7)", "string.rep('ab', 3)", "('x'):upper()",
        "math.floor(-3.5)", "math.huge", "-math.huge", "math.fmod(7, 3)", "7 % -3",
        "select('#', 1, nil, 3)", "type(redis)", "type(KEYS)", "#KEYS",
        "redis.REDIS_VERSION ~= nil", "unpack({1, 2, 3})", "(unpack({1, 2, 3}))",
        # XINFO STREAM's reply whole has fields newer than 7.0: some of its fields only
        "(function() local x = redis.pcall('XINFO', 'STREAM', KEYS[1]) if x.err then "
        "return x end local m = x.map if not m then m = {} for i = 1, #x, 2 do "
        "m[x[i]] = x[i + 1] end end return {m['length'], m['last-generated-id'], "
        "m['first-entry'], m['entries-added']} end)()",
    )

    def __init__(self, seed: int, version: tuple):
        super().__init__(seed, version)
        self.bodies: list[str] = []

    def call_line(self) -> str:
        rnd = self.rnd
        args = rnd.choice(self.CALLS)
        c = rnd.random()
        if "BLOCK" in args and self.version < (7, 4):
            args = "'XREAD', 'STREAMS', KEYS[1], '$'"  # 7.0 refused BLOCK in scripts
        first = ""
        if args.startswith("'XREADGROUP'") and self.version < (7, 2):
            # 7.0 creates the consumer only when it serves something, 7.2+ always: as
            # older_target_skips does for the plain command, it is created first
            first = "redis.pcall('XGROUP', 'CREATECONSUMER', KEYS[1], 'g', 'c')\n"
        if c < 0.45:
            return f"{first}local r = redis.call({args})"
        if c < 0.8:
            return f"{first}local r = redis.pcall({args})"
        return f"{first}local ok, r = pcall(redis.call, {args})"

    def result(self, has_r: bool) -> str:
        rnd = self.rnd
        c = rnd.random()
        if has_r and c < 0.35:
            return rnd.choice((
                "r", "{r}", "type(r)", "{type(r), r}", "r == false", "r.ok", "r.err",
                "{ok, r}", "type(r) == 'table' and #r or r",
                "type(r) == 'table' and r.map and r.map.f1 or 'none'",
                "type(r) == 'table' and r.map and r.map['length'] or 'no'",
                "type(r) == 'table' and r.double or 'nd'",
                "type(r) == 'table' and r[1] and r[1][2] or 'x'",
                "type(r) == 'table' and cjson.encode(r) or r",
                "type(r) == 'number' and r * 1.5 or r"))
        if c < 0.42:
            return rnd.choice(("error('boom')", "error('boom', 0)", "error(42)",
                               "error('MYCODE with code')", "error(redis.error_reply('X y'))",
                               "error({err = 'TABLE err'})", "nosuchglobal",
                               "redis.call('GET', 'a', {})", "redis.setresp(4)",
                               "redis.call()", "string.rep()", "('x')()",
                               "redis.log(redis.LOG_WARNING)", "x = 1"))
        return rnd.choice(self.VALUES)

    def script(self) -> str:
        rnd = self.rnd
        lines = []
        if rnd.random() < 0.25:
            lines.append("redis.setresp(3)")
        has_r = False
        for _ in range(rnd.choice((0, 1, 1, 1, 2, 3))):
            lines.append(self.call_line())
            has_r = True
        value = self.result(has_r)
        if value.startswith(("error(", "nosuchglobal", "x = ", "redis.setresp(4)",
                             "redis.log", "redis.call(", "string.rep()", "('x')()")):
            lines.append(value)
        else:
            lines.append(f"return {value}")
        return "\n".join(lines)

    def command(self) -> list:
        rnd = self.rnd
        t = rnd.random()
        if t < 0.08:
            return rnd.choice((["XADD", "s1", "3-*", "f", "v"], ["HSET", "h1", "f1", "1.5"],
                               ["SET", "k1", "10"], ["DEL", "s1"], ["XADD", "s1", "1-1", "a", "1"]))
        if t < 0.14 and self.bodies:
            body = rnd.choice(self.bodies)
            sha = hashlib.sha1(body.encode()).hexdigest()
            sha = sha.upper() if rnd.random() < 0.2 else sha
            return [rnd.choice(("EVALSHA", "EVALSHA", "EVALSHA_RO")), sha, "1",
                    rnd.choice(self.KEYS), "ARG"]
        if t < 0.17:
            shas = [hashlib.sha1(b.encode()).hexdigest() for b in rnd.sample(
                self.bodies, min(len(self.bodies), 2))] + ["0" * 40, "abc"]
            return ["SCRIPT", "EXISTS", *shas]
        if t < 0.18:
            return ["SCRIPT", "FLUSH", *rnd.choice(([], ["SYNC"], ["ASYNC"], ["BAD"]))]
        if t < 0.20:
            body = self.script()
            self.bodies.append(body)
            return ["SCRIPT", "LOAD", body]
        if t < 0.22:
            return ["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"]
        body = self.script()
        self.bodies.append(body)
        numkeys = rnd.choice(("1", "1", "1", "2", "0", "-1", "x", "5"))
        keys = [rnd.choice(self.KEYS) for _ in range(2)]
        args = [rnd.choice(("v", "7", "-2.5", "", "1e3", "abc"))]
        return [rnd.choice(("EVAL",) * 5 + ("EVAL_RO",)), body, numkeys, *keys, *args]


def run(client, cmd):
    try:
        reply = client.execute_command(*cmd)
    except redis.ResponseError as exc:
        return ("error", str(exc))
    return reply


def _as_dict(reply) -> dict:
    """A RESP2 flat array or a RESP3 map, as a dict (a map stays a ``RespMap``)."""
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[0::2], reply[1::2]))


def _without(reply: dict, drop) -> dict:
    """``reply`` less the ``drop`` fields, of the same kind (a map keeps its order)."""
    if isinstance(reply, RespMap):
        out = RespMap((k, v) for k, v in reply.items() if k not in drop)
        out.pairs = [(k, v) for k, v in reply.pairs if k not in drop]
        return out
    return {k: v for k, v in reply.items() if k not in drop}


def _full_info(reply, version) -> dict:
    """XINFO STREAM FULL's reply less its clock readings (and, below 8.0, the groups'
    entries-read and lag, whose rules changed after 7.0)."""
    info = _as_dict(reply)
    if not isinstance(info.get(b"groups"), list):
        return info
    group_drop = {b"lag", b"entries-read"} if version < (8, 0) else set()
    groups = []
    for group in info[b"groups"]:
        group = _without(_as_dict(group), group_drop)
        # a PEL row is [id, consumer, delivery time, count], a consumer's [id, time, count]
        _replace(group, b"pending", [row[:2] + ["time"] + row[3:] for row in group[b"pending"]])
        consumers = []
        for consumer in group[b"consumers"]:
            consumer = _without(_as_dict(consumer), TIME_VALUED)
            _replace(consumer, b"pending",
                     [row[:1] + ["time"] + row[2:] for row in consumer[b"pending"]])
            consumers.append(consumer)
        _replace(group, b"consumers", consumers)
        groups.append(group)
    info = _without(info, ())
    _replace(info, b"groups", groups)
    return info


def _replace(fields: dict, key, value) -> None:
    """Set ``fields[key]`` (an existing key), in a map's wire order too."""
    fields[key] = value
    if isinstance(fields, RespMap):
        fields.pairs = [(k, value if k == key else v) for k, v in fields.pairs]


def _only_common(target, ours):
    """``ours`` without the map fields (at any depth) that ``target`` lacks: the fields
    newer than the target version."""
    if isinstance(target, dict) and isinstance(ours, dict):
        ours = _without(ours, set(ours) - set(target))
        for k in list(ours):
            _replace(ours, k, _only_common(target[k], ours[k]))
        return ours
    if isinstance(target, list) and type(target) is type(ours) and len(target) == len(ours):
        return type(ours)(_only_common(x, y) for x, y in zip(target, ours))
    return ours


def comparable(cmd, reply, version):
    """The parts of ``reply`` that must agree: no clock readings, and only the fields both
    versions have."""
    if cmd[0] == "XINFO" and isinstance(reply, (list, dict)):
        if cmd[1] == "STREAM":
            return _full_info(reply, version) if len(cmd) > 3 else _as_dict(reply)
        drop = set(TIME_VALUED)
        if cmd[1] == "GROUPS" and version < (8, 0):
            # the lag / entries-read rules changed after 7.0 (see test_groups)
            drop |= {b"lag", b"entries-read"}
        return [_without(_as_dict(row), drop) for row in reply]
    if cmd[0] == "XPENDING" and len(cmd) > 3 and isinstance(reply, list):
        return [row[:2] + ["idle"] + row[3:] for row in reply]  # not the milliseconds
    if cmd[0] in ("HGETALL", "HKEYS", "HVALS") and isinstance(reply, (list, dict)):
        # hash order is the implementation's (Redis's changes when a listpack converts)
        items = sorted(_as_dict(reply).items()) if cmd[0] == "HGETALL" else sorted(reply)
        return type(reply).__name__, items
    if cmd[0] == "TTL" and type(reply) is int and reply > 0:
        return "positive"  # the two servers set it moments apart: 100 s may read as 99
    if (cmd[0] in ("EXPIRE", "PEXPIRE") and cmd[-1] in ("GT", "LT") and cmd[2] == "100000"
            and type(reply) is int and reply in (0, 1)):
        # Against a TTL an earlier relative EXPIRE set, GT / LT hold only if the clock moved
        # a millisecond in between, on each server separately.
        return "0 or 1"
    if cmd[0] == "XADD" and cmd[2] == "*" and type(reply) is bytes:
        return "an auto ID"  # the two clocks differ
    return reply


def older_target_skips(cmd, ref, ours, version) -> bool:
    """Steer around behaviour Redis changed after ``version``; True skips the command."""
    if version < (7, 4) and cmd[0] in ("XREAD", "XREADGROUP") and "STREAMS" in cmd:
        at = cmd.index("STREAMS") + 1
        if "+" in cmd[at + (len(cmd) - at) // 2:]:
            return True  # '+' (last entry) arrived in 7.4; older servers reject it differently
    if version < (7, 2) and cmd[0] == "XSETID":
        info = run(ours, ["XINFO", "STREAM", cmd[1]])
        if isinstance(info, (list, dict)):
            floor = _as_dict(info)[b"max-deleted-entry-id"].decode()

            def key(x):
                ms, _, seq = x.partition("-")
                return int(ms), int(seq or 0)
            try:
                if key(cmd[2]) < key(floor):
                    return True  # 7.0 lacks the "smaller than current max_deleted" check
            except ValueError:
                pass
    if version < (7, 2) and cmd[0] in ("XREADGROUP", "XCLAIM", "XAUTOCLAIM"):
        # 7.0 creates the consumer only when it serves or claims something; 7.2+ always.
        # Creating it first on both sides leaves the command itself comparable.
        if cmd[0] == "XREADGROUP":
            at = cmd.index("STREAMS") + 1
            keys = cmd[at:at + (len(cmd) - at) // 2]
        else:
            keys = [cmd[1]]
        for key in keys:
            for c in (ref, ours):
                run(c, ["XGROUP", "CREATECONSUMER", key, cmd[2], cmd[3]])
    return False


class TransactionGenerator(Generator):
    """MULTI / EXEC / DISCARD / WATCH / UNWATCH around the other two generators' commands,
    and writes by a second client to watched keys. No auto-ID entries are written here
    (the two servers' clocks differ), and inside MULTI the commands whose
    version adjustments send commands of their own are left out (MULTI would queue those).
    Below 8.0, consumer-group writes are left out while a WATCH may be active: Redis 7.0
    signals no key change for them (test_groups.py::test_group_writes_invalidate_watch)."""

    OTHER_CLIENT = (["XTRIM", "s1", "MAXLEN", "2"], ["SET", "k1", "x"], ["DEL", "s2"],
                    ["HSET", "h1", "f1", "1"], ["INCR", "k2"])
    ADJUSTED = ("XSETID", "XREADGROUP", "XCLAIM", "XAUTOCLAIM", "XREAD")
    GROUP_WRITES = ("XREADGROUP", "XACK", "XCLAIM", "XAUTOCLAIM", "XGROUP", "XSETID",
                    "XACKDEL", "XNACK")

    def __init__(self, seed: int, version: tuple):
        super().__init__(seed, version)
        self.inner = (StreamGenerator(seed, version), KeyspaceGenerator(seed + 1000, version))
        self.watching = False  # a WATCH may be active (cleared conservatively)

    def command(self) -> list:
        rnd = self.rnd
        t = rnd.random()
        self.by_other = False
        if t < 0.12:
            return ["MULTI"]
        if t < 0.20:
            self.watching = self.watching and not self.in_multi
            return ["EXEC"]
        if t < 0.23:
            self.watching = self.watching and not self.in_multi
            return ["DISCARD"]
        if t < 0.29:
            self.watching = True
            return ["WATCH", *rnd.sample(("s1", "s2", "k1", "k2", "h1"), rnd.randint(1, 2))]
        if t < 0.31:
            self.watching = False
            return ["UNWATCH"]
        if t < 0.37:
            self.by_other = True
            return list(rnd.choice(self.OTHER_CLIENT))
        while True:
            cmd = rnd.choice(self.inner).command()
            if cmd[:3] == ["XADD", "s1", "*"]:
                continue  # the keyspace generator's auto ID: the stream commands would read it
            if self.in_multi and cmd[0] in self.ADJUSTED:
                continue
            if self.watching and self.version < (8, 0) and cmd[0] in self.GROUP_WRITES:
                continue
            return cmd


class BitmapTransactionGenerator(TransactionGenerator):
    """The same transactions around the bit commands (with LCS and SUBSTR), watching the
    keys they write; the second client's writes include the ones that change nothing
    (a SETBIT to the bit already there, a BITOP giving the destination's own content, a
    BITFIELD whose OVERFLOW FAIL write is refused) and so must, or must not, break a
    WATCH as in Redis."""

    OTHER_CLIENT = (["SETBIT", "k1", "0", "0"], ["SETBIT", "k2", "3", "1"],
                    ["BITOP", "OR", "k1", "k1"], ["BITOP", "AND", "k3", "k3", "k3"],
                    ["BITOP", "NOT", "k2", "nokey"],
                    ["BITFIELD", "k1", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "100"],
                    ["BITFIELD", "k3", "SET", "u8", "0", "255"], ["SET", "k2", "x"],
                    ["DEL", "k3"])
    WATCHED = ("k1", "k2", "k3", "h1", "nokey")

    def __init__(self, seed: int, version: tuple):
        super().__init__(seed, version)
        self.inner = (BitmapGenerator(seed + 2000, version),)

    def command(self) -> list:
        cmd = super().command()
        if cmd[0] == "WATCH":  # the bit commands' keys, not the streams'
            return ["WATCH", *self.rnd.sample(self.WATCHED, self.rnd.randint(1, 2))]
        return cmd


def compared(cmd, expected, got, version):
    """The parts of Redis's and streamd's replies to ``cmd`` that must be equal."""
    a, b = comparable(cmd, expected, version), comparable(cmd, got, version)
    if cmd[:2] == ["XINFO", "STREAM"] and isinstance(a, dict) and isinstance(b, dict):
        b = _only_common(a, b)  # fields newer than the target
    return typed(a), typed(b)


def _dirty(client) -> int:
    """INFO's ``rdb_changes_since_last_save`` (the reply is raw: bytes, or text in RESP3)."""
    info = client.execute_command("INFO", "persistence")
    text = info.decode() if isinstance(info, bytes) else str(info)
    return int(re.search(r"rdb_changes_since_last_save:(\d+)", text).group(1))


def older_target_dirty_differs(cmd, version) -> bool:
    """Writes whose change count Redis changed after ``version``."""
    # 7.0 counted a history read (any ID but '>') as a change; 7.4 counts none.
    if version >= (7, 4) or cmd[0] != "XREADGROUP" or "STREAMS" not in cmd:
        return False
    ids = cmd[cmd.index("STREAMS") + 1:]
    return any(i != ">" for i in ids[len(ids) // 2:])


def compare_runs(ref, ours, gen: Generator, version, label: str, others=(None, None),
                 dirty: bool = False) -> None:
    """Send ``gen``'s commands to Redis (``ref``) and streamd (``ours``) and fail at the
    first reply that differs. The second client's commands go to ``others``; an EXEC's
    results are compared command by command against what was queued. With ``dirty``, each
    command must also add as much to the dirty counter on both servers (a transaction's
    commands counted together, at its EXEC or DISCARD)."""
    ref2, ours2 = others
    history: list[str] = []
    queued: list = []
    counters = (_dirty(ref), _dirty(ours)) if dirty else None
    expired_key = False  # a key set with a past PXAT may still be there, until active expiry
    for i in range(COMMANDS_PER_SEED):
        cmd = gen.command()
        if expired_key and (
                (cmd[0] == "DBSIZE" and not gen.in_multi)
                or (cmd[0] == "EXEC" and gen.in_multi and any(q[0] == "DBSIZE" for q in queued))):
            # DBSIZE counts such a key until the server's cron deletes it, and the two
            # servers' crons tick at different moments: let both reclaim it first.
            time.sleep(0.35)
            expired_key = False
        expired_key = expired_key or "PXAT" in cmd
        if gen.by_other:
            history.append(f"#{i} (other client) {' '.join(cmd)} -> {run(ref2, cmd)!r}")
            run(ours2, cmd)
            continue
        if not gen.in_multi and older_target_skips(cmd, ref, ours, version):
            continue
        expected, got = run(ref, cmd), run(ours, cmd)
        history.append(f"#{i} {' '.join(cmd)} -> {expected!r}")
        if cmd[0] == "MULTI" and expected == b"OK":
            gen.in_multi, queued = True, []
        elif gen.in_multi and cmd[0] in ("EXEC", "DISCARD"):
            gen.in_multi = False
        elif gen.in_multi and expected in (b"QUEUED", "QUEUED"):
            queued.append(cmd)
        if cmd[0] == "EXEC" and isinstance(expected, list) and isinstance(got, list) \
                and len(expected) == len(got) == len(queued):
            pairs = [compared(q, x, y, version) for q, x, y in zip(queued, expected, got)]
            a, b = [x for x, _ in pairs], [y for _, y in pairs]
        else:
            a, b = compared(cmd, expected, got, version)
        if a != b:
            tail = "\n".join(history[-25:])
            pytest.fail(f"{label}, command #{i}: {' '.join(cmd)}\n"
                        f"  redis:   {expected!r}\n  streamd: {got!r}\n"
                        f"last commands (with Redis's replies):\n{tail}")
        if dirty and not gen.in_multi:  # inside MULTI, INFO would be queued: EXEC counts all
            now = (_dirty(ref), _dirty(ours))
            added = (now[0] - counters[0], now[1] - counters[1])
            if added[0] != added[1] and not older_target_dirty_differs(cmd, version):
                tail = "\n".join(history[-25:])
                pytest.fail(f"{label}, command #{i}: {' '.join(cmd)}\n"
                            f"  changes counted: redis {added[0]}, streamd {added[1]}\n"
                            f"last commands (with Redis's replies):\n{tail}")
            counters = now


@contextlib.contextmanager
def fresh(ref, ours):
    """Both servers empty, with 3-entry stream nodes; afterwards no MULTI or WATCH is left
    open and the node size is back to its default."""
    for c in (ref, ours):
        c.execute_command("FLUSHALL")
        c.execute_command("CONFIG", "SET", "stream-node-max-entries", "3")
    try:
        yield
    finally:
        for c in (ref, ours):
            for cmd in (["DISCARD"], ["UNWATCH"]):
                run(c, cmd)
            c.execute_command("CONFIG", "SET", "stream-node-max-entries", "100")
            c.execute_command("FLUSHALL")


@pytest.mark.parametrize("protocol", (2, 3))
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("make", (StreamGenerator, KeyspaceGenerator, BitmapGenerator),
                         ids=("streams", "keyspace", "bitmaps"))
def test_random_commands_match_redis(servers, make, seed, protocol):
    pair, version = servers
    ref, ours = pair(protocol)
    with fresh(ref, ours):
        compare_runs(ref, ours, make(seed, version), version,
                     f"{make.__name__} seed {seed}, RESP{protocol}",
                     dirty=make is not KeyspaceGenerator)


@pytest.mark.parametrize("protocol", (2, 3))
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_random_transactions_match_redis(servers, seed, protocol):
    pair, version = servers
    ref, ours = pair(protocol)
    with fresh(ref, ours):
        compare_runs(ref, ours, TransactionGenerator(seed, version), version,
                     f"transactions seed {seed}, RESP{protocol}",
                     others=pair(protocol))  # the second client, for WATCH


@pytest.mark.parametrize("protocol", (2, 3))
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_random_bitmap_transactions_match_redis(servers, seed, protocol):
    pair, version = servers
    ref, ours = pair(protocol)
    with fresh(ref, ours):
        compare_runs(ref, ours, BitmapTransactionGenerator(seed, version), version,
                     f"bitmap transactions seed {seed}, RESP{protocol}",
                     others=pair(protocol), dirty=True)


def test_typed_reader_keeps_what_the_wire_says():
    """The reader the comparison relies on: replies that a client library reads as equal
    stay apart (``#t`` vs ``:1``, ``,3`` vs ``:3`` vs ``$1 3``, ``+OK`` vs ``$2 OK``, the
    three nulls, a map vs a flat array vs a set, map order, a verbatim string's format)."""
    wire = [b"#t\r\n", b":1\r\n", b",3\r\n", b":3\r\n", b"$1\r\n3\r\n", b"(3\r\n",
            b"+OK\r\n", b"$2\r\nOK\r\n", b"_\r\n", b"$-1\r\n", b"*-1\r\n",
            b"%1\r\n$1\r\na\r\n:1\r\n", b"*2\r\n$1\r\na\r\n:1\r\n", b"~2\r\n$1\r\na\r\n:1\r\n",
            b"*2\r\n$1\r\na\r\n:1\r\n", b"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n",
            b"%2\r\n$1\r\nb\r\n:2\r\n$1\r\na\r\n:1\r\n", b"=7\r\ntxt:abc\r\n",
            b"=7\r\nmkd:abc\r\n", b"$3\r\nabc\r\n", b"-ERR x\r\n"]
    left, right = socket.socketpair()
    with left, right:
        right.sendall(b"".join(wire))
        conn = TypedConn(left)
        replies = [conn._read() for _ in wire]
    forms = [typed(r) for r in replies]
    assert forms[13] == typed(RespSet([b"a", 1]))
    assert forms[12] == forms[14] == typed([b"a", 1])
    assert forms[11] == typed(_as_dict(replies[11])) and forms[20] == typed(("error", "ERR x"))
    assert len(set(forms)) == len(forms) - 1  # only the two identical arrays agree


@pytest.mark.parametrize("protocol", (2, 3))
@pytest.mark.parametrize("seed", SEEDS)
def test_random_scripts_match_redis(servers, seed, protocol):
    pair, version = servers
    ref, ours = pair(protocol)
    with fresh(ref, ours):
        compare_runs(ref, ours, ScriptGenerator(seed, version), version,
                     f"scripts seed {seed}, RESP{protocol}", dirty=True)
