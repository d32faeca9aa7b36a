package lualib

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// randomValueSource writes, as Lua source, a random value whose encodings
// do not depend on table order: scalars, arrays, and tables of one key.
// Numbers are drawn from all of float64's bit patterns as well as from small
// integers and simple fractions.
func randomValueSource(rng *rand.Rand, depth int) string {
	switch k := rng.Intn(10); {
	case k < 4:
		return randomNumberSource(rng)
	case k < 6:
		var b strings.Builder
		for n := rng.Intn(40); n > 0; n-- {
			b.WriteByte(byte(rng.Intn(256)))
		}
		return luaQuote(b.String())
	case k == 6:
		return []string{"true", "false", "nil", "cjson.null"}[rng.Intn(4)]
	case depth > 3:
		return "{}"
	case k < 9:
		items := make([]string, rng.Intn(6))
		for i := range items {
			items[i] = randomValueSource(rng, depth+1)
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	return "{[" + randomValueSource(rng, 4) + "] = " + randomValueSource(rng, depth+1) + "}"
}

// randomNumberSource writes a random finite number as a Lua literal that
// both Lua 5.1 and gopher-lua read back exactly.
func randomNumberSource(rng *rand.Rand) string {
	var f float64
	switch rng.Intn(4) {
	case 0:
		f = float64(rng.Int63n(1<<20) - 1<<19)
	case 1:
		f = float64(rng.Int63n(1<<40)) / float64(int64(1)<<rng.Intn(40))
	case 2:
		f = float64(rng.Int63()) * float64(1-2*rng.Intn(2))
	default:
		f = math.Float64frombits(rng.Uint64())
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0.5
	}
	s := strconv.FormatFloat(f, 'g', 17, 64)
	if f < 0 {
		s = "(" + s + ")"
	}
	return s
}

// TestRandomValuesDifferential compares cjson.encode and cmsgpack.pack with
// Redis's on random values (the generator is seeded, so every run tests the
// same values), and what decode and unpack make of the results.
func TestRandomValuesDifferential(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var chunks []string
	for i := 0; i < 300; i++ {
		v := randomValueSource(rng, 0)
		chunks = append(chunks,
			"return cjson.encode("+v+")",
			"return cjson.decode(cjson.encode("+v+"))",
			"return cmsgpack.pack("+v+")",
			"return cmsgpack.unpack(cmsgpack.pack("+v+"))")
	}
	compareWithRedis(t, chunks)
	t.Logf("%d cases", len(chunks))
}
