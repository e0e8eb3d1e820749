package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(validateCmd, "validate")
}

// validateCmd checks a collection's indexes against its documents and
// reports what is wrong, in MongoDB's reply shape.
func validateCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	err = eachArg(r.Cmd, func(key string, _ bson.RawValue) (bool, error) {
		switch key {
		case "full", "background", "repair", "metadata", "checkBSONConformance", "scandata":
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	c := s.Engine.Collection(r.DB, name)
	if c == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "Collection '%s.%s' does not exist to validate.", r.DB, name)
	}
	res, err := s.Engine.Validate(c)
	if err != nil {
		return nil, err
	}
	keys := bson.D{}
	details := bson.D{}
	for _, n := range append([]string{"_id_"}, indexNames(c)...) {
		keys = append(keys, bson.E{Key: n, Value: res.KeysPerIndex[n]})
		details = append(details, bson.E{Key: n, Value: bson.D{{Key: "valid", Value: len(res.Errors) == 0}}})
	}
	errs := bson.A{}
	for _, e := range res.Errors {
		errs = append(errs, e)
	}
	return marshal(bson.D{
		{Key: "ns", Value: r.DB + "." + name},
		{Key: "nInvalidDocuments", Value: int32(0)},
		{Key: "nNonCompliantDocuments", Value: int32(0)},
		{Key: "nrecords", Value: res.Records},
		{Key: "nIndexes", Value: int32(len(keys))},
		{Key: "keysPerIndex", Value: keys},
		{Key: "indexDetails", Value: details},
		{Key: "valid", Value: len(res.Errors) == 0},
		{Key: "repaired", Value: false},
		{Key: "warnings", Value: bson.A{}},
		{Key: "errors", Value: errs},
		{Key: "extraIndexEntries", Value: bson.A{}},
		{Key: "missingIndexEntries", Value: bson.A{}},
		{Key: "corruptRecords", Value: bson.A{}},
	}), nil
}

// indexNames lists c's secondary index names.
func indexNames(c *engine.Collection) []string {
	var out []string
	for _, ix := range c.Indexes() {
		out = append(out, ix.Name)
	}
	return out
}
