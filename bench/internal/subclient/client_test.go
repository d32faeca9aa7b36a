package subclient

import (
	"encoding/binary"
	"testing"
)

// serverFrame is an unmasked frame as a server sends it.
func serverFrame(op byte, p []byte) []byte {
	b := []byte{0x80 | op}
	switch {
	case len(p) < 126:
		b = append(b, byte(len(p)))
	case len(p) < 1<<16:
		b = append(b, 126)
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
	}
	return append(b, p...)
}

func TestParseFrameAnySplit(t *testing.T) {
	for _, size := range []int{0, 125, 126, 300, 70000} {
		p := make([]byte, size)
		for i := range p {
			p[i] = byte(i)
		}
		f := serverFrame(0x1, p)
		for cut := range len(f) {
			if _, _, used := parseFrame(f[:cut]); used != 0 {
				t.Fatalf("size %d: parseFrame(first %d bytes) used %d; want 0", size, cut, used)
			}
		}
		op, got, used := parseFrame(append(f, 0x81))
		if op != 0x81 || len(got) != size || used != len(f) {
			t.Fatalf("size %d: parseFrame = %#x, %d bytes, used %d; want 0x81, %d, %d", size, op, len(got), used, size, len(f))
		}
	}
}

func TestFields(t *testing.T) {
	msg := []byte(`{"id":"1","type":"next","payload":{"data":{"employeeUpdated":{"id":"3","seq":-12,"sentAt":"1795453766985541162"}}}}`)
	if got := stringField(msg, `"type":"`); got != "next" {
		t.Errorf("type = %q; want next", got)
	}
	if v, ok := intField(msg, `"seq":`); v != -12 || !ok {
		t.Errorf("seq = %d, %v; want -12, true", v, ok)
	}
	if v, ok := intField(msg, `"sentAt":"`); v != 1795453766985541162 || !ok {
		t.Errorf("sentAt = %d, %v; want 1795453766985541162, true", v, ok)
	}
	if _, ok := intField(msg, `"missing":`); ok {
		t.Error("intField found a missing key")
	}
}

func TestClientFrameIsMasked(t *testing.T) {
	p := []byte(`{"type":"pong"}`)
	f := frame(nil, 0x1, p)
	if f[0] != 0x81 || f[1] != 0x80|byte(len(p)) || len(f) != 6+len(p) {
		t.Fatalf("frame header % x", f[:6])
	}
	mask := f[2:6]
	for i := range p {
		if f[6+i]^mask[i&3] != p[i] {
			t.Fatalf("byte %d does not unmask to %q", i, p[i])
		}
	}
}
