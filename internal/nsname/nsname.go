// Package nsname holds MongoDB's rules for database and collection names
// and the errors it reports when a name breaks them, shared by the
// commands, the engine, which refuses to create what breaks them, and the
// stages that name a target database ($merge).
//
// MongoDB 7.0 checks a namespace in several places, each with its own
// text, and a command meets them in this order:
//
//   - DatabaseName's constructor, for the database of every command
//     (CheckDatabaseName);
//   - NamespaceString's constructor and isValid, for a command naming a
//     collection in its first field (CheckSpecified; dataSize, which names
//     a whole namespace: CheckFullName; getMore: CheckGetMoreCollection);
//   - the command dispatcher's check of the database, for the others
//     (CheckCommandDatabase);
//   - userAllowedCreateNS, for a namespace that is created or written
//     (CheckCreate).
package nsname

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/folio-db/folio/internal/mongoerr"
)

// MaxDBLen is MongoDB's limit on a database name in bytes.
const MaxDBLen = 63

// MaxNamespaceLen is MongoDB's limit on "<db>.<collection>" in bytes.
const MaxNamespaceLen = 255

// ValidDB applies MongoDB's database naming rules on Linux
// (NamespaceString::validDBName; * < > : | ? are refused on Windows only):
// non-empty, valid UTF-8 (Folio's rule), at most 63 bytes, none of / \ .
// space " or NUL, and no $ unless allowDollar (a name a command only looks
// up: DollarInDbNameBehavior::Allow).
func ValidDB(name string, allowDollar bool) bool {
	forbidden := "/\\. \"$\x00"
	if allowDollar {
		forbidden = "/\\. \"\x00"
	}
	return name != "" && len(name) <= MaxDBLen && !strings.ContainsAny(name, forbidden) && utf8.ValidString(name)
}

// printable is a name as a message shows it: invalid UTF-8 replaced, so
// that the reply stays valid BSON.
func printable(name string) string { return strings.ToValidUTF8(name, "\uFFFD") }

// ValidCollection applies MongoDB's collection naming rule
// (NamespaceString::validCollectionName): non-empty, not starting with
// '.', no '$' or NUL.
func ValidCollection(coll string) bool {
	return coll != "" && coll[0] != '.' && !strings.ContainsAny(coll, "$\x00")
}

// CheckDatabaseName is what DatabaseName's constructor refuses of any
// database name: a '.', a NUL, more than 63 bytes.
func CheckDatabaseName(db string) error {
	switch {
	case strings.IndexByte(db, '.') >= 0:
		return mongoerr.New(mongoerr.InvalidNamespace, "'.' is an invalid character in a db name: %s", printable(db))
	case strings.IndexByte(db, 0) >= 0:
		return mongoerr.New(mongoerr.InvalidNamespace, "database names cannot have embedded null characters")
	case len(db) > MaxDBLen:
		return mongoerr.New(mongoerr.InvalidNamespace, "db name must be at most %d characters, found: %d", MaxDBLen, len(db))
	}
	return nil
}

// CheckNamespace is what NamespaceString's constructor refuses of a
// collection name (the database's being CheckDatabaseName's): a leading
// '.', a NUL.
func CheckNamespace(coll string) error {
	switch {
	case strings.HasPrefix(coll, "."):
		return mongoerr.New(mongoerr.InvalidNamespace, "Collection names cannot start with '.': %s", printable(coll))
	case strings.IndexByte(coll, 0) >= 0:
		return mongoerr.New(mongoerr.InvalidNamespace, "namespaces cannot have embedded null characters")
	}
	return nil
}

// CheckSpecified checks the namespace db.coll a command names in its first
// field, as MongoDB's IDL (parseNSCollectionRequired) and
// CommandHelpers::parseNsCollectionRequired do: NamespaceString's
// constructor, then isValid (a valid database, '$' allowed, and a
// collection name).
func CheckSpecified(db, coll string) error {
	if err := CheckNamespace(coll); err != nil {
		return err
	}
	if !ValidDB(db, true) || coll == "" {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.%s'", printable(db), printable(coll))
	}
	return nil
}

// CheckCommandDatabase is the command dispatcher's check of the database
// of a command that names no collection: a valid database name, '$'
// allowed.
func CheckCommandDatabase(db string) error {
	if !ValidDB(db, true) {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid database name: '%s'", printable(db))
	}
	return nil
}

// CheckFullName checks a whole namespace "db.coll" a command names in one
// string (dataSize): NamespaceString's constructors, then the check of the
// collection lock it takes (a valid database and a collection name).
func CheckFullName(ns string) error {
	if strings.IndexByte(ns, 0) >= 0 {
		return mongoerr.New(mongoerr.InvalidNamespace, "namespaces cannot have embedded null characters")
	}
	db, coll, _ := strings.Cut(ns, ".")
	if err := CheckDatabaseName(db); err != nil {
		return err
	}
	if err := CheckNamespace(coll); err != nil {
		return err
	}
	if !ValidDB(db, true) || coll == "" {
		return mongoerr.New(mongoerr.InvalidNamespace, "Namespace %s is not a valid collection name", printable(ns))
	}
	return nil
}

// CheckGetMoreCollection is getMore's check of its collection field
// (validateGetMoreCollectionName).
func CheckGetMoreCollection(coll string) error {
	switch {
	case coll == "":
		return mongoerr.New(mongoerr.InvalidNamespace, "Collection names cannot be empty")
	case coll[0] == '.':
		return mongoerr.New(mongoerr.InvalidNamespace, "Collection names cannot start with '.': %s", printable(coll))
	case strings.IndexByte(coll, 0) >= 0:
		return mongoerr.New(mongoerr.InvalidNamespace, "Collection names cannot have embedded null characters")
	}
	return nil
}

// CheckCreate is userAllowedCreateNS: whether db.coll may be created or
// written. legalSystem says which system.* collections a client may
// create in db. Folio also refuses a collection name of invalid UTF-8.
func CheckCreate(db, coll string, legalSystem func(db, coll string) bool) error {
	if !ValidDB(db, false) || coll == "" {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace: %s.%s", printable(db), printable(coll))
	}
	return CheckCollection(db, coll, legalSystem)
}

// CheckCollection is the collection part of CheckCreate: a valid name
// (not empty or starting with '.', no '$' or NUL, and valid UTF-8), not a
// system collection but those legalSystem allows, the namespace within
// 255 bytes, and no ".system." inside the name.
func CheckCollection(db, coll string, legalSystem func(db, coll string) bool) error {
	// the namespace is made only for an error's message
	ns := func() string { return db + "." + coll }
	switch {
	case !ValidCollection(coll), !utf8.ValidString(coll):
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid collection name: %s", printable(coll))
	case strings.HasPrefix(coll, "system.") && !legalSystem(db, coll):
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid system namespace: %s", printable(ns()))
	case len(db)+1+len(coll) > MaxNamespaceLen:
		return mongoerr.New(mongoerr.InvalidNamespace, "Fully qualified namespace is too long. Namespace: %s Max: %s", printable(ns()), strconv.Itoa(MaxNamespaceLen))
	case strings.Contains(coll, ".system.") && !(db == "config" && strings.HasPrefix(coll, "cache.chunks.")):
		return mongoerr.New(mongoerr.BadValue, "Invalid namespace: %s", printable(ns()))
	}
	return nil
}
