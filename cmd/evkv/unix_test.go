package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
)

// TestUnixSocketPort0 starts evkv as redis-server starts with "port 0" and
// "unixsocket": it listens on the socket alone, which redis-cli -s talks
// to; port 0 without a unixsocket stops the start, as Redis's
// "Configured to not listen anywhere".
func TestUnixSocketPort0(t *testing.T) {
	cli := tool(t, "redis-cli")
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--port", "0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "configured to listen nowhere") {
		t.Errorf("evkv --port 0: %v, %q; want a non-zero exit saying it would listen nowhere", err, out)
	}

	path := filepath.Join(t.TempDir(), "evkv.sock")
	run, stderr := startWithCLI(t, exec.Command(bin, "--port", "0", "--unixsocket", path, "--unixsocketperm", "700"), cli, "-s", path)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"SET", "k", "v"}, "OK\n"},
		{[]string{"GET", "k"}, "v\n"},
		{[]string{"CONFIG", "GET", "port"}, "port\n0\n"},
		{[]string{"CONFIG", "GET", "unixsocketperm"}, "unixsocketperm\n700\n"},
	} {
		if got := run(tc.args...); got != tc.want {
			t.Errorf("redis-cli -s %q = %q; want %q", tc.args, got, tc.want)
		}
	}
	// The one address listened on, as the ready line names them.
	if log := stderr.String(); !strings.Contains(log, "addr="+path+" ") {
		t.Errorf("log %q; want the Unix socket as the one address", log)
	}
}

// startWithCLI starts cmd, an evkv, and waits until redis-cli with
// cliArgs has a PONG from it; it returns a function running redis-cli so,
// and evkv's log. The process is killed when the test ends.
func startWithCLI(t *testing.T, cmd *exec.Cmd, cli string, cliArgs ...string) (run func(args ...string) string, stderr *testpeer.Output) {
	t.Helper()
	stderr = new(testpeer.Output)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	run = func(args ...string) string {
		t.Helper()
		out, _ := exec.Command(cli, append(cliArgs, args...)...).CombinedOutput()
		return string(out)
	}
	for deadline := time.Now().Add(20 * time.Second); run("PING") != "PONG\n"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("evkv did not answer redis-cli %q: %s", cliArgs, stderr)
		}
	}
	return run, stderr
}
