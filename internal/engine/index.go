package engine

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/fts"
	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// IndexField is one field of an index key pattern.
type IndexField = planner.Field

// Index is a secondary index: its definition and what the write and read
// paths need to maintain and use it. Indexes are immutable once built.
type Index struct {
	ID     uint32
	Name   string
	Fields []IndexField
	// Spec is the definition as listIndexes reports it.
	Spec   bson.Raw
	Unique bool
	// PrepareUnique refuses writes that add a key another document holds,
	// leaving the duplicates already there (MongoDB's first step of
	// converting an index to unique with collMod).
	PrepareUnique bool
	// idKeyed reports that entries are keyed with the record id after the
	// key values: every index created non-unique, including one collMod
	// then made unique. An index created unique keys its entries by the
	// values alone, so two documents' equal keys collide on one entry.
	idKeyed bool
	Sparse  bool
	Hidden  bool
	partial *query.Filter
	// ExpireAfter is the TTL in seconds, or -1 when the index has none.
	ExpireAfter int64
	// multikey is set once some document has indexed an array: from then
	// on two range conditions on one field may be met by different
	// elements, so the planner may not intersect them.
	multikey atomic.Bool
	// coarseCells is set once some document keyed a 2dsphere field by a
	// cell coarser than a leaf (a line, a polygon); until then every key
	// is a point's leaf cell, and a $near reads no ancestor cells.
	coarseCells atomic.Bool
	// state is the index's schema state (index_states.go); an Index's
	// state never changes, a new state is a new Index.
	state indexState
	// builder is the frontend moving a non-public index through its
	// states.
	builder string
	// build, while the index is being built, is the id of the first index
	// of its build (the createIndexes that started it), which dropIndexes
	// aborts whole; 0 once public and while being dropped.
	build uint32
	// buildUUID is storedIndex.BuildUUID (zero: none).
	buildUUID [16]byte
	// hints let forward scans skip the deleted entries at the head of a
	// range; a modified index (collMod) keeps its hints.
	hints *seekHints
	// coll is the index's collation (nil: simple); its string keys are
	// collation keys, so ranges, uniqueness and order follow it.
	coll *collation.Collator
	// v1: the index is of version 1 (IndexSpec.Version).
	v1 bool
	// sharedFirstPart: two plain fields share their first path part, so
	// they may run through one array (index_pairs.go).
	sharedFirstPart bool
	// arrays are the array components of the fields' paths; nil on an
	// index not tracking them (index_arrays.go).
	arrays atomic.Pointer[[]uint64]
	// crossKeys: the index's keys hold every combination of its fields'
	// values, as Folio keyed indexes before it keyed the fields running
	// through one array by element (storedIndex.ElementKeys absent).
	crossKeys bool
	// wild is set on a wildcard index (index_wildcard.go).
	wild *wildcardIndex
	// text is set on a text index (index_text.go).
	text *textIndex
	// flat is set on a 2d index: its plane (index_geo.go).
	flat *geo.Flat
	// usage counts the operations that read the index; a modified index
	// keeps it unless hidden or unhidden.
	usage *IndexUsage
}

// IndexUsage counts the operations whose plan read an index since Since
// (its creation, or the server's start), as $indexStats reports them.
type IndexUsage struct {
	ops   atomic.Int64
	Since time.Time
}

// Ops is how many operations read the index.
func (u *IndexUsage) Ops() int64 { return u.ops.Load() }

// Usage is the index's usage.
func (ix *Index) Usage() *IndexUsage { return ix.usage }

// UnderConstruction reports whether the index is being built (not public,
// and not being dropped).
func (ix *Index) UnderConstruction() bool { return ix.build != 0 }

// IsText reports whether ix is a text index.
func (ix *Index) IsText() bool { return ix.text != nil }

// Multikey reports whether the index has indexed an array.
func (ix *Index) Multikey() bool { return ix.multikey.Load() }

// IndexSpec is a requested index, as createIndexes describes it.
type IndexSpec struct {
	Name          string
	Key           bson.Raw
	Unique        bool
	PrepareUnique bool
	Sparse        bool
	Hidden        bool
	// Background is the background option as given (Type 0: not
	// given); MongoDB builds every index the same way since 4.2 but keeps
	// the option, as given, in the specification, and so does Folio.
	Background  bson.RawValue
	Partial     bson.Raw
	ExpireAfter int64 // -1: none
	// StorageEngine holds storage engine options, kept and reported as
	// given; they do not change how Folio stores the index.
	StorageEngine bson.Raw
	// Collation is the collation document as requested; nil inherits the
	// collection's default (see resolveIndexCollation).
	Collation bson.Raw
	// WildcardProjection selects the paths of a {"$**": 1} index; createIndexes
	// refuses it on any other.
	WildcardProjection bson.Raw
	// Text are a text index's options (fixTextSpec normalizes them),
	// Flat a 2d index's min, max and bits, Sphere a 2dsphere index's. On
	// an index of another type they are kept and reported as given and
	// change nothing, as in MongoDB, which checks only their types there
	// (weights excepted: only a text index takes them).
	Text   fts.Options
	Flat   geo.FlatOptions
	Sphere SphereOptions
	// Version is the index version, v: 1 or 2 (0 is 2, the default). A
	// version 1 index has no collation and refuses decimal keys, as
	// MongoDB's KeyString V0 does; its keys order as version 2's.
	Version int32
	// OriginalSpec is, on an index of a time series collection's buckets
	// whose specification the buckets' form does not tell (a partial
	// filter translated to the buckets), the specification the user gave
	// on the measurements, which listIndexes on the collection shows
	// (MongoDB's originalSpec).
	OriginalSpec bson.Raw
	// Clustered is createIndexes' clustered option: the specification
	// names the collection's clustered index, which exists with the
	// collection; the commands check it against the collection's and ask
	// the engine for no index of it.
	Clustered bool
}

// version is the index version listIndexes reports: 2 unless 1 was asked.
func (spec IndexSpec) version() int32 {
	if spec.Version == 1 {
		return 1
	}
	return 2
}

// idIndexName is the name of the _id index every collection has.
const idIndexName = planner.IDIndexName

// newIndex validates spec and builds the Index with id.
func newIndex(id uint32, spec IndexSpec) (*Index, error) {
	elems, err := spec.Key.Elements()
	if err != nil || len(elems) == 0 {
		return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Index keys cannot be empty.")
	}
	ix := &Index{ID: id, Name: spec.Name, Unique: spec.Unique, PrepareUnique: spec.PrepareUnique, idKeyed: !spec.Unique,
		Sparse: spec.Sparse, Hidden: spec.Hidden, ExpireAfter: spec.ExpireAfter, hints: &seekHints{},
		usage: &IndexUsage{Since: time.Now()}}
	if err := onePlugin(elems); err != nil {
		return nil, err
	}
	if fts.IsTextKey(spec.Key) {
		if err := newTextIndex(ix, spec); err != nil {
			return nil, err
		}
		elems = nil
	} else if slices.ContainsFunc(elems, func(el bson.RawElement) bool { return isWildcardKey(el.Key()) }) {
		if ix.wild, err = newWildcard(spec, elems); err != nil {
			return nil, err
		}
	}
	for i, el := range elems {
		if ix.wild != nil && i == ix.wild.pos {
			ix.Fields = append(ix.Fields, wildcardFields(el.Key())...)
			continue
		}
		path := el.Key()
		if path == "" || strings.HasPrefix(path, "$") || strings.Contains(path, "..") || strings.HasSuffix(path, ".") || strings.HasPrefix(path, ".") {
			return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Index key contains an illegal field name: %q", path)
		}
		v := el.Value()
		var desc bool
		switch v.Type {
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
			f := numberValue(v)
			if f == 0 {
				return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Values in the index key pattern can't be 0: %s: 0", path)
			}
			desc = f < 0
		case bson.TypeString:
			f, err := pluginField(path, v.StringValue())
			if err != nil {
				return nil, err
			}
			ix.Fields = append(ix.Fields, f)
			continue
		default:
			return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Values in v:2 index key pattern cannot be of type %s. Only numbers > 0, numbers < 0, and strings are allowed.", v.Type)
		}
		ix.Fields = append(ix.Fields, IndexField{Path: path, Parts: strings.Split(path, "."), Desc: desc})
	}
	if err := checkPlugins(ix, spec); err != nil {
		return nil, err
	}
	if keys, _ := spec.Key.Elements(); len(keys) > query.MaxCompoundFields {
		return nil, mongoerr.New(mongoerr.TooManyCompoundKeys, "too many compound keys")
	}
	ix.v1 = spec.Version == 1
	ix.sharedFirstPart = ix.wild == nil && ix.text == nil && sharedFirstPart(ix.Fields)
	if ix.arrayTrackingKind() {
		ix.arrays.Store(new(make([]uint64, len(ix.Fields))))
	}
	if ix.wild != nil {
		if err := ix.wild.setRegular(ix.Fields); err != nil {
			return nil, err
		}
	}
	if err := newFlatIndex(ix, spec); err != nil {
		return nil, err
	}
	if err := checkSphereOptions(ix, spec); err != nil {
		return nil, err
	}
	if ix.Name == "" {
		ix.Name = DefaultIndexName(spec.Key)
	}
	if spec.Collation != nil {
		if ix.coll, err = collation.Parse(spec.Collation); err != nil {
			return nil, err
		}
		// 2d keys are positions, which no collation orders (MongoDB
		// refuses it). A hashed field hashes its value's collation key,
		// a wildcard index keys its values' strings by it (not its
		// paths), a 2dsphere index's S2 cells are numbers; their other
		// fields' strings are collation keys.
		if ix.coll != nil && slices.ContainsFunc(ix.Fields, func(f IndexField) bool { return f.Flat }) {
			return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Index type '2d' does not support collation: %s", bson.Raw(spec.Collation))
		}
		if ix.wild != nil {
			ix.wild.coll = ix.coll
		}
	}
	if len(spec.Partial) > 0 {
		// The partial filter compares under the index's collation.
		if ix.partial, err = query.CompileCollated(spec.Partial, nil, ix.coll); err != nil {
			return nil, err
		}
	}
	ix.Spec = indexSpecDoc(ix, spec)
	return ix, nil
}

// reportedTypes are the types ListIndexesReplyItem declares for the
// options kept as given: safeInt (int32, truncated), safeDouble, string.
var reportedTypes = map[string]bson.Type{
	"textIndexVersion": bson.TypeInt32, "2dsphereIndexVersion": bson.TypeInt32, "bits": bson.TypeInt32,
	"coarsestIndexedLevel": bson.TypeInt32, "finestIndexedLevel": bson.TypeInt32,
	"min": bson.TypeDouble, "max": bson.TypeDouble,
	"default_language": bson.TypeString, "language_override": bson.TypeString,
}

// givenOption is an index option by name, as given (unset: Type 0).
type givenOption struct {
	name string
	v    bson.RawValue
}

// appendReported appends option name, when given (v, of a type
// createIndexes checked), as listIndexes reports it (reported).
func appendReported(d []byte, name string, v bson.RawValue) []byte {
	if r := reported(name, v); r.Type != 0 {
		return rawdoc.AppendElement(d, name, r)
	}
	return d
}

// reported is option name's value v as listIndexes reports it: of its
// declared type; unset when v is.
func reported(name string, v bson.RawValue) bson.RawValue {
	if v.Type == 0 {
		return v
	}
	f, _ := values.Float64(v)
	switch reportedTypes[name] {
	case bson.TypeInt32:
		return bson.RawValue{Type: bson.TypeInt32, Value: bsoncore.AppendInt32(nil, int32(f))}
	case bson.TypeDouble:
		return bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, f)}
	}
	return v
}

// DefaultIndexName is the name drivers and MongoDB give an index: each
// field and its direction or type joined by underscores ("a_1_b_-1").
func DefaultIndexName(key bson.Raw) string {
	var b strings.Builder
	elems, _ := key.Elements()
	for i, el := range elems {
		if i > 0 {
			b.WriteByte('_')
		}
		b.WriteString(el.Key())
		b.WriteByte('_')
		v := el.Value()
		if v.Type == bson.TypeString {
			b.WriteString(v.StringValue())
		} else {
			b.WriteString(strconv.FormatFloat(numberValue(v), 'f', -1, 64))
		}
	}
	return b.String()
}

// numberValue is a numeric key-pattern value as a float64.
func numberValue(v bson.RawValue) float64 {
	f, _ := values.Float64(v)
	return f
}

// indexSpecDoc builds the document listIndexes reports for ix. MongoDB
// passes every spec through its ListIndexesReplyItem declaration, which
// fixes the fields' order and their types: flags are booleans, counts
// 32-bit integers (expireAfterSeconds, bits, the index versions) and the
// 2d bounds doubles.
func indexSpecDoc(ix *Index, spec IndexSpec) bson.Raw {
	start, d := bsoncore.AppendDocumentStart(nil)
	d = bsoncore.AppendInt32Element(d, "v", spec.version())
	d = bsoncore.AppendDocumentElement(d, "key", spec.Key)
	d = bsoncore.AppendStringElement(d, "name", ix.Name)
	if spec.Background.Type != 0 {
		d = bsoncore.AppendBooleanElement(d, "background", values.Truthy(spec.Background))
	}
	if ix.Unique {
		d = bsoncore.AppendBooleanElement(d, "unique", true)
	}
	if ix.Hidden {
		d = bsoncore.AppendBooleanElement(d, "hidden", true)
	}
	if len(spec.Partial) > 0 {
		d = bsoncore.AppendDocumentElement(d, "partialFilterExpression", spec.Partial)
	}
	if ix.Sparse {
		d = bsoncore.AppendBooleanElement(d, "sparse", true)
	}
	if ix.ExpireAfter >= 0 {
		// ttlSeconds keeps it within 32 bits
		d = bsoncore.AppendInt32Element(d, "expireAfterSeconds", int32(ix.ExpireAfter))
	}
	if len(spec.StorageEngine) > 0 {
		d = bsoncore.AppendDocumentElement(d, "storageEngine", spec.StorageEngine)
	}
	if ix.text != nil {
		// weights, default_language, language_override, textIndexVersion
		elems, _ := ix.text.options.Elements()
		for _, el := range elems {
			d = rawdoc.AppendElement(d, el.Key(), el.Value())
		}
	} else {
		// as requested (requestedSpec), or given to an index of another
		// type, which cannot take weights
		d = appendReported(d, "weights", spec.Text.Weights)
		d = appendReported(d, "default_language", spec.Text.DefaultLanguage)
		d = appendReported(d, "language_override", spec.Text.LanguageOverride)
		d = appendReported(d, "textIndexVersion", spec.Text.Version)
	}
	if ix.sphereField() >= 0 {
		d = bsoncore.AppendInt32Element(d, "2dsphereIndexVersion", 3)
	} else {
		d = appendReported(d, "2dsphereIndexVersion", spec.Sphere.Version)
	}
	d = appendReported(d, "bits", spec.Flat.Bits)
	d = appendReported(d, "min", spec.Flat.Min)
	d = appendReported(d, "max", spec.Flat.Max)
	if ix.coll != nil {
		d = bsoncore.AppendDocumentElement(d, "collation", ix.coll.Document())
	}
	if len(spec.WildcardProjection) > 0 {
		d = bsoncore.AppendDocumentElement(d, "wildcardProjection", spec.WildcardProjection)
	}
	d = appendReported(d, "coarsestIndexedLevel", spec.Sphere.Coarsest)
	d = appendReported(d, "finestIndexedLevel", spec.Sphere.Finest)
	if ix.PrepareUnique {
		d = bsoncore.AppendBooleanElement(d, "prepareUnique", true)
	}
	if len(spec.OriginalSpec) > 0 {
		d = bsoncore.AppendDocumentElement(d, "originalSpec", spec.OriginalSpec)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, start)
	return d
}

// keyPatternDoc is the index's key pattern.
func (ix *Index) keyPattern() bson.Raw { return ix.Spec.Lookup("key").Document() }

// ttlKey reports whether the stored key pattern has the one field a TTL
// index expires by, as MongoDB's TTL rules ask of it (a text index's is
// {_fts, _ftsx}).
func (ix *Index) ttlKey() bool {
	elems, _ := ix.keyPattern().Elements()
	return len(elems) == 1
}

// expiresByTTL reports whether the index's expireAfterSeconds expires
// documents: MongoDB's TTL monitor (getValidTTLIndex) uses only an
// ordinary (btree) index of one field, and skips a hashed, text, 2d or
// 2dsphere one, which keeps the option (a text index's stored key is
// {_fts, _ftsx}).
func (ix *Index) expiresByTTL() bool {
	if !ix.ttlKey() || len(ix.Fields) != 1 || ix.wild != nil {
		return false
	}
	f := ix.Fields[0]
	return !f.Hashed && !f.Text && !f.Geo && !f.Flat && !f.Wildcard
}

// planned is the index as the planner sees it, with its multikey flag as
// of now.
func (ix *Index) planned() planner.Index {
	p := planner.Index{Name: ix.Name, KeyPattern: ix.keyPattern(), Fields: ix.Fields, Unique: ix.Unique, ValueKeyed: !ix.idKeyed,
		Sparse: ix.Sparse, Partial: ix.partial, Multikey: ix.Multikey(), FieldArrays: ix.fieldArrays(), PairedArrays: ix.pairsArrays(), Ref: ix, Collation: ix.coll}
	if ix.wild != nil {
		p.Wildcard = ix.wild.planned()
	}
	return p
}

// planCatalog shows a collection's indexes to the planner.
// planCatalog is c's catalog as the planner sees it, under apiStrict when
// strict is set.
type planCatalog struct {
	c      *Collection
	strict bool
}

func (pc planCatalog) Indexes() []planner.Index {
	all := pc.c.Indexes()
	if pc.c.shard != nil {
		all = append(slices.Clip(all), pc.c.shard.idIndex)
	}
	out := make([]planner.Index, 0, len(all))
	for _, ix := range all {
		// A text index serves $text queries alone (planText), a 2dsphere
		// index geo queries (planGeo).
		if ix.plannable(pc.strict) && ix.text == nil && ix.geoField() < 0 {
			out = append(out, ix.planned())
		}
	}
	return out
}

func (pc planCatalog) StoreByID() bool { return pc.c.shard == nil }

// indexesOf are the indexes a plan scans.
func indexesOf(p *planner.Plan) []*Index {
	var out []*Index
	for _, sp := range append([]*planner.Plan{p}, p.Or...) {
		if ix := indexOf(sp); ix != nil {
			out = append(out, ix)
		}
	}
	return out
}

// indexOf is the index a scan reads, nil for the document store.
func indexOf(p *planner.Plan) *Index {
	if p.Index == nil {
		return nil
	}
	return p.Index.Ref.(*Index)
}

// indexKey is one key of a document in an index: its encoding (without
// the index prefix or _id) and the values it was built from.
type indexKey struct {
	enc  []byte
	vals []bson.RawValue
}

// keys returns the distinct keys of doc in ix, or none when ix does not
// index doc (sparse with every field missing, or outside the partial
// filter). Missing fields index as null; arrays index one key per element
// (an empty array indexes as undefined); a compound key is the product of
// its fields' values, those of fields running through one array taken from
// the same element (index_pairs.go), and at most one array may be expanded (171
// otherwise; on an index keying by element, within each element of the
// arrays its fields share, as MongoDB checks arrays per element of the one
// it walks (getKeysImplWithArray); a 2dsphere or 2d index takes the product of any, as
// getS2Keys and get2DKeys check none); an index with a hashed field
// expands none (16766, hashedIndexValue). A 2dsphere or 2d index holds only documents with a
// geometry in one of its geo fields (getS2Keys, get2DKeys); another
// 2dsphere field without one keys null. multikey reports that an array
// was expanded.
func (ix *Index) keys(doc bson.Raw) (keys []indexKey, multikey bool, err error) {
	keys, _, multikey, err = ix.keysWithArrays(doc)
	return keys, multikey, err
}

// keysWithArrays is keys and, on an index tracking them (tracksArrays),
// the components of each field's path at which doc held arrays (nil when
// none did).
func (ix *Index) keysWithArrays(doc bson.Raw) (keys []indexKey, arrays []uint64, multikey bool, err error) {
	if ix.partial != nil && !ix.partial.Match(doc) {
		return nil, nil, false, nil
	}
	if ix.wild != nil {
		keys, multikey, err = ix.wild.keys(doc)
		return keys, nil, multikey, err
	}
	if ix.text != nil {
		// A text index is multikey once a document gives it more than one
		// key (MongoDB's shouldMarkIndexAsMultikey: numberOfKeys > 1).
		keys, err := ix.text.keys(ix, doc)
		return keys, nil, len(keys) > 1, err
	}
	root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	keys = []indexKey{{}}
	allMissing, anyGeo := true, false
	var seenArrays []seenArray // arrays expanded by earlier fields
	hashed := ix.hashed()
	geoIx := ix.geoField() >= 0
	// pairs: each key's values' ways through the arrays, by field, while
	// fields running through one array take its elements together.
	pairs := ix.pairsArrays()
	var ways [][]arraySteps
	var fieldArrays []uint64
	if pairs {
		ways = [][]arraySteps{nil}
	}
	for fi, f := range ix.Fields {
		var vals []bson.RawValue
		var steps []arraySteps
		var arrays []string
		var arrayWays []arraySteps
		var missing bool
		switch {
		case f.Geo || f.Flat:
			if vals, err = ix.geoKeyValues(root, f, doc); err != nil {
				return nil, nil, false, err
			}
			if len(vals) == 0 {
				if f.Flat {
					// get2DKeys: no location, no key.
					return nil, nil, false, nil
				}
				// getS2Keys: a 2dsphere field without geometry keys
				// null; the document needs one field with geometry.
				vals = []bson.RawValue{nullValue}
			} else {
				anyGeo = true
			}
		case hashed:
			var v bson.RawValue
			if v, missing, err = hashedIndexValue(root, f, ix.coll); err != nil {
				return nil, nil, false, err
			}
			vals = []bson.RawValue{v}
		default:
			fv := fieldValues{track: pairs}
			missing = fv.collect(root, f.Parts, 0)
			if fv.ambiguous != nil {
				return nil, nil, false, fv.ambiguous
			}
			vals, arrays, steps = fv.vals, fv.arrays, fv.steps
			arrayWays = fv.arrayWays
			if fv.depths != 0 && ix.tracksArrays() {
				if fieldArrays == nil {
					fieldArrays = make([]uint64, len(ix.Fields))
				}
				fieldArrays[fi] = fv.depths
			}
			if ix.v1 && slices.ContainsFunc(vals, holdsDecimal) {
				return nil, nil, false, errV1Decimal
			}
		}
		if !missing {
			allMissing = false
		}
		for ai, a := range arrays {
			var way arraySteps
			if arrayWays != nil {
				way = arrayWays[ai]
			}
			for _, b := range seenArrays {
				if !nested(a, b.path) && !geoIx && (arrayWays == nil || sameElements(f, ix.Fields[b.field], way, b.way)) {
					return nil, nil, false, mongoerr.New(mongoerr.CannotIndexParallelArrays, "cannot index parallel arrays [%s] [%s]", lastPart(a), lastPart(b.path))
				}
			}
		}
		for ai, a := range arrays {
			sa := seenArray{path: a, field: fi}
			if arrayWays != nil {
				sa.way = arrayWays[ai]
			}
			seenArrays = append(seenArrays, sa)
		}
		next := make([]indexKey, 0, len(keys)*len(vals))
		var nextWays [][]arraySteps
		for ki, k := range keys {
			for vi, v := range vals {
				var way arraySteps
				if steps != nil {
					way = steps[vi]
					if !ix.sameElementsAll(fi, ways[ki], way) {
						continue
					}
				}
				next = append(next, indexKey{
					enc:  keyenc.AppendField(slices.Clip(k.enc), ix.coll.Transform(v), f.Desc),
					vals: append(slices.Clip(k.vals), v),
				})
				if pairs {
					nextWays = append(nextWays, append(slices.Clip(ways[ki]), way))
				}
			}
		}
		keys, ways = next, nextWays
	}
	if ix.Sparse && allMissing || geoIx && !anyGeo {
		return nil, nil, false, nil
	}
	if len(keys) > 1 {
		slices.SortFunc(keys, func(a, b indexKey) int { return bytes.Compare(a.enc, b.enc) })
		keys = slices.CompactFunc(keys, func(a, b indexKey) bool { return bytes.Equal(a.enc, b.enc) })
	}
	return keys, fieldArrays, len(seenArrays) > 0, nil
}

// errV1Decimal refuses a decimal key in a version 1 index, whose
// KeyString (V0) has no encoding for it; MongoDB refuses every decimal,
// nested ones included.
var errV1Decimal = mongoerr.New(mongoerr.UnsupportedFormat, "Index version does not support NumberDecimal")

// holdsDecimal reports whether v is or holds a Decimal128.
func holdsDecimal(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeDecimal128:
		return true
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		vals, _ := bson.Raw(v.Value).Values()
		return slices.ContainsFunc(vals, holdsDecimal)
	}
	return false
}

// seenArray is an array a field of a key expanded: its path, the field,
// and, on an index keying by element, the elements of the enclosing
// arrays it lies in (its way).
type seenArray struct {
	path  string
	field int
	way   arraySteps
}

// nested reports whether array paths a and b are the same array or one
// lies inside the other, which MongoDB does not count as parallel arrays.
func nested(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}

func lastPart(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

var (
	nullValue      = bson.RawValue{Type: bson.TypeNull}
	undefinedValue = bson.RawValue{Type: bson.TypeUndefined}
)

// fieldValues collects what one index field takes from a document.
type fieldValues struct {
	// vals are the field's key values.
	vals []bson.RawValue
	// arrays are the paths of the arrays expanded on the way;
	// arrayWays, when tracking, the way to each (the elements of the
	// arrays enclosing it).
	arrays    []string
	arrayWays []arraySteps
	// ambiguous is set, as MongoDB's btree key generator refuses it
	// (btree_key_generator.cpp _extractNextElement, 16746), when a
	// positional part names an element of an array one of whose
	// documents also has a field of that name: the path could mean either.
	// The walk goes on through the element, as a plain path lookup does.
	ambiguous error
	// depths are the components of the path at which arrays were
	// expanded (componentBit).
	depths uint64
	// track asks for steps: each value's way through the arrays expanded
	// to reach it (index_pairs.go), at is the way so far.
	track bool
	steps []arraySteps
	at    arraySteps
}

// add appends v, reached by the way so far.
func (f *fieldValues) add(v bson.RawValue) {
	f.vals = append(f.vals, v)
	if f.track {
		f.steps = append(f.steps, slices.Clone(f.at))
	}
}

// addArray notes the array at path, met by the way so far.
func (f *fieldValues) addArray(path []string) {
	f.arrays = append(f.arrays, strings.Join(path, "."))
	f.depths |= componentBit(len(path) - 1)
	if f.track {
		f.arrayWays = append(f.arrayWays, slices.Clone(f.at))
	}
}

// addElements appends the elements of the array at the end of the path,
// met after depth parts (an empty array keys undefined).
func (f *fieldValues) addElements(elems []bson.RawValue, depth int) {
	if len(elems) == 0 {
		f.add(undefinedValue)
	}
	for i, el := range elems {
		f.at = append(f.at, arrayStep{depth: depth, elem: i})
		f.add(el)
		f.at = f.at[:len(f.at)-1]
	}
}

// collect appends the values at parts[i:] below v. It reports whether the
// path was missing everywhere (the values are then a single null).
func (f *fieldValues) collect(v bson.RawValue, parts []string, i int) bool {
	if i == len(parts) {
		if v.Type != bson.TypeArray {
			f.add(v)
			return false
		}
		f.addArray(parts[:i])
		elems, _ := v.Array().Values()
		f.addElements(elems, i)
		return false
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		child, err := v.Document().LookupErr(parts[i])
		if err != nil {
			f.add(nullValue)
			return true
		}
		return f.collect(child, parts, i+1)
	case bson.TypeArray:
		elems, _ := v.Array().Values()
		if n := rawdoc.ArrayIndex(parts[i]); n >= 0 && n < len(elems) {
			if f.ambiguous == nil {
				f.ambiguous = ambiguousPositional(v, elems, parts[i])
			}
			return f.collect(elems[n], parts, i+1)
		}
		f.addArray(parts[:i])
		if len(elems) == 0 {
			f.add(nullValue)
			return true
		}
		missing := true
		for n, el := range elems {
			f.at = append(f.at, arrayStep{depth: i, elem: n})
			if el.Type != bson.TypeEmbeddedDocument {
				f.add(nullValue)
			} else if !f.collect(el, parts, i) {
				missing = false
			}
			f.at = f.at[:len(f.at)-1]
		}
		return missing
	}
	f.add(nullValue)
	return true
}

// ambiguousPositional is the 16746 error when a document among elems
// (those of the array arr) has a field named part, else nil.
func ambiguousPositional(arr bson.RawValue, elems []bson.RawValue, part string) error {
	for _, el := range elems {
		if el.Type == bson.TypeEmbeddedDocument {
			if _, err := el.Document().LookupErr(part); err == nil {
				return mongoerr.New(mongoerr.AmbiguousArrayField,
					"Ambiguous field name found in array (do not use numeric field names in embedded elements in an array), field: '%s' for array: %s",
					part, values.ShellDoc(arr.Value))
			}
		}
	}
	return nil
}

// SameKeyPattern reports whether two key patterns name the same fields in
// the same order with equal values (1 and 1.0 are equal, as MongoDB
// compares them).
func SameKeyPattern(a, b bson.Raw) bool {
	return rawdoc.Len(a) == rawdoc.Len(b) && KeyPatternPrefix(a, b)
}

// KeyPatternPrefix reports whether kp's fields are the first fields of
// pattern, with equal values.
func KeyPatternPrefix(kp, pattern bson.Raw) bool {
	ki, pi := rawdoc.Iterate(kp), rawdoc.Iterate(pattern)
	for {
		k, kv, ok := ki.Next()
		if !ok {
			return true
		}
		p, pv, ok := pi.Next()
		if !ok || string(k) != string(p) || !values.Equal(kv, pv) {
			return false
		}
	}
}

// ServesShardKey reports whether ix holds every document of its
// collection under the values at its key pattern's paths as they are: not
// sparse, not partial, under the simple collation (MongoDB's
// isCompatibleWithShardKey; the caller compares the key patterns and looks
// at the multikey flag).
func (ix *Index) ServesShardKey() bool { return !ix.Sparse && ix.partial == nil && ix.coll == nil }
