package main

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/evloop/evloop/bench/internal/serve"
)

func init() { impls["nbio"] = serveNbio }

// serveNbio runs net/http handlers on nbio's loops and parser.
func serveNbio(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/plaintext", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"text/plain"}
		h["Server"] = []string{"nbio"}
		h["Content-Length"] = []string{"13"} // nbio chunks a body of unknown length
		w.Write(helloBody)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Server"] = []string{"nbio"}
		b, _ := json.Marshal(message{Message: "Hello, World!"})
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.Write(b)
	})
	return serve.Nbio(addr, mux, *tlsCert, *tlsKey)
}
