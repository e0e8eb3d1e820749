package commands

import (
	"sort"
	"sync"
)

// connRegistry holds the open client connections, for currentOp's idle
// connections.
type connRegistry struct {
	mu    sync.Mutex
	conns map[int64]*Conn
}

// OpenConn registers a client connection the server accepted, until
// CloseConn.
func (s *Service) OpenConn(c *Conn) {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	if s.conns.conns == nil {
		s.conns.conns = map[int64]*Conn{}
	}
	s.conns.conns[c.ID] = c
}

// CloseConn forgets a connection OpenConn registered.
func (s *Service) CloseConn(c *Conn) {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	delete(s.conns.conns, c.ID)
}

// list returns the open connections by id.
func (r *connRegistry) list() []*Conn {
	r.mu.Lock()
	out := make([]*Conn, 0, len(r.conns))
	for _, c := range r.conns {
		out = append(out, c)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
