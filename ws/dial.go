package ws

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/internal/drain"
)

// DefaultHandshakeTimeout bounds a Dial when Dialer.HandshakeTimeout is 0.
const DefaultHandshakeTimeout = 30 * time.Second

// Dialer opens WebSocket client connections. Each is served on an event
// loop of the Dialer's own by a Handler, as the connections Upgrade opens
// are on a server's loops, and is the same *Conn: it reads, checks and
// delivers messages as a server's does, and sends every frame masked.
//
// The loops start with the first Dial and stop at Close. Set the fields
// before the first Dial. Multiple goroutines may call Dial simultaneously.
type Dialer struct {
	// HandshakeTimeout bounds a Dial, from the host name's lookup to the
	// server's answer (default DefaultHandshakeTimeout; negative: only
	// the context given to Dial bounds it).
	HandshakeTimeout time.Duration
	// Engine configures the Dialer's event loops (by default, one per
	// CPU).
	Engine evloop.Options
	// Net configures each TCP connect: the local address to dial from
	// and a hook to set socket options before it connects
	// (evloop.DialOptions). Its TLSConfig is not used.
	Net evloop.DialOptions
	// TLSConfig configures the TLS of wss:// connections, as
	// crypto/tls's Client: nil is the system's roots, and without a
	// ServerName the URL's host is checked. The handshake runs within
	// HandshakeTimeout, and Engine.HandshakeTimeout (default 10s).
	TLSConfig *tls.Config

	mu     sync.Mutex
	srv    *evloop.Server
	closed bool

	open drain.Count // connections from OnOpen (connected) to OnClose
}

// dialed is the outcome of a Dial, sent by its connection's loop.
type dialed struct {
	c    *Conn
	resp *http.Response
	err  error
}

// Dial opens a WebSocket connection to url ("ws://host[:port]/path", or
// "http://" alike; "wss://" or "https://" over TLS, with TLSConfig). It
// returns once the server's answer was checked and h.OnOpen ran
// on the connection's loop; h serves the connection from then on, and o
// configures it, as for Upgrade: o.Subprotocols are offered in order of
// preference, permessage-deflate is offered if o.Compression is set (with
// no context takeover either way, as the server side answers), and the
// limits, Workers and CloseTimeout apply alike. Options.CheckOrigin is
// not used.
//
// header holds fields to send with the opening handshake, such as Origin,
// Authorization, Cookie or User-Agent; a Host field replaces the URL's
// host. The fields the handshake sets itself (Upgrade, Connection and
// Sec-WebSocket-*) may not be among them. A URL with a user name and
// password sends them with basic authentication unless header has an
// Authorization field.
//
// The response is the server's answer, with an empty Body. If the server
// refused (an answer other than 101) or its answer breaks RFC 6455 (a
// wrong Sec-WebSocket-Accept, a subprotocol or extension that was not
// offered), the error is a *HandshakeError with the answer's status and
// header fields, and the response's Body holds a refusal's body if its
// Content-Length is at most 4 KiB. A redirect (a 3xx answer) is such a
// refusal: RFC 6455 lets a client follow it or not, and Dial does not; its
// Location is in the error's Header. If ctx ends or
// Dialer.HandshakeTimeout passes before the answer's head has come, the
// error wraps ctx.Err() (context.DeadlineExceeded for the timeout).
//
// Dial connects to the URL's host itself, trying its addresses in turn:
// no proxy is used, whatever HTTP_PROXY, HTTPS_PROXY or NO_PROXY say
// (net/http's ProxyFromEnvironment is not consulted).
//
// Dial waits for a loop, so it must not be called on one: in a Handler,
// hand the dial to a goroutine of its own.
func (d *Dialer) Dial(ctx context.Context, url string, header http.Header, h Handler, o *Options) (*Conn, *http.Response, error) {
	if h == nil {
		panic("websocket: nil handler")
	}
	if o == nil {
		o = &zeroOptions
	}
	u, err := parseURL(url)
	if err != nil {
		return nil, nil, err
	}
	key := newKey()
	req, raw, err := newRequest(u, header, key, o)
	if err != nil {
		return nil, nil, err
	}
	if t := d.handshakeTimeout(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	srv, err := d.server()
	if err != nil {
		return nil, nil, err
	}
	c, err := connect(ctx, srv, u, d.Net, d.TLSConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("websocket: dial %s: %w", u.Host, err)
	}
	hs := &dialing{d: d, req: req, key: key, h: h, o: o, res: make(chan dialed, 1)}
	if err := c.Submit(func() { hs.start(c, raw) }); err != nil {
		return nil, nil, err
	}
	select {
	case r := <-hs.res:
		return r.c, r.resp, r.err
	case <-ctx.Done():
	}
	if c.Submit(func() { hs.cancel(c, ctx.Err()) }) != nil {
		// The loop is gone, and the connection with it.
		select {
		case r := <-hs.res:
			return r.c, r.resp, r.err
		default:
			return nil, nil, fmt.Errorf("websocket: handshake with %s: %w", u.Host, ctx.Err())
		}
	}
	r := <-hs.res // the cancellation's, or the answer's if it came just before
	return r.c, r.resp, r.err
}

func (d *Dialer) handshakeTimeout() time.Duration {
	if d.HandshakeTimeout == 0 {
		return DefaultHandshakeTimeout
	}
	return d.HandshakeTimeout
}

// server returns the Dialer's loops, started at the first call.
func (d *Dialer) server() (*evloop.Server, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, evloop.ErrClosed
	}
	if d.srv == nil {
		srv, err := evloop.NewServer(dialHandler{d}, d.Engine)
		if err != nil {
			return nil, err
		}
		d.srv = srv
	}
	return d.srv, nil
}

// Close closes the Dialer's connections at once, without a close
// handshake (Shutdown, or Conn.Close first, gives them one), and stops its
// loops. Dial fails after Close.
func (d *Dialer) Close() error {
	if srv := d.stop(); srv != nil {
		return srv.Close()
	}
	return nil
}

// Shutdown ends the Dialer's connections with the close handshake (1001,
// going away; one already begun goes on) and fails the dials under way,
// waits until every connection is closed, then stops the loops. If ctx ends
// first, the connections left are closed at once and ctx.Err() returned.
// Dial fails once Shutdown began.
func (d *Dialer) Shutdown(ctx context.Context) error {
	srv := d.stop()
	if srv == nil {
		return nil
	}
	for i := range srv.Loops() {
		srv.Submit(i, func() {
			srv.EachConn(i, func(c *evloop.Conn) {
				switch x := c.Context().(type) {
				case *Conn:
					x.Close(CloseGoingAway, "")
				case *dialing:
					x.fail(c, errDialerClosed)
				default:
					c.Close() // connected, its handshake not yet started
				}
			})
		})
	}
	err := d.open.Wait(ctx)
	if serr := srv.Shutdown(ctx); err == nil {
		err = serr
	}
	return err
}

// stop marks the Dialer closed and returns its loops, if it started them.
func (d *Dialer) stop() *evloop.Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return d.srv
}

// stopped reports whether Close or Shutdown began.
func (d *Dialer) stopped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

var errDialerClosed = errors.New("websocket: the Dialer is closed")

// parseURL checks a URL given to Dial.
func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("websocket: %w", err)
	}
	switch u.Scheme {
	case "ws", "http", "wss", "https":
	default:
		return nil, errors.New("websocket: URL scheme " + strconv.Quote(u.Scheme) + " is not ws")
	}
	if u.Host == "" || u.Opaque != "" {
		return nil, errors.New("websocket: URL " + strconv.Quote(s) + " has no host")
	}
	return u, nil
}

// newKey returns a Sec-WebSocket-Key: 16 random bytes in base64 (RFC 6455
// section 4.1).
func newKey() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// newRequest builds the opening handshake for u: a GET with header's
// fields and the handshake's own, and its bytes.
func newRequest(u *url.URL, header http.Header, key string, o *Options) (*http.Request, []byte, error) {
	h := make(http.Header, len(header)+6)
	host := u.Host
	for name, values := range header {
		if !isToken(name) {
			return nil, nil, errors.New("websocket: invalid header field name " + strconv.Quote(name))
		}
		for _, v := range values {
			if !validFieldValue(v) {
				return nil, nil, errors.New("websocket: invalid header field value for " + name)
			}
		}
		switch k := textproto.CanonicalMIMEHeaderKey(name); k {
		case "Host":
			if len(values) > 0 {
				host = values[0]
			}
		case "Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version",
			"Sec-Websocket-Protocol", "Sec-Websocket-Extensions", "Sec-Websocket-Accept":
			return nil, nil, errors.New("websocket: the handshake sets the " + k + " field itself")
		default:
			h[k] = append(h[k], values...)
		}
	}
	h["Upgrade"] = []string{"websocket"}
	h["Connection"] = []string{"Upgrade"}
	h["Sec-WebSocket-Key"] = []string{key}
	h["Sec-WebSocket-Version"] = []string{"13"}
	for _, p := range o.Subprotocols {
		if !isToken(p) {
			return nil, nil, errors.New("websocket: invalid subprotocol " + strconv.Quote(p))
		}
	}
	if len(o.Subprotocols) > 0 {
		h["Sec-WebSocket-Protocol"] = []string{strings.Join(o.Subprotocols, ", ")}
	}
	if o.Compression {
		h["Sec-WebSocket-Extensions"] = []string{deflateOffer}
	}
	req := &http.Request{
		Method:     http.MethodGet,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h,
		Host:       host,
	}
	if u.User != nil && h.Get("Authorization") == "" {
		password, _ := u.User.Password()
		req.SetBasicAuth(u.User.Username(), password)
	}
	var b bytes.Buffer
	if err := req.Write(&b); err != nil {
		return nil, nil, fmt.Errorf("websocket: %w", err)
	}
	return req, b.Bytes(), nil
}

// isToken reports whether s is an HTTP token (RFC 9110 section 5.6.2): a
// field name, or a subprotocol (RFC 6455 section 4.1).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7F || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// validFieldValue reports whether v may be sent as a field value: no
// control characters but HTAB (RFC 9110 section 5.5), so no CR or LF that
// would end the field early.
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7F {
			return false
		}
	}
	return true
}

// connect opens a TCP connection to u's host on one of srv's loops, with
// o, and over TLS with config for wss:// and https://: Server.DialWith
// tries each of the name's addresses in turn, sharing ctx's deadline
// among them, so that one that never answers does not take the whole
// HandshakeTimeout from the next.
func connect(ctx context.Context, srv *evloop.Server, u *url.URL, o evloop.DialOptions, config *tls.Config) (*evloop.Conn, error) {
	port := "80"
	o.TLSConfig = nil
	if u.Scheme == "wss" || u.Scheme == "https" {
		port = "443"
		o.TLSConfig = config
		if config == nil {
			o.TLSConfig = &tls.Config{}
		}
	}
	if p := u.Port(); p != "" {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return nil, errors.New("invalid port " + strconv.Quote(p))
		}
		port = p
	}
	return srv.DialWith(ctx, "tcp", net.JoinHostPort(u.Hostname(), port), o)
}

// dialHandler serves a Dialer's connections. A connection's context holds
// its *dialing while the opening handshake is under way, then its *Conn.
type dialHandler struct{ d *Dialer }

// OnOpen implements evloop.Handler. The dial's state comes with the first
// task Dial submits, which sends the handshake.
func (h dialHandler) OnOpen(*evloop.Conn) { h.d.open.Add(1) }

// OnData implements evloop.Handler. Bytes that come before the dial's
// state are left buffered for it.
func (dialHandler) OnData(c *evloop.Conn) {
	switch x := c.Context().(type) {
	case *Conn:
		x.OnData(c)
	case *dialing:
		x.onData(c)
	}
}

// OnClose implements evloop.Handler.
func (h dialHandler) OnClose(c *evloop.Conn, err error) {
	switch x := c.Context().(type) {
	case *Conn:
		x.OnCloseThen(c, err, func() { h.d.open.Add(-1) }) // Shutdown waits for an OnClose owed
		return
	case *dialing:
		x.closed(err)
	}
	h.d.open.Add(-1)
}

// dialing is a client connection's opening handshake, owned by the
// connection's loop:
//
//	start ── request sent ──► answer's head ──► 101, valid ──► open: a *Conn
//	                             │     │
//	                             │     └── other status ──► its body (≤ 4 KiB) ──► refused
//	                             └── not HTTP, invalid 101, close, cancel ──► failed
type dialing struct {
	d       *Dialer
	req     *http.Request
	key     string
	h       Handler
	o       *Options
	res     chan dialed // buffered: the loop never waits
	resp    *http.Response
	bodyLen int  // a refusal's body to wait for
	done    bool // res was sent
}

// start sends the opening handshake. It runs on the loop.
func (hs *dialing) start(c *evloop.Conn, raw []byte) {
	if c.Closed() {
		hs.finish(dialed{err: errors.New("websocket: connection closed before the opening handshake")})
		return
	}
	if hs.d.stopped() { // connected after Close or Shutdown began
		c.Close()
		hs.finish(dialed{err: errDialerClosed})
		return
	}
	c.SetContext(hs)
	c.Write(raw)
	if c.InboundBuffered() > 0 {
		hs.onData(c) // the server did not wait for the request
	}
}

// onData reads the server's answer as it arrives.
func (hs *dialing) onData(c *evloop.Conn) {
	in, _ := c.Peek(0)
	if hs.resp == nil {
		resp, n, herr := readAnswer(in, hs.req)
		if herr != nil {
			hs.fail(c, herr)
			return
		}
		if resp == nil {
			return
		}
		c.Discard(n)
		in = in[n:]
		hs.resp = resp
		if resp.StatusCode == http.StatusSwitchingProtocols {
			hs.open(c)
			return
		}
		if resp.ContentLength > 0 && resp.ContentLength <= maxRefusalBody {
			hs.bodyLen = int(resp.ContentLength)
		}
	}
	if len(in) < hs.bodyLen {
		return
	}
	hs.resp.Body = io.NopCloser(bytes.NewReader(bytes.Clone(in[:hs.bodyLen])))
	hs.fail(c, hs.refusal())
}

// open makes the connection a *Conn if the server's 101 answer is valid,
// and hands it to Dial once h.OnOpen ran. What came after the answer is
// read as frames.
func (hs *dialing) open(c *evloop.Conn) {
	protocol, deflate, herr := checkAnswer(hs.resp, hs.key, hs.o)
	if herr != nil {
		hs.fail(c, herr)
		return
	}
	wc := &Conn{h: hs.h, o: hs.o, protocol: protocol, deflate: deflate, client: true}
	c.SetContext(wc)
	opened := false
	defer func() {
		if !opened { // OnOpen panicked: the loop closes the connection
			hs.finish(dialed{resp: hs.resp, err: errors.New("websocket: Handler.OnOpen panicked")})
		}
	}()
	wc.OnOpen(c)
	opened = true
	hs.finish(dialed{c: wc, resp: hs.resp})
	if !c.Closed() && c.InboundBuffered() > 0 {
		wc.OnData(c)
	}
}

// refusal is the error for an answer other than 101.
func (hs *dialing) refusal() error {
	_, _, herr := checkAnswer(hs.resp, hs.key, hs.o)
	return herr
}

// fail closes the connection and fails the dial with err.
func (hs *dialing) fail(c *evloop.Conn, err error) {
	c.Close()
	hs.finish(dialed{resp: hs.resp, err: err})
}

// closed fails the dial of a connection that closed before the answer.
func (hs *dialing) closed(err error) {
	switch {
	case hs.done:
	case hs.resp != nil: // a refusal whose body was cut short
		hs.finish(dialed{resp: hs.resp, err: hs.refusal()})
	default:
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		hs.finish(dialed{err: fmt.Errorf("websocket: connection closed before the handshake's answer: %w", err)})
	}
}

// cancel fails the dial when its context ended first: as a refusal if
// one came and its body is still coming.
func (hs *dialing) cancel(c *evloop.Conn, err error) {
	switch {
	case hs.done:
	case hs.resp != nil:
		hs.fail(c, hs.refusal())
	default:
		hs.fail(c, fmt.Errorf("websocket: handshake with %s: %w", hs.req.Host, err))
	}
}

func (hs *dialing) finish(r dialed) {
	if !hs.done {
		hs.done = true
		hs.res <- r
	}
}
