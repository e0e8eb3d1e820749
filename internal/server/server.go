// Package server accepts MongoDB wire-protocol connections and runs each
// request through the command service: one goroutine per connection, which
// reads a message, runs it, and writes the reply. A malformed message
// closes only its own connection; every other connection keeps working.
package server

import (
	"context"
	"errors"
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

	mu sync.Mutex
	ln net.Listener
	// conns are the open connections, each true while it runs a request.
	conns   map[net.Conn]bool
	closing bool
	wg      sync.WaitGroup
	nextID  atomic.Int64
}

// New returns a server running requests through svc.
func New(svc *commands.Service, log *slog.Logger) *Server {
	return &Server{svc: svc, log: log, conns: map[net.Conn]bool{}}
}

// Serve accepts connections on ln until Shutdown; it returns nil after
// Shutdown and the accept error otherwise.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !s.track(nc) {
			nc.Close()
			return nil
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(nc)
			s.serveConn(nc)
		}()
	}
}

func (s *Server) track(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[nc] = false
	s.svc.Connections.Add(1)
	s.svc.TotalConns.Add(1)
	return true
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

// Shutdown stops accepting and closes every connection waiting for a
// request; a connection running one closes once it has written the reply,
// so no operation that ran goes unanswered. It waits for the connections'
// goroutines, or, when ctx ends first, closes the remaining connections.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
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
