//go:build !linux

package loop

import "errors"

// pinToCPU is not supported here: the BSDs' cpuset calls are not wrapped by
// golang.org/x/sys/unix for every one of them, and macOS has none.
func pinToCPU(cpu int) error { return errors.ErrUnsupported }
