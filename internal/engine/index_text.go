package engine

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/fts"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// A text index's key is MongoDB's: the prefix fields' values, the term
// (a string), its score in the document (a double) and the suffix
// fields' values; a document has one key per distinct term of its
// indexed strings, and none when it has no term (text indexes are
// sparse). Its fields are the prefix fields, a field marked Text for
// the term and score, and the suffix fields.

// textIndex is what a text index adds to an index.
type textIndex struct {
	spec *fts.Spec
	// options are weights, default_language, language_override and
	// textIndexVersion as listIndexes reports them.
	options bson.Raw
}

// fixTextSpec turns a requested text index into the form MongoDB stores
// ({..., _fts: "text", _ftsx: 1, ...} with its normalized options), so
// that requests for one index compare equal whatever form they take. Other
// specs are left alone.
func fixTextSpec(spec *IndexSpec) error {
	if !fts.IsTextKey(spec.Key) {
		return nil
	}
	_, key, opts, err := fts.NewSpec(spec.Key, spec.Text)
	if err != nil {
		return err
	}
	if spec.Collation != nil {
		return mongoerr.New(mongoerr.CannotCreateIndex, "Index type 'text' does not support collation: %s", bson.Raw(spec.Collation))
	}
	spec.Key = bsonDoc(key)
	raw := bson.Raw(bsonDoc(opts))
	spec.Text = fts.Options{
		Weights: raw.Lookup("weights"), DefaultLanguage: raw.Lookup("default_language"),
		LanguageOverride: raw.Lookup("language_override"), Version: raw.Lookup("textIndexVersion"),
	}
	return nil
}

// newTextIndex builds the text part of ix from a fixed spec.
func newTextIndex(ix *Index, spec IndexSpec) error {
	s, _, opts, err := fts.NewSpec(spec.Key, spec.Text)
	if err != nil {
		return err
	}
	// An expireAfterSeconds is kept, as MongoDB keeps it (only a wildcard
	// index refuses it); the TTL monitor skips the index. unique is kept
	// too (IndexCatalogImpl::_isSpecOk refuses it for a wildcard index
	// only): a key is a term and its score (prefix and suffix fields
	// around them), so two documents holding a term with the same score
	// (and the same other fields) are duplicates.
	ix.text = &textIndex{spec: s, options: bsonDoc(opts)}
	fields := make([]IndexField, 0, len(s.Prefix)+1+len(s.Suffix))
	for _, p := range s.Prefix {
		fields = append(fields, IndexField{Path: p, Parts: strings.Split(p, ".")})
	}
	fields = append(fields, IndexField{Path: "_fts", Parts: []string{"_fts"}, Text: true})
	for _, p := range s.Suffix {
		fields = append(fields, IndexField{Path: p, Parts: strings.Split(p, ".")})
	}
	ix.Fields = fields
	return nil
}

// textKeys are doc's keys in a text index. As MongoDB's
// FTSIndexFormat::getKeys, the index's other fields are read first, and
// one holding an array (a position named in the path aside) fails with
// CannotBuildIndexKeys (extractNonFTSKeyElement).
func (t *textIndex) keys(ix *Index, doc bson.Raw) ([]indexKey, error) {
	root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	var prefix, suffix []bson.RawValue
	text, decimal := false, false
	for _, f := range ix.Fields {
		if f.Text {
			text = true
			continue
		}
		var fv fieldValues
		fv.collect(root, f.Parts, 0)
		vals, arrays := fv.vals, fv.arrays
		if len(arrays) > 0 {
			return nil, mongoerr.New(mongoerr.CannotBuildIndexKeys, "Field '%s' of text index contains an array in document: %s", f.Path, values.ShellDoc(doc))
		}
		decimal = decimal || ix.v1 && holdsDecimal(vals[0])
		if text {
			suffix = append(suffix, vals[0])
		} else {
			prefix = append(prefix, vals[0])
		}
	}
	terms, err := t.spec.Terms(doc)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	if decimal {
		// a version 1 key cannot hold a decimal; a document without
		// terms has no key to hold one
		return nil, errV1Decimal
	}
	keys := make([]indexKey, 0, len(terms))
	for term, score := range terms {
		k := indexKey{vals: make([]bson.RawValue, 0, len(prefix)+2+len(suffix))}
		k.vals = append(k.vals, prefix...)
		k.vals = append(k.vals,
			bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, term)},
			bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, score)})
		k.vals = append(k.vals, suffix...)
		for _, v := range k.vals {
			k.enc = keyenc.AppendField(k.enc, v, false)
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b indexKey) int { return bytes.Compare(a.enc, b.enc) })
	return keys, nil
}

// termPrefix is the encoded start of every key of term under the prefix
// values: an index scan of the term reads the keys it begins.
func termPrefix(prefix []bson.RawValue, term string) []byte {
	var enc []byte
	for _, v := range prefix {
		enc = keyenc.AppendField(enc, v, false)
	}
	return keyenc.AppendField(enc, bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, term)}, false)
}

// entryScore is the score an entry of a text index holds, its values
// being the prefix's, the term's and the score's.
func entryScore(value []byte, prefixLen int) float64 {
	f, _ := entryValues(value).Lookup(strconv.Itoa(prefixLen + 1)).DoubleOK()
	return f
}

// sameTextOptions reports whether an index has the text options of a
// fixed spec (none on other indexes).
func sameTextOptions(ix *Index, spec IndexSpec) bool {
	if ix.text == nil {
		return spec.Text.Weights.Type == 0
	}
	t := spec.Text
	o := ix.text.options
	return o.Lookup("weights").Equal(t.Weights) && o.Lookup("default_language").Equal(t.DefaultLanguage) &&
		o.Lookup("language_override").Equal(t.LanguageOverride)
}

// oneTextIndex is MongoDB's rule of one text index per collection: a new
// text index fails with CannotCreateIndex while another exists or is
// being built. As in MongoDB, it is checked after the conflicts with the
// indexes there by name or key pattern (checkIndexConflict).
func oneTextIndex(indexes []*Index, spec IndexSpec) error {
	if spec.Text.Weights.Type == 0 {
		return nil
	}
	for _, ix := range indexes {
		if ix.text != nil {
			return mongoerr.New(mongoerr.CannotCreateIndex, "only one text index per collection allowed, found existing text index \"%s\"", ix.Name)
		}
	}
	return nil
}
