//go:build unix

package evloop

import (
	"context"
	"errors"
	"net"
	"testing"
)

// Dial looks a host name up within its context: a name resolves (here
// localhost), and a context that ends first ends the lookup, where the
// lookup ignored it.
func TestDialResolvesWithinContext(t *testing.T) {
	_, addr := serve(t, &echoHandler{}, Options{Loops: 1})
	_, port, _ := net.SplitHostPort(addr)
	client, ctx := dialingServer(t)
	c, err := client.Dial(ctx, "tcp", "localhost:"+port)
	if err != nil {
		t.Fatalf("Dial localhost:%s: %v", port, err)
	}
	c.Submit(func() { c.Close() })

	done, stop := context.WithCancel(context.Background())
	stop()
	if _, err := client.Dial(done, "tcp", "evloop.invalid:80"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial with its context done = %v; want context.Canceled", err)
	}
}
