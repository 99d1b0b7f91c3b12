"""ACL: the read-only subcommands, answered for a server whose only user is ``default``
(on, allowed every command, key and channel; its password is ``requirepass``, or none).

Users cannot be created or changed: ACL SETUSER is refused beyond the no-op on
``default``, and ACL LOAD/SAVE answer as Redis does without an ``aclfile``.
"""

from __future__ import annotations

import hashlib
import secrets
import time

from ..protocol.replies import OK, Map, SetReply
from . import errors as E
from .args import parse_int
from .errors import CommandError
from .table import (ACL_CATEGORIES, TABLE, command, every_command, help_command, integer,
                    oneof, string, token)

_USER = b"default"
_NO_ACLFILE = (
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.")
_GENPASS_RANGE = ("ERR ACL GENPASS argument must be the number of bits for the output "
                  "password, a positive number up to 4096")

command("acl", -2, "slow", group="server", since="6.0.0",
        summary="A container for Access List Control commands.",
        complexity="Depends on subcommand.", container=True)


def _flags(ctx) -> list[bytes]:
    # Since Redis 7.2 every new user, the default one included, has sanitize-payload.
    flags = [b"on"]
    if not ctx.config["requirepass"]:
        flags.append(b"nopass")
    flags.append(b"sanitize-payload")
    return flags


def _password_hashes(ctx) -> list[bytes]:
    required = ctx.config["requirepass"]
    return [hashlib.sha256(required.encode()).hexdigest().encode()] if required else []


@command("acl|cat", -2, "noscript loading stale", group="server", since="6.0.0",
         summary="Lists the ACL categories, or the commands inside a category.",
         complexity="O(1) since the categories and commands are a fixed set.",
         args=(string("category", optional=True),))
def acl_cat(ctx, argv):
    """ACL CAT [category]

    A category's commands are the table's, containers (only @slow) and subcommands alike,
    so only the commands streamd has."""
    if len(argv) > 3:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "acl"))
    if len(argv) == 2:
        return [c.encode() for c in ACL_CATEGORIES]
    cat = argv[2].decode("utf-8", "replace").lower()
    if cat not in ACL_CATEGORIES:
        raise CommandError(f"ERR Unknown category '{E._show(argv[2])}'")
    return [c.name.encode() for c in every_command() if cat in c.categories]


@command("acl|deluser", -3, "admin noscript loading stale", group="server", since="6.0.0",
         summary="Deletes ACL users, and terminates their connections.",
         complexity="O(1) amortized time considering the typical user.",
         args=(string("username", multiple=True),))
def acl_deluser(ctx, argv):
    """ACL DELUSER username [username ...]"""
    if _USER in argv[2:]:
        raise CommandError("ERR The 'default' user cannot be removed")
    return 0  # no other user exists


@command("acl|dryrun", -4, "admin noscript loading stale", group="server", since="7.0.0",
         summary="Simulates the execution of a command by a user, without executing the "
                 "command.", complexity="O(1).",
         args=(string("username"), string("command"),
               string("arg", optional=True, multiple=True)))
def acl_dryrun(ctx, argv):
    """ACL DRYRUN username command [arg [arg ...]]

    The command is looked up as Redis does: a container named alone is itself (its arity
    then decides), with a subcommand that must exist."""
    # Redis prints the user and command names whole here (a category, cut at 128 bytes).
    if argv[2] != _USER:
        raise CommandError(f"ERR User '{E._show(argv[2], len(argv[2]))}' not found")
    line = argv[3:]
    cmd = TABLE.get(line[0].lower())
    if cmd is not None:
        if cmd.subcommands and len(line) > 1:
            cmd = cmd.subcommands.get(line[1].lower())
    if cmd is None:
        raise CommandError(f"ERR Command '{E._show(line[0], len(line[0]))}' not found")
    if not cmd.arity_ok(len(line)):
        raise CommandError(E.wrong_arity(cmd.name))
    return OK  # the default user may run every command


@command("acl|genpass", -2, "noscript loading stale", group="server", since="6.0.0",
         summary="Generates a pseudorandom, secure password that can be used to identify "
                 "ACL users.", complexity="O(1)",
         args=(integer("bits", optional=True),))
def acl_genpass(ctx, argv):
    """ACL GENPASS [bits]"""
    if len(argv) > 3:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "acl"))
    bits = 256
    if len(argv) == 3:
        bits = parse_int(argv[2])
        if not 0 < bits <= 4096:
            raise CommandError(_GENPASS_RANGE)
    chars = (bits + 3) // 4  # one hex digit per 4 bits, rounded up
    return secrets.token_hex((chars + 1) // 2)[:chars].encode()


@command("acl|getuser", 3, "admin noscript loading stale", group="server", since="6.0.0",
         summary="Lists the ACL rules of a user.",
         complexity="O(N). Where N is the number of password, command and pattern rules "
                    "that the user has.",
         args=(string("username"),),
         history=(
             ("6.2.0", "Added Pub/Sub channel patterns."),
             ("7.0.0", "Added selectors and changed the format of key and channel patterns "
                       "from a list to their rule representation."),
         ))
def acl_getuser(ctx, argv):
    """ACL GETUSER username"""
    if argv[2] != _USER:
        return None
    return Map([(b"flags", SetReply(_flags(ctx))), (b"passwords", _password_hashes(ctx)),
                (b"commands", b"+@all"), (b"keys", b"~*"), (b"channels", b"&*"),
                (b"selectors", [])])


@command("acl|list", 2, "admin noscript loading stale", group="server", since="6.0.0",
         summary="Dumps the effective rules in ACL file format.",
         complexity="O(N). Where N is the number of configured users.")
def acl_list(ctx, argv):
    """ACL LIST"""
    rules = [b"user", _USER, *_flags(ctx), *(b"#" + h for h in _password_hashes(ctx)),
             b"~*", b"&*", b"+@all"]
    return [b" ".join(rules)]


@command("acl|load", 2, "admin noscript loading stale", group="server", since="6.0.0",
         summary="Reloads the rules from the configured ACL file.",
         complexity="O(N). Where N is the number of configured users.")
def acl_load(ctx, argv):
    """ACL LOAD"""
    raise CommandError(_NO_ACLFILE)


@command("acl|log", -2, "admin noscript loading stale", group="server", since="6.0.0",
         summary="Lists recent security events generated due to ACL rules.",
         complexity="O(N) with N being the number of entries shown.",
         args=(oneof("operation", integer("count"), token("RESET"), optional=True),))
def acl_log(ctx, argv):
    """ACL LOG [count | RESET]"""
    if len(argv) > 3:
        raise CommandError(E.unknown_subcommand_or_arity(argv[1], "acl"))
    log = ctx.server.acl_log
    count = 10  # Redis's default: the ten newest
    if len(argv) == 3:
        if argv[2].lower() == b"reset":
            log.reset()
            return OK
        count = max(parse_int(argv[2]), 0)
    now_ms = int(time.time() * 1000)
    return [Map([(b"count", e.count), (b"reason", e.reason), (b"context", e.context),
                 (b"object", e.object), (b"username", e.username),
                 (b"age-seconds", (now_ms - e.ctime_ms) / 1000),
                 (b"client-info", e.client_info.encode())])
            for e in log.entries[:count]]


@command("acl|save", 2, "admin noscript loading stale", group="server", since="6.0.0",
         summary="Saves the effective ACL rules in the configured ACL file.",
         complexity="O(N). Where N is the number of configured users.")
def acl_save(ctx, argv):
    """ACL SAVE"""
    raise CommandError(_NO_ACLFILE)


@command("acl|setuser", -3, "admin noscript loading stale", group="server", since="6.0.0",
         summary="Creates and modifies an ACL user and its rules.",
         complexity="O(N). Where N is the number of rules provided.",
         args=(string("username"), string("rule", optional=True, multiple=True)),
         history=(
             ("6.2.0", "Added Pub/Sub channel patterns."),
             ("7.0.0", "Added selectors and key based permissions."),
         ))
def acl_setuser(ctx, argv):
    """ACL SETUSER username [rule [rule ...]]

    Only the no-op (``default`` without rules) is accepted: streamd has no other users,
    and the default user's rules are fixed (its password is ``requirepass``)."""
    if len(argv) == 3 and argv[2] == _USER:
        return OK
    raise CommandError("ERR ACL SETUSER is not supported: streamd has only the 'default' "
                       "user, whose password is set with CONFIG SET requirepass")


@command("acl|users", 2, "admin noscript loading stale", group="server", since="6.0.0",
         summary="Lists all ACL users.",
         complexity="O(N). Where N is the number of configured users.")
def acl_users(ctx, argv):
    """ACL USERS"""
    return [_USER]


@command("acl|whoami", 2, "noscript loading stale", group="server", since="6.0.0",
         summary="Returns the authenticated username of the current connection.",
         complexity="O(1)")
def acl_whoami(ctx, argv):
    """ACL WHOAMI"""
    return _USER


_ACL_HELP = [
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
]

help_command("acl", "server", "6.0.0", _ACL_HELP)
