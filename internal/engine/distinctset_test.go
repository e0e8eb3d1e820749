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
