// Command attributes shows two ways to store product attributes that vary by
// product type: a scoped attrs subdocument with sparse indexes on the
// attributes that are queried often, and an array of {n, v} pairs under one
// compound multikey index, queried with $elemMatch.
package main

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("attributes", run) }

func run(ctx context.Context, k *cookbook.Kitchen) {
	sparseAttributes(ctx, k)
	nameValuePairs(ctx, k)
}

// names runs find and returns the name field of the results.
func names(ctx context.Context, k *cookbook.Kitchen, coll *mongo.Collection, filter any) []string {
	var docs []struct {
		Name string `bson:"name"`
	}
	cur, err := coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "sku", Value: 1}}))
	if !k.OK(err, "find") || !k.OK(cur.All(ctx, &docs), "read") {
		return nil
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.Name)
	}
	return out
}

func sparseAttributes(ctx context.Context, k *cookbook.Kitchen) {
	products := k.DB.Collection("products")
	k.Step("attributes scoped in a subdocument, each product type with its own")
	_, err := products.InsertMany(ctx, []any{
		bson.M{"sku": "ebd-123", "name": "Hi-Fi Earbuds", "type": "Headphone",
			"attrs": bson.M{"color": "silver", "freq_low": 20, "freq_hi": 22000, "weight": 0.5}},
		bson.M{"sku": "ebd-456", "name": "Bass Earbuds", "type": "Headphone",
			"attrs": bson.M{"color": "black", "freq_low": 40, "freq_hi": 18000, "weight": 0.4}},
		bson.M{"sku": "ssd-456", "name": "Mini SSD Drive", "type": "Hard Drive",
			"attrs": bson.M{"interface": "SATA", "capacity": 1.2 * 1024 * 1024 * 1024, "rotation": 7200, "form_factor": 2.5}},
	})
	k.OK(err, "insert products")
	_, err = products.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "attrs.freq_low", Value: 1}, {Key: "attrs.freq_hi", Value: 1}}, Options: options.Index().SetSparse(true)},
		{Keys: bson.D{{Key: "attrs.rotation", Value: 1}}, Options: options.Index().SetSparse(true)},
	})
	k.OK(err, "create sparse indexes")

	k.Step("headphone range query on the sparse compound index")
	wide := bson.M{"attrs.freq_low": bson.M{"$lte": 20}, "attrs.freq_hi": bson.M{"$gte": 20000}}
	got := names(ctx, k, products, wide)
	k.Check(len(got) == 1 && got[0] == "Hi-Fi Earbuds", "only the Hi-Fi Earbuds cover 20 Hz-20 kHz (got %v)", got)
	k.UsesIndex(ctx, products, wide, nil, "attrs.freq_low_1_attrs.freq_hi_1")

	k.Step("drives by rotation on the sparse single-field index")
	fast := bson.M{"attrs.rotation": bson.M{"$gte": 5400}}
	got = names(ctx, k, products, fast)
	k.Check(len(got) == 1 && got[0] == "Mini SSD Drive", "only the drive has a rotation (got %v)", got)
	k.UsesIndex(ctx, products, fast, nil, "attrs.rotation_1")

	k.Step("a sparse index leaves out documents without the field")
	cur, err := products.Find(ctx, bson.M{}, options.Find().SetHint("attrs.rotation_1"))
	var all []bson.Raw
	if k.OK(err, "find hinted to the sparse index") && k.OK(cur.All(ctx, &all), "read") {
		k.Check(len(all) == 1, "a full scan of attrs.rotation_1 sees 1 document of 3 (got %d)", len(all))
	}
}

func nameValuePairs(ctx context.Context, k *cookbook.Kitchen) {
	products := k.DB.Collection("products_nv")
	k.Step("unpredictable attributes as an array of {n, v} pairs under one index")
	_, err := products.InsertMany(ctx, []any{
		bson.M{"sku": "ebd-123", "name": "Hi-Fi Earbuds", "type": "Headphone", "attrs": bson.A{
			bson.M{"n": "color", "v": "silver"}, bson.M{"n": "freq_low", "v": 20},
			bson.M{"n": "freq_hi", "v": 22000}, bson.M{"n": "weight", "v": 0.5}}},
		bson.M{"sku": "ebd-456", "name": "Bass Earbuds", "type": "Headphone", "attrs": bson.A{
			bson.M{"n": "color", "v": "black"}, bson.M{"n": "freq_low", "v": 40}}},
		bson.M{"sku": "ssd-456", "name": "Mini SSD Drive", "type": "Hard Drive", "attrs": bson.A{
			bson.M{"n": "interface", "v": "SATA"}, bson.M{"n": "rotation", "v": 7200}}},
	})
	k.OK(err, "insert products")
	_, err = products.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "attrs.n", Value: 1}, {Key: "attrs.v", Value: 1}}})
	k.OK(err, "createIndex {attrs.n: 1, attrs.v: 1}")

	silver := bson.M{"attrs": bson.M{"$elemMatch": bson.M{"n": "color", "v": "silver"}}}
	got := names(ctx, k, products, silver)
	k.Check(len(got) == 1 && got[0] == "Hi-Fi Earbuds", "$elemMatch {n: color, v: silver} finds the silver earbuds (got %v)", got)
	k.UsesIndex(ctx, products, silver, nil, "attrs.n_1_attrs.v_1")

	low := bson.M{"attrs": bson.M{"$elemMatch": bson.M{"n": "freq_low", "v": bson.M{"$lt": 30}}}}
	got = names(ctx, k, products, low)
	k.Check(len(got) == 1 && got[0] == "Hi-Fi Earbuds", "$elemMatch {n: freq_low, v: {$lt: 30}} finds the earbuds (got %v)", got)
	k.UsesIndex(ctx, products, low, nil, "attrs.n_1_attrs.v_1")

	k.Step("without $elemMatch, n and v may match in different elements")
	loose := bson.M{"attrs.n": "color", "attrs.v": 7200}
	got = names(ctx, k, products, loose)
	k.Check(len(got) == 0, "no product has color 7200 (got %v)", got)
	loose = bson.M{"attrs.n": "rotation", "attrs.v": "SATA"}
	got = names(ctx, k, products, loose)
	k.Check(len(got) == 1 && got[0] == "Mini SSD Drive", "{attrs.n: rotation, attrs.v: SATA} wrongly matches the drive: the pair is split across elements (got %v)", got)
}
