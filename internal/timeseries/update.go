package timeseries

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
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

// TranslateQuery is a filter on measurements as a filter on their buckets,
// as MongoDB 7.0's timeseries::translateQuery walks it: every field named
// at the top level, or in a document that is an element of an array
// (those of $and, $or and $nor among them), must be the metaField or under
// it and is renamed under meta; a $jsonSchema's required fields and
// properties must be the metaField itself and are renamed, the rest of the
// schema kept as it is; $expr and $where are refused anywhere.
func TranslateQuery(o Options, query bson.Raw) (bson.Raw, error) {
	start, out := bsoncore.AppendDocumentStart(nil)
	it := rawdoc.Iterate(query)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		var err error
		if out, err = translateQueryElem(out, o.MetaField, string(k), v, true, false); err != nil {
			return nil, err
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return bson.Raw(out), nil
}

// notMetaQuery is MongoDB's refusal of a filter on another field.
func notMetaQuery(meta string) error {
	return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update or delete on a time-series collection when querying on a field that is not the metaField '%s'", meta)
}

// translateQueryElem appends the element k: v of a filter, translated:
// top says k names a field of the measurements, inArray that v is an
// element of an array (so that a document v names fields).
func translateQueryElem(out []byte, meta, k string, v bson.RawValue, top, inArray bool) ([]byte, error) {
	switch k {
	case "$expr":
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot use $expr when performing an update or delete on a time-series collection")
	case "$where":
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot use $where when performing an update or delete on a time-series collection")
	case "$jsonSchema":
		return translateSchema(out, meta, v)
	}
	if top && !strings.HasPrefix(k, "$") {
		if !underMeta(k, meta) {
			return nil, notMetaQuery(meta)
		}
		k = toMeta(k, meta)
	}
	if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
		return rawdoc.AppendElement(out, k, v), nil
	}
	childTop, childInArray := inArray && v.Type == bson.TypeEmbeddedDocument, v.Type == bson.TypeArray
	out = bsoncore.AppendHeader(out, bsoncore.Type(v.Type), k)
	start, out := bsoncore.AppendDocumentStart(out)
	it := rawdoc.Iterate(v.Value)
	for {
		ck, cv, ok := it.Next()
		if !ok {
			break
		}
		var err error
		if out, err = translateQueryElem(out, meta, string(ck), cv, childTop, childInArray); err != nil {
			return nil, err
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out, nil
}

// translateSchema appends a $jsonSchema of measurements as one of their
// buckets: the entries of its (first) required and the names of its
// (first) properties must be the metaField, and become meta.
func translateSchema(out []byte, meta string, v bson.RawValue) ([]byte, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return rawdoc.AppendElement(out, "$jsonSchema", v), nil
	}
	start, out := bsoncore.AppendDocumentElementStart(out, "$jsonSchema")
	var seenRequired, seenProperties bool
	it := rawdoc.Iterate(v.Value)
	for {
		k, kv, ok := it.Next()
		if !ok {
			break
		}
		required := string(k) == "required" && !seenRequired
		properties := string(k) == "properties" && !seenProperties
		if (!required && !properties) || (kv.Type != bson.TypeArray && kv.Type != bson.TypeEmbeddedDocument) {
			seenRequired, seenProperties = seenRequired || required, seenProperties || properties
			out = rawdoc.AppendElement(out, string(k), kv)
			continue
		}
		seenRequired, seenProperties = seenRequired || required, seenProperties || properties
		out = bsoncore.AppendHeader(out, bsoncore.Type(kv.Type), string(k))
		sStart, o2 := bsoncore.AppendDocumentStart(out)
		sub := rawdoc.Iterate(kv.Value)
		for {
			name, entry, ok := sub.Next()
			if !ok {
				break
			}
			if required {
				if f, isString := entry.StringValueOK(); !isString || f != meta {
					return nil, notMetaQuery(meta)
				}
				o2 = rawdoc.AppendElement(o2, string(name), bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, "meta")})
				continue
			}
			if string(name) != meta {
				return nil, notMetaQuery(meta)
			}
			o2 = rawdoc.AppendElement(o2, "meta", entry)
		}
		out, _ = bsoncore.AppendDocumentEnd(o2, sStart)
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
