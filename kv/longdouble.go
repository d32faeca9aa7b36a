package kv

import (
	"math"
	"math/big"
	"strings"
)

// Redis computes INCRBYFLOAT, HINCRBYFLOAT and blocking timeouts in C's
// long double, on x86-64 the 80-bit extended format: a 64-bit significand
// and exponents up to ±16383. Clients see the difference from float64 —
// 0.1 + 0.2 is "0.3" there, 1e400 is a number — so these commands compute
// with big.Float at the same precision and range.
const (
	ldPrec   = 64
	ldMaxExp = 16384  // |x| < 2^16384; big.Float's exponent puts the mantissa in [0.5, 1)
	ldMinExp = -16444 // the smallest denormal is 2^-16445
)

// parseLongDouble parses b as strtold does, with Redis's checks: no
// leading space, nothing left over, no overflow, no underflow to zero, no
// NaN. "inf" and "infinity" are accepted, as strtold accepts them; the
// result is then ±Inf.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) >= 5*1024 {
		return nil, false // Redis's MAX_LONG_DOUBLE_CHARS
	}
	s := string(b)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" {
		return nil, false
	}
	neg := s[0] == '-'
	if l := strings.ToLower(body); l == "inf" || l == "infinity" {
		return new(big.Float).SetInf(neg), true
	}
	if !floatSyntax(body) {
		return nil, false
	}
	f, _, err := big.ParseFloat(s, 0, ldPrec, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	if f.Sign() == 0 {
		mantissa, _, _ := strings.Cut(strings.ToLower(body), "p")
		if !strings.HasPrefix(mantissa, "0x") {
			mantissa, _, _ = strings.Cut(mantissa, "e")
		}
		if strings.ContainsAny(strings.TrimPrefix(mantissa, "0x"), "123456789abcdef") {
			return nil, false // ERANGE: a number too small, rounded to zero
		}
	} else if exp := f.MantExp(nil); exp > ldMaxExp || exp < ldMinExp {
		return nil, false // ERANGE: overflow, or underflow to zero
	}
	return f, true
}

// floatSyntax reports whether s (without its sign) is a decimal or a
// hexadecimal floating-point number as strtold reads them: digits with at
// most one point, at least one digit, and an optional exponent (e for
// decimal, p for hexadecimal, with at least one decimal digit).
func floatSyntax(s string) bool {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	digit, expMark := isDigit, byte('e')
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
		digit = func(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }
		expMark = 'p'
	}
	i, digits, point := 0, 0, false
	for ; i < len(s); i++ {
		switch {
		case digit(s[i]):
			digits++
		case s[i] == '.' && !point:
			point = true
		default:
			goto exponent
		}
	}
exponent:
	if digits == 0 {
		return false
	}
	if i == len(s) {
		return true
	}
	if s[i]|0x20 != expMark {
		return false
	}
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i == len(s) {
		return false
	}
	for ; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// addLongDouble returns a + b rounded to long double, and false if the sum
// is infinite or NaN.
func addLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	sum := new(big.Float).SetPrec(ldPrec).Add(a, b)
	if sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return sum, true
}

// formatLongDouble formats f as Redis's "human" long double: %.17Lf
// without trailing zeros, and "-0" written "0".
func formatLongDouble(f *big.Float) string {
	s := f.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// timeoutMillis converts a blocking timeout in seconds to milliseconds as
// Redis 7.0 does: ceil(seconds × 1000) in long double, then a conversion to
// a 64-bit integer that turns anything out of range (±Inf included) into
// the most negative one, so that it is refused as negative.
func timeoutMillis(sec *big.Float) int64 {
	if sec.IsInf() {
		return math.MinInt64
	}
	ms := new(big.Float).SetPrec(ldPrec).Mul(sec, big.NewFloat(1000))
	i, acc := ms.Int(nil) // truncated toward zero
	if acc == big.Below && ms.Sign() > 0 {
		i.Add(i, big.NewInt(1)) // ceil of a positive fraction
	}
	if !i.IsInt64() {
		return math.MinInt64
	}
	return i.Int64()
}
