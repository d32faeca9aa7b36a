package ws

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/evloop/evloop/http1"
)

var zeroOptions Options

// Upgrade completes a WebSocket opening handshake from an http1 fast
// handler: it answers 101 and the connection becomes a *Conn served by h
// on the loop; h.OnOpen runs once the answer is queued. A request that is
// not a valid handshake is answered with the status RFC 6455 prescribes
// (400, 405 with Allow: GET, 426 with Sec-WebSocket-Version: 13, or 403
// for a refused Origin) and the *HandshakeError is returned.
func Upgrade(w *http1.Response, r *http1.Request, h Handler, o *Options) error {
	if o == nil {
		o = &zeroOptions
	}
	var hs handshake
	herr := hs.fromFast(r)
	if herr == nil {
		herr = checkOrigin(&hs, o)
	}
	if herr != nil {
		switch herr.Status {
		case http.StatusUpgradeRequired:
			w.AddHeader("Sec-WebSocket-Version", "13")
		case http.StatusMethodNotAllowed:
			w.AddHeader("Allow", http.MethodGet)
		}
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(herr.Status)
		w.WriteString(herr.Reason + "\n")
		return herr
	}
	wc, ext := newConn(&hs, h, o)
	wc.answer(hs.key, ext, w.AddHeader)
	w.SwitchProtocols(wc)
	return nil
}

// switcher is the http.ResponseWriter of an http1 Server's pooled
// handlers.
type switcher interface {
	SwitchProtocols(p http1.Protocol) error
}

// UpgradeHTTP completes a WebSocket opening handshake from a net/http
// handler run by an http1 Server: the connection then lives on the loop,
// as with Upgrade. Under another server (whose ResponseWriter cannot hand
// a connection to a loop) it answers 500 and fails; use Hijack there.
func UpgradeHTTP(w http.ResponseWriter, r *http.Request, h Handler, o *Options) error {
	if o == nil {
		o = &zeroOptions
	}
	sw, ok := w.(switcher)
	if !ok {
		http.Error(w, "websocket: not an http1 server", http.StatusInternalServerError)
		return errors.New("websocket: the ResponseWriter cannot switch protocols")
	}
	var hs handshake
	herr := hs.fromStd(r)
	if herr == nil {
		herr = checkOrigin(&hs, o)
	}
	if herr != nil {
		switch herr.Status {
		case http.StatusUpgradeRequired:
			w.Header().Set("Sec-WebSocket-Version", "13")
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", http.MethodGet)
		}
		http.Error(w, herr.Reason, herr.Status)
		return herr
	}
	wc, ext := newConn(&hs, h, o)
	wc.answer(hs.key, ext, w.Header().Set)
	return sw.SwitchProtocols(wc)
}

func checkOrigin(hs *handshake, o *Options) *HandshakeError {
	ok := sameOrigin
	if o.CheckOrigin != nil {
		ok = o.CheckOrigin
	}
	if len(hs.origin) > 0 && !ok(string(hs.origin), string(hs.host)) {
		return &HandshakeError{Status: http.StatusForbidden, Reason: "origin " + strconv.Quote(string(hs.origin)) + " not allowed"}
	}
	return nil
}

// newConn returns the connection a handshake opens, and the answer to the
// permessage-deflate offer it accepted ("" for none).
func newConn(hs *handshake, h Handler, o *Options) (*Conn, string) {
	protocol, deflate, window := hs.negotiate(o)
	wc := &Conn{h: h, o: o, protocol: protocol, deflate: deflate != "", window: window}
	if len(o.Subprotocols) > 255 {
		wc.protocol = 0 // cannot be told apart: none chosen
	}
	return wc, deflate
}

// answer sets the fields of the 101 answer with set; deflate is the
// Sec-WebSocket-Extensions answer, "" for none.
func (wc *Conn) answer(key []byte, deflate string, set func(name, value string)) {
	var accept [28]byte
	set("Upgrade", "websocket")
	set("Connection", "Upgrade")
	set("Sec-WebSocket-Accept", string(acceptKey(&accept, key)))
	if p := wc.Subprotocol(); p != "" {
		set("Sec-WebSocket-Protocol", p)
	}
	if deflate != "" {
		set("Sec-WebSocket-Extensions", deflate)
	}
}
