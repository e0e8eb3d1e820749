package auth

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/xdg-go/scram"
	"github.com/xdg-go/stringprep"
)

// converse runs a client conversation for user/password against a server
// conversation over creds, and reports whether the server accepted it.
func converse(t *testing.T, mechanism, user, password string, creds map[string]Credentials, skipEmpty bool) (bool, error) {
	t.Helper()
	lookup := func(name string) (Credential, bool, error) {
		c, ok := creds[name][mechanism]
		return c, ok, nil
	}
	srv, ok := NewConversation(mechanism, skipEmpty, lookup)
	if !ok {
		t.Fatalf("no conversation for %s", mechanism)
	}
	pw := password
	hash := scram.SHA256
	if mechanism == SHA1 {
		// The drivers' SCRAM-SHA-1 password is MongoDB's digest.
		sum := md5.Sum([]byte(user + ":mongo:" + password))
		pw, hash = hex.EncodeToString(sum[:]), scram.SHA1
	}
	if mechanism == SHA256 {
		// As the drivers do: SASLprep the password, not the user name.
		var err error
		if pw, err = stringprep.SASLprep.Prepare(password); err != nil {
			t.Fatal(err)
		}
	}
	client, err := hash.NewClientUnprepped(user, pw, "")
	if err != nil {
		t.Fatal(err)
	}
	cc := client.NewConversation()
	msg, _ := cc.Step("")
	for range 4 {
		reply, done, err := srv.Step([]byte(msg))
		if err != nil {
			return false, err
		}
		if done {
			return true, nil
		}
		if msg, err = cc.Step(string(reply)); err != nil {
			t.Fatalf("client refused the server's message: %v", err)
		}
		if cc.Done() {
			msg = ""
		}
	}
	t.Fatal("conversation did not end")
	return false, nil
}

func TestSCRAMConversation(t *testing.T) {
	creds, err := NewCredentials(Mechanisms, "ann", "pencil\u00AD", true, DefaultIterations) // soft hyphen: SASLprep maps it to nothing
	if err != nil {
		t.Fatal(err)
	}
	if c := creds[SHA1]; c.Iterations != 10000 || len(c.Salt) != 16 || len(c.StoredKey) != 20 {
		t.Errorf("SCRAM-SHA-1 credential: %d iterations, %d-byte salt, %d-byte key", c.Iterations, len(c.Salt), len(c.StoredKey))
	}
	if c := creds[SHA256]; c.Iterations != 15000 || len(c.Salt) != 28 || len(c.StoredKey) != 32 {
		t.Errorf("SCRAM-SHA-256 credential: %d iterations, %d-byte salt, %d-byte key", c.Iterations, len(c.Salt), len(c.StoredKey))
	}
	users := map[string]Credentials{"ann": creds}
	// Two users whose names SASLprep would make one: user names are used
	// as given, passwords normalized (SERVER-34446).
	for user, password := range map[string]string{"\u2168": "\u2163", "IX": "IX"} {
		if users[user], err = NewCredentials([]string{SHA256}, user, password, true, DefaultIterations); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		mech, user, pw string
		skip, ok       bool
	}{
		{SHA256, "ann", "pencil", false, true},
		{SHA256, "ann", "pencil", true, true},
		{SHA1, "ann", "pencil\u00AD", false, true},
		{SHA1, "ann", "pencil\u00AD", true, true},
		{SHA256, "ann", "wrong", false, false},
		{SHA1, "ann", "pencil", false, false},
		{SHA256, "bob", "pencil", false, false},
		{SHA1, "bob", "pencil", true, false},
		{SHA256, "\u2168", "\u2163", false, true},
		{SHA256, "\u2168", "IV", false, true},
		{SHA256, "IX", "IX", false, true},
		{SHA256, "IX", "IV", false, false},
		{SHA256, "\u2168", "IX", false, false},
	} {
		ok, err := converse(t, tc.mech, tc.user, tc.pw, users, tc.skip)
		if ok != tc.ok {
			t.Errorf("%s %s/%s skip=%v: accepted %v (%v), want %v", tc.mech, tc.user, tc.pw, tc.skip, ok, err, tc.ok)
		}
		if !tc.ok && !errors.Is(err, ErrAuthFailed) {
			t.Errorf("%s %s/%s: error %v, want ErrAuthFailed", tc.mech, tc.user, tc.pw, err)
		}
	}
}

// FuzzConversation feeds arbitrary client messages to a SCRAM server
// conversation: it must never panic, and never accept a client that did
// not prove the password.
func FuzzConversation(f *testing.F) {
	creds, err := NewCredentials([]string{SHA256}, "ann", "pencil", true, DefaultIterations)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("n,,n=ann,r=abc"), []byte("c=biws,r=abc,p=AAAA"), []byte(""))
	f.Add([]byte("y,a=ann,n=ann,r=x"), []byte("c=eSxhPWFubiw=,r=x,p=="), []byte("x"))
	f.Add([]byte("p=tls-unique,,n=ann,r=abc"), []byte(",,,"), []byte("n,,n=ann"))
	f.Add([]byte("n,,m=ext,n=ann,r=abc"), []byte("c=biws,r=,p=AAAA"), []byte("\x00"))
	f.Fuzz(func(t *testing.T, m1, m2, m3 []byte) {
		conv, _ := NewConversation(SHA256, false, func(string) (Credential, bool, error) {
			return creds[SHA256], true, nil
		})
		for _, m := range [][]byte{m1, m2, m3} {
			_, done, err := conv.Step(m)
			if done {
				t.Fatalf("accepted a client without the password: %q %q %q", m1, m2, m3)
			}
			if err != nil {
				if !errors.Is(err, ErrAuthFailed) {
					t.Fatalf("error %v is not ErrAuthFailed", err)
				}
				return
			}
		}
	})
}
