package gateway

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A template is a string from a schema directive, such as an event subject
// "employeeUpdated.{{ args.employeeID }}", parsed into literal text and
// placeholders naming a subscription's arguments. It is immutable once
// parsed: multiple goroutines may render one template simultaneously.
type template struct {
	src   string
	parts []templatePart
}

// A templatePart is literal text, or (when path is set) a placeholder: the
// argument path without its leading "args".
type templatePart struct {
	text string
	path []string
}

// parseTemplate parses s: literal text with {{ args.a.b }} placeholders
// (spaces inside the braces optional). A placeholder's path is "args"
// followed by one or more dot-separated GraphQL names; an unclosed "{{", an
// empty placeholder, a path not starting with "args", an empty segment or any
// other character between the braces is an error. A "}}" outside a
// placeholder is literal text.
func parseTemplate(s string) (*template, error) {
	t := &template{src: s}
	rest := s
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			break
		}
		if open > 0 {
			t.parts = append(t.parts, templatePart{text: rest[:open]})
		}
		end := strings.Index(rest[open+2:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("gateway: template %q: unclosed \"{{\" at offset %d", s, len(s)-len(rest)+open)
		}
		inner := rest[open+2 : open+2+end]
		path, problem := parsePlaceholder(inner)
		if problem != "" {
			return nil, fmt.Errorf("gateway: template %q: placeholder %q: %s", s, "{{"+inner+"}}", problem)
		}
		t.parts = append(t.parts, templatePart{path: path})
		rest = rest[open+2+end+2:]
	}
	if rest != "" {
		t.parts = append(t.parts, templatePart{text: rest})
	}
	return t, nil
}

// parsePlaceholder parses what stands between "{{" and "}}" and returns the
// argument path without "args", or an error phrase.
func parsePlaceholder(inner string) ([]string, string) {
	body := strings.Trim(inner, " \t\n\r\f")
	if body == "" {
		return nil, "empty path"
	}
	segs := strings.Split(body, ".")
	if segs[0] != "args" {
		return nil, `path does not start with "args"`
	}
	if len(segs) == 1 {
		return nil, "empty path after \"args\""
	}
	for _, seg := range segs[1:] {
		if seg == "" {
			return nil, "empty path segment"
		}
		if !isName(seg) {
			return nil, fmt.Sprintf("bad characters in path segment %q", seg)
		}
	}
	return segs[1:], ""
}

// isName reports whether s is a GraphQL name: /[_A-Za-z][_0-9A-Za-z]*/.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// render returns the template with each placeholder replaced by the text of
// the argument it names. Arguments are what gqlparser produces after
// coercion: a string is written as is, an integer in decimal, a float64 as
// JavaScript's String(n) prints it (shortest round-trip form, exponent from
// 1e21 and below 1e-6, so 2.0 is "2" as graphql-js and Cosmo print it), a
// json.Number as its text, a bool as true or false. A missing argument, a
// null, a list or an object is an error naming the path ("args.input.id").
func (t *template) render(args map[string]any) (string, error) {
	if len(t.parts) == 1 && t.parts[0].path == nil {
		return t.parts[0].text, nil
	}
	var b []byte
	for _, p := range t.parts {
		if p.path == nil {
			b = append(b, p.text...)
			continue
		}
		v, err := lookupArg(args, p.path)
		if err != nil {
			return "", err
		}
		b, err = appendArgText(b, v, p.path)
		if err != nil {
			return "", err
		}
	}
	return string(b), nil
}

// single returns the placeholder's path (without "args") when the whole
// template is exactly one placeholder, with no text around it.
func (t *template) single() ([]string, bool) {
	if len(t.parts) == 1 && t.parts[0].path != nil {
		return t.parts[0].path, true
	}
	return nil, false
}

// paths returns every placeholder's path, without "args", in order.
func (t *template) paths() [][]string {
	var ps [][]string
	for _, p := range t.parts {
		if p.path != nil {
			ps = append(ps, p.path)
		}
	}
	return ps
}

// String returns the template's source text.
func (t *template) String() string { return t.src }

// argPathText is path as a template writes it: "args.input.id".
func argPathText(path []string) string {
	return "args." + strings.Join(path, ".")
}

// lookupArg returns the argument at path, or an *argError naming the path
// if an argument or input field on it is missing or is not an input object.
func lookupArg(args map[string]any, path []string) (any, error) {
	var v any = args
	for i, name := range path {
		if i > 0 && v == nil {
			return nil, &argError{path: path[:i], problem: "is null", missing: true}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &argError{path: path[:i], problem: "is not an input object"}
		}
		if v, ok = m[name]; !ok {
			return nil, &argError{path: path[:i+1], problem: "is missing", missing: true}
		}
	}
	return v, nil
}

// An argError says what is wrong with the argument at path.
type argError struct {
	path    []string
	problem string
	missing bool // path leads through an unset or null argument or field
}

// Error returns "gateway: args.input.id is missing" and the like.
func (e *argError) Error() string {
	return "gateway: " + argPathText(e.path) + " " + e.problem
}

// appendArgText appends the text of the scalar argument v, found at path,
// as render describes it.
func appendArgText(b []byte, v any, path []string) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return append(b, v...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float32:
		return appendJSNumber(b, float64(v)), nil
	case float64:
		return appendJSNumber(b, v), nil
	case json.Number:
		return append(b, v...), nil
	case nil:
		return nil, &argError{path: path, problem: "is null"}
	case []any:
		return nil, &argError{path: path, problem: "is a list"}
	case map[string]any:
		return nil, &argError{path: path, problem: "is an input object"}
	default:
		return nil, &argError{path: path, problem: fmt.Sprintf("has unexpected type %T", v)}
	}
}

// appendJSNumber appends f as JavaScript's Number.prototype.toString writes
// it, which is also how encoding/json writes a float64: the shortest text
// that reads back as f, in exponent form from 1e21 up and below 1e-6.
func appendJSNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0:
		return append(b, '0') // -0 too, as JavaScript prints it
	}
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// "1e-07" becomes "1e-7", as JavaScript writes it.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
