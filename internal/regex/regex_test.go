package regex

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestCompile(t *testing.T) {
	tests := []struct {
		pattern, options string
		subject          string
		match            bool
		kind             Kind // expected error kind, 0 for none
	}{
		{"^abc$", "", "abc", true, 0},
		{"^abc$", "", "ABC", false, 0},
		{"^abc$", "i", "ABC", true, 0},
		{"^abc$", "ii", "ABC", true, 0},
		{"^b$", "", "a\nb", false, 0},
		{"^b$", "m", "a\nb", true, 0},
		{"a.b", "", "a\nb", false, 0},
		{"a.b", "s", "a\nb", true, 0},
		{"a b # comment\n c", "x", "abc", true, 0},
		{"a[ ]b", "x", "a b", true, 0},
		{`a\ b`, "x", "a b", true, 0},
		{"é", "u", "café", true, 0},
		{"a", "ix", "A", true, 0},
		{"a", "g", "", false, BadOption},
		{"a\x00b", "", "", false, NullByte},
		{"a", "i\x00", "", false, OptionsNullByte},
		{"(?<=a)b", "", "ab", true, 0},
		{`(a)\1`, "", "aa", true, 0},
		{"(", "", "", false, Invalid},
		{"a++", "", "", false, 0},
		{"*", "", "", false, Invalid},
		{`a\Kb`, "", "", false, Unsupported},
		{"(?R)", "", "", false, Unsupported},
		{"(*CRLF)a", "", "", false, Unsupported},
		{"(*LIMIT_MATCH=1)a", "", "", false, Unsupported},
		{"(*LIMIT_DEPTH=10)(*UCP)a", "", "", false, Unsupported},
		{"(*UTF)(*NO_START_OPT)é", "", "é", true, 0},
		{`(*UCP)\w`, "", "é", true, 0},
		{`\w`, "", "é", false, 0},
		{`(*UCP)[[:alpha:]]`, "", "é", true, 0},
		{"(*FAIL)|a", "", "a", true, 0},
		{"(?U)a", "", "", false, Unsupported},
		{`\Qa.b*c\E+`, "", "xa.b*cc", true, 0},
		{`\Qa.b\E`, "", "axb", false, 0},
		{`[\Q]\E]`, "", "]", true, 0},
		{"a{,3}", "", "a{,3}", true, 0},
		{"a{,3}", "", "aa", false, 0},
		{"(?<=ab|c)d", "", "abd", true, 0},
		{"(?<=a(?:bc|de)f)g", "", "adefg", true, 0},
		{"(?<=a{2}[xy]\\d)b", "", "aax1b", true, 0},
		{"(?<=(?=x)x|y)z", "", "xz", true, 0},
		{`\W`, "i", "S", false, 0},
		{`\W+`, "i", "k-", true, 0},
		{"(?>a+)*a", "", "a", true, 0},
		{"(?:a++)?a", "", "a", true, 0},
		{`(?>\d{1,3})*\d`, "", "1", true, 0},
		{"(?>a+)+a", "", "aa", false, 0},
		{`(?:\S++){2,}+`, "", "1abSéà", false, 0},
		{`(?:\S++){2}`, "", "ab cd", false, 0},
		{"^x", "m", "a\nx", true, 0},
		{"\n^", "m", "a\n", false, 0},
		{"(?m)\n^", "", "a\n", false, 0},
		{"(?<=a+)b", "", "", false, Invalid},
		{"(?<=a(b|cd))e", "", "", false, Invalid},
		{"(?<=a{1,2})b", "", "", false, Invalid},
		{`(?<=(a)\1)b`, "", "aab", true, 0},
		{`(?<=\1)(a)`, "", "aa", false, 0},
		{`(?<=(a+)\1)b`, "", "", false, Invalid},
		{`(?<=\1)(a+)`, "", "", false, Invalid},
		{`(?<=(?(1)a|b))(c)`, "", "bc", true, 0},
		{`(?<=(?(1)a|bc))(c)`, "", "", false, Invalid},
		{"(?<!a?)b", "", "", false, Invalid},
	}
	for _, tt := range tests {
		re, err := Compile(tt.pattern, tt.options)
		if tt.kind != 0 {
			var e *Error
			if !errors.As(err, &e) || e.Kind != tt.kind {
				t.Errorf("Compile(%q, %q): error %v, want kind %d", tt.pattern, tt.options, err, tt.kind)
			}
			continue
		}
		if err != nil {
			t.Errorf("Compile(%q, %q): %v", tt.pattern, tt.options, err)
			continue
		}
		if got, err := re.MatchString(tt.subject); err != nil || got != tt.match {
			t.Errorf("%q/%q on %q = %v (%v), want %v", tt.pattern, tt.options, tt.subject, got, err, tt.match)
		}
	}
}

func TestErrorOption(t *testing.T) {
	_, err := Compile("a", "iz")
	var e *Error
	if !errors.As(err, &e) || e.Option != 'z' || err.Error() != "invalid flag in regex options: z" {
		t.Fatalf("got %v", err)
	}
}

// TestMatchLimit: a match that backtracks past the engine's bounds fails
// with ErrMatchLimit, and Match counts it as no match.
func TestMatchLimit(t *testing.T) {
	re := mustCompile(t, `^(a|aa)*b$`, "")
	subject := strings.Repeat("a", 5000)
	if _, err := re.MatchString(subject); !errors.Is(err, ErrMatchLimit) {
		t.Fatalf("got %v, want ErrMatchLimit", err)
	}
	if re.Match([]byte(subject)) {
		t.Fatal("Match counted a failed match as a match")
	}
}

// TestFindAll: after an empty match the search moves one code point on,
// no search starts at the end, and indexes count code points.
func TestFindAll(t *testing.T) {
	var got []string
	err := mustCompile(t, "a*", "").FindAll("éaab", -1, func(f Found) bool {
		got = append(got, fmt.Sprintf("%q@%d", f.Match, f.Index))
		return true
	})
	want := []string{`""@0`, `"aa"@1`, `""@3`}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v (%v), want %v", got, err, want)
	}
}

// FuzzCompile: no pattern panics the translation or the engine, and a
// compiled pattern runs.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{`a++b`, `\Qa\E*+`, `(?<n>a)\k{n}`, `[[:alpha:]\h]+`, `(?(<n>)a|b)`, `\g{-1}(a)`, `(?x)a # c`, `(*UCP)\w`, `[]`, `(?`, `\o{`, `\g`} {
		f.Add(s, "abc", "")
	}
	f.Fuzz(func(t *testing.T, pattern, subject, options string) {
		re, err := Compile(pattern, options)
		if err != nil {
			return
		}
		re.Match([]byte(subject))
		_ = re.FindAll(subject, 3, func(Found) bool { return true })
	})
}

func mustCompile(t *testing.T, pattern, options string) *Regexp {
	t.Helper()
	re, err := Compile(pattern, options)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

// TestLimits checks MongoDB's bounds on a pattern: 16,384 bytes and 250
// nested parentheses.
func TestLimits(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		ok      bool
	}{
		{strings.Repeat("c", 16384), true},
		{strings.Repeat("c", 16385), false},
		{strings.Repeat("(", 250) + "e" + strings.Repeat(")", 250), true},
		{strings.Repeat("(", 251) + "e" + strings.Repeat(")", 251), false},
	} {
		_, err := Compile(tt.pattern, "")
		var e *Error
		if tt.ok && err != nil || !tt.ok && (!errors.As(err, &e) || e.Kind != Invalid) {
			t.Errorf("pattern of %d bytes: %v", len(tt.pattern), err)
		}
	}
}
