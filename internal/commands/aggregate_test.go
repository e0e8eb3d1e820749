package commands_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// aggDB starts an in-memory server and returns a database on it.
func aggDB(t *testing.T) *mongo.Database {
	t.Helper()
	in, err := instance.Start(instance.Config{Addr: "127.0.0.1:0", InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(context.Background()) })
	client, err := mongo.Connect(options.Client().ApplyURI(in.URI()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	return client.Database("shop")
}

func insert(t *testing.T, c *mongo.Collection, docs ...any) {
	t.Helper()
	if _, err := c.InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

// aggregate runs a pipeline and returns its results as relaxed Extended
// JSON strings.
func aggregate(t *testing.T, c *mongo.Collection, pipeline any, opts ...options.Lister[options.AggregateOptions]) []string {
	t.Helper()
	cur, err := c.Aggregate(context.Background(), pipeline, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		b, _ := bson.MarshalExtJSON(d, false, false)
		out[i] = string(b)
	}
	return out
}

func wantDocs(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d documents %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("document %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// The product page's average rating, computed from the reviews
// (MongoDB in Action 6.2) with $group and $avg instead of a client loop.
func TestAggregateProductAverageRating(t *testing.T) {
	db := aggDB(t)
	reviews := db.Collection("reviews")
	insert(t, reviews,
		bson.D{{Key: "product_id", Value: "p1"}, {Key: "rating", Value: 4}},
		bson.D{{Key: "product_id", Value: "p1"}, {Key: "rating", Value: 5}},
		bson.D{{Key: "product_id", Value: "p2"}, {Key: "rating", Value: 2}},
		bson.D{{Key: "product_id", Value: "p1"}, {Key: "rating", Value: 3}},
	)
	got := aggregate(t, reviews, bson.A{
		bson.D{{Key: "$match", Value: bson.D{{Key: "product_id", Value: "p1"}}}},
		bson.D{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: "$product_id"},
			{Key: "average_review", Value: bson.D{{Key: "$avg", Value: "$rating"}}},
			{Key: "total_reviews", Value: bson.D{{Key: "$sum", Value: 1}}},
		}}},
	})
	wantDocs(t, got, `{"_id":"p1","average_review":4.0,"total_reviews":3}`)
}

// Page views per day summed over the monthly documents of pre-allocated
// day counters (MongoDB in Action B.1.8).
func TestAggregatePageViewsPerDay(t *testing.T) {
	db := aggDB(t)
	sites := db.Collection("sites-nov")
	days := func(d1, d2, d3 int) bson.D {
		return bson.D{{Key: "1", Value: d1}, {Key: "2", Value: d2}, {Key: "3", Value: d3}}
	}
	insert(t, sites,
		bson.D{{Key: "base", Value: "org.mongodb"}, {Key: "path", Value: "/"}, {Key: "total", Value: 11500}, {Key: "days", Value: days(4500, 4300, 2700)}},
		bson.D{{Key: "base", Value: "org.mongodb"}, {Key: "path", Value: "/docs"}, {Key: "total", Value: 600}, {Key: "days", Value: days(100, 200, 300)}},
	)
	got := aggregate(t, sites, bson.A{
		bson.D{{Key: "$match", Value: bson.D{{Key: "base", Value: "org.mongodb"}}}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}, {Key: "days", Value: bson.D{{Key: "$objectToArray", Value: "$days"}}}}}},
		bson.D{{Key: "$unwind", Value: "$days"}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$days.k"}, {Key: "views", Value: bson.D{{Key: "$sum", Value: "$days.v"}}}}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	wantDocs(t, got, `{"_id":"1","views":4600}`, `{"_id":"2","views":4500}`, `{"_id":"3","views":3000}`)
}

// comments stores one document per comment (the "Storing comments" use
// case): discussion_id, posted, text.
func seedComments(t *testing.T, db *mongo.Database) *mongo.Collection {
	comments := db.Collection("comments")
	at := func(min int) time.Time { return time.Date(2024, 5, 1, 12, min, 0, 0, time.UTC) }
	insert(t, comments,
		bson.D{{Key: "_id", Value: 1}, {Key: "discussion_id", Value: "d1"}, {Key: "posted", Value: at(1)}, {Key: "text", Value: "first"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "discussion_id", Value: "d2"}, {Key: "posted", Value: at(2)}, {Key: "text", Value: "hello"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "discussion_id", Value: "d1"}, {Key: "posted", Value: at(5)}, {Key: "text", Value: "latest"}},
		bson.D{{Key: "_id", Value: 4}, {Key: "discussion_id", Value: "d1"}, {Key: "posted", Value: at(3)}, {Key: "text", Value: "middle"}},
	)
	return comments
}

func TestAggregateCommentsPerDiscussion(t *testing.T) {
	comments := seedComments(t, aggDB(t))
	got := aggregate(t, comments, bson.A{
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$discussion_id"}, {Key: "comments", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "comments", Value: -1}}}},
	})
	wantDocs(t, got, `{"_id":"d1","comments":3}`, `{"_id":"d2","comments":1}`)
}

func TestAggregateNewestCommentPerThread(t *testing.T) {
	comments := seedComments(t, aggDB(t))
	// The leading $sort is pushed down to the engine.
	got := aggregate(t, comments, bson.A{
		bson.D{{Key: "$sort", Value: bson.D{{Key: "posted", Value: -1}}}},
		bson.D{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: "$discussion_id"},
			{Key: "newest", Value: bson.D{{Key: "$first", Value: "$text"}}},
			{Key: "posted", Value: bson.D{{Key: "$first", Value: "$posted"}}},
		}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	wantDocs(t, got,
		`{"_id":"d1","newest":"latest","posted":{"$date":"2024-05-01T12:05:00Z"}}`,
		`{"_id":"d2","newest":"hello","posted":{"$date":"2024-05-01T12:02:00Z"}}`)
}

// $lookup, $out and getMore batches through the driver.
func TestAggregateLookupOutAndBatches(t *testing.T) {
	db := aggDB(t)
	ctx := context.Background()
	orders, products := db.Collection("orders"), db.Collection("products")
	insert(t, products, bson.D{{Key: "_id", Value: "a"}, {Key: "price", Value: 3}}, bson.D{{Key: "_id", Value: "b"}, {Key: "price", Value: 5}})
	var docs []any
	for i := range 250 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "item", Value: []string{"a", "b"}[i%2]}})
	}
	insert(t, orders, docs...)
	got := aggregate(t, orders, bson.A{
		bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "products"}, {Key: "localField", Value: "item"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "p"}}}},
		bson.D{{Key: "$unwind", Value: "$p"}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "price", Value: "$p.price"}}}},
	}, options.Aggregate().SetBatchSize(7))
	if len(got) != 250 || got[0] != `{"_id":0,"price":3}` || got[249] != `{"_id":249,"price":5}` {
		t.Fatalf("lookup: got %d docs, first %v", len(got), got[:min(2, len(got))])
	}
	aggregate(t, orders, bson.A{
		bson.D{{Key: "$match", Value: bson.D{{Key: "item", Value: "b"}}}},
		bson.D{{Key: "$out", Value: "b_orders"}},
	})
	n, err := db.Collection("b_orders").CountDocuments(ctx, bson.D{})
	if err != nil || n != 125 {
		t.Fatalf("$out wrote %d documents (%v), want 125", n, err)
	}
}

func TestAggregateErrors(t *testing.T) {
	db := aggDB(t)
	c := db.Collection("c")
	insert(t, c, bson.D{{Key: "_id", Value: 1}})
	for _, tc := range []struct {
		pipeline bson.A
		code     int32
	}{
		{bson.A{bson.D{{Key: "$bogus", Value: 1}}}, 40324},
		{bson.A{bson.D{{Key: "$group", Value: bson.D{}}}}, 15955},
		{bson.A{bson.D{{Key: "$out", Value: "x"}}, bson.D{{Key: "$limit", Value: 1}}}, 40601},
	} {
		_, err := c.Aggregate(context.Background(), tc.pipeline)
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != tc.code {
			t.Errorf("%v: got %v, want code %d", tc.pipeline, err, tc.code)
		}
	}
}

// A collection-less aggregate over $documents.
func TestAggregateDocuments(t *testing.T) {
	db := aggDB(t)
	cur, err := db.Aggregate(context.Background(), bson.A{
		bson.D{{Key: "$documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "x", Value: 2}}}}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "s", Value: bson.D{{Key: "$sum", Value: "$x"}}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.M
	if err := cur.All(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0]["s"] != int32(3) {
		t.Fatalf("got %v", out)
	}
}

// A collection-less aggregate needs a first stage that reads no
// collection: an empty pipeline is an invalid namespace, as a $match is.
func TestAggregateCollectionlessNeedsSource(t *testing.T) {
	db := aggDB(t)
	for _, pipeline := range []bson.A{{}, {bson.D{{Key: "$match", Value: bson.D{}}}}} {
		_, err := db.Aggregate(context.Background(), pipeline)
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 73 {
			t.Errorf("%v: got %v, want InvalidNamespace", pipeline, err)
		}
	}
}
