package advise

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/rawdoc"
)

func ext(t testing.TB, s string) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestShapes: filters differing only in values share a shape; the fields
// a filter tests by equality and range, its unindexable regexes and its
// largest $in are read.
func TestShapes(t *testing.T) {
	for _, tc := range []struct {
		a, b        string
		same        bool
		eq, rng, re string
		maxIn       int
	}{
		{`{"a": 1, "b": {"$gt": 2}}`, `{"a": "x", "b": {"$gt": 9}}`, true, "a", "b", "", 0},
		{`{"a": 1}`, `{"a": {"$gt": 1}}`, false, "a", "", "", 0},
		{`{"$or": [{"a": 1}, {"c": {"$in": [1, 2, 3]}}]}`, `{"$or": [{"a": 2}, {"c": {"$in": [4]}}]}`, true, "a,c", "", "", 3},
		{`{"p": {"$regex": "^/a/b"}}`, `{"p": {"$regex": "^/c"}}`, true, "", "p", "", 0},
		{`{"p": {"$regex": "b/c"}}`, `{"p": {"$regex": "x"}}`, true, "", "", "p", 0},
		{`{"p": {"$regex": "b/c"}}`, `{"p": {"$regex": "^x"}}`, false, "", "", "p", 0},
		{`{"p": {"$regularExpression": {"pattern": "^a", "options": ""}}}`, `{"p": {"$regularExpression": {"pattern": "a", "options": ""}}}`, false, "", "p", "", 0},
		{`{"p": {"$regex": "^a", "$options": "i"}}`, `{"p": {"$regex": "^b", "$options": "i"}}`, true, "", "", "p", 0},
		{`{"tags": {"$elemMatch": {"k": "x", "v": {"$lt": 3}}}}`, `{"tags": {"$elemMatch": {"k": "y", "v": {"$lt": 1}}}}`, true, "tags.k", "tags.v", "", 0},
	} {
		qa, qb := parseFilter(ext(t, tc.a)), parseFilter(ext(t, tc.b))
		if (qa.shape == qb.shape) != tc.same {
			t.Errorf("%s / %s: shapes %q and %q", tc.a, tc.b, qa.shape, qb.shape)
		}
		key, maxIn := appendShape(nil, ext(t, tc.a), nil, "")
		if string(key) != qa.shape || maxIn != tc.maxIn || qa.maxIn != tc.maxIn {
			t.Errorf("%s: appendShape %q %d, parseFilter %q %d, want $in %d", tc.a, key, maxIn, qa.shape, qa.maxIn, tc.maxIn)
		}
		if got := strings.Join(qa.eq, ","); got != tc.eq {
			t.Errorf("%s: equality fields %q, want %q", tc.a, got, tc.eq)
		}
		if got := strings.Join(qa.rng, ","); got != tc.rng {
			t.Errorf("%s: range fields %q, want %q", tc.a, got, tc.rng)
		}
		if got := strings.Join(qa.unanchored, ","); got != tc.re {
			t.Errorf("%s: unindexable regexes %q, want %q", tc.a, got, tc.re)
		}
	}
}

// fakeCatalog is a Catalog of fixed indexes and documents.
type fakeCatalog struct {
	indexes map[string][]Index
	docs    map[string][]bson.Raw
}

func (c fakeCatalog) Namespaces(db string) []string {
	var out []string
	for ns := range c.docs {
		out = append(out, ns)
	}
	return out
}
func (c fakeCatalog) Indexes(ns string) []Index          { return c.indexes[ns] }
func (c fakeCatalog) Sample(ns string, n int) []bson.Raw { return c.docs[ns] }

func kinds(fs []Finding) string {
	var k []string
	for _, f := range fs {
		k = append(k, f.Kind+" "+f.NS+" "+f.Field)
	}
	return strings.Join(k, "; ")
}

// TestReport: each finding kind from a workload that shows it, and none
// from the one beside it that must not.
func TestReport(t *testing.T) {
	idIndex := Index{Name: "_id_", Fields: []string{"_id"}, Ops: 1}
	small := func(n int) []bson.Raw {
		var out []bson.Raw
		for i := range n {
			out = append(out, ext(t, `{"_id": `+string(rune('0'+i%10))+`, "x": 1}`))
		}
		return out
	}
	arr := func(n int) bson.Raw {
		a := bson.A{}
		for i := range n {
			a = append(a, i)
		}
		d, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "samples", Value: a}, {Key: "capped", Value: bson.A{1, 2}}})
		return d
	}
	big, _ := bson.Marshal(bson.D{{Key: "_id", Value: "big"}, {Key: "blob", Value: bson.Binary{Data: make([]byte, 2<<20)}}})
	cat := fakeCatalog{
		indexes: map[string][]Index{
			"app.scan":  {idIndex},
			"app.ok":    {idIndex, {Name: "a_1", Fields: []string{"a"}, Ops: 20}},
			"app.tree":  {idIndex, {Name: "path_1", Fields: []string{"path"}, Ops: 5}},
			"app.items": {idIndex, {Name: "sku_1", Fields: []string{"sku"}, Ops: 3}},
			"app.idle":  {idIndex, {Name: "never_1", Fields: []string{"never"}, Since: time.Now()}},
		},
		docs: map[string][]bson.Raw{
			"app.scan": small(10), "app.ok": small(10), "app.tree": small(10), "app.orders": small(10), "app.items": small(10),
			"app.hosts": {arr(500)}, "app.blobs": append(small(9), big), "app.idle": small(3), "app.posts": small(3),
		},
	}
	o := NewObserver()
	ex := func(docs, ret int64) Exec {
		return Exec{DocsExamined: docs, Returned: ret, Duration: time.Millisecond, Plan: "COLLSCAN"}
	}
	for i := range 20 {
		// a full scan per lookup by a, then the same through its index
		o.Query("app.scan", "find", ext(t, `{"a": 1, "t": {"$gt": 5}}`), ext(t, `{"b": 1}`), nil, 0, ex(1000, 1))
		o.Query("app.ok", "find", ext(t, `{"a": 1}`), nil, nil, 0, Exec{KeysExamined: 1, DocsExamined: 1, Returned: 1})
		// an unanchored and an anchored regex on an indexed path
		o.Query("app.tree", "find", ext(t, `{"path": {"$regex": ",b,"}}`), nil, nil, 0, ex(1000, 3))
		o.Query("app.tree", "find", ext(t, `{"path": {"$regex": "^,a,"}}`), nil, nil, 0, Exec{KeysExamined: 3, DocsExamined: 3, Returned: 3})
		// deep and shallow skips
		o.Query("app.orders", "find", ext(t, `{}`), ext(t, `{"when": -1}`), nil, int64(i*500), ex(int64(i*500+20), 20))
		o.Query("app.items", "find", ext(t, `{}`), ext(t, `{"when": -1}`), nil, 40, Exec{DocsExamined: 60, Returned: 20})
		o.Lookup("app.orders", "app.users", "uid")
		o.Lookup("app.orders", "app.items", "sku")
		// a name copied into many documents, rewritten and never read; a
		// title rewritten as often but read as often too
		o.Update("app.posts", ext(t, `{"$set": {"author.name": "x"}}`), true, 500)
		o.Update("app.posts", ext(t, `{"$set": {"title": "x"}}`), true, 500)
		o.Query("app.posts", "find", ext(t, `{"title": "x"}`), nil, nil, 0, Exec{KeysExamined: 1, DocsExamined: 1, Returned: 1})
	}
	for range 150 {
		o.Update("app.hosts", ext(t, `{"$push": {"samples": 1}}`), false, 1)
		o.Update("app.hosts", ext(t, `{"$push": {"capped": {"$each": [1], "$slice": -2}}}`), false, 1)
	}
	o.Wrote("app.idle", 300)
	// a large document inserted, not in the sample
	var logs bson.A
	for i := range 20 {
		logs = append(logs, bson.D{{Key: "_id", Value: i}})
	}
	logs = append(logs, bson.D{{Key: "_id", Value: "big"}, {Key: "b", Value: bson.Binary{Data: make([]byte, 3<<20)}}})
	_, arrBytes, _ := bson.MarshalValue(logs)
	o.Inserted("app.logs", arrBytes)
	cat.docs["app.logs"] = small(3)
	for range 20 {
		// a collection dropped since: nothing is said of it
		o.Query("app.gone", "find", ext(t, `{"z": 1}`), nil, nil, 0, ex(1000, 1))
	}
	got := kinds(o.Report(cat, "app"))
	for _, want := range []string{"missing-index app.scan ", "unanchored-regex app.tree path", "skip-paging app.orders ",
		"lookup-without-index app.orders app.users.uid", "denormalized-hot-field app.posts author.name",
		"unbounded-array app.hosts samples", "large-document app.blobs _id", "unused-index app.idle never_1", "large-document app.logs"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %s", want, got)
		}
	}
	if n := strings.Count(got, "unanchored-regex"); n != 1 {
		t.Errorf("%d unanchored-regex findings, want the unanchored shape's only: %s", n, got)
	}
	for _, not := range []string{"app.ok", "app.items", "capped", "missing-index app.tree", "title", "large-document app.scan", "app.gone"} {
		if strings.Contains(got, not) {
			t.Errorf("a finding on %s: %s", not, got)
		}
	}
	for _, f := range o.Report(cat, "app") {
		if f.Kind == "missing-index" && f.NS == "app.scan" && f.Suggestion != "create an index on {a: 1, b: 1, t: 1}" {
			t.Errorf("missing-index suggests %q", f.Suggestion)
		}
	}
	o.Reset()
	if got := kinds(o.Report(cat, "app")); strings.Contains(got, "missing-index") {
		t.Errorf("after reset: %s", got)
	}
}

// TestSaveLoad: observations saved and loaded into a new Observer give the
// same report, and keep counting into the same shapes.
func TestSaveLoad(t *testing.T) {
	cat := fakeCatalog{indexes: map[string][]Index{"app.c": {{Name: "_id_", Fields: []string{"_id"}, Ops: 1}}}, docs: map[string][]bson.Raw{"app.c": nil}}
	o := NewObserver()
	for range 12 {
		o.Query("app.c", "find", ext(t, `{"a": 1}`), nil, nil, 0, Exec{DocsExamined: 500, Returned: 1, Duration: time.Millisecond})
		o.Update("app.c", ext(t, `{"$push": {"l": 1}}`), false, 1)
		o.Lookup("app.c", "app.d", "k")
	}
	o.Wrote("app.c", 7)
	doc, err := o.Save()
	if err != nil {
		t.Fatal(err)
	}
	p := NewObserver()
	if err := p.Load(doc); err != nil {
		t.Fatal(err)
	}
	if a, b := kinds(o.Report(cat, "")), kinds(p.Report(cat, "")); a != b || !strings.Contains(a, "missing-index") {
		t.Errorf("reports before %q and after %q", a, b)
	}
	p.Query("app.c", "find", ext(t, `{"a": 2}`), nil, nil, 0, Exec{})
	if n := len(p.shapes); n != 1 {
		t.Errorf("%d shapes after a loaded shape ran again", n)
	}
	if !p.Since().Equal(o.Since().Truncate(time.Millisecond)) {
		t.Errorf("since %v, saved %v", p.Since(), o.Since())
	}
}

// BenchmarkObserve is the advisor's cost per operation of YCSB-A: a find by
// _id and an update setting one field, both of known shapes.
func BenchmarkObserve(b *testing.B) {
	o := NewObserver()
	find, upd := ext(b, `{"_id": "user1234"}`), ext(b, `{"$set": {"field3": "x"}}`)
	ex := Exec{KeysExamined: 1, DocsExamined: 1, Returned: 1, Duration: 20 * time.Microsecond, Plan: "IDHACK"}
	b.ReportAllocs()
	for b.Loop() {
		o.Query("ycsb.usertable", "find", find, nil, nil, 0, ex)
		o.Query("ycsb.usertable", "update", find, nil, nil, 0, ex)
		o.Update("ycsb.usertable", upd, false, 1)
	}
}

// TestConcurrentObservations observes from several goroutines while
// reports, saves and resets run (for go test -race), past the bounds of
// the maps.
func TestConcurrentObservations(t *testing.T) {
	o := NewObserver()
	cat := fakeCatalog{docs: map[string][]bson.Raw{"db.c": nil}}
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 1500 {
				f := ext(t, `{"f`+string(rune('a'+w))+`": {"$in": [1, 2]}, "g`+strings.Repeat("x", i%40)+`": 1}`)
				o.Query("db.c", "find", f, nil, nil, int64(i), Exec{DocsExamined: 10, Returned: 1})
				o.Update("db.c", ext(t, `{"$push": {"a`+strings.Repeat("y", i%70)+`": 1}}`), i%2 == 0, 3)
				o.Lookup("db.c", "db.d", strings.Repeat("k", i%600))
			}
		}()
	}
	for range 20 {
		o.Report(cat, "db")
		if _, err := o.Save(); err != nil {
			t.Error(err)
		}
	}
	o.Reset()
	for range 4 {
		<-done
	}
	if len(o.shapes) > maxShapes || len(o.lookups) > maxLookups || len(o.fields) > maxFields {
		t.Errorf("bounds passed: %d shapes, %d lookups, %d fields", len(o.shapes), len(o.lookups), len(o.fields))
	}
}

// FuzzShape: any document, as a filter or an update, is observed without
// a panic, and the allocation-free shape is the one parseFilter makes.
func FuzzShape(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, `{"$or": [{"a": {"$in": [1, 2]}}, {"b": {"$regex": "^x", "$options": "i"}}]}`,
		`{"t": {"$elemMatch": {"k": 1, "v": {"$gt": 2}}}}`, `{"$push": {"l": {"$each": [1], "$slice": -3}}}`, `{"p": {"$regularExpression": {"pattern": "a", "options": ""}}}`} {
		f.Add([]byte(ext(f, s)))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		// what a command's documents are, once the wire layer checked them
		if rawdoc.Validate(doc) != nil {
			return
		}
		key, maxIn := appendShape(nil, doc, nil, "")
		q := parseFilter(doc)
		if string(key) != q.shape || maxIn != q.maxIn {
			t.Fatalf("appendShape %q %d, parseFilter %q %d", key, maxIn, q.shape, q.maxIn)
		}
		o := NewObserver()
		o.Query("d.c", "find", doc, doc, doc, 1, Exec{})
		o.Update("d.c", doc, true, 1)
		if _, err := o.Save(); err != nil {
			t.Fatal(err)
		}
	})
}
