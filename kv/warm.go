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

// warmBatch is how many commands' keys are loaded ahead at most.
const warmBatch = 32

// warmer holds the scratch space of warm, the loop's.
type warmer struct {
	keys   [warmBatch][]byte
	hashes [warmBatch]uint32
	vals   [warmBatch]*entry
	sink   uint64 // keeps the compiler from dropping the loads
}

// warm loads ahead the keyspace entries of the keys that the complete
// commands at the start of b name first, when there are two or more
// different ones.
func (w *warmer) warm(d *db, b []byte) {
	keys := firstKeys(b, w.keys[:0])
	if len(keys) < 2 {
		return
	}
	// A burst often names one key over and over (LPUSH to one list):
	// there is nothing to overlap then.
	n := 1
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[n-1]) {
			keys[n] = k
			n++
		}
	}
	if n < 2 {
		clear(keys)
		return
	}
	clear(keys[n:])
	keys = keys[:n]
	for i, k := range keys {
		w.hashes[i] = dictHash(k)
	}
	vals := w.vals[:len(keys)]
	w.sink += d.keys.warm(w.hashes[:len(keys)], vals)
	for _, e := range vals {
		if e != nil && e.obj == nil && len(e.str) > 0 {
			w.sink += uint64(e.str[0]) // a string value's bytes: GET sends them
		}
	}
	clear(w.keys[:len(keys)]) // no references into b kept
	clear(vals)
}

// firstKeys appends to keys the first argument after the name of each
// complete RESP array command at the start of b, up to cap(keys), and
// stops at the first that is not complete or not plain (an inline
// command, an array of one, anything unexpected), or after the first if
// the second names the same key: it is a hint, and the parser judges the
// input.
func firstKeys(b []byte, keys [][]byte) [][]byte {
	for len(keys) < cap(keys) {
		n, i, ok := respLength(b, '*', 0)
		if !ok || n < 2 {
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
// and where the bytes after it start. Numbers over 1<<30 are refused.
func respLength(b []byte, kind byte, i int) (n, next int, ok bool) {
	if i >= len(b) || b[i] != kind {
		return 0, 0, false
	}
	for i++; i < len(b) && b[i]-'0' <= 9; i++ {
		if n > 1<<30 {
			return 0, 0, false
		}
		n = n*10 + int(b[i]-'0')
	}
	if i+1 >= len(b) || b[i] != '\r' || b[i+1] != '\n' {
		return 0, 0, false
	}
	return n, i + 2, true
}
