package main

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/evloop/evloop/bench/internal/serve"
	"github.com/lesismal/nbio/nbhttp/websocket"
)

func init() { impls["nbio"] = serveNbio }

// serveNbio echoes and broadcasts on nbio's loops.
func serveNbio(addr string) error {
	var mu sync.Mutex
	conns := map[*websocket.Conn]struct{}{}
	up := websocket.NewUpgrader()
	up.CheckOrigin = func(*http.Request) bool { return true }
	up.OnOpen(func(c *websocket.Conn) {
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
	})
	up.OnClose(func(c *websocket.Conn, err error) {
		mu.Lock()
		delete(conns, c)
		mu.Unlock()
	})
	up.OnMessage(func(c *websocket.Conn, op websocket.MessageType, data []byte) {
		if op == websocket.TextMessage && bytes.Equal(data, broadcastCmd) {
			mu.Lock()
			for m := range conns {
				m.WriteMessage(websocket.BinaryMessage, payload)
			}
			mu.Unlock()
			return
		}
		c.WriteMessage(op, data)
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		up.Upgrade(w, r, nil)
	})
	return serve.Nbio(addr, mux, "", "")
}
