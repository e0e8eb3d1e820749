package auth

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
)

// Pattern is the kind of a privilege's resource, as MongoDB's resource
// documents spell them.
type Pattern uint8

const (
	// AnyResource ({anyResource: true}) is everything.
	AnyResource Pattern = iota + 1
	// ClusterResource ({cluster: true}) is the server itself.
	ClusterResource
	// AnyNormal ({db: "", collection: ""}) is every database and every
	// collection not named system.*.
	AnyNormal
	// Database ({db: "x", collection: ""}) is database x and its
	// collections not named system.*.
	Database
	// CollectionName ({db: "", collection: "c"}) is collection c of every
	// database.
	CollectionName
	// ExactNamespace ({db: "x", collection: "c"}) is collection x.c.
	ExactNamespace
	// AnySystemBuckets ({db: "", system_buckets: ""}) is every time series
	// buckets collection, system.buckets.*, of every database.
	AnySystemBuckets
	// SystemBucketsInDB ({db: "x", system_buckets: ""}) is x.system.buckets.*.
	SystemBucketsInDB
	// SystemBucketsOfColl ({db: "", system_buckets: "c"}) is
	// system.buckets.c of every database.
	SystemBucketsOfColl
	// ExactSystemBuckets ({db: "x", system_buckets: "c"}) is
	// x.system.buckets.c.
	ExactSystemBuckets
)

// bucketsPrefix starts the names of time series buckets collections.
const bucketsPrefix = "system.buckets."

// Resource is what a privilege applies to.
type Resource struct {
	Pattern  Pattern
	DB, Coll string
}

// Target is what a command acts on: the cluster, a database (Coll empty)
// or a collection.
type Target struct {
	Cluster  bool
	DB, Coll string
}

// ClusterTarget is the cluster.
func ClusterTarget() Target { return Target{Cluster: true} }

// DBTarget is database db.
func DBTarget(db string) Target { return Target{DB: db} }

// AnyNormalTarget is every normal resource at once: only a privilege on
// any normal resource (or any resource) covers it.
func AnyNormalTarget() Target { return Target{} }

// NSTarget is collection db.coll.
func NSTarget(db, coll string) Target { return Target{DB: db, Coll: coll} }

// String shows the target as MongoDB's messages do.
func (t Target) String() string {
	switch {
	case t.Cluster:
		return "cluster"
	case t == Target{}:
		return "<all normal resources>"
	case t.Coll == "":
		return t.DB
	}
	return t.DB + "." + t.Coll
}

// IsSystem reports whether coll is a system collection, which database
// and any-normal resources do not cover.
func IsSystem(coll string) bool { return strings.HasPrefix(coll, "system.") }

// Matches reports whether the resource covers t.
func (r Resource) Matches(t Target) bool {
	switch r.Pattern {
	case AnyResource:
		return true
	case ClusterResource:
		return t.Cluster
	case AnyNormal:
		return !t.Cluster && !IsSystem(t.Coll)
	case Database:
		return !t.Cluster && t.DB == r.DB && !IsSystem(t.Coll)
	case CollectionName:
		return !t.Cluster && t.Coll == r.Coll
	case ExactNamespace:
		return !t.Cluster && t.DB == r.DB && t.Coll == r.Coll
	}
	ts, ok := strings.CutPrefix(t.Coll, bucketsPrefix)
	if t.Cluster || !ok {
		return false
	}
	switch r.Pattern {
	case AnySystemBuckets:
		return true
	case SystemBucketsInDB:
		return t.DB == r.DB
	case SystemBucketsOfColl:
		return ts == r.Coll
	case ExactSystemBuckets:
		return t.DB == r.DB && ts == r.Coll
	}
	return false
}

// Doc is the resource document MongoDB shows: {cluster: true},
// {anyResource: true} or {db, collection}.
func (r Resource) Doc() bson.D {
	switch r.Pattern {
	case AnyResource:
		return bson.D{{Key: "anyResource", Value: true}}
	case ClusterResource:
		return bson.D{{Key: "cluster", Value: true}}
	case AnySystemBuckets, SystemBucketsOfColl:
		return bson.D{{Key: "system_buckets", Value: r.Coll}}
	case SystemBucketsInDB, ExactSystemBuckets:
		return bson.D{{Key: "db", Value: r.DB}, {Key: "system_buckets", Value: r.Coll}}
	}
	return bson.D{{Key: "db", Value: r.DB}, {Key: "collection", Value: r.Coll}}
}

// ParseResource reads a resource document. Its fields' types are checked
// first; then, as MongoDB's Privilege::resolvePrivilegeWithTenant does
// (BadValue, in its order): cluster or anyResource, when present, must be
// true and stand alone; otherwise collection goes with db and not with
// system_buckets, and names a valid collection (or is empty); a document
// with neither collection nor system_buckets names nothing.
func ParseResource(doc bson.Raw) (Resource, error) {
	var db, coll, buckets *string
	var cluster, anyRes *bool
	elems, err := doc.Elements()
	if err != nil {
		return Resource{}, mongoerr.New(mongoerr.FailedToParse, "invalid resource document")
	}
	for _, e := range elems {
		v := e.Value()
		switch e.Key() {
		case "cluster", "anyResource":
			b, ok := v.BooleanOK()
			if !ok {
				return Resource{}, mongoerr.New(mongoerr.FailedToParse, "resource field \"%s\" must be a boolean", e.Key())
			}
			if e.Key() == "cluster" {
				cluster = &b
			} else {
				anyRes = &b
			}
		case "db", "collection", "system_buckets":
			s, ok := v.StringValueOK()
			if !ok {
				return Resource{}, mongoerr.New(mongoerr.FailedToParse, "resource field \"%s\" must be a string", e.Key())
			}
			switch e.Key() {
			case "db":
				db = &s
			case "collection":
				coll = &s
			default:
				buckets = &s
			}
		default:
			return Resource{}, mongoerr.New(mongoerr.FailedToParse, "Unrecognized field '%s' in resource", e.Key())
		}
	}
	// conflict names the first field present beside kind's, in MongoDB's
	// order of checking them.
	conflict := func(kind string, fields ...string) error {
		present := map[string]bool{"anyResource": anyRes != nil, "db": db != nil, "collection": coll != nil, "system_buckets": buckets != nil}
		for _, f := range fields {
			if present[f] {
				return mongoerr.New(mongoerr.BadValue, "%s conflicts with resource type '%s'", kind, f)
			}
		}
		return nil
	}
	switch {
	case cluster != nil:
		if !*cluster {
			return Resource{}, mongoerr.New(mongoerr.BadValue, "resource: {cluster: false} must be true")
		}
		if err := conflict("resource: {cluster: true}", "anyResource", "db", "collection", "system_buckets"); err != nil {
			return Resource{}, err
		}
		return Resource{Pattern: ClusterResource}, nil
	case anyRes != nil:
		if !*anyRes {
			return Resource{}, mongoerr.New(mongoerr.BadValue, "resource: {anyResource: false} must be true")
		}
		if err := conflict("resource: {anyResource: true}", "db", "collection", "system_buckets"); err != nil {
			return Resource{}, err
		}
		return Resource{Pattern: AnyResource}, nil
	case coll != nil && buckets != nil:
		return Resource{}, conflict("resource: {collection: '...'}", "system_buckets")
	case coll != nil:
		if db == nil {
			return Resource{}, mongoerr.New(mongoerr.BadValue, "resource {collection: '...'} must include 'db' field as well")
		}
		if *coll != "" && !nsname.ValidCollection(*coll) && (*db != "local" || *coll != "oplog.$main") {
			return Resource{}, mongoerr.New(mongoerr.BadValue, "'%s' is not a valid collection name", *coll)
		}
	case buckets != nil:
		return bucketsResource(db, *buckets), nil
	default:
		return Resource{}, mongoerr.New(mongoerr.BadValue, "resource pattern must contain 'collection' or 'systemBuckets' specifier")
	}
	switch {
	case *db == "" && *coll == "":
		return Resource{Pattern: AnyNormal}, nil
	case *coll == "":
		return Resource{Pattern: Database, DB: *db}, nil
	case *db == "":
		return Resource{Pattern: CollectionName, Coll: *coll}, nil
	}
	return Resource{Pattern: ExactNamespace, DB: *db, Coll: *coll}, nil
}

// bucketsResource is the resource {db, system_buckets: buckets}; an absent
// db is any database, as an empty one is.
func bucketsResource(db *string, buckets string) Resource {
	r := Resource{Coll: buckets}
	if db != nil {
		r.DB = *db
	}
	switch {
	case r.DB == "" && buckets == "":
		r.Pattern = AnySystemBuckets
	case buckets == "":
		r.Pattern = SystemBucketsInDB
	case r.DB == "":
		r.Pattern = SystemBucketsOfColl
	default:
		r.Pattern = ExactSystemBuckets
	}
	return r
}
