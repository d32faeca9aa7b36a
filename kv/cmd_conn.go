package kv

import (
	"crypto/subtle"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// serverVersion is the Redis version whose behaviour evkv follows, as
// HELLO and INFO report it.
const serverVersion = "7.0.0"

func init() {
	register(
		cmd("ping", -1, "fast", 0, 0, 0, "connection", "1.0.0", "Returns the server's liveliness response.", pingCommand),
		cmd("echo", 2, "loading stale fast", 0, 0, 0, "connection", "1.0.0", "Returns the given string.", echoCommand),
		cmd("select", 2, "loading stale fast", 0, 0, 0, "connection", "1.0.0", "Changes the selected database.", selectCommand),
		cmd("quit", -1, "allow_busy noscript loading stale fast no_auth", 0, 0, 0, "connection", "1.0.0", "Closes the connection.", quitCommand),
		cmd("auth", -2, "noscript loading stale fast no_auth allow_busy", 0, 0, 0, "connection", "1.0.0", "Authenticates the connection.", authCommand),
		cmd("hello", -1, "noscript loading stale fast no_auth allow_busy", 0, 0, 0, "connection", "6.0.0", "Handshakes with the server.", helloCommand),
		cmd("reset", 1, "noscript loading stale fast no_auth allow_busy", 0, 0, 0, "connection", "6.2.0", "Resets the connection.", resetCommand),
		cmd("client", -2, "", 0, 0, 0, "connection", "2.4.0", "A container for client connection commands.", nil).withSubs(
			cmd("id", 2, "noscript loading stale", 0, 0, 0, "", "5.0.0", "Returns the unique client ID of the connection.", clientID),
			cmd("setname", 3, "noscript loading stale", 0, 0, 0, "", "2.6.9", "Sets the connection name.", clientSetName),
			cmd("getname", 2, "noscript loading stale", 0, 0, 0, "", "2.6.9", "Returns the name of the connection.", clientGetName),
			cmd("list", -2, "admin noscript loading stale", 0, 0, 0, "", "2.4.0", "Lists open connections.", clientList),
			cmd("info", 2, "noscript loading stale", 0, 0, 0, "", "6.2.0", "Returns information about the connection.", clientInfo),
			cmd("setinfo", 4, "noscript loading stale", 0, 0, 0, "", "7.2.0", "Sets information specific to the client or connection.", clientSetInfo),
			cmd("kill", -3, "admin noscript loading stale", 0, 0, 0, "", "2.4.0", "Terminates open connections.", clientKill),
			cmd("unblock", -3, "admin noscript loading stale", 0, 0, 0, "", "5.0.0", "Unblocks a client blocked by a blocking command from a different connection.", clientUnblock),
			cmd("reply", 3, "noscript loading stale", 0, 0, 0, "", "3.2.0", "Instructs the server whether to reply to commands.", clientReply),
			cmd("no-evict", 3, "admin noscript loading stale", 0, 0, 0, "", "7.0.0", "Sets the client eviction mode of the connection.", clientNoEvict),
			cmd("pause", -3, "admin noscript loading stale", 0, 0, 0, "", "2.9.50", "Suspends commands processing.", clientPause),
			cmd("unpause", 2, "admin noscript loading stale", 0, 0, 0, "", "6.2.0", "Resumes processing commands from paused clients.", clientUnpause),
			cmd("tracking", -3, "noscript loading stale", 0, 0, 0, "", "6.0.0", "Controls server-assisted client-side caching for the connection.", clientTracking),
			cmd("caching", 3, "noscript loading stale", 0, 0, 0, "", "6.0.0", "Instructs the server whether to track the keys in the next request.", clientCaching),
			cmd("getredir", 2, "noscript loading stale", 0, 0, 0, "", "6.0.0", "Returns the client ID to which the connection's tracking notifications are redirected.", clientGetRedir),
			cmd("trackinginfo", 2, "noscript loading stale", 0, 0, 0, "", "6.2.0", "Returns information about server-assisted client-side caching for the connection.", clientTrackingInfo),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "5.0.0", "Returns helpful text about the different subcommands.", clientHelp),
		),
	)
}

func pingCommand(s *Server, c *client, args [][]byte) {
	if len(args) > 2 {
		s.w.Error("ERR wrong number of arguments for 'ping' command")
		return
	}
	if c.inPubSub() {
		s.w.Array(2)
		s.w.BulkString("pong")
		if len(args) == 2 {
			s.w.Bulk(args[1])
		} else {
			s.w.BulkString("")
		}
		return
	}
	if len(args) == 2 {
		s.w.Bulk(args[1])
		return
	}
	s.w.Simple("PONG")
}

func echoCommand(s *Server, c *client, args [][]byte) { s.w.Bulk(args[1]) }

func selectCommand(s *Server, c *client, args [][]byte) {
	i, ok := parseInt(args[1])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	if i < 0 || i >= int64(len(s.dbs)) {
		s.w.Error(errDBIndex)
		return
	}
	c.db = s.dbs[i]
	s.w.OK()
}

func quitCommand(s *Server, c *client, args [][]byte) {
	s.w.OK()
	c.flags |= flagCloseAfterReply
}

// checkPassword reports whether user and pass authenticate as the default
// user, the only one there is.
func (s *Server) checkPassword(user, pass []byte) bool {
	if string(user) != "default" {
		return false
	}
	if s.cfg.RequirePass == "" {
		return true // the default user has no password: any will do
	}
	return subtle.ConstantTimeCompare(pass, []byte(s.cfg.RequirePass)) == 1
}

func authCommand(s *Server, c *client, args [][]byte) {
	if len(args) > 3 {
		s.w.Error(errSyntax)
		return
	}
	user, pass := []byte("default"), args[1]
	if len(args) == 3 {
		user, pass = args[1], args[2]
	} else if s.cfg.RequirePass == "" {
		s.w.Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	if !s.checkPassword(user, pass) {
		s.w.Error(errWrongPass)
		return
	}
	c.authenticated = true
	s.w.OK()
}

func helloCommand(s *Server, c *client, args [][]byte) {
	proto := c.proto
	if len(args) >= 2 {
		v, ok := parseInt(args[1])
		if !ok {
			s.w.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v != 2 && v != 3 {
			s.w.Error("NOPROTO unsupported protocol version")
			return
		}
		proto = int(v)
	}
	var name []byte
	setName := false
	for i := 2; i < len(args); i++ {
		more := len(args) - i - 1
		switch opt := strings.ToLower(string(args[i])); {
		case opt == "auth" && more >= 2:
			if !s.checkPassword(args[i+1], args[i+2]) {
				s.w.Error(errWrongPass)
				return
			}
			c.authenticated = true
			i += 2
		case opt == "setname" && more >= 1:
			name, setName = args[i+1], true
			if msg := validName(name); msg != "" {
				s.w.Error(msg)
				return
			}
			i++
		default:
			s.w.Error("ERR Syntax error in HELLO option '" + string(args[i]) + "'")
			return
		}
	}
	if !c.authenticated {
		s.w.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if setName {
		c.name = string(name)
	}
	c.proto = proto
	s.w.Proto = proto
	s.w.Map(7)
	s.w.BulkString("server")
	s.w.BulkString("redis")
	s.w.BulkString("version")
	s.w.BulkString(serverVersion)
	s.w.BulkString("proto")
	s.w.Int(int64(proto))
	s.w.BulkString("id")
	s.w.Int(c.id)
	s.w.BulkString("mode")
	s.w.BulkString("standalone")
	s.w.BulkString("role")
	s.w.BulkString("master")
	s.w.BulkString("modules")
	s.w.Array(0)
}

func resetCommand(s *Server, c *client, args [][]byte) {
	s.discardMulti(c)
	s.unwatchAll(c)
	s.unsubscribeAll(c)
	s.stopMonitor(c)
	s.disableTracking(c)
	c.db = s.dbs[0]
	c.proto = 2
	s.w.Proto = 2
	c.name = ""
	c.flags &^= flagNoEvict | flagReplyOff | flagReplySkipNext
	c.authenticated = s.cfg.RequirePass == ""
	s.w.Simple("RESET")
}

func clientID(s *Server, c *client, args [][]byte) { s.w.Int(c.id) }

// validName returns the error for a client name with spaces or odd bytes.
func validName(name []byte) string {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			return "ERR Client names cannot contain spaces, newlines or special characters."
		}
	}
	return ""
}

func clientSetName(s *Server, c *client, args [][]byte) {
	if msg := validName(args[2]); msg != "" {
		s.w.Error(msg)
		return
	}
	c.name = string(args[2])
	s.w.OK()
}

func clientGetName(s *Server, c *client, args [][]byte) {
	if c.name == "" {
		s.w.Null()
		return
	}
	s.w.BulkString(c.name)
}

func clientSetInfo(s *Server, c *client, args [][]byte) {
	val := args[3]
	for _, ch := range val {
		if ch < '!' || ch > '~' {
			s.w.Error("ERR " + string(args[2]) + " cannot contain spaces, newlines or special characters.")
			return
		}
	}
	switch strings.ToLower(string(args[2])) {
	case "lib-name":
		c.libName = string(val)
	case "lib-ver":
		c.libVer = string(val)
	default:
		s.w.Error("ERR Unrecognized option '" + string(args[2]) + "'")
		return
	}
	s.w.OK()
}

// describe is a client's line in CLIENT LIST and CLIENT INFO.
func (s *Server) describe(c *client, now time.Time) string {
	flags := ""
	// In Redis's order.
	for _, f := range []struct {
		on bool
		ch string
	}{
		{c.flags&flagMonitor != 0, "O"}, {c.subscriptions() > 0, "P"}, {c.flags&flagMulti != 0, "x"},
		{c.blocked() || c.postponed, "b"}, {c.track&trackOn != 0, "t"}, {c.track&trackBrokenRedir != 0, "R"},
		{c.track&trackBcast != 0, "B"}, {c.flags&flagDirtyCAS != 0, "d"}, {c.flags&flagCloseAfterReply != 0, "c"},
		{c.closeASAP, "A"}, {isUnix(c.conn.LocalAddr()), "U"}, {c.flags&flagNoEvict != 0, "e"},
	} {
		if f.on {
			flags += f.ch
		}
	}
	if flags == "" {
		flags = "N"
	}
	multi := -1
	if c.flags&flagMulti != 0 {
		multi = len(c.multi)
	}
	addr, laddr := clientAddrs(c)
	cmdName := c.lastCmd
	if cmdName == "" {
		cmdName = "NULL"
	}
	// Redis's memory figures, as evkv holds them: the query buffer is the
	// bytes received and not yet run (qbuf-free, the room left in the
	// chunk that holds them); the arguments are those of the command
	// running (CLIENT LIST's own, for the client that sent it) and, in
	// MULTI, those queued; replies are queued on the connection, in 16
	// KiB blocks as Redis counts its reply list (obl, the fixed reply
	// buffer, and rbs, rbp, its size and peak, are evkv's loop's, not the
	// client's: 0).
	qbuf := c.conn.InboundBuffered()
	qfree := 0
	if qbuf > 0 {
		qfree = (qbuf+queryChunk-1)/queryChunk*queryChunk - qbuf
	}
	argvMem := 0
	if c == s.cur {
		for _, a := range s.curArgs {
			argvMem += len(a)
		}
	}
	multiMem := 0
	for _, q := range c.multi {
		multiMem += int(unsafe.Sizeof(q)) + len(q)*int(unsafe.Sizeof(q[0]))
		for _, a := range q {
			multiMem += len(a)
		}
	}
	omem := c.conn.OutboundBuffered()
	oll := (omem + replyBlock - 1) / replyBlock
	totMem := int(unsafe.Sizeof(*c)) + qbuf + qfree + argvMem + multiMem + omem
	events := "r"
	if omem > 0 {
		events = "rw"
	}
	redir := int64(-1)
	if c.track&trackOn != 0 {
		redir = c.redirect
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d multi=%d qbuf=%d qbuf-free=%d argv-mem=%d multi-mem=%d rbs=0 rbp=0 obl=0 oll=%d omem=%d tot-mem=%d events=%s cmd=%s user=default redir=%d resp=%d lib-name=%s lib-ver=%s",
		c.id, addr, laddr, c.conn.Fd(), c.name, int64(now.Sub(c.created).Seconds()), max(0, (now.UnixMilli()-c.lastActive)/1000),
		flags, c.db.id, len(c.channels), len(c.patterns), len(c.shards), multi, qbuf, qfree, argvMem, multiMem,
		oll, omem, totMem, events, cmdName, redir, c.proto, c.libName, c.libVer)
}

// queryChunk and replyBlock are the sizes CLIENT LIST counts a query
// buffer's room and a reply list's blocks in: evloop's chunk, Redis's
// PROTO_REPLY_CHUNK_BYTES.
const (
	queryChunk = 16 << 10
	replyBlock = 16 << 10
)

// sortedClients returns the clients by id.
func (s *Server) sortedClients() []*client {
	all := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		all = append(all, c)
	}
	slices.SortFunc(all, func(a, b *client) int { return int(a.id - b.id) })
	return all
}

// clientList is CLIENT LIST, as Redis 7.0 reads its arguments: TYPE and a
// type, or ID and any integers, whose clients are listed in that order.
func clientList(s *Server, c *client, args [][]byte) {
	var b strings.Builder
	now := time.Now()
	list := func(cl *client) {
		b.WriteString(s.describe(cl, now))
		b.WriteByte('\n')
	}
	switch {
	case len(args) == 4 && isName(args[2], "type"):
		typ := strings.ToLower(string(args[3]))
		if typ != "normal" && typ != "pubsub" && typ != "master" && typ != "replica" && typ != "slave" {
			s.w.Error("ERR Unknown client type '" + string(args[3]) + "'")
			return
		}
		for _, cl := range s.sortedClients() {
			if (typ == "normal" && cl.subscriptions() == 0) || (typ == "pubsub" && cl.subscriptions() > 0) {
				list(cl)
			}
		}
	case len(args) >= 4 && isName(args[2], "id"):
		for _, a := range args[3:] {
			id, ok := parseInt(a)
			if !ok {
				s.w.Error("ERR Invalid client ID")
				return
			}
			if cl := s.clients[id]; cl != nil {
				list(cl)
			}
		}
	case len(args) != 2:
		s.w.Error(errSyntax)
		return
	default:
		for _, cl := range s.sortedClients() {
			list(cl)
		}
	}
	s.w.Verbatim("txt", []byte(b.String()))
}

func clientInfo(s *Server, c *client, args [][]byte) {
	s.w.Verbatim("txt", []byte(s.describe(c, time.Now())+"\n"))
}

func clientKill(s *Server, c *client, args [][]byte) {
	if len(args) == 3 { // the old form: CLIENT KILL addr:port
		for _, cl := range s.sortedClients() {
			if a, _ := clientAddrs(cl); a != "" && a == string(args[2]) {
				s.kill(c, cl)
				s.w.OK()
				return
			}
		}
		s.w.Error("ERR No such client")
		return
	}
	var id int64
	var addr, laddr, typ string
	skipMe := true
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			s.w.Error(errSyntax)
			return
		}
		val := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "id":
			n, ok := parseInt(args[i+1])
			if !ok || n <= 0 {
				s.w.Error("ERR client-id should be greater than 0")
				return
			}
			id = n
		case "addr":
			addr = val
		case "laddr":
			laddr = val
		case "type":
			typ = strings.ToLower(val)
			if typ != "normal" && typ != "pubsub" && typ != "master" && typ != "replica" && typ != "slave" {
				s.w.Error("ERR Unknown client type '" + val + "'")
				return
			}
		case "user":
			// default is the one user there is, as without ACL in Redis.
			if val != "default" {
				s.w.Error("ERR No such user '" + val + "'")
				return
			}
		case "skipme":
			switch strings.ToLower(val) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				s.w.Error(errSyntax)
				return
			}
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	killed := 0
	for _, cl := range s.sortedClients() {
		var claddr, clladdr string
		if addr != "" || laddr != "" {
			claddr, clladdr = clientAddrs(cl) // asks the kernel: only when matched on
		}
		switch {
		case id != 0 && cl.id != id,
			addr != "" && claddr != addr,
			laddr != "" && clladdr != laddr,
			typ == "pubsub" && cl.subscriptions() == 0,
			typ == "normal" && cl.subscriptions() > 0,
			typ == "master" || typ == "replica" || typ == "slave",
			skipMe && cl == c:
			continue
		}
		s.kill(c, cl)
		killed++
	}
	s.w.Int(int64(killed))
}

// kill closes victim: at once, or after this reply if it is the caller.
func (s *Server) kill(caller, victim *client) {
	if victim == caller {
		victim.flags |= flagCloseAfterReply
		return
	}
	s.closeClient(victim)
}

func clientUnblock(s *Server, c *client, args [][]byte) {
	id, ok := parseInt(args[2])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	withError := false
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
		case "timeout":
		case "error":
			withError = true
		default:
			s.w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	} else if len(args) > 4 {
		s.w.Error(errSyntax)
		return
	}
	target := s.clients[id]
	if target == nil || !target.blocked() {
		s.w.Int(0)
		return
	}
	if b := target.block; b.cmd != nil {
		s.timed(target, b.cmd, nil, b.took) // Redis's histogram counts it; its slow log does not
		s.cmdStats[b.cmd.id].failed++       // either way, as Redis counts it
	}
	if withError {
		s.unblockWithError(target, "UNBLOCKED client unblocked via CLIENT UNBLOCK")
	} else {
		s.unblockTimeout(target)
	}
	s.w.Int(1)
}

func clientNoEvict(s *Server, c *client, args [][]byte) {
	switch strings.ToLower(string(args[2])) {
	case "on":
		c.flags |= flagNoEvict
	case "off":
		c.flags &^= flagNoEvict
	default:
		s.w.Error(errSyntax)
		return
	}
	s.w.OK()
}

// clientReply is CLIENT REPLY: OFF drops the replies to c's commands
// from then on, SKIP the reply to its next command (unless OFF), ON
// neither; the replies dropped are written and discarded by endCommand,
// pub/sub messages excepted.
func clientReply(s *Server, c *client, args [][]byte) {
	switch strings.ToLower(string(args[2])) {
	case "on":
		c.flags &^= flagReplySkip | flagReplyOff
		s.w.OK()
	case "off":
		c.flags |= flagReplyOff
	case "skip":
		if c.flags&flagReplyOff == 0 {
			c.flags |= flagReplySkipNext
		}
	default:
		s.w.Error(errSyntax)
	}
}

func clientHelp(s *Server, c *client, args [][]byte) {
	s.help("CLIENT",
		"CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
		"ID", "    Return the ID of the current connection.",
		"GETNAME", "    Return the name of the current connection.",
		"INFO", "    Return information about the current client connection.",
		"KILL <ip:port>", "    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME.",
		"LIST [TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID <id> [<id> ...]]", "    Return information about client connections.",
		"NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
		"PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
		"UNPAUSE", "    Stop the current client pause, resuming traffic.",
		"REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
		"SETINFO <option> <value>", "    Set client meta attributes: LIB-NAME and LIB-VER.",
		"SETNAME <name>", "    Assign the name <name> to the current connection.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]", "         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO", "    Report tracking status for the current connection.",
	)
}

// help replies with a command's HELP text, in Redis's layout.
func (s *Server) help(name string, lines ...string) {
	s.w.Array(1 + len(lines) + 2)
	s.w.Simple(name + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		s.w.Simple(l)
	}
	s.w.Simple("HELP")
	s.w.Simple("    Prints this help.")
}

// intArg parses arg, a command's integer argument, and checks it against
// [min, max]: not an integer, it answers errNotInt, outside the range
// outOfRange, and reports false.
func (s *Server) intArg(arg []byte, min, max int64, outOfRange string) (int64, bool) {
	v, ok := parseInt(arg)
	if !ok {
		s.w.Error(errNotInt)
		return 0, false
	}
	if v < min || v > max {
		s.w.Error(outOfRange)
		return 0, false
	}
	return v, true
}

// parseInt parses a decimal integer as Redis's string2ll does: an optional
// minus sign, no leading zeros or spaces, no overflow.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, ch := range d {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		if v > (1<<64-1)/10 {
			return 0, false
		}
		v = v*10 + uint64(ch-'0')
		if v < uint64(ch-'0') {
			return 0, false
		}
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}
