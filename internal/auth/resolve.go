package auth

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// RoleDef is a user-defined role as admin.system.roles stores it.
type RoleDef struct {
	Name       RoleName
	Privileges []Privilege
	Roles      []RoleName
}

// RoleLookup finds a user-defined role; found is false when there is none.
type RoleLookup func(RoleName) (def RoleDef, found bool, err error)

// Resolve expands roles into every role they are or inherit (each once,
// the given ones first) and the privileges all of them grant. Roles that
// no longer exist grant nothing. Inheritance cycles cannot loop: each
// role is visited once. A built-in role inherits no role: its privileges
// are those of the roles it is made of, as MongoDB's resolveRoles takes
// them from addPrivilegesForBuiltinRole, so a user granted dbOwner holds
// dbOwner alone, not readWrite, dbAdmin and userAdmin.
func Resolve(roles []RoleName, lookup RoleLookup) ([]RoleName, Privileges, error) {
	seen := map[RoleName]bool{}
	var all []RoleName
	var privs []Privilege
	queue := append([]RoleName(nil), roles...)
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if seen[r] {
			continue
		}
		seen[r] = true
		if IsBuiltin(r) {
			all = append(all, r)
			privs = append(privs, builtinAllPrivileges(r)...)
			continue
		}
		def, found, err := lookup(r)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			continue
		}
		all = append(all, r)
		privs = append(privs, def.Privileges...)
		queue = append(queue, def.Roles...)
	}
	return all, Merge(privs), nil
}

// ParseRoleNames reads a command's list of roles: each a role name on db
// or a {role, db} document (MongoDB's RoleNameOrString).
func ParseRoleNames(v bson.RawValue, field, db string) ([]RoleName, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "\"%s\" field must be an array", field)
	}
	vals, _ := arr.Values()
	out := make([]RoleName, 0, len(vals))
	for _, e := range vals {
		switch e.Type {
		case bson.TypeString:
			out = append(out, RoleName{Role: e.StringValue(), DB: db})
		case bson.TypeEmbeddedDocument:
			r, err := ParseRoleNameDoc(e.Document(), true)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "Role name must be either a document or string")
		}
	}
	return out, nil
}

// ResolveRoleNames reads the roles a user or role command is given, as
// MongoDB's resolveRoleNames (user_management_commands_common.cpp) does:
// ParseRoleNames, each role kept once (the first time it is named), so
// createUser, updateUser, createRole and updateRole store a role named
// twice once.
func ResolveRoleNames(v bson.RawValue, field, db string) ([]RoleName, error) {
	rs, err := ParseRoleNames(v, field, db)
	if err != nil {
		return nil, err
	}
	out := rs[:0]
	for _, r := range rs {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// ParseRoleDef reads a role document of admin.system.roles.
func ParseRoleDef(d bson.Raw) (RoleDef, error) {
	var def RoleDef
	var ok bool
	if def.Name.Role, ok = d.Lookup("role").StringValueOK(); !ok {
		return def, mongoerr.New(mongoerr.FailedToParse, "role document lacks \"role\"")
	}
	if def.Name.DB, ok = d.Lookup("db").StringValueOK(); !ok {
		return def, mongoerr.New(mongoerr.FailedToParse, "role document lacks \"db\"")
	}
	if v, err := d.LookupErr("privileges"); err == nil {
		arr, ok := v.ArrayOK()
		if !ok {
			return def, mongoerr.New(mongoerr.FailedToParse, "role document's \"privileges\" must be an array")
		}
		vals, _ := arr.Values()
		for _, pv := range vals {
			pd, ok := pv.DocumentOK()
			if !ok {
				return def, mongoerr.New(mongoerr.FailedToParse, "privileges must be documents")
			}
			p, err := ParsePrivilege(pd)
			if err != nil {
				return def, err
			}
			def.Privileges = append(def.Privileges, p)
		}
	}
	if v, err := d.LookupErr("roles"); err == nil {
		rs, err := ParseRoleNames(v, "roles", def.Name.DB)
		if err != nil {
			return def, err
		}
		def.Roles = rs
	}
	return def, nil
}

// PrivilegeDocs are ps as an array of {resource, actions}.
func PrivilegeDocs(ps []Privilege) bson.A {
	out := bson.A{}
	for _, p := range ps {
		out = append(out, p.Doc())
	}
	return out
}

// RoleDocs are rs as an array of {role, db}.
func RoleDocs(rs []RoleName) bson.A {
	out := bson.A{}
	for _, r := range rs {
		out = append(out, r.Doc())
	}
	return out
}
