package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	restrictions := arg("authenticationRestrictions", tArray)
	register(createRoleCmd, roleSpec("createRole", required("privileges", tArray), required("roles", tArray), restrictions), "createRole")
	register(updateRoleCmd, roleSpec("updateRole", arg("privileges", tArray), arg("roles", tArray), restrictions), "updateRole")
	register(dropRoleCmd, roleSpec("dropRole"), "dropRole")
	register(dropAllRolesCmd, roleSpec("dropAllRolesFromDatabase"), "dropAllRolesFromDatabase")
	register(grantPrivilegesToRoleCmd, roleSpec("grantPrivilegesToRole", required("privileges", tArray)), "grantPrivilegesToRole")
	register(revokePrivilegesFromRoleCmd, roleSpec("revokePrivilegesFromRole", required("privileges", tArray)), "revokePrivilegesFromRole")
	register(grantRolesToRoleCmd, roleSpec("grantRolesToRole", required("roles", tArray)), "grantRolesToRole")
	register(revokeRolesFromRoleCmd, roleSpec("revokeRolesFromRole", required("roles", tArray)), "revokeRolesFromRole")
}

// roleSpec declares a role command's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/createRole/
func roleSpec(cmd string, fields ...argField) *argSpec {
	return &argSpec{path: cmd, fields: fields}
}

// roleArgs are the role commands' fields.
type roleArgs struct {
	name                    auth.RoleName
	privileges              []auth.Privilege
	hasPrivileges, hasRoles bool
	roles                   []auth.RoleName
}

func parseRoleArgs(r *Request, cmdName string) (roleArgs, error) {
	var a roleArgs
	n, err := firstString(r, cmdName)
	if err != nil {
		return a, err
	}
	a.name = auth.RoleName{Role: n, DB: r.DB}
	c := &r.args
	if a.hasPrivileges = c.given("privileges"); a.hasPrivileges {
		vals, _ := c.value("privileges").Array().Values()
		for _, pv := range vals {
			d, ok := pv.DocumentOK()
			if !ok {
				return a, mongoerr.New(mongoerr.FailedToParse, "Each element of the privileges array must be an object")
			}
			p, err := auth.ParsePrivilege(d)
			if err != nil {
				return a, err
			}
			// A privilege granted or revoked names at least one action
			// (Privilege::resolvePrivilegeWithTenant); one stored without
			// any still reads (auth.ParsePrivilege).
			if len(p.Actions) == 0 {
				return a, mongoerr.New(mongoerr.BadValue, "'actions' field of privilege resource must not be empty")
			}
			a.privileges = append(a.privileges, p)
		}
	}
	if a.hasRoles = c.given("roles"); a.hasRoles {
		if a.roles, err = auth.ResolveRoleNames(c.value("roles"), "roles", r.DB); err != nil {
			return a, err
		}
	}
	if c.given("authenticationRestrictions") && len(c.value("authenticationRestrictions").Value) > 5 {
		return a, mongoerr.New(mongoerr.NotImplemented, "authenticationRestrictions are not implemented")
	}
	return a, nil
}

// checkPrivilegesScope applies MongoDB's rule that a role defined outside
// admin grants privileges on its own database only.
func checkPrivilegesScope(role auth.RoleName, privs []auth.Privilege) error {
	if role.DB == "admin" {
		return nil
	}
	for _, p := range privs {
		res := p.Resource
		if (res.Pattern != auth.Database && res.Pattern != auth.ExactNamespace) || res.DB != role.DB {
			return mongoerr.New(mongoerr.InvalidRoleModification,
				"Roles on the '%s' database cannot be granted privileges that target other databases or the cluster", role.DB)
		}
	}
	return nil
}

// roleDocument is a role as MongoDB stores it in admin.system.roles.
func roleDocument(def auth.RoleDef) bson.D {
	return bson.D{
		{Key: "_id", Value: def.Name.ID()},
		{Key: "role", Value: def.Name.Role},
		{Key: "db", Value: def.Name.DB},
		{Key: "privileges", Value: auth.PrivilegeDocs(def.Privileges)},
		{Key: "roles", Value: auth.RoleDocs(def.Roles)},
	}
}

// checkGrantRoles is MongoDB's checkOkayToGrantRolesToRole: a role is
// not granted itself, a role outside admin only roles of its own
// database, and every role granted exists and does not inherit role (a
// cycle).
func (s *Service) checkGrantRoles(role auth.RoleName, roles []auth.RoleName) error {
	for _, r := range roles {
		if r == role {
			return mongoerr.New(mongoerr.InvalidRoleModification, "Cannot grant role %s to itself.", role)
		}
		if role.DB != "admin" && r.DB != role.DB {
			return mongoerr.New(mongoerr.InvalidRoleModification,
				"Roles on the '%s' database cannot be granted roles from other databases", role.DB)
		}
	}
	all, _, err := auth.Resolve(roles, s.roleDef)
	if err == nil {
		err = s.checkRolesExist(roles)
	}
	if err != nil {
		e := mongoerr.As(err)
		return mongoerr.New(e.Code, "Cannot grant roles to '%s': %s", role, e.Msg)
	}
	if slices.Contains(all, role) {
		return mongoerr.New(mongoerr.InvalidRoleModification, "Granting roles to %s would introduce a cycle in the role graph", role)
	}
	return nil
}

// checkNotBuiltin refuses to change a built-in role, as MongoDB's
// grant/revoke privileges/roles commands and dropRole do.
func checkNotBuiltin(name auth.RoleName) error {
	if auth.IsBuiltin(name) {
		return mongoerr.New(mongoerr.BadValue, "%s is a built-in role and cannot be modified", name)
	}
	return nil
}

func createRoleCmd(s *Service, r *Request) (bson.Raw, error) {
	a, err := parseRoleArgs(r, "createRole")
	if err != nil {
		return nil, err
	}
	switch {
	case a.name.Role == "":
		return nil, mongoerr.New(mongoerr.BadValue, "Role name must be non-empty")
	case r.DB == "local":
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot create roles in the local database")
	case r.DB == auth.ExternalDB:
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot create roles in the $external database")
	case auth.IsBuiltinName(a.name.Role):
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot create roles with the same name as a built-in role")
	}
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	if err := s.checkGrantRoles(a.name, a.roles); err != nil {
		return nil, err
	}
	if err := checkPrivilegesScope(a.name, a.privileges); err != nil {
		return nil, err
	}
	if _, found, err := s.roleDef(a.name); err != nil {
		return nil, err
	} else if found {
		return nil, mongoerr.New(mongoerr.RoleAlreadyExists, "Role \"%s\" already exists", a.name)
	}
	def := auth.RoleDef{Name: a.name, Privileges: auth.Merge(a.privileges), Roles: a.roles}
	return nil, s.writeAuthDoc(rolesColl, a.name.ID(), roleDocument(def), true)
}

// loadRole reads a user-defined role for a change: RoleNotFound when there
// is none.
func (s *Service) loadRole(name auth.RoleName) (auth.RoleDef, error) {
	def, found, err := s.roleDef(name)
	if err != nil {
		return def, err
	}
	if !found {
		return def, mongoerr.New(mongoerr.RoleNotFound, "Could not find role: %s", name)
	}
	return def, nil
}

// changeRole applies a role command to the role it names and stores it,
// with MongoDB's checks in its order: the privileges or roles given are
// not empty and the role is not built-in (but updateRole's), roles granted
// pass checkGrantRoles and privileges granted checkPrivilegesScope before
// the role itself is looked for.
func changeRole(s *Service, r *Request, cmdName string, change func(a roleArgs, def *auth.RoleDef) error) (bson.Raw, error) {
	a, err := parseRoleArgs(r, cmdName)
	if err != nil {
		return nil, err
	}
	grantsRoles, grantsPrivileges := a.hasRoles, a.hasPrivileges
	switch cmdName {
	case "updateRole":
		if !a.hasPrivileges && !a.hasRoles {
			return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one field to update in updateRole")
		}
	case "grantPrivilegesToRole", "revokePrivilegesFromRole":
		if len(a.privileges) == 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "%s command requires a non-empty \"privileges\" array", cmdName)
		}
		grantsPrivileges = cmdName == "grantPrivilegesToRole"
	case "grantRolesToRole", "revokeRolesFromRole":
		if len(a.roles) == 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "%s command requires a non-empty \"roles\" array", cmdName)
		}
		grantsRoles = cmdName == "grantRolesToRole"
	}
	if cmdName != "updateRole" {
		if err := checkNotBuiltin(a.name); err != nil {
			return nil, err
		}
	}
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	if cmdName == "updateRole" && !auth.IsBuiltin(a.name) {
		if _, err := s.loadRole(a.name); err != nil {
			return nil, err
		}
	}
	if grantsRoles {
		if err := s.checkGrantRoles(a.name, a.roles); err != nil {
			return nil, err
		}
	}
	if grantsPrivileges {
		if err := checkPrivilegesScope(a.name, a.privileges); err != nil {
			return nil, err
		}
	}
	if auth.IsBuiltin(a.name) {
		// updateRole finds no document of a built-in role to update
		return nil, mongoerr.New(mongoerr.RoleNotFound, "Role %s not found", a.name)
	}
	def, err := s.loadRole(a.name)
	if err != nil {
		return nil, err
	}
	if err := change(a, &def); err != nil {
		return nil, err
	}
	return nil, s.writeAuthDoc(rolesColl, def.Name.ID(), roleDocument(def), false)
}

func updateRoleCmd(s *Service, r *Request) (bson.Raw, error) {
	return changeRole(s, r, "updateRole", func(a roleArgs, def *auth.RoleDef) error {
		if a.hasPrivileges {
			def.Privileges = auth.Merge(a.privileges)
		}
		if a.hasRoles {
			def.Roles = a.roles
		}
		return nil
	})
}

func grantPrivilegesToRoleCmd(s *Service, r *Request) (bson.Raw, error) {
	return changeRole(s, r, "grantPrivilegesToRole", func(a roleArgs, def *auth.RoleDef) error {
		def.Privileges = auth.Merge(append(def.Privileges, a.privileges...))
		return nil
	})
}

func revokePrivilegesFromRoleCmd(s *Service, r *Request) (bson.Raw, error) {
	return changeRole(s, r, "revokePrivilegesFromRole", func(a roleArgs, def *auth.RoleDef) error {
		def.Privileges = auth.Remove(def.Privileges, a.privileges)
		return nil
	})
}

func grantRolesToRoleCmd(s *Service, r *Request) (bson.Raw, error) {
	return changeRole(s, r, "grantRolesToRole", func(a roleArgs, def *auth.RoleDef) error {
		def.Roles = changeRoleList(def.Roles, a.roles, true)
		return nil
	})
}

func revokeRolesFromRoleCmd(s *Service, r *Request) (bson.Raw, error) {
	return changeRole(s, r, "revokeRolesFromRole", func(a roleArgs, def *auth.RoleDef) error {
		def.Roles = changeRoleList(def.Roles, a.roles, false)
		return nil
	})
}

// removeRoleGrants takes the dropped roles out of every user and role that
// holds them, as MongoDB does when roles are dropped.
func (s *Service) removeRoleGrants(dropped []auth.RoleName) error {
	users, err := s.findAuthDocs(usersColl, bson.D{}, 0)
	if err != nil {
		return err
	}
	for _, doc := range users {
		name := auth.UserName{}
		name.User, _ = doc.Lookup("user").StringValueOK()
		name.DB, _ = doc.Lookup("db").StringValueOK()
		roles := directRoles(doc, name.DB)
		kept := changeRoleList(slices.Clone(roles), dropped, false)
		if len(kept) == len(roles) {
			continue
		}
		u, err := s.loadUser(name)
		if err != nil {
			return err
		}
		u.roles = kept
		if err := s.saveUser(u); err != nil {
			return err
		}
	}
	roles, err := s.findAuthDocs(rolesColl, bson.D{}, 0)
	if err != nil {
		return err
	}
	for _, doc := range roles {
		def, err := auth.ParseRoleDef(doc)
		if err != nil {
			return err
		}
		kept := changeRoleList(slices.Clone(def.Roles), dropped, false)
		if len(kept) == len(def.Roles) {
			continue
		}
		def.Roles = kept
		if err := s.writeAuthDoc(rolesColl, def.Name.ID(), roleDocument(def), false); err != nil {
			return err
		}
	}
	return nil
}

func dropRoleCmd(s *Service, r *Request) (bson.Raw, error) {
	n, err := firstString(r, "dropRole")
	if err != nil {
		return nil, err
	}
	name := auth.RoleName{Role: n, DB: r.DB}
	if err := checkNotBuiltin(name); err != nil {
		return nil, err
	}
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	if _, err := s.loadRole(name); err != nil {
		return nil, err
	}
	if err := s.removeRoleGrants([]auth.RoleName{name}); err != nil {
		return nil, err
	}
	_, err = s.deleteAuthDocs(rolesColl, bson.D{{Key: "_id", Value: name.ID()}})
	return nil, err
}

func dropAllRolesCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Access.mu.Lock()
	defer s.Access.mu.Unlock()
	docs, err := s.findAuthDocs(rolesColl, bson.D{{Key: "db", Value: r.DB}}, 0)
	if err != nil {
		return nil, err
	}
	var dropped []auth.RoleName
	for _, d := range docs {
		def, err := auth.ParseRoleDef(d)
		if err != nil {
			return nil, err
		}
		dropped = append(dropped, def.Name)
	}
	if err := s.removeRoleGrants(dropped); err != nil {
		return nil, err
	}
	n, err := s.deleteAuthDocs(rolesColl, bson.D{{Key: "db", Value: r.DB}})
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "n", Value: int32(n)}}), nil
}
