package resp

import "strconv"

// Writer appends replies to Buf in the protocol its client speaks: RESP2, or
// RESP3 once the client has sent HELLO 3. Types RESP2 lacks are written as
// Redis writes them to a RESP2 client: a map as an array of keys and values,
// a double as a bulk string, a boolean as 1 or 0, and so on. The zero value
// writes RESP2.
//
// A Writer allocates only to grow Buf. It is not safe for concurrent use.
type Writer struct {
	// Buf holds the encoded replies. The caller writes them out and calls
	// Reset, which keeps Buf's memory for the next replies.
	Buf []byte
	// Proto is the protocol version: 3 for RESP3; 2, or 0, for RESP2.
	Proto int
	// OnError, if set, is called with each error reply's message as Error
	// or BulkError appends it, in either protocol: a server counts its
	// errors with it.
	OnError func(msg string)
}

func (w *Writer) resp3() bool { return w.Proto >= 3 }

// Reset empties Buf, keeping its memory. Bytes taken from Buf before are
// overwritten by the next replies.
func (w *Writer) Reset() { w.Buf = w.Buf[:0] }

// OK appends the simple string "OK".
func (w *Writer) OK() { w.Buf = append(w.Buf, "+OK\r\n"...) }

// Simple appends the simple string s ("+s"), with any '\r' or '\n' in s
// replaced by a space, as the protocol cannot carry them.
func (w *Writer) Simple(s string) {
	w.Buf = append(w.Buf, '+')
	w.Buf = appendLine(w.Buf, s)
}

// Error appends the error reply msg ("-msg"). Msg starts with its error
// code, as in "ERR syntax error" or "WRONGTYPE Operation against a key
// holding the wrong kind of value". Any '\r' or '\n' in msg is replaced by a
// space, as Redis does.
func (w *Writer) Error(msg string) {
	w.Buf = append(w.Buf, '-')
	w.Buf = appendLine(w.Buf, msg)
	if w.OnError != nil {
		w.OnError(msg)
	}
}

// appendLine appends s and "\r\n" to dst, with '\r' and '\n' in s made
// spaces.
func appendLine[S ~string | ~[]byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			dst = append(dst, s[:i]...)
			for ; i < len(s); i++ {
				c := s[i]
				if c == '\r' || c == '\n' {
					c = ' '
				}
				dst = append(dst, c)
			}
			return append(dst, '\r', '\n')
		}
	}
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// Int appends the integer n (":n").
func (w *Writer) Int(n int64) { w.header(':', n) }

// Bulk appends b as a bulk string ("$len", b).
func (w *Writer) Bulk(b []byte) {
	w.header('$', int64(len(b)))
	w.Buf = append(w.Buf, b...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkString appends s as a bulk string ("$len", s).
func (w *Writer) BulkString(s string) {
	w.header('$', int64(len(s)))
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkInt appends the decimal text of n as a bulk string, as Redis replies
// to INCRBYFLOAT or with a hash field holding a number.
func (w *Writer) BulkInt(n int64) {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	w.header('$', int64(len(d)))
	w.Buf = append(w.Buf, d...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// Null appends a null: RESP3's "_", or RESP2's null bulk string "$-1".
func (w *Writer) Null() {
	if w.resp3() {
		w.Buf = append(w.Buf, "_\r\n"...)
	} else {
		w.Buf = append(w.Buf, "$-1\r\n"...)
	}
}

// NullArray appends a null where an array was due, as BLPOP times out:
// RESP3's "_", or RESP2's null array "*-1".
func (w *Writer) NullArray() {
	if w.resp3() {
		w.Buf = append(w.Buf, "_\r\n"...)
	} else {
		w.Buf = append(w.Buf, "*-1\r\n"...)
	}
}

// Array appends the header of an array of n elements ("*n"); the caller
// appends the n elements next.
func (w *Writer) Array(n int) { w.header('*', int64(n)) }

// Map appends the header of a map of n key-value pairs: RESP3's "%n", or in
// RESP2 an array of 2n elements. The caller appends each key, then its
// value.
func (w *Writer) Map(n int) {
	if w.resp3() {
		w.header('%', int64(n))
	} else {
		w.header('*', 2*int64(n))
	}
}

// Set appends the header of a set of n elements: RESP3's "~n", or in RESP2
// an array. The caller appends the n elements next.
func (w *Writer) Set(n int) {
	if w.resp3() {
		w.header('~', int64(n))
	} else {
		w.header('*', int64(n))
	}
}

// Push appends the header of an out-of-band push of n elements, as pub/sub
// messages are sent: RESP3's ">n", or in RESP2 an array. The caller appends
// the n elements next.
func (w *Writer) Push(n int) {
	if w.resp3() {
		w.header('>', int64(n))
	} else {
		w.header('*', int64(n))
	}
}

// Attribute appends the header of RESP3 attributes, n pairs of fields and
// values that the caller appends next, before the reply they describe. In
// RESP2, which has no attributes, it appends nothing: the caller leaves
// the pairs out.
func (w *Writer) Attribute(n int) {
	if w.resp3() {
		w.header('|', int64(n))
	}
}

// Double appends f: in RESP3 a double (",text"), in RESP2 a bulk string of
// the text. The text is laid out as Redis 7.2's: the shortest decimal that
// reads back as f ("0.1", "3.14", "1e+21", "1.5e-7"), integers up to 2^62
// in full ("1000000"), and "inf", "-inf", "nan". Redis's digits are one
// longer for about one double in 700 (see appendDouble); Redis 7.0 writes
// every double with "%.17g".
func (w *Writer) Double(f float64) {
	var text [32]byte
	w.double(appendDouble(text[:0], f))
}

// double appends the text of a double, in RESP3 with '\r' and '\n' made
// spaces, as a line cannot hold them.
func (w *Writer) double(text []byte) {
	if w.resp3() {
		w.Buf = append(w.Buf, ',')
		w.Buf = appendLine(w.Buf, text)
	} else {
		w.Bulk(text)
	}
}

// Bool appends b: RESP3's "#t" or "#f", or in RESP2 the integer 1 or 0.
func (w *Writer) Bool(b bool) {
	switch {
	case w.resp3() && b:
		w.Buf = append(w.Buf, "#t\r\n"...)
	case w.resp3():
		w.Buf = append(w.Buf, "#f\r\n"...)
	case b:
		w.Buf = append(w.Buf, ":1\r\n"...)
	default:
		w.Buf = append(w.Buf, ":0\r\n"...)
	}
}

// Verbatim appends b as a verbatim string of the given format: RESP3's
// "=len" with "format:" before b, or in RESP2 a bulk string of b. Format
// is three bytes, such as "txt" or "mkd"; Verbatim panics otherwise.
func (w *Writer) Verbatim(format string, b []byte) {
	if len(format) != 3 {
		panic("resp: verbatim format " + strconv.Quote(format) + " is not three bytes")
	}
	if !w.resp3() {
		w.Bulk(b)
		return
	}
	w.header('=', int64(len(b))+4)
	w.Buf = append(w.Buf, format...)
	w.Buf = append(w.Buf, ':')
	w.Buf = append(w.Buf, b...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BigNumber appends s, the decimal digits of an integer with an optional
// sign: RESP3's "(s", or in RESP2 a bulk string.
func (w *Writer) BigNumber(s string) {
	if w.resp3() {
		w.Buf = append(w.Buf, '(')
		w.Buf = appendLine(w.Buf, s)
	} else {
		w.BulkString(s)
	}
}

// BulkError appends the error msg, which starts with its error code: in
// RESP3 a bulk error ("!len"), which may hold any bytes; in RESP2 an error
// reply, as Error writes it.
func (w *Writer) BulkError(msg string) {
	if !w.resp3() {
		w.Error(msg)
		return
	}
	w.header('!', int64(len(msg)))
	w.Buf = append(w.Buf, msg...)
	w.Buf = append(w.Buf, '\r', '\n')
	if w.OnError != nil {
		w.OnError(msg)
	}
}

// Command appends a request of the given arguments, an array of bulk
// strings, as a client sends it and as an append-only file records it. The
// protocol version does not matter.
func (w *Writer) Command(args ...[]byte) { w.Buf = AppendCommand(w.Buf, args...) }

// AppendCommand appends to dst a request of the given arguments, an array
// of bulk strings, and returns the extended buffer.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	dst = appendHeader(dst, '*', int64(len(args)))
	for _, a := range args {
		dst = appendHeader(dst, '$', int64(len(a)))
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// Value appends v as it was parsed, with its attributes, so that Parse
// reads back the same value. A RESP2 null ("$-1", "*-1") stays one in
// RESP3.
//
// In RESP2, types RESP2 lacks are written as the methods for them write
// them, attributes are left out, and a BulkError becomes an error reply. A
// Double is written from Str, its text, unless Str is empty. A Map whose
// Elems are odd in number gets a null for its last value; a Value of Type
// Attribute is written as a Map, and one of no known Type as a null. '\r'
// and '\n' in the text of a SimpleString, Error, BigNumber or (in RESP3)
// Double become spaces; a Verbatim format is cut or padded with spaces to
// three bytes.
func (w *Writer) Value(v Value) {
	if len(v.Attrs) > 0 && w.resp3() {
		w.header('|', int64(len(v.Attrs)+1)/2)
		w.pairs(v.Attrs)
	}
	switch v.Type {
	case SimpleString:
		w.Buf = append(w.Buf, '+')
		w.Buf = appendLine(w.Buf, v.Str)
	case Error:
		w.Buf = append(w.Buf, '-')
		w.Buf = appendLine(w.Buf, v.Str)
	case Integer:
		w.Int(v.Int)
	case BulkString:
		if v.IsNull {
			w.Buf = append(w.Buf, "$-1\r\n"...)
		} else {
			w.Bulk(v.Str)
		}
	case BulkError:
		if w.resp3() {
			w.header('!', int64(len(v.Str)))
			w.Buf = append(w.Buf, v.Str...)
			w.Buf = append(w.Buf, '\r', '\n')
		} else {
			w.Buf = append(w.Buf, '-')
			w.Buf = appendLine(w.Buf, v.Str)
		}
	case Verbatim:
		if w.resp3() {
			w.header('=', int64(len(v.Str))+4)
			w.Buf = appendFormat(w.Buf, v.Format)
			w.Buf = append(w.Buf, ':')
			w.Buf = append(w.Buf, v.Str...)
			w.Buf = append(w.Buf, '\r', '\n')
		} else {
			w.Bulk(v.Str)
		}
	case Double:
		if len(v.Str) > 0 {
			w.double(v.Str)
		} else {
			w.Double(v.Float)
		}
	case BigNumber:
		if w.resp3() {
			w.Buf = append(w.Buf, '(')
			w.Buf = appendLine(w.Buf, v.Str)
		} else {
			w.Bulk(v.Str)
		}
	case Boolean:
		w.Bool(v.Bool)
	case Array:
		if v.IsNull {
			w.Buf = append(w.Buf, "*-1\r\n"...)
			return
		}
		w.Array(len(v.Elems))
		w.values(v.Elems)
	case Set:
		w.Set(len(v.Elems))
		w.values(v.Elems)
	case Push:
		w.Push(len(v.Elems))
		w.values(v.Elems)
	case Map, Attribute:
		w.Map((len(v.Elems) + 1) / 2)
		w.pairs(v.Elems)
	default: // Null, and no type at all
		w.Null()
	}
}

// values appends vs.
func (w *Writer) values(vs []Value) {
	for _, v := range vs {
		w.Value(v)
	}
}

// pairs appends the keys and values vs; if they are odd in number, a null
// completes the last pair.
func (w *Writer) pairs(vs []Value) {
	w.values(vs)
	if len(vs)%2 == 1 {
		w.Null()
	}
}

// header appends a type byte, n and "\r\n".
func (w *Writer) header(c byte, n int64) { w.Buf = appendHeader(w.Buf, c, n) }

func appendHeader(dst []byte, c byte, n int64) []byte {
	dst = append(dst, c)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}

// appendFormat appends a verbatim string's format, cut or padded with
// spaces to three bytes.
func appendFormat(dst []byte, format string) []byte {
	if len(format) >= 3 {
		return append(dst, format[:3]...)
	}
	dst = append(dst, format...)
	return append(dst, "   "[len(format):]...)
}
