package engine

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
)

// Index filters (manual, planCacheSetFilter) restrict the indexes the
// planner considers for one query shape: only the listed indexes (by name
// or key pattern) are candidates, a hint is ignored, and a query none of
// them serves scans the collection. A read of one _id is not planned and
// not filtered. Filters live in memory with their collection, survive index
// changes (a dropped index just matches nothing) and are set, listed and
// cleared by the planCache*Filter commands; setting one empties the plan
// cache entries of its shape.

// QueryShape names a query's shape in the plan cache commands: its
// filter, sort and projection as written, under Collation. Without one it
// is compiled under the simple collation, not the collection's default
// (MongoDB's plan_cache_commands::canonicalize builds the query without
// the collection), and names the queries that give no collation, whatever
// the collection's default (compiledFind.shapes).
type QueryShape struct {
	Filter, Sort, Projection, Collation bson.Raw
}

// simpleCollation asks for the simple collation over a collection's
// default.
var simpleCollation = bson.Raw(bsoncore.NewDocumentBuilder().AppendString("locale", collation.Simple).Build())

// compile compiles the shape's query on c.
func (s QueryShape) compile(c *Collection) (compiledFind, error) {
	coll := s.Collation
	if coll == nil {
		coll = simpleCollation
	}
	return compileFind(FindOptions{Filter: s.Filter, Sort: s.Sort, Projection: s.Projection, Collation: coll}, c)
}

// indexFilter is the filter of one shape: the query it was set with, the
// collation it applies (nil: simple) and the indexes it allows.
type indexFilter struct {
	query, sort, proj, coll bson.Raw
	indexes                 []bson.RawValue // names and key patterns, as given
}

// allows reports whether the filter lets the planner use ix (nil: the _id
// index).
func (f *indexFilter) allows(ix *Index) bool {
	name, key := idIndexName, bson.Raw(idKeyPattern)
	if ix != nil {
		name, key = ix.Name, ix.keyPattern()
	}
	for _, v := range f.indexes {
		if s, ok := v.StringValueOK(); ok && s == name {
			return true
		}
		if d, ok := v.DocumentOK(); ok && SameKeyPattern(d, key) {
			return true
		}
	}
	return false
}

// allowsPlan reports whether the filter allows every index p scans.
func (f *indexFilter) allowsPlan(p *planner.Plan) bool {
	if p.Or == nil {
		return f.allows(indexOf(p))
	}
	for _, br := range p.Or {
		if !f.allows(indexOf(br)) {
			return false
		}
	}
	return true
}

// filterFor returns the index filter of q's shape, if any.
func (pc *planCache) filterFor(shape string) *indexFilter {
	if pc.nfilters.Load() == 0 {
		return nil
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.filters[shape]
}

// filteredCandidates applies the index filter of q's shape, if any, to the
// planning of q on c: the candidates without the hint, those on allowed
// indexes, else a collection scan. It reports whether a filter applied.
func filteredCandidates(c *Collection, q compiledFind, pq planner.Query) ([]*planner.Plan, bool) {
	if c.plans.nfilters.Load() == 0 {
		return nil, false
	}
	f := c.plans.filterFor(q.commandShape())
	if f == nil {
		return nil, false
	}
	cands := planner.Candidates(planCatalog{c, q.strict}, pq)
	if len(cands) == 1 && cands[0].IDPoint() {
		return cands, true
	}
	cands = slices.DeleteFunc(cands, func(p *planner.Plan) bool { return !f.allowsPlan(p) })
	if len(cands) == 0 {
		cands = []*planner.Plan{planner.NaturalScan(1, false)}
	}
	return cands, true
}

// SetIndexFilter sets the index filter of a query shape on db.coll to
// indexes (names or key patterns).
func (e *Engine) SetIndexFilter(db, coll string, qs QueryShape, indexes []bson.RawValue) error {
	c := e.cat.get(db, coll)
	q, err := qs.compile(c)
	if err != nil {
		return err
	}
	if c == nil {
		return mongoerr.New(mongoerr.BadValue, "no such collection")
	}
	shape := q.commandShape()
	// The filter outlives the request: it holds copies, not slices of the
	// request's message.
	f := &indexFilter{query: docOrEmpty(slices.Clone(qs.Filter)), sort: docOrEmpty(slices.Clone(qs.Sort)), proj: docOrEmpty(slices.Clone(qs.Projection))}
	if coll := q.filter.Collator(); coll != nil {
		f.coll = coll.Document()
	}
	for _, v := range indexes {
		f.indexes = append(f.indexes, bson.RawValue{Type: v.Type, Value: slices.Clone(v.Value)})
	}
	c.plans.mu.Lock()
	if c.plans.filters == nil {
		c.plans.filters = map[string]*indexFilter{}
	}
	if c.plans.filters[shape] == nil {
		c.plans.nfilters.Add(1)
	}
	c.plans.filters[shape] = f
	c.plans.mu.Unlock()
	c.plans.clearShape(c, shape)
	return nil
}

// ClearIndexFilters removes the index filters of db.coll, or the filter
// of a query shape (nil: all), and the plan cache entries of each shape
// whose filter it removes: they were planned under the filter (MongoDB's
// ClearFilters::clear). Given a shape, that shape's entries go whether or
// not it had a filter, as MongoDB removes them unconditionally. A missing
// collection has none.
func (e *Engine) ClearIndexFilters(db, coll string, qs *QueryShape) error {
	c := e.cat.get(db, coll)
	var shape string
	byShape := qs != nil
	if byShape {
		q, err := qs.compile(c)
		if err != nil || c == nil {
			return err
		}
		shape = q.commandShape()
	}
	if c == nil {
		return nil
	}
	var cleared []string
	c.plans.mu.Lock()
	for s := range c.plans.filters {
		if !byShape || s == shape {
			delete(c.plans.filters, s)
			c.plans.nfilters.Add(-1)
			cleared = append(cleared, s)
		}
	}
	c.plans.mu.Unlock()
	if byShape {
		cleared = []string{shape}
	}
	for _, s := range cleared {
		c.plans.clearShape(c, s)
	}
	return nil
}

// IndexFilters lists the index filters of db.coll as planCacheListFilters
// shows them: {query, sort, projection, collation (unless simple),
// indexes}. A missing collection has none.
func (e *Engine) IndexFilters(db, coll string) []bson.D {
	c := e.cat.get(db, coll)
	if c == nil {
		return nil
	}
	c.plans.mu.Lock()
	defer c.plans.mu.Unlock()
	shapes := make([]string, 0, len(c.plans.filters))
	for s := range c.plans.filters {
		shapes = append(shapes, s)
	}
	slices.Sort(shapes)
	out := make([]bson.D, 0, len(shapes))
	for _, s := range shapes {
		f := c.plans.filters[s]
		ixs := bson.A{}
		for _, v := range f.indexes {
			ixs = append(ixs, v)
		}
		d := bson.D{{Key: "query", Value: f.query}, {Key: "sort", Value: f.sort}, {Key: "projection", Value: f.proj}}
		if f.coll != nil {
			d = append(d, bson.E{Key: "collation", Value: f.coll})
		}
		out = append(out, append(d, bson.E{Key: "indexes", Value: ixs}))
	}
	return out
}
