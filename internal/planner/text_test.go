package planner

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
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

// The inputs of a $text plan's stages are written as MongoDB's explain
// writes them (one as inputStage, several as inputStages, none not at
// all), and each term's IXSCAN reads backward over a simple range, shown
// as indexBounds {} (TextStage::buildTextTree, IndexBounds::toBSON).
func TestTextPlanExplainShape(t *testing.T) {
	kp, _ := bson.Marshal(bson.D{{Key: "_fts", Value: "text"}, {Key: "_ftsx", Value: int32(1)}})
	ix := &Index{Name: "a_text", KeyPattern: kp, Multikey: true}
	scan := `{"stage": "IXSCAN","keyPattern": {"_fts": "text","_ftsx": {"$numberInt":"1"}},"indexName": "a_text","isMultiKey": true,` +
		`"isUnique": false,"isSparse": false,"isPartial": false,"indexVersion": {"$numberInt":"2"},"direction": "backward","indexBounds": {}}`
	for _, tt := range []struct {
		terms []string
		score bool
		want  string // the TEXT_MATCH stage's input
	}{
		{[]string{"banana"}, true, `{"stage": "TEXT_OR","inputStage": ` + scan + `}`},
		{[]string{"banana", "leaf"}, true, `{"stage": "TEXT_OR","inputStages": [` + scan + `,` + scan + `]}`},
		{nil, true, `{"stage": "TEXT_OR"}`},
		{[]string{"banana"}, false, `{"stage": "FETCH","inputStage": ` + scan + `}`},
		{nil, false, `{"stage": "FETCH","inputStage": {"stage": "OR"}}`},
	} {
		p := TextPlan(ix, &TextScan{Terms: tt.terms, Score: tt.score, Parsed: bson.D{}}, make([]Interval, len(tt.terms)))
		var in bson.D
		for _, e := range p.Explain(Shape{}) {
			if e.Key == "inputStage" {
				in = e.Value.(bson.D)
			}
		}
		raw, err := bson.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := bson.Raw(raw).String(); got != tt.want {
			t.Errorf("%v score %v:\n%s\nwant\n%s", tt.terms, tt.score, got, tt.want)
		}
	}
}

// A $text in a branch of an $or among the conjuncts is read as the first
// scan of the $or's union, the one candidate, whose other branches each
// need a bounded scan of their own conditions (MongoDB's
// buildIndexedOr; fts_projection.js, or_inexact.js cases 8-10, fts6.js);
// an $or of the $text alone is the text scan.
func TestTextOrCandidates(t *testing.T) {
	kp, _ := bson.Marshal(bson.D{{Key: "_fts", Value: "text"}, {Key: "_ftsx", Value: int32(1)}})
	textIx := &Index{Name: "a_text", KeyPattern: kp}
	cat := parseCatalog(t, "index x_1 {\"x\": 1}\nindex y_1 {\"y\": 1}")
	text := `{"$text": {"$search": "banana"}}`
	for _, tt := range []struct {
		filter string
		want   string // the stages of the one candidate, "" for none
	}{
		{`{"$or": [` + text + `, {"x": 1}]}`, "FETCH OR TEXT_MATCH FETCH IXSCAN IXSCAN"},
		{`{"$or": [{"x": 1}, ` + text + `, {"_id": 3}]}`, "FETCH OR TEXT_MATCH FETCH IXSCAN IXSCAN IXSCAN"},
		{`{"z": 1, "$or": [{"y": {"$gt": 2}}, {"$and": [` + text + `, {"z": 2}]}]}`, "FETCH OR TEXT_MATCH FETCH IXSCAN IXSCAN"},
		{`{"$or": [` + text + `]}`, "TEXT_MATCH FETCH IXSCAN"},
		// an $or among the branches lends them its own
		{`{"$or": [{"x": 1}, {"$or": [{"y": 1}, ` + text + `]}]}`, "FETCH OR TEXT_MATCH FETCH IXSCAN IXSCAN IXSCAN"},
		{`{"$or": [{"x": 1}, {"$or": [{"z": 1}, ` + text + `]}]}`, ""},
		{`{"$or": [` + text + `, {"z": 1}]}`, ""},
		// the other conjuncts do not index a branch
		{`{"x": 1, "$or": [` + text + `, {"z": 1}]}`, ""},
		{`{"_id": 1, "$or": [` + text + `, {"z": 1}]}`, ""},
	} {
		f, err := query.Compile(ext(t, tt.filter))
		if err != nil {
			t.Fatal(err)
		}
		tp := TextPlan(textIx, &TextScan{Terms: []string{"banana"}, Parsed: bson.D{}}, make([]Interval, 1))
		cands := Candidates(cat, Query{Filter: f, Text: tp})
		got := ""
		if len(cands) > 1 {
			t.Errorf("%s: %d candidates, want one", tt.filter, len(cands))
		}
		if len(cands) > 0 {
			got = strings.Join(stageNames(cands[0].Explain(Shape{})), " ")
			if cands[0] != tp && cands[0].Or[0] != tp {
				t.Errorf("%s: the text scan is not read first", tt.filter)
			}
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.filter, got, tt.want)
		}
	}
}
