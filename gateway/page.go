package gateway

import (
	_ "embed"
	"net/http"

	"github.com/evloop/evloop/http1"
)

// page is the page at "/": a person types a subscription and sees its
// events arrive, and publishes one with a mutation.
//
//go:embed page.html
var page []byte

func servePage(w *http1.Response, r *http1.Request) {
	if string(r.Path()) != "/" {
		w.WriteHeader(http.StatusNotFound)
		w.WriteString("404 page not found\n")
		return
	}
	w.AddHeader("Content-Type", "text/html; charset=utf-8")
	w.AddHeader("Cache-Control", "no-cache")
	w.Write(page)
}
