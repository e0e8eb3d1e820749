package values

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestNumber checks the type boundaries of BSONObjBuilder::appendNumber.
func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want bson.Type
	}{
		{0, bson.TypeInt32},
		{1<<30 - 1, bson.TypeInt32},
		{-(1<<30 - 1), bson.TypeInt32},
		{1 << 30, bson.TypeDouble},
		{-(1 << 30), bson.TypeDouble},
		{1<<40 - 1, bson.TypeDouble},
		{1 << 40, bson.TypeInt64},
		{-(1 << 40), bson.TypeInt64},
	} {
		v := Number(tc.n)
		if v.Type != tc.want {
			t.Errorf("Number(%d) is %s, want %s", tc.n, v.Type, tc.want)
			continue
		}
		if f, _ := Float64(v); f != float64(tc.n) {
			t.Errorf("Number(%d) = %v", tc.n, f)
		}
	}
}
