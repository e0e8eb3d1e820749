package driver_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/fts/ftstest"
)

func extJSON(t testing.TB, j []byte) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON(j, false, &d); err != nil {
		t.Fatalf("%s: %v", j, err)
	}
	return d
}

func textQuery(search, language string, caseSens, diacriticSens bool) bson.D {
	q := bson.D{{Key: "$search", Value: search}}
	if language != "" {
		q = append(q, bson.E{Key: "$language", Value: language})
	}
	if caseSens {
		q = append(q, bson.E{Key: "$caseSensitive", Value: true})
	}
	if diacriticSens {
		q = append(q, bson.E{Key: "$diacriticSensitive", Value: true})
	}
	return bson.D{{Key: "$text", Value: q}}
}

// The corpus through the server: find, count and aggregate answer each
// search with MongoDB's documents, find and count also with the search in
// a branch of an $or.
func TestTextSearchCorpus(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("textcorpus")
	for i, c := range ftstest.Load(t, "../../internal/fts/testdata/search.json") {
		coll := db.Collection("c" + strconv.Itoa(i))
		ix := extJSON(t, c.Index)
		spec := bson.D{{Key: "name", Value: "t"}}
		elems, _ := ix.Elements()
		for _, el := range elems {
			spec = append(spec, bson.E{Key: el.Key(), Value: el.Value()})
		}
		if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: coll.Name()}, {Key: "indexes", Value: bson.A{spec}}}).Err(); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, d := range c.Docs {
			if _, err := coll.InsertOne(ctx, extJSON(t, d)); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
		for _, q := range c.Queries {
			filter := textQuery(q.Search, q.Language, q.CaseSensitive, q.DiacriticSensitive)
			want := make([]string, len(q.IDs))
			for i, id := range q.IDs {
				want[i] = strconv.Itoa(id)
			}
			got := ids(findAll(t, coll, filter))
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: find %q: got %v, want %v", c.Name, q.Search, got, want)
			}
			if n, err := coll.CountDocuments(ctx, filter); err != nil || n != int64(len(want)) {
				t.Errorf("%s: count %q: %d, %v; want %d", c.Name, q.Search, n, err, len(want))
			}
			// In a branch of an $or, beside a branch the _id index bounds
			// but no document matches, the search finds the same.
			inOr := doc("$or", bson.A{filter, doc("_id", doc("$gte", 0), "never", true)})
			got = ids(findAll(t, coll, inOr))
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: find %q in $or: got %v, want %v", c.Name, q.Search, got, want)
			}
			if n, err := coll.CountDocuments(ctx, inOr); err != nil || n != int64(len(want)) {
				t.Errorf("%s: count %q in $or: %d, %v; want %d", c.Name, q.Search, n, err, len(want))
			}
			cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: filter}}, bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}})
			if err != nil {
				t.Fatal(err)
			}
			var docs []bson.Raw
			if err := cur.All(ctx, &docs); err != nil {
				t.Fatal(err)
			}
			if got := ids(docs); !slices.Equal(got, want) {
				t.Errorf("%s: aggregate %q: got %v, want %v", c.Name, q.Search, got, want)
			}
		}
	}
}

func textColl(t *testing.T, client *mongo.Client, name string, keys bson.D, opts *options.IndexOptionsBuilder, docs ...any) *mongo.Collection {
	t.Helper()
	coll := client.Database("text").Collection(strings.ReplaceAll(t.Name(), "/", "_") + name)
	if _, err := coll.Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: keys, Options: opts}); err != nil {
		t.Fatal(err)
	}
	if len(docs) > 0 {
		if _, err := coll.InsertMany(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
	}
	return coll
}

func doc(kv ...any) bson.D {
	d := bson.D{}
	for i := 0; i < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return d
}

var scoreMeta = doc("$meta", "textScore")

// Scores follow weights and term frequencies; {$meta: "textScore"}
// projects and sorts them in find and in a pipeline, and fails (40218)
// where no $text gives them.
func TestTextScores(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := textColl(t, client, "", doc("title", "text", "body", "text"), options.Index().SetWeights(doc("title", 10)),
		doc("_id", 1, "title", "Coffee", "body", "A cup a day"),
		doc("_id", 2, "title", "Tea", "body", "coffee coffee coffee and more coffee"),
		doc("_id", 3, "title", "Water", "body", "nothing to see"),
	)
	filter := textQuery("coffee", "", false, false)
	// 1: title weight 10 ("coffe" is not the whole string "Coffee"); 2:
	// freq 1+1/2+1/4+1/8 over 4 tokens ("and" and "more" are stop words):
	// 1.875 × (0.5·4/4 + 0.5).
	got := findAll(t, coll, filter, options.Find().SetProjection(doc("score", scoreMeta, "title", 1)).SetSort(doc("score", scoreMeta)))
	want := []string{`{"_id": {"$numberInt":"1"},"title": "Coffee","score": {"$numberDouble":"10.0"}}`,
		`{"_id": {"$numberInt":"2"},"title": "Tea","score": {"$numberDouble":"1.875"}}`}
	if len(got) != 2 || got[0].String() != want[0] || got[1].String() != want[1] {
		t.Fatalf("find: %v, want %v", got, want)
	}
	// An exclusion projection with the score; skip and limit after the sort.
	got = findAll(t, coll, filter, options.Find().SetProjection(doc("score", scoreMeta, "body", 0)).SetSort(doc("score", scoreMeta)).SetSkip(1).SetLimit(1))
	if len(got) != 1 || got[0].String() != `{"_id": {"$numberInt":"2"},"title": "Tea","score": {"$numberDouble":"1.875"}}` {
		t.Fatalf("find with skip: %v", got)
	}
	agg := func(pipeline bson.A) ([]bson.Raw, error) {
		cur, err := coll.Aggregate(ctx, pipeline)
		if err != nil {
			return nil, err
		}
		var docs []bson.Raw
		err = cur.All(ctx, &docs)
		return docs, err
	}
	docs, err := agg(bson.A{doc("$match", filter), doc("$addFields", doc("s", scoreMeta)), doc("$sort", doc("s", -1)), doc("$project", doc("s", 1))})
	if err != nil || len(docs) != 2 || docs[0].String() != `{"_id": {"$numberInt":"1"},"s": {"$numberDouble":"10.0"}}` {
		t.Fatalf("aggregate: %v, %v", docs, err)
	}
	// $project takes $meta in an exclusion projection, the score after the
	// fields left (match_on_meta_exclusion_projection.js); with no
	// inclusion or exclusion but _id's, $meta makes an inclusion.
	for _, c := range []struct {
		proj bson.D
		want string
	}{
		{doc("body", 0, "score", scoreMeta), `{"_id": {"$numberInt":"1"},"title": "Coffee","score": {"$numberDouble":"10.0"}}`},
		{doc("score", scoreMeta, "body", 0), `{"_id": {"$numberInt":"1"},"title": "Coffee","score": {"$numberDouble":"10.0"}}`},
		{doc("_id", 0, "score", scoreMeta), `{"score": {"$numberDouble":"10.0"}}`},
	} {
		docs, err = agg(bson.A{doc("$match", filter), doc("$sort", doc("_id", 1)), doc("$project", c.proj), doc("$limit", 1)})
		if err != nil || len(docs) != 1 || docs[0].String() != c.want {
			t.Fatalf("$project %v: %v, %v", c.proj, docs, err)
		}
	}
	// A top-level $expr beside $text filters the text search's documents,
	// in a sub-pipeline with its let variables too.
	withExpr := doc("$match", doc("$text", doc("$search", "coffee"), "$expr", doc("$eq", bson.A{"$_id", "$$want"})))
	docs, err = agg(bson.A{withExpr, doc("$project", doc("s", scoreMeta))})
	if err == nil || serverCode(err) != 17276 {
		t.Fatalf("undefined $$want: %v %v", docs, err)
	}
	docs, err = agg(bson.A{doc("$match", doc("_id", 3)), doc("$lookup", doc("from", coll.Name(), "let", doc("want", 2),
		"pipeline", bson.A{withExpr, doc("$project", doc("s", scoreMeta))}, "as", "l")), doc("$project", doc("l", 1))})
	if err != nil || len(docs) != 1 || docs[0].String() != `{"_id": {"$numberInt":"3"},"l": [{"_id": {"$numberInt":"2"},"s": {"$numberDouble":"1.875"}}]}` {
		t.Fatalf("$text with $expr in $lookup: %v, %v", docs, err)
	}
	cur, err := coll.Aggregate(ctx, bson.A{withExpr, doc("$project", doc("s", scoreMeta))}, options.Aggregate().SetLet(doc("want", 1)))
	if err == nil {
		err = cur.All(ctx, &docs)
	}
	if err != nil || len(docs) != 1 || docs[0].String() != `{"_id": {"$numberInt":"1"},"s": {"$numberDouble":"10.0"}}` {
		t.Fatalf("$text with $expr: %v, %v", docs, err)
	}
	// The score survives $project, $sort (also by the score itself) and
	// $limit; not $group, after which it is missing (server11675.js).
	docs, err = agg(bson.A{doc("$match", filter), doc("$project", doc("title", 1)), doc("$sort", doc("x", scoreMeta)), doc("$limit", 1), doc("$set", doc("s", scoreMeta))})
	if err != nil || len(docs) != 1 || docs[0].String() != `{"_id": {"$numberInt":"1"},"title": "Coffee","s": {"$numberDouble":"10.0"}}` {
		t.Fatalf("aggregate through stages: %v, %v", docs, err)
	}
	// $facet's sub-pipelines see each input document's score.
	docs, err = agg(bson.A{doc("$match", filter), doc("$facet", doc("f", bson.A{doc("$project", doc("s", scoreMeta)), doc("$sort", doc("_id", 1))}))})
	if err != nil || len(docs) != 1 || docs[0].String() != `{"f": [{"_id": {"$numberInt":"1"},"s": {"$numberDouble":"10.0"}},{"_id": {"$numberInt":"2"},"s": {"$numberDouble":"1.875"}}]}` {
		t.Fatalf("score in $facet: %v, %v", docs, err)
	}
	docs, err = agg(bson.A{doc("$match", filter), doc("$group", doc("_id", "$title")), doc("$project", doc("s", scoreMeta)), doc("$sort", doc("_id", 1))})
	if err != nil || len(docs) != 2 || docs[0].String() != `{"_id": "Coffee"}` {
		t.Fatalf("score after $group: %v, %v", docs, err)
	}
	// Without $text, the stages up to a $group fail as the pipeline is
	// parsed, even on no collection; a $lookup's sub-pipeline as it runs,
	// after its outer $text search found its index.
	empty := client.Database(coll.Database().Name()).Collection("noSuchColl")
	for _, p := range []bson.A{
		{doc("$project", doc("s", scoreMeta))},
		{doc("$sort", doc("s", scoreMeta))},
		{doc("$facet", doc("f", bson.A{doc("$project", doc("s", scoreMeta))}))},
		{doc("$facet", doc("f", bson.A{doc("$group", doc("_id", 1)), doc("$count", "n")}, "g", bson.A{doc("$project", doc("s", scoreMeta))}))},
	} {
		_, err = empty.Aggregate(ctx, p)
		requireCode(t, err, 40218, "Location40218")
	}
	if _, err := empty.InsertOne(ctx, doc("_id", 1)); err != nil {
		t.Fatal(err)
	}
	_, err = empty.Aggregate(ctx, bson.A{doc("$match", filter), doc("$lookup", doc("from", coll.Name(), "pipeline", bson.A{doc("$project", doc("s", scoreMeta))}, "as", "l"))})
	requireCode(t, err, 27, "IndexNotFound")
	_, err = agg(bson.A{doc("$match", filter), doc("$lookup", doc("from", coll.Name(), "pipeline", bson.A{doc("$project", doc("s", scoreMeta))}, "as", "l"))})
	requireCode(t, err, 40218, "Location40218")
	// $topN and $bottom in $group order by the score of each document
	// (highest first); without $text there is no score.
	docs, err = agg(bson.A{doc("$match", filter), doc("$group", doc("_id", nil,
		"top", doc("$topN", doc("n", 2, "output", "$_id", "sortBy", doc("s", scoreMeta))),
		"bottom", doc("$bottom", doc("output", "$_id", "sortBy", doc("s", scoreMeta)))))})
	if err != nil || len(docs) != 1 || docs[0].String() != `{"_id": null,"top": [{"$numberInt":"1"},{"$numberInt":"2"}],"bottom": {"$numberInt":"2"}}` {
		t.Fatalf("$topN by score: %v, %v", docs, err)
	}
	_, err = agg(bson.A{doc("$group", doc("_id", nil, "top", doc("$top", doc("output", "$_id", "sortBy", doc("s", scoreMeta)))))})
	requireCode(t, err, 40218, "Location40218")
	_, err = agg(bson.A{doc("$project", doc("s", scoreMeta))})
	requireCode(t, err, 40218, "Location40218")
	for _, o := range []*options.FindOptionsBuilder{
		options.Find().SetProjection(doc("s", scoreMeta)),
		options.Find().SetSort(doc("s", scoreMeta)),
	} {
		_, err := coll.Find(ctx, bson.D{}, o)
		requireCode(t, err, 40218, "Location40218")
	}
	_, err = coll.Find(ctx, filter, options.Find().SetProjection(doc("s", doc("$meta", "nope"))))
	requireCode(t, err, 17308, "Location17308")
	// Below the top level and inside expressions of an inclusion
	// projection, computed fields in their place; without $text, 40218.
	got = findAll(t, coll, filter, options.Find().SetSort(doc("score", scoreMeta)).SetProjection(
		doc("title", 1, "m.score", scoreMeta, "m.twice", doc("$multiply", bson.A{scoreMeta, 2}), "n", doc("s", scoreMeta))))
	want = []string{`{"_id": {"$numberInt":"1"},"title": "Coffee","m": {"score": {"$numberDouble":"10.0"},"twice": {"$numberDouble":"20.0"}},"n": {"s": {"$numberDouble":"10.0"}}}`,
		`{"_id": {"$numberInt":"2"},"title": "Tea","m": {"score": {"$numberDouble":"1.875"},"twice": {"$numberDouble":"3.75"}},"n": {"s": {"$numberDouble":"1.875"}}}`}
	if len(got) != 2 || got[0].String() != want[0] || got[1].String() != want[1] {
		t.Fatalf("nested $meta: %v, want %v", got, want)
	}
	for _, proj := range []bson.D{doc("title", 1, "m.s", scoreMeta), doc("x", doc("$add", bson.A{scoreMeta, 1}))} {
		_, err := coll.Find(ctx, bson.D{}, options.Find().SetProjection(proj))
		requireCode(t, err, 40218, "Location40218")
	}
	// In an exclusion projection, set after the exclusion
	// (ProjectionNode::applyExpressions): a new field is appended.
	got = findAll(t, coll, filter, options.Find().SetSort(doc("score", scoreMeta)).SetLimit(1).SetProjection(doc("m.s", scoreMeta, "body", 0)))
	if len(got) != 1 || got[0].String() != `{"_id": {"$numberInt":"1"},"title": "Coffee","m": {"s": {"$numberDouble":"10.0"}}}` {
		t.Fatalf("nested $meta in an exclusion: %v", got)
	}
	// findAndModify projects the score of the document it found, old or
	// new (fts_find_and_modify.js); without $text, 40218.
	var fm bson.Raw
	if err := coll.FindOneAndUpdate(ctx, filter, doc("$set", doc("x", 1)), options.FindOneAndUpdate().SetSort(doc("s", scoreMeta)).
		SetProjection(doc("s", scoreMeta, "body", 0)).SetReturnDocument(options.After)).Decode(&fm); err != nil ||
		fm.String() != `{"_id": {"$numberInt":"1"},"title": "Coffee","x": {"$numberInt":"1"},"s": {"$numberDouble":"10.0"}}` {
		t.Fatalf("findAndModify with the score: %v %v", fm, err)
	}
	if err := coll.FindOneAndDelete(ctx, textQuery("tea", "", false, false), options.FindOneAndDelete().SetProjection(doc("s", scoreMeta, "title", 1))).Decode(&fm); err != nil ||
		fm.String() != `{"_id": {"$numberInt":"2"},"title": "Tea","s": {"$numberDouble":"11.0"}}` {
		t.Fatalf("findAndModify remove with the score: %v %v", fm, err)
	}
	err = coll.FindOneAndUpdate(ctx, doc("_id", 3), doc("$set", doc("x", 1)), options.FindOneAndUpdate().SetProjection(doc("s", scoreMeta))).Err()
	requireCode(t, err, 40218, "Location40218")
	// Folio refuses what it does not do: the score of an upsert.
	err = coll.FindOneAndUpdate(ctx, filter, doc("$set", doc("x", 1)), options.FindOneAndUpdate().SetProjection(doc("s", scoreMeta)).SetUpsert(true)).Err()
	requireCode(t, err, 238, "NotImplemented")
}

// A text index's specification as MongoDB stores it, one text index per
// collection, and MongoDB's refusals.
func TestTextIndexSpecs(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := textColl(t, client, "", doc("a", 1, "title", "text", "body", "text"),
		options.Index().SetWeights(doc("body", 3)).SetDefaultLanguage("spanish").SetLanguageOverride("idioma"))
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var specs []bson.Raw
	if err := cur.All(ctx, &specs); err != nil {
		t.Fatal(err)
	}
	want := `{"v": {"$numberInt":"2"},"key": {"a": {"$numberInt":"1"},"_fts": "text","_ftsx": {"$numberInt":"1"}},"name": "a_1_title_text_body_text",` +
		`"weights": {"body": {"$numberInt":"3"},"title": {"$numberInt":"1"}},"default_language": "spanish","language_override": "idioma","textIndexVersion": {"$numberInt":"3"}}`
	if len(specs) != 2 || specs[1].String() != want {
		t.Fatalf("listIndexes: %v\nwant %s", specs, want)
	}
	// The stored form, as mongorestore sends it back, is the same index.
	stored := specs[1]
	if err := coll.Database().RunCommand(ctx, doc("createIndexes", coll.Name(), "indexes", bson.A{stored})).Err(); err != nil {
		t.Fatalf("re-create from listIndexes: %v", err)
	}
	// A second text index conflicts.
	_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("other", "text")})
	requireCode(t, err, 67, "CannotCreateIndex")
	for _, tt := range []struct {
		keys bson.D
		opts *options.IndexOptionsBuilder
		code int
	}{
		// MongoDB's FTSSpec::fixSpec answers CannotCreateIndex to each
		// (MongoDB's fts_index.js checks the weight and direction ones).
		{doc("a", "text", "b", 1, "c", "text"), nil, 67},
		{doc("a", "text", "b", 2), nil, 67},
		{doc("a", "text"), options.Index().SetWeights(doc("b", math.MaxFloat64)), 67},
		{doc("a", "text"), options.Index().SetWeights(doc("b", -math.MaxFloat64)), 67},
		{doc("a", 1, "_fts", "text", "_ftsx", 1, "c", 1), options.Index().SetWeights(bson.D{}), 67},
		{doc("a", "text"), options.Index().SetTextVersion(4), 67},
		{doc("a", "text"), options.Index().SetDefaultLanguage("klingon"), 67},
		{doc("a", "text"), options.Index().SetLanguageOverride("a.b"), 67},
		{doc("a", "text"), options.Index().SetWeights(doc("a", 100000)), 67},
		{doc("a", "text"), options.Index().SetCollation(&options.Collation{Locale: "fr"}), 67},
		{doc("a", 1), options.Index().SetWeights(doc("a", 2)), 67},
	} {
		c := client.Database("text").Collection("specerrors")
		_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: tt.keys, Options: tt.opts})
		if serverCode(err) != tt.code {
			t.Errorf("%v: %v, want code %d", tt.keys, err, tt.code)
		}
	}
}

// Text index versions 1 and 2, as MongoDB 7.0 still builds them: listed
// with their version, named in explain, and the same index as a version
// 3 one with the same fields and options (MongoDB's fts_index.js).
func TestTextIndexVersions(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := textColl(t, client, "", doc("a", "text"), options.Index().SetTextVersion(1).SetDefaultLanguage("eng"),
		doc("_id", 1, "a", "The running man"))
	requireIndexSpecs(t, coll, []bson.D{{{Key: "v", Value: int32(2)}, {Key: "key", Value: doc("_fts", "text", "_ftsx", int32(1))}, {Key: "name", Value: "a_text"},
		{Key: "weights", Value: doc("a", int32(1))}, {Key: "default_language", Value: "eng"}, {Key: "language_override", Value: "language"},
		{Key: "textIndexVersion", Value: int32(1)}}})
	// "eng" stems as English but has no stop words: "the" is a term.
	for search, want := range map[string][]string{"run": {"1"}, "the": {"1"}, "runs": {"1"}, "walk": {}} {
		if got := ids(findAll(t, coll, doc("$text", doc("$search", search)))); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", search, got, want)
		}
	}
	var ex bson.Raw
	if err := coll.Database().RunCommand(ctx, doc("explain", doc("find", coll.Name(), "filter", doc("$text", doc("$search", "run"))))).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	if v, err := ex.LookupErr("queryPlanner", "winningPlan", "textIndexVersion"); err != nil || v.Int32() != 1 {
		t.Errorf("explain's textIndexVersion: %v %v", v, err)
	}
	// The versions of one index are the same index.
	same := textColl(t, client, "same", doc("a", "text"), options.Index().SetTextVersion(1))
	for _, v := range []int32{2, 3, 1} {
		if _, err := same.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("a", "text"), Options: options.Index().SetTextVersion(v)}); err != nil {
			t.Fatalf("version %d again: %v", v, err)
		}
	}
	if n, err := same.Indexes().ListSpecifications(ctx); err != nil || len(n) != 2 {
		t.Errorf("indexes after the same index in each version: %v %v", n, err)
	}
	// A text index keeps an expireAfterSeconds, as MongoDB's does (the Go
	// driver's TestIndexView creates one); the TTL monitor skips it.
	ttl := textColl(t, client, "ttl", doc("a", "text"), options.Index().SetExpireAfterSeconds(10))
	if got, err := ttl.Indexes().ListSpecifications(ctx); err != nil || len(got) != 2 || got[1].ExpireAfterSeconds == nil || *got[1].ExpireAfterSeconds != 10 {
		t.Errorf("text index with a TTL: %v %v", got, err)
	}
	// Version 2 knows languages by name and code only.
	c2 := client.Database("text").Collection("v2")
	_, err := c2.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("a", "text"), Options: options.Index().SetTextVersion(2).SetDefaultLanguage("eng")})
	requireCode(t, err, 67, "CannotCreateIndex")
	if _, err = c2.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("a", "text"), Options: options.Index().SetTextVersion(2)}); err != nil {
		t.Fatal(err)
	}
	_, err = c2.Find(ctx, doc("$text", doc("$search", "x", "$language", "eng")))
	requireCode(t, err, 2, "BadValue")
}

// A compound text index needs equality on its prefix fields; documents
// are checked on insert (arrays in the other fields, the language
// override).
func TestTextCompoundAndDocuments(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := textColl(t, client, "", doc("shop", 1, "name", "text", "price", 1), nil,
		doc("_id", 1, "shop", "a", "name", "red apple", "price", 3),
		doc("_id", 2, "shop", "b", "name", "red apple", "price", 4),
		doc("_id", 3, "shop", "a", "name", "green pear", "price", 5),
	)
	got := ids(findAll(t, coll, doc("shop", "a", "$text", doc("$search", "apple pear"), "price", doc("$gt", 3))))
	if !slices.Equal(got, []string{"3"}) {
		t.Errorf("prefix a, price > 3: %v", got)
	}
	var ex bson.Raw
	if err := coll.Database().RunCommand(ctx, doc("explain", doc("find", coll.Name(), "filter", doc("shop", "b", "$text", doc("$search", "apple"))), "verbosity", "executionStats")).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	plan := ex.Lookup("queryPlanner", "winningPlan")
	if s := plan.Document().Lookup("stage").StringValue(); s != "TEXT_MATCH" || plan.Document().Lookup("indexPrefix").String() != `{"shop": "b"}` {
		t.Errorf("explain: %s", plan)
	}
	if n, _ := ex.Lookup("executionStats", "totalKeysExamined").AsInt64OK(); n != 1 {
		t.Errorf("keys examined %d, want 1 (%s)", n, ex.Lookup("executionStats"))
	}
	_, err := coll.Find(ctx, doc("$text", doc("$search", "apple")))
	requireCode(t, err, 291, "NoQueryExecutionPlans")
	// The prefix's equality is read from the normalized filter, as
	// MongoDB's optimizer leaves it: a $in of one value, a nested $and and
	// an $or of one clause are the equality.
	for _, pin := range []bson.D{
		doc("shop", doc("$in", bson.A{"a"})),
		doc("shop", doc("$in", bson.A{"a", "a"})),
		doc("$and", bson.A{doc("shop", "a")}),
		doc("$or", bson.A{doc("shop", "a")}),
	} {
		f := append(slices.Clone(pin), bson.E{Key: "$text", Value: doc("$search", "apple pear")})
		if got := ids(findAll(t, coll, f)); !slices.Equal(got, []string{"1", "3"}) && !slices.Equal(got, []string{"3", "1"}) {
			t.Errorf("prefix %v: %v", pin, got)
		}
	}
	_, err = coll.Find(ctx, doc("shop", doc("$in", bson.A{"a", "b"}), "$text", doc("$search", "apple")))
	requireCode(t, err, 291, "NoQueryExecutionPlans")
	// A string equality under a collation other than the index's (a text
	// index has none) does not pin the prefix; under the simple one it does.
	_, err = coll.Find(ctx, doc("shop", "a", "$text", doc("$search", "apple")), options.Find().SetCollation(&options.Collation{Locale: "fr"}))
	requireError(t, err, 291, "NoQueryExecutionPlans",
		"error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)")
	if got := ids(findAll(t, coll, doc("shop", "a", "$text", doc("$search", "apple")), options.Find().SetCollation(&options.Collation{Locale: "simple"}))); !slices.Equal(got, []string{"1"}) {
		t.Errorf("simple collation: %v", got)
	}
	// An equality to an array pins the prefix to a value no key holds
	// (fts_trailing_fields.js).
	if got := ids(findAll(t, coll, doc("shop", bson.A{"a", "b"}, "$text", doc("$search", "apple")))); len(got) != 0 {
		t.Errorf("prefix [a, b]: %v", got)
	}
	// extractNonFTSKeyElement: before the text is read, for prefix and
	// suffix fields alike.
	for _, c := range []struct {
		d   bson.D
		msg string
	}{
		{doc("_id", 9, "shop", bson.A{"a", "b"}, "name", "x"), `Field 'shop' of text index contains an array in document: { _id: 9, shop: [ "a", "b" ], name: "x" }`},
		{doc("_id", 9, "shop", "a", "name", 5, "price", bson.A{}), `Field 'price' of text index contains an array in document: { _id: 9, shop: "a", name: 5, price: [] }`},
	} {
		_, err = coll.InsertOne(ctx, c.d)
		var we mongo.WriteException
		if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 201 || we.WriteErrors[0].Message != c.msg {
			t.Errorf("%v: got %v, want CannotBuildIndexKeys %q", c.d, err, c.msg)
		}
	}

	lang := textColl(t, client, "lang", doc("q", "text"), nil)
	_, err = lang.InsertOne(ctx, doc("q", "hola", "language", 1))
	requireCode(t, err, 17261, "Location17261")
	_, err = lang.InsertOne(ctx, doc("q", "hola", "language", "klingon"))
	requireCode(t, err, 17262, "Location17262")
	if n, _ := lang.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Errorf("refused documents stored: %d", n)
	}
}

// $text where MongoDB refuses it.
func TestTextErrors(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	plain := client.Database("text").Collection("plain")
	plain.InsertOne(ctx, doc("a", "x"))
	_, err := plain.Find(ctx, textQuery("x", "", false, false))
	requireCode(t, err, 27, "IndexNotFound")

	coll := textColl(t, client, "", doc("a", "text"), nil, doc("_id", 1, "a", "x y"), doc("_id", 2, "a", "z"))
	coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("b", 1)})
	for _, tt := range []struct {
		filter bson.D
		opts   *options.FindOptionsBuilder
		code   int
		msg    string
	}{
		{doc("$nor", bson.A{textQuery("x", "", false, false)}), nil, 2, ""},
		{doc("$and", bson.A{textQuery("x", "", false, false), textQuery("y", "", false, false)}), nil, 2, ""},
		{textQuery("x", "klingon", false, false), nil, 2, ""},
		// CanonicalQuery::isValid: no hint at all, not even the text
		// index's, and no $natural sort.
		{textQuery("x", "", false, false), options.Find().SetHint(doc("b", 1)), 2, "text and hint not allowed in same query"},
		{textQuery("x", "", false, false), options.Find().SetHint("a_text"), 2, "text and hint not allowed in same query"},
		{textQuery("x", "", false, false), options.Find().SetHint(doc("$natural", 1)), 2, "text and hint not allowed in same query"},
		{textQuery("x", "", false, false), options.Find().SetHint("nosuchindex"), 2, "text and hint not allowed in same query"},
		{textQuery("x", "", false, false), options.Find().SetSort(doc("$natural", 1)), 2, "text expression not allowed with $natural sort order"},
		// and no tailable cursor, even on a capped collection
		{textQuery("x", "", false, false), options.Find().SetCursorType(options.Tailable), 2, "text and tailable cursor not allowed in same query"},
		{doc("b", 1), options.Find().SetHint("a_text"), 291, ""},
		// an $or's other branches need an index (QueryPlanner::plan:
		// TEXT under OR when the $text is a branch of the root $or)
		{doc("$or", bson.A{textQuery("x", "", false, false), doc("c", 1)}), nil, 291,
			"error processing query: planner returned error :: caused by :: Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to be indexed as well."},
		{doc("$or", bson.A{doc("b", 1), doc("$or", bson.A{textQuery("x", "", false, false), doc("c", 1)})}), nil, 291,
			"error processing query: planner returned error :: caused by :: Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to be indexed as well."},
		{doc("b", 1, "$or", bson.A{textQuery("x", "", false, false), doc("c", 1)}), nil, 291, "error processing query: planner returned error :: caused by :: No query solutions"},
		{doc("$or", bson.A{doc("c", 1, "$text", doc("$search", "x")), doc("c", 2)}), nil, 291, "error processing query: planner returned error :: caused by :: No query solutions"},
		{doc("$or", bson.A{doc("b", 1), doc("b", 2, "$or", bson.A{textQuery("x", "", false, false), doc("b", 3)})}), nil, 238, "Folio does not support $text inside a nested $or yet"},
		{doc("$text", doc("$search", "x"), "g", doc("$nearSphere", bson.A{0, 0})), nil, 2, ""},
	} {
		_, err := coll.Find(ctx, tt.filter, tt.opts)
		var ce mongo.CommandError
		if serverCode(err) != tt.code || tt.msg != "" && (!errors.As(err, &ce) || ce.Message != tt.msg) {
			t.Errorf("%v: %v, want %d %s", tt.filter, err, tt.code, tt.msg)
		}
	}
	_, err = coll.Aggregate(ctx, bson.A{doc("$limit", 5), doc("$match", textQuery("x", "", false, false))})
	requireCode(t, err, 17313, "Location17313")
	// A $lookup's or $unionWith's sub-pipeline may start with $text, read
	// with the foreign collection's text index (text_search_requires_index.js);
	// not after $lookup's equality match, nor in a $facet.
	textMatch := bson.A{doc("$match", textQuery("x", "", false, false))}
	for _, tt := range []struct {
		stage bson.D
		want  string
	}{
		{doc("$lookup", doc("from", coll.Name(), "pipeline", append(textMatch, doc("$project", doc("s", scoreMeta))), "as", "l")),
			`{"_id": {"$numberInt":"2"},"a": "z","l": [{"_id": {"$numberInt":"1"},"s": {"$numberDouble":"0.75"}}]}`},
		{doc("$unionWith", doc("coll", coll.Name(), "pipeline", append(textMatch, doc("$project", doc("s", scoreMeta))))),
			`{"_id": {"$numberInt":"1"},"s": {"$numberDouble":"0.75"}}`},
	} {
		cur, err := coll.Aggregate(ctx, bson.A{doc("$match", doc("_id", 2)), tt.stage})
		var docs []bson.Raw
		if err == nil {
			err = cur.All(ctx, &docs)
		}
		if err != nil || len(docs) == 0 || docs[len(docs)-1].String() != tt.want {
			t.Errorf("%v: %v %v, want last %s", tt.stage, docs, err, tt.want)
		}
	}
	_, err = plain.Aggregate(ctx, bson.A{doc("$lookup", doc("from", "plain", "pipeline", textMatch, "as", "l"))})
	requireCode(t, err, 27, "IndexNotFound")
	_, err = coll.Aggregate(ctx, bson.A{doc("$lookup", doc("from", coll.Name(), "localField", "a", "foreignField", "a", "pipeline", textMatch, "as", "l"))})
	requireCode(t, err, 17313, "Location17313")
	_, err = coll.Aggregate(ctx, bson.A{doc("$facet", doc("f", textMatch))})
	requireCode(t, err, 17313, "Location17313")
	// A hidden text index serves no $text: the planner, which leaves it
	// out, finds none (hidden_index.js).
	if err := coll.Database().RunCommand(ctx, doc("collMod", coll.Name(), "index", doc("name", "a_text", "hidden", true))).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = coll.Find(ctx, textQuery("x", "", false, false))
	requireCode(t, err, 291, "NoQueryExecutionPlans")
	_, err = coll.UpdateMany(ctx, textQuery("x", "", false, false), doc("$set", doc("y", 1)))
	requireCode(t, err, 291, "NoQueryExecutionPlans")
}

// Writes select their documents with $text too.
func TestTextWrites(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := textColl(t, client, "", doc("a", "text"), nil,
		doc("_id", 1, "a", "red fish"), doc("_id", 2, "a", "blue fish"), doc("_id", 3, "a", "red car"))
	res, err := coll.UpdateMany(ctx, textQuery("fish", "", false, false), doc("$set", doc("fish", true)))
	if err != nil || res.ModifiedCount != 2 {
		t.Fatalf("updateMany: %+v %v", res, err)
	}
	var got bson.Raw
	err = coll.FindOneAndUpdate(ctx, textQuery("car -fish", "", false, false), doc("$set", doc("car", true)),
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&got)
	if err != nil || got.Lookup("_id").Int32() != 3 {
		t.Fatalf("findAndModify: %v %v", got, err)
	}
	// Updated text is searched under its new terms.
	if _, err := coll.UpdateOne(ctx, doc("_id", 2), doc("$set", doc("a", "green boat"))); err != nil {
		t.Fatal(err)
	}
	got2 := ids(findAll(t, coll, textQuery("boat fish", "", false, false)))
	if slices.Sort(got2); fmt.Sprint(got2) != "[1 2]" {
		t.Errorf("after update: %v", got2)
	}
	del, err := coll.DeleteMany(ctx, textQuery("red", "", false, false))
	if err != nil || del.DeletedCount != 2 {
		t.Fatalf("deleteMany: %+v %v", del, err)
	}
	var vals []any
	if err := coll.Distinct(ctx, "a", textQuery("boat", "", false, false)).Decode(&vals); err != nil || len(vals) != 1 {
		t.Errorf("distinct: %v %v", vals, err)
	}
}

// A search reads the keys of its terms and their documents, not the
// collection: explain's executionStats count them.
func TestTextExaminesMatches(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := textColl(t, client, "", doc("body", "text"), nil)
	docs := make([]any, 0, 2000)
	for i := 0; i < 2000; i++ {
		body := fmt.Sprintf("common words w%d w%d", i%37, i%101)
		switch i % 100 {
		case 3:
			body += " zebra"
		case 50:
			body += " quokka quokka"
		}
		docs = append(docs, doc("_id", i, "body", body))
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var ex bson.Raw
	cmd := doc("explain", doc("find", coll.Name(), "filter", textQuery("zebra quokka", "", false, false)), "verbosity", "executionStats")
	if err := coll.Database().RunCommand(ctx, cmd).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	stats := ex.Lookup("executionStats").Document()
	for _, f := range []string{"nReturned", "totalKeysExamined", "totalDocsExamined"} {
		if n, _ := stats.Lookup(f).AsInt64OK(); n != 40 {
			t.Errorf("%s = %d, want 40 (%s)", f, n, stats)
		}
	}
}

// An aggregation whose stages read the text score plans the scan that
// scores (TEXT_OR); one that does not reads an OR of the term scans
// (Pipeline::getDependencies; optimize_text.js).
func TestTextAggregateExplainScores(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := textColl(t, client, "", doc("a", "text"), nil, doc("_id", 1, "a", "banana leaf"))
	match := doc("$match", textQuery("banana leaf", "", false, false))
	for _, tt := range []struct {
		pipeline bson.A
		want     string
	}{
		{bson.A{match}, "OR"},
		{bson.A{match, doc("$project", doc("s", scoreMeta))}, "TEXT_OR"},
		{bson.A{match, doc("$group", doc("_id", nil, "s", doc("$sum", scoreMeta)))}, "TEXT_OR"},
		{bson.A{match, doc("$group", doc("_id", "$a")), doc("$project", doc("s", scoreMeta))}, "OR"},
	} {
		var ex bson.Raw
		if err := coll.Database().RunCommand(ctx, doc("explain", doc("aggregate", coll.Name(), "pipeline", tt.pipeline, "cursor", doc()), "verbosity", "queryPlanner")).Decode(&ex); err != nil {
			t.Fatal(err)
		}
		// the plan is the reply's, or its $cursor stage's
		if s := ex.String(); !strings.Contains(s, `"stage": "`+tt.want+`"`) || tt.want == "OR" && strings.Contains(s, "TEXT_OR") {
			t.Errorf("%v: %s, want %s", tt.pipeline, s, tt.want)
		}
	}
}

// A $text in a branch of an $or is one branch of the index union, read
// first: its documents carry their scores, the other branches' none
// (projected as nothing, sorted last). MongoDB's fts_projection.js
// (SERVER-12173), or_inexact.js cases 8 to 10 (a compound text index's
// prefix in the branch), fts6.js.
func TestTextInOr(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	search := textQuery("textual content -irrelevant", "", false, false)
	coll := textColl(t, client, "", doc("a", "text"), nil,
		doc("_id", 0, "a", "textual content"), doc("_id", 1, "a", "additional content", "b", -1),
		doc("_id", 2, "a", "irrelevant content"), doc("_id", 3, "a", "nothing"))
	scores := map[string]float64{}
	for _, d := range findAll(t, coll, search, options.Find().SetProjection(doc("s", scoreMeta))) {
		scores[d.Lookup("_id").String()] = d.Lookup("s").Double()
	}
	if len(scores) != 2 {
		t.Fatalf("scores %v", scores)
	}
	// _id 1 matches both branches and keeps its score; _id 3 has none
	got := findAll(t, coll, doc("$or", bson.A{doc("_id", 1), search, doc("_id", 3)}),
		options.Find().SetProjection(doc("s", scoreMeta)).SetSort(doc("s", scoreMeta)).SetBatchSize(1))
	if len(got) != 3 || got[2].Lookup("_id").Int32() != 3 || got[2].Lookup("s").Type != 0 {
		t.Fatalf("sorted by score: %s", docsString(got))
	}
	for _, d := range got[:2] {
		if s, ok := d.Lookup("s").DoubleOK(); !ok || s != scores[d.Lookup("_id").String()] {
			t.Errorf("score of %s, want %v", d, scores)
		}
	}
	// an $or among the branches lends them its own
	if got := ids(findAll(t, coll, doc("$or", bson.A{doc("_id", 3), doc("$or", bson.A{search, doc("_id", 1)})}))); len(got) != 3 {
		t.Errorf("nested $or: %v", got)
	}
	docs := aggregateAll(t, coll, bson.A{doc("$match", doc("$or", bson.A{search, doc("_id", 3)})), doc("$project", doc("s", scoreMeta)), doc("$sort", doc("_id", 1))})
	if len(docs) != 3 || docs[0].Lookup("s").Double() != scores[docs[0].Lookup("_id").String()] ||
		docs[1].Lookup("s").Double() != scores[docs[1].Lookup("_id").String()] || docs[2].Lookup("s").Type != 0 {
		t.Errorf("aggregate: %s", docsString(docs))
	}
	if n, err := coll.CountDocuments(ctx, doc("$or", bson.A{search, doc("_id", doc("$gt", 1))})); err != nil || n != 4 {
		t.Errorf("count: %d %v", n, err)
	}
	// explain: an OR over the text search's TEXT_MATCH (TEXT_OR for the
	// scores) and the _id scan
	var ex bson.Raw
	if err := coll.Database().RunCommand(ctx, doc("explain", doc("find", coll.Name(), "filter", doc("$or", bson.A{search, doc("_id", 1)}),
		"projection", doc("s", scoreMeta)), "verbosity", "queryPlanner")).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	or := ex.Lookup("queryPlanner", "winningPlan", "inputStage", "inputStage")
	if or.Document().Lookup("stage").StringValue() != "OR" || !strings.Contains(or.String(), `"stage": "TEXT_MATCH"`) ||
		!strings.Contains(or.String(), `"stage": "TEXT_OR"`) || !strings.Contains(or.String(), `"indexName": "_id_"`) {
		t.Errorf("explain: %s", ex.Lookup("queryPlanner", "winningPlan"))
	}
	// Writes read the union too.
	if res, err := coll.UpdateMany(ctx, doc("$or", bson.A{search, doc("_id", 3)}), doc("$set", doc("u", true))); err != nil || res.ModifiedCount != 3 {
		t.Errorf("updateMany: %+v %v", res, err)
	}
	var fam bson.Raw
	if err := coll.FindOneAndUpdate(ctx, doc("$or", bson.A{doc("_id", 0), search}), doc("$set", doc("v", 1)),
		options.FindOneAndUpdate().SetProjection(doc("s", scoreMeta)).SetSort(doc("_id", 1))).Decode(&fam); err != nil || fam.Lookup("s").Double() != scores[fam.Lookup("_id").String()] {
		t.Errorf("findAndModify: %s %v", fam, err)
	}
	if res, err := coll.DeleteMany(ctx, doc("$or", bson.A{textQuery("irrelevant", "", false, false), doc("_id", 3)})); err != nil || res.DeletedCount != 2 {
		t.Errorf("deleteMany: %+v %v", res, err)
	}

	// or_inexact.js cases 8 to 10: the prefix's equality in the branch
	inexact := func(name string, docs ...any) *mongo.Collection {
		c := textColl(t, client, name, doc("pre", 1, "names", "text"), nil, docs...)
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("other", 1)}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	dave := textQuery("dave", "", false, false)
	c := inexact("case8", doc("_id", 0, "pre", 3, "names", "david dave", "other", 1), doc("_id", 1, "pre", 4, "names", "joseph joe joey", "other", 2))
	if got := ids(findAll(t, c, doc("$or", bson.A{append(doc("pre", 3), dave...), doc("other", 2)}))); len(got) != 2 {
		t.Errorf("case 8: %v", got)
	}
	c = inexact("case9", doc("_id", 0, "pre", 3, "names", "david dave", "other", "foo"), doc("_id", 1, "pre", 5, "names", "david dave", "other", "foo"),
		doc("_id", 2, "pre", 4, "names", "joseph joe joey", "other", "bar"))
	if got := ids(findAll(t, c, doc("$or", bson.A{append(doc("pre", 3), dave...), doc("other", bson.Regex{Pattern: "bar"})}))); len(got) != 2 {
		t.Errorf("case 9: %v", got)
	}
	c = inexact("case10", doc("_id", 0, "pre", 3, "names", "david dave", "other", "foo"), doc("_id", 1, "pre", 3, "names", "david dave", "other", "foo"),
		doc("_id", 2, "pre", 4, "names", "joseph joe joey", "other", "bar"))
	if got := ids(findAll(t, c, doc("$or", bson.A{append(doc("pre", 3, "other", "foo"), dave...), doc("other", bson.Regex{Pattern: "bar"})}))); len(got) != 3 {
		t.Errorf("case 10: %v", got)
	}
	// an $or of one branch is that branch, beside the other conjuncts
	if got := ids(findAll(t, c, doc("pre", 3, "$or", bson.A{dave}))); fmt.Sprint(got) != "[0 1]" {
		t.Errorf("$or of one branch: %v", got)
	}
	// the prefix's equality beside the $or does not serve the branch
	_, err := c.Find(ctx, doc("pre", 3, "$or", bson.A{dave, doc("other", "bar")}))
	requireError(t, err, 291, "NoQueryExecutionPlans",
		"error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)")

	// fts6.js
	c = textColl(t, client, "fts6", doc("b", "text"), nil, doc("_id", 1, "a", 0), doc("_id", 2, "a", 0, "b", "foo"))
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("a", 1)}); err != nil {
		t.Fatal(err)
	}
	if got := ids(findAll(t, c, doc("a", 0, "$or", bson.A{doc("_id", 2), textQuery("foo", "", false, false)}))); fmt.Sprint(got) != "[2]" {
		t.Errorf("fts6: %v", got)
	}
}

// $sample keeps the metadata of the documents it picks, as MongoDB's,
// which passes them whole through its sorter: their text scores project
// and sort after it, whichever documents it picks.
func TestTextScoreThroughSample(t *testing.T) {
	client, _ := startServer(t)
	coll := textColl(t, client, "", doc("a", "text"), nil,
		doc("_id", 1, "a", "hello world"), doc("_id", 2, "a", "goodbye"), doc("_id", 3, "a", "hello"), doc("_id", 4, "a", "hello hello there"))
	match := doc("$match", textQuery("hello", "", false, false))
	scores := map[string]float64{}
	for _, d := range findAll(t, coll, textQuery("hello", "", false, false), options.Find().SetProjection(doc("s", scoreMeta))) {
		scores[d.Lookup("_id").String()] = d.Lookup("s").Double()
	}
	if len(scores) != 3 {
		t.Fatalf("scores %v", scores)
	}
	for _, size := range []int{1, 2, 10} {
		got := aggregateAll(t, coll, bson.A{match, doc("$sample", doc("size", size)), doc("$project", doc("s", scoreMeta))})
		if len(got) != min(size, 3) {
			t.Fatalf("$sample %d: %s", size, docsString(got))
		}
		for _, d := range got {
			if s, ok := d.Lookup("s").DoubleOK(); !ok || s != scores[d.Lookup("_id").String()] {
				t.Fatalf("$sample %d: %s, want the scores %v", size, docsString(got), scores)
			}
		}
	}
	sorted := aggregateAll(t, coll, bson.A{match, doc("$sample", doc("size", 10)), doc("$sort", doc("s", scoreMeta)), doc("$project", doc("_id", 1))})
	if got := ids(sorted); !slices.Equal(got, []string{"4", "3", "1"}) {
		t.Fatalf("sorted by score after $sample: %v, want [4 3 1] (scores %v)", got, scores)
	}
}

// $unionWith returns its input's documents and its sub-pipeline's as they
// come, metadata included (MongoDB's DocumentSourceUnionWith::doGetNext):
// the scores of the outer $text search and of the sub-pipeline's sort and
// project after it. No $match or $project follows the $unionWith itself,
// which MongoDB would copy into the sub-pipeline.
func TestTextScoreThroughUnionWith(t *testing.T) {
	client, _ := startServer(t)
	coll := textColl(t, client, "", doc("a", "text"), nil,
		doc("_id", 1, "a", "hello world"), doc("_id", 2, "a", "goodbye"), doc("_id", 3, "a", "hello"))
	union := doc("$unionWith", doc("coll", coll.Name(), "pipeline", bson.A{doc("$match", textQuery("goodbye", "", false, false))}))
	match := doc("$match", textQuery("hello world", "", false, false))
	sorted := aggregateAll(t, coll, bson.A{match, union, doc("$sort", doc("s", scoreMeta, "_id", -1)), doc("$project", doc("_id", 1))})
	if got := ids(sorted); !slices.Equal(got, []string{"1", "3", "2"}) {
		t.Fatalf("sorted by score after $unionWith: %v, want [1 3 2]", got)
	}
	got := aggregateAll(t, coll, bson.A{match, union, doc("$sort", doc("_id", 1)), doc("$project", doc("s", scoreMeta))})
	want := []float64{1.5, 1.0, 1.1} // "goodbye" stems to "goodby": no exact-term bonus
	if len(got) != len(want) {
		t.Fatalf("scores after $unionWith: %s", docsString(got))
	}
	for i, d := range got {
		if s, ok := d.Lookup("s").DoubleOK(); !ok || s != want[i] {
			t.Fatalf("scores after $unionWith: %s, want %v", docsString(got), want)
		}
	}
}

// $setWindowFields sorted by {$meta: "textScore"} orders each partition
// by score, highest first (MongoDB's generated $sort), and its rank-style
// functions rank by the score (ExpressionFromRankAccumulator takes the
// sort part's expression).
func TestTextScoreWindowSort(t *testing.T) {
	client, _ := startServer(t)
	coll := textColl(t, client, "", doc("a", "text"), nil,
		doc("_id", 1, "a", "hello world"), doc("_id", 2, "a", "goodbye"), doc("_id", 3, "a", "hello"),
		doc("_id", 4, "a", "hello hello there"), doc("_id", 5, "a", "hello moon"))
	match := doc("$match", textQuery("hello", "", false, false))
	window := func(fn string) []bson.Raw {
		return aggregateAll(t, coll, bson.A{match,
			doc("$setWindowFields", doc("sortBy", doc("s", scoreMeta), "output", doc("r", doc(fn, doc())))),
			doc("$project", doc("r", 1, "s", scoreMeta))})
	}
	for _, tt := range []struct {
		fn    string
		ranks []int32
	}{
		{"$rank", []int32{1, 2, 3, 3}},
		{"$denseRank", []int32{1, 2, 3, 3}},
		{"$documentNumber", []int32{1, 2, 3, 4}},
	} {
		got := window(tt.fn)
		if len(got) != len(tt.ranks) {
			t.Fatalf("%s: %s", tt.fn, docsString(got))
		}
		for i, d := range got {
			if r, ok := d.Lookup("r").Int32OK(); !ok || r != tt.ranks[i] ||
				i > 0 && d.Lookup("s").Double() > got[i-1].Lookup("s").Double() {
				t.Fatalf("%s: %s, want scores descending ranked %v", tt.fn, docsString(got), tt.ranks)
			}
		}
		if got[0].Lookup("_id").Int32() != 4 || got[1].Lookup("_id").Int32() != 3 {
			t.Fatalf("%s: %s, want _id 4 (1.5) then 3 (1.1) first", tt.fn, docsString(got))
		}
	}
}

// $top, $topN, $bottom and the like sorted by {$meta: "textScore"} work in
// $setWindowFields as in $group: a window's documents keep their scores
// while the partition is in memory (MongoDB's spilled partition keeps
// fields alone, SpillableCache writing Document::toBson).
func TestTextScoreWindowTop(t *testing.T) {
	client, _ := startServer(t)
	coll := textColl(t, client, "", doc("a", "text"), nil,
		doc("_id", 1, "a", "hello world"), doc("_id", 2, "a", "goodbye"), doc("_id", 3, "a", "hello"), doc("_id", 4, "a", "hello hello there"))
	match := doc("$match", textQuery("hello", "", false, false))
	byScore := doc("s", scoreMeta)
	got := aggregateAll(t, coll, bson.A{match, doc("$setWindowFields", doc("sortBy", doc("_id", 1), "output", doc(
		"top", doc("$top", doc("sortBy", byScore, "output", "$_id")),
		"bottom", doc("$bottom", doc("sortBy", byScore, "output", "$_id")),
		"running", doc("$topN", doc("n", 2, "sortBy", byScore, "output", "$_id"), "window", doc("documents", bson.A{"unbounded", "current"}))))),
		doc("$project", doc("top", 1, "bottom", 1, "running", 1))})
	want := []string{
		`{"_id": {"$numberInt":"1"},"top": {"$numberInt":"4"},"bottom": {"$numberInt":"1"},"running": [{"$numberInt":"1"}]}`,
		`{"_id": {"$numberInt":"3"},"top": {"$numberInt":"4"},"bottom": {"$numberInt":"1"},"running": [{"$numberInt":"3"},{"$numberInt":"1"}]}`,
		`{"_id": {"$numberInt":"4"},"top": {"$numberInt":"4"},"bottom": {"$numberInt":"1"},"running": [{"$numberInt":"4"},{"$numberInt":"3"}]}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %s", docsString(got))
	}
	for i, d := range got {
		if d.String() != want[i] {
			t.Fatalf("document %d: %s, want %s", i, d, want[i])
		}
	}
}

// A text index is multikey once a document gives it more than one key, as
// MongoDB's FTS access method marks it (numberOfKeys > 1): explain's text
// IXSCAN says isMultiKey false while every document holds one term.
func TestTextIndexMultikey(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := textColl(t, client, "", doc("a", "text"), nil, doc("_id", 1, "a", "banana"), doc("_id", 2, "a", "the leaf"))
	isMultiKey := func() bool {
		t.Helper()
		var ex bson.Raw
		if err := coll.Database().RunCommand(ctx, doc("explain", doc("find", coll.Name(), "filter", textQuery("banana", "", false, false),
			"projection", doc("s", scoreMeta)), "verbosity", "queryPlanner")).Decode(&ex); err != nil {
			t.Fatal(err)
		}
		scan := ex.Lookup("queryPlanner", "winningPlan", "inputStage", "inputStage", "inputStage")
		if scan.Document().Lookup("stage").StringValue() != "IXSCAN" {
			t.Fatalf("no IXSCAN under TEXT_OR: %s", ex.Lookup("queryPlanner", "winningPlan"))
		}
		return scan.Document().Lookup("isMultiKey").Boolean()
	}
	if isMultiKey() {
		t.Fatal("isMultiKey true with one key per document")
	}
	if _, err := coll.InsertOne(ctx, doc("_id", 3, "a", "banana leaf")); err != nil {
		t.Fatal(err)
	}
	if !isMultiKey() {
		t.Fatal("isMultiKey false after a document with two keys")
	}
}

// A partial text index serves a $text only when the clauses AND-ed with it
// imply its filter: MongoDB strips the $text's assignment to it otherwise
// (stripInvalidAssignmentsToPartialIndices), and the planner fails with
// "failed to use text index" rather than answer from the documents the
// index holds.
func TestTextPartialIndex(t *testing.T) {
	client, _ := startServer(t)
	coll := textColl(t, client, "", doc("a", "text"), options.Index().SetPartialFilterExpression(doc("b", doc("$gt", 1))),
		doc("_id", 1, "a", "hi", "b", 0), doc("_id", 2, "a", "hi", "b", 2), doc("_id", 3, "a", "yo", "b", 5))
	hi := doc("$search", "hi")
	for _, f := range []bson.D{
		doc("b", 2, "$text", hi),
		doc("b", doc("$gt", 1), "$text", hi),
		doc("b", doc("$in", bson.A{2, 3}), "$text", hi),
	} {
		if got := ids(findAll(t, coll, f)); !slices.Equal(got, []string{"2"}) {
			t.Errorf("%v: %v", f, got)
		}
	}
	const msg = "error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)"
	for _, f := range []bson.D{
		doc("$text", hi),
		doc("b", doc("$gt", 0), "$text", hi),
		doc("$or", bson.A{doc("$text", hi), doc("_id", 3)}),
	} {
		_, err := coll.Find(context.Background(), f)
		requireError(t, err, 291, "NoQueryExecutionPlans", msg)
	}
	_, err := coll.CountDocuments(context.Background(), doc("$text", hi))
	requireError(t, err, 291, "NoQueryExecutionPlans", msg)
}
