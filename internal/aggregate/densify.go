package aggregate

import (
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/values"
)

// densifyStage is $densify: within each partition (the values of
// partitionByFields) it adds a document {<partition fields>, field: v} for
// every value v of the step grid that no document holds. The grid starts
// at the range's lower bound (the smallest value for "full", the
// partition's smallest for "partition", the given one for explicit bounds)
// and advances by step (in unit for dates, each step added to the last);
// it ends below the upper bound (exclusive for explicit bounds, the
// largest value for "full" and "partition"). Documents without the field
// (or null) pass through. As MongoDB, the input is first sorted by the
// partition fields (not for "full") and the field.
type densifyStage struct {
	field      []string
	fieldName  string
	partitions []string
	// partExprs are the field paths "$<partition field>" whose values
	// (through arrays, as an expression reads them) key a partition.
	partExprs []*expr.Expr
	step      bson.RawValue
	unit      string
	bounds    string // "full", "partition" or "" for explicit
	lo, hi    bson.RawValue
	sort      *query.Sort
}

// DefaultMaxDensifyDocs is the default of MongoDB's
// internalQueryMaxAllowedDensifyDocs.
const DefaultMaxDensifyDocs = 500000

func (p *parser) parseDensify(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The $densify stage specification must be an object, found %s", typeName(arg))
	}
	// As MongoDB's DensifySpec::parse (IDL), every field, the range's
	// too, is read and checked in order: an unknown, repeated or mistyped
	// field fails first, then a missing one, and only then the range's
	// values (RangeStatement::parse) and the paths.
	s := &densifyStage{}
	var rng, fieldArg, parts, bounds bson.RawValue
	for _, f := range fieldsOf(arg.Value) {
		var dst *bson.RawValue
		switch f.key {
		case "field":
			dst = &fieldArg
		case "partitionByFields":
			dst = &parts
		case "range":
			dst = &rng
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$densify.%s' is an unknown field.", f.key)
		}
		if dst.Type != 0 {
			return nil, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '$densify.%s' is a duplicate field", f.key)
		}
		switch f.key {
		case "field":
			if f.val.Type != bson.TypeString {
				return nil, mongoerr.WrongType("$densify.field", typeName(f.val), "string")
			}
		case "partitionByFields":
			if f.val.Type != bson.TypeArray {
				return nil, mongoerr.WrongType("$densify.partitionByFields", typeName(f.val), "array")
			}
			for i, v := range arrayValues(f.val) {
				if v.Type != bson.TypeString {
					return nil, mongoerr.WrongType("$densify.partitionByFields."+strconv.Itoa(i), typeName(v), "string")
				}
				s.partitions = append(s.partitions, v.StringValue())
			}
		case "range":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.WrongType("$densify.range", typeName(f.val), "object")
			}
			var err error
			if bounds, err = s.readRange(f.val); err != nil {
				return nil, err
			}
		}
		*dst = f.val
	}
	for _, req := range []struct {
		name string
		v    bson.RawValue
	}{{"field", fieldArg}, {"range", rng}} {
		if req.v.Type == 0 {
			return nil, mongoerr.MissingField("$densify." + req.name)
		}
	}
	s.fieldName = fieldArg.StringValue()
	// As MongoDB: the range first (RangeStatement::parse), then the
	// partition fields' and the field's paths (FieldPath).
	if err := s.checkRange(bounds); err != nil {
		return nil, err
	}
	for _, part := range s.partitions {
		if err := expr.CheckFieldPath(part); err != nil {
			return nil, err
		}
		e, err := expr.Compile(stringValue("$"+part), p.scope)
		if err != nil {
			return nil, err
		}
		s.partExprs = append(s.partExprs, e)
	}
	if err := expr.CheckFieldPath(s.fieldName); err != nil {
		return nil, err
	}
	s.field = splitPath(s.fieldName)
	if s.bounds == "partition" && len(s.partitions) == 0 {
		return nil, mongoerr.New(mongoerr.DensifyPartitionNeedsFields, "One cannot specify the bounds as 'partition' without specifying a non-empty array of partitionByFields. You may have meant to specify 'full' bounds.")
	}
	var spec []field
	if s.bounds != "full" {
		for _, p := range s.partitions {
			spec = append(spec, field{p, values.Int32Value(1)})
		}
	}
	spec = append(spec, field{s.fieldName, values.Int32Value(1)})
	var err error
	if s.sort, err = query.CompileSort(buildDoc(spec)); err != nil {
		return nil, err
	}
	if c := p.opts.Collator; c != nil {
		s.sort = s.sort.Collated(c)
	}
	return s, nil
}

// readRange reads the range as MongoDB's RangeSpec (IDL): step, a
// number, unit, a string, and bounds, any value, each once; step and
// bounds required. It returns bounds.
func (s *densifyStage) readRange(rng bson.RawValue) (bson.RawValue, error) {
	var step, unit, bounds bson.RawValue
	for _, f := range fieldsOf(rng.Value) {
		var dst *bson.RawValue
		switch f.key {
		case "step":
			dst = &step
		case "unit":
			dst = &unit
		case "bounds":
			dst = &bounds
		default:
			return bounds, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$densify.range.%s' is an unknown field.", f.key)
		}
		if dst.Type != 0 {
			return bounds, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '$densify.range.%s' is a duplicate field", f.key)
		}
		switch {
		case f.key == "step" && !values.IsNumber(f.val.Type):
			return bounds, mongoerr.WrongNumberType("$densify.range.step", typeName(f.val))
		case f.key == "unit" && f.val.Type != bson.TypeString:
			return bounds, mongoerr.WrongType("$densify.range.unit", typeName(f.val), "string")
		}
		*dst = f.val
	}
	for _, req := range []struct {
		name string
		v    bson.RawValue
	}{{"step", step}, {"bounds", bounds}} {
		if req.v.Type == 0 {
			return bounds, mongoerr.MissingField("$densify.range." + req.name)
		}
	}
	s.step = step
	if unit.Type != 0 {
		s.unit = unit.StringValue()
	}
	return bounds, nil
}

// checkRange checks the range's values as MongoDB's RangeStatement::parse
// does, once the spec is read, and sets the bounds.
func (s *densifyStage) checkRange(bounds bson.RawValue) error {
	if values.Compare(s.step, values.Int32Value(0)) <= 0 {
		return mongoerr.New(mongoerr.DensifyStepNotPositive, "The step parameter in a range statement must be a strictly positive numeric value")
	}
	if s.unit != "" {
		if _, ok := values.Int64(s.step); !ok {
			return mongoerr.New(mongoerr.DensifyDateStepNotWhole, "The step parameter in a range statement must be a whole number when densifying a date range")
		}
		if !expr.IsTimeUnit(s.unit) {
			return mongoerr.New(mongoerr.FailedToParse, "unknown time unit value: %s", s.unit)
		}
	}
	switch bounds.Type {
	case bson.TypeString:
		switch b := bounds.StringValue(); b {
		case "full", "partition":
			s.bounds = b
			return nil
		}
		return mongoerr.New(mongoerr.DensifyBoundsBadString, "Bounds string must either be 'full' or 'partition'")
	case bson.TypeArray:
	default:
		return mongoerr.New(mongoerr.DensifyBoundsBadType, "The bounds in a range statement must be the string 'full', 'partition', or an ascending array of two numbers or two dates")
	}
	vals := arrayValues(bounds)
	if len(vals) != 2 {
		return mongoerr.New(mongoerr.DensifyBoundsNotPair, "A bounding array in a range statement must have exactly two elements")
	}
	s.lo, s.hi = vals[0], vals[1]
	if values.Compare(s.lo, s.hi) > 0 {
		return mongoerr.New(mongoerr.DensifyBoundsNotAscending, "A bounding array must be an ascending array of either two dates or two numbers")
	}
	switch {
	case values.IsNumber(s.lo.Type):
		if s.unit != "" {
			return mongoerr.New(mongoerr.DensifyNumericWithUnit, "Numeric bounds may not have unit parameter")
		}
		if !values.IsNumber(s.hi.Type) {
			return mongoerr.New(mongoerr.DensifyBoundsNumberMix, "A bounding array must contain either both dates or both numeric types")
		}
		if s.lo.Type != s.hi.Type || s.lo.Type != s.step.Type {
			return mongoerr.New(mongoerr.DensifyTypesDiffer, "Upper bound, lower bound, and step must all have the same type")
		}
	case s.lo.Type == bson.TypeDateTime:
		if s.hi.Type != bson.TypeDateTime {
			return mongoerr.New(mongoerr.DensifyBoundsDateMix, "A bounding array must contain either both dates or both numeric types")
		}
		if s.unit == "" {
			return mongoerr.New(mongoerr.DensifyDatesNeedUnit, "A bounding array of dates must specify a unit")
		}
	default:
		return mongoerr.New(mongoerr.DensifyBoundsNotNumbersOrDates, "Explicit bounds must be numeric or dates")
	}
	return nil
}

func (s *densifyStage) run(in Source, rt *runtime) Source {
	return &bufferSource{in: in, rt: rt, stage: "$densify", fill: func(out *docBuffer) error { return s.compute(in, rt, out) }}
}

// densifyPartition is the grid of one partition: its field values (for
// generated documents) and the next value of the grid, if any.
type densifyPartition struct {
	fields []field
	next   bson.RawValue
}

// compute puts the stage's output in out: the input in the order of the
// field, each document with its metadata (MongoDB's $densify passes its
// input Documents through), with the generated documents, which have none.
func (s *densifyStage) compute(in Source, rt *runtime, out *docBuffer) error {
	srt := sorter.New(sorter.Options{MaxMemory: rt.memoryLimit(), AllowDisk: rt.opts.AllowDiskUse, TempDir: rt.opts.TempDir, Budget: rt.opts.Budget})
	defer srt.Close()
	keys := sorter.NewSortKey(s.sort)
	for {
		doc, err := in.Next()
		if err != nil {
			return err
		}
		if doc == nil {
			break
		}
		key, err := keys.Of(doc)
		if err != nil {
			return err
		}
		if err := srt.Add(sorter.Entry{Key: key, Doc: doc, Meta: docsrc.MetaOf(in)}); err != nil {
			return err
		}
	}
	it, err := srt.Iterate()
	if err != nil {
		return err
	}
	generated, maxDocs := int64(0), rt.maxDensifyDocs()
	emit := func(d bson.Raw, meta docsrc.Meta, gen bool) error {
		if gen {
			if generated++; generated > maxDocs {
				return mongoerr.New(mongoerr.DensifyTooManyDocs, "Generated %d documents in $densify, which is over the limit of %d. Increase the 'internalQueryMaxAllowedDensifyDocs' parameter to allow more generated documents", generated, maxDocs)
			}
		}
		return out.add(d, meta)
	}
	parts := map[string]*densifyPartition{}
	var order []string // partitions in order of appearance
	// tableBytes is what the partition table holds: each partition's key,
	// fields and value, which MongoDB's memory tracker counts against
	// internalDocumentSourceDensifyMaxMemoryBytes (setPartitionValue).
	tableBytes, maxTable := int64(0), rt.densifyMemoryLimit()
	var first, last bson.RawValue
	// fill emits the grid values of p below v (or up to v when inclusive).
	fill := func(p *densifyPartition, v bson.RawValue, inclusive bool) error {
		for p.next.Type != 0 {
			c := values.Compare(p.next, v)
			if c > 0 || (c == 0 && !inclusive) {
				return nil
			}
			if err := emit(s.generate(p, p.next), docsrc.Meta{}, true); err != nil {
				return err
			}
			p.next = s.increment(p.next)
		}
		return nil
	}
	for {
		e, ok, err := it.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		doc := e.Doc
		v := lookupPath(doc, s.field)
		if v.Type == 0 || v.Type == bson.TypeNull {
			if err := emit(doc, e.Meta, false); err != nil {
				return err
			}
			continue
		}
		if err := s.checkType(v); err != nil {
			return err
		}
		pk, pfields, err := s.partitionOf(doc, rt)
		if err != nil {
			return err
		}
		p := parts[pk]
		if p == nil && len(s.partitions) > 0 {
			tableBytes += int64(len(pk) + len(v.Value))
			for _, f := range pfields {
				tableBytes += int64(len(f.key) + len(f.val.Value))
			}
			if tableBytes > maxTable {
				return mongoerr.New(mongoerr.DensifyMemoryExceeded, "$densify exceeded memory limit of %d", maxTable)
			}
		}
		if p == nil {
			p = &densifyPartition{fields: pfields}
			parts[pk] = p
			order = append(order, pk)
			switch s.bounds {
			case "full":
				if first.Type == 0 {
					first = v
				}
				p.next = first
			case "partition":
				p.next = v
			default:
				p.next = s.lo
			}
		}
		last = v
		if s.bounds == "" {
			if values.Compare(v, s.lo) >= 0 {
				bound := v
				if values.Compare(v, s.hi) > 0 {
					bound = s.hi
				}
				if err := fill(p, bound, false); err != nil {
					return err
				}
			}
		} else if err := fill(p, v, false); err != nil {
			return err
		}
		if p.next.Type != 0 && values.Compare(p.next, v) == 0 {
			// A document on the grid becomes the value the grid steps
			// from, as MongoDB's _current: the values generated after it
			// take its type (an int after Decimal128s, a double after
			// Decimal128s with a double step).
			p.next = s.increment(v)
		}
		if err := emit(doc, e.Meta, false); err != nil {
			return err
		}
	}
	// The ends: explicit bounds fill each partition (or, with no
	// partition fields, the one partition even without documents) below
	// the upper bound; "full" fills each partition up to the largest value.
	switch s.bounds {
	case "":
		if len(s.partitions) == 0 && len(order) == 0 {
			p := &densifyPartition{next: s.lo}
			parts[""], order = p, []string{""}
		}
		for _, k := range order {
			if err := fill(parts[k], s.hi, false); err != nil {
				return err
			}
		}
	case "full":
		for _, k := range order {
			if err := fill(parts[k], last, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkType checks a field value against the range, as MongoDB's
// DensifyValue::getFromValue (5733201) then assertDensifyType (6053600):
// a number or a date, numbers without a unit, dates with one.
func (s *densifyStage) checkType(v bson.RawValue) error {
	switch {
	case v.Type != bson.TypeDateTime && !values.IsNumber(v.Type):
		return mongoerr.New(mongoerr.DensifyValueType, "Densify field type must be numeric or a date")
	case v.Type == bson.TypeDateTime && s.unit == "":
		return mongoerr.New(mongoerr.DensifyUnitMismatch, "Encountered date densify value in collection when step does not have a date unit.")
	case v.Type != bson.TypeDateTime && s.unit != "":
		return mongoerr.New(mongoerr.DensifyUnitMismatch, "Encountered numeric densify value in collection when step has a date unit.")
	}
	return nil
}

// partitionOf is the key and the fields of doc's partition. As MongoDB's
// partition key, the object expression {<field>: "$<field>"}
// (DocumentSourceInternalDensify::initializeState), each field is the
// value of its field path, through arrays ("x.p" of {x: [{p: 1}]} is
// [1]), and a missing one is left out, so that it is not null: {} and
// {p: null} are two partitions.
func (s *densifyStage) partitionOf(doc bson.Raw, rt *runtime) (string, []field, error) {
	if len(s.partitions) == 0 {
		return "", nil, nil
	}
	var key []byte
	fs := make([]field, len(s.partitions))
	for i, p := range s.partitions {
		v, err := s.partExprs[i].Eval(rt.ectx, doc)
		if err != nil {
			return "", nil, err
		}
		if v.Type == 0 {
			key = append(key, 0)
		} else {
			key = rt.opts.Collator.AppendValueKey(append(key, 1), v)
		}
		fs[i] = field{p, v}
	}
	return string(key), fs, nil
}

// generate is a new document of partition p with the field at v: the
// partition key's value, then the field. A missing partition field is left
// out, but the objects of its path are there, as the nested object
// expression MongoDB evaluates makes them: "x.p" missing gives {x: {}}.
func (s *densifyStage) generate(p *densifyPartition, v bson.RawValue) bson.Raw {
	d := bson.Raw(emptyDoc)
	for _, f := range p.fields {
		path := splitPath(f.key)
		switch {
		case f.val.Type != 0:
			d = setPath(d, path, f.val)
		case len(path) > 1 && lookupPath(d, path[:len(path)-1]).Type == 0:
			d = setPath(d, path[:len(path)-1], docValue(emptyDoc))
		}
	}
	return setPath(d, s.field, v)
}

// increment is v plus one step.
func (s *densifyStage) increment(v bson.RawValue) bson.RawValue {
	if s.unit != "" {
		n, _ := values.Int64(s.step)
		t := expr.AddUnits(time.UnixMilli(v.DateTime()).UTC(), s.unit, n)
		return bson.RawValue{Type: bson.TypeDateTime, Value: appendInt64(nil, t.UnixMilli())}
	}
	sum, _ := values.Add(v, s.step)
	return sum
}
