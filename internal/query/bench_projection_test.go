package query

import "testing"

func BenchmarkProjection(b *testing.B) {
	doc := ext(b, `{"_id": 1, "discussion_id": 7, "slug": "34db", "full_slug": "2024.01.01.00.00.00:34db", "posted": {"$date": "2024-01-01T00:00:00Z"},
		"author": {"id": 12, "name": "user12"}, "text": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore",
		"items": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}, {"sku": "c", "qty": 3}]}`)
	tests := []struct{ name, spec string }{
		{"include", `{"full_slug": 1, "author.name": 1}`},
		{"exclude", `{"text": 0, "items": 0}`},
		{"id_only", `{"_id": 1}`},
		{"slice", `{"items": {"$slice": -2}, "slug": 1}`},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			p, err := CompileProjection(ext(b, tt.spec))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Apply(doc, -1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
