package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

func init() {
	register(planCacheClearCmd, &argSpec{path: "planCacheClear", fields: shapeFields()}, "planCacheClear")
	register(planCacheSetFilterCmd, &argSpec{path: "planCacheSetFilter", fields: shapeFields(arg("indexes", tAny))}, "planCacheSetFilter")
	register(planCacheClearFiltersCmd, &argSpec{path: "planCacheClearFilters", fields: shapeFields()}, "planCacheClearFilters")
	register(planCacheListFiltersCmd, &argSpec{path: "planCacheListFilters"}, "planCacheListFilters")
	namesCollection("planCacheClear", "planCacheSetFilter", "planCacheClearFilters", "planCacheListFilters")
}

// shapeFields declares the query shape fields of the plan cache commands
// (query, sort, projection, collation: the simple one when absent, see
// engine.QueryShape), then the command's others.
func shapeFields(others ...argField) []argField {
	return append([]argField{
		arg("query", shapeDoc("required")), arg("sort", shapeDoc("optional")),
		arg("projection", shapeDoc("optional")), arg("collation", shapeDoc("optional")),
	}, others...)
}

// shapeDoc is the type of a query shape field: a document, another type
// failing with BadValue as MongoDB's plan_cache_commands::canonicalize
// fails it (kind: "required" or "optional").
func shapeDoc(kind string) argType {
	t := tDoc
	t.mismatch = func(field string, _ bson.RawValue) error {
		return mongoerr.New(mongoerr.BadValue, "%s field %s must be an object", kind, field)
	}
	return t
}

// shapeArgs are a plan cache command's query shape.
type shapeArgs struct {
	engine.QueryShape
	hasQuery, hasOther bool
}

// parseShapeArgs reads a plan cache command's query shape on r's
// collection name (a view has none: CommandNotSupportedOnView).
func (s *Service) parseShapeArgs(r *Request, name string) (shapeArgs, error) {
	c := &r.args
	a := shapeArgs{
		QueryShape: engine.QueryShape{Filter: c.doc("query"), Sort: c.doc("sort"), Projection: c.doc("projection"), Collation: c.doc("collation")},
		hasQuery:   c.has("query"), hasOther: c.has("sort") || c.has("projection") || c.has("collation"),
	}
	if err := s.notOnView(r, r.DB, name); err != nil {
		return a, err
	}
	if c.has("collation") && rawdoc.Len(a.Collation) == 0 {
		return a, mongoerr.New(mongoerr.BadValue, "optional field collation cannot be an empty object")
	}
	return a, nil
}

// shape is the query shape a command names, nil when it names none.
func (a *shapeArgs) shape() *engine.QueryShape {
	if !a.hasQuery {
		return nil
	}
	return &a.QueryShape
}

// planCacheClearCmd empties a collection's plan cache or, given a query
// (with its sort and projection), the entries of that query's shape
// (manual, planCacheClear). A missing collection has nothing to clear.
func planCacheClearCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	a, err := s.parseShapeArgs(r, name)
	if err != nil {
		return nil, err
	}
	if !a.hasQuery && a.hasOther {
		return nil, mongoerr.New(mongoerr.BadValue, "sort, projection, or collation provided without query")
	}
	if err := s.Engine.PlanCacheClear(r.DB, name, a.shape()); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// planCacheSetFilterCmd sets the index filter of a query shape: the
// planner then considers only the listed indexes (names or key patterns)
// for queries of that shape (manual, planCacheSetFilter).
func planCacheSetFilterCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	a, err := s.parseShapeArgs(r, name)
	if err != nil {
		return nil, err
	}
	if !a.hasQuery {
		return nil, mongoerr.New(mongoerr.BadValue, "required field query missing")
	}
	if !r.args.has("indexes") {
		return nil, mongoerr.New(mongoerr.BadValue, "required field indexes missing")
	}
	v := r.args.value("indexes")
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.BadValue, "required field indexes must be an array")
	}
	indexes, _ := v.Array().Values()
	if len(indexes) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "required field indexes must contain at least one index")
	}
	for _, ix := range indexes {
		switch ix.Type {
		case bson.TypeString:
		case bson.TypeEmbeddedDocument:
			// an empty key pattern names no index (SetFilter::set)
			if rawdoc.Len(ix.Document()) == 0 {
				return nil, mongoerr.New(mongoerr.BadValue, "index specification cannot be empty")
			}
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "each item in indexes must be an object or string")
		}
	}
	if err := s.Engine.SetIndexFilter(r.DB, name, a.QueryShape, indexes); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// planCacheClearFiltersCmd removes a collection's index filters, or given
// a query, the filter of its shape (manual, planCacheClearFilters).
func planCacheClearFiltersCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	a, err := s.parseShapeArgs(r, name)
	if err != nil {
		return nil, err
	}
	if !a.hasQuery && a.hasOther {
		return nil, mongoerr.New(mongoerr.BadValue, "sort, projection, or collation provided without query")
	}
	if err := s.Engine.ClearIndexFilters(r.DB, name, a.shape()); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// planCacheListFiltersCmd lists a collection's index filters:
// {filters: [{query, sort, projection, collation, indexes}]}.
func planCacheListFiltersCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	if err := s.notOnView(r, r.DB, name); err != nil {
		return nil, err
	}
	filters := bson.A{}
	for _, f := range s.Engine.IndexFilters(r.DB, name) {
		filters = append(filters, f)
	}
	return marshal(bson.D{{Key: "filters", Value: filters}}), nil
}
