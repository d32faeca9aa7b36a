package main

import (
	"encoding/json"
	"flag"

	"github.com/evloop/evloop/http1"
)

func init() { impls["evloop"] = serveEvloop }

var (
	evloopNap   = flag.Duration("evloop-nap", 0, "evloop: how long a loop naps before it waits (evloop.Options.Nap; 0: never)")
	evloopLoops = flag.Int("evloop-loops", 0, "evloop: event loops (evloop.Options.Loops; 0: one per P)")
	evloopPark  = flag.Bool("evloop-park", false, "evloop: idle loops park on the runtime's poller (evloop.Options.BlockingPoll false) rather than wait in epoll_wait")
)

// serveEvloop answers on the loops with http1's fast handlers.
func serveEvloop(addr string) error {
	srv := &http1.Server{Name: "evloop"}
	// wrk is another process: idle loops sleep in epoll_wait, as gnet's do.
	srv.Engine.BlockingPoll = !*evloopPark
	srv.Engine.Nap = *evloopNap
	srv.Engine.Loops = *evloopLoops
	srv.HandleFastFunc("GET /plaintext", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.Write(helloBody)
	})
	srv.HandleFastFunc("GET /json", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Content-Type", "application/json")
		b, _ := json.Marshal(message{Message: "Hello, World!"})
		w.Write(b)
	})
	if *tlsCert != "" {
		return srv.ListenAndServeTLS(addr, *tlsCert, *tlsKey)
	}
	return srv.ListenAndServe(addr)
}
