package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/values"
)

// need is one action a command needs on one target.
type need struct {
	target auth.Target
	action string
}

// allowsAll reports whether privs grant every one of needs.
func allowsAll(privs auth.Privileges, needs []need) bool {
	for _, n := range needs {
		if !privs.Allows(n.target, n.action) {
			return false
		}
	}
	return true
}

// authzRule says what a command needs: open commands (the handshake) need
// no authenticated user; the others need one holding every privilege
// needs returns (none for commands any authenticated user may run).
type authzRule struct {
	open  bool
	needs func(r *Request) ([]need, error)
	// userNeeds, for the commands whose needs depend on who asks
	// (usersInfo about oneself, rolesInfo about one's roles), replaces
	// needs.
	userNeeds func(r *Request, u *authedUser) ([]need, error)
}

// authzRules map every command to MongoDB's action types on its
// resources: the one table access control consults
// (https://www.mongodb.com/docs/manual/reference/privilege-actions/).
var authzRules = map[string]authzRule{}

func init() {
	open := authzRule{open: true}
	// the commands whose requiresAuth is false in MongoDB (listCommands'
	// too: ListCommandsCmd)
	for _, n := range []string{"hello", "isMaster", "ismaster", "buildInfo", "buildinfo", "ping",
		"saslStart", "saslContinue", "authenticate", "logout", "connectionStatus", "listCommands"} {
		authzRules[n] = open
	}
	anyUser := authzRule{needs: func(*Request) ([]need, error) { return nil, nil }}
	for _, n := range []string{"whatsmyuri", "startSession", "endSessions", "refreshSessions",
		"commitTransaction", "abortTransaction", "killSessions", "getMore",
		// listDatabases checks its privilege as it runs (listableDatabases)
		"listDatabases",
		// killCursors checks each cursor instead (authorizeCursors)
		"killCursors",
		// test commands, which MongoDB checks no privilege for: they
		// exist only when the server runs with test commands
		"configureFailPoint", "clearLog", "testVersion2", "testVersions1And2", "testDeprecation", "testDeprecationInVersion2", "testRemoval"} {
		authzRules[n] = anyUser
	}
	for n, a := range map[string]string{
		"serverStatus": "serverStatus", "hostInfo": "hostInfo", "getCmdLineOpts": "getCmdLineOpts",
		"getLog": "getLog", "getParameter": "getParameter", "setParameter": "setParameter", "top": "top",
		"replSetGetStatus": "replSetGetStatus", "replSetGetConfig": "replSetGetConfig",
		"killAllSessions": "killAnySession", "killAllSessionsByPattern": "killAnySession", "killOp": "killop",
		// Folio's own: what clusterMonitor may read, as serverStatus
		"folioAdvise": "serverStatus",
	} {
		authzRules[n] = onCluster(a)
	}
	for n, acts := range map[string][]string{
		"find": {"find"}, "count": {"find"}, "distinct": {"find"}, "delete": {"remove"},
		"create": {"createCollection"}, "createIndexes": {"createIndex"}, "drop": {"dropCollection"},
		"dropIndexes": {"dropIndex"}, "deleteIndexes": {"dropIndex"}, "collMod": {"collMod"},
		"collStats": {"collStats"}, "collstats": {"collStats"}, "listIndexes": {"listIndexes"},
		"validate":       {"validate"},
		"planCacheClear": {"planCacheWrite"}, "planCacheListFilters": {"planCacheRead"},
		"planCacheSetFilter": {"planCacheIndexFilter"}, "planCacheClearFilters": {"planCacheIndexFilter"},
	} {
		authzRules[n] = onNamespace(acts...)
	}
	for n, a := range map[string]string{
		"dbStats": "dbStats", "dbstats": "dbStats", "dropDatabase": "dropDatabase",
		"createUser": "createUser", "dropUser": "dropUser", "dropAllUsersFromDatabase": "dropUser",
		"createRole": "createRole", "dropRole": "dropRole", "dropAllRolesFromDatabase": "dropRole",
	} {
		authzRules[n] = onDatabase(a)
	}
	authzRules["insert"] = authzRule{needs: insertNeeds}
	authzRules["update"] = authzRule{needs: updateNeeds}
	authzRules["findAndModify"] = authzRule{needs: findAndModifyNeeds}
	authzRules["findandmodify"] = authzRules["findAndModify"]
	authzRules["aggregate"] = authzRule{needs: aggregateNeeds}
	authzRules["explain"] = authzRule{needs: explainNeeds}
	authzRules["renameCollection"] = authzRule{needs: renameNeeds}
	authzRules["applyOps"] = authzRule{needs: applyOpsNeeds}
	authzRules["convertToCapped"] = onNamespace("convertToCapped")
	authzRules["cloneCollectionAsCapped"] = authzRule{needs: cloneAsCappedNeeds}
	for n, f := range userAdminRules {
		authzRules[n] = authzRule{needs: f}
	}
	authzRules["updateUser"] = authzRule{userNeeds: updateUserNeeds}
	authzRules["usersInfo"] = authzRule{userNeeds: usersInfoNeeds}
	authzRules["currentOp"] = authzRule{needs: currentOpNeeds}
	authzRules["listCollections"] = authzRule{userNeeds: listCollectionsNeeds}
	authzRules["rolesInfo"] = authzRule{userNeeds: rolesInfoNeeds}
	for _, n := range []string{"enableSharding", "enablesharding", "shardCollection", "shardcollection"} {
		authzRules[n] = authzRule{needs: enableShardingNeeds}
	}
	authzRules["validateDBMetadata"] = authzRule{needs: validateDBMetadataNeeds}
	authzRules["listShards"] = onCluster("listShards")
	authzRules["listshards"] = authzRules["listShards"]
}

// enableShardingNeeds: enableSharding on the database enableSharding
// names, or on the namespace shardCollection names.
func enableShardingNeeds(r *Request) ([]need, error) {
	name, _ := r.Cmd.Index(0).Value().StringValueOK()
	return []need{{splitNS(name), "enableSharding"}}, nil
}

// validateDBMetadataNeeds: validate on the database it names, or on every
// normal resource when it names none.
func validateDBMetadataNeeds(r *Request) ([]need, error) {
	db, _ := r.Cmd.Lookup("db").StringValueOK()
	if db == "" {
		return []need{{auth.AnyNormalTarget(), "validate"}}, nil
	}
	return []need{{auth.DBTarget(db), "validate"}}, nil
}

func onCluster(action string) authzRule {
	return authzRule{needs: func(*Request) ([]need, error) {
		return []need{{auth.ClusterTarget(), action}}, nil
	}}
}

func onDatabase(action string) authzRule {
	return authzRule{needs: func(r *Request) ([]need, error) {
		return []need{{auth.DBTarget(r.DB), action}}, nil
	}}
}

// commandTarget is the collection a command names in its first field, or
// its database when that is not a collection name.
func commandTarget(r *Request) auth.Target {
	if c, ok := r.Cmd.Index(0).Value().StringValueOK(); ok && c != "" {
		return auth.NSTarget(r.DB, c)
	}
	return auth.DBTarget(r.DB)
}

func onNamespace(actions ...string) authzRule {
	return authzRule{needs: func(r *Request) ([]need, error) {
		t := commandTarget(r)
		out := make([]need, len(actions))
		for i, a := range actions {
			out[i] = need{t, a}
		}
		return out, nil
	}}
}

// bypassNeed adds bypassDocumentValidation when the command asks for it.
func bypassNeed(r *Request, t auth.Target, needs []need) []need {
	if bypassAsked(r) {
		needs = append(needs, need{t, "bypassDocumentValidation"})
	}
	return needs
}

// bypassAsked reports whether the command asks to bypass document
// validation: MongoDB reads the flag as its trueValue
// (shouldBypassDocumentValidationForCommand; the write commands' IDL
// safeBool), so a non-zero number asks too.
func bypassAsked(r *Request) bool {
	return values.Truthy(r.Cmd.Lookup("bypassDocumentValidation"))
}

func insertNeeds(r *Request) ([]need, error) {
	t := commandTarget(r)
	return bypassNeed(r, t, []need{{t, "insert"}}), nil
}

// updateNeeds: update, and insert when a statement may upsert.
func updateNeeds(r *Request) ([]need, error) {
	t := commandTarget(r)
	needs := []need{{t, "update"}}
	if arr, ok := r.Cmd.Lookup("updates").ArrayOK(); ok {
		vals, _ := arr.Values()
		for _, v := range vals {
			if d, ok := v.DocumentOK(); ok {
				if u, ok := d.Lookup("upsert").BooleanOK(); ok && u {
					needs = append(needs, need{t, "insert"})
					break
				}
			}
		}
	}
	return bypassNeed(r, t, needs), nil
}

// findAndModifyNeeds: find, then remove or update (and insert for an
// upsert).
func findAndModifyNeeds(r *Request) ([]need, error) {
	t := commandTarget(r)
	needs := []need{{t, "find"}}
	// remove and upsert are safeBool: a non-zero number is true, as the
	// command reads them
	if values.Truthy(r.Cmd.Lookup("remove")) {
		needs = append(needs, need{t, "remove"})
	} else {
		needs = append(needs, need{t, "update"})
		if values.Truthy(r.Cmd.Lookup("upsert")) {
			needs = append(needs, need{t, "insert"})
		}
	}
	return bypassNeed(r, t, needs), nil
}

// explainNeeds are the explained command's.
func explainNeeds(r *Request) ([]need, error) {
	inner, ok := r.Cmd.Lookup("explain").DocumentOK()
	if !ok {
		return nil, nil
	}
	rule, ok := authzRules[Name(inner)]
	if !ok || rule.open || rule.needs == nil {
		// explain runs only what it can explain, which the handler checks.
		return nil, nil
	}
	sub := *r
	sub.Cmd = inner
	return rule.needs(&sub)
}

// renameNeeds: within a database, renameCollectionSameDB on it (and
// dropCollection on an existing target it drops, and find on the source
// when the user may read the target); across databases, find and
// dropCollection on the source and insert and createIndex on the target
// (dropCollection too with dropTarget). The same-database form is tried by
// the caller first: see renameSameDB.
func renameNeeds(r *Request) ([]need, error) {
	from, _ := r.Cmd.Lookup("renameCollection").StringValueOK()
	to, _ := r.Cmd.Lookup("to").StringValueOK()
	src, dst := splitNS(from), splitNS(to)
	needs := []need{{src, "find"}, {src, "dropCollection"}, {dst, "insert"}, {dst, "createIndex"}}
	if d, ok := r.Cmd.Lookup("dropTarget").BooleanOK(); ok && d {
		needs = append(needs, need{dst, "dropCollection"})
	}
	return needs, nil
}

// applyOpsNeeds: what each entry needs, as MongoDB checks it: insert,
// update (and insert when it upserts) or remove on its namespace
// (bypassDocumentValidation too when the command bypasses it),
// appendOplogNote on the cluster for a no-op, and a command entry's
// command's; useUUID on the cluster when an entry names its collection by
// UUID. An empty applyOps, or create or renameCollection among other
// entries, needs every privilege (anyAction on the cluster).
func applyOpsNeeds(r *Request) ([]need, error) {
	ops, err := parseApplyOpsCmd(r.Cmd.Index(0).Value(), r.Cmd.Lookup("alwaysUpsert"))
	if err != nil {
		return nil, err
	}
	return entriesNeeds(ops, bypassAsked(r))
}

func entriesNeeds(ops []applyOp, bypass bool) ([]need, error) {
	cluster := auth.ClusterTarget()
	if len(ops) == 0 {
		return []need{{cluster, "anyAction"}}, nil
	}
	var needs []need
	for _, op := range ops {
		t := auth.NSTarget(op.db, op.coll)
		if op.ui.Type != 0 {
			needs = append(needs, need{cluster, "useUUID"})
		}
		switch op.kind {
		case 'n':
			needs = append(needs, need{cluster, "appendOplogNote"})
		case 'i':
			needs = append(needs, need{t, "insert"})
		case 'u':
			needs = append(needs, need{t, "update"})
			if op.upsert {
				needs = append(needs, need{t, "insert"})
			}
		case 'd':
			needs = append(needs, need{t, "remove"})
		case 'c':
			name := cmdName(op.o)
			if len(ops) > 1 && (name == "create" || name == "renameCollection") {
				return []need{{cluster, "anyAction"}}, nil
			}
			if op.nested != nil || name == "applyOps" {
				inner, err := entriesNeeds(op.nested, bypass)
				if err != nil {
					return nil, err
				}
				needs = append(needs, inner...)
				continue
			}
			name, sub := oplogCommand(op)
			inner, err := authzRules[name].needs(sub)
			if err != nil {
				return nil, err
			}
			needs = append(needs, inner...)
		}
		if bypass && (op.kind == 'i' || op.kind == 'u') {
			needs = append(needs, need{t, "bypassDocumentValidation"})
		}
	}
	return needs, nil
}

// cloneAsCappedNeeds: find on the source, insert and createCollection on
// the target, as MongoDB checks them.
func cloneAsCappedNeeds(r *Request) ([]need, error) {
	to, _ := r.Cmd.Lookup("toCollection").StringValueOK()
	src, dst := commandTarget(r), auth.NSTarget(r.DB, to)
	return []need{{src, "find"}, {dst, "insert"}, {dst, "createCollection"}}, nil
}

// renameSameDB reports whether u may rename within one database by
// renameCollectionSameDB.
func renameSameDB(r *Request, privs auth.Privileges) bool {
	from, _ := r.Cmd.Lookup("renameCollection").StringValueOK()
	to, _ := r.Cmd.Lookup("to").StringValueOK()
	src, dst := splitNS(from), splitNS(to)
	if src.DB != dst.DB || !privs.Allows(auth.DBTarget(src.DB), "renameCollectionSameDB") {
		return false
	}
	if d, ok := r.Cmd.Lookup("dropTarget").BooleanOK(); ok && d && !privs.Allows(dst, "dropCollection") {
		return false
	}
	// Renaming must not let a user read what it could not.
	return !privs.Allows(dst, "find") || privs.Allows(src, "find")
}

// splitNS splits "db.coll".
func splitNS(ns string) auth.Target {
	for i := 0; i < len(ns); i++ {
		if ns[i] == '.' {
			return auth.NSTarget(ns[:i], ns[i+1:])
		}
	}
	return auth.DBTarget(ns)
}

// aggregateNeeds: find on the aggregated collection (unless the pipeline
// starts with a stage that reads no collection or needs its own action),
// then what each stage needs, nested pipelines included: find on the
// collections $lookup, $graphLookup and $unionWith read; insert and remove
// on $out's target; insert and update on $merge's; bypassDocumentValidation
// on that target, not on the aggregated collection, when the command asks
// for it (auth::getPrivilegesForAggregate passes the flag to each stage's
// requiredPrivileges).
func aggregateNeeds(r *Request) ([]need, error) {
	pipeline, _ := r.Cmd.Lookup("pipeline").ArrayOK()
	t := commandTarget(r)
	var needs []need
	first, firstStage := "", bson.Raw(nil)
	if pipeline != nil {
		if v, err := pipeline.IndexErr(0); err == nil {
			if d, ok := v.DocumentOK(); ok {
				first, firstStage = Name(d), d
			}
		}
	}
	switch first {
	case "$collStats":
		needs = append(needs, need{t, "collStats"})
	case "$indexStats":
		needs = append(needs, need{t, "indexStats"})
	case "$planCacheStats":
		needs = append(needs, need{t, "planCacheRead"})
	case "$currentOp":
		// a user may always see its own operations (allUsers: false, the
		// default)
		spec, _ := firstStage.Lookup("$currentOp").DocumentOK()
		if all, _ := spec.Lookup("allUsers").BooleanOK(); all {
			needs = append(needs, need{auth.ClusterTarget(), "inprog"})
		}
	case "$listLocalSessions", "$listSessions":
		// a user may always list its own sessions
		if listsOthersSessions(r, firstStage.Lookup(first)) {
			needs = append(needs, need{auth.ClusterTarget(), "listSessions"})
		}
	case "$documents":
	default:
		if t.Coll != "" {
			needs = append(needs, need{t, "find"})
		}
	}
	return pipelineNeeds(r.DB, pipeline, needs, bypassAsked(r)), nil
}

// listsOthersSessions reports whether a $listLocalSessions or
// $listSessions spec asks for sessions other than the user's own:
// allUsers, or a users list naming someone else.
func listsOthersSessions(r *Request, spec bson.RawValue) bool {
	d, _ := spec.DocumentOK()
	if all, _ := d.Lookup("allUsers").BooleanOK(); all {
		return true
	}
	arr, _ := d.Lookup("users").ArrayOK()
	vals, _ := arr.Values()
	me, ok := r.Conn.userName()
	for _, v := range vals {
		u, _ := v.DocumentOK()
		name, _ := u.Lookup("user").StringValueOK()
		db, _ := u.Lookup("db").StringValueOK()
		if !ok || (auth.UserName{User: name, DB: db}) != me {
			return true
		}
	}
	return false
}

// pipelineNeeds adds what the stages of pipeline need, run on db.
func pipelineNeeds(db string, pipeline bson.RawArray, needs []need, bypass bool) []need {
	if pipeline == nil {
		return needs
	}
	stages, _ := pipeline.Values()
	for _, sv := range stages {
		stage, ok := sv.DocumentOK()
		if !ok {
			continue
		}
		name := Name(stage)
		spec := stage.Lookup(name)
		switch name {
		case "$lookup", "$graphLookup":
			d, _ := spec.DocumentOK()
			if from, ok := d.Lookup("from").StringValueOK(); ok {
				needs = append(needs, need{auth.NSTarget(db, from), "find"})
			} else if fd, ok := d.Lookup("from").DocumentOK(); ok {
				fdb, _ := fd.Lookup("db").StringValueOK()
				fc, _ := fd.Lookup("coll").StringValueOK()
				needs = append(needs, need{auth.NSTarget(fdb, fc), "find"})
			}
			if p, ok := d.Lookup("pipeline").ArrayOK(); ok {
				needs = pipelineNeeds(db, p, needs, bypass)
			}
		case "$unionWith":
			if c, ok := spec.StringValueOK(); ok {
				needs = append(needs, need{auth.NSTarget(db, c), "find"})
			} else if d, ok := spec.DocumentOK(); ok {
				if c, ok := d.Lookup("coll").StringValueOK(); ok {
					needs = append(needs, need{auth.NSTarget(db, c), "find"})
				}
				if p, ok := d.Lookup("pipeline").ArrayOK(); ok {
					needs = pipelineNeeds(db, p, needs, bypass)
				}
			}
		case "$facet":
			d, _ := spec.DocumentOK()
			fields, _ := d.Elements()
			for _, f := range fields {
				if p, ok := f.Value().ArrayOK(); ok {
					needs = pipelineNeeds(db, p, needs, bypass)
				}
			}
		case "$out":
			t := outTarget(db, spec, "coll")
			needs = append(needs, need{t, "insert"}, need{t, "remove"})
			if bypass {
				needs = append(needs, need{t, "bypassDocumentValidation"})
			}
		case "$merge":
			t := outTarget(db, spec, "coll")
			actions := mergeActions("merge", "insert")
			if d, ok := spec.DocumentOK(); ok {
				t = outTarget(db, d.Lookup("into"), "coll")
				matched, _ := d.Lookup("whenMatched").StringValueOK()
				if _, isPipeline := d.Lookup("whenMatched").ArrayOK(); isPipeline || matched == "" {
					matched = "merge"
				}
				notMatched, ok := d.Lookup("whenNotMatched").StringValueOK()
				if !ok {
					notMatched = "insert"
				}
				actions = mergeActions(matched, notMatched)
			}
			for _, a := range actions {
				needs = append(needs, need{t, a})
			}
			if bypass {
				needs = append(needs, need{t, "bypassDocumentValidation"})
			}
		}
	}
	return needs
}

// mergeActions are the actions $merge needs on its target for its
// whenMatched and whenNotMatched modes (a pipeline counting as merge), as
// MongoDB's merge strategy descriptors list them: insert alone when a
// match fails, update alone when no document is inserted, both otherwise.
func mergeActions(whenMatched, whenNotMatched string) []string {
	switch {
	case whenNotMatched != "insert":
		return []string{"update"}
	case whenMatched == "fail":
		return []string{"insert"}
	}
	return []string{"insert", "update"}
}

// outTarget is the collection $out or $merge writes: a name in db, or a
// {db, <collField>} document.
func outTarget(db string, v bson.RawValue, collField string) auth.Target {
	if c, ok := v.StringValueOK(); ok {
		return auth.NSTarget(db, c)
	}
	d, _ := v.DocumentOK()
	if tdb, ok := d.Lookup("db").StringValueOK(); ok {
		db = tdb
	}
	c, _ := d.Lookup(collField).StringValueOK()
	return auth.NSTarget(db, c)
}

// authorize applies access control to r before it runs: one check for
// every command, in the dispatcher.
func (s *Service) authorize(r *Request, name string) error {
	rule, ok := authzRules[name]
	if !ok {
		return mongoerr.New(mongoerr.Unauthorized, "command %s has no authorization rule", name)
	}
	if rule.open {
		return nil
	}
	u, err := s.privileges(r.Conn)
	if err != nil {
		return err
	}
	if u == nil {
		if name == "createUser" && r.DB == "admin" && r.Conn.isLoopback() {
			// The localhost exception: the first user, from a loopback
			// client, before any user exists.
			exists, err := s.anyUsers()
			if err != nil {
				return err
			}
			if !exists {
				return nil
			}
		}
		return mongoerr.New(mongoerr.Unauthorized, "Command %s requires authentication", name)
	}
	if name == "renameCollection" && renameSameDB(r, u.privs) {
		return nil
	}
	if name == "killOp" && s.ownOperation(r, u) {
		// a user may always kill its own operations
		return nil
	}
	var needs []need
	if rule.userNeeds != nil {
		needs, err = rule.userNeeds(r, u)
	} else {
		needs, err = rule.needs(r)
	}
	if err != nil {
		return err
	}
	if !allowsAll(u.privs, needs) {
		// the command as BSONObj::toString shows it: { find: "c", ... }
		return mongoerr.New(mongoerr.Unauthorized, "not authorized on %s to execute command %s", r.DB, redactCommand(r.Cmd))
	}
	// a cursor the command opens keeps them (addCursor)
	r.needs = needs
	switch name {
	case "getMore", "killCursors":
		return s.authorizeCursors(r, name, u)
	}
	return nil
}

// authorizeCursors refuses a getMore of a cursor opened in another
// session (unless the user may impersonate) or by another user, in
// MongoDB's order (CursorManager::pinCursor, then the getMore command's
// validateAuthorization), or by a user who no longer holds the privileges
// the cursor was opened with; and a killCursors of another user's cursor
// unless the user may kill any cursor, on the cluster or on the cursor's
// namespace (its database for a listCollections cursor), as MongoDB's
// checkAuthForKillCursors allows.
func (s *Service) authorizeCursors(r *Request, name string, u *authedUser) error {
	me := u.name.String()
	if name == "getMore" {
		id, ok := r.Cmd.Lookup("getMore").Int64OK()
		if !ok {
			return nil
		}
		o, found := s.Cursors.OriginOf(id)
		switch {
		case !found:
		case o.Session != r.Args.Session.lsid && !u.privs.Allows(auth.ClusterTarget(), "impersonate"):
			return mongoerr.New(mongoerr.Unauthorized, "Cursor session id (%s) is not the same as the operation context's session id (%s)",
				sessionText(o.Session), sessionText(r.Args.Session.lsid))
		case o.User != me:
			return mongoerr.New(mongoerr.Unauthorized, "cursor id %d was not created by the authenticated user", id)
		case o.Permits != nil && !o.Permits(u.privs):
			return mongoerr.New(mongoerr.Unauthorized, "not authorized for getMore with cursor id %d", id)
		}
		return nil
	}
	arr, _ := r.Cmd.Lookup("cursors").ArrayOK()
	ids, _ := arr.Values()
	for _, v := range ids {
		id, ok := v.Int64OK()
		if !ok {
			continue
		}
		o, found := s.Cursors.OriginOf(id)
		if !found || o.User == me || u.privs.Allows(auth.ClusterTarget(), "killAnyCursor") {
			continue
		}
		t := auth.NSTarget(o.DB, o.Coll)
		if o.Coll == listCollectionsCursor {
			t = auth.DBTarget(o.DB)
		}
		if !u.privs.Allows(t, "killAnyCursor") {
			return mongoerr.New(mongoerr.Unauthorized, "not authorized to kill cursor on %s.%s", o.DB, o.Coll)
		}
	}
	return nil
}

// redactCommand is cmd with its secrets (a password, a SASL payload)
// replaced, as MongoDB shows commands in currentOp and messages.
func redactCommand(cmd bson.Raw) bson.Raw {
	if !hasSecret(cmd) {
		return cmd
	}
	elems, _ := cmd.Elements()
	d := bson.D{}
	for _, e := range elems {
		if e.Key() == "pwd" || e.Key() == "payload" {
			d = append(d, bson.E{Key: e.Key(), Value: "xxx"})
			continue
		}
		d = append(d, bson.E{Key: e.Key(), Value: e.Value()})
	}
	return marshal(d)
}

// hasSecret reports whether cmd has a pwd or payload field.
func hasSecret(cmd bson.Raw) bool {
	it := rawdoc.Iterate(cmd)
	for {
		k, _, ok := it.Next()
		if !ok {
			return false
		}
		if string(k) == "pwd" || string(k) == "payload" {
			return true
		}
	}
}

// writesAuthCollections reports whether r may have written admin's users
// or roles directly (not through the user and role commands): a write to
// admin.system.users or admin.system.roles, a rename, admin's drop, or an
// aggregate writing with $out or $merge (whose target may be in admin
// whatever database it runs on).
func writesAuthCollections(r *Request, name string) bool {
	if name == "aggregate" {
		return hasOutputStage(&r.args)
	}
	if r.DB != "admin" {
		return false
	}
	switch name {
	case "insert", "update", "delete", "findAndModify", "findandmodify", "drop":
		c, _ := r.Cmd.Index(0).Value().StringValueOK()
		return c == usersColl || c == rolesColl
	case "renameCollection", "dropDatabase":
		return true
	}
	return false
}

// userAdminRules are the user and role management commands' needs: the
// action on the database the user or role is defined on, grantRole on the
// database of each role or privilege granted, revokeRole for each taken.
var userAdminRules = map[string]func(r *Request) ([]need, error){
	"createUser": func(r *Request) ([]need, error) {
		a, err := parseUserArgs(r, "createUser")
		return append([]need{{auth.DBTarget(r.DB), "createUser"}}, roleGrants("grantRole", a.roles)...), err
	},
	"grantRolesToUser":    rolesChange("grantRole", "grantRolesToUser"),
	"revokeRolesFromUser": rolesChange("revokeRole", "revokeRolesFromUser"),
	"grantRolesToRole":    rolesChange("grantRole", "grantRolesToRole"),
	"revokeRolesFromRole": rolesChange("revokeRole", "revokeRolesFromRole"),
	"createRole": func(r *Request) ([]need, error) {
		a, err := parseRoleArgs(r, "createRole")
		needs := append([]need{{auth.DBTarget(r.DB), "createRole"}}, roleGrants("grantRole", a.roles)...)
		return append(needs, privilegeGrants("grantRole", a.privileges)...), err
	},
	"updateRole": func(r *Request) ([]need, error) {
		// what it takes away is unknown: revokeRole on any role of the
		// system, as MongoDB asks
		a, err := parseRoleArgs(r, "updateRole")
		needs := []need{{auth.AnyNormalTarget(), "revokeRole"}}
		needs = append(needs, roleGrants("grantRole", a.roles)...)
		return append(needs, privilegeGrants("grantRole", a.privileges)...), err
	},
	"grantPrivilegesToRole": func(r *Request) ([]need, error) {
		a, err := parseRoleArgs(r, "grantPrivilegesToRole")
		return privilegeGrants("grantRole", a.privileges), err
	},
	"revokePrivilegesFromRole": func(r *Request) ([]need, error) {
		a, err := parseRoleArgs(r, "revokePrivilegesFromRole")
		return privilegeGrants("revokeRole", a.privileges), err
	},
}

// roleGrants: action on the database of each role.
func roleGrants(action string, roles []auth.RoleName) []need {
	out := make([]need, len(roles))
	for i, r := range roles {
		out[i] = need{auth.DBTarget(r.DB), action}
	}
	return out
}

// privilegeGrants: action on the database of each privilege's resource;
// a resource beyond one database (the cluster, every database) needs the
// action on admin, as MongoDB's checkAuthorizedToGrantPrivilege asks.
func privilegeGrants(action string, privs []auth.Privilege) []need {
	out := make([]need, len(privs))
	for i, p := range privs {
		t := auth.DBTarget("admin")
		if p.Resource.Pattern == auth.Database || p.Resource.Pattern == auth.ExactNamespace {
			t = auth.DBTarget(p.Resource.DB)
		}
		out[i] = need{t, action}
	}
	return out
}

// rolesChange is the needs of a command granting or revoking roles.
func rolesChange(action, cmdName string) func(r *Request) ([]need, error) {
	return func(r *Request) ([]need, error) {
		roles, err := auth.ResolveRoleNames(r.args.value("roles"), "roles", r.DB)
		if err != nil {
			return nil, err
		}
		return roleGrants(action, roles), nil
	}
}

// usersInfoNeeds: viewUser on each database asked about (the cluster for
// forAllDBs), except that users may always see themselves.
func usersInfoNeeds(r *Request, u *authedUser) ([]need, error) {
	q, err := parseInfoQuery(r, true)
	switch {
	case err != nil:
		return nil, err
	case q.forAllDBs:
		return []need{{auth.ClusterTarget(), "viewUser"}}, nil
	case q.all:
		return []need{{auth.DBTarget(r.DB), "viewUser"}}, nil
	}
	var needs []need
	for _, n := range q.users {
		if n != u.name {
			needs = append(needs, need{auth.DBTarget(n.DB), "viewUser"})
		}
	}
	return needs, nil
}

// updateUserNeeds are MongoDB's checkAuthForTypedCommand(UpdateUserCommand):
// changePassword and changeCustomData on the user's database, unless the
// user changes itself and holds changeOwnPassword or changeOwnCustomData
// there; for roles, revokeRole on any role of the system (what it takes
// away is unknown) and grantRole on each role's database.
func updateUserNeeds(r *Request, u *authedUser) ([]need, error) {
	a, err := parseUserArgs(r, "updateUser")
	db := auth.DBTarget(r.DB)
	self := !u.gone && u.name == auth.UserName{User: a.name, DB: r.DB}
	var needs []need
	if a.hasPwd && !(self && u.privs.Allows(db, "changeOwnPassword")) {
		needs = append(needs, need{db, "changePassword"})
	}
	if a.customData != nil && !(self && u.privs.Allows(db, "changeOwnCustomData")) {
		needs = append(needs, need{db, "changeCustomData"})
	}
	if a.hasRoles {
		needs = append(needs, need{auth.AnyNormalTarget(), "revokeRole"})
		needs = append(needs, roleGrants("grantRole", a.roles)...)
	}
	return needs, err
}

// rolesInfoNeeds: viewRole on each database asked about, except for roles
// granted to the user itself (User::hasRole: its direct roles, not those
// they inherit).
func rolesInfoNeeds(r *Request, u *authedUser) ([]need, error) {
	q, err := parseInfoQuery(r, false)
	switch {
	case err != nil:
		return nil, err
	case q.all || q.forAllDBs:
		return []need{{auth.DBTarget(r.DB), "viewRole"}}, nil
	}
	var needs []need
	for _, n := range q.roles {
		if !slices.Contains(u.direct, n) {
			needs = append(needs, need{auth.DBTarget(n.DB), "viewRole"})
		}
	}
	return needs, nil
}

// listableDatabases says which databases listDatabases shows r's user:
// all of them without access control, or with the listDatabases action on
// the cluster unless authorizedDatabases: true asks for only those the
// user holds privileges on, which is what a user without the action sees.
// authorizedDatabases: false from a user without the action fails with
// Unauthorized as the command runs, not at its authorization check, so
// its message is MongoDB's own (CmdListDatabases::typedRun, before the
// filter is parsed).
// https://www.mongodb.com/docs/v7.0/reference/command/listDatabases/
func (s *Service) listableDatabases(r *Request) (func(string) bool, error) {
	all := func(string) bool { return true }
	if !s.Access.Enabled {
		return all, nil
	}
	u, err := s.privileges(r.Conn)
	if err != nil || u == nil {
		return all, err
	}
	mayListAll := u.privs.Allows(auth.ClusterTarget(), "listDatabases")
	if !r.args.boolOr("authorizedDatabases", !mayListAll) {
		if !mayListAll {
			return nil, mongoerr.New(mongoerr.Unauthorized, "Insufficient permissions to list all databases")
		}
		return all, nil
	}
	return u.privs.AnyInDB, nil
}

// currentOpNeeds: inprog on the cluster, unless the command asks only for
// the caller's own operations ($ownOps).
func currentOpNeeds(r *Request) ([]need, error) {
	if r.args.bool("$ownOps") {
		return nil, nil
	}
	return []need{{auth.ClusterTarget(), "inprog"}}, nil
}

// ownOperation reports whether killOp's op is an operation of u's.
func (s *Service) ownOperation(r *Request, u *authedUser) bool {
	id, ok := r.Cmd.Lookup("op").AsInt64OK()
	if !ok {
		return false
	}
	for _, op := range s.ops.list() {
		if op.id == id {
			them, ok := op.conn.userName()
			return ok && them == u.name
		}
	}
	return false
}

// authorizedCollectionNames reports listCollections' authorizedCollections
// with nameOnly: the form any user may run, listing the collections it
// holds privileges on.
func authorizedCollectionNames(r *Request) bool {
	return r.args.bool("authorizedCollections") && r.args.bool("nameOnly")
}

// listCollectionsNeeds: listCollections on the database, but for
// authorizedCollections with nameOnly from a user with some privilege in
// it (MongoDB's checkAuthorizedToListCollections).
func listCollectionsNeeds(r *Request, u *authedUser) ([]need, error) {
	if authorizedCollectionNames(r) && u.privs.AnyInDB(r.DB) {
		return nil, nil
	}
	return []need{{auth.DBTarget(r.DB), "listCollections"}}, nil
}

// listableCollections says which collections listCollections shows r's
// user: all without access control or without authorizedCollections;
// with it (whether or not nameOnly, and even for a user holding the
// listCollections action) those the user holds some privilege on, so a
// database-wide privilege leaves out the system collections, as MongoDB's
// typedRun skips each namespace isAuthorizedForAnyActionOnResource
// refuses.
func (s *Service) listableCollections(r *Request) (func(string) bool, error) {
	all := func(string) bool { return true }
	if !s.Access.Enabled || !r.args.bool("authorizedCollections") {
		return all, nil
	}
	u, err := s.privileges(r.Conn)
	if err != nil || u == nil {
		return all, err
	}
	return func(coll string) bool {
		t := auth.NSTarget(r.DB, coll)
		for _, p := range u.privs {
			if len(p.Actions) > 0 && p.Resource.Matches(t) {
				return true
			}
		}
		return false
	}, nil
}

// mapReduceNeeds: find on the source; with an out collection, insert and
// remove (replace) or insert and update (merge, reduce) on it.
func mapReduceNeeds(r *Request) ([]need, error) {
	t := commandTarget(r)
	needs := []need{{t, "find"}}
	out, err := parseMROut(r.Cmd.Lookup("out"), r.DB)
	if err != nil || out.inline {
		return needs, nil
	}
	ot := auth.NSTarget(out.db, out.coll)
	needs = append(needs, need{ot, "insert"})
	if out.mode == "replace" {
		needs = append(needs, need{ot, "remove"})
	} else {
		needs = append(needs, need{ot, "update"})
	}
	// bypassDocumentValidation is needed on the output collection
	// (mr::addPrivilegesRequiredForMapReduce).
	return bypassNeed(r, ot, needs), nil
}

// sessionText shows a session key as MongoDB's messages do, "none" for
// none.
func sessionText(key string) string {
	if key == "" {
		return "none"
	}
	return sessions.Text(key)
}
