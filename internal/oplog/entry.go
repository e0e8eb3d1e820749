// Package oplog builds and reads the entries of Folio's oplog. An entry has
// the shape of a document of MongoDB's local.oplog.rs: op (i insert, u
// update, d delete, c command, n no-op), ns, ui (the collection's UUID), o,
// o2, ts, t, v, wall, and for a session's writes lsid, txnNumber and
// stmtId. A multi-document transaction is a c entry on admin.$cmd whose
// o is {applyOps: [entries without ts]}, or a chain of them when its
// operations pass 16 MB (SplitTxn, Chain). The entry's ts is its commit
// time, written into the entry when the store stamps the commit.
package oplog

import (
	"encoding/binary"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// Op kinds.
const (
	Insert  = "i"
	Update  = "u"
	Delete  = "d"
	Command = "c"
	Noop    = "n"
)

// Op is one operation: an entry of its own, or one of a transaction's.
type Op struct {
	Kind string
	NS   string
	UUID []byte // the collection's UUID; nil for database commands
	O    bson.Raw
	O2   bson.Raw // nil when absent
}

// Session is the logical session a write ran in: lsid, the transaction
// (or retryable write) number and, for a retryable write, the statement.
type Session struct {
	LSID      bson.Raw
	TxnNumber int64
	StmtID    int32 // -1: none (a transaction's commit)
}

// Entry is an entry in the making: its BSON with a zero ts, and where the
// ts value sits: the store writes the commit's time there, as the
// little-endian 64-bit integer that is a BSON Timestamp's layout (seconds
// in the high 32 bits). PrevAt is where the ts of the entry before it in
// its transaction's chain goes (prevOpTime.ts), -1 for none.
type Entry struct {
	Doc    []byte
	TSAt   int
	PrevAt int
}

// MaxTxnEntryBytes is the bytes of operations a transaction's applyOps
// entry takes before the next operation opens another entry: MongoDB's
// BSONObjMaxUserSize (getMaxSizeOfTransactionOperationsInSingleOplogEntryBytes).
const MaxTxnEntryBytes = 16 << 20

// txnOpOverhead is what MongoDB counts for each operation's element in the
// applyOps array beside its document (kBSONArrayElementOverhead).
const txnOpOverhead = 8

// OpSize is the bytes of op's document in an applyOps array.
func OpSize(op Op) int {
	n := 5 + fieldLen("op", len(op.Kind)+5) + fieldLen("ns", len(op.NS)+5) + fieldLen("o", len(op.O))
	if op.UUID != nil {
		n += fieldLen("ui", 5+len(op.UUID))
	}
	if op.O2 != nil {
		n += fieldLen("o2", len(op.O2))
	}
	return n
}

// SplitTxn appends to dst the ends of the parts a transaction's ops are
// logged in, one applyOps entry each, as MongoDB packs them
// (packOperationsIntoApplyOps): an entry takes the next operation unless
// it holds one already and the operations' bytes, 8 more each, would then
// pass maxBytes, or it holds maxOps already (0: no bound,
// maxNumberOfTransactionOperationsInSingleOplogEntry's default). An
// operation over maxBytes goes alone. MongoDB weighs the candidate by its
// in-memory size, a little over its BSON's: a cut within a few hundred
// bytes of the bound may fall one operation apart from MongoDB's.
func SplitTxn(dst []int, ops []Op, maxBytes, maxOps int) []int {
	n, size := 0, 0
	for i, op := range ops {
		s := OpSize(op)
		if n > 0 && (n == maxOps || size+s > maxBytes) {
			dst = append(dst, i)
			n, size = 0, 0
		}
		n++
		size += s + txnOpOverhead
	}
	if len(ops) > 0 {
		dst = append(dst, len(ops))
	}
	return dst
}

// Chain places a transaction's applyOps entry in its chain (MongoDB's
// logOplogEntries). Every entry of a transaction has prevOpTime: null
// ({ts: Timestamp(0, 0), t: -1}) for the first, else the optime of the
// entry before it, whose ts the store writes at Entry.PrevAt.
type Chain struct {
	// Prev: an entry of the transaction precedes this one.
	Prev bool
	// Partial: entries follow this one (o.partialTxn: true).
	Partial bool
	// Count is the transaction's operations, written as o.count on the
	// last of several entries (0: not written).
	Count int64
}

// appendOp appends op's own fields.
func appendOp(dst []byte, op Op) []byte {
	dst = bsoncore.AppendStringElement(dst, "op", op.Kind)
	dst = bsoncore.AppendStringElement(dst, "ns", op.NS)
	if op.UUID != nil {
		dst = bsoncore.AppendBinaryElement(dst, "ui", bson.TypeBinaryUUID, op.UUID)
	}
	dst = bsoncore.AppendDocumentElement(dst, "o", op.O)
	if op.O2 != nil {
		dst = bsoncore.AppendDocumentElement(dst, "o2", op.O2)
	}
	return dst
}

// New builds the entry of op, committed at wall by sess (nil: outside a
// session).
func New(dst []byte, op Op, sess *Session, wall time.Time) Entry {
	start, dst := bsoncore.AppendDocumentStart(dst)
	dst = appendOp(dst, op)
	return finish(dst, start, sess, wall, nil)
}

// NewApplyOps builds an applyOps entry of ops in the order they ran: a
// transaction's, placed in its chain by chain, or with chain nil a batched
// write's, which has no prevOpTime.
func NewApplyOps(dst []byte, ops []Op, sess *Session, wall time.Time, chain *Chain) Entry {
	start, dst := bsoncore.AppendDocumentStart(dst)
	dst = bsoncore.AppendStringElement(dst, "op", Command)
	dst = bsoncore.AppendStringElement(dst, "ns", "admin.$cmd")
	oStart, dst := bsoncore.AppendDocumentElementStart(dst, "o")
	aStart, dst := bsoncore.AppendArrayElementStart(dst, "applyOps")
	for i, op := range ops {
		var s int32
		s, dst = bsoncore.AppendDocumentElementStart(dst, strconv.Itoa(i))
		dst = appendOp(dst, op)
		dst, _ = bsoncore.AppendDocumentEnd(dst, s)
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, aStart)
	if chain != nil && chain.Partial {
		dst = bsoncore.AppendBooleanElement(dst, "partialTxn", true)
	}
	if chain != nil && chain.Count > 0 {
		dst = bsoncore.AppendInt64Element(dst, "count", chain.Count)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, oStart)
	return finish(dst, start, sess, wall, chain)
}

// finish appends ts, t, v, wall, the session fields and a chained entry's
// prevOpTime, and closes the document begun at start.
func finish(dst []byte, start int32, sess *Session, wall time.Time, chain *Chain) Entry {
	dst = bsoncore.AppendHeader(dst, bsoncore.TypeTimestamp, "ts")
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = bsoncore.AppendInt64Element(dst, "t", 1)
	dst = bsoncore.AppendInt64Element(dst, "v", 2)
	dst = bsoncore.AppendDateTimeElement(dst, "wall", wall.UnixMilli())
	if sess != nil {
		dst = bsoncore.AppendDocumentElement(dst, "lsid", sess.LSID)
		dst = bsoncore.AppendInt64Element(dst, "txnNumber", sess.TxnNumber)
		if sess.StmtID >= 0 {
			dst = bsoncore.AppendInt32Element(dst, "stmtId", sess.StmtID)
		}
	}
	prevAt := -1
	if chain != nil {
		pStart, d := bsoncore.AppendDocumentElementStart(dst, "prevOpTime")
		dst = bsoncore.AppendHeader(d, bsoncore.TypeTimestamp, "ts")
		if chain.Prev {
			prevAt = len(dst) - int(start)
		}
		dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
		term := int64(-1) // a null OpTime's
		if chain.Prev {
			term = 1
		}
		dst = bsoncore.AppendInt64Element(dst, "t", term)
		dst, _ = bsoncore.AppendDocumentEnd(dst, pStart)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return Entry{Doc: dst[start:], TSAt: at - int(start), PrevAt: prevAt}
}

// Read is the fields of a stored entry.
type Read struct {
	TS        bson.Timestamp
	Kind      string
	NS        string
	UUID      []byte
	O, O2     bson.Raw
	Wall      time.Time
	LSID      bson.Raw
	TxnNumber int64
	HasTxn    bool
	// Prev is prevOpTime's ts (zero when null or absent): the entry before
	// this one in its transaction's chain.
	Prev bson.Timestamp
}

// Parse reads an entry, or one op of a transaction's applyOps (no ts, wall
// nor session).
func Parse(doc bson.Raw) Read {
	var r Read
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return r
		}
		switch string(k) {
		case "ts":
			r.TS.T, r.TS.I = v.Timestamp()
		case "op":
			r.Kind = v.StringValue()
		case "ns":
			r.NS = v.StringValue()
		case "ui":
			_, r.UUID = v.Binary()
		case "o":
			r.O = v.Document()
		case "o2":
			r.O2 = v.Document()
		case "wall":
			r.Wall = v.Time()
		case "lsid":
			r.LSID = v.Document()
		case "txnNumber":
			r.TxnNumber, r.HasTxn = v.Int64(), true
		case "prevOpTime":
			if d, ok := v.DocumentOK(); ok {
				r.Prev.T, r.Prev.I, _ = d.Lookup("ts").TimestampOK()
			}
		}
	}
}

// Stored is an oplog entry as the store keeps it: the entry's document,
// then for a collection that records pre-images
// (changeStreamPreAndPostImages) the document before each update, replace
// or delete, each after the 4-byte little-endian index of its operation
// (0 outside a transaction, the position in applyOps inside one). The
// images expire with their entry.
type Stored []byte

// Entry is the entry's document.
func (s Stored) Entry() bson.Raw {
	if len(s) < 4 {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(s))
	if n > len(s) || n < 5 {
		return nil
	}
	return bson.Raw(s[:n])
}

// PreImage is the document before operation index, or nil.
func (s Stored) PreImage(index int) bson.Raw {
	rest := s[len(s.Entry()):]
	for len(rest) >= 8 {
		i := int(binary.LittleEndian.Uint32(rest))
		n := int(binary.LittleEndian.Uint32(rest[4:]))
		if n < 5 || 4+n > len(rest) {
			return nil
		}
		if i == index {
			return bson.Raw(rest[4 : 4+n])
		}
		rest = rest[4+n:]
	}
	return nil
}

// WithoutPreImages is s without its pre-images, and whether it had any.
func (s Stored) WithoutPreImages() (Stored, bool) {
	e := s.Entry()
	if e == nil || len(e) == len(s) {
		return s, false
	}
	return Stored(e), true
}

// AppendPreImage appends the document before operation index to an
// entry's stored form.
func AppendPreImage(dst []byte, index int, doc bson.Raw) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(index))
	return append(dst, doc...)
}
