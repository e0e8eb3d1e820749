package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCreateExistingView: creating a view that exists succeeds when its
// viewOn, pipeline and collation are the same (the collation compared as
// a collator: {locale: "uk"} is {locale: "uk", strength: 3}), and fails
// with NamespaceExists naming what differs (checkCollectionOptions,
// views_creation.js).
func TestCreateExistingView(t *testing.T) {
	s := argsService(t)
	create := `{"create": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 1}}], "collation": {"locale": "uk"}}`
	for _, tc := range []struct {
		cmd  string
		code int32
		msg  string
	}{
		{create, 0, ""},
		{create, 0, ""},
		{`{"create": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 1.0}}], "collation": {"locale": "uk", "strength": 3}}`, 0, ""},
		{`{"create": "v", "viewOn": "d", "pipeline": [{"$match": {"x": 1}}], "collation": {"locale": "uk"}}`, 48,
			"namespace test.v already exists, but is a view on test.c rather than test.d"},
		{`{"create": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 2}}], "collation": {"locale": "uk"}}`, 48,
			"namespace test.v already exists, but with pipeline { 0: { $match: { x: 1 } } } rather than { 0: { $match: { x: 2 } } }"},
		{`{"create": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 1}}]}`, 48, ""},
		{`{"create": "v"}`, 48, ""},
	} {
		var cmd bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.cmd), true, &cmd); err != nil {
			t.Fatal(err)
		}
		reply := runOn(t, s, "test", cmd)
		if got, msg := code(reply), errmsg(reply); got != tc.code || tc.msg != "" && msg != tc.msg {
			t.Errorf("%s: %d %q, want %d %q", tc.cmd, got, msg, tc.code, tc.msg)
		}
	}
}
