// Command gateclient holds GraphQL subscriptions for cmd/gatebench: one
// process opens -conns WebSocket connections from source address -src,
// each subscribed (graphql-transport-ws) to the bench schema's
// employeeUpdated for one of -triggers ids, and measures each delivery's
// latency from the publish time the event carries.
//
//	gateclient -addr 127.0.0.1:8080 -conns 2500 -first 2500 -src 127.0.0.3 -triggers 10
//
// It prints "open N", then "ready {...}" once every subscription received a
// probe, then answers "count" and "report" on its standard input with a
// JSON line each (see internal/subclient), and exits when its standard
// input ends or -timeout passes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/evloop/evloop/bench/internal/subclient"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the gateway (loopback)")
	path := flag.String("path", "/graphql", "the WebSocket endpoint")
	src := flag.String("src", "127.0.0.2", "source address of the connections (loopback)")
	conns := flag.Int("conns", 100, "connections")
	first := flag.Int("first", 0, "index of the first connection among all clients'")
	triggers := flag.Int("triggers", 10, "distinct subscriptions: connection i subscribes to id (first+i) % triggers")
	timeout := flag.Duration("timeout", 30*time.Minute, "exit past this, whatever happens")
	flag.Parse()
	time.AfterFunc(*timeout, func() {
		fmt.Fprintln(os.Stderr, "gateclient: -timeout passed")
		os.Exit(2)
	})
	server, err := netip.ParseAddrPort(*addr)
	if err != nil {
		fail(err)
	}
	source, err := netip.ParseAddr(*src)
	if err != nil {
		fail(err)
	}
	c, err := subclient.Open(subclient.Config{Server: server, Path: *path, Src: source, Conns: *conns, First: *first, Triggers: *triggers})
	if err != nil {
		fail(err)
	}
	defer c.Close()
	fmt.Printf("open %d\n", c.Conns())
	cmds := make(chan string)
	go func() {
		s := bufio.NewScanner(os.Stdin)
		for s.Scan() {
			cmds <- s.Text()
		}
		close(cmds)
	}()
	if err := c.Run(cmds, os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gateclient:", err)
	os.Exit(1)
}
