package main

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

// shardKeys shards the collections on the keys the seed recommends: one
// comment per document by discussion and full_slug (a router sends a
// thread's reads to one shard), buckets by discussion and bucket number. As
// on a router, shardCollection runs on admin and names the full namespace.
func shardKeys(ctx context.Context, k *cookbook.Kitchen) {
	k.Step("shard keys: comments by {discussion_id, full_slug}, buckets by {discussion_id, bucket}")
	admin := k.Client.Database("admin")
	for _, c := range []struct {
		coll string
		key  bson.D
	}{
		{"comments", bson.D{{Key: "discussion_id", Value: 1}, {Key: "full_slug", Value: 1}}},
		{"comment_buckets", bson.D{{Key: "discussion_id", Value: 1}, {Key: "bucket", Value: 1}}},
	} {
		ns := k.DB.Name() + "." + c.coll
		var reply struct {
			Sharded string `bson:"collectionsharded"`
		}
		if k.OK(admin.RunCommand(ctx, bson.D{{Key: "shardCollection", Value: ns}, {Key: "key", Value: c.key}}).Decode(&reply), "shardCollection "+c.coll) {
			k.Check(reply.Sharded == ns, "shardCollection answers collectionsharded: %s (got %q)", ns, reply.Sharded)
		}
		var stats struct {
			Sharded bool `bson:"sharded"`
		}
		if k.OK(k.DB.RunCommand(ctx, bson.D{{Key: "collStats", Value: c.coll}}).Decode(&stats), "collStats "+c.coll) {
			k.Check(stats.Sharded, "collStats says %s is sharded", c.coll)
		}
	}
}
