package commands

import (
	"errors"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// TestFailsBatch: which statement errors fail a whole write command (an
// error reply a driver may retry) rather than become writeErrors.
func TestFailsBatch(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{mongoerr.New(mongoerr.WriteConflict, "conflict"), true},
		{mongoerr.New(mongoerr.Interrupted, "killed"), true},
		{mongoerr.New(mongoerr.MaxTimeMSExpired, "too long"), true},
		{&mongoerr.Error{Code: mongoerr.NotWritablePrimary, Msg: "a lapsed schema lease", Labels: []string{engine.RetryableWriteError}}, true},
		{mongoerr.New(mongoerr.HostUnreachable, "the storage cluster did not answer"), true},
		// a fail point's not-primary error is the statement's, as in MongoDB
		{mongoerr.New(mongoerr.NotWritablePrimary, "failBeforeCommitExceptionCode"), false},
		{mongoerr.New(mongoerr.DuplicateKey, "dup"), false},
		{mongoerr.New(mongoerr.DocumentValidationFailure, "invalid"), false},
		{errors.New("not a MongoDB error"), false},
	} {
		if got := failsBatch(tt.err); got != tt.want {
			t.Errorf("failsBatch(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestWriteReplyOrder: a write reply's fields in MongoDB's order, those of
// WriteCommandReplyBase (n, writeErrors, retriedStmtIds) before update's
// own (upserted, nModified).
func TestWriteReplyOrder(t *testing.T) {
	werrs := []engine.WriteError{{Index: 1, Err: mongoerr.New(mongoerr.DuplicateKey, "dup")}}
	retried := []bson.E{{Key: "retriedStmtIds", Value: []int32{0}}}
	upserted := bson.E{Key: "upserted", Value: bson.A{bson.D{{Key: "index", Value: int32(0)}, {Key: "_id", Value: int32(1)}}}}
	nModified := bson.E{Key: "nModified", Value: int32(0)}
	for _, tt := range []struct {
		name    string
		werrs   []engine.WriteError
		retried []bson.E
		extra   []bson.E
		want    []string
	}{
		{"insert", nil, nil, nil, []string{"n"}},
		{"insert retried", werrs, retried, nil, []string{"n", "writeErrors", "retriedStmtIds"}},
		{"update", nil, nil, []bson.E{upserted, nModified}, []string{"n", "upserted", "nModified"}},
		{"update retried", nil, retried, []bson.E{upserted, nModified}, []string{"n", "retriedStmtIds", "upserted", "nModified"}},
		{"update retried with errors", werrs, retried, []bson.E{nModified}, []string{"n", "writeErrors", "retriedStmtIds", "nModified"}},
	} {
		elems, err := writeReply(1, tt.werrs, tt.retried, tt.extra...).Elements()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range elems {
			got = append(got, e.Key())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: fields %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestAcquireWriteErrors: a collection that cannot be acquired (here its
// creation refused) fails each document that could be inserted with the
// acquisition's error and the others with their own; an ordered insert
// stops at the first.
func TestAcquireWriteErrors(t *testing.T) {
	refused := mongoerr.New(mongoerr.DatabaseDifferCase, "db already exists with different case")
	doc := func(id any) bson.Raw {
		b, err := bson.Marshal(bson.D{{Key: "_id", Value: id}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	docs := []bson.Raw{doc(1), doc(bson.A{1}), doc(3)}
	for _, tt := range []struct {
		name    string
		docs    []bson.Raw
		ordered bool
		want    []int32 // each write error's code, by index
	}{
		{"ordered", docs, true, []int32{13297}},
		{"ordered, invalid first", docs[1:], true, []int32{53}},
		{"unordered", docs, false, []int32{13297, 53, 13297}},
	} {
		var got []int32
		for i, we := range acquireWriteErrors(refused, tt.docs, tt.ordered) {
			if we.Index != i {
				t.Errorf("%s: write error %d has index %d", tt.name, i, we.Index)
			}
			got = append(got, int32(we.Err.Code))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: codes %v, want %v", tt.name, got, tt.want)
		}
	}
}
