package driver_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAccessControlWarning: like mongod, Folio warns at startup that access
// control is off, when it listens beyond the loopback interface; getLog
// "startupWarnings" returns the warning.
func TestAccessControlWarning(t *testing.T) {
	if testAuth() {
		t.Skip("the warning is about running without access control, which FOLIO_TEST_AUTH=1 turns on")
	}
	const warning = "Access control is not enabled"
	for _, c := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		var log syncBuffer
		cfg := defaultConfig()
		cfg.Addr = c.addr
		cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
		in := startInstance(t, cfg)
		if got := strings.Contains(log.String(), warning); got != c.warn {
			t.Errorf("listening on %s: warned %v, want %v\n%s", c.addr, got, c.warn, log.String())
		}
		var res struct {
			Total int32    `bson:"totalLinesWritten"`
			Log   []string `bson:"log"`
		}
		admin := connect(t, in).Database("admin")
		if err := admin.RunCommand(context.Background(), bson.D{{Key: "getLog", Value: "startupWarnings"}}).Decode(&res); err != nil {
			t.Fatal(err)
		}
		if got := len(res.Log) == 1 && res.Total == 1 && strings.Contains(res.Log[0], warning); got != c.warn || (!c.warn && len(res.Log) != 0) {
			t.Errorf("listening on %s: getLog startupWarnings %+v", c.addr, res)
		}
	}
}
