package kv

import (
	"bytes"

	"github.com/evloop/evloop/resp"
)

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
	p      resp.Parser
	keys   [warmBatch][]byte
	hashes [warmBatch]uint32
	vals   [warmBatch]*entry
	sink   uint64 // keeps the compiler from dropping the loads
}

// warm loads ahead the keyspace entries of the keys that the complete
// commands at the start of b name first, when there are two or more
// different ones. It keeps none of b's keys.
func (w *warmer) warm(d *db, b []byte) {
	keys := firstKeys(&w.p, b, w.keys[:0])
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
		if e != nil && e.isString() && len(e.str) > 0 {
			w.sink += uint64(e.str[0]) // a string value's bytes: GET sends them
		}
	}
}

// firstKeys appends to keys, parsing with p, the first argument after the
// name of each complete command at the start of b, up to cap(keys). It
// stops at the first command that is not complete or not plain (an
// inline command, an array of one or of more than warmMaxArgs, anything
// the parser refuses), or after the first if the second names the same
// key: it is a hint, and the client's own parser judges the input.
func firstKeys(p *resp.Parser, b []byte, keys [][]byte) [][]byte {
	p.Limits = resp.Limits{MaxArgs: warmMaxArgs}
	for len(keys) < cap(keys) && len(b) > 0 && b[0] == '*' {
		args, n, err := p.Command(b)
		if err != nil || len(args) < 2 {
			break
		}
		if len(keys) == 1 && bytes.Equal(args[1], keys[0]) {
			break // one key over and over, most likely: not worth the scan
		}
		keys = append(keys, args[1])
		b = b[n:]
	}
	// The next scan is of any client's bytes, in the loop's read buffer
	// too: it must not go on from where this one stopped, and p must not
	// hold these bytes meanwhile.
	p.Reset()
	p.Release()
	return keys
}
