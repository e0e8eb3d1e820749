package aggregate

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzParse checks that no pipeline, however malformed, panics Parse, and
// that a pipeline that parses runs without panicking over a few documents.
func FuzzParse(f *testing.F) {
	for _, c := range loadCases(f, "testdata/stages.jsonl") {
		arr := bson.A{}
		for _, s := range c.Pipeline {
			arr = append(arr, s)
		}
		b, err := bson.Marshal(bson.D{{Key: "p", Value: arr}})
		if err == nil {
			f.Add(b)
		}
	}
	docs := []bson.Raw{
		mustMarshal(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1, bson.D{{Key: "b", Value: 2}}}}}),
		mustMarshal(bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: "x"}, {Key: "c", Value: nil}}),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := bson.Raw(data)
		if raw.Validate() != nil {
			return
		}
		v, err := raw.LookupErr("p")
		if err != nil || v.Type != bson.TypeArray {
			return
		}
		var stages []bson.Raw
		for _, s := range arrayValues(v) {
			if s.Type != bson.TypeEmbeddedDocument {
				return
			}
			stages = append(stages, s.Document())
		}
		env := newMemEnv()
		_ = env.Insert("test", "c", docs)
		p, err := Parse(stages, Options{DB: "test", Coll: "c", Env: env, Now: time.Unix(0, 0), MemoryLimit: 1 << 20})
		if err != nil {
			return
		}
		out := p.Run(&SliceSource{Docs: docs})
		defer out.Close()
		for i := 0; i < 1000; i++ {
			d, err := out.Next()
			if d == nil || err != nil {
				return
			}
		}
	})
}

func mustMarshal(d bson.D) bson.Raw {
	b, err := bson.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}
