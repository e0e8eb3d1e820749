// Package auth is Folio's access control, as MongoDB's: SCRAM-SHA-1 and
// SCRAM-SHA-256 server conversations over credentials stored salted and
// hashed, the built-in roles and their privileges, and the resolution of a
// user's roles (inherited ones included) into the privileges that decide
// whether a command may run. It knows nothing of storage: callers hand it
// user and role documents.
package auth
