package http1_test

import (
	"cmp"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
)

// A client that closes its connection after a pooled handler's
// SwitchProtocols answered 101, but before the handler returned, must
// still end the switched-to protocol: its OnClose runs, as it does when
// the EOF comes after the handler returned.
func TestStdSwitchEOFBeforeHandlerReturns(t *testing.T) {
	srv := &http1.Server{}
	closed := make(chan error, 1)
	release := make(chan struct{})
	srv.HandleFunc("/std-upgrade", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Upgrade", "upper")
		w.Header().Set("Connection", "Upgrade")
		sw := w.(interface{ SwitchProtocols(http1.Protocol) error })
		if err := sw.SwitchProtocols(&upper{closed: closed}); err != nil {
			t.Error(err)
		}
		<-release // e.g. the handler records the new connection somewhere
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("GET /std-upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: upper\r\n\r\n")
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("%v %v", resp, err)
	}
	c.nc.Close() // the client goes away before the handler returns
	time.Sleep(200 * time.Millisecond)
	close(release)
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("the protocol's OnClose did not run: the connection the client closed stays open")
	}
}

// As net/http's server (Issue 31753): an answer with a Content-Encoding
// gets no sniffed Content-Type (it would describe the encoded bytes, and
// a browser would save "application/x-gzip" rather than show the page);
// nor does one whose handler set Transfer-Encoding.
func TestStdNoSniffWithContentEncoding(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"))
		case "/te":
			w.Header().Set("Transfer-Encoding", "chunked")
			io.WriteString(w, "<html>hello")
		}
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			for _, path := range []string{"/gzip", "/te"} {
				head, _, _ := c.get(path)
				if ct := fields(head, "Content-Type"); ct != nil {
					t.Errorf("GET %s: Content-Type %q sniffed", path, ct)
				}
			}
		})
	}
}

// A handler that read the first bytes of a body sent with "Expect:
// 100-continue" (so that "100 Continue" went out) and then hijacks the
// connection: Hijack waits for the 100 Continue to go out and succeeds,
// as net/http's does.
func TestStdHijackAfterContinue(t *testing.T) {
	gotErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body.Read(make([]byte, 5)) // sends 100 Continue, returns the 5 bytes here
		nc, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			nc.Close()
		}
		gotErr <- err
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			fails := 0
			var first error
			for range 20 {
				c := dialRaw(t, s.addr)
				c.send("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\nhello")
				if err := <-gotErr; err != nil {
					fails++
					first = cmp.Or(first, err)
				}
				c.nc.Close()
			}
			if fails > 0 {
				t.Errorf("Hijack failed %d times of 20: %v", fails, first)
			}
		})
	}
}

// As net/http's Write: an empty write succeeds whatever the status, even
// one that allows no body (it writes nothing), as io.Copy of an empty
// reader or a template that renders nothing do after WriteHeader(304).
func TestStdEmptyWriteNoBodyStatus(t *testing.T) {
	errs := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotModified)
		_, err := w.Write(nil)
		errs <- err
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.get("/")
			if err := <-errs; err != nil {
				t.Errorf("Write(nil) after 304 = %v; want nil", err)
			}
		})
	}
}

// A write deadline that passed while the handler wrote nothing can be
// moved on, as a net.Conn's can, and the rest is written, as by net/http's
// server: a Server-Sent Events handler that sets a deadline before each
// event does so, between events further apart than the deadline. The
// deadlines that bound writes are 10 s, which a loaded machine cannot
// outlast; the one that passes, 100 ms, is set once the first event is
// written.
func TestStdWriteDeadlineExtendedAfterIdle(t *testing.T) {
	errs := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(w, "event 1\n")
		rc.Flush()
		rc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		time.Sleep(500 * time.Millisecond) // no event for a while
		rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, err := io.WriteString(w, "event 2\n")
		if err == nil {
			err = rc.Flush()
		}
		errs <- err
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if werr := <-errs; werr != nil {
				t.Errorf("the write after the deadline was moved on: %v", werr)
			}
			if string(body) != "event 1\nevent 2\n" || err != nil {
				t.Errorf("body %q, %v; want both events", body, err)
			}
		})
	}
}

// The same for the read deadline: one that passed while the handler was
// not reading the body can be moved on before the next read (to 10 s,
// which the body's end, sent 700 ms after its start, cannot miss on a
// loaded machine).
func TestStdReadDeadlineExtendedAfterIdle(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		time.Sleep(500 * time.Millisecond) // busy with something else
		rc.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(b)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
			time.Sleep(700 * time.Millisecond)
			c.send("world")
			if resp, body := c.read("POST"); resp.StatusCode != 200 || body != "helloworld" {
				t.Errorf("%d %q; want 200 helloworld", resp.StatusCode, body)
			}
		})
	}
}

// An answer still in the handler's buffer when its write deadline passes
// does not go out when the handler returns: its write fails, as net/http's
// server's does, and the client gets no answer.
func TestStdBufferedAnswerPastWriteDeadline(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "too late")
		time.Sleep(400 * time.Millisecond)
	})
	for _, s := range serveTwins(t, h, func(s *http1.Server) { s.WriteTimeout = 100 * time.Millisecond },
		func(s *http.Server) { s.WriteTimeout = 100 * time.Millisecond }) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, err := http.ReadResponse(c.br, nil); err == nil {
				body, _ := io.ReadAll(resp.Body)
				t.Errorf("got %d %q after the write deadline; want no answer", resp.StatusCode, body)
			}
		})
	}
}

// A pipelined request's handler may hijack while the answer before it is
// still going out to a client slow to read: the hijack waits for it, as
// net/http's server reads the request only once that answer is written.
func TestStdHijackAfterQueuedAnswer(t *testing.T) {
	big := strings.Repeat("x", 4<<20)
	errs := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			io.WriteString(w, big)
			return
		}
		nc, _, err := http.NewResponseController(w).Hijack()
		errs <- err
		if err == nil {
			io.WriteString(nc, "hijacked\n")
			nc.Close()
		}
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
			time.Sleep(300 * time.Millisecond) // the first answer waits on the client
			if resp, body := c.read("GET"); resp.StatusCode != 200 || len(body) != len(big) {
				t.Fatalf("first answer: %d, %d bytes", resp.StatusCode, len(body))
			}
			if err := <-errs; err != nil {
				t.Fatalf("Hijack behind a queued answer: %v", err)
			}
			if rest, err := io.ReadAll(c.br); string(rest) != "hijacked\n" || err != nil {
				t.Errorf("after the hijack: %q, %v", rest, err)
			}
		})
	}
}

// A client that pipelines two requests and then sends its EOF has gone
// away for both: as with net/http's server, the second request's context
// is cancelled too (and CloseNotify tells it), not only the one handled
// when the EOF came; both are answered.
func TestStdPipelinedContextAfterEOF(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			io.WriteString(w, "cancelled")
		case <-time.After(3 * time.Second):
			io.WriteString(w, "live")
		}
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
			c.nc.(*net.TCPConn).CloseWrite()
			for _, path := range []string{"/a", "/b"} {
				if _, body := c.read("GET"); body != "cancelled" {
					t.Errorf("GET %s: the handler's context %s; want cancelled", path, body)
				}
			}
		})
	}
}

// A handler that read part of a body, hijacked the connection and then
// reads the body again: the bytes the hijacked connection's reader gave
// are not read twice, and the Read does not wait for ever for bytes the
// hijacked connection now receives, as with net/http's server, whose
// body and hijacked reader share the connection's buffer.
func TestStdBodyReadAfterHijack(t *testing.T) {
	got := make(chan string, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body.Read(make([]byte, 2))
		nc, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			got <- err.Error()
			return
		}
		defer nc.Close()
		nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		hijacked, _ := io.ReadAll(brw)
		read := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(r.Body)
			read <- string(b)
		}()
		select {
		case body := <-read:
			got <- "hijacked " + string(hijacked) + ", body " + body
		case <-time.After(2 * time.Second):
			got <- "hijacked " + string(hijacked) + ", body read waits"
			nc.Close()
		}
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabcde")
			if g, want := <-got, "hijacked cde, body "; g != want {
				t.Errorf("%q; want %q", g, want)
			}
		})
	}
}

// The files a pooled handler's ParseMultipartForm wrote a large upload to
// are removed once the handler returns, as net/http's server removes them,
// where they stayed in the temporary directory for good.
func TestStdMultipartFilesRemoved(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1); err != nil { // every file to disk
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.Close()
		io.WriteString(w, "uploaded")
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir) // where the multipart reader writes its files
			var body strings.Builder
			mw := multipart.NewWriter(&body)
			fw, _ := mw.CreateFormFile("file", "big.bin")
			io.WriteString(fw, strings.Repeat("x", 64<<10))
			mw.Close()
			resp, err := client(t).Post("http://"+s.addr+"/", mw.FormDataContentType(), strings.NewReader(body.String()))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "uploaded" {
				t.Fatalf("answer %q; want \"uploaded\"", b)
			}
			var left []os.DirEntry
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if left, _ = os.ReadDir(dir); len(left) == 0 {
					return
				}
			}
			t.Errorf("%d files of the upload left in the temporary directory", len(left))
		})
	}
}
