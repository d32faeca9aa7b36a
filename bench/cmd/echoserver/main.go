// Command echoserver is a TCP echo server with one implementation per
// networking library, for the side-by-side benchmarks in bench/.
//
//	echoserver -impl net|gnet|nbio|gaio|netpoll -addr 127.0.0.1:PORT [-loops N] [-stats 127.0.0.1:PORT]
//	echoserver -list
//
// Every implementation echoes every byte it reads back on the same
// connection until the peer closes it. A second, plain TCP listener (-stats)
// answers each connection with one line, "goroutines=N", and closes it; the
// harness reads it for the idle-connections scenario. SIGTERM or SIGINT stops
// the server: the implementation closes its listener and returns, and the
// process exits with status 0.
//
// An implementation is one file that registers itself in impls from an
// init function; see impl.go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os/signal"
	"runtime"
	"sort"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("echoserver: ")
	impl := flag.String("impl", "net", "implementation: "+fmt.Sprint(names()))
	addr := flag.String("addr", "127.0.0.1:7000", "echo listener address (loopback only)")
	loops := flag.Int("loops", runtime.NumCPU(), "event loops or pollers (GOMAXPROCS for net); the default is the number of CPUs this process may run on")
	stats := flag.String("stats", "", "stats listener address; each connection gets one line, goroutines=N")
	list := flag.Bool("list", false, "print the registered implementations, one a line, and exit")
	flag.Parse()

	if *list {
		for _, n := range names() {
			fmt.Println(n)
		}
		return
	}
	run, ok := impls[*impl]
	if !ok {
		log.Fatalf("unknown -impl %q; have %v", *impl, names())
	}
	if err := loopbackOnly(*addr); err != nil {
		log.Fatal(err)
	}
	if *loops < 1 {
		*loops = 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	if *stats != "" {
		if err := loopbackOnly(*stats); err != nil {
			log.Fatal(err)
		}
		sl, err := net.Listen("tcp", *stats)
		if err != nil {
			log.Fatal(err)
		}
		go serveStats(sl)
		defer sl.Close()
	}

	errc := make(chan error, 1)
	go func() { errc <- run(ctx, Config{Addr: *addr, Loops: *loops}) }()
	select {
	case err := <-errc:
		if err != nil {
			log.Fatalf("%s: %v", *impl, err)
		}
	case <-ctx.Done():
		// Give the implementation a moment to close its listener and
		// connections; a library that does not return in time is not
		// waited for, the process exits anyway.
		select {
		case err := <-errc:
			if err != nil && !errors.Is(err, context.Canceled) {
				log.Printf("%s: stopped with %v", *impl, err)
			}
		case <-time.After(3 * time.Second):
			log.Printf("%s: did not stop within 3s; exiting", *impl)
		}
	}
}

func names() []string {
	var ns []string
	for n := range impls {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// loopbackOnly refuses any listen address that is not on the loopback
// interface: these servers are load targets and must not be reachable from
// elsewhere.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q is not a loopback address", addr)
	}
	return nil
}

// serveStats answers each connection with one line and closes it.
func serveStats(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		fmt.Fprintf(c, "goroutines=%d\n", runtime.NumGoroutine())
		c.Close()
	}
}
