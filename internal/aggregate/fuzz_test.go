package aggregate

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/rawdoc"
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
	// Strings that stages and expressions turn into field names, holding a
	// NUL byte, which no BSON key can hold (each once panicked).
	const nul = "x\x00y"
	for _, stage := range []bson.D{
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "a"}, {Key: "as", Value: nul}}}},
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: ""}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "a"}, {Key: "as", Value: "o"}}}},
		{{Key: "$graphLookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "startWith", Value: "$a"}, {Key: "connectFromField", Value: "a"}, {Key: "connectToField", Value: "a"}, {Key: "as", Value: "g"}, {Key: "depthField", Value: nul}}}},
		{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$a"}, {Key: "includeArrayIndex", Value: nul}}}},
		{{Key: "$addFields", Value: bson.D{{Key: "o", Value: bson.D{{Key: "$arrayToObject", Value: bson.A{bson.A{bson.A{nul, 1}}}}}}}}},
		{{Key: "$addFields", Value: bson.D{{Key: "o", Value: bson.D{{Key: "$setField", Value: bson.D{{Key: "field", Value: nul}, {Key: "input", Value: "$$ROOT"}, {Key: "value", Value: 1}}}}}}}},
		{{Key: "$densify", Value: bson.D{{Key: "field", Value: nul}, {Key: "range", Value: bson.D{{Key: "step", Value: 1}, {Key: "bounds", Value: "full"}}}}}},
		{{Key: "$fill", Value: bson.D{{Key: "partitionByFields", Value: bson.A{nul}}, {Key: "sortBy", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "output", Value: bson.D{{Key: "b", Value: bson.D{{Key: "method", Value: "locf"}}}}}}}},
	} {
		f.Add([]byte(mustMarshal(bson.D{{Key: "p", Value: bson.A{stage}}})))
	}
	docs := []bson.Raw{
		mustMarshal(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1, bson.D{{Key: "b", Value: 2}}}}}),
		mustMarshal(bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: "x"}, {Key: "c", Value: nil}}),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := bson.Raw(data)
		if rawdoc.Validate(raw) != nil { // as the wire layer checks it
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
		_, _ = env.Insert("test", "c", docs, true)
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
