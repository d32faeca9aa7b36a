// Command httpserver serves TechEmpower's plaintext and JSON tests with one
// of several HTTP/1.1 servers, for cmd/httpbench to compare side by side:
//
//	httpserver -impl evloop|nethttp|fasthttp|gnet|nbio -addr 127.0.0.1:8080
//
// GET /plaintext answers "Hello, World!" as text/plain, GET /json
// {"message":"Hello, World!"} encoded for each request; every server sends
// Server and Date fields as TechEmpower requires. -debug-addr serves the
// process's goroutine count at /goroutines on a net/http listener of its
// own, outside the measured path.
package main

import "github.com/evloop/evloop/bench/internal/serve"

// impls are the servers by name; each serves on addr until killed.
var impls = map[string]func(addr string) error{}

var helloBody = []byte("Hello, World!")

// message is the JSON test's answer.
type message struct {
	Message string `json:"message"`
}

func main() { serve.Main("httpserver", impls) }
