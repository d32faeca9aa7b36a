package sock

import "golang.org/x/sys/unix"

// isNoNet reports whether e is ENONET, which accept(2) may pass on for the
// connection it takes (IsTemporary).
func isNoNet(e unix.Errno) bool { return e == unix.ENONET }
