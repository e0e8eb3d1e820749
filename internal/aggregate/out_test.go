package aggregate

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestMergeIntoSystemCollection: $merge refuses a system collection
// (31319). The stage corpus cannot hold the case: it also runs through the
// driver with access control, where MongoDB, as Folio, answers
// Unauthorized first.
func TestMergeIntoSystemCollection(t *testing.T) {
	for _, into := range []string{"system.x", "system.profile"} {
		_, _, err := mergeInto(stringValue(into), "db")
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != mongoerr.MergeIntoSystemCollection {
			t.Errorf("%s: %v, want 31319", into, err)
		}
	}
}

// TestMergeImmutableIDMessages: a $merge that would change a matched
// document's _id fails with ImmutableField under $merge's context, the
// cause as the update MongoDB runs states it: a replacement's is checked
// whole (ObjectReplaceExecutor), a $set's and a pipeline's by path.
func TestMergeImmutableIDMessages(t *testing.T) {
	const context = "$merge failed to update the matching document, did you attempt to modify the _id or the shard key? :: caused by :: "
	for _, tc := range []struct {
		whenMatched any
		cause       string
	}{
		{"replace", "After applying the update, the (immutable) field '_id' was found to have been altered to _id: 5"},
		{"merge", "Performing an update on the path '_id' would modify the immutable field '_id'"},
		{bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "_id", Value: "$$new._id"}}}}}, "Performing an update on the path '_id' would modify the immutable field '_id'"},
	} {
		c := stageCase{
			Docs:          []bson.Raw{mustMarshal(bson.D{{Key: "_id", Value: int32(5)}, {Key: "k", Value: int32(1)}})},
			Colls:         map[string][]bson.Raw{"t": {mustMarshal(bson.D{{Key: "_id", Value: int32(1)}, {Key: "k", Value: int32(1)}})}},
			UniqueIndexes: map[string][]bson.Raw{"t": {mustMarshal(bson.D{{Key: "k", Value: int32(1)}})}},
			Pipeline:      []bson.Raw{mustMarshal(bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "t"}, {Key: "on", Value: "k"}, {Key: "whenMatched", Value: tc.whenMatched}}}})},
		}
		_, _, err := runCaseOn(c, "")
		if e := mongoerr.As(err); e == nil || e.Code != mongoerr.ImmutableField || e.Msg != context+tc.cause {
			t.Errorf("whenMatched %v: %v, want 66 %q", tc.whenMatched, err, context+tc.cause)
		}
	}
}

// TestMergeBatchBytes: $merge's batch ends where MongoDB's would, before
// the statements pass 16 MiB (mode_merge_fail.js's unordered batch case):
// of twenty documents of a little under 1 MiB, the first batch holds
// sixteen, so with whenNotMatched fail and one of them unmatched, the
// other fifteen are updated and the last four are not.
func TestMergeBatchBytes(t *testing.T) {
	pad := strings.Repeat("x", 1<<20-200)
	var docs, target []bson.Raw
	for i := range int32(20) {
		docs = append(docs, mustMarshal(bson.D{{Key: "_id", Value: i}, {Key: "p", Value: pad}}))
		if i != 3 {
			target = append(target, mustMarshal(bson.D{{Key: "_id", Value: i}}))
		}
	}
	c := stageCase{
		Docs:     docs,
		Colls:    map[string][]bson.Raw{"t": target},
		Pipeline: []bson.Raw{mustMarshal(bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "t"}, {Key: "whenNotMatched", Value: "fail"}}}})},
	}
	_, env, err := runCaseOn(c, "")
	if e := mongoerr.As(err); e == nil || e.Code != mongoerr.MergeStageNoMatchingDocument {
		t.Fatalf("%v, want 13113", err)
	}
	for _, d := range env.colls["test.t"] {
		id := d.Lookup("_id").Int32()
		_, err := d.LookupErr("p")
		if padded := err == nil; padded != (id < 16) {
			t.Errorf("_id %d updated: %v, want %v", id, padded, id < 16)
		}
	}
}

// TestMergeStatementBytes: $merge counts a write as MongoDB 7.0's
// LocalWriteSizeEstimator does (mode_replace_fail.js's unordered batch
// case): the replacement document for replace, {$set: doc} for merge,
// the pipeline and the object of its variables ({new: doc}) for a
// whenMatched pipeline, nothing for the on field query. Of twenty
// documents whose statements are exactly 1 MiB, the first batch holds
// sixteen; one byte more and it holds fifteen. With whenNotMatched fail
// and _id 3 unmatched, the batch's other documents are updated, the later
// ones are not.
func TestMergeStatementBytes(t *testing.T) {
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "p", Value: "$$new.p"}}}}
	setBytes := len(mustMarshal(set))
	for _, tc := range []struct {
		whenMatched any
		overhead    int // of the statement, beyond the document
	}{
		{"replace", 0},
		{"merge", 11}, // {$set: doc}
		// the pipeline: its stage and the array's, 7 bytes each; the
		// variables: {new: doc}
		{bson.A{set}, setBytes + 14 + 10},
	} {
		for _, extra := range []int{0, 1} {
			var docs, target []bson.Raw
			for i := range int32(20) {
				doc := mustMarshal(bson.D{{Key: "_id", Value: i}, {Key: "p", Value: ""}})
				pad := strings.Repeat("x", 1<<20-tc.overhead-len(doc)+extra)
				docs = append(docs, mustMarshal(bson.D{{Key: "_id", Value: i}, {Key: "p", Value: pad}}))
				if i != 3 {
					target = append(target, mustMarshal(bson.D{{Key: "_id", Value: i}}))
				}
			}
			c := stageCase{
				Docs:     docs,
				Colls:    map[string][]bson.Raw{"t": target},
				Pipeline: []bson.Raw{mustMarshal(bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "t"}, {Key: "whenMatched", Value: tc.whenMatched}, {Key: "whenNotMatched", Value: "fail"}}}})},
			}
			_, env, err := runCaseOn(c, "")
			if e := mongoerr.As(err); e == nil || e.Code != mongoerr.MergeStageNoMatchingDocument {
				t.Fatalf("%v +%d: %v, want 13113", tc.whenMatched, extra, err)
			}
			batch := int32(16 - extra)
			for _, d := range env.colls["test.t"] {
				id := d.Lookup("_id").Int32()
				_, err := d.LookupErr("p")
				if padded := err == nil; padded != (id < batch) {
					t.Errorf("%v +%d: _id %d updated: %v, want %v", tc.whenMatched, extra, id, padded, id < batch)
				}
			}
		}
	}
}
