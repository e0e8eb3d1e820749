package commands

import (
	"crypto/rand"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(createUserCmd, userSpec("createUser"), "createUser")
	register(updateUserCmd, userSpec("updateUser"), "updateUser")
	register(dropUserCmd, &argSpec{path: "dropUser"}, "dropUser")
	register(dropAllUsersCmd, &argSpec{path: "dropAllUsersFromDatabase"}, "dropAllUsersFromDatabase")
	register(grantRolesToUserCmd, userRolesSpec("grantRolesToUser"), "grantRolesToUser")
	register(revokeRolesFromUserCmd, userRolesSpec("revokeRolesFromUser"), "revokeRolesFromUser")
}

// userSpec declares createUser's and updateUser's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/createUser/
func userSpec(cmd string) *argSpec {
	return &argSpec{path: cmd, fields: []argField{
		arg("pwd", tString),
		arg("customData", tDoc),
		arg("roles", tArray),
		arg("mechanisms", tArray),
		withDefault("digestPassword", tBool, 1),
		arg("authenticationRestrictions", tArray),
	}}
}

// userRolesSpec declares grantRolesToUser's and revokeRolesFromUser's
// fields.
func userRolesSpec(cmd string) *argSpec {
	return &argSpec{path: cmd, fields: []argField{required("roles", tArray)}}
}

// userArgs are createUser's and updateUser's fields.
type userArgs struct {
	name       string
	pwd        string
	hasPwd     bool
	customData bson.Raw
	roles      []auth.RoleName
	hasRoles   bool
	// mechanisms are as given, checked only when credentials are built
	// (or trimmed), as MongoDB checks them.
	mechanisms    []string
	hasMechanisms bool
	digest        bool
	// restrictions: authenticationRestrictions was given (empty: Folio
	// refuses any other), which updateUser counts as a field to update.
	restrictions bool
}

// parseUserArgs reads createUser's and updateUser's fields as MongoDB's
// IDL does; every other check is the command's, in MongoDB's order.
func parseUserArgs(r *Request, cmdName string) (userArgs, error) {
	var a userArgs
	var err error
	if a.name, err = firstString(r, cmdName); err != nil {
		return a, err
	}
	c := &r.args
	a.pwd, a.hasPwd = c.str("pwd"), c.has("pwd")
	a.customData = c.doc("customData")
	if a.hasRoles = c.has("roles"); a.hasRoles {
		if a.roles, err = auth.ResolveRoleNames(c.value("roles"), "roles", r.DB); err != nil {
			return a, err
		}
	}
	if a.hasMechanisms = c.has("mechanisms"); a.hasMechanisms {
		vals, _ := c.value("mechanisms").Array().Values()
		for i, m := range vals {
			ms, ok := m.StringValueOK()
			if !ok {
				return a, wrongType(cmdName, "mechanisms."+strconv.Itoa(i), m, "string")
			}
			a.mechanisms = append(a.mechanisms, ms)
		}
	}
	a.digest = c.bool("digestPassword")
	if v := c.value("authenticationRestrictions"); v.Type != 0 {
		if len(v.Value) > 5 {
			return a, mongoerr.New(mongoerr.NotImplemented, "authenticationRestrictions are not implemented")
		}
		a.restrictions = true
	}
	return a, nil
}

// checkMechanismsGiven refuses an empty mechanisms list.
func checkMechanismsGiven(a userArgs) error {
	if a.hasMechanisms && len(a.mechanisms) == 0 {
		return mongoerr.New(mongoerr.BadValue, "mechanisms field must not be empty")
	}
	return nil
}

// credentials salts and hashes a's password as MongoDB's buildCredentials
// does: for the mechanisms listed, each of which must be a SCRAM mechanism
// (else "Unknown auth mechanism") that authenticationMechanisms enables,
// or without a list for every SCRAM mechanism it enables, iterating as
// scramIterationCount and scramSHA256IterationCount say. This is the
// slow step, run before any lock is taken.
func (a userArgs) credentials(access *AccessControl) (auth.Credentials, error) {
	enabled := access.mechanisms()
	var mechs []string
	for _, m := range a.mechanisms {
		if !slices.Contains(auth.Mechanisms, m) {
			return nil, mongoerr.New(mongoerr.BadValue, "Unknown auth mechanism '%s'", m)
		}
		if !slices.Contains(enabled, m) {
			return nil, mongoerr.New(mongoerr.BadValue, "%s not supported in authMechanisms", m)
		}
		mechs = append(mechs, m)
	}
	if len(a.mechanisms) == 0 {
		for _, m := range auth.Mechanisms {
			if slices.Contains(enabled, m) {
				mechs = append(mechs, m)
			}
		}
	}
	return auth.NewCredentials(mechs, a.name, a.pwd, a.digest, access.iterations())
}

// checkRolesExist fails with RoleNotFound unless every role is built in
// or defined in admin.system.roles.
func (s *Service) checkRolesExist(roles []auth.RoleName) error {
	for _, r := range roles {
		if auth.IsBuiltin(r) {
			continue
		}
		_, found, err := s.roleDef(r)
		if err != nil {
			return err
		}
		if !found {
			return mongoerr.New(mongoerr.RoleNotFound, "Could not find role: %s", r)
		}
	}
	return nil
}

// writeAuthDoc inserts or replaces a document of admin.coll, committed
// before it returns, and makes every connection resolve its privileges
// again.
func (s *Service) writeAuthDoc(coll, id string, doc bson.D, insert bool) error {
	raw := marshal(doc)
	defer s.Access.changed()
	if err := s.writeAuthSchema(); err != nil {
		return err
	}
	if insert {
		_, werrs, err := s.Engine.Insert("admin", coll, []bson.Raw{raw}, true, engine.WriteOptions{Journal: true})
		if err != nil {
			return err
		}
		if len(werrs) > 0 {
			return werrs[0].Err
		}
		return nil
	}
	_, err := s.Engine.Update("admin", coll, engine.UpdateSpec{
		Filter:       marshal(bson.D{{Key: "_id", Value: id}}),
		Update:       raw,
		WriteOptions: engine.WriteOptions{Journal: true},
	})
	return err
}

// authSchemaVersion is the schema of the user documents Folio writes:
// MongoDB's 5, SCRAM-SHA-1 and SCRAM-SHA-256 credentials.
const authSchemaVersion = 5

// writeAuthSchema stores admin.system.version's authSchema document
// unless it is there, as MongoDB (before 8.1) does before its first write
// of a user or role: mongodump and mongorestore read the users' schema
// there.
func (s *Service) writeAuthSchema() error {
	_, err := s.Engine.Update("admin", "system.version", engine.UpdateSpec{
		Filter:       marshal(bson.D{{Key: "_id", Value: "authSchema"}}),
		Update:       marshal(bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "currentVersion", Value: int32(authSchemaVersion)}}}}),
		Upsert:       true,
		WriteOptions: engine.WriteOptions{Journal: true},
	})
	return err
}

// deleteAuthDocs deletes the documents of admin.coll matching filter.
func (s *Service) deleteAuthDocs(coll string, filter bson.D) (int64, error) {
	defer s.Access.changed()
	return s.Engine.Delete("admin", coll, marshal(filter), 0, bson.RawValue{}, engine.WriteOptions{Journal: true})
}

// checkExternalPwd refuses a password for a user of $external, whose
// credentials live outside the server (an X.509 certificate's subject).
func checkExternalPwd(a userArgs, db string) error {
	if a.hasPwd && db == auth.ExternalDB {
		return mongoerr.New(mongoerr.BadValue, "Cannot set the password for users defined on the '$external' database")
	}
	return nil
}

// userDocument is a user as MongoDB stores it in admin.system.users: a
// user of $external has the credentials {external: true}.
func userDocument(name auth.UserName, userID bson.Binary, creds auth.Credentials, customData bson.Raw, roles []auth.RoleName) bson.D {
	var cd any = creds.Doc()
	if name.DB == auth.ExternalDB {
		cd = bson.D{{Key: "external", Value: true}}
	}
	d := bson.D{
		{Key: "_id", Value: name.ID()},
		{Key: "userId", Value: userID},
		{Key: "user", Value: name.User},
		{Key: "db", Value: name.DB},
		{Key: "credentials", Value: cd},
	}
	if customData != nil {
		d = append(d, bson.E{Key: "customData", Value: customData})
	}
	return append(d, bson.E{Key: "roles", Value: auth.RoleDocs(roles)})
}

func newUserID() bson.Binary {
	var id [16]byte
	_, _ = rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return bson.Binary{Subtype: bson.TypeBinaryUUID, Data: id[:]}
}

// createUserCmd creates a user, checking in MongoDB's order: the
// database and the name, the password's presence, the credentials (the
// mechanisms, the password's SASLprep), the user document (a name and
// credentials), the roles, then that the user is new.
func createUserCmd(s *Service, r *Request) (bson.Raw, error) {
	a, err := parseUserArgs(r, "createUser")
	if err != nil {
		return nil, err
	}
	if !a.hasRoles {
		return nil, mongoerr.MissingField("createUser.roles")
	}
	if r.DB == "local" {
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot create users in the local database")
	}
	if strings.IndexByte(a.name, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Username cannot contain NULL characters")
	}
	external := r.DB == auth.ExternalDB
	if !a.hasPwd && !external {
		return nil, mongoerr.New(mongoerr.BadValue, "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db")
	}
	if err := checkExternalPwd(a, r.DB); err != nil {
		return nil, err
	}
	if err := checkMechanismsGiven(a); err != nil {
		return nil, err
	}
	var creds auth.Credentials
	if !external {
		if creds, err = a.credentials(&s.Access); err != nil {
			return nil, err
		}
	}
	if a.name == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "User document needs 'user' field to be non-empty")
	}
	if !external && len(creds) == 0 {
		// authenticationMechanisms enables no SCRAM mechanism
		return nil, mongoerr.New(mongoerr.BadValue, "User document needs 'credentials' field to be a non-empty object")
	}
	name := auth.UserName{User: a.name, DB: r.DB}
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	if _, ok := r.Conn.userName(); s.Access.Enabled && !ok {
		// The localhost exception admits one first user: checked again
		// under the lock, so that two clients cannot both create one.
		if exists, err := s.anyUsers(); err != nil {
			return nil, err
		} else if exists {
			return nil, mongoerr.New(mongoerr.Unauthorized, "Command createUser requires authentication")
		}
	}
	if err := s.checkRolesExist(a.roles); err != nil {
		return nil, err
	}
	if doc, err := s.userDoc(name); err != nil {
		return nil, err
	} else if doc != nil {
		return nil, mongoerr.New(mongoerr.UserAlreadyExists, "User \"%s\" already exists", name)
	}
	if err := s.writeAuthDoc(usersColl, name.ID(), userDocument(name, newUserID(), creds, a.customData, a.roles), true); err != nil {
		return nil, err
	}
	s.Access.usersExist.Store(true)
	return nil, nil
}

// storedUser is a user document read back for a change.
type storedUser struct {
	name       auth.UserName
	userID     bson.Binary
	creds      auth.Credentials
	customData bson.Raw
	roles      []auth.RoleName
}

// loadUser reads a user for a change; UserNotFound when there is none,
// with the message of MongoDB's user lookup (getUserDescription), which
// grantRolesToUser, revokeRolesFromUser and updateUser's trimming of
// mechanisms answer.
func (s *Service) loadUser(name auth.UserName) (storedUser, error) {
	u, found, err := s.findUser(name)
	if err == nil && !found {
		err = mongoerr.New(mongoerr.UserNotFound, "Could not find user \"%s\" for db \"%s\"", name.User, name.DB)
	}
	return u, err
}

// findUser reads a user for a change; found is false when there is none.
func (s *Service) findUser(name auth.UserName) (u storedUser, found bool, err error) {
	u.name = name
	doc, err := s.userDoc(name)
	if err != nil || doc == nil {
		return u, false, err
	}
	if st, data, ok := doc.Lookup("userId").BinaryOK(); ok {
		u.userID = bson.Binary{Subtype: st, Data: data}
	} else {
		u.userID = newUserID()
	}
	if u.creds, err = userCredentials(doc); err != nil {
		return u, false, err
	}
	u.customData, _ = doc.Lookup("customData").DocumentOK()
	u.roles = directRoles(doc, name.DB)
	return u, true, nil
}

// userGone is the error of a change to a user that does not exist, as
// MongoDB's update of the user document reports it.
func userGone(name auth.UserName) error {
	return mongoerr.New(mongoerr.UserNotFound, "User %s not found", name)
}

func (s *Service) saveUser(u storedUser) error {
	return s.writeAuthDoc(usersColl, u.name.ID(), userDocument(u.name, u.userID, u.creds, u.customData, u.roles), false)
}

// updateUserCmd changes a user in MongoDB's order: the new password's
// credentials (or, without one, the mechanisms kept, which needs the
// user), that something changes, the roles, then the user, whose absence
// is "User <user>@<db> not found" (an empty name included).
func updateUserCmd(s *Service, r *Request) (bson.Raw, error) {
	a, err := parseUserArgs(r, "updateUser")
	if err != nil {
		return nil, err
	}
	if err := checkMechanismsGiven(a); err != nil {
		return nil, err
	}
	if err := checkExternalPwd(a, r.DB); err != nil {
		return nil, err
	}
	var creds auth.Credentials
	if a.hasPwd {
		if creds, err = a.credentials(&s.Access); err != nil {
			return nil, err
		}
	}
	name := auth.UserName{User: a.name, DB: r.DB}
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	var u storedUser
	found, trimmed := false, false
	if !a.hasPwd && a.hasMechanisms {
		// Without a new password, mechanisms keeps only some of the
		// credentials the user has.
		if u, err = s.loadUser(name); err != nil {
			return nil, err
		}
		found = true
		kept := auth.Credentials{}
		for _, m := range a.mechanisms {
			c, ok := u.creds[m]
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue, "mechanisms field must be a subset of previously set mechanisms")
			}
			kept[m] = c
		}
		// MongoDB unsets the SCRAM credentials not kept, which is a
		// change even when the user had none of them
		trimmed = len(kept) < len(auth.Mechanisms)
		u.creds = kept
	}
	if !a.hasPwd && !trimmed && a.customData == nil && !a.hasRoles && !a.restrictions {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one field to update in updateUser")
	}
	if a.hasRoles {
		if err := s.checkRolesExist(a.roles); err != nil {
			return nil, err
		}
	}
	if !found {
		if u, found, err = s.findUser(name); err != nil {
			return nil, err
		}
		if !found {
			return nil, userGone(name)
		}
	}
	if a.hasRoles {
		u.roles = a.roles
	}
	if creds != nil {
		u.creds = creds
	}
	if a.customData != nil {
		u.customData = a.customData
	}
	return nil, s.saveUser(u)
}

// userNameArg reads the user a command names in its first field.
func userNameArg(r *Request, cmdName string) (auth.UserName, error) {
	n, err := firstString(r, cmdName)
	return auth.UserName{User: n, DB: r.DB}, err
}

// firstString is the string a user or role command names in its first
// field.
func firstString(r *Request, cmdName string) (string, error) {
	v := r.args.first()
	if v.Type != bson.TypeString {
		return "", wrongType(cmdName, cmdName, v, "string")
	}
	return v.StringValue(), nil
}

func dropUserCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := userNameArg(r, "dropUser")
	if err != nil {
		return nil, err
	}
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	n, err := s.deleteAuthDocs(usersColl, bson.D{{Key: "_id", Value: name.ID()}})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, mongoerr.New(mongoerr.UserNotFound, "User '%s' not found", name)
	}
	return nil, nil
}

func dropAllUsersCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	n, err := s.deleteAuthDocs(usersColl, bson.D{{Key: "db", Value: r.DB}})
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "n", Value: int32(n)}}), nil
}

// changeUserRoles is grantRolesToUser and revokeRolesFromUser: the roles
// must be listed, the user exist (MongoDB's user lookup reports it), then
// the roles.
func changeUserRoles(s *Service, r *Request, cmdName string, grant bool) (bson.Raw, error) {
	name, err := userNameArg(r, cmdName)
	if err != nil {
		return nil, err
	}
	roles, err := auth.ResolveRoleNames(r.args.value("roles"), "roles", r.DB)
	if err != nil {
		return nil, err
	}
	if len(roles) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "%s command requires a non-empty \"roles\" array", cmdName)
	}
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	u, err := s.loadUser(name)
	if err != nil {
		return nil, err
	}
	if err := s.checkRolesExist(roles); err != nil {
		return nil, err
	}
	u.roles = changeRoleList(u.roles, roles, grant)
	return nil, s.saveUser(u)
}

// changeRoleList adds (grant) or removes roles from list, keeping each
// role once.
func changeRoleList(list, roles []auth.RoleName, grant bool) []auth.RoleName {
	if grant {
		for _, r := range roles {
			if !slices.Contains(list, r) {
				list = append(list, r)
			}
		}
		return list
	}
	return slices.DeleteFunc(list, func(r auth.RoleName) bool { return slices.Contains(roles, r) })
}

func grantRolesToUserCmd(s *Service, r *Request) (bson.Raw, error) {
	return changeUserRoles(s, r, "grantRolesToUser", true)
}

func revokeRolesFromUserCmd(s *Service, r *Request) (bson.Raw, error) {
	return changeUserRoles(s, r, "revokeRolesFromUser", false)
}
