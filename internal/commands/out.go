package commands

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

// A $out (and mapReduce's replace) replaces its target atomically: the
// documents go to a temporary collection made like the target (its
// options and indexes), which is then renamed over it. A time series
// target (MongoDB 7.0.3) is replaced the same way one level down: the
// temporary collection holds buckets, filled as inserts fill them, and is
// renamed over the target's buckets collection; the view is made when the
// target is new.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/out/

// output is a replacement in progress (aggregate.Output).
type output struct {
	env           engineEnv
	db, coll, tmp string
	// ts is the time series collection the target is or becomes, nil for
	// a collection; newView: it is new, its view made by Commit.
	ts      *tsColl
	newView bool
	fill    *bucketFill
	// shape is the target's options and indexes when the $out began.
	shape targetShape
}

// targetShape is what a $out's target must still have when the $out
// renames over it: its options (no UUID) and its indexes' specs, by name.
type targetShape struct {
	opts    bson.Raw
	indexes [][]byte
}

// shapeOf is the shape of db.coll, empty when it does not exist.
func shapeOf(e *engine.Engine, db, coll string) targetShape {
	sh := targetShape{opts: marshal(bson.D{})}
	if c := e.Collection(db, coll); c != nil {
		sh.opts = marshal(c.CurrentOptions().Doc())
		for _, ix := range c.Indexes() {
			sh.indexes = append(sh.indexes, ix.Spec)
		}
		slices.SortFunc(sh.indexes, func(a, b []byte) int {
			return strings.Compare(bson.Raw(a).Lookup("name").StringValue(), bson.Raw(b).Lookup("name").StringValue())
		})
	}
	return sh
}

// checkShape fails the $out as MongoDB 7.0's
// doLocalRenameIfOptionsAndIndexesHaveNotChanged does when the target's
// options or indexes changed since the $out began (a collMod, an index
// built or dropped, the target dropped or created meanwhile).
func (o *output) checkShape() error {
	target := o.target()
	now := shapeOf(o.env.e, o.db, target)
	if !bytes.Equal(now.opts, o.shape.opts) {
		return mongoerr.New(mongoerr.CommandFailed, "collection options of target collection %s.%s changed during processing. Original options: %s, new options: %s",
			o.db, target, values.ShellDoc(o.shape.opts), values.ShellDoc(now.opts))
	}
	if !slices.EqualFunc(now.indexes, o.shape.indexes, bytes.Equal) {
		return mongoerr.New(mongoerr.CommandFailed, "indexes of target collection %s.%s changed during processing.", o.db, target)
	}
	return nil
}

// Out begins $out's replacement of db.coll (aggregate.Env). The temporary
// collection is named as MongoDB 7.0's DocumentSourceOut names it:
// tmp.agg_out.<UUID>.
func (env engineEnv) Out(db, coll string, ts *timeseries.Options) (aggregate.Output, error) {
	id, err := engine.NewUUIDString()
	if err != nil {
		return nil, err
	}
	return env.output(db, coll, "tmp.agg_out."+id, ts)
}

// output checks the target db.coll against the timeseries options want
// (nil: none) and creates tmp for its replacement.
func (env engineEnv) output(db, coll, tmp string, want *timeseries.Options) (*output, error) {
	out := &output{env: env, db: db, coll: coll, tmp: tmp}
	if env.timeseries != nil {
		ts, isView, err := env.timeseries(db, coll)
		switch {
		case err != nil:
			return nil, err
		case isView && ts == nil && want != nil:
			return nil, tsTargetError(db, coll)
		case isView && ts == nil:
			return nil, viewError(db, coll)
		case ts != nil && want != nil && !ts.o.Same(*want):
			return nil, mongoerr.New(mongoerr.OutTimeseriesOptionsMismatch, "Time-series options inputted must match the existing time-series collection. Received: %s Found: %s", values.ShellDoc(marshal(want.Document())), values.ShellDoc(marshal(ts.o.Document())))
		}
		out.ts = ts
	}
	if out.ts == nil && want != nil {
		if env.e.Collection(db, coll) != nil {
			return nil, tsTargetError(db, coll)
		}
		out.ts, out.newView = &tsColl{name: coll, buckets: timeseries.BucketsPrefix + coll, o: *want}, true
	}
	target := out.target()
	// MongoDB checks the target's name when it renames the temporary
	// collection over it.
	if err := engine.ValidateCollName(db, target); err != nil {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "error with target namespace: %s", mongoerr.As(err).Msg)
	}
	if c := env.e.Collection(db, target); c != nil && c.CurrentOptions().Capped {
		return nil, mongoerr.New(mongoerr.OutTargetCapped, "namespace '%s.%s' is capped so it can't be used for $out", db, coll)
	}
	out.shape = shapeOf(env.e, db, target)
	var err error
	if out.newView {
		if err = env.e.CreateCollection(db, tmp, bucketOptions(out.ts.o, engine.CollectionOptions{})); err == nil {
			err = createDefaultTimeseriesIndex(env.e, db, tmp, out.ts.o)
		}
	} else {
		err = env.e.CreateCollectionLike(db, tmp, target)
	}
	if err != nil {
		out.Abort()
		return nil, err
	}
	if out.ts != nil {
		out.fill = &bucketFill{
			o: out.ts.o,
			open: func(_ string, _ bson.Raw, meta bson.RawValue, t time.Time) (*tsPending, timeseries.Misfit, error) {
				return &tsPending{b: timeseries.NewBucket(out.ts.o, meta, t), isNew: true}, timeseries.OtherMeta, nil
			},
			flush: func(p *tsPending) error {
				_, err := env.Insert(db, tmp, []bson.Raw{p.b.Document(out.ts.o)}, true)
				return err
			},
		}
	}
	return out, nil
}

// tsTargetError refuses timeseries options for a target that exists and
// is not a time series collection.
func tsTargetError(db, coll string) error {
	return mongoerr.New(mongoerr.OutTimeseriesTargetType, "Cannot create a time-series collection over the existing collection or view %s.%s", db, coll)
}

// target is the collection tmp replaces.
func (o *output) target() string {
	if o.ts != nil {
		return o.ts.buckets
	}
	return o.coll
}

// Write stores docs in tmp: a time series target's as measurements, a
// missing or non-date time field failing the whole $out.
func (o *output) Write(docs []bson.Raw) error {
	if o.fill == nil {
		_, err := o.env.Insert(o.db, o.tmp, docs, true)
		return err
	}
	for _, doc := range docs {
		t, meta, err := timeseries.Measurement(o.ts.o, doc)
		if err == nil {
			_, err = o.fill.add(doc, t, meta)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Commit renames tmp over the target, then makes a new time series
// collection's view; when it fails, tmp is dropped.
func (o *output) Commit() error {
	err := o.commit()
	if err != nil {
		o.Abort()
	}
	return err
}

func (o *output) commit() error {
	if o.fill != nil {
		if err := o.fill.close(); err != nil {
			return err
		}
	}
	if o.newView {
		made, err := o.madeMeanwhile()
		if err != nil {
			return err
		}
		o.newView = !made
	}
	if err := o.checkShape(); err != nil {
		return err
	}
	if err := o.env.e.RenameCollection(o.db, o.tmp, o.db, o.target(), true); err != nil {
		return err
	}
	if !o.newView {
		return nil
	}
	view := viewDoc(o.db, o.coll, o.ts.buckets, unpackPipeline(o.ts.o), nil)
	_, werrs, err := o.env.e.Insert(o.db, engine.ViewsCollection, []bson.Raw{view}, true, engine.WriteOptions{Journal: true, Ctx: o.env.ctx})
	if err == nil && len(werrs) > 0 {
		err = werrs[0].Err
	}
	if mongoerr.Is(err, mongoerr.DuplicateKey) {
		// the view's _id is its namespace: one was made since the check
		if made, merr := o.madeMeanwhile(); merr != nil || made {
			return merr
		}
	}
	return err
}

// madeMeanwhile looks at the name of the time series collection the $out
// creates, as MongoDB's createTimeseriesView does when its create finds
// the name taken: a time series collection of the same options made since
// the $out began (by another $out, a create) stands (made), and anything
// else there fails the $out with NamespaceExists, as create would.
func (o *output) madeMeanwhile() (made bool, err error) {
	exists := mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", o.db, o.coll)
	if o.env.e.Collection(o.db, o.coll) != nil {
		return false, exists
	}
	if o.env.timeseries == nil {
		return false, nil
	}
	ts, isView, err := o.env.timeseries(o.db, o.coll)
	switch {
	case err != nil:
		return false, err
	case ts != nil && ts.o.Same(o.ts.o):
		return true, nil
	case ts != nil:
		return false, mongoerr.New(mongoerr.NamespaceExists, "A timeseries collection already exists. NS: %s.%s", o.db, o.coll)
	case isView:
		return false, exists
	}
	return false, nil
}

// Abort drops tmp.
func (o *output) Abort() { _ = o.env.DropCollection(o.db, o.tmp) }
