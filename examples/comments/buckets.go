package main

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

// bucketSize is when a bucket is considered full; the seed uses about 100,
// the example a few so that it spans several buckets.
const bucketSize = 3

// bucketed is the hybrid store: discussions count their buckets,
// comment_buckets hold the comments.
type bucketed struct {
	k                    *cookbook.Kitchen
	discussions, buckets *mongo.Collection
}

// add appends a comment to the discussion's last bucket, creating it if
// needed, and opens a new bucket once that one is over bucketSize.
func (s bucketed) add(ctx context.Context, discussionID int, slug, text string) {
	var d struct {
		NumBuckets int `bson:"num_buckets"`
	}
	if !s.k.OK(s.discussions.FindOne(ctx, bson.M{"_id": discussionID}).Decode(&d), "find discussion") {
		return
	}
	var b struct {
		ID    bson.ObjectID `bson:"_id"`
		Count int           `bson:"count"`
	}
	err := s.buckets.FindOneAndUpdate(ctx,
		bson.M{"discussion_id": discussionID, "bucket": d.NumBuckets},
		bson.M{"$inc": bson.M{"count": 1}, "$push": bson.M{"comments": bson.M{"slug": slug, "text": text}}},
		options.FindOneAndUpdate().SetProjection(bson.M{"count": 1}).SetUpsert(true).SetReturnDocument(options.After),
	).Decode(&b)
	if !s.k.OK(err, "findAndModify upsert into bucket") {
		return
	}
	if b.Count > bucketSize {
		// The last known bucket number in the filter keeps two writers
		// from both opening a new bucket.
		_, err := s.discussions.UpdateOne(ctx, bson.M{"_id": discussionID, "num_buckets": d.NumBuckets},
			bson.M{"$inc": bson.M{"num_buckets": 1}})
		s.k.OK(err, "open a new bucket")
	}
}

// page returns limit comments after skip, walking the buckets in order and
// slicing each.
func (s bucketed) page(ctx context.Context, discussionID, skip, limit int) []string {
	var out []string
	var list []struct {
		Bucket int `bson:"bucket"`
	}
	cur, err := s.buckets.Find(ctx, bson.M{"discussion_id": discussionID},
		options.Find().SetProjection(bson.M{"bucket": 1}).SetSort(bson.D{{Key: "bucket", Value: 1}}))
	if !s.k.OK(err, "find buckets") || !s.k.OK(cur.All(ctx, &list), "read buckets") {
		return nil
	}
	for _, b := range list {
		var p struct {
			Count    int `bson:"count"`
			Comments []struct {
				Text string `bson:"text"`
			} `bson:"comments"`
		}
		err := s.buckets.FindOne(ctx, bson.M{"discussion_id": discussionID, "bucket": b.Bucket},
			options.FindOne().SetProjection(bson.M{"count": 1, "comments": bson.M{"$slice": bson.A{skip, limit}}})).Decode(&p)
		if !s.k.OK(err, "find a bucket's slice") {
			return out
		}
		for _, c := range p.Comments {
			out = append(out, c.Text)
		}
		skip = max(0, skip-p.Count)
		limit -= len(p.Comments)
		if limit == 0 {
			break
		}
	}
	return out
}

func buckets(ctx context.Context, k *cookbook.Kitchen) {
	s := bucketed{k: k, discussions: k.DB.Collection("bucket_discussions"), buckets: k.DB.Collection("comment_buckets")}
	k.Step("hybrid: comments in buckets of about %d, appended by findAndModify upsert", bucketSize)
	_, err := s.buckets.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "discussion_id", Value: 1}, {Key: "bucket", Value: 1}}},
		{Keys: bson.D{{Key: "discussion_id", Value: 1}, {Key: "comments.slug", Value: 1}}},
	})
	k.OK(err, "create bucket indexes")
	_, err = s.discussions.InsertOne(ctx, bson.M{"_id": 1, "num_buckets": 1})
	k.OK(err, "insert discussion")
	for i := range 10 {
		s.add(ctx, 1, slugPart(i), fmt.Sprintf("c%d", i))
	}
	var counts []struct {
		Count int `bson:"count"`
	}
	cur, err := s.buckets.Find(ctx, bson.M{"discussion_id": 1}, options.Find().SetSort(bson.D{{Key: "bucket", Value: 1}}))
	if k.OK(err, "find buckets") && k.OK(cur.All(ctx, &counts), "read buckets") {
		k.Check(fmt.Sprint(counts) == "[{4} {4} {2}]", "a bucket takes one comment past %d before the next opens: counts 4, 4, 2 (got %v)", bucketSize, counts)
	}
	k.UsesIndex(ctx, s.buckets, bson.M{"discussion_id": 1, "bucket": 2}, nil, "discussion_id_1_bucket_1")

	k.Step("pages span buckets: $slice each bucket, carry skip and limit over")
	got := s.page(ctx, 1, 3, 4)
	k.Check(fmt.Sprint(got) == "[c3 c4 c5 c6]", "skip 3 limit 4 is c3..c6, across buckets 1 and 2 (got %v)", got)
	got = s.page(ctx, 1, 8, 5)
	k.Check(fmt.Sprint(got) == "[c8 c9]", "skip 8 limit 5 is the last 2 comments (got %v)", got)

	k.Step("one comment by slug: find its bucket through the comments.slug index")
	bySlug := bson.M{"discussion_id": 1, "comments.slug": slugPart(5)}
	var b struct {
		Comments []struct {
			Slug string `bson:"slug"`
			Text string `bson:"text"`
		} `bson:"comments"`
	}
	if k.OK(s.buckets.FindOne(ctx, bySlug, options.FindOne().SetProjection(bson.M{"comments": 1})).Decode(&b), "find bucket by slug") {
		text := ""
		for _, c := range b.Comments {
			if c.Slug == slugPart(5) {
				text = c.Text
			}
		}
		k.Check(text == "c5", "slug %s is c5 (got %q)", slugPart(5), text)
	}
	k.UsesIndex(ctx, s.buckets, bySlug, nil, "discussion_id_1_comments.slug_1")
}
