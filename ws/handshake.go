package ws

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/evloop/evloop/http1"
)

// acceptGUID is appended to the client's key (RFC 6455 section 1.3).
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptKey returns the Sec-WebSocket-Accept value for a client's
// Sec-WebSocket-Key.
func AcceptKey(key string) string {
	var b [28]byte
	return string(acceptKey(&b, []byte(key)))
}

// acceptKey writes the Sec-WebSocket-Accept value for key into b. A
// valid key (24 bytes) is hashed without allocating.
func acceptKey(b *[28]byte, key []byte) []byte {
	var in [24 + len(acceptGUID)]byte
	sum := sha1.Sum(append(append(in[:0], key...), acceptGUID...))
	base64.StdEncoding.Encode(b[:], sum[:])
	return b[:]
}

// HandshakeError is a refused opening handshake. Upgrade returns it with
// the status it answered the request with, and why. Dialer.Dial returns it
// when the server's answer does not open the connection: with the status
// the server answered with (0 if its answer was not HTTP), the answer's
// header fields, and why the answer was refused.
type HandshakeError struct {
	Status int
	Reason string
	Header http.Header // the server's answer (Dial only)
}

// Error returns "websocket: handshake refused: " followed by the reason.
func (e *HandshakeError) Error() string { return "websocket: handshake refused: " + e.Reason }

// handshake is what an upgrade request asks for, read from either kind of
// request. The fast path reads it without copying the request's fields.
type handshake struct {
	key        []byte
	keys       int // Sec-WebSocket-Key fields
	origin     []byte
	host       []byte
	protocols  []string // Sec-WebSocket-Protocol, in the client's order
	extensions []string // Sec-WebSocket-Extensions field values
	upgrade    bool     // Upgrade holds "websocket"
	connection bool     // Connection holds "upgrade"
	versions   int      // Sec-WebSocket-Version fields
	version13  bool     // the one there is says 13
}

// check validates an opening handshake (RFC 6455 section 4.2.1).
func (hs *handshake) check(method string, major, minor int) *HandshakeError {
	switch {
	case method != http.MethodGet:
		return &HandshakeError{Status: http.StatusMethodNotAllowed, Reason: "method is not GET"}
	case major < 1 || (major == 1 && minor < 1):
		return &HandshakeError{Status: http.StatusBadRequest, Reason: "HTTP version below 1.1"}
	case !hs.upgrade:
		return &HandshakeError{Status: http.StatusBadRequest, Reason: "no websocket token in Upgrade"}
	case !hs.connection:
		return &HandshakeError{Status: http.StatusBadRequest, Reason: "no upgrade token in Connection"}
	case hs.versions != 1 || !hs.version13:
		return &HandshakeError{Status: http.StatusUpgradeRequired, Reason: "Sec-WebSocket-Version is not 13"}
	}
	var k [18]byte
	if hs.keys > 1 {
		// It "MUST NOT appear more than once" (RFC 6455 section 11.3.1):
		// which one to answer is anyone's guess.
		return &HandshakeError{Status: http.StatusBadRequest, Reason: "more than one Sec-WebSocket-Key"}
	}
	if len(hs.key) != 24 {
		return &HandshakeError{Status: http.StatusBadRequest, Reason: "Sec-WebSocket-Key is not 16 bytes in base64"}
	}
	if n, err := base64.StdEncoding.Decode(k[:], hs.key); err != nil || n != 16 {
		return &HandshakeError{Status: http.StatusBadRequest, Reason: "Sec-WebSocket-Key is not 16 bytes in base64"}
	}
	return nil
}

// field takes one header field into the handshake.
func (hs *handshake) field(name, value []byte) {
	switch {
	case foldEqual(name, "Upgrade"):
		hs.upgrade = hs.upgrade || hasToken(value, "websocket")
	case foldEqual(name, "Connection"):
		hs.connection = hs.connection || hasToken(value, "upgrade")
	case foldEqual(name, "Sec-WebSocket-Version"):
		hs.versions++
		hs.version13 = string(bytes.TrimSpace(value)) == "13"
	case foldEqual(name, "Sec-WebSocket-Key"):
		hs.keys++
		hs.key = bytes.TrimSpace(value)
	case foldEqual(name, "Origin"):
		hs.origin = value
	case foldEqual(name, "Sec-WebSocket-Protocol"):
		hs.protocols = appendList(hs.protocols, string(value))
	case foldEqual(name, "Sec-WebSocket-Extensions"):
		hs.extensions = append(hs.extensions, string(value))
	}
}

// foldEqual compares b with s without regard to ASCII case, without
// allocating.
func foldEqual(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if x|0x20 != y|0x20 || (x|0x20 < 'a' || x|0x20 > 'z') && x != y {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds token
// (lowercase), compared without regard to case.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var t []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			t, v = v, nil
		}
		if foldEqual(bytes.TrimSpace(t), token) {
			return true
		}
	}
	return false
}

// fromFast reads a handshake from a fast handler's request.
func (hs *handshake) fromFast(r *http1.Request) *HandshakeError {
	hs.host = r.Host
	for _, f := range r.Headers {
		hs.field(f.Name, f.Value)
	}
	return hs.check(string(r.Method), r.Major, r.Minor)
}

// fromStd reads a handshake from a net/http request.
func (hs *handshake) fromStd(r *http.Request) *HandshakeError {
	hs.host = []byte(r.Host)
	for name, values := range r.Header {
		for _, v := range values {
			hs.field([]byte(name), []byte(v))
		}
	}
	return hs.check(r.Method, r.ProtoMajor, r.ProtoMinor)
}

func appendList(list []string, v string) []string {
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			list = append(list, t)
		}
	}
	return list
}

// sameOrigin is the default origin check: no Origin field (not a
// browser), or an Origin whose host is the request's Host.
func sameOrigin(origin, host string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, host)
}

// negotiate decides the subprotocol (the server's first preference the
// client offered; 0 if none) and whether permessage-deflate is used: the
// answer to the offer accepted, or "", and the window bits, below 15, to
// which the client limits the server (0: none).
func (hs *handshake) negotiate(o *Options) (protocol uint8, deflate string, window uint8) {
	// protocol is the index of the choice in o.Subprotocols, plus one.
choose:
	for i, p := range o.Subprotocols {
		for _, q := range hs.protocols {
			if p == q {
				protocol = uint8(i + 1)
				break choose
			}
		}
	}
	if o.Compression {
		for _, v := range hs.extensions {
			for _, offer := range splitQuoted(v, ',') {
				if answer, window := acceptDeflate(offer); answer != "" {
					return protocol, answer, window
				}
			}
		}
	}
	return protocol, "", 0
}

// deflateResponse is the answer to an accepted permessage-deflate offer:
// neither side keeps its compression context between messages (a server
// may demand that of the client, RFC 7692 section 7.1.1.2), so that an
// idle connection holds no compressor or decompressor.
const deflateResponse = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

// extensionParam splits one parameter of an extension, "name" or
// "name=value", into its lower-case name and its value: a token, or a
// quoted string, unquoted (RFC 6455 section 9.1). A value that is
// neither, such as a quoted string left open, is returned as it is,
// which is no valid value of any parameter.
func extensionParam(p string) (name, value string, hasValue bool) {
	name, value, hasValue = strings.Cut(strings.TrimSpace(p), "=")
	value = strings.TrimSpace(value)
	if q, ok := unquote(value); ok {
		value = q
	}
	return strings.ToLower(strings.TrimSpace(name)), value, hasValue
}

// unquote returns the text of the quoted string s, its quoted pairs
// unescaped (RFC 9110 section 5.6.4), and whether s is one.
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch c {
		case '"':
			return "", false
		case '\\':
			if i++; i == len(s)-1 { // the closing quote escaped
				return "", false
			}
			c = s[i]
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// acceptDeflate returns the answer to one extension offer if it is a
// permessage-deflate offer this server can accept (RFC 7692 section 7.1),
// else "", and the window bits the client limits the server to, if below
// 15 (0: none).
// compress/flate always compresses with a 32 KiB window; an offer that
// limits the server's window to 2^N bytes (server_max_window_bits=N
// below 15) is accepted with that limit, which the server keeps by
// compressing only messages of at most 2^N bytes: without context
// takeover, no back-reference reaches further than its message's start.
// Larger messages go uncompressed, as RFC 7692 section 6 allows.
func acceptDeflate(offer string) (answer string, window uint8) {
	params := splitQuoted(offer, ';')
	if len(params) == 0 || !strings.EqualFold(strings.TrimSpace(params[0]), "permessage-deflate") {
		return "", 0
	}
	seen := map[string]bool{}
	value := "" // server_max_window_bits's
	for _, p := range params[1:] {
		name, v, hasValue := extensionParam(p)
		if seen[name] {
			return "", 0
		}
		seen[name] = true
		switch name {
		case "server_no_context_takeover", "client_no_context_takeover":
			if hasValue {
				return "", 0
			}
		case "server_max_window_bits":
			if !hasValue || !windowBits(v) {
				return "", 0
			}
			value = v
		case "client_max_window_bits":
			if hasValue && !windowBits(v) {
				return "", 0
			}
		default:
			return "", 0
		}
	}
	if value == "" {
		return deflateResponse, 0
	}
	// A server accepting the parameter says so (RFC 7692 section 7.1.2.1).
	answer = deflateResponse + "; server_max_window_bits=" + value
	if value == "15" {
		return answer, 0
	}
	bits, _ := strconv.Atoi(value)
	return answer, uint8(bits)
}

func windowBits(v string) bool {
	switch v {
	case "8", "9", "10", "11", "12", "13", "14", "15":
		return true
	}
	return false
}

// splitQuoted splits s at sep outside double quotes.
func splitQuoted(s string, sep byte) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == '\\' && quoted:
			i++
		case s[i] == sep && !quoted:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}
