package http1_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Twins of net/http's server on what a pooled handler and its client see:
// each test serves one handler with http1 and net/http and expects
// net/http's behaviour of both.

// net/http's server copies "Pragma: no-cache" to Cache-Control when the
// request has no Cache-Control (fixPragmaCacheControl, RFC 7234 5.4).
func TestStdPragmaNoCache(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "cc="+r.Header.Get("Cache-Control"))
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\n\r\n")
			if _, body := c.read("GET"); body != "cc=no-cache" {
				t.Errorf("handler saw %q; want %q", body, "cc=no-cache")
			}
		})
	}
}

// net/http's ResponseWriter is an http.CloseNotifier; handlers (and
// frameworks, gin's Context.Stream) assert it.
func TestStdCloseNotifier(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := w.(interface{ CloseNotify() <-chan bool }) // http.CloseNotifier, deprecated
		fmt.Fprint(w, ok)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			if _, _, body := c.get("/"); body != "true" {
				t.Errorf("ResponseWriter is a CloseNotifier: %s; want true", body)
			}
		})
	}
}

// A Write past the declared Content-Length fails, and so do the later
// ones: net/http counts the refused bytes as written.
func TestStdWriteAfterContentLengthOverflow(t *testing.T) {
	errs := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "hello world")
		_, err := io.WriteString(w, "hello")
		errs <- err
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if err := <-errs; !errors.Is(err, http.ErrContentLength) {
				t.Errorf("Write after a refused one = %v; want http.ErrContentLength", err)
			}
		})
	}
}

// A panicking handler: net/http's server closes the connection (FIN),
// after what was flushed; the client reads an unexpected EOF, not a
// reset.
func TestStdPanicClosesNotResets(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flushed" {
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
		panic(http.ErrAbortHandler)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET /flushed HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // the close arrived
			b, err := io.ReadAll(resp.Body)
			if string(b) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("flushed: body %q, %v; want %q, unexpected EOF", b, err, "partial")
			}

			c = dialRaw(t, s.addr)
			c.send("GET /silent HTTP/1.1\r\nHost: x\r\n\r\n")
			time.Sleep(200 * time.Millisecond)
			if _, err := c.br.ReadByte(); err != io.EOF {
				t.Errorf("nothing written: read %v; want EOF", err)
			}
		})
	}
}

// A Request.Body kept past the handler's return reads
// http.ErrBodyReadAfterClose, as net/http's server closes it.
func TestStdBodyReadAfterHandler(t *testing.T) {
	kept := make(chan io.ReadCloser, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keep" {
			kept <- r.Body
			return
		}
		n, err := (<-kept).Read(make([]byte, 10))
		fmt.Fprintf(w, "%d %v", n, err)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST /keep HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
			c.read("POST")
			want := fmt.Sprintf("0 %v", http.ErrBodyReadAfterClose)
			if _, _, body := c.get("/read"); body != want {
				t.Errorf("Read after the handler returned: %q; want %q", body, want)
			}
		})
	}
}

// Header values are trimmed of the HTTP whitespace (SP, HTAB, CR, LF)
// only, as textproto.TrimString trims them; a trailing no-break space
// (UTF-8 C2 A0) is part of the value.
func TestStdHeaderValueTrim(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Val", "a\u00a0")
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			head, _, _ := c.get("/")
			if want := "X-Val: a\u00a0\r\n"; !strings.Contains(head, want) {
				t.Errorf("head %q lacks %q", head, want)
			}
		})
	}
}

// A zero-length Read of the body returns at once, as net/http's does
// (bufio.Reader.Read with an empty slice), even with no body bytes
// arrived yet: the body is sent only once it returned.
func TestStdZeroLengthBodyRead(t *testing.T) {
	returned := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body.Read(nil)
		returned <- struct{}{}
		io.ReadAll(r.Body)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
			select {
			case <-returned:
			case <-time.After(30 * time.Second):
				t.Fatal("Read(nil) did not return before the body came")
			}
			c.send("hello")
			c.read("POST")
		})
	}
}

// A 101 answer (no Hijack) has no Content-Length, as net/http's server
// suppresses it for a status that has no body.
func TestStd101NoContentLength(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "0")
		w.Header().Set("Upgrade", "foo")
		w.Header().Set("Connection", "Upgrade")
		w.WriteHeader(http.StatusSwitchingProtocols)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if v := fields(c.peekHead(), "Content-Length"); v != nil {
				t.Errorf("101 head has Content-Length %q", v)
			}
		})
	}
}

// A Read of no bytes after the body's end reports the end, io.EOF, as
// net/http's body does; it returned nil.
func TestStdZeroLengthReadAfterEOF(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		_, err := r.Body.Read(nil)
		fmt.Fprint(w, err)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
			if _, body := c.read("POST"); body != io.EOF.Error() {
				t.Errorf("Read(nil) after the body's end: %q; want %q", body, io.EOF)
			}
		})
	}
}

// CloseNotify's channel gets true when the client closes, or half-closes,
// while the handler runs, as net/http's does; it got it only once the
// connection was gone, after the handler returned.
func TestStdCloseNotifyWhileHandling(t *testing.T) {
	notified := make(chan bool, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := w.(interface{ CloseNotify() <-chan bool }) // http.CloseNotifier, deprecated
		select {
		case v := <-cn.CloseNotify():
			notified <- v
		case <-time.After(3 * time.Second):
			notified <- false
		}
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		for _, how := range []string{"close", "half-close"} {
			t.Run(s.name+"/"+how, func(t *testing.T) {
				c := dialRaw(t, s.addr)
				c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				time.Sleep(100 * time.Millisecond) // the handler waits
				if how == "close" {
					c.nc.Close()
				} else {
					c.nc.(*net.TCPConn).CloseWrite()
				}
				if !<-notified {
					t.Errorf("no CloseNotify after the client's %s", how)
				}
			})
		}
	}
}

// Equal Content-Length fields reach the handler as one, as net/http's
// server deduplicates them (Issue 16490); the handler saw them all.
func TestStdDuplicateContentLength(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%q %d %s", r.Header["Content-Length"], r.ContentLength, b)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\ncontent-length:  5 \r\n\r\nhello")
			if _, body := c.read("POST"); body != `["5"] 5 hello` {
				t.Errorf("handler saw %s; want %s", body, `["5"] 5 hello`)
			}
		})
	}
}

// A pipelined request whose body the client's EOF cuts short, the EOF
// having come while the request before it was handled: the handler's
// read fails with io.ErrUnexpectedEOF and the answer goes out, as from
// net/http's server. The read waited for bytes that could not come; the
// connection stayed, and Shutdown waited for it.
func TestStdPipelinedBodyCutByEOF(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(100 * time.Millisecond) // the EOF comes meanwhile
		}
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %v", b, err)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab" +
				"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhe")
			c.nc.(*net.TCPConn).CloseWrite()
			if _, body := c.read("POST"); body != "ab <nil>" {
				t.Errorf("first answer %q; want %q", body, "ab <nil>")
			}
			if _, body := c.read("POST"); body != "he unexpected EOF" {
				t.Errorf("second answer %q; want %q", body, "he unexpected EOF")
			}
			c.closed()
		})
	}
}

// What a handler that flushed its answer left unread of the body counts,
// the bytes that arrived as well as those to come: more than the server
// drops, and the connection closes after the answer, as net/http's server
// closes it; a request pipelined behind is not answered. Only what had
// not arrived counted, so that the rest was dropped and the next request
// answered.
func TestStdUnreadBodyAfterFlush(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(200 * time.Millisecond) // the body's first bytes arrive
		io.WriteString(w, "ignored")
		w.(http.Flusher).Flush()
	})
	const size = 300 << 10
	bodies := map[string]string{
		"length":  fmt.Sprintf("Content-Length: %d\r\n\r\n%s", size, strings.Repeat("a", size)),
		"chunked": fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", size, strings.Repeat("a", size)),
	}
	for _, s := range serveTwins(t, h, nil, nil) {
		for name, body := range bodies {
			t.Run(s.name+"/"+name, func(t *testing.T) {
				c := dialRaw(t, s.addr)
				go io.WriteString(c.nc, "POST / HTTP/1.1\r\nHost: x\r\n"+body+"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				if _, body := c.read("POST"); body != "ignored" {
					t.Fatalf("answer %q; want %q", body, "ignored")
				}
				c.closed()
			})
		}
	}
}

// A body left unread closes the connection when 256 KiB or more of it
// remain, as net/http's server closes it (maxPostHandlerReadBytes, checked
// with >=); a byte less is dropped and the next request answered.
func TestStdUnreadBodyAtDiscardLimit(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ignored")
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		for _, size := range []int{256<<10 - 1, 256 << 10} {
			t.Run(fmt.Sprintf("%s/%d", s.name, size), func(t *testing.T) {
				c := dialRaw(t, s.addr)
				go io.WriteString(c.nc, fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", size, strings.Repeat("a", size))+
					"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, _ := c.read("POST")
				if size < 256<<10 {
					if resp.Close {
						t.Fatal("answer closes the connection; want it kept")
					}
					c.read("GET")
					return
				}
				if !resp.Close {
					t.Error("answer keeps the connection; want Connection: close")
				}
				c.closed()
			})
		}
	}
}

// A handler that declared a Content-Length and wrote more than it in one
// Write, which was refused, sent fewer bytes than declared: as net/http's
// server, the connection closes after the answer, where the next answer's
// first bytes would be read as the rest of this one's body.
func TestStdRefusedOverflowCloses(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/over" {
			w.Header().Set("Content-Length", "1")
			io.WriteString(w, "hi") // refused: ErrContentLength
			return
		}
		io.WriteString(w, "next")
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("GET /over HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ContentLength != 1 {
				t.Fatalf("Content-Length %d; want 1", resp.ContentLength)
			}
			c.closed()
		})
	}
}
