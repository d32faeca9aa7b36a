//go:build unix

package shutdown

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer that the logger may write from another
// goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A stop that fails, its grace passed, is reported: the connections it
// aborted are not let go in silence.
func TestOnSignalReportsError(t *testing.T) {
	// Caught here too, so that a signal sent before OnSignal listens does
	// not end the test.
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGTERM)
	defer signal.Stop(caught)
	var logged lockedBuffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))

	done := make(chan struct{})
	go func() {
		defer close(done)
		OnSignal(func(ctx context.Context) error { return errors.New("2 connections aborted") })
	}()
	deadline := time.After(10 * time.Second)
	for stopped := false; !stopped; {
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		select {
		case <-done:
			stopped = true
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatal("OnSignal did not return after SIGTERM")
		}
	}
	if !strings.Contains(logged.String(), "2 connections aborted") {
		t.Fatalf("logged %q; want the error stop returned", logged.String())
	}
}
