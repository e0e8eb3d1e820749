package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(planCacheClearCmd, "planCacheClear")
	register(planCacheSetFilterCmd, "planCacheSetFilter")
	register(planCacheClearFiltersCmd, "planCacheClearFilters")
	register(planCacheListFiltersCmd, "planCacheListFilters")
}

// shapeArgs are the query shape fields of the plan cache commands: query,
// sort, projection (collation is refused: Folio has none), and what else
// the command takes (extra).
type shapeArgs struct {
	filter, sort, proj bson.Raw
	hasQuery, hasOther bool
}

func parseShapeArgs(cmd bson.Raw, extra argFunc) (shapeArgs, error) {
	var a shapeArgs
	name := Name(cmd)
	err := eachArg(cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "query":
			a.hasQuery = true
			a.filter, err = argDoc(name, key, v)
		case "sort":
			a.hasOther = true
			a.sort, err = argDoc(name, key, v)
		case "projection":
			a.hasOther = true
			a.proj, err = argDoc(name, key, v)
		case "collation":
			if _, err = argDoc(name, key, v); err == nil {
				err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support %s's collation yet", name)
			}
		default:
			if extra == nil {
				return false, nil
			}
			return extra(key, v)
		}
		return true, err
	})
	return a, err
}

// planCacheClearCmd empties a collection's plan cache or, given a query
// (with its sort and projection), the entries of that query's shape
// (manual, planCacheClear). A missing collection has nothing to clear.
func planCacheClearCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	a, err := parseShapeArgs(r.Cmd, nil)
	if err != nil {
		return nil, err
	}
	if !a.hasQuery && a.hasOther {
		return nil, mongoerr.New(mongoerr.BadValue, "sort, projection, or collation provided without query")
	}
	if err := s.Engine.PlanCacheClear(r.DB, name, a.filter, a.sort, a.proj, a.hasQuery); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// planCacheSetFilterCmd sets the index filter of a query shape: the
// planner then considers only the listed indexes (names or key patterns)
// for queries of that shape (manual, planCacheSetFilter).
func planCacheSetFilterCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var indexes []bson.RawValue
	hasIndexes := false
	a, err := parseShapeArgs(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		if key != "indexes" {
			return false, nil
		}
		hasIndexes = true
		if v.Type != bson.TypeArray {
			return true, mongoerr.New(mongoerr.BadValue, "required field indexes must be an array")
		}
		vals, _ := v.Array().Values()
		if len(vals) == 0 {
			return true, mongoerr.New(mongoerr.BadValue, "required field indexes must contain at least one index")
		}
		for _, ix := range vals {
			if ix.Type != bson.TypeEmbeddedDocument && ix.Type != bson.TypeString {
				return true, mongoerr.New(mongoerr.BadValue, "each item in indexes must be an object or string")
			}
		}
		indexes = vals
		return true, nil
	})
	switch {
	case err != nil:
		return nil, err
	case !a.hasQuery:
		return nil, mongoerr.New(mongoerr.BadValue, "required field query missing")
	case !hasIndexes:
		return nil, mongoerr.New(mongoerr.BadValue, "required field indexes missing")
	}
	if err := s.Engine.SetIndexFilter(r.DB, name, a.filter, a.sort, a.proj, indexes); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// planCacheClearFiltersCmd removes a collection's index filters, or given
// a query, the filter of its shape (manual, planCacheClearFilters).
func planCacheClearFiltersCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	a, err := parseShapeArgs(r.Cmd, nil)
	if err != nil {
		return nil, err
	}
	if !a.hasQuery && a.hasOther {
		return nil, mongoerr.New(mongoerr.BadValue, "sort, projection, or collation provided without query")
	}
	if err := s.Engine.ClearIndexFilters(r.DB, name, a.filter, a.sort, a.proj, a.hasQuery); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// planCacheListFiltersCmd lists a collection's index filters:
// {filters: [{query, sort, projection, indexes}]}.
func planCacheListFiltersCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	if err := eachArg(r.Cmd, func(string, bson.RawValue) (bool, error) { return false, nil }); err != nil {
		return nil, err
	}
	filters := bson.A{}
	for _, f := range s.Engine.IndexFilters(r.DB, name) {
		filters = append(filters, f)
	}
	return marshal(bson.D{{Key: "filters", Value: filters}}), nil
}
