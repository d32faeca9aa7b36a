package drain

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWaitReturnsAtZero(t *testing.T) {
	var c Count
	if err := c.Wait(context.Background()); err != nil {
		t.Fatalf("Wait on a zero Count = %v", err)
	}
	c.Add(2)
	errs := make(chan error, 3)
	for range 3 { // every waiter wakes, not one
		go func() { errs <- c.Wait(context.Background()) }()
	}
	c.Add(-1)
	select {
	case err := <-errs:
		t.Fatalf("Wait returned %v with one left", err)
	case <-time.After(20 * time.Millisecond):
	}
	c.Add(-1)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	c.Add(1) // counting again after zero
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := c.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with one left = %v, want the deadline", err)
	}
}
