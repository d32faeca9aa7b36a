package gateway

import "errors"

// Errors of the authentication functions (TokenAuth, JWTAuth).
var (
	ErrNoToken      = errors.New("gateway: no token")
	ErrBadToken     = errors.New("gateway: token refused")
	ErrTokenExpired = errors.New("gateway: token expired")
)

// ErrNoStreams is returned by a Source that has no durable consumers when
// a subscription asks for one.
var ErrNoStreams = errors.New("gateway: the source has no streams")
