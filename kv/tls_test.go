package kv

import (
	"context"
	"crypto/tls"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/redis/go-redis/v9"

	"github.com/evloop/evloop/internal/testcert"
)

// tlsServer starts a server on a free plain port and a free TLS port at
// 127.0.0.1, with the test certificate and tls-auth-clients auth, and
// returns its plain and TLS addresses and the files.
func tlsServer(t *testing.T, auth string) (s *Server, plain, secure string, files testFiles) {
	t.Helper()
	dir := t.TempDir()
	var err error
	if files.cert, files.key, files.ca, err = testcert.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	if files.clientCert, files.clientKey, err = testcert.WriteClientFiles(dir); err != nil {
		t.Fatal(err)
	}
	s, addrs, err := listenConfig(t, Config{Bind: "127.0.0.1", Port: testpeer.FreePort(t), TLSPort: testpeer.FreePort(t), TLSCertFile: files.cert, TLSKeyFile: files.key,
		TLSCACertFile: files.ca, TLSAuthClients: auth, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 2 {
		t.Fatalf("listening on %v; want a plain and a TLS address", addrs)
	}
	return s, addrs[0].String(), addrs[1].String(), files
}

type testFiles struct{ cert, key, ca, clientCert, clientKey string }

// TestTLSPort: tls-port serves go-redis over TLS beside the plain port,
// asking for a client certificate as tls-auth-clients says: yes (a client
// without one is refused), optional, no.
func TestTLSPort(t *testing.T) {
	ctx := context.Background()
	withCert := &tls.Config{RootCAs: testcert.Pool(), ServerName: "localhost", Certificates: []tls.Certificate{testcert.ClientCertificate()}}
	noCert := &tls.Config{RootCAs: testcert.Pool(), ServerName: "localhost"}
	for _, tc := range []struct {
		auth          string
		noCertRefused bool
	}{{"yes", true}, {"optional", false}, {"no", false}} {
		t.Run(tc.auth, func(t *testing.T) {
			_, plain, secure, _ := tlsServer(t, tc.auth)
			c := goRedis(t, secure, func(o *redis.Options) { o.TLSConfig = withCert })
			if err := c.Set(ctx, "k", strings.Repeat("v", 100_000), 0).Err(); err != nil {
				t.Fatal(err)
			}
			if v, err := goRedis(t, plain).Get(ctx, "k").Result(); err != nil || len(v) != 100_000 {
				t.Fatalf("the plain port: %d bytes, %v", len(v), err)
			}
			err := goRedis(t, secure, func(o *redis.Options) { o.TLSConfig = noCert }).Ping(ctx).Err()
			if refused := err != nil; refused != tc.noCertRefused {
				t.Fatalf("a client without a certificate: %v", err)
			}
			if err := c.Ping(ctx).Err(); err != nil {
				t.Fatalf("after another client's refusal: %v", err)
			}
			for _, name := range []string{"tls-port", "tls-auth-clients"} {
				got, err := c.ConfigGet(ctx, name).Result()
				if err != nil || got[name] == "" {
					t.Fatalf("CONFIG GET %s: %v %v", name, got, err)
				}
			}
		})
	}
}

// TestTLSPortRedisCLI: redis-cli --tls with a client certificate, and
// without one where tls-auth-clients is yes.
func TestTLSPortRedisCLI(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not installed")
	}
	_, _, secure, f := tlsServer(t, "yes")
	host, port, _ := net.SplitHostPort(secure)
	cli := func(args ...string) (string, error) {
		out, err := exec.Command("redis-cli", append([]string{"-h", host, "-p", port, "--tls", "--cacert", f.ca, "--sni", "localhost"}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := cli("--cert", f.clientCert, "--key", f.clientKey, "SET", "greeting", "hello over TLS"); err != nil || out != "OK" {
		t.Fatalf("SET: %q %v", out, err)
	}
	if out, err := cli("--cert", f.clientCert, "--key", f.clientKey, "GET", "greeting"); err != nil || out != "hello over TLS" {
		t.Fatalf("GET: %q %v", out, err)
	}
	if out, _ := cli("PING"); out == "PONG" {
		t.Fatal("a client without a certificate was served")
	}
}

func TestTLSPortConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cert, key, ca, err := testcert.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{TLSPort: 1, TLSKeyFile: key}, "needs tls-cert-file and tls-key-file"},
		{Config{TLSPort: 1, TLSCertFile: cert, TLSKeyFile: cert}, "tls-cert-file, tls-key-file"},
		{Config{TLSPort: 1, TLSCertFile: cert, TLSKeyFile: key}, "needs tls-ca-cert-file"},
		{Config{TLSPort: 1, TLSCertFile: cert, TLSKeyFile: key, TLSCACertFile: key}, "no PEM certificate"},
		{Config{TLSPort: 1, TLSCertFile: cert, TLSKeyFile: key, TLSCACertFile: ca, TLSAuthClients: "maybe"}, "bad tls-auth-clients"},
	} {
		tc.cfg.Logger = quietLogger()
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := New(Config{TLSPort: 1, TLSCertFile: cert, TLSKeyFile: key, TLSAuthClients: "no", Logger: quietLogger()}); err != nil {
		t.Errorf("tls-auth-clients no without authorities: %v", err)
	}
}

// TestTLSPortRebind: CONFIG SET bind moves the TLS listeners with the
// plain ones, as Redis's moves both.
func TestTLSPortRebind(t *testing.T) {
	ctx := context.Background()
	_, plain, secure, _ := tlsServer(t, "no")
	noCert := &tls.Config{RootCAs: testcert.Pool(), ServerName: "localhost"}
	if err := goRedis(t, plain).ConfigSet(ctx, "bind", "127.0.0.2").Err(); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(secure)
	moved := goRedis(t, net.JoinHostPort("127.0.0.2", port), func(o *redis.Options) { o.TLSConfig = noCert })
	if err := moved.Ping(ctx).Err(); err != nil {
		t.Fatalf("the TLS port at the new address: %v", err)
	}
	if _, err := net.Dial("tcp", secure); err == nil {
		t.Fatal("the TLS port still listens at the old address")
	}
}

// TestTLSConfigSet: CONFIG SET changes the TLS settings as Redis's does:
// a new certificate and key together serve the next handshakes, files
// that do not load are refused with Redis's error and change nothing,
// tls-port moves the TLS listeners, 0 closes them, and a server started
// without TLS takes it in one CONFIG SET.
func TestTLSConfigSet(t *testing.T) {
	ctx := context.Background()
	_, plain, secure, f := tlsServer(t, "no")
	admin := goRedis(t, plain)
	served := func(addr string) (string, error) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return "", err
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
	}
	if name, err := served(secure); err != nil || name != "localhost" {
		t.Fatalf("served %q, %v", name, err)
	}
	if err := admin.Do(ctx, "CONFIG", "SET", "tls-cert-file", f.clientCert, "tls-key-file", f.clientKey).Err(); err != nil {
		t.Fatalf("CONFIG SET of a new pair: %v", err)
	}
	if name, err := served(secure); err != nil || name != "client" {
		t.Fatalf("after the new pair, served %q, %v", name, err)
	}
	err := admin.ConfigSet(ctx, "tls-cert-file", "/nonexistent/cert.pem").Err()
	if err == nil || !strings.Contains(err.Error(), "Unable to update TLS configuration") {
		t.Fatalf("CONFIG SET of a missing file: %v", err)
	}
	if got, _ := admin.ConfigGet(ctx, "tls-cert-file").Result(); got["tls-cert-file"] != f.clientCert {
		t.Fatalf("after a refused change, tls-cert-file is %q", got["tls-cert-file"])
	}
	if name, err := served(secure); err != nil || name != "client" {
		t.Fatalf("after a refused change, served %q, %v", name, err)
	}

	port := strconv.Itoa(testpeer.FreePort(t))
	if err := admin.ConfigSet(ctx, "tls-port", port).Err(); err != nil {
		t.Fatal(err)
	}
	moved := net.JoinHostPort("127.0.0.1", port)
	if _, err := served(moved); err != nil {
		t.Fatalf("at the new tls-port: %v", err)
	}
	if _, err := net.Dial("tcp", secure); err == nil {
		t.Fatal("the old tls-port still listens")
	}
	if err := admin.ConfigSet(ctx, "tls-port", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", moved); err == nil {
		t.Fatal("tls-port 0 left a TLS listener")
	}

	// A server without TLS takes it in one CONFIG SET.
	_, plain2 := startServer(t, Config{})
	port = strconv.Itoa(testpeer.FreePort(t))
	if err := goRedis(t, plain2).Do(ctx, "CONFIG", "SET", "tls-port", port, "tls-cert-file", f.cert, "tls-key-file", f.key, "tls-auth-clients", "no").Err(); err != nil {
		t.Fatalf("CONFIG SET turning TLS on: %v", err)
	}
	c := goRedis(t, net.JoinHostPort("127.0.0.1", port), func(o *redis.Options) {
		o.TLSConfig = &tls.Config{RootCAs: testcert.Pool(), ServerName: "localhost"}
	})
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("over the TLS port turned on: %v", err)
	}
}

// TestTLSConfigSetRollbackBind: a CONFIG SET of tls-port and bind whose
// TLS files do not load leaves the TLS listeners where they were, at the
// old tls-port, which CONFIG GET shows, as Redis restores them.
func TestTLSConfigSetRollbackBind(t *testing.T) {
	ctx := context.Background()
	_, plain, secure, _ := tlsServer(t, "no")
	admin := goRedis(t, plain)
	_, oldPort, _ := net.SplitHostPort(secure)
	port := strconv.Itoa(testpeer.FreePort(t, "127.0.0.1", "127.0.0.2"))
	err := admin.Do(ctx, "CONFIG", "SET", "tls-port", port, "bind", "127.0.0.1 127.0.0.2", "tls-cert-file", "/nonexistent/cert.pem").Err()
	if err == nil || !strings.Contains(err.Error(), "Unable to update TLS configuration") {
		t.Fatalf("CONFIG SET with a missing file: %v", err)
	}
	got, _ := admin.ConfigGet(ctx, "tls-port").Result()
	if got["tls-port"] != oldPort {
		t.Fatalf("after a refused change, tls-port is %q; want %s", got["tls-port"], oldPort)
	}
	c, err := tls.Dial("tcp", secure, &tls.Config{RootCAs: testcert.Pool(), ServerName: "localhost"})
	if err != nil {
		t.Fatalf("after a refused change, at the old tls-port: %v", err)
	}
	c.Close()
	if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port)); err == nil {
		c.Close()
		t.Fatal("after a refused change, the new tls-port listens")
	}
	// The same change with files that load moves them both ways.
	if err := admin.Do(ctx, "CONFIG", "SET", "tls-port", port, "bind", "127.0.0.1 127.0.0.2").Err(); err != nil {
		t.Fatal(err)
	}
	c, err = tls.Dial("tcp", net.JoinHostPort("127.0.0.2", port), &tls.Config{RootCAs: testcert.Pool(), ServerName: "localhost"})
	if err != nil {
		t.Fatalf("at the new tls-port and address: %v", err)
	}
	c.Close()
}

// TestTLSConfigSetPort0Bind: a server whose port 0 took a free port (no
// Unix socket or TLS when it started) keeps its plain listener through a
// CONFIG SET bind once CONFIG SET turned TLS on, where port 0 would mean
// none.
func TestTLSConfigSetPort0Bind(t *testing.T) {
	ctx := context.Background()
	cert, key, _, err := testcert.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, addrs, err := listenConfig(t, Config{Bind: "127.0.0.1", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	plain := addrs[0].String()
	admin := goRedis(t, plain)
	port := strconv.Itoa(testpeer.FreePort(t, "127.0.0.1", "127.0.0.2"))
	if err := admin.Do(ctx, "CONFIG", "SET", "tls-port", port, "tls-cert-file", cert, "tls-key-file", key, "tls-auth-clients", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(ctx, "bind", "127.0.0.1 127.0.0.2").Err(); err != nil {
		t.Fatal(err)
	}
	if err := goRedis(t, plain).Ping(ctx).Err(); err != nil {
		t.Fatalf("the plain port after CONFIG SET bind: %v", err)
	}
}
