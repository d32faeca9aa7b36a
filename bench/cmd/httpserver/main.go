// Command httpserver serves TechEmpower's plaintext and JSON tests with one
// of several HTTP/1.1 servers, for cmd/httpbench to compare side by side:
//
//	httpserver -impl evloop|nethttp|fasthttp|gnet|nbio -addr 127.0.0.1:8080
//
// With -tls-cert and -tls-key, evloop, nethttp, fasthttp and nbio serve
// HTTPS.
//
// GET /plaintext answers "Hello, World!" as text/plain, GET /json
// {"message":"Hello, World!"} encoded for each request; every server sends
// Server and Date fields as TechEmpower requires. -debug-addr serves the
// process's goroutine count at /goroutines on a net/http listener of its
// own, outside the measured path.
package main

import (
	"errors"
	"flag"

	"github.com/evloop/evloop/bench/internal/serve"
)

// impls are the servers by name; each serves on addr until killed.
var impls = map[string]func(addr string) error{}

// With both, the servers that can serve HTTPS (evloop, nethttp, fasthttp,
// nbio) serve it with this certificate and key; gnet refuses to start.
var (
	tlsCert = flag.String("tls-cert", "", "serve HTTPS with this PEM certificate (evloop, nethttp, fasthttp, nbio)")
	tlsKey  = flag.String("tls-key", "", "the PEM key of -tls-cert")
)

var helloBody = []byte("Hello, World!")

// message is the JSON test's answer.
type message struct {
	Message string `json:"message"`
}

func main() {
	for _, name := range []string{"gnet"} {
		run := impls[name]
		impls[name] = func(addr string) error {
			if *tlsCert != "" {
				return errors.New(name + " is not served with TLS here")
			}
			return run(addr)
		}
	}
	serve.Main("httpserver", impls)
}
