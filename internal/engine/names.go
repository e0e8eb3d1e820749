package engine

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
	"github.com/folio-db/folio/internal/timeseries"
)

// ViewsCollection is the collection holding a database's views (package
// commands keeps them).
const ViewsCollection = "system.views"

// ValidateDBName refuses a database name that breaks MongoDB's rules
// (nsname.ValidDB).
func ValidateDBName(name string) error { return validateDBName(name, false) }

// ValidateLookedUpDBName is ValidateDBName for a name a command only looks
// up, which may hold a '$' (NamespaceString's DollarInDbNameBehavior::Allow).
func ValidateLookedUpDBName(name string) error { return validateDBName(name, true) }

func validateDBName(name string, allowDollar bool) error {
	if !nsname.ValidDB(name, allowDollar) {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid database name: '%s'", printable(name))
	}
	return nil
}

// ValidateNamespace is MongoDB's userAllowedCreateNS (nsname.CheckCreate):
// whether db.name may be created or written, with its errors.
func ValidateNamespace(db, name string) error { return nsname.CheckCreate(db, name, legalSystemNS) }

// ValidateCollName applies MongoDB's collection naming rules
// (nsname.CheckCollection): non-empty, valid UTF-8, no '$' or NUL, not
// starting with '.', no ".system." inside, not starting with "system."
// but for the system collections Folio keeps (legalSystemNS), and the full
// namespace within 255 bytes. Hyphens and digits are fine ("stats-2011").
func ValidateCollName(db, name string) error { return nsname.CheckCollection(db, name, legalSystemNS) }

// CheckValidatorNamespace is MongoDB's checkValidatorCanBeUsedOnNs
// (collection_impl.cpp), which CollectionImpl::init and parseValidator
// apply: a validator, unless empty, is refused (InvalidOptions) on a
// system collection other than a time series' buckets and on any
// collection of an internal database, the message naming the collection
// and its UUID (on create, the UUID just drawn for it).
func CheckValidatorNamespace(db, name string, uuid [16]byte, validator bson.Raw) error {
	switch {
	case len(validator) <= 5, strings.HasPrefix(name, timeseries.BucketsPrefix):
		return nil
	case strings.HasPrefix(name, "system."):
		return mongoerr.New(mongoerr.InvalidOptions, "Document validators not allowed on system collection %s.%s with UUID %s", db, name, uuidString(uuid))
	case db == "admin" || db == "local" || db == "config":
		return mongoerr.New(mongoerr.InvalidOptions, "Document validators are not allowed on collection %s.%s with UUID %s in the %s internal database", db, name, uuidString(uuid), db)
	}
	return nil
}

// CheckPreAndPostImagesNamespace refuses changeStreamPreAndPostImages
// enabled on a collection of admin, local or config, as MongoDB's
// validateChangeStreamPreAndPostImagesOptionIsPermitted does, for create
// in CollectionImpl::init after the validator's check, and for collMod;
// disabling it is allowed anywhere.
func CheckPreAndPostImagesNamespace(db string, on bool) error {
	if on && (db == "admin" || db == "local" || db == "config") {
		return mongoerr.New(mongoerr.InvalidOptions, "changeStreamPreAndPostImages collection option is not supported on the %s database", db)
	}
	return nil
}

// legalSystemNS reports whether a client may create db.name, a system.*
// collection: admin.system.users and admin.system.roles, where access
// control keeps users and roles, admin.system.version, where the
// featureCompatibilityVersion is, system.views, where each database keeps its
// views, system.profile, its profiler's, system.buckets.<name>, a time
// series collection's buckets, and system.js, which MongoDB lets clients
// write (stored functions).
func legalSystemNS(db, name string) bool {
	switch {
	case name == ViewsCollection, name == ProfileCollection, name == "system.js", strings.HasPrefix(name, timeseries.BucketsPrefix):
		return true
	}
	return db == "admin" && (name == "system.users" || name == "system.roles" || name == "system.version")
}

// DroppableSystemCollection reports whether the drop command may drop
// db.name, a system.* collection other than system.profile (refused only
// while profiling) and system.views (refused while time series
// collections use it), as MongoDB 7.0's DatabaseImpl::dropCollection
// decides: local.system.healthlog, config.system.sessions,
// admin.system.keys, a resharding temporary collection, a time series
// collection's buckets, config.system.preimages,
// local.system.collections_to_restore, a change collection and
// system.js; any other (admin.system.users, admin.system.version...) is
// IllegalOperation.
func DroppableSystemCollection(db, name string) bool {
	switch {
	case strings.HasPrefix(name, timeseries.BucketsPrefix), strings.HasPrefix(name, "system.resharding."),
		name == "system.js", name == "system.change_collection":
		return true
	case db == "local":
		return name == "system.healthlog" || name == "system.collections_to_restore"
	case db == "config":
		return name == "system.sessions" || name == "system.preimages"
	case db == "admin":
		return name == "system.keys"
	}
	return false
}

// printable is a name as error messages show it: invalid UTF-8 replaced, so
// that the reply stays valid BSON.
func printable(name string) string { return strings.ToValidUTF8(name, "\uFFFD") }
