package ws

// utf8State validates UTF-8 a byte at a time, across the fragments of a
// message split anywhere, and fails at the first byte that cannot continue
// a valid sequence: overlong forms, surrogates and code points past
// U+10FFFF included. The zero value is the state between characters.
type utf8State struct {
	need uint8 // continuation bytes still expected
	lo   uint8 // the next byte's range, for the first continuation byte
	hi   uint8
}

// valid feeds b and reports whether it is still a prefix of valid UTF-8.
func (s *utf8State) valid(b []byte) bool {
	i := 0
	// Fast path: whole ASCII words while between characters.
	for s.need == 0 && i+8 <= len(b) {
		if (uint64(b[i])|uint64(b[i+1])<<8|uint64(b[i+2])<<16|uint64(b[i+3])<<24|
			uint64(b[i+4])<<32|uint64(b[i+5])<<40|uint64(b[i+6])<<48|uint64(b[i+7])<<56)&0x8080808080808080 != 0 {
			break
		}
		i += 8
	}
	for ; i < len(b); i++ {
		c := b[i]
		if s.need == 0 {
			switch {
			case c < 0x80:
				continue
			case c >= 0xC2 && c <= 0xDF:
				s.need, s.lo, s.hi = 1, 0x80, 0xBF
			case c == 0xE0:
				s.need, s.lo, s.hi = 2, 0xA0, 0xBF // no overlongs
			case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
				s.need, s.lo, s.hi = 2, 0x80, 0xBF
			case c == 0xED:
				s.need, s.lo, s.hi = 2, 0x80, 0x9F // no surrogates
			case c == 0xF0:
				s.need, s.lo, s.hi = 3, 0x90, 0xBF // no overlongs
			case c >= 0xF1 && c <= 0xF3:
				s.need, s.lo, s.hi = 3, 0x80, 0xBF
			case c == 0xF4:
				s.need, s.lo, s.hi = 3, 0x80, 0x8F // not past U+10FFFF
			default:
				return false
			}
			continue
		}
		if c < s.lo || c > s.hi {
			return false
		}
		s.need--
		s.lo, s.hi = 0x80, 0xBF
	}
	return true
}

// complete reports whether the bytes fed end between characters.
func (s *utf8State) complete() bool { return s.need == 0 }
