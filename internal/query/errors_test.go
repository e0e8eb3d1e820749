package query

import (
	"errors"
	"testing"

	"github.com/folio-db/folio/internal/mongoerr"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func ext(t testing.TB, s string) bson.Raw {
	t.Helper()
	var r bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &r); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return r
}

func checkErr(t *testing.T, what string, err error, code mongoerr.Code, msg string) {
	t.Helper()
	var me *mongoerr.Error
	if !errors.As(err, &me) {
		t.Errorf("%s: error %v, want code %d", what, err, code)
		return
	}
	if me.Code != code || (msg != "" && me.Msg != msg) {
		t.Errorf("%s: got %d %q, want %d %q", what, me.Code, me.Msg, code, msg)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		filter string
		code   mongoerr.Code
		msg    string
	}{
		{`{"$foo": 1}`, 2, "unknown top level operator: $foo. If you have a field name that starts with a '$' symbol, consider using $getField or $setField."},
		{`{"$and": [{"$in": [1]}]}`, 2, "unknown top level operator: $in. If you have a field name that starts with a '$' symbol, consider using $getField or $setField."},
		{`{"$not": {"a": 1}}`, 2, "unknown top level operator: $not. If you are trying to negate an entire expression, use $nor."},
		// undefined is no operand of an equality or a comparison
		{`{"a": {"$undefined": true}}`, 2, "cannot compare to undefined"},
		{`{"a": {"$eq": {"$undefined": true}}}`, 2, "cannot compare to undefined"},
		{`{"a": {"$ne": {"$undefined": true}}}`, 2, "cannot compare to undefined"},
		{`{"a": {"$lte": {"$undefined": true}}}`, 2, "cannot compare to undefined"},
		{`{"a": {"$all": [1, {"$undefined": true}]}}`, 2, "cannot compare to undefined"},
		{`{"a": {"$in": [1, {"$undefined": true}]}}`, 2, "InMatchExpression equality cannot be undefined"},
		{`{"a": {"$nin": [{"$undefined": true}]}}`, 2, "InMatchExpression equality cannot be undefined"},
		{`{"a": {"$foo": 1}}`, 2, "unknown operator: $foo"},
		{`{"a": {"$gt": 1, "b": 1}}`, 2, "unknown operator: b"},
		{`{"a": {"$in": 1}}`, 2, "$in needs an array"},
		{`{"a": {"$nin": 1}}`, 2, "$nin needs an array"},
		{`{"a": {"$in": [{"$gt": 1}]}}`, 2, "cannot nest $ under $in"},
		{`{"a": {"$size": "1"}}`, 2, "$size needs a number"},
		{`{"a": {"$size": -1}}`, 2, "$size may not be negative"},
		{`{"a": {"$size": 1.5}}`, 2, "$size must be a whole number"},
		{`{"a": {"$size": {"$numberLong": "9999999999"}}}`, 2, "$size must be representable as a 32-bit integer"},
		{`{"$and": []}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$or": []}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$or": 1}`, 2, "$or must be an array"},
		{`{"$nor": {}}`, 2, "$nor must be an array"},
		{`{"$or": [1]}`, 2, "$or/$and/$nor entries need to be full objects"},
		{`{"a": {"$regex": 1}}`, 2, "$regex has to be a string"},
		{`{"a": {"$regex": "x", "$options": 1}}`, 2, "$options has to be a string"},
		{`{"a": {"$options": "i"}}`, 2, "$options needs a $regex"},
		{`{"a": {"$regex": {"$regularExpression": {"pattern": "x", "options": "i"}}, "$options": "i"}}`, 51075, "options set in both $regex and $options"},
		{`{"a": {"$regex": "x", "$options": "z"}}`, 51108, "invalid flag in regex options: z"},
		{`{"a": {"$regex": "(?<=a"}}`, 51091, ""},
		{`{"a": {"$regex": "ab\u0000c"}}`, 2, "Regular expression cannot contain an embedded null byte"},
		{`{"a": {"$regex": "a\\Kb"}}`, 238, ""},
		{`{"a": {"$not": 1}}`, 2, "$not needs a regex or a document"},
		{`{"a": {"$not": {}}}`, 2, "$not cannot be empty"},
		{`{"a": {"$not": {"$bad": 1}}}`, 2, "unknown operator: $bad"},
		{`{"a": {"$mod": 1}}`, 2, "malformed mod, needs to be an array"},
		{`{"a": {"$mod": [1]}}`, 2, "malformed mod, not enough elements"},
		{`{"a": {"$mod": [1, 2, 3]}}`, 2, "malformed mod, too many elements"},
		{`{"a": {"$mod": [0, 1]}}`, 2, "divisor cannot be 0"},
		{`{"a": {"$mod": [{"$numberDecimal": "9223372036854775808.5"}, 1]}}`, 2, "malformed mod, divisor value is invalid :: caused by :: Out of bounds coercing to integral value"},
		{`{"a": {"$mod": ["a", 1]}}`, 2, "malformed mod, divisor not a number"},
		{`{"a": {"$mod": [1, "a"]}}`, 2, "malformed mod, remainder not a number"},
		{`{"a": {"$mod": [{"$numberDouble": "NaN"}, 1]}}`, 2, "malformed mod, divisor value is invalid :: caused by :: Unable to coerce NaN/Inf to integral type"},
		{`{"a": {"$mod": [1e19, 0]}}`, 2, "malformed mod, divisor value is invalid :: caused by :: Out of bounds coercing to integral value"},
		{`{"a": {"$mod": [4, -1e19]}}`, 2, "malformed mod, remainder value is invalid :: caused by :: Out of bounds coercing to integral value"},
		{`{"a": {"$mod": [{"$numberDecimal": "9999999999999999999999"}, 0]}}`, 2, "malformed mod, divisor value is invalid :: caused by :: Out of bounds coercing to integral value"},
		{`{"a": {"$all": 1}}`, 2, "$all needs an array"},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, 1]}}`, 2, "$all/$elemMatch has to be consistent"},
		{`{"a": {"$all": [{"$gt": 1}]}}`, 2, "no $ expressions in $all"},
		{`{"a": {"$elemMatch": 1}}`, 2, "$elemMatch needs an Object"},
		{`{"a": {"$elemMatch": {"$where": "1"}}}`, 2, "$elemMatch cannot contain $where expression"},
		{`{"a": {"$elemMatch": {"b": {"$bad": 1}}}}`, 2, "unknown operator: $bad"},
		{`{"a": {"$gt": {"$regularExpression": {"pattern": "x", "options": ""}}}}`, 2, "Can't have RegEx as arg to predicate over field 'a'."},
		{`{"a": {"$ne": {"$regularExpression": {"pattern": "x", "options": ""}}}}`, 2, "Can't have regex as arg to $ne."},
		{`{"a": {"$type": "foo"}}`, 2, "Unknown type name alias: foo"},
		{`{"a": {"$type": 100}}`, 2, "Invalid numerical type code: 100"},
		{`{"a": {"$type": "missing"}}`, 2, "'missing' is not a legal type name. To query for non-existence of a field, use {$exists:false}."},
		{`{"a": {"$type": 0}}`, 2, "Invalid numerical type code: 0. Instead use {$exists:false}."},
		{`{"a": {"$type": -0.0}}`, 2, "Invalid numerical type code: -0. Instead use {$exists:false}."},
		{`{"a": {"$type": {"$numberDecimal": "0"}}}`, 2, "Invalid numerical type code: 0. Instead use {$exists:false}."},
		{`{"a": {"$type": 1e20}}`, 2, "Invalid numerical type code: 1e+20"},
		{`{"a": {"$type": {"$numberLong": "1099511627776"}}}`, 2, "Invalid numerical type code: 1.09951e+12"},
		{`{"a": {"$type": 2147483647}}`, 2, "Invalid numerical type code: 2.14748e+09"},
		{`{"a": {"$type": {"$numberDouble": "NaN"}}}`, 2, "Invalid numerical type code: nan"},
		{`{"a": {"$type": 1.5}}`, 2, "Invalid numerical type code: 1.5"},
		{`{"a": {"$type": []}}`, 9, "a must match at least one type"},
		{`{"a.b": {"$not": {"$type": []}}}`, 9, "a.b must match at least one type"},
		{`{"a": {"$type": {}}}`, 14, "type must be represented as a number or a string"},
		// without an operation's script context (Compile), as in a
		// validator or an aggregation $match
		{`{"$where": "this.a == 1"}`, 2, "$where is not allowed in this context"},
		{`{"a": {"$where": 1}}`, 2, "$where cannot be applied to a field"},
		{`{"$expr": {"$foo": 1}}`, 168, "Unrecognized expression '$foo'"},
		{`{"$expr": "$$undefinedVar"}`, 17276, "Use of undefined variable: undefinedVar"},
		{`{"$or": [{"$expr": {"$add": [1], "$sub": 2}}]}`, 15983, "An object representing an expression must have exactly one field: { $add: [ 1 ], $sub: 2 }"},
		{`{"$expr": {"$type": 42, "$op": 42}}`, 15983, "An object representing an expression must have exactly one field: { $type: 42, $op: 42 }"},
		{`{"a": {"$elemMatch": {"$expr": {"$eq": ["$a", 1]}}}}`, 2, "$expr can only be applied to the top-level document"},
		{`{"a": {"$_internalExprEq": [1]}}`, 2, "$_internalExprEq cannot be used to compare to type: array"},
		{`{"a": {"$_internalExprLt": {"$undefined": true}}}`, 2, "$_internalExprLt cannot be used to compare to type: undefined"},
		{`{"$text": 1}`, 2, "$text expects an object"},
		{`{"$text": {}}`, 4, "Missing expected field \"$search\""},
		{`{"$text": {"$search": 1}}`, 14, "\"$search\" had the wrong type. Expected string, found int"},
		{`{"$text": {"$search": "x", "$caseSensitive": 1}}`, 14, "\"$caseSensitive\" had the wrong type. Expected bool, found int"},
		{`{"$text": {"$search": "x", "$language": true}}`, 14, "\"$language\" had the wrong type. Expected string, found bool"},
		{`{"$text": {"$search": "x", "$foo": 1}}`, 2, "extra fields in $text"},
		{`{"a": {"$elemMatch": {"$text": {"$search": "x"}}}}`, 2, "$text can only be applied to the top-level document"},
		{`{"$jsonSchema": 1}`, 14, "$jsonSchema must be an object"},
		{`{"a": {"$jsonSchema": {}}}`, 2, "unknown operator: $jsonSchema"},
		{`{"$jsonSchema": {"foo": 1}}`, 9, "Unknown $jsonSchema keyword: foo"},
		{`{"$jsonSchema": {"properties": {"a": {"foo": 1}}}}`, 9, "Unknown $jsonSchema keyword: foo"},
		{`{"$jsonSchema": {"items": {"allOf": [{"foo": 1}]}}}`, 9, "Unknown $jsonSchema keyword: foo"},
		{`{"$jsonSchema": {"format": "date"}}`, 9, "$jsonSchema keyword 'format' is not currently supported"},
		{`{"$jsonSchema": {"$ref": "#/x"}}`, 9, "$jsonSchema keyword '$ref' is not currently supported"},
		// encrypt and encryptMetadata as MongoDB's translateEncryptionKeywords
		// and its EncryptionInfo/EncryptionMetadata IDL parse them
		{`{"$jsonSchema": {"properties": {"a": {"encrypt": {}, "bsonType": "object"}}}}`, 9, "$jsonSchema keyword 'encrypt' cannot be used in conjunction with 'bsonType', 'encrypt' implies type 'bsonType::BinData'"},
		{`{"$jsonSchema": {"encrypt": {}, "encryptMetadata": {"keyId": "/k"}}}`, 9, "Cannot specify both $jsonSchema keywords 'encrypt' and 'encryptMetadata'"},
		{`{"$jsonSchema": {"encryptMetadata": {}}}`, 9, "$jsonSchema keyword 'encryptMetadata' cannot be an empty object "},
		{`{"$jsonSchema": {"properties": {"a": {"encrypt": []}}}}`, 14, "$jsonSchema keyword 'encrypt' must be an object "},
		{`{"$jsonSchema": {"properties": {"a": {"encrypt": {"foo": 1}}}}}`, 40415, "BSON field 'encrypt.foo' is an unknown field."},
		{`{"$jsonSchema": {"encryptMetadata": {"bsonType": "int"}}}`, 40415, "BSON field 'encryptMetadata.bsonType' is an unknown field."},
		{`{"$jsonSchema": {"encryptMetadata": {"algorithm": "AES"}}}`, 2, "Enumeration value 'AES' for field 'encryptMetadata.algorithm' is not a valid value."},
		{`{"$jsonSchema": {"properties": {"a": {"encrypt": {"algorithm": 1}}}}}`, 14, "BSON field 'encrypt.algorithm' is the wrong type 'int', expected type 'string'"},
		{`{"$jsonSchema": {"properties": {"a": {"encrypt": {"bsonType": "foo"}}}}}`, 2, "Unknown type name alias: foo"},
		{`{"$jsonSchema": {"properties": {"a": {"encrypt": {"keyId": 1}}}}}`, 51085, "Expected either string or array of UUID for EncryptSchemaKeyId, found int"},
		{`{"$jsonSchema": {"properties": {"a": {"encrypt": {"keyId": [{"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "00"}}]}}}}}`, 51084, "Array elements must have type UUID, found 0"},
		{`{"$jsonSchema": {"title": 1}}`, 14, "$jsonSchema keyword 'title' must be of type string"},
		{`{"$jsonSchema": {"type": "object", "bsonType": "object"}}`, 9, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'"},
		{`{"$jsonSchema": {"type": "integer"}}`, 9, "$jsonSchema type 'integer' is not currently supported."},
		{`{"$jsonSchema": {"bsonType": ["int", "integer"]}}`, 9, "$jsonSchema type 'integer' is not currently supported."},
		{`{"$jsonSchema": {"type": "int"}}`, 2, "Unknown type name alias: int"},
		{`{"$jsonSchema": {"bsonType": "foo"}}`, 2, "Unknown type name alias: foo"},
		{`{"$jsonSchema": {"bsonType": 2}}`, 14, "$jsonSchema keyword 'bsonType' must be either a string or an array of strings"},
		{`{"$jsonSchema": {"type": [1]}}`, 14, "$jsonSchema keyword 'type' array elements must be strings"},
		{`{"$jsonSchema": {"type": ["string", "string"]}}`, 9, "$jsonSchema keyword 'type' has duplicate value: string"},
		{`{"$jsonSchema": {"type": []}}`, 9, "$jsonSchema keyword 'type' must name at least one type"},
		{`{"$jsonSchema": {"minimum": "1"}}`, 14, "$jsonSchema keyword 'minimum' must be a number"},
		{`{"$jsonSchema": {"maximum": 1, "exclusiveMaximum": 1}}`, 14, "$jsonSchema keyword 'exclusiveMaximum' must be a boolean"},
		{`{"$jsonSchema": {"exclusiveMinimum": true}}`, 9, "$jsonSchema keyword 'minimum' must be a present if exclusiveMinimum is present"},
		{`{"$jsonSchema": {"multipleOf": 0}}`, 9, "$jsonSchema keyword 'multipleOf' must have a positive value"},
		{`{"$jsonSchema": {"multipleOf": {"$numberDecimal": "-0.5"}}}`, 9, "$jsonSchema keyword 'multipleOf' must have a positive value"},
		{`{"$jsonSchema": {"multipleOf": "2"}}`, 14, "$jsonSchema keyword 'multipleOf' must be a number"},
		{`{"$jsonSchema": {"minLength": -1}}`, 9, ""},
		{`{"$jsonSchema": {"maxItems": 1.5}}`, 9, ""},
		{`{"$jsonSchema": {"minProperties": "1"}}`, 9, ""},
		{`{"$jsonSchema": {"maxLength": {"$numberDouble": "NaN"}}}`, 9, "Expected an integer, but found NaN in: maxLength: nan.0"},
		{`{"$jsonSchema": {"maxLength": {"$numberDecimal": "2.5"}}}`, 9, "Cannot represent as a 64-bit integer: maxLength: 2.5"},
		{`{"$jsonSchema": {"maxItems": {"$numberDouble": "1e19"}}}`, 9, "Cannot represent as a 64-bit integer: maxItems: 1e+19.0"},
		{`{"$jsonSchema": {"minItems": -2}}`, 9, "Expected a positive number in: minItems: -2"},
		{`{"$_internalSchemaMinProperties": -1}`, 9, "Expected a positive number in: $_internalSchemaMinProperties: -1"},
		{`{"$_internalSchemaMaxProperties": {"$numberDecimal": "2.5"}}`, 9, "Cannot represent as a 64-bit integer: $_internalSchemaMaxProperties: 2.5"},
		{`{"$jsonSchema": {"pattern": 1}}`, 14, "$jsonSchema keyword 'pattern' must be a string"},
		{`{"$jsonSchema": {"pattern": "(?<=a"}}`, 51091, ""},
		{`{"$jsonSchema": {"uniqueItems": 1}}`, 14, "$jsonSchema keyword 'uniqueItems' must be a boolean"},
		{`{"$jsonSchema": {"items": 1}}`, 14, "$jsonSchema keyword 'items' must be an array or an object, not int"},
		{`{"$jsonSchema": {"items": [1]}}`, 14, "$jsonSchema keyword 'items' requires that each element of the array is an object, but found a int"},
		{`{"$jsonSchema": {"additionalItems": 1}}`, 14, "$jsonSchema keyword 'additionalItems' must be either an object or a boolean, but got a int"},
		{`{"$jsonSchema": {"required": "a"}}`, 14, "$jsonSchema keyword 'required' must be an array, but found an element of type string"},
		{`{"$jsonSchema": {"required": [1]}}`, 14, "$jsonSchema keyword 'required' must be an array of strings, but found an element of type: int"},
		{`{"$jsonSchema": {"required": []}}`, 9, "$jsonSchema keyword 'required' cannot be an empty array"},
		{`{"$jsonSchema": {"required": ["a", "a"]}}`, 9, "$jsonSchema keyword 'required' array cannot contain duplicate values"},
		{`{"$jsonSchema": {"properties": 1}}`, 14, "$jsonSchema keyword 'properties' must be an object"},
		{`{"$jsonSchema": {"properties": {"a": 1}}}`, 14, "Nested schema for $jsonSchema property 'a' must be an object"},
		{`{"$jsonSchema": {"patternProperties": {"a": 1}}}`, 14, "$jsonSchema keyword 'patternProperties' has property 'a' which is not an object"},
		{`{"$jsonSchema": {"additionalProperties": "no"}}`, 14, "$jsonSchema keyword 'additionalProperties' must be an object or a boolean"},
		{`{"$jsonSchema": {"dependencies": {"a": 1}}}`, 14, "property 'a' in $jsonSchema keyword 'dependencies' must be either an object or an array"},
		{`{"$jsonSchema": {"dependencies": {"a": []}}}`, 9, "property 'a' in $jsonSchema keyword 'dependencies' cannot be an empty array"},
		{`{"$jsonSchema": {"dependencies": {"a": ["b", "b"]}}}`, 9, "array 'a' in $jsonSchema keyword 'dependencies' contains duplicate element: b"},
		{`{"$jsonSchema": {"allOf": {}}}`, 14, "$jsonSchema keyword 'allOf' must be an array"},
		{`{"$jsonSchema": {"anyOf": []}}`, 2, "$jsonSchema keyword 'anyOf' must be a non-empty array"},
		{`{"$jsonSchema": {"oneOf": [1]}}`, 14, "$jsonSchema keyword 'oneOf' must be an array of objects, but found an element of type int"},
		{`{"$jsonSchema": {"not": []}}`, 14, "$jsonSchema keyword 'not' must be an object, but found an element of type array"},
		{`{"$jsonSchema": {"enum": 1}}`, 14, "$jsonSchema keyword 'enum' must be an array, but found an element of type int"},
		{`{"$jsonSchema": {"enum": []}}`, 9, "$jsonSchema keyword 'enum' cannot be an empty array"},
		{`{"$jsonSchema": {"enum": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]}}`, 9, "$jsonSchema keyword 'enum' array cannot contain duplicate values."},
		{`{"a": {"$near": "x"}}`, 2, ""},
		{`{"a": {"$geoWithin": {"$foo": 1}}}`, 2, ""},
		{`{"a": {"$geoWithin": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}}`, 2, ""},
		{`{"a": {"$geoIntersects": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 0]]]}}}}`, 2, ""},
		{`{"a": {"$geoIntersects": {"$geometry": {"type": "Point", "coordinates": [200, 0]}}}}`, 2, "longitude/latitude is out of bounds, lng: 200 lat: 0"},
		{`{"a": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]], "crs": {}}}}}`, 2, `GeoJSON CRS must have field "type": "name"`},
		{`{"a": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]], "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}}}}`, 238, ""},
		{`{"a": {"$geoIntersects": {"$geometry": {"type": "Point", "coordinates": [0, 0], "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}}}}`, 2, ""},
		{`{"a": {"$geoIntersects": {"$geometry": {"type": "Point", "coordinates": [0, 0], "crs": {"type": "name", "properties": {"name": "EPSG:3857"}}}}}}`, 2, "Unknown CRS name: EPSG:3857"},
		{`{"a": {"$geoIntersects": {"$geometry": [200, 0]}}}`, 2, "longitude/latitude is out of bounds, lng: 200 lat: 0"},
		{`{"a": {"$geoWithin": {"$center": 5}}}`, 2, "unknown geo specifier: $center: 5"},
		{`{"a": {"$geoWithin": {"$box": "x"}}}`, 2, ""},
		{`{"a": {"$geoWithin": {"$box": [[0, {"$numberDouble": "NaN"}], [1, 1]]}}}`, 2, "Point coordinates must be finite numbers"},
		{`{"a": {"$geoWithin": {"$polygon": [[0, 0], [1, 1, 1], [1, 0]]}}}`, 2, "Point must only contain two numeric elements"},
		{`{"a": {"$geoWithin": {"$center": [[0, 0], {"$numberDouble": "NaN"}]}}}`, 2, "radius must be a non-negative number"},
		// a near point that is no legacy pair nor [x, y, maxDistance] is
		// read as the GeoJSON form (GeoNearExpression::parseNewQuery)
		{`{"a": {"$near": [{"$numberDouble": "NaN"}, 0]}}`, 2, "invalid argument in geo near query: 0"},
		{`{"a": {"$nearSphere": [0, {"$numberDouble": "-Infinity"}]}}`, 2, "invalid argument in geo near query: 0"},
		{`{"a": {"$near": {"type": "Point", "coordinates": [200, 0]}}}`, 2, "invalid argument in geo near query: type"},
		{`{"a": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}, "$minDistance": 0.1}}`, 2, "geo near accepts just one argument when querying for a GeoJSON point. Extra field found: $minDistance: 0.1"},
		{`{"a": {"$near": {"$geometry": [0, 0]}}}`, 2, "$near requires geojson point, given { 0: 0, 1: 0 }"},
		{`{"a": {"$near": {"$geometry": 1}}}`, 2, "$geometry is required for geo near query"},
		{`{"a": {"$near": [0, 0, -1]}}`, 18522, "max distance must be non-negative"},
		{`{"a": {"$nearSphere": [179, -91]}}`, 2, "Legacy point is out of bounds for spherical query"},
		{`{"a": {"$geoNear": [0, 0], "$maxDistance": -1}}`, 16896, "$maxDistance must be non-negative"},
		{`{"a": {"$uniqueDocs": true}}`, 2, "unknown operator: $uniqueDocs"},
		{`{"a": {"$geoWithin": {"$box": [[0, 0], [1, 1]], "$uniqueDocs": true}}}`, 2, "$geoWithin doesn't accept multiple shapes $geoWithin: { $box: [ [ 0, 0 ], [ 1, 1 ] ], $uniqueDocs: true }"},
		{`{"a": {"$geoWithin": {"$uniqueDocs": true}}}`, 2, "geo query doesn't have any geometry"},
		{`{"a": {"$geoWithin": {"$centerSphere": [[0, 91], 1]}}}`, 2, "longitude/latitude is out of bounds, lng: 0 lat: 91"},
		{`{"a": {"$maxDistance": 1}}`, 2, "unknown operator: $maxDistance"},
		{`{"a": {"$nearSphere": [0, 0], "$maxDistance": -1}}`, 16896, "$maxDistance must be non-negative"},
		{`{"a": {"$near": [0, 0], "$minDistance": "x"}}`, 16893, "$minDistance must be a number"},
		{`{"a": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}, "$minDistance": "x"}}}`, 2, "$minDistance must be a number"},
		{`{"a": {"$nearSphere": {"$maxDistance": 1}}}`, 2, ""},
		{`{"a": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}, "$x": 1}}}`, 2, "invalid argument in geo near query: $x"},
		{`{"a": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}, "$eq": 1}}`, 34413, ""},
		{`{"a": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}, "$nearSphere": [0, 0]}}`, 2, "can't parse extra field: $nearSphere"},
		{`{"a": {"$exists": true, "$geoWithin": {"$box": [[0, 0], [1, 1]]}}}`, 2, "can't parse extra field: $geoWithin: { $box: [ [ 0, 0 ], [ 1, 1 ] ] }"},
		{`{"a": {"$geoWithin": {"$box": [[0, 0], [1, 1]]}, "$exists": true}}`, 2, "can't parse extra field: $exists: true"},
		{`{"a": {"$geoIntersects": {"$geometry": [0, 0]}, "$geoWithin": {"$box": [[0, 0], [1, 1]]}}}`, 2, "can't parse extra field: $geoWithin: { $box: [ [ 0, 0 ], [ 1, 1 ] ] }"},
		// GeoExpression::parseQuery and parseFrom, GeoParser::parseLegacyCenter
		{`{"a": {"$geoWithin": 5}}`, 2, "geometry must be an object"},
		{`{"a": {"$geoIntersects": [1]}}`, 2, "geometry must be an object"},
		{`{"a": {"$geoIntersects": {"$box": [[0, 0], [1, 1]]}}}`, 2, "$geoIntersect not supported with provided geometry: { $geoIntersects: { $box: [ [ 0, 0 ], [ 1, 1 ] ] } }"},
		{`{"a": {"$geoIntersects": {"$center": [[0, 0]]}}}`, 2, "radius must be a non-negative number"},
		{`{"a": {"$geoIntersects": {"$centerSphere": [[0, 0], 1]}}}`, 238, ""},
		{`{"a": {"$geoIntersects": {"$uniqueDocs": true, "$foo": 1}}}`, 2, "unknown geo specifier: $foo: 1"},
		{`{"a": {"$geoWithin": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}}`, 2, "$within not supported with provided geometry: { $geoWithin: { $geometry: { type: \"Point\", coordinates: [ 0, 0 ] } } }"},
		{`{"a": {"$within": {"$geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}}}`, 2, "$within not supported with provided geometry: { $within: { $geometry: { type: \"LineString\", coordinates: [ [ 0, 0 ], [ 1, 1 ] ] } } }"},
		{`{"a": {"$geoWithin": {"$center": [[0, 0], 1, 2]}}}`, 2, "Only 2 fields allowed for circular region"},
		{`{"a": {"$geoWithin": {"$center": [[0, 0]]}}}`, 2, "radius must be a non-negative number"},
		{`{"a": {"$geoWithin": {"$center": []}}}`, 2, "Point must be an array or object, instead got type missing"},
		{`{"a": {"$geoWithin": {"$centerSphere": [[0, 91]]}}}`, 2, "longitude/latitude is out of bounds, lng: 0 lat: 91"},
		// BadValue, each value shown with its name (MongoDB 7.0.8's replies)
		{`{"a": {"$bitsAllSet": -1}}`, 9, "Expected a non-negative number in: $bitsAllSet: -1"},
		{`{"a": {"$bitsAllSet": 1.5}}`, 9, "Expected an integer: $bitsAllSet: 1.5"},
		{`{"a": {"$bitsAnySet": {"$numberDouble": "NaN"}}}`, 9, "Expected an integer, but found NaN in: $bitsAnySet: nan.0"},
		{`{"a": {"$bitsAllClear": 1e19}}`, 9, "Cannot represent as a 64-bit integer: $bitsAllClear: 1e+19.0"},
		{`{"a": {"$bitsAnyClear": {"$numberDecimal": "2.5"}}}`, 9, "Cannot represent as a 64-bit integer: $bitsAnyClear: 2.5"},
		{`{"a": {"$bitsAllSet": "x"}}`, 2, `a takes an Array, a number, or a BinData but received: $bitsAllSet: "x"`},
		{`{"a": {"$bitsAnySet": [-1]}}`, 2, "Failed to parse bit position. Expected a non-negative number in: 0: -1"},
		{`{"a": {"$bitsAnySet": ["x"]}}`, 2, `Failed to parse bit position. Expected a number in: 0: "x"`},
		{`{"a": {"$bitsAnySet": [1, 1.2]}}`, 2, "Failed to parse bit position. Expected an integer: 1: 1.2"},
		{`{"$alwaysTrue": 2}`, 9, "$alwaysTrue must be an integer value of 1"},
		{`{"$sampleRate": "0.5"}`, 2, "argument to $sampleRate must be a numeric type"},
		{`{"$sampleRate": 1.5}`, 2, "numeric argument to $sampleRate must be in [0, 1]"},
		{`{"$sampleRate": {"$numberDouble": "NaN"}}`, 2, "numeric argument to $sampleRate must be in [0, 1]"},
		{`{"$or": [{"a": {"$bad": 1}}]}`, 2, "unknown operator: $bad"},
	}
	for _, tt := range tests {
		_, err := Compile(ext(t, tt.filter))
		checkErr(t, tt.filter, err, tt.code, tt.msg)
	}
}

func TestWalkTree(t *testing.T) {
	f, err := Compile(ext(t, `{"a": {"$gt": 1, "$ne": 5}, "$or": [{"b": {"$in": [1, 2]}}, {"c.d": {"$regularExpression": {"pattern": "x", "options": ""}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	Walk(f.Root(), func(n *Node) bool {
		got = append(got, n.Kind.String()+":"+n.Path)
		return true
	})
	want := []string{"$and:", "$gt:a", "$not:", "$eq:a", "$or:", "$in:b", "$regex:c.d"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// TestSampleRate: $sampleRate matches nothing at 0, everything at 1, and
// each document with the rate's probability between.
func TestSampleRate(t *testing.T) {
	doc := ext(t, `{"a": 1}`)
	for _, tt := range []struct {
		filter    string
		low, high int // matches of 1000 tries
	}{
		{`{"$sampleRate": 0}`, 0, 0},
		{`{"$sampleRate": {"$numberLong": "1"}}`, 1000, 1000},
		{`{"$sampleRate": 0.25, "a": 1}`, 150, 350},
		{`{"$sampleRate": 0.25, "a": 2}`, 0, 0},
	} {
		f, err := Compile(ext(t, tt.filter))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range 1000 {
			if f.Match(doc) {
				n++
			}
		}
		if n < tt.low || n > tt.high {
			t.Errorf("%s matched %d of 1000, want %d to %d", tt.filter, n, tt.low, tt.high)
		}
	}
}

// MongoDB allows one $near, top-level once the filter is normalized
// (CanonicalQuery::isValid, isValidNormalized).
func TestGeoNearPlacement(t *testing.T) {
	for _, tc := range []struct {
		filter string
		msg    string // "": allowed
	}{
		{`{"a": {"$near": [0, 0]}}`, ""},
		{`{"$and": [{"b": 1}, {"a": {"$near": [0, 0]}}]}`, ""},
		{`{"$or": [{"a": {"$near": [0, 0]}}]}`, ""},
		{`{"$or": [{"a": {"$near": [0, 0]}}, {"b": 1}]}`, "geo $near must be top-level expr"},
		{`{"$nor": [{"a": {"$near": [0, 0]}}]}`, "geo $near must be top-level expr"},
		{`{"a": {"$near": [0, 0]}, "b": {"$nearSphere": [0, 0]}}`, "Too many geoNear expressions"},
	} {
		f, err := Compile(ext(t, tc.filter))
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		_, err = f.GeoNear()
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.filter, err)
			}
			continue
		}
		checkErr(t, tc.filter, err, 2, tc.msg)
	}
}

// TestCompileAllowedErrors: a special feature a filter may not use fails
// where the parser meets it, before its argument is read and before the
// clauses after it, as MongoDB's parse functions check allowedFeatures
// first (parseExpr, parseWhere, parseText, parseJSONSchema, parseGeo).
func TestCompileAllowedErrors(t *testing.T) {
	tests := []struct {
		filter  string
		allowed Features
		code    mongoerr.Code
		msg     string
	}{
		{`{"$expr": "$$undefinedVar"}`, NoFeatures, 224, "$expr is not allowed in this context"},
		{`{"$and": [{"$expr": {"$foo": 1}}]}`, NoFeatures, 224, "$expr is not allowed in this context"},
		{`{"$expr": {"$eq": [1, 1]}, "a": {"$foo": 1}}`, NoFeatures, 224, "$expr is not allowed in this context"},
		{`{"a": {"$foo": 1}, "$expr": {"$eq": [1, 1]}}`, NoFeatures, 2, "unknown operator: $foo"},
		{`{"$expr": "$$undefinedVar"}`, AllFeatures &^ FeatureExpr, 224, "$expr is not allowed in this context"},
		{`{"$jsonSchema": {"bad": 1}}`, NoFeatures, 224, "$jsonSchema is not allowed in this context"},
		{`{"$text": 5}`, DefaultFeatures, 2, "$text is not allowed in this context"},
		{`{"a": {"$elemMatch": {"$where": "1"}}}`, NoFeatures, 2, "$where is not allowed in this context"},
		{`{"a": {"$elemMatch": {"$expr": {"$foo": 1}}}}`, NoFeatures, 2, "$expr can only be applied to the top-level document"},
		{`{"a": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}, "$eq": 1}}`, DefaultFeatures, 5626500, "$geoNear, $near, and $nearSphere are not allowed in this context, as these operators require sorting geospatial data. If you do not need sort, consider using $geoWithin instead. Check out https://dochub.mongodb.org/core/near-sort-operation and https://dochub.mongodb.org/core/nearSphere-sort-operationfor more details."},
		{`{"a": {"$elemMatch": {"b": {"$nearSphere": "x"}}}}`, NoFeatures, 5626500, "$geoNear, $near, and $nearSphere are not allowed in this context, as these operators require sorting geospatial data. If you do not need sort, consider using $geoWithin instead. Check out https://dochub.mongodb.org/core/near-sort-operation and https://dochub.mongodb.org/core/nearSphere-sort-operationfor more details."},
	}
	for _, tt := range tests {
		_, err := CompileAllowed(ext(t, tt.filter), nil, nil, tt.allowed)
		checkErr(t, tt.filter, err, tt.code, tt.msg)
	}
	// parseSampleRate checks no feature: its $expr is MongoDB's own
	if _, err := CompileAllowed(ext(t, `{"$sampleRate": 0.5}`), nil, nil, NoFeatures); err != nil {
		t.Errorf("$sampleRate without features: %v", err)
	}
}
