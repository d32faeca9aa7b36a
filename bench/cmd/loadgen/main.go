// Command loadgen drives a TCP echo server on a loopback address and
// reports what it measured as JSON on stdout.
//
//	loadgen -addr 127.0.0.1:7000 -conns 1000 -size 64 -mode pingpong -duration 5s
//
// Connections are spread over source addresses -src, -src+1, … with at
// most -per-src connections each, bound before connecting. Every
// connection first exchanges one message (so the server has accepted it),
// then, in pingpong mode, sends a message and waits for its full echo, over
// and over; in pipelined mode it keeps -depth messages in flight; in idle
// mode it stays connected and silent until stdin says "close" (with -sync)
// or -hold runs out. Every echoed byte is checked against what was sent.
//
// Output is one JSON object a line: {"event":"ready"} once connected,
// {"event":"measure-start"} and {"event":"measure-end"} at the edges of the
// measured window, and last {"event":"result", ...} (see load.Result). With
// -sync it waits after "ready" for a line on stdin ("go", or "close" in
// idle mode); the harness uses that to start several processes together.
// The exit status is 1 if any connection failed or any echo was wrong.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/evloop/evloop/bench/internal/load"
)

var stdout = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

func emit(v any) {
	stdout.Lock()
	defer stdout.Unlock()
	if err := stdout.enc.Encode(v); err != nil {
		log.Fatal(err)
	}
}

type event struct {
	Event    string  `json:"event"`
	Conns    int     `json:"conns,omitempty"`
	ConnectS float64 `json:"connect_s,omitempty"`
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("loadgen: ")
	addr := flag.String("addr", "127.0.0.1:7000", "echo server, an IPv4 loopback address:port")
	conns := flag.Int("conns", 100, "connections")
	size := flag.Int("size", 64, "message size in bytes")
	mode := flag.String("mode", "pingpong", "pingpong, pipelined or idle")
	depth := flag.Int("depth", 16, "messages in flight per connection (pipelined)")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "traffic before the measured window")
	duration := flag.Duration("duration", 5*time.Second, "measured window (the window also ends after -msgs messages)")
	msgs := flag.Int64("msgs", 0, "end the measured window after this many messages (0: only -duration)")
	hold := flag.Duration("hold", 30*time.Second, "idle mode: how long to hold the connections at most")
	src := flag.String("src", "127.0.0.1", "first source address")
	perSrc := flag.Int("per-src", 20000, "connections per source address (the kernel has about 28,000 ephemeral ports)")
	connBase := flag.Uint("conn-base", 0, "id of the first connection (goes into every message)")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "epoll loops, each on its own thread")
	connecting := flag.Int("max-connecting", 256, "connections being opened at once")
	connectTimeout := flag.Duration("connect-timeout", 60*time.Second, "for all connections to be up")
	syncStdin := flag.Bool("sync", false, "after connecting, wait for a line on stdin before the traffic (idle: before closing)")
	flag.Parse()

	m, err := load.ParseMode(*mode)
	if err != nil {
		log.Fatal(err)
	}
	server, err := netip.ParseAddrPort(*addr)
	if err != nil {
		log.Fatal(err)
	}
	first, err := netip.ParseAddr(*src)
	if err != nil {
		log.Fatal(err)
	}
	if m != load.Idle && *duration <= 0 && *msgs <= 0 {
		log.Fatal("the run must be bounded: give -duration or -msgs")
	}
	if *duration <= 0 || *duration > 10*time.Minute {
		*duration = 10 * time.Minute
	}
	if *hold <= 0 || *hold > 10*time.Minute {
		*hold = 10 * time.Minute
	}
	// Whatever happens, this process ends on its own.
	limit := *connectTimeout + *warmup + *duration + 30*time.Second
	if m == load.Idle {
		limit = *connectTimeout + *hold + 30*time.Second
	}
	time.AfterFunc(limit, func() {
		log.Printf("still running after %v; giving up", limit)
		os.Exit(3)
	})

	cfg := load.Config{
		Server: server, Conns: *conns, Size: *size, Mode: m, Depth: *depth,
		Src: first, PerSrc: *perSrc, ConnBase: uint32(*connBase),
		Workers: *workers, MaxConnecting: *connecting, ConnectTimeout: *connectTimeout,
	}
	g, err := load.Dial(cfg)
	if err != nil {
		log.Fatal(err)
	}
	emit(event{Event: "ready", Conns: *conns, ConnectS: g.ConnectSeconds()})

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	var res load.Result
	if m == load.Idle {
		if *syncStdin {
			select {
			case <-lines:
			case <-time.After(*hold):
			}
		} else {
			time.Sleep(*hold)
		}
		res = g.Close()
	} else {
		if *syncStdin {
			if _, ok := <-lines; !ok {
				g.Close()
				log.Fatal("stdin closed before the go-ahead")
			}
		}
		res = g.Measure(*warmup, *duration, *msgs,
			func() { emit(event{Event: "measure-start"}) },
			func() { emit(event{Event: "measure-end"}) })
	}
	emit(res)
	if res.Errors > 0 {
		fmt.Fprintf(os.Stderr, "loadgen: %d errors; first: %s\n", res.Errors, res.FirstError)
		os.Exit(1)
	}
}
