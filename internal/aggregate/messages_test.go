package aggregate

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestStageMessages: the code and text of errors of parsing and running
// stages, as MongoDB 7.0 writes them, over test.c holding {_id: 1}.
func TestStageMessages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pipeline string // Extended JSON array
		coll     string // the collection read, "c" by default
		code     mongoerr.Code
		msg      string
	}{
		// StorageStatsSpec's scale: a numeric IDL field
		{"collStats scale a string", `[{"$collStats": {"storageStats": {"scale": "x"}}}]`, "", 14,
			"BSON field '$collStats.storageStats.scale' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{"collStats scale an object", `[{"$collStats": {"storageStats": {"scale": {}}}}]`, "", 14,
			"BSON field '$collStats.storageStats.scale' is the wrong type 'object', expected types '[long, int, decimal, double']"},
		{"fill partitionBy a number", `[{"$fill": {"sortBy": {"_id": 1}, "partitionBy": 1, "output": {"a": {"method": "locf"}}}}]`, "", 14,
			"BSON field '$fill.partitionBy' is the wrong type 'int', expected types '[string, object']"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wrapped bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(`{"p": `+tc.pipeline+`}`), false, &wrapped); err != nil {
				t.Fatal(err)
			}
			vals, err := wrapped.Lookup("p").Array().Values()
			if err != nil {
				t.Fatal(err)
			}
			c := stageCase{Docs: []bson.Raw{mustMarshal(bson.D{{Key: "_id", Value: int32(1)}})}}
			for _, v := range vals {
				c.Pipeline = append(c.Pipeline, v.Document())
			}
			_, _, err = runCaseOn(c, tc.coll)
			if err == nil {
				t.Fatalf("no error, want %d %q", tc.code, tc.msg)
			}
			if e := mongoerr.As(err); e.Code != tc.code || e.Msg != tc.msg {
				t.Fatalf("got %d %q, want %d %q", e.Code, e.Msg, tc.code, tc.msg)
			}
		})
	}
}
