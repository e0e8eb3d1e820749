package mongoerr

import "testing"

func TestCodeName(t *testing.T) {
	for _, tc := range []struct {
		code Code
		want string
	}{
		{BadValue, "BadValue"},
		{UnsatisfiableWriteConcern, "UnsatisfiableWriteConcern"},
		{DuplicateKey, "DuplicateKey"},
		{IDLUnknownField, "Location40415"}, // unnamed in 7.0
		{InterruptedAtShutdown, "InterruptedAtShutdown"},
		{Code(51024), "Location51024"}, // MongoDB names unnamed codes by their location
	} {
		if got := tc.code.Name(); got != tc.want {
			t.Errorf("%d.Name() = %q, want %q", tc.code, got, tc.want)
		}
	}
	for c, n := range names {
		if n == "" || n[0] < 'A' || n[0] > 'Z' {
			t.Errorf("code %d has name %q", c, n)
		}
	}
}
