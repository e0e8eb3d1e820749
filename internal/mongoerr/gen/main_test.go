package main

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	src := `error_codes:
  - {code: 0, name: OK}
  - {code: 3, name: OBSOLETE_DuplicateKey}
  #- {code: 131,name: RLPInitializationFailed} # Removed
  - {
      code: 50,
      name: MaxTimeMSExpired,
      categories: [Interruption, ExceededTimeLimitError],
    }
  - {code: 11000, name: DuplicateKey, extra: DuplicateKeyErrorInfo}
  - {code: 2, name: BadValue}
`
	codes, err := parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range codes {
		got = append(got, c.name)
	}
	if want := "OK BadValue MaxTimeMSExpired DuplicateKey"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	if _, err := parse([]byte("  - {code: 1, name: A}\n  - {code: 1, name: B}\n")); err == nil {
		t.Fatal("a code named twice was accepted")
	}
	if _, err := parse([]byte("nothing here")); err == nil {
		t.Fatal("a file without codes was accepted")
	}
}
