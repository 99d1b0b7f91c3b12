"""COMMAND DOCS / COMMAND INFO entries compared with what Redis 7.0.15 replies.

The expected fields below were recorded from Redis 7.0.15 (``redis-cli -3 COMMAND DOCS``);
the test runs against both streamd and Redis. Only fields Redis 8.8 keeps as 7.0 had them
are checked (summaries and argument names were rewritten in 7.2 and streamd follows 8.8).
"""

from __future__ import annotations

import pytest


def _docs(call, name: str) -> dict:
    reply = call.resp3("COMMAND", "DOCS", name)
    return reply[name.encode()]


def _args(doc: dict) -> list[dict]:
    return doc[b"arguments"]


def _find(args, name: bytes):
    return next(a for a in args if a[b"name"] == name)


# (command, history) as Redis 7.0.15 lists it.
HISTORY = [
    ("set", [[b"2.6.12", b"Added the `EX`, `PX`, `NX` and `XX` options."],
             [b"6.0.0", b"Added the `KEEPTTL` option."],
             [b"6.2.0", b"Added the `GET`, `EXAT` and `PXAT` option."],
             [b"7.0.0", b"Allowed the `NX` and `GET` options to be used together."]]),
    ("expire", [[b"7.0.0", b"Added options: `NX`, `XX`, `GT` and `LT`."]]),
    ("xrange", [[b"6.2.0", b"Added exclusive ranges."]]),
    ("xautoclaim", [[b"7.0.0", b"Added an element to the reply array, containing deleted "
                               b"entries the command cleared from the PEL"]]),
    ("xinfo|groups", [[b"7.0.0", b"Added the `entries-read` and `lag` fields"]]),
    ("xsetid", [[b"7.0.0", b"Added the `entries_added` and `max_deleted_entry_id` "
                           b"arguments."]]),
    ("command|info", [[b"7.0.0", b"Allowed to be called with no argument to get info on "
                                 b"all commands."]]),
]


# Entries Redis added after 7.0, by version: a server of that version or later lists them.
LATER_HISTORY = {
    "set": [((8, 4), [b"8.4.0", b"Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."])],
}


@pytest.mark.parametrize("name, history", HISTORY, ids=[h[0] for h in HISTORY])
def test_history_is_a_set_of_version_change_pairs(call, target, name, history):
    doc = _docs(call, name)
    history = history + [entry for since, entry in LATER_HISTORY.get(name, ())
                         if target.version >= since]
    # RESP3: a set (redis-py gives a list of lists for a set of arrays, keeping order).
    assert [list(h) for h in doc[b"history"]] == history
    keys = list(doc)
    assert keys.index(b"history") == keys.index(b"arguments") - 1


def test_history_comes_before_arguments_in_resp2(call):
    raw = call("COMMAND", "DOCS", "xgroup|create")
    fields = raw[1][0::2]
    assert fields[fields.index(b"history") + 1] == b"arguments"
    hist = raw[1][raw[1].index(b"history") + 1]
    assert hist == [[b"7.0.0", b"Added the `entries_read` named argument."]]


@pytest.mark.parametrize("name, complexity", [
    ("command|count", b"O(1)"),
    ("command|info", b"O(N) where N is the number of commands to look up"),
    ("command|list", b"O(N) where N is the total number of Redis commands"),
    ("command|getkeys", b"O(N) where N is the number of arguments to the command"),
    ("command|help", b"O(1)"),
    ("del", b"O(N) where N is the number of keys that will be removed. When a key to remove "
            b"holds a value other than a string, the individual complexity for this key is "
            b"O(M) where M is the number of elements in the list, set, sorted set or hash. "
            b"Removing a single key that holds a string value is O(1)."),
    ("unsubscribe", b"O(N) where N is the number of clients already subscribed to a channel."),
    ("xread", b"For each stream mentioned: O(N) with N being the number of elements being "
              b"returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when "
              b"the BLOCK option is used, XADD will pay O(M) time in order to serve the M "
              b"clients blocked on the stream getting new data."),
])
def test_complexity(call, name, complexity):
    assert _docs(call, name)[b"complexity"] == complexity


def test_argument_since_and_types(call):
    s = _args(_docs(call, "set"))
    expiration = _find(s, b"expiration")[b"arguments"]
    assert [a.get(b"since") for a in expiration[:2]] == [b"2.6.12", b"2.6.12"]

    cl = _args(_docs(call, "client|list"))
    assert [a.get(b"since") for a in cl] == [b"5.0.0", b"6.2.0"]

    ck = _find(_args(_docs(call, "client|kill")), b"filter")[b"arguments"]
    old, new = ck
    assert old[b"deprecated_since"] == b"2.8.12"
    assert new[b"type"] == b"oneof" and new[b"flags"] == [b"multiple"]
    by_token = {a.get(b"token"): a for a in new[b"arguments"]}
    assert by_token[b"ID"][b"since"] == b"2.8.12"
    assert by_token[b"LADDR"][b"since"] == b"6.2.0"
    types = {a[b"token"]: a.get(b"since") for a in by_token[b"TYPE"][b"arguments"]}
    assert types[b"MASTER"] == b"3.2.0" and types[b"REPLICA"] == b"5.0.0"

    time = next(a for a in _args(_docs(call, "xclaim")) if a.get(b"token") == b"TIME")
    assert time[b"type"] == b"unix-time"


def test_swapdb_is_documented_under_server(call):
    assert _docs(call, "swapdb")[b"group"] == b"server"
    # The group does not change its categories: @keyspace stays.
    info = call("COMMAND", "INFO", "swapdb")
    assert info[0][6] == [b"@keyspace", b"@write", b"@fast", b"@dangerous"]


def test_config_set_takes_parameter_value_pairs(call):
    # A block of two strings: redis-cli's hint reads "parameter value [parameter value ...]".
    # Redis 7.2 renamed the block from parameter_value to data; its shape stayed.
    (data,) = _args(_docs(call, "config|set"))
    assert data[b"type"] == b"block" and data[b"flags"] == [b"multiple"]
    assert [(a[b"name"], a[b"type"]) for a in data[b"arguments"]] == [
        (b"parameter", b"string"), (b"value", b"string")]


@pytest.mark.min_redis("7.2")
def test_client_kill_skipme_is_a_choice_of_yes_or_no(call):
    # redis-cli hints "[SKIPME YES|NO]" (Redis 7.0 documented it as a string "yes/no").
    new = _find(_args(_docs(call, "client|kill")), b"filter")[b"arguments"][1]
    skipme = next(a for a in new[b"arguments"] if a.get(b"token") == b"SKIPME")
    assert (skipme[b"name"], skipme[b"type"], skipme[b"flags"]) == (
        b"skipme", b"oneof", [b"optional"])
    assert [(a[b"type"], a[b"token"]) for a in skipme[b"arguments"]] == [
        (b"pure-token", b"YES"), (b"pure-token", b"NO")]
