package http1_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// FuzzServer sends arbitrary bytes, in two writes, on a connection and
// half-closes it: the server must answer with well-formed responses and
// close, and go on serving other connections.
func FuzzServer(f *testing.F) {
	seeds := []string{
		"GET /fast HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /std HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /fast/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
		"POST /std/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"POST /fast/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n",
		"POST /std/echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\nabc",
		"GET /std/stream?n=3 HTTP/1.0\r\n\r\n",
		"HEAD /fast HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"\r\n\r\nGET * HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n",
		"GET http://h/fast?q HTTP/1.1\r\nHost: h\r\n\r\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint16(i*7))
	}
	srv := testServer()
	addr := serve(f, srv)
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		k := int(split) % (len(in) + 1)
		go func() {
			nc.Write(in[:k])
			nc.Write(in[k:])
			nc.(*net.TCPConn).CloseWrite()
		}()
		br := bufio.NewReader(nc)
		for {
			if _, err := br.Peek(1); err != nil {
				if isTimeout(err) {
					t.Fatal("the server neither answered nor closed")
				}
				break
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("malformed response: %v", err)
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("reading a body: %v", err)
			}
		}
		// Another connection is served as ever.
		good, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer good.Close()
		good.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(good, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(good), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("other connection: %v", err)
		}
	})
}
