package kv

import (
	"crypto/sha1"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/evloop/evloop/kv/internal/lualib"
	"github.com/evloop/evloop/resp"
	lua "github.com/yuin/gopher-lua"
)

// This file is the Lua side of scripting: the interpreter's setup, its
// sandbox, the redis.* functions, and the conversions between Lua values
// and Redis replies, as Redis 7.0's script_lua.c has them. The commands
// and the script cache are in script.go.

// chunkName is the name scripts are compiled under: Lua's messages say
// "user_script:1:", and the error replies "on @user_script:1.", as Redis's.
const chunkName = "user_script"

// errReadonlyTable is raised by a change to a protected table.
const errReadonlyTable = "Attempt to modify a readonly table"

// builtinGlobals are the globals of Lua's base library that Redis 7.0.15
// leaves to scripts; print, dofile, loadfile, module and require are not
// among them, nor the os, io, package and debug libraries, nor getfenv,
// setfenv and newproxy, which reach past the sandbox (setfenv(0, t) is
// the environment of the code every later script loads).
var builtinGlobals = []string{
	"xpcall", "tostring", "setmetatable", "next", "assert", "tonumber", "rawequal",
	"collectgarbage", "getmetatable", "rawset", "pcall", "type", "select", "unpack", "pairs",
	"rawget", "loadstring", "ipairs", "_VERSION", "load", "error",
}

// libraryGlobals are the library tables scripts find, each protected.
var libraryGlobals = []string{"string", "math", "table", "coroutine", "cjson", "bit", "cmsgpack", "struct"}

// luaVM is the server's Lua interpreter, made when a script first runs
// and again by SCRIPT FLUSH.
type luaVM struct {
	L *lua.LState
	// env holds the globals; scripts see it through the read-only proxy
	// genv, which raises an error for a global that does not exist.
	env, genv *lua.LTable
	// real maps each protected proxy to the table it shows.
	real map[*lua.LTable]*lua.LTable
	// handler is the error handler scripts run with.
	handler *lua.LFunction
	// nested counts the calls in progress through pcall, xpcall and
	// coroutines, each of which holds the server's stack: Lua 5.1's
	// nCcalls, bounded as it bounds it (maxNested).
	nested int
	// nestEnv marks the functions nest makes, as their environment.
	nestEnv *lua.LTable
	// watch is the context of the interpreter and its coroutines: the
	// hook that makes a long script busy, and kills it.
	watch *scriptWatch
}

// maxNested is Lua 5.1's LUAI_MAXCCALLS: the calls through pcall, xpcall
// and coroutines that may be in progress at once (pcall's own counted
// before it checks, a coroutine's after), beyond which they fail
// with "C stack overflow", as in Redis, where they would overflow the
// stack the server runs on.
const maxNested = 200

// newLuaVM makes an interpreter with the libraries and sandbox of Redis
// 7.0's: its globals and library tables read-only, reading an unset
// global an error, redis.* bound to s.
func newLuaVM(s *Server) *luaVM {
	// Lua 5.1's limits: 20,000 nested calls (LUAI_MAXCALLS), and a
	// registry that grows to what the C stack would hold.
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 20000, RegistryMaxSize: 1 << 22, MinimizeStackMemory: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	lualib.Open(L)
	vm := &luaVM{L: L, env: L.NewTable(), real: map[*lua.LTable]*lua.LTable{}, nestEnv: L.NewTable(), watch: &scriptWatch{s: s}}
	L.SetContext(vm.watch)
	orig := L.Get(lua.GlobalsIndex).(*lua.LTable)
	for _, name := range builtinGlobals {
		vm.env.RawSetString(name, orig.RawGetString(name))
	}
	mathLib := orig.RawGetString("math").(*lua.LTable)
	mathLib.RawSetString("huge", lua.LNumber(math.Inf(1))) // gopher-lua's is the largest finite number
	mathLib.RawSetString("random", L.NewFunction(s.luaRandom))
	mathLib.RawSetString("randomseed", L.NewFunction(s.luaRandomSeed))
	for _, name := range libraryGlobals {
		if t, ok := orig.RawGetString(name).(*lua.LTable); ok {
			vm.env.RawSetString(name, vm.protect(t, false))
		}
	}
	vm.env.RawSetString("redis", vm.protect(s.redisTable(L), false))
	// The base functions that take a table see through the proxies, and
	// refuse to change them.
	vm.env.RawSetString("rawset", L.NewFunction(vm.rawset))
	vm.env.RawSetString("rawget", L.NewFunction(vm.rawget))
	vm.env.RawSetString("next", L.NewFunction(vm.next))
	vm.env.RawSetString("pairs", L.NewFunction(vm.pairs))
	vm.env.RawSetString("setmetatable", L.NewFunction(vm.setmetatable))
	vm.env.RawSetString("pcall", vm.nest(L.NewFunction(luaPcall), false, maxNested-1))
	vm.env.RawSetString("xpcall", vm.nest(orig.RawGetString("xpcall").(*lua.LFunction), false, maxNested-1))
	co := orig.RawGetString("coroutine").(*lua.LTable)
	co.RawSetString("resume", vm.nest(co.RawGetString("resume").(*lua.LFunction), false, maxNested))
	// A coroutine is an interpreter of its own, whose context is made
	// from the watch but is not it: it gets the watch, so that a script
	// looping in one is seen, and killed, too.
	create := co.RawGetString("create").(*lua.LFunction)
	co.RawSetString("create", L.NewFunction(func(L *lua.LState) int {
		L.Push(create)
		L.Push(L.CheckFunction(1))
		L.Call(1, 1)
		L.Get(-1).(*lua.LState).SetContext(vm.watch)
		return 1
	}))
	wrap := co.RawGetString("wrap").(*lua.LFunction)
	co.RawSetString("wrap", L.NewFunction(func(L *lua.LState) int {
		L.Push(wrap)
		L.Push(L.CheckFunction(1))
		L.Call(1, 1)
		resume := L.Get(-1).(*lua.LFunction)
		L.Pop(1)
		resume.Upvalues[0].Value().(*lua.LState).SetContext(vm.watch)
		L.Push(vm.nest(resume, true, maxNested))
		return 1
	}))
	vm.env.RawSetString("error", L.NewFunction(vm.errorFunc))
	vm.env.RawSetString("tostring", L.NewFunction(luaTostring))
	vm.env.RawSetString("unpack", L.NewFunction(luaUnpack))
	vm.env.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	// string.rep's count is a C int, as Lua 5.1's luaL_checkint reads it:
	// 2^36 is 0, not 64 GiB to allocate.
	strLib := orig.RawGetString("string").(*lua.LTable)
	strLib.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		str := L.CheckString(1)
		n := int(int32(luaInt(float64(L.CheckNumber(2)))))
		L.Push(lua.LString(strings.Repeat(str, max(n, 0))))
		return 1
	}))
	strLib.RawSetString("byte", L.NewFunction(luaStringByte))
	// Strings' methods are the string library's, protected too: the
	// metatable of strings is out of the scripts' reach.
	// getmetatable("") gives the protected library, whose __index is
	// itself, as in Redis.
	strProxy := vm.env.RawGetString("string").(*lua.LTable)
	vm.real[strProxy].RawSetString("__index", strProxy)
	strMeta := L.NewTable()
	strMeta.RawSetString("__index", strProxy)
	strMeta.RawSetString("__metatable", strProxy)
	L.SetMetatable(lua.LString(""), strMeta)
	vm.handler = L.NewFunction(scriptErrorHandler)
	vm.genv = vm.protect(vm.env, true)
	// The globals' metatable reads as an empty protected table, and the
	// library tables have none, as in Redis: none a script can change.
	L.GetMetatable(vm.genv).(*lua.LTable).RawSetString("__metatable", vm.protect(L.NewTable(), false))
	vm.env.RawSetString("getmetatable", L.NewFunction(vm.getmetatable))
	vm.env.RawSetString("_G", vm.genv)
	// Functions made by loadstring and load get the sandbox too.
	L.Env = vm.genv
	L.G.Global = vm.genv
	return vm
}

// nest returns a function calling fn, counted in vm.nested while it
// runs: past limit fn is not called, and "C stack overflow" is raised
// (raise) or returned after false, as Lua 5.1 has it for a wrapped
// coroutine, and for pcall and coroutine.resume.
func (vm *luaVM) nest(fn *lua.LFunction, raise bool, limit int) *lua.LFunction {
	f := vm.L.NewFunction(func(L *lua.LState) int {
		if 1+vm.nested >= limit { // the script's own call is the first
			if raise {
				L.RaiseError("C stack overflow")
			}
			L.Push(lua.LFalse)
			L.Push(lua.LString("C stack overflow"))
			return 2
		}
		vm.nested++
		defer func() { vm.nested-- }()
		L.Insert(fn, 1)
		L.Call(L.GetTop()-1, lua.MultRet)
		return L.GetTop()
	})
	f.Env = vm.nestEnv // known to errorFunc
	return f
}

// protect returns a read-only proxy of t: reads go to t (for globals, a
// missing one is an error), writes are refused.
func (vm *luaVM) protect(t *lua.LTable, globals bool) *lua.LTable {
	L := vm.L
	proxy := L.NewTable()
	meta := L.NewTable()
	meta.RawSetString("__index", t)
	if globals {
		// A global found in t is read through tables alone; one missing
		// reaches t's own metatable, which raises the error.
		missing := L.NewTable()
		missing.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("Script attempted to access nonexistent global variable '%s'", lua.LVAsString(L.Get(2)))
			return 0
		}))
		L.SetMetatable(t, missing)
	}
	meta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonlyTable)
		return 0
	}))
	L.SetMetatable(proxy, meta)
	vm.real[proxy] = t
	return proxy
}

// unproxy returns the table a proxy shows, or t.
func (vm *luaVM) unproxy(t *lua.LTable) *lua.LTable {
	if r, ok := vm.real[t]; ok {
		return r
	}
	return t
}

func (vm *luaVM) rawset(L *lua.LState) int {
	t := L.CheckTable(1)
	if _, ok := vm.real[t]; ok {
		L.Error(lua.LString(errReadonlyTable), 0) // without a position, as Lua's own
	}
	t.RawSet(L.CheckAny(2), L.CheckAny(3))
	L.Push(t)
	return 1
}

func (vm *luaVM) rawget(L *lua.LState) int {
	L.Push(vm.unproxy(L.CheckTable(1)).RawGet(L.CheckAny(2)))
	return 1
}

func (vm *luaVM) next(L *lua.LState) int {
	t := vm.unproxy(L.CheckTable(1))
	k, v := t.Next(L.Get(2))
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

func (vm *luaVM) pairs(L *lua.LState) int {
	t := L.CheckTable(1)
	L.Push(vm.env.RawGetString("next"))
	L.Push(t)
	L.Push(lua.LNil)
	return 3
}

// getmetatable is Lua's, but a protected table other than the globals
// has none.
func (vm *luaVM) getmetatable(L *lua.LState) int {
	v := L.CheckAny(1)
	if t, ok := v.(*lua.LTable); ok && t != vm.genv {
		if _, ok := vm.real[t]; ok {
			L.Push(lua.LNil)
			return 1
		}
	}
	if f := L.GetMetaField(v, "__metatable"); f != lua.LNil {
		L.Push(f)
		return 1
	}
	L.Push(L.GetMetatable(v))
	return 1
}

func (vm *luaVM) setmetatable(L *lua.LState) int {
	t := L.CheckTable(1)
	if _, ok := vm.real[t]; ok {
		L.Error(lua.LString(errReadonlyTable), 0)
	}
	mt := L.Get(2)
	if mt.Type() != lua.LTNil && mt.Type() != lua.LTTable {
		L.ArgError(2, "nil or table expected")
	}
	if cur, ok := L.GetMetatable(t).(*lua.LTable); ok && cur.RawGetString("__metatable") != lua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	L.SetMetatable(t, mt)
	L.Push(t)
	return 1
}

// luaPcall is pcall as Redis's scripts have it: the error of a failed
// call that is an error reply ({err = msg}) is returned as its message.
func luaPcall(L *lua.LState) int {
	v := L.CheckAny(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	if err := L.PCall(L.GetTop()-1, lua.MultRet, nil); err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if msg, ok := t.RawGetString("err").(lua.LString); ok {
				obj = msg
			}
		}
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// errorFunc is Lua 5.1's error(message [, level]): no message is nil,
// and a number, like a string, gets the position of the function at
// level (1 the one calling error) if that is Lua code, none if it is a
// Go function (pcall) or there is none, where gopher-lua's looks one
// level short and past Go functions. The functions of nest, which stand
// in for Lua's own, are not counted.
func (vm *luaVM) errorFunc(L *lua.LState) int {
	v := L.Get(1)
	if n, ok := v.(lua.LNumber); ok {
		v = lua.LString(luaNumberString(n))
	}
	level := L.OptInt(2, 1)
	if msg, ok := v.(lua.LString); ok && level > 0 {
		for i := 1; ; i++ {
			dbg, ok := L.GetStack(i)
			if !ok {
				break
			}
			fn, err := L.GetInfo("fSl", dbg, lua.LNil)
			if err != nil {
				break
			}
			if f, ok := fn.(*lua.LFunction); ok && f.Env == vm.nestEnv {
				continue
			}
			if level--; level > 0 {
				continue
			}
			if dbg.What != "G" && dbg.CurrentLine > 0 {
				v = lua.LString(dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": " + string(msg))
			}
			break
		}
	}
	L.Error(v, 0)
	return 0
}

// luaStackMax is Lua 5.1's LUAI_MAXCSTACK: the values a function called
// from Lua may have on the stack, its arguments and its results.
const luaStackMax = 8000

// luaUnpack is Lua 5.1's unpack: its bounds C ints, and more results
// than the stack holds an error, where gopher-lua's pushes them all
// (unpack({}, 1, 1e8) held the server for minutes).
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	cint := func(n int, def int32) int32 {
		if L.Get(n) == lua.LNil {
			return def
		}
		return int32(luaInt(float64(L.CheckNumber(n))))
	}
	i := cint(2, 1)
	e := cint(3, int32(t.Len()))
	if i > e {
		return 0
	}
	n := e - i + 1 // wraps round as C's int does
	if n <= 0 || int(n)+L.GetTop() > luaStackMax {
		L.RaiseError("too many results to unpack")
	}
	for k := range int(n) {
		L.Push(t.RawGetInt(int(i) + k))
	}
	return int(n)
}

// luaStringByte is Lua 5.1's string.byte: more results than the stack
// holds are an error, where gopher-lua's pushes them all.
func luaStringByte(L *lua.LState) int {
	str := L.CheckString(1)
	l := int64(len(str))
	opt := func(n int, def int64) int64 {
		if L.Get(n) == lua.LNil {
			return def
		}
		return luaInt(float64(L.CheckNumber(n)))
	}
	posrelat := func(pos int64) int64 {
		if pos < 0 {
			pos += l + 1
		}
		return max(pos, 0)
	}
	posi := posrelat(opt(2, 1))
	pose := posrelat(opt(3, posi))
	posi = max(posi, 1)
	pose = min(pose, l)
	if posi > pose {
		return 0
	}
	n := pose - posi + 1
	if n+int64(L.GetTop()) > luaStackMax {
		L.RaiseError("stack overflow (string slice too long)")
	}
	for i := range n {
		L.Push(lua.LNumber(str[posi+i-1]))
	}
	return int(n)
}

// luaTostring is tostring, with numbers written as Lua 5.1 writes them
// ("%.14g"), where gopher-lua writes the shortest form that reads back.
func luaTostring(L *lua.LState) int {
	v := L.CheckAny(1)
	if n, ok := v.(lua.LNumber); ok {
		L.Push(lua.LString(luaNumberString(n)))
		return 1
	}
	L.Push(L.ToStringMeta(v))
	return 1
}

// luaNumberString formats n as Lua 5.1's lua_Number2str: "%.14g".
func luaNumberString(n lua.LNumber) string { return lualib.FormatG(float64(n), 14) }

// redisTable makes the redis table: call, pcall and the other functions
// and constants of Redis 7.0's scripts.
func (s *Server) redisTable(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":         func(L *lua.LState) int { return s.luaCall(L, true) },
		"pcall":        func(L *lua.LState) int { return s.luaCall(L, false) },
		"sha1hex":      luaSha1hex,
		"error_reply":  luaErrorReply,
		"status_reply": luaStatusReply,
		"log":          s.luaLog,
		"setresp":      s.luaSetResp,
		"set_repl":     s.luaSetRepl,
		"replicate_commands": func(L *lua.LState) int {
			L.Push(lua.LTrue) // effects are what is replicated, always
			return 1
		},
		"breakpoint":    func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":         func(L *lua.LState) int { return 0 },
		"acl_check_cmd": s.luaACLCheckCmd,
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]lua.LValue{
		"LOG_DEBUG": lua.LNumber(0), "LOG_VERBOSE": lua.LNumber(1), "LOG_NOTICE": lua.LNumber(2), "LOG_WARNING": lua.LNumber(3),
		"REPL_NONE": lua.LNumber(0), "REPL_AOF": lua.LNumber(1), "REPL_SLAVE": lua.LNumber(2), "REPL_REPLICA": lua.LNumber(2), "REPL_ALL": lua.LNumber(3),
		"REDIS_VERSION": lua.LString(serverVersion), "REDIS_VERSION_NUM": lua.LNumber(serverVersionNum()),
	} {
		t.RawSetString(name, v)
	}
	return t
}

// serverVersionNum is the version as Redis's REDIS_VERSION_NUM: 0x00MMmmpp.
func serverVersionNum() int {
	n := 0
	for _, part := range strings.SplitN(serverVersion, ".", 3) {
		v, _ := strconv.Atoi(part)
		n = n<<8 | v
	}
	return n
}

// luaCall runs a command for redis.call (raise) or redis.pcall: its
// reply converted to a Lua value, an error reply raised (call) or
// returned (pcall) as a table with an err field.
func (s *Server) luaCall(L *lua.LState, raise bool) int {
	run := s.scripts.run
	if run == nil {
		luaRaise(L, errTable(L, "redis.call/pcall can only be called inside a script invocation"))
	}
	args, msg := luaArgs(L, run.argBuf[:0])
	run.argBuf = args
	if msg != "" {
		t := errTable(L, msg)
		if raise {
			luaRaise(L, t)
		}
		L.Push(t)
		return 1
	}
	reply, isErr := s.scriptCommand(L, run, args)
	if raise && isErr {
		luaRaise(L, reply.(*lua.LTable))
	}
	L.Push(reply)
	return 1
}

// luaRaise raises err, a table with an err field, as is, without a
// position: the script's error handler adds where it was raised.
func luaRaise(L *lua.LState, err *lua.LTable) {
	L.Error(err, 0)
}

// luaArgs converts redis.call's arguments into a command's, appended to
// buf, as Redis converts them: a number is written "%.17g"; any other
// type but a string is refused.
func luaArgs(L *lua.LState, buf [][]byte) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return buf, "Please specify at least one argument for this redis lib call"
	}
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, []byte(v))
		case lua.LNumber:
			buf = append(buf, appendG17(nil, float64(v)))
		default:
			return buf, "Lua redis lib command arguments must be strings or integers"
		}
	}
	return buf, ""
}

// appendG17 appends f as C's printf "%.17g" writes it.
func appendG17(dst []byte, f float64) []byte { return append(dst, lualib.FormatG(f, 17)...) }

// errTable returns the table a Redis error is in Lua, {err = "CODE msg"}:
// msg with a leading '-' takes its first word as the code, one without
// gets ERR, as Redis's luaPushErrorBuff does.
func errTable(L *lua.LState, msg string) *lua.LTable {
	code := "ERR"
	if rest, ok := strings.CutPrefix(msg, "-"); ok {
		if c, m, found := strings.Cut(rest, " "); found {
			code, msg = c, m
		} else {
			msg = rest
		}
	}
	t := L.NewTable()
	t.RawSetString("err", lua.LString(code+" "+strings.Trim(msg, "\r\n")))
	return t
}

// replyToLua converts a command's reply, as the script's client read it,
// into a Lua value as Redis's redisProtocolToLuaType does.
func replyToLua(L *lua.LState, v *resp.Value) lua.LValue {
	switch v.Type {
	case resp.Integer:
		return lua.LNumber(v.Int)
	case resp.BulkString:
		if v.IsNull {
			return lua.LFalse
		}
		return lua.LString(v.Str)
	case resp.SimpleString:
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(v.Str))
		return t
	case resp.Error, resp.BulkError:
		t := errTable(L, "-"+string(v.Str))
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t
	case resp.Array, resp.Push:
		if v.IsNull {
			return lua.LFalse
		}
		t := L.CreateTable(len(v.Elems), 0)
		for i := range v.Elems {
			t.RawSetInt(i+1, replyToLua(L, &v.Elems[i]))
		}
		return t
	case resp.Map:
		m := L.CreateTable(0, len(v.Elems)/2)
		for i := 0; i+1 < len(v.Elems); i += 2 {
			m.RawSet(replyToLua(L, &v.Elems[i]), replyToLua(L, &v.Elems[i+1]))
		}
		return wrapTable(L, "map", m)
	case resp.Set:
		m := L.CreateTable(0, len(v.Elems))
		for i := range v.Elems {
			m.RawSet(replyToLua(L, &v.Elems[i]), lua.LTrue)
		}
		return wrapTable(L, "set", m)
	case resp.Null:
		return lua.LNil
	case resp.Boolean:
		return lua.LBool(v.Bool)
	case resp.Double:
		return wrapTable(L, "double", lua.LNumber(v.Float))
	case resp.BigNumber:
		return wrapTable(L, "big_number", lua.LString(v.Str))
	case resp.Verbatim:
		t := L.NewTable()
		t.RawSetString("string", lua.LString(v.Str))
		t.RawSetString("format", lua.LString(v.Format))
		return wrapTable(L, "verbatim_string", t)
	}
	return lua.LNil
}

// wrapTable returns {field = v}.
func wrapTable(L *lua.LState, field string, v lua.LValue) *lua.LTable {
	t := L.NewTable()
	t.RawSetString(field, v)
	return t
}

// maxReplyDepth bounds how deeply a script's reply may nest tables: a
// table that holds itself is refused, as Redis refuses it once Lua's
// stack runs out.
const maxReplyDepth = 256

// writeLuaReply writes v, the result of run's script, as Redis's
// luaReplyToRedisReply converts it; the protocol the script set with
// redis.setresp decides how a boolean is written.
func (s *Server) writeLuaReply(w *resp.Writer, run *scriptRun, v lua.LValue, depth int) {
	if depth > maxReplyDepth {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LBool:
		switch {
		case run.client.proto == 3:
			w.Bool(bool(v))
		case bool(v):
			w.Int(1)
		default:
			w.Null()
		}
	case lua.LNumber:
		w.Int(luaInt(float64(v)))
	case *lua.LTable:
		s.writeLuaTable(w, run, v, depth)
	default:
		w.Null()
	}
}

// luaInt converts f to an integer as C's cast does on the machines Redis
// runs on: toward zero, and the smallest integer for what does not fit.
func luaInt(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// writeLuaTable writes a table: an error ({err = ...}), a status ({ok =
// ...}), RESP3's double, big number, verbatim string, map and set, or
// else an array of its elements from 1 up to the first nil.
func (s *Server) writeLuaTable(w *resp.Writer, run *scriptRun, t *lua.LTable, depth int) {
	if e, ok := t.RawGetString("err").(lua.LString); ok {
		msg := string(e)
		s.writeScriptErrorReply(w, run, msg, t.RawGetString("ignore_error_stats_update") == lua.LTrue)
		return
	}
	if ok, isStr := t.RawGetString("ok").(lua.LString); isStr {
		w.Simple(string(ok))
		return
	}
	if d, ok := t.RawGetString("double").(lua.LNumber); ok {
		w.Double(float64(d))
		return
	}
	if b, ok := t.RawGetString("big_number").(lua.LString); ok {
		w.BigNumber(string(b))
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		format, fok := vt.RawGetString("format").(lua.LString)
		str, sok := vt.RawGetString("string").(lua.LString)
		if fok && sok && len(format) >= 3 {
			w.Verbatim(string(format[:3]), []byte(str))
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		var kv []lua.LValue
		m.ForEach(func(k, v lua.LValue) { kv = append(kv, k, v) })
		w.Map(len(kv) / 2)
		for _, x := range kv {
			s.writeLuaReply(w, run, x, depth+1)
		}
		return
	}
	if set, ok := t.RawGetString("set").(*lua.LTable); ok {
		var keys []lua.LValue
		set.ForEach(func(k, _ lua.LValue) { keys = append(keys, k) })
		w.Set(len(keys))
		for _, k := range keys {
			s.writeLuaReply(w, run, k, depth+1)
		}
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		s.writeLuaReply(w, run, t.RawGetInt(i), depth+1)
	}
}

func luaSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		luaRaise(L, errTable(L, "wrong number of arguments"))
	}
	sum := sha1.Sum([]byte(L.ToString(1)))
	L.Push(lua.LString(hex.EncodeToString(sum[:])))
	return 1
}

// luaErrorReply is redis.error_reply: {err = msg}, the code ERR if msg
// has none.
func luaErrorReply(L *lua.LState) int {
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		L.Push(errTable(L, "wrong number or type of arguments"))
		return 1
	}
	msg := L.ToString(1)
	if !strings.HasPrefix(msg, "-") {
		msg = "-" + msg
	}
	L.Push(errTable(L, msg))
	return 1
}

// luaStatusReply is redis.status_reply: {ok = msg}.
func luaStatusReply(L *lua.LState) int {
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		L.Push(errTable(L, "wrong number or type of arguments"))
		return 1
	}
	L.Push(wrapTable(L, "ok", L.Get(1)))
	return 1
}

// luaLog is redis.log(level, ...): the arguments that are strings or
// numbers, joined by spaces, logged at the level if the server logs it.
func (s *Server) luaLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		luaRaise(L, errTable(L, "redis.log() requires two arguments or more."))
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if !ok {
		if str, isStr := L.Get(1).(lua.LString); isStr {
			f, err := strconv.ParseFloat(strings.TrimSpace(string(str)), 64)
			lv, ok = lua.LNumber(f), err == nil
		}
	}
	if !ok {
		luaRaise(L, errTable(L, "First argument must be a number (log level)."))
	}
	level := int(lv)
	if level < 0 || level > 3 {
		luaRaise(L, errTable(L, "Invalid debug level."))
	}
	var parts []string
	for i := 2; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString, lua.LNumber:
			parts = append(parts, v.String())
		}
	}
	msg := strings.Join(parts, " ")
	switch level {
	case 0:
		s.log.Debug(msg, "from", "script")
	case 1, 2:
		s.log.Info(msg, "from", "script")
	default:
		s.log.Warn(msg, "from", "script")
	}
	return 0
}

// luaSetResp is redis.setresp(2 or 3): the protocol the script's commands
// reply in.
func (s *Server) luaSetResp(L *lua.LState) int {
	run := s.scripts.run
	if run == nil {
		luaRaise(L, errTable(L, "redis.setresp can only be called inside a script invocation"))
	}
	if L.GetTop() != 1 {
		luaRaise(L, errTable(L, "redis.setresp() requires one argument."))
	}
	p := int(L.ToNumber(1))
	if p != 2 && p != 3 {
		luaRaise(L, errTable(L, "RESP version must be 2 or 3."))
	}
	run.client.proto = p
	return 0
}

// luaSetRepl is redis.set_repl: its flags are checked, and the log,
// evkv's one target, gets the script's changes or not.
func (s *Server) luaSetRepl(L *lua.LState) int {
	run := s.scripts.run
	if run == nil {
		luaRaise(L, errTable(L, "redis.set_repl can only be called inside a script invocation"))
	}
	if L.GetTop() != 1 {
		luaRaise(L, errTable(L, "redis.set_repl() requires two arguments."))
	}
	flags := int(L.ToNumber(1))
	if flags&^3 != 0 {
		luaRaise(L, errTable(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."))
	}
	run.noLog = flags&1 == 0
	return 0
}

// luaACLCheckCmd is redis.acl_check_cmd: evkv has one user, who may run
// every command; an unknown one is an error.
func (s *Server) luaACLCheckCmd(L *lua.LState) int {
	if s.scripts.run == nil {
		luaRaise(L, errTable(L, "redis.acl_check_cmd can only be called inside a script invocation"))
	}
	args, msg := luaArgs(L, nil)
	if msg != "" {
		luaRaise(L, errTable(L, msg))
	}
	if lookupCommand(args) == nil {
		luaRaise(L, errTable(L, "Invalid command passed to redis.acl_check_cmd()"))
	}
	L.Push(lua.LTrue)
	return 1
}

// rand48 is the generator behind math.random, Redis's redisLrand48: the
// 48-bit linear congruential generator of POSIX's lrand48, its state kept
// across scripts and SCRIPT FLUSH, as Redis keeps it.
type rand48 uint64

const rand48Init = rand48(0x1234ABCD330E)

// next returns the next 31-bit number.
func (r *rand48) next() int32 {
	*r = (0x5DEECE66D*(*r) + 0xB) & (1<<48 - 1)
	return int32(*r >> 17)
}

// seed starts the sequence again from seed, as srand48 does.
func (r *rand48) seed(seed int32) {
	*r = rand48(uint64(uint32(seed))<<16 | 0x330E)
}

// luaRandom is math.random, on rand48, as Redis's redis_math_random.
func (s *Server) luaRandom(L *lua.LState) int {
	if s.scripts.run == nil {
		L.RaiseError("math.random can only be called inside a script invocation")
	}
	const max = math.MaxInt32
	r := float64(s.scripts.rand.next()%max) / max
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.RaiseError("bad argument #1 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.RaiseError("bad argument #2 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

// luaRandomSeed is math.randomseed.
func (s *Server) luaRandomSeed(L *lua.LState) int {
	if s.scripts.run == nil {
		L.RaiseError("math.randomseed can only be called inside a script invocation")
	}
	s.scripts.rand.seed(int32(L.CheckInt(1)))
	return 0
}
