package regex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var (
	rewrite      = flag.Bool("rewrite", false, "rewrite the corpora's expected results with PCRE2 (python3 and libpcre2-8)")
	differential = flag.Int("differential", 0, "compare this many random cases with PCRE2 instead of reading the corpora")
	seed         = flag.Uint64("seed", 1, "the random cases' seed")
)

// corpusCase is a line of a corpus: a pattern, its options and a subject,
// and what PCRE2 (10.42, through libpcre2-8; MongoDB 7.0 has 10.40) does
// with them, as MongoDB compiles patterns (UTF, no UCP): the first match
// (nil for none), or the compile error (Invalid) it refuses the pattern
// with.
type corpusCase struct {
	Pattern  string  `json:"pattern"`
	Options  string  `json:"options"`
	Subject  string  `json:"subject"`
	Want     *result `json:"want"`
	Invalid  string  `json:"invalid,omitempty"`  // PCRE2's compile error
	Refusing string  `json:"refusing,omitempty"` // Folio refuses the pattern: why
}

type result struct {
	Match    string    `json:"match"`
	Index    int       `json:"index"` // in code points
	Captures []*string `json:"captures"`
}

// pcre2Oracle reads corpus cases as JSON lines and writes, for each, a
// JSON line: PCRE2's first match, null for none, or {"invalid": message}.
const pcre2Oracle = `
import ctypes, json, sys
from ctypes import c_void_p, c_char_p, c_size_t, c_uint32, c_int, POINTER, byref
L = ctypes.CDLL("libpcre2-8.so.0")
L.pcre2_compile_8.restype = c_void_p
L.pcre2_compile_8.argtypes = [c_char_p, c_size_t, c_uint32, POINTER(c_int), POINTER(c_size_t), c_void_p]
L.pcre2_match_data_create_from_pattern_8.restype = c_void_p
L.pcre2_match_data_create_from_pattern_8.argtypes = [c_void_p, c_void_p]
L.pcre2_match_8.restype = c_int
L.pcre2_match_8.argtypes = [c_void_p, c_char_p, c_size_t, c_size_t, c_uint32, c_void_p, c_void_p]
L.pcre2_get_ovector_pointer_8.restype = POINTER(c_size_t)
L.pcre2_get_ovector_pointer_8.argtypes = [c_void_p]
L.pcre2_pattern_info_8.argtypes = [c_void_p, c_uint32, c_void_p]
L.pcre2_get_error_message_8.argtypes = [c_int, c_char_p, c_size_t]
L.pcre2_code_free_8.argtypes = [c_void_p]
L.pcre2_match_data_free_8.argtypes = [c_void_p]
FLAGS = {"i": 0x8, "s": 0x20, "x": 0x80, "m": 0x400}
UTF, UNSET = 0x80000, ctypes.c_size_t(-1).value
def message(code):
    buf = ctypes.create_string_buffer(256)
    L.pcre2_get_error_message_8(code, buf, 256)
    return buf.value.decode()
for line in sys.stdin:
    c = json.loads(line)
    opts = UTF
    for o in c["options"]:
        opts |= FLAGS[o]
    pat, subj = c["pattern"].encode(), c["subject"].encode()
    err, off = c_int(), c_size_t()
    code = L.pcre2_compile_8(pat, len(pat), opts, byref(err), byref(off), None)
    if not code:
        print(json.dumps({"invalid": message(err.value)}))
        continue
    n = c_uint32()
    L.pcre2_pattern_info_8(code, 4, byref(n))  # PCRE2_INFO_CAPTURECOUNT
    md = L.pcre2_match_data_create_from_pattern_8(code, None)
    rc = L.pcre2_match_8(code, subj, len(subj), 0, 0, md, None)
    if rc == -1:
        out = None
    elif rc < 0:
        out = {"matcherror": message(rc)}
    else:
        ov = L.pcre2_get_ovector_pointer_8(md)
        text = lambda i: None if i >= rc or ov[2*i] == UNSET else subj[ov[2*i]:ov[2*i+1]].decode()
        out = {"match": text(0), "index": len(subj[:ov[0]].decode()), "captures": [text(i) for i in range(1, n.value + 1)]}
    L.pcre2_match_data_free_8(md)
    L.pcre2_code_free_8(code)
    print(json.dumps(out))
`

// The corpora: hand-written cases, and random ones (randomCases) whose
// patterns compile.
const (
	corpusFile = "testdata/pcre.jsonl"
	randomFile = "testdata/pcre_random.jsonl"
)

// TestPCRECorpus runs the corpora's cases and compares what Folio does
// with what PCRE2 did, recorded with -rewrite; with -differential it asks
// PCRE2 about random cases instead.
func TestPCRECorpus(t *testing.T) {
	if *differential > 0 {
		for _, c := range askPCRE2(t, randomCases(*differential, *seed)) {
			checkCase(t, c)
		}
		return
	}
	for _, file := range []string{corpusFile, randomFile} {
		cases := readCorpus(t, file)
		if *rewrite {
			if file == randomFile {
				cases = randomCases(1000, 1)
			}
			writeCorpus(t, askPCRE2(t, cases), file)
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
	switch {
	case c.Refusing != "":
		if err == nil {
			t.Errorf("%q/%s: compiled, want it refused (%s)", c.Pattern, c.Options, c.Refusing)
		}
		return
	case c.Invalid != "":
		var e *Error
		if !errors.As(err, &e) || e.Kind != Invalid {
			t.Errorf("%q/%s: got %v, PCRE2 refuses it: %s", c.Pattern, c.Options, err, c.Invalid)
		}
		return
	case err != nil:
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
		t.Errorf("%q/%s on %q: got %s, PCRE2 %s", c.Pattern, c.Options, c.Subject, show(got), show(c.Want))
	}
}

// randomCases draws n patterns Folio does not refuse as unsupported,
// from atoms, quantifiers (lazy and possessive among them) and groups
// (capturing, atomic, named, lookarounds, conditionals) nested twice at
// most, each with options and a short subject.
func randomCases(n int, seed uint64) []corpusCase {
	r := rand.New(rand.NewPCG(seed, 2))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	atoms := []string{"a", "b", "c", ".", `\d`, `\w`, `\s`, `\D`, `\W`, `\S`, "[ab]", "[^a]", "[a-c]", "[[:alpha:]]", `\h`, `\R`, `\N`,
		"x", "é", `\n`, `\Z`, `\z`, `\A`, `\G`, "$", "^", `\b`, `\B`, "(?=a)", "(?!b)", "(?<=a)", "(?<!c)", `\1`, `\2`, `\k<n1>`, `\Qa.\E`, `\x{e9}`, "(?i:a)", `[\wé]`, `[^\dk]`, `[a\W]`, `[^[:alpha:]s]`}
	quantifiers := []string{"", "", "", "*", "+", "?", "*?", "+?", "*+", "++", "?+", "{2}", "{2}?", "{1,3}", "{2,}+", "{0}"}
	anchors := strings.Fields(`^ $ \b \B \A \z \Z \G`)
	groups := []string{"(", "(", "(?:", "(?>", "(?<n%d>", "(?<=", "(?<!", "(?=", "(?(1)", "(?(?=a)", "(?i)("}
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
				b.WriteString(pick(quantifiers))
			} else if atom := pick(atoms); slices.Contains(anchors, atom) {
				b.WriteString(atom) // PCRE2 refuses a quantifier on it
			} else {
				b.WriteString(atom + pick(quantifiers))
			}
		}
		return b.String()
	}
	letters := []string{"a", "b", "c", "A", "x", "é", "É", "1", " ", "\n", "\r", "\u00a0", "_", "\u017f", "S", "k", "\u212a"}
	var cases []corpusCase
	for len(cases) < n {
		names = 0
		c := corpusCase{Pattern: gen(0), Options: pick([]string{"", "", "i", "m", "s", "x", "im"})}
		var e *Error
		if _, err := Compile(c.Pattern, c.Options); errors.As(err, &e) && e.Kind == Unsupported {
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

// askPCRE2 fills in what PCRE2 does with each case; cases Folio refuses
// as Unsupported keep their reason and PCRE2's match.
func askPCRE2(t *testing.T, cases []corpusCase) []corpusCase {
	var in bytes.Buffer
	for _, c := range cases {
		b, _ := json.Marshal(c)
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command("python3", "-c", pcre2Oracle)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("PCRE2 answered %d cases of %d", len(lines), len(cases))
	}
	for i := range cases {
		c := &cases[i]
		c.Want, c.Invalid = nil, ""
		var answer *struct {
			result
			Invalid    string `json:"invalid"`
			MatchError string `json:"matcherror"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &answer); err != nil {
			t.Fatal(err)
		}
		switch {
		case answer == nil:
		case answer.MatchError != "":
			t.Fatalf("%q on %q: PCRE2 fails the match: %s", c.Pattern, c.Subject, answer.MatchError)
		case answer.Invalid != "":
			c.Invalid = answer.Invalid
		default:
			c.Want = &answer.result
			if c.Want.Captures == nil {
				c.Want.Captures = []*string{}
			}
		}
	}
	return cases
}

func writeCorpus(t *testing.T, cases []corpusCase, name string) {
	var file bytes.Buffer
	file.WriteString("// Written by go test -run TestPCRECorpus -rewrite: \"want\" is PCRE2's first match, \"invalid\" its compile error.\n")
	enc := json.NewEncoder(&file)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(name, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
