package instance

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestStorageSelection: -storage names the store; a TiKV cluster whose PD
// cannot be reached, or a value that names no store, fails Start clearly.
func TestStorageSelection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	for _, c := range []struct{ storage, err string }{
		{"tikv://" + dead, "cannot reach PD at " + dead},
		{"tikv://", "no PD address"},
		{"rocksdb", `bad storage "rocksdb"`},
	} {
		in, err := Start(Config{Addr: "127.0.0.1:0", Storage: c.storage})
		if err == nil {
			in.Close(context.Background())
			t.Fatalf("%s: started", c.storage)
		}
		if !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.storage, err, c.err)
		}
	}
	in, err := Start(Config{Addr: "127.0.0.1:0", Storage: "pebble", InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	in.Close(context.Background())
}

// TestListeningLogNamesStorage: the start line names the storage; on TiKV
// it gives the cluster's URL and no data directory.
func TestListeningLogNamesStorage(t *testing.T) {
	for _, c := range []struct {
		storage   string
		want, not string
		sharedKV  bool
	}{
		{"pebble", `storage=pebble dbpath=`, "", false},
		{"tikv://pd.example:2379", `storage=tikv://pd.example:2379`, "dbpath", true},
	} {
		var logs strings.Builder
		cfg := Config{Addr: "127.0.0.1:0", Storage: c.storage, InMemory: !c.sharedKV,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		if c.sharedKV {
			cfg.Shared = testkv.Open(t)
		}
		in, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		in.Close(context.Background())
		var line string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "folio listening") {
				line = l
			}
		}
		if !strings.Contains(line, c.want) || (c.not != "" && strings.Contains(line, c.not)) {
			t.Errorf("%s: %q", c.storage, line)
		}
	}
}
