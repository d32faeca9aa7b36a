package kv

import "bytes"

// Pipelined requests and the cache.
//
// A look-up in a large keyspace misses the cache three times, one load
// waiting for the other: the index entry names the slot, the slot holds
// the key's address, and the key's bytes are compared. When a client
// pipelines, the keys of the commands waiting in its buffer are known
// before the first runs, and warm makes those loads for all of them at
// once: loads that do not wait for each other overlap in the processor,
// so a batch of sixteen look-ups waits about as long as one, and the
// commands then find what they read in the cache. Nothing changes but
// what is in the cache.

const (
	warmBatch   = 32 // commands whose keys are loaded ahead at most
	warmMaxArgs = 64 // a command with more ends the scan: it is not a burst of small ones
)

// warmer holds the scratch space of warm, the loop's.
type warmer struct {
	keys   [warmBatch][]byte
	hashes [warmBatch]uint32
	vals   [warmBatch]*entry
	sink   uint64 // keeps the compiler from dropping the loads
}

// warm loads ahead the keyspace entries of the keys that the complete
// commands at the start of b name first, when there are two or more
// different ones. It keeps no reference into b.
func (w *warmer) warm(d *db, b []byte) {
	keys := firstKeys(b, w.keys[:0])
	defer clear(keys)
	if len(keys) < 2 {
		return
	}
	// firstKeys stopped early if the second key was the first: there are
	// two different keys at least. Repeats next to each other go.
	n := 1
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[n-1]) {
			keys[n] = k
			n++
		}
	}
	for i, k := range keys[:n] {
		w.hashes[i] = dictHash(k)
	}
	vals := w.vals[:n]
	defer clear(vals)
	w.sink += d.keys.warm(w.hashes[:n], vals)
	for _, e := range vals {
		if e != nil && e.obj == nil && len(e.str) > 0 {
			w.sink += uint64(e.str[0]) // a string value's bytes: GET sends them
		}
	}
}

// firstKeys appends to keys the first argument after the name of each
// complete RESP array command at the start of b, up to cap(keys). It stops
// at the first command that is not complete or not plain (an inline
// command, an array of one or of more than warmMaxArgs, anything
// unexpected), or after the first if the second names the same key: it is
// a hint, and the parser judges the input.
func firstKeys(b []byte, keys [][]byte) [][]byte {
	for len(keys) < cap(keys) {
		n, i, ok := respLength(b, '*', 0)
		if !ok || n < 2 || n > warmMaxArgs {
			break
		}
		var key []byte
		for a := 0; a < n; a++ {
			l, j, ok := respLength(b, '$', i)
			if !ok || j+l+2 > len(b) || b[j+l] != '\r' || b[j+l+1] != '\n' {
				return keys
			}
			if a == 1 {
				key = b[j : j+l]
			}
			i = j + l + 2
		}
		if len(keys) == 1 && bytes.Equal(key, keys[0]) {
			return keys // one key over and over, most likely: not worth the scan
		}
		keys = append(keys, key)
		b = b[i:]
	}
	return keys
}

// respLength reads "<kind><decimal>\r\n" at b[i:] and returns the number
// and where the bytes after it start. Numbers over 1<<30 are refused, so
// that sums of them do not overflow an int of 32 bits.
func respLength(b []byte, kind byte, i int) (n, next int, ok bool) {
	if i >= len(b) || b[i] != kind {
		return 0, 0, false
	}
	for i++; i < len(b) && b[i]-'0' <= 9; i++ {
		d := int(b[i] - '0')
		if n > (1<<30-d)/10 {
			return 0, 0, false
		}
		n = n*10 + d
	}
	if i+1 >= len(b) || b[i] != '\r' || b[i+1] != '\n' {
		return 0, 0, false
	}
	return n, i + 2, true
}
