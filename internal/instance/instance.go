// Package instance assembles a running Folio: storage, engine, command
// service and listener. cmd/folio and the tests start servers through it.
package instance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/advise"
	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/commands"
	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/js"
	"github.com/folio-db/folio/internal/logring"
	"github.com/folio-db/folio/internal/server"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/pebblekv"
	"github.com/folio-db/folio/internal/storage/tikvkv"
)

// Config says where a Folio listens and keeps its data.
type Config struct {
	// Addr is the listen address; "127.0.0.1:0" picks a free port.
	Addr string
	// DBPath is the data directory; ignored when InMemory is set.
	DBPath string
	// fs is the file system under DBPath (nil: the operating system's);
	// tests inject failures through it.
	fs       vfs.FS
	InMemory bool
	// Durability says when acknowledged writes reach the disk; the zero
	// value is MongoDB's default.
	Durability engine.Durability
	// Compressors are the wire compressors offered to clients.
	Compressors []string
	// Logger receives the server's log; nil discards it. LogLevel is the
	// least level passed on to it (zero: info), until setParameter's
	// logLevel asks for debug lines; the Logger's own handler filters too.
	Logger   *slog.Logger
	LogLevel slog.Level
	// Argv is reported by getCmdLineOpts.
	Argv []string
	// CursorIdle is the idle cursor timeout; zero means MongoDB's 10 minutes.
	CursorIdle time.Duration
	// PreImageRemovalSleep is MongoDB's
	// expiredChangeStreamPreImageRemovalJobSleepSecs: how often the
	// pre-images older than changeStreamOptions' expireAfterSeconds are
	// removed; zero means MongoDB's 10 seconds.
	PreImageRemovalSleep time.Duration
	// NoJavaScript is MongoDB's security.javascriptEnabled=false: $where,
	// $function, $accumulator and mapReduce are refused.
	NoJavaScript bool
	// TestCommands is MongoDB's enableTestCommands parameter:
	// configureFailPoint (failCommand) and clearLog, for driver test
	// suites.
	TestCommands bool
	// ReplSetName, unless empty, has the server report itself as the
	// primary of a one-member replica set, which drivers require for
	// transactions.
	ReplSetName string
	// Advertise is the host:port the server names itself in hello (the
	// replica set's only member); empty means the listen address.
	Advertise string
	// MaxConnections is net.maxIncomingConnections: connections beyond it
	// are closed as they are accepted. Zero means MongoDB's default; any
	// value is capped at 80% of the file descriptor limit.
	MaxConnections int64
	// DiskReserve is the free space, in bytes, kept on the data
	// directory's filesystem: below it writes fail with OutOfDiskSpace
	// (reads go on, writes resume once space is freed) and Start fails.
	// Zero disables the guard; in memory there is none.
	DiskReserve uint64
	// Auth turns access control on (-auth): commands need an
	// authenticated user holding their privileges.
	Auth bool
	// AuthenticationMechanisms are the mechanisms clients may
	// authenticate with (MongoDB's authenticationMechanisms, set only at
	// startup); nil for MongoDB's default, all three Folio serves.
	AuthenticationMechanisms []string
	// Quiet is MongoDB's quiet parameter at startup (--quiet,
	// systemLog.quiet): no connection accepted, ended or refused is logged.
	Quiet bool
	// FreeSpace, when set, replaces the system's statfs in that guard
	// (tests).
	FreeSpace pebblekv.FreeSpaceFunc
	// TLS is net.tls: the zero value serves plain connections only.
	TLS server.TLSOptions
	// Shared, when set, is the store to serve instead of opening one: a
	// store other instances (frontends) serve too, which this instance
	// does not close. Each needs its own FrontendID.
	Shared storage.KV
	// Storage selects the store to open when Shared is nil: "" or
	// "pebble" for the embedded Pebble under DBPath, or
	// tikv://pd1:2379[,pd2:2379...] for a TiKV cluster (DBPath, InMemory
	// and DiskReserve are then unused).
	Storage string
	// FrontendID and SchemaLease are the engine's (see engine.Options).
	FrontendID  string
	SchemaLease time.Duration
	// OplogSize bounds the oplog in bytes; zero is MongoDB's default
	// (defaultOplogSize).
	OplogSize int64
	// MaxTxnOpsPerOplogEntry is the engine's (see engine.Options).
	MaxTxnOpsPerOplogEntry int
	// MetricsAddr, unless empty, is where /metrics serves the server's
	// metrics in Prometheus' format.
	MetricsAddr string
	// SlowMS is the slow-operation log's threshold in milliseconds;
	// zero is MongoDB's default, 100.
	SlowMS int64
	// ProfileLevel (0, 1 or 2) and ProfileFilter (a query on profile
	// entries, nil for none) are the profiling settings of the databases
	// the profile command did not set; SlowOpSampleRate, when set, is the
	// fraction of operations profiled and logged (default 1).
	ProfileLevel     int
	ProfileFilter    bson.Raw
	SlowOpSampleRate *float64
	// Parameters are server parameters set at startup, as setParameter
	// sets them.
	Parameters bson.D
	// RotateLog, when set, rotates the file the log is written to
	// (logRotate); without it the log goes to a stream and logRotate has
	// nothing to rotate.
	RotateLog func() error
}

// DefaultCompressors are the compressors Folio offers, in its preference
// order.
var DefaultCompressors = []string{"snappy", "zstd", "zlib"}

// Instance is a running Folio.
type Instance struct {
	eng *engine.Engine
	kv  storage.KV
	// frontendID is the engine's (empty for a lone server).
	frontendID string
	// savedAdvice are the advisor's observations as last saved, under
	// adviceMu (reap's goroutine and Close save them).
	adviceMu    sync.Mutex
	savedAdvice []byte
	// sharedKV: kv is Config.Shared, closed by its owner.
	sharedKV bool
	svc      *commands.Service
	srv      *server.Server
	ln       net.Listener
	served   chan error
	stop     chan struct{}
	// jobs are the background loops (reap, expireTTL, pollUserChanges):
	// they return once stop is closed, and storage closes after them.
	jobs sync.WaitGroup
	// metrics serves /metrics on metricsLn (nil without MetricsAddr).
	metrics   *http.Server
	metricsLn net.Listener
	// shutdown is closed when the shutdown command asks for a shutdown.
	shutdown     chan struct{}
	shutdownOnce sync.Once
	closeOnce    sync.Once
	closeErr     error
	log          *slog.Logger
}

// Start opens the data directory and starts serving on cfg.Addr.
func Start(cfg Config) (*Instance, error) {
	ring := logring.New(1024)
	base := slog.DiscardHandler
	if cfg.Logger != nil {
		base = cfg.Logger.Handler()
	}
	level := new(slog.LevelVar)
	level.Set(cfg.LogLevel)
	log := slog.New(leveled{ring.Handler(base), level})
	if cfg.AuthenticationMechanisms != nil {
		if err := auth.CheckAuthenticationMechanisms(cfg.AuthenticationMechanisms); err != nil {
			return nil, err
		}
	}
	tlsSetup, err := server.LoadTLS(cfg.TLS)
	if err != nil {
		return nil, err
	}
	kv, closeKV := cfg.Shared, func() error { return nil }
	if kv == nil {
		if kv, err = openStorage(cfg, log); err != nil {
			return nil, err
		}
		closeKV = kv.Close
	}
	oplogSize := cfg.OplogSize
	if oplogSize == 0 {
		oplogSize = defaultOplogSize(cfg)
	}
	eng, err := engine.Open(kv, engine.Options{Durability: cfg.Durability, Logger: log, FrontendID: frontendID(cfg), SchemaLease: cfg.SchemaLease, OplogSize: oplogSize, MaxTxnOpsPerOplogEntry: cfg.MaxTxnOpsPerOplogEntry})
	if err != nil {
		return nil, errors.Join(err, closeKV())
	}
	sess := sessions.NewRegistry()
	sess.Log = log
	sess.Shared = !eng.SoleWriter()
	if err := sess.Load(kv); err != nil {
		return nil, errors.Join(err, eng.Close(), closeKV())
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, errors.Join(err, eng.Close(), closeKV())
	}
	idle := cfg.CursorIdle
	if idle == 0 {
		idle = cursors.DefaultIdleTimeout
	}
	compressors := cfg.Compressors
	if compressors == nil {
		compressors = DefaultCompressors
	}
	host := cfg.Advertise
	if host == "" {
		host = ln.Addr().String()
	}
	svc := &commands.Service{
		Engine:      eng,
		Cursors:     cursors.NewRegistry(idle),
		Sessions:    sess,
		Clock:       clockOf(kv),
		ReplSetName: cfg.ReplSetName,
		Log:         log,
		Recent:      ring,
		Argv:        cfg.Argv,
		Parsed:      parsedOptions(cfg, ln.Addr()),
		Host:        host,
		DBPath:      dataDir(cfg),
		Compressors: compressors,
		Started:     time.Now(),
		ProcessID:   bson.NewObjectID(),
		JS:          js.New(js.Options{Disabled: cfg.NoJavaScript, Stored: storedScripts(eng)}),
		Advisor:     advise.NewObserver(),
	}
	svc.Access.Enabled = cfg.Auth
	svc.Access.Mechanisms = cfg.AuthenticationMechanisms
	svc.SetQuiet(cfg.Quiet)
	svc.TestCommands = cfg.TestCommands
	svc.LogLevel = commands.LogLevel{Var: level, Base: cfg.LogLevel}
	eng.OnDropped(svc.CollectionDropped)
	svc.MaxConnections = server.MaxConnections(cfg.MaxConnections)
	if cfg.MaxConnections > 0 && svc.MaxConnections < cfg.MaxConnections {
		log.Warn("max connections reduced to 80% of the file descriptor limit", "requested", cfg.MaxConnections, "maxConnections", svc.MaxConnections)
	}
	if !cfg.Auth && reachable(ln.Addr()) {
		svc.StartupWarnings = logring.New(16)
		slog.New(svc.StartupWarnings.Handler(log.Handler())).Warn("Access control is not enabled for the database. Read and write access to data and configuration is unrestricted", "addr", ln.Addr().String())
	}
	svc.Sessions.OnEnd = func(t *engine.Txn) { svc.Cursors.KillOwned(t) }
	svc.Cursors.SessionAlive = svc.Sessions.Alive
	in := &Instance{eng: eng, kv: kv, frontendID: frontendID(cfg), sharedKV: cfg.Shared != nil, svc: svc, srv: server.New(svc, log), ln: ln, served: make(chan error, 1), stop: make(chan struct{}), shutdown: make(chan struct{}), log: log}
	if err := configure(svc, cfg); err != nil {
		return nil, errors.Join(err, ln.Close(), eng.Close(), closeKV())
	}
	if err := svc.WriteVersionDocument(); err != nil {
		log.Warn("the featureCompatibilityVersion document could not be written to admin.system.version", "err", err)
	}
	if err := svc.LogStartup(); err != nil {
		log.Warn("the start could not be recorded in local.startup_log", "err", err)
	}
	if err := in.loadAdvice(); err != nil {
		log.Warn("the advisor's saved observations could not be read; it starts afresh", "err", err)
	}
	svc.Shutdown = func() { in.shutdownOnce.Do(func() { close(in.shutdown) }) }
	if cfg.MetricsAddr != "" {
		if in.metrics, in.metricsLn, err = serveMetrics(cfg.MetricsAddr, svc, kv); err != nil {
			return nil, errors.Join(err, ln.Close(), eng.Close(), closeKV())
		}
	}
	in.srv.UseTLS(tlsSetup)
	if tlsSetup != nil {
		svc.RotateCertificates = tlsSetup.Rotate
	}
	go func() { in.served <- in.srv.Serve(ln) }()
	in.background(func() { in.reap(min(time.Second, idle/4)) })
	in.background(func() { in.expireTTL(eng) })
	removal := cfg.PreImageRemovalSleep
	if removal <= 0 {
		removal = defaultPreImageRemovalSleep
	}
	in.background(func() { in.expirePreImages(eng, removal) })
	if cfg.Auth && !eng.SoleWriter() {
		in.background(in.pollUserChanges)
	}
	// On TiKV the data is the cluster's: the storage URL says where, no
	// data directory is used.
	attrs := []any{"addr", ln.Addr().String(), "storage", "pebble", "dbpath", cfg.DBPath}
	if isTiKV(cfg.Storage) {
		attrs = []any{"addr", ln.Addr().String(), "storage", cfg.Storage}
	}
	attrs = append(attrs, "inMemory", cfg.InMemory, "durability", cfg.Durability.String(), "maxConnections", svc.MaxConnections,
		"diskReserveMB", cfg.DiskReserve>>20, "tlsMode", cfg.TLS.Mode.String(), "auth", cfg.Auth)
	log.Info("folio listening", attrs...)
	return in, nil
}

// configure applies cfg's slow-operation, profiling and parameter
// settings to svc.
func configure(svc *commands.Service, cfg Config) error {
	if cfg.SlowMS != 0 {
		svc.SetSlowMS(cfg.SlowMS)
	}
	rate := 1.0
	if cfg.SlowOpSampleRate != nil {
		rate = *cfg.SlowOpSampleRate
	}
	if err := svc.SetProfilingDefaults(cfg.ProfileLevel, cfg.ProfileFilter, rate); err != nil {
		return fmt.Errorf("profiling settings: %w", err)
	}
	for _, p := range cfg.Parameters {
		raw, err := bson.Marshal(bson.D{p})
		if err != nil {
			return err
		}
		if err := svc.SetParameterAtStartup(p.Key, bson.Raw(raw).Lookup(p.Key)); err != nil {
			return fmt.Errorf("setParameter %s: %w", p.Key, err)
		}
	}
	svc.RotateLog = cfg.RotateLog
	return nil
}

// reachable reports whether addr takes connections from other hosts: it
// is not a loopback address (the unspecified address listens on every
// interface).
func reachable(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return !ok || !tcp.IP.IsLoopback()
}

func parsedOptions(cfg Config, addr net.Addr) bson.D {
	host, port, _ := net.SplitHostPort(addr.String())
	p, _ := strconv.Atoi(port)
	netOpts := bson.D{{Key: "bindIp", Value: host}, {Key: "port", Value: int32(p)}}
	if t := cfg.TLS; t.Mode != server.TLSDisabled {
		tlsOpts := bson.D{{Key: "mode", Value: t.Mode.String()}, {Key: "certificateKeyFile", Value: t.CertificateKeyFile}, {Key: "CAFile", Value: t.CAFile}}
		if t.AllowConnectionsWithoutCertificates {
			tlsOpts = append(tlsOpts, bson.E{Key: "allowConnectionsWithoutCertificates", Value: true})
		}
		netOpts = append(netOpts, bson.E{Key: "tls", Value: tlsOpts})
	}
	d := bson.D{
		{Key: "net", Value: netOpts},
	}
	var security bson.D
	if cfg.Auth {
		// as mongod's --auth reports itself
		security = append(security, bson.E{Key: "authorization", Value: "enabled"})
	}
	if cfg.NoJavaScript {
		// as mongod's --noscripting reports itself
		security = append(security, bson.E{Key: "javascriptEnabled", Value: false})
	}
	if cfg.AuthenticationMechanisms != nil {
		security = append(security, bson.E{Key: "authenticationMechanisms", Value: cfg.AuthenticationMechanisms})
	}
	if security != nil {
		d = append(d, bson.E{Key: "security", Value: security})
	}
	d = append(d, bson.E{Key: "storage", Value: bson.D{{Key: "dbPath", Value: cfg.DBPath}, {Key: "inMemory", Value: cfg.InMemory}, {Key: "durability", Value: cfg.Durability.String()}}})
	if cfg.Quiet {
		// as mongod's --quiet reports itself
		d = append(d, bson.E{Key: "systemLog", Value: bson.D{{Key: "quiet", Value: true}}})
	}
	return d
}

// chunkSyncEvery is how often the frontend holding the jobs lease records
// the chunks of sharded collections as the store's ranges split.
const chunkSyncEvery = 5 * time.Second

// reap closes idle cursors, aborts expired transactions, forgets expired
// sessions, lets go of the states snapshot reads no longer need, maintains
// the oplog, records sharded collections' chunks and
// saves the advisor's observations until the instance stops.
// It looks every period: at least every second, since the timeouts can
// change at runtime (setParameter), and more often for a short cursor
// timeout.
func (in *Instance) reap(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	lastSave, lastChunks := time.Now(), time.Now()
	for {
		select {
		case <-t.C:
			if n := in.svc.Cursors.Reap(); n > 0 {
				in.log.Info("closed idle cursors", "count", n)
			}
			if in.svc.Writable() {
				// deletes session records: a primary's job
				in.svc.Sessions.Reap(time.Now(), sessions.DefaultTimeout)
			}
			in.eng.ReleaseViews(time.Now(), in.svc.SnapshotHistoryWindow())
			if _, err := in.eng.MaintainOplog(); err != nil {
				in.log.Error("truncating the oplog", "err", err)
			}
			if time.Since(lastChunks) >= chunkSyncEvery {
				if err := in.svc.SyncShardChunks(); err != nil {
					in.log.Warn("recording the chunks of sharded collections", "err", err)
				}
				lastChunks = time.Now()
			}
			if time.Since(lastSave) >= adviseSaveEvery {
				if err := in.saveAdvice(); err != nil {
					in.log.Warn("saving the advisor's observations", "err", err)
				}
				lastSave = time.Now()
			}
		case <-in.stop:
			return
		}
	}
}

// pollUserChanges looks for user and role changes made through other
// frontends every userCacheInvalidationIntervalSecs until the instance
// stops. It checks the interval every second, so that a change of the
// parameter applies within one.
func (in *Instance) pollUserChanges() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last time.Time
	for {
		if time.Since(last) >= in.svc.Access.UserCacheInvalidation() {
			if err := in.svc.PollUserChanges(); err != nil {
				in.log.Error("reading users and roles", "err", err)
			}
			last = time.Now()
		}
		select {
		case <-t.C:
		case <-in.stop:
			return
		}
	}
}

// expireTTL runs the TTL monitor until the instance stops: every
// ttlMonitorSleepSecs (a change restarts the wait), unless
// ttlMonitorEnabled is off; each pass it runs counts in metrics.ttl.
func (in *Instance) expireTTL(eng *engine.Engine) {
	for {
		t := time.NewTimer(in.svc.TTLMonitor.Sleep())
		select {
		case <-t.C:
			if !in.svc.TTLMonitor.Enabled() || !in.svc.Writable() {
				continue
			}
			n, err := eng.ExpireTTL(time.Now())
			if err != nil {
				in.log.Error("TTL monitor", "err", err)
			}
			in.svc.TTLMonitor.Ran(n)
		case <-in.svc.TTLMonitor.Changed():
			t.Stop()
		case <-in.stop:
			t.Stop()
			return
		}
	}
}

// defaultPreImageRemovalSleep is MongoDB's
// expiredChangeStreamPreImageRemovalJobSleepSecs.
const defaultPreImageRemovalSleep = 10 * time.Second

// expirePreImages removes, every sleep until the instance stops, the
// pre-images older than changeStreamOptions.preAndPostImages.
// expireAfterSeconds (when set), on the engine that runs the background
// jobs while the server takes writes.
func (in *Instance) expirePreImages(eng *engine.Engine, sleep time.Duration) {
	t := time.NewTicker(sleep)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-in.stop:
			cancel() // a pass in progress stops at the next entry
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-t.C:
		case <-in.stop:
			return
		}
		if !eng.RunsJobs() || !in.svc.Writable() {
			continue
		}
		after, ok, err := in.svc.PreImagesExpiry()
		if err == nil && ok {
			_, err = eng.ExpirePreImages(ctx, time.Now().Add(-after))
		}
		if err != nil && ctx.Err() == nil {
			in.log.Error("removing expired pre-images", "err", err)
		}
	}
}

// leveled passes on the records at or above its level.
type leveled struct {
	slog.Handler
	level *slog.LevelVar
}

func (h leveled) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level.Level() && h.Handler.Enabled(ctx, l)
}

func (h leveled) WithAttrs(attrs []slog.Attr) slog.Handler {
	return leveled{h.Handler.WithAttrs(attrs), h.level}
}

func (h leveled) WithGroup(name string) slog.Handler {
	return leveled{h.Handler.WithGroup(name), h.level}
}

// MetricsAddr is the address /metrics is served on, "" without one.
func (in *Instance) MetricsAddr() string {
	if in.metricsLn == nil {
		return ""
	}
	return in.metricsLn.Addr().String()
}

// ShutdownRequested is closed once a client ran the shutdown command:
// the process running the instance then closes it.
func (in *Instance) ShutdownRequested() <-chan struct{} { return in.shutdown }

// Addr is the address the instance listens on.
func (in *Instance) Addr() string { return in.ln.Addr().String() }

// AuthEnabled reports whether the instance runs with access control.
func (in *Instance) AuthEnabled() bool { return in.svc.Access.Enabled }

// URI is a mongodb:// URI for the instance.
func (in *Instance) URI() string { return "mongodb://" + in.Addr() + "/" }

// interruptWait is how long Close waits, once the grace period is over
// and the remaining operations are interrupted, for them to return.
const interruptWait = 500 * time.Millisecond

// connWait is how long Close waits for the connections' goroutines to
// write their last replies and end once no operation runs.
const connWait = 300 * time.Millisecond

// Close shuts the instance down: it stops accepting connections and new
// operations (ShutdownInProgress), lets the running operations finish until
// ctx ends (the shutdown timeout), interrupts the rest
// (InterruptedAtShutdown, 11600) and waits for them to return, closes every
// connection and cursor, then flushes and closes storage, last. Should an
// operation not return, storage is flushed but left open rather than
// closed under it. Later calls return the first one's result.
func (in *Instance) Close(ctx context.Context) error {
	in.closeOnce.Do(func() { in.closeErr = in.close(ctx) })
	return in.closeErr
}

func (in *Instance) close(ctx context.Context) error {
	close(in.stop)
	if in.metrics != nil {
		_ = in.metrics.Close()
	}
	in.srv.StopAccepting()
	idle := in.svc.Drain(ctx)
	if !idle {
		in.log.Warn("interrupting operations at shutdown", "running", in.svc.Running())
		ictx, cancel := context.WithTimeout(context.Background(), interruptWait)
		idle = in.svc.Interrupt(ictx)
		cancel()
	}
	sctx, cancel := context.WithTimeout(context.Background(), connWait)
	defer cancel()
	err := in.srv.Shutdown(sctx)
	err = errors.Join(err, <-in.served)
	in.svc.Cursors.CloseAll()
	if idle && !in.jobsDone(jobsWait(ctx)) {
		in.log.Warn("a background job (oplog upkeep, TTL deletes) did not stop at shutdown")
		idle = false
	}
	if !idle {
		err = errors.Join(err, fmt.Errorf("%d operations still running at shutdown; storage flushed but left open", in.svc.Running()), in.closeStorage(false))
		in.log.Error("folio stopped", "err", err)
		return err
	}
	in.svc.Sessions.AbortAll()
	if serr := in.saveAdvice(); serr != nil {
		in.log.Warn("saving the advisor's observations", "err", serr)
	}
	err = errors.Join(err, in.closeStorage(true))
	in.log.Info("folio stopped", "err", err)
	return err
}

// background runs job in a goroutine that Close waits for before it
// closes storage.
func (in *Instance) background(job func()) {
	in.jobs.Add(1)
	go func() {
		defer in.jobs.Done()
		job()
	}()
}

// jobsWait is how long Close waits for the background jobs to finish
// what they were doing (on TiKV the oplog upkeep may take seconds): what
// is left of the shutdown deadline, interruptWait at the least, or as long
// as they take without a deadline (-1).
func jobsWait(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return -1
	}
	return max(time.Until(dl), interruptWait)
}

// jobsDone waits up to d (d < 0: without a bound) for the background jobs
// to return, and reports whether they did.
func (in *Instance) jobsDone(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		in.jobs.Wait()
		close(done)
	}()
	var timeout <-chan time.Time
	if d >= 0 {
		timeout = time.After(d)
	}
	select {
	case <-done:
		return true
	case <-timeout:
		return false
	}
}

// diskFullPoll is how often closeStorage asks the store whether a write
// waits for disk space.
const diskFullPoll = 10 * time.Millisecond

// closeStorage syncs and stops the engine and, with closeKV, flushes and
// closes the store. On a full disk a write waiting for space (the store
// retries it until space is freed, see pebblekv.DiskFull) holds that up
// until space is freed, and failing the write would crash Pebble: as soon
// as one waits, closeStorage stops waiting, logs it and leaves storage
// open, to be dropped with the process. Writes acknowledged as journaled
// are on disk already; on restart Pebble replays its WAL as after a crash.
func (in *Instance) closeStorage(closeKV bool) error {
	done := make(chan error, 1)
	go func() {
		err := in.eng.Close()
		if closeKV && !in.sharedKV {
			err = errors.Join(err, in.kv.Close())
		}
		done <- err
	}()
	t := time.NewTicker(diskFullPoll)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			if d, ok := in.kv.(interface{ DiskFull() bool }); ok && d.DiskFull() {
				err := errors.New("the disk is full: a write waits for space, so storage is left open without a final flush; journaled writes are on disk and the rest of the WAL is replayed at the next start")
				in.log.Error("shutting down on a full disk", "err", err)
				return err
			}
		}
	}
}

func isTiKV(storage string) bool { return strings.HasPrefix(storage, tikvkv.Scheme) }

// frontendID is the engine's FrontendID: cfg's, or on TiKV, where other
// servers share the store, the host name and listen address, which a
// restart of this server keeps.
func frontendID(cfg Config) string {
	if cfg.FrontendID != "" || cfg.Shared != nil || !isTiKV(cfg.Storage) {
		return cfg.FrontendID
	}
	host, _ := os.Hostname()
	return host + "|" + cfg.Addr
}

// openStorage opens the store cfg.Storage names.
func openStorage(cfg Config, log *slog.Logger) (storage.KV, error) {
	switch {
	case cfg.Storage == "" || cfg.Storage == "pebble":
		return pebblekv.Open(cfg.DBPath, pebblekv.Options{InMemory: cfg.InMemory, Uncached: []byte{sessions.KeySpace}, Logger: log, DiskReserve: cfg.DiskReserve, FreeSpace: cfg.FreeSpace, FS: cfg.fs})
	case isTiKV(cfg.Storage):
		pds, err := tikvkv.ParseURL(cfg.Storage)
		if err != nil {
			return nil, err
		}
		return tikvkv.Open(pds, log)
	}
	return nil, fmt.Errorf("bad storage %q: want pebble or %shost:port[,host:port...]", cfg.Storage, tikvkv.Scheme)
}

// dataDir is the directory the data lives in, empty when it is in memory.
func dataDir(cfg Config) string {
	if cfg.InMemory {
		return ""
	}
	return cfg.DBPath
}

// clockOf is the cluster clock: the store's when it stamps commits with
// one (the oplog's times and the replies' operationTime then agree), else
// a clock of the server's own.
func clockOf(kv storage.KV) clock.Source {
	if c, ok := kv.(interface{ Clock() clock.Source }); ok {
		return c.Clock()
	}
	return clock.New(nil)
}

// defaultOplogSize is MongoDB's default oplog size: 5% of the free disk
// space, from 990 MB to 50 GB, or in memory 5% of the physical memory,
// from 50 MB to 50 GB.
func defaultOplogSize(cfg Config) int64 {
	const mb, gb = 1 << 20, 1 << 30
	if cfg.InMemory {
		return min(max(sorter.PhysicalMemory()/20, 50*mb), 50*gb)
	}
	free, err := pebblekv.Statfs(cfg.DBPath)
	if err != nil {
		return 990 * mb
	}
	return min(max(int64(free/20), 990*mb), 50*gb)
}

// storedScripts reads a database's system.js for $where and mapReduce
// (js.Op.LoadStored).
func storedScripts(eng *engine.Engine) js.StoredLoader {
	return func(ctx context.Context, db string) ([]bson.Raw, error) {
		cur, err := eng.Find(db, "system.js", engine.FindOptions{Ctx: ctx})
		if err != nil {
			return nil, err
		}
		defer cur.Close()
		var docs []bson.Raw
		for {
			d, err := cur.Next()
			if err != nil || d == nil {
				return docs, err
			}
			docs = append(docs, d)
		}
	}
}
