package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startNATS starts a NATS server in this process, with JetStream in a
// temporary directory. It listens on listen ("host:port"), or on nothing
// when listen is "" (then only this process connects, in process). stop
// shuts it down and removes its directory.
func startNATS(listen string) (*server.Server, func(), error) {
	dir, err := os.MkdirTemp("", "evgate-nats-")
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*server.Server, func(), error) {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	opts := &server.Options{
		ServerName: "evgate",
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
		DontListen: listen == "",
	}
	if listen != "" {
		host, port, err := net.SplitHostPort(listen)
		if err != nil {
			return fail(fmt.Errorf("--nats-listen %q: %w", listen, err))
		}
		if opts.Port, err = strconv.Atoi(port); err != nil {
			return fail(fmt.Errorf("--nats-listen %q: bad port", listen))
		}
		opts.Host = host
		// The server would say only, after ReadyForConnections's wait,
		// that it did not start: an address taken is told at once.
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return fail(fmt.Errorf("--nats-listen: %w", err))
		}
		ln.Close()
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return fail(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return fail(errors.New("the embedded NATS server did not start (is " + listen + " taken?)"))
	}
	return ns, func() { ns.Shutdown(); ns.WaitForShutdown(); os.RemoveAll(dir) }, nil
}
