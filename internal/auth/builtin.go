package auth

import (
	"slices"
	"sort"

	"github.com/folio-db/folio/internal/nsname"
)

// builtinRole is one of MongoDB's built-in roles: privileges whose
// database (for Database and ExactNamespace patterns without one) is the
// role's own, and the built-in roles whose privileges it has too (on its
// own database unless named with one); it does not inherit them as roles.
type builtinRole struct {
	adminOnly bool
	privs     []rolePriv
	roles     []RoleName
}

type rolePriv struct {
	pat      Pattern
	db, coll string
	actions  []string
}

// Action sets the built-in roles share, as MongoDB's builtin_roles
// defines them (MongoDB 7.0; multitenancy entries left out: Folio has
// none).
var (
	readActions = []string{"changeStream", "collStats", "dbHash", "dbStats", "find", "killCursors",
		"listCollections", "listIndexes", "listSearchIndexes", "planCacheRead"}
	readWriteActions = join(readActions, []string{"cleanupStructuredEncryptionData", "compactStructuredEncryptionData",
		"convertToCapped", "createCollection", "createIndex", "createSearchIndexes", "dropCollection", "dropIndex",
		"dropSearchIndex", "insert", "remove", "renameCollectionSameDB", "update", "updateSearchIndex"})
	userAdminActions = []string{"changeCustomData", "changePassword", "createRole", "createUser", "dropRole",
		"dropUser", "grantRole", "revokeRole", "setAuthenticationRestriction", "viewRole", "viewUser"}
	dbAdminActions = []string{"analyze", "bypassDocumentValidation", "collMod", "collStats", "compact",
		"configureQueryAnalyzer", "convertToCapped", "createCollection", "createIndex", "createSearchIndexes",
		"dbStats", "dropCollection", "dropDatabase", "dropIndex", "dropSearchIndex", "enableProfiler",
		"listCollections", "listIndexes", "listSearchIndexes", "planCacheIndexFilter", "planCacheRead",
		"planCacheWrite", "reIndex", "renameCollectionSameDB", "storageDetails", "updateSearchIndex", "validate"}
	profileActions       = join(readActions, []string{"convertToCapped", "createCollection", "dropCollection"})
	readAndIndexActions  = join(readActions, []string{"createIndex", "createSearchIndexes", "dropIndex", "dropSearchIndex"})
	clusterMonitorDBActs = []string{"collStats", "dbStats", "getDatabaseVersion", "getShardVersion", "indexStats"}
	clusterManagerDBActs = []string{"analyzeShardKey", "clearJumboFlag", "configureQueryAnalyzer", "enableSharding",
		"moveChunk", "refineCollectionShardKey", "reshardCollection", "splitChunk", "splitVector"}
	clusterManagerWrites = []string{"insert", "remove", "update"}
	restoreWriteActions  = []string{"bypassDocumentValidation", "collMod", "convertToCapped", "createCollection",
		"createIndex", "createSearchIndexes", "dropCollection", "insert", "updateSearchIndex"}
)

func join(sets ...[]string) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}

func onDB(db string, acts ...[]string) rolePriv {
	return rolePriv{pat: Database, db: db, actions: join(acts...)}
}
func onNS(db, coll string, acts ...[]string) rolePriv {
	return rolePriv{pat: ExactNamespace, db: db, coll: coll, actions: join(acts...)}
}
func onColl(coll string, acts ...[]string) rolePriv {
	return rolePriv{pat: CollectionName, coll: coll, actions: join(acts...)}
}
func onNormal(acts ...[]string) rolePriv { return rolePriv{pat: AnyNormal, actions: join(acts...)} }
func onCluster(acts ...[]string) rolePriv {
	return rolePriv{pat: ClusterResource, actions: join(acts...)}
}
func onAny(acts ...[]string) rolePriv { return rolePriv{pat: AnyResource, actions: join(acts...)} }
func onBuckets(acts ...[]string) rolePriv {
	return rolePriv{pat: AnySystemBuckets, actions: join(acts...)}
}
func acts(a ...string) []string { return a }

// builtinRoles are MongoDB's built-in roles. The database user and
// administration roles and enableSharding exist on every database, the
// others only on admin.
var builtinRoles = map[string]builtinRole{
	"read":      {privs: []rolePriv{onDB("", readActions), onNS("", "system.js", readActions)}},
	"readWrite": {privs: []rolePriv{onDB("", readWriteActions), onNS("", "system.js", readWriteActions)}},
	"userAdmin": {privs: []rolePriv{onDB("", userAdminActions)}},
	"dbAdmin":   {privs: []rolePriv{onDB("", dbAdminActions), onNS("", "system.profile", profileActions)}},
	"dbOwner":   {roles: []RoleName{{Role: "readWrite"}, {Role: "dbAdmin"}, {Role: "userAdmin"}}},
	// enableSharding is defined on every database, as in MongoDB's
	// builtin_roles.yml (SERVER-42522), its privileges on any normal
	// collection whichever database it is granted on.
	"enableSharding": {privs: []rolePriv{
		onNormal(acts("analyzeShardKey", "enableSharding", "refineCollectionShardKey", "reshardCollection"))}},
	"readAnyDatabase": {adminOnly: true, privs: []rolePriv{
		onNormal(readActions), onCluster(acts("listDatabases")), onColl("system.js", readActions), onBuckets(readActions)}},
	"readWriteAnyDatabase": {adminOnly: true, roles: []RoleName{{Role: "readAnyDatabase"}}, privs: []rolePriv{
		onNormal(readWriteActions), onColl("system.js", readWriteActions), onBuckets(readWriteActions)}},
	"userAdminAnyDatabase": {adminOnly: true, privs: []rolePriv{
		onNormal(userAdminActions, acts("listCachedAndActiveUsers")),
		onDB("local", userAdminActions), onDB("config", userAdminActions),
		onCluster(acts("authSchemaUpgrade", "invalidateUserCache", "listDatabases", "viewUser")),
		onNS("admin", "system.users", readAndIndexActions), onNS("admin", "system.roles", readAndIndexActions),
		onColl("system.users", readActions), onNS("admin", "system.version", readActions),
		onNS("admin", "system.backup_users", readActions)}},
	"dbAdminAnyDatabase": {adminOnly: true, privs: []rolePriv{
		onCluster(acts("applyOps", "listDatabases")), onNormal(dbAdminActions), onColl("system.profile", profileActions),
		onBuckets(dbAdminActions)}},
	"clusterMonitor": {adminOnly: true, roles: []RoleName{{Role: "read", DB: "config"}, {Role: "read", DB: "local"}}, privs: []rolePriv{
		onCluster(acts("allCollectionStats", "connPoolStats", "getCmdLineOpts", "getDefaultRWConcern", "getLog",
			"getParameter", "getShardMap", "hostInfo", "inprog", "listDatabases", "listSampledQueries", "listSessions",
			"listShards", "netstat", "operationMetrics", "replSetGetConfig", "replSetGetStatus", "serverStatus",
			"shardedDataDistribution", "shardingState", "top", "useUUID")),
		onNormal(clusterMonitorDBActs), onDB("config", clusterMonitorDBActs),
		onNS("config", "system.sessions", clusterMonitorDBActs), onDB("local", clusterMonitorDBActs),
		onNS("local", "system.replset", acts("find")), onNS("local", "replset.election", acts("find")),
		onNS("local", "replset.minvalid", acts("find")), onColl("system.profile", acts("find"))}},
	"hostManager": {adminOnly: true, privs: []rolePriv{
		onCluster(acts("applicationMessage", "auditConfigure", "connPoolSync", "dropConnections", "flushRouterConfig",
			"fsync", "invalidateUserCache", "killAnyCursor", "killAnySession", "killop", "logRotate", "oidReset",
			"replSetResizeOplog", "resync", "rotateCertificates", "setParameter", "shutdown", "touch",
			"trafficRecord", "unlock")),
		onNormal(acts("killCursors"))}},
	"clusterManager": {adminOnly: true, roles: []RoleName{{Role: "read", DB: "config"}}, privs: []rolePriv{
		onCluster(acts("addShard", "appendOplogNote", "applicationMessage", "checkMetadataConsistency",
			"cleanupOrphaned", "flushRouterConfig", "getClusterParameter", "getDefaultRWConcern", "listSessions",
			"listShards", "removeShard", "replSetConfigure", "replSetGetConfig", "replSetGetStatus",
			"replSetStateChange", "resync", "runTenantMigration", "setChangeStreamState", "getChangeStreamState",
			"setClusterParameter", "setDefaultRWConcern", "setFeatureCompatibilityVersion")),
		onNormal(clusterManagerDBActs), onBuckets(clusterManagerDBActs), onDB("config", clusterManagerDBActs), onDB("local", clusterManagerDBActs),
		onNS("local", "system.replset", readActions), onAny(acts("dbCheck")),
		onNS("local", "system.healthlog", readActions),
		onDB("config", clusterManagerWrites), onDB("local", clusterManagerWrites),
		onNS("local", "replset.election", clusterManagerWrites), onNS("local", "replset.minvalid", clusterManagerWrites)}},
	"clusterAdmin": {adminOnly: true,
		roles: []RoleName{{Role: "clusterMonitor"}, {Role: "hostManager"}, {Role: "clusterManager"}},
		privs: []rolePriv{onNormal(acts("dropDatabase")), onAny(acts("exportCollection", "importCollection"))}},
	"__queryableBackup": {adminOnly: true, privs: []rolePriv{
		onAny(acts("collStats", "listCollections", "listIndexes", "listSearchIndexes")), onNormal(acts("find")), onBuckets(acts("find")),
		onCluster(acts("getParameter", "listDatabases", "useUUID")),
		onDB("config", acts("find")), onDB("local", acts("find")),
		onNS("local", "replset.election", acts("find")), onNS("local", "replset.minvalid", acts("find")),
		onColl("system.js", acts("find")), onColl("system.users", acts("find")), onColl("system.profile", acts("find")),
		onNS("admin", "system.backup_users", acts("find")), onNS("admin", "system.roles", acts("find")),
		onNS("admin", "system.version", acts("find")), onNS("config", "settings", acts("find"))}},
	"backup": {adminOnly: true, roles: []RoleName{{Role: "__queryableBackup"}}, privs: []rolePriv{
		onCluster(acts("appendOplogNote", "serverStatus", "setUserWriteBlockMode")),
		onNS("config", "settings", acts("insert", "update"))}},
	"restore": {adminOnly: true, privs: []rolePriv{
		onCluster(acts("applyOps", "bypassWriteBlockingMode", "forceUUID", "getParameter", "setUserWriteBlockMode", "useUUID")),
		onDB("local", restoreWriteActions), onDB("config", restoreWriteActions), onBuckets(restoreWriteActions),
		onNS("local", "system.replset", restoreWriteActions), onNS("local", "replset.election", restoreWriteActions),
		onNS("local", "replset.minvalid", restoreWriteActions), onAny(acts("listCollections")),
		onNormal(restoreWriteActions, userAdminActions), onColl("system.js", restoreWriteActions),
		onNS("admin", "tempusers", acts("find")), onNS("admin", "temproles", acts("find")),
		onNS("admin", "system.backup_users", restoreWriteActions),
		onNS("admin", "system.version", restoreWriteActions, acts("find")),
		onColl("system.users", restoreWriteActions, acts("find", "remove", "update")),
		onNS("admin", "system.roles", acts("createIndex"))}},
	"directShardOperations": {adminOnly: true, privs: []rolePriv{onCluster(acts("issueDirectShardOperations"))}},
	// __system, the role of the cluster's own members, may do anything
	// anywhere: builtin_roles.tpl.cpp grants it every action on any
	// resource, which MongoDB shows as anyAction.
	"__system": {adminOnly: true, privs: []rolePriv{onAny(acts("anyAction"))}},
	"root": {adminOnly: true,
		roles: []RoleName{{Role: "clusterAdmin"}, {Role: "userAdminAnyDatabase"}, {Role: "dbAdminAnyDatabase"},
			{Role: "readWriteAnyDatabase"}, {Role: "backup"}, {Role: "restore"}, {Role: "directShardOperations"}},
		privs: []rolePriv{onAny(acts("validate")), onCluster(acts("useTenant")),
			onNS("config", "system.preimages", acts("find", "remove")),
			onNS("config", "system.change_collection", acts("find", "insert", "remove", "update"))}},
}

// builtinDB reports whether database db has built-in roles, as MongoDB's
// isValidDB (builtin_roles.tpl.cpp) decides: a valid database name ($
// allowed) other than $external, the virtual database of externally
// authenticated users, on which granting privileges makes no sense. So
// {role: "read", db: ""} and read@$external name no role.
func builtinDB(db string) bool {
	return db != "$external" && nsname.ValidDB(db, true)
}

// IsBuiltin reports whether r is a built-in role: its name is one, its
// database one with built-in roles, and the admin-only roles are defined
// only on admin.
func IsBuiltin(r RoleName) bool {
	b, ok := builtinRoles[r.Role]
	return ok && builtinDB(r.DB) && (!b.adminOnly || r.DB == "admin")
}

// IsBuiltinName reports whether name is a built-in role's name on some
// database: a user-defined role may not take it.
func IsBuiltinName(name string) bool {
	_, ok := builtinRoles[name]
	return ok
}

// BuiltinNames are the built-in roles defined on db, sorted: none on a
// database without built-in roles (builtinDB), every one on admin,
// __system and __queryableBackup included (getBuiltinRoleNamesForDB).
func BuiltinNames(db string) []string {
	if !builtinDB(db) {
		return nil
	}
	var out []string
	for n, b := range builtinRoles {
		if !b.adminOnly || db == "admin" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// builtinPrivileges are the built-in role r's own privileges (not its
// inherited roles').
func builtinPrivileges(r RoleName) []Privilege {
	b := builtinRoles[r.Role]
	out := make([]Privilege, 0, len(b.privs))
	for _, p := range b.privs {
		res := Resource{Pattern: p.pat, DB: p.db, Coll: p.coll}
		if (p.pat == Database || p.pat == ExactNamespace) && res.DB == "" {
			res.DB = r.DB
		}
		a := slices.Clone(p.actions)
		slices.Sort(a)
		out = append(out, Privilege{Resource: res, Actions: slices.Compact(a)})
	}
	return out
}

// builtinAllPrivileges are built-in role r's privileges with those of the
// built-in roles its definition is made of (builtinRoles' roles, which
// MongoDB's builtin_roles.yml flattens into the role).
func builtinAllPrivileges(r RoleName) []Privilege {
	out := builtinPrivileges(r)
	for _, sub := range builtinSubroles(r) {
		out = append(out, builtinAllPrivileges(sub)...)
	}
	return out
}

// builtinSubroles are the built-in roles built-in role r is made of.
func builtinSubroles(r RoleName) []RoleName {
	b := builtinRoles[r.Role]
	out := make([]RoleName, len(b.roles))
	for i, s := range b.roles {
		if s.DB == "" {
			s.DB = r.DB
		}
		out[i] = s
	}
	return out
}

// validActions are the action names MongoDB knows: every one a built-in
// role grants, and those only user-defined roles may.
var validActions = func() map[string]bool {
	m := map[string]bool{}
	for _, b := range builtinRoles {
		for _, p := range b.privs {
			for _, a := range p.actions {
				m[a] = true
			}
		}
	}
	for _, a := range []string{"anyAction", "internal", "killAnyCursor", "listCachedAndActiveUsers",
		"bypassDefaultMaxTimeMS", "impersonate", "cpuProfiler", "setFreeMonitoring", "checkFreeMonitoringStatus",
		"listCollections", "viewUser", "viewRole", "changeOwnPassword", "changeOwnCustomData"} {
		m[a] = true
	}
	return m
}()

// ValidAction reports whether a is an action MongoDB knows.
func ValidAction(a string) bool { return validActions[a] }
