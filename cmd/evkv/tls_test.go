package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/evloop/evloop/internal/testcert"
	"github.com/evloop/evloop/internal/testpeer"
)

// TestTLSPortOnly starts evkv as redis-server starts with "port 0" and a
// tls-port: it serves TLS alone, to redis-cli --tls with a client
// certificate, the settings given as flags.
func TestTLSPortOnly(t *testing.T) {
	cli := tool(t, "redis-cli")
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key, ca, err := testcert.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	clientCert, clientKey, err := testcert.WriteClientFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(testpeer.FreePort(t))
	run, _ := startWithCLI(t, exec.Command(bin, "--port", "0", "--tls-port", port, "--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca),
		cli, "-p", port, "--tls", "--cacert", ca, "--sni", "localhost", "--cert", clientCert, "--key", clientKey)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"SET", "k", "v"}, "OK\n"},
		{[]string{"GET", "k"}, "v\n"},
		{[]string{"CONFIG", "GET", "tls-port"}, "tls-port\n" + port + "\n"},
		{[]string{"CONFIG", "GET", "tls-auth-clients"}, "tls-auth-clients\nyes\n"},
	} {
		if got := run(tc.args...); got != tc.want {
			t.Errorf("redis-cli --tls %q = %q; want %q", tc.args, got, tc.want)
		}
	}
	out, err := exec.Command(bin, "--port", "0", "--tls-port", port, "--tls-cert-file", cert).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "tls-port needs tls-cert-file and tls-key-file") {
		t.Errorf("a TLS port without a key: %v, %q", err, out)
	}
}
