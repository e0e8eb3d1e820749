package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestListCommands: listCommands describes each command under its name
// (an alias is not listed) as MongoDB's ListCommandsCmd does.
func TestListCommands(t *testing.T) {
	s := argsService(t)
	cmds := runCmdOn(t, s, "admin", bson.D{{Key: "listCommands", Value: 1}}).Lookup("commands").Document()
	for _, tc := range []struct{ name, want string }{
		{"find", `{"help": "", "requiresAuth": true, "secondaryOk": false, "adminOnly": false, "secondaryOverrideOk": true, "apiVersions": ["1"], "deprecatedApiVersions": []}`},
		{"insert", `{"help": "", "requiresAuth": true, "secondaryOk": false, "adminOnly": false, "apiVersions": ["1"], "deprecatedApiVersions": []}`},
		{"hello", `{"help": "", "requiresAuth": false, "secondaryOk": true, "adminOnly": false, "apiVersions": ["1"], "deprecatedApiVersions": []}`},
		{"listCommands", `{"help": "", "requiresAuth": false, "secondaryOk": true, "adminOnly": false, "apiVersions": [], "deprecatedApiVersions": []}`},
		{"renameCollection", `{"help": "", "requiresAuth": true, "secondaryOk": false, "adminOnly": true, "apiVersions": [], "deprecatedApiVersions": []}`},
		{"testDeprecation", `{"help": "", "requiresAuth": true, "secondaryOk": true, "adminOnly": false, "apiVersions": ["1"], "deprecatedApiVersions": ["1"]}`},
		{"isMaster", `{"help": "", "requiresAuth": false, "secondaryOk": true, "adminOnly": false, "apiVersions": [], "deprecatedApiVersions": []}`},
		{"ismaster", ``},
		{"findandmodify", ``},
	} {
		got := cmds.Lookup(tc.name)
		if tc.want == "" {
			if got.Type != 0 {
				t.Errorf("%s listed: %s", tc.name, got)
			}
			continue
		}
		var want bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.want), false, &want); err != nil {
			t.Fatal(err)
		}
		if doc, ok := got.DocumentOK(); !ok || doc.String() != want.String() {
			t.Errorf("%s: %s, want %s", tc.name, got, want)
		}
	}
}
