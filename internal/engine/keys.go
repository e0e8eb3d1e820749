package engine

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
)

// Key layout. Every key starts with a one-byte space tag:
//
//	m <name>                        engine metadata: the store's format, the
//	                                collection id counter, the catalog version,
//	                                the frontends' schema leases, the jobs lease,
//	                                dropped data awaiting removal, capped
//	                                collections' totals (format.go,
//	                                catalog_version.go, schema_lease.go,
//	                                jobs_lease.go, garbage.go, capped.go)
//	c <db> 0x00 <collection>        catalog entry -> collection metadata (BSON)
//	d <collID:4> <record id>        document -> raw BSON; the record id is
//	                                keyenc(_id), or on a sharded collection
//	                                keyenc([shard key values..., _id])
//	                                (shard_layout.go)
//	i <collID:4> <indexID:4> <keyenc(k1..kn)> [<record id>]
//	                                index entry -> record id; indexes
//	                                created unique leave it out of the
//	                                key, so equal keys of two documents
//	                                collide
//	n <collID:4> <seq:8>            capped collections: insertion order -> keyenc(_id)
//	s ...                           sessions' transaction records, written by
//	                                package sessions through Recorder
//	u <collID:4> <indexID:4> <keyenc(k1..kn)>
//	                                never set: deleted by the writers of a
//	                                key of a unique index keyed with the
//	                                record id, so that they conflict
//	                                (uniqueGuard)
//
// Collection ids are never reused, so dropping a collection is one range
// deletion of its documents and nothing can resurrect them.
const (
	spaceMeta    = 'm'
	spaceCatalog = 'c'
	spaceDoc     = 'd'
	spaceIndex   = 'i'
	spaceNatural = 'n'
	// spaceOplog holds the oplog's entries (oplog.go).
	spaceOplog = 'o'
	// spaceUniqueGuard holds no key (uniqueGuard).
	spaceUniqueGuard = 'u'
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

func docPrefix(collID uint32) []byte { return docPrefixRoom(collID, 0) }

// docPrefixRoom is docPrefix with room for n more bytes.
func docPrefixRoom(collID uint32, n int) []byte {
	return binary.BigEndian.AppendUint32(append(make([]byte, 0, 5+n), spaceDoc), collID)
}

// docSpan bounds the documents of one collection.
func docSpan(collID uint32) (lower, upper []byte) {
	return docPrefix(collID), docPrefix(collID + 1)
}

func docKey(collID uint32, id bson.RawValue) []byte {
	// room for most encodings: a tag, the value's bytes, a few more
	return keyenc.AppendValue(docPrefixRoom(collID, len(id.Value)+8), id)
}

// collNaturalSpan bounds the insertion-order entries of one collection.
func collNaturalSpan(collID uint32) (lower, upper []byte) {
	return naturalPrefix(collID), naturalPrefix(collID + 1)
}

// collSpans bound every key of one collection's data: its documents, its
// insertion order and its index entries.
func collSpans(collID uint32) [][2][]byte {
	var out [][2][]byte
	for _, span := range []func(uint32) ([]byte, []byte){docSpan, collNaturalSpan, collIndexSpan} {
		lo, hi := span(collID)
		out = append(out, [2][]byte{lo, hi})
	}
	return out
}

// collIndexSpan bounds every index entry of one collection.
func collIndexSpan(collID uint32) (lower, upper []byte) {
	return binary.BigEndian.AppendUint32([]byte{spaceIndex}, collID), binary.BigEndian.AppendUint32([]byte{spaceIndex}, collID+1)
}

func indexPrefix(collID, indexID uint32) []byte {
	k := make([]byte, 0, 64)
	k = append(k, spaceIndex)
	k = binary.BigEndian.AppendUint32(k, collID)
	return binary.BigEndian.AppendUint32(k, indexID)
}

// indexSpan bounds the entries of one index.
func indexSpan(collID, indexID uint32) (lower, upper []byte) {
	return indexPrefix(collID, indexID), indexPrefix(collID, indexID+1)
}

// sizeGroup groups the keys of the ranges the size estimates ask about
// (stats.go), for a store that counts its unflushed writes by group
// (storage.UnflushedGrouper): a collection's documents and its insertion
// order (tag and collection id), each index's entries (tag, collection
// and index ids), the oplog (its tag). Every range stats.go asks for is a
// union of these groups, so none is counted short; other keys (catalog,
// metadata, sessions) are not counted.
func sizeGroup(key []byte) int {
	if len(key) == 0 {
		return 0
	}
	n := 0
	switch key[0] {
	case spaceDoc, spaceNatural:
		n = 5
	case spaceIndex:
		n = 9
	case spaceOplog:
		n = 1
	}
	if n > len(key) {
		return 0
	}
	return n
}

// idFromDocKey is the record id part of a document key (its encoded _id
// unless the collection is sharded).
func idFromDocKey(key []byte) []byte { return key[5:] }

// docKeyFromEncodedID rebuilds a document key from a record id.
func docKeyFromEncodedID(collID uint32, encID []byte) []byte {
	return append(docPrefixRoom(collID, len(encID)), encID...)
}
