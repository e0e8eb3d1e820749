package update

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
)

// testCase is one line of testdata/*.jsonl, in MongoDB Extended JSON
// (relaxed: 1 is an int32, 1.5 a double). An Apply case has update and doc;
// an UpsertSeed case has filter instead. The expected outcome is result (and
// optionally modified, and delta: the oplog diff MongoDB logs) or an error
// code (and optionally errmsg). Every modifying operator update's delta
// must turn doc into result (checkDelta).
type testCase struct {
	Doc          bson.Raw   `bson:"doc"`
	Update       bson.Raw   `bson:"update"`
	Filter       bson.Raw   `bson:"filter"`
	Replacement  bool       `bson:"replacement"` // with filter: the seed of a replacement
	Pos          *int       `bson:"pos"`
	Insert       bool       `bson:"insert"`
	ArrayFilters []bson.Raw `bson:"arrayFilters"`
	Result       bson.Raw   `bson:"result"`
	Modified     *bool      `bson:"modified"`
	Delta        bson.Raw   `bson:"delta"`
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
	var delta []byte
	var modified bool
	var err error
	if tc.Filter != nil {
		out, err = UpsertSeed(tc.Filter, tc.Replacement)
	} else {
		out, delta, modified, err = apply(tc)
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
	if tc.Delta != nil && !bytes.Equal(delta, tc.Delta) {
		t.Fatalf("delta\n got %s\nwant %s", bson.Raw(delta), tc.Delta)
	}
	if tc.Filter == nil && !tc.Insert && modified && len(tc.Update) > 5 && strings.HasPrefix(tc.Update.Index(0).Key(), "$") {
		if err := checkDelta(tc.Doc, out, delta); err != nil {
			t.Fatal(err)
		}
	}
}

// checkDelta checks that an operator update's delta turns doc into out, as
// the oplog's consumers apply it (oplog.ApplyDiff).
func checkDelta(doc, out bson.Raw, delta []byte) error {
	if delta == nil {
		return fmt.Errorf("a modifying update logged no delta")
	}
	if got, err := oplog.ApplyDiff(doc, delta); err != nil || !bytes.Equal(got, out) {
		return fmt.Errorf("delta %s applied to %s gives\n %s (%v), not\n %s", bson.Raw(delta), doc, got, err, out)
	}
	return nil
}

func apply(tc testCase) (bson.Raw, []byte, bool, error) {
	u, err := Compile(tc.Update, Options{ArrayFilters: tc.ArrayFilters, Compile: compileQuery})
	if err != nil {
		return nil, nil, false, err
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

// TestReplacementCheckedWhenApplied: MongoDB validates a replacement only
// when it applies it (ObjectReplaceExecutor), so one that would fail
// storage validation compiles, and a statement that matches no document
// succeeds.
func TestReplacementCheckedWhenApplied(t *testing.T) {
	for _, spec := range []string{`{"a": 1, "$x": 1}`, `{"_id": [1]}`, `{"_id": {"$x": 1}}`, `{"_id": 1, "_id": 2}`} {
		var raw bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(spec), false, &raw); err != nil {
			t.Fatal(err)
		}
		u, err := Compile(raw, Options{})
		if err != nil {
			t.Errorf("Compile(%s): %v, want no error", spec, err)
			continue
		}
		if _, _, _, err := u.Apply(bson.Raw{5, 0, 0, 0, 0}, -1, false); err == nil {
			t.Errorf("Apply(%s) succeeded, want a storage validation error", spec)
		}
	}
}
