package engine

import (
	"strings"
	"unicode/utf8"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
	"github.com/folio-db/folio/internal/timeseries"
)

// ViewsCollection is the collection holding a database's views (package
// commands keeps them).
const ViewsCollection = "system.views"

// maxNamespaceLen is MongoDB's limit on "<db>.<collection>" in bytes.
const maxNamespaceLen = 255

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

// ValidateCollName applies MongoDB's collection naming rules: non-empty,
// valid UTF-8, no '$' or NUL, not starting with '.' or "system."
// (reserved, but for admin.system.users and admin.system.roles, where
// access control keeps users and roles, admin.system.version, where the
// featureCompatibilityVersion is, admin.system.advise, where the
// advisor keeps its observations, system.views, where each database keeps
// its views, system.profile, its profiler's, and system.buckets.<name>, a
// time series collection's buckets), and the full namespace within 255
// bytes. Hyphens and digits are fine ("stats-2011").
func ValidateCollName(db, name string) error {
	ns := db + "." + name
	switch {
	case name == "", strings.ContainsAny(name, "$\x00"), name[0] == '.', !utf8.ValidString(name):
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid collection name: %s", printable(name))
	case strings.HasPrefix(name, "system.") && name != ViewsCollection && name != ProfileCollection && !strings.HasPrefix(name, timeseries.BucketsPrefix) && !(db == "admin" && (name == "system.users" || name == "system.roles" || name == "system.version" || name == AdviseCollection)):
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid system namespace: %s", ns)
	case len(ns) > maxNamespaceLen:
		return mongoerr.New(mongoerr.InvalidNamespace, "Fully qualified namespace is too long. Namespace: %s Max: %d", ns, maxNamespaceLen)
	}
	return nil
}

// printable is a name as error messages show it: invalid UTF-8 replaced, so
// that the reply stays valid BSON.
func printable(name string) string { return strings.ToValidUTF8(name, "\uFFFD") }
