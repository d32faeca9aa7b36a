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

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
)

// impls are the servers by name; each serves on addr until killed.
var impls = map[string]func(addr string) error{}

var helloBody = []byte("Hello, World!")

// message is the JSON test's answer.
type message struct {
	Message string `json:"message"`
}

func main() {
	impl := flag.String("impl", "evloop", "server: "+names())
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	debug := flag.String("debug-addr", "", "address for /goroutines (none if empty)")
	flag.Parse()
	serve, ok := impls[*impl]
	if !ok {
		fmt.Fprintf(os.Stderr, "httpserver: unknown -impl %q (have %s)\n", *impl, names())
		os.Exit(2)
	}
	if *debug != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/goroutines", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, strconv.Itoa(runtime.NumGoroutine()))
		})
		go http.ListenAndServe(*debug, mux)
	}
	log.Fatal(serve(*addr))
}

func names() string {
	var n []string
	for k := range impls {
		n = append(n, k)
	}
	sort.Strings(n)
	return fmt.Sprint(n)
}
