package hashkey

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func raw(t *testing.T, v any) bson.RawValue {
	t.Helper()
	typ, b, err := bson.MarshalValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return bson.RawValue{Type: typ, Value: b}
}

// TestHash: MongoDB's documented value, and the equalities its canonical
// encoding implies (numbers of every type hash as their int64 truncation).
func TestHash(t *testing.T) {
	// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/toHashedIndexKey/
	if got := Hash(raw(t, "string to hash")); got != 763543691661428748 {
		t.Fatalf("Hash(\"string to hash\") = %d, MongoDB 763543691661428748", got)
	}
	one := Hash(raw(t, int32(1)))
	dec, _ := bson.ParseDecimal128("1.9")
	for _, v := range []any{int64(1), 1.0, 1.7, dec} {
		if Hash(raw(t, v)) != one {
			t.Errorf("%v hashes unlike 1", v)
		}
	}
	if Hash(raw(t, "1")) == one || Hash(raw(t, bson.D{{Key: "a", Value: 1}})) == Hash(raw(t, bson.D{{Key: "b", Value: 1}})) {
		t.Error("distinct values hash alike")
	}
}
