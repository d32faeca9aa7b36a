package http1

import "math"

const (
	maxChunkSizeDigits    = 16       // hex digits of a chunk-size, leading zeros included
	maxChunkLineBytes     = 4 << 10  // a chunk-size line, its extensions included, up to its LF
	maxChunkExtExcess     = 16 << 10 // chunk extension bytes past their chunks' allowance (extAllowance)
	defaultMaxTrailerSize = 16 << 10
)

// extAllowance is the chunk extension bytes a chunk of size data bytes
// may carry at no cost: 16, and two a data byte, as Go's own chunked
// reader allows them. Extensions past their chunks' allowance may add up
// to maxChunkExtExcess in a body (a chunk's spare allowance pays off what
// went before), so that a body of small chunks with extensions is read,
// and one that is mostly extensions is refused; and a chunk-size line is
// at most maxChunkLineBytes, as Go's reader bounds a line, whatever size
// it claims.
func extAllowance(size uint64) int64 {
	return int64(min(size, 1<<60)*2 + 16)
}

// The states of a ChunkedDecoder, one per position in the grammar of RFC
// 9112 section 7.1:
//
//	+-> chunkSize --SP/HT--> chunkSizeWS --;--> chunkExt
//	|     |   \-------------------;----------> chunkExt
//	|     CR                                      |
//	|     v                                       CR
//	|   chunkSizeLF <-----------------------------+
//	|     | size > 0              | size == 0
//	|     v                       v
//	|   chunkData               trailerStart <------------------ trailerLF
//	|     v                       |    \                            ^
//	|   chunkDataCR               CR   trailerName --:--> trailerValue --CR
//	|     v                       v
//	+-- chunkDataLF             endLF --> chunkedDone
//
// Any byte the grammar does not allow moves to chunkedFailed.
const (
	chunkSize     uint8 = iota // chunk-size: hex digits
	chunkSizeWS                // BWS after the size, before ';'
	chunkExt                   // chunk-ext, up to CR
	chunkSizeLF                // the LF ending the size line
	chunkData                  // size bytes of data
	chunkDataCR                // the CRLF after the data
	chunkDataLF                // the LF of that CRLF
	trailerStart               // a trailer field line, or the final CRLF
	trailerName                // field-name, up to ':'
	trailerValue               // field-value, up to CR
	trailerLF                  // the LF ending a trailer field line
	endLF                      // the LF of the final CRLF
	chunkedDone                // the body is over
	chunkedFailed              // malformed; err says why
)

// ChunkedDecoder decodes a request body sent with the chunked transfer
// coding (RFC 9112 section 7.1). It is a state machine fed the
// connection's inbound bytes however they are split, even a byte at a
// time; it never needs to see a byte twice. The zero value is ready to use.
//
// Chunk extensions are checked for control characters and skipped; the
// trailer section is checked with the rules for header fields and
// discarded, which RFC 9110 section 6.5.1 allows, or kept for Trailer.
//
// A ChunkedDecoder is not safe for concurrent use; use one per body.
type ChunkedDecoder struct {
	// MaxTrailerBytes bounds the trailer section, with its CRLFs (default
	// 16 KiB). A longer one is malformed.
	MaxTrailerBytes int
	// KeepTrailer keeps the trailer section's field lines for Trailer.
	KeepTrailer bool

	state     uint8
	digits    int    // hex digits of the chunk-size read so far
	size      uint64 // chunk-size so far; then the data bytes still to come
	extExcess int64  // chunk extension bytes past the allowance of the chunks so far
	lineBytes int    // bytes of the chunk-size line so far
	trailer   int    // trailer section bytes so far
	err       *Error // why the decoder failed
	lines     []byte // the trailer section so far, if KeepTrailer
}

// Reset makes d ready for the next body, keeping MaxTrailerBytes and
// KeepTrailer.
func (d *ChunkedDecoder) Reset() {
	*d = ChunkedDecoder{MaxTrailerBytes: d.MaxTrailerBytes, KeepTrailer: d.KeepTrailer}
}

// Trailer returns the field lines of the trailer section ("Name:
// value\r\n" each, as the client wrote them), once Done and if KeepTrailer
// is set; nil if there were none.
func (d *ChunkedDecoder) Trailer() []byte {
	if d.state != chunkedDone || len(d.lines) <= 2 {
		return nil
	}
	return d.lines[:len(d.lines)-2] // the section's final CRLF
}

// Done reports whether d has decoded the whole body, through the last
// chunk and the trailer section.
func (d *ChunkedDecoder) Done() bool { return d.state == chunkedDone }

// Decode consumes the next bytes of the chunked body from b and returns n,
// how many it took, and data, the body bytes found among them: a view of
// b[:n], possibly empty. It stops after the first run of body bytes, so
// call it again with b[n:] while that is not empty and !d.Done().
//
// With n == len(b), d has taken all of b, and needs more bytes unless
// Done; nothing in b needs to be kept. Once Done, Decode takes nothing:
// what follows the body in b (the next request) starts at b[n].
// Malformed input returns an *Error with status 400, and so does every
// later call.
func (d *ChunkedDecoder) Decode(b []byte) (data []byte, n int, err error) {
	if d.state == chunkedFailed {
		return nil, 0, d.err
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if d.state == chunkSize || d.state == chunkSizeWS || d.state == chunkExt {
			if d.lineBytes++; d.lineBytes > maxChunkLineBytes {
				return d.fail(errChunkLine)
			}
		}
		switch d.state {
		case chunkSize:
			switch {
			case hexValue[c] < 16:
				if d.digits == maxChunkSizeDigits {
					return d.fail(errChunkTooBig)
				}
				d.digits++
				d.size = d.size<<4 | uint64(hexValue[c])
			case c == '\n':
				return d.fail(errBareLF)
			case d.digits == 0:
				return d.fail(errChunkSize)
			case c == '\r':
				d.state = chunkSizeLF
			case c == ';':
				d.state = chunkExt
			case c == ' ' || c == '\t':
				d.state = chunkSizeWS
			default:
				return d.fail(errChunkSize)
			}
		case chunkSizeWS:
			switch c {
			case ' ', '\t':
			case ';':
				d.state = chunkExt
			default:
				return d.fail(errChunkSize)
			}
		case chunkExt:
			switch {
			case c == '\r':
				d.state = chunkSizeLF
			case c == '\n':
				return d.fail(errBareLF)
			case !valueChar[c]:
				return d.fail(errChunkExt)
			}
			if d.extExcess++; d.extExcess-extAllowance(d.size) > maxChunkExtExcess {
				return d.fail(errChunkExtBig)
			}
		case chunkSizeLF:
			if c != '\n' {
				return d.fail(errBareCR)
			}
			d.extExcess = max(0, d.extExcess-extAllowance(d.size))
			d.lineBytes = 0
			switch {
			case d.size > math.MaxInt64:
				return d.fail(errChunkTooBig)
			case d.size == 0:
				d.state = trailerStart
			default:
				d.state = chunkData
			}
		case chunkData:
			k := uint64(len(b) - i)
			if k > d.size {
				k = d.size
			}
			d.size -= k
			if d.size == 0 {
				d.state = chunkDataCR
			}
			end := i + int(k)
			return b[i:end:end], end, nil
		case chunkDataCR:
			if c != '\r' {
				return d.fail(errChunkData)
			}
			d.state = chunkDataLF
		case chunkDataLF:
			if c != '\n' {
				return d.fail(errChunkData)
			}
			d.state, d.digits = chunkSize, 0
		default:
			if d.state == chunkedDone {
				return nil, i, nil
			}
			if err := d.trailerByte(c); err != nil {
				return d.fail(err)
			}
			if d.state == chunkedDone {
				return nil, i + 1, nil
			}
		}
	}
	return nil, len(b), nil
}

// trailerByte takes the next byte of the trailer section, whose field lines
// follow the rules of Parser for header fields.
func (d *ChunkedDecoder) trailerByte(c byte) *Error {
	limit := d.MaxTrailerBytes
	if limit <= 0 {
		limit = defaultMaxTrailerSize
	}
	if d.trailer++; d.trailer > limit {
		return errTrailerBig
	}
	if d.KeepTrailer {
		d.lines = append(d.lines, c)
	}
	switch d.state {
	case trailerStart:
		switch {
		case c == '\r':
			d.state = endLF
		case c == ' ' || c == '\t':
			return errObsFold
		case c == '\n':
			return errBareLF
		case !tchar[c]:
			return errFieldName
		default:
			d.state = trailerName
		}
	case trailerName:
		switch {
		case c == ':':
			d.state = trailerValue
		case c == ' ' || c == '\t':
			return errSpaceColon
		case !tchar[c]:
			return errFieldName
		}
	case trailerValue:
		switch {
		case c == '\r':
			d.state = trailerLF
		case c == '\n':
			return errBareLF
		case !valueChar[c]:
			return errFieldValue
		}
	case trailerLF, endLF:
		if c != '\n' {
			return errBareCR
		}
		if d.state == endLF {
			d.state = chunkedDone
		} else {
			d.state = trailerStart
		}
	}
	return nil
}

func (d *ChunkedDecoder) fail(err *Error) ([]byte, int, error) {
	d.state, d.err = chunkedFailed, err
	return nil, 0, err
}

// hexValue maps a hex digit to its value and every other byte to 0xff.
var hexValue = func() (t [256]uint8) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c], t[c-'a'+'A'] = uint8(c-'a'+10), uint8(c-'a'+10)
	}
	return t
}()
