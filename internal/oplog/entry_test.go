package oplog

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// insertOf is an insert op on db.c whose document is n bytes.
func insertOf(n int) Op {
	pad := n - 13 // {s: "..."}: length, type, "s", string length, NUL, end
	doc, err := bson.Marshal(bson.D{{Key: "s", Value: strings.Repeat("x", pad)}})
	if err != nil || len(doc) != n {
		panic("insertOf: document of the wrong size")
	}
	return Op{Kind: Insert, NS: "db.c", UUID: make([]byte, 16), O: doc}
}

// SplitTxn packs as MongoDB's packOperationsIntoApplyOps: the next
// operation opens an entry once the bytes (each operation's and 8 more)
// would pass the bound, or the entry holds maxOps; one over the bound goes
// alone.
func TestSplitTxn(t *testing.T) {
	one := OpSize(insertOf(100)) // every row's operation but the big ones
	rows := []struct {
		name     string
		sizes    []int // document sizes
		maxBytes int
		maxOps   int
		want     []int
	}{
		{"none", nil, 1000, 0, nil},
		{"one fits", []int{100}, 1000, 0, []int{1}},
		{"all fit", []int{100, 100, 100}, 3*(one+8) - 8, 0, []int{3}},
		{"third passes by a byte", []int{100, 100, 100}, 3*(one+8) - 9, 0, []int{2, 3}},
		{"a big one alone", []int{100, 5000, 100}, 1000, 0, []int{1, 2, 3}},
		{"a big one first", []int{5000, 100, 100}, 1000, 0, []int{1, 3}},
		{"by count", []int{100, 100, 100, 100, 100}, 1 << 20, 2, []int{2, 4, 5}},
		{"count of one", []int{100, 100}, 1 << 20, 1, []int{1, 2}},
	}
	for _, r := range rows {
		ops := make([]Op, len(r.sizes))
		for i, n := range r.sizes {
			ops[i] = insertOf(n)
		}
		if got := SplitTxn(nil, ops, r.maxBytes, r.maxOps); !slices.Equal(got, r.want) {
			t.Errorf("%s: SplitTxn = %v, want %v", r.name, got, r.want)
		}
	}
}

// OpSize is the bytes of the op's document in the applyOps array.
func TestOpSize(t *testing.T) {
	for _, op := range []Op{
		insertOf(100),
		{Kind: Update, NS: "db.coll", UUID: make([]byte, 16), O: insertOf(40).O, O2: insertOf(30).O},
		{Kind: Command, NS: "db.$cmd", O: insertOf(20).O},
	} {
		ent := NewApplyOps(nil, []Op{op}, nil, time.Time{}, nil)
		if n := len(bson.Raw(ent.Doc).Lookup("o", "applyOps", "0").Document()); OpSize(op) != n {
			t.Errorf("OpSize(%s %s) = %d, the document is %d bytes", op.Kind, op.NS, OpSize(op), n)
		}
	}
}

// A transaction's entries carry MongoDB's chain fields: o.partialTxn on
// all but the last, o.count on the last of several, prevOpTime on every
// one (null for the first, the previous entry's ts, written at PrevAt,
// with term 1 after); a batched write's applyOps has none of them.
func TestApplyOpsChain(t *testing.T) {
	sess := &Session{LSID: bson.Raw(insertOf(20).O), TxnNumber: 3, StmtID: -1}
	ops := []Op{insertOf(30)}
	rows := []struct {
		name  string
		chain *Chain
		o     []string // o's keys
		prev  bson.D   // prevOpTime, nil for none
	}{
		{"batched write", nil, []string{"applyOps"}, nil},
		{"one entry", &Chain{}, []string{"applyOps"}, bson.D{{Key: "ts", Value: bson.Timestamp{}}, {Key: "t", Value: int64(-1)}}},
		{"first of several", &Chain{Partial: true}, []string{"applyOps", "partialTxn"}, bson.D{{Key: "ts", Value: bson.Timestamp{}}, {Key: "t", Value: int64(-1)}}},
		{"middle", &Chain{Prev: true, Partial: true}, []string{"applyOps", "partialTxn"}, bson.D{{Key: "ts", Value: bson.Timestamp{T: 7, I: 9}}, {Key: "t", Value: int64(1)}}},
		{"last", &Chain{Prev: true, Count: 5}, []string{"applyOps", "count"}, bson.D{{Key: "ts", Value: bson.Timestamp{T: 7, I: 9}}, {Key: "t", Value: int64(1)}}},
	}
	for _, r := range rows {
		ent := NewApplyOps(nil, ops, sess, time.UnixMilli(1000), r.chain)
		if r.chain != nil && r.chain.Prev {
			binary.LittleEndian.PutUint64(ent.Doc[ent.PrevAt:], 7<<32|9)
		} else if ent.PrevAt != -1 {
			t.Errorf("%s: PrevAt %d without a previous entry", r.name, ent.PrevAt)
		}
		doc := bson.Raw(ent.Doc)
		if err := doc.Validate(); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		elems, _ := doc.Lookup("o").Document().Elements()
		var keys []string
		for _, e := range elems {
			keys = append(keys, e.Key())
		}
		if !slices.Equal(keys, r.o) {
			t.Errorf("%s: o's keys %v, want %v", r.name, keys, r.o)
		}
		if partial, ok := doc.Lookup("o", "partialTxn").BooleanOK(); ok != (r.chain != nil && r.chain.Partial) || ok && !partial {
			t.Errorf("%s: partialTxn %v", r.name, doc.Lookup("o", "partialTxn"))
		}
		if r.chain != nil && r.chain.Count > 0 && doc.Lookup("o", "count").Int64() != r.chain.Count {
			t.Errorf("%s: count %v", r.name, doc.Lookup("o", "count"))
		}
		pv, err := doc.LookupErr("prevOpTime")
		if r.prev == nil {
			if err == nil {
				t.Errorf("%s: prevOpTime %v", r.name, pv)
			}
			continue
		}
		want, _ := bson.Marshal(r.prev)
		if got, ok := pv.DocumentOK(); !ok || !slices.Equal(got, want) {
			t.Errorf("%s: prevOpTime %v, want %v", r.name, pv, bson.Raw(want))
		}
		if p := Parse(doc).Prev; r.chain.Prev && p != (bson.Timestamp{T: 7, I: 9}) || !r.chain.Prev && !p.IsZero() {
			t.Errorf("%s: Parse's Prev %v", r.name, p)
		}
		if elems, _ := doc.Elements(); elems[len(elems)-1].Key() != "prevOpTime" {
			t.Errorf("%s: last field %s, want prevOpTime", r.name, elems[len(elems)-1].Key())
		}
	}
}
