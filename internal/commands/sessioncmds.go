package commands

import (
	"crypto/rand"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/values"
)

// The commands that manage logical sessions. A session is its lsid, {id,
// uid}: a client names the id, and the uid is the digest of the user it
// is authenticated as (sessions.Key), so a user's commands reach only that
// user's sessions, as in MongoDB's makeLogicalSessionId.

func init() {
	register(startSessionCmd, &argSpec{path: "startSession"}, "startSession")
	register(refreshSessionsCmd, &argSpec{path: "refreshSessions", subs: []*argSpec{logicalSessionSpec}}, "refreshSessions")
	register(endSessionsCmd, &argSpec{path: "endSessions", subs: []*argSpec{logicalSessionSpec}}, "endSessions")
	register(killSessionsCmd, &argSpec{path: "killSessions", open: nonStrictStruct, subs: []*argSpec{logicalSessionSpec}}, "killSessions")
	register(killAllSessionsCmd, &argSpec{path: "killAllSessions", open: nonStrictStruct, subs: []*argSpec{killAllSessionsUserSpec}}, "killAllSessions")
	register(killAllSessionsByPatternCmd, &argSpec{path: "killAllSessionsByPattern", open: nonStrictStruct,
		subs: []*argSpec{sessionPatternSpec, sessionPatternLSIDSpec, sessionPatternUserSpec, sessionPatternRoleSpec}}, "killAllSessionsByPattern")
}

// nonStrictStruct says why the kill commands take unknown fields: MongoDB
// parses them as IDL structs declared strict: false.
const nonStrictStruct = "MongoDB parses the command as a non-strict IDL struct, which ignores fields it does not declare"

// logicalSessionSpec declares a session as clients list them
// (LogicalSessionFromClient).
var logicalSessionSpec = &argSpec{path: "LogicalSessionFromClient", fields: []argField{
	required("id", tUUID),
	arg("uid", tSHA256),
}}

// killAllSessionsUserSpec declares a user killAllSessions lists
// (KillAllSessionsUser).
var killAllSessionsUserSpec = &argSpec{path: "KillAllSessionsCmd.killAllSessions", fields: []argField{
	required("user", tString),
	required("db", tString),
}}

// The parts of a killAllSessionsByPattern pattern (KillAllSessionsByPattern):
// a session's lsid, a user's uid, and the users and roles to impersonate.
var (
	sessionPatternSpec = &argSpec{path: "KillAllSessionsByPatternCmd.killAllSessionsByPattern", fields: []argField{
		arg("lsid", tDoc),
		arg("uid", tSHA256),
		arg("users", tArray),
		arg("roles", tArray),
	}}
	sessionPatternLSIDSpec = &argSpec{path: "KillAllSessionsByPatternCmd.killAllSessionsByPattern.lsid", fields: []argField{
		required("id", tUUID),
		required("uid", tSHA256),
	}}
	sessionPatternUserSpec = &argSpec{path: "KillAllSessionsByPatternCmd.killAllSessionsByPattern.users", fields: []argField{
		required("user", tString),
		required("db", tString),
	}}
	sessionPatternRoleSpec = &argSpec{path: "KillAllSessionsByPatternCmd.killAllSessionsByPattern.roles", fields: []argField{
		required("role", tString),
		required("db", tString),
	}}
)

// commandArray is the array a command names in its first field (the
// sessions of endSessions, killSessions and refreshSessions, the users of
// killAllSessions, the patterns of killAllSessionsByPattern, each parsed by
// MongoDB as a struct whose first field is that array), path and elemPath
// being how MongoDB's messages name it and its elements: null is its
// absence, another type a type mismatch. Null elements are skipped, as the
// IDL's array parser skips them; the others must be documents.
func commandArray(r *Request, path, elemPath string) ([]bson.Raw, error) {
	switch v := r.args.first(); v.Type {
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		var out []bson.Raw
		for i, el := range vals {
			if el.Type == bson.TypeNull || el.Type == bson.TypeUndefined {
				continue
			}
			doc, ok := el.DocumentOK()
			if !ok {
				return nil, wrongType(elemPath, strconv.Itoa(i), el, "object")
			}
			out = append(out, doc)
		}
		return out, nil
	case bson.TypeNull, bson.TypeUndefined:
		return nil, mongoerr.MissingField(path)
	default:
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'array'", path, values.TypeName(v.Type))
	}
}

// keySession makes the lsid r names the key of its session (sessionKey).
func (s *Service) keySession(r *Request) error {
	a := &r.Args.Session
	if a.lsid == "" {
		return nil
	}
	var uid *[32]byte
	if a.hasUID {
		uid = &a.uid
	}
	key, err := s.sessionKey(r, a.lsid, uid, "")
	a.lsid = key
	return err
}

// sessionKey is the key (sessions.Key) of the session a client names by
// its id and, optionally, its uid, as MongoDB's makeLogicalSessionId makes
// it: the session of r's user, or of the uid given, which must be the
// user's own unless the user may impersonate or holds spoof (killSessions'
// killAnySession, "" for none); without access control any uid is allowed.
func (s *Service) sessionKey(r *Request, id string, uid *[32]byte, spoof string) (string, error) {
	owner, _ := s.sessionOwner(r)
	if uid == nil {
		return sessions.Key(id, owner), nil
	}
	if *uid != sessions.UserUID(owner) && !s.mayActAs(r, spoof) {
		return "", mongoerr.New(mongoerr.Unauthorized, "Unauthorized to set user digest in LogicalSessionId")
	}
	return sessions.KeyOf(id, *uid), nil
}

// startSessionCmd creates a session with a new random id for the user,
// used now: MongoDB starts its record with lastUse the time of the
// command, from which the session's timeout runs.
func startSessionCmd(s *Service, r *Request) (bson.Raw, error) {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	id[6] = id[6]&0x0f | 0x40 // a version 4 UUID
	id[8] = id[8]&0x3f | 0x80
	owner, _ := s.sessionOwner(r)
	s.Sessions.Acquire(sessions.Key(string(id), owner), time.Now()).Unlock()
	return marshal(bson.D{
		{Key: "id", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: id}}}},
		{Key: "timeoutMinutes", Value: logicalSessionTimeoutMinutes},
	}), nil
}

// sessionKeys reads the sessions endSessions, killSessions and
// refreshSessions list (LogicalSessionFromClient) as the keys of those
// sessions (sessionKey, spoof the privilege that allows any uid);
// elemPath is how MongoDB's messages name an element.
func (s *Service) sessionKeys(r *Request, arrayPath, elemPath, spoof string) ([]string, error) {
	docs, err := commandArray(r, arrayPath, elemPath)
	if err != nil {
		return nil, err
	}
	spec := *logicalSessionSpec
	spec.path = elemPath
	var keys []string
	for _, doc := range docs {
		a, err := parseSub(doc, &spec)
		if err != nil {
			return nil, err
		}
		_, id := a.value("id").Binary()
		var uid *[32]byte
		if v := a.value("uid"); v.Type != 0 {
			_, data := v.Binary()
			uid = (*[32]byte)(data)
		}
		key, err := s.sessionKey(r, string(id), uid, spoof)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// mayActAs reports whether r's user may act for other users: without
// access control anyone may; with it, a user with the impersonate
// privilege, or with the cluster action also given ("" for none).
func (s *Service) mayActAs(r *Request, also string) bool {
	if !s.Access.Enabled {
		return true
	}
	u, err := s.privileges(r.Conn)
	if err != nil || u == nil {
		return false
	}
	return u.privs.Allows(auth.ClusterTarget(), "impersonate") || also != "" && u.privs.Allows(auth.ClusterTarget(), also)
}

// endSessionsCmd ends the user's sessions listed: their transactions
// abort.
func endSessionsCmd(s *Service, r *Request) (bson.Raw, error) {
	keys, err := s.sessionKeys(r, "endSessions.endSessions", "LogicalSessionFromClient", "")
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		s.Sessions.End(key)
	}
	return nil, nil
}

// refreshSessionsCmd marks the user's sessions listed as used now.
func refreshSessionsCmd(s *Service, r *Request) (bson.Raw, error) {
	keys, err := s.sessionKeys(r, "refreshSessions.refreshSessions", "refreshSessions.refreshSessionsFromClient", "")
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		s.Sessions.Acquire(key, time.Now()).Unlock()
	}
	return nil, nil
}

// sessionPattern selects sessions as MongoDB's KillAllSessionsByPattern
// does: one session by its key, a user's sessions by its uid, or, with
// neither, every session.
type sessionPattern struct {
	key            string
	uid            [32]byte
	hasKey, hasUID bool
}

func (p sessionPattern) matches(key string) bool {
	switch {
	case p.hasKey:
		return key == p.key
	case p.hasUID:
		_, uid := sessions.Split(key)
		return uid == p.uid
	}
	return true
}

// killSessionsCmd kills the user's sessions listed or, given none, all the
// user's sessions (every session without access control).
func killSessionsCmd(s *Service, r *Request) (bson.Raw, error) {
	keys, err := s.sessionKeys(r, "killSessions.killSessions", "LogicalSessionFromClient", "killAnySession")
	if err != nil {
		return nil, err
	}
	var patterns []sessionPattern
	for _, key := range keys {
		patterns = append(patterns, sessionPattern{key: key, hasKey: true})
	}
	if len(keys) == 0 {
		switch owner, err := s.sessionOwner(r); {
		case !s.Access.Enabled:
			patterns = []sessionPattern{{}}
		case err == nil:
			patterns = []sessionPattern{{uid: sessions.UserUID(owner), hasUID: true}}
		}
	}
	s.killSessions(r, patterns)
	return nil, nil
}

// killAllSessionsCmd kills the sessions of the users listed, or every
// session when the list is empty. Each user is a uid (sessions.NamedUID):
// {user: "", db: ""} names the sessions opened without access control.
func killAllSessionsCmd(s *Service, r *Request) (bson.Raw, error) {
	patterns, err := listedPatterns(r, "KillAllSessionsCmd.killAllSessions", func(doc bson.Raw) (sessionPattern, error) {
		a, err := parseSub(doc, killAllSessionsUserSpec)
		if err != nil {
			return sessionPattern{}, err
		}
		return sessionPattern{uid: sessions.NamedUID(a.str("user"), a.str("db")), hasUID: true}, nil
	})
	if err != nil {
		return nil, err
	}
	s.killSessions(r, patterns)
	return nil, nil
}

// killAllSessionsByPatternCmd kills the sessions any pattern selects, or
// every session when the list is empty. A pattern's users and roles are
// whom MongoDB audits the kill as: giving them takes the impersonate
// privilege, and Folio, which keeps no audit log, checks them and that.
func killAllSessionsByPatternCmd(s *Service, r *Request) (bson.Raw, error) {
	impersonates := false
	patterns, err := listedPatterns(r, "KillAllSessionsByPatternCmd.killAllSessionsByPattern", func(doc bson.Raw) (sessionPattern, error) {
		p, named, err := parseSessionPattern(doc)
		impersonates = impersonates || named
		return p, err
	})
	if err != nil {
		return nil, err
	}
	if impersonates && !s.mayActAs(r, "") {
		return nil, mongoerr.New(mongoerr.Unauthorized, "Not authorized to impersonate in killAllSessionsByPattern")
	}
	s.killSessions(r, patterns)
	return nil, nil
}

// listedPatterns reads the patterns a kill command lists in its first
// field (path as MongoDB's messages name it), each with parse; an empty
// list is the pattern of every session.
func listedPatterns(r *Request, path string, parse func(bson.Raw) (sessionPattern, error)) ([]sessionPattern, error) {
	docs, err := commandArray(r, path, path)
	if err != nil || len(docs) == 0 {
		return []sessionPattern{{}}, err
	}
	patterns := make([]sessionPattern, 0, len(docs))
	for _, doc := range docs {
		p, err := parse(doc)
		if err != nil {
			return nil, err
		}
		patterns = append(patterns, p)
	}
	return patterns, nil
}

// parseSessionPattern reads one KillAllSessionsByPattern; impersonates
// reports whether it names users or roles to act as.
func parseSessionPattern(doc bson.Raw) (p sessionPattern, impersonates bool, err error) {
	a, err := parseSub(doc, sessionPatternSpec)
	if err != nil {
		return p, false, err
	}
	if v := a.value("lsid"); v.Type != 0 {
		l, err := parseSub(v.Document(), sessionPatternLSIDSpec)
		if err != nil {
			return p, false, err
		}
		_, id := l.value("id").Binary()
		_, uid := l.value("uid").Binary()
		p.key, p.hasKey = sessions.KeyOf(string(id), [32]byte(uid)), true
	}
	if v := a.value("uid"); v.Type != 0 {
		_, uid := v.Binary()
		p.uid, p.hasUID = [32]byte(uid), true
	}
	for _, f := range []struct {
		name string
		spec *argSpec
	}{{"users", sessionPatternUserSpec}, {"roles", sessionPatternRoleSpec}} {
		v := a.value(f.name)
		if v.Type == 0 {
			continue
		}
		impersonates = true
		vals, _ := v.Array().Values()
		for i, el := range vals {
			d, ok := el.DocumentOK()
			if !ok {
				return p, false, wrongType(f.spec.path, strconv.Itoa(i), el, "object")
			}
			if _, err := parseSub(d, f.spec); err != nil {
				return p, false, err
			}
		}
	}
	return p, impersonates, nil
}

// killSessions kills the sessions some pattern selects: their running
// operations (but r's own) fail with Interrupted, their cursors close,
// then the sessions end and their transactions abort.
func (s *Service) killSessions(r *Request, patterns []sessionPattern) {
	match := func(key string) bool {
		for _, p := range patterns {
			if p.matches(key) {
				return true
			}
		}
		return false
	}
	s.ops.killWhere(func(op *activeOp) bool { return op.lsid != "" && match(op.lsid) && op != r.op }, errKilled)
	s.Cursors.KillSessions(match)
	s.Sessions.EndWhere(match)
}
