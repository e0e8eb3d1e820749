package expr

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestRegexFindAllLarge: $regexFindAll on a long input counts idx in code
// points in one pass, and fails with 51151 once its match documents pass
// 64 MB, as MongoDB's regex_limits test has it (150 empty groups matched
// at each of 50,001 characters).
func TestRegexFindAllLarge(t *testing.T) {
	eval := func(input, regex string) (bson.RawValue, error) {
		doc, _ := bson.Marshal(bson.D{{Key: "z", Value: input}})
		spec, _ := bson.Marshal(bson.D{{Key: "$regexFindAll", Value: bson.D{{Key: "input", Value: "$z"}, {Key: "regex", Value: regex}}}})
		c := exprCase{expr: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: spec}, doc: doc}
		return c.run()
	}
	input := strings.Repeat("é", 100000) + "x" + strings.Repeat("é", 5) + "x"
	got, err := eval(input, "x")
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := got.Array().Values()
	if len(vals) != 2 || vals[0].Document().Lookup("idx").AsInt64() != 100000 || vals[1].Document().Lookup("idx").AsInt64() != 100006 {
		t.Fatalf("matches %v", got)
	}
	z := strings.Repeat("c", 25000) + strings.Repeat("d", 25000) + "e"
	for _, pattern := range []string{strings.Repeat("()", 150), strings.Repeat("(", 150) + strings.Repeat(")", 150)} {
		if _, err := eval(z, pattern); !mongoerr.Is(err, mongoerr.RegexFindAllTooLarge) {
			t.Errorf("%d groups on %d characters: %v, want 51151", 150, len(z), err)
		}
	}
}
