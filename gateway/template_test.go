package gateway

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

var templateArgs = map[string]any{
	"id":      "7",
	"n":       int64(42),
	"i":       3,
	"i32":     int32(-4),
	"half":    1.5,
	"two":     2.0,
	"big":     1e21,
	"tiny":    1e-7,
	"num":     json.Number("1.50"),
	"yes":     true,
	"empty":   "",
	"null":    nil,
	"list":    []any{"a"},
	"input":   map[string]any{"id": "x", "deep": map[string]any{"id": int64(9)}, "none": nil},
	"unicode": "Zoë/ü",
}

var renderTests = []struct {
	name    string
	src     string
	want    string
	wantErr string
}{
	{name: "no placeholders", src: "employees", want: "employees"},
	{name: "empty", src: "", want: ""},
	{name: "subject", src: "employeeUpdated.{{ args.id }}", want: "employeeUpdated.7"},
	{name: "no spaces", src: "{{args.id}}", want: "7"},
	{name: "tabs and newlines", src: "{{\targs.id\n}}", want: "7"},
	{name: "nested path", src: "{{ args.input.id }}", want: "x"},
	{name: "deeper path", src: "e.{{ args.input.deep.id }}.x", want: "e.9.x"},
	{name: "several", src: "a.{{ args.id }}.{{ args.n }}.z", want: "a.7.42.z"},
	{name: "adjacent", src: "{{args.id}}{{args.n}}", want: "742"},
	{name: "int", src: "{{ args.i }}", want: "3"},
	{name: "int32", src: "{{ args.i32 }}", want: "-4"},
	{name: "float", src: "{{ args.half }}", want: "1.5"},
	{name: "integral float", src: "{{ args.two }}", want: "2"},
	{name: "large float", src: "{{ args.big }}", want: "1e+21"},
	{name: "small float", src: "{{ args.tiny }}", want: "1e-7"},
	{name: "json.Number", src: "{{ args.num }}", want: "1.50"},
	{name: "bool", src: "{{ args.yes }}", want: "true"},
	{name: "empty string", src: "a{{ args.empty }}b", want: "ab"},
	{name: "unicode", src: "{{ args.unicode }}", want: "Zoë/ü"},
	{name: "stray braces", src: "a}}b{c}{ {{ args.id }}", want: "a}}b{c}{ 7"},
	{name: "missing", src: "e.{{ args.nope }}", wantErr: "gateway: args.nope is missing"},
	{name: "missing nested", src: "{{ args.input.nope }}", wantErr: "gateway: args.input.nope is missing"},
	{name: "null", src: "{{ args.null }}", wantErr: "gateway: args.null is null"},
	{name: "null field", src: "{{ args.input.none }}", wantErr: "gateway: args.input.none is null"},
	{name: "through null", src: "{{ args.null.id }}", wantErr: "gateway: args.null is null"},
	{name: "through a scalar", src: "{{ args.id.x }}", wantErr: "gateway: args.id is not an input object"},
	{name: "list", src: "{{ args.list }}", wantErr: "gateway: args.list is a list"},
	{name: "object", src: "{{ args.input }}", wantErr: "gateway: args.input is an input object"},
}

func TestTemplateRender(t *testing.T) {
	for _, tc := range renderTests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := parseTemplate(tc.src)
			if err != nil {
				t.Fatalf("parseTemplate(%q) = %v", tc.src, err)
			}
			got, err := tmpl.render(templateArgs)
			errText := ""
			if err != nil {
				errText = err.Error()
			}
			if got != tc.want || errText != tc.wantErr {
				t.Errorf("render(%q) = %q, %q; want %q, %q", tc.src, got, errText, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseTemplateErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"unclosed", "e.{{ args.id", `unclosed "{{" at offset 2`},
		{"unclosed after a placeholder", "{{ args.id }}.{{", `unclosed "{{" at offset 14`},
		{"single brace close", "{{ args.id }", `unclosed "{{" at offset 0`},
		{"empty", "e.{{}}", "empty path"},
		{"blank", "e.{{  }}", "empty path"},
		{"args alone", "{{ args }}", `empty path after "args"`},
		{"not args", "{{ input.id }}", `path does not start with "args"`},
		{"case", "{{ Args.id }}", `path does not start with "args"`},
		{"empty segment", "{{ args..id }}", "empty path segment"},
		{"trailing dot", "{{ args.id. }}", "empty path segment"},
		{"dash", "{{ args.employee-id }}", `bad characters in path segment "employee-id"`},
		{"leading digit", "{{ args.1d }}", `bad characters in path segment "1d"`},
		{"inner space", "{{ args.a b }}", `bad characters in path segment "a b"`},
		{"nested braces", "{{ args.{{id}} }}", `bad characters in path segment "{{id"`},
		{"non-ASCII", "{{ args.ïd }}", `bad characters in path segment "ïd"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := parseTemplate(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gateway: ") {
				t.Errorf("parseTemplate(%q) = %v, %v; want an error containing %q", tc.src, tmpl, err, tc.want)
			}
		})
	}
}

func TestTemplatePaths(t *testing.T) {
	tests := []struct {
		src        string
		paths      [][]string
		single     []string
		singleOK   bool
		sourceText string
	}{
		{src: "employees"},
		{src: "{{ args.id }}", paths: [][]string{{"id"}}, single: []string{"id"}, singleOK: true},
		{src: "{{args.input.id}}", paths: [][]string{{"input", "id"}}, single: []string{"input", "id"}, singleOK: true},
		{src: " {{ args.id }}", paths: [][]string{{"id"}}},
		{src: "{{ args.a }}{{ args.b.c }}", paths: [][]string{{"a"}, {"b", "c"}}},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			tmpl, err := parseTemplate(tc.src)
			if err != nil {
				t.Fatalf("parseTemplate(%q) = %v", tc.src, err)
			}
			if got := tmpl.paths(); !slices.EqualFunc(got, tc.paths, slices.Equal) {
				t.Errorf("paths() = %q; want %q", got, tc.paths)
			}
			if got, ok := tmpl.single(); ok != tc.singleOK || !slices.Equal(got, tc.single) {
				t.Errorf("single() = %q, %v; want %q, %v", got, ok, tc.single, tc.singleOK)
			}
			if got := tmpl.String(); got != tc.src {
				t.Errorf("String() = %q; want %q", got, tc.src)
			}
		})
	}
}

func FuzzTemplate(f *testing.F) {
	for _, tc := range renderTests {
		f.Add(tc.src)
	}
	f.Add("{{ args.a }}{{")
	f.Add("}}{{ {{ }}")
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := parseTemplate(src)
		if err != nil {
			if tmpl != nil {
				t.Fatalf("parseTemplate(%q) = %v, %v; want nil with the error", src, tmpl, err)
			}
			return
		}
		// Every placeholder, written in canonical form with its literal text
		// around it, parses to the same template; rendering it with an
		// argument of the path's own text gives the same result.
		var canon strings.Builder
		args := map[string]any{}
		var want strings.Builder
		for _, p := range tmpl.parts {
			if p.path == nil {
				canon.WriteString(p.text)
				want.WriteString(p.text)
				continue
			}
			canon.WriteString("{{ args." + strings.Join(p.path, ".") + " }}")
		}
		again, err := parseTemplate(canon.String())
		if err != nil || !slices.EqualFunc(again.paths(), tmpl.paths(), slices.Equal) {
			t.Fatalf("parseTemplate(%q) = %v, %v; want the paths %q of %q", canon.String(), again, err, tmpl.paths(), src)
		}
		// With no arguments, rendering fails exactly when there is a placeholder.
		got, err := tmpl.render(args)
		if (err != nil) != (len(tmpl.paths()) > 0) || err == nil && got != want.String() {
			t.Fatalf("render(%q, no arguments) = %q, %v; want %q", src, got, err, want.String())
		}
	})
}
