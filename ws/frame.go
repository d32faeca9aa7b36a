package ws

import (
	"encoding/binary"
	"math/bits"
)

// Opcode is a frame's opcode (RFC 6455 section 5.2).
type Opcode uint8

// The opcodes. Text and Binary are the two kinds of message.
const (
	Continuation Opcode = 0x0
	Text         Opcode = 0x1
	Binary       Opcode = 0x2
	CloseFrame   Opcode = 0x8
	Ping         Opcode = 0x9
	Pong         Opcode = 0xA
)

func (op Opcode) isControl() bool { return op&0x8 != 0 }

// String returns the opcode's name in lower case ("text", "ping"), or
// "reserved" for an opcode RFC 6455 does not define.
func (op Opcode) String() string {
	switch op {
	case Continuation:
		return "continuation"
	case Text:
		return "text"
	case Binary:
		return "binary"
	case CloseFrame:
		return "close"
	case Ping:
		return "ping"
	case Pong:
		return "pong"
	}
	return "reserved"
}

// frameHeader is a frame's header, parsed.
type frameHeader struct {
	fin    bool
	rsv    uint8 // RSV1-3 as bits 2..0 (RSV1 = 4)
	op     Opcode
	masked bool
	mask   [4]byte
	length int64
}

// maxHeader is the longest frame header: 2 bytes, 8 of length, 4 of mask.
const maxHeader = 14

// parseHeader parses the frame header at the start of b. It returns the
// header's length, or 0 if b holds only part of it. A length not in the
// fewest bytes (a 16-bit length below 126, a 64-bit one below 65536) or a
// 64-bit length with its top bit set is a protocol error (RFC 6455
// section 5.2).
func parseHeader(b []byte) (h frameHeader, n int, err *CloseError) {
	if len(b) < 2 {
		return h, 0, nil
	}
	h.fin = b[0]&0x80 != 0
	h.rsv = b[0] >> 4 & 0x7
	h.op = Opcode(b[0] & 0xF)
	h.masked = b[1]&0x80 != 0
	n = 2
	switch l := b[1] & 0x7F; l {
	case 126:
		if len(b) < 4 {
			return h, 0, nil
		}
		h.length = int64(binary.BigEndian.Uint16(b[2:]))
		if h.length < 126 {
			return h, 0, protocolError("16-bit frame length below 126")
		}
		n = 4
	case 127:
		if len(b) < 10 {
			return h, 0, nil
		}
		u := binary.BigEndian.Uint64(b[2:])
		switch {
		case u>>63 != 0:
			return h, 0, protocolError("frame length with its most significant bit set")
		case u <= 0xFFFF:
			return h, 0, protocolError("64-bit frame length below 65536")
		}
		h.length = int64(u)
		n = 10
	default:
		h.length = int64(l)
	}
	if h.masked {
		if len(b) < n+4 {
			return h, 0, nil
		}
		copy(h.mask[:], b[n:n+4])
		n += 4
	}
	return h, n, nil
}

// appendHeader appends a frame header: final or not, RSV1 (a compressed
// message's first frame) or not, and masked with mask if mask is not nil.
func appendHeader(dst []byte, fin, rsv1 bool, op Opcode, length int, mask *[4]byte) []byte {
	b0 := byte(op)
	if fin {
		b0 |= 0x80
	}
	if rsv1 {
		b0 |= 0x40
	}
	var m byte
	if mask != nil {
		m = 0x80
	}
	switch {
	case length < 126:
		dst = append(dst, b0, m|byte(length))
	case length <= 0xFFFF:
		dst = append(dst, b0, m|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(length))
	default:
		dst = append(dst, b0, m|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(length))
	}
	if mask != nil {
		dst = append(dst, mask[:]...)
	}
	return dst
}

// AppendFrame appends a whole frame holding payload: unmasked, as a server
// sends, or masked with mask, as a client must.
func AppendFrame(dst []byte, fin bool, op Opcode, payload []byte, mask *[4]byte) []byte {
	return appendFrame(dst, fin, false, op, payload, mask)
}

func appendFrame(dst []byte, fin, rsv1 bool, op Opcode, payload []byte, mask *[4]byte) []byte {
	dst = appendHeader(dst, fin, rsv1, op, len(payload), mask)
	start := len(dst)
	dst = append(dst, payload...)
	if mask != nil {
		maskBytes(*mask, 0, dst[start:])
	}
	return dst
}

// maskBytes XORs b with the mask, starting at position pos of the
// payload (so that a payload can be unmasked in pieces), and returns the
// position after b.
func maskBytes(mask [4]byte, pos int, b []byte) int {
	if mask == [4]byte{} {
		return pos + len(b) // unmasked (a server's frame), or masked to no effect
	}
	if len(b) >= 16 {
		// Rotate the key so that it lines up with b[0], then go 8 bytes
		// at a time.
		k := binary.LittleEndian.Uint32(mask[:])
		k = bits.RotateLeft32(k, -8*(pos&3))
		k64 := uint64(k) | uint64(k)<<32
		for len(b) >= 8 {
			v := binary.LittleEndian.Uint64(b)
			binary.LittleEndian.PutUint64(b, v^k64)
			b = b[8:]
			pos += 8
		}
	}
	for i := range b {
		b[i] ^= mask[(pos+i)&3]
	}
	return pos + len(b)
}
