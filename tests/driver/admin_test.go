package driver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestReplicaSetCommands checks what rs.status() and rs.conf() read: one
// healthy primary, named as hello names it.
func TestReplicaSetCommands(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "rs0"
	in := startInstance(t, cfg)
	client := connect(t, in)
	admin := client.Database("admin")
	ctx := context.Background()
	var status struct {
		Set     string `bson:"set"`
		MyState int    `bson:"myState"`
		Members []struct {
			Name     string `bson:"name"`
			StateStr string `bson:"stateStr"`
			Self     bool   `bson:"self"`
		} `bson:"members"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&status); err != nil {
		t.Fatal(err)
	}
	if status.Set != "rs0" || status.MyState != 1 || len(status.Members) != 1 || status.Members[0].StateStr != "PRIMARY" || !status.Members[0].Self || status.Members[0].Name != in.Addr() {
		t.Fatalf("replSetGetStatus %+v", status)
	}
	var conf struct {
		Config struct {
			ID      string `bson:"_id"`
			Members []struct {
				Host string `bson:"host"`
			} `bson:"members"`
		} `bson:"config"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "replSetGetConfig", Value: 1}}).Decode(&conf); err != nil {
		t.Fatal(err)
	}
	if conf.Config.ID != "rs0" || len(conf.Config.Members) != 1 || conf.Config.Members[0].Host != in.Addr() {
		t.Fatalf("replSetGetConfig %+v", conf)
	}
	standalone, _ := startServer(t)
	err := standalone.Database("admin").RunCommand(ctx, bson.D{{Key: "replSetGetStatus", Value: 1}}).Err()
	if serverCode(err) != 76 {
		t.Fatalf("replSetGetStatus on a standalone: %v, want 76", err)
	}
}

// TestCollModIndex hides an index (the planner stops using it) and changes
// a TTL, with the old and new values in the reply.
func TestCollModIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("cm")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "at", Value: 1}}, Options: optionsTTL(60)},
	}); err != nil {
		t.Fatal(err)
	}
	find := bson.D{{Key: "find", Value: "cm"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}}
	if index, _, _, _ := explainStats(t, db, find); index != "a_1" {
		t.Fatalf("before hiding: index %q", index)
	}
	var hidden struct {
		Old bool `bson:"hidden_old"`
		New bool `bson:"hidden_new"`
	}
	cmd := bson.D{{Key: "collMod", Value: "cm"}, {Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "hidden", Value: true}}}}
	if err := db.RunCommand(ctx, cmd).Decode(&hidden); err != nil || hidden.Old || !hidden.New {
		t.Fatalf("collMod hidden: %+v %v", hidden, err)
	}
	if index, _, _, _ := explainStats(t, db, find); index != "" {
		t.Fatalf("a hidden index was used: %q", index)
	}
	var ttl struct {
		Old int64 `bson:"expireAfterSeconds_old"`
		New int64 `bson:"expireAfterSeconds_new"`
	}
	cmd = bson.D{{Key: "collMod", Value: "cm"}, {Key: "index", Value: bson.D{{Key: "keyPattern", Value: bson.D{{Key: "at", Value: 1}}}, {Key: "expireAfterSeconds", Value: 120}}}}
	if err := db.RunCommand(ctx, cmd).Decode(&ttl); err != nil || ttl.Old != 60 || ttl.New != 120 {
		t.Fatalf("collMod TTL: %+v %v", ttl, err)
	}
	cmd = bson.D{{Key: "collMod", Value: "cm"}, {Key: "index", Value: bson.D{{Key: "name", Value: "nope"}, {Key: "hidden", Value: true}}}}
	if err := db.RunCommand(ctx, cmd).Err(); serverCode(err) != 27 {
		t.Fatalf("collMod of a missing index: %v, want 27", err)
	}
	// a TTL on an index kind that takes none
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "t", Value: "text"}}}); err != nil {
		t.Fatal(err)
	}
	cmd = bson.D{{Key: "collMod", Value: "cm"}, {Key: "index", Value: bson.D{{Key: "name", Value: "t_text"}, {Key: "expireAfterSeconds", Value: 100}}}}
	if err := db.RunCommand(ctx, cmd).Err(); serverCode(err) != 72 {
		t.Fatalf("collMod TTL of a text index: %v, want 72", err)
	}
	// The _id index is found, and is unique already: nothing changes.
	for _, change := range []bson.E{{Key: "unique", Value: true}, {Key: "prepareUnique", Value: true}} {
		cmd = bson.D{{Key: "collMod", Value: "cm"}, {Key: "index", Value: bson.D{{Key: "name", Value: "_id_"}, change}}}
		if out, err := db.RunCommand(ctx, cmd).Raw(); err != nil || out.Lookup("unique_new").Type != 0 || out.Lookup("prepareUnique_new").Type != 0 {
			t.Fatalf("collMod %s of the _id index: %v %v", change.Key, out, err)
		}
	}
}

// TestCurrentOpStage checks db.currentOp()'s way in: {aggregate: 1} on
// admin with a leading $currentOp stage, filtered by a later $match.
func TestCurrentOpStage(t *testing.T) {
	client, _ := startServer(t)
	cur, err := client.Database("admin").Aggregate(context.Background(), mongo.Pipeline{
		{{Key: "$currentOp", Value: bson.D{}}},
		{{Key: "$match", Value: bson.D{{Key: "command.aggregate", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ops []bson.Raw
	if err := cur.All(context.Background(), &ops); err != nil || len(ops) != 1 {
		t.Fatalf("ops %v (%v), want the aggregate itself", ops, err)
	}
}

func optionsTTL(seconds int32) *options.IndexOptionsBuilder {
	return options.Index().SetExpireAfterSeconds(seconds)
}

// TestConvertIndexToUnique follows the manual's conversion of an index to
// unique (prepareUnique, a dry run listing the duplicates, the conversion)
// through the driver: the reply fields of each collMod, the violations
// beside error 359, the specs listIndexes reports, and DuplicateKey for a
// new duplicate before and after; then back with forceNonUnique.
func TestConvertIndexToUnique(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("apples")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "type", Value: "Delicious"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "type", Value: "Macintosh"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "type", Value: "Delicious"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "type", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	collMod := func(index bson.D, extra ...bson.E) (bson.Raw, error) {
		cmd := append(bson.D{{Key: "collMod", Value: "apples"}, {Key: "index", Value: index}}, extra...)
		return db.RunCommand(ctx, cmd).Raw()
	}
	key := bson.E{Key: "keyPattern", Value: bson.D{{Key: "type", Value: 1}}}
	specs := func() string {
		t.Helper()
		var ixs []bson.Raw
		cur, err := coll.Indexes().List(ctx)
		if err == nil {
			err = cur.All(ctx, &ixs)
		}
		if err != nil || len(ixs) != 2 {
			t.Fatalf("listIndexes: %v %v", ixs, err)
		}
		return ixs[1].String()
	}
	reply := func(r bson.Raw) string {
		d := bson.D{}
		elems, _ := r.Elements()
		for _, el := range elems {
			if strings.HasSuffix(el.Key(), "_old") || strings.HasSuffix(el.Key(), "_new") {
				d = append(d, bson.E{Key: el.Key(), Value: el.Value()})
			}
		}
		return mustRaw(t, d).String()
	}
	if _, err := collMod(bson.D{key, {Key: "unique", Value: true}}); serverCode(err) != 72 {
		t.Fatalf("unique without prepareUnique: %v, want 72", err)
	}
	r, err := collMod(bson.D{key, {Key: "prepareUnique", Value: true}})
	if err != nil || reply(r) != `{"prepareUnique_old": false,"prepareUnique_new": true}` {
		t.Fatalf("prepareUnique: %s %v", r, err)
	}
	if got := specs(); got != `{"v": {"$numberInt":"2"},"key": {"type": {"$numberInt":"1"}},"name": "type_1","prepareUnique": true}` {
		t.Fatalf("spec under prepareUnique: %s", got)
	}
	if r, err := collMod(bson.D{key, {Key: "prepareUnique", Value: true}}); err != nil || reply(r) != `{}` {
		t.Fatalf("prepareUnique again (a no-op, unreported): %s %v", r, err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "type", Value: "Delicious"}}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("new duplicate under prepareUnique: %v", err)
	}
	for _, dry := range []bson.E{{Key: "dryRun", Value: true}, {Key: "dryRun", Value: false}} {
		_, err := collMod(bson.D{key, {Key: "unique", Value: true}}, dry)
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 359 || ce.Name != "CannotConvertIndexToUnique" ||
			ce.Raw.Lookup("violations").String() != `[{"ids": [{"$numberInt":"1"},{"$numberInt":"3"}]}]` {
			t.Fatalf("conversion over duplicates (%v): %v", dry, err)
		}
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	if r, err := collMod(bson.D{key, {Key: "unique", Value: true}}, bson.E{Key: "dryRun", Value: true}); err != nil || reply(r) != `{}` {
		t.Fatalf("dry run: %s %v", r, err)
	}
	r, err = collMod(bson.D{key, {Key: "unique", Value: true}})
	if err != nil || reply(r) != `{"unique_new": true}` {
		t.Fatalf("conversion: %s %v", r, err)
	}
	if got := specs(); got != `{"v": {"$numberInt":"2"},"key": {"type": {"$numberInt":"1"}},"name": "type_1","unique": true}` {
		t.Fatalf("spec once unique: %s", got)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "type", Value: "Macintosh"}}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("duplicate of a unique index: %v", err)
	}
	var found bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "type", Value: "Macintosh"}}).Decode(&found); err != nil || found.Lookup("_id").Int32() != 2 {
		t.Fatalf("find through the converted index: %s %v", found, err)
	}
	if _, err := collMod(bson.D{key, {Key: "unique", Value: false}}); serverCode(err) != 2 {
		t.Fatalf("unique: false: %v, want 2", err)
	}
	// and back (collmod_convert_index_uniqueness.js): forceNonUnique
	if _, err := collMod(bson.D{key, {Key: "forceNonUnique", Value: false}}); serverCode(err) != 2 {
		t.Fatalf("forceNonUnique: false: %v, want 2", err)
	}
	if _, err := collMod(bson.D{key, {Key: "unique", Value: true}, {Key: "forceNonUnique", Value: true}}); serverCode(err) != 72 {
		t.Fatalf("unique with forceNonUnique: %v, want 72", err)
	}
	r, err = collMod(bson.D{key, {Key: "forceNonUnique", Value: true}})
	if err != nil || reply(r) != `{"forceNonUnique_new": true}` {
		t.Fatalf("forceNonUnique: %s %v", r, err)
	}
	if got := specs(); got != `{"v": {"$numberInt":"2"},"key": {"type": {"$numberInt":"1"}},"name": "type_1"}` {
		t.Fatalf("spec once non-unique: %s", got)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "type", Value: "Macintosh"}}); err != nil {
		t.Fatalf("duplicate once non-unique: %v", err)
	}
	if r, err := collMod(bson.D{key, {Key: "forceNonUnique", Value: true}}); err != nil || reply(r) != `{}` {
		t.Fatalf("forceNonUnique again (a no-op, unreported): %s %v", r, err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "type", Value: "Macintosh"}}, options.Count().SetHint("type_1")); err != nil || n != 2 {
		t.Fatalf("count through the index made non-unique: %d %v", n, err)
	}
}

// TestDropConnections: dropConnections parses its hosts as MongoDB's
// HostAndPort and closes egress connections only, of which Folio has
// none; the client's own connection, to the host named, stays open.
func TestDropConnections(t *testing.T) {
	in := startInstance(t, defaultConfig())
	client := connect(t, in)
	ctx := context.Background()
	admin := client.Database("admin")
	created := func() int64 {
		status, err := admin.RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return status.Lookup("connections", "totalCreated").AsInt64()
	}
	before := created()
	if err := admin.RunCommand(ctx, bson.D{{Key: "dropConnections", Value: 1}, {Key: "hostAndPort", Value: bson.A{in.Addr()}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if after := created(); after != before {
		t.Errorf("connections created: %d after dropConnections of the server's address, %d before", after, before)
	}
	for _, tc := range []struct {
		hosts any
		code  int
	}{
		{bson.A{}, 0},
		{bson.A{"db1.example:27017", "[::1]:27018", "10.0.0.1:1", "hostonly", nil}, 0},
		{bson.A{":27017"}, 9},
		{bson.A{""}, 9},
		{bson.A{"h:"}, 9},
		{bson.A{"h:0"}, 9},
		{bson.A{"h:65536"}, 9},
		{bson.A{"h:-1"}, 9},
		{bson.A{"h:8x"}, 9},
		{bson.A{"h:1:2"}, 9},
		{bson.A{"x[::1]:1"}, 9},
		{bson.A{"[::1"}, 9},
		{bson.A{"[::1]x:1"}, 9},
		{bson.A{"h]:1"}, 9},
		{bson.A{"h:99999999999"}, 15},
		{bson.A{1}, 14},
		{bson.A{"h:1", bson.A{}}, 14},
		{"h:1", 14},
		// hostAndPort is an IDL array<HostAndPort>, whose parser reads
		// a null with BSONElement::Obj()
		{nil, 10065},
	} {
		cmd := bson.D{{Key: "dropConnections", Value: 1}, {Key: "hostAndPort", Value: tc.hosts}}
		if got := serverCode(admin.RunCommand(ctx, cmd).Err()); got != tc.code {
			t.Errorf("hostAndPort %v: code %d, want %d", tc.hosts, got, tc.code)
		}
	}
	unknown := bson.D{{Key: "dropConnections", Value: 1}, {Key: "hostAndPort", Value: bson.A{}}, {Key: "x", Value: 1}}
	requireCode(t, admin.RunCommand(ctx, unknown).Err(), 40415, "Location40415")
	elsewhere := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "dropConnections", Value: 1}, {Key: "hostAndPort", Value: bson.A{}}}).Err()
	requireCode(t, elsewhere, 13, "Unauthorized")
}
