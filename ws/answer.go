package ws

import (
	"bufio"
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The server's answer to a client's opening handshake is read from the
// connection's inbound bytes as they arrive: answerHead finds where its
// head ends, net/http parses the head, and checkAnswer applies RFC 6455's
// rules (section 4.1) to it.

// maxAnswerHead bounds the head of a server's answer.
const maxAnswerHead = 64 << 10

// maxRefusalBody bounds the body of a refusal (an answer other than 101)
// that Dial waits for, to return it with the error.
const maxRefusalBody = 4 << 10

// answerHead returns the length of the HTTP/1.x response head at the start
// of b, through the empty line that ends it, or 0 if b holds only part of
// it. It fails as soon as b cannot begin a response, and for a head longer
// than maxAnswerHead. An error for b is an error for any b continued.
func answerHead(b []byte) (int, *HandshakeError) {
	const version = "HTTP/1."
	if k := min(len(b), len(version)); string(b[:k]) != version[:k] {
		return 0, &HandshakeError{Reason: "the answer is not HTTP/1.x: " + strconv.Quote(string(b[:min(len(b), 32)]))}
	}
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			break
		}
		line := b[i : i+j]
		i += j + 1
		if i > maxAnswerHead {
			break
		}
		if len(line) == 0 || string(line) == "\r" {
			return i, nil
		}
	}
	if len(b) > maxAnswerHead {
		return 0, &HandshakeError{Reason: "the answer's head is longer than " + strconv.Itoa(maxAnswerHead) + " bytes"}
	}
	return 0, nil
}

// readAnswer parses the server's answer to req at the start of b: the
// response, with an empty Body, and the length of its head; a nil
// response if the head is not all there.
func readAnswer(b []byte, req *http.Request) (*http.Response, int, *HandshakeError) {
	n, herr := answerHead(b)
	if n == 0 || herr != nil {
		return nil, 0, herr
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b[:n])), req)
	if err != nil {
		return nil, 0, &HandshakeError{Reason: "malformed answer: " + err.Error()}
	}
	resp.Body = http.NoBody
	return resp, n, nil
}

// deflateOffer is what a client offers when Options.Compression is set:
// permessage-deflate with neither side keeping its compression context
// between messages, so that compressors and decompressors are pooled, as
// on the server side.
const deflateOffer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

// checkAnswer applies RFC 6455's rules (section 4.1) to the server's
// answer to an opening handshake that sent key and offered what o offers.
// It returns the subprotocol the server chose (its index in
// o.Subprotocols, plus one; 0 for none) and whether permessage-deflate is
// used.
func checkAnswer(resp *http.Response, key string, o *Options) (protocol uint8, deflate bool, herr *HandshakeError) {
	refuse := func(reason string) (uint8, bool, *HandshakeError) {
		return 0, false, &HandshakeError{Status: resp.StatusCode, Reason: "server answered " + reason, Header: resp.Header}
	}
	h := resp.Header
	switch {
	case resp.StatusCode != http.StatusSwitchingProtocols:
		return refuse(resp.Status)
	case !headerHasToken(h, "Upgrade", "websocket"):
		return refuse("101 without websocket in Upgrade")
	case !headerHasToken(h, "Connection", "upgrade"):
		return refuse("101 without upgrade in Connection")
	}
	if accept := h.Values("Sec-WebSocket-Accept"); len(accept) != 1 || strings.TrimSpace(accept[0]) != AcceptKey(key) {
		return refuse("101 with a wrong Sec-WebSocket-Accept")
	}
	var chosen []string
	for _, v := range h.Values("Sec-WebSocket-Protocol") {
		chosen = appendList(chosen, v)
	}
	switch len(chosen) {
	case 0:
	case 1:
		i := slices.Index(o.Subprotocols, chosen[0])
		if i < 0 || i > 254 {
			return refuse("101 with subprotocol " + strconv.Quote(chosen[0]) + ", which was not offered")
		}
		protocol = uint8(i + 1)
	default:
		return refuse("101 with more than one subprotocol")
	}
	for _, v := range h.Values("Sec-WebSocket-Extensions") {
		for _, ext := range splitQuoted(v, ',') {
			if strings.TrimSpace(ext) == "" {
				continue
			}
			params := splitQuoted(ext, ';')
			name := strings.TrimSpace(params[0])
			if !o.Compression || !strings.EqualFold(name, "permessage-deflate") {
				return refuse("101 with extension " + strconv.Quote(name) + ", which was not offered")
			}
			if deflate {
				return refuse("101 with permessage-deflate twice")
			}
			if why := checkDeflateAnswer(params[1:]); why != "" {
				return refuse("101 with permessage-deflate " + why)
			}
			deflate = true
		}
	}
	return protocol, deflate, nil
}

// checkDeflateAnswer checks the parameters of a server's permessage-deflate
// answer to deflateOffer (RFC 7692 section 7.1). It returns what is wrong
// with them, or "".
func checkDeflateAnswer(params []string) string {
	var seen []string
	serverNoTakeover := false
	for _, p := range params {
		name, value, hasValue := extensionParam(p)
		if slices.Contains(seen, name) {
			return "with " + name + " twice"
		}
		seen = append(seen, name)
		switch name {
		case "server_no_context_takeover", "client_no_context_takeover":
			if hasValue {
				return "with a value for " + name
			}
			serverNoTakeover = serverNoTakeover || name == "server_no_context_takeover"
		case "server_max_window_bits":
			// compress/flate inflates any window up to 15 bits.
			if !hasValue || !windowBits(value) {
				return "with an invalid server_max_window_bits"
			}
		case "client_max_window_bits":
			// Not offered, so not to be answered (section 7.1.2.2).
			return "with client_max_window_bits, which was not offered"
		default:
			return "with the unknown parameter " + strconv.Quote(name)
		}
	}
	if !serverNoTakeover {
		// The offer asked for it, and a server that accepts must say so
		// (section 7.1.1.1): a decompressor is not kept between messages.
		return "without server_no_context_takeover"
	}
	return ""
}

// headerHasToken reports whether a field name of h holds token in its
// comma-separated list, compared without regard to case.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		if hasToken([]byte(v), token) {
			return true
		}
	}
	return false
}
