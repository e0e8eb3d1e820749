package commands

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/timeseries"
)

func init() {
	register(cloneCollectionAsCappedCmd, cloneCollectionAsCappedSpec, "cloneCollectionAsCapped")
	register(convertToCappedCmd, convertToCappedSpec, "convertToCapped")
	namesCollection("convertToCapped")
}

// cloneCollectionAsCapped and convertToCapped are MongoDB commands without
// an IDL declaration: fields they do not read are ignored.
// https://www.mongodb.com/docs/v7.0/reference/command/cloneCollectionAsCapped/
// https://www.mongodb.com/docs/v7.0/reference/command/convertToCapped/
var (
	cloneCollectionAsCappedSpec = untyped("cloneCollectionAsCapped",
		arg("toCollection", tAny),
		arg("size", tAny),
		refuseTrue("temp", tBool, "temporary collections"),
	)
	convertToCappedSpec = untyped("convertToCapped", arg("size", tAny))
)

// cloneCollectionAsCappedCmd copies a collection into a new capped one of
// the given size.
func cloneCollectionAsCappedCmd(s *Service, r *Request) (bson.Raw, error) {
	from, ok := r.args.first().StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "'cloneCollectionAsCapped' must be of type String")
	}
	to, ok := r.args.value("toCollection").StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "'toCollection' must be of type String")
	}
	for _, n := range [...]struct{ what, name string }{{"source", from}, {"target", to}} {
		if engine.ValidateCollName(r.DB, n.name) != nil {
			return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid %s collection name: %s", n.what, printableName(n.name))
		}
	}
	size, err := cappedSizeArg(&r.args)
	if err != nil {
		return nil, err
	}
	if err := s.cappedDBExists(r); err != nil {
		return nil, err
	}
	return nil, s.cloneAsCapped(r, from, to, size)
}

// cappedDBExists fails as cloneCollectionAsCapped and convertToCapped do,
// before they look for the collection, when the database holds nothing.
func (s *Service) cappedDBExists(r *Request) error {
	if len(s.Engine.Collections(r.DB)) == 0 {
		return mongoerr.New(mongoerr.NamespaceNotFound, "database %s not found", r.DB)
	}
	return nil
}

// convertToCappedCmd turns a collection into a capped one, as MongoDB
// does: it clones it as capped into a temporary collection, which then
// replaces it. Indexes other than _id's are not kept.
func convertToCappedCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	size, err := cappedSizeArg(&r.args)
	if err != nil {
		return nil, err
	}
	if err := s.cappedDBExists(r); err != nil {
		return nil, err
	}
	if s.Engine.Collection(r.DB, name) == nil {
		if v, err := s.lookupView(r, r.DB, name); err != nil {
			return nil, err
		} else if v != nil {
			return nil, mongoerr.New(mongoerr.CommandNotSupportedOnView, "convertToCapped not supported on view: %s.%s", r.DB, name)
		}
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "source collection %s.%s does not exist", r.DB, name)
	}
	var tmp string
	for tmp == "" || s.Engine.Collection(r.DB, tmp) != nil {
		tmp = fmt.Sprintf("tmp%05d.convertToCapped.%s", rand.IntN(100000), name)
	}
	if err := s.cloneAsCapped(r, name, tmp, size); err != nil {
		_, _ = s.Engine.DropCollection(r.DB, tmp)
		return nil, err
	}
	if err := s.Engine.RenameCollection(r.DB, tmp, r.DB, name, true); err != nil {
		_, _ = s.Engine.DropCollection(r.DB, tmp)
		return nil, err
	}
	return nil, nil
}

// maxCappedSize is the largest capped collection size MongoDB accepts (1 PB).
const maxCappedSize = 1 << 50

// cappedSizeArg reads the size of cloneCollectionAsCapped and
// convertToCapped as MongoDB's safeNumberLong reads it (a double
// truncated, a decimal rounded half to even, anything else 0): it must be
// positive and at most 1 PB.
func cappedSizeArg(c *cmdArgs) (int64, error) {
	size, _ := safeInt64(c.value("size"))
	switch {
	case size <= 0:
		return 0, mongoerr.New(mongoerr.InvalidOptions, "invalid command spec: the 'size' field must be a number greater than 0")
	case size > maxCappedSize:
		return 0, mongoerr.New(mongoerr.BadValue, "capped collection size %d is larger than the maximum of 1 PB", size)
	}
	return size, nil
}

// cloneAsCapped creates db.to, capped at size, with db.from's options, and
// copies db.from's documents into it in their natural order, without
// validating them. As MongoDB, it skips the documents at the start that a
// collection of that size would evict anyway (4 times their size counted
// against the source's size beyond twice the cap); the capped collection
// evicts the rest as they come.
func (s *Service) cloneAsCapped(r *Request, from, to string, size int64) error {
	src := s.Engine.Collection(r.DB, from)
	if src == nil {
		if v, err := s.lookupView(r, r.DB, from); err != nil {
			return err
		} else if v != nil {
			return mongoerr.New(mongoerr.CommandNotSupportedOnView, "cloneCollectionAsCapped not supported for views: %s.%s", r.DB, from)
		}
		return mongoerr.New(mongoerr.NamespaceNotFound, "source collection %s.%s does not exist", r.DB, from)
	}
	if strings.HasPrefix(from, timeseries.BucketsPrefix) || strings.HasPrefix(to, timeseries.BucketsPrefix) {
		return mongoerr.New(mongoerr.IllegalOperation, "cannot clone a time series collection's buckets as capped: %s.%s", r.DB, from)
	}
	if v, err := s.lookupView(r, r.DB, to); err != nil {
		return err
	} else if v != nil {
		return mongoerr.New(mongoerr.CommandNotSupportedOnView, "cloneCollectionAsCapped cannot write to the view %s.%s", r.DB, to)
	}
	if s.Engine.Collection(r.DB, to) != nil {
		return mongoerr.New(mongoerr.NamespaceExists, "cloneCollectionAsCapped failed - destination collection %s.%s already exists. source collection: %s.%s", r.DB, to, r.DB, from)
	}
	if src.Clustered() {
		// MongoDB's clone keeps the source's options, clusteredIndex
		// among them, making a capped clustered collection
		// (capped_utils.cpp cloneCollectionAsCapped), which Folio does
		// not have.
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support cloning a clustered collection as capped (a capped clustered collection) yet")
	}
	opts := src.CurrentOptions()
	if !opts.Capped {
		opts.Max = 0
	}
	opts.Capped, opts.Size = true, (size+255)/256*256
	if err := s.Engine.CreateCollection(r.DB, to, opts); err != nil {
		return err
	}
	stats, err := s.Engine.Stats(src)
	if err != nil {
		return err
	}
	excess := stats.Size - 2*opts.Size
	wo := engine.WriteOptions{Journal: r.Args.WriteConcern.Journal(), Ctx: r.Ctx, BypassValidation: true}
	var batch []bson.Raw
	var batchBytes int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, werrs, err := s.Engine.Insert(r.DB, to, batch, true, wo)
		if err == nil && len(werrs) > 0 {
			err = werrs[0].Err
		}
		batch, batchBytes = batch[:0], 0
		return err
	}
	var insertErr error
	err = s.Engine.ScanDocuments(r.Ctx, r.DB, from, func(doc []byte) {
		if insertErr != nil {
			return
		}
		if excess > 0 {
			excess -= 4 * int64(len(doc))
			return
		}
		batch = append(batch, bson.Raw(bytes.Clone(doc))) // doc is lent until fn returns
		if batchBytes += len(doc); len(batch) == maxWriteBatchSize || batchBytes > engine.MaxDocumentSize {
			insertErr = flush()
		}
	})
	if err == nil {
		err = insertErr
	}
	if err == nil {
		err = flush()
	}
	return err
}
