package update

import (
	"bytes"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// testMatcher is a small query matcher for the tests, so that they do not
// depend on the query package: field paths (descending into arrays), literal
// equality (an array field matches when an element is equal), $eq $ne $gt
// $gte $lt $lte $in $elemMatch, $and, $or and $nor. Any filter mentioning
// $bad fails to compile.
type testMatcher struct{ filter bson.Raw }

func compileQuery(filter bson.Raw) (Matcher, error) {
	if bytes.Contains(filter, []byte("$bad")) {
		return nil, mongoerr.New(mongoerr.BadValue, "unknown operator: $bad")
	}
	return testMatcher{filter}, nil
}

func (m testMatcher) Match(doc bson.Raw) bool { return matchDoc(m.filter, doc) }

func matchDoc(filter, doc bson.Raw) bool {
	elems, _ := filter.Elements()
	for _, e := range elems {
		switch e.Key() {
		case "$and", "$or", "$nor":
			subs, _ := e.Value().Array().Values()
			matched := 0
			for _, s := range subs {
				if matchDoc(s.Document(), doc) {
					matched++
				}
			}
			if e.Key() == "$and" && matched != len(subs) || e.Key() == "$or" && matched == 0 || e.Key() == "$nor" && matched > 0 {
				return false
			}
			continue
		}
		cands := resolve(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, strings.Split(e.Key(), "."))
		if !matchCond(e.Value(), cands) {
			return false
		}
	}
	return true
}

// resolve returns the values at path, descending into array elements.
func resolve(v bson.RawValue, path []string) []bson.RawValue {
	if len(path) == 0 {
		return []bson.RawValue{v}
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		next, err := v.Document().LookupErr(path[0])
		if err != nil {
			return nil
		}
		return resolve(next, path[1:])
	case bson.TypeArray:
		if _, ok := arrayIndex(path[0]); ok {
			next, err := bson.Raw(v.Value).LookupErr(path[0])
			if err != nil {
				return nil
			}
			return resolve(next, path[1:])
		}
		var out []bson.RawValue
		vals, _ := v.Array().Values()
		for _, e := range vals {
			out = append(out, resolve(e, path)...)
		}
		return out
	}
	return nil
}

// expand adds the elements of array candidates, as query equality does.
func expand(cands []bson.RawValue) []bson.RawValue {
	out := cands
	for _, c := range cands {
		if c.Type == bson.TypeArray {
			vals, _ := c.Array().Values()
			out = append(out, vals...)
		}
	}
	return out
}

func matchCond(cond bson.RawValue, cands []bson.RawValue) bool {
	d, ok := cond.DocumentOK()
	first, err := d.IndexErr(0)
	if cond.Type == bson.TypeRegex {
		pattern, options := cond.Regex()
		if strings.Contains(options, "i") {
			pattern = "(?i)" + pattern
		}
		re := regexp.MustCompile(pattern)
		return anyOf(expand(cands), func(c bson.RawValue) bool {
			s, isString := c.StringValueOK()
			return isString && re.MatchString(s) || values.Equal(c, cond)
		})
	}
	if !ok || err != nil || !strings.HasPrefix(first.Key(), "$") {
		return anyOf(expand(cands), func(c bson.RawValue) bool { return values.Equal(c, cond) })
	}
	ops, _ := d.Elements()
	for _, op := range ops {
		v := op.Value()
		var ok bool
		switch op.Key() {
		case "$eq":
			ok = anyOf(expand(cands), func(c bson.RawValue) bool { return values.Equal(c, v) })
		case "$ne":
			ok = !anyOf(expand(cands), func(c bson.RawValue) bool { return values.Equal(c, v) })
		case "$gt", "$gte", "$lt", "$lte":
			ok = anyOf(expand(cands), func(c bson.RawValue) bool {
				if values.Rank(c.Type) != values.Rank(v.Type) {
					return false
				}
				r := values.Compare(c, v)
				switch op.Key() {
				case "$gt":
					return r > 0
				case "$gte":
					return r >= 0
				case "$lt":
					return r < 0
				}
				return r <= 0
			})
		case "$in":
			list := arrayValues(v)
			ok = anyOf(expand(cands), func(c bson.RawValue) bool { return containsValue(nil, list, c) })
		case "$elemMatch":
			ok = anyOf(cands, func(c bson.RawValue) bool {
				if c.Type != bson.TypeArray {
					return false
				}
				return anyOf(arrayValues(c), func(e bson.RawValue) bool {
					if sub, isDoc := v.Document().IndexErr(0); isDoc == nil && strings.HasPrefix(sub.Key(), "$") {
						return matchCond(v, []bson.RawValue{e})
					}
					return e.Type == bson.TypeEmbeddedDocument && matchDoc(v.Document(), e.Document())
				})
			})
		}
		if !ok {
			return false
		}
	}
	return true
}

func anyOf(vals []bson.RawValue, f func(bson.RawValue) bool) bool {
	for _, v := range vals {
		if f(v) {
			return true
		}
	}
	return false
}
