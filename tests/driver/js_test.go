package driver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// seedJS inserts documents of every BSON type the JavaScript mapping
// covers.
func seedJS(t *testing.T, coll *mongo.Collection) {
	t.Helper()
	id, _ := bson.ObjectIDFromHex("5f0000000000000000000001")
	dec, _ := bson.ParseDecimal128("1.5")
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: int32(1)}, {Key: "s", Value: "x"}, {Key: "oid", Value: id}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: int64(2)}, {Key: "d", Value: bson.DateTime(86400000)}, {Key: "dec", Value: dec}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: 3.5}, {Key: "arr", Value: bson.A{1, 2, 3}}, {Key: "sub", Value: bson.D{{Key: "z", Value: 1}, {Key: "y", Value: 2}}}},
		bson.D{{Key: "_id", Value: 4}, {Key: "bin", Value: bson.Binary{Subtype: 0, Data: []byte{1, 2, 3}}}, {Key: "ts", Value: bson.Timestamp{T: 1, I: 2}}, {Key: "n", Value: nil}},
	}
	if _, err := coll.InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

func jsIDs(t *testing.T, cur *mongo.Cursor, err error) []int32 {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	out := []int32{}
	for _, d := range docs {
		out = append(out, d.Lookup("_id").Int32())
	}
	return out
}

// TestWhere runs $where filters through find, count and writes; this and
// obj are the document, with BSON values mapped as MongoDB maps them.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/where/
func TestWhere(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("where")
	seedJS(t, coll)
	ctx := context.Background()
	for _, tc := range []struct {
		where any
		want  string
	}{
		{"this.a == 1", "[1]"},
		{"obj.a >= 2", "[2 3]"},
		{bson.JavaScript("function() { return this.s === 'x'; }"), "[1]"},
		{"this.oid instanceof ObjectId && this.oid.str == '5f0000000000000000000001'", "[1]"},
		{"this.a instanceof NumberLong && this.a.toNumber() === 2", "[2]"},
		{"this.d instanceof Date && this.d.getTime() == 86400000", "[2]"},
		{"this.dec instanceof NumberDecimal && this.dec.toString() == 'NumberDecimal(\"1.5\")'", "[2]"},
		{"Array.isArray(this.arr) && Array.sum(this.arr) == 6 && Object.keys(this.sub).join() == 'z,y'", "[3]"},
		{"this.bin instanceof BinData && this.bin.length() == 3 && this.ts.t == 1 && this.n === null", "[4]"},
		{"return this.missing === undefined", "[1 2 3 4]"},
	} {
		cur, err := coll.Find(ctx, bson.D{{Key: "$where", Value: tc.where}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		got := jsIDs(t, cur, err)
		if fmt.Sprint(got) != tc.want {
			t.Errorf("$where %v: got %v, want %s", tc.where, got, tc.want)
		}
	}
	// countDocuments is an aggregation: its $match refuses $where, as
	// MongoDB's does; the count command takes it.
	n, err := countWhere(coll, "this.a > 1")
	if err != nil || n != 2 {
		t.Errorf("count: %d %v", n, err)
	}
	res, err := coll.UpdateMany(ctx, bson.D{{Key: "$where", Value: "this._id > 2"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "w", Value: true}}}})
	if err != nil || res.ModifiedCount != 2 {
		t.Errorf("update: %v %v", res, err)
	}
	// A script error fails the query with JSInterpreterFailure; $where
	// is refused inside $elemMatch and in an aggregation $match.
	for _, tc := range []struct {
		filter bson.D
		code   int
		msg    string
	}{
		{bson.D{{Key: "$where", Value: "this.sub.z.q.r"}}, 139, "TypeError"},
		{bson.D{{Key: "$where", Value: "require('fs')"}}, 139, "ReferenceError: require is not defined"},
		{bson.D{{Key: "$where", Value: "load('x.js')"}}, 139, "ReferenceError: load is not defined"},
		{bson.D{{Key: "$where", Value: "function( {"}}, 139, "SyntaxError"},
		{bson.D{{Key: "$where", Value: 5}}, 2, "$where got bad type"},
		{bson.D{{Key: "arr", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$where", Value: "true"}}}}}}, 2, "$elemMatch cannot contain $where"},
	} {
		_, err := coll.Find(ctx, tc.filter)
		if serverCode(err) != tc.code || !strings.Contains(errText(err), tc.msg) {
			t.Errorf("%v: %v, want %d %q", tc.filter, err, tc.code, tc.msg)
		}
	}
	_, err = coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "$where", Value: "true"}}}}})
	if serverCode(err) != 2 || !strings.Contains(errText(err), "$where is not allowed in this context") {
		t.Errorf("$match $where: %v", err)
	}
}

func countWhere(coll *mongo.Collection, where string) (int32, error) {
	var reply struct{ N int32 }
	err := coll.Database().RunCommand(context.Background(), bson.D{{Key: "count", Value: coll.Name()}, {Key: "query", Value: bson.D{{Key: "$where", Value: where}}}}).Decode(&reply)
	return reply.N, err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestFunction runs $function in aggregation expressions and in a find's
// $expr.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/function/
func TestFunction(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("fn")
	seedJS(t, coll)
	ctx := context.Background()
	fn := func(body string, args any) bson.D {
		return bson.D{{Key: "$function", Value: bson.D{{Key: "body", Value: body}, {Key: "args", Value: args}, {Key: "lang", Value: "js"}}}}
	}
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$lte", Value: 2}}}}}},
		{{Key: "$project", Value: bson.D{
			{Key: "twice", Value: fn("function(a) { return a * 2; }", bson.A{"$a"})},
			{Key: "long", Value: fn("function(a) { return a; }", bson.A{"$a"})},
			{Key: "obj", Value: fn("function(id, s) { return {id: id, s: s, n: NumberInt(4)}; }", bson.A{"$_id", "$s"})},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"_id": {"$numberInt":"1"},"twice": {"$numberDouble":"2.0"},"long": {"$numberDouble":"1.0"},"obj": {"id": {"$numberDouble":"1.0"},"s": "x","n": {"$numberInt":"4"}}}`,
		`{"_id": {"$numberInt":"2"},"twice": {"$numberDouble":"4.0"},"long": {"$numberLong":"2"},"obj": {"id": {"$numberDouble":"2.0"},"s": null,"n": {"$numberInt":"4"}}}`,
	}
	if len(out) != 2 || out[0].String() != want[0] || out[1].String() != want[1] {
		t.Fatalf("got %v", out)
	}
	cur, err = coll.Find(ctx, bson.D{{Key: "$expr", Value: fn("function(a) { return a > 1; }", bson.A{"$a"})}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	got := jsIDs(t, cur, err)
	if fmt.Sprint(got) != "[2 3]" {
		t.Errorf("$expr $function: %v", got)
	}
	for _, tc := range []struct {
		spec any
		code int
	}{
		{"x", 31260},
		{bson.D{{Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}, 31261},
		{bson.D{{Key: "body", Value: 1}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}, 31262},
		{bson.D{{Key: "body", Value: "function(){}"}, {Key: "lang", Value: "js"}}, 31263},
		{bson.D{{Key: "body", Value: "function(){}"}, {Key: "args", Value: bson.A{}}}, 31418},
		{bson.D{{Key: "body", Value: "function(){}"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "py"}}, 31419},
		{bson.D{{Key: "body", Value: "function(){}"}, {Key: "args", Value: "$s"}, {Key: "lang", Value: "js"}}, 31266},
		{bson.D{{Key: "body", Value: "function(){ throw new Error('no') }"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}, 139},
	} {
		cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$function", Value: tc.spec}}}}}}})
		if err == nil {
			err = cur.All(ctx, &out)
		}
		if serverCode(err) != tc.code {
			t.Errorf("%v: %v, want %d", tc.spec, err, tc.code)
		}
	}
	// UUID, HexData and MD5 are globals of the server's scope; endless
	// recursion through them fails with "too much recursion" and its
	// stack (agg_infinite_recursion.js).
	cur, err = coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: 1}}}},
		{{Key: "$project", Value: bson.D{
			{Key: "_id", Value: 0},
			{Key: "u", Value: fn("function() { return UUID('81fd5473-1747-4c9d-8743-f10642b3bb99'); }", bson.A{})},
			{Key: "h", Value: fn("function() { return new HexData(4, '81fd547317474c9d8743f10642b3bb99').hex(); }", bson.A{})},
			{Key: "m", Value: fn("function() { return MD5('00000000000000000000000000000001').subtype(); }", bson.A{})},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if want := `{"u": {"$binary":{"base64":"gf1UcxdHTJ2HQ/EGQrO7mQ==","subType":"04"}},"h": "81fd547317474c9d8743f10642b3bb99","m": {"$numberDouble":"5.0"}}`; len(out) != 1 || out[0].String() != want {
		t.Errorf("UUID/HexData/MD5: %v", out)
	}
	for _, call := range []string{"UUID('81fd5473-1747-4c9d-8743-f10642b3bb99')", "new HexData(4, '81fd547317474c9d8743f10642b3bb99')"} {
		body := "function() { let f = (i) => { " + call + "; f(i + 1); }; f(0); }"
		_, err := coll.Find(ctx, bson.D{{Key: "$where", Value: body}})
		if serverCode(err) != 139 || !strings.Contains(errText(err), "too much recursion") || strings.Count(errText(err), "\n") < 20 {
			t.Errorf("recursion through %s: %v", call, err)
		}
	}
}

// TestScriptsBounded: a script that loops forever stops at maxTimeMS
// (50) or when killed (11601); one that allocates without bound fails
// with "Out of memory"; the server keeps serving.
func TestScriptsBounded(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("bounded")
	seedJS(t, coll)
	ctx := context.Background()
	start := time.Now()
	err := coll.Database().RunCommand(ctx, bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: bson.D{{Key: "$where", Value: "while (true) {}"}}}, {Key: "maxTimeMS", Value: 100}}).Err()
	if serverCode(err) != 50 || time.Since(start) > 5*time.Second {
		t.Fatalf("endless $where with maxTimeMS: %v after %v", err, time.Since(start))
	}
	err = coll.Database().RunCommand(ctx, bson.D{{Key: "aggregate", Value: coll.Name()}, {Key: "pipeline", Value: mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$function", Value: bson.D{
		{Key: "body", Value: "function() { for (;;) {} }"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}}}}}}}}},
		{Key: "cursor", Value: bson.D{}}, {Key: "maxTimeMS", Value: 100}}).Err()
	if serverCode(err) != 50 {
		t.Fatalf("endless $function with maxTimeMS: %v", err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := coll.Find(ctx, bson.D{{Key: "$where", Value: "for (;;) {}"}}, options.Find().SetComment("js-killop"))
		errc <- err
	}()
	opid := awaitOp(t, client, "js-killop")
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if serverCode(err) != 11601 {
			t.Fatalf("killed $where: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("killed $where still running")
	}
	_, err = coll.Find(ctx, bson.D{{Key: "$where", Value: "var a = []; for (;;) a.push('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' + a.length); "}})
	if serverCode(err) != 139 || !strings.Contains(errText(err), "Out of memory") {
		t.Fatalf("unbounded allocation: %v", err)
	}
	_, err = coll.Find(ctx, bson.D{{Key: "$where", Value: "'x'.repeat(1e10)"}})
	if serverCode(err) != 139 || !strings.Contains(errText(err), "Out of memory") {
		t.Fatalf("huge repeat: %v", err)
	}
	n, err := countWhere(coll, "true")
	if err != nil || n != 4 {
		t.Fatalf("server after runaway scripts: %d %v", n, err)
	}
}

// TestJavaScriptDisabled: with javascriptEnabled false every script is
// refused with MongoDB's codes.
// https://www.mongodb.com/docs/v7.0/reference/configuration-options/#mongodb-setting-security.javascriptEnabled
func TestJavaScriptDisabled(t *testing.T) {
	cfg := defaultConfig()
	cfg.NoJavaScript = true
	in := startInstance(t, cfg)
	client := connect(t, in)
	coll := client.Database(testDB).Collection("nojs")
	seedJS(t, coll)
	ctx := context.Background()
	opts, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}}).Raw()
	if v, lerr := opts.LookupErr("parsed", "security", "javascriptEnabled"); err != nil || lerr != nil || v.Boolean() {
		t.Errorf("getCmdLineOpts: %v %v", opts, err)
	}
	_, err = coll.Find(ctx, bson.D{{Key: "$where", Value: "true"}})
	if serverCode(err) != 6108304 || !strings.Contains(errText(err), "no globalScriptEngine in $where parsing") {
		t.Errorf("$where: %v", err)
	}
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$function", Value: bson.D{
		{Key: "body", Value: "function() { return 1 }"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}}}}}}}})
	if err == nil {
		var out []bson.Raw
		err = cur.All(ctx, &out)
	}
	if serverCode(err) != 31264 {
		t.Errorf("$function: %v", err)
	}
	cur, err = coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "r", Value: bson.D{{Key: "$accumulator", Value: bson.D{
		{Key: "init", Value: "function() { return 0 }"}, {Key: "accumulate", Value: "function(s) { return s }"}, {Key: "accumulateArgs", Value: bson.A{}},
		{Key: "merge", Value: "function(a, b) { return a }"}, {Key: "lang", Value: "js"}}}}}}}}})
	if err == nil {
		var out []bson.Raw
		err = cur.All(ctx, &out)
	}
	if serverCode(err) != 31264 {
		t.Errorf("$accumulator: %v", err)
	}
}

// runMR runs a mapReduce command and returns its reply.
func runMR(t *testing.T, db *mongo.Database, cmd bson.D) (bson.Raw, error) {
	t.Helper()
	return db.RunCommand(context.Background(), cmd).Raw()
}

func collDocs(t *testing.T, coll *mongo.Collection) string {
	t.Helper()
	cur, err := coll.Find(context.Background(), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, d := range docs {
		b.WriteString(d.String())
	}
	return b.String()
}

// TestMapReduce runs mapReduce with each output mode, query, sort, limit,
// scope and finalize, and checks MongoDB 7.0's reply shapes.
// https://www.mongodb.com/docs/v7.0/reference/command/mapReduce/
func TestMapReduce(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	orders := db.Collection("orders")
	ctx := context.Background()
	var docs []any
	for i, o := range []struct {
		cust  string
		price float64
	}{{"abc", 25}, {"abc", 70}, {"xyz", 10}, {"xyz", 5}, {"ant", 1}} {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "cust", Value: o.cust}, {Key: "price", Value: o.price}})
	}
	if _, err := orders.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	mapF := bson.JavaScript("function() { emit(this.cust, this.price); }")
	reduceF := "function(key, values) { return Array.sum(values); }"
	mr := func(extra ...bson.E) bson.D {
		return append(bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: mapF}, {Key: "reduce", Value: reduceF}}, extra...)
	}
	inline := bson.E{Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}
	for _, tc := range []struct {
		name string
		cmd  bson.D
		want string
	}{
		{"inline", mr(inline), `{"results": [{"_id": "abc","value": {"$numberDouble":"95.0"}},{"_id": "ant","value": {"$numberDouble":"1.0"}},{"_id": "xyz","value": {"$numberDouble":"15.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		{"query", mr(inline, bson.E{Key: "query", Value: bson.D{{Key: "price", Value: bson.D{{Key: "$gt", Value: 6}}}}}), `{"results": [{"_id": "abc","value": {"$numberDouble":"95.0"}},{"_id": "xyz","value": {"$numberDouble":"10.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		{"sortLimit", mr(inline, bson.E{Key: "sort", Value: bson.D{{Key: "price", Value: -1}}}, bson.E{Key: "limit", Value: 2}), `{"results": [{"_id": "abc","value": {"$numberDouble":"95.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		{"finalizeScope", mr(inline, bson.E{Key: "finalize", Value: "function(k, v) { return {total: v, k: k, tax: v * rate}; }"}, bson.E{Key: "scope", Value: bson.D{{Key: "rate", Value: 0.5}}}, bson.E{Key: "query", Value: bson.D{{Key: "cust", Value: "xyz"}}}),
			`{"results": [{"_id": "xyz","value": {"total": {"$numberDouble":"15.0"},"k": "xyz","tax": {"$numberDouble":"7.5"}}}],"ok": {"$numberDouble":"1.0"}}`},
		{"whereQuery", mr(inline, bson.E{Key: "query", Value: bson.D{{Key: "$where", Value: "this.cust == 'ant'"}}}), `{"results": [{"_id": "ant","value": {"$numberDouble":"1.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		{"objectKeys", bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit({c: this.cust.charAt(0)}, {n: 1}); }"}, {Key: "reduce", Value: "function(k, vs) { var n = 0; vs.forEach(function(v) { n += v.n; }); return {n: n}; }"}, inline},
			`{"results": [{"_id": {"c": "a"},"value": {"n": {"$numberDouble":"3.0"}}},{"_id": {"c": "x"},"value": {"n": {"$numberDouble":"2.0"}}}],"ok": {"$numberDouble":"1.0"}}`},
		{"emptyResult", mr(inline, bson.E{Key: "query", Value: bson.D{{Key: "cust", Value: "none"}}}), `{"results": [],"ok": {"$numberDouble":"1.0"}}`},
		// A collation applies to the query, and groups keys equal under
		// it as one, the first emitted.
		{"collationQuery", mr(inline, bson.E{Key: "query", Value: bson.D{{Key: "cust", Value: "ABC"}}}, bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}}),
			`{"results": [{"_id": "abc","value": {"$numberDouble":"95.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		{"collationKeys", bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this._id % 2 ? this.cust : this.cust.toUpperCase(), this.price); }"}, {Key: "reduce", Value: reduceF}, inline,
			{Key: "collation", Value: bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}}},
			`{"results": [{"_id": "ABC","value": {"$numberDouble":"95.0"}},{"_id": "ANT","value": {"$numberDouble":"1.0"}},{"_id": "XYZ","value": {"$numberDouble":"15.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		{"simpleKeys", bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this._id % 2 ? this.cust : this.cust.toUpperCase(), this.price); }"}, {Key: "reduce", Value: reduceF}, inline},
			`{"results": [{"_id": "ABC","value": {"$numberDouble":"25.0"}},{"_id": "ANT","value": {"$numberDouble":"1.0"}},{"_id": "XYZ","value": {"$numberDouble":"10.0"}},{"_id": "abc","value": {"$numberDouble":"70.0"}},{"_id": "xyz","value": {"$numberDouble":"5.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		// finalize, query, sort and scope may be null (jstests mr_null_arguments.js).
		{"nullArguments", mr(inline, bson.E{Key: "finalize", Value: nil}, bson.E{Key: "query", Value: nil}, bson.E{Key: "sort", Value: nil}, bson.E{Key: "scope", Value: nil}),
			`{"results": [{"_id": "abc","value": {"$numberDouble":"95.0"}},{"_id": "ant","value": {"$numberDouble":"1.0"}},{"_id": "xyz","value": {"$numberDouble":"15.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		// a code value of scope is a function
		{"scopeFunction", mr(inline, bson.E{Key: "finalize", Value: "function(k, v) { return f(v); }"}, bson.E{Key: "scope", Value: bson.D{{Key: "f", Value: bson.JavaScript("function(x) { return x * 2; }")}}}, bson.E{Key: "query", Value: bson.D{{Key: "cust", Value: "ant"}}}),
			`{"results": [{"_id": "ant","value": {"$numberDouble":"2.0"}}],"ok": {"$numberDouble":"1.0"}}`},
		// reduce runs even for a key emitted once (jstests mr_single_reduce.js).
		{"singleValueReduced", bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: mapF}, {Key: "reduce", Value: "function(k, vs) { return 'reduced ' + vs.length; }"}, inline, {Key: "query", Value: bson.D{{Key: "cust", Value: "ant"}}}},
			`{"results": [{"_id": "ant","value": "reduced 1"}],"ok": {"$numberDouble":"1.0"}}`},
		// reduce gets a key's values last emitted first, as $_internalJsReduce passes them.
		{"valuesLastFirst", bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(1, this._id); }"}, {Key: "reduce", Value: "function(k, vs) { return vs.join(','); }"}, inline, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}},
			`{"results": [{"_id": {"$numberDouble":"1.0"},"value": "4,3,2,1,0"}],"ok": {"$numberDouble":"1.0"}}`},
		// An undefined key is null.
		{"undefinedKey", bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this.missing, 1); }"}, {Key: "reduce", Value: reduceF}, inline, {Key: "query", Value: bson.D{{Key: "cust", Value: "ant"}}}},
			`{"results": [{"_id": null,"value": {"$numberDouble":"1.0"}}],"ok": {"$numberDouble":"1.0"}}`},
	} {
		reply, err := runMR(t, db, tc.cmd)
		if err != nil || reply.String() != tc.want {
			t.Errorf("%s: %v %v\nwant %s", tc.name, reply, err, tc.want)
		}
	}

	// out to a collection: replace, then merge and reduce into it.
	out := db.Collection("totals")
	if _, err := out.InsertOne(ctx, bson.D{{Key: "_id", Value: "old"}, {Key: "value", Value: 1.0}}); err != nil {
		t.Fatal(err)
	}
	reply, err := runMR(t, db, mr(bson.E{Key: "out", Value: "totals"}, bson.E{Key: "query", Value: bson.D{{Key: "cust", Value: "abc"}}}))
	if err != nil || reply.String() != `{"result": "totals","ok": {"$numberDouble":"1.0"}}` {
		t.Fatalf("replace: %v %v", reply, err)
	}
	if got := collDocs(t, out); got != `{"_id": "abc","value": {"$numberDouble":"95.0"}}` {
		t.Fatalf("after replace: %s", got)
	}
	reply, err = runMR(t, db, mr(bson.E{Key: "out", Value: bson.D{{Key: "merge", Value: "totals"}, {Key: "nonAtomic", Value: true}}}, bson.E{Key: "query", Value: bson.D{{Key: "cust", Value: "xyz"}}}))
	if err != nil || reply.String() != `{"result": "totals","ok": {"$numberDouble":"1.0"}}` {
		t.Fatalf("merge: %v %v", reply, err)
	}
	if got := collDocs(t, out); got != `{"_id": "abc","value": {"$numberDouble":"95.0"}}{"_id": "xyz","value": {"$numberDouble":"15.0"}}` {
		t.Fatalf("after merge: %s", got)
	}
	reply, err = runMR(t, db, mr(bson.E{Key: "out", Value: bson.D{{Key: "reduce", Value: "totals"}, {Key: "db", Value: "mrout"}}}))
	if err != nil || reply.String() != `{"result": {"db": "mrout","collection": "totals"},"ok": {"$numberDouble":"1.0"}}` {
		t.Fatalf("reduce into another db: %v %v", reply, err)
	}
	_, err = runMR(t, db, mr(bson.E{Key: "out", Value: bson.D{{Key: "reduce", Value: "totals"}}}, bson.E{Key: "finalize", Value: "function(k, v) { return v * 10; }"}))
	if err != nil {
		t.Fatalf("reduce: %v", err)
	}
	// Each key is finalized, then reduced with the stored value (stored
	// first) and finalized again: abc (95 + 950) * 10, xyz (15 + 150) *
	// 10; ant is not stored: 1 * 10 (MongoDB's $merge whenMatched
	// pipeline of reduce then finalize, after the $group's finalize).
	if got := collDocs(t, out); got != `{"_id": "abc","value": {"$numberDouble":"10450.0"}}{"_id": "ant","value": {"$numberDouble":"10.0"}}{"_id": "xyz","value": {"$numberDouble":"1650.0"}}` {
		t.Fatalf("after reduce: %s", got)
	}
	if got := collDocs(t, client.Database("mrout").Collection("totals")); !strings.Contains(got, `"abc","value": {"$numberDouble":"95.0"}`) {
		t.Fatalf("reduce into mrout: %s", got)
	}

	for _, tc := range []struct {
		cmd  bson.D
		code int
	}{
		{mr(bson.E{Key: "out", Value: bson.D{{Key: "inline", Value: 1}, {Key: "db", Value: "x"}}}), 72},
		{mr(bson.E{Key: "out", Value: bson.D{{Key: "inline", Value: 2}}}), 2},
		{mr(bson.E{Key: "out", Value: bson.D{{Key: "merge", Value: "t"}, {Key: "nonAtomic", Value: false}}}), 2},
		{mr(bson.E{Key: "out", Value: bson.D{{Key: "merge", Value: "t"}, {Key: "extra", Value: 1}}}), 2},
		{mr(bson.E{Key: "out", Value: bson.D{{Key: "foo", Value: "t"}}}), 2},
		{mr(bson.E{Key: "out", Value: 5}), 2},
		{mr(bson.E{Key: "out", Value: bson.D{{Key: "replace", Value: "t"}, {Key: "db", Value: "admin"}}}), 115},
		{bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this.cust, 1) }"}, {Key: "reduce", Value: "function() { throw new Error('x') }"}, inline}, 139},
		{bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this.cust, 1) }"}, {Key: "reduce", Value: "function() {}"}}, 40414},
		// emit takes exactly two arguments (jstests mr_fail_invalid_js.js).
		{bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this.cust) }"}, {Key: "reduce", Value: reduceF}, inline}, 31220},
		// merge and reduce output as $merge on _id: no null or array key (jstests mr_fail_invalid_js.js, 7.0)
		{bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this.missing, 1) }"}, {Key: "reduce", Value: reduceF}, {Key: "out", Value: bson.D{{Key: "merge", Value: "nullKeys"}}}}, 51132},
		{bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit([1], 1) }"}, {Key: "reduce", Value: reduceF}, {Key: "out", Value: bson.D{{Key: "reduce", Value: "nullKeys"}}}}, 51185},
		// reduce runs, and fails, for a key emitted once.
		{bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { emit(this._id, 1) }"}, {Key: "reduce", Value: "function() { throw new Error('x') }"}, inline}, 139},
	} {
		if _, err := runMR(t, db, tc.cmd); serverCode(err) != tc.code {
			t.Errorf("%v: %v, want %d", tc.cmd, err, tc.code)
		}
	}
	// out may replace the source collection itself
	src := db.Collection("self")
	if _, err := src.InsertMany(ctx, []any{bson.D{{Key: "k", Value: 1}}, bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := runMR(t, db, bson.D{{Key: "mapReduce", Value: "self"}, {Key: "map", Value: "function() { emit(this.k, 1) }"}, {Key: "reduce", Value: reduceF}, {Key: "out", Value: "self"}}); err != nil {
		t.Fatal(err)
	}
	if got := collDocs(t, src); got != `{"_id": {"$numberDouble":"1.0"},"value": {"$numberDouble":"2.0"}}` {
		t.Errorf("out onto the source: %s", got)
	}
	// A collection's default collation groups keys too.
	if err := db.CreateCollection(ctx, "ci", options.CreateCollection().SetCollation(&options.Collation{Locale: "en", Strength: 2})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("ci").InsertMany(ctx, []any{bson.D{{Key: "k", Value: "a"}}, bson.D{{Key: "k", Value: "A"}}}); err != nil {
		t.Fatal(err)
	}
	reply, err = runMR(t, db, bson.D{{Key: "mapReduce", Value: "ci"}, {Key: "map", Value: "function() { emit(this.k, 1) }"}, {Key: "reduce", Value: reduceF}, inline})
	if err != nil || reply.String() != `{"results": [{"_id": "a","value": {"$numberDouble":"2.0"}}],"ok": {"$numberDouble":"1.0"}}` {
		t.Errorf("default collation: %v %v", reply, err)
	}
	// an endless map stops at maxTimeMS
	_, err = runMR(t, db, bson.D{{Key: "mapReduce", Value: "orders"}, {Key: "map", Value: "function() { for (;;) {} }"}, {Key: "reduce", Value: reduceF}, inline, {Key: "maxTimeMS", Value: 100}})
	if serverCode(err) != 50 {
		t.Errorf("endless map: %v", err)
	}
}

// TestMapReduceDisabled: with JavaScript disabled, a mapReduce that maps
// a document fails as MongoDB's does (31246).
func TestMapReduceDisabled(t *testing.T) {
	cfg := defaultConfig()
	cfg.NoJavaScript = true
	client := connect(t, startInstance(t, cfg))
	db := client.Database(testDB)
	if _, err := db.Collection("c").InsertOne(context.Background(), bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := runMR(t, db, bson.D{{Key: "mapReduce", Value: "c"}, {Key: "map", Value: "function() { emit(1, 1) }"}, {Key: "reduce", Value: "function(k, v) { return 1 }"}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}})
	if serverCode(err) != 31246 {
		t.Fatalf("got %v", err)
	}
}

// TestAccumulator runs $accumulator in $group, with initArgs, finalize,
// and its argument errors.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/accumulator/
func TestAccumulator(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("acc")
	ctx := context.Background()
	var docs []any
	for i := 1; i <= 6; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 2}, {Key: "x", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	acc := func(extra ...bson.E) bson.D {
		return bson.D{{Key: "$accumulator", Value: append(bson.D{
			{Key: "init", Value: "function(base) { return {count: 0, sum: base}; }"},
			{Key: "initArgs", Value: bson.A{"$g"}}, // read from the group key document
			{Key: "accumulate", Value: bson.JavaScript("function(st, x) { return {count: st.count + 1, sum: st.sum + x}; }")},
			{Key: "accumulateArgs", Value: bson.A{"$x"}},
			{Key: "merge", Value: "function(a, b) { return {count: a.count + b.count, sum: a.sum + b.sum}; }"},
			{Key: "lang", Value: "js"},
		}, extra...)}}
	}
	run := func(a bson.D) ([]bson.Raw, error) {
		cur, err := coll.Aggregate(ctx, mongo.Pipeline{
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "g", Value: "$g"}}}, {Key: "r", Value: a}}}},
			{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
		})
		if err != nil {
			return nil, err
		}
		var out []bson.Raw
		err = cur.All(ctx, &out)
		return out, err
	}
	out, err := run(acc())
	if err != nil {
		t.Fatal(err)
	}
	// group 0: 2+4+6 over base 0; group 1: 1+3+5 over base 1
	if fmt.Sprint(out) != `[{"_id": {"g": {"$numberInt":"0"}},"r": {"count": {"$numberDouble":"3.0"},"sum": {"$numberDouble":"12.0"}}} {"_id": {"g": {"$numberInt":"1"}},"r": {"count": {"$numberDouble":"3.0"},"sum": {"$numberDouble":"10.0"}}}]` {
		t.Errorf("state: %v", out)
	}
	out, err = run(acc(bson.E{Key: "finalize", Value: "function(st) { return st.sum / st.count; }"}))
	if err != nil || fmt.Sprint(out) != `[{"_id": {"g": {"$numberInt":"0"}},"r": {"$numberDouble":"4.0"}} {"_id": {"g": {"$numberInt":"1"}},"r": {"$numberDouble":"3.3333333333333335"}}]` {
		t.Errorf("finalize: %v %v", out, err)
	}
	for _, tc := range []struct {
		spec bson.D
		code int
	}{
		{bson.D{{Key: "$accumulator", Value: 1}}, 4544703},
		{acc(bson.E{Key: "finalize", Value: "function() { throw new Error('f') }"}), 139},
		{acc(bson.E{Key: "bogus", Value: 1}), 4544706},
		{acc(bson.E{Key: "finalize", Value: "$x"}), 4544701},
		{acc(bson.E{Key: "finalize", Value: 3}), 4544702},
		{bson.D{{Key: "$accumulator", Value: bson.D{{Key: "accumulate", Value: "f"}, {Key: "merge", Value: "f"}, {Key: "accumulateArgs", Value: bson.A{}}}}}, 4544707},
		{bson.D{{Key: "$accumulator", Value: bson.D{{Key: "init", Value: "function() {}"}, {Key: "accumulate", Value: "function() {}"}, {Key: "merge", Value: "f"}, {Key: "accumulateArgs", Value: "$x"}}}}, 4544712},
		{bson.D{{Key: "$accumulator", Value: bson.D{{Key: "init", Value: "f"}, {Key: "accumulate", Value: "f"}, {Key: "merge", Value: "f"}, {Key: "accumulateArgs", Value: bson.A{}}, {Key: "lang", Value: "py"}}}}, 4544705},
	} {
		if _, err := run(tc.spec); serverCode(err) != tc.code {
			t.Errorf("%v: %v, want %d", tc.spec, err, tc.code)
		}
	}
	// AccumulatorJs::startNewGroup and processInternal show the value that
	// is not an array as Value::toString does: MISSING, {a: [1]}
	spec := func(initArgs, accumulateArgs any) bson.D {
		return bson.D{{Key: "$accumulator", Value: bson.D{
			{Key: "init", Value: "function() { return 0; }"},
			{Key: "initArgs", Value: initArgs},
			{Key: "accumulate", Value: "function(st) { return st; }"},
			{Key: "accumulateArgs", Value: accumulateArgs},
			{Key: "merge", Value: "function(a, b) { return a; }"},
			{Key: "lang", Value: "js"},
		}}}
	}
	for _, tc := range []struct {
		spec bson.D
		msg  string
	}{
		{spec("$nope", bson.A{}), "$accumulator initArgs must evaluate to an array: MISSING"},
		{spec(bson.A{}, bson.D{{Key: "$literal", Value: bson.D{{Key: "a", Value: bson.A{1}}}}}), "$accumulator accumulateArgs must evaluate to an array: {a: [1]}"},
	} {
		_, err := run(tc.spec)
		if want := "PlanExecutor error during aggregation :: caused by :: " + tc.msg; errMsg(err) != want {
			t.Errorf("%v: %v, want %q", tc.spec, err, want)
		}
	}
}

// TestInternalJsReduce checks $_internalJsReduce, the accumulator of
// mapReduce's reduce (jstests/aggregation/accumulators/internal_js_reduce.js):
// each group's {k, v} data reduced by eval, a null key too, and its parse
// and run-time errors.
func TestInternalJsReduce(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("jsreduce")
	ctx := context.Background()
	for _, w := range []any{"hello", "world", "world", "hello", "hi", nil} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "word", Value: w}, {Key: "val", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	reduce := bson.JavaScript("function(key, values) { return Array.sum(values); }")
	run := func(spec any) ([]bson.Raw, error) {
		cur, err := coll.Aggregate(ctx, mongo.Pipeline{
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$word"}, {Key: "n", Value: bson.D{{Key: "$_internalJsReduce", Value: spec}}}}}},
			{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
		})
		if err != nil {
			return nil, err
		}
		var out []bson.Raw
		err = cur.All(ctx, &out)
		return out, err
	}
	data := bson.D{{Key: "k", Value: "$word"}, {Key: "v", Value: "$val"}}
	for _, eval := range []any{reduce, string(reduce)} {
		out, err := run(bson.D{{Key: "data", Value: data}, {Key: "eval", Value: eval}})
		if err != nil || fmt.Sprint(out) != `[{"_id": null,"n": {"$numberDouble":"1.0"}} {"_id": "hello","n": {"$numberDouble":"2.0"}} {"_id": "hi","n": {"$numberDouble":"1.0"}} {"_id": "world","n": {"$numberDouble":"2.0"}}]` {
			t.Errorf("eval %T: %v %v", eval, out, err)
		}
	}
	for _, tc := range []struct {
		spec any
		code int
	}{
		{1, 31326},
		{bson.D{{Key: "data", Value: data}, {Key: "eval", Value: 5}}, 31244},
		{bson.D{{Key: "notEval", Value: 1}, {Key: "notData", Value: 1}}, 31243},
		{bson.D{{Key: "data", Value: data}}, 31245},
		{bson.D{{Key: "eval", Value: reduce}}, 31349},
		{bson.D{{Key: "data", Value: 5}, {Key: "eval", Value: reduce}}, 31242},
		{bson.D{{Key: "data", Value: bson.D{{Key: "v", Value: 1}}}, {Key: "eval", Value: reduce}}, 31251},
		{bson.D{{Key: "data", Value: bson.D{{Key: "key", Value: 1}, {Key: "value", Value: 1}}}, {Key: "eval", Value: reduce}}, 31251},
		{bson.D{{Key: "data", Value: data}, {Key: "eval", Value: "UDFs are great!"}}, 139},
	} {
		if _, err := run(tc.spec); serverCode(err) != tc.code {
			t.Errorf("%v: %v, want %d", tc.spec, err, tc.code)
		}
	}
}

// TestAccumulatorArgsTooLarge: an $accumulator whose state and the
// arguments of one accumulate call exceed 16 MB fails with 4545000, as
// MongoDB's AccumulatorJs::reduceMemoryConsumptionIfAble, which passes
// them in one BSON array, does
// (jstests/aggregation/accumulators/accumulator_js_size_limits.js).
func TestAccumulatorArgsTooLarge(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	coll := client.Database(testDB).Collection("accargs")
	mb := strings.Repeat("a", 1024*1024)
	arr := bson.A{}
	for range 10 {
		arr = append(arr, mb)
	}
	for i := range 2 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "arr", Value: arr}}); err != nil {
			t.Fatal(err)
		}
	}
	acc := bson.D{{Key: "init", Value: "function() { return []; }"},
		{Key: "accumulate", Value: "function(s, a) { s.push(a); return s; }"}, {Key: "accumulateArgs", Value: bson.A{"$arr"}},
		{Key: "merge", Value: "function(a, b) { return a.concat(b); }"}, {Key: "lang", Value: "js"}}
	cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: bson.D{{Key: "$accumulator", Value: acc}}}}}}})
	if err == nil {
		err = cur.All(ctx, new([]bson.Raw))
	}
	requireCode(t, err, 4545000, "Location4545000")
}

// TestInternalJsEmit runs $_internalJsEmit, the expression MongoDB's
// mapReduce runs its map function with: the function runs with this bound
// to the document its this evaluates to, and the value is the {k, v}
// documents it emitted, in order, an undefined key emitted as null
// (ExpressionInternalJsEmit::evaluate, emitFromJS).
func TestInternalJsEmit(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("jsemit")
	seedJS(t, coll)
	ctx := context.Background()
	emit := func(eval, this any) bson.D {
		return bson.D{{Key: "$_internalJsEmit", Value: bson.D{{Key: "eval", Value: eval}, {Key: "this", Value: this}}}}
	}
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$lte", Value: 2}}}}}},
		{{Key: "$project", Value: bson.D{
			{Key: "e", Value: emit("function() { emit(this.a, this._id); emit(this.none, {id: this._id}); }", "$$ROOT")},
			{Key: "sub", Value: emit(bson.JavaScript("function() { emit(this.x, 1); }"), bson.D{{Key: "x", Value: "$s"}})},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"_id": {"$numberInt":"1"},"e": [{"k": {"$numberDouble":"1.0"},"v": {"$numberDouble":"1.0"}},{"k": null,"v": {"id": {"$numberDouble":"1.0"}}}],"sub": [{"k": "x","v": {"$numberDouble":"1.0"}}]}`,
		`{"_id": {"$numberInt":"2"},"e": [{"k": {"$numberLong":"2"},"v": {"$numberDouble":"2.0"}},{"k": null,"v": {"id": {"$numberDouble":"2.0"}}}],"sub": [{"k": null,"v": {"$numberDouble":"1.0"}}]}`,
	}
	if len(out) != 2 || out[0].String() != want[0] || out[1].String() != want[1] {
		t.Fatalf("got %v\nwant %v", out, want)
	}
	_, err = coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "e", Value: emit("function() { emit(1); }", "$$ROOT")}}}}})
	requireCode(t, err, 31220, "")
	_, err = coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "e", Value: emit("function() {}", "$a")}}}}})
	requireCode(t, err, 31225, "")
}

// TestStoredScripts: $where and mapReduce see the database's system.js
// entries as globals, code as functions, and no longer see removed ones;
// $function does not load them; a code-with-scope entry fails the
// operation with 4546000 (Scope::loadStored, jstests where_system_js.js
// and mr_stored.js).
func TestStoredScripts(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	coll := db.Collection("stored")
	stored := db.Collection("system.js")
	ctx := context.Background()
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stored.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: "addOne"}, {Key: "value", Value: bson.JavaScript("function(x) { return x + 1; }")}},
		bson.D{{Key: "_id", Value: "limit"}, {Key: "value", Value: 3}},
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := countWhere(coll, "addOne(this.x) == limit"); err != nil || n != 1 {
		t.Errorf("$where with stored function: %d %v", n, err)
	}
	res, err := runMR(t, db, bson.D{{Key: "mapReduce", Value: "stored"}, {Key: "map", Value: "function() { emit(1, addOne(this.x)); }"},
		{Key: "reduce", Value: "function(k, v) { return Array.sum(v) + limit; }"}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}})
	if err != nil || res.Lookup("results").String() != `[{"_id": {"$numberDouble":"1.0"},"value": {"$numberDouble":"8.0"}}]` {
		t.Errorf("mapReduce with stored functions: %v %v", res, err)
	}
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "t", Value: bson.D{{Key: "$function", Value: bson.D{
		{Key: "body", Value: "function() { return typeof addOne; }"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}}}}}}}})
	var out []bson.Raw
	if err == nil {
		err = cur.All(ctx, &out)
	}
	if err != nil || len(out) != 2 || out[0].Lookup("t").StringValue() != "undefined" {
		t.Errorf("$function sees stored functions: %v %v", out, err)
	}
	if _, err := stored.DeleteOne(ctx, bson.D{{Key: "_id", Value: "addOne"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := countWhere(coll, "typeof addOne == 'undefined' && limit == 3"); err != nil || n != 2 {
		t.Errorf("$where after removing a stored function: %d %v", n, err)
	}
	if _, err := stored.InsertOne(ctx, bson.D{{Key: "_id", Value: "cws"}, {Key: "value", Value: bson.CodeWithScope{Code: "function() { return 1; }", Scope: bson.D{}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = countWhere(coll, "true")
	if serverCode(err) != 4546000 || !strings.Contains(errText(err), "Script _id value: 'cws'") {
		t.Errorf("code with scope in system.js: %v", err)
	}
}
