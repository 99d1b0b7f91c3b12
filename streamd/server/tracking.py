"""Server-assisted client-side caching (CLIENT TRACKING), as Redis 7.0 does it.

Two modes. By default a tracking client's read-only commands remember their keys: key ->
the ids of the clients that read it, one table for every database (Redis keys it by name
alone, so a write to ``k`` in db 1 invalidates a read of ``k`` in db 0). The first change to
such a key sends each of those clients one invalidation and forgets the key. OPTIN
remembers only after CLIENT CACHING YES, OPTOUT all but after CLIENT CACHING NO: the
client's ``caching`` flag, which lasts one command (CLIENT commands and MULTI keep it).
In BCAST mode nothing is remembered: every change to a key under one of the client's
prefixes is collected per prefix, and at the end of the loop iteration each prefix's keys,
in byte order, go out in one message to its clients.

A message goes in RESP3 as a ``invalidate`` push; with REDIRECT to another client (which
may use RESP2 if it is subscribed to something: then it is a message on
``__redis__:invalidate``). FLUSHDB and FLUSHALL send every tracking client a null in place
of the keys, in the tracking client's own protocol, and empty the table. A redirect target
that has gone away marks the client's redirect broken and, in RESP3, sends it a
``tracking-redir-broken`` push instead.

A change made by the command of the client that receives the message (``pubsub.running``)
is held until that command's reply is out, after EXEC's whole array, as Redis 7.0 holds
it; with NOLOOP that client is not told at all. A key that expires is changed by no
command: in BCAST mode a NOLOOP client hears of it even if its own lookup expired it.

The keyspace calls ``invalidate`` only while ``keyspace.tracking`` is set: while a client
tracks or the table holds keys (a client that turned tracking off leaves its reads there,
as in Redis, where they are dropped as keys change). Tracking clients take the
dispatcher's slow path, which remembers their reads; no one else pays for any of it.
"""

from __future__ import annotations

from ..commands.errors import _show
from ..protocol.encoder import encode
from ..protocol.replies import Push, Raw

_NULL = {2: Raw(b"$-1\r\n"), 3: Raw(b"_\r\n")}
_CHANNEL = b"__redis__:invalidate"


class TrackingState:
    """One client's tracking options (``client.tracking``; None while it is off)."""

    __slots__ = ("redirect", "bcast", "optin", "optout", "noloop", "caching", "broken",
                 "prefixes")

    def __init__(self):
        self.redirect = 0  # the client id messages go to; 0: the client itself
        self.bcast = self.optin = self.optout = self.noloop = False
        self.caching = False  # CLIENT CACHING YES|NO given for the next command
        self.broken = False  # the redirect target was gone when a message was due
        self.prefixes: dict[bytes, None] = {}  # BCAST prefixes

    def flags(self) -> list[bytes]:
        """CLIENT TRACKINGINFO's flags, in Redis's order."""
        out = [b"on"]
        if self.bcast:
            out.append(b"bcast")
        if self.optin:
            out.append(b"optin")
            if self.caching:
                out.append(b"caching-yes")
        if self.optout:
            out.append(b"optout")
            if self.caching:
                out.append(b"caching-no")
        if self.noloop:
            out.append(b"noloop")
        if self.broken:
            out.append(b"broken_redirect")
        return out


class _Prefix:
    """A BCAST prefix: its clients, and the keys under it changed this loop iteration
    (key -> the client whose command changed it last, None for an expiry)."""

    __slots__ = ("clients", "keys")

    def __init__(self):
        self.clients: dict = {}
        self.keys: dict = {}


def overlap(a: bytes, b: bytes) -> bool:
    return a.startswith(b) or b.startswith(a)


class Tracking:
    __slots__ = ("server", "keyspace", "pubsub", "table", "items", "prefixes", "clients",
                 "_due")

    def __init__(self, server):
        self.server = server
        self.keyspace = server.keyspace
        self.pubsub = server.pubsub
        self.table: dict[bytes, dict[int, None]] = {}  # key -> ids of its readers
        self.items = 0  # (key, reader) pairs in the table: INFO tracking_total_items
        self.prefixes: dict[bytes, _Prefix] = {}
        self.clients = 0  # clients with tracking on: INFO tracking_clients
        self._due = False  # a broadcast is scheduled for the end of this iteration

    def _sync(self) -> None:
        self.keyspace.tracking = self if (self.clients or self.table) else None

    # --- CLIENT TRACKING ------------------------------------------------------------------
    def check_prefixes(self, client, prefixes: list[bytes]) -> str | None:
        """The error for BCAST prefixes that overlap the client's or one another."""
        st = client.tracking
        mine = sorted(st.prefixes) if st is not None else []
        for i, p in enumerate(prefixes):
            for e in mine:
                if overlap(p, e):
                    return (f"ERR Prefix '{_show(p, 1 << 30)}' overlaps with an existing "
                            f"prefix '{_show(e, 1 << 30)}'. Prefixes for a single client "
                            "must not overlap.")
            for q in prefixes[i + 1:]:
                if overlap(p, q):
                    return (f"ERR Prefix '{_show(p, 1 << 30)}' overlaps with another provided "
                            f"prefix '{_show(q, 1 << 30)}'. Prefixes for a single client "
                            "must not overlap.")
        return None

    def enable(self, client, redirect: int, bcast: bool, optin: bool, optout: bool,
               noloop: bool, prefixes: list[bytes]) -> None:
        """Turn tracking on, or change its options (the CACHING flag and BCAST prefixes
        already set stay, as in Redis)."""
        st = client.tracking
        if st is None:
            st = client.tracking = TrackingState()
            self.clients += 1
            client.update_special()
        st.redirect = redirect
        st.broken = False
        st.bcast, st.optin, st.optout, st.noloop = bcast, optin, optout, noloop
        if bcast:
            for p in prefixes or [b""]:
                st.prefixes[p] = None
                state = self.prefixes.get(p)
                if state is None:
                    state = self.prefixes[p] = _Prefix()
                state.clients[client] = None
        self._sync()

    def disable(self, client) -> None:
        st = client.tracking
        if st is None:
            return
        for p in st.prefixes:
            state = self.prefixes[p]
            del state.clients[client]
            if not state.clients:
                del self.prefixes[p]
        client.tracking = None
        self.clients -= 1
        client.update_special()
        self._sync()

    def drop_client(self, client) -> None:
        """``client`` disconnects. Once no tracking client is left, the reads of clients
        that are gone are dropped at once rather than as their keys change (nobody can
        receive them), so that writes stop paying for the table."""
        self.disable(client)
        if self.clients or not self.table:
            return
        live = self.server.clients
        gone = client.id
        for key, ids in list(self.table.items()):
            keep = {i: None for i in ids if i != gone and i in live}
            self.items -= len(ids) - len(keep)
            if keep:
                self.table[key] = keep
            else:
                del self.table[key]
        self._sync()

    # --- reads ----------------------------------------------------------------------------
    def remember(self, client, cmd, argv) -> None:
        """After a read-only command of a tracking client: remember its keys."""
        st = client.tracking
        if st.bcast or (st.optin and not st.caching) or (st.optout and st.caching):
            return
        table = self.table
        cid = client.id
        for key in cmd.keys_of(argv):
            ids = table.get(key)
            if ids is None:
                ids = table[key] = {}
            if cid not in ids:
                ids[cid] = None
                self.items += 1
        self.keyspace.tracking = self

    # --- changes --------------------------------------------------------------------------
    def invalidate(self, key: bytes, by_command: bool) -> None:
        """``key`` changed (``by_command`` False: it expired)."""
        running = self.pubsub.running
        if self.prefixes:
            writer = running if by_command else None
            for prefix, state in self.prefixes.items():
                if key.startswith(prefix):
                    state.keys[key] = writer
                    if not self._due:
                        self._schedule()
        ids = self.table.pop(key, None)
        if ids is None:
            return
        self.items -= len(ids)
        clients = self.server.clients
        for cid in ids:
            target = clients.get(cid)
            if target is None:
                continue
            st = target.tracking
            if st is None or st.bcast or (st.noloop and target is running):
                continue
            self.send(target, [key])
        if not self.table and not self.clients:
            self.keyspace.tracking = None

    def flushed(self) -> None:
        for client in list(self.server.clients.values()):
            if client.tracking is not None:
                self.send(client, None)
        self.table = {}
        self.items = 0
        self._sync()

    def _schedule(self) -> None:
        loop = self.server.loop
        if loop is None:
            return  # no event loop (no network): nothing to deliver to
        self._due = True
        # As Redis's beforeSleep: after every command of this iteration has run.
        loop.call_soon(self.broadcast)

    def broadcast(self) -> None:
        """Send each BCAST prefix's changed keys to its clients, one message a prefix."""
        self._due = False
        for prefix in sorted(self.prefixes):
            state = self.prefixes[prefix]
            if not state.keys:
                continue
            changed, state.keys = state.keys, {}
            keys = sorted(changed)
            for client in list(state.clients):
                if client.tracking is None or client.closing:
                    continue
                if client.tracking.noloop:
                    theirs = [k for k in keys if changed[k] is not client]
                    if theirs:
                        self.send(client, theirs)
                else:
                    self.send(client, keys)

    # --- delivery -------------------------------------------------------------------------
    def send(self, client, keys) -> None:
        """One invalidation of ``keys`` (None: a flush) for tracking ``client``."""
        st = client.tracking
        target = client
        redirected = bool(st.redirect)
        if redirected:
            target = self.server.clients.get(st.redirect)
            if target is None or target.closing:
                st.broken = True
                if client.resp > 2:
                    self._push(client, Push([b"tracking-redir-broken", st.redirect]), 3)
                return
        value = _NULL[client.resp] if keys is None else keys
        if target.resp > 2:
            self._push(target, Push([b"invalidate", value]), 3)
        elif redirected and target.subscribed:
            self._push(target, Push([b"message", _CHANNEL, value]), 2)

    def _push(self, client, push: Push, resp: int) -> None:
        if client.closing:
            client.push_dropped()
            return
        data = bytearray()
        encode(push, data, resp)
        if client is self.pubsub.running:
            client.held_pushes += data  # after the running command's reply
            return
        kind = "pubsub" if client.subscribed else "normal"
        self.pubsub.send_out(client, data,
                             self.server.config["client-output-buffer-limit"].limits[kind])
