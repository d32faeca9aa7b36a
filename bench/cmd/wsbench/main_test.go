package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A short run of both measurements against each server.
func TestRuns(t *testing.T) {
	bin, err := buildServer()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(bin))
	settle = 100 * time.Millisecond
	for _, name := range []string{"evloop", "gorilla", "nbio"} {
		e, err := echoRun(bin, name, 4, 500*time.Millisecond, 0)
		if err != nil || e.rate <= 0 {
			t.Fatalf("%s echo: %+v %v", name, e, err)
		}
		// An open load of 400 messages a second: about 200 in the
		// half second.
		e, err = echoRun(bin, name, 4, 500*time.Millisecond, 400)
		if err != nil || e.rate < 100 || e.rate > 500 {
			t.Fatalf("%s echo at 400 messages a second: %+v %v", name, e, err)
		}
		f, err := fanRun(bin, name, 50, 3)
		if err != nil || f.last <= 0 {
			t.Fatalf("%s broadcast: %+v %v", name, f, err)
		}
	}
}
