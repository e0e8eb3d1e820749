package mongoerr

// Location codes: codes MongoDB 7.0 raises without a name in
// error_codes.yml, so their codeName is "Location<code>". Each name says
// what the code rejects; the numbers are MongoDB's.

// Command parsing (IDL and generic arguments).
const (
	// IDLDuplicateField: a command field given twice (named only after 7.0).
	IDLDuplicateField Code = 40413
	// IDLFailedToParse: a required command field is missing (named only after 7.0).
	IDLFailedToParse Code = 40414
	// IDLUnknownField: a command field the command does not take (named only after 7.0).
	IDLUnknownField Code = 40415
	// IDLValueOutOfRange: a numeric command field outside its allowed range or not whole.
	IDLValueOutOfRange Code = 51024
	// ExpectedObjectParameter: a parameter that must be an object (e.g. $clusterTime) is not.
	ExpectedObjectParameter Code = 10065
	// APIParametersWithoutVersion: apiStrict or apiDeprecationErrors given without apiVersion.
	APIParametersWithoutVersion Code = 4886600
	// APIVersionRequired: a command without apiVersion while the requireApiVersion parameter is set.
	APIVersionRequired Code = 498870
)

// $jsonSchema's encrypt keyword.
const (
	// EncryptKeyIDNotUUID: an element of an encrypt keyId array that is not a UUID.
	EncryptKeyIDNotUUID Code = 51084
	// EncryptKeyIDType: an encrypt keyId neither a string nor an array of UUIDs.
	EncryptKeyIDType Code = 51085
)

// Change streams.
const (
	// SplitFragmentTooLarge: a field of a change event too large for any fragment of $changeStreamSplitLargeEvent.
	SplitFragmentTooLarge Code = 7182500
	// SplitEmptyEvent: a change event to split that holds nothing but its _id.
	SplitEmptyEvent Code = 7182502
	// SplitStageSpecNotEmpty: a $changeStreamSplitLargeEvent stage whose spec is not an empty object.
	SplitStageSpecNotEmpty Code = 7182800
	// SplitStageNotLast: a $changeStreamSplitLargeEvent stage that is not the pipeline's last.
	SplitStageNotLast Code = 7182802
	// ApplyOplogUpdateSpecNotObject: a $_internalApplyOplogUpdate stage whose argument is not an object.
	ApplyOplogUpdateSpecNotObject Code = 6315901
	// OplogUpdateWithoutVersion: an update oplog entry's o with neither _id (a replacement) nor $v: 2.
	OplogUpdateWithoutVersion Code = 4772600
	// OplogUpdateDiffNotObject: a $v: 2 update oplog entry's o whose diff is not an object.
	OplogUpdateDiffNotObject Code = 4772601
)

// Awaitable hello (the streaming topology protocol).
const (
	// AwaitableHelloIncomplete: a hello with topologyVersion but no maxAwaitTimeMS, or the reverse.
	AwaitableHelloIncomplete Code = 31368
	// TopologyVersionNegativeCounter: a hello's topologyVersion with a negative counter.
	TopologyVersionNegativeCounter Code = 31372
	// TopologyVersionFromFuture: a hello's topologyVersion of this process with a counter above the server's.
	TopologyVersionFromFuture Code = 31382
	// ExhaustHelloWithoutMaxAwait: a hello allowing exhaust that is not awaitable.
	ExhaustHelloWithoutMaxAwait Code = 51756
)

// Wire protocol.
const (
	// OpMsgMissingDB: an OP_MSG body without a $db field.
	OpMsgMissingDB Code = 40571
	// LegacyOpUnsupported: a legacy opcode MongoDB 7.0 answers only to refuse (an
	// OP_QUERY that is a query rather than a command, an OP_GET_MORE).
	LegacyOpUnsupported Code = 5739101
	// OpQueryExhaustCommand: an OP_QUERY command with the exhaust flag.
	OpQueryExhaustCommand Code = 18527
	// OpQueryBadNumberToReturn: an OP_QUERY command whose numberToReturn is not 1 or -1.
	OpQueryBadNumberToReturn Code = 16979
	// OpQueryWithDB: an OP_QUERY command with a $db field.
	OpQueryWithDB Code = 40621
	// OpMsgMultipleBodies: an OP_MSG with more than one kind-0 section.
	OpMsgMultipleBodies Code = 40430
	// OpMsgDuplicateSequence: an OP_MSG with two document sequences of one identifier.
	OpMsgDuplicateSequence Code = 40431
	// OpMsgUnknownSectionKind: an OP_MSG section kind other than 0 or 1.
	OpMsgUnknownSectionKind Code = 40432
	// OpMsgDuplicateBodySequence: a document sequence that repeats a body field.
	OpMsgDuplicateBodySequence Code = 40433
	// OpMsgMissingBody: an OP_MSG without a kind-0 section.
	OpMsgMissingBody Code = 40587
	// OpMsgChecksumNoRoom: an OP_MSG with the checksum flag whose body
	// holds no byte beside its flags and checksum.
	OpMsgChecksumNoRoom Code = 51252
)

// Update.
const (
	// UpdateResultTooLarge: an update whose resulting document exceeds the BSON size limit.
	UpdateResultTooLarge Code = 17419
	// UpsertResultTooLarge: an upsert whose new document exceeds the BSON size limit.
	UpsertResultTooLarge Code = 17420
	// UpdateConstantsNotPipeline: an update statement's constants (c) on an update that is not a pipeline.
	UpdateConstantsNotPipeline Code = 51198
	// ShardKeyUpdateWithoutFullKey: an update changing a document's shard key value whose filter does not pin the whole shard key by equality.
	ShardKeyUpdateWithoutFullKey Code = 31025
)

// Field paths and projections (shared by find and aggregation).
const (
	// FieldPathEmpty: a field path that is the empty string.
	FieldPathEmpty Code = 40352
	// LetReadsDocument: a command's let expression reading a field, $$ROOT or $$CURRENT.
	LetReadsDocument Code = 4890500
	// FieldPathTrailingDot: a field path that ends with a dot.
	FieldPathTrailingDot Code = 40353
	// FieldPathEmptyComponent: a field path with an empty component ("a..b").
	FieldPathEmptyComponent Code = 15998
	// FieldPathDollarPrefixed: a field path component starting with '$'.
	FieldPathDollarPrefixed Code = 16410
	// ProjectionPathPrefixCollision: a projection path that is a prefix of another.
	ProjectionPathPrefixCollision Code = 31249
	// ProjectionPathCollision: a projection path given twice.
	ProjectionPathCollision Code = 31250
	// ProjectionInclusionInExclusion: an inclusion inside an exclusion projection.
	ProjectionInclusionInExclusion Code = 31253
	// ProjectionExclusionInInclusion: an exclusion inside an inclusion projection.
	ProjectionExclusionInInclusion Code = 31254
	// ProjectionExpressionInExclusion: an expression inside an exclusion projection.
	ProjectionExpressionInExclusion Code = 31310
	// ProjectionEmptySubObject: an empty object as a sub-projection.
	ProjectionEmptySubObject Code = 51270
	// ProjectionSpecEmpty: a $project specification with no fields.
	ProjectionSpecEmpty Code = 51272
)

// Aggregation pipeline structure.
const (
	// PipelineTooLong: a pipeline listing more stages than
	// internalPipelineLengthLimit.
	PipelineTooLong Code = 7749501
	// StageSpecNotSingleField: a stage document without exactly one field.
	StageSpecNotSingleField Code = 40323
	// UnknownPipelineStage: a stage name MongoDB does not know.
	UnknownPipelineStage Code = 40324
	// FacetStageNotAllowed: a stage not allowed inside $facet.
	FacetStageNotAllowed Code = 40600
	// StageMustBeLast: a stage ($out, $merge) that is not the last stage.
	StageMustBeLast Code = 40601
	// StageMustBeFirst: a stage that must be first but is not.
	StageMustBeFirst Code = 40602
	// LookupSubPipelineStageNotAllowed: a stage not allowed in a $lookup sub-pipeline.
	LookupSubPipelineStageNotAllowed Code = 51047
	// UnionWithSubPipelineStageNotAllowed: a stage not allowed in a $unionWith sub-pipeline.
	UnionWithSubPipelineStageNotAllowed Code = 31441
)

// Aggregation stages.
const (
	// SearchOnlyOnAtlas: an Atlas Search stage ($search, $searchMeta, $vectorSearch, $listSearchIndexes) on a server without search.
	SearchOnlyOnAtlas Code = 6047401
	// MatchSpecNotObject: a $match argument that is not an object.
	MatchSpecNotObject Code = 15959
	// SortSpecNotObject: a $sort argument that is not an object.
	SortSpecNotObject Code = 15973
	// SortSpecEmpty: a $sort with no keys.
	SortSpecEmpty Code = 15976
	// SkipInvalid: a $skip that is negative, not whole or past 64 bits.
	SkipInvalid Code = 5107200
	// LimitInvalid: a $limit that is negative, not whole or past 64 bits.
	LimitInvalid Code = 5107201
	// LimitNotPositive: a $limit of zero.
	LimitNotPositive Code = 15958
	// SampleSpecNotObject: a $sample argument that is not an object.
	SampleSpecNotObject Code = 28745
	// SampleSizeNotNumber: a $sample size that is not a number.
	SampleSizeNotNumber Code = 28746
	// SampleSizeNegative: a negative $sample size.
	SampleSizeNegative Code = 28747
	// SampleUnknownOption: a $sample option other than size.
	SampleUnknownOption Code = 28748
	// SampleMissingSize: a $sample without size.
	SampleMissingSize Code = 28749
	// ProjectSpecNotObject: a $project argument that is not an object.
	ProjectSpecNotObject Code = 15969
	// AddFieldsSpecNotObject: an $addFields/$set argument that is not an object.
	AddFieldsSpecNotObject Code = 40272
	// AddFieldsSpecEmpty: an $addFields/$set with no fields.
	AddFieldsSpecEmpty Code = 40177
	// AddFieldsConflictingPaths: an $addFields/$set naming a path and a
	// path inside it, or one path twice.
	AddFieldsConflictingPaths Code = 40176
	// AddFieldsExpressionNotSingleField: an $addFields/$set object holding
	// a '$' name beside other fields.
	AddFieldsExpressionNotSingleField Code = 40181
	// UnsetSpecInvalidType: an $unset argument that is neither a string nor an array.
	UnsetSpecInvalidType Code = 31002
	// UnsetSpecEmpty: an $unset with an empty array.
	UnsetSpecEmpty Code = 31119
	// UnsetSpecNonString: an $unset array with a non-string element.
	UnsetSpecNonString Code = 31120
	// ReplaceRootSpecNotObject: a $replaceRoot argument that is not an object.
	ReplaceRootSpecNotObject Code = 40229
	// ReplaceRootNotObject: a newRoot (or $documents element) that is not an object.
	ReplaceRootNotObject Code = 40228
	// DocumentsNotArray: a $documents expression that does not evaluate to an array.
	DocumentsNotArray Code = 5858203
	// UnwindSpecInvalidType: an $unwind argument that is neither a string nor an object.
	UnwindSpecInvalidType Code = 15981
	// UnwindPathNotString: an $unwind path that is not a string.
	UnwindPathNotString Code = 28808
	// UnwindPreserveNotBool: an $unwind preserveNullAndEmptyArrays that is not a boolean.
	UnwindPreserveNotBool Code = 28809
	// UnwindIndexFieldNotString: an $unwind includeArrayIndex that is not a non-empty string.
	UnwindIndexFieldNotString Code = 28810
	// UnwindUnknownOption: an $unwind option MongoDB does not know.
	UnwindUnknownOption Code = 28811
	// UnwindMissingPath: an $unwind without a path, or with an empty one.
	UnwindMissingPath Code = 28812
	// UnwindPathNotDollarPrefixed: an $unwind path without the leading '$'.
	UnwindPathNotDollarPrefixed Code = 28818
	// UnwindIndexFieldDollarPrefixed: an $unwind includeArrayIndex starting with '$'.
	UnwindIndexFieldDollarPrefixed Code = 28822
	// GroupSpecNotObject: a $group argument that is not an object.
	GroupSpecNotObject Code = 15947
	// GroupDuplicateID: a $group giving _id twice.
	GroupDuplicateID Code = 15948
	// GroupUnknownAccumulator: a $group accumulator MongoDB does not know.
	GroupUnknownAccumulator Code = 15952
	// GroupMissingID: a $group without _id.
	GroupMissingID Code = 15955
	// GroupDoingMergeNotTrue: a $group whose $doingMerge is false.
	GroupDoingMergeNotTrue Code = 17030
	// GroupInclusionStyle: a number or boolean among the fields of an
	// object $group _id.
	GroupInclusionStyle Code = 17390
	// DottedFieldInSubObject: a dotted field name inside a sub-object of a
	// $group _id or of $addFields.
	DottedFieldInSubObject Code = 40183
	// AccumulatorFieldNotObject: a $group output field that is not an accumulator object.
	AccumulatorFieldNotObject Code = 40234
	// AccumulatorFieldDotted: a $group output field name containing '.'.
	AccumulatorFieldDotted Code = 40235
	// AccumulatorFieldIsOperator: a $group output field name starting with '$'.
	AccumulatorFieldIsOperator Code = 40236
	// AccumulatorUnaryArray: an array argument to a unary accumulator.
	AccumulatorUnaryArray Code = 40237
	// AccumulatorFieldMultiple: a $group output field with more than one accumulator.
	AccumulatorFieldMultiple Code = 40238
	// FirstLastNSpecNotObject: a $firstN/$lastN argument (accumulator, window
	// function or expression) that is not an object.
	FirstLastNSpecNotObject Code = 5787801
	// MinMaxNSpecNotObject: a $minN/$maxN argument (accumulator, window
	// function or expression) that is not an object.
	MinMaxNSpecNotObject Code = 5787900
	// AccumulatorNUnknownArgument: an n-accumulator or n-expression argument it does not take.
	AccumulatorNUnknownArgument Code = 5787901
	// AccumulatorNNotNumeric: an n that is not a number.
	AccumulatorNNotNumeric Code = 5787902
	// AccumulatorNNotIntegral: a numeric n that is not a whole number a
	// 64-bit integer holds.
	AccumulatorNNotIntegral Code = 5787903
	// AccumulatorNMissingN: an n-accumulator without n.
	AccumulatorNMissingN Code = 5787906
	// AccumulatorNMissingInput: an n-accumulator without its input field.
	AccumulatorNMissingInput Code = 5787907
	// AccumulatorNNotPositive: an n that is not positive.
	AccumulatorNNotPositive Code = 5787908
	// TopBottomSpecNotObject: a $top/$bottom/$topN/$bottomN argument that is not an object.
	TopBottomSpecNotObject Code = 5788001
	// TopBottomUnknownArgument: a $top/$bottom/$topN/$bottomN argument it
	// does not take (n, for $top and $bottom).
	TopBottomUnknownArgument Code = 5788002
	// TopBottomMissingN: a $topN/$bottomN without n.
	TopBottomMissingN Code = 5788003
	// TopBottomMissingOutput: a $top/$bottom/$topN/$bottomN without output.
	TopBottomMissingOutput Code = 5788004
	// TopBottomMissingSortBy: a $top/$bottom/$topN/$bottomN without sortBy.
	TopBottomMissingSortBy Code = 5788005
	// BucketAutoInitializerNotConstant: a $bucketAuto accumulator whose n is
	// not constant (it cannot depend on a group key).
	BucketAutoInitializerNotConstant Code = 4544714
	// CountFieldNotString: a $count field that is not a string.
	CountFieldNotString Code = 40156
	// CountFieldEmpty: a $count field that is the empty string.
	CountFieldEmpty Code = 40157
	// CountFieldDollarPrefixed: a $count field starting with '$'.
	CountFieldDollarPrefixed Code = 40158
	// CountFieldNullByte: a $count field containing a null byte.
	CountFieldNullByte Code = 40159
	// CountFieldDotted: a $count field containing '.'.
	CountFieldDotted Code = 40160
	// SortByCountInvalidObject: a $sortByCount object whose first field name
	// does not start with '$'.
	SortByCountInvalidObject Code = 40147
	// SortByCountInvalidPath: a $sortByCount string that is not a $-prefixed path.
	SortByCountInvalidPath Code = 40148
	// SortByCountInvalidType: a $sortByCount argument that is neither a string nor an object.
	SortByCountInvalidType Code = 40149
	// BucketBoundaryNotConstant: a $bucket boundary that is not a constant.
	BucketBoundaryNotConstant Code = 40191
	// BucketTooFewBoundaries: $bucket boundaries with fewer than two values.
	BucketTooFewBoundaries Code = 40192
	// BucketBoundaryTypeMismatch: $bucket boundaries of differing types.
	BucketBoundaryTypeMismatch Code = 40193
	// BucketBoundariesUnsorted: $bucket boundaries not in ascending order.
	BucketBoundariesUnsorted Code = 40194
	// BucketDefaultNotConstant: a $bucket default that is not a constant.
	BucketDefaultNotConstant Code = 40195
	// BucketOutputNotObject: a $bucket output that is not an object.
	BucketOutputNotObject Code = 40196
	// BucketUnknownOption: a $bucket option MongoDB does not know.
	BucketUnknownOption Code = 40197
	// BucketMissingRequired: a $bucket without groupBy or boundaries.
	BucketMissingRequired Code = 40198
	// BucketDefaultWithinBoundaries: a $bucket default inside the boundaries' range.
	BucketDefaultWithinBoundaries Code = 40199
	// BucketBoundariesNotArray: $bucket boundaries that are not an array.
	BucketBoundariesNotArray Code = 40200
	// BucketSpecNotObject: a $bucket argument that is not an object.
	BucketSpecNotObject Code = 40201
	// BucketGroupByInvalid: a $bucket groupBy that is not a path or expression.
	BucketGroupByInvalid Code = 40202
	// BucketAutoGroupByInvalid: a $bucketAuto groupBy that is not a path or expression.
	BucketAutoGroupByInvalid Code = 40239
	// BucketAutoSpecNotObject: a $bucketAuto argument that is not an object.
	BucketAutoSpecNotObject Code = 40240
	// BucketAutoBucketsNotNumber: a $bucketAuto buckets that is not a number.
	BucketAutoBucketsNotNumber Code = 40241
	// BucketAutoBucketsNotInt32: a $bucketAuto buckets not representable as a 32-bit integer.
	BucketAutoBucketsNotInt32 Code = 40242
	// BucketAutoBucketsNotPositive: a $bucketAuto buckets that is not positive.
	BucketAutoBucketsNotPositive Code = 40243
	// BucketAutoOutputNotObject: a $bucketAuto output that is not an object.
	BucketAutoOutputNotObject Code = 40244
	// BucketAutoUnknownOption: a $bucketAuto option MongoDB does not know.
	BucketAutoUnknownOption Code = 40245
	// BucketAutoMissingRequired: a $bucketAuto without groupBy or buckets.
	BucketAutoMissingRequired Code = 40246
	// GranularityUnknown: a $bucketAuto granularity naming no series.
	GranularityUnknown Code = 40257
	// BucketAutoGranularityNotNumeric: a groupBy value that is not a number under a granularity.
	BucketAutoGranularityNotNumeric Code = 40258
	// BucketAutoGranularityNaN: a groupBy value that is NaN under a granularity.
	BucketAutoGranularityNaN Code = 40259
	// BucketAutoGranularityNegative: a negative groupBy value under a granularity.
	BucketAutoGranularityNegative Code = 40260
	// BucketAutoGranularityNotString: a $bucketAuto granularity that is not a string.
	BucketAutoGranularityNotString Code = 40261
	// FacetSpecInvalid: a $facet argument that is not a non-empty object.
	FacetSpecInvalid Code = 40169
	// FacetArgumentNotArray: a $facet field that is not an array.
	FacetArgumentNotArray Code = 40170
	// FacetPipelineElementInvalid: a $facet pipeline element that is not a non-empty object.
	FacetPipelineElementInvalid Code = 40171
	// LookupResultTooLarge: $lookup matches exceeding the intermediate document limit.
	LookupResultTooLarge Code = 4568
	// FacetOutputTooLarge: a $facet output document exceeding the intermediate document limit.
	FacetOutputTooLarge Code = 4031700
	// OutSpecInvalidType: an $out argument that is neither a string nor an object.
	OutSpecInvalidType Code = 16990
	// MergeLetWithInvalidWhenMatched: $merge let with a whenMatched mode that takes no variables.
	MergeLetWithInvalidWhenMatched Code = 51199
	// MergeOnArrayElementNotString: a $merge on array with a non-string element.
	MergeOnArrayElementNotString Code = 51134
	// MergeOnEmpty: a $merge on with no fields.
	MergeOnEmpty Code = 51187
	// MergeOnInvalidType: a $merge on that is neither a string nor an array of strings.
	MergeOnInvalidType Code = 51186
	// MergeOnFieldInvalidValue: a document whose $merge on field is missing, null or undefined.
	MergeOnFieldInvalidValue Code = 51132
	// MergeOnFieldArray: a document whose $merge on field is an array.
	MergeOnFieldArray    Code = 51185
	MergeOnNoUniqueIndex Code = 51183
	// MergeOnDuplicateField: a $merge on naming a field twice.
	MergeOnDuplicateField Code = 31465
	// MergeIntoInvalidType: a $merge into that is neither a string nor an object.
	MergeIntoInvalidType Code = 51178
	// MergeModesUnsupported: a whenMatched and whenNotMatched pair $merge does not run.
	MergeModesUnsupported Code = 51181
	// MergeWhenMatchedInvalidType: a $merge whenMatched that is neither a string nor an array.
	MergeWhenMatchedInvalidType Code = 51191
	// MergeLetRedefinesNew: $merge let giving 'new' a value other than "$$ROOT".
	MergeLetRedefinesNew Code = 51273
	// MergeIntoEmptyString: a $merge into that is the empty string.
	MergeIntoEmptyString Code = 5786800
	// MergeIntoNoColl: a $merge into object without a non-empty coll.
	MergeIntoNoColl Code = 5786801
	// MergeIntoSystemCollection: $merge to a system.* collection.
	MergeIntoSystemCollection Code = 31319
	// MergeIntoInternalDB: $merge to admin, config or local.
	MergeIntoInternalDB Code = 31320
	// CollStatsSpecNotObject: a $collStats argument that is not an object, refused when the
	// pipeline is lite-parsed (the 40166 of the full parse comes too late to be seen).
	CollStatsSpecNotObject Code = 5447000
	// IndexStatsSpecNotEmpty: an $indexStats argument that is not an empty object.
	IndexStatsSpecNotEmpty Code = 28803
	// ObjectNotEmpty: a stage argument that must be an empty object and is not
	// (MongoDB's validateObjectIsEmpty: $collStats' count and queryExecStats).
	ObjectNotEmpty Code = 31170
	// PlanCacheStatsNoCollection: $planCacheStats on a collection that does not exist.
	PlanCacheStatsNoCollection Code = 50933
)

// Expressions.
const (
	// SwitchNoMatchingBranch: a $switch (or $bucket) with no matching branch and no default.
	SwitchNoMatchingBranch Code = 40066
	// MergeObjectsInputNotObject: a $mergeObjects input that is not an object.
	MergeObjectsInputNotObject Code = 40400
)

// Expressions: general.
const (
	// ExpressionSpecNotSingleField: an expression object with more than one field.
	ExpressionSpecNotSingleField Code = 15983
	// ExpressionArgCountExact: an operator given the wrong number of arguments.
	ExpressionArgCountExact Code = 16020
	// ExpressionArgCountAtLeast: an operator given too few arguments.
	ExpressionArgCountAtLeast Code = 16021
	// ExpressionArgCountRange: an operator given a number of arguments outside its range.
	ExpressionArgCountRange Code = 28667
	// ObjectLiteralDuplicateField: an object literal with a field given twice.
	ObjectLiteralDuplicateField Code = 16406
	// FieldPathNullByte: a field path component containing a NUL byte.
	FieldPathNullByte Code = 16411
	// FieldPathEmbeddedNull: a '$'-prefixed field path containing a NUL byte, refused before it is split.
	FieldPathEmbeddedNull Code = 16419
	// ExpressionFieldPathDotted: an expression object field name containing '.'.
	ExpressionFieldPathDotted Code = 16412
	// FieldPathDollarOnly: '$' alone used as a field path.
	FieldPathDollarOnly Code = 16872
)

// Expressions: variables and $let.
const (
	// LetSpecNotObject: a $let argument that is not an object.
	LetSpecNotObject Code = 16874
	// LetUnknownArgument: a $let argument other than vars and in.
	LetUnknownArgument Code = 16875
	// LetMissingVars: a $let without vars.
	LetMissingVars Code = 16876
	// LetMissingIn: a $let without in.
	LetMissingIn Code = 16877
	// LetSetsInternalConstant: a command's let setting a system variable ($$NOW...), which only internal clients may.
	LetSetsInternalConstant Code = 4738901
	// UndefinedVariable: a $$ reference to a variable not in scope.
	UndefinedVariable Code = 17276
	// BuiltinVariableUnavailable: a system variable evaluated without a value: $$CLUSTER_TIME where there is
	// no cluster clock (a standalone), $$JS_SCOPE and $$IS_MR outside mapReduce (Variables::getValue).
	BuiltinVariableUnavailable Code = 51144
)

// Expressions: arithmetic.
const (
	// (Since MongoDB 6.1 an operand of the wrong type of $add, $subtract,
	// $multiply and $divide is TypeMismatch, no longer 16554-16556, 16609
	// and 16613.)
	// ModByZero: a $mod of numbers that are not decimals with divisor zero.
	ModByZero Code = 16610
	// ModByZeroDecimal: a $mod with a decimal operand and divisor zero.
	ModByZeroDecimal Code = 5733415
	// ModInvalidType: a $mod operand that is not a number.
	ModInvalidType Code = 16611
	// AddMultipleDates: an $add with more than one date.
	AddMultipleDates Code = 16612
	// AbsLongMin: $abs of the minimum 64-bit integer.
	AbsLongMin Code = 28680
	// SqrtNegative: a $sqrt of a negative number.
	SqrtNegative Code = 28714
	// LogArgumentNotNumber: a $log argument that is not a number.
	LogArgumentNotNumber Code = 28756
	// LogBaseNotNumber: a $log base that is not a number.
	LogBaseNotNumber Code = 28757
	// LogArgumentNotPositive: a $log argument that is not positive.
	LogArgumentNotPositive Code = 28758
	// LogBaseInvalid: a $log base that is not positive or is 1.
	LogBaseInvalid Code = 28759
	// Log10ArgumentNotPositive: a $log10 argument that is not positive.
	Log10ArgumentNotPositive Code = 28761
	// PowBaseNotNumber: a $pow base that is not a number.
	PowBaseNotNumber Code = 28762
	// PowExponentNotNumber: a $pow exponent that is not a number.
	PowExponentNotNumber Code = 28763
	// PowZeroNegativeExponent: a $pow of 0 to a negative exponent.
	PowZeroNegativeExponent Code = 28764
	// UnaryArithNotNumber: a unary arithmetic operand ($abs, $ceil, $exp...) that is not a number.
	UnaryArithNotNumber Code = 28765
	// LnArgumentNotPositive: a $ln argument that is not positive.
	LnArgumentNotPositive Code = 28766
	// RoundArgumentNotNumber: a $round/$trunc argument that is not a number.
	RoundArgumentNotNumber Code = 51081
	// RoundPrecisionNotIntegral: a $round/$trunc precision that is not integral.
	RoundPrecisionNotIntegral Code = 51082
	// RoundPrecisionOutOfRange: a $round/$trunc precision outside [-20, 100].
	RoundPrecisionOutOfRange Code = 51083
	// RandInValidator: $rand in a collection validator.
	RandInValidator Code = 3040500
	// RandTakesNoArguments: a $rand given arguments.
	RandTakesNoArguments Code = 3040501
)

// Expressions and accumulators: $percentile and $median.
const (
	// PercentileAccSpecNotObject: a $percentile accumulator argument that is not an object.
	PercentileAccSpecNotObject Code = 7429703
	// PercentileExprSpecNotObject: a $percentile expression argument that is not an object.
	PercentileExprSpecNotObject Code = 7436200
	// MedianAccSpecNotObject: a $median accumulator argument that is not an object.
	MedianAccSpecNotObject Code = 7436100
	// MedianExprSpecNotObject: a $median expression argument that is not an object.
	MedianExprSpecNotObject Code = 7436201
	// PercentilePNotConstant: a $percentile p that is not a constant.
	PercentilePNotConstant Code = 7750300
	// PercentilePNotArray: a $percentile p that is not a non-empty array.
	PercentilePNotArray Code = 7750301
	// PercentilePNotNumber: a $percentile p element that is not a number.
	PercentilePNotNumber Code = 7750302
	// PercentilePOutOfRange: a $percentile p element outside [0, 1].
	PercentilePOutOfRange Code = 7750303
)

// Clustered collections.
const (
	// ClusteredIndexNotUnique: a clusteredIndex without unique: true.
	ClusteredIndexNotUnique Code = 5979700
	// ClusteredIndexLegacyFormat: clusteredIndex: true (the form MongoDB
	// keeps for the collections it clusters itself, a time series
	// collection's buckets) on another collection, or a clusteredIndex
	// document on those.
	ClusteredIndexLegacyFormat Code = 5979703
	// ClusteredIndexVersion: a clusteredIndex whose v is not 2.
	ClusteredIndexVersion Code = 5979704
	// ClusteredIndexDrop: a dropIndexes naming a clustered collection's
	// clustered index.
	ClusteredIndexDrop Code = 5979800
	// ClusteredView: create with clusteredIndex and viewOn.
	ClusteredView Code = 6026500
	// ClusteredNoAutoIndexID: create with clusteredIndex and autoIndexId: false.
	ClusteredNoAutoIndexID Code = 6026501
	// ClusteredSize: create with clusteredIndex and a capped size.
	ClusteredSize Code = 6049200
	// ClusteredCappedNoTTL: a capped clustered collection without expireAfterSeconds.
	ClusteredCappedNoTTL Code = 6049201
	// ClusteredMax: create with clusteredIndex and a capped max.
	ClusteredMax Code = 6049204
	// ClusteredCappedTestOnly: a capped clustered collection without
	// the enableTestCommands parameter.
	ClusteredCappedTestOnly Code = 6127800
	// ClusteredIndexImplicitCollection: createIndexes with the clustered
	// option on a collection it would create.
	ClusteredIndexImplicitCollection Code = 6100900
	// ClusteredIndexNameTaken: an index named as the clustered index with
	// another key.
	ClusteredIndexNameTaken Code = 6100906
	// ClusteredIndexOtherVersion: an index of the cluster key with a v
	// other than the clustered index's.
	ClusteredIndexOtherVersion Code = 6100908
	// ClusteredIndexOtherUnique: an index of the cluster key with
	// unique: false.
	ClusteredIndexOtherUnique Code = 6100909
	// ClusteredIndexMismatch: an index with clustered: true whose key is
	// not the collection's cluster key (or on a collection that is not
	// clustered).
	ClusteredIndexMismatch Code = 6243700
	// ClusteredIndexFalse: an index specification with clustered: false.
	ClusteredIndexFalse Code = 6492800
	// ClusteredKeyRangeCollation: a min or max, with a hint of the
	// clustered index, that the query's collation cannot compare as the
	// collection's.
	ClusteredKeyRangeCollation Code = 6137400
	// ClusteredKeyRangeOrder: a min not below max, with a hint of the
	// clustered index.
	ClusteredKeyRangeOrder Code = 6137401
	// RecordIDTooLarge: a clustered collection's document whose cluster
	// key, encoded as its record id, is over 8 MB.
	RecordIDTooLarge Code = 5894900
)

// Collection creation.
const (
	// AutoIndexIDReplicated: create's autoIndexId: false for a collection
	// that needs an _id index (not clustered) on a namespace the oplog
	// replicates.
	AutoIndexIDReplicated Code = 50001
)

// Expressions: comparison and conditionals.
const (
	// CondMissingIf: a $cond without if.
	CondMissingIf Code = 17080
	// CondMissingThen: a $cond without then.
	CondMissingThen Code = 17081
	// CondMissingElse: a $cond without else.
	CondMissingElse Code = 17082
	// CondUnknownArgument: a $cond argument other than if, then and else.
	CondUnknownArgument Code = 17083
	// SwitchSpecNotObject: a $switch argument that is not an object.
	SwitchSpecNotObject Code = 40060
	// SwitchBranchesNotArray: $switch branches that are not an array.
	SwitchBranchesNotArray Code = 40061
	// SwitchBranchNotObject: a $switch branch that is not an object.
	SwitchBranchNotObject Code = 40062
	// SwitchBranchUnknownArgument: a $switch branch field other than case and then.
	SwitchBranchUnknownArgument Code = 40063
	// SwitchBranchMissingCase: a $switch branch without case.
	SwitchBranchMissingCase Code = 40064
	// SwitchBranchMissingThen: a $switch branch without then.
	SwitchBranchMissingThen Code = 40065
	// SwitchUnknownArgument: a $switch argument other than branches and default.
	SwitchUnknownArgument Code = 40067
	// SwitchNoBranches: a $switch without branches.
	SwitchNoBranches Code = 40068
	// IfNullTooFewArguments: an $ifNull with fewer than two arguments.
	IfNullTooFewArguments Code = 1257300
)

// Expressions: arrays and sets.
const (
	// AllElementsTrueArgumentNotArray: an $allElementsTrue argument that is not an array.
	AllElementsTrueArgumentNotArray Code = 17040
	// AnyElementTrueArgumentNotArray: an $anyElementTrue argument that is not an array.
	AnyElementTrueArgumentNotArray Code = 17041
	// SetIsSubsetSecondNotArray: a $setIsSubset second operand that is not an array.
	SetIsSubsetSecondNotArray Code = 17042
	// SetUnionArgumentNotArray: a $setUnion operand that is not an array.
	SetUnionArgumentNotArray Code = 17043
	// SetEqualsArgumentNotArray: a $setEquals operand that is not an array.
	SetEqualsArgumentNotArray Code = 17044
	// SetEqualsTooFewArguments: a $setEquals of fewer than two operands.
	SetEqualsTooFewArguments Code = 17045
	// SetIntersectionArgumentNotArray: a $setIntersection operand that is not an array.
	SetIntersectionArgumentNotArray Code = 17047
	// SetDifferenceFirstNotArray: a $setDifference first operand that is not an array.
	SetDifferenceFirstNotArray Code = 17048
	// SetDifferenceSecondNotArray: a $setDifference second operand that is not an array.
	SetDifferenceSecondNotArray Code = 17049
	// SetIsSubsetFirstNotArray: a $setIsSubset first operand that is not an array.
	SetIsSubsetFirstNotArray Code = 17046
	// SetIsSubsetConstFirstNotArray: a $setIsSubset first operand that is not an
	// array, the second being a constant array.
	SetIsSubsetConstFirstNotArray Code = 17310
	// SetIsSubsetConstSecondNotArray: a $setIsSubset constant second operand that
	// is not an array, refused when the expression is optimized.
	SetIsSubsetConstSecondNotArray Code = 17311
	// SizeArgumentNotArray: a $size argument that is not an array.
	SizeArgumentNotArray Code = 17124
	// ConcatArraysArgumentNotArray: a $concatArrays operand that is not an array.
	ConcatArraysArgumentNotArray Code = 28664
	// ArrayElemAtFirstNotArray: an $arrayElemAt first argument that is not an array.
	ArrayElemAtFirstNotArray Code = 28689
	// ArrayElemAtIndexNotNumber: an $arrayElemAt index that is not a number.
	ArrayElemAtIndexNotNumber Code = 28690
	// ArrayElemAtIndexNotInt32: an $arrayElemAt index not representable as a 32-bit integer.
	ArrayElemAtIndexNotInt32 Code = 28691
	// SliceArrayNotArray: a $slice first argument that is not an array.
	SliceArrayNotArray Code = 28724
	// SliceSecondNotNumber: a $slice second argument that is not a number.
	SliceSecondNotNumber Code = 28725
	// SliceSecondNotInt32: a $slice second argument not representable as a 32-bit integer.
	SliceSecondNotInt32 Code = 28726
	// SliceThirdNotNumber: a $slice third argument that is not a number.
	SliceThirdNotNumber Code = 28727
	// SliceThirdNotInt32: a $slice third argument not representable as a 32-bit integer.
	SliceThirdNotInt32 Code = 28728
	// SliceThirdNotPositive: a $slice third argument that is not positive.
	SliceThirdNotPositive Code = 28729
	// ReverseArrayArgumentNotArray: a $reverseArray argument that is not an array.
	ReverseArrayArgumentNotArray Code = 34435
	// RangeStartNotNumber: a $range start that is not a number.
	RangeStartNotNumber Code = 34443
	// RangeStartNotInt32: a $range start not representable as a 32-bit integer.
	RangeStartNotInt32 Code = 34444
	// RangeEndNotNumber: a $range end that is not a number.
	RangeEndNotNumber Code = 34445
	// RangeEndNotInt32: a $range end not representable as a 32-bit integer.
	RangeEndNotInt32 Code = 34446
	// RangeStepNotNumber: a $range step that is not a number.
	RangeStepNotNumber Code = 34447
	// RangeStepNotInt32: a $range step not representable as a 32-bit integer.
	RangeStepNotInt32 Code = 34448
	// RangeStepZero: a $range step of zero.
	RangeStepZero Code = 34449
	// InArgumentNotArray: an $in second argument that is not an array.
	InArgumentNotArray Code = 40081
	// IndexOfArrayFirstNotArray: an $indexOfArray first argument that is not an array (or null).
	IndexOfArrayFirstNotArray Code = 40090
	// IndexOfArrayConstFirstNotArray: an $indexOfArray constant first operand that is
	// not an array, refused when the expression is optimized.
	IndexOfArrayConstFirstNotArray Code = 50809
	// IndexOfStartNotIntegral: an $indexOf* start or end index that is not integral.
	IndexOfStartNotIntegral Code = 40096
	// IndexOfStartNegative: an $indexOf* start or end index that is negative.
	IndexOfStartNegative Code = 40097
	// FilterSpecNotObject: a $filter argument that is not an object.
	FilterSpecNotObject Code = 28646
	// FilterUnknownArgument: a $filter argument it does not take.
	FilterUnknownArgument Code = 28647
	// FilterMissingInput: a $filter without input.
	FilterMissingInput Code = 28648
	// FilterMissingCond: a $filter without cond.
	FilterMissingCond Code = 28650
	// FilterInputNotArray: a $filter input that is not an array.
	FilterInputNotArray Code = 28651
	// FilterLimitNotInt32: a $filter limit not representable as a 32-bit integer.
	FilterLimitNotInt32 Code = 327391
	// FilterLimitNotPositive: a $filter limit that is not positive.
	FilterLimitNotPositive Code = 327392
	// MapSpecNotObject: a $map argument that is not an object.
	MapSpecNotObject Code = 16878
	// MapUnknownArgument: a $map argument it does not take.
	MapUnknownArgument Code = 16879
	// MapMissingInput: a $map without input.
	MapMissingInput Code = 16880
	// MapMissingIn: a $map without in.
	MapMissingIn Code = 16882
	// MapInputNotArray: a $map input that is not an array.
	MapInputNotArray Code = 16883
	// ReduceSpecNotObject: a $reduce argument that is not an object.
	ReduceSpecNotObject Code = 40075
	// ReduceUnknownArgument: a $reduce argument it does not take.
	ReduceUnknownArgument Code = 40076
	// ReduceMissingInput: a $reduce without input.
	ReduceMissingInput Code = 40077
	// ReduceMissingInitialValue: a $reduce without initialValue.
	ReduceMissingInitialValue Code = 40078
	// ReduceMissingIn: a $reduce without in.
	ReduceMissingIn Code = 40079
	// ReduceInputNotArray: a $reduce input that is not an array.
	ReduceInputNotArray Code = 40080
	// ZipSpecNotObject: a $zip argument that is not an object.
	ZipSpecNotObject Code = 34460
	// ZipInputsNotArray: $zip inputs that are not an array.
	ZipInputsNotArray Code = 34461
	// ZipDefaultsNotArray: $zip defaults that are not an array.
	ZipDefaultsNotArray Code = 34462
	// ZipUseLongestLengthNotBool: a $zip useLongestLength that is not a boolean.
	ZipUseLongestLengthNotBool Code = 34463
	// ZipUnknownArgument: a $zip argument it does not take.
	ZipUnknownArgument Code = 34464
	// ZipMissingInputs: a $zip without inputs.
	ZipMissingInputs Code = 34465
	// ZipDefaultsWithoutUseLongestLength: $zip defaults without useLongestLength true.
	ZipDefaultsWithoutUseLongestLength Code = 34466
	// ZipDefaultsLengthMismatch: $zip defaults and inputs of different lengths.
	ZipDefaultsLengthMismatch Code = 34467
	// ZipInputNotArray: a $zip input that is not an array.
	ZipInputNotArray Code = 34468
	// SortArraySpecNotObject: a $sortArray argument that is not an object.
	SortArraySpecNotObject Code = 2942500
	// SortArrayUnknownArgument: a $sortArray argument it does not take.
	SortArrayUnknownArgument Code = 2942501
	// SortArrayMissingInput: a $sortArray without input.
	SortArrayMissingInput Code = 2942502
	// SortArrayMissingSortBy: a $sortArray without sortBy.
	SortArrayMissingSortBy Code = 2942503
	// SortArrayInputNotArray: a $sortArray input that is not an array.
	SortArrayInputNotArray Code = 2942504
	// SortArraySortByInvalid: a $sortArray sortBy that is not 1, -1 or a sort document.
	SortArraySortByInvalid Code = 2942505
	// NExpressionInputNotArray: a $firstN/$lastN/$maxN/$minN expression input that is not an array.
	NExpressionInputNotArray Code = 5788200
)

// Expressions: strings.
const (
	// StringConversionInvalidType: a value that cannot be converted to a string.
	StringConversionInvalidType Code = 16007
	// LongConversionInvalidType: a value that is not a number where an
	// expression needs a long (Value::coerceToLong).
	LongConversionInvalidType Code = 16004
	// ConcatArgumentNotString: a $concat operand that is not a string.
	ConcatArgumentNotString Code = 16702
	// BufBuilderTooLarge: a string built past MongoDB's BufferMaxSize (125 MB)
	// by $concat, $replaceOne or $replaceAll (BufBuilder's growFailure).
	BufBuilderTooLarge Code = 13548
	// SubstrStartNotNumber: a $substrBytes start that is not a number.
	SubstrStartNotNumber Code = 16034
	// SubstrLengthNotNumber: a $substrBytes length that is not a number.
	SubstrLengthNotNumber Code = 16035
	// SubstrStartContinuationByte: a $substrBytes start inside a UTF-8 character.
	SubstrStartContinuationByte Code = 28656
	// SubstrEndMidCharacter: a $substrBytes end inside a UTF-8 character.
	SubstrEndMidCharacter Code = 28657
	// SubstrCPStartNotNumber: a $substrCP start that is not a number.
	SubstrCPStartNotNumber Code = 34450
	// SubstrCPStartNotInt32: a $substrCP start not representable as a 32-bit integer.
	SubstrCPStartNotInt32 Code = 34451
	// SubstrCPLengthNotNumber: a $substrCP length that is not a number.
	SubstrCPLengthNotNumber Code = 34452
	// SubstrCPLengthNotInt32: a $substrCP length not representable as a 32-bit integer.
	SubstrCPLengthNotInt32 Code = 34453
	// SubstrCPLengthNegative: a negative $substrCP length.
	SubstrCPLengthNegative Code = 34454
	// SubstrCPStartNegative: a negative $substrCP start.
	SubstrCPStartNegative Code = 34455
	// RoundIntegerOverflow: an integer $round or $trunc takes beyond 64
	// bits.
	RoundIntegerOverflow Code = 51080
	// IndexProjectionComputed: an index's wildcardProjection with a value
	// other than a number or a boolean (a computed field).
	IndexProjectionComputed Code = 51271
	// WildcardProjectionOverlap: a compound wildcard index's
	// wildcardProjection naming a path and a path under it on the same
	// side (both included or both excluded).
	WildcardProjectionOverlap Code = 7246200
	// WildcardMultipleFields: an index key pattern with two wildcard fields.
	WildcardMultipleFields Code = 7246201
	// WildcardPluginName: a key pattern field whose type is "wildcard".
	WildcardPluginName Code = 7246202
	// WildcardKeyOverlap: a compound wildcard index whose "p.$**" field
	// holds one of its other fields (p is that field or a prefix of it).
	WildcardKeyOverlap Code = 7246204
	// WildcardProjectionIncludesKey: a compound wildcard index whose
	// wildcardProjection includes one of its other fields (or a prefix).
	WildcardProjectionIncludesKey Code = 7246208
	// WildcardProjectionNotExcluded: a compound wildcard index whose
	// wildcardProjection leaves one of its other fields in the wildcard.
	WildcardProjectionNotExcluded Code = 7246209
	// WildcardProjectionExcludesTooFew: a compound wildcard index whose
	// exclusion wildcardProjection runs out before excluding its other
	// fields (they sort after every excluded path).
	WildcardProjectionExcludesTooFew Code = 7246210
	// WildcardProjectionMixed: a compound wildcard index's
	// wildcardProjection mixing inclusions and exclusions, _id aside.
	WildcardProjectionMixed Code = 7246211
	// WildcardRegularFieldMultikey: an array at a compound wildcard
	// index's field other than the wildcard.
	WildcardRegularFieldMultikey Code = 7246301
	// OutTargetCapped: a $out into a capped collection.
	OutTargetCapped Code = 17152
	// OutSpecialCollection: a $out into a system.* collection.
	OutSpecialCollection Code = 17385
	// OutInternalDB: a $out into admin, config or local.
	OutInternalDB Code = 31321
	// OutTimeseriesTargetType: a $out with timeseries options into a
	// collection or view that is not a time series collection.
	OutTimeseriesTargetType Code = 7268700
	// OutTimeseriesOptionsMismatch: a $out whose timeseries options differ
	// from those of the time series collection it replaces.
	OutTimeseriesOptionsMismatch Code = 7406103
	// DistinctKeyNullByte: a distinct key holding a NUL.
	DistinctKeyNullByte Code = 31032
	// CoerceLongOutOfRange: a number with no 64-bit integer (NaN, an
	// infinity, out of range) where an expression needs a long.
	CoerceLongOutOfRange Code = 31109
	// SubstrStartNegative: a negative $substrBytes start.
	SubstrStartNegative Code = 50752
	// StrLenCPArgumentNotString: a $strLenCP argument that is not a string.
	StrLenCPArgumentNotString Code = 34471
	// StrLenBytesArgumentNotString: a $strLenBytes argument that is not a string.
	StrLenBytesArgumentNotString Code = 34473
	// SplitInputNotString: a $split input that is not a string.
	SplitInputNotString Code = 40085
	// SplitSeparatorNotString: a $split separator that is not a string.
	SplitSeparatorNotString Code = 40086
	// SplitSeparatorEmpty: an empty $split separator.
	SplitSeparatorEmpty Code = 40087
	// IndexOfBytesStringNotString: an $indexOfBytes string that is not a string.
	IndexOfBytesStringNotString Code = 40091
	// IndexOfBytesSubstringNotString: an $indexOfBytes substring that is not a string.
	IndexOfBytesSubstringNotString Code = 40092
	// IndexOfCPStringNotString: an $indexOfCP string that is not a string.
	IndexOfCPStringNotString Code = 40093
	// IndexOfCPSubstringNotString: an $indexOfCP substring that is not a string.
	IndexOfCPSubstringNotString Code = 40094
	// TrimUnknownArgument: a $trim argument other than input and chars.
	TrimUnknownArgument Code = 50694
	// TrimMissingInput: a $trim without input.
	TrimMissingInput Code = 50695
	// TrimSpecNotObject: a $trim argument that is not an object.
	TrimSpecNotObject Code = 50696
	// TrimInputNotString: a $trim input that is not a string.
	TrimInputNotString Code = 50699
	// TrimCharsNotString: $trim chars that are not a string.
	TrimCharsNotString Code = 50700
	// RegexMissingInput: a $regex* expression without input.
	RegexMissingInput Code = 31022
	// RegexMissingRegex: a $regex* expression without regex.
	RegexMissingRegex Code = 31023
	// RegexUnknownArgument: a $regex* argument other than input, regex and options.
	RegexUnknownArgument Code = 31024
	// RegexSpecNotObject: a $regex* argument that is not an object.
	RegexSpecNotObject Code = 51103
	// RegexInputNotString: a $regex* input that is not a string.
	RegexInputNotString Code = 51104
	// RegexRegexInvalidType: a $regex* regex that is neither a string nor a regex.
	RegexRegexInvalidType Code = 51105
	// RegexOptionsNotString: $regex* options that are not a string.
	RegexOptionsNotString Code = 51106
	// RegexOptionsInBoth: $regex* options given both in regex and options.
	RegexOptionsInBoth Code = 51107
	// RegexInvalid: a $regex* pattern that does not compile.
	RegexInvalid Code = 51111
	// RegexOptionsEmbeddedNull: a $regex* operator's options holding a NUL byte.
	RegexOptionsEmbeddedNull Code = 51110
	// ReplaceReplacementNotString: a $replaceOne/$replaceAll replacement that is not a string.
	ReplaceReplacementNotString Code = 51744
	// ReplaceFindNotString: a $replaceOne/$replaceAll find that is not a string.
	ReplaceFindNotString Code = 51745
	// ReplaceInputNotString: a $replaceOne/$replaceAll input that is not a string.
	ReplaceInputNotString Code = 51746
	// ReplaceMissingReplacement: a $replaceOne/$replaceAll without replacement.
	ReplaceMissingReplacement Code = 51747
	// ReplaceMissingFind: a $replaceOne/$replaceAll without find.
	ReplaceMissingFind Code = 51748
	// ReplaceMissingInput: a $replaceOne/$replaceAll without input.
	ReplaceMissingInput Code = 51749
	// ReplaceUnknownArgument: a $replaceOne/$replaceAll argument it does not take.
	ReplaceUnknownArgument Code = 51750
	// ReplaceSpecNotObject: a $replaceOne/$replaceAll argument that is not an object.
	ReplaceSpecNotObject Code = 51751
)

// Expressions: objects.
const (
	// ArrayToObjectInputNotArray: an $arrayToObject input that is not an array.
	ArrayToObjectInputNotArray Code = 40386
	// ObjectToArrayInputNotObject: an $objectToArray input that is not an object.
	ObjectToArrayInputNotObject Code = 40390
	// ArrayToObjectMixedFormats: $arrayToObject elements mixing pairs and k/v objects.
	ArrayToObjectMixedFormats Code = 40391
	// ArrayToObjectWrongFieldCount: an $arrayToObject k/v object without exactly two fields.
	ArrayToObjectWrongFieldCount Code = 40392
	// ArrayToObjectMissingKV: an $arrayToObject object missing k or v.
	ArrayToObjectMissingKV Code = 40393
	// ArrayToObjectKeyNotString: an $arrayToObject k that is not a string.
	ArrayToObjectKeyNotString Code = 40394
	// ArrayToObjectPairKeyNotString: an $arrayToObject pair whose key is not a string.
	ArrayToObjectPairKeyNotString Code = 40395
	// ArrayToObjectMixedFormatsPair: $arrayToObject pairs mixed with k/v objects.
	ArrayToObjectMixedFormatsPair Code = 40396
	// ArrayToObjectPairWrongSize: an $arrayToObject pair that is not of size 2.
	ArrayToObjectPairWrongSize Code = 40397
	// ArrayToObjectElementInvalid: an $arrayToObject element that is neither an array nor an object.
	ArrayToObjectElementInvalid Code = 40398
	// ArrayToObjectPairKeyNullByte: an $arrayToObject pair whose key holds a NUL byte.
	ArrayToObjectPairKeyNullByte Code = 4940400
	// ArrayToObjectKeyNullByte: an $arrayToObject k holding a NUL byte.
	ArrayToObjectKeyNullByte Code = 4940401
	// SetFieldNullByte: a $setField or $unsetField field holding a NUL byte
	// (MongoDB 8's code: 7.0 wrote the field into an invalid document).
	SetFieldNullByte Code = 9534700
	// GetFieldSpecNotObject: a $getField argument that is not an object (or constant string).
	GetFieldSpecNotObject Code = 3041700
	// GetFieldUnknownArgument: a $getField argument other than field and input.
	GetFieldUnknownArgument Code = 3041701
	// GetFieldMissingField: a $getField without field.
	GetFieldMissingField Code = 3041702
	// GetFieldMissingInput: a $getField without input.
	GetFieldMissingInput Code = 3041703
	// GetFieldFieldPath: a $getField field written as a field path or variable ("$a").
	GetFieldFieldPath Code = 5654600
	// GetFieldFieldNotConstant: a $getField field written as an expression.
	GetFieldFieldNotConstant Code = 5654601
	// GetFieldFieldNotString: a $getField field that is a constant other than a string.
	GetFieldFieldNotString Code = 5654602
	// SetFieldSpecNotObject: a $setField/$unsetField argument that is not an object.
	SetFieldSpecNotObject Code = 4161100
	// SetFieldUnknownArgument: a $setField/$unsetField argument it does not take.
	SetFieldUnknownArgument Code = 4161101
	// SetFieldMissingField: a $setField/$unsetField without field.
	SetFieldMissingField Code = 4161102
	// SetFieldMissingValue: a $setField without value.
	SetFieldMissingValue Code = 4161103
	// SetFieldInputNotObject: a $setField/$unsetField input that is not an object.
	SetFieldInputNotObject Code = 4161105
	// SetFieldFieldNotConstant: a $setField/$unsetField field written as an expression.
	SetFieldFieldNotConstant Code = 4161106
	// SetFieldFieldNotString: a $setField/$unsetField field that is a constant other than a string.
	SetFieldFieldNotString Code = 4161107
	// SetFieldFieldPath: a $setField/$unsetField field written as a field path or variable ("$a").
	SetFieldFieldPath Code = 4161108
	// SetFieldMissingInput: a $setField/$unsetField without input.
	SetFieldMissingInput Code = 4161109
)

// Expressions: dates.
const (
	// DateConversionInvalidType: a value that cannot be converted to a date.
	DateConversionInvalidType Code = 16006
	// DateToStringFormatNotString: a $dateToString format that is not a string.
	DateToStringFormatNotString Code = 18533
	// DateToStringUnknownArgument: a $dateToString argument it does not take.
	DateToStringUnknownArgument Code = 18534
	// DateFormatTrailingPercent: a date format string ending in '%'.
	DateFormatTrailingPercent Code = 18535
	// DateFormatInvalidSpecifier: a date format string with an unknown % specifier.
	DateFormatInvalidSpecifier Code = 18536
	// DateToStringYearOutOfRange: a $dateToString of a date whose year is outside 0-9999.
	DateToStringYearOutOfRange Code = 18537
	// DateToStringMissingDate: a $dateToString without date.
	DateToStringMissingDate Code = 18628
	// DateToStringSpecNotObject: a $dateToString argument that is not an object.
	DateToStringSpecNotObject Code = 18629
	// DateFromPartsOutOfRange: a $dateFromParts part outside [-32768, 32767].
	DateFromPartsOutOfRange Code = 31034
	// DateFromPartsISOWeekYearOutOfRange: a $dateFromParts isoWeekYear outside 1-9999.
	DateFromPartsISOWeekYearOutOfRange Code = 31095
	// TimezoneUnknown: a timezone that is not an Olson identifier or UTC offset.
	TimezoneUnknown Code = 40485
	// DateFromPartsMixedISO: a $dateFromParts with year and an ISO date part.
	DateFromPartsMixedISO Code = 40489
	// DateFromPartsPartNotInteger: a $dateFromParts part that is not an integer.
	DateFromPartsPartNotInteger Code = 40515
	// DateFromPartsMissingYear: a $dateFromParts without year or isoWeekYear.
	DateFromPartsMissingYear Code = 40516
	// TimezoneNotString: a timezone that does not evaluate to a string.
	TimezoneNotString Code = 40517
	// DateFromPartsUnknownArgument: a $dateFromParts argument it does not take.
	DateFromPartsUnknownArgument Code = 40518
	// DateFromPartsSpecNotObject: a $dateFromParts argument that is not an object.
	DateFromPartsSpecNotObject Code = 40519
	// DateToPartsUnknownArgument: a $dateToParts argument it does not take.
	DateToPartsUnknownArgument Code = 40520
	// DateToPartsISO8601NotBool: a $dateToParts iso8601 that is not a boolean.
	DateToPartsISO8601NotBool Code = 40521
	// DateToPartsMissingDate: a $dateToParts without date.
	DateToPartsMissingDate Code = 40522
	// DateFromPartsYearOutOfRange: a $dateFromParts year outside 1-9999.
	DateFromPartsYearOutOfRange Code = 40523
	// DateToPartsSpecNotObject: a $dateToParts argument that is not an object.
	DateToPartsSpecNotObject Code = 40524
	// DateFromPartsMixedNatural: a $dateFromParts with isoWeekYear and a natural date part (month or day).
	DateFromPartsMixedNatural Code = 40525
	// DatePartTimezoneNotString: a date part operator ($year...) timezone that does not evaluate to a string.
	DatePartTimezoneNotString Code = 40533
	// DatePartUnknownArgument: a date part operator ($year...) object with an argument other than date and timezone.
	DatePartUnknownArgument Code = 40535
	// DatePartArrayArity: a date part operator given an array of other than one element.
	DatePartArrayArity Code = 40536
	// DatePartMissingDate: a date part operator object without date.
	DatePartMissingDate Code = 40539
	// DateFromStringSpecNotObject: a $dateFromString argument that is not an object.
	DateFromStringSpecNotObject Code = 40540
	// DateFromStringUnknownArgument: a $dateFromString argument it does not take.
	DateFromStringUnknownArgument Code = 40541
	// DateFromStringMissingDateString: a $dateFromString without dateString.
	DateFromStringMissingDateString Code = 40542
	// DateFromStringFormatNotString: a $dateFromString format that is not a string.
	DateFromStringFormatNotString Code = 40684
	// DateDiffSpecNotObject: a $dateDiff argument that is not an object.
	DateDiffSpecNotObject Code = 5166301
	// DateDiffUnknownArgument: a $dateDiff argument it does not take.
	DateDiffUnknownArgument Code = 5166302
	// DateDiffMissingStartDate: a $dateDiff without startDate.
	DateDiffMissingStartDate Code = 5166303
	// DateDiffMissingEndDate: a $dateDiff without endDate.
	DateDiffMissingEndDate Code = 5166304
	// DateDiffMissingUnit: a $dateDiff without unit.
	DateDiffMissingUnit Code = 5166305
	// DateDiffDateInvalidType: a $dateDiff startDate or endDate that is not a date.
	DateDiffDateInvalidType Code = 5166307
	// DateDiffOverflow: a $dateDiff in milliseconds whose difference does
	// not fit in a long.
	DateDiffOverflow Code = 5166308
	// DateAddSpecNotObject: a $dateAdd/$dateSubtract argument that is not an object.
	DateAddSpecNotObject Code = 5166400
	// DateAddUnknownArgument: a $dateAdd/$dateSubtract argument it does not take.
	DateAddUnknownArgument Code = 5166401
	// DateAddMissingRequired: a $dateAdd/$dateSubtract without startDate, unit or amount.
	DateAddMissingRequired Code = 5166402
	// DateAddStartDateInvalidType: a $dateAdd/$dateSubtract startDate that is not a date.
	DateAddStartDateInvalidType Code = 5166403
	// DateAddUnitNotString: a $dateAdd/$dateSubtract unit that is not a string.
	DateAddUnitNotString Code = 5166404
	// DateAddAmountNotInteger: a $dateAdd/$dateSubtract amount that is not an integer.
	DateAddAmountNotInteger Code = 5166405
	// DateAddOverflow: a $dateAdd/$dateSubtract result that overflows.
	DateAddOverflow Code = 5166406
	// DateAddAmountInvalid: a $dateAdd/$dateSubtract amount of a unit
	// larger than millisecond that spans more than the range of a date.
	DateAddAmountInvalid Code = 5976500
	// DateSubtractAmountInvalid: a $dateSubtract amount that cannot be
	// negated (the smallest long).
	DateSubtractAmountInvalid Code = 6045000
	// DateTruncShiftOverflow: a $dateTrunc in units up to an hour whose
	// date minus the reference point overflows a long.
	DateTruncShiftOverflow Code = 5439000
	// DateTruncResultOverflow: a $dateTrunc in units up to an hour whose
	// bin's lower bound overflows a long.
	DateTruncResultOverflow Code = 5439001
	// DateTruncBinOverflow: a $dateTrunc binSize that in milliseconds
	// overflows a long.
	DateTruncBinOverflow Code = 5439002
	// DateTruncBinSizeUnsupported: a $dateTrunc binSize of days or larger
	// units over 100,000,000,000.
	DateTruncBinSizeUnsupported Code = 5439006
	// DateTruncSpecNotObject: a $dateTrunc argument that is not an object.
	DateTruncSpecNotObject Code = 5439007
	// DateTruncUnknownArgument: a $dateTrunc argument it does not take.
	DateTruncUnknownArgument Code = 5439008
	// DateTruncMissingDate: a $dateTrunc without date.
	DateTruncMissingDate Code = 5439009
	// DateTruncMissingUnit: a $dateTrunc without unit.
	DateTruncMissingUnit Code = 5439010
	// DateTruncDateInvalidType: a $dateTrunc date that is not a date.
	DateTruncDateInvalidType Code = 5439012
	// TimeUnitNotString: a time unit that is not a string.
	TimeUnitNotString Code = 5439013
	// TimeUnitInvalid: a time unit that is not a valid unit.
	TimeUnitInvalid Code = 5439014
	// StartOfWeekNotString: a startOfWeek that is not a string.
	StartOfWeekNotString Code = 5439015
	// StartOfWeekInvalid: a startOfWeek that is not a day of the week.
	StartOfWeekInvalid Code = 5439016
	// DateTruncBinSizeNotInt64: a $dateTrunc binSize not representable as a 64-bit integer.
	DateTruncBinSizeNotInt64 Code = 5439017
	// DateTruncBinSizeNotPositive: a $dateTrunc binSize that is not positive.
	DateTruncBinSizeNotPositive Code = 5439018
)

// Find: sort, regex and projection.
const (
	// DistinctTooBig: distinct's values would pass the 16 MB cap of its reply.
	DistinctTooBig Code = 17217
	// DistinctReplyTooBig: distinct's reply, values built, would pass its
	// 16 MB cap.
	DistinctReplyTooBig Code = 31299
	// SortKeyIllegal: a sort key whose order is neither a number nor a
	// $meta document.
	SortKeyIllegal Code = 15974
	// SortKeyOrderInvalid: a sort key order other than 1 or -1.
	SortKeyOrderInvalid Code = 15975
	// TooManyCompoundKeys: an index key pattern or a sort of more than 32
	// fields (Ordering::make).
	TooManyCompoundKeys Code = 13103
	// SortMetaOnly: a sort key object other than {$meta: ...} (Folio also raises it for $natural in $sort).
	SortMetaOnly Code = 17312
	// SortMetaIllegal: a sort by {$meta: x} for x other than textScore,
	// randVal, geoNearDistance, searchScore and searchHighlights
	// (SortPattern).
	SortMetaIllegal Code = 31138
	// SortMetaSearchScore: a sort by {$meta: "searchScore"} (SortPattern).
	SortMetaSearchScore Code = 31218
	// SortMetaSearchHighlights: a sort by {$meta: "searchHighlights"}
	// (SortPattern).
	SortMetaSearchHighlights Code = 31219
	// RegexOptionsInBothQuery: a $regex with options both inline and in $options.
	RegexOptionsInBothQuery Code = 51074
	// RegexOptionsInBothQueryRegexFirst: a $options given before a $regex that carries options.
	RegexOptionsInBothQueryRegexFirst Code = 51075
	// RegexPatternInvalid: a query regex that does not compile.
	RegexPatternInvalid Code = 51091
	// RegexFlagInvalid: a query regex option flag MongoDB does not know.
	RegexFlagInvalid Code = 51108
	// RegexEmbeddedNull: a regex of $regexMatch, $regexFind or $regexFindAll
	// containing a null byte (a query $regex with one is BadValue).
	RegexEmbeddedNull Code = 51109
	// ProjectionExpressionInExclusionMeta: an expression other than $meta in an exclusion projection.
	ProjectionExpressionInExclusionMeta Code = 31252
	// ProjectionPositionalAndElemMatch: a positional projection and $elemMatch on one path.
	ProjectionPositionalAndElemMatch Code = 31255
	// ProjectionElemMatchAndPositional: an $elemMatch projection and a positional projection together.
	ProjectionElemMatchAndPositional Code = 31256
	// ProjectionSliceSkipNotNumber: a $slice projection skip that is not a number.
	ProjectionSliceSkipNotNumber Code = 31257
	// ProjectionSliceLimitNotNumber: a $slice projection limit that is not a number.
	ProjectionSliceLimitNotNumber Code = 31258
	// ProjectionSliceLimitNotPositive: a $slice projection limit that is not positive.
	ProjectionSliceLimitNotPositive Code = 31259
	// ProjectionPositionalWithObject: a positional projection with an expression or sub-object value.
	ProjectionPositionalWithObject Code = 31271
	// ProjectionSliceArrayInvalid: a $slice projection array that is not [skip, limit].
	ProjectionSliceArrayInvalid Code = 31272
	// ProjectionSliceInvalidType: a $slice projection that is neither a number nor an array.
	ProjectionSliceInvalidType Code = 31273
	// ProjectionElemMatchNotObject: an $elemMatch projection argument that is not an object.
	ProjectionElemMatchNotObject Code = 31274
	// ProjectionElemMatchNested: an $elemMatch projection on a dotted path.
	ProjectionElemMatchNested Code = 31275
	// ProjectionMultiplePositional: more than one positional projection.
	ProjectionMultiplePositional Code = 31276
	// ProjectionPositionalWithLiteral: a positional projection with a literal value.
	ProjectionPositionalWithLiteral Code = 31308
	// ProjectionPositionalInAggregation: a positional projection (`a.$`) in an aggregation stage.
	ProjectionPositionalInAggregation Code = 31324
	// ProjectionUnknownExpression: a projection sub-object {$op: ...} naming no expression.
	ProjectionUnknownExpression Code = 31325
	// ProjectionPositionalInMiddle: a positional operator before the end of a projected path (`a.$.b`).
	ProjectionPositionalInMiddle Code = 31394
	// ProjectionPositionalWithExclusion: a positional projection excluding its path.
	ProjectionPositionalWithExclusion Code = 31395
	// ProjectionPositionalNoPath: the positional projection ".$", with no path before it.
	ProjectionPositionalNoPath Code = 5392900
	// ProjectionPositionalNoMatch: a positional projection with no matching array element.
	ProjectionPositionalNoMatch Code = 51246
	// ProjectionPositionalMismatch: a positional projection whose matched element is not in the array.
	ProjectionPositionalMismatch Code = 51247
)

// Cursors in sessions and transactions.
const (
	// GetMoreSessionMismatchNoSession: a getMore in a session of a cursor opened outside one.
	GetMoreSessionMismatchNoSession Code = 50736
	// GetMoreSessionMismatchNoLsid: a getMore without lsid of a cursor opened in a session.
	GetMoreSessionMismatchNoLsid Code = 50737
	// GetMoreSessionMismatch: a getMore in a session other than the cursor's.
	GetMoreSessionMismatch Code = 50738
	// GetMoreTxnMismatchNoTxn: a getMore in a transaction of a cursor opened outside one.
	GetMoreTxnMismatchNoTxn Code = 50739
	// GetMoreTxnMismatchNoTxnNumber: a getMore without txnNumber of a cursor opened in a transaction.
	GetMoreTxnMismatchNoTxnNumber Code = 50740
	// GetMoreTxnMismatch: a getMore in a transaction other than the cursor's.
	GetMoreTxnMismatch Code = 50741
)

// Access control.
const (
	// ReauthenticationRefused: a connection authenticated as one user
	// authenticating as another of the same database.
	ReauthenticationRefused Code = 5626701
	// AuthenticationOnOtherDatabaseRefused: a connection authenticated
	// as one user authenticating as a user of another database.
	AuthenticationOnOtherDatabaseRefused Code = 5626702
	// UserAlreadyExists: createUser of a user that exists.
	UserAlreadyExists Code = 51003
	// RoleAlreadyExists: createRole of a role that exists.
	RoleAlreadyExists Code = 51002
	// SASLprepUTF8Conversion: a SCRAM-SHA-256 password ICU cannot convert
	// from UTF-8 (the empty one: U_STRING_NOT_TERMINATED_WARNING).
	SASLprepUTF8Conversion Code = 50687
	// SASLprepNormalization: a SCRAM-SHA-256 password SASLprep refuses
	// (unassigned or prohibited characters, bidirectional rules), or maps
	// to nothing.
	SASLprepNormalization Code = 50692
)

// Sharding.
const (
	// ShardKeyIndexRequired: shardCollection with implicitlyCreateIndex
	// false and no index serving the shard key.
	ShardKeyIndexRequired Code = 6373200
)

// Server-side JavaScript.
const (
	// WhereNoScriptEngine: $where with JavaScript disabled.
	WhereNoScriptEngine Code = 6108304
	// StoredScriptName: a system.js entry whose _id is not a string.
	StoredScriptName Code = 10209
	// StoredScriptNoValue: a system.js entry without a value.
	StoredScriptNoValue Code = 10210
	// StoredScriptCodeWithScope: a system.js entry whose value is code with scope.
	StoredScriptCodeWithScope Code = 4546000
	// FunctionNoScriptEngine: $function or $accumulator run with JavaScript disabled.
	FunctionNoScriptEngine Code = 31264
	// FunctionNotObject: $function's argument is not an object.
	FunctionNotObject Code = 31260
	// FunctionNoBody: $function without body.
	FunctionNoBody Code = 31261
	// FunctionBodyType: $function's body is neither a string nor code.
	FunctionBodyType Code = 31262
	// FunctionNoArgs: $function without args.
	FunctionNoArgs Code = 31263
	// FunctionArgsNotArray: $function's args do not evaluate to an array.
	FunctionArgsNotArray Code = 31266
	// FunctionBodyNotConstant: $function's body is not a constant.
	FunctionBodyNotConstant Code = 31432
	// FunctionNoLang: $function without lang.
	FunctionNoLang Code = 31418
	// FunctionLangNotJS: $function's lang is not "js".
	FunctionLangNotJS Code = 31419
	// FunctionInValidator: $function in a collection validator.
	FunctionInValidator Code = 4660800
	// AccumulatorFunctionNotConstant: an $accumulator function that is not a constant.
	AccumulatorFunctionNotConstant Code = 4544701
	// AccumulatorFunctionType: an $accumulator function that is neither a string nor code.
	AccumulatorFunctionType Code = 4544702
	// AccumulatorNotObject: $accumulator's argument is not an object.
	AccumulatorNotObject Code = 4544703
	// AccumulatorLangNotString: $accumulator's lang is not a string.
	AccumulatorLangNotString Code = 4544704
	// AccumulatorLangNotJS: $accumulator's lang is not "js".
	AccumulatorLangNotJS Code = 4544705
	// AccumulatorUnknownField: an $accumulator field it does not take.
	AccumulatorUnknownField Code = 4544706
	// AccumulatorNoInit, AccumulatorNoAccumulate, AccumulatorNoMerge,
	// AccumulatorNoAccumulateArgs: a required $accumulator field missing.
	AccumulatorNoInit           Code = 4544707
	AccumulatorNoAccumulate     Code = 4544708
	AccumulatorNoMerge          Code = 4544709
	AccumulatorNoAccumulateArgs Code = 4544710
	// AccumulatorInitArgsNotArray: initArgs does not evaluate to an array.
	AccumulatorInitArgsNotArray Code = 4544711
	// AccumulatorArgsNotArray: accumulateArgs does not evaluate to an array.
	AccumulatorArgsNotArray Code = 4544712
	// AccumulatorArgsTooLarge: an $accumulator's state and the arguments of
	// one accumulate call exceed the largest user document.
	AccumulatorArgsTooLarge Code = 4545000
	// MapReduceEmitNoScriptEngine: a mapReduce map run with JavaScript disabled.
	MapReduceEmitNoScriptEngine Code = 31246
	// MapReduceReduceNoScriptEngine: a mapReduce reduce run with JavaScript disabled.
	MapReduceReduceNoScriptEngine Code = 31241
	// MapReduceEmitArgs: a mapReduce map function called emit with other than two arguments.
	MapReduceEmitArgs Code = 31220
	// JsEmitInValidator: $_internalJsEmit in a collection validator.
	JsEmitInValidator Code = 4660801
	// JsEmitNotObject: $_internalJsEmit's argument is not an object.
	JsEmitNotObject Code = 31221
	// JsEmitNoEval: $_internalJsEmit without its eval (map) function.
	JsEmitNoEval Code = 31222
	// JsEmitNoThis: $_internalJsEmit without this.
	JsEmitNoThis Code = 31223
	// JsEmitEvalType: $_internalJsEmit's eval is neither a string nor code.
	JsEmitEvalType Code = 31224
	// JsEmitThisNotObject: $_internalJsEmit's this does not evaluate to a document.
	JsEmitThisNotObject Code = 31225
	// JsEmitTooLarge: the values one $_internalJsEmit call emitted passed internalQueryMaxJsEmitBytes.
	JsEmitTooLarge Code = 31292
	// JSPropertyNullChar: a JavaScript object returned to BSON with a property name holding a NUL.
	JSPropertyNullChar Code = 16985
	// JSObjectTooDeep: a JavaScript object returned to BSON nested past the depth limit (a cycle).
	JSObjectTooDeep Code = 17279
)

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
	// GraphLookupArgNotString: from, as, connectFromField, connectToField or depthField
	// neither a string nor an object.
	GraphLookupArgNotString Code = 40103
	// BSONElementWrongType: a BSON element read as a type it does not hold
	// (BSONElement::chk), as $graphLookup reads an object as,
	// connectFromField, connectToField or depthField as a string.
	BSONElementWrongType Code = 13111
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
	// JsReduceNotObject: a $_internalJsReduce argument that is not a document.
	JsReduceNotObject Code = 31326
	// JsReduceUnknownField: a $_internalJsReduce argument other than eval and data.
	JsReduceUnknownField Code = 31243
	// JsReduceEvalType: a $_internalJsReduce eval that is not a string or code.
	JsReduceEvalType Code = 31244
	// JsReduceNoEval: a $_internalJsReduce without eval.
	JsReduceNoEval Code = 31245
	// JsReduceNoData: a $_internalJsReduce without data.
	JsReduceNoData Code = 31349
	// JsReduceDataNotObject: a $_internalJsReduce data that evaluates to
	// something other than a document.
	JsReduceDataNotObject Code = 31242
	// JsReduceDataNotKV: a $_internalJsReduce data document other than {k, v}.
	JsReduceDataNotKV Code = 31251
	// ReduceValueTooLarge: a reduce whose batch of values could hold only
	// one value under the 16 MiB limit.
	ReduceValueTooLarge Code = 31392
	// WindowMemoryLimitExceeded: a $setWindowFields holding more than
	// internalDocumentSourceSetWindowFieldsMaxMemoryBytes, spilling or not.
	WindowMemoryLimitExceeded Code = 5414201
	// WindowOutputConflictingPaths: two $setWindowFields output paths of
	// which one is, or is inside, the other.
	WindowOutputConflictingPaths Code = 6307900
	// WindowBoundsBackwards: a window whose lower bound exceeds its upper
	// bound ('current' counting as 0).
	WindowBoundsBackwards Code = 5339900
	// WindowDocumentsNeedSortBy: a bounded documents window without sortBy.
	WindowDocumentsNeedSortBy Code = 5339901
	// WindowRangeNeedsOneSortField: a range window without a sortBy of exactly one field.
	WindowRangeNeedsOneSortField Code = 5339902
	// WindowRankTakesNoWindow: $rank, $denseRank or $documentNumber given a
	// window or any other field beside it.
	WindowRankTakesNoWindow Code = 5371601
	// WindowRankArgNotEmpty: a $rank, $denseRank or $documentNumber argument other than {}.
	WindowRankArgNotEmpty Code = 5371603
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
	// DerivativeSortByNotNumber: $derivative without unit over a sortBy
	// that is not a number.
	DerivativeSortByNotNumber Code = 5624902
	// DerivativeInputNullish: a $derivative whose input is null or missing
	// at an end of its window.
	DerivativeInputNullish Code = 5624903
	// IntegralInputInvalid: an $integral point whose input is not a
	// number, or whose sortBy is neither a number nor a date.
	IntegralInputInvalid Code = 5423900
	// DerivativeDateNeedsUnit: $derivative without unit over a date sortBy.
	DerivativeDateNeedsUnit Code = 5624901
	// WindowUnitTooLarge: a $derivative or $integral unit of month, quarter or year.
	WindowUnitTooLarge Code = 5490710
	// LinearFillNeedsSingleSort: $linearFill (or $fill's method linear)
	// without a sortBy of exactly one field.
	LinearFillNeedsSingleSort Code = 605001
	// LinearFillRepeatedSortValue: two documents of a $linearFill
	// partition with the same sortBy value.
	LinearFillRepeatedSortValue Code = 6050106
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
	// DensifyMemoryExceeded: a $densify partition table past internalDocumentSourceDensifyMaxMemoryBytes.
	DensifyMemoryExceeded Code = 6007200
	// DensifyDateStepNotWhole: a date step that is not a whole number.
	DensifyDateStepNotWhole Code = 6586400
	// DensifyUnitMismatch: a densified number with a unit, or date without one.
	DensifyUnitMismatch Code = 6053600
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

// Hashed, wildcard and text indexes.
const (
	// AmbiguousArrayField: a document whose index path reaches an array by
	// a numeric component (a.0) that both indexes an element and names a
	// field of one of its embedded documents.
	AmbiguousArrayField Code = 16746
	// HashedArrayValue: a document holding an array on a hashed index's path.
	HashedArrayValue Code = 16766
	// HashedUnique: a unique hashed index.
	HashedUnique Code = 16764
	// HashedFieldsMax: a key pattern with more than one hashed field.
	HashedFieldsMax Code = 31303
	// TextLanguageNotString: a document whose language override field is not a string.
	TextLanguageNotString Code = 17261
	// TextLanguageUnsupported: a document whose language override names no supported language.
	TextLanguageUnsupported Code = 17262
	// TextScoreUnavailable: {$meta} of metadata a query or pipeline cannot give
	// ("textScore" without $text, "geoNearDistance" or "geoNearPoint" without
	// $near or a leading $geoNear): MongoDB's Location40218.
	TextScoreUnavailable Code = 40218
	// GeoExtractKeys: a document whose 2dsphere field holds a malformed geometry.
	GeoExtractKeys Code = 16755
	// FlatTwoGeoFields: a key pattern naming more than one 2d field.
	FlatTwoGeoFields Code = 16800
	// FlatNotFirst: a key pattern whose 2d field comes after another field.
	FlatNotFirst Code = 16801
	// FlatLocationMalformed: a 2d index's field holding something other than legacy pairs.
	FlatLocationMalformed Code = 16804
	// FlatPointOutOfBounds: a legacy pair outside a 2d index's [min, max].
	FlatPointOutOfBounds Code = 13027
	// GeoNearNoNear: a $geoNear without 'near'.
	GeoNearNoNear Code = 5860400
	// GeoNearNearNotPoint: a $geoNear whose 'near' is not a document or an array.
	GeoNearNearNotPoint Code = 5860401
	// GeoNearNearNotConstant: a $geoNear whose 'near' is an expression that is not constant (a field path).
	GeoNearNearNotConstant Code = 5860402
	// GeoNearCollation: a $geoNear with 'collation', which the aggregate command sets instead.
	GeoNearCollation Code = 40227
	// GeoNearLimit: a $geoNear with the 'limit' of older versions.
	GeoNearLimit Code = 50858
	// GeoNearNum: a $geoNear with the 'num' of older versions.
	GeoNearNum Code = 50857
	// GeoNearStart: a $geoNear with the 'start' of older versions.
	GeoNearStart Code = 50856
	// FlatNearOutOfBounds: a $near, $nearSphere or $geoNear on a 2d index whose center is outside the index's [min, max].
	FlatNearOutOfBounds Code = 16433
	// FlatLocationOneValue: a 2d index's location with a single value.
	FlatLocationOneValue Code = 13068
	// FlatLocationNotNumbers: a 2d index's location whose first two values are not both numbers.
	FlatLocationNotNumbers Code = 13026
	// GeoNearDistanceFieldNotString: a $geoNear without a string 'distanceField'.
	GeoNearDistanceFieldNotString Code = 16606
	// GeoNearIncludeLocsNotString: a $geoNear whose 'includeLocs' is not a string.
	GeoNearIncludeLocsNotString Code = 16607
	// GeoNearNotAllowedHere: $near or $nearSphere in a filter parsed without them (an aggregation's $match, an $elemMatch projection, an array filter, a validator).
	GeoNearNotAllowedHere Code = 5626500
	// BucketGeoExtractKeys: a measurement under a time series collection's 2dsphere index that is no geometry.
	BucketGeoExtractKeys Code = 183934
	// BucketGeoNotPoint: a measurement under a time series collection's 2dsphere index that is a geometry other than a point.
	BucketGeoNotPoint Code = 183493
	// TimeseriesGeoNearNoKey: a $geoNear on a time series collection without 'key'.
	TimeseriesGeoNearNoKey Code = 5892921
	// TimeseriesGeoNearQuery: a $geoNear on a time series collection with a 'query'.
	TimeseriesGeoNearQuery Code = 1938439
	// TimeseriesGeoNearIncludeLocs: a $geoNear on a time series collection's measurement with 'includeLocs'.
	TimeseriesGeoNearIncludeLocs Code = 5860208
	// TimeseriesGeoNearUnparsable: a $geoNear on a time series collection's measurement whose near and bounds make no $near query.
	TimeseriesGeoNearUnparsable Code = 6330900
	// GeoDistanceKeyNotString: $_internalComputeGeoNearDistance without a string 'key'.
	GeoDistanceKeyNotString Code = 5874500
	// GeoDistanceNearNotObject: $_internalComputeGeoNearDistance without an object or array 'near'.
	GeoDistanceNearNotObject Code = 5874501
	// GeoDistanceFieldNotString: $_internalComputeGeoNearDistance without a string 'distanceField'.
	GeoDistanceFieldNotString Code = 5874502
	// GeoDistanceMultiplierNotNumber: $_internalComputeGeoNearDistance without a numeric 'distanceMultiplier'.
	GeoDistanceMultiplierNotNumber Code = 5874503
	// GeoDistanceArgCount: $_internalComputeGeoNearDistance with other than its four arguments.
	GeoDistanceArgCount Code = 5874510
	// GeoNearMixedWithOperators: $near or $nearSphere beside an operator other than $minDistance and $maxDistance.
	GeoNearMixedWithOperators Code = 34413
	// NearMinDistanceNotNumber: a legacy $near or $nearSphere whose $minDistance is not a number.
	NearMinDistanceNotNumber Code = 16893
	// NearMinDistanceNegative: a legacy $near or $nearSphere whose $minDistance is negative or NaN.
	NearMinDistanceNegative Code = 16894
	// NearMaxDistanceNotNumber: a legacy $near or $nearSphere whose $maxDistance is not a number.
	NearMaxDistanceNotNumber Code = 16895
	// NearMaxDistanceNegative: a legacy $near or $nearSphere whose $maxDistance is negative or NaN.
	NearMaxDistanceNegative Code = 16896
	// NearMaxDistanceArgNegative: a legacy $near's [x, y, maxDistance] whose maxDistance is negative or NaN.
	NearMaxDistanceArgNegative Code = 18522
	// TextMatchNotFirst: a $match with $text after a pipeline's first stage, in a $facet, or in a $lookup sub-pipeline with localField (after its equality match).
	TextMatchNotFirst Code = 17313
	// RegexFindAllTooLarge: $regexFindAll's match documents past 64 MB.
	RegexFindAllTooLarge Code = 51151
	// RegexExecutionFailed: a $regex* operator's match that failed (past the match limit).
	RegexExecutionFailed Code = 51156
	// MetaArgumentNotString: {$meta: ...} whose argument is not a string.
	MetaArgumentNotString Code = 17307
	// MetaUnsupportedArgument: {$meta: ...} naming no metadata MongoDB knows.
	MetaUnsupportedArgument Code = 17308
)

// Change streams.
const (
	// ChangeStreamSpecNotObject: a $changeStream stage whose argument is not a document.
	ChangeStreamSpecNotObject Code = 50808
	// ChangeStreamMultipleResumeOptions: more than one of resumeAfter, startAfter and startAtOperationTime.
	ChangeStreamMultipleResumeOptions Code = 40674
	// ChangeStreamResumeAfterAndStartAfter: both resumeAfter and startAfter.
	ChangeStreamResumeAfterAndStartAfter Code = 50865
	// ResumeTokenBadData: a resume token whose _data is missing or not a string.
	ResumeTokenBadData Code = 40647
	// ChangeStreamNeedsReplicaSet: a change stream on a standalone server.
	ChangeStreamNeedsReplicaSet Code = 40573
)

// Test commands.
const (
	// FailCommandClosedConnection: the failCommand fail point closed the command's connection.
	FailCommandClosedConnection Code = 50985
)

// dropDatabase and drop.
const (
	// DropDatabaseNotOne: dropDatabase's parameter other than 1.
	DropDatabaseNotOne Code = 5255100
	// DropLiveOplog: drop of the oplog (local.oplog.*) on a replica set
	// member.
	DropLiveOplog Code = 5255000
)

// Oplog entries applied by applyOps.
const (
	// DiffEmpty: an update entry's $v: 2 diff, or a sub-diff, with no field.
	DiffEmpty Code = 4770500
	// DiffArraySubDiff: an array diff's s<index> that is not a document.
	DiffArraySubDiff Code = 4770501
	// DiffArrayModification: an array diff field other than u<index> and s<index>.
	DiffArrayModification Code = 4770502
	// DiffUnexpectedSection: a document diff section other than d, u, i and s<field>, or out of that order.
	DiffUnexpectedSection Code = 4770503
	// DiffSectionName: a document diff field with an empty name.
	DiffSectionName Code = 4770505
	// DiffSectionType: a diff's d, u or i section that is not a document, or an array diff's l that is not an int.
	DiffSectionType Code = 4770507
	// DiffArrayIndex: an array diff field whose index is not a number.
	DiffArrayIndex Code = 4770512
	// DiffArrayHeader: an array diff whose header a is not true.
	DiffArrayHeader Code = 4770520
	// DiffArrayFieldName: an array diff field of one character.
	DiffArrayFieldName Code = 4770521
	// DiffSubDiffNotObject: a document diff's s<field> that is not a document (MongoDB's code has a digit less).
	DiffSubDiffNotObject Code = 470510
	// ApplyOpsPreCondition: applyOps's preCondition, which MongoDB no longer supports.
	ApplyOpsPreCondition Code = 6711600
	// ApplyOpsAlwaysUpsert: applyOps's alwaysUpsert: true, which MongoDB no longer supports.
	ApplyOpsAlwaysUpsert Code = 6711601
	// ApplyOpsPartialTxn: applyOps's partialTxn field, which only an oplog entry carries.
	ApplyOpsPartialTxn Code = 31056
	// ApplyOpsCount: applyOps's count field, which only an oplog entry carries.
	ApplyOpsCount Code = 31240
	// ApplyOpsDropDatabaseAlone: a dropDatabase entry among others in one applyOps.
	ApplyOpsDropDatabaseAlone Code = 6275900
	// ApplyOpsUUIDMismatch: an entry whose ns and ui name different collections.
	ApplyOpsUUIDMismatch Code = 3318200
)

// Cluster-wide read and write concern defaults.
const (
	// RWDefaultsOnStandalone: getDefaultRWConcern or setDefaultRWConcern on a standalone.
	RWDefaultsOnStandalone Code = 51300
)

// Feature compatibility version.
const (
	// SetFCVNotConfirmed: setFeatureCompatibilityVersion without confirm: true.
	SetFCVNotConfirmed Code = 7369100
)

// Key ranges (find's min and max).
const (
	// MinMaxWithoutHint: min or max without a hint naming the index.
	MinMaxWithoutHint Code = 51173
	// MinMaxIndexIncompatible: min or max whose fields are not the hinted
	// index's key pattern, or hold strings under another collation.
	MinMaxIndexIncompatible Code = 51174
	// MinNotBeforeMax: min does not come before max in the index's order.
	MinNotBeforeMax Code = 51175
	// MinMaxFieldsDiffer: min and max name different fields.
	MinMaxFieldsDiffer Code = 51176
)

// dataSize's key range (KeyPattern::extendRangeBound).
const (
	// BoundFieldNotInKeyPattern: a bound with more fields than the index's
	// key pattern.
	BoundFieldNotInKeyPattern Code = 16649
	// BoundFieldNameMismatch: a bound field that is not the key pattern's
	// field at its position.
	BoundFieldNameMismatch Code = 16634
)

// collectionUUID (checkCollectionUUIDMismatch's callers).
const (
	// CollectionUUIDOnChangeStream: a change stream given a collectionUUID.
	CollectionUUIDOnChangeStream Code = 4928900
	// CollectionUUIDWithoutCollection: a collectionless aggregate given a
	// collectionUUID.
	CollectionUUIDWithoutCollection Code = 4928901
)

// Transactions.
const (
	// SystemCollectionWriteInTransaction: a write to a system collection
	// in a transaction (doTransactionValidationForWrites).
	SystemCollectionWriteInTransaction Code = 50791
	// SystemViewsReadInTransaction: a read of system.views in a
	// transaction (getLockModeForQuery).
	SystemViewsReadInTransaction Code = 51071
)

// Retryable writes (write_ops_retryability.cpp): a statement retried by a
// command whose kind does not fit the write its first execution logged.
const (
	// RetryFindAndModifyOfDelete: a findAndModify retry without remove of
	// a statement that deleted a document.
	RetryFindAndModifyOfDelete Code = 40606
	// RetryFindAndModifyNoPreImage: a findAndModify remove's retry of a
	// delete that kept no image of the document.
	RetryFindAndModifyNoPreImage Code = 40607
	// RetryFindAndModifyOfInsert: a findAndModify retry without upsert of
	// a statement that inserted a document.
	RetryFindAndModifyOfInsert Code = 40608
	// RetryFindAndModifyNoPostImage: a findAndModify retry with new of an
	// update that kept no image of the document.
	RetryFindAndModifyNoPostImage Code = 40611
	// RetryFindAndModifyNoPreImageOfUpdate: a findAndModify retry without
	// new of an update that kept no image of the document.
	RetryFindAndModifyNoPreImageOfUpdate Code = 40612
	// RetryUpdateOfDelete: an update retry of a statement that deleted a
	// document.
	RetryUpdateOfDelete Code = 40638
)

// Time series collections.
const (
	// IndexedMeasurementArray: a bucket holding an array along a
	// measurement field that an index of the buckets' bounds keys.
	IndexedMeasurementArray Code = 5930501
)

// Time series partial indexes.
const (
	// TimeseriesPredicateNotTranslatable: a partialFilterExpression
	// condition on a time series collection's time or measurement field
	// that no condition on its buckets' control fields can stand for
	// (BucketSpec::handleIneligible under IneligiblePredicatePolicy::kError).
	TimeseriesPredicateNotTranslatable Code = 5916301
)

// The unpacking stages of time series buckets, $_internalUnpackBucket and
// its alias for other products, $_unpackBucket.
const (
	// UnpackSpecNotObject: a $_internalUnpackBucket argument that is no object.
	UnpackSpecNotObject Code = 5346500
	// UnpackFieldsNotArray: an include or exclude that is no array.
	UnpackFieldsNotArray Code = 5346501
	// UnpackFieldNotString: an element of include or exclude that is no string.
	UnpackFieldNotString Code = 5346502
	// UnpackFieldDotted: an element of include or exclude that is a dotted path.
	UnpackFieldDotted Code = 5346503
	// UnpackTimeFieldNotString: a $_internalUnpackBucket timeField that is no string.
	UnpackTimeFieldNotString Code = 5346504
	// UnpackMetaFieldNotString: a $_internalUnpackBucket metaField that is no string.
	UnpackMetaFieldNotString Code = 5346505
	// UnpackUnknownParameter: a $_internalUnpackBucket parameter it does not take.
	UnpackUnknownParameter Code = 5346506
	// UnpackNoTimeField: a $_internalUnpackBucket without timeField.
	UnpackNoTimeField Code = 5346508
	// UnpackIncludeAndExclude: a $_internalUnpackBucket with both include and exclude (or either twice).
	UnpackIncludeAndExclude Code = 5408000
	// UnpackMetaFieldDotted: a $_internalUnpackBucket metaField that is a dotted path.
	UnpackMetaFieldDotted Code = 5545700
	// UnpackSpanNotInt: a bucketMaxSpanSeconds that is no 32-bit integer.
	UnpackSpanNotInt Code = 5510600
	// UnpackSpanNotPositive: a bucketMaxSpanSeconds not above zero.
	UnpackSpanNotPositive Code = 5510601
	// UnpackNoSpan: a $_internalUnpackBucket without bucketMaxSpanSeconds.
	UnpackNoSpan Code = 5510602
	// UnpackComputedNotArray: a computedMetaProjFields that is no array.
	UnpackComputedNotArray Code = 5509900
	// UnpackComputedNotString: an element of computedMetaProjFields that is no string.
	UnpackComputedNotString Code = 5509901
	// UnpackComputedDotted: an element of computedMetaProjFields that is a dotted path.
	UnpackComputedDotted Code = 5509902
	// UnpackAssumeCleanNotBool: a $_internalUnpackBucket assumeNoMixedSchemaData that is no boolean.
	UnpackAssumeCleanNotBool Code = 6067202
	// UnpackMinTimeNotBool: an includeMinTimeAsMetadata that is no boolean.
	UnpackMinTimeNotBool Code = 6460208
	// UnpackMaxTimeNotBool: an includeMaxTimeAsMetadata that is no boolean.
	UnpackMaxTimeNotBool Code = 6460209
	// UnpackExtendedRangeNotBool: a usesExtendedRange that is no boolean.
	UnpackExtendedRangeNotBool Code = 6646901
	// UnpackEventFilterNotObject: an eventFilter that is no object.
	UnpackEventFilterNotObject Code = 7026902
	// UnpackWholeBucketFilterNotObject: a wholeBucketFilter that is no object.
	UnpackWholeBucketFilterNotObject Code = 7026903
	// UnpackFixedBucketsNotBool: a fixedBuckets that is no boolean.
	UnpackFixedBucketsNotBool Code = 7823300
	// UnpackBucketSpecNotObject: a $_unpackBucket argument that is no object.
	UnpackBucketSpecNotObject Code = 5612400
	// UnpackBucketTimeFieldNotString: a $_unpackBucket timeField that is no string.
	UnpackBucketTimeFieldNotString Code = 5612401
	// UnpackBucketMetaFieldNotString: a $_unpackBucket metaField that is no string.
	UnpackBucketMetaFieldNotString Code = 5612402
	// UnpackBucketMetaFieldDotted: a $_unpackBucket metaField that is a dotted path.
	UnpackBucketMetaFieldDotted Code = 5612403
	// UnpackBucketUnknownParameter: a $_unpackBucket parameter it does not take.
	UnpackBucketUnknownParameter Code = 5612404
	// UnpackBucketNoTimeField: a $_unpackBucket without timeField.
	UnpackBucketNoTimeField Code = 5612405
	// UnpackBucketAssumeCleanNotBool: a $_unpackBucket assumeNoMixedSchemaData that is no boolean.
	UnpackBucketAssumeCleanNotBool Code = 6067203
	// UnpackMetaUndefined: a bucket unpacked with a metaField whose meta is undefined.
	UnpackMetaUndefined Code = 5369600
	// UnpackUnexpectedMeta: a bucket with a meta unpacked without a metaField.
	UnpackUnexpectedMeta Code = 5369601
	// UnpackEmptyBucket: an empty document unpacked as a bucket.
	UnpackEmptyBucket Code = 5346510
	// UnpackNoMeasurements: a bucket whose data region holds no measurement.
	UnpackNoMeasurements Code = 5346509
	// UnpackNoTimeColumn: a bucket whose data region has no column of the time field.
	UnpackNoTimeColumn Code = 5346700
	// UnpackNoControl: a bucket without a control object.
	UnpackNoControl Code = 5857902
	// UnpackNoVersion: a bucket without a numeric control.version.
	UnpackNoVersion Code = 5857903
	// UnpackBadVersion: a bucket whose control.version is neither 1 nor 2.
	UnpackBadVersion Code = 5857900
)
