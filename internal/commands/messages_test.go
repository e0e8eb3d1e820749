package commands

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestErrorMessages: commands refused with MongoDB 7.0's code and text.
// Each command (Extended JSON) runs on a fresh service with test.c seeded
// (argsService), on db test unless db says otherwise.
func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		db   string
		cmd  string
		code int32
		msg  string
	}{
		// IDL type errors of fields of several types: the closing quote
		// inside the bracket (throwBadType)
		{"collStats scale a string", "", `{"collStats": "c", "scale": "x"}`, 14,
			"BSON field 'collStats.scale' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{"collStats scale an object", "", `{"collStats": "c", "scale": {"a": 1}}`, 14,
			"BSON field 'collStats.scale' is the wrong type 'object', expected types '[long, int, decimal, double']"},
		{"dbStats scale a string", "", `{"dbStats": 1, "scale": "1"}`, 14,
			"BSON field 'dbStats.scale' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{"dbStats scale an object", "", `{"dbStats": 1, "scale": {"a": 1}}`, 14,
			"BSON field 'dbStats.scale' is the wrong type 'object', expected types '[long, int, decimal, double']"},
		{"aggregate storageStats scale a string", "", `{"aggregate": "c", "pipeline": [{"$collStats": {"storageStats": {"scale": "x"}}}], "cursor": {}}`, 14,
			"BSON field '$collStats.storageStats.scale' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{"aggregate maxTimeMS a string", "", `{"aggregate": "c", "pipeline": [], "cursor": {}, "maxTimeMS": "1"}`, 14,
			"BSON field 'aggregate.maxTimeMS' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{"getParameter showDetails a string", "admin", `{"getParameter": {"showDetails": "1"}, "quiet": true}`, 14,
			"BSON field 'getParameter.showDetails' is the wrong type 'string', expected types '[bool, long, int, decimal, double']"},
		{"profile filter a number", "", `{"profile": -1, "filter": 1}`, 14,
			"BSON field 'profile.filter' is the wrong type 'int', expected types '[object, string']"},
		{"mapReduce map a number", "", `{"mapReduce": "c", "map": 1, "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}}`, 14,
			"BSON field 'mapReduce.map' is the wrong type 'int', expected types '[javascript, string']"},
		{"timeseries bucketMaxSpanSeconds a string", "", `{"create": "ts", "timeseries": {"timeField": "t", "bucketMaxSpanSeconds": "x"}}`, 14,
			"BSON field 'create.timeseries.bucketMaxSpanSeconds' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		// index specifications: validateIndexSpec's and the TTL's
		// (validateTTLOptions) errors show the specification as given;
		// the _id index's and _isSpecOk's the one validateIndexSpec
		// returns, ns dropped and v: 2 added
		{"index without a key", "", `{"createIndexes": "c", "indexes": [{}]}`, 9,
			"Error in specification {} :: caused by :: The 'key' field is a required property of an index specification"},
		{"index without a name", "", `{"createIndexes": "c", "indexes": [{"key": {"v": 1}}]}`, 9,
			"Error in specification { key: { v: 1 } } :: caused by :: The 'name' field is a required property of an index specification"},
		{"index unique an object", "", `{"createIndexes": "c", "indexes": [{"key": {"v": 1}, "name": "unique_index", "unique": {}}]}`, 14,
			"Error in specification { key: { v: 1 }, name: \"unique_index\", unique: {} } :: caused by :: The field 'unique has value unique: {}, which is not convertible to bool"},
		{"index name empty", "", `{"createIndexes": "c", "indexes": [{"key": {"v": -1}, "name": ""}]}`, 67,
			"Error in specification { key: { v: -1 }, name: \"\", v: 2 } :: caused by :: index name cannot be empty"},
		{"index name empty with v and ns", "", `{"createIndexes": "c", "indexes": [{"v": 2, "key": {"a": 1}, "ns": "test.c", "name": ""}]}`, 67,
			"Error in specification { v: 2, key: { a: 1 }, name: \"\" } :: caused by :: index name cannot be empty"},
		// wildcardIndexSpecProjectionPolicies ban find-only features.
		{"wildcardProjection with a positional path", "", `{"createIndexes": "c", "indexes": [{"key": {"$**": 1}, "name": "w", "wildcardProjection": {"a.$": 1}}]}`, 31324,
			"Cannot use positional projection in aggregation projection"},
		{"wildcardProjection with a nested positional path", "", `{"createIndexes": "c", "indexes": [{"key": {"$**": 1}, "name": "w", "wildcardProjection": {"a": {"b.$": 1}}}]}`, 31324,
			"Cannot use positional projection in aggregation projection"},
		{"index name empty after the _id index's rules", "", `{"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": ""}]}`, 67,
			"Error in specification { key: { _id: 1 }, name: \"\", v: 2 } :: caused by :: index name cannot be empty"},
		{"_id index unique", "", `{"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "_id_", "unique": true}]}`, 197,
			"The field 'unique' is not valid for an _id index specification. Specification: { key: { _id: 1 }, name: \"_id_\", unique: true, v: 2 }"},
		{"TTL index of two fields", "", `{"createIndexes": "c", "indexes": [{"key": {"a": 1, "b": 1}, "name": "ab", "expireAfterSeconds": 10}]}`, 67,
			"TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: { key: { a: 1, b: 1 }, name: \"ab\", expireAfterSeconds: 10 }"},
		{"TTL index expiring after -1 seconds", "", `{"createIndexes": "c", "indexes": [{"key": {"w": 1}, "expireAfterSeconds": -1, "name": "w_1"}]}`, 67,
			". Index spec: { key: { w: 1 }, expireAfterSeconds: -1, name: \"w_1\" } :: caused by :: TTL index 'expireAfterSeconds' option cannot be less than 0"},
		{"TTL index expiring after a string", "", `{"createIndexes": "c", "indexes": [{"key": {"w": 1}, "name": "w_1", "expireAfterSeconds": "x"}]}`, 67,
			". Index spec: { key: { w: 1 }, name: \"w_1\", expireAfterSeconds: \"x\" } :: caused by :: TTL index 'expireAfterSeconds' option must be numeric, but received a type of 'string"},
		{"TTL index expiring after NaN, its v 3 refused first", "", `{"createIndexes": "c", "indexes": [{"key": {"w": 1}, "name": "w_1", "expireAfterSeconds": {"$numberDouble": "NaN"}, "v": 3}]}`, 67,
			"Error in specification { key: { w: 1 }, name: \"w_1\", expireAfterSeconds: nan.0, v: 3 } :: caused by :: Invalid index specification { key: { w: 1 }, name: \"w_1\", expireAfterSeconds: nan.0, v: 3 }; cannot create an index with v=3"},
		{"_id index with a TTL", "", `{"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "_id_", "expireAfterSeconds": -5}]}`, 197,
			"The field 'expireAfterSeconds' is not valid for an _id index specification. Specification: { key: { _id: 1 }, name: \"_id_\", expireAfterSeconds: -5, v: 2 }"},
		{"index storageEngine a number", "", `{"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a", "storageEngine": 1}]}`, 67,
			"Error in specification { key: { a: 1 }, name: \"a\", storageEngine: 1, v: 2 } :: caused by :: \"storageEngine\" options must be a document if present"},
		{"index storageEngine after the name", "", `{"createIndexes": "c", "indexes": [{"key": {"a": 1}, "storageEngine": 1}]}`, 9,
			"Error in specification { key: { a: 1 }, storageEngine: 1 } :: caused by :: The 'name' field is a required property of an index specification"},
		// $collStats on a missing namespace: its section's context, then
		// the aggregate's executor's
		{"collStats storageStats of a missing collection", "", `{"aggregate": "nope", "pipeline": [{"$collStats": {"storageStats": {}}}], "cursor": {}}`, 26,
			"PlanExecutor error during aggregation :: caused by :: Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [test.nope] not found."},
		{"collStats storageStats of a missing database", "nodb", `{"aggregate": "c", "pipeline": [{"$collStats": {"storageStats": {}}}], "cursor": {}}`, 26,
			"PlanExecutor error during aggregation :: caused by :: Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [nodb.c] not found."},
		{"collStats count of a missing collection", "", `{"aggregate": "nope", "pipeline": [{"$collStats": {"count": {}}}], "cursor": {}}`, 26,
			"PlanExecutor error during aggregation :: caused by :: Unable to retrieve count in $collStats stage :: caused by :: Collection [test.nope] not found."},
		{"collStats queryExecStats of a missing collection", "", `{"aggregate": "nope", "pipeline": [{"$collStats": {"queryExecStats": {}}}], "cursor": {}}`, 26,
			"PlanExecutor error during aggregation :: caused by :: Unable to retrieve queryExecStats in $collStats stage :: caused by :: Collection [test.nope] not found."},
		// a stage's error at run time: the executor's context; at parse
		// time: none
		{"aggregate divide by zero", "", `{"aggregate": "c", "pipeline": [{"$project": {"x": {"$divide": ["$a", {"$subtract": ["$a", "$a"]}]}}}], "cursor": {}}`, 2,
			"PlanExecutor error during aggregation :: caused by :: can't $divide by zero"},
		{"aggregate unknown stage", "", `{"aggregate": "c", "pipeline": [{"$nope": {}}], "cursor": {}}`, 40324,
			"Unrecognized pipeline stage name: '$nope'"},
		// null: absent for a scalar IDL field, refused by an array<T>
		// field's BSONElement::Obj(), a wrong type for a type read whole
		{"createIndexes indexes null", "", `{"createIndexes": "c", "indexes": null}`, 10065,
			"invalid parameter: expected an object (indexes)"},
		{"createIndexes indexes undefined", "", `{"createIndexes": "c", "indexes": {"$undefined": true}}`, 10065,
			"invalid parameter: expected an object (indexes)"},
		{"createIndexes indexes missing", "", `{"createIndexes": "c"}`, 40414,
			"BSON field 'createIndexes.indexes' is missing but a required field"},
		{"createUser roles null", "", `{"createUser": "u", "pwd": "p", "roles": null}`, 10065,
			"invalid parameter: expected an object (roles)"},
		{"update arrayFilters null", "", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"a": 1}}, "arrayFilters": null}]}`, 10065,
			"invalid parameter: expected an object (arrayFilters)"},
		{"getLog null", "admin", `{"getLog": null}`, 40414,
			"BSON field 'getLog.getLog' is missing but a required field"},
		{"getLog a number", "admin", `{"getLog": 1}`, 14,
			"BSON field 'getLog.getLog' is the wrong type 'int', expected type 'string'"},
		{"getLog an unknown field before its null value", "admin", `{"getLog": null, "x": 1}`, 40415,
			"BSON field 'getLog.x' is an unknown field."},
		{"aggregate pipeline null", "", `{"aggregate": "c", "pipeline": null, "cursor": {}}`, 14,
			"'pipeline' option must be specified as an array"},
		{"aggregate pipeline of a number", "", `{"aggregate": "c", "pipeline": [1], "cursor": {}}`, 14,
			"Each element of the 'pipeline' array must be an object"},
		// an update's u is read by UpdateModification's parser as the
		// command is parsed: a pipeline stage that is not a document fails
		// the command, not the statement (parsePipelineFromBSON)
		{"update pipeline of a number", "", `{"update": "c", "updates": [{"q": {}, "u": [1]}]}`, 14,
			"Each element of the 'pipeline' array must be an object"},
		{"update pipeline of a number in a later statement", "", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"a": 1}}}, {"q": {}, "u": [{"$set": {"b": 1}}, "x"]}]}`, 14,
			"Each element of the 'pipeline' array must be an object"},
		{"findAndModify pipeline of a number", "", `{"findAndModify": "c", "query": {}, "update": [1]}`, 14,
			"Each element of the 'pipeline' array must be an object"},
		// find's documents are of type any (object_owned_nonempty_serialize):
		// the IDL skips no null, and parseOwnedBSON refuses it.
		{"find filter null", "", `{"find": "c", "filter": null}`, 14,
			"Expected field filterto be of type object"},
		{"find let null", "", `{"find": "c", "let": null}`, 0, ""},
		// namespaces: DatabaseName's rules for every command, then the
		// namespace's for a command naming a collection, the
		// dispatcher's for the others, create's and the writes' own
		{"create in a db of 64 bytes", strings.Repeat("a", 64), `{"create": "c"}`, 73, "db name must be at most 63 characters, found: 64"},
		{"create in a db with a dot", "database.test", `{"create": "c"}`, 73, "'.' is an invalid character in a db name: database.test"},
		{"create in a db with a slash", "/", `{"create": "c"}`, 73, "Invalid namespace specified '/.c'"},
		{"create in a db with a backslash", `\`, `{"create": "c"}`, 73, "Invalid namespace specified '\\.c'"},
		{"create in a db with a space", "data base", `{"create": "c"}`, 73, "Invalid namespace specified 'data base.c'"},
		{"create in a db with a $", "name_with_a-$", `{"create": "c"}`, 73, "Invalid namespace: name_with_a-$.c"},
		{"create a collection with a NUL", "", `{"create": "\u0000"}`, 73, "namespaces cannot have embedded null characters"},
		{"create a collection starting with a dot", "", `{"create": ".collection.."}`, 73, "Collection names cannot start with '.': .collection.."},
		{"create an empty collection", "", `{"create": ""}`, 73, "Invalid namespace specified 'test.'"},
		{"create a collection with a $", "", `{"create": "a$b"}`, 73, "Invalid collection name: a$b"},
		{"find in a db with a space", "a b", `{"find": "c"}`, 73, "Invalid namespace specified 'a b.c'"},
		{"find in a db with a $", "a$b", `{"find": "c"}`, 0, ""},
		{"aggregate of 1 in a db with a space", "a b", `{"aggregate": 1, "pipeline": [], "cursor": {}}`, 73, "Invalid database name: 'a b'"},
		{"listCollections in a db with a space", "a b", `{"listCollections": 1}`, 73, "Invalid database name: 'a b'"},
		{"insert in a db with a $", "a$b", `{"insert": "c", "documents": [{}]}`, 73, "Invalid namespace: a$b.c"},
		{"delete in a db with a $", "a$b", `{"delete": "c", "deletes": [{"q": {}, "limit": 0}]}`, 73, "Invalid namespace: a$b.c"},
		{"delete of a collection with a $", "", `{"delete": "a$b", "deletes": [{"q": {}, "limit": 0}]}`, 73, "Invalid collection name: a$b"},
		{"findAndModify of a system collection", "", `{"findAndModify": "system.foo", "remove": true}`, 73, "Invalid system namespace: test.system.foo"},
		{"dataSize without a collection", "", `{"dataSize": "invalid"}`, 73, "Namespace invalid is not a valid collection name"},
		{"dataSize of an empty collection", "", `{"dataSize": "test."}`, 73, "Namespace test. is not a valid collection name"},
		{"dataSize with a NUL", "", `{"dataSize": "test.\u0000"}`, 73, "namespaces cannot have embedded null characters"},
		{"getMore of an empty collection", "", `{"getMore": {"$numberLong": "1"}, "collection": ""}`, 73, "Collection names cannot be empty"},
		{"getMore of a collection starting with a dot", "", `{"getMore": {"$numberLong": "1"}, "collection": ".c"}`, 73, "Collection names cannot start with '.': .c"},
		{"getMore of a collection with a NUL", "", `{"getMore": {"$numberLong": "1"}, "collection": "c\u0000"}`, 73, "Collection names cannot have embedded null characters"},
		{"compact in a missing db", "nodb", `{"compact": "c"}`, 26, "database does not exist"},
		{"a search index command", "", `{"createSearchIndexes": "c", "indexes": [{"definition": {}}]}`, 115, "Search index commands are only supported with Atlas."},
		{"a search index entry without its definition", "", `{"createSearchIndexes": "c", "indexes": [{}]}`, 40414, "BSON field 'createSearchIndexes.indexes.definition' is missing but a required field"},
		{"compact of a missing collection", "", `{"compact": "nope"}`, 26, "collection does not exist"},
		// listDatabases and listCollections parse their filter with the
		// default features (no $text or $near), and an $expr failing on a
		// database or collection fails the command
		{"listDatabases filter with $text", "admin", `{"listDatabases": 1, "filter": {"$text": {"$search": "x"}}}`, 2, "$text is not allowed in this context"},
		{"listDatabases filter with $nearSphere", "admin", `{"listDatabases": 1, "filter": {"a": {"$nearSphere": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}}}`, 5626500,
			"$geoNear, $near, and $nearSphere are not allowed in this context, as these operators require sorting geospatial data. If you do not need sort, consider using $geoWithin instead. Check out https://dochub.mongodb.org/core/near-sort-operation and https://dochub.mongodb.org/core/nearSphere-sort-operationfor more details."},
		{"listDatabases filter failing", "admin", `{"listDatabases": 1, "filter": {"$expr": {"$abs": "$name"}}}`, 28765, "$abs only supports numeric types, not string"},
		{"listCollections filter with $text", "", `{"listCollections": 1, "filter": {"$text": {"$search": "x"}}}`, 2, "$text is not allowed in this context"},
		{"listCollections filter failing", "", `{"listCollections": 1, "filter": {"$expr": {"$abs": "$name"}}}`, 28765, "$abs only supports numeric types, not string"},
		{"create with an idIndex of another collation", "", `{"create": "d", "idIndex": {"key": {"_id": 1}, "name": "_id_", "collation": {"locale": "en_US"}}}`, 2,
			"'idIndex' must have the same collation as the collection."},
		// renameCollection: names valid (NamespaceString::isValid), then
		// each one a client may write (validateNamespacesForRenameCollection)
		{"rename of a database", "admin", `{"renameCollection": "test", "to": "test.d"}`, 73, "Invalid source namespace: test"},
		{"rename to an empty collection", "admin", `{"renameCollection": "test.c", "to": "test."}`, 73, "Invalid target namespace: test."},
		{"rename to a system collection", "admin", `{"renameCollection": "test.c", "to": "test.system.foo"}`, 20,
			"error with target namespace: Invalid system namespace: test.system.foo"},
		{"rename of a missing system collection", "admin", `{"renameCollection": "test.system.foo", "to": "test.d"}`, 20,
			"error with source namespace: Invalid system namespace: test.system.foo"},
		{"rename to system.users outside admin", "admin", `{"renameCollection": "test.c", "to": "test.system.users"}`, 20,
			"error with target namespace: Invalid system namespace: test.system.users"},
		{"rename to system.profile", "admin", `{"renameCollection": "test.c", "to": "test.system.profile"}`, 20,
			"error with target namespace: cannot write to test.system.profile"},
		{"rename of admin.system.version", "admin", `{"renameCollection": "admin.system.version", "to": "admin.v"}`, 20,
			"renaming the server configuration collection (admin.system.version) is not allowed"},
		{"collMod of an index by a missing key pattern", "", `{"collMod": "c", "index": {"keyPattern": {"nope": 1}, "hidden": true}}`, 27,
			"cannot find index { nope: 1 } for ns test.c"},
		{"collMod of an index by a missing name", "", `{"collMod": "c", "index": {"name": "nope", "hidden": true}}`, 27, "cannot find index nope for ns test.c"},
		{"drop of the oplog", "local", `{"drop": "oplog.rs"}`, 5255000, "can't drop live oplog while replicating"},
		// initializeOperationSessionInfo
		{"txnNumber without lsid", "", `{"insert": "c", "documents": [{}], "txnNumber": {"$numberLong": "1"}}`, 72,
			"Transaction number requires a session ID to also be specified"},
		{"autocommit without lsid nor txnNumber", "", `{"insert": "c", "documents": [{}], "autocommit": false}`, 72,
			"'autocommit' field requires a transaction number to also be specified"},
		// validateSessionOptions
		{"count in a transaction", "", `{"count": "c", "lsid": {"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}, "txnNumber": {"$numberLong": "1"}, "autocommit": false, "startTransaction": true}`, 263,
			"Cannot run 'count' in a multi-document transaction. Please see http://dochub.mongodb.org/core/transaction-count for a recommended alternative."},
		{"a transaction started by a commit", "admin", `{"commitTransaction": 1, "lsid": {"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}, "txnNumber": {"$numberLong": "1"}, "autocommit": false, "startTransaction": true}`, 263, "Cannot start a transaction with a commit"},
		{"a transaction's find on system.profile", "", `{"find": "system.profile", "lsid": {"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}, "txnNumber": {"$numberLong": "1"}, "autocommit": false, "startTransaction": true}`, 263, "Cannot run command against the 'test.system.profile' collection in a transaction."},
		{"a transaction's getMore on system.profile", "", `{"getMore": {"$numberLong": "5"}, "collection": "system.profile", "lsid": {"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}, "txnNumber": {"$numberLong": "1"}, "autocommit": false}`, 263, "Cannot run command against the 'test.system.profile' collection in a transaction."},
		{"a transaction started by an abort", "admin", `{"abortTransaction": 1, "lsid": {"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}, "txnNumber": {"$numberLong": "1"}, "autocommit": false, "startTransaction": true}`, 263, "Cannot start a transaction with an abort"},
		// create's autoIndexId: with idIndex (typedRun), false on a
		// replicated namespace (DatabaseImpl::createCollection); Folio
		// refuses it where MongoDB takes it (local, system.profile)
		{"create autoIndexId with idIndex", "", `{"create": "ai", "autoIndexId": true, "idIndex": {"key": {"_id": 1}, "name": "_id_"}}`, 72,
			"'idIndex' is not allowed with 'autoIndexId': { key: { _id: 1 }, name: \"_id_\" }"},
		{"create autoIndexId false replicated", "", `{"create": "ai", "autoIndexId": false}`, 50001,
			"autoIndexId:false is not allowed for collection test.ai because it can be replicated"},
		{"create autoIndexId false capped replicated", "", `{"create": "ai", "capped": true, "size": 4096, "autoIndexId": false}`, 50001,
			"autoIndexId:false is not allowed for collection test.ai because it can be replicated"},
		{"create autoIndexId false in local", "local", `{"create": "ai", "autoIndexId": false}`, 238,
			"Folio does not support the create option 'autoIndexId: false' yet"},
		// create's clusteredIndex: typedRun's checks of capped, size and
		// max come first (clusteredIndex given in any form), then
		// createCollection's (a view, autoIndexId: false), then
		// validateClusteredIndexSpec's (unique, key, TTL, v)
		{"create clustered capped without expireAfterSeconds", "", `{"create": "cl", "clusteredIndex": {"key": {"_id": 1}, "unique": true}, "capped": true}`, 6049201,
			"A capped clustered collection requires the 'expireAfterSeconds' field"},
		{"create clustered with size", "", `{"create": "cl", "clusteredIndex": {"key": {"_id": 1}, "unique": true}, "size": 10, "max": 10}`, 6049200,
			"'size' field for capped collections is not allowed on clustered collections. Did you mean 'capped: true' with 'expireAfterSeconds'?"},
		{"create clustered with max", "", `{"create": "cl", "clusteredIndex": {"key": {"_id": 1}, "unique": true}, "max": 10}`, 6049204,
			"'max' field for capped collections is not allowed on clustered collections. Did you mean 'capped: true' with 'expireAfterSeconds'?"},
		{"create clusteredIndex false with size", "", `{"create": "cl", "clusteredIndex": false, "size": 10}`, 6049200,
			"'size' field for capped collections is not allowed on clustered collections. Did you mean 'capped: true' with 'expireAfterSeconds'?"},
		{"create clustered view", "", `{"create": "cl", "clusteredIndex": {"key": {"ts": 1}, "unique": true}, "viewOn": "c"}`, 6026500,
			"The 'clusteredIndex' option is not supported with views"},
		{"create clustered autoIndexId false", "", `{"create": "cl", "clusteredIndex": {"key": {"ts": 1}, "unique": false}, "autoIndexId": false}`, 6026501,
			"The 'clusteredIndex' option does not support {autoIndexId: false}"},
		{"create clustered v", "", `{"create": "cl", "clusteredIndex": {"key": {"_id": 1}, "unique": true, "v": 12345}}`, 5979704,
			"Invalid clusteredIndex specification { v: 12345, key: { _id: 1 }, name: \"_id_\", unique: true }; cannot create a clusteredIndex with v=12345"},
		{"create clustered key before v", "", `{"create": "cl", "clusteredIndex": {"key": {"ts": 1}, "unique": true, "v": 1}}`, 197,
			"The clusteredIndex option is only supported for key: {_id: 1}"},
		// createIndexes' clustered option: validateIndexSpec's rules,
		// then the collection's (createIndexes, the catalog's
		// isSpecOKClusteredIndexCheck)
		{"index clustered false", "", `{"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "x", "clustered": false, "unique": true}]}`, 6492800,
			"Error in specification { key: { _id: 1 }, name: \"x\", clustered: false, unique: true } :: caused by :: Value 'false' for field 'clustered' is invalid"},
		{"index clustered without unique", "", `{"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "x", "clustered": true, "unique": 1}]}`, 67,
			"Error in specification { key: { _id: 1 }, name: \"x\", clustered: true, unique: 1 } :: caused by :: The 'unique' field is required when 'clustered' is specified"},
		{"index clustered with sparse", "", `{"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "x", "clustered": true, "sparse": true}]}`, 197,
			"Error in specification { key: { _id: 1 }, name: \"x\", clustered: true, sparse: true } :: caused by :: The field 'sparse' is not valid for a clustered index specification. Specification: { key: { _id: 1 }, name: \"x\", clustered: true, sparse: true }"},
		{"index clustered on a new collection", "", `{"createIndexes": "nc", "indexes": [{"key": {"_id": 1}, "name": "_id_", "clustered": true, "unique": true}]}`, 6100900,
			"Cannot implicitly create a new collection with createIndex 'clustered' option"},
		{"index clustered on a collection not clustered", "", `{"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "_id_", "clustered": true, "unique": true}]}`, 6243700,
			"Cannot create index with option 'clustered' that does not match an existing clustered index"},
		// validateIndexSpec's type check of wildcardProjection (and
		// columnstoreProjection) asks for a non-empty object
		{"wildcardProjection a string", "", `{"createIndexes": "c", "indexes": [{"key": {"$**": 1}, "name": "w", "wildcardProjection": "a"}]}`, 14,
			"Error in specification { key: { $**: 1 }, name: \"w\", wildcardProjection: \"a\" } :: caused by :: The field 'wildcardProjection' must be a non-empty object, but got string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cmd bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(tc.cmd), true, &cmd); err != nil {
				t.Fatal(err)
			}
			reply := runOn(t, argsService(t), tc.db, cmd)
			if got, msg := code(reply), errmsg(reply); got != tc.code || msg != tc.msg {
				t.Errorf("%s: %d %q, want %d %q", tc.cmd, got, msg, tc.code, tc.msg)
			}
		})
	}
}

// TestCreateAutoIndexIDNote: create's reply notes autoIndexId, true or
// false, whenever it is given and the collection is made (CmdCreate's
// typedRun), and listCollections shows it, for a clustered collection
// too (false is refused there: _createCollection's 6026501).
func TestCreateAutoIndexIDNote(t *testing.T) {
	s := argsService(t)
	for _, tc := range []struct {
		cmd  string
		note bool
	}{
		{`{"create": "plain"}`, false},
		{`{"create": "auto", "autoIndexId": true}`, true},
		{`{"create": "auto", "autoIndexId": true}`, true}, // exists, same options
		{`{"create": "cl", "clusteredIndex": {"key": {"_id": 1}, "unique": true}, "autoIndexId": true}`, true},
	} {
		var cmd bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.cmd), true, &cmd); err != nil {
			t.Fatal(err)
		}
		reply := runOn(t, s, "", cmd)
		note, _ := reply.Lookup("note").StringValueOK()
		if code(reply) != 0 || (note != "") != tc.note || tc.note && note != "The autoIndexId option is deprecated and will be removed in a future release" {
			t.Errorf("%s: %s", tc.cmd, reply)
		}
	}
	reply := runCmd(t, s, bson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: bson.D{{Key: "name", Value: "cl"}}}})
	if got := reply.Lookup("cursor", "firstBatch", "0", "options", "autoIndexId"); got.Type != bson.TypeBoolean || !got.Boolean() {
		t.Errorf("listCollections of cl: %s", reply)
	}
}

// TestCollModCappedTTL: collMod's index.expireAfterSeconds on a capped
// collection is InvalidOptions before the range or the index is checked
// (MongoDB 7.0 parseCollModRequest); hiding an index there still works.
func TestCollModCappedTTL(t *testing.T) {
	s := argsService(t)
	for _, cmd := range []bson.D{
		{{Key: "create", Value: "cap"}, {Key: "capped", Value: true}, {Key: "size", Value: int32(4096)}},
		{{Key: "createIndexes", Value: "cap"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "name", Value: "t_1"}}}}},
	} {
		if c := code(runCmd(t, s, cmd)); c != 0 {
			t.Fatalf("seeding: code %d", c)
		}
	}
	for _, tc := range []struct {
		cmd  string
		code int32
		msg  string
	}{
		{`{"collMod": "cap", "index": {"name": "t_1", "expireAfterSeconds": 100}}`, 72, "TTL indexes are not supported for capped collections."},
		{`{"collMod": "cap", "index": {"keyPattern": {"_id": 1}, "expireAfterSeconds": 100}}`, 72, "TTL indexes are not supported for capped collections."},
		{`{"collMod": "cap", "index": {"name": "nope", "expireAfterSeconds": 100}}`, 72, "TTL indexes are not supported for capped collections."},
		{`{"collMod": "cap", "index": {"name": "t_1", "expireAfterSeconds": -1}}`, 72, "TTL indexes are not supported for capped collections."},
		{`{"collMod": "cap", "index": {"name": "t_1", "hidden": true}}`, 0, ""},
	} {
		var cmd bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.cmd), true, &cmd); err != nil {
			t.Fatal(err)
		}
		reply := runArgs(t, s, cmd)
		if got, msg := code(reply), errmsg(reply); got != tc.code || msg != tc.msg {
			t.Errorf("%s: %d %q, want %d %q", tc.cmd, got, msg, tc.code, tc.msg)
		}
	}
}

// runOn runs cmd (its $db added) on db, or where runArgs runs it when db
// is empty.
func runOn(t *testing.T, s *Service, db string, cmd bson.Raw) bson.Raw {
	t.Helper()
	if db == "" {
		return runArgs(t, s, cmd)
	}
	return runIn(t, s, db, cmd)
}

// TestTimeseriesTTLIndex: a TTL index of a time series collection's
// measurements is refused with MongoDB 7.0's rules
// (jstests/core/timeseries/timeseries_index_ttl_partial.js,
// makeTimeseriesCreateIndexesCommand): without a partial filter on the
// metaField alone InvalidOptions, on another field than the timeField
// InvalidOptions; the index MongoDB builds (the timeField, a partial
// filter on the metaField) is built, after the filter's translation to
// the buckets (whose refusal comes first). collMod refuses to make an
// index of the measurements TTL.
func TestTimeseriesTTLIndex(t *testing.T) {
	s := argsService(t)
	create := bson.D{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "tm"}, {Key: "metaField", Value: "mm"}}}}
	if c := code(runCmd(t, s, create)); c != 0 {
		t.Fatalf("seeding: code %d", c)
	}
	need := "TTL indexes on time-series collections require a partialFilterExpression on the metaField"
	for _, tc := range []struct {
		spec string
		code int32
		msg  string
	}{
		{`{"key": {"tm": 1}, "name": "p", "expireAfterSeconds": 3600}`, 72, need},
		{`{"key": {"mm": 1}, "name": "p", "expireAfterSeconds": 3600}`, 72, need},
		{`{"key": {"tm": 1}, "name": "p", "expireAfterSeconds": 400, "partialFilterExpression": {"data": {"$gt": 5}}}`, 72, need},
		{`{"key": {"tm": 1}, "name": "p", "expireAfterSeconds": 400, "partialFilterExpression": {"mm": {"$gt": 5}, "data": {"$gt": 5}}}`, 72, need},
		{`{"key": {"tm": 1}, "name": "p", "expireAfterSeconds": 400, "partialFilterExpression": {"tm": {"$gt": {"$date": "2026-01-01T00:00:00Z"}}}}`, 72, need},
		{`{"key": {"mm": 1}, "name": "p", "expireAfterSeconds": 400, "partialFilterExpression": {"mm": {"$gt": 5}}}`, 72,
			"TTL indexes on non-time fields are not supported on time-series collections"},
		{`{"key": {"data": 1}, "name": "p", "expireAfterSeconds": 400, "partialFilterExpression": {"mm.a": {"$gt": 5}}}`, 72,
			"TTL indexes on non-time fields are not supported on time-series collections"},
		// The translation of the filter fails first.
		{`{"key": {"tm": 1}, "name": "p", "expireAfterSeconds": 400, "partialFilterExpression": {"tm": 7}}`, 5916301,
			"Error translating non-metadata time-series predicate to operate on buckets: This predicate will never be true, because the time field always contains a Date: { tm: { $eq: 7 } }"},
		{`{"key": {"tm": 1}, "name": "p", "expireAfterSeconds": 400, "partialFilterExpression": {"mm": {"$gt": 5}}}`, 0, ""},
		{`{"key": {"tm": -1}, "name": "p2", "expireAfterSeconds": 400, "partialFilterExpression": {"$or": [{"mm": 1}, {"mm.b": 2}]}}`, 0, ""},
		// An empty filter reads no measurement (MongoDB's hasMetricPred).
		{`{"key": {"tm": 1}, "name": "p3", "expireAfterSeconds": 400, "partialFilterExpression": {}}`, 0, ""},
	} {
		var cmd bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(`{"createIndexes": "ts", "indexes": [`+tc.spec+`]}`), false, &cmd); err != nil {
			t.Fatal(err)
		}
		reply := runArgs(t, s, cmd)
		if got, msg := code(reply), errmsg(reply); got != tc.code || msg != tc.msg {
			t.Errorf("%s: %d %q, want %d %q", tc.spec, got, msg, tc.code, tc.msg)
		}
	}
	// collMod making an index of the measurements TTL: MongoDB 7.0's
	// parseCollModRequest refuses it in these words.
	index := bson.D{{Key: "createIndexes", Value: "ts"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "tm", Value: 1}}}, {Key: "name", Value: "tm_1"}}}}}
	if c := code(runCmd(t, s, index)); c != 0 {
		t.Fatalf("seeding: code %d", c)
	}
	reply := runCmd(t, s, bson.D{{Key: "collMod", Value: "ts"}, {Key: "index", Value: bson.D{{Key: "keyPattern", Value: bson.D{{Key: "tm", Value: 1}}}, {Key: "expireAfterSeconds", Value: 100}}}})
	if got, msg := code(reply), errmsg(reply); got != 72 || msg != "TTL indexes are not supported for time-series collections. Please refer to the documentation and use the top-level 'expireAfterSeconds' option instead" {
		t.Errorf("collMod index expireAfterSeconds: %d %q", got, msg)
	}
}
