package ws

import (
	"sync"
	"sync/atomic"

	"github.com/evloop/evloop"
)

// Group is a set of connections a message can be broadcast to: the
// message is framed (and compressed) once, and each loop writes that one
// frame to its own members. Multiple goroutines may invoke methods on a
// Group simultaneously: a connection is added in OnOpen, say, and removed
// in OnClose, which with Options.Workers may run on a worker once the loop
// has stopped. A connection belongs to a Group until removed. Members may
// come from several servers, a Dialer's among them: each loop of each
// server writes to its own.
type Group struct {
	mu    sync.Mutex // guards loops, each groupLoop's members, and deflaters
	loops map[loopKey]*groupLoop
	// deflaters counts the server's members that negotiated
	// permessage-deflate, for which a broadcast is compressed (a
	// client's member compresses its own), by the window their clients
	// allowed (Conn.window; 0: none named).
	deflaters [16]int
}

// compressesFor reports whether a broadcast of n bytes is compressed for
// some member: one that negotiated permessage-deflate with a window that
// takes n bytes.
func (g *Group) compressesFor(n int) bool {
	for w, count := range g.deflaters {
		if count > 0 && windowTakes(uint8(w), n) {
			return true
		}
	}
	return false
}

// takesCompressed reports whether c is written Broadcast's compressed frame.
func takesCompressed(c *Conn) bool { return c.deflate && !c.client }

// loopKey names a loop: a loop's index is its server's own.
type loopKey struct {
	s *evloop.Server
	i int
}

func keyOf(c *Conn) loopKey { return loopKey{c.c.Server(), c.c.Loop()} }

// groupLoop is a Group's members on one loop, written to by that loop.
type groupLoop struct {
	loop    loopKey
	members map[*Conn]struct{}
}

// Add adds c to the group. Call it on c's loop (in OnOpen, or through
// Submit from a pooled handler), so that it cannot come after the OnClose
// that removes c: a connection added once closed stays in the group,
// sent nothing, until removed.
func (g *Group) Add(c *Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.loops == nil {
		g.loops = make(map[loopKey]*groupLoop)
	}
	k := keyOf(c)
	gl := g.loops[k]
	if gl == nil {
		gl = &groupLoop{loop: k, members: make(map[*Conn]struct{})}
		g.loops[k] = gl
	}
	if _, ok := gl.members[c]; !ok && takesCompressed(c) {
		g.deflaters[c.window]++
	}
	gl.members[c] = struct{}{}
}

// Remove removes c from the group. A loop whose last member leaves is
// forgotten, so that a Group holds nothing of a server, or Dialer, whose
// members all left.
func (g *Group) Remove(c *Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := keyOf(c)
	if gl := g.loops[k]; gl != nil {
		if _, ok := gl.members[c]; ok && takesCompressed(c) {
			g.deflaters[c.window]--
		}
		delete(gl.members, c)
		if len(gl.members) == 0 {
			delete(g.loops, k)
		}
	}
}

// membersOf returns gl's members, appended to to.
func (g *Group) membersOf(gl *groupLoop, to []*Conn) []*Conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range gl.members {
		to = append(to, c)
	}
	return to
}

// memberLists hold the members a loop is writing a broadcast to.
var memberLists sync.Pool

// Broadcast sends a message to every member. The frame is built once,
// uncompressed and, if the message is long enough and some member
// negotiated permessage-deflate with a window that takes it, compressed;
// each loop then queues it on its members. o gives that frame's
// CompressionThreshold and CompressionLevel (nil: the defaults), whatever
// the Options the members were opened with. A client's connection (from
// Dialer.Dial) gets a frame of its own, as it masks each with a fresh
// key, compressed as its own Options say. A member whose outbound queue
// cannot take the message is closed as Send closes it: the messages
// queued before it go out, then a close frame with 1008; its peer would
// otherwise get a stream with one missing. data is copied: the frames are
// held until every loop has queued them, each member's queue taking a
// copy of its own. done, if not nil, is called once every loop has queued
// it (on the last loop to do so, or before Broadcast returns if no loop
// took it: the group is empty, or its loops have stopped).
//
// Broadcasts made one after the other (by one goroutine, say) reach every
// member in that order, and after the Sends made before them; ones made
// at once by several goroutines reach the members of one loop in one
// order, but members on different loops may get them in different
// orders. Called on a loop (in OnMessage, say), Broadcast queues the
// message behind what that handler writes after it with WriteMessage.
//
// It fails, sending nothing and calling no done, for an opcode other than
// Text or Binary or text that is not UTF-8 (ErrNotUTF8).
func (g *Group) Broadcast(op Opcode, data []byte, o *Options, done func()) error {
	if err := checkMessage(op, data); err != nil {
		return err
	}
	if o == nil {
		o = &zeroOptions
	}
	plain := appendFrame(make([]byte, 0, len(data)+maxHeader), true, false, op, data, nil)
	payload := plain[len(plain)-len(data):] // data's copy, for client members
	g.mu.Lock()
	loops := make([]*groupLoop, 0, len(g.loops))
	for _, gl := range g.loops {
		loops = append(loops, gl)
	}
	compressing := len(data) >= o.threshold() && g.compressesFor(len(data))
	g.mu.Unlock()
	var compressed []byte
	if compressing {
		z := compress(nil, data, o.CompressionLevel)
		compressed = appendFrame(make([]byte, 0, len(z)+maxHeader), true, true, op, z, nil)
	}
	left := atomic.Int32{}
	left.Store(int32(len(loops)))
	finished := func() {
		if left.Add(-1) == 0 && done != nil {
			done()
		}
	}
	if len(loops) == 0 && done != nil {
		done()
	}
	for _, gl := range loops {
		err := gl.loop.s.Submit(gl.loop.i, func() {
			defer finished()
			// The members are taken first: writing to one may close
			// it, and its OnClose remove it.
			lp, _ := memberLists.Get().(*[]*Conn)
			if lp == nil {
				lp = new([]*Conn)
			}
			members := g.membersOf(gl, (*lp)[:0])
			defer func() {
				clear(members)
				*lp = members[:0]
				memberLists.Put(lp)
			}()
			for _, c := range members {
				if c.flags&fCloseSent != 0 || c.c.Closed() {
					continue
				}
				var err error
				switch {
				case c.client:
					err = c.writeMessage(op, payload) // masked with a key of its own
				case compressed != nil && takesCompressed(c) && c.windowFits(len(data)):
					_, err = c.c.Write(compressed)
				default:
					_, err = c.c.Write(plain)
				}
				c.wrote(err)
			}
		})
		if err != nil {
			finished()
		}
	}
	return nil
}
