package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestSessionCommandMessages: the session commands name their fields in
// type errors as MongoDB's IDL structs do.
func TestSessionCommandMessages(t *testing.T) {
	for _, tc := range []struct {
		cmd, msg string
	}{
		{`{"refreshSessions": "x"}`, "BSON field 'refreshSessions.refreshSessions' is the wrong type 'string', expected type 'array'"},
		{`{"refreshSessions": ["x"]}`, "BSON field 'refreshSessions.refreshSessionsFromClient.0' is the wrong type 'string', expected type 'object'"},
		{`{"refreshSessions": [{}]}`, "BSON field 'refreshSessions.refreshSessionsFromClient.id' is missing but a required field"},
		{`{"endSessions": "x"}`, "BSON field 'endSessions.endSessions' is the wrong type 'string', expected type 'array'"},
		{`{"killAllSessions": [1]}`, "BSON field 'KillAllSessionsCmd.killAllSessions.0' is the wrong type 'int', expected type 'object'"},
		{`{"killAllSessionsByPattern": ["x"]}`, "BSON field 'KillAllSessionsByPatternCmd.killAllSessionsByPattern.0' is the wrong type 'string', expected type 'object'"},
		{`{"killAllSessionsByPattern": [{"users": [{"db": "a"}]}]}`, "BSON field 'KillAllSessionsByPatternCmd.killAllSessionsByPattern.users.user' is missing but a required field"},
		{`{"killAllSessionsByPattern": [{"lsid": {"id": {"$binary": {"base64": "3q3erd6t3q3erd6t3q3erQ==", "subType": "04"}}}}]}`,
			"BSON field 'KillAllSessionsByPatternCmd.killAllSessionsByPattern.lsid.uid' is missing but a required field"},
	} {
		var cmd bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.cmd), true, &cmd); err != nil {
			t.Fatal(err)
		}
		reply := runArgs(t, argsService(t), cmd)
		if got := reply.Lookup("errmsg").StringValue(); got != tc.msg {
			t.Errorf("%s: %q, want %q", tc.cmd, got, tc.msg)
		}
	}
}
