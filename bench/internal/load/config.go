package load

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/evloop/evloop/bench/internal/hist"
)

// Mode is what each connection does once connected.
type Mode int

const (
	// PingPong: send one message, wait for its whole echo, repeat.
	PingPong Mode = iota
	// Pipelined: keep Depth messages in flight, sending more as echoes
	// complete.
	Pipelined
	// Idle: exchange one message, then stay connected and silent.
	Idle
)

func (m Mode) String() string {
	switch m {
	case PingPong:
		return "pingpong"
	case Pipelined:
		return "pipelined"
	case Idle:
		return "idle"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode is the inverse of Mode.String.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{PingPong, Pipelined, Idle} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown mode %q (pingpong, pipelined, idle)", s)
}

// Config is one load generator's work.
type Config struct {
	Server netip.AddrPort // an IPv4 loopback address
	Conns  int            // connections
	Size   int            // message size in bytes
	Mode   Mode
	Depth  int // messages in flight per connection when Pipelined

	Src      netip.Addr // first source address; later ones follow it
	PerSrc   int        // connections per source address
	ConnBase uint32     // id of the first connection (ids go into the messages)

	Workers        int           // epoll loops, each on its own OS thread
	MaxConnecting  int           // connections between connect() and their first echo, at once
	ConnectTimeout time.Duration // for all connections to be up and have echoed once
}

// Check validates c, fills in defaults and enforces the loopback-only rule.
func (c *Config) Check() error {
	if !c.Server.Addr().Is4() || !c.Server.Addr().IsLoopback() {
		return fmt.Errorf("server %v is not an IPv4 loopback address", c.Server)
	}
	if c.Conns < 1 {
		return fmt.Errorf("need at least one connection")
	}
	if c.Size < 1 || c.Size > 1<<20 {
		return fmt.Errorf("message size %d out of range 1..1MiB", c.Size)
	}
	if c.Mode != Pipelined {
		c.Depth = 1
	}
	if c.Depth < 1 || c.Depth*c.Size > 16<<20 {
		return fmt.Errorf("depth %d × size %d out of range", c.Depth, c.Size)
	}
	if !c.Src.IsValid() {
		c.Src = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	if c.PerSrc < 1 {
		c.PerSrc = 20000
	}
	last := c.srcFor(c.Conns - 1)
	if !c.Src.Is4() || !c.Src.IsLoopback() || !last.IsLoopback() {
		return fmt.Errorf("source addresses %v..%v leave 127.0.0.0/8", c.Src, last)
	}
	if c.Workers < 1 {
		c.Workers = 1
	}
	if c.Workers > c.Conns {
		c.Workers = c.Conns
	}
	if c.MaxConnecting < 1 {
		c.MaxConnecting = 256
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 60 * time.Second
	}
	return nil
}

// srcFor is the source address of connection i (0-based in this process).
func (c *Config) srcFor(i int) netip.Addr {
	a := c.Src.As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i / c.PerSrc)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// Result is what a load generator reports, as one JSON object.
type Result struct {
	Event      string      `json:"event"` // "result"
	Mode       string      `json:"mode"`
	Conns      int         `json:"conns"`
	Size       int         `json:"size"`
	Depth      int         `json:"depth"`
	Workers    int         `json:"workers"`
	ConnectS   float64     `json:"connect_s"` // connecting and the first echo of every connection
	WindowS    float64     `json:"window_s"`  // the measured window
	Msgs       int64       `json:"msgs"`      // messages whose echo completed in the window
	MsgsPerS   float64     `json:"msgs_per_s"`
	P50us      float64     `json:"p50_us"` // round trip of one message, send to full echo
	P99us      float64     `json:"p99_us"`
	P999us     float64     `json:"p999_us"`
	MaxUs      float64     `json:"max_us"`
	MeanUs     float64     `json:"mean_us"`
	CPUs       float64     `json:"cpu_s"` // this process's CPU time (user+system) in the window
	Errors     int64       `json:"errors"`
	FirstError string      `json:"first_error,omitempty"`
	Hist       hist.Sparse `json:"hist"` // round trips in ns, to merge across processes
}

// SetLatency fills the latency fields from h.
func (r *Result) SetLatency(h *hist.H) {
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	r.P50us = us(h.Quantile(0.50))
	r.P99us = us(h.Quantile(0.99))
	r.P999us = us(h.Quantile(0.999))
	r.MaxUs = us(h.Max())
	r.MeanUs = h.Mean() / 1e3
	r.Hist = h.Sparse()
}
