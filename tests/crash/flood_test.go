package crash

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/wire"
	"github.com/folio-db/folio/tests/folioproc"
)

// floodGuard bounds each flood, so that a server that stops answering fails
// the test instead of hanging it.
const floodGuard = 2 * time.Minute

// rssKiB is the resident set size of process pid in KiB.
func rssKiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// helloMsg is an OP_MSG hello, negotiating compressors when given.
func helloMsg(t *testing.T, reqID int32, compressors ...string) []byte {
	t.Helper()
	d := bson.D{{Key: "hello", Value: 1}}
	if len(compressors) > 0 {
		d = append(d, bson.E{Key: "compression", Value: compressors})
	}
	d = append(d, bson.E{Key: "$db", Value: "admin"})
	body, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return wire.AppendMsg(nil, reqID, 0, 0, body)
}

// roundTrip writes msg on nc and reads one reply.
func roundTrip(nc net.Conn, msg []byte) error {
	nc.SetDeadline(time.Now().Add(floodGuard))
	if _, err := nc.Write(msg); err != nil {
		return err
	}
	_, _, err := wire.ReadMessage(nc)
	return err
}

// dialMany opens n connections to addr, each of which runs msg (hello when
// nil, so that the server has read and answered a message on it), at most
// 64 at a time.
func dialMany(t *testing.T, addr string, n int, msg []byte) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			nc, err := net.DialTimeout("tcp", addr, floodGuard)
			if err == nil && msg == nil {
				err = roundTrip(nc, helloMsg(t, 1))
			} else if err == nil {
				err = roundTrip(nc, msg)
			}
			if err != nil {
				errs <- fmt.Errorf("connection %d: %w", i, err)
				return
			}
			conns[i] = nc
		}()
	}
	wg.Wait()
	close(errs)
	t.Cleanup(func() {
		for _, nc := range conns {
			if nc != nil {
				nc.Close()
			}
		}
	})
	for err := range errs {
		t.Fatal(err)
	}
	return conns
}

// ping checks that the server still answers a new client.
func ping(t *testing.T, addr string) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, floodGuard)
	if err != nil {
		t.Fatalf("dial after the flood: %v", err)
	}
	defer nc.Close()
	if err := roundTrip(nc, helloMsg(t, 7)); err != nil {
		t.Fatalf("hello after the flood: %v", err)
	}
}

// TestConnectionFlood opens a few thousand idle connections to a real
// folio process and checks that its memory grows by a bounded amount per
// connection and that it keeps serving. The per-connection figure is
// logged (go test -v -run TestConnectionFlood ./tests/crash).
func TestConnectionFlood(t *testing.T) {
	const n = 3000
	p := folioproc.Start(t, t.TempDir())
	ping(t, p.Addr())
	before := rssKiB(t, p.PID())
	start := time.Now()
	dialMany(t, p.Addr(), n, nil)
	took := time.Since(start)
	time.Sleep(200 * time.Millisecond)
	after := rssKiB(t, p.PID())
	perConn := float64(after-before) * 1024 / n
	t.Logf("%d idle connections in %v: RSS %d KiB -> %d KiB, %.0f bytes per connection", n, took, before, after, perConn)
	if perConn > 32<<10 {
		t.Fatalf("%.0f bytes per idle connection", perConn)
	}
	ping(t, p.Addr())
}

// TestIdleAfterLargeReplies checks that connections that received a large
// reply and went idle keep no reply-sized buffer: the server's memory grows
// by far less than the reply size per connection.
func TestIdleAfterLargeReplies(t *testing.T) {
	const n, size = 1000, 256 << 10
	p := folioproc.Start(t, t.TempDir())
	big, err := bson.Marshal(bson.D{{Key: "insert", Value: "big"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: strings.Repeat("x", size)}}}}, {Key: "$db", Value: "flood"}})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.DialTimeout("tcp", p.Addr(), floodGuard)
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(nc, wire.AppendMsg(nil, 1, 0, 0, big)); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	find, err := bson.Marshal(bson.D{{Key: "find", Value: "big"}, {Key: "$db", Value: "flood"}})
	if err != nil {
		t.Fatal(err)
	}
	before := rssKiB(t, p.PID())
	dialMany(t, p.Addr(), n, wire.AppendMsg(nil, 2, 0, 0, find))
	time.Sleep(200 * time.Millisecond)
	after := rssKiB(t, p.PID())
	perConn := float64(after-before) * 1024 / n
	t.Logf("%d idle connections after a %d KiB reply each: RSS %d KiB -> %d KiB, %.0f bytes per connection", n, size>>10, before, after, perConn)
	if perConn > size/4 {
		t.Fatalf("%.0f bytes per idle connection after a %d-byte reply", perConn, size)
	}
	ping(t, p.Addr())
}

// TestCompressionBombFlood sends, on many connections at once, OP_COMPRESSED
// messages of a few dozen bytes that announce 47MB, and checks that the
// server neither allocates the announced sizes nor stops serving.
func TestCompressionBombFlood(t *testing.T) {
	const n = 300
	p := folioproc.Start(t, t.TempDir())
	ping(t, p.Addr())
	before := rssKiB(t, p.PID())
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := []string{"snappy", "zstd", "zlib"}[i%3]
			nc, err := net.DialTimeout("tcp", p.Addr(), floodGuard)
			if err != nil {
				errs <- err
				return
			}
			defer nc.Close()
			if err := roundTrip(nc, helloMsg(t, 1, name)); err != nil {
				errs <- err
				return
			}
			id, _ := wire.CompressorID(name)
			if _, err := nc.Write(bomb(t, id)); err != nil {
				errs <- err
				return
			}
			// The server closes the connection without a reply.
			if _, _, err := wire.ReadMessage(nc); err == nil {
				errs <- fmt.Errorf("%s bomb got a reply", name)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	after := rssKiB(t, p.PID())
	t.Logf("%d bombs announcing 47MB each: RSS %d KiB -> %d KiB", n, before, after)
	if after-before > 256<<10 {
		t.Fatalf("RSS grew by %d KiB", after-before)
	}
	ping(t, p.Addr())
}

// bombSize is what a bomb announces: just under maxMessageSizeBytes.
const bombSize = 47_000_000

// bomb is an OP_COMPRESSED message of a few dozen bytes announcing bombSize
// bytes: the start of a real compressed stream of zeros, cut short.
func bomb(t *testing.T, id byte) []byte {
	var data []byte
	switch id {
	case wire.CompressorSnappy:
		data = binary.AppendUvarint(nil, bombSize)
		data = append(data, make([]byte, 16)...)
	case wire.CompressorZstd:
		data = zstdZeros[:22]
	case wire.CompressorZlib:
		data = zlibZeros[:22]
	}
	msg := binary.LittleEndian.AppendUint32(nil, 0)
	msg = binary.LittleEndian.AppendUint32(msg, 2)
	msg = binary.LittleEndian.AppendUint32(msg, 0)
	msg = binary.LittleEndian.AppendUint32(msg, uint32(wire.OpCompressed))
	msg = binary.LittleEndian.AppendUint32(msg, uint32(wire.OpMsg))
	msg = binary.LittleEndian.AppendUint32(msg, bombSize)
	msg = append(msg, id)
	msg = append(msg, data...)
	binary.LittleEndian.PutUint32(msg, uint32(len(msg)))
	return msg
}

// zstdZeros and zlibZeros are bombSize zeros, compressed.
var zstdZeros, zlibZeros = func() ([]byte, []byte) {
	zeros := make([]byte, bombSize)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		panic(err)
	}
	var zb bytes.Buffer
	w := zlib.NewWriter(&zb)
	w.Write(zeros)
	w.Close()
	return enc.EncodeAll(zeros, nil), zb.Bytes()
}()
