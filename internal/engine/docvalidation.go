package engine

import (
	"bytes"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/timeseries"
)

// Validation levels and actions, as MongoDB names them.
// https://www.mongodb.com/docs/v7.0/core/schema-validation/specify-validation-level/
const (
	ValidationStrict   = "strict"
	ValidationModerate = "moderate"
	ValidationOff      = "off"
	ValidationError    = "error"
	ValidationWarn     = "warn"
)

// docValidator is a collection's document validation rules: the compiled
// validator and how strictly and with what consequence it applies. A
// collection without a validator has none.
type docValidator struct {
	filter *query.Filter
	level  string
	action string
	// err is why a stored validator does not parse any more (an older
	// version accepted it): every write to the collection fails with it,
	// as MongoDB's CollectionImpl::init keeps the parse status and
	// checkValidation returns it before anything else.
	err error
}

// validation is the collection options collMod may change after creation,
// replaced whole so that writers load a consistent set without locking.
type validation struct {
	spec      bson.Raw // the validator as given; nil or empty for none
	level     string   // as given; "" for the default (strict)
	action    string   // as given; "" for the default (error)
	validator *docValidator
}

// newValidation compiles the validation options of o, under the
// collection's default collation (coll).
func newValidation(spec bson.Raw, level, action string, coll *collation.Collator) (*validation, error) {
	v := &validation{spec: spec, level: level, action: action}
	if len(spec) <= 5 {
		return v, nil
	}
	f, err := query.CompileValidator(spec, coll)
	if err != nil {
		return nil, err
	}
	v.validator = &docValidator{filter: f, level: orDefault(level, ValidationStrict), action: orDefault(action, ValidationError)}
	if v.validator.level == ValidationModerate || v.validator.action == ValidationWarn {
		// MongoDB's CollectionImpl::parseValidator allows no encryption
		// keywords then: create and collMod (of the validator, the level
		// or the action) fail with QueryFeatureNotAllowed.
		if err := f.EncryptionBanned(); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// validate applies c's validator to a write turning old (nil for an
// insert) into next: with validationLevel moderate an update of a document
// that already failed the validator is not checked; bypass
// (bypassDocumentValidation) skips the check. A failing document is
// refused with DocumentValidationFailure and its errInfo, or, with
// validationAction warn, logged and written.
//
// A write of a bucket into a time series collection's buckets collection
// whose control.min and control.max of a field differ in type class fails
// with CannotInsertTimeseriesBucketsWithMixedSchema whatever the bypass, as
// MongoDB's time series op observer refuses it when the collection is not
// marked as possibly holding mixed schemas (collMod's
// timeseriesBucketsMayHaveMixedSchemaData): the bucket filter of a
// measurement field (timeseries.BucketFilter) relies on each bucket's
// bounds being of one class unless it is.
func (e *Engine) validate(c *Collection, old, next bson.Raw, bypass bool) error {
	if c.Options.Timeseries != nil && !c.mixedSchema.Load() && timeseries.MixedSchema(next) {
		return mongoerr.New(mongoerr.CannotInsertTimeseriesBucketsWithMixedSchema, "Cannot write time-series bucket containing mixed schema data, please run collMod with timeseriesBucketsMayHaveMixedSchemaData and retry your insert")
	}
	v := c.validation.Load()
	if v == nil || v.validator == nil {
		return nil
	}
	dv := v.validator
	if dv.err != nil {
		return dv.err
	}
	if bypass {
		return nil
	}
	if dv.level == ValidationOff || dv.filter.Match(next) {
		return nil
	}
	if old != nil && dv.level == ValidationModerate && !dv.filter.Match(old) {
		return nil
	}
	info := bson.D{{Key: "failingDocumentId", Value: documentID(next)}, {Key: "details", Value: validationDetails(dv.filter.Doc(), next)}}
	if dv.action == ValidationWarn {
		// The whole document, as MongoDB's warning 20294 logs it.
		e.log.Warn("Document would fail validation", "namespace", c.ns, "document", next.String(), "errInfo", bsonString(info))
		return nil
	}
	err := mongoerr.New(mongoerr.DocumentValidationFailure, "Document failed validation")
	err.Extra = bson.D{{Key: "errInfo", Value: info}}
	return err
}

// bsonString is d as extended JSON, for logs.
func bsonString(d bson.D) string {
	raw, err := bson.Marshal(d)
	if err != nil {
		return ""
	}
	return bson.Raw(raw).String()
}

// initValidation compiles the validation of c's options, and takes their
// pre-image setting, the other option collMod changes.
func (c *Collection) initValidation() error {
	o := c.Options
	c.preImages.Store(o.PreAndPostImages)
	c.mixedSchema.Store(o.MixedSchema)
	c.ttl.Store(o.ExpireAfterSeconds)
	if len(o.Validator) == 0 && o.ValidationLevel == "" && o.ValidationAction == "" {
		return nil
	}
	v, err := newValidation(o.Validator, o.ValidationLevel, o.ValidationAction, o.collator())
	if err != nil {
		return err
	}
	c.validation.Store(v)
	return nil
}

// ValidationChange is what collMod changes of a collection's validation
// and pre-image setting; nil fields stay as they are.
type ValidationChange struct {
	Validator bson.Raw
	Level     *string
	Action    *string
	PreImages *bool
	// MixedSchema marks a time series collection's buckets as possibly
	// holding several schemas, or not (timeseriesBucketsMayHaveMixedSchemaData).
	MixedSchema *bool
	// SetTTL changes the expireAfterSeconds of a clustered or time series
	// collection to TTL (nil: "off").
	SetTTL bool
	TTL    *int64
	// Timeseries replaces a time series collection's options (their
	// granularity and bucketing; timeseries.Modify checks the change).
	Timeseries bson.Raw
	// CappedSize and CappedMax resize a capped collection: the inserts
	// that follow evict the oldest documents past the new limits.
	CappedSize, CappedMax *int64
}

// ValidatorParseContext prefixes the error of a validator collMod cannot
// parse, as MongoDB's CollectionImpl::parseValidator does (create parses
// it without).
const ValidatorParseContext = "Parsing of collection validator failed"

// checkValidationChange checks collMod's change ch of the options cur as
// MongoDB applies it: the new validator is parsed under the current level
// and action, then the validator is parsed again under the new action
// and under the new level, whose failures collMod reports as failing to
// set them (CollectionImpl::setValidationAction and setValidationLevel,
// coll_mod.cpp): a validator with encryption keywords and an action warn
// or a level moderate fail at the change that brings them together.
func checkValidationChange(cur CollectionOptions, ch ValidationChange) error {
	validator, level, action := cur.Validator, cur.ValidationLevel, cur.ValidationAction
	if ch.Validator != nil {
		validator = ch.Validator
		if _, err := newValidation(validator, level, action, nil); err != nil {
			return mongoerr.AddContext(err, ValidatorParseContext)
		}
	}
	if ch.Action != nil {
		action = *ch.Action
		if _, err := newValidation(validator, level, action, nil); err != nil {
			return mongoerr.AddContext(mongoerr.AddContext(err, ValidatorParseContext), "Failed to set validationAction")
		}
	}
	if ch.Level != nil {
		level = *ch.Level
		if _, err := newValidation(validator, level, action, nil); err != nil {
			return mongoerr.AddContext(mongoerr.AddContext(err, ValidatorParseContext), "Failed to set validationLevel")
		}
	}
	return nil
}

// ModifyValidation applies collMod's validator, validationLevel and
// validationAction to db.name: a catalog change, which every frontend has
// loaded when it returns.
func (e *Engine) ModifyValidation(db, name string, ch ValidationChange) error {
	e.cat.mu.Lock()
	v, err := e.catalogChange(func(tx storage.Txn) error {
		c := e.cat.colls[nsKey(db, name)]
		if c == nil {
			return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
		}
		before := c.CurrentOptions()
		cur, fields, err := c.modifiedOptions(before, ch)
		if err != nil {
			return err
		}
		mod := append(bson.D{{Key: "collMod", Value: name}}, fields...)
		if err := e.logCommand(tx, db, c, mod, collModO2(c, before, nil)); err != nil {
			return err
		}
		return putCatalogEntryOptions(tx, c, cur, append(slices.Clone(c.Indexes()), c.Building()...))
	})
	e.cat.mu.Unlock()
	if err != nil {
		return err
	}
	return e.awaitVersion(v)
}

// modifiedOptions is c's options cur with collMod's change ch applied,
// checked as MongoDB's collMod checks it, and the fields ch gives the
// collMod entry, in the order of MongoDB's CollModRequest (coll_mod.idl),
// which parseCollModRequest logs them in.
func (c *Collection) modifiedOptions(cur CollectionOptions, ch ValidationChange) (CollectionOptions, bson.D, error) {
	if err := checkValidationChange(cur, ch); err != nil {
		return cur, nil, err
	}
	if ch.Validator != nil {
		cur.Validator = ch.Validator
		if len(ch.Validator) <= 5 {
			cur.Validator = nil
		}
		// Setting a validator stores the level and action too, their
		// defaults when unset (CollectionImpl::setValidator): the
		// options then show them.
		if cur.ValidationLevel == "" {
			cur.ValidationLevel = "strict"
		}
		if cur.ValidationAction == "" {
			cur.ValidationAction = "error"
		}
	}
	if ch.Level != nil {
		cur.ValidationLevel = *ch.Level
	}
	if ch.Action != nil {
		cur.ValidationAction = *ch.Action
	}
	if ch.PreImages != nil {
		cur.PreAndPostImages = *ch.PreImages
	}
	if ch.SetTTL {
		if !c.Options.Clustered() {
			return cur, nil, mongoerr.New(mongoerr.InvalidOptions, "'expireAfterSeconds' option is only supported on clustered and time-series collections")
		}
		cur.ExpireAfterSeconds = ch.TTL
	}
	if ch.CappedSize != nil || ch.CappedMax != nil {
		if !c.Options.Capped {
			return cur, nil, mongoerr.New(mongoerr.InvalidOptions, "Collection must be capped.")
		}
		if ch.CappedSize != nil {
			cur.Size = *ch.CappedSize
		}
		if ch.CappedMax != nil {
			cur.Max = *ch.CappedMax
		}
	}
	if ch.Timeseries != nil {
		if c.Options.Timeseries == nil {
			return cur, nil, mongoerr.New(mongoerr.InvalidOptions, "option only supported on a time-series collection: timeseries")
		}
		cur.Timeseries = ch.Timeseries
	}
	if ch.MixedSchema != nil {
		if c.Options.Timeseries == nil {
			return cur, nil, mongoerr.New(mongoerr.InvalidOptions, "option only supported on a time-series collection: timeseriesBucketsMayHaveMixedSchemaData")
		}
		cur.MixedSchema = *ch.MixedSchema
	}
	var mod bson.D
	if ch.Validator != nil {
		mod = append(mod, bson.E{Key: "validator", Value: ch.Validator})
	}
	if ch.Level != nil {
		mod = append(mod, bson.E{Key: "validationLevel", Value: *ch.Level})
	}
	if ch.Action != nil {
		mod = append(mod, bson.E{Key: "validationAction", Value: *ch.Action})
	}
	if ch.PreImages != nil {
		mod = append(mod, bson.E{Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: *ch.PreImages}}})
	}
	if ch.SetTTL {
		var ttl any = "off"
		if ch.TTL != nil {
			ttl = *ch.TTL
		}
		mod = append(mod, bson.E{Key: "expireAfterSeconds", Value: ttl})
	}
	if ch.Timeseries != nil {
		mod = append(mod, bson.E{Key: "timeseries", Value: ch.Timeseries})
	}
	if ch.MixedSchema != nil {
		mod = append(mod, bson.E{Key: "timeseriesBucketsMayHaveMixedSchemaData", Value: *ch.MixedSchema})
	}
	if ch.CappedSize != nil {
		mod = append(mod, bson.E{Key: "cappedSize", Value: *ch.CappedSize})
	}
	if ch.CappedMax != nil {
		mod = append(mod, bson.E{Key: "cappedMax", Value: *ch.CappedMax})
	}
	return cur, mod, nil
}

// syncValidation makes c's validation (and pre-image setting) the one of
// the stored options o.
func (c *Collection) syncValidation(o CollectionOptions) error {
	c.preImages.Store(o.PreAndPostImages)
	c.mixedSchema.Store(o.MixedSchema)
	c.ttl.Store(o.ExpireAfterSeconds)
	if c.capped != nil {
		c.capped.setLimits(o)
	}
	if o.Timeseries != nil && !bytes.Equal(o.Timeseries, c.CurrentOptions().Timeseries) {
		ts := o.Timeseries
		c.timeseries.Store(&ts)
	}
	cur := c.CurrentOptions()
	if bytes.Equal(cur.Validator, o.Validator) && cur.ValidationLevel == o.ValidationLevel && cur.ValidationAction == o.ValidationAction {
		return nil
	}
	v, err := newValidation(o.Validator, o.ValidationLevel, o.ValidationAction, o.collator())
	if err != nil {
		// a stored validator this version refuses does not stop the
		// catalog from loading; the collection's writes fail with why
		v = &validation{spec: o.Validator, level: o.ValidationLevel, action: o.ValidationAction,
			validator: &docValidator{err: mongoerr.AddContext(err, ValidatorParseContext)}}
	}
	c.validation.Store(v)
	return nil
}

// ValidatorError is why c's stored validator does not parse, nil when it
// does or there is none.
func (c *Collection) ValidatorError() error {
	if v := c.validation.Load(); v != nil && v.validator != nil {
		return v.validator.err
	}
	return nil
}
