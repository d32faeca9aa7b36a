// Package hello is what the two "Hello, World!" examples of package events
// share: Serve frames requests out of a byte stream and answers each one
// with "Hello, World!", without I/O; Conn reads, serves and writes one
// non-blocking connection; Listen and Accept give the raw fds an event
// loop watches. It uses no package of evloop's but the standard library and
// golang.org/x/sys/unix, so that the examples can be copied out of the
// module with it.
package hello

import (
	"bytes"
	"errors"
	"strconv"
)

// Response is the answer to every request but HEAD.
const Response = HeadResponse + "Hello, World!"

// HeadResponse is the answer to HEAD: Response without its body, which a
// client reading the answer to HEAD does not expect (RFC 9110, 9.3.2).
const HeadResponse = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\n"

// MaxHeader is the most bytes a request's head may take.
const MaxHeader = 8 << 10

// MaxBody is the largest request body taken.
const MaxBody = 1 << 20

// Errors for requests that cannot be answered; the connection is closed
// after the error response.
var (
	ErrTooLarge  = errors.New("hello: request head too large")
	ErrMalformed = errors.New("hello: malformed request")
	ErrChunked   = errors.New("hello: chunked request bodies are not supported")
	ErrBodyLarge = errors.New("hello: request body too large")
)

// ErrorResponse returns the response to send before closing for err.
func ErrorResponse(err error) string {
	switch {
	case errors.Is(err, ErrTooLarge):
		return "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	case errors.Is(err, ErrBodyLarge):
		return "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	case errors.Is(err, ErrChunked):
		return "HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	}
	return "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
}

// Serve appends a Response to out for each complete request at the start of
// in. It returns how many bytes of in it consumed (the rest is an incomplete
// request, to be kept until more bytes come), the extended out, and whether
// the connection must close after out is written: the client asked for it,
// or the input was bad, in which case err says why and out ends with the
// error response.
func Serve(in, out []byte) (consumed int, _ []byte, closeAfter bool, err error) {
	for {
		rest := in[consumed:]
		end := bytes.Index(rest, []byte("\r\n\r\n"))
		if end < 0 {
			if len(rest) > MaxHeader {
				return consumed, append(out, ErrorResponse(ErrTooLarge)...), true, ErrTooLarge
			}
			return consumed, out, false, nil
		}
		if end > MaxHeader {
			return consumed, append(out, ErrorResponse(ErrTooLarge)...), true, ErrTooLarge
		}
		h, err := parseHead(rest[:end])
		if err != nil {
			return consumed, append(out, ErrorResponse(err)...), true, err
		}
		total := end + 4 + h.bodyLen
		if total > len(rest) {
			return consumed, out, false, nil // the body is still coming
		}
		consumed += total
		if h.head {
			out = append(out, HeadResponse...)
		} else {
			out = append(out, Response...)
		}
		if h.close {
			return consumed, out, true, nil
		}
	}
}

type head struct {
	bodyLen int
	close   bool
	head    bool // the method is HEAD
}

// parseHead checks the request line and reads the headers that frame the
// request: Content-Length, Transfer-Encoding and Connection.
func parseHead(b []byte) (head, error) {
	var h head
	sawLength := false
	line, rest, _ := bytes.Cut(b, []byte("\r\n"))
	method, line, ok1 := bytes.Cut(line, []byte(" "))
	target, proto, ok2 := bytes.Cut(line, []byte(" "))
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 || !bytes.HasPrefix(proto, []byte("HTTP/1.")) || len(proto) != 8 {
		return h, ErrMalformed
	}
	h.head = string(method) == "HEAD"
	h.close = proto[7] == '0' // HTTP/1.0 closes unless it asks to keep alive
	for len(rest) > 0 {
		var field []byte
		field, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(field, []byte(":"))
		if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
			return h, ErrMalformed
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			// Digits only, and the same each time it is repeated: a
			// length read otherwise than a proxy in front reads it would
			// let the body pass for a request of its own (RFC 9112, 6.3).
			n, err := strconv.Atoi(string(value))
			if err != nil || len(value) == 0 || value[0] < '0' || value[0] > '9' || sawLength && n != h.bodyLen {
				return h, ErrMalformed
			}
			if n > MaxBody {
				return h, ErrBodyLarge
			}
			h.bodyLen, sawLength = n, true
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return h, ErrChunked
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				h.close = true
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				h.close = false
			}
		}
	}
	return h, nil
}
