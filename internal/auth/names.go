package auth

import (
	"go.mongodb.org/mongo-driver/v2/bson"
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
