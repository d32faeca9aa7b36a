package kv

import "maps"

// Go's maps keep the memory of the most entries they ever held: a delete
// frees none of their slots, and neither does clear. The server's tables
// that may grow large for a while (the keys tracked for client-side
// caching, the Pub/Sub channels and patterns, the keys watched and those
// clients block on) are made again, smaller,
// once they hold under a quarter of their peak, as Redis's dicts and rax
// give their memory back.

// minShrink is the fewest entries a table must have held before it is
// made again smaller: below it, what the table keeps is small.
const minShrink = 1024

// notePeak records m's size in peak, after entries were added to it.
func notePeak[M ~map[K]V, K comparable, V any](m M, peak *int) {
	*peak = max(*peak, len(m))
}

// shrunk returns m, or, when m holds under a quarter of *peak, a copy of
// it made for its size, which is then the peak. Each entry is copied once
// for the three or more that left since the last copy.
func shrunk[M ~map[K]V, K comparable, V any](m M, peak *int) M {
	if *peak < minShrink || len(m) >= *peak/4 {
		return m
	}
	n := make(M, len(m))
	maps.Copy(n, m)
	*peak = len(n)
	return n
}
