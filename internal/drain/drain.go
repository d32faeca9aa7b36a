// Package drain counts things under way for a shutdown to wait on.
package drain

import (
	"context"
	"sync"
)

// Count is a number of things under way (connections, say) that any
// number of goroutines may wait to see at zero, each with its own
// context. The zero value is a Count of zero, ready for use.
type Count struct {
	mu   sync.Mutex
	n    int64
	zero chan struct{} // closed once n returns to zero; nil before the first Add
}

// Add adds delta, which may be negative, to the count.
func (c *Count) Add(delta int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 && delta > 0 {
		c.zero = make(chan struct{})
	}
	c.n += delta
	if c.n == 0 && c.zero != nil {
		close(c.zero)
		c.zero = nil
	}
}

// Wait returns nil once the count is zero, or ctx.Err() if ctx ends
// first.
func (c *Count) Wait(ctx context.Context) error {
	c.mu.Lock()
	zero := c.zero
	c.mu.Unlock()
	if zero == nil {
		return nil
	}
	select {
	case <-zero:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
