// Package advise watches the operations a server runs and says, with
// numbers, which schema-design pattern a collection is missing: the
// queries that scan far more than they return (an index), the arrays that
// keep growing (bound them, or bucket), the large documents, the regular
// expressions and $lookups no index serves, deep skips, fields copied
// into many documents and rewritten more than read, indexes nothing uses.
// The Observer keeps bounded counts in memory; Report turns them, with
// the catalog and a sample of the documents, into findings.
package advise

import (
	"math/bits"
	"sort"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/rawdoc"
)

// Bounds of what an Observer keeps: past them, the entry seen least often
// is forgotten for the new one.
const (
	maxShapes  = 1000
	maxFields  = 5000
	maxLookups = 500
)

// Exec is the work of one execution of a query.
type Exec struct {
	KeysExamined, DocsExamined, Returned int64
	Duration                             time.Duration
	Plan                                 string
}

// shapeStats are the executions of one query shape.
type shapeStats struct {
	ns, kind, shape string
	q               query
	sortKeys        []string
	count           int64
	micros          int64
	hist            [40]int64 // executions by log2 of their microseconds
	keys, docs, ret int64
	plan            string
	maxSkip, skips  int64
	maxIn           int
}

// fieldStats are the writes of one field of a collection (its reads are
// counted at report time from the query shapes that test it).
type fieldStats struct {
	ns, path string
	reads    int64 // set by Report
	// writes counts update statements setting the field; multiWrites
	// those with multi, which changed multiDocs documents in all.
	writes, multiWrites, multiDocs int64
	// pushes counts $push and $addToSet of it; unbounded those without
	// $slice.
	pushes, unbounded int64
	firstPush         time.Time
}

type lookupStats struct {
	ns, from, foreign string
	count             int64
}

// Observer is what a server has seen since it started or was reset. It is
// safe for concurrent use; each observation takes its lock once.
type Observer struct {
	mu      sync.Mutex
	since   time.Time
	shapes  map[string]*shapeStats
	fields  map[string]*fieldStats
	lookups map[string]*lookupStats
	writes  map[string]int64 // documents written per namespace
	sizes   map[string]*sizeStats
}

// sizeStats are the sizes of the documents inserted into a collection.
type sizeStats struct {
	count, max int64
	hist       [32]int64 // documents by log2 of their size
}

// quantile is the q-th quantile (0 to 1) of the sizes, as the upper bound
// of its power-of-two bucket.
func (s *sizeStats) quantile(q float64) int64 {
	seen := int64(0)
	for i, c := range s.hist {
		if seen += c; c > 0 && float64(seen) >= q*float64(s.count) {
			return min(int64(1)<<i, s.max)
		}
	}
	return s.max
}

// NewObserver returns an empty Observer.
func NewObserver() *Observer {
	o := &Observer{}
	o.Reset()
	return o
}

// Reset forgets everything observed.
func (o *Observer) Reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.since = time.Now()
	o.shapes = map[string]*shapeStats{}
	o.fields = map[string]*fieldStats{}
	o.lookups = map[string]*lookupStats{}
	o.writes = map[string]int64{}
	o.sizes = map[string]*sizeStats{}
}

// Since is when the observation began.
func (o *Observer) Since() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.since
}

// keyBufs are the buffers observations build their map keys in: a known
// shape or field is then found without allocating.
var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// shapeKey appends the key of a query shape: namespace, kind, filter
// shape, sort and projection keys; it also returns the filter's largest
// $in list.
func shapeKey(dst []byte, ns, kind string, filter, sortDoc, projection []byte) ([]byte, int) {
	dst = append(append(append(append(dst, ns...), 0), kind...), 0)
	dst, maxIn := appendShape(dst, filter, nil, "")
	dst = appendKeys(append(dst, 0), sortDoc)
	return appendKeys(append(dst, 0), projection), maxIn
}

// Query records one execution of a read (kind find, count, distinct,
// aggregate, update, delete, findAndModify) of ns: its filter, sort,
// projection and skip, and its work.
func (o *Observer) Query(ns, kind string, filter, sortDoc, projection bson.Raw, skip int64, ex Exec) {
	buf := keyBufs.Get().(*[]byte)
	defer keyBufs.Put(buf)
	key, maxIn := shapeKey((*buf)[:0], ns, kind, filter, sortDoc, projection)
	*buf = key
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.shapes[string(key)]
	if s == nil {
		if len(o.shapes) >= maxShapes {
			evict(o.shapes, func(s *shapeStats) int64 { return s.count })
		}
		q := parseFilter(filter)
		s = &shapeStats{ns: ns, kind: kind, shape: q.shape, q: q, sortKeys: sortKeys(sortDoc)}
		if len(s.sortKeys) > 0 {
			s.shape += " sort {" + strings.Join(s.sortKeys, ", ") + "}"
		}
		if p := sortKeys(projection); len(p) > 0 {
			s.shape += " projection {" + strings.Join(p, ", ") + "}"
		}
		o.shapes[string(key)] = s
	}
	s.count++
	s.add(ex)
	s.maxSkip, s.skips = max(s.maxSkip, skip), s.skips+skip
	s.maxIn = max(s.maxIn, maxIn)
}

// More adds the work of a getMore to its query's shape (without counting
// an execution).
func (o *Observer) More(ns, kind string, filter, sortDoc, projection bson.Raw, ex Exec) {
	buf := keyBufs.Get().(*[]byte)
	defer keyBufs.Put(buf)
	key, _ := shapeKey((*buf)[:0], ns, kind, filter, sortDoc, projection)
	*buf = key
	o.mu.Lock()
	defer o.mu.Unlock()
	if s := o.shapes[string(key)]; s != nil {
		ex.Duration = 0
		s.add(ex)
	}
}

func (s *shapeStats) add(ex Exec) {
	us := ex.Duration.Microseconds()
	if ex.Duration > 0 {
		s.micros += us
		s.hist[min(bits.Len64(uint64(us)), len(s.hist)-1)]++
	}
	s.keys += ex.KeysExamined
	s.docs += ex.DocsExamined
	s.ret += ex.Returned
	if ex.Plan != "" {
		s.plan = ex.Plan
	}
}

// p95 is the 95th percentile of the executions' durations, as the upper
// bound of its power-of-two bucket.
func (s *shapeStats) p95() time.Duration {
	var n int64
	for _, c := range s.hist {
		n += c
	}
	seen := int64(0)
	for i, c := range s.hist {
		if seen += c; seen*100 >= n*95 && c > 0 {
			return time.Duration(int64(1)<<i) * time.Microsecond
		}
	}
	return 0
}

// Update records an update statement's writes: the fields it sets, the
// arrays it pushes to (and whether bounded with $slice), and for a multi
// update how many documents it changed.
func (o *Observer) Update(ns string, update bson.Raw, multi bool, modified int64) {
	if !isOperatorDoc(update) {
		return
	}
	buf := keyBufs.Get().(*[]byte)
	defer keyBufs.Put(buf)
	o.mu.Lock()
	defer o.mu.Unlock()
	ops := rawdoc.Iterate(update)
	for {
		opName, opDoc, ok := ops.Next()
		if !ok {
			break
		}
		if opDoc.Type != bson.TypeEmbeddedDocument {
			continue
		}
		push := string(opName) == "$push" || string(opName) == "$addToSet"
		fields := rawdoc.Iterate(opDoc.Value)
		for {
			path, v, ok := fields.Next()
			if !ok {
				break
			}
			*buf = append(append(append((*buf)[:0], ns...), 0), path...)
			fs := o.fields[string(*buf)]
			if fs == nil {
				fs = o.newField(string(*buf), ns, string(path))
			}
			fs.writes++
			if multi {
				fs.multiWrites++
				fs.multiDocs += modified
			}
			if !push {
				continue
			}
			if fs.pushes == 0 {
				fs.firstPush = time.Now()
			}
			fs.pushes++
			if v.Type != bson.TypeEmbeddedDocument || rawdoc.Lookup(v.Value, "$slice").Type == 0 {
				fs.unbounded++
			}
		}
	}
}

// Wrote counts n documents written to ns.
func (o *Observer) Wrote(ns string, n int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.writes[ns]; !ok && len(o.writes) >= maxFields {
		evict(o.writes, func(n int64) int64 { return n })
	}
	o.writes[ns] += n
}

// Inserted records the sizes of the documents of an insert into ns (docs
// is the command's documents array).
func (o *Observer) Inserted(ns string, docs []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.sizes[ns]
	if s == nil {
		if len(o.sizes) >= maxFields {
			evict(o.sizes, func(s *sizeStats) int64 { return s.count })
		}
		s = &sizeStats{}
		o.sizes[ns] = s
	}
	it := rawdoc.Iterate(docs)
	for {
		_, d, ok := it.Next()
		if !ok {
			return
		}
		n := int64(len(d.Value))
		s.count++
		s.max = max(s.max, n)
		s.hist[min(bits.Len64(uint64(n)), len(s.hist)-1)]++
	}
}

// Lookup records a $lookup or $graphLookup of ns reading from by
// foreignField.
func (o *Observer) Lookup(ns, from, foreignField string) {
	key := ns + "\x00" + from + "\x00" + foreignField
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.lookups[key]
	if l == nil {
		if len(o.lookups) >= maxLookups {
			evict(o.lookups, func(l *lookupStats) int64 { return l.count })
		}
		l = &lookupStats{ns: ns, from: from, foreign: foreignField}
		o.lookups[key] = l
	}
	l.count++
}

// newField adds the stats of ns.path under key; the caller holds mu.
func (o *Observer) newField(key, ns, path string) *fieldStats {
	if len(o.fields) >= maxFields {
		evict(o.fields, func(f *fieldStats) int64 { return f.writes })
	}
	f := &fieldStats{ns: ns, path: path}
	o.fields[key] = f
	return f
}

// evict forgets the entry of m with the least weight.
func evict[T any](m map[string]T, weight func(T) int64) {
	var least string
	var lw int64 = -1
	for k, v := range m {
		if w := weight(v); lw < 0 || w < lw {
			least, lw = k, w
		}
	}
	delete(m, least)
}

// snapshot copies what Report reads, under the lock.
func (o *Observer) snapshot() (shapes []shapeStats, fields []fieldStats, lookups []lookupStats, writes map[string]int64, sizes map[string]sizeStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	sizes = make(map[string]sizeStats, len(o.sizes))
	for k, v := range o.sizes {
		sizes[k] = *v
	}
	for _, s := range o.shapes {
		shapes = append(shapes, *s)
	}
	for _, f := range o.fields {
		fields = append(fields, *f)
	}
	for _, l := range o.lookups {
		lookups = append(lookups, *l)
	}
	writes = make(map[string]int64, len(o.writes))
	for k, v := range o.writes {
		writes[k] = v
	}
	sort.Slice(shapes, func(i, j int) bool { return shapes[i].docs > shapes[j].docs })
	return shapes, fields, lookups, writes, sizes
}
