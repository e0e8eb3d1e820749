package commands

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
)

// The maintenance commands tools send: dbHash, dataSize, fsync, compact,
// connPoolStats and shutdown.
func init() {
	register(dbHashCmd, untyped("dbHash", arg("collections", tLooseArray)), "dbHash", "dbhash")
	register(dataSizeCmd, &argSpec{path: "dataSize", fields: []argField{arg("keyPattern", tDoc), arg("min", tDoc), arg("max", tDoc),
		arg("maxSize", tSafe), arg("maxObjects", tSafe), arg("estimate", tBool)}}, "dataSize", "datasize")
	registerAdmin(fsyncCmd, untyped("fsync", arg("lock", tBool), ignore("async", tBool, "deprecated; every fsync is synchronous")), "fsync")
	registerAdmin(fsyncUnlockCmd, untyped("fsyncUnlock"), "fsyncUnlock")
	registerAdmin(lockInfoCmd, untyped("lockInfo", ignore("includeStorageEngineDump", tBool, "Folio's store has no lock table to dump")), "lockInfo")
	authzRules["lockInfo"] = onCluster("serverStatus")
	register(compactCmd, untyped("compact", ignore("force", tBool, "needed by MongoDB before 6.0 on a primary; a single Folio needs no permission")), "compact")
	namesCollection("compact")
	registerAdmin(connPoolStatsCmd, untyped("connPoolStats"), "connPoolStats")
	registerAdmin(shutdownCmd, untyped("shutdown",
		ignore("force", tBool, "forces a shutdown without caught-up secondaries; one node has none"),
		ignore("timeoutSecs", tAny, "how long a primary waits for secondaries to catch up; one node has none")), "shutdown")
	authzRules["shutdown"] = onCluster("shutdown")
	authzRules["dbHash"] = onDatabase("dbHash")
	authzRules["dbhash"] = authzRules["dbHash"]
	authzRules["dataSize"] = authzRule{needs: dataSizeNeeds}
	authzRules["datasize"] = authzRules["dataSize"]
	authzRules["fsync"] = onCluster("fsync")
	authzRules["fsyncUnlock"] = onCluster("unlock")
	authzRules["compact"] = onNamespace("compact")
	authzRules["connPoolStats"] = onCluster("connPoolStats")
}

// dbHashCmd answers {dbHash: 1, collections: [...]}: the MD5 of each
// collection's documents in _id order (engine.CollectionHash), and of
// them all, by collection name.
// https://www.mongodb.com/docs/v7.0/reference/command/dbHash/
func dbHashCmd(s *Service, r *Request) (bson.Raw, error) {
	start := time.Now()
	var only map[string]bool
	if r.args.has("collections") {
		vals, _ := r.args.value("collections").Array().Values()
		only = map[string]bool{}
		for _, v := range vals {
			name, ok := v.StringValueOK()
			if !ok {
				return nil, wrongType("dbHash", "collections", v, "string")
			}
			only[name] = true
		}
	}
	colls, capped, uuids := bson.D{}, bson.A{}, bson.D{}
	all := md5.New()
	for _, c := range s.Engine.Collections(r.DB) {
		if (only != nil && !only[c.Name]) || c.Name == "system.profile" {
			continue
		}
		h, err := s.Engine.CollectionHash(r.Ctx, r.DB, c.Name)
		if err != nil {
			return nil, err
		}
		all.Write([]byte(c.Name))
		all.Write([]byte(h))
		colls = append(colls, bson.E{Key: c.Name, Value: h})
		uuids = append(uuids, bson.E{Key: c.Name, Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}})
		if c.Options.Capped {
			capped = append(capped, c.Name)
		}
	}
	return marshal(bson.D{
		{Key: "host", Value: s.prettyHostName()},
		{Key: "collections", Value: colls},
		{Key: "capped", Value: capped},
		{Key: "uuids", Value: uuids},
		{Key: "md5", Value: hex.EncodeToString(all.Sum(nil))},
		{Key: "timeMillis", Value: time.Since(start).Milliseconds()},
		{Key: "fromCache", Value: bson.A{}},
	}), nil
}

// dataSizeNeeds: find on the namespace dataSize names.
func dataSizeNeeds(r *Request) ([]need, error) {
	ns, _ := r.args.first().StringValueOK()
	return []need{{splitNS(ns), "find"}}, nil
}

// dataSizeCmd answers {dataSize: "db.coll"}: the bytes and number of its
// documents, or with min and max of those in a range of an index's keys
// (engine.DataSize), counted by a scan.
// https://www.mongodb.com/docs/v7.0/reference/command/dataSize/
func dataSizeCmd(s *Service, r *Request) (bson.Raw, error) {
	start := time.Now()
	v := r.args.first()
	if v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
		return nil, mongoerr.MissingField("dataSize.dataSize")
	}
	ns, ok := v.StringValueOK()
	if !ok {
		return nil, wrongType("dataSize", "dataSize", v, "string")
	}
	if hasMin, hasMax := r.args.has("min"), r.args.has("max"); hasMin != hasMax {
		if hasMin {
			return nil, mongoerr.New(mongoerr.BadValue, "Max must be set if min is set.")
		}
		return nil, mongoerr.New(mongoerr.BadValue, "Max must not be set if min is not set.")
	}
	// NamespaceString's, then the collection lock's checks
	if err := nsname.CheckFullName(ns); err != nil {
		return nil, err
	}
	db, coll, _ := strings.Cut(ns, ".")
	if err := s.notOnView(r, db, coll); err != nil {
		return nil, err
	}
	estimate := r.args.bool("estimate")
	res, err := s.Engine.DataSize(db, coll, engine.SizeOptions{
		KeyPattern: r.args.doc("keyPattern"), Min: r.args.doc("min"), Max: r.args.doc("max"), Estimate: estimate,
		MaxSize: r.args.safeInt("maxSize"), MaxObjects: r.args.safeInt("maxObjects"), Ctx: r.Ctx,
	})
	if err != nil {
		return nil, err
	}
	var d bson.D
	if res.MaxReached {
		d = append(d, bson.E{Key: "maxReached", Value: true})
	}
	d = append(d, bson.E{Key: "size", Value: res.Size}, bson.E{Key: "numObjects", Value: res.Objects},
		bson.E{Key: "millis", Value: time.Since(start).Milliseconds()})
	if !res.Empty {
		d = append(d, bson.E{Key: "estimate", Value: estimate})
	}
	return marshal(d), nil
}

// fsyncCmd flushes every write to disk ({fsync: 1}); with lock: true it
// then takes the fsync lock once more (see fsyncLock), so that the files
// stay as they are for a backup.
// https://www.mongodb.com/docs/v7.0/reference/command/fsync/
func fsyncCmd(s *Service, r *Request) (bson.Raw, error) {
	lock := r.args.bool("lock")
	if lock && !s.Engine.SoleWriter() {
		return nil, mongoerr.New(mongoerr.NotImplemented, "fsync lock is not supported on a store other Folio servers write too")
	}
	if err := s.Engine.Sync(); err != nil {
		return nil, err
	}
	if !lock {
		return marshal(bson.D{{Key: "numFiles", Value: int32(1)}}), nil
	}
	n := s.fsync.lock()
	return marshal(bson.D{
		{Key: "info", Value: "now locked against writes, use db.fsyncUnlock() to unlock"},
		{Key: "lockCount", Value: n},
		{Key: "seeAlso", Value: "http://dochub.mongodb.org/core/fsynccommand"},
	}), nil
}

// fsyncUnlockCmd releases the fsync lock once; writes resume when it is
// released as many times as it was taken.
// https://www.mongodb.com/docs/v7.0/reference/command/fsyncUnlock/
func fsyncUnlockCmd(s *Service, r *Request) (bson.Raw, error) {
	n, ok := s.fsync.unlock()
	if !ok {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "fsyncUnlock called when not locked")
	}
	return marshal(bson.D{{Key: "info", Value: "fsyncUnlock completed"}, {Key: "lockCount", Value: n}}), nil
}

// lockInfoCmd lists the locks held and awaited, in the shape of MongoDB's
// lockInfo: Folio's one server-wide lock is the fsync lock, held in S mode
// while taken (with the number of times it was taken as its holders) and
// awaited in IX mode by the writes it holds back. Documents, collections
// and the catalog are guarded by storage transactions and short internal
// locks that no command holds across a wait, and are not listed.
// https://www.mongodb.com/docs/v7.0/reference/command/lockInfo/
func lockInfoCmd(s *Service, r *Request) (bson.Raw, error) {
	locks := bson.A{}
	s.fsync.mu.Lock()
	count := s.fsync.count
	s.fsync.mu.Unlock()
	if count > 0 {
		granted := bson.A{}
		for range count {
			granted = append(granted, bson.D{{Key: "mode", Value: "S"}, {Key: "convertMode", Value: "NONE"}, {Key: "enqueueAtFront", Value: false},
				{Key: "compatibleFirst", Value: false}, {Key: "debugInfo", Value: "fsyncLock"}, {Key: "clientInfo", Value: bson.D{{Key: "desc", Value: "fsyncLockWorker"}}}})
		}
		pending := bson.A{}
		for _, op := range s.ops.list() {
			if !op.awaitingFsync.Load() {
				continue
			}
			client := bson.D{{Key: "opid", Value: op.id}}
			if op.conn != nil {
				client = append(bson.D{{Key: "desc", Value: "conn" + strconv.FormatInt(op.conn.ID, 10)}, {Key: "connectionId", Value: op.conn.ID}}, client...)
			}
			pending = append(pending, bson.D{{Key: "mode", Value: "IX"}, {Key: "convertMode", Value: "NONE"}, {Key: "enqueueAtFront", Value: false},
				{Key: "compatibleFirst", Value: false}, {Key: "debugInfo", Value: op.ns}, {Key: "clientInfo", Value: client}})
		}
		locks = append(locks, bson.D{{Key: "resourceId", Value: "{Global}"}, {Key: "granted", Value: granted}, {Key: "pending", Value: pending}})
	}
	return marshal(bson.D{{Key: "lockInfo", Value: locks}}), nil
}

// fsyncLock is the fsync lock: taken by fsync with lock: true, counted,
// and released by as many fsyncUnlocks. While it is held, commands that
// write wait for its release (or for their operation to end), as in
// MongoDB; reads go on.
type fsyncLock struct {
	held     atomic.Bool
	mu       sync.Mutex
	count    int64
	released chan struct{} // closed when count returns to 0
}

func (l *fsyncLock) lock() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 {
		l.released = make(chan struct{})
		l.held.Store(true)
	}
	l.count++
	return l.count
}

func (l *fsyncLock) unlock() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 {
		return 0, false
	}
	l.count--
	if l.count == 0 {
		l.held.Store(false)
		close(l.released)
	}
	return l.count, true
}

// wait returns once the lock is free, or with the interruption's error
// once ctx ends.
func (l *fsyncLock) wait(ctx context.Context) error {
	for l.held.Load() {
		l.mu.Lock()
		ch := l.released
		l.mu.Unlock()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return mongoerr.Interruption(ctx)
		}
	}
	return nil
}

// compactCmd compacts a collection's documents and index entries in the
// store and reports the disk space freed.
// https://www.mongodb.com/docs/v7.0/reference/command/compact/
func compactCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, err := collectionArg(r.Cmd, r.DB)
	if err == nil {
		err = s.notOnView(r, r.DB, coll)
	}
	if err != nil {
		return nil, err
	}
	before, after, err := s.Engine.Compact(r.Ctx, r.DB, coll)
	if err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "bytesFreed", Value: max(before-after, 0)}}), nil
}

// connPoolStatsCmd reports the pools of outgoing connections: a single
// Folio server opens none, so every figure is zero.
// https://www.mongodb.com/docs/v7.0/reference/command/connPoolStats/
func connPoolStatsCmd(s *Service, r *Request) (bson.Raw, error) {
	zero := func(names ...string) bson.D {
		d := bson.D{}
		for _, n := range names {
			d = append(d, bson.E{Key: n, Value: int32(0)})
		}
		return d
	}
	d := zero("numClientConnections", "numAScopedConnections", "totalInUse", "totalAvailable", "totalLeased",
		"totalCreated", "totalRefreshing", "totalRefreshed", "totalWasNeverUsed", "totalConnUsageTimeMillis")
	d = append(d, bson.E{Key: "replicaSetMatchingStrategy", Value: "matchPrimaryNode"},
		bson.E{Key: "pools", Value: bson.D{}}, bson.E{Key: "hosts", Value: bson.D{}}, bson.E{Key: "replicaSets", Value: bson.D{}})
	return marshal(d), nil
}

// shutdownCmd asks the process to shut the server down as on SIGTERM
// (running operations get the shutdown timeout, then are interrupted). It
// answers first; the connection then closes with the others.
// https://www.mongodb.com/docs/v7.0/reference/command/shutdown/
func shutdownCmd(s *Service, r *Request) (bson.Raw, error) {
	if s.Shutdown == nil {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "this server cannot be shut down by a command")
	}
	s.Log.Info("shutdown requested by a client", "client", r.Conn.Remote)
	s.Shutdown()
	return nil, nil
}
