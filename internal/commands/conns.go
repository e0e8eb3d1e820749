package commands

import (
	"sort"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
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
	s.Hello.setExhaust(c, notExhaust)
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	delete(s.conns.conns, c.ID)
}

// Kinds of exhaust hello a connection may stream.
const (
	notExhaust int32 = iota
	exhaustHello
	exhaustIsMaster
)

// helloMetrics are MongoDB's HelloMetrics: the connections whose last
// request was an exhaust hello or isMaster, streaming its replies, and
// the hellos waiting for a topology change.
type helloMetrics struct {
	exhaust  [3]atomic.Int64 // by kind; [notExhaust] unused
	awaiting atomic.Int64
}

// setExhaust records that c now streams the exhaust hello of kind (or
// none), moving it between the counts.
func (m *helloMetrics) setExhaust(c *Conn, kind int32) {
	if c == nil {
		return
	}
	if old := c.exhaust.Swap(kind); old != kind {
		m.exhaust[old].Add(-1)
		m.exhaust[kind].Add(1)
	}
}

// connectionsStatus is serverStatus' connections section, in MongoDB
// 7.0's order: open connections, those still available and created in
// all, those refused, those running an operation (active), those served
// by their own thread (each connection is served by its own goroutine),
// those streaming an exhaust isMaster or hello, and the hellos awaiting
// a topology change.
func (s *Service) connectionsStatus() bson.D {
	open := int32(s.Connections.Load())
	active := int32(0)
	for _, op := range s.ops.list() {
		if op.conn != nil {
			active++
		}
	}
	return bson.D{
		{Key: "current", Value: open},
		{Key: "available", Value: int32(max(s.MaxConnections-s.Connections.Load(), 0))},
		{Key: "totalCreated", Value: int32(s.TotalConns.Load())},
		{Key: "rejected", Value: int32(s.RejectedConns.Load())},
		{Key: "active", Value: active},
		{Key: "threaded", Value: open},
		{Key: "exhaustIsMaster", Value: int32(s.Hello.exhaust[exhaustIsMaster].Load())},
		{Key: "exhaustHello", Value: int32(s.Hello.exhaust[exhaustHello].Load())},
		{Key: "awaitingTopologyChanges", Value: int32(s.Hello.awaiting.Load())},
	}
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
