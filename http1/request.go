package http1

import (
	"bytes"
	"encoding/binary"
	"iter"
	"math"
)

// net/http's defaults.
const (
	defaultMaxHeaderBytes = 1 << 20 // http.DefaultMaxHeaderBytes
	defaultMaxHeaders     = 100
)

// Limits bound what a Parser accepts. Zero (or negative) fields take the
// defaults. A Limits is plain data.
type Limits struct {
	// MaxHeaderBytes bounds the head: any empty lines before the request
	// line, the request line, the field lines and every CRLF, through the
	// blank line that ends it (default 1 MiB, as net/http). A longer head
	// is refused with 431 as soon as that many bytes have arrived without
	// its end.
	MaxHeaderBytes int
	// MaxHeaders is the most field lines a head may have (default 100).
	MaxHeaders int
}

func (l *Limits) maxHeaderBytes() int {
	if l.MaxHeaderBytes > 0 {
		return l.MaxHeaderBytes
	}
	return defaultMaxHeaderBytes
}

func (l *Limits) maxHeaders() int {
	if l.MaxHeaders > 0 {
		return l.MaxHeaders
	}
	return defaultMaxHeaders
}

// Header is one field line of a head. Name is as sent (compare it without
// regard to case); Value is without the whitespace around it. Both point
// into the input given to Parser.Parse.
type Header struct {
	Name, Value []byte
}

// Request is a parsed request head: the request line, the field lines, and
// what a server needs from them to frame the body and the connection.
//
// Its byte slices point into the input given to Parser.Parse and stay valid
// as long as those bytes are neither modified nor reused; a server copies
// what it keeps past the request. A Request is plain data, and its Headers
// slice is reused by the next Parse into the same Request.
type Request struct {
	Method []byte // a token, e.g. "GET"; case-sensitive
	// Target is the request target as sent: origin-form ("/path?query"),
	// absolute-form ("http://host/path"), authority-form ("host:port",
	// only with CONNECT) or "*" (only with OPTIONS). It is not decoded:
	// percent-escapes are left to the URL parser.
	Target []byte
	// Major and Minor are the version as sent. Major is always 1; a Minor
	// above 1 is served with the rules of HTTP/1.1.
	Major, Minor int
	// Headers are the field lines in the order sent.
	Headers []Header

	// ContentLength is the body's length from Content-Length, or -1 if
	// the head has none. A request with neither Content-Length nor
	// Chunked has no body (RFC 9112 section 6.3).
	ContentLength int64
	// Chunked reports a body sent with the chunked transfer coding:
	// decode it with a ChunkedDecoder.
	Chunked bool
	// KeepAlive reports whether the connection persists after the
	// response: for HTTP/1.1 unless "Connection: close", for HTTP/1.0
	// only with "Connection: keep-alive" (and without "close").
	KeepAlive bool
	// Expect100 reports "Expect: 100-continue" in an HTTP/1.1 request: the
	// client waits for "100 Continue" before sending the body. HTTP/1.0
	// requests never get it (RFC 9110 section 10.1.1).
	Expect100 bool
	// Host is the Host field's value; nil if there is none (allowed in
	// HTTP/1.0 only). With an absolute-form Target, the Server sets it to
	// the Target's authority (without userinfo) before a FastHandler sees
	// the request, as RFC 9112 section 3.2.2 has an origin server use it,
	// and as a pooled request's Host is; the Parser leaves the field's.
	Host []byte
	// Upgrade reports an HTTP/1.1 request to switch protocols: a
	// non-empty Upgrade field and the "upgrade" token in Connection.
	// UpgradeTo is the Upgrade field's value, e.g. "websocket", whether or
	// not Upgrade is set.
	Upgrade   bool
	UpgradeTo []byte
	// HeadLen is the head's length in bytes, through the blank line:
	// the body, or the next request, starts at the input's HeadLen.
	HeadLen int

	// Body is the request's body, decoded, when a Server hands the
	// request to a FastHandler; the Parser leaves it alone.
	Body []byte
}

// Path returns the path of the request target: of an origin-form or
// absolute-form target, the part before any "?" (for absolute-form with
// an authority, from the first "/" after it, or "/" if there is none); of
// "*", an authority-form target or another URI, the target itself. It is
// not decoded.
func (r *Request) Path() []byte {
	t := r.Target
	if len(t) > 0 && t[0] != '/' {
		i := schemeEnd(t)
		if i < 0 || !bytes.HasPrefix(t[i+1:], []byte("/")) {
			return t // "*", authority-form, or a URI without a path
		}
		t = t[i+1:]
		if bytes.HasPrefix(t, []byte("//")) {
			if _, t = cutAuthority(t[2:]); len(t) == 0 || t[0] != '/' {
				return []byte("/")
			}
		}
	}
	if i := bytes.IndexByte(t, '?'); i >= 0 {
		return t[:i]
	}
	return t
}

// authority returns an absolute-form target's authority, without its
// userinfo; nil for a target without one.
func (r *Request) authority() []byte {
	t := r.Target
	i := schemeEnd(t)
	if i < 0 || !bytes.HasPrefix(t[i+1:], []byte("//")) {
		return nil // a "://" further on, in a path or a query, is not one
	}
	a, _ := cutAuthority(t[i+3:])
	if j := bytes.LastIndexByte(a, '@'); j >= 0 {
		a = a[j+1:]
	}
	return a
}

// schemeEnd returns the index of the ":" that ends the scheme of an
// absolute URI target (RFC 3986 section 3.1: a letter, then letters,
// digits, "+", "-" and "."); -1 if t does not start with a scheme.
func schemeEnd(t []byte) int {
	for i, c := range t {
		switch {
		case 'a' <= c|0x20 && c|0x20 <= 'z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return -1
		}
	}
	return -1
}

// cutAuthority cuts what follows an absolute URI's "//" at the end of its
// authority: the first "/", "?" or "#".
func cutAuthority(a []byte) (authority, rest []byte) {
	if j := bytes.IndexAny(a, "/?#"); j >= 0 {
		return a[:j], a[j:]
	}
	return a, nil
}

// Query returns the query of the request target, after the "?", without
// decoding; nil if there is none.
func (r *Request) Query() []byte {
	if i := bytes.IndexByte(r.Target, '?'); i >= 0 {
		return r.Target[i+1:]
	}
	return nil
}

// Get returns the value of the first field named name, compared without
// regard to ASCII case, or nil if there is none.
func (r *Request) Get(name string) []byte {
	for i := range r.Headers {
		if equalFold(r.Headers[i].Name, name) {
			return r.Headers[i].Value
		}
	}
	return nil
}

// Values returns the values of every field named name, compared without
// regard to ASCII case, in the order sent.
func (r *Request) Values(name string) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for i := range r.Headers {
			if equalFold(r.Headers[i].Name, name) && !yield(r.Headers[i].Value) {
				return
			}
		}
	}
}

// Parser parses request heads from a connection's inbound bytes. The zero
// value is ready to use and applies the default limits.
//
// A Parser remembers how far it has searched its input for the head's end,
// so that a head arriving a byte at a time costs time linear in its length.
// A Parser is not safe for concurrent use; use one per connection.
type Parser struct {
	Limits

	scanned   int32 // b[:scanned] holds no end of the head
	lineStart int32 // where the line being searched begins
	start     int32 // where the request line begins, after empty lines
}

// Reset forgets the search for the current head's end, for a caller that
// discards input Parse has seen without a result (Parse itself resets after
// returning a head or an error).
func (p *Parser) Reset() {
	p.scanned, p.lineStart, p.start = 0, 0, 0
}

// Parse parses the request head at the start of b into r and returns the
// head's length, r.HeadLen.
//
// While b holds only the beginning of a head, Parse returns 0,
// ErrIncomplete: call again with more bytes appended, b holding the same
// bytes at its start as before (it may have moved, as when a buffer grows). Once b holds the head through its blank line, Parse
// parses it in one pass and returns its length, or 0 and an *Error if it is
// malformed, too large or asks for what the server cannot do. Either way
// the next call starts a new head. Empty lines before the request line are
// skipped and counted in the head's length (RFC 9112 section 2.2).
//
// r's byte slices point into b (see Request). r is fully overwritten on
// success and left undefined on error.
func (p *Parser) Parse(b []byte, r *Request) (int, error) {
	// int32 fields keep a connection's parser small; heads are far shorter.
	scanned, lineStart, start := int(p.scanned), int(p.lineStart), int(p.start)
	if scanned > len(b) {
		scanned, lineStart, start = 0, 0, 0 // not the input of the last call: start again
	}
	p.Reset() // a result or an error starts the next head afresh
	limit := p.maxHeaderBytes()
	window := b
	if len(window) > limit {
		window = window[:limit]
	}
	if scanned == 0 && len(b) > 0 && b[0] != '\r' && b[0] != '\n' {
		// The usual case, a whole head: its end in one search, and the
		// check that every LF follows a CR left to the parse, which looks
		// at every byte.
		if i := headEnd(window); i >= 0 {
			head := b[:i+4]
			if err := p.parseHead(head, 0, r); err != nil {
				if bareLF(head) {
					return 0, errBareLF // as the search line by line finds it
				}
				return 0, err
			}
			return len(head), nil
		}
	}
	for {
		i := bytes.IndexByte(window[scanned:], '\n')
		if i < 0 {
			break
		}
		lf := scanned + i
		line := lineStart
		if lf == line || b[lf-1] != '\r' {
			return 0, errBareLF
		}
		scanned, lineStart = lf+1, lf+1
		if lf-1 != line {
			continue
		}
		if line == start { // an empty line before the request line
			start = lf + 1
			continue
		}
		if err := p.parseHead(b[:lf+1], start, r); err != nil {
			return 0, err
		}
		return lf + 1, nil
	}
	if len(b) >= limit {
		return 0, errHeadTooBig
	}
	p.scanned, p.lineStart, p.start = int32(len(b)), int32(lineStart), int32(start)
	return 0, ErrIncomplete
}

// headEnd returns the index of the first CRLF CRLF in b, or -1: as
// bytes.Index, which stops at every CR of the head (and the bytes after
// each, to compare), takes nearly twice as long for short heads (14 ns
// against 8 for wrk's, 26 against 17 for curl's). It stops at each LF
// instead and looks at the bytes around it.
func headEnd(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		k := i + j
		if k+2 < len(b) && b[k+1] == '\r' && b[k+2] == '\n' && k > 0 && b[k-1] == '\r' {
			return k - 1
		}
		i = k + 1
	}
}

// bareLF reports whether an LF in b does not follow a CR.
func bareLF(b []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return false
		}
		if i+j == 0 || b[i+j-1] != '\r' {
			return true
		}
		i += j + 1
	}
}

// parseHead parses the head b[start:], which ends with the blank line and
// has no other, into r. An LF that does not follow a CR fails it.
func (p *Parser) parseHead(b []byte, start int, r *Request) error {
	// Request line: method SP request-target SP HTTP-version CRLF.
	i := start
	for tchar[b[i]] {
		i++
	}
	if i == start || b[i] != ' ' {
		if b[i] != ' ' && b[i] != '\r' {
			return errMethod
		}
		return errRequestLine
	}
	r.Method = b[start:i:i]
	i++
	ts := i
	i = skip(b, i, '!', &targetChar)
	if i == ts || b[i] != ' ' {
		if b[i] != ' ' && b[i] != '\r' {
			return errTarget
		}
		return errRequestLine
	}
	r.Target = b[ts:i:i]
	i++
	v := b[i:]
	if len(v) < 10 || string(v[:5]) != "HTTP/" || v[5]-'0' > 9 || v[6] != '.' || v[7]-'0' > 9 {
		return errVersion
	}
	if v[8] != '\r' || v[9] != '\n' {
		if v[8] == '\r' {
			return errBareCR
		}
		return errVersion
	}
	if v[5] != '1' {
		return errVersionNotSup
	}
	r.Major, r.Minor = 1, int(v[7]-'0')
	i += 10
	if err := checkTarget(r.Method, r.Target); err != nil {
		return err
	}
	http11 := r.Minor >= 1

	// Field lines, up to the blank line.
	r.Headers = r.Headers[:0]
	r.ContentLength = -1
	r.Chunked, r.Expect100, r.Upgrade = false, false, false
	r.Host, r.UpgradeTo = nil, nil
	var (
		hosts, lengths                int
		coded, chunkedLast, others    bool
		closeConn, keepAlive, upgrade bool
		expect100, expectOther        bool
	)
	maxHeaders := p.maxHeaders()
	for b[i] != '\r' {
		name, value, next, err := fieldLine(b, i)
		if err != nil {
			return err
		}
		i = next
		if len(r.Headers) == maxHeaders {
			return errTooManyHdrs
		}
		r.Headers = append(r.Headers, Header{name, value})

		switch len(name) {
		case 4:
			if foldLower(name, "host") {
				if !validHost(value) {
					return errBadHost
				}
				hosts++
				r.Host = value
			}
		case 6:
			if foldLower(name, "expect") {
				for rest := value; len(rest) > 0; {
					var e []byte
					e, rest = nextElement(rest)
					switch {
					case foldLower(e, "100-continue"):
						expect100 = true
					case len(e) > 0:
						expectOther = true
					}
				}
			}
		case 7:
			if foldLower(name, "upgrade") && r.UpgradeTo == nil {
				r.UpgradeTo = value
			}
		case 10:
			if foldLower(name, "connection") {
				for rest := value; len(rest) > 0; {
					var e []byte
					e, rest = nextElement(rest)
					switch {
					case foldLower(e, "close"):
						closeConn = true
					case foldLower(e, "keep-alive"):
						keepAlive = true
					case foldLower(e, "upgrade"):
						upgrade = true
					}
				}
			}
		case 14:
			if foldLower(name, "content-length") {
				if err := addContentLength(r, value, &lengths); err != nil {
					return err
				}
			}
		case 17:
			if foldLower(name, "transfer-encoding") {
				coded = true
				for rest := value; len(rest) > 0; {
					var e []byte
					e, rest = nextElement(rest)
					switch {
					case len(e) == 0:
						continue // an empty list element (RFC 9110 section 5.6.1)
					case foldLower(e, "chunked"):
						if r.Chunked {
							return errChunkedTwice
						}
						r.Chunked, chunkedLast = true, true
					default:
						others, chunkedLast = true, false
					}
				}
			}
		}
	}
	if b[i+1] != '\n' {
		return errBareCR
	}

	// Framing (RFC 9112 section 6): the checks against request smuggling.
	if coded {
		switch {
		case !http11:
			return errCodingHTTP10
		case lengths > 0:
			return errLengthAndCoding
		case !chunkedLast:
			return errNotChunked
		case others:
			return errCoding
		}
	}
	switch {
	case hosts > 1:
		return errManyHosts
	case hosts == 0 && http11:
		return errNoHost
	case expectOther && !expect100:
		// An expectation this server cannot meet; one listed beside
		// 100-continue is passed over, as net/http's server passes it.
		return errExpect
	}
	r.Expect100 = expect100 && http11
	r.KeepAlive = !closeConn && (http11 || keepAlive)
	r.Upgrade = upgrade && http11 && len(r.UpgradeTo) > 0
	r.HeadLen = len(b)
	return nil
}

// checkTarget checks that target has the form method calls for (RFC 9112
// section 3.2): authority-form for CONNECT, "*" only for OPTIONS, else
// origin-form or absolute-form.
func checkTarget(method, target []byte) error {
	if string(method) == "CONNECT" {
		// authority-form: uri-host ":" port.
		c := bytes.LastIndexByte(target, ':')
		if c <= 0 || c == len(target)-1 || bytes.ContainsAny(target, "/?#@") {
			return errTargetForm
		}
		for _, d := range target[c+1:] {
			if d-'0' > 9 {
				return errTargetForm
			}
		}
		return nil
	}
	switch {
	case target[0] == '/':
		return nil
	case len(target) == 1 && target[0] == '*':
		if string(method) != "OPTIONS" {
			return errTargetForm
		}
		return nil
	}
	// absolute-form: scheme ":" hier-part, scheme = ALPHA *( ALPHA / DIGIT
	// / "+" / "-" / "." ).
	if target[0]|0x20-'a' > 'z'-'a' {
		return errTarget
	}
	for i, c := range target[1:] {
		switch {
		case c == ':':
			if i+2 == len(target) {
				return errTarget
			}
			return nil
		case c|0x20-'a' <= 'z'-'a', c-'0' <= 9, c == '+', c == '-', c == '.':
		default:
			return errTarget
		}
	}
	return errTarget
}

// fieldLine parses the field line starting at b[i] (RFC 9112 section 5),
// which is not the blank line, and returns its name, its value without the
// whitespace around it, and where the next line starts. b ends with CRLF
// CRLF, which bounds every scan.
func fieldLine(b []byte, i int) (name, value []byte, next int, err error) {
	ns := i
	for tchar[b[i]] {
		i++
	}
	if b[i] != ':' || i == ns {
		switch {
		case i == ns && (b[i] == ' ' || b[i] == '\t'):
			return nil, nil, 0, errObsFold
		case i > ns && (b[i] == ' ' || b[i] == '\t'):
			return nil, nil, 0, errSpaceColon
		case b[i] == '\r' && b[i+1] != '\n':
			return nil, nil, 0, errBareCR
		}
		return nil, nil, 0, errFieldName
	}
	name = b[ns:i:i]
	i++
	for b[i] == ' ' || b[i] == '\t' {
		i++
	}
	vs := i
	i = skip(b, i, ' ', &valueChar)
	if b[i] != '\r' {
		return nil, nil, 0, errFieldValue
	}
	if b[i+1] != '\n' {
		return nil, nil, 0, errBareCR
	}
	ve := i
	for ve > vs && (b[ve-1] == ' ' || b[ve-1] == '\t') {
		ve--
	}
	return name, b[vs:ve:ve], i + 2, nil
}

// addContentLength takes one Content-Length field's value, a list of
// decimal lengths, into r.ContentLength. All the lengths of a request,
// across its fields, must be equal (RFC 9110 section 8.6); n counts them.
func addContentLength(r *Request, value []byte, n *int) error {
	if len(value) == 0 {
		return errContentLength
	}
	for rest := value; ; {
		var e []byte
		e, rest = nextElement(rest)
		if len(e) == 0 {
			return errContentLength
		}
		var v int64
		for _, c := range e {
			d := int64(c - '0')
			if c-'0' > 9 || v > (math.MaxInt64-d)/10 {
				return errContentLength
			}
			v = v*10 + d
		}
		if *n > 0 && v != r.ContentLength {
			return errContentLengths
		}
		*n++
		r.ContentLength = v
		if rest == nil {
			return nil
		}
	}
}

// nextElement splits the first element off a comma-separated list (RFC
// 9110 section 5.6.1), trimming the whitespace around it. rest is nil after
// the last element.
func nextElement(list []byte) (elem, rest []byte) {
	c := bytes.IndexByte(list, ',')
	if c < 0 {
		elem = list
	} else {
		elem, rest = list[:c], list[c+1:]
	}
	for len(elem) > 0 && (elem[0] == ' ' || elem[0] == '\t') {
		elem = elem[1:]
	}
	for len(elem) > 0 && (elem[len(elem)-1] == ' ' || elem[len(elem)-1] == '\t') {
		elem = elem[:len(elem)-1]
	}
	return elem, rest
}

// foldLower reports whether b equals lower, which holds only lowercase
// letters, digits and '-', without regard to case. b holds no control
// characters (it is a validated name or value), so c|0x20 can only equal a
// byte of lower if c is that byte or its uppercase letter.
func foldLower(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(b) {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// equalFold reports whether b and s are equal without regard to ASCII case.
func equalFold[T string | []byte](b T, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if x != y && (x|0x20 != y|0x20 || x|0x20-'a' > 'z'-'a') {
			return false
		}
	}
	return true
}

// SWAR (eight bytes in a word) masks.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// below reports whether a byte of x is below n (n <= 0x80).
func below(x, n uint64) uint64 { return (x - n*lsb) &^ x & msb }

// skip returns the index of the first byte from b[i] on that class does
// not mark. class marks no DEL and no byte below low (at most 0x80) but
// those it allows there, which are left to the byte loop (HTAB in a field
// value). b ends with CRLF, which stops it.
func skip(b []byte, i int, low uint64, class *[256]bool) int {
	// Eight bytes at a time while none is below low or DEL.
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if below(x, low)|below(x^0x7f*lsb, 1) != 0 {
			break
		}
	}
	for class[b[i]] {
		i++
	}
	return i
}

// tchar marks the bytes of a token (RFC 9110 section 5.6.2): methods,
// field names, transfer codings.
var tchar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// valueChar marks the bytes a field value may hold (RFC 9110 section
// 5.5): visible ASCII, SP, HTAB and obs-text (0x80-0xFF); no other control
// characters.
var valueChar = func() (t [256]bool) {
	for c := 0x20; c < 0x100; c++ {
		t[c] = c != 0x7f
	}
	t['\t'] = true
	return t
}()

// targetChar marks the bytes a request target may hold: visible ASCII and
// obs-text, as net/http and most servers accept; no space or control
// characters.
var targetChar = func() (t [256]bool) {
	for c := 0x21; c < 0x100; c++ {
		t[c] = c != 0x7f
	}
	return t
}()

// validHost reports whether a Host field's value is made of the bytes
// RFC 3986's uri-host and port allow (RFC 9112 §3.2: any other is
// answered 400): unreserved characters, sub-delims, percent-escapes, the
// brackets of an IP literal and the colon before the port. Empty is
// allowed: a request whose target has no authority sends an empty Host.
func validHost(v []byte) bool {
	for _, c := range v {
		if hostByte[c>>6]&(1<<(c&63)) == 0 {
			return false
		}
	}
	return true
}

// hostByte is the set validHost allows, a bit a byte.
var hostByte = func() (set [4]uint64) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=%:[]") {
		set[c>>6] |= 1 << (c & 63)
	}
	return set
}()
