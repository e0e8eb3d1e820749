package update

import (
	"slices"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// parseFunc builds the leaf of one operator for one path; o gives the
// query compiler and the collation.
type parseFunc func(path string, v bson.RawValue, o *Options) (leaf, error)

// operators is MongoDB's modifier table ($rename is handled by
// compileRename because it occupies two paths).
var operators = map[string]parseFunc{
	"$set": func(_ string, v bson.RawValue, _ *Options) (leaf, error) { return setOp{val: v}, nil },
	"$setOnInsert": func(_ string, v bson.RawValue, _ *Options) (leaf, error) {
		return setOp{val: v, onInsert: true}, nil
	},
	"$unset": func(string, bson.RawValue, *Options) (leaf, error) { return unsetOp{}, nil },
	"$inc":   func(p string, v bson.RawValue, _ *Options) (leaf, error) { return parseArith(p, v, false) },
	"$mul":   func(p string, v bson.RawValue, _ *Options) (leaf, error) { return parseArith(p, v, true) },
	"$min": func(_ string, v bson.RawValue, o *Options) (leaf, error) {
		return compareOp{val: v, want: -1, coll: o.Collator}, nil
	},
	"$max": func(_ string, v bson.RawValue, o *Options) (leaf, error) {
		return compareOp{val: v, want: 1, coll: o.Collator}, nil
	},
	"$currentDate": func(_ string, v bson.RawValue, _ *Options) (leaf, error) { return parseCurrentDate(v) },
	"$push":        func(_ string, v bson.RawValue, o *Options) (leaf, error) { return parsePush(v, o.Collator) },
	"$addToSet":    func(_ string, v bson.RawValue, o *Options) (leaf, error) { return parseAddToSet(v, o.Collator) },
	"$pop":         func(p string, v bson.RawValue, _ *Options) (leaf, error) { return parsePop(p, v) },
	"$pull":        func(_ string, v bson.RawValue, o *Options) (leaf, error) { return parsePull(v, o) },
	"$pullAll":     func(_ string, v bson.RawValue, o *Options) (leaf, error) { return parsePullAll(v, o.Collator) },
	"$bit":         func(p string, v bson.RawValue, _ *Options) (leaf, error) { return parseBit(p, v) },
}

// compileOperators builds the update tree of an operator update. Every
// top-level field must be a known modifier whose argument is a document of
// path: argument pairs (possibly empty); every array filter must be used.
func compileOperators(spec bson.Raw, filters map[string]Matcher, opts *Options) (*Update, error) {
	u := &Update{root: &tnode{}, filters: filters, clock: opts.Clock}
	used := map[string]bool{}
	elems, _ := spec.Elements()
	for _, e := range elems {
		op := e.Key()
		parse, known := operators[op]
		if !known && op != "$rename" {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"Unknown modifier: %s. Expected a valid update modifier or pipeline-style update specified as an array", op)
		}
		args, ok := e.Value().DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"Modifiers operate on fields but we found type %s instead. For example: {$mod: {<field>: ...}} not {%s: %s}",
				values.TypeName(e.Value().Type), op, values.Shell(e.Value()))
		}
		// An empty operand ({$set: {}}) is a no-op since MongoDB 5.0.
		fields, _ := args.Elements()
		for _, f := range fields {
			var err error
			if op == "$rename" {
				err = u.compileRename(f.Key(), f.Value(), used)
			} else {
				err = u.compileField(f.Key(), f.Value(), parse, opts, used)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	ids := make([]string, 0, len(filters))
	for id := range filters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !used[id] {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"The array filter for identifier '%s' was not used in the update %s", id, values.Shell(
					bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: spec}))
		}
	}
	return u, nil
}

func (u *Update) compileField(path string, v bson.RawValue, parse parseFunc, opts *Options, used map[string]bool) error {
	parts, err := parsePath(path, u.filters, used)
	if err != nil {
		return err
	}
	u.positional = u.positional || slices.ContainsFunc(parts, isPositional)
	op, err := parse(path, v, opts)
	if err != nil {
		return err
	}
	return u.root.insert(parts, op)
}
