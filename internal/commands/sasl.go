package commands

import (
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(saslStartCmd, "saslStart")
	register(saslContinueCmd, "saslContinue")
	register(logoutCmd, "logout")
	register(authenticateCmd, "authenticate")
}

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

func parseSaslStart(cmd bson.Raw, name string) (saslStartArgs, error) {
	var a saslStartArgs
	var haveMech bool
	err := eachArg(cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "mechanism":
			a.mechanism, err = argString(name, key, v)
			haveMech = true
		case "payload":
			a.payload, err = saslPayload(name, v)
		case "autoAuthorize", "db":
		case "options":
			var d bson.Raw
			if d, err = argDoc(name, key, v); err == nil {
				if sv, e := d.LookupErr("skipEmptyExchange"); e == nil {
					a.skipEmpty, err = argBool(name, "options.skipEmptyExchange", sv)
				}
			}
		default:
			return false, nil
		}
		return true, err
	})
	if err == nil && !haveMech {
		err = mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.mechanism' is missing but a required field", name)
	}
	return a, err
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
	a, err := parseSaslStart(r.Cmd, "saslStart")
	if err != nil {
		return nil, err
	}
	return s.saslStart(r, r.DB, a)
}

// saslStart runs the first step of a conversation: for saslStart and for
// hello's speculativeAuthenticate.
func (s *Service) saslStart(r *Request, db string, a saslStartArgs) (bson.Raw, error) {
	ca := &r.Conn.auth
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
		return nil, mongoerr.New(mongoerr.MechanismUnavailable, "Received authentication for mechanism %s which is unknown or not enabled", a.mechanism)
	}
	ca.mu.Lock()
	ca.conv, ca.convDB = conv, db
	ca.convID = saslConversationID
	ca.mu.Unlock()
	return s.saslStep(r, a.payload)
}

// saslContinueCmd answers the client's next message of the conversation.
func saslContinueCmd(s *Service, r *Request) (bson.Raw, error) {
	var id int64
	var payload []byte
	var haveID bool
	err := eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "conversationId":
			id, err = argInt("saslContinue", key, v)
			haveID = true
		case "payload":
			payload, err = saslPayload("saslContinue", v)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	if v := r.Cmd.Lookup("saslContinue"); !haveID {
		// MongoDB takes the conversation id from the command's own value
		// when conversationId is absent.
		id, _ = v.AsInt64OK()
	}
	ca := &r.Conn.auth
	ca.mu.Lock()
	conv, db, cur := ca.conv, ca.convDB, ca.convID
	ca.mu.Unlock()
	if conv == nil {
		return nil, mongoerr.New(mongoerr.ProtocolError, "No SASL session state found")
	}
	if int64(cur) != id {
		return nil, mongoerr.New(mongoerr.ProtocolError, "sasl: Mismatched conversation id")
	}
	if db != r.DB {
		return nil, mongoerr.New(mongoerr.ProtocolError, "sasl: Mismatched database name")
	}
	return s.saslStep(r, payload)
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
			err = mongoerr.New(mongoerr.ReauthenticationRefused, "Each client connection may only be authenticated once. Previously authenticated as: %s", prev)
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
// its database inside): the first step's reply, or nil when it fails,
// which the client learns from the reply's missing field.
func (s *Service) speculativeAuth(r *Request, v bson.RawValue) bson.Raw {
	d, ok := v.DocumentOK()
	if !ok {
		return nil
	}
	if _, err := d.LookupErr("saslStart"); err != nil {
		return nil
	}
	db, ok := d.Lookup("db").StringValueOK()
	if !ok {
		return nil
	}
	a, err := parseSaslStart(d, "saslStart")
	if err != nil {
		return nil
	}
	reply, err := s.saslStart(r, db, a)
	if err != nil {
		return nil
	}
	return reply
}

// saslSupportedMechs answers hello's saslSupportedMechs ("db.user"): the
// mechanisms the user has credentials for, or nil (the field left out)
// when there is no such user.
func (s *Service) saslSupportedMechs(v bson.RawValue) []string {
	name, ok := v.StringValueOK()
	if !ok {
		return nil
	}
	db, user, ok := strings.Cut(name, ".")
	if !ok {
		return nil
	}
	doc, err := s.userDoc(auth.UserName{User: user, DB: db})
	if err != nil || doc == nil {
		return nil
	}
	creds, err := userCredentials(doc)
	if err != nil {
		return nil
	}
	return creds.Mechanisms()
}

// logoutCmd forgets the connection's authenticated user.
func logoutCmd(_ *Service, r *Request) (bson.Raw, error) {
	ca := &r.Conn.auth
	ca.mu.Lock()
	ca.user, ca.conv = nil, nil
	ca.mu.Unlock()
	return nil, nil
}

// authenticateCmd is the legacy authenticate command, which MongoDB 7.0
// keeps for MONGODB-X509 only: Folio does not implement that mechanism.
func authenticateCmd(_ *Service, r *Request) (bson.Raw, error) {
	m, _ := r.Cmd.Lookup("mechanism").StringValueOK()
	if m == "MONGODB-X509" {
		return nil, mongoerr.New(mongoerr.NotImplemented, "MONGODB-X509 authentication is not implemented")
	}
	return nil, mongoerr.New(mongoerr.MechanismUnavailable, "Unsupported mechanism '%s' on authenticate command", m)
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
	if v, err := r.Cmd.LookupErr("saslSupportedMechs"); err == nil {
		if m := s.saslSupportedMechs(v); m != nil {
			d = append(d, bson.E{Key: "saslSupportedMechs", Value: m})
		}
	}
	if v, err := r.Cmd.LookupErr("speculativeAuthenticate"); err == nil {
		if reply := s.speculativeAuth(r, v); reply != nil {
			d = append(d, bson.E{Key: "speculativeAuthenticate", Value: reply})
		}
	}
	return d
}
