package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/evloop/evloop/bench/internal/proc"
)

// wideCase is one command over many keys or arguments, timed from its
// first byte sent to its reply: setup runs first on the same connection
// (replies read and dropped), then command, built for n; block says the
// command waits (a blocking pop), to be ended by CLIENT UNBLOCK from
// another connection once the server counts it blocked.
type wideCase struct {
	name    string
	setup   func(n int) [][]string
	command func(n int) []string
	block   bool
}

// numbered returns prefix0 ... prefix(n-1).
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// bcastPrefixes is CLIENT TRACKING on BCAST with n prefixes, none
// beginning another.
func bcastPrefixes(n int) []string {
	args := []string{"CLIENT", "TRACKING", "on", "BCAST"}
	for i := range n {
		args = append(args, "PREFIX", "p"+strconv.Itoa(i)+":")
	}
	return args
}

// wideCases are the commands where a server may spend more than linear
// time in the number of keys or arguments: each key looked for among those
// before it, or each member among all the sets, or each prefix against
// every other; and, as controls, commands that are linear in both servers.
var wideCases = []wideCase{
	{"MGET of n keys (control)", nil, func(n int) []string { return append([]string{"MGET"}, numbered("k", n)...) }, false},
	{"SUNION of n missing keys (control)", nil, func(n int) []string { return append([]string{"SUNION"}, numbered("none", n)...) }, false},
	{"WATCH of n keys", nil, func(n int) []string { return append([]string{"WATCH"}, numbered("k", n)...) }, false},
	{"BLPOP of n keys", nil, func(n int) []string { return append(append([]string{"BLPOP"}, numbered("k", n)...), "0") }, true},
	{"SDIFF of a set of n and n missing keys", func(n int) [][]string { return [][]string{append([]string{"SADD", "s"}, numbered("m", n)...)} },
		func(n int) []string { return append([]string{"SDIFF", "s"}, numbered("none", n)...) }, false},
	{"CLIENT TRACKING with n BCAST prefixes", nil, bcastPrefixes, false},
	{"1,000 SETs, with n BCAST prefixes", func(n int) [][]string { return [][]string{bcastPrefixes(n)} }, nil, false},
}

// wideCommands starts every server and runs each of wideCases with n keys
// or arguments, runs times, the servers in turn (the first alternating);
// it prints the time until the reply, medians, with the ratio to the
// first server's.
func wideCommands(servers []server, n, runs int, pin bool) error {
	procs, stop, err := startAll(servers, pin)
	defer stop()
	if err != nil {
		return err
	}
	fmt.Printf("\n## Commands over %d keys or arguments, ms until the reply, medians of %d\n\n| command | ", n, runs)
	for _, srv := range servers {
		fmt.Printf("%s | ", srv.name)
	}
	fmt.Printf("%s ÷ %s |\n|---|", servers[1].name, servers[0].name)
	fmt.Print(strings.Repeat("---:|", len(servers)+1), "\n")
	for _, wc := range wideCases {
		took := make([][]float64, len(servers))
		var ratios []float64
		for r := range runs {
			for k := range servers {
				i := (k + r) % len(servers)
				ms, err := wideOnce(procs[i].addr(), wc, n)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", servers[i].name, wc.name, err)
				}
				took[i] = append(took[i], ms)
			}
			ratios = append(ratios, took[1][r]/took[0][r])
		}
		fmt.Printf("| %s | ", strings.ReplaceAll(wc.name, "n ", strconv.Itoa(n)+" "))
		for i := range servers {
			fmt.Printf("%.1f | ", proc.Median(took[i]))
		}
		fmt.Printf("%.3g |\n", proc.Median(ratios))
	}
	return nil
}

// wideOnce runs wc on the server at addr, on a new connection after
// FLUSHALL, and returns the milliseconds until its reply.
func wideOnce(addr string, wc wideCase, n int) (float64, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Minute))
	r := bufio.NewReaderSize(c, 1<<20)
	do := func(args ...string) (string, error) {
		if _, err := c.Write(respCommand(args)); err != nil {
			return "", err
		}
		return readReply(r)
	}
	if _, err := do("FLUSHALL"); err != nil {
		return 0, err
	}
	if wc.setup != nil {
		for _, args := range wc.setup(n) {
			if _, err := do(args...); err != nil {
				return 0, err
			}
		}
	}
	var id string
	if wc.block {
		if id, err = do("CLIENT", "ID"); err != nil {
			return 0, err
		}
	}
	// The timed connection: c, or, for the SETs, another (c tracks).
	timed, tr := c, r
	var req []byte
	replies := 1
	if wc.command != nil {
		req = respCommand(wc.command(n))
	} else {
		w, err := net.Dial("tcp", addr)
		if err != nil {
			return 0, err
		}
		defer w.Close()
		w.SetDeadline(time.Now().Add(10 * time.Minute))
		timed, tr = w, bufio.NewReaderSize(w, 1<<20)
		for i := range 1000 {
			req = append(req, respCommand([]string{"SET", "k" + strconv.Itoa(i), "v"})...)
		}
		replies = 1000
	}
	start := time.Now()
	if _, err := timed.Write(req); err != nil {
		return 0, err
	}
	if wc.block {
		if err := unblockWhenBlocked(addr, strings.TrimPrefix(strings.TrimSpace(id), ":")); err != nil {
			return 0, err
		}
	}
	for range replies {
		reply, err := readReply(tr)
		if err != nil {
			return 0, err
		}
		if strings.HasPrefix(reply, "-") {
			return 0, fmt.Errorf("replied %q", reply)
		}
	}
	return float64(time.Since(start).Microseconds()) / 1000, nil
}

// unblockWhenBlocked waits, on a connection of its own, until the server
// counts a blocked client, and ends the wait of client id.
func unblockWhenBlocked(addr, id string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Minute))
	r := bufio.NewReader(c)
	for {
		if _, err := c.Write(respCommand([]string{"INFO", "clients"})); err != nil {
			return err
		}
		info, err := readReply(r)
		if err != nil {
			return err
		}
		if strings.Contains(info, "\r\nblocked_clients:1\r\n") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := c.Write(respCommand([]string{"CLIENT", "UNBLOCK", id})); err != nil {
		return err
	}
	_, err = readReply(r)
	return err
}

// respCommand is args as a RESP array of bulk strings.
func respCommand(args []string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// readReply reads one RESP2 reply and returns it whole for a simple
// string, error, integer or bulk string, and its header line for an
// array, whose elements it reads and drops.
func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 {
		return "", fmt.Errorf("bad reply line %q", line)
	}
	switch line[0] {
	case '$':
		size, err := strconv.Atoi(strings.TrimSpace(line[1:]))
		if err != nil || size < 0 {
			return line, err
		}
		body := make([]byte, size+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return "", err
		}
		return line + string(body), nil
	case '*':
		count, err := strconv.Atoi(strings.TrimSpace(line[1:]))
		if err != nil {
			return "", err
		}
		for range count {
			if _, err := readReply(r); err != nil {
				return "", err
			}
		}
	}
	return line, nil
}
