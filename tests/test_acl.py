"""ACL for a server whose only user is ``default``: the read-only subcommands, the ACL log
of failed authentications, and the writing subcommands' answers in the cases that need
no other user. Replies were recorded from Redis 7.0.15; the tests run against both."""

from __future__ import annotations

import hashlib
import re

import pytest

from tests.conftest import encode_request, error_text as _error

# ACL CAT, in Redis's order.
CATEGORIES = [b"keyspace", b"read", b"write", b"set", b"sortedset", b"list", b"hash",
              b"string", b"bitmap", b"hyperloglog", b"geo", b"stream", b"pubsub", b"admin",
              b"fast", b"slow", b"blocking", b"dangerous", b"connection", b"transaction",
              b"scripting"]

ACL_HELP = (
    b"*29\r\n"
    b"+ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
    b"+CAT [<category>]\r\n"
    b"+    List all commands that belong to <category>, or all command categories\r\n"
    b"+    when no category is specified.\r\n"
    b"+DELUSER <username> [<username> ...]\r\n"
    b"+    Delete a list of users.\r\n"
    b"+DRYRUN <username> <command> [<arg> ...]\r\n"
    b"+    Returns whether the user can execute the given command without executing the "
    b"command.\r\n"
    b"+GETUSER <username>\r\n"
    b"+    Get the user's details.\r\n"
    b"+GENPASS [<bits>]\r\n"
    b"+    Generate a secure 256-bit user password. The optional `bits` argument can\r\n"
    b"+    be used to specify a different size.\r\n"
    b"+LIST\r\n"
    b"+    Show users details in config file format.\r\n"
    b"+LOAD\r\n"
    b"+    Reload users from the ACL file.\r\n"
    b"+LOG [<count> | RESET]\r\n"
    b"+    Show the ACL log entries.\r\n"
    b"+SAVE\r\n"
    b"+    Save the current config to the ACL file.\r\n"
    b"+SETUSER <username> <attribute> [<attribute> ...]\r\n"
    b"+    Create or modify a user with the specified attributes.\r\n"
    b"+USERS\r\n"
    b"+    List all the registered usernames.\r\n"
    b"+WHOAMI\r\n"
    b"+    Return the current connection username.\r\n"
    b"+HELP\r\n"
    b"+    Prints this help.\r\n"
)

NO_ACLFILE = (
    "This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.")
WRONGPASS = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
PASSWORD = "s3cret"


def _flags(target, nopass: bool) -> list[bytes]:
    # Redis 7.2 gave every new user, the default one included, sanitize-payload.
    return ([b"on"] + [b"nopass"] * nopass
            + [b"sanitize-payload"] * (target.version >= (7, 2)))


@pytest.fixture
def password(call):
    """requirepass set for the test's duration. ``call``'s (RESP2) connection, made before,
    stays authenticated, as in Redis, and restores it."""
    call("CONFIG", "SET", "requirepass", PASSWORD)
    yield PASSWORD
    call("CONFIG", "SET", "requirepass", "")


@pytest.fixture
def acl_log(call):
    """An empty ACL log before and after the test (it is server-wide)."""
    call("ACL", "LOG", "RESET")
    yield
    call("ACL", "LOG", "RESET")


def _entry(pairs) -> dict:
    """A RESP2 ACL LOG entry (a flat array) as a dict."""
    return dict(zip(pairs[0::2], pairs[1::2]))


# --- the read-only subcommands ---------------------------------------------------------

def test_whoami_and_users(call):
    assert call("ACL", "WHOAMI") == b"default"
    assert call("ACL", "USERS") == [b"default"]


def test_list_without_and_with_a_password(call, target, password):
    # The password set by CONFIG SET replaces nopass at once, as its SHA-256 (Redis keeps
    # the default user's password in step with requirepass).
    digest = hashlib.sha256(password.encode()).hexdigest().encode()
    flags = b" ".join(_flags(target, nopass=False))
    assert call("ACL", "LIST") == [b"user default " + flags + b" #" + digest + b" ~* &* +@all"]
    call("CONFIG", "SET", "requirepass", "")
    flags = b" ".join(_flags(target, nopass=True))
    assert call("ACL", "LIST") == [b"user default " + flags + b" ~* &* +@all"]


def test_getuser_resp2(call, target):
    assert call("ACL", "GETUSER", "default") == [
        b"flags", _flags(target, nopass=True), b"passwords", [], b"commands", b"+@all",
        b"keys", b"~*", b"channels", b"&*", b"selectors", []]
    assert call("ACL", "GETUSER", "nobody") is None
    assert call("ACL", "GETUSER", "Default") is None  # user names are case-sensitive


def test_getuser_with_a_password(call, target, password):
    digest = hashlib.sha256(password.encode()).hexdigest().encode()
    reply = call("ACL", "GETUSER", "default")
    assert reply[:4] == [b"flags", _flags(target, nopass=False), b"passwords", [digest]]


def test_getuser_resp3_shape(wire, target):
    flags = _flags(target, nopass=True)
    assert wire.resp3("ACL", "GETUSER", "default") == (
        b"%6\r\n$5\r\nflags\r\n~" + str(len(flags)).encode() + b"\r\n"
        + b"".join(b"$%d\r\n%s\r\n" % (len(f), f) for f in flags)
        + b"$9\r\npasswords\r\n*0\r\n$8\r\ncommands\r\n$5\r\n+@all\r\n$4\r\nkeys\r\n$2\r\n~*\r\n"
          b"$8\r\nchannels\r\n$2\r\n&*\r\n$9\r\nselectors\r\n*0\r\n")
    assert wire.resp3("ACL", "GETUSER", "nobody") == b"_\r\n"
    assert wire("ACL", "GETUSER", "nobody") == b"$-1\r\n"


def test_cat_lists_the_categories_in_order(call):
    assert call("ACL", "CAT") == CATEGORIES


@pytest.mark.parametrize("category", [c.decode() for c in CATEGORIES])
def test_cat_of_a_category_is_its_commands(call, category):
    # The same set COMMAND LIST gives for it: subcommands by their container|sub names,
    # and containers (only @slow) in @slow alone.
    listed = call("ACL", "CAT", category)
    assert len(listed) == len(set(listed))
    assert set(listed) == set(call("COMMAND", "LIST", "FILTERBY", "ACLCAT", category))


def test_cat_of_stream_and_slow(call):
    stream = set(call("ACL", "CAT", "STREAM"))  # the category's name in any case
    # Every stream command Redis 7.0 has (streamd has newer ones too).
    assert {b"xack", b"xadd", b"xautoclaim", b"xclaim", b"xdel", b"xgroup|create",
            b"xgroup|createconsumer", b"xgroup|delconsumer", b"xgroup|destroy",
            b"xgroup|help", b"xgroup|setid", b"xinfo|consumers", b"xinfo|groups",
            b"xinfo|help", b"xinfo|stream", b"xlen", b"xpending", b"xrange", b"xread",
            b"xreadgroup", b"xrevrange", b"xsetid", b"xtrim"} <= stream
    assert b"xgroup" not in stream
    slow = set(call("ACL", "CAT", "slow"))
    assert {b"xgroup", b"acl", b"acl|whoami", b"acl|cat"} <= slow
    assert b"xadd" not in slow
    assert {b"acl|list", b"acl|getuser", b"acl|log"} <= set(call("ACL", "CAT", "dangerous"))
    assert b"acl|whoami" not in set(call("ACL", "CAT", "admin"))


@pytest.mark.parametrize("args, error", [
    (("ACL", "CAT", "nosuch"), "Unknown category 'nosuch'"),
    (("ACL", "CAT", "Nosuch"), "Unknown category 'Nosuch'"),
    (("ACL", "CAT", "a", "b"),
     "unknown subcommand or wrong number of arguments for 'CAT'. Try ACL HELP."),
    (("ACL", "WHOAMI", "x"), "wrong number of arguments for 'acl|whoami' command"),
    (("ACL", "LIST", "x"), "wrong number of arguments for 'acl|list' command"),
    (("ACL", "FOO"), "unknown subcommand 'FOO'. Try ACL HELP."),
    (("ACL",), "wrong number of arguments for 'acl' command"),
])
def test_errors(call, args, error):
    assert _error(call, *args) == error


def test_help_byte_for_byte(wire):
    assert wire("ACL", "HELP") == ACL_HELP


# --- GENPASS and DRYRUN ----------------------------------------------------------------

@pytest.mark.parametrize("bits, chars", [(None, 64), ("1", 1), ("5", 2), ("8", 2),
                                         ("255", 64), ("4096", 1024)])
def test_genpass_length(call, bits, chars):
    args = ("ACL", "GENPASS") + ((bits,) if bits else ())
    first, second = call(*args), call(*args)
    assert re.fullmatch(rb"[0-9a-f]{%d}" % chars, first)
    if chars >= 16:
        assert first != second  # random, not a fixed string


@pytest.mark.parametrize("bits, error", [
    ("0", "ACL GENPASS argument must be the number of bits for the output password, "
          "a positive number up to 4096"),
    ("-1", "ACL GENPASS argument must be the number of bits for the output password, "
           "a positive number up to 4096"),
    ("4097", "ACL GENPASS argument must be the number of bits for the output password, "
             "a positive number up to 4096"),
    ("x", "value is not an integer or out of range"),
])
def test_genpass_errors(call, bits, error):
    assert _error(call, "ACL", "GENPASS", bits) == error
    assert _error(call, "ACL", "GENPASS", "1", "2") == (
        "unknown subcommand or wrong number of arguments for 'GENPASS'. Try ACL HELP.")


@pytest.mark.parametrize("line", [("get", "k"), ("GET", "k"), ("ping", "a", "b", "c"),
                                  ("xgroup", "create", "s", "g", "$"), ("acl", "whoami"),
                                  ("command",), ("xadd", "s", "*", "f", "v")])
def test_dryrun_allows_every_command(call, line):
    assert call("ACL", "DRYRUN", "default", *line) == b"OK"


@pytest.mark.parametrize("line, error", [
    (("foo",), "Command 'foo' not found"),
    (("FOO", "x"), "Command 'FOO' not found"),
    (("XGROUP", "FOO"), "Command 'XGROUP' not found"),
    (("command", "foo"), "Command 'command' not found"),
    (("get",), "wrong number of arguments for 'get' command"),
    (("GET", "a", "b"), "wrong number of arguments for 'get' command"),
    (("xgroup",), "wrong number of arguments for 'xgroup' command"),
    (("xgroup", "create", "a"), "wrong number of arguments for 'xgroup|create' command"),
])
def test_dryrun_errors(call, line, error):
    assert _error(call, "ACL", "DRYRUN", "default", *line) == error


def test_long_names_in_errors(call):
    # A category is cut at 128 bytes; a user or command name is echoed whole.
    assert _error(call, "ACL", "CAT", "c" * 200) == f"Unknown category '{'c' * 128}'"
    assert _error(call, "ACL", "DRYRUN", "u" * 200, "get") == f"User '{'u' * 200}' not found"
    assert _error(call, "ACL", "DRYRUN", "default", "f" * 200) == (
        f"Command '{'f' * 200}' not found")


def test_dryrun_of_an_unknown_user(call):
    assert _error(call, "ACL", "DRYRUN", "Default", "get", "k") == "User 'Default' not found"
    assert _error(call, "ACL", "DRYRUN", "nobody", "foo") == "User 'nobody' not found"
    assert _error(call, "ACL", "DRYRUN", "default") == (
        "wrong number of arguments for 'acl|dryrun' command")


# --- the writing subcommands ------------------------------------------------------------

def test_deluser(call):
    assert call("ACL", "DELUSER", "nobody", "other") == 0
    assert call("ACL", "DELUSER", "Default") == 0
    assert _error(call, "ACL", "DELUSER", "x", "default") == (
        "The 'default' user cannot be removed")
    assert call("ACL", "USERS") == [b"default"]


def test_save_and_load_without_an_aclfile(call):
    assert _error(call, "ACL", "SAVE") == NO_ACLFILE
    assert _error(call, "ACL", "LOAD") == NO_ACLFILE
    assert _error(call, "ACL", "SAVE", "x") == "wrong number of arguments for 'acl|save' command"


def test_setuser_default_without_rules_changes_nothing(call, target):
    assert call("ACL", "SETUSER", "default") == b"OK"
    assert call("ACL", "USERS") == [b"default"]
    assert call("ACL", "GETUSER", "default")[1] == _flags(target, nopass=True)


@pytest.mark.streamd_only
@pytest.mark.parametrize("args", [("ACL", "SETUSER", "alice"),
                                  ("ACL", "SETUSER", "default", "on"),
                                  ("ACL", "SETUSER", "bob", "on", ">pw", "+@all")])
def test_setuser_is_refused(call, args):
    assert _error(call, *args) == (
        "ACL SETUSER is not supported: streamd has only the 'default' user, whose password "
        "is set with CONFIG SET requirepass")
    assert call("ACL", "USERS") == [b"default"]


# --- AUTH with a user name, and the ACL log --------------------------------------------

def test_auth_with_a_user_name(raw, password):
    c = raw()
    c.send(encode_request("AUTH", "otheruser", "x"))
    assert c.read_reply() == WRONGPASS
    c.send(encode_request("AUTH", "otheruser", password))
    assert c.read_reply() == WRONGPASS
    c.send(encode_request("AUTH", "default", password) + encode_request("ACL", "WHOAMI"))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"$7\r\ndefault\r\n"


def test_auth_without_requirepass_takes_any_password_for_default_only(raw):
    c = raw()
    c.send(encode_request("AUTH", "default", "anything"))
    assert c.read_reply() == b"+OK\r\n"
    c.send(encode_request("AUTH", "otheruser", "anything"))
    assert c.read_reply() == WRONGPASS


def test_log_is_empty_and_reset_answers_ok(call, wire, acl_log):
    assert call("ACL", "LOG") == []
    assert wire.resp3("ACL", "LOG") == b"*0\r\n"
    assert call("ACL", "LOG", "RESET") == b"OK"
    assert call("ACL", "LOG", "reset") == b"OK"
    assert call("ACL", "LOG", "-1") == []
    assert _error(call, "ACL", "LOG", "x") == "value is not an integer or out of range"
    assert _error(call, "ACL", "LOG", "RESET", "x") == (
        "unknown subcommand or wrong number of arguments for 'LOG'. Try ACL HELP.")


def test_log_records_failed_auth(call, raw, password, acl_log):
    c = raw()
    c.send(encode_request("AUTH", "wrong"))  # the default user, a wrong password
    assert c.read_reply() == WRONGPASS
    c.send(encode_request("auth", "nobody", "x"))
    assert c.read_reply() == WRONGPASS
    c.send(encode_request("AUTH", "default", password))
    assert c.read_reply() == b"+OK\r\n"  # success is not logged
    c.send(encode_request("CLIENT", "ID"))
    client_id = int(c.read_reply()[1:-2])
    entries = [_entry(e) for e in call("ACL", "LOG")]
    assert [(e[b"count"], e[b"reason"], e[b"context"], e[b"object"], e[b"username"])
            for e in entries] == [(1, b"auth", b"toplevel", b"auth", b"nobody"),
                                  (1, b"auth", b"toplevel", b"AUTH", b"default")]
    assert list(entries[0]) == [b"count", b"reason", b"context", b"object", b"username",
                                b"age-seconds", b"client-info"]
    for e in entries:
        assert float(e[b"age-seconds"]) >= 0
        info = e[b"client-info"].decode()
        assert info.startswith(f"id={client_id} addr=")
        assert " cmd=auth user=default " in info
    assert [_entry(e)[b"username"] for e in call("ACL", "LOG", "1")] == [b"nobody"]
    assert call("ACL", "LOG", "0") == []


def test_log_groups_alike_failures_and_moves_them_first(call, raw, acl_log):
    c = raw()
    for args in (("AUTH", "foo", "a"), ("HELLO", "3", "AUTH", "foo", "b"),
                 ("AUTH", "foo", "c"), ("AUTH", "foo", "d")):
        c.send(encode_request(*args))
        assert c.read_reply() == WRONGPASS
    entries = [_entry(e) for e in call("ACL", "LOG")]
    assert [(e[b"count"], e[b"object"], e[b"username"]) for e in entries] == [
        (3, b"AUTH", b"foo"), (1, b"HELLO", b"foo")]
    assert " cmd=hello " in entries[1][b"client-info"].decode()


def test_log_context_inside_multi(call, raw, acl_log):
    c = raw()
    c.send(encode_request("MULTI") + encode_request("AUTH", "foo", "bar")
           + encode_request("EXEC"))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+QUEUED\r\n"
    assert c.read_reply() == b"*1\r\n" + WRONGPASS
    (entry,) = [_entry(e) for e in call("ACL", "LOG")]
    assert (entry[b"context"], entry[b"object"]) == (b"multi", b"AUTH")
    assert " flags=x " in entry[b"client-info"].decode()


def test_log_resp3_entry_is_a_map_with_a_double_age(call, wire, raw, acl_log):
    c = raw()
    c.send(encode_request("AUTH", "foo", "bar"))
    assert c.read_reply() == WRONGPASS
    reply = wire.resp3("ACL", "LOG")
    assert reply.startswith(b"*1\r\n%7\r\n$5\r\ncount\r\n:1\r\n$6\r\nreason\r\n$4\r\nauth\r\n")
    assert re.search(rb"\$11\r\nage-seconds\r\n,[0-9.e-]+\r\n\$11\r\nclient-info\r\n\$", reply)
    assert call.resp3("ACL", "LOG")[0][b"username"] == b"foo"


def test_log_keeps_acllog_max_len_entries(call, raw, acl_log):
    saved = call("CONFIG", "GET", "acllog-max-len")[1]
    call("CONFIG", "SET", "acllog-max-len", "2")
    try:
        c = raw()
        for user in ("u1", "u2", "u3"):
            c.send(encode_request("AUTH", user, "x"))
            assert c.read_reply() == WRONGPASS
        assert [_entry(e)[b"username"] for e in call("ACL", "LOG")] == [b"u3", b"u2"]
    finally:
        call("CONFIG", "SET", "acllog-max-len", saved)


# --- the command table -----------------------------------------------------------------

SUBCOMMANDS = [
    # name, arity, flags, categories (as Redis 7.0.15's COMMAND INFO gives them)
    ("acl|cat", -2, [b"noscript", b"loading", b"stale"], [b"@slow"]),
    ("acl|deluser", -3, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|dryrun", -4, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|genpass", -2, [b"noscript", b"loading", b"stale"], [b"@slow"]),
    ("acl|getuser", 3, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|help", 2, [b"loading", b"stale"], [b"@slow"]),
    ("acl|list", 2, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|load", 2, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|log", -2, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|save", 2, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|setuser", -3, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|users", 2, [b"admin", b"noscript", b"loading", b"stale"],
     [b"@admin", b"@slow", b"@dangerous"]),
    ("acl|whoami", 2, [b"noscript", b"loading", b"stale"], [b"@slow"]),
]


def test_command_info(call):
    (acl,) = call("COMMAND", "INFO", "acl")
    assert acl[:7] == [b"acl", -2, [], 0, 0, 0, [b"@slow"]]
    subs = {s[0].decode(): s for s in acl[9]}
    assert sorted(subs) == [s[0] for s in SUBCOMMANDS]
    for name, arity, flags, cats in SUBCOMMANDS:
        assert subs[name] == [name.encode(), arity, flags, 0, 0, 0, cats, [], [], []]


def test_command_docs(call):
    doc = call.resp3("COMMAND", "DOCS", "acl")[b"acl"]
    assert (doc[b"group"], doc[b"since"], doc[b"complexity"]) == (
        b"server", b"6.0.0", b"Depends on subcommand.")
    subs = doc[b"subcommands"]
    assert sorted(subs) == [s[0].encode() for s in SUBCOMMANDS]
    assert subs[b"acl|dryrun"][b"since"] == b"7.0.0"
    assert subs[b"acl|dryrun"][b"complexity"] == b"O(1)."
    assert subs[b"acl|getuser"][b"history"] == [
        [b"6.2.0", b"Added Pub/Sub channel patterns."],
        [b"7.0.0", b"Added selectors and changed the format of key and channel patterns "
                   b"from a list to their rule representation."]]
    assert subs[b"acl|setuser"][b"history"] == [
        [b"6.2.0", b"Added Pub/Sub channel patterns."],
        [b"7.0.0", b"Added selectors and key based permissions."]]
    log_args = subs[b"acl|log"][b"arguments"]
    assert [(a[b"name"], a[b"type"]) for a in log_args] == [(b"operation", b"oneof")]
    assert [(a[b"name"], a[b"type"], a.get(b"token")) for a in log_args[0][b"arguments"]] == [
        (b"count", b"integer", None), (b"reset", b"pure-token", b"RESET")]
    assert [(a[b"name"], a[b"type"], sorted(a.get(b"flags", [])))
            for a in subs[b"acl|dryrun"][b"arguments"]] == [
        (b"username", b"string", []), (b"command", b"string", []),
        (b"arg", b"string", [b"multiple", b"optional"])]
    assert subs[b"acl|genpass"][b"arguments"][0][b"type"] == b"integer"
