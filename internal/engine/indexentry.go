package engine

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/rawdoc"
)

// An index entry's value is the encoded _id of its document followed by
// the values of the key's fields as a BSON document ({"0": v0, ...}):
// the key's encoding orders values but loses their types (1 and 1.0 encode
// alike), and a covered read answers with the values themselves, as
// MongoDB's key strings keep their type bits. Entries written before the
// values were kept hold the _id alone.

// entryValue is the value of the entry of key k for the document encID.
func entryValue(encID []byte, k indexKey) []byte {
	out := append(make([]byte, 0, len(encID)+16), encID...)
	start, out := bsoncore.AppendDocumentStart(out)
	for i, v := range k.vals {
		out = rawdoc.AppendElement(out, strconv.Itoa(i), v)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// entryID is the encoded _id an index entry's value starts with.
func entryID(value []byte) []byte {
	n, ok := keyenc.FieldLen(value, false)
	if !ok || n > len(value) {
		return value
	}
	return value[:n]
}

// entryValues are the key's values an entry's value holds, or nil for an
// entry that holds the _id alone.
func entryValues(value []byte) bson.Raw {
	rest := value[len(entryID(value)):]
	if len(rest) == 0 {
		return nil
	}
	return rest
}

// sameValues reports whether two keys were built from identical values
// (types included), so that their entries' values are equal.
func sameValues(a, b []bson.RawValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || string(a[i].Value) != string(b[i].Value) {
			return false
		}
	}
	return true
}
