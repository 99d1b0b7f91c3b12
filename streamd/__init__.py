"""streamd: a pure-Python, in-memory Redis Streams server that speaks RESP."""

__version__ = "0.1.0"
# The Redis API level streamd emulates; clients gate features on it.
REDIS_VERSION = "8.8.0"
