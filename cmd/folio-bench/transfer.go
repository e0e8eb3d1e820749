package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Two-phase-commit transfers, as the seed application makes them (MongoDB's
// classic "perform two phase commits" pattern): accounts carry a list of
// pending transactions, and a transaction document moves through the
// states initial → pending → committed → done.
const (
	accounts       = 1000
	initialBalance = 1000
)

// transfer moves money between random accounts with two-phase commits.
type transfer struct {
	cfg      *Config
	accounts *mongo.Collection
	txns     *mongo.Collection
}

func newTransfer(cfg *Config) Workload { return &transfer{cfg: cfg} }

// Setup creates the accounts.
func (x *transfer) Setup(ctx context.Context, t *Target) error {
	x.accounts = t.DB.Collection("accounts")
	x.txns = t.DB.Collection("transactions")
	docs := make([]any, accounts)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "balance", Value: int64(initialBalance)}, {Key: "pendingTransactions", Value: bson.A{}}}
	}
	_, err := x.accounts.InsertMany(ctx, docs)
	return err
}

// Worker makes one whole transfer per operation: eight writes.
func (x *transfer) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(x.cfg.Seed, uint64(i)+1))
	return func(ctx context.Context) (Result, error) {
		src := r.IntN(accounts)
		dst := (src + 1 + r.IntN(accounts-1)) % accounts
		return Result{"transfer", 1}, x.move(ctx, src, dst, int64(1+r.IntN(100)))
	}
}

// move transfers value from src to dst.
func (x *transfer) move(ctx context.Context, src, dst int, value int64) error {
	id := bson.NewObjectID()
	if _, err := x.txns.InsertOne(ctx, bson.D{
		{Key: "_id", Value: id}, {Key: "source", Value: src}, {Key: "destination", Value: dst},
		{Key: "value", Value: value}, {Key: "state", Value: "initial"}, {Key: "lastModified", Value: time.Now()},
	}); err != nil {
		return err
	}
	if err := x.setState(ctx, id, "initial", "pending"); err != nil {
		return err
	}
	for _, leg := range []struct {
		account int
		delta   int64
	}{{src, -value}, {dst, value}} {
		if err := updateOne(ctx, x.accounts,
			bson.D{{Key: "_id", Value: leg.account}, {Key: "pendingTransactions", Value: bson.D{{Key: "$ne", Value: id}}}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: leg.delta}}}, {Key: "$push", Value: bson.D{{Key: "pendingTransactions", Value: id}}}}); err != nil {
			return err
		}
	}
	if err := x.setState(ctx, id, "pending", "committed"); err != nil {
		return err
	}
	for _, account := range []int{src, dst} {
		if err := updateOne(ctx, x.accounts,
			bson.D{{Key: "_id", Value: account}, {Key: "pendingTransactions", Value: id}},
			bson.D{{Key: "$pull", Value: bson.D{{Key: "pendingTransactions", Value: id}}}}); err != nil {
			return err
		}
	}
	return x.setState(ctx, id, "committed", "done")
}

// setState moves transaction id from state from to state to.
func (x *transfer) setState(ctx context.Context, id bson.ObjectID, from, to string) error {
	return updateOne(ctx, x.txns, bson.D{{Key: "_id", Value: id}, {Key: "state", Value: from}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: to}}}, {Key: "$currentDate", Value: bson.D{{Key: "lastModified", Value: true}}}})
}

// updateOne updates one document and fails unless exactly one matched.
func updateOne(ctx context.Context, coll *mongo.Collection, filter, update bson.D) error {
	res, err := coll.UpdateOne(ctx, filter, update)
	if err != nil {
		return err
	}
	if res.MatchedCount != 1 || res.ModifiedCount != 1 {
		return fmt.Errorf("%s %v: matched %d, modified %d, want 1", coll.Name(), filter, res.MatchedCount, res.ModifiedCount)
	}
	return nil
}

// Finish checks that money was neither made nor lost, that no account has
// a pending transaction left and that every transaction is done.
func (x *transfer) Finish(ctx context.Context) ([]string, error) {
	total, docs, err := sumField(ctx, x.accounts, "balance")
	if err != nil {
		return nil, err
	}
	pending, err := x.accounts.CountDocuments(ctx, bson.D{{Key: "pendingTransactions.0", Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil {
		return nil, err
	}
	all, err := x.txns.CountDocuments(ctx, bson.D{})
	if err != nil {
		return nil, err
	}
	done, err := x.txns.CountDocuments(ctx, bson.D{{Key: "state", Value: "done"}})
	if err != nil {
		return nil, err
	}
	notes := []string{fmt.Sprintf("transactions %d, done %d; accounts with pending transactions %d; total balance %d over %d accounts", all, done, pending, total, docs)}
	var errs []error
	if want := int64(accounts * initialBalance); total != want {
		errs = append(errs, fmt.Errorf("total balance %d, want %d", total, want))
	}
	if pending != 0 || done != all {
		errs = append(errs, fmt.Errorf("%d accounts with pending transactions, %d of %d transactions done", pending, done, all))
	}
	return notes, errors.Join(errs...)
}
