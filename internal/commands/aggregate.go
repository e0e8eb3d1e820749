package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(aggregateCmd, "aggregate")
}

func aggregateCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	collv := r.Cmd.Lookup("aggregate")
	if collv.Type != bson.TypeString {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support collection-less aggregations yet")
	}
	coll := collv.StringValue()
	var stages []bson.Raw
	var batchSize int64
	haveCursor, havePipeline := false, false
	var o engine.FindOptions
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
			o.AllowDiskUse, err = argBool("aggregate", key, v)
		case "hint":
			o.Hint = v
		case "explain":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support explain yet")
		case "collation":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
		case "let":
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
	// A leading $match becomes the scan's filter, so it can use the
	// engine's access paths.
	if len(stages) > 0 {
		if m, err := stages[0].LookupErr("$match"); err == nil && m.Type == bson.TypeEmbeddedDocument && len(stages[0].Index(0).Key()) > 0 {
			o.Filter = m.Document()
			stages = stages[1:]
		}
	}
	p, err := aggregate.Parse(stages)
	if err != nil {
		return nil, err
	}
	cur, err := s.Engine.Find(r.DB, coll, o)
	if err != nil {
		return nil, err
	}
	return s.serveFirstBatch(r.DB, coll, p.Run(cur), batchSize, false)
}
