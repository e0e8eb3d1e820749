package planner

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// stageNames are the stages of an explain tree, depth first.
func stageNames(stage bson.D) []string {
	var names []string
	for _, e := range stage {
		switch v := e.Value.(type) {
		case string:
			if e.Key == "stage" {
				names = append(names, v)
			}
		case bson.D:
			if e.Key == "inputStage" {
				names = append(names, stageNames(v)...)
			}
		case bson.A:
			if e.Key == "inputStages" {
				for _, x := range v {
					names = append(names, stageNames(x.(bson.D))...)
				}
			}
		}
	}
	return names
}

// A $text plan's explain: TEXT_OR when the scores are needed; otherwise a
// FETCH of an OR of the term scans, or of the scan itself when there is
// one term (MongoDB's optimize_text.js).
func TestTextPlanStages(t *testing.T) {
	kp, _ := bson.Marshal(bson.D{{Key: "_fts", Value: "text"}, {Key: "_ftsx", Value: int32(1)}})
	ix := &Index{Name: "a_text", KeyPattern: kp}
	for _, tt := range []struct {
		terms []string
		score bool
		want  string
	}{
		{[]string{"banana", "leaf"}, false, "TEXT_MATCH FETCH OR IXSCAN IXSCAN"},
		{[]string{"banana"}, false, "TEXT_MATCH FETCH IXSCAN"},
		{[]string{"banana", "leaf"}, true, "TEXT_MATCH TEXT_OR IXSCAN IXSCAN"},
		{[]string{"banana"}, true, "TEXT_MATCH TEXT_OR IXSCAN"},
	} {
		ivs := make([]Interval, len(tt.terms))
		p := TextPlan(ix, &TextScan{Terms: tt.terms, Score: tt.score, Parsed: bson.D{}}, ivs)
		if got := strings.Join(stageNames(p.Explain(Shape{})), " "); got != tt.want {
			t.Errorf("%v score %v: %s, want %s", tt.terms, tt.score, got, tt.want)
		}
	}
}
