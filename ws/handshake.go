package ws

import (
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/evloop/evloop/http1"
)

// acceptGUID is appended to the client's key (RFC 6455 section 1.3).
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptKey returns the Sec-WebSocket-Accept value for a client's
// Sec-WebSocket-Key.
func AcceptKey(key string) string {
	h := sha1.New()
	h.Write([]byte(key))
	h.Write([]byte(acceptGUID))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// HandshakeError is a refused opening handshake: the status it was
// answered with, and why.
type HandshakeError struct {
	Status int
	Reason string
}

func (e *HandshakeError) Error() string { return "websocket: handshake refused: " + e.Reason }

// handshake is what an upgrade request asks for, read from either kind of
// request.
type handshake struct {
	key        string
	protocols  []string // Sec-WebSocket-Protocol, in the client's order
	extensions []string // Sec-WebSocket-Extensions field values
	origin     string
	host       string
}

// check validates an opening handshake (RFC 6455 section 4.2.1).
func (hs *handshake) check(method string, major, minor int, upgrade, connection []string, version []string) *HandshakeError {
	switch {
	case method != http.MethodGet:
		return &HandshakeError{http.StatusMethodNotAllowed, "method is not GET"}
	case major < 1 || (major == 1 && minor < 1):
		return &HandshakeError{http.StatusBadRequest, "HTTP version below 1.1"}
	case !anyToken(upgrade, "websocket"):
		return &HandshakeError{http.StatusBadRequest, "no websocket token in Upgrade"}
	case !anyToken(connection, "upgrade"):
		return &HandshakeError{http.StatusBadRequest, "no upgrade token in Connection"}
	case len(version) != 1 || strings.TrimSpace(version[0]) != "13":
		return &HandshakeError{http.StatusUpgradeRequired, "Sec-WebSocket-Version is not 13"}
	}
	if k, err := base64.StdEncoding.DecodeString(hs.key); err != nil || len(k) != 16 {
		return &HandshakeError{http.StatusBadRequest, "Sec-WebSocket-Key is not 16 bytes in base64"}
	}
	return nil
}

// anyToken reports whether one of the comma-separated lists holds token,
// compared without regard to case.
func anyToken(values []string, token string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// fromFast reads a handshake from a fast handler's request.
func fromFast(r *http1.Request) (*handshake, *HandshakeError) {
	hs := &handshake{key: string(r.Get("Sec-WebSocket-Key")), origin: string(r.Get("Origin")), host: string(r.Host)}
	var upgrade, connection, version []string
	for _, f := range r.Headers {
		name, value := string(f.Name), string(f.Value)
		switch {
		case strings.EqualFold(name, "Upgrade"):
			upgrade = append(upgrade, value)
		case strings.EqualFold(name, "Connection"):
			connection = append(connection, value)
		case strings.EqualFold(name, "Sec-WebSocket-Version"):
			version = append(version, value)
		case strings.EqualFold(name, "Sec-WebSocket-Protocol"):
			hs.protocols = appendList(hs.protocols, value)
		case strings.EqualFold(name, "Sec-WebSocket-Extensions"):
			hs.extensions = append(hs.extensions, value)
		}
	}
	return hs, hs.check(string(r.Method), r.Major, r.Minor, upgrade, connection, version)
}

// fromStd reads a handshake from a net/http request.
func fromStd(r *http.Request) (*handshake, *HandshakeError) {
	hs := &handshake{key: r.Header.Get("Sec-WebSocket-Key"), origin: r.Header.Get("Origin"), host: r.Host}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		hs.protocols = appendList(hs.protocols, v)
	}
	hs.extensions = r.Header.Values("Sec-WebSocket-Extensions")
	return hs, hs.check(r.Method, r.ProtoMajor, r.ProtoMinor, r.Header.Values("Upgrade"),
		r.Header.Values("Connection"), r.Header.Values("Sec-WebSocket-Version"))
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
// client offered; 0 if none) and whether permessage-deflate is used.
func (hs *handshake) negotiate(o *Options) (protocol uint8, deflate bool) {
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
				if acceptDeflate(offer) {
					return protocol, true
				}
			}
		}
	}
	return protocol, false
}

// deflateResponse is the answer to an accepted permessage-deflate offer:
// neither side keeps its compression context between messages (a server
// may demand that of the client, RFC 7692 section 7.1.1.2), so that an
// idle connection holds no compressor or decompressor.
const deflateResponse = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

// acceptDeflate reports whether one extension offer is a permessage-deflate
// offer this server can accept (RFC 7692 section 7.1). compress/flate
// always compresses with a 32 KiB window, so an offer that limits the
// server's window below 15 bits is declined, as the RFC allows.
func acceptDeflate(offer string) bool {
	params := splitQuoted(offer, ';')
	if len(params) == 0 || !strings.EqualFold(strings.TrimSpace(params[0]), "permessage-deflate") {
		return false
	}
	seen := map[string]bool{}
	for _, p := range params[1:] {
		name, value, hasValue := strings.Cut(strings.TrimSpace(p), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.Trim(strings.TrimSpace(value), `"`)
		if seen[name] {
			return false
		}
		seen[name] = true
		switch name {
		case "server_no_context_takeover", "client_no_context_takeover":
			if hasValue {
				return false
			}
		case "server_max_window_bits":
			if !hasValue || !windowBits(value) || value != "15" {
				return false
			}
		case "client_max_window_bits":
			if hasValue && !windowBits(value) {
				return false
			}
		default:
			return false
		}
	}
	return true
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
