package changestream

import (
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestSplit cuts events into fragments under a small limit: fields go
// smallest first, as many as fit and at least one per fragment; each
// fragment is {_id: its token, splitEvent: {fragment, of}, fields...},
// within the limit; together they hold every field but _id once.
func TestSplit(t *testing.T) {
	tok := Token{TS: 7<<32 | 1, Event: true, DocKey: mustMarshal(t, bson.D{{Key: "_id", Value: 1}})}
	pad := func(n int) string { return strings.Repeat("x", n) }
	event := mustMarshal(t, bson.D{
		{Key: "_id", Value: tok.Doc()},
		{Key: "operationType", Value: "update"},
		{Key: "fullDocument", Value: bson.D{{Key: "v", Value: pad(300)}}},
		{Key: "b", Value: pad(100)},
		{Key: "a", Value: pad(100)},
		{Key: "updateDescription", Value: bson.D{{Key: "v", Value: pad(250)}}},
	})
	for _, tc := range []struct {
		max  int
		want [][]string // each fragment's fields after _id and splitEvent
	}{
		{max: 1000, want: [][]string{{"operationType", "a", "b", "updateDescription", "fullDocument"}}},
		{max: 700, want: [][]string{{"operationType", "a", "b", "updateDescription"}, {"fullDocument"}}},
		{max: 500, want: [][]string{{"operationType", "a", "b"}, {"updateDescription"}, {"fullDocument"}}},
	} {
		frags, err := Split(event, tok, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]string
		for i, f := range frags {
			if len(f.Doc) > tc.max {
				t.Errorf("max %d: fragment %d has %d bytes", tc.max, i, len(f.Doc))
			}
			if !f.Token.Split || f.Token.FragmentNum != uint32(i) || f.Token.Compare(tok) != 0 {
				t.Errorf("max %d: fragment %d's token %+v", tc.max, i, f.Token)
			}
			keys := docKeys(t, f.Doc)
			if !slices.Equal(keys[:2], []string{"_id", "splitEvent"}) || !slices.Equal(f.Doc.Lookup("_id").Document(), f.Token.Doc()) {
				t.Errorf("max %d: fragment %d: %v", tc.max, i, f.Doc)
			}
			split := f.Doc.Lookup("splitEvent").Document()
			if split.Lookup("fragment").Int32() != int32(i+1) || split.Lookup("of").Int32() != int32(len(frags)) {
				t.Errorf("max %d: fragment %d's splitEvent %v", tc.max, i, split)
			}
			got = append(got, keys[2:])
		}
		if !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("max %d: fragments' fields %v, want %v", tc.max, got, tc.want)
		}
	}
	if _, err := Split(event, tok, 400); !mongoerr.Is(err, mongoerr.SplitFragmentTooLarge) {
		t.Errorf("a field larger than any fragment: %v", err)
	}
	if _, err := Split(mustMarshal(t, bson.D{{Key: "_id", Value: tok.Doc()}}), tok, 400); !mongoerr.Is(err, mongoerr.SplitEmptyEvent) {
		t.Errorf("an event of _id alone: %v", err)
	}
}

// TestFragmentTokens: a fragment's token reads back with its number, with
// or without a document key, and orders with its event.
func TestFragmentTokens(t *testing.T) {
	key := mustMarshal(t, bson.D{{Key: "_id", Value: "k"}})
	for _, tok := range []Token{
		{TS: 5<<32 | 2, Event: true, UUID: make([]byte, 16), DocKey: key, Split: true, FragmentNum: 3},
		{TS: 5<<32 | 2, Event: true, Split: true},
		{TS: 5<<32 | 2, Event: true, DocKey: key},
		// a key of 240 bytes opens with the mark's byte
		{TS: 5<<32 | 2, Event: true, DocKey: mustMarshal(t, bson.D{{Key: "_id", Value: strings.Repeat("y", 240-19)}})},
	} {
		got, err := ParseToken(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: tok.Doc()}, "resumeAfter")
		if err != nil {
			t.Fatal(err)
		}
		if got.Split != tok.Split || got.FragmentNum != tok.FragmentNum || !slices.Equal(got.DocKey, tok.DocKey) || got.Data() != tok.Data() {
			t.Errorf("%+v read back as %+v", tok, got)
		}
		whole := tok
		whole.Split, whole.FragmentNum = false, 0
		if tok.Compare(whole) != 0 {
			t.Errorf("%+v does not order with its event", tok)
		}
	}
}

func mustMarshal(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func docKeys(t *testing.T, doc bson.Raw) []string {
	t.Helper()
	elems, err := doc.Elements()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range elems {
		out = append(out, e.Key())
	}
	return out
}
