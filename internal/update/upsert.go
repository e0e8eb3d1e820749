package update

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// UpsertSeed builds the document an upsert starts from, as MongoDB's
// populateDocumentWithQueryFields: the query's equality conditions, top
// level and inside $and or an $or of one clause (which MongoDB's optimizer
// makes its clause), become fields; a dotted path creates subdocuments.
// {f: v}, {f: {$eq: v}} (a regex too), {f: {$in: [v]}} (or [v, v]: the
// optimizer dedupes an $in's values) and each element of
// {f: {$all: [...]}} are equalities; $ne, ranges, a regex literal, a regex
// or several values in $in are not. Paths are created in sorted order, _id
// first. Two equalities on one path, or on a path and its prefix, are
// NotSingleValueField errors. A replacement (replacement set) takes the
// _id alone (extractFullEqualityMatches on the immutable path): other paths
// are ignored, and a condition on a path inside _id is a NotExactValueField
// error.
func UpsertSeed(filter bson.Raw, replacement bool) (bson.Raw, error) {
	eq := map[string]bson.RawValue{}
	if err := collectEqualities(filter, eq, replacement); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(eq))
	for p := range eq {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool {
		ii, ij := paths[i] == "_id" || strings.HasPrefix(paths[i], "_id."), paths[j] == "_id" || strings.HasPrefix(paths[j], "_id.")
		if ii != ij {
			return ii
		}
		return paths[i] < paths[j]
	})
	root := emptyDoc()
	for _, p := range paths {
		cur := root
		parts := strings.Split(p, ".")
		for _, part := range parts[:len(parts)-1] {
			child := cur.lookup(part)
			if child == nil {
				child = emptyDoc()
				cur.fields = append(cur.fields, field{name: part, val: child})
			}
			cur = child
		}
		cur.fields = append(cur.fields, field{name: parts[len(parts)-1], val: rawNode(eq[p])})
	}
	return bson.Raw(root.appendValue(nil)), nil
}

func collectEqualities(filter bson.Raw, eq map[string]bson.RawValue, replacement bool) error {
	elems, err := filter.Elements()
	if err != nil {
		return mongoerr.New(mongoerr.BadValue, "invalid query: %v", err)
	}
	for _, e := range elems {
		k, v := e.Key(), e.Value()
		if k == "$and" || k == "$or" {
			arr, ok := v.ArrayOK()
			if !ok {
				continue
			}
			subs, _ := arr.Values()
			if k == "$or" && len(subs) != 1 {
				continue
			}
			for _, sub := range subs {
				if d, ok := sub.DocumentOK(); ok {
					if err := collectEqualities(d, eq, replacement); err != nil {
						return err
					}
				}
			}
			continue
		}
		if strings.HasPrefix(k, "$") {
			continue
		}
		for _, val := range equalityValues(v) {
			if replacement && k != "_id" {
				if strings.HasPrefix(k, "_id.") {
					// MongoDB's message, without a space before "found"
					return mongoerr.New(mongoerr.NotExactValueField,
						"field at '_id' must be exactly specified, field at sub-path '%s'found", k)
				}
				continue
			}
			if err := addEquality(eq, k, val); err != nil {
				return err
			}
		}
	}
	return nil
}

// equalityValues are the values a field condition v requires equality
// with, one per equality the condition parses into.
func equalityValues(v bson.RawValue) []bson.RawValue {
	switch v.Type {
	case bson.TypeRegex:
		return nil
	case bson.TypeEmbeddedDocument:
		first, err := v.Document().IndexErr(0)
		if err != nil || !isOperatorName(first.Key()) {
			return []bson.RawValue{v}
		}
	default:
		return []bson.RawValue{v}
	}
	elems, _ := v.Document().Elements()
	var vals []bson.RawValue
	for _, e := range elems {
		switch e.Key() {
		case "$eq":
			vals = append(vals, e.Value())
		case "$in":
			if v, ok := soleInValue(e.Value()); ok {
				vals = append(vals, v)
			}
		case "$all":
			// {$all: [a, b]} is {$and: [{$eq: a}, {$eq: b}]}, unless its
			// elements are $elemMatch conditions
			if arr, ok := e.Value().ArrayOK(); ok {
				all, _ := arr.Values()
				for _, a := range all {
					if d, ok := a.DocumentOK(); ok {
						if f, err := d.IndexErr(0); err == nil && f.Key() == "$elemMatch" {
							return vals
						}
					}
					if a.Type != bson.TypeRegex {
						vals = append(vals, a)
					}
				}
			}
		}
	}
	return vals
}

// soleInValue is the one value an $in list holds once its duplicates are
// gone, as MongoDB's optimizer makes an $in whose set of equalities has one
// member and which has no regex an equality ({$in: [5, 5]} is {$eq: 5}).
func soleInValue(list bson.RawValue) (bson.RawValue, bool) {
	arr, ok := list.ArrayOK()
	if !ok {
		return bson.RawValue{}, false
	}
	in, _ := arr.Values()
	if len(in) == 0 {
		return bson.RawValue{}, false
	}
	for _, v := range in {
		if v.Type == bson.TypeRegex || !values.Equal(v, in[0]) {
			return bson.RawValue{}, false
		}
	}
	return in[0], true
}

func addEquality(eq map[string]bson.RawValue, path string, v bson.RawValue) error {
	if _, dup := eq[path]; dup {
		return mongoerr.New(mongoerr.NotSingleValueField,
			"cannot infer query fields to set, path '%s' is matched twice", path)
	}
	for p := range eq {
		short, long := p, path
		if len(short) > len(long) {
			short, long = long, short
		}
		if strings.HasPrefix(long, short+".") {
			return mongoerr.New(mongoerr.NotSingleValueField,
				"cannot infer query fields to set, both paths '%s' and '%s' are matched", long, short)
		}
	}
	eq[path] = v
	return nil
}
