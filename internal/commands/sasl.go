package commands

import (
	"errors"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(saslStartCmd, saslStartSpec, "saslStart")
	register(saslContinueCmd, &argSpec{path: "saslContinue", fields: []argField{
		arg("conversationId", tLong),
		arg("payload", tAny),
	}}, "saslContinue")
	register(logoutCmd, &argSpec{path: "logout"}, "logout")
	register(authenticateCmd, authenticateSpec, "authenticate")
}

// saslStartSpec declares saslStart's fields, also those of the saslStart
// a hello carries in speculativeAuthenticate (with its db).
// https://www.mongodb.com/docs/v7.0/reference/command/nav-authentication/
var saslStartSpec = &argSpec{path: "saslStart", fields: []argField{
	required("mechanism", tString),
	arg("payload", tAny),
	arg("options", tDoc),
	arg("db", tString),
	ignore("autoAuthorize", tAny, "MongoDB ignores it: a successful conversation always authorizes"),
}}

// saslConversationID is the conversation number MongoDB answers: one
// conversation runs per connection at a time.
const saslConversationID = int32(1)

// errAuthFailed is MongoDB's answer to every failed authentication,
// whatever the reason (unknown user, wrong password, bad message).
func errAuthFailed() error {
	return mongoerr.New(mongoerr.AuthenticationFailed, "Authentication failed.")
}

// saslStartArgs are saslStart's fields (and speculativeAuthenticate's).
type saslStartArgs struct {
	mechanism string
	payload   []byte
	skipEmpty bool
}

func parseSaslStart(c *cmdArgs) (saslStartArgs, error) {
	a := saslStartArgs{mechanism: c.str("mechanism")}
	var err error
	if c.has("payload") {
		if a.payload, err = saslPayload("saslStart", c.value("payload")); err != nil {
			return a, err
		}
	}
	if sv, e := c.doc("options").LookupErr("skipEmptyExchange"); e == nil {
		if sv.Type != bson.TypeBoolean && !values.IsNumber(sv.Type) {
			return a, errAuthFailed() // as MongoDB answers any bad saslStart
		}
		a.skipEmpty = values.Truthy(sv)
	}
	return a, nil
}

// saslPayload reads a payload: binary data, or a string as some clients
// send it.
func saslPayload(name string, v bson.RawValue) ([]byte, error) {
	switch v.Type {
	case bson.TypeBinary:
		_, b := v.Binary()
		return b, nil
	case bson.TypeString:
		return []byte(v.StringValue()), nil
	}
	return nil, wrongType(name, "payload", v, "binData")
}

// saslStartCmd begins a SCRAM conversation on r.DB, the user's
// authentication database.
func saslStartCmd(s *Service, r *Request) (bson.Raw, error) {
	a, err := parseSaslStart(&r.args)
	if err != nil {
		return nil, err
	}
	return s.saslStart(r, r.DB, a)
}

// saslStart runs the first step of a conversation: for saslStart and for
// hello's speculativeAuthenticate.
//
// As in MongoDB, a mechanism authenticationMechanisms does not enable
// fails: with MechanismUnavailable unless MongoDB counts it anyway
// (auth.CountedMechanism), SCRAM-SHA-256 then failing its first step
// ("SCRAM-SHA-256 authentication is disabled", logged), which the client
// learns as AuthenticationFailed.
func (s *Service) saslStart(r *Request, db string, a saslStartArgs) (bson.Raw, error) {
	if !auth.CountedMechanism(s.Access.mechanisms(), a.mechanism) {
		return nil, errMechanismUnavailable(a.mechanism)
	}
	ca := &r.Conn.auth
	if slices.Contains(auth.Mechanisms, a.mechanism) && !s.Access.mechanismEnabled(a.mechanism) {
		ca.mu.Lock()
		ca.conv = nil
		ca.mu.Unlock()
		if s.Log != nil {
			s.Log.Info("Authentication failed", "mechanism", a.mechanism, "db", db, "remote", r.Conn.Remote, "error", a.mechanism+" authentication is disabled")
		}
		return nil, errAuthFailed()
	}
	conv, ok := auth.NewConversation(a.mechanism, a.skipEmpty, func(user string) (auth.Credential, bool, error) {
		doc, err := s.userDoc(auth.UserName{User: user, DB: db})
		if err != nil || doc == nil {
			return auth.Credential{}, false, err
		}
		creds, err := userCredentials(doc)
		if err != nil {
			return auth.Credential{}, false, err
		}
		c, ok := creds[a.mechanism]
		return c, ok, nil
	})
	if !ok {
		return nil, errMechanismUnavailable(a.mechanism)
	}
	ca.mu.Lock()
	ca.conv, ca.convDB = conv, db
	ca.convID = saslConversationID
	ca.mu.Unlock()
	return s.saslStep(r, a.payload)
}

// saslContinueCmd answers the client's next message of the conversation.
func saslContinueCmd(s *Service, r *Request) (bson.Raw, error) {
	var payload []byte
	var err error
	if r.args.has("payload") {
		if payload, err = saslPayload("saslContinue", r.args.value("payload")); err != nil {
			return nil, err
		}
	}
	id, err := r.args.long("conversationId")
	if err != nil {
		return nil, err
	}
	if !r.args.has("conversationId") {
		// MongoDB takes the conversation id from the command's own value
		// when conversationId is absent.
		id, _ = r.args.first().AsInt64OK()
	}
	ca := &r.Conn.auth
	ca.mu.Lock()
	conv, db, cur := ca.conv, ca.convDB, ca.convID
	ca.mu.Unlock()
	if conv == nil {
		return nil, mongoerr.New(mongoerr.ProtocolError, "No SASL session state found")
	}
	if int64(cur) != id || db != r.DB {
		// MongoDB fails the conversation's step, which ends it and answers
		// AuthenticationFailed whatever the reason
		ca.mu.Lock()
		ca.conv = nil
		ca.mu.Unlock()
		if s.Log != nil {
			s.Log.Info("Authentication failed", "mechanism", conv.Mechanism, "user", conv.User(), "db", db, "remote", r.Conn.Remote, "error", "saslContinue names another conversation or database")
		}
		return nil, errAuthFailed()
	}
	return s.saslStep(r, payload)
}

// errReauthentication refuses to authenticate a connection already
// authenticated as prev as another user of db, as MongoDB's
// AuthorizationSessionImpl::addAndAuthorizeUser does: by one code for a
// user of the same database, by another for one of another database.
func errReauthentication(prev auth.UserName, db string) error {
	if prev.DB == db {
		return mongoerr.New(mongoerr.ReauthenticationRefused, "Each client connection may only be authenticated once. Previously authenticated as: %s", prev)
	}
	return mongoerr.New(mongoerr.AuthenticationOnOtherDatabaseRefused, "Client has attempted to authenticate on multiple databases.Already authenticated as: %s", prev)
}

// saslStep feeds payload to the connection's conversation; on success the
// connection is authenticated as the conversation's user, and any failure
// ends the conversation with AuthenticationFailed. Both are logged, without
// the payloads.
func (s *Service) saslStep(r *Request, payload []byte) (bson.Raw, error) {
	ca := &r.Conn.auth
	ca.mu.Lock()
	conv, db, id := ca.conv, ca.convDB, ca.convID
	ca.mu.Unlock()
	out, done, err := conv.Step(payload)
	if err == nil && conv.User() != "" {
		if prev, ok := r.Conn.userName(); ok && prev != (auth.UserName{User: conv.User(), DB: db}) {
			err = errReauthentication(prev, db)
		}
	}
	if err != nil || done {
		ca.mu.Lock()
		ca.conv = nil
		ca.mu.Unlock()
	}
	if err != nil {
		reason := err.Error()
		var f *auth.Failure
		if errors.As(err, &f) {
			reason = f.Reason
			err = errAuthFailed()
		}
		if s.Log != nil {
			s.Log.Info("Authentication failed", "mechanism", conv.Mechanism, "user", conv.User(), "db", db, "remote", r.Conn.Remote, "error", reason)
		}
		return nil, err
	}
	if done {
		name := auth.UserName{User: conv.User(), DB: db}
		u, err := s.resolveUser(name, s.Access.generation.Load())
		if err != nil {
			return nil, err
		}
		ca.mu.Lock()
		ca.user = u
		ca.mu.Unlock()
		if s.Log != nil {
			s.Log.Info("Successfully authenticated", "mechanism", conv.Mechanism, "user", name.User, "db", db, "remote", r.Conn.Remote)
		}
	}
	return marshal(bson.D{
		{Key: "conversationId", Value: id},
		{Key: "done", Value: done},
		{Key: "payload", Value: bson.Binary{Data: out}},
	}), nil
}

// speculativeAuth runs hello's speculativeAuthenticate (a saslStart with
// its database inside, or an X.509 authenticate): the first step's reply, or nil when it fails,
// which the client learns from the reply's missing field.
func (s *Service) speculativeAuth(r *Request, v bson.RawValue) bson.Raw {
	d, ok := v.DocumentOK()
	if !ok {
		return nil
	}
	switch Name(d) {
	case "authenticate":
		return s.speculativeX509(r, d)
	case "saslStart":
	default:
		return nil
	}
	c, err := parseCommand(d, saslStartSpec)
	if err != nil || !c.has("db") {
		return nil
	}
	a, err := parseSaslStart(&c)
	if err != nil {
		return nil
	}
	db := c.str("db")
	reply, err := s.saslStart(r, db, a)
	if err != nil {
		return nil
	}
	return reply
}

// saslSupportedMechs answers hello's saslSupportedMechs ("db.user",
// helloCmd checked the dot): the mechanisms the user has credentials for
// that authenticationMechanisms enables, or nil (the field left out) when
// there is no such user.
func (s *Service) saslSupportedMechs(v bson.RawValue) []string {
	db, user, _ := strings.Cut(v.StringValue(), ".")
	doc, err := s.userDoc(auth.UserName{User: user, DB: db})
	if err != nil || doc == nil {
		return nil
	}
	creds, err := userCredentials(doc)
	if err != nil {
		return nil
	}
	// an existing user gets a list, empty when it has no credential of
	// an enabled mechanism
	return slices.DeleteFunc(append([]string{}, creds.Mechanisms()...), func(m string) bool { return !s.Access.mechanismEnabled(m) })
}

// logoutCmd forgets the connection's authenticated user when it runs on
// the user's database, and leaves it logged in otherwise, as MongoDB's
// AuthorizationSessionImpl::logoutDatabase does.
func logoutCmd(_ *Service, r *Request) (bson.Raw, error) {
	ca := &r.Conn.auth
	ca.mu.Lock()
	if ca.user != nil && ca.user.name.DB == r.DB {
		ca.user = nil
	}
	ca.conv = nil
	ca.mu.Unlock()
	return nil, nil
}

// userCredentials are a user document's credentials; none when it has no
// credentials field.
func userCredentials(doc bson.Raw) (auth.Credentials, error) {
	d, ok := doc.Lookup("credentials").DocumentOK()
	if !ok {
		return auth.Credentials{}, nil
	}
	return auth.ParseCredentials(d)
}

// helloAuth adds to a hello reply the answers to its saslSupportedMechs
// and speculativeAuthenticate fields.
func (s *Service) helloAuth(r *Request, d bson.D) bson.D {
	if v := r.args.value("saslSupportedMechs"); v.Type != 0 {
		if m := s.saslSupportedMechs(v); m != nil {
			d = append(d, bson.E{Key: "saslSupportedMechs", Value: m})
		}
	}
	if v := r.args.value("speculativeAuthenticate"); v.Type != 0 {
		if reply := s.speculativeAuth(r, v); reply != nil {
			d = append(d, bson.E{Key: "speculativeAuthenticate", Value: reply})
		}
	}
	return d
}
