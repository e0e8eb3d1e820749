package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
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

// TestDiskReserveAtStart checks that the server does not start when the
// data directory's filesystem has less free space than -disk-reserve-mb
// (here 4 EB, more than any disk): run returns at once with an error naming
// the directory and the reserve instead of serving or spinning. Bad values
// of the flag and of FOLIO_DISK_RESERVE_MB are refused.
func TestDiskReserveAtStart(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-dbpath", dir, "-disk-reserve-mb", "4398046511104"}, &stderr)
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("started below the reserve")
		}
		for _, want := range []string{"not enough free disk space", dir, "reserve of 4398046511104 MB"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run neither started nor failed in 10s")
	}
	for _, c := range []struct{ env, flag string }{{"-1", ""}, {"lots", ""}, {"", "-1"}, {"", "8796093022208"}} {
		if c.env != "" {
			t.Setenv("FOLIO_DISK_RESERVE_MB", c.env)
		}
		args := []string{"-in-memory", "-addr", "127.0.0.1:0"}
		if c.flag != "" {
			args = append(args, "-disk-reserve-mb", c.flag)
		}
		if err := run(args, &stderr); err == nil || !strings.Contains(err.Error(), "disk-reserve-mb") {
			t.Errorf("env %q flag %q: %v", c.env, c.flag, err)
		}
	}
}

// TestTLSFlags checks that a bad -tls-mode, and TLS without the CA file
// mongod requires, stop the server before it starts.
func TestTLSFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-tls-mode", "sometimes"}, "tls-mode"},
		{[]string{"-tls-mode", "requireTLS", "-tls-certificate-key-file", "x.pem"}, "chain of trust"},
		{[]string{"-tls-ca-file", "ca.pem"}, "TLS mode"},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		err := run(append([]string{"-in-memory", "-addr", "127.0.0.1:0"}, c.args...), &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q): %v, want an error about %q", c.args, err, c.want)
		}
	}
}

// TestArguments: a word that is neither a subcommand nor a flag's value is
// an error (it never starts a server on the defaults); folio version
// describes the binary.
func TestArguments(t *testing.T) {
	for _, args := range [][]string{{"anything"}, {"-log-level", "warn", "stray"}, {"serve", "extra"}, {"version", "x"}} {
		var out strings.Builder
		if err := run(args, &out); err == nil || !strings.Contains(err.Error(), "unexpected argument") {
			t.Errorf("%v: %v, want an unexpected-argument error", args, err)
		}
	}
	var out strings.Builder
	if err := run([]string{"version"}, &out); err != nil || !strings.HasPrefix(out.String(), "folio ") || !strings.Contains(out.String(), "MongoDB 7.0") {
		t.Fatalf("version: %q, %v", out.String(), err)
	}
}

// TestSchemaLeaseFlag: -schema-lease (or FOLIO_SCHEMA_LEASE) takes a
// duration of zero or more.
func TestSchemaLeaseFlag(t *testing.T) {
	var out strings.Builder
	if err := run([]string{"-schema-lease", "-1s"}, &out); err == nil || !strings.Contains(err.Error(), "bad -schema-lease") {
		t.Errorf("-schema-lease -1s: %v", err)
	}
	t.Setenv("FOLIO_SCHEMA_LEASE", "soon")
	if err := run([]string{"-addr", "127.0.0.1:0"}, &out); err == nil || !strings.Contains(err.Error(), "bad -schema-lease") {
		t.Errorf("FOLIO_SCHEMA_LEASE=soon: %v", err)
	}
}

// TestAuthenticationMechanismsFlag: -authentication-mechanisms takes the
// mechanisms Folio serves, as mongod refuses to start with one it lacks
// ("SASL Mechanism 'X' is not supported"), spaces around each trimmed.
func TestAuthenticationMechanismsFlag(t *testing.T) {
	for _, c := range []struct {
		value, want string
	}{
		{"PLAIN", "SASL Mechanism 'PLAIN' is not supported"},
		{"SCRAM-SHA-1, GSSAPI", "SASL Mechanism 'GSSAPI' is not supported"},
		{"SCRAM-SHA-1,,SCRAM-SHA-256", "SASL Mechanism '' is not supported"},
	} {
		var out strings.Builder
		err := run([]string{"-in-memory", "-addr", "127.0.0.1:0", "-authentication-mechanisms", c.value}, &out)
		if err == nil || !strings.Contains(err.Error(), "bad -authentication-mechanisms") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-authentication-mechanisms %q: %v, want %q", c.value, err, c.want)
		}
	}
}
