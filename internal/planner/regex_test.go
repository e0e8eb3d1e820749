package planner

import "testing"

// TestRegexPrefix checks the prefixes regexes bound an index scan by,
// following MongoDB's IndexBoundsBuilder::simpleRegex.
func TestRegexPrefix(t *testing.T) {
	tests := []struct {
		pattern, opts string
		want          string // "" for no bounds
	}{
		{`^,Books,`, ``, ",Books,"},
		{`^abc.*`, ``, "abc"},
		{`^ab?c`, ``, "a"},
		{`^a\.b\,c`, ``, "a.b,c"},
		{`^(x)`, ``, ""},
		{`^foo$`, ``, "foo"},
		{`^abc{2}`, ``, "ab"},
		{`^ab{0}c`, ``, "a"},
		{`^discussion/slug`, ``, "discussion/slug"},
		{`^a\d`, ``, "a"},
		{`^x+`, ``, "x"},
		{`^programming|math`, ``, ""},
		{`^a\|b`, ``, ""},
		{`abc`, ``, ""},
		{`^abc`, `i`, ""},
		{`^abc`, `m`, ""},
		{`\Aabc`, `m`, "abc"},
		{`^abc`, `s`, "abc"},
		{`^a b#c`, `x`, "ab"},
		{`^a b *`, `x`, "a"},
		{`^aé*`, ``, "a"},
		{`^`, ``, ""},
		{`^\Qblah\E`, ``, "blah"},
		{`^\Q[\Ewi\Qth]some?s\Eym`, ``, "[with]some?sym"},
		{`^\Qa.b`, ``, "a.b"},
		{`^\Qab\E*`, ``, "a"},
		{`^\Qa\bc\E`, ``, `a\bc`},
		{`^\é`, ``, "é"},
		{`^\éa.`, ``, "éa"},
		{`^\/`, ``, "/"},
		{`^\E`, ``, ""},
	}
	for _, tc := range tests {
		got, ok := regexPrefix(tc.pattern, tc.opts)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("regexPrefix(%q, %q) = %q, %v; want %q", tc.pattern, tc.opts, got, ok, tc.want)
		}
	}
}
