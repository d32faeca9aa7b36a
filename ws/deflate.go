package ws

import (
	"bytes"
	"compress/flate"
	"io"
	"math"
	"sync"
)

// A message compressed with permessage-deflate is a raw deflate stream
// ended by a sync flush whose last four bytes, 00 00 ff ff, are left off
// (RFC 7692 section 7.2.1). Compressors and decompressors are pooled, not
// kept per connection: neither side takes context over to the next
// message.

var flateWriters [flate.BestCompression + 1]sync.Pool

// appender is an io.Writer that appends to a slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// compress appends p compressed at level to dst.
func compress(dst, p []byte, level int) []byte {
	switch {
	case level == flate.DefaultCompression:
		level = 6 // what compress/flate takes it for
	case level < flate.BestSpeed || level > flate.BestCompression:
		level = flate.BestSpeed
	}
	a := &appender{b: dst}
	fw, _ := flateWriters[level].Get().(*flate.Writer)
	if fw == nil {
		fw, _ = flate.NewWriter(a, level)
	} else {
		fw.Reset(a)
	}
	fw.Write(p)
	fw.Flush()
	fw.Reset(io.Discard)
	flateWriters[level].Put(fw)
	out := a.b
	if bytes.HasSuffix(out, []byte{0, 0, 0xff, 0xff}) {
		out = out[:len(out)-4]
	}
	return out
}

// deflateTail ends a message's stream: the sync flush's four bytes, then a
// final empty stored block, so that the reader sees the stream's end.
var deflateTail = []byte{0, 0, 0xff, 0xff, 1, 0, 0, 0xff, 0xff}

// tailFor returns what decompress reads after payload p: deflateTail, or
// only its final block when p still ends with the sync flush's four bytes
// that its sender should have removed (RFC 7692 section 7.2.1), as zlib's
// readers (Node's ws, browsers) take it. A payload whose sender removed
// them cannot end so: its last byte holds the empty stored block's
// header, three zero bits and zero padding, so it is not 0xff; and a
// payload ending in a block with BFINAL set is read to that block alone
// either way.
func tailFor(p []byte) []byte {
	if bytes.HasSuffix(p, deflateTail[:4]) {
		return deflateTail[4:]
	}
	return deflateTail
}

var flateReaders sync.Pool

// errTooBig is what decompress returns when the message inflates past
// its limit.
var errTooBig = &CloseError{Code: CloseMessageTooBig, Reason: "message too big"}

// maxCompressed bounds the compressed frames of a message whose inflated
// length is bounded by limit. Deflate makes data that does not compress
// longer: by 5 bytes per 64 KiB in stored blocks, by at most an eighth
// with the fixed Huffman code (9 bits for some bytes); a few bytes more
// go to block headers and the flush. So a message at the limit is not
// refused for its compressed length, which can still not grow without
// bound before decompress checks the inflated length.
func maxCompressed(limit int) int {
	if n := limit + limit/8 + 256; n > limit {
		return n
	}
	return math.MaxInt // limit is near the largest int
}

// decompress appends p inflated to dst, reading at most limit bytes of
// output: a message that inflates past it fails with errTooBig before
// more is allocated. If text is not nil, the output is fed to it as it
// comes, and the first byte that is not UTF-8 fails the message with
// errNotUTF8, before the rest is inflated; whether the message ends
// between characters is left to the caller.
//
// A block with BFINAL set ends a deflate stream, and the payload may go on
// with another (RFC 7692 section 7.2.1: "the next DEFLATE block follows
// the padded data"), as a sender that ends each flush with such a block
// writes it: each is inflated in turn, with the message inflated so far
// as its window. Restarting costs a copy of that window, at most 32 KiB,
// so restarts are bounded by restartBudget, past which the message fails
// with errRestarts.
//
// An empty payload is an empty message. Strictly it is no deflate stream
// (that of an empty message is one byte, 00), but zlib-based peers read
// it as one and some send it.
func decompress(dst, p []byte, limit int, text *utf8State) ([]byte, *CloseError) {
	if len(p) == 0 {
		return dst, nil
	}
	src := &payloadReader{p: p, tail: tailFor(p)}
	fr, _ := flateReaders.Get().(io.ReadCloser)
	if fr == nil {
		fr = flate.NewReader(src)
	} else {
		fr.(flate.Resetter).Reset(src, nil)
	}
	defer func() {
		// Pooled, the reader must not keep the message alive.
		fr.(flate.Resetter).Reset(noInput{}, nil)
		flateReaders.Put(fr)
	}()
	start := len(dst)
	budget := restartBudget(limit)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		room := dst[len(dst):cap(dst)]
		if over := len(dst) - start + len(room) - limit; over > 0 {
			room = room[:max(len(room)-over+1, 1)]
		}
		n, err := fr.Read(room)
		out := dst[len(dst) : len(dst)+n]
		dst = dst[:len(dst)+n]
		tooBig := len(dst)-start > limit
		if tooBig {
			out = out[:len(out)-1] // the byte past the limit
		}
		if text != nil && !text.valid(out) {
			return dst, errNotUTF8
		}
		if tooBig {
			return dst, errTooBig
		}
		if err == io.EOF {
			if src.off >= len(p) {
				return dst, nil
			}
			window := dst[max(start, len(dst)-maxWindow):]
			if budget -= restartCost + len(window); budget < 0 {
				return dst, errRestarts
			}
			fr.(flate.Resetter).Reset(src, window)
			continue
		}
		if err != nil {
			return dst, &CloseError{Code: CloseInvalidPayload, Reason: "invalid compressed message"}
		}
	}
}

// maxWindow is deflate's largest window, what a stream may refer back to.
const maxWindow = 32 << 10

// restartCost is what a new stream costs decompress beyond its window's
// copy: the reader's state, reset (its Huffman tables are kilobytes).
const restartCost = 8 << 10

// restartBudget bounds the bytes decompress may copy to restart streams in
// a message of at most limit bytes: sixteen times the limit and 1 MiB, so
// that, at 40 KiB a restart, a message at the limit may be made of streams
// of about 2.5 KiB each, and one of mostly empty streams costs the loop
// no more than a few times what inflating a message at the limit does.
func restartBudget(limit int) int {
	return 16*min(limit, math.MaxInt/32) + 1<<20
}

var errRestarts = &CloseError{Code: ClosePolicyViolation, Reason: "compressed message restarts its stream too often"}

// payloadReader reads a message's payload and then its tail (tailFor),
// for flate: being an io.ByteReader, it is read no further than the
// stream being inflated, so that off tells where another may start.
type payloadReader struct {
	p, tail []byte
	off     int // into p, then past len(p) into tail
}

func (r *payloadReader) ReadByte() (byte, error) {
	switch i := r.off; {
	case i < len(r.p):
		r.off++
		return r.p[i], nil
	case i-len(r.p) < len(r.tail):
		r.off++
		return r.tail[i-len(r.p)], nil
	}
	return 0, io.EOF
}

func (r *payloadReader) Read(b []byte) (int, error) {
	n := 0
	if r.off < len(r.p) {
		n = copy(b, r.p[r.off:])
		r.off += n
	}
	if t := r.off - len(r.p); t >= 0 && n < len(b) {
		k := copy(b[n:], r.tail[t:])
		r.off += k
		n += k
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// noInput is an empty source, for a pooled reader between messages.
type noInput struct{}

func (noInput) Read([]byte) (int, error) { return 0, io.EOF }

func (noInput) ReadByte() (byte, error) { return 0, io.EOF }
