// Command techempower serves the TechEmpower framework benchmark's
// plaintext and JSON tests with package http1: both answered on the event
// loop by fast handlers.
//
//	go run ./examples/techempower -addr 127.0.0.1:8080
//	curl http://127.0.0.1:8080/plaintext
//	curl http://127.0.0.1:8080/json
package main

import (
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"os"

	"github.com/evloop/evloop/examples/internal/shutdown"
	"github.com/evloop/evloop/http1"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()

	srv := newServer()
	go shutdown.OnSignal(srv.Shutdown)
	slog.Info("serving", "addr", *addr)
	if err := srv.ListenAndServe(*addr); err != http.ErrServerClosed {
		slog.Error("serving failed", "err", err)
		os.Exit(1)
	}
}

// message is the JSON test's answer, encoded for every request.
type message struct {
	Message string `json:"message"`
}

func newServer() *http1.Server {
	srv := &http1.Server{Name: "evloop"}
	srv.HandleFastFunc("GET /plaintext", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("Hello, World!")
	})
	srv.HandleFastFunc("GET /json", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Content-Type", "application/json")
		json.NewEncoder(w).Encode(message{Message: "Hello, World!"})
	})
	return srv
}
