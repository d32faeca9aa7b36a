package kv

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

func init() {
	register(
		cmd("subscribe", -2, "pubsub noscript loading stale", 0, 0, 0, "pubsub", "2.0.0", "Listens for messages published to channels.", subscribeCommand),
		cmd("unsubscribe", -1, "pubsub noscript loading stale", 0, 0, 0, "pubsub", "2.0.0", "Stops listening to messages posted to channels.", unsubscribeCommand),
		cmd("psubscribe", -2, "pubsub noscript loading stale", 0, 0, 0, "pubsub", "2.0.0", "Listens for messages published to channels that match one or more patterns.", psubscribeCommand),
		cmd("punsubscribe", -1, "pubsub noscript loading stale", 0, 0, 0, "pubsub", "2.0.0", "Stops listening to messages published to channels that match one or more patterns.", punsubscribeCommand),
		cmd("publish", 3, "pubsub loading stale fast may_replicate", 0, 0, 0, "pubsub", "2.0.0", "Posts a message to a channel.", publishCommand),
		cmd("ssubscribe", -2, "pubsub noscript loading stale", 1, -1, 1, "pubsub", "7.0.0", "Listens for messages published to shard channels.", ssubscribeCommand).withNotKeys(),
		cmd("sunsubscribe", -1, "pubsub noscript loading stale", 1, -1, 1, "pubsub", "7.0.0", "Stops listening to messages posted to shard channels.", sunsubscribeCommand).withNotKeys(),
		cmd("spublish", 3, "pubsub loading stale fast", 1, 1, 1, "pubsub", "7.0.0", "Post a message to a shard channel", spublishCommand).withNotKeys(),
		cmd("pubsub", -2, "", 0, 0, 0, "pubsub", "2.8.0", "A container for Pub/Sub commands.", nil).withSubs(
			cmd("channels", -2, "pubsub loading stale", 0, 0, 0, "", "2.8.0", "Returns the active channels.", pubsubChannels),
			cmd("numsub", -2, "pubsub loading stale", 0, 0, 0, "", "2.8.0", "Returns a count of subscribers to channels.", pubsubNumsub),
			cmd("numpat", 2, "pubsub loading stale", 0, 0, 0, "", "2.8.0", "Returns a count of unique pattern subscriptions.", pubsubNumpat),
			cmd("shardchannels", -2, "pubsub loading stale", 0, 0, 0, "", "7.0.0", "Returns the active shard channels.", pubsubShardChannels),
			cmd("shardnumsub", -2, "pubsub loading stale", 0, 0, 0, "", "7.0.0", "Returns the count of subscribers of shard channels.", pubsubShardNumsub),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "6.2.0", "Returns helpful text about the different subcommands.", pubsubHelp),
		),
	)
}

// pubsubKind is one of the three kinds of subscription: channels
// (SUBSCRIBE), patterns (PSUBSCRIBE) and shard channels (SSUBSCRIBE, which
// on a server without cluster are channels of a namespace of their own).
type pubsubKind struct {
	sub, unsub string                             // the kind's replies' names
	table      func(*Server) *subscribers         // the server's subscribers by name
	own        func(*client) *map[string]struct{} // the client's names
	count      func(*client) int                  // the count its replies carry
}

// subscribers holds the clients subscribed to each name of a kind.
type subscribers struct {
	m    map[string]map[*client]struct{}
	peak int // the most names m held since it was made (shrunk)
}

var (
	channelKind = &pubsubKind{
		sub: "subscribe", unsub: "unsubscribe",
		table: func(s *Server) *subscribers { return &s.channels },
		own:   func(c *client) *map[string]struct{} { return &c.channels },
		count: (*client).globalSubscriptions,
	}
	patternKind = &pubsubKind{
		sub: "psubscribe", unsub: "punsubscribe",
		table: func(s *Server) *subscribers { return &s.patterns },
		own:   func(c *client) *map[string]struct{} { return &c.patterns },
		count: (*client).globalSubscriptions,
	}
	// Redis 7.0 counts a client's shard channels apart in their replies.
	shardKind = &pubsubKind{
		sub: "ssubscribe", unsub: "sunsubscribe",
		table: func(s *Server) *subscribers { return &s.shards },
		own:   func(c *client) *map[string]struct{} { return &c.shards },
		count: func(c *client) int { return len(c.shards) },
	}
)

// subscriptionReply is the reply to (un)subscribing: kind, name, count.
func (s *Server) subscriptionReply(c *client, kind string, name []byte, null bool, count int) {
	w, send := s.to(c, true)
	w.Push(3)
	w.BulkString(kind)
	if null {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(int64(count))
	send()
}

func subscribeCommand(s *Server, c *client, args [][]byte) { subscribeGeneric(s, c, args, channelKind) }
func psubscribeCommand(s *Server, c *client, args [][]byte) {
	subscribeGeneric(s, c, args, patternKind)
}

// ssubscribeCommand subscribes to shard channels. Unlike SUBSCRIBE, it is
// refused in a transaction, as Redis 7.0 refuses it to a client that may
// not block.
func ssubscribeCommand(s *Server, c *client, args [][]byte) {
	if s.inExec {
		s.w.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	subscribeGeneric(s, c, args, shardKind)
}

func subscribeGeneric(s *Server, c *client, args [][]byte, k *pubsubKind) {
	for _, name := range args[1:] {
		s.subscribe(c, string(name), k)
		s.subscriptionReply(c, k.sub, name, false, k.count(c))
	}
}

func (s *Server) subscribe(c *client, name string, k *pubsubKind) {
	table, own := k.table(s), k.own(c)
	if *own == nil {
		*own = make(map[string]struct{})
	}
	if _, ok := (*own)[name]; ok {
		return
	}
	(*own)[name] = struct{}{}
	subs := table.m[name]
	if subs == nil {
		subs = make(map[*client]struct{})
		table.m[name] = subs
		notePeak(table.m, &table.peak)
	}
	subs[c] = struct{}{}
}

// unsubscribe takes c off name. A client left with no name of the kind
// drops its map of them, which keeps the memory of the most it held.
func (s *Server) unsubscribe(c *client, name string, k *pubsubKind) bool {
	table, own := k.table(s), k.own(c)
	if _, ok := (*own)[name]; !ok {
		return false
	}
	delete(*own, name)
	if len(*own) == 0 {
		*own = nil
	}
	if subs := table.m[name]; subs != nil {
		delete(subs, c)
		if len(subs) == 0 {
			delete(table.m, name)
			table.m = shrunk(table.m, &table.peak)
		}
	}
	return true
}

func unsubscribeCommand(s *Server, c *client, args [][]byte) {
	unsubscribeGeneric(s, c, args, channelKind)
}

func punsubscribeCommand(s *Server, c *client, args [][]byte) {
	unsubscribeGeneric(s, c, args, patternKind)
}

func sunsubscribeCommand(s *Server, c *client, args [][]byte) {
	unsubscribeGeneric(s, c, args, shardKind)
}

func unsubscribeGeneric(s *Server, c *client, args [][]byte, k *pubsubKind) {
	if len(args) > 1 {
		for _, name := range args[1:] {
			s.unsubscribe(c, string(name), k)
			s.subscriptionReply(c, k.unsub, name, false, k.count(c))
		}
		return
	}
	own := *k.own(c)
	if len(own) == 0 {
		s.subscriptionReply(c, k.unsub, nil, true, k.count(c))
		return
	}
	for _, name := range sortedKeys(own) {
		s.unsubscribe(c, name, k)
		s.subscriptionReply(c, k.unsub, []byte(name), false, k.count(c))
	}
}

// unsubscribeAll drops c's subscriptions of every kind, with no reply.
func (s *Server) unsubscribeAll(c *client) {
	for _, k := range []*pubsubKind{channelKind, patternKind, shardKind} {
		for name := range *k.own(c) {
			s.unsubscribe(c, name, k)
		}
	}
}

func sortedKeys(m map[string]struct{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// publish sends msg to the subscribers of channel and of the patterns it
// matches, and returns how many received it.
func (s *Server) publish(channel, msg []byte) int {
	n := s.deliver(s.channels.m[string(channel)], "message", channel, msg)
	for pat, subs := range s.patterns.m {
		if !globMatch([]byte(pat), channel, false) {
			continue
		}
		for c := range subs {
			w, send := s.to(c, true)
			w.Push(4)
			w.BulkString("pmessage")
			w.BulkString(pat)
			w.Bulk(channel)
			w.Bulk(msg)
			send()
			n++
		}
	}
	return n
}

// deliver pushes msg, from channel, to subs as a message of the given
// kind ("message", "smessage") and returns how many it reached.
func (s *Server) deliver(subs map[*client]struct{}, kind string, channel, msg []byte) int {
	for c := range subs {
		w, send := s.to(c, true)
		w.Push(3)
		w.BulkString(kind)
		w.Bulk(channel)
		w.Bulk(msg)
		send()
	}
	return len(subs)
}

func publishCommand(s *Server, c *client, args [][]byte) {
	s.w.Int(int64(s.publish(args[1], args[2])))
}

// spublishCommand publishes to a shard channel's subscribers; patterns
// do not see it.
func spublishCommand(s *Server, c *client, args [][]byte) {
	s.w.Int(int64(s.deliver(s.shards.m[string(args[1])], "smessage", args[1], args[2])))
}

func pubsubChannels(s *Server, c *client, args [][]byte) { channelList(s, args, s.channels.m) }

func pubsubShardChannels(s *Server, c *client, args [][]byte) { channelList(s, args, s.shards.m) }

// channelList answers PUBSUB CHANNELS and SHARDCHANNELS: the names in
// table that match the optional pattern.
func channelList(s *Server, args [][]byte, table map[string]map[*client]struct{}) {
	if len(args) > 3 {
		s.w.Error("ERR unknown subcommand or wrong number of arguments for '" + trunc(string(args[1]), 128) + "'. Try PUBSUB HELP.")
		return
	}
	var out []string
	for ch := range table {
		if len(args) == 2 || globMatch(args[2], []byte(ch), false) {
			out = append(out, ch)
		}
	}
	slices.Sort(out)
	s.w.Array(len(out))
	for _, ch := range out {
		s.w.BulkString(ch)
	}
}

func pubsubNumsub(s *Server, c *client, args [][]byte) { numsub(s, args, s.channels.m) }

func pubsubShardNumsub(s *Server, c *client, args [][]byte) { numsub(s, args, s.shards.m) }

// numsub answers PUBSUB NUMSUB and SHARDNUMSUB: each name and its
// subscribers, flat, as Redis 7.0 answers in RESP3 too.
func numsub(s *Server, args [][]byte, table map[string]map[*client]struct{}) {
	s.w.Array(2 * (len(args) - 2))
	for _, ch := range args[2:] {
		s.w.Bulk(ch)
		s.w.Int(int64(len(table[string(ch)])))
	}
}

func pubsubNumpat(s *Server, c *client, args [][]byte) { s.w.Int(int64(len(s.patterns.m))) }

func pubsubHelp(s *Server, c *client, args [][]byte) {
	s.help("PUBSUB",
		"CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT", "    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]", "    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]", "    Return the number of subscribers for the specified shard level channel(s)",
	)
}

// notifyFlags select keyspace events, as notify-keyspace-events does.
type notifyFlags uint16

const (
	notifyKeyspace notifyFlags = 1 << iota // K
	notifyKeyevent                         // E
	notifyGeneric                          // g
	notifyString                           // $
	notifyList                             // l
	notifySet                              // s
	notifyHash                             // h
	notifyZSet                             // z
	notifyExpired                          // x
	notifyEvicted                          // e
	notifyStream                           // t
	notifyKeyMiss                          // m
	notifyModule                           // d
	notifyNew                              // n

	notifyAll = notifyGeneric | notifyString | notifyList | notifySet | notifyHash | notifyZSet | notifyExpired | notifyEvicted | notifyStream | notifyModule // A
)

var notifyLetters = []struct {
	ch byte
	f  notifyFlags
}{
	{'A', notifyAll}, {'g', notifyGeneric}, {'$', notifyString}, {'l', notifyList}, {'s', notifySet},
	{'h', notifyHash}, {'z', notifyZSet}, {'x', notifyExpired}, {'e', notifyEvicted}, {'t', notifyStream},
	{'m', notifyKeyMiss}, {'d', notifyModule}, {'n', notifyNew}, {'K', notifyKeyspace}, {'E', notifyKeyevent},
}

var errInvalidNotify = errors.New("kv: invalid notify-keyspace-events")

// parseNotify parses a notify-keyspace-events value.
func parseNotify(v string) (notifyFlags, error) {
	var f notifyFlags
outer:
	for i := 0; i < len(v); i++ {
		for _, l := range notifyLetters {
			if l.ch == v[i] {
				f |= l.f
				continue outer
			}
		}
		return 0, errInvalidNotify
	}
	return f, nil
}

// String formats flags as CONFIG GET shows them.
func (f notifyFlags) String() string {
	var b strings.Builder
	if f&notifyAll == notifyAll {
		b.WriteByte('A')
	}
	for _, l := range notifyLetters[1:] {
		if l.f&notifyAll != 0 && f&notifyAll == notifyAll {
			continue
		}
		if f&l.f != 0 {
			b.WriteByte(l.ch)
		}
	}
	return b.String()
}

// notify publishes a keyspace event, if the configuration asks for it.
func (s *Server) notify(class notifyFlags, event string, key []byte, dbID int) {
	f := s.events
	if f&class == 0 || f&(notifyKeyspace|notifyKeyevent) == 0 || s.replay {
		return
	}
	db := strconv.Itoa(dbID)
	if f&notifyKeyspace != 0 {
		s.publish([]byte("__keyspace@"+db+"__:"+string(key)), []byte(event))
	}
	if f&notifyKeyevent != 0 {
		s.publish([]byte("__keyevent@"+db+"__:"+event), key)
	}
}
