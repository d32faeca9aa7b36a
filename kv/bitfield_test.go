package kv

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evloop/evloop/resp"
)

// bitfieldCases are BITFIELD's overflow behaviours at the limits of
// signed and unsigned types, with Redis 7.0.15's replies ("nil" where an
// OVERFLOW FAIL fails). Each runs on a key of its own.
var bitfieldCases = []struct {
	name string
	args string
	want string
}{
	{"u8 wrap up", "OVERFLOW WRAP SET u8 0 255 INCRBY u8 0 1", "0 0"},
	{"u8 sat", "OVERFLOW SAT SET u8 0 250 INCRBY u8 0 10 INCRBY u8 0 -300", "0 255 0"},
	{"u8 fail", "OVERFLOW FAIL SET u8 0 250 INCRBY u8 0 10 GET u8 0", "0 nil 250"},
	{"i8 wrap up", "OVERFLOW WRAP SET i8 0 127 INCRBY i8 0 1", "0 -128"},
	{"i8 sat", "OVERFLOW SAT SET i8 0 120 INCRBY i8 0 10 SET i8 0 -120 INCRBY i8 0 -10", "0 127 127 -128"},
	{"i8 fail", "OVERFLOW FAIL SET i8 0 127 INCRBY i8 0 1 INCRBY i8 0 -256", "0 nil nil"},
	{"i64 wrap", "OVERFLOW WRAP SET i64 0 9223372036854775807 INCRBY i64 0 1 INCRBY i64 0 -1", "0 -9223372036854775808 9223372036854775807"},
	{"i64 sat", "OVERFLOW SAT SET i64 0 9223372036854775807 INCRBY i64 0 1 SET i64 0 -9223372036854775808 INCRBY i64 0 -1",
		"0 9223372036854775807 9223372036854775807 -9223372036854775808"},
	{"i64 fail", "OVERFLOW FAIL SET i64 0 -9223372036854775808 INCRBY i64 0 -1 INCRBY i64 0 9223372036854775807 INCRBY i64 0 1", "0 nil -1 0"},
	{"u63 wrap", "OVERFLOW WRAP SET u63 0 9223372036854775807 INCRBY u63 0 1 INCRBY u63 0 -1", "0 0 9223372036854775807"},
	{"u63 sat", "OVERFLOW SAT SET u63 0 9223372036854775807 INCRBY u63 0 1 INCRBY u63 0 -9223372036854775808", "0 9223372036854775807 0"},
	{"one bit", "OVERFLOW WRAP SET u1 0 1 INCRBY u1 0 1 SET i1 0 1 GET i1 0 INCRBY i1 0 1", "0 0 0 -1 0"},
	{"set out of range sat", "OVERFLOW SAT SET u8 0 -1 SET u8 0 256 SET i8 0 128 SET i8 0 -129 GET i8 0", "0 255 -1 127 -128"},
	{"set out of range wrap", "OVERFLOW WRAP SET u8 0 -1 SET u8 0 256 SET i8 0 128 SET i8 0 -129 GET i8 0", "0 255 0 -128 127"},
	{"set out of range fail", "OVERFLOW FAIL SET u8 0 -1 SET u8 0 256 SET i8 0 128 SET i8 0 -129 GET i8 0", "nil nil nil nil 0"},
	{"below zero", "OVERFLOW WRAP INCRBY u8 0 -1 OVERFLOW SAT INCRBY u8 8 -1 OVERFLOW FAIL INCRBY u8 16 -1", "255 0 nil"},
	{"int64 increments", "OVERFLOW WRAP INCRBY u2 3 -9223372036854775808 INCRBY i3 5 9223372036854775807 OVERFLOW SAT INCRBY i3 5 -9223372036854775808",
		"0 -1 -4"},
	{"set sat far below", "OVERFLOW SAT SET i8 0 -9223372036854775680 SET i8 0 -9223372036854775681 GET i8 0", "0 -128 127"},
	{"overflow applies after", "SET u4 0 15 INCRBY u4 0 1 OVERFLOW SAT INCRBY u4 0 20 OVERFLOW WRAP INCRBY u4 0 1", "0 0 15 0"},
	{"unaligned", "SET i16 3 -2 GET u16 3 GET u8 0 GET u8 8 GET u8 16 INCRBY i16 3 1 GET i16 3", "0 65534 31 255 192 -1 -1"},
}

// TestBitfieldOverflow runs bitfieldCases on evkv and, when it is
// installed, on Redis.
func TestBitfieldOverflow(t *testing.T) {
	_, addr := startServer(t, Config{})
	servers := map[string]string{"evkv": addr}
	if _, err := exec.LookPath("redis-server"); err == nil {
		servers["redis"] = redisServer(t)
	}
	for name, a := range servers {
		rc := dialRaw(t, a)
		for i, tc := range bitfieldCases {
			args := append([]string{"BITFIELD", "bf" + strconv.Itoa(i)}, strings.Fields(tc.args)...)
			if got := intsReply(t, rc.do(args...)); got != tc.want {
				t.Errorf("%s, %s: %q = %s; want %s", name, tc.name, args, got, tc.want)
			}
		}
	}
}

// intsReply formats an array of integers and nulls as "1 nil -2".
func intsReply(t *testing.T, reply string) string {
	t.Helper()
	v, _, err := resp.Parse([]byte(reply))
	if err != nil || v.Type != resp.Array {
		return reply
	}
	out := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		if e.Type == resp.Integer {
			out[i] = strconv.FormatInt(e.Int, 10)
		} else {
			out[i] = "nil"
		}
	}
	return strings.Join(out, " ")
}

// TestCompatBitfieldLimits compares with Redis's every SET and INCRBY of
// fields of widths at and around the limits, from values at the limits
// of each type, with each overflow behaviour, at an unaligned offset.
func TestCompatBitfieldLimits(t *testing.T) {
	values := []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt32, -129, -128, -2, -1, 0, 1, 2, 127, 128, 255, 256,
		math.MaxInt32, math.MaxInt64 - 1, math.MaxInt64}
	var script [][]string
	for _, typ := range []string{"i1", "i2", "i7", "i8", "i9", "i32", "i62", "i63", "i64", "u1", "u2", "u7", "u8", "u9", "u32", "u62", "u63"} {
		bits, _ := strconv.Atoi(typ[1:])
		lo, hi := int64(0), int64(1)<<bits-1
		if typ[0] == 'i' {
			lo, hi = -1<<(bits-1), 1<<(bits-1)-1
		}
		starts := []string{strconv.FormatInt(lo, 10), strconv.FormatInt(lo+1, 10), "0", strconv.FormatInt(hi-1, 10), strconv.FormatInt(hi, 10)}
		for _, mode := range []string{"WRAP", "SAT", "FAIL"} {
			for _, v := range values {
				script = append(script, []string{"BITFIELD", "k", "OVERFLOW", mode, "SET", typ, "5", strconv.FormatInt(v, 10), "GET", typ, "5"})
			}
			for _, start := range starts {
				for _, by := range append(values, lo, hi, -hi, hi-lo) {
					script = append(script, []string{"BITFIELD", "k", "OVERFLOW", "WRAP", "SET", typ, "5", start,
						"OVERFLOW", mode, "INCRBY", typ, "5", strconv.FormatInt(by, 10), "GET", typ, "5", "GET", "u8", "0"})
				}
			}
		}
	}
	compareWithRedis(t, script)
}

// TestBitfieldOverflowModel checks SET and INCRBY of random values of
// every type and behaviour against arithmetic without limits: a result
// in the type's range is stored, one outside it wraps modulo 2^bits
// (WRAP), is clamped (SAT) or fails (FAIL). SET of an unsigned field
// reads its value as a 64-bit unsigned number, and SET of a signed one
// saturates a value below max-2^63 to max, as Redis's do.
func TestBitfieldOverflowModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	random := func() int64 {
		switch rng.IntN(3) {
		case 0:
			return int64(rng.Uint64())
		case 1:
			return rng.Int64N(1<<20) - 1<<19
		}
		return int64(rng.Uint64() >> rng.IntN(64))
	}
	for range 200000 {
		o := bitfieldOp{signed: rng.IntN(2) == 0, op: bfSet + uint8(rng.IntN(2)), overflow: uint8(rng.IntN(3)), value: random()}
		o.bits = uint8(1 + rng.IntN(63))
		if o.signed {
			o.bits = uint8(1 + rng.IntN(64))
		}
		mod := new(big.Int).Lsh(big.NewInt(1), uint(o.bits))
		lo, hi := big.NewInt(0), new(big.Int).Sub(mod, big.NewInt(1))
		if o.signed {
			hi.Rsh(mod, 1).Sub(hi, big.NewInt(1))
			lo.Rsh(mod, 1).Neg(lo)
		}
		was := rng.Uint64() & (^uint64(0) >> (64 - o.bits))
		old := new(big.Int).SetUint64(was)
		if o.signed && old.Cmp(hi) > 0 {
			old.Sub(old, mod)
		}
		sum := big.NewInt(o.value)
		if o.op == bfIncrBy {
			sum.Add(sum, old)
		} else if !o.signed {
			sum.SetUint64(uint64(o.value))
		}
		wantV, wantFail := new(big.Int).Set(sum), false
		if sum.Cmp(lo) < 0 || sum.Cmp(hi) > 0 {
			switch o.overflow {
			case bfWrap:
				wantV.Sub(sum, lo).Mod(wantV, mod).Add(wantV, lo)
			case bfSat:
				wantV.Set(lo)
				// Redis's check computes max-value in 64 bits: for a
				// value below max-2^63 it wraps, and SET saturates up.
				if sum.Cmp(hi) > 0 || (o.signed && o.op == bfSet && o.bits < 64 && o.value < hi.Int64()-math.MaxInt64-1) {
					wantV.Set(hi)
				}
			case bfFail:
				wantFail = true
			}
		}
		wantReply := wantV
		if o.op == bfSet {
			wantReply = old
		}
		reply, v, failed := bitfieldApply(was, o)
		if failed != wantFail || (!failed && (reply != wantReply.Int64() || v != wantV.Uint64()&(^uint64(0)>>(64-o.bits)) && !wantV.IsInt64())) {
			t.Fatalf("%+v on %d: reply %d, bits %#x, failed %v; want %v, %v, failed %v", o, was, reply, v, failed, wantReply, wantV, wantFail)
		}
		if !failed && signExtendIf(v, o) != wantV.Int64() {
			t.Fatalf("%+v on %d: stores %#x; want %v", o, was, v, wantV)
		}
	}
}

// signExtendIf reads v, a field's bits, as o's type does.
func signExtendIf(v uint64, o bitfieldOp) int64 {
	if o.signed {
		return signExtend(v, o.bits)
	}
	return int64(v)
}

// parseBitfieldCases are BITFIELD argument lists and what parseBitfield
// makes of them, at limit bytes: the operations, or the error.
var parseBitfieldCases = []struct {
	name  string
	args  []string
	limit int64
	want  string
}{
	{"none", nil, 1 << 29, "[]"},
	{"get", []string{"GET", "u8", "0"}, 1 << 29, "[get u8@0]"},
	{"each", []string{"get", "i64", "#1", "SET", "u1", "7", "-1", "OVERFLOW", "SAT", "IncrBy", "i5", "100", "3"}, 1 << 29,
		"[get i64@64 set u1@7 -1 wrap incrby i5@100 3 sat] highest 104"},
	{"overflow last", []string{"SET", "u8", "0", "1", "OVERFLOW", "FAIL"}, 1 << 29, "[set u8@0 1 wrap] highest 7"},
	{"overflow missing", []string{"OVERFLOW"}, 1 << 29, "ERR syntax error"},
	{"overflow unknown", []string{"OVERFLOW", "SATURATE"}, 1 << 29, "ERR Invalid OVERFLOW type specified"},
	{"overflow as a C string", []string{"OVERFLOW", "fail\x00x", "INCRBY", "u2", "0", "1"}, 1 << 29, "[incrby u2@0 1 fail] highest 1"},
	{"subcommand as a C string", []string{"GET\x00x", "u8", "0"}, 1 << 29, "[get u8@0]"},
	{"unknown", []string{"DEL", "u8", "0"}, 1 << 29, "ERR syntax error"},
	{"too few", []string{"SET", "u8", "0"}, 1 << 29, "ERR syntax error"},
	{"u64", []string{"GET", "u64", "0"}, 1 << 29, errBitfieldType},
	{"i65", []string{"GET", "i65", "0"}, 1 << 29, errBitfieldType},
	{"upper case", []string{"GET", "U8", "0"}, 1 << 29, errBitfieldType},
	{"type as a C string", []string{"GET", "u8\x00x", "0"}, 1 << 29, "[get u8@0]"},
	{"type's error first", []string{"GET", "u0", "x"}, 1 << 29, errBitfieldType},
	{"offset's error before value's", []string{"SET", "u8", "x", "x"}, 1 << 29, errBitOffset},
	{"value", []string{"SET", "u8", "0", "x"}, 1 << 29, errNotInt},
	{"first error wins", []string{"GET", "u8", "-1", "GET", "u99", "0"}, 1 << 29, errBitOffset},
	{"hash", []string{"GET", "i3", "#5"}, 1 << 29, "[get i3@15]"},
	{"hash wraps", []string{"GET", "u8", "#2305843009213693952"}, 1 << 29, "[get u8@0]"},
	{"hash negative", []string{"GET", "u8", "#-1"}, 1 << 29, errBitOffset},
	{"last byte", []string{"SET", "u8", "8388607", "0"}, 1 << 20, "[set u8@8388607 0 wrap] highest 8388614"},
	{"past the limit", []string{"GET", "u8", "8388608"}, 1 << 20, errBitOffset},
	{"no limit", []string{"GET", "u8", "9223372036854775807"}, -1, "[get u8@9223372036854775807]"},
}

// formatBitfield writes parseBitfield's result as parseBitfieldCases do.
func formatBitfield(p bitfieldArgs, msg string) string {
	if msg != "" {
		return msg
	}
	var ops []string
	for _, o := range p.ops {
		sign := "u"
		if o.signed {
			sign = "i"
		}
		op := fmt.Sprintf("%s %s%d@%d", []string{"get", "set", "incrby"}[o.op], sign, o.bits, o.offset)
		if o.op != bfGet {
			op += fmt.Sprintf(" %d %s", o.value, []string{"wrap", "sat", "fail"}[o.overflow])
		}
		ops = append(ops, op)
	}
	out := "[" + strings.Join(ops, " ") + "]"
	if p.writes {
		out += fmt.Sprintf(" highest %d", p.highest)
	}
	return out
}

func toArgs(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func TestParseBitfield(t *testing.T) {
	for _, tc := range parseBitfieldCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatBitfield(parseBitfield(toArgs(tc.args), tc.limit)); got != tc.want {
				t.Errorf("parseBitfield(%q, %d) = %s; want %s", tc.args, tc.limit, got, tc.want)
			}
		})
	}
}

// FuzzParseBitfield feeds parseBitfield argument lists (split at
// newlines) and checks that it does not panic, answers with one of
// Redis's errors or operations within the limits, and parses again what
// it parsed, written out, to the same operations.
func FuzzParseBitfield(f *testing.F) {
	for _, tc := range parseBitfieldCases {
		f.Add(strings.Join(tc.args, "\n"), tc.limit)
	}
	errs := []string{errSyntax, errBitfieldType, errBitOffset, errNotInt, "ERR Invalid OVERFLOW type specified"}
	f.Fuzz(func(t *testing.T, in string, limit int64) {
		var args [][]byte
		if in != "" {
			args = toArgs(strings.Split(in, "\n"))
		}
		p, msg := parseBitfield(args, limit)
		if msg != "" {
			if !slices.Contains(errs, msg) {
				t.Fatalf("parseBitfield(%q) = error %q; not one of Redis's", args, msg)
			}
			return
		}
		var again []string
		var highest uint64
		writes := false
		for _, o := range p.ops {
			if o.bits < 1 || o.bits > 64 || (!o.signed && o.bits > 63) || (limit >= 0 && o.offset>>3 >= uint64(limit)) || o.offset > math.MaxInt64 {
				t.Fatalf("parseBitfield(%q) = %+v; out of range", args, o)
			}
			sign := "u"
			if o.signed {
				sign = "i"
			}
			typ, off := sign+strconv.Itoa(int(o.bits)), strconv.FormatUint(o.offset, 10)
			switch o.op {
			case bfGet:
				again = append(again, "GET", typ, off)
			default:
				writes = true
				highest = max(highest, o.offset+uint64(o.bits)-1)
				again = append(again, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[o.overflow],
					[]string{"", "SET", "INCRBY"}[o.op], typ, off, strconv.FormatInt(o.value, 10))
			}
		}
		if p.writes != writes || p.highest != highest {
			t.Fatalf("parseBitfield(%q) = writes %v, highest %d; its operations say %v, %d", args, p.writes, p.highest, writes, highest)
		}
		q, msg := parseBitfield(toArgs(again), limit)
		if got, want := formatBitfield(q, msg), formatBitfield(p, ""); got != want {
			t.Fatalf("parseBitfield(%q) = %s; written out as %q it parses to %s", args, want, again, got)
		}
	})
}
