package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats.go"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

const (
	protocol    = "graphql-transport-ws"
	initTimeout = 3 * time.Second  // graphql-ws's connectionInitWaitTimeout
	writeWait   = 10 * time.Second // as gorilla's chat example
	maxSubs     = 100              // operations per connection, as evgate
)

// gateway holds the triggers. Its methods may be called from any
// goroutine.
type gateway struct {
	schema *schema
	nc     *nats.Conn
	up     websocket.Upgrader

	mu       sync.Mutex
	triggers map[string]*trigger
}

func newGateway(s *schema, nc *nats.Conn) *gateway {
	return &gateway{
		schema:   s,
		nc:       nc,
		up:       websocket.Upgrader{Subprotocols: []string{protocol}},
		triggers: map[string]*trigger{},
	}
}

// conn is a client connection. Its subscriptions map is its reader
// goroutine's; writes take wmu.
type conn struct {
	g     *gateway
	ws    *websocket.Conn
	wmu   sync.Mutex
	subs  map[string]*subscription
	init  bool
	acked bool
}

// message is a graphql-transport-ws message as received.
type message struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// serveWS upgrades the request and reads the connection's messages until
// it ends.
func (g *gateway) serveWS(w http.ResponseWriter, r *http.Request) {
	wc, err := g.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{g: g, ws: wc, subs: map[string]*subscription{}}
	defer c.end()
	if wc.Subprotocol() != protocol {
		c.close(4406, "Subprotocol not acceptable")
		return
	}
	wc.SetReadLimit(64 << 10)
	wc.SetReadDeadline(time.Now().Add(initTimeout))
	for {
		_, data, err := wc.ReadMessage()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !c.init {
				c.close(4408, "Connection initialisation timeout")
			}
			return
		}
		if !c.handle(data) {
			return
		}
	}
}

// handle runs one message; false means the connection is being closed.
func (c *conn) handle(data []byte) bool {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return c.close(4400, "Invalid message received")
	}
	switch m.Type {
	case "connection_init":
		if c.init {
			return c.close(4429, "Too many initialisation requests")
		}
		c.init, c.acked = true, true
		c.ws.SetReadDeadline(time.Time{})
		c.write([]byte(`{"type":"connection_ack"}`))
	case "ping":
		c.write([]byte(`{"type":"pong"}`))
	case "pong":
	case "subscribe":
		if m.ID == "" {
			return c.close(4400, `"subscribe" message requires a non-empty 'id' property`)
		}
		if !c.acked {
			return c.close(4401, "Unauthorized")
		}
		if c.subs[m.ID] != nil {
			return c.close(4409, "Subscriber for "+m.ID+" already exists")
		}
		var r request
		if err := json.Unmarshal(m.Payload, &r); err != nil || r.Query == "" {
			return c.close(4400, `"subscribe" message payload expects the 'query' property to be a string`)
		}
		c.subscribe(m.ID, &r)
	case "complete":
		if s := c.subs[m.ID]; s != nil {
			c.stop(s)
		}
	default:
		return c.close(4400, "Invalid message 'type' property")
	}
	return true
}

func (c *conn) subscribe(id string, r *request) {
	if len(c.subs) >= maxSubs {
		c.writeError(id, gqlerror.List{gqlerror.Errorf("too many operations on this connection (at most %d)", maxSubs)})
		return
	}
	op, errs := c.g.schema.prepare(r)
	if errs != nil {
		c.writeError(id, errs)
		return
	}
	s := &subscription{id: id, c: c, op: op, events: make(chan any, 16), done: make(chan struct{})}
	if err := c.g.join(s); err != nil {
		c.writeError(id, gqlerror.List{gqlerror.Errorf("upstream subscription failed: %v", err)})
		return
	}
	c.subs[id] = s
	go s.run()
}

// stop ends s: its goroutine returns and it leaves its trigger.
func (c *conn) stop(s *subscription) {
	delete(c.subs, s.id)
	close(s.done)
	c.g.leave(s)
}

// end stops every subscription and closes the connection.
func (c *conn) end() {
	for _, s := range c.subs {
		c.stop(s)
	}
	c.ws.Close()
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(writeWait))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *conn) writeError(id string, errs gqlerror.List) {
	b, _ := json.Marshal(errs)
	msg := append(appendID(nil, id), `,"type":"error","payload":`...)
	msg = append(msg, b...)
	c.write(append(msg, '}'))
}

// close sends a close frame with code and reason; it returns false, for
// handle's callers to stop reading.
func (c *conn) close(code int, reason string) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	return false
}

func appendID(dst []byte, id string) []byte {
	b, _ := json.Marshal(id)
	dst = append(dst, `{"id":`...)
	return append(dst, b...)
}

// subscription is one operation of a connection, with its goroutine.
type subscription struct {
	id     string
	c      *conn
	op     *operation
	t      *trigger
	events chan any // decoded events, or an error for an event that was not JSON
	done   chan struct{}
}

// run writes each event of s's trigger, projected, until s is stopped.
func (s *subscription) run() {
	var buf []byte
	for {
		select {
		case ev := <-s.events:
			buf = append(appendID(buf[:0], s.id), `,"type":"next","payload":`...)
			if err, ok := ev.(error); ok {
				msg, _ := json.Marshal("invalid event: " + err.Error())
				buf = append(buf, `{"data":null,"errors":[{"message":`...)
				buf = append(buf, msg...)
				buf = append(buf, "}]}"...)
			} else {
				buf = s.op.appendResult(buf, ev)
			}
			s.c.write(append(buf, '}'))
		case <-s.done:
			return
		}
	}
}

// trigger is one NATS subscription per subject shared by every
// subscription with the same root field and subjects: nats.go's goroutine
// puts each message on events, and fanOut sends it to every subscriber.
type trigger struct {
	key    string
	events chan []byte
	stop   chan struct{}
	nsubs  []*nats.Subscription

	mu   sync.Mutex
	set  map[*subscription]struct{}
	list []*subscription // set as a slice; nil when set changed
}

// join adds s to its trigger, subscribing upstream if the trigger is new.
func (g *gateway) join(s *subscription) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := s.op.triggerKey()
	t := g.triggers[key]
	if t == nil {
		t = &trigger{key: key, events: make(chan []byte, 64), stop: make(chan struct{}), set: map[*subscription]struct{}{}}
		for _, subj := range s.op.subjects {
			ns, err := g.nc.Subscribe(subj, func(m *nats.Msg) {
				select {
				case t.events <- m.Data:
				case <-t.stop:
				}
			})
			if err != nil {
				t.unsubscribe()
				return err
			}
			ns.SetPendingLimits(1<<20, 256<<20) // as evgate
			t.nsubs = append(t.nsubs, ns)
		}
		if err := g.nc.Flush(); err != nil {
			t.unsubscribe()
			return err
		}
		g.triggers[key] = t
		go t.fanOut()
	}
	t.mu.Lock()
	t.set[s] = struct{}{}
	t.list = nil
	t.mu.Unlock()
	s.t = t
	return nil
}

// leave takes s out of its trigger, ending the trigger with its last
// subscriber.
func (g *gateway) leave(s *subscription) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := s.t
	t.mu.Lock()
	delete(t.set, s)
	t.list = nil
	n := len(t.set)
	t.mu.Unlock()
	if n == 0 {
		delete(g.triggers, t.key)
		t.unsubscribe()
		close(t.stop)
	}
}

func (t *trigger) unsubscribe() {
	for _, ns := range t.nsubs {
		ns.Unsubscribe()
	}
}

func (t *trigger) subscribers() []*subscription {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.list == nil {
		t.list = make([]*subscription, 0, len(t.set))
		for s := range t.set {
			t.list = append(t.list, s)
		}
	}
	return t.list
}

// fanOut decodes each event once and sends it to every subscriber's
// channel, waiting while one is full.
func (t *trigger) fanOut() {
	for {
		select {
		case data := <-t.events:
			ev := decodeEvent(data)
			for _, s := range t.subscribers() {
				select {
				case s.events <- ev:
				case <-s.done:
				}
			}
		case <-t.stop:
			return
		}
	}
}

// decodeEvent returns the event's JSON value, numbers as written, or the
// error that says why it is not JSON.
func decodeEvent(data []byte) any {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	return v
}
