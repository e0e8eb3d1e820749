// Package ftstest reads the corpus of text searches with MongoDB's
// answers (internal/fts/testdata/search.json) that package fts and the
// driver suite both run.
package ftstest

import (
	"encoding/json"
	"os"
	"testing"
)

// Case is one case of the corpus: a text index (its key and options, as
// Extended JSON), documents, and searches with the _ids MongoDB answers.
type Case struct {
	Name    string          `json:"name"`
	Index   json.RawMessage `json:"index"`
	Docs    []json.RawMessage
	Queries []Query
}

// Query is one $text search of a case.
type Query struct {
	Search             string `json:"search"`
	Language           string `json:"language"`
	CaseSensitive      bool   `json:"caseSensitive"`
	DiacriticSensitive bool   `json:"diacriticSensitive"`
	IDs                []int  `json:"ids"`
}

// Load reads the corpus at path.
func Load(t testing.TB, path string) []Case {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}
