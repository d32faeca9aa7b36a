package ws_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/ws"
)

// printer prints the messages it receives and says when a connection ends.
type printer struct{ done chan struct{} }

func (p *printer) OnOpen(c *ws.Conn) {}

func (p *printer) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	fmt.Printf("%s: %s\n", op, data)
	c.Close(ws.CloseNormal, "thanks")
}

func (p *printer) OnClose(c *ws.Conn, err error) {
	fmt.Println(err)
	close(p.done)
}

func ExampleDialer() {
	// A server that echoes, on a loopback port.
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv.HandleFastFunc("GET /echo", func(w *http1.Response, r *http1.Request) {
		ws.Upgrade(w, r, &echo{}, nil)
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv.Start(ln)
	defer srv.Close()

	d := &ws.Dialer{HandshakeTimeout: 5 * time.Second}
	defer d.Close()
	p := &printer{done: make(chan struct{})}
	c, _, err := d.Dial(context.Background(), "ws://"+ln.Addr().String()+"/echo", nil, p, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Send(ws.Text, []byte("hello"))
	<-p.done
	// Output:
	// text: hello
	// websocket: close 1000: thanks
}
