package main

import "context"

// Config is what the harness asks of every implementation.
type Config struct {
	Addr  string // TCP address to listen on, host:port (always loopback)
	Loops int    // event loops, pollers or watchers; GOMAXPROCS for net; at least 1
}

// An implFunc listens on cfg.Addr and echoes every byte it reads back to
// the same connection, for as many connections as arrive, until ctx is
// cancelled (SIGTERM). Then it stops accepting, closes what it can and
// returns nil. It returns an error, at once, if it cannot listen.
//
// To add an implementation, add one file with
//
//	func init() { impls["name"] = runName }
//	func runName(ctx context.Context, cfg Config) error { ... }
//
// and the harness picks it up (it asks `echoserver -list`).
type implFunc func(ctx context.Context, cfg Config) error

// impls holds every implementation by the name given to -impl.
var impls = map[string]implFunc{}
