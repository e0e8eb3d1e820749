package query

import "testing"

func TestMatchAllocs(t *testing.T) {
	f, err := Compile(ext(t, `{"attrs": {"$elemMatch": {"n": "color", "v": {"$in": ["silver", "red"]}}}, "path": {"$regex": "^,Books,"}, "n": {"$gte": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := ext(t, `{"_id": 1, "n": 2, "path": ",Books,Programming,", "attrs": [{"n": "size", "v": 1}, {"n": "color", "v": "silver"}]}`)
	if !f.Match(doc) {
		t.Fatal("no match")
	}
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	if a := testing.AllocsPerRun(100, func() { f.Match(doc) }); a != 0 {
		t.Errorf("Match allocates %v times per document", a)
	}
}

func BenchmarkMatch(b *testing.B) {
	f, err := Compile(ext(b, `{"category_ids": {"$in": [{"$oid": "4c4b1476238d3b4dd5000001"}, {"$oid": "4c4b1476238d3b4dd5000002"}]}, "price": {"$lt": 100}}`))
	if err != nil {
		b.Fatal(err)
	}
	doc := ext(b, `{"_id": 1, "name": "x", "price": 50, "category_ids": [{"$oid": "4c4b1476238d3b4dd5000009"}, {"$oid": "4c4b1476238d3b4dd5000002"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		f.Match(doc)
	}
}
