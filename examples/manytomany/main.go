// Command manytomany shows a many-to-many relation kept with an array key:
// each product holds the ids of its categories, indexed (multikey), so the
// products of a category take one query and the categories of a product two.
package main

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("manytomany", run) }

// category is one category document.
type category struct {
	ID    bson.ObjectID `bson:"_id"`
	Title string        `bson:"title"`
}

// product belongs to any number of categories.
type product struct {
	ID          bson.ObjectID   `bson:"_id"`
	Name        string          `bson:"name"`
	CategoryIDs []bson.ObjectID `bson:"category_ids"`
}

func run(ctx context.Context, k *cookbook.Kitchen) {
	categories, products := k.DB.Collection("categories"), k.DB.Collection("products")
	epiphytes := category{ID: bson.NewObjectID(), Title: "Epiphytes"}
	greenhouse := category{ID: bson.NewObjectID(), Title: "Greenhouse flowers"}
	orchid := product{ID: bson.NewObjectID(), Name: "Dragon Orchid", CategoryIDs: []bson.ObjectID{epiphytes.ID, greenhouse.ID}}
	fern := product{ID: bson.NewObjectID(), Name: "Staghorn Fern", CategoryIDs: []bson.ObjectID{epiphytes.ID}}
	rose := product{ID: bson.NewObjectID(), Name: "Tea Rose", CategoryIDs: []bson.ObjectID{greenhouse.ID}}

	k.Step("products hold an array of category ids, indexed as a multikey index")
	_, err := categories.InsertMany(ctx, []any{epiphytes, greenhouse})
	k.OK(err, "insert categories")
	_, err = products.InsertMany(ctx, []any{orchid, fern, rose})
	k.OK(err, "insert products")
	_, err = products.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "category_ids", Value: 1}}})
	k.OK(err, "createIndex {category_ids: 1}")

	k.Step("the products of a category: one query on the array key")
	var inCategory []product
	filter := bson.M{"category_ids": epiphytes.ID}
	cur, err := products.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "name", Value: 1}}))
	if k.OK(err, "find products of Epiphytes") && k.OK(cur.All(ctx, &inCategory), "read products") {
		k.Check(len(inCategory) == 2 && inCategory[0].Name == "Dragon Orchid" && inCategory[1].Name == "Staghorn Fern",
			"Epiphytes holds Dragon Orchid and Staghorn Fern (got %d products)", len(inCategory))
	}
	k.UsesIndex(ctx, products, filter, nil, "category_ids_1")

	k.Step("the categories of a product: fetch its ids, then $in on categories")
	var p product
	if !k.OK(products.FindOne(ctx, bson.M{"_id": orchid.ID}).Decode(&p), "find Dragon Orchid") {
		return
	}
	var cats []category
	cur, err = categories.Find(ctx, bson.M{"_id": bson.M{"$in": p.CategoryIDs}}, options.Find().SetSort(bson.D{{Key: "title", Value: 1}}))
	if k.OK(err, "find categories $in") && k.OK(cur.All(ctx, &cats), "read categories") {
		k.Check(len(cats) == 2 && cats[0].Title == "Epiphytes" && cats[1].Title == "Greenhouse flowers",
			"Dragon Orchid is in Epiphytes and Greenhouse flowers (got %v)", cats)
	}
	k.UsesIndex(ctx, categories, bson.M{"_id": bson.M{"$in": p.CategoryIDs}}, nil, "_id_")

	k.Step("adding a product to a category is one $addToSet on the product")
	_, err = products.UpdateOne(ctx, bson.M{"_id": rose.ID}, bson.M{"$addToSet": bson.M{"category_ids": epiphytes.ID}})
	k.OK(err, "addToSet category")
	n, err := products.CountDocuments(ctx, filter)
	if k.OK(err, "count Epiphytes") {
		k.Check(n == 3, "Epiphytes now counts 3 products (got %d)", n)
	}
}
