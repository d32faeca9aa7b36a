//go:build unix

package shutdown

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
)

// A stop that fails, its grace passed, is reported: the connections it
// aborted are not let go in silence.
func TestOnSignalReportsError(t *testing.T) {
	// Caught here too, so that a signal sent before OnSignal listens does
	// not end the test.
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGTERM)
	defer signal.Stop(caught)
	var logged testpeer.Output
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
