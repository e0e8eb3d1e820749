package commands

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

// Views are kept as MongoDB keeps them: a document per view in the
// database's system.views collection, {_id: "<db>.<view>", viewOn:
// "<collection or view>", pipeline: [...]}. A read of a view runs as an
// aggregation of the collection at the bottom of its chain of views, the
// views' pipelines first; writes and index commands on a view fail with
// CommandNotSupportedOnView (166).
// https://www.mongodb.com/docs/v7.0/core/views/

// maxViewDepth is how many views a chain may hold, as in MongoDB.
const maxViewDepth = 20

// viewDef is one view's definition.
type viewDef struct {
	name, viewOn string
	pipeline     []bson.Raw
	// collation is the view's default collation (normalized), nil when
	// it was created without one.
	collation bson.Raw
}

// lookupView returns the definition of db.name when it is a view, or nil
// (a collection, or nothing). Only a name no collection has is looked up.
// As in MongoDB's CollectionCatalog::lookupView, the lookup fails with
// InvalidViewDefinition while any definition of db's views is one its view
// catalog would not load, whether it is db.name's or another's: a find on
// a missing collection fails then too, a command on a collection does not.
func (s *Service) lookupView(r *Request, db, name string) (*viewDef, error) {
	if name == "" || strings.HasPrefix(name, "system.") || s.Engine.CollectionIn(r.Txn, db, name) != nil {
		return nil, nil
	}
	views, err := s.readViews(r, db, name, engine.WithOpStats(r.Ctx, nil))
	if err != nil || len(views) == 0 {
		return nil, err
	}
	return views[0], nil
}

// invalidViewCatalog is MongoDB's error for using the views of a database
// whose system.views holds a definition its view catalog would not load
// (validViewDoc).
func invalidViewCatalog() error {
	return mongoerr.New(mongoerr.InvalidViewDefinition,
		"Invalid view definition detected in the view catalog. Remove the invalid view manually to prevent disallowing any further usage of the view catalog.")
}

// parseViewDoc reads a system.views document.
func parseViewDoc(db string, doc bson.Raw) *viewDef {
	id, _ := doc.Lookup("_id").StringValueOK()
	v := &viewDef{name: strings.TrimPrefix(id, db+".")}
	v.viewOn, _ = doc.Lookup("viewOn").StringValueOK()
	v.collation = viewCollation(doc)
	if arr, ok := doc.Lookup("pipeline").ArrayOK(); ok {
		vals, _ := arr.Values()
		for _, st := range vals {
			if d, ok := st.DocumentOK(); ok {
				v.pipeline = append(v.pipeline, d)
			}
		}
	}
	return v
}

// viewCollation is the default collation of the view a system.views
// document defines, normalized as MongoDB's view catalog holds it (the
// collator it parses the stored spec into): nil for none, an empty
// document or the simple collation. A spec Folio cannot honour is kept as
// stored; the reads that use it refuse it.
func viewCollation(doc bson.Raw) bson.Raw {
	spec, ok := doc.Lookup("collation").DocumentOK()
	if !ok || rawdoc.Len(spec) == 0 {
		return nil
	}
	c, err := collation.Parse(spec)
	switch {
	case err != nil:
		return spec
	case c == nil:
		return nil
	}
	return c.Document()
}

// resolveView follows db.name's chain of views down to a collection: it
// returns that collection and the stages the views apply, innermost view
// first; isView is false when db.name is no view. A chain deeper than
// maxViewDepth fails with ViewDepthLimitExceeded.
func (s *Service) resolveView(r *Request, db, name string) (coll string, stages []bson.Raw, isView bool, err error) {
	v, err := s.lookupView(r, db, name)
	if err != nil {
		return "", nil, false, err
	}
	return s.resolveFrom(r, db, name, v)
}

// resolveFrom is resolveView of db.name, whose definition v (nil: no
// view) was looked up. As MongoDB's view_catalog_helpers::resolveView, it
// follows at most maxViewDepth views: a chain of that many fails even
// when the last one is on a collection; and it stops at a view whose
// pipeline starts with $collStats, returning the namespace that view is
// on, view or not, since $collStats describes that namespace itself.
// Under apiStrict the views' stages are parsed as the request's own: a
// stage outside API version 1 fails it (APIStrictError), whatever the
// parameters the view was created with.
func (s *Service) resolveFrom(r *Request, db, name string, v *viewDef) (coll string, stages []bson.Raw, isView bool, err error) {
	coll, stages, isView, err = s.resolveChain(r, db, name, v)
	if err == nil && isView && r.Args.API.Strict {
		err = checkAPIStrictStages(stages)
	}
	if err != nil {
		return "", nil, false, err
	}
	return coll, stages, isView, nil
}

// resolveChain follows the views from db.name for resolveFrom.
func (s *Service) resolveChain(r *Request, db, name string, v *viewDef) (coll string, stages []bson.Raw, isView bool, err error) {
	for depth := 0; depth < maxViewDepth; depth++ {
		if depth > 0 {
			if v, err = s.lookupView(r, db, name); err != nil {
				return "", nil, false, err
			}
		}
		if v == nil {
			return name, stages, depth > 0, nil
		}
		stages = append(slices.Clone(v.pipeline), stages...)
		name = v.viewOn
		if len(v.pipeline) > 0 && Name(v.pipeline[0]) == "$collStats" {
			return name, stages, true, nil
		}
	}
	return "", nil, false, mongoerr.New(mongoerr.ViewDepthLimitExceeded, "View depth too deep or view cycle detected; maximum depth is %d", maxViewDepth)
}

// resolveInvolved resolves, before an aggregation runs, every view its
// stages read ($lookup, $graphLookup, $unionWith, nested too) and those
// the views' pipelines read in turn, each once, as MongoDB's
// resolveInvolvedNamespaces does: a view that does not resolve fails the
// aggregation before it reads anything.
func (s *Service) resolveInvolved(r *Request, stages []bson.Raw) error {
	queue := involvedNamespaces(r.DB, stages)
	seen := map[string]bool{}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		v, err := s.lookupView(r, r.DB, name)
		if err != nil || v == nil {
			if err != nil {
				return err
			}
			continue
		}
		_, resolved, _, err := s.resolveFrom(r, r.DB, name, v)
		if err != nil {
			e := mongoerr.As(err)
			return mongoerr.New(e.Code, "Failed to resolve view '%s.%s :: caused by :: %s", r.DB, name, e.Msg)
		}
		queue = append(queue, involvedNamespaces(r.DB, resolved)...)
	}
	return nil
}

// onView rewrites the aggregation a when it runs on a view: on the
// collection under the view, its stages after the views'.
func (s *Service) onView(r *Request, a *aggregateArgs) error {
	if a.opts.Coll == "" {
		return nil
	}
	v, err := s.lookupView(r, r.DB, a.opts.Coll)
	if err != nil || v == nil {
		return err
	}
	coll, stages, _, err := s.resolveFrom(r, r.DB, a.opts.Coll, v)
	if err != nil {
		return err
	}
	if len(a.stages) > 0 && Name(a.stages[0]) == "$changeStream" {
		return mongoerr.New(mongoerr.CommandNotSupportedOnView, "$changeStream is not supported on views")
	}
	if len(a.stages) > 0 && Name(a.stages[0]) == "$collStats" {
		// $collStats runs on the view's own namespace, unresolved, as in
		// MongoDB: the view's latencyStats, while storageStats and count
		// fail (166); a time series collection's are its buckets'.
		return nil
	}
	ts, err := s.tsOfView(r, r.DB, v)
	if err != nil {
		return err
	}
	if ts != nil && len(a.stages) > 0 && Name(a.stages[0]) == "$indexStats" {
		// A time series collection's $indexStats are its buckets', their
		// keys on the measurements (the unpacking left out, as MongoDB's
		// view resolution does).
		return nil
	}
	// A view is read under its own default collation, the simple one when
	// it was created without one (it does not take its collection's, as in
	// MongoDB); an operation naming another is refused. A time series
	// collection's view has its buckets' collation.
	own := v.collation
	if own == nil && ts == nil {
		own = simpleCollationDoc
	}
	if own != nil {
		if a.collation != nil && !sameCollation(a.collation, own) {
			return mongoerr.New(mongoerr.OptionNotSupportedOnView, "Cannot override a view's default collation")
		}
		a.collation = own
	}
	if ts != nil {
		a.hint = ts.bucketHint(a.hint)
	}
	a.view, a.opts.Coll = a.opts.Coll, coll
	a.stages = withBucketFilter(mergeMatches(append(stages, a.stages...)), ts != nil && ts.o.OneSchema)
	return nil
}

// checkViewCollations fails an aggregation that reads a view (through
// $lookup, $graphLookup or $unionWith, in nested pipelines too) whose
// default collation is not the operation's, as MongoDB does: the
// operation's is the one it names, else its collection's or view's. The
// namespaces are those the authorization check reads (pipelineNeeds).
func (s *Service) checkViewCollations(r *Request, a *aggregateArgs) error {
	pipeline, _ := r.args.value("pipeline").ArrayOK()
	op := a.collation
	if op == nil && a.opts.Coll != "" {
		if c := s.Engine.CollectionIn(r.Txn, r.DB, a.opts.Coll); c != nil {
			op = c.Options.Collation
		}
	}
	for _, n := range pipelineNeeds(r.DB, pipeline, nil, false) {
		if n.action != "find" {
			continue
		}
		v, err := s.lookupView(r, n.target.DB, n.target.Coll)
		if err != nil || v == nil {
			if err != nil {
				return err
			}
			continue
		}
		own := v.collation
		if ts, err := s.tsOfView(r, n.target.DB, v); err != nil {
			return err
		} else if ts != nil {
			// a time series collection's is its buckets'
			own = s.Engine.CollectionIn(r.Txn, n.target.DB, ts.buckets).Options.Collation
		}
		if !sameCollation(own, op) {
			// MongoDB 7.0's collatorCompatibleWithPipeline appends the
			// namespace to its message without a separator.
			return mongoerr.New(mongoerr.OptionNotSupportedOnView, "Cannot override a view's default collation%s", n.target)
		}
	}
	return nil
}

// sameCollation reports whether two collation documents are the same
// collation once normalized; nil is the simple collation.
func sameCollation(a, b bson.Raw) bool {
	parse := func(d bson.Raw) (*collation.Collator, error) {
		if d == nil {
			return nil, nil
		}
		return collation.Parse(d)
	}
	ca, err1 := parse(a)
	cb, err2 := parse(b)
	if err1 != nil || err2 != nil || ca == nil || cb == nil {
		return err1 == nil && err2 == nil && ca == nil && cb == nil
	}
	return bytes.Equal(ca.Document(), cb.Document())
}

// mergeMatches joins adjacent $match stages into one ($and of their
// filters), as MongoDB's optimizer does: a view's $match and the query's
// are then pushed down together, so that an index of either serves. A
// $match on $text is left apart: MongoDB checks that it comes first
// (17313) when it parses the pipeline, before it optimizes it.
func mergeMatches(stages []bson.Raw) []bson.Raw {
	out := stages[:0:0]
	for _, st := range stages {
		if n := len(out); n > 0 && Name(st) == "$match" && Name(out[n-1]) == "$match" {
			prev, ok1 := out[n-1].Lookup("$match").DocumentOK()
			cur, ok2 := st.Lookup("$match").DocumentOK()
			if ok1 && ok2 && !hasText(cur) {
				out[n-1] = marshal(bson.D{{Key: "$match", Value: bson.D{{Key: "$and", Value: bson.A{prev, cur}}}}})
				continue
			}
		}
		out = append(out, st)
	}
	return out
}

// hasText reports whether a filter holds $text, which may stand at its
// top level or in the clauses of $and, $or and $nor.
func hasText(filter bson.Raw) bool {
	elems, _ := filter.Elements()
	for _, e := range elems {
		switch e.Key() {
		case "$text":
			return true
		case "$and", "$or", "$nor":
			arr, _ := e.Value().ArrayOK()
			clauses, _ := arr.Values()
			for _, c := range clauses {
				if d, ok := c.DocumentOK(); ok && hasText(d) {
					return true
				}
			}
		}
	}
	return false
}

// writable fails when a write command may not write db.name: a view
// (CommandNotSupportedOnView), or system.views, which only view commands
// write.
func (s *Service) writable(r *Request, db, name string) error {
	if err := writeAllowed(db, name); err != nil {
		return err
	}
	return s.notOnView(r, db, name)
}

// writeAllowed is MongoDB's userAllowedWriteNS: a database's views are
// not written as a collection, and the namespace must be one a client may
// create (engine.ValidateNamespace).
func writeAllowed(db, name string) error {
	if name == engine.ViewsCollection {
		return mongoerr.New(mongoerr.InvalidNamespace, "cannot write to '%s.%s'", db, name)
	}
	return engine.ValidateNamespace(db, name)
}

// notOnView fails with CommandNotSupportedOnView when db.name is a view:
// the check of writes and index commands.
func (s *Service) notOnView(r *Request, db, name string) error {
	v, err := s.lookupView(r, db, name)
	if err != nil || v == nil {
		return err
	}
	return viewError(db, name)
}

// viewError is the error of a command a view does not take.
func viewError(db, name string) error {
	return mongoerr.New(mongoerr.CommandNotSupportedOnView, "Namespace %s.%s is a view, not a collection", db, name)
}

// createView runs create with viewOn: the name must be free, the
// pipeline must parse and hold no $out or $merge, and the definition must
// pass MongoDB's view graph checks (validateView: cycles, depth, the
// collations of the views it reads); then the definition is stored.
func (s *Service) createView(r *Request, name, viewOn string, pipeline []bson.Raw, coll bson.Raw) error {
	if s.Engine.CollectionIn(r.Txn, r.DB, name) != nil {
		return mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", r.DB, name)
	}
	if v, err := s.lookupView(r, r.DB, name); err != nil || v != nil {
		if err == nil {
			err = mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", r.DB, name)
			if r.Txn == nil {
				err = sameView(r.DB, v, viewOn, pipeline, coll)
			}
		}
		return err
	}
	if strings.HasPrefix(viewOn, timeseries.BucketsPrefix) {
		return mongoerr.New(mongoerr.InvalidNamespace, "Cannot create view on a system.buckets namespace except by creating a time-series collection")
	}
	if err := s.checkView(r, viewOn); err != nil {
		return err
	}
	if err := s.validateView(r, &viewDef{name: name, viewOn: viewOn, pipeline: pipeline, collation: coll}); err != nil {
		return err
	}
	doc := viewDoc(r.DB, name, viewOn, pipeline, coll)
	_, werrs, err := s.Engine.Insert(r.DB, engine.ViewsCollection, []bson.Raw{doc}, true, engine.WriteOptions{Txn: r.Txn, Journal: true, Ctx: r.Ctx})
	if err == nil && len(werrs) > 0 {
		err = werrs[0].Err
	}
	return err
}

// sameView is create's answer when the view it would create exists
// (outside a transaction): success when the existing view has the same
// viewOn, pipeline and collation, else NamespaceExists saying which
// differs, as MongoDB's checkCollectionOptions does.
func sameView(db string, v *viewDef, viewOn string, pipeline []bson.Raw, coll bson.Raw) error {
	if v.viewOn != viewOn {
		return mongoerr.New(mongoerr.NamespaceExists, "namespace %s.%s already exists, but is a view on %s.%s rather than %s.%s", db, v.name, db, v.viewOn, db, viewOn)
	}
	existing, wanted := stagesDoc(v.pipeline), stagesDoc(pipeline)
	if values.CompareDocuments(existing, wanted) != 0 {
		return mongoerr.New(mongoerr.NamespaceExists, "namespace %s.%s already exists, but with pipeline %s rather than %s", db, v.name, existing, wanted)
	}
	// both are normalized collation documents (nil: the simple one)
	if !bytes.Equal(v.collation, coll) {
		orEmpty := func(d bson.Raw) bson.Raw {
			if d == nil {
				return bson.Raw{5, 0, 0, 0, 0}
			}
			return d
		}
		return mongoerr.New(mongoerr.NamespaceExists, "namespace %s.%s already exists, but with collation: %s rather than %s", db, v.name, orEmpty(v.collation), orEmpty(coll))
	}
	return nil
}

// stagesDoc is a pipeline as the document of its stages keyed "0", "1"...
// (a BSON array's body), as MongoDB compares and prints one.
func stagesDoc(pipeline []bson.Raw) bson.Raw {
	d := make(bson.D, len(pipeline))
	for i, st := range pipeline {
		d[i] = bson.E{Key: strconv.Itoa(i), Value: st}
	}
	return marshal(d)
}

// stagesArray is a view's pipeline as an array value.
func stagesArray(pipeline []bson.Raw) bson.A {
	arr := make(bson.A, len(pipeline))
	for i, st := range pipeline {
		arr[i] = st
	}
	return arr
}

// viewDoc is a view's system.views document.
func viewDoc(db, name, viewOn string, pipeline []bson.Raw, coll bson.Raw) bson.Raw {
	d := bson.D{{Key: "_id", Value: db + "." + name}, {Key: "viewOn", Value: viewOn}, {Key: "pipeline", Value: stagesArray(pipeline)}}
	if coll != nil {
		d = append(d, bson.E{Key: "collation", Value: coll})
	}
	return marshal(d)
}

// checkView applies MongoDB's rules to a view definition's viewOn; its
// pipeline is checked with the database's other views (validateView).
func (s *Service) checkView(r *Request, viewOn string) error {
	if viewOn == "" {
		return mongoerr.New(mongoerr.InvalidNamespace, "invalid namespace: viewOn must not be empty")
	}
	return engine.ValidateCollName(r.DB, viewOn)
}

// viewPipelineError is what MongoDB's view_catalog_helpers::validatePipeline
// finds wrong with view db.name's pipeline on viewOn: a pipeline that does
// not parse (parsed, not optimized: a constant subexpression that fails
// fails the view's reads, not its definition); a stage writing to disk
// ($out, $merge: its location counts the stages MongoDB parses, two for
// each $bucket, $sortByCount and $count before it); a $changeStream.
func viewPipelineError(db, name, viewOn string, pipeline []bson.Raw) error {
	if len(pipeline) > 0 && Name(pipeline[0]) == "$changeStream" {
		return mongoerr.New(mongoerr.OptionNotSupportedOnView, "$changeStream cannot be used in a view definition")
	}
	if _, err := aggregate.Parse(pipeline, aggregate.Options{DB: db, Coll: viewOn, Unoptimized: true}); err != nil {
		return err
	}
	location := 0
	for _, st := range pipeline {
		switch n := Name(st); n {
		case "$out", "$merge":
			return mongoerr.New(mongoerr.OptionNotSupportedOnView, "The aggregation stage %s in location %d of the pipeline cannot be used in the view definition of %s.%s because it writes to disk", n, location, db, name)
		case "$bucket", "$sortByCount", "$count":
			location++
		}
		location++
	}
	return nil
}

// modifyView runs collMod's viewOn and pipeline on view v, which keeps its
// collation.
func (s *Service) modifyView(r *Request, v *viewDef, viewOn string, pipeline []bson.Raw) error {
	name := v.name
	if err := s.checkView(r, viewOn); err != nil {
		return err
	}
	if err := s.validateView(r, &viewDef{name: name, viewOn: viewOn, pipeline: pipeline, collation: v.collation}); err != nil {
		return err
	}
	// MongoDB reloads its view catalog with the modified definition
	// (CollectionCatalog::_createOrUpdateView) and fails the collMod when
	// the reload does
	if err := bucketsViewError(name, viewOn); err != nil {
		return err
	}
	key := marshal(bson.D{{Key: "_id", Value: r.DB + "." + name}})
	_, err := s.Engine.Update(r.DB, engine.ViewsCollection, engine.UpdateSpec{Filter: key, Update: viewDoc(r.DB, name, viewOn, pipeline, v.collation), WriteOptions: engine.WriteOptions{Txn: r.Txn, Journal: true, Ctx: r.Ctx}})
	return err
}

// dropView removes a view's definition; it reports whether db.name was one.
func (s *Service) dropView(r *Request, name string) (bool, error) {
	v, err := s.lookupView(r, r.DB, name)
	if err != nil || v == nil {
		return false, err
	}
	key := marshal(bson.D{{Key: "_id", Value: r.DB + "." + name}})
	_, err = s.Engine.Delete(r.DB, engine.ViewsCollection, key, 1, bson.RawValue{}, engine.WriteOptions{Txn: r.Txn, Journal: true, Ctx: r.Ctx})
	return true, err
}

// hasViewDoc reports whether system.views holds a definition of
// r.DB.name, whether or not the view catalog would load it.
func (s *Service) hasViewDoc(r *Request, name string) bool {
	if s.Engine.CollectionIn(r.Txn, r.DB, engine.ViewsCollection) == nil {
		return false
	}
	key := marshal(bson.D{{Key: "_id", Value: r.DB + "." + name}})
	doc, err := findOne(s.Engine, r.DB, engine.ViewsCollection, engine.FindOptions{Filter: key, Txn: r.Txn, Ctx: engine.WithOpStats(r.Ctx, nil)})
	return doc != nil && err == nil
}

// views lists db's views.
func (s *Service) views(r *Request, db string) ([]*viewDef, error) {
	return s.readViews(r, db, "", r.Ctx)
}

// readViews reads db's views from system.views with ctx, all of them or,
// when only is not empty, the one of that name. It checks every definition
// either way: one MongoDB's view catalog would not load (validViewDoc)
// fails the read with InvalidViewDefinition.
func (s *Service) readViews(r *Request, db, only string, ctx context.Context) ([]*viewDef, error) {
	if s.Engine.CollectionIn(r.Txn, db, engine.ViewsCollection) == nil {
		return nil, nil
	}
	cur, err := s.Engine.Find(db, engine.ViewsCollection, engine.FindOptions{Txn: r.Txn, Ctx: ctx})
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	var out []*viewDef
	wanted := db + "." + only
	for {
		doc, err := cur.Next()
		if doc == nil || err != nil {
			return out, err
		}
		if !s.viewDocs.valid(db, doc) {
			return nil, invalidViewCatalog()
		}
		if id, _ := doc.Lookup("_id").StringValueOK(); only == "" || id == wanted {
			out = append(out, parseViewDoc(db, bson.Raw(slices.Clone(doc))))
		}
	}
}

// validViewDoc is whether a system.views document defines a view MongoDB
// loads into its view catalog (DurableViewCatalogImpl's
// _validateViewDefinition, then ViewDefinition's stages): no fields but
// _id, viewOn, pipeline, collation and timeseries; an _id naming a valid
// collection of db; viewOn a valid collection name; pipeline an array of
// documents; collation and timeseries documents when present, the
// collation one that parses; a viewOn naming a buckets collection only
// for its time series collection's view (ViewsForDatabase::_insert). One
// that does not makes the database's views unusable (InvalidViewDefinition)
// until it is removed.
func validViewDoc(db string, doc bson.Raw) bool {
	elems, err := doc.Elements()
	if err != nil {
		return false
	}
	for _, e := range elems {
		switch e.Key() {
		case "_id", "viewOn", "pipeline", "collation", "timeseries":
		default:
			return false
		}
	}
	validColl := func(c string) bool { return c != "" && c[0] != '.' && !strings.ContainsRune(c, 0) }
	id, _ := doc.Lookup("_id").StringValueOK()
	idDB, idColl, ok := strings.Cut(id, ".")
	viewOn, _ := doc.Lookup("viewOn").StringValueOK()
	if !ok || idDB != db || !validColl(idColl) || !validColl(viewOn) {
		return false
	}
	stages, ok := doc.Lookup("pipeline").ArrayOK()
	if !ok {
		return false
	}
	vals, err := stages.Values()
	if err != nil {
		return false
	}
	for _, st := range vals {
		if st.Type != bson.TypeEmbeddedDocument {
			return false
		}
	}
	for _, f := range []string{"collation", "timeseries"} {
		if v := doc.Lookup(f); v.Type != 0 && v.Type != bson.TypeEmbeddedDocument {
			return false
		}
	}
	// the collation must parse (ViewsForDatabase::_insert's
	// parseCollator; an empty one is the simple collation)
	if spec, ok := doc.Lookup("collation").DocumentOK(); ok && rawdoc.Len(spec) > 0 {
		if _, err := collation.Parse(spec); err != nil && !mongoerr.Is(err, mongoerr.NotImplemented) {
			return false
		}
	}
	return bucketsViewError(idColl, viewOn) == nil
}

// bucketsViewError is MongoDB's error for a view name on viewOn when
// viewOn is a buckets collection other than name's own: only a time series
// collection's view reads its buckets (ViewsForDatabase::_insert, which
// the view catalog runs for each definition it loads or writes).
func bucketsViewError(name, viewOn string) error {
	if strings.HasPrefix(viewOn, timeseries.BucketsPrefix) && viewOn != timeseries.BucketsPrefix+name {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid view: cannot define a view over a system.buckets namespace except by creating a time-series collection")
	}
	return nil
}

// viewInfo is a view as listCollections describes it.
func viewInfo(v *viewDef, nameOnly bool) bson.D {
	if nameOnly {
		return bson.D{{Key: "name", Value: v.name}, {Key: "type", Value: "view"}}
	}
	opts := bson.D{{Key: "viewOn", Value: v.viewOn}, {Key: "pipeline", Value: stagesArray(v.pipeline)}}
	if v.collation != nil {
		opts = append(opts, bson.E{Key: "collation", Value: v.collation})
	}
	return bson.D{
		{Key: "name", Value: v.name},
		{Key: "type", Value: "view"},
		{Key: "options", Value: opts},
		{Key: "info", Value: bson.D{{Key: "readOnly", Value: true}}},
	}
}

// aggregateView runs {aggregate: view, pipeline: stages, cursor, ...more}
// for a find, count or distinct on a view, as MongoDB runs them; more are
// the find's options that aggregate takes too.
func (s *Service) aggregateView(r *Request, view string, stages bson.A, more bson.D) (bson.Raw, error) {
	cmd := append(bson.D{{Key: "aggregate", Value: view}, {Key: "pipeline", Value: stages}}, more...)
	raw := marshal(append(cmd, bson.E{Key: "$db", Value: r.DB}))
	args, err := parseCommand(raw, aggregateSpec)
	if err != nil {
		return nil, err
	}
	sub := *r
	sub.Cmd, sub.args = raw, args
	reply, err := aggregateCmd(s, &sub)
	r.Scratch = sub.Scratch
	return reply, err
}

// findView runs a find on a view as an aggregation: the view's pipeline,
// then $match, $sort, $skip, $limit and $project of the find.
func (s *Service) findView(r *Request, view string, a findArgs) (bson.Raw, error) {
	stages, more, err := findViewAggregate(&r.args, a)
	if err != nil {
		return nil, err
	}
	return s.aggregateView(r, view, stages, more)
}

// findViewAggregate is the aggregation a find on a view runs, after the
// view's pipeline: its stages and the aggregate's other fields; c are the
// find's fields.
func findViewAggregate(c *cmdArgs, a findArgs) (bson.A, bson.D, error) {
	// The find options an aggregate has no counterpart for, refused in
	// the order MongoDB's asAggregationCommand refuses them; singleBatch is
	// taken with a limit of 1 (a findOne), which the aggregate's cursor
	// never outlives.
	notSupported := func(option string) error {
		return mongoerr.New(mongoerr.InvalidPipelineOperator, "Option %s not supported in aggregation.", option)
	}
	switch {
	case rawdoc.Len(a.Min) > 0:
		return nil, nil, notSupported("min")
	case rawdoc.Len(a.Max) > 0:
		return nil, nil, notSupported("max")
	case a.ReturnKey:
		return nil, nil, notSupported("returnKey")
	case a.ShowRecordID:
		return nil, nil, notSupported("showRecordId")
	case a.tailable:
		return nil, nil, mongoerr.New(mongoerr.InvalidPipelineOperator, "Tailable cursors are not supported in aggregation.")
	case a.noTimeout:
		return nil, nil, notSupported("noCursorTimeout")
	case c.bool("allowPartialResults"):
		return nil, nil, notSupported("allowPartialResults")
	case a.Sort.Lookup("$natural").Type != 0:
		return nil, nil, mongoerr.New(mongoerr.InvalidPipelineOperator, "Sort option $natural not supported in aggregation.")
	case a.single && a.Limit != 1:
		return nil, nil, notSupported("singleBatch")
	case c.bool("readOnce"):
		return nil, nil, notSupported("readOnce")
	case a.ResumeToken:
		return nil, nil, notSupported("$_requestResumeToken")
	case rawdoc.Len(c.doc("$_resumeAfter")) > 0:
		return nil, nil, notSupported("$_resumeAfter")
	}
	stages := queryStages(a.FindOptions)
	if len(a.Projection) > 5 {
		stages = append(stages, bson.D{{Key: "$project", Value: a.Projection}})
	}
	cursor := bson.D{}
	if a.batchSize != noBatchSize {
		cursor = bson.D{{Key: "batchSize", Value: a.batchSize}}
	}
	more := bson.D{{Key: "cursor", Value: cursor}}
	for _, f := range [...]string{"hint", "collation", "let", "allowDiskUse"} {
		if v := c.value(f); v.Type != 0 {
			more = append(more, bson.E{Key: f, Value: v})
		}
	}
	return stages, more, nil
}

// countView runs a count on a view: the number of documents its
// aggregation yields after the count's query, skip and limit.
func (s *Service) countView(r *Request, view string, o engine.FindOptions) (bson.Raw, error) {
	first, err := s.viewResult(r, view, countViewStages(o), viewResultFields(&r.args))
	if err != nil {
		return nil, err
	}
	n, _ := first.Lookup("n").AsInt64OK()
	return marshal(bson.D{{Key: "n", Value: int32(n)}}), nil
}

// countViewStages are the stages a count on a view runs after the view's.
func countViewStages(o engine.FindOptions) bson.A {
	return append(queryStages(o), bson.D{{Key: "$count", Value: "n"}})
}

// distinctViewStages are the stages a distinct of key on a view runs
// after the view's, as MongoDB's ParsedDistinct::asAggregationCommand
// builds them: each document replaced by the values at key (read as a
// distinct on a collection reads them), unwound, then gathered.
func distinctViewStages(key string, o engine.FindOptions) bson.A {
	const unwound = "_internalUnwoundArray"
	return append(queryStages(engine.FindOptions{Filter: o.Filter}),
		bson.D{{Key: "$replaceRoot", Value: bson.D{{Key: "newRoot", Value: bson.D{{Key: unwound, Value: bson.D{{Key: "$_internalFindAllValuesAtPath", Value: key}}}}}}}},
		bson.D{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$" + unwound}, {Key: "preserveNullAndEmptyArrays", Value: true}}}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "distinct", Value: bson.D{{Key: "$addToSet", Value: "$" + unwound}}}}}})
}

// distinctView runs a distinct on a view: the values at key in the
// documents its aggregation yields after the query.
func (s *Service) distinctView(r *Request, view, key string, o engine.FindOptions) (bson.Raw, error) {
	first, err := s.viewResult(r, view, distinctViewStages(key, o), viewResultFields(&r.args))
	if err != nil {
		return nil, err
	}
	values := first.Lookup("distinct")
	if values.Type != bson.TypeArray {
		values = bson.RawValue{Type: bson.TypeArray, Value: bsoncore.NewArrayBuilder().Build()}
	}
	return marshal(withAtClusterTime(r, bson.D{{Key: "values", Value: values}})), nil
}

// viewResult is the first document of an aggregation on a view that
// yields at most one (nil for none).
func (s *Service) viewResult(r *Request, view string, stages bson.A, more bson.D) (bson.Raw, error) {
	reply, err := s.aggregateView(r, view, stages, more)
	if err != nil {
		return nil, err
	}
	first, _ := reply.Lookup("cursor", "firstBatch", "0").DocumentOK()
	return bson.Raw(slices.Clone(first)), nil
}

// viewResultFields are the aggregate fields of a count or distinct on a
// view with fields c: a cursor, its collation, and its hint, which
// MongoDB's countCommandAsAggregationCommand and (7.1's, whose distinct
// takes a hint) ParsedDistinct::asAggregationCommand hand to the
// aggregation, so that it picks the index of the collection under the
// view (a bad hint refused, a sparse one's documents taken as they are).
func viewResultFields(c *cmdArgs) bson.D {
	more := bson.D{{Key: "cursor", Value: bson.D{}}}
	for _, f := range [...]string{"collation", "hint"} {
		if v := c.value(f); v.Type != 0 {
			more = append(more, bson.E{Key: f, Value: v})
		}
	}
	return more
}

// queryStages are the stages of a find's or count's filter, sort, skip and
// limit, in the order a find applies them.
func queryStages(o engine.FindOptions) bson.A {
	stages := bson.A{} // an empty pipeline, not a missing one
	if len(o.Filter) > 5 {
		stages = append(stages, bson.D{{Key: "$match", Value: o.Filter}})
	}
	if len(o.Sort) > 5 {
		stages = append(stages, bson.D{{Key: "$sort", Value: o.Sort}})
	}
	if o.Skip > 0 {
		stages = append(stages, bson.D{{Key: "$skip", Value: o.Skip}})
	}
	if o.Limit > 0 {
		stages = append(stages, bson.D{{Key: "$limit", Value: o.Limit}})
	}
	return stages
}

// viewDocMemo remembers validViewDoc's answers by database and definition:
// an answer depends on nothing else, and every lookup of a view reads all
// of its database's definitions. It forgets a database's answers past
// viewDocMemoSize of them.
type viewDocMemo struct {
	mu    sync.Mutex
	known map[string]map[string]bool // database -> definition -> valid
}

const viewDocMemoSize = 1 << 12

// valid is validViewDoc(db, doc), remembered.
func (m *viewDocMemo) valid(db string, doc bson.Raw) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	byDoc := m.known[db]
	if ok, seen := byDoc[string(doc)]; seen {
		return ok
	}
	if byDoc == nil || len(byDoc) >= viewDocMemoSize {
		if m.known == nil {
			m.known = map[string]map[string]bool{}
		}
		byDoc = map[string]bool{}
		m.known[db] = byDoc
	}
	ok := validViewDoc(db, doc)
	byDoc[string(doc)] = ok
	return ok
}
