package regex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/pcre.jsonl's expected results with perl")

// corpusCase is a line of testdata/pcre.jsonl: a pattern, its options and
// a subject, and the first match Perl finds (its regexes are PCRE's
// model; with the a modifier \d, \w, \s, \b and the POSIX classes are
// ASCII, as PCRE2's without UCP): nil for none. Perl differs from PCRE2 on
// \Q...\E in a pattern it did not interpolate and on a{,n}, which
// TestCompile covers instead.
type corpusCase struct {
	Pattern  string  `json:"pattern"`
	Options  string  `json:"options"`
	Subject  string  `json:"subject"`
	Want     *result `json:"want"`
	Refusing string  `json:"refusing,omitempty"` // Folio refuses the pattern: why
}

type result struct {
	Match    string    `json:"match"`
	Index    int       `json:"index"`
	Captures []*string `json:"captures"`
}

// perlOracle reads corpus cases as JSON lines and writes each one's first
// match as a JSON line ("null" for none).
const perlOracle = `
use strict; no warnings; use JSON::PP;
my $json = JSON::PP->new->canonical;
binmode STDIN, ':encoding(UTF-8)'; binmode STDOUT, ':encoding(UTF-8)';
while (my $line = <STDIN>) {
	my $c = JSON::PP->new->decode($line);
	my $re = eval { qr/(?a$c->{options})$c->{pattern}/ };
	if (!defined $re) { print "\"error\"\n"; next; }
	my $s = $c->{subject};
	if ($s =~ $re) {
		my @caps;
		for my $i (1 .. $#+) {
			push @caps, defined $-[$i] ? substr($s, $-[$i], $+[$i] - $-[$i]) : undef;
		}
		print $json->encode({match => substr($s, $-[0], $+[0] - $-[0]), index => $-[0], captures => \@caps}), "\n";
	} else {
		print "null\n";
	}
}
`

// The corpora: hand-written cases, and random ones (randomCases) whose
// patterns compile.
const (
	corpusFile = "testdata/pcre.jsonl"
	randomFile = "testdata/pcre_random.jsonl"
)

// TestPCRECorpus runs the corpora's cases and compares their first match
// with Perl's, recorded with -rewrite.
func TestPCRECorpus(t *testing.T) {
	for _, file := range []string{corpusFile, randomFile} {
		cases := readCorpus(t, file)
		if *rewrite {
			if file == randomFile {
				cases = randomCases(1000)
			}
			rewriteWithPerl(t, cases, file)
			continue
		}
		for _, c := range cases {
			checkCase(t, c)
		}
	}
}

func readCorpus(t *testing.T, file string) []corpusCase {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		cases = append(cases, c)
	}
	return cases
}

func checkCase(t *testing.T, c corpusCase) {
	t.Helper()
	re, err := Compile(c.Pattern, c.Options)
	if c.Refusing != "" {
		if err == nil {
			t.Errorf("%q/%s: compiled, want it refused (%s)", c.Pattern, c.Options, c.Refusing)
		}
		return
	}
	if err != nil {
		t.Errorf("%q/%s: %v", c.Pattern, c.Options, err)
		return
	}
	var got *result
	if err := re.FindAll(c.Subject, 1, func(f Found) bool {
		got = &result{Match: f.Match, Index: f.Index, Captures: f.Captures}
		if got.Captures == nil {
			got.Captures = []*string{}
		}
		return false
	}); err != nil {
		t.Errorf("%q/%s on %q: %v", c.Pattern, c.Options, c.Subject, err)
		return
	}
	if !reflect.DeepEqual(got, c.Want) {
		t.Errorf("%q/%s on %q: got %s, Perl %s", c.Pattern, c.Options, c.Subject, show(got), show(c.Want))
	}
}

// randomCases draws n patterns that compile, from atoms, quantifiers
// (lazy and possessive among them) and groups (capturing, atomic, named)
// nested twice at most, each with options and a short subject.
func randomCases(n int) []corpusCase {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	atoms := []string{"a", "b", "c", ".", `\d`, `\w`, `\s`, "[ab]", "[^a]", "[[:alpha:]]", `\h`, "x", "é", `\n`, `\Z`, "$", "^", `\b`, "(?=a)", "(?!b)", "(?<=a)", "(?<!c)", `\1`}
	quantifiers := []string{"", "", "", "*", "+", "?", "*?", "+?", "*+", "++", "?+", "{2}", "{1,3}", "{2,}+"}
	groups := []string{"(", "(?:", "(?>", "(?<n%d>"}
	var names int
	var gen func(depth int) string
	gen = func(depth int) string {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			if depth < 2 && r.IntN(4) == 0 {
				open := pick(groups)
				if strings.Contains(open, "%d") {
					names++
					open = fmt.Sprintf(open, names)
				}
				b.WriteString(open + gen(depth+1))
				if r.IntN(3) == 0 {
					b.WriteString("|" + gen(depth+1))
				}
				b.WriteString(")")
			} else {
				b.WriteString(pick(atoms))
			}
			b.WriteString(pick(quantifiers))
		}
		return b.String()
	}
	letters := []string{"a", "b", "c", "x", "é", "1", " ", "\n", "\u00a0", "_"}
	var cases []corpusCase
	for len(cases) < n {
		names = 0
		c := corpusCase{Pattern: gen(0), Options: pick([]string{"", "", "i", "m", "s"})}
		if _, err := Compile(c.Pattern, c.Options); err != nil {
			continue
		}
		var s strings.Builder
		for range 1 + r.IntN(8) {
			s.WriteString(pick(letters))
		}
		c.Subject = s.String()
		cases = append(cases, c)
	}
	return cases
}

func show(r *result) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func rewriteWithPerl(t *testing.T, cases []corpusCase, name string) {
	var in bytes.Buffer
	for _, c := range cases {
		b, _ := json.Marshal(c)
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command("perl", "-e", perlOracle)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("perl answered %d cases of %d", len(lines), len(cases))
	}
	var file bytes.Buffer
	file.WriteString("// Written by go test -run TestPCRECorpus -rewrite; \"want\" is Perl's first match.\n")
	for i, c := range cases {
		c.Want = nil
		if lines[i] == `"error"` {
			if name == randomFile {
				continue // a random pattern Perl refuses
			}
			t.Fatalf("perl does not compile %q", c.Pattern)
		}
		if err := json.Unmarshal([]byte(lines[i]), &c.Want); err != nil {
			t.Fatal(err)
		}
		if c.Want != nil && c.Want.Captures == nil {
			c.Want.Captures = []*string{}
		}
		enc := json.NewEncoder(&file)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(name, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
