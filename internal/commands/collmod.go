package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(collModCmd, "collMod")
}

// collModCmd changes an index's hidden flag or TTL, as
// {collMod: c, index: {name | keyPattern, hidden, expireAfterSeconds}}
// does, and reports the old and new values. Options Folio does not
// implement (validators, change stream images...) fail clearly.
func collModCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	var index bson.Raw
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		switch key {
		case "index":
			var err error
			index, err = argDoc("collMod", key, v)
			return true, err
		case "validator", "validationLevel", "validationAction", "changeStreamPreAndPostImages",
			"expireAfterSeconds", "timeseries", "viewOn", "pipeline", "clusteredIndex", "cappedSize", "cappedMax":
			return true, mongoerr.New(mongoerr.NotImplemented, "Folio does not support collMod of '%s' yet", key)
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if s.Engine.Collection(r.DB, coll) == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
	}
	if index == nil {
		return nil, nil
	}
	var name string
	var keyPattern bson.Raw
	var change engine.IndexChange
	err = eachField(index, "collMod.index", func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "name":
			name, err = argString("collMod.index", key, v)
		case "keyPattern":
			keyPattern, err = argDoc("collMod.index", key, v)
		case "hidden":
			var b bool
			b, err = argBool("collMod.index", key, v)
			change.Hidden = &b
		case "expireAfterSeconds":
			n, ok := values.Int64(v)
			if !ok || n < 0 || n > maxTTLSeconds {
				return true, mongoerr.New(mongoerr.InvalidOptions, "expireAfterSeconds must be a number between 0 and %d", maxTTLSeconds)
			}
			change.ExpireAfter = &n
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
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
