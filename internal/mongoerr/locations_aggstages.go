package mongoerr

// $graphLookup, $redact and $setWindowFields.
const (
	// GraphLookupMaxMemory: $graphLookup's visited set and frontier past
	// the stage's memory limit (7.0 does not spill them).
	GraphLookupMaxMemory Code = 40099
	// GraphLookupMaxDepthNotNumber: a maxDepth that is not a number.
	GraphLookupMaxDepthNotNumber Code = 40100
	// GraphLookupMaxDepthNegative: a negative maxDepth.
	GraphLookupMaxDepthNegative Code = 40101
	// GraphLookupMaxDepthNotIntegral: a maxDepth with a fraction.
	GraphLookupMaxDepthNotIntegral Code = 40102
	// GraphLookupArgNotString: from, as, connectFromField, connectToField or depthField not a string.
	GraphLookupArgNotString Code = 40103
	// GraphLookupUnknownArg: a $graphLookup argument it does not take.
	GraphLookupUnknownArg Code = 40104
	// GraphLookupMissingArg: from, as, startWith, connectFromField or connectToField missing.
	GraphLookupMissingArg Code = 40105
	// GraphLookupRestrictNotObject: a restrictSearchWithMatch that is not an object.
	GraphLookupRestrictNotObject Code = 40185
	// GraphLookupNoID: a foreign document without _id.
	GraphLookupNoID Code = 40271
	// RedactBadResult: a $redact expression evaluating to something other than $$DESCEND, $$PRUNE or $$KEEP.
	RedactBadResult Code = 17053
)

// $setWindowFields.
const (
	// WindowDocumentsNeedSortBy: a bounded documents window without sortBy.
	WindowDocumentsNeedSortBy Code = 5339901
	// WindowRangeNeedsOneSortField: a range window without a sortBy of exactly one field.
	WindowRangeNeedsOneSortField Code = 5339902
	// WindowRankTakesNoWindow: $rank, $denseRank or $documentNumber given a window.
	WindowRankTakesNoWindow Code = 5371601
	// WindowRankNeedsOneSortField: $rank, $denseRank or $documentNumber without a sortBy of exactly one field.
	WindowRankNeedsOneSortField Code = 5371602
	// WindowRangeDateNeedsUnit: a range window without unit over a date.
	WindowRangeDateNeedsUnit Code = 5429413
	// WindowRangeNotNumber: a range window without unit over a value that is not a number.
	WindowRangeNotNumber Code = 5429414
	// WindowRangeNotDate: a range window with unit over a value that is not a date.
	WindowRangeNotDate Code = 5429513
	// IntegralUnitNeedsDate: $integral with unit over a sortBy that is not a date.
	IntegralUnitNeedsDate Code = 5423901
	// IntegralDateNeedsUnit: $integral without unit over a date sortBy.
	IntegralDateNeedsUnit Code = 5423902
	// DerivativeUnitNeedsDate: $derivative with unit over a sortBy that is not a date.
	DerivativeUnitNeedsDate Code = 5624900
	// DerivativeDateNeedsUnit: $derivative without unit over a date sortBy.
	DerivativeDateNeedsUnit Code = 5624901
)

// $fill.
const (
	// FillOutputNotObject: a $fill output field that is not an object.
	FillOutputNotObject Code = 6050200
	// FillMethodAndValue: a $fill output with both method and value.
	FillMethodAndValue Code = 6050201
	// FillBadMethod: a $fill method other than locf and linear.
	FillBadMethod Code = 6050202
	// FillOutputEmpty: a $fill without output fields.
	FillOutputEmpty Code = 6050203
	// FillPartitionTwice: $fill with both partitionBy and partitionByFields.
	FillPartitionTwice Code = 6050204
)

// $densify.
const (
	// DensifyValueType: a densified field holding neither a number nor a date.
	DensifyValueType Code = 5733201
	// DensifyStepNotPositive: a step that is not a positive number.
	DensifyStepNotPositive Code = 5733401
	// DensifyBoundsNotAscending: explicit bounds whose lower exceeds the upper.
	DensifyBoundsNotAscending Code = 5733402
	// DensifyBoundsNotPair: explicit bounds that are not two values.
	DensifyBoundsNotPair Code = 5733403
	// DensifyBoundsBadType: bounds neither "full", "partition" nor an array.
	DensifyBoundsBadType Code = 5733404
	// DensifyBoundsDateMix: a date lower bound with a non-date upper bound.
	DensifyBoundsDateMix Code = 5733405
	// DensifyBoundsNumberMix: a numeric lower bound with a non-numeric upper bound.
	DensifyBoundsNumberMix Code = 5733406
	// DensifyPartitionNeedsFields: bounds "partition" without partitionByFields.
	DensifyPartitionNeedsFields Code = 5733408
	// DensifyNumericWithUnit: numeric bounds with a unit.
	DensifyNumericWithUnit Code = 5733409
	// DensifyDatesNeedUnit: date bounds without a unit.
	DensifyDatesNeedUnit Code = 5733410
	// DensifyBoundsNotNumbersOrDates: explicit bounds that are neither numbers nor dates.
	DensifyBoundsNotNumbersOrDates Code = 5946800
	// DensifyBoundsBadString: a bounds string other than "full" and "partition".
	DensifyBoundsBadString Code = 5946802
	// DensifyTypesDiffer: numeric bounds and step of different types.
	DensifyTypesDiffer Code = 5876900
	// DensifyTooManyDocs: more generated documents than internalQueryMaxAllowedDensifyDocs.
	DensifyTooManyDocs Code = 5897900
	// DensifyDateStepNotWhole: a date step that is not a whole number.
	DensifyDateStepNotWhole Code = 6586400
)

// Expression operators: trigonometry, sizes, timestamps.
const (
	// TrigOutOfDomain: a trigonometric operator's argument outside its domain.
	TrigOutOfDomain Code = 50989
	// Atan2FirstNotNumber: $atan2's first argument is not a number.
	Atan2FirstNotNumber Code = 51044
	// Atan2SecondNotNumber: $atan2's second argument is not a number.
	Atan2SecondNotNumber Code = 51045
	// BinarySizeBadType: $binarySize of something other than a string or binData.
	BinarySizeBadType Code = 51276
	// BSONSizeNotDocument: $bsonSize of something other than a document.
	BSONSizeNotDocument Code = 31393
	// TsSecondNotTimestamp: $tsSecond of something other than a timestamp.
	TsSecondNotTimestamp Code = 5687301
	// TsIncrementNotTimestamp: $tsIncrement of something other than a timestamp.
	TsIncrementNotTimestamp Code = 5687302
)
