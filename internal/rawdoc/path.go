package rawdoc

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ArrayIndex is the array offset a path component names when it is written
// in canonical decimal form ("0", "12", not "01", "+1" or "-1"), else -1:
// an array's elements are named so, and MongoDB looks positional
// components up by name (isNumericPathComponentStrict).
func ArrayIndex(s string) int {
	if !AllDigits(s) || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// AllDigits reports whether s is a non-empty run of decimal digits: the
// components MongoDB's extractAllElementsAlongPath takes as positions in
// an array rather than as fields of its documents.
func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// AllAlongPath calls add with each value at the dotted path parts of v, as
// MongoDB's extractAllElementsAlongPath finds them for distinct: arrays on
// the way are traversed (their documents' fields, or the element an
// all-digits part names, if it names one), and an array at the end of the
// path gives its elements, not itself.
func AllAlongPath(v bson.RawValue, parts []string, add func(bson.RawValue)) {
	allElementsAlongPath("", v, parts, func(_ string, v bson.RawValue) { add(v) })
}

// AllElementsAlongPath is AllAlongPath giving each value with its name as
// the element MongoDB finds: the path's last part, or, for the elements of
// an array ending the path, their positions.
func AllElementsAlongPath(v bson.RawValue, parts []string, add func(name string, v bson.RawValue)) {
	allElementsAlongPath("", v, parts, add)
}

// allElementsAlongPath walks AllElementsAlongPath's path from v, named name.
func allElementsAlongPath(name string, v bson.RawValue, parts []string, add func(string, bson.RawValue)) {
	if len(parts) == 0 {
		if v.Type != bson.TypeArray {
			add(name, v)
			return
		}
		elems, _ := bson.Raw(v.Value).Elements()
		for _, el := range elems {
			add(el.Key(), el.Value())
		}
		return
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		if child, err := v.Document().LookupErr(parts[0]); err == nil {
			allElementsAlongPath(parts[0], child, parts[1:], add)
		}
	case bson.TypeArray:
		if AllDigits(parts[0]) {
			if i := ArrayIndex(parts[0]); i >= 0 {
				if child, err := v.Array().IndexErr(uint(i)); err == nil {
					allElementsAlongPath(parts[0], child, parts[1:], add)
				}
			}
			return
		}
		elems, _ := v.Array().Values()
		for _, el := range elems {
			if el.Type == bson.TypeEmbeddedDocument {
				allElementsAlongPath(name, el, parts, add)
			}
		}
	}
}

// ElementAtPath is MongoDB's extractElementAtPath: the field of the
// document (or array, whose fields are its positions) obj named path
// itself if there is one, else, splitting path at its first dot, the rest
// of the path within the non-empty document or array the first part
// names. Arrays are not traversed: a part that is not a position finds
// nothing in an array. A zero RawValue (missing) when nothing is found.
func ElementAtPath(obj []byte, path string) bson.RawValue {
	for {
		if v := Lookup(obj, path); v.Type != 0 {
			return v
		}
		first, rest, ok := strings.Cut(path, ".")
		if !ok {
			return bson.RawValue{}
		}
		sub := Lookup(obj, first)
		if sub.Type != bson.TypeEmbeddedDocument && sub.Type != bson.TypeArray || len(sub.Value) <= 5 {
			return bson.RawValue{}
		}
		obj, path = sub.Value, rest
	}
}
