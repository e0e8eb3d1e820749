package commands

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
)

// maxViewPipelineBytes bounds the pipeline a chain of views resolves to,
// MongoDB's ViewGraph::kMaxViewPipelineSizeBytes.
const maxViewPipelineBytes = 16 * 1000 * 1000

// viewRefs are the names in db a view's definition reads: the namespaces
// its pipeline involves ($lookup, $graphLookup, $unionWith, in $facet and
// nested pipelines too), then its viewOn, as MongoDB's view graph records
// a view's children.
func viewRefs(db string, v *viewDef) []string {
	var refs []string
	for _, n := range involvedNamespaces(db, v.pipeline) {
		if !slices.Contains(refs, n) {
			refs = append(refs, n)
		}
	}
	if !slices.Contains(refs, v.viewOn) {
		refs = append(refs, v.viewOn)
	}
	return refs
}

// involvedNamespaces are the collections or views of db that stages read
// (MongoDB's LiteParsedPipeline::getInvolvedNamespaces): those the
// authorization check reads (pipelineNeeds).
func involvedNamespaces(db string, stages []bson.Raw) []string {
	arr := bsoncore.NewArrayBuilder()
	for _, st := range stages {
		arr.AppendDocument(st)
	}
	var out []string
	for _, n := range pipelineNeeds(db, bson.RawArray(arr.Build()), nil, false) {
		if n.action == "find" && n.target.DB == db && n.target.Coll != "" {
			out = append(out, n.target.Coll)
		}
	}
	return out
}

// viewNode is a namespace of MongoDB's view graph: a view, with the names
// it reads (children), or a name only views read.
type viewNode struct {
	children, parents []string
	isView            bool
	collation         bson.Raw
	size              int
}

// viewStats is what a traversal of the graph learnt of a node.
type viewStats struct {
	checked      bool
	height, size int
}

// viewGraph is a database's views as MongoDB's ViewGraph holds them.
type viewGraph struct {
	db    string
	nodes map[string]*viewNode
}

func (g *viewGraph) node(name string) *viewNode {
	n := g.nodes[name]
	if n == nil {
		n = &viewNode{}
		g.nodes[name] = n
	}
	return n
}

// insert adds view v, unvalidated.
func (g *viewGraph) insert(v *viewDef) {
	n := g.node(v.name)
	n.isView, n.collation = true, v.collation
	for _, st := range v.pipeline {
		n.size += len(st)
	}
	for _, c := range viewRefs(g.db, v) {
		n.children = append(n.children, c)
		cn := g.node(c)
		if !slices.Contains(cn.parents, v.name) {
			cn.parents = append(cn.parents, v.name)
		}
	}
}

func (g *viewGraph) ns(name string) string { return g.db + "." + name }

func viewDepthError() error {
	return mongoerr.New(mongoerr.ViewDepthLimitExceeded, "View depth limit exceeded; maximum depth is %d", maxViewDepth)
}

// validateView checks the definition v (new, or replacing the view of its
// name) against db's other views as MongoDB's ViewsForDatabase and
// ViewGraph::insertAndValidate do: the other views' pipelines are valid
// (MongoDB revalidates them all as it rebuilds its view graph after
// reloading system.views, so one stored invalid, through applyOps, fails
// every definition with its error), then v's (under apiStrict its stages
// outside API version 1 first, as the pipeline's parse refuses each stage
// before it checks it; then viewPipelineError; in the context of v), the views it reads have its collation
// (OptionNotSupportedOnView), nothing it reads leads back to it
// (GraphContainsCycle), and the views reading it through their viewOn or
// their pipelines, plus the views it reads, are at most maxViewDepth deep
// (ViewDepthLimitExceeded).
func (s *Service) validateView(r *Request, v *viewDef) error {
	defs, err := s.views(r, r.DB)
	if err != nil {
		return err
	}
	g := &viewGraph{db: r.DB, nodes: map[string]*viewNode{}}
	byName := map[string]*viewDef{}
	for _, d := range defs {
		byName[d.name] = d
		if d.name != v.name {
			if err := viewPipelineError(r.DB, d.name, d.viewOn, d.pipeline); err != nil {
				return err
			}
			g.insert(d)
		}
	}
	err = nil
	if r.Args.API.Strict {
		err = checkAPIStrictStages(v.pipeline)
	}
	if err == nil {
		err = viewPipelineError(r.DB, v.name, v.viewOn, v.pipeline)
	}
	if err != nil {
		e := mongoerr.As(err)
		return mongoerr.New(e.Code, "Invalid pipeline for view %s :: caused by :: %s", g.ns(v.name), e.Msg)
	}
	for _, ref := range viewRefs(r.DB, v) {
		if other := byName[ref]; other != nil && !sameCollation(v.collation, other.collation) {
			return mongoerr.New(mongoerr.OptionNotSupportedOnView, "View %s has conflicting collation with view %s", g.ns(v.name), g.ns(ref))
		}
	}
	g.insert(v)
	stats := map[string]*viewStats{}
	stat := func(n string) *viewStats {
		if stats[n] == nil {
			stats[n] = &viewStats{}
		}
		return stats[n]
	}
	if err := g.validateChildren(v.name, v.name, 0, stat, nil); err != nil {
		return err
	}
	childrenHeight, childrenSize := stat(v.name).height-1, stat(v.name).size
	stats = map[string]*viewStats{}
	if err := g.validateParents(v.name, 0, stat); err != nil {
		return err
	}
	if stat(v.name).height+childrenHeight-1 > maxViewDepth {
		return viewDepthError()
	}
	if stat(v.name).size+childrenSize-g.nodes[v.name].size > maxViewPipelineBytes {
		return mongoerr.New(mongoerr.ViewPipelineMaxSizeExceeded, "Operation would result in a resolved view pipeline that exceeds the maximum size of %d bytes", maxViewPipelineBytes)
	}
	return nil
}

// validateChildren walks down from cur (depth below start), as
// ViewGraph::_validateChildren: a walk back to start is a cycle, one past
// maxViewDepth too deep, and a view reading a view of another collation
// is refused; the heights of the nodes walked are recorded.
func (g *viewGraph) validateChildren(start, cur string, depth int, stat func(string) *viewStats, trail []string) error {
	n := g.nodes[cur]
	trail = append(trail, cur)
	if depth > 0 && cur == start {
		var msg strings.Builder
		msg.WriteString("View cycle detected: " + g.ns(cur))
		for i := len(trail) - 1; i >= 0; i-- {
			msg.WriteString(" => " + g.ns(trail[i]))
		}
		return mongoerr.New(mongoerr.GraphContainsCycle, "%s", msg.String())
	}
	if depth > maxViewDepth {
		return viewDepthError()
	}
	maxHeight, maxSize := 0, 0
	for _, c := range n.children {
		if stat(c).checked {
			continue
		}
		if cn := g.nodes[c]; cn.isView && !sameCollation(n.collation, cn.collation) {
			return mongoerr.New(mongoerr.OptionNotSupportedOnView, "View %s has a collation that does not match the collation of view %s", g.ns(cur), g.ns(c))
		}
		if err := g.validateChildren(start, c, depth+1, stat, trail); err != nil {
			return err
		}
		maxHeight, maxSize = max(maxHeight, stat(c).height), max(maxSize, stat(c).size)
	}
	st := stat(cur)
	st.checked, st.height = true, maxHeight+1
	st.size += maxSize + n.size
	return nil
}

// validateParents walks up from cur, as ViewGraph::_validateParents,
// recording the heights of the views reading it.
func (g *viewGraph) validateParents(cur string, depth int, stat func(string) *viewStats) error {
	if depth > maxViewDepth {
		return viewDepthError()
	}
	n := g.nodes[cur]
	maxHeight, maxSize := 0, 0
	for _, p := range n.parents {
		if pn := g.nodes[p]; pn.isView && !sameCollation(n.collation, pn.collation) {
			return mongoerr.New(mongoerr.OptionNotSupportedOnView, "View %s has a collation that does not match the collation of view %s", g.ns(cur), g.ns(p))
		}
		if !stat(p).checked {
			if err := g.validateParents(p, depth+1, stat); err != nil {
				return err
			}
		}
		maxHeight, maxSize = max(maxHeight, stat(p).height), max(maxSize, stat(p).size)
	}
	st := stat(cur)
	st.checked, st.height = true, maxHeight+1
	st.size += maxSize + n.size
	if st.size > maxViewPipelineBytes {
		return mongoerr.New(mongoerr.ViewPipelineMaxSizeExceeded, "View pipeline is too large and exceeds the maximum size of %d bytes", maxViewPipelineBytes)
	}
	return nil
}
