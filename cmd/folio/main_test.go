package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestMaxConnectionsFlag checks that -max-connections and
// FOLIO_MAX_CONNECTIONS refuse values that are not non-negative integers
// before the server starts.
func TestMaxConnectionsFlag(t *testing.T) {
	cases := []struct {
		name string
		env  string
		args []string
	}{
		{"negative flag", "", []string{"-max-connections", "-5"}},
		{"non-numeric env", "many", nil},
		{"negative env", "-1", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("FOLIO_MAX_CONNECTIONS", c.env)
			}
			var stderr bytes.Buffer
			args := append([]string{"-in-memory", "-addr", "127.0.0.1:0"}, c.args...)
			err := run(args, &stderr)
			if err == nil || !strings.Contains(err.Error(), "max-connections") {
				t.Fatalf("run(%q) with FOLIO_MAX_CONNECTIONS=%q: %v", c.args, c.env, err)
			}
		})
	}
	var stderr bytes.Buffer
	if err := run([]string{"-help"}, &stderr); err != nil || !strings.Contains(stderr.String(), "-max-connections") {
		t.Fatalf("-help: %v\n%s", err, stderr.String())
	}
}
