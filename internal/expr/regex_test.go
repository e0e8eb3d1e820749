package expr

import (
	"errors"
	"strconv"
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

// TestRegexMatchLimit: a match that backtracks past the engine's bounds
// fails with 51156, as PCRE2's match limit does in MongoDB; a pattern
// Folio does not run is refused with 238.
func TestRegexMatchLimit(t *testing.T) {
	eval := func(op, regex string) error {
		doc, _ := bson.Marshal(bson.D{{Key: "z", Value: strings.Repeat("a", 5000)}})
		spec, _ := bson.Marshal(bson.D{{Key: op, Value: bson.D{{Key: "input", Value: "$z"}, {Key: "regex", Value: regex}}}})
		_, err := exprCase{expr: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: spec}, doc: doc}.run()
		return err
	}
	for _, op := range []string{"$regexMatch", "$regexFind", "$regexFindAll"} {
		if err := eval(op, `^(a|aa)*b$`); !mongoerr.Is(err, mongoerr.RegexExecutionFailed) {
			t.Errorf("%s: %v, want 51156", op, err)
		}
		if err := eval(op, `a\Kb`); !mongoerr.Is(err, mongoerr.NotImplemented) {
			t.Errorf("%s with \\K: %v, want 238", op, err)
		}
	}
}

// TestStringResultBound: $concat, $replaceOne and $replaceAll build their
// result as MongoDB's StringBuilder does, failing with 13548 at the append
// that would take it past BufferMaxSize (125 MB), naming the size it would
// have reached; a result of exactly 125 MB is built.
func TestStringResultBound(t *testing.T) {
	eval := func(doc bson.D, expr string) (bson.RawValue, error) {
		d, _ := bson.Marshal(doc)
		var spec bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(`{"e": `+expr+`}`), false, &spec); err != nil {
			t.Fatal(err)
		}
		c := exprCase{expr: spec.Lookup("e"), doc: d}
		return c.run()
	}
	const bound = 125 * 1024 * 1024
	tenth := bson.D{{Key: "s", Value: strings.Repeat("a", bound/10)}, {Key: "r", Value: strings.Repeat("b", 10000)}, {Key: "x", Value: strings.Repeat("x", 20000)}, {Key: "y", Value: strings.Repeat("y", 7000)}}
	tests := []struct {
		expr string
		size int // the size reported, 0 for a result of bound bytes
	}{
		{`{"$concat": ["$s", "$s", "$s", "$s", "$s", "$s", "$s", "$s", "$s", "$s"]}`, 0},
		{`{"$concat": ["$s", "$s", "$s", "$s", "$s", "$s", "$s", "$s", "$s", "$s", "z", null]}`, bound + 1},
		{`{"$reduce": {"input": {"$range": [0, 27]}, "initialValue": "a", "in": {"$concat": ["$$value", "$$value"]}}}`, 1 << 27},
		// an empty find: the replacement, then each character, then the replacement
		{`{"$replaceAll": {"input": {"$substrBytes": ["$x", 0, 15000]}, "find": "", "replacement": "$r"}}`, 131073105},
		{`{"$replaceAll": {"input": "$x", "find": "x", "replacement": "$y"}}`, 131075000},
		{`{"$replaceOne": {"input": "$x", "find": "x", "replacement": "$y"}}`, -1},
	}
	for _, tc := range tests {
		got, err := eval(tenth, tc.expr)
		switch {
		case tc.size > 0:
			want := "BufBuilder attempted to grow() to " + strconv.Itoa(tc.size) + " bytes, past the 125MB limit."
			var me *mongoerr.Error
			if !errors.As(err, &me) || me.Code != mongoerr.BufBuilderTooLarge || me.Msg != want {
				t.Errorf("%s: %v, want 13548 %q", tc.expr, err, want)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.expr, err)
		case tc.size == 0 && len(got.StringValue()) != bound:
			t.Errorf("%s: %d bytes, want %d", tc.expr, len(got.StringValue()), bound)
		}
	}
}
