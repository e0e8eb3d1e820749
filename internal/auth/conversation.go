package auth

import (
	"errors"
	"strings"

	"github.com/xdg-go/scram"
)

// ErrAuthFailed is every failed authentication: wrong password, unknown
// user, malformed message. Callers answer AuthenticationFailed with one
// message whatever the reason, so that a client cannot tell which; Reason
// says why, for the server's log.
var ErrAuthFailed = errors.New("authentication failed")

// Failure is ErrAuthFailed with the reason, for the log only.
type Failure struct{ Reason string }

func (f *Failure) Error() string        { return ErrAuthFailed.Error() }
func (f *Failure) Is(target error) bool { return target == ErrAuthFailed }

func fail(reason string) error { return &Failure{Reason: reason} }

// CredentialLookup finds user's credential for a mechanism on the
// conversation's database; found is false when the user does not exist or
// has no credential for it.
type CredentialLookup func(user string) (c Credential, found bool, err error)

// Conversation is the server side of one SCRAM authentication: the
// client's first message, then its final one, then (unless the client
// asked to skip it) an empty exchange that ends the conversation.
type Conversation struct {
	Mechanism string
	conv      *scram.ServerConversation
	user      string
	lookupErr error
	skipEmpty bool
	// state: 0 awaiting client-first, 1 awaiting client-final, 2 proof
	// accepted and the empty exchange pending, 3 done.
	state int
}

// NewConversation starts a conversation for mechanism (SCRAM-SHA-1 or
// SCRAM-SHA-256); skipEmpty ends it with the server's final message.
func NewConversation(mechanism string, skipEmpty bool, lookup CredentialLookup) (*Conversation, bool) {
	m, ok := mechs[mechanism]
	if !ok {
		return nil, false
	}
	c := &Conversation{Mechanism: mechanism, skipEmpty: skipEmpty}
	srv, err := m.hash.NewServer(func(name string) (scram.StoredCredentials, error) {
		// The name is used as given, SCRAM-SHA-256's too: MongoDB
		// normalizes only the password (SERVER-34446).
		name = decodeSASLName(name)
		c.user = name
		cred, found, err := lookup(name)
		if err != nil {
			c.lookupErr = err
			return scram.StoredCredentials{}, err
		}
		if !found {
			return scram.StoredCredentials{}, fail("no such user or no " + mechanism + " credential")
		}
		return scram.StoredCredentials{
			KeyFactors: scram.KeyFactors{Salt: string(cred.Salt), Iters: cred.Iterations},
			StoredKey:  cred.StoredKey,
			ServerKey:  cred.ServerKey,
		}, nil
	})
	if err != nil {
		return nil, false
	}
	c.conv = srv.NewConversation()
	return c, true
}

// decodeSASLName undoes SCRAM's escaping of ',' and '=' in a user name.
func decodeSASLName(s string) string {
	if !strings.Contains(s, "=") {
		return s
	}
	return strings.NewReplacer("=2C", ",", "=3D", "=").Replace(s)
}

// User is the user name the client gave, once its first message is read.
func (c *Conversation) User() string { return c.user }

// Step answers one client message. done reports that the client is
// authenticated; any error ends the conversation: ErrAuthFailed (as a
// *Failure) for the client's failures, a storage error otherwise.
func (c *Conversation) Step(payload []byte) (reply []byte, done bool, err error) {
	switch c.state {
	case 0, 1:
		first := c.state == 0
		out, err := c.conv.Step(string(payload))
		if err != nil {
			c.state = 3
			if c.lookupErr != nil {
				return nil, false, c.lookupErr
			}
			var f *Failure
			if errors.As(err, &f) {
				return nil, false, f
			}
			return nil, false, fail(err.Error())
		}
		if first {
			if a := c.conv.AuthzID(); a != "" && decodeSASLName(a) != c.user {
				c.state = 3
				return nil, false, fail("authorization identity differs from the user name")
			}
			c.state = 1
			return []byte(out), false, nil
		}
		if !c.conv.Valid() {
			c.state = 3
			return nil, false, fail("invalid proof")
		}
		if c.skipEmpty {
			c.state = 3
			return []byte(out), true, nil
		}
		c.state = 2
		return []byte(out), false, nil
	case 2:
		c.state = 3
		if len(payload) != 0 {
			return nil, false, fail("unexpected payload after the server's final message")
		}
		return []byte{}, true, nil
	}
	return nil, false, fail("conversation already finished")
}
