package lualib

import (
	"math/rand"
	"testing"
)

// mutations derives n inputs from seeds by a fixed sequence of random byte
// edits (the generator is seeded, so every run tests the same inputs).
func mutations(seed int64, seeds []string, alphabet string, n int) []string {
	rng := rand.New(rand.NewSource(seed))
	out := make([]string, 0, n)
	for len(out) < n {
		b := []byte(seeds[rng.Intn(len(seeds))])
		for edits := 1 + rng.Intn(4); edits > 0; edits-- {
			c := alphabet[rng.Intn(len(alphabet))]
			if rng.Intn(4) == 0 {
				c = byte(rng.Intn(256))
			}
			switch i := rng.Intn(len(b) + 1); rng.Intn(3) {
			case 0:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 1:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				if i < len(b) {
					b[i] = c
				}
			}
		}
		out = append(out, string(b))
	}
	return out
}

// TestMutatedDifferential compares the parsers with Redis's on inputs made
// by editing well-formed ones at random: most are malformed in some way,
// so this checks that errors, and where they are found, agree.
func TestMutatedDifferential(t *testing.T) {
	var chunks []string
	jsonSeeds := []string{`{"a":[1,2.5,-3e2,"x\u00e9\n"],"b":{"c":null,"d":true,"e":false}}`, `[0.1,"\ud83d\ude00",[],{}]`, `"\/\\\"\b"`, `-12.5e+3`}
	for _, s := range mutations(1, jsonSeeds, `{}[]:,"\/bfnrtu0123456789.eE+-xX nulltruefalseinfnan`, 400) {
		chunks = append(chunks, "return cjson.decode("+luaQuote(s)+")")
	}
	msgpackSeeds := []string{
		"\x93\x01\xa1a\x82\xa1k\xc3\x01\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00",
		"\xdc\x00\x02\xcd\x01\x00\xd1\xff\x00\xda\x00\x03abc\xde\x00\x01\x01\x02",
		"\xca\x3f\x80\x00\x00\xcf\x00\x00\x00\x01\x00\x00\x00\x00\xd3\xff\xff\xff\xff\xff\xff\xff\xfe\xc0\xc2",
	}
	for _, s := range mutations(2, msgpackSeeds, "\x00\x01\x7f\x80\x81\x90\x91\xa0\xa1\xc0\xc1\xca\xcb\xcc\xcd\xce\xcf\xd0\xd3\xd9\xdc\xdd\xde\xdf\xe0\xff", 400) {
		chunks = append(chunks,
			"return cmsgpack.unpack("+luaQuote(s)+")",
			"return cmsgpack.unpack_limit("+luaQuote(s)+", 2, 1)")
	}
	formatSeeds := []string{"!4bhi>d<f", "bc0s", "xc3i9I2", "!8bxi7l", "<i3>I5!2hH"}
	data := luaQuote("\x05\x02\x03\x04\x05\x06\x07\x08abc\x00def\xff\xfe\x80\x7f\x00\x00\x00\x00\x00\x00\xf0\x3f")
	for _, f := range mutations(3, formatSeeds, "bBhHlLTiIfdcsx<>! 0123456789z", 400) {
		chunks = append(chunks,
			"return struct.unpack("+luaQuote(f)+", "+data+")",
			"return struct.size("+luaQuote(f)+")",
			"return struct.pack("+luaQuote(f)+", 1, -2, 300, 4.5, 'abcdef', 6, 7, 8, 9, 10)")
	}
	compareWithRedis(t, chunks)
	t.Logf("%d cases", len(chunks))
}
