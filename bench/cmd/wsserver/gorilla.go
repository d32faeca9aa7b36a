package main

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/gorilla/websocket"
)

func init() { impls["gorilla"] = serveGorilla }

// gorillaHub is the goroutine-per-connection design: a goroutine reads
// each socket, another writes what its channel brings; a broadcast is
// prepared once and sent to every channel.
type gorillaHub struct {
	mu    sync.Mutex
	conns map[chan *websocket.PreparedMessage]struct{}
}

func serveGorilla(addr string) error {
	hub := &gorillaHub{conns: map[chan *websocket.PreparedMessage]struct{}{}}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	http.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		out := make(chan *websocket.PreparedMessage, 64)
		hub.mu.Lock()
		hub.conns[out] = struct{}{}
		hub.mu.Unlock()
		done := make(chan struct{})
		go func() { // the writer
			for {
				select {
				case m := <-out:
					if c.WritePreparedMessage(m) != nil {
						return
					}
				case <-done:
					return
				}
			}
		}()
		defer func() {
			hub.mu.Lock()
			delete(hub.conns, out)
			hub.mu.Unlock()
			close(done)
			c.Close()
		}()
		for {
			op, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			if op == websocket.TextMessage && bytes.Equal(data, broadcastCmd) {
				m, _ := websocket.NewPreparedMessage(websocket.BinaryMessage, payload)
				hub.mu.Lock()
				for ch := range hub.conns {
					select {
					case ch <- m:
					default: // too slow: dropped, as a chat hub does
					}
				}
				hub.mu.Unlock()
				continue
			}
			m, _ := websocket.NewPreparedMessage(op, data)
			out <- m
		}
	})
	return http.ListenAndServe(addr, nil)
}
