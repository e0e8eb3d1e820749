package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/query"
)

// TestPlanData runs the cases of testdata/: each file states a collection
// ("catalog": sample documents, whose shapes set the indexes' multikey
// flags, and index definitions) and queries ("plan": filter, sort,
// projection, skip, limit, hint, collation lines, "count" for a count, "distinct
// <field>" for a distinct's DISTINCT_SCAN) with the candidate plans the planner
// gives them, best first: each one's explain stages, index scans with
// direction and bounds, and static score. Rewrite the expected output with
// go test ./internal/planner -run TestPlanData -rewrite.
func TestPlanData(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var cat Catalog
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "catalog":
				cat = parseCatalog(t, td.Input)
				return fmt.Sprint(cat)
			case "plan":
				return planCase(t, cat, td.Input)
			}
			t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
			return ""
		})
	})
}

// testCatalog is a Catalog of indexes whose multikey flags follow from
// sample documents.
type testCatalog []Index

func (c testCatalog) Indexes() []Index { return append([]Index(nil), c...) }

func (c testCatalog) StoreByID() bool { return true }

// shardedCatalog is a sharded collection's: its document store is in
// shard key order, not _id's.
type shardedCatalog struct{ testCatalog }

func (c shardedCatalog) StoreByID() bool { return false }

func (c shardedCatalog) String() string { return "sharded\n" + c.testCatalog.String() }

func (c testCatalog) String() string {
	var b strings.Builder
	for _, ix := range c {
		fmt.Fprintf(&b, "%s %s", ix.Name, extJSON(ix.KeyPattern))
		for _, flag := range []struct {
			on   bool
			name string
		}{{ix.Unique, "unique"}, {ix.Sparse, "sparse"}, {ix.Partial != nil, "partial"}, {ix.Multikey, "multikey"}, {!ix.PairedArrays, "crosskeys"}, {ix.FieldArrays == nil && ix.Wildcard == nil, "untracked"}} {
			if flag.on {
				b.WriteString(" " + flag.name)
			}
		}
		if ix.Collation != nil {
			b.WriteString(" collation " + ix.Collation.Spec().Locale + "/" + fmt.Sprint(ix.Collation.Spec().Strength))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// parseCatalog reads lines "doc <json>", "index <name> <key json>
// [unique] [sparse] [crosskeys] [untracked] [collation <json>] [partial
// <json>]" (crosskeys: an index keyed before fields running through one
// array were keyed by element; untracked: one that does not track its
// fields' array components, Index.FieldArrays) and "sharded" (the
// document store is not in _id order; the _id index is among the
// indexes).
func parseCatalog(t *testing.T, input string) Catalog {
	var docs []bson.Raw
	var cat testCatalog
	sharded := false
	untracked := map[string]bool{}
	for _, line := range strings.Split(input, "\n") {
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "doc":
			docs = append(docs, ext(t, rest))
		case "index":
			name, rest, _ := strings.Cut(rest, " ")
			key, opts := splitJSON(t, rest)
			ix := Index{Name: name, KeyPattern: ext(t, key), PairedArrays: true}
			for opts != "" {
				var opt string
				opt, opts, _ = strings.Cut(opts, " ")
				switch opt {
				case "unique":
					ix.Unique = true
				case "sparse":
					ix.Sparse = true
				case "crosskeys":
					ix.PairedArrays = false
				case "untracked":
					untracked[name] = true
				case "partial":
					f, err := query.Compile(ext(t, opts))
					if err != nil {
						t.Fatal(err)
					}
					ix.Partial, opts = f, ""
				case "collation":
					var doc string
					doc, opts = splitJSON(t, opts)
					ix.Collation = mustCollator(t, doc)
				default:
					t.Fatalf("unknown index option %q", opt)
				}
			}
			elems, _ := ix.KeyPattern.Elements()
			for _, el := range elems {
				if w := testWildcard(el.Key()); w != nil {
					// a wildcard keys its paths, then their values
					ix.Wildcard = w
					ix.Fields = append(ix.Fields, Field{Path: "$_path", Parts: []string{"$_path"}}, Field{Path: el.Key(), Parts: []string{el.Key()}})
					continue
				}
				f, _ := el.Value().AsFloat64OK()
				plugin, _ := el.Value().StringValueOK()
				hashed := plugin == "hashed"
				ix.Fields = append(ix.Fields, Field{Path: el.Key(), Parts: strings.Split(el.Key(), "."), Desc: f < 0, Hashed: hashed})
			}
			cat = append(cat, ix)
		case "sharded":
			sharded = true
		case "":
		default:
			t.Fatalf("unknown catalog line %q", line)
		}
	}
	for i := range cat {
		ix := &cat[i]
		if ix.Wildcard == nil && !untracked[ix.Name] {
			ix.FieldArrays = make([]uint64, len(ix.Fields))
		}
		for _, d := range docs {
			if w := ix.Wildcard; w != nil {
				arrayPaths(d, "", &w.MultikeyPaths)
			}
			for fi, f := range ix.Fields {
				root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}
				if holdsArray(root, f.Parts) {
					ix.Multikey = true
				}
				if ix.FieldArrays != nil {
					ix.FieldArrays[fi] |= arrayComponents(root, f.Parts, 0)
				}
			}
		}
	}
	if sharded {
		return shardedCatalog{cat}
	}
	return cat
}

// arrayComponents are the components of parts at which an index on them
// expands arrays below v, the value at parts[:c] (bit c-1: the array at
// the path's first c components).
func arrayComponents(v bson.RawValue, parts []string, c int) uint64 {
	if v.Type == bson.TypeArray {
		if c < len(parts) && positional(parts[c:c+1]) {
			if el, err := v.Array().IndexErr(uint(atoi(parts[c]))); err == nil {
				return arrayComponents(el, parts, c+1)
			}
		}
		mask := uint64(1) << (c - 1)
		if c < len(parts) {
			elems, _ := v.Array().Values()
			for _, el := range elems {
				if el.Type == bson.TypeEmbeddedDocument {
					mask |= arrayComponents(el, parts, c)
				}
			}
		}
		return mask
	}
	if c == len(parts) || v.Type != bson.TypeEmbeddedDocument {
		return 0
	}
	child, err := v.Document().LookupErr(parts[c])
	if err != nil {
		return 0
	}
	return arrayComponents(child, parts, c+1)
}

// holdsArray reports whether an index on parts expands an array of v: an
// array on the path, unless a numeric component selects one element.
func holdsArray(v bson.RawValue, parts []string) bool {
	if v.Type == bson.TypeArray {
		if len(parts) > 0 && positional(parts[:1]) {
			el, err := v.Array().IndexErr(uint(atoi(parts[0])))
			return err == nil && holdsArray(el, parts[1:])
		}
		return true
	}
	if len(parts) == 0 || v.Type != bson.TypeEmbeddedDocument {
		return false
	}
	child, err := v.Document().LookupErr(parts[0])
	return err == nil && holdsArray(child, parts[1:])
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// splitJSON splits s after its leading JSON object.
func splitJSON(t *testing.T, s string) (obj, rest string) {
	depth, inStr := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return s[:i+1], strings.TrimSpace(s[i+1:])
			}
		}
	}
	t.Fatalf("no JSON object in %q", s)
	return "", ""
}

// planCase plans the query of input on cat and describes the candidates.
func planCase(t *testing.T, catalog Catalog, input string) string {
	cat := catalog.Indexes()
	q := Query{}
	distinct := ""
	var coll *collation.Collator
	shape := Shape{Filter: ext(t, `{}`), SortMemLimit: 100 << 20}
	for _, line := range strings.Split(input, "\n") {
		key, arg, _ := strings.Cut(line, " ")
		var err error
		switch key {
		case "filter":
			shape.Filter = ext(t, arg)
		case "sort":
			shape.Sort = ext(t, arg)
			q.Sort, err = query.CompileSort(shape.Sort)
		case "projection":
			shape.Projection = ext(t, arg)
			q.Projection, err = query.CompileProjection(shape.Projection)
			q.ProjectionSpec = shape.Projection
		case "skip":
			shape.Skip = ext(t, `{"n": `+arg+`}`).Lookup("n").AsInt64()
			q.NoIDHack = shape.Skip > 0
		case "limit":
			shape.Limit = ext(t, `{"n": `+arg+`}`).Lookup("n").AsInt64()
		case "hint":
			if arg == IDIndexName {
				q.HintID = true
				continue
			}
			for i := range cat {
				if cat[i].Name == arg {
					q.Hint = &cat[i]
				}
			}
			if q.Hint == nil {
				t.Fatalf("no index %q", arg)
			}
		case "collation":
			coll = mustCollator(t, arg)
		case "count":
			shape.Count = true
		case "distinct":
			distinct = arg
		case "":
		default:
			t.Fatalf("unknown line %q", line)
		}
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
	}
	f, err := query.CompileCollated(shape.Filter, nil, coll)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	q.Filter = f
	if q.Sort != nil && coll != nil {
		q.Sort = q.Sort.Collated(coll)
	}
	var b strings.Builder
	if distinct != "" {
		p := DistinctScan(catalog, q, distinct)
		if p == nil {
			return "no distinct scan\n"
		}
		describe(&b, "", p.Explain(shape))
		return b.String()
	}
	for i, p := range Candidates(catalog, q) {
		fmt.Fprintf(&b, "%d: score %d\n", i+1, Score(p))
		describe(&b, "  ", p.Explain(shape))
	}
	return b.String()
}

// describe writes an explain tree: each chain of stages on one line, root
// first, then its index scan's index, direction, bounds and filter on the
// keys, or the inputs
// of a stage with several, indented.
func describe(b *strings.Builder, indent string, stage bson.D) {
	var names []string
	for {
		m := map[string]any{}
		for _, e := range stage {
			m[e.Key] = e.Value
		}
		names = append(names, m["stage"].(string))
		if in, ok := m["inputStage"].(bson.D); ok {
			stage = in
			continue
		}
		b.WriteString(indent + strings.Join(names, " <- ") + "\n")
		switch names[len(names)-1] {
		case "IXSCAN", "DISTINCT_SCAN":
			fmt.Fprintf(b, "%s  %s %s %s\n", indent, m["indexName"], m["direction"], jsonOf(m["indexBounds"]))
			if f, ok := m["filter"]; ok {
				fmt.Fprintf(b, "%s  keys filtered by %s\n", indent, jsonOf(f))
			}
		case "COUNT_SCAN":
			fmt.Fprintf(b, "%s  %s %s\n", indent, m["indexName"], jsonOf(m["indexBounds"]))
		}
		if ins, ok := m["inputStages"].(bson.A); ok {
			for _, in := range ins {
				describe(b, indent+"  ", in.(bson.D))
			}
		}
		return
	}
}

func mustCollator(t *testing.T, doc string) *collation.Collator {
	t.Helper()
	c, err := collation.Parse(ext(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func jsonOf(v any) string {
	b, err := bson.MarshalExtJSON(v, false, false)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func ext(t *testing.T, s string) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

func extJSON(d bson.Raw) string {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// testWildcard is the wildcard description of a "$**" or "p.$**" key
// (without projection), nil for other keys.
func testWildcard(key string) *Wildcard {
	switch {
	case key == "$**":
		return &Wildcard{Covers: func(p string) bool { return p != "_id" && !strings.HasPrefix(p, "_id.") }}
	case strings.HasSuffix(key, ".$**"):
		pre := strings.TrimSuffix(key, ".$**")
		return &Wildcard{Covers: func(p string) bool { return p == pre || strings.HasPrefix(p, pre+".") }}
	}
	return nil
}

// arrayPaths adds the paths of doc's arrays (elements under their
// array's path) to out.
func arrayPaths(doc bson.Raw, prefix string, out *[]string) {
	elems, _ := doc.Elements()
	for _, el := range elems {
		p := joinPath(prefix, el.Key())
		switch v := el.Value(); v.Type {
		case bson.TypeArray:
			if !slices.Contains(*out, p) {
				*out = append(*out, p)
			}
			vals, _ := v.Array().Values()
			for _, e := range vals {
				if e.Type == bson.TypeEmbeddedDocument {
					arrayPaths(e.Document(), p, out)
				}
			}
		case bson.TypeEmbeddedDocument:
			arrayPaths(v.Document(), p, out)
		}
	}
}

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}
