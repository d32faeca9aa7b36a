// Package serve is the command line the benchmark servers share: pick an
// implementation by name, listen on an address, and optionally serve the
// process's goroutine count and a CPU profile on a side listener outside
// the measured path.
package serve

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/lesismal/llib/std/crypto/tls"
	"github.com/lesismal/nbio/nbhttp"
)

// Main parses -impl, -addr and -debug-addr and runs the chosen
// implementation, which serves on addr until the process is killed.
func Main(command string, impls map[string]func(addr string) error) {
	var names []string
	for k := range impls {
		names = append(names, k)
	}
	slices.Sort(names)
	list := strings.Join(names, "|")
	impl := flag.String("impl", "evloop", "server: "+list)
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	debugAddr := flag.String("debug-addr", "", "address for /goroutines, /free (debug.FreeOSMemory), /debug/pprof/profile and /debug/pprof/trace (none if empty)")
	flag.Parse()
	run, ok := impls[*impl]
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: unknown -impl %q (have %s)\n", command, *impl, list)
		os.Exit(2)
	}
	if *debugAddr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/goroutines", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, strconv.Itoa(runtime.NumGoroutine()))
		})
		mux.HandleFunc("/free", func(w http.ResponseWriter, r *http.Request) {
			debug.FreeOSMemory() // a collection, and the freed pages given back
		})
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		go http.ListenAndServe(*debugAddr, mux)
	}
	log.Fatal(run(*addr))
}

// FreeOSMemory makes a server collect its garbage and give the pages back
// to the system (debug.FreeOSMemory), through its side listener, so that
// its resident memory is what it keeps.
func FreeOSMemory(debugAddr string) error {
	resp, err := http.Get("http://" + debugAddr + "/free")
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Goroutines asks a server's side listener for its goroutine count.
func Goroutines(debugAddr string) (int, error) {
	resp, err := http.Get("http://" + debugAddr + "/goroutines")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var n int
	_, err = fmt.Fscan(resp.Body, &n)
	return n, err
}

// Nbio serves h on nbio's loops and HTTP parser, one poller per CPU, until
// the process is killed; over TLS, with nbio's own fork of crypto/tls
// (llib), if certFile and keyFile are given.
func Nbio(addr string, h http.Handler, certFile, keyFile string) error {
	cfg := nbhttp.Config{
		Network: "tcp",
		Addrs:   []string{addr},
		Handler: h,
		NPoller: runtime.GOMAXPROCS(0),
		MaxLoad: 1 << 20, // nbio refuses connections past 10,000 by default
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return err
		}
		cfg.Addrs, cfg.AddrsTLS = nil, []string{addr}
		cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	engine := nbhttp.NewEngine(cfg)
	if err := engine.Start(); err != nil {
		return err
	}
	select {}
}
