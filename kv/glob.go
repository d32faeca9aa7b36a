package kv

// globMatch reports whether str matches the glob pattern as Redis's
// stringmatchlen does: * any run, ? one byte, [abc] [^abc] [a-z] sets, and
// \ quoting the next byte. nocase folds ASCII letters.
func globMatch(pattern, str []byte, nocase bool) bool {
	skipLongerMatches := false
	return globMatchImpl(pattern, str, nocase, &skipLongerMatches, 0)
}

// lower folds an ASCII upper-case letter to lower case.
func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// globMatchImpl is the matcher; skipLongerMatches cuts the exponential
// search short once a "*" has failed to match any longer suffix, and depth
// bounds recursion on patterns with many stars.
func globMatchImpl(p, s []byte, nocase bool, skipLongerMatches *bool, depth int) bool {
	if depth > 1000 {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatchImpl(p[1:], s, nocase, skipLongerMatches, depth+1) {
					return true
				}
				if *skipLongerMatches {
					return false
				}
				s = s[1:]
			}
			*skipLongerMatches = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) == 0 {
					break
				}
				if p[0] == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					start, end := p[0], p[2]
					if start > end {
						start, end = end, start
					}
					c := s[0]
					if nocase {
						start, end, c = lower(start), lower(end), lower(c)
					}
					p = p[2:]
					if c >= start && c <= end {
						match = true
					}
				} else if nocase {
					if lower(p[0]) == lower(s[0]) {
						match = true
					}
				} else if p[0] == s[0] {
					match = true
				}
				p = p[1:]
			}
			if len(p) == 0 {
				// Unterminated set: Redis treats the end of the pattern as
				// the closing bracket.
				if not {
					match = !match
				}
				if !match {
					return false
				}
				s = s[1:]
				continue
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if nocase {
				if lower(p[0]) != lower(s[0]) {
					return false
				}
			} else if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}
