package commands

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/changestream"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/values"
)

// changeStreamStages are the stages a $changeStream may be followed by.
// https://www.mongodb.com/docs/v7.0/changeStreams/#modify-change-stream-output
var changeStreamStages = map[string]bool{
	"$match": true, "$project": true, "$addFields": true, "$set": true, "$unset": true,
	"$replaceRoot": true, "$replaceWith": true, "$redact": true,
}

// changeStreamReadBatch bounds the oplog entries one read of a stream
// takes.
const changeStreamReadBatch = 256

// errExplainChangeStream refuses to explain a change stream, asked by the
// aggregate's explain option or by the explain command: Folio does not
// describe a stream's stages (MongoDB 7.0 does).
func errExplainChangeStream() error {
	return mongoerr.New(mongoerr.NotImplemented, "explain of a $changeStream pipeline is not supported by Folio")
}

// changeStream runs an aggregate whose pipeline starts with $changeStream:
// a tailable, awaitData cursor over the events of the oplog after the
// stream's start, through the rest of the pipeline. Every batch carries
// postBatchResumeToken; the batch that reads past an invalidate event
// closes the cursor.
func (s *Service) changeStream(r *Request, a *aggregateArgs, b *binding) (bson.Raw, error) {
	if a.explain {
		return nil, errExplainChangeStream()
	}
	if r.Txn != nil {
		return nil, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Operation not permitted in transaction :: caused by :: $changeStream cannot run in a multi-document transaction")
	}
	if !a.haveCursor {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	if s.ReplSetName == "" {
		return nil, mongoerr.New(mongoerr.ChangeStreamNeedsReplicaSet, "The $changeStream stage is only supported on replica sets")
	}
	if !s.Engine.HasOplog() {
		return nil, mongoerr.New(mongoerr.NotImplemented, "$changeStream needs an oplog, which this server's storage does not keep")
	}
	spec, err := changestream.ParseSpec(a.stages[0].Lookup("$changeStream"))
	if err != nil {
		return nil, err
	}
	scope, nsColl, err := changeStreamScope(r.DB, a.opts.Coll, spec)
	if err != nil {
		return nil, err
	}
	rest := a.stages[1:]
	// MongoDB reads the stages' names before it checks which may follow
	// $changeStream: an unknown one is refused as such.
	if err := aggregate.CheckStageNames(rest); err != nil {
		return nil, err
	}
	split := false
	for i, st := range rest {
		switch name := Name(st); {
		case name == "$changeStream":
			return nil, mongoerr.New(mongoerr.StageMustBeFirst, "$changeStream is only valid as the first stage in a pipeline")
		case name == "$changeStreamSplitLargeEvent":
			if arg, ok := st.Lookup(name).DocumentOK(); !ok || len(arg) > 5 {
				return nil, mongoerr.New(mongoerr.SplitStageSpecNotEmpty, "$changeStreamSplitLargeEvent spec should be an empty object")
			}
			if i != len(rest)-1 {
				return nil, mongoerr.New(mongoerr.SplitStageNotLast, "$changeStreamSplitLargeEvent must be the last stage in the pipeline")
			}
			split = true
		case !changeStreamStages[name]:
			return nil, mongoerr.New(mongoerr.IllegalOperation, "%s is not permitted in a $changeStream pipeline", name)
		}
	}
	if split {
		rest = rest[:len(rest)-1] // the cursor splits what the stages return
	}
	// the token resumed after: resumeAfter's or startAfter's (at most one)
	resumed := spec.ResumeAfter
	if resumed == nil {
		resumed = spec.StartAfter
	}
	if resumed != nil && resumed.Split && !split {
		return nil, mongoerr.New(mongoerr.ChangeStreamFatalError, "To resume from a split event, the $changeStream pipeline must include a $changeStreamSplitLargeEvent stage")
	}
	if a.hint.Type != 0 {
		return nil, mongoerr.New(mongoerr.NotImplemented, "hint on a $changeStream pipeline is not supported by Folio: a stream reads the oplog, not an index")
	}
	opts := a.opts
	opts.Coll = nsColl
	// The stages after $changeStream compare under the command's
	// collation, else the simple one: as MongoDB's, a stream does not
	// inherit the watched collection's default, which a stream resuming
	// from before the collection existed could not know.
	if opts.Collator, err = engine.CommandCollator(nil, a.collation); err != nil {
		return nil, err
	}
	p, err := aggregate.Parse(rest, opts)
	if err != nil {
		return nil, err
	}
	if err := checkPipelineCollation(opts.Collator, p.Stages()); err != nil {
		return nil, err
	}
	src := &changeStreamSource{eng: s.Engine, stream: changestream.Stream{Spec: spec, Scope: scope}}
	src.stream.Entry = src.entry
	src.stream.Lookup = src.lookup
	last := s.Engine.OplogLast()
	oldest, whole, err := s.Engine.OplogOldest()
	if err != nil {
		return nil, err
	}
	switch {
	case resumed != nil:
		src.stream.After = *resumed
	case spec.StartAt != nil:
		src.stream.After = changestream.Token{TS: *spec.StartAt}
	default:
		src.stream.After = changestream.Token{TS: last + 1}
	}
	src.next, src.returned = src.stream.After.TS, src.stream.After
	historyLost := mongoerr.New(mongoerr.ChangeStreamHistoryLost, "Resume of change stream was not possible, as the resume point may no longer be in the oplog.")
	if src.next < oldest && !whole {
		// Before an oplog never truncated, nothing was lost: the stream
		// starts at its first entry.
		return nil, historyLost
	}
	if after := src.stream.After; after.Event {
		// The event resumed after must be in the oplog.
		_, found, err := s.Engine.FirstOplogStamp(after.TS, after.TS)
		if err != nil {
			return nil, err
		}
		if !found {
			// truncated since oldest was read?
			if oldest, whole, err = s.Engine.OplogOldest(); err != nil {
				return nil, err
			}
			if after.TS < oldest && !whole {
				return nil, historyLost
			}
			return nil, mongoerr.New(mongoerr.ChangeStreamFatalError, "cannot resume stream; the resume token was not found. {_data: %q}", after.Data())
		}
	}
	csc := &changeStreamCursor{Source: p.Run(src), src: src, split: split}
	if resumed != nil && resumed.Split {
		csc.resumed = resumed
	}
	bs := &boundSource{Source: csc, ctx: b}
	c := openCursor(r, r.DB, nsColl, bs)
	c.Tailable = true
	c.Await = func(ctx context.Context, timeout time.Duration) { s.Engine.WaitOplog(ctx, src.next-1, timeout, true) }
	n := a.batchSize
	if n == noBatchSize {
		n = defaultFirstBatch
	}
	var ended, readAll bool
	reply, count, err := cursorReplyWith(r, r.DB+"."+nsColl, "firstBatch", func(out []byte) ([]byte, int, error) {
		if n <= 0 {
			return out, 0, nil
		}
		out, count, d, err := fillBatch(out, c, n, math.MaxInt64)
		readAll = d
		return out, count, err
	}, src.appendResumeToken, func() int64 {
		// closed once the batch read past the invalidate (see getMore)
		if ended = readAll && src.ended() && !c.Holding(); ended {
			return 0
		}
		b.bind(context.Background(), nil)
		s.addCursor(r, c)
		return c.ID
	})
	if err != nil || ended {
		_ = bs.Close()
	}
	if err != nil {
		return nil, err
	}
	s.Docs.Returned.Add(int64(count))
	return reply, nil
}

// changeStreamScope is what a stream opened by aggregate on db.coll (coll
// empty: aggregate: 1) watches, and the collection its cursor's namespace
// names, with MongoDB's refusals: allChangesForCluster outside {aggregate:
// 1} on admin is InvalidOptions, as assertIsLegalSpecification checks it
// first; an internal database or system collection is InvalidNamespace.
func changeStreamScope(db, coll string, spec changestream.Spec) (changestream.Scope, string, error) {
	if spec.AllChangesForCluster {
		if db != "admin" || coll != "" {
			return changestream.Scope{}, "", mongoerr.New(mongoerr.InvalidOptions, "A $changeStream with 'allChangesForCluster:true' may only be opened on the 'admin' database, and with no collection name; found %s", namespaceName(db, coll))
		}
		return changestream.Scope{}, "$cmd.aggregate", nil
	}
	switch db {
	case "admin", "config", "local":
		return changestream.Scope{}, "", mongoerr.New(mongoerr.InvalidNamespace, "$changeStream may not be opened on the internal %s database", db)
	}
	if coll == "" {
		return changestream.Scope{DB: db}, "$cmd.aggregate", nil
	}
	if strings.HasPrefix(coll, "system.") {
		return changestream.Scope{}, "", mongoerr.New(mongoerr.InvalidNamespace, "$changeStream may not be opened on the internal %s.%s collection", db, coll)
	}
	return changestream.Scope{DB: db, Coll: coll}, coll, nil
}

func namespaceName(db, coll string) string {
	if coll == "" {
		return db + ".$cmd.aggregate"
	}
	return db + "." + coll
}

// changeStreamSource yields a stream's events, reading the oplog from
// next on.
type changeStreamSource struct {
	eng    *engine.Engine
	stream changestream.Stream
	// next is the stamp of the next entry to read.
	next uint64
	buf  []streamEvent
	// returned is the token of the last event returned, or the stream's
	// start.
	returned changestream.Token
	// err is a failure met after the events in buf: the batch holding
	// them ends after them (flush), and the next read fails with it.
	err   error
	flush bool
	// held counts the fragments of the last event returned that its
	// cursor still holds (see changeStreamCursor.split).
	held int
}

type streamEvent struct {
	tok changestream.Token
	doc bson.Raw
}

// Next returns the next event, or nil once the stream has caught up with
// the oplog (or ended with an invalidate).
func (cs *changeStreamSource) Next() (bson.Raw, error) {
	for len(cs.buf) == 0 {
		if cs.flush {
			cs.flush = false
			return nil, nil
		}
		if cs.err != nil {
			return nil, cs.err
		}
		if cs.stream.Invalidated {
			return nil, nil
		}
		// majority committed entries only, which no crash takes away
		last := cs.eng.OplogMajority()
		if cs.next > last {
			return nil, nil
		}
		read, lazy := 0, false
		err := cs.eng.ReadOplog(cs.next, last, func(stamp uint64, stored oplog.Stored) (bool, error) {
			read++
			cs.next = stamp + 1
			err := cs.stream.Events(stamp, stored, func(tok changestream.Token, doc bson.Raw) error {
				// The token may point into stored, which the read may reuse
				// once this entry is done (TiKV's does); the event is a copy.
				cs.buf = append(cs.buf, streamEvent{tok: tok.Clone(), doc: doc})
				return nil
			})
			// updateLookup reads the document when its event is
			// returned, as MongoDB's pipeline pulls it: the read stops at
			// the first entry that gave events
			lazy = cs.stream.Spec.FullDocument == "updateLookup" && len(cs.buf) > 0
			return err == nil && read < changeStreamReadBatch && !cs.stream.Invalidated && !lazy, err
		})
		if err != nil {
			// the events before the failing one come first
			cs.err = err
			continue
		}
		if read < changeStreamReadBatch && !cs.stream.Invalidated && !lazy {
			// every entry up to last was read (or truncated away
			// meanwhile): caught up, though on TiKV last has moved on
			cs.next = last + 1
			if len(cs.buf) == 0 {
				return nil, nil
			}
		}
	}
	ev := cs.buf[0]
	cs.buf = cs.buf[1:]
	cs.returned = ev.tok
	cs.flush = cs.err != nil
	return ev.doc, nil
}

func (cs *changeStreamSource) Close() error { cs.buf = nil; return nil }

// entry reads the oplog entry at stamp, a copy: an earlier entry of a
// transaction whose commit entry the stream is reading.
func (cs *changeStreamSource) entry(stamp uint64) (oplog.Stored, bool, error) {
	var got oplog.Stored
	err := cs.eng.ReadOplog(stamp, stamp, func(_ uint64, stored oplog.Stored) (bool, error) {
		got = slices.Clone(stored)
		return false, nil
	})
	return got, got != nil, err
}

// ended reports that the stream was invalidated and has returned its
// invalidate.
func (cs *changeStreamSource) ended() bool { return cs.stream.Invalidated && len(cs.buf) == 0 }

// resumeToken is the batch's postBatchResumeToken: once every event read
// was returned, the high-water mark at the last entry read when that is
// past the last event returned (resuming after it reads that entry again,
// which gave no event), else the token of the last event returned, as
// MongoDB's latest-oplog-timestamp high-water mark.
func (cs *changeStreamSource) resumeToken() changestream.Token {
	if len(cs.buf) == 0 && cs.held == 0 && !cs.stream.Invalidated {
		hwm := changestream.Token{TS: cs.next - 1}
		if hwm.Compare(cs.returned) > 0 {
			return hwm
		}
	}
	return cs.returned
}

// appendResumeToken appends postBatchResumeToken to a cursor reply.
func (cs *changeStreamSource) appendResumeToken(out []byte) []byte {
	return bsoncore.AppendDocumentElement(out, "postBatchResumeToken", cs.resumeToken().Doc())
}

// lookup is updateLookup's read of a document as it is now. As MongoDB's
// lookupSingleDocument, it reads the collection of the event's UUID: none
// once that collection was dropped, though another took its name.
func (cs *changeStreamSource) lookup(db, coll string, uuid []byte, key bson.Raw) (bson.Raw, error) {
	if uuid != nil {
		c := cs.eng.Collection(db, coll)
		if c == nil || !bytes.Equal(c.UUID[:], uuid) {
			// renamed within db, or gone
			coll = ""
			for _, c := range cs.eng.Collections(db) {
				if bytes.Equal(c.UUID[:], uuid) {
					coll = c.Name
				}
			}
			if coll == "" {
				return nil, nil
			}
		}
	}
	return findOne(cs.eng, db, coll, engine.FindOptions{Filter: key})
}

// findOne is the first document a find reads, or nil.
func findOne(e *engine.Engine, db, coll string, o engine.FindOptions) (bson.Raw, error) {
	o.Limit = 1
	cur, err := e.Find(db, coll, o)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	doc, err := cur.Next()
	if doc == nil || err != nil {
		return nil, err
	}
	return bson.Raw(slices.Clone(doc)), nil
}

// changeStreamCursor is the source of a change stream's cursor: the
// pipeline over the events, with the stream itself for the replies'
// postBatchResumeToken and the end after an invalidate; with split
// ($changeStreamSplitLargeEvent), events too large are returned in
// fragments.
type changeStreamCursor struct {
	aggregate.Source
	src   *changeStreamSource
	split bool
	// resumed is the fragment's token the stream resumes after, until
	// the stream reaches its event.
	resumed *changestream.Token
	// fragments are the fragments of the last event left to return.
	fragments []changestream.Fragment
}

// Next is the pipeline's next event. Its _id must still be the resume
// token the stream gave the event: a pipeline that changed or removed it
// would leave the client unable to resume, which MongoDB refuses with
// ChangeStreamFatalError. (The stages a stream allows return at most one
// document per event read, so the token is that of the last event read.)
func (c *changeStreamCursor) Next() (bson.Raw, error) {
	for {
		if len(c.fragments) > 0 {
			return c.nextFragment(), nil
		}
		doc, err := c.event()
		if doc != nil || err != nil || len(c.fragments) == 0 {
			return doc, err
		}
	}
}

// event is the pipeline's next event, within the size limits (sized); nil
// with fragments left when it is split.
func (c *changeStreamCursor) event() (bson.Raw, error) {
	doc, err := c.Source.Next()
	if doc == nil || err != nil {
		return doc, err
	}
	var buf [192]byte
	want := c.src.returned.AppendDoc(buf[:0])
	if got, err := doc.LookupErr("_id"); err != nil || got.Type != bson.TypeEmbeddedDocument || !bytes.Equal(got.Value, want) {
		found := "{}"
		if err == nil {
			found = "{ _id: " + values.Shell(got) + " }"
		}
		return nil, mongoerr.New(mongoerr.ChangeStreamFatalError,
			"Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point. Only transformations that retain the unmodified _id field are allowed. Expected: { _id: %s } but found: %s",
			values.Shell(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: want}), found)
	}
	return c.sized(doc)
}

// sized returns an event within the size limits: as it is when it fits,
// else its first fragment with split (the event resumed from, its
// fragments after the one resumed after), else it fails as MongoDB's
// cursor fails a document beyond its internal limit.
func (c *changeStreamCursor) sized(doc bson.Raw) (bson.Raw, error) {
	tok, skip := c.src.returned, 0
	if c.resumed != nil {
		if tok.Compare(*c.resumed) == 0 {
			if len(doc) <= changestream.MaxEventSize {
				return nil, mongoerr.New(mongoerr.ChangeStreamFatalError, "Attempted to resume from a split event fragment, but the event in the resumed stream was not large enough to be split")
			}
			skip = int(c.resumed.FragmentNum) + 1
		}
		c.resumed = nil
	}
	if !c.split {
		if err := tooLarge(doc); err != nil {
			return nil, err
		}
		return doc, nil
	}
	if len(doc) <= changestream.MaxEventSize {
		return doc, nil
	}
	// room is left for the reply's postBatchResumeToken
	fragments, err := changestream.Split(doc, tok, changestream.MaxEventSize-len(tok.Doc()))
	if err != nil {
		return nil, err
	}
	if skip > len(fragments) {
		return nil, mongoerr.New(mongoerr.ChangeStreamFatalError, "Attempted to resume from a split event, but the resumed stream produced a different split. Ensure that the pipeline used to resume is the same as the original")
	}
	if c.fragments = fragments[skip:]; len(c.fragments) == 0 {
		// resumed after the last fragment: on to the next event
		return c.event()
	}
	return c.nextFragment(), nil
}

// nextFragment returns the next fragment of the event being split; the
// batch's resume token is then its token.
func (c *changeStreamCursor) nextFragment() bson.Raw {
	f := c.fragments[0]
	c.fragments = c.fragments[1:]
	c.src.returned, c.src.held = f.Token, len(c.fragments)
	return f.Doc
}

// streamOf is the change stream a cursor reads, or nil.
func streamOf(src any) *changeStreamSource {
	if bs, ok := src.(*boundSource); ok {
		src = bs.Source
	}
	if c, ok := src.(*changeStreamCursor); ok {
		return c.src
	}
	return nil
}
