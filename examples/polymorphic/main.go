// Command polymorphic shows a polymorphic collection: nodes of different
// kinds share one collection and store only their own fields. A new field
// is rolled out lazily (the application supplies a default) and by batched
// background migrations ($exists plus a multi update), and semi-structured
// properties are stored as [name, value] pairs under one index.
package main

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("polymorphic", run) }

// batch is how many nodes one migration step converts.
const batch = 100

func run(ctx context.Context, k *cookbook.Kitchen) {
	migrations(ctx, k)
	properties(ctx, k)
}

// nodeByURL reads a node and supplies the default of the field that is
// being migrated, for nodes that do not have it yet.
func nodeByURL(ctx context.Context, k *cookbook.Kitchen, nodes *mongo.Collection, url string) bson.M {
	var node bson.M
	if !k.OK(nodes.FindOne(ctx, bson.M{"url": url}).Decode(&node), "find node "+url) {
		return nil
	}
	if _, ok := node["short_description"]; !ok {
		node["short_description"] = ""
	}
	return node
}

func migrations(ctx context.Context, k *cookbook.Kitchen) {
	nodes := k.DB.Collection("nodes")
	k.Step("pages and photos share the nodes collection, each with its own fields")
	_, err := nodes.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "url", Value: 1}}, Options: options.Index().SetUnique(true)})
	k.OK(err, "createIndex {url: 1} unique")
	var docs []any
	for i := range 250 {
		if i%2 == 0 {
			docs = append(docs, bson.M{"type": "page", "url": fmt.Sprintf("/page/%d", i), "title": "A page", "text": "..."})
		} else {
			docs = append(docs, bson.M{"type": "photo", "url": fmt.Sprintf("/photo/%d", i), "title": "A photo", "content": bson.Binary{Data: []byte{0xff, 0xd8}}})
		}
	}
	_, err = nodes.InsertMany(ctx, docs)
	k.OK(err, "insert 250 nodes")
	node := nodeByURL(ctx, k, nodes, "/photo/1")
	k.Check(node["short_description"] == "" && node["content"] != nil, "a photo reads with its own fields and the lazy default")
	k.UsesIndex(ctx, nodes, bson.M{"url": "/photo/1"}, nil, "url_1")

	k.Step("migrate in batches of %d: find ids lacking the field, $set it on those ids (multi)", batch)
	missing := bson.M{"short_description": bson.M{"$exists": false}}
	rounds := 0
	for ; rounds < 10; rounds++ {
		var ids []struct {
			ID bson.ObjectID `bson:"_id"`
		}
		cur, err := nodes.Find(ctx, missing, options.Find().SetProjection(bson.M{"_id": 1}).SetLimit(batch))
		if !k.OK(err, "find unmigrated") || !k.OK(cur.All(ctx, &ids), "read unmigrated") || len(ids) == 0 {
			break
		}
		in := make([]bson.ObjectID, len(ids))
		for i, d := range ids {
			in[i] = d.ID
		}
		res, err := nodes.UpdateMany(ctx, bson.M{"_id": bson.M{"$in": in}}, bson.M{"$set": bson.M{"short_description": ""}})
		if k.OK(err, "migrate batch") {
			k.Say("batch %d: %d nodes", rounds+1, res.ModifiedCount)
		}
	}
	k.Check(rounds == 3, "250 nodes take 3 batches (got %d)", rounds)
	n, err := nodes.CountDocuments(ctx, missing)
	k.Check(err == nil && n == 0, "every node has the field (left %d)", n)

	k.Step("or migrate everything at once: one multi update of {}")
	res, err := nodes.UpdateMany(ctx, bson.M{}, bson.M{"$set": bson.M{"version": 2}})
	if k.OK(err, "update all") {
		k.Check(res.ModifiedCount == 250, "250 nodes updated (got %d)", res.ModifiedCount)
	}
}

// properties stores semi-structured properties as [name, value] pairs.
func properties(ctx context.Context, k *cookbook.Kitchen) {
	products := k.DB.Collection("products")
	k.Step("properties as an array of [name, value] pairs, indexed as a whole")
	_, err := products.InsertMany(ctx, []any{
		bson.M{"price": 499.99, "title": "Big and Fast Disk Drive", "gb_capacity": 1000, "properties": bson.A{
			bson.A{"Seek Time", "5ms"}, bson.A{"Rotational Speed", "15k RPM"}, bson.A{"Transfer Rate", "6 Gb/s"}}},
		bson.M{"price": 99.99, "title": "Slow Disk Drive", "gb_capacity": 500, "properties": bson.A{
			bson.A{"Seek Time", "12ms"}, bson.A{"Rotational Speed", "5400 RPM"}}},
	})
	k.OK(err, "insert products")
	_, err = products.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "properties", Value: 1}}})
	k.OK(err, "createIndex {properties: 1}")
	pair := bson.M{"properties": bson.A{"Seek Time", "5ms"}}
	var got []struct {
		Title string `bson:"title"`
	}
	cur, err := products.Find(ctx, pair)
	if k.OK(err, "find by pair") && k.OK(cur.All(ctx, &got), "read") {
		k.Check(len(got) == 1 && got[0].Title == "Big and Fast Disk Drive", "the pair [Seek Time, 5ms] finds the fast drive (got %v)", got)
	}
	k.UsesIndex(ctx, products, pair, nil, "properties_1")
}
