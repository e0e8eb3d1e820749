package driver_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestRefusedInputs proves commands MongoDB 7.0 refuses fail with its codes,
// leave nothing behind and leave the server serving. Each row runs on a fresh database after its
// setup commands.
func TestRefusedInputs(t *testing.T) {
	idx := func(coll string, specs ...bson.D) bson.D {
		arr := bson.A{}
		for _, s := range specs {
			arr = append(arr, s)
		}
		return bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: arr}}
	}
	spec := func(key bson.D, name string, extra ...bson.E) bson.D {
		return append(bson.D{{Key: "key", Value: key}, {Key: "name", Value: name}}, extra...)
	}
	a1 := bson.D{{Key: "a", Value: int32(1)}}
	b1 := bson.D{{Key: "b", Value: int32(1)}}
	insertC := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}}}}
	agg := func(stage bson.D) bson.D {
		return bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{stage}}, {Key: "cursor", Value: bson.D{}}}
	}
	and := func(clause bson.D) bson.D { return bson.D{{Key: "$and", Value: bson.A{clause}}} }
	const nul = "x\x00y"
	tests := []struct {
		name     string
		db       string // the database, when not the row's own
		setup    []bson.D
		cmd      bson.D
		code     int
		codeName string
		msg      string // a part of the message, when it matters
	}{
		// write_ops checkOpCountForCommand: every write command needs 1 to 100000 statements.
		{name: "insert without documents", cmd: bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{}}},
			code: 16, codeName: "InvalidLength", msg: "Write batch sizes must be between 1 and 100000. Got 0 operations."},
		{name: "update without statements", cmd: bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{}}},
			code: 16, codeName: "InvalidLength"},
		{name: "delete without statements", cmd: bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{}}},
			code: 16, codeName: "InvalidLength"},

		// hint is the IDL's indexHint (write_ops.idl, find_command.idl...),
		// which parseHint reads: a string or an object, else the whole
		// command fails, nothing written (delete_hint.js, update_hint.js).
		{name: "update with a bool hint", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}}, {Key: "hint", Value: true}}}}},
			code: 9, codeName: "FailedToParse", msg: "Hint must be a string or an object"},
		{name: "delete with a number hint", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}, {Key: "hint", Value: 1}}}}},
			code: 9, codeName: "FailedToParse", msg: "Hint must be a string or an object"},
		{name: "find with a null hint", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: nil}},
			code: 9, codeName: "FailedToParse", msg: "Hint must be a string or an object"},
		{name: "findAndModify with a number hint", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "findAndModify", Value: "c"}, {Key: "remove", Value: true}, {Key: "hint", Value: 1}},
			code: 9, codeName: "FailedToParse", msg: "Hint must be a string or an object"},

		// A community server has no search index service: Atlas Search
		// stages fail as MongoDB 7.0's do.
		{name: "$search", cmd: agg(bson.D{{Key: "$search", Value: bson.D{{Key: "text", Value: bson.D{}}}}}),
			code: 6047401, codeName: "Location6047401", msg: "$search stage is only allowed on MongoDB Atlas"},
		{name: "$listSearchIndexes", cmd: agg(bson.D{{Key: "$listSearchIndexes", Value: bson.D{}}}),
			code: 6047401, codeName: "Location6047401", msg: "$listSearchIndexes stage is only allowed on MongoDB Atlas"},

		// validate.cpp: a background validation cannot be full.
		{name: "validate background and full", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "validate", Value: "c"}, {Key: "full", Value: true}, {Key: "background", Value: true}},
			code: 72, codeName: "InvalidOptions", msg: "Running the validate command with both { background: true } and { full: true } is not supported."},

		// Every command is parsed against its declared fields, as MongoDB's
		// IDL parses it (idl_parser.cpp): a field given twice, a field of the
		// wrong type, an unknown field.
		{name: "duplicate field", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{}}, {Key: "filter", Value: bson.D{}}},
			code: 40413, codeName: "Location40413", msg: "BSON field 'FindCommandRequest.filter' is a duplicate field"},
		// find is parsed as the struct FindCommandRequest, whose documents'
		// deserializer (parseOwnedBSON) checks their type itself;
		// aggregate's cursor has a parser of its own, and its fields are
		// the struct "cursor"'s.
		{name: "find batchSize of the wrong type", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: true}},
			code: 14, codeName: "TypeMismatch", msg: "BSON field 'FindCommandRequest.batchSize' is the wrong type 'bool', expected types '[long, int, decimal, double']"},
		{name: "find sort not a document", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: 42.13}},
			code: 14, codeName: "TypeMismatch", msg: "Expected field sortto be of type object"},
		// Its type is any, so null is not absence as for the IDL's typed
		// fields: parseOwnedBSON refuses null and undefined as well.
		{name: "find projection undefined", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "projection", Value: bson.Undefined{}}},
			code: 14, codeName: "TypeMismatch", msg: "Expected field projectionto be of type object"},
		{name: "aggregate cursor not a document", cmd: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: "x"}},
			code: 14, codeName: "TypeMismatch", msg: "cursor field must be missing or an object"},
		{name: "aggregate cursor batchSize of the wrong type", cmd: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: true}}}},
			code: 14, codeName: "TypeMismatch", msg: "BSON field 'cursor.batchSize' is the wrong type 'bool', expected types '[long, int, decimal, double']"},
		{name: "killCursors id of the wrong type", cmd: bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{int64(1), int32(2)}}},
			code: 14, codeName: "TypeMismatch", msg: "BSON field 'killCursors.cursors.1' is the wrong type 'int', expected type 'long'"},
		{name: "dropIndexes index of the wrong type", cmd: bson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: true}},
			code: 14, codeName: "TypeMismatch", msg: "BSON field 'dropIndexes.index' is the wrong type 'bool', expected types '[string, object']"},
		{name: "dropIndexes index list of keys", cmd: bson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: bson.A{bson.D{{Key: "v", Value: -1}}}}},
			code: 14, codeName: "TypeMismatch", msg: "BSON field 'dropIndexes.index' is the wrong type 'array', expected types '[string']"},
		{name: "duplicate statement field", cmd: bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 1}, {Key: "limit", Value: 1}}}}},
			code: 40413, codeName: "Location40413", msg: "BSON field 'delete.deletes.limit' is a duplicate field"},
		{name: "field of the wrong type", cmd: bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: "x"}},
			code: 14, codeName: "TypeMismatch", msg: "BSON field 'count.query' is the wrong type 'string', expected type 'object'"},
		// deserializeWriteConcernW: an object is a tag set, which Folio
		// refuses; an empty one is no tag set at all.
		{name: "write concern w of no tags", cmd: append(insertC, bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: bson.D{}}}}),
			code: 9, codeName: "FailedToParse", msg: "tagged write concern requires tags"},
		{name: "write concern w of tags", cmd: append(insertC, bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: bson.D{{Key: "dc", Value: 1}}}}}),
			code: 238, codeName: "NotImplemented"},
		// The IDL's bool refuses numbers; null is absence.
		{name: "listCollections nameOnly of another type", cmd: bson.D{{Key: "listCollections", Value: 1}, {Key: "nameOnly", Value: 1}},
			code: 14, codeName: "TypeMismatch", msg: "BSON field 'listCollections.nameOnly' is the wrong type 'int', expected type 'bool'"},
		// optionalBool refuses numbers and null (OptionalBool::parseFromBSON).
		{name: "find singleBatch of another type", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "singleBatch", Value: 1}},
			code: 14, codeName: "TypeMismatch", msg: "Field 'singleBatch' should be a boolean value, but found: int"},
		{name: "find allowDiskUse of another type", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "allowDiskUse", Value: 1}},
			code: 14, codeName: "TypeMismatch", msg: "Field 'allowDiskUse' should be a boolean value, but found: int"},
		{name: "aggregate allowDiskUse null", cmd: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "allowDiskUse", Value: nil}},
			code: 14, codeName: "TypeMismatch"},
		{name: "aggregate explain of another type", cmd: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "explain", Value: 1}},
			code: 14, codeName: "TypeMismatch", msg: "explain must be a boolean"},
		// ExplainCmd::parse, CommandInvocation::explain and
		// aggregation_request_helper::parseFromBSON (explain_db_mismatch.js).
		{name: "explain of another $db", cmd: bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "not_my_db"}}}},
			code: 73, codeName: "InvalidNamespace", msg: "Mismatched $db in explain command. Expected "},
		{name: "explain of an unknown command", cmd: bson.D{{Key: "explain", Value: bson.D{{Key: "foo", Value: "c"}}}},
			code: 59, codeName: "CommandNotFound", msg: "Explain failed due to unknown command: foo"},
		{name: "explain of an insert", cmd: bson.D{{Key: "explain", Value: insertC}},
			code: 20, codeName: "IllegalOperation", msg: "Cannot explain cmd: insert"},
		{name: "explain of an aggregate with explain", cmd: bson.D{{Key: "explain", Value: append(agg(bson.D{{Key: "$match", Value: bson.D{}}}), bson.E{Key: "explain", Value: false})}},
			code: 9, codeName: "FailedToParse", msg: "The 'explain' option is illegal when a explain verbosity is also provided"},
		// drop is parsed by IDL in MongoDB; ping is not (it ignores "x").
		{name: "unknown field of drop", cmd: bson.D{{Key: "drop", Value: "c"}, {Key: "x", Value: 1}},
			code: 40415, codeName: "Location40415", msg: "BSON field 'drop.x' is an unknown field."},
		{name: "refused hello option", cmd: bson.D{{Key: "hello", Value: 1}, {Key: "loadBalanced", Value: true}},
			code: 238, codeName: "NotImplemented", msg: "'loadBalanced: true'"},
		{name: "topologyVersion missing its counter", cmd: bson.D{{Key: "hello", Value: 1}, {Key: "topologyVersion", Value: bson.D{{Key: "processId", Value: bson.NewObjectID()}}}, {Key: "maxAwaitTimeMS", Value: 0}},
			code: 40414, codeName: "Location40414", msg: "BSON field 'hello.topologyVersion.counter' is missing but a required field"},
		// insert has no let option (write_ops.idl).
		{name: "insert with let", cmd: append(insertC[:2:2], bson.E{Key: "let", Value: bson.D{{Key: "x", Value: 1}}}),
			code: 40415, codeName: "Location40415"},

		// index_key_validate::validateIndexSpec and parseAndValidateIndexSpecs.
		{name: "index without a name", cmd: idx("c", bson.D{{Key: "key", Value: a1}}),
			code: 9, codeName: "FailedToParse", msg: "The 'name' field is a required property of an index specification"},
		{name: "index without a key", cmd: idx("c", bson.D{{Key: "name", Value: "x"}}),
			code: 9, codeName: "FailedToParse", msg: "The 'key' field is a required property"},
		{name: "index with an empty name", cmd: idx("c", spec(a1, "")),
			code: 67, codeName: "CannotCreateIndex", msg: "index name cannot be empty"},
		{name: "index named *", cmd: idx("c", spec(a1, "*")),
			code: 2, codeName: "BadValue", msg: "The index name '*' is not valid."},
		{name: "index named _id_ on another key", cmd: idx("c", spec(a1, "_id_")),
			code: 2, codeName: "BadValue", msg: "The index name '_id_' is reserved for the _id index"},
		// Ordering::make: at most 32 fields.
		{name: "index of 33 fields", cmd: idx("c", spec(fieldsKey(33), "k33")),
			code: 13103, codeName: "Location13103", msg: "too many compound keys"},
		{name: "find sorted by 33 fields", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: fieldsKey(33)}},
			code: 13103, codeName: "Location13103", msg: "too many compound keys"},
		{name: "index with an unknown option", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "someField", Value: "x"})),
			code: 197, codeName: "InvalidIndexSpecificationOption", msg: "The field 'someField' is not valid for an index specification"},
		{name: "unknown option with ignoreUnknownIndexOptions false",
			cmd:  append(idx("c", spec(a1, "a_1", bson.E{Key: "someField", Value: "x"})), bson.E{Key: "ignoreUnknownIndexOptions", Value: false}),
			code: 197, codeName: "InvalidIndexSpecificationOption"},
		{name: "_id index with unique", cmd: idx("c", spec(bson.D{{Key: "_id", Value: int32(1)}}, "_id_", bson.E{Key: "unique", Value: true})),
			code: 197, codeName: "InvalidIndexSpecificationOption", msg: "The field 'unique' is not valid for an _id index specification"},
		{name: "_id index descending", cmd: idx("c", spec(bson.D{{Key: "_id", Value: int32(-1)}}, "_id_-1")),
			code: 2, codeName: "BadValue"},
		{name: "key field twice", cmd: idx("c", spec(bson.D{{Key: "a", Value: int32(1)}, {Key: "a", Value: int32(-1)}}, "x")),
			code: 2, codeName: "BadValue", msg: "appears multiple times in the index key pattern"},
		{name: "unique not convertible to bool", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "unique", Value: bson.D{}})),
			code: 14, codeName: "TypeMismatch"},
		{name: "text index with a numeric default_language", cmd: idx("c", spec(bson.D{{Key: "t", Value: "text"}}, "t_text", bson.E{Key: "default_language", Value: 1.5})),
			code: 14, codeName: "TypeMismatch", msg: "The field 'default_language' must be a string, but got double"},
		{name: "text index with a numeric language_override", cmd: idx("c", spec(bson.D{{Key: "t", Value: "text"}}, "t_text", bson.E{Key: "language_override", Value: int32(1)})),
			code: 14, codeName: "TypeMismatch", msg: "The field 'language_override' must be a string, but got int"},
		{name: "text index with numeric weights", cmd: idx("c", spec(bson.D{{Key: "t", Value: "text"}}, "t_text", bson.E{Key: "weights", Value: int32(1)})),
			code: 14, codeName: "TypeMismatch", msg: "The field 'weights' must be an object, but got int"},
		{name: "2d index with string bits", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2d"}}, "p_2d", bson.E{Key: "bits", Value: "26"})),
			code: 14, codeName: "TypeMismatch", msg: "The field 'bits' must be a number, but got string"},
		{name: "2d index with an object min", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2d"}}, "p_2d", bson.E{Key: "min", Value: bson.D{}})),
			code: 14, codeName: "TypeMismatch", msg: "The field 'min' must be a number, but got object"},
		{name: "2dsphere index with a string finestIndexedLevel", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2dsphere"}}, "p_2dsphere", bson.E{Key: "finestIndexedLevel", Value: "x"})),
			code: 14, codeName: "TypeMismatch", msg: "The field 'finestIndexedLevel' must be a number, but got string"},
		{name: "weights on an index other than text", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "weights", Value: bson.D{{Key: "a", Value: 1}}})),
			code: 67, codeName: "CannotCreateIndex", msg: "the field 'weights' can only be specified with text indexes"},
		// Folio builds 2dsphere version 3 with the default cell levels.
		{name: "2dsphere index of version 1", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2dsphere"}}, "p_2dsphere", bson.E{Key: "2dsphereIndexVersion", Value: int32(1)})),
			code: 238, codeName: "NotImplemented", msg: "2dsphereIndexVersion 1"},
		{name: "2dsphere index of version 4", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2dsphere"}}, "p_2dsphere", bson.E{Key: "2dsphereIndexVersion", Value: int32(4)})),
			code: 67, codeName: "CannotCreateIndex", msg: "unsupported geo index version { 2dsphereIndexVersion : 2dsphereIndexVersion: 4 }, only versions: [1,2,3] are supported"},
		// A double version must be normal and is truncated (S2AccessMethod::fixSpec).
		{name: "2dsphere index of version 0.0", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2dsphere"}}, "p_2dsphere", bson.E{Key: "2dsphereIndexVersion", Value: 0.0})),
			code: 67, codeName: "CannotCreateIndex", msg: "Invalid value for geo index version { 2dsphereIndexVersion : 2dsphereIndexVersion: 0.0 }, only versions: [1,2,3] are supported"},
		{name: "2dsphere index of version -3.5", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2dsphere"}}, "p_2dsphere", bson.E{Key: "2dsphereIndexVersion", Value: -3.5})),
			code: 67, codeName: "CannotCreateIndex", msg: "unsupported geo index version { 2dsphereIndexVersion : 2dsphereIndexVersion: -3.5 }"},
		{name: "2dsphere index of version 2.5", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2dsphere"}}, "p_2dsphere", bson.E{Key: "2dsphereIndexVersion", Value: 2.5})),
			code: 238, codeName: "NotImplemented", msg: "2dsphereIndexVersion 2"},
		// A 2d index's options as GeoHashConverter reads them, its field first and alone.
		{name: "2d index of 33 bits", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2d"}}, "p_2d", bson.E{Key: "bits", Value: int32(33)})),
			code: 72, codeName: "InvalidOptions", msg: "bits for hash must be > 0 and <= 32, but 33 bits were specified"},
		{name: "2d index with min above max", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2d"}}, "p_2d", bson.E{Key: "min", Value: int32(1)}, bson.E{Key: "max", Value: int32(-1)})),
			code: 72, codeName: "InvalidOptions", msg: "region for hash must be valid and have positive area, but [1, -1] was specified"},
		{name: "2d index after another field", cmd: idx("c", spec(bson.D{{Key: "a", Value: int32(1)}, {Key: "p", Value: "2d"}}, "a_1_p_2d")),
			code: 16801, codeName: "Location16801", msg: "2d has to be first in index"},
		{name: "two 2d fields", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2d"}, {Key: "q", Value: "2d"}}, "p_2d_q_2d")),
			code: 16800, codeName: "Location16800", msg: "can't have 2 geo fields"},
		{name: "2dsphere index with coarsestIndexedLevel", cmd: idx("c", spec(bson.D{{Key: "p", Value: "2dsphere"}}, "p_2dsphere", bson.E{Key: "coarsestIndexedLevel", Value: int32(5)})),
			code: 238, codeName: "NotImplemented", msg: "coarsestIndexedLevel"},
		{name: "unique and prepareUnique", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "unique", Value: true}, bson.E{Key: "prepareUnique", Value: true})),
			code: 67, codeName: "CannotCreateIndex", msg: "cannot create an index with the 'unique' option and the 'prepareUnique' option"},
		{name: "index version 3", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "v", Value: int32(3)})),
			code: 67, codeName: "CannotCreateIndex", msg: "cannot create an index with v=3"},
		{name: "index version not a number", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "v", Value: "2"})),
			code: 14, codeName: "TypeMismatch"},
		{name: "index version 1 with a collation", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "v", Value: int32(1)}, bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "simple"}}})),
			code: 67, codeName: "CannotCreateIndex", msg: "cannot create an index with the 'collation' option and v=1"},
		{name: "wildcard index of version 1", cmd: idx("c", spec(bson.D{{Key: "$**", Value: int32(1)}}, "w", bson.E{Key: "v", Value: int32(1)})),
			code: 67, codeName: "CannotCreateIndex", msg: `Error in specification { key: { $**: 1 }, name: "w", v: 1 } :: caused by :: Index type 'wildcard' is not allowed with index version v: 1`},
		{name: "TTL not a number", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "expireAfterSeconds", Value: "1"})),
			code: 67, codeName: "CannotCreateIndex", msg: "must be numeric"},
		{name: "TTL negative", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "expireAfterSeconds", Value: int32(-1)})),
			code: 67, codeName: "CannotCreateIndex", msg: "cannot be less than 0"},
		{name: "TTL beyond 32 bits", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "expireAfterSeconds", Value: int64(1 << 31)})),
			code: 67, codeName: "CannotCreateIndex", msg: "32-bit integer"},
		// IndexCatalogImpl::_checkValidFilterExpressions.
		// index_key_validate::validateKeyPattern.
		{name: "index key NaN", cmd: idx("c", spec(bson.D{{Key: "a", Value: math.NaN()}}, "a_nan")),
			code: 67, codeName: "CannotCreateIndex", msg: "can't be NaN"},
		// index_key_validate::validateIndexSpec: a wildcardProjection only
		// on a wildcard key pattern, whatever its type.
		{name: "wildcardProjection on a text index", cmd: idx("c", spec(bson.D{{Key: "$**", Value: "text"}}, "t", bson.E{Key: "wildcardProjection", Value: bson.D{{Key: "a", Value: 1}}})),
			code: 2, codeName: "BadValue", msg: `Error in specification { key: { $**: "text" }, name: "t", wildcardProjection: { a: 1 } } :: caused by :: The field 'wildcardProjection' is only allowed in 'wildcard' indexes`},
		{name: "wildcardProjection not an object on a regular index", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "wildcardProjection", Value: 1})),
			code: 2, codeName: "BadValue", msg: "The field 'wildcardProjection' is only allowed in 'wildcard' indexes"},
		{name: "wildcard key NaN", cmd: idx("c", spec(bson.D{{Key: "$**", Value: math.NaN()}}, "w")),
			code: 67, codeName: "CannotCreateIndex", msg: "can't be NaN"},
		{name: "wildcard not the last component", cmd: idx("c", spec(bson.D{{Key: "a.$**.b", Value: 1}}, "w")),
			code: 67, codeName: "CannotCreateIndex", msg: "illegal field name"},
		{name: "index key with an empty part", cmd: idx("c", spec(bson.D{{Key: "a..b", Value: 1}}, "e")),
			code: 67, codeName: "CannotCreateIndex", msg: "Index keys cannot contain an empty field."},
		{name: "index key part starting with $", cmd: idx("c", spec(bson.D{{Key: "a.$x", Value: 1}}, "d")),
			code: 67, codeName: "CannotCreateIndex", msg: "Index key contains an illegal field name: field name starts with '$'."},
		{name: "index key starting with a DBRef field", cmd: idx("c", spec(bson.D{{Key: "$ref", Value: 1}}, "r")),
			code: 67, codeName: "CannotCreateIndex", msg: "Index key contains an illegal field name: field name starts with '$'."},
		{name: "partial and sparse", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "sparse", Value: true}, bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "a", Value: 1}}})),
			code: 67, codeName: "CannotCreateIndex", msg: `Error in specification { key: { a: 1 }, name: "a_1", sparse: true, partialFilterExpression: { a: 1 }, v: 2 } :: caused by :: cannot mix "partialFilterExpression" and "sparse" options`},
		{name: "partial filter with $ne", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$ne", Value: 5}}}}})),
			code: 67, codeName: "CannotCreateIndex", msg: `Error in specification { key: { a: 1 }, name: "a_1", partialFilterExpression: { a: { $ne: 5 } }, v: 2 } :: caused by :: Expression not supported in partial index: $not` + "\n    a $eq 5\n"},
		{name: "partial filter with $exists false", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$exists", Value: false}}}}})),
			code: 67, codeName: "CannotCreateIndex", msg: "Expression not supported in partial index: $not\n    a exists\n"},
		{name: "partial filter with $nor", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "$nor", Value: bson.A{bson.D{{Key: "a", Value: 1}}}}}})),
			code: 67, codeName: "CannotCreateIndex", msg: "Expression not supported in partial index: $nor\n    a $eq 1\n"},
		{name: "partial filter with a regex under $or", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "b", Value: bson.Regex{Pattern: "x"}}}}}}})),
			code: 67, codeName: "CannotCreateIndex", msg: "Expression not supported in partial index: b regex /x/\n"},
		{name: "partial filter too deep", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "b", Value: 1}}}}}, bson.D{{Key: "c", Value: 1}}}}}, bson.D{{Key: "d", Value: 1}}}}}, bson.D{{Key: "e", Value: 1}}}}}})),
			code: 67, codeName: "CannotCreateIndex", msg: "partialFilterExpression depth may not exceed 4"},
		{name: "partial filter of four nested $and", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: and(and(and(and(bson.D{{Key: "x", Value: 3}}))))})),
			code: 67, codeName: "CannotCreateIndex", msg: "partialFilterExpression depth may not exceed 4"},
		// index_key_validate::validateIndexSpec parses the filter with no
		// special feature allowed, in the context of the spec as given.
		{name: "partial filter with $expr", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$a", 5}}}}}})),
			code: 224, codeName: "QueryFeatureNotAllowed", msg: `Error in specification { key: { a: 1 }, name: "a_1", partialFilterExpression: { $expr: { $eq: [ "$a", 5 ] } } } :: caused by :: $expr is not allowed in this context`},
		{name: "partial filter with $jsonSchema", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "$jsonSchema", Value: bson.D{}}}})),
			code: 224, codeName: "QueryFeatureNotAllowed", msg: "$jsonSchema is not allowed in this context"},
		{name: "partial filter with $text", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "x"}}}}})),
			code: 2, codeName: "BadValue", msg: "$text is not allowed in this context"},
		{name: "partial filter with an unknown operator", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$asdasd", Value: 3}}}}})),
			code: 2, codeName: "BadValue", msg: `Error in specification { key: { a: 1 }, name: "a_1", partialFilterExpression: { a: { $asdasd: 3 } } } :: caused by :: unknown operator: $asdasd`},
		{name: "index collation option Folio does not implement", cmd: idx("c", spec(a1, "a_1", bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "ja"}, {Key: "strength", Value: 4}, {Key: "alternate", Value: "shifted"}}})),
			code: 238, codeName: "NotImplemented", msg: "alternate"},

		// Index conflicts (IndexCatalogImpl::_doesSpecConflictWithExisting).
		{name: "second name for the same key and options", setup: []bson.D{idx("c", spec(a1, "a_1"))}, cmd: idx("c", spec(a1, "other")),
			code: 85, codeName: "IndexOptionsConflict", msg: "Index already exists with a different name: a_1"},
		// Partial filters compare normalized (compareIndexOptions:
		// MatchExpression::equivalent after parseAndNormalize).
		{name: "second name for an equivalent partial filter", setup: []bson.D{idx("c", spec(a1, "a_p", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 2}}}, {Key: "b", Value: 1}}}))},
			cmd:  idx("c", spec(a1, "a_q", bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "b", Value: 1.0}}, and(bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 2}}}})}}}})),
			code: 85, codeName: "IndexOptionsConflict", msg: "Index already exists with a different name: a_p"},
		// Text indexes on their text fields alone share the key pattern
		// {_fts: "text", _ftsx: 1}; another key pattern meets the one text
		// index rule.
		{name: "second text index", setup: []bson.D{idx("c", spec(bson.D{{Key: "t", Value: "text"}}, "t_text"))}, cmd: idx("c", spec(bson.D{{Key: "u", Value: "text"}}, "u_text")),
			code: 85, codeName: "IndexOptionsConflict", msg: "An equivalent index already exists with a different name and options. Requested index: { v: 2, key: { _fts: \"text\", _ftsx: 1 }, name: \"u_text\", weights: { u: 1 }"},
		// The request is quoted with its resolved collation, which it
		// keeps after the other options (validateIndexSpecCollation).
		{name: "second name for the same key and collation, other options", setup: []bson.D{idx("c", spec(a1, "fr", bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}))},
			cmd:  idx("c", spec(a1, "fr_expire", bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}, bson.E{Key: "expireAfterSeconds", Value: int32(3600)})),
			code: 85, codeName: "IndexOptionsConflict", msg: "Requested index: { v: 2, key: { a: 1 }, name: \"fr_expire\", expireAfterSeconds: 3600, collation: { locale: \"fr\", caseLevel: false"},
		{name: "second text index of another key pattern", setup: []bson.D{idx("c", spec(bson.D{{Key: "t", Value: "text"}}, "t_text"))}, cmd: idx("c", spec(bson.D{{Key: "a", Value: int32(1)}, {Key: "u", Value: "text"}}, "a_u")),
			code: 67, codeName: "CannotCreateIndex", msg: `only one text index per collection allowed, found existing text index "t_text"`},
		{name: "the same index twice in one request", setup: []bson.D{insertC}, cmd: idx("c", spec(a1, "a_1"), spec(a1, "a_1")),
			code: 68, codeName: "IndexAlreadyExists", msg: "Identical index already exists: a_1"},
		{name: "same name for another key", setup: []bson.D{idx("c", spec(a1, "x"))}, cmd: idx("c", spec(b1, "x")),
			code: 86, codeName: "IndexKeySpecsConflict"},
		{name: "same name and key, other TTL", setup: []bson.D{idx("c", spec(a1, "a_1", bson.E{Key: "expireAfterSeconds", Value: int32(10)}))},
			cmd:  idx("c", spec(a1, "a_1", bson.E{Key: "expireAfterSeconds", Value: int32(20)})),
			code: 85, codeName: "IndexOptionsConflict", msg: "An equivalent index already exists with the same name but different options"},
		{name: "same name and key, other uniqueness", setup: []bson.D{idx("c", spec(a1, "a_1"))},
			cmd:  idx("c", spec(a1, "a_1", bson.E{Key: "unique", Value: true})),
			code: 86, codeName: "IndexKeySpecsConflict"},

		// Indexes differing only in uniqueness share a key pattern: it no longer names one index.
		{name: "dropIndexes by an ambiguous key pattern", setup: []bson.D{idx("c", spec(a1, "a_1"), spec(a1, "a_1_u", bson.E{Key: "unique", Value: true}))},
			cmd:  bson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: a1}},
			code: 181, codeName: "AmbiguousIndexKeyPattern", msg: "2 indexes found for key"},
		{name: "collMod by an ambiguous key pattern", setup: []bson.D{idx("c", spec(a1, "a_1"), spec(a1, "a_1_s", bson.E{Key: "sparse", Value: true}))},
			cmd:  bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "keyPattern", Value: a1}, {Key: "hidden", Value: true}}}},
			code: 181, codeName: "AmbiguousIndexKeyPattern"},
		{name: "hint by an ambiguous key pattern", setup: []bson.D{insertC, idx("c", spec(a1, "a_1"), spec(a1, "a_1_u", bson.E{Key: "unique", Value: true}))},
			cmd:  bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: a1}},
			code: 27, codeName: "IndexNotFound", msg: "Hint matched multiple indexes, must hint by index name"},
		{name: "dropIndexes of a missing key pattern", setup: []bson.D{idx("c", spec(a1, "a_1"))},
			cmd:  bson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: b1}},
			code: 27, codeName: "IndexNotFound", msg: "can't find index with key"},

		// create and collMod.
		{name: "create existing with other options", setup: []bson.D{{{Key: "create", Value: "c"}}},
			cmd:  bson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: int32(4096)}},
			code: 48, codeName: "NamespaceExists"},
		{name: "create with a collation option Folio does not implement", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "ja"}, {Key: "strength", Value: 5}, {Key: "alternate", Value: "shifted"}}}},
			code: 238, codeName: "NotImplemented", msg: "alternate"},
		// create_collection.cpp: a clustered collection has no _id index.
		{name: "create a clustered collection with an idIndex", cmd: bson.D{{Key: "create", Value: "c"},
			{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}},
			{Key: "idIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "_id_"}}}},
			code: 72, codeName: "InvalidOptions", msg: "The 'clusteredIndex' option is not supported with the 'idIndex' option"},
		// validateClusteredIndexSpec: the key must be {_id: 1} itself.
		{name: "create clustered on _id descending", cmd: bson.D{{Key: "create", Value: "c"},
			{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: -1}}}, {Key: "unique", Value: true}}}},
			code: 197, codeName: "InvalidIndexSpecificationOption", msg: "The clusteredIndex option is only supported for key: {_id: 1}"},
		{name: "create clustered on _id 1.5", cmd: bson.D{{Key: "create", Value: "c"},
			{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1.5}}}, {Key: "unique", Value: true}}}},
			code: 197, codeName: "InvalidIndexSpecificationOption", msg: "The clusteredIndex option is only supported for key: {_id: 1}"},
		{name: "create an unclustered collection with expiry", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "expireAfterSeconds", Value: 60}},
			code: 72, codeName: "InvalidOptions", msg: "requires clustering"},
		{name: "create with change stream images but no enabled", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "changeStreamPreAndPostImages", Value: bson.D{}}},
			code: 40414, codeName: "Location40414", msg: "changeStreamPreAndPostImages.enabled"},
		{name: "create without an _id index", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "autoIndexId", Value: false}},
			code: 50001, codeName: "Location50001", msg: "because it can be replicated"},
		{name: "create with a bad validationLevel", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "validationLevel", Value: "sometimes"}},
			code: 2, codeName: "BadValue"},
		{name: "create capped with size 0", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: int32(0)}},
			code: 51024, codeName: "Location51024"},
		{name: "create capped with max 2^31", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: int32(256)}, {Key: "max", Value: int64(1 << 31)}},
			code: 51024, codeName: "Location51024"},
		{name: "create capped without size", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}},
			code: 72, codeName: "InvalidOptions"},
		{name: "create with an unknown option", cmd: bson.D{{Key: "create", Value: "c"}, {Key: "noSuchOption", Value: 1}},
			code: 40415, codeName: "Location40415"},
		{name: "collMod of a missing collection", cmd: bson.D{{Key: "collMod", Value: "nope"}},
			code: 26, codeName: "NamespaceNotFound", msg: "ns does not exist"},
		{name: "collMod of an index of a missing collection",
			cmd:  bson.D{{Key: "collMod", Value: "nope"}, {Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "hidden", Value: true}}}},
			code: 26, codeName: "NamespaceNotFound"},

		// query_request_helper's hasInvalidNaturalParam and
		// validateAndGetAvailableMetadata (jstests natural.js,
		// natural_validation.js): $natural is exactly 1 or -1, alone, and a
		// hint beside a $natural sort is $natural the same way.
		{name: "$natural sort of 1.1", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: bson.D{{Key: "$natural", Value: 1.1}}}},
			code: 2, codeName: "BadValue", msg: "$natural sort cannot be set to a value other than -1 or 1."},
		{name: "$natural sort of a string", cmd: bson.D{{Key: "findAndModify", Value: "c"}, {Key: "sort", Value: bson.D{{Key: "$natural", Value: "-1"}}}, {Key: "remove", Value: true}},
			code: 2, codeName: "BadValue", msg: "$natural sort cannot be set"},
		{name: "$natural in a compound sort", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}, {Key: "$natural", Value: 1}}}},
			code: 2, codeName: "BadValue", msg: "$natural sort cannot be set"},
		{name: "$natural hint of 0", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "count", Value: "c"}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 0}}}},
			code: 2, codeName: "BadValue", msg: "$natural hint cannot be set to a value other than -1 or 1."},
		{name: "$natural in a compound hint", setup: []bson.D{insertC, idx("c", spec(a1, "a_1"))},
			cmd:  bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: bson.D{{Key: "a", Value: 1}, {Key: "$natural", Value: 1}}}},
			code: 2, codeName: "BadValue", msg: "$natural hint cannot be set"},
		// validateFindCommandRequest runs as the find command parses
		// (query_request_helper::makeFromFindCommand), before the
		// collection is looked up: a missing collection or a view fails
		// the same way; count and distinct run it as they canonicalize
		// their query, also for a missing collection.
		{name: "$natural hint of 2 on a missing collection",
			cmd:  bson.D{{Key: "find", Value: "missing"}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 2}}}},
			code: 2, codeName: "BadValue", msg: "$natural hint cannot be set to a value other than -1 or 1."},
		{name: "count with a $natural hint of 2 on a missing collection",
			cmd:  bson.D{{Key: "count", Value: "missing"}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 2}}}},
			code: 2, codeName: "BadValue", msg: "$natural hint cannot be set to a value other than -1 or 1."},
		{name: "distinct with a $natural hint of 0 on a missing collection",
			cmd:  bson.D{{Key: "distinct", Value: "missing"}, {Key: "key", Value: "a"}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 0}}}},
			code: 2, codeName: "BadValue", msg: "$natural hint cannot be set to a value other than -1 or 1."},
		{name: "$natural sort of 2 on a view", setup: []bson.D{{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}}},
			cmd:  bson.D{{Key: "find", Value: "v"}, {Key: "sort", Value: bson.D{{Key: "$natural", Value: 2}}}},
			code: 2, codeName: "BadValue", msg: "$natural sort cannot be set to a value other than -1 or 1."},
		{name: "tailable find with a sort, of a missing collection",
			cmd:  bson.D{{Key: "find", Value: "missing"}, {Key: "tailable", Value: true}, {Key: "sort", Value: a1}},
			code: 2, codeName: "BadValue", msg: "cannot use tailable option with a sort other than {$natural: 1}"},
		{name: "tailable find with a sort, of a view", setup: []bson.D{{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}}},
			cmd:  bson.D{{Key: "find", Value: "v"}, {Key: "tailable", Value: true}, {Key: "sort", Value: a1}},
			code: 2, codeName: "BadValue", msg: "cannot use tailable option with a sort other than {$natural: 1}"},
		{name: "index hint with a $natural sort", setup: []bson.D{insertC, idx("c", spec(a1, "a_1"))},
			cmd:  bson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: bson.D{{Key: "$natural", Value: 1}}}, {Key: "hint", Value: a1}},
			code: 2, codeName: "BadValue", msg: "index hint not allowed with $natural sort order"},
		{name: "$natural hint against the $natural sort", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: bson.D{{Key: "$natural", Value: -1}}}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}}},
			code: 2, codeName: "BadValue", msg: "$natural hint must be in the same direction as $natural sort order"},

		// Indexes of system collections, a time series' buckets aside,
		// are not hidden or unhidden (create_indexes.cpp and coll_mod.cpp;
		// hidden_index.js), even with hidden: false; nor is the _id index,
		// which takes no TTL either (collmod_convert_to_ttl.js).
		{name: "createIndexes hidden on a system collection", db: "admin",
			cmd:  bson.D{{Key: "createIndexes", Value: "system.version"}, {Key: "indexes", Value: bson.A{spec(a1, "a_1", bson.E{Key: "hidden", Value: true})}}},
			code: 2, codeName: "BadValue", msg: "Can't hide index on system collection"},
		{name: "createIndexes hidden false on a system collection", db: "admin",
			cmd:  bson.D{{Key: "createIndexes", Value: "system.version"}, {Key: "indexes", Value: bson.A{spec(b1, "b_1", bson.E{Key: "hidden", Value: false})}}},
			code: 2, codeName: "BadValue", msg: "Can't hide index on system collection"},
		{name: "collMod hidden on a system collection", db: "admin",
			setup: []bson.D{{{Key: "createIndexes", Value: "system.version"}, {Key: "indexes", Value: bson.A{spec(a1, "a_1")}}}},
			cmd:   bson.D{{Key: "collMod", Value: "system.version"}, {Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "hidden", Value: true}}}},
			code:  2, codeName: "BadValue", msg: "Can't hide index on system collection"},
		{name: "collMod hiding the _id index", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "_id_"}, {Key: "hidden", Value: true}}}},
			code: 2, codeName: "BadValue", msg: "can't hide _id index"},
		{name: "collMod TTL on the _id index by key", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "keyPattern", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "expireAfterSeconds", Value: 100}}}},
			code: 72, codeName: "InvalidOptions", msg: "the _id field does not support TTL indexes"},
		{name: "collMod TTL on the _id index by name", setup: []bson.D{insertC},
			cmd:  bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "_id_"}, {Key: "expireAfterSeconds", Value: 100}}}},
			code: 72, codeName: "InvalidOptions", msg: "the _id field does not support TTL indexes"},
		// create_indexes.cpp: sessions maintain no index of
		// config.transactions beside their own.
		{name: "createIndexes on config.transactions", db: "config",
			cmd:  bson.D{{Key: "createIndexes", Value: "transactions"}, {Key: "indexes", Value: bson.A{spec(a1, "a_1")}}},
			code: 20, codeName: "IllegalOperation", msg: "not allowed to create index on config.transactions"},
		{name: "createIndexes of no index on config.transactions", db: "config",
			cmd:  bson.D{{Key: "createIndexes", Value: "transactions"}, {Key: "indexes", Value: bson.A{}}},
			code: 20, codeName: "IllegalOperation"},

		// Hidden indexes cannot be hinted (manual, Hidden Indexes: "You cannot cursor.hint() a hidden index").
		{name: "hint of a hidden index by name",
			setup: []bson.D{insertC, idx("c", spec(a1, "a_1", bson.E{Key: "hidden", Value: true}))},
			cmd:   bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: "a_1"}},
			code:  2, codeName: "BadValue", msg: "hint provided does not correspond to an existing index"},
		{name: "hint of a hidden index by key",
			setup: []bson.D{insertC, idx("c", spec(a1, "a_1", bson.E{Key: "hidden", Value: true}))},
			cmd:   bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: a1}},
			code:  2, codeName: "BadValue"},

		// A NUL byte in a name a stage or expression writes at: FieldPath
		// refuses it (field_path.cpp), as do $arrayToObject and $unwind's
		// path; no BSON key can hold one. Each once closed the connection
		// with an InternalError.
		{name: "$lookup as with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "a"}, {Key: "as", Value: nul}}}}), code: 16411, codeName: "Location16411"},
		{name: "$lookup localField with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "localField", Value: nul}, {Key: "foreignField", Value: "a"}, {Key: "as", Value: "o"}}}}), code: 16411, codeName: "Location16411"},
		{name: "$lookup from the empty string", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: ""}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "a"}, {Key: "as", Value: "o"}}}}), code: 73, codeName: "InvalidNamespace"},
		{name: "$graphLookup depthField with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$graphLookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "startWith", Value: "$a"}, {Key: "connectFromField", Value: "a"}, {Key: "connectToField", Value: "a"}, {Key: "as", Value: "g"}, {Key: "depthField", Value: nul}}}}), code: 16411, codeName: "Location16411"},
		{name: "$unwind includeArrayIndex with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$a"}, {Key: "includeArrayIndex", Value: nul}}}}), code: 16411, codeName: "Location16411"},
		{name: "$unwind path with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$unwind", Value: "$" + nul}}), code: 16419, codeName: "Location16419"},
		{name: "$densify field with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$densify", Value: bson.D{{Key: "field", Value: nul}, {Key: "range", Value: bson.D{{Key: "step", Value: 1}, {Key: "bounds", Value: "full"}}}}}}), code: 16411, codeName: "Location16411"},
		{name: "$fill partitionByFields with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$fill", Value: bson.D{{Key: "partitionByFields", Value: bson.A{nul}}, {Key: "sortBy", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "output", Value: bson.D{{Key: "b", Value: bson.D{{Key: "method", Value: "locf"}}}}}}}}), code: 16411, codeName: "Location16411"},
		{name: "$geoNear distanceField with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$geoNear", Value: bson.D{{Key: "near", Value: bson.A{0, 0}}, {Key: "distanceField", Value: nul}}}}), code: 16411, codeName: "Location16411"},
		{name: "$geoNear includeLocs with an empty component", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$geoNear", Value: bson.D{{Key: "near", Value: bson.A{0, 0}}, {Key: "distanceField", Value: "d"}, {Key: "includeLocs", Value: "a..b"}}}}), code: 15998, codeName: "Location15998"},
		{name: "$unsetField with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$project", Value: bson.D{{Key: "o", Value: bson.D{{Key: "$unsetField", Value: bson.D{{Key: "field", Value: nul}, {Key: "input", Value: "$$ROOT"}}}}}}}}), code: 9534700, codeName: "Location9534700"},
		{name: "$unset with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$unset", Value: nul}}), code: 16411, codeName: "Location16411"},
		{name: "a field path expression with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$project", Value: bson.D{{Key: "o", Value: "$" + nul}}}}), code: 16411, codeName: "Location16411"},
		{name: "$arrayToObject pair key with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$project", Value: bson.D{{Key: "o", Value: bson.D{{Key: "$arrayToObject", Value: bson.A{bson.A{bson.A{nul, 1}}}}}}}}}), code: 4940400, codeName: "Location4940400"},
		{name: "$arrayToObject k with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$project", Value: bson.D{{Key: "o", Value: bson.D{{Key: "$arrayToObject", Value: bson.A{bson.A{bson.D{{Key: "k", Value: nul}, {Key: "v", Value: 1}}}}}}}}}}), code: 4940401, codeName: "Location4940401"},
		{name: "$setField with a NUL byte", setup: []bson.D{insertC},
			cmd: agg(bson.D{{Key: "$project", Value: bson.D{{Key: "o", Value: bson.D{{Key: "$setField", Value: bson.D{{Key: "field", Value: nul}, {Key: "input", Value: "$$ROOT"}, {Key: "value", Value: 1}}}}}}}}), code: 9534700, codeName: "Location9534700"},
		// A script's result converted to BSON: a property name with a NUL
		// byte and a cycle (mozjs ValueWriter's 16985 and 17279) were
		// written as invalid documents the driver could not read.
		{name: "$function returning a property with a NUL byte", setup: []bson.D{insertC},
			cmd:  agg(bson.D{{Key: "$project", Value: bson.D{{Key: "o", Value: bson.D{{Key: "$function", Value: bson.D{{Key: "body", Value: "function() { var o = {}; o['a' + String.fromCharCode(0)] = 1; return o }"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}}}}}}}),
			code: 16985, codeName: "Location16985"},
		{name: "$function returning a cycle", setup: []bson.D{insertC},
			cmd:  agg(bson.D{{Key: "$project", Value: bson.D{{Key: "o", Value: bson.D{{Key: "$function", Value: bson.D{{Key: "body", Value: "function() { var o = {}; o.self = o; return o }"}, {Key: "args", Value: bson.A{}}, {Key: "lang", Value: "js"}}}}}}}}),
			code: 17279, codeName: "Location17279"},
		{name: "an index name with a NUL byte", setup: []bson.D{insertC},
			cmd: idx("c", spec(a1, nul)), code: 67, codeName: "CannotCreateIndex"},
		{name: "mapReduce emitting a key with a NUL byte", setup: []bson.D{insertC},
			cmd: bson.D{{Key: "mapReduce", Value: "c"}, {Key: "map", Value: "function() { var k = {}; k['a' + String.fromCharCode(0)] = 1; emit(k, 1) }"},
				{Key: "reduce", Value: "function(k, v) { return 1 }"}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}},
			code: 16985, codeName: "Location16985"},
		{name: "a time series metaField with a NUL byte",
			cmd:  bson.D{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: nul}}}},
			code: 2, codeName: "BadValue"},
	}
	client, _ := startServer(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := client.Database("refused" + string(rune('a'+i/26)) + string(rune('a'+i%26)))
			if tt.db != "" {
				db = client.Database(tt.db)
			}
			for _, s := range tt.setup {
				if err := db.RunCommand(t.Context(), s).Err(); err != nil {
					t.Fatalf("setup %v: %v", s, err)
				}
			}
			before := indexNames(t, db, "c")
			err := db.RunCommand(t.Context(), tt.cmd).Err()
			requireCode(t, err, tt.code, tt.codeName)
			var ce mongo.CommandError
			if tt.msg != "" && (!errors.As(err, &ce) || !strings.Contains(ce.Message, tt.msg)) {
				t.Fatalf("message %q does not contain %q", err, tt.msg)
			}
			if after := indexNames(t, db, "c"); after != before {
				t.Fatalf("indexes changed from %q to %q", before, after)
			}
			if err := db.RunCommand(t.Context(), bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
				t.Fatalf("ping after the refusal: %v", err)
			}
		})
	}
}

// indexNames lists db.coll's index names, or "" when it does not exist.
func indexNames(t *testing.T, db *mongo.Database, coll string) string {
	t.Helper()
	cur, err := db.Collection(coll).Indexes().List(t.Context())
	if err != nil {
		return ""
	}
	var names []string
	for cur.Next(t.Context()) {
		names = append(names, cur.Current.Lookup("name").StringValue())
	}
	return strings.Join(names, ",")
}

// TestDuplicateIDRefused proves a document with two _id fields is refused
// with BadValue (2), as MongoDB's fixDocumentForInsert does, and is not
// stored, while the other documents of an unordered batch are; another
// repeated field name is stored as given, as MongoDB does.
func TestDuplicateIDRefused(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("dupid")
	docs := bson.A{
		bson.D{{Key: "_id", Value: 1}},
		bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 1}, {Key: "_id", Value: 3}},
		bson.D{{Key: "x", Value: 1}, {Key: "_id", Value: 4}, {Key: "_id", Value: 5}},
		bson.D{{Key: "_id", Value: 6}},
	}
	cmd := bson.D{{Key: "insert", Value: coll.Name()}, {Key: "documents", Value: docs}, {Key: "ordered", Value: false}}
	var we mongo.WriteException
	if err := coll.Database().RunCommand(t.Context(), cmd).Err(); !errors.As(err, &we) || len(we.WriteErrors) != 2 {
		t.Fatalf("insert: %v, want two write errors", err)
	}
	for i, e := range we.WriteErrors {
		if e.Index != i+1 || e.Code != 2 || e.Message != "can't have multiple _id fields in one document" {
			t.Fatalf("write error %d: %+v", i, e)
		}
	}
	n, err := coll.CountDocuments(t.Context(), bson.D{})
	if err != nil || n != 2 {
		t.Fatalf("stored %d documents (%v), want 2", n, err)
	}
	// MongoDB refuses only a repeated _id on insert; other repeated names
	// are stored as given (the manual calls such documents unsupported).
	dup := bson.D{{Key: "_id", Value: int32(7)}, {Key: "x", Value: int32(1)}, {Key: "x", Value: int32(2)}}
	if _, err := coll.InsertOne(t.Context(), dup); err != nil {
		t.Fatal(err)
	}
	got, err := coll.FindOne(t.Context(), bson.D{{Key: "_id", Value: 7}}).Raw()
	if err != nil || !bytesEqual(got, mustRaw(t, dup)) {
		t.Fatalf("stored %s (%v), want %s", got, err, mustRaw(t, dup))
	}
}

// TestRefusedInsertCreatesNoCollection proves an insert none of whose
// documents reaches storage (each refused as MongoDB's
// fixDocumentForInsert refuses it) leaves a missing collection missing, as
// insert1.js and insert_id_undefined.js check; one stored document creates
// it, and an ordered batch stops at its refused first document.
func TestRefusedInsertCreatesNoCollection(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	exists := func(name string) bool {
		names, err := db.ListCollectionNames(t.Context(), bson.D{{Key: "name", Value: name}})
		if err != nil {
			t.Fatal(err)
		}
		return len(names) == 1
	}
	insert := func(name string, ordered bool, docs ...any) int {
		cmd := bson.D{{Key: "insert", Value: name}, {Key: "documents", Value: bson.A(docs)}, {Key: "ordered", Value: ordered}}
		var we mongo.WriteException
		if err := db.RunCommand(t.Context(), cmd).Err(); !errors.As(err, &we) {
			t.Fatalf("insert into %s: %v, want write errors", name, err)
		}
		for _, e := range we.WriteErrors {
			if e.Code != 53 {
				t.Fatalf("insert into %s: %+v, want InvalidIdField", name, e)
			}
		}
		return len(we.WriteErrors)
	}
	regexID := bson.D{{Key: "_id", Value: bson.Regex{Pattern: "x"}}}
	arrayID := bson.D{{Key: "_id", Value: bson.A{1}}}
	if n := insert("none", false, regexID, arrayID); n != 2 || exists("none") {
		t.Fatalf("%d errors, collection created %v; want 2 errors and no collection", n, exists("none"))
	}
	if n := insert("first", true, regexID, bson.D{{Key: "_id", Value: 1}}); n != 1 || exists("first") {
		t.Fatalf("ordered: %d errors, collection created %v; want 1 error and no collection", n, exists("first"))
	}
	if n := insert("some", false, regexID, bson.D{{Key: "_id", Value: 1}}); n != 1 || !exists("some") {
		t.Fatalf("unordered: %d errors, collection created %v; want 1 error and the collection", n, exists("some"))
	}
}

// TestCreateIndexesOptions proves ignoreUnknownIndexOptions drops unknown
// fields (as mongorestore relies on), storageEngine is kept and reported,
// and indexes that differ only in uniqueness or sparseness coexist (they
// are part of the index signature since MongoDB 5.0).
func TestCreateIndexesOptions(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	storage := bson.D{{Key: "wiredTiger", Value: bson.D{{Key: "configString", Value: "block_compressor=zstd"}}}}
	cmd := bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: int32(1)}}}, {Key: "name", Value: "a_1"}, {Key: "someField", Value: "x"}, {Key: "storageEngine", Value: storage}},
		bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: int32(1)}}}, {Key: "name", Value: "a_1_unique"}, {Key: "unique", Value: true}},
		bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: int32(1)}}}, {Key: "name", Value: "a_1_sparse"}, {Key: "sparse", Value: true}},
	}}, {Key: "ignoreUnknownIndexOptions", Value: true}}
	if err := db.RunCommand(t.Context(), cmd).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := db.Collection("c").Indexes().List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var specs []bson.Raw
	if err := cur.All(t.Context(), &specs); err != nil {
		t.Fatal(err)
	}
	if len(specs) != 4 {
		t.Fatalf("indexes %v, want _id_ and three on a", specs)
	}
	want := mustRaw(t, bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "a", Value: int32(1)}}}, {Key: "name", Value: "a_1"}, {Key: "storageEngine", Value: storage}})
	if !bytesEqual(specs[1], want) {
		t.Fatalf("a_1 is %s, want %s", specs[1], want)
	}
	// Asking again for the same definitions is a no-op.
	var res struct {
		Before int32  `bson:"numIndexesBefore"`
		After  int32  `bson:"numIndexesAfter"`
		Note   string `bson:"note"`
	}
	if err := db.RunCommand(t.Context(), cmd).Decode(&res); err != nil || res.Before != 4 || res.After != 4 || res.Note != "all indexes already exist" {
		t.Fatalf("again: %+v %v", res, err)
	}
	// An index of key {_id: 1} is named _id_ whatever name it is given
	// (IndexCatalogImpl::_fixIndexSpec): it is the _id index, which
	// exists.
	idAgain := bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "myid"}}}}}
	res = struct {
		Before int32  `bson:"numIndexesBefore"`
		After  int32  `bson:"numIndexesAfter"`
		Note   string `bson:"note"`
	}{}
	if err := db.RunCommand(t.Context(), idAgain).Decode(&res); err != nil || res.Before != 4 || res.After != 4 || res.Note != "all indexes already exist" {
		t.Fatalf("_id index under another name: %+v %v", res, err)
	}
	// With two of the three hidden, the key pattern names one index a hint
	// can use.
	for _, name := range []string{"a_1", "a_1_sparse"} {
		hide := bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: name}, {Key: "hidden", Value: true}}}}
		if err := db.RunCommand(t.Context(), hide).Err(); err != nil {
			t.Fatal(err)
		}
	}
	find := bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: bson.D{{Key: "a", Value: int32(1)}}}}
	if err := db.RunCommand(t.Context(), find).Err(); err != nil {
		t.Fatalf("hint by the key pattern of one visible index: %v", err)
	}
}

// TestListCollectionsOptions proves listCollections reports the options a
// collection was created with, in MongoDB's order and types (numbers are
// int32 when they fit, sizes rounded up to 256), the info and idIndex
// documents, and that its filter sees all of them. mongorestore recreates
// a capped collection from options.capped and options.size.
func TestListCollectionsOptions(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	storage := bson.D{{Key: "wiredTiger", Value: bson.D{}}}
	creates := []bson.D{
		{{Key: "create", Value: "plain"}},
		{{Key: "create", Value: "capped"}, {Key: "max", Value: int64(10)}, {Key: "size", Value: int64(1000)}, {Key: "capped", Value: true}},
		{{Key: "create", Value: "big"}, {Key: "capped", Value: true}, {Key: "size", Value: float64(5 << 30)}},
		{{Key: "create", Value: "zeromax"}, {Key: "capped", Value: true}, {Key: "size", Value: int32(256)}, {Key: "max", Value: int32(0)}},
		// size and max are safeInt64s: a fraction is truncated.
		{{Key: "create", Value: "fractions"}, {Key: "capped", Value: true}, {Key: "size", Value: 1000.7}, {Key: "max", Value: 10.9}},
		{{Key: "create", Value: "tuned"}, {Key: "validationAction", Value: "warn"}, {Key: "storageEngine", Value: storage},
			{Key: "indexOptionDefaults", Value: bson.D{{Key: "storageEngine", Value: storage}}}, {Key: "autoIndexId", Value: true},
			{Key: "validationLevel", Value: "moderate"}},
		// (idIndex with autoIndexId is InvalidOptions)
		{{Key: "create", Value: "withid"},
			{Key: "idIndex", Value: bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}}}},
	}
	for _, c := range creates {
		if err := db.RunCommand(ctx, c).Err(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		// The same create again succeeds: the options are the same.
		if err := db.RunCommand(ctx, c).Err(); err != nil {
			t.Fatalf("%v again: %v", c, err)
		}
	}
	wantOptions := map[string]bson.D{
		"plain":  {},
		"capped": {{Key: "capped", Value: true}, {Key: "size", Value: int32(1024)}, {Key: "max", Value: int32(10)}},
		"big":    {{Key: "capped", Value: true}, {Key: "size", Value: int64(5 << 30)}},
		// MongoDB stores a max of 0 or less as 2^31-1 (CollectionOptions' adjustCappedMaxDocs).
		"zeromax":   {{Key: "capped", Value: true}, {Key: "size", Value: int32(256)}, {Key: "max", Value: int32(1<<31 - 1)}},
		"fractions": {{Key: "capped", Value: true}, {Key: "size", Value: int32(1024)}, {Key: "max", Value: int32(10)}},
		"withid":    {},
		"tuned": {{Key: "autoIndexId", Value: true}, {Key: "storageEngine", Value: storage},
			{Key: "indexOptionDefaults", Value: bson.D{{Key: "storageEngine", Value: storage}}},
			{Key: "validationLevel", Value: "moderate"}, {Key: "validationAction", Value: "warn"}},
	}
	cur, err := db.ListCollections(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var infos []bson.Raw
	if err := cur.All(ctx, &infos); err != nil {
		t.Fatal(err)
	}
	if len(infos) != len(wantOptions) {
		t.Fatalf("listed %d collections, want %d", len(infos), len(wantOptions))
	}
	for _, info := range infos {
		name := info.Lookup("name").StringValue()
		uuid := info.Lookup("info", "uuid")
		if sub, data := uuid.Binary(); sub != 4 || len(data) != 16 {
			t.Fatalf("%s: info.uuid %v", name, uuid)
		}
		want := mustRaw(t, bson.D{
			{Key: "name", Value: name},
			{Key: "type", Value: "collection"},
			{Key: "options", Value: wantOptions[name]},
			{Key: "info", Value: bson.D{{Key: "readOnly", Value: false}, {Key: "uuid", Value: uuid}}},
			{Key: "idIndex", Value: bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}}},
		})
		if !bytesEqual(info, want) {
			t.Fatalf("listCollections entry\n got %s\nwant %s", info, want)
		}
	}
	filters := []struct {
		filter bson.D
		want   []string
	}{
		{bson.D{{Key: "options.capped", Value: true}}, []string{"big", "capped", "fractions", "zeromax"}},
		{bson.D{{Key: "options.size", Value: bson.D{{Key: "$lt", Value: 2000}}}}, []string{"capped", "fractions", "zeromax"}},
		{bson.D{{Key: "options.validationLevel", Value: "moderate"}}, []string{"tuned"}},
		{bson.D{{Key: "info.readOnly", Value: false}, {Key: "name", Value: bson.D{{Key: "$regex", Value: "^p"}}}}, []string{"plain"}},
		{bson.D{{Key: "type", Value: "view"}}, nil},
		{bson.D{{Key: "idIndex.name", Value: "_id_"}, {Key: "options", Value: bson.D{}}}, []string{"plain", "withid"}},
	}
	// With nameOnly (what ListCollectionNames sends) the filter sees only
	// name and type (manual, listCollections: "When nameOnly is true, your
	// filter expression can only filter based on a collection's name and
	// type").
	if got, err := db.ListCollectionNames(ctx, bson.D{{Key: "options.capped", Value: true}}); err != nil || len(got) != 0 {
		t.Fatalf("nameOnly filter on options: %v %v, want none", got, err)
	}
	if got, err := db.ListCollectionNames(ctx, bson.D{{Key: "type", Value: "collection"}, {Key: "name", Value: "big"}}); err != nil || len(got) != 1 {
		t.Fatalf("nameOnly filter on name and type: %v %v, want [big]", got, err)
	}
	for _, f := range filters {
		cur, err := db.ListCollections(ctx, f.filter)
		if err != nil {
			t.Fatalf("filter %v: %v", f.filter, err)
		}
		var got []string
		for cur.Next(ctx) {
			got = append(got, cur.Current.Lookup("name").StringValue())
		}
		if strings.Join(got, ",") != strings.Join(f.want, ",") {
			t.Fatalf("filter %v: got %v, want %v", f.filter, got, f.want)
		}
	}
}

func bytesEqual(a, b bson.Raw) bool { return string(a) == string(b) }

// TestEmptyOperandUpdates proves an empty operator operand is a no-op
// through every update path, as in MongoDB 5.0 and later (manual, $set:
// "mongod no longer raises an error when you use an update operator like
// $set with an empty operand expression"): the document matches but is not
// modified, and an upsert inserts the document its query describes.
func TestEmptyOperandUpdates(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("empty")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "a", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	empty := bson.D{{Key: "$set", Value: bson.D{}}}
	res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, empty)
	if err != nil || res.MatchedCount != 1 || res.ModifiedCount != 0 {
		t.Fatalf("updateOne: %+v %v", res, err)
	}
	res, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: int32(5)}}, bson.D{{Key: "$set", Value: bson.D{}}, {Key: "$inc", Value: bson.D{}}}, options.UpdateOne().SetUpsert(true))
	if err != nil || res.UpsertedCount != 1 {
		t.Fatalf("upsert: %+v %v", res, err)
	}
	got, err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$unset", Value: bson.D{}}, {Key: "$set", Value: bson.D{{Key: "b", Value: int32(2)}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Raw()
	want := mustRaw(t, bson.D{{Key: "_id", Value: int32(1)}, {Key: "a", Value: int32(1)}, {Key: "b", Value: int32(2)}})
	if err != nil || !bytesEqual(got, want) {
		t.Fatalf("findAndModify: %s %v, want %s", got, err, want)
	}
	requireDocs(t, coll, `{"_id": 1, "a": 1, "b": 2}`, `{"_id": 5}`)
}

// requireDocs fails unless coll holds exactly the documents given in
// Extended JSON, in _id order.
func requireDocs(t *testing.T, coll *mongo.Collection, want ...string) {
	t.Helper()
	got := findAll(t, coll, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if len(got) != len(want) {
		t.Fatalf("%s holds %v, want %v", coll.Name(), got, want)
	}
	for i, w := range want {
		var d bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(w), false, &d); err != nil {
			t.Fatal(err)
		}
		if !bytesEqual(got[i], d) {
			t.Fatalf("%s document %d is %s, want %s", coll.Name(), i, got[i], d)
		}
	}
}

// TestListCollectionsByName checks filters that name one collection,
// which Folio answers without listing the others, against the whole
// listing filtered the same way: collections, a view, a time series
// collection, the oplog, a missing name, and a name with other conditions.
func TestListCollectionsByName(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	for _, c := range []bson.D{
		{{Key: "create", Value: "plain"}},
		{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}, {Key: "size", Value: int32(4096)}},
		{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "plain"}, {Key: "pipeline", Value: bson.A{}}},
		{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}},
	} {
		if err := db.RunCommand(ctx, c).Err(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
	list := func(db *mongo.Database, filter bson.D) []bson.Raw {
		t.Helper()
		cur, err := db.ListCollections(ctx, filter)
		if err != nil {
			t.Fatal(err)
		}
		var out []bson.Raw
		if err := cur.All(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		db     string
		filter bson.D
	}{
		{testDB, bson.D{{Key: "name", Value: "plain"}}},
		{testDB, bson.D{{Key: "name", Value: "capped"}}},
		{testDB, bson.D{{Key: "name", Value: "v"}}},
		{testDB, bson.D{{Key: "name", Value: "ts"}}},
		{testDB, bson.D{{Key: "name", Value: "system.buckets.ts"}}},
		{testDB, bson.D{{Key: "name", Value: "system.views"}}},
		{testDB, bson.D{{Key: "name", Value: "missing"}}},
		{testDB, bson.D{{Key: "name", Value: "plain"}, {Key: "type", Value: "view"}}},
		{testDB, bson.D{{Key: "type", Value: "view"}, {Key: "name", Value: "v"}}},
		{"local", bson.D{{Key: "name", Value: "oplog.rs"}}},
	} {
		got := list(client.Database(tc.db), tc.filter)
		var want []bson.Raw
		for _, info := range list(client.Database(tc.db), bson.D{}) {
			ok := true
			for _, e := range tc.filter {
				if info.Lookup(e.Key).StringValue() != e.Value.(string) {
					ok = false
				}
			}
			if ok {
				want = append(want, info)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s %v: listed %v, want %v", tc.db, tc.filter, got, want)
		}
	}
}

// TestListCollectionsOrder: listCollections lists the collections before
// the views, as MongoDB's reads its collection catalog and then its view
// catalog, and a time series collection just before its buckets
// collection, where MongoDB adds it (list_collections.cpp,
// perCollectionWork); with nameOnly and with a filter naming them too.
func TestListCollectionsOrder(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	for _, c := range []bson.D{
		{{Key: "create", Value: "zcoll"}},
		{{Key: "create", Value: "b"}},
		{{Key: "create", Value: "aview"}, {Key: "viewOn", Value: "b"}, {Key: "pipeline", Value: bson.A{}}},
		{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}},
	} {
		if err := db.RunCommand(ctx, c).Err(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
	for _, tc := range []struct {
		opts bson.D
		want string
	}{
		{nil, "[b ts system.buckets.ts system.views zcoll aview]"},
		{bson.D{{Key: "nameOnly", Value: true}}, "[b ts system.buckets.ts system.views zcoll aview]"},
		{bson.D{{Key: "filter", Value: bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{"aview", "zcoll", "ts"}}}}}}}, "[ts zcoll aview]"},
	} {
		r, err := runCmd(client, testDB, append(bson.D{{Key: "listCollections", Value: 1}}, tc.opts...))
		if err != nil {
			t.Fatalf("%v: %v", tc.opts, err)
		}
		var names []string
		infos, _ := r.Lookup("cursor", "firstBatch").Array().Values()
		for _, info := range infos {
			names = append(names, info.Document().Lookup("name").StringValue())
		}
		if got := fmt.Sprint(names); got != tc.want {
			t.Errorf("listCollections %v: %s, want %s", tc.opts, got, tc.want)
		}
	}
}

// TestIndexBackgroundKept: an index's background option changes nothing
// (MongoDB builds every index the same way since 4.2) but is kept in its
// specification, across a restart; listIndexes reports it as a boolean,
// as MongoDB's ListIndexesReplyItem declares it (safeBool).
func TestIndexBackgroundKept(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	ctx := context.Background()
	spec := func(name string, background any) bson.D {
		return bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: name, Value: int32(1)}}}, {Key: "name", Value: name + "_1"}, {Key: "background", Value: background}}
	}
	want := []bson.D{spec("a", false), spec("b", true), spec("c", true)}
	check := func(in *instance.Instance) {
		t.Helper()
		client := dial(t, in)
		defer client.Disconnect(ctx)
		requireIndexSpecs(t, client.Database(testDB).Collection("bg"), want)
	}
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, first)
	var indexes bson.A
	for _, w := range append(want[:2:2], spec("c", int32(1))) {
		indexes = append(indexes, w[1:])
	}
	if err := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "bg"}, {Key: "indexes", Value: indexes}}).Err(); err != nil {
		t.Fatal(err)
	}
	check(first)
	client.Disconnect(ctx)
	check(restart(t, first, cfg))
}

// TestHintOnMissingCollection: a read of a collection that does not exist
// answers nothing without checking its hint, as MongoDB plans it as EOF;
// on an existing collection the same hint fails.
func TestHintOnMissingCollection(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := t.Context()
	for _, hint := range []any{"no_such_index", bson.D{{Key: "x", Value: 1}}} {
		for _, cmd := range []bson.D{
			{{Key: "find", Value: "missing"}, {Key: "hint", Value: hint}},
			{{Key: "count", Value: "missing"}, {Key: "hint", Value: hint}},
			{{Key: "distinct", Value: "missing"}, {Key: "key", Value: "x"}, {Key: "hint", Value: hint}},
			{{Key: "aggregate", Value: "missing"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "hint", Value: hint}},
		} {
			if err := db.RunCommand(ctx, cmd).Err(); err != nil {
				t.Errorf("%v: %v", cmd, err)
			}
		}
	}
	if _, err := db.Collection("present").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "present"}, {Key: "hint", Value: "no_such_index"}}).Err()
	requireCode(t, err, 2, "BadValue")
}

// TestListIndexesDeclaredShape: listIndexes reports each specification
// as MongoDB's ListIndexesReplyItem declares it, whatever types and order
// createIndexes was given: fields in the declaration's order, flags as
// booleans, expireAfterSeconds, bits and the index versions as 32-bit
// integers, 2d bounds as doubles (mongorestore rebuilds TTL indexes from
// these, and MongoDB's own tools expect expireAfterSeconds as an int32).
// The options of another index type (validateIndexSpec checks only their
// types) are kept as given, also across a restart; dropDups is removed
// (IndexCatalogImpl::_fixIndexSpec, index_dropdups_ignore.js).
func TestListIndexesDeclaredShape(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	in, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	given := bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}, {Key: "sparse", Value: 1.0},
			{Key: "expireAfterSeconds", Value: int64(1000)}, {Key: "unique", Value: int64(1)}, {Key: "background", Value: int32(0)}},
		bson.D{{Key: "key", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "name", Value: "b_1"}, {Key: "expireAfterSeconds", Value: 10.7},
			{Key: "partialFilterExpression", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 1}}}}}, {Key: "hidden", Value: true}},
		bson.D{{Key: "key", Value: bson.D{{Key: "p", Value: "2d"}}}, {Key: "name", Value: "p_2d"}, {Key: "max", Value: int64(100)},
			{Key: "min", Value: int32(-100)}, {Key: "bits", Value: 20.0}},
		bson.D{{Key: "key", Value: bson.D{{Key: "c", Value: -1}}}, {Key: "name", Value: "c_-1"}, {Key: "dropDups", Value: int32(1)},
			{Key: "finestIndexedLevel", Value: int64(20)}, {Key: "coarsestIndexedLevel", Value: 5.0}, {Key: "bits", Value: 2.9},
			{Key: "max", Value: int64(10)}, {Key: "min", Value: int32(1)}, {Key: "2dsphereIndexVersion", Value: int32(1)},
			{Key: "textIndexVersion", Value: 1.0}, {Key: "language_override", Value: "lang"}, {Key: "default_language", Value: "french"}},
		bson.D{{Key: "key", Value: bson.D{{Key: "t", Value: "text"}}}, {Key: "name", Value: "t_text"}, {Key: "bits", Value: int32(2)},
			{Key: "2dsphereIndexVersion", Value: int64(2)}, {Key: "min", Value: 1.5}},
	}
	want := []bson.D{
		{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "a", Value: int32(1)}}}, {Key: "name", Value: "a_1"}, {Key: "background", Value: false},
			{Key: "unique", Value: true}, {Key: "sparse", Value: true}, {Key: "expireAfterSeconds", Value: int32(1000)}},
		{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "b", Value: int32(1)}}}, {Key: "name", Value: "b_1"}, {Key: "hidden", Value: true},
			{Key: "partialFilterExpression", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: int32(1)}}}}}, {Key: "expireAfterSeconds", Value: int32(10)}},
		{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "p", Value: "2d"}}}, {Key: "name", Value: "p_2d"}, {Key: "bits", Value: int32(20)},
			{Key: "min", Value: -100.0}, {Key: "max", Value: 100.0}},
		{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "c", Value: int32(-1)}}}, {Key: "name", Value: "c_-1"},
			{Key: "default_language", Value: "french"}, {Key: "language_override", Value: "lang"}, {Key: "textIndexVersion", Value: int32(1)},
			{Key: "2dsphereIndexVersion", Value: int32(1)}, {Key: "bits", Value: int32(2)}, {Key: "min", Value: 1.0}, {Key: "max", Value: 10.0},
			{Key: "coarsestIndexedLevel", Value: int32(5)}, {Key: "finestIndexedLevel", Value: int32(20)}},
		{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_fts", Value: "text"}, {Key: "_ftsx", Value: int32(1)}}}, {Key: "name", Value: "t_text"},
			{Key: "weights", Value: bson.D{{Key: "t", Value: int32(1)}}}, {Key: "default_language", Value: "english"}, {Key: "language_override", Value: "language"},
			{Key: "textIndexVersion", Value: int32(3)}, {Key: "2dsphereIndexVersion", Value: int32(2)}, {Key: "bits", Value: int32(2)}, {Key: "min", Value: 1.5}},
	}
	client := dial(t, in)
	db := client.Database(testDB)
	create := bson.D{{Key: "createIndexes", Value: "shape"}, {Key: "indexes", Value: given}}
	if err := db.RunCommand(ctx, create).Err(); err != nil {
		t.Fatal(err)
	}
	requireIndexSpecs(t, db.Collection("shape"), want)
	// Asked again, the index versions and dropDups aside, a kept option
	// that differs is another definition (compareIndexOptions).
	again := func(name string, field bson.E) error {
		for _, g := range given {
			if spec := g.(bson.D); spec[1].Value == name {
				spec = slices.DeleteFunc(slices.Clone(spec), func(e bson.E) bool { return e.Key == field.Key })
				spec = append(spec, field)
				return db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "shape"}, {Key: "indexes", Value: bson.A{spec}}}).Err()
			}
		}
		t.Fatalf("no index %s", name)
		return nil
	}
	for _, f := range []bson.E{{Key: "2dsphereIndexVersion", Value: int32(3)}, {Key: "textIndexVersion", Value: int32(2)}, {Key: "dropDups", Value: false}} {
		if err := again("c_-1", f); err != nil {
			t.Errorf("c_-1 again with %v: %v", f, err)
		}
	}
	for _, c := range []struct {
		name  string
		field bson.E
	}{{"c_-1", bson.E{Key: "bits", Value: int32(3)}}, {"c_-1", bson.E{Key: "default_language", Value: "none"}},
		{"p_2d", bson.E{Key: "bits", Value: int32(21)}}, {"t_text", bson.E{Key: "max", Value: int32(1)}}} {
		requireCode(t, again(c.name, c.field), 85, "IndexOptionsConflict")
	}
	client.Disconnect(ctx)
	client = dial(t, restart(t, in, cfg))
	defer client.Disconnect(ctx)
	requireIndexSpecs(t, client.Database(testDB).Collection("shape"), want)
}

// requireIndexSpecs fails unless listIndexes reports _id_ and then want,
// byte for byte.
func requireIndexSpecs(t *testing.T, coll *mongo.Collection, want []bson.D) {
	t.Helper()
	cur, err := coll.Indexes().List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var specs []bson.Raw
	if err := cur.All(t.Context(), &specs); err != nil {
		t.Fatal(err)
	}
	if len(specs) != len(want)+1 {
		t.Fatalf("indexes %v, want _id_ and %d more", specs, len(want))
	}
	for i, w := range want {
		if !bytesEqual(specs[i+1], mustRaw(t, w)) {
			t.Errorf("index %d is %s, want %s", i+1, specs[i+1], mustRaw(t, w))
		}
	}
}

// fieldsKey is {f0: 1, ..., f(n-1): 1}, an index key or sort of n fields.
func fieldsKey(n int) bson.D {
	var d bson.D
	for i := range n {
		d = append(d, bson.E{Key: fmt.Sprintf("f%d", i), Value: int32(1)})
	}
	return d
}
