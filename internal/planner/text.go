package planner

import "go.mongodb.org/mongo-driver/v2/bson"

// TextScan is how a $text query reads the collection's text index: the
// keys of each term under the prefix fields' values, a document's score
// the sum of its keys' scores.
type TextScan struct {
	// Terms are the index terms looked up, one interval each.
	Terms []string
	// Prefix are the equality values of the index's prefix fields, as
	// explain's indexPrefix shows them.
	Prefix bson.D
	// Parsed is explain's parsedTextQuery.
	Parsed bson.D
	// Score reports that the query needs the documents' scores (a
	// textScore projection or sort): MongoDB's TEXT_OR, else an OR of the
	// term scans under a FETCH.
	Score bool
	// Version is the index's textIndexVersion.
	Version int32
}

// TextPlan is the plan reading ix, a text index, for a $text query: one
// interval per term (Intervals[i] holds the keys of ts.Terms[i]); explain
// shows the index's multikey flag.
func TextPlan(ix *Index, ts *TextScan, intervals []Interval) *Plan {
	return &Plan{Index: ix, Intervals: intervals, Text: ts, multikey: ix.Multikey}
}

// textStage is a $text plan's explain: TEXT_MATCH over TEXT_OR over an
// IXSCAN of each term when the scores are needed, else over a FETCH of an
// OR of the scans, or of the one scan when there is one term
// (TextStage::buildTextTree: no OR for a single index scan;
// jstests/aggregation/bugs/optimize_text.js). Each IXSCAN reads its term's
// keys backward, from the highest weight down, as a simple range of start
// and end keys, which MongoDB's explain shows as indexBounds {}
// (IndexBounds::toBSON lists per-field intervals, and a simple range has
// none). A stage's one input is its inputStage, several its inputStages,
// none neither (statsToBSON).
func (p *Plan) textStage(s Shape) bson.D {
	scans := bson.A{}
	for range p.Text.Terms {
		scan := p.scanStage()
		for i := range scan {
			switch scan[i].Key {
			case "direction":
				scan[i].Value = "backward"
			case "indexBounds":
				scan[i].Value = bson.D{}
			}
		}
		scans = append(scans, scan)
	}
	var in bson.D
	switch {
	case p.Text.Score:
		in = withInputs(bson.D{{Key: "stage", Value: "TEXT_OR"}}, scans)
	case len(scans) == 1:
		in = bson.D{{Key: "stage", Value: "FETCH"}, {Key: "inputStage", Value: scans[0]}}
	default:
		in = bson.D{{Key: "stage", Value: "FETCH"}, {Key: "inputStage", Value: withInputs(bson.D{{Key: "stage", Value: "OR"}}, scans)}}
	}
	prefix := p.Text.Prefix
	if prefix == nil {
		prefix = bson.D{}
	}
	return bson.D{
		{Key: "stage", Value: "TEXT_MATCH"},
		{Key: "indexPrefix", Value: prefix},
		{Key: "indexName", Value: p.Index.Name},
		{Key: "parsedTextQuery", Value: p.Text.Parsed},
		{Key: "textIndexVersion", Value: p.Text.Version},
		{Key: "inputStage", Value: in},
	}
}

// withInputs appends a stage's inputs as MongoDB's explain writes them:
// one as inputStage, several as inputStages, none not at all.
func withInputs(stage bson.D, inputs bson.A) bson.D {
	switch len(inputs) {
	case 0:
		return stage
	case 1:
		return append(stage, bson.E{Key: "inputStage", Value: inputs[0]})
	}
	return append(stage, bson.E{Key: "inputStages", Value: inputs})
}
