package commands

import (
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/update"
	"github.com/folio-db/folio/internal/values"
)

// Cluster server parameters, as MongoDB 7.0 keeps them on a replica set:
// setClusterParameter stores one in config.clusterParameters as
// {_id: name, clusterParameterTime, ...its fields}, and getClusterParameter
// reads them back (a parameter never set has its default, at
// Timestamp(0, 0)). Folio has one, changeStreamOptions, whose
// preAndPostImages.expireAfterSeconds bounds how long the pre-images of
// change streams are kept (engine.ExpirePreImages, run by the instance).
// https://www.mongodb.com/docs/v7.0/reference/command/setClusterParameter/

func init() {
	registerAdmin(setClusterParameterCmd, &argSpec{path: "setClusterParameter",
		open: "MongoDB's IDL of setClusterParameter is not strict: it ignores fields it does not declare"}, "setClusterParameter")
	registerAdmin(getClusterParameterCmd, &argSpec{path: "getClusterParameter",
		open: "MongoDB's IDL of getClusterParameter is not strict: it ignores fields it does not declare"}, "getClusterParameter")
	authzRules["setClusterParameter"] = onCluster("setClusterParameter")
	authzRules["getClusterParameter"] = onCluster("getClusterParameter")
}

const (
	// configClusterParameters is where the parameters are stored.
	configClusterParameters = "clusterParameters"
	// changeStreamOptions is the one cluster parameter Folio has.
	changeStreamOptions = "changeStreamOptions"
)

// preImagesExpiry is changeStreamOptions.preAndPostImages.expireAfterSeconds:
// off (0), or a number of seconds.
type preImagesExpiry int64

// doc is the parameter as getClusterParameter shows it, set at t.
func (x preImagesExpiry) doc(t bson.Timestamp) bson.D {
	var after any = "off"
	if x > 0 {
		after = int64(x)
	}
	return bson.D{{Key: "_id", Value: changeStreamOptions}, {Key: "clusterParameterTime", Value: t},
		{Key: "preAndPostImages", Value: bson.D{{Key: "expireAfterSeconds", Value: after}}}}
}

// parsePreImagesExpiry reads changeStreamOptions' value as MongoDB's
// ChangeStreamOptionsParameter validates it: preAndPostImages is
// required, with expireAfterSeconds, "off" or a positive number (any
// numeric type, truncated to an integer); every parse error is BadValue.
func parsePreImagesExpiry(v bson.Raw) (preImagesExpiry, error) {
	failed := func(format string, args ...any) error {
		return mongoerr.New(mongoerr.BadValue, "Failed parsing new changeStreamOptions value"+format, args...)
	}
	var images bson.RawValue
	it := rawdoc.Iterate(v)
	for {
		k, val, ok := it.Next()
		if !ok {
			break
		}
		switch string(k) {
		case "preAndPostImages":
			if images.Type != 0 {
				return 0, failed("BSON field 'changeStreamOptions.preAndPostImages' is a duplicate field")
			}
			images = val
		case "_id", "clusterParameterTime":
		default:
			return 0, failed("BSON field 'changeStreamOptions.%s' is an unknown field.", k)
		}
	}
	if images.Type == 0 {
		return 0, failed("BSON field 'changeStreamOptions.preAndPostImages' is missing but a required field")
	}
	if images.Type != bson.TypeEmbeddedDocument {
		return 0, failed("BSON field 'changeStreamOptions.preAndPostImages' is the wrong type '%s', expected type 'object'", values.TypeName(images.Type))
	}
	var after bson.RawValue
	it = rawdoc.Iterate(images.Value)
	for {
		k, val, ok := it.Next()
		if !ok {
			break
		}
		if string(k) != "expireAfterSeconds" {
			return 0, failed("BSON field 'changeStreamOptions.preAndPostImages.%s' is an unknown field.", k)
		}
		after = val
	}
	switch {
	case after.Type == 0:
		return 0, failed("BSON field 'changeStreamOptions.preAndPostImages.expireAfterSeconds' is missing but a required field")
	case after.Type == bson.TypeString:
		if after.StringValue() != "off" {
			return 0, mongoerr.New(mongoerr.BadValue, "Non-numeric value of 'expireAfterSeconds' should be 'off'")
		}
		return 0, nil
	case values.IsNumber(after.Type):
		n, _ := safeInt64(after)
		if n <= 0 {
			return 0, mongoerr.New(mongoerr.BadValue, "Numeric value of 'expireAfterSeconds' should be positive")
		}
		return preImagesExpiry(n), nil
	}
	return 0, failed("%s", mongoerr.WrongTypes("changeStreamOptions.preAndPostImages.expireAfterSeconds", values.TypeName(after.Type), "string", "long").Msg)
}

// clusterParametersOnReplSet refuses the commands on a standalone, as
// MongoDB 7.0 does.
func (s *Service) clusterParametersOnReplSet(name string) error {
	if s.ReplSetName == "" {
		return mongoerr.New(mongoerr.IllegalOperation, "%s cannot be run on standalones", name)
	}
	return nil
}

// unknownParameter is MongoDB's error for a name no cluster parameter has.
func unknownParameter(name string) error {
	return mongoerr.New(mongoerr.NoSuchKey, "Unknown server parameter: %s", name)
}

// setClusterParameterCmd stores {setClusterParameter: {<name>: <value>}}:
// the first field names the parameter, its value replaces the stored one.
func setClusterParameterCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.clusterParametersOnReplSet("setClusterParameter"); err != nil {
		return nil, err
	}
	body := r.args.first()
	switch body.Type {
	case bson.TypeEmbeddedDocument:
	case bson.TypeNull:
		return nil, mongoerr.MissingField("setClusterParameter.setClusterParameter")
	default:
		return nil, wrongType("setClusterParameter", "setClusterParameter", body, "object")
	}
	if rawdoc.Len(body.Value) > 1 {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "setClusterParameter sets one parameter at a time")
	}
	name := rawdoc.FirstKey(body.Value)
	if name != changeStreamOptions {
		return nil, unknownParameter(name)
	}
	v := rawdoc.Lookup(body.Value, name)
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.BadValue, "Cluster parameter value must be an object")
	}
	// The value's fields go into the stored document as they are, which
	// must be a valid replacement.
	for it := rawdoc.Iterate(v.Value); ; {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		if len(k) > 0 && k[0] == '$' {
			return nil, update.DollarField(string(k))
		}
	}
	x, err := parsePreImagesExpiry(v.Document())
	if err != nil {
		return nil, err
	}
	if _, err := s.Engine.Update(configDB, configClusterParameters, engine.UpdateSpec{
		Filter:       marshal(bson.D{{Key: "_id", Value: changeStreamOptions}}),
		Update:       marshal(x.doc(s.Clock.Now().Timestamp())),
		Upsert:       true,
		WriteOptions: engine.WriteOptions{Journal: true, Ctx: r.Ctx},
	}); err != nil {
		return nil, err
	}
	return marshal(bson.D{}), nil
}

// getClusterParameterCmd answers {getClusterParameter: <name> | "*" |
// [<name>, ...]} with the parameters named, in order.
func getClusterParameterCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.clusterParametersOnReplSet("getClusterParameter"); err != nil {
		return nil, err
	}
	var names []string
	switch body := r.args.first(); body.Type {
	case bson.TypeString:
		names = []string{body.StringValue()}
		if names[0] == "*" {
			names = []string{changeStreamOptions}
		}
	case bson.TypeArray:
		vals, _ := body.Array().Values()
		if len(vals) == 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "Must supply at least one cluster server parameter name to getClusterParameter")
		}
		for i, v := range vals {
			if v.Type != bson.TypeString {
				return nil, wrongType("getClusterParameter", "getClusterParameter."+strconv.Itoa(i), v, "string")
			}
			names = append(names, v.StringValue())
		}
	default:
		return nil, mongoerr.WrongTypes("getClusterParameter.getClusterParameter", values.TypeName(body.Type), "string", "array")
	}
	var out bson.A
	for _, name := range names {
		if name != changeStreamOptions {
			return nil, unknownParameter(name)
		}
		x, t, err := s.changeStreamOptions()
		if err != nil {
			return nil, err
		}
		out = append(out, x.doc(t))
	}
	return marshal(bson.D{{Key: "clusterParameters", Value: out}}), nil
}

// changeStreamOptions is the stored changeStreamOptions parameter and
// when it was set; off at Timestamp(0, 0) when it never was.
func (s *Service) changeStreamOptions() (preImagesExpiry, bson.Timestamp, error) {
	doc, err := findOne(s.Engine, configDB, configClusterParameters, engine.FindOptions{Filter: marshal(bson.D{{Key: "_id", Value: changeStreamOptions}})})
	if err != nil || doc == nil {
		return 0, bson.Timestamp{}, err
	}
	x, err := parsePreImagesExpiry(doc)
	t, i, _ := doc.Lookup("clusterParameterTime").TimestampOK()
	return x, bson.Timestamp{T: t, I: i}, err
}

// PreImagesExpiry is how long the pre-images of change streams are kept
// (changeStreamOptions.preAndPostImages.expireAfterSeconds); ok is false
// when they go only with their oplog entries.
func (s *Service) PreImagesExpiry() (after time.Duration, ok bool, err error) {
	x, _, err := s.changeStreamOptions()
	return time.Duration(x) * time.Second, x > 0, err
}
