package auth

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// Privilege is a set of actions allowed on a resource.
type Privilege struct {
	Resource Resource
	// Actions are sorted and distinct.
	Actions []string
}

// Doc is the privilege as MongoDB shows and stores it: {resource,
// actions}, actions an array even when empty (a privilege granted with
// actions: [] is kept so, as MongoDB's Privilege::toBSON writes it).
func (p Privilege) Doc() bson.D {
	actions := p.Actions
	if actions == nil {
		actions = []string{}
	}
	return bson.D{{Key: "resource", Value: p.Resource.Doc()}, {Key: "actions", Value: actions}}
}

// ParsePrivilege reads {resource, actions}; every action must be one
// MongoDB knows.
func ParsePrivilege(doc bson.Raw) (Privilege, error) {
	var p Privilege
	var haveRes, haveActs bool
	elems, err := doc.Elements()
	if err != nil {
		return p, mongoerr.New(mongoerr.FailedToParse, "invalid privilege document")
	}
	for _, e := range elems {
		v := e.Value()
		switch e.Key() {
		case "resource":
			d, ok := v.DocumentOK()
			if !ok {
				return p, mongoerr.New(mongoerr.FailedToParse, "privilege field \"resource\" must be an object")
			}
			if p.Resource, err = ParseResource(d); err != nil {
				return p, err
			}
			haveRes = true
		case "actions":
			a, ok := v.ArrayOK()
			if !ok {
				return p, mongoerr.New(mongoerr.FailedToParse, "privilege field \"actions\" must be an array")
			}
			vals, _ := a.Values()
			for _, av := range vals {
				s, ok := av.StringValueOK()
				if !ok {
					return p, mongoerr.New(mongoerr.FailedToParse, "privilege actions must be strings")
				}
				if !ValidAction(s) {
					return p, mongoerr.New(mongoerr.FailedToParse, "Unrecognized action privilege string: %s", s)
				}
				p.Actions = append(p.Actions, s)
			}
			haveActs = true
		default:
			return p, mongoerr.New(mongoerr.FailedToParse, "Unrecognized field '%s' in privilege", e.Key())
		}
	}
	if !haveRes || !haveActs {
		return p, mongoerr.New(mongoerr.FailedToParse, "privilege must have \"resource\" and \"actions\"")
	}
	slices.Sort(p.Actions)
	p.Actions = slices.Compact(p.Actions)
	return p, nil
}

// Privileges are the privileges a user holds through its roles.
type Privileges []Privilege

// Allows reports whether some privilege grants action on t: names it, or
// anyAction, which grants every action on its resource, as in MongoDB.
func (ps Privileges) Allows(t Target, action string) bool {
	for _, p := range ps {
		if p.Resource.Matches(t) {
			if _, found := slices.BinarySearch(p.Actions, action); found {
				return true
			}
			if _, found := slices.BinarySearch(p.Actions, "anyAction"); found {
				return true
			}
		}
	}
	return false
}

// AnyInDB reports whether some privilege with an action may apply to a
// resource in database db, as MongoDB's
// isAuthorizedForAnyActionOnAnyResourceInDB decides it (which
// listDatabases' authorizedDatabases and listCollections'
// authorizedCollections consult): anyResource; db itself or one of its
// collections or buckets collections; every normal resource, but for db
// local and config; or a collection or buckets collection pattern of every
// database. The cluster resource is in no database.
func (ps Privileges) AnyInDB(db string) bool {
	for _, p := range ps {
		if len(p.Actions) == 0 {
			continue
		}
		switch r := p.Resource; r.Pattern {
		case AnyResource, CollectionName, AnySystemBuckets, SystemBucketsOfColl:
			return true
		case AnyNormal:
			if db != "local" && db != "config" {
				return true
			}
		case Database, ExactNamespace, SystemBucketsInDB, ExactSystemBuckets:
			if r.DB == db {
				return true
			}
		}
	}
	return false
}

// Merge combines the privileges on equal resources, in first-seen order,
// as MongoDB shows a role's or user's privileges.
func Merge(ps []Privilege) Privileges {
	var out Privileges
	at := map[Resource]int{}
	for _, p := range ps {
		i, ok := at[p.Resource]
		if !ok {
			at[p.Resource] = len(out)
			out = append(out, Privilege{Resource: p.Resource, Actions: slices.Clone(p.Actions)})
			continue
		}
		acts := append(out[i].Actions, p.Actions...)
		slices.Sort(acts)
		out[i].Actions = slices.Compact(acts)
	}
	return out
}

// Remove takes actions away from the privileges on equal resources, and
// drops those left with none (revokePrivilegesFromRole).
func Remove(ps []Privilege, take []Privilege) []Privilege {
	out := Merge(ps)
	for _, t := range take {
		for i := range out {
			if out[i].Resource == t.Resource {
				out[i].Actions = slices.DeleteFunc(out[i].Actions, func(a string) bool {
					_, found := slices.BinarySearch(t.Actions, a)
					return found
				})
			}
		}
	}
	return slices.DeleteFunc(out, func(p Privilege) bool { return len(p.Actions) == 0 })
}
