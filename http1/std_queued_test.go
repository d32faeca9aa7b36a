//go:build unix

package http1_test

import (
	"bytes"
	"cmp"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
	"golang.org/x/sys/unix"
)

// queuedSize is an answer longer than the sockets' buffers hold (those of
// serveQueued's servers and of dialNotReading's clients), and within what
// a pooled handler may leave queued on the loop when it returns (256 KiB
// beyond them): its rest waits for the client in the server's queue.
const queuedSize = 240 << 10

// queuedTimeouts are the servers' timeouts for serveQueued; a zero one is
// the server's default.
type queuedTimeouts struct {
	write, idle, readHeader, read time.Duration
}

// serveQueued serves h beside net/http with small send buffers and the
// timeouts given; cfg, if any, sets the evloop server up further.
func serveQueued(t *testing.T, h http.Handler, to queuedTimeouts, cfg ...func(*http1.Server)) []twin {
	t.Helper()
	const sendBuffer = 16 << 10
	return serveTwins(t, h, func(s *http1.Server) {
		s.WriteTimeout, s.IdleTimeout, s.ReadHeaderTimeout, s.ReadTimeout = to.write, to.idle, to.readHeader, to.read
		s.Engine.SendBuffer = sendBuffer
		for _, f := range cfg {
			f(s)
		}
	}, func(s *http.Server) {
		s.WriteTimeout, s.IdleTimeout, s.ReadHeaderTimeout, s.ReadTimeout = to.write, to.idle, to.readHeader, to.read
		s.ConnState = func(nc net.Conn, state http.ConnState) {
			if state == http.StateNew {
				nc.(*net.TCPConn).SetWriteBuffer(sendBuffer)
			}
		}
	})
}

// dialNotReading dials addr for a client that reads nothing for a while:
// its receive buffer is small, so that a long answer soon waits on the
// server (not too small: once the client reads, the rest must come
// quickly, not at the pace of the sender's zero-window probes).
func dialNotReading(t *testing.T, addr string) *rawConn {
	t.Helper()
	c := dialRaw(t, addr)
	if err := c.nc.(*net.TCPConn).SetReadBuffer(32 << 10); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitReset waits until the server resets the connection, as the socket's
// pending error (SO_ERROR) tells without reading what is unread, or until d
// has passed.
func (c *rawConn) waitReset(d time.Duration) {
	c.t.Helper()
	rc, err := c.nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		c.t.Fatal(err)
	}
	pending := func() (soErr int, err error) {
		cerr := rc.Control(func(fd uintptr) {
			soErr, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		})
		return soErr, cmp.Or(cerr, err)
	}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if soErr, err := pending(); soErr != 0 || err != nil {
			return
		}
	}
}

// What is still queued of a pooled handler's answer when the handler
// returns must go out within the write deadline, as the whole answer must
// for net/http's server: a client that does not read never gets it all,
// once WriteTimeout has passed, however long IdleTimeout.
func TestStdWriteTimeoutBoundsQueuedAnswer(t *testing.T) {
	wrote := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(queuedSize))
		_, err := w.Write(bytes.Repeat([]byte("x"), queuedSize))
		wrote <- err
	})
	for _, s := range serveQueued(t, h, queuedTimeouts{write: 300 * time.Millisecond, idle: time.Minute}) {
		t.Run(s.name, func(t *testing.T) {
			c := dialNotReading(t, s.addr)
			c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if err := recvErr(t, wrote); err == nil {
				// The handler returned with the rest of its answer
				// queued (net/http's Write fails on the deadline): the
				// server gives up on it by itself.
				c.waitReset(5 * time.Second)
			}
			resp, err := http.ReadResponse(c.br, nil)
			if err == nil {
				var n int64
				n, err = io.Copy(io.Discard, resp.Body)
				if err == nil {
					t.Fatalf("the whole answer (%d bytes) came, read after WriteTimeout passed", n)
				}
			}
		})
	}
}

// bigThenNext answers /big with queuedSize bytes, the rest with "next".
var bigThenNext = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/big" {
		w.Write(bytes.Repeat([]byte("x"), queuedSize))
		return
	}
	io.WriteString(w, "next")
})

// readBig reads bigThenNext's answer to /big.
func (c *rawConn) readBig() {
	c.t.Helper()
	if _, body := c.read("GET"); len(body) != queuedSize {
		c.t.Fatalf("first answer: %d bytes; want %d", len(body), queuedSize)
	}
}

// A connection whose pooled answer goes out, within its write deadline,
// to a client slow to read it does not wait for a request meanwhile:
// IdleTimeout starts once the answer is written, as with net/http's
// server, which waits for the next request once the answer is. A request
// sent while the answer waits on the client is answered. IdleTimeout is a
// second: the first request, sent as the connection opens, must come
// within it, which a loaded machine needs.
func TestStdIdleTimeoutAfterQueuedAnswer(t *testing.T) {
	const idle = time.Second
	for _, s := range serveQueued(t, bigThenNext, queuedTimeouts{write: time.Minute, idle: idle}) {
		t.Run(s.name, func(t *testing.T) {
			c := dialNotReading(t, s.addr)
			c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
			time.Sleep(2 * idle) // the answer waits on the client past IdleTimeout
			c.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			c.readBig()
			if _, body := c.read("GET"); body != "next" {
				t.Fatalf("next answer %q; want %q", body, "next")
			}
		})
	}
}

// A head pipelined behind a pooled answer still going out to a client slow
// to read has ReadHeaderTimeout from when that answer is written, as with
// net/http's server, which reads the next request once the answer is
// written: its first bytes, sent while the client does not read, do not
// start it. ReadHeaderTimeout is a second, which the head's end, sent once
// the answer is read, needs on a loaded machine.
func TestStdReadHeaderTimeoutAfterQueuedAnswer(t *testing.T) {
	const readHeader = time.Second
	for _, s := range serveQueued(t, bigThenNext, queuedTimeouts{write: time.Minute, idle: time.Minute, readHeader: readHeader}) {
		t.Run(s.name, func(t *testing.T) {
			c := dialNotReading(t, s.addr)
			c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n")
			time.Sleep(2 * readHeader) // the answer waits on the client past ReadHeaderTimeout
			c.readBig()
			c.send("Host: x\r\n\r\n") // the head's end, at once
			if resp, body := c.read("GET"); resp.StatusCode != 200 || body != "next" {
				t.Fatalf("next answer %d %q; want 200 %q", resp.StatusCode, body, "next")
			}
		})
	}
}

// A pooled answer still going out to a client slow to read keeps the
// connection off IdleTimeout whatever the connection does meanwhile:
// answer a request pipelined behind it itself (a 404), run a pooled
// handler whose answer is still queued once the first is written, or drop
// the end of a body the handler left unread. IdleTimeout starts once the
// last answer is written, as with net/http's server.
func TestStdIdleTimeoutAfterQueuedAnswers(t *testing.T) {
	returned := make(chan struct{}, 1)
	big := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), queuedSize))
		if r.Method == "POST" {
			select {
			case returned <- struct{}{}:
			default:
			}
		}
	})
	small := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "small")
	})
	mux := http.NewServeMux()
	mux.Handle("/big", big)
	mux.Handle("/small", small)
	const idle = 200 * time.Millisecond
	// ReadTimeout bounds the wait for the rest of a body the handler left
	// unread (else IdleTimeout would), so that a client slow to send it
	// on a busy machine still has it dropped.
	twins := serveQueued(t, mux, queuedTimeouts{write: time.Minute, idle: idle, read: time.Minute}, func(s *http1.Server) {
		s.Handler = nil // the server's own 404 for the other paths
		s.Handle("/big", big)
		s.Handle("/small", small)
	})
	tests := []struct {
		name string
		send string // the first requests, at once
		body string // sent once the first handler returned, if not empty
		want []int  // the statuses of the first requests' answers
	}{
		{
			name: "own answer behind it",
			send: "GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /missing HTTP/1.1\r\nHost: x\r\n\r\n",
			want: []int{200, 404},
		},
		{
			name: "pooled answer behind it",
			send: "GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /big HTTP/1.1\r\nHost: x\r\n\r\n",
			want: []int{200, 200},
		},
		{
			name: "unread body after it",
			send: "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n",
			body: "body",
			want: []int{200},
		},
	}
	for _, tc := range tests {
		for _, s := range twins {
			t.Run(tc.name+"/"+s.name, func(t *testing.T) {
				c := dialNotReading(t, s.addr)
				c.send(tc.send)
				if tc.body != "" {
					select {
					case <-returned:
						// The body comes once the loop took the
						// connection back, well within ReadTimeout.
						time.Sleep(idle / 4)
					case <-time.After(5 * idle):
						// net/http's server reads the body before its
						// answer's head goes out.
					}
					c.send(tc.body)
				}
				for i, want := range tc.want {
					if want == 200 {
						time.Sleep(5 * idle) // a long answer waits on the client past IdleTimeout
					}
					if want == 200 && !slices.Contains(tc.want[i+1:], 200) {
						// The next request comes while the last long
						// answer still waits: sent once all was read, it
						// would race the IdleTimeout that starts when the
						// last answer is written.
						c.send("GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
					}
					resp, body := c.read("GET")
					if resp.StatusCode != want || want == 200 && len(body) != queuedSize {
						t.Fatalf("answer %d: %d, %d bytes; want %d (%d bytes if 200)", i, resp.StatusCode, len(body), want, queuedSize)
					}
				}
				if _, body := c.read("GET"); body != "small" {
					t.Fatalf("last answer %q; want %q", body, "small")
				}
			})
		}
	}
}
