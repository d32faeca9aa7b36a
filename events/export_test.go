package events

// Sleeping reports whether the loop is blocked in the kernel, so tests can
// act on a loop that is really waiting.
func (l *Loop[K]) Sleeping() bool { return l.loop.Sleeping() }

// Queued returns how many deliveries wait in the ready queue for Next.
func (l *Loop[K]) Queued() int {
	n := 0
	for _, p := range l.ready[l.head:] {
		if p.w == nil || p.w.live {
			n++
		}
	}
	return n
}
