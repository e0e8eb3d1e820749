package driver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestWriteLet proves the let variables of update, delete and findAndModify
// and the per-statement constants (c) of update (MongoDB 5.0+): visible as
// $$name in the filter's $expr and in pipeline updates, c taken literally
// and shadowing let, c refused on a non-pipeline update (51198), bad let
// refused as find refuses it.
// https://www.mongodb.com/docs/v7.0/reference/command/update/#std-label-update-let-syntax
// https://www.mongodb.com/docs/v7.0/reference/command/delete/
// https://www.mongodb.com/docs/v7.0/reference/command/findAndModify/
func TestWriteLet(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("wlet")
	tests := []struct {
		name string
		cmd  string // Extended JSON
		// code is the command's error code, writeCode its first write
		// error's; n is the reply's n (lastErrorObject.n for
		// findAndModify) when both are 0.
		code, writeCode int
		n               int32
		want            string // the collection afterwards, when it matters
		value           string // findAndModify's value
	}{
		{name: "update let in $expr", cmd: `{"update": "wlet", "updates": [{"q": {"$expr": {"$gt": ["$n", "$$cut"]}}, "u": {"$set": {"big": true}}, "multi": true}], "let": {"cut": 4}}`,
			n: 2, want: `[{"_id": 1, "n": 1}, {"_id": 2, "n": 5, "big": true}, {"_id": 3, "n": 9, "big": true}]`},
		{name: "update let in a pipeline", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"m": {"$multiply": ["$n", "$$f"]}}}]}], "let": {"f": 10}}`,
			n: 1, want: `[{"_id": 1, "n": 1, "m": 10}, {"_id": 2, "n": 5}, {"_id": 3, "n": 9}]`},
		{name: "update let seen by a later let", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 2}, "u": [{"$set": {"m": "$$b"}}]}], "let": {"a": 3, "b": {"$add": ["$$a", 1]}}}`,
			n: 1, want: `[{"_id": 1, "n": 1}, {"_id": 2, "n": 5, "m": 4}, {"_id": 3, "n": 9}]`},
		{name: "update c shadows let", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"m": "$$f"}}], "c": {"f": 2}}], "let": {"f": 10}}`,
			n: 1, want: `[{"_id": 1, "n": 1, "m": 2}, {"_id": 2, "n": 5}, {"_id": 3, "n": 9}]`},
		{name: "update c is literal", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 3}, "u": [{"$set": {"s": "$$s"}}], "c": {"s": "$n"}}]}`,
			n: 1, want: `[{"_id": 1, "n": 1}, {"_id": 2, "n": 5}, {"_id": 3, "n": 9, "s": "$n"}]`},
		{name: "update c in the filter", cmd: `{"update": "wlet", "updates": [{"q": {"$expr": {"$eq": ["$n", "$$t"]}}, "u": [{"$set": {"hit": true}}], "c": {"t": 5}}]}`,
			n: 1, want: `[{"_id": 1, "n": 1}, {"_id": 2, "n": 5, "hit": true}, {"_id": 3, "n": 9}]`},
		{name: "update c per statement", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"m": "$$v"}}], "c": {"v": "x"}}, {"q": {"_id": 2}, "u": [{"$set": {"m": "$$v"}}]}], "let": {"v": "y"}}`,
			n: 2, want: `[{"_id": 1, "n": 1, "m": "x"}, {"_id": 2, "n": 5, "m": "y"}, {"_id": 3, "n": 9}]`},
		// UpdateDriver::parse: constants only with a pipeline.
		{name: "update c on an operator update", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": {"$set": {"m": 1}}, "c": {"v": 1}}]}`,
			writeCode: 51198, want: `[{"_id": 1, "n": 1}, {"_id": 2, "n": 5}, {"_id": 3, "n": 9}]`},
		{name: "update c not a document", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"m": 1}}], "c": 1}]}`, code: 14},
		{name: "update let not a document", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": {"$set": {"m": 1}}}], "let": 1}`, code: 14},
		{name: "update let with an invalid name", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": {"$set": {"m": 1}}}], "let": {"Cut": 1}}`, writeCode: 9},
		{name: "update undefined variable", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"m": "$$zz"}}]}]}`, writeCode: 17276},
		{name: "delete let in $expr", cmd: `{"delete": "wlet", "deletes": [{"q": {"$expr": {"$lt": ["$n", "$$t"]}}, "limit": 0}], "let": {"t": 6}}`,
			n: 2, want: `[{"_id": 3, "n": 9}]`},
		{name: "delete let not a document", cmd: `{"delete": "wlet", "deletes": [{"q": {}, "limit": 0}], "let": "x"}`, code: 14},
		{name: "findAndModify let", cmd: `{"findAndModify": "wlet", "query": {"$expr": {"$eq": ["$n", "$$t"]}}, "update": [{"$set": {"hit": "$$t"}}], "new": true, "let": {"t": 9}}`,
			n: 1, value: `{"_id": 3, "n": 9, "hit": 9}`},
		{name: "findAndModify remove with let", cmd: `{"findAndModify": "wlet", "query": {"$expr": {"$eq": ["$_id", "$$i"]}}, "remove": true, "let": {"i": 2}}`,
			n: 1, value: `{"_id": 2, "n": 5}`, want: `[{"_id": 1, "n": 1}, {"_id": 3, "n": 9}]`},
		{name: "findAndModify let with an invalid name", cmd: `{"findAndModify": "wlet", "query": {}, "remove": true, "let": {"_i": 2}}`, code: 9},
		{name: "findAndModify let not a document", cmd: `{"findAndModify": "wlet", "query": {}, "remove": true, "let": []}`, code: 14},
		// Variables::seedVariablesWithLetParameters: no document is read yet.
		{name: "findAndModify let reading a field", cmd: `{"findAndModify": "wlet", "query": {}, "remove": true, "let": {"i": "$n"}}`, code: 4890500},
		{name: "update let reading $$ROOT", cmd: `{"update": "wlet", "updates": [{"q": {"_id": 1}, "u": {"$set": {"m": 1}}}], "let": {"r": "$$ROOT"}}`, writeCode: 4890500},
		{name: "aggregate let reading a field", cmd: `{"aggregate": "wlet", "pipeline": [], "cursor": {}, "let": {"v": {"$add": ["$n", 1]}}}`, code: 4890500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			seed(t, coll, []bson.Raw{mustExt(t, `{"_id": 1, "n": 1}`), mustExt(t, `{"_id": 2, "n": 5}`), mustExt(t, `{"_id": 3, "n": 9}`)})
			reply, err := db.RunCommand(ctx, mustExt(t, tc.cmd)).Raw()
			switch {
			case tc.code != 0:
				requireCode(t, err, tc.code, "")
				return
			case tc.writeCode != 0:
				// The driver reports a reply's writeErrors as its error.
				var we mongo.WriteException
				if !errors.As(err, &we) || len(we.WriteErrors) == 0 || we.WriteErrors[0].Code != tc.writeCode {
					t.Fatalf("got %v, want write error %d", err, tc.writeCode)
				}
			case err != nil:
				t.Fatal(err)
			default:
				n, ok := reply.Lookup("n").Int32OK()
				if strings.HasPrefix(tc.cmd, `{"findAndModify"`) {
					n, ok = reply.Lookup("lastErrorObject", "n").Int32OK()
				}
				if !ok || n != tc.n {
					t.Fatalf("got %s, want n %d", reply, tc.n)
				}
				if _, bad := reply.LookupErr("writeErrors"); bad == nil {
					t.Fatalf("got write errors: %s", reply)
				}
			}
			if tc.value != "" {
				if got, want := reply.Lookup("value").Document().String(), mustExt(t, tc.value).String(); got != want {
					t.Fatalf("value %s, want %s", got, want)
				}
			}
			if tc.want != "" {
				docs := findAll(t, coll, bson.D{})
				var got []string
				for _, d := range docs {
					got = append(got, d.String())
				}
				var want struct {
					D []bson.Raw `bson:"d"`
				}
				if err := bson.UnmarshalExtJSON([]byte(`{"d": `+tc.want+`}`), false, &want); err != nil {
					t.Fatal(err)
				}
				var ws []string
				for _, d := range want.D {
					ws = append(ws, d.String())
				}
				if strings.Join(got, ",") != strings.Join(ws, ",") {
					t.Fatalf("collection %v, want %v", got, ws)
				}
			}
		})
	}
}
