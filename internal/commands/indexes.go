package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/timeseries"
)

func init() {
	register(createIndexesCmd, createIndexesSpec, "createIndexes")
	register(dropIndexesCmd, dropIndexesSpec, "dropIndexes", "deleteIndexes")
	register(listIndexesCmd, listIndexesSpec, "listIndexes")
	namesCollection("createIndexes", "dropIndexes", "deleteIndexes", "listIndexes")
}

// createIndexesSpec declares createIndexes' fields.
// https://www.mongodb.com/docs/v7.0/reference/command/createIndexes/
var createIndexesSpec = &argSpec{path: "createIndexes", fields: []argField{
	required("indexes", tArray),
	arg("ignoreUnknownIndexOptions", tBool),
	arg("commitQuorum", tCommitQuorum),
	ignore("v", tAny, "MongoDB ignores it"),
	collectionUUIDField,
}}

// dropIndexesSpec declares dropIndexes' fields.
// https://www.mongodb.com/docs/v7.0/reference/command/dropIndexes/
var dropIndexesSpec = &argSpec{path: "dropIndexes", fields: []argField{
	// the IDL's variant of string, object and array of strings
	required("index", argType{mask: typeMask(bson.TypeString, bson.TypeEmbeddedDocument, bson.TypeArray), want: []string{"string", "object"}}),
	collectionUUIDField,
}}

// listIndexesSpec declares listIndexes' fields.
// https://www.mongodb.com/docs/v7.0/reference/command/listIndexes/
var listIndexesSpec = &argSpec{path: "listIndexes", fields: []argField{
	arg("cursor", tDoc),
	refuseTrue("includeBuildUUIDs", tBool, "build UUIDs: an index being built records its build by the id of its first index"),
	refuseTrue("includeIndexBuildInfo", tBool, "build UUIDs: an index being built records its build by the id of its first index"),
}, subs: []*argSpec{listIndexesCursorSpec}}

var listIndexesCursorSpec = cursorSpec("listIndexes")

func createIndexesCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	docs, err := r.args.docs("indexes")
	if err != nil {
		return nil, err
	}
	if r.DB == configDB && name == "transactions" {
		// MongoDB's sessions write config.transactions without
		// maintaining other indexes: it refuses any, before reading the
		// specs (its own internal parentLsid index aside, which Folio
		// has no use for).
		return nil, mongoerr.New(mongoerr.IllegalOperation, "not allowed to create index on %s.%s", r.DB, name)
	}
	ignoreUnknown := r.args.bool("ignoreUnknownIndexOptions")
	// The target is looked up first, its error kept for after the specs'
	// own: the specs of a time series collection are on its measurements,
	// where _id is a measurement field like any other.
	coll, ts, targetErr := s.indexTarget(r, name)
	specs := make([]engine.IndexSpec, 0, len(docs))
	for _, d := range docs {
		spec, err := parseIndexSpec(d, ignoreUnknown, ts != nil, r.Args.API.Strict)
		if err != nil {
			return nil, err
		}
		if d.Lookup("hidden").Type != 0 {
			if err := engine.HidingRefused(name); err != nil {
				return nil, err
			}
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one index to create")
	}
	quorum, err := s.commitQuorum(r, r.DB, name)
	if err != nil {
		return nil, err
	}
	if r.args.given("collectionUUID") {
		// MongoDB validates the specs before it looks at the collection.
		if err := engine.CheckNewSpecs(specs); err != nil {
			return nil, err
		}
		if err := s.checkCollectionUUID(r, &r.args, r.DB, name); err != nil {
			return nil, err
		}
	}
	if targetErr != nil {
		return nil, targetErr
	}
	if ts == nil {
		if err := s.clusteredSpecs(r, coll, specs, docs, ignoreUnknown); err != nil {
			return nil, err
		}
	}
	if ts != nil {
		for i := range specs {
			given := docs[i]
			if ignoreUnknown {
				given = withoutUnknownIndexFields(given)
			}
			if err := ts.bucketIndex(&specs[i], given); err != nil {
				return nil, err
			}
		}
	}
	var res engine.CreateIndexesResult
	if r.Txn != nil {
		res, err = r.Txn.CreateIndexes(r.DB, coll, specs)
	} else {
		res, err = s.Engine.CreateIndexes(r.DB, coll, specs, func(done, total int64) error {
			if total > 0 {
				r.op.setProgress("Index Build: scanning collection", done, total)
			}
			if done == 0 && total != engine.BuildWaiting {
				if err := s.hangAfterStartingBuild(r.Ctx); err != nil {
					return err
				}
			}
			return mongoerr.Interruption(r.Ctx)
		})
	}
	if err != nil {
		return nil, err
	}
	d := bson.D{
		{Key: "numIndexesBefore", Value: int32(res.Before)},
		{Key: "numIndexesAfter", Value: int32(res.After)},
	}
	// MongoDB answers an existing collection that has every index already
	// (indexesAlreadyExist) with the counts and the note alone; a build
	// says whether it created the collection and names its commit quorum.
	if res.CreatedCollection || res.Before != res.After {
		d = append(d, bson.E{Key: "createdCollectionAutomatically", Value: res.CreatedCollection})
		if quorum != nil {
			d = append(d, bson.E{Key: "commitQuorum", Value: quorum})
		}
	}
	if res.Before == res.After {
		d = append(d, bson.E{Key: "note", Value: "all indexes already exist"})
	}
	return marshal(d), nil
}

// clusteredSpecs applies the rules of a clustered collection's indexes,
// and of the clustered option, to specs, given as docs, on db.coll: the
// option cannot create the collection (6100900), and a specification of
// the clustered index, which exists, becomes the engine's _id index,
// which stands for it.
func (s *Service) clusteredSpecs(r *Request, coll string, specs []engine.IndexSpec, docs []bson.Raw, ignoreUnknown bool) error {
	c := s.Engine.Collection(r.DB, coll)
	for i, spec := range specs {
		switch {
		case c == nil && spec.Clustered:
			return mongoerr.New(mongoerr.ClusteredIndexImplicitCollection, "Cannot implicitly create a new collection with createIndex 'clustered' option")
		case c == nil || !c.Clustered() && !spec.Clustered:
			continue
		}
		given := docs[i]
		if ignoreUnknown {
			given = withoutUnknownIndexFields(given)
		}
		exists, err := checkClusteredSpec(c, spec, fixedIndexSpec(given))
		if err != nil {
			return err
		}
		if exists {
			specs[i] = engine.IndexSpec{Key: planner.IDKeyPattern, Name: planner.IDIndexName, ExpireAfter: -1}
		}
	}
	return nil
}

func dropIndexesCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err == nil {
		err = s.checkCollectionUUID(r, &r.args, r.DB, name)
	}
	if err != nil {
		return nil, err
	}
	coll, ts, err := s.indexTarget(r, name)
	if err != nil {
		return nil, err
	}
	var names []string
	var byKey bson.Raw
	switch v := r.args.value("index"); v.Type {
	case bson.TypeString:
		names = []string{v.StringValue()}
	case bson.TypeEmbeddedDocument:
		byKey = v.Document()
		if ts != nil {
			// a key with no buckets' form names no index (MongoDB's
			// conversion of a time series dropIndexes)
			if byKey, err = timeseries.BucketIndexKey(ts.o, byKey); err != nil {
				return nil, mongoerr.New(mongoerr.IndexNotFound, "%s: %s", mongoerr.As(err).Code.Name(), mongoerr.As(err).Msg)
			}
		}
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		for _, n := range vals {
			if n.Type != bson.TypeString {
				// the variant's array alternative names the array
				return nil, mongoerr.WrongTypes("dropIndexes.index", "array", "string")
			}
			names = append(names, n.StringValue())
		}
	}
	if c := s.Engine.Collection(r.DB, coll); c != nil && dropsClusteredIndex(c, names, byKey) {
		return nil, mongoerr.New(mongoerr.ClusteredIndexDrop, "It is illegal to drop the clusteredIndex")
	}
	was, err := s.Engine.DropIndexes(r.DB, coll, names, byKey)
	if err != nil {
		return nil, err
	}
	d := bson.D{{Key: "nIndexesWas", Value: int32(was)}}
	if engine.DropsAllIndexes(names) {
		// dropReadyIndexes: dropping every index says so.
		d = append(d, bson.E{Key: "msg", Value: "non-_id indexes dropped for collection"})
	}
	return marshal(d), nil
}

func listIndexesCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	name, ts, err := s.indexTarget(r, name)
	if err != nil {
		return nil, err
	}
	batchSize := int64(noBatchSize)
	if cur := r.args.doc("cursor"); cur != nil {
		if batchSize, err = cursorBatchSize(listIndexesCursorSpec, cur); err != nil {
			return nil, err
		}
	}
	if s.Engine.IsOplog(r.DB, name) {
		return s.serveList(r, name, nil, batchSize) // the oplog has no index, not even _id's
	}
	c := s.Engine.Collection(r.DB, name)
	if c == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", r.DB, name)
	}
	var docs []bson.Raw
	if id := idIndexSpec(c); id != nil {
		docs = append(docs, marshal(id))
	}
	for _, ix := range c.Listed() {
		spec := ix.Spec
		if ts != nil {
			var ok bool
			if spec, ok = ts.userIndex(spec); !ok {
				continue
			}
		}
		docs = append(docs, spec)
	}
	listed := name
	if ts != nil {
		listed = ts.name
	}
	return s.serveList(r, listed, docs, batchSize)
}

// indexTarget is the collection an index command works on: the one it
// names, or a time series collection's buckets (ts then set); a view
// fails with CommandNotSupportedOnView.
func (s *Service) indexTarget(r *Request, coll string) (string, *tsColl, error) {
	ts, err := s.viewTarget(r, r.DB, coll)
	if ts != nil {
		coll = ts.buckets
	}
	return coll, ts, err
}
