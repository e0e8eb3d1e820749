package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/commands"
	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/logring"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/storage/pebblekv"
	"github.com/folio-db/folio/internal/wire"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testServer is a Server over an in-memory store, serving a loopback port.
type testServer struct {
	srv  *Server
	svc  *commands.Service
	addr string
	log  *syncBuffer
	done chan error
}

// startTestServer serves ln (a fresh loopback listener when nil) with at
// most maxConns connections (the default when zero).
func startTestServer(t testing.TB, ln net.Listener, maxConns int64) *testServer {
	t.Helper()
	kv, err := pebblekv.Open("", pebblekv.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(kv, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	svc := &commands.Service{
		Engine:         eng,
		Clock:          clock.New(nil),
		Cursors:        cursors.NewRegistry(time.Minute),
		Sessions:       sessions.NewRegistry(),
		Log:            log,
		Recent:         logring.New(16),
		Host:           ln.Addr().String(),
		Compressors:    []string{"snappy", "zstd", "zlib"},
		Started:        time.Now(),
		MaxConnections: maxConns,
	}
	ts := &testServer{srv: New(svc, log), svc: svc, addr: ln.Addr().String(), log: logs, done: make(chan error, 1)}
	go func() { ts.done <- ts.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ts.srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-ts.done; err != nil {
			t.Errorf("serve: %v", err)
		}
		svc.Sessions.EndWhere(func(string) bool { return true })
		svc.Cursors.CloseAll()
		eng.Close()
		kv.Close()
	})
	return ts
}

// rawConn is a wire-level client.
type rawConn struct {
	t     testing.TB
	nc    net.Conn
	reqID int32
}

func (ts *testServer) dial(t testing.TB) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", ts.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc}
}

// send writes cmd (alternating keys and values, $db added) as an OP_MSG,
// compressed with compressor unless it is negative, and returns the
// request id.
func (c *rawConn) send(compressor int, kv ...any) int32 {
	c.t.Helper()
	d := bson.D{}
	for i := 0; i < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	d = append(d, bson.E{Key: "$db", Value: "admin"})
	body, err := bson.Marshal(d)
	if err != nil {
		c.t.Fatal(err)
	}
	c.reqID++
	msg := wire.AppendMsg(nil, c.reqID, 0, 0, body)
	if compressor >= 0 {
		if msg, err = wire.Compress(nil, msg, byte(compressor), -1); err != nil {
			c.t.Fatal(err)
		}
	}
	c.write(msg)
	return c.reqID
}

func (c *rawConn) write(msg []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.nc.Write(msg); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the reply document of the next message, or the read error.
func (c *rawConn) read() (wire.Header, bson.Raw, error) {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	h, body, err := wire.ReadMessage(c.nc)
	if err != nil {
		return h, nil, err
	}
	if h.OpCode == wire.OpCompressed {
		if h, body, _, err = wire.Decompress(h, body); err != nil {
			c.t.Fatal(err)
		}
	}
	m, err := wire.ParseMsg(h, body)
	if err != nil {
		c.t.Fatal(err)
	}
	return h, m.Body, nil
}

// run sends cmd and returns its reply, failing the test on a read error.
func (c *rawConn) run(kv ...any) bson.Raw {
	c.t.Helper()
	id := c.send(-1, kv...)
	h, reply, err := c.read()
	if err != nil {
		c.t.Fatalf("reading the reply to %v: %v", kv, err)
	}
	if h.ResponseTo != id {
		c.t.Fatalf("reply to %d, want %d", h.ResponseTo, id)
	}
	return reply
}

// expectClosed checks that the server closes the connection without
// replying.
func (c *rawConn) expectClosed() {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	if n, err := c.nc.Read(b[:]); n != 0 || err == nil || isTimeout(err) {
		c.t.Fatalf("connection still open: read %d bytes, %v", n, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// okOf returns a reply's ok field as a float.
func okOf(reply bson.Raw) float64 {
	v, _ := reply.Lookup("ok").AsFloat64OK()
	return v
}
