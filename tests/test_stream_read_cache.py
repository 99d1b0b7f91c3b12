"""Stream reads whose replies are encoded after later writes changed the nodes they read:
the replies of a transaction are encoded when EXEC is done, so a read queued before a
write must still show what it read, and must leave nothing stale for the reads after it
(streamd encodes a sealed node's entries once and reuses the bytes, see
``protocol.encoder``)."""

from __future__ import annotations


def test_a_read_queued_before_its_node_became_the_tail_again(r, wire):
    # Node A (1-0 .. 3-0) is sealed by 4-0, too big to join it; deleting 4-0 makes A the
    # tail again and 5-0 is appended to it, after A was read three times in the same
    # transaction (enough reads of A for streamd to encode A whole when the replies are
    # written, from what A held when it was read). The reads after EXEC see 5-0 as added.
    r.config_set("stream-node-max-bytes", 100)
    for i in range(1, 4):
        r.xadd("s", {"f": b"v%d" % i}, id=f"{i}-0")
    r.xadd("s", {"f": b"x" * 80}, id="4-0")
    r.memory_purge()  # streamd: start from an empty cache and its lowest admission bar
    p = r.pipeline(transaction=True)
    for _ in range(3):
        p.xrange("s", "1", "3")
    p.xdel("s", "4-0")
    p.xadd("s", {"f": b"new5"}, id="5-0")
    replies = p.execute()
    assert replies[:3] == [[(b"%d-0" % i, {b"f": b"v%d" % i}) for i in range(1, 4)]] * 3
    for i in range(6, 12):  # A is sealed again
        r.xadd("s", {"f": b"y" * 30}, id=f"{i}-0")
    want = (b"*4\r\n" + b"".join(b"*2\r\n$3\r\n%d-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv%d\r\n" % (i, i)
                                 for i in range(1, 4))
            + b"*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nf\r\n$4\r\nnew5\r\n")
    for _ in range(3):  # read, encoded whole, then served from that encoding
        assert wire("XRANGE", "s", "1", "5") == want
