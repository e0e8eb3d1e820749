package query

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestNormalizedCorpus checks each line of testdata/normalized.jsonl: a
// filter and the parsedQuery MongoDB 7.0's explain shows for it, compared
// byte for byte (types and field order).
func TestNormalizedCorpus(t *testing.T) {
	f, err := os.Open("testdata/normalized.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		var rec bson.Raw
		if err := bson.UnmarshalExtJSON(sc.Bytes(), false, &rec); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		filter, want := rec.Lookup("filter").Document(), rec.Lookup("parsedQuery").Document()
		c, err := Compile(filter)
		if err != nil {
			t.Errorf("line %d: Compile(%s): %v", line, filter, err)
			continue
		}
		got, err := bson.Marshal(c.Normalized())
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("line %d: %s is shown as %s, want %s", line, filter, bson.Raw(got), want)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d filters", n)
}

// TestNormalizedMatchesAlike parses the normalized form of each filter of
// testdata/match.jsonl again, as MongoDB's serialization is meant to be,
// and checks that it matches the document as the filter does.
func TestNormalizedMatchesAlike(t *testing.T) {
	for _, c := range loadMatchCases(t) {
		if err := normalizedMatchesAlike(c.filter, c.doc); err != nil {
			t.Errorf("line %d: %v", c.line, err)
		}
	}
}

// normalizedMatchesAlike compiles filter and its normalized form and
// compares their verdicts on doc. A filter passes that does not compile,
// holds a $text clause (which matches only once bound to an index), or
// tests a DBRef field: MongoDB's parser takes {$ref: v} as an equality to
// v whatever v is, so {$ref: {$eq: v}}, its serialization, reads back as
// an equality to a document (parseDBRef).
func normalizedMatchesAlike(filter, doc bson.Raw) error {
	f, err := Compile(filter)
	if err != nil {
		return nil
	}
	if ts, _ := f.Text(); ts != nil {
		return nil
	}
	dbRef := false
	Walk(f.root, func(n *Node) bool {
		dbRef = dbRef || n.Path == "$ref" || n.Path == "$id" || n.Path == "$db"
		return !dbRef
	})
	if dbRef {
		return nil
	}
	norm, err := bson.Marshal(f.Normalized())
	if err != nil {
		return fmt.Errorf("%s: normalized form does not marshal: %v", filter, err)
	}
	nf, err := Compile(norm)
	if err != nil {
		return fmt.Errorf("%s: normalized form %s does not parse: %v", filter, bson.Raw(norm), err)
	}
	if got, want := nf.Match(doc), f.Match(doc); got != want {
		return fmt.Errorf("%s on %s: normalized form %s matches %v, the filter %v", filter, doc, bson.Raw(norm), got, want)
	}
	return nil
}

// TestNormalizedConjuncts: the clauses a planner reads prefix equalities
// from are those of the normalized $and.
func TestNormalizedConjuncts(t *testing.T) {
	for _, c := range []struct{ filter, want string }{
		{`{"a": {"$in": [1]}}`, `[a:Eq]`},
		{`{"a": {"$in": [1, 1.0]}, "b": 2}`, `[a:Eq b:Eq]`},
		{`{"$and": [{"a": 1}, {"$and": [{"b": 2}]}], "c": 3}`, `[c:Eq a:Eq b:Eq]`},
		{`{"$or": [{"a": 1}]}`, `[a:Eq]`},
		{`{"a": {"$in": [1, 2]}}`, `[a:In]`},
	} {
		var filter bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(c.filter), false, &filter); err != nil {
			t.Fatal(err)
		}
		f, err := Compile(filter)
		if err != nil {
			t.Fatal(err)
		}
		root := f.Root()
		clauses := []*Node{root}
		if root.Kind == KindAnd {
			clauses = root.Children
		}
		var got []string
		for _, n := range NormalizedConjuncts(clauses) {
			got = append(got, n.Path+":"+kindName(n.Kind))
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s: %v, want %s", c.filter, got, c.want)
		}
	}
}

func kindName(k Kind) string {
	switch k {
	case KindEq:
		return "Eq"
	case KindIn:
		return "In"
	}
	return fmt.Sprint(int(k))
}
