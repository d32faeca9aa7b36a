package http1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// parseTest is a request head and what Parse makes of it: the fields of
// the Request, or the status of the *Error.
type parseTest struct {
	name   string
	in     string
	limits Limits

	status int // the *Error's status; 0 for a valid head

	method, target string
	minor          int
	body           string // "" for none, a length, or "chunked"
	host           string // "-" for none
	flags          string // any of "keep-alive", "expect100", "upgrade"
	upgradeTo      string
	headers        []string // "Name: Value", checked when not nil

	notGo bool // net/http reads it differently (see the package doc)
}

const crlf = "\r\n"

// get is "GET <target> HTTP/1.1" with a Host and the given field lines.
func get(target string, fields ...string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: example.com\r\n" + strings.Join(append(fields, ""), crlf) + crlf
}

// post is a POST with Host and the given field lines.
func post(version string, fields ...string) string {
	return "POST /submit " + version + crlf + strings.Join(append(fields, ""), crlf) + crlf
}

var parseTests = []parseTest{
	// Valid heads.
	{name: "minimal", in: get("/"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive",
		headers: []string{"Host: example.com"}},
	{name: "browser", in: browserHead, method: "GET", target: "/index.html?q=1", minor: 1, host: "www.example.com", flags: "keep-alive"},
	{name: "close", in: get("/", "Connection: close"), method: "GET", target: "/", minor: 1, host: "example.com"},
	{name: "close among tokens", in: get("/", "Connection: keep-alive, Close"), method: "GET", target: "/", minor: 1, host: "example.com"},
	{name: "HTTP/1.0", in: "GET / HTTP/1.0\r\n\r\n", method: "GET", target: "/", minor: 0, host: "-"},
	{name: "HTTP/1.0 keep-alive", in: "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", method: "GET", target: "/", host: "-", flags: "keep-alive"},
	{name: "HTTP/1.0 keep-alive and close", in: "GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", method: "GET", target: "/", host: "-"},
	{name: "HTTP/1.0 with Host", in: "GET / HTTP/1.0\r\nHost: a\r\n\r\n", method: "GET", target: "/", host: "a"},
	{name: "HTTP/1.2 as 1.1", in: "GET / HTTP/1.2\r\nHost: a\r\n\r\n", method: "GET", target: "/", minor: 2, host: "a", flags: "keep-alive", notGo: true},
	{name: "content length", in: post("HTTP/1.1", "Host: a", "Content-Length: 5"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive"},
	{name: "content length 0", in: post("HTTP/1.1", "Host: a", "Content-Length: 0"), method: "POST", target: "/submit", minor: 1, body: "0", host: "a", flags: "keep-alive"},
	{name: "content length OWS", in: post("HTTP/1.1", "Host: a", "Content-Length:  5 \t"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive"},
	{name: "content length leading zeros", in: post("HTTP/1.1", "Host: a", "Content-Length: 0005"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive"},
	{name: "content length max", in: post("HTTP/1.1", "Host: a", "Content-Length: 9223372036854775807"), method: "POST", target: "/submit", minor: 1, body: "9223372036854775807", host: "a", flags: "keep-alive"},
	{name: "content length twice equal text", in: post("HTTP/1.1", "Host: a", "Content-Length: 05", "Content-Length: 5"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive", notGo: true},
	{name: "content length twice equal", in: post("HTTP/1.1", "Host: a", "Content-Length: 5", "Content-Length: 5"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive"},
	{name: "content length list equal", in: post("HTTP/1.1", "Host: a", "Content-Length: 5, 5"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive", notGo: true},
	{name: "HTTP/1.0 content length", in: post("HTTP/1.0", "Content-Length: 3"), method: "POST", target: "/submit", body: "3", host: "-"},
	{name: "chunked", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: chunked"), method: "POST", target: "/submit", minor: 1, body: "chunked", host: "a", flags: "keep-alive"},
	{name: "chunked any case", in: post("HTTP/1.1", "Host: a", "transfer-encoding: ChunKed"), method: "POST", target: "/submit", minor: 1, body: "chunked", host: "a", flags: "keep-alive"},
	{name: "chunked with empty elements", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: , chunked ,"), method: "POST", target: "/submit", minor: 1, body: "chunked", host: "a", flags: "keep-alive", notGo: true},
	{name: "leading empty line", in: "\r\n" + get("/"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive", notGo: true},
	{name: "leading empty lines", in: "\r\n\r\n\r\n" + get("/"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive", notGo: true},
	{name: "absolute-form", in: get("http://example.com/a/b?c=d"), method: "GET", target: "http://example.com/a/b?c=d", minor: 1, host: "example.com", flags: "keep-alive"},
	{name: "CONNECT authority-form", in: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", method: "CONNECT", target: "example.com:443", minor: 1, host: "example.com:443", flags: "keep-alive"},
	{name: "empty Host", in: "GET / HTTP/1.1\r\nHost:\r\n\r\n", method: "GET", target: "/", minor: 1, host: "", flags: "keep-alive"},
	{name: "Host of sub-delims and escapes", in: "GET / HTTP/1.1\r\nHost: a-b.c_d~e!$&'()*+,;=%41:80\r\n\r\n", method: "GET", target: "/", minor: 1, host: "a-b.c_d~e!$&'()*+,;=%41:80", flags: "keep-alive"},
	{name: "CONNECT IPv6", in: "CONNECT [::1]:8080 HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", method: "CONNECT", target: "[::1]:8080", minor: 1, host: "[::1]:8080", flags: "keep-alive"},
	{name: "OPTIONS asterisk", in: "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", method: "OPTIONS", target: "*", minor: 1, host: "a", flags: "keep-alive"},
	{name: "target bytes", in: get("/caf%C3%A9/\xe2\x82\xac?a=[1]&b={x}|~"), method: "GET", target: "/caf%C3%A9/\xe2\x82\xac?a=[1]&b={x}|~", minor: 1, host: "example.com", flags: "keep-alive", notGo: true},
	{name: "extension method", in: "M-SEARCH.X_1 /x HTTP/1.1\r\nHost: a\r\n\r\n", method: "M-SEARCH.X_1", target: "/x", minor: 1, host: "a", flags: "keep-alive"},
	{name: "expect 100-continue", in: post("HTTP/1.1", "Host: a", "Content-Length: 5", "Expect: 100-Continue"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive expect100"},
	{name: "expect in HTTP/1.0", in: post("HTTP/1.0", "Content-Length: 5", "Expect: 100-continue"), method: "POST", target: "/submit", body: "5", host: "-"},
	{name: "expect empty", in: get("/", "Expect:"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive"},
	// A list naming 100-continue continues, the rest passed over, as
	// net/http's server does; the fields are one list.
	{name: "expect list", in: post("HTTP/1.1", "Host: a", "Content-Length: 5", "Expect: x, 100-continue"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive expect100"},
	{name: "expect fields", in: post("HTTP/1.1", "Host: a", "Content-Length: 5", "Expect: 100-continue", "Expect: x"), method: "POST", target: "/submit", minor: 1, body: "5", host: "a", flags: "keep-alive expect100"},
	{name: "expect empty elements", in: get("/", "Expect: , ,"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive"},
	{name: "websocket", in: get("/chat", "Upgrade: websocket", "Connection: keep-alive, Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"),
		method: "GET", target: "/chat", minor: 1, host: "example.com", flags: "keep-alive upgrade", upgradeTo: "websocket"},
	{name: "upgrade without token", in: get("/", "Upgrade: websocket"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive", upgradeTo: "websocket"},
	{name: "upgrade in HTTP/1.0", in: "GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n", method: "GET", target: "/", host: "-", upgradeTo: "websocket"},
	{name: "value OWS", in: "GET / HTTP/1.1\r\nHost: \t a:80 \t\r\nX-Words: \t a b \t\r\nX-Empty:\r\nX-Blank:  \r\n\r\n", method: "GET", target: "/", minor: 1, host: "a:80", flags: "keep-alive",
		headers: []string{"Host: a:80", "X-Words: a b", "X-Empty: ", "X-Blank: "}},
	{name: "obs-text and tab", in: get("/", "X-Text: caf\xe9\tb\xff"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive",
		headers: []string{"Host: example.com", "X-Text: caf\xe9\tb\xff"}},
	{name: "token name", in: get("/", "X-!#$%&'*+.^_`|~09: v"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive",
		headers: []string{"Host: example.com", "X-!#$%&'*+.^_`|~09: v"}},
	{name: "colon in value", in: get("/", "X-A: b: c:"), method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive",
		headers: []string{"Host: example.com", "X-A: b: c:"}},
	{name: "header limit exact", in: get("/", "A: 1"), limits: Limits{MaxHeaders: 2}, method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive"},
	{name: "size limit exact", in: get("/"), limits: Limits{MaxHeaderBytes: len(get("/"))}, method: "GET", target: "/", minor: 1, host: "example.com", flags: "keep-alive"},

	// The request line.
	{name: "lowercase version", in: "GET / http/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "version trailing space", in: "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", status: 400},
	{name: "version two digits", in: "GET / HTTP/1.10\r\nHost: a\r\n\r\n", status: 400},
	{name: "version no minor", in: "GET / HTTP/1\r\nHost: a\r\n\r\n", status: 400},
	{name: "version major two digits", in: "GET / HTTP/11.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "HTTP/2.0", in: "GET / HTTP/2.0\r\nHost: a\r\n\r\n", status: 505},
	{name: "HTTP/0.9 version", in: "GET / HTTP/0.9\r\n\r\n", status: 505},
	{name: "no version", in: "GET /\r\n\r\n", status: 400},
	{name: "double space", in: "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "space before version", in: "GET /  HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "leading space", in: " GET / HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "tab separator", in: "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "method not a token", in: "G@T / HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "target with tab", in: "GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "target with DEL", in: "GET /a\x7fb HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "target with NUL", in: "GET /a\x00b HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "asterisk with GET", in: "GET * HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "CONNECT origin-form", in: "CONNECT /x HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "CONNECT without port", in: "CONNECT example.com HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "CONNECT with path", in: "CONNECT example.com:443/x HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "target not a URI", in: "GET example HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "request line bare CR", in: "GET / HTTP/1.1\rHost: a\r\n\r\n", status: 400},
	{name: "request line bare LF", in: "GET / HTTP/1.1\nHost: a\r\n\r\n", status: 400},
	{name: "leading bare LF", in: "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", status: 400},
	{name: "bare LF throughout", in: "GET / HTTP/1.1\nHost: a\n\n", status: 400},

	// Field lines.
	{name: "field bare LF", in: "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", status: 400},
	{name: "field bare CR", in: "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", status: 400},
	{name: "end bare CR", in: "GET / HTTP/1.1\r\nHost: a\r\n\r\r\n\r\n", status: 400},
	{name: "end bare LF", in: "GET / HTTP/1.1\r\nHost: a\r\n\n", status: 400},
	{name: "obs-fold", in: "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n c\r\n\r\n", status: 400},
	{name: "obs-fold tab", in: "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n\tc\r\n\r\n", status: 400},
	{name: "first field folded", in: "GET / HTTP/1.1\r\n Host: a\r\n\r\n", status: 400},
	{name: "space before colon", in: "GET / HTTP/1.1\r\nHost : a\r\n\r\n", status: 400},
	{name: "tab before colon", in: "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", status: 400},
	{name: "NUL in value", in: get("/", "X: a\x00b"), status: 400},
	{name: "DEL in value", in: get("/", "X: a\x7fb"), status: 400},
	{name: "ESC in value", in: get("/", "X: a\x1bb"), status: 400},
	{name: "NUL in name", in: get("/", "X\x00: a"), status: 400},
	{name: "empty name", in: get("/", ": a"), status: 400},
	{name: "no colon", in: get("/", "Xa"), status: 400},
	{name: "name not a token", in: get("/", "X(a): b"), status: 400},
	{name: "too many fields", in: get("/", "A: 1", "B: 2"), limits: Limits{MaxHeaders: 2}, status: 431},
	{name: "too large", in: get("/"), limits: Limits{MaxHeaderBytes: len(get("/")) - 1}, status: 431},
	{name: "too large unfinished", in: "GET / HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("x", 64), limits: Limits{MaxHeaderBytes: 64}, status: 431},
	{name: "too large empty lines", in: strings.Repeat("\r\n", 40), limits: Limits{MaxHeaderBytes: 64}, status: 431},

	// Host.
	{name: "missing Host", in: "GET / HTTP/1.1\r\nX: a\r\n\r\n", status: 400},
	{name: "two Hosts", in: get("/", "Host: example.com"), status: 400},
	{name: "two Hosts HTTP/1.0", in: "GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", status: 400},
	{name: "HTTP/1.2 missing Host", in: "GET / HTTP/1.2\r\n\r\n", status: 400},
	{name: "Host with a space", in: "GET / HTTP/1.1\r\nHost: x y\r\n\r\n", status: 400},
	{name: "Host with a slash", in: "GET / HTTP/1.1\r\nHost: x/y\r\n\r\n", status: 400},
	{name: "Host with userinfo", in: "GET / HTTP/1.1\r\nHost: u@x\r\n\r\n", status: 400},
	{name: "Host with a quote", in: "GET / HTTP/1.1\r\nHost: \"x\"\r\n\r\n", status: 400},

	// Framing.
	{name: "CL and TE", in: post("HTTP/1.1", "Host: a", "Content-Length: 5", "Transfer-Encoding: chunked"), status: 400},
	{name: "TE and CL", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "Content-Length: 5"), status: 400},
	{name: "CL differ", in: post("HTTP/1.1", "Host: a", "Content-Length: 5", "Content-Length: 6"), status: 400},
	{name: "CL list differ", in: post("HTTP/1.1", "Host: a", "Content-Length: 5, 6"), status: 400},
	{name: "CL plus", in: post("HTTP/1.1", "Host: a", "Content-Length: +5"), status: 400},
	{name: "CL negative", in: post("HTTP/1.1", "Host: a", "Content-Length: -1"), status: 400},
	{name: "CL hex", in: post("HTTP/1.1", "Host: a", "Content-Length: 0x5"), status: 400},
	{name: "CL inner space", in: post("HTTP/1.1", "Host: a", "Content-Length: 1 2"), status: 400},
	{name: "CL empty", in: post("HTTP/1.1", "Host: a", "Content-Length:"), status: 400},
	{name: "CL trailing comma", in: post("HTTP/1.1", "Host: a", "Content-Length: 5,"), status: 400},
	{name: "CL overflow", in: post("HTTP/1.1", "Host: a", "Content-Length: 9223372036854775808"), status: 400},
	{name: "CL huge", in: post("HTTP/1.1", "Host: a", "Content-Length: 99999999999999999999999"), status: 400},
	{name: "TE chunked, gzip", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: chunked, gzip"), status: 400},
	{name: "TE gzip, chunked", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: gzip, chunked"), status: 501},
	{name: "TE gzip then chunked fields", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: gzip", "Transfer-Encoding: chunked"), status: 501},
	{name: "TE gzip", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: gzip"), status: 400},
	{name: "TE identity", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: identity"), status: 400},
	{name: "TE empty", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding:"), status: 400},
	{name: "TE chunked, chunked", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: chunked, chunked"), status: 400},
	{name: "TE chunked twice", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "Transfer-Encoding: chunked"), status: 400},
	{name: "TE chunked-false", in: post("HTTP/1.1", "Host: a", "Transfer-Encoding: xchunked"), status: 400},
	{name: "TE in HTTP/1.0", in: post("HTTP/1.0", "Transfer-Encoding: chunked"), status: 400},
	{name: "TE in HTTP/1.0 with CL", in: post("HTTP/1.0", "Transfer-Encoding: chunked", "Content-Length: 5"), status: 400},

	// Expect.
	{name: "expect other", in: get("/", "Expect: 200-ok"), status: 417},
	{name: "expect list without 100-continue", in: get("/", "Expect: x, y"), status: 417},
	{name: "expect other HTTP/1.0", in: "GET / HTTP/1.0\r\nExpect: x\r\n\r\n", status: 417},
}

// browserHead is what a browser sends for a page.
const browserHead = "GET /index.html?q=1 HTTP/1.1\r\n" +
	"Host: www.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
	"Referer: https://www.example.com/\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: session=0123456789abcdef0123456789abcdef; theme=dark; lang=en\r\n" +
	"Upgrade-Insecure-Requests: 1\r\n" +
	"Sec-Fetch-Dest: document\r\n" +
	"Sec-Fetch-Mode: navigate\r\n" +
	"Sec-Fetch-Site: same-origin\r\n" +
	"Sec-Fetch-User: ?1\r\n" +
	"Priority: u=0, i\r\n" +
	"\r\n"

// plaintextHead is the request of the TechEmpower plaintext test.
const plaintextHead = "GET /plaintext HTTP/1.1\r\n" +
	"Host: tfb-server:8080\r\n" +
	"Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n" +
	"Connection: keep-alive\r\n" +
	"\r\n"

// checkRequest fails unless r is what tc wants, from a head of n bytes.
func checkRequest(t *testing.T, call string, r *Request, n int, tc *parseTest) {
	t.Helper()
	if n != len(tc.in) || r.HeadLen != n {
		t.Errorf("%s = %d (HeadLen %d); want %d", call, n, r.HeadLen, len(tc.in))
	}
	if string(r.Method) != tc.method || string(r.Target) != tc.target || r.Major != 1 || r.Minor != tc.minor {
		t.Errorf("%s: request line %q %q %d.%d; want %q %q 1.%d", call, r.Method, r.Target, r.Major, r.Minor, tc.method, tc.target, tc.minor)
	}
	cl, chunked := int64(-1), false
	switch tc.body {
	case "":
	case "chunked":
		chunked = true
	default:
		cl, _ = strconv.ParseInt(tc.body, 10, 64)
	}
	if r.ContentLength != cl || r.Chunked != chunked {
		t.Errorf("%s: ContentLength, Chunked = %d, %v; want %d, %v", call, r.ContentLength, r.Chunked, cl, chunked)
	}
	host := r.Host != nil
	if want := tc.host != "-"; host != want || want && string(r.Host) != tc.host {
		t.Errorf("%s: Host = %q (non-nil %v); want %q", call, r.Host, host, tc.host)
	}
	flags := strings.Fields(tc.flags)
	for _, f := range []struct {
		name string
		got  bool
	}{{"keep-alive", r.KeepAlive}, {"expect100", r.Expect100}, {"upgrade", r.Upgrade}} {
		if want := slices.Contains(flags, f.name); f.got != want {
			t.Errorf("%s: %s = %v; want %v", call, f.name, f.got, want)
		}
	}
	if string(r.UpgradeTo) != tc.upgradeTo {
		t.Errorf("%s: UpgradeTo = %q; want %q", call, r.UpgradeTo, tc.upgradeTo)
	}
	if tc.headers != nil {
		var got []string
		for _, h := range r.Headers {
			got = append(got, string(h.Name)+": "+string(h.Value))
		}
		if !slices.Equal(got, tc.headers) {
			t.Errorf("%s: Headers = %q; want %q", call, got, tc.headers)
		}
	}
}

// checkStatus fails unless err is an *Error with the given status.
func checkStatus(t *testing.T, call string, err error, status int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != status {
		t.Errorf("%s error = %v; want status %d", call, err, status)
	}
}

func TestParse(t *testing.T) {
	for i := range parseTests {
		tc := &parseTests[i]
		t.Run(tc.name, func(t *testing.T) {
			p := Parser{Limits: tc.limits}
			var r Request
			n, err := p.Parse([]byte(tc.in), &r)
			call := "Parse(" + strconv.Quote(tc.in) + ")"
			if tc.status != 0 {
				if n != 0 {
					t.Errorf("%s = %d; want 0", call, n)
				}
				checkStatus(t, call, err, tc.status)
				return
			}
			if err != nil {
				t.Fatalf("%s error = %v; want nil", call, err)
			}
			checkRequest(t, call, &r, n, tc)
		})
	}
}

// TestParseByteAnywhere puts one byte at every offset of a long target and
// a long field value, which are scanned eight bytes at a time, and checks
// that it is refused or kept as the byte-wise rules say.
func TestParseByteAnywhere(t *testing.T) {
	const long = "abcdefghijklmnopqrstuvwxyz0123456789"
	for _, c := range []byte{0x00, '\t', '\n', '\r', 0x1f, ' ', 0x7f, 0x80, 0xff, 'x'} {
		for at := range len(long) {
			v := long[:at] + string(c) + long[at:]
			valueOK := c == '\t' || c >= ' ' && c != 0x7f
			targetOK := c > ' ' && c != 0x7f
			for _, tc := range []struct {
				where, head string
				ok          bool
			}{
				{"value", get("/", "X: "+v), valueOK},
				{"target", get("/" + v), targetOK},
			} {
				var p Parser
				var r Request
				n, err := p.Parse([]byte(tc.head), &r)
				if tc.ok != (err == nil) {
					t.Fatalf("%q in a %s at %d: Parse = %d, %v; want ok %v", c, tc.where, at, n, err, tc.ok)
				}
				if err != nil {
					continue
				}
				got := r.Target[1:]
				if tc.where == "value" {
					got = r.Get("X")
				}
				if string(got) != v && !((c == '\t' || c == ' ') && at == 0) { // leading OWS is not the value's
					t.Fatalf("%q in a %s at %d: got %q; want %q", c, tc.where, at, got, v)
				}
			}
		}
	}
}

// TestSkipAgreesWithTables checks that the word-at-a-time scan stops where
// the byte tables say, for every byte in every lane of a word: skip's
// masks and the tables must mark the same bytes.
func TestSkipAgreesWithTables(t *testing.T) {
	for _, tc := range []struct {
		name  string
		low   uint64
		class *[256]bool
	}{{"value", ' ', &valueChar}, {"target", '!', &targetChar}} {
		for c := range 256 {
			for at := range 16 {
				b := []byte(strings.Repeat("a", 16) + "\r\n")
				b[at] = byte(c)
				want := at
				if tc.class[c] {
					want = 16
				}
				if got := skip(b, 0, tc.low, tc.class); got != want {
					t.Fatalf("%s: byte %#x at %d: skip stops at %d; want %d", tc.name, c, at, got, want)
				}
			}
		}
	}
}

// TestParseGrowing feeds each head as a connection delivers it: a growing
// prefix, a byte more each call, to one Parser.
func TestParseGrowing(t *testing.T) {
	for i := range parseTests {
		tc := &parseTests[i]
		t.Run(tc.name, func(t *testing.T) {
			p := Parser{Limits: tc.limits}
			var r Request
			in := []byte(tc.in)
			for i := 0; i <= len(in); i++ {
				n, err := p.Parse(in[:i], &r)
				call := "Parse(" + strconv.Quote(tc.in[:i]) + ")"
				switch {
				case errors.Is(err, ErrIncomplete):
					if n != 0 || i == len(in) {
						t.Fatalf("%s = %d, %v; want a result at the end of the input", call, n, err)
					}
					continue
				case tc.status != 0:
					checkStatus(t, call, err, tc.status)
				case err != nil || i != len(in):
					t.Fatalf("%s = %d, %v; want ErrIncomplete before %d bytes", call, n, err, len(in))
				default:
					checkRequest(t, call, &r, n, tc)
				}
				return
			}
		})
	}
}

// TestParsePipelined parses every valid head from one buffer, back to back,
// with one Parser and one Request.
func TestParsePipelined(t *testing.T) {
	var in []byte
	var valid []*parseTest
	for i := range parseTests {
		if tc := &parseTests[i]; tc.status == 0 && tc.limits == (Limits{}) {
			in = append(in, tc.in...)
			valid = append(valid, tc)
		}
	}
	var p Parser
	var r Request
	for pass := range 2 {
		rest := in
		for _, tc := range valid {
			n, err := p.Parse(rest, &r)
			if err != nil {
				t.Fatalf("pass %d: Parse(%q...) error = %v; want nil (%s)", pass, rest[:min(len(rest), 40)], err, tc.name)
			}
			checkRequest(t, "Parse "+tc.name, &r, n, tc)
			rest = rest[n:]
		}
		if len(rest) != 0 {
			t.Fatalf("%d bytes left; want 0", len(rest))
		}
	}
}

// TestParseResumes checks that a Parser picks up its search where it left
// off, and starts again when handed other input.
func TestParseResumes(t *testing.T) {
	var p Parser
	var r Request
	in := []byte(get("/a"))
	if _, err := p.Parse(in[:20], &r); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("Parse(%q) error = %v; want ErrIncomplete", in[:20], err)
	}
	if p.scanned != 20 {
		t.Errorf("after Parse(%q), scanned = %d; want 20", in[:20], p.scanned)
	}
	other := []byte(get("/b"))[:10]
	if _, err := p.Parse(other, &r); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("Parse(%q) error = %v; want ErrIncomplete", other, err)
	}
	p.Reset()
	if n, err := p.Parse(in, &r); err != nil || n != len(in) || string(r.Target) != "/a" {
		t.Fatalf("Parse(%q) = %d, %v, target %q; want %d, nil, /a", in, n, err, r.Target, len(in))
	}
}

func TestGet(t *testing.T) {
	var p Parser
	var r Request
	in := []byte(get("/", "X-A: 1", "x-a: 2", "Content-Type: text/plain"))
	if _, err := p.Parse(in, &r); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"host", "example.com"}, {"X-A", "1"}, {"content-type", "text/plain"}, {"CONTENT-TYPE", "text/plain"}, {"Content_Type", ""}, {"X-B", ""},
	} {
		if got := r.Get(tc.name); string(got) != tc.want {
			t.Errorf("Get(%q) = %q; want %q", tc.name, got, tc.want)
		}
	}
	var vals []string
	for v := range r.Values("X-A") {
		vals = append(vals, string(v))
	}
	if !slices.Equal(vals, []string{"1", "2"}) {
		t.Errorf("Values(X-A) = %q; want [1 2]", vals)
	}
	for range r.Values("X-A") {
		break // stopping early is allowed
	}
}

// TestParseViews checks that a Request's slices point into the input and
// cannot be appended to over the bytes after them.
func TestParseViews(t *testing.T) {
	var p Parser
	var r Request
	in := []byte(get("/", "X: v"))
	if _, err := p.Parse(in, &r); err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]byte{r.Method, r.Target, r.Host, r.Headers[1].Name, r.Headers[1].Value} {
		if cap(s) != len(s) || !within(s, in) {
			t.Errorf("slice %q: len %d cap %d, within input %v; want cap == len, within", s, len(s), cap(s), within(s, in))
		}
	}
}

// within reports whether s lies inside b (an empty s anywhere in it).
func within(s, b []byte) bool {
	if len(b) == 0 {
		return len(s) == 0
	}
	if len(s) == 0 {
		return true
	}
	for i := range b {
		if &b[i] == &s[0] {
			return i+len(s) <= len(b)
		}
	}
	return false
}

// TestNetHTTP checks that net/http's ReadRequest reads every valid head as
// Parse does, but for the differences the package doc lists.
func TestNetHTTP(t *testing.T) {
	for i := range parseTests {
		tc := &parseTests[i]
		if tc.status != 0 || tc.notGo {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			var p Parser
			var r Request
			if _, err := p.Parse([]byte(tc.in), &r); err != nil {
				t.Fatal(err)
			}
			req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(tc.in)))
			if err != nil {
				t.Fatalf("http.ReadRequest(%q) error = %v", tc.in, err)
			}
			if req.Method != string(r.Method) || req.RequestURI != string(r.Target) || req.ProtoMajor != r.Major || req.ProtoMinor != r.Minor {
				t.Errorf("http.ReadRequest: %s %s %d.%d; Parse: %s %s %d.%d", req.Method, req.RequestURI, req.ProtoMajor, req.ProtoMinor, r.Method, r.Target, r.Major, r.Minor)
			}
			if req.Host != string(r.Host) && !(r.Host == nil && req.Host == "") && !bytes.HasPrefix(r.Target, []byte("http://")) {
				t.Errorf("http.ReadRequest Host = %q; Parse %q", req.Host, r.Host)
			}
			for _, h := range r.Headers {
				name := http.CanonicalHeaderKey(string(h.Name))
				switch name {
				case "Host", "Content-Length", "Transfer-Encoding":
					continue // net/http moves them to fields of its Request
				}
				var want []string
				for v := range r.Values(name) {
					want = append(want, string(v))
				}
				if got := req.Header.Values(name); !slices.Equal(got, want) {
					t.Errorf("http.ReadRequest %s = %q; Parse %q", name, got, want)
				}
			}
			cl := max(r.ContentLength, 0)
			if r.Chunked {
				cl = -1
			}
			if req.ContentLength != cl || slices.Equal(req.TransferEncoding, []string{"chunked"}) != r.Chunked {
				t.Errorf("http.ReadRequest ContentLength, TransferEncoding = %d, %q; Parse %d, %v", req.ContentLength, req.TransferEncoding, r.ContentLength, r.Chunked)
			}
			if req.Close == r.KeepAlive {
				t.Errorf("http.ReadRequest Close = %v; Parse KeepAlive %v", req.Close, r.KeepAlive)
			}
		})
	}
}

func TestParseAllocs(t *testing.T) {
	for _, head := range []string{browserHead, plaintextHead} {
		var p Parser
		var r Request
		in := []byte(head)
		if _, err := p.Parse(in, &r); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := p.Parse(in, &r); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Parse(%q) allocates %v times; want 0", head, allocs)
		}
	}
	var p Parser
	var r Request
	bad := []byte("GET / HTTP/1.1\r\nX : a\r\n\r\n")
	if allocs := testing.AllocsPerRun(100, func() { _, _ = p.Parse(bad, &r) }); allocs != 0 {
		t.Errorf("Parse(%q) allocates %v times; want 0", bad, allocs)
	}
}

func TestErrorText(t *testing.T) {
	if got, want := errHeadTooBig.Error(), "http1: 431 Request Header Fields Too Large: request header fields too large"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
}

func benchmarkParse(b *testing.B, head string) {
	var p Parser
	var r Request
	in := []byte(head)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := p.Parse(in, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.Run("head=browser", func(b *testing.B) { benchmarkParse(b, browserHead) })
	b.Run("head=plaintext", func(b *testing.B) { benchmarkParse(b, plaintextHead) })
}

// BenchmarkParsePipelined parses 16 plaintext requests from one buffer, as
// the TechEmpower client pipelines them.
func BenchmarkParsePipelined(b *testing.B) {
	in := []byte(strings.Repeat(plaintextHead, 16))
	var p Parser
	var r Request
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		for rest := in; len(rest) > 0; {
			n, err := p.Parse(rest, &r)
			if err != nil {
				b.Fatal(err)
			}
			rest = rest[n:]
		}
	}
}

// A server parses the head, then reads the body as the head frames it.
func ExampleParser() {
	in := []byte("POST /upload HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nGET / HTTP/1.1\r\n")
	var p Parser
	var r Request
	n, err := p.Parse(in, &r)
	if err != nil {
		fmt.Println(err) // ErrIncomplete: read more; *Error: respond and close
		return
	}
	fmt.Printf("%s %s HTTP/%d.%d host=%s chunked=%v keep-alive=%v\n", r.Method, r.Target, r.Major, r.Minor, r.Host, r.Chunked, r.KeepAlive)
	in = in[n:]

	var d ChunkedDecoder
	var body []byte
	for len(in) > 0 && !d.Done() {
		data, n, err := d.Decode(in)
		if err != nil {
			fmt.Println(err)
			return
		}
		body = append(body, data...)
		in = in[n:]
	}
	fmt.Printf("body %q, next %q\n", body, in)
	// Output:
	// POST /upload HTTP/1.1 host=example.com chunked=true keep-alive=true
	// body "hello world", next "GET / HTTP/1.1\r\n"
}

// TestRequestPath checks the path Path takes from each form of target,
// as net/http's server takes Request.URL.Path (a "://" in a query or a
// path is not an authority).
func TestRequestPath(t *testing.T) {
	for _, tc := range []struct{ target, want string }{
		{"/a/b?q=1", "/a/b"},
		{"http://a.example/p?q", "/p"},
		{"http://a.example", "/"},
		{"http://a.example?x=/y", "/"},
		{"HTTP://A/p", "/p"},
		{"http:/x?u=http://evil/", "/x"},
		{"http:foo?u=http://evil/", "http:foo?u=http://evil/"},
		{"*", "*"},
		{"example.com:443", "example.com:443"},
		{"[::1]:443", "[::1]:443"},
	} {
		r := &Request{Target: []byte(tc.target)}
		if got := string(r.Path()); got != tc.want {
			t.Errorf("Path of %q = %q; want %q", tc.target, got, tc.want)
		}
	}
}
