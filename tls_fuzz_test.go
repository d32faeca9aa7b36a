//go:build unix

package evloop

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testcert"
)

// FuzzTLSHandshakeBytes sends a TLS listener any bytes, cut in two writes
// at any point, then its FIN: the connection ends (an alert, or a close)
// without OnOpen, well before the handshake's timeout, and the listener
// goes on serving a real client. A real ClientHello, mutated, is among the
// seeds.
func FuzzTLSHandshakeBytes(f *testing.F) {
	hello := clientHello(f)
	f.Add(hello, uint16(len(hello)/2))
	f.Add(hello[:5], uint16(2))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), uint16(3))
	f.Add([]byte{22, 3, 1, 0xff, 0xff}, uint16(5))
	f.Add([]byte{0x80, 0x2e, 1, 3, 1}, uint16(1))
	f.Add([]byte{21, 3, 3, 0, 2, 2, 40}, uint16(0))
	opened := make(chan struct{}, 1)
	srv, err := NewServer(&funcHandler{
		open: func(c *Conn) {
			select {
			case opened <- struct{}{}:
			default:
			}
		},
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			c.Write(b)
		},
	}, Options{Loops: 1, Logger: quietLogger(), HandshakeTimeout: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	a, err := srv.ListenTLS("tcp", "127.0.0.1:0", testcert.Server())
	if err != nil {
		f.Fatal(err)
	}
	addr := a.String()
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(3 * time.Second)) // before the handshake's timeout
		k := int(split) % (len(in) + 1)
		c.Write(in[:k])
		c.Write(in[k:])
		c.(*net.TCPConn).CloseWrite()
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("the server did not end the connection: %v", err)
		}
		select {
		case <-opened:
			t.Fatal("OnOpen ran for a client that sent no whole handshake")
		default:
		}
		good := dialTLS(t, addr, nil)
		if got, err := roundTrip(good, []byte("still")); err != nil || string(got) != "still" {
			t.Fatalf("a real client after it: %q, %v", got, err)
		}
		good.Close()
		<-opened
	})
}
