// Package load is the engine of cmd/loadgen: connections driven from a few
// epoll loops (one OS thread each), messages whose every byte is known in
// advance so that echoes are verified as they arrive, and per-message
// round-trip times.
package load

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// A message is identified by its connection and sequence number; its bytes
// are a 12-byte header (sequence, then connection, little-endian) followed
// by a body taken from a fixed pseudo-random table at an offset that depends
// on both. A message shorter than 12 bytes is a prefix of that.
const (
	hdrLen   = 12
	tableLen = 4096
)

// table2 is the body table written twice, so that any tableLen bytes from
// any starting point below tableLen are one contiguous slice.
var table2 = func() []byte {
	t := make([]byte, 2*tableLen)
	x := uint64(0x9E3779B97F4A7C15)
	for i := 0; i < tableLen; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		t[i] = byte(x >> 32)
	}
	copy(t[tableLen:], t[:tableLen])
	return t
}()

func header(conn uint32, seq uint64) (h [hdrLen]byte) {
	binary.LittleEndian.PutUint64(h[:8], seq)
	binary.LittleEndian.PutUint32(h[8:], conn)
	return h
}

func bodyStart(conn uint32, seq uint64) int {
	x := uint64(conn)*0x9E3779B97F4A7C15 ^ (seq+1)*0xC2B2AE3D27D4EB4F
	x ^= x >> 29
	return int(x % tableLen)
}

// Fill writes message (conn, seq) into dst, whose length is the message size.
func Fill(dst []byte, conn uint32, seq uint64) {
	h := header(conn, seq)
	n := copy(dst, h[:])
	dst = dst[n:]
	start := bodyStart(conn, seq)
	for len(dst) > 0 {
		n := copy(dst, table2[start:start+tableLen])
		dst = dst[n:]
		start = (start + n) % tableLen
	}
}

// Match reports whether p equals the bytes of message (conn, seq) from
// offset off on.
func Match(conn uint32, seq uint64, off int, p []byte) bool {
	if off < hdrLen {
		h := header(conn, seq)
		n := copy(h[:], h[off:]) // shift the wanted part to the front
		if n > len(p) {
			n = len(p)
		}
		if !bytes.Equal(p[:n], h[:n]) {
			return false
		}
		p = p[n:]
		off += n
	}
	start := (bodyStart(conn, seq) + off - hdrLen) % tableLen
	for len(p) > 0 {
		n := min(len(p), tableLen)
		if !bytes.Equal(p[:n], table2[start:start+n]) {
			return false
		}
		p = p[n:]
		start = (start + n) % tableLen
	}
	return true
}

// Stream checks the bytes echoed on one connection: the messages sent on
// it, in order, with nothing missing, changed or extra. Sent records what
// was written; Feed takes what was read and says how many messages it
// completed.
type Stream struct {
	Conn uint32 // connection id, part of every message
	Size int    // message size, at least 1

	seq     uint64 // message expected next
	off     int    // bytes of it already received
	allowed int64  // bytes sent and not yet echoed
}

// Sent records that n more bytes were written to the connection.
func (s *Stream) Sent(n int) { s.allowed += int64(n) }

// Outstanding is the number of bytes sent and not yet echoed.
func (s *Stream) Outstanding() int64 { return s.allowed }

// Received is the number of complete messages echoed so far.
func (s *Stream) Received() uint64 { return s.seq }

// Feed verifies p, the next bytes read from the connection, and returns the
// number of messages it completed. An error means the echo was wrong: a
// byte differs from what was sent, or more bytes came back than were sent.
func (s *Stream) Feed(p []byte) (int, error) {
	if int64(len(p)) > s.allowed {
		return 0, fmt.Errorf("conn %d: %d bytes echoed but only %d outstanding (message %d, offset %d)", s.Conn, len(p), s.allowed, s.seq, s.off)
	}
	done := 0
	for len(p) > 0 {
		n := min(len(p), s.Size-s.off)
		if !Match(s.Conn, s.seq, s.off, p[:n]) {
			return done, fmt.Errorf("conn %d: message %d differs from what was sent, within bytes %d..%d", s.Conn, s.seq, s.off, s.off+n)
		}
		s.allowed -= int64(n)
		s.off += n
		p = p[n:]
		if s.off == s.Size {
			s.off = 0
			s.seq++
			done++
		}
	}
	return done, nil
}
