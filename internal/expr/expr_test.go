package expr

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// testNow is $$NOW in the corpus.
var testNow = time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC)

// testClusterTime is $$CLUSTER_TIME in the corpus: Timestamp(1704164645, 7).
var testClusterTime = bson.RawValue{Type: bson.TypeTimestamp, Value: []byte{7, 0, 0, 0, 0x25, 0x7d, 0x93, 0x65}}

// exprCase is one line of testdata/*.jsonl: {expr, doc, result} (the
// expected value, compared with its exact type), {expr, doc, error: code}
// (with message, the error's whole text when given), or {expr, doc,
// missing: true}. An optional "vars" document supplies user
// variables, an optional "collation" the collation comparisons follow.
type exprCase struct {
	where   string
	expr    bson.RawValue
	doc     bson.Raw
	vars    bson.Raw
	coll    bson.Raw // a collation document
	result  bson.RawValue
	code    int32
	msg     string
	missing bool
}

func loadCases(t testing.TB) []exprCase {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var cases []exprCase
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			text := bytes.TrimSpace(sc.Bytes())
			if len(text) == 0 || text[0] == '#' {
				continue
			}
			where := name + ":" + itoa(line)
			var rec bson.Raw
			if err := bson.UnmarshalExtJSON(text, false, &rec); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			c := exprCase{where: where, expr: rec.Lookup("expr")}
			if d, ok := rec.Lookup("doc").DocumentOK(); ok {
				c.doc = d
			} else {
				c.doc = bson.Raw{5, 0, 0, 0, 0}
			}
			c.vars, _ = rec.Lookup("vars").DocumentOK()
			c.coll, _ = rec.Lookup("collation").DocumentOK()
			if r, err := rec.LookupErr("result"); err == nil {
				c.result = r
			} else if code, ok := rec.Lookup("error").AsInt64OK(); ok {
				c.code = int32(code)
				c.msg, _ = rec.Lookup("message").StringValueOK()
			} else if rec.Lookup("missing").Type == bson.TypeBoolean {
				c.missing = true
			} else {
				t.Fatalf("%s: needs result, error or missing", where)
			}
			cases = append(cases, c)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return cases
}

func itoa(n int) string {
	return string(bytes.TrimLeft([]byte{byte('0' + n/10000%10), byte('0' + n/1000%10), byte('0' + n/100%10), byte('0' + n/10%10), byte('0' + n%10)}, "0"))
}

// run compiles and evaluates c.
func (c exprCase) run() (bson.RawValue, error) {
	ctx := &Context{Clock: Clock{Now: testNow, ClusterTime: testClusterTime}, Vars: map[string]bson.RawValue{}}
	var names []string
	if c.vars != nil {
		elems, _ := c.vars.Elements()
		for _, e := range elems {
			names = append(names, e.Key())
			ctx.Vars[e.Key()] = e.Value()
		}
	}
	scope := NewScope(names...)
	if c.coll != nil {
		coll, err := collation.Parse(c.coll)
		if err != nil {
			return bson.RawValue{}, err
		}
		scope = scope.Collated(coll)
	}
	e, err := Compile(c.expr, scope)
	if err != nil {
		return bson.RawValue{}, err
	}
	return e.Eval(ctx, c.doc)
}

func TestCorpus(t *testing.T) {
	cases := loadCases(t)
	for _, c := range cases {
		got, err := c.run()
		switch {
		case c.code != 0:
			var me *mongoerr.Error
			if !errors.As(err, &me) || int32(me.Code) != c.code || c.msg != "" && me.Msg != c.msg {
				t.Errorf("%s: %s = %s, %v; want error %d %q", c.where, c.expr, got, err, c.code, c.msg)
			}
		case err != nil:
			t.Errorf("%s: %s: %v", c.where, c.expr, err)
		case c.missing:
			if got.Type != 0 {
				t.Errorf("%s: %s = %s (%s), want missing", c.where, c.expr, got, typeName(got))
			}
		case !sameValue(got, c.result):
			t.Errorf("%s: %s = %s (%s), want %s (%s)", c.where, c.expr, got, typeName(got), c.result, typeName(c.result))
		}
	}
	t.Logf("%d expression cases", len(cases))
}

// sameValue reports whether a and b are the same value of the same type,
// element by element for documents and arrays (doubles compare by value
// and the sign of a zero, NaN equals NaN; decimals compare by
// representation, as drivers do: 2.50 is not 2.5, -0 is not 0, -NaN is
// not NaN).
func sameValue(a, b bson.RawValue) bool {
	if a.Type != b.Type {
		return false
	}
	switch a.Type {
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		ia, ib := rawdoc.Iterate(a.Value), rawdoc.Iterate(b.Value)
		for {
			ka, va, oka := ia.Next()
			kb, vb, okb := ib.Next()
			if oka != okb {
				return false
			}
			if !oka {
				return true
			}
			if (a.Type == bson.TypeEmbeddedDocument && string(ka) != string(kb)) || !sameValue(va, vb) {
				return false
			}
		}
	case bson.TypeDouble:
		x, y := a.Double(), b.Double()
		return x == y && math.Signbit(x) == math.Signbit(y) || x != x && y != y
	}
	return bytes.Equal(a.Value, b.Value)
}
