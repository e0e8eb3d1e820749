// Command embedding shows the first rule of schema design from the seeds:
// embed a child that only ever appears inside its parent (the steps of a
// how-to guide), reference a child that is also shown on its own (blog
// comments, linked to their post by post_id and found through an index).
package main

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("embedding", run) }

// step is one embedded step of a how-to guide.
type step struct {
	Desc      string   `bson:"desc"`
	Materials []string `bson:"materials,omitempty"`
}

// comment is a blog comment that references its post.
type comment struct {
	PostID   bson.ObjectID `bson:"post_id"`
	Posted   time.Time     `bson:"posted"`
	Username string        `bson:"username"`
	Text     string        `bson:"text"`
}

func run(ctx context.Context, k *cookbook.Kitchen) {
	embedSteps(ctx, k)
	referenceComments(ctx, k)
}

// embedSteps stores a guide with its steps inline: one read returns it all.
func embedSteps(ctx context.Context, k *cookbook.Kitchen) {
	guides := k.DB.Collection("guides")
	k.Step("embed: a how-to guide carries its steps as an array of subdocuments")
	_, err := guides.InsertOne(ctx, bson.M{
		"title": "How to soft-boil an egg",
		"steps": []step{
			{Desc: "Bring a pot of water to boil.", Materials: []string{"water", "eggs"}},
			{Desc: "Gently add the eggs and cook for four minutes.", Materials: []string{"egg timer"}},
			{Desc: "Cool the eggs under running water."},
		},
	})
	k.OK(err, "insert guide")
	var guide struct {
		Steps []step `bson:"steps"`
	}
	err = guides.FindOne(ctx, bson.M{"title": "How to soft-boil an egg"}).Decode(&guide)
	if k.OK(err, "find guide") {
		k.Check(len(guide.Steps) == 3, "one read returns all 3 steps (got %d)", len(guide.Steps))
	}
	n, err := guides.CountDocuments(ctx, bson.M{"steps.materials": "egg timer"})
	if k.OK(err, "count by steps.materials") {
		k.Check(n == 1, "a query reaches into the embedded steps: steps.materials = 'egg timer' matches the guide (got %d)", n)
	}
}

// referenceComments keeps comments in their own collection so they can be
// listed across posts; the post_id index serves the per-post query.
func referenceComments(ctx context.Context, k *cookbook.Kitchen) {
	posts, comments := k.DB.Collection("posts"), k.DB.Collection("comments")
	k.Step("reference: comments live in their own collection, linked by post_id")
	_, err := comments.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "post_id", Value: 1}}})
	k.OK(err, "createIndex {post_id: 1}")
	herbs, tomatoes := bson.NewObjectID(), bson.NewObjectID()
	_, err = posts.InsertMany(ctx, []any{
		bson.M{"_id": herbs, "title": "Cultivating herbs", "text": "Herbs require occasional watering..."},
		bson.M{"_id": tomatoes, "title": "Staking tomatoes", "text": "Tie them loosely..."},
	})
	k.OK(err, "insert posts")
	var all []any
	for i, c := range []struct {
		post       bson.ObjectID
		user, text string
	}{
		{herbs, "zjones", "Indeed, basil is a hearty herb!"},
		{tomatoes, "kbanker", "Bamboo works well."},
		{herbs, "asophist", "Mint takes over the garden."},
	} {
		posted := time.Date(2011, 2, 26, 17, i, 0, 0, time.UTC)
		all = append(all, comment{PostID: c.post, Posted: posted, Username: c.user, Text: c.text})
	}
	_, err = comments.InsertMany(ctx, all)
	k.OK(err, "insert comments")

	var post struct {
		Title string `bson:"title"`
	}
	k.OK(posts.FindOne(ctx, bson.M{"_id": herbs}).Decode(&post), "find post")
	var list []comment
	cur, err := comments.Find(ctx, bson.M{"post_id": herbs}, options.Find().SetSort(bson.D{{Key: "posted", Value: 1}}))
	if k.OK(err, "find comments of the post") && k.OK(cur.All(ctx, &list), "read comments") {
		k.Check(post.Title == "Cultivating herbs" && len(list) == 2 && list[0].Username == "zjones",
			"two queries show a post and its 2 comments (got %q with %d comments)", post.Title, len(list))
	}
	k.UsesIndex(ctx, comments, bson.M{"post_id": herbs}, nil, "post_id_1")

	k.Step("reference: the latest comments across all posts, which embedding cannot give")
	cur, err = comments.Find(ctx, bson.M{}, options.Find().SetSort(bson.D{{Key: "posted", Value: -1}}).SetLimit(2))
	list = nil
	if k.OK(err, "find latest comments") && k.OK(cur.All(ctx, &list), "read latest comments") {
		k.Check(len(list) == 2 && list[0].Username == "asophist" && list[1].Username == "kbanker",
			"newest first across posts: asophist, kbanker (got %v)", usernames(list))
	}
}

// usernames lists who wrote comments, in order.
func usernames(list []comment) []string {
	var names []string
	for _, c := range list {
		names = append(names, c.Username)
	}
	return names
}
