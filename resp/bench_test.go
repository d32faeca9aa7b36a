package resp

import (
	"bytes"
	"testing"
)

// setPipeline is 16 requests "SET key:000000001234 <16 bytes>", as a client
// pipelines them: arrays of bulk strings, or inline.
func setPipeline(inline bool) []byte {
	var b []byte
	for range 16 {
		if inline {
			b = append(b, "SET key:000000001234 xxxxxxxxxxxxxxxx\r\n"...)
		} else {
			b = AppendCommand(b, []byte("SET"), []byte("key:000000001234"), bytes.Repeat([]byte{'x'}, 16))
		}
	}
	return b
}

func benchmarkCommand(b *testing.B, in []byte) {
	var p Parser
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		for rest := in; len(rest) > 0; {
			_, n, err := p.Command(rest)
			if err != nil {
				b.Fatal(err)
			}
			rest = rest[n:]
		}
	}
}

func BenchmarkCommand(b *testing.B) { benchmarkCommand(b, setPipeline(false)) }

func BenchmarkCommandInline(b *testing.B) { benchmarkCommand(b, setPipeline(true)) }

func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct {
		name string
		in   string
	}{
		{"kind=ok", "+OK\r\n"},
		{"kind=bulk", "$16\r\nxxxxxxxxxxxxxxxx\r\n"},
		{"kind=array", string(AppendCommand(nil, bytes.Split([]byte("a bb ccc dddd eeeee ffffff ggggggg hhhhhhhh iiiiiiiii jjjjjjjjjj"), []byte(" "))...))},
		{"kind=map", "%3\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n$5\r\nscore\r\n,1.5\r\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := []byte(bc.in)
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, _, err := Parse(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWriter(b *testing.B) {
	for _, bc := range []struct {
		name  string
		proto int
	}{{"proto=2", 2}, {"proto=3", 3}} {
		b.Run(bc.name, func(b *testing.B) {
			w := Writer{Proto: bc.proto}
			writeMix(&w)
			b.ReportAllocs()
			b.SetBytes(int64(len(w.Buf)))
			for b.Loop() {
				w.Reset()
				writeMix(&w)
			}
		})
	}
}

// BenchmarkCommandArriving parses a request of 100,000 arguments as a
// connection's buffer receives it, 16 KiB at a time, calling Command after
// each piece.
func BenchmarkCommandArriving(b *testing.B) {
	req := bigRequest(100000)
	buf := make([]byte, 0, len(req))
	var p Parser
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		buf = buf[:0]
		for len(buf) < len(req) {
			buf = append(buf, req[len(buf):min(len(buf)+16<<10, len(req))]...)
			if _, _, err := p.Command(buf); err != nil && err != ErrIncomplete {
				b.Fatal(err)
			}
		}
	}
}
