package driver_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
)

// Transactions own the collections and indexes they create (MongoDB manual,
// Transactions > Operations > Create Collections and Indexes in a
// Transaction): create, createIndexes on a new collection, and implicit
// creation by an insert or an upsert are seen inside the transaction only,
// until it commits; an abort leaves nothing.

// txnCreators create db.coll inside a transaction (ctx carries it) and leave
// one document {_id: 1, a: 1} in it.
var txnCreators = []struct {
	name string
	make func(ctx context.Context, db *mongo.Database, coll string) error
}{
	{"create", func(ctx context.Context, db *mongo.Database, coll string) error {
		if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: coll}}).Err(); err != nil {
			return err
		}
		_, err := db.Collection(coll).InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}})
		return err
	}},
	{"createIndexes", func(ctx context.Context, db *mongo.Database, coll string) error {
		var res bson.M
		err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: bson.A{
			bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}},
		}}}).Decode(&res)
		if err != nil {
			return err
		}
		if res["createdCollectionAutomatically"] != true || res["numIndexesBefore"] != int32(1) || res["numIndexesAfter"] != int32(2) {
			return errors.New("unexpected createIndexes reply")
		}
		_, err = db.Collection(coll).InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}})
		return err
	}},
	{"insert", func(ctx context.Context, db *mongo.Database, coll string) error {
		_, err := db.Collection(coll).InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}})
		return err
	}},
	{"update upsert", func(ctx context.Context, db *mongo.Database, coll string) error {
		_, err := db.Collection(coll).UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
		return err
	}},
	{"findAndModify upsert", func(ctx context.Context, db *mongo.Database, coll string) error {
		err := db.Collection(coll).FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}, options.FindOneAndUpdate().SetUpsert(true)).Err()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		return err
	}},
}

// collectionNames lists db's collection names, outside any transaction.
func collectionNames(t *testing.T, db *mongo.Database) []string {
	t.Helper()
	names, err := db.ListCollectionNames(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// countIn counts coll's documents as ctx (with or without a transaction)
// sees them, through find.
func countIn(t *testing.T, ctx context.Context, coll *mongo.Collection) int {
	t.Helper()
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	return len(docs)
}

func TestTxnCreatesCollection(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database("txnddl")
	for _, cr := range txnCreators {
		for _, commit := range []bool{true, false} {
			name := cr.name + map[bool]string{true: " commit", false: " abort"}[commit]
			t.Run(name, func(t *testing.T) {
				coll := "c_" + name
				sess, err := client.StartSession()
				if err != nil {
					t.Fatal(err)
				}
				defer sess.EndSession(ctx)
				if err := sess.StartTransaction(); err != nil {
					t.Fatal(err)
				}
				sc := mongo.NewSessionContext(ctx, sess)
				if err := cr.make(sc, db, coll); err != nil {
					t.Fatalf("create in the transaction: %v", err)
				}
				// Inside: the collection and its document are there.
				if n := countIn(t, sc, db.Collection(coll)); n != 1 {
					t.Fatalf("inside: %d documents, want 1", n)
				}
				// Outside: nothing yet.
				if slices.Contains(collectionNames(t, db), coll) {
					t.Fatal("outside: listCollections shows the uncommitted collection")
				}
				if n := countIn(t, ctx, db.Collection(coll)); n != 0 {
					t.Fatalf("outside: %d documents, want 0", n)
				}
				if commit {
					err = sess.CommitTransaction(ctx)
				} else {
					err = sess.AbortTransaction(ctx)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := slices.Contains(collectionNames(t, db), coll); got != commit {
					t.Fatalf("after the transaction: listed %v, want %v", got, commit)
				}
				want := map[bool]int{true: 1, false: 0}[commit]
				if n := countIn(t, ctx, db.Collection(coll)); n != want {
					t.Fatalf("after the transaction: %d documents, want %d", n, want)
				}
				if commit && cr.name == "createIndexes" {
					if got := indexNames(t, db, coll); got != "_id_,a_1" {
						t.Fatalf("indexes after commit: %v", got)
					}
				}
			})
		}
	}
}

// TestTxnCreateIndexes follows MongoDB's rules for createIndexes in a
// transaction: on a collection the transaction created and that is still
// empty, or a missing one; requesting existing indexes is a no-op anywhere;
// the new index serves the transaction's queries and appears outside only
// with the commit.
func TestTxnCreateIndexes(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database("txnddl_ix")
	if _, err := db.Collection("old").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("old").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	index := func(coll, field string) bson.D {
		return bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: bson.A{
			bson.D{{Key: "key", Value: bson.D{{Key: field, Value: 1}}}, {Key: "name", Value: field + "_1"}},
		}}}
	}
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	sc := mongo.NewSessionContext(ctx, sess)
	var res bson.M
	if err := db.RunCommand(sc, index("old", "a")).Decode(&res); err != nil {
		t.Fatalf("existing index on an existing collection: %v", err)
	}
	// MongoDB answers it with the counts and the note alone
	// (indexesAlreadyExist).
	if _, has := res["createdCollectionAutomatically"]; res["note"] != "all indexes already exist" || has {
		t.Fatalf("existing index reply: %v", res)
	}
	res = nil
	if err := db.RunCommand(sc, bson.D{{Key: "create", Value: "fresh"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(sc, index("fresh", "b")).Decode(&res); err != nil {
		t.Fatalf("index on the transaction's own empty collection: %v", err)
	}
	if res["createdCollectionAutomatically"] != false || res["numIndexesAfter"] != int32(2) {
		t.Fatalf("reply: %v", res)
	}
	if _, err := db.Collection("fresh").InsertOne(sc, bson.D{{Key: "_id", Value: 1}, {Key: "b", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	// The transaction's queries use the index.
	var doc bson.M
	if err := db.Collection("fresh").FindOne(sc, bson.D{{Key: "b", Value: 5}}, options.FindOne().SetHint("b_1")).Decode(&doc); err != nil {
		t.Fatalf("hinted find inside: %v", err)
	}
	// Outside: no collection, so no indexes.
	if err := db.RunCommand(ctx, bson.D{{Key: "listIndexes", Value: "fresh"}}).Err(); serverCode(err) != 26 {
		t.Fatalf("listIndexes outside: %v, want NamespaceNotFound", err)
	}
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexNames(t, db, "fresh"); got != "_id_,b_1" {
		t.Fatalf("indexes after commit: %v", got)
	}
	if err := db.Collection("fresh").FindOne(ctx, bson.D{{Key: "b", Value: 5}}, options.FindOne().SetHint("b_1")).Decode(&doc); err != nil {
		t.Fatalf("hinted find after commit: %v", err)
	}

	refused := []struct {
		name  string
		setup func(ctx context.Context) error
		cmd   bson.D
	}{
		{"new index on an existing collection", nil, index("old", "z")},
		{"new index on the transaction's non-empty collection", func(ctx context.Context) error {
			_, err := db.Collection("filled").InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
			return err
		}, index("filled", "x")},
		{"system collection", nil, index("system.js", "x")},
	}
	for _, rc := range refused {
		t.Run(rc.name, func(t *testing.T) {
			sess, err := client.StartSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.EndSession(ctx)
			if err := sess.StartTransaction(); err != nil {
				t.Fatal(err)
			}
			sc := mongo.NewSessionContext(ctx, sess)
			if rc.setup != nil {
				if err := rc.setup(sc); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.RunCommand(sc, rc.cmd).Err(); serverCode(err) != 263 {
				t.Fatalf("%v, want OperationNotSupportedInTransaction (263)", err)
			}
			if err := sess.CommitTransaction(ctx); serverCode(err) != 251 {
				t.Fatalf("commit after the refusal: %v, want NoSuchTransaction", err)
			}
		})
	}
	if got := indexNames(t, db, "old"); got != "_id_,a_1" {
		t.Fatalf("indexes of the existing collection: %v", got)
	}
	if slices.Contains(collectionNames(t, db), "filled") {
		t.Fatal("the aborted transaction's collection exists")
	}
}

// TestTxnDDLReadConcern: explicit creation needs read concern "local" in a
// transaction; implicit creation takes any (MongoDB manual, Read Concern
// "local" and Transactions).
func TestTxnDDLReadConcern(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database("txnddl_rc")
	cases := []struct {
		name  string
		level *readconcern.ReadConcern
		run   func(ctx context.Context) error
		code  int
	}{
		{"create, snapshot", readconcern.Snapshot(), func(ctx context.Context) error {
			return db.RunCommand(ctx, bson.D{{Key: "create", Value: "rc1"}}).Err()
		}, 72},
		{"createIndexes, majority", readconcern.Majority(), func(ctx context.Context) error {
			_, err := db.Collection("rc2").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}})
			return err
		}, 72},
		{"create, local", readconcern.Local(), func(ctx context.Context) error {
			return db.RunCommand(ctx, bson.D{{Key: "create", Value: "rc3"}}).Err()
		}, 0},
		{"implicit, snapshot", readconcern.Snapshot(), func(ctx context.Context) error {
			_, err := db.Collection("rc4").InsertOne(ctx, bson.D{{Key: "a", Value: 1}})
			return err
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sess, err := client.StartSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.EndSession(ctx)
			if err := sess.StartTransaction(options.Transaction().SetReadConcern(c.level)); err != nil {
				t.Fatal(err)
			}
			sc := mongo.NewSessionContext(ctx, sess)
			// A read first, so that the read concern rides on it and not on
			// the DDL command.
			if err := db.Collection("other").FindOne(sc, bson.D{}).Err(); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
				t.Fatal(err)
			}
			if err := c.run(sc); serverCode(err) != c.code {
				t.Fatalf("%v, want code %d", err, c.code)
			}
			err = sess.CommitTransaction(ctx)
			if want := map[bool]int{true: 0, false: 251}[c.code == 0]; serverCode(err) != want {
				t.Fatalf("commit: %v, want code %d", err, want)
			}
		})
	}
}

// TestTxnCreateConflicts: a collection of the same name created by others
// before the commit fails the commit with WriteConflict, labelled
// TransientTransactionError; one the transaction sees fails its create
// with NamespaceExists.
func TestTxnCreateConflicts(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database("txnddl_conflict")
	start := func() (*mongo.Session, context.Context) {
		sess, err := client.StartSession()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.EndSession(ctx) })
		if err := sess.StartTransaction(); err != nil {
			t.Fatal(err)
		}
		return sess, mongo.NewSessionContext(ctx, sess)
	}
	wantTransientConflict := func(what string, err error) {
		t.Helper()
		var se mongo.ServerError
		if serverCode(err) != 112 || !errors.As(err, &se) || !se.HasErrorLabel("TransientTransactionError") {
			t.Fatalf("%s: %v, want WriteConflict labelled TransientTransactionError", what, err)
		}
	}

	// Created outside, meanwhile: the outside create is not blocked, the
	// commit fails.
	sess, sc := start()
	if _, err := db.Collection("a").InsertOne(sc, bson.D{{Key: "_id", Value: "inside"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "a"}}).Err(); err != nil {
		t.Fatalf("create outside: %v", err)
	}
	if _, err := db.Collection("a").InsertOne(ctx, bson.D{{Key: "_id", Value: "outside"}}); err != nil {
		t.Fatal(err)
	}
	wantTransientConflict("commit", sess.CommitTransaction(ctx))
	if n := countIn(t, ctx, db.Collection("a")); n != 1 {
		t.Fatalf("%d documents after the failed commit, want the outside one", n)
	}

	// Two transactions create one name: the second to commit fails.
	s1, c1 := start()
	s2, c2 := start()
	for _, c := range []context.Context{c1, c2} {
		if err := db.RunCommand(c, bson.D{{Key: "create", Value: "b"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s2.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	wantTransientConflict("second commit", s1.CommitTransaction(ctx))

	// Created and committed after the transaction's snapshot: not seen, so
	// the create succeeds and the commit fails, as in MongoDB.
	s3, c3 := start()
	if err := db.Collection("other").FindOne(c3, bson.D{}).Err(); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "c"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(c3, bson.D{{Key: "create", Value: "c"}}).Err(); err != nil {
		t.Fatalf("create of a collection newer than the snapshot: %v", err)
	}
	wantTransientConflict("commit", s3.CommitTransaction(ctx))

	// Existing ones fail the create, even with identical options, and the
	// transaction with it.
	for _, coll := range []string{"b", "mine"} {
		s4, c4 := start()
		if coll == "mine" {
			if err := db.RunCommand(c4, bson.D{{Key: "create", Value: coll}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.RunCommand(c4, bson.D{{Key: "create", Value: coll}}).Err(); serverCode(err) != 48 {
			t.Fatalf("create of existing %s: %v, want NamespaceExists", coll, err)
		}
		if err := s4.AbortTransaction(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTxnOtherDDLRefused: DDL other than creation is not allowed in a
// transaction (MongoDB manual, Transactions > Operations > Restricted
// Operations); the refusal leaves the transaction open, so its insert
// commits (jstests/core/txns/commands_not_allowed_in_txn.js).
func TestTxnOtherDDLRefused(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database("txnddl_refused")
	if _, err := db.Collection("x").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("x").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		db   string
		cmd  bson.D
	}{
		{"drop", "txnddl_refused", bson.D{{Key: "drop", Value: "x"}}},
		{"dropIndexes", "txnddl_refused", bson.D{{Key: "dropIndexes", Value: "x"}, {Key: "index", Value: "a_1"}}},
		{"renameCollection", "admin", bson.D{{Key: "renameCollection", Value: "txnddl_refused.x"}, {Key: "to", Value: "txnddl_refused.y"}}},
		{"collMod", "txnddl_refused", bson.D{{Key: "collMod", Value: "x"}}},
		{"dropDatabase", "txnddl_refused", bson.D{{Key: "dropDatabase", Value: 1}}},
		{"listCollections", "txnddl_refused", bson.D{{Key: "listCollections", Value: 1}}},
		{"listIndexes", "txnddl_refused", bson.D{{Key: "listIndexes", Value: "x"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sess, err := client.StartSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.EndSession(ctx)
			if err := sess.StartTransaction(); err != nil {
				t.Fatal(err)
			}
			sc := mongo.NewSessionContext(ctx, sess)
			if _, err := db.Collection("x").InsertOne(sc, bson.D{{Key: "b", Value: 1}}); err != nil {
				t.Fatal(err)
			}
			if err := client.Database(c.db).RunCommand(sc, c.cmd).Err(); serverCode(err) != 263 {
				t.Fatalf("%v, want OperationNotSupportedInTransaction (263)", err)
			}
			if err := sess.CommitTransaction(ctx); err != nil {
				t.Fatalf("commit after the refusal: %v", err)
			}
		})
	}
	if n := countIn(t, ctx, db.Collection("x")); n != 1+len(cases) {
		t.Fatalf("%d documents, want the one written outside and one per transaction", n)
	}
	if got := indexNames(t, db, "x"); got != "_id_,a_1" {
		t.Fatalf("indexes: %v", got)
	}
}
