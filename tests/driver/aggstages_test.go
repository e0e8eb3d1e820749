package driver_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestAggStageCorporaThroughDriver runs the aggregate package's corpora of
// $graphLookup, $redact, $setWindowFields, $fill and $densify through the driver: the
// documents are stored, the pipeline sent with aggregate (allowDiskUse as
// the case says) and the output, types and field order included, or the
// error code must be the case's. Cases that set a memory limit of their
// own stay in the pure package (the server's limit is MongoDB's 100 MiB).
func TestAggStageCorporaThroughDriver(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	for _, file := range []string{"graphlookup", "redact", "window", "fill", "densify"} {
		path := "../../internal/aggregate/testdata/" + file + ".jsonl"
		if _, err := os.Stat(path); err != nil {
			continue
		}
		for name, text := range corpusLines(t, path) {
			t.Run(name, func(t *testing.T) {
				var tc struct {
					Name         string                `bson:"name"`
					Docs         []bson.Raw            `bson:"docs"`
					Colls        map[string][]bson.Raw `bson:"colls"`
					Pipeline     []bson.Raw            `bson:"pipeline"`
					Expected     []bson.Raw            `bson:"expected"`
					Error        int                   `bson:"error"`
					MemoryLimit  int64                 `bson:"memoryLimit"`
					AllowDiskUse bool                  `bson:"allowDiskUse"`
				}
				if err := bson.UnmarshalExtJSON([]byte(text), false, &tc); err != nil {
					t.Fatal(err)
				}
				if tc.MemoryLimit != 0 {
					t.Skip("a memory limit of its own: pure package only")
				}
				if err := db.Drop(ctx); err != nil {
					t.Fatal(err)
				}
				colls := map[string][]bson.Raw{"c": tc.Docs}
				for k, v := range tc.Colls {
					colls[k] = v
				}
				for name, docs := range colls {
					if err := db.CreateCollection(ctx, name); err != nil {
						t.Fatal(err)
					}
					if len(docs) > 0 {
						if _, err := db.Collection(name).InsertMany(ctx, docs); err != nil {
							t.Fatal(err)
						}
					}
				}
				// The pure package reads "c" in _id order; so does the
				// server's collection scan.
				cur, err := db.Collection("c").Aggregate(ctx, tc.Pipeline, options.Aggregate().SetAllowDiskUse(tc.AllowDiskUse))
				var got []bson.Raw
				if err == nil {
					err = cur.All(ctx, &got)
				}
				if tc.Error != 0 {
					if serverCode(err) != tc.Error {
						t.Fatalf("%s: got %v, want error %d", tc.Name, err, tc.Error)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", tc.Name, err)
				}
				g, w := canonicalDocs(got), canonicalDocs(tc.Expected)
				if !slices.Equal(g, w) {
					t.Fatalf("%s\n got: %s\nwant: %s", tc.Name, strings.Join(g, "\n      "), strings.Join(w, "\n      "))
				}
			})
		}
	}
}

func canonicalDocs(docs []bson.Raw) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		b, _ := bson.MarshalExtJSON(d, true, false)
		out[i] = string(b)
	}
	return out
}
