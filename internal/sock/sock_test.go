//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package sock

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestListenAcceptDial(t *testing.T) {
	tests := []struct {
		name, network, addr string
	}{
		{"tcp4", "tcp", "127.0.0.1:0"},
		{"tcp6", "tcp6", "[::1]:0"},
		{"unix", "unix", filepath.Join(t.TempDir(), "s")},
		{"wildcard", "tcp", ":0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fd, addr, err := Listen(tc.network, tc.addr, ListenOptions{})
			if err != nil {
				if tc.network == "tcp6" {
					t.Skipf("no IPv6 loopback: %v", err)
				}
				t.Fatalf("Listen: %v", err)
			}
			defer unix.Close(fd)
			if _, err := Accept(fd); !errors.Is(err, ErrAgain) {
				t.Fatalf("Accept with nothing pending = %v; want EAGAIN", err)
			}
			c, err := net.Dial(addr.Network(), addr.String())
			if err != nil {
				t.Fatalf("Dial %v: %v", addr, err)
			}
			defer c.Close()
			var nfd int
			deadline := time.Now().Add(5 * time.Second)
			for {
				nfd, err = Accept(fd)
				if err == nil {
					break
				}
				if !IsTemporary(err) || time.Now().After(deadline) {
					t.Fatalf("Accept: %v", err)
				}
				time.Sleep(time.Millisecond)
			}
			defer unix.Close(nfd)
			if fl, _ := unix.FcntlInt(uintptr(nfd), unix.F_GETFL, 0); fl&unix.O_NONBLOCK == 0 {
				t.Error("accepted fd is blocking")
			}
			if fl, _ := unix.FcntlInt(uintptr(nfd), unix.F_GETFD, 0); fl&unix.FD_CLOEXEC == 0 {
				t.Error("accepted fd is not close-on-exec")
			}
			if tc.network != "unix" {
				if err := SetNoDelay(nfd, true); err != nil {
					t.Errorf("SetNoDelay: %v", err)
				}
			}
		})
	}
}

func TestListenErrors(t *testing.T) {
	fd, addr, err := Listen("tcp", "127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	tests := []struct{ name, network, addr string }{
		{"unknown network", "udp", "127.0.0.1:0"},
		{"unparsable address", "tcp", "127.0.0.1:port"},
		{"port in use", "tcp", addr.String()},
		{"missing directory", "unix", "/nonexistent/dir/sock"},
	}
	for _, tc := range tests {
		if fd, _, err := Listen(tc.network, tc.addr, ListenOptions{}); err == nil {
			unix.Close(fd)
			t.Errorf("%s: Listen(%q, %q) = nil error", tc.name, tc.network, tc.addr)
		}
	}
}

// An empty host dials the loopback address of the network's own family,
// as net.Dial does: IPv6's for "tcp6".
func TestDialEmptyHost(t *testing.T) {
	tests := []struct{ network, listen string }{
		{"tcp", "127.0.0.1:0"},
		{"tcp4", "127.0.0.1:0"},
		{"tcp6", "[::1]:0"},
	}
	for _, tc := range tests {
		t.Run(tc.network, func(t *testing.T) {
			ln, err := net.Listen(tc.network, tc.listen)
			if err != nil {
				t.Skipf("Listen(%q, %q): %v", tc.network, tc.listen, err)
			}
			defer ln.Close()
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			fd, err := Dial(tc.network, ":"+port, DialOptions{})
			if err != nil {
				t.Fatalf("Dial(%q, %q) = %v", tc.network, ":"+port, err)
			}
			defer unix.Close(fd)
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(pfd, 5000); err != nil {
				t.Fatalf("poll: %v", err)
			}
			if err := ConnectError(fd); err != nil {
				t.Fatalf("Dial(%q, %q) to a listener on %v: %v", tc.network, ":"+port, ln.Addr(), err)
			}
		})
	}
}

// Writev of more buffers than one system call takes (IOV_MAX) writes
// some of them, as its doc says, rather than fail with EINVAL.
func TestWritevManyBuffers(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	want := make([]byte, 3000)
	var bufs [][]byte
	for i := range want {
		want[i] = byte(i)
		bufs = append(bufs, want[i:i+1])
		if i%3 == 0 {
			bufs = append(bufs, nil) // empty buffers count on some systems
		}
	}
	n, err := Writev(fds[0], bufs)
	if err != nil || n <= 0 || n > len(want) {
		t.Fatalf("Writev(%d buffers) = %d, %v; want some bytes written, nil", len(bufs), n, err)
	}
	got := make([]byte, len(want))
	if m, err := unix.Read(fds[1], got); err != nil || m != n || string(got[:m]) != string(want[:n]) {
		t.Fatalf("read %d, %v after Writev wrote %d; want the first %d bytes", m, err, n, n)
	}
}

// TestAcceptErrorKinds: the errors accept(2) passes on for the connection
// it takes are IsTemporary, as the Linux man page says to treat them, where
// only ECONNABORTED and EPROTO were and a firewall's EPERM or a network's
// ENETUNREACH counted as the listener's failure; running out of
// descriptors or memory is IsOutOfFiles instead, and a broken listener is
// neither.
func TestAcceptErrorKinds(t *testing.T) {
	tests := []struct {
		errno      unix.Errno
		temporary  bool
		outOfFiles bool
	}{
		{unix.EAGAIN, true, false},
		{unix.EINTR, true, false},
		{unix.ECONNABORTED, true, false},
		{unix.EPERM, true, false},
		{unix.ENETDOWN, true, false},
		{unix.EPROTO, true, false},
		{unix.ENOPROTOOPT, true, false},
		{unix.EHOSTDOWN, true, false},
		{unix.EHOSTUNREACH, true, false},
		{unix.EOPNOTSUPP, true, false},
		{unix.ENETUNREACH, true, false},
		{unix.EMFILE, false, true},
		{unix.ENFILE, false, true},
		{unix.ENOBUFS, false, true},
		{unix.ENOMEM, false, true},
		{unix.EBADF, false, false},
		{unix.EINVAL, false, false},
		{unix.ENOTSOCK, false, false},
	}
	for _, tc := range tests {
		err := os.NewSyscallError("accept4", tc.errno)
		if got := IsTemporary(err); got != tc.temporary {
			t.Errorf("IsTemporary(%v) = %v; want %v", err, got, tc.temporary)
		}
		if got := IsOutOfFiles(err); got != tc.outOfFiles {
			t.Errorf("IsOutOfFiles(%v) = %v; want %v", err, got, tc.outOfFiles)
		}
		if got, want := IsBadFD(err), tc.errno == unix.EBADF; got != want {
			t.Errorf("IsBadFD(%v) = %v; want %v", err, got, want)
		}
	}
}

// TestListenUnixPerm checks that a Unix socket's file has Perm's
// permissions before the socket listens, whatever the umask, and that a
// socket that fails to listen leaves no file behind.
func TestListenUnixPerm(t *testing.T) {
	saved := listenFD
	t.Cleanup(func() { listenFD = saved })
	dir := t.TempDir()
	for _, perm := range []os.FileMode{0o700, 0o660, 0o777} {
		path := filepath.Join(dir, perm.String()+".sock")
		var atListen os.FileMode
		listenFD = func(fd, backlog int) error {
			if fi, err := os.Lstat(path); err == nil {
				atListen = fi.Mode()
			}
			return saved(fd, backlog)
		}
		fd, _, err := Listen("unix", path, ListenOptions{Perm: perm})
		if err != nil {
			t.Fatalf("Listen with Perm %v: %v", perm, err)
		}
		unix.Close(fd)
		if atListen.Type() != os.ModeSocket || atListen.Perm() != perm {
			t.Errorf("Perm %v: the socket's file as it was about to listen: %v", perm, atListen)
		}
	}

	path := filepath.Join(dir, "fails.sock")
	listenFD = func(int, int) error { return unix.EOPNOTSUPP }
	if _, _, err := Listen("unix", path, ListenOptions{Perm: 0o600}); !errors.Is(err, unix.EOPNOTSUPP) {
		t.Fatalf("Listen whose listen(2) fails: %v; want EOPNOTSUPP", err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("a socket that failed to listen left its file: %v", err)
	}
	listenFD = saved

	if runtime.GOOS == "linux" {
		// An abstract socket has no file to give Perm to.
		fd, _, err := Listen("unix", "@evloop-perm-test", ListenOptions{Perm: 0o600})
		if err != nil {
			t.Fatalf("abstract socket with Perm: %v", err)
		}
		unix.Close(fd)
	}
}
