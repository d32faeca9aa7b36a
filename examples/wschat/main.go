// Command wschat is a chat room: a static page, and a WebSocket at /ws
// whose every message goes to everyone in the room. Both are served on
// the event loop: the page by a fast handler, the room by package ws,
// which frames each message once for all its members.
//
//	go run ./examples/wschat -addr 127.0.0.1:8080
//	open http://127.0.0.1:8080/
package main

import (
	_ "embed"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/examples/internal/shutdown"
	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/ws"
)

// maxBacklog is how many bytes may wait for one member of the room: a
// member that does not read is closed once a message would pass it, so
// that it costs the room a bounded amount of memory (the engine's default,
// 64 MiB, would let a few idle readers hold gigabytes). It leaves room for
// a burst of 64 full-size messages written in one pass of the loop.
const maxBacklog = 4 << 20

//go:embed index.html
var page []byte

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	srv := newServer()
	go shutdown.OnSignal(srv.Shutdown)
	slog.Info("chat room open", "url", "http://"+*addr+"/")
	if err := srv.ListenAndServe(*addr); err != http.ErrServerClosed {
		slog.Error("serving failed", "err", err)
		os.Exit(1)
	}
}

// room is the chat room: a Group of every connection.
type room struct {
	members ws.Group
	opts    ws.Options
	guests  atomic.Int64 // numbers the guests
}

func (r *room) OnOpen(c *ws.Conn) {
	name := "guest" + strconv.FormatInt(r.guests.Add(1), 10)
	c.SetContext(name)
	r.members.Add(c)
	r.members.Broadcast(ws.Text, []byte("* "+name+" joined"), &r.opts, nil)
}

func (r *room) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	if op != ws.Text || len(data) == 0 {
		return
	}
	msg := make([]byte, 0, len(data)+16)
	msg = append(msg, c.Context().(string)...)
	msg = append(msg, ": "...)
	msg = appendOneLine(msg, data)
	r.members.Broadcast(ws.Text, msg, &r.opts, nil)
}

// appendOneLine appends text (valid UTF-8: ws checks a text message) to
// msg with each control character, line or paragraph separator and
// bidirectional override made a space, so that a member's message shows
// as one line after its sender's name: it cannot start a line of its
// own that reads as another member's message or as the room's "* guest3
// left", nor reorder the text around it.
func appendOneLine(msg, text []byte) []byte {
	for len(text) > 0 {
		r, n := utf8.DecodeRune(text)
		switch {
		case unicode.IsControl(r), r == '\u2028', r == '\u2029',
			'\u202a' <= r && r <= '\u202e', '\u2066' <= r && r <= '\u2069':
			msg = append(msg, ' ')
		default:
			msg = append(msg, text[:n]...)
		}
		text = text[n:]
	}
	return msg
}

func (r *room) OnClose(c *ws.Conn, err error) {
	r.members.Remove(c)
	r.members.Broadcast(ws.Text, []byte("* "+c.Context().(string)+" left"), &r.opts, nil)
}

func newServer() *http1.Server {
	r := &room{opts: ws.Options{Compression: true, MaxMessageSize: 64 << 10}}
	srv := &http1.Server{Engine: evloop.Options{MaxOutbound: maxBacklog}}
	srv.HandleFastFunc("GET /", servePage)
	srv.HandleFastFunc("GET /ws", func(w *http1.Response, req *http1.Request) {
		ws.Upgrade(w, req, r, &r.opts)
	})
	return srv
}

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
