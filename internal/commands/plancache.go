package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(planCacheClearCmd, "planCacheClear")
}

// planCacheClearCmd empties a collection's plan cache or, given a query
// (with its sort and projection), the entries of that query's shape
// (manual, planCacheClear). A missing collection has nothing to clear.
func planCacheClearCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var filter, sort, proj bson.Raw
	var hasQuery, hasOther bool
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		switch key {
		case "query":
			hasQuery = true
			filter, err = argDoc("planCacheClear", key, v)
		case "sort":
			hasOther = true
			sort, err = argDoc("planCacheClear", key, v)
		case "projection":
			hasOther = true
			proj, err = argDoc("planCacheClear", key, v)
		case "collation":
			if _, err = argDoc("planCacheClear", key, v); err == nil {
				err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support planCacheClear's collation yet")
			}
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	if !hasQuery && hasOther {
		return nil, mongoerr.New(mongoerr.BadValue, "sort, projection, or collation provided without query")
	}
	if err := s.Engine.PlanCacheClear(r.DB, name, filter, sort, proj, hasQuery); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}
