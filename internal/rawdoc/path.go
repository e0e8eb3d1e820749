package rawdoc

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// AllAlongPath calls add with each value at the dotted path parts of v, as
// MongoDB's extractAllElementsAlongPath finds them for distinct: arrays on
// the way are traversed (their documents' fields, or the element a numeric
// part names), and an array at the end of the path gives its elements,
// not itself.
func AllAlongPath(v bson.RawValue, parts []string, add func(bson.RawValue)) {
	if len(parts) == 0 {
		if v.Type != bson.TypeArray {
			add(v)
			return
		}
		elems, _ := v.Array().Values()
		for _, el := range elems {
			add(el)
		}
		return
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		if child, err := v.Document().LookupErr(parts[0]); err == nil {
			AllAlongPath(child, parts[1:], add)
		}
	case bson.TypeArray:
		if i, err := strconv.Atoi(parts[0]); err == nil {
			if child, err := v.Array().IndexErr(uint(i)); err == nil {
				AllAlongPath(child, parts[1:], add)
			}
			return
		}
		elems, _ := v.Array().Values()
		for _, el := range elems {
			if el.Type == bson.TypeEmbeddedDocument {
				AllAlongPath(el, parts, add)
			}
		}
	}
}
