"""streamd: a pure-Python, in-memory Redis Streams server that speaks RESP."""

import logging

__version__ = "0.1.0"
# The Redis API level streamd emulates; clients gate features on it.
REDIS_VERSION = "8.8.0"

# Redis's "verbose" log level (its "-" lines), between debug and notice (INFO).
VERBOSE = 15
logging.addLevelName(VERBOSE, "VERBOSE")

# As a library (EmbeddedServer, the pytest plugin) streamd's log lines go where the host
# program's logging sends them, and nowhere when it has none: without this handler Python's
# last-resort handler would print every warning, a normal stop's "bye bye" included, to
# stderr. The command line installs its own handler (streamd.cli.setup_logging).
logging.getLogger("streamd").addHandler(logging.NullHandler())
