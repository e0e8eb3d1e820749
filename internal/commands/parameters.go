package commands

import (
	"log/slog"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/values"
	"github.com/folio-db/folio/internal/wire"
)

func init() {
	registerAdmin(getParameterCmd, &argSpec{path: "getParameter", open: "the names of the parameters to get", subs: []*argSpec{getParameterOptionsSpec}}, "getParameter")
	registerAdmin(setParameterCmd, &argSpec{path: "setParameter", open: "the parameters to set"}, "setParameter")
}

// serverParameter is one server parameter Folio has. get reports its
// current value typed as MongoDB types it, or nil when the parameter
// shows no value (getParameter and setParameter's "was" then leave it
// out, as MongoDB's append writes nothing). A parameter settable at
// runtime has an integer value within [min, max] that set applies to the
// setting Folio reads; a boolean one takes any value as its truth (1 or
// 0), as MongoDB coerces it.
type serverParameter struct {
	get      func(s *Service) any
	set      func(s *Service, n int64)
	min, max int64
	boolean  bool
	// setReal sets a parameter MongoDB declares a double, whose value is
	// any number within [rmin, rmax] (set is nil then).
	setReal    func(s *Service, f float64)
	rmin, rmax float64
	// setText sets a parameter whose value is a string of at most
	// maxBytes bytes (set is nil then).
	setText  func(s *Service, v string)
	maxBytes int
	// verbosity takes MongoDB's log verbosity document, of which Folio's
	// log, without components, has only the top-level verbosity (-1 when
	// the document leaves it out; a negative one given clears it to 0).
	verbosity bool
	// read, when set, reads the value as the parameter's own setter in
	// MongoDB does (a cpp_class parameter), instead of min and max.
	read func(name string, v bson.RawValue) (int64, error)
	// startup: settable at startup by a flag of Folio's. Every parameter
	// settable at runtime is settable at startup too, by the
	// configuration file's setParameter section (SetParameterAtStartup).
	startup bool
}

// settableAtRuntime reports whether setParameter can change p.
func (p serverParameter) settableAtRuntime() bool {
	return p.set != nil || p.setReal != nil || p.setText != nil
}

// settableAtStartup reports whether p can be set when the server starts.
func (p serverParameter) settableAtStartup() bool { return p.startup || p.settableAtRuntime() }

// apply sets p from v, validated (see value and realValue).
func (p serverParameter) apply(s *Service, name string, v bson.RawValue) (func(), error) {
	if p.setReal != nil {
		f, err := paramReal(name, v, p.rmin, p.rmax)
		return func() { p.setReal(s, f) }, err
	}
	if p.setText != nil {
		text, err := paramText(name, v, p.maxBytes)
		return func() { p.setText(s, text) }, err
	}
	n, err := p.value(name, v)
	return func() { p.set(s, n) }, err
}

// Quiet reports MongoDB's quiet logging (the quiet parameter): the
// server then logs no connection accepted, ended or refused.
func (s *Service) Quiet() bool { return s.quiet.Load() }

// SetQuiet sets the quiet parameter (at startup: -quiet).
func (s *Service) SetQuiet(q bool) { s.quiet.Store(q) }

// LogLevel is the log's level: Base, the level the server started with,
// or debug while logLevel (MongoDB's verbosity, 0 to 5) is 1 or more. A
// nil Var (a Service without a log) keeps the verbosity alone.
type LogLevel struct {
	Var       *slog.LevelVar
	Base      slog.Level
	verbosity atomic.Int32
}

func (l *LogLevel) set(v int64) {
	l.verbosity.Store(int32(v))
	if l.Var == nil {
		return
	}
	if v > 0 {
		l.Var.Set(min(l.Base, slog.LevelDebug))
	} else {
		l.Var.Set(l.Base)
	}
}

// DefaultTTLMonitorSleepSecs is MongoDB's ttlMonitorSleepSecs.
const DefaultTTLMonitorSleepSecs = 60

// TTLMonitor is when the TTL monitor runs: every ttlMonitorSleepSecs,
// while ttlMonitorEnabled; and what its passes did, as serverStatus'
// metrics.ttl reports it. The zero value is MongoDB's default.
type TTLMonitor struct {
	sleepOffset atomic.Int64 // ttlMonitorSleepSecs - DefaultTTLMonitorSleepSecs
	disabled    atomic.Bool
	once        sync.Once
	changed     chan struct{}
	passes      atomic.Int64
	deleted     atomic.Int64
}

// Ran counts a finished pass that deleted n documents. MongoDB counts a
// pass once it ran, whether it deleted, failed or found itself unable
// to write (a secondary's), and its documents deleted by every TTL index
// and expiring collection.
func (m *TTLMonitor) Ran(n int64) {
	m.deleted.Add(n)
	m.passes.Add(1)
}

// metrics is serverStatus' metrics.ttl (ttl.cpp's counters, by name).
// A pass is one sub-pass: MongoDB splits a pass only when it batches its
// deletes (ttlMonitorBatchDeletes), and Folio's pass deletes all it can.
func (m *TTLMonitor) metrics() bson.D {
	passes := m.passes.Load()
	return bson.D{
		{Key: "deletedDocuments", Value: m.deleted.Load()},
		{Key: "passes", Value: passes},
		{Key: "subPasses", Value: passes},
	}
}

// Changed receives a value after each change of the sleep: the monitor
// then starts its wait anew.
func (m *TTLMonitor) Changed() <-chan struct{} {
	m.once.Do(func() { m.changed = make(chan struct{}, 1) })
	return m.changed
}

func (m *TTLMonitor) setSleep(secs int64) {
	m.sleepOffset.Store(secs - DefaultTTLMonitorSleepSecs)
	m.Changed()
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// Sleep is the time between the monitor's passes.
func (m *TTLMonitor) Sleep() time.Duration {
	return time.Duration(m.sleepOffset.Load()+DefaultTTLMonitorSleepSecs) * time.Second
}

// Enabled reports whether the monitor deletes expired documents.
func (m *TTLMonitor) Enabled() bool { return !m.disabled.Load() }

// defaultMaxLogSizeKB is MongoDB's maxLogSizeKB.
const defaultMaxLogSizeKB = 10

// maxLogSize is the most bytes of a command (or other document) a log line
// shows: maxLogSizeKB.
func (s *Service) maxLogSize() int { return int(s.logSizeOffsetKB.Load()+defaultMaxLogSizeKB) << 10 }

// defaultSnapshotWindowSecs is MongoDB's minSnapshotHistoryWindowInSeconds
// default.
const defaultSnapshotWindowSecs = 300

// SnapshotHistoryWindow is minSnapshotHistoryWindowInSeconds: how long
// the states snapshot reads handed out stay readable after their last use
// (engine.ReleaseViews).
func (s *Service) SnapshotHistoryWindow() time.Duration {
	return time.Duration(s.snapshotWindowOffset.Load()+defaultSnapshotWindowSecs) * time.Second
}

// allowDiskUseByDefault is the allowDiskUse of a find or aggregate that
// does not give it: MongoDB 6.0+ lets blocking stages spill to disk unless
// told not to (allowDiskUse: false, or this parameter false).
func (s *Service) allowDiskUseByDefault() bool { return !s.noDiskUseByDefault.Load() }

// maxDensifyDocs is internalQueryMaxAllowedDensifyDocs.
func (s *Service) maxDensifyDocs() int64 {
	return aggregate.DefaultMaxDensifyDocs + s.densifyDocsOffset.Load()
}

// maxPushBytes is internalQueryMaxPushBytes.
func (s *Service) maxPushBytes() int64 {
	return aggregate.DefaultMaxAccumulatorBytes + s.pushBytesOffset.Load()
}

// maxAddToSetBytes is internalQueryMaxAddToSetBytes.
func (s *Service) maxAddToSetBytes() int64 {
	return aggregate.DefaultMaxAccumulatorBytes + s.addToSetBytesOffset.Load()
}

// maxTopNBytes is internalQueryTopNAccumulatorBytes.
func (s *Service) maxTopNBytes() int64 {
	return aggregate.DefaultMaxAccumulatorBytes + s.topNBytesOffset.Load()
}

// maxWindowBytes is internalDocumentSourceSetWindowFieldsMaxMemoryBytes.
func (s *Service) maxWindowBytes() int64 {
	return aggregate.DefaultMemoryLimit + s.windowBytesOffset.Load()
}

// maxDensifyBytes is internalDocumentSourceDensifyMaxMemoryBytes.
func (s *Service) maxDensifyBytes() int64 {
	return aggregate.DefaultMemoryLimit + s.densifyBytesOffset.Load()
}

// maxGroupBytes is internalDocumentSourceGroupMaxMemoryBytes.
func (s *Service) maxGroupBytes() int64 {
	return aggregate.DefaultMemoryLimit + s.groupBytesOffset.Load()
}

// maxLookupBytes is internalLookupStageIntermediateDocumentMaxSizeBytes.
func (s *Service) maxLookupBytes() int64 {
	return aggregate.DefaultMaxIntermediateDocBytes + s.lookupBytesOffset.Load()
}

// maxFacetBytes is internalQueryFacetMaxOutputDocSizeBytes.
func (s *Service) maxFacetBytes() int64 {
	return aggregate.DefaultMaxIntermediateDocBytes + s.facetBytesOffset.Load()
}

// facetBufferBytes is internalQueryFacetBufferSizeBytes.
func (s *Service) facetBufferBytes() int64 {
	return aggregate.DefaultFacetBufferBytes + s.facetBufferOffset.Load()
}

// serverParameters are the parameters getParameter reports and
// setParameter changes; each one is a setting Folio honours.
var serverParameters = map[string]serverParameter{
	"featureCompatibilityVersion": {
		get: func(*Service) any { return bson.D{{Key: "version", Value: "7.0"}} },
	},
	"cursorTimeoutMillis": {
		get: func(s *Service) any { return s.Cursors.IdleTimeout().Milliseconds() },
		set: func(s *Service, n int64) { s.Cursors.SetIdleTimeout(time.Duration(n) * time.Millisecond) },
		min: -1 << 43, max: 1 << 43, // beyond, milliseconds overflow a Duration
	},
	"transactionLifetimeLimitSeconds": {
		get: func(s *Service) any { return int32(s.Sessions.TxnLifetime() / time.Second) },
		set: func(s *Service, n int64) { s.Sessions.SetTxnLifetime(time.Duration(n) * time.Second) },
		min: 1, max: 1<<31 - 1,
	},
	"internalQueryMaxBlockingSortMemoryUsageBytes": {
		get: func(s *Service) any { return int32(s.Engine.SortMemoryLimit()) },
		set: func(s *Service, n int64) { s.Engine.SetSortMemoryLimit(n) },
		min: 0, max: 1<<31 - 1,
	},
	// The most documents one $densify may generate (5897900 beyond).
	"internalQueryMaxAllowedDensifyDocs": {
		get: func(s *Service) any { return int32(s.maxDensifyDocs()) },
		set: func(s *Service, n int64) { s.densifyDocsOffset.Store(n - aggregate.DefaultMaxDensifyDocs) },
		min: 1, max: 1<<31 - 1,
	},
	// The memory one $push or $addToSet may hold (146 beyond).
	"internalQueryMaxPushBytes": {
		get: func(s *Service) any { return int32(s.maxPushBytes()) },
		set: func(s *Service, n int64) { s.pushBytesOffset.Store(n - aggregate.DefaultMaxAccumulatorBytes) },
		min: 1, max: 1<<31 - 1,
	},
	"internalQueryMaxAddToSetBytes": {
		get: func(s *Service) any { return int32(s.maxAddToSetBytes()) },
		set: func(s *Service, n int64) { s.addToSetBytesOffset.Store(n - aggregate.DefaultMaxAccumulatorBytes) },
		min: 1, max: 1<<31 - 1,
	},
	// The memory one N accumulator ($firstN, $topN, $maxN...) may hold.
	"internalQueryTopNAccumulatorBytes": {
		get: func(s *Service) any { return int32(s.maxTopNBytes()) },
		set: func(s *Service, n int64) { s.topNBytesOffset.Store(n - aggregate.DefaultMaxAccumulatorBytes) },
		min: 1, max: 1<<31 - 1,
	},
	// What one $setWindowFields may hold (5414201 beyond); a long, as
	// MongoDB's stage memory knobs are.
	"internalDocumentSourceSetWindowFieldsMaxMemoryBytes": {
		get: func(s *Service) any { return s.maxWindowBytes() },
		set: func(s *Service, n int64) { s.windowBytesOffset.Store(n - aggregate.DefaultMemoryLimit) },
		min: 1, max: math.MaxInt64,
	},
	// What one $densify's partition table may hold (6007200 beyond); a
	// long.
	"internalDocumentSourceDensifyMaxMemoryBytes": {
		get: func(s *Service) any { return s.maxDensifyBytes() },
		set: func(s *Service, n int64) { s.densifyBytesOffset.Store(n - aggregate.DefaultMemoryLimit) },
		min: 1, max: math.MaxInt64,
	},
	// What one $group may hold before it spills (292 beyond without
	// allowDiskUse); a long.
	"internalDocumentSourceGroupMaxMemoryBytes": {
		get: func(s *Service) any { return s.maxGroupBytes() },
		set: func(s *Service, n int64) { s.groupBytesOffset.Store(n - aggregate.DefaultMemoryLimit) },
		min: 1, max: math.MaxInt64,
	},
	// What one $lookup's matches for a document may total (4568 beyond);
	// a long, at least the largest BSON object MongoDB builds.
	"internalLookupStageIntermediateDocumentMaxSizeBytes": {
		get: func(s *Service) any { return s.maxLookupBytes() },
		set: func(s *Service, n int64) { s.lookupBytesOffset.Store(n - aggregate.DefaultMaxIntermediateDocBytes) },
		min: wire.MaxBSONInternalSize, max: math.MaxInt64,
	},
	// What one $facet's output may total (4031700 beyond); a long.
	"internalQueryFacetMaxOutputDocSizeBytes": {
		get: func(s *Service) any { return s.maxFacetBytes() },
		set: func(s *Service, n int64) { s.facetBytesOffset.Store(n - aggregate.DefaultMaxIntermediateDocBytes) },
		min: 1, max: math.MaxInt64,
	},
	// The size of the batches of its input a $facet holds; an int.
	"internalQueryFacetBufferSizeBytes": {
		get: func(s *Service) any { return int32(s.facetBufferBytes()) },
		set: func(s *Service, n int64) { s.facetBufferOffset.Store(n - aggregate.DefaultFacetBufferBytes) },
		min: 1, max: math.MaxInt32,
	},
	// The multi-planner's trial (plan_trial.go): each candidate works at
	// most max(works, collFraction × documents) times; the trial ends once
	// one returned maxResults results.
	"internalQueryPlanEvaluationWorks": {
		get: func(s *Service) any { return int32(s.Engine.TrialWorks()) },
		set: func(s *Service, n int64) { s.Engine.SetTrialWorks(n) },
		min: 1, max: 1<<31 - 1,
	},
	"internalQueryPlanEvaluationCollFraction": {
		get:     func(s *Service) any { return s.Engine.TrialCollFraction() },
		setReal: func(s *Service, f float64) { s.Engine.SetTrialCollFraction(f) },
		rmin:    0, rmax: 1,
	},
	"internalQueryPlanEvaluationMaxResults": {
		get: func(s *Service) any { return int32(s.Engine.TrialMaxResults()) },
		set: func(s *Service, n int64) { s.Engine.SetTrialMaxResults(n) },
		min: 0, max: 1<<31 - 1,
	},
	"logLevel": {
		get:  func(s *Service) any { return s.LogLevel.verbosity.Load() },
		set:  func(s *Service, n int64) { s.LogLevel.set(n) },
		read: readLogLevel,
	},
	"logComponentVerbosity": {
		get: func(s *Service) any { return bson.D{{Key: "verbosity", Value: s.LogLevel.verbosity.Load()}} },
		set: func(s *Service, n int64) {
			if n >= 0 {
				s.LogLevel.set(min(n, maxLogVerbosity))
			}
		},
		min: math.MinInt32, max: math.MaxInt32, verbosity: true,
	},
	"ttlMonitorSleepSecs": {
		get: func(s *Service) any { return int32(s.TTLMonitor.Sleep() / time.Second) },
		set: func(s *Service, n int64) { s.TTLMonitor.setSleep(n) },
		min: 1, max: 1<<31 - 1,
	},
	"ttlMonitorEnabled": {
		get:     func(s *Service) any { return s.TTLMonitor.Enabled() },
		set:     func(s *Service, n int64) { s.TTLMonitor.disabled.Store(n == 0) },
		boolean: true,
	},
	"maxLogSizeKB": {
		get: func(s *Service) any { return int32(s.maxLogSize() >> 10) },
		set: func(s *Service, n int64) { s.logSizeOffsetKB.Store(n - defaultMaxLogSizeKB) },
		min: 0, max: 1<<31 - 1,
	},
	"userCacheInvalidationIntervalSecs": {
		get: func(s *Service) any { return int32(s.Access.UserCacheInvalidation() / time.Second) },
		set: func(s *Service, n int64) {
			s.Access.invalidationOffset.Store(n - int64(DefaultUserCacheInvalidation/time.Second))
		},
		min: 1, max: 86400,
	},
	// The SCRAM iteration counts of the credentials createUser and
	// updateUser make from now on; those stored keep theirs.
	"scramIterationCount": {
		get: func(s *Service) any { return int32(s.Access.iterations().SHA1) },
		set: func(s *Service, n int64) {
			s.Access.sha1ItersOffset.Store(n - int64(auth.DefaultIterations.SHA1))
		},
		min: auth.MinIterations, max: 1<<31 - 1,
	},
	"scramSHA256IterationCount": {
		get: func(s *Service) any { return int32(s.Access.iterations().SHA256) },
		set: func(s *Service, n int64) {
			s.Access.sha256ItersOffset.Store(n - int64(auth.DefaultIterations.SHA256))
		},
		min: auth.MinIterations, max: 1<<31 - 1,
	},
	"minSnapshotHistoryWindowInSeconds": {
		get: func(s *Service) any { return int32(s.SnapshotHistoryWindow() / time.Second) },
		set: func(s *Service, n int64) { s.snapshotWindowOffset.Store(n - defaultSnapshotWindowSecs) },
		min: 0, max: 1<<31 - 1,
	},
	"allowDiskUseByDefault": {
		get:     func(s *Service) any { return s.allowDiskUseByDefault() },
		set:     func(s *Service, n int64) { s.noDiskUseByDefault.Store(n == 0) },
		boolean: true,
	},
	// Folio's own: the memory all blocking stages (sorts, $group,
	// $bucketAuto, $lookup matches) may hold at once across operations;
	// each operation is also bounded by its own limit.
	"folioBlockingStagesMemoryBudgetBytes": {
		get: func(*Service) any { return sorter.Global().Limit() },
		set: func(_ *Service, n int64) { sorter.Global().SetLimit(n) },
		min: 0, max: 1<<63 - 1,
	},
	// the schema of the users' documents: 5, SCRAM-SHA-1 and SCRAM-SHA-256
	// credentials (mongorestore reads it before restoring users)
	"authSchemaVersion": {
		get: func(*Service) any { return int32(authSchemaVersion) },
	},
	"logicalSessionTimeoutMinutes": {
		get: func(*Service) any { return logicalSessionTimeoutMinutes },
	},
	"maxBSONDepth": {
		get: func(*Service) any { return int32(rawdoc.MaxDepth) },
	},
	// The mechanisms clients may authenticate with (with or without
	// -auth, as in MongoDB); set only at startup
	// (-authentication-mechanisms, the configuration file's
	// setParameter.authenticationMechanisms or
	// security.authenticationMechanisms).
	"authenticationMechanisms": {
		get:     func(s *Service) any { return s.Access.mechanisms() },
		startup: true,
	},
	// MongoDB's quiet logging: no connection accepted, ended or refused
	// lines (-quiet, systemLog.quiet, or setParameter).
	"quiet": {
		get:     func(s *Service) any { return s.Quiet() },
		set:     func(s *Service, n int64) { s.quiet.Store(n != 0) },
		boolean: true,
	},
	// Commands that do not declare apiVersion fail, the handshake's too
	// (MongoDB's enforceRequireAPIVersion; Folio has no internal clients).
	"requireApiVersion": {
		get:     func(s *Service) any { return s.requireAPIVersion.Load() },
		set:     func(s *Service, n int64) { s.requireAPIVersion.Store(n != 0) },
		boolean: true,
	},
	// The operations a transaction's applyOps oplog entry holds at most;
	// set only at startup (-max-txn-ops-per-oplog-entry, the
	// configuration file's setParameter section).
	"maxNumberOfTransactionOperationsInSingleOplogEntry": {
		get:     func(s *Service) any { return s.Engine.MaxTxnOpsPerOplogEntry() },
		startup: true,
	},
	// The automation service managing the server, which hello names (and
	// getParameter shows) while it is not empty; mongosh then warns that
	// administrative actions may be reverted.
	"automationServiceDescriptor": {
		get: func(s *Service) any {
			if desc := s.automationDescriptor(); desc != nil {
				return *desc
			}
			return nil
		},
		setText: func(s *Service, v string) {
			if v == "" {
				s.automationServiceDescriptor.Store(nil)
			} else {
				s.automationServiceDescriptor.Store(&v)
			}
		},
		maxBytes: 64,
	},
	// Set only at startup (-enable-test-commands); test suites read it to
	// decide whether failpoints are there.
	"enableTestCommands": {
		get:     func(s *Service) any { return s.TestCommands },
		startup: true,
	},
}

// value reads v as p's new value (see serverParameter).
func (p serverParameter) value(name string, v bson.RawValue) (int64, error) {
	if p.boolean {
		if values.Truthy(v) {
			return 1, nil
		}
		return 0, nil
	}
	if p.read != nil {
		return p.read(name, v)
	}
	if p.verbosity {
		// any BSON object, an array too, as LogComponentVerbosityServerParameter::set
		// takes one; TypeMismatch naming the element otherwise
		if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
			return 0, mongoerr.New(mongoerr.TypeMismatch, "log component verbosity is not a BSON object: %s", values.ShellElement(name, v))
		}
		doc := bson.Raw(v.Value)
		n := int64(-1)
		elems, _ := doc.Elements()
		for _, el := range elems {
			if el.Key() != "verbosity" {
				return 0, mongoerr.New(mongoerr.NotImplemented, "Folio's log has no components: %s.%s is not supported", name, el.Key())
			}
			var err error
			if n, err = paramInt(name+".verbosity", el.Value(), p.min, p.max); err != nil {
				return 0, err
			}
			if n < 0 {
				// a negative verbosity clears a component's; the default
				// component's clears to 0 (MongoDB's
				// LogComponentSettings::clearMinimumLoggedSeverity)
				n = 0
			}
		}
		return n, nil
	}
	return paramInt(name, v, p.min, p.max)
}

// readLogLevel reads a logLevel as MongoDB's LogLevelServerParameter::set
// does: a number coerced to an int (BSONElement::tryCoerce: a fraction
// truncated; NaN, infinities and what falls outside the int range
// refused) that is not negative, or BadValue naming the element. A level
// above 5 is taken as 5, the most verbose (logv2's LogSeverity::Debug).
func readLogLevel(name string, v bson.RawValue) (int64, error) {
	n, ok := values.TruncInt64(v)
	if !values.IsNumber(v.Type) || !ok || n < 0 || n > math.MaxInt32 {
		return 0, mongoerr.New(mongoerr.BadValue, "Invalid value for %s: %s", name, values.ShellElement(name, v))
	}
	return min(n, maxLogVerbosity), nil
}

// maxLogVerbosity is the most verbose level logging has (logv2's
// LogSeverity::kMaxDebugLevel); higher ones stand for it.
const maxLogVerbosity = 5

// SetParameterAtStartup sets a server parameter from the server's
// configuration (mongod.conf's setParameter section), as setParameter
// would.
func (s *Service) SetParameterAtStartup(name string, v bson.RawValue) error {
	p, ok := serverParameters[name]
	if !ok || !p.settableAtRuntime() {
		return mongoerr.New(mongoerr.InvalidOptions, "unknown or read-only server parameter: %s", name)
	}
	set, err := p.apply(s, name, v)
	if err != nil {
		return err
	}
	set()
	return nil
}

// paramInt reads a numeric parameter value as MongoDB coerces one (doubles
// truncate) and checks it against the parameter's bounds.
func paramInt(name string, v bson.RawValue, lo, hi int64) (int64, error) {
	n, ok := safeInt64(v)
	if !ok {
		return 0, mongoerr.New(mongoerr.BadValue, "Invalid value for parameter %s: expected a number, got %s", name, values.TypeName(v.Type))
	}
	if nonFinite(v) {
		// MongoDB's BSONElement::tryCoerce, which its integer parameters
		// read their values with, refuses what no integer represents
		return 0, mongoerr.New(mongoerr.BadValue, "Failed validating %s: Unable to coerce NaN/Inf to integral type", name)
	}
	if n < lo {
		return 0, mongoerr.New(mongoerr.BadValue, "Invalid value for parameter %s: %d is not greater than or equal to %d", name, n, lo)
	}
	if n > hi {
		return 0, mongoerr.New(mongoerr.BadValue, "Invalid value for parameter %s: %d is not less than or equal to %d", name, n, hi)
	}
	return n, nil
}

// nonFinite reports whether v is a double or decimal NaN or infinity.
func nonFinite(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeDouble:
		f := v.Double()
		return math.IsNaN(f) || math.IsInf(f, 0)
	case bson.TypeDecimal128:
		d := v.Decimal128()
		return d.IsNaN() || d.IsInf() != 0
	}
	return false
}

// paramText reads a string parameter's value: a string (TypeMismatch
// otherwise) of at most max bytes (Overflow beyond), as MongoDB's
// automationServiceDescriptor checks its own.
func paramText(name string, v bson.RawValue, max int) (string, error) {
	text, ok := v.StringValueOK()
	if !ok {
		return "", mongoerr.New(mongoerr.TypeMismatch, "Value for parameter %s must be of type 'string'", name)
	}
	if len(text) > max {
		return "", mongoerr.New(mongoerr.Overflow, "Value for parameter %s must be no more than %d bytes", name, max)
	}
	return text, nil
}

// automationDescriptor is the automationServiceDescriptor parameter, nil
// while it is empty.
func (s *Service) automationDescriptor() *string { return s.automationServiceDescriptor.Load() }

// paramReal reads a double parameter's value (any number) and checks it
// against the parameter's bounds.
func paramReal(name string, v bson.RawValue, lo, hi float64) (float64, error) {
	var f float64
	switch v.Type {
	case bson.TypeDouble:
		f = v.Double()
	case bson.TypeInt32:
		f = float64(v.Int32())
	case bson.TypeInt64:
		f = float64(v.Int64())
	default:
		return 0, mongoerr.New(mongoerr.BadValue, "Invalid value for parameter %s: expected a number, got %s", name, values.TypeName(v.Type))
	}
	if !(f >= lo) {
		return 0, mongoerr.New(mongoerr.BadValue, "Invalid value for parameter %s: %v is not greater than or equal to %v", name, f, lo)
	}
	if f > hi {
		return 0, mongoerr.New(mongoerr.BadValue, "Invalid value for parameter %s: %v is not less than or equal to %v", name, f, hi)
	}
	return f, nil
}

// parameterNames lists the parameters in name order, the order MongoDB
// reports them in.
func parameterNames() []string {
	names := make([]string, 0, len(serverParameters))
	for n := range serverParameters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// getParameterOptionsSpec declares getParameter's options document.
var getParameterOptionsSpec = &argSpec{path: "getParameter", fields: []argField{
	arg("allParameters", tBool),
	arg("showDetails", tBool),
}}

// getParameterCmd answers {getParameter: 1, name: 1, ...} with the named
// parameters, {getParameter: "*"} or {getParameter: {allParameters: true}}
// with all of them, and, with {getParameter: {showDetails: true}}, each as
// {value, settableAtRuntime, settableAtStartup}. Names Folio does not have
// are skipped; none found is InvalidOptions.
func getParameterCmd(s *Service, r *Request) (bson.Raw, error) {
	var all, details bool
	switch v := r.args.first(); v.Type {
	case bson.TypeEmbeddedDocument:
		opts, err := parseSub(v.Document(), getParameterOptionsSpec)
		if err != nil {
			return nil, err
		}
		all, details = opts.bool("allParameters"), opts.bool("showDetails")
	case bson.TypeString:
		all = v.StringValue() == "*"
	}
	asked := map[string]bool{}
	_ = r.args.eachExtra(func(key string, _ bson.RawValue) error {
		asked[key] = true
		return nil
	})
	var out bson.D
	for _, name := range parameterNames() {
		if !all && !asked[name] {
			continue
		}
		p := serverParameters[name]
		val := p.get(s)
		if details {
			d := bson.D{}
			if val != nil {
				d = append(d, bson.E{Key: "value", Value: val})
			}
			val = append(d,
				bson.E{Key: "settableAtRuntime", Value: p.settableAtRuntime()},
				bson.E{Key: "settableAtStartup", Value: p.settableAtStartup()},
			)
		} else if val == nil {
			continue
		}
		out = append(out, bson.E{Key: name, Value: val})
	}
	if len(out) == 0 {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "no option found to get")
	}
	return marshal(out), nil
}

// setParameterCmd sets the parameters named in the command as MongoDB's
// CmdSet does: every name is checked first (known, settable at runtime,
// named once), then the parameters are set in the order of their names,
// each value validated as it is set; the reply's "was" is the previous
// value of the parameter set first.
func setParameterCmd(s *Service, r *Request) (bson.Raw, error) {
	type change struct {
		name string
		p    serverParameter
		v    bson.RawValue
	}
	var changes []change
	seen := map[string]bson.RawValue{}
	// First, in the command's order, each name must be a parameter settable
	// at run time, given once.
	err := r.args.eachExtra(func(name string, v bson.RawValue) (err error) {
		p, ok := serverParameters[name]
		if !ok {
			return mongoerr.New(mongoerr.InvalidOptions, "attempted to set unrecognized parameter [%s], use help:true to see options ", name)
		}
		if !p.settableAtRuntime() {
			return mongoerr.New(mongoerr.IllegalOperation, "not allowed to change [%s] at runtime", name)
		}
		if first, dup := seen[name]; dup {
			return mongoerr.New(mongoerr.InvalidOptions, "attempted to set parameter [%s] twice in the same setParameter command, once to value: [%s], and once to value: [%s]", name, values.Shell(first), values.Shell(v))
		}
		seen[name] = v
		changes = append(changes, change{name, p, v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "no option found to set, use help:true to see options ")
	}
	// Then MongoDB sets them in the order of their names: "was" is the
	// first one's old value, and a value refused fails the command with
	// the parameters before it set.
	sort.Slice(changes, func(i, j int) bool { return changes[i].name < changes[j].name })
	reply := bson.D{}
	if was := changes[0].p.get(s); was != nil {
		reply = bson.D{{Key: "was", Value: was}}
	}
	for _, c := range changes {
		set, err := c.p.apply(s, c.name, c.v)
		if err != nil {
			return nil, err
		}
		set()
	}
	return marshal(reply), nil
}
