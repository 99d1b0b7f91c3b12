"""CLUSTER, READONLY, READWRITE and ASKING on a server with cluster support disabled.

Replies recorded from redis-server 7.0.15 (cluster-enabled no); the tests also run against
a real Redis (``--redis-url``). Every one of these commands answers the cluster-disabled
error once the dispatcher's checks pass: an unknown subcommand and a wrong argument count
are refused first, as by any command. The metadata tests compare what 7.0 has as 8.8 keeps
it; the subcommands and metadata 7.0 lacks carry ``min_redis``.
"""

from __future__ import annotations

import pytest
import redis

from tests.conftest import encode_request as enc

DISABLED = b"-ERR This instance has cluster support disabled\r\n"


def _arity_error(name: str) -> bytes:
    return b"-ERR wrong number of arguments for '%s' command\r\n" % name.encode()


def _since(version: str, *args):
    return pytest.param(*args, marks=pytest.mark.min_redis(version))


# --- Replies ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ("CLUSTER", "INFO"), ("cluster", "nodes"), ("CLUSTER", "SLOTS"), ("CLUSTER", "SHARDS"),
    ("CLUSTER", "MYID"), ("CLUSTER", "LINKS"), ("Cluster", "Help"),
    ("CLUSTER", "KEYSLOT", "somekey"), ("CLUSTER", "COUNTKEYSINSLOT", "1"),
    ("CLUSTER", "GETKEYSINSLOT", "1", "10"), ("CLUSTER", "ADDSLOTS", "1", "2"),
    ("CLUSTER", "ADDSLOTSRANGE", "1", "2"), ("CLUSTER", "DELSLOTS", "x"),
    ("CLUSTER", "SETSLOT", "1", "STABLE"), ("CLUSTER", "MEET", "127.0.0.1", "7000"),
    ("CLUSTER", "RESET", "HARD"), ("CLUSTER", "FAILOVER"), ("CLUSTER", "REPLICAS", "id"),
    ("CLUSTER", "SLAVES", "id"), ("CLUSTER", "COUNT-FAILURE-REPORTS", "id"),
    ("CLUSTER", "SET-CONFIG-EPOCH", "nonumber"), ("CLUSTER", "FLUSHSLOTS"),
    ("READONLY",), ("readwrite",), ("ASKING",),
    _since("7.2", ("CLUSTER", "MYSHARDID")),
    _since("8.2", ("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "10")),
    _since("8.4", ("CLUSTER", "MIGRATION", "STATUS", "ALL")),
    _since("8.4", ("CLUSTER", "SYNCSLOTS", "CONF", "k", "v")),
])
def test_answers_cluster_support_disabled(wire, argv):
    assert wire(*argv) == DISABLED
    assert wire.resp3(*argv) == DISABLED


def test_unknown_subcommand_is_refused_before(wire):
    assert wire("CLUSTER", "FOO") == b"-ERR unknown subcommand 'FOO'. Try CLUSTER HELP.\r\n"
    assert wire("cluster", "nosuch", "x") == (
        b"-ERR unknown subcommand 'nosuch'. Try CLUSTER HELP.\r\n")


@pytest.mark.parametrize("argv, name", [
    (("CLUSTER",), "cluster"),
    (("CLUSTER", "KEYSLOT"), "cluster|keyslot"),
    (("CLUSTER", "KEYSLOT", "a", "b"), "cluster|keyslot"),
    (("CLUSTER", "HELP", "x"), "cluster|help"),
    (("CLUSTER", "INFO", "x"), "cluster|info"),
    (("CLUSTER", "ADDSLOTS"), "cluster|addslots"),
    (("CLUSTER", "GETKEYSINSLOT", "1"), "cluster|getkeysinslot"),
    (("CLUSTER", "SETSLOT", "1"), "cluster|setslot"),
    (("READONLY", "x"), "readonly"),
    (("READWRITE", "x"), "readwrite"),
    (("ASKING", "x"), "asking"),
    _since("8.2", ("CLUSTER", "SLOT-STATS", "SLOTSRANGE"), "cluster|slot-stats"),
    _since("8.4", ("CLUSTER", "MIGRATION", "IMPORT"), "cluster|migration"),
    _since("8.4", ("CLUSTER", "SYNCSLOTS"), "cluster|syncslots"),
])
def test_arity_is_checked_before(wire, argv, name):
    assert wire(*argv) == _arity_error(name)


def test_inside_multi_the_error_is_execs(raw):
    c = raw()
    c.send(enc("MULTI") + enc("CLUSTER", "INFO") + enc("READONLY") + enc("EXEC"))
    assert [c.read_reply() for _ in range(4)] == [
        b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n", b"*2\r\n" + DISABLED + DISABLED]
    c.send(enc("MULTI") + enc("CLUSTER", "KEYSLOT") + enc("EXEC"))
    assert [c.read_reply() for _ in range(3)] == [
        b"+OK\r\n", _arity_error("cluster|keyslot"),
        b"-EXECABORT Transaction discarded because of previous errors.\r\n"]


def test_scripts_get_the_error_and_reset_is_noscript(call):
    with pytest.raises(redis.ResponseError,
                       match="^This instance has cluster support disabled script: "):
        call("EVAL", "return redis.call('cluster', 'info')", "0")
    with pytest.raises(redis.ResponseError,
                       match="^This Redis command is not allowed from script"):
        call("EVAL", "return redis.pcall('cluster', 'reset')", "0")


def test_commandstats_count_failed_and_rejected_calls(r, wire):
    r.config_resetstat()
    wire("CLUSTER", "INFO")
    wire("CLUSTER", "KEYSLOT")
    wire("READONLY")
    wire("CLUSTER", "FOO")  # no command found: no line counts it
    stats = r.info("commandstats")
    assert {k: (v["calls"], v["rejected_calls"], v["failed_calls"])
            for k, v in stats.items() if "cluster" in k or "readonly" in k} == {
        "cmdstat_cluster|info": (1, 0, 1),
        "cmdstat_cluster|keyslot": (0, 1, 0),
        "cmdstat_readonly": (1, 0, 1),
    }
    assert r.info("errorstats")["errorstat_ERR"]["count"] == 4


# --- COMMAND INFO -------------------------------------------------------------------------

_ADMIN_FLAGS = [b"admin", b"stale", b"no_async_loading"]
_ADMIN_CATS = [b"@admin", b"@slow", b"@dangerous"]
_NONDET = [b"nondeterministic_output"]

# (name, arity, flags, categories, tips) as Redis 7.0.15 replies them.
INFO = [
    ("cluster", -2, [], [b"@slow"], []),
    ("cluster|addslots", -3, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|addslotsrange", -4, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|bumpepoch", 2, _ADMIN_FLAGS, _ADMIN_CATS, _NONDET),
    ("cluster|count-failure-reports", 3, [b"admin", b"stale"], _ADMIN_CATS, _NONDET),
    ("cluster|countkeysinslot", 3, [b"stale"], [b"@slow"], []),
    ("cluster|delslots", -3, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|delslotsrange", -4, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|failover", -2, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|flushslots", 2, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|forget", 3, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|getkeysinslot", 4, [b"stale"], [b"@slow"], _NONDET),
    ("cluster|help", 2, [b"loading", b"stale"], [b"@slow"], []),
    ("cluster|info", 2, [b"stale"], [b"@slow"], _NONDET),
    ("cluster|keyslot", 3, [b"stale"], [b"@slow"], []),
    ("cluster|links", 2, [b"stale"], [b"@slow"], _NONDET),
    ("cluster|meet", -4, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|myid", 2, [b"stale"], [b"@slow"], []),
    ("cluster|nodes", 2, [b"stale"], [b"@slow"], _NONDET),
    ("cluster|replicas", 3, [b"admin", b"stale"], _ADMIN_CATS, _NONDET),
    ("cluster|replicate", 3, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|reset", -2, [b"admin", b"noscript", b"stale"], _ADMIN_CATS, []),
    ("cluster|saveconfig", 2, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|set-config-epoch", 3, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|setslot", -4, _ADMIN_FLAGS, _ADMIN_CATS, []),
    ("cluster|slaves", 3, [b"admin", b"stale"], _ADMIN_CATS, _NONDET),
    ("readonly", 1, [b"loading", b"stale", b"fast"], [b"@fast", b"@connection"], []),
    ("readwrite", 1, [b"loading", b"stale", b"fast"], [b"@fast", b"@connection"], []),
    ("asking", 1, [b"fast"], [b"@fast", b"@connection"], []),
    # Later versions: SHARDS and SLOTS also run while loading (7.0 has them "stale" only).
    _since("8.0", "cluster|shards", 2, [b"loading", b"stale"], [b"@slow"], _NONDET),
    _since("8.0", "cluster|slots", 2, [b"loading", b"stale"], [b"@slow"], _NONDET),
    _since("7.2", "cluster|myshardid", 2, [b"stale"], [b"@slow"], _NONDET),
    _since("8.2", "cluster|slot-stats", -4, [b"loading", b"stale"], [b"@slow"],
           _NONDET + [b"request_policy:all_shards"]),
    _since("8.4", "cluster|migration", -4, _ADMIN_FLAGS, _ADMIN_CATS, []),
    _since("8.4", "cluster|syncslots", -3, _ADMIN_FLAGS, _ADMIN_CATS, _NONDET),
]


@pytest.mark.parametrize("name, arity, flags, categories, tips", INFO,
                         ids=[getattr(p, "values", p)[0] for p in INFO])
def test_command_info(call, name, arity, flags, categories, tips):
    [info] = call("COMMAND", "INFO", name)
    # No key specs: KEYSLOT's and GETKEYSINSLOT's arguments are no keys.
    assert info[:9] == [name.encode(), arity, flags, 0, 0, 0, categories, tips, []]


# Every subcommand Redis 7.0.15 has, and those added since.
SUBCOMMANDS_7_0 = {
    "addslots", "addslotsrange", "bumpepoch", "count-failure-reports", "countkeysinslot",
    "delslots", "delslotsrange", "failover", "flushslots", "forget", "getkeysinslot", "help",
    "info", "keyslot", "links", "meet", "myid", "nodes", "replicas", "replicate", "reset",
    "saveconfig", "set-config-epoch", "setslot", "shards", "slaves", "slots"}
SUBCOMMANDS_8_4 = SUBCOMMANDS_7_0 | {"myshardid", "slot-stats", "migration", "syncslots"}


def _subcommands(call) -> set:
    [info] = call("COMMAND", "INFO", "cluster")
    return {row[0].decode().split("|", 1)[1] for row in info[9]}


def test_cluster_lists_its_subcommands(call):
    assert SUBCOMMANDS_7_0 <= _subcommands(call)
    listed = call("COMMAND", "LIST", "FILTERBY", "PATTERN", "cluster|*")
    assert SUBCOMMANDS_7_0 <= {n.decode().split("|", 1)[1] for n in listed}


@pytest.mark.min_redis("8.4")
def test_cluster_has_every_subcommand_of_redis_8_4(call):
    assert _subcommands(call) == SUBCOMMANDS_8_4


def test_command_count_and_list_include_them(call):
    names = set(call("COMMAND", "LIST"))
    assert {b"cluster", b"readonly", b"readwrite", b"asking", b"cluster|info"} <= names
    top = {n for n in names if b"|" not in n}
    assert call("COMMAND", "COUNT") == len(top) == len(call("COMMAND", "INFO"))
    assert len(call.resp3("COMMAND", "DOCS")) == len(top)


def test_acl_categories_list_them(call):
    connection = set(call("ACL", "CAT", "connection"))
    assert {b"readonly", b"readwrite", b"asking"} <= connection
    dangerous = set(call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "dangerous"))
    assert {b"cluster|reset", b"cluster|meet", b"cluster|slaves"} <= dangerous
    assert b"cluster|info" not in dangerous and b"cluster" not in dangerous


def test_no_key_arguments(wire):
    error = b"-ERR The command has no key arguments\r\n"
    assert wire("COMMAND", "GETKEYS", "CLUSTER", "KEYSLOT", "foo") == error
    assert wire("COMMAND", "GETKEYS", "CLUSTER", "GETKEYSINSLOT", "1", "2") == error


# --- COMMAND DOCS -------------------------------------------------------------------------

def _docs(call, name: str) -> dict:
    return call.resp3("COMMAND", "DOCS", name)[name.encode()]


def test_docs_of_the_deprecated_subcommands(call):
    slaves = _docs(call, "cluster|slaves")
    assert (slaves[b"since"], slaves[b"group"], slaves[b"doc_flags"],
            slaves[b"deprecated_since"], slaves[b"replaced_by"]) == (
        b"3.0.0", b"cluster", [b"deprecated"], b"5.0.0", b"`CLUSTER REPLICAS`")
    slots = _docs(call, "cluster|slots")
    assert (slots[b"since"], slots[b"doc_flags"], slots[b"deprecated_since"],
            slots[b"replaced_by"]) == (b"3.0.0", [b"deprecated"], b"7.0.0", b"`CLUSTER SHARDS`")
    assert [list(h) for h in slots[b"history"]] == [
        [b"4.0.0", b"Added node IDs."],
        [b"7.0.0", b"Added additional networking metadata field."]]
    assert b"doc_flags" not in _docs(call, "cluster|replicas")


@pytest.mark.parametrize("name, since, complexity", [
    ("cluster", b"3.0.0", b"Depends on subcommand."),
    ("cluster|addslotsrange", b"7.0.0", b"O(N) where N is the total number of the slots "
                                        b"between the start slot and end slot arguments."),
    ("cluster|help", b"5.0.0", b"O(1)"),
    ("cluster|keyslot", b"3.0.0", b"O(N) where N is the number of bytes in the key"),
    ("cluster|links", b"7.0.0", b"O(N) where N is the total number of Cluster nodes"),
    ("readonly", b"3.0.0", b"O(1)"),
    ("asking", b"3.0.0", b"O(1)"),
    # Redis 7.0 gave REPLICAS (and SLAVES) O(1).
    _since("7.2", "cluster|replicas", b"5.0.0", b"O(N) where N is the number of replicas."),
    _since("7.2", "cluster|myshardid", b"7.2.0", b"O(1)"),
    _since("8.2", "cluster|slot-stats", b"8.2.0",
           b"O(N) where N is the total number of slots based on arguments. "
           b"O(N*log(N)) with ORDERBY subcommand."),
    _since("8.4", "cluster|migration", b"8.4.0",
           b"O(N) where N is the total number of the slots between the start slot and end "
           b"slot arguments."),
    _since("8.4", "cluster|syncslots", b"8.4.0", b"O(1)"),
])
def test_docs_since_group_and_complexity(call, name, since, complexity):
    doc = _docs(call, name)
    assert (doc[b"since"], doc[b"group"], doc[b"complexity"]) == (since, b"cluster", complexity)


def test_docs_arguments_as_redis_7_0_names_them(call):
    def shape(args):
        return [(a[b"name"], a[b"type"], a.get(b"token"), a.get(b"flags", []),
                 shape(a.get(b"arguments", []))) for a in args]

    assert shape(_docs(call, "cluster|keyslot")[b"arguments"]) == [
        (b"key", b"string", None, [], [])]
    assert shape(_docs(call, "cluster|getkeysinslot")[b"arguments"]) == [
        (b"slot", b"integer", None, [], []), (b"count", b"integer", None, [], [])]
    assert shape(_docs(call, "cluster|failover")[b"arguments"]) == [
        (b"options", b"oneof", None, [b"optional"],
         [(b"force", b"pure-token", b"FORCE", [], []),
          (b"takeover", b"pure-token", b"TAKEOVER", [], [])])]
    [slot, sub] = _docs(call, "cluster|setslot")[b"arguments"]
    assert [(a[b"type"], a[b"token"]) for a in sub[b"arguments"]] == [
        (b"string", b"IMPORTING"), (b"string", b"MIGRATING"), (b"string", b"NODE"),
        (b"pure-token", b"STABLE")]
    assert b"arguments" not in _docs(call, "readwrite")


@pytest.mark.min_redis("7.2")
def test_docs_summaries(call):
    # Redis 7.2 rewrote the summaries; 8.8 has these.
    assert {name: _docs(call, name)[b"summary"] for name in (
        "cluster", "cluster|info", "cluster|keyslot", "cluster|slaves", "readonly",
        "asking")} == {
        "cluster": b"A container for Redis Cluster commands.",
        "cluster|info": b"Returns information about the state of a node.",
        "cluster|keyslot": b"Returns the hash slot for a key.",
        "cluster|slaves": b"Lists the replica nodes of a master node.",
        "readonly": b"Enables read-only queries for a connection to a Redis Cluster replica "
                    b"node.",
        "asking": b"Signals that a cluster client is following an -ASK redirect.",
    }


@pytest.mark.min_redis("8.4")
def test_docs_of_migration(call):
    doc = _docs(call, "cluster|migration")
    assert doc[b"summary"] == b"Start, monitor and cancel slot migration."
    [sub] = doc[b"arguments"]
    assert (sub[b"name"], sub[b"type"]) == (b"subcommand", b"oneof")
    assert [(a[b"name"], a[b"type"], a[b"token"]) for a in sub[b"arguments"]] == [
        (b"import", b"block", b"IMPORT"), (b"cancel", b"oneof", b"CANCEL"),
        (b"status", b"oneof", b"STATUS")]
