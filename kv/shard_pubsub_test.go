package kv

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCompatShardedPubSub runs sharded pub/sub (SSUBSCRIBE, SUNSUBSCRIBE,
// SPUBLISH, PUBSUB SHARDCHANNELS and SHARDNUMSUB) on evkv and on Redis
// 7.0, in RESP2 and RESP3, a subscriber and a publisher each, and compares
// every reply and message: shard channels are a namespace of their own
// (PUBLISH and patterns do not reach them, SPUBLISH reaches no pattern),
// their replies count them apart from channels and patterns, any of the
// three keeps a RESP2 client in subscribed mode, SSUBSCRIBE is refused in
// a transaction (SUBSCRIBE is not), and RESET drops them. PUBSUB NUMSUB
// and SHARDNUMSUB answer a flat array in RESP3 too.
func TestCompatShardedPubSub(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	type step struct {
		who  int      // 0: the subscriber, 1: the publisher
		args []string // nil: send nothing, read what came
		n    int      // replies and messages to read from who
	}
	steps := []step{
		{0, []string{"SSUBSCRIBE", "a", "b", "a"}, 3},
		{0, []string{"SUBSCRIBE", "a"}, 1},
		{0, []string{"PSUBSCRIBE", "*"}, 1},
		{0, []string{"GET", "k"}, 1},
		{1, []string{"SPUBLISH", "a", "shard"}, 1},
		{0, nil, 1},
		{1, []string{"PUBLISH", "a", "global"}, 1},
		{0, nil, 2},
		{1, []string{"SPUBLISH", "nobody", "x"}, 1},
		{1, []string{"PUBSUB", "SHARDCHANNELS", "a*"}, 1},
		{1, []string{"PUBSUB", "SHARDCHANNELS", "z*"}, 1},
		{1, []string{"PUBSUB", "SHARDNUMSUB", "a", "b", "z"}, 1},
		{1, []string{"PUBSUB", "SHARDNUMSUB"}, 1},
		{1, []string{"PUBSUB", "NUMSUB", "a", "z"}, 1},
		{1, []string{"PUBSUB", "CHANNELS", "a*"}, 1},
		{1, []string{"PUBSUB", "SHARDCHANNELS", "a", "b"}, 1},
		{1, []string{"pubsub", "channels", "a", "b"}, 1},
		{1, []string{"PUBSUB", "NUMPAT", "x"}, 1},
		{1, []string{"COMMAND", "INFO", "ssubscribe", "sunsubscribe", "spublish"}, 1},
		{1, []string{"COMMAND", "GETKEYS", "SPUBLISH", "a", "b"}, 1},
		{1, []string{"SPUBLISH", "a"}, 1},
		{1, []string{"SSUBSCRIBE"}, 1},
		{0, []string{"SUNSUBSCRIBE", "a", "zz"}, 2},
		{0, []string{"SUNSUBSCRIBE"}, 1},
		{0, []string{"SUNSUBSCRIBE"}, 1},
		{0, []string{"GET", "k"}, 1},
		{0, []string{"UNSUBSCRIBE"}, 1},
		{0, []string{"PUNSUBSCRIBE"}, 1},
		{0, []string{"GET", "k"}, 1},
		{0, []string{"SSUBSCRIBE", "only"}, 1},
		{0, []string{"GET", "k"}, 1},
		{0, []string{"SUNSUBSCRIBE", "only"}, 1},
		{0, []string{"MULTI"}, 1},
		{0, []string{"SSUBSCRIBE", "q"}, 1},
		{0, []string{"GET", "k"}, 1},
		{0, []string{"EXEC"}, 1},
		{1, []string{"PUBSUB", "SHARDNUMSUB", "q"}, 1},
		{0, []string{"SSUBSCRIBE", "r"}, 1},
		{0, []string{"RESET"}, 1},
		{1, []string{"PUBSUB", "SHARDNUMSUB", "r"}, 1},
		{1, []string{"SPUBLISH", "r", "after reset"}, 1},
		{0, []string{"PING"}, 1},
	}
	for _, proto := range []string{"2", "3"} {
		var got [2][]string
		for i, a := range []string{addr, raddr} {
			conns := [2]*rawConn{dialRaw(t, a), dialRaw(t, a)}
			for _, c := range conns {
				c.do("HELLO", proto)
			}
			for _, st := range steps {
				c := conns[st.who]
				if st.args != nil {
					c.send(st.args...)
				}
				for range st.n {
					got[i] = append(got[i], strings.Join(st.args, " ")+" -> "+c.read())
				}
				if st.args != nil && st.args[0] == "RESET" {
					c.do("HELLO", proto) // RESET went back to RESP2
				}
			}
		}
		compareTranscripts(t, "RESP"+proto+" ", got[0], got[1])
	}
}

// A client's shard channels show in CLIENT LIST's ssub, and the server's
// in INFO's pubsubshard_channels, as Redis shows them; a client that
// closes leaves its shard channels.
func TestShardChannelsCounted(t *testing.T) {
	_, addr := startServer(t, Config{})
	sub, other := dialRaw(t, addr), dialRaw(t, addr)
	sub.send("SSUBSCRIBE", "a", "b")
	sub.read()
	sub.read()
	sub.do("SUBSCRIBE", "c")
	if list := other.do("CLIENT", "LIST", "TYPE", "pubsub"); !strings.Contains(list, " sub=1 psub=0 ssub=2 ") {
		t.Errorf("CLIENT LIST TYPE pubsub = %q; want the subscriber with sub=1 psub=0 ssub=2", list)
	}
	if info := other.do("INFO", "stats"); !strings.Contains(info, "\r\npubsubshard_channels:2\r\n") {
		t.Errorf("INFO stats has no pubsubshard_channels:2: %q", info)
	}
	sub.c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for other.do("PUBSUB", "SHARDNUMSUB", "a") != "*2\r\n$1\r\na\r\n:0\r\n" {
		if time.Now().After(deadline) {
			t.Fatal("a closed client's shard channel is still subscribed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if info := other.do("INFO", "stats"); !strings.Contains(info, "\r\npubsubshard_channels:0\r\n") {
		t.Errorf("INFO stats after the subscriber closed: %q", info)
	}
}

// go-redis's SSubscribe and SPublish work against evkv.
func TestGoRedisShardedPubSub(t *testing.T) {
	c, ctx := serverAndClient(t)
	ps := c.SSubscribe(ctx, "orders")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatalf("SSubscribe's confirmation: %v", err)
	}
	if n, err := c.SPublish(ctx, "orders", "o-1").Result(); n != 1 || err != nil {
		t.Fatalf("SPublish = %d, %v; want 1", n, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := ps.ReceiveMessage(ctx)
	if err != nil || msg.Channel != "orders" || msg.Payload != "o-1" {
		t.Fatalf("ReceiveMessage = %+v, %v; want o-1 on orders", msg, err)
	}
	if n, err := c.PubSubShardNumSub(ctx, "orders").Result(); err != nil || n["orders"] != 1 {
		t.Fatalf("PubSubShardNumSub = %v, %v", n, err)
	}
}
