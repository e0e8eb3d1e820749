// Package querygen generates random documents, filters, sorts, projections
// and index sets for differential tests of the query planner: whatever
// plan the planner picks, a query must return what a collection scan
// returns. The generators draw from small vocabularies of paths and values
// so that filters, indexes and documents meet often, and cover the corners
// where index bounds go wrong: arrays (of scalars, documents and arrays),
// missing fields, null and undefined, numbers of mixed types, every type
// class, and regexes with alternation and options.
package querygen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Gen draws from a seeded source; the same seed gives the same output.
type Gen struct {
	r *rand.Rand
	// flat generators put no arrays in documents, so that indexes stay
	// single-key (where the planner intersects ranges and sorts by
	// bounded fields).
	flat bool
	// indexes are the last Indexes returned.
	indexes []IndexSpec
	// queried are the fields of the index the last Query targeted, if
	// any, which the next Projection prefers.
	queried []string
}

// New returns a generator seeded by seed; a third of the seeds generate
// documents without arrays.
func New(seed uint64) *Gen {
	g := &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	g.flat = g.r.IntN(3) == 0
	return g
}

// Intn is a random number in [0, n).
func (g *Gen) Intn(n int) int { return g.r.IntN(n) }

// topPaths are the fields documents hold; subFields those of embedded
// documents.
var (
	topPaths  = []string{"a", "b", "c"}
	subFields = []string{"x", "y"}
	// Paths are the paths filters, sorts and indexes name.
	Paths = []string{"a", "b", "c", "a.x", "a.y", "b.x", "a.0", "_id"}
	// indexPaths are the paths indexes name (not _id, which every
	// collection indexes).
	indexPaths = []string{"a", "b", "c", "a.x", "a.y", "b.x", "a.0"}
)

var oids = func() []bson.ObjectID {
	out := make([]bson.ObjectID, 4)
	for i := range out {
		out[i][11] = byte(i + 1)
		out[i][0] = 0x60
	}
	return out
}()

var strs = []string{"", "a", "ab", "abc", "abd", "b", "ba", "A", "AB", "a\nb", "x\nab", "é", "aé", "a.b", "a|b", "math", "programming"}

// Scalar returns a random non-container value.
func (g *Gen) Scalar() any {
	switch g.r.IntN(22) {
	case 0, 1, 2:
		return int32(g.r.IntN(8) - 2)
	case 3:
		return int64(g.r.IntN(8) - 2)
	case 4, 5:
		return []float64{-1.5, 0, 0.5, 1, 2.5, 3, 4.0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}[g.r.IntN(11)]
	case 6:
		d, _ := bson.ParseDecimal128([]string{"1", "2.5", "-0", "3.0", "NaN"}[g.r.IntN(5)])
		return d
	case 7, 8, 9:
		return strs[g.r.IntN(len(strs))]
	case 10, 11:
		return nil
	case 12:
		return g.r.IntN(2) == 0
	case 13:
		return bson.DateTime(int64(g.r.IntN(4)) * 1000)
	case 14:
		return oids[g.r.IntN(len(oids))]
	case 15:
		return bson.Undefined{}
	case 16:
		if g.r.IntN(2) == 0 {
			return bson.MinKey{}
		}
		return bson.MaxKey{}
	case 17:
		return bson.Regex{Pattern: []string{"^a", "^ab", "a|b"}[g.r.IntN(3)], Options: []string{"", "i"}[g.r.IntN(2)]}
	case 18:
		return bson.Symbol([]string{"a", "ab", "b"}[g.r.IntN(3)])
	case 19:
		return bson.Timestamp{T: uint32(g.r.IntN(3)), I: 1}
	case 20:
		return bson.Binary{Subtype: 0, Data: []byte{byte(g.r.IntN(3))}}
	}
	return int32(g.r.IntN(4))
}

// Value returns a random value: mostly scalars, sometimes arrays (of
// scalars, documents or arrays) and embedded documents, depth levels deep
// at most.
func (g *Gen) Value(depth int) any {
	if depth <= 0 {
		return g.Scalar()
	}
	switch g.r.IntN(10) {
	case 0, 1:
		n := g.r.IntN(4)
		arr := bson.A{}
		for i := 0; i < n; i++ {
			switch g.r.IntN(4) {
			case 0:
				arr = append(arr, g.subDoc(depth-1))
			case 1:
				arr = append(arr, g.Value(depth-1))
			default:
				arr = append(arr, g.Scalar())
			}
		}
		return arr
	case 2:
		return g.subDoc(depth - 1)
	}
	return g.Scalar()
}

func (g *Gen) subDoc(depth int) bson.D {
	d := bson.D{}
	for _, f := range subFields {
		if g.r.IntN(3) > 0 {
			d = append(d, bson.E{Key: f, Value: g.Value(depth)})
		}
	}
	return d
}

// Doc returns a document with _id id and a random subset of the fields.
func (g *Gen) Doc(id int32) bson.D {
	d := bson.D{{Key: "_id", Value: id}}
	for _, f := range topPaths {
		if g.r.IntN(5) == 0 {
			continue
		}
		switch {
		case !g.flat:
			d = append(d, bson.E{Key: f, Value: g.Value(2)})
		case g.r.IntN(4) == 0:
			d = append(d, bson.E{Key: f, Value: g.flatDoc()})
		default:
			d = append(d, bson.E{Key: f, Value: g.Scalar()})
		}
	}
	return d
}

// flatDoc is an embedded document of scalars.
func (g *Gen) flatDoc() bson.D {
	d := bson.D{}
	for _, f := range subFields {
		if g.r.IntN(4) > 0 {
			d = append(d, bson.E{Key: f, Value: g.Scalar()})
		}
	}
	return d
}

// IndexSpec is a generated index: its key pattern and options.
type IndexSpec struct {
	Key     bson.D
	Unique  bool
	Sparse  bool
	Partial bson.D // nil: none
	// WildcardProjection, on a "$**" index: nil for none.
	WildcardProjection bson.D
}

// Indexes returns one to four random indexes: single-field and compound,
// ascending and descending, some with a hashed field, some wildcard, some
// sparse, partial or unique.
func (g *Gen) Indexes() []IndexSpec {
	g.indexes = nil
	n := 1 + g.r.IntN(4)
	var out []IndexSpec
	seen := map[string]bool{}
	for len(out) < n {
		if g.r.IntN(8) == 0 {
			// A wildcard index, on everything or below one path.
			key := []string{"$**", "a.$**", "b.$**"}[g.r.IntN(3)]
			spec := IndexSpec{Key: bson.D{{Key: key, Value: int32(1)}}}
			if key == "$**" && g.r.IntN(2) == 0 {
				spec.WildcardProjection = [...]bson.D{
					{{Key: "_id", Value: int32(1)}},
					{{Key: "a", Value: int32(0)}},
					{{Key: "b", Value: int32(1)}, {Key: "_id", Value: int32(1)}},
					{{Key: "_id", Value: int32(1)}, {Key: "c", Value: false}},
				}[g.r.IntN(4)]
			}
			if key != "$**" && g.r.IntN(2) == 0 {
				// A compound wildcard index (MongoDB 7.0), its other
				// field outside the wildcard's subtree, before or after
				// it.
				other := []string{"c", "b.x", "a.y"}[g.r.IntN(3)]
				if strings.HasPrefix(other, key[:1]) {
					other = "c"
				}
				e := bson.E{Key: other, Value: int32(1 - 2*g.r.IntN(2))}
				if g.r.IntN(2) == 0 {
					spec.Key = bson.D{e, spec.Key[0]}
				} else {
					spec.Key = append(spec.Key, e)
				}
				key = fmt.Sprint(spec.Key)
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, spec)
			}
			continue
		}
		var spec IndexSpec
		fields := 1 + g.r.IntN(3)
		used := map[string]bool{}
		name := ""
		for i := 0; i < fields; i++ {
			p := indexPaths[g.r.IntN(len(indexPaths))]
			if used[p] {
				continue
			}
			used[p] = true
			dir := int32(1)
			if g.r.IntN(3) == 0 {
				dir = -1
			}
			spec.Key = append(spec.Key, bson.E{Key: p, Value: dir})
			name += p + string(rune('0'+dir+1))
		}
		hashed := g.r.IntN(6) == 0
		if hashed {
			// One field of the pattern hashed, as MongoDB allows; the
			// name is then the pattern's, whatever direction it had.
			i := g.r.IntN(len(spec.Key))
			spec.Key[i].Value = "hashed"
			name = ""
			for _, e := range spec.Key {
				name += e.Key + "#" + fmt.Sprint(e.Value)
			}
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		switch g.r.IntN(8) {
		case 0:
			spec.Sparse = true
		case 1:
			spec.Partial = bson.D{{Key: spec.Key[0].Key, Value: bson.D{{Key: "$exists", Value: true}}}}
		case 2:
			spec.Partial = bson.D{{Key: spec.Key[0].Key, Value: bson.D{{Key: "$gt", Value: int32(0)}}}}
		case 3:
			// MongoDB refuses unique hashed indexes.
			spec.Unique = !hashed
		}
		out = append(out, spec)
	}
	g.indexes = out
	return out
}

// queryPath is the path a filter on an index key field names: the field
// itself, or for a wildcard key a path below its prefix.
func (g *Gen) queryPath(key string) string {
	switch key {
	case "$**":
		return Paths[g.r.IntN(len(Paths))]
	case "a.$**", "b.$**":
		return key[:1] + "." + subFields[g.r.IntN(len(subFields))]
	}
	return key
}

// Query returns a random filter: a third of the time one on the fields of
// an index of the last Indexes call, a sixth of the time a $or of such
// filters (see OrFilter).
func (g *Gen) Query() bson.D {
	g.queried = nil
	if len(g.indexes) > 0 {
		key := g.indexes[g.r.IntN(len(g.indexes))].Key
		switch g.r.IntN(6) {
		case 0:
			return g.IndexFilter(key)
		case 1:
			f := g.BoundedFilter(key)
			for _, e := range f {
				g.queried = append(g.queried, e.Key)
			}
			return f
		case 2:
			return g.OrFilter()
		}
	}
	return g.Filter()
}

// BoundedFilter returns equalities, $in lists and comparisons of scalars
// on a random subset of the fields of an index key pattern: filters whose
// index bounds may decide them alone (counted or answered from the keys).
func (g *Gen) BoundedFilter(key bson.D) bson.D {
	f := bson.D{}
	for _, e := range key {
		if g.r.IntN(4) == 0 {
			continue
		}
		switch g.r.IntN(4) {
		case 0:
			f = append(f, bson.E{Key: g.queryPath(e.Key), Value: g.Scalar()})
		case 1:
			f = append(f, bson.E{Key: g.queryPath(e.Key), Value: bson.D{{Key: "$in", Value: bson.A{g.Scalar(), g.Scalar()}}}})
		case 2:
			f = append(f, bson.E{Key: g.queryPath(e.Key), Value: bson.D{g.cmp(), g.cmp()}})
		default:
			f = append(f, bson.E{Key: g.queryPath(e.Key), Value: bson.D{g.cmp()}})
		}
	}
	return f
}

// OrFilter returns a $or of two or three branches, most of them filters
// on the fields of indexes of the last Indexes call (so that index unions
// get planned), some on _id or anything, sometimes beside a further
// condition.
func (g *Gen) OrFilter() bson.D {
	branches := bson.A{}
	for n := 2 + g.r.IntN(2); len(branches) < n; {
		var b bson.D
		switch r := g.r.IntN(8); {
		case r == 0:
			b = g.leaf("_id")
		case r == 1:
			b = g.filter(1)
		case r < 5:
			b = g.boundedLeaf(g.queryPath(g.indexes[g.r.IntN(len(g.indexes))].Key[0].Key))
		default:
			b = g.IndexFilter(g.indexes[g.r.IntN(len(g.indexes))].Key)
		}
		if len(b) > 0 {
			branches = append(branches, b)
		}
	}
	f := bson.D{{Key: "$or", Value: branches}}
	if g.r.IntN(3) == 0 {
		f = append(f, g.leaf(Paths[g.r.IntN(len(Paths))])...)
	}
	return f
}

// Filter returns a random query filter.
func (g *Gen) Filter() bson.D {
	return g.filter(2)
}

// IndexFilter returns a filter with conditions on a random subset of the
// fields of an index key pattern, so that compound bounds (and the fields
// left unbounded between them) get exercised.
// Half the time the conditions on a.x and a.y go into one $elemMatch on a,
// the filter under which bounds on fields running through one array
// compound.
func (g *Gen) IndexFilter(key bson.D) bson.D {
	f, within := bson.D{}, bson.D{}
	elem := g.r.IntN(2) == 0
	for _, e := range key {
		if g.r.IntN(3) == 0 {
			continue
		}
		leaf := g.leaf(g.queryPath(e.Key))
		if sub, ok := strings.CutPrefix(leaf[0].Key, "a."); elem && ok && sub != "0" {
			within = append(within, bson.E{Key: sub, Value: leaf[0].Value})
			continue
		}
		f = append(f, leaf...)
	}
	if len(within) > 0 {
		f = append(f, bson.E{Key: "a", Value: bson.D{{Key: "$elemMatch", Value: within}}})
	}
	return f
}

func (g *Gen) filter(depth int) bson.D {
	n := g.r.IntN(3)
	if depth == 2 {
		n++
	}
	f := bson.D{}
	for i := 0; i < n; i++ {
		if depth > 0 && g.r.IntN(6) == 0 {
			op := []string{"$and", "$or", "$nor"}[g.r.IntN(3)]
			k := 1 + g.r.IntN(3)
			arr := bson.A{}
			for j := 0; j < k; j++ {
				sub := g.filter(depth - 1)
				if len(sub) == 0 {
					sub = g.leaf(Paths[g.r.IntN(len(Paths))])
				}
				arr = append(arr, sub)
			}
			f = append(f, bson.E{Key: op, Value: arr})
			continue
		}
		p := Paths[g.r.IntN(len(Paths))]
		f = append(f, g.leaf(p)...)
	}
	return f
}

// boundedLeaf is a condition on path p that index bounds can express:
// an equality, an $in or comparisons.
func (g *Gen) boundedLeaf(p string) bson.D {
	switch g.r.IntN(4) {
	case 0:
		return bson.D{{Key: p, Value: g.Value(1)}}
	case 1:
		return bson.D{{Key: p, Value: bson.D{{Key: "$in", Value: g.values(1 + g.r.IntN(3))}}}}
	case 2:
		return bson.D{{Key: p, Value: bson.D{g.cmp(), g.cmp()}}}
	}
	return bson.D{{Key: p, Value: bson.D{g.cmp()}}}
}

// leaf is a condition on path p.
func (g *Gen) leaf(p string) bson.D {
	e := func(v any) bson.D { return bson.D{{Key: p, Value: v}} }
	op := func(ops ...bson.E) bson.D { return e(bson.D(ops)) }
	switch g.r.IntN(18) {
	case 0, 1:
		return e(g.Value(1))
	case 16:
		return bson.D{{Key: "$expr", Value: g.exprComparison(p)}}
	case 2:
		return op(bson.E{Key: "$in", Value: g.values(1 + g.r.IntN(3))})
	case 3, 4:
		return op(g.cmp())
	case 5:
		return op(g.cmp(), g.cmp())
	case 6:
		return op(bson.E{Key: "$ne", Value: g.Value(1)})
	case 7:
		return op(bson.E{Key: "$nin", Value: g.values(1 + g.r.IntN(2))})
	case 8:
		return op(bson.E{Key: "$exists", Value: []any{true, false, int32(1), int32(0)}[g.r.IntN(4)]})
	case 9, 10:
		return op(bson.E{Key: "$regex", Value: []string{"^a", "^ab", "^a|b", "^programming|math", "^(a|b)", "a", "^A", `\Aab`, "^a.b", `^a\.b`, "^ab?", "^a b", "^é", "^aé*", "b$"}[g.r.IntN(15)]},
			bson.E{Key: "$options", Value: []string{"", "", "i", "m", "s", "x", "ms"}[g.r.IntN(7)]})
	case 11:
		if g.r.IntN(2) == 0 {
			return op(bson.E{Key: "$elemMatch", Value: bson.D{g.cmp()}})
		}
		sub := bson.D{}
		for _, f := range subFields {
			if g.r.IntN(2) == 0 {
				sub = append(sub, bson.E{Key: f, Value: g.Scalar()})
			} else {
				sub = append(sub, bson.E{Key: f, Value: bson.D{g.cmp()}})
			}
		}
		return op(bson.E{Key: "$elemMatch", Value: sub})
	case 12:
		return op(bson.E{Key: "$type", Value: []string{"string", "number", "array", "null", "object", "bool", "undefined", "regex", "date"}[g.r.IntN(9)]})
	case 13:
		return op(bson.E{Key: "$size", Value: int32(g.r.IntN(3))})
	case 14:
		return op(bson.E{Key: "$all", Value: g.values(1 + g.r.IntN(2))})
	case 15:
		return op(bson.E{Key: "$not", Value: bson.D{g.cmp()}})
	}
	return e(g.Scalar())
}

func (g *Gen) values(n int) bson.A {
	arr := bson.A{}
	for i := 0; i < n; i++ {
		arr = append(arr, g.Value(1))
	}
	return arr
}

// exprComparison is an aggregation comparison of the field at p with a
// scalar, sometimes written the other way round, or a $and or $or of two:
// the $expr clauses an index bounds (MongoDB's RewriteExpr).
func (g *Gen) exprComparison(p string) bson.D {
	if g.r.IntN(4) == 0 {
		return bson.D{{Key: []string{"$and", "$or"}[g.r.IntN(2)], Value: bson.A{g.exprComparison(p), g.exprComparison(Paths[g.r.IntN(len(Paths))])}}}
	}
	op := []string{"$eq", "$eq", "$gt", "$gte", "$lt", "$lte"}[g.r.IntN(6)]
	args := bson.A{"$" + p, g.Scalar()}
	if g.r.IntN(3) == 0 {
		args[0], args[1] = args[1], args[0]
	}
	return bson.D{{Key: op, Value: args}}
}

// cmp is a random comparison operator and operand.
func (g *Gen) cmp() bson.E {
	return bson.E{Key: []string{"$gt", "$gte", "$lt", "$lte"}[g.r.IntN(4)], Value: g.Scalar()}
}

// Sort returns a random sort of one or two fields, or nil.
func (g *Gen) Sort() bson.D {
	n := g.r.IntN(3)
	var s bson.D
	used := map[string]bool{}
	for i := 0; i < n; i++ {
		p := Paths[g.r.IntN(len(Paths)-1)] // not _id: added as a tiebreak
		if used[p] {
			continue
		}
		used[p] = true
		dir := int32(1)
		if g.r.IntN(2) == 0 {
			dir = -1
		}
		s = append(s, bson.E{Key: p, Value: dir})
	}
	return s
}

// Projection returns a random projection, or nil: sometimes one of
// top-level fields the last Query bounded (or of an index of the last
// Indexes call), without _id, as covered reads answer.
func (g *Gen) Projection() bson.D {
	if len(g.indexes) > 0 && (g.r.IntN(3) == 0 || g.queried != nil && g.r.IntN(3) > 0) {
		fields := g.queried
		if fields == nil {
			for _, e := range g.indexes[g.r.IntN(len(g.indexes))].Key {
				fields = append(fields, e.Key)
			}
		}
		p := bson.D{{Key: "_id", Value: int32(0)}}
		for _, f := range fields {
			if !strings.Contains(f, ".") && g.r.IntN(3) > 0 {
				p = append(p, bson.E{Key: f, Value: int32(1)})
			}
		}
		if len(p) > 1 {
			return p
		}
	}
	switch g.r.IntN(6) {
	case 0:
		return bson.D{{Key: "a", Value: int32(1)}}
	case 1:
		return bson.D{{Key: "b", Value: int32(0)}}
	case 2:
		return bson.D{{Key: "a.x", Value: int32(1)}, {Key: "c", Value: int32(1)}}
	case 3:
		return bson.D{{Key: "_id", Value: int32(0)}, {Key: "a", Value: int32(1)}, {Key: "b", Value: int32(1)}}
	}
	return nil
}

// collations are the collations data sets and queries pick from: none (the
// collection's default), the simple one, case- and accent-insensitive
// comparisons, and numeric ordering.
var collations = []bson.D{
	nil,
	{{Key: "locale", Value: "simple"}},
	{{Key: "locale", Value: "en"}, {Key: "strength", Value: int32(2)}},
	{{Key: "locale", Value: "en"}, {Key: "strength", Value: int32(1)}},
	{{Key: "locale", Value: "fr"}, {Key: "numericOrdering", Value: true}},
}

// Collation returns a random collation document, nil for none.
func (g *Gen) Collation() bson.D { return collations[g.r.IntN(len(collations))] }
