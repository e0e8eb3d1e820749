package commands

import (
	"crypto/sha256"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// AccessControl is the server's access control state (-auth).
type AccessControl struct {
	// Enabled turns access control on: every command but the handshake
	// needs an authenticated user holding its privileges.
	Enabled bool
	// generation changes whenever a user or role changes, so connections
	// resolve their users' privileges again before the next command.
	generation atomic.Uint64
	// usersExist is set once a user is known to exist, which closes the
	// localhost exception (as MongoDB, until restart).
	usersExist atomic.Bool
	// mu serializes the user and role management commands'
	// read-modify-write of admin.system.users and admin.system.roles; it
	// is never held while a password is hashed.
	mu sync.Mutex
	// digest is the hash of the users and roles the last poll read
	// (PollUserChanges), under pollMu; polled says one did.
	pollMu sync.Mutex
	digest [sha256.Size]byte
	polled bool
	// invalidationOffset is userCacheInvalidationIntervalSecs minus its
	// default, so that the zero value is MongoDB's.
	invalidationOffset atomic.Int64
	// sha1ItersOffset and sha256ItersOffset are scramIterationCount and
	// scramSHA256IterationCount minus their defaults, so that the zero
	// value is MongoDB's.
	sha1ItersOffset, sha256ItersOffset atomic.Int64
	// Mechanisms are the authentication mechanisms enabled
	// (authenticationMechanisms); nil for MongoDB's default,
	// auth.DefaultAuthenticationMechanisms. Set before the server starts.
	Mechanisms []string
}

// iterations are the SCRAM iteration counts credentials made now get.
func (a *AccessControl) iterations() auth.Iterations {
	return auth.Iterations{
		SHA1:   auth.DefaultIterations.SHA1 + int(a.sha1ItersOffset.Load()),
		SHA256: auth.DefaultIterations.SHA256 + int(a.sha256ItersOffset.Load()),
	}
}

// mechanisms are the authentication mechanisms enabled.
func (a *AccessControl) mechanisms() []string {
	if a.Mechanisms == nil {
		return auth.DefaultAuthenticationMechanisms
	}
	return a.Mechanisms
}

// mechanismEnabled reports whether authenticationMechanisms lists m.
func (a *AccessControl) mechanismEnabled(m string) bool {
	return slices.Contains(a.mechanisms(), m)
}

// errMechanismUnavailable is MongoDB's answer to an authentication with a
// mechanism it does not count (auth.CountedMechanism).
func errMechanismUnavailable(m string) error {
	return mongoerr.New(mongoerr.MechanismUnavailable, "Received authentication for mechanism %s which is not enabled", m)
}

// DefaultUserCacheInvalidation is MongoDB's userCacheInvalidationIntervalSecs.
const DefaultUserCacheInvalidation = 30 * time.Second

// UserCacheInvalidation is how often a frontend of a shared store looks
// for user and role changes made through other frontends
// (userCacheInvalidationIntervalSecs, as a mongos polls its config
// servers).
func (a *AccessControl) UserCacheInvalidation() time.Duration {
	return DefaultUserCacheInvalidation + time.Duration(a.invalidationOffset.Load())*time.Second
}

// PollUserChanges reads admin.system.users and admin.system.roles and,
// when they changed since the last poll, makes every connection resolve
// its privileges again: how a change made through another frontend of a
// shared store reaches this one's connections (the frontend that made it
// invalidates at once).
func (s *Service) PollUserChanges() error {
	h := sha256.New()
	for _, coll := range []string{usersColl, rolesColl} {
		docs, err := s.findAuthDocs(coll, bson.D{}, 0)
		if err != nil {
			return err
		}
		for _, d := range docs {
			h.Write(d)
		}
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	a := &s.Access
	a.pollMu.Lock()
	changed := a.polled && sum != a.digest
	a.digest, a.polled = sum, true
	a.pollMu.Unlock()
	if changed {
		a.changed()
	}
	return nil
}

// changed makes every connection resolve its privileges again.
func (a *AccessControl) changed() { a.generation.Add(1) }

// connAuth is a connection's authentication: its conversation in
// progress and its authenticated user with the roles and privileges
// resolved at a generation. The connection's goroutine changes it;
// currentOp reads it from others, hence mu.
type connAuth struct {
	mu   sync.Mutex
	conv *auth.Conversation
	// convDB is the conversation's database, convID its number.
	convDB string
	convID int32
	user   *authedUser
}

// authedUser is an authenticated user and what its roles grant.
type authedUser struct {
	name auth.UserName
	// id is the user document's userId (its bytes): a user created again
	// under the same name is another user.
	id     string
	gen    uint64
	direct []auth.RoleName // granted to the user
	roles  []auth.RoleName // direct and inherited
	privs  auth.Privileges
	// rolesVar is roles as the expressions' $$USER_ROLES (rolesVariable).
	rolesVar bson.RawValue
	// gone is set when the user does not exist (resolved as it
	// authenticates); a connection whose user is dropped later is logged
	// out (privileges).
	gone bool
}

// userName is the connection's authenticated user, if any.
func (c *Conn) userName() (auth.UserName, bool) {
	if c == nil {
		return auth.UserName{}, false
	}
	c.auth.mu.Lock()
	defer c.auth.mu.Unlock()
	if c.auth.user == nil {
		return auth.UserName{}, false
	}
	return c.auth.user.name, true
}

// ownerKey identifies the connection's user for the cursors it opens:
// "" when none is authenticated.
func (c *Conn) ownerKey() string {
	if u, ok := c.userName(); ok {
		return u.String()
	}
	return ""
}

// isLoopback reports whether the client connects from a loopback address,
// which the localhost exception requires.
func (c *Conn) isLoopback() bool {
	host, _, err := net.SplitHostPort(c.Remote)
	if err != nil {
		host = c.Remote
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// privileges returns the connection's user with its privileges resolved
// at the current generation, or nil when no user is authenticated.
func (s *Service) privileges(c *Conn) (*authedUser, error) {
	if c == nil {
		return nil, nil
	}
	c.auth.mu.Lock()
	u := c.auth.user
	c.auth.mu.Unlock()
	if u == nil {
		return nil, nil
	}
	gen := s.Access.generation.Load()
	if u.gen == gen {
		return u, nil
	}
	fresh, err := s.resolveUser(u.name, gen)
	if err != nil {
		return nil, err
	}
	if fresh.gone || fresh.id != u.id {
		// The user was dropped, or dropped and created again (another
		// userId): the connection is logged out, as MongoDB's
		// _refreshUserInfoAsNeeded clears a user reacquireUser no longer
		// finds under the same id.
		fresh = nil
	}
	c.auth.mu.Lock()
	if c.auth.user != nil && c.auth.user.name == u.name {
		c.auth.user = fresh
	}
	c.auth.mu.Unlock()
	return fresh, nil
}

// resolveUser reads user's roles and resolves them into privileges.
func (s *Service) resolveUser(name auth.UserName, gen uint64) (*authedUser, error) {
	doc, err := s.userDoc(name)
	if err != nil {
		return nil, err
	}
	u := &authedUser{name: name, gen: gen}
	if doc == nil {
		u.gone = true
		return u, nil
	}
	u.id = string(doc.Lookup("userId").Value)
	direct, err := auth.ParseRoleNames(doc.Lookup("roles"), "roles", name.DB)
	if err != nil {
		return nil, err
	}
	u.direct = direct
	u.roles, u.privs, err = auth.Resolve(direct, s.roleDef)
	u.rolesVar = rolesVariable(u.roles)
	return u, err
}

// directRoles are the roles a user document grants directly.
func directRoles(doc bson.Raw, db string) []auth.RoleName {
	rs, _ := auth.ParseRoleNames(doc.Lookup("roles"), "roles", db)
	return rs
}

// Internal collections of users and roles, as MongoDB names them.
const (
	usersColl = "system.users"
	rolesColl = "system.roles"
)

// userDoc reads name's document from admin.system.users; nil when the
// user does not exist.
func (s *Service) userDoc(name auth.UserName) (bson.Raw, error) {
	return s.findByID(usersColl, name.ID())
}

// roleDef finds a user-defined role in admin.system.roles.
func (s *Service) roleDef(r auth.RoleName) (auth.RoleDef, bool, error) {
	doc, err := s.findByID(rolesColl, r.ID())
	if err != nil || doc == nil {
		return auth.RoleDef{}, false, err
	}
	def, err := auth.ParseRoleDef(doc)
	return def, err == nil, err
}

// findByID reads the document with _id id from admin.coll; nil when there
// is none.
func (s *Service) findByID(coll, id string) (bson.Raw, error) {
	docs, err := s.findAuthDocs(coll, bson.D{{Key: "_id", Value: id}}, 1)
	if err != nil || len(docs) == 0 {
		return nil, err
	}
	return docs[0], nil
}

// findAuthDocs reads the documents of admin.coll matching filter, at most
// limit of them (0: all), in _id order.
func (s *Service) findAuthDocs(coll string, filter bson.D, limit int64) ([]bson.Raw, error) {
	return s.findDocs("admin", coll, filter, limit)
}

// findDocs reads the documents of db.coll matching filter, at most limit
// of them (0: all), in _id order.
func (s *Service) findDocs(db, coll string, filter bson.D, limit int64) ([]bson.Raw, error) {
	f, err := bson.Marshal(filter)
	if err != nil {
		return nil, err
	}
	cur, err := s.Engine.Find(db, coll, engine.FindOptions{Filter: f, Limit: limit, Sort: bson.Raw(idAscending)})
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	var out []bson.Raw
	for {
		d, err := cur.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			return out, nil
		}
		out = append(out, slices.Clone(d))
	}
}

// idAscending is the sort {_id: 1}.
var idAscending = func() []byte {
	b, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(1)}})
	return b
}()

// anyUsers reports whether a user exists; once one does, the answer is
// cached: the localhost exception stays closed.
func (s *Service) anyUsers() (bool, error) {
	if s.Access.usersExist.Load() {
		return true, nil
	}
	docs, err := s.findAuthDocs(usersColl, bson.D{}, 1)
	if err != nil {
		return false, err
	}
	if len(docs) > 0 {
		s.Access.usersExist.Store(true)
	}
	return len(docs) > 0, nil
}
