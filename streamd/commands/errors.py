"""Redis's exact error texts, in one catalogue.

A handler signals an error by raising ``CommandError(TEXT)``; the text carries its code
(``ERR``, ``WRONGTYPE``, ``NOGROUP`` ...) exactly as Redis sends it, without the leading ``-``.
"""

from __future__ import annotations


class CommandError(Exception):
    """An error reply. ``str(exc)`` is the wire text without the leading ``-``."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    @property
    def code(self) -> str:
        return self.text.split(" ", 1)[0]


# Generic
SYNTAX = "ERR syntax error"
NOT_INTEGER = "ERR value is not an integer or out of range"
# getRangeLongFromObjectOrReply on a C int argument (e.g. SELECT's index)
INT_RANGE = "ERR value is out of range, value must between -2147483648 and 2147483647"
# getRangeLongFromObjectOrReply and getPositiveLongFromObjectOrReply without a message.
RANGE_0_1 = "ERR value is out of range, value must between 0 and 1"
NOT_POSITIVE = "ERR value is out of range, must be positive"
WAITAOF_NO_AOF = "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."
NOT_FLOAT = "ERR value is not a valid float"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NO_SUCH_KEY = "ERR no such key"
OVERFLOW = "ERR increment or decrement would overflow"
INCR_FLOAT_NAN = "ERR increment would produce NaN or Infinity"
DB_INDEX = "ERR DB index is out of range"
INVALID_EXPIRE = "ERR invalid expire time in '{}' command"
TIMEOUT_NOT_INT = "ERR timeout is not an integer or out of range"
TIMEOUT_NEGATIVE = "ERR timeout is negative"
TIMEOUT_RANGE = "ERR timeout is out of range"
NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
AUTH_NOT_CONFIGURED = (
    "ERR AUTH <password> called without any password configured for the default user. "
    "Are you sure your configuration is correct?"
)
NOPROTO = "NOPROTO unsupported protocol version"
PROTO_NOT_INT = "ERR Protocol version is not an integer or out of range"
MULTI_NESTED = "ERR MULTI calls can not be nested"
EXEC_WITHOUT_MULTI = "ERR EXEC without MULTI"
DISCARD_WITHOUT_MULTI = "ERR DISCARD without MULTI"
WATCH_IN_MULTI = "ERR WATCH inside MULTI is not allowed"
EXECABORT = "EXECABORT Transaction discarded because of previous errors."
NOT_IN_MULTI = "ERR Command not allowed inside a transaction"
UNBLOCKED = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
INVALID_MASTER_PORT = "ERR Invalid master port"
NO_FAILOVER = "ERR No failover in progress."
FAILOVER_TIMEOUT = "ERR FAILOVER timeout must be greater than 0"
FAILOVER_NO_REPLICAS = "ERR FAILOVER requires connected replicas."
# streamd's own: it has no replication, so it cannot become a replica.
NO_REPLICATION = ("ERR REPLICAOF host port is not supported: streamd has no replication "
                  "and stays a master (REPLICAOF NO ONE is accepted)")


def wrong_arity(name: str) -> str:
    """``name`` is the lower-case command, or ``container|sub`` for subcommands."""
    return f"ERR wrong number of arguments for '{name}' command"


def unknown_command(name: bytes, args: list[bytes]) -> str:
    # Redis quotes the arguments into a 128-byte budget, each cut to what is left of it
    # (and at a NUL, as C's %s reads it); none follows once the budget is spent.
    shown = b""
    for a in args:
        if len(shown) >= 128:
            break
        shown += b"'" + a[:128 - len(shown)].split(b"\0", 1)[0] + b"' "
    return (f"ERR unknown command '{_show(name)}', with args beginning with: "
            f"{shown.decode('utf-8', 'surrogateescape')}")


def command_not_allowed(name: str, option: str) -> str:
    """A command its ``enable-*-command`` option does not allow for this client."""
    return (f"ERR {name.upper()} command not allowed. If the {option} option is set to "
            '"local", you can run it from a local connection, otherwise you need to set '
            "this option in the configuration file, and then restart the server.")


MODULE_LOAD_FAILED = "ERR Error loading the extension. Please check the server logs."


def unknown_subcommand(sub: bytes | str, container: str) -> str:
    return f"ERR unknown subcommand '{_show(sub)}'. Try {container.upper()} HELP."


def unknown_subcommand_or_arity(sub: bytes | str, container: str) -> str:
    return (
        f"ERR unknown subcommand or wrong number of arguments for '{_show(sub)}'. "
        f"Try {container.upper()} HELP."
    )


def _show(value: bytes | str, limit: int = 128) -> str:
    """An argument echoed in an error as Redis's ``%.128s`` prints it: cut to ``limit``
    bytes and at a NUL, its other bytes as they are (undecodable ones kept through
    surrogateescape; the encoder turns CR and LF into spaces so the line stays one)."""
    if isinstance(value, str):
        value = value.encode()
    return value[:limit].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


# --- Consumer groups (commands/groups.py) ----------------------------------------------
# Names prefixed GRP_ so that they cannot collide with the stream family's additions.
GRP_BUSYGROUP = "BUSYGROUP Consumer Group name already exists"
GRP_KEY_REQUIRED = (
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
    "want to use the MKSTREAM option to create an empty stream automatically."
)
GRP_ENTRIESREAD = "ERR value for ENTRIESREAD must be positive or -1"
GRP_MISSING_GROUP = "ERR Missing GROUP option for XREADGROUP"
GRP_UNBALANCED = (
    "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must "
    "be specified."
)
GRP_CLAIM_NOT_INT = "ERR min-idle-time is not an integer or out of range"
GRP_CLAIM_NEGATIVE = "ERR min-idle-time must be a positive integer"
_MEANINGLESS = (
    "ERR The {0} ID is meaningless in the context of XREADGROUP: you want to read the "
    "history of this consumer by specifying a proper ID, or use the > ID to get new "
    "messages. The {0} ID would just return an empty result set."
)
GRP_DOLLAR_MEANINGLESS = _MEANINGLESS.format("$")
GRP_PLUS_MEANINGLESS = _MEANINGLESS.format("+")
GRP_XCLAIM_MIN_IDLE = "ERR Invalid min-idle-time argument for XCLAIM"
GRP_XAUTOCLAIM_MIN_IDLE = "ERR Invalid min-idle-time argument for XAUTOCLAIM"
GRP_XCLAIM_IDLE = "ERR Invalid IDLE option argument for XCLAIM"
GRP_XCLAIM_TIME = "ERR Invalid TIME option argument for XCLAIM"
GRP_XCLAIM_RETRYCOUNT = "ERR Invalid RETRYCOUNT option argument for XCLAIM"
GRP_XAUTOCLAIM_COUNT = "ERR COUNT must be > 0"
GRP_XAUTOCLAIM_MEMORY = (
    "ERR Insufficient memory, failed allocating transient memory, COUNT too high."
)
GRP_XNACK_MODE = "ERR mode must be SILENT, FAIL, or FATAL"
GRP_XNACK_NO_IDS = "ERR syntax error, expected IDS keyword"
GRP_XNACK_NUMIDS = "ERR numids must be a positive integer"
GRP_XNACK_NUMIDS_MISMATCH = "ERR number of IDs doesn't match numids"
GRP_XNACK_RETRYCOUNT = "ERR Invalid RETRYCOUNT value, must be >= 0"


def _raw(value: bytes | str) -> str:
    # Redis formats key/group names with %s and only turns CR/LF into spaces.
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value.replace("\r", " ").replace("\n", " ")


def grp_nogroup_read(key: bytes, group: bytes) -> str:
    return (f"NOGROUP No such key '{_raw(key)}' or consumer group '{_raw(group)}' in "
            f"XREADGROUP with GROUP option")


def grp_nogroup(key: bytes, group: bytes) -> str:
    return f"NOGROUP No such key '{_raw(key)}' or consumer group '{_raw(group)}'"


def grp_nogroup_for_key(key: bytes, group: bytes) -> str:
    return f"NOGROUP No such consumer group '{_raw(group)}' for key name '{_raw(key)}'"


def grp_xclaim_option(opt: bytes) -> str:
    return f"ERR Unrecognized XCLAIM option '{_raw(opt)}'"


def grp_xnack_option(opt: bytes) -> str:
    return f"ERR Unrecognized XNACK option '{_raw(opt)}'"


# --- Idempotent production (commands/idmp.py; XADD's IDMP texts are STREAM_IDMP_*) ------
# Names prefixed IDMP_ so that they cannot collide with other families' additions.
IDMP_CFG_NONE = "ERR At least one parameter must be specified"
# XCFGSET spells these IDMP-DURATION / IDMP-MAXSIZE; XIDMP CFGSET uses DURATION / MAXSIZE.
IDMP_CFG_REPEATED = "ERR {} specified multiple times"
IDMP_CFG_DURATION_RANGE = "ERR {} must be between 1 and 86400 seconds"
IDMP_CFG_MAXSIZE_RANGE = "ERR {} must be between 1 and 10000 entries"
# XIDMPRECORD: only the missing-entry text is known from Redis's source; the others are
# not pinned by any upstream test or doc (reference §3.19, open question 4).
IDMP_RECORD_NO_ENTRY = "ERR No such message in stream"
IDMP_RECORD_EMPTY_PID = "ERR producer ID must not be empty"
IDMP_RECORD_EMPTY_IID = "ERR idempotent ID must not be empty"
IDMP_RECORD_CONFLICT = "ERR IDMP record already maps to a different stream ID"


# --- Streams without groups (commands/streams.py) ---------------------------------------
# Names prefixed STREAM_ so that they cannot collide with other families' additions.
STREAM_INVALID_ID = "ERR Invalid stream ID specified as stream command argument"
STREAM_XADD_TOO_SMALL = (
    "ERR The ID specified in XADD is equal or smaller than the target stream top item"
)
STREAM_XADD_ZERO = "ERR The ID specified in XADD must be greater than 0-0"
STREAM_EXHAUSTED = (
    "ERR The stream has exhausted the last possible ID, unable to add more items"
)
STREAM_TOO_LARGE = "ERR Elements are too large to be stored"
STREAM_MAXLEN_NEGATIVE = "ERR The MAXLEN argument must be >= 0."
STREAM_LIMIT_NEGATIVE = "ERR The LIMIT argument must be >= 0."
STREAM_MAXLEN_AND_MINID = (
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
)
STREAM_LIMIT_WITHOUT_STRATEGY = (
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
)
STREAM_XTRIM_NO_STRATEGY = "ERR syntax error, XTRIM must be called with a trimming strategy"
STREAM_LIMIT_WITHOUT_APPROX = (
    "ERR syntax error, LIMIT cannot be used without the special ~ option"
)
STREAM_IDMP_TWICE = "ERR syntax error, IDMP/IDMPAUTO specified multiple times"
STREAM_IDMP_EXPLICIT_ID = (
    "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"
)
STREAM_IDMP_EMPTY_PID = "ERR syntax error, IDMP requires a non-empty producer ID"
STREAM_IDMP_EMPTY_IID = "ERR syntax error, IDMP requires a non-empty idempotent ID"
STREAM_IDMPAUTO_EMPTY_PID = "ERR syntax error, IDMPAUTO requires a non-empty producer ID"
STREAM_INTERVAL_START = "ERR invalid start ID for the interval"
STREAM_INTERVAL_END = "ERR invalid end ID for the interval"
STREAM_NUMIDS = "ERR Number of IDs must be a positive integer"
STREAM_NUMIDS_MISMATCH = "ERR The `numids` parameter must match the number of arguments"
STREAM_IDS_REQUIRED = "ERR IDS option is required"
STREAM_ENTRIES_ADDED_NEGATIVE = "ERR entries_added must be positive"
STREAM_XSETID_BELOW_GIVEN_MAXDEL = (
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
)
STREAM_XSETID_BELOW_MAXDEL = (
    "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"
)
STREAM_XSETID_BELOW_TOP = (
    "ERR The ID specified in XSETID is smaller than the target stream top item"
)
STREAM_XSETID_ENTRIES_ADDED = (
    "ERR The entries_added specified in XSETID is smaller than the target stream length"
)
STREAM_XREAD_UNBALANCED = (
    "ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must "
    "be specified."
)
STREAM_XREAD_GROUP = (
    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
)
STREAM_XREAD_NOACK = (
    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
)
STREAM_XREAD_CLAIM = (
    "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead."
)
STREAM_XREAD_GT = (
    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
    "<consumer> option."
)


# --- Cluster (commands/cluster.py) --------------------------------------------------------
# Every CLUSTER subcommand, READONLY, READWRITE and ASKING with cluster-enabled no.
CLUSTER_DISABLED = "ERR This instance has cluster support disabled"


# --- CONFIG (commands/server.py) ----------------------------------------------------------
CONFIG_SET_UNKNOWN = "ERR Unknown option or number of arguments for CONFIG SET - '{}'"
# The reason comes from the parameter's parser (config.py) or the checks before it.
CONFIG_SET_FAILED = "ERR CONFIG SET failed (possibly related to argument '{}') - {}"
CONFIG_IMMUTABLE = "can't set immutable config"
CONFIG_PROTECTED = "can't set protected config"
CONFIG_DUPLICATE = "duplicate parameter"
CONFIG_REWRITE_FAILED = "ERR Rewriting config file: {}"

# --- Hash field expiration (commands/hashes.py) -----------------------------------------
HASH_FIELDS_MISSING = "ERR Mandatory argument FIELDS is missing or not at the right position"
HASH_NUMFIELDS = "ERR Number of fields must be a positive integer"
# HEXPIRE and its siblings word the same check their own way.
HASH_NUMFIELDS_HEXPIRE = "ERR Parameter `numFields` should be greater than 0"
HASH_NUMFIELDS_MISMATCH = "ERR The `numfields` parameter must match the number of arguments"
HASH_EXPIRE_NEGATIVE = "ERR invalid expire time, must be >= 0"
HSETEX_NUMFIELDS = "ERR invalid number of fields"
HSETEX_MISSING_EXPIRE = "ERR missing expire time"
HSETEX_FNX_FXX = "ERR Only one of FXX or FNX arguments can be specified"
HSETEX_EXPIRATION = "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"


def subscribed_context(name: str) -> str:
    """A RESP2 client with subscriptions ran something else (``name``: ``client|info``)."""
    return (f"ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
            "QUIT / RESET are allowed in this context")


def unknown_argument(arg: bytes) -> str:
    return f"ERR unknown argument: {_show(arg, len(arg))}"


# A script running past busy-reply-threshold (server/busyscript.py): every command but the
# allow_busy ones gets BUSY, naming the KILL that applies to what runs.
NOTBUSY = "NOTBUSY No scripts in execution right now."
BUSY_EVAL = ("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
             "SHUTDOWN NOSAVE.")
BUSY_FUNCTION = ("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE.")
UNKILLABLE = ("UNKILLABLE Sorry the script already executed write commands against the "
              "dataset. You can either wait the script termination or kill the server in a "
              "hard way using the SHUTDOWN NOSAVE command.")
# What the killed script raises (its reply adds "script: <name>, on <source>:<line>."),
# FUNCTION KILL's victims included.
SCRIPT_KILLED = "ERR Script killed by user with SCRIPT KILL..."
