package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/apiparams"
	"github.com/folio-db/folio/internal/mongoerr"
)

// apiVersion1 are the commands of Stable API version 1 that Folio has.
var apiVersion1 = map[string]bool{
	"abortTransaction": true, "aggregate": true, "collMod": true, "commitTransaction": true, "count": true,
	"create": true, "createIndexes": true, "delete": true, "drop": true, "dropDatabase": true,
	"dropIndexes": true, "deleteIndexes": true, "endSessions": true, "explain": true, "find": true,
	"findAndModify": true, "findandmodify": true, "getMore": true, "hello": true, "insert": true,
	"killCursors": true, "listCollections": true, "listDatabases": true, "listIndexes": true, "ping": true,
	"refreshSessions": true, "update": true,
	// the authentication commands: drivers send the declared API
	// parameters with them (versioned-api spec), so a strict client logs in
	"saslStart": true, "saslContinue": true, "authenticate": true,
	// test commands (testOnly), in version 1 as MongoDB declares them
	"testVersions1And2": true, "testDeprecation": true, "testDeprecationInVersion2": true, "testRemoval": true,
}

// deprecatedInAPIVersion1 are the version 1 commands deprecated in it:
// with apiDeprecationErrors they fail. Only a test command is.
var deprecatedInAPIVersion1 = map[string]bool{"testDeprecation": true}

// skipsAPICheck are the commands MongoDB runs whatever API parameters come
// with them: hello, the handshake. isMaster, outside version 1, is checked
// (jstests/core/query/api/api_version_parameters.js).
var skipsAPICheck = map[string]bool{"hello": true}

// writesSystemJS names the version 1 commands MongoDB counts as writes
// (ReadWriteType kWrite): under apiStrict they may not name system.js.
var writesSystemJS = map[string]bool{"insert": true, "update": true, "delete": true, "findAndModify": true, "findandmodify": true}

// checkAPIDeclared applies the requireApiVersion parameter: while it is
// set, every command must declare apiVersion, the handshake's too (as
// MongoDB's, before the command's privileges are checked).
func (s *Service) checkAPIDeclared(p apiparams.Params) error {
	if !p.HasVersion && s.requireAPIVersion.Load() {
		return mongoerr.New(mongoerr.APIVersionRequired, "The apiVersion parameter is required, please configure your MongoClient's API version")
	}
	return nil
}

// checkAPI applies r's Stable API parameters, as MongoDB's
// initializeAPIParameters: the version given must be "1" (the empty string
// too is a version given); with apiStrict only version 1 commands run, the
// writes not on system.js, and without the fields and aggregation stages
// outside version 1 (checkAPIStrict); with apiDeprecationErrors the
// commands deprecated in version 1 fail. Messages name the command by its
// name, not the alias it was called by.
func checkAPI(r *Request, name string) error {
	p := r.Args.API
	if !p.HasVersion || skipsAPICheck[name] {
		return nil
	}
	switch p.Version {
	case "1":
	case "2":
		return mongoerr.New(mongoerr.APIVersionError, "Cannot accept API version 2")
	default:
		return mongoerr.New(mongoerr.APIVersionError, "API version must be \"1\"")
	}
	cmdName := name
	if c, ok := handlers[name]; ok {
		cmdName = c.names[0]
	}
	if p.Strict && !apiVersion1[name] {
		return mongoerr.New(mongoerr.APIStrictError,
			"Provided apiStrict:true, but the command %s is not in API Version 1. Information on supported commands and migrations in API Version 1 can be found at https://dochub.mongodb.org/core/manual-versioned-api", cmdName)
	}
	if p.Strict && writesSystemJS[name] {
		if coll, ok := r.args.first().StringValueOK(); ok && coll == "system.js" {
			return mongoerr.New(mongoerr.APIStrictError, "Provided apiStrict:true, but the command %s attempts to write to system.js", cmdName)
		}
	}
	if p.DeprecationErrors && deprecatedInAPIVersion1[name] {
		return mongoerr.New(mongoerr.APIDeprecationError, "Provided apiDeprecationErrors:true, but the command %s is deprecated in API Version 1", cmdName)
	}
	if p.Strict {
		return checkAPIStrict(name, &r.args)
	}
	return nil
}

func init() {
	for _, name := range []string{"testVersion2", "testVersions1And2", "testDeprecation", "testDeprecationInVersion2", "testRemoval"} {
		register(apiTestCmd, &argSpec{path: name}, name)
		testOnly(name)
	}
}

// apiTestCmd runs MongoDB's test commands of the Stable API, which differ
// only in the API versions they belong to (apiVersion1,
// deprecatedInAPIVersion1; version 2 is refused): each replies with the
// API parameters it was given.
func apiTestCmd(_ *Service, r *Request) (bson.Raw, error) {
	return marshal(r.Args.API.Doc()), nil
}

// unstableFields are the fields of version 1 commands that their IDL marks
// unstable (find_command.idl, aggregate_command.idl, list_collections.idl,
// list_indexes.idl, getmore_command.idl), by spec path: apiStrict refuses
// them, given at all, as the IDL parser does.
var unstableFields = map[string]map[string]bool{
	"FindCommandRequest": {
		"ntoreturn": true, "min": true, "max": true, "returnKey": true, "showRecordId": true,
		"$queryOptions": true, "tailable": true, "oplogReplay": true, "noCursorTimeout": true,
		"awaitData": true, "options": true, "term": true, "readOnce": true,
		"allowSpeculativeMajorityRead": true, "$_requestResumeToken": true, "$_resumeAfter": true,
		"runtimeConstants": true, "collectionUUID": true,
	},
	"aggregate": {
		"explain": true, "needsMerge": true, "fromMongos": true, "$queryOptions": true,
		"$_requestReshardingResumeToken": true, "runtimeConstants": true, "isMapReduceCommand": true,
		"collectionUUID": true, "$_passthroughToShard": true, "encryptionInformation": true,
		"$_externalDataSources": true, "sampleId": true, "$_requestResumeToken": true, "$_resumeAfter": true,
	},
	"listCollections": {"includePendingDrops": true},
	"listIndexes":     {"includeBuildUUIDs": true, "includeIndexBuildInfo": true},
	"getMore":         {"term": true, "lastKnownCommittedOpTime": true},
	"collMod":         {"changeStreamPreAndPostImages": true, "dryRun": true},
	// collMod's index document (coll_mod.idl's CollModIndex)
	"collMod.index": {"unique": true, "prepareUnique": true, "forceNonUnique": true},
}

// stagesNotInAPIVersion1 are the aggregation stages MongoDB registers as
// never in API version 1: apiStrict refuses them wherever they appear in a
// pipeline.
var stagesNotInAPIVersion1 = map[string]bool{
	"$currentOp": true, "$indexStats": true, "$listLocalSessions": true, "$listSessions": true,
	"$planCacheStats": true, "$listCatalog": true, "$search": true, "$fill": true,
	"$searchMeta": true, "$vectorSearch": true, "$listSearchIndexes": true,
	"$shardedDataDistribution": true, "$listSampledQueries": true, "$queryStats": true,
	"$_internalInhibitOptimization": true, "$_internalApplyOplogUpdate": true,
}

// checkAPIStrict refuses, under apiStrict, in an aggregate, the stages
// outside version 1, the $collStats options other than count and
// $changeStream's showExpandedEvents and showRawUpdateDescription, and
// collMod's unstable index fields (the commands' own unstable fields are
// refused by their parse, parseStrictCommand).
func checkAPIStrict(name string, c *cmdArgs) error {
	switch name {
	case "aggregate":
		if p, ok := c.value("pipeline").ArrayOK(); ok {
			return checkAPIStrictPipeline(p)
		}
	case "collMod":
		// the IDL parses the index document with the command, strictly
		// too, before the collection is looked up
		if index := c.doc("index"); index != nil {
			keys, _ := index.Elements()
			for _, k := range keys {
				if unstableFields[collModIndexSpec.path][k.Key()] {
					return mongoerr.New(mongoerr.APIStrictError, "BSON field '%s.%s' is not allowed with apiStrict:true.", collModIndexSpec.path, k.Key())
				}
			}
		}
	}
	return nil
}

// checkAPIStrictPipeline applies apiStrict to each stage of a pipeline and
// of its sub-pipelines ($lookup, $unionWith, $facet), as MongoDB's
// lite-parse of the pipeline does before anything else.
func checkAPIStrictPipeline(p bson.RawArray) error {
	return eachStage(p, func(name string, spec bson.Raw) error {
		if stagesNotInAPIVersion1[name] {
			return mongoerr.New(mongoerr.APIStrictError, "%s is not allowed with 'apiStrict: true' in API Version 1", name)
		}
		if name == "$collStats" {
			for _, opt := range []string{"latencyStats", "storageStats", "queryExecStats"} {
				if _, err := spec.LookupErr(opt); err == nil {
					return mongoerr.New(mongoerr.APIStrictError, "only the 'count' option to $collStats is supported in API Version 1")
				}
			}
		}
		if name == "$changeStream" {
			// these options are not in version 1, even false
			for _, opt := range []string{"showExpandedEvents", "showRawUpdateDescription"} {
				if _, err := spec.LookupErr(opt); err == nil {
					return mongoerr.New(mongoerr.APIStrictError, "The '%s' parameter to $changeStream is not supported in API Version 1", opt)
				}
			}
		}
		return nil
	})
}

// checkAPIStrictStages is checkAPIStrictPipeline on a view's stages.
func checkAPIStrictStages(stages []bson.Raw) error {
	_, arr, err := bson.MarshalValue(stagesArray(stages))
	if err != nil {
		return err
	}
	return checkAPIStrictPipeline(bson.RawArray(arr))
}

// eachStage calls fn with the name and specification (nil when not a
// document) of each stage of p, then of its sub-pipelines ($lookup's and
// $unionWith's pipeline, $facet's), depth first, until fn fails. Elements
// that are not stages are skipped: the pipeline's parse reports them.
func eachStage(p bson.RawArray, fn func(name string, spec bson.Raw) error) error {
	stages, _ := p.Values()
	for _, v := range stages {
		stage, ok := v.DocumentOK()
		if !ok {
			continue
		}
		el, err := stage.IndexErr(0)
		if err != nil {
			continue
		}
		name := el.Key()
		spec, _ := el.Value().DocumentOK()
		if err := fn(name, spec); err != nil {
			return err
		}
		var subs []bson.RawArray
		switch name {
		case "$lookup", "$unionWith":
			if sub, ok := spec.Lookup("pipeline").ArrayOK(); ok {
				subs = append(subs, sub)
			}
		case "$facet":
			facets, _ := spec.Elements()
			for _, f := range facets {
				if sub, ok := f.Value().ArrayOK(); ok {
					subs = append(subs, sub)
				}
			}
		}
		for _, sub := range subs {
			if err := eachStage(sub, fn); err != nil {
				return err
			}
		}
	}
	return nil
}
