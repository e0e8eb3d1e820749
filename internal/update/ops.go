package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// setOp is $set: the value replaces whatever is at the path, creating it.
// With onInsert it is $setOnInsert, which acts only when an upsert inserts.
type setOp struct {
	val      bson.RawValue
	onInsert bool
}

func (o setOp) apply(c *applyCtx, s *slot) error {
	if o.onInsert && !c.insert {
		return nil
	}
	return c.set(s, rawNode(o.val), true)
}

// unsetOp is $unset: removes the field; an array element becomes null.
type unsetOp struct{}

func (unsetOp) apply(c *applyCtx, s *slot) error { return c.remove(s) }

// noopOp holds the place of a $rename source in the tree, so that other
// operators on that path conflict with the rename.
type noopOp struct{}

func (noopOp) apply(*applyCtx, *slot) error { return nil }

// compareOp is $min (want < 0) or $max (want > 0): the value replaces the
// current one when it compares below (above) it in MongoDB's order; a
// missing field is set.
type compareOp struct {
	val  bson.RawValue
	want int
	coll *collation.Collator
}

func (o compareOp) apply(c *applyCtx, s *slot) error {
	if s.n != nil && o.coll.Compare(o.val, s.n.value())*o.want <= 0 {
		return nil
	}
	return c.set(s, rawNode(o.val), false)
}

// currentDateOp is $currentDate: sets the field to the current date, or to
// the current time as a timestamp.
type currentDateOp struct{ timestamp bool }

func parseCurrentDate(v bson.RawValue) (leaf, error) {
	switch v.Type {
	case bson.TypeBoolean:
		return currentDateOp{}, nil
	case bson.TypeEmbeddedDocument:
		elems, _ := v.Document().Elements()
		var ts bool
		found := false
		for _, e := range elems {
			if e.Key() != "$type" {
				return nil, mongoerr.New(mongoerr.BadValue, "Unrecognized $currentDate option: %s", e.Key())
			}
			s, ok := e.Value().StringValueOK()
			if !ok || (s != "date" && s != "timestamp") {
				return nil, mongoerr.New(mongoerr.BadValue,
					"The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}")
			}
			ts, found = s == "timestamp", true
		}
		if !found {
			return nil, mongoerr.New(mongoerr.BadValue,
				"The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}")
		}
		return currentDateOp{timestamp: ts}, nil
	}
	return nil, mongoerr.New(mongoerr.BadValue,
		"%s is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).",
		values.TypeName(v.Type))
}

func (o currentDateOp) apply(c *applyCtx, s *slot) error {
	if o.timestamp {
		ts := bson.Timestamp{T: uint32(c.now.Unix()), I: 1}
		if c.u.clock != nil {
			ts = c.u.clock.Tick().Timestamp()
		}
		return c.set(s, &node{t: bson.TypeTimestamp, raw: bsoncore.AppendTimestamp(nil, ts.T, ts.I)}, false)
	}
	return c.set(s, &node{t: bson.TypeDateTime, raw: bsoncore.AppendDateTime(nil, c.now.UnixMilli())}, false)
}
