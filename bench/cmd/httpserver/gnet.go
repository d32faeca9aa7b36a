package main

import (
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evloop/evloop/http1"
	"github.com/panjf2000/gnet/v2"
)

func init() { impls["gnet"] = serveGnet }

// gnetHTTP parses every request with http1's Parser (a real parse of the
// request line, fields and framing, pipelines included) and answers on
// gnet's loops. It handles requests without bodies, as the benchmark
// sends; others get 400.
type gnetHTTP struct {
	gnet.BuiltinEventEngine
	date atomic.Pointer[[]byte]
}

// connState is a connection's parser.
type connState struct {
	p   http1.Parser
	req http1.Request
}

// outBufs hold answers while they are built; gnet's Write copies them.
var outBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (g *gnetHTTP) OnBoot(gnet.Engine) gnet.Action {
	g.tick()
	go func() {
		for range time.Tick(time.Second) {
			g.tick()
		}
	}()
	return gnet.None
}

func (g *gnetHTTP) tick() {
	b := time.Now().UTC().AppendFormat([]byte("Date: "), http.TimeFormat)
	b = append(b, "\r\n"...)
	g.date.Store(&b)
}

func (g *gnetHTTP) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	c.SetContext(&connState{})
	return nil, gnet.None
}

func (g *gnetHTTP) OnTraffic(c gnet.Conn) gnet.Action {
	st := c.Context().(*connState)
	in, _ := c.Peek(-1)
	bp := outBufs.Get().(*[]byte)
	out := (*bp)[:0]
	used := 0
	date := *g.date.Load()
	for used < len(in) {
		n, err := st.p.Parse(in[used:], &st.req)
		if errors.Is(err, http1.ErrIncomplete) {
			break
		}
		if err != nil || st.req.ContentLength > 0 || st.req.Chunked {
			outBufs.Put(bp)
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			return gnet.Close
		}
		used += n
		var body []byte
		var ctype string
		switch string(st.req.Path()) {
		case "/plaintext":
			body, ctype = helloBody, "text/plain"
		case "/json":
			body, _ = json.Marshal(message{Message: "Hello, World!"})
			ctype = "application/json"
		default:
			out = append(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"...)
			continue
		}
		out = append(out, "HTTP/1.1 200 OK\r\nServer: gnet\r\n"...)
		out = append(out, date...)
		out = append(out, "Content-Type: "...)
		out = append(out, ctype...)
		out = append(out, "\r\nContent-Length: "...)
		out = strconv.AppendInt(out, int64(len(body)), 10)
		out = append(out, "\r\n\r\n"...)
		out = append(out, body...)
	}
	c.Discard(used)
	if len(out) > 0 {
		c.Write(out)
	}
	*bp = out
	outBufs.Put(bp)
	return gnet.None
}

var gnetLoops = flag.Int("gnet-loops", 0, "gnet: event loops (gnet.WithNumEventLoop; 0: one per CPU)")

func serveGnet(addr string) error {
	opts := []gnet.Option{gnet.WithMulticore(true)}
	if *gnetLoops > 0 {
		opts = append(opts, gnet.WithNumEventLoop(*gnetLoops))
	}
	return gnet.Run(&gnetHTTP{}, "tcp://"+addr, opts...)
}
