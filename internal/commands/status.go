package commands

import (
	"os"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
	"github.com/folio-db/folio/internal/wire"
)

func init() {
	register(serverStatusCmd, serverStatusSpec, "serverStatus")
	registerAdmin(getLogCmd, &argSpec{path: "getLog", value: &getLogValue}, "getLog")
	registerTest(clearLogCmd, &argSpec{path: "clearLog"}, "clearLog")
	registerAdmin(logRotateCmd, &argSpec{path: "logRotate"}, "logRotate")
	authzRules["logRotate"] = onCluster("logRotate")
}

// serverStatusSpec declares serverStatus: its fields name sections, a
// false or 0 leaving a section out.
// https://www.mongodb.com/docs/v7.0/reference/command/serverStatus/
var serverStatusSpec = &argSpec{path: "serverStatus", open: "section names: 0 or false leaves the section out, 1 or true asks for the section, which Folio includes when it has it"}

// serverStatusCmd answers serverStatus with the sections MongoDB 7.0 sends
// that Folio has figures for, in MongoDB's order (header fields, sections
// by name, metrics last) and with its number types, complete enough for
// mongostat. Every figure is measured; sections of MongoDB machinery Folio
// does not have (wiredTiger, tcmalloc, sharding...) are absent.
func serverStatusCmd(s *Service, r *Request) (bson.Raw, error) {
	host := s.prettyHostName()
	now := time.Now()
	up := now.Sub(s.Started)
	d := bson.D{
		{Key: "host", Value: host},
		{Key: "version", Value: mongoVersion},
		{Key: "process", Value: "folio"},
		{Key: "pid", Value: int64(os.Getpid())},
		// uptime is whole seconds as a double, as MongoDB sends it.
		{Key: "uptime", Value: float64(int64(up.Seconds()))},
		{Key: "uptimeMillis", Value: up.Milliseconds()},
		{Key: "uptimeEstimate", Value: int64(up.Seconds())},
		{Key: "localTime", Value: bson.NewDateTimeFromTime(now)},
		{Key: "asserts", Value: bson.D{
			{Key: "regular", Value: int32(s.Asserts.Regular.Load())},
			{Key: "warning", Value: int32(0)},
			{Key: "msg", Value: int32(0)},
			{Key: "user", Value: int32(s.Asserts.User.Load())},
			{Key: "tripwire", Value: int32(0)},
			{Key: "rollovers", Value: int32(0)},
		}},
		{Key: "catalogStats", Value: s.catalogStats()},
		{Key: "connections", Value: s.connectionsStatus()},
		{Key: "extra_info", Value: extraInfo()},
		{Key: "globalLock", Value: s.globalLock(now)},
		{Key: "mem", Value: memStatus()},
		{Key: "network", Value: bson.D{
			{Key: "bytesIn", Value: s.Net.BytesIn.Load()},
			{Key: "bytesOut", Value: s.Net.BytesOut.Load()},
			{Key: "physicalBytesIn", Value: s.Net.PhysicalBytesIn.Load()},
			{Key: "physicalBytesOut", Value: s.Net.PhysicalBytesOut.Load()},
			{Key: "numSlowDNSOperations", Value: int64(0)},
			{Key: "numSlowSSLOperations", Value: int64(0)},
			{Key: "numRequests", Value: s.Net.NumRequests.Load()},
			{Key: "compression", Value: s.compressionStatus()},
		}},
		{Key: "opcounters", Value: bson.D{
			{Key: "insert", Value: s.Ops.Insert.Load()},
			{Key: "query", Value: s.Ops.Query.Load()},
			{Key: "update", Value: s.Ops.Update.Load()},
			{Key: "delete", Value: s.Ops.Delete.Load()},
			{Key: "getmore", Value: s.Ops.GetMore.Load()},
			{Key: "command", Value: s.Ops.Command.Load()},
		}},
		// One node replicates nothing.
		{Key: "opcountersRepl", Value: bson.D{
			{Key: "insert", Value: int64(0)},
			{Key: "query", Value: int64(0)},
			{Key: "update", Value: int64(0)},
			{Key: "delete", Value: int64(0)},
			{Key: "getmore", Value: int64(0)},
			{Key: "command", Value: int64(0)},
		}},
	}
	if s.ReplSetName != "" {
		d = append(d, bson.E{Key: "repl", Value: s.memberFields(s.state(), "ismaster")})
	}
	d = append(d,
		bson.E{Key: "storageEngine", Value: bson.D{
			{Key: "name", Value: "pebble"},
			// Reads see committed data only, and transactions read one
			// snapshot.
			{Key: "supportsCommittedReads", Value: true},
			// Drops are range deletions in the catalog change's batch.
			{Key: "supportsPendingDrops", Value: false},
			{Key: "dropPendingIdents", Value: int64(0)},
			{Key: "supportsSnapshotReadConcern", Value: true},
			{Key: "readOnly", Value: false},
			{Key: "persistent", Value: s.DBPath != ""},
			{Key: "backupCursorOpen", Value: false},
		}},
		bson.E{Key: "transactions", Value: s.transactionStatus()},
		bson.E{Key: "metrics", Value: s.metrics()},
	)
	err := r.args.eachExtra(func(key string, v bson.RawValue) error {
		if !values.Truthy(v) {
			d = slices.DeleteFunc(d, func(e bson.E) bool {
				_, section := e.Value.(bson.D)
				return section && e.Key == key
			})
		}
		return nil
	})
	return marshal(d), err
}

// metrics is serverStatus' metrics section.
func (s *Service) metrics() bson.D {
	total, noTimeout, pinned := s.Cursors.OpenCounts()
	opened, moreThanOne, lifespans := s.Cursors.Counts()
	scans := s.Engine.AllScans()
	// MongoDB's metric tree lists its fields by name (ClientCursor's
	// counters).
	return bson.D{
		{Key: "abortExpiredTransactions", Value: bson.D{
			{Key: "passes", Value: s.Sessions.ReapPasses.Load()},
		}},
		{Key: "commands", Value: s.cmdStats.section(s)},
		{Key: "cursor", Value: bson.D{
			{Key: "lifespan", Value: bson.D{
				{Key: "greaterThanOrEqual10Minutes", Value: lifespans[6]},
				{Key: "lessThan10Minutes", Value: lifespans[5]},
				{Key: "lessThan15Seconds", Value: lifespans[2]},
				{Key: "lessThan1Minute", Value: lifespans[4]},
				{Key: "lessThan1Second", Value: lifespans[0]},
				{Key: "lessThan30Seconds", Value: lifespans[3]},
				{Key: "lessThan5Seconds", Value: lifespans[1]},
			}},
			{Key: "moreThanOneBatch", Value: moreThanOne},
			{Key: "open", Value: bson.D{
				{Key: "noTimeout", Value: noTimeout},
				{Key: "pinned", Value: pinned},
				{Key: "total", Value: total},
			}},
			{Key: "timedOut", Value: s.Cursors.TimedOut()},
			{Key: "totalOpened", Value: opened},
		}},
		{Key: "document", Value: bson.D{
			{Key: "deleted", Value: s.Docs.Deleted.Load()},
			{Key: "inserted", Value: s.Docs.Inserted.Load()},
			{Key: "returned", Value: s.Docs.Returned.Load()},
			{Key: "updated", Value: s.Docs.Updated.Load()},
		}},
		{Key: "queryExecutor", Value: bson.D{
			{Key: "collectionScans", Value: bson.D{
				{Key: "nonTailable", Value: scans.NonTailable()},
				{Key: "total", Value: scans.Total()},
			}},
			{Key: "scanned", Value: s.Scanned.Keys.Load()},
			{Key: "scannedObjects", Value: s.Scanned.Docs.Load()},
		}},
		{Key: "ttl", Value: s.TTLMonitor.metrics()},
	}
}

// catalogStats counts the collections as MongoDB's catalogStats section
// does: those of the admin, config and local databases and system.*
// collections are internal.
func (s *Service) catalogStats() bson.D {
	var user, capped, internal int32
	for _, db := range s.Engine.Databases() {
		for _, c := range s.Engine.Collections(db) {
			if db == "admin" || db == "config" || db == "local" || len(c.Name) > 7 && c.Name[:7] == "system." {
				internal++
				continue
			}
			user++
			if c.Options.Capped {
				capped++
			}
		}
	}
	return bson.D{
		{Key: "collections", Value: user},
		{Key: "capped", Value: capped},
		{Key: "clustered", Value: int32(0)},
		{Key: "timeseries", Value: int32(0)},
		{Key: "views", Value: int32(0)},
		{Key: "internalCollections", Value: internal},
		{Key: "internalViews", Value: int32(0)},
		{Key: "csfle", Value: int32(0)},
		{Key: "queryableEncryption", Value: int32(0)},
	}
}

// writeCommands and readCommands classify running operations for
// globalLock.activeClients.
var (
	writeCommands = map[string]bool{
		"insert": true, "update": true, "delete": true, "findAndModify": true, "create": true, "drop": true,
		"dropDatabase": true, "createIndexes": true, "dropIndexes": true, "collMod": true, "renameCollection": true,
		"commitTransaction": true, "abortTransaction": true,
	}
	readCommands = map[string]bool{
		"find": true, "getMore": true, "aggregate": true, "count": true, "distinct": true, "listCollections": true,
		"listIndexes": true, "dbStats": true, "collStats": true, "validate": true, "explain": true,
	}
)

// globalLock reports the operations running now as active clients.
// Folio admits every operation at once (no ticket queue), so nothing ever
// waits in currentQueue.
func (s *Service) globalLock(now time.Time) bson.D {
	var readers, writers int32
	for _, op := range s.ops.list() {
		switch {
		case writeCommands[op.name]:
			writers++
		case readCommands[op.name]:
			readers++
		}
	}
	return bson.D{
		{Key: "totalTime", Value: now.Sub(s.Started).Microseconds()},
		{Key: "currentQueue", Value: bson.D{
			{Key: "total", Value: int32(0)},
			{Key: "readers", Value: int32(0)},
			{Key: "writers", Value: int32(0)},
		}},
		{Key: "activeClients", Value: bson.D{
			{Key: "total", Value: readers + writers},
			{Key: "readers", Value: readers},
			{Key: "writers", Value: writers},
		}},
	}
}

// logRotateCmd rotates the server's log file: {logRotate: 1} or
// {logRotate: "server"}. A log written to a stream (no -log-path) has no
// file to rotate, and the command succeeds doing nothing, as MongoDB's
// does with console logging. Folio has no audit log.
// https://www.mongodb.com/docs/v7.0/reference/command/logRotate/
func logRotateCmd(s *Service, r *Request) (bson.Raw, error) {
	switch v := r.args.first(); {
	case v.Type == bson.TypeString && v.StringValue() == "audit":
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio has no audit log to rotate")
	case v.Type == bson.TypeString && v.StringValue() != "server":
		return nil, mongoerr.New(mongoerr.NoSuchKey, "Unknown log type for rotate: %s", v.StringValue())
	case v.Type != bson.TypeString && !v.IsNumber():
		return nil, wrongType("logRotate", "logRotate", v, "[int, string]")
	}
	if s.RotateLog == nil {
		return nil, nil
	}
	if err := s.RotateLog(); err != nil {
		if s.Log != nil {
			s.Log.Error("Log rotation failed", "error", err)
		}
		return nil, mongoerr.New(mongoerr.FileRenameFailed, "Log rotation failed due to one or more errors")
	}
	return nil, nil
}

// transactionStatus is serverStatus.transactions: the retryable writes'
// counts (RetryableWritesStats), then the transactions open now, running
// a command (active) or not, and those started, committed and aborted
// since the server started.
func (s *Service) transactionStatus() bson.D {
	t := &s.Sessions.Txns
	active := t.Active.Load()
	started, committed, aborted := t.Started.Load(), t.Committed.Load(), t.Aborted.Load()
	open := started - committed - aborted
	// a transaction ending is no longer open a moment before it is no
	// longer active
	active = min(active, open)
	return bson.D{
		{Key: "retriedCommandsCount", Value: t.RetriedCommands.Load()},
		{Key: "retriedStatementsCount", Value: t.RetriedStatements.Load()},
		{Key: "transactionsCollectionWriteCount", Value: t.RecordWrites.Load()},
		{Key: "currentActive", Value: active},
		{Key: "currentInactive", Value: open - active},
		{Key: "currentOpen", Value: open},
		{Key: "totalAborted", Value: aborted},
		{Key: "totalCommitted", Value: committed},
		{Key: "totalStarted", Value: started},
	}
}

// getLogCmd serves "*" (the log names), "global" (recent lines) and
// "startupWarnings" (the warnings logged at startup).
// clearLogCmd empties the global log getLog serves, a test command in
// MongoDB: {clearLog: "global"}, the only log it clears.
func clearLogCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.first()
	if v.Type != bson.TypeString {
		return nil, wrongType("clearLog", "clearLog", v, "string")
	}
	if v.StringValue() != "global" {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Only the 'global' log can be cleared")
	}
	s.Recent.Clear()
	return marshal(bson.D{}), nil
}

// getLogValue declares getLog's value: the name of a log (get_log.idl's
// command type), required, so a null is missing (40414).
var getLogValue = required("getLog", tString)

func getLogCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.commandValue()
	switch v.StringValue() {
	case "*":
		return marshal(bson.D{{Key: "names", Value: bson.A{"global", "startupWarnings"}}}), nil
	case "global":
		lines, total := s.Recent.Lines()
		return marshal(bson.D{{Key: "totalLinesWritten", Value: int32(total)}, {Key: "log", Value: lines}}), nil
	case "startupWarnings":
		lines := []string{}
		var total int64
		if s.StartupWarnings != nil {
			lines, total = s.StartupWarnings.Lines()
		}
		return marshal(bson.D{{Key: "totalLinesWritten", Value: int32(total)}, {Key: "log", Value: lines}}), nil
	}
	return nil, mongoerr.New(mongoerr.OperationFailed, "No log named '%s'", v.StringValue())
}

// statusCompressors are the compressors serverStatus.network.compression
// lists, in the order of MongoDB's default net.compression.compressors.
var statusCompressors = []byte{wire.CompressorSnappy, wire.CompressorZstd, wire.CompressorZlib}

// compressionStatus is serverStatus.network.compression: for each
// compressor, the bytes its compressor and decompressor took in and gave
// out.
func (s *Service) compressionStatus() bson.D {
	d := make(bson.D, 0, len(statusCompressors))
	for _, id := range statusCompressors {
		c := &s.Net.Compression[id]
		d = append(d, bson.E{Key: wire.CompressorName(id), Value: bson.D{
			{Key: "compressor", Value: bson.D{{Key: "bytesIn", Value: c.CompressorIn.Load()}, {Key: "bytesOut", Value: c.CompressorOut.Load()}}},
			{Key: "decompressor", Value: bson.D{{Key: "bytesIn", Value: c.DecompressorIn.Load()}, {Key: "bytesOut", Value: c.DecompressorOut.Load()}}},
		}})
	}
	return d
}
