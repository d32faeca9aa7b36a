package main

import (
	"encoding/json"
	"net/http"
)

func init() { impls["nethttp"] = serveNetHTTP }

func serveNetHTTP(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /plaintext", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"text/plain"}
		h["Server"] = []string{"net/http"}
		w.Write(helloBody)
	})
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Server"] = []string{"net/http"}
		b, _ := json.Marshal(message{Message: "Hello, World!"})
		w.Write(b)
	})
	if *tlsCert != "" {
		return http.ListenAndServeTLS(addr, *tlsCert, *tlsKey, mux)
	}
	return http.ListenAndServe(addr, mux)
}
