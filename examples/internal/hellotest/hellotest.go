// Package hellotest is the test suite that both "Hello, World!" examples
// pass: real HTTP clients against a running server.
package hellotest

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop/examples/internal/hello"
)

// Run runs every case against the server at addr.
func Run(t *testing.T, addr string) {
	t.Run("net/http client", func(t *testing.T) { httpClient(t, addr) })
	t.Run("curl", func(t *testing.T) { curl(t, addr) })
	t.Run("pipelined", func(t *testing.T) { pipelined(t, addr) })
	t.Run("client that reads late", func(t *testing.T) { readsLate(t, addr) })
	t.Run("HEAD", func(t *testing.T) { head(t, addr) })
	t.Run("bad request", func(t *testing.T) { badRequest(t, addr) })
	t.Run("half-close after pipelining", func(t *testing.T) { halfClose(t, addr) })
	t.Run("client leaves", func(t *testing.T) { clientLeaves(t, addr) })
}

func httpClient(t *testing.T, addr string) {
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				resp, err := client.Get("http://" + addr + "/")
				if err != nil {
					t.Error(err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || string(body) != "Hello, World!" {
					t.Errorf("GET = %d %q, %v; want 200 Hello, World!", resp.StatusCode, body, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func curl(t *testing.T, addr string) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	out, err := exec.Command("curl", "-sS", "--max-time", "10", "http://"+addr+"/a", "http://"+addr+"/b").Output()
	if err != nil || string(out) != "Hello, World!Hello, World!" {
		t.Fatalf("curl = %q, %v; want two greetings", out, err)
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

func readResponses(t *testing.T, r *bufio.Reader, n int) {
	t.Helper()
	for i := range n {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("response %d of %d: %v", i, n, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "Hello, World!" {
			t.Fatalf("response %d body %q", i, body)
		}
	}
}

func pipelined(t *testing.T, addr string) {
	c := dial(t, addr)
	req := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	// Three requests in one write, then one split across writes.
	io.WriteString(c, req+req+req)
	r := bufio.NewReader(c)
	readResponses(t, r, 3)
	io.WriteString(c, req[:9])
	time.Sleep(5 * time.Millisecond)
	io.WriteString(c, req[9:])
	readResponses(t, r, 1)
}

// readsLate sends many requests before reading any answer, so the server
// must hold its output back until the client reads.
func readsLate(t *testing.T, addr string) {
	c := dial(t, addr)
	const n = 20_000
	req := strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\n", n)
	errc := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c, req)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the server fill its send buffer
	readResponses(t, bufio.NewReaderSize(c, 64<<10), n)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// head sends a HEAD request and a GET behind it: the answer to HEAD has no
// body, or the GET's answer would not be where the client reads it.
func head(t *testing.T, addr string) {
	c := dial(t, addr)
	io.WriteString(c, "HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, &http.Request{Method: "HEAD"})
	if err != nil || resp.StatusCode != 200 || resp.ContentLength != 13 {
		t.Fatalf("HEAD = %v, %v; want 200 with Content-Length 13", resp, err)
	}
	readResponses(t, r, 1)
}

func badRequest(t *testing.T, addr string) {
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\n\r\nNONSENSE\r\n\r\n")
	all, err := io.ReadAll(c) // the server answers, then closes
	if err != nil {
		t.Fatal(err)
	}
	want := hello.Response + hello.ErrorResponse(hello.ErrMalformed)
	if string(all) != want {
		t.Fatalf("got %q; want %q then EOF", all, want)
	}
}

func clientLeaves(t *testing.T, addr string) {
	for range 50 {
		c := dial(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\n") // half a request
		c.Close()
	}
	// Others are still served.
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\n\r\n")
	buf := make([]byte, len(hello.Response))
	if _, err := io.ReadFull(c, buf); err != nil || !bytes.Equal(buf, []byte(hello.Response)) {
		t.Fatalf("after clients left: %q, %v", buf, err)
	}
}

// halfClose pipelines requests, then shuts down its sending side: it is
// still owed every answer, and then EOF.
func halfClose(t *testing.T, addr string) {
	c := dial(t, addr)
	io.WriteString(c, strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 3))
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat(hello.Response, 3); string(all) != want {
		t.Fatalf("got %q; want three responses, then EOF", all)
	}
}
