// Package server accepts MongoDB wire-protocol connections and runs each
// request through the command service: one goroutine per connection, which
// reads a message, runs it, and writes the reply. A malformed message, or a
// request whose handler panics, closes only its own connection; every other
// connection keeps working.
package server

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/folio-db/folio/internal/commands"
)

// Server serves one listener.
type Server struct {
	svc *commands.Service
	log *slog.Logger
	// tls, when set, is the TLS setup connections are served with.
	tls *TLS
	// max is the most connections served at once; more are closed as
	// soon as they are accepted.
	max int64

	mu sync.Mutex
	ln net.Listener
	// conns are the open connections, each true while it runs a request.
	conns   map[net.Conn]bool
	closing bool
	stop    chan struct{} // closed by Shutdown
	wg      sync.WaitGroup
	nextID  atomic.Int64
	// live are the connections served now, with the request each was
	// running at the disconnect watcher's last look; done stops the
	// watcher.
	live     map[*conn]uint64
	done     chan struct{}
	stopOnce sync.Once
}

// New returns a server running requests through svc that serves at most
// svc.MaxConnections connections at once (MaxConnections(0) when zero).
func New(svc *commands.Service, log *slog.Logger) *Server {
	if svc.MaxConnections <= 0 {
		svc.MaxConnections = MaxConnections(0)
	}
	s := &Server{svc: svc, log: log, max: svc.MaxConnections, conns: map[net.Conn]bool{}, stop: make(chan struct{}),
		live: map[*conn]uint64{}, done: make(chan struct{})}
	go s.watch()
	return s
}

// UseTLS has connections served with t (nil for none); call it before
// Serve.
func (s *Server) UseTLS(t *TLS) { s.tls = t }

// Serve accepts connections on ln until Shutdown; it returns nil after
// Shutdown and the accept error otherwise. Temporary accept errors (out of
// file descriptors, a connection aborted before it was accepted) are logged
// and retried after a pause that grows from 5ms to 1s, as net/http does.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.ln = ln
	stopped := s.closing
	s.mu.Unlock()
	if stopped {
		// StopAccepting ran before Serve recorded ln.
		ln.Close()
		return nil
	}
	var backoff acceptBackoff
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return nil
			}
			if !temporary(err) {
				return err
			}
			d := backoff.next()
			s.log.Warn("accept failed; retrying", "err", err, "retryIn", d)
			if !s.sleep(d) {
				return nil
			}
			continue
		}
		backoff.reset()
		switch s.track(nc) {
		case closing:
			nc.Close()
			return nil
		case refused:
			s.svc.RejectedConns.Add(1)
			if !s.svc.Quiet() {
				s.log.Warn("connection refused because there are too many open connections",
					"remote", nc.RemoteAddr().String(), "connectionCount", s.svc.Connections.Load(), "maxConnections", s.max)
			}
			nc.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(nc)
			s.serveConn(nc)
		}()
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

type admission int

const (
	admitted admission = iota
	refused
	closing
)

func (s *Server) track(nc net.Conn) admission {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return closing
	}
	if int64(len(s.conns)) >= s.max {
		return refused
	}
	s.conns[nc] = false
	s.svc.Connections.Add(1)
	s.svc.TotalConns.Add(1)
	return admitted
}

func (s *Server) untrack(nc net.Conn) {
	s.mu.Lock()
	delete(s.conns, nc)
	s.mu.Unlock()
	s.svc.Connections.Add(-1)
	nc.Close()
}

// setBusy marks nc as running a request (busy) or waiting for the next
// one. It reports false once the server is shutting down: the connection
// must then end instead.
func (s *Server) setBusy(nc net.Conn, busy bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[nc] = busy
	return true
}

// StopAccepting closes the listener; the connections open stay served
// until their running request, if any, is answered.
func (s *Server) StopAccepting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing {
		close(s.stop)
	}
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
}

// Shutdown stops accepting and closes every connection waiting for a
// request; a connection running one closes once it has written the reply,
// so no operation that ran goes unanswered. It waits for the connections'
// goroutines, or, when ctx ends first, closes the remaining connections.
func (s *Server) Shutdown(ctx context.Context) error {
	s.StopAccepting()
	s.stopOnce.Do(func() { close(s.done) })
	s.mu.Lock()
	for nc, busy := range s.conns {
		if !busy {
			nc.Close()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for nc := range s.conns {
			nc.Close()
		}
		s.mu.Unlock()
		return ctx.Err()
	}
}
