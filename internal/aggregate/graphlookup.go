package aggregate

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/values"
)

// graphLookupStage is $graphLookup: a breadth-first search of collection
// from, starting at the values of startWith and following
// connectFromField → connectToField, whose reached documents (each once,
// by _id, so cycles end) go into the array field as.
//
// Each level is one read of from with {connectToField: {$in: frontier}}
// (and restrictSearchWithMatch), so the engine's planner uses an index on
// connectToField when there is one, and a search reads only the documents
// it reaches. The visited documents and the frontier count against the
// stage's memory limit; as in MongoDB 7.0 they cannot spill, so a search
// past it fails with 40099 whatever allowDiskUse says.
type graphLookupStage struct {
	from        string
	as          []string
	startWith   *expr.Expr
	connectFrom []string
	connectTo   string
	depthField  []string
	maxDepth    int64 // -1: unbounded
	// restrict is restrictSearchWithMatch, which each level's read applies,
	// unless it holds an $expr (restrictExpr): that may read the pipeline's
	// variables, which the read does not see, so the stage matches the
	// documents read against the filter compiled with each run's values.
	restrict     bson.Raw
	restrictExpr bool
	scope        *expr.Scope
}

// restrictContext starts the messages of restrictSearchWithMatch's parse
// errors, as MongoDB adds it.
const restrictContext = "Failed to parse 'restrictSearchWithMatch' option to $graphLookup"

func (p *parser) parseGraphLookup(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $graphLookup stage specification must be an object, but found %s", typeName(arg))
	}
	if err := p.graphLookupFrom(arg.Document()); err != nil {
		return nil, err
	}
	s := &graphLookupStage{maxDepth: -1, scope: p.scope}
	var as, from, connectFrom, depthField string
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "startWith":
			e, err := expr.Compile(f.val, p.scope)
			if err != nil {
				return nil, err
			}
			s.startWith = e
			continue
		case "maxDepth":
			n, err := graphMaxDepth(f.val)
			if err != nil {
				return nil, err
			}
			s.maxDepth = n
			continue
		case "restrictSearchWithMatch":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.GraphLookupRestrictNotObject, "restrictSearchWithMatch must be an object, found %s", typeName(f.val))
			}
			// parsed as a $match is, with the pipeline's variables; MongoDB's
			// default features leave out $where, $text and $near
			filter, err := query.CompileAllowed(f.val.Document(), &expr.Let{Scope: p.scope, Ctx: &expr.Context{}}, p.opts.Collator, query.DefaultFeatures)
			if err != nil {
				return nil, mongoerr.AddContext(err, restrictContext)
			}
			s.restrict, s.restrictExpr = f.val.Document(), filter.UsesExpr()
			continue
		case "from", "as", "connectFromField", "connectToField", "depthField":
			// MongoDB lets an object through (for from's {db, coll}),
			// then reads the others as strings: BSONElement::String's
			// check fails on it.
			switch {
			case f.val.Type == bson.TypeEmbeddedDocument && f.key != "from":
				return nil, mongoerr.New(mongoerr.BSONElementWrongType, "wrong type for field (%s) object != string", f.key)
			case f.val.Type != bson.TypeString && f.val.Type != bson.TypeEmbeddedDocument:
				return nil, mongoerr.New(mongoerr.GraphLookupArgNotString, "expected string as argument for %s, found: %s", f.key, typeName(f.val))
			}
		default:
			return nil, mongoerr.New(mongoerr.GraphLookupUnknownArg, "Unknown argument to $graphLookup: %s", f.key)
		}
		v := f.val.StringValue()
		switch f.key {
		case "from":
			from = v
		case "as":
			as = v
		case "connectFromField":
			connectFrom = v
		case "connectToField":
			s.connectTo = v
		case "depthField":
			if err := expr.CheckFieldPath(v); err != nil {
				return nil, err
			}
			depthField = v
		}
	}
	if from == "" || as == "" || s.startWith == nil || connectFrom == "" || s.connectTo == "" {
		return nil, mongoerr.New(mongoerr.GraphLookupMissingArg, "$graphLookup requires 'from', 'as', 'startWith', 'connectFromField', and 'connectToField' to be specified.")
	}
	for _, path := range []string{as, connectFrom, s.connectTo} {
		if err := expr.CheckFieldPath(path); err != nil {
			return nil, err
		}
	}
	// MongoDB reads the foreign collection in a copy of the context made
	// for a sub-pipeline (copyForSubPipeline), one level deeper.
	sp, err := p.sub(inLookup, false, from, p.scope)
	if err == nil {
		err = sp.checkViewNesting(from)
	}
	if err != nil {
		return nil, err
	}
	s.from, s.as, s.connectFrom = from, splitPath(as), splitPath(connectFrom)
	if depthField != "" {
		s.depthField = splitPath(depthField)
	}
	return s, nil
}

// graphLookupFrom checks from as MongoDB's lite parse does, before the
// other arguments: present, a string naming a valid namespace.
func (p *parser) graphLookupFrom(spec bson.Raw) error {
	from, err := spec.LookupErr("from")
	switch {
	case err != nil:
		return mongoerr.New(mongoerr.FailedToParse, "missing 'from' option to $graphLookup stage specification: %s", spec)
	case from.Type == bson.TypeString:
		return p.checkForeignNamespace("$graphLookup", from.StringValue())
	case from.Type == bson.TypeEmbeddedDocument:
		// {db, coll}: MongoDB takes only an internal namespace Folio lacks
		db, coll, err := namespaceSpec("from", from)
		if err != nil {
			return err
		}
		return mongoerr.New(mongoerr.FailedToParse, "$graphLookup with syntax {from: {db:<>, coll:<>},..} is not supported for db: %s and coll: %s", db, coll)
	}
	return mongoerr.New(mongoerr.FailedToParse, "$graphLookup 'from' field must be a string, but found %s", typeName(from))
}

// graphMaxDepth reads maxDepth: a non-negative whole number. As
// MongoDB, it takes the number's safeNumberLong (NaN is 0, a value out of
// range the nearest bound) and then requires it to equal the number.
func graphMaxDepth(v bson.RawValue) (int64, error) {
	f, ok := values.Float64(v)
	if !values.IsNumber(v.Type) || !ok {
		return 0, mongoerr.New(mongoerr.GraphLookupMaxDepthNotNumber, "maxDepth must be numeric, found type: %s", typeName(v))
	}
	n := expr.SafeLong(v)
	if n < 0 {
		return 0, mongoerr.New(mongoerr.GraphLookupMaxDepthNegative, "maxDepth requires a nonnegative argument, found: %d", n)
	}
	if float64(n) != f {
		return 0, mongoerr.New(mongoerr.GraphLookupMaxDepthNotIntegral, "maxDepth could not be represented as a long long: %d", n)
	}
	return n, nil
}

func (s *graphLookupStage) run(in Source, rt *runtime) Source {
	var keep *query.Filter // restrictSearchWithMatch with this run's variables
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		if s.restrictExpr && keep == nil {
			f, err := query.CompileCollated(s.restrict, &expr.Let{Scope: s.scope, Ctx: rt.ectx}, rt.opts.Collator)
			if err != nil {
				return nil, err
			}
			keep = f
		}
		found, err := s.search(doc, rt, keep)
		if err != nil {
			return nil, err
		}
		return []bson.Raw{setPath(doc, s.as, buildArray(found))}, nil
	}}
}

// graphValueSize is the memory of a frontier value or a visited document
// beyond its bytes: its slice and map entries.
const graphValueSize = 64

// search runs the breadth-first search of one input document and returns
// the documents reached, in the order they were reached. keep, when not
// nil, is restrictSearchWithMatch, which the stage applies itself.
func (s *graphLookupStage) search(doc bson.Raw, rt *runtime, keep *query.Filter) ([]bson.RawValue, error) {
	acct := sorter.NewAccount(rt.memoryLimit(), rt.opts.Budget)
	defer acct.Release()
	grow := func(n int) error {
		if !acct.Grow(int64(n) + graphValueSize) {
			return mongoerr.New(mongoerr.GraphLookupMaxMemory, "$graphLookup reached maximum memory consumption")
		}
		return nil
	}
	start, err := s.startWith.Eval(rt.ectx, doc)
	if err != nil {
		return nil, err
	}
	var frontier []bson.RawValue
	if start.Type == bson.TypeArray {
		frontier = arrayValues(start)
	} else if start.Type != 0 {
		frontier = []bson.RawValue{start}
	}
	for _, v := range frontier {
		if err := grow(len(v.Value)); err != nil {
			return nil, err
		}
	}
	visited, queried := map[string]bool{}, map[string]bool{}
	var out []bson.RawValue
	for depth := int64(0); len(frontier) > 0 && (s.maxDepth < 0 || depth <= s.maxDepth); depth++ {
		level := unqueried(frontier, queried, rt.opts.Collator)
		frontier = nil
		for len(level) > 0 {
			batch := level[:min(len(level), graphLookupBatch)]
			level = level[len(batch):]
			src, err := rt.find(s.from, s.levelFilter(batch, keep == nil))
			if err != nil {
				return nil, err
			}
			if frontier, out, err = s.readLevel(src, rt, keep, depth, visited, frontier, out, grow); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// unqueried drops the values of a frontier already asked for (1 and 1.0
// are one value, so are strings equal under the collation), marking the
// others asked: a value's matches were all
// read the first time, so asking again finds only visited documents.
func unqueried(vals []bson.RawValue, queried map[string]bool, coll *collation.Collator) []bson.RawValue {
	out := vals[:0:0]
	for _, v := range vals {
		k := string(coll.ValueKey(v))
		if !queried[k] {
			queried[k] = true
			out = append(out, v)
		}
	}
	return out
}

// graphLookupBatch is the most frontier values one read asks for, so that
// a wide level is read in several bounded $in queries.
const graphLookupBatch = 256

// readLevel reads the documents of one read of a level: those not yet
// visited (and kept by keep, when not nil) join out and their
// connectFromField values the next frontier.
func (s *graphLookupStage) readLevel(src Source, rt *runtime, keep *query.Filter, depth int64, visited map[string]bool,
	frontier, out []bson.RawValue, grow func(int) error) ([]bson.RawValue, []bson.RawValue, error) {
	defer src.Close()
	for {
		d, err := src.Next()
		if err != nil {
			return nil, nil, err
		}
		if d == nil {
			return frontier, out, nil
		}
		if keep != nil {
			ok, _, err := keep.MatchErr(d)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				continue
			}
		}
		id, err := d.LookupErr("_id")
		if err != nil {
			return nil, nil, mongoerr.New(mongoerr.GraphLookupNoID, "Documents in the '%s.%s' namespace must contain an _id for de-duplication in $graphLookup", rt.opts.DB, s.from)
		}
		// Documents are told apart by _id compared under the simple
		// collation, whatever the operation's: _ids equal only under it
		// ("foo", "FOO") are distinct documents (MongoDB keys _visited with
		// ValueComparator::kInstance, not the expression context's).
		key := string((*collation.Collator)(nil).ValueKey(id))
		if visited[key] {
			continue
		}
		visited[key] = true
		if s.depthField != nil {
			d = setPath(d, s.depthField, bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, depth)})
		} else {
			d = append(bson.Raw(nil), d...)
		}
		if err := grow(len(d) + len(key)); err != nil {
			return nil, nil, err
		}
		out = append(out, docValue(d))
		for _, v := range valuesAtPath(docValue(d), s.connectFrom) {
			if err := grow(len(v.Value)); err != nil {
				return nil, nil, err
			}
			frontier = append(frontier, v)
		}
	}
}

// levelFilter is the query of one level of the search:
// {$and: [restrictSearchWithMatch, {connectToField: {$in: frontier}}]},
// without restrictSearchWithMatch unless withRestrict.
// $in on null also matches a missing field and undefined, which MongoDB's
// search never follows: those are excluded unless asked for.
func (s *graphLookupStage) levelFilter(frontier []bson.RawValue, withRestrict bool) bson.Raw {
	var matchNull, matchUndefined bool
	start, d := bsoncore.AppendDocumentStart(nil)
	and, d := bsoncore.AppendArrayElementStart(d, "$and")
	i := 0
	next := func() string { i++; return strconv.Itoa(i - 1) }
	if s.restrict != nil && withRestrict {
		d = bsoncore.AppendDocumentElement(d, next(), s.restrict)
	}
	c, d := bsoncore.AppendDocumentElementStart(d, next())
	f, d := bsoncore.AppendDocumentElementStart(d, s.connectTo)
	in, d := bsoncore.AppendArrayElementStart(d, "$in")
	for j, v := range frontier {
		switch v.Type {
		case bson.TypeNull:
			matchNull = true
		case bson.TypeUndefined:
			matchUndefined = true
		}
		d = appendValue(d, strconv.Itoa(j), v)
	}
	d, _ = bsoncore.AppendArrayEnd(d, in)
	d, _ = bsoncore.AppendDocumentEnd(d, f)
	d, _ = bsoncore.AppendDocumentEnd(d, c)
	if matchNull || matchUndefined {
		d = bsoncore.AppendDocumentElement(d, next(), buildDoc([]field{{s.connectTo, docValue(buildDoc([]field{{"$exists", bson.RawValue{Type: bson.TypeBoolean, Value: []byte{1}}}}))}}))
		other := "undefined"
		if matchUndefined {
			other = "null"
		}
		if !(matchNull && matchUndefined) {
			not := buildDoc([]field{{"$not", docValue(buildDoc([]field{{"$type", stringValue(other)}}))}})
			d = bsoncore.AppendDocumentElement(d, next(), buildDoc([]field{{s.connectTo, docValue(not)}}))
		}
	}
	d, _ = bsoncore.AppendArrayEnd(d, and)
	d, _ = bsoncore.AppendDocumentEnd(d, start)
	return d
}
