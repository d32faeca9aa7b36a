// Package buf pools the fixed-size chunks that connections borrow for bytes
// they must keep: inbound bytes a handler left unconsumed, outbound bytes not
// yet written. A connection holds chunks only while it holds such bytes, so
// an idle connection holds none.
package buf

import "sync"

// ChunkSize is the size of every chunk.
const ChunkSize = 16 << 10

// Chunk is a pooled buffer.
type Chunk [ChunkSize]byte

var pool = sync.Pool{New: func() any { return new(Chunk) }}

// Get returns a chunk; its contents are undefined. Any goroutine may call it.
func Get() *Chunk { return pool.Get().(*Chunk) }

// Put returns c to the pool; the caller must not use it afterwards.
func Put(c *Chunk) { pool.Put(c) }
