package collation

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func doc(t testing.TB, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func str(s string) bson.RawValue {
	_, b, _ := bson.MarshalValue(s)
	return bson.RawValue{Type: bson.TypeString, Value: b}
}

// TestOrder checks (locale, options, strings) → order and equality against
// ICU's documented results (MongoDB manual, "Collation":
// https://www.mongodb.com/docs/v7.0/reference/collation/). Each row's
// strings are in ascending order; eq lists pairs of adjacent strings that
// compare equal.
func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    bson.D
		ordered []string
		eq      []bool // eq[i]: ordered[i] == ordered[i+1]
	}{
		{"en strength 1 ignores case and accents", bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1}},
			[]string{"cafe", "Café", "CAFE", "cafes"}, []bool{true, true, false}},
		{"en strength 2 ignores case", bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}},
			[]string{"cafe", "CAFE", "café", "cafes"}, []bool{true, false, false}},
		{"en strength 3 lower before upper", bson.D{{Key: "locale", Value: "en"}},
			[]string{"a", "A", "b", "B"}, []bool{false, false, false}},
		{"simple-looking digits sort as text", bson.D{{Key: "locale", Value: "en"}},
			[]string{"1", "10", "2"}, []bool{false, false}},
		{"numericOrdering", bson.D{{Key: "locale", Value: "en"}, {Key: "numericOrdering", Value: true}},
			[]string{"1", "2", "10", "100"}, []bool{false, false, false}},
		{"shifted ignores spaces and punctuation", bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "shifted"}},
			[]string{"black bird", "black-bird", "blackbird", "blackbirds"}, []bool{true, true, false}},
		{"non-ignorable keeps them", bson.D{{Key: "locale", Value: "en"}},
			[]string{"black bird", "black-bird", "blackbird"}, []bool{false, false}},
		{"shifted strength 4 tells them apart", bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "shifted"}, {Key: "strength", Value: 4}},
			[]string{"black bird", "black-bird", "blackbird"}, []bool{false, false}},
		{"fr_CA sorts accents backwards", bson.D{{Key: "locale", Value: "fr_CA"}},
			[]string{"cote", "côte", "coté", "côté"}, []bool{false, false, false}},
		{"fr forwards", bson.D{{Key: "locale", Value: "fr"}},
			[]string{"cote", "coté", "côte", "côté"}, []bool{false, false, false}},
		{"de: ä with a", bson.D{{Key: "locale", Value: "de"}},
			[]string{"a", "ä", "b", "z"}, []bool{false, false, false}},
		{"sv: ä after z", bson.D{{Key: "locale", Value: "sv"}},
			[]string{"a", "b", "z", "ä"}, []bool{false, false, false}},
		{"strength 5 identical: canonical equivalents equal", bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 5}},
			[]string{"e", "\u00e9", "e\u0301"}, []bool{false, true}},
		{"strength 3: canonical equivalents equal", bson.D{{Key: "locale", Value: "en"}},
			[]string{"\u00e9", "e\u0301"}, []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(doc(t, tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(tc.ordered); i++ {
				a, b := str(tc.ordered[i]), str(tc.ordered[i+1])
				got := c.Compare(a, b)
				if tc.eq[i] && got != 0 || !tc.eq[i] && got >= 0 {
					t.Errorf("Compare(%q, %q) = %d, want equal=%v and less otherwise", tc.ordered[i], tc.ordered[i+1], got, tc.eq[i])
				}
				if kc := bytes.Compare(c.ValueKey(a), c.ValueKey(b)); kc != got {
					t.Errorf("ValueKeys of %q and %q compare %d, values %d", tc.ordered[i], tc.ordered[i+1], kc, got)
				}
			}
			// Keys of documents and arrays follow their strings.
			da := c.Transform(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc(t, bson.D{{Key: "x", Value: bson.A{tc.ordered[0]}}})})
			db := c.Transform(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc(t, bson.D{{Key: "x", Value: bson.A{tc.ordered[len(tc.ordered)-1]}}})})
			if bytes.Equal(da.Value, db.Value) == (slices.Contains(tc.eq, false)) {
				t.Errorf("nested keys: equal=%v", bytes.Equal(da.Value, db.Value))
			}
		})
	}
}

func TestParseNormalizes(t *testing.T) {
	c, err := Parse(doc(t, bson.D{{Key: "locale", Value: "fr_CA"}, {Key: "strength", Value: int64(2)}}))
	if err != nil {
		t.Fatal(err)
	}
	want := doc(t, bson.D{{Key: "locale", Value: "fr_CA"}, {Key: "caseLevel", Value: false}, {Key: "caseFirst", Value: "off"}, {Key: "strength", Value: int32(2)},
		{Key: "numericOrdering", Value: false}, {Key: "alternate", Value: "non-ignorable"}, {Key: "maxVariable", Value: "punct"}, {Key: "normalization", Value: false},
		{Key: "backwards", Value: true}, {Key: "version", Value: "57.1"}})
	if !bytes.Equal(c.Document(), want) {
		t.Errorf("got %s want %s", c.Document(), want)
	}
	if c, err := Parse(doc(t, bson.D{{Key: "locale", Value: "simple"}})); c != nil || err != nil {
		t.Errorf("simple: %v %v", c, err)
	}
	again, err := Parse(c.Document())
	if err != nil || !Equal(c, again) {
		t.Errorf("reparse of the normalized document: %v", err)
	}
	// Locale defaults as ICU's collators report them: Thai makes spaces
	// and punctuation variable and normalizes, Danish puts upper case
	// first.
	for _, tc := range []struct{ locale, field, want string }{
		{"th", "alternate", `"shifted"`}, {"th", "normalization", "true"}, {"el", "normalization", "true"},
		{"da", "caseFirst", `"upper"`}, {"en", "normalization", "false"},
	} {
		c, err := Parse(doc(t, bson.D{{Key: "locale", Value: tc.locale}}))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Document().Lookup(tc.field).String(); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.locale, tc.field, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		spec bson.D
		code mongoerr.Code
		msg  string
	}{
		{bson.D{{Key: "strength", Value: 2}}, mongoerr.NoSuchKey, `Missing expected field "locale"`},
		{bson.D{{Key: "locale", Value: 1}}, mongoerr.TypeMismatch, `"locale" had the wrong type. Expected string, found int`},
		{bson.D{{Key: "locale", Value: "xx"}}, mongoerr.BadValue, `Field 'locale' is invalid in: { locale: "xx" }`},
		{bson.D{{Key: "locale", Value: ""}}, mongoerr.BadValue, `Field 'locale' cannot be the empty string in: { locale: "" }`},
		{bson.D{{Key: "locale", Value: "simple"}, {Key: "strength", Value: 1}}, mongoerr.FailedToParse, `If locale=simple, no other fields should be present in: { locale: "simple", strength: 1 }`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 0}}, mongoerr.FailedToParse, `Field 'strength' must be an integer 1 through 5. Got: 0`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 6}}, mongoerr.FailedToParse, `Field 'strength' must be an integer 1 through 5. Got: 6`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1.5}}, mongoerr.BadValue, `Expected field "strength" to have a value exactly representable as a 64-bit integer, but found strength: 1.5`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: "1"}}, mongoerr.TypeMismatch, `Expected field "strength" to have numeric type, but found string`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "caseLevel", Value: 1}}, mongoerr.TypeMismatch, `"caseLevel" had the wrong type. Expected bool, found int`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "caseFirst", Value: "up"}}, mongoerr.FailedToParse, `Field 'caseFirst' must be 'upper', 'lower', or 'off'. Got: up`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "x"}}, mongoerr.FailedToParse, `Field 'alternate' must be 'non-ignorable' or 'shifted'. Got: x`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "maxVariable", Value: "x"}}, mongoerr.FailedToParse, `Field 'maxVariable' must be 'punct' or 'space'. Got: x`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "version", Value: "1"}}, mongoerr.IncompatibleCollationVersion, `Requested collation version 1 but the only available collator version was 57.1. Requested collation spec: { locale: "en", version: "1" }`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "foo", Value: 1}}, mongoerr.FailedToParse, `Collation spec contains unknown field. Collation spec: { locale: "en", foo: 1 }`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1}, {Key: "backwards", Value: true}}, mongoerr.BadValue, `'backwards' is invalid with 'strength' of 1 in: { locale: "en", caseLevel: false, caseFirst: "off", strength: 1, numericOrdering: false, alternate: "non-ignorable", maxVariable: "punct", normalization: false, backwards: true, version: "57.1" }`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}, {Key: "caseFirst", Value: "upper"}}, mongoerr.BadValue, `'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: { locale: "en", caseLevel: false, caseFirst: "upper", strength: 2, numericOrdering: false, alternate: "non-ignorable", maxVariable: "punct", normalization: false, backwards: false, version: "57.1" }`},
		// Locale variants are refused, not approximated.
		{bson.D{{Key: "locale", Value: "de@collation=phonebook"}}, mongoerr.NotImplemented, `Folio does not support the collation variant in locale 'de@collation=phonebook'`},
	} {
		_, err := Parse(doc(t, tc.spec))
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != tc.code || me.Msg != tc.msg {
			t.Errorf("%v: got %v, want %d %s", tc.spec, err, tc.code, tc.msg)
		}
	}
}

// TestConcurrentKeys: one Collator serves many goroutines (its x/text
// collators are pooled); run with -race.
func TestConcurrentKeys(t *testing.T) {
	c, err := Parse(doc(t, bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}))
	if err != nil {
		t.Fatal(err)
	}
	want := c.AppendKey(nil, "Hello")
	done := make(chan bool)
	for g := 0; g < 8; g++ {
		go func() {
			ok := true
			for i := 0; i < 200; i++ {
				ok = ok && bytes.Equal(c.AppendKey(nil, "hELLO"), want)
			}
			done <- ok
		}()
	}
	for g := 0; g < 8; g++ {
		if !<-done {
			t.Error("keys differ across goroutines")
		}
	}
}

// TestValueKeyWithoutCollation: a nil collator keys strings bytewise and
// numbers by value, as MongoDB compares them without a collation.
func TestValueKeyWithoutCollation(t *testing.T) {
	var c *Collator
	num := func(v any) bson.RawValue {
		typ, b, _ := bson.MarshalValue(v)
		return bson.RawValue{Type: typ, Value: b}
	}
	for _, tc := range []struct {
		a, b bson.RawValue
		want int
	}{
		{str("a"), str("A"), 1},
		{str("a"), str("a"), 0},
		{num(int32(1)), num(1.0), 0},
		{num(int64(2)), num(1.5), 1},
		{num(int32(1)), str("1"), -1},
	} {
		if got := bytes.Compare(c.ValueKey(tc.a), c.ValueKey(tc.b)); got != tc.want {
			t.Errorf("keys of %v and %v compare %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
