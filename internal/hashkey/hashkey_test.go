package hashkey

import (
	"math"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func rv(t *testing.T, v any) bson.RawValue {
	t.Helper()
	doc, err := bson.Marshal(bson.D{{Key: "check", Value: v}})
	if err != nil {
		t.Fatal(err)
	}
	return bson.Raw(doc).Lookup("check")
}

// TestHashVectors checks Hash against the values MongoDB's own tests
// assert (hasher_test.cpp, and the $toHashedIndexKey expression tests):
// convertShardKeyToHashed and hashed index keys give the same numbers.
func TestHashVectors(t *testing.T) {
	oid := func(s string) bson.ObjectID { o, _ := bson.ObjectIDFromHex(s); return o }
	dec := func(s string) bson.Decimal128 { d, _ := bson.ParseDecimal128(s); return d }
	cases := []struct {
		name string
		v    any
		want int64
	}{
		{"int 42", int32(42), -944302157085130861},
		{"double 42.123", 42.123, -944302157085130861},
		{"long 42", int64(42), -944302157085130861},
		{"decimal 42.9", dec("42.9"), -944302157085130861},
		{"int 0", int32(0), 4854801880128277513},
		{"double 0.456", 0.456, 4854801880128277513},
		{"NaN", math.NaN(), 4854801880128277513},
		{"int 1", int32(1), 5902408780260971510},
		{"double 1.987", 1.987, 5902408780260971510},
		{"int -1", int32(-1), 1140205862565771219},
		{"double -1.789", -1.789, 1140205862565771219},
		{"int min", int32(math.MinInt32), 6165898260261354870},
		{"int max", int32(math.MaxInt32), 1143184177162245883},
		{"double max", math.MaxFloat64, 921523596458303250},
		{"long max", int64(math.MaxInt64), 921523596458303250},
		{"double -max", -math.MaxFloat64, 4532067210535695462},
		{"long min", int64(math.MinInt64), 4532067210535695462},
		{"double 2^63", float64(1 << 63), 4532067210535695462},
		{"int 123", int32(123), -6548868637522515075},
		{"int 16", int32(16), 2598032665634823220},
		{"minkey", bson.MinKey{}, 7961148599568647290},
		{"maxkey", bson.MaxKey{}, 5504842513779440750},
		{"undefined", bson.Undefined{}, 40158834000849533},
		{"null", nil, 2338878944348059895},
		{"string abc", "abc", 8478485326885698097},
		{"symbol abc", bson.Symbol("abc"), 8478485326885698097},
		{"empty string", "", 2049396243249673340},
		{"string", "hashThisStringLiteral", -5776344739422278694},
		{"object", bson.D{{Key: "a", Value: "abc"}, {Key: "b", Value: int64(123)}}, 4771603801758380216},
		{"empty object", bson.D{}, 7980500913326740417},
		{"array", bson.A{"bar", "baz", "qux"}, -2938911267422831539},
		{"empty array", bson.A{}, 8849948234993459283},
		{"bindata", bson.Binary{Subtype: 0, Data: []byte{0, 1, 2, 3, 4, 6}}, 7252465090394235301},
		{"bindata custom", bson.Binary{Subtype: 128, Data: []byte{0, 1, 2, 3, 4, 6}}, 5736670452907618262},
		{"uuid", bson.Binary{Subtype: 4, Data: []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}, 6084661258071355978},
		{"oid", oid("010203040506070809101112"), -5588663249627035708},
		{"oid zero", oid("000000000000000000000000"), -4293118519463489418},
		{"oid 2", oid("47cc67093475061e3d95369d"), 1576265281381834298},
		{"true", true, 6405873908747105701},
		{"false", false, 6289544573401934092},
		{"date", bson.DateTime(0x5566778811223344), 4476222765095560467},
		{"date 0", bson.NewDateTimeFromTime(time.UnixMilli(0)), -1178696894582842035},
		{"timestamp 0", bson.Timestamp{}, -7867208682377458672},
		{"regex", bson.Regex{Pattern: "mongodb"}, -7275792090268217043},
		{"regex i", bson.Regex{Pattern: ".*", Options: "i"}, 7095855029187981886},
		{"dbpointer", bson.DBPointer{DB: "c", Pointer: oid("010203040506070809101112")}, 940175826736461384},
		{"dbpointer 2", bson.DBPointer{DB: "db.c", Pointer: oid("010203040506070809101112")}, 2426768198104018194},
		{"code", bson.JavaScript("func f() { return 1; }"), 6861638109178014270},
		{"code w scope", bson.CodeWithScope{Code: "func f() { return 1; }", Scope: bson.D{{Key: "c", Value: true}}}, 501342939894575968},
	}
	for _, c := range cases {
		if got := Hash(rv(t, c.v)); got != c.want {
			t.Errorf("%s: Hash = %d, want %d", c.name, got, c.want)
		}
	}
	if got := Hash(bson.RawValue{}); got != 2338878944348059895 {
		t.Errorf("missing: Hash = %d, want null's", got)
	}
}
