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
	"slices"
	"strconv"
	"strings"

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
	debug := flag.String("debug-addr", "", "address for /goroutines, /debug/pprof/profile and /debug/pprof/trace (none if empty)")
	flag.Parse()
	run, ok := impls[*impl]
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: unknown -impl %q (have %s)\n", command, *impl, list)
		os.Exit(2)
	}
	if *debug != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/goroutines", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, strconv.Itoa(runtime.NumGoroutine()))
		})
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		go http.ListenAndServe(*debug, mux)
	}
	log.Fatal(run(*addr))
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
// the process is killed.
func Nbio(addr string, h http.Handler) error {
	engine := nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp",
		Addrs:   []string{addr},
		Handler: h,
		NPoller: runtime.GOMAXPROCS(0),
		MaxLoad: 1 << 20, // nbio refuses connections past 10,000 by default
	})
	if err := engine.Start(); err != nil {
		return err
	}
	select {}
}
