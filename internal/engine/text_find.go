package engine

import (
	"bytes"
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/fts"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
)

// textIndexOf is c's text index (a collection has at most one), hidden
// or not: MongoDB binds a $text clause to the catalog's text index, and
// only its planner leaves a hidden one out (planText).
func textIndexOf(c *Collection) *Index {
	for _, ix := range c.Indexes() {
		if ix.text != nil {
			return ix
		}
	}
	return nil
}

// bindText binds the $text clause ts of a filter to c's text index (27
// IndexNotFound without one), and returns the index and the parsed search.
// A clause in a branch of an $or (exact) is checked on documents the
// union's other branches found, which no lookup of its terms selected: it
// matches the documents the search holds (fts.Query.Holds); a clause that
// is a conjunct only sees the documents its terms' keys gave.
func bindText(c *Collection, ts *query.TextSearch, exact bool) (*Index, *fts.Query, error) {
	ix := textIndexOf(c)
	if ix == nil {
		return nil, nil, mongoerr.New(mongoerr.IndexNotFound, "text index required for $text query")
	}
	spec := ix.text.spec
	lang := spec.DefaultLanguage()
	if ts.Language != "" {
		var err error
		if lang, err = spec.Language(ts.Language); err != nil {
			return nil, nil, err
		}
	}
	fq := fts.ParseQuery(ts.Search, lang, ts.CaseSensitive, ts.DiacriticSensitive)
	if exact {
		ts.Bind(spec.DefaultLanguage().Name, func(doc bson.Raw) (bool, error) { return fq.Holds(spec, doc) })
	} else {
		ts.Bind(spec.DefaultLanguage().Name, func(doc bson.Raw) (bool, error) { return fq.Matches(spec, doc) })
	}
	return ix, fq, nil
}

// bindFilterText binds f's $text clause, if any, for a match outside its
// plan (a write's recheck).
func bindFilterText(c *Collection, f *query.Filter) error {
	ts, err := f.Text()
	if err != nil || ts == nil {
		return err
	}
	or, _ := f.TextOr()
	_, _, err = bindText(c, ts, or != nil)
	return err
}

// planText plans a $text query: it binds the clause to c's text index
// (NoQueryExecutionPlans when it is hidden) and reads the index's keys of
// each search term under the equality values the filter gives its prefix
// fields. A clause in a branch of an $or is read as the first scan of the
// $or's union (planTextOr).
func planText(c *Collection, q compiledFind, ts *query.TextSearch) (*planner.Plan, error) {
	or, branch := q.filter.TextOr()
	if or == nil {
		return textScan(c, q, ts, conjuncts(q.filter.Root()), false)
	}
	clauses := conjuncts(branch)
	if len(query.OrBranches(or)) == 1 {
		// MongoDB drops an $or of one clause into the $and above it,
		// whose clauses are then the $text's siblings too.
		for _, n := range conjuncts(q.filter.Root()) {
			if n != or {
				clauses = append(slices.Clip(clauses), n)
			}
		}
	}
	p, err := textScan(c, q, ts, clauses, true)
	if err != nil {
		return nil, err
	}
	return planTextOr(c, q, p, or, branch)
}

// textScan is the scan of c's text index for the clause ts whose
// conjuncts (the clauses of the $and holding it, itself included) give
// the equality values of the index's prefix fields: MongoDB takes them
// from the text node's siblings alone (stripInvalidAssignmentsToTextIndexes).
func textScan(c *Collection, q compiledFind, ts *query.TextSearch, clauses []*query.Node, exact bool) (*planner.Plan, error) {
	ix, fq, err := bindText(c, ts, exact)
	if err != nil {
		return nil, err
	}
	if !ix.plannable(q.strict) {
		// The planner sees no text index, as MongoDB's counts none.
		return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans,
			"error processing query: planner returned error :: caused by :: need exactly one text index for $text query")
	}
	spec := ix.text.spec
	planned := ix.planned()
	// The clauses beside an $or holding the $text are AND-ed with it too.
	anded := append(slices.Clip(clauses), conjuncts(q.filter.Root())...)
	prefix, shown, ok := indexPrefixOf(ix, q.filter, clauses, spec.Prefix, true)
	if !ok || !planner.TextIndexHolds(anded, &planned) {
		return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans,
			"error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)")
	}
	scan := &planner.TextScan{Terms: fq.Terms, Prefix: shown, Score: q.textScore, Version: int32(spec.Version()), Parsed: bson.D{
		{Key: "terms", Value: orEmpty(fq.PositiveTerms())},
		{Key: "negatedTerms", Value: orEmpty(fq.NegatedTerms())},
		{Key: "phrases", Value: orEmpty(fq.Phrases)},
		{Key: "negatedPhrases", Value: orEmpty(fq.NegatedPhrases)},
	}}
	ivs := make([]planner.Interval, len(fq.Terms))
	for i, term := range fq.Terms {
		lo := termPrefix(prefix, term)
		ivs[i] = planner.Interval{Lo: lo, Hi: keyenc.PrefixEnd(lo)}
	}
	return planner.TextPlan(&planned, scan, ivs), nil
}

// planTextOr is the union of the $or or holding the $text clause in
// branch, text the clause's scan (planner.Query.Text). MongoDB plans no
// other way (the text index is mandatory): without a bounded scan of
// every other branch, NoQueryExecutionPlans, which names the TEXT under
// OR when the clause is itself a branch of the filter's root $or
// (QueryPlanner::plan; fts_projection.js, SERVER-12592).
func planTextOr(c *Collection, q compiledFind, text *planner.Plan, or, branch *query.Node) (*planner.Plan, error) {
	pq := planner.Query{Filter: q.filter, Sort: q.sort, Projection: q.proj, ProjectionSpec: q.projDoc, IDCollation: c.DefaultCollator(),
		Clustered: c.Clustered(), NoIDHack: q.noIDHack, KeysOnly: q.keysOnly, Text: text}
	if cands := planner.Candidates(planCatalog{c, q.strict}, pq); len(cands) > 0 {
		return cands[0], nil
	}
	if or == q.filter.Root() && branch.Kind == query.KindText {
		return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans,
			"error processing query: planner returned error :: caused by :: Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to be indexed as well.")
	}
	return nil, noQuerySolutions()
}

// conjuncts are the clauses of n, an $and, or n itself.
func conjuncts(n *query.Node) []*query.Node {
	if n.Kind == query.KindAnd {
		return n.Children
	}
	return []*query.Node{n}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// equalityPrefix are the values the filter pins fields to by equality
// among its top-level clauses (a text or 2dsphere index's fields before
// its special one), and the same as explain shows them; ok is false when
// a field is not pinned. An equality to an array pins a field only when
// arrays is set: a text index's prefix, which holds no arrays, takes the
// array as its value and so reads no keys (MongoDB's planner builds the
// text prefix from the equality's value; jstests fts_trailing_fields.js).
func equalityPrefix(f *query.Filter, fields []string, arrays bool) (vals []bson.RawValue, shown bson.D, ok bool) {
	return equalityPrefixOf(conjuncts(f.Root()), fields, arrays)
}

// indexPrefixOf is equalityPrefixOf for the prefix fields of ix (a text
// or geo index's fields before its special one): a value holding a string
// pins its field only under ix's collation (a text index has none), as
// MongoDB's planner bounds it (QueryPlannerIXSelect::_compatible).
func indexPrefixOf(ix *Index, f *query.Filter, clauses []*query.Node, fields []string, arrays bool) (vals []bson.RawValue, shown bson.D, ok bool) {
	vals, shown, ok = equalityPrefixOf(clauses, fields, arrays)
	if !ok || !collation.Equal(f.Collator(), ix.coll) && slices.ContainsFunc(vals, collation.Collatable) {
		return nil, nil, false
	}
	return vals, shown, true
}

// equalityPrefixOf is equalityPrefix over the clauses of an $and, read
// once normalized as MongoDB's planner reads them ({a: {$in: [1]}} and
// {$and: [{a: 1}]} pin a to 1; query.NormalizedConjuncts).
func equalityPrefixOf(clauses []*query.Node, fields []string, arrays bool) (vals []bson.RawValue, shown bson.D, ok bool) {
	if len(fields) == 0 {
		return nil, nil, true
	}
	clauses = query.NormalizedConjuncts(clauses)
	for _, path := range fields {
		found := false
		for _, n := range clauses {
			if n.Kind == query.KindEq && n.Path == path && (arrays || n.Value.Type != bson.TypeArray) && n.Value.Type != bson.TypeRegex {
				vals = append(vals, n.Value)
				shown = append(shown, bson.E{Key: path, Value: n.Value})
				found = true
				break
			}
		}
		if !found {
			return nil, nil, false
		}
	}
	return vals, shown, true
}

// textSource reads a $text plan: it gathers the documents of every
// term's keys with their summed scores, then yields each document once,
// in the order the terms met them, with its score.
type textSource struct {
	r         storage.Reader
	p         *planner.Plan
	collID    uint32
	prefix    []byte
	prefixLen int
	stats     *OpStats
	ctx       context.Context
	closer    func() error

	loaded bool
	ids    []string
	scores map[string]float64
	// keys is the first index key each document was found by.
	keys map[string][]byte
	// seen, in a union (unionSource.text), is the union's set of the
	// documents yielded, which the text search adds its own to; branch is
	// the $or's branch holding the $text, which the documents the search
	// yields match (MongoDB's TEXT_MATCH and the branch's filter below the
	// OR stage): one that fails it may still come from another branch,
	// without a score.
	seen   map[string]struct{}
	branch *query.Filter
	ix     *Index
	docBuf []byte // see docOf
	next   int
	score  float64
	// recordIDs: the documents carry their record ids (giveRecordIDs).
	recordIDs bool
}

func newTextSource(ctx context.Context, r storage.Reader, c *Collection, p *planner.Plan, stats *OpStats, closer func() error) *textSource {
	ix := indexOf(p)
	return &textSource{r: r, p: p, collID: c.ID, prefix: indexPrefix(c.ID, ix.ID), prefixLen: len(ix.text.spec.Prefix),
		stats: stats, ctx: ctx, closer: closer, ix: ix}
}

func (s *textSource) load() error {
	s.loaded = true
	s.scores, s.keys = map[string]float64{}, map[string][]byte{}
	return scanEntries(s.ctx, s.r, s.prefix, s.p.Intervals, s.stats, func(key, value []byte) {
		id := string(entryID(value))
		if _, seen := s.scores[id]; !seen {
			s.ids = append(s.ids, id)
			s.keys[id] = bytes.Clone(key)
		}
		s.scores[id] += entryScore(value, s.prefixLen)
	})
}

func (s *textSource) Next() (bson.Raw, error) {
	if !s.loaded {
		if err := s.load(); err != nil {
			return nil, err
		}
	}
	for s.next < len(s.ids) {
		id := s.ids[s.next]
		s.next++
		doc, found, err := getDoc(s.r, docKeyFromEncodedID(s.collID, []byte(id)), &s.docBuf)
		if err != nil {
			return nil, err
		}
		if found {
			s.stats.DocsExamined++
			if s.branch != nil {
				ok, _, err := s.branch.MatchErr(doc)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			s.score = s.scores[id]
			if s.seen != nil {
				s.seen[id] = struct{}{}
			}
			return doc, nil
		}
	}
	return nil, nil
}

// recheckLatest drops a document changed since the snapshot that no
// longer holds the key the search found it by: MongoDB fetches a document
// whose key was read before a yield only if the key is still among the
// document's (WorkingSetCommon::fetch), and its text match does not check
// the search's terms again.
func (s *textSource) recheckLatest(r *recheck, doc bson.Raw) (bson.Raw, error) {
	now, err := r.latest(doc)
	if now == nil || err != nil || bytes.Equal(now, doc) {
		return now, err
	}
	id := s.ids[s.next-1]
	keys, _, err := s.ix.keys(now)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if bytes.Equal(indexEntryKey(s.collID, s.ix, k.enc, []byte(id)), s.keys[id]) {
			return now, nil
		}
	}
	return nil, nil
}

// giveRecordIDs makes the documents carry their record ids, the encoded
// _ids the index entries name: MongoDB's TEXT_OR gathers record ids, so
// every document of a $text search has one ({$meta: "recordId"},
// showRecordId).
func (s *textSource) giveRecordIDs() { s.recordIDs = true }

// Meta carries the score of the document Next returned last, and its
// record id when asked (giveRecordIDs).
func (s *textSource) Meta() docsrc.Meta {
	m := docsrc.Meta{TextScore: s.score, HasTextScore: true}
	if s.recordIDs && s.next > 0 {
		m.RecordID = []byte(s.ids[s.next-1])
	}
	return m
}

func (s *textSource) Close() error {
	if s.closer != nil {
		return s.closer()
	}
	return nil
}
