package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// debianConf is the mongod.conf MongoDB's Debian package installs.
const debianConf = `# mongod.conf
storage:
  dbPath: /var/lib/mongodb
#  engine:
#  wiredTiger:

systemLog:
  destination: file
  logAppend: true
  path: /var/log/mongodb/mongod.log

net:
  port: 27017
  bindIp: 127.0.0.1

processManagement:
  timeZoneInfo: /usr/share/zoneinfo
`

// TestParseConfig: a mongod.conf maps to the flags of the options Folio
// has; any other option is refused by name.
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name     string
		conf     string
		settings []string // flag=value, in the file's order (-addr last)
		params   string   // the setParameter section as extended JSON
		zoneInfo string
		err      string
	}{
		{name: "debian", conf: debianConf,
			settings: []string{"dbpath=/var/lib/mongodb", "log-append=true", "log-path=/var/log/mongodb/mongod.log", "addr=127.0.0.1:27017"},
			zoneInfo: "/usr/share/zoneinfo"},
		{name: "everything", conf: `
net: {bindIpAll: true, port: 27018, maxIncomingConnections: 100, compression: {compressors: disabled},
      tls: {mode: requireTLS, certificateKeyFile: s.pem, CAFile: ca.pem, allowConnectionsWithoutCertificates: true}}
security: {authorization: enabled, javascriptEnabled: false}
replication: {replSetName: rs0, oplogSizeMB: 2048}
operationProfiling: {mode: slowOp, slowOpThresholdMs: 50, slowOpSampleRate: 0.5, filter: {op: query, millis: {$gt: 1}}}
systemLog: {verbosity: 2, logRotate: reopen}
processManagement: {fork: false}
setParameter: {cursorTimeoutMillis: 1000, ttlMonitorEnabled: false, folioBlockingStagesMemoryBudgetBytes: 8589934592}
`,
			settings: []string{"max-connections=100", "compressors=", "tls-mode=requireTLS", "tls-certificate-key-file=s.pem", "tls-ca-file=ca.pem",
				"tls-allow-connections-without-certificates=true", "auth=true", "javascript-enabled=false", "replset=rs0", "oplog-size-mb=2048",
				"profile=1", "slowms=50", "slow-op-sample-rate=0.5", `profile-filter={"op":"query","millis":{"$gt":{"$numberInt":"1"}}}`,
				"log-level=debug", "log-rotate=reopen", "addr=0.0.0.0:27018"},
			params: `{"cursorTimeoutMillis":{"$numberInt":"1000"},"ttlMonitorEnabled":false,"folioBlockingStagesMemoryBudgetBytes":{"$numberLong":"8589934592"}}`},
		{name: "localhost", conf: "net: {bindIp: localhost}", settings: []string{"addr=127.0.0.1:27017"}},
		// parameters set only at startup set their flags, setParameter's
		// authenticationMechanisms winning over security's; quiet is
		// set at startup as setParameter sets it
		{name: "startup parameters", conf: `
setParameter: {enableTestCommands: true, authenticationMechanisms: "SCRAM-SHA-1,SCRAM-SHA-256", quiet: true}
security: {authenticationMechanisms: [SCRAM-SHA-256]}
systemLog: {quiet: true}
`,
			settings: []string{"enable-test-commands=true", "authentication-mechanisms=SCRAM-SHA-1,SCRAM-SHA-256", "quiet=true"},
			params:   `{"quiet":true}`},
		{name: "security authenticationMechanisms list", conf: "security: {authenticationMechanisms: [SCRAM-SHA-1, MONGODB-X509]}", settings: []string{"authentication-mechanisms=SCRAM-SHA-1,MONGODB-X509"}},
		{name: "security authenticationMechanisms string", conf: "security: {authenticationMechanisms: SCRAM-SHA-256}", settings: []string{"authentication-mechanisms=SCRAM-SHA-256"}},
		{name: "authenticationMechanisms nested list", conf: "setParameter: {authenticationMechanisms: [[a]]}", err: "setParameter.authenticationMechanisms"},
		{name: "unknown option", conf: "storage: {wiredTiger: {engineConfig: {cacheSizeGB: 1}}}", err: "unrecognized option: storage.wiredTiger.engineConfig.cacheSizeGB"},
		{name: "two addresses", conf: "net: {bindIp: '127.0.0.1,10.0.0.1'}", err: "Folio listens on one address"},
		{name: "bindIp and bindIpAll", conf: "net: {bindIp: 127.0.0.1, bindIpAll: true}", err: "mutually exclusive"},
		{name: "fork", conf: "processManagement: {fork: true}", err: "does not fork"},
		{name: "syslog", conf: "systemLog: {destination: syslog}", err: "systemLog.destination"},
		{name: "bad mode", conf: "operationProfiling: {mode: sometimes}", err: "operationProfiling.mode"},
		{name: "bad verbosity", conf: "systemLog: {verbosity: 9}", err: "systemLog.verbosity"},
		{name: "not a mapping", conf: "net: 5", err: "unrecognized option: net"},
		{name: "root not a mapping", conf: "- a", err: "the file must be a mapping"},
		{name: "list value", conf: "storage: {dbPath: [a, b]}", err: "storage.dbPath: want a single value"},
		{name: "bad YAML", conf: "net: {port: 1", err: "reading the configuration file"},
		{name: "empty", conf: ""},
		{name: "maxNumberOfTransactionOperationsInSingleOplogEntry", conf: "setParameter: {maxNumberOfTransactionOperationsInSingleOplogEntry: 4}",
			settings: []string{"max-txn-ops-per-oplog-entry=4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseConfig([]byte(tc.conf))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range cfg.settings {
				got = append(got, s.flag+"="+s.value)
			}
			if !slices.Equal(got, tc.settings) {
				t.Errorf("settings\n%q\nwant\n%q", got, tc.settings)
			}
			params := ""
			if cfg.params != nil {
				js, err := bson.MarshalExtJSON(cfg.params, true, false)
				if err != nil {
					t.Fatal(err)
				}
				params = string(js)
			}
			if params != tc.params || cfg.zoneInfo != tc.zoneInfo {
				t.Errorf("params %s, zoneInfo %q", params, cfg.zoneInfo)
			}
		})
	}
}

// TestApplyConfig: the file sets a flag unless the command line or the
// flag's environment variable does.
func TestApplyConfig(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	a := fs.String("dbpath", "", "data directory (env FOLIO_TEST_DBPATH)")
	b := fs.String("replset", "", "replica set (env FOLIO_TEST_REPLSET)")
	c := fs.Int64("slowms", 0, "slow (env FOLIO_TEST_SLOWMS)")
	if err := fs.Parse([]string{"-dbpath", "/cli"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FOLIO_TEST_REPLSET", "fromenv")
	cfg := &serverConfig{settings: []configSetting{{"storage.dbPath", "dbpath", "/file"}, {"replication.replSetName", "replset", "fromfile"}, {"operationProfiling.slowOpThresholdMs", "slowms", "7"}}}
	if err := applyConfig(fs, cfg); err != nil {
		t.Fatal(err)
	}
	if *a != "/cli" || *b != "" || *c != 7 {
		t.Errorf("dbpath %q, replset %q, slowms %d: want the command line's, the environment's (left to the flag's default), the file's", *a, *b, *c)
	}
	fresh := flag.NewFlagSet("t", flag.ContinueOnError)
	fresh.Int64("slowms", 0, "slow")
	bad := &serverConfig{settings: []configSetting{{"operationProfiling.slowOpThresholdMs", "slowms", "soon"}}}
	if err := applyConfig(fresh, bad); err == nil || !strings.Contains(err.Error(), "slowOpThresholdMs") {
		t.Errorf("a bad value: %v", err)
	}
	if got := envOf(fs.Lookup("replset")); got != "FOLIO_TEST_REPLSET" {
		t.Errorf("envOf %q", got)
	}
}

// TestConfigFlag: run reads -config and refuses a file it cannot use
// before starting.
func TestConfigFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mongod.conf")
	if err := os.WriteFile(path, []byte("net: {maxIncomingConnections: -5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run([]string{"-config", path, "-in-memory"}, &out); err == nil || !strings.Contains(err.Error(), "max-connections") {
		t.Errorf("-config with a bad value: %v", err)
	}
	if err := run([]string{"-config", filepath.Join(t.TempDir(), "missing.conf")}, &out); err == nil {
		t.Error("-config with a missing file started")
	}
}

// TestFlagGroups: -help shows every flag once, under a topic (none is
// left to Other), and every flag a topic lists exists.
func TestFlagGroups(t *testing.T) {
	var out strings.Builder
	if err := run([]string{"-help"}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\nOther:") {
		t.Errorf("flags without a topic:\n%s", out.String()[strings.Index(out.String(), "\nOther:"):])
	}
	shown := map[string]int{}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "  -") {
			shown[strings.Fields(line)[0][1:]]++
		}
	}
	for _, g := range flagGroups {
		for _, f := range g.flags {
			if shown[f] != 1 {
				t.Errorf("-%s of %s shown %d times", f, g.topic, shown[f])
			}
		}
	}
}
