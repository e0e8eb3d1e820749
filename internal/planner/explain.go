package planner

import (
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/values"
)

// Shape is what a find does around its plan's scan, as explain shows it.
type Shape struct {
	Filter     bson.Raw // the parsed query
	Sort       bson.Raw // empty: none
	Projection bson.Raw // empty: none
	Skip       int64
	Limit      int64 // 0: none
	// Count reports that the find counts its matches: a COUNT stage on
	// top, over a COUNT_SCAN or an IXSCAN when the keys alone decide the
	// filter (see CountScan).
	Count bool
	// CountInput reports that the plan feeds a stage that counts what it
	// is handed (engine.FindOptions.Counted): the count's input alone, a
	// COUNT_SCAN or an IXSCAN, without the COUNT stage a count command
	// adds on top.
	CountInput bool
	// SortMemLimit is the memory an in-memory sort may use.
	SortMemLimit int64
	// Clustered reports a clustered collection (create's clusteredIndex):
	// a scan of its documents by _id is then MongoDB's CLUSTERED_IXSCAN.
	Clustered bool
	// ReturnKey is find's returnKey: a RETURN_KEY stage takes the
	// projection's place.
	ReturnKey bool
	// ShowFilter is how a stage shows the part of the filter it applies
	// (nil: as written); explain gives MongoDB's serialized form.
	ShowFilter func(bson.Raw) any
}

// ShowsFetch reports whether p's explain tree (Explain, on a clustered
// collection or not) has a FETCH stage: an index scan that is not covered,
// an index union, or a scan of the document store by _id ranges (the _id
// index) on a collection that is not clustered. The multi-planner's
// noFetchBonus goes to the plans without one.
func (p *Plan) ShowsFetch(clustered bool) bool {
	switch {
	case p.distinct != "", p.Text != nil, p.Geo != nil:
		return p.Text != nil || p.Geo != nil
	case p.Or != nil:
		return true
	case p.Index == nil && p.Intervals == nil:
		return false
	case p.Index == nil && clustered:
		return false
	case p.idHack, p.covered != nil:
		return false
	}
	return true
}

// Explain builds the explain tree of p under s, in the shape of MongoDB's
// winningPlan: COLLSCAN, IDHACK, or FETCH over IXSCAN or over an OR of
// IXSCANs and of a $text branch's TEXT_MATCH (a covered plan's IXSCAN alone), then SORT, SKIP,
// PROJECTION_DEFAULT (PROJECTION_COVERED, RETURN_KEY) and LIMIT as the find needs them
// (no LIMIT over a blocking sort, which limits itself); a
// count's COUNT over its plan; a distinct scan's PROJECTION_COVERED over
// DISTINCT_SCAN (PROJECTION_DEFAULT for a dotted field: MongoDB's
// projection of it is not simple, Projection::isSimple, so
// analyzeProjection does not take the covered fast path).
func (p *Plan) Explain(s Shape) bson.D {
	if p.distinct != "" {
		scan := p.scanStage()
		scan[0].Value = "DISTINCT_SCAN"
		proj := bson.D{{Key: p.distinct, Value: int32(1)}, {Key: "_id", Value: int32(0)}}
		stage := "PROJECTION_COVERED"
		if strings.IndexByte(p.distinct, '.') >= 0 {
			stage = "PROJECTION_DEFAULT"
		}
		return bson.D{{Key: "stage", Value: stage}, {Key: "transformBy", Value: proj}, {Key: "inputStage", Value: scan}}
	}
	if s.Count || s.CountInput {
		var in bson.D
		switch {
		case p.CountScanShown():
			in = p.countScanStage()
		case p.CountScan():
			in = p.scanStage()
		default:
			in = p.Explain(Shape{Filter: s.Filter, ShowFilter: s.ShowFilter})
		}
		if s.CountInput {
			return in
		}
		return bson.D{{Key: "stage", Value: "COUNT"}, {Key: "inputStage", Value: in}}
	}
	var stage bson.D
	direction := "forward"
	if p.Reverse {
		direction = "backward"
	}
	switch {
	case p.Text != nil:
		stage = p.textStage(s)
	case p.Geo != nil:
		stage = p.geoStage(s)
	case p.Or != nil:
		scans := bson.A{}
		for _, br := range p.Or {
			if br.Text != nil {
				scans = append(scans, br.textStage(s))
				continue
			}
			scans = append(scans, br.scanStage())
		}
		or := bson.D{{Key: "stage", Value: "OR"}, {Key: "inputStages", Value: scans}}
		stage = append(append(bson.D{{Key: "stage", Value: "FETCH"}}, s.filterOf(s.Filter)...), bson.E{Key: "inputStage", Value: or})
	case p.Index == nil && p.Intervals == nil:
		stage = append(append(bson.D{{Key: "stage", Value: "COLLSCAN"}}, s.filterOf(s.Filter)...), bson.E{Key: "direction", Value: direction})
	case p.Index == nil && s.Clustered:
		stage = p.clusteredScanStage(s, direction)
	case p.idHack:
		stage = bson.D{{Key: "stage", Value: "IDHACK"}}
	case p.covered != nil:
		stage = p.scanStage()
	default:
		fetch, keyed := p.keyFiltered(p.residual(s.Filter))
		scan := p.scanStage()
		if keyed != nil {
			scan = slices.Insert(scan, 1, bson.E{Key: "filter", Value: s.show(keyed)})
		}
		stage = append(append(bson.D{{Key: "stage", Value: "FETCH"}}, s.filterOf(fetch)...), bson.E{Key: "inputStage", Value: scan})
	}
	blockingSort := len(s.Sort) > 0 && !p.Sorted
	if blockingSort {
		sortStage := bson.D{{Key: "stage", Value: "SORT"}, {Key: "sortPattern", Value: s.Sort}, {Key: "memLimit", Value: ExplainNumber(s.SortMemLimit)}}
		if s.Limit > 0 {
			sortStage = append(sortStage, bson.E{Key: "limitAmount", Value: ExplainNumber(s.Limit + s.Skip)})
		}
		sortStage = append(sortStage, bson.E{Key: "type", Value: "simple"}, bson.E{Key: "inputStage", Value: stage})
		stage = sortStage
	}
	if s.Skip > 0 {
		stage = bson.D{{Key: "stage", Value: "SKIP"}, {Key: "skipAmount", Value: ExplainNumber(s.Skip)}, {Key: "inputStage", Value: stage}}
	}
	if s.ReturnKey {
		stage = bson.D{{Key: "stage", Value: "RETURN_KEY"}, {Key: "inputStage", Value: stage}}
	} else if p.covered != nil {
		stage = bson.D{{Key: "stage", Value: "PROJECTION_COVERED"}, {Key: "transformBy", Value: s.Projection}, {Key: "inputStage", Value: stage}}
	} else if len(s.Projection) > 0 {
		name := "PROJECTION_DEFAULT"
		if simpleInclusion(s.Projection) {
			name = "PROJECTION_SIMPLE"
		}
		stage = bson.D{{Key: "stage", Value: name}, {Key: "transformBy", Value: s.Projection}, {Key: "inputStage", Value: stage}}
	}
	if s.Limit > 0 && !blockingSort {
		// A blocking sort enforces the limit itself (limitAmount).
		stage = bson.D{{Key: "stage", Value: "LIMIT"}, {Key: "limitAmount", Value: ExplainNumber(s.Limit)}, {Key: "inputStage", Value: stage}}
	}
	return stage
}

// simpleInclusion reports whether a find's projection spec includes
// top-level fields only (with _id excluded or not), no dotted path,
// expression, $meta, positional or array operator: MongoDB's
// Projection::isSimple, whose projection over fetched documents is
// PROJECTION_SIMPLE (QueryPlannerAnalysis::analyzeProjection); any other
// is PROJECTION_DEFAULT.
func simpleInclusion(spec bson.Raw) bool {
	elems, err := spec.Elements()
	if err != nil || len(elems) == 0 {
		return false
	}
	include := false
	for _, el := range elems {
		key, v := el.Key(), el.Value()
		if strings.ContainsAny(key, ".$") {
			return false
		}
		on, ok := projectionFlag(v)
		if !ok {
			return false
		}
		switch {
		case on:
			include = true
		case key != "_id":
			return false
		}
	}
	return include
}

// projectionFlag reads a projection field's value that is a truth value:
// a boolean or a number (included unless zero); ok is false for any other
// value (an expression, $meta, a positional or array operator).
func projectionFlag(v bson.RawValue) (on, ok bool) {
	switch {
	case v.Type == bson.TypeBoolean:
		return v.Boolean(), true
	case values.IsNumber(v.Type):
		f, _ := values.Float64(v)
		return f != 0, true
	}
	return false, false
}

// ExplainNumber is a number as MongoDB's explain appends it
// (appendNumber, appendIntOrLL): an int while it fits, a long past that.
func ExplainNumber(n int64) any {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return int32(n)
	}
	return n
}

// scanStage is the IXSCAN stage of a scan of an index, or of the document
// store as the _id index.
func (p *Plan) scanStage() bson.D {
	direction := "forward"
	if p.Reverse {
		direction = "backward"
	}
	keyPattern := IDKeyPattern
	name, unique, sparse, partial, multikey := IDIndexName, true, false, false, false
	if ix := p.Index; ix != nil {
		keyPattern, name, unique, sparse, partial, multikey = ix.KeyPattern, ix.Name, ix.Unique, ix.Sparse, ix.Partial != nil, p.multikey
	}
	stage := bson.D{
		{Key: "stage", Value: "IXSCAN"},
		{Key: "keyPattern", Value: keyPattern},
		{Key: "indexName", Value: name},
		{Key: "isMultiKey", Value: multikey},
		{Key: "isUnique", Value: unique},
		{Key: "isSparse", Value: sparse},
		{Key: "isPartial", Value: partial},
		{Key: "indexVersion", Value: int32(2)},
		{Key: "direction", Value: direction},
		{Key: "indexBounds", Value: p.explainBounds()},
	}
	if mk := p.multikeyPaths(); mk != nil {
		stage = slices.Insert(stage, 4, bson.E{Key: "multiKeyPaths", Value: mk})
	} else if ix := p.Index; ix != nil && ix.WildcardPath() != "" {
		// A wildcard index's scan shows the arrays along its path, after
		// isMultiKey.
		paths := ix.MultikeyPaths
		if paths == nil {
			paths = []string{}
		}
		var mk bson.D
		for _, f := range ix.Fields {
			if f.Wildcard {
				mk = append(mk, bson.E{Key: f.Path, Value: paths})
			} else {
				mk = append(mk, bson.E{Key: f.Path, Value: bson.A{}})
			}
		}
		stage = slices.Insert(stage, 4, bson.E{Key: "multiKeyPaths", Value: mk})
	}
	if ix := p.Index; ix != nil && ix.Collation != nil {
		// MongoDB shows an index's collation after its name.
		stage = slices.Insert(stage, 3, bson.E{Key: "collation", Value: ix.Collation.Document()})
	}
	return stage
}

// multikeyPaths are the multiKeyPaths MongoDB shows for a scan of an
// index tracking its fields' array components (the _id index among
// them): each field's path prefixes that held an array. Nil for other
// indexes.
func (p *Plan) multikeyPaths() bson.D {
	ix := p.Index
	if ix == nil {
		return bson.D{{Key: "_id", Value: bson.A{}}}
	}
	if ix.FieldArrays == nil || len(ix.FieldArrays) != len(ix.Fields) {
		return nil
	}
	arr := arrays{ix: ix, multikey: true}
	mk := make(bson.D, 0, len(ix.Fields))
	for i, f := range ix.Fields {
		prefixes := bson.A{}
		for c := range f.Parts {
			if arr.at(i, c) {
				prefixes = append(prefixes, strings.Join(f.Parts[:c+1], "."))
			}
		}
		mk = append(mk, bson.E{Key: f.Path, Value: prefixes})
	}
	return mk
}

// CountScanShown reports whether a count plan shows as a COUNT_SCAN: one
// interval of keys it counts. A scan of collation keys whose bounds hold
// strings shows as the IXSCAN it is (its bounds shown as collation keys),
// not a COUNT_SCAN, whose start and end keys would be the keys' bytes.
// Bounds no value satisfies are no interval: an IXSCAN of none, as
// MongoDB's planner turns only a single interval into a COUNT_SCAN
// (IndexBounds::isSingleInterval).
func (p *Plan) CountScanShown() bool {
	if !p.CountScan() || len(p.Intervals) > 1 || p.checks != nil {
		return false
	}
	for _, fb := range p.fieldBounds {
		if fb.none {
			return false
		}
	}
	if p.countExact {
		for _, fb := range p.fieldBounds {
			for _, iv := range fb.ivs {
				if iv.loVal.Type == bson.TypeString || iv.hiVal.Type == bson.TypeString {
					return false
				}
			}
		}
	}
	return true
}

// countScanStage is the COUNT_SCAN stage of an exact scan of one interval:
// its bounds are the keys it starts and ends at. Past the last bounded
// field, an exclusive end extends to the fields after it.
func (p *Plan) countScanStage() bson.D {
	stage := p.scanStage()
	stage = stage[:slices.IndexFunc(stage, func(e bson.E) bool { return e.Key == "direction" })] // IXSCAN's before the direction
	stage[0].Value = "COUNT_SCAN"
	var start, end bson.D
	startIncl, endIncl := true, true
	extreme := func(f Field, top bool) bson.RawValue {
		if top != f.Desc {
			return bson.RawValue{Type: bson.TypeMaxKey}
		}
		return bson.RawValue{Type: bson.TypeMinKey}
	}
	// points: the fields so far (a wildcard's $_path among them) are each
	// pinned to one value.
	points := true
	for i, f := range p.fields {
		fb := p.fieldBounds[i]
		if fb.empty() || len(fb.ivs) != 1 || !points || (!startIncl || !endIncl) {
			points = false
			start = append(start, bson.E{Key: f.Path, Value: extreme(f, !startIncl)})
			end = append(end, bson.E{Key: f.Path, Value: extreme(f, endIncl)})
			continue
		}
		points = fb.single()
		iv := fb.ivs[0]
		start = append(start, bson.E{Key: f.Path, Value: iv.loVal})
		end = append(end, bson.E{Key: f.Path, Value: iv.hiVal})
		startIncl, endIncl = iv.loIncl, iv.hiIncl
	}
	return append(stage, bson.E{Key: "indexBounds", Value: bson.D{
		{Key: "startKey", Value: start},
		{Key: "startKeyInclusive", Value: startIncl},
		{Key: "endKey", Value: end},
		{Key: "endKeyInclusive", Value: endIncl},
	}})
}

// explainBounds lists every field's bounds in the order the scan meets
// them; fields the filter leaves open span [MinKey, MaxKey] ([MaxKey,
// MinKey] where the scan meets the field descending). A key range shows none, as MongoDB shows a simple
// range.
func (p *Plan) explainBounds() bson.D {
	out := bson.D{}
	if p.keyRange {
		return out
	}
	for i, f := range p.fields {
		// IndexBoundsBuilder::alignBounds turns the intervals of a field
		// the scan meets descending (a descending field scanned forward,
		// an ascending one backward) end for end.
		open := "[MinKey, MaxKey]"
		if f.Desc != p.Reverse {
			open = "[MaxKey, MinKey]"
		}
		var shown any = bson.A{open}
		if i < len(p.fieldBounds) && !p.fieldBounds[i].empty() {
			shown = p.fieldBounds[i].shown(p.Reverse)
		}
		out = append(out, bson.E{Key: f.Path, Value: shown})
	}
	return out
}

// filterOf is a stage's filter field, none when the query has no filter
// or one its optimizer reduces to nothing ({$expr: true}): MongoDB's
// stages show one only when they apply one.
func (s Shape) filterOf(filter bson.Raw) bson.D {
	if len(filter) <= 5 {
		return nil
	}
	shown := s.show(filter)
	if d, ok := shown.(bson.D); ok && len(d) == 0 {
		return nil
	}
	return bson.D{{Key: "filter", Value: shown}}
}

// show is filter as a stage shows it (ShowFilter).
func (s Shape) show(filter bson.Raw) any {
	if s.ShowFilter == nil {
		return filter
	}
	return s.ShowFilter(filter)
}

// clusteredScanStage is the CLUSTERED_IXSCAN of a scan of a clustered
// collection's documents by _id: the filter, the direction and, when the
// _id bounds are one interval with values at both ends, the least and
// greatest _id it reads (minRecord, maxRecord); a key range shows the
// _id values of its min and max, each when given.
func (p *Plan) clusteredScanStage(s Shape, direction string) bson.D {
	stage := append(append(bson.D{{Key: "stage", Value: "CLUSTERED_IXSCAN"}}, s.filterOf(s.Filter)...), bson.E{Key: "direction", Value: direction})
	if p.keyRange {
		for _, r := range [...]bson.E{{Key: "minRecord", Value: p.minRecord}, {Key: "maxRecord", Value: p.maxRecord}} {
			if r.Value.(bson.RawValue).Type != 0 {
				stage = append(stage, r)
			}
		}
		return stage
	}
	if len(p.fieldBounds) == 1 && len(p.fieldBounds[0].ivs) == 1 {
		iv := p.fieldBounds[0].ivs[0]
		if iv.loVal.Type != 0 && iv.hiVal.Type != 0 {
			stage = append(stage, bson.E{Key: "minRecord", Value: iv.loVal}, bson.E{Key: "maxRecord", Value: iv.hiVal})
		}
	}
	return stage
}

// Summary is MongoDB's planSummary of p, as the profiler and the slow-query
// log show it: the scans of its leaves, each named by its stage and key
// pattern (IXSCAN { a: 1 }), or COLLSCAN, IDHACK, CLUSTERED_IXSCAN (a
// scan of a clustered collection by _id); a count's exact scan of one
// interval is a COUNT_SCAN.
// IndexesUsed names the indexes p reads, each once, in the order of its
// scans, as MongoDB's plan summary lists them (PlanSummaryStats'
// indexesUsed): the _id index for a read of documents by _id outside a
// clustered collection; none for a collection scan.
func (p *Plan) IndexesUsed(clustered bool) []string {
	var names []string
	add := func(q *Plan) {
		var name string
		switch {
		case q.Index != nil:
			name = q.Index.Name
		case q.Intervals != nil && !clustered:
			name = IDIndexName
		default:
			return
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if p.Or == nil {
		add(p)
	}
	for _, q := range p.Or {
		add(q)
	}
	return names
}

// CollectionScan reports whether p reads the collection itself rather than
// an index (a clustered collection's bounded scan too): MongoDB's COLLSCAN,
// which its plan summary counts among collectionScans.
func (p *Plan) CollectionScan(clustered bool) bool {
	return p.Or == nil && p.Index == nil && (p.Intervals == nil || clustered)
}

func (p *Plan) Summary(clustered, count bool) string {
	switch {
	case p.Or != nil:
		var b []byte
		for i, br := range p.Or {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, br.Summary(clustered, false)...)
		}
		return string(b)
	case p.Index == nil && p.Intervals == nil:
		return "COLLSCAN"
	case p.Index == nil && clustered:
		return "CLUSTERED_IXSCAN"
	case p.idHack && p.covered == nil && !count:
		return "IDHACK"
	}
	stage := "IXSCAN"
	switch {
	case p.Geo != nil && p.Geo.Near:
		stage = p.nearStage()
	case p.distinct != "":
		stage = "DISTINCT_SCAN"
	case count && p.CountScanShown():
		stage = "COUNT_SCAN"
	}
	keyPattern := IDKeyPattern
	if p.Index != nil {
		keyPattern = p.Index.KeyPattern
	}
	return stage + " " + values.ShellDoc(keyPattern)
}
