package auth

import (
	"errors"
	"testing"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestSASLprep: SCRAM-SHA-256 passwords normalize, or fail, as ICU's
// SASLprep does in MongoDB (icuSaslPrep: each step preflighted, its ICU
// error named). The expectations are what ICU 72 gives for the same
// strings through the same steps.
func TestSASLprep(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the normalized password, when code is 0
		code mongoerr.Code
		msg  string
	}{
		{in: "secret", want: "secret"},
		{in: "a\u00adb", want: "ab"},               // soft hyphen: mapped to nothing
		{in: "a\u00a0b", want: "a b"},              // no-break space: a space
		{in: "a\u200bb", want: "a b"},              // zero width space: ICU makes it a space
		{in: "\u2168", want: "IX"},                 // NFKC
		{in: "\u05d0\u05d1", want: "\u05d0\u05d1"}, // right to left throughout
		{in: "", code: mongoerr.SASLprepUTF8Conversion, msg: "Error preflighting UTF-8 conversion: U_STRING_NOT_TERMINATED_WARNING"},
		{in: "\xff", code: mongoerr.BadValue, msg: "Non UTF-8 data encountered"},
		{in: "\xed\xa0\x80", code: mongoerr.BadValue, msg: "Non UTF-8 data encountered"}, // a surrogate
		{in: "pass\x00word", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRINGPREP_PROHIBITED_ERROR"},
		{in: "pass\x01word", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRINGPREP_PROHIBITED_ERROR"},
		{in: "a\x7f", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRINGPREP_PROHIBITED_ERROR"},
		{in: "\ue000", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRINGPREP_PROHIBITED_ERROR"}, // private use
		{in: "pass\u0221", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRINGPREP_UNASSIGNED_ERROR"},
		{in: "\x01\u0221", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRINGPREP_UNASSIGNED_ERROR"}, // unassigned before prohibited
		{in: "\u05d0a", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRINGPREP_CHECK_BIDI_ERROR"},
		{in: "\u05d01", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRINGPREP_CHECK_BIDI_ERROR"},
		{in: "\u00ad", code: mongoerr.SASLprepNormalization, msg: "Error preflighting normalization: U_STRING_NOT_TERMINATED_WARNING"},
	} {
		got, err := SASLprep(tc.in)
		if tc.code == 0 {
			if err != nil || got != tc.want {
				t.Errorf("SASLprep(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			continue
		}
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != tc.code || me.Msg != tc.msg {
			t.Errorf("SASLprep(%q): %v, want %d %q", tc.in, err, tc.code, tc.msg)
		}
	}
}

// TestNewCredentialsChecks: SCRAM-SHA-1 alone takes any password, the
// empty one included, digested or not; SCRAM-SHA-256 normalizes it and
// refuses a client's digest, before any key is derived.
func TestNewCredentialsChecks(t *testing.T) {
	for _, tc := range []struct {
		mechs  []string
		pwd    string
		digest bool
		code   mongoerr.Code
	}{
		{mechs: []string{SHA1}, pwd: "", digest: true},
		{mechs: []string{SHA1}, pwd: "pass\x00word", digest: true},
		{mechs: []string{SHA1}, pwd: "0123456789abcdef0123456789abcdef", digest: false},
		{mechs: []string{SHA256, SHA1}, pwd: "", digest: true, code: mongoerr.SASLprepUTF8Conversion},
		{mechs: []string{SHA256}, pwd: "p", digest: false, code: mongoerr.BadValue},
	} {
		creds, err := NewCredentials(tc.mechs, "u", tc.pwd, tc.digest, DefaultIterations)
		if tc.code == 0 {
			if err != nil || len(creds) != len(tc.mechs) {
				t.Errorf("%v %q digest %v: %v, %v", tc.mechs, tc.pwd, tc.digest, creds, err)
			}
			continue
		}
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != tc.code {
			t.Errorf("%v %q digest %v: %v, want code %d", tc.mechs, tc.pwd, tc.digest, err, tc.code)
		}
	}
	// digestPassword false: the stored key is the one the digest derives
	plain, err := NewCredentials([]string{SHA1}, "u", "pw", true, DefaultIterations)
	if err != nil {
		t.Fatal(err)
	}
	c := plain[SHA1]
	digest := md5Digest("u", "pw")
	again, err := derive(mechs[SHA1], digest, c.Salt, c.Iterations)
	if err != nil || string(again.StoredKey) != string(c.StoredKey) {
		t.Errorf("digest mismatch: %v", err)
	}
}
