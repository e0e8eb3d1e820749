package main

import (
	"flag"
	"fmt"
	"io"
)

// flagGroups are -help's topics, each with its flags in the order shown.
var flagGroups = []struct {
	topic string
	flags []string
}{
	{"Network", []string{"addr", "advertise", "max-connections", "compressors"}},
	{"TLS", []string{"tls-mode", "tls-certificate-key-file", "tls-ca-file", "tls-allow-connections-without-certificates"}},
	{"Storage", []string{"storage", "dbpath", "in-memory", "durability", "disk-reserve-mb", "oplog-size-mb", "max-txn-ops-per-oplog-entry", "schema-lease"}},
	{"Security", []string{"auth", "authentication-mechanisms", "javascript-enabled"}},
	{"Replication", []string{"replset"}},
	{"Logging", []string{"log-path", "log-append", "log-rotate", "log-format", "log-level", "quiet"}},
	{"Profiling and slow operations", []string{"slowms", "profile", "slow-op-sample-rate", "profile-filter"}},
	{"Operations", []string{"config", "shutdown-timeout", "metrics-addr", "pprof", "enable-test-commands"}},
}

// printFlagGroups writes fs's flags by topic, as flag.PrintDefaults
// writes them; flags of no topic come last, under Other.
func printFlagGroups(w io.Writer, fs *flag.FlagSet) {
	shown := map[string]bool{}
	print := func(topic string, names []string) {
		sub := flag.NewFlagSet(topic, flag.ContinueOnError)
		sub.SetOutput(w)
		for _, name := range names {
			if f := fs.Lookup(name); f != nil {
				sub.Var(f.Value, f.Name, f.Usage)
				shown[name] = true
			}
		}
		fmt.Fprintf(w, "\n%s:\n", topic)
		sub.PrintDefaults()
	}
	for _, g := range flagGroups {
		print(g.topic, g.flags)
	}
	var rest []string
	fs.VisitAll(func(f *flag.Flag) {
		if !shown[f.Name] {
			rest = append(rest, f.Name)
		}
	})
	if len(rest) > 0 {
		print("Other", rest)
	}
}
