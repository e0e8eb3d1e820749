package aggregate

import (
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// groupStage is $group: documents whose _id expression evaluates to equal
// values (as MongoDB compares them; missing counts as null) fold into one
// output document per group, {_id, <accumulated fields>}, in the order the
// groups were first seen.
type groupStage struct {
	id   *expr.Expr
	accs []*accSpec
	// key, when set, replaces id: it computes the group key of a document
	// ($bucket).
	key func(doc bson.Raw, rt *runtime) (bson.RawValue, error)
	// sortByID orders the output by _id ($bucket).
	sortByID bool
	noID     bool // $count: the output has no _id
}

func (p *parser) parseGroup(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(15947), "a group's fields must be specified in an object")
	}
	g := &groupStage{}
	for _, f := range fieldsOf(arg.Value) {
		if f.key == "_id" {
			if g.id != nil {
				return nil, mongoerr.New(mongoerr.Code(16406), "duplicate _id in $group")
			}
			e, err := p.groupID(f.val)
			if err != nil {
				return nil, err
			}
			g.id = e
			continue
		}
		acc, err := p.parseAccumulator(f.key, f.val)
		if err != nil {
			return nil, err
		}
		g.accs = append(g.accs, acc)
	}
	if g.id == nil {
		return nil, mongoerr.New(mongoerr.Code(15955), "a group specification must include an _id")
	}
	return g, nil
}

// groupID compiles the _id of $group. An object _id is a document of
// expressions (its field names may not be operators unless it is one).
func (p *parser) groupID(v bson.RawValue) (*expr.Expr, error) {
	if v.Type == bson.TypeEmbeddedDocument && !isExpressionObject(v) {
		for _, f := range fieldsOf(v.Value) {
			if strings.Contains(f.key, ".") {
				return nil, mongoerr.New(mongoerr.Code(40183), "cannot use dotted field name '%s' in a sub object", f.key)
			}
		}
	}
	return expr.Compile(v, p.scope)
}

// group is one group being accumulated.
type group struct {
	id   bson.RawValue
	accs []accumulator
}

// groupOverhead approximates the memory of a group beyond its values.
const groupOverhead = 64

func (g *groupStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) { return g.compute(in, rt) }}
}

func (g *groupStage) compute(in Source, rt *runtime) ([]bson.Raw, error) {
	index := map[string]*group{}
	var order []*group
	var mem int64
	for {
		doc, err := in.Next()
		if err != nil {
			return nil, err
		}
		if doc == nil {
			break
		}
		var id bson.RawValue
		if g.key != nil {
			id, err = g.key(doc, rt)
		} else {
			id, err = g.id.Eval(rt.ectx, doc)
		}
		if err != nil {
			return nil, err
		}
		id = nullIfMissing(id)
		k := string(keyenc.Encode(id))
		grp := index[k]
		if grp == nil {
			grp = &group{id: id, accs: make([]accumulator, len(g.accs))}
			for i, a := range g.accs {
				if grp.accs[i], err = a.newAccumulator(id, rt); err != nil {
					return nil, err
				}
			}
			index[k] = grp
			order = append(order, grp)
			mem += int64(len(k)+len(id.Value)) + groupOverhead
		}
		for i, a := range g.accs {
			var v bson.RawValue
			if a.arg != nil {
				if v, err = a.arg.Eval(rt.ectx, doc); err != nil {
					return nil, err
				}
			}
			if err := grp.accs[i].add(doc, v); err != nil {
				return nil, err
			}
			if growsWithInput(a.op) {
				mem += int64(len(v.Value)) + 16
			}
		}
		// Folio keeps groups in memory even with allowDiskUse; without it
		// the limit is MongoDB's.
		if mem > rt.memoryLimit() && !rt.opts.AllowDiskUse {
			return nil, rt.overMemory("$group")
		}
	}
	if g.sortByID {
		slices.SortStableFunc(order, func(a, b *group) int { return values.Compare(a.id, b.id) })
	}
	out := make([]bson.Raw, 0, len(order))
	for _, grp := range order {
		fs := make([]field, 0, len(g.accs)+1)
		if !g.noID {
			fs = append(fs, field{"_id", grp.id})
		}
		for i, a := range g.accs {
			fs = append(fs, field{a.field, grp.accs[i].result()})
		}
		out = append(out, buildDoc(fs))
	}
	return out, nil
}

// growsWithInput reports the accumulators whose state grows with every
// document.
func growsWithInput(op string) bool {
	switch op {
	case "$push", "$addToSet", "$mergeObjects", "$lastN":
		return true
	}
	return false
}

// parseCount reads {$count: "name"}: a $group counting every document into
// name, without _id.
func parseCount(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeString || arg.StringValue() == "" {
		return nil, mongoerr.New(mongoerr.Code(40156), "the count field must be a non-empty string")
	}
	name := arg.StringValue()
	switch {
	case name[0] == '$':
		return nil, mongoerr.New(mongoerr.Code(40158), "the count field cannot be a $-prefixed path")
	case strings.Contains(name, "\x00"):
		return nil, mongoerr.New(mongoerr.Code(40159), "the count field cannot contain a null byte")
	case strings.Contains(name, "."):
		return nil, mongoerr.New(mongoerr.Code(40160), "the count field cannot contain '.'")
	}
	return &groupStage{
		key:  func(bson.Raw, *runtime) (bson.RawValue, error) { return null, nil },
		accs: []*accSpec{{field: name, op: "$count"}},
		noID: true,
	}, nil
}

// parseSortByCount reads {$sortByCount: expr}: a $group by the expression
// counting into "count", then a $sort by count descending.
func (p *parser) parseSortByCount(arg bson.RawValue) (stage, error) {
	switch {
	case arg.Type == bson.TypeString:
		if !strings.HasPrefix(arg.StringValue(), "$") {
			return nil, mongoerr.New(mongoerr.Code(40148), "the sortByCount field must be defined as a $-prefixed path or an expression")
		}
	case arg.Type == bson.TypeEmbeddedDocument && isExpressionObject(arg):
	default:
		return nil, mongoerr.New(mongoerr.Code(40149), "the sortByCount field must be specified as a string or as an object")
	}
	id, err := expr.Compile(arg, p.scope)
	if err != nil {
		return nil, err
	}
	sort, err := parseSort(docValue(buildDoc([]field{{"count", values.Int32Value(-1)}})))
	if err != nil {
		return nil, err
	}
	return stages{
		&groupStage{id: id, accs: []*accSpec{{field: "count", op: "$sum", arg: constExpr(values.Int32Value(1))}}},
		sort,
	}, nil
}

// stages runs several stages as one (stages that desugar into others).
type stages []stage

func (ss stages) run(in Source, rt *runtime) Source { return runStages(ss, in, rt) }

// constExpr compiles a constant.
func constExpr(v bson.RawValue) *expr.Expr {
	e, err := expr.Compile(docValue(buildDoc([]field{{"$literal", v}})), expr.NewScope())
	if err != nil {
		panic(err) // a literal always compiles
	}
	return e
}

// parseOutput reads the output of $bucket and $bucketAuto: accumulators,
// {count: {$sum: 1}} when absent.
func (p *parser) parseOutput(v bson.RawValue, present bool, code mongoerr.Code, stageName string) ([]*accSpec, error) {
	if !present {
		return []*accSpec{{field: "count", op: "$sum", arg: constExpr(values.Int32Value(1))}}, nil
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(code, "The %s 'output' field must be an object, but found type: %s", stageName, typeName(v))
	}
	var accs []*accSpec
	for _, f := range fieldsOf(v.Value) {
		a, err := p.parseAccumulator(f.key, f.val)
		if err != nil {
			return nil, err
		}
		accs = append(accs, a)
	}
	return accs, nil
}

// groupByExpr compiles the groupBy of $bucket and $bucketAuto: a $-path or
// an operator expression.
func (p *parser) groupByExpr(v bson.RawValue, code mongoerr.Code, stageName string) (*expr.Expr, error) {
	ok := (v.Type == bson.TypeString && strings.HasPrefix(v.StringValue(), "$")) ||
		(v.Type == bson.TypeEmbeddedDocument && isExpressionObject(v))
	if !ok {
		return nil, mongoerr.New(code, "The %s 'groupBy' field must be defined as a $-prefixed path or an expression, but found: %s.", stageName, v)
	}
	return expr.Compile(v, p.scope)
}

// parseBucket reads $bucket: documents are grouped by which range
// [boundaries[i], boundaries[i+1]) their groupBy value falls in, with _id
// the lower boundary; values outside every range go to the default bucket
// (an error without one). Buckets are output in _id order.
func (p *parser) parseBucket(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(40201), "Argument to $bucket stage must be an object, but found type: %s.", typeName(arg))
	}
	var groupBy, bounds, def, output bson.RawValue
	haveOutput := false
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "groupBy":
			groupBy = f.val
		case "boundaries":
			bounds = f.val
		case "default":
			def = f.val
		case "output":
			output, haveOutput = f.val, true
		default:
			return nil, mongoerr.New(mongoerr.Code(40197), "Unrecognized option to $bucket: %s.", f.key)
		}
	}
	if groupBy.Type == 0 || bounds.Type == 0 {
		return nil, mongoerr.New(mongoerr.Code(40198), "$bucket requires 'groupBy' and 'boundaries' to be specified.")
	}
	gb, err := p.groupByExpr(groupBy, mongoerr.Code(40202), "$bucket")
	if err != nil {
		return nil, err
	}
	if bounds.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.Code(40200), "The $bucket 'boundaries' field must be an array, but found type: %s.", typeName(bounds))
	}
	var bs []bson.RawValue
	for i, b := range arrayValues(bounds) {
		e, err := expr.Compile(b, p.scope)
		if err != nil {
			return nil, err
		}
		if !e.IsConstant() {
			return nil, mongoerr.New(mongoerr.Code(40191), "The $bucket 'boundaries' field must be an array of constant values, but found value: %s.", b)
		}
		c := e.Constant()
		if i > 0 {
			prev := bs[i-1]
			if values.Rank(prev.Type) != values.Rank(c.Type) {
				return nil, mongoerr.New(mongoerr.Code(40193),
					"All values in the the 'boundaries' option to $bucket must have the same type. Found conflicting types %s and %s.",
					typeName(prev), typeName(c))
			}
			if values.Compare(prev, c) >= 0 {
				return nil, mongoerr.New(mongoerr.Code(40194),
					"The 'boundaries' option to $bucket must be sorted, but elements %d and %d are not in ascending order (%s is not less than %s).",
					i-1, i, prev, c)
			}
		}
		bs = append(bs, c)
	}
	if len(bs) < 2 {
		return nil, mongoerr.New(mongoerr.Code(40192), "The $bucket 'boundaries' field must have at least 2 values, but found %d value(s).", len(bs))
	}
	var defVal bson.RawValue
	if def.Type != 0 {
		e, err := expr.Compile(def, p.scope)
		if err != nil {
			return nil, err
		}
		if !e.IsConstant() {
			return nil, mongoerr.New(mongoerr.Code(40195), "The $bucket 'default' field must be a constant expression, but found: %s.", def)
		}
		defVal = e.Constant()
		if values.Rank(defVal.Type) == values.Rank(bs[0].Type) &&
			values.Compare(defVal, bs[0]) >= 0 && values.Compare(defVal, bs[len(bs)-1]) < 0 {
			return nil, mongoerr.New(mongoerr.Code(40199),
				"The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.")
		}
	}
	accs, err := p.parseOutput(output, haveOutput, mongoerr.Code(40196), "$bucket")
	if err != nil {
		return nil, err
	}
	key := func(doc bson.Raw, rt *runtime) (bson.RawValue, error) {
		v, err := gb.Eval(rt.ectx, doc)
		if err != nil {
			return missing, err
		}
		v = nullIfMissing(v)
		if values.Compare(v, bs[0]) >= 0 && values.Compare(v, bs[len(bs)-1]) < 0 {
			i, _ := slices.BinarySearchFunc(bs, v, values.Compare)
			if i == len(bs) || values.Compare(bs[i], v) != 0 {
				i--
			}
			return bs[i], nil
		}
		if defVal.Type == 0 {
			return missing, mongoerr.New(mongoerr.Code(40066),
				"$switch could not find a matching branch for an input, and no default was specified.")
		}
		return defVal, nil
	}
	return &groupStage{key: key, accs: accs, sortByID: true}, nil
}

// bucketAutoStage is $bucketAuto: the documents sorted by their groupBy
// value are cut into at most buckets buckets of about equal size, never
// separating equal values; each bucket's _id is {min, max}, max being the
// next bucket's min (or, for the last one, its largest value).
type bucketAutoStage struct {
	groupBy *expr.Expr
	buckets int64
	accs    []*accSpec
}

func (p *parser) parseBucketAuto(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(40240), "The argument to $bucketAuto must be an object, but found type: %s", typeName(arg))
	}
	s := &bucketAutoStage{}
	var groupBy, buckets, output bson.RawValue
	haveOutput := false
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "groupBy":
			groupBy = f.val
		case "buckets":
			buckets = f.val
		case "output":
			output, haveOutput = f.val, true
		case "granularity":
			return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support $bucketAuto granularity yet")
		default:
			return nil, mongoerr.New(mongoerr.Code(40245), "Unrecognized option to $bucketAuto: %s.", f.key)
		}
	}
	if groupBy.Type == 0 || buckets.Type == 0 {
		return nil, mongoerr.New(mongoerr.Code(40246), "$bucketAuto requires 'groupBy' and 'buckets' to be specified")
	}
	var err error
	if s.groupBy, err = p.groupByExpr(groupBy, mongoerr.Code(40239), "$bucketAuto"); err != nil {
		return nil, err
	}
	if !values.IsNumber(buckets.Type) {
		return nil, mongoerr.New(mongoerr.Code(40241), "The $bucketAuto 'buckets' field must be a numeric value, but found type: %s", typeName(buckets))
	}
	n, ok := values.Int64(buckets)
	if !ok || n > math.MaxInt32 {
		return nil, mongoerr.New(mongoerr.Code(40242), "The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found %s", buckets)
	}
	if n <= 0 {
		return nil, mongoerr.New(mongoerr.Code(40243), "The $bucketAuto 'buckets' field must be greater than 0, but found: %d", n)
	}
	s.buckets = n
	if s.accs, err = p.parseOutput(output, haveOutput, mongoerr.Code(40244), "$bucketAuto"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *bucketAutoStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) { return s.compute(in, rt) }}
}

type keyedDoc struct {
	key bson.RawValue
	doc bson.Raw
}

func (s *bucketAutoStage) compute(in Source, rt *runtime) ([]bson.Raw, error) {
	var items []keyedDoc
	var mem int64
	for {
		doc, err := in.Next()
		if err != nil {
			return nil, err
		}
		if doc == nil {
			break
		}
		k, err := s.groupBy.Eval(rt.ectx, doc)
		if err != nil {
			return nil, err
		}
		items = append(items, keyedDoc{nullIfMissing(k), doc})
		if mem += int64(len(doc)); mem > rt.memoryLimit() && !rt.opts.AllowDiskUse {
			return nil, rt.overMemory("$bucketAuto")
		}
	}
	if len(items) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(items, func(a, b keyedDoc) int { return values.Compare(a.key, b.key) })
	size := int(math.Round(float64(len(items)) / float64(s.buckets)))
	size = max(size, 1)
	var bounds [][2]int // [start, end) of each bucket
	for start := 0; start < len(items); {
		end := min(start+size, len(items))
		// Documents equal to the bucket's last value stay in the bucket.
		for end < len(items) && values.Compare(items[end].key, items[end-1].key) == 0 {
			end++
		}
		if int64(len(bounds)) == s.buckets-1 {
			end = len(items) // the last bucket takes the rest
		}
		bounds = append(bounds, [2]int{start, end})
		start = end
	}
	var out []bson.Raw
	for bi, b := range bounds {
		maxV := items[b[1]-1].key
		if bi+1 < len(bounds) {
			maxV = items[b[1]].key
		}
		id := docValue(buildDoc([]field{{"min", items[b[0]].key}, {"max", maxV}}))
		fs := []field{{"_id", id}}
		accs := make([]accumulator, len(s.accs))
		for i, a := range s.accs {
			acc, err := a.newAccumulator(id, rt)
			if err != nil {
				return nil, err
			}
			accs[i] = acc
		}
		for _, it := range items[b[0]:b[1]] {
			for i, a := range s.accs {
				var v bson.RawValue
				var err error
				if a.arg != nil {
					if v, err = a.arg.Eval(rt.ectx, it.doc); err != nil {
						return nil, err
					}
				}
				if err := accs[i].add(it.doc, v); err != nil {
					return nil, err
				}
			}
		}
		for i, a := range s.accs {
			fs = append(fs, field{a.field, accs[i].result()})
		}
		out = append(out, buildDoc(fs))
	}
	return out, nil
}
