package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const wrkSample = `Running 1s test @ http://127.0.0.1:1/plaintext
  1 threads and 10 connections
  Latency Distribution
     50%  101.00us
     75%  200.00us
     90%    1.20ms
     99%    2.50ms
  12345 requests in 1.00s, 1.00MB read
Requests/sec:  12345.67
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkSample)
	if err != nil || r.rps != 12345.67 || r.p50 != 0.101 || r.p99 != 2.5 {
		t.Fatalf("%+v %v", r, err)
	}
	if r, _ := parseWrk(wrkSample + "  Non-2xx or 3xx responses: 3\n"); r.errors == "" {
		t.Fatal("errors not reported")
	}
}

// A short run of the whole harness against two servers, and the C server
// where there is a C compiler.
func TestMeasure(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk not installed")
	}
	names := []string{"evloop", "nethttp"}
	if _, err := exec.LookPath("cc"); err == nil {
		names = append(names, "c")
	}
	bin, err := buildServer(names)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(bin))
	script := filepath.Join(t.TempDir(), "p.lua")
	os.WriteFile(script, []byte(pipelineScript), 0o644)
	for _, name := range names {
		for _, pl := range []bool{false, true} {
			r, err := measure(bin, name, config{conns: 10, pipeline: pl, path: "/plaintext"}, time.Second, script, false)
			if err != nil || r.rps <= 0 || r.eff <= 0 {
				t.Fatalf("%s pipeline=%v: %+v %v", name, pl, r, err)
			}
		}
		// An open load of 2,000 requests a second: about as many answers a
		// second.
		r, err := measure(bin, name, config{conns: 10, path: "/plaintext", rate: 2000}, time.Second, script, false)
		if err != nil || r.rps < 1000 || r.rps > 2500 || r.p99 <= 0 {
			t.Fatalf("%s at 2000 requests a second: %+v %v", name, r, err)
		}
	}
}
