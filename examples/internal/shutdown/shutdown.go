// Package shutdown stops the examples' servers gracefully on SIGINT or
// SIGTERM.
package shutdown

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Grace is how long a server gets to finish what is under way.
const Grace = 5 * time.Second

// OnSignal waits for SIGINT or SIGTERM, then calls stop with a context
// that ends after Grace, and logs the error stop returns: a server's
// Shutdown whose context ended first has aborted what was left.
func OnSignal(stop func(context.Context) error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	ctx, cancel := context.WithTimeout(context.Background(), Grace)
	defer cancel()
	if err := stop(ctx); err != nil {
		slog.Error("shutdown", "err", err, "grace", Grace)
	}
}
