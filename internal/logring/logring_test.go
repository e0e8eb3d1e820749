package logring

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestRing checks that the ring keeps the newest lines in order, counts
// every line written, and passes records on to the next handler.
func TestRing(t *testing.T) {
	var next strings.Builder
	r := New(3)
	log := slog.New(r.Handler(slog.NewTextHandler(&next, nil))).With("conn", 7)
	for i := range 5 {
		log.Info(fmt.Sprint("line", i))
	}
	lines, total := r.Lines()
	if total != 5 || len(lines) != 3 {
		t.Fatalf("%d lines kept of %d, want 3 of 5", len(lines), total)
	}
	for i, l := range lines {
		if want := fmt.Sprintf(`"msg":"line%d"`, i+2); !strings.Contains(l, want) || !strings.Contains(l, `"conn":7`) {
			t.Errorf("line %d = %s, want %s with conn", i, l, want)
		}
	}
	if strings.Count(next.String(), "\n") != 5 {
		t.Errorf("next handler got %q", next.String())
	}
}
