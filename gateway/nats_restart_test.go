package gateway

import (
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsServerProcess builds nats-server at the version go.mod names, for
// tests that stop a server as an operator or a crash does.
func natsServerProcess(t *testing.T) string {
	t.Helper()
	return testpeer.GoBuild(t, "github.com/nats-io/nats-server/v2", "nats-server")
}

// runNATS runs bin with JetStream on addr, storing in dir, until the test
// ends.
func runNATS(t *testing.T, bin, addr, dir string) *exec.Cmd {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "-a", host, "-p", port, "-js", "-sd", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "nats-server", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return cmd
}

// A JetStream subscription goes on across a restart of its NATS server:
// the connection comes back, the durable consumer (in the stream's file
// store) is read again, and the client gets what was published while the
// gateway was away, once. After a crash the server may not have stored
// the acknowledgements of the last messages, and delivers them again:
// those are not sent to the client twice. Before, they were, ahead of the
// new ones, and the first again 30 s later (the consumer's AckWait).
//
// A server restarted without the consumer (its stream in memory) ends
// the subscription with an error, as a consumer deleted does, and the
// client may subscribe again once the stream is back. Before, the
// subscription waited for events that could not come, without a word.
func TestJetStreamServerRestart(t *testing.T) {
	bin := natsServerProcess(t)
	schema, err := ParseSchema(`
type Subscription {
  orderShipped(id: ID!): Order! @edfs__natsSubscribe(subjects: ["order.{{ args.id }}"],
    streamConfiguration: { streamName: "orders", consumerName: "evgate" })
}
type Order { id: ID! status: String! }`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		sig     syscall.Signal
		storage jetstream.StorageType
	}{
		{"SIGTERM", syscall.SIGTERM, jetstream.FileStorage},
		{"SIGKILL", syscall.SIGKILL, jetstream.FileStorage},
		{"in memory", syscall.SIGTERM, jetstream.MemoryStorage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, dir := testpeer.FreeAddr(t), t.TempDir()
			server := runNATS(t, bin, addr, dir)
			nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(nc.Close)
			js, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			stream := jetstream.StreamConfig{Name: "orders", Subjects: []string{"order.>"}, Storage: tc.storage}
			if _, err := js.CreateStream(ctx, stream); err != nil {
				t.Fatal(err)
			}
			src, err := NewNATSSource(nc, "restart")
			if err != nil {
				t.Fatal(err)
			}
			g, gaddr := serve(t, Config{Schema: schema, NATS: map[string]Source{"default": src}})
			c := dialSubscribe(t, gaddr, "o", "subscription { orderShipped(id: 5) { status } }")
			waitFor(t, "the consumer", func() bool { return triggersStarted(g) == 1 })
			// Published by a connection of its own, as another service
			// would, and stored once Publish returns.
			publish := func(status string) {
				t.Helper()
				pc, err := nats.Connect("nats://" + addr)
				if err != nil {
					t.Fatal(err)
				}
				defer pc.Close()
				pjs, err := jetstream.New(pc)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := pjs.Publish(ctx, "order.5", fmt.Appendf(nil, `{"id":"5","status":%q}`, status)); err != nil {
					t.Fatal(err)
				}
			}
			next := func(status string) string {
				return `{"id":"o","type":"next","payload":{"data":{"orderShipped":{"status":"` + status + `"}}}}`
			}
			for i := range 3 {
				publish(fmt.Sprint("before", i))
				if got, want := c.readRaw(), next(fmt.Sprint("before", i)); got != want {
					t.Fatalf("before the restart: %s; want %s", got, want)
				}
			}
			server.Process.Signal(tc.sig)
			server.Wait()
			runNATS(t, bin, addr, dir)
			if tc.storage == jetstream.MemoryStorage {
				got := c.readRaw()
				if !strings.HasPrefix(got, `{"id":"o","type":"error","payload":[{"message":"upstream subscription ended: JetStream consumer stopped: `) || !strings.Contains(got, "not found") {
					t.Fatalf("after a restart that lost the consumer: %s; want an error saying it is not found", got)
				}
				if _, err := js.CreateStream(ctx, stream); err != nil {
					t.Fatal(err)
				}
				c.send(`{"id":"o","type":"subscribe","payload":{"query":"subscription { orderShipped(id: 5) { status } }"}}`)
				waitFor(t, "the consumer again", func() bool { return triggersStarted(g) == 1 })
			}
			for i := range 3 {
				publish(fmt.Sprint("after", i))
			}
			var got []string
			for !slices.Contains(got, next("after2")) {
				got = append(got, c.readRaw())
			}
			if want := []string{next("after0"), next("after1"), next("after2")}; !slices.Equal(got, want) {
				t.Fatalf("after the restart:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// A mutation while the NATS connection is being reestablished fails at
// once, and publishes nothing. Before, nats.go kept the message for the
// new connection while the gateway waited 5 s for a flush that could not
// come: the mutation failed with "context deadline exceeded", and its
// event was published all the same once the server was back, twice if
// the client tried again.
func TestNATSPublishWhileReconnecting(t *testing.T) {
	bin := natsServerProcess(t)
	addr := testpeer.FreeAddr(t)
	server := runNATS(t, bin, addr, t.TempDir())
	nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1), nats.ReconnectWait(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	schema, err := ParseSchema(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewNATSSource(nc, "reconnecting")
	if err != nil {
		t.Fatal(err)
	}
	_, gaddr := serve(t, Config{Schema: schema, NATS: map[string]Source{"default": src}})
	server.Process.Kill()
	server.Wait()
	waitFor(t, "the connection to be lost", func() bool { return !nc.IsConnected() })

	m := dialSubscribe(t, gaddr, "m", `mutation { updateEmployee(id: 9, name: "Lost") { success } }`)
	start := time.Now()
	m.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, got, err := m.ws.ReadMessage(); err != nil || !strings.HasPrefix(string(got), `{"id":"m","type":"next","payload":{"data":null,"errors":[{"message":"publish failed: `) {
		t.Fatalf("mutation while reconnecting: %s, %v; want its error", got, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the mutation's error came after %v; want it at once", d)
	}

	runNATS(t, bin, addr, t.TempDir())
	sub, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	got, err := sub.SubscribeSync("employee.9")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the gateway's connection back", nc.IsConnected)
	// What nats.go kept for the new connection went out before this.
	if err := nc.Publish("employee.9", []byte(`{"id":9,"name":"After"}`)); err != nil {
		t.Fatal(err)
	}
	msg, err := got.NextMsg(5 * time.Second)
	if err != nil || string(msg.Data) != `{"id":9,"name":"After"}` {
		t.Fatalf("first event on employee.9 after the restart: %v, %v; want only the one published after it", msg, err)
	}
}
