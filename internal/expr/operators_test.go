package expr

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// operators70 is every expression operator of MongoDB 7.0's reference
// ("Aggregation Pipeline Operators", expression operators by category,
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/).
var operators70 = strings.Fields(`
$abs $add $ceil $divide $exp $floor $ln $log $log10 $mod $multiply $pow $round $sqrt $subtract $trunc
$arrayElemAt $arrayToObject $concatArrays $filter $first $firstN $in $indexOfArray $isArray $last $lastN
$map $maxN $minN $objectToArray $range $reduce $reverseArray $size $slice $sortArray $zip
$bitAnd $bitNot $bitOr $bitXor
$and $not $or
$cmp $eq $gt $gte $lt $lte $ne
$cond $ifNull $switch
$accumulator $function
$binarySize $bsonSize
$dateAdd $dateDiff $dateFromParts $dateFromString $dateSubtract $dateToParts $dateToString $dateTrunc
$dayOfMonth $dayOfWeek $dayOfYear $hour $isoDayOfWeek $isoWeek $isoWeekYear $millisecond $minute $month
$second $toDate $week $year
$literal
$getField $rand $sampleRate $toHashedIndexKey
$mergeObjects $setField $unsetField
$allElementsTrue $anyElementTrue $setDifference $setEquals $setIntersection $setIsSubset $setUnion
$concat $indexOfBytes $indexOfCP $ltrim $regexFind $regexFindAll $regexMatch $replaceOne $replaceAll
$rtrim $split $strLenBytes $strLenCP $strcasecmp $substr $substrBytes $substrCP $toLower $toString $trim $toUpper
$meta
$tsIncrement $tsSecond
$sin $cos $tan $asin $acos $atan $atan2 $asinh $acosh $atanh $sinh $cosh $tanh $degreesToRadians $radiansToDegrees
$convert $isNumber $toBool $toDecimal $toDouble $toInt $toLong $toObjectId $type
$avg $max $median $min $percentile $stdDevPop $stdDevSamp $sum
$let
`)

// TestEveryOperatorHasARow: testdata/operators.jsonl (run with the rest of
// the corpus by TestCorpus) has a row for each operator of operators70,
// and names no other.
func TestEveryOperatorHasARow(t *testing.T) {
	f, err := os.Open("testdata/operators.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		var rec struct {
			Op string `bson:"op"`
		}
		if err := bson.UnmarshalExtJSON([]byte(line), false, &rec); err != nil {
			t.Fatal(err)
		}
		rows[rec.Op]++
	}
	known := map[string]bool{}
	for _, op := range operators70 {
		known[op] = true
		if rows[op] == 0 {
			t.Errorf("%s has no row in operators.jsonl", op)
		}
	}
	for op := range rows {
		if !known[op] {
			t.Errorf("operators.jsonl names %s, which is not in the 7.0 list", op)
		}
	}
}
