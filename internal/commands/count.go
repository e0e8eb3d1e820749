package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(countCmd, "count")
	register(distinctCmd, "distinct")
}

func countCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var filter bson.Raw
	var skip, limit int64
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "query":
			filter, err = argDoc("count", key, v)
		case "skip":
			if skip, err = argInt("count", key, v); err == nil && skip < 0 {
				err = mongoerr.New(mongoerr.Code(51024), "BSON field 'skip' value must be >= 0, actual value '%d'", skip)
			}
		case "limit":
			limit, err = argInt("count", key, v)
			limit = max(limit, -limit) // a negative limit counts like a positive one
		case "hint":
			err = checkHint(v)
		case "collation":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
		case "fields":
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	n, err := s.Engine.Count(r.DB, coll, filter, skip, limit)
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "n", Value: int32(n)}}), nil
}

func distinctCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var key string
	var filter bson.Raw
	haveKey := false
	err = eachArg(r.Cmd, func(k string, v bson.RawValue) (bool, error) {
		var err error
		switch k {
		case "key":
			key, err = argString("distinct", k, v)
			haveKey = true
		case "query":
			if v.Type != bson.TypeNull {
				filter, err = argDoc("distinct", k, v)
			}
		case "hint":
			err = checkHint(v)
		case "collation":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	if !haveKey {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'distinct.key' is missing but a required field")
	}
	vals, err := s.Engine.Distinct(r.DB, coll, key, filter)
	if err != nil {
		return nil, err
	}
	arr := make(bson.A, len(vals))
	for i, v := range vals {
		arr[i] = v
	}
	return marshal(bson.D{{Key: "values", Value: arr}}), nil
}
