package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestValidationDetails checks errInfo.details for each operator family
// against the shapes of MongoDB 5.0+
// (https://www.mongodb.com/docs/v7.0/core/schema-validation/).
func TestValidationDetails(t *testing.T) {
	for _, tc := range []struct{ name, validator, doc, want string }{
		{"eq implicit", `{"a": 1}`, `{"a": 2}`,
			`{"operatorName": "$eq","specifiedAs": {"a": {"$numberInt":"1"}},"reason": "comparison failed","consideredValue": {"$numberInt":"2"}}`},
		{"missing field", `{"a": {"$lt": 1}}`, `{}`,
			`{"operatorName": "$lt","specifiedAs": {"a": {"$lt": {"$numberInt":"1"}}},"reason": "field was missing"}`},
		{"in over array", `{"a": {"$in": [5]}}`, `{"a": [1, 2]}`,
			`{"operatorName": "$in","specifiedAs": {"a": {"$in": [{"$numberInt":"5"}]}},"reason": "no matching value found in array","consideredValues": [{"$numberInt":"1"},{"$numberInt":"2"}]}`},
		{"or", `{"$or": [{"a": 1}, {"b": {"$exists": true}}]}`, `{"a": 0}`,
			`{"operatorName": "$or","clausesNotSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$eq","specifiedAs": {"a": {"$numberInt":"1"}},"reason": "comparison failed","consideredValue": {"$numberInt":"0"}}},{"index": {"$numberInt":"1"},"details": {"operatorName": "$exists","specifiedAs": {"b": {"$exists": true}},"reason": "path does not exist"}}]}`},
		{"regex", `{"s": {"$regex": "^x", "$options": "i"}}`, `{"s": "y"}`,
			`{"operatorName": "$regex","specifiedAs": {"s": {"$regex": "^x","$options": "i"}},"reason": "regular expression did not match","consideredValue": "y"}`},
		{"schema enum and pattern", `{"$jsonSchema": {"properties": {"c": {"enum": ["r", "g"]}, "s": {"pattern": "^a"}}}}`, `{"c": "b", "s": "z"}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "c","details": [{"operatorName": "enum","specifiedAs": {"enum": ["r","g"]},"reason": "value was not found in enum","consideredValue": "b"}]},{"propertyName": "s","details": [{"operatorName": "pattern","specifiedAs": {"pattern": "^a"},"reason": "regular expression did not match","consideredValue": "z"}]}]}]}`},
		{"schema additionalProperties", `{"$jsonSchema": {"properties": {"_id": {}, "a": {}}, "additionalProperties": false}}`, `{"_id": 1, "a": 1, "x": 2}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "additionalProperties","specifiedAs": {"additionalProperties": false},"additionalProperties": ["x"]}]}`},
		{"schema bsonType", `{"$jsonSchema": {"properties": {"n": {"bsonType": "string"}}}}`, `{"n": 5}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "n","details": [{"operatorName": "bsonType","specifiedAs": {"bsonType": "string"},"reason": "type did not match","consideredValue": {"$numberInt":"5"},"consideredType": "int"}]}]}]}`},
		// $jsonSchema's array, pattern, dependency and count keywords
		// (MongoDB's doc_validation_error.cpp).
		{"schema items", `{"$jsonSchema": {"properties": {"a": {"items": {"bsonType": "int", "title": "ints"}}}}}`, `{"a": [1, "x", "y"]}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "items","title": "ints","reason": "At least one item did not match the sub-schema","itemIndex": {"$numberInt":"1"},"details": [{"operatorName": "bsonType","specifiedAs": {"bsonType": "int"},"reason": "type did not match","consideredValue": "x","consideredType": "string"}]}]}]}]}`},
		{"schema items array and additionalItems", `{"$jsonSchema": {"properties": {"a": {"items": [{"bsonType": "int"}, {"bsonType": "string"}], "additionalItems": false}}}}`, `{"a": [1, 2, 3, 4]}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "items","details": [{"itemIndex": {"$numberInt":"1"},"details": [{"operatorName": "bsonType","specifiedAs": {"bsonType": "string"},"reason": "type did not match","consideredValue": {"$numberInt":"2"},"consideredType": "int"}]}]},{"operatorName": "additionalItems","specifiedAs": {"additionalItems": false},"reason": "found additional items","additionalItems": [{"$numberInt":"3"},{"$numberInt":"4"}]}]}]}]}`},
		{"schema minItems and uniqueItems", `{"$jsonSchema": {"properties": {"a": {"minItems": 4, "uniqueItems": true}}}}`, `{"a": [1, 2, 1]}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "minItems","specifiedAs": {"minItems": {"$numberInt":"4"}},"reason": "array did not match specified length","consideredValue": [{"$numberInt":"1"},{"$numberInt":"2"},{"$numberInt":"1"}],"numberOfItems": {"$numberInt":"3"}},{"operatorName": "uniqueItems","specifiedAs": {"uniqueItems": true},"reason": "found a duplicate item","consideredValue": [{"$numberInt":"1"},{"$numberInt":"2"},{"$numberInt":"1"}],"duplicatedValue": {"$numberInt":"1"}}]}]}]}`},
		// uniqueItems ignores the order of fields; the duplicate reported is
		// the first item equal to an earlier one, as it is in the array.
		{"schema uniqueItems unordered fields", `{"$jsonSchema": {"properties": {"a": {"uniqueItems": true}}}}`, `{"a": [3, {"x": 1, "y": 2}, 4, {"y": 2, "x": 1}, 3]}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "uniqueItems","specifiedAs": {"uniqueItems": true},"reason": "found a duplicate item","consideredValue": [{"$numberInt":"3"},{"x": {"$numberInt":"1"},"y": {"$numberInt":"2"}},{"$numberInt":"4"},{"y": {"$numberInt":"2"},"x": {"$numberInt":"1"}},{"$numberInt":"3"}],"duplicatedValue": {"y": {"$numberInt":"2"},"x": {"$numberInt":"1"}}}]}]}]}`},
		{"schema patternProperties", `{"$jsonSchema": {"patternProperties": {"^n_": {"bsonType": "int"}}}}`, `{"n_a": 1, "n_b": "x"}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "patternProperties","details": [{"propertyName": "n_b","regexMatched": "^n_","details": [{"operatorName": "bsonType","specifiedAs": {"bsonType": "int"},"reason": "type did not match","consideredValue": "x","consideredType": "string"}]}]}]}`},
		{"schema dependencies", `{"$jsonSchema": {"dependencies": {"card": ["billing"], "x": {"required": ["y"]}}}}`, `{"card": 1, "x": 2}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "dependencies","failingDependencies": [{"conditionalProperty": "card","missingProperties": ["billing"]},{"conditionalProperty": "x","details": [{"operatorName": "required","specifiedAs": {"required": ["y"]},"missingProperties": ["y"]}]}]}]}`},
		{"schema oneOf and minProperties", `{"$jsonSchema": {"oneOf": [{"required": ["a"]}, {"required": ["b"]}], "minProperties": 5}}`, `{"a": 1, "b": 2}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "minProperties","specifiedAs": {"minProperties": {"$numberInt":"5"}},"reason": "specified number of properties was not satisfied","numberOfProperties": {"$numberInt":"2"}},{"operatorName": "oneOf","reason": "more than one subschema matched","matchingSchemaIndexes": [{"$numberInt":"0"},{"$numberInt":"1"}]}]}`},
		// Rules come in MongoDB's translation order, not the schema's:
		// enum before type, required after properties.
		{"schema rule order", `{"$jsonSchema": {"properties": {"s": {"bsonType": "int", "enum": [1, 2], "maxLength": 1}}, "required": ["zz"], "minProperties": 9}}`, `{"s": "abc"}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "s","details": [{"operatorName": "maxLength","specifiedAs": {"maxLength": {"$numberInt":"1"}},"reason": "specified string length was not satisfied","consideredValue": "abc"},{"operatorName": "enum","specifiedAs": {"enum": [{"$numberInt":"1"},{"$numberInt":"2"}]},"reason": "value was not found in enum","consideredValue": "abc"},{"operatorName": "bsonType","specifiedAs": {"bsonType": "int"},"reason": "type did not match","consideredValue": "abc","consideredType": "string"}]}]},{"operatorName": "required","specifiedAs": {"required": ["zz"]},"missingProperties": ["zz"]},{"operatorName": "minProperties","specifiedAs": {"minProperties": {"$numberInt":"9"}},"reason": "specified number of properties was not satisfied","numberOfProperties": {"$numberInt":"1"}}]}`},
		// Under a negation, clauses are explained in the inverted sense
		// (MongoDB's doc_validation_error.cpp).
		{"nor", `{"$nor": [{"a": 1}, {"b": {"$exists": true}}, {"c": {"$gt": 5}}]}`, `{"a": 1, "c": 9}`,
			`{"operatorName": "$nor","clausesSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$eq","specifiedAs": {"a": {"$numberInt":"1"}},"reason": "comparison succeeded","consideredValue": {"$numberInt":"1"}}},{"index": {"$numberInt":"2"},"details": {"operatorName": "$gt","specifiedAs": {"c": {"$gt": {"$numberInt":"5"}}},"reason": "comparison succeeded","consideredValue": {"$numberInt":"9"}}}]}`},
		{"not", `{"a": {"$not": {"$in": [1, 2]}}}`, `{"a": 2}`,
			`{"operatorName": "$not","details": {"operatorName": "$in","specifiedAs": {"a": {"$in": [{"$numberInt":"1"},{"$numberInt":"2"}]}},"reason": "matching value found in array","consideredValue": {"$numberInt":"2"}}}`},
		{"not of two operators", `{"a": {"$not": {"$gt": 1, "$lt": 5}}}`, `{"a": 3}`,
			`{"operatorName": "$not","details": {"operatorName": "$and","clausesSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$gt","specifiedAs": {"a": {"$gt": {"$numberInt":"1"}}},"reason": "comparison succeeded","consideredValue": {"$numberInt":"3"}}},{"index": {"$numberInt":"1"},"details": {"operatorName": "$lt","specifiedAs": {"a": {"$lt": {"$numberInt":"5"}}},"reason": "comparison succeeded","consideredValue": {"$numberInt":"3"}}}]}}`},
		{"jsonSchema not", `{"$jsonSchema": {"properties": {"a": {"not": {"bsonType": "int"}}}}}`, `{"a": 1}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "not","reason": "child expression matched"}]}]}]}`},
		{"not regex", `{"s": {"$not": {"$regularExpression": {"pattern": "^x", "options": ""}}}}`, `{"s": "xy"}`,
			`{"operatorName": "$not","details": {"operatorName": "$regex","specifiedAs": {"s": {"$regularExpression":{"pattern":"^x","options":""}}},"reason": "regular expression did match","consideredValue": "xy"}}`},
		{"nor of and, or, ne, exists false", `{"$nor": [{"$and": [{"a": 1}, {"b": {"$ne": 3}}]}, {"$or": [{"z": 1}, {"d": {"$exists": false}}]}]}`, `{"a": 1, "b": 2}`,
			`{"operatorName": "$nor","clausesSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$and","clausesSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$eq","specifiedAs": {"a": {"$numberInt":"1"}},"reason": "comparison succeeded","consideredValue": {"$numberInt":"1"}}},{"index": {"$numberInt":"1"},"details": {"operatorName": "$ne","specifiedAs": {"b": {"$ne": {"$numberInt":"3"}}},"reason": "comparison failed","consideredValue": {"$numberInt":"2"}}}]}},{"index": {"$numberInt":"1"},"details": {"operatorName": "$or","clausesSatisfied": [{"index": {"$numberInt":"1"},"details": {"operatorName": "$exists","specifiedAs": {"d": {"$exists": false}},"reason": "path does not exist"}}]}}]}`},
		{"nor of nor", `{"$nor": [{"$nor": [{"a": 1}]}]}`, `{"a": 0}`,
			`{"operatorName": "$nor","clausesSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$nor","clausesNotSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$eq","specifiedAs": {"a": {"$numberInt":"1"}},"reason": "comparison failed","consideredValue": {"$numberInt":"0"}}}]}}]}`},
		// Values are gathered through the arrays on the path; one value is
		// consideredValue, none or several consideredValues
		// (doc_validation_error_test.cpp).
		{"eq through array of documents", `{"a.b": {"$eq": 2}}`, `{"a": [{"b": 3}]}`,
			`{"operatorName": "$eq","specifiedAs": {"a.b": {"$eq": {"$numberInt":"2"}}},"reason": "comparison failed","consideredValue": {"$numberInt":"3"}}`},
		{"eq through nested arrays", `{"a.b": {"$eq": 0}}`, `{"a": [{"b": [1, 2]}, {"b": [3, 4]}]}`,
			`{"operatorName": "$eq","specifiedAs": {"a.b": {"$eq": {"$numberInt":"0"}}},"reason": "comparison failed","consideredValues": [{"$numberInt":"1"},{"$numberInt":"2"},{"$numberInt":"3"},{"$numberInt":"4"}]}`},
		{"eq empty array", `{"a": {"$eq": [1, 2]}}`, `{"a": []}`,
			`{"operatorName": "$eq","specifiedAs": {"a": {"$eq": [{"$numberInt":"1"},{"$numberInt":"2"}]}},"reason": "comparison failed","consideredValues": []}`},
		{"eq by array index", `{"a.1.b": 5}`, `{"a": [{"b": 1}, {"b": 2}]}`,
			`{"operatorName": "$eq","specifiedAs": {"a.1.b": {"$numberInt":"5"}},"reason": "comparison failed","consideredValue": {"$numberInt":"2"}}`},
		// An operator none of whose values is of a type it tests reports
		// the types.
		{"regex type mismatch", `{"a": {"$regex": "^x"}}`, `{"a": [0, 1]}`,
			`{"operatorName": "$regex","specifiedAs": {"a": {"$regex": "^x"}},"reason": "type did not match","consideredType": "int","expectedTypes": ["regex","string","symbol"],"consideredValues": [{"$numberInt":"0"},{"$numberInt":"1"}]}`},
		{"bits type mismatch", `{"a": {"$bitsAnyClear": 3}}`, `{"a": "s"}`,
			`{"operatorName": "$bitsAnyClear","specifiedAs": {"a": {"$bitsAnyClear": {"$numberInt":"3"}}},"reason": "type did not match","consideredType": "string","expectedTypes": ["binData","decimal","double","int","long"],"consideredValue": "s"}`},
		{"size of a non-array", `{"a": {"$size": 2}}`, `{"a": 1}`,
			`{"operatorName": "$size","specifiedAs": {"a": {"$size": {"$numberInt":"2"}}},"reason": "type did not match","consideredType": "int","expectedType": "array","consideredValue": {"$numberInt":"1"}}`},
		{"exists false reports no value", `{"a": {"$exists": false}}`, `{"a": 1}`,
			`{"operatorName": "$exists","specifiedAs": {"a": {"$exists": false}},"reason": "path does exist"}`},
		{"alwaysFalse", `{"$alwaysFalse": 1}`, `{"a": 1}`,
			`{"operatorName": "$alwaysFalse","specifiedAs": {"$alwaysFalse": {"$numberInt":"1"}},"reason": "expression always evaluates to false"}`},
		{"schema of a type other than object", `{"$jsonSchema": {"bsonType": ["string", "int"]}}`, `{"a": 1}`,
			`{"operatorName": "$jsonSchema","specifiedAs": {"$jsonSchema": {"bsonType": ["string","int"]}},"reason": "expression always evaluates to false"}`},
		{"nor of a schema", `{"$nor": [{"$jsonSchema": {"minimum": 1}}]}`, `{"a": 2}`,
			`{"operatorName": "$nor","clausesSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$jsonSchema","reason": "schema matched"}}]}`},
		{"schema title and description", `{"$jsonSchema": {"description": "D", "title": "T", "required": ["x"]}}`, `{"a": 1}`,
			`{"operatorName": "$jsonSchema","title": "T","description": "D","schemaRulesNotSatisfied": [{"operatorName": "required","specifiedAs": {"required": ["x"]},"missingProperties": ["x"]}]}`},
		{"size", `{"a": {"$size": 2}}`, `{"a": [1]}`,
			`{"operatorName": "$size","specifiedAs": {"a": {"$size": {"$numberInt":"2"}}},"reason": "array length was not equal to given size","consideredValue": [{"$numberInt":"1"}]}`},
		// a keyword of the one type a subschema states applies to values of
		// other types too, and explains its own failure before the type's
		// (doc_validation_error_json_schema_test.cpp MinLengthNonString,
		// PatternNonString, MultipleOfNonNumeric)
		{"schema minLength beside its type", `{"$jsonSchema": {"properties": {"a": {"type": "string", "minLength": 4}}}}`, `{"a": 1}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "minLength","specifiedAs": {"minLength": {"$numberInt":"4"}},"reason": "type did not match","consideredType": "int","expectedType": "string","consideredValue": {"$numberInt":"1"}},{"operatorName": "type","specifiedAs": {"type": "string"},"reason": "type did not match","consideredValue": {"$numberInt":"1"},"consideredType": "int"}]}]}]}`},
		{"schema pattern beside its bsonType", `{"$jsonSchema": {"properties": {"a": {"bsonType": ["string"], "pattern": "^S"}}}}`, `{"a": 1}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "pattern","specifiedAs": {"pattern": "^S"},"reason": "type did not match","consideredType": "int","expectedTypes": ["regex","string","symbol"],"consideredValue": {"$numberInt":"1"}},{"operatorName": "bsonType","specifiedAs": {"bsonType": ["string"]},"reason": "type did not match","consideredValue": {"$numberInt":"1"},"consideredType": "int"}]}]}]}`},
		{"schema multipleOf and minimum beside number", `{"$jsonSchema": {"properties": {"a": {"type": "number", "multipleOf": 2, "minimum": 1}}}}`, `{"a": "foo"}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "multipleOf","specifiedAs": {"multipleOf": {"$numberInt":"2"}},"reason": "type did not match","consideredType": "string","expectedTypes": ["decimal","double","int","long"],"consideredValue": "foo"},{"operatorName": "minimum","specifiedAs": {"minimum": {"$numberInt":"1"}},"reason": "comparison failed","consideredValue": "foo"},{"operatorName": "type","specifiedAs": {"type": "number"},"reason": "type did not match","consideredValue": "foo","consideredType": "string"}]}]}]}`},
		{"schema minLength beside several types", `{"$jsonSchema": {"properties": {"a": {"bsonType": ["string", "null"], "minLength": 4}}}}`, `{"a": 1}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "bsonType","specifiedAs": {"bsonType": ["string","null"]},"reason": "type did not match","consideredValue": {"$numberInt":"1"},"consideredType": "int"}]}]}]}`},
		// encrypt (doc_validation_error_json_schema_test.cpp BasicEncrypt,
		// EncryptWithSubtypeFailsDueToMismatchedSubtype)
		{"schema encrypt", `{"$jsonSchema": {"bsonType": "object", "properties": {"a": {"encrypt": {}}}}}`, `{"a": {"$binary": {"base64": "YWJj", "subType": "00"}}}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "encrypt","reason": "value was not encrypted"}]}]}]}`},
		{"schema encrypt of a type", `{"$jsonSchema": {"bsonType": "object", "properties": {"a": {"encrypt": {"bsonType": "number"}}}}}`, `{"a": {"$binary": {"base64": "AQAAAAAAAAAAAAAAAAAAAAAC", "subType": "06"}}}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "encrypt","reason": "encrypted value has wrong type"}]}]}]}`},
		{"schema encrypt at the top", `{"$jsonSchema": {"encrypt": {}}}`, `{"a": 1}`,
			`{"operatorName": "$jsonSchema","specifiedAs": {"$jsonSchema": {"encrypt": {}}},"reason": "expression always evaluates to false"}`},
		{"schema minimum beside bsonType int", `{"$jsonSchema": {"properties": {"a": {"bsonType": "int", "maximum": 3}}}}`, `{"a": "x"}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a","details": [{"operatorName": "maximum","specifiedAs": {"maximum": {"$numberInt":"3"}},"reason": "comparison failed","consideredValue": "x"},{"operatorName": "bsonType","specifiedAs": {"bsonType": "int"},"reason": "type did not match","consideredValue": "x","consideredType": "string"}]}]}]}`},
		// A name in required, properties or dependencies is a field path;
		// required names are checked in sorted order (json_schema_parser.cpp
		// translateRequired).
		{"schema required dotted and sorted", `{"$jsonSchema": {"required": ["z", "a.b", "a.c"]}}`, `{"a": {"b": 1}}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "required","specifiedAs": {"required": ["z","a.b","a.c"]},"missingProperties": ["a.c","z"]}]}`},
		{"schema dotted property", `{"$jsonSchema": {"properties": {"a.b": {"bsonType": "string"}}}}`, `{"a": {"b": 5}}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "properties","propertiesNotSatisfied": [{"propertyName": "a.b","details": [{"operatorName": "bsonType","specifiedAs": {"bsonType": "string"},"reason": "type did not match","consideredValue": {"$numberInt":"5"},"consideredType": "int"}]}]}]}`},
		{"schema dotted dependencies", `{"$jsonSchema": {"dependencies": {"a.b": ["a.c", "d"]}}}`, `{"a": {"b": 1, "c": 1}}`,
			`{"operatorName": "$jsonSchema","schemaRulesNotSatisfied": [{"operatorName": "dependencies","failingDependencies": [{"conditionalProperty": "a.b","missingProperties": ["d"]}]}]}`},
		{"internal min properties", `{"$_internalSchemaMinProperties": 3}`, `{"a": 1}`,
			`{"operatorName": "$_internalSchemaMinProperties","specifiedAs": {"$_internalSchemaMinProperties": {"$numberInt":"3"}},"reason": "specified number of properties was not satisfied","numberOfProperties": {"$numberInt":"1"}}`},
		{"internal max properties negated", `{"$nor": [{"$_internalSchemaMaxProperties": 3}]}`, `{"a": 1}`,
			`{"operatorName": "$nor","clausesSatisfied": [{"index": {"$numberInt":"0"},"details": {"operatorName": "$_internalSchemaMaxProperties","specifiedAs": {"$_internalSchemaMaxProperties": {"$numberInt":"3"}},"reason": "specified number of properties was satisfied","numberOfProperties": {"$numberInt":"1"}}}]}`},
		// An $expr that fails to evaluate carries the failure as details
		// (code, codeName, errmsg: doc_validation_error.cpp's $expr visitor
		// serializing the exception it caught).
		{"expr fails to evaluate", `{"$expr": {"$eq": ["$a", {"$divide": [1, "$b"]}]}}`, `{"a": 1, "b": 0}`,
			`{"operatorName": "$expr","specifiedAs": {"$expr": {"$eq": ["$a",{"$divide": [{"$numberInt":"1"},"$b"]}]}},"reason": "failed to evaluate aggregation expression","details": {"code": {"$numberInt":"2"},"codeName": "BadValue","errmsg": "can't $divide by zero"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v, d bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(tc.validator), false, &v); err != nil {
				t.Fatal(err)
			}
			if err := bson.UnmarshalExtJSON([]byte(tc.doc), false, &d); err != nil {
				t.Fatal(err)
			}
			raw, err := bson.Marshal(validationDetails(v, d))
			if err != nil {
				t.Fatal(err)
			}
			if got := bson.Raw(raw).String(); got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
