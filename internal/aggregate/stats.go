package aggregate

import (
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// collStatsStage is $collStats: one document describing the collection,
// {ns, host, localTime} plus the sections asked for: latencyStats,
// storageStats (sizes), count ({count: n}) and queryExecStats (its
// collection scans), in that order.
type collStatsStage struct {
	coll                      string // the collection described
	count, storage, queryExec bool
	scale                     int64 // storageStats' scale
	// latency asks for latencyStats, with histograms.
	latency, histograms bool
}

func (p *parser) parseCollStats(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.CollStatsSpecNotObject, "$collStats must take a nested object but found: %s", values.ShellElement("$collStats", arg))
	}
	s := &collStatsStage{coll: p.coll, scale: 1}
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "count":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$collStats.count' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			if s.count {
				return nil, duplicateCollStatsField(f.key)
			}
			if err := emptySection(f.val); err != nil {
				return nil, err
			}
			s.count = true
		case "storageStats":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$collStats.storageStats' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			if s.storage {
				return nil, duplicateCollStatsField(f.key)
			}
			s.storage = true
			scale, err := storageStatsScale(f.val.Document())
			if err != nil {
				return nil, err
			}
			s.scale = scale
		case "latencyStats":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$collStats.latencyStats' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			if s.latency {
				return nil, duplicateCollStatsField(f.key)
			}
			s.latency = true
			seenHistograms := false
			for _, g := range fieldsOf(f.val.Value) {
				if g.key != "histograms" {
					return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$collStats.latencyStats.%s' is an unknown field.", g.key)
				}
				if seenHistograms {
					return nil, duplicateCollStatsField("latencyStats.histograms")
				}
				seenHistograms = true
				if g.val.Type != bson.TypeBoolean {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$collStats.latencyStats.histograms' is the wrong type '%s', expected type 'bool'", typeName(g.val))
				}
				s.histograms = g.val.Boolean()
			}
		case "queryExecStats":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$collStats.queryExecStats' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			if s.queryExec {
				return nil, duplicateCollStatsField(f.key)
			}
			if err := emptySection(f.val); err != nil {
				return nil, err
			}
			s.queryExec = true
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$collStats.%s' is an unknown field.", f.key)
		}
	}
	return s, nil
}

// duplicateCollStatsField is the IDL's error for a field of $collStats'
// spec (path below $collStats) given twice: each field is checked for
// its type first, then for being a duplicate, then by its validator.
func duplicateCollStatsField(path string) error {
	return mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '$collStats.%s' is a duplicate field", path)
}

// emptySection checks a $collStats section that takes no options (count,
// queryExecStats): its object must be empty, as MongoDB's
// validateObjectIsEmpty requires of both.
func emptySection(v bson.RawValue) error {
	if len(fieldsOf(v.Value)) != 0 {
		return mongoerr.New(mongoerr.ObjectNotEmpty, "expected an empty object, but got %s", values.Shell(v))
	}
	return nil
}

// storageStatsScale reads $collStats' storageStats: {scale, verbose,
// waitForLock, numericOnly}; scale is a number, truncated toward zero, of
// at least 1. MongoDB's StorageStatsSpec is not strict: fields it does not
// know are ignored, as the other three are by Folio, whose statistics take
// no lock and have no storage engine details to add or leave out. Any
// field given twice is refused, scale after its type is checked.
func storageStatsScale(spec bson.Raw) (int64, error) {
	scale := int64(1)
	fields := fieldsOf(spec)
	for i, f := range fields {
		dup := slices.ContainsFunc(fields[:i], func(g field) bool { return g.key == f.key })
		if f.key != "scale" {
			if dup {
				return 0, duplicateCollStatsField("storageStats." + f.key)
			}
			continue
		}
		v, ok := values.Float64(f.val)
		if !ok {
			return 0, mongoerr.WrongNumberType("$collStats.storageStats.scale", typeName(f.val))
		}
		if dup {
			return 0, duplicateCollStatsField("storageStats.scale")
		}
		if math.IsNaN(v) {
			v = 0
		}
		n := int64(max(math.MinInt32, min(math.MaxInt32, math.Trunc(v))))
		if n < 1 {
			return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'scale' value must be >= 1, actual value '%d'", n)
		}
		scale = n
	}
	return scale, nil
}

// hostName is the host:port MongoDB reports in statistics (see
// HostNameAndPort).
func (rt *runtime) hostName() string { return HostNameAndPort(rt.opts.Port) }

// HostNameAndPort names the server as MongoDB's getHostNameCachedAndPort
// does in statistics and currentOp reports: the machine's host name and
// the server's port, whatever it is (0 standing for the default, 27017).
func HostNameAndPort(port int) string {
	h, err := os.Hostname()
	if err != nil {
		h = "localhost"
	}
	if port == 0 {
		port = 27017
	}
	return h + ":" + strconv.Itoa(port)
}

func (s *collStatsStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		fs := []field{
			{"ns", stringValue(rt.opts.DB + "." + s.coll)},
		}
		var st CollStats
		if s.count || s.storage {
			var err error
			if st, err = rt.opts.Env.CollectionStats(rt.opts.DB, s.coll, s.scale); err != nil {
				// MongoDB retrieves storageStats, then count, each in
				// its context
				section := "count"
				if s.storage {
					section = "storageStats"
				}
				return nil, collStatsError(section, err)
			}
			if st.Shard != "" {
				fs = append(fs, field{"shard", stringValue(st.Shard)})
			}
		}
		fs = append(fs, field{"host", stringValue(rt.hostName())}, field{"localTime", dateValue(time.Now())})
		if s.latency {
			fs = append(fs, field{"latencyStats", docValue(rt.opts.Env.LatencyStats(rt.opts.DB, s.coll, s.histograms))})
		}
		if s.count || s.storage {
			if s.storage {
				fs = append(fs, field{"storageStats", docValue(st.Storage)})
			}
			if s.count {
				fs = append(fs, field{"count", values.Number(st.Count)})
			}
		}
		if s.queryExec {
			total, nonTailable, err := rt.opts.Env.CollectionScans(rt.opts.DB, s.coll)
			if err != nil {
				return nil, collStatsError("queryExecStats", err)
			}
			scans := buildDoc([]field{{"total", values.Int64Value(total)}, {"nonTailable", values.Int64Value(nonTailable)}})
			fs = append(fs, field{"queryExecStats", docValue(buildDoc([]field{{"collectionScans", docValue(scans)}}))})
		}
		return []bson.Raw{buildDoc(fs)}, nil
	}}
}

// collStatsError is err, met retrieving a section of $collStats, in the
// context MongoDB's makeStatsForNs gives it.
func collStatsError(section string, err error) error {
	return mongoerr.AddContext(err, "Unable to retrieve "+section+" in $collStats stage")
}

// dateValue is a BSON date.
func dateValue(t time.Time) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDateTime, Value: bsoncore.AppendDateTime(nil, t.UnixMilli())}
}

// indexStatsStage is $indexStats: one document per index of the
// collection, {name, key, host, accesses: {ops, since}, spec}, ops
// counting the operations whose plan read the index since the index was
// created or the server started, and building: true after spec for an
// index being built; a missing collection has none.
type indexStatsStage struct{ coll string }

func (p *parser) parseIndexStats(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument || len(fieldsOf(arg.Value)) != 0 {
		return nil, mongoerr.New(mongoerr.IndexStatsSpecNotEmpty, "The $indexStats stage specification must be an empty object")
	}
	return indexStatsStage{p.coll}, nil
}

func (s indexStatsStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		st, err := rt.opts.Env.CollectionStats(rt.opts.DB, s.coll, 1)
		if err != nil {
			if mongoerr.As(err).Code == mongoerr.NamespaceNotFound {
				return nil, nil
			}
			return nil, err
		}
		var out []bson.Raw
		for _, ix := range st.Indexes {
			accesses := docValue(buildDoc([]field{{"ops", values.Int64Value(ix.Ops)}, {"since", dateValue(ix.Since)}}))
			key := field{"key", ix.Spec.Lookup("key")}
			fs := []field{{"name", ix.Spec.Lookup("name")}, key, {"host", stringValue(rt.hostName())}, {"accesses", accesses}, {"spec", docValue(ix.Spec)}}
			if st.KeyAfterSpec {
				fs = append(slices.Delete(fs, 1, 2), key)
			}
			if ix.Building {
				fs = append(fs, field{"building", bson.RawValue{Type: bson.TypeBoolean, Value: []byte{1}}})
			}
			out = append(out, buildDoc(fs))
		}
		return out, nil
	}}
}

// documentsStage is $documents: the documents of an array expression,
// evaluated once, as the pipeline's input.
type documentsStage struct{ docs *expr.Expr }

// documentsField is the field in which MongoDB holds $documents' array
// as it unwinds it, seen in the input document of its 40228.
const documentsField = "_tempDocumentsField"

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
		// MongoDB runs $documents as a $project of the expression into
		// documentsField, a strict $unwind of it (5858203) and a
		// $replaceRoot to each element (40228), so its errors are theirs
		// (DocumentSourceDocuments::createFromBson, UnwindProcessor).
		if v.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.DocumentsNotArray, "an array is expected")
		}
		var out []bson.Raw
		for _, el := range arrayValues(v) {
			if el.Type != bson.TypeEmbeddedDocument {
				return nil, notObjectError("elements within the array passed to $documents", el, buildDoc([]field{{documentsField, el}}))
			}
			out = append(out, el.Document())
		}
		return out, nil
	}}
}
