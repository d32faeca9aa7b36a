package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func signHS256(secret, header, claims string) string {
	enc := base64.RawURLEncoding
	msg := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(msg))
	return msg + "." + enc.EncodeToString(mac.Sum(nil))
}

func TestVerifyJWT(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	hs := `{"alg":"HS256","typ":"JWT"}`
	cases := []struct {
		name  string
		token string
		want  error
	}{
		{"valid", signHS256("k", hs, `{"sub":"u","exp":1800000100}`), nil},
		{"no exp", signHS256("k", hs, `{"sub":"u"}`), nil},
		{"expired", signHS256("k", hs, `{"exp":1799999000}`), ErrTokenExpired},
		{"within skew", signHS256("k", hs, `{"exp":1799999990}`), nil},
		{"not yet", signHS256("k", hs, `{"nbf":1800000500}`), ErrBadToken},
		// NumericDates past int64's seconds compare as the numbers they are
		// (RFC 7519 section 2), where they wrapped: a token in force only
		// in 300 billion years was taken, one valid as long was expired.
		{"exp far ahead", signHS256("k", hs, `{"exp":1e19}`), nil},
		{"nbf far ahead", signHS256("k", hs, `{"nbf":1e19}`), ErrBadToken},
		{"exp far behind", signHS256("k", hs, `{"exp":-1e19}`), ErrTokenExpired},
		{"nbf far behind", signHS256("k", hs, `{"nbf":-1e19}`), nil},
		{"fractional exp", signHS256("k", hs, `{"exp":1799999940.5}`), nil},
		{"fractional exp past", signHS256("k", hs, `{"exp":1799999939.5}`), ErrTokenExpired},
		{"exp not a number", signHS256("k", hs, `{"exp":"soon"}`), ErrBadToken},
		{"exp past float64", signHS256("k", hs, `{"exp":1e400}`), ErrBadToken},
		{"wrong secret", signHS256("other", hs, `{}`), ErrBadToken},
		{"alg none", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`{}`)) + ".", ErrBadToken},
		{"RS256 refused", signHS256("k", `{"alg":"RS256"}`, `{}`), ErrBadToken},
		{"two parts", "a.b", ErrBadToken},
		{"bad base64", "a.b.c!", ErrBadToken},
		{"claims not JSON", signHS256("k", hs, `nope`), ErrBadToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := verifyJWT(tc.token, []byte("k"), now); !errors.Is(err, tc.want) {
				t.Fatalf("verifyJWT = %v; want %v", err, tc.want)
			}
		})
	}
}

func TestInitToken(t *testing.T) {
	for _, tc := range []struct {
		payload map[string]any
		want    string
	}{
		{map[string]any{"token": "a"}, "a"},
		{map[string]any{"Authorization": "Bearer b"}, "b"},
		{map[string]any{"headers": map[string]any{"authorization": "Bearer c"}}, "c"},
		{map[string]any{"Authorization": "Basic x"}, ""},
		{nil, ""},
	} {
		if got := initToken(tc.payload); got != tc.want {
			t.Errorf("initToken(%v) = %q; want %q", tc.payload, got, tc.want)
		}
	}
	auth := TokenAuth("s3cret")
	if err := auth(map[string]any{"token": "s3cret"}); err != nil {
		t.Errorf("TokenAuth(right) = %v", err)
	}
	if err := auth(map[string]any{"token": "s3cre"}); !errors.Is(err, ErrBadToken) {
		t.Errorf("TokenAuth(wrong) = %v", err)
	}
	if err := auth(nil); !errors.Is(err, ErrNoToken) {
		t.Errorf("TokenAuth(none) = %v", err)
	}
	jwt := JWTAuth([]byte("k"))
	if err := jwt(map[string]any{"token": signHS256("k", `{"alg":"HS256"}`, `{}`)}); err != nil {
		t.Errorf("JWTAuth(valid) = %v", err)
	}
}

// TestAllowOriginsList checks that the entries of a comma-separated list
// (evgate's --allow-origin) admit their origins with white space around
// them, and that an empty entry admits nothing.
func TestAllowOriginsList(t *testing.T) {
	check := AllowOrigins(strings.Split(" https://a.example, https://b.example/ ,,", ","))
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"https://a.example", true},
		{"https://b.example", true},
		{"https://c.example", false},
		{"https://", false},
	} {
		if got := check(tc.origin, "gw.example"); got != tc.ok {
			t.Errorf("check(%q) = %v; want %v", tc.origin, got, tc.ok)
		}
	}
}

// A browser from an origin not on the list is refused at the handshake;
// one on it, and a client with no Origin, connect.
func TestAllowOrigins(t *testing.T) {
	_, _, addr := startGateway(t, func(c *Config) { c.CheckOrigin = AllowOrigins([]string{"https://app.example.com"}) })
	d := websocket.Dialer{Subprotocols: []string{ProtocolTransportWS}}
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"https://app.example.com", true},
		{"https://APP.example.com", true},
		{"https://evil.example.com", false},
		{"http://app.example.com", false},
		{"", true},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		c, resp, err := d.Dial("ws://"+addr+"/graphql", h)
		if tc.ok {
			if err != nil {
				t.Errorf("origin %q: %v; want a connection", tc.origin, err)
				continue
			}
			c.Close()
		} else if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: %v; want 403", tc.origin, err)
			if c != nil {
				c.Close()
			}
		}
	}
}

// The authentication scheme is a case-insensitive token (RFC 9110,
// section 11.1): "bearer" and "BEARER" name the same scheme as "Bearer".
func TestInitTokenSchemeAnyCase(t *testing.T) {
	for _, tc := range []struct {
		payload map[string]any
		want    string
	}{
		{map[string]any{"Authorization": "bearer d"}, "d"},
		{map[string]any{"headers": map[string]any{"Authorization": "BEARER e"}}, "e"},
		{map[string]any{"Authorization": "Bearerf"}, ""},
	} {
		if got := initToken(tc.payload); got != tc.want {
			t.Errorf("initToken(%v) = %q; want %q", tc.payload, got, tc.want)
		}
	}
}
