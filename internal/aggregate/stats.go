package aggregate

import (
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// collStatsStage is $collStats: one document describing the collection,
// {ns, host, localTime} plus the sections asked for: count ({count: n})
// and storageStats (sizes).
type collStatsStage struct {
	count, storage bool
}

func (p *parser) parseCollStats(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.CollStatsSpecNotObject, "$collStats must take a nested object but found: %s", arg)
	}
	s := &collStatsStage{}
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "count":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$collStats.count' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			s.count = true
		case "storageStats":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$collStats.storageStats' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			s.storage = true
		case "latencyStats", "queryExecStats":
			return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support $collStats %s yet", f.key)
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$collStats.%s' is an unknown field.", f.key)
		}
	}
	return s, nil
}

// hostName is the host:port MongoDB reports in statistics.
func hostName() string {
	h, err := os.Hostname()
	if err != nil {
		h = "localhost"
	}
	return h + ":27017"
}

func (s *collStatsStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		fs := []field{
			{"ns", stringValue(rt.opts.DB + "." + rt.opts.Coll)},
			{"host", stringValue(hostName())},
			{"localTime", dateValue(time.Now())},
		}
		if s.count || s.storage {
			st, err := rt.opts.Env.CollectionStats(rt.opts.DB, rt.opts.Coll)
			if err != nil {
				return nil, err
			}
			if s.storage {
				avg := int64(0)
				if st.Count > 0 {
					avg = st.Size / st.Count
				}
				storage := buildDoc([]field{
					{"size", values.Int64Value(st.Size)},
					{"count", values.Int64Value(st.Count)},
					{"avgObjSize", values.Int64Value(avg)},
					{"storageSize", values.Int64Value(st.Size)},
					{"nindexes", values.Int32Value(int32(len(st.Indexes)))},
				})
				fs = append(fs, field{"storageStats", docValue(storage)})
			}
			if s.count {
				fs = append(fs, field{"count", values.Int64Value(st.Count)})
			}
		}
		return []bson.Raw{buildDoc(fs)}, nil
	}}
}

// dateValue is a BSON date.
func dateValue(t time.Time) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDateTime, Value: bsoncore.AppendDateTime(nil, t.UnixMilli())}
}

// indexStatsStage is $indexStats: one document per index of the
// collection, {name, key, host, accesses, spec}; a missing collection has
// none. Folio does not count index accesses: ops is always 0.
type indexStatsStage struct{}

func (p *parser) parseIndexStats(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument || len(fieldsOf(arg.Value)) != 0 {
		return nil, mongoerr.New(mongoerr.IndexStatsSpecNotEmpty, "The $indexStats stage specification must be an empty object")
	}
	return indexStatsStage{}, nil
}

func (indexStatsStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		st, err := rt.opts.Env.CollectionStats(rt.opts.DB, rt.opts.Coll)
		if err != nil {
			if mongoerr.As(err).Code == mongoerr.NamespaceNotFound {
				return nil, nil
			}
			return nil, err
		}
		accesses := docValue(buildDoc([]field{{"ops", values.Int64Value(0)}, {"since", dateValue(rt.ectx.Now)}}))
		var out []bson.Raw
		for _, spec := range st.Indexes {
			out = append(out, buildDoc([]field{
				{"name", spec.Lookup("name")},
				{"key", spec.Lookup("key")},
				{"host", stringValue(hostName())},
				{"accesses", accesses},
				{"spec", docValue(spec)},
			}))
		}
		return out, nil
	}}
}

// documentsStage is $documents: the documents of an array expression,
// evaluated once, as the pipeline's input.
type documentsStage struct{ docs *expr.Expr }

func (p *parser) parseDocuments(arg bson.RawValue) (stage, error) {
	e, err := expr.Compile(arg, p.scope)
	if err != nil {
		return nil, err
	}
	return &documentsStage{e}, nil
}

func (s *documentsStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		v, err := s.docs.Eval(rt.ectx, emptyDoc)
		if err != nil {
			return nil, err
		}
		if v.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.DocumentsNotArray, "error during $documents evaluation: an array is expected, found %s", typeName(v))
		}
		var out []bson.Raw
		for _, el := range arrayValues(v) {
			if el.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.ReplaceRootNotObject, "error during $documents evaluation: each element must be an object, found %s", typeName(el))
			}
			out = append(out, el.Document())
		}
		return out, nil
	}}
}
