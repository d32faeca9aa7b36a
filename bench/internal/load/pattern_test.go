package load

import (
	"bytes"
	"math/rand"
	"testing"
)

func message(conn uint32, seq uint64, size int) []byte {
	b := make([]byte, size)
	Fill(b, conn, seq)
	return b
}

func TestMessagesDiffer(t *testing.T) {
	a, b, c := message(1, 0, 64), message(1, 1, 64), message(2, 0, 64)
	if bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatal("messages of different sequence or connection are equal")
	}
	if !bytes.Equal(a, message(1, 0, 64)) {
		t.Fatal("Fill is not deterministic")
	}
	big := message(3, 9, 3*tableLen+100) // body wraps the table several times
	if !Match(3, 9, 0, big) {
		t.Fatal("a long message does not match itself")
	}
}

func TestMatchEveryOffset(t *testing.T) {
	for _, size := range []int{1, 5, 12, 13, 64, 1024, tableLen + 33} {
		m := message(7, 42, size)
		for off := 0; off < size; off += 1 + off/7 {
			for _, n := range []int{1, 3, size - off} {
				if off+n > size {
					continue
				}
				if !Match(7, 42, off, m[off:off+n]) {
					t.Fatalf("size %d: bytes %d..%d do not match", size, off, off+n)
				}
				bad := append([]byte(nil), m[off:off+n]...)
				bad[n-1] ^= 0x40
				if Match(7, 42, off, bad) {
					t.Fatalf("size %d: a changed byte at %d passed", size, off+n-1)
				}
			}
		}
	}
}

// stream returns k messages of one connection back to back, as they would
// be echoed, and a Stream that has been told they were sent.
func stream(conn uint32, size, k int) ([]byte, *Stream) {
	var all []byte
	for i := 0; i < k; i++ {
		all = append(all, message(conn, uint64(i), size)...)
	}
	s := &Stream{Conn: conn, Size: size}
	s.Sent(len(all))
	return all, s
}

func TestStreamAcceptsAnyChunking(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, size := range []int{1, 7, 64, 1024} {
		all, s := stream(5, size, 50)
		done := 0
		for p := all; len(p) > 0; {
			n := 1 + r.Intn(min(len(p), 3*size))
			d, err := s.Feed(p[:n])
			if err != nil {
				t.Fatalf("size %d: %v", size, err)
			}
			done += d
			p = p[n:]
		}
		if done != 50 || s.Received() != 50 || s.Outstanding() != 0 {
			t.Fatalf("size %d: completed %d (received %d, outstanding %d), want 50, 0", size, done, s.Received(), s.Outstanding())
		}
	}
}

func TestStreamCountsCompletedMessages(t *testing.T) {
	all, s := stream(1, 10, 3)
	if d, err := s.Feed(all[:15]); d != 1 || err != nil {
		t.Fatalf("first 1.5 messages: %d, %v", d, err)
	}
	if d, err := s.Feed(all[15:]); d != 2 || err != nil {
		t.Fatalf("last 1.5 messages: %d, %v", d, err)
	}
}

func TestStreamRejectsCorruption(t *testing.T) {
	all, s := stream(9, 64, 4)
	all[64*2+30] ^= 1
	if _, err := s.Feed(all); err == nil {
		t.Fatal("a flipped bit was accepted")
	}
}

func TestStreamRejectsReordering(t *testing.T) {
	_, s := stream(9, 64, 2)
	if _, err := s.Feed(message(9, 1, 64)); err == nil {
		t.Fatal("message 1 accepted before message 0")
	}
}

func TestStreamRejectsOtherConnection(t *testing.T) {
	_, s := stream(9, 64, 1)
	if _, err := s.Feed(message(10, 0, 64)); err == nil {
		t.Fatal("another connection's message accepted")
	}
}

func TestStreamRejectsExtraBytes(t *testing.T) {
	all, s := stream(2, 16, 2)
	if _, err := s.Feed(append(all, message(2, 2, 16)...)); err == nil {
		t.Fatal("bytes never sent were accepted")
	}
	_, s = stream(2, 16, 1)
	if _, err := s.Feed(all[:16]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feed(all[16:17]); err == nil {
		t.Fatal("a byte echoed after everything sent came back was accepted")
	}
}

func TestStreamRejectsMissingBytes(t *testing.T) {
	all, s := stream(4, 32, 2)
	// a byte dropped: everything after it is shifted
	if _, err := s.Feed(append(all[:20:20], all[21:]...)); err == nil {
		t.Fatal("a dropped byte was not noticed")
	}
}
