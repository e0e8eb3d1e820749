// Package nsname holds MongoDB's rules for database names, shared by the
// engine, which refuses to create what breaks them, and the stages that
// name a target database ($merge).
package nsname

import (
	"strings"
	"unicode/utf8"
)

// MaxDBLen is MongoDB's limit on a database name in bytes.
const MaxDBLen = 63

// ValidDB applies MongoDB's database naming rules on Linux
// (NamespaceString::validDBName; * < > : | ? are refused on Windows only):
// non-empty, valid UTF-8, at most 63 bytes, none of / \ . space " or NUL,
// and no $ unless allowDollar (a name a command only looks up:
// DollarInDbNameBehavior::Allow).
func ValidDB(name string, allowDollar bool) bool {
	forbidden := "/\\. \"$\x00"
	if allowDollar {
		forbidden = "/\\. \"\x00"
	}
	return name != "" && len(name) <= MaxDBLen && !strings.ContainsAny(name, forbidden) && utf8.ValidString(name)
}
