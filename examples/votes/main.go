// Command votes shows recording helpful votes on a review with one targeted
// update: the filter's $ne on voter_ids guards against a second vote by the
// same user, $push and $inc record the vote atomically. A replacement
// update, by contrast, loses votes cast between its read and its write.
package main

import (
	"context"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("votes", run) }

// review is the part of a review document that votes touch.
type review struct {
	ID           bson.ObjectID   `bson:"_id"`
	Text         string          `bson:"text"`
	HelpfulVotes int             `bson:"helpful_votes"`
	VoterIDs     []bson.ObjectID `bson:"voter_ids"`
}

// vote records voter's vote once; it reports whether the vote counted.
func vote(ctx context.Context, k *cookbook.Kitchen, reviews *mongo.Collection, id, voter bson.ObjectID) bool {
	res, err := reviews.UpdateOne(ctx,
		bson.M{"_id": id, "voter_ids": bson.M{"$ne": voter}},
		bson.M{"$push": bson.M{"voter_ids": voter}, "$inc": bson.M{"helpful_votes": 1}})
	return k.OK(err, "vote") && res.ModifiedCount == 1
}

// read returns the review.
func read(ctx context.Context, k *cookbook.Kitchen, reviews *mongo.Collection, id bson.ObjectID) review {
	var r review
	k.OK(reviews.FindOne(ctx, bson.M{"_id": id}).Decode(&r), "find review")
	return r
}

func run(ctx context.Context, k *cookbook.Kitchen) {
	reviews := k.DB.Collection("reviews")
	id := bson.NewObjectID()
	_, err := reviews.InsertOne(ctx, review{ID: id, Text: "Sturdy barrow.", VoterIDs: []bson.ObjectID{}})
	k.OK(err, "insert review")

	k.Step("a vote is one update guarded by $ne")
	alice, bob := bson.NewObjectID(), bson.NewObjectID()
	k.Check(vote(ctx, k, reviews, id, alice), "alice's vote counts")
	k.Check(!vote(ctx, k, reviews, id, alice), "alice's second vote matches nothing")
	k.Check(vote(ctx, k, reviews, id, bob), "bob's vote counts")
	r := read(ctx, k, reviews, id)
	k.Check(r.HelpfulVotes == 2 && len(r.VoterIDs) == 2, "2 votes, 2 voters (got %d, %d)", r.HelpfulVotes, len(r.VoterIDs))

	k.Step("20 concurrent attempts by carol and 20 by 20 distinct users")
	carol := bson.NewObjectID()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		counted int
	)
	for range 20 {
		wg.Go(func() {
			if vote(ctx, k, reviews, id, carol) {
				mu.Lock()
				counted++
				mu.Unlock()
			}
		})
		wg.Go(func() { vote(ctx, k, reviews, id, bson.NewObjectID()) })
	}
	wg.Wait()
	k.Check(counted == 1, "exactly one of carol's attempts counts (got %d)", counted)
	r = read(ctx, k, reviews, id)
	k.Check(r.HelpfulVotes == 23 && len(r.VoterIDs) == 23, "23 votes and 23 voters, consistent (got %d, %d)", r.HelpfulVotes, len(r.VoterIDs))

	k.Step("a replacement update loses the vote cast between its read and its write")
	edited := read(ctx, k, reviews, id)
	k.Check(vote(ctx, k, reviews, id, bson.NewObjectID()), "a vote lands meanwhile")
	edited.Text = "Sturdy barrow, edited."
	_, err = reviews.ReplaceOne(ctx, bson.M{"_id": id}, edited)
	k.OK(err, "replace review")
	r = read(ctx, k, reviews, id)
	k.Check(r.HelpfulVotes == 23, "the replacement wrote back 23 votes: the 24th is lost (got %d)", r.HelpfulVotes)
}
