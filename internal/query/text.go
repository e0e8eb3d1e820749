package query

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// TextSearch is a filter's {$text: {...}} clause. It needs the
// collection's text index to match: the engine binds it (Bind) when it
// plans the query; unbound, matching fails as MongoDB fails a $text where
// no text search can run.
type TextSearch struct {
	Search string
	// Language is $language, "" when not given (the index's default).
	Language                          string
	CaseSensitive, DiacriticSensitive bool
	// indexLanguage is the text index's default language, which the
	// search runs in without $language.
	indexLanguage string
	match         func(bson.Raw) (bool, error)
}

// Bind makes the clause match with fn, through a text index whose default
// language is indexLanguage.
func (t *TextSearch) Bind(indexLanguage string, fn func(bson.Raw) (bool, error)) {
	t.indexLanguage, t.match = indexLanguage, fn
}

// language is the language the search runs in: $language, or else the
// index's default (TextMatchExpression's, as explain shows it).
func (t *TextSearch) language() string {
	if t.Language != "" {
		return t.Language
	}
	return t.indexLanguage
}

// parseText parses $text's operand with MongoDB's checks: $search a
// string, $language a string, $caseSensitive and $diacriticSensitive
// booleans, nothing else.
func parseText(v bson.RawValue) (*Node, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.BadValue, "$text expects an object")
	}
	t := &TextSearch{}
	doc := bson.Raw(v.Value)
	want := 1
	str := func(name string, required bool, dst *string) error {
		f, err := doc.LookupErr(name)
		if err != nil {
			if required {
				return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"%s\"", name)
			}
			return nil
		}
		s, ok := f.StringValueOK()
		if !ok {
			return mongoerr.New(mongoerr.TypeMismatch, "\"%s\" had the wrong type. Expected string, found %s", name, values.TypeName(f.Type))
		}
		*dst = s
		if !required {
			want++
		}
		return nil
	}
	boolean := func(name string, dst *bool) error {
		f, err := doc.LookupErr(name)
		if err != nil {
			return nil
		}
		b, ok := f.BooleanOK()
		if !ok {
			return mongoerr.New(mongoerr.TypeMismatch, "\"%s\" had the wrong type. Expected bool, found %s", name, values.TypeName(f.Type))
		}
		*dst = b
		want++
		return nil
	}
	if err := str("$search", true, &t.Search); err != nil {
		return nil, err
	}
	if err := str("$language", false, &t.Language); err != nil {
		return nil, err
	}
	if err := boolean("$caseSensitive", &t.CaseSensitive); err != nil {
		return nil, err
	}
	if err := boolean("$diacriticSensitive", &t.DiacriticSensitive); err != nil {
		return nil, err
	}
	if n, _ := doc.Elements(); len(n) != want {
		return nil, mongoerr.New(mongoerr.BadValue, "extra fields in $text")
	}
	return &Node{Kind: KindText, Value: v, text: t}, nil
}

// matches is the bound clause's verdict on doc; unbound, it fails the
// query.
func (t *TextSearch) matches(doc bson.Raw) bool {
	if t.match == nil {
		panic(exprFailure{err: mongoerr.New(mongoerr.BadValue, "$text is not allowed in this context")})
	}
	ok, err := t.match(doc)
	if err != nil {
		panic(exprFailure{err: err})
	}
	return ok
}

// Text is the filter's $text clause, or nil. MongoDB allows one, not under
// $nor: more fail with BadValue, as does one under $nor. One in a branch
// of an $or among the filter's conjuncts (TextOr) MongoDB reads as a
// branch of the index union; one under an $or nested deeper Folio does not
// plan (NotImplemented).
func (f *Filter) Text() (*TextSearch, error) {
	if !f.hasExpr {
		return nil, nil // compile sets hasExpr on meeting a $text
	}
	var found *TextSearch
	var err error
	f.visitText(func(n *Node, under Kind, ors int, _, _ *Node) {
		switch {
		case found != nil:
			err = mongoerr.New(mongoerr.BadValue, "Too many text expressions")
		case under == KindNor:
			err = mongoerr.New(mongoerr.BadValue, "text expression not allowed in nor")
		case ors > 1 && err == nil:
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support $text inside a nested $or yet")
		}
		found = n.text
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// TextOr is the $or among the filter's conjuncts (reached from the root
// through $and alone) one of whose branches (OrBranches) holds the $text
// clause through $and alone, and that branch; nil when the clause is
// itself a conjunct, or when Text fails.
func (f *Filter) TextOr() (or, branch *Node) {
	if _, err := f.Text(); err != nil {
		return nil, nil
	}
	f.visitText(func(_ *Node, _ Kind, ors int, o, br *Node) {
		if ors == 1 {
			or, branch = o, br
		}
	})
	return or, branch
}

// visitText calls fn on each $text node of the filter with the nearest
// $or or $nor above it (under, KindAnd for none; a $nor above an $or
// counts), the number of $or above it, and the outermost $or with its
// branch holding the node. An $or that is a branch of an $or counts as
// its branches, as MongoDB lifts them into the $or above
// (ListOfMatchExpression's optimizer): its branches are the outer one's.
func (f *Filter) visitText(fn func(n *Node, under Kind, ors int, or, branch *Node)) {
	var visit func(n *Node, under Kind, ors int, or, branch *Node, inOr bool)
	visit = func(n *Node, under Kind, ors int, or, branch *Node, inOr bool) {
		if n.Kind == KindText {
			fn(n, under, ors, or, branch)
		}
		for _, c := range n.Children {
			next, nextOrs, nextOr, nextBranch := under, ors, or, branch
			if n.Kind == KindNor || n.Kind == KindOr && under != KindNor {
				next = n.Kind
			}
			switch {
			case n.Kind == KindOr && inOr:
				nextBranch = c // lifted into the $or above
			case n.Kind == KindOr:
				nextOrs++
				if or == nil {
					nextOr, nextBranch = n, c
				}
			}
			visit(c, next, nextOrs, nextOr, nextBranch, n.Kind == KindOr)
		}
	}
	visit(f.root, KindAnd, 0, nil, nil, false)
}

// OrBranches are the branches of n, an $or: its clauses, those of an $or
// among them in its place (MongoDB lifts an $or's $or branches into it).
func OrBranches(n *Node) []*Node {
	var out []*Node
	for _, c := range n.Children {
		if c.Kind == KindOr {
			out = append(out, OrBranches(c)...)
			continue
		}
		out = append(out, c)
	}
	return out
}
