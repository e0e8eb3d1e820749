package timeseries

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

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
					return "", ineligible("can't handle this predicate", k, "", v)
				}
				m, err := o.partialConds(doc)
				if err != nil {
					return "", err
				}
				note(m)
			}
		case len(k) > 0 && k[0] == '$':
			return "", ineligible("can't handle this predicate", k, "", v)
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

// partialFieldCond checks the condition v on time or measurement path k,
// with MongoDB's reasons (createComparisonPredicate, the $in case of
// createPredicatesOnBucketLevelField, "can't handle this predicate" for
// any other).
func (o Options) partialFieldCond(k string, v bson.RawValue) error {
	ops, isDoc := v.DocumentOK()
	if isDoc {
		if first, err := ops.IndexErr(0); err != nil || len(first.Key()) == 0 || first.Key()[0] != '$' {
			// equality to an object
			return o.partialComparand(k, "$eq", v)
		}
	}
	if !isDoc {
		if v.Type == bson.TypeRegex {
			return ineligible("can't handle this predicate", k, "", v)
		}
		return o.partialComparand(k, "$eq", v)
	}
	elems, _ := ops.Elements()
	for _, op := range elems {
		w := op.Value()
		switch op.Key() {
		case "$eq", "$gt", "$gte", "$lt", "$lte":
			if err := o.partialComparand(k, op.Key(), w); err != nil {
				return err
			}
		case "$exists":
			if !values.Truthy(w) {
				return ineligible("can't handle this predicate", k, "", v)
			}
		case "$in":
			arr, _ := w.ArrayOK()
			list, _ := arr.Values()
			if slices.ContainsFunc(list, func(x bson.RawValue) bool { return x.Type == bson.TypeRegex }) {
				return ineligible("can't handle $regex predicate (inside $in predicate)", k, "$in", w)
			}
			if slices.ContainsFunc(list, func(x bson.RawValue) bool { return x.Type == bson.TypeNull }) {
				return ineligible("can't handle {$eq: null} predicate (inside $in predicate)", k, "$in", w)
			}
			for _, x := range list {
				if err := o.partialComparand(k, "$eq", x); err != nil {
					return err
				}
			}
		default:
			return ineligible("can't handle this predicate", k, "", v)
		}
	}
	return nil
}

// partialComparand checks a value path k is compared with (by op): a
// scalar (MongoDB's control bounds order objects without regard to their
// fields' order), not null (whose equality also matches missing fields),
// and a date for the time field, which holds only dates.
func (o Options) partialComparand(k, op string, w bson.RawValue) error {
	switch {
	case w.Type == bson.TypeEmbeddedDocument || w.Type == bson.TypeArray:
		return ineligible("operand can't be an object or array", k, op, w)
	case w.Type == bson.TypeNull:
		return ineligible("can't handle {$eq: null}", k, op, w)
	case k == o.TimeField && w.Type != bson.TypeDateTime:
		return ineligible("This predicate will never be true, because the time field always contains a Date", k, op, w)
	}
	return nil
}

// ineligible is MongoDB's refusal (handleIneligible) of a partial filter
// condition it cannot push down to the buckets, naming the condition as
// {k: {op: v}} (MatchExpression::serialize), or {k: v} with no op.
func ineligible(why, k, op string, v bson.RawValue) error {
	cond := v
	if op != "" {
		cond = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: bsoncore.NewDocumentBuilder().AppendValue(op, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value}).Build()}
	}
	return mongoerr.New(mongoerr.TimeseriesPredicateNotTranslatable,
		"Error translating non-metadata time-series predicate to operate on buckets: %s: { %s }", why, values.ShellElement(k, cond))
}
