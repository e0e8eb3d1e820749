package driver_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// startReplSet starts a Folio that reports itself as a one-member replica
// set and connects with a plain URI, as an application would: the driver
// discovers the set and allows transactions.
func startReplSet(t *testing.T) *mongo.Client {
	t.Helper()
	in := startInstance(t, replSetConfig())
	client, err := mongo.Connect(clientOptions(in))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	return client
}

// TestTransfersKeepTotal runs seed 002's transfer as real transactions
// from 8 concurrent clients between random accounts: conflicts are retried
// by the driver's withTransaction, and the total balance never changes.
func TestTransfersKeepTotal(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	accounts := client.Database(testDB).Collection("accounts")
	const n, start = 10, 1000
	var docs []any
	for i := 0; i < n; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "balance", Value: start}})
	}
	if _, err := accounts.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			sess, err := client.StartSession()
			if err != nil {
				t.Error(err)
				return
			}
			defer sess.EndSession(ctx)
			for i := 0; i < 25; i++ {
				from, to, amount := rng.IntN(n), rng.IntN(n), rng.IntN(50)
				if from == to {
					continue
				}
				_, err := sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
					if _, err := accounts.UpdateOne(ctx, bson.D{{Key: "_id", Value: from}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: -amount}}}}); err != nil {
						return nil, err
					}
					_, err := accounts.UpdateOne(ctx, bson.D{{Key: "_id", Value: to}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: amount}}}})
					return nil, err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(uint64(w))
	}
	wg.Wait()
	cur, err := accounts.Aggregate(ctx, mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "total", Value: bson.D{{Key: "$sum", Value: "$balance"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []struct {
		Total int `bson:"total"`
	}
	if err := cur.All(ctx, &out); err != nil || len(out) != 1 || out[0].Total != n*start {
		t.Fatalf("total %+v (%v), want %d", out, err, n*start)
	}
}

// TestTransactionIsolation checks that uncommitted writes are invisible
// outside the transaction, visible inside it, gone after an abort, and all
// there after a commit.
func TestTransactionIsolation(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("iso")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "v", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, commit := range []bool{false, true} {
		sess, err := client.StartSession()
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.StartTransaction(); err != nil {
			t.Fatal(err)
		}
		sctx := mongo.NewSessionContext(ctx, sess)
		name := fmt.Sprint("b", commit)
		if _, err := coll.InsertOne(sctx, bson.D{{Key: "_id", Value: name}}); err != nil {
			t.Fatal(err)
		}
		if _, err := coll.UpdateOne(sctx, bson.D{{Key: "_id", Value: "a"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 10}}}}); err != nil {
			t.Fatal(err)
		}
		if n, _ := coll.CountDocuments(sctx, bson.D{{Key: "_id", Value: name}}); n != 1 {
			t.Fatalf("the transaction does not see its own insert")
		}
		if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: name}}); n != 0 {
			t.Fatalf("an uncommitted insert is visible outside")
		}
		var a struct {
			V int `bson:"v"`
		}
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&a); err != nil || a.V != 1 {
			t.Fatalf("outside read of a = %d (%v), want the committed 1", a.V, err)
		}
		if commit {
			err = sess.CommitTransaction(ctx)
		} else {
			err = sess.AbortTransaction(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		sess.EndSession(ctx)
		want := int64(0)
		if commit {
			want = 1
		}
		if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: name}}); n != want {
			t.Fatalf("commit=%v: %d documents, want %d", commit, n, want)
		}
	}
	var a struct {
		V int `bson:"v"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&a); err != nil || a.V != 11 {
		t.Fatalf("a = %d (%v), want 11: one committed $inc", a.V, err)
	}
}

// TestWriteConflict checks that the second transaction writing a document
// gets WriteConflict (112) with the TransientTransactionError label.
func TestWriteConflict(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("wc")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	s1, _ := client.StartSession()
	s2, _ := client.StartSession()
	defer s1.EndSession(ctx)
	defer s2.EndSession(ctx)
	s1.StartTransaction()
	s2.StartTransaction()
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}
	if _, err := coll.UpdateOne(mongo.NewSessionContext(ctx, s1), bson.D{{Key: "_id", Value: 1}}, inc); err != nil {
		t.Fatal(err)
	}
	_, err := coll.UpdateOne(mongo.NewSessionContext(ctx, s2), bson.D{{Key: "_id", Value: 1}}, inc)
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(112) || !se.HasErrorLabel("TransientTransactionError") {
		t.Fatalf("second writer: %v, want 112 with TransientTransactionError", err)
	}
	if err := s1.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	// The conflict aborted the second transaction.
	err = s2.CommitTransaction(ctx)
	if !errors.As(err, &se) || !se.HasErrorCode(251) {
		t.Fatalf("commit of the aborted transaction: %v, want 251 NoSuchTransaction", err)
	}
}

// TestUniqueIndexWriteConflict checks that the second of two open
// transactions adding one key to a unique index fails at its write with
// WriteConflict (112) and TransientTransactionError, and its commit with
// NoSuchTransaction, as MongoDB's
// jstests/core/txns/transactions_write_conflicts_unique_indexes.js expects.
func TestUniqueIndexWriteConflict(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("uwc")
	unique := mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}, Options: options.Index().SetUnique(true)}
	if _, err := coll.Indexes().CreateOne(ctx, unique); err != nil {
		t.Fatal(err)
	}
	s1, _ := client.StartSession()
	s2, _ := client.StartSession()
	defer s1.EndSession(ctx)
	defer s2.EndSession(ctx)
	s1.StartTransaction()
	s2.StartTransaction()
	if _, err := coll.InsertOne(mongo.NewSessionContext(ctx, s1), bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertOne(mongo.NewSessionContext(ctx, s2), bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 1}})
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(112) || !se.HasErrorLabel("TransientTransactionError") {
		t.Fatalf("second transaction's insert: %v, want 112 with TransientTransactionError", err)
	}
	if err := s1.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s2.CommitTransaction(ctx); !errors.As(err, &se) || !se.HasErrorCode(251) {
		t.Fatalf("commit of the aborted transaction: %v, want 251 NoSuchTransaction", err)
	}
}

// TestUnorderedWriteInTransaction checks that an unordered write batch in
// a transaction stops at its first failing statement and aborts the
// transaction, as MongoDB's write_ops_exec.cpp handleError does
// (jstests/core/txns/multi_statement_transaction_write_error.js).
func TestUnorderedWriteInTransaction(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if _, err := db.Collection("uwt").InsertOne(ctx, bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("unordered-in-txn")}}}
	session := bson.D{{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}
	insert := append(bson.D{{Key: "insert", Value: "uwt"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 5}}, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "_id", Value: 6}}}},
		{Key: "ordered", Value: false}, {Key: "startTransaction", Value: true}}, session...)
	var reply struct {
		N           int32
		WriteErrors []struct{ Index, Code int32 } `bson:"writeErrors"`
	}
	raw, _ := db.RunCommand(ctx, insert).Raw()
	if err := bson.Unmarshal(raw, &reply); err != nil {
		t.Fatal(err)
	}
	if reply.N != 1 || len(reply.WriteErrors) != 1 || reply.WriteErrors[0].Index != 1 || reply.WriteErrors[0].Code != 11000 {
		t.Fatalf("reply %+v, want n 1 and the one write error of statement 1", reply)
	}
	commit := append(bson.D{{Key: "commitTransaction", Value: 1}}, session...)
	if err := client.Database("admin").RunCommand(ctx, commit).Err(); serverCode(err) != 251 {
		t.Fatalf("commit: %v, want 251 NoSuchTransaction", err)
	}
	if n, _ := db.Collection("uwt").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("%d documents, want 1", n)
	}
}

// TestRetryableWrite sends one insert twice with the same lsid and
// txnNumber: it is applied once, and the second reply is the first with the
// statement listed in retriedStmtIds, as MongoDB answers.
func TestRetryableWrite(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	ctx := context.Background()
	db := client.Database(testDB)
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("0123456789abcdef")}}}
	cmd := bson.D{
		{Key: "insert", Value: "retry"},
		{Key: "documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}}},
		{Key: "lsid", Value: lsid},
		{Key: "txnNumber", Value: int64(7)},
	}
	var r1, r2 bson.Raw
	var err error
	if r1, err = db.RunCommand(ctx, cmd).Raw(); err != nil {
		t.Fatal(err)
	}
	if r2, err = db.RunCommand(ctx, cmd).Raw(); err != nil {
		t.Fatal(err)
	}
	if want := `{"n":{"$numberInt":"1"},"ok":{"$numberDouble":"1.0"}}`; withoutRetried(t, r1) != want || retriedOf(r1) != "" {
		t.Fatalf("first reply %s, want %s", r1, want)
	}
	if withoutRetried(t, r2) != withoutRetried(t, r1) || retriedOf(r2) != `[{"$numberInt":"0"}]` {
		t.Fatalf("retried reply %s, want the first with retriedStmtIds [0]", r2)
	}
	if n, _ := db.Collection("retry").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("%d documents, want 1", n)
	}
	cmd[3].Value = int64(6)
	err = db.RunCommand(ctx, cmd).Err()
	if serverCode(err) != 225 {
		t.Fatalf("an older txnNumber: %v, want 225 TransactionTooOld", err)
	}
}

// TestTransactionCommands checks the raw transaction protocol: the codes
// for unknown, older and finished transactions, the commands, stages and
// databases a transaction may not use, a retried commit of a committed
// transaction succeeding, and the session fields parsed as MongoDB's
// initializeOperationSessionInfo does.
// https://www.mongodb.com/docs/v7.0/core/transactions-operations/
func TestTransactionCommands(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database(testDB)
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("fedcba9876543210")}}}
	run := func(cmd bson.D, txn int64, start bool) error {
		cmd = append(cmd, bson.E{Key: "lsid", Value: lsid}, bson.E{Key: "txnNumber", Value: txn}, bson.E{Key: "autocommit", Value: false})
		if start {
			cmd = append(cmd, bson.E{Key: "startTransaction", Value: true})
		}
		return db.Client().Database("admin").RunCommand(ctx, cmd).Err()
	}
	insert := bson.D{{Key: "insert", Value: "tc"}, {Key: "documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}, {Key: "$db", Value: testDB}}
	commit := bson.D{{Key: "commitTransaction", Value: 1}}
	steps := []struct {
		name  string
		cmd   bson.D
		txn   int64
		start bool
		code  int
	}{
		{"commit of an unknown transaction", commit, 1, false, 251},
		{"start", insert, 1, true, 0},
		{"count is not allowed", bson.D{{Key: "count", Value: "tc"}, {Key: "$db", Value: testDB}}, 1, false, 263},
		// A command transactions do not run is refused without touching
		// the transaction (commands_not_allowed_in_txn.js).
		{"the refusal left it open", commit, 1, false, 0},
		{"start again", insert, 2, true, 0},
		{"commit", commit, 2, false, 0},
		{"commit retried", commit, 2, false, 0},
		{"abort after commit", bson.D{{Key: "abortTransaction", Value: 1}}, 2, false, 256},
		// commit and abort read their own fields once the transaction is
		// checked (errors_on_committed_transaction.js)
		{"abort after commit, an unknown field", bson.D{{Key: "abortTransaction", Value: 1}, {Key: "invalidField", Value: 1}}, 2, false, 256},
		{"commit retried, an unknown field", bson.D{{Key: "commitTransaction", Value: 1}, {Key: "invalidField", Value: 1}}, 2, false, 40415},
		{"an older transaction", insert, 1, true, 225},
		{"continuing an older transaction", insert, 1, false, 225},
		{"killCursors first", bson.D{{Key: "killCursors", Value: "tc"}, {Key: "cursors", Value: bson.A{int64(1)}}, {Key: "$db", Value: testDB}}, 3, true, 263},
		{"$out", bson.D{{Key: "aggregate", Value: "tc"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "tc2"}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: testDB}}, 4, true, 263},
		{"$indexStats in $lookup", bson.D{{Key: "aggregate", Value: "tc"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "tc"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$indexStats", Value: bson.D{}}}}}, {Key: "as", Value: "s"}}}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: testDB}}, 5, true, 263},
		{"the config database", bson.D{{Key: "insert", Value: "tc"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "$db", Value: "config"}}, 6, true, 263},
		{"commit as the first statement", commit, 6, true, 263},
		{"abort as the first statement", bson.D{{Key: "abortTransaction", Value: 1}}, 6, true, 263},
		{"a refused first command starts nothing", commit, 6, false, 251},
		{"the local database", bson.D{{Key: "find", Value: "tc"}, {Key: "$db", Value: "local"}}, 9, true, 263},
		{"the admin database", bson.D{{Key: "find", Value: "tc"}}, 7, true, 263},
	}
	for _, st := range steps {
		err := run(st.cmd, st.txn, st.start)
		if got := serverCode(err); got != st.code {
			t.Fatalf("%s: %v, want code %d", st.name, err, st.code)
		}
	}
	if n, _ := db.Collection("tc").CountDocuments(ctx, bson.D{}); n != 2 {
		t.Fatalf("%d documents, want the two committed", n)
	}
	// A commit sent to another database is refused before the transaction
	// is touched: it stays open, and commits on admin.
	if err := run(insert, 8, true); err != nil {
		t.Fatal(err)
	}
	wrongDB := bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(8)}, {Key: "autocommit", Value: false}}
	if err := db.RunCommand(ctx, wrongDB).Err(); serverCode(err) != 13 {
		t.Fatalf("commit on %s: %v, want 13", testDB, err)
	}
	if err := run(commit, 8, false); err != nil {
		t.Fatalf("commit on admin after the refusal: %v", err)
	}
	// find options a transaction does not take (FindCmd::run).
	for i, tc := range []struct {
		field string
		code  int
	}{{"readOnce", 263}, {"tailable", 72}} {
		find := bson.D{{Key: "find", Value: "tc"}, {Key: tc.field, Value: true}, {Key: "$db", Value: testDB}}
		if err := run(find, int64(10+i), true); serverCode(err) != tc.code {
			t.Fatalf("find with %s in a transaction: %v, want code %d", tc.field, err, tc.code)
		}
	}
	// System collections (doTransactionValidationForWrites,
	// createCollection, getLockModeForQuery); each failure aborts the
	// transaction.
	sys := func(cmd string, v any, rest ...bson.E) bson.D {
		return append(append(bson.D{{Key: cmd, Value: v}}, rest...), bson.E{Key: "$db", Value: testDB})
	}
	for i, tc := range []struct {
		name string
		cmd  bson.D
		code int
	}{
		{"insert into system.js", sys("insert", "system.js", bson.E{Key: "documents", Value: bson.A{bson.D{}}}), 50791},
		{"update of system.js", sys("update", "system.js", bson.E{Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{}}, {Key: "upsert", Value: true}}}}), 50791},
		{"delete from system.js", sys("delete", "system.js", bson.E{Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}), 50791},
		{"findAndModify of system.js", sys("findAndModify", "system.js", bson.E{Key: "remove", Value: true}), 50791},
		{"insert into system.views", sys("insert", "system.views", bson.E{Key: "documents", Value: bson.A{bson.D{}}}), 50791},
		{"create of system.js", sys("create", "system.js"), 263},
		{"find on system.views", sys("find", "system.views"), 51071},
		{"distinct on system.views", sys("distinct", "system.views", bson.E{Key: "key", Value: "a"}), 51071},
		// any command on system.profile (canUseTransactions)
		{"find on system.profile", sys("find", "system.profile"), 263},
		{"aggregate on system.profile", sys("aggregate", "system.profile", bson.E{Key: "pipeline", Value: bson.A{}}, bson.E{Key: "cursor", Value: bson.D{}}), 263},
		{"insert into system.profile", sys("insert", "system.profile", bson.E{Key: "documents", Value: bson.A{bson.D{}}}), 263},
	} {
		txn := int64(20 + i)
		want := tc.code
		if testAuth() && strings.HasSuffix(tc.name, "system.views") {
			// root may not read or write a database's views: refused
			// before the transaction is looked at, as MongoDB's
			want = 13
		}
		if err := run(tc.cmd, txn, true); serverCode(err) != want {
			t.Fatalf("%s in a transaction: %v, want code %d", tc.name, err, want)
		}
		if err := run(commit, txn, false); serverCode(err) != 251 {
			t.Fatalf("commit after %s: %v, want 251", tc.name, err)
		}
	}
	// Read concern: only the first statement gives one (a later one is
	// refused, the transaction stays usable), of level local, majority
	// or snapshot (else nothing starts).
	rc := func(level string) bson.E {
		return bson.E{Key: "readConcern", Value: bson.D{{Key: "level", Value: level}}}
	}
	for _, st := range []struct {
		name  string
		cmd   bson.D
		txn   int64
		start bool
		code  int
	}{
		{"start", sys("find", "tc"), 30, true, 0},
		{"a read concern on a later statement", sys("find", "tc", rc("majority")), 30, false, 72},
		{"the refusal left it open", commit, 30, false, 0},
		{"start with available", sys("find", "tc", rc("available")), 31, true, 72},
		{"available started nothing", commit, 31, false, 251},
		{"start with linearizable", sys("find", "tc", rc("linearizable")), 32, true, 72},
		{"linearizable started nothing", bson.D{{Key: "abortTransaction", Value: 1}}, 32, false, 251},
	} {
		if err := run(st.cmd, st.txn, st.start); serverCode(err) != st.code {
			t.Fatalf("%s: %v, want code %d", st.name, err, st.code)
		}
	}

	// Session fields outside a transaction.
	for _, tc := range []struct {
		name string
		db   string
		cmd  bson.D
		code int
	}{
		{"commit without autocommit", "admin", bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}}, 125},
		{"abort without autocommit", "admin", bson.D{{Key: "abortTransaction", Value: 1}, {Key: "lsid", Value: lsid}}, 125},
		{"commit on another database", testDB, bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}}, 13},
		{"txnNumber on a find", testDB, bson.D{{Key: "find", Value: "tc"}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(9)}}, 50768},
		{"negative txnNumber", testDB, bson.D{{Key: "insert", Value: "tc"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(-1)}}, 72},
		{"autocommit of another type", "admin", bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(2)}, {Key: "autocommit", Value: 0}}, 14},
		{"autocommit true", "admin", bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(2)}, {Key: "autocommit", Value: true}}, 72},
		{"null autocommit is absent", "admin", bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "autocommit", Value: nil}}, 125},
		{"startTransaction false", testDB, bson.D{{Key: "find", Value: "tc"}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(9)}, {Key: "autocommit", Value: false}, {Key: "startTransaction", Value: false}}, 72},
	} {
		err := client.Database(tc.db).RunCommand(ctx, tc.cmd).Err()
		if got := serverCode(err); got != tc.code {
			t.Errorf("%s: %v, want code %d", tc.name, err, tc.code)
		}
	}
}

// TestTransactionCappedWrites: every write statement of a transaction on a
// capped collection fails with OperationNotSupportedInTransaction (263),
// whether or not a document matches, and findAndModify's without the plan
// executor's context, as MongoDB checks the collection once its write
// path acquired it (write_ops_exec.cpp checkIfTransactionOnCappedColl);
// reads are allowed. An insert, update or delete reports it as its first
// statement's write error (handleError), findAndModify as the command's.
func TestTransactionCappedWrites(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "captxn"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}).Err(); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("captxn")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	const msg = "Collection '" + testDB + ".captxn' is a capped collection. Writes in transactions are not allowed on capped collections."
	none := bson.D{{Key: "_id", Value: 9}}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}
	for _, tc := range []struct {
		name     string
		run      func(sc context.Context) error
		writeErr bool // a write error, else the command's error
	}{
		{"update matching nothing", func(sc context.Context) error { _, err := coll.UpdateOne(sc, none, set); return err }, true},
		{"delete matching nothing", func(sc context.Context) error { _, err := coll.DeleteOne(sc, none); return err }, true},
		{"findAndModify update matching nothing", func(sc context.Context) error { return coll.FindOneAndUpdate(sc, none, set).Err() }, false},
		{"findAndModify remove matching nothing", func(sc context.Context) error { return coll.FindOneAndDelete(sc, none).Err() }, false},
		{"findAndModify update", func(sc context.Context) error {
			return coll.FindOneAndUpdate(sc, bson.D{{Key: "_id", Value: 1}}, set).Err()
		}, false},
		{"insert", func(sc context.Context) error {
			_, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: 2}})
			return err
		}, true},
		{"unordered insert of two", func(sc context.Context) error {
			_, err := coll.InsertMany(sc, []any{bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "_id", Value: 4}}}, options.InsertMany().SetOrdered(false))
			return err
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess, err := client.StartSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.EndSession(ctx)
			if err := sess.StartTransaction(); err != nil {
				t.Fatal(err)
			}
			sc := mongo.NewSessionContext(ctx, sess)
			if err := coll.FindOne(sc, bson.D{}).Err(); err != nil {
				t.Fatalf("a read in the transaction: %v", err)
			}
			err = tc.run(sc)
			_ = sess.AbortTransaction(ctx)
			requireCode(t, err, 263, "")
			var ce mongo.CommandError
			var we mongo.WriteException
			if bwe := (mongo.BulkWriteException{}); errors.As(err, &bwe) {
				for _, e := range bwe.WriteErrors {
					we.WriteErrors = append(we.WriteErrors, e.WriteError)
				}
			}
			switch {
			case errors.As(err, &ce):
				if tc.writeErr {
					t.Errorf("a command error, want a write error: %v", err)
				}
				if ce.Message != msg {
					t.Errorf("message %q", ce.Message)
				}
			case len(we.WriteErrors) > 0 || errors.As(err, &we) && len(we.WriteErrors) > 0:
				if !tc.writeErr {
					t.Errorf("a write error, want the command's: %v", err)
				}
				// the first failing statement ends a transaction's batch
				if len(we.WriteErrors) != 1 || we.WriteErrors[0].Index != 0 {
					t.Errorf("write errors %v, want one, of statement 0", we.WriteErrors)
				}
				if we.WriteErrors[0].Message != msg {
					t.Errorf("message %q", we.WriteErrors[0].Message)
				}
			default:
				t.Errorf("%T: %v", err, err)
			}
		})
	}
}

// TestStandaloneRefusesTxnNumber: a standalone takes sessions but no
// txnNumber, so neither retryable writes nor transactions, as
// initializeOperationSessionInfo refuses them (IllegalOperation, before a
// negative txnNumber is); applications
// recognize a standalone by this error. A transaction through the driver
// fails the same way.
func TestStandaloneRefusesTxnNumber(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	lsid := lsidFor("standalone")
	insert := bson.D{{Key: "insert", Value: "sa"}, {Key: "documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}}
	const refused = "Transaction numbers are only allowed on a replica set member or mongos"
	for _, tc := range []struct {
		name          string
		cmd           bson.D
		code          int
		codeName, msg string
	}{
		{"retryable write", inSession(insert, lsid, 1), 20, "IllegalOperation", refused},
		{"negative txnNumber", inSession(insert, lsid, -1), 20, "IllegalOperation", refused},
		{"transaction", append(inSession(bson.D{{Key: "find", Value: "sa"}}, lsid, 2), bson.E{Key: "autocommit", Value: false}, bson.E{Key: "startTransaction", Value: true}), 20, "IllegalOperation", refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, db.RunCommand(t.Context(), tc.cmd).Err(), tc.code, tc.codeName, tc.msg)
		})
	}
	// an lsid alone is a session's ordinary write
	mustRunRaw(t, db, append(insert, bson.E{Key: "lsid", Value: lsid}))
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(context.Background())
	_, err = sess.WithTransaction(t.Context(), func(ctx context.Context) (any, error) {
		return db.Collection("sa").InsertOne(ctx, bson.D{{Key: "y", Value: 1}})
	})
	requireError(t, err, 20, "IllegalOperation", refused)
	if n, _ := db.Collection("sa").CountDocuments(t.Context(), bson.D{}); n != 1 {
		t.Errorf("%d documents, want the session's one insert", n)
	}
}
