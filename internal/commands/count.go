package commands

import (
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(countCmd, countSpec, "count")
	register(distinctCmd, distinctSpec, "distinct")
	namesCollection("count", "distinct")
}

// countSpec declares count's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/count/
var countSpec = &argSpec{path: "count", fields: []argField{
	arg("query", tDoc),
	arg("skip", tLong),
	arg("limit", tCountLimit),
	arg("hint", tHint),
	arg("collation", tDoc),
	ignore("fields", tDoc, "MongoDB accepts and ignores it (a legacy option)"),
}}

// tCountLimit is count's limit, of the IDL type countLimit, which
// countParseLimit reads (count_request.cpp): a number holding a whole
// value a long holds (parseIntegerElementToLong, FailedToParse
// otherwise), but the smallest long, whose negation a long does not hold
// (a negative limit counts as its absolute value); anything else, null
// included, is BadValue.
var tCountLimit = argType{mask: numberMask, want: []string{"long"}, null: nullWrongType,
	mismatch: func(string, bson.RawValue) error {
		return mongoerr.New(mongoerr.BadValue, "limit value is not a valid number")
	},
	check: func(_, _ string, v bson.RawValue) error {
		n, reason := values.IntegerReason(v)
		if reason != "" {
			return mongoerr.New(mongoerr.FailedToParse, "%s: limit: %s", reason, values.Shell(v))
		}
		if n == math.MinInt64 {
			return mongoerr.New(mongoerr.BadValue, "limit value for count cannot be min long")
		}
		return nil
	}}

// distinctSpec declares distinct's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/distinct/
var distinctSpec = &argSpec{path: "distinct", fields: []argField{
	required("key", tString),
	arg("query", tDoc),
	arg("hint", tHint),
	arg("collation", tDoc),
}}

// parseCount reads a count command's fields as the find it runs.
func parseCount(c *cmdArgs) (engine.FindOptions, error) {
	var o engine.FindOptions
	o.Filter, o.Hint, o.Collation = c.doc("query"), c.value("hint"), c.doc("collation")
	var err error
	if o.Skip, err = c.long("skip"); err == nil {
		err = nonNegative("skip", o.Skip)
	}
	if v := c.value("limit"); err == nil && v.Type != 0 {
		o.Limit, _ = values.IntegerReason(v) // checked by tCountLimit
		o.Limit = max(o.Limit, -o.Limit)     // a negative limit counts like a positive one
	}
	return o, err
}

func countCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	o, err := parseCount(&r.args)
	if err != nil {
		return nil, err
	}
	// A view is read as an aggregate, which resolves its chain of views.
	if v, err := s.lookupView(r, r.DB, coll); err != nil || v != nil {
		if err != nil {
			return nil, err
		}
		return s.countView(r, coll, o)
	}
	if err := checkNaturalHint(o.Hint); err != nil {
		return nil, err
	}
	o.Ctx = r.Ctx
	o.Let = s.withScripts(o.Let, r, r.Ctx)
	var n int64
	if r.DB == engine.OplogDB && coll == engine.OplogColl && r.Txn == nil {
		n, err = s.countOplog(o)
	} else {
		n, err = s.Engine.Count(r.DB, coll, o)
	}
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "n", Value: int32(n)}}), nil
}

// countOplog counts the entries of local.oplog.rs a count asks for, read
// as a find of them reads them.
func (s *Service) countOplog(o engine.FindOptions) (int64, error) {
	cur, err := s.Engine.FindOplog(o, false)
	if err != nil {
		return 0, err
	}
	defer cur.Close()
	var n int64
	for {
		d, err := cur.Next()
		if err != nil || d == nil {
			return n, err
		}
		n++
	}
}

// parseDistinct reads a distinct command's parsed key, query and hint.
func parseDistinct(c *cmdArgs) (key string, o engine.FindOptions, err error) {
	key = c.str("key")
	if strings.IndexByte(key, 0) >= 0 {
		err = mongoerr.New(mongoerr.DistinctKeyNullByte, "Key field cannot contain an embedded null byte")
	}
	return key, engine.FindOptions{Filter: c.doc("query"), Hint: c.value("hint"), Collation: c.doc("collation")}, err
}

func distinctCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	key, o, err := parseDistinct(&r.args)
	if err != nil {
		return nil, err
	}
	if err := txnReadAllowed(r, coll); err != nil {
		return nil, err
	}
	// A view is read as an aggregate, which resolves its chain of views.
	if v, err := s.lookupView(r, r.DB, coll); err != nil || v != nil {
		if err != nil {
			return nil, err
		}
		return s.distinctView(r, coll, key, o)
	}
	if err := checkNaturalHint(o.Hint); err != nil {
		return nil, err
	}
	o.Txn, o.Ctx = r.Txn, r.Ctx
	o.Let = s.withScripts(o.Let, r, r.Ctx)
	vals, err := s.Engine.Distinct(r.DB, coll, key, o)
	if err != nil {
		return nil, err
	}
	arr := make(bson.A, len(vals))
	for i, v := range vals {
		arr[i] = v
	}
	return marshal(withAtClusterTime(r, bson.D{{Key: "values", Value: arr}})), nil
}

// withAtClusterTime adds to a reply that is not a cursor's the time of a
// read at readConcern snapshot (Request.atClusterTime), as MongoDB does.
func withAtClusterTime(r *Request, d bson.D) bson.D {
	if r.atClusterTime == 0 {
		return d
	}
	return append(d, bson.E{Key: "atClusterTime", Value: r.atClusterTime.Timestamp()})
}
