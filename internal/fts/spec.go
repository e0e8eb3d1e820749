package fts

import (
	"maps"
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

// Spec is a text index: its version, the weighted fields it indexes (or
// every string field), the default language, the field that overrides
// it per (sub)document, and the compound fields around the text key.
type Spec struct {
	version          int
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

// Version is the index's textIndexVersion.
func (s *Spec) Version() int { return s.version }

// Language is the language named name in the index's version, as a
// $text query's $language names it.
func (s *Spec) Language(name string) (*Language, error) { return lookupLanguage(name, s.version) }

// cannotCreate is the error of an invalid text index: CannotCreateIndex,
// as MongoDB's FTSSpec::fixSpec returns every one.
func cannotCreate(format string, args ...any) error {
	return mongoerr.New(mongoerr.CannotCreateIndex, format, args...)
}

// numberInt is v as MongoDB's BSONElement::numberInt reads it: a
// number truncated to 32 bits (here clamped), anything else 0.
func numberInt(v bson.RawValue) int32 {
	f, ok := values.Float64(v)
	if !ok || math.IsNaN(f) {
		return 0
	}
	return int32(max(min(math.Trunc(f), math.MaxInt32), math.MinInt32))
}

// NewSpec validates a text index's key pattern and options as MongoDB's
// FTSSpec::fixSpec does, and returns the index with the key pattern
// MongoDB stores ({..., _fts: "text", _ftsx: 1, ...}) and the options
// listIndexes reports (weights sorted by field as integers,
// default_language, language_override, textIndexVersion). A spec already
// in the stored form reads back as itself. A textIndexVersion of 1 (as
// numberInt reads it) is the legacy index (newSpecV1); otherwise the
// version is 2 or 3 (the default), which differ in their languages'
// tokenizer only.
func NewSpec(key bson.Raw, opts Options) (*Spec, bson.D, bson.D, error) {
	if opts.Version.Type != 0 && numberInt(opts.Version) == 1 {
		return newSpecV1(key, opts)
	}
	s := &Spec{version: 3, languageOverride: "language"}
	elems, err := key.Elements()
	if err != nil {
		return nil, nil, nil, cannotCreate("invalid key pattern: %v", err)
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
	afterFTS := false // the stored form's _fts must be followed by _ftsx
	for _, el := range elems {
		name, v := el.Key(), el.Value()
		str, isString := v.StringValueOK()
		if afterFTS && name != "_ftsx" {
			return nil, nil, nil, cannotCreate("expected _ftsx after _fts")
		}
		afterFTS = false
		switch {
		case name == "_fts":
			if !isString || str != "text" {
				return nil, nil, nil, cannotCreate("expecting _fts:\"text\"")
			}
			addFTS()
			state, afterFTS = inText, true
		case name == "_ftsx":
			if numberInt(v) != 1 {
				return nil, nil, nil, cannotCreate("expecting _ftsx:1")
			}
			state = after
		case isString && str == "text":
			if state == after {
				return nil, nil, nil, cannotCreate("'text' fields in index must all be adjacent")
			}
			addFTS()
			state = inText
			weights[name] = 1
		default:
			if d := numberInt(v); !values.IsNumber(v.Type) || d != 1 && d != -1 {
				return nil, nil, nil, cannotCreate("expected value 1 or -1 for non-text key in compound index")
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
			if !values.IsNumber(el.Value().Type) {
				return nil, nil, nil, cannotCreate("weight for text index needs numeric type")
			}
			weights[el.Key()] = numberInt(el.Value())
		}
	case bson.TypeString:
		if opts.Weights.StringValue() != Wildcard {
			return nil, nil, nil, cannotCreate("text index option 'weights' must be an object")
		}
		weights[Wildcard] = 1
	default:
		return nil, nil, nil, cannotCreate("text index option 'weights' must be an object")
	}
	if afterFTS {
		return nil, nil, nil, cannotCreate("expected _ftsx after _fts")
	}
	if len(weights) == 0 {
		return nil, nil, nil, cannotCreate("text index option 'weights' must specify fields or the wildcard")
	}
	ws, err := s.setWeights(weights)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, w := range s.weights {
		if err := checkWeightPath(w.path); err != nil {
			return nil, nil, nil, err
		}
	}
	lang := "english"
	if opts.DefaultLanguage.Type != 0 {
		l, ok := opts.DefaultLanguage.StringValueOK()
		if !ok {
			return nil, nil, nil, cannotCreate("default_language needs a string type")
		}
		lang = l
	}
	if opts.LanguageOverride.Type != 0 {
		o, ok := opts.LanguageOverride.StringValueOK()
		if !ok {
			return nil, nil, nil, cannotCreate("language_override must be a string")
		}
		if o == "" || strings.HasPrefix(o, "$") || strings.Contains(o, ".") {
			return nil, nil, nil, cannotCreate("language_override is not valid")
		}
		s.languageOverride = o
	}
	if opts.Version.Type != 0 {
		if !values.IsNumber(opts.Version.Type) {
			return nil, nil, nil, cannotCreate("text index option 'textIndexVersion' must be a number")
		}
		if s.version = int(numberInt(opts.Version)); s.version != 2 && s.version != 3 {
			return nil, nil, nil, cannotCreate("bad textIndexVersion: %d", s.version)
		}
	}
	if s.defaultLanguage, err = lookupLanguage(lang, s.version); err != nil {
		return nil, nil, nil, cannotCreate("default_language is not valid")
	}
	return s, fixed, s.options(ws, lang), nil
}

// setWeights sets s's weights (the wildcard aside) from weights, each in
// MongoDB's exclusive range (0, 100000), and returns them as listIndexes
// reports them, sorted by field.
func (s *Spec) setWeights(weights map[string]int32) (bson.D, error) {
	var ws bson.D
	for _, name := range slices.Sorted(maps.Keys(weights)) {
		w := weights[name]
		if w <= 0 || w >= maxWeight {
			return nil, cannotCreate("text index weight must be in the exclusive interval (0,%d) but found: %d", maxWeight, w)
		}
		ws = append(ws, bson.E{Key: name, Value: w})
		if name == Wildcard {
			s.wildcard = true
			continue
		}
		s.weights = append(s.weights, weight{path: name, w: float64(w)})
	}
	return ws, nil
}

// checkWeightPath refuses a weighted path that names no field: empty, with
// an empty part, or with a part starting with $.
func checkWeightPath(path string) error {
	if path == "" {
		return cannotCreate("weight cannot be on an empty field")
	}
	for part := range strings.SplitSeq(path, ".") {
		if part == "" {
			return cannotCreate("weight cannot have empty path component")
		}
		if strings.HasPrefix(part, "$") {
			return cannotCreate("weight cannot have path component with $ prefix")
		}
	}
	return nil
}

// options are the index's options as listIndexes reports them.
func (s *Spec) options(weights bson.D, lang string) bson.D {
	return bson.D{
		{Key: "weights", Value: weights},
		{Key: "default_language", Value: lang},
		{Key: "language_override", Value: s.languageOverride},
		{Key: "textIndexVersion", Value: int32(s.version)},
	}
}

// newSpecV1 is a text index of version 1, which MongoDB still builds and
// checks far less: a "text" (or "fts") field of the key becomes _fts and
// _ftsx, the other fields are kept as they are; a weight is read with
// numberInt (so one that is not a number is 0, out of range), weights
// given as a string other than "$**" are ignored; an empty or missing
// default_language is English and any other name is kept (a language
// version 1 does not know is "none"); an empty language_override is
// "language", and any other is kept.
func newSpecV1(key bson.Raw, opts Options) (*Spec, bson.D, bson.D, error) {
	s := &Spec{version: 1, languageOverride: "language"}
	elems, err := key.Elements()
	if err != nil {
		return nil, nil, nil, cannotCreate("invalid key pattern: %v", err)
	}
	weights := map[string]int32{}
	var fixed bson.D
	added, passed := false, false
	for _, el := range elems {
		name, v := el.Key(), el.Value()
		str, _ := v.StringValueOK()
		switch {
		case name == "_fts" || name == "_ftsx":
			added, passed = true, true
			fixed = append(fixed, bson.E{Key: name, Value: v})
			continue
		case v.Type == bson.TypeString && (str == "text" || str == "fts"):
			if !added {
				fixed = append(fixed, bson.E{Key: "_fts", Value: "text"}, bson.E{Key: "_ftsx", Value: int32(1)})
				added, passed = true, true
			}
			weights[name] = 1
			continue
		}
		fixed = append(fixed, bson.E{Key: name, Value: v})
		if passed {
			s.Suffix = append(s.Suffix, name)
		} else {
			s.Prefix = append(s.Prefix, name)
		}
	}
	if !added {
		fixed = append(fixed, bson.E{Key: "_fts", Value: "text"}, bson.E{Key: "_ftsx", Value: int32(1)})
	}
	switch opts.Weights.Type {
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		ws, _ := bson.Raw(opts.Weights.Value).Elements()
		for _, el := range ws {
			weights[el.Key()] = numberInt(el.Value())
		}
	case bson.TypeString:
		if opts.Weights.StringValue() == Wildcard {
			weights[Wildcard] = 1
		}
	}
	ws, err := s.setWeights(weights)
	if err != nil {
		return nil, nil, nil, err
	}
	lang, _ := opts.DefaultLanguage.StringValueOK()
	if lang == "" {
		lang = "english"
	}
	s.defaultLanguage, _ = lookupLanguage(lang, 1)
	if o, _ := opts.LanguageOverride.StringValueOK(); o != "" {
		s.languageOverride = o
	}
	return s, fixed, s.options(ws, lang), nil
}
