package timeseries

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// Updates of measurements, as MongoDB 7.0 allows them: only of the
// metaField, in every bucket whose meta a filter on the metaField alone
// selects (multi: true, no upsert). TranslateQuery and TranslateUpdate
// rename the metaField to the buckets' "meta" and refuse anything else with
// InvalidOptions (72), in MongoDB's words.

// underMeta reports whether path is the metaField or one of its subfields.
func underMeta(path, meta string) bool {
	return path == meta || strings.HasPrefix(path, meta+".")
}

// toMeta renames a path under the metaField to the same path under meta.
func toMeta(path, meta string) string { return "meta" + path[len(meta):] }

// TranslateQuery is a filter on measurements as a filter on their buckets:
// every field it names, at its top level or in the documents of a logical
// operator's array, must be the metaField or under it.
func TranslateQuery(o Options, query bson.Raw) (bson.Raw, error) {
	out, err := translateQueryDoc(o.MetaField, query)
	if err != nil {
		return nil, err
	}
	return bson.Raw(out), nil
}

func translateQueryDoc(meta string, doc bson.Raw) ([]byte, error) {
	elems, err := doc.Elements()
	if err != nil {
		return nil, err
	}
	start, out := bsoncore.AppendDocumentStart(nil)
	for _, el := range elems {
		k, v := el.Key(), el.Value()
		if !strings.HasPrefix(k, "$") {
			if !underMeta(k, meta) {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update or delete on a time-series collection when querying on a field that is not the metaField '%s'", meta)
			}
			out = bsoncore.AppendValueElement(out, toMeta(k, meta), bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
			continue
		}
		if v.Type != bson.TypeArray || (k != "$and" && k != "$or" && k != "$nor") {
			// other operators' values, and malformed logical ones (the
			// buckets' query reports those), are kept as they are
			out = bsoncore.AppendValueElement(out, k, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
			continue
		}
		vals, err := v.Array().Values()
		if err != nil {
			return nil, err
		}
		aStart, a := bsoncore.AppendArrayElementStart(out, k)
		for i, item := range vals {
			key := bsoncore.Value{Type: bsoncore.Type(item.Type), Data: item.Value}
			if item.Type == bson.TypeEmbeddedDocument {
				sub, err := translateQueryDoc(meta, item.Document())
				if err != nil {
					return nil, err
				}
				key = bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: sub}
			}
			a = bsoncore.AppendValueElement(a, strconv.Itoa(i), key)
		}
		out, _ = bsoncore.AppendArrayEnd(a, aStart)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out, nil
}

// TranslateUpdate is an update of measurements as an update of their
// buckets: an update document (not a pipeline, not a replacement) whose
// operators name only the metaField or its subfields ($rename's targets
// too).
func TranslateUpdate(o Options, update bson.Raw, pipeline bool) (bson.Raw, error) {
	if pipeline {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection using a pipeline update")
	}
	ops, err := update.Elements()
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 || !strings.HasPrefix(ops[0].Key(), "$") {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection using a replacement document")
	}
	notMeta := mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection which updates a field that is not the metaField '%s'", o.MetaField)
	start, out := bsoncore.AppendDocumentStart(nil)
	for _, op := range ops {
		d, ok := op.Value().DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Modifiers operate on fields but we found type %s instead", values.TypeName(op.Value().Type))
		}
		fields, err := d.Elements()
		if err != nil {
			return nil, err
		}
		oStart, o2 := bsoncore.AppendDocumentElementStart(out, op.Key())
		for _, f := range fields {
			v := f.Value()
			if !underMeta(f.Key(), o.MetaField) {
				return nil, notMeta
			}
			if op.Key() == "$rename" {
				to, ok := v.StringValueOK()
				if !ok || !underMeta(to, o.MetaField) {
					return nil, notMeta
				}
				v = bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, toMeta(to, o.MetaField))}
			}
			o2 = bsoncore.AppendValueElement(o2, toMeta(f.Key(), o.MetaField), bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
		out, _ = bsoncore.AppendDocumentEnd(o2, oStart)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return bson.Raw(out), nil
}

// Count is the number of measurements in a bucket.
func Count(o Options, bucket bson.Raw) int {
	col, ok := bucket.Lookup("data", o.TimeField).DocumentOK()
	if !ok {
		return 0
	}
	vals, _ := col.Elements()
	return len(vals)
}
