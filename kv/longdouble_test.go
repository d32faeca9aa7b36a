package kv

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseLongDouble(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // formatted; "" when refused
	}{
		{"0.1", "0.1"}, {"-0", "0"}, {"+1", "1"}, {".5", "0.5"}, {"5.", "5"}, {"1e3", "1000"},
		{"1E+3", "1000"}, {"0x10", "16"}, {"0X1p-3", "0.125"}, {"0x.8", "0.5"}, {"0x1.8P1", "3"},
		{"1e-4940", "0"}, {"00012", "12"},
		{"", ""}, {" 1", ""}, {"1 ", ""}, {"1e", ""}, {"1e+", ""}, {"e5", ""}, {".", ""}, {"0x", ""},
		{"0xg", ""}, {"0x1e5", "485"}, {"0x1p", ""}, {"1_0", ""}, {"0b1", ""}, {"--1", ""}, {"+-1", ""},
		{"nan", ""}, {"NaN", ""}, {"1.2e4932", ""}, {"1e-5000", ""}, {"1e99999999999", ""},
		{"1.1.1", ""}, {"1e1.5", ""}, {strings.Repeat("1", 6000), ""},
	} {
		f, ok := parseLongDouble([]byte(c.in))
		got := ""
		if ok {
			got = formatLongDouble(f)
		}
		if got != c.want {
			t.Errorf("parseLongDouble(%.20q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, in := range []string{"inf", "-Infinity", "+INF"} {
		if f, ok := parseLongDouble([]byte(in)); !ok || !f.IsInf() {
			t.Errorf("parseLongDouble(%q) = %v, %v; want an infinity", in, f, ok)
		}
	}
}

func TestLongDoubleArithmetic(t *testing.T) {
	add := func(a, b string) string {
		x, _ := parseLongDouble([]byte(a))
		y, _ := parseLongDouble([]byte(b))
		s, ok := addLongDouble(x, y)
		if !ok {
			return "overflow"
		}
		return formatLongDouble(s)
	}
	for _, c := range [][3]string{
		{"0.1", "0.2", "0.3"}, // float64 would say 0.30000000000000004
		{"10.5", "0.1", "10.6"},
		{"3", "-3", "0"},
		{"0", "0.000000000000000015", "0.00000000000000002"},
		{"1e308", "1.7e308", "270000000000000000009567971692443241536183696124984889251716860615719198446911789323374945201555265759890886132821655195038843164743370045261608621705416209361987745915922656599499823562086486760190214514061237001183786847875939505094372937644384053381219271253627546974917462710444305561821762946113243971584"},
		{"1.1e4932", "1.1e4932", "overflow"},
		{"1", "inf", "overflow"},
	} {
		if got := add(c[0], c[1]); got != c[2] {
			t.Errorf("%s + %s = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}

func TestTimeoutMillis(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"-0", 0}, {"-0.0001", 0}, {"0.0001", 1}, {"1.5", 1500}, {"0x10", 16000},
		{"9223372036854775", 9223372036854775000}, {"9223372036854776", math.MinInt64},
		{"inf", math.MinInt64}, {"-inf", math.MinInt64}, {"1e400", math.MinInt64}, {"-2", -2000},
	} {
		f, ok := parseLongDouble([]byte(c.in))
		if !ok {
			t.Fatalf("parseLongDouble(%q) refused", c.in)
		}
		if got := timeoutMillis(f); got != c.want {
			t.Errorf("timeoutMillis(%s) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestParseLongDoubleHugeExponentIsQuick(t *testing.T) {
	start := time.Now()
	for _, in := range []string{"1e2147483647", "1e-2147483648", "1e99999999999999999999", "0x1p99999999999"} {
		if _, ok := parseLongDouble([]byte(in)); ok {
			t.Errorf("parseLongDouble(%q) accepted", in)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("parsing four huge exponents took %v", d)
	}
}

// TestCompatNumbers compares with Redis the arithmetic Redis does in long
// double and the numbers it reads with strtold and strtoul.
func TestCompatNumbers(t *testing.T) {
	script := [][]string{
		{"SET", "f", "0.1"}, {"INCRBYFLOAT", "f", "0.2"}, {"INCRBYFLOAT", "f", "0x1p-3"}, {"INCRBYFLOAT", "f", "infinity"},
		{"INCRBYFLOAT", "f", "1e-5000"}, {"INCRBYFLOAT", "f", "1e-4940"}, {"INCRBYFLOAT", "f", "1e4932"},
		{"INCRBYFLOAT", "f", "1.2e4932"}, {"INCRBYFLOAT", "f", "-1.18e4932"}, {"INCRBYFLOAT", "f", " 1"},
		{"INCRBYFLOAT", "f", "1_0"}, {"INCRBYFLOAT", "f", "nan"}, {"INCRBYFLOAT", "f", ""},
		{"SET", "h", "-0.0"}, {"INCRBYFLOAT", "h", "0"}, {"SET", "h", "3"}, {"INCRBYFLOAT", "h", "-3"},
		{"INCRBYFLOAT", "h", "0.000000000000000001"}, {"INCRBYFLOAT", "h", "0.000000000000000015"},
		{"SET", "s", "abc"}, {"INCRBYFLOAT", "s", "1"}, {"LPUSH", "l", "a"}, {"INCRBYFLOAT", "l", "x"},
		{"INCRBYFLOAT", "n", "5.0e3"}, {"INCRBYFLOAT", "n", "-5000"}, {"GET", "n"},
		{"BLPOP", "k", "inf"}, {"BLPOP", "k", "-inf"}, {"BLPOP", "k", "1e400"}, {"BLPOP", "k", "nan"},
		{"BLPOP", "k", "9223372036854776"}, {"BLPOP", "k", "0x1p70"}, {"BLPOP", "k", "1e-5000"},
		{"BLPOP", "k", "0x"}, {"BLPOP", "k", "1e"}, {"BLPOP", "k", "0b1"}, {"BLPOP", "k", "-1"},
		{"BLPOP", "k", "0.001"}, {"BRPOP", "k", ".002"},
		{"FLUSHALL"}, {"SET", "a", "1"}, {"SCAN", ""}, {"SCAN", "+0"}, {"SCAN", " 0"},
		{"SCAN", "0x"}, {"SCAN", "18446744073709551616"}, {"SCAN", "-"}, {"SCAN", "1.0"},
	}
	compareWithRedis(t, script)
	compareWithRedis(t, append([][]string{{"HELLO", "3"}}, script...))
	// A negative cursor wraps around, as strtoul makes it: a cursor past
	// the end, which ends the walk.
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	rc.do("SET", "a", "1")
	if got := rc.do("SCAN", "-1"); strings.HasPrefix(got, "-") {
		t.Errorf("SCAN -1: %q", got)
	}
}
