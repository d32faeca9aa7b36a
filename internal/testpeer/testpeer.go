// Package testpeer finds the real peers the tests talk to: a headless
// Chromium, Node with packages from npm, and Go programs it builds; and
// collects what the processes a test runs write.
package testpeer

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Chromium returns the path of a Chromium browser, or "" if none is
// installed.
func Chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// NPMInstall installs pkgs ("ws@8") with npm into dir and returns its
// node_modules directory.
func NPMInstall(dir string, pkgs ...string) (string, error) {
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund"}, pkgs...)
	if out, err := exec.Command("npm", args...).CombinedOutput(); err != nil {
		return "", errors.New(err.Error() + "\n" + string(out))
	}
	return filepath.Join(dir, "node_modules"), nil
}

// NodeModules returns a node_modules directory holding pkgs:
// $EVLOOP_NODE_MODULES, or one npm installs into a directory of t's. It
// skips t if Node is not installed or npm fails.
func NodeModules(t testing.TB, pkgs ...string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	if dir := os.Getenv("EVLOOP_NODE_MODULES"); dir != "" {
		return dir
	}
	dir, err := NPMInstall(t.TempDir(), pkgs...)
	if err != nil {
		t.Skipf("npm install failed: %v", err)
	}
	return dir
}

// GoBuild builds the Go package pkg (an import path, or "." for the
// test's own) into a binary called name in a directory of t's, and
// returns its path; it fails t if the build fails.
func GoBuild(t testing.TB, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Output collects what a process (or a logger) writes while the test
// reads it: its methods may be called from several goroutines at once.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String returns what was written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
