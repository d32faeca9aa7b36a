package main

import (
	"bytes"

	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/ws"
)

func init() { impls["evloop"] = serveEvloop }

// room echoes on the loop and broadcasts through a ws.Group: the frame is
// built once, and each loop writes it to its members.
type room struct {
	group ws.Group
	opts  ws.Options
}

func (r *room) OnOpen(c *ws.Conn) { r.group.Add(c) }

func (r *room) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	if op == ws.Text && bytes.Equal(data, broadcastCmd) {
		r.group.Broadcast(ws.Binary, payload, &r.opts, nil)
		return
	}
	c.WriteMessage(op, data)
}

func (r *room) OnClose(c *ws.Conn, err error) { r.group.Remove(c) }

func serveEvloop(addr string) error {
	r := &room{opts: ws.Options{MaxMessageSize: 1 << 20}}
	srv := &http1.Server{}
	srv.HandleFastFunc("GET /ws", func(w *http1.Response, req *http1.Request) {
		ws.Upgrade(w, req, r, &r.opts)
	})
	return srv.ListenAndServe(addr)
}
