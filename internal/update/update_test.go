package update

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// testCase is one line of testdata/*.jsonl, in MongoDB Extended JSON
// (relaxed: 1 is an int32, 1.5 a double). An Apply case has update and doc;
// an UpsertSeed case has filter instead. The expected outcome is result (and
// optionally modified) or an error code (and optionally errmsg).
type testCase struct {
	Doc          bson.Raw   `bson:"doc"`
	Update       bson.Raw   `bson:"update"`
	Filter       bson.Raw   `bson:"filter"`
	Pos          *int       `bson:"pos"`
	Insert       bool       `bson:"insert"`
	ArrayFilters []bson.Raw `bson:"arrayFilters"`
	Result       bson.Raw   `bson:"result"`
	Modified     *bool      `bson:"modified"`
	Code         int        `bson:"code"`
	Errmsg       string     `bson:"errmsg"`
}

func TestCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	total := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "//") {
				continue
			}
			total++
			name := filepath.Base(file) + ":" + strconv.Itoa(line)
			t.Run(name, func(t *testing.T) { runCase(t, text) })
		}
		f.Close()
	}
	t.Logf("%d cases", total)
}

func runCase(t *testing.T, text string) {
	var tc testCase
	if err := bson.UnmarshalExtJSON([]byte(text), false, &tc); err != nil {
		t.Fatalf("bad case: %v", err)
	}
	var out bson.Raw
	var modified bool
	var err error
	if tc.Filter != nil {
		out, err = UpsertSeed(tc.Filter)
	} else {
		out, modified, err = apply(tc)
	}
	if tc.Code != 0 {
		if err == nil {
			t.Fatalf("want error %d, got %s", tc.Code, out)
		}
		me := mongoerr.As(err)
		if int(me.Code) != tc.Code || (tc.Errmsg != "" && me.Msg != tc.Errmsg) {
			t.Fatalf("want error %d %q, got %v", tc.Code, tc.Errmsg, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !bytes.Equal(out, tc.Result) {
		t.Fatalf("result\n got %s\nwant %s", out, tc.Result)
	}
	if tc.Modified != nil && *tc.Modified != modified {
		t.Fatalf("modified = %v, want %v", modified, *tc.Modified)
	}
}

func apply(tc testCase) (bson.Raw, bool, error) {
	u, err := Compile(tc.Update, Options{ArrayFilters: tc.ArrayFilters, Compile: compileQuery})
	if err != nil {
		return nil, false, err
	}
	pos := -1
	if tc.Pos != nil {
		pos = *tc.Pos
	}
	doc := tc.Doc
	if doc == nil {
		doc = bson.Raw{5, 0, 0, 0, 0}
	}
	return u.Apply(doc, pos, tc.Insert)
}
