package driver_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// corpusLines returns the Extended JSON lines of the pure packages' test
// corpora (comments and blank lines skipped), named file:line.
func corpusLines(t *testing.T, pattern string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus at %s", pattern)
	}
	out := map[string]string{}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text != "" && !strings.HasPrefix(text, "//") && !strings.HasPrefix(text, "#") {
				out[filepath.Base(file)+":"+strconv.Itoa(line)] = text
			}
		}
		f.Close()
	}
	return out
}

// TestMatcherCorpusThroughDriver runs every case of the query package's
// matcher corpus through the driver: the document is stored, the filter is
// sent with find, and the document must come back exactly when the case
// says MongoDB matches it.
func TestMatcherCorpusThroughDriver(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("corpus")
	ctx := context.Background()
	for name, text := range corpusLines(t, "../../internal/query/testdata/match.jsonl") {
		t.Run(name, func(t *testing.T) {
			var tc struct {
				Filter bson.Raw `bson:"filter"`
				Doc    bson.Raw `bson:"doc"`
				Match  bool     `bson:"match"`
				Error  int      `bson:"error"`
			}
			if err := bson.UnmarshalExtJSON([]byte(text), false, &tc); err != nil {
				t.Fatal(err)
			}
			if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if _, hasID := tc.Doc.LookupErr("_id"); hasID != nil && bytes.Contains(tc.Filter, []byte("$jsonSchema")) {
				t.Skip("a stored document gains an _id, which a schema case without one did not expect")
			}
			if _, err := coll.InsertOne(ctx, tc.Doc); err != nil {
				t.Skipf("document not storable (%v): a matcher-only case", err)
			}
			n, err := coll.CountDocuments(ctx, tc.Filter)
			if tc.Error != 0 {
				if serverCode(err) != tc.Error {
					t.Fatalf("find %s on %s: got %v, want error %d", tc.Filter, tc.Doc, err, tc.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := n == 1; got != tc.Match {
				t.Fatalf("find %s on %s: matched %v, MongoDB %v", tc.Filter, tc.Doc, got, tc.Match)
			}
		})
	}
}

// TestUpdateCorpusThroughDriver runs the update package's cases that start
// from a stored document with an _id and need no positional match: the
// update is sent as an update command by _id (raw, so that the driver's own
// checks of replacement documents do not intervene) and the stored result,
// or the write error code, must be what the case says MongoDB gives.
func TestUpdateCorpusThroughDriver(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("ucorpus")
	ctx := context.Background()
	for name, text := range corpusLines(t, "../../internal/update/testdata/*.jsonl") {
		var tc struct {
			Doc          bson.Raw   `bson:"doc"`
			Filter       bson.Raw   `bson:"filter"`
			Replacement  bool       `bson:"replacement"`
			Update       bson.Raw   `bson:"update"`
			Pos          *int       `bson:"pos"`
			Insert       bool       `bson:"insert"`
			ArrayFilters []bson.Raw `bson:"arrayFilters"`
			Result       bson.Raw   `bson:"result"`
			Code         int        `bson:"code"`
		}
		if err := bson.UnmarshalExtJSON([]byte(text), false, &tc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tc.Filter != nil {
			t.Run(name, func(t *testing.T) { checkUpsertSeed(t, coll, tc.Filter, tc.Replacement, tc.Result, tc.Code) })
			continue
		}
		id, err := tc.Doc.LookupErr("_id")
		if tc.Update == nil || tc.Pos != nil || tc.Insert || err != nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			if _, err := coll.InsertOne(ctx, tc.Doc); err != nil {
				t.Skipf("document not storable (%v)", err)
			}
			stmt := bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: id}}}, {Key: "u", Value: tc.Update}}
			if tc.ArrayFilters != nil {
				stmt = append(stmt, bson.E{Key: "arrayFilters", Value: tc.ArrayFilters})
			}
			cmd := bson.D{{Key: "update", Value: coll.Name()}, {Key: "updates", Value: bson.A{stmt}}}
			err := coll.Database().RunCommand(ctx, cmd).Err()
			if tc.Code != 0 {
				var we mongo.WriteException
				if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != tc.Code {
					t.Fatalf("update %s: got %v, want write error %d", tc.Update, err, tc.Code)
				}
				return
			}
			if err != nil {
				t.Fatalf("update %s: %v", tc.Update, err)
			}
			got, err := coll.FindOne(ctx, bson.D{}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(tc.Result) {
				t.Fatalf("update %s on %s:\n got %s\nwant %s", tc.Update, tc.Doc, got, tc.Result)
			}
		})
	}
}

// checkUpsertSeed upserts with filter into the empty collection coll and an
// empty $set (or with replacement an empty replacement, which keeps the
// seed's _id), and checks the document inserted (its generated _id left
// out) against result, or the write error's code.
func checkUpsertSeed(t *testing.T, coll *mongo.Collection, filter bson.Raw, replacement bool, result bson.Raw, code int) {
	ctx := context.Background()
	if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	var err error
	if replacement {
		_, err = coll.ReplaceOne(ctx, filter, bson.D{}, options.Replace().SetUpsert(true))
	} else {
		_, err = coll.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{}}}, options.UpdateOne().SetUpsert(true))
	}
	if code != 0 {
		var we mongo.WriteException
		if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != code {
			t.Fatalf("upsert %s: got %v, want write error %d", filter, err, code)
		}
		return
	}
	if err != nil {
		t.Fatalf("upsert %s: %v", filter, err)
	}
	opts := options.FindOne()
	if _, err := result.LookupErr("_id"); err != nil {
		opts.SetProjection(bson.D{{Key: "_id", Value: 0}})
	}
	got, err := coll.FindOne(ctx, bson.D{}, opts).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(result) {
		t.Fatalf("upsert %s:\n got %s\nwant %s", filter, got, result)
	}
}

// TestWindowCorpusThroughDriver runs the aggregate package's
// $setWindowFields corpus through the driver: each case's documents are
// stored in a fresh collection and its pipeline sent with aggregate; the
// output (in order, or as a multiset when the case says unordered) or the
// error code must be what the case says MongoDB gives. Cases that need
// other collections or options of the in-memory runner are left out.
func TestWindowCorpusThroughDriver(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("windowcorpus")
	ctx := context.Background()
	for name, text := range corpusLines(t, "../../internal/aggregate/testdata/window.jsonl") {
		t.Run(name, func(t *testing.T) {
			var tc struct {
				Docs      []bson.Raw `bson:"docs"`
				Pipeline  []bson.Raw `bson:"pipeline"`
				Expected  []bson.Raw `bson:"expected"`
				Error     int        `bson:"error"`
				Unordered bool       `bson:"unordered"`
				Other     bson.Raw   `bson:"colls"`
				Let       bson.Raw   `bson:"let"`
				Memory    int64      `bson:"memoryLimit"`
				Window    int64      `bson:"windowMemoryLimit"`
				Collation bson.Raw   `bson:"collation"`
			}
			if err := bson.UnmarshalExtJSON([]byte(text), false, &tc); err != nil {
				t.Fatal(err)
			}
			if tc.Other != nil || tc.Let != nil || tc.Memory != 0 || tc.Window != 0 || tc.Collation != nil {
				t.Skip("needs the in-memory runner's options")
			}
			if err := coll.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			if len(tc.Docs) > 0 {
				if _, err := coll.InsertMany(ctx, tc.Docs); err != nil {
					t.Fatal(err)
				}
			}
			cur, err := coll.Aggregate(ctx, tc.Pipeline)
			var got []bson.Raw
			if err == nil {
				for cur.Next(ctx) {
					got = append(got, append(bson.Raw(nil), cur.Current...))
				}
				err = cur.Err()
				cur.Close(ctx)
			}
			if tc.Error != 0 {
				if serverCode(err) != tc.Error {
					t.Fatalf("%s: got %v, want error %d", tc.Pipeline, err, tc.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.Pipeline, err)
			}
			canon := func(docs []bson.Raw) []string {
				out := make([]string, len(docs))
				for i, d := range docs {
					b, err := bson.MarshalExtJSON(d, true, false)
					if err != nil {
						t.Fatal(err)
					}
					out[i] = string(b)
				}
				if tc.Unordered {
					slices.Sort(out)
				}
				return out
			}
			if g, w := canon(got), canon(tc.Expected); !slices.Equal(g, w) {
				t.Fatalf("%s:\n got %v\nwant %v", tc.Pipeline, g, w)
			}
		})
	}
}
