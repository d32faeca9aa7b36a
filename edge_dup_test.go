//go:build unix

package evloop

import (
	"testing"
	"time"
)

// A connection on ls.more that gets a readiness event reads in HandleIO
// as well: it must stay on the list once, or its entries would pile up
// while the peer streams, each reading in turn, and the connection would
// no longer take turns with the others.
func TestMoreListDuplicates(t *testing.T) {
	maxDup := make(chan int, 1)
	var worst int
	const total = 256 << 20
	var n int
	h := &funcHandler{data: func(c *Conn) {
		n += c.Discard(c.InboundBuffered())
		k := 0
		for _, m := range c.ls.more {
			if m == c {
				k++
			}
		}
		worst = max(worst, k)
		if n == total {
			maxDup <- worst
		}
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	go func() {
		b := make([]byte, 1<<20)
		for i := 0; i < total/len(b); i++ {
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}()
	select {
	case w := <-maxDup:
		if w > 1 {
			t.Errorf("one connection was on ls.more %d times at once", w)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("not all read")
	}
}
