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
