package kv

import (
	"cmp"
	"slices"
	"strings"

	"github.com/evloop/evloop/resp"
)

// Client-side caching, as Redis 7.0's CLIENT TRACKING: the server
// remembers which clients read which keys and tells them, once, when a key
// changes, so that they may keep what they read.
//
// In the default mode a client that reads a key with a read-only command
// is noted in the tracking table under the key's name (of any database:
// the table does not tell databases apart, as Redis's does not); when the
// key changes, is deleted, expires or is evicted, each client noted is
// sent an invalidation message and the key leaves the table, so a client
// hears of a key once for each time it read it. OPTIN notes a client's
// reads only after CLIENT CACHING yes, for the next command (or
// transaction); OPTOUT notes them unless CLIENT CACHING no came. In BCAST
// mode nothing is noted: a client names prefixes (none: every key) and
// hears of every change to a key with one of them, gathered over a loop
// iteration into one message a prefix. NOLOOP spares a client the messages
// about its own changes. A flush (FLUSHDB, FLUSHALL, SWAPDB, DEBUG RELOAD)
// sends every tracking client one message with a null in place of the
// keys: all of them.
//
// The messages are RESP3 push messages ("invalidate" and the keys); a
// RESP2 client takes them through another connection (REDIRECT its ID)
// subscribed to __redis__:invalidate, as Pub/Sub messages of that channel.
// A redirection to a client that has gone is noted (the 'R' flag of
// CLIENT LIST, "broken_redirect" in CLIENT TRACKINGINFO) and told to a
// RESP3 client as a "tracking-redir-broken" push message.
//
// tracking-table-max-keys bounds the keys in the table: past it, keys are
// dropped at random with their invalidation messages sent, as if they had
// changed, by the cron and before each command.

// Tracking flags of a client (client.track).
const (
	trackOn          uint8 = 1 << iota
	trackBcast             // BCAST: told of keys by prefix, not by what it read
	trackOptin             // its reads are noted only after CLIENT CACHING yes
	trackOptout            // its reads are noted unless CLIENT CACHING no came
	trackCaching           // CLIENT CACHING (yes with OPTIN, no with OPTOUT) came for the next command
	trackNoloop            // not told of its own changes
	trackBrokenRedir       // the client its messages go to has gone
)

// tracker is the server's tracking state.
type tracker struct {
	clients int // with tracking on
	// table holds, by key name, the IDs of the clients that read the key
	// since it last changed; nil until a client first turns tracking on,
	// as Redis's, so that a server nobody tracks on pays a nil check a
	// change.
	table map[string]map[int64]struct{}
	items int // the IDs in table
	peak  int // the most keys table held since it was made (shrunk)
	// prefixes are the BCAST prefixes with their clients and the keys
	// changed since the last broadcast; changed names those with keys
	// (and maybe some since emptied or dropped); lens are the lengths
	// of the prefixes, in order, with how many have each (lenCount), so
	// that the prefixes a key begins with are found by looking its own
	// beginnings up, not by going through every prefix at each change
	// and each iteration, as Redis does (100,000 prefixes made each
	// write cost 3 ms, and each iteration 1 ms).
	prefixes map[string]*bcastPrefix
	changed  []string
	lens     []int
	lenCount map[int]int
	maxKeys  int64 // tracking-table-max-keys; 0: no bound
	// overLimit counts the runs of limitTable in a row that left the
	// table past maxKeys: each tries harder.
	overLimit int
}

// bcastPrefix is a BCAST prefix: its clients and the keys with it changed
// since the last broadcast, each with the client that changed it last
// (nil: none, an expiry or an eviction), for NOLOOP.
type bcastPrefix struct {
	clients map[*client]struct{}
	keys    map[string]*client
}

// pendingInvalidation is an invalidation message for the client whose
// command is running, sent after its reply: a key's, or, with all, a
// flush's; from is the ID of the tracking client whose message it is when
// that is another client redirecting to this one (0: its own).
type pendingInvalidation struct {
	key  string
	all  bool
	from int64
}

// trackingChannel is the Pub/Sub channel a RESP2 client hears the
// messages of the clients redirecting to it on.
const trackingChannel = "__redis__:invalidate"

// enableTracking turns tracking on for c, or changes its options: redirect
// is the ID its messages go to (0: its own connection); prefixes, for
// BCAST, are checked by the caller.
func (s *Server) enableTracking(c *client, redirect int64, flags uint8, prefixes []string) {
	t := &s.track
	if c.track&trackOn == 0 {
		t.clients++
	}
	c.track = c.track&trackCaching | trackOn | flags&(trackBcast|trackOptin|trackOptout|trackNoloop)
	c.redirect = redirect
	if t.table == nil {
		t.table = make(map[string]map[int64]struct{})
		t.prefixes = make(map[string]*bcastPrefix)
	}
	if flags&trackBcast == 0 {
		return
	}
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	for _, p := range prefixes {
		bp := t.prefixes[p]
		if bp == nil {
			bp = &bcastPrefix{clients: make(map[*client]struct{}), keys: make(map[string]*client)}
			t.prefixes[p] = bp
			t.addLen(len(p))
		}
		if _, ok := bp.clients[c]; !ok {
			bp.clients[c] = struct{}{}
			c.prefixes = append(c.prefixes, p)
		}
	}
	slices.Sort(c.prefixes)
}

// disableTracking turns tracking off for c. Its IDs stay in the table
// until their keys change, as in Redis: dropping them would cost a walk of
// the table.
func (s *Server) disableTracking(c *client) {
	t := &s.track
	for _, p := range c.prefixes {
		if bp := t.prefixes[p]; bp != nil {
			delete(bp.clients, c)
			if len(bp.clients) == 0 {
				delete(t.prefixes, p)
				t.dropLen(len(p))
			}
		}
	}
	c.prefixes = nil
	if c.track&trackOn != 0 {
		t.clients--
	}
	c.track, c.redirect = 0, 0
}

// trackRead notes the keys of a read-only command c ran, for c's cache,
// if its tracking mode asks for it.
func (s *Server) trackRead(c *client, cmd *command, args [][]byte) {
	optin, optout, caching := c.track&trackOptin != 0, c.track&trackOptout != 0, c.track&trackCaching != 0
	if optin && !caching || optout && caching || cmd.flags&cmdPubSub != 0 {
		return
	}
	t := &s.track
	for _, key := range cmd.keyArgs(args) {
		ids := t.table[string(key)]
		if ids == nil {
			ids = make(map[int64]struct{}, 1)
			t.table[string(key)] = ids
		}
		if _, ok := ids[c.id]; !ok {
			ids[c.id] = struct{}{}
			t.items++
		}
	}
	notePeak(t.table, &t.peak)
}

// invalidate tells the clients that may cache key that it changed, as
// Redis's trackingInvalidateKey: by is the client whose command changed
// it (nil: an expiry or an eviction); with bcast, the key is also noted
// for the BCAST prefixes it has. A client told is out of the key's
// clients until it reads the key again.
func (s *Server) invalidate(key []byte, by *client, bcast bool) {
	t := &s.track
	if bcast && len(t.prefixes) > 0 {
		for _, n := range t.lens {
			if n > len(key) {
				break
			}
			if bp := t.prefixes[string(key[:n])]; bp != nil {
				if len(bp.keys) == 0 {
					t.changed = append(t.changed, string(key[:n]))
				}
				bp.keys[string(key)] = by
			}
		}
	}
	ids, ok := t.table[string(key)]
	if !ok {
		return
	}
	k := string(key)
	delete(t.table, k)
	t.items -= len(ids)
	t.table = shrunk(t.table, &t.peak)
	for id := range ids {
		target := s.clients[id]
		if target == nil || target.track&(trackOn|trackBcast) != trackOn {
			continue
		}
		// Not told of its own change with NOLOOP, as Redis checks the
		// client being served, whatever changed the key.
		if target == s.cur && target.track&trackNoloop != 0 {
			continue
		}
		s.tell(target, pendingInvalidation{key: k})
	}
}

// invalidateAll tells every tracking client that every key changed, as
// Redis's trackingInvalidateKeysOnFlush, and empties the table.
func (s *Server) invalidateAll() {
	t := &s.track
	if t.table == nil {
		return
	}
	if t.clients > 0 {
		for _, c := range s.sortedClients() {
			if c.track&trackOn != 0 {
				s.tell(c, pendingInvalidation{all: true})
			}
		}
	}
	t.table = make(map[string]map[int64]struct{}) // clear would keep its memory
	t.items, t.peak = 0, 0
}

// sendPendingInvalidations sends c the messages its own command's changes
// gave it, after the command's reply (after a transaction's, for those of
// the commands in it), or as the command blocks (a key it waits on had
// expired), as Redis's trackingHandlePendingKeyInvalidations after each
// call.
//
// The messages of the clients redirecting to c come then too: written
// at once, they would land inside c's reply (EXEC's array, MGET's, where
// Redis 7.0 writes them). One whose client has gone since is dropped.
func (s *Server) sendPendingInvalidations(c *client) {
	for _, p := range c.pendingInval {
		from := c
		if p.from != 0 {
			if from = s.clients[p.from]; from == nil {
				continue
			}
		}
		s.sendInvalidated(from, p)
	}
	clear(c.pendingInval)
	c.pendingInval = c.pendingInval[:0]
}

// tell sends the tracking client c the invalidation p, or, while a command
// runs, holds it for after the command's reply when it goes to the client
// running it: c's own (its command changed the key), or that of a client
// redirecting to it (sendPendingInvalidations).
func (s *Server) tell(c *client, p pendingInvalidation) {
	switch {
	case s.running == 0 || s.cur == nil:
		s.sendInvalidated(c, p)
	case c == s.cur:
		c.pendingInval = append(c.pendingInval, p)
	case c.redirect != 0 && c.redirect == s.cur.id:
		p.from = c.id
		s.cur.pendingInval = append(s.cur.pendingInval, p)
	default:
		s.sendInvalidated(c, p)
	}
}

// sendInvalidated sends c the invalidation p: its key, or a null for all.
func (s *Server) sendInvalidated(c *client, p pendingInvalidation) {
	if p.all {
		s.sendInvalidation(c, (*resp.Writer).Null)
		return
	}
	s.sendInvalidation(c, func(w *resp.Writer) {
		w.Array(1)
		w.BulkString(p.key)
	})
}

// sendInvalidation sends the tracking client c an invalidation message
// whose keys keys writes (an array, or a null for all), on its own
// connection if it speaks RESP3, or to the client it redirects to: a push
// message to one that speaks RESP3, a message of __redis__:invalidate to
// one subscribed to anything in RESP2, nothing to others. The null of a
// flush is written in the receiving client's protocol (Redis writes it in
// the tracking client's).
func (s *Server) sendInvalidation(c *client, keys func(w *resp.Writer)) {
	to, redirected := c, c.redirect != 0
	if redirected {
		to = s.clients[c.redirect]
		if to == nil {
			c.track |= trackBrokenRedir
			if c.proto == 3 {
				w, send := s.to(c, true)
				w.Push(2)
				w.BulkString("tracking-redir-broken")
				w.Int(c.redirect)
				send()
			}
			return
		}
	}
	switch {
	case to.proto == 3:
		w, send := s.to(to, true)
		w.Push(2)
		w.BulkString("invalidate")
		keys(w)
		send()
	case redirected && to.subscriptions() > 0:
		w, send := s.to(to, true)
		w.Push(3)
		w.BulkString("message")
		w.BulkString(trackingChannel)
		keys(w)
		send()
	}
}

// broadcast sends the BCAST clients the keys changed with their prefixes
// since the last broadcast, a message a prefix, prefixes and keys in
// order, as Redis's radix trees give them; a NOLOOP client is not sent
// those it changed last. It runs at the end of each loop iteration, before
// replies are written, as Redis's beforeSleep runs
// trackingBroadcastInvalidationMessages.
func (s *Server) broadcast() {
	t := &s.track
	changed := t.changed
	t.changed = nil
	slices.Sort(changed)
	for _, p := range changed {
		bp := t.prefixes[p]
		if bp == nil || len(bp.keys) == 0 {
			continue // dropped since, or named twice (dropped, made again)
		}
		keys := make([]string, 0, len(bp.keys))
		for k := range bp.keys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for c := range bp.clients {
			own := 0
			if c.track&trackNoloop != 0 {
				for _, k := range keys {
					if bp.keys[k] == c {
						own++
					}
				}
				if own == len(keys) {
					continue
				}
			}
			s.sendInvalidation(c, func(w *resp.Writer) {
				w.Array(len(keys) - own)
				for _, k := range keys {
					if own == 0 || bp.keys[k] != c {
						w.BulkString(k)
					}
				}
			})
		}
		if len(bp.keys) >= minShrink {
			bp.keys = make(map[string]*client) // clear would keep its memory
		} else {
			clear(bp.keys)
		}
	}
}

// addLen counts a new prefix of length n.
func (t *tracker) addLen(n int) {
	if t.lenCount == nil {
		t.lenCount = make(map[int]int)
	}
	if t.lenCount[n]++; t.lenCount[n] == 1 {
		i, _ := slices.BinarySearch(t.lens, n)
		t.lens = slices.Insert(t.lens, i, n)
	}
}

// dropLen uncounts a prefix of length n that was dropped.
func (t *tracker) dropLen(n int) {
	if t.lenCount[n]--; t.lenCount[n] == 0 {
		delete(t.lenCount, n)
		if i, ok := slices.BinarySearch(t.lens, n); ok {
			t.lens = slices.Delete(t.lens, i, i+1)
		}
	}
}

// limitTable drops keys from the tracking table while it holds more than
// tracking-table-max-keys, their clients told as if the keys had changed,
// as Redis's trackingLimitUsedSlots: a hundred keys a run at most, more in
// each run that follows one that left it over the bound.
func (s *Server) limitTable() {
	t := &s.track
	if t.maxKeys == 0 || int64(len(t.table)) <= t.maxKeys {
		t.overLimit = 0
		return
	}
	effort := 100 * (t.overLimit + 1)
	// In Go's random order. invalidate may make the table again (shrunk):
	// the walk goes on over the old one, and a key of it that left the new
	// one since is passed over by invalidate.
	for key := range t.table {
		if effort == 0 {
			break
		}
		effort--
		s.invalidate([]byte(key), nil, false)
		if int64(len(t.table)) <= t.maxKeys {
			t.overLimit = 0
			return
		}
	}
	t.overLimit++
}

// keyArgs returns the keys among args, a call of cm, as COMMAND GETKEYS
// finds them: none for a command whose key range names no keys.
func (cm *command) keyArgs(args [][]byte) [][]byte {
	if cm.keys != nil {
		return cm.keys(args)
	}
	if cm.firstKey == 0 || cm.notKey {
		return nil
	}
	last := cm.lastKey
	if last < 0 {
		last = len(args) + last
	}
	var keys [][]byte
	for i := cm.firstKey; i <= last && i < len(args); i += max(cm.step, 1) {
		keys = append(keys, args[i])
	}
	return keys
}

// prefixOverlap returns the error for prefixes of which one begins
// another, or begins or is begun by one of c's, as Redis's
// checkPrefixCollisionsOrReply: it names the first of prefixes, in their
// order, that overlaps another, with the first of c's it overlaps (in
// byte order), or else the first of prefixes after it that it overlaps.
// "" if none overlap. Redis compares each with every other, which for
// 20,000 prefixes held its loop (and evkv's) for more than a second;
// here sorting finds which overlap. Redis 7.0 also goes on to turn
// tracking on, with an OK after the error, when the two are both given
// and the first is not the first given: one error, and nothing changed,
// as Redis 7.2 answers.
func prefixOverlap(c *client, prefixes []string) string {
	first := len(prefixes) // the earliest given that overlaps another
	// In byte order, a prefix comes right after those that begin it, and
	// what lies between begins with them too: a stack holds the chain of
	// those before that begin the current one, each with the earliest
	// place in prefixes of it and those under it.
	order := make([]int, len(prefixes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(prefixes[a], prefixes[b]), cmp.Compare(a, b))
	})
	type begins struct{ at, earliest int }
	var chain []begins
	for _, i := range order {
		p := prefixes[i]
		for len(chain) > 0 && !strings.HasPrefix(p, prefixes[chain[len(chain)-1].at]) {
			chain = chain[:len(chain)-1]
		}
		earliest := i
		if len(chain) > 0 {
			earliest = min(i, chain[len(chain)-1].earliest)
			first = min(first, earliest)
		}
		chain = append(chain, begins{i, earliest})
	}
	for i, p := range prefixes[:first] {
		if _, ok := firstOverlap(c.prefixes, p); ok {
			first = i
			break
		}
	}
	if first == len(prefixes) {
		return ""
	}
	p := prefixes[first]
	if q, ok := firstOverlap(c.prefixes, p); ok {
		return "ERR Prefix '" + p + "' overlaps with an existing prefix '" + q + "'. Prefixes for a single client must not overlap."
	}
	for _, q := range prefixes[first+1:] {
		if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
			return "ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap."
		}
	}
	return "" // not reached: first overlaps one after it
}

// firstOverlap returns the first of sorted, in byte order, that begins p
// or that p begins. sorted is a client's prefixes, which overlap none of
// the others, but for an empty one (a bare BCAST adds it): past that, the
// one that begins p can only be the last before p's place, and those p
// begins start at its place.
func firstOverlap(sorted []string, p string) (string, bool) {
	if len(sorted) == 0 {
		return "", false
	}
	if sorted[0] == "" {
		return "", true
	}
	k, _ := slices.BinarySearch(sorted, p)
	if k > 0 && strings.HasPrefix(p, sorted[k-1]) {
		return sorted[k-1], true
	}
	if k < len(sorted) && strings.HasPrefix(sorted[k], p) {
		return sorted[k], true
	}
	return "", false
}

func clientTracking(s *Server, c *client, args [][]byte) {
	var redirect int64
	var flags uint8
	var prefixes []string
	for j := 3; j < len(args); j++ {
		more := j+1 < len(args)
		switch opt := strings.ToLower(string(args[j])); {
		case opt == "redirect" && more:
			j++
			if redirect != 0 {
				s.w.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := parseInt(args[j])
			if !ok {
				s.w.Error(errNotInt)
				return
			}
			if s.clients[id] == nil {
				s.w.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			redirect = id
		case opt == "bcast":
			flags |= trackBcast
		case opt == "optin":
			flags |= trackOptin
		case opt == "optout":
			flags |= trackOptout
		case opt == "noloop":
			flags |= trackNoloop
		case opt == "prefix" && more:
			j++
			prefixes = append(prefixes, string(args[j]))
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	switch strings.ToLower(string(args[2])) {
	case "on":
		switch {
		case flags&trackBcast == 0 && len(prefixes) > 0:
			s.w.Error("ERR PREFIX option requires BCAST mode to be enabled")
		case c.track&trackOn != 0 && c.track&trackBcast != flags&trackBcast:
			s.w.Error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
		case flags&trackBcast != 0 && flags&(trackOptin|trackOptout) != 0:
			s.w.Error("ERR OPTIN and OPTOUT are not compatible with BCAST")
		case flags&trackOptin != 0 && flags&trackOptout != 0:
			s.w.Error("ERR You can't specify both OPTIN mode and OPTOUT mode")
		case flags&trackOptin != 0 && c.track&trackOptout != 0, flags&trackOptout != 0 && c.track&trackOptin != 0:
			s.w.Error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
		default:
			if flags&trackBcast != 0 {
				if msg := prefixOverlap(c, prefixes); msg != "" {
					s.w.Error(msg)
					return
				}
			}
			s.enableTracking(c, redirect, flags, prefixes)
			s.w.OK()
		}
	case "off":
		s.disableTracking(c)
		s.w.OK()
	default:
		s.w.Error(errSyntax)
	}
}

func clientCaching(s *Server, c *client, args [][]byte) {
	if c.track&trackOn == 0 {
		s.w.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch strings.ToLower(string(args[2])) {
	case "yes":
		if c.track&trackOptin == 0 {
			s.w.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case "no":
		if c.track&trackOptout == 0 {
			s.w.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		s.w.Error(errSyntax)
		return
	}
	c.track |= trackCaching
	s.w.OK()
}

func clientGetRedir(s *Server, c *client, args [][]byte) {
	if c.track&trackOn == 0 {
		s.w.Int(-1)
		return
	}
	s.w.Int(c.redirect)
}

func clientTrackingInfo(s *Server, c *client, args [][]byte) {
	flags := []string{"off"}
	if c.track&trackOn != 0 {
		flags[0] = "on"
	}
	for _, f := range []struct {
		on   bool
		name string
	}{
		{c.track&trackBcast != 0, "bcast"},
		{c.track&trackOptin != 0, "optin"},
		{c.track&(trackOptin|trackCaching) == trackOptin|trackCaching, "caching-yes"},
		{c.track&trackOptout != 0, "optout"},
		{c.track&(trackOptout|trackCaching) == trackOptout|trackCaching, "caching-no"},
		{c.track&trackNoloop != 0, "noloop"},
		{c.track&trackBrokenRedir != 0, "broken_redirect"},
	} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	s.w.Map(3)
	s.w.BulkString("flags")
	s.w.Set(len(flags))
	for _, f := range flags {
		s.w.BulkString(f)
	}
	s.w.BulkString("redirect")
	clientGetRedir(s, c, args)
	s.w.BulkString("prefixes")
	s.w.Array(len(c.prefixes))
	for _, p := range c.prefixes {
		s.w.BulkString(p)
	}
}
