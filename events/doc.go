// Package events is evloop's callback-less face, after Ever for Ruby: the
// application runs the loop and pulls events, each identified by a key of
// its own choosing, instead of registering callbacks.
//
//	l, err := events.New[string]()
//	...
//	defer l.Close()
//	l.WatchIO("stdin", 0, events.Read, false)
//	l.WatchTimer("tick", time.Second, time.Second)
//	for key := range l.Events() {
//		switch key {
//		case "stdin": // read from fd 0
//		case "tick":  // once a second
//		}
//	}
//
// A key names one watch: an fd watched for readiness (WatchIO) or a timer
// (WatchTimer). Keys are any comparable value of the Loop's key type: a
// string, a small struct, a pointer to the application's connection. Emit
// delivers a key from any goroutine without a watch behind it.
//
// # Goroutines
//
// A Loop belongs to the goroutine that calls Next (or ranges over Events):
// only that goroutine may call WatchIO, WatchTimer, Unwatch, Next, Events,
// Err and Close. The loop itself runs inside Next, on that goroutine: no
// goroutine is started. Emit, Signal and Stop may be called from any
// goroutine, and wake a Next that is blocked in the kernel.
//
// To spread work over several goroutines, the owner hands keys to workers
// (over a channel, say) and workers report back with Emit; the owner then
// watches the fd again. The worker example under examples/ does this.
//
// # Delivery
//
// Readiness is level-triggered: while a watched fd stays readable, each wait
// delivers its key again. A one-shot watch is delivered once and then removed,
// and the application watches again when it wants another. A key is queued at
// most once at a time: if it becomes ready again before Next has returned it,
// the two deliveries merge (a recurring timer that the application is slow to
// read skips ticks rather than queueing them). Emitted keys never merge: each
// Emit is one delivery, in the order each goroutine emitted them.
//
// Unwatch takes effect at once: after Unwatch(key) returns, Next does not
// return that key for the old watch, even if it was already queued.
package events
