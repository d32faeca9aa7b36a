package subclient

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evloop/evloop/bench/internal/hist"
)

// Config is one client process's work.
type Config struct {
	Server   netip.AddrPort // an IPv4 loopback address
	Path     string         // the WebSocket endpoint, /graphql
	Src      netip.Addr     // source address of every connection
	Conns    int
	First    int // index of the first connection among all processes'
	Triggers int // connection i subscribes to trigger (First+i) % Triggers
	Dialers  int // connections being opened at once
}

// Client holds subscribed connections on one epoll loop. Its methods must
// be called from one goroutine.
type Client struct {
	cfg   Config
	ep    int
	conns map[int32]*conn // by descriptor
	n     int             // connections opened

	probed     int
	mismatched int
	mismatch   string

	received int64
	closed   int
	bad      int
	errs     int
	example  string
	latency  *hist.H
	events   map[int64]*eventStat
}

type conn struct {
	fd      int
	trigger int
	buf     []byte // bytes of an incomplete frame
	probed  bool
}

type eventStat struct{ count, max int64 }

// Open dials cfg.Conns connections, upgrades each to WebSocket with the
// graphql-transport-ws subprotocol, initialises it and subscribes it to its
// trigger, then watches them all on an epoll instance.
func Open(cfg Config) (*Client, error) {
	if !cfg.Server.Addr().Is4() || !cfg.Server.Addr().IsLoopback() || !cfg.Src.Is4() || !cfg.Src.IsLoopback() {
		return nil, fmt.Errorf("server %v and source %v must be IPv4 loopback addresses", cfg.Server, cfg.Src)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && uint64(cfg.Conns)+64 > lim.Cur {
		return nil, fmt.Errorf("%d connections need more than the %d descriptors this process may open", cfg.Conns, lim.Cur)
	}
	if cfg.Triggers < 1 {
		cfg.Triggers = 1
	}
	if cfg.Dialers < 1 {
		cfg.Dialers = 16
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	c := &Client{cfg: cfg, ep: ep, conns: make(map[int32]*conn, cfg.Conns), latency: hist.New(), events: map[int64]*eventStat{}}
	var (
		mu    sync.Mutex
		first error
		next  = make(chan int)
		wg    sync.WaitGroup
	)
	for range cfg.Dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				k := (cfg.First + i) % cfg.Triggers
				cn, err := dial(cfg, k)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("connection %d: %w", cfg.First+i, err)
				}
				if err == nil {
					c.conns[int32(cn.fd)] = cn
				}
				mu.Unlock()
			}
		}()
	}
	for i := range cfg.Conns {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	c.n = len(c.conns)
	if first != nil {
		c.Close()
		return nil, first
	}
	for fd := range c.conns {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: fd}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, int(fd), &ev); err != nil {
			c.Close()
			return nil, os.NewSyscallError("epoll_ctl", err)
		}
	}
	return c, nil
}

// dial opens one subscribed connection with Go's net package, then takes
// its descriptor out of the runtime's poller.
func dial(cfg Config, k int) (*conn, error) {
	d := net.Dialer{
		LocalAddr: &net.TCPAddr{IP: cfg.Src.AsSlice()},
		Timeout:   10 * time.Second,
		Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				// Many connections from one source address to one server.
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
			})
			return errors.Join(err, serr)
		},
	}
	nc, err := d.Dial("tcp4", cfg.Server.String())
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n", cfg.Path, cfg.Server)
	br := bufio.NewReaderSize(nc, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Protocol") != "graphql-transport-ws" {
		return nil, fmt.Errorf("handshake: %s, subprotocol %q", resp.Status, resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	if _, err := nc.Write(frame(nil, 0x1, []byte(`{"type":"connection_init","payload":{}}`))); err != nil {
		return nil, err
	}
	for {
		op, p, err := readFrame(br)
		if err != nil {
			return nil, fmt.Errorf("waiting for connection_ack: %w", err)
		}
		if op == 0x8 {
			return nil, fmt.Errorf("closed before connection_ack: %q", p)
		}
		if op == 0x1 && bytes.Contains(p, []byte(`"connection_ack"`)) {
			break
		}
	}
	sub, _ := json.Marshal(map[string]any{
		"id": "1", "type": "subscribe",
		"payload": map[string]any{"query": Query, "variables": map[string]any{"id": strconv.Itoa(k)}},
	})
	if _, err := nc.Write(frame(nil, 0x1, sub)); err != nil {
		return nil, err
	}
	rest, _ := br.Peek(br.Buffered())
	f, err := nc.(*net.TCPConn).File() // a duplicate, outside the runtime's poller once nc is closed
	if err != nil {
		return nil, err
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &conn{fd: fd, trigger: k, buf: slices.Clone(rest)}, nil
}

// readFrame reads one server frame (unmasked) during the handshake.
func readFrame(r *bufio.Reader) (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(l[:])
	}
	if n > 1<<20 {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	p := make([]byte, n)
	_, err := io.ReadFull(r, p)
	return h[0] & 0x0F, p, err
}

// frame appends a masked client frame.
func frame(dst []byte, op byte, p []byte) []byte {
	dst = append(dst, 0x80|op)
	switch {
	case len(p) < 126:
		dst = append(dst, 0x80|byte(len(p)))
	case len(p) < 1<<16:
		dst = append(dst, 0x80|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(p)))
	default:
		dst = append(dst, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(len(p)))
	}
	mask := rand.Uint32()
	dst = binary.BigEndian.AppendUint32(dst, mask)
	start := len(dst)
	dst = append(dst, p...)
	for i := range p {
		dst[start+i] ^= byte(mask >> (24 - 8*(i&3)))
	}
	return dst
}

// Conns is the number of connections opened.
func (c *Client) Conns() int { return c.n }

// Close closes every connection and the epoll instance.
func (c *Client) Close() {
	for fd := range c.conns {
		unix.Close(int(fd))
	}
	clear(c.conns)
	unix.Close(c.ep)
}

// Run reads the connections until cmds is closed: it writes the ready
// line to out once every subscription has received a probe, and answers
// each command ("count", "report") with a line.
func (c *Client) Run(cmds <-chan string, out io.Writer) error {
	events := make([]unix.EpollEvent, 512)
	rbuf := make([]byte, 256<<10)
	ready := false
	for {
		n, err := unix.EpollWait(c.ep, events, 10)
		if err != nil && err != unix.EINTR {
			return os.NewSyscallError("epoll_wait", err)
		}
		for _, ev := range events[:max(n, 0)] {
			if cn := c.conns[ev.Fd]; cn != nil {
				c.readable(cn, rbuf)
			}
		}
		if !ready && c.probed == c.n {
			ready = true
			b, _ := json.Marshal(Ready{Conns: c.n, Mismatched: c.mismatched, Example: c.mismatch})
			fmt.Fprintf(out, "ready %s\n", b)
		}
		select {
		case cmd, ok := <-cmds:
			if !ok {
				return nil
			}
			var b []byte
			switch cmd {
			case "count":
				b, _ = json.Marshal(Count{Received: c.received, Closed: c.closed})
			case "report":
				b, _ = json.Marshal(c.report())
			default:
				b = []byte(`{"error":"unknown command"}`)
			}
			fmt.Fprintf(out, "%s\n", b)
		default:
		}
	}
}

// report returns the deliveries since the last report and forgets them.
func (c *Client) report() Report {
	r := Report{Received: c.received, Latency: c.latency.Sparse(), Closed: c.closed, Bad: c.bad, Errors: c.errs, Example: c.example}
	r.Events = make([][3]int64, 0, len(c.events))
	for seq, s := range c.events {
		r.Events = append(r.Events, [3]int64{seq, s.count, s.max})
	}
	c.received, c.bad, c.errs, c.example = 0, 0, 0, ""
	c.latency = hist.New()
	clear(c.events)
	return r
}

// readable reads what cn has and handles each complete frame.
func (c *Client) readable(cn *conn, rbuf []byte) {
	n, err := unix.Read(cn.fd, rbuf)
	now := time.Now().UnixNano()
	if n <= 0 {
		if err == unix.EAGAIN || err == unix.EINTR {
			return
		}
		c.drop(cn, fmt.Sprintf("connection ended: %v", err))
		return
	}
	data := rbuf[:n]
	if len(cn.buf) > 0 {
		cn.buf = append(cn.buf, data...)
		data = cn.buf
	}
	for {
		op, p, used := parseFrame(data)
		if used == 0 {
			break
		}
		data = data[used:]
		if !c.handle(cn, op, p, now) {
			return
		}
	}
	if len(data) == 0 {
		cn.buf = cn.buf[:0]
	} else {
		cn.buf = append(cn.buf[:0], data...) // data may alias cn.buf: copy moves it down
	}
}

// parseFrame returns the first complete server frame of data and its
// length, or used 0 when data holds no complete frame.
func parseFrame(data []byte) (op byte, p []byte, used int) {
	if len(data) < 2 {
		return 0, nil, 0
	}
	n, h := uint64(data[1]&0x7F), 2
	switch n {
	case 126:
		if len(data) < 4 {
			return 0, nil, 0
		}
		n, h = uint64(binary.BigEndian.Uint16(data[2:])), 4
	case 127:
		if len(data) < 10 {
			return 0, nil, 0
		}
		n, h = binary.BigEndian.Uint64(data[2:]), 10
	}
	if uint64(len(data)-h) < n {
		return 0, nil, 0
	}
	return data[0], data[h : h+int(n)], h + int(n)
}

// handle handles one frame; false when the connection was dropped.
func (c *Client) handle(cn *conn, b0 byte, p []byte, now int64) bool {
	op := b0 & 0x0F
	switch {
	case op == 0x8:
		code := 0
		if len(p) >= 2 {
			code = int(binary.BigEndian.Uint16(p))
		}
		c.drop(cn, fmt.Sprintf("closed by the server: %d %q", code, p[min(2, len(p)):]))
		return false
	case op == 0x9:
		unix.Write(cn.fd, frame(nil, 0xA, p))
		return true
	case op == 0xA:
		return true
	case op != 0x1 || b0&0x80 == 0:
		c.noteBad(&c.bad, "not a whole text frame", p)
		return true
	}
	switch typ := stringField(p, `"type":"`); typ {
	case "next":
		seq, ok1 := intField(p, `"seq":`)
		sent, ok2 := intField(p, `"sentAt":"`)
		if !ok1 || !ok2 {
			c.noteBad(&c.bad, "next without seq and sentAt", p)
			return true
		}
		if seq < 0 {
			if !cn.probed {
				cn.probed = true
				c.probed++
				c.checkProjection(cn, p)
			}
			return true
		}
		lat := now - sent
		c.latency.Record(lat)
		c.received++
		s := c.events[seq]
		if s == nil {
			s = &eventStat{}
			c.events[seq] = s
		}
		s.count++
		s.max = max(s.max, lat)
	case "ping":
		unix.Write(cn.fd, frame(nil, 0x1, []byte(`{"type":"pong"}`)))
	case "pong", "connection_ack":
	default:
		c.noteBad(&c.errs, "message", p)
	}
	return true
}

func (c *Client) noteBad(count *int, what string, p []byte) {
	*count++
	if c.example == "" {
		c.example = what + ": " + clip(p)
	}
}

func clip(p []byte) string {
	if len(p) > 300 {
		return string(p[:300]) + "..."
	}
	return string(p)
}

// checkProjection checks that a probe is a next for subscription "1"
// whose data is the event projected onto Query's selection set, and
// nothing more.
func (c *Client) checkProjection(cn *conn, p []byte) {
	var m struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Payload struct {
			Data map[string]map[string]any `json:"data"`
		} `json:"payload"`
	}
	ok := json.Unmarshal(p, &m) == nil && m.ID == "1" && m.Type == "next" && len(m.Payload.Data) == 1
	if ok {
		e := m.Payload.Data["employeeUpdated"]
		d, _ := e["details"].(map[string]any)
		ok = len(e) == 4 && e["id"] == strconv.Itoa(cn.trigger) && e["seq"] != nil && e["sentAt"] != nil &&
			len(d) == 1 && d["forename"] == "Ada"
	}
	if !ok {
		c.mismatched++
		if c.mismatch == "" {
			c.mismatch = clip(p)
		}
	}
}

// stringField returns the JSON string after the first occurrence of key
// (which ends with the opening quote), if it has no escapes.
func stringField(p []byte, key string) string {
	i := bytes.Index(p, []byte(key))
	if i < 0 {
		return ""
	}
	p = p[i+len(key):]
	j := bytes.IndexByte(p, '"')
	if j < 0 {
		return ""
	}
	return string(p[:j])
}

// intField returns the integer after the first occurrence of key.
func intField(p []byte, key string) (int64, bool) {
	i := bytes.Index(p, []byte(key))
	if i < 0 {
		return 0, false
	}
	p = p[i+len(key):]
	neg := len(p) > 0 && p[0] == '-'
	if neg {
		p = p[1:]
	}
	var v int64
	j := 0
	for ; j < len(p) && j < 19 && p[j] >= '0' && p[j] <= '9'; j++ {
		v = v*10 + int64(p[j]-'0')
	}
	if neg {
		v = -v
	}
	return v, j > 0
}

// drop closes cn: the server closed it or it failed.
func (c *Client) drop(cn *conn, why string) {
	c.closed++
	if c.example == "" {
		c.example = why
	}
	unix.EpollCtl(c.ep, unix.EPOLL_CTL_DEL, cn.fd, nil)
	unix.Close(cn.fd)
	delete(c.conns, int32(cn.fd))
}
