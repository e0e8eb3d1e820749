package commands

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(mapReduceCmd, mapReduceSpec, "mapReduce", "mapreduce")
	namesCollection("mapReduce", "mapreduce")
	authzRules["mapReduce"] = authzRule{needs: mapReduceNeeds}
	authzRules["mapreduce"] = authzRules["mapReduce"]
}

// mapReduceSpec declares mapReduce's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/mapReduce/
var mapReduceSpec = &argSpec{path: "mapReduce", fields: []argField{
	required("map", tAny),
	required("reduce", tAny),
	required("out", tAny),
	arg("query", tDoc),
	arg("sort", tDoc),
	arg("limit", tLong),
	arg("finalize", tAny),
	arg("scope", tDoc),
	ignore("jsMode", tBool, "MongoDB 4.4+ ignores it: every mapReduce runs the same way"),
	ignore("verbose", tBool, "MongoDB 4.4+ ignores it: replies carry no timing"),
	arg("bypassDocumentValidation", tBool),
	arg("collation", tDoc),
}}

// mrOut is where a mapReduce writes its results.
type mrOut struct {
	inline   bool
	mode     string // "replace", "merge" or "reduce"
	db, coll string
	dbGiven  bool
}

// parseMROut parses out as MongoDB 7.0 does: a collection name (replace),
// {inline: 1}, or {replace|merge|reduce: name, db, nonAtomic: true}.
func parseMROut(v bson.RawValue, db string) (mrOut, error) {
	switch v.Type {
	case bson.TypeString:
		return mrOut{mode: "replace", db: db, coll: v.StringValue()}, nil
	case bson.TypeEmbeddedDocument:
	default:
		return mrOut{}, mongoerr.New(mongoerr.BadValue, "'out' must be either a string or an object")
	}
	d := bson.Raw(v.Value)
	els, _ := d.Elements()
	if in, err := d.LookupErr("inline"); err == nil {
		if len(els) != 1 {
			return mrOut{}, mongoerr.New(mongoerr.InvalidOptions, "'inline' must be specified alone")
		}
		if f, ok := values.Float64(in); !ok || f != 1 {
			return mrOut{}, mongoerr.New(mongoerr.BadValue, "'inline' takes only numeric '1'")
		}
		return mrOut{inline: true}, nil
	}
	allowed := 4
	if _, err := d.LookupErr("sharded"); err == nil {
		return mrOut{}, mongoerr.New(mongoerr.NotImplemented, "mapReduce out.sharded is not supported: Folio has no sharded output collections")
	}
	allowed--
	o := mrOut{db: db}
	for _, mode := range []string{"replace", "merge", "reduce"} {
		if c, err := d.LookupErr(mode); err == nil {
			if c.Type != bson.TypeString {
				return mrOut{}, mongoerr.New(mongoerr.BadValue, "'%s' supports only string consisting of output collection name", mode)
			}
			o.mode, o.coll = mode, c.StringValue()
			break
		}
	}
	if o.mode == "" {
		return mrOut{}, mongoerr.New(mongoerr.BadValue, "'out' requires 'replace', 'merge' or 'reduce'")
	}
	if dv, err := d.LookupErr("db"); err == nil {
		if dv.Type != bson.TypeString {
			return mrOut{}, mongoerr.New(mongoerr.BadValue, "db field value must be string")
		}
		o.db, o.dbGiven = dv.StringValue(), true
		if o.db == "admin" || o.db == "local" || o.db == "config" {
			return mrOut{}, mongoerr.New(mongoerr.CommandNotSupported, "cannot target internal database as output")
		}
	} else {
		allowed--
	}
	if na, err := d.LookupErr("nonAtomic"); err == nil {
		if na.Type != bson.TypeBoolean {
			return mrOut{}, mongoerr.New(mongoerr.BadValue, "nonAtomic field value must be boolean")
		}
		if !na.Boolean() {
			return mrOut{}, mongoerr.New(mongoerr.BadValue, "nonAtomic field value must be true")
		}
	} else {
		allowed--
	}
	if len(els) != allowed {
		return mrOut{}, mongoerr.New(mongoerr.BadValue, "'out' supports only output type with collection name, optional 'sharded' and optional 'db'")
	}
	return o, nil
}

// mrFunc compiles a map, reduce or finalize function: a string or code.
func mrFunc(name string, v bson.RawValue) (*js.Func, error) {
	var src string
	switch v.Type {
	case bson.TypeString:
		src = v.StringValue()
	case bson.TypeJavaScript:
		src = v.JavaScript()
	case bson.TypeCodeWithScope:
		return nil, mongoerr.New(mongoerr.BadValue, "'%s' must not have a scope: MongoDB 4.4+ takes the scope field instead", name)
	default:
		return nil, mongoerr.WrongTypes("mapReduce."+name, values.TypeName(v.Type), "javascript", "string")
	}
	return js.Compile(src)
}

// maxEmitted is the memory the emitted keys and values may take before
// they spill to disk: MongoDB's 100 MiB limit of a blocking stage (its
// mapReduce runs as an aggregation that may use the disk).
var maxEmitted int64 = 100 << 20

// maxReduceBatch is the most bytes of values one reduce call receives;
// the rest are reduced with its result in the next call, as MongoDB does.
const maxReduceBatch = js.ReduceBatchBytes

// mapReduceCmd runs the map function over the documents the query, sort
// and limit select, groups the emitted values by key, reduces each key's
// values (even a key emitted once: MongoDB 4.4+ always calls reduce, its
// mrEnableSingleReduceOptimization being off by default), finalizes, and
// answers the
// results inline or writes them to the out collection.
// https://www.mongodb.com/docs/v7.0/reference/command/mapReduce/
func mapReduceCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	if r.Txn != nil {
		return nil, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run 'mapReduce' in a multi-document transaction.")
	}
	a := &r.args
	mapF, err := mrFunc("map", a.value("map"))
	if err != nil {
		return nil, err
	}
	reduceF, err := mrFunc("reduce", a.value("reduce"))
	if err != nil {
		return nil, err
	}
	var finalizeF *js.Func
	// finalize may be an explicit null, as no finalize (MongoDB's
	// MapReduceJavascriptCodeOrNull: drivers send null for it).
	if a.has("finalize") && a.value("finalize").Type != bson.TypeNull {
		if finalizeF, err = mrFunc("finalize", a.value("finalize")); err != nil {
			return nil, err
		}
	}
	out, err := parseMROut(a.value("out"), r.DB)
	if err != nil {
		return nil, err
	}
	limit, err := a.long("limit")
	if err == nil && limit < 0 {
		err = mongoerr.New(mongoerr.BadValue, "Invalid limit: %d", limit)
	}
	if err != nil {
		return nil, err
	}
	if v, err := s.lookupView(r, r.DB, coll); err != nil || v != nil {
		if err == nil {
			err = mongoerr.New(mongoerr.CommandNotSupportedOnView, "mapReduce on a view is not supported")
		}
		return nil, err
	}
	// The collation (or the collection's default) applies to the query,
	// the sort and the grouping of keys, as to the aggregation MongoDB
	// runs a mapReduce as.
	collator, err := engine.CommandCollator(s.Engine.Collection(r.DB, coll), a.doc("collation"))
	if err != nil {
		return nil, err
	}
	o := engine.FindOptions{Filter: a.doc("query"), Sort: a.doc("sort"), Limit: limit, Collation: a.doc("collation"), Ctx: r.Ctx}
	o.Let = s.withScripts(nil, r, r.Ctx)
	cur, err := s.Engine.Find(r.DB, coll, o)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	op := o.Let.Ctx.JS
	var sess *js.Session
	if op.Enabled() {
		// mapReduce's scope holds the database's stored functions
		// (system.js).
		if err := op.LoadStored(); err != nil {
			return nil, err
		}
		sess = op.Session()
		defer sess.Close()
		if scope := a.doc("scope"); len(scope) > 0 {
			if err := sess.SetGlobals(scope); err != nil {
				return nil, err
			}
		}
	}
	// The emitted pairs are sorted by key (in emission order within a
	// key), spilling past maxEmitted, then reduced one key at a time;
	// keys equal under the collation are one key, the first emitted.
	srt := sorter.New(sorter.Options{MaxMemory: maxEmitted, AllowDisk: true})
	defer srt.Close()
	emit := func(k, v bson.RawValue) error {
		return srt.Add(sorter.Entry{Key: collator.ValueKey(k), Doc: mrDoc(k, v)})
	}
	for {
		doc, err := cur.Next()
		if err != nil {
			return nil, err
		}
		if doc == nil {
			break
		}
		if sess == nil {
			return nil, mongoerr.New(mongoerr.MapReduceEmitNoScriptEngine, "Cannot run server-side javascript without the javascript engine enabled")
		}
		if err := sess.Map(mapF, doc, emit); err != nil {
			return nil, err
		}
	}
	it, err := srt.Iterate()
	if err != nil {
		return nil, err
	}
	var results []bson.Raw
	var key []byte      // keyenc of the key being read
	var k bson.RawValue // that key
	var vals []bson.RawValue
	size := 0
	// flush reduces the values of the key read so far into its result.
	flush := func() error {
		if len(vals) == 0 {
			return nil
		}
		v, err := mrReduce(sess, reduceF, k, vals)
		if err != nil {
			return err
		}
		vals, size = nil, 0
		if finalizeF != nil {
			if v, err = sess.Call(finalizeF, nil, k, v); err != nil {
				return err
			}
		}
		results = append(results, mrDoc(k, v))
		return nil
	}
	for {
		if err := mongoerr.Interruption(r.Ctx); err != nil {
			return nil, err
		}
		e, ok, err := it.Next()
		if err != nil {
			return nil, err
		}
		pair := bson.Raw(bytes.Clone(e.Doc)) // {_id: key, value}
		if !ok || !bytes.Equal(e.Key, key) {
			if err := flush(); err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			key, k = bytes.Clone(e.Key), pair.Lookup("_id")
		}
		v := pair.Lookup("value")
		vals = append(vals, v)
		if size += len(v.Value); size > maxReduceBatch && len(vals) > 1 {
			// A key with many values is reduced as they come.
			partial, err := mrReduce(sess, reduceF, k, vals)
			if err != nil {
				return nil, err
			}
			vals, size = []bson.RawValue{partial}, len(partial.Value)
		}
	}
	if out.inline {
		arr := bsoncore.NewArrayBuilder()
		for _, d := range results {
			arr.AppendDocument(d)
		}
		return marshal(bson.D{{Key: "results", Value: bson.RawValue{Type: bson.TypeArray, Value: arr.Build()}}}), nil
	}
	if err := s.writeMROut(r, out, results, sess, reduceF, finalizeF); err != nil {
		return nil, err
	}
	if out.dbGiven {
		return marshal(bson.D{{Key: "result", Value: bson.D{{Key: "db", Value: out.db}, {Key: "collection", Value: out.coll}}}}), nil
	}
	return marshal(bson.D{{Key: "result", Value: out.coll}}), nil
}

// mrReduce reduces one key's values as MongoDB's $_internalJsReduce
// does (js.Session.Reduce).
func mrReduce(sess *js.Session, f *js.Func, key bson.RawValue, vals []bson.RawValue) (bson.RawValue, error) {
	if sess == nil {
		return bson.RawValue{}, mongoerr.New(mongoerr.MapReduceReduceNoScriptEngine, "Cannot run server-side javascript without the javascript engine enabled")
	}
	return sess.Reduce(f, key, vals)
}

// mrDoc is a result document {_id: key, value: v}.
func mrDoc(key, v bson.RawValue) bson.Raw {
	b := bsoncore.NewDocumentBuilder().
		AppendValue("_id", bsoncore.Value{Type: bsoncore.Type(key.Type), Data: key.Value}).
		AppendValue("value", bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	return bson.Raw(b.Build())
}

// writeMROut writes results to the out collection: replace swaps in a
// collection holding only them (written aside, then renamed over the
// target); merge replaces or inserts each by _id; reduce reduces a
// result with the stored document of its key, reduce(key, [stored, new]),
// then finalizes it again (MongoDB's $merge whenMatched pipeline).
func (s *Service) writeMROut(r *Request, out mrOut, results []bson.Raw, sess *js.Session, reduceF, finalizeF *js.Func) error {
	if err := s.notOnView(r, out.db, out.coll); err != nil {
		return err
	}
	wo := writeOptions(s, r, &r.args)
	switch out.mode {
	case "replace":
		// As $out: written aside, with the target's options and indexes.
		var suffix [8]byte
		_, _ = rand.Read(suffix[:])
		tmp := "tmp.mr." + out.coll + "_" + hex.EncodeToString(suffix[:])
		o, err := engineEnv{e: s.Engine, ctx: &binding{r.Ctx, r.op}, journal: wo.Journal, bypass: wo.BypassValidation}.output(out.db, out.coll, tmp, nil)
		if err != nil {
			return err
		}
		if err = o.Write(results); err == nil {
			err = o.Commit()
		}
		if err != nil {
			o.Abort()
		}
		return err
	}
	// merge and reduce run as a $merge on _id, which checks each key
	// before it writes.
	for _, d := range results {
		if err := aggregate.MergeOnValue("_id", d.Lookup("_id")); err != nil {
			return err
		}
	}
	for _, d := range results {
		key, v := d.Lookup("_id"), d.Lookup("value")
		filter := marshal(bson.D{{Key: "_id", Value: key}})
		if out.mode == "reduce" {
			cur, err := s.Engine.Find(out.db, out.coll, engine.FindOptions{Filter: filter, Ctx: r.Ctx})
			if err != nil {
				return err
			}
			old, err := cur.Next()
			matched := err == nil && old != nil
			if matched {
				arr := bsoncore.NewArrayBuilder()
				for _, x := range []bson.RawValue{bytesClone(old).Lookup("value"), v} {
					arr.AppendValue(bsoncore.Value{Type: bsoncore.Type(x.Type), Data: x.Value})
				}
				v, err = sess.Call(reduceF, nil, key, bson.RawValue{Type: bson.TypeArray, Value: arr.Build()})
			}
			cur.Close()
			if err != nil {
				return err
			}
			if matched && finalizeF != nil {
				if v, err = sess.Call(finalizeF, nil, key, v); err != nil {
					return err
				}
			}
			d = mrDoc(key, v)
		}
		if _, err := s.Engine.Update(out.db, out.coll, engine.UpdateSpec{Filter: filter, Update: d, Upsert: true, WriteOptions: wo}); err != nil {
			return err
		}
	}
	if len(results) == 0 {
		_, err := engineEnv{e: s.Engine, ctx: r.Ctx}.Insert(out.db, out.coll, nil, true)
		return err
	}
	return nil
}

func bytesClone(d bson.Raw) bson.Raw { return bytes.Clone(d) }
