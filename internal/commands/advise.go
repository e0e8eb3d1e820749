package commands

import (
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/advise"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/rawdoc"
)

func init() {
	registerAdmin(folioAdviseCmd, &argSpec{path: "folioAdvise", fields: []argField{
		arg("db", tString),
		arg("reset", tBool),
	}}, "folioAdvise")
}

// folioAdviseCmd is Folio's own admin command: {folioAdvise: 1, db?,
// reset?} answers the advisor's findings on db (every database when
// absent), most costly first, and what they were observed since; reset
// then forgets the observations.
func folioAdviseCmd(s *Service, r *Request) (bson.Raw, error) {
	obs := s.Advisor
	if obs == nil {
		return marshal(bson.D{{Key: "findings", Value: bson.A{}}}), nil
	}
	since := obs.Since()
	findings := obs.Report(adviseCatalog{s, r}, r.args.str("db"))
	out := make(bson.A, len(findings))
	for i, f := range findings {
		out[i] = f.Doc()
	}
	if r.args.bool("reset") {
		obs.Reset()
	}
	return marshal(bson.D{{Key: "findings", Value: out}, {Key: "observedSince", Value: since}}), nil
}

// adviseCatalog is the advisor's view of the catalog and the data.
type adviseCatalog struct {
	s *Service
	r *Request
}

func (c adviseCatalog) Namespaces(db string) []string {
	var dbs []string
	if db != "" {
		dbs = []string{db}
	} else {
		dbs = c.s.Engine.Databases()
	}
	var out []string
	for _, d := range dbs {
		for _, coll := range c.s.Engine.Collections(d) {
			if !strings.HasPrefix(coll.Name, "system.") {
				out = append(out, d+"."+coll.Name)
			}
		}
	}
	return out
}

func (c adviseCatalog) Indexes(ns string) []advise.Index {
	db, name, _ := strings.Cut(ns, ".")
	coll := c.s.Engine.Collection(db, name)
	if coll == nil {
		return nil
	}
	var out []advise.Index
	for _, ix := range coll.Indexes() {
		var fields []string
		for _, f := range ix.Fields {
			fields = append(fields, f.Path)
		}
		out = append(out, advise.Index{Name: ix.Name, Fields: fields, Ops: ix.Usage().Ops(), Since: ix.Usage().Since, Size: c.s.Engine.IndexDiskSize(coll, ix)})
	}
	return out
}

func (c adviseCatalog) Sample(ns string, n int) []bson.Raw {
	db, name, _ := strings.Cut(ns, ".")
	cur, err := c.s.Engine.Find(db, name, engine.FindOptions{Limit: int64(n), Ctx: c.r.Ctx})
	if err != nil {
		return nil
	}
	defer cur.Close()
	var out []bson.Raw
	for {
		d, err := cur.Next()
		if err != nil || d == nil {
			return out
		}
		out = append(out, append(bson.Raw(nil), d...))
	}
}

// observeForAdvice gives the advisor what one command did: the shape and
// work of its reads, its writes, its $lookups.
func (s *Service) observeForAdvice(name string, op *activeOp, d time.Duration, reply bson.Raw) {
	obs := s.Advisor
	if obs == nil || op == nil || op.ns == "" {
		return
	}
	ex := advise.Exec{KeysExamined: op.stats.KeysExamined, DocsExamined: op.stats.DocsExamined, Returned: op.out.nreturned, Duration: d, Plan: op.stats.PlanSummary()}
	cmd := op.cmd
	switch name {
	case "find":
		skip, _ := cmd.Lookup("skip").AsInt64OK()
		obs.Query(op.ns, "find", doc(cmd, "filter"), doc(cmd, "sort"), doc(cmd, "projection"), skip, ex)
	case "count", "distinct":
		obs.Query(op.ns, name, doc(cmd, "query"), nil, nil, 0, ex)
	case "aggregate":
		filter, sortDoc, skip := leadingStages(cmd)
		obs.Query(op.ns, "aggregate", filter, sortDoc, nil, skip, ex)
		s.observeLookups(op.ns, cmd)
	case "getMore":
		if o := op.out.origin; o != nil {
			switch Name(o) {
			case "find":
				obs.More(op.ns, "find", doc(o, "filter"), doc(o, "sort"), doc(o, "projection"), ex)
			case "aggregate":
				filter, sortDoc, _ := leadingStages(o)
				obs.More(op.ns, "aggregate", filter, sortDoc, nil, ex)
			}
		}
	case "findAndModify":
		obs.Query(op.ns, "findAndModify", doc(cmd, "query"), doc(cmd, "sort"), doc(cmd, "fields"), 0, ex)
		if u := doc(cmd, "update"); u != nil {
			n, _ := reply.Lookup("lastErrorObject", "n").AsInt64OK()
			obs.Update(op.ns, u, false, n)
			obs.Wrote(op.ns, n)
		}
	case "insert":
		if w := op.out.writes; w != nil {
			obs.Wrote(op.ns, w.n)
		}
		if docs, ok := cmd.Lookup("documents").ArrayOK(); ok {
			obs.Inserted(op.ns, docs)
		}
	case "update", "delete":
		field, counted := "deletes", "n"
		if name == "update" {
			field, counted = "updates", "nModified"
		}
		stmts, _ := cmd.Lookup(field).ArrayOK()
		count := int64(rawdoc.Len(stmts))
		if count == 0 {
			return
		}
		n, _ := reply.Lookup(counted).AsInt64OK()
		ex.KeysExamined, ex.DocsExamined, ex.Duration = ex.KeysExamined/count, ex.DocsExamined/count, d/time.Duration(count)
		it := rawdoc.Iterate(stmts)
		for {
			_, v, ok := it.Next()
			if !ok {
				break
			}
			if v.Type != bson.TypeEmbeddedDocument {
				continue
			}
			st := bson.Raw(v.Value)
			obs.Query(op.ns, name, doc(st, "q"), nil, nil, 0, ex)
			if u, ok := st.Lookup("u").DocumentOK(); ok && name == "update" {
				multi, _ := st.Lookup("multi").BooleanOK()
				obs.Update(op.ns, u, multi, n/count)
			}
		}
		obs.Wrote(op.ns, n)
	}
}

// observeLookups records the $lookup and $graphLookup stages of an
// aggregate by their foreign fields.
func (s *Service) observeLookups(ns string, cmd bson.Raw) {
	db, _, _ := strings.Cut(ns, ".")
	stages, _ := cmd.Lookup("pipeline").ArrayOK()
	vals, _ := stages.Values()
	for _, v := range vals {
		st, _ := v.DocumentOK()
		switch Name(st) {
		case "$lookup":
			spec := doc(st, "$lookup")
			from, _ := spec.Lookup("from").StringValueOK()
			foreign, ok := spec.Lookup("foreignField").StringValueOK()
			if ok && from != "" {
				s.Advisor.Lookup(ns, db+"."+from, foreign)
			}
		case "$graphLookup":
			spec := doc(st, "$graphLookup")
			from, _ := spec.Lookup("from").StringValueOK()
			to, ok := spec.Lookup("connectToField").StringValueOK()
			if ok && from != "" {
				s.Advisor.Lookup(ns, db+"."+from, to)
			}
		}
	}
}

// leadingStages are an aggregate's leading $match filter, the $sort after
// it and a $skip after those: what its scan is asked.
func leadingStages(cmd bson.Raw) (filter, sortDoc bson.Raw, skip int64) {
	stages, _ := cmd.Lookup("pipeline").ArrayOK()
	vals, _ := stages.Values()
	for _, v := range vals {
		st, _ := v.DocumentOK()
		switch Name(st) {
		case "$match":
			if filter != nil || sortDoc != nil {
				return
			}
			filter = doc(st, "$match")
		case "$sort":
			if sortDoc != nil {
				return
			}
			sortDoc = doc(st, "$sort")
		case "$skip":
			skip, _ = st.Lookup("$skip").AsInt64OK()
			return
		default:
			return
		}
	}
	return
}

// doc is the document at key of d (nil when absent or not one).
func doc(d bson.Raw, key string) bson.Raw {
	v, _ := d.Lookup(key).DocumentOK()
	return v
}
