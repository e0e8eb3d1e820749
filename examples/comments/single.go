package main

import (
	"context"
	"fmt"
	"regexp"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

// comment is one comment document; Slug is the path of slugs from the root,
// FullSlug the same path with each part prefixed by its time.
type comment struct {
	DiscussionID int    `bson:"discussion_id"`
	Slug         string `bson:"slug"`
	FullSlug     string `bson:"full_slug"`
	Text         string `bson:"text"`
}

// addComment inserts the i-th comment, as a reply to parentSlug when it is
// not empty, and returns its slug.
func addComment(ctx context.Context, k *cookbook.Kitchen, comments *mongo.Collection, discussion, i int, parentSlug, text string) string {
	at := posted(i)
	slug, full := slugPart(i), at.Format("2006.01.02.15.04.05")+":"+slugPart(i)
	if parentSlug != "" {
		var parent comment
		err := comments.FindOne(ctx, bson.M{"discussion_id": discussion, "slug": parentSlug}).Decode(&parent)
		if !k.OK(err, "find parent "+parentSlug) {
			return ""
		}
		slug, full = parent.Slug+"/"+slug, parent.FullSlug+"/"+full
	}
	_, err := comments.InsertOne(ctx, bson.M{"discussion_id": discussion, "slug": slug, "full_slug": full,
		"posted": at, "author": author{ID: i % 3, Name: "Rick"}, "text": text})
	k.OK(err, "insert comment")
	return slug
}

// texts returns the text of each comment in the order found.
func texts(ctx context.Context, k *cookbook.Kitchen, comments *mongo.Collection, filter any, opts *options.FindOptionsBuilder) []string {
	var got []comment
	cur, err := comments.Find(ctx, filter, opts)
	if !k.OK(err, "find comments") || !k.OK(cur.All(ctx, &got), "read comments") {
		return nil
	}
	out := make([]string, len(got))
	for i, c := range got {
		out[i] = c.Text
	}
	return out
}

func onePerDocument(ctx context.Context, k *cookbook.Kitchen) {
	comments := k.DB.Collection("comments")
	k.Step("one document per comment, threaded by slug and full_slug")
	_, err := comments.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "discussion_id", Value: 1}, {Key: "posted", Value: 1}}},
		{Keys: bson.D{{Key: "discussion_id", Value: 1}, {Key: "full_slug", Value: 1}}},
		{Keys: bson.D{{Key: "discussion_id", Value: 1}, {Key: "slug", Value: 1}}},
	})
	k.OK(err, "create the three compound indexes")
	a := addComment(ctx, k, comments, 1, 0, "", "A")
	b := addComment(ctx, k, comments, 1, 1, "", "B")
	a1 := addComment(ctx, k, comments, 1, 2, a, "A.1")
	addComment(ctx, k, comments, 1, 3, b, "B.1")
	addComment(ctx, k, comments, 1, 4, a1, "A.1.a")
	addComment(ctx, k, comments, 1, 5, a, "A.2")
	addComment(ctx, k, comments, 2, 6, "", "other discussion")

	k.Step("pages in time order: sort posted, skip, limit")
	inDiscussion := bson.M{"discussion_id": 1}
	byTime := bson.D{{Key: "posted", Value: 1}}
	page := texts(ctx, k, comments, inDiscussion, options.Find().SetSort(byTime).SetSkip(2).SetLimit(2))
	k.Check(fmt.Sprint(page) == "[A.1 B.1]", "page 2 of size 2 in time order is A.1, B.1 (got %v)", page)
	k.UsesIndex(ctx, comments, inDiscussion, byTime, "discussion_id_1_posted_1")

	k.Step("pages in thread order: sort full_slug")
	byThread := bson.D{{Key: "full_slug", Value: 1}}
	page = texts(ctx, k, comments, inDiscussion, options.Find().SetSort(byThread))
	k.Check(fmt.Sprint(page) == "[A A.1 A.1.a A.2 B B.1]", "thread order is A, A.1, A.1.a, A.2, B, B.1 (got %v)", page)
	k.UsesIndex(ctx, comments, inDiscussion, byThread, "discussion_id_1_full_slug_1")

	k.Step("one comment by slug, a subthread by escaped prefix regex on full_slug")
	bySlug := bson.M{"discussion_id": 1, "slug": a1}
	var c comment
	if k.OK(comments.FindOne(ctx, bySlug).Decode(&c), "find by slug") {
		k.Check(c.Text == "A.1", "slug %s is A.1 (got %q)", a1, c.Text)
	}
	k.UsesIndex(ctx, comments, bySlug, nil, "discussion_id_1_slug_1")
	// full_slug holds dots: unescaped, they would match any character.
	sub := bson.M{"discussion_id": 1, "full_slug": bson.Regex{Pattern: "^" + regexp.QuoteMeta(c.FullSlug)}}
	page = texts(ctx, k, comments, sub, options.Find().SetSort(byThread))
	k.Check(fmt.Sprint(page) == "[A.1 A.1.a]", "the subthread of A.1 is A.1, A.1.a (got %v)", page)
	k.UsesIndex(ctx, comments, sub, byThread, "discussion_id_1_full_slug_1")
}
