package update

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// UpsertSeed builds the document an upsert starts from, as MongoDB's
// extractEqualityMatches and addEqualitiesToDoc: the query's equality
// conditions, top level and inside $and or an $or of one clause (which
// MongoDB's optimizer makes its clause), become fields; a dotted path creates
// subdocuments. {f: v}, {f: {$eq: v}} and {f: {$in: [v]}} are equalities;
// $ne, ranges, regexes and multi-value $in are not. Paths are created in
// sorted order, _id first. Two equalities on one path, or on a path and its
// prefix, are NotSingleValueField errors.
func UpsertSeed(filter bson.Raw) (bson.Raw, error) {
	eq := map[string]bson.RawValue{}
	if err := collectEqualities(filter, eq); err != nil {
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

func collectEqualities(filter bson.Raw, eq map[string]bson.RawValue) error {
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
					if err := collectEqualities(d, eq); err != nil {
						return err
					}
				}
			}
			continue
		}
		if strings.HasPrefix(k, "$") {
			continue
		}
		val, ok := equalityValue(v)
		if !ok {
			continue
		}
		if err := addEquality(eq, k, val); err != nil {
			return err
		}
	}
	return nil
}

// equalityValue extracts the value a field condition requires equality with.
func equalityValue(v bson.RawValue) (bson.RawValue, bool) {
	switch v.Type {
	case bson.TypeRegex:
		return bson.RawValue{}, false
	case bson.TypeEmbeddedDocument:
		first, err := v.Document().IndexErr(0)
		if err != nil || !isOperatorName(first.Key()) {
			return v, true
		}
		if eqv, err := v.Document().LookupErr("$eq"); err == nil {
			return eqv, eqv.Type != bson.TypeRegex
		}
		if in, err := v.Document().LookupErr("$in"); err == nil {
			if arr, ok := in.ArrayOK(); ok {
				vals, _ := arr.Values()
				if len(vals) == 1 && vals[0].Type != bson.TypeRegex {
					return vals[0], true
				}
			}
		}
		return bson.RawValue{}, false
	}
	return v, true
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
