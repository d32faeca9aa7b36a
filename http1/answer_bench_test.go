package http1

import (
	"testing"
	"time"
)

// BenchmarkFastAnswer is the work of one pipelined request on the loop
// without the socket: the parse, the route, the handler and the answer
// appended to the batch.
func BenchmarkFastAnswer(b *testing.B) {
	s := &Server{Name: "evloop"}
	body := []byte("Hello, World!")
	s.HandleFastFunc("GET /plaintext", func(w *Response, r *Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.Write(body)
	})
	ls := &loopState{s: s, start: time.Now()}
	ls.tick()
	hc := &conn{ls: ls}
	in := []byte("GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n")
	req := &ls.req
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hc.p.Parse(in, req); err != nil {
			b.Fatal(err)
		}
		rt, status, _ := s.routes.match(req, &ls.route)
		if rt == nil || status != 0 {
			b.Fatal("no route")
		}
		hc.runFast(rt.fast, req, req.KeepAlive)
		ls.out, ls.outc = ls.out[:0], nil
	}
}
