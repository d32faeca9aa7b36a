package main

import (
	"encoding/json"

	"github.com/valyala/fasthttp"
)

func init() { impls["fasthttp"] = serveFasthttp }

func serveFasthttp(addr string) error {
	s := &fasthttp.Server{
		Name: "fasthttp",
		Handler: func(ctx *fasthttp.RequestCtx) {
			switch string(ctx.Path()) {
			case "/plaintext":
				ctx.SetContentType("text/plain")
				ctx.Write(helloBody)
			case "/json":
				ctx.SetContentType("application/json")
				b, _ := json.Marshal(message{Message: "Hello, World!"})
				ctx.Write(b)
			default:
				ctx.NotFound()
			}
		},
	}
	if *tlsCert != "" {
		return s.ListenAndServeTLS(addr, *tlsCert, *tlsKey)
	}
	return s.ListenAndServe(addr)
}
