package update

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
)

// arrayFilterContext starts the messages of an array filter's parse and
// identifier errors, as parsedUpdateArrayFilters adds it.
const arrayFilterContext = "Error parsing array filter"

// compileArrayFilters parses arrayFilters: each filter is a query on exactly
// one identifier (the first component of its field paths), a lowercase
// letter followed by letters and digits, and identifiers are unique.
func compileArrayFilters(opts Options) (map[string]Matcher, error) {
	filters := map[string]Matcher{}
	for _, f := range opts.ArrayFilters {
		if opts.Compile == nil {
			return nil, mongoerr.New(mongoerr.NotImplemented, "arrayFilters require a query compiler")
		}
		// the filter parses first, as MongoDB's parsedUpdateArrayFilters
		// does: its errors come before those of its identifier
		m, err := opts.Compile(f)
		if err != nil {
			return nil, mongoerr.AddContext(err, arrayFilterContext)
		}
		id, err := filterID(f)
		if err != nil {
			return nil, err
		}
		if _, dup := filters[id]; dup {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"Found multiple array filters with the same top-level field name %s", id)
		}
		filters[id] = m
	}
	return filters, nil
}

// filterID finds the single identifier a filter is written on, looking
// through $and, $or and $nor.
func filterID(f bson.Raw) (string, error) {
	ids := map[string]bool{}
	var order []string
	var collect func(d bson.Raw)
	collect = func(d bson.Raw) {
		elems, _ := d.Elements()
		for _, e := range elems {
			k := e.Key()
			if strings.HasPrefix(k, "$") {
				if arr, ok := e.Value().ArrayOK(); ok {
					vals, _ := arr.Values()
					for _, v := range vals {
						if sub, ok := v.DocumentOK(); ok {
							collect(sub)
						}
					}
				}
				continue
			}
			id, _, _ := strings.Cut(k, ".")
			if !ids[id] {
				ids[id] = true
				order = append(order, id)
			}
		}
	}
	collect(f)
	switch {
	case len(order) == 0:
		return "", mongoerr.New(mongoerr.FailedToParse,
			"Cannot use an expression without a top-level field name in arrayFilters")
	case len(order) > 1:
		return "", mongoerr.AddContext(mongoerr.New(mongoerr.FailedToParse,
			"Expected a single top-level field name, found '%s' and '%s'", order[0], order[1]), arrayFilterContext)
	}
	id := order[0]
	if !validIdentifier(id) {
		return "", mongoerr.AddContext(mongoerr.New(mongoerr.BadValue,
			"The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '%s'",
			id), arrayFilterContext)
	}
	return id, nil
}

func validIdentifier(id string) bool {
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// matchFilter reports whether the array element n satisfies the filter of
// identifier id: the filter is matched against {id: element}.
func (c *applyCtx) matchFilter(id string, n *node) bool {
	return c.u.filters[id].Match(wrap(id, n.value()))
}

// wrap builds the document {name: v}.
func wrap(name string, v bson.RawValue) bson.Raw {
	idx, doc := bsoncore.AppendDocumentStart(nil)
	doc = bsoncore.AppendHeader(doc, bsoncore.Type(v.Type), name)
	doc = append(doc, v.Value...)
	doc, _ = bsoncore.AppendDocumentEnd(doc, idx)
	return doc
}
