package driver_test

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestCommitQuorum: createIndexes' commitQuorum through the driver. On a
// one-member replica set a build's reply names its quorum ("votingMembers"
// by default) after createdCollectionAutomatically, a quorum of more than
// one member fails with UnsatisfiableCommitQuorum and an unknown tag with
// UnknownReplWriteConcern; a standalone refuses any commitQuorum
// (commit_quorum_standalones.js) and names none.
func TestCommitQuorum(t *testing.T) {
	ctx := t.Context()
	rs := connect(t, startInstance(t, instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir(), ReplSetName: "rs"})).Database(testDB)
	if _, err := rs.Collection("c").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	create := func(db *mongo.Database, coll, field string, quorum any) (bson.Raw, error) {
		cmd := bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: field, Value: 1}}}, {Key: "name", Value: field + "_1"}}}}}
		if quorum != nil {
			cmd = append(cmd, bson.E{Key: "commitQuorum", Value: quorum})
		}
		return db.RunCommand(ctx, cmd).Raw()
	}
	keys := func(r bson.Raw) []string {
		elems, _ := r.Elements()
		var out []string
		for _, e := range elems {
			if k := e.Key(); k != "$clusterTime" && k != "operationTime" {
				out = append(out, k)
			}
		}
		return out
	}

	res, err := create(rs, "c", "a", nil)
	if err != nil || res.Lookup("commitQuorum").StringValue() != "votingMembers" {
		t.Fatalf("default: %v %s", err, res)
	}
	if got := keys(res); len(got) != 5 || got[2] != "createdCollectionAutomatically" || got[3] != "commitQuorum" {
		t.Errorf("reply fields %v", got)
	}
	if res, err = create(rs, "c", "a", "majority"); err != nil || res.Lookup("commitQuorum").Type != 0 || res.Lookup("createdCollectionAutomatically").Type != 0 {
		t.Errorf("every index already there: %v %s", err, res)
	}
	if res, err = create(rs, "n", "b", int32(1)); err != nil || res.Lookup("commitQuorum").Int32() != 1 || !res.Lookup("createdCollectionAutomatically").Boolean() {
		t.Errorf("new collection, quorum 1: %v %s", err, res)
	}
	for _, tc := range []struct {
		quorum any
		code   int
	}{{int32(2), 278}, {"dc", 79}, {int32(8), 9}, {"", 9}, {bson.D{}, 9}} {
		var ce mongo.CommandError
		if _, err := create(rs, "c", "z", tc.quorum); !errors.As(err, &ce) || int(ce.Code) != tc.code {
			t.Errorf("commitQuorum %v: %v, want code %d", tc.quorum, err, tc.code)
		}
	}
	// The driver's option sends the same field.
	_, err = rs.Collection("c").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "q", Value: 1}}},
		options.CreateIndexes().SetCommitQuorumInt(3))
	if ce := (mongo.CommandError{}); !errors.As(err, &ce) || ce.Code != 278 || ce.Message != "Not enough data-bearing nodes to satisfy commit quorum" {
		t.Errorf("driver commitQuorum 3: %v", err)
	}
	if _, err := rs.Collection("c").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "q", Value: 1}}},
		options.CreateIndexes().SetCommitQuorumMajority()); err != nil {
		t.Errorf("driver commitQuorum majority: %v", err)
	}

	alone := connect(t, startInstance(t, instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()})).Database(testDB)
	if res, err := create(alone, "c", "a", nil); err != nil || res.Lookup("commitQuorum").Type != 0 {
		t.Errorf("standalone: %v %s", err, res)
	}
	var ce mongo.CommandError
	if _, err := create(alone, "c", "b", "majority"); !errors.As(err, &ce) || ce.Code != 2 || ce.Message != "Standalones can't specify commitQuorum" {
		t.Errorf("standalone given a quorum: %v", err)
	}
}
