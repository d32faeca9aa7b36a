package http1_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/internal/testcert"
	"github.com/evloop/evloop/internal/testpeer"
)

// serveTLS starts srv for HTTPS on a loopback port, with the test
// certificate in TLSConfig, and stops it when the test ends.
func serveTLS(t testing.TB, srv *http1.Server) string {
	t.Helper()
	if srv.TLSConfig == nil {
		srv.TLSConfig = testcert.Server()
	}
	return serveWith(t, srv, func(ln net.Listener) error { return srv.StartTLS(ln, "", "") })
}

// tlsClient returns an http.Client that trusts the test certificate and
// offers h2 as well as http/1.1, as browsers do.
func tlsClient(t testing.TB) *http.Client {
	tr := &http.Transport{TLSClientConfig: testcert.Client(), ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func tlsTestServer() *http1.Server {
	srv := testServer()
	srv.HandleFunc("/std/tls", func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			http.Error(w, "no TLS state", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "%s %x %v", r.TLS.NegotiatedProtocol, r.TLS.Version, r.TLS.HandshakeComplete)
	})
	srv.HandleFastFunc("GET /fast/tls", func(w *http1.Response, r *http1.Request) {
		cs, ok := w.Conn().ConnectionState()
		fmt.Fprintf(w, "%v %s", ok, cs.NegotiatedProtocol)
	})
	return srv
}

// TestHTTPS: net/http's client over TLS, offering h2, gets HTTP/1.1 from
// fast and pooled routes, bodies both ways, keep-alive, and the TLS state
// in Request.TLS.
func TestHTTPS(t *testing.T) {
	addr := serveTLS(t, tlsTestServer())
	c := tlsClient(t)
	base := "https://" + addr
	resp, body := get(t, c, base+"/std/tls")
	if resp.Proto != "HTTP/1.1" || body != "http/1.1 304 true" {
		t.Fatalf("pooled: %s %q", resp.Proto, body)
	}
	if _, body := get(t, c, base+"/fast/tls"); body != "true http/1.1" {
		t.Fatalf("fast: %q", body)
	}
	reused := 0
	for i := range 20 {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused {
				reused++
			}
		}}
		payload := strings.Repeat(fmt.Sprint(i), 300<<10)
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", base+"/std/echo", strings.NewReader(payload))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("%d %x", len(payload), sha256.Sum256([]byte(payload))); err != nil || string(b) != want {
			t.Fatalf("POST %d: %q, %v", i, b, err)
		}
	}
	if reused < 19 {
		t.Fatalf("%d of 20 requests reused a connection", reused)
	}
	if resp, _ := get(t, c, base+"/std/stream?n=1000"); resp.ContentLength != -1 {
		t.Fatalf("stream: length %d", resp.ContentLength)
	}
}

// TestHTTPSFiles: ListenAndServeTLS loads its certificate from PEM files,
// and curl, offering h2 or not, is served HTTP/1.1.
func TestHTTPSFiles(t *testing.T) {
	certFile, keyFile, caFile, err := testcert.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := tlsTestServer()
	srv.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	addr := testpeer.FreeAddr(t)
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServeTLS(addr, certFile, keyFile) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-done; err != http1.ErrServerClosed {
			t.Errorf("ListenAndServeTLS: %v", err)
		}
	}()
	c := tlsClient(t)
	url := "https://" + strings.Replace(addr, "127.0.0.1", "localhost", 1)
	var body string
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		resp, err := c.Get(url + "/std/tls")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal(err)
		}
	}
	if body != "http/1.1 304 true" {
		t.Fatalf("got %q", body)
	}

	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	for _, version := range []string{"--http1.1", "--http2"} {
		out, err := exec.Command("curl", "-sS", "--max-time", "10", version, "--cacert", caFile, url+"/std/tls", url+"/fast").CombinedOutput()
		if err != nil || string(out) != "http/1.1 304 truefast /fast" {
			t.Fatalf("curl %s: %q, %v", version, out, err)
		}
	}
	big := strings.Repeat("z", 2<<20)
	cmd := exec.Command("curl", "-sS", "--max-time", "10", "--cacert", caFile, "--data-binary", "@-", url+"/std/echo")
	cmd.Stdin = strings.NewReader(big)
	out, err := cmd.Output()
	if err != nil || string(out) != fmt.Sprintf("%d %x", len(big), sha256.Sum256([]byte(big))) {
		t.Fatalf("curl's large POST: %q %v", out, err)
	}
}

// TestHTTPSBadClients: a plain HTTP request to the HTTPS port, and a client
// that distrusts the certificate, are closed, while the others are served.
func TestHTTPSBadClients(t *testing.T) {
	addr := serveTLS(t, tlsTestServer())
	c := tlsClient(t)
	if _, body := get(t, c, "https://"+addr+"/fast"); body != "fast /fast" {
		t.Fatal(body)
	}
	// A plain request gets net/http's 400, in the clear.
	plain := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	resp, err := plain.Get("http://" + addr + "/fast")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || string(b) != "Client sent an HTTP request to an HTTPS server.\n" {
		t.Fatalf("a plain request: %s %q", resp.Status, b)
	}
	// Other bytes that are no TLS get nothing.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	raw.Write([]byte("HELLO THERE\r\n"))
	if got, err := io.ReadAll(raw); err != nil || len(got) != 0 {
		t.Fatalf("garbage on the TLS port: %q, %v", got, err)
	}
	distrust := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}
	if resp, err := distrust.Get("https://" + addr + "/fast"); err == nil {
		resp.Body.Close()
		t.Fatal("a client without the authority was answered")
	}
	if _, body := get(t, c, "https://"+addr+"/std"); body != "std GET /std HTTP/1.1" {
		t.Fatal(body)
	}
}

func TestServeTLSNeedsCertificate(t *testing.T) {
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.StartTLS(ln, "", ""); err == nil {
		srv.Close()
		t.Fatal("StartTLS served without a certificate")
	}
	if err := srv.StartTLS(ln, "/nonexistent/cert.pem", "/nonexistent/key.pem"); err == nil {
		srv.Close()
		t.Fatal("StartTLS served without its certificate's files")
	}
}

// TestHTTPSHijack: a pooled handler's Hijack over HTTPS hands over the TLS
// connection, with the bytes sent after the request.
func TestHTTPSHijack(t *testing.T) {
	srv := testServer()
	srv.HandleFunc("/hijack", hijackEcho(t, func(nc net.Conn) {
		if _, ok := nc.(*tls.Conn); !ok {
			t.Errorf("Hijack gave a %T", nc)
		}
	}))
	addr := serveTLS(t, srv)
	c, err := tls.Dial("tcp", addr, testcert.Client())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\nhello\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello\n" {
		t.Fatalf("%q", b)
	}
}
