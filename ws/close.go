package ws

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// Close codes (RFC 6455 section 7.4.1, and the IANA registry).
const (
	CloseNormal            = 1000
	CloseGoingAway         = 1001
	CloseProtocolError     = 1002
	CloseUnsupportedData   = 1003
	CloseNoStatus          = 1005 // never sent: no code was in the close frame
	CloseAbnormal          = 1006 // never sent: the connection dropped without a close frame
	CloseInvalidPayload    = 1007
	ClosePolicyViolation   = 1008
	CloseMessageTooBig     = 1009
	CloseMandatoryExt      = 1010
	CloseInternalError     = 1011
	CloseServiceRestart    = 1012
	CloseTryAgainLater     = 1013
	CloseBadGateway        = 1014
	closeTLSHandshakeError = 1015 // never sent
)

// CloseError is a close handshake's code and reason: what the peer sent,
// or what this side sent on a protocol error.
type CloseError struct {
	Code   int
	Reason string
}

// Error returns "websocket: close " followed by the code and, if there is
// one, ": " and the reason.
func (e *CloseError) Error() string {
	s := "websocket: close " + strconv.Itoa(e.Code)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

func protocolError(reason string) *CloseError {
	return &CloseError{Code: CloseProtocolError, Reason: reason}
}

// validCloseCode reports whether code may be sent in a close frame.
func validCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// parseClose reads a close frame's payload: empty (no code: 1005), or a
// valid code and a UTF-8 reason.
func parseClose(p []byte) (*CloseError, *CloseError) {
	switch {
	case len(p) == 0:
		return &CloseError{Code: CloseNoStatus}, nil
	case len(p) == 1:
		return nil, protocolError("close frame with a one-byte payload")
	}
	code := int(binary.BigEndian.Uint16(p))
	if !validCloseCode(code) {
		return nil, protocolError("invalid close code " + strconv.Itoa(code))
	}
	if !utf8.Valid(p[2:]) {
		return nil, &CloseError{Code: CloseInvalidPayload, Reason: "close reason is not UTF-8"}
	}
	return &CloseError{Code: code, Reason: string(p[2:])}, nil
}

// appendClosePayload appends a close frame's payload for code and reason,
// the reason cut to fit a control frame (closeReason).
func appendClosePayload(dst []byte, code int, reason string) []byte {
	if code == CloseNoStatus || code == 0 {
		return dst
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(code))
	return append(dst, closeReason(reason)...)
}

// closeReason returns the part of reason a close frame carries: up to 123
// bytes, cut at a character boundary.
func closeReason(reason string) string {
	if len(reason) > 123 {
		reason = reason[:123]
		for len(reason) > 0 && !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
	}
	return reason
}
