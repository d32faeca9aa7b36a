package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"hash"
	"net/url"
	"strings"
	"time"
)

// initToken returns the token of a connection_init payload: its "token"
// field, or an "Authorization" (or "authorization") field of the form
// "Bearer <token>" (the scheme in any case), at the top or under "headers", where Apollo's and
// graphql-ws's clients put connection parameters.
func initToken(p map[string]any) string {
	for _, m := range []map[string]any{p, asMap(p["headers"])} {
		if t, ok := m["token"].(string); ok && t != "" {
			return t
		}
		for _, k := range []string{"Authorization", "authorization"} {
			// The scheme is a case-insensitive token (RFC 9110, 11.1).
			if v, ok := m[k].(string); ok && len(v) > 7 && strings.EqualFold(v[:7], "Bearer ") {
				return strings.TrimSpace(v[7:])
			}
		}
	}
	return ""
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// TokenAuth returns a Config.Authenticate that accepts the connections
// whose connection_init carries token, and the POST requests whose
// Authorization field is "Bearer <token>".
func TokenAuth(token string) func(map[string]any) error {
	return func(p map[string]any) error {
		t := initToken(p)
		if t == "" {
			return ErrNoToken
		}
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) != 1 {
			return ErrBadToken
		}
		return nil
	}
}

// JWTAuth returns a Config.Authenticate that accepts the connections whose
// connection_init (and the POST requests whose Authorization field)
// carries a JSON Web Token signed with secret (HS256, HS384 or HS512)
// that has not expired ("exp") and is in force ("nbf"), allowing a minute
// of clock skew.
func JWTAuth(secret []byte) func(map[string]any) error {
	return func(p map[string]any) error {
		t := initToken(p)
		if t == "" {
			return ErrNoToken
		}
		return verifyJWT(t, secret, time.Now())
	}
}

func verifyJWT(token string, secret []byte, now time.Time) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ErrBadToken
	}
	var head struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &head); err != nil {
		return ErrBadToken
	}
	var h func() hash.Hash
	switch head.Alg {
	case "HS256":
		h = sha256.New
	case "HS384":
		h = sha512.New384
	case "HS512":
		h = sha512.New
	default:
		return ErrBadToken // "none" and public-key algorithms included
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return ErrBadToken
	}
	mac := hmac.New(h, secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return ErrBadToken
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
		Nbf *json.Number `json:"nbf"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return ErrBadToken
	}
	const skew = time.Minute
	if claims.Exp != nil {
		exp, err := claims.Exp.Float64()
		if err != nil {
			return ErrBadToken
		}
		if seconds(now.Add(-skew)) > exp {
			return ErrTokenExpired
		}
	}
	if claims.Nbf != nil {
		nbf, err := claims.Nbf.Float64()
		if err != nil || seconds(now.Add(skew)) < nbf {
			return ErrBadToken
		}
	}
	return nil
}

// seconds returns t as a JWT NumericDate: seconds since the epoch. Claims
// are compared with it as numbers, so that a date past int64's seconds,
// which a conversion to time.Time would wrap, is as far off as it says.
func seconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

func decodeSegment(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	return d.Decode(v)
}

// AllowOrigins returns a Config.CheckOrigin that admits the browsers whose
// Origin is one of origins ("https://app.example.com"; "*" admits all),
// compared without regard to case; white space around an entry is
// ignored, and so is an empty entry. Clients that send no Origin (not
// browsers) are admitted before this is asked.
func AllowOrigins(origins []string) func(origin, host string) bool {
	allowed := make(map[string]bool, len(origins))
	for _, o := range origins {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			allowed[strings.ToLower(o)] = true
		}
	}
	return func(origin, _ string) bool {
		if allowed["*"] {
			return true
		}
		u, err := url.Parse(origin)
		if err != nil || u.Host == "" {
			return false
		}
		return allowed[strings.ToLower(u.Scheme+"://"+u.Host)]
	}
}

// originAllowed reports whether a request with a non-empty Origin field
// may publish: Config.CheckOrigin's answer, or by default whether the
// Origin's host is the request's Host, as for the WebSocket handshake.
func (g *Gateway) originAllowed(origin, host string) bool {
	if g.cfg.CheckOrigin != nil {
		return g.cfg.CheckOrigin(origin, host)
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, host)
}
