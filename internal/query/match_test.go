package query

import (
	"bufio"
	"github.com/folio-db/folio/internal/mongoerr"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// matchCase is one line of testdata/match.jsonl: a filter, a document, the
// result MongoDB gives and, when present, the positional index.
type matchCase struct {
	line   int
	filter bson.Raw
	doc    bson.Raw
	match  bool
	pos    *int
	code   int32 // MatchErr's error code, for filters that fail on doc
}

func loadMatchCases(t testing.TB) []matchCase {
	f, err := os.Open("testdata/match.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []matchCase
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var rec bson.Raw
		if err := bson.UnmarshalExtJSON(sc.Bytes(), false, &rec); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		c := matchCase{
			line:   line,
			filter: rec.Lookup("filter").Document(),
			doc:    rec.Lookup("doc").Document(),
			match:  rec.Lookup("match").Boolean(),
		}
		c.code, _ = rec.Lookup("error").Int32OK()
		if p, ok := rec.Lookup("pos").Int32OK(); ok {
			pi := int(p)
			c.pos = &pi
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestMatchCorpus(t *testing.T) {
	cases := loadMatchCases(t)
	for _, c := range cases {
		f, err := Compile(c.filter)
		if err != nil {
			t.Errorf("line %d: Compile(%s): %v", c.line, c.filter, err)
			continue
		}
		if _, _, err := f.MatchErr(c.doc); c.code != 0 && !mongoerr.Is(err, mongoerr.Code(c.code)) || c.code == 0 && err != nil {
			t.Errorf("line %d: %s on %s: error %v, want code %d", c.line, c.filter, c.doc, err, c.code)
		}
		got, pos := f.MatchPositional(c.doc)
		if got != c.match {
			t.Errorf("line %d: %s on %s = %v, want %v", c.line, c.filter, c.doc, got, c.match)
		}
		if got != f.Match(c.doc) {
			t.Errorf("line %d: Match and MatchPositional disagree", c.line)
		}
		if c.pos != nil && got && pos != *c.pos {
			t.Errorf("line %d: %s on %s: pos %d, want %d", c.line, c.filter, c.doc, pos, *c.pos)
		}
	}
	t.Logf("%d match cases", len(cases))
}
