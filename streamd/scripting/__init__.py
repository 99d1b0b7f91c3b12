"""The Lua bridge for EVAL and friends: one Lua 5.1 interpreter (lupa), its sandbox, the
script cache, and the conversions between Lua values and reply values.

It knows nothing of commands or the server: the command layer (commands/scripting.py)
hands it a ``dispatch`` callable that runs one ``redis.call`` through the server's
normal path and gives back its reply value.
"""

from .engine import Engine, ScriptError, lua_missing  # noqa: F401
