package commands

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
	"github.com/folio-db/folio/internal/values"
	"github.com/folio-db/folio/internal/wire"
)

// defaultFirstBatch is how many documents a find's or aggregate's first
// batch holds when the client names no batchSize, as in MongoDB.
const defaultFirstBatch = 101

// noBatchSize marks a batch size the client did not give.
const noBatchSize = -1

func init() {
	register(getMoreCmd, getMoreSpec, "getMore")
	uncounted("getMore")
	register(killCursorsCmd, killCursorsSpec, "killCursors")
	namesCollection("killCursors")
}

// cursorReply builds {cursor: {<batchField>: docs, id, ns}}: the order of
// MongoDB's cursor response builder, which find, aggregate and getMore use.
// The batch is filled straight into the reply, built in r's scratch
// buffer: fill appends its documents as array elements and reports how
// many.
func cursorReply(r *Request, ns, batchField string, fill func([]byte) ([]byte, int, error), id func() int64) (bson.Raw, int, error) {
	return cursorReplyWith(r, ns, batchField, fill, nil, id)
}

// cursorReplyWith is cursorReply with after, when set, appending fields
// after the batch (a change stream's postBatchResumeToken).
func cursorReplyWith(r *Request, ns, batchField string, fill func([]byte) ([]byte, int, error), after func([]byte) []byte, id func() int64) (bson.Raw, int, error) {
	out, cur := beginCursorReply(r.Scratch, ns)
	arr, out := bsoncore.AppendArrayElementStart(out, batchField)
	out, n, err := fill(out)
	if err != nil {
		return nil, 0, err
	}
	out, _ = bsoncore.AppendArrayEnd(out, arr)
	if after != nil {
		out = after(out)
	}
	cursorID := id()
	r.op.noteCursor(n, cursorID)
	out = bsoncore.AppendInt64Element(out, "id", cursorID)
	out = bsoncore.AppendStringElement(out, "ns", ns)
	if r.atClusterTime != 0 {
		ts := r.atClusterTime.Timestamp()
		out = bsoncore.AppendTimestampElement(out, "atClusterTime", ts.T, ts.I)
	}
	reply := endCursorReply(out, cur)
	r.Scratch = reply[:0]
	return r.own(reply), n, nil
}

// listReply builds {cursor: {id, ns, firstBatch: batch}}, batch being the
// array's elements: the order of the replies of listCollections and
// listIndexes.
func listReply(id int64, ns string, batch []byte) bson.Raw {
	out, cur := beginCursorReply(nil, ns)
	out = bsoncore.AppendInt64Element(out, "id", id)
	out = bsoncore.AppendStringElement(out, "ns", ns)
	arr, out := bsoncore.AppendArrayElementStart(out, "firstBatch")
	out = append(out, batch...)
	out, _ = bsoncore.AppendArrayEnd(out, arr)
	return endCursorReply(out, cur)
}

// replySlack is the room a cursor reply keeps for what Run appends (ok,
// $clusterTime, operationTime), so that it appends in place.
const replySlack = 256

// replyStart is the capacity a cursor reply starts with; fillBatch
// grows it for the batch at once.
const replyStart = 512

// beginCursorReply starts a cursor reply in buf, or in a new buffer if buf
// is short.
func beginCursorReply(buf []byte, ns string) ([]byte, int32) {
	if cap(buf) < replyStart+len(ns) {
		buf = make([]byte, 0, replyStart+len(ns))
	}
	out := bsoncore.AppendInt32(buf[:0], 0)
	cur, out := bsoncore.AppendDocumentElementStart(out, "cursor")
	return out, cur
}

func endCursorReply(out []byte, cur int32) bson.Raw {
	out, _ = bsoncore.AppendDocumentEnd(out, cur)
	out, _ = bsoncore.AppendDocumentEnd(out, 0)
	return out
}

// elemRoom is an array element's bytes besides its document (type, index
// key); growDocs and growBytes bound what a batch's buffer grows for at
// once.
const (
	elemRoom  = 8
	growDocs  = 128
	growBytes = 1 << 20
)

// fillBatch appends up to n documents from c to out as array elements,
// each copied from the cursor as it is read (see docsrc.Lender), and no
// more than 16 MiB of them after the first. done reports that c is
// exhausted: it returned its end within the batch, or, with the batch
// full, its source knows it has nothing left (a reached limit, a drained
// sort, a listing), as MongoDB's isEOF does. A scan whose last document
// fills the batch exactly stays open, and the next getMore returns an
// empty batch and closes it. expect is how many documents the source may
// yield at most (a find's limit), for sizing out.
func fillBatch(out []byte, c *cursors.Cursor, n, expect int64) (_ []byte, count int, done bool, err error) {
	size := 0
	var key [20]byte
	for {
		if int64(count) == n {
			return out, count, c.Exhausted(), nil
		}
		doc, err := c.Lend()
		if err != nil {
			return nil, 0, false, err
		}
		if doc == nil {
			return out, count, true, nil
		}
		if err := tooLarge(doc); err != nil {
			return nil, 0, false, err
		}
		if count > 0 && size+len(doc) > wire.MaxBSONSize {
			c.Unread(slices.Clone(doc))
			return out, count, false, nil
		}
		if expect < math.MaxInt64 && cap(out)-len(out) < len(doc)+elemRoom {
			// Room for the rest of a limited batch at this document's
			// size (bounded; appends grow it further).
			room := (len(doc) + elemRoom) * int(min(n-int64(count), expect-int64(count), growDocs))
			out = slices.Grow(out, min(room, growBytes)+replySlack)
		}
		size += len(doc)
		out = bsoncore.AppendDocumentElement(out, string(strconv.AppendInt(key[:0], int64(count), 10)), doc)
		count++
	}
}

// tooLarge is MongoDB's failure to serialise a result larger than the
// largest BSON object it builds (BSONObjMaxInternalSize, a user
// document's 16 MiB and 16 KiB; BSONObj::_assertInvalid), which a stage
// may have built from larger intermediate documents ($lookup, $facet,
// $push); nil when doc fits.
func tooLarge(doc bson.Raw) error {
	if len(doc) <= wire.MaxBSONInternalSize {
		return nil
	}
	first := ""
	if el, err := doc.IndexErr(0); err == nil {
		first = values.ShellElement(el.Key(), el.Value())
	}
	return mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and %d(%dMB) First element: %s",
		len(doc), len(doc), wire.MaxBSONInternalSize, wire.MaxBSONInternalSize>>20, first)
}

// firstBatch is how a cursor-opening command serves its first batch.
type firstBatch struct {
	// size is the client's batchSize, or noBatchSize.
	size int64
	// defaultSize is the command's first batch size when the client names
	// none (math.MaxInt64: only the 16 MiB bound).
	defaultSize int64
	// single closes the cursor after the first batch (singleBatch).
	single bool
	// empty reports that the source is known to yield nothing (a find on a
	// missing collection), so that a batchSize of 0 opens no cursor.
	empty bool
	// noTimeout exempts the cursor from the idle timeout.
	noTimeout bool
	// list shapes the reply as listCollections and listIndexes do.
	list bool
	// expect bounds the documents the source yields (a find's limit),
	// for sizing the reply; 0 is unknown.
	expect int64
}

// addCursor registers c for getMores. Under access control the cursor
// keeps the privileges r was checked for, which each getMore checks again
// (authorizeCursors).
func (s *Service) addCursor(r *Request, c *cursors.Cursor) {
	if needs := r.needs; needs != nil {
		c.Permits = func(privs auth.Privileges) bool { return allowsAll(privs, needs) }
	}
	s.Cursors.Add(c)
}

// openCursor wraps src as a cursor of db.coll belonging to r's session and
// transaction.
func openCursor(r *Request, db, coll string, src *boundSource) *cursors.Cursor {
	src.opener = r.op
	c := cursors.New(db, coll, src)
	c.User = r.Conn.ownerKey()
	c.API = r.Args.API
	if r.session != nil {
		c.Session = r.session.ID
	}
	if r.Txn != nil {
		// A cursor of a transaction is killed when the transaction ends.
		c.Owner, c.InTxn, c.TxnNumber = r.Txn, true, r.session.TxnNumber
	}
	return c
}

// serveFirstBatch fills the first batch from src and builds the reply; a
// cursor with documents left is registered for getMores, an exhausted one
// (or a single batch) is closed and reported with id 0. A batchSize of 0
// reads nothing and leaves the cursor open, as in MongoDB. src is read
// under b: the opening command's context, then each getMore's.
func (s *Service) serveFirstBatch(r *Request, db, coll string, src cursors.Source, b *binding, fb firstBatch) (bson.Raw, error) {
	bs := &boundSource{Source: src, ctx: b}
	if r.view != nil {
		bs.view, bs.unpin = r.view, s.Engine.PinView(r.view)
		bs.atClusterTime = r.atClusterTime
	}
	c := openCursor(r, db, coll, bs)
	c.NoTimeout = fb.noTimeout
	n := fb.size
	if n == noBatchSize {
		n = fb.defaultSize
	}
	done := fb.empty
	if fb.expect <= 0 {
		fb.expect = math.MaxInt64
	}
	fill := func(out []byte) ([]byte, int, error) {
		if n <= 0 {
			return out, 0, nil
		}
		out, count, d, err := fillBatch(out, c, n, fb.expect)
		done = d
		return out, count, err
	}
	// id registers a cursor with documents left: the batch is filled.
	id := func() int64 {
		if done || fb.single {
			_ = bs.Close()
			return 0
		}
		if dl, ok := r.Ctx.Deadline(); ok {
			bs.limited, bs.left = true, time.Until(dl)
		}
		b.bind(context.Background(), nil)
		s.addCursor(r, c)
		return c.ID
	}
	ns := db + "." + coll
	if fb.list {
		batch, _, err := fill(nil)
		if err != nil {
			_ = bs.Close()
			return nil, err
		}
		return r.own(listReply(id(), ns, batch)), nil
	}
	reply, count, err := cursorReplyWith(r, ns, "firstBatch", fill, resumeTokenOf(c), id)
	if err != nil {
		_ = bs.Close()
		return nil, err
	}
	s.Docs.Returned.Add(int64(count))
	return reply, nil
}

// resumeTokenOf appends the postBatchResumeToken of a find with
// $_requestResumeToken to a reply of c's (nil for another cursor): the
// record its scan reached, or the last one the batch holds when c holds
// back a document that did not fit.
func resumeTokenOf(c *cursors.Cursor) func([]byte) []byte {
	src := c.Source()
	if bs, ok := src.(*boundSource); ok {
		src = bs.Source
	}
	rc, ok := src.(engine.ResumableCursor)
	if !ok {
		return nil
	}
	return func(out []byte) []byte {
		return bsoncore.AppendDocumentElement(out, "postBatchResumeToken", rc.PostBatchResumeToken(c.Holding()))
	}
}

// serveTailable opens a tailable cursor, read under b: it stays open when it
// runs out of documents, for later getMores to return new ones. As in
// MongoDB, a tailable find on a collection holding no documents at all opens
// no cursor (the oplog always holds some). Its getMores' maxTimeMS is how long they await new documents.
func (s *Service) serveTailable(r *Request, db, coll string, tc tailSource, b *binding, batchSize int64, awaitData, noTimeout bool) (bson.Raw, error) {
	c := openCursor(r, db, coll, &boundSource{Source: tc, ctx: b})
	c.Tailable, c.NoTimeout = true, noTimeout
	if awaitData {
		c.Await = tc.Wait
	}
	if batchSize == noBatchSize {
		batchSize = defaultFirstBatch
	}
	ns := db + "." + coll
	var empty bool
	reply, count, err := cursorReply(r, ns, "firstBatch", func(out []byte) ([]byte, int, error) {
		out, count, _, err := fillBatch(out, c, batchSize, math.MaxInt64)
		if err == nil && count == 0 && (db != engine.OplogDB || coll != engine.OplogColl) {
			empty, err = s.collectionEmpty(db, coll)
		}
		return out, count, err
	}, func() int64 {
		if empty {
			return 0
		}
		b.bind(context.Background(), nil)
		s.addCursor(r, c)
		return c.ID
	})
	if err != nil || empty {
		_ = tc.Close()
		return reply, err
	}
	s.Docs.Returned.Add(int64(count))
	return reply, nil
}

// collectionEmpty reports whether db.coll holds no document.
func (s *Service) collectionEmpty(db, coll string) (bool, error) {
	cur, err := s.Engine.Find(db, coll, engine.FindOptions{Limit: 1})
	if err != nil {
		return false, err
	}
	defer cur.Close()
	doc, err := cur.Next()
	return doc == nil, err
}

// tailSource is what a tailable cursor reads: a capped collection's
// insertion order (engine.TailCursor) or the oplog (engine.OplogCursor).
type tailSource interface {
	cursors.Source
	// Wait blocks until there may be more to read, timeout passes or ctx
	// ends.
	Wait(ctx context.Context, timeout time.Duration)
}

// defaultAwaitTime is how long a getMore on an awaitData cursor waits for
// new documents when the client gives no maxTimeMS, as in MongoDB.
const defaultAwaitTime = time.Second

// getMoreSpec declares getMore's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/getMore/
var getMoreSpec = &argSpec{path: "getMore", fields: []argField{
	required("collection", tGetMoreCollection),
	withDefault("batchSize", tSafe, math.MaxInt64),
	ignore("term", tLong, "sent by replica set members to each other"),
	ignore("lastKnownCommittedOpTime", tDoc, "sent by replica set members to each other"),
}}

// tGetMoreCollection is getMore's collection: a string its IDL validator
// checks (validateGetMoreCollectionName).
var tGetMoreCollection = argType{mask: typeMask(bson.TypeString), want: []string{"string"},
	check: func(_, _ string, v bson.RawValue) error { return nsname.CheckGetMoreCollection(v.StringValue()) }}

// killCursorsSpec declares killCursors' fields.
// https://www.mongodb.com/docs/v7.0/reference/command/killCursors/
var killCursorsSpec = &argSpec{path: "killCursors", fields: []argField{
	required("cursors", tArray),
}}

// getMoreArgs is a parsed getMore command.
type getMoreArgs struct {
	id        int64
	coll      string
	batchSize int64
}

func parseGetMore(c *cmdArgs) (getMoreArgs, error) {
	var a getMoreArgs
	idv := c.first()
	if idv.Type != bson.TypeInt64 {
		return a, wrongType("getMore", "getMore", idv, "long")
	}
	a.id, a.coll, a.batchSize = idv.Int64(), c.str("collection"), c.safeInt("batchSize")
	switch {
	case a.batchSize < 0:
		return a, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'batchSize' value must be >= 0, actual value '%d'", a.batchSize)
	case a.batchSize == 0:
		// no limit but the reply's size, as MongoDB's getMore reads 0
		a.batchSize = math.MaxInt64
	}
	return a, nil
}

// getMoreCmd returns the next batch of a cursor. As in MongoDB, a getMore
// refused for its session, transaction, namespace or maxTimeMS leaves the
// cursor open; one that finds what the cursor reads gone (QueryPlanKilled)
// or fails while reading closes it.
func getMoreCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.GetMore.Add(1)
	a, err := parseGetMore(&r.args)
	if err != nil {
		return nil, err
	}
	r.op.noteGetMore(a.id)
	var interrupt func(error)
	if op := r.op; op != nil {
		interrupt = op.kill
	}
	c, err := s.Cursors.Checkout(a.id, interrupt)
	if err != nil {
		return nil, err
	}
	session, txnNumber := "", int64(0)
	if r.session != nil {
		session, txnNumber = r.session.ID, r.session.TxnNumber
	}
	if err := c.Permit(r.DB, a.coll, session, r.Txn != nil, txnNumber); err != nil {
		s.Cursors.Return(c)
		return nil, err
	}
	if api := r.Args.API; api != c.API {
		s.Cursors.Return(c)
		return nil, mongoerr.New(mongoerr.APIMismatchError, "API parameter mismatch: getMore used params %s, the cursor-creating command used %s", api, c.API)
	}
	r.streamCursor = streamOf(c.Source()) != nil
	if err := s.failGetMore(r); err != nil {
		// As an error of the getMore, the cursor's end.
		_ = s.Cursors.Close(c)
		return nil, err
	}
	await := defaultAwaitTime
	if r.Args.HasMaxTimeMS {
		if c.Await == nil {
			s.Cursors.Return(c)
			return nil, mongoerr.New(mongoerr.BadValue, "cannot set maxTimeMS on getMore command for a non-awaitData cursor")
		}
		await = time.Duration(r.Args.MaxTimeMS) * time.Millisecond
	}
	if err := c.Restore(); err != nil {
		_ = s.Cursors.Close(c)
		return nil, err
	}
	bs := c.Source().(*boundSource)
	// A snapshot cursor's getMore reports its atClusterTime, as
	// getmore_cmd.cpp does outside a transaction from the read concern
	// the cursor keeps.
	r.atClusterTime = bs.atClusterTime
	r.op.setCursor(c.Info())
	if bs.limited {
		if err := s.expireAtOnce(); err != nil {
			_ = s.Cursors.Close(c)
			return nil, err
		}
	}
	detach := bs.attach(r.Ctx, r.op, bs.limited && s.neverExpire())
	var done bool
	stream := streamOf(c.Source())
	fill := func(out []byte) ([]byte, int, error) {
		out, count, d, err := fillBatch(out, c, a.batchSize, math.MaxInt64)
		// An awaitData getMore waits until it has a result or its time
		// is up: what woke it but gave nothing (a change stream's
		// irrelevant entries, a capped insert the filter refuses) does not
		// end it, as MongoDB's executor waits again until its deadline
		// once no result was returned.
		for deadline := time.Now().Add(await); err == nil && count == 0 && c.Await != nil && (stream == nil || !stream.ended()); {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			c.Await(r.Ctx, left)
			if err = mongoerr.Interruption(r.Ctx); err == nil {
				out, count, d, err = fillBatch(out, c, a.batchSize, math.MaxInt64)
			}
		}
		done = d
		if err != nil {
			// getmore_cmd's context for what the executor raised
			err = mongoerr.AddContext(err, "Executor error during getMore")
		}
		return out, count, err
	}
	var closed bool
	after := resumeTokenOf(c)
	if stream != nil {
		after = stream.appendResumeToken
	}
	id := func() int64 {
		detach()
		c.Served()
		if c.Tailable {
			// A tailable cursor stays open; a change stream's until the
			// batch read past its invalidate (one that ends with it
			// leaves the cursor open, as MongoDB's, whose next read
			// throws ChangeStreamInvalidated).
			done = done && stream != nil && stream.ended() && !c.Holding()
		}
		if done {
			closed = true
			_ = s.Cursors.Close(c)
			return 0
		}
		s.Cursors.Return(c)
		return c.ID
	}
	reply, count, err := cursorReplyWith(r, r.DB+"."+a.coll, "nextBatch", fill, after, id)
	if err != nil {
		detach()
		if !closed {
			_ = s.Cursors.Close(c)
		}
		return nil, err
	}
	if !strings.HasPrefix(a.coll, "$cmd.") {
		// listCollections' and listIndexes' cursors return no documents
		// of the database.
		s.Docs.Returned.Add(int64(count))
	}
	if r.ExhaustAllowed && !closed {
		// An exhaust getMore: the server sends the next batches unasked,
		// each from the same getMore, until the cursor is exhausted.
		r.Next = bytes.Clone(r.Cmd)
	}
	return reply, nil
}

// EndExhaust ends a stream of replies (Request.Next) that can no longer
// be sent, the client having gone: a getMore's cursor is killed, as
// MongoDB's session workflow kills the cursor of the exhaust getMore it
// would have run next when the session ends (killExhaust), instead of
// leaving it open until it times out.
func (s *Service) EndExhaust(next bson.Raw) {
	if Name(next) != "getMore" {
		return
	}
	if id, ok := next.Lookup("getMore").Int64OK(); ok {
		s.Cursors.Kill(id)
	}
}

func killCursorsCmd(s *Service, r *Request) (bson.Raw, error) {
	if _, err := collectionArg(r.Cmd, r.DB); err != nil {
		return nil, err
	}
	var ids []int64
	vals, _ := r.args.value("cursors").Array().Values()
	for i, id := range vals {
		if id.Type != bson.TypeInt64 {
			return nil, wrongType("killCursors", "cursors."+strconv.Itoa(i), id, "long")
		}
		ids = append(ids, id.Int64())
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
