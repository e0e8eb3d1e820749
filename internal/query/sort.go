package query

import (
	"slices"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Sort is a compiled sort specification.
type Sort struct {
	keys    []sortKey
	natural int
	coll    *collation.Collator // strings sort by it (nil: simple)
}

// Collated is s with strings ordered by coll: its keys (Keys) hold
// collation keys in place of strings.
func (s *Sort) Collated(coll *collation.Collator) *Sort {
	c := *s
	c.coll = coll
	return &c
}

type sortKey struct {
	field string
	path  fieldPath
	desc  bool
	// textScore sorts by the document's text score, highest first;
	// randVal by its randVal metadata, which no document of a find or of
	// a stage other than $sample carries (a missing key); geoNear by the
	// distance a $near or $geoNear measured, farthest first (SortPattern
	// sorts every $meta key descending).
	textScore, randVal, geoNear bool
}

// byMeta reports whether the key is a {$meta} one, read from the
// document's metadata rather than from a path.
func (k sortKey) byMeta() bool { return k.textScore || k.randVal || k.geoNear }

// MaxCompoundFields is the most fields a sort or an index key pattern may
// name (Ordering's kMaxCompoundIndexKeys).
const MaxCompoundFields = 32

// CompileSort parses a sort specification such as {a: 1, b: -1}. Each value
// must be 1 or -1 (any numeric type); {$natural: ±1} requests natural order
// and is reported by Natural; {$meta: "textScore"} sorts by the text
// score, highest first, {$meta: "geoNearDistance"} by the $near or
// $geoNear distance, farthest first, and {$meta: "randVal"} by the randVal
// metadata (MongoDB 7.0's SortPattern takes the three), which Folio's
// documents never carry: its keys are all missing.
func CompileSort(spec bson.Raw) (*Sort, error) { return compileSort(spec, false) }

// CompileSortPattern parses an aggregation's sort specification ($sort,
// the sortBy of $setWindowFields, $fill, $top, $bottom and their N forms)
// as MongoDB's SortPattern does: as CompileSort, but $natural is no
// natural order there, only a field path, which FieldPath refuses for its
// '$' (16410) in its place among the keys.
func CompileSortPattern(spec bson.Raw) (*Sort, error) { return compileSort(spec, true) }

// compileSort is CompileSort; pattern makes it SortPattern's.
func compileSort(spec bson.Raw, pattern bool) (*Sort, error) {
	if len(spec) > 0 && rawdoc.Validate(spec) != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid BSON in sort document")
	}
	s := &Sort{}
	fields := 0 // the keys by a field, which MongoDB's Ordering counts
	it := rawdoc.Iterate(spec)
	for {
		k, v, ok := it.Next()
		if !ok {
			return s, nil
		}
		field := string(k)
		if v.Type == bson.TypeEmbeddedDocument {
			if rawdoc.FirstKey(v.Value) == "$meta" {
				// MongoDB's SortPattern: {$meta} alone, then the name.
				if rawdoc.Len(v.Value) != 1 {
					return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot have additional keys in a $meta sort specification")
				}
				arg := bson.Raw(v.Value).Lookup("$meta")
				name, _ := arg.StringValueOK()
				switch name {
				case "textScore", "randVal", "geoNearDistance":
				case "searchScore":
					return nil, mongoerr.New(mongoerr.SortMetaSearchScore, "$meta sort by 'searchScore' metadata is not supported")
				case "searchHighlights":
					return nil, mongoerr.New(mongoerr.SortMetaSearchHighlights, "$meta sort by 'searchHighlights' metadata is not supported")
				default:
					return nil, mongoerr.New(mongoerr.SortMetaIllegal, "Illegal $meta sort: %s", values.ShellElement("$meta", arg))
				}
				s.keys = append(s.keys, sortKey{field: field, desc: true, textScore: name == "textScore", randVal: name == "randVal", geoNear: name == "geoNearDistance"})
				continue
			}
			return nil, mongoerr.New(mongoerr.SortMetaOnly, "$meta is the only expression supported by $sort right now")
		}
		if !values.IsNumber(v.Type) {
			return nil, mongoerr.New(mongoerr.SortKeyIllegal, "Illegal key in $sort specification: %s: %s", field, values.Shell(v))
		}
		// MongoDB reads the direction as a long: a double truncated, a
		// decimal rounded half to even (1.999 and 0.51 are ascending).
		dir := expr.SafeLong(v)
		if dir != 1 && dir != -1 {
			return nil, mongoerr.New(mongoerr.SortKeyOrderInvalid, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
		}
		if field == "$natural" && !pattern {
			s.natural = int(dir)
			continue
		}
		if err := expr.CheckFieldPath(field); err != nil {
			return nil, err
		}
		if fields++; fields > MaxCompoundFields {
			return nil, mongoerr.New(mongoerr.TooManyCompoundKeys, "too many compound keys")
		}
		s.keys = append(s.keys, sortKey{field: field, path: parsePath(field), desc: dir < 0})
	}
}

// CheckNatural applies MongoDB's rule on a find's sort or hint (what names
// which) that holds $natural: it must be exactly {$natural: 1} or
// {$natural: -1}, the number of any numeric type (BadValue otherwise, also
// beside other fields).
func CheckNatural(spec bson.Raw, what string) error {
	v := rawdoc.Lookup(spec, "$natural")
	if v.Type == 0 {
		return nil
	}
	if !values.IsNumber(v.Type) || rawdoc.Len(spec) != 1 ||
		values.Compare(v, values.Int32Value(1)) != 0 && values.Compare(v, values.Int32Value(-1)) != 0 {
		return mongoerr.New(mongoerr.BadValue, "$natural %s cannot be set to a value other than -1 or 1.", what)
	}
	return nil
}

// Natural is 1 or -1 when the sort asks for natural order, else 0.
func (s *Sort) Natural() int { return s.natural }

// Fields are the sort fields in order, with -1 for descending and 1 for
// ascending.
func (s *Sort) Fields() (fields []string, dirs []int) {
	for _, k := range s.keys {
		d := 1
		if k.desc {
			d = -1
		}
		fields = append(fields, k.field)
		dirs = append(dirs, d)
	}
	return fields, dirs
}

// ByMeta reports whether the sort has a {$meta} key, which no index
// order provides.
func (s *Sort) ByMeta() bool { return slices.ContainsFunc(s.keys, sortKey.byMeta) }

// Empty reports whether the sort has no field keys.
func (s *Sort) Empty() bool { return len(s.keys) == 0 }

// NeedsRandVal reports whether the sort orders by {$meta: "randVal"}.
func (s *Sort) NeedsRandVal() bool {
	return slices.ContainsFunc(s.keys, func(k sortKey) bool { return k.randVal })
}

// NeedsTextScore reports whether the sort orders by {$meta: "textScore"}.
func (s *Sort) NeedsTextScore() bool {
	return slices.ContainsFunc(s.keys, func(k sortKey) bool { return k.textScore })
}

// NeedsGeoNearDistance reports whether the sort orders by {$meta:
// "geoNearDistance"}.
func (s *Sort) NeedsGeoNearDistance() bool {
	return slices.ContainsFunc(s.keys, func(k sortKey) bool { return k.geoNear })
}

// KeysMeta is KeysErr with the text score and $geoNear distance keys
// taken from meta: null for a document without one (one an $or's other
// branch found beside its $text), as MongoDB's SortKeyGenerator keys a
// missing $meta value. A query or pipeline that cannot give them at all is
// refused before it runs (40218).
func (s *Sort) KeysMeta(doc bson.Raw, meta docsrc.Meta) ([]bson.RawValue, error) {
	keys, err := s.KeysErr(doc)
	if err != nil {
		return nil, err
	}
	for i, k := range s.keys {
		switch {
		case k.textScore && meta.HasTextScore:
			keys[i] = bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, meta.TextScore)}
		case k.geoNear && meta.HasGeoNear:
			keys[i] = bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, meta.GeoNearDistance)}
		case k.textScore, k.geoNear:
			keys[i] = bson.RawValue{Type: bson.TypeNull}
		}
	}
	return keys, nil
}

// CompareKeys compares two keys produced by KeysErr.
func (s *Sort) CompareKeys(a, b []bson.RawValue) int {
	for i, k := range s.keys {
		if c := values.Compare(sortValue(a[i]), sortValue(b[i])); c != 0 {
			if k.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// sortValue treats missing as null.
func sortValue(v bson.RawValue) bson.RawValue {
	if v.Type == 0 {
		return bson.RawValue{Type: bson.TypeNull}
	}
	return v
}
