package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
)

// authenticateSpec declares the authenticate command's fields;
// speculativeAuthenticateSpec those of the authenticate a hello carries in
// speculativeAuthenticate, which adds its database.
// https://www.mongodb.com/docs/v7.0/reference/command/authenticate/
var (
	authenticateSpec = &argSpec{path: "authenticate", fields: []argField{
		arg("mechanism", tString),
		arg("user", tString),
	}}
	speculativeAuthenticateSpec = &argSpec{path: "authenticate", fields: []argField{
		arg("mechanism", tString),
		arg("user", tString),
		arg("db", tString),
	}}
)

// authenticateCmd is the authenticate command, which MongoDB 7.0 keeps for
// MONGODB-X509 only (authCommand, commands/authentication_commands.cpp):
// a mechanism is needed, one MongoDB does not count
// (auth.CountedMechanism) is MechanismUnavailable, and another counted
// one BadValue.
func authenticateCmd(s *Service, r *Request) (bson.Raw, error) {
	m := r.args.str("mechanism")
	switch {
	case m == "":
		return nil, mongoerr.New(mongoerr.BadValue, "Auth mechanism not specified")
	case !auth.CountedMechanism(s.Access.mechanisms(), m):
		return nil, errMechanismUnavailable(m)
	case m != auth.X509:
		return nil, mongoerr.New(mongoerr.BadValue, "Unsupported mechanism: %s", m)
	}
	return s.authenticateX509(r, r.DB, r.args.str("user"))
}

// authenticateX509 authenticates the connection as the $external user its
// verified client certificate's subject names; user, when given, must be
// that subject. As in MongoDB, a wrong database is a ProtocolError, an
// unknown user UserNotFound, and every other failure AuthenticationFailed
// (its reason only logged). The reply is {user, dbname}.
// https://www.mongodb.com/docs/v7.0/core/security-x.509/
func (s *Service) authenticateX509(r *Request, db, user string) (bson.Raw, error) {
	subject := r.Conn.PeerSubject
	fail := func(reason string) (bson.Raw, error) {
		if s.Log != nil {
			s.Log.Info("Authentication failed", "mechanism", auth.X509, "user", user, "db", db, "remote", r.Conn.Remote, "error", reason)
		}
		return nil, errAuthFailed()
	}
	switch {
	case subject == "":
		return fail("No verified subject name available from client")
	case user == "":
		user = subject
	case user != subject:
		return fail("There is no x.509 client certificate matching the user.")
	}
	if db != auth.ExternalDB {
		return nil, mongoerr.New(mongoerr.ProtocolError, "X.509 authentication must always use the $external database.")
	}
	if !s.Access.mechanismEnabled(auth.X509) {
		// MONGODB-X509 left out of authenticationMechanisms
		return nil, mongoerr.New(mongoerr.BadValue, "x.509 authentication is disabled.")
	}
	name := auth.UserName{User: user, DB: db}
	if prev, ok := r.Conn.userName(); ok && prev != name {
		return fail("Each client connection may only be authenticated once. Previously authenticated as: " + prev.String())
	}
	u, err := s.resolveUser(name, s.Access.generation.Load())
	if err != nil {
		return fail(err.Error())
	}
	if u.gone {
		return nil, mongoerr.New(mongoerr.UserNotFound, "Could not find user \"%s\" for db \"%s\"", name.User, name.DB)
	}
	ca := &r.Conn.auth
	ca.mu.Lock()
	ca.user, ca.conv = u, nil
	ca.mu.Unlock()
	if s.Log != nil {
		s.Log.Info("Successfully authenticated", "mechanism", auth.X509, "user", name.User, "db", db, "remote", r.Conn.Remote)
	}
	return marshal(bson.D{{Key: "user", Value: name.User}, {Key: "dbname", Value: db}}), nil
}

// speculativeX509 runs the authenticate a hello carries in
// speculativeAuthenticate, whose database is its db field ($external when
// absent): its reply, or nil when it fails.
func (s *Service) speculativeX509(r *Request, d bson.Raw) bson.Raw {
	c, err := parseCommand(d, speculativeAuthenticateSpec)
	if err != nil || c.str("mechanism") != auth.X509 {
		return nil
	}
	db := auth.ExternalDB
	if c.has("db") {
		db = c.str("db")
	}
	reply, err := s.authenticateX509(r, db, c.str("user"))
	if err != nil {
		return nil
	}
	return reply
}
