package driver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestApplyOpsReplaysOplog is a differential test of applyOps against the
// oplog: a random workload on one database (inserts, operator, pipeline
// and replacement updates, upserts, deletes, a transaction, collection and
// index commands, an index of the simple collation on a collection with a
// default one among them) is logged; its entries, renamed to a second database and
// without their collection UUIDs, are applied one per applyOps command, as
// mongorestore --oplogReplay sends them; both databases must then hold the
// same collections, documents byte for byte and indexes.
func TestApplyOpsReplaysOplog(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	in := startInstance(t, cfg)
	client := connect(t, in)
	ctx := context.Background()
	applier := anyActionClient(t, client, in)
	oplog := client.Database("local").Collection("oplog.rs")
	src := client.Database("opsrc")
	for seed := uint64(1); seed <= 3; seed++ {
		if err := src.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := client.Database("opdst").Drop(ctx); err != nil {
			t.Fatal(err)
		}
		var last bson.Raw
		if err := oplog.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: -1}})).Decode(&last); err != nil {
			t.Fatal(err)
		}
		applyOpsWorkload(t, client, src, rand.New(rand.NewPCG(seed, 7)))
		entries := oplogThrough(t, oplog, last.Lookup("ts"))
		applied := 0
		for _, e := range restoreForm(t, entries) {
			op, keep := renameEntry(e, "opsrc", "opdst")
			if !keep {
				continue
			}
			if err := applier.Database("admin").RunCommand(ctx, bson.D{{Key: "applyOps", Value: bson.A{op}}}).Err(); err != nil {
				t.Fatalf("seed %d: applyOps %s: %v", seed, op, err)
			}
			applied++
		}
		want, got := dbState(t, applier.Database("opsrc")), dbState(t, applier.Database("opdst"))
		if !slices.Equal(want, got) {
			t.Fatalf("seed %d: after %d entries, the source and the replayed database differ:\n%s", seed, applied, lineDiff(want, got))
		}
		if applied < 500 {
			t.Fatalf("seed %d: only %d entries applied", seed, applied)
		}
	}
}

// oplogThrough reads the oplog's entries after ts once they end with the
// workload's last step, its collMod of a (applyOpsWorkload). An
// acknowledged write's entry may become readable a little after the
// write: on TiKV the oplog is readable up to a horizon that a transaction
// still committing holds back, or one whose writer died before it
// finished, until its lock's time to live passes; in MongoDB, an oplog
// hole.
func oplogThrough(t *testing.T, oplog *mongo.Collection, ts bson.RawValue) []bson.Raw {
	t.Helper()
	filter := bson.D{{Key: "ts", Value: bson.D{{Key: "$gt", Value: ts}}}}
	start := time.Now()
	for {
		entries := findAll(t, oplog, filter)
		if n := len(entries); n > 0 {
			if coll, _ := entries[n-1].Lookup("o", "collMod").StringValueOK(); coll == "a" {
				if waited := time.Since(start); waited > time.Second {
					t.Logf("the oplog held the workload's last entries %v after its last write", waited.Round(time.Millisecond))
				}
				return entries
			}
		}
		if time.Since(start) > 30*time.Second {
			var tail bson.Raw
			if len(entries) > 0 {
				tail = entries[len(entries)-1]
			}
			t.Fatalf("30 s after the workload, the oplog holds %d entries after %s, the last %s: not the workload's last step", len(entries), ts, tail)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// applyOpsWorkload writes randomly to db's collection a, then runs
// collection and index commands and a transaction.
func applyOpsWorkload(t *testing.T, client *mongo.Client, db *mongo.Database, r *rand.Rand) {
	ctx := context.Background()
	a := db.Collection("a")
	if err := db.CreateCollection(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	id := func() bson.D { return bson.D{{Key: "_id", Value: r.IntN(100)}} }
	for i := range 1200 {
		var err error
		switch r.IntN(10) {
		case 0, 1:
			_, err = a.InsertOne(ctx, bson.D{{Key: "_id", Value: r.IntN(100)}, {Key: "k", Value: r.IntN(10)},
				{Key: "arr", Value: bson.A{1, "two", bson.D{{Key: "x", Value: 1}}}}, {Key: "sub", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: bson.A{1.5}}}}})
		case 2:
			_, err = a.UpdateOne(ctx, id(), bson.D{{Key: "$set", Value: bson.D{{Key: "sub.a", Value: r.IntN(5)}, {Key: "arr.2.x", Value: i}, {Key: "arr.6", Value: "far"}}}})
		case 3:
			_, err = a.UpdateOne(ctx, id(), bson.D{{Key: "$push", Value: bson.D{{Key: "arr", Value: i}}}, {Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
		case 4:
			_, err = a.UpdateOne(ctx, id(), bson.D{{Key: "$unset", Value: bson.D{{Key: "sub.b", Value: ""}, {Key: "k", Value: ""}}}, {Key: "$pop", Value: bson.D{{Key: "arr", Value: -1}}}})
		case 5:
			_, err = a.ReplaceOne(ctx, id(), bson.D{{Key: "z", Value: i}, {Key: "k", Value: 3}}, options.Replace().SetUpsert(true))
		case 6:
			_, err = a.DeleteOne(ctx, id())
		case 7:
			_, err = a.UpdateOne(ctx, id(), mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "p", Value: bson.D{{Key: "$add", Value: bson.A{"$k", 1}}}}}}}})
		case 8:
			_, err = a.UpdateMany(ctx, bson.D{{Key: "k", Value: r.IntN(10)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "m", Value: i}}}, {Key: "$pull", Value: bson.D{{Key: "arr", Value: 1}}}})
		case 9:
			_, err = a.UpdateOne(ctx, id(), bson.D{{Key: "$addToSet", Value: bson.D{{Key: "tags", Value: r.IntN(4)}}}}, options.UpdateOne().SetUpsert(true))
		}
		// a random update may fail (a $pull on a field it made an
		// object): a write error, logged as nothing
		var we mongo.WriteException
		if err != nil && !errors.As(err, &we) {
			t.Fatal(err)
		}
	}
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if _, err := sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		if _, err := a.InsertOne(ctx, bson.D{{Key: "_id", Value: "txn"}, {Key: "v", Value: 1}}); err != nil {
			return nil, err
		}
		_, err := a.UpdateMany(ctx, bson.D{{Key: "k", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "t", Value: true}}}})
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { return db.CreateCollection(ctx, "tmp") },
		func() error {
			_, err := db.Collection("tmp").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
			return err
		},
		func() error { return db.Collection("tmp").Drop(ctx) },
		func() error {
			return db.CreateCollection(ctx, "b", options.CreateCollection().SetCollation(&options.Collation{Locale: "en", Strength: 2}))
		},
		func() error {
			_, err := db.Collection("b").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: "x"}})
			return err
		},
		func() error {
			// logged without a collation, which its replay must not
			// take from the collection's default
			_, err := db.Collection("b").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "v", Value: 1}}, Options: options.Index().SetCollation(&options.Collation{Locale: "simple"})})
			return err
		},
		func() error { _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); return err },
		func() error {
			return client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "opsrc.b"}, {Key: "to", Value: "opsrc.c"}, {Key: "dropTarget", Value: true}}).Err()
		},
		func() error {
			_, err := a.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "z", Value: -1}}, Options: options.Index().SetSparse(true).SetName("zs")})
			return err
		},
		func() error { return a.Indexes().DropOne(ctx, "k_1") },
		func() error {
			return db.CreateView(ctx, "v", "a", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "k", Value: 3}}}}})
		},
		func() error {
			return db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "v"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}}).Err()
		},
		func() error { return db.CreateView(ctx, "w", "a", mongo.Pipeline{}) },
		func() error { return db.Collection("w").Drop(ctx) },
		func() error {
			return db.CreateCollection(ctx, "ts", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m")))
		},
		func() error {
			_, err := db.Collection("ts").InsertOne(ctx, bson.D{{Key: "t", Value: time.Unix(1700000000, 0)}, {Key: "m", Value: 1}, {Key: "v", Value: 2}})
			return err
		},
		func() error {
			return db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "a"}, {Key: "validator", Value: bson.D{{Key: "z", Value: bson.D{{Key: "$exists", Value: true}}}}}, {Key: "validationLevel", Value: "moderate"}}).Err()
		},
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
}

// renameEntry is an oplog entry of database from as applyOps takes it for
// database to: its namespaces renamed (those inside a command and a
// transaction's entries too) and its collection UUIDs left out. keep is
// false for an entry of another database.
func renameEntry(e bson.Raw, from, to string) (bson.D, bool) {
	var d bson.D
	if err := bson.Unmarshal(e, &d); err != nil {
		panic(err)
	}
	var out bson.D
	keep := false
	for _, f := range d {
		switch f.Key {
		case "ui":
			continue
		case "ns":
			ns := f.Value.(string)
			if strings.HasPrefix(ns, from+".") {
				keep = true
				f.Value = to + strings.TrimPrefix(ns, from)
			}
		case "o", "o2":
			f.Value, keep = renameValue(f.Value, from, to, keep)
		}
		out = append(out, f)
	}
	return out, keep
}

// restoreForm is entries as mongorestore --oplogReplay applies them: a
// two-phase index build's commitIndexBuild as its indexes' createIndexes,
// its startIndexBuild (and abortIndexBuild) skipped, since applyOps
// refuses them as MongoDB's does.
func restoreForm(t *testing.T, entries []bson.Raw) []bson.Raw {
	t.Helper()
	var out []bson.Raw
	for _, e := range entries {
		o, _ := e.Lookup("o").DocumentOK()
		switch first := cmdKey(o); first {
		case "startIndexBuild", "abortIndexBuild":
			continue
		case "commitIndexBuild":
			vals, _ := o.Lookup("indexes").Array().Values()
			for _, v := range vals {
				create := bson.D{{Key: "createIndexes", Value: o.Lookup(first).StringValue()}}
				var spec bson.D
				if err := bson.Unmarshal(v.Document(), &spec); err != nil {
					t.Fatal(err)
				}
				out = append(out, mustRaw(t, bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: e.Lookup("ns").StringValue()}, {Key: "o", Value: append(create, spec...)}}))
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

// cmdKey is a command entry's o's first key.
func cmdKey(o bson.Raw) string {
	if el, err := o.IndexErr(0); err == nil {
		return el.Key()
	}
	return ""
}

// renameValue renames the namespaces in a command entry's o: strings
// naming a collection of from, and the entries of an applyOps.
func renameValue(v any, from, to string, keep bool) (any, bool) {
	switch v := v.(type) {
	case string:
		if strings.HasPrefix(v, from+".") {
			return to + strings.TrimPrefix(v, from), keep
		}
	case bson.D:
		for i := range v {
			if v[i].Key == "applyOps" {
				var arr bson.A
				for _, inner := range v[i].Value.(bson.A) {
					op, k := renameEntry(mustMarshal(inner), from, to)
					keep = keep || k
					arr = append(arr, op)
				}
				v[i].Value = arr
				continue
			}
			v[i].Value, keep = renameValue(v[i].Value, from, to, keep)
		}
	}
	return v, keep
}

func mustMarshal(v any) bson.Raw {
	b, err := bson.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// lineDiff lists the lines only a has (-) and only b has (+).
func lineDiff(a, b []string) string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// dbState lists a database's collections and views with their options,
// and the collections' documents in _id order (their bytes) and indexes,
// one line each.
func dbState(t *testing.T, db *mongo.Database) []string {
	ctx := context.Background()
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range specs {
		out = append(out, fmt.Sprintf("%s %s %s", s.Type, s.Name, s.Options))
		if s.Type != "collection" {
			continue
		}
		c := db.Collection(s.Name)
		for _, d := range findAll(t, c, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})) {
			// a view's definition names it with its database
			out = append(out, "  "+strings.ReplaceAll(d.String(), `"`+db.Name()+`.`, `"<db>.`))
		}
		cur, err := c.Indexes().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var idx []bson.Raw
		if err := cur.All(ctx, &idx); err != nil {
			t.Fatal(err)
		}
		for _, i := range idx {
			out = append(out, fmt.Sprintf("  index %s", i))
		}
	}
	return out
}

// applyOpsCase is one row of testdata/applyops.json: the documents and
// unique indexes of applyops.c before (none: the collection does not
// exist) and its validator, the command, run against admin, and the reply fields, code, or
// documents of applyops.c after that it must give; authCode is the code
// under access control when it differs (an empty applyOps needs every
// privilege, which root lacks).
type applyOpsCase struct {
	Name      string     `bson:"name"`
	NoColl    bool       `bson:"noColl"`
	Docs      []bson.Raw `bson:"docs"`
	Unique    []string   `bson:"unique"`
	Validator bson.Raw   `bson:"validator"`
	Cmd       bson.Raw   `bson:"cmd"`
	Code      int        `bson:"code"`
	AuthCode  int        `bson:"authCode"`
	Reply     bson.Raw   `bson:"reply"`
	After     []bson.Raw `bson:"after"`
	Indexes   []string   `bson:"indexes"`
	Colls     []string   `bson:"colls"`
}

// TestApplyOpsCases runs testdata/applyops.json: the replies, codes and
// effects of applyOps entries, as MongoDB 7.0 gives them.
func TestApplyOpsCases(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "applyops.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []applyOpsCase `bson:"cases"`
	}
	if err := bson.UnmarshalExtJSON(append(append([]byte(`{"cases":`), data...), '}'), false, &file); err != nil {
		t.Fatal(err)
	}
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database("applyops")
	for _, tc := range file.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			if err := db.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			c := db.Collection("c")
			if !tc.NoColl {
				opts := options.CreateCollection()
				if tc.Validator != nil {
					opts.SetValidator(tc.Validator)
				}
				if err := db.CreateCollection(ctx, "c", opts); err != nil {
					t.Fatal(err)
				}
				for _, f := range tc.Unique {
					if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: f, Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
						t.Fatal(err)
					}
				}
				if len(tc.Docs) > 0 {
					seed(t, c, tc.Docs)
				}
			}
			reply, err := client.Database("admin").RunCommand(ctx, tc.Cmd).Raw()
			if tc.AuthCode != 0 && testAuth() {
				tc.Code, tc.Reply = tc.AuthCode, nil
			}
			if tc.Code != 0 {
				var ce mongo.CommandError
				if !errors.As(err, &ce) || int(ce.Code) != tc.Code {
					t.Fatalf("got %v, want code %d", err, tc.Code)
				}
				reply = ce.Raw
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.Reply != nil {
				elems, _ := tc.Reply.Elements()
				for _, e := range elems {
					if got := reply.Lookup(e.Key()); !got.Equal(e.Value()) {
						t.Errorf("reply %s: %s, want %s (reply %s)", e.Key(), got, e.Value(), reply)
					}
				}
			}
			if tc.After != nil {
				got := findAll(t, c, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
				if !slices.EqualFunc(got, tc.After, func(a, b bson.Raw) bool { return bytes.Equal(a, b) }) {
					t.Errorf("documents %v, want %v", got, tc.After)
				}
			}
			if tc.Indexes != nil {
				specs, err := c.Indexes().ListSpecifications(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, s := range specs {
					names = append(names, s.Name)
				}
				if !slices.Equal(names, tc.Indexes) {
					t.Errorf("indexes %v, want %v", names, tc.Indexes)
				}
			}
			if tc.Colls != nil {
				names, err := db.ListCollectionNames(ctx, bson.D{})
				if err != nil {
					t.Fatal(err)
				}
				slices.Sort(names)
				if !slices.Equal(names, tc.Colls) {
					t.Errorf("collections %v, want %v", names, tc.Colls)
				}
			}
		})
	}
}

// TestApplyOpsCreateWithUUID: a create entry with a ui creates the
// collection with that UUID (mongorestore --preserveUUID and
// --oplogReplay send them), which listCollections then reports and later
// entries' ui match, also after a restart; the same entry applied again
// changes nothing. The cases where MongoDB would move another collection
// aside or rename one are refused with NotImplemented.
func TestApplyOpsCreateWithUUID(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	in := startInstance(t, cfg)
	client := dial(t, in)
	ctx := context.Background()
	const db = "applyops_uuid"
	u1 := bson.Binary{Subtype: bson.TypeBinaryUUID, Data: []byte("0123456789abcdef")}
	u2 := bson.Binary{Subtype: bson.TypeBinaryUUID, Data: []byte("fedcba9876543210")}
	apply := func(client *mongo.Client, ops ...bson.D) error {
		return client.Database("admin").RunCommand(ctx, bson.D{{Key: "applyOps", Value: ops}}).Err()
	}
	create := func(coll string, ui bson.Binary) bson.D {
		return bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: db + ".$cmd"}, {Key: "ui", Value: ui}, {Key: "o", Value: bson.D{{Key: "create", Value: coll}}}}
	}
	insert := bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: db + ".a"}, {Key: "ui", Value: u1}, {Key: "o", Value: bson.D{{Key: "_id", Value: 1}}}}
	for range 2 {
		// a create among other entries needs every privilege
		if err := apply(client, create("a", u1)); err != nil {
			t.Fatal(err)
		}
		if err := apply(client, insert); err != nil {
			t.Fatal(err)
		}
	}
	requireCode(t, apply(client, create("b", u1)), 238, "NotImplemented")
	requireCode(t, apply(client, create("a", u2)), 238, "NotImplemented")
	check := func(client *mongo.Client) {
		t.Helper()
		specs, err := client.Database(db).ListCollectionSpecifications(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		if len(specs) != 1 || specs[0].Name != "a" || specs[0].UUID == nil || !bytes.Equal(specs[0].UUID.Data, u1.Data) {
			t.Fatalf("collections %+v, want a alone with UUID %x", specs, u1.Data)
		}
		if n, err := client.Database(db).Collection("a").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
			t.Fatalf("a holds %d documents (%v), want 1", n, err)
		}
	}
	check(client)
	client.Disconnect(ctx)
	client = dial(t, restart(t, in, cfg))
	defer client.Disconnect(ctx)
	check(client)
	if err := apply(client, insert); err != nil {
		t.Fatalf("an entry with the collection's ui after a restart: %v", err)
	}
}

// anyActionClient is a client of in allowed anyAction on anyResource: with
// access control (testAuth) a new user's, since writes of system.views
// through applyOps take more than root holds (MongoDB's manual has oplog
// replays run by such a user); client itself otherwise.
func anyActionClient(t *testing.T, client *mongo.Client, in *instance.Instance) *mongo.Client {
	t.Helper()
	if !testAuth() {
		return client
	}
	for _, cmd := range []bson.D{
		{{Key: "createRole", Value: "replayer"}, {Key: "privileges", Value: bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "anyResource", Value: true}}}, {Key: "actions", Value: bson.A{"anyAction"}}}}}, {Key: "roles", Value: bson.A{}}},
		{{Key: "createUser", Value: "replayer"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"replayer"}}},
	} {
		if _, err := runCmd(client, "admin", cmd); err != nil {
			t.Fatal(err)
		}
	}
	return connectAs(t, in, "replayer", "pw", "admin", "")
}
