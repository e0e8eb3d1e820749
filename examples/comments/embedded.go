package main

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

// reply is an embedded comment with its own nested replies.
type reply struct {
	Text    string  `bson:"text"`
	Replies []reply `bson:"replies,omitempty"`
}

// walk lists the texts of a reply tree depth first, as the page shows them.
func walk(replies []reply) []string {
	var out []string
	for _, r := range replies {
		out = append(out, r.Text)
		out = append(out, walk(r.Replies)...)
	}
	return out
}

func embedded(ctx context.Context, k *cookbook.Kitchen) {
	discussions := k.DB.Collection("discussion")
	k.Step("all comments embedded in the discussion document, in time order")
	_, err := discussions.InsertMany(ctx, []any{
		bson.M{"discussion_id": 1, "title": "flat", "comments": bson.A{}},
		bson.M{"discussion_id": 2, "title": "threaded", "replies": bson.A{}},
	})
	k.OK(err, "insert discussions")
	for i := range 7 {
		_, err := discussions.UpdateOne(ctx, bson.M{"discussion_id": 1}, bson.M{"$push": bson.M{"comments": bson.M{
			"posted": posted(i), "author": author{ID: i, Name: "Rick"}, "text": fmt.Sprintf("c%d", i)}}})
		k.OK(err, "push comment")
	}
	var d struct {
		Comments []reply `bson:"comments"`
	}
	page := func(skip, limit int) []string {
		d.Comments = nil
		err := discussions.FindOne(ctx, bson.M{"discussion_id": 1}, options.FindOne().SetProjection(
			bson.M{"title": 1, "comments": bson.M{"$slice": bson.A{skip, limit}}})).Decode(&d)
		k.OK(err, "find a page with $slice")
		return walk(d.Comments)
	}
	got := page(3, 3)
	k.Check(fmt.Sprint(got) == "[c3 c4 c5]", "$slice [3, 3] is page 2 of size 3: c3 c4 c5 (got %v)", got)
	got = page(6, 3)
	k.Check(fmt.Sprint(got) == "[c6]", "$slice [6, 3] is the short last page: c6 (got %v)", got)
	got = page(4, 1)
	k.Check(fmt.Sprint(got) == "[c4]", "$slice [position, 1] is one comment by position: c4 (got %v)", got)

	k.Step("threaded: a reply is $pushed to the replies array at its parent's path")
	push := func(path, text string) {
		_, err := discussions.UpdateOne(ctx, bson.M{"discussion_id": 2}, bson.M{"$push": bson.M{path: bson.M{"text": text, "replies": bson.A{}}}})
		k.OK(err, "push to "+path)
	}
	push("replies", "A")
	push("replies", "B")
	push("replies.0.replies", "A.1")
	push("replies.0.replies", "A.2")
	push("replies.0.replies.1.replies", "A.2.a")
	push("replies.1.replies", "B.1")
	var t struct {
		Replies []reply `bson:"replies"`
	}
	if k.OK(discussions.FindOne(ctx, bson.M{"discussion_id": 2}).Decode(&t), "find threaded discussion") {
		got := walk(t.Replies)
		k.Check(fmt.Sprint(got) == "[A A.1 A.2 A.2.a B B.1]", "depth-first walk: A A.1 A.2 A.2.a B B.1 (got %v)", got)
		k.Check(len(t.Replies) == 2 && len(t.Replies[0].Replies) == 2 && t.Replies[0].Replies[1].Replies[0].Text == "A.2.a",
			"A.2.a is nested at replies.0.replies.1.replies.0")
	}
}
