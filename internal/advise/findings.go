package advise

import (
	"slices"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Finding is one thing the advisor says: what kind of problem, where (the
// namespace, and the field or the query shape), the evidence in numbers,
// its cost (what ranks findings: documents examined, bytes, writes), the
// seed pattern that fixes it and what to do.
type Finding struct {
	Kind       string
	NS         string
	Field      string
	Shape      string
	Evidence   bson.D
	Cost       int64
	Pattern    string
	Suggestion string
}

// Doc is f as the folioAdvise command and `folio advise -json` give it.
func (f Finding) Doc() bson.D {
	d := bson.D{{Key: "kind", Value: f.Kind}, {Key: "ns", Value: f.NS}}
	if f.Field != "" {
		d = append(d, bson.E{Key: "field", Value: f.Field})
	}
	if f.Shape != "" {
		d = append(d, bson.E{Key: "shape", Value: f.Shape})
	}
	return append(d, bson.E{Key: "evidence", Value: f.Evidence}, bson.E{Key: "cost", Value: f.Cost},
		bson.E{Key: "pattern", Value: f.Pattern}, bson.E{Key: "suggestion", Value: f.Suggestion})
}

// Index is an index as the report needs it: its name, its key's fields
// in order, and how many operations read it since Since.
type Index struct {
	Name   string
	Fields []string
	Ops    int64
	Since  time.Time
	// Size is its disk size as the store estimates it.
	Size int64
}

// Catalog is what Report reads of the database besides the observations.
type Catalog interface {
	// Namespaces are the collections ("db.coll") of db, or of every
	// database when db is "".
	Namespaces(db string) []string
	// Indexes are ns's indexes.
	Indexes(ns string) []Index
	// Sample is up to n documents of ns.
	Sample(ns string, n int) []bson.Raw
}

// Thresholds of the findings (see docs/patterns.md, "What folio advise
// says").
const (
	minExecutions   = 10      // a query shape's executions before it is judged
	scanRatio       = 10      // documents examined per document returned that call for an index
	minScanned      = 100     // ... and per execution
	deepSkip        = 1000    // a skip this deep is paging by skip
	sampleSize      = 1000    // documents sampled per collection
	largeDoc        = 8 << 20 // a document half the 16 MiB limit is large
	outlierDoc      = 1 << 20 // ... as is one of 1 MiB ten times the median
	minPushes       = 100     // unbounded pushes before an array is judged
	longArray       = 100     // ... and the length that makes it unbounded
	minMultiWrites  = 10      // multi updates of a field before it is judged
	copiesPerUpdate = 10      // documents per multi update that make a copy
	writesPerRead   = 10      // writes per read that make a field hot
)

// Report is the findings on db ("" for every database), most costly first.
func (o *Observer) Report(cat Catalog, db string) []Finding {
	shapes, fields, lookups, writes, sizes := o.snapshot()
	// Only collections that exist now: what was observed of a dropped one
	// says nothing of the data.
	exists := map[string]bool{}
	namespaces := cat.Namespaces(db)
	for _, ns := range namespaces {
		exists[ns] = true
	}
	in := func(ns string) bool { return exists[ns] }
	var out []Finding
	indexes := map[string][]Index{}
	indexesOf := func(ns string) []Index {
		if ix, ok := indexes[ns]; ok {
			return ix
		}
		indexes[ns] = cat.Indexes(ns)
		return indexes[ns]
	}
	for _, s := range shapes {
		if !in(s.ns) {
			continue
		}
		out = append(out, shapeFindings(s, indexesOf(s.ns))...)
		for _, f := range s.q.unanchored {
			if leadingIndex(indexesOf(s.ns), f) != "" {
				out = append(out, Finding{Kind: "unanchored-regex", NS: s.ns, Field: f, Shape: s.shape,
					Evidence: bson.D{{Key: "executions", Value: s.count}, {Key: "index", Value: leadingIndex(indexesOf(s.ns), f)}, {Key: "docsExamined", Value: s.docs}},
					Cost:     s.docs, Pattern: "materialized paths (docs/patterns.md#trees)",
					Suggestion: "anchor the regular expression at the start (^prefix) and keep it case-sensitive, so that the index on " + f + " reads only the prefix's range"})
			}
		}
	}
	for _, l := range lookups {
		if !in(l.ns) || l.foreign == "_id" || leadingIndex(indexesOf(l.from), l.foreign) != "" {
			continue
		}
		out = append(out, Finding{Kind: "lookup-without-index", NS: l.ns, Field: l.from + "." + l.foreign,
			Evidence: bson.D{{Key: "lookups", Value: l.count}, {Key: "from", Value: l.from}, {Key: "foreignField", Value: l.foreign}},
			Cost:     l.count, Pattern: "two-way referencing (docs/patterns.md#two-way-references)",
			Suggestion: "create an index on " + l.from + " {" + l.foreign + ": 1}: without it every looked-up document scans the whole collection"})
	}
	reads := map[string]int64{}
	for _, s := range shapes {
		for _, f := range s.q.fields {
			reads[s.ns+"\x00"+f] += s.count
		}
	}
	for i := range fields {
		fields[i].reads = reads[fields[i].ns+"\x00"+fields[i].path]
	}
	out = append(out, fieldFindings(fields, in, cat)...)
	for _, ns := range namespaces {
		for _, ix := range indexesOf(ns) {
			if ix.Name == "_id_" || ix.Ops > 0 {
				continue
			}
			out = append(out, Finding{Kind: "unused-index", NS: ns, Field: ix.Name,
				Evidence: bson.D{{Key: "index", Value: ix.Name}, {Key: "key", Value: strings.Join(ix.Fields, ", ")}, {Key: "unusedSince", Value: ix.Since},
					{Key: "sizeBytes", Value: ix.Size}, {Key: "writesSince", Value: writes[ns]}},
				Cost: writes[ns], Pattern: "index what you query (docs/patterns.md#what-folio-advise-says)",
				Suggestion: "no operation read this index since " + ix.Since.UTC().Format(time.RFC3339) + "; every write still maintains it: drop it (or hide it first with collMod) unless a rare job needs it"})
		}
		out = append(out, documentFindings(ns, cat.Sample(ns, sampleSize), sizes[ns])...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Cost > out[j].Cost })
	return out
}

// shapeFindings are the findings of one query shape: missing-index and
// skip-paging.
func shapeFindings(s shapeStats, indexes []Index) []Finding {
	var out []Finding
	evidence := func() bson.D {
		d := bson.D{{Key: "executions", Value: s.count}, {Key: "docsExamined", Value: s.docs}, {Key: "keysExamined", Value: s.keys},
			{Key: "returned", Value: s.ret}, {Key: "avgMillis", Value: float64(s.micros) / float64(max(s.count, 1)) / 1000},
			{Key: "p95Millis", Value: float64(s.p95().Microseconds()) / 1000}}
		if s.plan != "" {
			d = append(d, bson.E{Key: "plan", Value: s.plan})
		}
		if s.maxIn > 0 {
			d = append(d, bson.E{Key: "largestIn", Value: int64(s.maxIn)})
		}
		return d
	}
	if s.count >= minExecutions && s.docs >= scanRatio*max(s.ret, 1) && s.docs >= minScanned*s.count {
		key := suggestedIndex(s)
		if len(key) > 0 && !covered(indexes, key) {
			out = append(out, Finding{Kind: "missing-index", NS: s.ns, Shape: s.kind + " " + s.shape, Evidence: evidence(), Cost: s.docs,
				Pattern:    "index what you query: equality fields, then the sort, then ranges (docs/patterns.md#what-folio-advise-says)",
				Suggestion: "create an index on {" + strings.Join(key, ": 1, ") + ": 1}"})
		}
	}
	if len(s.sortKeys) > 0 && s.maxSkip >= deepSkip {
		ev := append(evidence(), bson.E{Key: "maxSkip", Value: s.maxSkip}, bson.E{Key: "avgSkip", Value: s.skips / max(s.count, 1)})
		out = append(out, Finding{Kind: "skip-paging", NS: s.ns, Shape: s.kind + " " + s.shape, Evidence: ev, Cost: s.skips,
			Pattern:    "paging comments by range, not skip (docs/patterns.md#comments-three-ways)",
			Suggestion: "page by range on the sort key: remember the last " + s.sortKeys[0] + " of a page and ask for the next with {" + s.sortKeys[0] + ": {$gt: last}} and the same sort and limit; a skip reads and drops every skipped document"})
	}
	return out
}

// suggestedIndex is the index that would serve a shape: its equality
// fields, then its sort, then its range fields.
func suggestedIndex(s shapeStats) []string {
	var key []string
	add := func(f string) {
		if !slices.Contains(key, f) {
			key = append(key, f)
		}
	}
	for _, f := range s.q.eq {
		add(f)
	}
	for _, f := range s.sortKeys {
		add(f)
	}
	for _, f := range s.q.rng {
		add(f)
	}
	return key
}

// covered reports whether an index's key starts with key's fields (in any
// order for the equalities; simply: the same set as its prefix).
func covered(indexes []Index, key []string) bool {
	for _, ix := range indexes {
		if len(ix.Fields) < len(key) {
			continue
		}
		prefix := slices.Clone(ix.Fields[:len(key)])
		want := slices.Clone(key)
		slices.Sort(prefix)
		slices.Sort(want)
		if slices.Equal(prefix, want) {
			return true
		}
	}
	return false
}

// leadingIndex is the name of an index whose first field is f ("" for
// none).
func leadingIndex(indexes []Index, f string) string {
	for _, ix := range indexes {
		if len(ix.Fields) > 0 && ix.Fields[0] == f {
			return ix.Name
		}
	}
	return ""
}

// fieldFindings are unbounded-array and denormalized-hot-field.
func fieldFindings(fields []fieldStats, in func(string) bool, cat Catalog) []Finding {
	var out []Finding
	samples := map[string][]bson.Raw{}
	for _, f := range fields {
		if !in(f.ns) {
			continue
		}
		if f.unbounded >= minPushes {
			docs, ok := samples[f.ns]
			if !ok {
				docs = cat.Sample(f.ns, sampleSize)
				samples[f.ns] = docs
			}
			longest, total, n := 0, 0, 0
			for _, d := range docs {
				if arr, ok := d.Lookup(strings.Split(f.path, ".")...).ArrayOK(); ok {
					vals, _ := arr.Values()
					longest, total, n = max(longest, len(vals)), total+len(vals), n+1
				}
			}
			if longest >= longArray {
				perMinute := float64(f.pushes) / max(time.Since(f.firstPush).Minutes(), 1.0/60)
				out = append(out, Finding{Kind: "unbounded-array", NS: f.ns, Field: f.path,
					Evidence: bson.D{{Key: "pushes", Value: f.pushes}, {Key: "withoutSlice", Value: f.unbounded}, {Key: "longestSampled", Value: int64(longest)},
						{Key: "averageSampled", Value: float64(total) / float64(max(n, 1))}, {Key: "pushesPerMinute", Value: perMinute}},
					Cost: int64(longest) * f.unbounded, Pattern: "one->squillions (docs/patterns.md#one-squillions), or the bucket pattern of comments (docs/patterns.md#comments-three-ways)",
					Suggestion: "bound " + f.path + ": $push with $each and $slice keeps the newest N, or move the elements to their own documents referencing the parent, or to buckets of a fixed size"})
			}
		}
		if f.multiWrites >= minMultiWrites && f.multiDocs >= copiesPerUpdate*f.multiWrites && f.writes >= writesPerRead*max(f.reads, 1) {
			out = append(out, Finding{Kind: "denormalized-hot-field", NS: f.ns, Field: f.path,
				Evidence: bson.D{{Key: "updates", Value: f.writes}, {Key: "multiUpdates", Value: f.multiWrites}, {Key: "documentsPerUpdate", Value: f.multiDocs / f.multiWrites}, {Key: "reads", Value: f.reads}},
				Cost:     f.multiDocs, Pattern: "denormalize what is read often and rarely updated (docs/patterns.md#denormalization)",
				Suggestion: f.path + " is copied into many documents and rewritten far more often than read: keep it in one document and reference it, or read it with a $lookup"})
		}
	}
	return out
}

// documentFindings is large-document over a sample of ns and the sizes
// of the documents inserted into it.
func documentFindings(ns string, docs []bson.Raw, inserted sizeStats) []Finding {
	var median, top int64
	var largestID bson.RawValue
	if len(docs) > 0 {
		sizes := make([]int64, len(docs))
		largest := 0
		for i, d := range docs {
			sizes[i] = int64(len(d))
			if len(d) > len(docs[largest]) {
				largest = i
			}
		}
		slices.Sort(sizes)
		median, top, largestID = sizes[len(sizes)/2], sizes[len(sizes)-1], docs[largest].Lookup("_id")
	}
	if inserted.count > 0 {
		median = max(median, inserted.quantile(0.5))
		top = max(top, inserted.max)
	}
	if top < largeDoc && (top < outlierDoc || top < 10*median) {
		return nil
	}
	ev := bson.D{{Key: "sampled", Value: int64(len(docs))}, {Key: "medianBytes", Value: median}, {Key: "largestBytes", Value: top}}
	if largestID.Type != 0 {
		ev = append(ev, bson.E{Key: "largestSampledId", Value: largestID})
	}
	if inserted.count > 0 {
		ev = append(ev, bson.E{Key: "inserted", Value: inserted.count}, bson.E{Key: "insertedP90Bytes", Value: inserted.quantile(0.9)},
			bson.E{Key: "insertedMaxBytes", Value: inserted.max})
	}
	ev = append(ev, bson.E{Key: "limitBytes", Value: int64(16 << 20)})
	return []Finding{{Kind: "large-document", NS: ns, Field: "_id", Evidence: ev, Cost: top,
		Pattern:    "embed what is read together, reference what grows (docs/patterns.md#embedding-vs-referencing)",
		Suggestion: "split the largest documents: move their growing or rarely read parts to documents of their own (referenced), or into buckets"}}
}
