package engine

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestSeekHintsStayCorrect pops the head of a queue (leaving deleted index
// entries for the seek hints to skip), then inserts items inside the
// skipped range: every later scan must still see them first.
func TestSeekHintsStayCorrect(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "q", `{"state": 1, "created": 1}`, false)
	var docs []bson.Raw
	for i := 10; i < 60; i++ {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "state": "ready", "created": %d}`, i, i)))
	}
	if _, _, err := e.Insert("test", "q", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	pop := func() int32 {
		t.Helper()
		res, err := e.FindAndModify("test", "q", FindAndModifySpec{
			Filter: ext(t, `{"state": "ready"}`), Sort: ext(t, `{"created": 1}`),
			Update: ext(t, `{"$set": {"state": "done"}}`),
		})
		if err != nil || res.Value == nil {
			t.Fatalf("pop: %v %v", res.Value, err)
		}
		return res.Value.Lookup("_id").Int32()
	}
	for want := int32(10); want < 30; want++ {
		if got := pop(); got != want {
			t.Fatalf("popped %d, want %d", got, want)
		}
	}
	// 5 lies before the head and 20 inside the popped (skipped) range.
	for _, created := range []int{5, 20} {
		_, werrs, err := e.Insert("test", "q", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d, "state": "ready", "created": %d}`, 100+created, created))}, true, WriteOptions{})
		if err != nil || len(werrs) > 0 {
			t.Fatal(err, werrs)
		}
	}
	for _, want := range []int32{105, 120, 30, 31} {
		if got := pop(); got != want {
			t.Fatalf("popped %d, want %d", got, want)
		}
	}
	// An update that moves an entry back into the skipped range is a put
	// there too.
	if _, err := e.Update("test", "q", UpdateSpec{Filter: ext(t, `{"_id": 12}`), Update: ext(t, `{"$set": {"state": "ready"}}`)}); err != nil {
		t.Fatal(err)
	}
	if got := pop(); got != 12 {
		t.Fatalf("popped %d, want 12", got)
	}
	n, err := e.Count("test", "q", FindOptions{Filter: ext(t, `{"state": "ready"}`)})
	if err != nil || n != 28 {
		t.Fatalf("%d ready (%v), want 28", n, err)
	}
}
