package http1

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/evloop/evloop"
)

// A FastHandler answers requests on the loop that owns the connection. It
// must not block: while it runs, every other connection of its loop waits.
// It gets the request with its whole body (Request.Body) and writes the
// answer to the Response, which the server sends when ServeFast returns.
// Neither the Request nor the Response, nor any slice they hold, may be
// kept after ServeFast returns: they are the loop's, reused by the next
// request. Work that blocks belongs in a pooled http.Handler.
type FastHandler interface {
	ServeFast(w *Response, r *Request)
}

// FastHandlerFunc is a function that is a FastHandler.
type FastHandlerFunc func(w *Response, r *Request)

// ServeFast calls f(w, r).
func (f FastHandlerFunc) ServeFast(w *Response, r *Request) { f(w, r) }

// Response is the answer a FastHandler writes: a status, header fields
// and a body, sent together when the handler returns, with the Date,
// Content-Length and Connection fields the server sets, and, for a body
// whose handler set no Content-Type (nor a Content-Encoding), one from
// http.DetectContentType, as net/http's server sets it.
type Response struct {
	hc     *conn
	req    *Request
	status int
	fields []byte // "Name: value\r\n" each
	body   []byte
	flags  uint8
	proto  Protocol
	length int64 // a Content-Length given to a HEAD request's answer
}

// flags of a Response.
const (
	rHasDate uint8 = 1 << iota
	rHasType
	rClose // the handler asked to close the connection
	rHasLength
	rEncoded // a Content-Encoding: no Content-Type is sniffed from the encoded bytes
	rHasServer
)

// Status returns the status set by WriteHeader (200 if it was not called).
func (w *Response) Status() int { return w.status }

// WriteHeader sets the status code. A 1xx status other than 101 is sent at
// once, with the fields added so far, as an informational answer (103
// Early Hints, say), unless the request is HTTP/1.0, whose client would
// take it for the final answer (RFC 9110 section 15.2); the final status
// comes after. Codes outside 100-999 panic, as in net/http.
func (w *Response) WriteHeader(status int) {
	checkStatusCode(status)
	if status >= 100 && status < 200 && status != http.StatusSwitchingProtocols {
		if w.req != nil && w.req.Minor == 0 {
			return
		}
		b := appendStatusLine(w.hc.batch(), status)
		b = append(b, w.fields...)
		w.hc.ls.out = append(b, "\r\n"...)
		return
	}
	w.status = status
}

func checkStatusCode(code int) {
	if code < 100 || code > 999 {
		panic("http1: invalid status code " + strconv.Itoa(code))
	}
}

// AddHeader adds a field to the answer. Content-Length and
// Transfer-Encoding are the server's to set (it frames the body it was
// given), so those are ignored, except a Content-Length in the answer to
// a HEAD request. A "Connection: close" field closes the connection after
// the answer; a Date or Server field replaces the server's. CR and LF in a
// value become spaces and a name that is not a token is ignored, so that
// no handler can split a response.
func (w *Response) AddHeader(name, value string) {
	if name == "Content-Type" {
		w.flags |= rHasType // the usual case, spelt the usual way
	} else if !w.serverField(name, value) {
		return
	}
	f := append(w.fields, name...)
	f = append(f, ": "...)
	start := len(f)
	f = append(f, value...)
	for i := start; i < len(f); i++ {
		if c := f[i]; c <= '\r' && (c == '\r' || c == '\n') {
			f[i] = ' ' // no response splitting
		}
	}
	w.fields = append(f, "\r\n"...)
}

// serverField notes what a field added by the handler means to the
// server, and reports whether the field goes into the answer.
func (w *Response) serverField(name, value string) bool {
	if !validFieldName(name) {
		return false
	}
	// Only names of these lengths are the server's business: skip the
	// comparisons for the rest.
	switch len(name) {
	case len("Content-Length"):
		if equalFold(name, "Content-Length") {
			if w.req != nil && string(w.req.Method) == "HEAD" {
				if n, err := strconv.ParseInt(value, 10, 64); err == nil && n >= 0 {
					w.flags |= rHasLength
					w.length = n
				}
			}
			return false
		}
	case len("Transfer-Encoding"):
		if equalFold(name, "Transfer-Encoding") {
			return false
		}
	case len("Date"):
		if equalFold(name, "Date") {
			w.flags |= rHasDate
		}
	case len("Server"):
		if equalFold(name, "Server") {
			w.flags |= rHasServer
		}
	case len("Content-Type"):
		if equalFold(name, "Content-Type") {
			w.flags |= rHasType
		}
	case len("Content-Encoding"):
		if equalFold(name, "Content-Encoding") && value != "" {
			w.flags |= rEncoded
		}
	case len("Connection"):
		// The server writes the field for close and keep-alive itself.
		if equalFold(name, "Connection") {
			if hasToken(value, "close") {
				w.flags |= rClose
				return false
			}
			return !equalFold(strings.TrimSpace(value), "keep-alive")
		}
	}
	return true
}

// Write appends p to the body. It does not fail.
func (w *Response) Write(p []byte) (int, error) {
	w.body = append(w.body, p...)
	return len(p), nil
}

// WriteString appends s to the body. It does not fail.
func (w *Response) WriteString(s string) (int, error) {
	w.body = append(w.body, s...)
	return len(s), nil
}

// Conn returns the connection the request came on. What is written to it
// directly goes after the answers to the requests before this one.
func (w *Response) Conn() *evloop.Conn {
	w.hc.ls.flushOut()
	return w.hc.c
}

// SwitchProtocols answers 101 Switching Protocols, with the fields added,
// and hands the connection to p once the handler returns: the bytes after
// the request go to p.OnData (at once if some are buffered already), and
// p.OnClose runs when the connection closes. A WebSocket upgrade uses it.
func (w *Response) SwitchProtocols(p Protocol) {
	w.status = http.StatusSwitchingProtocols
	w.proto = p
}

// runFast runs a fast handler for req and batches its answer. It reports
// whether the connection stays open for another request.
func (hc *conn) runFast(h FastHandler, req *Request, keep bool) bool {
	ls := hc.ls
	w := &ls.resp
	w.hc, w.req, w.status = hc, req, http.StatusOK
	w.fields, w.body = ls.fields[:0], ls.body[:0]
	w.flags, w.proto, w.length = 0, nil, 0
	ls.answering, ls.answerAt = hc, 0
	if ls.outc == hc {
		ls.answerAt = len(ls.out)
	}
	if len(req.Target) > 0 && req.Target[0] != '/' {
		if a := req.authority(); len(a) > 0 {
			req.Host = a // RFC 9112 section 3.2.2, as a pooled request's Host
		}
	}
	h.ServeFast(w, req)
	ls.answering = nil
	ls.fields, ls.body = trim(w.fields), trim(w.body)
	if w.flags&rClose != 0 || ls.s.noKeepAlives.Load() { // disabled meanwhile, by the handler say
		keep = false
	}
	b := hc.batch()
	if w.proto != nil {
		b = appendStatusLine(b, http.StatusSwitchingProtocols)
		b = append(b, w.fields...)
		ls.out = append(b, "\r\n"...)
		return true
	}
	isHead := string(req.Method) == "HEAD"
	body := w.body
	b = ls.appendHead(b, w.status, req, keep, w.flags)
	if w.status == http.StatusNotModified {
		b = appendFieldsBut(b, w.fields, "Content-Type")
	} else {
		b = append(b, w.fields...)
	}
	if bodyAllowed(w.status) {
		// Sniffed as net/http's server sniffs: not for an encoded body,
		// whose bytes are not the content's.
		if w.flags&(rHasType|rEncoded) == 0 && len(body) > 0 {
			b = appendField(b, "Content-Type", http.DetectContentType(body))
		}
		switch {
		case !isHead:
			b = appendLength(b, int64(len(body)))
		case w.flags&rHasLength != 0:
			b = appendLength(b, w.length)
		case len(body) > 0:
			b = appendLength(b, int64(len(body)))
		}
	}
	b = append(b, "\r\n"...)
	if isHead || !bodyAllowed(w.status) {
		body = nil
	}
	if len(body) <= 4<<10 {
		// Small: copied into the batch, which goes out in one copy.
		ls.out = append(b, body...)
		return keep
	}
	// Large: the batch and the body go to the outbound queue side by
	// side, without the body's copy into the batch.
	ls.iov[0], ls.iov[1] = b, body
	_, err := hc.c.Writev(ls.iov[:])
	ls.iov[0], ls.iov[1] = nil, nil
	if err != nil && ls.answerAt > 0 {
		// The answers before this one may still fit.
		_, err2 := hc.c.Write(b[:ls.answerAt])
		hc.writeFailed(err2)
	}
	ls.out, ls.outc = trim(b), nil
	hc.writeFailed(err)
	return keep
}

// appendFieldsBut appends to b the header fields in fields ("Name:
// value\r\n" each), leaving out those named name: a 304's Content-Type,
// which net/http's server drops too.
func appendFieldsBut(b, fields []byte, name string) []byte {
	for len(fields) > 0 {
		end := bytes.IndexByte(fields, '\n') + 1
		if end == 0 {
			end = len(fields)
		}
		f := fields[:end]
		fields = fields[end:]
		if colon := bytes.IndexByte(f, ':'); colon < 0 || !equalFold(string(f[:colon]), name) {
			b = append(b, f...)
		}
	}
	return b
}

// trim keeps a scratch buffer for the next request unless it grew large.
func trim(b []byte) []byte {
	if cap(b) > 64<<10 {
		return nil
	}
	return b[:0]
}

// appendHead appends the status line and the fields the server sets to
// every answer: Date, Server, Connection.
func (ls *loopState) appendHead(b []byte, status int, req *Request, keep bool, flags uint8) []byte {
	if status == http.StatusOK && flags&(rHasDate|rHasServer) == 0 {
		b = append(b, ls.head200...)
	} else {
		b = ls.appendStart(b, status, flags)
	}
	switch {
	case !keep:
		b = append(b, "Connection: close\r\n"...)
	case req != nil && req.Minor == 0:
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	return b
}

// appendStart appends the status line, and the Date field and the Server
// field unless the handler set them.
func (ls *loopState) appendStart(b []byte, status int, flags uint8) []byte {
	b = appendStatusLine(b, status)
	if flags&rHasDate == 0 {
		b = append(b, ls.date...)
	}
	if name := ls.s.Name; name != "" && flags&rHasServer == 0 {
		b = appendField(b, "Server", name)
	}
	return b
}

// answerStatus answers req (nil if it could not be parsed) with a status
// of the server's own and a short text body, as net/http does.
func (hc *conn) answerStatus(req *Request, status int, keep bool, fields ...string) {
	ls := hc.ls
	b := ls.appendHead(hc.batch(), status, req, keep, 0)
	for i := 0; i+1 < len(fields); i += 2 {
		b = appendField(b, fields[i], fields[i+1])
	}
	var text string
	if status == http.StatusNotFound {
		text = "404 page not found\n"
	} else {
		text = strconv.Itoa(status) + " " + http.StatusText(status)
	}
	b = append(b, "Content-Type: text/plain; charset=utf-8\r\n"...)
	b = appendLength(b, int64(len(text)))
	b = append(b, "\r\n"...)
	if req == nil || string(req.Method) != "HEAD" {
		b = append(b, text...)
	}
	ls.out = b
}

// statusLines holds the status lines of common codes, ready to send.
var statusLines = func() map[int]string {
	m := make(map[int]string)
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			m[code] = "HTTP/1.1 " + strconv.Itoa(code) + " " + text + "\r\n"
		}
	}
	return m
}()

var status200 = []byte(statusLines[200])

func appendStatusLine(b []byte, code int) []byte {
	if code == 200 {
		return append(b, status200...)
	}
	if line, ok := statusLines[code]; ok {
		return append(b, line...)
	}
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	return append(b, " status code "+strconv.Itoa(code)+"\r\n"...)
}

func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

func appendLength(b []byte, n int64) []byte {
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, "\r\n"...)
}

// bodyAllowed reports whether an answer with status may have a body
// (RFC 9110 section 6.4.1).
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

func validFieldName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !tchar[name[i]] {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds token,
// compared without regard to case.
func hasToken(v, token string) bool {
	for rest := []byte(v); rest != nil; {
		var elem []byte
		elem, rest = nextElement(rest)
		if equalFold(elem, token) {
			return true
		}
	}
	return false
}
