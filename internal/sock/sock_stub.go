//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package sock

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
)

// The stub for systems with no raw socket support here: everything fails
// with errUnsupported, so that packages above build everywhere.

var errUnsupported = errors.ErrUnsupported

// ErrAgain is never returned here.
var ErrAgain = errors.New("sock: would block")

// ErrNoBuffers is never returned here.
var ErrNoBuffers = errors.New("sock: no buffer space")

// ErrAddrNotAvail is never returned here.
var ErrAddrNotAvail = errors.New("sock: address not available")

// ListenOptions tune Listen.
type ListenOptions struct {
	Backlog   int
	ReusePort bool
	Perm      os.FileMode
}

// Listen fails.
func Listen(network, addr string, o ListenOptions) (int, net.Addr, error) {
	return -1, nil, errUnsupported
}

// Accept fails.
func Accept(fd int) (int, error) { return -1, errUnsupported }

// DialOptions tune Dial.
type DialOptions struct {
	LocalAddr net.Addr
	Control   func(fd int) error
}

// Dial fails.
func Dial(network, addr string, o DialOptions) (int, error) { return -1, errUnsupported }

// ConnectError fails.
func ConnectError(fd int) error { return errUnsupported }

// SelfConnected returns false.
func SelfConnected(fd int) bool { return false }

// SocketError fails.
func SocketError(fd int) error { return errUnsupported }

// SetNoDelay fails.
func SetNoDelay(fd int, noDelay bool) error { return errUnsupported }

// SetKeepAlive fails.
func SetKeepAlive(fd int, period time.Duration) error { return errUnsupported }

// SetKeepAliveConfig fails.
func SetKeepAliveConfig(fd int, cfg net.KeepAliveConfig) error { return errUnsupported }

// SetBuffers fails.
func SetBuffers(fd, send, recv int) error { return errUnsupported }

// SetLingerZero fails.
func SetLingerZero(fd int) error { return errUnsupported }

// LocalAddr returns nil.
func LocalAddr(fd int) net.Addr { return nil }

// RemoteAddr returns nil.
func RemoteAddr(fd int) net.Addr { return nil }

// IsTemporary returns false.
func IsTemporary(err error) bool { return false }

// IsOutOfFiles returns false.
func IsOutOfFiles(err error) bool { return false }

// IsBadFD returns false.
func IsBadFD(err error) bool { return false }

// Read fails.
func Read(fd int, p []byte) (int, error) { return 0, errUnsupported }

// Write fails.
func Write(fd int, p []byte) (int, error) { return 0, errUnsupported }

// Writev fails.
func Writev(fd int, bufs [][]byte) (int, error) { return 0, errUnsupported }

// Close fails.
func Close(fd int) error { return errUnsupported }

// ShutdownWrite fails.
func ShutdownWrite(fd int) error { return errUnsupported }

// Dup fails.
func Dup(fd int) (int, error) { return -1, errUnsupported }

// IsStream returns false.
func IsStream(fd int) bool { return false }

// DupRaw fails.
func DupRaw(rc syscall.RawConn, check func(fd int) error) (int, error) { return -1, errUnsupported }

// FileConn fails.
func FileConn(fd int) (net.Conn, error) { return nil, errUnsupported }
