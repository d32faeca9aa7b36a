// Command wsserver serves a WebSocket echo and broadcast at /ws with one
// of several implementations, for cmd/wsbench to compare side by side:
//
//	wsserver -impl evloop|gorilla|nbio -addr 127.0.0.1:8080
//
// Every message is echoed, except a text message "broadcast", which sends
// a 1 KiB binary message to every connection (the sender included).
// -debug-addr serves /goroutines on a listener of its own.
package main

import (
	"bytes"

	"github.com/evloop/evloop/bench/internal/serve"
)

var impls = map[string]func(addr string) error{}

// broadcastCmd asks for a broadcast; payload is what is broadcast.
var (
	broadcastCmd = []byte("broadcast")
	payload      = bytes.Repeat([]byte("evloop! "), 128) // 1 KiB
)

func main() { serve.Main("wsserver", impls) }
