package planner

import "testing"

// TestRegexPrefix checks the prefixes regexes bound an index scan by,
// following MongoDB's IndexBoundsBuilder::simpleRegex.
func TestRegexPrefix(t *testing.T) {
	tests := []struct {
		pattern, opts string
		want          string // "" for no bounds
		whole         bool   // the prefix is the whole pattern
	}{
		{`^,Books,`, ``, ",Books,", true},
		{`^abc.*`, ``, "abc", true},
		{`^ab?c`, ``, "a", false},
		{`^a\.b\,c`, ``, "a.b,c", true},
		{`^(x)`, ``, "", false},
		{`^foo$`, ``, "foo", false},
		{`^abc{2}`, ``, "ab", false},
		{`^ab{0}c`, ``, "a", false},
		{`^discussion/slug`, ``, "discussion/slug", true},
		{`^a\d`, ``, "a", false},
		{`^x+`, ``, "x", false},
		{`^programming|math`, ``, "", false},
		{`^a\|b`, ``, "a|b", true},
		{`abc`, ``, "", false},
		{`^abc`, `i`, "", false},
		{`^abc`, `m`, "", false},
		{`\Aabc`, `m`, "abc", true},
		{`^abc`, `s`, "abc", true},
		{`^a b#c`, `x`, "ab", false},
		{`^a b *`, `x`, "a", false},
		{`^aé*`, ``, "a", false},
		{`^`, ``, "", false},
		{`^\Qblah\E`, ``, "blah", true},
		{`^\Q[\Ewi\Qth]some?s\Eym`, ``, "[with]some?sym", true},
		{`^\Qa.b`, ``, "a.b", true},
		{`^\Qab\E*`, ``, "a", false},
		{`^\Qa\bc\E`, ``, `a\bc`, true},
		{`^\é`, ``, "é", true},
		{`^\éa.`, ``, "éa", false},
		{`^\/`, ``, "/", true},
		{`^\E`, ``, "", false},
		// analyze_regex::getRegexPrefixMatch: a final .* after a ^ anchor
		// keeps the prefix exact, not after \A nor before anything else.
		{`^\Qasdf\E.*`, ``, "asdf", true},
		{`^abc.*f`, ``, "abc", false},
		{`^abc.*?`, ``, "abc", false},
		{`\Aabc.*`, ``, "abc", false},
		{`^a b.*`, `x`, "ab", true},
		{`^.*`, ``, "", true},
		{`^abc.*`, `s`, "abc", true},
		// Only an unescaped | is an alternation (stringMayHaveUnescapedPipe),
		// judged without regard to \Q...\E or classes.
		{`^\|1\|2\|\|`, ``, "|1|2||", true},
		{`^a\\|b`, ``, "", false},
		{`^(foo\\|bar)\\|baz`, ``, "", false},
		{`^\Q|\E`, ``, "", false},
		{`^[|]`, ``, "", false},
		{`|^a`, ``, "", false},
		// The u option is not among those simpleRegex keeps a prefix for.
		{`^abc`, `u`, "", false},
	}
	for _, tc := range tests {
		got, whole, ok := regexPrefix(tc.pattern, tc.opts)
		if got != tc.want || ok != (tc.want != "") || whole != tc.whole {
			t.Errorf("regexPrefix(%q, %q) = %q, %v, %v; want %q, %v", tc.pattern, tc.opts, got, whole, ok, tc.want, tc.whole)
		}
	}
}
