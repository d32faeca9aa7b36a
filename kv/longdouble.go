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
	ldMantBits = 64
	ldMaxExp   = 16384  // a finite value is below 2^ldMaxExp
	ldMinExp   = -16381 // a normal value is at least 2^(ldMinExp-1)
	ldTinyExp  = -16445 // the smallest subnormal is 2^ldTinyExp
)

// longDouble rounds x, of precision 64, into the long double range:
// infinity above it, fewer mantissa bits for a subnormal, and 0 below.
func longDouble(x *big.Float) *big.Float {
	if x.IsInf() || x.Sign() == 0 {
		return x
	}
	exp := x.MantExp(nil) // |x| in [2^(exp-1), 2^exp)
	switch {
	case exp > ldMaxExp:
		return x.SetInf(x.Signbit())
	case exp >= ldMinExp:
		return x
	case exp > ldTinyExp:
		y := new(big.Float).SetPrec(uint(exp - ldTinyExp)).Set(x)
		return x.Set(y)
	}
	// Below the smallest subnormal: 0, or the smallest subnormal when x
	// is more than half of it.
	half := new(big.Float).SetMantExp(big.NewFloat(1), ldTinyExp-1)
	if new(big.Float).Abs(x).Cmp(half) > 0 {
		return x.SetMantExp(signed(big.NewFloat(1), x.Signbit()), ldTinyExp)
	}
	return x.SetInt64(0)
}

func signed(x *big.Float, neg bool) *big.Float {
	if neg {
		return x.Neg(x)
	}
	return x
}

// parseLongDouble parses b as Redis's string2ld does with glibc's strtold:
// no leading space, the whole string consumed, hexadecimal and "inf" allowed, NaN and a value out of
// the long double range refused; a value too small is refused unless it
// is a subnormal.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= 5*1024 {
		return nil, false
	}
	str := string(b)
	x := new(big.Float).SetPrec(ldMantBits)
	if str[0] == ' ' || (str[0] >= '\t' && str[0] <= '\r') {
		return nil, false
	}
	neg := false
	if str[0] == '+' || str[0] == '-' {
		neg = str[0] == '-'
		str = str[1:]
	}
	if lower := strings.ToLower(str); lower == "inf" || lower == "infinity" {
		return x.SetInf(neg), true
	}
	base := 10
	if len(str) > 2 && str[0] == '0' && (str[1] == 'x' || str[1] == 'X') {
		base = 16
		str = str[2:]
	}
	isDigit := func(ch byte) bool {
		return '0' <= ch && ch <= '9' || base == 16 && ('a' <= ch|0x20 && ch|0x20 <= 'f')
	}
	var mant []byte
	frac, i := 0, 0
	for ; i < len(str) && isDigit(str[i]); i++ {
		mant = append(mant, str[i])
	}
	if i < len(str) && str[i] == '.' {
		for i++; i < len(str) && isDigit(str[i]); i++ {
			mant = append(mant, str[i])
			frac++
		}
	}
	if len(mant) == 0 {
		return nil, false
	}
	exp := int64(0)
	if i < len(str) {
		e := str[i] | 0x20
		if (base == 10 && e != 'e') || (base == 16 && e != 'p') {
			return nil, false
		}
		digits := str[i+1:]
		eneg := false
		if digits != "" && (digits[0] == '+' || digits[0] == '-') {
			eneg = digits[0] == '-'
			digits = digits[1:]
		}
		if digits == "" {
			return nil, false
		}
		for _, ch := range []byte(digits) {
			if ch < '0' || ch > '9' {
				return nil, false
			}
			exp = min(exp*10+int64(ch-'0'), 1<<40)
		}
		if eneg {
			exp = -exp
		}
	}
	m, _ := new(big.Int).SetString(string(mant), base)
	if m.Sign() == 0 {
		return signed(x, neg), true
	}
	if base == 16 {
		exp -= 4 * int64(frac)
		x.SetInt(m)
		if e := int64(x.MantExp(nil)) + exp; e > ldMaxExp+1 || e < ldTinyExp-1 {
			return nil, false
		}
		x.SetMantExp(x, int(exp))
	} else {
		exp -= int64(frac)
		if mag := int64(len(strings.TrimLeft(string(mant), "0"))) - 1 + exp; mag > 4933 || mag < -4952 {
			return nil, false
		}
		if exp >= 0 {
			x.SetInt(m.Mul(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(exp), nil)))
		} else {
			x.SetRat(new(big.Rat).SetFrac(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(-exp), nil)))
		}
	}
	x = longDouble(x)
	if x.IsInf() || x.Sign() == 0 {
		return nil, false
	}
	return signed(x, neg), true
}

// formatLongDouble writes x as Redis's ld2string does in its "human"
// mode: "%.17Lf" with the trailing zeros (and point) removed, and "-0"
// as "0".
func formatLongDouble(x *big.Float) string {
	out := x.Text('f', 17)
	if strings.IndexByte(out, '.') >= 0 {
		out = strings.TrimRight(out, "0")
		out = strings.TrimSuffix(out, ".")
	}
	if out == "-0" {
		out = "0"
	}
	return out
}

// addLongDouble returns a + b rounded to long double, and false if the sum
// is infinite or NaN.
func addLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	sum := longDouble(new(big.Float).SetPrec(ldMantBits).Add(a, b))
	if sum.IsInf() {
		return nil, false
	}
	return sum, true
}

// timeoutMillis converts a blocking timeout in seconds to milliseconds as
// Redis 7.0 does: ceil(seconds × 1000) in long double, then a conversion to
// a 64-bit integer that turns anything out of range (±Inf included) into
// the most negative one, so that it is refused as negative.
func timeoutMillis(sec *big.Float) int64 {
	if sec.IsInf() {
		return math.MinInt64
	}
	ms := new(big.Float).SetPrec(ldMantBits).Mul(sec, big.NewFloat(1000))
	i, acc := ms.Int(nil) // truncated toward zero
	if acc == big.Below && ms.Sign() > 0 {
		i.Add(i, big.NewInt(1)) // ceil of a positive fraction
	}
	if !i.IsInt64() {
		return math.MinInt64
	}
	return i.Int64()
}
