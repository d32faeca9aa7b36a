//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package poll

import "time"

// Poller is the stub backend for systems without epoll or kqueue: New fails
// with ErrUnsupported, so code above it builds everywhere.
type Poller struct{}

// New returns ErrUnsupported.
func New() (*Poller, error) { return nil, ErrUnsupported }

// Add returns ErrUnsupported.
func (p *Poller) Add(fd int, tag uint32, in Interest) error { return ErrUnsupported }

// Modify returns ErrUnsupported.
func (p *Poller) Modify(fd int, tag uint32, in Interest) error { return ErrUnsupported }

// Delete returns ErrUnsupported.
func (p *Poller) Delete(fd int) error { return ErrUnsupported }

// Wait returns ErrUnsupported.
func (p *Poller) Wait(events []Event, timeout time.Duration) (int, error) {
	return 0, ErrUnsupported
}

// Wake returns ErrUnsupported.
func (p *Poller) Wake() error { return ErrUnsupported }

// Close does nothing.
func (p *Poller) Close() error { return nil }

// IsGone reports false: no backend, no registrations.
func IsGone(err error) bool { return false }

// IsRegistered reports false: no backend, no registrations.
func IsRegistered(err error) bool { return false }

// IsUnpollable reports false: no backend, no registrations.
func IsUnpollable(err error) bool { return false }

// SetBlocking does nothing: there is no backend.
func (p *Poller) SetBlocking(on bool) {}

// Woke reports false.
func (p *Poller) Woke() bool { return false }
