package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
)

// docSource yields the candidate documents of a read or write in storage
// order: one document when the filter pins _id to a single value, the whole
// collection otherwise. Next returns nil at the end; the document is valid
// until the next call.
type docSource interface {
	Next() (bson.Raw, error)
	Close() error
}

// source picks the cheapest docSource for filter over r.
func source(r storage.Reader, c *Collection, filter bson.Raw) (docSource, error) {
	if id, ok := pinnedID(filter); ok {
		doc, found, err := r.Get(docKey(c.ID, id))
		if err != nil {
			return nil, err
		}
		return &pointSource{doc: doc, done: !found}, nil
	}
	lo, hi := docSpan(c.ID)
	it, err := r.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	return &scanSource{it: it}, nil
}

// pinnedID reports the single _id value a filter requires by a top-level
// equality ({_id: v} or {_id: {$eq: v}}), when v is a plain value: not an
// array, regex, or operator document, whose equality semantics are wider.
func pinnedID(filter bson.Raw) (bson.RawValue, bool) {
	v, err := filter.LookupErr("_id")
	if err != nil {
		return bson.RawValue{}, false
	}
	if v.Type == bson.TypeEmbeddedDocument && isOperatorDoc(v.Document()) {
		elems, err := v.Document().Elements()
		if err != nil || len(elems) != 1 || elems[0].Key() != "$eq" {
			return bson.RawValue{}, false
		}
		v = elems[0].Value()
	}
	switch v.Type {
	case bson.TypeArray, bson.TypeRegex, bson.TypeUndefined, bson.TypeNull:
		return bson.RawValue{}, false
	}
	return v, true
}

// isOperatorDoc reports whether d's first field name starts with '$'.
func isOperatorDoc(d bson.Raw) bool {
	el, err := d.IndexErr(0)
	return err == nil && len(el.Key()) > 0 && el.Key()[0] == '$'
}

type pointSource struct {
	doc  bson.Raw
	done bool
}

func (p *pointSource) Next() (bson.Raw, error) {
	if p.done {
		return nil, nil
	}
	p.done = true
	return p.doc, nil
}

func (p *pointSource) Close() error { return nil }

type scanSource struct {
	it      storage.Iter
	started bool
}

func (s *scanSource) Next() (bson.Raw, error) {
	var ok bool
	if !s.started {
		s.started = true
		ok = s.it.First()
	} else {
		ok = s.it.Next()
	}
	if !ok {
		return nil, s.it.Error()
	}
	return s.it.Value(), nil
}

func (s *scanSource) Close() error { return s.it.Close() }
