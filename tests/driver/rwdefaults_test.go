package driver_test

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/instance"
)

// TestRWConcernDefaults: getDefaultRWConcern reports the implicit defaults
// of a replica set ({level: "local"}, {w: "majority", wtimeout: 0}) until
// setDefaultRWConcern stores others, which it checks as MongoDB does; the
// defaults survive a restart; a standalone refuses both commands.
// https://www.mongodb.com/docs/v7.0/reference/command/setDefaultRWConcern/
func TestRWConcernDefaults(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir(), ReplSetName: "rs"}
	in := startInstance(t, cfg)
	client := connect(t, in)
	get := func(extra ...bson.E) bson.Raw {
		t.Helper()
		r, err := runCmd(client, "admin", append(bson.D{{Key: "getDefaultRWConcern", Value: 1}}, extra...))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := get()
	if got := bson.Raw(r.Lookup("defaultWriteConcern").Document()).String() + bson.Raw(r.Lookup("defaultReadConcern").Document()).String() +
		r.Lookup("defaultWriteConcernSource").StringValue() + r.Lookup("defaultReadConcernSource").StringValue(); got !=
		`{"w": "majority","wtimeout": {"$numberInt":"0"}}{"level": "local"}implicitimplicit` {
		t.Errorf("implicit defaults: %s", r)
	}
	if got := keysOf(t, r)[:5]; !slices.Equal(got, []string{"defaultReadConcern", "defaultWriteConcern", "defaultWriteConcernSource", "defaultReadConcernSource", "localUpdateWallClockTime"}) {
		t.Errorf("fields %v", got)
	}
	for _, tc := range []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{}, 2},
		{bson.D{{Key: "defaultReadConcern", Value: 1}}, 14},
		{bson.D{{Key: "defaultWriteConcern", Value: "x"}}, 14},
		{bson.D{{Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 0}}}}, 2},
		{bson.D{{Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 2}}}}, 100},
		{bson.D{{Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: "tag"}}}}, 79},
		{bson.D{{Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 1}, {Key: "provenance", Value: "clientSupplied"}}}}, 2},
		{bson.D{{Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "snapshot"}}}}, 2},
		{bson.D{{Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "linearizable"}}}}, 2},
		{bson.D{{Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "dummy"}}}}, 9},
		{bson.D{{Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "local"}, {Key: "afterClusterTime", Value: bson.Timestamp{T: 50, I: 1}}}}}, 2},
		{bson.D{{Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "local"}, {Key: "afterOpTime", Value: bson.D{{Key: "ts", Value: bson.Timestamp{T: 50, I: 1}}, {Key: "t", Value: 1}}}}}}, 2},
	} {
		_, err := runCmd(client, "admin", append(bson.D{{Key: "setDefaultRWConcern", Value: 1}}, tc.cmd...))
		requireCode(t, err, tc.code, "")
	}
	if r := get(); r.Lookup("defaultWriteConcernSource").StringValue() != "implicit" || r.Lookup("updateOpTime").Type != 0 {
		t.Fatalf("a refused setDefaultRWConcern changed the defaults: %s", r)
	}
	// unsetting a write concern never set is allowed
	if _, err := runCmd(client, "admin", bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultWriteConcern", Value: bson.D{}}}); err != nil {
		t.Fatal(err)
	}
	set, err := runCmd(client, "admin", bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 1}, {Key: "j", Value: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := bson.Raw(set.Lookup("defaultWriteConcern").Document()).String(); got != `{"w": {"$numberInt":"1"},"j": true,"wtimeout": {"$numberInt":"0"}}` ||
		set.Lookup("defaultWriteConcernSource").StringValue() != "global" || set.Lookup("defaultReadConcernSource").StringValue() != "implicit" ||
		set.Lookup("updateOpTime").Type != bson.TypeTimestamp || set.Lookup("updateWallClockTime").Type != bson.TypeDateTime {
		t.Errorf("setDefaultRWConcern w: 1, j: true: %s", set)
	}
	if _, err := runCmd(client, "admin", bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "majority"}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = runCmd(client, "admin", bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultWriteConcern", Value: bson.D{}}})
	requireCode(t, err, 20, "IllegalOperation")
	// an empty default read concern unsets it
	if r, err := runCmd(client, "admin", bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultReadConcern", Value: bson.D{}}}); err != nil ||
		r.Lookup("defaultReadConcernSource").StringValue() != "implicit" || r.Lookup("defaultWriteConcernSource").StringValue() != "global" {
		t.Fatalf("unsetting the read concern: %v %v", r, err)
	}
	if _, err := runCmd(client, "admin", bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultReadConcern", Value: bson.D{{Key: "level", Value: "majority"}}}}); err != nil {
		t.Fatal(err)
	}
	if r := get(bson.E{Key: "inMemory", Value: true}); !r.Lookup("inMemory").Boolean() || r.Lookup("defaultReadConcernSource").StringValue() != "global" ||
		bson.Raw(r.Lookup("defaultReadConcern").Document()).String() != `{"level": "majority"}` {
		t.Errorf("inMemory: %s", r)
	}
	var stored bson.Raw
	if err := client.Database("config").Collection("settings").FindOne(t.Context(), bson.D{{Key: "_id", Value: "ReadWriteConcernDefaults"}}).Decode(&stored); err != nil {
		t.Fatalf("config.settings: %v", err)
	}
	// the defaults are the store's: a restart keeps them
	if err := in.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	in = startInstance(t, cfg)
	client = connect(t, in)
	if r := get(); r.Lookup("defaultWriteConcernSource").StringValue() != "global" || r.Lookup("defaultReadConcernSource").StringValue() != "global" ||
		!r.Lookup("updateOpTime").Equal(stored.Lookup("updateOpTime")) {
		t.Errorf("after a restart: %s", r)
	}

	standalone := connect(t, startInstance(t, defaultConfig()))
	for _, cmd := range []bson.D{
		{{Key: "getDefaultRWConcern", Value: 1}},
		{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 1}}}},
	} {
		_, err := runCmd(standalone, "admin", cmd)
		requireCode(t, err, 51300, "")
	}
}
