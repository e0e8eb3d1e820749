package aggregate

import (
	"bytes"
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/values"
)

// groupStage is $group: documents whose _id expression evaluates to equal
// values (as MongoDB compares them; missing counts as null) fold into one
// output document per group, {_id, <accumulated fields>}, in the order the
// groups were first seen.
type groupStage struct {
	id   *expr.Expr
	accs []*accSpec
	// key, when set, replaces id: it computes the group key of a document
	// ($bucket).
	key func(doc bson.Raw, rt *runtime) (bson.RawValue, error)
	// sortByID orders the output by _id ($bucket).
	sortByID bool
	noID     bool // $count: the output has no _id
	// figures is set on a $group as written, whose memory and spills
	// explain reports; the groups of $bucket, $sortByCount and $count,
	// which Folio explains as written, report none.
	figures bool
}

func (p *parser) parseGroup(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.GroupSpecNotObject, "a group's fields must be specified in an object")
	}
	g := &groupStage{figures: true}
	doingMerge := false
	for _, f := range fieldsOf(arg.Value) {
		if f.key == "$doingMerge" {
			if err := checkDoingMerge(f.val); err != nil {
				return nil, err
			}
			doingMerge = true
			continue
		}
		if f.key == "_id" {
			if g.id != nil {
				return nil, mongoerr.New(mongoerr.GroupDuplicateID, "a group's _id may only be specified once")
			}
			e, err := p.groupID(f.val)
			if err != nil {
				return nil, err
			}
			g.id = e
			g.key = singleFieldIDKey(f.val, e)
			continue
		}
		acc, err := p.parseAccumulationStatement(f.key, f.val)
		if err != nil {
			return nil, err
		}
		g.accs = append(g.accs, acc)
	}
	if g.id == nil {
		return nil, mongoerr.New(mongoerr.GroupMissingID, "a group specification must include an _id")
	}
	if doingMerge {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support $group's $doingMerge")
	}
	return g, nil
}

// checkDoingMerge checks $group's $doingMerge as MongoDB reads it
// (DocumentSourceGroupBase::initializeSelf): a boolean (BSONElement::Bool,
// 13111), true (17030). With it, the stage merges the partial results of
// the $groups a mongos split it from, each accumulator reading its input
// as the partial state MongoDB's shards write; Folio keeps no such states,
// so a true $doingMerge is refused (NotImplemented) once the rest of the
// specification has been checked, rather than read as an output field.
func checkDoingMerge(v bson.RawValue) error {
	if v.Type != bson.TypeBoolean {
		return mongoerr.New(mongoerr.BSONElementWrongType, "wrong type for field ($doingMerge) %s != bool", values.TypeName(v.Type))
	}
	if !v.Boolean() {
		return mongoerr.New(mongoerr.GroupDoingMergeNotTrue, "$doingMerge should be true if present")
	}
	return nil
}

// groupID compiles the _id of $group. An object _id is a document of
// expressions (its field names may not be operators unless it is one),
// none of them a number or a boolean, which would read as a projection's
// inclusion (17390), then compiled as an object literal, whose field names
// are checked as such (a dotted one fails with 16412; parseIdExpression).
func (p *parser) groupID(v bson.RawValue) (*expr.Expr, error) {
	if v.Type == bson.TypeEmbeddedDocument && !isExpressionObject(v) {
		for _, f := range fieldsOf(v.Value) {
			if values.IsNumber(f.val.Type) || f.val.Type == bson.TypeBoolean {
				return nil, mongoerr.New(mongoerr.GroupInclusionStyle, "$group does not support inclusion-style expressions")
			}
		}
	}
	return expr.Compile(v, p.scope)
}

// singleFieldIDKey is the group key of an _id that is an object literal of
// one field, {name: <expression>}, nil for any other _id. MongoDB groups on
// the values of an object _id's expressions and builds the object only for
// the output; a missing value is null when there is a single expression, so
// that {_id: {a: "$a"}} gives {a: null} for a document without a
// (DocumentSourceGroup::computeId, groupMissing.js "Bug, see SERVER-21992"),
// while with several fields a missing one is left out of the _id.
func singleFieldIDKey(v bson.RawValue, compiled *expr.Expr) func(bson.Raw, *runtime) (bson.RawValue, error) {
	if v.Type != bson.TypeEmbeddedDocument || isExpressionObject(v) {
		return nil
	}
	fs := fieldsOf(v.Value)
	if len(fs) != 1 {
		return nil
	}
	return func(doc bson.Raw, rt *runtime) (bson.RawValue, error) {
		id, err := compiled.Eval(rt.ectx, doc)
		if err != nil || id.Type != bson.TypeEmbeddedDocument {
			return id, err
		}
		if _, err := id.Document().LookupErr(fs[0].key); err == nil {
			return id, nil
		}
		return docValue(buildDoc([]field{{fs[0].key, null}})), nil
	}
}

// group is one group being accumulated.
type group struct {
	key  string // keyenc of id
	id   bson.RawValue
	accs []accumulator
}

// groupOverhead is the memory of a group beyond its key and _id bytes:
// the group, its map entry, its place in the order, the rounding of its
// allocations; accumulatorOverhead is that of each accumulator, and
// keptValueOverhead that of each value a $push-like accumulator keeps
// (its RawValue with append's slack, the rounding of its copy), and
// keptSetValueOverhead that of a value $addToSet keeps (with its key in
// the set). Measured on Go 1.26; TestGroupAccountingMatchesHeap keeps
// them within 1.5x of the heap.
const (
	groupOverhead        = 160
	accumulatorOverhead  = 72
	keptValueOverhead    = 52
	keptSetValueOverhead = 104
)

// newGroup starts the group whose _id is id, with accumulators for accs.
func newGroup(accs []*accSpec, key string, id bson.RawValue, rt *runtime) (*group, error) {
	grp := &group{key: key, id: id, accs: make([]accumulator, len(accs))}
	for i, a := range accs {
		var err error
		if grp.accs[i], err = a.newAccumulator(id, rt); err != nil {
			return nil, err
		}
	}
	return grp, nil
}

// groupDoc is the output document of a finished group: its _id (unless
// withID is false) and the result of each of accs.
func groupDoc(accs []*accSpec, grp *group, withID bool) bson.Raw {
	fs := make([]field, 0, len(accs)+1)
	if withID {
		fs = append(fs, field{"_id", grp.id})
	}
	for i, a := range accs {
		fs = append(fs, field{a.field, grp.accs[i].result()})
	}
	return buildDoc(fs)
}

func (g *groupStage) run(in Source, rt *runtime) Source {
	return &groupSource{in: in, g: g, rt: rt}
}

// groupSource yields the groups of a $group. While the group table fits
// in the memory limit, the groups come out in the order they were first
// seen. Past the limit MongoDB fails with
// QueryExceededMemoryLimitNoDiskUseAllowed unless allowDiskUse is set; with
// it, the table's partial groups are written through the sorter as a run
// sorted by group key and the table starts afresh. The runs and the last
// table are then merged by key, the partial accumulator states of one
// group combined in arrival order, and the groups come out in key order.
// The table's memory is the sorter's Account (so it counts against the
// process-wide budget too); the run file is removed when the source is
// closed.
type groupSource struct {
	in    Source
	g     *groupStage
	rt    *runtime
	done  bool
	out   SliceSource // the groups, when no run was spilled
	sort  *sorter.Sorter
	merge *sorter.Iterator // the merged runs, when some were spilled
	fig   groupFigures
}

// groupFigures are what explain reports of a $group's run, as MongoDB's
// DocumentSourceGroupBase::serialize does at executionStats: per output
// field, the most memory its accumulators held at once (Folio's
// accounting: each accumulator's overhead and the values it keeps,
// sampled when the table spills and when the input ends); the size of
// the documents it returned; its spills, the bytes of the spill file,
// the memory the spilled groups held and how many there were.
type groupFigures struct {
	accPeak         []int64
	outBytes        int64
	spills          int64
	spilledBytes    int64
	spilledEstimate int64
	spilledRecords  int64
}

// explainFigures are the figures explain lists after the $group's
// specification, in DocumentSourceGroupBase::serialize's order; nil for
// the group of a stage Folio explains as written.
func (s *groupSource) explainFigures() bson.D {
	if !s.g.figures {
		return nil
	}
	mem := make(bson.D, len(s.g.accs))
	for i, a := range s.g.accs {
		var peak int64
		if i < len(s.fig.accPeak) {
			peak = s.fig.accPeak[i]
		}
		mem[i] = bson.E{Key: a.field, Value: peak}
	}
	f := &s.fig
	return bson.D{
		{Key: "maxAccumulatorMemoryUsageBytes", Value: mem},
		{Key: "totalOutputDataSizeBytes", Value: f.outBytes},
		{Key: "usedDisk", Value: f.spills > 0},
		{Key: "spills", Value: f.spills},
		{Key: "spilledDataStorageSize", Value: f.spilledBytes},
		{Key: "numBytesSpilledEstimate", Value: f.spilledEstimate},
		{Key: "spilledRecords", Value: f.spilledRecords},
	}
}

// notePeaks records the memory t's accumulators hold as peaks.
func (f *groupFigures) notePeaks(t *groupTable) {
	if f.accPeak == nil {
		f.accPeak = make([]int64, len(t.accMem))
	}
	for i, m := range t.accMem {
		f.accPeak[i] = max(f.accPeak[i], m)
	}
}

func (s *groupSource) Next() (bson.Raw, error) {
	if !s.done {
		s.done = true
		if err := s.compute(); err != nil {
			s.sort.Close()
			return nil, err
		}
	}
	if s.merge != nil {
		return s.nextMerged()
	}
	return s.out.Next()
}

func (s *groupSource) Close() error {
	if s.sort != nil {
		s.sort.Close()
	}
	s.out.Close()
	s.merge = nil
	return s.in.Close()
}

func (s *groupSource) compute() error {
	g, rt := s.g, s.rt
	s.sort = sorter.New(sorter.Options{MaxMemory: rt.groupMemoryLimit(), AllowDisk: rt.opts.AllowDiskUse, TempDir: rt.opts.TempDir, Budget: rt.opts.Budget})
	acct := s.sort.Account()
	t := newGroupTable(g)
	for {
		doc, err := s.in.Next()
		if err != nil {
			return err
		}
		if doc == nil {
			break
		}
		mem, err := t.add(doc, rt)
		if err != nil {
			return err
		}
		if !acct.Grow(mem) {
			if !rt.opts.AllowDiskUse {
				return rt.overMemory("$group")
			}
			s.fig.notePeaks(t)
			s.fig.spilledEstimate += acct.Used()
			s.fig.spilledRecords += int64(len(t.order))
			if err := s.sort.SpillRun(groupRecords(t.order)); err != nil {
				return err
			}
			s.fig.spills++
			s.fig.spilledBytes = s.sort.SpilledBytes()
			t = newGroupTable(g)
		}
	}
	s.fig.notePeaks(t)
	order := t.order
	if s.sort.Spilled() == 0 {
		if g.sortByID {
			slices.SortStableFunc(order, func(a, b *group) int { return rt.opts.Collator.Compare(a.id, b.id) })
		}
		s.out.Docs = make([]bson.Raw, len(order))
		for i, grp := range order {
			s.out.Docs[i] = groupDoc(g.accs, grp, !g.noID)
			s.fig.outBytes += int64(len(s.out.Docs[i]))
		}
		return nil
	}
	for _, r := range groupRecords(order) {
		s.sort.Put(r)
	}
	var err error
	s.merge, err = s.sort.Iterate()
	return err
}

// groupTable holds the groups of a $group in the order first seen, by
// keyenc of their _id.
type groupTable struct {
	g     *groupStage
	index map[string]*group
	order []*group
	// perValue is, per accumulator keeping every input value, the memory
	// each costs beyond its bytes (0 for the others); keeps says it may
	// keep an input value.
	perValue []int64
	keeps    []bool
	// accMem is, per accumulator, the memory of the table's accumulators
	// of that output field: their overhead, the values they keep, the
	// states of $accumulator.
	accMem []int64
}

func newGroupTable(g *groupStage) *groupTable {
	t := &groupTable{g: g, index: map[string]*group{}, perValue: make([]int64, len(g.accs)), keeps: make([]bool, len(g.accs)), accMem: make([]int64, len(g.accs))}
	for i, a := range g.accs {
		switch {
		case a.op == "$addToSet":
			t.perValue[i] = keptSetValueOverhead
		case growsWithInput(a.op):
			t.perValue[i] = keptValueOverhead
		}
		switch a.op {
		case "$sum", "$avg", "$stdDevPop", "$stdDevSamp", "$count", "$median", "$percentile":
		default:
			t.keeps[i] = true
		}
	}
	return t
}

// add folds doc into its group and returns the memory the table grew by:
// a new group's key, _id and overhead, the values kept by the
// accumulators that keep every input, and the change in size of each
// $accumulator's state (MongoDB's AccumulatorJs counts its state's size
// after each call, so a group of large JavaScript states runs past the
// limit); a state that shrank gives a negative share. Values an accumulator may keep, and
// a new group's _id, are copied out of doc so that the table never holds
// on to whole input documents it does not account for.
func (t *groupTable) add(doc bson.Raw, rt *runtime) (int64, error) {
	g := t.g
	var id bson.RawValue
	var err error
	if g.key != nil {
		id, err = g.key(doc, rt)
	} else {
		id, err = g.id.Eval(rt.ectx, doc)
	}
	if err != nil {
		return 0, err
	}
	id = nullIfMissing(id)
	k := string(rt.opts.Collator.ValueKey(id))
	grp := t.index[k]
	var mem int64
	if grp == nil {
		id.Value = bytes.Clone(id.Value)
		if grp, err = newGroup(g.accs, k, id, rt); err != nil {
			return 0, err
		}
		t.index[k] = grp
		t.order = append(t.order, grp)
		mem += int64(len(k)+len(id.Value)) + groupOverhead + int64(len(g.accs))*accumulatorOverhead
		for i, a := range g.accs {
			t.accMem[i] += accumulatorOverhead
			if a.js != nil {
				js := grp.accs[i].(*jsAcc).size()
				mem += js
				t.accMem[i] += js
			}
		}
	}
	for i, a := range g.accs {
		var v bson.RawValue
		if a.arg != nil {
			if v, err = a.arg.Eval(rt.ectx, doc); err != nil {
				return 0, err
			}
		}
		if t.keeps[i] {
			v.Value = bytes.Clone(v.Value)
		}
		var before int64
		if a.js != nil {
			before = grp.accs[i].(*jsAcc).size()
		}
		if err := grp.accs[i].add(doc, v); err != nil {
			return 0, err
		}
		var grew int64
		switch {
		case t.perValue[i] > 0:
			grew = int64(len(v.Value)) + t.perValue[i]
		case a.js != nil:
			grew = grp.accs[i].(*jsAcc).size() - before
		}
		mem += grew
		t.accMem[i] += grew
	}
	return mem, nil
}

// groupRecords encodes partial groups as spill entries keyed by group
// key: {_id, s: [accumulator states]}.
func groupRecords(groups []*group) []sorter.Entry {
	recs := make([]sorter.Entry, len(groups))
	for i, grp := range groups {
		states := make([]bson.RawValue, len(grp.accs))
		for j, acc := range grp.accs {
			states[j] = acc.state()
		}
		recs[i] = sorter.Entry{Key: []byte(grp.key), Doc: buildDoc([]field{{"_id", grp.id}, {"s", buildArray(states)}})}
	}
	return recs
}

// nextMerged combines the partial groups of the next key. Its _id is the
// one of the earliest run, the value first seen as in memory; keyenc
// order is MongoDB's comparison order, so $bucket's output stays sorted by
// _id.
func (s *groupSource) nextMerged() (bson.Raw, error) {
	rec, ok, err := s.merge.Next()
	if !ok || err != nil {
		s.sort.Close() // the runs are read: no need to wait for Close
		return nil, err
	}
	grp, err := newGroup(s.g.accs, string(rec.Key), rec.Doc.Lookup("_id"), s.rt)
	if err != nil {
		return nil, err
	}
	for {
		if err := s.mergeStates(grp, rec.Doc); err != nil {
			return nil, err
		}
		if next, ok := s.merge.Peek(); !ok || string(next.Key) != grp.key {
			doc := groupDoc(s.g.accs, grp, !s.g.noID)
			s.fig.outBytes += int64(len(doc))
			return doc, nil
		}
		if rec, _, err = s.merge.Next(); err != nil {
			return nil, err
		}
	}
}

// mergeStates folds the accumulator states of a spilled partial group
// into grp.
func (s *groupSource) mergeStates(grp *group, rec bson.Raw) error {
	states := arrayValues(rec.Lookup("s"))
	if len(states) != len(grp.accs) {
		return mongoerr.New(mongoerr.InternalError, "corrupt $group spill file")
	}
	for i, st := range states {
		if err := grp.accs[i].merge(st); err != nil {
			return err
		}
	}
	return nil
}

// growsWithInput reports the accumulators whose state grows with every
// document.
func growsWithInput(op string) bool {
	switch op {
	case "$push", "$addToSet", "$mergeObjects", "$lastN", "$median", "$percentile", "$_internalJsReduce":
		return true
	}
	return false
}

// parseCount reads {$count: "name"}: a $group counting every document into
// name, without _id. The name is a string (40156), not empty (40157), with
// neither a leading '$', a null byte nor a '.', and not "_id"
// (DocumentSourceCount::createFromBson).
func parseCount(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeString {
		return nil, mongoerr.New(mongoerr.CountFieldNotString, "the count field must be a non-empty string")
	}
	name := arg.StringValue()
	switch {
	case name == "":
		return nil, mongoerr.New(mongoerr.CountFieldEmpty, "the count field must be a non-empty string")
	case name[0] == '$':
		return nil, mongoerr.New(mongoerr.CountFieldDollarPrefixed, "the count field cannot be a $-prefixed path")
	case strings.Contains(name, "\x00"):
		return nil, mongoerr.New(mongoerr.CountFieldNullByte, "the count field cannot contain a null byte")
	case strings.Contains(name, "."):
		return nil, mongoerr.New(mongoerr.CountFieldDotted, "the count field cannot contain '.'")
	case name == "_id":
		// MongoDB builds {$group: {_id: null, <name>: {$sum: 1}}}, which
		// then gives _id twice.
		return nil, mongoerr.New(mongoerr.GroupDuplicateID, "a group's _id may only be specified once")
	}
	return &groupStage{
		key:  func(bson.Raw, *runtime) (bson.RawValue, error) { return null, nil },
		accs: []*accSpec{{field: name, op: "$count"}},
		noID: true,
	}, nil
}

// parseSortByCount reads {$sortByCount: expr}: a $group by the expression
// counting into "count", then a $sort by count descending. The expression
// is a '$'-prefixed path (else 40148) or an object whose first name starts
// with '$' (else 40147); any other type fails with 40149.
func (p *parser) parseSortByCount(arg bson.RawValue) (stage, error) {
	switch arg.Type {
	case bson.TypeString:
		if !strings.HasPrefix(arg.StringValue(), "$") {
			return nil, mongoerr.New(mongoerr.SortByCountInvalidPath, "the sortByCount field must be defined as a $-prefixed path or an expression inside an object")
		}
	case bson.TypeEmbeddedDocument:
		if !isExpressionObject(arg) {
			return nil, mongoerr.New(mongoerr.SortByCountInvalidObject, "the sortByCount field must be defined as a $-prefixed path or an expression inside an object")
		}
	default:
		return nil, mongoerr.New(mongoerr.SortByCountInvalidType, "the sortByCount field must be specified as a string or as an object")
	}
	id, err := expr.Compile(arg, p.scope)
	if err != nil {
		return nil, err
	}
	sort, err := parseSort(docValue(buildDoc([]field{{"count", values.Int32Value(-1)}})))
	if err != nil {
		return nil, err
	}
	return stages{
		&groupStage{id: id, accs: []*accSpec{{field: "count", op: "$sum", arg: constExpr(values.Int32Value(1))}}},
		sort,
	}, nil
}

// stages runs several stages as one (stages that desugar into others).
type stages []stage

func (ss stages) run(in Source, rt *runtime) Source { return runStages(ss, in, rt) }

// constExpr compiles a constant.
func constExpr(v bson.RawValue) *expr.Expr {
	e, err := expr.Compile(docValue(buildDoc([]field{{"$literal", v}})), expr.NewScope())
	if err != nil {
		panic(err) // a literal always compiles
	}
	return e
}

// parseOutput reads the output of $bucket and $bucketAuto: accumulators,
// {count: {$sum: 1}} when absent.
func (p *parser) parseOutput(v bson.RawValue, present bool, code mongoerr.Code, stageName string) ([]*accSpec, error) {
	if !present {
		return []*accSpec{{field: "count", op: "$sum", arg: constExpr(values.Int32Value(1))}}, nil
	}
	if v.Type != bson.TypeEmbeddedDocument {
		// $bucket's message ends with a period, $bucketAuto's not.
		msg := "The %s 'output' field must be an object, but found type: %s"
		if stageName == "$bucket" {
			msg += "."
		}
		return nil, mongoerr.New(code, msg, stageName, typeName(v))
	}
	var accs []*accSpec
	for _, f := range fieldsOf(v.Value) {
		a, err := p.parseAccumulationStatement(f.key, f.val)
		if err != nil {
			return nil, err
		}
		accs = append(accs, a)
	}
	return accs, nil
}

// groupByExpr compiles the groupBy of $bucket and $bucketAuto: a $-path or
// an operator expression.
func (p *parser) groupByExpr(v bson.RawValue, code mongoerr.Code, stageName string) (*expr.Expr, error) {
	ok := (v.Type == bson.TypeString && strings.HasPrefix(v.StringValue(), "$")) ||
		(v.Type == bson.TypeEmbeddedDocument && isExpressionObject(v))
	if !ok {
		if stageName == "$bucketAuto" {
			return nil, mongoerr.New(code, "The $bucketAuto 'groupBy' field must be defined as a $-prefixed path or an expression object, but found: %s", v)
		}
		return nil, mongoerr.New(code, "The %s 'groupBy' field must be defined as a $-prefixed path or an expression, but found: %s.", stageName, v)
	}
	return expr.Compile(v, p.scope)
}

// parseBucket reads $bucket: documents are grouped by which range
// [boundaries[i], boundaries[i+1]) their groupBy value falls in, with _id
// the lower boundary; values outside every range go to the default bucket
// (an error without one). Buckets are output in _id order.
func (p *parser) parseBucket(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.BucketSpecNotObject, "Argument to $bucket stage must be an object, but found type: %s.", typeName(arg))
	}
	var groupBy, bounds, def, output bson.RawValue
	haveOutput := false
	coll := p.opts.Collator
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "groupBy":
			groupBy = f.val
		case "boundaries":
			bounds = f.val
		case "default":
			def = f.val
		case "output":
			output, haveOutput = f.val, true
		default:
			return nil, mongoerr.New(mongoerr.BucketUnknownOption, "Unrecognized option to $bucket: %s.", f.key)
		}
	}
	if groupBy.Type == 0 || bounds.Type == 0 {
		return nil, mongoerr.New(mongoerr.BucketMissingRequired, "$bucket requires 'groupBy' and 'boundaries' to be specified.")
	}
	gb, err := p.groupByExpr(groupBy, mongoerr.BucketGroupByInvalid, "$bucket")
	if err != nil {
		return nil, err
	}
	if bounds.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.BucketBoundariesNotArray, "The $bucket 'boundaries' field must be an array, but found type: %s.", typeName(bounds))
	}
	var bs []bson.RawValue
	for i, b := range arrayValues(bounds) {
		e, err := expr.Compile(b, p.scope)
		if err != nil {
			return nil, err
		}
		if !e.IsConstant() {
			return nil, mongoerr.New(mongoerr.BucketBoundaryNotConstant, "The $bucket 'boundaries' field must be an array of constant values, but found value: %s.", b)
		}
		c := e.Constant()
		if i > 0 {
			prev := bs[i-1]
			if values.Rank(prev.Type) != values.Rank(c.Type) {
				return nil, mongoerr.New(mongoerr.BucketBoundaryTypeMismatch,
					"All values in the the 'boundaries' option to $bucket must have the same type. Found conflicting types %s and %s.",
					typeName(prev), typeName(c))
			}
			if coll.Compare(prev, c) >= 0 {
				return nil, mongoerr.New(mongoerr.BucketBoundariesUnsorted,
					"The 'boundaries' option to $bucket must be sorted, but elements %d and %d are not in ascending order (%s is not less than %s).",
					i-1, i, prev, c)
			}
		}
		bs = append(bs, c)
	}
	if len(bs) < 2 {
		return nil, mongoerr.New(mongoerr.BucketTooFewBoundaries, "The $bucket 'boundaries' field must have at least 2 values, but found %d value(s).", len(bs))
	}
	var defVal bson.RawValue
	if def.Type != 0 {
		e, err := expr.Compile(def, p.scope)
		if err != nil {
			return nil, err
		}
		if !e.IsConstant() {
			return nil, mongoerr.New(mongoerr.BucketDefaultNotConstant, "The $bucket 'default' field must be a constant expression, but found: %s.", def)
		}
		defVal = e.Constant()
		if values.Rank(defVal.Type) == values.Rank(bs[0].Type) &&
			coll.Compare(defVal, bs[0]) >= 0 && coll.Compare(defVal, bs[len(bs)-1]) < 0 {
			return nil, mongoerr.New(mongoerr.BucketDefaultWithinBoundaries,
				"The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.")
		}
	}
	accs, err := p.parseOutput(output, haveOutput, mongoerr.BucketOutputNotObject, "$bucket")
	if err != nil {
		return nil, err
	}
	key := func(doc bson.Raw, rt *runtime) (bson.RawValue, error) {
		v, err := gb.Eval(rt.ectx, doc)
		if err != nil {
			return missing, err
		}
		v = nullIfMissing(v)
		if coll.Compare(v, bs[0]) >= 0 && coll.Compare(v, bs[len(bs)-1]) < 0 {
			i, _ := slices.BinarySearchFunc(bs, v, coll.Compare)
			if i == len(bs) || coll.Compare(bs[i], v) != 0 {
				i--
			}
			return bs[i], nil
		}
		if defVal.Type == 0 {
			return missing, mongoerr.New(mongoerr.SwitchNoMatchingBranch,
				"$switch could not find a matching branch for an input, and no default was specified.")
		}
		return defVal, nil
	}
	return &groupStage{key: key, accs: accs, sortByID: true}, nil
}

// bucketAutoStage is $bucketAuto: the documents sorted by their groupBy
// value are cut into at most buckets buckets of about equal size, never
// separating equal values; each bucket's _id is {min, max}, max being the
// next bucket's min (or, for the last one, its largest value). With a
// granularity, the boundaries are values of its series (see cutGranular).
type bucketAutoStage struct {
	groupBy     *expr.Expr
	buckets     int64
	accs        []*accSpec
	granularity *granularity
}

func (p *parser) parseBucketAuto(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.BucketAutoSpecNotObject, "The argument to $bucketAuto must be an object, but found type: %s", typeName(arg))
	}
	// As DocumentSourceBucketAuto::createFromBson, each argument is
	// checked where it stands, and the required ones after all of them.
	s := &bucketAutoStage{}
	for _, f := range fieldsOf(arg.Value) {
		var err error
		switch f.key {
		case "groupBy":
			s.groupBy, err = p.groupByExpr(f.val, mongoerr.BucketAutoGroupByInvalid, "$bucketAuto")
		case "buckets":
			s.buckets, err = bucketAutoBuckets(f.val)
		case "output":
			// An empty output counts, as no output does ($bucket's gives only _id).
			s.accs, err = p.parseOutput(f.val, f.val.Type != bson.TypeEmbeddedDocument || len(fieldsOf(f.val.Value)) > 0, mongoerr.BucketAutoOutputNotObject, "$bucketAuto")
		case "granularity":
			s.granularity, err = parseGranularity(f.val)
		default:
			err = mongoerr.New(mongoerr.BucketAutoUnknownOption, "Unrecognized option to $bucketAuto: %s", f.key)
		}
		if err != nil {
			return nil, err
		}
	}
	if s.groupBy == nil || s.buckets == 0 {
		return nil, mongoerr.New(mongoerr.BucketAutoMissingRequired, "$bucketAuto requires 'groupBy' and 'buckets' to be specified")
	}
	if s.accs == nil {
		s.accs, _ = p.parseOutput(bson.RawValue{}, false, mongoerr.BucketAutoOutputNotObject, "$bucketAuto")
	}
	// A bucket has no group key for an initializer to read: MongoDB
	// requires it constant.
	for _, a := range s.accs {
		if init := a.initializer(); init != nil && !init.IsConstant() {
			return nil, mongoerr.New(mongoerr.BucketAutoInitializerNotConstant, "Can't refer to the group key in $bucketAuto")
		}
	}
	return s, nil
}

// bucketAutoBuckets reads $bucketAuto's buckets: a number (40241) that
// is a whole 32-bit integer (40242, Value::integral; the message shows the
// number as a double, as MongoDB streams coerceToDouble) above 0 (40243).
func bucketAutoBuckets(v bson.RawValue) (int64, error) {
	if !values.IsNumber(v.Type) {
		return 0, mongoerr.New(mongoerr.BucketAutoBucketsNotNumber, "The $bucketAuto 'buckets' field must be a numeric value, but found type: %s", typeName(v))
	}
	n, ok := values.Int64(v)
	if !ok || n > math.MaxInt32 || n < math.MinInt32 {
		f, _ := values.Float64(v)
		return 0, mongoerr.New(mongoerr.BucketAutoBucketsNotInt32, "The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found %s", values.ValueString(values.DoubleValue(f)))
	}
	if n <= 0 {
		return 0, mongoerr.New(mongoerr.BucketAutoBucketsNotPositive, "The $bucketAuto 'buckets' field must be greater than 0, but found: %d", n)
	}
	return n, nil
}

func (s *bucketAutoStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) { return s.compute(in, rt) }}
}

// autoBucket is one bucket of $bucketAuto: how many documents it takes and
// its _id.
type autoBucket struct {
	n        int64
	min, max bson.RawValue
}

// compute sorts the documents by groupBy value (records {v: value, d:
// document} keyed by keyenc, which orders as MongoDB compares, stable so
// equal values keep arrival order), spilling sorted runs past the memory
// limit with allowDiskUse as $group does. A first pass over the sorted
// documents cuts the buckets, a second accumulates them, each document
// with its metadata, which the sort keeps ({$meta: ...} in an output
// accumulator reads the document's own, as MongoDB's sorter keeps a
// Document's metadata). The runs are removed before the output is
// returned.
func (s *bucketAutoStage) compute(in Source, rt *runtime) ([]bson.Raw, error) {
	sort := sorter.New(sorter.Options{
		MaxMemory: rt.memoryLimit(), AllowDisk: rt.opts.AllowDiskUse, TempDir: rt.opts.TempDir, Budget: rt.opts.Budget,
		OverMemory: func(int64) error { return rt.overMemory("$bucketAuto") },
	})
	defer sort.Close()
	var total int64
	for {
		doc, err := in.Next()
		if err != nil {
			return nil, err
		}
		if doc == nil {
			break
		}
		k, err := s.groupBy.Eval(rt.ectx, doc)
		if err != nil {
			return nil, err
		}
		k = nullIfMissing(k)
		if s.granularity != nil {
			if err := s.granularity.checkKey(k); err != nil {
				return nil, err
			}
		}
		if err := sort.Add(sorter.Entry{Key: rt.opts.Collator.ValueKey(k), Doc: buildDoc([]field{{"v", k}, {"d", docValue(doc)}}), Meta: docsrc.MetaOf(in)}); err != nil {
			return nil, err
		}
		total++
	}
	if total == 0 {
		return nil, nil
	}
	cut := s.cut
	if s.granularity != nil {
		cut = s.cutGranular
	}
	buckets, err := cut(sort, total, rt)
	if err != nil {
		return nil, err
	}
	next, err := sortedPass(sort, rt)
	if err != nil {
		return nil, err
	}
	out := make([]bson.Raw, 0, len(buckets))
	for _, b := range buckets {
		id := docValue(buildDoc([]field{{"min", b.min}, {"max", b.max}}))
		grp, err := newGroup(s.accs, "", id, rt)
		if err != nil {
			return nil, err
		}
		for range b.n {
			rec, _, err := next()
			if err != nil {
				return nil, err
			}
			doc := rec.Doc.Lookup("d").Document()
			*rt.ectx.Meta = rec.Meta
			for i, a := range s.accs {
				var v bson.RawValue
				if a.arg != nil {
					if v, err = a.arg.Eval(rt.ectx, doc); err != nil {
						return nil, err
					}
				}
				if err := grp.accs[i].add(doc, v); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, groupDoc(s.accs, grp, true))
	}
	return out, nil
}

// sortedPass reads the sorted records from the first, stopping with the
// operation's interruption: $bucketAuto reads them twice after its input
// ends, past the guard on its input.
func sortedPass(sort *sorter.Sorter, rt *runtime) (func() (sorter.Entry, bool, error), error) {
	it, err := sort.Iterate()
	if err != nil {
		return nil, err
	}
	return func() (sorter.Entry, bool, error) {
		if err := mongoerr.Interruption(rt.opts.Ctx); err != nil {
			return sorter.Entry{}, false, err
		}
		return it.Next()
	}, nil
}

// cut reads the sorted documents and cuts them into buckets of about
// total/buckets documents (rounded, at least 1), never separating equal
// values; the last allowed bucket takes the rest. A bucket's max is the
// next bucket's min, the last bucket's its largest value.
func (s *bucketAutoStage) cut(sort *sorter.Sorter, total int64, rt *runtime) ([]autoBucket, error) {
	size := max(int64(math.Round(float64(total)/float64(s.buckets))), 1)
	next, err := sortedPass(sort, rt)
	if err != nil {
		return nil, err
	}
	var out []autoBucket
	var lastKey []byte
	var last bson.RawValue
	for {
		rec, ok, err := next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		v := rec.Doc.Lookup("v")
		if n := len(out); n == 0 || (out[n-1].n >= size && !bytes.Equal(rec.Key, lastKey) && int64(n) < s.buckets) {
			if n > 0 {
				out[n-1].max = v
			}
			out = append(out, autoBucket{min: v})
		}
		out[len(out)-1].n++
		lastKey, last = rec.Key, v
	}
	out[len(out)-1].max = last
	return out, nil
}

// cutGranular cuts the sorted documents as MongoDB does under a
// granularity. A bucket takes about total/buckets documents (the last
// allowed bucket all the rest), then every following value below its
// largest value rounded up or equal to that largest value (a run of zeros,
// which round up to themselves, stays in one bucket:
// adjustBoundariesAndGetMinForNextBucket); that rounded value is its max
// (unless it is 0: then the next value rounded down) and the next
// bucket's min. The first bucket's min is its smallest value rounded
// down, and the last bucket's max is rounded up too.
func (s *bucketAutoStage) cutGranular(sort *sorter.Sorter, total int64, rt *runtime) ([]autoBucket, error) {
	size := max(int64(math.Round(float64(total)/float64(s.buckets))), 1)
	pass, err := sortedPass(sort, rt)
	if err != nil {
		return nil, err
	}
	next := func() (bson.RawValue, bool, error) {
		rec, ok, err := pass()
		if !ok || err != nil {
			return bson.RawValue{}, false, err
		}
		return rec.Doc.Lookup("v"), true, nil
	}
	g := s.granularity
	v, ok, err := next()
	var out []autoBucket
	for ok && err == nil {
		b := autoBucket{n: 1, min: g.roundDown(v), max: v}
		if n := len(out); n > 0 {
			b.min = out[n-1].max
		}
		lastBucket := int64(len(out)+1) == s.buckets
		for v, ok, err = next(); ok && err == nil && (b.n < size || lastBucket); v, ok, err = next() {
			b.n, b.max = b.n+1, v
		}
		bound := g.roundUp(b.max)
		for ; ok && err == nil && (values.Compare(bound, v) > 0 || values.Compare(b.max, v) == 0); v, ok, err = next() {
			b.n, b.max = b.n+1, v
		}
		if f, _ := values.Float64(bound); f == 0 && ok {
			b.max = g.roundDown(v)
		} else {
			b.max = bound
		}
		out = append(out, b)
	}
	return out, err
}
