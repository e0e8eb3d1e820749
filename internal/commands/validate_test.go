package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestValidateOptions: validate's options are checked as MongoDB 7.0's
// ValidateCmd::run checks them, combinations first (InvalidOptions, a
// replica set member refusing repair), before Folio refuses the options
// it does not honour (NotImplemented).
func TestValidateOptions(t *testing.T) {
	for _, tc := range []struct {
		standalone bool
		opts       bson.D
		code       int32
		msg        string
	}{
		{opts: bson.D{{Key: "repair", Value: true}}, code: 72,
			msg: "Running the validate command with { repair: true } can only be performed in standalone mode."},
		{standalone: true, opts: bson.D{{Key: "repair", Value: true}}, code: 238,
			msg: "Folio does not support the option 'repair: true' of validate (repairing collections)"},
		{standalone: true, opts: bson.D{{Key: "repair", Value: 1}, {Key: "background", Value: true}}, code: 72,
			msg: "Running the validate command with both { background: true } and { repair: true } is not supported."},
		{standalone: true, opts: bson.D{{Key: "repair", Value: true}, {Key: "enforceFastCount", Value: true}}, code: 72,
			msg: "Running the validate command with both { enforceFastCount: true } and { repair: true } is not supported."},
		{standalone: true, opts: bson.D{{Key: "checkBSONConformance", Value: true}, {Key: "repair", Value: true}}, code: 72,
			msg: "Running the validate command with both { checkBSONConformance: true } and { repair: true } is not supported."},
		{opts: bson.D{{Key: "enforceFastCount", Value: true}, {Key: "background", Value: true}}, code: 72,
			msg: "Running the validate command with both { background: true } and { enforceFastCount: true } is not supported."},
		{opts: bson.D{{Key: "enforceFastCount", Value: true}, {Key: "checkBSONConformance", Value: false}}, code: 72,
			msg: "Cannot explicitly set 'checkBSONConformance: false' with full validation set."},
		{opts: bson.D{{Key: "metadata", Value: true}, {Key: "full", Value: true}}, code: 72,
			msg: "Running the validate command with { metadata: true } is not supported with any other options"},
		{opts: bson.D{{Key: "checkBSONConformance", Value: true}, {Key: "metadata", Value: true}}, code: 72,
			msg: "Running the validate command with { metadata: true } is not supported with any other options"},
		{opts: bson.D{{Key: "metadata", Value: true}}, code: 238,
			msg: "Folio does not support the option 'metadata: true' of validate (metadata-only validation)"},
		{opts: bson.D{{Key: "full", Value: true}, {Key: "background", Value: true}}, code: 72,
			msg: "Running the validate command with both { background: true } and { full: true } is not supported."},
		{opts: bson.D{{Key: "metadata", Value: false}, {Key: "repair", Value: 0}, {Key: "full", Value: true}}},
	} {
		s := argsService(t)
		if tc.standalone {
			s.ReplSetName = ""
		}
		reply := runCmd(t, s, append(bson.D{{Key: "validate", Value: "c"}}, tc.opts...))
		if c := code(reply); c != tc.code || errmsg(reply) != tc.msg {
			t.Errorf("%v (standalone %v): code %d %q, want %d %q", tc.opts, tc.standalone, c, errmsg(reply), tc.code, tc.msg)
		}
	}
}
