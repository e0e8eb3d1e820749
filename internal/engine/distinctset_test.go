package engine

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestDistinctCap: distinct's values are capped at 16 MB as MongoDB caps
// them (17217), counted once each: 1,100 values of 17 KB pass the cap,
// whether read from the documents or from an index; the same values
// repeated do not.
func TestDistinctCap(t *testing.T) {
	if testkv.TiKV() {
		t.Skip("FOLIO_TEST_STORAGE=tikv: 37 MB of documents through the mock cluster's forced region splits take minutes; the cap is the engine's, whatever the store")
	}
	e := newTestEngine(t)
	mustCreateIndex(t, e, "big", `{"x": 1}`, false)
	pad := strings.Repeat("x", 17_000)
	var distinct, repeated []bson.Raw
	for i := range 1100 {
		distinct = append(distinct, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "x", Value: string(rune('a'+i%26)) + pad + string(rune(i))}}))
		repeated = append(repeated, bsonDoc(bson.D{{Key: "_id", Value: int32(i)}, {Key: "x", Value: string(rune('a'+i%3)) + pad}}))
	}
	for coll, docs := range map[string][]bson.Raw{"big": distinct, "same": repeated} {
		if _, _, err := e.Insert("test", coll, docs, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, hint := range []string{`{"$natural": 1}`, `{"x": 1}`} {
		_, err := e.Distinct("test", "big", "x", FindOptions{Hint: ext(t, `{"h": `+hint+`}`).Lookup("h")})
		if !mongoerr.Is(err, mongoerr.DistinctTooBig) {
			t.Errorf("distinct of 18 MB of values, hint %s: %v, want 17217", hint, err)
		}
	}
	vals, err := e.Distinct("test", "same", "x", FindOptions{})
	if err != nil || len(vals) != 3 {
		t.Fatalf("distinct of three values repeated: %d values, %v", len(vals), err)
	}
}

// TestDistinctCapEdges: MongoDB 7.0 measures distinct's values against
// 16 MB less 4 KB twice: as read, each element with its name (17217), and
// as the reply's values array once built (31299). A value of 16 MB less
// 4197 bytes is answered (bson_size_limit.js); one 20 bytes short of the
// bound passes the first measure but not the second; one at it fails the
// first.
func TestDistinctCapEdges(t *testing.T) {
	if testkv.TiKV() {
		t.Skip("FOLIO_TEST_STORAGE=tikv: 16 MB documents through the mock cluster take minutes; the cap is the engine's, whatever the store")
	}
	const limit = 16<<20 - 4096
	for _, tc := range []struct {
		n    int
		want mongoerr.Code
	}{
		{limit - 101, 0},
		{limit - 20, mongoerr.DistinctReplyTooBig},
		{limit - 8, mongoerr.DistinctTooBig},
	} {
		e := newTestEngine(t)
		mustCreateIndex(t, e, "c", `{"x": 1}`, false)
		doc := bsonDoc(bson.D{{Key: "_id", Value: int32(1)}, {Key: "x", Value: strings.Repeat("a", tc.n)}})
		if _, _, err := e.Insert("test", "c", []bson.Raw{doc}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, hint := range []string{`{"$natural": 1}`, `{"x": 1}`} {
			vals, err := e.Distinct("test", "c", "x", FindOptions{Hint: ext(t, `{"h": `+hint+`}`).Lookup("h")})
			switch {
			case tc.want == 0 && (err != nil || len(vals) != 1):
				t.Errorf("distinct of a %d-byte string, hint %s: %d values, %v", tc.n, hint, len(vals), err)
			case tc.want != 0 && !mongoerr.Is(err, tc.want):
				t.Errorf("distinct of a %d-byte string, hint %s: %v, want %d", tc.n, hint, err, tc.want)
			}
		}
	}
}
