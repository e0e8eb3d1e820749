package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// matchStage keeps the documents a query filter matches.
type matchStage struct{ filter *query.Filter }

func parseMatch(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(15959), "the match filter must be an expression in an object")
	}
	f, err := query.Compile(arg.Document())
	if err != nil {
		return nil, err
	}
	return matchStage{f}, nil
}

func (m matchStage) run(in Source) Source {
	return &filterSource{in: in, keep: m.filter.Match}
}

type filterSource struct {
	in   Source
	keep func(bson.Raw) bool
}

func (f *filterSource) Next() (bson.Raw, error) {
	for {
		doc, err := f.in.Next()
		if doc == nil || err != nil {
			return nil, err
		}
		if f.keep(doc) {
			return doc, nil
		}
	}
}

func (f *filterSource) Close() error { return f.in.Close() }

// wholeNumber reads the operand of $skip and $limit: a number holding an
// integer that fits in a long.
func wholeNumber(arg bson.RawValue, typeErr *mongoerr.Error) (int64, error) {
	n, ok := values.Int64(arg)
	if !ok {
		return 0, typeErr
	}
	return n, nil
}

type skipStage struct{ n int64 }

func parseSkip(arg bson.RawValue) (stage, error) {
	n, err := wholeNumber(arg, mongoerr.New(mongoerr.Code(15972), "Argument to $skip must be a number"))
	if err == nil && n < 0 {
		err = mongoerr.New(mongoerr.Code(15956), "Argument to $skip cannot be negative")
	}
	return skipStage{n}, err
}

func (s skipStage) run(in Source) Source {
	left := s.n
	return &filterSource{in: in, keep: func(bson.Raw) bool {
		if left > 0 {
			left--
			return false
		}
		return true
	}}
}

type limitStage struct{ n int64 }

func parseLimit(arg bson.RawValue) (stage, error) {
	n, err := wholeNumber(arg, mongoerr.New(mongoerr.Code(15957), "the limit must be specified as a number"))
	if err == nil && n <= 0 {
		err = mongoerr.New(mongoerr.Code(15958), "the limit must be positive")
	}
	return limitStage{n}, err
}

func (l limitStage) run(in Source) Source { return &limitSource{in: in, left: l.n} }

type limitSource struct {
	in   Source
	left int64
}

func (l *limitSource) Next() (bson.Raw, error) {
	if l.left <= 0 {
		return nil, nil
	}
	l.left--
	return l.in.Next()
}

func (l *limitSource) Close() error { return l.in.Close() }

// parseCount turns {$count: "name"} into a $group counting into name.
func parseCount(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeString || arg.StringValue() == "" {
		return nil, mongoerr.New(mongoerr.Code(40156), "the count field must be a non-empty string")
	}
	name := arg.StringValue()
	if name[0] == '$' {
		return nil, mongoerr.New(mongoerr.Code(40158), "the count field cannot be a $-prefixed path")
	}
	return &groupStage{
		id:     constant(bson.RawValue{Type: bson.TypeNull}),
		fields: []accumulator{{name: name, arg: constant(values.Int32Value(1))}},
		noID:   true,
	}, nil
}
