package instance

import (
	"context"
	"net"
	"strings"
	"testing"
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
