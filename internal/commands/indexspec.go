package commands

import (
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/fts"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// maxTTLSeconds is the largest expireAfterSeconds MongoDB accepts.
const maxTTLSeconds = 2147483647

// indexSpecFields are the fields MongoDB 7.0 allows in an index
// specification (index_key_validate's allowedFieldNames), mapped to whether
// Folio implements them. An unknown field fails with
// InvalidIndexSpecificationOption (197), or is dropped when the command sets
// ignoreUnknownIndexOptions; a known one Folio does not implement fails with
// NotImplemented (238).
var indexSpecFields = map[string]bool{
	"key": true, "name": true, "v": true, "ns": true, "unique": true, "sparse": true, "hidden": true,
	"background": true, "dropDups": true, "partialFilterExpression": true, "expireAfterSeconds": true,
	"storageEngine": true, "collation": true, "weights": true, "default_language": true,
	"language_override": true, "textIndexVersion": true, "2dsphereIndexVersion": true,
	"bits": true, "min": true, "max": true, "coarsestIndexedLevel": true, "finestIndexedLevel": true,
	"wildcardProjection": true, "columnstoreProjection": false, "columnstoreCompressor": false,
	"originalSpec": false, "prepareUnique": true, "clustered": true, "_id": false,
}

// clusteredIndexSpecFields are the fields of an index specification with
// the clustered option (index_key_validate's
// allowedClusteredIndexFieldNames): a clustered index's and clustered.
var clusteredIndexSpecFields = map[string]bool{"key": true, "name": true, "unique": true, "v": true, "clustered": true}

// idIndexSpecFields are the fields an _id index specification may hold.
var idIndexSpecFields = map[string]bool{"key": true, "name": true, "v": true, "ns": true, "collation": true, "_id": true}

// withoutUnknownIndexFields is doc without the fields MongoDB does not know,
// as ignoreUnknownIndexOptions asks.
func withoutUnknownIndexFields(doc bson.Raw) bson.Raw {
	elems, _ := doc.Elements()
	out := bson.D{}
	for _, el := range elems {
		if _, known := indexSpecFields[el.Key()]; known {
			out = append(out, bson.E{Key: el.Key(), Value: el.Value()})
		}
	}
	if len(out) == len(elems) {
		return doc
	}
	return marshal(out)
}

// specError is MongoDB's error for an invalid index specification: the
// reason in the context of the specification.
func specError(doc bson.Raw, code mongoerr.Code, format string, args ...any) error {
	return mongoerr.AddContext(mongoerr.New(code, format, args...), "Error in specification "+values.ShellDoc(doc))
}

// keyPlugin is the index type a key pattern names, as MongoDB's
// findPluginName: its first string value, or "" for none.
func keyPlugin(key bson.Raw) string {
	elems, _ := key.Elements()
	for _, el := range elems {
		if name, ok := el.Value().StringValueOK(); ok {
			return name
		}
	}
	return ""
}

// parseIndexSpec reads one entry of createIndexes' indexes array with
// MongoDB 7.0's validation, in its order: index_key_validate's
// validateIndexSpec, whose errors show the specification as given (a
// partial filter is parsed there, with no special feature allowed); then,
// on the specification as it returns it (fixedIndexSpec: with its default
// v: 2), the _id index and reserved name rules, the TTL rules, the
// collation, and the checks of the index catalog's _isSpecOk (an empty
// name, a partial filter's operators and its sparse option,
// storageEngine), whose errors show that specification. The _id index
// rules hold of an {_id: 1} key unless onMeasurements: a key on a time
// series collection's measurements, where MongoDB maps _id to the
// buckets' control.min._id and control.max._id before it validates the
// specification (makeTimeseriesCreateIndexesCommand), which also refuses
// a partial filter that is not an object (10065) first. Under apiStrict
// a key pattern of a type outside API version 1 (text, columnstore) is
// refused as it is read.
func parseIndexSpec(doc bson.Raw, ignoreUnknown, onMeasurements, apiStrict bool) (engine.IndexSpec, error) {
	if ignoreUnknown {
		doc = withoutUnknownIndexFields(doc)
	}
	spec := engine.IndexSpec{ExpireAfter: -1}
	hasName, hasTTL := false, false
	var ttlErr error
	var storageEngine bson.RawValue
	var partial *query.Filter
	elems, err := doc.Elements()
	if err != nil {
		return spec, mongoerr.New(mongoerr.InvalidBSON, "invalid index specification: %v", err)
	}
	// makeTimeseriesCreateIndexesCommand reads a partial filter on the
	// measurements as an object (BSONElement::Obj) before the
	// specification is validated.
	if v := doc.Lookup("partialFilterExpression"); onMeasurements && v.Type != 0 && v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
		return spec, mongoerr.ExpectedObject("partialFilterExpression")
	}
	clustered := doc.Lookup("clustered")
	for _, el := range elems {
		if clustered.Type != 0 {
			// a clustered index's specification has fields of its own
			// (validateClusteredSpecFieldNames)
			if !clusteredIndexSpecFields[el.Key()] {
				return spec, specError(doc, mongoerr.InvalidIndexSpecificationOption,
					"The field '%s' is not valid for a clustered index specification. Specification: %s", el.Key(), doc)
			}
			continue
		}
		if _, known := indexSpecFields[el.Key()]; !known {
			return spec, specError(doc, mongoerr.InvalidIndexSpecificationOption,
				"The field '%s' is not valid for an index specification. Specification: %s", el.Key(), doc)
		}
	}
	for _, el := range elems {
		key, v := el.Key(), el.Value()
		switch key {
		case "key":
			if v.Type != bson.TypeEmbeddedDocument {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field 'key' must be an object, but got %s", values.TypeName(v.Type))
			}
			spec.Key = v.Document()
			if dup, ok := repeatedField(spec.Key); ok {
				return spec, specError(doc, mongoerr.BadValue, "The field '%s' appears multiple times in the index key pattern %s", dup, spec.Key)
			}
			if plugin := keyPlugin(spec.Key); apiStrict && (plugin == "text" || plugin == "columnstore") {
				return spec, specError(doc, mongoerr.APIStrictError, "%s indexes cannot be created with apiStrict: true", plugin)
			}
		case "name":
			if v.Type != bson.TypeString {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field 'name' must be a string, but got %s", values.TypeName(v.Type))
			}
			spec.Name, hasName = v.StringValue(), true
			if strings.IndexByte(spec.Name, 0) >= 0 {
				// MongoDB 7.0 takes such a name, then writes it as a
				// (truncated) key in collStats' and validate's replies;
				// Folio names indexes by key there too, so refuses it.
				return spec, specError(doc, mongoerr.CannotCreateIndex, "The index name cannot contain a null byte")
			}
		case "unique", "sparse", "background", "dropDups", "prepareUnique", "clustered":
			if !values.IsNumber(v.Type) && v.Type != bson.TypeBoolean {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field '%s has value %s: %s, which is not convertible to bool", key, key, v)
			}
			switch key {
			case "unique":
				spec.Unique = values.Truthy(v)
			case "sparse":
				spec.Sparse = values.Truthy(v)
			case "background":
				spec.Background = v
			case "prepareUnique":
				spec.PrepareUnique = values.Truthy(v)
			case "clustered":
				spec.Clustered = values.Truthy(v)
			}
			// dropDups is checked, then dropped: MongoDB ignores it and
			// removes it from the specification (IndexCatalogImpl::
			// _fixIndexSpec, SERVER-14710).
		case "hidden":
			if v.Type != bson.TypeBoolean {
				// MongoDB names the 'name' field in this message.
				return spec, specError(doc, mongoerr.TypeMismatch, "The field 'name' must be a bool, but got %s", values.TypeName(v.Type))
			}
			spec.Hidden = v.Boolean()
		case "partialFilterExpression":
			if v.Type != bson.TypeEmbeddedDocument {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field 'partialFilterExpression' must be an object, but got %s", values.TypeName(v.Type))
			}
			spec.Partial = v.Document()
			// validateIndexSpec parses the filter with no special
			// feature allowed (kBanAllSpecialFeatures).
			f, err := query.CompileAllowed(spec.Partial, nil, nil, query.NoFeatures)
			if err != nil {
				return spec, mongoerr.AddContext(err, "Error in specification "+values.ShellDoc(doc))
			}
			partial = f
		case "storageEngine":
			// checked by _isSpecOk, below
			storageEngine = v
		case "expireAfterSeconds":
			// validateIndexSpec takes any value; the TTL rules
			// (validateTTLOptions) refuse it later, below.
			hasTTL = true
			n, err := ttlSeconds(v)
			if err != nil {
				ttlErr = mongoerr.AddContext(err, ". Index spec: "+values.ShellDoc(doc))
			} else {
				spec.ExpireAfter = n
			}
		case "v":
			if !values.IsNumber(v.Type) {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field 'v' must be a number, but got %s", values.TypeName(v.Type))
			}
			f, _ := values.Float64(v)
			switch {
			case f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32:
				return spec, specError(doc, mongoerr.BadValue, "Index version must be representable as a 32-bit integer, but got %s", v)
			case f != 1 && f != 2:
				return spec, specError(doc, mongoerr.CannotCreateIndex, "Invalid index specification %s; cannot create an index with v=%d", doc, int32(f))
			}
			spec.Version = int32(f)
		case "collation":
			if v.Type != bson.TypeEmbeddedDocument {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field 'collation' must be an object, but got %s", values.TypeName(v.Type))
			}
			if len(v.Document()) <= 5 {
				return spec, specError(doc, mongoerr.BadValue, "The field 'collation' cannot be an empty object.")
			}
			spec.Collation = v.Document()
		case "wildcardProjection":
			// Only a wildcard index's key pattern takes one, checked
			// before its type; {"$**": "text"} is a text index's.
			if k, _ := doc.Lookup("key").DocumentOK(); !engine.IsWildcardPattern(k) {
				return spec, specError(doc, mongoerr.BadValue, "The field 'wildcardProjection' is only allowed in 'wildcard' indexes")
			}
			if v.Type != bson.TypeEmbeddedDocument {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field 'wildcardProjection' must be a non-empty object, but got %s", values.TypeName(v.Type))
			}
			spec.WildcardProjection = v.Document()
		case "weights":
			if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray && v.Type != bson.TypeString {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field 'weights' must be an object, but got %s", values.TypeName(v.Type))
			}
			spec.Text.Weights = v
		case "default_language", "language_override":
			if v.Type != bson.TypeString {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field '%s' must be a string, but got %s", key, values.TypeName(v.Type))
			}
			if key == "default_language" {
				spec.Text.DefaultLanguage = v
			} else {
				spec.Text.LanguageOverride = v
			}
		case "textIndexVersion", "min", "max", "bits", "2dsphereIndexVersion", "coarsestIndexedLevel", "finestIndexedLevel":
			// Only their type is checked here, whatever the index's type:
			// the index type they belong to reads them (engine.newIndex);
			// on another, they are kept and reported, with no effect.
			if !values.IsNumber(v.Type) {
				return spec, specError(doc, mongoerr.TypeMismatch, "The field '%s' must be a number, but got %s", key, values.TypeName(v.Type))
			}
			switch key {
			case "textIndexVersion":
				spec.Text.Version = v
			case "min":
				spec.Flat.Min = v
			case "max":
				spec.Flat.Max = v
			case "bits":
				spec.Flat.Bits = v
			case "2dsphereIndexVersion":
				spec.Sphere.Version = v
			case "coarsestIndexedLevel":
				spec.Sphere.Coarsest = v
			default:
				spec.Sphere.Finest = v
			}
		case "ns":
			// MongoDB drops the field since 4.2.
		default:
			return spec, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the index option '%s' yet", key)
		}
	}
	if spec.Key == nil {
		return spec, specError(doc, mongoerr.FailedToParse, "The 'key' field is a required property of an index specification")
	}
	if !hasName {
		return spec, specError(doc, mongoerr.FailedToParse, "The 'name' field is a required property of an index specification")
	}
	if clustered.Type != 0 {
		// clustered may only be true, and asks for unique: true, the
		// boolean (BSONObj::getBoolField reads any other value as false)
		if !spec.Clustered {
			return spec, specError(doc, mongoerr.ClusteredIndexFalse, "Value 'false' for field 'clustered' is invalid")
		}
		if u, ok := doc.Lookup("unique").BooleanOK(); !ok || !u {
			return spec, specError(doc, mongoerr.CannotCreateIndex, "The 'unique' field is required when 'clustered' is specified")
		}
	}
	if spec.Collation != nil && spec.Version == 1 {
		return spec, specError(doc, mongoerr.CannotCreateIndex, "Invalid index specification %s; cannot create an index with the 'collation' option and v=1", doc)
	}
	if spec.Text.Weights.Type != 0 && !fts.IsTextKey(spec.Key) {
		return spec, specError(doc, mongoerr.CannotCreateIndex, "Invalid index specification %s; the field 'weights' can only be specified with text indexes", doc)
	}
	if spec.Unique && spec.PrepareUnique {
		return spec, specError(doc, mongoerr.CannotCreateIndex, "Invalid index specification %s; cannot create an index with the 'unique' option and the 'prepareUnique' option", doc)
	}
	fixed := fixedIndexSpec(doc)
	idIndex := !onMeasurements && isIDIndexPattern(spec.Key)
	if idIndex {
		// (a clustered index's fields were checked above)
		fixedElems, _ := fixed.Elements()
		for _, el := range fixedElems {
			if !spec.Clustered && !idIndexSpecFields[el.Key()] {
				return spec, mongoerr.New(mongoerr.InvalidIndexSpecificationOption,
					"The field '%s' is not valid for an _id index specification. Specification: %s", el.Key(), fixed)
			}
		}
		if f, _ := values.Float64(spec.Key.Index(0).Value()); f != 1 {
			return spec, mongoerr.New(mongoerr.BadValue, "The field 'key' for an _id index must be {_id: 1}, but got %s", spec.Key)
		}
	} else {
		switch spec.Name {
		case "_id_":
			return spec, mongoerr.New(mongoerr.BadValue,
				"The index name '_id_' is reserved for the _id index, which must have key pattern {_id: 1}, found key: %s", spec.Key)
		case "*":
			return spec, mongoerr.New(mongoerr.BadValue, "The index name '*' is not valid.")
		}
		// create_indexes.cpp's validateTTLOptions, whose errors show
		// the specification as given.
		if ttlErr != nil {
			return spec, ttlErr
		}
		if hasTTL {
			if elems, _ := spec.Key.Elements(); len(elems) != 1 {
				return spec, mongoerr.New(mongoerr.CannotCreateIndex, "TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: %s", values.ShellDoc(doc))
			}
		}
	}
	if spec.Collation != nil {
		// Refused before anything is created, as MongoDB's build
		// aborts with the collection it would have created.
		if _, err := collation.Parse(spec.Collation); err != nil {
			return spec, err
		}
	}
	// IndexCatalogImpl::_isSpecOk, in its "Error in specification"
	// context with the specification the command made.
	if spec.Name == "" {
		return spec, specError(fixed, mongoerr.CannotCreateIndex, "index name cannot be empty")
	}
	if idIndex {
		// Then IndexCatalogImpl::_fixIndexSpec names an index of an _id
		// key pattern _id_ whatever name it was given, so asking for one
		// under another name asks for the _id index itself.
		spec.Name = "_id_"
	}
	if spec.Version == 1 && engine.IsWildcardPattern(spec.Key) {
		return spec, specError(fixed, mongoerr.CannotCreateIndex, "Index type 'wildcard' is not allowed with index version v: 1")
	}
	if partial != nil {
		if spec.Sparse {
			return spec, specError(fixed, mongoerr.CannotCreateIndex, "cannot mix \"partialFilterExpression\" and \"sparse\" options")
		}
		// On a time series collection's measurements the filter is
		// checked once translated to the buckets (tsColl.bucketIndex),
		// as MongoDB validates the buckets' specification.
		if !onMeasurements {
			if err := partial.CheckPartial(); err != nil {
				return spec, mongoerr.AddContext(err, "Error in specification "+values.ShellDoc(fixed))
			}
		}
	}
	if storageEngine.Type != 0 {
		if storageEngine.Type != bson.TypeEmbeddedDocument {
			return spec, specError(fixed, mongoerr.CannotCreateIndex, "\"storageEngine\" options must be a document if present")
		}
		if len(storageEngine.Document()) <= 5 {
			return spec, specError(fixed, mongoerr.CannotCreateIndex, "Empty \"storageEngine\" options are invalid. Please remove the field or include valid options.")
		}
		spec.StorageEngine = storageEngine.Document()
	}
	return spec, nil
}

// fixedIndexSpec is an index specification as validateIndexSpec returns
// it to createIndexes: without the ns field MongoDB dropped in 4.2, with
// the default index version, v: 2, appended when it has none.
func fixedIndexSpec(doc bson.Raw) bson.Raw {
	elems, _ := doc.Elements()
	out := bsoncore.NewDocumentBuilder()
	hasV := false
	for _, el := range elems {
		switch el.Key() {
		case "ns":
			continue
		case "v":
			hasV = true
		}
		v := el.Value()
		out.AppendValue(el.Key(), bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	}
	if !hasV {
		out.AppendInt32("v", 2)
	}
	return bson.Raw(out.Build())
}

// ttlSeconds reads an index's expireAfterSeconds with MongoDB's rules for
// secondary TTL indexes (index_key_validate's validateExpireAfterSeconds):
// a number, not NaN, a 32-bit integer (fractions are truncated), not
// negative. MongoDB's type message has no closing quote.
func ttlSeconds(v bson.RawValue) (int64, error) {
	if !values.IsNumber(v.Type) {
		return 0, mongoerr.New(mongoerr.CannotCreateIndex,
			"TTL index 'expireAfterSeconds' option must be numeric, but received a type of '%s", values.TypeName(v.Type))
	}
	f, _ := values.Float64(v)
	switch {
	case math.IsNaN(f):
		return 0, mongoerr.New(mongoerr.CannotCreateIndex, "TTL index 'expireAfterSeconds' option must not be NaN")
	case f >= maxTTLSeconds+1 || f <= math.MinInt32-1:
		return 0, mongoerr.New(mongoerr.CannotCreateIndex, "TTL index 'expireAfterSeconds' must be within the range of a 32-bit integer")
	case int64(f) < 0:
		return 0, mongoerr.New(mongoerr.CannotCreateIndex, "TTL index 'expireAfterSeconds' option cannot be less than 0")
	}
	return int64(f), nil
}

// isIDIndexPattern reports whether key is {_id: 1} or {_id: -1}, which
// MongoDB treats as the _id index's key pattern.
func isIDIndexPattern(key bson.Raw) bool {
	elems, err := key.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "_id" {
		return false
	}
	f, ok := values.Float64(elems[0].Value())
	return ok && (int32(f) == 1 || int32(f) == -1)
}

// repeatedField returns a field name that occurs twice in doc.
func repeatedField(doc bson.Raw) (string, bool) {
	elems, _ := doc.Elements()
	for i, a := range elems {
		for _, b := range elems[:i] {
			if a.Key() == b.Key() {
				return a.Key(), true
			}
		}
	}
	return "", false
}
