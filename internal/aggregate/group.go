package aggregate

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// expr is an aggregation expression: for now a constant or a field path.
type expr func(doc bson.Raw) bson.RawValue

func constant(v bson.RawValue) expr { return func(bson.Raw) bson.RawValue { return v } }

// parseExpr parses "$a.b" as a field path and any other non-document value
// as a constant; operator expressions are not implemented yet.
func parseExpr(v bson.RawValue) (expr, error) {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if strings.HasPrefix(s, "$$") {
			return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support aggregation variables yet")
		}
		if strings.HasPrefix(s, "$") {
			if len(s) == 1 {
				return nil, mongoerr.New(mongoerr.Code(16872), "'$' by itself is not a valid FieldPath")
			}
			parts := strings.Split(s[1:], ".")
			return func(doc bson.Raw) bson.RawValue {
				return fieldPath(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, parts)
			}, nil
		}
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support aggregation expressions yet")
	}
	return constant(v), nil
}

// fieldPath evaluates a field path as aggregation does: through an array
// it yields the array of the values found in its elements.
func fieldPath(v bson.RawValue, parts []string) bson.RawValue {
	if len(parts) == 0 {
		return v
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		child, err := v.Document().LookupErr(parts[0])
		if err != nil {
			return bson.RawValue{}
		}
		return fieldPath(child, parts[1:])
	case bson.TypeArray:
		elems, _ := v.Array().Values()
		start, arr := bsoncore.AppendArrayStart(nil)
		i := 0
		for _, el := range elems {
			if el.Type != bson.TypeEmbeddedDocument && el.Type != bson.TypeArray {
				continue
			}
			r := fieldPath(el, parts)
			if r.Type == 0 {
				continue
			}
			arr = bsoncore.AppendValueElement(arr, strconv.Itoa(i), bsoncore.Value{Type: bsoncore.Type(r.Type), Data: r.Value})
			i++
		}
		arr, _ = bsoncore.AppendArrayEnd(arr, start)
		return bson.RawValue{Type: bson.TypeArray, Value: arr}
	}
	return bson.RawValue{}
}

// accumulator is one computed field of $group: for now $sum.
type accumulator struct {
	name string
	arg  expr
}

// groupStage is $group: documents with equal _id values (compared as
// MongoDB compares) fold into one output document per group, in the order
// groups were first seen.
type groupStage struct {
	id     expr
	fields []accumulator
	noID   bool // $count: the output has no _id
}

func parseGroup(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(15947), "a group's fields must be specified in an object")
	}
	elems, err := arg.Document().Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid $group: %v", err)
	}
	g := &groupStage{}
	for _, el := range elems {
		if el.Key() == "_id" {
			if g.id, err = parseExpr(el.Value()); err != nil {
				return nil, err
			}
			continue
		}
		acc, err := parseAccumulator(el.Key(), el.Value())
		if err != nil {
			return nil, err
		}
		g.fields = append(g.fields, acc)
	}
	if g.id == nil {
		return nil, mongoerr.New(mongoerr.Code(15955), "a group specification must include an _id")
	}
	return g, nil
}

func parseAccumulator(name string, v bson.RawValue) (accumulator, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return accumulator{}, mongoerr.New(mongoerr.Code(40234), "The field '%s' must be an accumulator object", name)
	}
	elems, err := v.Document().Elements()
	if err != nil || len(elems) != 1 {
		return accumulator{}, mongoerr.New(mongoerr.Code(40238), "The field '%s' must specify one accumulator", name)
	}
	op := elems[0].Key()
	switch op {
	case "$sum":
		e, err := parseExpr(elems[0].Value())
		return accumulator{name: name, arg: e}, err
	case "$count":
		return accumulator{name: name, arg: constant(values.Int32Value(1))}, nil
	case "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$mergeObjects", "$stdDevPop",
		"$stdDevSamp", "$top", "$bottom", "$topN", "$bottomN", "$firstN", "$lastN", "$maxN", "$minN", "$median", "$percentile":
		return accumulator{}, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the %s accumulator yet", op)
	}
	return accumulator{}, mongoerr.New(mongoerr.Code(15952), "unknown group operator '%s'", op)
}

type group struct {
	id   bson.RawValue
	sums []sum
}

func (g *groupStage) run(in Source) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) { return g.compute(in) }}
}

func (g *groupStage) compute(in Source) ([]bson.Raw, error) {
	index := map[string]*group{}
	var order []*group
	for {
		doc, err := in.Next()
		if err != nil {
			return nil, err
		}
		if doc == nil {
			break
		}
		id := g.id(doc)
		if id.Type == 0 {
			id = bson.RawValue{Type: bson.TypeNull}
		}
		k := string(keyenc.Encode(id))
		grp := index[k]
		if grp == nil {
			grp = &group{id: cloneValue(id), sums: make([]sum, len(g.fields))}
			index[k] = grp
			order = append(order, grp)
		}
		for i, f := range g.fields {
			grp.sums[i].add(f.arg(doc))
		}
	}
	out := make([]bson.Raw, 0, len(order))
	for _, grp := range order {
		start, d := bsoncore.AppendDocumentStart(nil)
		if !g.noID {
			d = bsoncore.AppendValueElement(d, "_id", bsoncore.Value{Type: bsoncore.Type(grp.id.Type), Data: grp.id.Value})
		}
		for i, f := range g.fields {
			v := grp.sums[i].value()
			d = bsoncore.AppendValueElement(d, f.name, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
		d, _ = bsoncore.AppendDocumentEnd(d, start)
		out = append(out, d)
	}
	return out, nil
}

func cloneValue(v bson.RawValue) bson.RawValue {
	return bson.RawValue{Type: v.Type, Value: append([]byte(nil), v.Value...)}
}

// sum is $sum: numbers add with MongoDB's type promotion (a long that
// overflows continues as a double); anything else is ignored.
type sum struct {
	total bson.RawValue
}

func (s *sum) add(v bson.RawValue) {
	if !values.IsNumber(v.Type) {
		return
	}
	if s.total.Type == 0 {
		s.total = cloneValue(v)
		return
	}
	if r, ok := values.Add(s.total, v); ok {
		s.total = r
		return
	}
	a, _ := values.Float64(s.total)
	b, _ := values.Float64(v)
	s.total = values.DoubleValue(a + b)
}

func (s *sum) value() bson.RawValue {
	if s.total.Type == 0 {
		return values.Int32Value(0)
	}
	return s.total
}

// lazySource computes a blocking stage's output on first read.
type lazySource struct {
	in      Source
	compute func() ([]bson.Raw, error)
	out     []bson.Raw
	done    bool
}

func (l *lazySource) Next() (bson.Raw, error) {
	if !l.done {
		l.done = true
		out, err := l.compute()
		if err != nil {
			return nil, err
		}
		l.out = out
	}
	if len(l.out) == 0 {
		return nil, nil
	}
	d := l.out[0]
	l.out = l.out[1:]
	return d, nil
}

func (l *lazySource) Close() error { return l.in.Close() }
