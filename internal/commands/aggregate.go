package commands

import (
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
// the first batch. With explain: true the pipeline is explained (at
// queryPlanner verbosity) rather than run.
func aggregateCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	a, err := parseAggregate(s, r.DB, r.Cmd, r.Txn)
	if err != nil {
		return nil, err
	}
	if a.explain {
		if r.Txn != nil {
			return nil, mongoerr.New(codeOperationNotSupportedInTransaction, "Cannot run 'aggregate' with explain in a multi-document transaction.")
		}
		out, err := explainAggregate(s, r.DB, a, false)
		if err != nil {
			return nil, err
		}
		return explainReply(s, out, r.Cmd), nil
	}
	if !a.haveCursor {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	p, err := aggregate.Parse(a.stages, a.opts)
	if err != nil {
		return nil, err
	}
	var src aggregate.Source
	nsColl := "$cmd.aggregate"
	if a.opts.Coll != "" {
		nsColl = a.opts.Coll
		cur, err := s.Engine.Find(r.DB, a.opts.Coll, a.pushdown(p))
		if err != nil {
			return nil, err
		}
		src = cur
	}
	reply, err := s.serveFirstBatch(r.DB, nsColl, p.Run(src), a.batchSize, false, r.Txn)
	p.EndDeadline()
	return reply, err
}

// aggregateArgs is a parsed aggregate command.
type aggregateArgs struct {
	stages     []bson.Raw
	batchSize  int64
	haveCursor bool
	explain    bool
	hint       bson.RawValue
	txn        *engine.Txn
	opts       aggregate.Options
}

// parseAggregate reads an aggregate command on db (on its own, or inside
// explain) run in txn, if any.
func parseAggregate(s *Service, db string, cmd bson.Raw, txn *engine.Txn) (*aggregateArgs, error) {
	a := &aggregateArgs{txn: txn, opts: aggregate.Options{DB: db, Env: engineEnv{e: s.Engine, txn: txn}}}
	switch collv := cmd.Lookup("aggregate"); {
	case collv.Type == bson.TypeString:
		var err error
		if a.opts.Coll, err = collectionArg(cmd); err != nil {
			return nil, err
		}
	case values.IsNumber(collv.Type) && values.Compare(collv, values.Int32Value(1)) == 0:
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Invalid command format: the 'aggregate' field must specify a collection name or 1")
	}
	havePipeline := false
	err := eachArg(cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "pipeline":
			a.stages, err = docsArg("aggregate", key, v)
			havePipeline = true
		case "cursor":
			var c bson.Raw
			if c, err = argDoc("aggregate", key, v); err == nil {
				a.haveCursor = true
				if bs, e := c.LookupErr("batchSize"); e == nil {
					if a.batchSize, err = argInt("aggregate", "cursor.batchSize", bs); err == nil {
						err = nonNegative("batchSize", a.batchSize)
					}
				}
			}
		case "allowDiskUse":
			a.opts.AllowDiskUse, err = argBool("aggregate", key, v)
		case "hint":
			a.hint = v
		case "let":
			a.opts.Let, err = argDoc("aggregate", key, v)
		case "explain":
			a.explain, err = argBool("aggregate", key, v)
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
	if a.opts.Coll == "" && len(a.stages) > 0 && Name(a.stages[0]) == "$currentOp" {
		if a.stages[0], err = s.currentOpStage(db, a.stages[0]); err != nil {
			return nil, err
		}
	}
	if !havePipeline {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	a.opts.Deadline, err = deadline(cmd)
	return a, err
}

// pushdown takes the leading $match and $sort (and the $limit after it)
// out of p for the engine's scan of the collection.
func (a *aggregateArgs) pushdown(p *aggregate.Pipeline) engine.FindOptions {
	pd := p.TakePushdown()
	return engine.FindOptions{
		Filter: pd.Filter, Sort: pd.Sort, Limit: pd.Limit, Hint: a.hint, AllowDiskUse: a.opts.AllowDiskUse,
		Txn: a.txn,
	}
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

func (env engineEnv) CollectionStats(db, coll string, scale int64) (aggregate.CollStats, error) {
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
	return aggregate.CollStats{Count: st.Count, Storage: marshal(storageStats(c, st, scale)), Indexes: specs}, nil
}
