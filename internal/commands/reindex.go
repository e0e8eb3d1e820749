package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(reIndexCmd, untyped("reIndex"), "reIndex")
	namesCollection("reIndex")
	authzRules["reIndex"] = onNamespace("reIndex")
}

// reIndexCmd: MongoDB 7.0 rebuilds a collection's indexes only on a
// standalone, and a replica set member refuses it; Folio's standalone
// does not rebuild indexes in place, so it refuses too.
// https://www.mongodb.com/docs/v7.0/reference/command/reIndex/
func reIndexCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	if s.ReplSetName != "" {
		return nil, mongoerr.New(mongoerr.IllegalOperation,
			"reIndex is only allowed on a standalone mongod instance. Cannot reIndex '%s.%s' while replication is active", r.DB, name)
	}
	return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support reIndex: it does not rebuild indexes in place")
}
