// Package collation implements MongoDB's collations on
// golang.org/x/text/collate: parsing and validating the collation document,
// the normalized document MongoDB reports, and collation keys. A string
// compares under a collation as its key compares bytewise, so every
// comparison, sort, group and index key follows a collation by replacing
// strings with their keys (Transform), as MongoDB's index keys do.
package collation

import (
	"encoding/binary"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// Collator compares strings under one collation. A nil *Collator is the
// simple (binary) collation. It is safe for concurrent use.
type Collator struct {
	spec Spec
	doc  bson.Raw
	tag  language.Tag
	// levelled: keys are rebuilt level by level (levels.go).
	levelled bool
	// reorder moves primaries to the locale's script order; nil if it has
	// none.
	reorder reordering
	// pool holds x/text collators, which are not safe for concurrent use.
	pool sync.Pool
}

func newCollator(s Spec) *Collator {
	base := language.MustParse(languageTag(s.Locale))
	tag := base
	set := func(k, v string) {
		if t, err := tag.SetTypeForKey(k, v); err == nil {
			tag = t
		}
	}
	// A levelled collation (levels.go) needs tertiaries for case, and keys
	// the pieces between spaces without variables when spaces alone are.
	strength := s.Strength
	if s.cased() {
		strength = max(strength, 3)
	}
	set("ks", [...]string{"", "level1", "level2", "level3", "level4", "identic"}[strength])
	if s.Alternate == "shifted" && !s.spaceVariable() {
		set("ka", "shifted")
	}
	if s.Backwards {
		set("kb", "true")
	}
	if s.NumericOrdering {
		set("kn", "true")
	}
	c := &Collator{spec: s, doc: s.Document(), tag: tag, levelled: s.levelled()}
	if g := reorders[s.Locale]; g != nil {
		c.reorder = newReordering(g, base)
	}
	c.pool.New = func() any { return &worker{c: collate.New(tag)} }
	return c
}

type worker struct {
	c      *collate.Collator
	buf    collate.Buffer
	nfd    []byte    // the string keyed, decomposed
	levels [3]levels // its levels, lower-cased, upper-cased
}

// Spec is the collation's normalized definition.
func (c *Collator) Spec() Spec { return c.spec }

// Document is the collation as MongoDB reports it; {locale: "simple"} for
// the simple collation.
func (c *Collator) Document() bson.Raw {
	if c == nil {
		return simpleDoc
	}
	return c.doc
}

var simpleDoc = func() bson.Raw {
	b, _ := bson.Marshal(bson.D{{Key: "locale", Value: Simple}})
	return b
}()

// Equal reports whether two collators order every string alike (nil is
// the simple collation).
func Equal(a, b *Collator) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.spec == b.spec
}

// AppendKey appends the collation key of s to dst: keys compare bytewise
// as their strings compare under the collation. x/text is given the
// string's canonical decomposition (NFD): fed a precomposed letter it
// misses the contractions and tailorings the letter takes part in (Danish
// "Aà" is the contraction "Aa" and a grave accent, as ICU has it, only when
// decomposed), so canonically equivalent strings key alike. Strength 5
// (identical) appends the NFD form after the key, as ICU's identical level
// compares code points of the normalized strings.
func (c *Collator) AppendKey(dst []byte, s string) []byte {
	w := c.pool.Get().(*worker)
	defer c.pool.Put(w)
	w.nfd = norm.NFD.AppendString(w.nfd[:0], s)
	if c.levelled {
		dst = c.appendLevelled(dst, w, w.nfd)
	} else {
		w.buf.Reset()
		dst = append(dst, w.c.Key(&w.buf, w.nfd)...)
	}
	if c.spec.Strength == 5 {
		dst = append(append(dst, 0), w.nfd...)
	}
	return dst
}

// Collatable reports whether v holds a string anywhere (strings, symbols,
// and documents or arrays containing them): the values a collation
// changes.
func Collatable(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		return true
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		it := rawdoc.Iterate(v.Value)
		for {
			_, ev, ok := it.Next()
			if !ok {
				break
			}
			if Collatable(ev) {
				return true
			}
		}
	}
	return false
}

// Transform replaces every string in v (at any depth) with its collation
// key, so that values.Compare orders transformed values as MongoDB orders
// the originals under the collation. Field names are not collated. A nil
// collator, or a value without strings, returns v itself.
func (c *Collator) Transform(v bson.RawValue) bson.RawValue {
	if c == nil || !Collatable(v) {
		return v
	}
	return bson.RawValue{Type: v.Type, Value: c.appendTransformed(nil, v)}
}

// TransformAppend is Transform writing the transformed value's bytes at the
// end of dst (when v holds strings), so that a caller reusing a buffer
// allocates nothing.
func (c *Collator) TransformAppend(dst []byte, v bson.RawValue) bson.RawValue {
	if c == nil || !Collatable(v) {
		return v
	}
	at := len(dst)
	dst = c.appendTransformed(dst, v)
	return bson.RawValue{Type: v.Type, Value: dst[at:]}
}

func (c *Collator) appendTransformed(dst []byte, v bson.RawValue) []byte {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		s, _ := v.StringValueOK()
		if v.Type == bson.TypeSymbol {
			s, _ = v.SymbolOK()
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		dst = c.AppendKey(dst, s)
		dst = append(dst, 0)
		binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
		return dst
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		start, out := bsoncore.AppendDocumentStart(dst)
		it := rawdoc.Iterate(v.Value)
		for {
			k, ev, ok := it.Next()
			if !ok {
				break
			}
			out = append(out, byte(ev.Type))
			out = append(append(out, k...), 0)
			out = c.appendTransformed(out, ev)
		}
		out, _ = bsoncore.AppendDocumentEnd(out, start)
		return out
	}
	return append(dst, v.Value...)
}

// AppendValueKey appends v's key under the collation (a nil collator:
// strings compared bytewise) to dst: two values have the same key exactly
// when they compare equal under it (1 and 1.0 do), and keys order bytewise
// as their values compare. Sets, groups and sorts of values key on it.
func (c *Collator) AppendValueKey(dst []byte, v bson.RawValue) []byte {
	return keyenc.AppendValue(dst, c.Transform(v))
}

// ValueKey is AppendValueKey to a new slice.
func (c *Collator) ValueKey(v bson.RawValue) []byte { return c.AppendValueKey(nil, v) }

// Compare orders a and b as MongoDB does under the collation (values'
// order, strings by collation).
func (c *Collator) Compare(a, b bson.RawValue) int {
	if c == nil {
		return values.Compare(a, b)
	}
	return values.Compare(c.Transform(a), c.Transform(b))
}
