package kv

import (
	"strconv"
	"strings"
)

// sharedInts is how many small integers string values share, as Redis's
// OBJ_SHARED_INTEGERS: the values 0 to 9,999 are kept once, so that
// counters cost no allocation and point at memory that stays in cache.
// Only the bytes are shared: unlike Redis's shared objects, each key keeps
// its own access time (OBJECT IDLETIME).
const sharedInts = 10000

var (
	// sharedDigits holds the decimal forms of 0 to sharedInts-1 one after
	// another; sharedInt[n] is n's, a slice of it.
	sharedDigits string
	sharedInt    [sharedInts]string
)

func init() {
	var b strings.Builder
	ends := make([]int, sharedInts)
	for n := range sharedInts {
		b.WriteString(strconv.Itoa(n))
		ends[n] = b.Len()
	}
	sharedDigits = b.String()
	start := 0
	for n, end := range ends {
		sharedInt[n] = sharedDigits[start:end]
		start = end
	}
}

// intString returns n's decimal form, shared if n is small.
func intString(n int64) string {
	if n >= 0 && n < sharedInts {
		return sharedInt[n]
	}
	return strconv.FormatInt(n, 10)
}

// valueString returns a copy of b to keep as a string value: the shared
// form if b is a small integer written as Redis would write it.
func valueString(b []byte) string {
	if len(b) <= 4 { // below sharedInts
		if n, ok := parseInt(b); ok && n >= 0 {
			return sharedInt[n]
		}
	}
	return string(b)
}

// isShared reports whether s is one of the shared integers.
func isShared(s string) bool { return within(stringBytes(s), stringBytes(sharedDigits)) }
