package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCommitQuorum: createIndexes parses commitQuorum as
// CommitQuorumOptions::parse does, refuses one a one-member replica set
// cannot satisfy (TopologyCoordinator::checkIfCommitQuorumCanBeSatisfied)
// or a standalone given any, and names the quorum of a build in its reply
// (create_indexes_cmd.cpp), after createdCollectionAutomatically; a reply
// finding every index already there has neither.
func TestCommitQuorum(t *testing.T) {
	for _, tc := range []struct {
		name       string
		standalone bool
		db         string
		coll       string // "c" exists with index a_1; others do not
		key        string // the index's field
		quorum     any    // nil: not given
		code       int32
		msg        string
		reply      string // Extended JSON of the reply without ok
	}{
		{name: "default on an existing collection", coll: "c", key: "b",
			reply: `{"numIndexesBefore": 2, "numIndexesAfter": 3, "createdCollectionAutomatically": false, "commitQuorum": "votingMembers"}`},
		{name: "default on a new collection", coll: "n", key: "b",
			reply: `{"numIndexesBefore": 1, "numIndexesAfter": 2, "createdCollectionAutomatically": true, "commitQuorum": "votingMembers"}`},
		{name: "every index already there", coll: "c", key: "a",
			reply: `{"numIndexesBefore": 2, "numIndexesAfter": 2, "note": "all indexes already exist"}`},
		{name: "every index already there, quorum given", coll: "c", key: "a", quorum: "majority",
			reply: `{"numIndexesBefore": 2, "numIndexesAfter": 2, "note": "all indexes already exist"}`},
		{name: "only _id on a new collection", coll: "n", key: "_id",
			reply: `{"numIndexesBefore": 1, "numIndexesAfter": 1, "createdCollectionAutomatically": true, "commitQuorum": "votingMembers", "note": "all indexes already exist"}`},
		{name: "majority", coll: "c", key: "b", quorum: "majority",
			reply: `{"numIndexesBefore": 2, "numIndexesAfter": 3, "createdCollectionAutomatically": false, "commitQuorum": "majority"}`},
		{name: "votingMembers", coll: "c", key: "b", quorum: "votingMembers",
			reply: `{"numIndexesBefore": 2, "numIndexesAfter": 3, "createdCollectionAutomatically": false, "commitQuorum": "votingMembers"}`},
		{name: "one member", coll: "c", key: "b", quorum: int64(1),
			reply: `{"numIndexesBefore": 2, "numIndexesAfter": 3, "createdCollectionAutomatically": false, "commitQuorum": 1}`},
		{name: "zero, a double", coll: "c", key: "b", quorum: 0.5,
			reply: `{"numIndexesBefore": 2, "numIndexesAfter": 3, "createdCollectionAutomatically": false, "commitQuorum": 0}`},
		{name: "two members", coll: "c", key: "b", quorum: 2,
			code: 278, msg: "Not enough data-bearing nodes to satisfy commit quorum"},
		{name: "every index already there, two members", coll: "c", key: "a", quorum: 7,
			code: 278, msg: "Not enough data-bearing nodes to satisfy commit quorum"},
		{name: "more than the voting members", coll: "c", key: "b", quorum: 8,
			code: 9, msg: "commitQuorum has to be a non-negative number and not greater than 7"},
		{name: "negative", coll: "c", key: "b", quorum: -1,
			code: 9, msg: "commitQuorum has to be a non-negative number and not greater than 7"},
		{name: "an object", coll: "c", key: "b", quorum: bson.D{},
			code: 9, msg: "commitQuorum has to be a number or a string"},
		{name: "null", coll: "c", key: "b", quorum: bson.Null{}, code: 9, msg: "commitQuorum has to be a number or a string"},
		{name: "empty string", coll: "c", key: "b", quorum: "",
			code: 9, msg: "commitQuorum can't be an empty string"},
		{name: "a tag", coll: "c", key: "b", quorum: "dc",
			code: 79, msg: "No write concern mode named 'dc' found in replica set configuration"},
		{name: "local database", db: "local", coll: "n", key: "b",
			reply: `{"numIndexesBefore": 1, "numIndexesAfter": 2, "createdCollectionAutomatically": true}`},
		{name: "local database given one", db: "local", coll: "n", key: "b", quorum: 1,
			code: 2, msg: "commitQuorum is supported only for two phase index builds with commit quorum support enabled "},
		{name: "standalone", standalone: true, coll: "c", key: "b",
			reply: `{"numIndexesBefore": 2, "numIndexesAfter": 3, "createdCollectionAutomatically": false}`},
		{name: "standalone given one", standalone: true, coll: "c", key: "b", quorum: "majority",
			code: 2, msg: "Standalones can't specify commitQuorum"},
	} {
		s := argsService(t)
		if tc.standalone {
			s.ReplSetName = ""
		}
		db := tc.db
		if db == "" {
			db = "test"
		}
		name := tc.key + "_1"
		if tc.key == "_id" {
			name = "_id_"
		}
		cmd := bson.D{{Key: "createIndexes", Value: tc.coll}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: tc.key, Value: 1}}}, {Key: "name", Value: name}}}}}
		if tc.quorum != nil {
			cmd = append(cmd, bson.E{Key: "commitQuorum", Value: tc.quorum})
		}
		reply := runCmdOn(t, s, db, cmd)
		if c := code(reply); c != tc.code || errmsg(reply) != tc.msg {
			t.Errorf("%s: code %d %q, want %d %q", tc.name, c, errmsg(reply), tc.code, tc.msg)
			continue
		}
		if tc.code != 0 {
			continue
		}
		var want bson.D
		if err := bson.UnmarshalExtJSON([]byte(tc.reply), false, &want); err != nil {
			t.Fatal(err)
		}
		want = append(want, bson.E{Key: "ok", Value: 1.0})
		wantRaw, _ := bson.Marshal(want)
		if got := replyFields(t, reply); got.String() != bson.Raw(wantRaw).String() {
			t.Errorf("%s: reply %s, want %s", tc.name, got, bson.Raw(wantRaw))
		}
	}
}

// replyFields is reply without the fields a replica set member appends to
// every reply ($clusterTime, operationTime).
func replyFields(t *testing.T, reply bson.Raw) bson.Raw {
	elems, err := reply.Elements()
	if err != nil {
		t.Fatal(err)
	}
	var d bson.D
	for _, e := range elems {
		if k := e.Key(); k != "$clusterTime" && k != "operationTime" {
			d = append(d, bson.E{Key: k, Value: e.Value()})
		}
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
