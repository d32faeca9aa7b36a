// Command aio-push is gaio's README push server on evloop's proactor face,
// its loop made a function that a test can stop, a connection freed once a
// write on it fails, and accepting paused, not ended, when file descriptors
// run out: every second it writes the time to every connected client. A
// client's write is only submitted once the previous one completed, so a
// client that does not read holds one pending write, never a growing queue.
//
//	go run ./examples/aio-push -addr 127.0.0.1:7003
//	nc 127.0.0.1 7003
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"time"

	gaio "github.com/evloop/evloop/aio"
)

// push runs the server's logic until stop is closed: it learns of clients
// from conns and of completions from w, and pushes every tick.
func push(w *gaio.Watcher, conns <-chan net.Conn, every time.Duration, stop <-chan struct{}) {
	results := make(chan gaio.OpResult)
	go func() {
		for {
			res, err := w.WaitIO()
			if err != nil {
				close(results)
				return
			}
			for _, r := range res {
				select {
				case results <- r:
				case <-stop: // the loop below is gone: nobody takes it
					return
				}
			}
		}
	}()
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	busy := make(map[net.Conn]bool) // a write is pending
	for {
		select {
		case res, ok := <-results:
			if !ok {
				return
			}
			if res.Error != nil {
				w.Free(res.Conn)
				delete(busy, res.Conn)
				continue
			}
			busy[res.Conn] = false
		case c := <-conns:
			busy[c] = false
		case t := <-ticker.C:
			msg := fmt.Appendf(nil, "%s\n", t.Format(time.RFC3339Nano))
			for c, pending := range busy {
				if !pending {
					w.Write(nil, c, msg)
					busy[c] = true
				}
			}
		case <-stop:
			return
		}
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7003", "address to listen on")
	every := flag.Duration("every", time.Second, "push interval")
	flag.Parse()
	if *every <= 0 {
		log.Fatal("-every must be positive")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Println("pushing server listening on", ln.Addr(), ", use telnet to receive push")
	w, err := gaio.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	conns := make(chan net.Conn)
	go push(w, conns, *every, nil)
	log.Println(accept(ln, conns))
}

// accept sends the connections ln accepts to conns, until ln is closed. A
// failed accept (the process out of file descriptors, say) is tried again
// after a pause, as net/http's Server does, while the clients already
// connected go on being pushed to.
func accept(ln net.Listener, conns chan<- net.Conn) error {
	var pause time.Duration
	for {
		c, err := ln.Accept()
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
		conns <- c
	}
}
