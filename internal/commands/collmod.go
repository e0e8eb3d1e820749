package commands

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(collModCmd, collModSpec, "collMod")
	namesCollection("collMod")
}

// collModSpec declares collMod's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/collMod/
var collModSpec = &argSpec{path: "collMod", fields: []argField{
	arg("index", tDoc),
	arg("validator", tDoc),
	arg("validationLevel", tString),
	arg("validationAction", tString),
	arg("changeStreamPreAndPostImages", tDoc),
	// variant<string, safeInt64>: "off", or a number of seconds
	arg("expireAfterSeconds", tStringOrSafe),
	arg("timeseries", tDoc),
	// Folio reads the control fields of any bucket, however its fields'
	// types mix, so the buckets may always hold mixed-schema data (as
	// buckets MongoDB 5.1 and earlier wrote, which mongorestore brings,
	// do): the flag is checked, and holds either way.
	arg("timeseriesBucketsMayHaveMixedSchemaData", tBool),
	arg("viewOn", tString),
	arg("pipeline", tArray),
	arg("dryRun", tBool),
	refuse("clusteredIndex", tBool, "clustered collections"),
	arg("cappedSize", tSafe),
	arg("cappedMax", tSafe),
	collectionUUIDField,
}, subs: []*argSpec{collModIndexSpec, preAndPostImagesSpecs["collMod"]}}

// collModIndexSpec declares collMod's index document.
var collModIndexSpec = &argSpec{path: "collMod.index", fields: []argField{
	arg("name", tString),
	arg("keyPattern", tDoc),
	arg("hidden", tBool),
	arg("expireAfterSeconds", tSafe),
	arg("prepareUnique", tBool),
	arg("unique", tBool),
	arg("forceNonUnique", tBool),
}}

// collModCmd changes an index's hidden flag, TTL, prepareUnique, or makes
// it unique, as {collMod: c, index: {name | keyPattern, ...}} does, and
// reports the old and new values of what changed; or with dryRun, only
// checks that an index can be made unique. Options Folio does not
// implement fail clearly.
func collModCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	// With access control on, MongoDB's authorization check of collMod
	// (checkAuthForCollMod), which runs before the command, asks for viewOn
	// and pipeline together, whatever the namespace is.
	if s.Access.Enabled && !r.fromOplog && r.args.has("viewOn") != r.args.has("pipeline") {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Must specify both 'viewOn' and 'pipeline' when modifying a view and auth is enabled")
	}
	if err := s.checkCollectionUUID(r, &r.args, r.DB, coll); err != nil {
		return nil, err
	}
	if strings.HasPrefix(coll, timeseries.BucketsPrefix) && !r.fromOplog {
		// It would put the buckets out of step with their view.
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "collMod on a time-series collection's underlying buckets collection is not supported.")
	}
	index := r.args.doc("index")
	ts, err := s.timeseriesOf(r, r.DB, coll)
	if err != nil {
		return nil, err
	}
	if ts != nil {
		// A time series collection's options are its buckets': the expiry
		// of its measurements, its bucketing, and its indexes change.
		for _, f := range r.args.present() {
			if f != "expireAfterSeconds" && f != "timeseries" && f != "timeseriesBucketsMayHaveMixedSchemaData" && f != "index" {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "option not supported on a time-series collection: %s", f)
			}
		}
		if mod := r.args.doc("timeseries"); mod != nil {
			if err := s.collModTimeseries(r, ts, mod); err != nil {
				return nil, err
			}
		}
		if index == nil {
			return nil, collModValidation(s, r, ts.buckets, false)
		}
		coll = ts.buckets
	} else {
		// A namespace that is neither a collection nor a view fails
		// before the options are looked at, as MongoDB's _collModInternal
		// does.
		v, err := s.lookupView(r, r.DB, coll)
		if err != nil {
			return nil, err
		}
		if v == nil && s.Engine.Collection(r.DB, coll) == nil {
			return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
		}
		if f := firstOf(&r.args, "timeseries", "timeseriesBucketsMayHaveMixedSchemaData"); f != "" {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "option only supported on a time-series collection: %s", f)
		}
		if v != nil {
			return nil, collModView(s, r, v)
		}
		if r.args.has("viewOn") || r.args.has("pipeline") {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "option only supported on a view: %s", firstOf(&r.args, "viewOn", "pipeline"))
		}
	}
	dryRun := r.args.bool("dryRun")
	if dryRun {
		if index == nil {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "dry run mode requires an valid index modification.")
		}
		if u := index.Lookup("unique"); u.Type == 0 || !values.Truthy(u) {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "dry run mode requires an index modification with unique: true.")
		}
	}
	if index == nil {
		return nil, collModValidation(s, r, coll, true)
	}
	capped := false
	if c := s.Engine.Collection(r.DB, coll); c != nil {
		capped = c.Options.Capped
	}
	change, name, keyPattern, err := parseIndexChange(index, capped)
	if err == nil && ts != nil {
		keyPattern, err = ts.collModIndex(change, keyPattern)
	}
	if err != nil {
		return nil, err
	}
	// collMod's modifications: the index's, and the collection's others.
	mods := 0
	for _, set := range []bool{change.ExpireAfter != nil, change.Hidden != nil, change.PrepareUnique != nil, change.Unique, change.ForceNonUnique != nil} {
		if set {
			mods++
		}
	}
	for _, f := range []string{"validator", "validationLevel", "validationAction", "changeStreamPreAndPostImages", "expireAfterSeconds"} {
		if r.args.has(f) {
			mods++
		}
	}
	if dryRun {
		if mods > 1 {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "unique: true cannot be combined with any other modification in dry run mode.")
		}
		change.DryRun, change.Ctx = true, r.Ctx
		_, _, err := s.Engine.ModifyIndex(r.DB, coll, name, keyPattern, change)
		return nil, err
	}
	change.Combined, change.Ctx = mods > 1, r.Ctx
	// the collection's options change with the index, in one entry
	opts, changed, err := collModOptions(s, r, coll)
	if err != nil {
		return nil, err
	}
	if changed {
		change.Options = &opts
	}
	before, after, err := s.Engine.ModifyIndex(r.DB, coll, name, keyPattern, change)
	if err != nil {
		return nil, err
	}
	// What changed, in MongoDB's order; an unchanged hidden or
	// prepareUnique is not reported.
	out := bson.D{}
	if change.ExpireAfter != nil {
		if before.ExpireAfter >= 0 {
			out = append(out, bson.E{Key: "expireAfterSeconds_old", Value: before.ExpireAfter})
		}
		out = append(out, bson.E{Key: "expireAfterSeconds_new", Value: after.ExpireAfter})
	}
	if before.Hidden != after.Hidden {
		out = append(out, bson.E{Key: "hidden_old", Value: before.Hidden}, bson.E{Key: "hidden_new", Value: after.Hidden})
	}
	if !before.Unique && after.Unique {
		out = append(out, bson.E{Key: "unique_new", Value: true})
	}
	if change.PrepareUnique != nil && before.PrepareUnique != after.PrepareUnique && !after.Unique {
		out = append(out, bson.E{Key: "prepareUnique_old", Value: before.PrepareUnique}, bson.E{Key: "prepareUnique_new", Value: after.PrepareUnique})
	}
	if before.Unique && !after.Unique {
		out = append(out, bson.E{Key: "forceNonUnique_new", Value: true})
	}
	return marshal(out), nil
}

// parseIndexChange reads collMod's index document, as MongoDB checks it
// before it looks the index up; capped tells whether the collection is.
func parseIndexChange(index bson.Raw, capped bool) (change engine.IndexChange, name string, keyPattern bson.Raw, err error) {
	c, err := parseSub(index, collModIndexSpec)
	if err != nil {
		return change, "", nil, err
	}
	name, keyPattern = c.str("name"), c.doc("keyPattern")
	switch {
	case c.has("name") && keyPattern != nil:
		return change, "", nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot specify both key pattern and name.")
	case !c.has("name") && keyPattern == nil:
		return change, "", nil, mongoerr.New(mongoerr.InvalidOptions, "Must specify either index name or key pattern.")
	case !c.has("expireAfterSeconds") && !c.has("hidden") && !c.has("unique") && !c.has("prepareUnique") && !c.has("forceNonUnique"):
		return change, "", nil, mongoerr.New(mongoerr.InvalidOptions, "no expireAfterSeconds, hidden, unique, or prepareUnique field")
	case c.has("unique") && c.has("forceNonUnique"):
		return change, "", nil, mongoerr.New(mongoerr.InvalidOptions, "collMod does not support 'unique' and 'forceNonUnique' options at the same time")
	}
	if c.has("hidden") {
		b := c.bool("hidden")
		change.Hidden = &b
	}
	if c.has("expireAfterSeconds") && capped {
		// MongoDB 7.0 (parseCollModRequest): before the range and the
		// index are checked
		return change, "", nil, mongoerr.New(mongoerr.InvalidOptions, "TTL indexes are not supported for capped collections.")
	}
	if c.has("expireAfterSeconds") {
		// safeInt64: a double truncated, a decimal rounded half to even,
		// NaN 0; then the secondary TTL index range.
		n, _ := safeInt64(c.value("expireAfterSeconds"))
		switch {
		case n < 0:
			return change, "", nil, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
		case n > maxTTLSeconds:
			return change, "", nil, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
		}
		change.ExpireAfter = &n
	}
	if c.has("unique") {
		if !c.bool("unique") {
			return change, "", nil, mongoerr.New(mongoerr.BadValue, "Cannot make index non-unique")
		}
		change.Unique = true
	}
	if c.has("prepareUnique") {
		b := c.bool("prepareUnique")
		change.PrepareUnique = &b
	}
	if c.has("forceNonUnique") {
		// false is refused once the index is found (ModifyIndex)
		b := c.bool("forceNonUnique")
		change.ForceNonUnique = &b
	}
	return change, name, keyPattern, nil
}

// collModValidation applies collMod's validator, validationLevel and
// validationAction, checked as create checks them. With always, a collMod
// that changes none of them is still applied, and so logged: MongoDB logs
// every collMod, and change streams report it as a modify event.
func collModValidation(s *Service, r *Request, coll string, always bool) error {
	ch, changed, err := collModOptions(s, r, coll)
	if err != nil || !changed && !always {
		return err
	}
	return s.Engine.ModifyValidation(r.DB, coll, ch)
}

// collModOptions reads collMod's changes of the collection's options
// (collModValidation's), and whether it makes any.
func collModOptions(s *Service, r *Request, coll string) (ch engine.ValidationChange, changed bool, err error) {
	if r.args.has("validator") {
		v := r.args.doc("validator")
		// CollectionImpl::parseValidator checks the namespace, then parses
		if c := s.Engine.Collection(r.DB, coll); c != nil {
			if err := engine.CheckValidatorNamespace(r.DB, coll, c.UUID, v); err != nil {
				return ch, false, err
			}
		}
		if _, err := query.CompileValidator(v, nil); err != nil {
			// CollectionImpl::parseValidator's context
			return ch, false, mongoerr.AddContext(err, engine.ValidatorParseContext)
		}
		ch.Validator, changed = v, true
	}
	for _, key := range [...]string{"validationLevel", "validationAction"} {
		if !r.args.has(key) {
			continue
		}
		val := r.args.str(key)
		allowed := validationLevels
		if key == "validationAction" {
			allowed = validationActions
		}
		if !allowed[val] {
			return ch, false, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'collMod.%s' is not a valid value.", val, key)
		}
		if key == "validationLevel" {
			ch.Level = &val
		} else {
			ch.Action = &val
		}
		changed = true
	}
	if err := cappedLimitsArgs(s, r, coll, &ch); err != nil {
		return ch, false, err
	}
	if ch.CappedSize != nil || ch.CappedMax != nil {
		changed = true
	}
	if d := r.args.doc("changeStreamPreAndPostImages"); d != nil {
		on, err := parsePreAndPostImages(d, "collMod")
		if err == nil {
			err = engine.CheckPreAndPostImagesNamespace(r.DB, on)
		}
		if err != nil {
			return ch, false, err
		}
		ch.PreImages, changed = &on, true
	}
	if r.args.has("expireAfterSeconds") {
		// A number of seconds, or "off"; another string is InvalidOptions.
		switch v := r.args.value("expireAfterSeconds"); {
		case v.Type == bson.TypeString && v.StringValue() == "off":
		case v.IsNumber():
			n, ok := values.Int64(v)
			if !ok {
				n = -1
			}
			if err := checkClusteredTTL(n); err != nil {
				return ch, false, err
			}
			ch.TTL = &n
		default:
			return ch, false, mongoerr.New(mongoerr.InvalidOptions, "Invalid value for 'expireAfterSeconds': %s (a number of seconds, or \"off\")", v)
		}
		ch.SetTTL, changed = true, true
	}
	if r.args.has("timeseriesBucketsMayHaveMixedSchemaData") {
		on := r.args.bool("timeseriesBucketsMayHaveMixedSchemaData")
		ch.MixedSchema, changed = &on, true
	}
	return ch, changed, nil
}

// cappedLimitsArgs reads collMod's cappedSize and cappedMax, which only a
// capped collection takes, as safeInt64 (a double truncated, a decimal
// rounded half to even, NaN 0), checked as create checks size and max: a
// size from 1 byte to 1 PB, a max below 2^31 (0 or less: no limit, stored
// as 2^31-1).
func cappedLimitsArgs(s *Service, r *Request, coll string, ch *engine.ValidationChange) error {
	if !r.args.has("cappedSize") && !r.args.has("cappedMax") {
		return nil
	}
	if c := s.Engine.Collection(r.DB, coll); c == nil || !c.Options.Capped {
		return mongoerr.New(mongoerr.InvalidOptions, "Collection must be capped.")
	}
	if r.args.has("cappedSize") {
		n, _ := safeInt64(r.args.value("cappedSize"))
		switch {
		case n <= 0:
			return mongoerr.New(mongoerr.BadValue, "size has to be > 0")
		case n > maxCappedSize:
			return mongoerr.New(mongoerr.BadValue, "size cannot exceed 1 PB")
		}
		ch.CappedSize = &n
	}
	if r.args.has("cappedMax") {
		n, _ := safeInt64(r.args.value("cappedMax"))
		if n >= 1<<31 {
			return mongoerr.New(mongoerr.BadValue, "max in a capped collection has to be < 2^31 or not set")
		}
		n = cappedMaxDocs(n)
		ch.CappedMax = &n
	}
	return nil
}

// collModView runs collMod on a view: viewOn and pipeline replace its
// source and its pipeline, each alone or both (with access control on,
// collModCmd has asked for both); other options are not a view's.
func collModView(s *Service, r *Request, v *viewDef) error {
	for _, f := range r.args.present() {
		if f != "viewOn" && f != "pipeline" {
			return mongoerr.New(mongoerr.InvalidOptions, "option not supported on a view: %s", f)
		}
	}
	hasOn, hasPipeline := r.args.has("viewOn"), r.args.has("pipeline")
	if !hasOn && !hasPipeline {
		return nil
	}
	viewOn, pipeline := v.viewOn, v.pipeline
	if hasOn {
		viewOn = r.args.str("viewOn")
	}
	if hasPipeline {
		var err error
		if pipeline, err = r.args.docs("pipeline"); err != nil {
			return err
		}
	}
	return s.modifyView(r, v, viewOn, pipeline)
}

// firstOf is the first of names c holds.
func firstOf(c *cmdArgs, names ...string) string {
	for _, n := range names {
		if c.has(n) {
			return n
		}
	}
	return ""
}
