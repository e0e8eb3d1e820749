package update

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/mongoerr"
)

func mustCompile(t *testing.T, spec bson.D) *Update {
	t.Helper()
	raw, err := bson.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	u, err := Compile(raw, Options{Compile: compileQuery})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestCurrentDate(t *testing.T) {
	u := mustCompile(t, bson.D{{Key: "$currentDate", Value: bson.D{
		{Key: "d", Value: true},
		{Key: "ts", Value: bson.D{{Key: "$type", Value: "timestamp"}}},
		{Key: "dt", Value: bson.D{{Key: "$type", Value: "date"}}},
	}}})
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}})
	before := time.Now().Add(-time.Second)
	out, _, modified, err := u.Apply(doc, -1, false)
	if err != nil || !modified {
		t.Fatalf("Apply: %v %v", modified, err)
	}
	for _, f := range []string{"d", "dt"} {
		v := out.Lookup(f)
		if v.Type != bson.TypeDateTime || time.UnixMilli(v.DateTime()).Before(before) {
			t.Errorf("%s = %v", f, v)
		}
	}
	if ts := out.Lookup("ts"); ts.Type != bson.TypeTimestamp {
		t.Errorf("ts = %v", ts)
	}
}

// TestCurrentDateTicks: each timestamp $currentDate sets takes a new time
// from Options.Clock, for each field and each document (MongoDB ticks its
// cluster clock for every one: current_date_node.cpp).
func TestCurrentDateTicks(t *testing.T) {
	clk := clock.New(func() time.Time { return time.Unix(7, 0) })
	spec, _ := bson.Marshal(bson.D{{Key: "$currentDate", Value: bson.D{
		{Key: "b", Value: bson.D{{Key: "$type", Value: "timestamp"}}},
		{Key: "a", Value: bson.D{{Key: "$type", Value: "timestamp"}}},
	}}})
	u, err := Compile(spec, Options{Compile: compileQuery, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}})
	for n, want := range [][2]uint32{{1, 2}, {3, 4}} {
		out, _, _, err := u.Apply(doc, -1, false)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range []string{"a", "b"} {
			if ts, i2 := out.Lookup(f).Timestamp(); ts != 7 || i2 != want[i] {
				t.Errorf("document %d: %s = Timestamp(%d, %d), want Timestamp(7, %d)", n, f, ts, i2, want[i])
			}
		}
	}
}

func TestResultTooLarge(t *testing.T) {
	big := strings.Repeat("x", MaxDocumentSize/2)
	u := mustCompile(t, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: big}, {Key: "b", Value: big}}}})
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}})
	_, _, _, err := u.Apply(doc, -1, false)
	if !mongoerr.Is(err, 17419) {
		t.Fatalf("err = %v", err)
	}
}

func TestIsReplacement(t *testing.T) {
	if !mustCompile(t, bson.D{{Key: "a", Value: 1}}).IsReplacement() {
		t.Error("replacement not recognised")
	}
	if mustCompile(t, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}).IsReplacement() {
		t.Error("operator update taken for a replacement")
	}
}

// TestReuse checks that a compiled update can be applied again: applying
// must not alter the update's own values.
func TestReuse(t *testing.T) {
	u := mustCompile(t, bson.D{{Key: "$push", Value: bson.D{{Key: "a", Value: bson.D{{Key: "b", Value: 1}}}}},
		{Key: "$set", Value: bson.D{{Key: "c.d", Value: 1}}}})
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}})
	first, _, _, err := u.Apply(doc, -1, false)
	if err != nil {
		t.Fatal(err)
	}
	second, _, _, _ := u.Apply(doc, -1, false)
	if string(first) != string(second) {
		t.Fatalf("second apply differs: %s vs %s", first, second)
	}
}
