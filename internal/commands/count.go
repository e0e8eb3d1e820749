package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(countCmd, "count")
	register(distinctCmd, "distinct")
}

// parseCount reads a count command's fields as the find it runs.
func parseCount(cmd bson.Raw) (engine.FindOptions, error) {
	var o engine.FindOptions
	err := eachArg(cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "query":
			o.Filter, err = argDoc("count", key, v)
		case "skip":
			if o.Skip, err = argInt("count", key, v); err == nil {
				err = nonNegative(key, o.Skip)
			}
		case "limit":
			o.Limit, err = argInt("count", key, v)
			o.Limit = max(o.Limit, -o.Limit) // a negative limit counts like a positive one
		case "hint":
			o.Hint = v
		case "collation":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
		case "fields":
		default:
			return false, nil
		}
		return true, err
	})
	return o, err
}

func countCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	o, err := parseCount(r.Cmd)
	if err != nil {
		return nil, err
	}
	o.Ctx = r.Ctx
	n, err := s.Engine.Count(r.DB, coll, o)
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "n", Value: int32(n)}}), nil
}

// parseDistinct parses a distinct command's key, query and hint.
func parseDistinct(cmd bson.Raw) (key string, o engine.FindOptions, err error) {
	haveKey := false
	err = eachArg(cmd, func(k string, v bson.RawValue) (bool, error) {
		var err error
		switch k {
		case "key":
			key, err = argString("distinct", k, v)
			haveKey = true
		case "query":
			if v.Type != bson.TypeNull {
				o.Filter, err = argDoc("distinct", k, v)
			}
		case "hint":
			o.Hint = v
		case "collation":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
		default:
			return false, nil
		}
		return true, err
	})
	if err == nil && !haveKey {
		err = mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'distinct.key' is missing but a required field")
	}
	return key, o, err
}

func distinctCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	key, o, err := parseDistinct(r.Cmd)
	if err != nil {
		return nil, err
	}
	o.Txn, o.Ctx = r.Txn, r.Ctx
	vals, err := s.Engine.Distinct(r.DB, coll, key, o)
	if err != nil {
		return nil, err
	}
	arr := make(bson.A, len(vals))
	for i, v := range vals {
		arr[i] = v
	}
	return marshal(bson.D{{Key: "values", Value: arr}}), nil
}
