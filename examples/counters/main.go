// Command counters shows pre-aggregated analytics: one document per site and
// page per month, pre-allocated with a zero counter for every day so that
// the $inc of a page view never grows it, kept in a collection per period
// so that a month is queried, and dropped, on its own.
package main

import (
	"context"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("counters", run) }

// template is the month document with every day pre-allocated at zero.
func template(base, path string, days int) bson.D {
	counts := bson.D{}
	for d := 1; d <= days; d++ {
		counts = append(counts, bson.E{Key: strconv.Itoa(d), Value: int32(0)})
	}
	return bson.D{{Key: "base", Value: base}, {Key: "path", Value: path}, {Key: "total", Value: int32(0)}, {Key: "days", Value: counts}}
}

// page identifies the document of one page.
var page = bson.D{{Key: "base", Value: "org.mongodb"}, {Key: "path", Value: "/"}}

func run(ctx context.Context, k *cookbook.Kitchen) {
	nov, dec := k.DB.Collection("sites-nov"), k.DB.Collection("sites-dec")
	k.Step("a collection per month, a pre-allocated document per page")
	for _, c := range []*mongo.Collection{nov, dec} {
		_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "base", Value: 1}, {Key: "path", Value: 1}}, Options: options.Index().SetUnique(true)})
		k.OK(err, "createIndex {base: 1, path: 1} unique")
	}
	_, err := nov.InsertOne(ctx, template("org.mongodb", "/", 30))
	k.OK(err, "pre-allocate November")
	_, err = dec.InsertOne(ctx, template("org.mongodb", "/", 31))
	k.OK(err, "pre-allocate December")
	before := size(ctx, k, nov)

	k.Step("each view is one $inc of the month total and the day counter")
	for range 3 {
		_, err = nov.UpdateOne(ctx, page, bson.M{"$inc": bson.M{"total": 1, "days.5": 1}})
		k.OK(err, "count a view on day 5")
	}
	_, err = nov.UpdateOne(ctx, page, bson.M{"$inc": bson.M{"total": 1, "days.6": 1}})
	k.OK(err, "count a view on day 6")
	var doc struct {
		Total int32            `bson:"total"`
		Days  map[string]int32 `bson:"days"`
	}
	if k.OK(nov.FindOne(ctx, page).Decode(&doc), "read November") {
		k.Check(doc.Total == 4 && doc.Days["5"] == 3 && doc.Days["6"] == 1 && len(doc.Days) == 30,
			"total 4, day 5: 3, day 6: 1, 30 days (got %d, %d, %d, %d)", doc.Total, doc.Days["5"], doc.Days["6"], len(doc.Days))
	}
	after := size(ctx, k, nov)
	k.Check(before == after, "the document did not grow: counters changed in place (%d -> %d bytes)", before, after)
	k.UsesIndex(ctx, nov, page, nil, "base_1_path_1")

	k.Step("without pre-allocation the first $inc of a day adds a field: the document grows")
	_, err = nov.UpdateOne(ctx, page, bson.M{"$inc": bson.M{"days.31": 1}})
	k.OK(err, "count a view on a day that was not pre-allocated")
	k.Check(size(ctx, k, nov) > after, "the document grew (%d -> %d bytes)", after, size(ctx, k, nov))

	k.Step("dropping a period is dropping its collection")
	k.OK(nov.Drop(ctx), "drop sites-nov")
	names, err := k.DB.ListCollectionNames(ctx, bson.M{})
	if k.OK(err, "listCollections") {
		k.Check(len(names) == 1 && names[0] == "sites-dec", "only sites-dec is left (got %v)", names)
	}
}

// size returns the BSON size of the page's document in coll.
func size(ctx context.Context, k *cookbook.Kitchen, coll *mongo.Collection) int {
	raw, err := coll.FindOne(ctx, page).Raw()
	k.OK(err, "find page")
	return len(raw)
}
