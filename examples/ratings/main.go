// Command ratings shows keeping a product's average rating in the product
// document: recomputed from its reviews with an aggregation ($match,
// $group with $sum and $avg) and $set, or maintained incrementally with
// $set and $inc when a review is added.
package main

import (
	"context"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("ratings", run) }

// product holds the cached review statistics.
type product struct {
	TotalReviews  int     `bson:"total_reviews"`
	RatingsTotal  int     `bson:"ratings_total"`
	AverageReview float64 `bson:"average_review"`
}

func run(ctx context.Context, k *cookbook.Kitchen) {
	products, reviews := k.DB.Collection("products"), k.DB.Collection("reviews")
	id, other := bson.NewObjectID(), bson.NewObjectID()
	_, err := products.InsertMany(ctx, []any{bson.M{"_id": id, "name": "Extra Large Wheel Barrow"}, bson.M{"_id": other, "name": "Trowel"}})
	k.OK(err, "insert products")
	_, err = reviews.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "product_id", Value: 1}}})
	k.OK(err, "createIndex {product_id: 1}")
	var docs []any
	for _, r := range []int{5, 4, 4, 2} {
		docs = append(docs, bson.M{"product_id": id, "rating": r, "text": "..."})
	}
	docs = append(docs, bson.M{"product_id": other, "rating": 1})
	_, err = reviews.InsertMany(ctx, docs)
	k.OK(err, "insert reviews")

	k.Step("recompute: aggregate the product's reviews, $set the result")
	pipeline := mongo.Pipeline{
		{{Key: "$match", Value: bson.M{"product_id": id}}},
		{{Key: "$group", Value: bson.M{"_id": "$product_id", "count": bson.M{"$sum": 1},
			"total": bson.M{"$sum": "$rating"}, "average": bson.M{"$avg": "$rating"}}}},
	}
	var stats []struct {
		Count   int     `bson:"count"`
		Total   int     `bson:"total"`
		Average float64 `bson:"average"`
	}
	cur, err := reviews.Aggregate(ctx, pipeline)
	if k.OK(err, "aggregate") && k.OK(cur.All(ctx, &stats), "read aggregate") &&
		k.Check(len(stats) == 1 && stats[0].Count == 4 && stats[0].Total == 15 && stats[0].Average == 3.75,
			"4 reviews, total 15, average 3.75 (got %+v)", stats) {
		_, err = products.UpdateOne(ctx, bson.M{"_id": id}, bson.M{"$set": bson.M{
			"total_reviews": stats[0].Count, "ratings_total": stats[0].Total, "average_review": stats[0].Average}})
		k.OK(err, "set review statistics")
	}
	k.UsesIndex(ctx, reviews, bson.M{"product_id": id}, nil, "product_id_1")

	k.Step("the same by iterating the ratings in the application (projection {rating: 1})")
	var ratings []struct {
		Rating int `bson:"rating"`
	}
	cur, err = reviews.Find(ctx, bson.M{"product_id": id}, options.Find().SetProjection(bson.M{"rating": 1}))
	if k.OK(err, "find ratings") && k.OK(cur.All(ctx, &ratings), "read ratings") {
		total := 0
		for _, r := range ratings {
			total += r.Rating
		}
		k.Check(len(ratings) == 4 && float64(total)/float64(len(ratings)) == 3.75, "the loop agrees: 3.75")
	}

	k.Step("incremental: a new review of 5 updates the cache without re-reading all reviews")
	var p product
	if k.OK(products.FindOne(ctx, bson.M{"_id": id}).Decode(&p), "find product") {
		_, err = reviews.InsertOne(ctx, bson.M{"product_id": id, "rating": 5})
		k.OK(err, "insert review")
		total := p.RatingsTotal + 5
		average := float64(total) / float64(p.TotalReviews+1)
		_, err = products.UpdateOne(ctx, bson.M{"_id": id}, bson.M{
			"$set": bson.M{"average_review": average, "ratings_total": total},
			"$inc": bson.M{"total_reviews": 1}})
		k.OK(err, "update cached statistics")
	}
	p = product{}
	if k.OK(products.FindOne(ctx, bson.M{"_id": id}).Decode(&p), "find product") {
		k.Check(p.TotalReviews == 5 && p.RatingsTotal == 20 && math.Abs(p.AverageReview-4) < 1e-9,
			"5 reviews, total 20, average 4 (got %+v)", p)
	}

	k.Step("products sort by their cached average")
	_, err = products.UpdateOne(ctx, bson.M{"_id": other}, bson.M{"$set": bson.M{"average_review": 1.0}})
	k.OK(err, "set the other product's average")
	var best struct {
		Name string `bson:"name"`
	}
	err = products.FindOne(ctx, bson.M{}, options.FindOne().SetSort(bson.D{{Key: "average_review", Value: -1}})).Decode(&best)
	k.Check(err == nil && best.Name == "Extra Large Wheel Barrow", "the best rated product comes first (got %q, %v)", best.Name, err)
}
