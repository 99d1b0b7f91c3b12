"""Pub/sub: who listens to which channel, and the delivery of messages to them.

Three kinds of subscription, each kept twice: on the server (name -> subscribers, in
subscription order) and on the client (its names, in subscription order, for UNSUBSCRIBE
without arguments and CLIENT LIST). Channels and patterns share the subscription count
Redis replies with; shard channels count on their own (Redis 7.0).

A message is encoded into the subscriber's output buffer as it is published. The buffer
goes out with the subscriber's next write: when it was empty, a write is queued for the
end of the loop iteration, so a batch of publications reaches a subscriber in one write.

A subscriber that does not read is held to ``client-output-buffer-limit``'s pubsub class,
checked here as each message is delivered (so no request pays for it): its pending output,
the transport's write buffer plus what waits in its own buffer, may not reach the hard
limit, nor stay at or over the soft limit for more than the soft seconds. A subscriber
that does is closed at once, its pending output dropped, as Redis closes it "ASAP".

A message to the client whose command is running (``running``: a RESP3 subscriber
publishing to itself, or announcing a keyspace event it listens to) waits in the client's
held pushes until that command's reply is out, as Redis does since 7.2: a push never lands
inside a reply, and EXEC's array comes whole before the messages its commands sent to the
client itself. (Redis 7.0 wrote it at once, inside the EXEC array too.)

Keyspace notifications are published from here too: the keyspace calls ``keyspace_event``
(installed as its hook) for the classes ``notify-keyspace-events`` enables.
"""

from __future__ import annotations

import logging
import time

from ..commands.connection import client_line
from ..commands.keyutil import glob_match
from ..protocol.encoder import encode
from ..protocol.replies import Push
from ..store.keyspace import EVENT_CHANNELS

_K, _E, _S, _T, _I, _V = (EVENT_CHANNELS[c] for c in "KESTIV")
_SUBKEY_CHANNELS = _S | _T | _I | _V

log = logging.getLogger("streamd")

# The three subscription kinds, as commands name them: (client attribute, PubSub attribute).
_KINDS = {"channel": ("channels", "channels"), "pattern": ("patterns", "patterns"),
          "shard": ("shard_channels", "shard")}


class PubSub:
    __slots__ = ("channels", "patterns", "shard", "running", "_writes", "_config",
                 "obuf_disconnections")

    def __init__(self, writes, config):
        self.channels: dict[bytes, dict] = {}  # channel -> {client: None}, never empty
        self.patterns: dict[bytes, dict] = {}  # pattern -> {client: None}, never empty
        self.shard: dict[bytes, dict] = {}  # shard channel -> {client: None}, never empty
        self._writes = writes  # the server's WriteScheduler: when a subscriber's buffer goes out
        self.running = None  # the client whose command runs now (see the module doc)
        self._config = config
        # Subscribers closed for their output buffer (INFO's
        # client_output_buffer_limit_disconnections); the server resets it.
        self.obuf_disconnections = 0

    # --- subscriptions --------------------------------------------------------------------
    def subscribe(self, client, kind: str, name: bytes) -> bool:
        """Add ``client`` to ``name`` (a "channel", "pattern" or "shard" channel); False
        when it was already there."""
        kind = _KINDS[kind]
        mine = getattr(client, kind[0])
        if name in mine:
            return False
        mine[name] = None
        table = getattr(self, kind[1])
        subs = table.get(name)
        if subs is None:
            subs = table[name] = {}
        subs[client] = None
        client.update_subscribed()
        return True

    def unsubscribe(self, client, kind: str, name: bytes) -> bool:
        """Remove ``client`` from ``name``; False when it was not there."""
        kind = _KINDS[kind]
        mine = getattr(client, kind[0])
        if name not in mine:
            return False
        del mine[name]
        table = getattr(self, kind[1])
        subs = table[name]
        del subs[client]
        if not subs:
            del table[name]
        client.update_subscribed()
        return True

    def drop_client(self, client) -> None:
        """Forget every subscription of ``client`` (RESET, disconnection), silently."""
        for kind, (attr, _) in _KINDS.items():
            for name in list(getattr(client, attr)):
                self.unsubscribe(client, kind, name)

    # --- publishing -----------------------------------------------------------------------
    def publish(self, channel: bytes, message: bytes) -> int:
        """Send ``message`` to the subscribers of ``channel`` and of every pattern matching
        it; the number of deliveries (a client gets one per matching subscription)."""
        n = 0
        subs = self.channels.get(channel)
        if subs:
            n += self._deliver(subs, [b"message", channel, message])
        if self.patterns:
            for pattern, subs in list(self.patterns.items()):
                if glob_match(pattern, channel):
                    n += self._deliver(subs, [b"pmessage", pattern, channel, message])
        return n

    def spublish(self, channel: bytes, message: bytes) -> int:
        subs = self.shard.get(channel)
        if not subs:
            return 0
        return self._deliver(subs, [b"smessage", channel, message])

    def _deliver(self, subs: dict, items: list) -> int:
        encoded: dict[int, bytes] = {}  # resp version -> the message, encoded once
        limits = self._config["client-output-buffer-limit"].limits["pubsub"]
        running = self.running
        for client in list(subs):
            if client.closing:
                client.push_dropped()
                continue
            data = encoded.get(client.resp)
            if data is None:
                buf = bytearray()
                encode(Push(items), buf, client.resp)
                data = encoded[client.resp] = bytes(buf)
            if client is running:
                client.held_pushes += data  # after the reply (see the module doc)
                continue
            self.send_out(client, data, limits)
        return len(subs)

    def send_out(self, client, data, limits: tuple, flush: bool = True) -> None:
        """Append ``data``, a message rather than a reply (a pub/sub message, a MONITOR
        line, an invalidation), to ``client``'s output buffer. Its write comes with the
        other clients' at the end of this loop iteration (at once without a loop), unless
        ``flush`` is false (the buffer holds the running command's reply, written anyway);
        a client over ``limits`` (hard, soft, seconds) is closed."""
        out = client._out
        flush_due = flush and not out  # a non-empty buffer already has its write coming
        client.last_interaction = time.time()  # Redis counts a write to a client as one
        out += data
        if flush_due:
            writes = self._writes
            if writes.loop is None:
                client.flush()
            else:
                writes.queue(client)
        hard, soft, seconds = limits
        if (hard or soft) and self.over_limit(client, hard, soft, seconds):
            self.close_overflowing(client)

    @staticmethod
    def over_limit(client, hard: int, soft: int, seconds: int) -> bool:
        """Redis's test: the hard limit at once; the soft limit once the client has been at
        or over it for more than ``seconds`` (whole seconds, as Redis's clock counts)."""
        transport = client.transport
        used = len(client._out) + (transport.get_write_buffer_size() if transport else 0)
        if hard and used >= hard:
            return True
        if not soft or used < soft:
            client.obuf_soft_since = 0
            return False
        now = int(time.time())
        if not client.obuf_soft_since:
            client.obuf_soft_since = now
            return False
        return now - client.obuf_soft_since > seconds

    def close_overflowing(self, client) -> None:
        log.warning("Client %s scheduled to be closed ASAP for overcoming of output buffer "
                    "limits.", client_line(client, time.time()))
        self.obuf_disconnections += 1
        client.abort()

    # --- keyspace notifications ------------------------------------------------------------
    def keyspace_event(self, event: bytes, key: bytes, db: int, channels: int,
                       subkeys=()) -> None:
        """Publish ``event`` on ``key`` of database ``db``, on the channel kinds whose bits
        are set in ``channels`` (``store.keyspace.EVENT_CHANNELS``): ``__keyspace`` and
        ``__keyevent``, then, when the event names ``subkeys``, the four subkey channels,
        whose payloads list them as ``<len>:<subkey>`` joined by commas."""
        if not self.channels and not self.patterns:
            return
        if channels & _K:
            self.publish(b"__keyspace@%d__:%b" % (db, key), event)
        if channels & _E:
            self.publish(b"__keyevent@%d__:%b" % (db, event), key)
        if subkeys and channels & _SUBKEY_CHANNELS:
            listed = b",".join(b"%d:%b" % (len(f), f) for f in subkeys)
            bar = b"|" in event  # the '|' separates the event in two of them
            if channels & _S and not bar:
                self.publish(b"__subkeyspace@%d__:%b" % (db, key), event + b"|" + listed)
            if channels & _T:
                self.publish(b"__subkeyevent@%d__:%b" % (db, event),
                             b"%d:%b|%b" % (len(key), key, listed))
            if channels & _I and b"\n" not in key:  # the '\n' separates key and subkey
                for f in subkeys:
                    self.publish(b"__subkeyspaceitem@%d__:%b\n%b" % (db, key, f), event)
            if channels & _V and not bar:
                self.publish(b"__subkeyspaceevent@%d__:%b|%b" % (db, event, key), listed)

    # --- introspection ----------------------------------------------------------------------
    def active(self, kind: str, pattern: bytes | None) -> list[bytes]:
        """The names of ``kind`` with a subscriber, those matching ``pattern`` if given."""
        names = getattr(self, _KINDS[kind][1])
        if pattern is None:
            return list(names)
        return [n for n in names if glob_match(pattern, n)]

    def count(self, kind: str, name: bytes) -> int:
        """How many clients subscribe to ``name``."""
        subs = getattr(self, _KINDS[kind][1]).get(name)
        return len(subs) if subs else 0
