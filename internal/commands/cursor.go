package commands

import (
	"context"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/wire"
)

// defaultFirstBatch is how many documents a first batch holds when the
// client names no batchSize, as in MongoDB.
const defaultFirstBatch = 101

func init() {
	register(getMoreCmd, "getMore")
	register(killCursorsCmd, "killCursors")
}

// cursorReply builds {cursor: {id, ns, <batchField>: docs}}.
func cursorReply(id int64, ns, batchField string, docs []bson.Raw) bson.Raw {
	size := 64 + len(ns)
	for _, d := range docs {
		size += len(d) + 8
	}
	start, out := bsoncore.AppendDocumentStart(make([]byte, 0, size))
	var cur, arr int32
	cur, out = bsoncore.AppendDocumentElementStart(out, "cursor")
	out = bsoncore.AppendInt64Element(out, "id", id)
	out = bsoncore.AppendStringElement(out, "ns", ns)
	arr, out = bsoncore.AppendArrayElementStart(out, batchField)
	var key [20]byte
	for i, d := range docs {
		out = bsoncore.AppendDocumentElement(out, string(strconv.AppendInt(key[:0], int64(i), 10)), d)
	}
	out, _ = bsoncore.AppendArrayEnd(out, arr)
	out, _ = bsoncore.AppendDocumentEnd(out, cur)
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// oneBatchCursor answers a listing command whose results all fit one batch.
func oneBatchCursor(ns string, docs []bson.Raw) bson.Raw {
	return cursorReply(0, ns, "firstBatch", docs)
}

// fillBatch reads up to n documents (n <= 0: no count limit) from c, and no
// more than 16 MiB of them after the first. done reports that c is
// exhausted: a full batch looks one document ahead, so that a cursor whose
// last document ends a batch is closed with it.
func fillBatch(c *cursors.Cursor, n int64) (batch []bson.Raw, done bool, err error) {
	size := 0
	for {
		if n > 0 && int64(len(batch)) == n {
			doc, err := c.Next()
			if err != nil || doc == nil {
				return batch, err == nil, err
			}
			c.Unread(doc)
			return batch, false, nil
		}
		doc, err := c.Next()
		if err != nil {
			return nil, false, err
		}
		if doc == nil {
			return batch, true, nil
		}
		if len(batch) > 0 && size+len(doc) > wire.MaxBSONSize {
			c.Unread(doc)
			return batch, false, nil
		}
		size += len(doc)
		batch = append(batch, doc)
	}
}

// serveFirstBatch fills the first batch from src, read under b, and builds
// the reply; a cursor with documents left is registered for getMores, an
// exhausted one (or a single batch) is closed and reported with id 0. A
// cursor of a transaction is killed when the transaction ends.
func (s *Service) serveFirstBatch(r *Request, coll string, src cursors.Source, b *binding, batchSize int64, single bool) (bson.Raw, error) {
	bs := &boundSource{Source: src, ctx: b}
	c := cursors.New(r.DB, coll, bs)
	if r.Txn != nil {
		c.Owner = r.Txn
	}
	if batchSize == 0 && !single {
		batchSize = defaultFirstBatch
	}
	batch, done, err := fillBatch(c, batchSize)
	if err != nil || done || single {
		_ = src.Close()
		if err != nil {
			return nil, err
		}
		return cursorReply(0, r.DB+"."+coll, "firstBatch", batch), nil
	}
	if dl, ok := r.Ctx.Deadline(); ok {
		bs.limited, bs.left = true, time.Until(dl)
	}
	b.bind(context.Background())
	s.Cursors.Add(c)
	return cursorReply(c.ID, r.DB+"."+coll, "firstBatch", batch), nil
}

// serveTailable opens a tailable cursor, read under b: it stays open when it
// runs out of documents, for later getMores to return new ones. Its
// getMores' maxTimeMS is how long they await new documents.
func (s *Service) serveTailable(db, coll string, tc *engine.TailCursor, b *binding, batchSize int64, awaitData bool) (bson.Raw, error) {
	c := cursors.New(db, coll, &boundSource{Source: tc, ctx: b})
	c.Tailable, c.AwaitData = true, awaitData
	if batchSize == 0 {
		batchSize = defaultFirstBatch
	}
	batch, _, err := fillBatch(c, batchSize)
	if err != nil {
		_ = tc.Close()
		return nil, err
	}
	b.bind(context.Background())
	s.Cursors.Add(c)
	return cursorReply(c.ID, db+"."+coll, "firstBatch", batch), nil
}

// defaultAwaitTime is how long a getMore on an awaitData cursor waits for
// new documents when the client gives no maxTimeMS, as in MongoDB.
const defaultAwaitTime = time.Second

func getMoreCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.GetMore.Add(1)
	idv := r.Cmd.Lookup("getMore")
	if idv.Type != bson.TypeInt64 {
		return nil, wrongType("getMore", "getMore", idv, "long")
	}
	var coll string
	var batchSize int64
	await := defaultAwaitTime
	err := eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "collection":
			coll, err = argString("getMore", key, v)

		case "batchSize":
			batchSize, err = argInt("getMore", key, v)
			if err == nil && batchSize < 0 {
				err = mongoerr.New(mongoerr.Code(51024), "BSON field 'batchSize' value must be >= 0, actual value '%d'", batchSize)
			}
		case "term", "lastKnownCommittedOpTime":
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	if coll == "" {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'getMore.collection' is missing but a required field")
	}
	if v, err := r.Cmd.LookupErr("maxTimeMS"); err == nil {
		ms, err := argInt("getMore", "maxTimeMS", v)
		if err != nil {
			return nil, err
		}
		await = time.Duration(ms) * time.Millisecond
	}
	c, err := s.Cursors.Checkout(idv.Int64(), r.DB, coll)
	if err != nil {
		return nil, err
	}
	bs := c.Source().(*boundSource)
	detach := bs.attach(r.Ctx)
	batch, done, err := fillBatch(c, batchSize)
	if err == nil && len(batch) == 0 && c.AwaitData {
		bs.Source.(*engine.TailCursor).Wait(r.Ctx, await)
		if err = mongoerr.Interruption(r.Ctx); err == nil {
			batch, done, err = fillBatch(c, batchSize)
		}
	}
	detach()
	if c.Tailable {
		done = false
	}
	id := c.ID
	if err != nil || done {
		_ = s.Cursors.Close(c)
		if err != nil {
			return nil, err
		}
		id = 0
	} else {
		s.Cursors.Return(c)
	}
	return cursorReply(id, r.DB+"."+coll, "nextBatch", batch), nil
}

func killCursorsCmd(s *Service, r *Request) (bson.Raw, error) {
	if _, err := collectionArg(r.Cmd); err != nil {
		return nil, err
	}
	var ids []int64
	err := eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		if key != "cursors" {
			return false, nil
		}
		if v.Type != bson.TypeArray {
			return true, wrongType("killCursors", key, v, "array")
		}
		vals, _ := v.Array().Values()
		for _, id := range vals {
			if id.Type != bson.TypeInt64 {
				return true, wrongType("killCursors", key, id, "long")
			}
			ids = append(ids, id.Int64())
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	killed, notFound := bson.A{}, bson.A{}
	for _, id := range ids {
		if s.Cursors.Kill(id) {
			killed = append(killed, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	return marshal(bson.D{
		{Key: "cursorsKilled", Value: killed},
		{Key: "cursorsNotFound", Value: notFound},
		{Key: "cursorsAlive", Value: bson.A{}},
		{Key: "cursorsUnknown", Value: bson.A{}},
	}), nil
}
