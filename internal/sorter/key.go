package sorter

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/query"
)

// SortKey turns a compiled sort into byte keys: the document's sort key
// (query.Sort.KeysErr: the index key of the sort's pattern that sorts
// first), each field's value in keyenc's order, inverted when descending,
// so bytes compare as the sort does.
type SortKey struct {
	sort *query.Sort
	desc []bool
}

// NewSortKey prepares the keys of s.
func NewSortKey(s *query.Sort) *SortKey {
	_, dirs := s.Fields()
	k := &SortKey{sort: s, desc: make([]bool, len(dirs))}
	for i, d := range dirs {
		k.desc[i] = d < 0
	}
	return k
}

// Of returns doc's key; it fails as KeysErr does (parallel arrays).
func (k *SortKey) Of(doc bson.Raw) ([]byte, error) {
	return k.OfMeta(doc, docsrc.Meta{})
}

// OfMeta returns the key of doc carrying meta (its text score).
func (k *SortKey) OfMeta(doc bson.Raw, meta docsrc.Meta) ([]byte, error) {
	vals, err := k.sort.KeysMeta(doc, meta)
	if err != nil {
		return nil, err
	}
	var key []byte
	for i, v := range vals {
		key = keyenc.AppendField(key, v, k.desc[i])
	}
	return key, nil
}
