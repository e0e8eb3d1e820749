package server

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// Bounds of the pause between failed accepts, as net/http's.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// acceptBackoff is the pause before retrying a failed accept: it starts at
// minAcceptBackoff, doubles with each consecutive failure up to
// maxAcceptBackoff, and starts over after a successful accept.
type acceptBackoff struct{ d time.Duration }

func (b *acceptBackoff) next() time.Duration {
	if b.d == 0 {
		b.d = minAcceptBackoff
	} else {
		b.d = min(2*b.d, maxAcceptBackoff)
	}
	return b.d
}

func (b *acceptBackoff) reset() { b.d = 0 }

// temporary reports whether an accept error leaves the listener usable: the
// process or system is out of file descriptors or memory for now, the
// connection was aborted or reset before it was accepted, or the error says
// it is a timeout or temporary.
func temporary(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// sleep waits for d or until Shutdown; it reports whether the server is
// still running.
func (s *Server) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.stop:
		return false
	}
}
