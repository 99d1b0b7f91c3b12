"""MODULE on a server without modules, as Redis 7.0.15 answers it (recorded from it).

Clients and tools ask MODULE LIST before they use a module's commands; streamd has none
and cannot load any. LOAD, LOADEX and UNLOAD are guarded by ``enable-module-command``
(default ``no``) as Redis guards them; when allowed they answer as a failed load or unload.
The tests of the allowed path run against an in-process streamd started with
``enable-module-command yes``, or a real Redis started that way (``--redis-url``).
"""

from __future__ import annotations

import pytest

from tests.conftest import RawConn, encode_request, refusing_target, target_allowing

REFUSED = (b'-ERR MODULE command not allowed. If the enable-module-command option is set to '
           b'"local", you can run it from a local connection, otherwise you need to set this '
           b'option in the configuration file, and then restart the server.\r\n')
LOAD_FAILED = b"-ERR Error loading the extension. Please check the server logs.\r\n"


@pytest.fixture
def refusing(r):
    return refusing_target(r, "enable-module-command", "MODULE LOAD")


@pytest.fixture(scope="module")
def allowing(target):
    """A server that lets every client run MODULE LOAD and UNLOAD."""
    yield from target_allowing(target, "enable-module-command")


def test_module_list_is_empty_in_both_protocols(wire):
    assert wire("MODULE", "LIST") == b"*0\r\n"
    assert wire.resp3("module", "list") == b"*0\r\n"


def test_module_help_and_arity(wire):
    assert wire("MODULE", "HELP") == (
        b"*11\r\n"
        b"+MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
        b"+LIST\r\n+    Return a list of loaded modules.\r\n"
        b"+LOAD <path> [<arg> ...]\r\n"
        b"+    Load a module library from <path>, passing to it any optional arguments.\r\n"
        b"+LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]\r\n"
        b"+    Load a module library from <path>, while passing it module configurations "
        b"and optional arguments.\r\n"
        b"+UNLOAD <name>\r\n+    Unload a module.\r\n"
        b"+HELP\r\n+    Prints this help.\r\n")
    assert wire("MODULE") == b"-ERR wrong number of arguments for 'module' command\r\n"
    assert wire("MODULE", "LIST", "x") == (
        b"-ERR wrong number of arguments for 'module|list' command\r\n")
    assert wire("MODULE", "LOAD") == (
        b"-ERR wrong number of arguments for 'module|load' command\r\n")
    assert wire("MODULE", "nosuch") == b"-ERR unknown subcommand 'nosuch'. Try MODULE HELP.\r\n"


def test_load_and_unload_are_refused_by_default(refusing, wire):
    assert wire("MODULE", "LOAD", "/nonexistent/module.so") == REFUSED
    assert wire("MODULE", "LOADEX", "/nonexistent/module.so") == REFUSED
    assert wire("MODULE", "UNLOAD", "search") == REFUSED
    # The guard is MODULE LOAD's and UNLOAD's own: LIST and HELP still answer.
    assert wire("MODULE", "LIST") == b"*0\r\n"


def test_an_allowed_load_or_unload_fails_as_without_the_module(allowing):
    c = RawConn(allowing.host, allowing.port)
    try:
        if allowing.password:
            c.send(encode_request("AUTH", allowing.password))
            c.read_reply()
        for args, reply in (
                (("MODULE", "LOAD", "/nonexistent/module.so"), LOAD_FAILED),
                (("MODULE", "LOAD", "/nonexistent/module.so", "a", "b"), LOAD_FAILED),
                (("MODULE", "LOADEX", "/nonexistent/module.so"), LOAD_FAILED),
                (("MODULE", "UNLOAD", "search"),
                 b"-ERR Error unloading module: no such module with that name\r\n"),
                (("MODULE", "LIST"), b"*0\r\n")):
            c.send(encode_request(*args))
            assert c.read_reply() == reply, args
    finally:
        c.close()
