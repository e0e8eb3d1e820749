package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(map[string]opCompiler{"$meta": compileMeta})
}

// metaNames are the arguments MongoDB 7.0 knows for $meta.
var metaNames = map[string]bool{
	"textScore": true, "randVal": true, "searchScore": true, "searchHighlights": true,
	"geoNearDistance": true, "geoNearPoint": true, "recordId": true, "indexKey": true,
	"sortKey": true, "searchScoreDetails": true, "searchSequenceToken": true,
}

// IsMetaName reports whether name is an argument MongoDB 7.0 knows for
// $meta.
func IsMetaName(name string) bool { return metaNames[name] }

// CheckMeta is MongoDB's check of a {$meta: name} argument
// (ExpressionMeta::parse): a string (17307 otherwise), naming metadata it
// knows (17308 otherwise, with the bare name), of metadata Folio keeps
// (textScore, geoNearDistance, geoNearPoint, indexKey, recordId, sortKey;
// the others fail with NotImplemented).
func CheckMeta(arg bson.RawValue) error {
	name, ok := arg.StringValueOK()
	switch {
	case !ok:
		return mongoerr.New(mongoerr.MetaArgumentNotString, "$meta only supports string arguments")
	case name == "textScore", name == "geoNearDistance", name == "geoNearPoint", name == "indexKey", name == "recordId", name == "sortKey":
		return nil
	case metaNames[name]:
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support {$meta: %q} yet", name)
	}
	return mongoerr.New(mongoerr.MetaUnsupportedArgument, "Unsupported argument to $meta: %s", name)
}

// MetaNames are the metadata an expression reads: the arguments of the
// {$meta: name} it holds, at any depth.
func MetaNames(v bson.RawValue) []string {
	var out []string
	var walk func(v bson.RawValue)
	walk = func(v bson.RawValue) {
		if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
			return
		}
		elems, _ := bson.Raw(v.Value).Elements()
		for _, el := range elems {
			if name, ok := el.Value().StringValueOK(); ok && el.Key() == "$meta" && v.Type == bson.TypeEmbeddedDocument {
				out = append(out, name)
			}
			walk(el.Value())
		}
	}
	walk(v)
	return out
}

// compileMeta: {$meta: "textScore"} is the current document's $text
// score: missing on a document without one (ExpressionMeta::evaluate), as
// after a $group of a $text pipeline, whose parse checked that it has a
// score to read (40218 otherwise, as DepsTracker::setNeedsMetadata); an
// evaluation without metadata at all fails with 40218;
// {$meta: "geoNearDistance"} and {$meta: "geoNearPoint"} are the
// distance and location a $near or $geoNear measured, {$meta: "indexKey"}
// the key of the index entry the document was found through, {$meta:
// "recordId"} its record id (both missing without), {$meta: "sortKey"}
// its key in the sort that set it: missing where none did (after a $sort
// MongoDB's query layer does not run, or a $group), which MongoDB does not
// refuse (DepsTracker validates no sortKey dependency).
func compileMeta(_ *compiler, _ string, v bson.RawValue, _ *Scope) (*Expr, error) {
	if err := CheckMeta(v); err != nil {
		return nil, err
	}
	name := v.StringValue()
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		m := st.ctx.Meta
		if m == nil {
			if name == "textScore" {
				return bson.RawValue{}, errTextScoreUnavailable()
			}
			m = &docsrc.Meta{}
		}
		return MetaValue(*m, name)
	}}, nil
}

// MetaValue is the metadata name of a document carrying m, missing when m
// has none.
func MetaValue(m docsrc.Meta, name string) (bson.RawValue, error) {
	switch name {
	case "recordId":
		if m.RecordID != nil {
			return RecordIDValue(m.RecordID), nil
		}
		return bson.RawValue{}, nil
	case "indexKey":
		if m.IndexKey != nil {
			return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: m.IndexKey}, nil
		}
		return bson.RawValue{}, nil
	case "sortKey":
		if m.SortKey != nil {
			return bson.RawValue{Type: bson.TypeArray, Value: m.SortKey}, nil
		}
		return bson.RawValue{}, nil
	case "geoNearDistance":
		if m.HasGeoNear {
			return bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, m.GeoNearDistance)}, nil
		}
		return bson.RawValue{}, nil
	case "geoNearPoint":
		if m.HasGeoNear {
			return m.GeoNearPoint, nil
		}
		return bson.RawValue{}, nil
	}
	if !m.HasTextScore {
		return bson.RawValue{}, nil
	}
	return bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, m.TextScore)}, nil
}

// errTextScoreUnavailable is MongoDB's refusal of {$meta: "textScore"}
// where no $text search gives a score.
func errTextScoreUnavailable() error {
	return mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
}

// RecordIDValue is how a record id shows in documents ($recordId,
// postBatchResumeToken): as MongoDB serializes the record ids of a
// clustered collection, which are the encoding of the _id as Folio's are,
// binary data of subtype 0.
func RecordIDValue(id []byte) bson.RawValue {
	return bson.RawValue{Type: bson.TypeBinary, Value: bsoncore.AppendBinary(nil, bson.TypeBinaryGeneric, id)}
}
