package timeseries

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// A bucket holds the measurements of one meta value within one span of
// time, in MongoDB's (version 1) layout:
//
//	{_id: ObjectId, control: {version: 1, min: {...}, max: {...}},
//	 meta: <the metaField's value>,
//	 data: {<field>: {"0": <value>, "1": ...}, ...}}
//
// Each field of the measurements is a column keyed by the measurement's
// position; a measurement without the field has no entry. control.min and
// control.max hold each field's least and greatest value (the time's least
// rounded down to the bucket's start), which the filter on buckets reads;
// as MongoDB's bucket catalog keeps them (MinMax), those of an object are
// taken field by field and those of an array element by element, at any
// depth. A bucket holds measurements of one schema: a field (or subfield,
// or array element) keeps its canonical type class, so that a measurement
// changing one, as a number for a string or an array for an object, opens
// another bucket (MongoDB's Schema, a bucket closed for a schema change).
// The _id's time is the bucket's start.

// Bucket is a bucket being built or extended.
type Bucket struct {
	ID bson.ObjectID
	// Meta is the bucket's meta value; Type 0 when the measurements have
	// no metaField.
	Meta bson.RawValue
	// Start is the bucket's start: its first measurement's time, rounded
	// down.
	Start time.Time
	n     int
	order []string
	cols  map[string][]byte // each column's elements, appended
	min   map[string]bson.RawValue
	max   map[string]bson.RawValue
}

// NewBucket starts an empty bucket for meta whose first measurement is at
// t, rounded down to o's bucketRoundingSeconds.
func NewBucket(o Options, meta bson.RawValue, t time.Time) *Bucket {
	round := time.Duration(o.BucketRoundingSeconds) * time.Second
	start := t.UTC().Truncate(round)
	id := bson.NewObjectIDFromTimestamp(start)
	return &Bucket{ID: id, Meta: meta, Start: start, cols: map[string][]byte{}, min: map[string]bson.RawValue{}, max: map[string]bson.RawValue{}}
}

// Len is how many measurements the bucket holds.
func (b *Bucket) Len() int { return b.n }

// Misfit is why a measurement does not belong in a bucket, Fits when it
// does: as MongoDB's bucket catalog, a bucket closes when it is full or a
// measurement falls past (or before) its span.
type Misfit int

const (
	Fits Misfit = iota
	// OtherMeta: the measurement has another meta value.
	OtherMeta
	// Full: the bucket holds MaxMeasurements.
	Full
	// TimeForward: the measurement is at or after the span's end.
	TimeForward
	// TimeBackward: the measurement is before the bucket's start.
	TimeBackward
	// SchemaChange: a field of the measurement has another canonical type
	// class than the bucket's measurements gave it.
	SchemaChange
)

// Misfit says whether doc, a measurement of meta at t, belongs in b: the
// same meta value, within the bucket's span, room left, and the bucket's
// schema.
func (b *Bucket) Misfit(o Options, doc bson.Raw, meta bson.RawValue, t time.Time) Misfit {
	switch {
	case b.Meta.Type != meta.Type || !bytes.Equal(b.Meta.Value, meta.Value):
		return OtherMeta
	case b.n >= MaxMeasurements:
		return Full
	case t.Before(b.Start):
		return TimeBackward
	case !t.Before(b.Start.Add(time.Duration(o.BucketMaxSpanSeconds) * time.Second)):
		return TimeForward
	}
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return Fits
		}
		if o.MetaField != "" && string(k) == o.MetaField {
			continue
		}
		if m, seen := b.min[string(k)]; seen && !sameSchema(m, v) {
			return SchemaChange
		}
	}
}

// sameSchema reports whether v keeps the schema of bound, a field's
// control bound: the same canonical type class, and for objects and
// arrays, the same for the subfields and elements both have.
func sameSchema(bound, v bson.RawValue) bool {
	if values.Rank(bound.Type) != values.Rank(v.Type) {
		return false
	}
	if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
		return true
	}
	return !anyPaired(bound, v, func(b, sub bson.RawValue) bool { return b.Type != 0 && !sameSchema(b, sub) })
}

// MixedSchema reports whether bucket, a bucket document, has a field whose
// control.min and control.max differ in canonical type class, at any depth
// (MongoDB's doesMinMaxHaveMixedSchemaData): a bucket that holds
// measurements of more than one schema. A bucket without both bounds has
// none.
func MixedSchema(bucket bson.Raw) bool {
	min, okMin := bucket.Lookup("control", "min").DocumentOK()
	max, okMax := bucket.Lookup("control", "max").DocumentOK()
	if !okMin || !okMax {
		return false
	}
	return anyPaired(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: max}, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: min},
		func(hi, lo bson.RawValue) bool { return hi.Type != 0 && !sameSchema(hi, lo) })
}

// anyPaired reports whether f holds of one of the subvalues of v, an
// object or an array of bound's type, paired with bound's at the same
// field name or position (b.Type 0 where bound has none).
func anyPaired(bound, v bson.RawValue, f func(b, sub bson.RawValue) bool) bool {
	it, bt := rawdoc.Iterate(v.Value), rawdoc.Iterate(bound.Value)
	for {
		k, sub, ok := it.Next()
		if !ok {
			return false
		}
		var b bson.RawValue
		if v.Type == bson.TypeArray {
			_, b, _ = bt.Next()
		} else {
			b = rawdoc.Lookup(bound.Value, string(k))
		}
		if f(b, sub) {
			return true
		}
	}
}

// boundMoves reports whether v moves bound, a field's least (dir -1) or
// greatest (dir 1) value: field by field when both are objects, element
// by element when both are arrays (a field or element bound lacks moves
// it), else as values compare under c.
func boundMoves(c *collation.Collator, bound, v bson.RawValue, dir int) bool {
	if bound.Type != v.Type || (v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray) {
		return c.Compare(v, bound)*dir > 0
	}
	return anyPaired(bound, v, func(b, sub bson.RawValue) bool { return b.Type == 0 || boundMoves(c, b, sub, dir) })
}

// appendBound appends the value of bound moved by v (see boundMoves):
// an object's fields in bound's order, then v's new ones; an array as
// long as the longer of the two.
func appendBound(dst []byte, c *collation.Collator, bound, v bson.RawValue, dir int) []byte {
	if bound.Type != v.Type || (v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray) {
		if c.Compare(v, bound)*dir > 0 {
			return append(dst, v.Value...)
		}
		return append(dst, bound.Value...)
	}
	start, dst := bsoncore.AppendDocumentStart(dst)
	if v.Type == bson.TypeArray {
		bt, vt := rawdoc.Iterate(bound.Value), rawdoc.Iterate(v.Value)
		for i := 0; ; i++ {
			_, b, bok := bt.Next()
			_, e, vok := vt.Next()
			switch {
			case !bok && !vok:
				dst, _ = bsoncore.AppendDocumentEnd(dst, start)
				return dst
			case !vok:
				dst = rawdoc.AppendElement(dst, strconv.Itoa(i), b)
			case !bok:
				dst = rawdoc.AppendElement(dst, strconv.Itoa(i), e)
			default:
				dst = appendBoundElement(dst, c, strconv.Itoa(i), b, e, dir)
			}
		}
	}
	bt := rawdoc.Iterate(bound.Value)
	for {
		k, b, ok := bt.Next()
		if !ok {
			break
		}
		if e := rawdoc.Lookup(v.Value, string(k)); e.Type != 0 {
			dst = appendBoundElement(dst, c, string(k), b, e, dir)
		} else {
			dst = rawdoc.AppendElement(dst, string(k), b)
		}
	}
	vt := rawdoc.Iterate(v.Value)
	for {
		k, e, ok := vt.Next()
		if !ok {
			break
		}
		if rawdoc.Lookup(bound.Value, string(k)).Type == 0 {
			dst = rawdoc.AppendElement(dst, string(k), e)
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// appendBoundElement appends the element key of appendBound's value.
func appendBoundElement(dst []byte, c *collation.Collator, key string, bound, v bson.RawValue, dir int) []byte {
	t := bound.Type
	if (bound.Type != v.Type || (v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray)) && c.Compare(v, bound)*dir > 0 {
		t = v.Type
	}
	dst = bsoncore.AppendHeader(dst, bsoncore.Type(t), key)
	return appendBound(dst, c, bound, v, dir)
}

// moveBound is bound moved by v, in bytes of its own.
func moveBound(c *collation.Collator, bound, v bson.RawValue, dir int) bson.RawValue {
	t := bound.Type
	if (bound.Type != v.Type || (v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray)) && c.Compare(v, bound)*dir > 0 {
		t = v.Type
	}
	return bson.RawValue{Type: t, Value: appendBound(nil, c, bound, v, dir)}
}

// Measurement checks doc as a measurement of o: its time (a date) and its
// meta value (Type 0 when absent).
func Measurement(o Options, doc bson.Raw) (t time.Time, meta bson.RawValue, err error) {
	tv, err := doc.LookupErr(o.TimeField)
	if err != nil || tv.Type != bson.TypeDateTime {
		return t, meta, mongoerr.New(mongoerr.BadValue, "'%s' must be present and contain a valid BSON UTC datetime value", o.TimeField)
	}
	if o.MetaField != "" {
		meta = normalizeMeta(doc.Lookup(o.MetaField))
	}
	return tv.Time(), meta, nil
}

// normalizeMeta is a metaField value in MongoDB's normalized form: the
// fields of every object in it, at any depth and inside arrays, in the
// byte order of their names; arrays keep their order. Measurements whose
// meta values differ only in field order share a bucket, which stores this
// form, so the view shows it (MongoDB's timeseries::metadata::normalize,
// through which the bucket catalog passes every measurement's meta). A
// value already in that form is returned as it is, uncopied.
func normalizeMeta(v bson.RawValue) bson.RawValue {
	if (v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray) || metaNormalized(v.Value, v.Type == bson.TypeArray) {
		return v
	}
	return bson.RawValue{Type: v.Type, Value: appendNormalized(nil, v.Value, v.Type == bson.TypeArray)}
}

// metaNormalized reports whether doc (an array when isArray) and the
// objects in it have their fields in order.
func metaNormalized(doc []byte, isArray bool) bool {
	it := rawdoc.Iterate(doc)
	var prev []byte
	for first := true; ; first = false {
		k, v, ok := it.Next()
		if !ok {
			return true
		}
		if !isArray && !first && bytes.Compare(prev, k) > 0 {
			return false
		}
		prev = k
		if (v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray) && !metaNormalized(v.Value, v.Type == bson.TypeArray) {
			return false
		}
	}
}

// appendNormalized appends doc (an array when isArray) in normalized form.
func appendNormalized(dst, doc []byte, isArray bool) []byte {
	type field struct {
		key []byte
		v   bson.RawValue
	}
	var fields []field
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		fields = append(fields, field{k, v})
	}
	if !isArray {
		slices.SortStableFunc(fields, func(a, b field) int { return bytes.Compare(a.key, b.key) })
	}
	start, dst := bsoncore.AppendDocumentStart(dst)
	for _, f := range fields {
		if f.v.Type == bson.TypeEmbeddedDocument || f.v.Type == bson.TypeArray {
			dst = bsoncore.AppendHeader(dst, bsoncore.Type(f.v.Type), string(f.key))
			dst = appendNormalized(dst, f.v.Value, f.v.Type == bson.TypeArray)
			continue
		}
		dst = rawdoc.AppendElement(dst, string(f.key), f.v)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// Add appends doc, a measurement of meta that Fits, to the bucket.
func (b *Bucket) Add(o Options, doc bson.Raw) error {
	elems, err := doc.Elements()
	if err != nil {
		return err
	}
	key := strconv.Itoa(b.n)
	for _, el := range elems {
		f := el.Key()
		if f == o.MetaField && o.MetaField != "" {
			continue
		}
		v := el.Value()
		col, seen := b.cols[f]
		if !seen {
			b.order = append(b.order, f)
		}
		b.cols[f] = bsoncore.AppendValueElement(col, key, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		// The bounds are kept in their own bytes: doc may be a buffer
		// its caller reuses (Unpack's measurements, as LoadBucket adds
		// them).
		if m, ok := b.min[f]; !ok {
			b.min[f] = bson.RawValue{Type: v.Type, Value: slices.Clone(v.Value)}
		} else if boundMoves(o.Collator, m, v, -1) {
			b.min[f] = moveBound(o.Collator, m, v, -1)
		}
		if m, ok := b.max[f]; !ok {
			b.max[f] = bson.RawValue{Type: v.Type, Value: slices.Clone(v.Value)}
		} else if boundMoves(o.Collator, m, v, 1) {
			b.max[f] = moveBound(o.Collator, m, v, 1)
		}
	}
	b.n++
	return nil
}

// Document is the bucket's document.
func (b *Bucket) Document(o Options) bson.Raw {
	doc := bsoncore.NewDocumentBuilder().AppendObjectID("_id", b.ID)
	ctl := bsoncore.NewDocumentBuilder().AppendInt32("version", 1)
	mins, maxs := bsoncore.NewDocumentBuilder(), bsoncore.NewDocumentBuilder()
	for _, f := range b.order {
		lo := b.min[f]
		if f == o.TimeField {
			lo = bson.RawValue{Type: bson.TypeDateTime, Value: bsoncore.AppendDateTime(nil, b.Start.UnixMilli())}
		}
		mins.AppendValue(f, bsoncore.Value{Type: bsoncore.Type(lo.Type), Data: lo.Value})
		hi := b.max[f]
		maxs.AppendValue(f, bsoncore.Value{Type: bsoncore.Type(hi.Type), Data: hi.Value})
	}
	ctl.AppendDocument("min", mins.Build()).AppendDocument("max", maxs.Build())
	doc.AppendDocument("control", ctl.Build())
	if b.Meta.Type != 0 {
		doc.AppendValue("meta", bsoncore.Value{Type: bsoncore.Type(b.Meta.Type), Data: b.Meta.Value})
	}
	data := bsoncore.NewDocumentBuilder()
	for _, f := range b.order {
		col := bsoncore.BuildDocument(nil, b.cols[f])
		data.AppendDocument(f, col)
	}
	doc.AppendDocument("data", data.Build())
	return bson.Raw(doc.Build())
}

// EmptyBucket is an empty bucket with the _id, start and meta value of
// the bucket document doc, to refill.
func EmptyBucket(doc bson.Raw) (*Bucket, error) {
	id, ok := doc.Lookup("_id").ObjectIDOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "a time series bucket without an ObjectId _id")
	}
	return &Bucket{ID: id, Start: id.Timestamp().UTC(), Meta: doc.Lookup("meta"), cols: map[string][]byte{}, min: map[string]bson.RawValue{}, max: map[string]bson.RawValue{}}, nil
}

// LoadBucket reads a bucket document of o to extend it.
func LoadBucket(o Options, doc bson.Raw) (*Bucket, error) {
	b, err := EmptyBucket(doc)
	if err != nil {
		return nil, err
	}
	err = Unpack(o, doc, func(m bson.Raw) error { return b.Add(o, m) })
	return b, err
}

// Unpack calls fn with each measurement of bucket, in the bucket's order:
// the time first, the meta value next, then the other fields in the order
// of the bucket's columns. m is valid until fn returns.
func Unpack(o Options, bucket bson.Raw, fn func(m bson.Raw) error) error {
	return Unpacking{Options: o}.Unpack(bucket, fn)
}

// Unpack calls fn with each measurement of bucket as u keeps it, in the
// bucket's order, as MongoDB's BucketUnpacker builds it: the time first,
// the meta value next, the other fields in the order of the bucket's
// columns, then the computed fields, which take the place of a time,
// meta or column of their name. A bucket is checked as the unpacker
// resets to it: not empty (5346510), data an object (10065) with
// measurements (5346509) and the time column (5346700), a meta only with
// a metaField (5369601) and not undefined (5369600), control an object
// (5857902) with a numeric version (5857903) of 1; a compressed bucket
// (version 2) Folio does not read (NotImplemented). m is valid until fn
// returns.
func (u Unpacking) Unpack(bucket bson.Raw, fn func(m bson.Raw) error) error {
	if len(bucket) <= 5 {
		return mongoerr.New(mongoerr.UnpackEmptyBucket, "An empty bucket cannot be unpacked")
	}
	dataValue := bucket.Lookup("data")
	data, ok := dataValue.DocumentOK()
	if !ok {
		return mongoerr.ExpectedObject(map[bool]string{true: "data", false: ""}[dataValue.Type != 0])
	}
	noMeasurements := func() error {
		id := "EOO"
		if v := bucket.Lookup("_id"); v.Type != 0 {
			id = values.ShellElement("_id", v)
		}
		return mongoerr.New(mongoerr.UnpackNoMeasurements, "A bucket with _id %s contains an empty data region", id)
	}
	if len(data) <= 5 {
		return noMeasurements()
	}
	timeValue := data.Lookup(u.TimeField)
	if timeValue.Type == 0 {
		return mongoerr.New(mongoerr.UnpackNoTimeColumn, "The $_internalUnpackBucket stage requires the data region to have a timeField object")
	}
	meta := bucket.Lookup("meta")
	switch {
	case u.MetaField == "" && meta.Type != 0:
		return mongoerr.New(mongoerr.UnpackUnexpectedMeta, "The $_internalUnpackBucket stage expects buckets to have missing metadata regions if the metaField parameter is not provided")
	case u.MetaField != "" && meta.Type == bson.TypeUndefined:
		return mongoerr.New(mongoerr.UnpackMetaUndefined, "The $_internalUnpackBucket stage allows metadata to be absent or otherwise, it must not be the deprecated undefined bson type")
	}
	control, ok := bucket.Lookup("control").DocumentOK()
	if !ok {
		return mongoerr.New(mongoerr.UnpackNoControl, "The $_internalUnpackBucket stage requires 'control' object to be present")
	}
	version := control.Lookup("version")
	if !version.IsNumber() {
		return mongoerr.New(mongoerr.UnpackNoVersion, "The $_internalUnpackBucket stage requires 'control.version' field to be present")
	}
	switch n, _ := values.Float64(version); n {
	case 1:
	case 2:
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not read compressed time series buckets (control.version 2)")
	default:
		return mongoerr.New(mongoerr.UnpackBadVersion, "Invalid bucket version")
	}
	cols, err := data.Elements()
	if err != nil {
		return err
	}
	type column struct {
		name  string
		elems []bson.RawElement
		next  int
	}
	var timeCol *column
	var others []*column
	computed := u.Computed
	if !u.Include {
		// an excluded field is not computed either
		computed = slices.DeleteFunc(slices.Clone(computed), func(f string) bool { return slices.Contains(u.Fields, f) })
	}
	for _, c := range cols {
		d, ok := c.Value().DocumentOK()
		if !ok {
			continue
		}
		elems, err := d.Elements()
		if err != nil {
			return err
		}
		col := &column{name: c.Key(), elems: elems}
		switch {
		case col.name == u.TimeField:
			timeCol = col
		case u.keeps(col.name) && !slices.Contains(computed, col.name):
			others = append(others, col)
		}
	}
	if timeCol == nil || len(timeCol.elems) == 0 {
		return noMeasurements()
	}
	keepTime := u.keeps(u.TimeField) && !slices.Contains(computed, u.TimeField)
	hasMeta := u.MetaField != "" && meta.Type != 0 && !slices.Contains(computed, u.MetaField) && u.keeps(u.MetaField)
	var buf []byte
	for _, te := range timeCol.elems {
		key := te.Key()
		start, out := bsoncore.AppendDocumentStart(buf[:0])
		if keepTime {
			out = bsoncore.AppendValueElement(out, u.TimeField, bsoncore.Value{Type: bsoncore.Type(te.Value().Type), Data: te.Value().Value})
		}
		if hasMeta {
			out = bsoncore.AppendValueElement(out, u.MetaField, bsoncore.Value{Type: bsoncore.Type(meta.Type), Data: meta.Value})
		}
		for _, c := range others {
			if c.next < len(c.elems) && c.elems[c.next].Key() == key {
				v := c.elems[c.next].Value()
				out = bsoncore.AppendValueElement(out, c.name, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
				c.next++
			}
		}
		for _, f := range computed {
			if v := bucket.Lookup(f); v.Type != 0 {
				out = bsoncore.AppendValueElement(out, f, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
			}
		}
		out, _ = bsoncore.AppendDocumentEnd(out, start)
		buf = out
		if err := fn(bson.Raw(out)); err != nil {
			return err
		}
	}
	return nil
}

// ArrayAlong reports whether a measurement of bucket holds an array along
// the dotted path f (at f or at one of its prefixes), as MongoDB's index
// key generation for the buckets' bounds of f checks
// (haveArrayAlongBucketDataPath). Only a bucket whose control.min or
// control.max meets an array along f can hold one: a bound is an array
// wherever a measurement's value is (element by element in one schema,
// the greatest value, arrays sorting after scalars and objects, across
// several), so the data columns are read only then.
func ArrayAlong(bucket bson.Raw, f string) bool {
	control, _ := bucket.Lookup("control").DocumentOK()
	if !arrayOnPath(control.Lookup("min"), f) && !arrayOnPath(control.Lookup("max"), f) {
		return false
	}
	first, rest, _ := strings.Cut(f, ".")
	col, ok := bucket.Lookup("data", first).DocumentOK()
	if !ok {
		return false
	}
	it := rawdoc.Iterate(col)
	for {
		_, v, ok := it.Next()
		if !ok {
			return false
		}
		if v.Type == bson.TypeArray || rest != "" && arrayOnPath(v, rest) {
			return true
		}
	}
}

// arrayOnPath reports whether v, or a value along the dotted path from v,
// is an array.
func arrayOnPath(v bson.RawValue, path string) bool {
	for {
		switch v.Type {
		case bson.TypeArray:
			return true
		case bson.TypeEmbeddedDocument:
		default:
			return false
		}
		if path == "" {
			return false
		}
		var part string
		part, path, _ = strings.Cut(path, ".")
		v = rawdoc.Lookup(v.Value, part)
	}
}
