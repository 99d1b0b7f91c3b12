"""The declarative command table.

Every command is one ``@command(...)`` row: name, arity as Redis counts it (the name
included; negative = at least), flags, key positions and the docs shown by COMMAND DOCS.
COMMAND, COMMAND INFO/COUNT/LIST/DOCS and the arity errors are all derived from this table.

Container commands (XGROUP, XINFO, CLIENT, CONFIG ...) are registered with
``container=True``; their subcommands are rows named ``container|sub``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..protocol.replies import Map, SetReply, Simple

TABLE: dict[bytes, "Command"] = {}
# Lookup by the name as clients send it: lower and upper case both hit on the first probe.
DISPATCH: dict[bytes, "Command"] = {}


@dataclass(slots=True)
class Arg:
    """One argument in COMMAND DOCS (mirrors Redis's commands/*.json argument schema)."""

    name: str
    type: str  # key | string | integer | double | pattern | unix-time | pure-token | oneof | block
    token: str | None = None
    optional: bool = False
    multiple: bool = False
    multiple_token: bool = False
    since: str | None = None
    deprecated_since: str | None = None
    display: str | None = None
    key_spec_index: int | None = None
    arguments: tuple["Arg", ...] = ()

    def doc(self):
        out = [("name", self.name), ("type", self.type)]
        if self.display or self.type not in ("oneof", "block", "pure-token"):
            out.append(("display_text", self.display or self.name))
        if self.key_spec_index is not None:
            out.append(("key_spec_index", self.key_spec_index))
        if self.token is not None:  # MIGRATE's empty-string token is ""
            out.append(("token", self.token))
        if self.since:
            out.append(("since", self.since))
        if self.deprecated_since:
            out.append(("deprecated_since", self.deprecated_since))
        flags = [f for f, on in (("optional", self.optional), ("multiple", self.multiple),
                                 ("multiple_token", self.multiple_token)) if on]
        if flags:
            out.append(("flags", flags))
        if self.arguments:
            out.append(("arguments", [a.doc() for a in self.arguments]))
        return out


# Short constructors keep the table rows readable.
def key(name="key", **kw):
    return Arg(name, "key", key_spec_index=kw.pop("spec", 0), **kw)


def string(name, **kw):
    return Arg(name, "string", **kw)


def integer(name, **kw):
    return Arg(name, "integer", **kw)


def double(name, **kw):
    return Arg(name, "double", **kw)


def pattern(name="pattern", **kw):
    return Arg(name, "pattern", **kw)


def token(tok, name=None, **kw):
    return Arg(name or tok.lower(), "pure-token", token=tok, **kw)


def oneof(name, *args, **kw):
    return Arg(name, "oneof", arguments=args, **kw)


def block(name, *args, **kw):
    return Arg(name, "block", arguments=args, **kw)


@dataclass(slots=True, eq=False)
class Command:
    name: str  # lower case; "container|sub" for subcommands
    handler: Callable | None
    arity: int
    flags: frozenset
    first_key: int = 0
    last_key: int = 0
    step: int = 0
    # Keys found by keyword (XREAD's ``STREAMS k1 k2 id1 id2``): the keyword, where its
    # search starts, and the fraction of the remaining arguments that are keys.
    key_keyword: str = ""
    keyword_from: int = 0
    keyword_limit: int = 0
    # Keys counted by an argument (MSETEX's ``numkeys``): (where the search starts, the
    # count's offset from there, the first key's offset, the step between keys). The count
    # is of keys, each ``step`` arguments apart (MSETEX's step 2 skips each value).
    key_numkeys: tuple = ()
    # Key-spec flags as Redis declares them ("RW update", "RO access" ...): one string for
    # the single spec, or one per key position from ``first_key`` when each key has its own
    # spec (RENAME's source and destination). Empty: derived from the write flag.
    key_flags: tuple = ()
    key_notes: str = ""  # the key spec's "notes", where Redis explains its flags
    # With one spec per key position: each spec's lastkey (0 when empty). A last spec of
    # -1 reaches to the end (BITOP's source keys after its destination).
    spec_last: tuple = ()
    # Optional ``fn(argv) -> str``: the flags of a command whose key access depends on its
    # arguments (SET with or without GET), for COMMAND GETKEYSANDFLAGS.
    key_flags_for: Callable | None = None
    # Optional ``fn(argv) -> keys``: the keys of a command whose key positions need more
    # than the specs describe (MIGRATE's KEYS, valid only after an empty key argument), as
    # Redis's getkeys_proc; set after registration like ``key_flags_for``.
    getkeys: Callable | None = None
    group: str = "generic"
    since: str = "1.0.0"
    summary: str = ""
    complexity: str = ""
    arguments: tuple = ()
    categories: tuple = ()
    tips: tuple = ()  # COMMAND INFO's tips (request_policy:..., nondeterministic_output)
    doc_flags: tuple = ()
    # A deprecated command's docs name the version that deprecated it and its replacement.
    deprecated_since: str = ""
    replaced_by: str = ""
    # COMMAND DOCS's "history": (version, what changed) pairs, oldest first, as Redis's
    # command JSON lists them.
    history: tuple = ()
    subcommands: dict = field(default_factory=dict)
    parent: "Command | None" = None
    # A container dispatch resolves without a subcommand argument: the command itself
    # (COMMAND, which has subcommands and also runs alone; see ``command(alone=True)``).
    bare: "Command | None" = None
    # Optional ``batch(ctx, requests, start, replies)``: runs the consecutive requests
    # from ``start`` that it can take as one unit (see ``batch_handler``).
    batch: Callable | None = None
    # The config (``enable-debug-command``) that must allow this command before it runs;
    # the dispatcher checks it after the arity, before authentication, as Redis does.
    protected: str = ""
    # statistics for INFO commandstats. A call the dispatcher times is counted once, in
    # ``lat`` (below), which holds its time too: ``more_calls`` and ``usec`` are only what
    # those counts do not hold (``calls`` adds them up; see latencystats.command_usec).
    more_calls: int = 0
    usec: int = 0
    failed_calls: int = 0
    rejected_calls: int = 0
    # Latency tracking (INFO latencystats, LATENCY HISTOGRAM): ``hist`` counts the calls
    # per whole microsecond below its length (empty until the first call),
    # ``hist_big`` the slower ones per histogram bucket (see commands/latencystats.py).
    # The dispatcher does ``lat[usec] += 1``, and nothing else for the time of a fast
    # call: ``lat`` is ``hist``, or ``shadow`` while latency-tracking is off (counts that
    # only commandstats's time reads), so the hot path has no test of the setting.
    hist: list = field(default_factory=list)
    hist_big: dict = field(default_factory=dict)
    shadow: list = field(default_factory=list)
    lat: list = field(default_factory=list)

    @property
    def calls(self) -> int:
        return (self.more_calls + sum(self.hist) + sum(self.shadow)
                + sum(self.hist_big.values()))

    @property
    def is_container(self) -> bool:
        return bool(self.subcommands) or self.handler is None

    def arity_ok(self, argc: int) -> bool:
        a = self.arity
        return argc == a if a > 0 else argc >= -a

    def key_indexes(self, argc: int) -> range:
        """Positions of the key arguments in an argv of length ``argc`` (fixed specs)."""
        if not self.first_key:
            return range(0)
        last = self.last_key if self.last_key >= 0 else argc + self.last_key
        return range(self.first_key, last + 1, self.step or 1)

    def keys_of(self, argv: list[bytes]) -> list[bytes]:
        """The key arguments of a whole command line."""
        if self.getkeys is not None:
            return self.getkeys(argv)
        if self.key_keyword:
            word = self.key_keyword.encode()
            for i in range(self.keyword_from, len(argv)):
                if argv[i].upper() == word:
                    rest = len(argv) - i - 1
                    return argv[i + 1:i + 1 + rest // self.keyword_limit]
            return []
        if self.key_numkeys:
            begin, count_at, first, step = self.key_numkeys
            if begin + count_at >= len(argv):
                return []
            raw = argv[begin + count_at]
            # Redis's string2ll: plain digits, no sign, space or leading zero.
            if not raw.isdigit() or raw[0] == 48:
                return []
            n = int(raw)
            start = begin + first
            if n <= 0 or start + (n - 1) * step >= len(argv):
                return []  # a count the arguments cannot hold: no keys, as Redis finds none
            return argv[start:start + n * step:step]
        return [argv[i] for i in self.key_indexes(len(argv)) if i < len(argv)]

    # --- COMMAND INFO / DOCS -------------------------------------------------------------
    def spec_flags(self) -> list[str]:
        """The key-spec flag strings, one per spec."""
        if self.key_flags:
            return list(self.key_flags)
        return ["RW" if "write" in self.flags else "RO"]

    def keys_and_flags(self, argv: list[bytes]) -> list[tuple[bytes, str]]:
        """``(key, flags)`` for each key argument, as COMMAND GETKEYSANDFLAGS lists them."""
        keys = self.keys_of(argv)
        if self.key_flags_for is not None:
            return [(k, self.key_flags_for(argv)) for k in keys]
        specs = self.spec_flags()
        if len(specs) == 1:
            return [(k, specs[0]) for k in keys]
        if self.spec_last and self.spec_last[-1] == -1:
            specs = specs[:-1] + [specs[-1]] * (len(keys) - len(specs) + 1)
        return list(zip(keys, specs))

    def info(self):
        """The COMMAND INFO entry. Its shape is Redis 7.0's: flag and category lists are sets
        of simple strings (arrays of them in RESP2), a key spec is a map; subcommands are an
        array when there are any and an empty set otherwise."""
        flags = [_FLAG_NAMES.get(f, f) for f in self.flags if f not in _NOT_FLAGS]
        flags.sort(key=lambda f: _FLAG_ORDER.get(f, len(_FLAG_ORDER)))
        cats = sorted(self.categories, key=lambda c: _CATEGORY_ORDER.get(c, len(_CATEGORY_ORDER)))
        specs = []
        if self.key_keyword:
            # With a first key too (MIGRATE), that key's index spec comes first.
            keyword_flags = self.spec_flags()[-1]
            if self.first_key:
                specs.append(_key_spec(self.spec_flags()[0],
                                       (b"index", [(b"index", self.first_key)]), (0, 1, 0)))
            specs.append(_key_spec(keyword_flags,
                                   (b"keyword", [(b"keyword", self.key_keyword.encode()),
                                                 (b"startfrom", self.keyword_from)]),
                                   (-1, 1, self.keyword_limit)))
        elif self.key_numkeys:
            begin, count_at, first, step = self.key_numkeys
            specs = [_key_spec(self.spec_flags()[0], (b"index", [(b"index", begin)]),
                               [(b"keynumidx", count_at), (b"firstkey", first),
                                (b"keystep", step)], self.key_notes, find_type=b"keynum")]
        elif self.first_key:
            per_key = self.spec_flags()
            if len(per_key) > 1:
                lasts = self.spec_last or (0,) * len(per_key)
                specs = [_key_spec(f, (b"index", [(b"index", self.first_key + i)]),
                                   (last, 1, 0))
                         for i, (f, last) in enumerate(zip(per_key, lasts))]
            else:
                last = (self.last_key - self.first_key if self.last_key >= 0
                        else self.last_key)
                specs = [_key_spec(per_key[0], (b"index", [(b"index", self.first_key)]),
                                   (last, self.step or 1, 0), self.key_notes)]
        subs = [c.info() for c in self.subcommands.values()]
        return [self.name.encode(), self.arity, SetReply([Simple(f) for f in flags]),
                self.first_key, self.last_key, self.step,
                SetReply([Simple(f"@{c}") for c in cats]),
                SetReply([t.encode() for t in self.tips]),
                SetReply(specs),
                subs if subs else SetReply([])]

    def docs(self):
        out = [("summary", self.summary), ("since", self.since), ("group", self.group)]
        if self.complexity:
            out.append(("complexity", self.complexity))
        if self.doc_flags:
            out.append(("doc_flags", list(self.doc_flags)))
        if self.deprecated_since:
            out.append(("deprecated_since", self.deprecated_since))
            out.append(("replaced_by", self.replaced_by))
        if self.history:
            # A set of pairs in RESP3, as Redis 7.0.15 replies it (an array in RESP2).
            out.append(("history", SetReply([[v.encode(), text.encode()]
                                             for v, text in self.history])))
        if self.arguments:
            out.append(("arguments", [a.doc() for a in self.arguments]))
        if self.subcommands:
            out.append(("subcommands", [(c.name, c.docs()) for c in self.subcommands.values()]))
        return out


# Redis lists command flags, key-spec flags and ACL categories in the order of their bits,
# not alphabetically; these give that order.
_FLAG_ORDER = {f: i for i, f in enumerate((
    "write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
    "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
    "may_replicate", "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys",
    "allow_busy"))}
# Every ACL category, in that order (ACL CAT lists them so).
ACL_CATEGORIES = (
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
    "dangerous", "connection", "transaction", "scripting")
_CATEGORY_ORDER = {c: i for i, c in enumerate(ACL_CATEGORIES)}
# Table flags that Redis does not report as command flags ("slow" is only a category;
# Redis keeps "may_replicate" out of COMMAND INFO on purpose).
_NOT_FLAGS = frozenset({"slow", "may_replicate"})
_FLAG_NAMES = {"noauth": "no_auth"}


def _key_spec(flags: str, begin: tuple, find, notes: str = "",
              find_type: bytes = b"range") -> Map:
    """One key spec: ``begin`` is (type, spec pairs), ``find`` a range (lastkey, keystep,
    limit), or with ``find_type`` b"keynum" the spec's (name, value) pairs."""
    if find_type == b"range":
        lastkey, keystep, limit = find
        find = [(b"lastkey", lastkey), (b"keystep", keystep), (b"limit", limit)]
    return Map([(b"notes", notes.encode())] * bool(notes) + [
        (b"flags", SetReply([Simple(f) for f in flags.split()])),
        (b"begin_search", Map([(b"type", begin[0]), (b"spec", Map(begin[1]))])),
        (b"find_keys", Map([(b"type", find_type), (b"spec", Map(find))])),
    ])


_GROUP_CATEGORIES = {
    "stream": "stream", "string": "string", "hash": "hash", "bitmap": "bitmap",
    "generic": "keyspace",
    "connection": "connection", "transactions": "transaction", "scripting": "scripting",
}


def command(name: str, arity: int, flags: str = "", keys: tuple = (0, 0, 0), *,
            group: str = "generic", since: str = "1.0.0", summary: str = "",
            complexity: str = "", args: tuple = (), container: bool = False,
            doc_flags: tuple = (), keyword_keys: tuple = (), pure: bool = False,
            deprecated: tuple = (), alone: bool = False, key_flags: tuple | str = (),
            acl: str = "", tips: str = "", key_notes: str = "", spec_last: tuple = (),
            group_acl: bool = True, protected: str = "", history: tuple = (),
            numkeys_keys: tuple = (), flag_acl: bool = True):
    """Register a command (or, with ``container=True``, a container of subcommands).

    Used as a decorator on the handler ``handler(ctx, argv) -> reply``; a container is
    registered by calling it without a handler. ``keys`` is (first, last, step);
    ``keyword_keys`` is (keyword, search start, limit) for keys that follow a keyword,
    which makes the command ``movablekeys``, as does ``numkeys_keys`` (see
    ``Command.key_numkeys``). ``pure`` marks a handler whose only effects
    are its reply and lazy expiry (no write, no blocking, no client state): a pipelined run
    of it is taken by one loop (``pure_batch``). ``deprecated`` is (deprecated since,
    replaced by), as Redis's command docs give them; it adds the ``deprecated`` doc flag.
    ``alone`` marks a command that also has subcommands (COMMAND): dispatch resolves
    ``COMMAND DOCS`` to its subcommand, as for any container, and ``COMMAND`` to itself, so
    each counts in its own INFO commandstats line. ``key_flags`` is the key-spec flags
    string, or a tuple of them (see ``Command.key_flags``). ``acl`` names the ACL
    categories Redis's command table gives explicitly beyond the group's (``dangerous``,
    ``keyspace`` ...); those implied by the flags are added as Redis does (write, read,
    admin + dangerous, fast or else slow, blocking). ``tips`` are COMMAND INFO's tips and
    ``key_notes`` its key spec's notes. ``spec_last`` gives each per-position key spec
    its lastkey (see ``Command.spec_last``). ``group_acl=False`` leaves out the group's
    category (WAIT is documented under generic, yet is only @connection). ``protected``
    names the ``enable-*-command`` config that guards the command (DEBUG): its dispatch
    entry then always takes the dispatcher's checked path, so the guard costs the other
    commands nothing. ``history`` is COMMAND DOCS's list of (version, change) pairs.
    ``flag_acl=False`` derives no category from the flags (EVAL_RO is readonly, yet only
    @slow @scripting).
    """
    if keyword_keys or numkeys_keys:
        flags += " movablekeys"
    keyword, keyword_from, keyword_limit = keyword_keys or ("", 0, 0)
    flagset = frozenset(flags.split())
    cats = []
    if group in _GROUP_CATEGORIES and not container and group_acl:
        # A container is only @slow in Redis: its subcommands carry the group's category.
        cats.append(_GROUP_CATEGORIES[group])
    cats.extend(acl.split())
    for flag, implied in (("write", ("write",)), ("readonly", ("read",)),
                          ("admin", ("admin", "dangerous")), ("fast", ("fast",)),
                          ("blocking", ("blocking",)), ("pubsub", ("pubsub",))):
        if flag in flagset and flag_acl:
            cats.extend(implied)
    if "fast" not in cats:
        cats.append("slow")
    cats = list(dict.fromkeys(cats))

    def register(handler):
        cmd = Command(name=name.lower(), handler=handler, arity=arity, flags=flagset,
                      first_key=keys[0], last_key=keys[1], step=keys[2],
                      key_keyword=keyword, keyword_from=keyword_from,
                      keyword_limit=keyword_limit, key_numkeys=tuple(numkeys_keys),
                      key_flags=(key_flags,) if isinstance(key_flags, str) else key_flags,
                      group=group,
                      since=since, summary=summary, complexity=complexity,
                      arguments=tuple(args), categories=tuple(cats),
                      tips=tuple(tips.split()), key_notes=key_notes, spec_last=spec_last,
                      doc_flags=("deprecated",) + doc_flags if deprecated else doc_flags,
                      deprecated_since=deprecated[0] if deprecated else "",
                      replaced_by=deprecated[1] if deprecated else "",
                      history=tuple(history), protected=protected)
        if "|" in cmd.name:
            parent_name, sub = cmd.name.split("|", 1)
            parent = TABLE[parent_name.encode()]
            cmd.parent = parent
            parent.subcommands[sub.encode()] = cmd
        else:
            TABLE[cmd.name.encode()] = cmd
            entry = replace(cmd, handler=None, bare=cmd) if alone or protected else cmd
            DISPATCH[cmd.name.encode()] = DISPATCH[cmd.name.upper().encode()] = entry
        if pure:
            # A run matches requests by their first argument, which names a container,
            # not its subcommand.
            assert cmd.parent is None, "subcommands cannot be pure"
            cmd.batch = pure_batch(cmd)
        return handler

    if container:
        register(None)
        return None
    return register


def help_command(container: str, group: str, since: str, lines,
                 summary="Returns helpful text about the different subcommands.") -> None:
    """Register ``<container> HELP``, which every container command has: Redis's help text,
    one simple string per line, with the flags and docs all HELP subcommands share."""
    text = [line.encode() if isinstance(line, str) else line for line in lines]

    def handler(ctx, argv):
        return [Simple(line) for line in text]

    handler.__doc__ = f"{container.upper()} HELP"
    handler.__name__ = handler.__qualname__ = f"{container.lower()}_help"
    command(f"{container.lower()}|help", 2, "loading stale", group=group, since=since,
            summary=summary, complexity="O(1)")(handler)


def batch_handler(name: str):
    """Attach a batch handler to the registered command ``name``.

    ``batch(ctx, requests, start, replies)`` is offered a read's requests when
    ``requests[start]`` (already resolved to this command, arity checked) has more requests
    after it. It runs ``requests[start]`` and as many of the following ones as it can treat
    in one go, appending each one's reply to ``replies`` as it completes; leaving
    ``replies`` empty hands ``requests[start]`` back to the plain handler. Each request it
    takes must end exactly as the plain handler would end it, so it stops before any
    request that could fail, block or wake a client.
    """
    def attach(fn):
        TABLE[name.lower().encode()].batch = fn
        return fn
    return attach


def pure_batch(cmd: Command) -> Callable:
    """The batch handler of a ``pure`` command: the requests from ``start`` that name it
    as the first did, with a valid argument count, each run by the plain handler. The
    dispatcher's per-request bookkeeping is done once for the run. The run ends before a
    request that raises (the plain path runs it again and reports its error: a pure
    handler that raised changed nothing). Clients woken by a lazy expiry in the run are
    served when it ends (``Server._run_batch``): the pure requests after the deletion
    cannot change what they find."""
    def batch(ctx, requests: list, start: int, replies: list) -> None:
        handler, arity = cmd.handler, cmd.arity
        name = requests[start][0]
        put = replies.append
        for i in range(start, len(requests)):
            argv = requests[i]
            # Command.arity_ok, inlined as in the dispatcher's loop: a call per request.
            if argv[0] != name or ((len(argv) != arity) if arity > 0 else (len(argv) < -arity)):
                break
            try:
                put(handler(ctx, argv))
            except Exception:
                break

    return batch


def every_command():
    """Each registered command, each container followed by its subcommands (every one has
    its own stats, a container's counting the calls refused for its arity)."""
    for cmd in TABLE.values():
        yield cmd
        yield from cmd.subcommands.values()


def lookup(argv: list[bytes]) -> "Command | None":
    """The top-level command for ``argv`` (subcommands are resolved by the dispatcher)."""
    return TABLE.get(argv[0].lower())
