package main

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/evloop/evloop/bench/internal/proc"
)

func TestCPUCount(t *testing.T) {
	for in, want := range map[string]int{"0": 1, "1": 1, "0,2": 2, "0-3": 4, "0-1,4": 3, "x": 1} {
		if got := cpuCount(in); got != want {
			t.Errorf("cpuCount(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestSrcAddr(t *testing.T) {
	for n, want := range map[int]string{1: "127.0.0.1", 2: "127.0.0.2", 255: "127.0.0.255", 256: "127.0.1.0"} {
		if got := srcAddr(n); got != want {
			t.Errorf("srcAddr(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	if m := proc.Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3,1,2 = %v", m)
	}
	if m := proc.Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4,1,3,2 = %v", m)
	}
}

func TestProcReaders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	pid := os.Getpid()
	if _, err := proc.CPUTime(pid); err != nil {
		t.Fatal(err)
	}
	if rss, err := proc.RSSKiB(pid); err != nil || rss <= 0 {
		t.Fatalf("rss %d, %v", rss, err)
	}
	if _, err := busySeconds(); err != nil {
		t.Fatal(err)
	}
}

// TestQuickNet runs the whole harness in -quick mode against the net
// implementation: build, start, load, measure, stop, table.
func TestQuickNet(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the harness needs Linux (/proc, epoll)")
	}
	if testing.Short() {
		t.Skip("builds and runs servers")
	}
	var out, log bytes.Buffer
	err := run([]string{"-quick", "-impls", "net", "-bin", t.TempDir()}, &out, &log)
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, &out, &log)
	}
	table := out.String()
	for _, want := range []string{"| pingpong 64B c=1 ", "| pipelined×4 64B c=10 ", "| idle c=50 ", " net "} {
		if !strings.Contains(table, want) {
			t.Errorf("the table has no %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "FAIL") {
		t.Errorf("a run failed:\n%s\n%s", table, &log)
	}
	t.Logf("\n%s", table)
}
