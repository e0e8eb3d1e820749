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
// interval per term (Intervals[i] holds the keys of ts.Terms[i]).
func TextPlan(ix *Index, ts *TextScan, intervals []Interval) *Plan {
	return &Plan{Index: ix, Intervals: intervals, Text: ts, multikey: true}
}

// textStage is a $text plan's explain: TEXT_MATCH over TEXT_OR over an
// IXSCAN of each term when the scores are needed, else over a FETCH of an
// OR of the scans, or of the one scan when there is one term
// (TextStage::buildTextTree: no OR for a single index scan;
// jstests/aggregation/bugs/optimize_text.js).
func (p *Plan) textStage(s Shape) bson.D {
	scans := bson.A{}
	for _, term := range p.Text.Terms {
		scan := p.scanStage()
		scan[len(scan)-1].Value = bson.D{
			{Key: "_fts", Value: bson.A{`["` + term + `", "` + term + `"]`}},
			{Key: "_ftsx", Value: bson.A{"[MinKey, MaxKey]"}},
		}
		scans = append(scans, scan)
	}
	var in bson.D
	switch {
	case p.Text.Score:
		in = bson.D{{Key: "stage", Value: "TEXT_OR"}, {Key: "inputStages", Value: scans}}
	case len(scans) == 1:
		in = bson.D{{Key: "stage", Value: "FETCH"}, {Key: "inputStage", Value: scans[0]}}
	default:
		in = bson.D{{Key: "stage", Value: "FETCH"}, {Key: "inputStage", Value: bson.D{{Key: "stage", Value: "OR"}, {Key: "inputStages", Value: scans}}}}
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
