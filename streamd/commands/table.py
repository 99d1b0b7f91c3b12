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
    display: str | None = None
    key_spec_index: int | None = None
    arguments: tuple["Arg", ...] = ()

    def doc(self):
        out = [("name", self.name), ("type", self.type)]
        if self.display or self.type not in ("oneof", "block", "pure-token"):
            out.append(("display_text", self.display or self.name))
        if self.key_spec_index is not None:
            out.append(("key_spec_index", self.key_spec_index))
        if self.token:
            out.append(("token", self.token))
        if self.since:
            out.append(("since", self.since))
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
    group: str = "generic"
    since: str = "1.0.0"
    summary: str = ""
    complexity: str = ""
    arguments: tuple = ()
    categories: tuple = ()
    doc_flags: tuple = ()
    # A deprecated command's docs name the version that deprecated it and its replacement.
    deprecated_since: str = ""
    replaced_by: str = ""
    subcommands: dict = field(default_factory=dict)
    parent: "Command | None" = None
    # A container dispatch resolves without a subcommand argument: the command itself
    # (COMMAND, which has subcommands and also runs alone; see ``command(alone=True)``).
    bare: "Command | None" = None
    # Optional ``batch(ctx, requests, start, replies)``: runs the consecutive requests
    # from ``start`` that it can take as one unit (see ``batch_handler``).
    batch: Callable | None = None
    # statistics for INFO commandstats
    calls: int = 0
    usec: int = 0
    failed_calls: int = 0
    rejected_calls: int = 0

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
        if self.key_keyword:
            word = self.key_keyword.encode()
            for i in range(self.keyword_from, len(argv)):
                if argv[i].upper() == word:
                    rest = len(argv) - i - 1
                    return argv[i + 1:i + 1 + rest // self.keyword_limit]
            return []
        return [argv[i] for i in self.key_indexes(len(argv)) if i < len(argv)]

    # --- COMMAND INFO / DOCS -------------------------------------------------------------
    def info(self):
        cats = [f"@{c}" for c in self.categories]
        subs = [c.info() for c in self.subcommands.values()]
        specs = []
        if self.key_keyword:
            # Both XREAD and XREADGROUP read their streams (a group is not the key's data).
            specs = [[
                "flags", ["RO", "access"],
                "begin_search", ["type", "keyword", "spec",
                                 ["keyword", self.key_keyword, "startfrom", self.keyword_from]],
                "find_keys", ["type", "range", "spec",
                              ["lastkey", -1, "keystep", 1, "limit", self.keyword_limit]],
            ]]
        elif self.first_key:
            specs = [[
                "flags", [self._key_access()],
                "begin_search", ["type", "index", "spec", ["index", self.first_key]],
                "find_keys", ["type", "range", "spec",
                              ["lastkey", self.last_key - self.first_key if self.last_key >= 0
                               else self.last_key, "keystep", self.step or 1, "limit", 0]],
            ]]
        return [self.name.encode(), self.arity, [f.encode() for f in sorted(self.flags)],
                self.first_key, self.last_key, self.step, cats, [], specs, subs]

    def _key_access(self) -> str:
        return "RW" if "write" in self.flags else "RO"

    def docs(self):
        out = [("summary", self.summary), ("since", self.since), ("group", self.group)]
        if self.complexity:
            out.append(("complexity", self.complexity))
        if self.doc_flags:
            out.append(("doc_flags", list(self.doc_flags)))
        if self.deprecated_since:
            out.append(("deprecated_since", self.deprecated_since))
            out.append(("replaced_by", self.replaced_by))
        if self.arguments:
            out.append(("arguments", [a.doc() for a in self.arguments]))
        if self.subcommands:
            out.append(("subcommands", [(c.name, c.docs()) for c in self.subcommands.values()]))
        return out


_GROUP_CATEGORIES = {
    "stream": "stream", "string": "string", "hash": "hash", "generic": "keyspace",
    "connection": "connection", "server": "admin", "transactions": "transaction",
}


def command(name: str, arity: int, flags: str = "", keys: tuple = (0, 0, 0), *,
            group: str = "generic", since: str = "1.0.0", summary: str = "",
            complexity: str = "", args: tuple = (), container: bool = False,
            doc_flags: tuple = (), keyword_keys: tuple = (), pure: bool = False,
            deprecated: tuple = (), alone: bool = False):
    """Register a command (or, with ``container=True``, a container of subcommands).

    Used as a decorator on the handler ``handler(ctx, argv) -> reply``; a container is
    registered by calling it without a handler. ``keys`` is (first, last, step);
    ``keyword_keys`` is (keyword, search start, limit) for keys that follow a keyword,
    which makes the command ``movablekeys``. ``pure`` marks a handler whose only effects
    are its reply and lazy expiry (no write, no blocking, no client state): a pipelined run
    of it is taken by one loop (``pure_batch``). ``deprecated`` is (deprecated since,
    replaced by), as Redis's command docs give them; it adds the ``deprecated`` doc flag.
    ``alone`` marks a command that also has subcommands (COMMAND): dispatch resolves
    ``COMMAND DOCS`` to its subcommand, as for any container, and ``COMMAND`` to itself, so
    each counts in its own INFO commandstats line.
    """
    if keyword_keys:
        flags += " movablekeys"
    keyword, keyword_from, keyword_limit = keyword_keys or ("", 0, 0)
    flagset = frozenset(flags.split())
    cats = []
    if "write" in flagset:
        cats.append("write")
    if "readonly" in flagset:
        cats.append("read")
    if "fast" in flagset:
        cats.append("fast")
    else:
        cats.append("slow")
    if "blocking" in flagset:
        cats.append("blocking")
    if group in _GROUP_CATEGORIES:
        cats.insert(0, _GROUP_CATEGORIES[group])

    def register(handler):
        cmd = Command(name=name.lower(), handler=handler, arity=arity, flags=flagset,
                      first_key=keys[0], last_key=keys[1], step=keys[2],
                      key_keyword=keyword, keyword_from=keyword_from,
                      keyword_limit=keyword_limit, group=group,
                      since=since, summary=summary, complexity=complexity,
                      arguments=tuple(args), categories=tuple(cats),
                      doc_flags=("deprecated",) + doc_flags if deprecated else doc_flags,
                      deprecated_since=deprecated[0] if deprecated else "",
                      replaced_by=deprecated[1] if deprecated else "")
        if "|" in cmd.name:
            parent_name, sub = cmd.name.split("|", 1)
            parent = TABLE[parent_name.encode()]
            cmd.parent = parent
            parent.subcommands[sub.encode()] = cmd
        else:
            TABLE[cmd.name.encode()] = cmd
            entry = replace(cmd, handler=None, bare=cmd) if alone else cmd
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


def lookup(argv: list[bytes]) -> "Command | None":
    """The top-level command for ``argv`` (subcommands are resolved by the dispatcher)."""
    return TABLE.get(argv[0].lower())
