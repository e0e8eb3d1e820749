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
// (lookup_large_documents.js); past it the stage fails with 4568, unless
// it unwinds them.
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
	// A $lookup unwinding its matches (the $unwind of as right after it)
	// builds no array of them: it has no such bound.
	c.Pipeline = []bson.Raw{c.Pipeline[0],
		mustRaw(t, bson.D{{Key: "$unwind", Value: "$result"}}),
		mustRaw(t, bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: "$result._id"}}}}),
	}
	got, _, err = runCase(c)
	if err != nil || len(got) != 11 {
		t.Fatalf("110 MB of matches unwound: %d documents, %v", len(got), err)
	}
}

// TestFacetIntermediateSize: a $facet's output document may exceed 16 MiB
// for the stages after it (facet_memory_consumption.js: a $facet then
// $unwind), up to internalQueryFacetMaxOutputDocSizeBytes (100 MiB) over
// all its sub-pipelines; past it the stage fails with 4031700.
func TestFacetIntermediateSize(t *testing.T) {
	large := strings.Repeat("x", 7*1024*1024)
	c := stageCase{}
	for i := range 3 {
		c.Docs = append(c.Docs, mustRaw(t, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: large}}))
	}
	c.Pipeline = []bson.Raw{
		mustRaw(t, bson.D{{Key: "$facet", Value: bson.D{{Key: "a", Value: bson.A{}}}}}),
		mustRaw(t, bson.D{{Key: "$unwind", Value: "$a"}}),
		mustRaw(t, bson.D{{Key: "$project", Value: bson.D{{Key: "id", Value: "$a._id"}}}}),
	}
	got, _, err := runCase(c)
	if err != nil {
		t.Fatalf("21 MB $facet: %v", err)
	}
	if g := canonicalAll(got); len(g) != 3 || g[2] != `{"id":{"$numberInt":"2"}}` {
		t.Fatalf("21 MB $facet: got %v", g)
	}
	five := bson.D{}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		five = append(five, bson.E{Key: name, Value: bson.A{}})
	}
	c.Pipeline = []bson.Raw{mustRaw(t, bson.D{{Key: "$facet", Value: five}}), mustRaw(t, bson.D{{Key: "$unwind", Value: "$a"}})}
	for _, disk := range []bool{false, true} {
		c.AllowDiskUse = disk
		if _, _, err := runCase(c); mongoerr.As(err).Code != mongoerr.FacetOutputTooLarge {
			t.Fatalf("105 MB $facet (allowDiskUse %v): want 4031700, got %v", disk, err)
		}
	}
}
