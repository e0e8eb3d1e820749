package driver_test

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// msgCase is a command refused with MongoDB 7.0's code and message (the
// expectations of FerretDB's integration suite, run against MongoDB
// 7.0.8, and MongoDB's source), run on db (testDB when empty) holding
// the collection c with {_id: 1}.
type msgCase struct {
	name string
	db   string
	cmd  bson.D
	code int32
	msg  string
}

// runMessageCases runs cases on one server and checks each error's code
// and whole message.
func runMessageCases(t *testing.T, cases []msgCase) {
	t.Helper()
	client, _ := startServer(t)
	if _, err := client.Database(testDB).Collection("c").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db
			if db == "" {
				db = testDB
			}
			err := client.Database(db).RunCommand(t.Context(), tc.cmd).Err()
			var ce mongo.CommandError
			if !errors.As(err, &ce) || ce.Code != tc.code || ce.Message != tc.msg {
				t.Fatalf("error %v, want %d %q", err, tc.code, tc.msg)
			}
		})
	}
}

// TestIDLTypeMessages: a field of several types names them as MongoDB's
// IDL does, the closing quote inside the bracket.
func TestIDLTypeMessages(t *testing.T) {
	numbers := "expected types '[long, int, decimal, double']"
	runMessageCases(t, []msgCase{
		{name: "collStats scale a string", cmd: bson.D{{Key: "collStats", Value: "c"}, {Key: "scale", Value: "x"}}, code: 14,
			msg: "BSON field 'collStats.scale' is the wrong type 'string', " + numbers},
		{name: "collStats scale an object", cmd: bson.D{{Key: "collStats", Value: "c"}, {Key: "scale", Value: bson.D{{Key: "a", Value: 1}}}}, code: 14,
			msg: "BSON field 'collStats.scale' is the wrong type 'object', " + numbers},
		{name: "dbStats scale a string", cmd: bson.D{{Key: "dbStats", Value: 1}, {Key: "scale", Value: "1"}}, code: 14,
			msg: "BSON field 'dbStats.scale' is the wrong type 'string', " + numbers},
		{name: "dbStats scale an object", cmd: bson.D{{Key: "dbStats", Value: 1}, {Key: "scale", Value: bson.D{{Key: "a", Value: 1}}}}, code: 14,
			msg: "BSON field 'dbStats.scale' is the wrong type 'object', " + numbers},
		{name: "$collStats storageStats scale a string", cmd: bson.D{{Key: "aggregate", Value: "c"},
			{Key: "pipeline", Value: bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{{Key: "scale", Value: "x"}}}}}}}},
			{Key: "cursor", Value: bson.D{}}}, code: 14,
			msg: "BSON field '$collStats.storageStats.scale' is the wrong type 'string', " + numbers},
		{name: "aggregate maxTimeMS a string", cmd: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}},
			{Key: "cursor", Value: bson.D{}}, {Key: "maxTimeMS", Value: "1"}}, code: 14,
			msg: "BSON field 'aggregate.maxTimeMS' is the wrong type 'string', " + numbers},
		{name: "getParameter showDetails a string", db: "admin", cmd: bson.D{{Key: "getParameter", Value: bson.D{{Key: "showDetails", Value: "1"}}}, {Key: "quiet", Value: true}}, code: 14,
			msg: "BSON field 'getParameter.showDetails' is the wrong type 'string', expected types '[bool, long, int, decimal, double']"},
	})
}

// aggregateCmd is an aggregate of pipeline on c.
func aggregateCmd(pipeline ...bson.D) bson.D {
	stages := bson.A{}
	for _, st := range pipeline {
		stages = append(stages, st)
	}
	return bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: stages}, {Key: "cursor", Value: bson.D{}}}
}

// TestExpressionObjectMessages: an expression object of several fields is
// refused with Expression::parseExpression's text, and in $addFields or
// $set first by its specification's validator, which shows the whole
// specification.
func TestExpressionObjectMessages(t *testing.T) {
	twoOps := bson.D{{Key: "$type", Value: 42}, {Key: "$op", Value: 42}}
	runMessageCases(t, []msgCase{
		{name: "group _id", cmd: aggregateCmd(bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: twoOps}}}}), code: 15983,
			msg: "An object representing an expression must have exactly one field: { $type: 42, $op: 42 }"},
		{name: "find $expr", cmd: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "$expr", Value: twoOps}}}}, code: 15983,
			msg: "An object representing an expression must have exactly one field: { $type: 42, $op: 42 }"},
		{name: "addFields", cmd: aggregateCmd(bson.D{{Key: "$addFields", Value: bson.D{{Key: "v", Value: twoOps}}}}), code: 40181,
			msg: "Invalid $addFields :: caused by :: an expression specification must contain exactly one field, the name of the expression. Found 2 fields in { $type: 42, $op: 42 }, while parsing object { v: { $type: 42, $op: 42 } }"},
		{name: "set conflicting paths", cmd: aggregateCmd(bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}, {Key: "a.b", Value: 1}}}}), code: 40176,
			msg: "Invalid $set :: caused by :: specification contains two conflicting paths. Cannot specify both 'a.b' and 'a': { a: 1, a.b: 1 }"},
		{name: "project", cmd: aggregateCmd(bson.D{{Key: "$project", Value: bson.D{{Key: "v", Value: twoOps}}}}), code: 16410,
			msg: "Invalid $project :: caused by :: FieldPath field names may not start with '$'. Consider using $getField or $setField."},
	})
}

// TestLookupArgumentMessages: $lookup's mistyped arguments are named in
// its messages with the whole element, name and value, as
// DocumentSourceLookUp::createFromBson streams it; an empty as or
// localField is an absent one, and a let without a pipeline is refused.
func TestLookupArgumentMessages(t *testing.T) {
	lookup := func(spec bson.D) bson.D { return aggregateCmd(bson.D{{Key: "$lookup", Value: spec}}) }
	runMessageCases(t, []msgCase{
		{name: "localField a number", cmd: lookup(bson.D{{Key: "from", Value: "o"}, {Key: "localField", Value: int32(1)}, {Key: "foreignField", Value: "b"}, {Key: "as", Value: "r"}}), code: 9,
			msg: "$lookup argument 'localField' must be a string, found localField: 1: int"},
		{name: "foreignField a long", cmd: lookup(bson.D{{Key: "from", Value: "o"}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: int64(2)}, {Key: "as", Value: "r"}}), code: 9,
			msg: "$lookup argument 'foreignField' must be a string, found foreignField: 2: long"},
		{name: "let a number", cmd: lookup(bson.D{{Key: "from", Value: "o"}, {Key: "let", Value: int32(1)}, {Key: "pipeline", Value: bson.A{}}, {Key: "as", Value: "r"}}), code: 9,
			msg: "$lookup argument 'let: 1' must be an object, is type int"},
		{name: "let without a pipeline", cmd: lookup(bson.D{{Key: "from", Value: "o"}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "b"}, {Key: "let", Value: bson.D{}}, {Key: "as", Value: "r"}}), code: 9,
			msg: "$lookup with a 'let' argument must also specify 'pipeline'"},
		{name: "localField alone", cmd: lookup(bson.D{{Key: "from", Value: "o"}, {Key: "localField", Value: "a"}, {Key: "as", Value: "r"}}), code: 9,
			msg: "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified"},
		{name: "as empty", cmd: lookup(bson.D{{Key: "from", Value: "o"}, {Key: "pipeline", Value: bson.A{}}, {Key: "as", Value: ""}}), code: 9,
			msg: "must specify 'as' field for a $lookup"},
	})
}

// TestIndexSpecMessages: createIndexes' messages show an index
// specification as given when validateIndexSpec refuses it, and as that
// returns it (ns dropped, the default v: 2 added) when a later check does.
func TestIndexSpecMessages(t *testing.T) {
	create := func(spec bson.D) bson.D {
		return bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{spec}}}
	}
	runMessageCases(t, []msgCase{
		{name: "empty name", cmd: create(bson.D{{Key: "key", Value: bson.D{{Key: "v", Value: -1}}}, {Key: "name", Value: ""}}), code: 67,
			msg: `Error in specification { key: { v: -1 }, name: "", v: 2 } :: caused by :: index name cannot be empty`},
		{name: "_id index unique", cmd: create(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "_id_"}, {Key: "unique", Value: true}}), code: 197,
			msg: `The field 'unique' is not valid for an _id index specification. Specification: { key: { _id: 1 }, name: "_id_", unique: true, v: 2 }`},
		{name: "missing name", cmd: create(bson.D{{Key: "key", Value: bson.D{{Key: "v", Value: 1}}}}), code: 9,
			msg: `Error in specification { key: { v: 1 } } :: caused by :: The 'name' field is a required property of an index specification`},
		{name: "missing key", cmd: create(bson.D{}), code: 9,
			msg: `Error in specification {} :: caused by :: The 'key' field is a required property of an index specification`},
		{name: "unique an object", cmd: create(bson.D{{Key: "key", Value: bson.D{{Key: "v", Value: 1}}}, {Key: "name", Value: "unique_index"}, {Key: "unique", Value: bson.D{}}}), code: 14,
			msg: `Error in specification { key: { v: 1 }, name: "unique_index", unique: {} } :: caused by :: The field 'unique has value unique: {}, which is not convertible to bool`},
	})
}

// TestCollStatsMissingNamespaceMessages: $collStats of a missing database
// or collection fails in the context of the section it was retrieving,
// then of the aggregate's executor, as in MongoDB.
func TestCollStatsMissingNamespaceMessages(t *testing.T) {
	collStats := func(coll string, spec bson.D) bson.D {
		return bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$collStats", Value: spec}}}}, {Key: "cursor", Value: bson.D{}}}
	}
	storage := bson.D{{Key: "storageStats", Value: bson.D{}}}
	prefix := "PlanExecutor error during aggregation :: caused by :: "
	runMessageCases(t, []msgCase{
		{name: "storageStats, missing database", db: "nonexistent", cmd: collStats("c", storage), code: 26,
			msg: prefix + "Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [nonexistent.c] not found."},
		{name: "storageStats, missing collection", cmd: collStats("nonexistent", storage), code: 26,
			msg: prefix + "Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [test.nonexistent] not found."},
		{name: "count", cmd: collStats("nonexistent", bson.D{{Key: "count", Value: bson.D{}}}), code: 26,
			msg: prefix + "Unable to retrieve count in $collStats stage :: caused by :: Collection [test.nonexistent] not found."},
		{name: "queryExecStats", cmd: collStats("nonexistent", bson.D{{Key: "queryExecStats", Value: bson.D{}}}), code: 26,
			msg: prefix + "Unable to retrieve queryExecStats in $collStats stage :: caused by :: Collection [test.nonexistent] not found."},
	})
}

// TestNullFieldMessages: a null field is read as MongoDB's IDL reads it:
// an array field's null fails its BSONElement::Obj() (10065), a required
// scalar's is missing (40414), and a type read whole refuses it.
func TestNullFieldMessages(t *testing.T) {
	runMessageCases(t, []msgCase{
		{name: "createIndexes indexes", cmd: bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: nil}}, code: 10065,
			msg: "invalid parameter: expected an object (indexes)"},
		{name: "createUser roles", cmd: bson.D{{Key: "createUser", Value: "nullroles"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: nil}}, code: 10065,
			msg: "invalid parameter: expected an object (roles)"},
		{name: "insert documents", cmd: bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: nil}}, code: 10065,
			msg: "invalid parameter: expected an object (documents)"},
		{name: "getLog", db: "admin", cmd: bson.D{{Key: "getLog", Value: nil}}, code: 40414,
			msg: "BSON field 'getLog.getLog' is missing but a required field"},
		{name: "aggregate pipeline", cmd: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: nil}, {Key: "cursor", Value: bson.D{}}}, code: 14,
			msg: "'pipeline' option must be specified as an array"},
	})
}

// TestNamespaceMessages: a namespace is refused with the text of the
// MongoDB 7.0 check that refuses it: DatabaseName's (any command), the
// namespace's (a command naming a collection), the dispatcher's (the
// others), create's and the writes' (userAllowedCreateNS), dataSize's,
// getMore's and compact's own.
func TestNamespaceMessages(t *testing.T) {
	create := bson.D{{Key: "create", Value: "TestCreateCollectionDatabaseName-Err"}}
	runMessageCases(t, []msgCase{
		{name: "create, db too long", db: strings.Repeat("a", 64), cmd: create, code: 73,
			msg: "db name must be at most 63 characters, found: 64"},
		{name: "create, db with a slash", db: "/", cmd: create, code: 73,
			msg: "Invalid namespace specified '/.TestCreateCollectionDatabaseName-Err'"},
		{name: "create, db with a backslash", db: `\`, cmd: create, code: 73,
			msg: `Invalid namespace specified '\.TestCreateCollectionDatabaseName-Err'`},
		{name: "create, db with a $", db: "name_with_a-$", cmd: create, code: 73,
			msg: "Invalid namespace: name_with_a-$.TestCreateCollectionDatabaseName-Err"},
		{name: "create, db with a space", db: "data base", cmd: create, code: 73,
			msg: "Invalid namespace specified 'data base.TestCreateCollectionDatabaseName-Err'"},
		{name: "create, db with a dot", db: "database.test", cmd: create, code: 73,
			msg: "'.' is an invalid character in a db name: database.test"},
		{name: "create, collection with a NUL", cmd: bson.D{{Key: "create", Value: "\x00"}}, code: 73,
			msg: "namespaces cannot have embedded null characters"},
		{name: "create, collection starting with a dot", cmd: bson.D{{Key: "create", Value: ".collection.."}}, code: 73,
			msg: "Collection names cannot start with '.': .collection.."},
		{name: "ping, db with a space", db: "a b", cmd: bson.D{{Key: "ping", Value: 1}}, code: 73,
			msg: "Invalid database name: 'a b'"},
		{name: "delete, db with a $", db: "a$b", cmd: bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}}, code: 73,
			msg: "Invalid namespace: a$b.c"},
		{name: "dataSize, no collection", cmd: bson.D{{Key: "dataSize", Value: "invalid"}}, code: 73,
			msg: "Namespace invalid is not a valid collection name"},
		{name: "getMore, empty collection", cmd: bson.D{{Key: "getMore", Value: int64(1)}, {Key: "collection", Value: ""}}, code: 73,
			msg: "Collection names cannot be empty"},
		{name: "compact, missing database", db: "nonexistentdb", cmd: bson.D{{Key: "compact", Value: "c"}}, code: 26,
			msg: "database does not exist"},
		{name: "compact, missing collection", cmd: bson.D{{Key: "compact", Value: "nonexistent"}}, code: 26,
			msg: "collection does not exist"},
	})
	// a '$' in a database name is refused to what creates or writes, not
	// to what reads
	client, _ := startServer(t)
	if err := client.Database("a$b").RunCommand(t.Context(), bson.D{{Key: "find", Value: "c"}}).Err(); err != nil {
		t.Errorf("find in a$b: %v", err)
	}
}
