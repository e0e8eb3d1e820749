package driver_test

import (
	"errors"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestRegexEscapes: a $regex's escapes read as PCRE2 reads them, with its
// compile errors (51091 in a filter, 51111 in $regexMatch) for the letters
// it gives no meaning, the code points it refuses and the escapes a class
// may not hold.
func TestRegexEscapes(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("regexescapes")
	subjects := []string{"a", "A", "q", "AA", "\x01" + "8", "\u0085", "ab cab"}
	for i, s := range subjects {
		if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: i}, {Key: "s", Value: s}}); err != nil {
			t.Fatal(err)
		}
	}
	matches := []struct {
		pattern string
		want    []int32
	}{
		{`^\c1$`, []int32{2}},          // \c flips bit 6 of a printable character
		{`^\101++$`, []int32{1, 3}},    // octal, not backreference 1 and "01"
		{`^\18$`, []int32{4}},          // \1 is octal here, 8 a literal
		{`^\N{U+61}$`, []int32{0}},     // a code point
		{`^\o{141}$`, []int32{0}},      // octal code point
		{`[[:<:]]ab`, []int32{6}},      // start of a word
		{`^\p{Xsp}$`, []int32{5}},      // NEL is a space
		{`^\x41{2}$`, []int32{3}},      // two hexadecimal digits
		{`^[\x{61}\cQ]$`, []int32{0}},  // in a class
		{`(a)\g{+1}(b)`, []int32(nil)}, // a forward relative reference
		{`^\p{^L}$`, []int32{5}},       // negated in braces
		{`(?(+1)A|a)(b)`, []int32{6}},  // a condition on the next group
	}
	for _, m := range matches {
		cur, err := coll.Find(t.Context(), bson.D{{Key: "s", Value: bson.D{{Key: "$regex", Value: m.pattern}}}},
			options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			t.Fatalf("%s: %v", m.pattern, err)
		}
		var docs []struct {
			ID int32 `bson:"_id"`
		}
		if err := cur.All(t.Context(), &docs); err != nil {
			t.Fatal(err)
		}
		var got []int32
		for _, d := range docs {
			got = append(got, d.ID)
		}
		if !slices.Equal(got, m.want) {
			t.Errorf("%s matched %v, want %v", m.pattern, got, m.want)
		}
	}
	const perl = `PCRE2 does not support \F, \L, \l, \N{name}, \U, or \u`
	invalid := []struct{ pattern, msg string }{
		{`\u0041`, perl},
		{`[\F]`, perl},
		{`\N{x}`, perl},
		{`\j`, `unrecognized character follows \`},
		{`[\q]`, `unrecognized character follows \`},
		{`[\B]`, "escape sequence is invalid in character class"},
		{`[\N]`, `\N is not supported in a class`},
		{`\x{}`, `digits missing in \x{} or \o{} or \N{U+}`},
		{`\x{61`, `non-hex character in \x{} (closing brace missing?)`},
		{`\x{d800}`, "disallowed Unicode code point (>= 0xd800 && <= 0xdfff)"},
		{`\g{-1}`, "reference to non-existent subpattern"},
		{`(a)\g0`, "reference to non-existent subpattern"},
		{`[[:word:][:foo:]]`, "unknown POSIX class name"},
		{`(?(<x>)a|b)`, "reference to non-existent subpattern"},
		{`(?(-1)a)`, "reference to non-existent subpattern"},
		{`a{3,2}`, "numbers out of order in {} quantifier"},
	}
	for _, tc := range invalid {
		_, err := coll.Find(t.Context(), bson.D{{Key: "s", Value: bson.D{{Key: "$regex", Value: tc.pattern}}}})
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 51091 || ce.Message != "Regular expression is invalid: "+tc.msg {
			t.Errorf("find %s: %v, want 51091 %q", tc.pattern, err, tc.msg)
		}
		_, err = coll.Aggregate(t.Context(), bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$regexMatch",
			Value: bson.D{{Key: "input", Value: "$s"}, {Key: "regex", Value: tc.pattern}}}}}}}}})
		if !errors.As(err, &ce) || ce.Code != 51111 || ce.Message != "Invalid Regex in $regexMatch: "+tc.msg {
			t.Errorf("$regexMatch %s: %v, want 51111 %q", tc.pattern, err, tc.msg)
		}
	}
}
