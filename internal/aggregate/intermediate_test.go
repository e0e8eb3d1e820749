package aggregate

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func mustRaw(t *testing.T, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLookupIntermediateSize: a $lookup's matches may total more than a
// user document's 16 MiB, up to internalLookupStageIntermediateDocumentMaxSizeBytes
// (100 MiB), as long as what reaches the client fits
// (lookup_large_documents.js); past it the stage fails with 4568.
func TestLookupIntermediateSize(t *testing.T) {
	large := strings.Repeat("x", 10*1024*1024)
	foreign := func(n int) []bson.Raw {
		var docs []bson.Raw
		for i := range n {
			docs = append(docs, mustRaw(t, bson.D{{Key: "_id", Value: i}, {Key: "foreign", Value: 1}, {Key: "largeField", Value: large}}))
		}
		return docs
	}
	c := stageCase{
		Docs: []bson.Raw{mustRaw(t, bson.D{{Key: "_id", Value: 0}, {Key: "local", Value: 1}})},
		Pipeline: []bson.Raw{
			mustRaw(t, bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "f"}, {Key: "localField", Value: "local"}, {Key: "foreignField", Value: "foreign"}, {Key: "as", Value: "result"}}}}),
			mustRaw(t, bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "foo", Value: bson.D{{Key: "$add", Value: bson.A{"$local", 2}}}}}}}),
		},
	}
	c.Colls = map[string][]bson.Raw{"f": foreign(8)}
	got, _, err := runCase(c)
	if err != nil {
		t.Fatalf("80 MB of matches: %v", err)
	}
	if g := canonicalAll(got); len(g) != 1 || g[0] != `{"foo":{"$numberInt":"3"}}` {
		t.Fatalf("80 MB of matches: got %v", g)
	}
	// The matches before the eleventh already total more than 100 MiB.
	c.Colls = map[string][]bson.Raw{"f": foreign(11)}
	if _, _, err := runCase(c); mongoerr.As(err).Code != mongoerr.LookupResultTooLarge {
		t.Fatalf("110 MB of matches: want 4568, got %v", err)
	}
}
