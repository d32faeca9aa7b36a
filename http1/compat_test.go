package http1_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
	"github.com/gorilla/websocket"
)

// An http.ServeMux with its patterns and wildcards plugs in as Handler.
func TestServeMux(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "item %s", r.PathValue("id"))
	})
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "created %s", b)
	})
	addr := serve(t, &http1.Server{Handler: mux})
	c := client(t)
	if _, body := get(t, c, "http://"+addr+"/items/42"); body != "item 42" {
		t.Fatal(body)
	}
	resp, err := c.Post("http://"+addr+"/items", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || string(b) != "created x" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
	if resp, _ := get(t, c, "http://"+addr+"/items"); resp.StatusCode != 405 {
		t.Fatalf("ServeMux's 405: %d", resp.StatusCode)
	}
}

// gorilla/websocket's Upgrader hijacks the connection from a pooled handler
// and serves it with blocking I/O, as it would under net/http.
func TestGorillaUpgraderHijacks(t *testing.T) {
	up := websocket.Upgrader{}
	srv := &http1.Server{}
	srv.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.Close()
		for {
			mt, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			ws.WriteMessage(mt, msg)
		}
	})
	addr := serve(t, srv)
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for _, msg := range []string{"one", "two", string(make([]byte, 100_000))} {
		if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, got, err := ws.ReadMessage()
		if err != nil || string(got) != msg {
			t.Fatalf("echo of %d bytes: %d bytes, %v", len(msg), len(got), err)
		}
	}
	ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
}
