package commands

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/js"
)

// argRows has a row for every declared field Folio honours or ignores:
// the field ("<spec path>.<name>"), a command using it (Extended JSON, run
// on db test, or admin for admin-only commands, against a collection c
// holding {_id: 1, a: 1} and {_id: 2, a: 2} with an index a_1) and the
// code MongoDB answers (0: ok; for a write command, its first write
// error's code). Refused fields, wrong types, duplicates and unknown
// fields are checked for every declaration by TestArgSpecs.
// https://www.mongodb.com/docs/v7.0/reference/command/ (each command's page)
var argRows = []struct {
	field string
	cmd   string
	code  int32
}{
	{"FindCommandRequest.filter", `{"find": "c", "filter": {"a": 1}}`, 0},
	{"FindCommandRequest.sort", `{"find": "c", "sort": {"a": -1}}`, 0},
	{"FindCommandRequest.sort", `{"find": "c", "sort": 42.13}`, 14},
	{"FindCommandRequest.filter", `{"find": "c", "filter": "x"}`, 14},
	{"FindCommandRequest.projection", `{"find": "c", "projection": {"a": 1}}`, 0},
	{"FindCommandRequest.skip", `{"find": "c", "skip": 1}`, 0},
	{"FindCommandRequest.skip", `{"find": "c", "skip": -1}`, 51024},
	{"FindCommandRequest.limit", `{"find": "c", "limit": 1}`, 0},
	{"FindCommandRequest.limit", `{"find": "c", "limit": -1}`, 51024},
	{"FindCommandRequest.batchSize", `{"find": "c", "batchSize": 1}`, 0},
	{"FindCommandRequest.batchSize", `{"find": "c", "batchSize": -1}`, 51024},
	{"FindCommandRequest.singleBatch", `{"find": "c", "singleBatch": true}`, 0},
	{"FindCommandRequest.tailable", `{"find": "c", "tailable": true}`, 2},
	{"FindCommandRequest.awaitData", `{"find": "c", "awaitData": true}`, 9},
	{"FindCommandRequest.singleBatch", `{"find": "c", "tailable": true, "singleBatch": true}`, 2},
	{"FindCommandRequest.allowDiskUse", `{"find": "c", "allowDiskUse": true, "sort": {"a": 1}}`, 0},
	{"FindCommandRequest.hint", `{"find": "c", "hint": "a_1"}`, 0},
	{"FindCommandRequest.collation", `{"find": "c", "collation": {"locale": "en", "strength": 2}}`, 0},
	{"FindCommandRequest.collation", `{"find": "c", "collation": {"locale": "en", "strength": 0}}`, 9},
	{"FindCommandRequest.hint", `{"find": "c", "hint": "nope"}`, 2},
	{"FindCommandRequest.hint", `{"find": "c", "hint": null}`, 9},
	{"FindCommandRequest.hint", `{"find": "c", "hint": 1}`, 9},
	{"FindCommandRequest.noCursorTimeout", `{"find": "c", "noCursorTimeout": true}`, 0},
	{"FindCommandRequest.let", `{"find": "c", "let": {"x": 1}, "filter": {"$expr": {"$eq": ["$a", "$$x"]}}}`, 0},
	{"FindCommandRequest.allowPartialResults", `{"find": "c", "allowPartialResults": true}`, 0},
	{"FindCommandRequest.readOnce", `{"find": "c", "readOnce": true}`, 0},
	{"FindCommandRequest.returnKey", `{"find": "c", "returnKey": false}`, 0},
	{"FindCommandRequest.showRecordId", `{"find": "c", "showRecordId": false}`, 0},
	{"FindCommandRequest.showRecordId", `{"find": "c", "showRecordId": null}`, 14},
	{"FindCommandRequest.showRecordId", `{"find": "c", "showRecordId": 0}`, 14},
	{"FindCommandRequest.oplogReplay", `{"find": "c", "oplogReplay": true}`, 0},
	{"FindCommandRequest.showRecordId", `{"find": "c", "showRecordId": true}`, 0},
	{"FindCommandRequest.$_requestResumeToken", `{"find": "c", "$_requestResumeToken": false}`, 0},
	{"FindCommandRequest.$_requestResumeToken", `{"find": "c", "$_requestResumeToken": true}`, 2},
	{"FindCommandRequest.$_requestResumeToken", `{"find": "c", "$_requestResumeToken": true, "hint": {"$natural": 1.0}}`, 0},
	{"FindCommandRequest.$_resumeAfter", `{"find": "c", "$_resumeAfter": 1}`, 14},
	{"FindCommandRequest.$_resumeAfter", `{"find": "c", "$_resumeAfter": {"$recordId": null}}`, 2},
	{"FindCommandRequest.$_resumeAfter", `{"find": "c", "$_requestResumeToken": true, "hint": {"$natural": 1}, "$_resumeAfter": {"$recordId": null}}`, 0},
	{"FindCommandRequest.min", `{"find": "c", "hint": "a_1", "min": {"a": 2}}`, 0},
	{"FindCommandRequest.min", `{"find": "c", "min": {"a": 2}}`, 51173},
	{"FindCommandRequest.max", `{"find": "c", "hint": "a_1", "max": {"a": 2}}`, 0},
	{"FindCommandRequest.max", `{"find": "c", "hint": "a_1", "min": {"a": 2}, "max": {"b": 3}}`, 51176},
	{"FindCommandRequest.max", `{"find": "c", "hint": "a_1", "limit": -1, "min": {"a": 2}, "max": {"b": 3}}`, 51024},

	{"aggregate.pipeline", `{"aggregate": "c", "pipeline": [{"$match": {"a": 1}}], "cursor": {}}`, 0},
	{"aggregate.pipeline", `{"aggregate": "c", "cursor": {}}`, 40414},
	{"aggregate.pipeline", `{"aggregate": "c", "pipeline": null, "cursor": {}}`, 14},
	{"aggregate.pipeline", `{"aggregate": "c", "pipeline": [1], "cursor": {}}`, 14},
	{"aggregate.cursor", `{"aggregate": "c", "pipeline": [], "cursor": {"batchSize": 1}}`, 0},
	{"aggregate.cursor", `{"aggregate": "c", "pipeline": [], "cursor": "x"}`, 14},
	{"aggregate.cursor", `{"aggregate": "c", "pipeline": [], "cursor": null}`, 14},
	{"cursor.batchSize", `{"aggregate": "c", "pipeline": [], "cursor": {"batchSize": -1}}`, 51024},
	{"aggregate.allowDiskUse", `{"aggregate": "c", "pipeline": [], "cursor": {}, "allowDiskUse": true}`, 0},
	{"aggregate.hint", `{"aggregate": "c", "pipeline": [], "cursor": {}, "hint": {"a": 1}}`, 0},
	{"aggregate.collation", `{"aggregate": "c", "pipeline": [{"$match": {"a": "x"}}], "cursor": {}, "collation": {"locale": "en"}}`, 0},
	{"aggregate.collation", `{"aggregate": "c", "pipeline": [{"$addFields": {"x": {"$eq": ["$a", "b"]}}}], "cursor": {}, "collation": {"locale": "en"}}`, 0},
	{"aggregate.let", `{"aggregate": "c", "pipeline": [{"$project": {"v": "$$x"}}], "cursor": {}, "let": {"x": 1}}`, 0},
	{"aggregate.explain", `{"aggregate": "c", "pipeline": [], "explain": true}`, 0},
	{"aggregate.bypassDocumentValidation", `{"aggregate": "c", "pipeline": [], "cursor": {}, "bypassDocumentValidation": true}`, 0},
	{"aggregate.fromMongos", `{"aggregate": "c", "pipeline": [], "cursor": {}, "fromMongos": false}`, 0},
	{"aggregate.needsMerge", `{"aggregate": "c", "pipeline": [], "cursor": {}, "fromMongos": false, "needsMerge": false}`, 0},
	{"aggregate.needsMerge", `{"aggregate": "c", "pipeline": [], "cursor": {}, "needsMerge": false}`, 9},
	{"aggregate.needsMerge", `{"aggregate": "c", "pipeline": [], "cursor": {}, "needsMerge": null}`, 9},
	{"aggregate.$_generateV2ResumeTokens", `{"aggregate": "c", "pipeline": [], "cursor": {}, "$_generateV2ResumeTokens": false}`, 0},
	{"aggregate.isMapReduceCommand", `{"aggregate": "c", "pipeline": [], "cursor": {}, "isMapReduceCommand": false}`, 0},

	{"count.query", `{"count": "c", "query": {"a": 1}}`, 0},
	{"count.skip", `{"count": "c", "skip": 1}`, 0},
	{"count.skip", `{"count": "c", "skip": 1.5}`, 51024},
	{"count.limit", `{"count": "c", "limit": -1}`, 0},
	{"count.hint", `{"count": "c", "hint": "a_1"}`, 0},
	{"count.collation", `{"count": "c", "collation": {"locale": "en"}}`, 0},
	{"count.fields", `{"count": "c", "fields": {"a": 1}}`, 0},

	{"distinct.key", `{"distinct": "c", "key": "a"}`, 0},
	{"distinct.collation", `{"distinct": "c", "key": "a", "collation": {"locale": "en", "strength": 2}}`, 0},
	{"distinct.collation", `{"distinct": "c", "key": "a", "collation": {"locale": "xx"}}`, 2},
	{"mapReduce.map", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}}`, 0},
	{"mapReduce.map", `{"mapReduce": "c", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}}`, 40414},
	{"mapReduce.reduce", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "out": {"inline": 1}}`, 40414},
	{"mapReduce.out", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }"}`, 40414},
	{"mapReduce.query", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "query": {"a": 1}}`, 0},
	{"mapReduce.sort", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "sort": {"a": 1}}`, 0},
	{"mapReduce.limit", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "limit": 1}`, 0},
	{"mapReduce.limit", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "limit": -1}`, 2},
	{"mapReduce.finalize", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "finalize": "function(k, v) { return v }"}`, 0},
	{"mapReduce.collation", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "collation": {"locale": "en", "strength": 2}}`, 0},
	{"mapReduce.collation", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "collation": {"locale": "xx"}}`, 2},
	{"mapReduce.scope", `{"mapReduce": "c", "map": "function() { emit(x, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "scope": {"x": 1}}`, 0},
	{"mapReduce.jsMode", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "jsMode": true}`, 0},
	{"mapReduce.verbose", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": {"inline": 1}, "verbose": true}`, 0},
	{"mapReduce.bypassDocumentValidation", `{"mapReduce": "c", "map": "function() { emit(1, 1) }", "reduce": "function(k, v) { return 1 }", "out": "o", "bypassDocumentValidation": true}`, 0},
	{"distinct.key", `{"distinct": "c"}`, 40414},
	{"distinct.key", `{"distinct": "c", "key": "a\u0000b"}`, 31032},
	{"distinct.query", `{"distinct": "c", "key": "a", "query": {"a": 1}}`, 0},
	{"distinct.hint", `{"distinct": "c", "key": "a", "hint": {"a": 1}}`, 0},

	{"findAndModify.query", `{"findAndModify": "c", "query": {"a": 1}, "remove": true}`, 0},
	{"findAndModify.sort", `{"findAndModify": "c", "sort": {"a": -1}, "remove": true}`, 0},
	{"findAndModify.fields", `{"findAndModify": "c", "fields": {"a": 1}, "remove": true}`, 0},
	{"findAndModify.update", `{"findAndModify": "c", "update": {"$set": {"b": 1}}}`, 0},
	{"findAndModify.update", `{"findAndModify": "c", "update": [{"$set": {"b": 1}}]}`, 0},
	{"findAndModify.update", `{"findAndModify": "c", "update": 1.5}`, 9},
	{"findAndModify.update", `{"findAndModify": "c", "update": null}`, 9},
	{"findAndModify.remove", `{"findAndModify": "c", "remove": true, "update": {}}`, 9},
	{"findAndModify.new", `{"findAndModify": "c", "update": {"$set": {"b": 1}}, "new": true}`, 0},
	{"findAndModify.upsert", `{"findAndModify": "c", "query": {"a": 9}, "update": {"$set": {"b": 1}}, "upsert": true}`, 0},
	{"findAndModify.arrayFilters", `{"findAndModify": "c", "update": {"$set": {"l.$[e]": 1}}, "arrayFilters": [{"e": 0}]}`, 0},
	{"findAndModify.hint", `{"findAndModify": "c", "update": {"$set": {"b": 1}}, "hint": "a_1"}`, 0},
	{"findAndModify.collation", `{"findAndModify": "c", "update": {"$set": {"b": 1}}, "collation": {"locale": "fr"}}`, 0},
	{"findAndModify.stmtId", `{"findAndModify": "c", "remove": true, "stmtId": "x"}`, 14},
	{"findAndModify.bypassDocumentValidation", `{"findAndModify": "c", "remove": true, "bypassDocumentValidation": true}`, 0},
	{"findAndModify.bypassEmptyTsReplacement", `{"findAndModify": "c", "query": {"_id": 9}, "update": {"t": {"$timestamp": {"t": 0, "i": 0}}}, "upsert": true, "bypassEmptyTsReplacement": true}`, 0},

	{"insert.documents", `{"insert": "c", "documents": [{"a": 3}]}`, 0},
	{"insert.documents", `{"insert": "c"}`, 40414},
	{"insert.documents", `{"insert": "c", "documents": null}`, 10065},
	{"insert.ordered", `{"insert": "c", "documents": [{"_id": 3}, {"_id": 4}], "ordered": false}`, 0},
	{"insert.ordered", `{"insert": "c", "documents": [{"_id": 3}], "ordered": 0}`, 14},
	{"insert.stmtId", `{"insert": "c", "documents": [{"a": 3}], "stmtId": 5}`, 0},
	{"insert.stmtIds", `{"insert": "c", "documents": [{"a": 3}], "stmtIds": [5, 6]}`, 16},
	{"insert.bypassDocumentValidation", `{"insert": "c", "documents": [{"a": 3}], "bypassDocumentValidation": true}`, 0},
	{"insert.bypassEmptyTsReplacement", `{"insert": "c", "documents": [{"t": {"$timestamp": {"t": 0, "i": 0}}}], "bypassEmptyTsReplacement": false}`, 0},
	{"update.updates", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}}]}`, 0},
	{"update.ordered", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}}], "ordered": false}`, 0},
	{"update.stmtId", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}}], "stmtId": 1}`, 0},
	{"update.stmtIds", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}}], "stmtIds": [1]}`, 0},
	{"update.bypassDocumentValidation", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}}], "bypassDocumentValidation": false}`, 0},
	{"update.bypassEmptyTsReplacement", `{"update": "c", "updates": [{"q": {"_id": 8}, "u": {"t": {"$timestamp": {"t": 0, "i": 0}}}, "upsert": true}], "bypassEmptyTsReplacement": true}`, 0},
	{"update.updates.q", `{"update": "c", "updates": [{"u": {"$set": {"b": 1}}}]}`, 40414},
	{"update.updates.u", `{"update": "c", "updates": [{"q": {}}]}`, 40414},
	{"update.updates.u", `{"update": "c", "updates": [{"q": {}, "u": 1}]}`, 9},
	{"update.updates.u", `{"update": "c", "updates": [{"q": {}, "u": null}]}`, 9},
	{"update.updates.upsert", `{"update": "c", "updates": [{"q": {"a": 7}, "u": {"$set": {"b": 1}}, "upsert": true}]}`, 0},
	{"update.updates.upsert", `{"update": "c", "updates": [{"q": {"a": 7}, "u": {"$set": {"b": 1}}, "upsert": 1}]}`, 14},
	{"update.updates.multi", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}, "multi": 1}]}`, 14},
	{"update.updates.multi", `{"update": "c", "updates": [{"q": {}, "u": {"b": 1}, "multi": true}]}`, 9},
	{"update.updates.arrayFilters", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"l.$[e]": 1}}, "arrayFilters": [{"e": 1}]}]}`, 0},
	{"update.updates.hint", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}, "hint": "a_1"}]}`, 0},
	{"update.updates.collation", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}, "collation": {"locale": "simple"}}]}`, 0},
	{"update.updates.upsertSupplied", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}, "upsertSupplied": false}]}`, 0},
	{"update.updates.sampleId", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": 1}}, "sampleId": 1}]}`, 0},
	{"delete.deletes", `{"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}]}`, 0},
	{"delete.ordered", `{"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}], "ordered": true}`, 0},
	{"delete.stmtId", `{"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}], "stmtId": 3}`, 0},
	{"delete.stmtIds", `{"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}], "stmtIds": [{"$numberLong": "3"}]}`, 14},
	{"delete.bypassDocumentValidation", `{"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}], "bypassDocumentValidation": true}`, 0},
	{"delete.bypassEmptyTsReplacement", `{"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}], "bypassEmptyTsReplacement": true}`, 0},
	{"delete.deletes.q", `{"delete": "c", "deletes": [{"limit": 1}]}`, 40414},
	{"delete.deletes.limit", `{"delete": "c", "deletes": [{"q": {}, "limit": 2}]}`, 9},
	{"delete.deletes.limit", `{"delete": "c", "deletes": [{"q": {}, "limit": 42.13}]}`, 9},
	{"delete.deletes.limit", `{"delete": "c", "deletes": [{"q": {}, "limit": "1"}]}`, 0},
	{"delete.deletes.limit", `{"delete": "c", "deletes": [{"q": {}, "limit": {"$numberDecimal": "1"}}]}`, 0},
	{"delete.deletes.hint", `{"delete": "c", "deletes": [{"q": {}, "limit": 0, "hint": {"a": 1}}]}`, 0},
	{"delete.deletes.hint", `{"delete": "c", "deletes": [{"q": {}, "limit": 0, "hint": null}]}`, 9},
	{"delete.deletes.collation", `{"delete": "c", "deletes": [{"q": {}, "limit": 0, "collation": {"locale": "en"}}]}`, 0},

	{"create.capped", `{"create": "d", "capped": true, "size": 4096}`, 0},
	{"create.collation", `{"create": "d2", "collation": {"locale": "en", "strength": 2}}`, 0},
	{"create.collation", `{"create": "d3", "collation": {"locale": "ja", "strength": 4, "alternate": "shifted"}}`, 238},
	// https://www.mongodb.com/docs/v7.0/core/clustered-collections/
	{"create.timeseries", `{"create": "ts1", "timeseries": {"timeField": "t", "metaField": "m"}}`, 0},
	{"create.timeseries", `{"create": "ts2", "timeseries": {"timeField": "t", "granularity": "days"}}`, 2},
	{"create.clusteredIndex", `{"create": "cl1", "clusteredIndex": {"key": {"_id": 1}, "unique": true}}`, 0},
	{"create.clusteredIndex", `{"create": "cl2", "clusteredIndex": {"key": {"_id": 1}, "unique": false}}`, 5979700},
	{"create.clusteredIndex", `{"create": "cl3", "clusteredIndex": {"key": {"a": 1}, "unique": true}}`, 197},
	{"create.clusteredIndex", `{"create": "cl4", "clusteredIndex": {"key": {"_id": 1}}}`, 40414},
	{"create.clusteredIndex", `{"create": "cl5", "clusteredIndex": {"key": {"_id": 1}, "unique": true, "bogus": 1}}`, 40415},
	{"rotateCertificates.message", `{"rotateCertificates": 1, "message": "new certificates"}`, 0},
	{"rotateCertificates.message", `{"rotateCertificates": 1, "message": 1}`, 14},
	{"create.clusteredIndex", `{"create": "cl6", "clusteredIndex": true}`, 5979703},
	{"create.clusteredIndex", `{"create": "cl7", "clusteredIndex": false}`, 0},
	{"create.clusteredIndex", `{"create": "cl8", "clusteredIndex": "yes"}`, 14},
	{"create.clusteredIndex", `{"create": "cl9", "clusteredIndex": true, "timeseries": {"timeField": "t"}}`, 72},
	{"create.clusteredIndex", `{"create": "system.buckets.cl1", "clusteredIndex": true, "timeseries": {"timeField": "t"}}`, 0},
	{"create.clusteredIndex", `{"create": "system.buckets.cl2", "clusteredIndex": false, "timeseries": {"timeField": "t"}}`, 238},
	{"create.clusteredIndex", `{"create": "system.buckets.cl3", "clusteredIndex": {"key": {"_id": 1}, "unique": true}, "timeseries": {"timeField": "t"}}`, 5979703},
	{"create.clusteredIndex", `{"create": "system.buckets.cl4", "timeseries": {"timeField": "t"}}`, 238},
	{"create.capped", `{"create": "d", "capped": true}`, 72},
	{"create.size", `{"create": "d", "capped": true, "size": 0}`, 51024},
	{"create.max", `{"create": "d", "capped": true, "size": 4096, "max": 10}`, 0},
	{"create.autoIndexId", `{"create": "d", "autoIndexId": false}`, 50001},
	{"create.autoIndexId", `{"create": "d", "autoIndexId": true}`, 0},
	{"create.temp", `{"create": "d", "temp": false}`, 0},
	{"create.flags", `{"create": "d", "flags": 1}`, 0},
	{"create.storageEngine", `{"create": "d", "storageEngine": {"pebble": {}}}`, 0},
	{"create.indexOptionDefaults", `{"create": "d", "indexOptionDefaults": {}}`, 0},
	{"create.indexOptionDefaults.storageEngine", `{"create": "d", "indexOptionDefaults": {"storageEngine": {"pebble": {}}}}`, 0},
	{"create.indexOptionDefaults.storageEngine", `{"create": "d", "indexOptionDefaults": {"other": 1}}`, 40415},
	{"create.changeStreamPreAndPostImages", `{"create": "d", "changeStreamPreAndPostImages": {"enabled": true}}`, 0},
	{"create.changeStreamPreAndPostImages", `{"create": "d", "changeStreamPreAndPostImages": true}`, 14},
	{"create.changeStreamPreAndPostImages.enabled", `{"create": "d", "changeStreamPreAndPostImages": {}}`, 40414},
	{"create.changeStreamPreAndPostImages.enabled", `{"create": "d", "changeStreamPreAndPostImages": {"enabled": false, "x": 1}}`, 40415},
	{"create.changeStreamPreAndPostImages.enabled", `{"create": "d", "changeStreamPreAndPostImages": {"enabled": 1}}`, 14},
	{"collMod.changeStreamPreAndPostImages", `{"collMod": "c", "changeStreamPreAndPostImages": {"enabled": true}}`, 0},
	{"collMod.changeStreamPreAndPostImages.enabled", `{"collMod": "c", "changeStreamPreAndPostImages": {}}`, 40414},
	{"collMod.changeStreamPreAndPostImages.enabled", `{"collMod": "c", "changeStreamPreAndPostImages": {"enabled": 1}}`, 14},
	{"create.validationLevel", `{"create": "d", "validationLevel": "moderate"}`, 0},
	{"create.validationLevel", `{"create": "d", "validationLevel": "nope"}`, 2},
	{"create.validationAction", `{"create": "d", "validationAction": "warn"}`, 0},
	{"create.validator", `{"create": "v1", "validator": {"a": {"$gt": 1}}}`, 0},
	{"create.validator", `{"create": "v2", "validator": {"a": {"$bogus": 1}}}`, 2},
	{"create.idIndex", `{"create": "d", "idIndex": {"key": {"_id": 1}, "name": "_id_"}}`, 0},
	{"create.idIndex", `{"create": "d", "idIndex": {"key": {"a": 1}, "name": "_id_"}}`, 2},
	{"create.idIndex", `{"create": "d1", "idIndex": {"v": 1, "key": {"_id": 1}, "name": "_id_"}}`, 0},
	{"create.idIndex", `{"create": "d2", "idIndex": {"v": 1, "key": {"_id": 1}, "name": "_id_"}, "collation": {"locale": "fr"}}`, 238},
	{"create.idIndex", `{"create": "d3", "idIndex": {"key": {"_id": 1}, "name": "a_1"}}`, 0},
	{"create.idIndex", `{"create": "d4", "idIndex": {"key": {"_id": 1}, "name": "_id_", "collation": {"locale": "en_US"}}}`, 2},
	{"create.idIndex", `{"create": "d5", "idIndex": {"key": {"_id": 1}, "name": "_id_", "collation": {"locale": "en_US"}}, "collation": {"locale": "fr_CA"}}`, 2},
	{"create.idIndex", `{"create": "d6", "idIndex": {"key": {"_id": 1}, "name": "_id_", "collation": {"locale": "simple"}}, "collation": {"locale": "fr_CA"}}`, 2},
	{"create.idIndex", `{"create": "d7", "idIndex": {"key": {"_id": 1}, "name": "_id_", "collation": {"locale": "en_US"}}, "collation": {"locale": "en_US", "strength": 3}}`, 0},
	{"create.idIndex", `{"create": "d8", "idIndex": {"key": {"_id": 1}, "name": "_id_", "collation": {"locale": "simple"}}}`, 0},

	{"listCollections.filter", `{"listCollections": 1, "filter": {"name": "c"}}`, 0},
	{"listCollections.nameOnly", `{"listCollections": 1, "nameOnly": true}`, 0},
	{"listCollections.cursor", `{"listCollections": 1, "cursor": {}}`, 0},
	{"listCollections.cursor.batchSize", `{"listCollections": 1, "cursor": {"batchSize": 0}}`, 0},
	{"listCollections.authorizedCollections", `{"listCollections": 1, "authorizedCollections": true}`, 0},
	{"listCollections.includePendingDrops", `{"listCollections": 1, "includePendingDrops": true}`, 0},
	{"listIndexes.cursor", `{"listIndexes": "c", "cursor": {"batchSize": 1}}`, 0},
	{"listIndexes.cursor.batchSize", `{"listIndexes": "c", "cursor": {"batchSize": "x"}}`, 14},
	{"renameCollection.to", `{"renameCollection": "test.c", "to": "test.e"}`, 0},
	{"renameCollection.to", `{"renameCollection": "test.c"}`, 40414},
	{"renameCollection.dropTarget", `{"renameCollection": "test.c", "to": "test.e", "dropTarget": true}`, 0},
	{"renameCollection.dropTarget", `{"renameCollection": "test.c", "to": "test.e", "dropTarget": 1}`, 14},
	{"renameCollection.stayTemp", `{"renameCollection": "test.c", "to": "test.e", "stayTemp": true}`, 0},
	{"FindCommandRequest.collectionUUID", `{"find": "c", "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"FindCommandRequest.collectionUUID", `{"find": "c", "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAA=", "subType": "04"}}}`, 207},
	{"FindCommandRequest.collectionUUID", `{"find": "c", "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "00"}}}`, 14},
	{"FindCommandRequest.collectionUUID", `{"find": "c", "collectionUUID": null}`, 0},
	{"aggregate.collectionUUID", `{"aggregate": "c", "pipeline": [], "cursor": {}, "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"aggregate.collectionUUID", `{"aggregate": 1, "pipeline": [{"$documents": []}], "cursor": {}, "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 4928901},
	{"aggregate.collectionUUID", `{"aggregate": "c", "pipeline": [{"$changeStream": {}}], "cursor": {}, "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 4928900},
	{"insert.collectionUUID", `{"insert": "c", "documents": [{}], "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"update.collectionUUID", `{"update": "c", "updates": [{"q": {}, "u": {"$set": {"z": 1}}}], "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"delete.collectionUUID", `{"delete": "c", "deletes": [{"q": {"zz": 1}, "limit": 0}], "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"createIndexes.collectionUUID", `{"createIndexes": "c", "indexes": [{"key": {"z": 1}, "name": "z_1"}], "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"dropIndexes.collectionUUID", `{"dropIndexes": "c", "index": "nope", "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"collMod.collectionUUID", `{"collMod": "c", "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"drop.collectionUUID", `{"drop": "c", "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"renameCollection.collectionUUID", `{"renameCollection": "test.c", "to": "test.e", "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"renameCollection.collectionUUID", `{"renameCollection": "test.c", "to": "other.e", "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 72},
	{"renameCollection.dropTarget", `{"renameCollection": "test.c", "to": "test.e", "dropTarget": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"renameCollection.dropTarget", `{"renameCollection": "test.c", "to": "test.e", "dropTarget": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "00"}}}`, 207},
	{"shardCollection.collectionUUID", `{"shardCollection": "test.c", "key": {"_id": 1}, "collectionUUID": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`, 361},
	{"applyOps", `{"applyOps": [], "unknownField": 1}`, 0},
	{"cloneCollectionAsCapped", `{"cloneCollectionAsCapped": "c", "toCollection": "d", "size": 4096, "unknownField": 1}`, 0},
	{"cloneCollectionAsCapped.toCollection", `{"cloneCollectionAsCapped": "c", "toCollection": 1, "size": 4096}`, 14},
	{"cloneCollectionAsCapped.size", `{"cloneCollectionAsCapped": "c", "toCollection": "d", "size": 0}`, 72},
	{"convertToCapped", `{"convertToCapped": "c", "size": 4096, "unknownField": 1}`, 0},
	{"convertToCapped.size", `{"convertToCapped": "c", "size": 1e20}`, 2},
	{"applyOps.bypassDocumentValidation", `{"applyOps": [{"op": "i", "ns": "test.c", "o": {"_id": 3}}], "bypassDocumentValidation": true}`, 0},
	{"applyOps.alwaysUpsert", `{"applyOps": [], "alwaysUpsert": false}`, 0},
	{"applyOps.alwaysUpsert", `{"applyOps": [], "alwaysUpsert": true}`, 6711601},
	{"applyOps.alwaysUpsert", `{"applyOps": [], "alwaysUpsert": 1}`, 14},
	{"applyOps.preCondition", `{"applyOps": [], "preCondition": []}`, 6711600},
	{"applyOps.prepare", `{"applyOps": [], "prepare": false}`, 2},
	{"applyOps.partialTxn", `{"applyOps": [], "partialTxn": false}`, 31056},
	{"applyOps.count", `{"applyOps": [], "count": 2}`, 31240},
	{"applyOps.count", `{"applyOps": [], "count": "x"}`, 14},
	{"applyOps.allowAtomic", `{"applyOps": [], "allowAtomic": "any type"}`, 0},
	{"collMod.index", `{"collMod": "c", "index": {"name": "a_1", "hidden": true}}`, 0},
	{"collMod.validator", `{"collMod": "c", "validator": {"$jsonSchema": {"required": ["a"]}}}`, 0},
	{"collMod.validator", `{"collMod": "c", "validator": {"$jsonSchema": {"bogus": 1}}}`, 9},
	{"collMod.validationLevel", `{"collMod": "c", "validationLevel": "off"}`, 0},
	{"collMod.validationLevel", `{"collMod": "c", "validationLevel": "never"}`, 2},
	{"collMod.validationAction", `{"collMod": "c", "validationAction": "warn"}`, 0},
	{"collMod.validationAction", `{"collMod": "c", "validationAction": "explode"}`, 2},
	{"collMod.index.name", `{"collMod": "c", "index": {"name": "nope", "hidden": true}}`, 27},
	{"collMod.index.prepareUnique", `{"collMod": "c", "index": {"name": "a_1", "prepareUnique": true}}`, 0},
	{"collMod.index.prepareUnique", `{"collMod": "c", "index": {"name": "a_1", "prepareUnique": true, "hidden": true}}`, 72},
	{"collMod.index.unique", `{"collMod": "c", "index": {"name": "a_1", "unique": true}}`, 72},
	{"collMod.index.unique", `{"collMod": "c", "index": {"name": "a_1", "unique": false}}`, 2},
	{"collMod.dryRun", `{"collMod": "c", "index": {"name": "a_1", "hidden": true}, "dryRun": true}`, 72},
	{"collMod.dryRun", `{"collMod": "c", "dryRun": true}`, 72},
	{"collMod.cappedSize", `{"collMod": "c", "cappedSize": 4096}`, 72},
	{"collMod.cappedSize", `{"collMod": "c", "cappedSize": "x"}`, 14},
	{"collMod.cappedMax", `{"collMod": "c", "cappedMax": 10}`, 72},
	{"collMod.index.forceNonUnique", `{"collMod": "c", "index": {"name": "a_1", "forceNonUnique": true}}`, 0},
	{"collMod.index.forceNonUnique", `{"collMod": "c", "index": {"name": "a_1", "forceNonUnique": false}}`, 2},
	{"collMod.index.forceNonUnique", `{"collMod": "c", "index": {"name": "a_1", "forceNonUnique": true, "unique": true}}`, 72},
	{"collMod.timeseries", `{"collMod": "c", "timeseries": {"granularity": "hours"}}`, 72},
	{"collMod.timeseriesBucketsMayHaveMixedSchemaData", `{"collMod": "c", "timeseriesBucketsMayHaveMixedSchemaData": true}`, 72},
	{"collMod.timeseriesBucketsMayHaveMixedSchemaData", `{"collMod": "c", "timeseriesBucketsMayHaveMixedSchemaData": "yes"}`, 14},
	{"folioAdvise.db", `{"folioAdvise": 1, "db": "test"}`, 0},
	{"folioAdvise.reset", `{"folioAdvise": 1, "reset": true}`, 0},
	{"folioAdvise.reset", `{"folioAdvise": 1, "reset": "yes"}`, 14},
	{"collMod.expireAfterSeconds", `{"collMod": "c", "expireAfterSeconds": 60}`, 72},
	{"collMod.index.keyPattern", `{"collMod": "c", "index": {"keyPattern": {"a": 1}, "hidden": false}}`, 0},
	{"collMod.index.hidden", `{"collMod": "c", "index": {"name": "a_1", "hidden": 1}}`, 0},
	{"collMod.viewOn", `{"collMod": "c", "viewOn": "d", "pipeline": []}`, 72},
	{"collMod.viewOn", `{"collMod": "c", "viewOn": 1}`, 14},
	{"collMod.pipeline", `{"collMod": "c", "pipeline": {}}`, 14},
	{"create.viewOn", `{"create": "v", "viewOn": "c"}`, 0},
	{"create.expireAfterSeconds", `{"create": "e1", "clusteredIndex": {"key": {"_id": 1}, "unique": true}, "expireAfterSeconds": 60}`, 0},
	{"create.expireAfterSeconds", `{"create": "e2", "expireAfterSeconds": 60}`, 72},
	{"create.expireAfterSeconds", `{"create": "e3", "clusteredIndex": {"key": {"_id": 1}, "unique": true}, "expireAfterSeconds": "x"}`, 14},
	{"create.viewOn", `{"create": "v2", "viewOn": 1}`, 14},
	{"create.pipeline", `{"create": "v3", "viewOn": "c", "pipeline": [{"$match": {}}]}`, 0},
	{"create.pipeline", `{"create": "v4", "pipeline": []}`, 72},
	{"collMod.index.expireAfterSeconds", `{"collMod": "c", "index": {"name": "a_1", "expireAfterSeconds": -1}}`, 72},

	{"getMore.collection", `{"getMore": {"$numberLong": "1"}}`, 40414},
	{"getMore.collection", `{"getMore": {"$numberLong": "1"}, "collection": "c"}`, 43},
	{"getMore.batchSize", `{"getMore": {"$numberLong": "1"}, "collection": "c", "batchSize": -1}`, 51024},
	{"getMore.batchSize", `{"getMore": {"$numberLong": "1"}, "collection": "c", "batchSize": 0}`, 43},
	{"getMore.term", `{"getMore": {"$numberLong": "1"}, "collection": "c", "term": 1}`, 43},
	{"getMore.lastKnownCommittedOpTime", `{"getMore": {"$numberLong": "1"}, "collection": "c", "lastKnownCommittedOpTime": {}}`, 43},
	{"killCursors.cursors", `{"killCursors": "c", "cursors": [{"$numberLong": "1"}]}`, 0},
	{"killCursors.cursors", `{"killCursors": "c", "cursors": [1]}`, 14},
	{"listDatabases.filter", `{"listDatabases": 1, "filter": {"name": "test"}}`, 0},
	{"listDatabases.nameOnly", `{"listDatabases": 1, "nameOnly": true}`, 0},
	{"listDatabases.authorizedDatabases", `{"listDatabases": 1, "authorizedDatabases": true}`, 0},
	{"explain.verbosity", `{"explain": {"find": "c"}, "verbosity": "executionStats"}`, 0},
	{"explain.verbosity", `{"explain": {"find": "c"}, "verbosity": "nope"}`, 9},

	{"dropConnections.hostAndPort", `{"dropConnections": 1, "hostAndPort": ["h:27017"]}`, 0},
	{"dropConnections.hostAndPort", `{"dropConnections": 1, "hostAndPort": ["h:0"]}`, 9},
	{"hello.helloOk", `{"hello": 1, "helloOk": true}`, 0},
	{"hello.compression", `{"hello": 1, "compression": ["zstd"]}`, 0},
	{"hello.client", `{"hello": 1, "client": {"driver": {"name": "x", "version": "1"}, "os": {"type": "Linux"}}}`, 0},
	{"hello.saslSupportedMechs", `{"hello": 1, "saslSupportedMechs": "admin.u"}`, 0},
	{"hello.saslSupportedMechs", `{"hello": 1, "saslSupportedMechs": "admin"}`, 2},
	{"hello.saslSupportedMechs", `{"hello": 1, "saslSupportedMechs": "admin."}`, 0},
	{"hello.speculativeAuthenticate", `{"hello": 1, "speculativeAuthenticate": {}}`, 0},
	{"hello.forShell", `{"hello": 1, "forShell": true}`, 0},
	{"hello.hostInfo", `{"hello": 1, "hostInfo": "h:1"}`, 0},
	{"hello.hangUpOnStepDown", `{"hello": 1, "hangUpOnStepDown": false}`, 0},
	{"hello.internalClient", `{"hello": 1, "internalClient": {}}`, 0},
	{"hello.loadBalanced", `{"hello": 1, "loadBalanced": false}`, 0},
	{"hello.topologyVersion", `{"hello": 1, "topologyVersion": {"processId": {"$oid": "000000000000000000000001"}, "counter": {"$numberLong": "7"}}, "maxAwaitTimeMS": 0}`, 0},
	{"hello.topologyVersion", `{"hello": 1, "topologyVersion": "x", "maxAwaitTimeMS": 0}`, 14},
	{"hello.topologyVersion", `{"hello": 1, "topologyVersion": {"processId": {"$oid": "000000000000000000000001"}, "counter": {"$numberLong": "7"}}}`, 31368},
	{"hello.topologyVersion.processId", `{"hello": 1, "topologyVersion": {"processId": "x", "counter": {"$numberLong": "7"}}, "maxAwaitTimeMS": 0}`, 14},
	{"hello.topologyVersion.processId", `{"hello": 1, "topologyVersion": {"counter": {"$numberLong": "7"}}, "maxAwaitTimeMS": 0}`, 40414},
	{"hello.topologyVersion.counter", `{"hello": 1, "topologyVersion": {"processId": {"$oid": "000000000000000000000001"}, "counter": 7}, "maxAwaitTimeMS": 0}`, 14},
	{"hello.topologyVersion.counter", `{"hello": 1, "topologyVersion": {"processId": {"$oid": "000000000000000000000001"}, "counter": {"$numberLong": "-1"}}, "maxAwaitTimeMS": 0}`, 31372},
	{"hello.maxAwaitTimeMS", `{"hello": 1, "maxAwaitTimeMS": 5}`, 31368},
	{"hello.maxAwaitTimeMS", `{"hello": 1, "topologyVersion": {"processId": {"$oid": "000000000000000000000001"}, "counter": {"$numberLong": "7"}}, "maxAwaitTimeMS": -1}`, 51024},
	{"hello.maxAwaitTimeMS", `{"hello": 1, "topologyVersion": {"processId": {"$oid": "000000000000000000000001"}, "counter": {"$numberLong": "7"}}, "maxAwaitTimeMS": "x"}`, 14},
	{"hello", `{"hello": 1, "unknownField": 1}`, 0},
	{"hello", `{"isMaster": 1, "unknownField": 1}`, 0},
	{"hello", `{"ismaster": 1, "unknownField": 1}`, 0},
	{"hello", `{"hello": 1, "backpressure": "2"}`, 0},
	{"connectionStatus.showPrivileges", `{"connectionStatus": 1, "showPrivileges": true}`, 0},
	{"createIndexes.indexes", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}]}`, 0},
	{"createIndexes.indexes", `{"createIndexes": "c", "indexes": []}`, 2},
	{"createIndexes.indexes", `{"createIndexes": "c", "indexes": null}`, 10065},
	{"createIndexes.indexes", `{"createIndexes": "c"}`, 40414},
	{"createIndexes.ignoreUnknownIndexOptions", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1", "x": 1}], "ignoreUnknownIndexOptions": true}`, 0},
	{"createIndexes.commitQuorum", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}], "commitQuorum": "majority"}`, 0},
	{"createIndexes.commitQuorum", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}], "commitQuorum": 1}`, 0},
	{"createIndexes.commitQuorum", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}], "commitQuorum": 2}`, 278},
	{"createIndexes.commitQuorum", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}], "commitQuorum": 51}`, 9},
	{"createIndexes.commitQuorum", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}], "commitQuorum": true}`, 9},
	{"createIndexes.commitQuorum", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}], "commitQuorum": null}`, 9},
	{"createIndexes.commitQuorum", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}], "commitQuorum": "tag"}`, 79},
	{"createIndexes.v", `{"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "b_1"}], "v": 2}`, 0},
	{"dropIndexes.index", `{"dropIndexes": "c", "index": "a_1"}`, 0},
	{"dropIndexes.index", `{"dropIndexes": "c", "index": ["a_1", 1]}`, 14},
	{"dropIndexes.index", `{"dropIndexes": "c"}`, 40414},
	{"killOp.op", `{"killOp": 1, "op": 12345}`, 0},
	{"configureFailPoint.mode", `{"configureFailPoint": "failCommand", "mode": "off"}`, 0},
	{"configureFailPoint.data", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": 1}`, 14},
	{"failCommand.data.failCommands", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": "find"}}`, 14},
	{"failCommand.data.closeConnection", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "closeConnection": "yes"}}`, 14},
	{"failCommand.data.errorCode", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "errorCode": "91"}}`, 14},
	{"failCommand.data.errorLabels", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "errorLabels": [1]}}`, 14},
	{"failCommand.data.writeConcernError", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["insert"], "writeConcernError": 1}}`, 14},
	{"failCommand.data.blockConnection", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "blockConnection": true}}`, 2},
	{"failCommand.data.blockTimeMS", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "blockTimeMS": "x"}}`, 14},
	{"failCommand.data.appName", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "appName": 1}}`, 14},
	{"failCommand.data.failInternalCommands", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "failInternalCommands": "x"}}`, 14},
	{"failCommand.data.errorExtraInfo", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "errorExtraInfo": {}}}`, 238},
	{"onPrimaryTransactionalWrite.data.closeConnection", `{"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "off", "data": {"closeConnection": "no"}}`, 14},
	{"onPrimaryTransactionalWrite.data.failBeforeCommitExceptionCode", `{"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "off", "data": {"failBeforeCommitExceptionCode": "1"}}`, 14},
	{"failGetMoreAfterCursorCheckout.data.errorCode", `{"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "alwaysOn", "data": {"errorCode": 6.5}}`, 14},
	{"failGetMoreAfterCursorCheckout.data.closeConnection", `{"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "off", "data": {"closeConnection": "x"}}`, 14},
	{"failGetMoreAfterCursorCheckout.data.appName", `{"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "off", "data": {"appName": 1}}`, 14},
	{"failGetMoreAfterCursorCheckout.data", `{"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "off", "data": {"failCommands": ["getMore"], "errmsg": "x"}}`, 0},
	{"failCommand.data.namespace", `{"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "namespace": "db.c"}}`, 238},
	{"killOp.op", `{"killOp": 1}`, 4},
	{"appendOplogNote.data", `{"appendOplogNote": 1, "data": {"note": 1}}`, 0},
	{"appendOplogNote.data", `{"appendOplogNote": 1}`, 4},
	{"appendOplogNote.data", `{"appendOplogNote": 1, "data": "x"}`, 14},
	{"appendOplogNote.maxClusterTime", `{"appendOplogNote": 1, "data": {}, "maxClusterTime": {"$timestamp": {"t": 1, "i": 1}}}`, 0},
	{"appendOplogNote.maxClusterTime", `{"appendOplogNote": 1, "data": {}, "maxClusterTime": 1}`, 14},
	{"commitTransaction.recoveryToken", `{"commitTransaction": 1, "recoveryToken": {}}`, 125},
	{"abortTransaction.recoveryToken", `{"abortTransaction": 1, "recoveryToken": {}}`, 125},
	{"dbStats.scale", `{"dbStats": 1, "scale": 1024}`, 0},
	{"dbStats.scale", `{"dbStats": 1, "scale": 0}`, 2},
	{"dbStats.freeStorage", `{"dbStats": 1, "freeStorage": 1}`, 0},
	{"collStats.scale", `{"collStats": "c", "scale": 1024}`, 0},
	{"collStats.scale", `{"collStats": "c", "scale": null}`, 0},
	{"getParameter.allParameters", `{"getParameter": {"allParameters": 1}}`, 0},
	{"getParameter.allParameters", `{"getParameter": {"allParameters": "1"}}`, 14},
	{"getParameter.showDetails", `{"getParameter": {"showDetails": true}, "quiet": 1}`, 0},
	{"getParameter.showDetails", `{"getParameter": {"showDetails": "1"}, "quiet": 1}`, 14},
	{"dbStats.scale", `{"dbStats": 1, "scale": null}`, 0},
	{"collStats.verbose", `{"collStats": "c", "verbose": true}`, 0},
	{"collStats.waitForLock", `{"collStats": "c", "waitForLock": false}`, 0},
	{"collStats.numericOnly", `{"collStats": "c", "numericOnly": true}`, 0},
	{"collStats.validationLevel", `{"collStats": "c", "validationLevel": "off"}`, 0},
	{"collStats.validationLevel", `{"collStats": "c", "validationLevel": "moderate"}`, 0},
	{"collStats.validationLevel", `{"collStats": "c", "validationLevel": "lax"}`, 2},
	{"collStats.validationLevel", `{"collStats": "c", "validationLevel": 1}`, 14},
	{"validate.full", `{"validate": "c", "full": true}`, 0},
	{"validate.scandata", `{"validate": "c", "scandata": true}`, 0},
	{"validate.background", `{"validate": "c", "background": false}`, 0},
	{"validate.repair", `{"validate": "c", "repair": false}`, 0},
	{"validate.metadata", `{"validate": "c", "metadata": false}`, 0},
	{"validate.checkBSONConformance", `{"validate": "c", "checkBSONConformance": false}`, 0},
	{"validate.enforceFastCount", `{"validate": "c", "enforceFastCount": false}`, 0},
	{"validate.enforceFastCount", `{"validate": "c", "enforceFastCount": true}`, 238},
	{"validate.full", `{"validate": "c", "full": "yes"}`, 0},
	{"validate.repair", `{"validate": "c", "repair": "yes"}`, 72},
	{"validate", `{"validate": "c", "noSuchOption": 1}`, 0},
	{"validate", `{"validate": "c", "full": "yes", "background": 1}`, 72},
	{"validate.checkBSONConformance", `{"validate": "c", "checkBSONConformance": false, "full": true}`, 72},
	{"validate.checkBSONConformance", `{"validate": "c", "checkBSONConformance": 0, "full": false}`, 0},
	{"currentOp", `{"currentOp": 1, "ns": "test.none"}`, 0},
	{"currentOp.$ownOps", `{"currentOp": 1, "$ownOps": true}`, 0},
	{"currentOp.$truncateOps", `{"currentOp": 1, "$truncateOps": false}`, 0},
	{"currentOp.$all", `{"currentOp": 1, "$all": false}`, 0},
	{"serverStatus", `{"serverStatus": 1, "metrics": 0}`, 0},
	{"createUser.pwd", `{"createUser": "u1", "pwd": "p", "roles": []}`, 0},
	{"createUser.pwd", `{"createUser": "u1", "pwd": "", "roles": []}`, 50687},
	{"createUser.pwd", `{"createUser": "u2", "pwd": "", "roles": [], "mechanisms": ["SCRAM-SHA-1"]}`, 0},
	{"createUser.customData", `{"createUser": "u1", "pwd": "p", "roles": [], "customData": {"a": 1}}`, 0},
	{"createUser.roles", `{"createUser": "u1", "pwd": "p", "roles": ["nosuch"]}`, 31},
	{"createUser.roles", `{"createUser": "u1", "pwd": "p", "roles": null}`, 10065},
	{"createUser.mechanisms", `{"createUser": "u1", "pwd": "p", "roles": [], "mechanisms": ["SCRAM-SHA-256"]}`, 0},
	{"createUser.mechanisms", `{"createUser": "u1", "pwd": "p", "roles": [], "mechanisms": ["PLAIN"]}`, 2},
	{"createUser.mechanisms", `{"createUser": "u1", "pwd": "p", "roles": [], "mechanisms": [1]}`, 14},
	{"createUser.digestPassword", `{"createUser": "u1", "pwd": "p", "roles": [], "digestPassword": true}`, 0},
	{"createUser.digestPassword", `{"createUser": "u1", "pwd": "p", "roles": [], "digestPassword": false}`, 2},
	{"createUser.digestPassword", `{"createUser": "u3", "pwd": "p", "roles": [], "digestPassword": false, "mechanisms": ["SCRAM-SHA-1"]}`, 0},
	{"createUser.authenticationRestrictions", `{"createUser": "u1", "pwd": "p", "roles": [], "authenticationRestrictions": []}`, 0},
	{"createUser.authenticationRestrictions", `{"createUser": "u1", "pwd": "p", "roles": [], "authenticationRestrictions": [{"clientSource": ["127.0.0.1"]}]}`, 238},
	{"updateUser.pwd", `{"updateUser": "nosuch", "pwd": "p"}`, 11},
	{"updateUser.customData", `{"updateUser": "nosuch", "customData": {}}`, 11},
	{"updateUser.roles", `{"updateUser": "nosuch", "roles": ["read"]}`, 11},
	{"updateUser.mechanisms", `{"updateUser": "nosuch", "mechanisms": ["bad"]}`, 11},
	{"updateUser.mechanisms", `{"updateUser": "nosuch", "pwd": "p", "mechanisms": ["bad"]}`, 2},
	{"updateUser.digestPassword", `{"updateUser": "nosuch", "pwd": "p", "digestPassword": false}`, 2},
	{"updateUser.digestPassword", `{"updateUser": "nosuch", "pwd": "p", "digestPassword": false, "mechanisms": ["SCRAM-SHA-1"]}`, 11},
	{"updateUser.authenticationRestrictions", `{"updateUser": "nosuch", "authenticationRestrictions": [{"clientSource": ["127.0.0.1"]}]}`, 238},
	{"grantRolesToUser.roles", `{"grantRolesToUser": "nosuch", "roles": ["read"]}`, 11},
	{"revokeRolesFromUser.roles", `{"revokeRolesFromUser": "nosuch", "roles": ["read"]}`, 11},
	{"createRole.privileges", `{"createRole": "r1", "privileges": [{"resource": {"db": "test", "collection": ""}, "actions": ["find"]}], "roles": []}`, 0},
	{"createRole.roles", `{"createRole": "r1", "privileges": [], "roles": ["read"]}`, 0},
	{"createRole.roles", `{"createRole": "r1", "privileges": []}`, 40414},
	{"createRole.authenticationRestrictions", `{"createRole": "r1", "privileges": [], "roles": [], "authenticationRestrictions": []}`, 0},
	{"updateRole.privileges", `{"updateRole": "nosuch", "privileges": []}`, 31},
	{"updateRole.roles", `{"updateRole": "nosuch", "roles": []}`, 31},
	{"updateRole.authenticationRestrictions", `{"updateRole": "nosuch", "roles": [], "authenticationRestrictions": [{"clientSource": ["127.0.0.1"]}]}`, 238},
	{"grantPrivilegesToRole.privileges", `{"grantPrivilegesToRole": "nosuch", "privileges": []}`, 2},
	{"revokePrivilegesFromRole.privileges", `{"revokePrivilegesFromRole": "nosuch", "privileges": []}`, 2},
	{"grantRolesToRole.roles", `{"grantRolesToRole": "nosuch", "roles": ["read"]}`, 31},
	{"revokeRolesFromRole.roles", `{"revokeRolesFromRole": "nosuch", "roles": ["read"]}`, 31},
	{"usersInfo.showPrivileges", `{"usersInfo": "nosuch", "showPrivileges": true}`, 0},
	{"usersInfo.showPrivileges", `{"usersInfo": 1, "showPrivileges": true}`, 20},
	{"usersInfo.showPrivileges", `{"usersInfo": 1, "showPrivileges": "asUserFragment"}`, 14},
	{"usersInfo.showCredentials", `{"usersInfo": 1, "showCredentials": true}`, 0},
	{"usersInfo.showCustomData", `{"usersInfo": 1, "showCustomData": false}`, 0},
	{"usersInfo.showAuthenticationRestrictions", `{"usersInfo": "nosuch", "showAuthenticationRestrictions": true}`, 0},
	{"usersInfo.showAuthenticationRestrictions", `{"usersInfo": 1, "showAuthenticationRestrictions": true}`, 20},
	{"usersInfo.filter", `{"usersInfo": 1, "filter": {"user": "x"}}`, 0},
	{"rolesInfo.showPrivileges", `{"rolesInfo": 1, "showPrivileges": true}`, 0},
	{"rolesInfo.showPrivileges", `{"rolesInfo": "read", "showPrivileges": "asUserFragment"}`, 0},
	{"rolesInfo.showPrivileges", `{"rolesInfo": 1, "showPrivileges": "asUserFragment"}`, 20},
	{"rolesInfo.showBuiltinRoles", `{"rolesInfo": 1, "showBuiltinRoles": true}`, 0},
	{"rolesInfo.showAuthenticationRestrictions", `{"rolesInfo": 1, "showAuthenticationRestrictions": true}`, 0},
	{"saslStart.mechanism", `{"saslStart": 1, "mechanism": "PLAIN", "payload": ""}`, 334},
	{"saslStart.payload", `{"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": "x"}`, 18},
	{"saslStart.options", `{"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": "x", "options": {"skipEmptyExchange": true}}`, 18},
	{"saslStart.options", `{"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": "x", "options": {"skipEmptyExchange": "x"}}`, 18},
	{"saslStart.mechanism", `{"saslStart": 1, "mechanism": "UNKNOWN", "payload": "x"}`, 334},
	{"saslStart.db", `{"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": "x", "db": "test"}`, 18},
	{"saslStart.autoAuthorize", `{"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": "x", "autoAuthorize": 1}`, 18},
	{"saslContinue.conversationId", `{"saslContinue": 1, "conversationId": 1, "payload": "x"}`, 17},
	{"saslContinue.payload", `{"saslContinue": 1, "payload": 5}`, 14},
	{"authenticate.mechanism", `{"authenticate": 1, "mechanism": "MONGODB-X509"}`, 18},
	{"authenticate.mechanism", `{"authenticate": 1, "mechanism": "PLAIN"}`, 334},
	{"authenticate.user", `{"authenticate": 1, "mechanism": "MONGODB-X509", "user": "u"}`, 18},
	{"currentOp.$all", `{"currentOp": 1, "$all": true}`, 0},
	{"update.let", `{"update": "c", "updates": [{"q": {"$expr": {"$eq": ["$a", "$$x"]}}, "u": {"$set": {"b": 1}}}], "let": {"x": 1}}`, 0},
	{"update.updates.c", `{"update": "c", "updates": [{"q": {}, "u": [{"$set": {"b": "$$k"}}], "c": {"k": 1}}]}`, 0},
	{"delete.let", `{"delete": "c", "deletes": [{"q": {"$expr": {"$eq": ["$a", "$$x"]}}, "limit": 1}], "let": {"x": 1}}`, 0},
	{"findAndModify.let", `{"findAndModify": "c", "query": {"$expr": {"$eq": ["$a", "$$x"]}}, "remove": true, "let": {"x": 1}}`, 0},
	{"findAndModify.let", `{"findAndModify": "c", "query": {}, "remove": true, "let": {"X": 1}}`, 9},
	{"findAndModify.let", `{"findAndModify": "c", "query": {}, "remove": true, "let": {"NOW": 1}}`, 4738901},
	{"planCacheClear.query", `{"planCacheClear": "c", "query": {"a": 1}}`, 0},
	{"planCacheClear.sort", `{"planCacheClear": "c", "query": {"a": 1}, "sort": {"a": 1}}`, 0},
	{"planCacheClear.sort", `{"planCacheClear": "c", "sort": {"a": 1}}`, 2},
	{"planCacheClear.projection", `{"planCacheClear": "c", "query": {"a": 1}, "projection": {"a": 1}}`, 0},
	{"planCacheClear.collation", `{"planCacheClear": "c", "query": {"a": 1}, "collation": {"locale": "fr"}}`, 0},
	{"planCacheClear.collation", `{"planCacheClear": "c", "collation": {"locale": "fr"}}`, 2},
	{"planCacheClear.collation", `{"planCacheClear": "c", "query": {}, "collation": {}}`, 2},
	{"planCacheClear.collation", `{"planCacheClear": "c", "query": {}, "collation": 1}`, 2},
	{"planCacheClear.query", `{"planCacheClear": "c", "query": 1}`, 2},
	{"planCacheSetFilter.collation", `{"planCacheSetFilter": "c", "query": {"a": 1}, "collation": {"locale": "fr"}, "indexes": ["a_1"]}`, 0},
	{"planCacheClearFilters.collation", `{"planCacheClearFilters": "c", "query": {"a": 1}, "collation": {"locale": "fr"}}`, 0},
	{"planCacheSetFilter.query", `{"planCacheSetFilter": "c", "indexes": ["a_1"]}`, 2},
	{"planCacheSetFilter.sort", `{"planCacheSetFilter": "c", "query": {"a": 1}, "sort": {"a": 1}, "indexes": ["a_1"]}`, 0},
	{"planCacheSetFilter.projection", `{"planCacheSetFilter": "c", "query": {"a": 1}, "projection": {"a": 1}, "indexes": [{"a": 1}]}`, 0},
	{"planCacheSetFilter.indexes", `{"planCacheSetFilter": "c", "query": {"a": 1}, "indexes": []}`, 2},
	{"planCacheSetFilter.indexes", `{"planCacheSetFilter": "c", "query": {"a": 1}, "indexes": [1]}`, 2},
	{"planCacheClearFilters.query", `{"planCacheClearFilters": "c", "query": {"a": 1}}`, 0},
	{"planCacheClearFilters.sort", `{"planCacheClearFilters": "c", "query": {"a": 1}, "sort": {"a": 1}}`, 0},
	{"planCacheClearFilters.projection", `{"planCacheClearFilters": "c", "projection": {"a": 1}}`, 2},
	{"buildInfo", `{"buildInfo": 1, "unread": 1}`, 0},
	{"ping", `{"ping": 1, "unread": 1}`, 0},
	{"setClusterParameter", `{"setClusterParameter": {"changeStreamOptions": {"preAndPostImages": {"expireAfterSeconds": "off"}}}, "unread": 1}`, 0},
	{"getClusterParameter", `{"getClusterParameter": "*", "unread": 1}`, 0},
	{"whatsmyuri", `{"whatsmyuri": 1, "unread": 1}`, 0},
	{"hostInfo", `{"hostInfo": 1, "unread": 1}`, 0},
	{"getCmdLineOpts", `{"getCmdLineOpts": 1, "unread": 1}`, 0},
	{"listCommands", `{"listCommands": 1, "unread": 1}`, 0},
	{"replSetGetStatus", `{"replSetGetStatus": 1, "unread": 1}`, 0},
	{"reIndex", `{"reIndex": "c", "unread": 1}`, 20},
	{"setFeatureCompatibilityVersion.confirm", `{"setFeatureCompatibilityVersion": "7.0", "confirm": true}`, 0},
	{"setFeatureCompatibilityVersion.confirm", `{"setFeatureCompatibilityVersion": "7.0"}`, 7369100},
	{"setFeatureCompatibilityVersion.confirm", `{"setFeatureCompatibilityVersion": "6.0", "confirm": true}`, 238},
	{"setFeatureCompatibilityVersion.confirm", `{"setFeatureCompatibilityVersion": "5.0", "confirm": true}`, 2},
	{"replSetGetConfig", `{"replSetGetConfig": 1, "unread": 1}`, 0},
	{"replSetStepDown", `{"replSetStepDown": 5, "secondaryCatchUpPeriodSecs": 0, "unread": 1}`, 262},
	{"replSetStepDown.force", `{"replSetStepDown": 5, "force": true}`, 0},
	{"replSetStepDown.secondaryCatchUpPeriodSecs", `{"replSetStepDown": 5, "secondaryCatchUpPeriodSecs": 6}`, 2},
	{"replSetFreeze", `{"replSetFreeze": 1, "unread": 1}`, 95},
	{"replSetStepUp", `{"replSetStepUp": 1, "unread": 1}`, 0},
	{"replSetStepUp.skipDryRun", `{"replSetStepUp": 1, "skipDryRun": true}`, 0},
	{"top", `{"top": 1, "unread": 1}`, 0},
	{"dbHash", `{"dbHash": 1, "unread": 1}`, 0},
	{"dbHash.collections", `{"dbHash": 1, "collections": ["c"]}`, 0},
	{"dbHash.collections", `{"dbHash": 1, "collections": [1]}`, 14},
	{"validateDBMetadata.apiParameters", `{"validateDBMetadata": 1, "apiParameters": {"version": "1", "strict": true}}`, 0},
	{"validateDBMetadata.apiParameters", `{"validateDBMetadata": 1}`, 40414},
	{"validateDBMetadata.db", `{"validateDBMetadata": 1, "db": "test", "apiParameters": {"version": "1"}}`, 0},
	{"validateDBMetadata.collection", `{"validateDBMetadata": 1, "collection": "c", "apiParameters": {"version": "1"}}`, 0},
	{"validateDBMetadata.apiParameters.version", `{"validateDBMetadata": 1, "apiParameters": {"strict": true}}`, 40414},
	{"validateDBMetadata.apiParameters.version", `{"validateDBMetadata": 1, "apiParameters": {"version": 1}}`, 14},
	{"validateDBMetadata.apiParameters.strict", `{"validateDBMetadata": 1, "apiParameters": {"version": "1", "strict": false}}`, 0},
	{"validateDBMetadata.apiParameters.deprecationErrors", `{"validateDBMetadata": 1, "apiParameters": {"version": "1", "deprecationErrors": true}}`, 0},
	{"validateDBMetadata.apiParameters.strict", `{"validateDBMetadata": 1, "apiParameters": {"version": "1", "Strict": true}}`, 40415},
	{"killSessions", `{"killSessions": [], "unknownField": 1}`, 0},
	{"killAllSessions", `{"killAllSessions": [], "unknownField": 1}`, 0},
	{"KillAllSessionsCmd.killAllSessions.user", `{"killAllSessions": [{"user": "u", "db": "admin"}]}`, 0},
	{"KillAllSessionsCmd.killAllSessions.user", `{"killAllSessions": [{"db": "admin"}]}`, 40414},
	{"KillAllSessionsCmd.killAllSessions.db", `{"killAllSessions": [{"user": "u", "db": "admin"}]}`, 0},
	{"KillAllSessionsCmd.killAllSessions.db", `{"killAllSessions": [{"user": "u", "db": 1}]}`, 14},
	{"killAllSessionsByPattern", `{"killAllSessionsByPattern": [], "unknownField": 1}`, 0},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.lsid", `{"killAllSessionsByPattern": [{"lsid": "x"}]}`, 14},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.lsid.id", `{"killAllSessionsByPattern": [{"lsid": {"uid": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q0=", "subType": "00"}}}}]}`, 40414},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.lsid.id", `{"killAllSessionsByPattern": [{"lsid": {"id": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erQ==", "subType": "04"}}, "uid": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q0=", "subType": "00"}}}}]}`, 0},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.lsid.uid", `{"killAllSessionsByPattern": [{"lsid": {"id": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erQ==", "subType": "04"}}}}]}`, 40414},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.lsid.uid", `{"killAllSessionsByPattern": [{"lsid": {"id": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erQ==", "subType": "04"}}, "uid": {"$binary": {"base64": "", "subType": "00"}}}}]}`, 12},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.uid", `{"killAllSessionsByPattern": [{"uid": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q0=", "subType": "00"}}}]}`, 0},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.uid", `{"killAllSessionsByPattern": [{"uid": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q0=", "subType": "01"}}}]}`, 14},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.users", `{"killAllSessionsByPattern": [{"users": "x"}]}`, 14},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.users", `{"killAllSessionsByPattern": [{"users": ["x"]}]}`, 14},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.users.user", `{"killAllSessionsByPattern": [{"users": [{"db": "admin"}]}]}`, 40414},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.users.user", `{"killAllSessionsByPattern": [{"users": [{"user": "u", "db": "admin"}]}]}`, 0},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.users.db", `{"killAllSessionsByPattern": [{"users": [{"user": "u", "db": true}]}]}`, 14},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.roles", `{"killAllSessionsByPattern": [{"roles": [{"role": "r", "db": "admin"}]}]}`, 0},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.roles.role", `{"killAllSessionsByPattern": [{"roles": [{"db": "admin"}]}]}`, 40414},
	{"KillAllSessionsByPatternCmd.killAllSessionsByPattern.roles.db", `{"killAllSessionsByPattern": [{"roles": [{"role": "r", "db": 1}]}]}`, 14},
	{"LogicalSessionFromClient.uid", `{"killSessions": [{"id": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erQ==", "subType": "04"}}, "uid": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q3erd6t3q0=", "subType": "00"}}}]}`, 0},
	{"LogicalSessionFromClient.uid", `{"killSessions": [{"id": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erQ==", "subType": "04"}}, "uid": {"$binary": {"base64": "3q3e", "subType": "00"}}}]}`, 12},
	{"LogicalSessionFromClient.id", `{"killSessions": [{"id": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erQ==", "subType": "04"}}}]}`, 0},
	{"LogicalSessionFromClient.id", `{"killSessions": [{"id": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erQ==", "subType": "00"}}}]}`, 14},
	{"LogicalSessionFromClient.id", `{"endSessions": [{"id": {"$binary": {"base64": "3q3e", "subType": "04"}}}]}`, 207},
	{"LogicalSessionFromClient.id", `{"refreshSessions": [{}]}`, 40414},
	{"dataSize.estimate", `{"dataSize": "test.c", "estimate": true}`, 0},
	{"dataSize.keyPattern", `{"dataSize": "test.c", "keyPattern": {"a": 1}, "min": {"a": 1}, "max": {"a": 2}}`, 0},
	{"dataSize.keyPattern", `{"dataSize": "test.c", "keyPattern": {"b": 1}, "min": {"b": 1}, "max": {"b": 2}}`, 96},
	{"dataSize.min", `{"dataSize": "test.c", "min": {"_id": 1}, "max": {"_id": 2}}`, 0},
	{"dataSize.min", `{"dataSize": "test.c", "min": {"_id": 1}}`, 2},
	{"dataSize.max", `{"dataSize": "test.c", "min": {}, "max": {"_id": 2}}`, 2},
	{"dataSize.maxSize", `{"dataSize": "test.c", "maxSize": 10}`, 0},
	{"dataSize.maxObjects", `{"dataSize": "test.c", "maxObjects": 1}`, 0},
	{"setUserWriteBlockMode.global", `{"setUserWriteBlockMode": 1, "global": false}`, 0},
	{"setUserWriteBlockMode.global", `{"setUserWriteBlockMode": 1}`, 40414},
	{"fsync", `{"fsync": 1, "unread": 1}`, 0},
	{"fsync.async", `{"fsync": 1, "async": true}`, 0},
	{"fsync.lock", `{"fsync": 1, "lock": false}`, 0},
	{"fsync.lock", `{"fsync": 1, "lock": "yes"}`, 14},
	{"compact", `{"compact": "c", "unread": 1}`, 0},
	{"compact.force", `{"compact": "c", "force": true}`, 0},
	{"connPoolStats", `{"connPoolStats": 1, "unread": 1}`, 0},
	{"lockInfo", `{"lockInfo": 1, "unread": 1}`, 0},
	{"lockInfo.includeStorageEngineDump", `{"lockInfo": 1, "includeStorageEngineDump": true}`, 0},
	{"fsyncUnlock", `{"fsyncUnlock": 1, "unread": 1}`, 20},
	{"profile.slowms", `{"profile": -1, "slowms": 100}`, 0},
	{"profile.sampleRate", `{"profile": 0, "sampleRate": 1.0}`, 0},
	{"profile.sampleRate", `{"profile": 0, "sampleRate": 2.0}`, 2},
	{"profile.filter", `{"profile": 0, "filter": {"millis": {"$gt": 1}}}`, 0},
	{"profile.filter", `{"profile": 0, "filter": "unset"}`, 0},
	{"profile.filter", `{"profile": 0, "filter": "none"}`, 2},
	{"profile.filter", `{"profile": 0, "filter": {"$bogus": 1}}`, 2},
	{"shutdown", `{"shutdown": 1, "unread": 1}`, 20},
	{"shutdown.force", `{"shutdown": 1, "force": true}`, 20},
	{"shutdown.timeoutSecs", `{"shutdown": 1, "timeoutSecs": 5}`, 20},
	{"killOp", `{"killOp": 1, "op": 12345, "unread": 1}`, 0},
	{"appendOplogNote", `{"appendOplogNote": 1, "data": {}, "unread": 1}`, 0},
	{"createSearchIndexes.indexes", `{"createSearchIndexes": "c", "indexes": [{"definition": {"mappings": {"dynamic": true}}}]}`, 115},
	{"createSearchIndexes.indexes", `{"createSearchIndexes": "c"}`, 40414},
	{"createSearchIndexes.indexes", `{"createSearchIndexes": "c", "indexes": [1]}`, 14},
	{"createSearchIndexes.indexes.name", `{"createSearchIndexes": "c", "indexes": [{"name": "s", "definition": {}}]}`, 115},
	{"createSearchIndexes.indexes.name", `{"createSearchIndexes": "c", "indexes": [{"name": 1, "definition": {}}]}`, 14},
	{"createSearchIndexes.indexes.definition", `{"createSearchIndexes": "c", "indexes": [{"name": "s"}]}`, 40414},
	{"createSearchIndexes.indexes.type", `{"createSearchIndexes": "c", "indexes": [{"type": "vectorSearch", "definition": {}}]}`, 115},
	{"createSearchIndexes.indexes.type", `{"createSearchIndexes": "c", "indexes": [{"definition": {}, "nope": 1}]}`, 40415},
	{"dropSearchIndex.name", `{"dropSearchIndex": "c", "name": "s"}`, 115},
	{"dropSearchIndex.id", `{"dropSearchIndex": "c", "id": 1}`, 14},
	{"updateSearchIndex.name", `{"updateSearchIndex": "c", "name": "s", "definition": {}}`, 115},
	{"updateSearchIndex.id", `{"updateSearchIndex": "c", "id": "x", "definition": {}}`, 115},
	{"updateSearchIndex.definition", `{"updateSearchIndex": "c", "name": "s"}`, 40414},
	{"listSearchIndexes.name", `{"listSearchIndexes": "c", "name": "s"}`, 115},
	{"listSearchIndexes.id", `{"listSearchIndexes": "c", "id": true}`, 14},
	{"configureFailPoint", `{"configureFailPoint": "failCommand", "mode": "off", "unread": 1}`, 0},
	{"getParameter", `{"getParameter": 1, "cursorTimeoutMillis": 1}`, 0},
	{"setParameter", `{"setParameter": 1, "nope": 1}`, 72},
	{"enableSharding.primaryShard", `{"enableSharding": "test", "primaryShard": "folio"}`, 0},
	{"enableSharding.primaryShard", `{"enableSharding": "test", "primaryShard": "nope"}`, 70},
	{"shardCollection.key", `{"shardCollection": "test.c", "key": {"a": 1}}`, 0},
	{"shardCollection.key", `{"shardCollection": "test.c", "key": {"b": 1}}`, 72},
	{"shardCollection.key", `{"shardCollection": "test.c", "key": {"a": -1}}`, 2},
	{"shardCollection.unique", `{"shardCollection": "test.u", "key": {"x": 1}, "unique": true}`, 0},
	{"shardCollection.unique", `{"shardCollection": "test.c", "key": {"a": 1}, "unique": true}`, 72},
	{"shardCollection.numInitialChunks", `{"shardCollection": "test.c", "key": {"a": 1}, "numInitialChunks": 4}`, 72},
	{"shardCollection.presplitHashedZones", `{"shardCollection": "test.c", "key": {"a": 1}, "presplitHashedZones": true}`, 72},
	{"shardCollection.collation", `{"shardCollection": "test.c", "key": {"a": 1}, "collation": {"locale": "simple"}}`, 0},
	{"shardCollection.collation", `{"shardCollection": "test.c", "key": {"a": 1}, "collation": {"locale": "fr"}}`, 2},
	{"shardCollection.implicitlyCreateIndex", `{"shardCollection": "test.n", "key": {"b": 1}, "implicitlyCreateIndex": false}`, 6373200},
	{"shardCollection.enforceUniquenessCheck", `{"shardCollection": "test.c", "key": {"a": 1}, "unique": true, "enforceUniquenessCheck": false}`, 0},
	{"getDefaultRWConcern.inMemory", `{"getDefaultRWConcern": 1, "inMemory": true}`, 0},
	{"getDefaultRWConcern.inMemory", `{"getDefaultRWConcern": 1, "inMemory": "true"}`, 14},
	{"getDefaultRWConcern.inMemory", `{"getDefaultRWConcern": 1, "inMemory": 1}`, 14},
	{"setDefaultRWConcern.defaultReadConcern", `{"setDefaultRWConcern": 1, "defaultReadConcern": {"level": "majority"}}`, 0},
	{"setDefaultRWConcern.defaultReadConcern", `{"setDefaultRWConcern": 1, "defaultReadConcern": {"level": "snapshot"}}`, 2},
	{"setDefaultRWConcern.defaultWriteConcern", `{"setDefaultRWConcern": 1, "defaultWriteConcern": {"w": "majority"}}`, 0},
	{"setDefaultRWConcern.defaultWriteConcern", `{"setDefaultRWConcern": 1, "defaultWriteConcern": {"w": 2}}`, 100},
	{"getLog.getLog", `{"getLog": "global"}`, 0},
	{"getLog.getLog", `{"getLog": null}`, 40414},
	{"getLog.getLog", `{"getLog": 1}`, 14},
	{"_mergeAuthzCollections.tempUsersCollection", `{"_mergeAuthzCollections": 1, "tempUsersCollection": "admin.none", "db": ""}`, 0},
	{"_mergeAuthzCollections.tempUsersCollection", `{"_mergeAuthzCollections": 1, "tempUsersCollection": 1, "db": ""}`, 14},
	{"_mergeAuthzCollections.tempRolesCollection", `{"_mergeAuthzCollections": 1, "tempRolesCollection": "admin.none", "db": "x"}`, 0},
	{"_mergeAuthzCollections.tempRolesCollection", `{"_mergeAuthzCollections": 1, "db": "x"}`, 2},
	{"_mergeAuthzCollections.db", `{"_mergeAuthzCollections": 1, "tempRolesCollection": "admin.none"}`, 40414},
	{"_mergeAuthzCollections.drop", `{"_mergeAuthzCollections": 1, "tempRolesCollection": "admin.none", "db": "", "drop": "yes"}`, 14},
	{"_mergeAuthzCollections.drop", `{"_mergeAuthzCollections": 1, "tempRolesCollection": "admin.none", "db": "", "drop": true}`, 0},
	// count's limit is countParseLimit's (count_request.cpp)
	{"count.limit", `{"count": "c", "limit": "x"}`, 2},
	{"count.limit", `{"count": "c", "limit": null}`, 2},
	{"count.limit", `{"count": "c", "limit": 2.5}`, 9},
	{"count.limit", `{"count": "c", "limit": {"$numberDouble": "NaN"}}`, 9},
	{"count.limit", `{"count": "c", "limit": 1e19}`, 9},
	{"count.limit", `{"count": "c", "limit": {"$numberDecimal": "2.5"}}`, 9},
	{"count.limit", `{"count": "c", "limit": {"$numberLong": "-9223372036854775808"}}`, 2},
	{"count.limit", `{"count": "c", "limit": {"$numberLong": "-9223372036854775807"}}`, 0},
	{"count.limit", `{"count": "c", "limit": 2.0}`, 0},
	{"count.limit", `{"count": "c", "limit": {"$numberDecimal": "3"}}`, 0},
}

// argsService is a fresh service with test.c seeded for argRows.
func argsService(t *testing.T) *Service {
	s := newReplSetService(t, time.Now())
	s.JS = js.New(js.Options{})
	s.TestCommands = true
	for _, cmd := range []bson.D{
		{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "l", Value: bson.A{0, 1}}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}}}}},
		{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}},
	} {
		if c := code(runCmd(t, s, cmd)); c != 0 {
			t.Fatalf("seeding: code %d", c)
		}
	}
	return s
}

// runArgs runs cmd (its $db added) on the database its command needs.
func runArgs(t *testing.T, s *Service, cmd bson.Raw) bson.Raw {
	t.Helper()
	db := "test"
	if handlers[Name(cmd)].admin {
		db = "admin"
	}
	return runIn(t, s, db, cmd)
}

// runIn runs cmd on database db, which it names as its $db.
func runIn(t *testing.T, s *Service, db string, cmd bson.Raw) bson.Raw {
	t.Helper()
	var d bson.D
	if err := bson.Unmarshal(cmd, &d); err != nil {
		t.Fatal(err)
	}
	raw, err := bson.Marshal(append(d, bson.E{Key: "$db", Value: db}))
	if err != nil {
		t.Fatal(err)
	}
	return s.Run(&Request{DB: db, Cmd: raw, Conn: &Conn{}})
}

// TestArgRows runs argRows; a write command's code is its first write
// error's.
func TestArgRows(t *testing.T) {
	for _, row := range argRows {
		t.Run(row.field, func(t *testing.T) {
			var cmd bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(row.cmd), true, &cmd); err != nil {
				t.Fatalf("%s: %v", row.cmd, err)
			}
			reply := runArgs(t, argsService(t), cmd)
			got := code(reply)
			if we, ok := reply.Lookup("writeErrors", "0", "code").Int32OK(); ok && got == 0 {
				got = we // a write command's statement error
			}
			if got != row.code {
				t.Errorf("%s: code %d, want %d (%v)", row.cmd, got, row.code, reply)
			}
		})
	}
}

// allSpecs are the declarations of every registered command and of their
// sub-documents, each once, with a command name that uses it.
func allSpecs() map[*argSpec]string {
	out := map[*argSpec]string{}
	var walk func(s *argSpec, name string)
	walk = func(s *argSpec, name string) {
		if _, ok := out[s]; ok {
			return
		}
		out[s] = name
		for _, sub := range s.subs {
			walk(sub, name)
		}
	}
	for name, c := range handlers {
		walk(c.spec, name)
	}
	return out
}

// sampleOf is a value of a type t accepts, and one of a type it refuses
// (ok false for tAny).
func sampleOf(t argType) (good any, bad any, ok bool) {
	candidates := []struct {
		v  any
		bt bson.Type
	}{
		{"x", bson.TypeString}, {true, bson.TypeBoolean}, {bson.D{}, bson.TypeEmbeddedDocument},
		{bson.A{}, bson.TypeArray}, {int32(1), bson.TypeInt32},
	}
	for _, c := range candidates {
		if t.mask&typeBit(c.bt) != 0 && good == nil {
			good = c.v
		}
		if t.mask&typeBit(c.bt) == 0 && bad == nil {
			bad, ok = c.v, true
		}
	}
	return good, bad, ok
}

// TestArgSpecs walks the registry: every declared field honoured or
// ignored has a row in argRows; every refused field is refused with
// NotImplemented naming it; every typed field refuses another type with
// TypeMismatch; a field given twice fails with 40413; an unknown field
// fails with 40415 unless the command is open; every ignored field and
// open command is listed in docs/COMMANDS.md.
func TestArgSpecs(t *testing.T) {
	covered := map[string]bool{}
	for _, r := range argRows {
		covered[r.field] = true
	}
	doc, err := os.ReadFile("../../docs/COMMANDS.md")
	if err != nil {
		t.Fatal(err)
	}
	s := argsService(t)
	run := func(d bson.D) bson.Raw {
		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return runArgs(t, s, raw)
	}
	declared := map[string]bool{}
	for spec, name := range allSpecs() {
		top := handlers[name].spec == spec
		if spec.open != "" {
			declared[spec.path] = true
			if !covered[spec.path] {
				t.Errorf("%s: open command without a row in argRows", spec.path)
			}
			if !strings.Contains(string(doc), "`"+spec.path+"`") {
				t.Errorf("%s: open command not listed in docs/COMMANDS.md", spec.path)
			}
		} else if top {
			reply := run(bson.D{{Key: name, Value: 1}, {Key: "noSuchField", Value: 1}})
			if code(reply) != 40415 || !strings.Contains(errmsg(reply), spec.path+".noSuchField") {
				t.Errorf("%s: unknown field answered %v", name, reply)
			}
		}
		if f := spec.value; f != nil {
			// the command's own value, declared: covered, and its type
			// checked
			key := spec.path + "." + f.name
			declared[key] = true
			if !covered[key] {
				t.Errorf("%s: declared without a row in argRows", key)
			}
			if _, bad, typed := sampleOf(f.typ); typed && f.typ.mismatch == nil {
				reply := run(bson.D{{Key: name, Value: bad}})
				if code(reply) != 14 || !strings.Contains(errmsg(reply), "BSON field '"+key+"' is the wrong type") {
					t.Errorf("%s: wrong type answered %v", key, reply)
				}
			}
		}
		dupDone := false
		for i := range spec.fields {
			f := &spec.fields[i]
			key := spec.path + "." + f.name
			declared[key] = true
			good, bad, typed := sampleOf(f.typ)
			if f.use == honoured || f.use == ignored {
				if !covered[key] {
					t.Errorf("%s: declared without a row in argRows", key)
				}
			}
			if f.use == ignored && !strings.Contains(string(doc), "`"+key+"`") {
				t.Errorf("%s: ignored but not listed in docs/COMMANDS.md", key)
			}
			if !top {
				continue
			}
			if f.use == refused || f.use == refusedTrue {
				v := good
				if f.use == refusedTrue {
					v = true
				}
				reply := run(bson.D{{Key: name, Value: 1}, {Key: f.name, Value: v}})
				if m := errmsg(reply); code(reply) != 238 || !strings.Contains(m, "'"+f.name) || !strings.Contains(m, " of "+name+" ") {
					t.Errorf("%s: refused field answered %v", key, reply)
				}
			}
			if typed && f.typ.mismatch == nil {
				reply := run(bson.D{{Key: name, Value: 1}, {Key: f.name, Value: bad}})
				if code(reply) != 14 || !strings.Contains(errmsg(reply), "BSON field '"+key+"' is the wrong type") {
					t.Errorf("%s: wrong type answered %v", key, reply)
				}
			}
			if !dupDone && f.use != refused {
				dupDone = true
				v := good
				if f.use == refusedTrue {
					v = false
				}
				reply := run(bson.D{{Key: name, Value: 1}, {Key: f.name, Value: v}, {Key: f.name, Value: v}})
				if code(reply) != 40413 || errmsg(reply) != "BSON field '"+key+"' is a duplicate field" {
					t.Errorf("%s: duplicate answered %v", key, reply)
				}
			}
		}
	}
	for field := range covered {
		if !declared[field] {
			t.Errorf("argRows: %s is not declared", field)
		}
	}
}

func errmsg(reply bson.Raw) string {
	m, _ := reply.Lookup("errmsg").StringValueOK()
	return m
}

// TestArgsReadDeclared: reading a field not declared as honoured panics,
// so a handler cannot read what its declaration does not state.
func TestArgsReadDeclared(t *testing.T) {
	raw, _ := bson.Marshal(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{}}})
	c, err := parseCommand(raw, findSpec)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nope", "oplogReplay"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("reading %q did not panic", name)
				}
			}()
			c.value(name)
		}()
	}
	if c.doc("filter") == nil {
		t.Error("filter not read")
	}
}

// TestArgsNullIsAbsent: as MongoDB's IDL, a null typed field is absent.
func TestArgsNullIsAbsent(t *testing.T) {
	raw, _ := bson.Marshal(bson.D{{Key: "find", Value: "c"}, {Key: "let", Value: nil}, {Key: "limit", Value: nil}})
	c, err := parseCommand(raw, findSpec)
	if err != nil || c.has("let") || c.has("limit") {
		t.Fatalf("null fields: err %v, let %v, limit %v", err, c.has("let"), c.has("limit"))
	}
}

// TestArgsValues: each field's value is found whatever the order and the
// number given, kept in place up to four and in a slice past that.
func TestArgsValues(t *testing.T) {
	spec := untyped("t", arg("a", tAny), arg("b", tAny), arg("c", tAny), arg("d", tAny), arg("e", tAny), arg("f", tAny), arg("g", tAny))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		names := []string{"a", "b", "c", "d", "e", "f", "g"}
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		names = names[:rng.IntN(len(names)+1)]
		d := bson.D{{Key: "t", Value: 1}}
		for _, n := range names {
			d = append(d, bson.E{Key: n, Value: n + "!"})
		}
		raw, _ := bson.Marshal(d)
		c, err := parseCommand(raw, spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range spec.fields {
			got, ok := c.value(f.name).StringValueOK()
			if want := slices.Contains(names, f.name); ok != want || want && got != f.name+"!" {
				t.Fatalf("%v: %s is %q (%v)", names, f.name, got, ok)
			}
		}
	}
}

// BenchmarkParseFind measures parsing a find's declared fields.
func BenchmarkParseFind(b *testing.B) {
	raw, _ := bson.Marshal(bson.D{
		{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}}},
		{Key: "limit", Value: 10}, {Key: "batchSize", Value: 5}, {Key: "$db", Value: "test"}, {Key: "lsid", Value: bson.D{}},
	})
	b.ReportAllocs()
	for b.Loop() {
		c, err := parseCommand(raw, findSpec)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := parseFind(&c, true, expr.Clock{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCommandsDoc: docs/COMMANDS.md's tables are the declarations'
// (FOLIO_UPDATE_DOCS=1 rewrites the file from them).
func TestCommandsDoc(t *testing.T) {
	const path = "../../docs/COMMANDS.md"
	want := commandsDoc()
	if os.Getenv("FOLIO_UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not what the declarations say; rerun with FOLIO_UPDATE_DOCS=1", path)
	}
}

// commandsDoc renders docs/COMMANDS.md from the declarations.
func commandsDoc() string {
	var ignoredRows, refusedRows, openRows []string
	for spec := range allSpecs() {
		if spec.open != "" {
			openRows = append(openRows, "| `"+spec.path+"` | "+spec.open+" |")
		}
		for _, f := range spec.fields {
			key := "`" + spec.path + "." + f.name + "`"
			switch f.use {
			case ignored:
				ignoredRows = append(ignoredRows, "| "+key+" | "+f.note+" |")
			case refused:
				refusedRows = append(refusedRows, "| "+key+" | any value | "+f.note+" |")
			case refusedTrue:
				refusedRows = append(refusedRows, "| "+key+" | true | "+f.note+" |")
			}
		}
	}
	slices.Sort(ignoredRows)
	slices.Sort(refusedRows)
	slices.Sort(openRows)
	var b strings.Builder
	b.WriteString(`# Command arguments

Every command declares each field it takes (internal/commands: each
command's ` + "`argSpec`" + `, registered with its handler). Before the handler
runs, the command is parsed against its declaration, as MongoDB's IDL
parses it: an unknown field fails with 40415, a field given twice with
40413, a field of the wrong type with TypeMismatch (14), a missing required
field with 40414; a null typed field counts as absent, but for an array
field, which MongoDB's IDL still reads as an array (10065), and the fields
whose deserializer reads any value (a wrong type). The generic
arguments (` + "`$db`, `lsid`, `txnNumber`, `autocommit`, `startTransaction`, `$readPreference`, `readConcern`, `writeConcern`, `maxTimeMS`, `comment`, `apiVersion`, `$clusterTime`" + `...)
are parsed once, for every command (generic.go).

Each declared field is honoured, refused with NotImplemented (238) naming
it, or accepted and ignored where it has no effect on a one-member MongoDB
replica set either. This file is generated from the declarations
(` + "`FOLIO_UPDATE_DOCS=1 go test ./internal/commands/ -run TestCommandsDoc`" + `).

## Accepted and ignored

| field | why it has no effect |
| --- | --- |
`)
	b.WriteString(strings.Join(ignoredRows, "\n"))
	b.WriteString(`

## Refused with NotImplemented (238)

| field | refused when | what Folio does not have |
| --- | --- | --- |
`)
	b.WriteString(strings.Join(refusedRows, "\n"))
	b.WriteString(`

## Commands taking fields they cannot declare

| command | its other fields are |
| --- | --- |
`)
	b.WriteString(strings.Join(openRows, "\n"))
	b.WriteString("\n")
	return b.String()
}

// TestServerStatusSections: a section named false or 0 is left out; other
// fields (a header field, a section Folio lacks) change nothing.
// https://www.mongodb.com/docs/v7.0/reference/command/serverStatus/#behavior
func TestServerStatusSections(t *testing.T) {
	s := argsService(t)
	reply := runCmd(t, s, bson.D{{Key: "serverStatus", Value: 1}, {Key: "metrics", Value: 0}, {Key: "asserts", Value: false},
		{Key: "uptime", Value: 0}, {Key: "latchAnalysis", Value: 1}})
	for field, want := range map[string]bool{"metrics": false, "asserts": false, "uptime": true, "connections": true, "latchAnalysis": false} {
		if _, err := reply.LookupErr(field); (err == nil) != want {
			t.Errorf("%s present: %v, want %v", field, err == nil, want)
		}
	}
}
