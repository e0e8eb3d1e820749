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
)

// Wire protocol.
const (
	// OpMsgMissingDB: an OP_MSG body without a $db field.
	OpMsgMissingDB Code = 40571
	// OpQueryFindUnsupported: an OP_QUERY that is a query rather than a command.
	OpQueryFindUnsupported Code = 5739101
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
)

// Update.
const (
	// UpdateResultTooLarge: an update whose resulting document exceeds the BSON size limit.
	UpdateResultTooLarge Code = 17419
)

// Field paths and projections (shared by find and aggregation).
const (
	// FieldPathEmpty: a field path that is the empty string.
	FieldPathEmpty Code = 40352
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
	// SubPipelineDepthExceeded: sub-pipelines nested deeper than the limit.
	SubPipelineDepthExceeded Code = 5836
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
	// ExplainExecutionStatsWithWriteStage: $out/$merge explained with executionStats or allPlansExecution.
	ExplainExecutionStatsWithWriteStage Code = 51029
)

// Aggregation stages.
const (
	// MatchSpecNotObject: a $match argument that is not an object.
	MatchSpecNotObject Code = 15959
	// SortSpecNotObject: a $sort argument that is not an object.
	SortSpecNotObject Code = 15973
	// SortSpecEmpty: a $sort with no keys.
	SortSpecEmpty Code = 15976
	// SortNaturalNotAllowed: $natural as a $sort key.
	SortNaturalNotAllowed Code = 17312
	// SkipNotNumber: a $skip argument that is not a number.
	SkipNotNumber Code = 15972
	// SkipNegative: a negative $skip.
	SkipNegative Code = 15956
	// LimitNotNumber: a $limit argument that is not a number.
	LimitNotNumber Code = 15957
	// LimitNotPositive: a $limit that is zero or negative.
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
	// UnwindMissingPath: an $unwind object without path.
	UnwindMissingPath Code = 28812
	// UnwindPathNotDollarPrefixed: an $unwind path without the leading '$'.
	UnwindPathNotDollarPrefixed Code = 28818
	// UnwindIndexFieldDollarPrefixed: an $unwind includeArrayIndex starting with '$'.
	UnwindIndexFieldDollarPrefixed Code = 28822
	// GroupSpecNotObject: a $group argument that is not an object.
	GroupSpecNotObject Code = 15947
	// GroupUnknownAccumulator: a $group accumulator MongoDB does not know.
	GroupUnknownAccumulator Code = 15952
	// GroupMissingID: a $group without _id.
	GroupMissingID Code = 15955
	// GroupDuplicateID: a $group with _id given twice.
	GroupDuplicateID Code = 16406
	// GroupDottedSubField: a dotted field name inside a $group _id sub-object.
	GroupDottedSubField Code = 40183
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
	// AccumulatorNSpecNotObject: an n-accumulator ($firstN...) argument that is not an object.
	AccumulatorNSpecNotObject Code = 5787801
	// AccumulatorNUnknownArgument: an n-accumulator or n-expression argument it does not take.
	AccumulatorNUnknownArgument Code = 5787901
	// AccumulatorNNotIntegral: an n that is not integral.
	AccumulatorNNotIntegral Code = 5787902
	// AccumulatorNMissingN: an n-accumulator without n.
	AccumulatorNMissingN Code = 5787906
	// AccumulatorNMissingInput: an n-accumulator without its input/output field.
	AccumulatorNMissingInput Code = 5787907
	// AccumulatorNNotPositive: an n that is not positive.
	AccumulatorNNotPositive Code = 5787908
	// AccumulatorNMissingSortBy: a $topN/$bottomN without sortBy.
	AccumulatorNMissingSortBy Code = 5788005
	// AccumulatorNSortByNotObject: a $top/$bottom sortBy that is not an object.
	AccumulatorNSortByNotObject Code = 5788604
	// CountFieldEmpty: a $count field that is not a non-empty string.
	CountFieldEmpty Code = 40156
	// CountFieldDollarPrefixed: a $count field starting with '$'.
	CountFieldDollarPrefixed Code = 40158
	// CountFieldNullByte: a $count field containing a null byte.
	CountFieldNullByte Code = 40159
	// CountFieldDotted: a $count field containing '.'.
	CountFieldDotted Code = 40160
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
	// FacetSpecInvalid: a $facet argument that is not a non-empty object.
	FacetSpecInvalid Code = 40169
	// FacetArgumentNotArray: a $facet field that is not an array.
	FacetArgumentNotArray Code = 40170
	// FacetPipelineElementInvalid: a $facet pipeline element that is not a non-empty object.
	FacetPipelineElementInvalid Code = 40171
	// LookupResultTooLarge: $lookup matches exceeding the BSON size limit.
	LookupResultTooLarge Code = 4568
	// OutSpecInvalidType: an $out argument that is neither a string nor an object.
	OutSpecInvalidType Code = 16990
	// MergeSpecInvalidType: a $merge argument that is neither a string nor an object.
	MergeSpecInvalidType Code = 51182
	// MergeLetWithInvalidWhenMatched: $merge let with a whenMatched mode that takes no variables.
	MergeLetWithInvalidWhenMatched Code = 51199
	// MergeOnArrayElementNotString: a $merge on array with a non-string element.
	MergeOnArrayElementNotString Code = 51134
	// MergeOnEmpty: a $merge on with no fields.
	MergeOnEmpty Code = 51187
	// MergeOnInvalidType: a $merge on that is neither a string nor an array of strings.
	MergeOnInvalidType Code = 51186
	// MergeOnFieldInvalidValue: a document whose $merge on field is missing, null, undefined or an array.
	MergeOnFieldInvalidValue Code = 51132
	// CollStatsSpecNotObject: a $collStats argument that is not an object.
	CollStatsSpecNotObject Code = 40166
	// IndexStatsSpecNotEmpty: an $indexStats argument that is not an empty object.
	IndexStatsSpecNotEmpty Code = 28803
)

// Expressions.
const (
	// SwitchNoMatchingBranch: a $switch (or $bucket) with no matching branch and no default.
	SwitchNoMatchingBranch Code = 40066
	// MergeObjectsInputNotObject: a $mergeObjects input that is not an object.
	MergeObjectsInputNotObject Code = 40400
)
