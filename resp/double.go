package resp

import (
	"math"
	"strconv"
)

// appendDouble appends f as Redis 7.2's d2string writes it: "inf", "-inf",
// "nan", "0" and "-0"; integers up to 2^62 in magnitude as integers;
// anything else as the shortest decimal that reads back as f, laid out as
// fpconv_dtoa lays it out ("0.1", "1.5e+300", "1e-7", "1e+21"). Redis's
// Grisu2 digits are not always the shortest: for about one double in 700
// Redis writes one more digit (0.084196 is 0.08419599999999999 there);
// both read back as f.
func appendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f):
		return strconv.AppendInt(dst, int64(f), 10) // d2string's double2ll
	}

	// Shortest digits, from "d.ddde±x" (negative: "-d.ddde±x").
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	var digits [17]byte
	nd := 1
	digits[0] = e[0]
	i := 1
	if e[1] == '.' {
		for i = 2; e[i] != 'e'; i++ {
			digits[nd] = e[i]
			nd++
		}
	}
	exp := 0 // e[i] == 'e', then a sign and at least two digits
	for _, c := range e[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[i+1] == '-' {
		exp = -exp
	}

	// fpconv_dtoa's emit_digits: the value is digits * 10^k.
	k := exp - (nd - 1)
	absExp := exp
	if absExp < 0 {
		absExp = -absExp
	}
	switch {
	case k >= 0 && absExp < nd+7: // an integer, written out
		dst = append(dst, digits[:nd]...)
		for range k {
			dst = append(dst, '0')
		}
	case k < 0 && (k > -7 || absExp < 4): // a decimal fraction
		if point := nd + k; point > 0 {
			dst = append(dst, digits[:point]...)
			dst = append(dst, '.')
			dst = append(dst, digits[point:nd]...)
		} else {
			dst = append(dst, "0."...)
			for range -point {
				dst = append(dst, '0')
			}
			dst = append(dst, digits[:nd]...)
		}
	default: // scientific notation, the exponent without padding
		dst = append(dst, digits[0])
		if nd > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:nd]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
		} else {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(absExp), 10)
	}
	return dst
}
