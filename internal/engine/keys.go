package engine

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
)

// Key layout. Every key starts with a one-byte space tag:
//
//	m <name>                        engine metadata (the collection id counter)
//	c <db> 0x00 <collection>        catalog entry -> collection metadata (BSON)
//	d <collID:4> <keyenc(_id)>      document -> raw BSON
//
// Collection ids are never reused, so dropping a collection is one range
// deletion of its documents and nothing can resurrect them.
const (
	spaceMeta    = 'm'
	spaceCatalog = 'c'
	spaceDoc     = 'd'
)

var keyNextCollID = []byte{spaceMeta, 'n', 'e', 'x', 't', 'c', 'o', 'l', 'l'}

func catalogKey(db, coll string) []byte {
	k := make([]byte, 0, 2+len(db)+len(coll))
	k = append(k, spaceCatalog)
	k = append(k, db...)
	k = append(k, 0)
	return append(k, coll...)
}

// catalogSpan bounds every catalog key.
func catalogSpan() (lower, upper []byte) { return []byte{spaceCatalog}, []byte{spaceCatalog + 1} }

func docPrefix(collID uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{spaceDoc}, collID)
}

// docSpan bounds the documents of one collection.
func docSpan(collID uint32) (lower, upper []byte) {
	return docPrefix(collID), docPrefix(collID + 1)
}

func docKey(collID uint32, id bson.RawValue) []byte {
	return keyenc.AppendValue(docPrefix(collID), id)
}
