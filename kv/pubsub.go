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
		cmd("pubsub", -2, "", 0, 0, 0, "pubsub", "2.8.0", "A container for Pub/Sub commands.", nil).withSubs(
			cmd("channels", -2, "pubsub loading stale", 0, 0, 0, "", "2.8.0", "Returns the active channels.", pubsubChannels),
			cmd("numsub", -2, "pubsub loading stale", 0, 0, 0, "", "2.8.0", "Returns a count of subscribers to channels.", pubsubNumsub),
			cmd("numpat", 2, "pubsub loading stale", 0, 0, 0, "", "2.8.0", "Returns a count of unique pattern subscriptions.", pubsubNumpat),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "6.2.0", "Returns helpful text about the different subcommands.", pubsubHelp),
		),
	)
}

// subscriptionReply is the reply to (un)subscribing: kind, name, count.
func (s *Server) subscriptionReply(c *client, kind string, name []byte, null bool) {
	w, send := s.to(c, true)
	w.Push(3)
	w.BulkString(kind)
	if null {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(int64(c.subscriptions()))
	send()
}

func subscribeCommand(s *Server, c *client, args [][]byte) {
	for _, ch := range args[1:] {
		s.subscribe(c, string(ch), false)
		s.subscriptionReply(c, "subscribe", ch, false)
	}
}

func psubscribeCommand(s *Server, c *client, args [][]byte) {
	for _, p := range args[1:] {
		s.subscribe(c, string(p), true)
		s.subscriptionReply(c, "psubscribe", p, false)
	}
}

func (s *Server) subscribe(c *client, name string, pattern bool) {
	table, own := s.channels, &c.channels
	if pattern {
		table, own = s.patterns, &c.patterns
	}
	if *own == nil {
		*own = make(map[string]struct{})
	}
	if _, ok := (*own)[name]; ok {
		return
	}
	(*own)[name] = struct{}{}
	subs := table[name]
	if subs == nil {
		subs = make(map[*client]struct{})
		table[name] = subs
	}
	subs[c] = struct{}{}
}

func (s *Server) unsubscribe(c *client, name string, pattern bool) bool {
	table, own := s.channels, c.channels
	if pattern {
		table, own = s.patterns, c.patterns
	}
	if _, ok := own[name]; !ok {
		return false
	}
	delete(own, name)
	if subs := table[name]; subs != nil {
		delete(subs, c)
		if len(subs) == 0 {
			delete(table, name)
		}
	}
	return true
}

func unsubscribeCommand(s *Server, c *client, args [][]byte)  { unsubscribeGeneric(s, c, args, false) }
func punsubscribeCommand(s *Server, c *client, args [][]byte) { unsubscribeGeneric(s, c, args, true) }

func unsubscribeGeneric(s *Server, c *client, args [][]byte, pattern bool) {
	kind := "unsubscribe"
	if pattern {
		kind = "punsubscribe"
	}
	if len(args) > 1 {
		for _, name := range args[1:] {
			s.unsubscribe(c, string(name), pattern)
			s.subscriptionReply(c, kind, name, false)
		}
		return
	}
	own := c.channels
	if pattern {
		own = c.patterns
	}
	if len(own) == 0 {
		s.subscriptionReply(c, kind, nil, true)
		return
	}
	for _, name := range sortedKeys(own) {
		s.unsubscribe(c, name, pattern)
		s.subscriptionReply(c, kind, []byte(name), false)
	}
}

// unsubscribeAll drops c's subscriptions; notify replies for each, as
// RESET does not.
func (s *Server) unsubscribeAll(c *client, notify bool) {
	for name := range c.channels {
		s.unsubscribe(c, name, false)
	}
	for name := range c.patterns {
		s.unsubscribe(c, name, true)
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
	n := 0
	for c := range s.channels[string(channel)] {
		w, send := s.to(c, true)
		w.Push(3)
		w.BulkString("message")
		w.Bulk(channel)
		w.Bulk(msg)
		send()
		n++
	}
	for pat, subs := range s.patterns {
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

func publishCommand(s *Server, c *client, args [][]byte) {
	s.w.Int(int64(s.publish(args[1], args[2])))
}

func pubsubChannels(s *Server, c *client, args [][]byte) {
	if len(args) > 3 {
		s.w.Error("ERR wrong number of arguments for 'pubsub|channels' command")
		return
	}
	var out []string
	for ch := range s.channels {
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

func pubsubNumsub(s *Server, c *client, args [][]byte) {
	s.w.Map(len(args) - 2)
	for _, ch := range args[2:] {
		s.w.Bulk(ch)
		s.w.Int(int64(len(s.channels[string(ch)])))
	}
}

func pubsubNumpat(s *Server, c *client, args [][]byte) { s.w.Int(int64(len(s.patterns))) }

func pubsubHelp(s *Server, c *client, args [][]byte) {
	s.help("PUBSUB",
		"CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT", "    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
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
