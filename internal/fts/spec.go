package fts

import (
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// Wildcard is the field name of a text index on every string field.
const Wildcard = "$**"

// maxWeight bounds a field's weight: MongoDB refuses 100,000 and above.
const maxWeight = 100000

// Options are a text index's options as createIndexes gives them; each
// may be unset (Type 0).
type Options struct {
	Weights, DefaultLanguage, LanguageOverride, Version bson.RawValue
}

// Spec is a text index: the weighted fields it indexes (or every string
// field), the default language, the field that overrides it per
// (sub)document, and the compound fields around the text key.
type Spec struct {
	weights          []weight // sorted by path
	wildcard         bool
	defaultLanguage  *Language
	languageOverride string
	// Prefix are the key's fields before the text fields (queries must
	// pin them by equality), Suffix those after.
	Prefix, Suffix []string
}

type weight struct {
	path string
	w    float64
}

// IsTextKey reports whether a key pattern describes a text index: a field
// whose value is "text", or MongoDB's stored form with _fts.
func IsTextKey(key bson.Raw) bool {
	elems, _ := key.Elements()
	for _, el := range elems {
		if s, ok := el.Value().StringValueOK(); (ok && s == "text") || el.Key() == "_fts" {
			return true
		}
	}
	return false
}

// DefaultLanguage is the index's default language.
func (s *Spec) DefaultLanguage() *Language { return s.defaultLanguage }

// NewSpec validates a text index's key pattern and options as MongoDB's
// text index version 3 does, and returns the index with the key pattern
// MongoDB stores ({..., _fts: "text", _ftsx: 1, ...}) and the options
// listIndexes reports (weights sorted by field as integers,
// default_language, language_override, textIndexVersion). A spec already
// in the stored form reads back as itself.
func NewSpec(key bson.Raw, opts Options) (*Spec, bson.D, bson.D, error) {
	s := &Spec{languageOverride: "language"}
	elems, err := key.Elements()
	if err != nil {
		return nil, nil, nil, mongoerr.New(mongoerr.CannotCreateIndex, "invalid key pattern: %v", err)
	}
	weights := map[string]int32{}
	var fixed bson.D
	const (
		before = iota
		inText
		after
	)
	state, added := before, false
	addFTS := func() {
		if !added {
			fixed = append(fixed, bson.E{Key: "_fts", Value: "text"}, bson.E{Key: "_ftsx", Value: int32(1)})
			added = true
		}
	}
	for _, el := range elems {
		name, v := el.Key(), el.Value()
		str, isString := v.StringValueOK()
		switch {
		case name == "_fts":
			if !isString || str != "text" {
				return nil, nil, nil, mongoerr.New(mongoerr.TextFTSNotText, "expecting _fts:\"text\"")
			}
			addFTS()
			state = inText
		case name == "_ftsx":
			if n, ok := values.Int64(v); !ok || n != 1 {
				return nil, nil, nil, mongoerr.New(mongoerr.TextFTSXNotOne, "expecting _ftsx:1")
			}
			state = after
		case isString && str == "text":
			if state == after {
				return nil, nil, nil, mongoerr.New(mongoerr.TextFieldsNotAdjacent, "'text' fields in index must all be adjacent")
			}
			addFTS()
			state = inText
			weights[name] = 1
		default:
			if f, _ := values.Float64(v); !values.IsNumber(v.Type) || math.Trunc(f) != 1 && math.Trunc(f) != -1 {
				return nil, nil, nil, mongoerr.New(mongoerr.TextCompoundNotDirection, "expected value 1 or -1 for non-text key in compound index")
			}
			if name == "_fts" || name == "_ftsx" {
				return nil, nil, nil, mongoerr.New(mongoerr.TextReservedField, "text index with reserved fields _fts/_ftsx not allowed")
			}
			if state == inText {
				state = after
			}
			fixed = append(fixed, bson.E{Key: name, Value: v})
			if state == before {
				s.Prefix = append(s.Prefix, name)
			} else {
				s.Suffix = append(s.Suffix, name)
			}
		}
	}
	switch opts.Weights.Type {
	case 0:
	case bson.TypeEmbeddedDocument:
		ws, _ := opts.Weights.Document().Elements()
		for _, el := range ws {
			f, ok := values.Float64(el.Value())
			if !ok {
				return nil, nil, nil, mongoerr.New(mongoerr.TextWeightNotNumber, "weight for text index needs numeric type")
			}
			weights[el.Key()] = int32(max(min(f, math.MaxInt32), math.MinInt32))
		}
	case bson.TypeString:
		if opts.Weights.StringValue() != Wildcard {
			return nil, nil, nil, mongoerr.New(mongoerr.TextWeightsNotObject, "text index option 'weights' must be an object")
		}
		weights[Wildcard] = 1
	default:
		return nil, nil, nil, mongoerr.New(mongoerr.TextWeightsNotObject, "text index option 'weights' must be an object")
	}
	var ws bson.D
	for _, name := range slices.Sorted(mapKeys(weights)) {
		w := weights[name]
		if w <= 0 || w >= maxWeight {
			return nil, nil, nil, mongoerr.New(mongoerr.TextWeightOutOfRange, "score for word too high")
		}
		ws = append(ws, bson.E{Key: name, Value: w})
		if name == Wildcard {
			s.wildcard = true
			continue
		}
		s.weights = append(s.weights, weight{path: name, w: float64(w)})
	}
	lang := "english"
	if opts.DefaultLanguage.Type != 0 {
		l, ok := opts.DefaultLanguage.StringValueOK()
		if !ok {
			return nil, nil, nil, mongoerr.New(mongoerr.TextDefaultLanguageNotString, "default_language needs a string type")
		}
		lang = l
	}
	if s.defaultLanguage, err = LookupLanguage(lang); err != nil {
		return nil, nil, nil, err
	}
	if opts.LanguageOverride.Type != 0 {
		o, ok := opts.LanguageOverride.StringValueOK()
		if !ok || o == "" || strings.HasPrefix(o, "$") || strings.Contains(o, ".") {
			return nil, nil, nil, mongoerr.New(mongoerr.TextLanguageOverrideInvalid, "language_override is not valid")
		}
		s.languageOverride = o
	}
	if opts.Version.Type != 0 {
		n, ok := values.Float64(opts.Version)
		switch {
		case !ok:
			return nil, nil, nil, mongoerr.New(mongoerr.TypeMismatch, "text index option 'textIndexVersion' must be a number")
		case n == 1 || n == 2:
			return nil, nil, nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support textIndexVersion %d; it builds version 3", int(n))
		case n != 3:
			return nil, nil, nil, mongoerr.New(mongoerr.TextIndexVersionUnsupported, "attempt to use unsupported textIndexVersion %d; versions supported: 3, 2, 1", int(n))
		}
	}
	options := bson.D{
		{Key: "weights", Value: ws},
		{Key: "default_language", Value: lang},
		{Key: "language_override", Value: s.languageOverride},
		{Key: "textIndexVersion", Value: int32(3)},
	}
	return s, fixed, options, nil
}

func mapKeys(m map[string]int32) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
