package commands

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/timeseries"
)

func init() {
	register(validateCmd, validateSpec, "validate")
	namesCollection("validate")
}

// validateSpec declares validate's fields. MongoDB 7.0's validate has no
// IDL: it reads each option as a truth value (any type) and ignores the
// fields it does not read.
// https://www.mongodb.com/docs/v7.0/reference/command/validate/
var validateSpec = func() *argSpec {
	s := untyped("validate",
		// Folio's validate always reads every document and index entry
		// (what full asks for) from a snapshot, taking no lock (what
		// background asks for); the two are read to refuse them together,
		// as MongoDB does.
		arg("full", tAny),
		arg("background", tAny),
		ignore("scandata", tAny, "Folio's validate always reads every document"),
		// the options of validateRefusedSpec, read for MongoDB's checks of
		// how options combine before they are refused
		arg("repair", tAny),
		arg("metadata", tAny),
		arg("checkBSONConformance", tAny),
		arg("enforceFastCount", tAny),
	)
	s.subs = []*argSpec{validateRefusedSpec}
	return s
}()

// validateRefusedSpec declares the validate options Folio does not honour:
// true is refused once the options have passed MongoDB's checks of how
// they combine, which come first in ValidateCmd::run (validateOptions).
var validateRefusedSpec = &argSpec{path: "validate", fields: []argField{
	refuseTrue("repair", tAny, "repairing collections"),
	refuseTrue("metadata", tAny, "metadata-only validation"),
	refuseTrue("checkBSONConformance", tAny, "BSON conformance checks"),
	refuseTrue("enforceFastCount", tAny, "checking the collection's count against its documents"),
}}

// validateOptions checks validate's options in the order of MongoDB 7.0's
// ValidateCmd::run, each combination it does not run failing with
// InvalidOptions; a replica set member never repairs (Folio's is never in
// read-only mode). Then the options Folio does not honour are refused.
func validateOptions(s *Service, r *Request) error {
	a := &r.args
	full, background, fast := a.bool("full"), a.bool("background"), a.bool("enforceFastCount")
	checkBSON, repair, metadata := a.bool("checkBSONConformance"), a.bool("repair"), a.bool("metadata")
	both := func(x, y string) error {
		return mongoerr.New(mongoerr.InvalidOptions, "Running the validate command with both { %s: true } and { %s: true } is not supported.", x, y)
	}
	switch {
	case background && full:
		return both("background", "full")
	case background && fast:
		return both("background", "enforceFastCount")
	case !checkBSON && (full || fast) && slices.Contains(a.present(), "checkBSONConformance"):
		// full validation checks BSON conformance: asking it not to is
		// a contradiction
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot explicitly set 'checkBSONConformance: false' with full validation set.")
	case background && repair:
		return both("background", "repair")
	case fast && repair:
		return both("enforceFastCount", "repair")
	case checkBSON && repair:
		return both("checkBSONConformance", "repair")
	case repair && s.ReplSetName != "":
		return mongoerr.New(mongoerr.InvalidOptions, "Running the validate command with { repair: true } can only be performed in standalone mode.")
	case metadata && (background || full || fast || checkBSON || repair):
		return mongoerr.New(mongoerr.InvalidOptions, "Running the validate command with { metadata: true } is not supported with any other options")
	}
	for i := range validateRefusedSpec.fields {
		if f := &validateRefusedSpec.fields[i]; a.bool(f.name) {
			return notImplementedArg("validate", f)
		}
	}
	return nil
}

// validateCmd checks a collection's indexes against its documents and
// reports what is wrong, in MongoDB's reply shape.
func validateCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	if err := validateOptions(s, r); err != nil {
		return nil, err
	}
	c := s.Engine.Collection(r.DB, name)
	if c == nil {
		// a view other than a time series collection's is refused, as
		// MongoDB's ValidateState does
		if v, err := s.lookupView(r, r.DB, name); err != nil {
			return nil, err
		} else if v != nil && !strings.HasPrefix(v.viewOn, timeseries.BucketsPrefix) {
			return nil, mongoerr.New(mongoerr.CommandNotSupportedOnView, "Cannot validate a view")
		}
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "Collection '%s.%s' does not exist to validate.", r.DB, name)
	}
	res, err := s.Engine.Validate(c)
	if err != nil {
		return nil, err
	}
	bad := map[string]bool{}
	extra, missing := bson.A{}, bson.A{}
	for _, e := range res.Extra {
		bad[e.Index] = true
		extra = append(extra, indexEntryInfo(e))
	}
	for _, e := range res.Missing {
		bad[e.Index] = true
		missing = append(missing, indexEntryInfo(e))
	}
	names := append([]string{"_id_"}, indexNames(c)...)
	keys := make(bson.D, 0, len(names))
	details := make(bson.D, 0, len(names))
	errs := bson.A{}
	for _, e := range res.Errors {
		errs = append(errs, e)
	}
	for _, n := range names {
		keys = append(keys, bson.E{Key: n, Value: number(res.KeysPerIndex[n])})
		details = append(details, bson.E{Key: n, Value: bson.D{{Key: "valid", Value: !bad[n]}}})
		if bad[n] {
			errs = append(errs, "Index with name '"+n+"' has inconsistencies.")
		}
	}
	valid := len(errs) == 0
	d := bson.D{
		{Key: "ns", Value: r.DB + "." + name},
		{Key: "uuid", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}},
		{Key: "nInvalidDocuments", Value: int32(0)},
		{Key: "nNonCompliantDocuments", Value: int32(0)},
		{Key: "nrecords", Value: number(res.Records)},
		{Key: "nIndexes", Value: int32(len(names))},
		{Key: "keysPerIndex", Value: keys},
		{Key: "indexDetails", Value: details},
		{Key: "valid", Value: valid},
		{Key: "repaired", Value: false},
		{Key: "warnings", Value: bson.A{}},
		{Key: "errors", Value: errs},
		{Key: "extraIndexEntries", Value: extra},
		{Key: "missingIndexEntries", Value: missing},
		{Key: "corruptRecords", Value: bson.A{}},
	}
	if !valid {
		d = append(d, bson.E{Key: "advice", Value: "A corrupt namespace has been detected. See http://dochub.mongodb.org/core/data-recovery for recovery steps."})
	}
	return marshal(d), nil
}

// indexEntryInfo describes an inconsistent index entry as validate lists
// it: {indexName, idKey, indexKey}, each part Folio knows.
func indexEntryInfo(e engine.IndexEntry) bson.D {
	d := bson.D{{Key: "indexName", Value: e.Index}}
	if e.ID.Type != 0 {
		d = append(d, bson.E{Key: "idKey", Value: bson.D{{Key: "_id", Value: e.ID}}})
	}
	if e.Key != nil {
		d = append(d, bson.E{Key: "indexKey", Value: e.Key})
	}
	return d
}

// indexNames lists c's secondary index names.
func indexNames(c *engine.Collection) []string {
	var out []string
	for _, ix := range c.Indexes() {
		out = append(out, ix.Name)
	}
	return out
}
