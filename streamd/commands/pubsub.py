"""Pub/sub commands: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB.

The subscriptions themselves and the delivery of messages are the server's
(server/pubsub.py); these handlers parse, call it and shape the replies. Each
(un)subscription is confirmed by its own push message, carrying the client's count after
it: channels and patterns together, or shard channels alone.
"""

from __future__ import annotations

from ..protocol.replies import Push, Replies
from . import errors as E
from .errors import CommandError
from .table import command, help_command, pattern, string


def _count(ctx, kind: str) -> int:
    return len(ctx.shard_channels) if kind == "shard" else len(ctx.channels) + len(ctx.patterns)


def _subscribe(ctx, argv, kind: str, word: bytes):
    pubsub = ctx.server.pubsub
    replies = []
    for name in argv[1:]:
        pubsub.subscribe(ctx, kind, name)
        replies.append(Push([word, name, _count(ctx, kind)]))
    return Replies(replies)


def _unsubscribe(ctx, argv, kind: str, word: bytes, mine: dict):
    pubsub = ctx.server.pubsub
    # Without arguments: every subscription of the kind, oldest first.
    names = argv[1:] if len(argv) > 1 else list(mine)
    replies = []
    for name in names:
        pubsub.unsubscribe(ctx, kind, name)
        replies.append(Push([word, name, _count(ctx, kind)]))
    if not replies:  # nothing to leave: one confirmation naming no channel
        replies.append(Push([word, None, _count(ctx, kind)]))
    return Replies(replies)


@command("subscribe", -2, "pubsub noscript loading stale", group="pubsub", since="2.0.0",
         summary="Listens for messages published to channels.",
         complexity="O(N) where N is the number of channels to subscribe to.",
         args=(string("channel", multiple=True),))
def subscribe(ctx, argv):
    """SUBSCRIBE channel [channel ...]"""
    return _subscribe(ctx, argv, "channel", b"subscribe")


@command("unsubscribe", -1, "pubsub noscript loading stale", group="pubsub", since="2.0.0",
         summary="Stops listening to messages posted to channels.",
         complexity="O(N) where N is the number of clients already subscribed to a channel.",
         args=(string("channel", optional=True, multiple=True),))
def unsubscribe(ctx, argv):
    """UNSUBSCRIBE [channel [channel ...]]"""
    return _unsubscribe(ctx, argv, "channel", b"unsubscribe", ctx.channels)


@command("psubscribe", -2, "pubsub noscript loading stale", group="pubsub", since="2.0.0",
         summary="Listens for messages published to channels that match one or more patterns.",
         complexity="O(N) where N is the number of patterns the client is already "
                    "subscribed to.",
         args=(pattern("pattern", multiple=True),))
def psubscribe(ctx, argv):
    """PSUBSCRIBE pattern [pattern ...]"""
    return _subscribe(ctx, argv, "pattern", b"psubscribe")


@command("punsubscribe", -1, "pubsub noscript loading stale", group="pubsub", since="2.0.0",
         summary="Stops listening to messages published to channels that match one or more "
                 "patterns.",
         complexity="O(N+M) where N is the number of patterns the client is already "
                    "subscribed and M is the number of total patterns subscribed in the "
                    "system (by any client).",
         args=(pattern("pattern", optional=True, multiple=True),))
def punsubscribe(ctx, argv):
    """PUNSUBSCRIBE [pattern [pattern ...]]"""
    return _unsubscribe(ctx, argv, "pattern", b"punsubscribe", ctx.patterns)


@command("ssubscribe", -2, "pubsub noscript loading stale", keys=(1, -1, 1),
         key_flags="not_key", group="pubsub", since="7.0.0",
         summary="Listens for messages published to shard channels.",
         complexity="O(N) where N is the number of shard channels to subscribe to.",
         args=(string("shardchannel", multiple=True),))
def ssubscribe(ctx, argv):
    """SSUBSCRIBE shardchannel [shardchannel ...]"""
    return _subscribe(ctx, argv, "shard", b"ssubscribe")


@command("sunsubscribe", -1, "pubsub noscript loading stale", keys=(1, -1, 1),
         key_flags="not_key", group="pubsub", since="7.0.0",
         summary="Stops listening to messages posted to shard channels.",
         complexity="O(N) where N is the number of clients already subscribed to a shard "
                    "channel.",
         args=(string("shardchannel", optional=True, multiple=True),))
def sunsubscribe(ctx, argv):
    """SUNSUBSCRIBE [shardchannel [shardchannel ...]]"""
    return _unsubscribe(ctx, argv, "shard", b"sunsubscribe", ctx.shard_channels)


@command("publish", 3, "pubsub loading stale fast may_replicate", group="pubsub",
         since="2.0.0",
         summary="Posts a message to a channel.",
         complexity="O(N+M) where N is the number of clients subscribed to the receiving "
                    "channel and M is the total number of subscribed patterns (by any client).",
         args=(string("channel"), string("message")))
def publish(ctx, argv):
    """PUBLISH channel message"""
    return ctx.server.pubsub.publish(argv[1], argv[2])


@command("spublish", 3, "pubsub loading stale fast may_replicate", keys=(1, 1, 1),
         key_flags="not_key", group="pubsub", since="7.0.0",
         summary="Post a message to a shard channel",
         complexity="O(N) where N is the number of clients subscribed to the receiving shard "
                    "channel.",
         args=(string("shardchannel"), string("message")))
def spublish(ctx, argv):
    """SPUBLISH shardchannel message"""
    return ctx.server.pubsub.spublish(argv[1], argv[2])


def ping_subscribed(ctx, argv) -> list:
    """PING's reply to a RESP2 client with subscriptions: a ``pong`` array, as a message
    would arrive (the dispatcher answers PING this way in that state)."""
    if len(argv) > 2:
        raise CommandError(E.wrong_arity("ping"))
    return [b"pong", argv[1] if len(argv) == 2 else b""]


# Commands a RESP2 client may run while it holds subscriptions.
SUBSCRIBED_ALLOWED = frozenset({"ping", "subscribe", "ssubscribe", "psubscribe", "unsubscribe",
                                "sunsubscribe", "punsubscribe", "quit", "reset"})


# --- PUBSUB --------------------------------------------------------------------------------

command("pubsub", -2, "slow", group="pubsub", since="2.8.0",
        summary="A container for Pub/Sub commands.", complexity="Depends on subcommand.",
        container=True)


def _optional_pattern(ctx, argv):
    if len(argv) > 3:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "pubsub"))
    return argv[2] if len(argv) == 3 else None


@command("pubsub|channels", -2, "pubsub loading stale", group="pubsub", since="2.8.0",
         summary="Returns the active channels.",
         complexity="O(N) where N is the number of active channels, and assuming constant time "
                    "pattern matching (relatively short channels and patterns)",
         args=(pattern("pattern", optional=True),))
def pubsub_channels(ctx, argv):
    """PUBSUB CHANNELS [pattern]"""
    return ctx.server.pubsub.active("channel", _optional_pattern(ctx, argv))


@command("pubsub|numpat", 2, "pubsub loading stale", group="pubsub", since="2.8.0",
         summary="Returns a count of unique pattern subscriptions.", complexity="O(1)")
def pubsub_numpat(ctx, argv):
    """PUBSUB NUMPAT"""
    return len(ctx.server.pubsub.patterns)


def _numsub(ctx, argv, kind: str):
    pubsub = ctx.server.pubsub
    out = []
    for name in argv[2:]:
        out += [name, pubsub.count(kind, name)]
    return out


@command("pubsub|numsub", -2, "pubsub loading stale", group="pubsub", since="2.8.0",
         summary="Returns a count of subscribers to channels.",
         complexity="O(N) for the NUMSUB subcommand, where N is the number of requested channels",
         args=(string("channel", optional=True, multiple=True),))
def pubsub_numsub(ctx, argv):
    """PUBSUB NUMSUB [channel [channel ...]]"""
    return _numsub(ctx, argv, "channel")


@command("pubsub|shardchannels", -2, "pubsub loading stale", group="pubsub", since="7.0.0",
         summary="Returns the active shard channels.",
         complexity="O(N) where N is the number of active shard channels, and assuming constant "
                    "time pattern matching (relatively short shard channels).",
         args=(pattern("pattern", optional=True),))
def pubsub_shardchannels(ctx, argv):
    """PUBSUB SHARDCHANNELS [pattern]"""
    return ctx.server.pubsub.active("shard", _optional_pattern(ctx, argv))


@command("pubsub|shardnumsub", -2, "pubsub loading stale", group="pubsub", since="7.0.0",
         summary="Returns the count of subscribers of shard channels.",
         complexity="O(N) for the SHARDNUMSUB subcommand, where N is the number of requested "
                    "shard channels",
         args=(string("shardchannel", optional=True, multiple=True),))
def pubsub_shardnumsub(ctx, argv):
    """PUBSUB SHARDNUMSUB [shardchannel [shardchannel ...]]"""
    return _numsub(ctx, argv, "shard")


_PUBSUB_HELP = [
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Print this help.",
]


help_command("pubsub", "pubsub", "6.2.0", _PUBSUB_HELP)
