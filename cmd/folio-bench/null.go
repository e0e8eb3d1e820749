package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/wire"
)

// The null server, a third floor: a server that does no database work.
// It answers the commands the ping and YCSB workloads send at once, with
// replies of the shape Folio gives (a replica set member's hello, and
// $clusterTime and operationTime on every reply, so the driver does what
// it does against Folio): a find returns one YCSB record with the _id of
// its filter, an update reports its statements matched and modified, an
// insert counts its documents, and any other command answers ok: 1.
// Against it, in a process of its own (-null), YCSB-A's share of ping is
// the most any server can reach on the machine; work (-null-work) spins
// each find and update for that long first, a server's own work on them.

// nullServer is the null server on one listener.
type nullServer struct {
	addr     string
	work     time.Duration
	election bson.ObjectID
	record   []byte        // a YCSB record's elements after its _id
	inc      atomic.Uint32 // the cluster time's increment
}

// serveNull answers connections on l until ctx ends.
func serveNull(ctx context.Context, l net.Listener, work time.Duration) error {
	s := &nullServer{addr: l.Addr().String(), work: work, election: bson.NewObjectID()}
	value := strings.Repeat("x", ycsbFieldLen)
	for f := range ycsbFields {
		s.record = bsoncore.AppendStringElement(s.record, fieldName(f), value)
	}
	var conns sync.WaitGroup
	defer conns.Wait()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		conns.Go(func() {
			defer c.Close()
			done := context.AfterFunc(ctx, func() { c.Close() })
			defer done()
			s.serve(c)
		})
	}
}

// serve answers the requests of one connection until it ends.
func (s *nullServer) serve(c net.Conn) {
	var in, out []byte
	for {
		h, err := wire.ReadHeader(c)
		if err != nil {
			return
		}
		if in, err = wire.ReadBody(c, h, in[:0]); err != nil {
			return
		}
		out = out[:0]
		switch h.OpCode {
		case wire.OpQuery: // a driver's first hello
			q, err := wire.ParseQuery(in)
			if err != nil {
				return
			}
			out = wire.AppendReply(out, 0, h.RequestID, 0, 0, 0, s.reply(q.Query))
		case wire.OpMsg:
			m, err := wire.ParseMsg(h, in)
			if err != nil {
				return
			}
			cmd, err := m.Command()
			if err != nil {
				return
			}
			out = wire.AppendMsg(out, 0, h.RequestID, 0, s.reply(cmd))
		default:
			return
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// reply is the reply to cmd.
func (s *nullServer) reply(cmd bson.Raw) []byte {
	first, err := cmd.IndexErr(0)
	if err != nil {
		return s.finish(bsoncore.AppendDocumentStart(nil))
	}
	name := strings.ToLower(first.Key())
	if s.work > 0 && (name == "find" || name == "update") {
		for start := time.Now(); time.Since(start) < s.work; {
		}
	}
	i, r := bsoncore.AppendDocumentStart(nil)
	switch name {
	case "hello", "ismaster":
		r = bsoncore.AppendBooleanElement(r, "isWritablePrimary", true)
		r = bsoncore.AppendStringElement(r, "setName", "folio")
		r = bsoncore.AppendInt32Element(r, "setVersion", 1)
		hosts, h := bsoncore.AppendArrayElementStart(r, "hosts")
		h = bsoncore.AppendStringElement(h, "0", s.addr)
		r, _ = bsoncore.AppendArrayEnd(h, hosts)
		r = bsoncore.AppendStringElement(r, "primary", s.addr)
		r = bsoncore.AppendStringElement(r, "me", s.addr)
		r = bsoncore.AppendBooleanElement(r, "secondary", false)
		r = bsoncore.AppendObjectIDElement(r, "electionId", s.election)
		r = bsoncore.AppendInt32Element(r, "maxBsonObjectSize", wire.MaxBSONSize)
		r = bsoncore.AppendInt32Element(r, "maxMessageSizeBytes", wire.MaxMessageSize)
		r = bsoncore.AppendInt32Element(r, "maxWriteBatchSize", 100_000)
		r = bsoncore.AppendDateTimeElement(r, "localTime", time.Now().UnixMilli())
		r = bsoncore.AppendInt32Element(r, "logicalSessionTimeoutMinutes", 30)
		r = bsoncore.AppendInt32Element(r, "minWireVersion", 0)
		r = bsoncore.AppendInt32Element(r, "maxWireVersion", 21)
	case "find":
		coll, _ := first.Value().StringValueOK()
		db, _ := cmd.Lookup("$db").StringValueOK()
		cursor, c := bsoncore.AppendDocumentElementStart(r, "cursor")
		batch, b := bsoncore.AppendArrayElementStart(c, "firstBatch")
		doc, d := bsoncore.AppendDocumentElementStart(b, "0")
		if id, err := cmd.LookupErr("filter", "_id"); err == nil {
			d = bsoncore.AppendValueElement(d, "_id", bsoncore.Value{Type: bsoncore.Type(id.Type), Data: id.Value})
		}
		d, _ = bsoncore.AppendDocumentEnd(append(d, s.record...), doc)
		c, _ = bsoncore.AppendArrayEnd(d, batch)
		c = bsoncore.AppendInt64Element(c, "id", 0)
		c = bsoncore.AppendStringElement(c, "ns", db+"."+coll)
		r, _ = bsoncore.AppendDocumentEnd(c, cursor)
	case "update":
		n := int32(count(cmd, "updates"))
		r = bsoncore.AppendInt32Element(r, "n", n)
		r = bsoncore.AppendObjectIDElement(r, "electionId", s.election)
		op, o := bsoncore.AppendDocumentElementStart(r, "opTime")
		o = bsoncore.AppendTimestampElement(o, "ts", uint32(time.Now().Unix()), s.inc.Load())
		o = bsoncore.AppendInt64Element(o, "t", 1)
		r, _ = bsoncore.AppendDocumentEnd(o, op)
		r = bsoncore.AppendInt32Element(r, "nModified", n)
	case "insert":
		r = bsoncore.AppendInt32Element(r, "n", int32(count(cmd, "documents")))
	}
	return s.finish(i, r)
}

// finish ends reply r, started at i, with ok: 1 and the cluster time.
func (s *nullServer) finish(i int32, r []byte) []byte {
	r = bsoncore.AppendDoubleElement(r, "ok", 1)
	secs, inc := uint32(time.Now().Unix()), s.inc.Add(1)
	ct, c := bsoncore.AppendDocumentElementStart(r, "$clusterTime")
	c = bsoncore.AppendTimestampElement(c, "clusterTime", secs, inc)
	sig, g := bsoncore.AppendDocumentElementStart(c, "signature")
	g = bsoncore.AppendBinaryElement(g, "hash", 0, make([]byte, 20))
	g = bsoncore.AppendInt64Element(g, "keyId", 0)
	c, _ = bsoncore.AppendDocumentEnd(g, sig)
	r, _ = bsoncore.AppendDocumentEnd(c, ct)
	r = bsoncore.AppendTimestampElement(r, "operationTime", secs, inc)
	r, _ = bsoncore.AppendDocumentEnd(r, i)
	return r
}

// count is the number of elements of cmd's array field name.
func count(cmd bson.Raw, name string) int {
	a, ok := cmd.Lookup(name).ArrayOK()
	if !ok {
		return 0
	}
	vals, _ := a.Values()
	return len(vals)
}

// runNull serves the null server on addr until ctx ends.
func runNull(ctx context.Context, addr string, work time.Duration, log io.Writer) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "null server on %s, %v of work per find and update\n", l.Addr(), work)
	return serveNull(ctx, l, work)
}
