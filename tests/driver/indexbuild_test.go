package driver_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// hangBuilds turns the hangAfterStartingIndexBuild fail point on or off.
func hangBuilds(t *testing.T, client *mongo.Client, mode string) {
	t.Helper()
	cmd := bson.D{{Key: "configureFailPoint", Value: "hangAfterStartingIndexBuild"}, {Key: "mode", Value: mode}}
	if err := client.Database("admin").RunCommand(context.Background(), cmd).Err(); err != nil {
		t.Fatal(err)
	}
}

// indexStatsOf is $indexStats' document of the index named name, or nil.
func indexStatsOf(t *testing.T, coll *mongo.Collection, name string) bson.Raw {
	t.Helper()
	docs := aggregateAll(t, coll, bson.A{bson.D{{Key: "$indexStats", Value: bson.D{}}}, bson.D{{Key: "$match", Value: bson.D{{Key: "name", Value: name}}}}})
	if len(docs) > 1 {
		t.Fatalf("$indexStats has %d documents for %s", len(docs), name)
	}
	if len(docs) == 0 {
		return nil
	}
	return docs[0]
}

// TestHeldIndexBuild: an index held by hangAfterStartingIndexBuild
// is in $indexStats with its spec and building: true after it, as
// MongoDB's jstests/noPassthrough/index_stats_output.js checks, and
// without the field once built; collStats counts it in nindexes,
// indexSizes and indexDetails, as MongoDB's (numIndexesTotal, and its
// iterators over ready and unfinished indexes), and names it in
// indexBuilds; the held build ends when its operation's
// maxTimeMS runs out, leaving no index; a drop of the collection aborts a
// held build, whose createIndexes fails with IndexBuildAborted.
func TestHeldIndexBuild(t *testing.T) {
	client := startTestCommands(t, "indexstats")
	db := client.Database(testDB)
	coll := numbered(t, client, "isb", 100)
	create := func(name, field string, extra ...bson.E) <-chan error {
		cmd := bson.D{{Key: "createIndexes", Value: "isb"}, {Key: "indexes", Value: bson.A{bson.D{
			{Key: "key", Value: bson.D{{Key: "_id", Value: 1}, {Key: field, Value: 1}}}, {Key: "name", Value: name}, {Key: "unique", Value: true}}}}}
		done := make(chan error, 1)
		go func() { done <- db.RunCommand(context.Background(), append(cmd, extra...)).Err() }()
		return done
	}
	held := func(name string) bson.Raw {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if st := indexStatsOf(t, coll, name); st != nil {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never appeared in $indexStats", name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	hangBuilds(t, client, "alwaysOn")
	built := create("testIndex", "a")
	st := held("testIndex")
	if got, want := keysOf(t, st), []string{"name", "key", "host", "accesses", "spec", "building"}; !slices.Equal(got, want) {
		t.Errorf("fields of a building index's $indexStats: %v, want %v", got, want)
	}
	if b, ok := st.Lookup("building").BooleanOK(); !ok || !b {
		t.Errorf("building: %s, want true", st.Lookup("building"))
	}
	if u, ok := st.Lookup("spec", "unique").BooleanOK(); !ok || !u || st.Lookup("spec", "name").StringValue() != "testIndex" {
		t.Errorf("spec of the building index: %s", st.Lookup("spec"))
	}
	stats, err := db.RunCommand(t.Context(), bson.D{{Key: "collStats", Value: "isb"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := stats.Lookup("nindexes").AsInt64OK(); n != 2 ||
		!slices.Equal(keysOf(t, stats.Lookup("indexSizes").Document()), []string{"_id_", "testIndex"}) ||
		!slices.Equal(keysOf(t, stats.Lookup("indexDetails").Document()), []string{"_id_", "testIndex"}) ||
		stats.Lookup("indexBuilds").String() != `["testIndex"]` {
		t.Errorf("collStats during the build: nindexes %s, indexSizes %s, indexDetails %s, indexBuilds %s, want the index being built counted in each",
			stats.Lookup("nindexes"), stats.Lookup("indexSizes"), stats.Lookup("indexDetails"), stats.Lookup("indexBuilds"))
	}
	select {
	case err := <-built:
		t.Fatalf("the held build ended: %v", err)
	default:
	}
	hangBuilds(t, client, "off")
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	st = indexStatsOf(t, coll, "testIndex")
	if st == nil {
		t.Fatal("no $indexStats for the built index")
	}
	if _, err := st.LookupErr("building"); err == nil {
		t.Errorf("a built index's $indexStats has building: %s", st)
	}

	hangBuilds(t, client, "alwaysOn")
	built = create("timedOut", "b", bson.E{Key: "maxTimeMS", Value: 300})
	held("timedOut")
	requireCode(t, <-built, 50, "MaxTimeMSExpired")
	hangBuilds(t, client, "off")
	if st := indexStatsOf(t, coll, "timedOut"); st != nil {
		t.Errorf("the interrupted build left its index: %s", st)
	}

	hangBuilds(t, client, "alwaysOn")
	built = create("dropped", "c")
	held("dropped")
	if err := coll.Drop(t.Context()); err != nil {
		t.Fatalf("drop during the build: %v", err)
	}
	hangBuilds(t, client, "off")
	requireCode(t, <-built, 276, "IndexBuildAborted")
}
