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
	case "find", "aggregate":
		r := readOf(name, cmd)
		obs.Query(op.ns, name, r.filter, r.sort, r.projection, r.skip, ex)
		if name == "aggregate" {
			s.observeLookups(op.ns, cmd)
		}
	case "count", "distinct":
		obs.Query(op.ns, name, doc(cmd, "query"), nil, nil, 0, ex)
	case "getMore":
		// its work adds to the shape of the find or aggregate it continues
		if o := op.out.origin; o != nil && (Name(o) == "find" || Name(o) == "aggregate") {
			r := readOf(Name(o), o)
			obs.More(op.ns, Name(o), r.filter, r.sort, r.projection, ex)
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
		if docs, ok := rawdoc.Lookup(cmd, "documents").ArrayOK(); ok {
			obs.Inserted(op.ns, docs)
		}
	case "update", "delete":
		field, counted := "deletes", "n"
		if name == "update" {
			field, counted = "updates", "nModified"
		}
		stmts, _ := rawdoc.Lookup(cmd, field).ArrayOK()
		count := int64(rawdoc.Len(stmts))
		if count == 0 {
			return
		}
		n, _ := rawdoc.Lookup(reply, counted).AsInt64OK()
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
			if u, ok := rawdoc.Lookup(st, "u").DocumentOK(); ok && name == "update" {
				multi, _ := rawdoc.Lookup(st, "multi").BooleanOK()
				obs.Update(op.ns, u, multi, n/count)
			}
		}
		obs.Wrote(op.ns, n)
	}
}

// lookupForeign names, per stage reading another collection, the field
// of that collection it matches on.
var lookupForeign = map[string]string{"$lookup": "foreignField", "$graphLookup": "connectToField"}

// observeLookups records the $lookup and $graphLookup stages of an
// aggregate by their foreign fields.
func (s *Service) observeLookups(ns string, cmd bson.Raw) {
	db, _, _ := strings.Cut(ns, ".")
	stages, _ := rawdoc.Lookup(cmd, "pipeline").ArrayOK()
	vals, _ := stages.Values()
	for _, v := range vals {
		st, _ := v.DocumentOK()
		name := Name(st)
		field, ok := lookupForeign[name]
		if !ok {
			continue
		}
		spec := doc(st, name)
		from, _ := rawdoc.Lookup(spec, "from").StringValueOK()
		if foreign, ok := rawdoc.Lookup(spec, field).StringValueOK(); ok && from != "" {
			s.Advisor.Lookup(ns, db+"."+from, foreign)
		}
	}
}

// read is what the advisor keys a find or an aggregate by.
type read struct {
	filter, sort, projection bson.Raw
	skip                     int64
}

// readOf is the read of a find, or of an aggregate its leading $match, the
// $sort after it and a $skip after those: what its scan is asked.
func readOf(name string, cmd bson.Raw) read {
	if name == "find" {
		skip, _ := rawdoc.Lookup(cmd, "skip").AsInt64OK()
		return read{filter: doc(cmd, "filter"), sort: doc(cmd, "sort"), projection: doc(cmd, "projection"), skip: skip}
	}
	var r read
	stages, _ := rawdoc.Lookup(cmd, "pipeline").ArrayOK()
	vals, _ := stages.Values()
	for _, v := range vals {
		st, _ := v.DocumentOK()
		switch Name(st) {
		case "$match":
			if r.filter != nil || r.sort != nil {
				return r
			}
			r.filter = doc(st, "$match")
		case "$sort":
			if r.sort != nil {
				return r
			}
			r.sort = doc(st, "$sort")
		case "$skip":
			r.skip, _ = rawdoc.Lookup(st, "$skip").AsInt64OK()
			return r
		default:
			return r
		}
	}
	return r
}

// doc is the document at key of d (nil when absent or not one).
func doc(d bson.Raw, key string) bson.Raw {
	v, _ := rawdoc.Lookup(d, key).DocumentOK()
	return v
}
