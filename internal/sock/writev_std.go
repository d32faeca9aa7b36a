//go:build darwin || openbsd

package sock

import "golang.org/x/sys/unix"

// writev passes every buffer, empty ones too, to the kernel: at most
// maxIovecs of them.
func writev(fd int, bufs [][]byte) (int, error) {
	return unix.Writev(fd, bufs[:min(len(bufs), maxIovecs)])
}
