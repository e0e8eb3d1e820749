// Command folio runs the Folio document database server: MongoDB's wire
// protocol over embedded Pebble storage.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/logfile"
	"github.com/folio-db/folio/internal/server"
)

func main() {
	tuneGC()
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "folio:", err)
		os.Exit(1)
	}
}

// env returns the environment variable name, or def when it is unset.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envInt returns the integer in environment variable name, 0 when unset
// and -1 (refused by run) when not an integer.
func envInt(name string) int64 {
	v := env(name, "")
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// envDuration returns the duration in environment variable name, 0 when
// unset and -1ns (refused by run) when not a duration.
func envDuration(name string) time.Duration {
	v := env(name, "")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return -1
	}
	return d
}

// defaultDiskReserveMB is -disk-reserve-mb's default: room for Pebble's
// flushes and compactions, and for the log, once writes are refused.
const defaultDiskReserveMB = 128

// maxDiskReserveMB is the largest reserve whose byte count fits an int64.
const maxDiskReserveMB = 1<<43 - 1

func run(args []string, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "playground" {
		return runPlayground(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "advise" {
		return runAdvise(args[1:], os.Stdout, stderr)
	}
	if len(args) > 0 && args[0] == "version" {
		if len(args) > 1 {
			return fmt.Errorf("unexpected argument %q after version", args[1])
		}
		fmt.Fprintln(stderr, versionLine())
		return nil
	}
	fs := flag.NewFlagSet("folio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", env("FOLIO_ADDR", "127.0.0.1:27017"), "listen address host:port (env FOLIO_ADDR)")
	storageURL := fs.String("storage", env("FOLIO_STORAGE", "pebble"),
		"where data lives: pebble (embedded, under -dbpath) or tikv://pd1:2379[,pd2:2379...] (a TiKV cluster through its PD servers; many Folio servers may serve one cluster) (env FOLIO_STORAGE)")
	dbpath := fs.String("dbpath", env("FOLIO_DBPATH", "./data"), "data directory (env FOLIO_DBPATH)")
	inMemory := fs.Bool("in-memory", env("FOLIO_IN_MEMORY", "") == "1", "keep all data in memory, nothing on disk (env FOLIO_IN_MEMORY=1)")
	durability := fs.String("durability", env("FOLIO_DURABILITY", "default"),
		"when acknowledged writes are on disk: default (as MongoDB: at once when the write concern asks for j:true or w:\"majority\", else within 100 ms), always, or never (env FOLIO_DURABILITY)")
	logFormat := fs.String("log-format", env("FOLIO_LOG_FORMAT", "text"), "log format: text or json (env FOLIO_LOG_FORMAT)")
	logLevel := fs.String("log-level", env("FOLIO_LOG_LEVEL", "info"), "log level: debug, info, warn or error (env FOLIO_LOG_LEVEL)")
	replSet := fs.String("replset", env("FOLIO_REPLSET", "folio"),
		"replica set name the server reports as its one-member set's primary, which drivers need to run transactions; empty for a standalone (env FOLIO_REPLSET)")
	advertise := fs.String("advertise", env("FOLIO_ADVERTISE", ""), "host:port the server names itself in hello; default the listen address (env FOLIO_ADVERTISE)")
	compressors := fs.String("compressors", env("FOLIO_COMPRESSORS", strings.Join(instance.DefaultCompressors, ",")),
		"wire compressors offered to clients, comma-separated; empty for none (env FOLIO_COMPRESSORS)")
	maxConns := fs.Int64("max-connections", envInt("FOLIO_MAX_CONNECTIONS"),
		"most client connections served at once, as MongoDB's net.maxIncomingConnections; 0 for 80% of the file descriptor limit, at most 1000000 (env FOLIO_MAX_CONNECTIONS)")
	reserveMB := envInt("FOLIO_DISK_RESERVE_MB")
	if _, set := os.LookupEnv("FOLIO_DISK_RESERVE_MB"); !set {
		reserveMB = defaultDiskReserveMB
	}
	fs.Int64Var(&reserveMB, "disk-reserve-mb", reserveMB,
		"free disk space in MB kept on the data directory's filesystem: below it writes fail with OutOfDiskSpace (14031) while reads go on, and writes resume once space is freed; the server does not start below it; 0 disables the check. MongoDB has no such option (env FOLIO_DISK_RESERVE_MB)")
	authOn := fs.Bool("auth", env("FOLIO_AUTH", "") == "1",
		"access control: clients authenticate (SCRAM-SHA-256 or SCRAM-SHA-1) and commands need their user's privileges; with no user yet, a client on a loopback address may create the first one in admin (env FOLIO_AUTH=1)")
	authMechs := fs.String("authentication-mechanisms", env("FOLIO_AUTHENTICATION_MECHANISMS", ""),
		"the mechanisms clients may authenticate with, comma-separated, as MongoDB's authenticationMechanisms parameter: MONGODB-X509, SCRAM-SHA-1, SCRAM-SHA-256; empty for MongoDB's default, all three. One left out is refused as MongoDB refuses it, hello's saslSupportedMechs leaves it out and createUser makes no credential for it (env FOLIO_AUTHENTICATION_MECHANISMS)")
	defShutdown := 15 * time.Second
	if v, ok := os.LookupEnv("FOLIO_SHUTDOWN_TIMEOUT"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("bad FOLIO_SHUTDOWN_TIMEOUT: %w", err)
		}
		defShutdown = d
	}
	shutdownTimeout := fs.Duration("shutdown-timeout", defShutdown,
		"on SIGTERM or SIGINT, how long running operations may take to finish before they are interrupted (InterruptedAtShutdown); the server exits within it plus 1s (env FOLIO_SHUTDOWN_TIMEOUT)")
	tlsMode := fs.String("tls-mode", env("FOLIO_TLS_MODE", "disabled"),
		"TLS for client connections, as MongoDB's net.tls.mode: disabled, allowTLS or preferTLS (TLS and plain connections both served; a TLS client is recognized by its first bytes), or requireTLS (plain connections closed) (env FOLIO_TLS_MODE)")
	tlsCertKey := fs.String("tls-certificate-key-file", env("FOLIO_TLS_CERTIFICATE_KEY_FILE", ""),
		"PEM file with the server's certificate and private key; needed when TLS is on (env FOLIO_TLS_CERTIFICATE_KEY_FILE)")
	tlsCA := fs.String("tls-ca-file", env("FOLIO_TLS_CA_FILE", ""),
		"PEM file of the CA certificates client certificates are verified against; needed when TLS is on, as in MongoDB; clients must then present a certificate unless -tls-allow-connections-without-certificates (env FOLIO_TLS_CA_FILE)")
	tlsNoCert := fs.Bool("tls-allow-connections-without-certificates", env("FOLIO_TLS_ALLOW_CONNECTIONS_WITHOUT_CERTIFICATES", "") == "1",
		"let TLS clients connect without a certificate; one presented is still verified (env FOLIO_TLS_ALLOW_CONNECTIONS_WITHOUT_CERTIFICATES=1)")
	jsEnabled := fs.Bool("javascript-enabled", env("FOLIO_JAVASCRIPT_ENABLED", "1") != "0",
		"server-side JavaScript ($where, $function, $accumulator, mapReduce), as MongoDB's security.javascriptEnabled; false refuses them all (env FOLIO_JAVASCRIPT_ENABLED=0)")
	testCommands := fs.Bool("enable-test-commands", env("FOLIO_ENABLE_TEST_COMMANDS", "") == "1",
		"the commands for driver test suites, as MongoDB's enableTestCommands parameter: configureFailPoint with the failCommand fail point, which makes chosen commands fail, and clearLog (env FOLIO_ENABLE_TEST_COMMANDS=1)")
	schemaLease := fs.Duration("schema-lease", envDuration("FOLIO_SCHEMA_LEASE"),
		"with -storage tikv: how long a frontend's image of the catalog stays valid without renewal; a schema change waits for the frontends' leases, and a frontend whose lease ran out refuses writes until it renews it; 0 for the default, 45s (env FOLIO_SCHEMA_LEASE)")
	slowMS := fs.Int64("slowms", envInt("FOLIO_SLOWMS"), "operations that take this many milliseconds or more are logged as slow (\"Slow query\"), as MongoDB's operationProfiling.slowOpThresholdMs; 0 for the default, 100 (env FOLIO_SLOWMS)")
	metricsAddr := fs.String("metrics-addr", env("FOLIO_METRICS_ADDR", ""), "serve metrics in Prometheus' format on this host:port (/metrics); empty for none (env FOLIO_METRICS_ADDR)")
	oplogMB := fs.Int64("oplog-size-mb", envInt("FOLIO_OPLOG_SIZE_MB"),
		"the oplog's size bound in megabytes, as MongoDB's replication.oplogSizeMB; 0 for MongoDB's default: 5% of the free disk (of the memory with -in-memory), at least 990 MB (50 MB in memory) and at most 50 GB (env FOLIO_OPLOG_SIZE_MB)")
	maxTxnOps := fs.Int("max-txn-ops-per-oplog-entry", int(envInt("FOLIO_MAX_TXN_OPS_PER_OPLOG_ENTRY")),
		"the operations a transaction's applyOps oplog entry holds at most before its next entry, as MongoDB's startup parameter maxNumberOfTransactionOperationsInSingleOplogEntry; 0 for the default: no bound but the entry's 16 MB (env FOLIO_MAX_TXN_OPS_PER_OPLOG_ENTRY)")
	pprofAddr := fs.String("pprof", env("FOLIO_PPROF", ""), "serve Go's runtime profiles (/debug/pprof/) on this loopback host:port; empty for none (env FOLIO_PPROF)")
	configPath := fs.String("config", env("FOLIO_CONFIG", ""),
		"a configuration file in the shape of mongod's (mongod.conf, YAML) for the options Folio has; flags given on the command line and environment variables set override it (env FOLIO_CONFIG)")
	logPath := fs.String("log-path", env("FOLIO_LOG_PATH", ""), "write the log to this file instead of standard error, as MongoDB's systemLog.path; logRotate and SIGUSR1 rotate it (env FOLIO_LOG_PATH)")
	logAppend := fs.Bool("log-append", env("FOLIO_LOG_APPEND", "") == "1", "append to an existing -log-path file instead of renaming it aside at start, as systemLog.logAppend (env FOLIO_LOG_APPEND=1)")
	quiet := fs.Bool("quiet", env("FOLIO_QUIET", "") == "1", "MongoDB's quiet logging, as --quiet or systemLog.quiet (setParameter's quiet changes it at run time): connections accepted, ended or refused are not logged (env FOLIO_QUIET=1)")
	logRotate := fs.String("log-rotate", env("FOLIO_LOG_ROTATE", "rename"), "how logRotate rotates the -log-path file, as systemLog.logRotate: rename (aside, with the time) or reopen (after a tool such as logrotate moved it) (env FOLIO_LOG_ROTATE)")
	profileLevel := fs.Int("profile", int(envInt("FOLIO_PROFILE")), "the profiling level of every database until the profile command sets its own: 0 off, 1 operations of -slowms or more, 2 all; recorded in each database's system.profile (env FOLIO_PROFILE)")
	sampleRate := fs.Float64("slow-op-sample-rate", 1, "the fraction of slow operations profiled and logged, as operationProfiling.slowOpSampleRate")
	profileFilter := fs.String("profile-filter", "", "a query (extended JSON) on profile entries that decides, instead of -slowms and the sample rate, which operations are profiled and logged, as operationProfiling.filter")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: folio [serve] [flags]\n       folio playground -h\n       folio version\n\nFolio serves the MongoDB wire protocol, storing data in an embedded Pebble database or a TiKV cluster.\nWrites asking for the journal (j:true, w:\"majority\") are on disk when acknowledged, as in MongoDB.\n")
		printFlagGroups(stderr, fs)
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		// A misspelt subcommand or a stray word must not start a server on
		// the defaults.
		return fmt.Errorf("unexpected argument %q (folio -h lists the subcommands and flags)", fs.Arg(0))
	}
	var params bson.D
	if *configPath != "" {
		cfg, err := loadConfig(*configPath)
		if err != nil {
			return err
		}
		if err := applyConfig(fs, cfg); err != nil {
			return err
		}
		params = cfg.params
		if cfg.zoneInfo != "" && os.Getenv("ZONEINFO") == "" {
			if st, err := os.Stat(cfg.zoneInfo); err != nil || !st.IsDir() {
				return fmt.Errorf("configuration file: processManagement.timeZoneInfo %q is not a directory", cfg.zoneInfo)
			}
			// Go reads the time zone database from ZONEINFO when set.
			os.Setenv("ZONEINFO", cfg.zoneInfo)
		}
	}
	if *maxTxnOps < 0 {
		return fmt.Errorf("bad -max-txn-ops-per-oplog-entry (or FOLIO_MAX_TXN_OPS_PER_OPLOG_ENTRY): want a number of operations, 0 for the default")
	}
	if *oplogMB < 0 {
		return fmt.Errorf("bad -oplog-size-mb (or FOLIO_OPLOG_SIZE_MB): want a number of megabytes, 0 for the default")
	}
	if *schemaLease < 0 {
		return fmt.Errorf("bad -schema-lease (or FOLIO_SCHEMA_LEASE): want a duration of zero or more")
	}
	if *maxConns < 0 {
		return fmt.Errorf("bad -max-connections (or FOLIO_MAX_CONNECTIONS): want a non-negative integer")
	}
	if reserveMB < 0 || reserveMB > maxDiskReserveMB {
		return fmt.Errorf("bad -disk-reserve-mb (or FOLIO_DISK_RESERVE_MB): want an integer from 0 to %d", maxDiskReserveMB)
	}
	var mechanisms []string
	if *authMechs != "" {
		for _, m := range strings.Split(*authMechs, ",") {
			mechanisms = append(mechanisms, strings.TrimSpace(m))
		}
		if err := auth.CheckAuthenticationMechanisms(mechanisms); err != nil {
			return fmt.Errorf("bad -authentication-mechanisms (or FOLIO_AUTHENTICATION_MECHANISMS): %w", err)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("bad -log-level: %w", err)
	}
	var filter bson.Raw
	if *profileFilter != "" {
		if err := bson.UnmarshalExtJSON([]byte(*profileFilter), false, &filter); err != nil {
			return fmt.Errorf("bad -profile-filter: %w", err)
		}
	}
	rotation, err := logfile.ParseMode(*logRotate)
	if err != nil {
		return fmt.Errorf("bad -log-rotate: %w", err)
	}
	logOut := stderr
	var rotateLog func() error
	if *logPath != "" {
		lf, err := logfile.Open(*logPath, *logAppend, rotation)
		if err != nil {
			return fmt.Errorf("opening the log file: %w", err)
		}
		defer lf.Close()
		logOut, rotateLog = lf, lf.Rotate
	}
	// The instance filters by level (setParameter's logLevel lowers it).
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	var handler slog.Handler
	switch *logFormat {
	case "text":
		handler = slog.NewTextHandler(logOut, opts)
	case "json":
		handler = slog.NewJSONHandler(logOut, opts)
	default:
		return fmt.Errorf("bad -log-format %q: want text or json", *logFormat)
	}
	mode, err := server.ParseTLSMode(*tlsMode)
	if err != nil {
		return fmt.Errorf("bad -tls-mode: %w", err)
	}
	dur, err := engine.ParseDurability(*durability)
	if err != nil {
		return err
	}
	var comps []string
	for _, c := range strings.Split(*compressors, ",") {
		if c = strings.TrimSpace(c); c != "" {
			comps = append(comps, c)
		}
	}
	if *pprofAddr != "" {
		ln, err := servePprof(*pprofAddr)
		if err != nil {
			return err
		}
		defer ln.Close()
	}
	in, err := instance.Start(instance.Config{
		Addr:                     *addr,
		Storage:                  *storageURL,
		DBPath:                   *dbpath,
		InMemory:                 *inMemory,
		Durability:               dur,
		Compressors:              comps,
		ReplSetName:              *replSet,
		Advertise:                *advertise,
		MaxConnections:           *maxConns,
		DiskReserve:              uint64(reserveMB) << 20,
		Auth:                     *authOn,
		AuthenticationMechanisms: mechanisms,
		Quiet:                    *quiet,
		NoJavaScript:             !*jsEnabled,
		TestCommands:             *testCommands,
		SchemaLease:              *schemaLease,
		OplogSize:                *oplogMB << 20,
		MaxTxnOpsPerOplogEntry:   *maxTxnOps,
		MetricsAddr:              *metricsAddr,
		SlowMS:                   *slowMS,
		ProfileLevel:             *profileLevel,
		ProfileFilter:            filter,
		SlowOpSampleRate:         sampleRate,
		Parameters:               params,
		RotateLog:                rotateLog,
		TLS: server.TLSOptions{Mode: mode, CertificateKeyFile: *tlsCertKey, CAFile: *tlsCA,
			AllowConnectionsWithoutCertificates: *tlsNoCert},
		Logger:   slog.New(handler),
		LogLevel: level,
		Argv:     append([]string{"folio"}, args...),
	})
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1)
	defer signal.Stop(sig)
wait:
	for {
		select {
		case s := <-sig:
			if s != syscall.SIGUSR1 {
				break wait
			}
			// As mongod, SIGUSR1 rotates the log file.
			if rotateLog != nil {
				if err := rotateLog(); err != nil {
					fmt.Fprintln(stderr, "folio: log rotation failed:", err)
				}
			}
		case <-in.ShutdownRequested():
			break wait
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
	defer cancel()
	return in.Close(ctx)
}

// versionLine describes the binary: its module version and commit (from
// the build information), the MongoDB version it speaks, and Go's.
func versionLine() string {
	version, commit := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = " commit " + s.Value
			}
		}
	}
	return fmt.Sprintf("folio %s%s, speaking MongoDB 7.0's wire protocol, built with %s", version, commit, runtime.Version())
}
