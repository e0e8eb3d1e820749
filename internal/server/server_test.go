package server

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/commands"
	"github.com/folio-db/folio/internal/wire"
)

// TestPanicIsAnsweredAndContained proves that a command whose handler
// panics gets an InternalError reply, its connection is closed, the stack
// is logged, and another client connected meanwhile keeps working.
func TestPanicIsAnsweredAndContained(t *testing.T) {
	beforeRun = func(cmd bson.Raw) {
		if _, err := cmd.LookupErr("panicForTest"); err == nil {
			var none []byte
			_ = none[len(cmd)] // a real runtime panic: index out of range
		}
	}
	t.Cleanup(func() { beforeRun = nil })
	ts := startTestServer(t, nil, 0)
	other := ts.dial(t)
	if r := other.run("ping", 1); okOf(r) != 1 {
		t.Fatalf("ping: %s", r)
	}

	victim := ts.dial(t)
	id := victim.send(-1, "ping", 1, "panicForTest", true)
	h, reply, err := victim.read()
	if err != nil {
		t.Fatalf("no reply to the panicking request: %v", err)
	}
	if h.ResponseTo != id || okOf(reply) != 0 || reply.Lookup("code").Int32() != 1 || reply.Lookup("codeName").StringValue() != "InternalError" {
		t.Fatalf("reply %s to %d, want InternalError to %d", reply, h.ResponseTo, id)
	}
	victim.expectClosed()
	if log := ts.log.String(); !strings.Contains(log, "request handler panicked") || !strings.Contains(log, "goroutine") {
		t.Fatalf("no log line with the stack:\n%s", log)
	}

	for i := range 3 {
		if r := other.run("insert", "c", "documents", bson.A{bson.D{{Key: "_id", Value: i}}}); okOf(r) != 1 {
			t.Fatalf("insert after the panic: %s", r)
		}
	}
	if r := ts.dial(t).run("ping", 1); okOf(r) != 1 {
		t.Fatalf("new connection after the panic: %s", r)
	}
}

// flakyListener fails its first n accepts with err.
type flakyListener struct {
	net.Listener
	mu  sync.Mutex
	n   int
	err error
	at  []time.Time
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.at = append(l.at, time.Now())
		l.mu.Unlock()
		return nil, l.err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

func acceptError(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// TestAcceptRetriesTemporaryErrors proves that running out of file
// descriptors (and the other temporary accept errors) pauses accepting
// instead of ending it, with pauses growing from 5ms.
func TestAcceptRetriesTemporaryErrors(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED} {
		t.Run(errno.Error(), func(t *testing.T) {
			inner, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ln := &flakyListener{Listener: inner, n: 5, err: acceptError(errno)}
			ts := startTestServer(t, ln, 0)
			if r := ts.dial(t).run("ping", 1); okOf(r) != 1 {
				t.Fatalf("ping after accept errors: %s", r)
			}
			ln.mu.Lock()
			at := ln.at
			ln.mu.Unlock()
			if len(at) != 5 {
				t.Fatalf("%d failed accepts, want 5", len(at))
			}
			// The pauses are 5, 10, 20 and 40ms.
			if d := at[4].Sub(at[0]); d < 75*time.Millisecond {
				t.Fatalf("4 retries within %v: no backoff", d)
			}
			if n := strings.Count(ts.log.String(), "accept failed; retrying"); n != 5 {
				t.Fatalf("%d accept errors logged, want 5:\n%s", n, ts.log.String())
			}
		})
	}
}

// TestAcceptStopsOnPermanentError proves that an error that is not
// temporary still ends Serve with that error.
func TestAcceptStopsOnPermanentError(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	perm := errors.New("listener broken")
	s := New(&commands.Service{MaxConnections: 1}, slog.New(slog.DiscardHandler))
	err = s.Serve(&flakyListener{Listener: inner, n: 1, err: perm})
	if !errors.Is(err, perm) {
		t.Fatalf("Serve returned %v, want %v", err, perm)
	}
}

func TestAcceptBackoff(t *testing.T) {
	var b acceptBackoff
	var got []time.Duration
	for range 10 {
		got = append(got, b.next())
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("backoff %v, want %v ms", got, want)
		}
	}
	b.reset()
	if d := b.next(); d != minAcceptBackoff {
		t.Fatalf("after reset %v", d)
	}
}

func TestTemporary(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{acceptError(syscall.EMFILE), true},
		{acceptError(syscall.ENFILE), true},
		{acceptError(syscall.ECONNABORTED), true},
		{acceptError(syscall.ENOBUFS), true},
		{net.ErrClosed, false},
		{errors.New("other"), false},
		{&net.OpError{Op: "accept", Err: timeoutErr{}}, true},
	}
	for _, c := range cases {
		if got := temporary(c.err); got != c.want {
			t.Errorf("temporary(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestMaxConnections proves that connections beyond the limit are closed as
// they are accepted, counted in serverStatus.connections.rejected, and that
// connections.available is the real remainder.
// https://www.mongodb.com/docs/manual/reference/configuration-options/#mongodb-setting-net.maxIncomingConnections
func TestMaxConnections(t *testing.T) {
	ts := startTestServer(t, nil, 3)
	a, b := ts.dial(t), ts.dial(t)
	a.run("ping", 1)
	b.run("ping", 1)
	conns := a.run("serverStatus", 1).Lookup("connections").Document()
	if cur, avail := conns.Lookup("current").Int32(), conns.Lookup("available").Int32(); cur != 2 || avail != 1 {
		t.Fatalf("connections %s, want current 2, available 1", conns)
	}
	c := ts.dial(t)
	c.run("ping", 1)
	refused := ts.dial(t)
	refused.send(-1, "ping", 1)
	refused.expectClosed()
	conns = a.run("serverStatus", 1).Lookup("connections").Document()
	if cur, avail, rej := conns.Lookup("current").Int32(), conns.Lookup("available").Int32(), conns.Lookup("rejected").Int32(); cur != 3 || avail != 0 || rej != 1 {
		t.Fatalf("connections %s, want current 3, available 0, rejected 1", conns)
	}
	if !strings.Contains(ts.log.String(), "too many open connections") {
		t.Fatalf("refusal not logged:\n%s", ts.log.String())
	}
	c.nc.Close()
	deadline := time.Now().Add(5 * time.Second)
	for ts.svc.Connections.Load() != 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if r := ts.dial(t).run("ping", 1); okOf(r) != 1 {
		t.Fatalf("ping once a connection is free: %s", r)
	}
}

func TestClampConnections(t *testing.T) {
	cases := []struct {
		want    int64
		fd      uint64
		expect  int64
		comment string
	}{
		{0, 0, 1_000_000, "default without a limit"},
		{0, 1024, 819, "default: 80% of the limit"},
		{0, 20_000_000, 1_000_000, "default: at most 1,000,000"},
		{100, 1024, 100, "explicit below the limit"},
		{5000, 1024, 819, "explicit above the limit"},
		{0, 1, 1, "at least one"},
	}
	for _, c := range cases {
		if got := clampConnections(c.want, c.fd); got != c.expect {
			t.Errorf("%s: clampConnections(%d, %d) = %d, want %d", c.comment, c.want, c.fd, got, c.expect)
		}
	}
}

// TestCompressionNeedsNegotiation proves that OP_COMPRESSED is refused
// (the connection closed) unless hello negotiated that compressor.
// https://github.com/mongodb/specifications/blob/master/source/compression/OP_COMPRESSED.md
func TestCompressionNeedsNegotiation(t *testing.T) {
	ts := startTestServer(t, nil, 0)

	plain := ts.dial(t)
	plain.run("hello", 1)
	plain.send(int(wire.CompressorSnappy), "ping", 1)
	plain.expectClosed()

	other := ts.dial(t)
	other.run("hello", 1, "compression", bson.A{"snappy"})
	other.send(int(wire.CompressorZstd), "ping", 1)
	other.expectClosed()

	ok := ts.dial(t)
	if r := ok.run("hello", 1, "compression", bson.A{"zstd", "snappy"}); fmt.Sprint(r.Lookup("compression")) != `["zstd","snappy"]` {
		t.Fatalf("negotiated %s", r.Lookup("compression"))
	}
	for _, id := range []byte{wire.CompressorZstd, wire.CompressorSnappy, wire.CompressorNoop} {
		ok.send(int(id), "ping", 1)
		if _, r, err := ok.read(); err != nil || okOf(r) != 1 {
			t.Fatalf("compressed ping with %d: %s %v", id, r, err)
		}
	}
}

// TestCompressionBombIsRefusedCheaply sends OP_COMPRESSED messages of a few
// bytes announcing nearly 48MB on a negotiated connection: each closes only
// its own connection, and together they allocate far less than one
// announced size.
func TestCompressionBombIsRefusedCheaply(t *testing.T) {
	ts := startTestServer(t, nil, 0)
	ids := []byte{wire.CompressorSnappy, wire.CompressorZstd, wire.CompressorZlib}
	bombs := make([][]byte, len(ids))
	for i, id := range ids {
		bombs[i] = bombMessage(t, id)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, id := range ids {
		c := ts.dial(t)
		c.run("hello", 1, "compression", bson.A{wire.CompressorName(id)})
		c.write(bombs[i])
		c.expectClosed()
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Fatalf("three bombs allocated %d bytes", n)
	}
	if r := ts.dial(t).run("ping", 1); okOf(r) != 1 {
		t.Fatalf("ping after the bombs: %s", r)
	}
}

// bombSize is what the bombs announce: just under maxMessageSizeBytes.
const bombSize = 47_000_000

// bombMessage is an OP_COMPRESSED message of a few dozen bytes that
// announces bombSize uncompressed bytes with compressor id: the start of
// a real compressed stream of zeros, cut short.
func bombMessage(t testing.TB, id byte) []byte {
	t.Helper()
	var data []byte
	switch id {
	case wire.CompressorSnappy:
		data = binary.AppendUvarint(nil, bombSize)
		data = append(data, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	case wire.CompressorZstd:
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		data = enc.EncodeAll(make([]byte, bombSize), nil)[:22]
	case wire.CompressorZlib:
		var buf bytes.Buffer
		w := zlib.NewWriter(&buf)
		w.Write(make([]byte, bombSize))
		w.Close()
		data = buf.Bytes()[:22]
	}
	msg := binary.LittleEndian.AppendUint32(nil, 0)
	msg = binary.LittleEndian.AppendUint32(msg, 1)
	msg = binary.LittleEndian.AppendUint32(msg, 0)
	msg = binary.LittleEndian.AppendUint32(msg, uint32(wire.OpCompressed))
	msg = binary.LittleEndian.AppendUint32(msg, uint32(wire.OpMsg))
	msg = binary.LittleEndian.AppendUint32(msg, bombSize)
	msg = append(msg, id)
	msg = append(msg, data...)
	binary.LittleEndian.PutUint32(msg, uint32(len(msg)))
	return msg
}
