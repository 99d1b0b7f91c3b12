"""DUMP payloads captured from a real Redis, for the RESTORE tests.

The tests restore these into whichever server they target, so streamd proves it reads what
Redis wrote (and, rebuilding ``STREAM_BUILD`` itself, that it lays stream nodes out byte for
byte as Redis does). Regenerate against a real server with

    python -m tests.rdb_fixtures redis://127.0.0.1:6390/0 > tests/data/rdb_fixtures.json

It uses keys under ``rdbfix:`` and sets ``stream-node-max-entries`` for the build, putting
the configuration back afterwards.
"""

from __future__ import annotations

import json
import sys

NODE_MAX_ENTRIES = 4  # small nodes, so a few entries make several of them

# The stream: explicit IDs, values of every listpack form (small and large ints, negative
# ID deltas, empty, 12-bit and 32-bit length strings, a leading-zero number that stays a
# string), a second field layout, deletions inside a node and of a node's first entry.
STREAM_BUILD = [
    ["XADD", "{key}", "1-1", "f", "v"],
    ["XADD", "{key}", "1-2", "f", "123"],
    ["XADD", "{key}", "2-0", "f", "-5"],
    ["XADD", "{key}", "3-0", "a", "b", "c", "d"],
    ["XADD", "{key}", "3-1", "f", "99999999999"],
    ["XADD", "{key}", "4-0", "f", ""],
    ["XADD", "{key}", "5-0", "f", "x" * 100],
    ["XADD", "{key}", "6-0", "name", "0123"],
    ["XADD", "{key}", "7-0", "f", "y" * 5000],
    ["XADD", "{key}", "1000000-5", "f", "-9223372036854775808", "g", "4095"],
    ["XADD", "{key}", "1000001-0", "f", "w"],
    ["XDEL", "{key}", "1-2", "3-1", "4-0"],
]
# Consumer groups on it: PEL entries of two consumers, an acknowledged one, an idle
# consumer, a group at "$" and one whose read counter is unknown.
GROUP_BUILD = [
    ["XGROUP", "CREATE", "{key}", "g1", "0"],
    ["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "{key}", ">"],
    ["XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "{key}", ">"],
    ["XACK", "{key}", "g1", "2-0"],
    ["XGROUP", "CREATE", "{key}", "g2", "$"],
    ["XGROUP", "CREATECONSUMER", "{key}", "g2", "carol"],
    ["XGROUP", "CREATE", "{key}", "g3", "3-0"],
]
HASH_SMALL = {"field": "value", "n": "42", "neg": "-7", "empty": ""}
HASH_BIG = {f"f{i}": "v" * (i % 7) for i in range(200)}  # past 128 fields: a hash table
STRINGS = {"int": "12345", "neg": "-2147483648", "short": "hello",
           "long": "abcdefghij" * 30, "binary": "\x00\xff\r\n", "bigint": "9223372036854775807"}


def plain(reply):
    """A RESP2 reply as JSON-able values (bytes decoded as Latin-1)."""
    if isinstance(reply, list):
        return [plain(x) for x in reply]
    if isinstance(reply, bytes):
        return reply.decode("latin-1")
    return reply


def capture(url: str) -> dict:
    import redis

    r = redis.Redis.from_url(url, protocol=2)
    old_nodes = r.config_get("stream-node-max-entries")["stream-node-max-entries"]
    old_compression = r.config_get("rdbcompression")["rdbcompression"]
    old_hash = r.config_get("hash-max-listpack-entries")["hash-max-listpack-entries"]
    key = "rdbfix:stream"

    def raw(*args):
        """A reply as the server sent it (no client-side reshaping), made JSON-able."""
        conn = r.connection_pool.get_connection()
        try:
            conn.send_command(*args)
            return plain(conn.read_response())
        finally:
            r.connection_pool.release(conn)
    try:
        r.config_set("stream-node-max-entries", NODE_MAX_ENTRIES)
        r.config_set("rdbcompression", "yes")
        r.config_set("hash-max-listpack-entries", 128)
        r.delete(key, "rdbfix:hsmall", "rdbfix:hbig", *(f"rdbfix:s:{k}" for k in STRINGS))
        for cmd in STREAM_BUILD + GROUP_BUILD:
            r.execute_command(*[a.replace("{key}", key) for a in cmd])
        out = {
            "redis_version": r.info("server")["redis_version"],
            "stream": r.dump(key).hex(),
            "stream_xrange": raw("XRANGE", key, "-", "+"),
            "stream_xinfo": raw("XINFO", "STREAM", key, "FULL"),
        }
        r.hset("rdbfix:hsmall", mapping=HASH_SMALL)
        r.hset("rdbfix:hbig", mapping=HASH_BIG)
        out["hash_small"] = r.dump("rdbfix:hsmall").hex()
        out["hash_small_encoding"] = r.object("encoding", "rdbfix:hsmall").decode()
        out["hash_big_encoding"] = r.object("encoding", "rdbfix:hbig").decode()
        out["hash_big"] = r.dump("rdbfix:hbig").hex()
        out["strings"] = {}
        for name, value in STRINGS.items():
            r.set(f"rdbfix:s:{name}", value.encode("latin-1"))
            out["strings"][name] = r.dump(f"rdbfix:s:{name}").hex()
        return out
    finally:
        r.config_set("stream-node-max-entries", old_nodes)
        r.config_set("rdbcompression", old_compression)
        r.config_set("hash-max-listpack-entries", old_hash)
        r.delete(key, "rdbfix:hsmall", "rdbfix:hbig", *(f"rdbfix:s:{k}" for k in STRINGS))


if __name__ == "__main__":
    json.dump(capture(sys.argv[1]), sys.stdout, indent=1)
    sys.stdout.write("\n")
