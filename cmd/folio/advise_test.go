package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// TestAdvise runs queries that scan without an index against a server,
// then `folio advise` as a readable report and as JSON, whose findings
// must each have the documented fields.
func TestAdvise(t *testing.T) {
	in, err := instance.Start(instance.Config{Addr: "127.0.0.1:0", InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(in.URI()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	coll := client.Database("shop").Collection("orders")
	var docs []any
	for i := range 500 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "customer", Value: i % 50}, {Key: "total", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		cur, err := coll.Find(ctx, bson.D{{Key: "customer", Value: i}})
		if err != nil {
			t.Fatal(err)
		}
		var got []bson.Raw
		if err := cur.All(ctx, &got); err != nil || len(got) != 10 {
			t.Fatal(len(got), err)
		}
	}
	var out, errOut bytes.Buffer
	if err := runAdvise([]string{"-uri", in.URI(), "-db", "shop"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	for _, want := range []string{"missing-index  shop.orders  find {customer:?}", "suggestion: create an index on {customer: 1}", "docsExamined"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report without %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := runAdvise([]string{"-uri", in.URI(), "-json", "-reset"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var findings []map[string]any
	if err := json.Unmarshal(out.Bytes(), &findings); err != nil || len(findings) == 0 {
		t.Fatalf("-json: %v\n%s", err, out.String())
	}
	for _, f := range findings {
		for _, k := range []string{"kind", "ns", "evidence", "cost", "pattern", "suggestion"} {
			if _, ok := f[k]; !ok {
				t.Errorf("finding without %s: %v", k, f)
			}
		}
		if _, ok := f["field"]; !ok {
			if _, ok := f["shape"]; !ok {
				t.Errorf("finding with neither field nor shape: %v", f)
			}
		}
	}
	out.Reset()
	if err := runAdvise([]string{"-uri", in.URI(), "-json"}, &out, &errOut); err != nil || strings.Contains(out.String(), "missing-index") {
		t.Errorf("after -reset: %v %s", err, out.String())
	}
}
