package nsname

import (
	"strings"
	"testing"

	"github.com/folio-db/folio/internal/mongoerr"
)

// check compares err with a code and message; code 0 wants no error.
func check(t *testing.T, what string, err error, code mongoerr.Code, msg string) {
	t.Helper()
	if code == 0 {
		if err != nil {
			t.Errorf("%s: %v, want none", what, err)
		}
		return
	}
	if e := mongoerr.As(err); err == nil || e.Code != code || e.Msg != msg {
		t.Errorf("%s: %v, want %d %q", what, err, code, msg)
	}
}

// TestNamespaceChecks: each of MongoDB 7.0's checks of a namespace with
// its code and text (DatabaseName's and NamespaceString's constructors,
// isValid as the IDL and the dispatcher report it, dataSize's and
// getMore's, userAllowedCreateNS).
func TestNamespaceChecks(t *testing.T) {
	long := strings.Repeat("a", 64)
	legal := func(db, coll string) bool { return coll == "system.views" }
	for _, tc := range []struct {
		what string
		err  error
		code mongoerr.Code
		msg  string
	}{
		{"db of 63 bytes", CheckDatabaseName(long[:63]), 0, ""},
		{"db of 64 bytes", CheckDatabaseName(long), 73, "db name must be at most 63 characters, found: 64"},
		{"db with a dot", CheckDatabaseName("database.test"), 73, "'.' is an invalid character in a db name: database.test"},
		{"db with a dot and too long", CheckDatabaseName(long + ".x"), 73, "'.' is an invalid character in a db name: " + long + ".x"},
		{"db with a NUL", CheckDatabaseName("a\x00b"), 73, "database names cannot have embedded null characters"},
		{"db with a $ (DatabaseName)", CheckDatabaseName("a$b"), 0, ""},

		{"specified", CheckSpecified("db", "coll"), 0, ""},
		{"specified, db with a $", CheckSpecified("name_with_a-$", "c"), 0, ""},
		{"specified, db with a slash", CheckSpecified("/", "c"), 73, "Invalid namespace specified '/.c'"},
		{"specified, db with a backslash", CheckSpecified(`\`, "c"), 73, `Invalid namespace specified '\.c'`},
		{"specified, db with a space", CheckSpecified("data base", "c"), 73, "Invalid namespace specified 'data base.c'"},
		{"specified, db with a quote", CheckSpecified(`a"b`, "c"), 73, `Invalid namespace specified 'a"b.c'`},
		{"specified, empty db", CheckSpecified("", "c"), 73, "Invalid namespace specified '.c'"},
		{"specified, db of invalid UTF-8", CheckSpecified("a\xff", "c"), 73, "Invalid namespace specified 'a\uFFFD.c'"},
		{"specified, empty collection", CheckSpecified("db", ""), 73, "Invalid namespace specified 'db.'"},
		{"specified, collection with a NUL", CheckSpecified("db", "\x00"), 73, "namespaces cannot have embedded null characters"},
		{"specified, collection starting with a dot", CheckSpecified("db", ".collection.."), 73, "Collection names cannot start with '.': .collection.."},
		{"specified, dot before NUL", CheckSpecified("db", ".\x00"), 73, "Collection names cannot start with '.': .\x00"},
		{"specified, collection with a $ (a lookup)", CheckSpecified("db", "a$b"), 0, ""},

		{"command db", CheckCommandDatabase("db"), 0, ""},
		{"command db with a $", CheckCommandDatabase("$external"), 0, ""},
		{"command db with a space", CheckCommandDatabase("a b"), 73, "Invalid database name: 'a b'"},
		{"command db empty", CheckCommandDatabase(""), 73, "Invalid database name: ''"},

		{"full name", CheckFullName("db.coll"), 0, ""},
		{"full name without a collection", CheckFullName("invalid"), 73, "Namespace invalid is not a valid collection name"},
		{"full name with an empty collection", CheckFullName("db."), 73, "Namespace db. is not a valid collection name"},
		{"full name of an invalid db", CheckFullName("a b.c"), 73, "Namespace a b.c is not a valid collection name"},
		{"full name with a NUL", CheckFullName("db.c\x00"), 73, "namespaces cannot have embedded null characters"},
		{"full name of a long db", CheckFullName(long + ".c"), 73, "db name must be at most 63 characters, found: 64"},
		{"full name, collection starting with a dot", CheckFullName("db..c"), 73, "Collection names cannot start with '.': .c"},

		{"getMore collection", CheckGetMoreCollection("c"), 0, ""},
		{"getMore collection empty", CheckGetMoreCollection(""), 73, "Collection names cannot be empty"},
		{"getMore collection starting with a dot", CheckGetMoreCollection(".c"), 73, "Collection names cannot start with '.': .c"},
		{"getMore collection with a NUL", CheckGetMoreCollection("a\x00"), 73, "Collection names cannot have embedded null characters"},

		{"create", CheckCreate("db", "c", legal), 0, ""},
		{"create in a db with a $", CheckCreate("name_with_a-$", "c", legal), 73, "Invalid namespace: name_with_a-$.c"},
		{"create an empty collection", CheckCreate("db", "", legal), 73, "Invalid namespace: db."},
		{"create a collection with a $", CheckCreate("db", "a$b", legal), 73, "Invalid collection name: a$b"},
		{"create a collection of invalid UTF-8", CheckCreate("db", "\xff\xfe\xfd", legal), 73, "Invalid collection name: \uFFFD"},
		{"create a system collection", CheckCreate("db", "system.foo", legal), 73, "Invalid system namespace: db.system.foo"},
		{"create a legal system collection", CheckCreate("db", "system.views", legal), 0, ""},
		{"create a namespace too long", CheckCreate("db", strings.Repeat("c", 253), legal), 73,
			"Fully qualified namespace is too long. Namespace: db." + strings.Repeat("c", 253) + " Max: 255"},
		{"create a namespace of 255 bytes", CheckCreate("db", strings.Repeat("c", 252), legal), 0, ""},
		{"create a collection holding .system.", CheckCreate("db", "a.system.b", legal), 2, "Invalid namespace: db.a.system.b"},
		{"create a chunk cache of a system collection", CheckCreate("config", "cache.chunks.config.system.sessions", legal), 0, ""},
	} {
		check(t, tc.what, tc.err, tc.code, tc.msg)
	}
}

// TestValidDB: MongoDB's validDBName on Linux, and Folio's UTF-8 rule.
func TestValidDB(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allowDollar bool
		want        bool
	}{
		{"db", false, true},
		{"stats-2011", false, true},
		{"データベース", false, true},
		{"a$b", false, false},
		{"a$b", true, true},
		{"", true, false},
		{strings.Repeat("a", 63), false, true},
		{strings.Repeat("a", 64), true, false},
		{"a.b", true, false},
		{"a b", true, false},
		{"a/b", true, false},
		{`a\b`, true, false},
		{`a"b`, true, false},
		{"a\x00b", true, false},
		{"a\xffb", true, false},
	} {
		if got := ValidDB(tc.name, tc.allowDollar); got != tc.want {
			t.Errorf("ValidDB(%q, %v) = %v, want %v", tc.name, tc.allowDollar, got, tc.want)
		}
	}
}
