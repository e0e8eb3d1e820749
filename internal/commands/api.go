package commands

import "github.com/folio-db/folio/internal/mongoerr"

// apiVersion1 are the commands of Stable API version 1 that Folio has.
var apiVersion1 = map[string]bool{
	"abortTransaction": true, "aggregate": true, "collMod": true, "commitTransaction": true, "count": true,
	"create": true, "createIndexes": true, "delete": true, "distinct": true, "drop": true, "dropDatabase": true,
	"dropIndexes": true, "deleteIndexes": true, "endSessions": true, "explain": true, "find": true,
	"findAndModify": true, "findandmodify": true, "getMore": true, "hello": true, "insert": true,
	"killCursors": true, "listCollections": true, "listDatabases": true, "listIndexes": true, "ping": true,
	"refreshSessions": true, "update": true,
}

// skipsAPICheck are the commands MongoDB runs whatever API parameters come
// with them: the handshake.
var skipsAPICheck = map[string]bool{"hello": true, "isMaster": true, "ismaster": true}

// checkAPI applies the Stable API parameters: the version must be "1";
// with apiStrict only version 1 commands run. No version 1 command is
// deprecated, so apiDeprecationErrors never fails one.
func checkAPI(p APIParams, name string) error {
	if p.Version == "" || skipsAPICheck[name] {
		return nil
	}
	switch p.Version {
	case "1":
	case "2":
		return mongoerr.New(mongoerr.APIVersionError, "Cannot accept API version 2")
	default:
		return mongoerr.New(mongoerr.APIVersionError, "API version must be \"1\"")
	}
	if p.Strict && !apiVersion1[name] {
		return mongoerr.New(mongoerr.APIStrictError,
			"Provided apiStrict:true, but the command %s is not in API Version 1. Information on supported commands and migrations in API Version 1 can be found at https://dochub.mongodb.org/core/manual-versioned-api", name)
	}
	return nil
}
