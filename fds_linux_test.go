//go:build linux

package evloop

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAcceptOutOfFDs: with the process out of descriptors, accepting
// pauses (no spinning, no shutdown), established connections go on being
// served, and accepting resumes when descriptors free up.
func TestAcceptOutOfFDs(t *testing.T) {
	var logs syncBuffer
	srv, _ := serve(t, &echoHandler{}, Options{Loops: 1, Logger: slogTo(&logs)})
	sa := &unix.SockaddrInet4{Port: srv.Addrs()[0].(*net.TCPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}
	// Client sockets are made now, while descriptors are plentiful, and
	// connected once the limit is low: connect needs no new descriptor.
	const early, late = 10, 20
	var clients []int
	for range early + late {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, fd)
	}
	defer func() {
		for _, fd := range clients {
			unix.Close(fd)
		}
	}()
	echo := func(fd int) error {
		tv := unix.NsecToTimeval(int64(10 * time.Second))
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		if _, err := unix.Write(fd, []byte("ping")); err != nil {
			return err
		}
		b := make([]byte, 4)
		if n, err := unix.Read(fd, b); err != nil || string(b[:n]) != "ping" {
			return fmt.Errorf("read %q, %v", b[:n], err)
		}
		return nil
	}
	for _, fd := range clients[:early] {
		if err := unix.Connect(fd, sa); err != nil {
			t.Fatal(err)
		}
		if err := echo(fd); err != nil {
			t.Fatal(err)
		}
	}
	var old unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &old)
	limit := old
	limit.Cur = uint64(openFDs(t) + 3) // room for three more accepts
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &limit); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	for _, fd := range clients[early:] {
		if err := unix.Connect(fd, sa); err != nil { // the kernel completes it; accept is ours
			t.Fatal(err)
		}
	}
	waitFor(t, "accepting to pause", func() bool { return srv.paused.Load() > 0 })
	for _, fd := range clients[:early] {
		if err := echo(fd); err != nil {
			t.Fatalf("an established connection stopped being served: %v", err)
		}
	}
	// Free descriptors: the server's ends of the early connections close.
	for _, fd := range clients[:early] {
		unix.Close(fd)
	}
	clients = clients[early:]
	for i, fd := range clients {
		if err := echo(fd); err != nil {
			t.Fatalf("late connection %d after descriptors freed: %v", i, err)
		}
	}
	if !strings.Contains(logs.String(), "out of file descriptors") {
		t.Errorf("nothing logged about running out of descriptors:\n%s", logs.String())
	}
}
