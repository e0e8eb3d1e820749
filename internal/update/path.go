package update

import (
	"strings"

	"github.com/folio-db/folio/internal/mongoerr"
)

// isPositional reports whether a path component is the positional operator $.
func isPositional(part string) bool { return part == "$" }

// filterIdentifier reports whether a path component is $[] or
// $[<identifier>] and returns the identifier ("" for $[]).
func filterIdentifier(part string) (string, bool) {
	if len(part) >= 3 && strings.HasPrefix(part, "$[") && part[len(part)-1] == ']' {
		return part[2 : len(part)-1], true
	}
	return "", false
}

// parsePath splits an update path and applies MongoDB's checks
// (fieldchecker::isUpdatable and UpdateObjectNode::parseAndMerge): no empty
// components, at most one positional $ and not first, no array filter first,
// and every identifier defined in arrayFilters. Identifiers found are added
// to used.
func parsePath(path string, filters map[string]Matcher, used map[string]bool) ([]string, error) {
	if path == "" {
		return nil, mongoerr.New(mongoerr.EmptyFieldName, "An empty update path is not valid.")
	}
	parts := strings.Split(path, ".")
	positional := 0
	for i, p := range parts {
		if p == "" {
			return nil, mongoerr.New(mongoerr.EmptyFieldName,
				"The update path '%s' contains an empty field name, which is not allowed.", path)
		}
		if isPositional(p) {
			positional++
			if i == 0 {
				return nil, mongoerr.New(mongoerr.BadValue,
					"Cannot have positional (i.e. '$') element in the first position in path '%s'", path)
			}
		}
		id, ok := filterIdentifier(p)
		if !ok {
			continue
		}
		if i == 0 {
			return nil, mongoerr.New(mongoerr.BadValue,
				"Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '%s'", path)
		}
		if id != "" {
			if _, ok := filters[id]; !ok {
				return nil, mongoerr.New(mongoerr.BadValue,
					"No array filter found for identifier '%s' in path '%s'", id, path)
			}
			used[id] = true
		}
	}
	if positional > 1 {
		return nil, mongoerr.New(mongoerr.BadValue,
			"Too many positional (i.e. '$') elements found in path '%s'", path)
	}
	return parts, nil
}

// isDynamic reports whether a path has a positional or array filter part.
func isDynamic(parts []string) bool {
	for _, p := range parts {
		if _, ok := filterIdentifier(p); ok || isPositional(p) {
			return true
		}
	}
	return false
}

// lessField orders sibling fields the way MongoDB 5.0+ applies updates:
// numeric names in numeric order, other names in lexicographic order.
func lessField(a, b string) bool {
	ia, okA := digits(a)
	ib, okB := digits(b)
	if okA && okB && ia != ib {
		return len(ia) < len(ib) || (len(ia) == len(ib) && ia < ib)
	}
	return a < b
}

// digits reports whether s is all decimal digits and returns it without
// leading zeros.
func digits(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	t := strings.TrimLeft(s, "0")
	if t == "" {
		t = "0"
	}
	return t, true
}
