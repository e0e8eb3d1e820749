package changestream

import (
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// Scope is what a stream watches: one collection (DB and Coll), one
// database (Coll empty) or the whole deployment (both empty). As in
// MongoDB, database and deployment streams leave out system collections,
// and deployment streams the admin, config and local databases.
type Scope struct {
	DB, Coll string
}

// watches reports whether an event on db.coll (coll empty: on the
// database) belongs to the stream: a system collection's only with
// system, and only the few MongoDB's showSystemEvents shows (shownSystem).
func (s Scope) watches(db, coll string, system bool) bool {
	switch {
	case s.DB == "":
		if db == "admin" || db == "config" || db == "local" {
			return false
		}
	case db != s.DB:
		return false
	case s.Coll != "":
		return coll == s.Coll
	}
	return !strings.HasPrefix(coll, "system.") || system && shownSystem(coll)
}

// shownSystem reports whether showSystemEvents shows the events of the
// system collection coll: system.js, and the resharding and time series
// buckets collections, as MongoDB 7.0's namespace filter has it.
func shownSystem(coll string) bool {
	return coll == "system.js" || strings.HasPrefix(coll, "system.resharding.") || strings.HasPrefix(coll, "system.buckets.")
}

// watches reports whether an event on db.coll belongs to the stream, under
// its showSystemEvents.
func (s *Stream) watches(db, coll string) bool {
	return s.Scope.watches(db, coll, s.Spec.ShowSystemEvents)
}

// Stream turns oplog entries into the events of one change stream, after
// its resume point.
type Stream struct {
	Spec  Spec
	Scope Scope
	// Lookup returns the document whose _id is key's as it is now in the
	// collection of db with the event's uuid (coll when uuid is nil), or
	// nil (fullDocument: updateLookup).
	Lookup func(db, coll string, uuid []byte, key bson.Raw) (bson.Raw, error)
	// Entry reads the oplog entry stored at stamp: a transaction's entry
	// its commit's chain names (prevOpTime). Nil when the oplog holds no
	// chains.
	Entry func(stamp uint64) (oplog.Stored, bool, error)
	// After is the resume point: only events with later tokens are
	// emitted, and the event a fragment's token was cut from (whose
	// remaining fragments the caller's split returns).
	After Token
	// Invalidated is set once the stream emitted its invalidate event:
	// it emits nothing more.
	Invalidated bool
	// met is set once the stream met the event of After, when After is
	// an event's token (resumeAfter, startAfter).
	met bool
}

// after reports whether the event of tok, one of the stream's, is
// emitted: it follows the resume point, or a fragment of it is the resume
// point. A stream resumed after an event must meet that event among its
// own before any later one, as MongoDB's
// DocumentSourceChangeStreamEnsureResumeTokenPresent requires: the token
// of another collection's event, or of an event this stream does not
// show, fails it with ChangeStreamFatalError at its first later event.
func (s *Stream) after(tok Token) (bool, error) {
	c := tok.Compare(s.After)
	switch {
	case c < 0:
		return false, nil
	case c == 0:
		s.met = true
		return s.After.Split, nil
	case s.After.Event && !s.met:
		return false, mongoerr.New(mongoerr.ChangeStreamFatalError, "cannot resume stream; the resume token was not found. {_data: %q}", tok.Data())
	}
	return true, nil
}

// Events calls emit with each event of the entry committed at stamp (as
// stored, with its pre-images), in order: its token and the event.
//
// As MongoDB's change stream unwinds a transaction
// (ChangeStreamUnwindTransaction's TransactionOpIterator), an entry with
// o.partialTxn gives no event: the entry that commits the transaction,
// following prevOpTime back to the first, gives the events of every
// entry's operations in order, with its own clusterTime, lsid, txnNumber
// and wallTime, txnOpIndex counting the operations across the entries.
func (s *Stream) Events(stamp uint64, stored oplog.Stored, emit func(Token, bson.Raw) error) error {
	e := oplog.Parse(stored.Entry())
	if e.Kind != oplog.Command || e.NS != "admin.$cmd" {
		return s.event(stamp, 0, e, stored.PreImage(0), false, emit)
	}
	if _, ok := e.O.Lookup("applyOps").ArrayOK(); !ok {
		return nil
	}
	if partial, _ := e.O.Lookup("partialTxn").BooleanOK(); partial {
		return nil
	}
	index := uint32(0)
	if !e.Prev.IsZero() {
		if s.After.TS > stamp {
			return nil // every event of the transaction precedes the resume point
		}
		chain, err := s.chain(e.Prev)
		if err != nil {
			return err
		}
		for _, st := range chain {
			if err := s.applyOpsEvents(stamp, &index, e, st, emit); err != nil || s.Invalidated {
				return err
			}
		}
	}
	return s.applyOpsEvents(stamp, &index, e, stored, emit)
}

// chain reads the entries of a transaction before its commit entry, from
// prev (the commit's prevOpTime) back to the first, and returns them
// first first.
func (s *Stream) chain(prev bson.Timestamp) ([]oplog.Stored, error) {
	var chain []oplog.Stored
	for !prev.IsZero() {
		stamp := uint64(prev.T)<<32 | uint64(prev.I)
		var st oplog.Stored
		ok := false
		if s.Entry != nil {
			var err error
			if st, ok, err = s.Entry(stamp); err != nil {
				return nil, err
			}
		}
		if !ok {
			return nil, mongoerr.New(mongoerr.ChangeStreamHistoryLost, "the oplog no longer holds the transaction entry at %v", prev)
		}
		chain = append(chain, st)
		prev = oplog.Parse(st.Entry()).Prev
	}
	slices.Reverse(chain)
	return chain, nil
}

// applyOpsEvents emits the events of the operations of one applyOps
// entry (stored) of the transaction that commit committed at stamp, the
// first one's txnOpIndex *index, which it advances.
func (s *Stream) applyOpsEvents(stamp uint64, index *uint32, commit oplog.Read, stored oplog.Stored, emit func(Token, bson.Raw) error) error {
	ops, _ := oplog.Parse(stored.Entry()).O.Lookup("applyOps").ArrayOK()
	vals, _ := ops.Values()
	for i, v := range vals {
		op := oplog.Parse(v.Document())
		op.Wall, op.LSID, op.TxnNumber, op.HasTxn = commit.Wall, commit.LSID, commit.TxnNumber, commit.HasTxn
		err := s.event(stamp, *index, op, stored.PreImage(i), true, emit)
		*index++
		if err != nil || s.Invalidated {
			return err
		}
	}
	return nil
}

// event emits the events of one operation.
func (s *Stream) event(stamp uint64, opIndex uint32, e oplog.Read, pre bson.Raw, txn bool, emit func(Token, bson.Raw) error) error {
	if s.Invalidated {
		return nil
	}
	db, coll, _ := strings.Cut(e.NS, ".")
	tok := Token{TS: stamp, Event: true, TxnOpIndex: opIndex, UUID: e.UUID}
	b := eventBuilder{s: s, e: e, stamp: stamp, txn: txn, pre: pre}
	switch e.Kind {
	case oplog.Insert, oplog.Update, oplog.Delete:
		if coll == systemViews {
			return s.viewEvent(b, tok, db, emit)
		}
		if !s.watches(db, coll) {
			return nil
		}
		key := e.O2
		if e.Kind == oplog.Delete {
			key = e.O
		}
		tok.DocKey = key
		if ok, err := s.after(tok); !ok {
			return err
		}
		doc, err := b.document(tok, db, coll, key)
		if err != nil {
			return err
		}
		return emit(tok, doc)
	case oplog.Command:
		return s.command(b, tok, db, emit)
	}
	return nil
}

// command emits the events of a collection or database command.
func (s *Stream) command(b eventBuilder, tok Token, db string, emit func(Token, bson.Raw) error) error {
	o := b.e.O
	var kind, coll string
	var invalidates bool
	var to bson.Raw
	var toDB, toColl string // a rename's target
	expanded := false
	switch first := rawdoc.FirstKey(o); first {
	case "create":
		kind, coll, expanded = "create", o.Lookup("create").StringValue(), true
	case "createIndexes", "dropIndexes":
		kind, coll, expanded = first, o.Lookup(first).StringValue(), true
	case "commitIndexBuild":
		// a two-phase build's end, naming all its indexes: one
		// createIndexes event (its startIndexBuild makes none)
		kind, coll, expanded = "createIndexes", o.Lookup(first).StringValue(), true
	case "collMod":
		kind, coll, expanded = "modify", o.Lookup("collMod").StringValue(), true
	case "drop":
		kind, coll = "drop", o.Lookup("drop").StringValue()
		invalidates = s.Scope.Coll == coll && s.Scope.DB == db
	case "renameCollection":
		var from string
		from = o.Lookup("renameCollection").StringValue()
		_, coll, _ = strings.Cut(from, ".")
		toDB, toColl, _ = strings.Cut(o.Lookup("to").StringValue(), ".")
		to = nsDoc(toDB, toColl)
		kind = "rename"
		// MongoDB's invalidation filter: the watched collection renamed,
		// or another renamed onto it (dropTarget, $out).
		invalidates = s.Scope.Coll == coll && s.Scope.DB == db || s.Scope.Coll == toColl && s.Scope.DB == toDB
	case "dropDatabase":
		kind = "dropDatabase"
		invalidates = s.Scope.Coll == "" && s.Scope.DB == db
	default:
		return nil
	}
	if expanded && !s.Spec.ShowExpandedEvents {
		return nil
	}
	if kind == "dropDatabase" {
		if s.Scope.Coll != "" || !s.watches(db, "") {
			return nil
		}
	} else if !s.watches(db, coll) && (toColl == "" || !s.watches(toDB, toColl)) {
		// a rename is the stream's when it watches its source or its
		// target (MongoDB's "o.to" namespace filter)
		return nil
	}
	ok, err := s.after(tok)
	if err != nil {
		return err
	}
	if ok {
		if err := emit(tok, b.command(tok, kind, db, coll, to)); err != nil {
			return err
		}
	}
	if !invalidates {
		return nil
	}
	inv := tok
	inv.FromInvalidate = true
	if ok, err := s.after(inv); !ok {
		return err
	}
	s.Invalidated = true
	return emit(inv, b.head(inv, "invalidate", false).done())
}

// systemViews is the collection holding a database's view definitions,
// {_id: "<db>.<view>", viewOn, pipeline[, collation]}.
const systemViews = "system.views"

// viewEvent emits the event of a change to a view definition: as in
// MongoDB, streams on a database or the deployment with
// showExpandedEvents report a view's creation, collMod and drop as create,
// modify and drop events of the view's namespace, whose
// operationDescription is the definition (time series collections, views
// on their buckets, included). Collection streams do not, even on the
// view's name.
func (s *Stream) viewEvent(b eventBuilder, tok Token, db string, emit func(Token, bson.Raw) error) error {
	if !s.Spec.ShowExpandedEvents || s.Scope.Coll != "" || !s.watches(db, "") {
		return nil
	}
	e := b.e
	key, def, kind := e.O2, e.O, "create"
	switch e.Kind {
	case oplog.Update:
		if _, diff := e.O.LookupErr("$v"); diff == nil {
			return nil // the definitions are replaced whole
		}
		kind = "modify"
	case oplog.Delete:
		key, def, kind = e.O, nil, "drop"
	}
	name, ok := key.Lookup("_id").StringValueOK()
	viewDB, view, _ := strings.Cut(name, ".")
	if !ok || viewDB != db {
		return nil
	}
	tok.DocKey = key
	if ok, err := s.after(tok); !ok {
		return err
	}
	d := b.head(tok, kind, false)
	d.b = bsoncore.AppendDocumentElement(d.b, "ns", nsDoc(db, view))
	if def != nil {
		desc, start := []byte(nil), int32(0)
		start, desc = bsoncore.AppendDocumentStart(desc)
		it := rawdoc.Iterate(def)
		for {
			k, v, ok := it.Next()
			if !ok {
				break
			}
			if string(k) != "_id" {
				desc = rawdoc.AppendElement(desc, string(k), v)
			}
		}
		desc, _ = bsoncore.AppendDocumentEnd(desc, start)
		d.b = bsoncore.AppendDocumentElement(d.b, "operationDescription", desc)
	}
	return emit(tok, d.done())
}

// eventBuilder builds the documents of one operation's events.
type eventBuilder struct {
	s     *Stream
	e     oplog.Read
	stamp uint64
	// txn: the operation is a transaction's, whose events carry its
	// txnNumber and lsid.
	txn bool
	// pre is the document before the operation, when its collection
	// records pre-images.
	pre bson.Raw
}

// doc is an event document being built.
type doc struct {
	start int32
	b     []byte
}

func (d doc) done() bson.Raw {
	out, _ := bsoncore.AppendDocumentEnd(d.b, d.start)
	return out
}

// head starts an event: _id, operationType, clusterTime, collectionUUID
// (expanded events), wallTime, and a transaction's txnNumber and lsid.
func (b eventBuilder) head(tok Token, kind string, withUUID bool) doc {
	// room for the head and the operation's documents, which the event
	// holds about twice
	buf := make([]byte, 0, 256+2*(len(b.e.O)+len(b.e.O2)))
	start, out := bsoncore.AppendDocumentStart(buf)
	out = bsoncore.AppendHeader(out, bsoncore.TypeEmbeddedDocument, "_id")
	out = tok.AppendDoc(out)
	out = bsoncore.AppendStringElement(out, "operationType", kind)
	out = bsoncore.AppendTimestampElement(out, "clusterTime", uint32(b.stamp>>32), uint32(b.stamp))
	if withUUID && b.s.Spec.ShowExpandedEvents && b.e.UUID != nil {
		out = bsoncore.AppendBinaryElement(out, "collectionUUID", bson.TypeBinaryUUID, b.e.UUID)
	}
	wall := b.e.Wall
	if wall.IsZero() {
		wall = time.Unix(int64(b.stamp>>32), 0)
	}
	out = bsoncore.AppendDateTimeElement(out, "wallTime", wall.UnixMilli())
	if b.txn && b.e.HasTxn && b.e.LSID != nil {
		out = bsoncore.AppendInt64Element(out, "txnNumber", b.e.TxnNumber)
		out = bsoncore.AppendDocumentElement(out, "lsid", b.e.LSID)
	}
	return doc{start: start, b: out}
}

// document builds an insert, update, replace or delete event.
func (b eventBuilder) document(tok Token, db, coll string, key bson.Raw) (bson.Raw, error) {
	e := b.e
	kind := "delete"
	var diff bson.Raw
	switch e.Kind {
	case oplog.Insert:
		kind = "insert"
	case oplog.Update:
		// A replacement's o is the document, with its _id; else a $v: 2
		// delta (update_oplog_entry::extractUpdateType): a document may
		// hold a field $v of its own.
		kind = "replace"
		if v, ok := e.O.Lookup("$v").AsInt64OK(); ok && v == 2 && e.O.Lookup("_id").Type == 0 {
			kind, diff = "update", e.O.Lookup("diff").Document()
		}
	}
	// MongoDB's transform reserves fullDocument's place after wallTime in
	// every event; the post-image stage fills it in an update's, so it
	// comes before ns, and the pre-image stage appends
	// fullDocumentBeforeChange at the end. The pre-image stage runs first:
	// a missing required pre-image fails before the post-image is sought.
	pre := kind != "insert" && b.s.Spec.FullDocumentBeforeChange != "off"
	if pre && b.pre == nil && b.s.Spec.FullDocumentBeforeChange == "required" {
		return nil, b.imageNotFound("pre", kind, db, coll)
	}
	var full bson.Raw
	post := false
	if kind == "update" {
		switch b.s.Spec.FullDocument {
		case "updateLookup":
			var err error
			if full, err = b.s.Lookup(db, coll, e.UUID, key); err != nil {
				return nil, err
			}
			post = true
		case "whenAvailable", "required":
			if b.pre != nil {
				var err error
				if full, err = oplog.ApplyDiff(b.pre, diff); err != nil {
					return nil, err
				}
			} else if b.s.Spec.FullDocument == "required" {
				return nil, b.imageNotFound("post", kind, db, coll)
			}
			post = true
		}
	}
	d := b.head(tok, kind, true)
	switch {
	case kind == "insert" || kind == "replace":
		d.b = bsoncore.AppendDocumentElement(d.b, "fullDocument", e.O)
	case post:
		d.b = appendDocOrNull(d.b, "fullDocument", full)
	}
	d.b = bsoncore.AppendDocumentElement(d.b, "ns", nsDoc(db, coll))
	d.b = bsoncore.AppendDocumentElement(d.b, "documentKey", key)
	if kind == "update" {
		if b.s.Spec.ShowRawUpdateDescription {
			d.b = bsoncore.AppendDocumentElement(d.b, "rawUpdateDescription", e.O)
		} else {
			d.b = appendUpdateDescription(d.b, diff, b.s.Spec.ShowExpandedEvents)
		}
	}
	if pre {
		d.b = appendDocOrNull(d.b, "fullDocumentBeforeChange", b.pre)
	}
	return d.done(), nil
}

// appendDocOrNull appends doc as field name, null when nil.
func appendDocOrNull(dst []byte, name string, doc bson.Raw) []byte {
	if doc == nil {
		return bsoncore.AppendNullElement(dst, name)
	}
	return bsoncore.AppendDocumentElement(dst, name, doc)
}

// imageNotFound is the error of a stream that requires a pre- or
// post-image the oplog does not hold (the collection did not record
// pre-images when the change was made). As MongoDB's
// makePreImageNotFoundErrorMsg, it names the event by its operationType,
// ns, clusterTime and a transaction's txnNumber, printed as
// Document::toString; a post-image is required of update events only.
func (b eventBuilder) imageNotFound(which, kind, db, coll string) error {
	d := bsoncore.NewDocumentBuilder().
		AppendString("operationType", kind).
		AppendDocument("ns", nsDoc(db, coll)).
		AppendTimestamp("clusterTime", uint32(b.stamp>>32), uint32(b.stamp))
	if b.txn && b.e.HasTxn && b.e.LSID != nil {
		d.AppendInt64("txnNumber", b.e.TxnNumber)
	}
	event := values.ValueString(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d.Build()})
	if which == "pre" {
		return mongoerr.New(mongoerr.NoMatchingDocument, "Change stream was configured to require a pre-image for all update, delete and replace events, but the pre-image was not found for event: %s", event)
	}
	return mongoerr.New(mongoerr.NoMatchingDocument, "Change stream was configured to require a post-image for all update events, but the post-image was not found for event: %s", event)
}

// command builds a drop, rename, dropDatabase or create event.
func (b eventBuilder) command(tok Token, kind, db, coll string, to bson.Raw) bson.Raw {
	d := b.head(tok, kind, kind != "dropDatabase")
	if kind == "dropDatabase" {
		d.b = bsoncore.AppendDocumentElement(d.b, "ns", bson.Raw(bsoncore.NewDocumentBuilder().AppendString("db", db).Build()))
		return d.done()
	}
	d.b = bsoncore.AppendDocumentElement(d.b, "ns", nsDoc(db, coll))
	if to != nil {
		d.b = bsoncore.AppendDocumentElement(d.b, "to", to)
	}
	if b.s.Spec.ShowExpandedEvents {
		switch kind {
		case "create", "modify":
			// the entry's o but the command's name: the options the
			// collection was created with, and its idIndex
			d.b = bsoncore.AppendDocumentElement(d.b, "operationDescription", rest(b.e.O))
			if kind == "modify" {
				d.b = appendStateBeforeChange(d.b, b.e.O2)
			}
		case "createIndexes", "dropIndexes":
			if indexes, ok := b.e.O.Lookup("indexes").ArrayOK(); ok && rawdoc.FirstKey(b.e.O) == "commitIndexBuild" {
				d.b = bsoncore.AppendDocumentElement(d.b, "operationDescription", bsoncore.NewDocumentBuilder().AppendArray("indexes", indexes).Build())
				break
			}
			spec := rest(b.e.O)
			if kind == "dropIndexes" && b.e.O2 != nil {
				spec = b.e.O2
			}
			start, arr := bsoncore.AppendArrayStart(nil)
			arr = bsoncore.AppendDocumentElement(arr, "0", spec)
			arr, _ = bsoncore.AppendArrayEnd(arr, start)
			d.b = bsoncore.AppendDocumentElement(d.b, "operationDescription", bsoncore.NewDocumentBuilder().AppendArray("indexes", arr).Build())
		case "rename":
			desc := bsoncore.NewDocumentBuilder().AppendDocument("to", to)
			if t := b.e.O.Lookup("dropTarget"); t.Type == bson.TypeBinary {
				_, data := t.Binary()
				desc.AppendBinary("dropTarget", bson.TypeBinaryUUID, data)
			}
			d.b = bsoncore.AppendDocumentElement(d.b, "operationDescription", desc.Build())
		}
	}
	return d.done()
}

func nsDoc(db, coll string) bson.Raw {
	return bson.Raw(bsoncore.NewDocumentBuilder().AppendString("db", db).AppendString("coll", coll).Build())
}

// rest is doc without its first field (a command's name).
func rest(doc bson.Raw) bson.Raw {
	it := rawdoc.Iterate(doc)
	it.Next()
	start, out := bsoncore.AppendDocumentStart(nil)
	out = append(out, it.Rest()...)
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// appendStateBeforeChange appends a modify event's stateBeforeChange: the
// collMod entry's o2 renamed, collectionOptions_old to collectionOptions
// and indexOptions_old to indexOptions, each when present (MongoDB's
// change_stream_event_transform.cpp). An entry without o2 (logged before
// Folio wrote one) gives none.
func appendStateBeforeChange(dst []byte, o2 bson.Raw) []byte {
	coll, hasColl := o2.Lookup("collectionOptions_old").DocumentOK()
	index, hasIndex := o2.Lookup("indexOptions_old").DocumentOK()
	if !hasColl && !hasIndex {
		return dst
	}
	start, dst := bsoncore.AppendDocumentElementStart(dst, "stateBeforeChange")
	if hasColl {
		dst = bsoncore.AppendDocumentElement(dst, "collectionOptions", coll)
	}
	if hasIndex {
		dst = bsoncore.AppendDocumentElement(dst, "indexOptions", index)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}
