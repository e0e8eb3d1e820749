package engine

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// slab copies the documents a cursor serves into shared chunks, so that one
// allocation serves several small documents (a batch of a find is usually
// filled, copied into the reply and dropped together). A chunk lives while
// any of its documents does; documents above slabLarge get their own copy,
// so a chunk pins at most slabChunk bytes for one small retained document.
type slab struct{ buf []byte }

const (
	slabChunk = 16 << 10
	slabLarge = slabChunk / 4
)

// clone returns a copy of doc that later clones never overwrite.
func (s *slab) clone(doc []byte) bson.Raw {
	if len(doc) > slabLarge {
		return slices.Clone(doc)
	}
	if cap(s.buf)-len(s.buf) < len(doc) {
		s.buf = make([]byte, 0, slabChunk)
	}
	n := len(s.buf)
	s.buf = append(s.buf, doc...)
	return s.buf[n:len(s.buf):len(s.buf)]
}
