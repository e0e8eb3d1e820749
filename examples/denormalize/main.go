// Command denormalize shows copying fields across a relation to save the
// application-level join: part names into the products that use them
// (many->one), the product name into its parts (one->many) and a host's
// address into its log messages. Each copy makes reads one query and every
// change of the copied field an update of all the copies.
package main

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("denormalize", run) }

// partRef is a part as a product lists it: its id and a copy of its name.
type partRef struct {
	ID   bson.ObjectID `bson:"id"`
	Name string        `bson:"name"`
}

func run(ctx context.Context, k *cookbook.Kitchen) {
	manyToOne(ctx, k)
	logMessages(ctx, k)
}

func manyToOne(ctx context.Context, k *cookbook.Kitchen) {
	products, parts := k.DB.Collection("products"), k.DB.Collection("parts")
	grommet, blade, sw := bson.NewObjectID(), bson.NewObjectID(), bson.NewObjectID()
	k.Step("parts keep a copy of their product's name, products a copy of their parts' names")
	_, err := parts.InsertMany(ctx, []any{
		bson.M{"_id": grommet, "partno": "123-aff-456", "name": "#4 grommet", "product_name": "left-handed smoke shifter", "product_catalog_number": 1234, "qty": 94},
		bson.M{"_id": blade, "partno": "123-aff-457", "name": "fan blade assembly", "product_name": "left-handed smoke shifter", "product_catalog_number": 1234, "qty": 12},
		bson.M{"_id": sw, "partno": "123-aff-458", "name": "power switch", "product_name": "left-handed smoke shifter", "product_catalog_number": 1234, "qty": 40},
	})
	k.OK(err, "insert parts")
	_, err = products.InsertMany(ctx, []any{
		bson.M{"name": "left-handed smoke shifter", "manufacturer": "Acme Corp", "catalog_number": 1234,
			"parts": []partRef{{grommet, "#4 grommet"}, {blade, "fan blade assembly"}, {sw, "power switch"}}},
		bson.M{"name": "right-handed smoke shifter", "manufacturer": "Acme Corp", "catalog_number": 1235,
			"parts": []partRef{{grommet, "#4 grommet"}}},
	})
	k.OK(err, "insert products")
	_, err = products.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "catalog_number", Value: 1}}, Options: options.Index().SetUnique(true)},
		{Keys: bson.D{{Key: "parts.id", Value: 1}}},
	})
	k.OK(err, "create product indexes")
	_, err = parts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "product_catalog_number", Value: 1}}})
	k.OK(err, "createIndex {product_catalog_number: 1}")

	k.Step("reading part names needs no join; other part fields need the application-level join")
	var p struct {
		Parts []partRef `bson:"parts"`
	}
	if k.OK(products.FindOne(ctx, bson.M{"catalog_number": 1234}).Decode(&p), "find product") {
		k.Check(len(p.Parts) == 3 && p.Parts[0].Name == "#4 grommet", "the product shows its 3 part names (got %v)", p.Parts)
		ids := make([]bson.ObjectID, len(p.Parts))
		for i, r := range p.Parts {
			ids[i] = r.ID
		}
		n, err := parts.CountDocuments(ctx, bson.M{"_id": bson.M{"$in": ids}, "qty": bson.M{"$gt": 20}})
		k.Check(err == nil && n == 2, "joined: 2 of its parts have more than 20 in stock (got %d, %v)", n, err)
	}
	k.UsesIndex(ctx, products, bson.M{"catalog_number": 1234}, nil, "catalog_number_1")

	k.Step("renaming a part rewrites its name in every product that lists it")
	_, err = parts.UpdateOne(ctx, bson.M{"_id": grommet}, bson.M{"$set": bson.M{"name": "#4 rubber grommet"}})
	k.OK(err, "rename part")
	res, err := products.UpdateMany(ctx, bson.M{"parts.id": grommet}, bson.M{"$set": bson.M{"parts.$.name": "#4 rubber grommet"}})
	if k.OK(err, "rename the copies") {
		k.Check(res.ModifiedCount == 2, "2 products rewritten for one part rename (got %d)", res.ModifiedCount)
	}
	n, err := products.CountDocuments(ctx, bson.M{"parts.name": "#4 grommet"})
	k.Check(err == nil && n == 0, "no stale copy of the old name is left (got %d)", n)
	k.UsesIndex(ctx, products, bson.M{"parts.id": grommet}, nil, "parts.id_1")

	k.Step("renaming the product rewrites every one of its parts (one->many)")
	_, err = products.UpdateOne(ctx, bson.M{"catalog_number": 1234}, bson.M{"$set": bson.M{"name": "smoke shifter, left"}})
	k.OK(err, "rename product")
	res, err = parts.UpdateMany(ctx, bson.M{"product_catalog_number": 1234}, bson.M{"$set": bson.M{"product_name": "smoke shifter, left"}})
	if k.OK(err, "rename the copies") {
		k.Check(res.ModifiedCount == 3, "3 parts rewritten for one product rename (got %d)", res.ModifiedCount)
	}
	k.UsesIndex(ctx, parts, bson.M{"product_catalog_number": 1234}, nil, "product_catalog_number_1")
}

// logMessages copies the host address into each log message so that the
// latest messages of an address are one query.
func logMessages(ctx context.Context, k *cookbook.Kitchen) {
	logs := k.DB.Collection("logmsg")
	k.Step("log messages carry a copy of their host's address")
	_, err := logs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "ipaddr", Value: 1}, {Key: "time", Value: -1}}})
	k.OK(err, "createIndex {ipaddr: 1, time: -1}")
	start := time.Date(2014, 3, 28, 9, 42, 0, 0, time.UTC)
	var msgs []any
	for i := range 20 {
		ip := "127.66.66.66"
		if i%2 == 1 {
			ip = "127.0.0.2"
		}
		msgs = append(msgs, bson.M{"time": start.Add(time.Duration(i) * time.Second), "message": "cpu is on fire!", "ipaddr": ip, "hostname": "goofy.example.com"})
	}
	_, err = logs.InsertMany(ctx, msgs)
	k.OK(err, "insert log messages")
	filter, sort := bson.M{"ipaddr": "127.66.66.66"}, bson.D{{Key: "time", Value: -1}}
	var last []struct {
		Time time.Time `bson:"time"`
	}
	cur, err := logs.Find(ctx, filter, options.Find().SetSort(sort).SetLimit(5))
	if k.OK(err, "find latest messages") && k.OK(cur.All(ctx, &last), "read latest messages") {
		k.Check(len(last) == 5 && last[0].Time.Equal(start.Add(18*time.Second)), "the 5 latest messages of the address, newest first (got %d)", len(last))
	}
	k.UsesIndex(ctx, logs, filter, sort, "ipaddr_1_time_-1")
}
