package driver_test

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestIndexVersion1: an index created with v: 1 is listed with v: 1, has
// no collation even on a collection with a default one, refuses every
// decimal key (nested ones too) with UnsupportedFormat as MongoDB's
// KeyString V0 does, and otherwise serves queries as a version 2 index;
// v is not part of an index's identity; a restart keeps the version.
func TestIndexVersion1(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	in, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := connect(t, in).Database(testDB)
	ctx := t.Context()
	if err := db.CreateCollection(ctx, "v1", options.CreateCollection().SetCollation(&options.Collation{Locale: "en", Strength: 2})); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("v1")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: int64(1) << 60}, {Key: "s", Value: "x"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: int64(1)<<60 + 1}, {Key: "s", Value: "X"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: 2.5}, {Key: "s", Value: "y"}},
	}); err != nil {
		t.Fatal(err)
	}
	create := func(name string, key bson.D, extra ...bson.E) bson.Raw {
		t.Helper()
		spec := append(bson.D{{Key: "key", Value: key}, {Key: "name", Value: name}}, extra...)
		res, err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "v1"}, {Key: "indexes", Value: bson.A{spec}}}).Raw()
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return res
	}
	create("a_1", bson.D{{Key: "a", Value: int32(1)}}, bson.E{Key: "v", Value: int32(1)})
	create("s_1", bson.D{{Key: "s", Value: int32(1)}}, bson.E{Key: "v", Value: 1.0})
	create("t_1", bson.D{{Key: "t", Value: int32(1)}})

	specs := indexSpecs(t, coll)
	for name, want := range map[string]int32{"a_1": 1, "s_1": 1, "t_1": 2, "_id_": 2} {
		if v, ok := specs[name].Lookup("v").Int32OK(); !ok || v != want {
			t.Errorf("%s: v is %v, want %d", name, specs[name].Lookup("v"), want)
		}
	}
	if c := specs["s_1"].Lookup("collation"); c.Type != 0 {
		t.Errorf("a version 1 index inherited the collection's collation: %s", specs["s_1"])
	}
	if c, ok := specs["t_1"].Lookup("collation").DocumentOK(); !ok || c.Lookup("strength").Int32() != 2 {
		t.Errorf("a version 2 index did not inherit the collection's collation: %s", specs["t_1"])
	}

	// the version 1 index keeps NumberLongs beyond 2^53 apart, as V0 does
	got := findAll(t, coll, bson.D{{Key: "a", Value: int64(1)<<60 + 1}}, options.Find().SetHint("a_1"))
	if len(got) != 1 || got[0].Lookup("_id").Int32() != 2 {
		t.Errorf("a equality through the version 1 index found %v", got)
	}

	decimal, _ := bson.ParseDecimal128("42")
	for _, doc := range []bson.D{
		{{Key: "_id", Value: 10}, {Key: "a", Value: decimal}},
		{{Key: "_id", Value: 11}, {Key: "a", Value: bson.D{{Key: "x", Value: decimal}}}},
		{{Key: "_id", Value: 12}, {Key: "a", Value: bson.A{1, bson.A{decimal}}}},
	} {
		_, err := coll.InsertOne(ctx, doc)
		requireWriteError(t, err, 12, "Index version does not support NumberDecimal")
	}
	_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: decimal}}}})
	requireWriteError(t, err, 12, "Index version does not support NumberDecimal")
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 3 {
		t.Errorf("%d documents after the refused writes, want 3", n)
	}
	if got := findAll(t, coll, bson.D{{Key: "_id", Value: 3}}); len(got) != 1 || got[0].Lookup("a").Double() != 2.5 {
		t.Errorf("the refused update changed the document: %v", got)
	}
	// a decimal outside the version 1 index's fields is stored
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 13}, {Key: "t", Value: decimal}}); err != nil {
		t.Fatal(err)
	}
	// a version 1 index cannot be built over a decimal
	_, err = db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "v1"}, {Key: "indexes", Value: bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: int32(-1)}}}, {Key: "name", Value: "t_-1"}, {Key: "v", Value: int32(1)}},
	}}}).Raw()
	requireError(t, err, 12, "UnsupportedFormat", "Index version does not support NumberDecimal")

	// nor can a version 1 text index's other fields hold one, when the
	// document has terms to index
	if _, err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "v1text"}, {Key: "indexes", Value: bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "p", Value: int32(1)}, {Key: "t", Value: "text"}}}, {Key: "name", Value: "p_text"}, {Key: "v", Value: int32(1)}},
	}}}).Raw(); err != nil {
		t.Fatal(err)
	}
	texts := db.Collection("v1text")
	_, err = texts.InsertOne(ctx, bson.D{{Key: "p", Value: decimal}, {Key: "t", Value: "some words"}})
	requireWriteError(t, err, 12, "Index version does not support NumberDecimal")
	if _, err := texts.InsertOne(ctx, bson.D{{Key: "p", Value: decimal}, {Key: "t", Value: "the"}}); err != nil {
		t.Errorf("a document with no terms holds no key, so its decimal is stored: %v", err)
	}

	// v is not part of an index's identity: asking again for a version 1
	// index as version 2 (on a collection without a default collation,
	// which a version 2 index would inherit) finds it
	plain := func(v ...bson.E) bson.Raw {
		t.Helper()
		spec := append(bson.D{{Key: "key", Value: bson.D{{Key: "b", Value: int32(1)}}}, {Key: "name", Value: "b_1"}}, v...)
		res, err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "v1plain"}, {Key: "indexes", Value: bson.A{spec}}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	plain(bson.E{Key: "v", Value: int32(1)})
	if res := plain(); res.Lookup("note").StringValue() != "all indexes already exist" {
		t.Errorf("asking for b_1 again as version 2 answered %s", res)
	}

	in = restart(t, in, cfg)
	coll = connect(t, in).Database(testDB).Collection("v1")
	_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 20}, {Key: "a", Value: decimal}})
	requireWriteError(t, err, 12, "Index version does not support NumberDecimal")
	if v := indexSpecs(t, coll)["a_1"].Lookup("v"); v.Int32() != 1 {
		t.Errorf("after a restart a_1 is listed with v %s", v)
	}
}

// requireWriteError fails the test unless err is a write exception whose
// first write error has code and message msg.
func requireWriteError(t testing.TB, err error, code int, msg string) {
	t.Helper()
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) == 0 {
		t.Fatalf("got %v, want a write error", err)
	}
	if got := we.WriteErrors[0]; got.Code != code || got.Message != msg {
		t.Fatalf("got write error %d %q, want %d %q", got.Code, got.Message, code, msg)
	}
}

// indexSpecs are the specifications listIndexes gives for coll, by name.
func indexSpecs(t *testing.T, coll *mongo.Collection) map[string]bson.Raw {
	t.Helper()
	cur, err := coll.Indexes().List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.Raw
	if err := cur.All(t.Context(), &all); err != nil {
		t.Fatal(err)
	}
	specs := map[string]bson.Raw{}
	for _, s := range all {
		specs[s.Lookup("name").StringValue()] = s
	}
	return specs
}

// TestIDIndexVersion1: create with idIndex {v: 1}, as mongorestore sends
// it for an old server's dump with --keepIndexVersion or --preserveUUID,
// makes a collection whose _id index is version 1, in listIndexes and
// listCollections and across a restart, which refuses a new document
// whose _id holds a Decimal128 (UnsupportedFormat), by insert and by
// upsert; other fields may hold decimals. With a collation it is refused.
func TestIDIndexVersion1(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	in := startInstance(t, cfg)
	client := dial(t, in)
	ctx := t.Context()
	db := client.Database(testDB)
	idIndex := bson.D{{Key: "v", Value: int32(1)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "id1"}, {Key: "idIndex", Value: idIndex}}).Err(); err != nil {
		t.Fatal(err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "id1c"}, {Key: "idIndex", Value: idIndex},
		{Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}}).Err()
	requireCode(t, err, 238, "NotImplemented")
	dec, _ := bson.ParseDecimal128("1.5")
	check := func(client *mongo.Client) {
		t.Helper()
		coll := client.Database(testDB).Collection("id1")
		if v := indexSpecs(t, coll)["_id_"].Lookup("v"); v.Int32() != 1 {
			t.Errorf("_id_ index version %s, want 1", v)
		}
		specs, err := client.Database(testDB).ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "id1"}})
		if err != nil || len(specs) != 1 || specs[0].IDIndex.Version != 1 {
			t.Errorf("listCollections: %+v (%v), want idIndex v 1", specs, err)
		}
		_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "n", Value: dec}}}})
		requireCode(t, err, 12, "UnsupportedFormat")
		_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: dec}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
		requireCode(t, err, 12, "UnsupportedFormat")
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "x", Value: dec}}); err != nil {
			t.Errorf("a decimal outside _id: %v", err)
		}
	}
	check(client)
	client.Disconnect(ctx)
	client = dial(t, restart(t, in, cfg))
	defer client.Disconnect(ctx)
	check(client)
}

// TestIDIndexNamed: create's idIndex may name the _id index otherwise; the
// index is named _id_ all the same (IndexCatalogImpl::_fixIndexSpec), and
// an idIndex whose collation is not the collection's is refused.
func TestIDIndexNamed(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	idIndex := bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "a_1"}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "idnamed"}, {Key: "idIndex", Value: idIndex}}).Err(); err != nil {
		t.Fatal(err)
	}
	specs := indexSpecs(t, db.Collection("idnamed"))
	if _, ok := specs["_id_"]; !ok || len(specs) != 1 {
		t.Errorf("indexes %v, want _id_ alone", specs)
	}
	idIndex = bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "_id_"},
		{Key: "collation", Value: bson.D{{Key: "locale", Value: "en_US"}}}}
	err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "idcoll"}, {Key: "idIndex", Value: idIndex}}).Err()
	requireCode(t, err, 2, "BadValue")
}

// TestIDIndexCollationCreateIndexes: createIndexes of the _id key pattern
// with a collation other than the collection's default fails with
// BadValue, though the _id index exists (MongoDB's
// addCollationDefaultsToIndexSpecsForCreate, before the existing indexes
// are looked at); one naming the default, or none, asks for the _id index
// there (indexes_multiple_commands.js, index_id_options.js).
func TestIDIndexCollationCreateIndexes(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	enUS := bson.D{{Key: "locale", Value: "en_US"}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "idcollen"}, {Key: "collation", Value: enUS}}).Err(); err != nil {
		t.Fatal(err)
	}
	create := func(coll string, collation any) error {
		spec := bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "_id_"}}
		if collation != nil {
			spec = append(spec, bson.E{Key: "collation", Value: collation})
		}
		return db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: bson.A{spec}}}).Err()
	}
	if _, err := db.Collection("idcollsimple").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	enUSFull := `{ locale: "en_US", caseLevel: false, caseFirst: "off", strength: 3, numericOrdering: false, alternate: "non-ignorable", maxVariable: "punct", normalization: false, backwards: false, version: "57.1" }`
	requireError(t, create("idcollsimple", enUS), 2, "BadValue",
		"The _id index must have the same collation as the collection. Index collation: "+enUSFull+`, collection collation: { locale: "simple" }`)
	requireError(t, create("idcollen", bson.D{{Key: "locale", Value: "simple"}}), 2, "BadValue",
		`The _id index must have the same collation as the collection. Index collation: { locale: "simple" }, collection collation: `+enUSFull)
	requireCode(t, create("idcollen", bson.D{{Key: "locale", Value: "fr_CA"}}), 2, "BadValue")
	for _, ok := range []struct {
		coll      string
		collation any
	}{
		{"idcollsimple", nil},
		{"idcollsimple", bson.D{{Key: "locale", Value: "simple"}}},
		{"idcollen", nil},
		{"idcollen", bson.D{{Key: "locale", Value: "en_US"}, {Key: "strength", Value: 3}}},
	} {
		if err := create(ok.coll, ok.collation); err != nil {
			t.Errorf("%s with collation %v: %v", ok.coll, ok.collation, err)
		}
	}
}
