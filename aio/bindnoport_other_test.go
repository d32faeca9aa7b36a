//go:build unix && !linux

package aio

import "syscall"

// bindNoPort does nothing here: IP_BIND_ADDRESS_NO_PORT is Linux's.
func bindNoPort(network, address string, c syscall.RawConn) error { return nil }
