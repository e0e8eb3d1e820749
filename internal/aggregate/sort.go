package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/sorter"
)

// sortStage is $sort with find's ordering rules (an array sorts by its
// smallest element ascending, its largest descending; missing sorts as
// null), equal keys in arrival order. Followed by a $limit it keeps only
// the top limit documents. It sorts with the one sorter: beyond the memory
// limit it fails with QueryExceededMemoryLimitNoDiskUseAllowed unless
// allowDiskUse is on, in which case it spills sorted runs and merges them.
type sortStage struct {
	spec  bson.Raw
	sort  *query.Sort
	limit int64 // 0: no limit
	// keys gives each document its key in the sort as its
	// docsrc.Meta.SortKey (markSortKeys).
	keys bool
}

func parseSort(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.SortSpecNotObject, "the $sort key specification must be an object")
	}
	s, err := query.CompileSortPattern(arg.Document())
	if err != nil {
		return nil, err
	}
	if s.Empty() {
		return nil, mongoerr.New(mongoerr.SortSpecEmpty, "$sort stage must have at least one sort key")
	}
	return &sortStage{spec: arg.Document(), sort: s}, nil
}

func (s *sortStage) run(in Source, rt *runtime) Source {
	return &sortSource{in: in, stage: s, rt: rt}
}

// sortSource reads its whole input on the first Next, then serves the
// sorter's output.
type sortSource struct {
	in    Source
	stage *sortStage
	rt    *runtime
	s     *sorter.Sorter
	it    *sorter.Iterator
	meta  docsrc.Meta
}

// Meta is the metadata of the document returned last, kept through the
// sort.
func (o *sortSource) Meta() docsrc.Meta { return o.meta }

func (o *sortSource) compute() (err error) {
	rt := o.rt
	o.s = sorter.New(sorter.Options{
		Limit: o.stage.limit, MaxMemory: rt.sortMemoryLimit(), AllowDisk: rt.opts.AllowDiskUse, TempDir: rt.opts.TempDir, Budget: rt.opts.Budget,
	})
	keys := sorter.NewSortKey(o.stage.sort)
	for {
		doc, err := o.in.Next()
		if doc == nil || err != nil {
			if err != nil {
				return err
			}
			break
		}
		meta := docsrc.MetaOf(o.in)
		key, err := keys.OfMeta(doc, meta)
		if err != nil {
			return err
		}
		if o.stage.keys {
			if meta.SortKey, err = o.stage.sort.SortKeyArray(doc, meta); err != nil {
				return err
			}
		}
		if err := o.s.Add(sorter.Entry{Key: key, Doc: doc, Meta: meta}); err != nil {
			return err
		}
	}
	o.it, err = o.s.Iterate()
	return err
}

func (o *sortSource) Next() (bson.Raw, error) {
	if o.it == nil {
		if o.s != nil {
			return nil, nil // compute failed
		}
		if err := o.compute(); err != nil {
			o.s.Close()
			return nil, err
		}
	}
	e, ok, err := o.it.Next()
	if !ok || err != nil {
		return nil, err
	}
	o.meta = e.Meta
	return e.Doc, nil
}

func (o *sortSource) Close() error {
	if o.s != nil {
		o.s.Close()
	}
	return o.in.Close()
}
