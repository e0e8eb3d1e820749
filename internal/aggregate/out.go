package aggregate

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/update"
	"github.com/folio-db/folio/internal/values"
)

// outBatch is how many documents $out writes at a time.
const outBatch = 1000

// A batch of $merge's writes ends as MongoDB 7.0's DocumentSourceWriter
// ends one: before a document whose write statement would take the
// batch's statements past BSONObjMaxUserSize (16 MiB), or when it holds
// kMaxWriteBatchSize (100,000) statements. A statement's size is what
// mergeStage.statementBytes estimates.
const (
	mergeBatchCount = 100000
	mergeBatchBytes = 16 << 20
	// arrayElementBytes is MongoDB's kWriteCommandBSONArrayPerElementOverheadBytes.
	arrayElementBytes = 7
)

// outStage is $out: the documents replace the content of the target
// collection, atomically: they are written aside, then swapped in
// (Env.Out). With timeseries options, or when the target is one, the
// target is a time series collection (MongoDB 7.0.3). The stage outputs
// nothing.
type outStage struct {
	db, coll string
	ts       *timeseries.Options
	tsSpec   bson.Raw // the timeseries options as written, for explain
}

// explainSpec is $out as MongoDB 7.0's DocumentSourceOut::serialize shows
// it: the target resolved, {coll, db} in DocumentSourceOutSpec's order,
// and the timeseries options given.
func (s *outStage) explainSpec() any {
	d := bson.D{{Key: "coll", Value: s.coll}, {Key: "db", Value: s.db}}
	if s.tsSpec != nil {
		d = append(d, bson.E{Key: "timeseries", Value: s.tsSpec})
	}
	return d
}

// parseOut reads $out's target: a collection name, or the IDL struct
// {db, coll, timeseries}, db and coll required (null is absent), then
// applies MongoDB's rules on the namespace.
func (p *parser) parseOut(arg bson.RawValue) (stage, error) {
	s := &outStage{db: p.opts.DB}
	switch arg.Type {
	case bson.TypeString:
		s.coll = arg.StringValue()
	case bson.TypeEmbeddedDocument:
		seen := map[string]bool{}
		for _, f := range fieldsOf(arg.Value) {
			if f.key != "db" && f.key != "coll" && f.key != "timeseries" {
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$out.%s' is an unknown field.", f.key)
			}
			if seen[f.key] {
				return nil, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '$out.%s' is a duplicate field", f.key)
			}
			seen[f.key] = true
			switch {
			case f.val.Type == bson.TypeNull:
				seen[f.key] = false
			case f.key == "timeseries":
				if f.val.Type != bson.TypeEmbeddedDocument {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$out.timeseries' is the wrong type '%s', expected type 'object'", typeName(f.val))
				}
				o, err := timeseries.Parse(f.val.Document(), "$out.timeseries")
				if err != nil {
					return nil, err
				}
				s.ts, s.tsSpec = &o, f.val.Document()
			case f.val.Type != bson.TypeString:
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$out.%s' is the wrong type '%s', expected type 'string'", f.key, typeName(f.val))
			case f.key == "db":
				s.db = f.val.StringValue()
			default:
				s.coll = f.val.StringValue()
			}
		}
		for _, key := range []string{"coll", "db"} {
			if !seen[key] {
				return nil, mongoerr.MissingField("$out." + key)
			}
		}
	default:
		return nil, mongoerr.New(mongoerr.OutSpecInvalidType, "$out only supports a string or object argument, but found %s", typeName(arg))
	}
	switch {
	case s.coll == "" || s.coll[0] == '.' || strings.IndexByte(s.coll, 0) >= 0 || !nsname.ValidDB(s.db, false):
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid $out target namespace, '%s.%s'", s.db, s.coll)
	case strings.HasPrefix(s.coll, "system."):
		return nil, mongoerr.New(mongoerr.OutSpecialCollection, "Can't $out to special collection: %s", s.coll)
	case s.db == "admin" || s.db == "config" || s.db == "local":
		return nil, mongoerr.New(mongoerr.OutInternalDB, "Can't $out to internal database: %s", s.db)
	}
	return s, nil
}

func (s *outStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		out, err := rt.opts.Env.Out(s.db, s.coll, s.ts)
		if err != nil {
			return nil, err
		}
		if err := copyInBatches(in, out.Write); err != nil {
			out.Abort()
			return nil, err
		}
		return nil, out.Commit()
	}}
}

// copyInBatches hands the documents of in to write in batches; write is
// called at least once, so an empty input still creates the target.
func copyInBatches(in Source, write func([]bson.Raw) error) error {
	var batch []bson.Raw
	for {
		doc, err := in.Next()
		if err != nil {
			return err
		}
		if doc == nil {
			return write(batch)
		}
		if batch = append(batch, doc); len(batch) == outBatch {
			if err := write(batch); err != nil {
				return err
			}
			batch = nil
		}
	}
}

// mergeStage is $merge: each document is matched against the target
// collection by its on fields (default _id). A match is handled by
// whenMatched: replace it, keep it, merge the fields into it (default),
// fail, or update it with a pipeline seeing the document as $$new. A
// document without a match is inserted (default), discarded, or fails.
// The stage outputs nothing.
type mergeStage struct {
	db, coll       string
	on             [][]string
	whenMatched    string
	pipeline       []stage
	whenNotMatched string
	letNames       []string
	letExprs       []*expr.Expr
	// newVar: the whenMatched pipeline sees the document as $$new
	// without let naming it.
	newVar bool
	// pipelineBytes is the size MongoDB counts for the whenMatched
	// pipeline as an update modification (UpdateModification::objsize).
	pipelineBytes int
	// pipelineSpec and letSpec are the whenMatched pipeline and let as
	// written (nil: not given), for explain.
	pipelineSpec bson.RawValue
	letSpec      bson.Raw
}

// explainSpec is $merge as MongoDB 7.0's DocumentSourceMerge::serialize
// shows it, DocumentSourceMergeSpec's fields in order: into resolved to
// {db, coll}; on, a path or, of several, their array in FieldPath order
// (a std::set); with a whenMatched pipeline, let as given ({new: "$$ROOT"}
// when not given, new added when the pipeline sees it without let naming
// it); whenMatched and whenNotMatched. The pipeline and let's
// expressions are shown as written.
func (s *mergeStage) explainSpec() any {
	paths := s.onPaths()
	slices.Sort(paths)
	var on any = paths[0]
	if len(paths) > 1 {
		on = paths
	}
	d := bson.D{{Key: "into", Value: bson.D{{Key: "db", Value: s.db}, {Key: "coll", Value: s.coll}}}, {Key: "on", Value: on}}
	var whenMatched any = s.whenMatched
	if s.whenMatched == "pipeline" {
		let := bson.D{}
		for _, f := range fieldsOf(s.letSpec) {
			let = append(let, bson.E{Key: f.key, Value: f.val})
		}
		if s.newVar && s.letSpec.Lookup("new").Type == 0 {
			let = append(let, bson.E{Key: "new", Value: "$$ROOT"})
		}
		d = append(d, bson.E{Key: "let", Value: let})
		whenMatched = s.pipelineSpec
	}
	return append(d, bson.E{Key: "whenMatched", Value: whenMatched}, bson.E{Key: "whenNotMatched", Value: s.whenNotMatched})
}

func (p *parser) parseMerge(arg bson.RawValue) (stage, error) {
	s := &mergeStage{on: [][]string{{"_id"}}, whenMatched: "merge", whenNotMatched: "insert"}
	switch arg.Type {
	case bson.TypeString:
		if arg.StringValue() == "" {
			return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid $merge target namespace: '%s.'", p.opts.DB)
		}
		var err error
		s.db, s.coll, err = mergeInto(arg, p.opts.DB)
		return s, err
	case bson.TypeEmbeddedDocument:
	default:
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$merge requires a string or object argument, but found %s", typeName(arg))
	}
	var pipeline []bson.Raw
	var let bson.Raw // nil: not given
	haveInto, haveOn := false, false
	var err error
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "into":
			s.db, s.coll, err = mergeInto(f.val, p.opts.DB)
			haveInto = true
		case "on":
			s.on, err = mergeOn(f.val)
			haveOn = true
		case "let":
			if f.val.Type == bson.TypeNull {
				continue // as if not given
			}
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$merge.let' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			let = f.val.Document()
		case "whenMatched":
			switch f.val.Type {
			case bson.TypeString:
				switch m := f.val.StringValue(); m {
				case "replace", "keepExisting", "merge", "fail":
					s.whenMatched = m
				default:
					return nil, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'whenMatched' is not a valid value.", m)
				}
			case bson.TypeArray:
				s.whenMatched, s.pipelineSpec = "pipeline", f.val
				pipeline, err = subPipeline(f.val, mongoerr.TypeMismatch, "$merge.whenMatched")
			default:
				return nil, mongoerr.New(mongoerr.MergeWhenMatchedInvalidType, "$merge 'whenMatched' field  must be either a string or an array, but found %s", typeName(f.val))
			}
		case "whenNotMatched":
			switch f.val.Type {
			case bson.TypeNull:
				continue // as if not given
			case bson.TypeString:
			default:
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$merge.whenNotMatched' is the wrong type '%s', expected type 'string'", typeName(f.val))
			}
			switch m := f.val.StringValue(); m {
			case "insert", "discard", "fail":
				s.whenNotMatched = m
			default:
				return nil, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '$merge.whenNotMatched' is not a valid value.", m)
			}
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$merge.%s' is an unknown field.", f.key)
		}
		if err != nil {
			return nil, err
		}
	}
	if !haveInto {
		return nil, mongoerr.MissingField("$merge.into")
	}
	if !mergeModes[[2]string{s.whenMatched, s.whenNotMatched}] {
		return nil, mongoerr.New(mongoerr.MergeModesUnsupported, "Combination of $merge modes 'whenMatched: %s' and 'whenNotMatched: %s' is not supported", s.whenMatched, s.whenNotMatched)
	}
	// Explicit on fields need an index proving they match one document at
	// most (the default _id has one).
	if haveOn && !p.opts.Env.HasUniqueKeyIndex(s.db, s.coll, s.onPaths(), p.opts.Collator) {
		return nil, mongoerr.New(mongoerr.MergeOnNoUniqueIndex, "Cannot find index to verify that join fields will be unique")
	}
	if let != nil && s.whenMatched != "pipeline" {
		return nil, mongoerr.New(mongoerr.MergeLetWithInvalidWhenMatched, "Cannot use 'let' variables with 'whenMatched: %s' mode", s.whenMatched)
	}
	if s.whenMatched == "pipeline" {
		s.letSpec = let
		// $$new is the document when let is not given, when it names new
		// itself, and with whenNotMatched insert (MongoDB adds it to let,
		// since its upsert inserts the document); otherwise it is undefined.
		s.newVar = let == nil || s.whenNotMatched == "insert"
		for _, l := range fieldsOf(let) {
			if l.key == "new" && (l.val.Type != bson.TypeString || l.val.StringValue() != "$$ROOT") {
				return nil, mongoerr.New(mongoerr.MergeLetRedefinesNew, "'let' may not define a value for the reserved 'new' variable other than '$$ROOT'")
			}
			if err := expr.ValidateVarName(l.key); err != nil {
				return nil, err
			}
			e, err := expr.Compile(l.val, p.scope)
			if err != nil {
				return nil, err
			}
			s.letNames = append(s.letNames, l.key)
			s.letExprs = append(s.letExprs, e)
		}
		names := s.letNames
		if s.newVar {
			names = append([]string{"new"}, names...)
		}
		// An update pipeline, parsed as MongoDB's PipelineExecutor parses
		// one: a pipeline of its own, not optimized (a failing constant
		// fails only a document it updates), then each stage one an
		// update allows.
		sp, err := p.sub(topLevel, false, p.coll, p.scope.With(names...).Unoptimized())
		if err != nil {
			return nil, err
		}
		if s.pipeline, err = sp.pipeline(pipeline); err != nil {
			return nil, err
		}
		s.pipelineBytes = arrayElementBytes
		for _, st := range pipeline {
			if name := st.Index(0).Key(); !AllowedInUpdate(name) {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "%s is not allowed to be used within an update", name)
			}
			s.pipelineBytes += len(st) + arrayElementBytes
		}
	}
	return s, nil
}

// AllowedInUpdate reports whether an update pipeline (an update's, or a
// $merge whenMatched one) may hold the stage named name, as MongoDB's
// isAllowedWithinUpdatePipeline constraint says.
func AllowedInUpdate(name string) bool {
	switch name {
	case "$addFields", "$set", "$project", "$unset", "$replaceRoot", "$replaceWith", applyOplogUpdate:
		return true
	}
	return false
}

// mergeModes are the whenMatched and whenNotMatched pairs $merge runs: a
// document kept or failed on a match is inserted otherwise.
var mergeModes = map[[2]string]bool{
	{"replace", "insert"}: true, {"replace", "fail"}: true, {"replace", "discard"}: true,
	{"merge", "insert"}: true, {"merge", "fail"}: true, {"merge", "discard"}: true,
	{"pipeline", "insert"}: true, {"pipeline", "fail"}: true, {"pipeline", "discard"}: true,
	{"keepExisting", "insert"}: true, {"fail", "insert"}: true,
}

// mergeInto reads the target of $merge: a collection name, or {db, coll}
// where a null or missing db is defDB. A system collection or an internal
// database is refused.
func mergeInto(v bson.RawValue, defDB string) (db, coll string, err error) {
	db = defDB
	switch v.Type {
	case bson.TypeString:
		if coll = v.StringValue(); coll == "" {
			return "", "", mongoerr.New(mongoerr.MergeIntoEmptyString, "$merge 'into' field cannot be an empty string")
		}
	case bson.TypeEmbeddedDocument:
		for _, f := range fieldsOf(v.Value) {
			switch {
			case (f.key == "db" || f.key == "coll") && f.val.Type == bson.TypeNull:
			case f.key == "db" && f.val.Type == bson.TypeString:
				if name := f.val.StringValue(); name != "" {
					db = name
				}
			case f.key == "coll" && f.val.Type == bson.TypeString:
				coll = f.val.StringValue()
			case f.key == "db" || f.key == "coll":
				return "", "", mongoerr.New(mongoerr.TypeMismatch, "BSON field 'into.%s' is the wrong type '%s', expected type 'string'", f.key, typeName(f.val))
			default:
				return "", "", mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'into.%s' is an unknown field.", f.key)
			}
		}
		if coll == "" {
			return "", "", mongoerr.New(mongoerr.MergeIntoNoColl, "$merge 'into' field must specify a 'coll' that is not empty, null or undefined")
		}
	default:
		return "", "", mongoerr.New(mongoerr.MergeIntoInvalidType, "$merge 'into' field  must be either a string or an object, but found %s", typeName(v))
	}
	switch {
	case strings.ContainsAny(coll, "$\x00") || !nsname.ValidDB(db, false) || strings.HasPrefix(coll, ".") || strings.HasSuffix(coll, "."):
		return "", "", mongoerr.New(mongoerr.InvalidNamespace, "Invalid $merge target namespace: '%s.%s'", db, coll)
	case strings.HasPrefix(coll, "system."):
		return "", "", mongoerr.New(mongoerr.MergeIntoSystemCollection, "Cannot $merge to special collection: %s", coll)
	case db == "admin" || db == "config" || db == "local":
		return "", "", mongoerr.New(mongoerr.MergeIntoInternalDB, "Cannot $merge to internal database: %s", db)
	}
	return db, coll, nil
}

// mergeOn reads the on fields of $merge: a path or a non-empty array of
// distinct paths.
func mergeOn(v bson.RawValue) ([][]string, error) {
	var paths []string
	switch v.Type {
	case bson.TypeString:
		paths = []string{v.StringValue()}
	case bson.TypeArray:
		for _, el := range arrayValues(v) {
			if el.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.MergeOnArrayElementNotString, "$merge 'on' array elements must be strings, but found %s", typeName(el))
			}
			paths = append(paths, el.StringValue())
		}
		if len(paths) == 0 {
			return nil, mongoerr.New(mongoerr.MergeOnEmpty, "If explicitly specifying $merge 'on', must include at least one field")
		}
	default:
		return nil, mongoerr.New(mongoerr.MergeOnInvalidType, "$merge 'on' field must be either a string or an array of strings, but found %s", typeName(v))
	}
	var out [][]string
	for i, p := range paths {
		if err := expr.CheckFieldPath(p); err != nil {
			return nil, err
		}
		if slices.Contains(paths[:i], p) {
			return nil, mongoerr.New(mongoerr.MergeOnDuplicateField, "Found a duplicate field '%s'", p)
		}
		out = append(out, splitPath(p))
	}
	return out, nil
}

func (s *mergeStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		if err := rt.opts.Env.CheckOutput("$merge", s.db, s.coll); err != nil {
			return nil, err
		}
		b := &mergeBatch{s: s, rt: rt}
		for {
			doc, err := in.Next()
			if err != nil {
				return nil, err
			}
			if doc == nil {
				return nil, b.end()
			}
			// A document without _id matched on _id gets a new one, so it
			// is inserted.
			if _, err := doc.LookupErr("_id"); err != nil && s.onID() {
				doc = buildDoc(append([]field{{"_id", newObjectID()}}, fieldsOf(doc)...))
			}
			vars, err := s.letVars(doc, rt)
			if err != nil {
				return nil, err
			}
			size := s.statementBytes(doc, vars)
			if b.n > 0 && (b.bytes+size > mergeBatchBytes || b.n >= mergeBatchCount) {
				if err := b.end(); err != nil {
					return nil, err
				}
			}
			b.bytes += size
			if err := b.add(doc, vars); err != nil {
				return nil, err
			}
		}
	}}
}

// mergeBatch is a batch of $merge's writes. As MongoDB's, a batch is
// unordered: a document whose write fails does not stop the others, and
// the batch then fails with the failure of its earliest such document;
// with whenNotMatched "fail", a batch without failures fails with
// MergeStageNoMatchingDocument if one of its documents matched none.
// The inserts of a batch are written together, before a later document
// that could match one of them looks for its target and before a later
// document's update, so that the writes land in their documents' order,
// as MongoDB applies its batch of upserts (batch_writes.js: an update
// freeing a unique key does not let an earlier insert of that key in).
type mergeBatch struct {
	s     *mergeStage
	rt    *runtime
	n     int // documents in the batch
	bytes int // their statements' estimated size
	// inserts are the documents to insert, of the batch's positions
	// insertAt, with their on values (onKey) in pending.
	inserts  []bson.Raw
	insertAt []int
	pending  map[string]bool
	err      error
	errAt    int
	missed   bool
}

// fail records err as the failure of the document at position at.
func (b *mergeBatch) fail(at int, err error) {
	if b.err == nil || at < b.errAt {
		b.err, b.errAt = err, at
	}
}

// MergeOnValue checks the value of a $merge on field (mapReduce's merge
// and reduce outputs too, merging on _id): it may not be an array
// (51185), missing, null or undefined (51132).
func MergeOnValue(path string, v bson.RawValue) error {
	switch v.Type {
	case bson.TypeArray:
		return mongoerr.New(mongoerr.MergeOnFieldArray, "$merge write error: 'on' field '%s' is an array", path)
	case 0, bson.TypeNull, bson.TypeUndefined:
		return mongoerr.New(mongoerr.MergeOnFieldInvalidValue, "$merge write error: 'on' field '%s' cannot be missing, null, undefined or an array", path)
	}
	return nil
}

// letVars are the values of the variables a whenMatched pipeline sees for
// doc, nil for the other modes. As MongoDB resolves them when it batches
// the document's write, a failure to evaluate one fails at once.
func (s *mergeStage) letVars(doc bson.Raw, rt *runtime) (map[string]bson.RawValue, error) {
	if s.whenMatched != "pipeline" {
		return nil, nil
	}
	vars := make(map[string]bson.RawValue, len(s.letNames)+1)
	if s.newVar {
		vars["new"] = docValue(doc)
	}
	for i, e := range s.letExprs {
		v, err := e.Eval(rt.ectx, doc)
		if err != nil {
			return nil, err
		}
		vars[s.letNames[i]] = v
	}
	return vars, nil
}

// statementBytes is the size MongoDB 7.0 counts for doc's write in a
// batch, where the writes are local (LocalWriteSizeEstimator, a
// standalone or a primary): the update modification's size, which is
// the document for replace (and for whenMatched fail's insert),
// {$set: doc} for merge, {$setOnInsert: doc} for keepExisting, the
// pipeline for a whenMatched pipeline, plus the object of its let
// variables' values (a missing value is left out). The on field query
// and the statement's flags are not counted.
func (s *mergeStage) statementBytes(doc bson.Raw, vars map[string]bson.RawValue) int {
	switch s.whenMatched {
	case "merge":
		return len(doc) + len("$set") + 7 // {$set: doc}
	case "keepExisting":
		return len(doc) + len("$setOnInsert") + 7 // {$setOnInsert: doc}
	case "pipeline":
		size := s.pipelineBytes + 5 // the empty object of the variables
		for name, v := range vars {
			if v.Type != 0 {
				size += 2 + len(name) + len(v.Value)
			}
		}
		return size
	}
	return len(doc)
}

// add merges doc into the target, a whenMatched pipeline seeing vars
// (mergeStage.letVars). Only an invalid on value fails at once, as MongoDB
// checks it before it batches the write.
func (b *mergeBatch) add(doc bson.Raw, vars map[string]bson.RawValue) error {
	s, rt := b.s, b.rt
	at := b.n
	b.n++
	start, filter := bsoncore.AppendDocumentStart(nil)
	var key []byte
	for _, path := range s.on {
		v := lookupPath(doc, path)
		if err := MergeOnValue(strings.Join(path, "."), v); err != nil {
			return err
		}
		filter = bsoncore.AppendDocumentElement(filter, strings.Join(path, "."), buildDoc([]field{{"$eq", v}}))
		key = rt.opts.Collator.AppendValueKey(key, v)
	}
	filter, _ = bsoncore.AppendDocumentEnd(filter, start)
	if b.pending[string(key)] {
		b.writeInserts()
	}
	target, err := s.findTarget(filter, rt)
	if err != nil {
		return err
	}
	if target == nil {
		switch s.whenNotMatched {
		case "insert":
			if s.whenMatched == "merge" || s.whenMatched == "keepExisting" {
				if doc, err = upsertDoc(filter, doc); err != nil {
					b.fail(at, err)
					return nil
				}
			}
			b.insert(at, doc, key)
		case "fail":
			b.missed = true
		}
		return nil
	}
	if s.whenMatched == "fail" {
		// Inserted, as MongoDB does: the insert fails on the unique index
		// of the on fields, with the duplicate key's pattern and value.
		b.insert(at, doc, key)
		return nil
	}
	if s.whenMatched != "keepExisting" {
		b.writeInserts()
	}
	if err := s.update(doc, target, vars, rt); err != nil {
		b.fail(at, err)
	}
	return nil
}

// upsertDoc is the document $merge inserts for doc, which matched no
// target document, when whenMatched is merge or keepExisting: MongoDB
// writes them as upserts of {$set: doc} and {$setOnInsert: doc} on the
// equality filter of the on fields (MergeStrategyDescriptor's
// kGenerateNewDoc), so the new document is the upsert's seed from the
// filter (update.UpsertSeed: _id first, then the on paths in sorted
// order, a dotted one as subdocuments) with doc's fields set over it in
// their order, each in place where the seed has it; _id, when doc has
// one, then goes first, as an upsert stores it.
func upsertDoc(filter, doc bson.Raw) (bson.Raw, error) {
	seed, err := update.UpsertSeed(filter, false)
	if err != nil {
		return nil, err
	}
	fs := fieldsOf(seed)
	for _, f := range fieldsOf(doc) {
		fs = setField(fs, f.key, f.val)
	}
	if i := slices.IndexFunc(fs, func(f field) bool { return f.key == "_id" }); i > 0 {
		id := fs[i]
		copy(fs[1:i+1], fs[:i])
		fs[0] = id
	}
	return buildDoc(fs), nil
}

func (b *mergeBatch) insert(at int, doc bson.Raw, key []byte) {
	if b.pending == nil {
		b.pending = map[string]bool{}
	}
	b.inserts, b.insertAt = append(b.inserts, doc), append(b.insertAt, at)
	b.pending[string(key)] = true
}

// writeInserts writes the batch's inserts, trying each.
func (b *mergeBatch) writeInserts() {
	if len(b.inserts) == 0 {
		return
	}
	if i, err := b.rt.opts.Env.Insert(b.s.db, b.s.coll, b.inserts, false); err != nil {
		at := b.n
		if i >= 0 {
			at = b.insertAt[i]
		}
		b.fail(at, err)
	}
	b.inserts, b.insertAt = b.inserts[:0], b.insertAt[:0]
	clear(b.pending)
}

// end writes what the batch holds and returns its failure.
func (b *mergeBatch) end() error {
	b.writeInserts()
	err, missed := b.err, b.missed
	b.n, b.bytes, b.err, b.missed = 0, 0, nil, false
	switch {
	case mongoerr.Is(err, mongoerr.DuplicateKey):
		// MongoDB gives the error a context and keeps its keyPattern and
		// keyValue; with whenMatched fail, the context of a key of exactly
		// the on fields says that the document matched.
		e := *mongoerr.As(err)
		context := "$merge failed due to a DuplicateKey error"
		if b.s.whenMatched == "fail" && b.s.isOnPattern(&e) {
			context = "$merge with whenMatched: fail found an existing document with the same values for the 'on' fields"
		}
		e.Msg = context + " :: caused by :: " + e.Msg
		return &e
	case err != nil:
		return err
	case missed:
		return mongoerr.New(mongoerr.MergeStageNoMatchingDocument, "$merge could not find a matching document in the target collection for at least one document in the source collection")
	}
	return nil
}

// update writes doc into target, its match, as whenMatched says
// (keepExisting leaves it); a pipeline sees vars.
func (s *mergeStage) update(doc, target bson.Raw, vars map[string]bson.RawValue, rt *runtime) error {
	id := target.Lookup("_id")
	var repl bson.Raw
	switch s.whenMatched {
	case "keepExisting":
		return nil
	case "replace":
		repl = doc
	case "merge":
		fs := fieldsOf(target)
		for _, f := range fieldsOf(doc) {
			fs = setField(fs, f.key, f.val)
		}
		repl = buildDoc(fs)
	default: // pipeline
		src := runStages(s.pipeline, &SliceSource{Docs: []bson.Raw{target}}, rt.withVars(vars))
		var err error
		repl, err = src.Next()
		src.Close()
		if err != nil {
			return err
		}
	}
	if newID, err := repl.LookupErr("_id"); err == nil && !values.Equal(newID, id) {
		// A replacement is checked as a whole (ObjectReplaceExecutor), a
		// $set or an update pipeline path by path.
		cause := "Performing an update on the path '_id' would modify the immutable field '_id'"
		if s.whenMatched == "replace" {
			cause = "After applying the update, the (immutable) field '_id' was found to have been altered to " + values.ShellElement("_id", newID)
		}
		return mongoerr.New(mongoerr.ImmutableField, "$merge failed to update the matching document, did you attempt to modify the _id or the shard key? :: caused by :: %s", cause)
	}
	return rt.opts.Env.Replace(s.db, s.coll, id, repl, s.whenMatched == "pipeline")
}

// onPaths are the on fields as dotted paths.
func (s *mergeStage) onPaths() []string {
	out := make([]string, len(s.on))
	for i, p := range s.on {
		out[i] = strings.Join(p, ".")
	}
	return out
}

// isOnPattern reports whether the duplicate key error e is of an index
// whose key pattern has the on fields and no other, as MongoDB's
// DocumentSourceMerge::flush tells a match from another unique index.
func (s *mergeStage) isOnPattern(e *mongoerr.Error) bool {
	for _, x := range e.Extra {
		if pattern, ok := x.Value.(bson.Raw); ok && x.Key == "keyPattern" {
			keys, err := pattern.Elements()
			if err != nil || len(keys) != len(s.on) {
				return false
			}
			for _, p := range s.onPaths() {
				if _, err := pattern.LookupErr(p); err != nil {
					return false
				}
			}
			return true
		}
	}
	return false
}

// onID reports whether _id is one of the on fields.
func (s *mergeStage) onID() bool {
	for _, p := range s.on {
		if len(p) == 1 && p[0] == "_id" {
			return true
		}
	}
	return false
}

// findTarget returns the first target document matching filter.
func (s *mergeStage) findTarget(filter bson.Raw, rt *runtime) (bson.Raw, error) {
	src, err := rt.opts.Env.Find(s.db, s.coll, filter, rt.opts.Collator)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return src.Next()
}

// newObjectID is a fresh ObjectId value.
func newObjectID() bson.RawValue {
	id := bson.NewObjectID()
	return bson.RawValue{Type: bson.TypeObjectID, Value: id[:]}
}
