package changestream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
)

// txnChain builds a transaction's entries as the engine stores them:
// parts of inserts of _id 0.. on db.c, the last committing, at stamps
// 100, 101, ..., each naming the one before in prevOpTime.
func txnChain(t *testing.T, parts ...int) map[uint64]oplog.Stored {
	t.Helper()
	sess := &oplog.Session{LSID: mustMarshal(t, bson.D{{Key: "id", Value: "s"}}), TxnNumber: 4, StmtID: -1}
	entries := map[uint64]oplog.Stored{}
	id, total := 0, 0
	for _, n := range parts {
		total += n
	}
	for i, n := range parts {
		var ops []oplog.Op
		for range n {
			doc := mustMarshal(t, bson.D{{Key: "_id", Value: id}})
			ops = append(ops, oplog.Op{Kind: oplog.Insert, NS: "db.c", UUID: make([]byte, 16), O: doc, O2: doc})
			id++
		}
		chain := &oplog.Chain{Prev: i > 0, Partial: i < len(parts)-1}
		if !chain.Partial && i > 0 {
			chain.Count = int64(total)
		}
		ent := oplog.NewApplyOps(nil, ops, sess, time.UnixMilli(5000), chain)
		stamp := uint64(100 + i)
		binary.LittleEndian.PutUint64(ent.Doc[ent.TSAt:], stamp)
		if chain.Prev {
			binary.LittleEndian.PutUint64(ent.Doc[ent.PrevAt:], stamp-1)
		}
		entries[stamp] = oplog.Stored(ent.Doc)
	}
	return entries
}

// events runs a stream over entries in stamp order and returns each
// event's clusterTime stamp, txnOpIndex and document _id.
func events(t *testing.T, s *Stream, entries map[uint64]oplog.Stored) ([]string, error) {
	t.Helper()
	stamps := make([]uint64, 0, len(entries))
	for st := range entries {
		stamps = append(stamps, st)
	}
	slices.Sort(stamps)
	var got []string
	for _, st := range stamps {
		err := s.Events(st, entries[st], func(tok Token, doc bson.Raw) error {
			sec, inc := doc.Lookup("clusterTime").Timestamp()
			got = append(got, fmt.Sprintf("%d:%d:%d:%d", uint64(sec)<<32|uint64(inc), tok.TxnOpIndex, doc.Lookup("documentKey", "_id").Int32(), doc.Lookup("txnNumber").Int64()))
			return nil
		})
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// A transaction logged in several entries streams as MongoDB unwinds it:
// its partial entries give nothing, its commit gives every operation's
// event in order at the commit's clusterTime, with the transaction's
// txnNumber and txnOpIndex across the entries; a resume point inside
// the transaction gives what follows it; an entry of the chain the oplog
// lost fails with ChangeStreamHistoryLost.
func TestEventsOfATransactionChain(t *testing.T) {
	entries := txnChain(t, 2, 1, 2)
	read := func(stamp uint64) (oplog.Stored, bool, error) {
		st, ok := entries[stamp]
		return st, ok, nil
	}
	all := []string{"102:0:0:4", "102:1:1:4", "102:2:2:4", "102:3:3:4", "102:4:4:4"}
	got, err := events(t, &Stream{Scope: Scope{DB: "db", Coll: "c"}, Entry: read}, entries)
	if err != nil || !slices.Equal(got, all) {
		t.Fatalf("events %v (%v), want %v", got, err, all)
	}
	for k := range all {
		var key bson.Raw
		if err := bson.Unmarshal(mustMarshal(t, bson.D{{Key: "_id", Value: k}}), &key); err != nil {
			t.Fatal(err)
		}
		after := Token{TS: 102, Event: true, TxnOpIndex: uint32(k), UUID: make([]byte, 16), DocKey: key}
		got, err := events(t, &Stream{Scope: Scope{DB: "db", Coll: "c"}, Entry: read, After: after}, entries)
		if err != nil || !slices.Equal(got, all[k+1:]) {
			t.Errorf("after event %d: %v (%v), want %v", k, got, err, all[k+1:])
		}
	}
	// a resume point past the commit reads no entry of the chain
	got, err = events(t, &Stream{Scope: Scope{DB: "db", Coll: "c"}, After: Token{TS: 103}}, entries)
	if err != nil || len(got) != 0 {
		t.Errorf("after the commit: %v (%v)", got, err)
	}
	// one entry: no chain to read
	one := txnChain(t, 3)
	got, err = events(t, &Stream{Scope: Scope{DB: "db", Coll: "c"}}, one)
	if want := []string{"100:0:0:4", "100:1:1:4", "100:2:2:4"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("one entry: %v (%v), want %v", got, err, want)
	}
	lost := func(stamp uint64) (oplog.Stored, bool, error) {
		if stamp == 100 {
			return nil, false, nil
		}
		return read(stamp)
	}
	_, err = events(t, &Stream{Scope: Scope{DB: "db", Coll: "c"}, Entry: lost}, map[uint64]oplog.Stored{101: entries[101], 102: entries[102]})
	var me *mongoerr.Error
	if !errors.As(err, &me) || me.Code != mongoerr.ChangeStreamHistoryLost {
		t.Errorf("a lost entry of the chain: %v", err)
	}
}
