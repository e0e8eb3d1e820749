package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(dbStatsCmd, dbStatsSpec, "dbStats", "dbstats")
	register(collStatsCmd, collStatsSpec, "collStats", "collstats")
	namesCollection("collStats", "collstats")
}

// dbStatsSpec declares dbStats' fields.
// https://www.mongodb.com/docs/v7.0/reference/command/dbStats/
var dbStatsSpec = &argSpec{path: "dbStats", fields: []argField{
	arg("scale", tAny),
	arg("freeStorage", tBool),
}}

// collStatsSpec declares collStats' fields.
// https://www.mongodb.com/docs/v7.0/reference/command/collStats/
var collStatsSpec = &argSpec{path: "collStats", fields: []argField{
	arg("scale", tAny),
	// MongoDB's CollStatsCommand declares validationLevel (an enumeration
	// it checks) and reads nothing from it.
	ignore("validationLevel", tValidationLevel, "declared by MongoDB's collStats, which does not use it"),
	ignore("verbose", tBool, "adds storage engine details; Folio's storage engine has none to add"),
	ignore("waitForLock", tBool, "Folio's statistics take no lock to wait for"),
	ignore("numericOnly", tBool, "leaves out the storage engine's non-numeric details, which Folio does not report"),
}}

// tValidationLevel is the IDL's ValidationLevel: a string naming one of
// the levels (validationLevels), any other BadValue.
var tValidationLevel = argType{mask: tString.mask, want: tString.want, check: checkValidationLevel}

func checkValidationLevel(path, field string, v bson.RawValue) error {
	if level, _ := v.StringValueOK(); !validationLevels[level] {
		return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '%s.%s' is not a valid value.", level, path, field)
	}
	return nil
}

// collStatsScale reads collStats' scale: any number, truncated toward zero,
// which must then be at least 1 (MongoDB's StorageStatsSpec).
func collStatsScale(v bson.RawValue) (int64, error) {
	n, ok := safeInt32(v)
	if !ok {
		return 0, mongoerr.WrongNumberType("collStats.scale", values.TypeName(v.Type))
	}
	if n < 1 {
		return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'scale' value must be >= 1, actual value '%d'", n)
	}
	return int64(n), nil
}

// dbStatsScale reads dbStats' scale: any number, truncated toward zero,
// which must then be greater than zero.
func dbStatsScale(v bson.RawValue) (int64, error) {
	n, ok := safeInt64(v)
	if !ok {
		return 0, mongoerr.WrongNumberType("dbStats.scale", values.TypeName(v.Type))
	}
	if n <= 0 {
		return 0, mongoerr.New(mongoerr.BadValue, "Scale factor must be greater than zero")
	}
	return n, nil
}

// collStatsCmd answers collStats in MongoDB 7.0's shape: sizes divided by
// scale (integer division) and typed by magnitude as MongoDB's
// appendNumber types them. A missing collection answers ok with zeros, as
// MongoDB does.
func collStatsCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	scale := int64(1)
	if v := r.args.value("scale"); v.Type != 0 && v.Type != bson.TypeNull {
		if scale, err = collStatsScale(v); err != nil {
			return nil, err
		}
	}
	ns := r.DB + "." + name
	if s.Engine.IsOplog(r.DB, name) {
		st, err := s.Engine.OplogStats()
		if err != nil {
			return nil, err
		}
		return marshal(append(bson.D{{Key: "ns", Value: ns}}, storageStats(oplogOptions(s.Engine), st, scale, nil)...)), nil
	}
	c := s.Engine.Collection(r.DB, name)
	if c == nil {
		// A view has no storage (166); a time series collection's are its
		// buckets'.
		if v, err := s.lookupView(r, r.DB, name); err != nil {
			return nil, err
		} else if v != nil {
			ts, err := s.tsOfView(r, r.DB, v)
			if err != nil {
				return nil, err
			} else if ts == nil {
				return nil, viewError(r.DB, name)
			}
			c = s.Engine.Collection(r.DB, ts.buckets)
		}
	}
	if c == nil {
		return marshal(bson.D{
			{Key: "ns", Value: ns},
			{Key: "size", Value: int32(0)},
			{Key: "count", Value: int32(0)},
			{Key: "numOrphanDocs", Value: int32(0)},
			{Key: "storageSize", Value: int32(0)},
			{Key: "totalSize", Value: int32(0)},
			{Key: "nindexes", Value: int32(0)},
			{Key: "totalIndexSize", Value: int32(0)},
			{Key: "indexDetails", Value: bson.D{}},
			{Key: "indexSizes", Value: bson.D{}},
			{Key: "scaleFactor", Value: int32(scale)},
		}), nil
	}
	st, err := s.Engine.Stats(c)
	if err != nil {
		return nil, err
	}
	chunks, err := shardedChunks(s.Engine, c)
	if err != nil {
		return nil, err
	}
	out := append(bson.D{{Key: "ns", Value: ns}}, storageStats(c.Options, st, scale, bucketStatsOf(&s.tsOpen, c))...)
	if chunks == 0 {
		return marshal(out), nil // as a replica set member answers
	}
	// a sharded collection as a router answers: sharded first, nchunks,
	// the chunks holding the collection, last
	out = append(bson.D{{Key: "sharded", Value: true}}, out...)
	return marshal(append(out, bson.E{Key: "nchunks", Value: int32(chunks)})), nil
}

// storageStats are collStats' fields after ns, which $collStats reports as
// storageStats, of a collection with options opts; buckets describes a
// time series collection's buckets, whose count and average size are
// those of their timeseries section (which scale leaves alone), and which
// have no _id index (MongoDB clusters them by _id).
func storageStats(opts engine.CollectionOptions, st engine.CollectionStats, scale int64, buckets *bucketStats) bson.D {
	d := bson.D{{Key: "size", Value: number(st.Size / scale)}}
	var avg bson.E
	if st.Count > 0 {
		avg = bson.E{Key: "avgObjSize", Value: int32(st.Size / st.Count)}
	}
	if buckets == nil {
		d = append(d, bson.E{Key: "count", Value: number(st.Count)})
		if st.Count > 0 {
			d = append(d, avg)
		}
	} else {
		ts := bson.D{{Key: "bucketsNs", Value: buckets.ns}, {Key: "bucketCount", Value: number(st.Count)}}
		if st.Count > 0 {
			ts = append(ts, bson.E{Key: "avgBucketSize", Value: avg.Value})
		}
		d = append(d, bson.E{Key: "timeseries", Value: append(ts, buckets.exec...)})
		st.IndexSizes = slices.DeleteFunc(slices.Clone(st.IndexSizes), func(ix engine.IndexSize) bool { return ix.Name == "_id_" })
	}
	d = append(d,
		bson.E{Key: "numOrphanDocs", Value: int32(0)},
		bson.E{Key: "storageSize", Value: number(st.StorageSize / scale)},
		// Pebble never leaves reusable free space inside its files.
		bson.E{Key: "freeStorageSize", Value: int32(0)},
		bson.E{Key: "capped", Value: opts.Capped},
	)
	if opts.Capped {
		d = append(d,
			bson.E{Key: "max", Value: number(opts.Max)},
			bson.E{Key: "maxSize", Value: number(opts.Size / scale)},
		)
	}
	// indexDetails holds the storage engine's details of each index, of
	// which Folio's has none to add
	sizes, details := make(bson.D, 0, len(st.IndexSizes)), make(bson.D, 0, len(st.IndexSizes))
	for _, ix := range st.IndexSizes {
		sizes = append(sizes, bson.E{Key: ix.Name, Value: number(ix.Size / scale)})
		details = append(details, bson.E{Key: ix.Name, Value: bson.D{}})
	}
	builds := bson.A{}
	for _, name := range st.Builds {
		builds = append(builds, name)
	}
	total := st.TotalIndexSize()
	return append(d,
		bson.E{Key: "nindexes", Value: int32(len(st.IndexSizes))},
		bson.E{Key: "indexDetails", Value: details},
		bson.E{Key: "indexBuilds", Value: builds},
		bson.E{Key: "totalIndexSize", Value: number(total / scale)},
		bson.E{Key: "indexSizes", Value: sizes},
		bson.E{Key: "totalSize", Value: number((st.StorageSize + total) / scale)},
		bson.E{Key: "scaleFactor", Value: int32(scale)},
	)
}

// bucketStats are what collStats reports of a time series collection's
// buckets beside their count and size: their namespace, and what inserts
// did to them (tsExecStats).
type bucketStats struct {
	ns   string
	exec bson.D
}

// bucketStatsOf is c's bucketStats when it holds a time series
// collection's buckets, else nil.
func bucketStatsOf(ob *openBuckets, c *engine.Collection) *bucketStats {
	if c.Options.Timeseries == nil {
		return nil
	}
	ns := c.DB + "." + c.Name
	return &bucketStats{ns: ns, exec: ob.statsOf(ns)}
}

// dbStatsCmd answers dbStats in MongoDB 7.0's typed shape (counts int64,
// sizes doubles). A database without collections answers zeros; the
// filesystem figures are left out when the data is in memory.
func dbStatsCmd(s *Service, r *Request) (bson.Raw, error) {
	scale := int64(1)
	if v := r.args.value("scale"); v.Type != 0 && v.Type != bson.TypeNull {
		var err error
		if scale, err = dbStatsScale(v); err != nil {
			return nil, err
		}
	}
	freeStorage := r.args.bool("freeStorage")
	colls := s.Engine.Collections(r.DB)
	var objects, size, storage, indexes, indexSize int64
	add := func(st engine.CollectionStats) {
		objects += st.Count
		size += st.Size
		storage += st.StorageSize
		indexes += int64(len(st.IndexSizes))
		indexSize += st.TotalIndexSize()
	}
	for _, c := range colls {
		st, err := s.Engine.Stats(c)
		if err != nil {
			return nil, err
		}
		add(st)
	}
	ncolls := int64(len(colls))
	if s.Engine.IsOplog(r.DB, engine.OplogColl) {
		st, err := s.Engine.OplogStats()
		if err != nil {
			return nil, err
		}
		add(st)
		ncolls++
	}
	views, err := s.views(r, r.DB)
	if err != nil {
		return nil, err
	}
	var avg float64
	if objects > 0 {
		avg = float64(size) / float64(objects)
	}
	d := bson.D{
		{Key: "db", Value: r.DB},
		{Key: "collections", Value: ncolls},
		{Key: "views", Value: int64(len(views))},
		{Key: "objects", Value: objects},
		{Key: "avgObjSize", Value: avg},
		{Key: "dataSize", Value: float64(size / scale)},
		{Key: "storageSize", Value: float64(storage / scale)},
	}
	d = append(d,
		bson.E{Key: "indexes", Value: indexes},
		bson.E{Key: "indexSize", Value: float64(indexSize / scale)},
		bson.E{Key: "totalSize", Value: float64((storage + indexSize) / scale)},
	)
	if freeStorage {
		// after totalSize, as 7.0's typed reply orders them; Pebble never
		// leaves reusable free space inside its files
		d = append(d,
			bson.E{Key: "freeStorageSize", Value: float64(0)},
			bson.E{Key: "indexFreeStorageSize", Value: float64(0)},
			bson.E{Key: "totalFreeStorageSize", Value: float64(0)},
		)
	}
	d = append(d, bson.E{Key: "scaleFactor", Value: scale})
	if s.DBPath != "" {
		// MongoDB reports zeros for a database that does not exist.
		var total, used int64
		ok := true
		if len(colls) > 0 {
			total, used, ok = fsSpace(s.DBPath)
		}
		if ok {
			d = append(d,
				bson.E{Key: "fsUsedSize", Value: float64(used / scale)},
				bson.E{Key: "fsTotalSize", Value: float64(total / scale)},
			)
		}
	}
	return marshal(d), nil
}
