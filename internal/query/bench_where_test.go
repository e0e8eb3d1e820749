package query

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/js"
)

// benchDocs are small documents of the shape $where is typically run on.
func benchDocs(b *testing.B) []bson.Raw {
	docs := make([]bson.Raw, 1000)
	for i := range docs {
		d, err := bson.Marshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i)}, {Key: "name", Value: "user"}, {Key: "tags", Value: bson.A{"x", "y"}}, {Key: "sub", Value: bson.D{{Key: "k", Value: 1.5}}}})
		if err != nil {
			b.Fatal(err)
		}
		docs[i] = d
	}
	return docs
}

func benchFilter(b *testing.B, filter bson.D) {
	let := &expr.Let{Scope: expr.NewScope(), Ctx: &expr.Context{Clock: expr.Clock{Now: time.Now()}, JS: &js.Op{Engine: js.New(js.Options{}), Ctx: context.Background()}}}
	raw, _ := bson.Marshal(filter)
	f, err := CompileLet(raw, let)
	if err != nil {
		b.Fatal(err)
	}
	docs := benchDocs(b)
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		ok, _, err := f.MatchErr(docs[i%len(docs)])
		if err != nil {
			b.Fatal(err)
		}
		if ok {
			n++
		}
	}
	if b.N >= len(docs) && n == 0 {
		b.Fatal("nothing matched")
	}
}

// BenchmarkWhere and BenchmarkWhereExpr filter the same documents with
// {$where: "this.a > 500"} and the equivalent {$expr: {$gt: ["$a", 500]}}.
func BenchmarkWhere(b *testing.B) {
	benchFilter(b, bson.D{{Key: "$where", Value: "this.a > 500"}})
}

func BenchmarkWhereExpr(b *testing.B) {
	benchFilter(b, bson.D{{Key: "$expr", Value: bson.D{{Key: "$gt", Value: bson.A{"$a", 500}}}}})
}
