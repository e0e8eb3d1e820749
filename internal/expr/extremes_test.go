package expr

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// extremeArgs are numbers at the edges of their types, in Extended JSON.
var extremeArgs = []string{
	`{"$numberInt": "-2147483648"}`, `{"$numberInt": "2147483647"}`,
	`{"$numberLong": "-9223372036854775808"}`, `{"$numberLong": "9223372036854775807"}`,
	`{"$numberDouble": "NaN"}`, `{"$numberDouble": "Infinity"}`, `{"$numberDouble": "-Infinity"}`,
	`{"$numberDouble": "1.7976931348623157e308"}`, `{"$numberDouble": "-9.3e18"}`, `{"$numberDouble": "9.223372036854775807e18"}`,
	`{"$numberDouble": "-0.0"}`, `{"$numberDouble": "5e-324"}`, `{"$numberDouble": "-2147483649"}`,
	`{"$numberDecimal": "9.999999999999999999999999999999999E+6144"}`, `{"$numberDecimal": "-9.999999999999999999999999999999999E+6144"}`,
	`{"$numberDecimal": "1E-6176"}`, `{"$numberDecimal": "NaN"}`, `{"$numberDecimal": "-Infinity"}`,
	`{"$numberDecimal": "9223372036854775808"}`, `{"$numberDecimal": "-9223372036854775809"}`, `-1`, `0`, `100`,
}

// extremeTemplates are expressions with numeric arguments; each @X@ takes
// the extremes in turn.
var extremeTemplates = []string{
	`{"$slice": [[1,2,3], @X@]}`, `{"$slice": [[1,2,3], @X@, 2]}`, `{"$slice": [[1,2,3], 1, @X@]}`, `{"$slice": [[1,2,3], @X@, @X@]}`,
	`{"$range": [@X@, 5]}`, `{"$range": [0, @X@]}`, `{"$range": [0, @X@, @X@]}`, `{"$range": [@X@, 0, -1]}`, `{"$range": [0, 10, @X@]}`, `{"$range": [@X@, @X@, 1]}`,
	`{"$substr": ["hello", @X@, 2]}`, `{"$substr": ["hello", 1, @X@]}`, `{"$substrBytes": ["hello", @X@, @X@]}`, `{"$substrCP": ["hello", @X@, 2]}`, `{"$substrCP": ["hello", 1, @X@]}`, `{"$substrBytes": ["hello", 1, @X@]}`,
	`{"$round": [1.5, @X@]}`, `{"$trunc": [1.5, @X@]}`, `{"$round": [@X@, 2]}`, `{"$trunc": [@X@, -2]}`, `{"$round": [@X@, @X@]}`,
	`{"$arrayElemAt": [[1,2,3], @X@]}`, `{"$first": [@X@]}`,
	`{"$pow": [@X@, 2]}`, `{"$pow": [2, @X@]}`, `{"$pow": [@X@, @X@]}`, `{"$pow": [-1, @X@]}`, `{"$pow": [0, @X@]}`,
	`{"$exp": @X@}`, `{"$ln": @X@}`, `{"$log10": @X@}`, `{"$log": [@X@, @X@]}`, `{"$sqrt": @X@}`, `{"$abs": @X@}`, `{"$ceil": @X@}`, `{"$floor": @X@}`,
	`{"$toInt": @X@}`, `{"$toLong": @X@}`, `{"$toDouble": @X@}`, `{"$toDecimal": @X@}`, `{"$toString": @X@}`, `{"$toDate": @X@}`, `{"$toBool": @X@}`,
	`{"$convert": {"input": @X@, "to": "int", "onError": 0}}`, `{"$convert": {"input": @X@, "to": "long"}}`, `{"$convert": {"input": @X@, "to": "date"}}`,
	`{"$convert": {"input": @X@, "to": @X@}}`,
	`{"$add": [@X@, @X@]}`, `{"$add": [{"$toDate": {"$numberLong": "0"}}, @X@]}`, `{"$subtract": [@X@, @X@]}`, `{"$subtract": [{"$toDate": {"$numberLong": "0"}}, @X@]}`, `{"$subtract": [{"$toDate": @X@}, {"$toDate": {"$numberLong": "0"}}]}`,
	`{"$multiply": [@X@, @X@]}`, `{"$multiply": [@X@, -1]}`, `{"$divide": [@X@, -1]}`, `{"$divide": [@X@, 0]}`, `{"$mod": [@X@, -1]}`, `{"$mod": [@X@, @X@]}`, `{"$mod": [@X@, 0]}`,
	`{"$abs": {"$numberLong": "-9223372036854775808"}}`,
	`{"$dateFromParts": {"year": @X@}}`, `{"$dateFromParts": {"year": 2000, "month": @X@}}`, `{"$dateFromParts": {"year": 2000, "day": @X@}}`, `{"$dateFromParts": {"year": 2000, "hour": @X@, "minute": @X@, "second": @X@, "millisecond": @X@}}`,
	`{"$dateFromParts": {"isoWeekYear": @X@, "isoWeek": @X@, "isoDayOfWeek": @X@}}`,
	`{"$dateAdd": {"startDate": {"$toDate": {"$numberLong": "0"}}, "unit": "day", "amount": @X@}}`, `{"$dateAdd": {"startDate": {"$toDate": {"$numberLong": "0"}}, "unit": "month", "amount": @X@}}`,
	`{"$dateAdd": {"startDate": {"$toDate": {"$numberLong": "0"}}, "unit": "millisecond", "amount": @X@}}`, `{"$dateAdd": {"startDate": {"$toDate": {"$numberLong": "0"}}, "unit": "year", "amount": @X@}}`,
	`{"$dateSubtract": {"startDate": {"$toDate": {"$numberLong": "0"}}, "unit": "week", "amount": @X@}}`, `{"$dateSubtract": {"startDate": {"$toDate": {"$numberLong": "0"}}, "unit": "quarter", "amount": @X@}}`,
	`{"$dateDiff": {"startDate": {"$toDate": @X@}, "endDate": {"$toDate": {"$numberLong": "0"}}, "unit": "day"}}`, `{"$dateDiff": {"startDate": {"$toDate": @X@}, "endDate": {"$toDate": {"$numberLong": "9223372036854775807"}}, "unit": "millisecond"}}`,
	`{"$dateDiff": {"startDate": {"$toDate": @X@}, "endDate": {"$toDate": {"$numberLong": "0"}}, "unit": "month"}}`, `{"$dateDiff": {"startDate": {"$toDate": @X@}, "endDate": {"$toDate": {"$numberLong": "0"}}, "unit": "week"}}`,
	`{"$dateTrunc": {"date": {"$toDate": {"$numberLong": "0"}}, "unit": "day", "binSize": @X@}}`, `{"$dateTrunc": {"date": {"$toDate": @X@}, "unit": "month", "binSize": 3}}`, `{"$dateTrunc": {"date": {"$toDate": @X@}, "unit": "week", "binSize": 2}}`,
	`{"$dateTrunc": {"date": {"$toDate": @X@}, "unit": "year"}}`, `{"$dateTrunc": {"date": {"$toDate": @X@}, "unit": "millisecond", "binSize": @X@}}`,
	`{"$dateToString": {"date": {"$toDate": @X@}}}`, `{"$dateToParts": {"date": {"$toDate": @X@}}}`, `{"$dateToParts": {"date": {"$toDate": @X@}, "iso8601": true}}`,
	`{"$year": {"$toDate": @X@}}`, `{"$isoWeek": {"$toDate": @X@}}`, `{"$isoWeekYear": {"$toDate": @X@}}`, `{"$dayOfYear": {"$toDate": @X@}}`, `{"$week": {"$toDate": @X@}}`, `{"$millisecond": {"$toDate": @X@}}`,
	`{"$dateToString": {"date": {"$toDate": @X@}, "format": "%Y-%m-%d %H:%M:%S.%L %j %U %V %G %u %w %z %Z"}}`,
	`{"$dateFromString": {"dateString": "2020-01-01", "timezone": "+99:99"}}`,
	`{"$indexOfArray": [[1,2,3], 2, @X@]}`, `{"$indexOfArray": [[1,2,3], 2, 0, @X@]}`, `{"$indexOfBytes": ["hello", "l", @X@]}`, `{"$indexOfBytes": ["hello", "l", 0, @X@]}`, `{"$indexOfCP": ["hello", "l", @X@, @X@]}`,
	`{"$firstN": {"input": [1,2,3], "n": @X@}}`, `{"$lastN": {"input": [1,2,3], "n": @X@}}`, `{"$maxN": {"input": [1,2,3], "n": @X@}}`, `{"$minN": {"input": [1,2,3], "n": @X@}}`,
	`{"$bitAnd": [@X@, @X@]}`, `{"$bitOr": [@X@, 1]}`, `{"$bitNot": @X@}`, `{"$bitXor": [@X@, -1]}`,
	`{"$sum": [@X@, @X@]}`, `{"$avg": [@X@, @X@]}`, `{"$stdDevPop": [@X@, @X@]}`, `{"$stdDevSamp": [@X@, 1]}`, `{"$max": [@X@, 1]}`,
	`{"$sin": @X@}`, `{"$asin": @X@}`, `{"$acosh": @X@}`, `{"$atanh": @X@}`, `{"$degreesToRadians": @X@}`, `{"$atan2": [@X@, @X@]}`, `{"$cos": @X@}`, `{"$tan": @X@}`, `{"$sinh": @X@}`,
	`{"$strLenCP": {"$toString": @X@}}`, `{"$split": [{"$toString": @X@}, "."]}`,
	`{"$replaceAll": {"input": "aaa", "find": "", "replacement": "b"}}`,
	`{"$zip": {"inputs": [[1], [2, 3]], "useLongestLength": true}}`,
	`{"$setField": {"field": "a", "input": {}, "value": @X@}}`, `{"$getField": {"field": "a", "input": @X@}}`,
	`{"$trunc": [@X@]}`, `{"$round": [@X@]}`, `{"$toObjectId": @X@}`, `{"$isNumber": @X@}`,
	`{"$cmp": [@X@, @X@]}`, `{"$eq": [@X@, 1]}`,
	`{"$reduce": {"input": {"$range": [0, @X@]}, "initialValue": 0, "in": 1}}`,
	`{"$map": {"input": {"$range": [0, @X@, @X@]}, "in": 1}}`,
	`{"$sortArray": {"input": [3,1], "sortBy": @X@}}`,
	`{"$rand": {}}`, `{"$tsSecond": @X@}`, `{"$tsIncrement": @X@}`,
	`{"$dateFromString": {"dateString": {"$toString": @X@}}}`,
	`{"$dateFromParts": {"year": @X@, "timezone": "Europe/Paris"}}`,
	`{"$dateToParts": {"date": {"$toDate": @X@}, "timezone": "Europe/Paris"}}`,
	`{"$hour": {"date": {"$toDate": @X@}, "timezone": "+23:59"}}`,
	`{"$dateAdd": {"startDate": {"$toDate": @X@}, "unit": "hour", "amount": @X@, "timezone": "Europe/Paris"}}`,
	`{"$dateTrunc": {"date": {"$toDate": @X@}, "unit": "hour", "binSize": @X@, "timezone": "Europe/Paris", "startOfWeek": "mon"}}`,
	`{"$dateDiff": {"startDate": {"$toDate": @X@}, "endDate": {"$toDate": @X@}, "unit": "quarter", "timezone": "Europe/Paris"}}`,
	`{"$median": {"input": [@X@, 1], "method": "approximate"}}`, `{"$percentile": {"input": [@X@, 1], "p": [@X@], "method": "approximate"}}`,
	`{"$binarySize": {"$toString": @X@}}`, `{"$bsonSize": {"a": @X@}}`,
	`{"$ifNull": [null, @X@]}`, `{"$switch": {"branches": [{"case": @X@, "then": 1}], "default": 0}}`,
	`{"$concatArrays": [{"$range": [0, 3]}, {"$slice": [[1], @X@, @X@]}]}`,
	`{"$literal": @X@}`, `{"$objectToArray": {"a": @X@}}`, `{"$arrayToObject": [[["a", @X@]]]}`,
	`{"$toHashedIndexKey": @X@}`, `{"$trim": {"input": {"$toString": @X@}}}`,
	`{"$regexFind": {"input": {"$toString": @X@}, "regex": "[0-9]+"}}`,
}

// TestExtremesNeverPanic evaluates every template with each extreme in
// each numeric slot (and with the other slots at 3): compiling and
// evaluating may fail with an error but must neither panic nor run away.
func TestExtremesNeverPanic(t *testing.T) {
	n := 0
	for _, tmpl := range extremeTemplates {
		for _, x := range extremeArgs {
			for _, src := range []string{strings.ReplaceAll(tmpl, "@X@", x), strings.ReplaceAll(strings.Replace(tmpl, "@X@", x, 1), "@X@", "3")} {
				var d bson.Raw
				if err := bson.UnmarshalExtJSON([]byte(`{"e": `+src+`}`), false, &d); err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				n++
				done := make(chan struct{})
				go func() {
					defer close(done)
					defer func() {
						if p := recover(); p != nil {
							t.Errorf("%s panicked: %v", src, p)
						}
					}()
					e, err := Compile(d.Lookup("e"), nil)
					if err != nil {
						return
					}
					_, _ = e.Eval(&Context{Clock: Clock{Now: testNow}}, bson.Raw{5, 0, 0, 0, 0})
				}()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s still running after 5s", src)
				}
			}
		}
	}
	t.Logf("%d expressions", n)
}
