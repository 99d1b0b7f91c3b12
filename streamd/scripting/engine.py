"""The Lua 5.1 interpreter behind EVAL: sandbox, ``redis`` library, script cache and the
value conversions Redis defines between Lua and RESP.

Redis embeds Lua 5.1; lupa's ``lua51`` module is the same language. The sandbox is built
in Lua (``_PRELUDE``): scripts run with an environment whose reads of unknown names and
writes of any name fail with Redis's texts, and see only the globals Redis 7.0 gives
them. ``redis.call`` and ``redis.pcall`` check their arguments as Redis does and hand the
command line to a Python ``dispatch`` callable, which runs it through the server's
dispatch and answers with its reply value. They, and the bundled libraries (``libs``),
are Python functions that Lua sees as C functions, as Redis's are.
"""

from __future__ import annotations

import hashlib
import logging
import time

from ..protocol.encoder import to_bytes
from ..protocol.replies import ErrorReply, Map, Raw, SetReply, Simple, Verbatim
from . import libs

log = logging.getLogger("streamd")

_LOG_LEVELS = (logging.DEBUG, logging.INFO, logging.INFO, logging.WARNING)
# How deep a returned table may nest before the conversion gives up, as Redis does when
# its C stack for the conversion runs out (a table that holds itself, say).
_MAX_DEPTH = 400


# FUNCTION LOAD ends a library's code that runs longer than this, as Redis does.
_LOAD_TIMEOUT = 0.5
_LOAD_TIMED_OUT = b"ERR FUNCTION LOAD timeout"


class ScriptError(Exception):
    """An error reply for the script's caller (``text`` without the leading ``-``).
    ``counted`` is False for an error a script command already counted in the error
    statistics (raised by redis.call, or redis.pcall's table returned), as Redis marks
    those not to count twice."""

    def __init__(self, text: str, counted: bool = True):
        super().__init__(text)
        self.text = text
        self.counted = counted


_lupa = None
_import_error: str | None = None


def lua_missing() -> str | None:
    """None when the Lua runtime can be loaded, else why not (the ``lupa`` package)."""
    global _lupa, _import_error
    if _lupa is None and _import_error is None:
        try:
            import lupa.lua51 as lua51
        except Exception as exc:  # not installed, or a build without Lua 5.1
            _import_error = f"{type(exc).__name__}: {exc}"
        else:
            _lupa = lua51
    return _import_error


_PRELUDE = r"""
local py, libs, functions, shared_null = ...
local error, pcall, xpcall, type, tostring = error, pcall, xpcall, type, tostring
local rawget, setmetatable, setfenv, loadstring, load, getinfo = rawget, setmetatable,
      setfenv, loadstring, load, debug.getinfo
local null = shared_null or newproxy(false)  -- cjson.null
-- Every function the libraries implement in Python is a C function to Lua (lupa's
-- as_function), as in Redis: type() says 'function', and a script's
-- `return lib.f(...)` keeps the script's own frame (a tail call into a Lua function
-- would drop it), so an error names the script's line.
local wrap = libs.wrap
local function cfunctions(t)
  local out = {}
  for k, f in pairs(t) do out[k] = wrap(f) end
  return out
end
-- A script's code is '@user_script'; a library's (FUNCTION LOAD) is '@user_function'.
local CHUNK = functions and '@user_function' or '@user_script'
local PRELUDE = getinfo(1, 'S').source  -- this code's frames are not the script's
local pyerr = py.error_text

local READONLY = 'Attempt to modify a readonly table'
local function deny() error(READONLY, 2) end
-- Redis marks its tables read-only in the VM itself; here a read-only table is an empty
-- proxy, and ``libs.shadow`` maps it to what it stands for, for pairs to walk.
local shadow = libs.shadow
local function readonly(t)
  local proxy = setmetatable({}, {__index = t, __newindex = deny, __metatable = false})
  shadow[proxy] = t
  return proxy
end

-- What scripts see as their globals: reads of a missing name and every write fail.
-- ``api`` is where the names come from: ``env`` but while a library's code is loading,
-- when a function library sees only its loading API (as in Redis, one globals table
-- whose source switches, so a function's body reads the run-time names when it runs).
local env = {}
local api = env
local G = setmetatable({}, {
  __index = function(_, name)
    local v = api[name]
    if v == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
    end
    return v
  end,
  __newindex = deny,
  __metatable = false,
})
shadow[G] = env

local redis = cfunctions({
  call = py.call, pcall = py.pcall, sha1hex = py.sha1hex, log = py.log,
  setresp = py.setresp, set_repl = py.set_repl, acl_check_cmd = py.acl_check_cmd,
})

redis.status_reply = function(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then
    return {err = 'ERR wrong number or type of arguments'}
  end
  return {ok = s}
end

-- The error table Redis builds from "-CODE msg" (the dash is implied): the first word is
-- the code, a single word is the message of a generic ERR.
redis.error_reply = function(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then
    return {err = 'ERR wrong number or type of arguments'}
  end
  if s:sub(1, 1) == '-' then s = s:sub(2) end
  local code, msg = 'ERR', s
  local space = s:find(' ', 1, true)
  if space then code, msg = s:sub(1, space - 1), s:sub(space + 1) end
  msg = msg:gsub('[\r\n]+$', '')
  return {err = code .. ' ' .. msg}
end

if not functions then  -- the debugger's and EVAL's compatibility calls only
  redis.breakpoint = function() return false end
  redis.debug = function() end
  redis.replicate_commands = function() return true end
end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = py.version, py.version_num

-- An error table caught by a script's pcall reaches it as its message, as in Redis 7.0.
local function caught(ok, ...)
  if not ok then
    local e = ...
    if type(e) == 'userdata' then
      local text = pyerr(e)
      if text then return false, text end
    elseif type(e) == 'table' and type(rawget(e, 'err')) == 'string' then
      return false, rawget(e, 'err')
    end
  end
  return ok, ...
end

-- Code a script compiles runs in the sandbox too.
local function sandboxed(f, err)
  if f then setfenv(f, G) end
  return f, err
end

-- An error raised by the Python side, as Redis raises it: a library's (luaL_error's) is a
-- plain message; redis.call's an error table, marked when the command that failed has
-- counted it already (the script's error reply must not count it again).
local function raised(e)
  if type(e) == 'userdata' then
    local text, is_table, counted = pyerr(e)
    if is_table and counted then
      return {err = text}
    elseif is_table then
      return {err = text, ignore_error_stats_update = true}
    elseif text then
      return text
    end
  end
  return e
end

-- The message handler of every run: an error becomes a table carrying its text and the
-- line it came from: the innermost Lua frame that is the script's, as Redis reports it
-- (code the script compiled with loadstring counts, under its own source).
local function handler(e)
  local level, info = 2, nil
  while true do
    info = getinfo(level, 'Sl')
    if info == nil or (info.what ~= 'C' and info.what ~= 'tail'
                       and info.source ~= PRELUDE) then break end
    level = level + 1
  end
  e = raised(e)
  if type(e) ~= 'table' then e = {err = 'ERR ' .. tostring(e)} end
  if info then
    e.source = info.source
    e.line = info.currentline
  end
  return e
end

local function make_cjson(fns)
  local m = cfunctions(fns)
  m.new = function() return make_cjson(libs.cjson_new()) end
  m.null, m._NAME, m._VERSION = null, 'cjson', '2.1.0'
  return m
end
local cjson = make_cjson(libs.cjson)
local cmsgpack = cfunctions(libs.cmsgpack)
cmsgpack._NAME, cmsgpack._VERSION = 'cmsgpack', 'lua-cmsgpack 0.4.0'
cmsgpack._COPYRIGHT = 'Copyright (C) 2012, Salvatore Sanfilippo'
cmsgpack._DESCRIPTION = 'MessagePack C implementation for Lua'
-- Redis's math.random and math.randomseed (its own generator), the rest Lua's.
local mathlib = cfunctions(libs.random)
for k, v in pairs(math) do
  if mathlib[k] == nil then mathlib[k] = v end
end

for _, name in ipairs({'assert', 'collectgarbage', 'error', 'gcinfo', 'getmetatable',
                       'ipairs', 'next', 'pairs', 'rawequal', 'rawget', 'rawset', 'select',
                       'setmetatable', 'tonumber', 'tostring', 'type', 'unpack', 'xpcall',
                       '_VERSION'}) do
  env[name] = _G[name]
end
env.pcall = function(...) return caught(pcall(...)) end
-- The handler of a script's xpcall sees an error as Redis raises it.
env.xpcall = function(f, h) return xpcall(f, function(e) return h(raised(e)) end) end
env.pairs = wrap(libs.pairs)
-- cjson.null is a NULL light userdata in Redis, which tostring writes this way.
env.tostring = function(...)
  if ... == null then return 'userdata: (nil)' end
  return tostring(...)
end
-- Redis's Lua reads every chunk as source text: a precompiled one (string.dump's output,
-- starting with ESC) is a syntax error, never bytecode, which the VM does not verify.
local function source_only(s, name)
  if type(s) == 'string' and s:byte(1) == 27 then
    return loadstring(' ' .. s, name or s)
  end
  return loadstring(s, name)
end
env.loadstring = function(s, name) return sandboxed(source_only(s, name)) end
env.load = function(f, name)
  if type(f) ~= 'function' then return sandboxed(load(f, name)) end
  local parts = {}
  while true do
    local piece = f()
    if piece == nil or piece == '' then break end
    if type(piece) ~= 'string' then return nil, 'reader function must return a string' end
    parts[#parts + 1] = piece
  end
  return sandboxed(source_only(table.concat(parts), name or '=(load)'))
end
env.string = readonly(string)
env.table = readonly(table)
env.math = readonly(mathlib)
-- A script running long: every COUNT instructions the hook asks the server (py.tick),
-- which past busy-reply-threshold serves the other clients and answers SCRIPT KILL. Once
-- the script is to end, every line of its code raises the error, as Redis's hook does, so
-- that a pcall cannot catch it for good; this code's own lines (the error handler) run on.
-- A hook belongs to one Lua thread: a coroutine gets it when the sandbox's resume first
-- runs it. A library's code, as FUNCTION LOAD runs it, asks py.load_tick instead, which
-- ends it after 500 ms.
local COUNT = 100000
local sethook, gethook = debug.sethook, debug.gethook
local tick = py.tick
local ticker = tick  -- what the hook asks: tick, or load_tick while a library loads
local ending = nil  -- the error ending the running script, once it is to end
local function raise_in_script()  -- from a hook: level 3 is the code it interrupted
  local info = getinfo(3, 'S')
  if info and info.source ~= PRELUDE then error({err = ending}) end
end
local function on_line()
  raise_in_script()
end
local function on_count()
  ending = ending or ticker()
  if ending then
    sethook(on_line, 'l')
    raise_in_script()
  end
end
local function watch(c)
  if gethook(c) == nil then sethook(c, on_count, '', COUNT) end
end
local function watched(f, h, t)
  ending, ticker = nil, t or tick
  sethook(on_count, '', COUNT)
  local ok, value = xpcall(f, h)
  sethook()
  return ok, value
end

local co = {}
for k, v in pairs(coroutine) do co[k] = v end
local resume = coroutine.resume
-- A library's error ends a coroutine as a message, as in Redis; ``resuming`` tells where
-- a library function called from (see Engine._locate).
local resuming = libs.resuming
local function resumed(ok, ...)
  resuming[#resuming] = nil
  if not ok then return false, raised((...)) end
  return ok, ...
end
co.resume = function(c, ...)
  if type(c) ~= 'thread' then error("bad argument #1 to 'resume' (coroutine expected)", 2) end
  watch(c)
  resuming[#resuming + 1] = c
  return resumed(resume(c, ...))
end
-- A wrapped coroutine is resumed through the sandbox's resume, so that it gets the hook:
-- coroutine.wrap's C function would resume it without, and hide the thread. The errors
-- are the C function's: a string gets the caller's position (when the call is not a tail
-- call, which leaves no caller to name).
local cocreate = coroutine.create
local function unwrap(ok, ...)
  if ok then return ... end
  local e = ...
  -- Level 3: the caller of the wrapped function (which tail-called this, a level of its own).
  if type(e) == 'string' or type(e) == 'number' then error(e, 3) end
  error(e, 0)
end
co.wrap = function(f)
  if type(f) ~= 'function' or getinfo(f, 'S').what == 'C' then
    error("bad argument #1 to 'wrap' (Lua function expected)", 2)
  end
  local c = cocreate(f)
  local resume = co.resume
  return function(...) return unwrap(resume(c, ...)) end
end
env.coroutine = readonly(co)
env.redis = readonly(redis)
env.bit = readonly(cfunctions(libs.bit))
env.cjson = readonly(cjson)
env.cmsgpack = readonly(cmsgpack)
env.struct = readonly(cfunctions(libs.struct))
if not functions then env.__redis__err__handler = handler end
env._G = G

local function compile(body)
  return sandboxed(loadstring(body, CHUNK))
end

local function run(f, keys, argv)
  env.KEYS, env.ARGV = keys, argv
  return watched(f, handler)
end

if not functions then return compile, run, null end

-- FUNCTION LOAD: the library's code runs once with the loading API (redis.register_function,
-- redis.log and a few constants: nothing else, as in Redis 7.0); what it registers is
-- collected in ``registering``, which is nil at any other time.
local function strict(t)
  return setmetatable({}, {
    __index = function(_, name)
      local v = t[name]
      if v == nil then
        error("Script attempted to access nonexistent global variable '" .. tostring(name)
              .. "'", 2)
      end
      return v
    end,
    __newindex = deny,
    __metatable = false,
  })
end

local FLAGS = {['no-writes'] = true, ['allow-oom'] = true, ['allow-stale'] = true,
               ['no-cluster'] = true, ['allow-cross-slot-keys'] = true}
local lower, find = string.lower, string.find
local registering, seen

local function raise(msg) error({err = 'ERR ' .. msg}) end
local function stringish(v) local t = type(v) return t == 'string' or t == 'number' end

local function read_flags(t)
  local out, i = {}, 1
  while true do
    local f = t[i]
    if f == nil then return out end
    if type(f) ~= 'string' or not FLAGS[lower(f)] then return nil end
    out[lower(f)] = true
    i = i + 1
  end
end

local function register_function(...)
  if not registering then
    raise('redis.register_function can only be called on FUNCTION LOAD command')
  end
  local n = select('#', ...)
  if n < 1 or n > 2 then raise('wrong number of arguments to redis.register_function') end
  local name, callback, flags, desc
  if n == 1 then
    local t = ...
    if type(t) ~= 'table' then
      raise('calling redis.register_function with a single argument is only applicable '
            .. 'to Lua table (representing named arguments).')
    end
    -- Checked in the table's own order, as Redis walks it (lua_next).
    for k, v in next, t do
      if not stringish(k) then
        raise('named argument key given to redis.register_function is not a string')
      end
      local key = lower(tostring(k))
      if key == 'function_name' then
        if not stringish(v) then
          raise('function_name argument given to redis.register_function must be a string')
        end
        name = tostring(v)
      elseif key == 'description' then
        if not stringish(v) then
          raise('description argument given to redis.register_function must be a string')
        end
        desc = tostring(v)
      elseif key == 'callback' then
        if type(v) ~= 'function' then
          raise('callback argument given to redis.register_function must be a function')
        end
        callback = v
      elseif key == 'flags' then
        if type(v) ~= 'table' then
          raise('flags argument to redis.register_function must be a table representing '
                .. 'function flags')
        end
        flags = read_flags(v)
        if not flags then raise('unknown flag given') end
      else
        raise('unknown argument given to redis.register_function')
      end
    end
    if name == nil then raise('redis.register_function must get a function name argument') end
    if callback == nil then raise('redis.register_function must get a callback argument') end
  else
    local a, b = ...
    if not stringish(a) then raise('first argument to redis.register_function must be a string') end
    if type(b) ~= 'function' then
      raise('second argument to redis.register_function must be a function')
    end
    name, callback = tostring(a), b
  end
  if not find(name, '^[%w_]+$') then
    raise('Library names can only contain letters, numbers, or underscores(_) and must be '
          .. 'at least one character long')
  end
  if seen[name] then raise('Function already exists in the library') end
  seen[name] = true
  registering[#registering + 1] = {name, callback, flags or {}, desc}
end

local load_api = {redis = strict({
  register_function = register_function, log = redis.log,
  LOG_DEBUG = redis.LOG_DEBUG, LOG_VERBOSE = redis.LOG_VERBOSE,
  LOG_NOTICE = redis.LOG_NOTICE, LOG_WARNING = redis.LOG_WARNING,
  REDIS_VERSION = redis.REDIS_VERSION, REDIS_VERSION_NUM = redis.REDIS_VERSION_NUM,
})}

-- (true, registrations) or (false, 'compile' or 'run', error)
local function load_library(body)
  local f, err = loadstring(body, CHUNK)
  if not f then return false, 'compile', err end
  setfenv(f, G)
  registering, seen, api = {}, {}, load_api
  local ok, e = watched(f, handler, py.load_tick)
  local got = registering
  registering, seen, api = nil, nil, env
  if not ok then return false, 'run', e end
  return true, got
end

local function call(f, keys, args)
  return watched(function() return f(keys, args) end, handler)
end

return load_library, call
"""


class CallError(Exception):
    """Raised by the redis library's Python functions: a Lua error whose message is the
    error table ``{err = text}`` (the prelude's handler and pcall unwrap it). ``counted``:
    no command ran and counted it, so the table has no ignore_error_stats_update (the
    script's error reply counts in the error statistics)."""

    counted = False

    def __init__(self, text):
        super().__init__(text)
        self.text = text if type(text) is bytes else text.encode()


class ArgumentError(CallError):
    """redis.call / redis.pcall refused its arguments before any command ran."""

    counted = True


class LibraryError(Exception):
    """A library function's error as Lua sees it: a plain message, as luaL_error raises."""

    def __init__(self, text: bytes):
        super().__init__(text)
        self.text = text


def _no_attribute(obj, name, value=None):
    raise CallError(b"ERR attempt to index a function value")


class Engine:
    """One interpreter and its script cache (shared by every client, as in Redis)."""

    def __init__(self, version: str):
        missing = lua_missing()
        if missing is not None:
            raise RuntimeError(missing)
        lua51 = _lupa
        # The Python functions scripts call are Lua values with Python attributes behind
        # them (a function's __globals__ leads to the whole interpreter): no attribute of a
        # Python object is reachable from Lua, for reading or writing.
        self.lua = lua51.LuaRuntime(encoding=None, register_eval=False,
                                    register_builtins=True, unpack_returned_tuples=True,
                                    attribute_handlers=(_no_attribute, _no_attribute))
        # lupa's builtins are wanted for as_function only (a Python callable as a C
        # function); the rest goes, scripts never see the global table anyway.
        as_function = self.lua.eval("python.as_function")
        self.lua.execute("python = nil")
        self._type = lua51.lua_type
        self.table_from = self.lua.table_from
        self.scripts: dict[str, object] = {}  # sha1 hex (lower case) -> compiled function
        self.bodies: dict[str, bytes] = {}
        self._cached_bytes = 0  # the cached scripts' share of used_memory_scripts_eval
        self._call = None  # the running script's dispatch(argv) -> (ok, reply or text)
        # The running script's tick() -> None, or the error to end it with (set by its
        # caller; called every 100,000 Lua instructions).
        self.tick = None
        self._load_deadline = 0.0  # when the library code FUNCTION LOAD runs is ended
        self._known = None
        self.resp = 2  # the running script's redis.setresp
        major, minor, patch = (int(p) for p in (version.split(".") + ["0", "0"])[:3])
        py = self.table_from({
            b"call": self._redis_call, b"pcall": self._redis_pcall,
            b"sha1hex": self._sha1hex, b"log": self._log, b"setresp": self._setresp,
            b"set_repl": self._set_repl, b"acl_check_cmd": self._acl_check_cmd,
            b"tick": self._tick, b"load_tick": self._load_tick,
            b"error_text": self._error_text, b"version": version.encode(),
            b"version_num": (major << 16) | (minor << 8) | patch})
        self.null = self.lua.eval("newproxy(false)")  # cjson.null, one for both sandboxes
        self.random = libs.Rand48(self._type)  # one generator for the process, as in Redis
        # Where a library function was called from, for its error (luaL_where(L, 1) and
        # the name luaL_argerror gives): level 1 is this function, 2 the C function, 3
        # its caller.
        # Python's calls into Lua run on the main thread: inside a coroutine a script
        # resumed, the C function and its caller are on that coroutine's own stack
        # (levels 0 and 1), which the sandbox's coroutine.resume keeps in ``resuming``.
        self._resuming = self.lua.table()
        self._locate = self.lua.eval("""function(resuming)
          local co, f, c = resuming[#resuming]
          if co then
            f, c = debug.getinfo(co, 0, 'n'), debug.getinfo(co, 1, 'Sl')
          else
            f, c = debug.getinfo(2, 'n'), debug.getinfo(3, 'Sl')
          end
          local where = ''
          if c and c.currentline > 0 then where = c.short_src .. ':' .. c.currentline .. ': ' end
          return where, f and f.name, f and f.namewhat
        end""")
        # Outside the sandbox, for the conversions only: a table's metatable, and a plain
        # copy of its own fields (lua_next reads raw).
        self._metatable = self.lua.eval("debug.getmetatable")
        self._raw_copy = self.lua.eval(
            "function(t) local c = {} for k, v in next, t do c[k] = v end return c end")
        setup = self.lua.eval("function(...) " + _PRELUDE + " end")
        self._shadow = self.lua.eval("setmetatable({}, {__mode = 'k'})")
        self._gc_count = self.lua.eval("function() return collectgarbage('count') end")
        self._next = self.lua.eval("next")
        self.cjson = libs.CJson(self._type, self.table_from, self.null)
        self._compile, self._run, _ = setup(
            py, self._libs(as_function, self.cjson), None, self.null)
        # Functions (FUNCTION LOAD, FCALL) get a sandbox of their own, as Redis gives them
        # a Lua state of their own (their own cjson settings); cjson.null is one value.
        self._load_library, self._call_function = setup(
            py, self._libs(as_function, libs.CJson(self._type, self.table_from, self.null)),
            True, self.null)

    def _libs(self, as_function, cjson):
        """The Python halves of a sandbox's libraries, guarded: a LibError becomes the
        Lua error the C library would raise."""
        def table(fns):
            return self.table_from({k.encode(): self._guard(f) for k, f in fns.items()})

        def cjson_new():
            return table(libs.CJson(self._type, self.table_from, self.null).functions())

        return self.table_from({
            b"wrap": as_function, b"bit": table(libs.make_bit(self._type)),
            b"cjson": table(cjson.functions()), b"cjson_new": cjson_new,
            b"cmsgpack": table(libs.MsgPack(self._type, self.table_from).functions()),
            b"struct": table(libs.Struct(self._type).functions()),
            b"random": table(self.random.functions()), b"shadow": self._shadow,
            b"pairs": self._guard(self._pairs), b"resuming": self._resuming})

    def _pairs(self, *args):
        """pairs, walking what a read-only proxy stands for (Redis's tables are read-only
        in place, so pairs sees their fields)."""
        t = args[0] if args else None
        kind = libs.type_name(t, self._type) if args else "no value"
        if kind != "table":
            raise libs.ArgError(1, f"table expected, got {kind}")
        real = self._shadow[t]
        return self._next, t if real is None else real, None

    def _guard(self, fn):
        def guarded(*args):
            try:
                return fn(*args)
            except libs.LibError as exc:
                raise LibraryError(self._lib_error_text(exc)) from None
        return guarded

    def _lib_error_text(self, exc) -> bytes:
        """luaL_error's text (the caller's ``source:line:`` first), or luaL_argerror's."""
        where, name, namewhat = self._locate(self._resuming)
        text = exc.text.encode("latin-1") if type(exc.text) is str else exc.text
        if isinstance(exc, libs.ArgError):
            narg = exc.narg
            name = name if type(name) is bytes else b"?"
            if namewhat == b"method":
                narg -= 1
                if narg == 0:
                    text = b"calling '%s' on bad self (%s)" % (name, text)
            if narg or namewhat != b"method":
                text = b"bad argument #%d to '%s' (%s)" % (narg, name, text)
        return (where + text) if exc.positioned else text

    # --- the cache -----------------------------------------------------------------------
    def load(self, body: bytes) -> str:
        """Compile ``body`` into the cache; its SHA1 (hex). Raises ScriptError."""
        sha = hashlib.sha1(body).hexdigest()
        if sha not in self.scripts:
            fn, err = self._compile(body)
            if fn is None:
                raise ScriptError("ERR Error compiling script (new function): "
                                  + _text(err))
            self.scripts[sha] = fn
            self.bodies[sha] = body
            self._cached_bytes += _cached_script_memory(body)
        return sha

    def flush(self) -> None:
        """SCRIPT FLUSH: Redis starts a new Lua state for scripts, so the cjson settings a
        script changed are back to their defaults too."""
        self.scripts.clear()
        self.bodies.clear()
        self._cached_bytes = 0
        self.cjson.reset()

    def cache_memory(self) -> int:
        """INFO's used_memory_scripts_eval as Redis 7.0.15 counts it: each script's share
        and the cache dict's bucket array (8 bytes a bucket, a power of two from 4 up).
        Redis grows that array by incremental rehashing, when both arrays count for a
        while: its figure can be above this one just after the dict grew."""
        n = len(self.scripts)
        buckets = max(4, 1 << (n - 1).bit_length()) if n else 0
        return self._cached_bytes + 8 * buckets

    def lua_memory(self) -> int:
        """The interpreter's memory as Redis reads its Lua state's (lua_gc's count: whole
        kilobytes). One interpreter hosts both sandboxes here, so this is both."""
        return int(self._gc_count()) * 1024

    # --- function libraries ----------------------------------------------------------------
    def load_library(self, body: bytes) -> list:
        """Run a library's code (what follows its shebang line) with the loading API: the
        functions it registers, as (name, callback, flags, description or None), ``flags``
        a set of flag names. Raises ScriptError with Redis's text."""
        self._load_deadline = time.perf_counter() + _LOAD_TIMEOUT
        ok, *out = self._load_library(body)
        if not ok:
            kind, err = out
            if kind == b"compile":
                raise ScriptError("ERR Error compiling function: " + _text(err))
            msg = err[b"err"] if self._type(err) == "table" else err
            raise ScriptError("ERR Error registering functions: "
                              + (_text(msg) if type(msg) is bytes else "unknown error"))
        got = out[0]
        found = []
        for i in range(1, len(got) + 1):
            name, callback, flags, desc = (got[i][j] for j in (1, 2, 3, 4))
            found.append((name, callback, set(flags.keys()), desc))
        return found

    def call_function(self, name: bytes, callback, keys: list, args: list, call, known,
                      caller_resp: int):
        """Run a registered function with its keys and arguments, as ``run`` runs a
        script; its errors name the function."""
        self._call, self._known = call, known
        self.resp = 2
        try:
            ok, value = self._call_function(callback, self.table_from(keys),
                                            self.table_from(args))
        finally:
            self._call = self._known = None
        return self._result(ok, value, name.decode("utf-8", "replace"), caller_resp)

    # --- running -------------------------------------------------------------------------
    def run(self, sha: str, keys: list, args: list, call, known, caller_resp: int):
        """Run the cached script ``sha`` with KEYS and ARGV; ``call(argv)`` runs one
        redis.call and answers (True, reply) or (False, error text). Returns the reply
        value for a client speaking ``caller_resp``; raises ScriptError for an error."""
        self._call, self._known = call, known
        self.resp = 2
        try:
            ok, value = self._run(self.scripts[sha], self.table_from(keys),
                                  self.table_from(args))
        finally:
            self._call = self._known = None
        return self._result(ok, value, sha, caller_resp)

    def _result(self, ok, value, label: str, caller_resp: int):
        resp = self.resp
        if not ok:
            raise ScriptError(self._failure(label, value), not self._marked(value))
        reply = self._reply(value, resp, caller_resp, 0)
        if type(reply) is ErrorReply:
            raise ScriptError(reply.text, not self._marked(value))
        return reply

    def _marked(self, err) -> bool:
        return self._type(err) == "table" and err[b"ignore_error_stats_update"] is True

    def _failure(self, label: str, err) -> str:
        """The text of a script that raised: its message, then where, as Redis writes it."""
        if self._type(err) != "table":
            return "ERR " + _text(err)
        msg = err[b"err"]
        if type(msg) in (int, float):
            msg = libs.num_text(msg)
        elif type(msg) is not bytes:
            return "ERR unknown error"
        text = _one_line(_text(msg))
        source, line = err[b"source"], err[b"line"]
        if source is not None and line is not None:
            text += f" script: {label}, on {_text(source)}:{libs.num_text(line).decode()}."
        return text

    # --- Lua -> reply --------------------------------------------------------------------
    def _reply(self, v, resp: int, caller: int, depth: int):
        t = type(v)
        if t is bytes:
            return v
        if t is int or t is float:
            return libs.to_int64(v)
        if v is None:
            return None
        if t is bool:
            if resp == 2:
                return 1 if v else None
            if caller == 2:
                return 1 if v else 0
            return Raw(b"#t\r\n" if v else b"#f\r\n")
        if self._type(v) != "table":
            return None  # functions, userdata (cjson.null) ... answer nil, as in Redis
        if depth >= _MAX_DEPTH:
            return ErrorReply("ERR reached lua stack limit")
        if self._metatable(v) is not None:
            # Redis reads a returned table raw: its metamethods neither run nor answer.
            v = self._raw_copy(v)
        err = v[b"err"]
        if type(err) is bytes:
            return ErrorReply(_one_line(_text(err)))
        ok = v[b"ok"]
        if type(ok) is bytes:
            return Simple(ok.replace(b"\r", b" ").replace(b"\n", b" "))
        d = v[b"double"]
        if d is not None and type(d) in (int, float):
            return float(d)
        big = v[b"big_number"]
        if type(big) is bytes:
            return Raw(b"(" + big + b"\r\n") if caller == 3 else big
        vs = v[b"verbatim_string"]
        if vs is not None and self._type(vs) == "table":
            fmt, s = vs[b"format"], vs[b"string"]
            if type(fmt) is bytes and type(s) is bytes:
                return Verbatim(s, fmt)
        m = v[b"map"]
        if m is not None and self._type(m) == "table":
            return Map([(self._reply(k, resp, caller, depth + 1),
                         self._reply(x, resp, caller, depth + 1)) for k, x in m.items()])
        s = v[b"set"]
        if s is not None and self._type(s) == "table":
            return SetReply([self._reply(k, resp, caller, depth + 1) for k in s.keys()])
        out = []
        i = 1
        while True:
            x = v[i]
            if x is None:
                return out
            out.append(self._reply(x, resp, caller, depth + 1))
            i += 1

    # --- reply -> Lua --------------------------------------------------------------------
    def _argv(self, args) -> list:
        if not args:
            raise ArgumentError("ERR Please specify at least one argument for this redis lib "
                                "call")
        argv = []
        for a in args:
            t = type(a)
            if t is bytes:
                argv.append(a)
            elif t is int or t is float:
                # Redis formats a number argument with %.17g (Lua's own %.14g loses digits).
                argv.append(b"%.17g" % a)
            else:
                raise ArgumentError("ERR Lua redis lib command arguments must be strings or "
                                    "integers")
        return argv

    def _redis_call(self, *args):
        ok, reply = self._call(self._argv(args))
        if not ok:
            raise CallError(reply)
        return self._to_lua(reply)

    def _redis_pcall(self, *args):
        try:
            argv = self._argv(args)
        except ArgumentError as exc:
            return self.table_from({b"err": exc.text})
        ok, reply = self._call(argv)
        if not ok:
            text = reply if type(reply) is bytes else reply.encode()
            return self.table_from({b"err": text, b"ignore_error_stats_update": True})
        return self._to_lua(reply)

    def _to_lua(self, reply):
        data = to_bytes(reply, self.resp)
        if not data:
            return False
        return self._parse(data, 0)[0]

    def _parse(self, data: bytes, pos: int):
        """One RESP value at ``pos`` as the Lua value Redis gives a script for it."""
        kind = data[pos:pos + 1]
        end = data.index(b"\r\n", pos)
        line = data[pos + 1:end]
        pos = end + 2
        if kind == b"$" or kind == b"=":
            n = int(line)
            if n < 0:
                return False, pos
            body = data[pos:pos + n]
            pos += n + 2
            if kind == b"=":
                return self.table_from({b"verbatim_string": self.table_from(
                    {b"format": body[:3], b"string": body[4:]})}), pos
            return body, pos
        if kind == b":":
            return int(line), pos
        if kind == b"+":
            return self.table_from({b"ok": line}), pos
        if kind == b"-":
            return self.table_from({b"err": line}), pos
        if kind in (b"*", b">", b"~", b"%"):
            n = int(line)
            if n < 0:
                return False, pos
            if kind == b"%":
                items = {}
                for _ in range(n):
                    k, pos = self._parse(data, pos)
                    items[k], pos = self._parse(data, pos)
                return self.table_from({b"map": self.table_from(items)}), pos
            items = []
            for _ in range(n):
                x, pos = self._parse(data, pos)
                items.append(x)
            if kind == b"~":
                return self.table_from({b"set": self.table_from(
                    {x: True for x in items})}), pos
            t = self.lua.table()
            for i, x in enumerate(items, 1):
                t[i] = x
            return t, pos
        if kind == b"_":
            return None, pos
        if kind == b"#":
            return line == b"t", pos
        if kind == b",":
            return self.table_from({b"double": float(line)}), pos
        if kind == b"(":
            return self.table_from({b"big_number": line}), pos
        raise ValueError(f"unexpected reply type {kind!r}")

    # --- the redis library's Python side -------------------------------------------------
    @staticmethod
    def _error_text(e):
        """For an exception raised by the Python side: its text and whether it stands for
        an error table (else a string message); nil for any other error value."""
        if isinstance(e, CallError):
            return e.text, True, e.counted
        if isinstance(e, LibraryError):
            return e.text, False
        if isinstance(e, BaseException):  # a bug: reported, not crashing the server
            log.error("Lua bridge failure", exc_info=e)
            return b"ERR internal error in the Lua bridge", True
        return None

    def _acl_check_cmd(self, *args):
        argv = self._argv(args)
        if not (self._known and self._known(argv)):
            raise CallError("ERR Invalid command passed to redis.acl_check_cmd()")
        return True

    @staticmethod
    def _sha1hex(*args) -> bytes:
        if len(args) != 1:
            raise CallError("ERR wrong number of arguments")
        data = args[0]
        if type(data) in (int, float):
            data = libs.num_text(data)
        elif type(data) is not bytes:
            data = b""  # lua_tolstring gives nothing for other types: the empty digest
        return hashlib.sha1(data).hexdigest().encode()

    @staticmethod
    def _log(*args) -> None:
        if len(args) < 2:
            raise CallError("ERR redis.log() requires two arguments or more.")
        level = args[0]
        if type(level) not in (int, float):
            raise CallError("ERR First argument must be a number (log level).")
        if not 0 <= level <= 3:
            raise CallError("ERR Invalid debug level.")
        log.log(_LOG_LEVELS[int(level)], "%s", " ".join(_text(a) for a in args[1:]))

    def _setresp(self, *args) -> None:
        if len(args) != 1:
            raise CallError("ERR redis.setresp() requires one argument.")
        v = libs.to_int64(_number(args[0]) or 0)  # Redis casts lua_tonumber's to an int
        if v not in (2, 3):
            raise CallError("ERR RESP version must be 2 or 3.")
        self.resp = v

    def _tick(self):
        tick = self.tick
        return None if tick is None else tick()

    def _load_tick(self):
        return _LOAD_TIMED_OUT if time.perf_counter() > self._load_deadline else None

    @staticmethod
    def _set_repl(*args) -> None:
        if len(args) != 1:
            raise CallError("ERR redis.set_repl() requires one argument.")
        v = libs.to_int64(_number(args[0]) or 0)
        if not 0 <= v <= 3:
            raise CallError("ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
                            "REPL_ALL or REPL_NONE.")


def _alloc_size(n: int) -> int:
    """jemalloc's size class for an allocation of ``n`` bytes (four classes a doubling)."""
    if n <= 8:
        return 8
    if n <= 128:
        return (n + 15) & ~15
    step = 1 << ((n - 1).bit_length() - 3)
    return (n + step - 1) & ~(step - 1)


def _cached_script_memory(body: bytes) -> int:
    """A cached script's share of used_memory_scripts_eval in Redis 7.0.15: the sds of
    its SHA (40 bytes) and of its body in jemalloc's sizes, and 40 bytes of dict entry and
    script record (fitted to its figures; Python's allocator has no such sizes)."""
    n = len(body)
    header = 3 if n < 256 else 5 if n < 65536 else 9  # sdshdr8/16/32
    return 40 + _alloc_size(40 + 3 + 1) + _alloc_size(n + header + 1)


def _number(v):
    """lua_tonumber: a number, or a string that reads as one; None otherwise."""
    if type(v) in (int, float):
        return v
    if type(v) is bytes:
        return libs.str2number(v)
    return None


def _text(v) -> str:
    if type(v) is bytes:
        return v.decode("utf-8", "replace")
    if type(v) in (int, float):
        return libs.num_text(v).decode()
    return str(v)


def _one_line(text: str) -> str:
    """An error or status text as Redis sends it: CR and LF become spaces."""
    return text.replace("\r", " ").replace("\n", " ")
