package driver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// validationErr returns the DocumentValidationFailure (121) of err, with its
// errInfo, failing the test when err is anything else.
// https://www.mongodb.com/docs/v7.0/core/schema-validation/
func validationErr(t *testing.T, err error) bson.Raw {
	t.Helper()
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		if we.WriteErrors[0].Code != 121 {
			t.Fatalf("code %d, want 121: %v", we.WriteErrors[0].Code, err)
		}
		return we.WriteErrors[0].Details
	}
	var ce mongo.CommandError
	if errors.As(err, &ce) && ce.Code == 121 {
		return ce.Raw.Lookup("errInfo").Document()
	}
	t.Fatalf("want DocumentValidationFailure, got %v", err)
	return nil
}

func TestDocumentValidation(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	ctx := context.Background()
	db := client.Database(testDB)
	schema := bson.D{{Key: "$jsonSchema", Value: bson.D{
		{Key: "bsonType", Value: "object"},
		{Key: "required", Value: bson.A{"name", "price"}},
		{Key: "properties", Value: bson.D{
			{Key: "name", Value: bson.D{{Key: "bsonType", Value: "string"}}},
			{Key: "price", Value: bson.D{{Key: "minimum", Value: 0}, {Key: "description", Value: "non-negative"}}},
		}},
	}}}
	if err := db.CreateCollection(ctx, "items", options.CreateCollection().SetValidator(schema)); err != nil {
		t.Fatal(err)
	}
	items := db.Collection("items")
	if _, err := items.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "a"}, {Key: "price", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	_, err := items.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "price", Value: -1}})
	info := validationErr(t, err)
	if id := info.Lookup("failingDocumentId").Int32(); id != 2 {
		t.Errorf("failingDocumentId %d", id)
	}
	details := info.Lookup("details").Document()
	if op := details.Lookup("operatorName").StringValue(); op != "$jsonSchema" {
		t.Errorf("operatorName %q", op)
	}
	rules, _ := details.Lookup("schemaRulesNotSatisfied").Array().Values()
	got := map[string]bson.Raw{}
	for _, r := range rules {
		got[r.Document().Lookup("operatorName").StringValue()] = r.Document()
	}
	if m := got["required"]; m == nil || m.Lookup("missingProperties").String() != `["name"]` {
		t.Errorf("required rule: %v", got["required"])
	}
	p := got["properties"]
	if p == nil {
		t.Fatalf("no properties rule in %v", details)
	}
	prop := p.Lookup("propertiesNotSatisfied").Array().Index(0).Document()
	if prop.Lookup("propertyName").StringValue() != "price" || prop.Lookup("description").StringValue() != "non-negative" {
		t.Errorf("property: %v", prop)
	}
	min := prop.Lookup("details").Array().Index(0).Document()
	if min.Lookup("operatorName").StringValue() != "minimum" || min.Lookup("reason").StringValue() != "comparison failed" || min.Lookup("consideredValue").Int32() != -1 {
		t.Errorf("minimum detail: %v", min)
	}

	// updates, upserts, replacements and findAndModify are checked alike
	_, err = items.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "price", Value: -5}}}})
	validationErr(t, err)
	_, err = items.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, mongo.Pipeline{{{Key: "$unset", Value: "name"}}})
	validationErr(t, err)
	_, err = items.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "name", Value: 5}, {Key: "price", Value: 1}})
	validationErr(t, err)
	_, err = items.UpdateOne(ctx, bson.D{{Key: "_id", Value: 9}}, bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: "x"}}}}, options.UpdateOne().SetUpsert(true))
	validationErr(t, err)
	err = items.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "price", Value: -10}}}}).Err()
	validationErr(t, err)

	// bypassDocumentValidation
	if _, err := items.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}}, options.InsertOne().SetBypassDocumentValidation(true)); err != nil {
		t.Fatal(err)
	}
	// moderate: an invalid document may be updated, a valid one must stay valid
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "items"}, {Key: "validationLevel", Value: "moderate"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := items.UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}); err != nil {
		t.Errorf("moderate update of an invalid document: %v", err)
	}
	_, err = items.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "price", Value: -5}}}})
	validationErr(t, err)
	// warn writes
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "items"}, {Key: "validationAction", Value: "warn"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := items.InsertOne(ctx, bson.D{{Key: "_id", Value: 4}}); err != nil {
		t.Errorf("warn insert: %v", err)
	}
	// listCollections reports the options
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "items"}})
	if err != nil || len(specs) != 1 {
		t.Fatal(err)
	}
	opts := specs[0].Options
	if opts.Lookup("validationLevel").StringValue() != "moderate" || opts.Lookup("validationAction").StringValue() != "warn" || opts.Lookup("validator", "$jsonSchema").Type == 0 {
		t.Errorf("options %v", opts)
	}
	// inside a transaction
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "items"}, {Key: "validationAction", Value: "error"}}).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		return items.InsertOne(sc, bson.D{{Key: "_id", Value: 5}, {Key: "name", Value: 1}, {Key: "price", Value: 1}})
	})
	validationErr(t, err)
}

// TestValidatorQueryOperators checks errInfo.details for query-operator
// validators.
func TestValidatorQueryOperators(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	v := bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 5}}}, {Key: "b", Value: bson.D{{Key: "$exists", Value: true}}}}
	if err := db.CreateCollection(ctx, "q", options.CreateCollection().SetValidator(v)); err != nil {
		t.Fatal(err)
	}
	_, err := db.Collection("q").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 3}})
	details := validationErr(t, err).Lookup("details").Document()
	want := `{"operatorName": "$and","clausesNotSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$gt","specifiedAs": {"a": {"$gt": {"$numberInt":"5"}}},"reason": "comparison failed","consideredValue": {"$numberInt":"3"}}},{"index": {"$numberInt":"1"},"details": {"operatorName": "$exists","specifiedAs": {"b": {"$exists": true}},"reason": "path does not exist"}}]}`
	if details.String() != want {
		t.Errorf("details\n got %s\nwant %s", details.String(), want)
	}
	// invalid validators and levels are refused
	err = db.RunCommand(ctx, bson.D{{Key: "create", Value: "bad"}, {Key: "validator", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$bogus", Value: 1}}}}}}).Err()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 2 {
		t.Errorf("bad validator: %v", err)
	}
	// MongoDB parses a validator with its default features: no $where,
	// $text or $near, and no $function, $rand or $_internalJsEmit in its
	// $expr.
	for _, bad := range []struct {
		validator bson.D
		code      int
		msg       string
	}{
		{bson.D{{Key: "$where", Value: "true"}}, 2, "$where is not allowed in this context"},
		{bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "x"}}}}, 2, "$text is not allowed in this context"},
		{bson.D{{Key: "a", Value: bson.D{{Key: "$near", Value: bson.A{0, 0}}}}}, 5626500, "$geoNear, $near, and $nearSphere are not allowed in this context, as these operators require sorting geospatial data. If you do not need sort, consider using $geoWithin instead. Check out https://dochub.mongodb.org/core/near-sort-operation and https://dochub.mongodb.org/core/nearSphere-sort-operationfor more details."},
		{bson.D{{Key: "$expr", Value: bson.D{{Key: "$function", Value: bson.D{{Key: "body", Value: "function() {return true}"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}}}}}, 4660800, "$function cannot be used inside a validator."},
		{bson.D{{Key: "$expr", Value: bson.D{{Key: "$lt", Value: bson.A{bson.D{{Key: "$rand", Value: bson.D{}}}, 2}}}}}, 3040500, "$rand not allowed inside collection validators"},
		{bson.D{{Key: "$expr", Value: bson.D{{Key: "$_internalJsEmit", Value: bson.D{{Key: "eval", Value: "function() {}"}, {Key: "this", Value: bson.D{}}}}}}}, 4660801, "$_internalJsEmit cannot be used inside a validator."},
	} {
		for _, cmd := range []bson.D{
			{{Key: "create", Value: "bad"}, {Key: "validator", Value: bad.validator}},
			{{Key: "collMod", Value: "q"}, {Key: "validator", Value: bad.validator}},
		} {
			err := db.RunCommand(ctx, cmd).Err()
			if serverCode(err) != bad.code || !strings.Contains(errText(err), bad.msg) {
				t.Errorf("%v: %v, want %d %q", cmd, err, bad.code, bad.msg)
			}
		}
	}
	err = db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "q"}, {Key: "validationLevel", Value: "sometimes"}}).Err()
	if !errors.As(err, &ce) || ce.Code != 2 {
		t.Errorf("bad level: %v", err)
	}
	// No validator on a system collection or in an internal database
	// (72); an empty one is no validator.
	if err := client.Database("admin").CreateCollection(ctx, "plainAdmin"); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []struct {
		db  string
		cmd bson.D
	}{
		{"admin", bson.D{{Key: "create", Value: "validated"}, {Key: "validator", Value: v}}},
		{"config", bson.D{{Key: "create", Value: "validated"}, {Key: "validator", Value: v}}},
		{"admin", bson.D{{Key: "collMod", Value: "plainAdmin"}, {Key: "validator", Value: v}}},
		{testDB, bson.D{{Key: "create", Value: "system.profile"}, {Key: "validator", Value: v}}},
	} {
		err := client.Database(cmd.db).RunCommand(ctx, cmd.cmd).Err()
		if !errors.As(err, &ce) || ce.Code != 72 {
			t.Errorf("%s %v: %v, want InvalidOptions", cmd.db, cmd.cmd, err)
		}
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "collMod", Value: "plainAdmin"}, {Key: "validator", Value: bson.D{}}}).Err(); err != nil {
		t.Errorf("empty validator in admin: %v", err)
	}
}

// TestValidatorSurvivesRestart proves the validator and its collMod
// changes are in the catalog: enforced again after a restart.
func TestValidatorSurvivesRestart(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := dial(t, first).Database(testDB)
	if err := db.CreateCollection(t.Context(), "v", options.CreateCollection().SetValidator(bson.D{{Key: "a", Value: bson.D{{Key: "$type", Value: "int"}}}})); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(t.Context(), bson.D{{Key: "collMod", Value: "v"}, {Key: "validator", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$type", Value: "string"}}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	second, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close(context.Background())
	coll := dial(t, second).Database(testDB).Collection("v")
	if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "a", Value: "s"}}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}})
	d := validationErr(t, err).Lookup("details").Document()
	want := `{"operatorName": "$type","specifiedAs": {"a": {"$type": "string"}},"reason": "type did not match","consideredValue": {"$numberInt":"1"},"consideredType": "int"}`
	if d.String() != want {
		t.Errorf("details\n got %s\nwant %s", d, want)
	}
}

// TestOutKeepsTargetOptions: $out replaces an existing collection's
// documents, not its options or indexes. The documents are written under
// the target's validator and unique indexes, so a failing one leaves the
// target as it was; a capped target is refused (17152).
func TestOutKeepsTargetOptions(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	validator := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"v"}}, {Key: "properties", Value: bson.D{{Key: "v", Value: bson.D{{Key: "bsonType", Value: "int"}}}}}}}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "target"}, {Key: "validator", Value: validator}}).Err(); err != nil {
		t.Fatal(err)
	}
	target := db.Collection("target")
	if _, err := target.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}, Options: options.Index().SetUnique(true).SetName("k_1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := target.InsertOne(ctx, bson.D{{Key: "_id", Value: 99}, {Key: "v", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	src := db.Collection("src")
	out := func(docs ...any) error {
		if err := src.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := src.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		cur, err := src.Aggregate(ctx, bson.A{bson.D{{Key: "$out", Value: "target"}}})
		if err == nil {
			err = cur.Close(ctx)
		}
		return err
	}
	requireCode(t, out(bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: "not an int"}}), 121, "DocumentValidationFailure")
	requireDocs(t, target, `{"_id": 99, "v": 1}`)
	requireCode(t, out(bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 1}, {Key: "k", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "v", Value: 2}, {Key: "k", Value: 1}}), 11000, "DuplicateKey")
	requireDocs(t, target, `{"_id": 99, "v": 1}`)
	if err := out(bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 1}, {Key: "k", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	requireDocs(t, target, `{"_id": 1, "v": 1, "k": 1}`)
	specs, err := target.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 || specs[1].Name != "k_1" || specs[1].Unique == nil || !*specs[1].Unique {
		t.Fatalf("indexes after $out: %v (%v), want _id_ and the unique k_1", specs, err)
	}
	colls, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "target"}})
	if err != nil || len(colls) != 1 || colls[0].Options.Lookup("validator").Type == 0 {
		t.Fatalf("target after $out: %v (%v), want its validator kept", colls, err)
	}

	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := src.Aggregate(ctx, bson.A{bson.D{{Key: "$out", Value: "capped"}}})
	if err == nil {
		err = cur.Close(ctx)
	}
	requireCode(t, err, 17152, "Location17152")

	// Nor does $out or $merge write into a view (a collection of the
	// view's name would shadow it).
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "view"}, {Key: "viewOn", Value: "src"}, {Key: "pipeline", Value: bson.A{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []bson.D{{{Key: "$out", Value: "view"}}, {{Key: "$merge", Value: "view"}}} {
		cur, err := src.Aggregate(ctx, bson.A{stage})
		if err == nil {
			err = cur.Close(ctx)
		}
		requireCode(t, err, 166, "CommandNotSupportedOnView")
	}
	names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "view"}})
	if err != nil || len(names) != 1 {
		t.Fatalf("namespaces named view: %v (%v), want the view alone", names, err)
	}

	// A time series collection is a view of its buckets: $out into one
	// writes measurements (the source's documents have no time field:
	// BadValue, TestOutTimeseries has the rest), $merge into one is refused.
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "series"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stage bson.D
		code  int
		name  string
	}{
		{bson.D{{Key: "$out", Value: "series"}}, 2, "BadValue"},
		{bson.D{{Key: "$merge", Value: "series"}}, 166, "CommandNotSupportedOnView"},
	} {
		cur, err := src.Aggregate(ctx, bson.A{c.stage})
		if err == nil {
			err = cur.Close(ctx)
		}
		requireCode(t, err, c.code, c.name)
	}
	if names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "series"}}); err != nil || len(names) != 1 {
		t.Fatalf("namespaces named series: %v (%v), want the time series collection alone", names, err)
	}
}

// TestMapReduceBypassValidation checks that mapReduce's
// bypassDocumentValidation applies to every output mode: its replace
// output, like $out, is refused by the target's validator unless bypassed
// (jstests/core/doc_validation/bypass_doc_validation.js).
func TestMapReduceBypassValidation(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if _, err := db.Collection("src").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	validator := bson.D{{Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}}
	if err := db.CreateCollection(ctx, "out", options.CreateCollection().SetValidator(validator)); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"replace", "merge", "reduce"} {
		cmd := func(bypass bool) bson.D {
			return bson.D{{Key: "mapReduce", Value: "src"}, {Key: "map", Value: "function() { emit(1, 1); }"},
				{Key: "reduce", Value: "function() { return 'mapReduce'; }"}, {Key: "out", Value: bson.D{{Key: mode, Value: "out"}}},
				{Key: "bypassDocumentValidation", Value: bypass}}
		}
		validationErr(t, db.RunCommand(ctx, cmd(false)).Err())
		if err := db.RunCommand(ctx, cmd(true)).Err(); err != nil {
			t.Errorf("%s with bypassDocumentValidation: %v", mode, err)
		}
		if n, err := db.Collection("out").CountDocuments(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil || n != 1 {
			t.Errorf("%s: %d documents written, %v", mode, n, err)
		}
		if _, err := db.Collection("out").DeleteMany(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestValidatorFailingConstant checks that a validator is parsed but not
// optimized, as MongoDB's parseValidator does: an $expr whose constant
// subexpression fails is accepted by create and collMod, fails each write
// it checks (the write is refused, or with validationAction warn
// accepted), and the find filter it would be is refused when optimized
// (jstests/core/doc_validation/doc_validation_options.js).
func TestValidatorFailingConstant(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	failing := bson.D{{Key: "$expr", Value: bson.D{{Key: "$divide", Value: bson.A{10, 0}}}}}
	if err := db.CreateCollection(ctx, "v", options.CreateCollection().SetValidator(failing)); err != nil {
		t.Fatalf("create: %v", err)
	}
	v := db.Collection("v")
	_, err := v.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
	info := validationErr(t, err)
	if r := info.Lookup("details", "reason").StringValue(); r != "failed to evaluate aggregation expression" {
		t.Errorf("reason %q", r)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "v"}, {Key: "validator", Value: bson.D{{Key: "a", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "v"}, {Key: "validator", Value: failing}, {Key: "validationAction", Value: "warn"}}).Err(); err != nil {
		t.Fatalf("collMod: %v", err)
	}
	if _, err := v.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Errorf("warn insert: %v", err)
	}
	if err := v.FindOne(ctx, failing).Err(); serverCode(err) != 2 {
		t.Errorf("find: %v, want BadValue", err)
	}
}

// TestValidatorEncryptKeywords: $jsonSchema's encrypt matches an
// encrypted value (BinData of subtype 6), and a validator may use encrypt
// or encryptMetadata only while its action is error and its level not
// moderate: create and collMod (of the validator, the action or the
// level) fail with QueryFeatureNotAllowed otherwise, leaving the options
// as they were (jstests/core/doc_validation/doc_validation_encrypt_keywords.js,
// jstests/core/json_schema/encrypt.js).
func TestValidatorEncryptKeywords(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	encrypted := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: bson.D{{Key: "s", Value: bson.D{{Key: "encrypt", Value: bson.D{}}}}}}}}}
	metadata := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "encryptMetadata", Value: bson.D{{Key: "algorithm", Value: "AEAD_AES_256_CBC_HMAC_SHA_512-Random"}}}}}}
	// collMod reports the failure in the context of the step that failed:
	// parsing the new validator, or setting the action or the level
	const msg = "Encryption-related validator keywords are not allowed in this context"
	const parsing = "Parsing of collection validator failed :: caused by :: "
	refused := func(cmd bson.D, want string) {
		t.Helper()
		err := db.RunCommand(ctx, cmd).Err()
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 224 || ce.Message != want {
			t.Errorf("%v: %v, want QueryFeatureNotAllowed %q", cmd, err, want)
		}
	}
	for _, v := range []bson.D{encrypted, metadata} {
		refused(bson.D{{Key: "create", Value: "e"}, {Key: "validator", Value: v}, {Key: "validationAction", Value: "warn"}}, msg)
		refused(bson.D{{Key: "create", Value: "e"}, {Key: "validator", Value: v}, {Key: "validationLevel", Value: "moderate"}}, msg)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "w"}, {Key: "validationAction", Value: "warn"}}).Err(); err != nil {
		t.Fatal(err)
	}
	refused(bson.D{{Key: "collMod", Value: "w"}, {Key: "validator", Value: encrypted}}, parsing+msg)
	refused(bson.D{{Key: "collMod", Value: "w"}, {Key: "validator", Value: encrypted}, {Key: "validationAction", Value: "error"}}, parsing+msg)
	if err := db.CreateCollection(ctx, "e", options.CreateCollection().SetValidator(encrypted)); err != nil {
		t.Fatal(err)
	}
	refused(bson.D{{Key: "collMod", Value: "e"}, {Key: "validationAction", Value: "warn"}}, "Failed to set validationAction :: caused by :: "+parsing+msg)
	refused(bson.D{{Key: "collMod", Value: "e"}, {Key: "validationLevel", Value: "moderate"}}, "Failed to set validationLevel :: caused by :: "+parsing+msg)
	// any validator collMod cannot parse is reported in that context
	err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "e"}, {Key: "validator", Value: bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "bogus", Value: 1}}}}}}).Err()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 9 || ce.Message != parsing+"Unknown $jsonSchema keyword: bogus" {
		t.Errorf("collMod bad validator: %v", err)
	}
	e := db.Collection("e")
	_, err = e.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: "plain"}})
	details := validationErr(t, err).Lookup("details").String()
	if !strings.Contains(details, `"operatorName": "encrypt","reason": "value was not encrypted"`) {
		t.Errorf("details %s", details)
	}
	if _, err := e.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "s", Value: bson.Binary{Subtype: 6, Data: []byte{1, 2, 3}}}}); err != nil {
		t.Errorf("encrypted insert: %v", err)
	}
}

// TestCollModValidatorStoresDefaults: collMod setting a validator stores
// the validation level and action as well, their defaults when unset
// (MongoDB's CollectionImpl::setValidator), so listCollections shows
// them; create with a validator alone does not, and a level set before
// is kept.
func TestCollModValidatorStoresDefaults(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	options := func(name string) string {
		t.Helper()
		specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: name}})
		if err != nil || len(specs) != 1 {
			t.Fatalf("listCollections %s: %v %v", name, specs, err)
		}
		return specs[0].Options.String()
	}
	run := func(cmd bson.D) {
		t.Helper()
		if err := db.RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	v := bson.D{{Key: "a", Value: 1}}
	run(bson.D{{Key: "create", Value: "created"}, {Key: "validator", Value: v}})
	if got, want := options("created"), `{"validator": {"a": {"$numberInt":"1"}}}`; got != want {
		t.Errorf("create: %s, want %s", got, want)
	}
	run(bson.D{{Key: "create", Value: "modded"}})
	run(bson.D{{Key: "collMod", Value: "modded"}, {Key: "validator", Value: v}})
	if got, want := options("modded"), `{"validator": {"a": {"$numberInt":"1"}},"validationLevel": "strict","validationAction": "error"}`; got != want {
		t.Errorf("collMod validator: %s, want %s", got, want)
	}
	run(bson.D{{Key: "create", Value: "moderate"}, {Key: "validationLevel", Value: "moderate"}})
	run(bson.D{{Key: "collMod", Value: "moderate"}, {Key: "validator", Value: v}})
	if got, want := options("moderate"), `{"validator": {"a": {"$numberInt":"1"}},"validationLevel": "moderate","validationAction": "error"}`; got != want {
		t.Errorf("collMod validator after level: %s, want %s", got, want)
	}
}

// TestValidatorNamespace checks where a validator may not be, as MongoDB's
// checkValidatorCanBeUsedOnNs decides it once the namespace and the
// validator have passed their own checks: a system collection a client
// may not create is refused as such (InvalidNamespace) before its
// validator is looked at; one it may create (system.js) and any collection
// of admin, local or config are refused InvalidOptions, naming the UUID
// the collection would have had, or, for collMod, has
// (jstests/core/doc_validation/doc_validation_invalid_validators.js).
func TestValidatorNamespace(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	validator := bson.D{{Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}}
	create := func(db *mongo.Database, name string) error {
		return db.RunCommand(ctx, bson.D{{Key: "create", Value: name}, {Key: "validator", Value: validator}}).Err()
	}
	if !testAuth() { // with access control, root may not create it: Unauthorized comes first
		requireError(t, create(db, "system.foo"), 73, "InvalidNamespace", "Invalid system namespace: test.system.foo")
	}
	uuid := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	message := func(err error, pattern string) {
		t.Helper()
		requireCode(t, err, 72, "InvalidOptions")
		var ce mongo.CommandError
		if !errors.As(err, &ce) || !regexp.MustCompile("^"+pattern+"$").MatchString(ce.Message) {
			t.Errorf("message %q, want %s", ce.Message, pattern)
		}
	}
	message(create(db, "system.js"), `Document validators not allowed on system collection test\.system\.js with UUID `+uuid)
	for _, name := range []string{"admin", "local", "config"} {
		message(create(client.Database(name), "v"), `Document validators are not allowed on collection `+name+`\.v with UUID `+uuid+` in the `+name+` internal database`)
		if n, err := client.Database(name).ListCollectionNames(ctx, bson.D{{Key: "name", Value: "v"}}); err != nil || len(n) != 0 {
			t.Errorf("%s.v: %v %v", name, n, err)
		}
	}
	// init checks the validator before changeStreamPreAndPostImages
	err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "create", Value: "v"}, {Key: "validator", Value: validator},
		{Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}}}).Err()
	message(err, `Document validators are not allowed on collection admin\.v with UUID `+uuid+` in the admin internal database`)
	// collMod names the collection's own UUID, and checks the namespace
	// before it parses the validator.
	if err := db.CreateCollection(ctx, "system.js"); err != nil {
		t.Fatal(err)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "system.js"}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("listCollections: %v %v", specs, err)
	}
	var u [16]byte
	copy(u[:], specs[0].UUID.Data)
	h := fmt.Sprintf("%x", u)
	want := "Document validators not allowed on system collection test.system.js with UUID " + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	for _, v := range []bson.D{validator, {{Key: "$where", Value: "true"}}} {
		err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "system.js"}, {Key: "validator", Value: v}}).Err()
		requireError(t, err, 72, "InvalidOptions", want)
	}
}

// TestValidationWarnLog: under validationAction warn a failing document
// is written and logged as MongoDB's warning 20294 logs it, the whole
// document with the namespace and errInfo
// (collection_impl.cpp _checkValidationAndParseResult).
func TestValidationWarnLog(t *testing.T) {
	cfg := defaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) // getLog keeps what the logger takes
	client := connect(t, startInstance(t, cfg))
	ctx := context.Background()
	db := client.Database(testDB)
	opts := options.CreateCollection().SetValidator(bson.D{{Key: "a", Value: bson.D{{Key: "$exists", Value: true}}}}).SetValidationAction("warn")
	if err := db.CreateCollection(ctx, "warned", opts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("warned").InsertOne(ctx, bson.D{{Key: "_id", Value: 7}, {Key: "marker", Value: "logged whole"}}); err != nil {
		t.Fatalf("warn insert: %v", err)
	}
	reply, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "getLog", Value: "global"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := reply.Lookup("log").Array().Values()
	for _, l := range lines {
		if s := l.StringValue(); strings.Contains(s, "Document would fail validation") && strings.Contains(s, "test.warned") {
			if !strings.Contains(s, "logged whole") || !strings.Contains(s, "path does not exist") {
				t.Errorf("warning without the document or its errInfo: %s", s)
			}
			return
		}
	}
	t.Errorf("no validation warning among %d lines", len(lines))
}
