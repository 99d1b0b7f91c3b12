"""Run fakeredis's TCP server on a loopback port: ``python -m bench.fakeredis_server --port N``.

The only change from ``fakeredis.TcpFakeServer`` is a listen backlog of 128 instead of
socketserver's 5, so that 50 clients connecting at once are not dropped into SYN retries
(which would add 1-3 s stalls that measure the kernel, not fakeredis).
"""

from __future__ import annotations

import argparse
import signal
import sys

from fakeredis import TcpFakeServer


class BenchFakeServer(TcpFakeServer):
    request_queue_size = 128
    daemon_threads = True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args(argv)
    server = BenchFakeServer((args.host, args.port))
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"fakeredis ready on port {args.port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
