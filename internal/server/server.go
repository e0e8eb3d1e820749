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

	mu      sync.Mutex
	ln      net.Listener
	conns   map[net.Conn]struct{}
	closing bool
	wg      sync.WaitGroup
	nextID  atomic.Int64
	// live are the connections served now, with the request each was
	// running at the disconnect watcher's last look; done stops the
	// watcher.
	live     map[*conn]uint64
	done     chan struct{}
	stopOnce sync.Once
}

// New returns a server running requests through svc.
func New(svc *commands.Service, log *slog.Logger) *Server {
	s := &Server{svc: svc, log: log, conns: map[net.Conn]struct{}{}, live: map[*conn]uint64{}, done: make(chan struct{})}
	go s.watch()
	return s
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
	s.conns[nc] = struct{}{}
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

// StopAccepting closes the listener; the connections open stay served.
func (s *Server) StopAccepting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
}

// Shutdown stops accepting, closes every connection and waits for their
// goroutines, or for ctx to end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.StopAccepting()
	s.stopOnce.Do(func() { close(s.done) })
	s.mu.Lock()
	for nc := range s.conns {
		nc.Close()
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
		return ctx.Err()
	}
}
