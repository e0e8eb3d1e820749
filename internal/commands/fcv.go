package commands

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	registerAdmin(setFCVCmd, setFCVSpec, "setFeatureCompatibilityVersion")
	authzRules["setFeatureCompatibilityVersion"] = onCluster("setFeatureCompatibilityVersion")
}

// setFCVSpec declares setFeatureCompatibilityVersion's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/setFeatureCompatibilityVersion/
var setFCVSpec = &argSpec{path: "setFeatureCompatibilityVersion", fields: []argField{
	arg("confirm", tBool),
}}

// fcv is the feature compatibility version Folio runs at: MongoDB 7.0's,
// which it has always had, so there is no other to move from or to.
const fcv = "7.0"

// earlierFCVs are the versions MongoDB 7.0 may downgrade to.
var earlierFCVs = []string{"6.0", "6.3"}

// setFCVCmd asks for confirm: true as MongoDB 7.0 does, then keeps 7.0,
// which is a no-op; Folio cannot downgrade to an earlier version.
func setFCVCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.first()
	if v.Type != bson.TypeString {
		return nil, wrongType("setFeatureCompatibilityVersion", "setFeatureCompatibilityVersion", v, "string")
	}
	version := v.StringValue()
	if version != fcv && !slices.Contains(earlierFCVs, version) {
		return nil, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'setFeatureCompatibilityVersion' is not a valid value.", version)
	}
	if !r.args.bool("confirm") {
		return nil, mongoerr.New(mongoerr.SetFCVNotConfirmed, "Once you have downgraded the FCV, if you choose to downgrade the binary version, it will require support assistance. Please re-run this command with 'confirm: true' to acknowledge this and continue with the FCV downgrade.")
	}
	if version != fcv {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support downgrading the featureCompatibilityVersion to %s", version)
	}
	return marshal(bson.D{}), nil
}

// WriteVersionDocument stores admin.system.version's
// featureCompatibilityVersion document unless it is there, as MongoDB
// does when it starts on a clean data directory: admin always exists.
func (s *Service) WriteVersionDocument() error {
	_, err := s.Engine.Update("admin", "system.version", engine.UpdateSpec{
		Filter:       marshal(bson.D{{Key: "_id", Value: "featureCompatibilityVersion"}}),
		Update:       marshal(bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "version", Value: fcv}}}}),
		Upsert:       true,
		WriteOptions: engine.WriteOptions{Ctx: context.Background()},
	})
	return err
}
