package update

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// benchDoc is a 1 KB YCSB-shaped record with a counter and a 1000-sample
// array, the documents the folio-bench workloads update.
func benchDoc(b *testing.B) bson.Raw {
	b.Helper()
	d := bson.D{{Key: "_id", Value: "user6284781860667377211"}}
	for _, f := range []string{"field0", "field1", "field2", "field3", "field4", "field5", "field6", "field7", "field8", "field9"} {
		d = append(d, bson.E{Key: f, Value: string(make([]byte, 100))})
	}
	d = append(d, bson.E{Key: "daily", Value: bson.D{{Key: "1", Value: 3}, {Key: "2", Value: 5}}})
	samples := make(bson.A, 1000)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range samples {
		samples[i] = bson.D{{Key: "t", Value: start.Add(time.Duration(i) * time.Second)}, {Key: "cpu", Value: float64(i % 100)}}
	}
	d = append(d, bson.E{Key: "samples", Value: samples})
	raw, err := bson.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// ycsbRecord is a YCSB record: an _id and ten fields of 100 bytes.
func ycsbRecord(b *testing.B) bson.Raw {
	b.Helper()
	d := bson.D{{Key: "_id", Value: "user6284781860667377211"}}
	for _, f := range []string{"field0", "field1", "field2", "field3", "field4", "field5", "field6", "field7", "field8", "field9"} {
		d = append(d, bson.E{Key: f, Value: string(make([]byte, 100))})
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkYCSBUpdate compiles and applies YCSB's update, a one-field
// $set, as Compile does (setField) and through the update tree.
func BenchmarkYCSBUpdate(b *testing.B) {
	doc := ycsbRecord(b)
	spec, err := bson.Marshal(bson.D{{Key: "$set", Value: bson.D{{Key: "field3", Value: "x" + string(make([]byte, 99))}}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		compile func() *Update
	}{
		{"setField", func() *Update {
			u, err := Compile(spec, Options{Compile: compileQuery})
			if err != nil {
				b.Fatal(err)
			}
			return u
		}},
		{"tree", func() *Update { return treeCompile(b, spec) }},
	} {
		b.Run(tt.name+"/compile", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tt.compile()
			}
		})
		u := tt.compile()
		b.Run(tt.name+"/apply", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := u.Apply(doc, -1, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkApply(b *testing.B) {
	push := bson.A{bson.D{{Key: "t", Value: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}, {Key: "cpu", Value: 1.5}}}
	tests := []struct {
		name string
		spec bson.D
	}{
		{"set", bson.D{{Key: "$set", Value: bson.D{{Key: "field3", Value: string(make([]byte, 100))}}}}},
		{"inc", bson.D{{Key: "$inc", Value: bson.D{{Key: "total", Value: 1}, {Key: "daily.2", Value: 1}, {Key: "hourly.7", Value: 1}}}}},
		{"push_each_sort_slice", bson.D{{Key: "$push", Value: bson.D{{Key: "samples", Value: bson.D{
			{Key: "$each", Value: push}, {Key: "$sort", Value: bson.D{{Key: "t", Value: 1}}}, {Key: "$slice", Value: -1000},
		}}}}}},
	}
	doc := benchDoc(b)
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			spec, err := bson.Marshal(tt.spec)
			if err != nil {
				b.Fatal(err)
			}
			u, err := Compile(spec, Options{Compile: compileQuery})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := u.Apply(doc, -1, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
