package main

import (
	"context"
	"regexp"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

// post is a forum post; Path holds the ids of its ancestors, root first,
// joined by ':' (empty for a root post).
type post struct {
	ID       bson.ObjectID `bson:"_id"`
	Depth    int           `bson:"depth"`
	Path     *string       `bson:"path"`
	Created  time.Time     `bson:"created"`
	Username string        `bson:"username"`
	Body     string        `bson:"body"`
	ThreadID bson.ObjectID `bson:"thread_id"`
}

// reply makes a post answering parent.
func reply(parent post, minute int, user, body string) post {
	path := parent.ID.Hex()
	if parent.Path != nil {
		path = *parent.Path + ":" + path
	}
	return post{ID: bson.NewObjectID(), Depth: parent.Depth + 1, Path: &path, Username: user, Body: body,
		ThreadID: parent.ThreadID, Created: time.Date(2011, 2, 26, 17, minute, 0, 0, time.UTC)}
}

func materializedPath(ctx context.Context, k *cookbook.Kitchen) {
	posts := k.DB.Collection("forum")
	thread := bson.NewObjectID()
	root := post{ID: bson.NewObjectID(), Username: "plotinus", Body: "Who was Alexander the Great's teacher?",
		ThreadID: thread, Created: time.Date(2011, 2, 26, 17, 18, 0, 0, time.UTC)}
	socrates := reply(root, 21, "asophist", "It was definitely Socrates.")
	aristotle := reply(socrates, 22, "daletheia", "Oh you sophist...It was actually Aristotle!")
	other := reply(root, 25, "seuclid", "Ask the Macedonians.")
	all := []post{root, socrates, aristotle, other}

	k.Step("materialized path: each post stores the ids of its ancestors in path")
	for _, keys := range []bson.D{{{Key: "thread_id", Value: 1}}, {{Key: "path", Value: 1}}} {
		_, err := posts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys})
		k.OK(err, "createIndex")
	}
	docs := make([]any, len(all))
	for i, p := range all {
		docs[i] = p
	}
	_, err := posts.InsertMany(ctx, docs)
	k.OK(err, "insert posts")

	k.Step("a whole thread is one query on thread_id, shown in threaded order")
	var got []post
	filter := bson.M{"thread_id": thread}
	cur, err := posts.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "created", Value: 1}}))
	if k.OK(err, "find thread") && k.OK(cur.All(ctx, &got), "read thread") {
		order := threaded(got, 0)
		for _, p := range order {
			k.Say("%s%s (%s)", strings.Repeat("  ", p.Depth), p.Body, p.Username)
		}
		k.Check(bodies(order) == bodies([]post{root, socrates, aristotle, other}),
			"threaded order is root, Socrates, Aristotle, Macedonians")
	}
	k.UsesIndex(ctx, posts, filter, nil, "thread_id_1")

	k.Step("a subtree is one prefix regex on path")
	prefix := bson.Regex{Pattern: "^" + regexp.QuoteMeta(root.ID.Hex())}
	got = nil
	cur, err = posts.Find(ctx, bson.M{"path": prefix}, options.Find().SetSort(bson.D{{Key: "created", Value: 1}}))
	if k.OK(err, "find subtree") && k.OK(cur.All(ctx, &got), "read subtree") {
		k.Check(len(got) == 3, "the root has 3 descendants (got %d)", len(got))
	}
	prefix = bson.Regex{Pattern: "^" + regexp.QuoteMeta(*socrates.Path+":"+socrates.ID.Hex())}
	got = nil
	cur, err = posts.Find(ctx, bson.M{"path": prefix})
	if k.OK(err, "find sub-subtree") && k.OK(cur.All(ctx, &got), "read sub-subtree") {
		k.Check(len(got) == 1 && got[0].Username == "daletheia", "the Socrates answer has 1 descendant (got %d)", len(got))
	}
	k.UsesIndex(ctx, posts, bson.M{"path": prefix}, nil, "path_1")
}

// threaded orders posts depth first: every post is followed by its replies,
// which keep the order of list (posts shallower than depth are dropped).
func threaded(list []post, depth int) []post {
	children := map[string][]post{}
	var roots []post
	for _, p := range list {
		switch {
		case p.Depth == depth:
			roots = append(roots, p)
		case p.Path != nil:
			parent := (*p.Path)[strings.LastIndex(*p.Path, ":")+1:]
			children[parent] = append(children[parent], p)
		}
	}
	return assemble(roots, children)
}

// assemble lists each post followed by its descendants.
func assemble(posts []post, children map[string][]post) []post {
	var out []post
	for _, p := range posts {
		out = append(out, p)
		out = append(out, assemble(children[p.ID.Hex()], children)...)
	}
	return out
}

// bodies joins the bodies of posts, to compare orders.
func bodies(posts []post) string {
	var b []string
	for _, p := range posts {
		b = append(b, p.Body)
	}
	return strings.Join(b, " | ")
}
