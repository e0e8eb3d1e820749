package driver_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestCloneAndConvertToCapped: cloneCollectionAsCapped copies a collection
// into a new capped one that keeps its newest documents, the source
// untouched; convertToCapped makes a collection capped in place, with its
// documents and its _id index only; both refuse what MongoDB refuses.
func TestCloneAndConvertToCapped(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	src := db.Collection("src")
	var docs []bson.Raw
	for i := range 100 {
		docs = append(docs, mustRaw(t, bson.D{{Key: "_id", Value: int32(i)}, {Key: "pad", Value: strings.Repeat("x", 80)}}))
	}
	seed(t, src, docs)
	if _, err := src.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "pad", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	run := func(cmd bson.D) error { return db.RunCommand(ctx, cmd).Err() }
	if err := run(bson.D{{Key: "cloneCollectionAsCapped", Value: "src"}, {Key: "toCollection", Value: "dst"}, {Key: "size", Value: 1000}}); err != nil {
		t.Fatal(err)
	}
	got := findAll(t, db.Collection("dst"), bson.D{})
	if len(got) == 0 || len(got) > 1024/len(docs[0]) || !bytesEqual(got[len(got)-1], docs[99]) {
		t.Fatalf("the capped clone holds %d documents, ending with %v", len(got), got[len(got)-1:])
	}
	for i, d := range got {
		if !bytesEqual(d, docs[100-len(got)+i]) {
			t.Fatalf("clone document %d: %s, want the newest in order", i, d)
		}
	}
	if n, _ := src.CountDocuments(ctx, bson.D{}); n != 100 {
		t.Fatalf("the source holds %d documents", n)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "dst"}})
	if err != nil || len(specs) != 1 || specs[0].Options.Lookup("capped").Boolean() != true || specs[0].Options.Lookup("size").AsInt64() != 1024 {
		t.Fatalf("dst: %v %v", specs, err)
	}

	if err := run(bson.D{{Key: "convertToCapped", Value: "src"}, {Key: "size", Value: 100000.7}}); err != nil {
		t.Fatal(err)
	}
	if got := findAll(t, src, bson.D{}); !slicesEqualRaw(got, docs) {
		t.Fatalf("converted collection holds %d documents", len(got))
	}
	indexes, err := src.Indexes().ListSpecifications(ctx)
	if err != nil || len(indexes) != 1 || indexes[0].Name != "_id_" {
		t.Fatalf("indexes after convertToCapped: %v %v", indexes, err)
	}
	names, _ := db.ListCollectionNames(ctx, bson.D{})
	for _, n := range names {
		if strings.Contains(n, "convertToCapped") {
			t.Fatalf("temporary collection %s left behind", n)
		}
	}
	if err := db.CreateView(ctx, "v", "src", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	// MongoDB's clone of a clustered collection keeps its clusteredIndex,
	// a capped clustered collection Folio does not have
	if err := run(bson.D{{Key: "create", Value: "clu"}, {Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{{Key: "cloneCollectionAsCapped", Value: "nope"}, {Key: "toCollection", Value: "x"}, {Key: "size", Value: 1000}}, 26},
		{bson.D{{Key: "cloneCollectionAsCapped", Value: "src"}, {Key: "toCollection", Value: "dst"}, {Key: "size", Value: 1000}}, 48},
		{bson.D{{Key: "cloneCollectionAsCapped", Value: "v"}, {Key: "toCollection", Value: "x"}, {Key: "size", Value: 1000}}, 166},
		{bson.D{{Key: "cloneCollectionAsCapped", Value: "src"}, {Key: "toCollection", Value: 5}, {Key: "size", Value: 1000}}, 14},
		{bson.D{{Key: "cloneCollectionAsCapped", Value: "src"}, {Key: "toCollection", Value: "x"}}, 72},
		{bson.D{{Key: "convertToCapped", Value: "nope"}, {Key: "size", Value: 1000}}, 26},
		{bson.D{{Key: "convertToCapped", Value: "v"}, {Key: "size", Value: 1000}}, 166},
		{bson.D{{Key: "convertToCapped", Value: "src"}, {Key: "size", Value: 0.9}}, 72},
		{bson.D{{Key: "convertToCapped", Value: "src"}, {Key: "size", Value: int64(1)<<50 + 1}}, 2},
		{bson.D{{Key: "convertToCapped", Value: "clu"}, {Key: "size", Value: 1000}}, 238},
		{bson.D{{Key: "cloneCollectionAsCapped", Value: "clu"}, {Key: "toCollection", Value: "clu2"}, {Key: "size", Value: 1000}}, 238},
	} {
		if err := run(tc.cmd); serverCode(err) != tc.code {
			t.Errorf("%v: %v, want code %d", tc.cmd, err, tc.code)
		}
	}
	// In a database that holds nothing, both fail on the database first
	// (jstests core/ddl/convert_to_capped_nonexistant.js,
	// clone_as_capped_nonexistant.js).
	other := client.Database(testDB + "_capped_nodb")
	for _, exists := range []bool{false, true} {
		want := "database " + other.Name() + " not found"
		if exists {
			if _, err := other.Collection("coll").InsertOne(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			want = "source collection " + other.Name() + ".foo does not exist"
		}
		for _, cmd := range []bson.D{
			{{Key: "convertToCapped", Value: "foo"}, {Key: "size", Value: 1024}},
			{{Key: "cloneCollectionAsCapped", Value: "foo"}, {Key: "toCollection", Value: "bar"}, {Key: "size", Value: 1024}},
		} {
			if err := other.RunCommand(ctx, cmd).Err(); serverCode(err) != 26 || errMsg(err) != want {
				t.Errorf("%v: %v, want 26 %q", cmd, err, want)
			}
		}
	}
	// a capped collection made so evicts its oldest documents
	if err := run(bson.D{{Key: "convertToCapped", Value: "src"}, {Key: "size", Value: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.InsertOne(ctx, bson.D{{Key: "_id", Value: 1000}, {Key: "pad", Value: strings.Repeat("y", 80)}}); err != nil {
		t.Fatal(err)
	}
	last := findAll(t, src, bson.D{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: -1}}).SetLimit(1))
	if n, _ := src.CountDocuments(ctx, bson.D{}); n > 1024/int64(len(docs[0])) || len(last) != 1 || last[0].Lookup("_id").AsInt64() != 1000 {
		t.Fatalf("after an insert the capped collection holds %d documents, the newest %v", n, last)
	}
}

// TestCollModResizesCapped: collMod's cappedMax and cappedSize change a
// capped collection's limits, which listCollections reports; the next
// insert evicts the oldest documents past them. Only a capped collection
// takes them.
func TestCollModResizesCapped(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "log", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20).SetMaxDocuments(100)); err != nil {
		t.Fatal(err)
	}
	log := db.Collection("log")
	for i := range 50 {
		if _, err := log.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: strings.Repeat("x", 100)}}); err != nil {
			t.Fatal(err)
		}
	}
	collOptions := func() bson.Raw {
		t.Helper()
		cur, err := db.ListCollections(ctx, bson.D{{Key: "name", Value: "log"}})
		var specs []bson.Raw
		if err == nil {
			err = cur.All(ctx, &specs)
		}
		if err != nil || len(specs) != 1 {
			t.Fatalf("listCollections: %v %v", specs, err)
		}
		return specs[0].Lookup("options").Document()
	}
	ids := func() []int32 {
		t.Helper()
		var out []int32
		for _, d := range findAll(t, log, bson.D{}) {
			out = append(out, d.Lookup("_id").Int32())
		}
		return out
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "log"}, {Key: "cappedMax", Value: 10}}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := collOptions().Lookup("max").AsInt64(); got != 10 {
		t.Fatalf("max after collMod: %d", got)
	}
	if got := ids(); len(got) != 50 {
		t.Fatalf("collMod evicted at once: %d documents", len(got))
	}
	if _, err := log.InsertOne(ctx, bson.D{{Key: "_id", Value: 50}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(); len(got) != 10 || got[0] != 41 || got[9] != 50 {
		t.Fatalf("after an insert under max 10: %v", got)
	}
	// room for 400 bytes: the padded documents take 122 bytes each, _id 50
	// takes 14
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "log"}, {Key: "cappedSize", Value: 400}, {Key: "cappedMax", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	if o := collOptions(); o.Lookup("size").AsInt64() != 400 || o.Lookup("max").AsInt64() != math.MaxInt32 {
		t.Fatalf("options after collMod: %s", o)
	}
	if _, err := log.InsertOne(ctx, bson.D{{Key: "_id", Value: 51}, {Key: "pad", Value: strings.Repeat("x", 100)}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []int32{48, 49, 50, 51}) {
		t.Fatalf("after an insert under size 400: %v", got)
	}
	for _, tc := range []struct {
		coll string
		mod  bson.E
		code int
	}{
		{"log", bson.E{Key: "cappedSize", Value: -1}, 2},
		{"log", bson.E{Key: "cappedSize", Value: int64(1)<<50 + 1}, 2},
		{"log", bson.E{Key: "cappedMax", Value: int64(1) << 31}, 2},
		{"log", bson.E{Key: "cappedMax", Value: "ten"}, 14},
		{"plain", bson.E{Key: "cappedSize", Value: 4096}, 72},
	} {
		if tc.coll == "plain" {
			if _, err := db.Collection("plain").InsertOne(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: tc.coll}, tc.mod}).Err(); serverCode(err) != tc.code {
			t.Errorf("collMod %s %v: %v, want %d", tc.coll, tc.mod, err, tc.code)
		}
	}
}

// TestCreateCappedOptions: size and max belong to capped collections, and
// a capped collection needs a size (InvalidOptions); null counts as not
// given.
func TestCreateCappedOptions(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	for _, tt := range []struct {
		name string
		opts bson.D
		ok   bool
	}{
		{"capped", bson.D{{Key: "capped", Value: true}}, false},
		{"size", bson.D{{Key: "size", Value: 4096}}, false},
		{"max", bson.D{{Key: "max", Value: 10}}, false},
		{"notcapped", bson.D{{Key: "capped", Value: false}, {Key: "size", Value: 4096}}, false},
		{"nullsize", bson.D{{Key: "size", Value: nil}, {Key: "max", Value: nil}}, true},
		{"both", bson.D{{Key: "capped", Value: true}, {Key: "size", Value: 4096}, {Key: "max", Value: 10}}, true},
	} {
		err := db.RunCommand(ctx, append(bson.D{{Key: "create", Value: tt.name}}, tt.opts...)).Err()
		if tt.ok {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		requireCode(t, err, 72, "InvalidOptions")
	}
}

// TestCappedDocumentSizes: MongoDB 7.0 lets an update change the size of a
// document of a capped collection (it refused that below FCV 5.3,
// SERVER-58865), and keeps a document larger than the whole collection,
// evicting every older one (its capped delete never removes the document
// just inserted; jstests capped_update.js, capped_resize.js).
func TestCappedDocumentSizes(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "small", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096)); err != nil {
		t.Fatal(err)
	}
	small := db.Collection("small")
	for i := range 3 {
		if _, err := small.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: "abc"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := small.UpdateOne(ctx, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "s", Value: "abcdef"}}}}); err != nil {
		t.Fatalf("growing update: %v", err)
	}
	if _, err := small.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$unset", Value: bson.D{{Key: "s", Value: 1}}}}); err != nil {
		t.Fatalf("shrinking update: %v", err)
	}
	var got bson.M
	err := small.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "t", Value: "xyz"}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&got)
	if err != nil || got["t"] != "xyz" {
		t.Fatalf("growing findAndModify: %v %v", got, err)
	}
	big := strings.Repeat("a", 10*1024)
	if _, err := small.InsertOne(ctx, bson.D{{Key: "_id", Value: "big"}, {Key: "key", Value: big}}); err != nil {
		t.Fatalf("a document larger than the collection: %v", err)
	}
	docs := findAll(t, small, bson.D{})
	if len(docs) != 1 || docs[0].Lookup("_id").StringValue() != "big" {
		t.Fatalf("after the large insert the collection holds %d documents", len(docs))
	}
	if _, err := small.InsertOne(ctx, bson.D{{Key: "_id", Value: "next"}}); err != nil {
		t.Fatal(err)
	}
	if docs := findAll(t, small, bson.D{}); len(docs) != 1 || docs[0].Lookup("_id").StringValue() != "next" {
		t.Fatalf("the next insert leaves %d documents", len(docs))
	}
}
