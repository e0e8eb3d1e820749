package aggregate

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestStageMessages: the code and text of errors of parsing and running
// stages, as MongoDB 7.0 writes them, over test.c holding {_id: 1}.
func TestStageMessages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pipeline string // Extended JSON array
		coll     string // the collection read, "c" by default
		code     mongoerr.Code
		msg      string
	}{
		// MatchExpressionParser's parseGeo without kGeoNear: a $match's
		// $near, also the one a find on a view brings
		{"match near", `[{"$match": {"loc": {"$near": [0, 0]}}}]`, "", 5626500,
			"$geoNear, $near, and $nearSphere are not allowed in this context, as these operators require sorting geospatial data. If you do not need sort, consider using $geoWithin instead. Check out https://dochub.mongodb.org/core/near-sort-operation and https://dochub.mongodb.org/core/nearSphere-sort-operationfor more details."},
		// StorageStatsSpec's scale: a numeric IDL field
		{"collStats scale a string", `[{"$collStats": {"storageStats": {"scale": "x"}}}]`, "", 14,
			"BSON field '$collStats.storageStats.scale' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{"collStats scale an object", `[{"$collStats": {"storageStats": {"scale": {}}}}]`, "", 14,
			"BSON field '$collStats.storageStats.scale' is the wrong type 'object', expected types '[long, int, decimal, double']"},
		{"fill partitionBy a number", `[{"$fill": {"sortBy": {"_id": 1}, "partitionBy": 1, "output": {"a": {"method": "locf"}}}}]`, "", 14,
			"BSON field '$fill.partitionBy' is the wrong type 'int', expected types '[string, object']"},
		// FillSpec::parse (IDL) checks every field before the outputs
		// are read: a mistyped sortBy is $fill's, even when a method
		// makes a $setWindowFields of it
		{"fill sortBy a string", `[{"$fill": {"sortBy": "x", "output": {"a": {"method": "locf"}}}}]`, "", 14,
			"BSON field '$fill.sortBy' is the wrong type 'string', expected type 'object'"},
		{"fill partitionByFields holding a number", `[{"$fill": {"partitionByFields": ["a", 5], "output": {"a": {"value": 1}}}}]`, "", 14,
			"BSON field '$fill.partitionByFields.1' is the wrong type 'int', expected type 'string'"},
		{"fill sortBy twice", `[{"$fill": {"sortBy": {"a": 1}, "sortBy": "x", "output": {"a": {"value": 1}}}}]`, "", 40413,
			"BSON field '$fill.sortBy' is a duplicate field"},
		// AccumulatorFirstLastN::parseFirstLastN, AccumulatorMinMaxN::parseMinMaxN
		// and accumulatorNParseArgs stream the whole element, name and value
		{"group firstN spec a string", `[{"$group": {"_id": null, "v": {"$firstN": "x"}}}]`, "", 5787801,
			`specification must be an object; found $firstN: "x"`},
		{"group maxN spec a number", `[{"$group": {"_id": null, "v": {"$maxN": 3}}}]`, "", 5787900,
			"specification must be an object; found $maxN: 3"},
		{"group topN spec a string", `[{"$group": {"_id": null, "v": {"$topN": "x"}}}]`, "", 5788001,
			`specification must be an object; found $topN: "x"`},
		{"group bottom spec a number", `[{"$group": {"_id": null, "v": {"$bottom": 1}}}]`, "", 5788001,
			"specification must be an object; found $bottom: 1"},
		// RangeSpec.step: a numeric IDL field (densify/libs/parse_util.js)
		{"densify step a string", `[{"$densify": {"field": "a", "range": {"step": "invalid", "bounds": "full"}}}]`, "", 14,
			"BSON field '$densify.range.step' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{"densify step null", `[{"$densify": {"field": "a", "range": {"step": null, "bounds": [0, 1]}}}]`, "", 14,
			"BSON field '$densify.range.step' is the wrong type 'null', expected types '[long, int, decimal, double']"},
		// DensifySpec.partitionByFields: an IDL array of strings, whose
		// element path holds its index
		{"densify partitionByFields holding a number", `[{"$densify": {"field": "a", "partitionByFields": ["p", 5], "range": {"step": 1, "bounds": "full"}}}]`, "", 14,
			"BSON field '$densify.partitionByFields.1' is the wrong type 'int', expected type 'string'"},
		{"densify range twice", `[{"$densify": {"field": "a", "range": {"step": 1, "bounds": "full"}, "range": {"step": 1, "bounds": "full"}}}]`, "", 40413,
			"BSON field '$densify.range' is a duplicate field"},
		// ExpressionLinearFill::parse, ExpressionFromLeftUnboundedWindowFunction
		{"linearFill without sortBy", `[{"$setWindowFields": {"output": {"v": {"$linearFill": "$v"}}}}]`, "", 605001,
			"$linearFill must be specified with a top level sortBy expression with exactly one element"},
		{"linearFill with a window", `[{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"v": {"$linearFill": "$v", "window": {}}}}}]`, "", 9,
			"'window' field is not allowed in $linearFill"},
		{"locf with a window", `[{"$setWindowFields": {"output": {"v": {"$locf": "$v", "window": 1}}}}]`, "", 9,
			"'window' field is not allowed in $locf"},
		// window_function::Expression::parse: the first $-prefixed field
		// names the function (jstests/aggregation/sources/setWindowFields/parse.js)
		{"window function without $", `[{"$setWindowFields": {"output": {"a": {"b": {"$sum": "$a"}}}}}]`, "", 9,
			"Expected a $-prefixed window function, b"},
		{"window function empty", `[{"$setWindowFields": {"output": {"a": {}}}}]`, "", 9,
			"Expected a $-prefixed window function"},
		{"unknown window function before window", `[{"$setWindowFields": {"output": {"t": {"$summ": "$x", "window": {"documents": ["unbounded", "current"]}}}}}]`, "", 9,
			"Unrecognized window function, $summ"},
		{"unknown window function not first", `[{"$setWindowFields": {"output": {"t": {"sum": "$x", "$summ": 1}}}}]`, "", 9,
			"Unrecognized window function, $summ"},
		// WindowBounds::parse
		{"window bounds backwards", `[{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"v": {"$sum": "$a", "window": {"documents": [1, -1]}}}}}]`, "", 5339900,
			"Lower bound must not exceed upper bound: [1, -1]"},
		{"window range current above", `[{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"v": {"$sum": "$a", "window": {"range": ["current", -1]}}}}}]`, "", 5339900,
			"Lower bound must not exceed upper bound: [0, -1]"},
		{"window bound not constant", `[{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"v": {"$sum": "$a", "window": {"documents": [{"$add": ["$a", 1]}, 1]}}}}}]`, "", 9,
			"Window bounds expression must be a constant."},
		{"window bound a string", `[{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"v": {"$sum": "$a", "window": {"documents": ["x", 1]}}}}}]`, "", 9,
			"Window bounds must be 'unbounded', 'current', or a number."},
		{"window bound constant not integral", `[{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"v": {"$sum": "$a", "window": {"documents": [{"$const": "current"}, 3]}}}}}]`, "", 9,
			"Numeric document-based bounds must be an integer"},
		// document_source_set_window_fields::createFromBson
		{"window output conflicting paths", `[{"$setWindowFields": {"output": {"a": {"$sum": 1}, "a.b": {"$sum": 1}}}}]`, "", 6307900,
			"$setWindowFields 'output' specification contains two conflicting paths"},
		// DocumentSourceInternalInhibitOptimization::createFromBson
		{"inhibit optimization a number", `[{"$_internalInhibitOptimization": 1}]`, "", 14,
			"$_internalInhibitOptimization must take a nested object but found: $_internalInhibitOptimization: 1"},
		{"inhibit optimization not empty", `[{"$_internalInhibitOptimization": {"a": 1}}]`, "", 9,
			"$_internalInhibitOptimization must take an empty object but found: { a: 1 }"},
		// DocumentSourceBucket::createFromBson, DocumentSourceBucketAuto::createFromBson
		{"bucket output a number", `[{"$bucket": {"groupBy": "$a", "boundaries": [0, 5], "output": 1}}]`, "", 40196,
			"The $bucket 'output' field must be an object, but found type: int."},
		{"bucketAuto output a number", `[{"$bucketAuto": {"groupBy": "$a", "buckets": 2, "output": 1}}]`, "", 40244,
			"The $bucketAuto 'output' field must be an object, but found type: int"},
		{"bucket groupBy a plain string", `[{"$bucket": {"groupBy": "a", "boundaries": [0, 5]}}]`, "", 40202,
			"The $bucket 'groupBy' field must be defined as a $-prefixed path or an expression, but found: \"a\"."},
		{"bucketAuto groupBy a plain string", `[{"$bucketAuto": {"groupBy": "a", "buckets": 2}}]`, "", 40239,
			"The $bucketAuto 'groupBy' field must be defined as a $-prefixed path or an expression object, but found: \"a\""},
		{"bucketAuto unknown option", `[{"$bucketAuto": {"groupBy": "$a", "buckets": 2, "x": 1}}]`, "", 40245,
			"Unrecognized option to $bucketAuto: x"},
		// DocumentSourceGraphLookUp::createFromBson lets an object pass
		// its 40103 check, then BSONElement::String's chk fails on it
		{"graphLookup connectToField an object", `[{"$graphLookup": {"from": "c", "startWith": 1, "connectFromField": "a", "connectToField": {}, "as": "o"}}]`, "", 13111,
			"wrong type for field (connectToField) object != string"},
		// DocumentSourceBucketAuto::createFromBson streams
		// coerceToDouble() of a buckets that is not a 32-bit integer: %g
		{"bucketAuto buckets a fraction", `[{"$bucketAuto": {"groupBy": "$a", "buckets": 1.5}}]`, "", 40242,
			"The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found 1.5"},
		{"bucketAuto buckets a long past 32 bits", `[{"$bucketAuto": {"groupBy": "$a", "buckets": {"$numberLong": "1099511627776"}}}]`, "", 40242,
			"The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found 1.09951e+12"},
		{"bucketAuto buckets NaN", `[{"$bucketAuto": {"groupBy": "$a", "buckets": {"$numberDouble": "NaN"}}}]`, "", 40242,
			"The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found nan"},
		{"bucket unknown option", `[{"$bucket": {"groupBy": "$a", "boundaries": [0, 5], "x": 1}}]`, "", 40197,
			"Unrecognized option to $bucket: x."},
		// ReplaceRootTransformation::applyTransformation, named by the stage
		// with a context ending in a space (so two before "must")
		{"replaceRoot to a number", `[{"$replaceRoot": {"newRoot": "$_id"}}]`, "", 40228,
			"'newRoot' expression  must evaluate to an object, but resulting value was: 1. Type of resulting value: 'int'. Input document: {_id: 1}"},
		{"replaceRoot to a missing field", `[{"$replaceRoot": {"newRoot": "$nope"}}]`, "", 40228,
			"'newRoot' expression  must evaluate to an object, but resulting value was: MISSING. Type of resulting value: 'missing'. Input document: {_id: 1}"},
		{"replaceWith an array", `[{"$replaceWith": ["$_id", {"a": "x"}]}]`, "", 40228,
			"'replacement document'  must evaluate to an object, but resulting value was: [1, {a: \"x\"}]. Type of resulting value: 'array'. Input document: {_id: 1}"},
		{"replaceWith a number", `[{"$replaceWith": "$_id"}]`, "", 40228,
			"'replacement document'  must evaluate to an object, but resulting value was: 1. Type of resulting value: 'int'. Input document: {_id: 1}"},
		// DocumentSourceDocuments::createFromBson: a strict $unwind of the
		// array, then a $replaceRoot of each element in its own context
		{"documents an element not a document", `[{"$unionWith": {"pipeline": [{"$documents": [{"a": 1}, 2]}]}}]`, "", 40228,
			"elements within the array passed to $documents must evaluate to an object, but resulting value was: 2. Type of resulting value: 'int'. Input document: {_tempDocumentsField: 2}"},
		{"documents a string", `[{"$unionWith": {"pipeline": [{"$documents": "x"}]}}]`, "", 5858203,
			"an array is expected"},
		{"documents a missing field", `[{"$unionWith": {"pipeline": [{"$documents": "$nope"}]}}]`, "", 5858203,
			"an array is expected"},
		// DocumentSourceRedact::redactValue and AccumulatorN::validateN show
		// the value as Value::toString does (value.cpp operator<<)
		{"redact returns a document", `[{"$redact": {"$literal": {"b": [1, "x"]}}}]`, "", 17053,
			"$redact's expression should not return anything aside from the variables $$KEEP, $$DESCEND, and $$PRUNE, but returned {b: [1, \"x\"]}"},
		{"firstN n missing", `[{"$group": {"_id": null, "a": {"$firstN": {"n": "$nope", "input": "$_id"}}}}]`, "", 5787902,
			"Value for 'n' must be of integral type, but found MISSING"},
		{"firstN n a fraction", `[{"$group": {"_id": null, "a": {"$firstN": {"n": 1.5, "input": "$_id"}}}}]`, "", 5787903,
			"Value for 'n' must be of integral type, but found 1.5"},
		// validateN takes n through Value::coerceToLong, which refuses a
		// double with no 64-bit integer before n is compared with itself
		{"firstN n beyond a long", `[{"$group": {"_id": null, "a": {"$firstN": {"n": 1e300, "input": "$_id"}}}}]`, "", 31109,
			"Can't coerce out of range value 1e+300 to long"},
		{"topN n NaN", `[{"$group": {"_id": null, "a": {"$topN": {"n": {"$numberDouble": "NaN"}, "output": "$_id", "sortBy": {"_id": 1}}}}}]`, "", 31109,
			"Can't coerce out of range value nan to long"},
		{"minN n a decimal beyond a long", `[{"$group": {"_id": null, "a": {"$minN": {"n": {"$numberDecimal": "9223372036854775808"}, "input": "$_id"}}}}]`, "", 5787903,
			"Value for 'n' must be of integral type, but found 9223372036854775808"},
		// AccumulatorMergeObjects::processInternal shows the value as
		// Value::toString does
		{"group mergeObjects an array", `[{"$group": {"_id": null, "m": {"$mergeObjects": {"$literal": [1, {"a": 2}]}}}}]`, "", 40400,
			"$mergeObjects requires object inputs, but input [1, {a: 2}] is of type array"},
		// parseP: the p array and a non-numeric element as Value::toString
		// shows them, an element out of range as the double it became
		{"percentile p a document", `[{"$group": {"_id": null, "p": {"$percentile": {"p": {"$literal": {"x": [1]}}, "input": "$_id", "method": "approximate"}}}}]`, "", 7750301,
			"The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: {x: [1]}"},
		{"percentile p holding an array", `[{"$group": {"_id": null, "p": {"$percentile": {"p": [0.5, {"$literal": [1, "a"]}], "input": "$_id", "method": "approximate"}}}}]`, "", 7750302,
			"The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: [1, \"a\"]"},
		{"percentile p infinite", `[{"$group": {"_id": null, "p": {"$percentile": {"p": [{"$numberDouble": "Infinity"}], "input": "$_id", "method": "approximate"}}}}]`, "", 7750303,
			"The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: inf"},
		{"percentile p a large decimal", `[{"$group": {"_id": null, "p": {"$percentile": {"p": [{"$numberDecimal": "1e300"}], "input": "$_id", "method": "approximate"}}}}]`, "", 7750303,
			"The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: 1e+300"},
		// parseCountWindowFunction: the window function $count takes only
		// {}, read in field order with the window
		{"count window function a number", `[{"$setWindowFields": {"output": {"n": {"$count": 1}}}}]`, "", 9,
			"$count only accepts an empty object as input"},
		{"count window function a document", `[{"$setWindowFields": {"output": {"n": {"$count": {"a": 1}, "window": 1}}}}]`, "", 9,
			"$count only accepts an empty object as input"},
		{"count window function after a bad window", `[{"$setWindowFields": {"output": {"n": {"window": 1, "$count": 1}}}}]`, "", 9,
			"'window' field must be an object"},
		// a field beside a window function and its window, as the parser
		// of the function words it (window_function_expression.h, .cpp)
		{"window sum beside another function", `[{"$setWindowFields": {"output": {"n": {"$sum": "$_id", "$avg": "$_id"}}}}]`, "", 9,
			"Cannot specify two functions in window function spec"},
		{"window count beside another function", `[{"$setWindowFields": {"output": {"n": {"$count": {}, "$sum": 1}}}}]`, "", 9,
			"Cannot specify multiple functions in window function spec"},
		{"window first beside last", `[{"$setWindowFields": {"output": {"n": {"$first": "$_id", "$last": "$_id"}}}}]`, "", 9,
			"$first got unexpected argument: $last"},
		{"window minN beside an unknown field", `[{"$setWindowFields": {"output": {"n": {"$minN": {"n": 1, "input": "$_id"}, "foo": 1}}}}]`, "", 9,
			"$minN got unexpected argument: foo"},
		{"window percentile beside another function", `[{"$setWindowFields": {"output": {"n": {"$percentile": {"p": [0.5], "input": "$_id", "method": "approximate"}, "$sum": 1}}}}]`, "", 9,
			"$percentile got unexpected argument: $sum"},
		{"window expMovingAvg beside an unknown field", `[{"$setWindowFields": {"sortBy": {"_id": 1}, "output": {"n": {"$expMovingAvg": {"input": "$_id", "N": 2}, "foo": 1}}}}]`, "", 9,
			"$expMovingAvg must have exactly one argument that is an object"},
		// WindowFunctionExecLinearFill::getNext
		{"linearFill a string value", `[{"$setWindowFields": {"sortBy": {"_id": 1}, "output": {"v": {"$linearFill": "x"}}}}]`, "", 14,
			"Value to be filled must be numeric or nullish, but found string"},
		{"linearFill a missing sortBy value", `[{"$setWindowFields": {"sortBy": {"x": 1}, "output": {"v": {"$linearFill": "$v"}}}}]`, "", 14,
			"Value of the sortBy field must be numeric or a date, but found missing"},
		// Expression::parseExpression
		{"group _id of two operators", `[{"$group": {"_id": {"$type": 42, "$op": 42}}}]`, "", 15983,
			"An object representing an expression must have exactly one field: { $type: 42, $op: 42 }"},
		{"group accumulator argument of two operators", `[{"$group": {"_id": null, "s": {"$sum": {"$add": [1], "$op": 42}}}}]`, "", 15983,
			"An object representing an expression must have exactly one field: { $add: [ 1 ], $op: 42 }"},
		// DocumentSourceGroupBase::initializeSelf reads $doingMerge with
		// BSONElement::Bool
		{"group $doingMerge a number", `[{"$group": {"_id": null, "$doingMerge": 1}}]`, "", 13111,
			"wrong type for field ($doingMerge) int != bool"},
		{"group $doingMerge false", `[{"$group": {"_id": null, "$doingMerge": false}}]`, "", 17030,
			"$doingMerge should be true if present"},
		{"group $doingMerge true", `[{"$group": {"_id": null, "$doingMerge": true}}]`, "", 238,
			"Folio does not support $group's $doingMerge"},
		{"match $expr of two operators", `[{"$match": {"$expr": {"$type": 42, "$op": 42}}}]`, "", 15983,
			"An object representing an expression must have exactly one field: { $type: 42, $op: 42 }"},
		// $project's parser reads an object of more fields as a
		// sub-projection, whose '$' names are not field paths
		{"project two operators", `[{"$project": {"v": {"$type": 42, "$op": 42}}}]`, "", 16410,
			"Invalid $project :: caused by :: FieldPath field names may not start with '$'. Consider using $getField or $setField."},
		// $addFields' ProjectionSpecValidator, before anything is parsed
		{"addFields two operators", `[{"$addFields": {"v": {"$type": 42, "$op": 42}}}]`, "", 40181,
			"Invalid $addFields :: caused by :: an expression specification must contain exactly one field, the name of the expression. Found 2 fields in { $type: 42, $op: 42 }, while parsing object { v: { $type: 42, $op: 42 } }"},
		{"set an operator after a field", `[{"$set": {"v": {"a": {"b": 1, "$op": 42}}}}]`, "", 40181,
			"Invalid $set :: caused by :: an expression specification must contain exactly one field, the name of the expression. Found 2 fields in { b: 1, $op: 42 }, while parsing object { v: { a: { b: 1, $op: 42 } } }"},
		{"addFields validated before parsed", `[{"$addFields": {"a": {"$nope": 1}, "b": {"$x": 1, "$y": 2}}}]`, "", 40181,
			"Invalid $addFields :: caused by :: an expression specification must contain exactly one field, the name of the expression. Found 2 fields in { $x: 1, $y: 2 }, while parsing object { a: { $nope: 1 }, b: { $x: 1, $y: 2 } }"},
		{"addFields a path inside one given", `[{"$addFields": {"a": 1, "a.b": 1}}]`, "", 40176,
			"Invalid $addFields :: caused by :: specification contains two conflicting paths. Cannot specify both 'a.b' and 'a': { a: 1, a.b: 1 }"},
		{"addFields a path holding one given", `[{"$addFields": {"a.b": 1, "a-c": 1, "a": 1}}]`, "", 40176,
			"Invalid $addFields :: caused by :: specification contains two conflicting paths. Cannot specify both 'a' and 'a.b': { a.b: 1, a-c: 1, a: 1 }"},
		{"addFields a nested path given twice", `[{"$addFields": {"a": {"b": 1}, "a.b": {"$add": [1]}}}]`, "", 40176,
			"Invalid $addFields :: caused by :: specification contains two conflicting paths. Cannot specify both 'a.b' and 'a.b': { a: { b: 1 }, a.b: { $add: [ 1 ] } }"},
		{"set a dotted name in a sub-object", `[{"$set": {"a": {"x.y": 1}}}]`, "", 40183,
			"Invalid $set :: caused by :: cannot use dotted field name 'x.y' in a sub object: { a: { x.y: 1 } }"},
		// parsePipelineFromBSON, in $lookup's lite parse
		{"lookup pipeline an object", `[{"$lookup": {"from": "o", "pipeline": {}, "as": "r"}}]`, "", 14,
			"'pipeline' option must be specified as an array"},
		{"lookup pipeline of a number", `[{"$lookup": {"from": "o", "pipeline": [1], "as": "r"}}]`, "", 14,
			"Each element of the 'pipeline' array must be an object"},
		// ExpressionContext::copyForSubPipeline
		{"sub-pipelines nested too deep", `[{"$facet": {"f": [{"$lookup": {"from": "o", "as": "x", "pipeline": [{"$unionWith": {"coll": "o", "pipeline": [` + strings.Repeat(`{"$lookup": {"from": "o", "as": "x", "pipeline": [`, 19) + strings.Repeat(`]}}`, 19) + `]}}]}}]}}]`, "", 232,
			"Maximum number of nested sub-pipelines exceeded. Limit is 20"},
		// DocumentSourceUnwind::createFromBson: a path missing or empty
		{"unwind an empty path", `[{"$unwind": ""}]`, "", 28812, "no path specified to $unwind stage"},
		{"unwind an empty path option", `[{"$unwind": {"path": ""}}]`, "", 28812, "no path specified to $unwind stage"},
		// DocumentSourceSortByCount::createFromBson
		{"sortByCount an object of a field", `[{"$sortByCount": {"a": 1}}]`, "", 40147,
			"the sortByCount field must be defined as a $-prefixed path or an expression inside an object"},
		{"sortByCount a path without $", `[{"$sortByCount": "a"}]`, "", 40148,
			"the sortByCount field must be defined as a $-prefixed path or an expression inside an object"},
		// $graphLookup's lite parse: from, before the other arguments
		{"graphLookup missing from", `[{"$graphLookup": {"startWith": "$s", "as": "r"}}]`, "", 9,
			`missing 'from' option to $graphLookup stage specification: { startWith: "$s", as: "r" }`},
		{"graphLookup from a number", `[{"$graphLookup": {"from": 1, "as": 2}}]`, "", 9,
			"$graphLookup 'from' field must be a string, but found int"},
		{"graphLookup from empty", `[{"$graphLookup": {"from": ""}}]`, "", 73,
			"invalid $graphLookup namespace: test."},
		// restrictSearchWithMatch: MatchExpressionParser's default features
		{"graphLookup restrictSearchWithMatch $text", `[{"$graphLookup": {"from": "g", "startWith": "$s", "connectFromField": "x", "connectToField": "n", "as": "r", "restrictSearchWithMatch": {"$text": {"$search": "x"}}}}]`, "", 2,
			"Failed to parse 'restrictSearchWithMatch' option to $graphLookup :: caused by :: $text is not allowed in this context"},
		{"graphLookup restrictSearchWithMatch $near", `[{"$graphLookup": {"from": "g", "startWith": "$s", "connectFromField": "x", "connectToField": "n", "as": "r", "restrictSearchWithMatch": {"a": {"$near": [0, 0]}}}}]`, "", 5626500,
			"Failed to parse 'restrictSearchWithMatch' option to $graphLookup :: caused by :: $geoNear, $near, and $nearSphere are not allowed in this context, as these operators require sorting geospatial data. If you do not need sort, consider using $geoWithin instead. Check out https://dochub.mongodb.org/core/near-sort-operation and https://dochub.mongodb.org/core/nearSphere-sort-operationfor more details."},
		{"graphLookup restrictSearchWithMatch unknown operator", `[{"$graphLookup": {"from": "g", "startWith": "$s", "connectFromField": "x", "connectToField": "n", "as": "r", "restrictSearchWithMatch": {"a": {"$bogus": 1}}}}]`, "", 2,
			"Failed to parse 'restrictSearchWithMatch' option to $graphLookup :: caused by :: unknown operator: $bogus"},
		// makeStatsForNs: each section's error in its context
		{"collStats storageStats of a missing collection", `[{"$collStats": {"storageStats": {}}}]`, "nope", 26,
			"Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [test.nope] not found."},
		{"collStats count and storageStats of a missing collection", `[{"$collStats": {"count": {}, "storageStats": {}}}]`, "nope", 26,
			"Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [test.nope] not found."},
		{"collStats count of a missing collection", `[{"$collStats": {"count": {}}}]`, "nope", 26,
			"Unable to retrieve count in $collStats stage :: caused by :: Collection [test.nope] not found."},
		{"collStats queryExecStats of a missing collection", `[{"$collStats": {"latencyStats": {}, "queryExecStats": {}}}]`, "nope", 26,
			"Unable to retrieve queryExecStats in $collStats stage :: caused by :: Collection [test.nope] not found."},
		// from as {db, coll}: NamespaceSpec's IDL, then only internal
		// namespaces (parseLookupFromAndResolveNamespace)
		// DocumentSourceLookUp::createFromBson streams the BSONElement
		// itself, its name with its value
		{"lookup localField a number", `[{"$lookup": {"from": "o", "localField": 1, "foreignField": "b", "as": "r"}}]`, "", 9,
			"$lookup argument 'localField' must be a string, found localField: 1: int"},
		{"lookup as an object", `[{"$lookup": {"from": "o", "localField": "a", "foreignField": "b", "as": {"x": 1.5}}}]`, "", 9,
			"$lookup argument 'as' must be a string, found as: { x: 1.5 }: object"},
		{"lookup let a string", `[{"$lookup": {"from": "o", "let": "s", "pipeline": [], "as": "r"}}]`, "", 9,
			"$lookup argument 'let: \"s\"' must be an object, is type string"},
		// createFromBson: an empty as, localField or foreignField is an
		// absent one; without a pipeline a let, even empty, is refused
		{"lookup let without pipeline", `[{"$lookup": {"from": "o", "localField": "a", "foreignField": "b", "let": {}, "as": "r"}}]`, "", 9,
			"$lookup with a 'let' argument must also specify 'pipeline'"},
		{"lookup localField alone", `[{"$lookup": {"from": "o", "localField": "a", "as": "r"}}]`, "", 9,
			"$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified"},
		{"lookup localField empty", `[{"$lookup": {"from": "o", "localField": "", "foreignField": "b", "as": "r"}}]`, "", 9,
			"$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified"},
		{"lookup foreignField alone with a pipeline", `[{"$lookup": {"from": "o", "foreignField": "b", "pipeline": [], "as": "r"}}]`, "", 9,
			"$lookup requires both or neither of 'localField' and 'foreignField' to be specified"},
		{"lookup as empty", `[{"$lookup": {"from": "o", "pipeline": [], "as": ""}}]`, "", 9,
			"must specify 'as' field for a $lookup"},
		{"lookup from another database", `[{"$lookup": {"from": {"db": "other", "coll": "f"}, "localField": "a", "foreignField": "b", "as": "r"}}]`, "", 9,
			"$lookup with syntax {from: {db:<>, coll:<>},..} is not supported for db: other and coll: f"},
		{"lookup from the same database as an object", `[{"$lookup": {"from": {"db": "test", "coll": "f"}, "pipeline": [], "as": "r"}}]`, "", 9,
			"$lookup with syntax {from: {db:<>, coll:<>},..} is not supported for db: test and coll: f"},
		{"lookup from the oplog", `[{"$lookup": {"from": {"db": "local", "coll": "oplog.rs"}, "pipeline": [], "as": "r"}}]`, "", 238,
			"Folio does not support $lookup from local.oplog.rs"},
		{"lookup from with an unknown field", `[{"$lookup": {"from": {"db": "other", "coll": "f", "x": 1}, "pipeline": [], "as": "r"}}]`, "", 40415,
			"BSON field 'from.x' is an unknown field."},
		{"lookup from with a db of the wrong type", `[{"$lookup": {"from": {"db": 1, "coll": "f"}, "pipeline": [], "as": "r"}}]`, "", 14,
			"BSON field 'from.db' is the wrong type 'int', expected type 'string'"},
		{"graphLookup from with a coll of the wrong type", `[{"$graphLookup": {"from": {"db": "other", "coll": 1}}}]`, "", 14,
			"BSON field 'from.coll' is the wrong type 'int', expected type 'string'"},
		// a sub-pipeline reads its collection: the sessions stages' lite
		// parse refuses it (unionWith_invalid_usage.js)
		{"listLocalSessions in a unionWith", `[{"$unionWith": {"coll": "u", "pipeline": [{"$listLocalSessions": {}}]}}]`, "", 73,
			"$listLocalSessions must be run against the database with {aggregate: 1}, not a collection"},
		{"listLocalSessions in a lookup", `[{"$lookup": {"from": "u", "pipeline": [{"$listLocalSessions": {}}], "as": "r"}}]`, "", 73,
			"$listLocalSessions must be run against the database with {aggregate: 1}, not a collection"},
		{"listSessions in a unionWith", `[{"$unionWith": {"coll": "u", "pipeline": [{"$listSessions": {}}]}}]`, "", 73,
			"$listSessions may only be run against config.system.sessions"},
		// Pipeline::optimizeContainer: a constant expression that fails
		// when folded, in any stage, fails the optimization of the
		// pipeline, after every stage parsed; an $addFields' executor is
		// built unoptimized (DocumentSourceProject::create), so not
		// "Invalid $addFields"
		{"addFields failing constant", `[{"$addFields": {"f": {"$arrayElemAt": ["x", 1]}}}]`, "", 28689,
			"Failed to optimize pipeline :: caused by :: $arrayElemAt's first argument must be an array, but is string"},
		{"group failing constant", `[{"$group": {"_id": null, "s": {"$sum": {"$divide": [1, 0]}}}}]`, "", 2,
			"Failed to optimize pipeline :: caused by :: can't $divide by zero"},
		{"replaceWith failing constant", `[{"$replaceWith": {"$mergeObjects": ["x"]}}]`, "", 40400,
			"Failed to optimize pipeline :: caused by :: $mergeObjects requires object inputs, but input \"x\" is of type string"},
		// ExpressionIndexOfArray::optimize and ExpressionSetIsSubset's
		// optimize refuse a constant operand then
		{"indexOfArray constant non-array", `[{"$project": {"f": {"$indexOfArray": ["x", "$a"]}}}]`, "", 50809,
			"Failed to optimize pipeline :: caused by :: First operand of $indexOfArray must be an array. First argument is of type: string"},
		{"setIsSubset constant non-array", `[{"$project": {"f": {"$setIsSubset": ["$a", 1]}}}]`, "", 17311,
			"Failed to optimize pipeline :: caused by :: both operands of $setIsSubset must be arrays. Second argument is of type: int"},
		// DocumentSourceFacet::optimize optimizes each of its pipelines as
		// a pipeline, inside the optimization of the outer one, once every
		// pipeline has parsed
		{"facet failing constant", `[{"$facet": {"a": [{"$project": {"f": {"$concatArrays": [123]}}}]}}]`, "", 28664,
			"Failed to optimize pipeline :: caused by :: Failed to optimize pipeline :: caused by :: $concatArrays only supports arrays, not int"},
		{"facet failing constant before a later facet's parse error", `[{"$facet": {"a": [{"$project": {"f": {"$concatArrays": [123]}}}], "b": [{"$bogus": 1}]}}]`, "", 40324,
			"Unrecognized pipeline stage name: '$bogus'"},
		{"facet failing constant before a later stage's parse error", `[{"$facet": {"a": [{"$project": {"f": {"$concatArrays": [123]}}}]}}, {"$limit": -1}]`, "", 5107201,
			"invalid argument to $limit stage: Expected a non-negative number in: $limit: -1"},
		{"first of two failing constants", `[{"$match": {"$expr": {"$divide": [1, 0]}}}, {"$project": {"f": {"$concatArrays": [123]}}}]`, "", 2,
			"Failed to optimize pipeline :: caused by :: can't $divide by zero"},
		// ExpressionSetField's and ExpressionZip's optimize do not fold
		// them: a constant operand of the wrong type fails each document
		// (expression_set_field.js against 7.0.8), and $unsetField, a
		// $setField of $$REMOVE, says $setField
		{"setField constant input not an object", `[{"$project": {"f": {"$setField": {"field": "a", "input": true, "value": 24}}}}]`, "", 4161105,
			"$setField requires 'input' to evaluate to type Object"},
		{"unsetField constant input not an object", `[{"$project": {"f": {"$unsetField": {"field": "a", "input": true}}}}]`, "", 4161105,
			"$setField requires 'input' to evaluate to type Object"},
		{"zip constant input not an array", `[{"$project": {"f": {"$zip": {"inputs": ["A", "B"]}}}}]`, "", 34468,
			"$zip found a non-array expression in input: \"A\""},
		// ExpressionGetField/SetField::parse name a field path field as
		// the path ExpressionFieldPath holds
		{"getField field path", `[{"$project": {"f": {"$getField": "$foo"}}}]`, "", 5654600,
			"Invalid $project :: caused by :: '$CURRENT.foo' is a field path reference which is not allowed in this context. Did you mean {$literal: '$CURRENT.foo'}?"},
		{"setField field path", `[{"$project": {"f": {"$setField": {"field": "$field_path", "input": {}, "value": 0}}}}]`, "", 4161108,
			"Invalid $project :: caused by :: '$CURRENT.field_path' is a field path reference which is not allowed in this context. Did you mean {$literal: '$CURRENT.field_path'}?"},
		// $project shares find's projection parser (projection_parser.cpp):
		// a field is named as its object names it, a literal shown with
		// its value, a collision by the path its object gives and that
		// path's tail after its first part
		{"project literal in exclusion", `[{"$project": {"a": 0, "n": [1, 2]}}]`, "", 31310,
			"Invalid $project :: caused by :: Cannot use an expression n: [ 1, 2 ] in an exclusion projection"},
		{"project nested literal in exclusion", `[{"$project": {"a": 0, "n": {"b": "$x"}}}]`, "", 31310,
			`Invalid $project :: caused by :: Cannot use an expression b: "$x" in an exclusion projection`},
		{"project nested inclusion in exclusion", `[{"$project": {"a": 0, "n": {"b": 0, "c": 1}}}]`, "", 31253,
			"Invalid $project :: caused by :: Cannot do inclusion on field c in exclusion projection"},
		{"project nested exclusion in inclusion", `[{"$project": {"a": 1, "n": {"b": {"c.d": 0}}}}]`, "", 31254,
			"Invalid $project :: caused by :: Cannot do exclusion on field c.d in inclusion projection"},
		{"project collision below a leaf", `[{"$project": {"x": {"y": 1}, "x.y.z": {"$add": [1]}}}]`, "", 31249,
			"Invalid $project :: caused by :: Path collision at x.y.z remaining portion y.z"},
		{"project nested collision below a leaf", `[{"$project": {"a": {"b": 1, "b.c": 1}}}]`, "", 31249,
			"Invalid $project :: caused by :: Path collision at b.c remaining portion c"},
		{"project nested collision", `[{"$project": {"a": {"b": {"c": 1}, "b.c": 1}}}]`, "", 31250,
			"Invalid $project :: caused by :: Path collision at b.c"},
		{"project sub-projection over a leaf", `[{"$project": {"a.b": 1, "a": {"b": {"c": 1}}}}]`, "", 31250,
			"Invalid $project :: caused by :: Path collision at b"},
		{"project collision before the mode", `[{"$project": {"a": {"b": 0}, "a.b": 1}}]`, "", 31250,
			"Invalid $project :: caused by :: Path collision at a.b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wrapped bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(`{"p": `+tc.pipeline+`}`), false, &wrapped); err != nil {
				t.Fatal(err)
			}
			vals, err := wrapped.Lookup("p").Array().Values()
			if err != nil {
				t.Fatal(err)
			}
			c := stageCase{Docs: []bson.Raw{mustMarshal(bson.D{{Key: "_id", Value: int32(1)}})}}
			for _, v := range vals {
				c.Pipeline = append(c.Pipeline, v.Document())
			}
			_, _, err = runCaseOn(c, tc.coll)
			if err == nil {
				t.Fatalf("no error, want %d %q", tc.code, tc.msg)
			}
			if e := mongoerr.As(err); e.Code != tc.code || e.Msg != tc.msg {
				t.Fatalf("got %d %q, want %d %q", e.Code, e.Msg, tc.code, tc.msg)
			}
		})
	}
}
