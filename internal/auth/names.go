package auth

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// UserName names a user: its name and the database it was created in
// (its authentication database).
type UserName struct{ User, DB string }

// String is the user as MongoDB's messages show it: user@db.
func (u UserName) String() string { return u.User + "@" + u.DB }

// ID is the user's _id in admin.system.users: db.user.
func (u UserName) ID() string { return u.DB + "." + u.User }

// Doc is {user, db}.
func (u UserName) Doc() bson.D {
	return bson.D{{Key: "user", Value: u.User}, {Key: "db", Value: u.DB}}
}

// RoleName names a role: its name and the database it is defined on.
type RoleName struct{ Role, DB string }

// String is the role as MongoDB's messages show it: role@db.
func (r RoleName) String() string { return r.Role + "@" + r.DB }

// ID is the role's _id in admin.system.roles: db.role.
func (r RoleName) ID() string { return r.DB + "." + r.Role }

// Doc is {role, db}.
func (r RoleName) Doc() bson.D {
	return bson.D{{Key: "role", Value: r.Role}, {Key: "db", Value: r.DB}}
}

// nameKind is the kind of name a {user|role, db} document gives, as
// MongoDB's one parser of such documents (AuthName<T>::parseFromBSON,
// auth/auth_name.cpp) names it in its messages: the type ("UserName",
// "RoleName") and the field holding the name. Only user names are strict:
// a role name document may hold other fields.
type nameKind struct {
	typeName, field string
	strict          bool
}

var (
	userNameKind = nameKind{typeName: "UserName", field: "user", strict: true}
	roleNameKind = nameKind{typeName: "RoleName", field: "role"}
)

// NameTypeError is MongoDB's error for a user name (user true) or role
// name that is neither a string nor a document, where the parser takes
// either (usersInfo's and rolesInfo's names).
func NameTypeError(user bool) error {
	k := roleNameKind
	if user {
		k = userNameKind
	}
	return mongoerr.New(mongoerr.BadValue, "%s must be either a string or an object", k.typeName)
}

// parseName reads a name document of kind k: the name and db fields,
// strings, each once, and maybe a tenant, an ObjectId. Fields are checked
// in order, so the first bad one is the error, then a missing name, then
// a missing db. The messages are MongoDB's, its "unknown field named: '"
// without a closing quote included. A tenant is refused (Folio has no
// tenants) unless dropTenant: MongoDB replaces the tenant of a role
// granted to a user or role by the command's, which on a server without
// tenants is none.
func parseName(k nameKind, d bson.Raw, dropTenant bool) (name, db string, err error) {
	elems, err := d.Elements()
	if err != nil {
		return "", "", mongoerr.New(mongoerr.BadValue, "%s: malformed document", k.typeName)
	}
	var hasName, hasDB, hasTenant bool
	check := func(e bson.RawElement, want bson.Type, seen *bool) error {
		if got := e.Value().Type; got != want {
			return mongoerr.New(mongoerr.BadValue, "%s must contain a %s field named: %s. But, has type %s",
				k.typeName, values.TypeName(want), e.Key(), values.TypeName(got))
		}
		if *seen {
			return mongoerr.New(mongoerr.BadValue, "%s has more than one field named: %s", k.typeName, e.Key())
		}
		*seen = true
		return nil
	}
	for _, e := range elems {
		switch e.Key() {
		case k.field:
			if err := check(e, bson.TypeString, &hasName); err != nil {
				return "", "", err
			}
			name = e.Value().StringValue()
		case "db":
			if err := check(e, bson.TypeString, &hasDB); err != nil {
				return "", "", err
			}
			db = e.Value().StringValue()
		case "tenant":
			if err := check(e, bson.TypeObjectID, &hasTenant); err != nil {
				return "", "", err
			}
		default:
			if k.strict {
				return "", "", mongoerr.New(mongoerr.BadValue, "%s contains an unknown field named: '%s", k.typeName, e.Key())
			}
		}
	}
	if !hasName {
		return "", "", mongoerr.New(mongoerr.BadValue, "%s must contain a field named: %s", k.typeName, k.field)
	}
	if !hasDB {
		return "", "", mongoerr.New(mongoerr.BadValue, "%s must contain a field named: db", k.typeName)
	}
	if hasTenant && !dropTenant {
		return "", "", mongoerr.New(mongoerr.NotImplemented, "a %s with a tenant is not implemented: Folio has no tenants", k.typeName)
	}
	return name, db, nil
}

// ParseUserNameDoc reads a {user, db} document as MongoDB parses a
// UserName: strictly (usersInfo's names).
func ParseUserNameDoc(d bson.Raw) (UserName, error) {
	user, db, err := parseName(userNameKind, d, false)
	return UserName{User: user, DB: db}, err
}

// ParseRoleNameDoc reads a {role, db} document as MongoDB parses a
// RoleName: other fields are let through. granted says the name is of a
// role granted to a user or role, whose tenant is dropped (see
// parseName); rolesInfo's names are not.
func ParseRoleNameDoc(d bson.Raw, granted bool) (RoleName, error) {
	role, db, err := parseName(roleNameKind, d, granted)
	return RoleName{Role: role, DB: db}, err
}
