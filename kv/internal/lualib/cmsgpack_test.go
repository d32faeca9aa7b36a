package lualib

import "testing"

// cmsgpackValues are values, as Lua source, for pack to encode as Redis's
// cmsgpack does.
var cmsgpackValues = []string{
	`nil`, `true`, `false`, `0`, `-0.0`, `1`, `127`, `128`, `255`, `256`, `65535`, `65536`, `2^32 - 1`, `2^32`,
	`2^53`, `2^53 + 2`, `2^62`, `2^63`, `2^63 + 2^11`, `2^64`, `2^70`, `-1`, `-31`, `-32`, `-33`, `-127`, `-128`, `-129`,
	`-32767`, `-32768`, `-32769`, `-2^31`, `-2^31 - 1`, `-2^53`, `-2^63`, `-2^63 - 2^11`, `-2^64`,
	`0.5`, `-0.5`, `1.1`, `0.1`, `1/3`, `1e300`, `-1e300`, `1e-300`, `1/0`, `-1/0`, `0/0`, `3.4028234663852886e38`,
	`3.4028235677973366e38`, `1.401298464324817e-45`, `1e-45`, `2^-149`, `2^-150`, `16777217`, `16777216.5`,
	`2^24 + 0.5`, `123456.789`, `-2.75`,
	`""`, `"a"`, `string.rep("x", 31)`, `string.rep("x", 32)`, `string.rep("x", 255)`, `string.rep("x", 256)`,
	`string.rep("x", 65535)`, `string.rep("x", 65536)`, `"\0\1\255"`,
	`{}`, `{1}`, `{1, 2, 3}`, `{"a", "b"}`, `{1, nil, 3}`, `{nil, 2}`, `{[2] = 2}`, `{[0] = 0}`, `{[-1] = 1}`,
	`{[1.5] = 1}`, `{[2^31] = 1}`, `{[2^31 - 1] = 1}`, `{[1] = 1, [2] = 2, [4] = 4}`, `{a = 1}`, `{["1"] = 1}`,
	`{[true] = 1}`, `{[{}] = 1}`, `{[{1}] = {2}}`, `{a = {b = {c = {}}}}`, `{{}, {{}}}`,
	`{tostring}`, `{a = tostring}`, `tostring`, `cjson.null`, `{cjson.null}`, `coroutine.create(function() end)`,
	`{1, 1.5, "s", true, false, {}}`, `{0/0}`, `{1/0, -1/0}`,
}

// cmsgpackChunks are further cases: several values, nesting, big tables,
// unpack_one, unpack_limit and bad input.
var cmsgpackChunks = []string{
	`return cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION`,
	`return cmsgpack.pack()`,
	`return pcall(cmsgpack.pack)`,
	`return cmsgpack.pack(1, 2, 3)`,
	`return cmsgpack.pack(nil, nil)`,
	`return cmsgpack.pack(1, "a", {1, 2}, nil, true)`,
	`return cmsgpack.unpack(cmsgpack.pack(1, "a", {1, 2}, nil, true))`,
	`local t = {} for i = 1, 15 do t[i] = i end return cmsgpack.pack(t)`,
	`local t = {} for i = 1, 16 do t[i] = i end return cmsgpack.pack(t)`,
	`local t = {} for i = 1, 65535 do t[i] = i % 7 end return #cmsgpack.pack(t), cmsgpack.pack(t):sub(1, 8)`,
	`local t = {} for i = 1, 65536 do t[i] = i % 7 end return #cmsgpack.pack(t), cmsgpack.pack(t):sub(1, 8)`,
	`local t = {} for i = 1, 15 do t["k" .. i] = i end return #cmsgpack.pack(t), cmsgpack.pack(t):sub(1, 1), cmsgpack.unpack(cmsgpack.pack(t))`,
	`local t = {} for i = 1, 16 do t["k" .. i] = i end return #cmsgpack.pack(t), cmsgpack.pack(t):sub(1, 3), cmsgpack.unpack(cmsgpack.pack(t))`,
	`local t = {} for i = 1, 70000 do t["k" .. i] = i end local s = cmsgpack.pack(t) return #s, s:sub(1, 5)`,
	`local t = {} for i = 1, 15 do t = {t} end return cmsgpack.pack(t)`,
	`local t = {} for i = 1, 16 do t = {t} end return cmsgpack.pack(t)`,
	`local t = {} for i = 1, 17 do t = {t} end return cmsgpack.pack(t)`,
	`local t = {} for i = 1, 20 do t = {a = t} end return cmsgpack.pack(t)`,
	`local t = {} t[1] = t return cmsgpack.pack(t)`,
	`local t = {} t.a = t return cmsgpack.pack(t)`,
	`local t = {} t[t] = 1 return cmsgpack.pack(t)`,
	`local t = setmetatable({}, {__index = function() return 1 end}) return cmsgpack.pack(t)`,
	`return cmsgpack.unpack("")`,
	`return cmsgpack.unpack()`,
	`return cmsgpack.unpack({})`,
	`return cmsgpack.unpack(12)`,
	`return cmsgpack.unpack("\1\2\3", "extra")`,
	`return cmsgpack.unpack("\129\192\1")`,
	`return cmsgpack.unpack("\129\1\192")`,
	`return cmsgpack.unpack("\129\203\127\248\0\0\0\0\0\0\1")`,
	`return cmsgpack.unpack("\130\1\2\1\3")`,
	`return cmsgpack.unpack("\146\1")`,
	`return cmsgpack.unpack("\220\0\1")`,
	`return cmsgpack.unpack("\221\255\255\255\255")`,
	`return cmsgpack.unpack("\223\255\255\255\255\1")`,
	`return cmsgpack.unpack(string.rep("\145", 3000) .. "\1")`,
	`return cmsgpack.unpack(string.rep("\145", 3998) .. "\1")`,
	`return cmsgpack.unpack(string.rep("\145", 3999) .. "\1")`,
	`return cmsgpack.unpack(string.rep("\145", 4000) .. "\1")`,
	`return cmsgpack.unpack(string.rep("\129\1", 3998) .. "\1")`,
	`return cmsgpack.unpack(string.rep("\129\1", 3999) .. "\1")`,
	`return cmsgpack.unpack(string.rep("\129\1", 4000) .. "\1")`,
	`return cmsgpack.unpack(string.rep("\129\145", 2000) .. "\1")`,
	`return select("#", cmsgpack.unpack(string.rep("\1", 7998)))`,
	`return select("#", cmsgpack.unpack(string.rep("\1", 7999)))`,
	`return select("#", cmsgpack.unpack(string.rep("\1", 8000)))`,
	`return select("#", cmsgpack.unpack(string.rep("\1", 7998), 1))`,
	`return select("#", cmsgpack.unpack_limit(string.rep("\1", 9000), 7998))`,
	`return select("#", cmsgpack.unpack_limit(string.rep("\1", 9000), 7999))`,
	`return select("#", cmsgpack.unpack_limit(string.rep("\1", 9000), 7999, 0, "x"))`,
	`return select("#", cmsgpack.unpack_limit(string.rep("\1", 9000), 7997, 0))`,
	`return cmsgpack.unpack_one("")`,
	`return cmsgpack.unpack_one("\1\2\3")`,
	`return cmsgpack.unpack_one("\1\2\3", 0)`,
	`return cmsgpack.unpack_one("\1\2\3", 1)`,
	`return cmsgpack.unpack_one("\1\2\3", 2)`,
	`return cmsgpack.unpack_one("\1\2\3", 3)`,
	`return cmsgpack.unpack_one("\1\2\3", 4)`,
	`return cmsgpack.unpack_one("\1\2\3", -1)`,
	`return cmsgpack.unpack_one("\1\2\3", 2^32 + 1)`,
	`return cmsgpack.unpack_one("\1\2\3", 1.9)`,
	`return cmsgpack.unpack_one("\1\2\3", "1")`,
	`return cmsgpack.unpack_one("\1\2\3", "x")`,
	`return cmsgpack.unpack_one("\1\2\3", {})`,
	`return cmsgpack.unpack_one("\1\2\3", nil)`,
	`return cmsgpack.unpack_one("\1\2\3", 1, 2)`,
	`return cmsgpack.unpack_one("\205\1")`,
	`return cmsgpack.unpack_one("\1\205\1", 1)`,
	`return cmsgpack.unpack_one("\1\193", 1)`,
	`return cmsgpack.unpack_limit("\1\2\3")`,
	`return cmsgpack.unpack_limit("\1\2\3", 0)`,
	`return cmsgpack.unpack_limit("\1\2\3", 0, 0)`,
	`return cmsgpack.unpack_limit("\1\2\3", 0, 1)`,
	`return cmsgpack.unpack_limit("\1\2\3", 1)`,
	`return cmsgpack.unpack_limit("\1\2\3", 2)`,
	`return cmsgpack.unpack_limit("\1\2\3", 3)`,
	`return cmsgpack.unpack_limit("\1\2\3", 4)`,
	`return cmsgpack.unpack_limit("\1\2\3", 2, 1)`,
	`return cmsgpack.unpack_limit("\1\2\3", 2, 2)`,
	`return cmsgpack.unpack_limit("\1\2\3", 1, 3)`,
	`return cmsgpack.unpack_limit("\1\2\3", 1, 4)`,
	`return cmsgpack.unpack_limit("\1\2\3", -1)`,
	`return cmsgpack.unpack_limit("\1\2\3", 1, -5)`,
	`return cmsgpack.unpack_limit("\1\2\3", "2")`,
	`return cmsgpack.unpack_limit("\1\2\3", nil)`,
	`return cmsgpack.unpack_limit("\1\2\3", {})`,
	`return cmsgpack.unpack_limit(nil, 1)`,
	`return cmsgpack.unpack_limit("\1\2\3", 2^40)`,
	`local s = cmsgpack.pack(1, {2, 3}, "four") local out, off = {}, 0 while off ~= -1 do local v off, v = cmsgpack.unpack_one(s, off) out[#out + 1] = v end return out`,
}

// cmsgpackBytes are byte strings for unpack, good and bad.
var cmsgpackBytes = []string{
	"\x00", "\x7f", "\x80", "\x8f", "\x90", "\x9f", "\xa0", "\xbf", "\xc0", "\xc1", "\xc2", "\xc3",
	"\xc4\x01a", "\xc5\x00\x01a", "\xc6\x00\x00\x00\x01a", "\xc7\x01\x01a", "\xc8", "\xc9",
	"\xca", "\xca\x3f\x80\x00\x00", "\xca\x7f\xc0\x00\x00", "\xca\xff\x80\x00\x00", "\xca\x00\x00\x00\x01", "\xca\x3f\x80\x00",
	"\xcb", "\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00", "\xcb\x7f\xf8\x00\x00\x00\x00\x00\x01", "\xcb\x00\x00\x00\x00\x00\x00\x00\x01", "\xcb\x3f\xf0",
	"\xcc", "\xcc\xff", "\xcd\xff", "\xcd\xff\xff", "\xce\xff\xff\xff\xff", "\xce\xff\xff\xff",
	"\xcf\xff\xff\xff\xff\xff\xff\xff\xff", "\xcf\x7f\xff\xff\xff\xff\xff\xff\xff", "\xcf\x80\x00\x00\x00\x00\x00\x00\x00",
	"\xcf\x00\x20\x00\x00\x00\x00\x00\x01", "\xcf\x00",
	"\xd0", "\xd0\x80", "\xd0\x7f", "\xd1\x80\x00", "\xd1\xff\x01", "\xd1\x7f\xff", "\xd1\x01",
	"\xd2\x80\x00\x00\x00", "\xd2\xff\xff\xff\xff", "\xd2\x7f\xff\xff\xff", "\xd2\x00\x00",
	"\xd3\x80\x00\x00\x00\x00\x00\x00\x00", "\xd3\xff\xff\xff\xff\xff\xff\xff\xff", "\xd3\x00\x20\x00\x00\x00\x00\x00\x01", "\xd3",
	"\xd4\x01\x01", "\xd5", "\xd6", "\xd7", "\xd8",
	"\xd9", "\xd9\x00", "\xd9\x03abc", "\xd9\x04abc", "\xda\x00\x03abc", "\xda\x00", "\xda\x00\x04abc",
	"\xdb\x00\x00\x00\x03abc", "\xdb\x00\x00\x00\x04abc", "\xdb\x00\x00", "\xdb\xff\xff\xff\xffabc",
	"\xdc\x00\x02\x01\x02", "\xdc\x00\x03\x01\x02", "\xdc\x00", "\xdd\x00\x00\x00\x02\x01\x02", "\xdd\x00\x00\x00",
	"\xde\x00\x01\x01\x02", "\xde\x00\x01\x01", "\xde", "\xdf\x00\x00\x00\x01\xa1a\x02", "\xdf\x00\x00\x00\x02\xa1a\x02",
	"\xe0", "\xff", "\xa3abc", "\xa3ab", "\x93\x01\x02\x03", "\x93\x01\x02", "\x82\xa1a\x01\xa1b\x02",
	"\x82\xa1a\x01\xa1a\x02", "\x81\x01\x02", "\x81\x93\x01\x02\x03\xc3", "\x92\x90\x80", "\x91\xc1",
	"\x01\x02\xc1\x03", "\x01\xc1", "\xc1\x01", "\x01\xdc\x00", "\x94\xc0\xc0\x01\xc0", "\x81\x01\x81\x02\x80",
}

// TestCmsgpackDifferential compares cmsgpack with Redis's: packing (the
// bytes, or for maps of several entries what unpack makes of them), unpacking
// and errors.
func TestCmsgpackDifferential(t *testing.T) {
	var chunks []string
	for _, v := range cmsgpackValues {
		chunks = append(chunks,
			"local t = "+v+" local s = cmsgpack.pack(t) local multi = false "+
				"if type(t) == 'table' then local n = 0 for _ in pairs(t) do n = n + 1 end multi = n > 1 end "+
				"if multi then return #s, cmsgpack.unpack(s) end return s",
			"return cmsgpack.unpack(cmsgpack.pack("+v+"))",
			"return cmsgpack.pack("+v+", "+v+", 7):len()")
	}
	for _, b := range cmsgpackBytes {
		chunks = append(chunks,
			"return cmsgpack.unpack("+luaQuote(b)+")",
			"return cmsgpack.unpack_one("+luaQuote(b)+")",
			"return cmsgpack.unpack_limit("+luaQuote(b+b)+", 1, 1)")
	}
	chunks = append(chunks, cmsgpackChunks...)
	compareWithRedis(t, chunks)
	t.Logf("%d cases", len(chunks))
}
