package commands

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(collModCmd, collModSpec, "collMod")
}

// collModSpec declares collMod's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/collMod/
var collModSpec = &argSpec{path: "collMod", fields: []argField{
	arg("index", tDoc),
	arg("validator", tDoc),
	arg("validationLevel", tString),
	arg("validationAction", tString),
	arg("changeStreamPreAndPostImages", tDoc),
	arg("expireAfterSeconds", tAny),
	arg("timeseries", tDoc),
	arg("viewOn", tString),
	arg("pipeline", tArray),
	refuse("clusteredIndex", tBool, "clustered collections"),
	refuse("cappedSize", tLong, "resizing capped collections"),
	refuse("cappedMax", tLong, "resizing capped collections"),
}, subs: []*argSpec{collModIndexSpec, preAndPostImagesSpecs["collMod"]}}

// collModIndexSpec declares collMod's index document.
var collModIndexSpec = &argSpec{path: "collMod.index", fields: []argField{
	arg("name", tString),
	arg("keyPattern", tDoc),
	arg("hidden", tBool),
	arg("expireAfterSeconds", tAny),
	refuse("prepareUnique", tBool, "converting an index to a unique one"),
	refuse("unique", tBool, "converting an index to a unique one"),
	refuse("forceNonUnique", tBool, "converting a unique index to a non-unique one"),
}}

// collModCmd changes an index's hidden flag or TTL, as
// {collMod: c, index: {name | keyPattern, hidden, expireAfterSeconds}}
// does, and reports the old and new values. Options Folio does not
// implement (validators, change stream images...) fail clearly.
func collModCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	index := r.args.doc("index")
	ts, err := s.timeseriesOf(r, r.DB, coll)
	if err != nil {
		return nil, err
	}
	if ts != nil {
		// A time series collection's options are its buckets': the expiry
		// of its measurements and its bucketing change.
		for _, f := range r.args.present() {
			if f != "expireAfterSeconds" && f != "timeseries" {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "option not supported on a time-series collection: %s", f)
			}
		}
		if mod := r.args.doc("timeseries"); mod != nil {
			if err := s.collModTimeseries(r, ts, mod); err != nil {
				return nil, err
			}
		}
		return nil, collModValidation(s, r, ts.buckets, false)
	}
	if r.args.has("timeseries") {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "option only supported on a time-series collection: timeseries")
	}
	if v, err := s.lookupView(r, r.DB, coll); err != nil || v != nil {
		if err != nil {
			return nil, err
		}
		return nil, collModView(s, r, v)
	}
	if r.args.has("viewOn") || r.args.has("pipeline") {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "option only supported on a view: %s", firstOf(&r.args, "viewOn", "pipeline"))
	}
	if s.Engine.Collection(r.DB, coll) == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
	}
	if err := collModValidation(s, r, coll, index == nil); err != nil || index == nil {
		return nil, err
	}
	c, err := parseSub(index, collModIndexSpec)
	if err != nil {
		return nil, err
	}
	name, keyPattern := c.str("name"), c.doc("keyPattern")
	var change engine.IndexChange
	if c.has("hidden") {
		b := c.bool("hidden")
		change.Hidden = &b
	}
	if c.has("expireAfterSeconds") {
		n, ok := values.Int64(c.value("expireAfterSeconds"))
		if !ok || n < 0 || n > maxTTLSeconds {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "expireAfterSeconds must be a number between 0 and %d", maxTTLSeconds)
		}
		change.ExpireAfter = &n
	}
	if (name == "") == (keyPattern == nil) {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "must specify either index name or key pattern")
	}
	before, after, err := s.Engine.ModifyIndex(r.DB, coll, name, keyPattern, change)
	if err != nil {
		return nil, err
	}
	out := bson.D{}
	if change.Hidden != nil {
		out = append(out, bson.E{Key: "hidden_old", Value: before.Hidden}, bson.E{Key: "hidden_new", Value: after.Hidden})
	}
	if change.ExpireAfter != nil {
		out = append(out, bson.E{Key: "expireAfterSeconds_old", Value: before.ExpireAfter}, bson.E{Key: "expireAfterSeconds_new", Value: after.ExpireAfter})
	}
	return marshal(out), nil
}

// checkValidatorNamespace is MongoDB's refusal (InvalidOptions) of a
// validator, unless empty, on a system collection other than a time
// series' buckets, or on a collection of an internal database.
func checkValidatorNamespace(db, coll string, validator bson.Raw) error {
	switch {
	case len(validator) <= 5, strings.HasPrefix(coll, timeseries.BucketsPrefix):
		return nil
	case strings.HasPrefix(coll, "system."):
		return mongoerr.New(mongoerr.InvalidOptions, "Document validators not allowed on system collection %s.%s", db, coll)
	case db == "admin" || db == "local" || db == configDB:
		return mongoerr.New(mongoerr.InvalidOptions, "Document validators are not allowed on collection %s.%s in the %s internal database", db, coll, db)
	}
	return nil
}

// collModValidation applies collMod's validator, validationLevel and
// validationAction, checked as create checks them. With always, a collMod
// that changes none of them is still applied, and so logged: MongoDB logs
// every collMod, and change streams report it as a modify event.
func collModValidation(s *Service, r *Request, coll string, always bool) error {
	var ch engine.ValidationChange
	changed := false
	if r.args.has("validator") {
		v := r.args.doc("validator")
		if _, err := engine.CompileValidator(v, nil); err != nil {
			return err
		}
		if err := checkValidatorNamespace(r.DB, coll, v); err != nil {
			return err
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
			return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'collMod.%s' is not a valid value.", val, key)
		}
		if key == "validationLevel" {
			ch.Level = &val
		} else {
			ch.Action = &val
		}
		changed = true
	}
	if d := r.args.doc("changeStreamPreAndPostImages"); d != nil {
		on, err := parsePreAndPostImages(d, "collMod")
		if err != nil {
			return err
		}
		ch.PreImages, changed = &on, true
	}
	if r.args.has("expireAfterSeconds") {
		// A number of seconds, or "off".
		switch v := r.args.value("expireAfterSeconds"); {
		case v.Type == bson.TypeString && v.StringValue() == "off":
		case v.IsNumber():
			n, ok := values.Int64(v)
			if !ok || n < 0 {
				return mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
			}
			ch.TTL = &n
		default:
			return mongoerr.New(mongoerr.InvalidOptions, "Invalid value for 'expireAfterSeconds': %s (a number of seconds, or \"off\")", v)
		}
		ch.SetTTL, changed = true, true
	}
	if !changed && !always {
		return nil
	}
	return s.Engine.ModifyValidation(r.DB, coll, ch)
}

// collModView runs collMod on a view: viewOn and pipeline, both given,
// replace its definition; other options are not a view's.
func collModView(s *Service, r *Request, v *viewDef) error {
	for _, f := range r.args.present() {
		if f != "viewOn" && f != "pipeline" {
			return mongoerr.New(mongoerr.InvalidOptions, "option not supported on a view: %s", f)
		}
	}
	if !r.args.has("viewOn") || !r.args.has("pipeline") {
		return mongoerr.New(mongoerr.InvalidOptions, "must specify both 'viewOn' and 'pipeline' when modifying a view and auth is enabled")
	}
	pipeline, err := r.args.docs("pipeline")
	if err != nil {
		return err
	}
	return s.modifyView(r, v, r.args.str("viewOn"), pipeline)
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
