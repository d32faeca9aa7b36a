package events

import (
	"errors"
	"fmt"
	"iter"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/evloop/evloop/internal/loop"
	"github.com/evloop/evloop/internal/poll"
)

// Mode says which readiness of an fd WatchIO waits for.
type Mode uint8

const (
	// Read waits until the fd is readable, has reached EOF or has an error.
	Read Mode = 1 << iota
	// Write waits until the fd is writable, has hung up or has an error.
	Write
	// ReadWrite waits for either.
	ReadWrite = Read | Write
)

// Errors returned by a Loop. Callers compare with errors.Is.
var (
	ErrStopped     = errors.New("events: loop stopped")
	ErrSignaled    = errors.New("events: wait interrupted by Signal")
	ErrNilKey      = errors.New("events: nil key")
	ErrBadKey      = errors.New("events: key is not comparable, or not equal to itself")
	ErrKeyInUse    = errors.New("events: key already watched")
	ErrNotWatched  = errors.New("events: key not watched")
	ErrBadFD       = errors.New("events: bad file descriptor")
	ErrFDInUse     = errors.New("events: fd already watched in this mode by another key")
	ErrBadMode     = errors.New("events: mode must be Read, Write or ReadWrite")
	ErrBadDuration = errors.New("events: negative timer interval")

	// errGone: the fd was closed while watched (see fdWatches.gone).
	errGone = errors.New("events: fd closed while watched")
)

type watchKind uint8

const (
	ioWatch watchKind = iota
	timerWatch
)

// watch is one key's watch. It is owned by the loop goroutine.
type watch[K comparable] struct {
	key     K
	kind    watchKind
	fd      int
	mode    Mode
	oneshot bool
	timer   loop.TimerID

	live   bool // false once unwatched: queued deliveries of it are dropped
	fired  bool // a one-shot that fired: removed from the kernel, awaiting Next
	queued bool // in the ready queue
}

// fdWatches are the watches on one fd: at most one per direction.
type fdWatches[K comparable] struct {
	l    *Loop[K]
	r, w *watch[K]

	// gone: the fd was closed while watched, and the kernel dropped its
	// registration; the loop has forgotten it too. The number stays taken
	// until r and w are unwatched.
	gone bool
}

// pending is a delivery waiting for Next: a watch, or an emitted key.
type pending[K comparable] struct {
	w   *watch[K]
	key K
}

// Loop is an event loop that delivers keys. See the package comment for
// which goroutine may call which method.
type Loop[K comparable] struct {
	loop    *loop.Loop
	step    func(block bool) error // loop.RunOnce; tests make it fail
	watches map[K]*watch[K]
	fds     map[int]*fdWatches[K]
	always  map[int]*fdWatches[K] // fds the kernel cannot poll (regular files): ready at every wait
	ready   []pending[K]
	head    int // ready[head:] are waiting
	err     error
	closed  bool

	nilKeys   bool // K is an interface type: a key may be nil
	checkKeys bool // K holds an interface: a key may panic in a map

	emu        sync.Mutex
	emitted    []K
	spare      []K
	emitClosed bool
	drain      func() // l.drainEmits, bound once

	stopped  atomic.Bool
	signaled atomic.Bool
}

// New returns a Loop with no watches.
func New[K comparable]() (*Loop[K], error) {
	lp, err := loop.New(loop.Options{})
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	l := &Loop[K]{
		loop:      lp,
		step:      lp.RunOnce,
		watches:   make(map[K]*watch[K]),
		fds:       make(map[int]*fdWatches[K]),
		always:    make(map[int]*fdWatches[K]),
		nilKeys:   reflect.TypeFor[K]().Kind() == reflect.Interface,
		checkKeys: holdsInterface(reflect.TypeFor[K]()),
	}
	l.drain = l.drainEmits
	return l, nil
}

// holdsInterface reports whether values of t can hold an interface value,
// whose dynamic type may not be comparable.
func holdsInterface(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Array:
		return holdsInterface(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsInterface(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// checkKey rejects nil keys, keys that would make a map operation panic
// (an interface holding a slice, say), and keys not equal to themselves (a
// NaN, or a value holding one), which a map never finds again.
func (l *Loop[K]) checkKey(key K) (err error) {
	if l.nilKeys && any(key) == nil {
		return ErrNilKey
	}
	if l.checkKeys {
		defer func() {
			if recover() != nil {
				err = fmt.Errorf("%w: %T", ErrBadKey, key)
			}
		}()
		_ = l.watches[key]
	}
	if key != key {
		return fmt.Errorf("%w: %v is not equal to itself", ErrBadKey, key)
	}
	return nil
}

func (l *Loop[K]) usable() error {
	if l.closed || l.stopped.Load() {
		return ErrStopped
	}
	return nil
}

// WatchIO watches fd for the readiness mode asks for and delivers key when
// it is ready: once if oneshot, else each time the loop waits while it stays
// ready. An fd may have one watch per direction (one Read and one Write key,
// or one ReadWrite key). The fd stays the application's: the Loop never
// closes it. An fd that the kernel cannot poll (a regular file, which epoll
// refuses) is ready at every wait, as poll(2) and libev report it.
//
// Unwatch an fd before closing it. If it is closed while watched, the
// kernel drops the registration with the last descriptor of the open file,
// the key stops being delivered, and Unwatch still frees the key and the
// fd number; until then, watching that number again returns ErrFDInUse.
// (If a dup of the fd stays open, the kernel keeps reporting the file under
// the closed number: with epoll, such a watch cannot be removed at all.) An
// fd the kernel cannot poll goes on being ready once closed, as poll(2)
// reports a closed fd (POLLNVAL), until it is unwatched. Must be called on
// the owning goroutine.
func (l *Loop[K]) WatchIO(key K, fd int, mode Mode, oneshot bool) error {
	if err := l.usable(); err != nil {
		return err
	}
	if err := l.checkKey(key); err != nil {
		return err
	}
	if fd < 0 {
		return ErrBadFD
	}
	if mode == 0 || mode&^ReadWrite != 0 {
		return ErrBadMode
	}
	if _, ok := l.watches[key]; ok {
		return ErrKeyInUse
	}
	fw := l.fds[fd]
	if fw != nil && (fw.gone || (mode&Read != 0 && fw.r != nil) || (mode&Write != 0 && fw.w != nil)) {
		return ErrFDInUse
	}
	w := &watch[K]{key: key, kind: ioWatch, fd: fd, mode: mode, oneshot: oneshot, live: true}
	added := fw == nil
	if added {
		fw = &fdWatches[K]{l: l}
	}
	if mode&Read != 0 {
		fw.r = w
	}
	if mode&Write != 0 {
		fw.w = w
	}
	if err := l.sync(fd, fw); err != nil {
		if mode&Read != 0 {
			fw.r = nil
		}
		if mode&Write != 0 {
			fw.w = nil
		}
		if err == errGone {
			return fmt.Errorf("%w: fd %d was closed while watched", ErrFDInUse, fd)
		}
		return err
	}
	if added {
		l.fds[fd] = fw
	}
	l.watches[key] = w
	return nil
}

// interest is what the kernel must watch fd for: the directions of the
// watches that have not fired.
func (fw *fdWatches[K]) interest() poll.Interest {
	var in poll.Interest
	if fw.r != nil && !fw.r.fired {
		in |= poll.Read
	}
	if fw.w != nil && !fw.w.fired {
		in |= poll.Write
	}
	return in
}

// sync brings the kernel registration of fd in line with its watches. It
// returns errGone if fd was closed while watched.
func (l *Loop[K]) sync(fd int, fw *fdWatches[K]) error {
	if fw.gone {
		return errGone
	}
	if l.always[fd] == fw {
		return nil // pollAlways looks at the watches at every wait
	}
	in := fw.interest()
	_, registered := l.loop.Interest(fd)
	var err error
	switch {
	case !registered && in != 0:
		err = l.loop.Register(fd, in, fw)
		if poll.IsUnpollable(err) {
			l.always[fd] = fw
			return nil
		}
		if errors.Is(err, syscall.EBADF) {
			return fmt.Errorf("%w: fd %d: %w", ErrBadFD, fd, err) // not open
		}
	case registered && in == 0:
		err = l.loop.Unregister(fd)
	case registered:
		err = l.loop.Modify(fd, in)
		if poll.IsGone(err) {
			// Closed while watched: the kernel dropped the registration
			// with the fd. Forget it, which cannot fail for such an fd.
			fw.gone = true
			_ = l.loop.Unregister(fd)
			return errGone
		}
	}
	if err != nil {
		return fmt.Errorf("events: watching fd %d: %w", fd, err)
	}
	return nil
}

// HandleIO queues the keys of fd's ready watches. It runs on the loop.
func (fw *fdWatches[K]) HandleIO(fd int, ev poll.Flags) {
	l := fw.l
	r, w := fw.r, fw.w
	if r != nil && !r.fired && ev&(poll.Readable|poll.Hangup|poll.Error) != 0 {
		l.fire(r)
	}
	if w != nil && !w.fired && ev&(poll.Writable|poll.Error) != 0 {
		l.fire(w)
	}
	if (r != nil && r.fired) || (w != nil && w.fired) {
		// A one-shot fired: stop the kernel reporting it. This can fail only
		// as the fd's removal can, which leaves nothing registered.
		_ = l.sync(fd, fw)
	}
}

// fire queues w's key, once, and marks a one-shot as fired.
func (l *Loop[K]) fire(w *watch[K]) {
	if w.oneshot {
		w.fired = true
	}
	if !w.queued {
		w.queued = true
		l.ready = append(l.ready, pending[K]{w: w, key: w.key})
	}
}

// WatchTimer delivers key after the given duration and then, if every is
// positive, every that long, until Unwatch. A timer is never delivered before
// its time. A negative after counts as zero. Must be called on the owning
// goroutine.
func (l *Loop[K]) WatchTimer(key K, after, every time.Duration) error {
	if err := l.usable(); err != nil {
		return err
	}
	if err := l.checkKey(key); err != nil {
		return err
	}
	if every < 0 {
		return ErrBadDuration
	}
	if _, ok := l.watches[key]; ok {
		return ErrKeyInUse
	}
	w := &watch[K]{key: key, kind: timerWatch, oneshot: every == 0, live: true}
	w.timer = l.loop.Every(after, every, func() { l.fire(w) })
	l.watches[key] = w
	return nil
}

// Unwatch removes key's watch. Next does not return key for that watch
// afterwards, even if it was ready. Must be called on the owning goroutine.
func (l *Loop[K]) Unwatch(key K) error {
	if l.closed {
		return ErrStopped
	}
	if err := l.checkKey(key); err != nil {
		return err
	}
	w, ok := l.watches[key]
	if !ok {
		return ErrNotWatched
	}
	return l.remove(w)
}

func (l *Loop[K]) remove(w *watch[K]) error {
	delete(l.watches, w.key)
	w.live = false
	if w.kind == timerWatch {
		l.loop.CancelTimer(w.timer)
		return nil
	}
	fw := l.fds[w.fd]
	if fw.r == w {
		fw.r = nil
	}
	if fw.w == w {
		fw.w = nil
	}
	if fw.r == nil && fw.w == nil {
		delete(l.fds, w.fd)
		delete(l.always, w.fd)
	}
	if err := l.sync(w.fd, fw); err != nil && err != errGone {
		return err
	}
	return nil
}

// Emit delivers key to Next, once per call, even if the loop is blocked
// waiting. Keys emitted by one goroutine are delivered in the order emitted.
// Any goroutine may call it; it returns ErrStopped once the loop is stopped.
func (l *Loop[K]) Emit(key K) error {
	if l.nilKeys && any(key) == nil {
		return ErrNilKey
	}
	l.emu.Lock()
	if l.emitClosed || l.stopped.Load() {
		l.emu.Unlock()
		return ErrStopped
	}
	first := len(l.emitted) == 0
	l.emitted = append(l.emitted, key)
	l.emu.Unlock()
	if first {
		// One task moves the whole batch; it wakes the loop only if asleep.
		// Submit fails only once the loop is released, after Stop, and the
		// owner's Next has then taken the key from l.emitted itself.
		_ = l.loop.Submit(l.drain)
	}
	return nil
}

// drainEmits moves emitted keys to the ready queue. It runs on the loop.
func (l *Loop[K]) drainEmits() {
	l.emu.Lock()
	keys := l.emitted
	l.emitted, l.spare = l.spare[:0], nil
	l.emu.Unlock()
	for _, k := range keys {
		l.ready = append(l.ready, pending[K]{key: k})
	}
	clear(keys)
	if cap(keys) <= 1<<16 {
		l.emu.Lock()
		l.spare = keys[:0]
		l.emu.Unlock()
	}
}

// Signal interrupts the owner's wait: the first Next that finds no
// delivery queued returns ErrSignaled instead of waiting, whether it was
// already blocked or comes later. That Next still polls once without
// blocking, so that what is ready is queued for the call after it. Signals
// given before that Next merge into one. Any goroutine may call Signal.
func (l *Loop[K]) Signal() {
	l.signaled.Store(true)
	l.loop.Wake()
}

// Stop ends the loop for good. Emit, WatchIO and WatchTimer return
// ErrStopped from then on; Next returns the keys emitted before Stop that it
// has not returned yet, then ErrStopped, at once if it is blocked, and
// releases the loop. Watched keys that were ready but not yet returned are
// dropped. Any goroutine may call Stop.
func (l *Loop[K]) Stop() {
	l.stopped.Store(true)
	l.emu.Lock()
	l.emitClosed = true
	l.emu.Unlock()
	l.loop.Wake()
}

// Next returns the next key, waiting as long as it takes. It returns
// ErrSignaled if Signal interrupted the wait, ErrStopped once the loop is
// stopped, and any other error if the poller failed. The key of a one-shot
// watch is unwatched by the time Next returns it. Must be called on the
// owning goroutine.
func (l *Loop[K]) Next() (K, error) {
	var zero K
	for {
		if l.closed || l.stopped.Load() {
			if k, ok := l.popEmitted(); ok {
				return k, nil
			}
			l.Close()
			return zero, ErrStopped
		}
		if k, ok := l.pop(); ok {
			return k, nil
		}
		signaled := l.signaled.Swap(false)
		if err := l.step(!signaled && len(l.always) == 0); err != nil {
			return zero, fmt.Errorf("events: %w", err)
		}
		l.pollAlways()
		if signaled {
			return zero, ErrSignaled
		}
	}
}

// pollAlways queues the keys of the watches on fds the kernel cannot poll,
// which are always ready.
func (l *Loop[K]) pollAlways() {
	for fd, fw := range l.always {
		fw.HandleIO(fd, poll.Readable|poll.Writable)
	}
}

// popEmitted returns the next key emitted before Stop, skipping watches.
func (l *Loop[K]) popEmitted() (K, bool) {
	if l.closed {
		var zero K
		return zero, false
	}
	l.drainEmits()
	for l.head < len(l.ready) {
		if l.ready[l.head].w == nil {
			return l.pop()
		}
		l.ready[l.head].w.queued = false
		l.ready[l.head] = pending[K]{}
		l.head++
	}
	var zero K
	return zero, false
}

// pop takes the first delivery that is still valid off the ready queue.
func (l *Loop[K]) pop() (K, bool) {
	for l.head < len(l.ready) {
		p := l.ready[l.head]
		l.ready[l.head] = pending[K]{}
		l.head++
		if l.head == len(l.ready) {
			l.ready, l.head = l.ready[:0], 0
			if cap(l.ready) > 1<<16 {
				l.ready = nil // a burst is over: do not keep its memory
			}
		}
		w := p.w
		if w == nil {
			return p.key, true
		}
		w.queued = false
		if !w.live {
			continue
		}
		if w.fired {
			l.remove(w)
		}
		return p.key, true
	}
	var zero K
	return zero, false
}

// Events returns an iterator over the keys Next returns. Iteration ends when
// the loop is stopped or fails (Err says which); a Signal does not end it.
// A failure of the poller need not be the end of the loop: the application
// may iterate again. Must be used on the owning goroutine.
func (l *Loop[K]) Events() iter.Seq[K] {
	return func(yield func(K) bool) {
		l.err = nil
		for {
			k, err := l.Next()
			switch {
			case err == nil:
				if !yield(k) {
					return
				}
			case errors.Is(err, ErrSignaled):
			case errors.Is(err, ErrStopped):
				return
			default:
				l.err = err
				return
			}
		}
	}
}

// Err returns the error that ended the last iteration over Events, or nil
// if it ended because the loop was stopped or the caller broke out, or has
// not ended. Each iteration starts with Err nil: a failure that ended an
// earlier one is not reported again. Next's errors are its own, and do not
// change Err.
func (l *Loop[K]) Err() error { return l.err }

// Close stops the loop and releases it: its poller and timers, and every
// watch. It does not close watched fds. Close may be called more than once.
// Must be called on the owning goroutine.
func (l *Loop[K]) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	l.Stop()
	l.loop.Close()
	for _, w := range l.watches {
		w.live = false
	}
	clear(l.watches)
	clear(l.fds)
	clear(l.always)
	l.ready, l.head = nil, 0
	return nil
}
