package timeseries

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// PartialFilter is a partial index's filter on measurements as its filter
// on the buckets, as MongoDB 7.0's makeTimeseriesCreateIndexesCommand
// pushes it down (BucketSpec::pushdownPredicate with the ineligible
// predicates an error). Conditions on the metaField (and its subfields)
// are renamed under meta, as they are (the meta of a bucket is each of
// its measurements'), and hold of a bucket exactly when they hold of its
// measurements. A condition on the time field or a measurement field is
// either one MongoDB cannot push down, refused with 5916301 (a
// comparison with null, an array, an object or a regex, a time compared
// with a non-date, {$exists: false}, $ne and any operator but $eq, $gt,
// $gte, $lt, $lte, $in and {$exists: true}; $nor and the other top-level
// operators), or one MongoDB bounds by the buckets' control fields: then
// measured is its path and the filter nil, since Folio builds no such
// index (its caller says why). Every condition is checked before measured
// is answered, as MongoDB's translation fails on any ineligible one.
func PartialFilter(o Options, filter bson.Raw) (bucket bson.Raw, measured string, err error) {
	if measured, err = o.partialConds(filter); err != nil || measured != "" {
		return nil, measured, err
	}
	bucket, err = TranslateQuery(o, filter)
	return bucket, "", err
}

// partialConds checks the conditions of filter document d, returning the
// first time or measurement path it reads.
func (o Options) partialConds(d bson.Raw) (string, error) {
	elems, err := d.Elements()
	if err != nil {
		return "", err
	}
	measured := ""
	note := func(p string) {
		if measured == "" {
			measured = p
		}
	}
	for _, el := range elems {
		k, v := el.Key(), el.Value()
		switch {
		case k == "$and" || k == "$or":
			arr, _ := v.ArrayOK()
			subs, _ := arr.Values()
			for _, sub := range subs {
				doc, ok := sub.DocumentOK()
				if !ok {
					return "", ineligible("not a filter document", k, v)
				}
				m, err := o.partialConds(doc)
				if err != nil {
					return "", err
				}
				note(m)
			}
		case len(k) > 0 && k[0] == '$':
			return "", ineligible("can't handle "+k, k, v)
		case o.isMetaPath(k):
		default:
			if err := o.partialFieldCond(k, v); err != nil {
				return "", err
			}
			note(k)
		}
	}
	return measured, nil
}

// partialFieldCond checks the condition v on time or measurement path k.
func (o Options) partialFieldCond(k string, v bson.RawValue) error {
	ops, isDoc := v.DocumentOK()
	if isDoc {
		first, err := ops.IndexErr(0)
		if err != nil || len(first.Key()) == 0 || first.Key()[0] != '$' {
			return ineligible("can't handle a comparison to a non-scalar", k, v)
		}
	}
	if !isDoc {
		if v.Type == bson.TypeRegex {
			return ineligible("can't handle a regex", k, v)
		}
		return o.partialComparand(k, v)
	}
	elems, _ := ops.Elements()
	for _, op := range elems {
		w := op.Value()
		switch op.Key() {
		case "$eq", "$gt", "$gte", "$lt", "$lte":
			if err := o.partialComparand(k, w); err != nil {
				return err
			}
		case "$exists":
			if !values.Truthy(w) {
				return ineligible("can't handle {$exists: false}", k, v)
			}
		case "$in":
			arr, _ := w.ArrayOK()
			list, _ := arr.Values()
			for _, x := range list {
				if x.Type == bson.TypeRegex {
					return ineligible("can't handle a regex", k, v)
				}
				if err := o.partialComparand(k, x); err != nil {
					return err
				}
			}
		default:
			return ineligible("can't handle "+op.Key(), k, v)
		}
	}
	return nil
}

// partialComparand checks a value path k is compared with: a scalar
// other than null (whose equality also matches missing fields, which the
// control fields cannot tell), and a date for the time field, which holds
// only dates.
func (o Options) partialComparand(k string, w bson.RawValue) error {
	switch {
	case w.Type == bson.TypeNull || w.Type == bson.TypeUndefined:
		return ineligible("can't handle comparison to null", k, w)
	case w.Type == bson.TypeEmbeddedDocument || w.Type == bson.TypeArray:
		return ineligible("can't handle a comparison to a non-scalar", k, w)
	case k == o.TimeField && w.Type != bson.TypeDateTime:
		return ineligible("can't handle a comparison of the time field to a non-date", k, w)
	}
	return nil
}

// ineligible is MongoDB's refusal of a partial filter condition it cannot
// push down to the buckets.
func ineligible(why, k string, v bson.RawValue) error {
	return mongoerr.New(mongoerr.TimeseriesPredicateNotTranslatable,
		"Error translating non-metadata time-series predicate to operate on buckets: %s: %s", why, values.ShellElement(k, v))
}
