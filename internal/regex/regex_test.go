package regex

import (
	"errors"
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
		{"(?<=a)b", "", "", false, Invalid},
		{`(a)\1`, "", "", false, Invalid},
		{"(", "", "", false, Invalid},
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
		if got := re.MatchString(tt.subject); got != tt.match {
			t.Errorf("%q/%q on %q = %v, want %v", tt.pattern, tt.options, tt.subject, got, tt.match)
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
