package commands

import (
	"github.com/folio-db/folio/internal/mongoerr"
)

// onSecondary says whether a command runs on a member that is not the
// writable primary (MongoDB's Command::secondaryAllowed).
type onSecondary int8

const (
	// always: it changes no replicated data.
	always onSecondary = iota
	// optIn: a read, run when the client's $readPreference allows a
	// secondary.
	optIn
	// never: a write.
	never
)

// secondaryRules classify every command (TestSecondaryRules checks that
// none is missing). An aggregate writing its output and a mapReduce
// writing a collection are writes (secondaryRule).
var secondaryRules = map[string]onSecondary{
	"_mergeAuthzCollections": never, "abortTransaction": never, "applyOps": never, "cloneCollectionAsCapped": never, "collMod": never,
	"commitTransaction": never, "convertToCapped": never, "create": never, "createIndexes": never,
	"createRole": never, "createUser": never, "delete": never, "deleteIndexes": never, "drop": never,
	"dropAllRolesFromDatabase": never, "dropAllUsersFromDatabase": never, "dropDatabase": never,
	"dropIndexes": never, "dropRole": never, "dropUser": never, "enableSharding": never, "enablesharding": never,
	"appendOplogNote": never, "createSearchIndexes": never, "dropSearchIndex": never, "updateSearchIndex": never, "listSearchIndexes": never,
	"findAndModify": never, "findandmodify": never, "grantPrivilegesToRole": never, "grantRolesToRole": never,
	"grantRolesToUser": never, "insert": never, "reIndex": never, "renameCollection": never,
	"revokePrivilegesFromRole": never, "revokeRolesFromRole": never, "revokeRolesFromUser": never,
	"setDefaultRWConcern": never, "setClusterParameter": never, "setFeatureCompatibilityVersion": never, "setUserWriteBlockMode": never,
	"shardCollection": never, "shardcollection": never, "update": never, "updateRole": never, "updateUser": never,

	"aggregate": optIn, "collStats": optIn, "collstats": optIn, "count": optIn, "dataSize": optIn,
	"datasize": optIn, "dbStats": optIn, "dbstats": optIn, "distinct": optIn, "explain": optIn, "find": optIn,
	"listCollections": optIn, "listDatabases": optIn, "listIndexes": optIn, "mapReduce": optIn, "mapreduce": optIn,
	"planCacheClear": optIn, "planCacheClearFilters": optIn, "planCacheListFilters": optIn,
	"planCacheSetFilter": optIn, "rolesInfo": optIn, "usersInfo": optIn, "validateDBMetadata": optIn,

	"authenticate": always, "buildInfo": always, "buildinfo": always, "clearLog": always, "compact": always,
	"configureFailPoint": always, "connPoolStats": always, "connectionStatus": always, "currentOp": always,
	"dbHash": always, "dbhash": always, "dropConnections": always, "endSessions": always, "folioAdvise": always,
	"fsync": always, "fsyncUnlock": always, "getCmdLineOpts": always, "getDefaultRWConcern": always, "getClusterParameter": always,
	"getLog": always, "getMore": always, "getParameter": always, "hello": always, "hostInfo": always,
	"isMaster": always, "ismaster": always, "killAllSessions": always, "killAllSessionsByPattern": always, "killCursors": always, "killOp": always,
	"killSessions": always, "listCommands": always, "listShards": always, "listshards": always, "lockInfo": always,
	"logRotate": always, "logout": always, "ping": always, "profile": always, "refreshSessions": always, "rotateCertificates": always,
	"replSetFreeze": always, "replSetGetConfig": always, "replSetGetStatus": always, "replSetStepDown": always,
	"replSetStepUp": always, "saslContinue": always, "saslStart": always, "serverStatus": always,
	"setParameter": always, "shutdown": always, "startSession": always, "top": always, "validate": always,
	"whatsmyuri": always, "testVersion2": always, "testVersions1And2": always, "testDeprecation": always,
	"testDeprecationInVersion2": always, "testRemoval": always,
}

// secondaryRule is how r may run on a secondary.
func secondaryRule(r *Request, name string) onSecondary {
	switch {
	case name == "aggregate" && hasOutputStage(&r.args):
		return never
	case (name == "mapReduce" || name == "mapreduce") && !mapReduceInline(r):
		return never
	}
	return secondaryRules[name]
}

// mapReduceInline reports whether a mapReduce returns its results rather
// than write them: out is {inline: 1}.
func mapReduceInline(r *Request) bool {
	out, ok := r.args.value("out").DocumentOK()
	return ok && out.Lookup("inline").Type != 0
}

// checkMember refuses, on a member that is not the writable primary (a
// secondary, or a primary stepping down), a command it may not run
// there, as MongoDB's command dispatch does: a write with
// NotWritablePrimary, a read whose $readPreference does not allow a
// secondary with NotPrimaryNoSecondaryOk, and any command of a
// transaction, which runs on the primary only, with NotWritablePrimary.
// The local database is every member's own. A client that never said
// helloOk reads MongoDB's older wording.
func (s *Service) checkMember(r *Request, name string) error {
	if s.ReplSetName == "" || s.role() == rolePrimary || r.DB == "local" {
		return nil
	}
	helloOk := r.Conn != nil && r.Conn.HelloOk
	rule := secondaryRule(r, name)
	switch {
	case r.Args.Session.inTxn:
	case rule == always, rule == optIn && r.Args.SecondaryOk:
		return nil
	case rule == optIn && helloOk:
		return mongoerr.New(mongoerr.NotPrimaryNoSecondaryOk, "not primary and secondaryOk=false")
	case rule == optIn:
		return mongoerr.New(mongoerr.NotPrimaryNoSecondaryOk, "not master and slaveOk=false")
	}
	if helloOk {
		return mongoerr.New(mongoerr.NotWritablePrimary, "not primary")
	}
	return mongoerr.New(mongoerr.NotWritablePrimary, "not master")
}
