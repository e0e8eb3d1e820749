package aggregate

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// moveMatches brings each $match of a pipeline as near its start as
// MongoDB's optimizer does, so that the collection's scan takes what it can
// (TakePushdown) and fewer documents reach the stages before it: two
// adjacent $match stages become one {$and: [first, second]}
// (DocumentSourceMatch::doOptimizeAt), a $match goes before a $sort that
// keeps every document (DocumentSourceSort), and the conditions of a
// $match that read no field a $project, $addFields, $set, $unset, $unwind
// or $lookup writes, or only fields a projection renames ({z: "$a"}: on
// a, there), go before that stage (splitSourceBy), the others staying
// after it. specs are the stages' documents, which explain shows:
// they follow.
func (p *parser) moveMatches(stages []stage, specs []bson.Raw) ([]stage, []bson.Raw, error) {
	movedAny := false
	for moved := true; moved; {
		moved = false
		for i := 1; i < len(stages); i++ {
			m, ok := stages[i].(*matchStage)
			if !ok || m.written == nil {
				continue
			}
			prev, width := stages[i-1], 1
			if _, ok := prev.(absorbedStage); ok {
				// a $lookup and the $unwind of its as field it runs
				if i < 2 {
					continue
				}
				prev, width = stages[i-2], 2
			}
			var before, after bson.Raw
			switch pv := prev.(type) {
			case *matchStage:
				if pv.written == nil {
					continue
				}
				before = andFilter([]bson.Raw{pv.written, m.written})
			case *sortStage:
				if pv.limit != 0 {
					continue
				}
				before = m.written
			default:
				from := pathsBefore(prev)
				if from == nil {
					continue
				}
				if before, after = splitMatch(m.written, from, p.scope); before == nil {
					continue
				}
			}
			first, firstSpec, err := p.matchOf(before)
			if err != nil {
				return nil, nil, err
			}
			if _, coalesced := prev.(*matchStage); coalesced {
				stages[i-1], specs[i-1] = first, firstSpec
				stages, specs = slices.Delete(stages, i, i+1), slices.Delete(specs, i, i+1)
			} else {
				var rest []stage
				var restSpecs []bson.Raw
				if after != nil {
					m, spec, err := p.matchOf(after)
					if err != nil {
						return nil, nil, err
					}
					rest, restSpecs = []stage{m}, []bson.Raw{spec}
				}
				at := i - width
				stages = slices.Concat(stages[:at], []stage{first}, stages[at:i], rest, stages[i+1:])
				specs = slices.Concat(specs[:at], []bson.Raw{firstSpec}, specs[at:i], restSpecs, specs[i+1:])
			}
			moved = true
			movedAny = true
		}
	}
	if movedAny {
		// A $limit that a moved $match kept from its $sort reaches it
		// now, as MongoDB's optimizer, running until nothing changes,
		// lets DocumentSourceSort absorb it after the swap.
		for i, st := range stages {
			if l, ok := st.(*limitStage); ok {
				limitSort(stages[:i], specs[:i], l.n)
			}
		}
	}
	return stages, specs, nil
}

// subPipeline parses the pipeline of a $lookup or $unionWith, its $match
// stages moved as moveMatches moves them (MongoDB optimizes the pipeline
// it builds for each read), so that the read of the foreign collection
// takes them. Explain shows the stages as written.
func (p *parser) subPipeline(docs []bson.Raw) ([]stage, error) {
	stages, err := p.pipeline(docs)
	if err != nil {
		return nil, err
	}
	stages, _, err = p.moveMatches(stages, slices.Clone(docs))
	return stages, err
}

// matchOf is the $match stage of filter, and its document.
func (p *parser) matchOf(filter bson.Raw) (*matchStage, bson.Raw, error) {
	s, err := p.parseMatch(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: filter})
	if err != nil {
		return nil, nil, err
	}
	return s.(*matchStage), elementDoc("$match", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: filter}), nil
}

// andFilter is {$and: filters}.
func andFilter(filters []bson.Raw) bson.Raw {
	arr := bsoncore.NewArrayBuilder()
	for _, f := range filters {
		arr.AppendDocument(f)
	}
	return elementDoc("$and", bson.RawValue{Type: bson.TypeArray, Value: arr.Build()})
}

// splitMatch splits filter's conjuncts (its fields, and the clauses of a
// top-level $and) into those reading only paths that from finds before
// the stage, written on those paths, before, and the others as they are,
// after (nil: none). scope is the pipeline's, where an $expr compiles.
func splitMatch(filter bson.Raw, from func([]string) ([]string, bool), scope *expr.Scope) (before, after bson.Raw) {
	var in, out []bson.Raw
	elems, _ := filter.Elements()
	for _, el := range elems {
		if el.Key() == "$and" {
			for _, c := range arrayValues(el.Value()) {
				// (each clause is a document: the stage parsed)
				if moved, ok := movedFilter(c.Document(), from, scope); ok {
					in = append(in, moved)
				} else {
					out = append(out, c.Document())
				}
			}
			continue
		}
		doc := elementDoc(el.Key(), el.Value())
		if moved, ok := movedFilter(doc, from, scope); ok {
			in = append(in, moved)
		} else {
			out = append(out, doc)
		}
	}
	return joined(in), joined(out)
}

// elementDoc is the document {key: v}.
func elementDoc(key string, v bson.RawValue) bson.Raw {
	start, doc := bsoncore.AppendDocumentStart(nil)
	doc = rawdoc.AppendElement(doc, key, v)
	doc, _ = bsoncore.AppendDocumentEnd(doc, start)
	return doc
}

// joined is the conjunction of docs: one of them alone, several merged
// into one document when their keys differ, else their $and; nil for none.
func joined(docs []bson.Raw) bson.Raw {
	switch len(docs) {
	case 0:
		return nil
	case 1:
		return docs[0]
	}
	seen := map[string]bool{}
	start, out := bsoncore.AppendDocumentStart(nil)
	for _, d := range docs {
		for _, el := range rawElements(d) {
			if seen[el.Key()] {
				return andFilter(docs)
			}
			seen[el.Key()] = true
			out = rawdoc.AppendElement(out, el.Key(), el.Value())
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// rawElements are d's elements (none for an invalid document).
func rawElements(d bson.Raw) []bson.RawElement {
	elems, _ := d.Elements()
	return elems
}

// movedFilter is filter as it reads before a stage: every path of its
// conditions (a field's, or those of the clauses of $and, $or and $nor)
// replaced by the path from finds for it; false when from finds none for
// one, or any other operator heads a clause, which pins it, but an $expr
// whose expression reads only top-level fields from finds unchanged
// (MongoDB's splitSourceBy reads an expression's dependencies too; one
// reading $$ROOT or $$CURRENT whole stays). Conditions that come to name
// one path are kept apart in an $and.
func movedFilter(filter bson.Raw, from func([]string) ([]string, bool), scope *expr.Scope) (bson.Raw, bool) {
	var docs []bson.Raw
	for _, el := range rawElements(filter) {
		switch key := el.Key(); {
		case key == "$and" || key == "$or" || key == "$nor":
			if el.Value().Type != bson.TypeArray {
				return nil, false
			}
			arr := bsoncore.NewArrayBuilder()
			for _, c := range arrayValues(el.Value()) {
				if c.Type != bson.TypeEmbeddedDocument {
					return nil, false
				}
				moved, ok := movedFilter(c.Document(), from, scope)
				if !ok {
					return nil, false
				}
				arr.AppendDocument(moved)
			}
			docs = append(docs, elementDoc(key, bson.RawValue{Type: bson.TypeArray, Value: arr.Build()}))
		case key == "$expr":
			if !readsKept(el.Value(), from, scope) {
				return nil, false
			}
			docs = append(docs, elementDoc(key, el.Value()))
		case strings.HasPrefix(key, "$"):
			return nil, false
		default:
			path, ok := from(strings.Split(key, "."))
			if !ok {
				return nil, false
			}
			docs = append(docs, elementDoc(strings.Join(path, "."), el.Value()))
		}
	}
	if len(docs) == 0 {
		return filter, true
	}
	return joined(docs), true
}

// readsKept reports whether the expression v reads only top-level fields
// that from finds unchanged, on themselves, before the stage.
func readsKept(v bson.RawValue, from func([]string) ([]string, bool), scope *expr.Scope) bool {
	fields, whole, err := expr.ReadFields(v, scope)
	if err != nil || whole {
		return false
	}
	for _, f := range fields {
		if path, ok := from([]string{f}); !ok || len(path) != 1 || path[0] != f {
			return false
		}
	}
	return true
}

// pathsBefore is, for a stage that passes each document on with some
// fields written ($project, $addFields, $set, $unset, $unwind, $lookup),
// the path whose values before the stage a path holds after it: the path
// itself where the stage leaves it alone, or the source of a field a
// projection renames; false where the stage writes it. nil for any other
// stage.
func pathsBefore(s stage) func([]string) ([]string, bool) {
	same := func(keeps func([]string) bool) func([]string) ([]string, bool) {
		return func(path []string) ([]string, bool) { return path, keeps(path) }
	}
	switch s := s.(type) {
	case *projectStage:
		return s.proj.before
	case *unwindStage:
		return same(func(path []string) bool { return !sameField(path, s.path) && !sameField(path, s.index) })
	case *lookupStage:
		return same(func(path []string) bool {
			return !sameField(path, s.as) && (s.unwind == nil || !sameField(path, s.unwind.index))
		})
	}
	return nil
}

// sameField reports whether paths a and b start in the same top-level
// field: setting b (as $lookup's as, $unwind's path and
// includeArrayIndex set theirs, MongoDB's setNestedField) replaces a value
// along it that is not a document, an array included, and so may change
// any path below it. An empty b is no path.
func sameField(a, b []string) bool {
	return len(b) > 0 && a[0] == b[0]
}

// before is pathsBefore of the projection: a path of a top-level field
// an inclusion keeps whole (or _id, kept unless excluded), or that an
// exclusion or $addFields does not name, holds the values it held; one
// below a top-level field computed as a bare path of a top-level field of
// the document ({z: "$a"} or {z: "$$CURRENT.a"}), a rename, those of the
// same path below that field, as MongoDB's DocumentSourceMatch swaps a
// $match past a rename (splitSourceBy's renames). A field the projection
// reaches into is not kept: on an array, $addFields {"a.b": 1} turns
// scalar elements into documents and an inclusion of a.b drops them,
// which changes what a.c matches; nor is a dotted source a rename: "$a.b"
// on an array of arrays gives nested arrays that a.b does not match.
func (pr *projection) before(path []string) ([]string, bool) {
	item := pr.root.items[path[0]]
	switch {
	case item == nil:
		return path, pr.mode != inclusion || path[0] == "_id"
	case item.expr != nil:
		src, ok := item.expr.FieldPath()
		if !ok || strings.Contains(src, ".") {
			return nil, false
		}
		return append([]string{src}, path[1:]...), true
	case pr.mode == inclusion:
		return path, item.include
	}
	return nil, false
}
