package embedded_test

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/embedded"
)

// A test starts a database in memory, uses it through the official
// driver, and closes it.
func Example() {
	ctx := context.Background()
	srv, err := embedded.Start(ctx, embedded.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)
	coll := client.Database("app").Collection("users")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "ann"}}); err != nil {
		panic(err)
	}
	var user struct{ Name string }
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&user); err != nil {
		panic(err)
	}
	fmt.Println(user.Name)
	// Output: ann
}
