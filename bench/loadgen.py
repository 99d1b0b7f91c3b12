"""Python load generators: raw sockets and hiredis, no client library in the timed path.

* ``unpipelined`` - one blocking client, one request in flight (memtier-style), with a
  latency sample per request.
* ``pipelined`` - N asyncio connections (uvloop when importable), each keeping a batch of
  P requests in flight; throughput over the whole run.
* ``wakeup_latency`` - a client blocked in XREAD, another XADDs; time to the wake-up reply.
* ``readgroup_ack`` - XREADGROUP COUNT 100, then one XACK per entry (pipelined), repeated.
* ``pipelined_fixed`` - one blocking client cycling through pre-encoded batches.

Every loop is bounded by a duration and a maximum count, so it stops by itself.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import time
from typing import Callable

import hiredis

from .resp import Conn, encode

ReplyError = hiredis.ReplyError


class LoadError(RuntimeError):
    pass


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[k]


def unpipelined(port: int, make: Callable[[int], bytes], seconds: float,
                max_ops: int = 10_000_000) -> dict:
    """One request at a time on one connection; ``make(i)`` gives request ``i``."""
    conn = Conn(port)
    try:
        sock, reader = conn.sock, conn.reader
        send, recv, feed, gets = sock.sendall, sock.recv, reader.feed, reader.gets
        lat: list[float] = []
        append = lat.append
        clock = time.perf_counter
        errors = 0
        last_error = ""
        start = clock()
        stop_at = start + seconds
        i = 0
        while i < max_ops:
            req = make(i)
            t0 = clock()
            send(req)
            reply = gets()
            while reply is False:
                data = recv(65536)
                if not data:
                    raise LoadError("server closed the connection")
                feed(data)
                reply = gets()
            t1 = clock()
            append(t1 - t0)
            if type(reply) is ReplyError:
                errors += 1
                last_error = str(reply)
            i += 1
            if t1 >= stop_at:
                break
        elapsed = clock() - start
    finally:
        conn.close()
    if errors:
        raise LoadError(f"{errors} error replies, e.g. {last_error!r}")
    return {"ops": i, "seconds": elapsed, "ops_per_sec": i / elapsed,
            "p50_us": _pct(lat, 0.5) * 1e6, "p99_us": _pct(lat, 0.99) * 1e6}


class _PipeClient(asyncio.Protocol):
    def __init__(self, run: "_PipeRun", make_batch: Callable[[], bytes]):
        self.run = run
        self.make_batch = make_batch
        self.reader = hiredis.Reader()
        self.pending = 0
        self.transport = None
        self.finished = run.loop.create_future()

    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def go(self):
        self._send()

    def _send(self):
        run = self.run
        if run.stop or run.ops >= run.max_ops or time.perf_counter() >= run.stop_at:
            run.stop = True
            if not self.finished.done():
                self.finished.set_result(None)
            return
        self.transport.write(self.make_batch())
        self.pending = run.depth

    def data_received(self, data):
        reader = self.reader
        reader.feed(data)
        pending = self.pending
        while pending:
            reply = reader.gets()
            if reply is False:
                self.pending = pending
                return
            pending -= 1
            if type(reply) is ReplyError:
                self.run.errors += 1
                self.run.last_error = str(reply)
        self.pending = 0
        self.run.ops += self.run.depth
        self._send()

    def connection_lost(self, exc):
        if not self.finished.done():
            self.finished.set_exception(LoadError(f"connection lost: {exc}"))


class _PipeRun:
    def __init__(self, loop, depth, seconds, max_ops):
        self.loop, self.depth = loop, depth
        self.seconds, self.max_ops = seconds, max_ops
        self.ops = self.errors = 0
        self.last_error = ""
        self.stop = False
        self.stop_at = float("inf")


async def _pipelined(port, clients, depth, factory, seconds, max_ops, hard_timeout):
    loop = asyncio.get_running_loop()
    run = _PipeRun(loop, depth, seconds, max_ops)
    protos: list[_PipeClient] = []
    try:
        for c in range(clients):
            _, proto = await loop.create_connection(
                lambda c=c: _PipeClient(run, factory(c)), "127.0.0.1", port)
            protos.append(proto)
        start = time.perf_counter()
        run.stop_at = start + seconds
        for p in protos:
            p.go()
        await asyncio.wait_for(asyncio.gather(*(p.finished for p in protos)), hard_timeout)
        elapsed = time.perf_counter() - start
    finally:
        for p in protos:
            if p.transport is not None:
                p.transport.close()
    if run.errors:
        raise LoadError(f"{run.errors} error replies, e.g. {run.last_error!r}")
    return {"ops": run.ops, "seconds": elapsed, "ops_per_sec": run.ops / elapsed}


def _new_loop():
    try:
        import uvloop
        return uvloop.new_event_loop()
    except ImportError:
        return asyncio.new_event_loop()


def pipelined(port: int, clients: int, depth: int,
              factory: Callable[[int], Callable[[], bytes]], seconds: float,
              max_ops: int = 50_000_000) -> dict:
    """``clients`` connections, each sending ``factory(client_index)()`` (a batch of
    ``depth`` requests) and waiting for all its replies before the next batch."""
    with asyncio.Runner(loop_factory=_new_loop) as runner:
        try:
            return runner.run(_pipelined(port, clients, depth, factory, seconds, max_ops,
                                         hard_timeout=seconds + 60))
        except asyncio.TimeoutError:
            raise LoadError("pipelined run did not finish (server stalled?)") from None


def pipelined_fixed(port: int, batches: list[bytes], depth: int, seconds: float,
                    max_ops: int = 50_000_000, check=None) -> dict:
    """One blocking connection cycling through pre-encoded ``batches`` of ``depth``."""
    with Conn(port) as conn:
        clock = time.perf_counter
        start = clock()
        stop_at = start + seconds
        ops = i = 0
        nb = len(batches)
        while ops < max_ops:
            conn.send(batches[i % nb])
            if conn.read_replies(depth):
                raise LoadError(f"error reply: {conn.last_error!r}")
            ops += depth
            i += 1
            if clock() >= stop_at:
                break
        elapsed = clock() - start
    return {"ops": ops, "seconds": elapsed, "ops_per_sec": ops / elapsed,
            "us_per_op": elapsed / ops * 1e6}


def wakeup_latency(port: int, key: bytes, samples: int, seconds: float,
                   park_s: float = 0.003) -> dict:
    """Median time from sending XADD to a client blocked in XREAD receiving the entry."""
    a, b = Conn(port), Conn(port)
    try:
        last = b.call(b"XADD", key, b"*", b"f", b"seed")
        xadd = encode(b"XADD", key, b"*", b"f", b"12345678")
        lat: list[float] = []
        clock = time.perf_counter
        stop_at = clock() + seconds
        for _ in range(samples):
            a.send(encode(b"XREAD", b"BLOCK", b"2000", b"STREAMS", key, last))
            time.sleep(park_s)  # let the server park the reader before the write
            t0 = clock()
            b.send(xadd)
            reply = a.read_reply()
            t1 = clock()
            new_id = b.read_reply()
            if isinstance(new_id, ReplyError):
                raise LoadError(f"XADD failed: {new_id}")
            if isinstance(reply, ReplyError) or not reply:
                raise LoadError(f"XREAD did not return the new entry: {reply!r}")
            lat.append(t1 - t0)
            last = new_id
            if clock() >= stop_at:
                break
    finally:
        a.close()
        b.close()
    return {"samples": len(lat), "p50_us": statistics.median(lat) * 1e6,
            "p99_us": _pct(lat, 0.99) * 1e6}


def readgroup_ack(port: int, key: bytes, group: bytes, total: int, seconds: float,
                  count: int = 100) -> dict:
    """Consume ``key`` through ``group``: XREADGROUP COUNT 100 then one XACK per entry."""
    with Conn(port) as conn:
        read = encode(b"XREADGROUP", b"GROUP", group, b"c1", b"COUNT", count, b"STREAMS", key, b">")
        ack = (b"*4\r\n$4\r\nXACK\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(group), group)
               + b"$%d\r\n%s\r\n")
        clock = time.perf_counter
        start = clock()
        stop_at = start + seconds
        done = 0
        while done < total:
            conn.send(read)
            reply = conn.read_reply()
            if isinstance(reply, ReplyError):
                raise LoadError(f"XREADGROUP failed: {reply}")
            if not reply:
                break
            entries = reply[0][1]
            if not entries:
                break
            conn.send(b"".join([ack % (len(e[0]), e[0]) for e in entries]))
            if conn.read_replies(len(entries)):
                raise LoadError(f"XACK failed: {conn.last_error}")
            done += len(entries)
            if clock() >= stop_at:
                break
        elapsed = clock() - start
    if not done:
        raise LoadError("nothing consumed")
    return {"entries": done, "seconds": elapsed, "entries_per_sec": done / elapsed}
