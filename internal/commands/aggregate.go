package commands

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(aggregateCmd, "aggregate")
}

// aggregateCmd runs {aggregate: <collection> | 1, pipeline, cursor, ...}.
// A leading $match (and a $sort right after it, with a following $limit)
// is handed to the engine's scan so it can use indexes; the rest of the
// pipeline runs in internal/aggregate. maxTimeMS bounds the work done for
// the first batch.
func aggregateCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	var coll string
	switch collv := r.Cmd.Lookup("aggregate"); {
	case collv.Type == bson.TypeString:
		var err error
		if coll, err = collectionArg(r.Cmd); err != nil {
			return nil, err
		}
	case values.IsNumber(collv.Type) && values.Compare(collv, values.Int32Value(1)) == 0:
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Invalid command format: the 'aggregate' field must specify a collection name or 1")
	}
	var stages []bson.Raw
	var batchSize int64
	haveCursor, havePipeline := false, false
	opts := aggregate.Options{DB: r.DB, Coll: coll, Env: engineEnv{e: s.Engine, txn: r.Txn}}
	var hint bson.RawValue
	err := eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "pipeline":
			stages, err = docsArg("aggregate", key, v)
			havePipeline = true
		case "cursor":
			var c bson.Raw
			if c, err = argDoc("aggregate", key, v); err == nil {
				haveCursor = true
				if bs, e := c.LookupErr("batchSize"); e == nil {
					if batchSize, err = argInt("aggregate", "cursor.batchSize", bs); err == nil {
						err = nonNegative("batchSize", batchSize)
					}
				}
			}
		case "allowDiskUse":
			opts.AllowDiskUse, err = argBool("aggregate", key, v)
		case "hint":
			hint = v
		case "let":
			opts.Let, err = argDoc("aggregate", key, v)
		case "explain":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not explain aggregations yet")
		case "collation":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
		case "fromMongos", "needsMerge", "$_generateV2ResumeTokens", "isMapReduceCommand":
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	if !havePipeline {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	if !haveCursor {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	if mt, e := r.Cmd.LookupErr("maxTimeMS"); e == nil {
		ms, err := argInt("aggregate", "maxTimeMS", mt)
		if err == nil && ms < 0 {
			err = mongoerr.New(mongoerr.BadValue, "%d value for maxTimeMS is out of range [0, 2147483647]", ms)
		}
		if err != nil {
			return nil, err
		}
		if ms > 0 {
			opts.Deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
		}
	}
	p, err := aggregate.Parse(stages, opts)
	if err != nil {
		return nil, err
	}
	var src aggregate.Source
	nsColl := "$cmd.aggregate"
	if coll != "" {
		nsColl = coll
		pd := p.TakePushdown()
		cur, err := s.Engine.Find(r.DB, coll, engine.FindOptions{
			Filter: pd.Filter, Sort: pd.Sort, Limit: pd.Limit, Hint: hint, AllowDiskUse: opts.AllowDiskUse, Txn: r.Txn,
		})
		if err != nil {
			return nil, err
		}
		src = cur
	}
	reply, err := s.serveFirstBatch(r.DB, nsColl, p.Run(src), batchSize, false, r.Txn)
	p.EndDeadline()
	return reply, err
}

// engineEnv gives the pipeline's $lookup, $unionWith, $out, $merge,
// $collStats and $indexStats access to the engine.
type engineEnv struct {
	e   *engine.Engine
	txn *engine.Txn
}

func (env engineEnv) Find(db, coll string, filter bson.Raw) (aggregate.Source, error) {
	return env.e.Find(db, coll, engine.FindOptions{Filter: filter, Txn: env.txn})
}

func (env engineEnv) Insert(db, coll string, docs []bson.Raw) error {
	if len(docs) == 0 {
		if env.e.Collection(db, coll) != nil {
			return nil
		}
		err := env.e.CreateCollection(db, coll, engine.CollectionOptions{})
		if err != nil && mongoerr.As(err).Code == mongoerr.NamespaceExists {
			return nil
		}
		return err
	}
	_, werrs, err := env.e.Insert(db, coll, docs, true, engine.WriteOptions{Txn: env.txn})
	if err != nil {
		return err
	}
	if len(werrs) > 0 {
		return werrs[0].Err
	}
	return nil
}

func (env engineEnv) Replace(db, coll string, id bson.RawValue, doc bson.Raw) error {
	filter := marshal(bson.D{{Key: "_id", Value: id}})
	_, err := env.e.Update(db, coll, engine.UpdateSpec{Filter: filter, Update: doc, WriteOptions: engine.WriteOptions{Txn: env.txn}})
	return err
}

func (env engineEnv) DropCollection(db, coll string) error {
	_, err := env.e.DropCollection(db, coll)
	return err
}

func (env engineEnv) RenameCollection(db, from, to string) error {
	return env.e.RenameCollection(db, from, db, to, true)
}

func (env engineEnv) CollectionStats(db, coll string) (aggregate.CollStats, error) {
	c := env.e.Collection(db, coll)
	if c == nil {
		return aggregate.CollStats{}, mongoerr.New(mongoerr.NamespaceNotFound, "Unable to retrieve stats in $collStats stage :: caused by :: Collection [%s.%s] not found.", db, coll)
	}
	st, err := env.e.Stats(c)
	if err != nil {
		return aggregate.CollStats{}, err
	}
	specs := []bson.Raw{marshal(idIndexSpec())}
	for _, ix := range c.Indexes() {
		specs = append(specs, ix.Spec)
	}
	return aggregate.CollStats{Count: st.Count, Size: st.Size, Indexes: specs}, nil
}
