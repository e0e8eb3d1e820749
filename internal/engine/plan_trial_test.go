package engine

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestTrialPlans checks that among plans the static ranking cannot tell
// apart (or ranks wrongly), a trial run picks the most productive, and
// that explain lists the others as rejectedPlans. In the data, a = 1 in
// 1990 of 2000 documents and b = 1 in 3 of them.
func TestTrialPlans(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "t", `{"a": 1}`, false)
	mustCreateIndex(t, e, "t", `{"b": 1}`, false)
	var docs []bson.Raw
	for i := range 2000 {
		a, b := int32(1), int32(i%500+2)
		if i%200 == 0 {
			a = 2
		}
		if i >= 1997 {
			b = 1
		}
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: a}, {Key: "b", Value: b}}))
	}
	if _, _, err := e.Insert("test", "t", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		filter, sort string
		limit        int64
		win, reject  string
		sorted       bool
	}{
		// Two equalities: the selective index wins.
		{`{"a": 1, "b": 1}`, ``, 0, "b_1", "a_1", false},
		// A range with a blocking sort against the index that yields the
		// sort: with a small limit the sorted scan finishes first.
		{`{"a": {"$gte": 1}}`, `{"b": 1}`, 5, "b_1", "a_1", true},
	}
	for _, tc := range tests {
		t.Run(tc.filter+tc.sort, func(t *testing.T) {
			o := FindOptions{Filter: ext(t, tc.filter), Limit: tc.limit}
			if tc.sort != "" {
				o.Sort = ext(t, tc.sort)
			}
			q, err := compileFind(o, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, trial, err := e.planFind(context.Background(), e.Collection("test", "t"), q, bson.RawValue{}, nil, o.wanted())
			if err != nil {
				t.Fatal(err)
			}
			rejected := trial.rejected
			if p.Index == nil || p.Index.Name != tc.win || p.Sorted != tc.sorted {
				t.Fatalf("winner %v sorted=%v, want %s sorted=%v", p.Index, p.Sorted, tc.win, tc.sorted)
			}
			if len(rejected) != 1 || rejected[0].Index == nil || rejected[0].Index.Name != tc.reject {
				t.Fatalf("rejected %v, want %s", rejected, tc.reject)
			}
			// The trial runs under the operation's context: a killed
			// operation stops there.
			killed, cancel := context.WithCancelCause(context.Background())
			cancel(mongoerr.New(mongoerr.Interrupted, "operation was interrupted"))
			if _, _, err := e.planFind(killed, e.Collection("test", "t"), q, bson.RawValue{}, nil, o.wanted()); !mongoerr.Is(err, mongoerr.Interrupted) {
				t.Fatalf("trial of a killed operation: %v, want Interrupted", err)
			}
			out, err := e.Explain("test", "t", o, QueryPlanner)
			if err != nil {
				t.Fatal(err)
			}
			qp := bson.Raw(bsonDoc(out)).Lookup("queryPlanner").Document()
			if got := findStage(qp.Lookup("winningPlan").Document(), "IXSCAN").Lookup("indexName").StringValue(); got != tc.win {
				t.Errorf("explain winningPlan on %s, want %s", got, tc.win)
			}
			rej, _ := qp.Lookup("rejectedPlans").Array().Values()
			if len(rej) != 1 || findStage(rej[0].Document(), "IXSCAN").Lookup("indexName").StringValue() != tc.reject {
				t.Errorf("explain rejectedPlans %v, want one on %s", rej, tc.reject)
			}
			want := findIDsIn(t, e, "t", o, `{"$natural": 1}`)
			got := findIDsIn(t, e, "t", o, "")
			if len(got) != len(want) {
				t.Errorf("plan returned %d documents, collection scan %d", len(got), len(want))
			}
		})
	}
}
