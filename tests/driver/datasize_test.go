package driver_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestDataSizeRanges runs dataSize over key ranges as MongoDB 7.0's
// dataSize reads them: the index whose key pattern starts with keyPattern
// (inferred from min when absent) and holds every document once, the
// bounds filled to its fields with MinKey, maxSize and maxObjects, and its
// errors. Documents _id 0..9 have a = _id, b = _id % 3 and padding of _id
// bytes; one has an array m, one a field s (a sparse index).
func TestDataSizeRanges(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("datasize")
	sizes := make([]int64, 10)
	var docs []any
	for i := range 10 {
		d := bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i}, {Key: "b", Value: i % 3}, {Key: "pad", Value: strings.Repeat("x", i)}}
		switch i {
		case 4:
			d = append(d, bson.E{Key: "m", Value: bson.A{1, 2}})
		case 5:
			d = append(d, bson.E{Key: "s", Value: 1})
		}
		sizes[i] = int64(len(mustRaw(t, d)))
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, ix := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "h", Value: 1}}, Options: options.Index().SetHidden(true)},
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "b", Value: 1}, {Key: "a", Value: -1}}},
		{Keys: bson.D{{Key: "s", Value: 1}}, Options: options.Index().SetSparse(true)},
		{Keys: bson.D{{Key: "m", Value: 1}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx, ix); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CreateView(ctx, "datasize_view", coll.Name(), mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "datasize_empty"); err != nil {
		t.Fatal(err)
	}
	// A collection sharded on {k: 1, _id: 1}, with _id 0..9 and k = 9 - _id.
	sharded := db.Collection("datasize_sh")
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "shardCollection", Value: testDB + ".datasize_sh"},
		{Key: "key", Value: bson.D{{Key: "k", Value: 1}, {Key: "_id", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	shSizes := make([]int64, 10)
	for i := range 10 {
		d := bson.D{{Key: "_id", Value: i}, {Key: "k", Value: 9 - i}}
		shSizes[i] = int64(len(mustRaw(t, d)))
		if _, err := sharded.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	sh := func(fields ...bson.E) bson.D {
		return append(bson.D{{Key: "dataSize", Value: testDB + ".datasize_sh"}}, fields...)
	}
	sum := func(ids ...int) int64 {
		var n int64
		for _, i := range ids {
			n += sizes[i]
		}
		return n
	}
	total := sum(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	ns := testDB + ".datasize"
	d := func(fields ...bson.E) bson.D { return append(bson.D{{Key: "dataSize", Value: ns}}, fields...) }
	kv := func(k string, v any) bson.D { return bson.D{{Key: k, Value: v}} }
	for _, tc := range []struct {
		name string
		cmd  bson.D
		// want is the reply without millis and ok.
		want bson.D
		code int
	}{
		{"whole", d(), bson.D{{Key: "size", Value: total}, {Key: "numObjects", Value: int64(10)}, {Key: "estimate", Value: false}}, 0},
		{"whole estimate", d(bson.E{Key: "estimate", Value: 1}), bson.D{{Key: "size", Value: total}, {Key: "numObjects", Value: int64(10)}, {Key: "estimate", Value: true}}, 0},
		{"a range", d(bson.E{Key: "keyPattern", Value: kv("a", 1)}, bson.E{Key: "min", Value: kv("a", 2)}, bson.E{Key: "max", Value: kv("a", 5)}),
			bson.D{{Key: "size", Value: sum(2, 3, 4)}, {Key: "numObjects", Value: int64(3)}, {Key: "estimate", Value: false}}, 0},
		{"inferred key pattern", d(bson.E{Key: "min", Value: kv("a", 2)}, bson.E{Key: "max", Value: kv("a", 5)}),
			bson.D{{Key: "size", Value: sum(2, 3, 4)}, {Key: "numObjects", Value: int64(3)}, {Key: "estimate", Value: false}}, 0},
		{"prefix of a compound index, filled with MinKey", d(bson.E{Key: "keyPattern", Value: kv("b", 1)}, bson.E{Key: "min", Value: kv("b", 1)}, bson.E{Key: "max", Value: kv("b", 2)}),
			bson.D{{Key: "size", Value: sum(1, 4, 7)}, {Key: "numObjects", Value: int64(3)}, {Key: "estimate", Value: false}}, 0},
		{"descending field filled with MaxKey", d(bson.E{Key: "min", Value: bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 4}}}, bson.E{Key: "max", Value: kv("b", 2)}, bson.E{Key: "keyPattern", Value: kv("b", 1)}),
			bson.D{{Key: "size", Value: sum(1, 4)}, {Key: "numObjects", Value: int64(2)}, {Key: "estimate", Value: false}}, 0},
		{"_id index", d(bson.E{Key: "min", Value: kv("_id", 3)}, bson.E{Key: "max", Value: kv("_id", 7)}),
			bson.D{{Key: "size", Value: sum(3, 4, 5, 6)}, {Key: "numObjects", Value: int64(4)}, {Key: "estimate", Value: false}}, 0},
		{"estimate counts the average size", d(bson.E{Key: "min", Value: kv("_id", 3)}, bson.E{Key: "max", Value: kv("_id", 7)}, bson.E{Key: "estimate", Value: true}),
			bson.D{{Key: "size", Value: 4 * (total / 10)}, {Key: "numObjects", Value: int64(4)}, {Key: "estimate", Value: true}}, 0},
		{"empty range", d(bson.E{Key: "min", Value: kv("_id", 7)}, bson.E{Key: "max", Value: kv("_id", 3)}),
			bson.D{{Key: "size", Value: int64(0)}, {Key: "numObjects", Value: int64(0)}, {Key: "estimate", Value: false}}, 0},
		{"maxObjects", d(bson.E{Key: "min", Value: kv("_id", 0)}, bson.E{Key: "max", Value: kv("_id", 10)}, bson.E{Key: "maxObjects", Value: 2}),
			bson.D{{Key: "maxReached", Value: true}, {Key: "size", Value: sum(0, 1, 2)}, {Key: "numObjects", Value: int64(3)}, {Key: "estimate", Value: false}}, 0},
		{"maxSize", d(bson.E{Key: "maxSize", Value: sum(0, 1)}),
			bson.D{{Key: "maxReached", Value: true}, {Key: "size", Value: sum(0, 1, 2)}, {Key: "numObjects", Value: int64(3)}, {Key: "estimate", Value: false}}, 0},
		{"empty collection", bson.D{{Key: "dataSize", Value: testDB + ".datasize_empty"}, {Key: "keyPattern", Value: kv("z", 1)}, {Key: "min", Value: kv("z", 1)}, {Key: "max", Value: kv("z", 2)}},
			bson.D{{Key: "size", Value: int64(0)}, {Key: "numObjects", Value: int64(0)}}, 0},
		{"missing collection", bson.D{{Key: "dataSize", Value: testDB + ".datasize_none"}},
			bson.D{{Key: "size", Value: int64(0)}, {Key: "numObjects", Value: int64(0)}}, 0},
		{"min without max", d(bson.E{Key: "min", Value: kv("a", 1)}), nil, 2},
		{"max without min", d(bson.E{Key: "max", Value: kv("a", 1)}), nil, 2},
		{"one of min and max empty", d(bson.E{Key: "min", Value: bson.D{}}, bson.E{Key: "max", Value: kv("a", 1)}), nil, 2},
		{"min not an object", d(bson.E{Key: "min", Value: 1}, bson.E{Key: "max", Value: kv("a", 1)}), nil, 14},
		{"sparse index", d(bson.E{Key: "min", Value: kv("s", 0)}, bson.E{Key: "max", Value: kv("s", 9)}), nil, 96},
		{"multikey index", d(bson.E{Key: "min", Value: kv("m", 0)}, bson.E{Key: "max", Value: kv("m", 9)}), nil, 96},
		{"no index", d(bson.E{Key: "keyPattern", Value: kv("a", -1)}, bson.E{Key: "min", Value: kv("a", 0)}, bson.E{Key: "max", Value: kv("a", 9)}), nil, 96},
		{"bound field not the key pattern's", d(bson.E{Key: "keyPattern", Value: kv("a", 1)}, bson.E{Key: "min", Value: kv("b", 0)}, bson.E{Key: "max", Value: kv("b", 9)}), nil, 16634},
		{"bound longer than the index", d(bson.E{Key: "keyPattern", Value: kv("a", 1)}, bson.E{Key: "min", Value: bson.D{{Key: "a", Value: 0}, {Key: "c", Value: 0}}}, bson.E{Key: "max", Value: kv("a", 9)}), nil, 16649},
		{"a hidden index", d(bson.E{Key: "min", Value: kv("h", 0)}, bson.E{Key: "max", Value: kv("h", 9)}),
			bson.D{{Key: "size", Value: int64(0)}, {Key: "numObjects", Value: int64(0)}, {Key: "estimate", Value: false}}, 0},
		{"sharded: the _id index", sh(bson.E{Key: "keyPattern", Value: kv("_id", 1)}, bson.E{Key: "min", Value: kv("_id", 2)}, bson.E{Key: "max", Value: kv("_id", 4)}), nil, 2},
		{"sharded: bounds reordered to the shard key", sh(bson.E{Key: "min", Value: bson.D{{Key: "_id", Value: 0}, {Key: "k", Value: 5}}}, bson.E{Key: "max", Value: bson.D{{Key: "k", Value: 8}, {Key: "_id", Value: 0}}}),
			bson.D{{Key: "size", Value: shSizes[4] + shSizes[3] + shSizes[2]}, {Key: "numObjects", Value: int64(3)}, {Key: "estimate", Value: false}}, 0},
		{"sharded: bound without the shard key", sh(bson.E{Key: "min", Value: kv("k", 1)}, bson.E{Key: "max", Value: kv("k", 5)}), nil, 2},
		{"view", bson.D{{Key: "dataSize", Value: testDB + ".datasize_view"}}, nil, 166},
		{"unknown field", d(bson.E{Key: "foo", Value: 1}), nil, 40415},
		{"null namespace", bson.D{{Key: "dataSize", Value: nil}}, nil, 40414},
		{"no dot", bson.D{{Key: "dataSize", Value: "nodot"}}, nil, 73},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply, err := db.RunCommand(ctx, tc.cmd).Raw()
			if tc.code != 0 {
				requireCode(t, err, tc.code, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			elems, err := reply.Elements()
			if err != nil {
				t.Fatal(err)
			}
			var got bson.D
			for _, e := range elems {
				if k := e.Key(); k != "millis" && k != "ok" && !strings.HasPrefix(k, "$") && k != "operationTime" {
					got = append(got, bson.E{Key: k, Value: e.Value()})
				}
			}
			if g, w := mustRaw(t, got), mustRaw(t, tc.want); !bytesEqual(g, w) {
				t.Fatalf("dataSize %v:\n got %s\nwant %s", tc.cmd, g, w)
			}
			if reply.Lookup("millis").Type != bson.TypeInt64 {
				t.Fatalf("millis %v, want a long", reply.Lookup("millis"))
			}
		})
	}
}
