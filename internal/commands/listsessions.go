package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/values"
)

// $listLocalSessions and $listSessions list the logical sessions the
// server's session cache holds: the first on {aggregate: 1}, the second on
// config.system.sessions (which MongoDB fills from the cache; Folio's
// sessions live in its registry, so both read it). Each is rewritten, as
// $currentOp is, into a $documents stage of the session records, in
// MongoDB's shape: {_id: {id, uid}, lastUse, user: {name}}, uid being the
// SHA-256 of "user@db" (of "" without access control).
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/listLocalSessions/

// sessionsStage rewrites the leading $listLocalSessions or $listSessions
// of an aggregate on db.coll; ok is false when the pipeline starts with
// neither.
func (s *Service) sessionsStage(r *Request, coll string, stage bson.Raw) (_ bson.Raw, ok bool, err error) {
	name := Name(stage)
	if name != "$listLocalSessions" && name != "$listSessions" {
		return nil, false, nil
	}
	if err := aggregate.SessionsNamespace(name, r.DB, coll); err != nil {
		return nil, true, err
	}
	uids, err := s.listSessionsUsers(r, name, stage.Lookup(name))
	if err != nil {
		return nil, true, err
	}
	docs := bson.A{}
	for _, info := range s.Sessions.List() {
		if _, uid := sessions.Split(info.ID); uids != nil && !slices.Contains(uids, uid) {
			continue
		}
		d := bson.D{
			{Key: "_id", Value: sessions.LSID(info.ID)},
			{Key: "lastUse", Value: bson.NewDateTimeFromTime(info.LastUse)},
		}
		if info.Owner != "" {
			d = append(d, bson.E{Key: "user", Value: bson.D{{Key: "name", Value: info.Owner}}})
		}
		docs = append(docs, d)
	}
	return marshal(bson.D{{Key: "$documents", Value: bson.D{{Key: "$literal", Value: docs}}}}), true, nil
}

// listSessionsUsers reads the stage's {allUsers, users} spec: the uids of
// the users whose sessions to list (sessions.NamedUID, so {user: "", db:
// ""} names the sessions opened without access control), or nil for every
// session. Without either, the current user's.
func (s *Service) listSessionsUsers(r *Request, stage string, spec bson.RawValue) ([][32]byte, error) {
	if spec.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "%s options must be specified in an object, but found: %s", stage, values.TypeName(spec.Type))
	}
	var all bool
	var users [][32]byte
	elems, _ := spec.Document().Elements()
	for _, e := range elems {
		switch e.Key() {
		case "allUsers":
			b, ok := e.Value().BooleanOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.allUsers' is the wrong type '%s', expected type 'bool'", stage, values.TypeName(e.Value().Type))
			}
			all = b
		case "users":
			arr, ok := e.Value().ArrayOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.users' is the wrong type '%s', expected type 'array'", stage, values.TypeName(e.Value().Type))
			}
			vals, _ := arr.Values()
			users = [][32]byte{}
			for _, v := range vals {
				u, err := listSessionsUser(stage, v)
				if err != nil {
					return nil, err
				}
				users = append(users, sessions.NamedUID(u.User, u.DB))
			}
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", stage, e.Key())
		}
	}
	if all && len(users) > 0 {
		return nil, mongoerr.New(mongoerr.UnsupportedFormat, "%s may not specify {allUsers:true} and {users:[...]} at the same time", stage)
	}
	if all {
		return nil, nil
	}
	if len(users) == 0 {
		me, err := s.sessionOwner(r)
		if err != nil {
			return nil, err
		}
		users = [][32]byte{sessions.UserUID(me)}
	}
	return users, nil
}

// listSessionsUser reads one {user, db} of a users list.
func listSessionsUser(stage string, v bson.RawValue) (auth.UserName, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return auth.UserName{}, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.users' is the wrong type '%s', expected type 'object'", stage, values.TypeName(v.Type))
	}
	var u auth.UserName
	elems, _ := d.Elements()
	for _, e := range elems {
		var dst *string
		switch e.Key() {
		case "user":
			dst = &u.User
		case "db":
			dst = &u.DB
		default:
			return u, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.users.%s' is an unknown field.", stage, e.Key())
		}
		str, ok := e.Value().StringValueOK()
		if !ok {
			return u, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.users.%s' is the wrong type '%s', expected type 'string'", stage, e.Key(), values.TypeName(e.Value().Type))
		}
		*dst = str
	}
	for _, name := range []string{"user", "db"} {
		if _, err := d.LookupErr(name); err != nil {
			return u, mongoerr.MissingField(stage + ".users." + name)
		}
	}
	return u, nil
}

// sessionOwner is the owner of the sessions r's connection uses: its user
// as "user@db" under access control, "" otherwise; Unauthorized when
// access control is on and no user is authenticated.
func (s *Service) sessionOwner(r *Request) (string, error) {
	if !s.Access.Enabled {
		return "", nil
	}
	u, ok := r.Conn.userName()
	if !ok {
		return "", mongoerr.New(mongoerr.Unauthorized, "There is no user authenticated")
	}
	return u.String(), nil
}
