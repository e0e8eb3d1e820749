// Package commands turns command documents into engine calls and engine
// results into reply documents: one file per command family, a table from
// command name to handler, and MongoDB's error reply shape in one place.
package commands

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/advise"
	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/logring"
	"github.com/folio-db/folio/internal/metrics"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/wire"
)

// Service holds what command handlers share for the life of a server.
type Service struct {
	Engine   *engine.Engine
	Cursors  *cursors.Registry
	Sessions *sessions.Registry
	// Clock is the cluster clock: every write ticks it once committed, and
	// a replica set member reports it in each reply.
	Clock clock.Source
	Log   *slog.Logger
	// Recent keeps the latest log lines for getLog.
	Recent *logring.Ring
	// StartupWarnings keeps the warnings logged at startup, getLog's
	// "startupWarnings"; nil when there were none.
	StartupWarnings *logring.Ring
	// Argv and Parsed answer getCmdLineOpts.
	Argv   []string
	Parsed bson.D
	// DBPath is the data directory; empty when the data is in memory.
	DBPath string
	// Host is the host:port the server advertises as itself.
	Host string
	// ReplSetName, when set, makes the server report itself as the primary
	// of a one-member replica set of that name, which is what drivers
	// require before they run transactions.
	ReplSetName string
	// Compressors are the wire compressors the server accepts, by
	// preference.
	Compressors []string
	// JS runs server-side JavaScript; nil or disabled refuses it.
	JS *js.Engine
	// Shutdown asks whoever runs the server to shut it down (the shutdown
	// command); nil when nothing can.
	Shutdown func()
	// RotateLog rotates the log file (logRotate); nil when the log goes to
	// a stream.
	RotateLog func() error
	// RotateCertificates reads the TLS files again (rotateCertificates);
	// nil without TLS.
	RotateCertificates func() error
	// Metrics records every command (-metrics-addr); nil records nothing.
	Metrics *metrics.Metrics

	Started   time.Time
	ProcessID bson.ObjectID
	// topo is the topology version hello reports and awaitable hellos
	// wait on (topology.go).
	topo        topology
	Connections atomic.Int64 // open now
	TotalConns  atomic.Int64 // accepted since start
	// RejectedConns counts connections closed at accept because
	// MaxConnections were open.
	RejectedConns atomic.Int64
	// Hello counts the connections streaming an exhaust hello and the
	// hellos awaiting a topology change (serverStatus' connections).
	Hello helloMetrics
	// MaxConnections is the most connections served at once.
	MaxConnections int64
	Ops            OpCounters
	cmdStats       commandStats
	Docs           DocumentCounters
	Scanned        ScanCounters
	Net            NetworkCounters
	Asserts        AssertCounters
	// Access is access control (-auth).
	Access AccessControl
	// ops are the commands running now, for currentOp.
	ops opRegistry
	// viewDocs remembers which view definitions are valid (views.go).
	viewDocs viewDocMemo
	// noDiskUseByDefault is allowDiskUseByDefault negated (see
	// parameters.go), so that the zero Service has MongoDB's default.
	noDiskUseByDefault atomic.Bool
	// logSizeOffsetKB is maxLogSizeKB - defaultMaxLogSizeKB, so that the
	// zero Service has MongoDB's default.
	logSizeOffsetKB atomic.Int64
	// densifyDocsOffset is internalQueryMaxAllowedDensifyDocs -
	// aggregate.DefaultMaxDensifyDocs, so that the zero Service has
	// MongoDB's default.
	densifyDocsOffset atomic.Int64
	// pushBytesOffset and addToSetBytesOffset are internalQueryMaxPushBytes
	// and internalQueryMaxAddToSetBytes less
	// aggregate.DefaultMaxAccumulatorBytes, so that the zero Service has
	// MongoDB's defaults.
	pushBytesOffset, addToSetBytesOffset atomic.Int64
	// topNBytesOffset is internalQueryTopNAccumulatorBytes less
	// aggregate.DefaultMaxAccumulatorBytes, likewise.
	topNBytesOffset atomic.Int64
	// windowBytesOffset is internalDocumentSourceSetWindowFieldsMaxMemoryBytes
	// less aggregate.DefaultMemoryLimit, likewise.
	windowBytesOffset atomic.Int64
	// densifyBytesOffset is internalDocumentSourceDensifyMaxMemoryBytes
	// less aggregate.DefaultMemoryLimit, likewise.
	densifyBytesOffset atomic.Int64
	// groupBytesOffset is internalDocumentSourceGroupMaxMemoryBytes less
	// aggregate.DefaultMemoryLimit, likewise.
	groupBytesOffset atomic.Int64
	// lookupBytesOffset and facetBytesOffset are
	// internalLookupStageIntermediateDocumentMaxSizeBytes and
	// internalQueryFacetMaxOutputDocSizeBytes less
	// aggregate.DefaultMaxIntermediateDocBytes, likewise.
	lookupBytesOffset, facetBytesOffset atomic.Int64
	// facetBufferOffset is internalQueryFacetBufferSizeBytes less
	// aggregate.DefaultFacetBufferBytes, likewise.
	facetBufferOffset atomic.Int64
	// snapshotWindowOffset is minSnapshotHistoryWindowInSeconds less its
	// default, so that the zero Service has MongoDB's default.
	snapshotWindowOffset atomic.Int64
	// Advisor observes the operations for folioAdvise (nil: none).
	Advisor *advise.Observer
	// LogLevel is the log's level, which setParameter's logLevel changes.
	LogLevel LogLevel
	// quiet is the quiet parameter (Quiet).
	quiet atomic.Bool
	// automationServiceDescriptor is the parameter of that name: the
	// automation service managing the server, which hello names while it
	// is not empty (nil: empty).
	automationServiceDescriptor atomic.Pointer[string]
	// requireAPIVersion is the requireApiVersion parameter: every command
	// must declare apiVersion.
	requireAPIVersion atomic.Bool
	// TTLMonitor is the TTL monitor's schedule.
	TTLMonitor TTLMonitor
	// tsOpen are the time series buckets this server fills.
	tsOpen openBuckets
	// fsync is the fsync lock.
	fsync fsyncLock
	// prof is the profiler's and the slow-operation log's settings
	// (profile.go).
	prof profiling
	// conns are the open client connections, for currentOp.
	conns connRegistry
	// sharding serializes this server's shardCollection commands, as a
	// router's DDL lock does (another frontend's conflict with one fails
	// with ConflictingOperationInProgress).
	sharding sync.Mutex
	// rwDefaultsCache is this node's copy of the cluster-wide read and
	// write concern defaults (rwdefaults.go).
	rwDefaultsCache rwDefaultsCache
	// TestCommands enables the commands MongoDB runs only with its
	// enableTestCommands parameter (registerTest): configureFailPoint,
	// clearLog.
	TestCommands bool
	// failCommand and primaryWrite are the failCommand and
	// onPrimaryTransactionalWrite fail points (failpoint.go).
	failCommand  failPoint[failCommandData]
	primaryWrite failPoint[primaryWriteData]
	// getMoreFail is the failGetMoreAfterCursorCheckout fail point.
	getMoreFail failPoint[getMoreFailData]
	// maxTimeAlways and maxTimeNever are the maxTimeAlwaysTimeOut and
	// maxTimeNeverTimeOut fail points.
	maxTimeAlways failPoint[struct{}]
	maxTimeNever  failPoint[struct{}]
	// hangBuild is the hangAfterStartingIndexBuild fail point.
	hangBuild failPoint[struct{}]
}

// DocumentCounters count documents, as serverStatus.metrics.document
// reports: returned by queries (find, aggregate, getMore batches),
// inserted (upserts included), matched by updates, and deleted.
type DocumentCounters struct {
	Returned, Inserted, Updated, Deleted atomic.Int64
}

// ScanCounters count the index keys (Keys) and documents (Docs) the
// operations examined, each operation's keysExamined and docsExamined
// added when it ends, getMores included, as MongoDB's recordCurOpMetrics
// adds them to serverStatus' metrics.queryExecutor.scanned and
// scannedObjects.
type ScanCounters struct {
	Keys, Docs atomic.Int64
}

// OpCounters count operations by kind, as serverStatus.opcounters reports.
type OpCounters struct {
	Insert, Query, Update, Delete, GetMore, Command atomic.Int64
}

// NetworkCounters count the wire traffic serverStatus.network reports:
// logical bytes are messages as sent before compression, physical bytes
// what crossed the socket.
type NetworkCounters struct {
	BytesIn, BytesOut, PhysicalBytesIn, PhysicalBytesOut, NumRequests atomic.Int64
	// Compression counts each compressor's bytes, by its id
	// (wire.CompressorSnappy, ...).
	Compression [wire.CompressorZstd + 1]CompressionCounters
}

// CompressionCounters count the bytes one compressor took in and gave
// out, compressing replies and decompressing requests: message bodies, as
// MongoDB's MessageCompressorBase counts them.
type CompressionCounters struct {
	CompressorIn, CompressorOut, DecompressorIn, DecompressorOut atomic.Int64
}

// AssertCounters count the assertions serverStatus.asserts reports: user
// counts the commands that failed with an error of the request's making
// (every error reply but InternalError, which counts as regular).
type AssertCounters struct {
	Regular, User atomic.Int64
}

// Conn is the per-connection state a command may read or set.
type Conn struct {
	ID     int64
	Remote string
	// Compressors is what hello negotiated with the client.
	Compressors []string
	// HelloOk is set once the client said, in a hello, that it knows the
	// hello command: MongoDB then words its errors "not primary" rather
	// than "not master".
	HelloOk bool
	// AppName is the application name the client's handshake gave
	// (client.application.name), which the failCommand fail point may
	// select connections by.
	AppName string
	// Described is set once a hello gave the client's metadata, which
	// MongoDB takes only once per connection.
	Described bool
	// metadata is the client metadata of the handshake, which currentOp
	// reports from other goroutines; nil until a handshake gave one.
	metadata atomic.Pointer[clientMetadata]
	// PeerSubject is the subject of the client certificate the connection
	// presented and the server verified, as MongoDB names X.509 users
	// (auth.SubjectName); "" when there is none.
	PeerSubject string
	// Ctx is the connection's context, a child of Service.Context that the
	// server ends with ClientDisconnect when the client goes away; the
	// operations of the connection descend from it. Nil: the root.
	Ctx context.Context
	// auth is the connection's authentication.
	auth connAuth
	// exhaust is the exhaust hello the connection streams, if any
	// (helloMetrics).
	exhaust atomic.Int32
}

// Request is one command to run.
type Request struct {
	DB   string
	Cmd  bson.Raw
	Conn *Conn
	// Args are the command's generic arguments, parsed before it runs.
	Args GenericArgs
	// args are the command's own fields, parsed against its declaration.
	args cmdArgs
	// Txn is the transaction the command runs in, if any.
	Txn *engine.Txn
	// createUUID, set by applyOps for a create entry with a ui, is the
	// UUID the collection is created with.
	createUUID *[16]byte
	// fromOplog is set by applyOps for the command of a command entry,
	// which MongoDB applies without its command's user-facing checks.
	fromOplog bool
	// session is the command's session, locked while it runs.
	session *sessions.Session
	// needs, under access control, are the privileges the command was
	// checked for: a cursor it opens keeps them for its getMores.
	needs []need
	// retryable is set for a retryable write: its statements already
	// executed in the session's txnNumber are not applied again.
	retryable bool
	// Ctx is the operation's context, made by Run: it ends when the
	// command is killed (killOp, killSessions), passes its maxTimeMS, loses
	// its client or is interrupted at shutdown, and its cause is the error
	// the command then fails with (mongoerr.Interruption).
	Ctx context.Context
	// op is the command's entry in currentOp.
	op *activeOp
	// readTime is the cluster time when the command started; writeTime
	// the time of its write, if it wrote. The reply's operationTime is the
	// latter, else the former.
	readTime, writeTime clock.Time
	// clock is what the command's expressions read as the time, taken
	// once (exprClock; zero until then); clusterTime holds its
	// $$CLUSTER_TIME's bytes.
	clock       expr.Clock
	clusterTime [8]byte
	// timeFields backs the $clusterTime and operationTime fields of a
	// replica set member's reply (clusterTimeFields).
	timeFields [clusterTimeFieldsLen]byte
	// Scratch, when set, is a buffer a cursor reply may be built in,
	// which the caller reuses (a pooled buffer) once the reply is sent:
	// so nothing keeps a reply built there. A command leaves in Scratch the buffer (grown
	// or not) it built its reply in.
	Scratch []byte
	// ownedReply is the first byte of a reply built for this request
	// alone (own), which Run may complete in place.
	ownedReply *byte
	// waitedForWriteConcern is set once the command ran on a replica set
	// member and waited for its write concern (waitsForWriteConcern): its
	// reply, an error's included, reports an unsatisfiable one.
	waitedForWriteConcern bool
	// CloseConn is set when a fail point closes the connection: the
	// server sends no reply and closes it.
	CloseConn bool
	// failLabels, when set by the failCommand fail point, are the reply's
	// errorLabels; failWCE is the writeConcernError it adds to the reply.
	failLabels *[]string
	failWCE    bson.Raw
	// streamCursor is set once a getMore found a change stream's cursor.
	streamCursor bool
	// atClusterTime is the time a read at readConcern snapshot outside a
	// transaction reports as its snapshot's (readTime: every write up to
	// it is visible to the read); zero for other reads.
	atClusterTime clock.Time
	// view is the state such a read reads (pinSnapshot).
	view *engine.ReadView
	// ExhaustAllowed is set when the client accepts a stream of replies
	// to the request (OP_MSG's exhaustAllowed).
	ExhaustAllowed bool
	// Next, set by a command that streams its replies (an awaitable hello
	// or a getMore the client allows to, with exhaustAllowed), is the
	// command the server runs next, without a request, for the reply
	// after this one.
	Next bson.Raw
	// awaited is how long the command waited for a change it was asked
	// to wait for (an awaitable hello), which its duration (in the
	// slow-operation log, the profiler and the metrics) leaves out.
	awaited time.Duration
}

// own marks reply as built for r alone and returns it: nothing else holds
// it, so Run may append ok and the cluster time to it in place.
func (r *Request) own(reply bson.Raw) bson.Raw {
	if len(reply) > 0 {
		r.ownedReply = &reply[0]
	}
	return reply
}
