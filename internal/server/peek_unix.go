//go:build linux || darwin || freebsd || netbsd || openbsd

package server

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the client of nc has closed or reset the
// connection, by peeking at its socket without blocking and without taking
// the connection's read lock (the connection's goroutine is busy running a
// command, not reading). Bytes waiting (a pipelined request) mean the
// client is there.
func peerClosed(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	err = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		default:
			closed = true
		}
	})
	return err == nil && closed
}
