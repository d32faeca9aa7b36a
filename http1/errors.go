package http1

import (
	"errors"
	"net/http"
	"strconv"
)

// ErrIncomplete reports that the input holds only the beginning of a
// request head: read more bytes and call again with them appended.
var ErrIncomplete = errors.New("http1: incomplete")

// Error is malformed or unacceptable input. A server answers with Status
// and closes the connection; Reason says what was wrong, for logs. Compare
// with errors.As, never by string.
type Error struct {
	Status int    // the response status: 400, 417, 431, 501 or 505
	Reason string // what was wrong, e.g. "malformed request line"
}

// Error returns "http1: " followed by the status code, its text and the
// reason.
func (e *Error) Error() string {
	return "http1: " + strconv.Itoa(e.Status) + " " + http.StatusText(e.Status) + ": " + e.Reason
}

// Errors are allocated once, so that a flood of malformed input costs
// nothing but the error response.
var (
	// The request line.
	errRequestLine   = &Error{400, "malformed request line"}
	errMethod        = &Error{400, "malformed method"}
	errTarget        = &Error{400, "malformed request target"}
	errTargetForm    = &Error{400, "request target form does not fit the method"}
	errVersion       = &Error{400, "malformed HTTP version"}
	errVersionNotSup = &Error{505, "HTTP version not supported"}

	// Field lines, in the head and in a chunked body's trailer section.
	errFieldName   = &Error{400, "malformed field name"}
	errSpaceColon  = &Error{400, "whitespace between field name and colon"}
	errFieldValue  = &Error{400, "invalid byte in field value"}
	errObsFold     = &Error{400, "obsolete line folding"}
	errBareCR      = &Error{400, "CR not followed by LF"}
	errBareLF      = &Error{400, "LF not preceded by CR"}
	errHeadTooBig  = &Error{431, "request header fields too large"}
	errTooManyHdrs = &Error{431, "too many header fields"}

	// Fields the server acts on.
	errNoHost          = &Error{400, "missing Host"}
	errManyHosts       = &Error{400, "more than one Host"}
	errBadHost         = &Error{400, "invalid Host"}
	errContentLength   = &Error{400, "invalid Content-Length"}
	errContentLengths  = &Error{400, "differing Content-Length values"}
	errLengthAndCoding = &Error{400, "both Transfer-Encoding and Content-Length"}
	errCodingHTTP10    = &Error{400, "Transfer-Encoding in an HTTP/1.0 request"}
	errNotChunked      = &Error{400, "final transfer coding is not chunked"}
	errChunkedTwice    = &Error{400, "chunked applied more than once"}
	errCoding          = &Error{501, "unsupported transfer coding"}
	errExpect          = &Error{417, "unsupported expectation"}

	// Chunked bodies.
	errChunkSize   = &Error{400, "malformed chunk size"}
	errChunkTooBig = &Error{400, "chunk size too large"}
	errChunkExt    = &Error{400, "malformed chunk extension"}
	errChunkExtBig = &Error{400, "chunk extensions too long"}
	errChunkLine   = &Error{400, "chunk size line too long"}
	errChunkData   = &Error{400, "chunk data not followed by CRLF"}
	errTrailerBig  = &Error{400, "trailer section too large"}
)
