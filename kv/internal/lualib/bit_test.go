package lualib

import "testing"

// bitNumbers are arguments for the bit operations, as Lua source.
var bitNumbers = []string{
	`0`, `1`, `-1`, `2`, `31`, `32`, `33`, `-33`, `0x7fffffff`, `0x80000000`, `0xffffffff`, `2^32`, `2^32 + 5`,
	`-2^31`, `-2^31 - 1`, `2^52`, `2^53`, `2^60 + 3`, `-2^60`, `1.5`, `2.5`, `-1.5`, `-2.5`, `0.49999999999999994`,
	`1e300`, `-1e300`, `1/0`, `-1/0`, `0/0`, `"10"`, `"0x10"`, `" 7 "`, `"1e3"`, `"x"`, `""`, `nil`, `true`, `{}`,
	`0x12345678`, `0xdeadbeef`, `-0.0`,
}

// TestBitDifferential compares bit with Redis's LuaBitOp.
func TestBitDifferential(t *testing.T) {
	var chunks []string
	for _, fn := range []string{"tobit", "bnot", "bswap", "tohex"} {
		for _, x := range bitNumbers {
			chunks = append(chunks, "return bit."+fn+"("+x+")")
		}
	}
	shifts := []string{`0`, `1`, `4`, `31`, `32`, `33`, `-1`, `-31`, `100`, `2.5`, `"3"`, `nil`, `"x"`}
	values := []string{`1`, `-1`, `0x80000000`, `0x12345678`, `7.5`, `"255"`, `{}`, `2^40 + 1`}
	for _, fn := range []string{"lshift", "rshift", "arshift", "rol", "ror"} {
		for _, x := range values {
			for _, n := range shifts {
				chunks = append(chunks, "return bit."+fn+"("+x+", "+n+")")
			}
		}
		chunks = append(chunks, "return bit."+fn+"()", "return bit."+fn+"(1)")
	}
	for _, fn := range []string{"band", "bor", "bxor"} {
		chunks = append(chunks,
			"return bit."+fn+"()",
			"return bit."+fn+"(0x0f0f)",
			"return bit."+fn+"(0x0f0f, 0x00ff)",
			"return bit."+fn+"(0x0f0f, 0x00ff, 0xf000)",
			"return bit."+fn+"(-1, 2^32 + 3, \"12\", 5.5)",
			"return bit."+fn+"(1, 2, nil)",
			"return bit."+fn+"(1, {}, nil)",
			"return bit."+fn+"(1, nil, {})",
			"return bit."+fn+"(0, 0)",
			"return bit."+fn+"(0x80000000, 0x80000000)",
			"return bit."+fn+"(1, 2, 4, 8, 16, 32, 64, 128)",
		)
	}
	for _, n := range []string{`0`, `1`, `2`, `7`, `8`, `9`, `100`, `-1`, `-4`, `-8`, `-9`, `-100`, `2^32 - 3`, `"4"`, `nil`, `"x"`, `0/0`} {
		chunks = append(chunks, "return bit.tohex(0x1234abcd, "+n+")", "return bit.tohex(-1, "+n+")")
	}
	chunks = append(chunks,
		`return bit.tohex()`,
		`return bit.tobit()`,
		`local t = {} for k in pairs(bit) do t[#t + 1] = k end table.sort(t) return table.concat(t, " ")`,
		`local t = {} for k in pairs(struct) do t[#t + 1] = k end table.sort(t) return table.concat(t, " ")`,
		`local t = {} for k in pairs(cmsgpack) do t[#t + 1] = k end table.sort(t) return table.concat(t, " ")`,
		`local t = {} for k in pairs(cjson) do t[#t + 1] = k end table.sort(t) return table.concat(t, " ")`,
		`local s = 0 for i = 1, 1000 do s = bit.bxor(bit.rol(s, 5), i * 2654435761) end return s`,
		`return bit.tobit(0xffffffff + 1), bit.tobit(2^31), bit.bnot(bit.bnot(12345))`,
	)
	compareWithRedis(t, chunks)
	t.Logf("%d cases", len(chunks))
}
