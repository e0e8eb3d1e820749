package expr

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// FuzzEval compiles and evaluates arbitrary expressions against arbitrary
// documents: neither may panic. Inputs are BSON documents {e: <expr>} and
// the document to evaluate against, well-formed as the server accepts
// them (rawdoc.Validate); the corpus seeds both.
func FuzzEval(f *testing.F) {
	for _, c := range loadCases(f) {
		wrapped, _ := bson.Marshal(bson.D{{Key: "e", Value: c.expr}})
		f.Add([]byte(wrapped), []byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, exprDoc, doc []byte) {
		if rawdoc.Validate(exprDoc) != nil || rawdoc.Validate(doc) != nil { // as the wire layer checks them
			return
		}
		v := bson.Raw(exprDoc).Lookup("e")
		if v.Type == 0 {
			return
		}
		e, err := Compile(v, nil)
		if err != nil {
			return
		}
		ctx := &Context{Clock: Clock{Now: testNow}}
		_, _ = e.Eval(ctx, doc)
	})
}

func BenchmarkFieldPath(b *testing.B) {
	e, err := Compile(bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, "$a.b")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	doc, _ := bson.Marshal(bson.D{{Key: "x", Value: 1}, {Key: "a", Value: bson.D{{Key: "c", Value: "s"}, {Key: "b", Value: 42}}}})
	ctx := &Context{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Eval(ctx, doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAdd(b *testing.B) {
	spec, _ := bson.Marshal(bson.D{{Key: "e", Value: bson.D{{Key: "$add", Value: bson.A{"$a", "$b", 1}}}}})
	e, err := Compile(bson.Raw(spec).Lookup("e"), nil)
	if err != nil {
		b.Fatal(err)
	}
	doc, _ := bson.Marshal(bson.D{{Key: "a", Value: 40}, {Key: "b", Value: 1.5}})
	ctx := &Context{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Eval(ctx, doc); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseDate runs $dateFromString's parser over arbitrary strings and
// formats: it may refuse them, never panic.
func FuzzParseDate(f *testing.F) {
	for _, s := range [][2]string{
		{"2017-07-04T11:56:02.813Z", ""}, {"July 4th, 2017 12:39:30 BST", ""}, {"2017-07-04 12:48:07 GMT+0545", ""},
		{"4/26/1992:+0445", "%m/%d/%Y:%z"}, {"2017, Week 53", "%G, Week %V"}, {"53.7.2017", "%V.%u.%G"},
		{"2017-07-04T11:56:02.81Z", "%Y-%m-%dT%H:%M:%S.%LZ"}, {"2017-Jul-04 noon", ""}, {"%%", "%%"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, s, format string) {
		_, _ = parseDate(s, format, time.UTC)
	})
}
