package kv

import (
	"net"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/resp"
)

// client flags.
const (
	flagMulti           uint16 = 1 << iota // in MULTI: commands are queued
	flagDirtyCAS                           // a WATCHed key changed: EXEC fails
	flagDirtyExec                          // a command failed to queue: EXEC aborts
	flagCloseAfterReply                    // QUIT, a protocol error: close once the replies are out
	flagNoEvict
	flagMonitor       // MONITOR: sent every command run
	flagQueuedWrite   // in MULTI, a write command is queued
	flagQueuedDenyOOM // in MULTI, a command refused past maxmemory is queued
	flagReplyOff      // CLIENT REPLY OFF: replies are dropped
	flagReplySkipNext // CLIENT REPLY SKIP: the next command's reply is dropped
	flagReplySkip     // the reply to the command being run is dropped
	// in MULTI, a command that may change the keyspace or propagate
	// (a write, PUBLISH) is queued: CLIENT PAUSE WRITE holds EXEC back
	flagQueuedMayReplicate
)

// client is one connection's state. Owned by the loop.
type client struct {
	s             *Server
	conn          *evloop.Conn
	id            int64
	db            *db
	proto         int // 2 or 3
	authenticated bool
	flags         uint16
	closed        bool
	parser        resp.Parser
	name          string
	libName       string
	libVer        string
	created       time.Time
	lastCmd       string   // the last command's name, for CLIENT LIST
	lastTop       *command // the last command looked up by name
	lastActive    int64    // Unix ms

	multi   [][][]byte // queued in MULTI, copies
	watched []*watchedKey

	channels map[string]struct{}
	patterns map[string]struct{}
	shards   map[string]struct{} // shard channels

	block *blockState // non-nil while blocked

	// pushed holds, while c's replies are dropped, where each message
	// pushed to it by the command being run begins and ends in the
	// server's writer: pairs of offsets, kept by endCommand.
	pushed []int

	// softLimitSince is when, in Unix seconds, the output buffer was first
	// seen past its soft limit (0: it is not); closeASAP marks a client
	// to be closed before the loop flushes.
	softLimitSince int64
	closeASAP      bool
	peerID         string // the peer's address (peer), once asked

	// Client-side caching (tracking.go): the tracking flags, the ID
	// invalidation messages go to (0: this connection), the BCAST
	// prefixes, sorted, and the messages its own command's changes gave
	// it, sent after the command's reply.
	track        uint8
	redirect     int64
	prefixes     []string
	pendingInval []pendingInvalidation
	// postponed is whether c waits for CLIENT PAUSE to end, its next
	// command not run (pause.go).
	postponed bool
	// script marks the client that runs the scripts' commands, which has
	// no connection.
	script bool
	// cmdClient is whether the command being run is a CLIENT command,
	// after which CLIENT CACHING's word still holds, as in Redis.
	cmdClient bool
}

func newClient(s *Server, conn *evloop.Conn, id int64) *client {
	c := &client{s: s, conn: conn, id: id, db: s.dbs[0], proto: 2, created: time.Now()}
	c.authenticated = s.cfg.RequirePass == ""
	c.parser.MaxBulk = s.cfg.ProtoMaxBulkLen
	return c
}

func (c *client) blocked() bool { return c.block != nil }

// silenced reports whether c's replies are dropped, by CLIENT REPLY OFF
// or SKIP.
func (c *client) silenced() bool { return c.flags&(flagReplyOff|flagReplySkip) != 0 }

// nextCommand ends the silence of CLIENT REPLY SKIP, which lasts one
// command, or begins it after CLIENT REPLY SKIP.
func (c *client) nextCommand() {
	c.flags &^= flagReplySkip
	if c.flags&flagReplySkipNext != 0 {
		c.flags ^= flagReplySkipNext | flagReplySkip
	}
}

// peer returns the client's address as Redis names it in CLIENT LIST,
// CLIENT KILL's matching and SLOWLOG ("127.0.0.1:5000", or for a Unix
// socket's client "<path>:0"), read once.
func (c *client) peer() string {
	if c.peerID == "" {
		c.peerID, _ = clientAddrs(c)
	}
	return c.peerID
}

// subscriptions returns how many channels, patterns and shard channels c
// is subscribed to: any makes it a pub/sub client.
func (c *client) subscriptions() int { return len(c.channels) + len(c.patterns) + len(c.shards) }

// globalSubscriptions returns how many channels and patterns c is
// subscribed to, the count SUBSCRIBE's and PSUBSCRIBE's replies carry.
func (c *client) globalSubscriptions() int { return len(c.channels) + len(c.patterns) }

// inPubSub reports whether c is in RESP2's subscribed mode, where only the
// subscription commands, PING, QUIT and RESET are served.
func (c *client) inPubSub() bool { return c.proto == 2 && c.subscriptions() > 0 }

// addrString is a's text, or "" if there is none.
func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// isUnix reports whether a is a Unix socket's address.
func isUnix(a net.Addr) bool {
	_, ok := a.(*net.UnixAddr)
	return ok
}

// clientAddrs returns c's address and its local one as Redis names them
// in CLIENT LIST and finds them in CLIENT KILL: host:port, or, for a
// client of a Unix socket, the socket's path and port 0 for both.
func clientAddrs(c *client) (addr, laddr string) {
	local := c.conn.LocalAddr()
	if ua, ok := local.(*net.UnixAddr); ok {
		return ua.Name + ":0", ua.Name + ":0"
	}
	return addrString(c.conn.RemoteAddr()), addrString(local)
}
