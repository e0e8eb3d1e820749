package driver_test

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// inventory returns a fresh collection seeded with testdata/inventory.json.
func inventory(t *testing.T, client *mongo.Client) *mongo.Collection {
	t.Helper()
	coll := client.Database(testDB).Collection("inventory")
	if err := coll.Drop(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed(t, coll, loadExtJSON(t, "inventory.json"))
	return coll
}

// requireDoc fails unless got holds exactly the bytes of want.
func requireDoc(t *testing.T, got bson.Raw, want any) {
	t.Helper()
	if w := mustRaw(t, want); !bytes.Equal(got, w) {
		t.Fatalf("got document %v, want %v", got, w)
	}
}

// TestInsertGeneratedID proves that a document inserted without _id gets an
// ObjectID _id as its first field, both when the driver adds it and when the
// server must (a raw insert command).
func TestInsertGeneratedID(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("gen")

	res, err := coll.InsertOne(t.Context(), bson.D{{Key: "a", Value: int32(1)}})
	if err != nil {
		t.Fatal(err)
	}
	oid, ok := res.InsertedID.(bson.ObjectID)
	if !ok {
		t.Fatalf("InsertedID = %T %v, want ObjectID", res.InsertedID, res.InsertedID)
	}
	got, err := coll.FindOne(t.Context(), bson.D{{Key: "_id", Value: oid}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	requireDoc(t, got, bson.D{{Key: "_id", Value: oid}, {Key: "a", Value: int32(1)}})

	err = client.Database(testDB).RunCommand(t.Context(), bson.D{
		{Key: "insert", Value: "gen"},
		{Key: "documents", Value: bson.A{bson.D{{Key: "b", Value: "server"}}}},
	}).Err()
	if err != nil {
		t.Fatal(err)
	}
	got, err = coll.FindOne(t.Context(), bson.D{{Key: "b", Value: "server"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	first, err := got.IndexErr(0)
	if err != nil || first.Key() != "_id" || first.Value().Type != bson.TypeObjectID {
		t.Fatalf("server-generated document %v: want an ObjectID _id first", got)
	}
	requireDoc(t, got, bson.D{{Key: "_id", Value: first.Value().ObjectID()}, {Key: "b", Value: "server"}})
}

// TestInsertMovesIDFirst proves that an _id given after other fields is
// stored as the first field, the rest keeping their order.
func TestInsertMovesIDFirst(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("order")
	err := client.Database(testDB).RunCommand(t.Context(), bson.D{
		{Key: "insert", Value: "order"},
		{Key: "documents", Value: bson.A{bson.D{{Key: "a", Value: int32(1)}, {Key: "_id", Value: int32(5)}, {Key: "b", Value: int32(2)}}}},
	}).Err()
	if err != nil {
		t.Fatal(err)
	}
	got, err := coll.FindOne(t.Context(), bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	requireDoc(t, got, bson.D{{Key: "_id", Value: int32(5)}, {Key: "a", Value: int32(1)}, {Key: "b", Value: int32(2)}})
}

// TestInsertManyWriteErrors proves that ordered inserts stop at the first
// duplicate while unordered ones go on, each reporting writeErrors with the
// index of the failing document in the batch.
func TestInsertManyWriteErrors(t *testing.T) {
	docs := []any{
		bson.D{{Key: "_id", Value: int32(1)}},
		bson.D{{Key: "_id", Value: int32(1)}},
		bson.D{{Key: "_id", Value: int32(2)}},
		bson.D{{Key: "_id", Value: int32(2)}},
		bson.D{{Key: "_id", Value: int32(3)}},
	}
	tests := []struct {
		name        string
		ordered     bool
		wantIndexes []int
		wantIDs     []string
	}{
		{"ordered", true, []int{1}, []string{"1"}},
		{"unordered", false, []int{1, 3}, []string{"1", "2", "3"}},
	}
	client, _ := startServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			coll := client.Database(testDB).Collection(tt.name)
			_, err := coll.InsertMany(t.Context(), docs, options.InsertMany().SetOrdered(tt.ordered))
			var we mongo.BulkWriteException
			if !errors.As(err, &we) {
				t.Fatalf("got %v, want a BulkWriteException", err)
			}
			var indexes []int
			for _, e := range we.WriteErrors {
				if e.Code != 11000 {
					t.Errorf("write error %d: code %d, want 11000", e.Index, e.Code)
				}
				indexes = append(indexes, e.Index)
			}
			if !slices.Equal(indexes, tt.wantIndexes) {
				t.Errorf("write error indexes %v, want %v", indexes, tt.wantIndexes)
			}
			if got := ids(findAll(t, coll, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))); !slices.Equal(got, tt.wantIDs) {
				t.Errorf("stored _ids %v, want %v", got, tt.wantIDs)
			}
		})
	}
}

// TestDuplicateIDError proves a duplicate _id fails with E11000 and the
// keyPattern and keyValue MongoDB reports in the write error.
func TestDuplicateIDError(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("dup")
	if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "k"}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "k"}, {Key: "x", Value: 1}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 {
		t.Fatalf("got %v, want a WriteException with one write error", err)
	}
	e := we.WriteErrors[0]
	if e.Code != 11000 || e.Index != 0 || !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("write error %+v: want code 11000 at index 0", e)
	}
	if kp, ok := e.Raw.Lookup("keyPattern").DocumentOK(); !ok || !bytes.Equal(kp, mustRaw(t, bson.D{{Key: "_id", Value: int32(1)}})) {
		t.Errorf("keyPattern = %v, want {_id: 1}", e.Raw.Lookup("keyPattern"))
	}
	if kv, ok := e.Raw.Lookup("keyValue").DocumentOK(); !ok || !bytes.Equal(kv, mustRaw(t, bson.D{{Key: "_id", Value: "k"}})) {
		t.Errorf("keyValue = %v, want {_id: \"k\"}", e.Raw.Lookup("keyValue"))
	}
	if n, err := coll.CountDocuments(t.Context(), bson.D{}); err != nil || n != 1 {
		t.Errorf("count = %d, %v; want 1", n, err)
	}
}

// TestIDEqualityAcrossNumericTypes proves _id uniqueness compares numbers by
// value, as MongoDB does: 1, 1.0, int64(1) and decimal 1.0 are one key, and
// so are 0 and -0.0.
func TestIDEqualityAcrossNumericTypes(t *testing.T) {
	one, _ := bson.ParseDecimal128("1.0")
	tests := []struct {
		name          string
		first, second any
	}{
		{"int32-double", int32(1), 1.0},
		{"int32-int64", int32(1), int64(1)},
		{"int64-double", int64(1), 1.0},
		{"double-decimal", 1.0, one},
		{"int32-decimal", int32(1), one},
		{"zero-negzero", int32(0), negZero()},
	}
	client, _ := startServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			coll := client.Database(testDB).Collection(tt.name)
			if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: tt.first}}); err != nil {
				t.Fatal(err)
			}
			_, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: tt.second}})
			requireCode(t, err, 11000, "")
		})
	}
}

// TestFind proves filters, projections, sorts, skip and limit select and
// shape documents as MongoDB does.
func TestFind(t *testing.T) {
	byID := bson.D{{Key: "_id", Value: 1}}
	tests := []struct {
		name     string
		filter   bson.D
		opts     *options.FindOptionsBuilder
		wantIDs  []string
		wantDocs []bson.D
	}{
		{name: "all", filter: bson.D{}, opts: options.Find().SetSort(byID),
			wantIDs: []string{"1", "2", "3", "4", "5", "6", "7", "8"}},
		{name: "equality", filter: bson.D{{Key: "status", Value: "A"}}, opts: options.Find().SetSort(byID),
			wantIDs: []string{"1", "2", "5", "6", "7"}},
		{name: "array contains", filter: bson.D{{Key: "tags", Value: "red"}}, opts: options.Find().SetSort(byID),
			wantIDs: []string{"1", "2", "3", "4"}},
		{name: "array equals nested array", filter: bson.D{{Key: "tags", Value: bson.A{"nested", "array"}}},
			wantIDs: []string{"7"}},
		{name: "empty array", filter: bson.D{{Key: "tags", Value: bson.A{}}}, wantIDs: []string{"6"}},
		{name: "dotted path", filter: bson.D{{Key: "size.uom", Value: "in"}}, opts: options.Find().SetSort(byID),
			wantIDs: []string{"2", "3"}},
		{name: "gt across numeric types", filter: bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 45}}}}, opts: options.Find().SetSort(byID),
			wantIDs: []string{"2", "3", "4", "6", "7"}},
		{name: "null matches null", filter: bson.D{{Key: "status", Value: nil}}, wantIDs: []string{"8"}},
		{name: "null matches missing", filter: bson.D{{Key: "qty", Value: nil}}, wantIDs: []string{"8"}},
		{name: "sort desc skip limit", filter: bson.D{},
			opts:    options.Find().SetSort(bson.D{{Key: "qty", Value: -1}}).SetSkip(1).SetLimit(2),
			wantIDs: []string{"7", "6"}},
		{name: "compound sort missing first", filter: bson.D{},
			opts:    options.Find().SetSort(bson.D{{Key: "size.h", Value: 1}, {Key: "_id", Value: -1}}),
			wantIDs: []string{"8", "3", "2", "5", "6", "1", "7", "4"}},
		{name: "inclusion projection without _id", filter: bson.D{{Key: "status", Value: "A"}},
			opts: options.Find().SetSort(bson.D{{Key: "qty", Value: -1}}).SetProjection(bson.D{{Key: "item", Value: 1}, {Key: "_id", Value: 0}}),
			wantDocs: []bson.D{
				{{Key: "item", Value: "sketch pad"}}, {{Key: "item", Value: "sketchbook"}}, {{Key: "item", Value: "notebook"}},
				{{Key: "item", Value: "postcard"}}, {{Key: "item", Value: "journal"}},
			}},
		{name: "dotted inclusion projection", filter: bson.D{{Key: "_id", Value: 1}},
			opts:     options.Find().SetProjection(bson.D{{Key: "size.uom", Value: 1}}),
			wantDocs: []bson.D{{{Key: "_id", Value: int32(1)}, {Key: "size", Value: bson.D{{Key: "uom", Value: "cm"}}}}}},
		{name: "exclusion projection", filter: bson.D{{Key: "_id", Value: 8}},
			opts:     options.Find().SetProjection(bson.D{{Key: "tags", Value: 0}, {Key: "size", Value: 0}}),
			wantDocs: []bson.D{{{Key: "_id", Value: int32(8)}, {Key: "item", Value: "eraser"}, {Key: "status", Value: nil}}}},
	}
	client, _ := startServer(t)
	coll := inventory(t, client)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if opts == nil {
				opts = options.Find()
			}
			got := findAll(t, coll, tt.filter, opts)
			if tt.wantDocs == nil {
				if g := ids(got); !slices.Equal(g, tt.wantIDs) {
					t.Fatalf("got _ids %v, want %v", g, tt.wantIDs)
				}
				return
			}
			if len(got) != len(tt.wantDocs) {
				t.Fatalf("got %d documents %v, want %d", len(got), got, len(tt.wantDocs))
			}
			for i, want := range tt.wantDocs {
				requireDoc(t, got[i], want)
			}
		})
	}
}

// TestUpdate proves updateOne, updateMany and replaceOne report matched,
// modified and upserted counts as MongoDB does and store the right document.
func TestUpdate(t *testing.T) {
	set := func(k string, v any) bson.D { return bson.D{{Key: "$set", Value: bson.D{{Key: k, Value: v}}}} }
	upsert := options.UpdateOne().SetUpsert(true)
	tests := []struct {
		name                        string
		run                         func(*mongo.Collection) (*mongo.UpdateResult, error)
		matched, modified, upserted int64
		wantUpsertedID              any // nil: none; "oid": a generated ObjectID
		checkFilter                 bson.D
		wantDoc                     bson.D
	}{
		{name: "updateOne", matched: 1, modified: 1, run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			return c.UpdateOne(t.Context(), bson.D{{Key: "_id", Value: 5}}, set("qty", int32(46)))
		}, checkFilter: bson.D{{Key: "_id", Value: 5}}, wantDoc: bson.D{{Key: "_id", Value: int32(5)}, {Key: "item", Value: "postcard"},
			{Key: "qty", Value: int32(46)}, {Key: "tags", Value: bson.A{"blue"}},
			{Key: "size", Value: bson.D{{Key: "h", Value: int32(10)}, {Key: "w", Value: 15.25}, {Key: "uom", Value: "cm"}}}, {Key: "status", Value: "A"}}},
		{name: "updateMany", matched: 5, modified: 5, run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			return c.UpdateMany(t.Context(), bson.D{{Key: "status", Value: "A"}}, set("checked", true))
		}},
		{name: "updateMany no-op set", matched: 2, modified: 0, run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			return c.UpdateMany(t.Context(), bson.D{{Key: "status", Value: "D"}}, set("status", "D"))
		}},
		{name: "updateOne no match", run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			return c.UpdateOne(t.Context(), bson.D{{Key: "_id", Value: 404}}, set("x", 1))
		}},
		{name: "upsert generated id", upserted: 1, wantUpsertedID: "oid", run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			return c.UpdateOne(t.Context(), bson.D{{Key: "item", Value: "new"}}, set("qty", int32(1)), upsert)
		}},
		{name: "upsert id from filter", upserted: 1, wantUpsertedID: int32(100), run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			return c.UpdateOne(t.Context(), bson.D{{Key: "_id", Value: int32(100)}}, set("item", "hundred"), upsert)
		}, checkFilter: bson.D{{Key: "_id", Value: 100}}, wantDoc: bson.D{{Key: "_id", Value: int32(100)}, {Key: "item", Value: "hundred"}}},
		{name: "replaceOne", matched: 1, modified: 1, run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			return c.ReplaceOne(t.Context(), bson.D{{Key: "item", Value: "paper"}}, bson.D{{Key: "item", Value: "card"}})
		}, checkFilter: bson.D{{Key: "_id", Value: 3}}, wantDoc: bson.D{{Key: "_id", Value: int32(3)}, {Key: "item", Value: "card"}}},
		// MongoDB compares the replacement as given with the document: one
		// without _id changes it even when the rest is the same
		{name: "replaceOne with the same fields", matched: 1, modified: 1, run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			if _, err := c.ReplaceOne(t.Context(), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "item", Value: "card"}}); err != nil {
				return nil, err
			}
			return c.ReplaceOne(t.Context(), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "item", Value: "card"}})
		}},
		{name: "replaceOne with the same document", matched: 1, modified: 0, run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			if _, err := c.ReplaceOne(t.Context(), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "item", Value: "card"}}); err != nil {
				return nil, err
			}
			return c.ReplaceOne(t.Context(), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "_id", Value: int32(3)}, {Key: "item", Value: "card"}})
		}},
		{name: "replaceOne upsert", upserted: 1, wantUpsertedID: int32(42), run: func(c *mongo.Collection) (*mongo.UpdateResult, error) {
			return c.ReplaceOne(t.Context(), bson.D{{Key: "_id", Value: int32(42)}}, bson.D{{Key: "item", Value: "answer"}},
				options.Replace().SetUpsert(true))
		}, checkFilter: bson.D{{Key: "_id", Value: 42}}, wantDoc: bson.D{{Key: "_id", Value: int32(42)}, {Key: "item", Value: "answer"}}},
	}
	client, _ := startServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			coll := inventory(t, client)
			res, err := tt.run(coll)
			if err != nil {
				t.Fatal(err)
			}
			if res.MatchedCount != tt.matched || res.ModifiedCount != tt.modified || res.UpsertedCount != tt.upserted {
				t.Errorf("matched/modified/upserted = %d/%d/%d, want %d/%d/%d",
					res.MatchedCount, res.ModifiedCount, res.UpsertedCount, tt.matched, tt.modified, tt.upserted)
			}
			switch want := tt.wantUpsertedID; {
			case want == nil:
				if res.UpsertedID != nil {
					t.Errorf("UpsertedID = %v, want none", res.UpsertedID)
				}
			case want == "oid":
				if _, ok := res.UpsertedID.(bson.ObjectID); !ok {
					t.Errorf("UpsertedID = %T %v, want an ObjectID", res.UpsertedID, res.UpsertedID)
				}
			case res.UpsertedID != want:
				t.Errorf("UpsertedID = %T %v, want %T %v", res.UpsertedID, res.UpsertedID, want, want)
			}
			if tt.wantDoc != nil {
				got, err := coll.FindOne(t.Context(), tt.checkFilter).Raw()
				if err != nil {
					t.Fatal(err)
				}
				requireDoc(t, got, tt.wantDoc)
			}
		})
	}
}

// TestDelete proves deleteOne and deleteMany remove and count the matching
// documents.
func TestDelete(t *testing.T) {
	tests := []struct {
		name        string
		many        bool
		filter      bson.D
		wantDeleted int64
	}{
		{"deleteOne", false, bson.D{{Key: "status", Value: "A"}}, 1},
		{"deleteMany", true, bson.D{{Key: "status", Value: "A"}}, 5},
		{"deleteMany all", true, bson.D{}, 8},
		{"deleteOne no match", false, bson.D{{Key: "status", Value: "Z"}}, 0},
	}
	client, _ := startServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			coll := inventory(t, client)
			var res *mongo.DeleteResult
			var err error
			if tt.many {
				res, err = coll.DeleteMany(t.Context(), tt.filter)
			} else {
				res, err = coll.DeleteOne(t.Context(), tt.filter)
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.DeletedCount != tt.wantDeleted {
				t.Errorf("deleted %d, want %d", res.DeletedCount, tt.wantDeleted)
			}
			if n, err := coll.CountDocuments(t.Context(), bson.D{}); err != nil || n != 8-tt.wantDeleted {
				t.Errorf("remaining %d (%v), want %d", n, err, 8-tt.wantDeleted)
			}
		})
	}
}

// TestCount proves countDocuments honours filter, skip and limit and that
// estimatedDocumentCount counts the whole collection.
func TestCount(t *testing.T) {
	tests := []struct {
		name   string
		filter bson.D
		opts   *options.CountOptionsBuilder
		want   int64
	}{
		{"all", bson.D{}, options.Count(), 8},
		{"filter", bson.D{{Key: "status", Value: "A"}}, options.Count(), 5},
		{"skip", bson.D{{Key: "status", Value: "A"}}, options.Count().SetSkip(2), 3},
		{"limit", bson.D{}, options.Count().SetLimit(3), 3},
		{"skip past end", bson.D{}, options.Count().SetSkip(20), 0},
		{"no match", bson.D{{Key: "status", Value: "Z"}}, options.Count(), 0},
	}
	client, _ := startServer(t)
	coll := inventory(t, client)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := coll.CountDocuments(t.Context(), tt.filter, tt.opts)
			if err != nil || n != tt.want {
				t.Fatalf("countDocuments = %d, %v; want %d", n, err, tt.want)
			}
		})
	}
	n, err := coll.EstimatedDocumentCount(t.Context())
	if err != nil || n != 8 {
		t.Fatalf("estimatedDocumentCount = %d, %v; want 8", n, err)
	}
	n, err = client.Database(testDB).Collection("missing").EstimatedDocumentCount(t.Context())
	if err != nil || n != 0 {
		t.Fatalf("estimatedDocumentCount of a missing collection = %d, %v; want 0", n, err)
	}
}

// TestCountLimitErrors: count reads its limit as countParseLimit does
// (count_request.cpp): not a number is BadValue, a number that is not a
// whole long is FailedToParse with parseIntegerElementToLong's message,
// and the smallest long, whose absolute value a long does not hold, is
// BadValue; a negative limit counts as its absolute value.
func TestCountLimitErrors(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	inventory(t, client)
	count := func(limit any) (int32, error) {
		raw, err := db.RunCommand(t.Context(), bson.D{{Key: "count", Value: "inventory"}, {Key: "limit", Value: limit}}).Raw()
		n, _ := raw.Lookup("n").Int32OK()
		return n, err
	}
	for _, tc := range []struct {
		limit         any
		code          int
		codeName, msg string
	}{
		{"x", 2, "BadValue", "limit value is not a valid number"},
		{nil, 2, "BadValue", "limit value is not a valid number"},
		{2.5, 9, "FailedToParse", "Expected an integer: limit: 2.5"},
		{1e19, 9, "FailedToParse", "Cannot represent as a 64-bit integer: limit: 1e+19.0"},
		{int64(math.MinInt64), 2, "BadValue", "limit value for count cannot be min long"},
	} {
		_, err := count(tc.limit)
		requireError(t, err, tc.code, tc.codeName, tc.msg)
	}
	for _, tc := range []struct {
		limit any
		n     int32
	}{{-3, 3}, {2.0, 2}, {int64(math.MinInt64 + 1), 8}} {
		if n, err := count(tc.limit); err != nil || n != tc.n {
			t.Errorf("count with limit %v = %d, %v; want %d", tc.limit, n, err, tc.n)
		}
	}
}

// TestDistinct proves distinct flattens one level of arrays, keeps nested
// arrays whole, merges equal numbers of different types and returns values
// in BSON order.
func TestDistinct(t *testing.T) {
	client, _ := startServer(t)
	coll := inventory(t, client)
	tests := []struct {
		name   string
		field  string
		filter bson.D
		want   bson.A
	}{
		{"array elements", "tags", bson.D{}, bson.A{"blank", "blue", "plain", "red", "single", bson.A{"nested", "array"}}},
		{"filtered", "tags", bson.D{{Key: "status", Value: "D"}}, bson.A{"blank", "plain", "red"}},
		{"embedded field", "size.uom", bson.D{}, bson.A{"cm", "in"}},
		{"missing and null", "status", bson.D{}, bson.A{nil, "A", "D"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := coll.Distinct(t.Context(), tt.field, tt.filter)
			raw, err := res.Raw()
			if err != nil {
				t.Fatal(err)
			}
			want := mustRaw(t, bson.D{{Key: "v", Value: tt.want}}).Lookup("v").Array()
			if !bytes.Equal(raw, want) {
				t.Fatalf("distinct %s = %v, want %v", tt.field, raw, want)
			}
		})
	}
	t.Run("numbers by value", func(t *testing.T) {
		nums := client.Database(testDB).Collection("nums")
		seed(t, nums, []bson.Raw{
			mustRaw(t, bson.D{{Key: "n", Value: int32(3)}}),
			mustRaw(t, bson.D{{Key: "n", Value: 3.0}}),
			mustRaw(t, bson.D{{Key: "n", Value: bson.A{int64(1), 2.5}}}),
			mustRaw(t, bson.D{{Key: "n", Value: int32(-7)}}),
		})
		var got []float64
		if err := nums.Distinct(t.Context(), "n", bson.D{}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if want := []float64{-7, 1, 2.5, 3}; !slices.Equal(got, want) {
			t.Fatalf("distinct n = %v, want %v", got, want)
		}
	})
}

// TestDistinctNearCap: a distinct whose one value leaves its reply just
// under 16 MB less 4 KB is answered, as MongoDB 7.0 answers it
// (bson_size_limit.js); 20 bytes more and the built reply passes the cap
// (31299).
func TestDistinctNearCap(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("nearcap")
	const limit = 16<<20 - 4096
	if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: strings.Repeat("a", limit-101)}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := coll.Distinct(t.Context(), "x", bson.D{}).Decode(&got); err != nil || len(got) != 1 {
		t.Fatalf("distinct of a value 101 bytes under the cap: %d values, %v", len(got), err)
	}
	if _, err := coll.UpdateOne(t.Context(), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: strings.Repeat("a", limit-20)}}}}); err != nil {
		t.Fatal(err)
	}
	err := coll.Distinct(t.Context(), "x", bson.D{}).Err()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 31299 || ce.Message != "distinct too big, 16mb cap" {
		t.Fatalf("distinct of a value 20 bytes under the cap: %v, want 31299", err)
	}
}

// TestFindOneAndModify proves findOneAndUpdate, findOneAndReplace and
// findOneAndDelete pick the first document in sort order and return it
// before or after the change, projected, upserting when asked.
func TestFindOneAndModify(t *testing.T) {
	before, after := options.Before, options.After
	tests := []struct {
		name      string
		run       func(*mongo.Collection) *mongo.SingleResult
		want      bson.D // nil: ErrNoDocuments
		check     bson.D // the stored document to check afterwards, by _id
		wantCheck bson.D // nil: it must be gone
	}{
		{name: "update returns before", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndUpdate(t.Context(), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "qty", Value: int32(1)}}}},
				options.FindOneAndUpdate().SetReturnDocument(before).SetProjection(bson.D{{Key: "qty", Value: 1}}))
		}, want: bson.D{{Key: "_id", Value: int32(1)}, {Key: "qty", Value: int32(25)}},
			check: bson.D{{Key: "_id", Value: 1}}, wantCheck: bson.D{{Key: "_id", Value: int32(1)}, {Key: "item", Value: "journal"},
				{Key: "qty", Value: int32(26)}, {Key: "tags", Value: bson.A{"blank", "red"}},
				{Key: "size", Value: bson.D{{Key: "h", Value: int32(14)}, {Key: "w", Value: 21.0}, {Key: "uom", Value: "cm"}}}, {Key: "status", Value: "A"}}},
		{name: "update returns after", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndUpdate(t.Context(), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "qty", Value: int32(1)}}}},
				options.FindOneAndUpdate().SetReturnDocument(after).SetProjection(bson.D{{Key: "qty", Value: 1}}))
		}, want: bson.D{{Key: "_id", Value: int32(1)}, {Key: "qty", Value: int32(26)}}},
		{name: "update first in sort order", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndUpdate(t.Context(), bson.D{{Key: "status", Value: "A"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "picked", Value: true}}}},
				options.FindOneAndUpdate().SetSort(bson.D{{Key: "qty", Value: -1}}).SetReturnDocument(after).
					SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "item", Value: 1}, {Key: "picked", Value: 1}}))
		}, want: bson.D{{Key: "item", Value: "sketch pad"}, {Key: "picked", Value: true}}},
		{name: "upsert returns nothing before", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndUpdate(t.Context(), bson.D{{Key: "_id", Value: int32(99)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: int32(1)}}}},
				options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(before))
		}, check: bson.D{{Key: "_id", Value: 99}}, wantCheck: bson.D{{Key: "_id", Value: int32(99)}, {Key: "n", Value: int32(1)}}},
		{name: "upsert returns new after", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndUpdate(t.Context(), bson.D{{Key: "_id", Value: int32(99)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: int32(1)}}}},
				options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(after))
		}, want: bson.D{{Key: "_id", Value: int32(99)}, {Key: "n", Value: int32(1)}}},
		{name: "update no match", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndUpdate(t.Context(), bson.D{{Key: "_id", Value: 404}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 1}}}})
		}, check: bson.D{{Key: "_id", Value: 404}}},
		{name: "replace returns after", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndReplace(t.Context(), bson.D{{Key: "item", Value: "paper"}}, bson.D{{Key: "item", Value: "paper"}, {Key: "qty", Value: int32(0)}},
				options.FindOneAndReplace().SetReturnDocument(after))
		}, want: bson.D{{Key: "_id", Value: int32(3)}, {Key: "item", Value: "paper"}, {Key: "qty", Value: int32(0)}}},
		{name: "replace returns before", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndReplace(t.Context(), bson.D{{Key: "_id", Value: 8}}, bson.D{{Key: "item", Value: "pen"}})
		}, want: bson.D{{Key: "_id", Value: int32(8)}, {Key: "item", Value: "eraser"}, {Key: "tags", Value: "single"}, {Key: "status", Value: nil}},
			check: bson.D{{Key: "_id", Value: 8}}, wantCheck: bson.D{{Key: "_id", Value: int32(8)}, {Key: "item", Value: "pen"}}},
		{name: "replace upsert", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndReplace(t.Context(), bson.D{{Key: "_id", Value: int32(50)}}, bson.D{{Key: "item", Value: "fifty"}},
				options.FindOneAndReplace().SetUpsert(true).SetReturnDocument(after))
		}, want: bson.D{{Key: "_id", Value: int32(50)}, {Key: "item", Value: "fifty"}}},
		{name: "delete first in sort order", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndDelete(t.Context(), bson.D{{Key: "status", Value: "D"}},
				options.FindOneAndDelete().SetSort(bson.D{{Key: "qty", Value: 1}}).SetProjection(bson.D{{Key: "item", Value: 1}}))
		}, want: bson.D{{Key: "_id", Value: int32(4)}, {Key: "item", Value: "planner"}}, check: bson.D{{Key: "_id", Value: 4}}},
		{name: "delete no match", run: func(c *mongo.Collection) *mongo.SingleResult {
			return c.FindOneAndDelete(t.Context(), bson.D{{Key: "status", Value: "Z"}})
		}},
	}
	client, _ := startServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			coll := inventory(t, client)
			got, err := tt.run(coll).Raw()
			switch {
			case tt.want == nil && !errors.Is(err, mongo.ErrNoDocuments):
				t.Fatalf("got %v, %v; want ErrNoDocuments", got, err)
			case tt.want != nil && err != nil:
				t.Fatal(err)
			case tt.want != nil:
				requireDoc(t, got, tt.want)
			}
			if tt.check == nil {
				return
			}
			stored, err := coll.FindOne(t.Context(), tt.check).Raw()
			switch {
			case tt.wantCheck == nil && !errors.Is(err, mongo.ErrNoDocuments):
				t.Fatalf("stored %v, %v; want it gone", stored, err)
			case tt.wantCheck != nil && err != nil:
				t.Fatal(err)
			case tt.wantCheck != nil:
				requireDoc(t, stored, tt.wantCheck)
			}
		})
	}
}
