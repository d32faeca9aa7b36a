package resp

import (
	"bytes"
	"math"
)

// Redis's defaults and its limits for clients that have not authenticated.
const (
	defaultMaxBulk   = 512 << 20     // proto-max-bulk-len
	defaultMaxArgs   = math.MaxInt32 // Redis 7.0's multibulk length limit, INT_MAX
	defaultMaxInline = 64 << 10      // PROTO_INLINE_MAX_SIZE

	unauthMaxArgs = 10
	unauthMaxBulk = 16384
)

// Limits bound what a Parser accepts. Zero (or negative) fields take Redis's
// defaults. A Limits is plain data.
type Limits struct {
	// MaxBulk is the longest bulk string a request may carry
	// (default 512 MiB, Redis's proto-max-bulk-len).
	MaxBulk int
	// MaxArgs is the most elements a request array may have (default
	// and at most math.MaxInt32, Redis 7.0's limit). A count is not memory:
	// the Parser keeps 8 bytes for each argument as it arrives, and each
	// takes at least 6 bytes of input ("$0\r\n\r\n"), so what a request
	// costs is bounded by what the caller buffers of it, as Redis's
	// client-query-buffer-limit bounds it.
	MaxArgs int
	// MaxInline is the longest inline request line, and the longest "*<n>"
	// or "$<n>" header line, not counting the line's end (default 64 KiB,
	// Redis's PROTO_INLINE_MAX_SIZE).
	MaxInline int
}

func (l *Limits) maxBulk() int64 {
	if l.MaxBulk > 0 {
		return int64(l.MaxBulk)
	}
	return defaultMaxBulk
}

func (l *Limits) maxArgs() int64 {
	if l.MaxArgs > 0 {
		return int64(min(l.MaxArgs, math.MaxInt32))
	}
	return defaultMaxArgs
}

func (l *Limits) maxInline() int {
	if l.MaxInline > 0 {
		return l.MaxInline
	}
	return defaultMaxInline
}

// Parser parses client requests. The zero value is ready to use and applies
// Redis's default limits.
//
// A Parser is not safe for concurrent use: it reuses one slice of arguments
// from call to call. Use one Parser per connection.
type Parser struct {
	Limits
	// Unauthenticated applies Redis's limits for clients that have not
	// authenticated yet: at most 10 arguments and bulk strings of at most
	// 16384 bytes, refused with "unauthenticated multibulk length" and
	// "unauthenticated bulk length". Inline requests are not limited further,
	// as in Redis.
	Unauthenticated bool

	args    [][]byte // reused for every request
	used    int      // the most of args returned since Release
	scratch []byte   // inline arguments with quotes or escapes, decoded

	// part is where parsing stopped in an array request that has not all
	// arrived.
	part partial
	// spans holds the start and end in b of each argument parsed so far
	// of a request of more than maxKeptArgs arguments: offsets, not
	// slices, so that the collector has nothing to follow while a request
	// of a million arguments arrives, and nothing to copy when it grows.
	spans []uint32
}

// partial is the state of an array request that has only partly arrived,
// kept so that a request of many arguments, arriving over many reads, is
// parsed once rather than from its start at every read.
type partial struct {
	at    *byte // &b[0] of the call that stopped; nil when nothing is kept
	count int64 // the request's arguments
	pos   int   // where the next argument's header begins in b
	n     int   // arguments parsed: in args[:n], or in spans if inSpans
	// inSpans reports arguments kept in spans rather than args.
	inSpans bool
}

// Reset forgets where parsing stopped in a request that has not all
// arrived (see Command). Call it before giving Command bytes that do not
// begin with that request, wherever they are.
func (p *Parser) Reset() { p.part = partial{} }

// maxKeptArgs is the longest slice of arguments Release keeps for the
// next request. A request of more arguments is parsed into spans.
const maxKeptArgs = 1024

// Release lets go of the arguments Command returned: it clears the
// Parser's pointers into the caller's buffer, and drops a slice that a
// request of many arguments made long, so that a connection waiting for
// its next request keeps neither its last request's bytes nor, after a
// million-argument request, megabytes of slice. What is parsed of a
// request that has not all arrived is kept. Call it once the arguments are
// no longer used, as when a connection's requests so far are served.
func (p *Parser) Release() {
	keep := 0 // the arguments of a request that has not all arrived
	if p.part.at != nil && !p.part.inSpans {
		keep = p.part.n
	}
	if cap(p.args) > maxKeptArgs && keep == 0 {
		p.args = nil
	} else {
		clear(p.args[keep:max(keep, p.used)])
	}
	p.used = keep
	if cap(p.spans) > 2*maxKeptArgs && !p.part.inSpans {
		p.spans = nil
	}
	if cap(p.scratch) > maxKeptArgs*16 {
		p.scratch = nil
	}
}

// Command parses the request at the start of b and returns its arguments
// and n, the number of bytes it took.
//
// A request is either an array of bulk strings ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"),
// as clients send, or an inline command: a line of words separated by
// blanks, as typed into telnet, ended by "\r\n" or "\n". The two bytes after
// a bulk string's data, "\r\n", are skipped without being read, as Redis
// skips them, and so is the byte after the '\r' that ends a "*<n>" or
// "$<n>" line, a '\n' in a well-formed request. Inline words may be quoted
// as Redis's sdssplitargs quotes them: "..." with the escapes \n \r \t \b
// \a \\ \" and \xHH, or '...' with \'; a closing quote must be followed by
// a blank or the end of the line.
//
// A bulk string's data may hold any byte, NUL included. A NUL in a line
// (an inline request, a "*<n>" or "$<n>" header) before its end hides the
// end, as the NUL ends the C string in which Redis's strchr looks for it:
// the request is incomplete until more than MaxInline bytes from the
// line's start are buffered, and then too big, as in Redis, which answers
// nothing before that.
//
// A malformed line is reported once its end has arrived, as Redis
// reports it: for a header line its '\r' and the byte after it, even when
// the line's first byte already shows it is not "$<n>". Until then the
// request is incomplete, and too big once past MaxInline, so that the
// error a client gets, and when, are Redis's.
//
// An empty request (an empty or blank inline line, "*0\r\n", "*-1\r\n")
// returns no arguments and n > 0: skip its n bytes, as Redis does. Input
// holding only the beginning of a request, however it is split, returns
// nil, 0, ErrIncomplete. Malformed input returns nil, 0 and a
// *ProtocolError with Redis's message.
//
// The arguments point into b, except inline arguments with quotes or
// escapes, which point into the Parser's own buffer; they are not
// overwritten until the next call to Command, as long as b is not modified.
//
// When an array request has not all arrived, the Parser remembers how far
// into it it got, and the next call goes on from there: a request of a
// million arguments arriving over many reads is parsed once. For that the
// next call's b must begin with the same request, with more of it after
// the bytes it had: the same buffer grown, or another holding the same
// bytes, as when a buffer grows by moving. (A request of 1,024 arguments
// or fewer, or one in a buffer of 4 GiB or more, is kept as slices of b and
// parsed from its start when b has moved.) Call Reset before giving
// Command bytes that do not begin with that request, wherever they are:
// the Parser checks only that the array's header is the same. As in
// Redis, each bulk string is checked against the limits when its header
// arrives; limits changed while a request arrives apply to the bulk
// strings after.
func (p *Parser) Command(b []byte) (args [][]byte, n int, err error) {
	if len(b) == 0 {
		return nil, 0, ErrIncomplete
	}
	part := p.part
	if part.at != nil {
		p.part = partial{}
	}
	if b[0] == '*' {
		args, n, err = p.multibulk(b, part)
	} else {
		args, n, err = p.inline(b, p.args[:0])
	}
	if cap(args) > cap(p.args) {
		p.args = args[:0]
	}
	p.used = max(p.used, len(args))
	if err != nil {
		return nil, 0, err
	}
	return args, n, nil
}

// multibulk parses an array of bulk strings, as Redis's
// processMultibulkBuffer does, into p.args, or, for more than maxKeptArgs
// of them, into p.spans and then p.args once all have arrived. It goes on
// from part when part is where the last call stopped in this array. When
// the array has not all arrived it returns ErrIncomplete and keeps in
// p.part how far it got. It returns the slice of arguments even on
// failure, so that the Parser keeps any capacity it grew.
func (p *Parser) multibulk(b []byte, part partial) ([][]byte, int, error) {
	args := p.args[:0]
	maxInline := p.maxInline()
	count, pos, err := header(b, 0, maxInline, errBigMultibulkCount, errMultibulkLength)
	if err != nil {
		return args, 0, err
	}
	if count > p.maxArgs() {
		return args, 0, errMultibulkLength
	}
	if p.Unauthenticated && count > unauthMaxArgs {
		return args, 0, errUnauthMultibulk
	}
	// Offsets fit in spans as long as b is under 4 GiB.
	inSpans := count > maxKeptArgs && uint64(len(b)) <= math.MaxUint32
	switch {
	case part.at != nil && (part.at == &b[0] || inSpans) && part.count == count && part.inSpans == inSpans && pos <= part.pos && part.pos <= len(b):
		// Offsets hold wherever b has moved to; slices only where it was.
		pos = part.pos
		if !inSpans {
			args = p.args[:part.n]
		}
	case inSpans:
		p.spans = p.spans[:0]
	}
	args, pos, err = p.bulks(b, args, pos, count, inSpans)
	if err != nil {
		if err == ErrIncomplete && pos > 0 {
			n := len(args)
			if inSpans {
				n = len(p.spans) / 2
			}
			p.part = partial{at: &b[0], count: count, pos: pos, n: n, inSpans: inSpans}
		}
		return args, pos, err
	}
	if inSpans {
		if int64(cap(args)) < count {
			args = make([][]byte, 0, count)
		}
		for i := 0; i < len(p.spans); i += 2 {
			start, end := p.spans[i], p.spans[i+1]
			args = append(args, b[start:end:end])
		}
	}
	return args, pos, nil
}

// bulks parses the bulk strings of an array of count from b[pos] on,
// appending them to args, or their offsets to p.spans if inSpans, until
// the array has all of its arguments. When it has not all arrived it
// returns ErrIncomplete with where the next argument begins.
func (p *Parser) bulks(b []byte, args [][]byte, pos int, count int64, inSpans bool) ([][]byte, int, error) {
	maxInline := p.maxInline()
	maxBulk, bulkLimit := p.maxBulk(), p.maxBulk()
	if p.Unauthenticated {
		bulkLimit = min(maxBulk, unauthMaxBulk)
	}
	have := int64(len(args))
	if inSpans {
		have = int64(len(p.spans) / 2)
	}
	for range count - have { // nothing when count <= 0: an empty request
		if pos == len(b) {
			return args, pos, ErrIncomplete
		}
		if b[pos] != '$' {
			// Redis reads the line before it looks at its first byte.
			if _, err := headerEnd(b, pos, maxInline, errBigBulkCount); err != nil {
				if err == ErrIncomplete {
					return args, pos, err
				}
				return args, 0, err
			}
			return args, 0, errExpectedBulk(b[pos])
		}
		// The usual header, a short "$<n>\r\n", in one pass (header by
		// hand, as it does not inline); anything else as Redis reads it.
		var size int64
		i := pos + 1
		for ; i < len(b) && i-pos < 18; i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			size = size*10 + int64(c)
		}
		var start int
		var err error
		if i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' && i > pos+1 &&
			(b[pos+1] != '0' || i == pos+2) && i-pos <= maxInline {
			start = i + 2
		} else if size, start, err = headerSlow(b, pos, maxInline, errBigBulkCount, errBulkLength); err != nil {
			if err == ErrIncomplete {
				return args, pos, err
			}
			return args, 0, err
		}
		if size < 0 || size > bulkLimit {
			if size < 0 || size > maxBulk {
				return args, 0, errBulkLength
			}
			return args, 0, errUnauthBulk
		}
		if size > int64(len(b)-start)-2 {
			return args, pos, ErrIncomplete
		}
		// The two bytes after the data are skipped, not checked, as
		// Redis's processMultibulkBuffer skips them.
		end := start + int(size)
		if inSpans {
			p.spans = append(p.spans, uint32(start), uint32(end))
		} else {
			args = append(args, b[start:end:end])
		}
		pos = end + 2
	}
	return args, pos, nil
}

// header parses the header line ("*<n>" or "$<n>") that starts at b[pos]
// and returns n and the position after the line's "\r\n". A line longer
// than max bytes is tooBig, whether or not its end has arrived, which
// bounds what a peer can make a server buffer; n not an integer as Redis
// reads one (see parseDecimal) is invalid.
func header(b []byte, pos, max int, tooBig, invalid error) (int64, int, error) {
	// The usual case, a short line of digits with its "\r\n", in one pass.
	if i := pos + 1; i < len(b) && b[i]-'1' <= 8 {
		v := int64(b[i] - '0')
		for i++; i < len(b) && i-pos <= 18; i++ {
			c := b[i] - '0'
			if c > 9 {
				if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' && i-pos <= max {
					return v, i + 2, nil
				}
				break
			}
			v = v*10 + int64(c)
		}
	}
	return headerSlow(b, pos, max, tooBig, invalid)
}

// headerSlow is header for any line, with Redis's errors. The line ends at
// its first '\r', whatever byte follows (a '\n' in a well-formed request),
// as in Redis's processMultibulkBuffer.
func headerSlow(b []byte, pos, max int, tooBig, invalid error) (int64, int, error) {
	cr, err := headerEnd(b, pos, max, tooBig)
	if err != nil {
		return 0, 0, err
	}
	n, ok := parseDecimal(b[pos+1 : cr])
	if !ok {
		return 0, 0, invalid
	}
	return n, cr + 2, nil
}

// headerEnd returns the index of the '\r' ending the header line that
// starts at b[pos], if the line is at most max bytes long. The byte after
// the '\r' is skipped unread, as Redis skips it, but it must have arrived,
// as Redis waits for it before it judges the line. A NUL before the '\r'
// hides it, as the NUL ends the C string in which Redis's strchr looks for
// it: such a line never ends, and is tooBig once more than max bytes from
// its start are buffered, whatever they are.
func headerEnd(b []byte, pos, max int, tooBig error) (int, error) {
	line := b[pos:]
	if len(line) > max {
		line = line[:max+1] // the line and its '\r', at most
	}
	if i := bytes.IndexByte(line, '\r'); i >= 0 && bytes.IndexByte(line[:i], 0) < 0 {
		if pos+i+1 == len(b) {
			return 0, ErrIncomplete
		}
		return pos + i, nil
	}
	if len(b)-pos > max {
		return 0, tooBig
	}
	return 0, ErrIncomplete
}

// parseDecimal parses s as Redis's string2ll does: an optional '-', then
// digits without leading zeros ("0" alone excepted), fitting in an int64.
func parseDecimal(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
		if len(s) == 0 {
			return 0, false
		}
	}
	if s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		d := uint64(c - '0')
		if d > 9 || v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// inline parses an inline request, as Redis's processInlineBuffer does,
// appending its arguments to args.
func (p *Parser) inline(b []byte, args [][]byte) ([][]byte, int, error) {
	max := p.maxInline()
	window := b
	if len(window)-2 > max {
		window = window[:max+2] // the line and its "\r\n", at most
	}
	nl := bytes.IndexByte(window, '\n')
	end := nl
	if nl < 0 {
		end = len(window)
	}
	if bytes.IndexByte(window[:end], 0) >= 0 {
		// Redis looks for the '\n' with strchr, which stops at the NUL:
		// the line never ends, and is too big once more than max bytes
		// are buffered, whatever they are.
		if len(b) > max {
			return args, 0, errBigInline
		}
		return args, 0, ErrIncomplete
	}
	if nl < 0 {
		l := len(window)
		if l > 0 && window[l-1] == '\r' {
			l-- // may be the start of "\r\n"
		}
		if l > max {
			return args, 0, errBigInline
		}
		return args, 0, ErrIncomplete
	}
	line := b[:nl]
	if nl > 0 && line[nl-1] == '\r' {
		line = line[:nl-1]
	}
	if len(line) > max {
		return args, 0, errBigInline
	}
	args, err := p.splitArgs(line, args)
	if err != nil {
		return args, 0, err
	}
	return args, nl + 1, nil
}

// SplitArgs splits line into words as Redis's sdssplitargs does, as it
// splits inline commands and the lines of redis.conf: words separated by
// blanks, quoted as Command's inline commands are. A quote not closed, or
// a closing quote followed by something other than a blank, is an error.
// A NUL byte ends the line, as it ends the C string sdssplitargs reads.
func SplitArgs(line []byte) ([][]byte, error) {
	if i := bytes.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	var p Parser
	return p.splitArgs(line, nil)
}

// splitArgs splits an inline request line into arguments as Redis's
// sdssplitargs does, appending them to args. Words without quotes are
// sliced from line; words with quotes are decoded into p.scratch.
func (p *Parser) splitArgs(line []byte, args [][]byte) ([][]byte, error) {
	// Decoding never lengthens a word, so scratch never grows (and moves)
	// while arguments point into it.
	if cap(p.scratch) < len(line) {
		p.scratch = make([]byte, 0, len(line))
	}
	scratch := p.scratch[:0]
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args, nil
		}
		start := i
		for i < len(line) && !wordEnd[line[i]] {
			i++
		}
		if i == len(line) || (line[i] != '"' && line[i] != '\'') {
			args = append(args, line[start:i:i])
			continue
		}
		from := len(scratch)
		scratch = append(scratch, line[start:i]...)
		var ok bool
		scratch, i, ok = appendQuoted(scratch, line, i)
		if !ok {
			return args, errUnbalancedQuotes
		}
		args = append(args, scratch[from:len(scratch):len(scratch)])
	}
}

// appendQuoted decodes the quoted part of a word, whose opening quote is
// line[i], appending it to dst. It returns the index just past the closing
// quote, or false if the quote is not closed or the closing quote is not
// followed by a blank or the end of the line.
func appendQuoted(dst, line []byte, i int) ([]byte, int, bool) {
	quote := line[i]
	for i++; i < len(line); i++ {
		c := line[i]
		switch {
		case c == quote:
			i++
			return dst, i, i == len(line) || isSpace(line[i])
		case c != '\\' || i+1 == len(line):
			dst = append(dst, c)
		case quote == '\'':
			if line[i+1] == '\'' {
				c = '\''
				i++
			}
			dst = append(dst, c)
		case line[i+1] == 'x' && i+3 < len(line) && isHex(line[i+2]) && isHex(line[i+3]):
			dst = append(dst, unhex(line[i+2])<<4|unhex(line[i+3]))
			i += 3
		default:
			i++
			switch c = line[i]; c {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'a':
				c = '\a'
			}
			dst = append(dst, c)
		}
	}
	return dst, i, false
}

// wordEnd marks the bytes that end an unquoted inline word (sdssplitargs
// ends a word at ' ', '\n', '\r', '\t'), or open a quote within it.
var wordEnd = [256]bool{' ': true, '\n': true, '\r': true, '\t': true, '"': true, '\'': true}

// isSpace reports whether C's isspace does: ' ', '\t', '\n', '\v', '\f', '\r'.
// Blanks between words are these.
func isSpace(c byte) bool { return c == ' ' || c-'\t' <= '\r'-'\t' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
