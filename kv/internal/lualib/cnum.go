package lualib

import (
	"math"
	"strconv"
	"strings"
)

// FormatG formats f as C's printf("%.<prec>g") does: the shorter of fixed
// and exponent notation, without trailing zeros, the exponent of at least
// two digits, and "inf", "-inf", "nan" or "-nan" for the values that are not
// finite.
func FormatG(f float64, prec int) string {
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if prec == 0 {
		prec = 1
	}
	e := strconv.FormatFloat(f, 'e', prec-1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= prec {
		mant, tail, _ := strings.Cut(e, "e")
		return trimFraction(mant) + "e" + tail
	}
	return trimFraction(strconv.FormatFloat(f, 'f', prec-1-exp, 64))
}

// trimFraction drops the trailing zeros of a number's fraction, and its
// decimal point when nothing is left after it.
func trimFraction(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// stringToNumber converts s to a number as Lua 5.1 does for a string used
// where a number is wanted: C's strtod on the text up to its first NUL
// byte, allowing white space around the number but nothing else.
func stringToNumber(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	f, n := strtod(s, 0)
	if n == 0 {
		return 0, false
	}
	for _, c := range []byte(s[n:]) {
		if !isSpace(c) {
			return 0, false
		}
	}
	return f, true
}

// isSpace reports whether c is white space in C's "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// byteAt is s[i], or NUL past the end of s, so that scanners can treat s
// as C code treats a NUL-terminated string.
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// strtod reads a number at s[start:] as glibc's strtod does: white space,
// a sign, then a decimal or hexadecimal number, "inf", "infinity" or "nan"
// (with an optional parenthesised tag), any letter case. It returns the
// value and the number of bytes read, 0 when there is no number.
func strtod(s string, start int) (float64, int) {
	i := start
	for isSpace(byteAt(s, i)) {
		i++
	}
	neg := false
	if c := byteAt(s, i); c == '+' || c == '-' {
		neg = c == '-'
		i++
	}
	var f float64
	end := 0
	switch {
	case hasPrefixFold(s[min(i, len(s)):], "inf"):
		end = i + 3
		if hasPrefixFold(s[end:], "inity") {
			end += 5
		}
		f = math.Inf(1)
	case hasPrefixFold(s[min(i, len(s)):], "nan"):
		end = i + 3
		end = skipNaNTag(s, end)
		f = math.NaN()
	case byteAt(s, i) == '0' && (byteAt(s, i+1)|0x20) == 'x':
		f, end = scanHexFloat(s, i)
	default:
		f, end = scanDecimal(s, i)
	}
	if end == 0 {
		return 0, 0
	}
	if neg {
		f = -f
	}
	return f, end - start
}

// hasPrefixFold reports whether s starts with the lower-case prefix, in any
// letter case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// skipNaNTag skips the "(chars)" strtod allows after "nan", when it is
// complete, and returns where the number ends.
func skipNaNTag(s string, i int) int {
	if byteAt(s, i) != '(' {
		return i
	}
	j := i + 1
	for {
		c := byteAt(s, j)
		switch {
		case c == ')':
			return j + 1
		case c == '_' || isDigit(c) || isAlpha(c):
			j++
		default:
			return i
		}
	}
}

// isDigit reports whether c is an ASCII decimal digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isAlpha reports whether c is an ASCII letter.
func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// isHexDigit reports whether c is an ASCII hexadecimal digit.
func isHexDigit(c byte) bool { return isDigit(c) || ((c|0x20) >= 'a' && (c|0x20) <= 'f') }

// scanDecimal reads digits, an optional fraction and an optional exponent
// at s[i:]; it returns the value and where the number ends, 0 when there
// are no digits.
func scanDecimal(s string, i int) (float64, int) {
	j, digits := i, 0
	for isDigit(byteAt(s, j)) {
		j++
		digits++
	}
	if byteAt(s, j) == '.' {
		j++
		for isDigit(byteAt(s, j)) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	j = scanExponent(s, j, 'e', isDigit)
	f, _ := strconv.ParseFloat(s[i:j], 64)
	return f, j
}

// scanExponent skips an exponent introduced by the letter mark at s[j:],
// when one with digits is there, and returns where it ends.
func scanExponent(s string, j int, mark byte, digit func(byte) bool) int {
	if byteAt(s, j)|0x20 != mark {
		return j
	}
	k := j + 1
	if c := byteAt(s, k); c == '+' || c == '-' {
		k++
	}
	if !isDigit(byteAt(s, k)) {
		return j
	}
	for isDigit(byteAt(s, k)) {
		k++
	}
	return k
}

// scanHexFloat reads a hexadecimal number ("0x1A", "0x1.8p3") at s[i:],
// which starts with "0x". When no hexadecimal digit follows, only the "0"
// is a number, as with strtod.
func scanHexFloat(s string, i int) (float64, int) {
	j, digits := i+2, 0
	for isHexDigit(byteAt(s, j)) {
		j++
		digits++
	}
	if byteAt(s, j) == '.' {
		j++
		for isHexDigit(byteAt(s, j)) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, i + 1
	}
	mantEnd := j
	j = scanExponent(s, j, 'p', isDigit)
	text := s[i:j]
	if j == mantEnd {
		text += "p0"
	}
	f, _ := strconv.ParseFloat(text, 64)
	return f, j
}
