package driver_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
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
// control is off, when it listens beyond the loopback interface.
func TestAccessControlWarning(t *testing.T) {
	const warning = "Access control is not enabled"
	for _, c := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		var log syncBuffer
		cfg := defaultConfig()
		cfg.Addr = c.addr
		cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
		startInstance(t, cfg)
		if got := strings.Contains(log.String(), warning); got != c.warn {
			t.Errorf("listening on %s: warned %v, want %v\n%s", c.addr, got, c.warn, log.String())
		}
	}
}
