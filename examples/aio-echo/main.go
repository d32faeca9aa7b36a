// Command aio-echo is gaio's README echo server on evloop's proactor face:
// gaio's calls under this import path, with a flag for the address, a
// connection freed once a read or write on it fails, where gaio's leaves it
// to the garbage collector, and accepting paused, not ended, when file
// descriptors run out. One goroutine accepts; one collects completions and
// submits the next operation; no goroutine waits on any one connection.
//
//	go run ./examples/aio-echo -addr 127.0.0.1:7002
//	nc 127.0.0.1 7002
package main

import (
	"errors"
	"flag"
	"log"
	"net"
	"time"

	gaio "github.com/evloop/evloop/aio"
)

// echoServer waits for completions and sends back everything it read; it
// does not read a connection again until the write completed.
func echoServer(w *gaio.Watcher) {
	for {
		results, err := w.WaitIO()
		if err != nil {
			log.Println(err)
			return
		}
		for _, res := range results {
			switch res.Operation {
			case gaio.OpRead:
				if res.Error == nil {
					w.Write(nil, res.Conn, res.Buffer[:res.Size])
				} else {
					w.Free(res.Conn)
				}
			case gaio.OpWrite:
				if res.Error == nil {
					w.Read(nil, res.Conn, res.Buffer[:cap(res.Buffer)])
				} else {
					w.Free(res.Conn)
				}
			}
		}
	}
}

// serve accepts connections on ln and submits each one's first read, until
// ln or w is closed. A failed accept (the process out of file descriptors,
// say) is tried again after a pause, as net/http's Server does, while the
// connections already open go on being served.
func serve(w *gaio.Watcher, ln net.Listener) error {
	var pause time.Duration
	for {
		conn, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return err
		}
		if err != nil {
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			log.Printf("%v; accepting again in %v", err, pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		if err := w.Read(nil, conn, make([]byte, 128)); err != nil {
			conn.Close()
			return err
		}
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7002", "address to listen on")
	flag.Parse()
	w, err := gaio.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	go echoServer(w)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Println("echo server listening on", ln.Addr())
	log.Println(serve(w, ln))
}
