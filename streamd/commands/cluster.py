"""CLUSTER, READONLY, READWRITE and ASKING, as Redis answers them with cluster-enabled no.

streamd has no cluster mode, so it answers as Redis 8.8 does with cluster support disabled:
every one of these commands is in the table with Redis's metadata (COMMAND INFO/DOCS, ACL
categories), and each answers Redis's cluster-disabled error. As in Redis, the dispatcher
checks the arity and the subcommand first: ``CLUSTER FOO`` gets the unknown-subcommand
error and ``CLUSTER KEYSLOT`` the arity error; CLUSTER HELP answers the cluster-disabled
error too.

The metadata is Redis 8.8's (``src/commands/cluster*.json``): 8.2 added SLOT-STATS, 8.4
the atomic slot migration commands MIGRATION and SYNCSLOTS (internal, between nodes).
None of these commands has key specs (KEYSLOT's ``key`` is a plain string).
"""

from __future__ import annotations

from . import errors as E
from .errors import CommandError
from .table import block, command, integer, oneof, string, token

_ADMIN = "admin stale no_async_loading"  # the flags of most subcommands that change the node
_NONDET = "nondeterministic_output"  # COMMAND INFO's tip


def _refused(name: str, arity: int, flags: str, syntax: str, **docs) -> None:
    """Register the row ``name`` with a handler that answers the cluster-disabled error;
    ``syntax``, the command's syntax line, is the handler's docstring."""
    def handler(ctx, argv):
        raise CommandError(E.CLUSTER_DISABLED)

    handler.__doc__ = syntax
    handler.__name__ = handler.__qualname__ = name.replace("|", "_").replace("-", "_")
    command(name, arity, flags, group="cluster", **docs)(handler)


def _slot_range(name: str, **kw):
    return block(name, integer("start-slot"), integer("end-slot"), **kw)


_NODE_ID = (string("node-id"),)
_RANGES_COMPLEXITY = ("O(N) where N is the total number of the slots between the start slot "
                      "and end slot arguments.")

command("cluster", -2, group="cluster", since="3.0.0",
        summary="A container for Redis Cluster commands.",
        complexity="Depends on subcommand.", container=True)

# ADDSLOTS, ADDSLOTSRANGE, DELSLOTS and DELSLOTSRANGE: one pair of rows for each verb.
for _verb, _summary in (("ADD", "Assigns new hash {} to a node."),
                        ("DEL", "Sets hash {} as unbound for a node.")):
    _refused(f"cluster|{_verb.lower()}slots", -3, _ADMIN,
             f"CLUSTER {_verb}SLOTS slot [slot ...]",
             since="3.0.0", summary=_summary.format("slots"),
             complexity="O(N) where N is the total number of hash slot arguments",
             args=(integer("slot", multiple=True),))
    _refused(f"cluster|{_verb.lower()}slotsrange", -4, _ADMIN,
             f"CLUSTER {_verb}SLOTSRANGE start-slot end-slot [start-slot end-slot ...]",
             since="7.0.0", summary=_summary.format("slot ranges"),
             complexity=_RANGES_COMPLEXITY, args=(_slot_range("range", multiple=True),))

_refused("cluster|bumpepoch", 2, _ADMIN, "CLUSTER BUMPEPOCH", tips=_NONDET,
         since="3.0.0", summary="Advances the cluster config epoch.", complexity="O(1)")
_refused("cluster|count-failure-reports", 3, "admin stale",
         "CLUSTER COUNT-FAILURE-REPORTS node-id", tips=_NONDET, since="3.0.0",
         summary="Returns the number of active failure reports active for a node.",
         complexity="O(N) where N is the number of failure reports", args=_NODE_ID)
_refused("cluster|countkeysinslot", 3, "stale", "CLUSTER COUNTKEYSINSLOT slot",
         since="3.0.0", summary="Returns the number of keys in a hash slot.",
         complexity="O(1)", args=(integer("slot"),))
_refused("cluster|failover", -2, _ADMIN, "CLUSTER FAILOVER [FORCE | TAKEOVER]",
         since="3.0.0", summary="Forces a replica to perform a manual failover of its master.",
         complexity="O(1)",
         args=(oneof("options", token("FORCE"), token("TAKEOVER"), optional=True),))
_refused("cluster|flushslots", 2, _ADMIN, "CLUSTER FLUSHSLOTS",
         since="3.0.0", summary="Deletes all slots information from a node.",
         complexity="O(1)")
_refused("cluster|forget", 3, _ADMIN, "CLUSTER FORGET node-id",
         since="3.0.0", summary="Removes a node from the nodes table.", complexity="O(1)",
         args=_NODE_ID)
_refused("cluster|getkeysinslot", 4, "stale", "CLUSTER GETKEYSINSLOT slot count",
         tips=_NONDET, since="3.0.0", summary="Returns the key names in a hash slot.",
         complexity="O(N) where N is the number of requested keys",
         args=(integer("slot"), integer("count")))
# With cluster support disabled HELP too answers the error (Redis checks before parsing).
_refused("cluster|help", 2, "loading stale", "CLUSTER HELP",
         since="5.0.0", summary="Returns helpful text about the different subcommands.",
         complexity="O(1)")
_refused("cluster|info", 2, "stale", "CLUSTER INFO", tips=_NONDET,
         since="3.0.0", summary="Returns information about the state of a node.",
         complexity="O(1)")
_refused("cluster|keyslot", 3, "stale", "CLUSTER KEYSLOT key",
         since="3.0.0", summary="Returns the hash slot for a key.",
         complexity="O(N) where N is the number of bytes in the key",
         args=(string("key"),))
_refused("cluster|links", 2, "stale", "CLUSTER LINKS", tips=_NONDET,
         since="7.0.0", summary="Returns a list of all TCP links to and from peer nodes.",
         complexity="O(N) where N is the total number of Cluster nodes")
_refused("cluster|meet", -4, _ADMIN, "CLUSTER MEET ip port [cluster-bus-port]",
         since="3.0.0", summary="Forces a node to handshake with another node.",
         complexity="O(1)",
         history=(("4.0.0", "Added the optional `cluster_bus_port` argument."),),
         args=(string("ip"), integer("port"),
               integer("cluster-bus-port", since="4.0.0", optional=True)))
_refused("cluster|migration", -4, _ADMIN,
         "CLUSTER MIGRATION <IMPORT start-slot end-slot [start-slot end-slot ...] | "
         "CANCEL <ID task-id | ALL> | STATUS <[ID task-id] | [ALL]>>",
         since="8.4.0", summary="Start, monitor and cancel slot migration.",
         complexity=_RANGES_COMPLEXITY,
         args=(oneof("subcommand",
                     _slot_range("import", token="IMPORT", multiple=True),
                     oneof("cancel", string("task-id", token="ID"), token("ALL"),
                           token="CANCEL"),
                     oneof("status", string("task-id", token="ID", optional=True),
                           token("ALL", optional=True), token="STATUS")),))
_refused("cluster|myid", 2, "stale", "CLUSTER MYID",
         since="3.0.0", summary="Returns the ID of a node.", complexity="O(1)")
_refused("cluster|myshardid", 2, "stale", "CLUSTER MYSHARDID", tips=_NONDET,
         since="7.2.0", summary="Returns the shard ID of a node.", complexity="O(1)")
_refused("cluster|nodes", 2, "stale", "CLUSTER NODES", tips=_NONDET,
         since="3.0.0", summary="Returns the cluster configuration for a node.",
         complexity="O(N) where N is the total number of Cluster nodes")
_refused("cluster|replicas", 3, "admin stale", "CLUSTER REPLICAS node-id", tips=_NONDET,
         since="5.0.0", summary="Lists the replica nodes of a master node.",
         complexity="O(N) where N is the number of replicas.", args=_NODE_ID)
_refused("cluster|replicate", 3, _ADMIN, "CLUSTER REPLICATE node-id",
         since="3.0.0", summary="Configure a node as replica of a master node.",
         complexity="O(1)", args=_NODE_ID)
_refused("cluster|reset", -2, "admin noscript stale", "CLUSTER RESET [HARD | SOFT]",
         since="3.0.0", summary="Resets a node.",
         complexity=("O(N) where N is the number of known nodes. The command may execute a "
                     "FLUSHALL as a side effect."),
         args=(oneof("reset-type", token("HARD"), token("SOFT"), optional=True),))
_refused("cluster|saveconfig", 2, _ADMIN, "CLUSTER SAVECONFIG",
         since="3.0.0", summary="Forces a node to save the cluster configuration to disk.",
         complexity="O(1)")
_refused("cluster|set-config-epoch", 3, _ADMIN, "CLUSTER SET-CONFIG-EPOCH config-epoch",
         since="3.0.0", summary="Sets the configuration epoch for a new node.",
         complexity="O(1)", args=(integer("config-epoch"),))
_refused("cluster|setslot", -4, _ADMIN,
         "CLUSTER SETSLOT slot <IMPORTING node-id | MIGRATING node-id | NODE node-id | "
         "STABLE>",
         since="3.0.0", summary="Binds a hash slot to a node.", complexity="O(1)",
         args=(integer("slot"),
               oneof("subcommand",
                     string("importing", token="IMPORTING", display="node-id"),
                     string("migrating", token="MIGRATING", display="node-id"),
                     string("node", token="NODE", display="node-id"),
                     token("STABLE"))))
_refused("cluster|shards", 2, "loading stale", "CLUSTER SHARDS", tips=_NONDET,
         since="7.0.0", summary="Returns the mapping of cluster slots to shards.",
         complexity="O(N) where N is the total number of cluster nodes")
_refused("cluster|slaves", 3, "admin stale", "CLUSTER SLAVES node-id", tips=_NONDET,
         since="3.0.0", summary="Lists the replica nodes of a master node.",
         complexity="O(N) where N is the number of replicas.", args=_NODE_ID,
         deprecated=("5.0.0", "`CLUSTER REPLICAS`"))
_refused("cluster|slot-stats", -4, "loading stale",
         "CLUSTER SLOT-STATS <SLOTSRANGE start-slot end-slot | ORDERBY metric [LIMIT limit] "
         "[ASC | DESC]>",
         tips=f"{_NONDET} request_policy:all_shards", since="8.2.0",
         summary=("Return an array of slot usage statistics for slots assigned to the "
                  "current node."),
         complexity=("O(N) where N is the total number of slots based on arguments. "
                     "O(N*log(N)) with ORDERBY subcommand."),
         args=(oneof("filter",
                     _slot_range("slotsrange", token="SLOTSRANGE"),
                     block("orderby", string("metric"),
                           integer("limit", token="LIMIT", optional=True),
                           oneof("order", token("ASC"), token("DESC"), optional=True),
                           token="ORDERBY")),))
_refused("cluster|slots", 2, "loading stale", "CLUSTER SLOTS", tips=_NONDET,
         since="3.0.0", summary="Returns the mapping of cluster slots to nodes.",
         complexity="O(N) where N is the total number of Cluster nodes",
         deprecated=("7.0.0", "`CLUSTER SHARDS`"),
         history=(("4.0.0", "Added node IDs."),
                  ("7.0.0", "Added additional networking metadata field.")))
_refused("cluster|syncslots", -3, _ADMIN,
         "CLUSTER SYNCSLOTS <SYNC task-id start-slot end-slot [start-slot end-slot ...] | "
         "RDBCHANNEL task-id | SNAPSHOT-EOF | STREAM-EOF | ACK state offset | FAIL error | "
         "CONF option [option ...] value [value ...]>",
         tips=_NONDET, since="8.4.0",
         summary="Internal command for atomic slot migration protocol between cluster nodes.",
         complexity="O(1)",
         args=(oneof("subcommand",
                     block("sync", string("task-id"),
                           _slot_range("slot-range", multiple=True), token="SYNC"),
                     string("task-id", token="RDBCHANNEL"),
                     token("SNAPSHOT-EOF"), token("STREAM-EOF"),
                     block("ack", string("state"), integer("offset"), token="ACK"),
                     string("error", token="FAIL"),
                     block("conf", string("option", multiple=True),
                           string("value", multiple=True), token="CONF")),))

# The connection's cluster modes: @connection beside the @fast their flag implies.
_refused("readonly", 1, "loading stale fast", "READONLY", acl="connection",
         since="3.0.0", complexity="O(1)",
         summary=("Enables read-only queries for a connection to a Redis Cluster replica "
                  "node."))
# "Reids" as Redis 8.8 spells it (corrected upstream after 8.8, redis/redis#14805).
_refused("readwrite", 1, "loading stale fast", "READWRITE", acl="connection",
         since="3.0.0", complexity="O(1)",
         summary=("Enables read-write queries for a connection to a Reids Cluster replica "
                  "node."))
_refused("asking", 1, "fast", "ASKING", acl="connection",
         since="3.0.0", complexity="O(1)",
         summary="Signals that a cluster client is following an -ASK redirect.")
