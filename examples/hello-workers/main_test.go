//go:build unix

package main

import (
	"fmt"
	"testing"

	"github.com/evloop/evloop/examples/internal/hellotest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestServer(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s, err := newServer("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- s.serve(workers) }()
			hellotest.Run(t, s.addr.String())
			s.l.Stop()
			if err := <-done; err != nil {
				t.Fatalf("serve = %v", err)
			}
		})
	}
}
