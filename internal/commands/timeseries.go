package commands

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/fts"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

// Time series collections are kept as MongoDB keeps them: the
// measurements in buckets (timeseries.Bucket) in the collection
// system.buckets.<name>, which holds the options, and <name> a view of it
// whose pipeline starts with $_internalUnpackBucket. Reads go through the
// view, a leading $match also filtering the buckets first
// (timeseries.BucketFilter); inserts fill buckets; deletes rewrite the
// buckets holding matches. Updates are not supported.
// https://www.mongodb.com/docs/v7.0/core/timeseries-collections/

// tsColl is a time series collection.
type tsColl struct {
	name    string
	buckets string
	o       timeseries.Options
}

// timeseriesOf returns db.name when it is a time series collection (a
// view of a buckets collection), else nil.
func (s *Service) timeseriesOf(r *Request, db, name string) (*tsColl, error) {
	v, err := s.lookupView(r, db, name)
	if err != nil {
		return nil, err
	}
	return s.tsOfView(r, db, v)
}

// outTimeseries is engineEnv.timeseries for the commands of r: whether
// db.coll is a view, and the time series collection it is.
func (s *Service) outTimeseries(r *Request) func(db, coll string) (*tsColl, bool, error) {
	return func(db, coll string) (*tsColl, bool, error) {
		v, err := s.lookupView(r, db, coll)
		if err != nil || v == nil {
			return nil, false, err
		}
		ts, err := s.tsOfView(r, db, v)
		return ts, true, err
	}
}

// tsOfView returns the time series collection view v (nil: none) is, nil
// for another view: its buckets collection holds the options.
func (s *Service) tsOfView(r *Request, db string, v *viewDef) (*tsColl, error) {
	if v == nil || len(v.pipeline) == 0 || Name(v.pipeline[0]) != timeseries.UnpackStage {
		return nil, nil
	}
	c := s.Engine.CollectionIn(r.Txn, db, v.viewOn)
	if c == nil || c.Options.Timeseries == nil {
		return nil, nil
	}
	cur := c.CurrentOptions()
	o, err := timeseries.Parse(cur.Timeseries, "create.timeseries")
	if err != nil {
		return nil, err
	}
	o.Collator, o.OneSchema = c.DefaultCollator(), !cur.MixedSchema
	return &tsColl{name: v.name, buckets: v.viewOn, o: o}, nil
}

// viewTarget returns the time series collection db.name is, nil for a
// collection, and fails with CommandNotSupportedOnView for another view:
// the check of the writes and index commands time series collections
// take.
func (s *Service) viewTarget(r *Request, db, name string) (*tsColl, error) {
	v, err := s.lookupView(r, db, name)
	if err != nil || v == nil {
		return nil, err
	}
	ts, err := s.tsOfView(r, db, v)
	if err == nil && ts == nil {
		err = viewError(db, name)
	}
	return ts, err
}

// timeseriesCreateOptions are the options create takes with timeseries,
// MongoDB's timeseries::kAllowedCollectionCreationOptions (temp, which
// Folio refuses, aside).
var timeseriesCreateOptions = map[string]bool{"timeseries": true, "storageEngine": true, "indexOptionDefaults": true, "collation": true, "expireAfterSeconds": true, "temp": true}

// checkTimeseriesCreateOptions refuses, as MongoDB's create command does
// before anything else of a create with timeseries, any option but those
// (InvalidOptions): capped unless false, and validator and clusteredIndex
// unless name is a buckets collection's (a restore of one).
func checkTimeseriesCreateOptions(r *Request, name string) error {
	alone := strings.HasPrefix(name, timeseries.BucketsPrefix)
	for _, f := range r.args.present() {
		switch {
		case timeseriesCreateOptions[f], f == "capped" && !r.args.bool("capped"), alone && (f == "validator" || f == "clusteredIndex"):
			continue
		}
		return mongoerr.New(mongoerr.InvalidOptions, "%s.%s: 'timeseries' is not allowed with '%s'", r.DB, name, f)
	}
	return nil
}

// createTimeseries runs create with timeseries: the buckets collection,
// then the view. Named system.buckets.<name>, as an oplog entry names it,
// it creates the buckets collection alone, with the validator it is given
// and clusteredIndex: true (parseClusteredIndex), as MongoDB does.
func (s *Service) createTimeseries(r *Request, name string, opts engine.CollectionOptions) error {
	o, err := timeseries.Parse(r.args.doc("timeseries"), "create.timeseries")
	if err != nil {
		return err
	}
	alone := strings.HasPrefix(name, timeseries.BucketsPrefix)
	switch {
	case r.Txn != nil:
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create a time-series collection in a multi-document transaction.")
	case alone && !r.args.has("clusteredIndex"):
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not create a time series buckets collection that is not clustered (create of %s.%s without clusteredIndex: true)", r.DB, name)
	}
	if alone {
		opts.Timeseries = marshal(o.Document())
		if r.createUUID != nil {
			return s.Engine.CreateCollectionWithUUID(r.DB, name, opts, *r.createUUID)
		}
		return s.Engine.CreateCollection(r.DB, name, opts)
	}
	if existing, err := s.timeseriesOf(r, r.DB, name); err != nil || existing != nil {
		if c := s.Engine.CollectionIn(r.Txn, r.DB, existing.buckets); err == nil &&
			(c == nil || !bytes.Equal(marshal(tsListedOptions(c.CurrentOptions())), marshal(tsListedOptions(bucketOptions(o, opts))))) {
			err = mongoerr.New(mongoerr.NamespaceExists, "A timeseries collection already exists. NS: %s.%s", r.DB, name)
		}
		return err
	}
	if s.Engine.Collection(r.DB, name) != nil {
		return mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", r.DB, name)
	}
	if v, err := s.lookupView(r, r.DB, name); err != nil || v != nil {
		if err == nil {
			err = mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", r.DB, name)
		}
		return err
	}
	buckets := timeseries.BucketsPrefix + name
	if err := s.Engine.CreateCollection(r.DB, buckets, bucketOptions(o, opts)); err != nil {
		return err
	}
	if err := createDefaultTimeseriesIndex(s.Engine, r.DB, buckets, o); err != nil {
		return err
	}
	doc := viewDoc(r.DB, name, buckets, unpackPipeline(o), nil)
	_, werrs, err := s.Engine.Insert(r.DB, engine.ViewsCollection, []bson.Raw{doc}, true, engine.WriteOptions{Journal: true, Ctx: r.Ctx})
	if err == nil && len(werrs) > 0 {
		err = werrs[0].Err
	}
	return err
}

// bucketOptions are the options of the collection of a time series
// collection's buckets, created with opts: its timeseries options as
// listCollections shows them, its expiry, its collation, and MongoDB's
// validator of bucket documents (timeseries.Validator), so that a write
// of a malformed bucket straight to the buckets collection (an
// application's, mongorestore's) fails with DocumentValidationFailure.
func bucketOptions(o timeseries.Options, opts engine.CollectionOptions) engine.CollectionOptions {
	return engine.CollectionOptions{Timeseries: marshal(o.Document()), ExpireAfterSeconds: opts.ExpireAfterSeconds, Collation: opts.Collation,
		StorageEngine: opts.StorageEngine, IndexStorageEngine: opts.IndexStorageEngine, Validator: timeseries.Validator(o.TimeField)}
}

// tsListedOptions are the options of a time series collection whose
// buckets have options b, as listCollections shows them and create
// compares them with those asked for: MongoDB's buckets' options (in
// their order) restricted to those create takes with timeseries.
func tsListedOptions(b engine.CollectionOptions) bson.D {
	var d bson.D
	for _, e := range b.Doc() {
		if timeseriesCreateOptions[e.Key] {
			d = append(d, e)
		}
	}
	return d
}

// createDefaultTimeseriesIndex creates the index MongoDB 6.3 and later
// give a new time series collection with a metaField: {<metaField>: 1,
// <timeField>: 1}, which reads the buckets of one meta value in a time
// range.
func createDefaultTimeseriesIndex(e *engine.Engine, db, buckets string, o timeseries.Options) error {
	if o.MetaField == "" {
		return nil
	}
	key := bson.D{{Key: o.MetaField, Value: 1}, {Key: o.TimeField, Value: 1}}
	spec, err := parseIndexSpec(marshal(bson.D{{Key: "key", Value: key}, {Key: "name", Value: o.MetaField + "_1_" + o.TimeField + "_1"}}), false, false, false)
	if err == nil {
		err = (&tsColl{buckets: buckets, o: o}).bucketIndex(&spec, nil)
	}
	if err == nil {
		_, err = e.CreateIndexes(db, buckets, []engine.IndexSpec{spec}, nil)
	}
	return err
}

// unpackPipeline is the pipeline of the view of a time series collection
// with options o.
func unpackPipeline(o timeseries.Options) []bson.Raw {
	return []bson.Raw{marshal(bson.D{{Key: timeseries.UnpackStage, Value: o.UnpackSpec()}})}
}

// collModTimeseries applies collMod's timeseries document (granularity or
// bucketing, timeseries.Modify) to ts: the buckets collection's options,
// then the view's unpacking stage, whose bucketMaxSpanSeconds bounds the
// time ranges of the buckets a query reads.
func (s *Service) collModTimeseries(r *Request, ts *tsColl, mod bson.Raw) error {
	next, changed, err := timeseries.Modify(ts.o, mod)
	if err != nil || !changed {
		return err
	}
	if err := s.Engine.ModifyValidation(r.DB, ts.buckets, engine.ValidationChange{Timeseries: marshal(next.Document())}); err != nil {
		return err
	}
	key := marshal(bson.D{{Key: "_id", Value: r.DB + "." + ts.name}})
	_, err = s.Engine.Update(r.DB, engine.ViewsCollection, engine.UpdateSpec{Filter: key, Update: viewDoc(r.DB, ts.name, ts.buckets, unpackPipeline(next), nil),
		WriteOptions: engine.WriteOptions{Journal: true, Ctx: r.Ctx}})
	return err
}

// tsInfo is a time series collection as listCollections describes it.
func (s *Service) tsInfo(r *Request, v *viewDef, nameOnly bool) (bson.D, bool) {
	ts, err := s.tsOfView(r, r.DB, v)
	if err != nil || ts == nil {
		return nil, false
	}
	if nameOnly {
		return bson.D{{Key: "name", Value: v.name}, {Key: "type", Value: "timeseries"}}, true
	}
	c := s.Engine.CollectionIn(r.Txn, r.DB, ts.buckets)
	if c == nil {
		return nil, false
	}
	opts := tsListedOptions(c.CurrentOptions())
	return bson.D{
		{Key: "name", Value: v.name},
		{Key: "type", Value: "timeseries"},
		{Key: "options", Value: opts},
		{Key: "info", Value: bson.D{{Key: "readOnly", Value: false}}},
	}, true
}

// bucketIndex makes spec, asked for on ts's measurements as given (the
// specification as sent, nil for the collection's default index), an
// index of its buckets (timeseries.BucketIndexKey), keeping the name the
// user's key gives it. Unique and text indexes are refused, and so is
// the sparse option (present, whatever its value) on a key with a
// measurement field, as MongoDB's makeTimeseriesCreateIndexesCommand
// allows it only on the time and meta fields. A partial filter is
// translated to the buckets (partialFilter), the specification as given
// kept as the index's originalSpec for listIndexes; a TTL index needs one
// (ttlIndex).
func (ts *tsColl) bucketIndex(spec *engine.IndexSpec, given bson.Raw) error {
	if spec.Unique {
		return mongoerr.New(mongoerr.InvalidOptions, "Unique indexes are not supported on time-series collections")
	}
	measured := ""
	if spec.Partial != nil {
		var err error
		if measured, err = ts.partialFilter(spec, given); err != nil {
			return err
		}
	}
	if spec.ExpireAfter >= 0 {
		return ts.ttlIndex(spec, measured)
	}
	switch {
	case measured != "":
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not build partial indexes of time series collections whose partialFilterExpression reads the time field or a measurement field (%s)", measured)
	case given.Lookup("sparse").Type != 0 && timeseries.HasMeasurementKey(ts.o, spec.Key):
		return mongoerr.New(mongoerr.InvalidOptions, "Sparse indexes are not supported on time-series measurements")
	}
	// A text index is refused first, then a key with no buckets' form is
	// MongoDB's CannotCreateIndex (its createIndexes conversion wraps the
	// mapping's status). A key on a measurement field indexes its
	// buckets' control.min and control.max of it, which the bucket filter
	// bounds (timeseries.BucketFilter); a 2dsphere key on one, the points
	// of its column (2dsphere_bucket).
	if fts.IsTextKey(spec.Key) {
		return mongoerr.New(mongoerr.InvalidOptions, "Text indexes are not supported on time-series collections")
	}
	key, err := timeseries.BucketIndexKey(ts.o, spec.Key)
	if err != nil {
		e := mongoerr.As(err)
		return mongoerr.New(mongoerr.CannotCreateIndex, "%s: %s", e.Code.Name(), e.Msg)
	}
	spec.Key = key
	return nil
}

// partialFilter translates spec's partial filter, on ts's measurements, to
// its buckets, as MongoDB's makeTimeseriesCreateIndexesCommand does: a
// collation given with it is IndexOptionsConflict (the filter's
// comparisons follow the collection's default), the translation's
// refusals come first (timeseries.PartialFilter), then the translated
// filter is checked as any partial filter is (CheckPartial), and the
// specification as given, with validateIndexSpec's default version, is
// kept as originalSpec. measured is the time or measurement path the
// filter reads, which Folio does not translate: spec is then unchanged.
func (ts *tsColl) partialFilter(spec *engine.IndexSpec, given bson.Raw) (measured string, err error) {
	if spec.Collation != nil {
		return "", mongoerr.New(mongoerr.IndexOptionsConflict, "On a time-series collection, partialFilterExpression and collation arguments are incompatible")
	}
	bucket, measured, err := timeseries.PartialFilter(ts.o, spec.Partial)
	if err != nil || measured != "" {
		return measured, err
	}
	f, err := query.Compile(bucket)
	if err == nil {
		err = f.CheckPartial()
	}
	if err != nil {
		return "", mongoerr.AddContext(err, "Error in specification "+values.ShellDoc(fixedIndexSpec(given)))
	}
	spec.Partial = bucket
	spec.OriginalSpec = fixedIndexSpec(given)
	return "", nil
}

// ttlIndex makes spec, a TTL index of ts's measurements, an index of its
// buckets with MongoDB 7.0's rules (makeTimeseriesCreateIndexesCommand,
// convertToTTLTimeField): it needs a partial filter on the metaField
// alone (InvalidOptions; measured is the other path the filter reads),
// one key field (CannotCreateIndex), and that field the timeField
// (InvalidOptions), whose key is control.min.<timeField> in its
// direction. The TTL monitor expires the buckets the index holds
// (engine.ExpireTTL).
func (ts *tsColl) ttlIndex(spec *engine.IndexSpec, measured string) error {
	elems, _ := spec.Key.Elements()
	switch {
	case spec.Partial == nil || measured != "":
		return mongoerr.New(mongoerr.InvalidOptions, "TTL indexes on time-series collections require a partialFilterExpression on the metaField")
	case len(elems) != 1:
		return mongoerr.New(mongoerr.CannotCreateIndex, "TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: %s", values.ShellDoc(spec.Key))
	case elems[0].Key() != ts.o.TimeField:
		return mongoerr.New(mongoerr.InvalidOptions, "TTL indexes on non-time fields are not supported on time-series collections")
	}
	// BucketIndexKey's checks of the key (a number on the time field)
	// come first, as MongoDB maps the key before the TTL rules.
	if _, err := timeseries.BucketIndexKey(ts.o, spec.Key); err != nil {
		e := mongoerr.As(err)
		return mongoerr.New(mongoerr.CannotCreateIndex, "%s: %s", e.Code.Name(), e.Msg)
	}
	key, err := bson.Marshal(bson.D{{Key: "control.min." + ts.o.TimeField, Value: elems[0].Value()}})
	if err != nil {
		return err
	}
	spec.Key = key
	return nil
}

// collModIndex checks collMod's change of an index of ts and returns the
// buckets' key of its keyPattern (nil when it names the index), as
// MongoDB's collMod on a time series collection does: a TTL refused
// (InvalidOptions), a key pattern no index of the measurements has
// IndexNotFound.
func (ts *tsColl) collModIndex(change engine.IndexChange, keyPattern bson.Raw) (bson.Raw, error) {
	switch {
	case change.ExpireAfter != nil:
		return nil, mongoerr.New(mongoerr.InvalidOptions, "TTL indexes are not supported for time-series collections. Please refer to the documentation and use the top-level 'expireAfterSeconds' option instead")
	case change.Unique || change.PrepareUnique != nil:
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not make an index of a time series collection unique (collMod index.unique, index.prepareUnique)")
	case keyPattern == nil:
		return nil, nil
	}
	key, err := timeseries.BucketIndexKey(ts.o, keyPattern)
	if err != nil {
		return nil, mongoerr.New(mongoerr.IndexNotFound, "cannot find index %s for ns %s", keyPattern, ts.name)
	}
	return key, nil
}

// bucketHint is a hint given on ts's measurements as its buckets read it,
// as MongoDB's writes and reads on a time series view rewrite one
// (timeseries::isHintIndexKey, createBucketsIndexSpecFromTimeseriesIndexSpec):
// an index key is the buckets' key of it; an index name, $natural, or a
// key with no buckets' form stays as it is, which the planner fails with
// BadValue when no index of the buckets has it.
func (ts *tsColl) bucketHint(h bson.RawValue) bson.RawValue {
	if h.Type != bson.TypeEmbeddedDocument {
		return h
	}
	key, err := timeseries.BucketIndexKey(ts.o, h.Document())
	if err != nil {
		return h
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: key}
}

// userIndex is a buckets' index spec as listIndexes shows it on the time
// series collection: its key on the measurements. ok is false for an
// index with no key on the measurements (one made on the buckets
// directly), which MongoDB's createTimeseriesIndexesFromBucketsIndexes
// leaves out.
func (ts *tsColl) userIndex(spec bson.Raw) (_ bson.Raw, ok bool) {
	if orig, has := spec.Lookup("originalSpec").DocumentOK(); has {
		return originalIndex(spec, orig), true
	}
	key, ok := timeseries.UserIndexKey(ts.o, spec.Lookup("key").Document())
	if !ok {
		return nil, false
	}
	elems, _ := spec.Elements()
	var d bson.D
	for _, el := range elems {
		if el.Key() == "key" {
			d = append(d, bson.E{Key: "key", Value: key})
			continue
		}
		d = append(d, bson.E{Key: el.Key(), Value: el.Value()})
	}
	return marshal(d), true
}

// originalIndex is the index of a time series collection's buckets spec
// that keeps the user's specification orig, as listIndexes shows it:
// orig, as MongoDB's createTimeseriesIndexFromBucketsIndex returns it,
// with the index's collation (the collection's default, which MongoDB
// adds to the original specification it stores) and its hidden state as
// collMod left it.
func originalIndex(spec, orig bson.Raw) bson.Raw {
	elems, _ := orig.Elements()
	d := make(bson.D, 0, len(elems)+2)
	for _, el := range elems {
		if el.Key() != "hidden" {
			d = append(d, bson.E{Key: el.Key(), Value: el.Value()})
		}
	}
	if c := spec.Lookup("collation"); c.Type != 0 && orig.Lookup("collation").Type == 0 {
		d = append(d, bson.E{Key: "collation", Value: c})
	}
	if h, _ := spec.Lookup("hidden").BooleanOK(); h {
		d = append(d, bson.E{Key: "hidden", Value: true})
	}
	return marshal(d)
}

// dropTimeseries drops a time series collection's buckets, after its
// view.
func (s *Service) dropTimeseries(r *Request, ts *tsColl) error {
	s.tsOpen.forget(r.DB + "." + ts.buckets)
	_, err := s.Engine.DropCollection(r.DB, ts.buckets)
	return err
}

// withBucketFilter puts, before a time series view's unpacking stage
// followed by a $match, a $match of the buckets that filter implies;
// oneSchema says the collection's buckets each hold one schema.
func withBucketFilter(stages []bson.Raw, oneSchema bool) []bson.Raw {
	if len(stages) < 2 || Name(stages[0]) != timeseries.UnpackStage || Name(stages[1]) != "$match" {
		return stages
	}
	if text, rest, ok := splitText(stages[1]); ok {
		// A $text condition reads no field: MongoDB's
		// splitMatchOnMetaAndRename moves it before the unpacking, where
		// it searches the buckets' text index (a time series collection
		// has none: IndexNotFound).
		after := append([]bson.Raw{stages[0]}, stages[2:]...)
		if rest != nil {
			after = append([]bson.Raw{stages[0], rest}, stages[2:]...)
		}
		return append([]bson.Raw{text}, withBucketFilter(after, oneSchema)...)
	}
	u, err := timeseries.ParseUnpackSpec(stages[0].Lookup(timeseries.UnpackStage).Document())
	if err != nil || len(u.Fields) > 0 || len(u.Computed) > 0 {
		// bounds of the buckets' columns say nothing of fields the
		// measurements leave out or take from elsewhere
		return stages
	}
	o := u.Options
	match, ok := stages[1].Lookup("$match").DocumentOK()
	if !ok {
		return stages
	}
	o.OneSchema = o.OneSchema || oneSchema
	f := timeseries.BucketFilter(o, match)
	if f == nil {
		return stages
	}
	return append([]bson.Raw{marshal(bson.D{{Key: "$match", Value: f}})}, stages...)
}

// splitText splits a $match stage whose filter has $text at its top level
// into a $match of the $text condition and a $match of the others (nil
// when there are none).
func splitText(match bson.Raw) (text, rest bson.Raw, ok bool) {
	filter, isDoc := match.Lookup("$match").DocumentOK()
	if !isDoc || filter.Lookup("$text").Type == 0 {
		return nil, nil, false
	}
	elems, _ := filter.Elements()
	var t, r bson.D
	for _, el := range elems {
		if el.Key() == "$text" {
			t = append(t, bson.E{Key: el.Key(), Value: el.Value()})
		} else {
			r = append(r, bson.E{Key: el.Key(), Value: el.Value()})
		}
	}
	text = marshal(bson.D{{Key: "$match", Value: t}})
	if len(r) > 0 {
		rest = marshal(bson.D{{Key: "$match", Value: r}})
	}
	return text, rest, true
}

// openBuckets remembers, per buckets collection and meta value, the
// bucket this server fills: a hint only, the bucket is read back before
// it is extended. Writes to one time series collection are serialized.
type openBuckets struct {
	mu    sync.Mutex
	colls map[string]*tsOpen
}

// tsOpen is one collection's open buckets, and what its inserts did to
// them.
type tsOpen struct {
	mu     sync.Mutex
	byMeta map[string]bson.ObjectID
	stats  tsExecStats
}

// tsExecStats count, since the server started or the collection was
// created, what inserts did to a time series collection's buckets: the
// execution statistics of MongoDB's bucket catalog, which collStats
// reports. Folio closes a bucket when it is full, a measurement falls
// outside its span or changes its schema, never for its size or memory
// pressure: those counts are zero.
type tsExecStats struct {
	bucketInserts, bucketUpdates   atomic.Int64
	openedDueToMetadata            atomic.Int64
	closedDueToCount               atomic.Int64
	closedDueToTimeForward         atomic.Int64
	closedDueToTimeBackward        atomic.Int64
	closedDueToSchemaChange        atomic.Int64
	commits, measurementsCommitted atomic.Int64
	waits                          atomic.Int64
}

// opened counts a bucket opened for a measurement that did not belong in
// the one its meta value had (why; OtherMeta: it had none).
func (st *tsExecStats) opened(why timeseries.Misfit) {
	switch why {
	case timeseries.OtherMeta:
		st.openedDueToMetadata.Add(1)
	case timeseries.Full:
		st.closedDueToCount.Add(1)
	case timeseries.TimeForward:
		st.closedDueToTimeForward.Add(1)
	case timeseries.TimeBackward:
		st.closedDueToTimeBackward.Add(1)
	case timeseries.SchemaChange:
		st.closedDueToSchemaChange.Add(1)
	}
}

// committed counts the write of p.
func (st *tsExecStats) committed(p *tsPending) {
	if p.isNew {
		st.bucketInserts.Add(1)
	} else {
		st.bucketUpdates.Add(1)
	}
	st.commits.Add(1)
	st.measurementsCommitted.Add(int64(p.added))
}

// doc is the statistics as collStats' timeseries section ends with them,
// in MongoDB's order.
func (st *tsExecStats) doc() bson.D {
	commits, measurements := st.commits.Load(), st.measurementsCommitted.Load()
	d := bson.D{
		{Key: "numBucketInserts", Value: number(st.bucketInserts.Load())},
		{Key: "numBucketUpdates", Value: number(st.bucketUpdates.Load())},
		{Key: "numBucketsOpenedDueToMetadata", Value: number(st.openedDueToMetadata.Load())},
		{Key: "numBucketsClosedDueToCount", Value: number(st.closedDueToCount.Load())},
		{Key: "numBucketsClosedDueToSchemaChange", Value: number(st.closedDueToSchemaChange.Load())},
		{Key: "numBucketsClosedDueToSize", Value: number(0)},
		{Key: "numBucketsClosedDueToTimeForward", Value: number(st.closedDueToTimeForward.Load())},
		{Key: "numBucketsClosedDueToTimeBackward", Value: number(st.closedDueToTimeBackward.Load())},
		{Key: "numBucketsClosedDueToMemoryThreshold", Value: number(0)},
		{Key: "numCommits", Value: number(commits)},
		{Key: "numWaits", Value: number(st.waits.Load())},
		{Key: "numMeasurementsCommitted", Value: number(measurements)},
	}
	if commits > 0 {
		d = append(d, bson.E{Key: "avgNumMeasurementsPerCommit", Value: number(measurements / commits)})
	}
	return d
}

func (ob *openBuckets) of(ns string) *tsOpen {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.colls == nil {
		ob.colls = map[string]*tsOpen{}
	}
	t := ob.colls[ns]
	if t == nil {
		t = &tsOpen{byMeta: map[string]bson.ObjectID{}}
		ob.colls[ns] = t
	}
	return t
}

// statsOf is the execution statistics of the time series collection whose
// buckets are ns (collStats' timeseries section).
func (ob *openBuckets) statsOf(ns string) bson.D {
	ob.mu.Lock()
	t := ob.colls[ns]
	ob.mu.Unlock()
	if t == nil {
		var none tsExecStats
		return none.doc()
	}
	return t.stats.doc()
}

func (ob *openBuckets) forget(ns string) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	delete(ob.colls, ns)
}

// metaKey identifies a meta value (its type and bytes).
func metaKey(v bson.RawValue) string { return string(append([]byte{byte(v.Type)}, v.Value...)) }

// insertTimeseries stores an insert's documents as measurements of ts:
// each goes into the open bucket of its meta value when its time falls
// in the bucket's span and the bucket has room, else into a new bucket.
// Each bucket is written once, recording the statements of its
// measurements for retries. Ordered inserts stop at the first bad
// measurement.
func (s *Service) insertTimeseries(r *Request, ts *tsColl, a batchArgs) (bson.Raw, error) {
	if r.Txn != nil {
		return nil, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot insert into a time-series collection in a multi-document transaction.")
	}
	open := s.tsOpen.of(r.DB + "." + ts.buckets)
	if !open.mu.TryLock() {
		open.stats.waits.Add(1) // behind another insert's writes
		open.mu.Lock()
	}
	defer open.mu.Unlock()
	var werrs []engine.WriteError
	var retried []int32
	n := 0
	fill := &bucketFill{
		o:     ts.o,
		stats: &open.stats,
		open: func(key string, doc bson.Raw, meta bson.RawValue, t time.Time) (*tsPending, timeseries.Misfit, error) {
			return s.openBucket(r, ts, open, key, doc, meta, t)
		},
		flush: func(p *tsPending) error {
			if err := mongoerr.Interruption(r.Ctx); err != nil {
				return err
			}
			wo := writeOptions(s, r, &r.args)
			wo.BypassValidation = true // a bucket built here has the validator's shape
			if r.retryable && len(p.stmts) > 0 {
				wo.Record = bucketRecorder{r.session.RecordStatements(p.stmts, insertResult), len(p.stmts)}
			}
			doc := p.b.Document(ts.o)
			var err error
			if p.isNew {
				var ws []engine.WriteError
				if _, ws, err = s.Engine.Insert(r.DB, ts.buckets, []bson.Raw{doc}, true, wo); err == nil && len(ws) > 0 {
					err = ws[0].Err
				}
			} else {
				_, err = s.Engine.Update(r.DB, ts.buckets, engine.UpdateSpec{Filter: marshal(bson.D{{Key: "_id", Value: p.b.ID}}), Update: doc, WriteOptions: wo})
			}
			if err == nil {
				open.stats.committed(p)
			}
			return err
		},
	}
	for i, doc := range a.docs {
		if r.retryable {
			if _, done := r.session.Executed(a.stmtIDs[i]); done {
				retried = append(retried, a.stmtIDs[i])
				continue
			}
		}
		t, meta, err := timeseries.Measurement(ts.o, doc)
		if err == nil {
			err = s.failPrimaryWrite(r)
		}
		if err != nil {
			werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.As(err)})
			if a.ordered {
				break
			}
			continue
		}
		p, err := fill.add(doc, t, meta)
		if err != nil {
			return nil, err
		}
		if r.retryable {
			p.stmts = append(p.stmts, a.stmtIDs[i])
		}
		n++
	}
	if err := fill.close(); err != nil {
		return nil, err
	}
	for _, p := range fill.order {
		open.byMeta[metaKey(p.b.Meta)] = p.b.ID
	}
	s.Docs.Inserted.Add(int64(n))
	r.op.noteInserted(n)
	return writeReply(int64(n+len(retried)), werrs, s.retriedField(retried)), nil
}

// bucketFill puts measurements into buckets: each into the bucket being
// filled for its meta value when it fits there, else into the one open
// returns (with why the collection's bucket for the meta value was not
// taken), after flush wrote the bucket it replaces. stats, when set,
// counts the buckets opened and why.
type bucketFill struct {
	o      timeseries.Options
	open   func(key string, doc bson.Raw, meta bson.RawValue, t time.Time) (*tsPending, timeseries.Misfit, error)
	flush  func(*tsPending) error
	stats  *tsExecStats
	byMeta map[string]*tsPending
	// order are the buckets being filled, in the order they were opened.
	order []*tsPending
}

// add puts doc, a measurement at t of meta (timeseries.Measurement),
// given an _id when it has none, into its bucket, which it returns.
func (f *bucketFill) add(doc bson.Raw, t time.Time, meta bson.RawValue) (*tsPending, error) {
	if _, err := doc.LookupErr("_id"); err != nil {
		doc = withID(doc)
	}
	if f.byMeta == nil {
		f.byMeta = map[string]*tsPending{}
	}
	key := metaKey(meta)
	p := f.byMeta[key]
	misfit := timeseries.OtherMeta
	if p != nil {
		misfit = p.b.Misfit(f.o, doc, meta, t)
	}
	if misfit != timeseries.Fits {
		if p != nil {
			if err := f.flush(p); err != nil {
				return nil, err
			}
			f.order = slices.DeleteFunc(f.order, func(q *tsPending) bool { return q == p })
		}
		// the collection's bucket for meta is p once flushed
		filled := p != nil
		var err error
		var why timeseries.Misfit
		if p, why, err = f.open(key, doc, meta, t); err != nil {
			return nil, err
		}
		if !filled {
			misfit = why
		}
		if f.stats != nil && p.isNew {
			f.stats.opened(misfit)
		}
		f.byMeta[key] = p
		f.order = append(f.order, p)
	}
	p.added++
	return p, p.b.Add(f.o, doc)
}

// close flushes the buckets being filled.
func (f *bucketFill) close() error {
	for _, p := range f.order {
		if err := f.flush(p); err != nil {
			return err
		}
	}
	return nil
}

// tsPending is a bucket an insert is filling: a new one, or one read
// back; stmts are the statements of its new measurements.
type tsPending struct {
	b     *timeseries.Bucket
	isNew bool
	stmts []int32
	added int // measurements added since it was opened
}

// openBucket returns the bucket doc, a measurement of meta at t, goes into: the
// collection's open bucket for meta, read back, when it fits, else a new
// one, with why the open bucket did not take it (OtherMeta: there was
// none).
func (s *Service) openBucket(r *Request, ts *tsColl, open *tsOpen, key string, m bson.Raw, meta bson.RawValue, t time.Time) (*tsPending, timeseries.Misfit, error) {
	misfit := timeseries.OtherMeta
	if id, ok := open.byMeta[key]; ok {
		doc, err := findOne(s.Engine, r.DB, ts.buckets, engine.FindOptions{Filter: marshal(bson.D{{Key: "_id", Value: id}}), Ctx: r.Ctx})
		if err != nil {
			return nil, 0, err
		}
		if doc != nil {
			b, err := timeseries.LoadBucket(ts.o, doc)
			if err != nil {
				return nil, 0, err
			}
			if misfit = b.Misfit(ts.o, m, meta, t); misfit == timeseries.Fits {
				return &tsPending{b: b}, misfit, nil
			}
		}
	}
	return &tsPending{b: timeseries.NewBucket(ts.o, meta, t), isNew: true}, misfit, nil
}

// deleteTimeseries deletes the measurements of ts matching filter, at
// most one with limit 1: each bucket that may hold a match
// (timeseries.BucketFilter) is unpacked and rewritten without its
// matches, or deleted when none is left. It returns how many it deleted.
// The buckets are read through the statement's hint (ts.bucketHint).
// The filter compares under the statement's collation (wo.Collation),
// else the collection's default, as any delete's does; the buckets are
// selected under it too.
func (s *Service) deleteTimeseries(r *Request, ts *tsColl, filter bson.Raw, limit int64, hint bson.RawValue, wo engine.WriteOptions) (int64, error) {
	if r.Txn != nil {
		return 0, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot delete from a time-series collection in a multi-document transaction.")
	}
	coll, err := engine.CommandCollator(s.Engine.Collection(r.DB, ts.buckets), wo.Collation)
	if err != nil {
		return 0, err
	}
	f, err := query.CompileCollated(filter, nil, coll)
	if err != nil {
		return 0, err
	}
	wo.BypassValidation = true // the buckets it rewrites are built here
	open := s.tsOpen.of(r.DB + "." + ts.buckets)
	open.mu.Lock()
	defer open.mu.Unlock()
	cur, err := s.Engine.Find(r.DB, ts.buckets, engine.FindOptions{Filter: timeseries.BucketFilter(ts.o, filter), Hint: ts.bucketHint(hint), Collation: wo.Collation, Ctx: r.Ctx})
	if err != nil {
		return 0, err
	}
	var buckets []bson.Raw
	for {
		doc, err := cur.Next()
		if err != nil {
			cur.Close()
			return 0, err
		}
		if doc == nil {
			break
		}
		buckets = append(buckets, slices.Clone(doc))
	}
	cur.Close()
	var total int64
	for _, doc := range buckets {
		if limit == 1 && total > 0 {
			break
		}
		// The buckets rewritten so far stay, as a multi-document delete's
		// documents do.
		if err := mongoerr.Interruption(r.Ctx); err != nil {
			return total, err
		}
		kept, err := timeseries.EmptyBucket(doc)
		if err != nil {
			return total, err
		}
		var removed int64
		err = timeseries.Unpack(ts.o, doc, func(m bson.Raw) error {
			if (limit == 0 || total+removed == 0) && f.Match(m) {
				removed++
				return nil
			}
			return kept.Add(ts.o, m)
		})
		if err != nil || removed == 0 {
			if err != nil {
				return total, err
			}
			continue
		}
		id := marshal(bson.D{{Key: "_id", Value: kept.ID}})
		if kept.Len() == 0 {
			_, err = s.Engine.Delete(r.DB, ts.buckets, id, 1, bson.RawValue{}, wo)
		} else {
			_, err = s.Engine.Update(r.DB, ts.buckets, engine.UpdateSpec{Filter: id, Update: kept.Document(ts.o), WriteOptions: wo})
		}
		if err != nil {
			return total, err
		}
		total += removed
	}
	return total, nil
}

// updateTimeseries runs one update statement on a time series collection
// as MongoDB 7.0 does: an update of the metaField alone, in every bucket
// whose meta the filter (on the metaField alone) selects, with multi and
// without upsert. n and nModified count measurements, those of the
// matched and of the changed buckets.
func (s *Service) updateTimeseries(r *Request, ts *tsColl, u updateStatement, let bson.Raw) (engine.UpdateResult, error) {
	var res engine.UpdateResult
	switch {
	case !u.Multi:
		return res, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform a non-multi update on a time-series collection")
	case u.Upsert:
		return res, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an upsert on a time-series collection")
	case ts.o.MetaField == "":
		return res, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection that does not have a metaField")
	case r.Txn != nil:
		return res, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot update a time-series collection in a multi-document transaction.")
	}
	filter, err := timeseries.TranslateQuery(ts.o, u.Filter)
	if err != nil {
		return res, err
	}
	update, err := timeseries.TranslateUpdate(ts.o, u.Update, u.Pipeline)
	if err != nil {
		return res, err
	}
	u.Hint = ts.bucketHint(u.Hint)
	vars, err := s.scriptVars(let, r, r.Ctx)
	if err != nil {
		return res, err
	}
	ns := r.DB + "." + ts.buckets
	open := s.tsOpen.of(ns)
	open.mu.Lock()
	defer open.mu.Unlock()
	cur, err := s.Engine.Find(r.DB, ts.buckets, engine.FindOptions{Filter: filter, Hint: u.Hint, Collation: u.Collation,
		Let: vars, Ctx: r.Ctx, Projection: marshal(bson.D{{Key: "data." + ts.o.TimeField, Value: 1}})})
	if err != nil {
		return res, err
	}
	type bucket struct {
		id bson.RawValue
		n  int64
	}
	var buckets []bucket
	for {
		doc, err := cur.Next()
		if err != nil {
			cur.Close()
			return res, err
		}
		if doc == nil {
			break
		}
		id := doc.Lookup("_id")
		buckets = append(buckets, bucket{bson.RawValue{Type: id.Type, Value: slices.Clone(id.Value)}, int64(timeseries.Count(ts.o, doc))})
	}
	cur.Close()
	// An open bucket whose meta changes no longer fits the inserts of its
	// old meta (openBucket reads it back), which start a new one. Each
	// bucket is updated under the translated filter too, as MongoDB runs
	// the translated update on the buckets: a positional "meta.$" takes
	// the array element that filter matched.
	for _, b := range buckets {
		if err := mongoerr.Interruption(r.Ctx); err != nil {
			return res, err
		}
		one := u
		one.Filter = marshal(bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "_id", Value: b.id}}, filter}}})
		one.Update, one.Multi, one.Hint = update, false, bson.RawValue{}
		got, err := updateStatementRun(s, r, ts.buckets, one, let)
		if err != nil {
			return res, err
		}
		res.Matched += b.n * got.Matched
		res.Modified += b.n * got.Modified
	}
	return res, nil
}

// withID is doc with an ObjectId _id first, as MongoDB gives a
// measurement inserted without one.
func withID(doc bson.Raw) bson.Raw {
	elems, _ := doc.Elements()
	d := bson.D{{Key: "_id", Value: bson.NewObjectID()}}
	for _, el := range elems {
		d = append(d, bson.E{Key: el.Key(), Value: el.Value()})
	}
	return marshal(d)
}

// bucketRecorder records all the statements of one bucket's write: the
// engine sees one document written.
type bucketRecorder struct {
	rec engine.Recorder
	n   int
}

func (b bucketRecorder) Stage(tx storage.Txn, _ []engine.Write) error {
	all := make([]engine.Write, b.n)
	for i := range all {
		all[i].Index = i
	}
	return b.rec.Stage(tx, all)
}

func (b bucketRecorder) Committed() { b.rec.Committed() }
