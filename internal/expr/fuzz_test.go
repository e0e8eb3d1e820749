package expr

import (
	"testing"

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
