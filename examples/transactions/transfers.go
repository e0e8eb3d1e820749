package main

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

// txn is a transfer in the transactions collection.
type txn struct {
	ID    bson.ObjectID `bson:"_id"`
	State string        `bson:"state"`
	TS    time.Time     `bson:"ts"`
	Amt   int           `bson:"amt"`
	Src   int           `bson:"src"`
	Dst   int           `bson:"dst"`
}

// account holds a balance and the ids of its pending transfers.
type account struct {
	ID      int             `bson:"_id"`
	Balance int             `bson:"balance"`
	Txns    []bson.ObjectID `bson:"txns"`
}

// bank holds the accounts and transactions collections.
type bank struct {
	k                      *cookbook.Kitchen
	accounts, transactions *mongo.Collection
}

// maxTxnTime is how long a transfer may stay in state new.
const maxTxnTime = time.Minute

// prepare records a new transfer and moves the money, each account noting
// the transfer as pending. It fails, leaving nothing behind, if src lacks
// the funds.
func (b bank) prepare(ctx context.Context, amt, src, dst int, ts time.Time) (txn, error) {
	t := txn{ID: bson.NewObjectID(), State: "new", TS: ts, Amt: amt, Src: src, Dst: dst}
	if _, err := b.transactions.InsertOne(ctx, t); err != nil {
		return t, err
	}
	res, err := b.accounts.UpdateOne(ctx, bson.M{"_id": src, "balance": bson.M{"$gte": amt}},
		bson.M{"$inc": bson.M{"balance": -amt}, "$push": bson.M{"txns": t.ID}})
	if err != nil {
		return t, err
	}
	if res.MatchedCount == 0 {
		_, err := b.transactions.DeleteOne(ctx, bson.M{"_id": t.ID})
		return t, fmt.Errorf("insufficient funds in account %d (cleanup: %v)", src, err)
	}
	_, err = b.accounts.UpdateOne(ctx, bson.M{"_id": dst},
		bson.M{"$inc": bson.M{"balance": amt}, "$push": bson.M{"txns": t.ID}})
	return t, err
}

// commit moves a transfer that is new and not expired to commit, then
// retires it. It reports whether the transfer was committed.
func (b bank) commit(ctx context.Context, t txn, now time.Time) bool {
	res, err := b.transactions.UpdateOne(ctx,
		bson.M{"_id": t.ID, "state": "new", "ts": bson.M{"$gt": now.Add(-maxTxnTime)}},
		bson.M{"$set": bson.M{"state": "commit"}})
	if !b.k.OK(err, "commit") || res.ModifiedCount != 1 {
		return false
	}
	b.retire(ctx, t)
	return true
}

// retire forgets a committed transfer. It is idempotent: each step only
// acts if it has not been done.
func (b bank) retire(ctx context.Context, t txn) {
	for _, id := range []int{t.Src, t.Dst} {
		_, err := b.accounts.UpdateOne(ctx, bson.M{"_id": id, "txns": t.ID}, bson.M{"$pull": bson.M{"txns": t.ID}})
		b.k.OK(err, "retire: pull txn")
	}
	_, err := b.transactions.DeleteOne(ctx, bson.M{"_id": t.ID})
	b.k.OK(err, "retire: remove txn")
}

// rollback undoes a transfer on the accounts that still list it as
// pending, which makes it idempotent.
func (b bank) rollback(ctx context.Context, t txn) {
	for _, side := range []struct{ id, amt int }{{t.Src, t.Amt}, {t.Dst, -t.Amt}} {
		_, err := b.accounts.UpdateOne(ctx, bson.M{"_id": side.id, "txns": t.ID},
			bson.M{"$inc": bson.M{"balance": side.amt}, "$pull": bson.M{"txns": t.ID}})
		b.k.OK(err, "rollback account")
	}
	_, err := b.transactions.DeleteOne(ctx, bson.M{"_id": t.ID})
	b.k.OK(err, "rollback: remove txn")
}

// cleanup is the periodic job: it retires transfers left in commit, marks
// expired new transfers for rollback and rolls back those.
func (b bank) cleanup(ctx context.Context, now time.Time) {
	for _, t := range b.find(ctx, bson.M{"state": "commit"}) {
		b.retire(ctx, t)
	}
	_, err := b.transactions.UpdateMany(ctx, bson.M{"state": "new", "ts": bson.M{"$lt": now.Add(-maxTxnTime)}},
		bson.M{"$set": bson.M{"state": "rollback"}})
	b.k.OK(err, "expire transfers")
	for _, t := range b.find(ctx, bson.M{"state": "rollback"}) {
		b.rollback(ctx, t)
	}
}

// find returns the transfers matching filter.
func (b bank) find(ctx context.Context, filter bson.M) []txn {
	var out []txn
	cur, err := b.transactions.Find(ctx, filter)
	if b.k.OK(err, "find transactions") {
		b.k.OK(cur.All(ctx, &out), "read transactions")
	}
	return out
}

// balances returns the balance and pending count of accounts 1 and 2.
func (b bank) balances(ctx context.Context) string {
	var out []account
	cur, err := b.accounts.Find(ctx, bson.M{})
	if !b.k.OK(err, "find accounts") || !b.k.OK(cur.All(ctx, &out), "read accounts") {
		return ""
	}
	s := ""
	for _, a := range out {
		s += fmt.Sprintf("%d:%d/%d ", a.ID, a.Balance, len(a.Txns))
	}
	return s
}

func transfers(ctx context.Context, k *cookbook.Kitchen) {
	b := bank{k: k, accounts: k.DB.Collection("accounts"), transactions: k.DB.Collection("transactions")}
	_, err := b.transactions.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "state", Value: 1}, {Key: "ts", Value: 1}}})
	k.OK(err, "createIndex {state: 1, ts: 1}")
	_, err = b.accounts.InsertMany(ctx, []any{
		account{ID: 1, Balance: 100, Txns: []bson.ObjectID{}},
		account{ID: 2, Balance: 0, Txns: []bson.ObjectID{}},
	})
	k.OK(err, "insert accounts")
	now := time.Now()

	k.Step("two-phase transfer of 55 from account 1 to 2: prepare, commit, retire")
	t, err := b.prepare(ctx, 55, 1, 2, now)
	if k.OK(err, "prepare") {
		k.Check(b.balances(ctx) == "1:45/1 2:55/1 ", "prepared: money moved, both accounts list the transfer (got %s)", b.balances(ctx))
		k.Check(b.commit(ctx, t, now), "the transfer commits")
	}
	k.Check(b.balances(ctx) == "1:45/0 2:55/0 ", "retired: no pending transfer left (got %s)", b.balances(ctx))
	b.retire(ctx, t)
	k.Check(b.balances(ctx) == "1:45/0 2:55/0 ", "retiring again changes nothing (got %s)", b.balances(ctx))

	k.Step("a transfer beyond the balance fails at prepare and leaves no trace")
	_, err = b.prepare(ctx, 500, 1, 2, now)
	k.Check(err != nil, "prepare of 500 fails (err %v)", err)
	n, err := b.transactions.CountDocuments(ctx, bson.M{})
	k.Check(err == nil && n == 0 && b.balances(ctx) == "1:45/0 2:55/0 ", "no transaction, balances unchanged (got %d, %s)", n, b.balances(ctx))

	k.Step("crash after commit: cleanup retires the transfer")
	t, err = b.prepare(ctx, 5, 2, 1, now)
	k.OK(err, "prepare")
	_, err = b.transactions.UpdateOne(ctx, bson.M{"_id": t.ID}, bson.M{"$set": bson.M{"state": "commit"}})
	k.OK(err, "commit without retiring")
	b.cleanup(ctx, now)
	k.Check(b.balances(ctx) == "1:50/0 2:50/0 ", "cleanup finished the committed transfer (got %s)", b.balances(ctx))

	k.Step("crash before commit: the expired transfer is rolled back, idempotently")
	t, err = b.prepare(ctx, 30, 1, 2, now.Add(-2*maxTxnTime))
	k.OK(err, "prepare")
	k.Check(b.balances(ctx) == "1:20/1 2:80/1 ", "prepared (got %s)", b.balances(ctx))
	k.Check(!b.commit(ctx, t, now), "commit refuses the expired transfer")
	k.UsesIndex(ctx, b.transactions, bson.M{"state": "new", "ts": bson.M{"$lt": now.Add(-maxTxnTime)}}, nil, "state_1_ts_1")
	b.cleanup(ctx, now)
	k.Check(b.balances(ctx) == "1:50/0 2:50/0 ", "cleanup rolled it back (got %s)", b.balances(ctx))
	b.rollback(ctx, t)
	k.Check(b.balances(ctx) == "1:50/0 2:50/0 ", "rolling back again changes nothing (got %s)", b.balances(ctx))
	n, err = b.transactions.CountDocuments(ctx, bson.M{})
	k.Check(err == nil && n == 0, "no transaction is left (got %d)", n)
}
